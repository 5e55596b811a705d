"""Values, stability, transforms, gradients and argument errors of sorting,
searching, counting, quantiles, histograms (ftorch.numpy) and the segment
reductions (ftorch.ops)."""

import warnings

import mlx.core as mx
import numpy as np
import pytest
from harness import check_jvp_fd, check_vjp_dot, distinct
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ftorch as ft
import ftorch.lax as lax
import ftorch.numpy as fnp
import ftorch.ops as ops

RNG = np.random.default_rng(0)


def _f64(x):
    return mx.array(np.asarray(x, dtype=np.float64), dtype=mx.float64)


def _eq(actual, expected):
    np.testing.assert_array_equal(np.array(actual), np.asarray(expected))


def _stable_desc_argsort(x, axis):
    """NumPy's reference for a stable descending argsort (NaNs first)."""
    n = x.shape[axis]
    rev = np.flip(x, axis)
    return (n - 1) - np.flip(np.argsort(rev, axis=axis, kind="stable"), axis)


# Arrays with many ties, and NaNs (and -0.0 beside 0.0).
tied = hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=6),
                  elements=st.sampled_from([0.0, -0.0, 1.0, 2.0, -1.5, np.nan, np.inf]))


# ----------------------------------------------------------------------------
# sort, argsort, stability, NaN order
# ----------------------------------------------------------------------------


@given(x=tied, data=st.data())
def test_sort_and_argsort_match_numpy(x, data):
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    _eq(fnp.sort(_f64(x), axis=axis), np.sort(x, axis=axis))
    _eq(fnp.argsort(_f64(x), axis=axis), np.argsort(x, axis=axis, kind="stable"))
    _eq(fnp.argsort(_f64(x), axis=axis, descending=True), _stable_desc_argsort(x, axis % x.ndim))
    _eq(fnp.sort(_f64(x), axis=None), np.sort(x, axis=None))
    _eq(fnp.argsort(_f64(x), axis=None), np.argsort(x, axis=None, kind="stable"))
    assert fnp.argsort(_f64(x)).dtype == mx.int32


@pytest.mark.parametrize("n", [2, 7, 64, 1000, 20000])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.float16, np.uint8])
def test_argsort_is_stable(n, dtype):
    x = RNG.integers(0, 3, size=(n,)).astype(dtype)
    _eq(fnp.argsort(mx.array(x)), np.argsort(x, kind="stable"))
    _eq(fnp.argsort(mx.array(x), descending=True), _stable_desc_argsort(x, 0))
    x2 = RNG.integers(0, 3, size=(min(n, 500), 3)).astype(dtype)
    _eq(fnp.argsort(mx.array(x2), axis=0), np.argsort(x2, axis=0, kind="stable"))


def test_nan_sorts_last_and_signed_zeros_keep_their_order():
    x = mx.array([3.0, float("nan"), -0.0, -float("nan"), 0.0, -float("inf"), -0.0])
    assert fnp.argsort(x).tolist() == [5, 2, 4, 6, 0, 1, 3]
    out = np.array(fnp.sort(x))
    assert np.isnan(out[-2:]).all()
    assert list(np.signbit(out[1:4])) == [True, False, True]  # input order of the zeros
    desc = fnp.sort(x, descending=True)
    assert np.isnan(np.array(desc[:2])).all()


def test_sort_complex_and_bool():
    _eq(fnp.sort(mx.array([1 + 2j, 1 + 1j, 0 + 5j])), np.array([5j, 1 + 1j, 1 + 2j]))
    _eq(fnp.sort(mx.array([True, False, True])), [False, True, True])


