"""Diagonals, triangles, grids and splits of ``ftorch.numpy``: values against
NumPy on drawn shapes, axes and offsets, derivatives against finite
differences, ``jit`` against eager and ``vmap`` against loops, and errors."""

import mlx.core as mx
import numpy as np
import pytest
from harness import (
    check_jvp_fd,
    check_second_order,
    check_vjp_dot,
    check_vmap,
    close,
    compiler_off,
    floats,
    shapes,
)
from hypothesis import given
from hypothesis import strategies as st

import ftorch as ft
import ftorch.numpy as fnp


def _mx(x):
    """A NumPy array as an MLX array of the same dtype (float64 stays float64)."""
    x = np.asarray(x)
    return mx.array(x, dtype=mx.float64) if x.dtype == np.float64 else mx.array(x)


def _same(got, expected):
    got, expected = np.array(got), np.asarray(expected)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    np.testing.assert_array_equal(got, expected)


@st.composite
def matrices(draw, min_dims=2, max_dims=4, min_side=0):
    """A float64 array of ndim >= 2 (sides may be 0), an offset and two distinct axes."""
    x = draw(floats(shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side)))
    offset = draw(st.integers(-5, 5))
    a1, a2 = draw(st.lists(st.integers(0, x.ndim - 1), min_size=2, max_size=2, unique=True))
    a1 -= x.ndim * draw(st.booleans())
    return x, offset, a1, a2


# ----------------------------------------------------------------------------
# Values against NumPy
# ----------------------------------------------------------------------------


@given(args=matrices())
def test_diagonal_and_trace_match_numpy(args):
    x, offset, a1, a2 = args
    _same(fnp.diagonal(_mx(x), offset, a1, a2), np.diagonal(x, offset, a1, a2))
    close(fnp.trace(_mx(x), offset, a1, a2), np.trace(x, offset, a1, a2), 1e-12, 1e-12)


def test_diagonal_keyword_arguments_and_integer_trace_dtype():
    x = np.arange(24).reshape(2, 3, 4)
    _same(fnp.diagonal(_mx(x), offset=-1, axis1=2, axis2=1),
          np.diagonal(x, offset=-1, axis1=2, axis2=1))
    got = fnp.trace(_mx(x), axis1=1, axis2=2, dtype="float16")
    assert got.dtype == mx.float16
    _same(got, np.trace(x, axis1=1, axis2=2).astype(np.float16))


@given(v=floats(shapes(min_dims=1, max_dims=2, min_side=0)), k=st.integers(-4, 4))
def test_diag_matches_numpy(v, k):
    _same(fnp.diag(_mx(v), k), np.diag(v, k))
    if v.ndim == 1:
        _same(fnp.diag(_mx(v > 0), k), np.diag(v > 0, k))


@given(v=floats(shapes(min_dims=0, max_dims=3)), k=st.integers(-3, 3))
def test_diagflat_matches_numpy(v, k):
    _same(fnp.diagflat(_mx(v), k), np.diagflat(v, k))


@given(args=matrices(max_dims=4), lower=st.booleans())
def test_tril_triu_match_numpy(args, lower):
    x, k, _, _ = args
    name = "tril" if lower else "triu"
    _same(getattr(fnp, name)(_mx(x), k), getattr(np, name)(x, k))
    xi = (x * 10).astype(np.int32)
    _same(getattr(fnp, name)(_mx(xi), k=k), getattr(np, name)(xi, k))


@given(n=st.integers(0, 5), m=st.none() | st.integers(0, 5), k=st.integers(-6, 6))
def test_tri_and_triangle_indices_match_numpy(n, m, k):
    _same(fnp.tri(n, m, k), np.tri(n, m, k, dtype=np.float32))
    assert fnp.tri(n, m, k, dtype=bool).dtype == mx.bool_
    for name in ("tril_indices", "triu_indices"):
        got = getattr(fnp, name)(n, k, m)
        assert [g.dtype for g in got] == [mx.int32, mx.int32]
        for g, e in zip(got, getattr(np, name)(n, k, m)):
            _same(g, e)
        arr = np.zeros((n, n if m is None else m))
        for src in (arr, _mx(arr)):
            for g, e in zip(getattr(fnp, name + "_from")(src, k), getattr(np, name + "_from")(
                    arr, k)):
                _same(g, e)


