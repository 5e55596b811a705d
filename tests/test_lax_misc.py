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
    with pytest.raises(TypeError, match="shift_left"):
        lax.shift_left(mx.ones(2), mx.ones(2))
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
