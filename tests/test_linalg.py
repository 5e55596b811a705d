"""Linear algebra: forward values against NumPy, gradients where the
structure matters (broadcast batches, diagonals, second order), the eager
path's MLX calls, and every error path."""

import mlx.core as mx
import numpy as np
import pytest
from cases_linalg import (
    dot_nd_operands,
    einsum_operands,
    last_axis_pair,
    matmul_operands,
    random_einsum,
    tensordot_operands,
)
from harness import floats, shapes
from hypothesis import given
from hypothesis import strategies as st

import ftorch as ft
import ftorch.numpy as fnp
from ftorch.core import Primitive


def close(actual, expected, tol=1e-10):
    actual = np.array(actual)
    assert actual.shape == np.shape(expected)
    np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol)


def m64(*arrays):
    """float64 MLX arrays (``mx.array`` of a float64 NumPy array would be float32)."""
    return [mx.array(a, dtype=mx.float64) for a in arrays]


class Recorder:
    """Records the primitives bound eagerly and counts calls of MLX functions."""

    def __init__(self, monkeypatch, *mlx_names):
        self.prims, self.counts = [], dict.fromkeys(mlx_names, 0)
        original = Primitive.bind
        recorder = self

        def bind(prim, *args, **params):
            recorder.prims.append(prim.name)
            return original(prim, *args, **params)

        monkeypatch.setattr(Primitive, "bind", bind)
        for name in mlx_names:
            fn = getattr(mx, name)

            def counted(*args, _fn=fn, _name=name, **kwargs):
                recorder.counts[_name] += 1
                return _fn(*args, **kwargs)

            monkeypatch.setattr(mx, name, counted)


# ----------------------------------------------------------------------------
# matmul
# ----------------------------------------------------------------------------


@given(matmul_operands(batched=True))
def test_matmul_matches_numpy(ab):
    a, b = ab
    close(fnp.matmul(*m64(a, b)), np.matmul(a, b))


@given(matmul_operands(batched=True), st.sampled_from([mx.int32, mx.float16]))
def test_matmul_other_dtypes(ab, dtype):
    a, b = ((x * 4).astype(np.int32) for x in ab)
    out = fnp.matmul(mx.array(a, dtype=dtype), mx.array(b, dtype=dtype))
    assert out.dtype == dtype
    if dtype == mx.int32:  # MLX's matmul is floating-only; integers are exact here
        np.testing.assert_array_equal(np.array(out), np.matmul(a, b))


def test_matmul_accepts_numpy_and_lists():
    close(fnp.matmul(np.ones((2, 3)), [[1.0], [2.0], [3.0]]), np.full((2, 1), 6.0))


def test_matmul_eager_path_is_one_mlx_call(monkeypatch):
    a, b = mx.ones((2, 1, 3, 4)), mx.ones((5, 4, 2))
    rec = Recorder(monkeypatch, "matmul", "reshape", "einsum", "transpose")
    out = fnp.matmul(a, b)
    assert rec.prims == ["matmul"]
    assert rec.counts == {"matmul": 1, "reshape": 0, "einsum": 0, "transpose": 0}
    assert out.shape == (2, 5, 3, 2)


def test_matmul_vjp_sums_over_broadcast_batch_dims():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 1, 3, 4)), rng.standard_normal((5, 4, 2))
    ct = rng.standard_normal((2, 5, 3, 2))
    _, pullback = ft.vjp(fnp.matmul, *m64(a, b))
    ga, gb = pullback(*m64(ct))
    close(ga, np.einsum("pqmn,qkn->pmk", ct, b)[:, None], 1e-9)
    close(gb, np.einsum("pqmn,pmk->qkn", ct, a[:, 0]), 1e-9)