@pytest.mark.parametrize("shape", [(3, 3), (2, 4), (4, 2), (3, 3, 3), (2, 2, 2, 2), (1, 1)])
@pytest.mark.parametrize("val", [5.0, [1.0, 2.0], [[1.0, 2.0], [3.0, 4.0]], np.arange(1, 12.0)])
def test_fill_diagonal_matches_numpy(shape, val):
    a = np.arange(float(np.prod(shape))).reshape(shape)
    expected = a.copy()
    np.fill_diagonal(expected, val)
    _same(fnp.fill_diagonal(_mx(a), _mx(val), inplace=False), expected)


@given(n=st.integers(0, 7), sections=st.integers(1, 9), lead=st.integers(0, 2))
def test_array_split_matches_numpy(n, sections, lead):
    x = np.arange(n * 2 * (lead + 1)).reshape(lead + 1, n, 2)
    got = fnp.array_split(_mx(x), sections, axis=1)
    expected = np.array_split(x, sections, axis=1)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        _same(g, e)


def test_array_split_at_indices_and_the_named_splits():
    x = np.arange(48).reshape(2, 4, 6)
    for got, expected in [
        (fnp.array_split(_mx(x), [1, 3, 3, 10], axis=2),
         np.array_split(x, [1, 3, 3, 10], axis=2)),
        (fnp.vsplit(_mx(x), 2), np.vsplit(x, 2)),
        (fnp.hsplit(_mx(x), [1]), np.hsplit(x, [1])),
        (fnp.hsplit(mx.arange(6), 3), np.hsplit(np.arange(6), 3)),
        (fnp.dsplit(_mx(x), [2, 5]), np.dsplit(x, [2, 5])),
    ]:
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            _same(g, e)


@given(sizes=st.lists(st.integers(0, 4), max_size=4), sparse=st.booleans(),
       indexing=st.sampled_from(["xy", "ij"]))
def test_meshgrid_matches_numpy(sizes, sparse, indexing):
    xs = [np.arange(n) + 10 * i for i, n in enumerate(sizes)]
    got = fnp.meshgrid(*[_mx(x) for x in xs], sparse=sparse, indexing=indexing)
    expected = np.meshgrid(*xs, sparse=sparse, indexing=indexing)
    assert isinstance(got, list) and len(got) == len(expected)
    for g, e in zip(got, expected):
        _same(g, e)


def test_meshgrid_keeps_each_dtype():
    gx, gy = fnp.meshgrid(mx.array([1, 2], mx.int8), mx.array([1.0, 2.0, 3.0]), copy=False)
    assert (gx.dtype, gy.dtype) == (mx.int8, mx.float32)


# ----------------------------------------------------------------------------
# Derivatives (float64, finite differences and the VJP-JVP identity)
# ----------------------------------------------------------------------------


def _check_derivatives(fn, *args, second=False):
    args = tuple(mx.array(a, dtype=mx.float64) for a in args)
    check_jvp_fd(fn, args)
    check_vjp_dot(fn, args)
    if second:
        check_second_order(fn, args)


@given(args=matrices(max_dims=3, min_side=1))
def test_diagonal_trace_triangle_derivatives(args):
    x, offset, a1, a2 = args
    _check_derivatives(lambda v: fnp.diagonal(v, offset, a1, a2), x, second=True)
    _check_derivatives(lambda v: fnp.trace(v, offset, a1, a2), x)
    _check_derivatives(lambda v: fnp.tril(v, offset) * v, x, second=True)
    _check_derivatives(lambda v: fnp.triu(v, offset), x)


@given(v=floats(shapes(min_dims=1, max_dims=2)), k=st.integers(-3, 3))
def test_diag_and_diagflat_derivatives(v, k):
    _check_derivatives(lambda a: fnp.diag(a, k), v, second=True)
    _check_derivatives(lambda a: fnp.diagflat(a, k), v)


def test_derivative_values_are_the_masks():
    x = mx.arange(12, dtype=mx.float64).reshape(3, 4)
    _same(ft.grad(lambda v: fnp.trace(v, 1))(x), np.eye(3, 4, 1))
    _same(ft.grad(lambda v: fnp.tril(v, -1).sum())(x), np.tril(np.ones((3, 4)), -1))
    _same(ft.grad(lambda v: fnp.triu(v).sum())(x), np.triu(np.ones((3, 4))))
    _same(ft.grad(lambda v: (fnp.diag(v, -1) * mx.arange(4.0)).sum())(mx.ones(3)), [0, 1, 2])
    # An inf or NaN above the diagonal does not reach the gradient of tril.
    bad = mx.array([[1.0, np.inf], [2.0, 3.0]])
    _same(ft.grad(lambda v: (fnp.tril(v) * 2).sum())(bad), [[2, 0], [2, 2]])


