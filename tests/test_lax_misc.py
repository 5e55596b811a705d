"""ftorch.lax's JAX names that the oracle (tests/oracle_cases_lax_misc.py) cannot check
as they are: dtypes, the scatters that take ftorch's indexing spec, argument errors, and
the composites under jit and vmap."""

import mlx.core as mx
import numpy as np
import pytest

import ftorch as ft
import ftorch.lax as lax


def test_dtype_of_arrays_scalars_and_dtypes():
    assert lax.dtype(1.0) == mx.float32
    assert lax.dtype(1) == mx.int32
    assert lax.dtype(True) == mx.bool_
    assert lax.dtype(mx.zeros(2, mx.int8)) == mx.int8
    assert lax.dtype(np.zeros(2, np.float16)) == mx.float16
    assert lax.dtype("bfloat16") == mx.bfloat16


def test_scatter_sub_and_apply_take_an_indexing_spec():
    x = mx.arange(4.0)
    assert lax.scatter_sub(x, mx.array(1.0), spec=(slice(1, 3, 1),)).tolist() == [0, 0, 1, 3]
    assert lax.scatter_apply(x, lambda v: v * 10, spec=(2,)).tolist() == [0, 1, 20, 3]
    g = ft.grad(lambda x: lax.scatter_apply(x, lambda v: v ** 2, spec=(1,)).sum())(x)
    assert g.tolist() == [1.0, 2.0, 1.0, 1.0]


def test_composites_under_jit_and_vmap():
    x = mx.array([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]])
    f = lambda r: lax.clamp(-1.0, lax.rev(r, (0,)), 2.0)  # noqa: E731
    assert ft.jit(ft.vmap(f))(x).tolist() == [[2.0, -1.0, 1.0], [-1.0, 2.0, 0.5]]
    ints = mx.array([[12, -7], [3, 255]], dtype=mx.int32)
    got = ft.jit(ft.vmap(lambda r: lax.reduce_xor(r, (0,))))(ints)
    assert got.tolist() == [12 ^ -7, 3 ^ 255]
    got = ft.vmap(lambda r: lax.shift_right_logical(r, mx.array(1, mx.int32)))(ints)
    assert got.tolist() == np.right_shift(np.array(ints).view(np.uint32), 1).view(
        np.int32).tolist()


def test_bad_arguments_name_the_function():
    with pytest.raises(ValueError, match="broadcast_in_dim"):
        lax.broadcast_in_dim(mx.ones(2), (2, 3), (1, 0))
    with pytest.raises(ValueError, match="tile: reps"):
        lax.tile(mx.ones((2, 2)), (2,))
    with pytest.raises(TypeError, match="select_n"):
        lax.select_n(mx.array([True]), mx.zeros(1), mx.ones(1), mx.ones(1))
    with pytest.raises(TypeError, match="clamp"):
        lax.clamp(mx.zeros(3), mx.ones(2), 1.0)
    with pytest.raises(ValueError, match="slice"):
        lax.slice(mx.ones(3), (2,), (1,))
    with pytest.raises(IndexError, match="index_in_dim"):
        lax.index_in_dim(mx.ones(3), 3)
    with pytest.raises(ValueError, match="broadcast_shapes"):
        lax.broadcast_shapes((2,), (3,))
    with pytest.raises(NotImplementedError, match="mulhi"):
        lax.mulhi(mx.array([1], mx.int64), mx.array([1], mx.int64))
    with pytest.raises(ValueError, match="bitcast_convert_type"):
        lax.bitcast_convert_type(mx.ones((2, 3), mx.int16), mx.float32)
    with pytest.raises(NotImplementedError, match="accuracy"):
        lax.exp2(mx.ones(2), accuracy=1e-3)


def test_cumlogsumexp_is_stable_and_differentiable_twice():
    x = mx.array([-1000.0, 0.0, 1000.0])
    assert np.allclose(lax.cumlogsumexp(x).tolist(), [-1000.0, 0.0, 1000.0])
    h = ft.hessian(lambda x: lax.cumlogsumexp(x)[-1])(mx.array([0.0, 0.0]))
    assert np.allclose(np.array(h), [[0.25, -0.25], [-0.25, 0.25]])


# ----------------------------------------------------------------------------
# custom_linear_solve, custom_root (values and gradients against JAX: the oracle)
# ----------------------------------------------------------------------------