def test_lax_sort_several_operands():
    keys = mx.array([2, 1, 2, 1])
    vals = mx.array([0.0, 1.0, 2.0, 3.0])
    k, v = lax.sort((keys, vals))
    assert k.tolist() == [1, 1, 2, 2] and v.tolist() == [1.0, 3.0, 0.0, 2.0]
    k1, k2, v = lax.sort((mx.array([1, 0, 1, 0]), mx.array([1, 1, 0, 0]), vals), num_keys=2)
    assert v.tolist() == [3.0, 1.0, 2.0, 0.0]
    with pytest.raises(ValueError, match="num_keys"):
        lax.sort((keys, vals), num_keys=3)
    with pytest.raises(ValueError, match="same shape"):
        lax.sort((keys, mx.zeros(3)))


@given(keys=hnp.arrays(np.int32, st.tuples(st.integers(1, 3), st.integers(1, 12)),
                       elements=st.integers(0, 2)))
def test_lexsort_matches_numpy(keys):
    _eq(fnp.lexsort(mx.array(keys)), np.lexsort(keys))
    _eq(fnp.lexsort([mx.array(k) for k in keys]), np.lexsort(keys))


def test_sort_errors():
    with pytest.raises(ValueError, match="sort: axis 2 is out of range"):
        fnp.sort(mx.zeros((2, 2)), axis=2)
    with pytest.raises(ValueError, match="argsort: axis 0 is out of range.*ndim 0"):
        fnp.argsort(mx.array(1.0), axis=0)
    with pytest.raises(NotImplementedError, match="order"):
        fnp.sort(mx.zeros(2), order="f")


# ----------------------------------------------------------------------------
# partition, top_k, cummax, cummin
# ----------------------------------------------------------------------------


@given(x=tied, data=st.data())
def test_partition_and_argpartition(x, data):
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    n = x.shape[axis]
    kth = data.draw(st.integers(-n, n - 1))
    idx = np.array(fnp.argpartition(_f64(x), kth, axis=axis))
    k = kth % n
    np.testing.assert_array_equal(np.sort(idx, axis=axis),
                                  np.broadcast_to(np.arange(n).reshape(
                                      [-1 if i == axis % x.ndim else 1
                                       for i in range(x.ndim)]), x.shape))
    part = np.take_along_axis(x, idx, axis)
    _eq(np.take(part, k, axis), np.take(np.sort(x, axis=axis), k, axis))
    _eq(fnp.partition(_f64(x), kth, axis=axis), part)
    # JAX's layout: the kth + 1 smallest ascending, then the rest descending.
    s = np.sort(x, axis=axis)
    expected = np.concatenate([np.take(s, range(k + 1), axis),
                               np.flip(np.take(s, range(k + 1, n), axis), axis)], axis)
    _eq(part, expected)


def test_partition_matches_jax_example():
    x = mx.array([6, 8, 4, 3, 1, 9, 7, 5, 2, 3])
    assert fnp.partition(x, 4).tolist() == [1, 2, 3, 3, 4, 9, 8, 7, 6, 5]
    with pytest.raises(ValueError, match="argpartition: kth 10 is out of range"):
        fnp.argpartition(x, 10)


@given(x=tied, data=st.data())
def test_top_k_matches_stable_descending_sort(x, data):
    k = data.draw(st.integers(0, x.shape[-1]))
    values, indices = lax.top_k(_f64(x), k)
    ref = _stable_desc_argsort(x, x.ndim - 1)[..., :k]
    _eq(indices, ref)
    _eq(values, np.take_along_axis(x, ref, -1))
    assert indices.dtype == mx.int32


def test_top_k_errors_and_transforms():
    x = mx.array([[1.0, 4.0, 2.0], [0.0, -1.0, 3.0]])
    with pytest.raises(ValueError, match="top_k: k must be between 0 and .* \\(3\\), got 4"):
        lax.top_k(x, 4)
    with pytest.raises(TypeError, match="top_k: k must be a static int"):
        lax.top_k(x, 1.5)
    v, i = ft.jit(lambda a: lax.top_k(a, 2))(x)
    assert v.tolist() == [[4.0, 2.0], [3.0, 0.0]] and i.tolist() == [[1, 2], [2, 0]]
    v, i = ft.vmap(lambda a: lax.top_k(a, 1), in_axes=1)(x)
    assert v.tolist() == [[1.0], [4.0], [3.0]] and i.tolist() == [[0], [0], [1]]
    g = ft.grad(lambda a: lax.top_k(a, 2)[0].sum())(mx.array([1.0, 5.0, 5.0, 3.0]))
    assert g.tolist() == [0.0, 1.0, 1.0, 0.0]