def test_matmul_vjp_is_contractions_only(monkeypatch):
    # The backward pass of a broadcast matmul must not materialize the
    # broadcast product: one contraction per operand, no multiply/sum.
    a, b = mx.ones((2, 1, 3, 4)), mx.ones((5, 4, 2))
    _, pullback = ft.vjp(fnp.matmul, a, b)
    rec = Recorder(monkeypatch)
    pullback(mx.ones((2, 5, 3, 2)))
    assert "multiply" not in rec.prims and "sum" not in rec.prims
    assert rec.prims.count("einsum") == 2


@pytest.mark.parametrize("sa,sb", [((3,), (3,)), ((3,), (2, 3, 4)), ((2, 3, 4), (4,)),
                                   ((1, 3), (3, 1)), ((4, 1, 2, 3), (1, 3, 2))])
def test_matmul_gradients_1d_and_batched(sa, sb):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    ga, gb = ft.grad(lambda x, y: fnp.sum(fnp.matmul(x, y) ** 2), argnums=(0, 1))(*m64(a, b))
    ma, mb = mx.grad(lambda x, y: mx.sum(mx.matmul(x, y) ** 2), argnums=(0, 1))(*m64(a, b))
    close(ga, np.array(ma), 1e-9)
    close(gb, np.array(mb), 1e-9)


def test_matmul_operator_on_tracers():
    rng = np.random.default_rng(2)
    w, x = m64(rng.standard_normal((3, 4)), rng.standard_normal(3))
    g = ft.grad(lambda v: fnp.sum(v @ w))(x)  # tracer @ array
    close(g, np.array(w).sum(axis=1))
    g = ft.grad(lambda v: fnp.sum(w.T @ v))(x)  # array @ tracer
    close(g, np.array(w).sum(axis=1))


def test_grad_of_grad_through_matmul():
    rng = np.random.default_rng(3)
    a, x = rng.standard_normal((3, 3)), rng.standard_normal(3)
    # x^T A x has Hessian A + A^T; (x.x)^2 has Hessian 4(x.x) I + 8 x x^T.
    h = ft.hessian(lambda v: fnp.matmul(v, fnp.matmul(m64(a)[0], v)))(*m64(x))
    close(h, a + a.T)
    h = ft.jacfwd(ft.grad(lambda v: fnp.matmul(v, v) ** 2))(*m64(x))
    close(h, 4 * (x @ x) * np.eye(3) + 8 * np.outer(x, x))
    h = ft.jacrev(ft.grad(lambda v: fnp.matmul(v, v) ** 2))(*m64(x))
    close(h, 4 * (x @ x) * np.eye(3) + 8 * np.outer(x, x))


def test_matmul_mixed_precision_cotangent_dtypes():
    a, b = mx.ones((2, 3), mx.float16), mx.ones((3, 2), mx.float32)
    out, pullback = ft.vjp(fnp.matmul, a, b)
    assert out.dtype == mx.float32
    ga, gb = pullback(mx.ones((2, 2), mx.float32))
    assert ga.dtype == mx.float16 and gb.dtype == mx.float32


def test_matmul_empty_contraction():
    a, b = mx.ones((2, 0)), mx.ones((0, 3))
    close(fnp.matmul(a, b), np.zeros((2, 3)))
    ga, gb = ft.grad(lambda x, y: fnp.sum(fnp.matmul(x, y)), argnums=(0, 1))(a, b)
    assert ga.shape == (2, 0) and gb.shape == (0, 3)


@pytest.mark.parametrize("sa,sb,match", [
    ((), (3,), "operand a is 0-dimensional"),
    ((3,), (), "operand b is 0-dimensional"),
    ((2, 3), (4, 2), r"inner dimensions do not match.*\(2, 3\).*size 3.*\(4, 2\).*size 4"),
    ((3,), (4,), "inner dimensions do not match"),
    ((2, 2, 3), (3, 3, 1), r"batch dimensions .* do not broadcast \(2 vs 3\)"),
])
def test_matmul_errors(sa, sb, match):
    with pytest.raises(ValueError, match=match):
        fnp.matmul(mx.ones(sa), mx.ones(sb))
    with pytest.raises(ValueError, match=match):  # the same error inside a transform
        ft.grad(lambda x: fnp.sum(fnp.matmul(x, mx.ones(sb))))(mx.ones(sa))