A = mx.array([[3.0, 1.0], [1.0, 2.0]])
B = mx.array([1.0, 2.0])


def _direct(a, b):
    import ftorch.numpy as fnp

    return lax.custom_linear_solve(lambda x: a @ x, b,
                                   lambda mv, r: (fnp.linalg.solve(a, r), {"steps": 1}),
                                   symmetric=True, has_aux=True)


def test_custom_linear_solve_has_aux_jvp_jit_and_vmap():
    import ftorch.numpy as fnp

    x, aux = _direct(A, B)
    assert np.allclose(np.array(x), np.linalg.solve(np.array(A), np.array(B)), atol=1e-6)
    assert aux["steps"] == 1
    f = lambda a, b: _direct(a, b)[0]  # noqa: E731
    ref = lambda a, b: fnp.linalg.solve(a, b)  # noqa: E731
    t = (mx.ones((2, 2)), mx.array([0.5, -1.0]))
    assert np.allclose(np.array(ft.jvp(f, (A, B), t)[1]), np.array(ft.jvp(ref, (A, B), t)[1]),
                       atol=1e-5)
    loss = lambda a, b: (f(a, b) ** 2).sum()  # noqa: E731
    expected = ft.grad(lambda a, b: (ref(a, b) ** 2).sum())(A, B)
    assert np.allclose(np.array(ft.jit(ft.grad(loss))(A, B)), np.array(expected), atol=1e-5)
    batched = ft.vmap(ft.grad(loss, argnums=1), in_axes=(None, 0))(A, mx.stack([B, -B]))
    assert batched.shape == (2, 2)


def test_custom_linear_solve_reverse_mode_needs_transpose_solve():
    import ftorch.numpy as fnp

    def f(b):
        return lax.custom_linear_solve(lambda x: A @ x, b,
                                       lambda mv, r: fnp.linalg.solve(A, r)).sum()
    assert np.isfinite(ft.jvp(f, (B,), (B,))[1].item())
    with pytest.raises(TypeError, match="transpose_solve"):
        ft.grad(f)(B)


def test_custom_linear_solve_checks_matvec_output():
    with pytest.raises(TypeError, match="custom_linear_solve"):
        lax.custom_linear_solve(lambda x: x[:1], B, lambda mv, r: r)


def test_custom_root_has_aux_and_second_derivative():
    def bisect(f, x):
        lo, hi = mx.array(0.0), mx.array(10.0)
        for _ in range(60):
            mid = (lo + hi) / 2
            lo, hi = mx.where(f(mid) > 0, lo, mid), mx.where(f(mid) > 0, mid, hi)
        return (lo + hi) / 2, 60

    def sqrt(a):
        return lax.custom_root(lambda x: x * x - a, a, bisect, lambda g, y: y / g(1.0),
                               has_aux=True)

    root, steps = sqrt(mx.array(9.0))
    assert abs(root.item() - 3.0) < 1e-5 and steps == 60
    assert abs(ft.grad(lambda a: sqrt(a)[0])(mx.array(9.0)).item() - 1 / 6) < 1e-5
    second = ft.grad(ft.grad(lambda a: sqrt(a)[0]))(mx.array(4.0)).item()
    assert abs(second + 0.25 * 4.0 ** -1.5) < 1e-5


def test_custom_linear_solve_aux_with_transpose_solve():
    import ftorch.numpy as fnp

    a = mx.array([[3.0, 1.0], [0.5, 2.0]])

    def f(a, b):
        x, aux = lax.custom_linear_solve(
            lambda x: a @ x, b, lambda mv, r: (fnp.linalg.solve(a, r), mx.array(1)),
            lambda vm, r: (fnp.linalg.solve(a.T, r), (mx.array(2), mx.array(3.0))),
            has_aux=True)
        return (x ** 2).sum() + 0 * aux

    expected = ft.grad(lambda a, b: (fnp.linalg.solve(a, b) ** 2).sum(), argnums=(0, 1))(a, B)
    got = ft.grad(f, argnums=(0, 1))(a, B)
    for g, e in zip(got, expected):
        assert np.allclose(np.array(g), np.array(e), atol=1e-5)
    h = ft.hessian(lambda b: f(a, b))(B)
    assert np.allclose(np.array(h), np.array(h).T, atol=1e-5)