@given(x=tied, data=st.data())
def test_cummax_cummin_match_numpy(x, data):
    axis = data.draw(st.integers(0, x.ndim - 1))
    reverse = data.draw(st.booleans())
    x = np.where(np.isnan(x), 0.5, x)  # NumPy's accumulate skips NaNs; tested below
    for op, ref in ((lax.cummax, np.maximum), (lax.cummin, np.minimum)):
        if reverse:
            expected = np.flip(ref.accumulate(np.flip(x, axis), axis=axis), axis)
        else:
            expected = ref.accumulate(x, axis=axis)
        _eq(op(_f64(x), axis, reverse=reverse), expected)


def test_cummax_nan_and_gradient_ties():
    out = lax.cummax(mx.array([1.0, float("nan"), 2.0]))
    assert out.tolist()[0] == 1.0 and np.isnan(np.array(out[1:])).all()
    x = mx.array([1.0, 3.0, 3.0, 2.0, 4.0])
    # Ties go to the latest holder of the running maximum.
    assert ft.grad(lambda a: lax.cummax(a).sum())(x).tolist() == [1.0, 1.0, 2.0, 0.0, 1.0]
    assert ft.grad(lambda a: lax.cummin(a, reverse=True).sum())(x).tolist() == [
        1.0, 0.0, 0.0, 3.0, 1.0]
    y = mx.array([1.0, 2.0, 2.0, 3.0])  # scanning from the end, index 1 is the latest
    assert ft.grad(lambda a: lax.cummin(a, reverse=True).sum())(y).tolist() == [
        1.0, 1.0, 1.0, 1.0]
    with pytest.raises(ValueError, match="cummax: axis 1 is out of range"):
        lax.cummax(x, 1)


# ----------------------------------------------------------------------------
# searchsorted, digitize
# ----------------------------------------------------------------------------


@given(a=hnp.arrays(np.float64, st.integers(0, 9), elements=st.sampled_from(
    [0.0, 1.0, 1.0, 2.5, 3.0, np.nan])),
    v=hnp.arrays(np.float64, hnp.array_shapes(min_dims=0, max_dims=2, max_side=4),
                 elements=st.sampled_from([-1.0, 0.0, 1.0, 2.0, 2.5, 9.0, np.nan])),
    side=st.sampled_from(["left", "right"]), method=st.sampled_from(["scan", "compare_all"]))
def test_searchsorted_matches_numpy(a, v, side, method):
    a = np.sort(a)
    got = fnp.searchsorted(_f64(a), _f64(v), side=side, method=method)
    _eq(got, np.searchsorted(a, v, side=side))
    assert got.dtype == mx.int32 and got.shape == v.shape


def test_searchsorted_sorter_jit_vmap_and_errors():
    a = np.array([3.0, 1.0, 2.0, 5.0])
    sorter = np.argsort(a)
    v = np.array([0.0, 2.0, 4.0, 6.0])
    _eq(fnp.searchsorted(mx.array(a), mx.array(v), sorter=mx.array(sorter)),
        np.searchsorted(a, v, sorter=sorter))
    s = mx.array(np.sort(a))
    _eq(ft.jit(lambda x: fnp.searchsorted(s, x, side="right"))(mx.array(v)),
        np.searchsorted(np.sort(a), v, side="right"))
    rows = mx.array([[1.0, 2.0, 3.0], [0.0, 10.0, 20.0]])
    _eq(ft.vmap(lambda r: fnp.searchsorted(r, mx.array(2.5)))(rows), [2, 1])
    with pytest.raises(ValueError, match="searchsorted: side must be 'left' or 'right'"):
        fnp.searchsorted(s, 1.0, side="middle")
    with pytest.raises(ValueError, match="searchsorted: a must be 1-D"):
        fnp.searchsorted(mx.zeros((2, 2)), 1.0)