def test_fill_diagonal_and_meshgrid_derivatives():
    a = np.random.default_rng(0).standard_normal((3, 4))
    val = np.array([1.5, -2.0])
    _check_derivatives(lambda x, v: fnp.fill_diagonal(x, v, inplace=False), a, val)
    _check_derivatives(lambda x: fnp.fill_diagonal(x, 0.0, inplace=False), a)
    _check_derivatives(lambda x, y: fnp.meshgrid(x, y)[0] * fnp.meshgrid(x, y)[1],
                       a[0], a[1, :3])


def test_array_split_derivative():
    x = np.arange(7.0)
    _check_derivatives(lambda v: [p * p for p in fnp.array_split(v, 3)], x)


# ----------------------------------------------------------------------------
# jit and vmap
# ----------------------------------------------------------------------------

FUNCTIONS = {
    "diagonal": lambda x: fnp.diagonal(x, 1, 0, -1),
    "diagonal_neg": lambda x: fnp.diagonal(x, -1, 2, 1),
    "trace": lambda x: fnp.trace(x, -1, 1, 0),
    "diag_1d": lambda x: fnp.diag(x[0, 0], 1),
    "diag_2d": lambda x: fnp.diag(x[0], -1),
    "diagflat": lambda x: fnp.diagflat(x[0], 2),
    "tril": lambda x: fnp.tril(x, -1),
    "triu": lambda x: fnp.triu(x, 1),
    "fill_diagonal": lambda x: fnp.fill_diagonal(x[0], x[1, 0, :2], inplace=False),
    "array_split": lambda x: fnp.array_split(x, 2, axis=2),
    "vsplit": lambda x: fnp.vsplit(x, [1]),
    "hsplit": lambda x: fnp.hsplit(x, [2]),
    "dsplit": lambda x: fnp.dsplit(x, 3),
    "meshgrid": lambda x: fnp.meshgrid(x[0, 0], x[1, 1], indexing="xy"),
    "meshgrid_sparse": lambda x: fnp.meshgrid(x[0, 0], x[1, 1], x[0, 1], sparse=True),
}


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_jit_matches_eager_and_vmap_matches_a_loop(name):
    fn = FUNCTIONS[name]
    x = _mx(np.random.default_rng(1).standard_normal((2, 3, 3)))
    with compiler_off():
        got = ft.jit(fn)(x)
    for g, e in zip(ft.tree.leaves(got), ft.tree.leaves(fn(x))):
        _same(g, e)
    check_vmap(fn, (x,))


def test_vmap_of_the_diagonal_of_a_batch_of_matrices():
    x = _mx(np.random.default_rng(2).standard_normal((4, 3, 5)))
    _same(ft.vmap(lambda m: fnp.diagonal(m, 1))(x), np.diagonal(np.array(x), 1, 1, 2))
    _same(ft.vmap(fnp.trace, in_axes=2)(x), np.trace(np.array(x), 0, 0, 1))


# ----------------------------------------------------------------------------
# Errors
# ----------------------------------------------------------------------------