# ----------------------------------------------------------------------------
# einsum
# ----------------------------------------------------------------------------

FIXED = [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3), (3, 4)]), ("ij,kj->ik", [(2, 3), (4, 3)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("bij,bjk->ik", [(2, 3, 4), (2, 4, 5)]),
    ("i,i", [(3,), (3,)]), ("i,j", [(2,), (3,)]), ("i,j->ji", [(2,), (3,)]),
    ("ij->ji", [(2, 3)]), ("ij->", [(2, 3)]), ("ij->j", [(2, 3)]), ("ba", [(2, 3)]),
    ("aB", [(2, 3)]), ("Ba,aC->CB", [(2, 3), (3, 4)]),
    ("ii", [(3, 3)]), ("ii->i", [(3, 3)]), ("iij->j", [(3, 3, 2)]), ("iji->ij", [(3, 2, 3)]),
    ("iii->i", [(2, 2, 2)]), ("ij,jj->ij", [(2, 3), (3, 3)]), ("ii,i->i", [(1, 1), (3,)]),
    ("ijk,jil->kl", [(2, 3, 4), (3, 2, 5)]), ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("i,i,i->", [(3,), (3,), (3,)]), ("a,b,c", [(2,), (3,), (4,)]),
    ("ab,cd->", [(2, 3), (4, 5)]), ("ab,cd->da", [(2, 3), (4, 5)]),
    ("...ij,...jk", [(2, 1, 3, 4), (5, 4, 2)]), ("...ij,...jk->...ik", [(3, 4), (4, 2)]),
    ("i...->...", [(2, 3, 4)]), ("...", [(2, 3)]), ("...i,...i->...", [(1, 3), (4, 3)]),
    ("i...j,j...->...i", [(2, 5, 3), (3, 5)]), ("...ii->...i", [(2, 3, 3)]),
    ("...i->i", [(3,)]),
    ("ij,ij->ij", [(1, 3), (2, 3)]), ("ij,ij->", [(2, 1), (2, 3)]), ("i,i", [(1,), (3,)]),
    ("", [()]), (",->", [(), ()]), (",i->i", [(), (3,)]), ("i,->i", [(3,), ()]),
    ("ij,jk->ik", [(0, 3), (3, 2)]), ("ij,jk->ik", [(2, 0), (0, 3)]), ("i->", [(0,)]),
    (" ij , jk -> ik ", [(2, 3), (3, 4)]),
]


@pytest.mark.parametrize("subscripts,shapes_", FIXED, ids=[s for s, _ in FIXED])
def test_einsum_fixed_forms_match_numpy(subscripts, shapes_):
    rng = np.random.default_rng(4)
    ops = [rng.standard_normal(s) for s in shapes_]
    expected = np.einsum(subscripts, *ops)
    close(fnp.einsum(subscripts, *m64(*ops)), expected)
    iops = [(o * 4).astype(np.int32) for o in ops]
    got = fnp.einsum(subscripts, *[mx.array(o) for o in iops])
    assert got.dtype == mx.int32
    np.testing.assert_array_equal(np.array(got), np.einsum(subscripts, *iops))


@pytest.mark.parametrize("subscripts,shapes_", FIXED, ids=[s for s, _ in FIXED])
def test_einsum_fixed_forms_gradients(subscripts, shapes_):
    # Against NumPy: d/dX_i sum(einsum(...) * C) by central differences
    # (einsum is multilinear, so they are exact up to rounding).
    rng = np.random.default_rng(5)
    ops = [rng.standard_normal(s) for s in shapes_]
    c = rng.standard_normal(np.shape(np.einsum(subscripts, *ops)))
    grads = ft.grad(lambda *xs: fnp.sum(fnp.einsum(subscripts, *xs) * m64(c)[0]),
                    argnums=tuple(range(len(ops))))(*m64(*ops))
    for i, op in enumerate(ops):
        fd = np.zeros_like(op)
        for idx in np.ndindex(op.shape):
            hi, lo = [o.copy() for o in ops], [o.copy() for o in ops]
            hi[i][idx] += 0.5
            lo[i][idx] -= 0.5
            fd[idx] = np.sum((np.einsum(subscripts, *hi) - np.einsum(subscripts, *lo)) * c)
        close(grads[i], fd, 1e-9)


@given(random_einsum())
def test_einsum_drawn_forms_match_numpy(args):
    subscripts, *ops = args
    close(fnp.einsum(subscripts, *m64(*ops)), np.einsum(subscripts, *ops))


@given(einsum_operands("ij,jk->ik", ones=True))
def test_einsum_size_one_broadcasting(ops):
    close(fnp.einsum("ij,jk->ik", *m64(*ops)), np.einsum("ij,jk->ik", *ops))


def test_einsum_eager_path_is_one_mlx_einsum(monkeypatch):
    a, b = mx.ones((8, 3, 4)), mx.ones((8, 4, 5))
    rec = Recorder(monkeypatch, "einsum", "matmul", "multiply", "sum", "reshape")
    out = fnp.einsum("bij,bjk->bik", a, b)
    assert out.shape == (8, 3, 5)
    assert rec.prims == ["einsum"]
    assert rec.counts == {"einsum": 1, "matmul": 0, "multiply": 0, "sum": 0, "reshape": 0}


def test_einsum_plain_contraction_is_one_mlx_tensordot(monkeypatch):
    a, b = mx.ones((2, 3, 4)), mx.ones((4, 3, 5))
    rec = Recorder(monkeypatch, "einsum", "tensordot", "multiply", "transpose")
    out = fnp.einsum("ijk,kjl->il", a, b)
    close(out, np.full((2, 5), 12.0))
    assert rec.prims == ["einsum"]
    assert rec.counts == {"einsum": 0, "tensordot": 1, "multiply": 0, "transpose": 0}


def test_einsum_identity_is_free():
    x = mx.ones((2, 3))
    assert fnp.einsum("ij->ij", x) is x and fnp.einsum("ab", x) is x


def test_einsum_vjp_is_contractions_only(monkeypatch):
    a, b, c = mx.ones((2, 3)), mx.ones((3, 4)), mx.ones((4, 5))
    _, pullback = ft.vjp(lambda x, y, z: fnp.einsum("ij,jk,kl->il", x, y, z), a, b, c)
    rec = Recorder(monkeypatch)
    pullback(mx.ones((2, 5)))
    assert set(rec.prims) == {"einsum"} and len(rec.prims) == 3


def test_einsum_equal_calls_give_equal_params(monkeypatch):
    seen = []
    original = Primitive.bind

    def bind(prim, *args, **params):
        seen.append(params)
        return original(prim, *args, **params)

    monkeypatch.setattr(Primitive, "bind", bind)
    a, b = mx.ones((2, 3)), mx.ones((3, 4))
    fnp.einsum("ij,jk->ik", a, b)
    fnp.einsum("xy,yz", a, b)
    fnp.einsum("...j,jk->...k", a, b)
    assert seen[0] == seen[1] == seen[2]


def test_einsum_with_integer_operand_under_grad():
    mask = mx.array([[1, 0], [0, 1], [1, 1]], dtype=mx.int32)
    x = mx.array([[1.0, 2.0], [3.0, 4.0]])
    g = ft.grad(lambda v: fnp.einsum("ij,jk->", mask, v))(x)
    close(g, np.broadcast_to(np.array(mask).sum(0)[:, None], (2, 2)))


def test_einsum_second_order_diagonal():
    # f(X) = trace(X)^2 + sum(diag(X)^3): Hessian-vector products by jvp of grad.
    rng = np.random.default_rng(6)
    x, v = rng.standard_normal((3, 3)), rng.standard_normal((3, 3))

    def f(m):
        return fnp.einsum("ii", m) ** 2 + fnp.sum(fnp.einsum("ii->i", m) ** 3)

    _, hv = ft.jvp(ft.grad(f), tuple(m64(x)), tuple(m64(v)))
    expected = 2 * np.trace(v) * np.eye(3) + np.diag(6 * np.diag(x) * np.diag(v))
    close(hv, expected)


@pytest.mark.parametrize("subscripts,shapes_,error,match", [
    ("ij,jk", [(2, 3)], ValueError, "name 2 operand.*1 were given"),
    ("ij", [(2, 3), (3, 2)], ValueError, "name 1 operand.*2 were given"),
    ("ij->i->j", [(2, 3)], ValueError, "more than one '->'"),
    ("i1", [(2, 2)], ValueError, "invalid subscript '1'"),
    ("i.j", [(2, 3)], ValueError, "'.' that is not part of an ellipsis"),
    ("...i...", [(2, 3)], ValueError, "more than one ellipsis"),
    ("ij->k", [(2, 3)], ValueError, "output subscript 'k' appears in no input"),
    ("ij->ii", [(2, 3)], ValueError, "output subscript 'i' appears more than once"),
    ("ij->i.", [(2, 3)], ValueError, "not part of an ellipsis"),
    ("ij", [(2, 3, 4)], ValueError, r"operand 0 has shape \(2, 3, 4\).*'ij' name 2"),
    ("ijk...", [(2, 3)], ValueError, r"operand 0 has shape \(2, 3\)"),
    ("ij,jk", [(2, 3), (4, 5)], ValueError,
     "label 'j' of size 3 in operand 0.*size 4 in operand 1"),
    ("ii", [(2, 3)], ValueError, "label 'i' repeats in operand 0 with different sizes"),
    ("...i,...i", [(2, 3), (4, 3)], ValueError, "ellipsis dimensions of size 2.*size 4"),
    ("...i->i", [(2, 3)], ValueError, "ellipsis dimensions but the output has no '...'"),
    ("...->", [(2, 3)], ValueError, "ellipsis dimensions but the output has no '...'"),
])
def test_einsum_errors(subscripts, shapes_, error, match):
    with pytest.raises(error, match=match):
        fnp.einsum(subscripts, *[mx.ones(s) for s in shapes_])


def test_einsum_subscripts_must_be_a_string():
    with pytest.raises(TypeError, match="subscripts must be a string"):
        fnp.einsum(mx.ones(3), [0])


# ----------------------------------------------------------------------------
# dot, vdot, inner, outer, tensordot
# ----------------------------------------------------------------------------


@given(st.one_of(matmul_operands(), dot_nd_operands(),
                 st.tuples(floats(shapes(0, 0)), floats(shapes(0, 2))),
                 st.tuples(floats(shapes(0, 2)), floats(shapes(0, 0)))))
def test_dot_matches_numpy(ab):
    a, b = ab
    close(fnp.dot(*m64(a, b)), np.dot(a, b))


@given(floats(shapes(0, 3)).flatmap(lambda a: st.tuples(
    st.just(a), floats(st.sampled_from([(a.size,), a.shape, a.shape[::-1]])))))
def test_vdot_matches_numpy(ab):
    a, b = ab
    close(fnp.vdot(*m64(a, b)), np.vdot(a, b))


@given(st.one_of(*[last_axis_pair(p, q) for p in (1, 2, 3) for q in (1, 2, 3)],
                 st.tuples(floats(shapes(0, 0)), floats(shapes(0, 2)))))
def test_inner_matches_numpy(ab):
    a, b = ab
    close(fnp.inner(*m64(a, b)), np.inner(a, b))


@given(floats(shapes(0, 3)), floats(shapes(0, 3)))
def test_outer_matches_numpy(a, b):
    close(fnp.outer(*m64(a, b)), np.outer(a, b))


@pytest.mark.parametrize("axes", [([1], [0]), ([1, 2], [0, 1]), ([0, 2], [1, 0]), ([], []),
                                  ([2, 0], [0, 1]), (1, 0)])
@given(data=st.data())
def test_tensordot_matches_numpy(axes, data):
    pair = tuple([ax] if isinstance(ax, int) else ax for ax in axes)
    a, b = data.draw(tensordot_operands(pair))
    close(fnp.tensordot(*m64(a, b), axes), np.tensordot(a, b, axes))


def test_tensordot_negative_axes():
    rng = np.random.default_rng(7)
    a, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((4, 3, 5))
    axes = ([-1, 1], [0, -2])
    close(fnp.tensordot(*m64(a, b), axes), np.tensordot(a, b, axes))


@pytest.mark.parametrize("n,sa,sb", [(0, (2, 3), (4,)), (1, (2, 3), (3, 4)),
                                     (2, (2, 3, 4), (3, 4, 5)), (3, (2, 3, 4), (2, 3, 4))])
def test_tensordot_int_axes(n, sa, sb):
    rng = np.random.default_rng(8)
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    close(fnp.tensordot(*m64(a, b), n), np.tensordot(a, b, n))


def test_outer_vjp_is_contractions_only(monkeypatch):
    _, pullback = ft.vjp(fnp.outer, mx.ones(3), mx.ones(4))
    rec = Recorder(monkeypatch)
    pullback(mx.ones((3, 4)))
    assert set(rec.prims) == {"einsum"}


@pytest.mark.parametrize("fn,a,b,error,match", [
    (fnp.dot, (2, 3), (4, 2), ValueError, r"dot: shapes \(2, 3\) and \(4, 2\) are not aligned"),
    (fnp.dot, (3,), (4,), ValueError, "not aligned: 3 .* != 4"),
    (fnp.dot, (2, 3), (2, 4, 5), ValueError, "second-to-last dimension of b"),
    (fnp.vdot, (2, 3), (5,), ValueError, "same number of elements, got 6 and 5"),
    (fnp.inner, (2, 3), (3, 2), ValueError, r"last dimensions of a \(2, 3\) and b \(3, 2\)"),
    (fnp.matmul, (2, 3), (2, 3), ValueError, "inner dimensions do not match"),
])
def test_contraction_errors(fn, a, b, error, match):
    with pytest.raises(error, match=match):
        fn(mx.ones(a), mx.ones(b))


@pytest.mark.parametrize("axes,error,match", [
    (3, ValueError, "axes=3 must be between 0 and the smaller ndim"),
    (-1, ValueError, "axes=-1 must be between"),
    (([0], [0, 1]), ValueError, "axes must pair up, got 1 axes for a and 2 for b"),
    (([2], [0]), ValueError, "axis 2 in axes for a is out of range for ndim 2"),
    (([0], [-4]), ValueError, "axis -4 in axes for b is out of range for ndim 3"),
    (([0, 0], [0, 1]), ValueError, "repeated axis in the axes for a"),
    (([0], [1]), ValueError, r"axis 0 of a \(2, 3\) has size 2 but axis 1 of b .* size 3"),
    (([0.5], [0]), TypeError, "axes for a must hold ints"),
    ("ab", TypeError, "axes must be an int or a pair"),
    ((1, 2, 3), TypeError, "axes must be an int or a pair"),
])
def test_tensordot_errors(axes, error, match):
    with pytest.raises(error, match=match):
        fnp.tensordot(mx.ones((2, 3)), mx.ones((2, 3, 4)), axes)