@pytest.mark.parametrize("right", [False, True])
@pytest.mark.parametrize("bins", [[0.0, 1.0, 2.5, 4.0], [4.0, 2.5, 1.0, 0.0], [1.0, 1.0, 2.0]])
def test_digitize_matches_numpy(right, bins):
    x = np.array([-1.0, 0.0, 0.5, 1.0, 2.5, 3.0, 4.0, 9.0])
    _eq(fnp.digitize(mx.array(x), mx.array(bins), right=right),
        np.digitize(x, bins, right=right))


# ----------------------------------------------------------------------------
# bincount, unique
# ----------------------------------------------------------------------------


@given(x=hnp.arrays(np.int32, st.integers(0, 12), elements=st.integers(0, 7)),
       minlength=st.integers(0, 10), weighted=st.booleans())
def test_bincount_matches_numpy(x, minlength, weighted):
    w = RNG.normal(size=x.shape) if weighted else None
    got = fnp.bincount(mx.array(x), None if w is None else _f64(w), minlength=minlength)
    np.testing.assert_allclose(np.array(got), np.bincount(x, w, minlength=minlength),
                               rtol=1e-12, atol=1e-12)


def test_bincount_length_jit_and_errors():
    x = mx.array([-1, 0, 5, 1])
    assert fnp.bincount(x, length=3).tolist() == [2, 1, 0]  # JAX: clipped, dropped
    assert ft.jit(lambda a: fnp.bincount(a, length=4))(mx.array([1, 1, 3])).tolist() == [
        0, 2, 0, 1]
    with pytest.raises(ft.ConcretizationError, match="bincount: .*pass length"):
        ft.jit(lambda a: fnp.bincount(a))(mx.array([1, 1, 3]))
    with pytest.raises(TypeError, match="bincount: x must be an integer array"):
        fnp.bincount(mx.array([1.0]))
    with pytest.raises(ValueError, match="bincount: weights must have the shape of x"):
        fnp.bincount(mx.array([1, 2]), mx.ones(3))


@given(x=tied)
def test_unique_matches_numpy(x):
    got = fnp.unique(_f64(x), return_index=True, return_inverse=True, return_counts=True)
    ref = np.unique(x, return_index=True, return_inverse=True, return_counts=True,
                    equal_nan=True)
    _eq(got[0], ref[0])
    _eq(got[1], ref[1])
    _eq(got[2], ref[2].reshape(x.shape))
    _eq(got[3], ref[3])
    ref_ne = np.unique(x, equal_nan=False)
    _eq(fnp.unique(_f64(x), equal_nan=False), ref_ne)


@given(x=hnp.arrays(np.int32, st.tuples(st.integers(1, 6), st.integers(1, 3)),
                    elements=st.integers(0, 2)), axis=st.sampled_from([0, 1, -1]))
def test_unique_along_axis_matches_numpy(x, axis):
    got = fnp.unique(mx.array(x), axis=axis, return_index=True, return_inverse=True,
                     return_counts=True)
    ref = np.unique(x, axis=axis, return_index=True, return_inverse=True, return_counts=True)
    for g, r in zip(got, ref):
        _eq(g, r.reshape(-1) if r.ndim == 1 else r)