def test_errors_name_the_function_and_the_argument():
    m, v = mx.ones((2, 3)), mx.ones(3)
    cases = [
        (lambda: fnp.diagonal(v), ValueError, r"diagonal: a must have at least 2 dimensions"),
        (lambda: fnp.diagonal(m, 0, 0, -2), ValueError,
         r"diagonal: axis1 and axis2 must be different axes, got 0 and -2"),
        (lambda: fnp.diagonal(m, 0, 0, 2), ValueError,
         r"diagonal: axis2 2 is out of range for an array of ndim 2"),
        (lambda: fnp.diagonal(m, 1.5), TypeError, r"diagonal: offset must be an integer"),
        (lambda: fnp.trace(m, axis1=3), ValueError, r"trace: axis1 3 is out of range"),
        (lambda: fnp.trace(v), ValueError, r"trace: a must have at least 2 dimensions"),
        (lambda: fnp.trace(m, out=m), NotImplementedError, r"trace: the 'out' argument"),
        (lambda: fnp.diag(mx.ones((2, 2, 2))), ValueError, r"diag: v must be 1-D or 2-D"),
        (lambda: fnp.diag(v, k=0.5), TypeError, r"diag: k must be an integer"),
        (lambda: fnp.tril(v), ValueError, r"tril: m must have at least 2 dimensions"),
        (lambda: fnp.triu(m, k="1"), TypeError, r"triu: k must be an integer"),
        (lambda: fnp.tri(-1), ValueError, r"tri: N"),
        (lambda: fnp.tril_indices_from(v), ValueError, r"tril_indices_from: arr must be 2-D"),
        (lambda: fnp.fill_diagonal(m, 1.0), NotImplementedError, r"fill_diagonal: .*inplace"),
        (lambda: fnp.fill_diagonal(m, 1.0, wrap=True, inplace=False), NotImplementedError,
         r"fill_diagonal: wrap=True"),
        (lambda: fnp.fill_diagonal(mx.ones((2, 3, 2)), 1.0, inplace=False), ValueError,
         r"fill_diagonal: .* all its axes of one length"),
        (lambda: fnp.array_split(v, 0), ValueError,
         r"array_split: indices_or_sections must be a positive number of sections, got 0"),
        (lambda: fnp.array_split(v, 2, axis=1), ValueError,
         r"array_split: axis 1 is out of range"),
        (lambda: fnp.array_split(v, [1.5]), TypeError,
         r"array_split: indices_or_sections must be an integer"),
        (lambda: fnp.vsplit(v, 3), ValueError, r"vsplit: needs an array of 2 or more"),
        (lambda: fnp.dsplit(m, 3), ValueError, r"dsplit: needs an array of 3 or more"),
        (lambda: fnp.hsplit(m, 2), ValueError,
         r"hsplit: axis 1 of size 3 does not divide into 2 equal sections"),
        (lambda: fnp.meshgrid(v, m), ValueError,
         r"meshgrid: argument 1 must be 1-D, got an array of shape \(2, 3\)"),
        (lambda: fnp.meshgrid(v, indexing="xz"), ValueError,
         r"meshgrid: indexing must be 'xy' or 'ij'"),
    ]
    for fn, error, message in cases:
        with pytest.raises(error, match=message):
            fn()


def test_offsets_and_sections_must_be_static_under_jit():
    with pytest.raises(Exception, match=r"diagonal: offset"):
        ft.jit(lambda x, k: fnp.diagonal(x, k))(mx.ones((2, 2)), mx.array(1))


# ----------------------------------------------------------------------------
# cross
# ----------------------------------------------------------------------------


@st.composite
def cross_args(draw):
    """(a, b, kwargs): 2- or 3-vectors along drawn axes, other dimensions broadcasting."""
    batch = draw(shapes(min_dims=0, max_dims=2, max_side=3))
    na, nb = draw(st.sampled_from([2, 3])), draw(st.sampled_from([2, 3]))
    sa, sb = list(batch), list(batch[draw(st.integers(0, len(batch))):])
    ia, ib = draw(st.integers(0, len(sa))), draw(st.integers(0, len(sb)))
    sa.insert(ia, na)
    sb.insert(ib, nb)
    kwargs = dict(axisa=ia - len(sa) if draw(st.booleans()) else ia, axisb=ib)
    if na == 3 or nb == 3:
        kwargs["axisc"] = draw(st.integers(-len(batch) - 1, len(batch)))
    return draw(floats(tuple(sa))), draw(floats(tuple(sb))), kwargs


@pytest.mark.filterwarnings("ignore:Arrays of 2-dimensional vectors:DeprecationWarning")
@given(cross_args())
def test_cross_matches_numpy_and_its_derivatives_check(args):
    a, b, kwargs = args
    got = fnp.cross(_mx(a), _mx(b), **kwargs)
    np.testing.assert_allclose(np.array(got), np.cross(a, b, **kwargs), rtol=1e-12, atol=1e-12)
    ft.test_util.check_grads(lambda a, b: fnp.cross(a, b, **kwargs), (_mx(a), _mx(b)), order=1)


def test_cross_under_vmap_and_jit_and_its_errors():
    a, b = mx.array(np.arange(12.0).reshape(4, 3)), mx.array([1.0, -2.0, 0.5])
    ft.test_util.check_batching(fnp.cross, (a, b), in_axes=(0, None))
    close(ft.jit(fnp.cross)(a, b), np.cross(np.array(a), np.array(b)))
    with pytest.raises(ValueError, match="cross: argument b must have 2 or 3 components"):
        fnp.cross(a, mx.ones(4))
    with pytest.raises(ValueError, match="cross: axis 2 in axisa is out of range"):
        fnp.cross(a, b, axisa=2)
    with pytest.raises(ValueError, match="cross: x1 must have size 3"):
        fnp.linalg.cross(mx.ones(2), mx.ones(2))