def test_unique_with_size_under_jit():
    x = mx.array([[3, 1, 3], [2, 1, 7]])
    f = ft.jit(lambda a: fnp.unique(a, return_index=True, return_inverse=True,
                                    return_counts=True, size=6))
    values, index, inverse, counts = f(x)
    # Missing entries as JAX: the smallest value, index perm[0], count 0.
    assert values.tolist() == [1, 2, 3, 7, 1, 1]
    assert index.tolist() == [1, 3, 0, 5, 1, 1]
    assert inverse.tolist() == [[2, 0, 2], [1, 0, 3]]
    assert counts.tolist() == [2, 1, 2, 1, 0, 0]
    short = ft.jit(lambda a: fnp.unique(a, return_counts=True, size=2, fill_value=-1))(x)
    assert short[0].tolist() == [1, 2] and short[1].tolist() == [2, 1]
    with pytest.raises(ft.ConcretizationError, match="unique: .*pass size"):
        ft.jit(fnp.unique)(x)
    assert fnp.unique(mx.zeros((0,), mx.int32), size=2, fill_value=5).tolist() == [5, 5]
    with pytest.raises(ValueError, match="fill_value"):
        fnp.unique(mx.zeros((0,)), size=2)


def test_unique_array_api_variants():
    x = mx.array([2, 1, 2])
    assert fnp.unique_values(x).tolist() == [1, 2]
    assert [a.tolist() for a in fnp.unique_all(x)] == [[1, 2], [1, 0], [1, 0, 1], [1, 2]]


def test_unique_values_are_differentiable():
    g = ft.grad(lambda a: fnp.unique(a).sum())(mx.array([2.0, 1.0, 2.0]))
    assert g.tolist() == [1.0, 1.0, 0.0]  # the first of the tied entries is read


# ----------------------------------------------------------------------------
# quantiles
# ----------------------------------------------------------------------------

METHODS = ["linear", "lower", "higher", "midpoint", "nearest"]


@given(x=hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=5),
                    elements=st.floats(-5, 5, allow_subnormal=False)),
       method=st.sampled_from(METHODS), data=st.data())
def test_quantile_matches_numpy(x, method, data):
    axis = data.draw(st.sampled_from([None, 0, -1] + ([(0, x.ndim - 1)] if x.ndim > 1 else [])))
    keepdims = data.draw(st.booleans())
    # Quantiles whose position is not exactly halfway (NumPy's 'nearest' rounds
    # half to even; JAX's, and ours, rounds it down).
    q = np.array([0.0, 0.3137, 0.7071, 1.0])
    got = fnp.quantile(_f64(x), _f64(q), axis=axis, method=method, keepdims=keepdims)
    ref = np.quantile(x, q, axis=axis, method=method, keepdims=keepdims)
    np.testing.assert_allclose(np.array(got), ref, rtol=1e-12, atol=1e-12)
    got = fnp.percentile(_f64(x), 31.37, axis=axis, method=method, keepdims=keepdims)
    np.testing.assert_allclose(np.array(got), np.percentile(x, 31.37, axis=axis, method=method,
                                                            keepdims=keepdims),
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.array(fnp.median(_f64(x), axis=axis, keepdims=keepdims)),
                               np.median(x, axis=axis, keepdims=keepdims), rtol=1e-12)


@given(x=hnp.arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(1, 6)),
                    elements=st.sampled_from([np.nan, 0.0, 1.0, 2.5, -3.0, 7.0])),
       method=st.sampled_from(METHODS))
def test_nan_quantiles_match_numpy(x, method):
    q = np.array([0.13, 0.4343, 0.9])  # never exactly halfway for up to 6 values
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # all-NaN slices
        ref_q = np.nanquantile(x, q, axis=1, method=method)
        ref_m = np.nanmedian(x, axis=1)
        ref_p = np.nanpercentile(x, 90, axis=0, method=method)
    np.testing.assert_allclose(np.array(fnp.nanquantile(_f64(x), _f64(q), axis=1,
                                                        method=method)), ref_q)
    np.testing.assert_allclose(np.array(fnp.nanmedian(_f64(x), axis=1)), ref_m)
    np.testing.assert_allclose(np.array(fnp.nanpercentile(_f64(x), 90.0, axis=0,
                                                          method=method)), ref_p)
    np.testing.assert_allclose(np.array(fnp.median(_f64(x), axis=1)), np.median(x, axis=1))


def test_quantile_dtypes_nearest_and_errors():
    x = mx.array([1, 2, 3, 4])
    assert fnp.median(x).dtype == mx.float32
    assert fnp.quantile(x, 0.5, method="nearest").item() == 2.0  # JAX rounds halfway down
    assert np.isnan(fnp.median(mx.array([1.0, float("nan")])).item())
    assert np.isnan(fnp.nanmedian(mx.array([float("nan")])).item())
    with pytest.raises(ValueError, match="quantile: method must be one of"):
        fnp.quantile(x, 0.5, method="cubic")
    with pytest.raises(ValueError, match=r"quantile: quantiles must lie in \[0, 1\]"):
        fnp.quantile(x, 1.5)
    with pytest.raises(ValueError, match="median: axis 3 is out of range"):
        fnp.median(x, axis=3)


def test_quantile_under_jit_and_vmap():
    x = RNG.normal(size=(3, 5))
    got = ft.jit(lambda a, q: fnp.quantile(a, q, axis=1))(_f64(x), _f64([0.2, 0.9]))
    np.testing.assert_allclose(np.array(got), np.quantile(x, [0.2, 0.9], axis=1), rtol=1e-12)
    got = ft.vmap(fnp.median)(_f64(x))
    np.testing.assert_allclose(np.array(got), np.median(x, axis=1), rtol=1e-12)


# ----------------------------------------------------------------------------
# Gradients against finite differences
# ----------------------------------------------------------------------------


def _untied(*shape):
    return _f64(distinct(RNG.normal(size=shape), gap=0.05))


@pytest.mark.parametrize("fn", [
    lambda x: fnp.median(x, axis=0),
    lambda x: fnp.median(x),
    lambda x: fnp.quantile(x, _f64([0.13, 0.62]), axis=1, method="linear"),
    lambda x: fnp.quantile(x, 0.4, axis=1, method="midpoint"),
    lambda x: fnp.nanquantile(x, 0.3),
    lambda x: fnp.sort(x, axis=0),
    lambda x: fnp.sort(x, axis=None, descending=True),
    lambda x: lax.top_k(x, 2)[0],
    lambda x: lax.cummax(x, 1),
    lambda x: fnp.partition(x, 1, axis=1),
    lambda x: ops.segment_sum(x, mx.array([0, 2, 0, 5]), num_segments=4),
    lambda x: ops.segment_max(x, mx.array([1, 0, 1, 1]), num_segments=2),
], ids=["median0", "median", "quantile", "midpoint", "nanquantile", "sort", "sort_desc",
        "top_k", "cummax", "partition", "segment_sum", "segment_max"])
def test_gradients_match_finite_differences(fn):
    x = _untied(4, 3)
    check_jvp_fd(fn, (x,))
    check_vjp_dot(fn, (x,))


def test_median_gradient_goes_to_middle_values():
    g = ft.grad(fnp.median)(mx.array([4.0, 1.0, 3.0, 2.0]))
    assert g.tolist() == [0.0, 0.0, 0.5, 0.5]
    g = ft.grad(lambda q: fnp.quantile(mx.array([0.0, 10.0, 30.0]), q))(mx.array(0.25))
    assert g.item() == pytest.approx(20.0)


# ----------------------------------------------------------------------------
# histogram
# ----------------------------------------------------------------------------


@given(x=hnp.arrays(np.float64, st.integers(0, 20), elements=st.floats(-4, 4)),
       bins=st.integers(1, 6), weighted=st.booleans(), density=st.booleans(),
       use_range=st.booleans())
def test_histogram_matches_numpy(x, bins, weighted, density, use_range):
    w = RNG.uniform(0.5, 2.0, size=x.shape) if weighted else None
    rng = (-2.0, 3.0) if use_range else None
    if x.size == 0 and density:
        return
    hist, edges = fnp.histogram(_f64(x), bins=bins, range=rng,
                                weights=None if w is None else _f64(w), density=density)
    ref_h, ref_e = np.histogram(x, bins=bins, range=rng, weights=w, density=density)
    np.testing.assert_allclose(np.array(edges), ref_e, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.array(hist), ref_h, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.array(fnp.histogram_bin_edges(_f64(x), bins, rng)), ref_e,
                               rtol=1e-12, atol=1e-12)


def test_histogram_explicit_edges_jit_and_errors():
    x = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 5.0, np.nan])
    edges = np.array([0.0, 1.0, 1.5, 2.0])
    hist, e = fnp.histogram(mx.array(x), bins=mx.array(edges))
    np.testing.assert_array_equal(np.array(hist), np.histogram(x, bins=edges)[0])
    hist, e = ft.jit(lambda a: fnp.histogram(a, bins=3))(mx.array([1.0, 2.0, 2.0, 3.0, 10.0]))
    assert hist.tolist() == [4.0, 0.0, 1.0]
    with pytest.raises(ValueError, match="histogram: bins must increase monotonically"):
        fnp.histogram(mx.array(x), bins=mx.array([1.0, 0.0]))
    with pytest.raises(ValueError, match="histogram: bins must be a positive int"):
        fnp.histogram(mx.array(x), bins=0)


# ----------------------------------------------------------------------------
# Segment reductions
# ----------------------------------------------------------------------------


def _segment_reference(data, ids, n, op, init):
    out = np.full((n,) + data.shape[1:], init, dtype=data.dtype)
    for row, i in zip(data, ids):
        if 0 <= i < n:
            out[i] = op(out[i], row)
    return out


@given(n=st.integers(1, 8), num=st.integers(0, 5), data=st.data())
def test_segment_ops_match_reference(n, num, data):
    ids = np.array(data.draw(st.lists(st.integers(-2, 6), min_size=n, max_size=n)), np.int32)
    x = RNG.normal(size=(n, 2))
    for fn, op, init in ((ops.segment_sum, np.add, 0.0), (ops.segment_prod, np.multiply, 1.0),
                         (ops.segment_max, np.maximum, -np.inf),
                         (ops.segment_min, np.minimum, np.inf)):
        got = fn(_f64(x), mx.array(ids), num_segments=num)
        np.testing.assert_allclose(np.array(got), _segment_reference(x, ids, num, op, init),
                                   rtol=1e-12)


def test_segment_defaults_jit_vmap_and_errors():
    ids = mx.array([0, 2, 2])
    data = mx.array([1, 5, 3])
    assert ops.segment_max(data, ids).tolist() == [1, -2**31, 5]
    assert ops.segment_min(data, ids, 4).tolist() == [1, 2**31 - 1, 3, 2**31 - 1]
    f = ft.jit(lambda d: ops.segment_sum(d, ids, num_segments=3))
    assert f(mx.array([1.0, 2.0, 3.0])).tolist() == [1.0, 0.0, 5.0]
    got = ft.vmap(lambda d: ops.segment_sum(d, ids, num_segments=3))(mx.ones((2, 3)))
    assert got.tolist() == [[1.0, 0.0, 2.0]] * 2
    with pytest.raises(ft.ConcretizationError, match="segment_sum: .*pass num_segments"):
        ft.jit(lambda d: ops.segment_sum(d, ids))(mx.ones(3))
    with pytest.raises(ValueError, match="segment_sum: segment_ids of shape"):
        ops.segment_sum(mx.ones(4), ids, 3)
    with pytest.raises(NotImplementedError, match="unique"):
        ft.grad(lambda d: ops.segment_prod(d, ids, 3).sum())(mx.ones(3))
    g = ft.grad(lambda d: ops.segment_prod(d, mx.array([0, 2, 1]), 3,
                                           unique_indices=True).sum())(mx.array([2.0, 3.0, 4.0]))
    assert g.tolist() == [1.0, 1.0, 1.0]


def test_segment_max_ties_share_gradient():
    g = ft.grad(lambda d: ops.segment_max(d, mx.array([0, 0, 1]), 2).sum())(
        mx.array([2.0, 2.0, 1.0]))
    assert g.tolist() == [0.5, 0.5, 1.0]
