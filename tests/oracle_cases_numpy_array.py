"""JAX oracle cases for jax.numpy's array manipulation, indexing helpers, sets,
polynomials, statistics and creation from data (ftorch.numpy's ``_stacking``,
``_index_tricks``, ``_statistics``, ``_setops``, ``_polynomial`` modules and
``_creation``'s additions)."""

import numpy as np
from hypothesis import strategies as st
from oracle import Oracle, arrays

N = "jax.numpy."


def _stack_args(min_dims: int):
    def draw_args(d):
        shape = tuple(d(st.lists(st.integers(1, 3), min_size=min_dims, max_size=3)))
        k = d(st.integers(1, 3))
        return ([d(arrays(shape=shape)) for _ in range(k)],), {}
    return draw_args


def _matrix(d, min_dims=2):
    return d(arrays(min_dims=min_dims, max_dims=3))


STACKING = [
    Oracle(N + "append", lambda d: ((d(arrays()), d(arrays())), {})),
    Oracle(N + "append", lambda d: (
        (x := d(arrays(min_dims=1)), d(arrays(shape=x.shape))), {"axis": -1}), id="axis"),
    Oracle(N + "atleast_1d", lambda d: ((d(arrays(max_dims=2)),), {})),
    Oracle(N + "atleast_2d", lambda d: ((d(arrays(max_dims=3)), d(arrays(max_dims=1))), {})),
    Oracle(N + "atleast_3d", lambda d: ((d(arrays(max_dims=2)),), {})),
    Oracle(N + "atleast_3d", lambda d: ((d(arrays(max_dims=4)), d(arrays(max_dims=1))), {}),
           id="many"),
    Oracle(N + "block", lambda d: ((d(arrays(shape=(2, 2))), d(arrays(shape=(2, 1))),
                                   d(arrays(shape=(3,)))), {}),
           run=lambda L, fn, a, b, c: fn([[a, b], [c]])),
    Oracle(N + "block", lambda d: ((d(arrays(shape=(2,))), d(arrays(shape=(1,)))), {}),
           run=lambda L, fn, a, b: fn([a, b, a]), id="1d"),
    Oracle(N + "column_stack", _stack_args(1)),
    Oracle(N + "concat", lambda d: (
        ([d(arrays(shape=(2, 3))), d(arrays(shape=(1, 3)))],), {}), id="axis0"),
    Oracle(N + "concat", lambda d: (
        ([d(arrays(shape=(2, 3))), d(arrays(shape=(2, 1)))],), {"axis": 1})),
    Oracle(N + "dstack", _stack_args(0)),
    Oracle(N + "hstack", _stack_args(0)),
    Oracle(N + "vstack", _stack_args(0)),
    Oracle(N + "vstack", lambda d: ((d(arrays(shape=(3, 2))),), {"dtype": "int32"}),
           id="array_dtype"),
    Oracle(N + "unstack", lambda d: (
        (x := d(arrays(min_dims=1)),), {"axis": d(st.integers(-x.ndim, x.ndim - 1))})),
    Oracle(N + "fliplr", lambda d: ((_matrix(d),), {})),
    Oracle(N + "flipud", lambda d: ((d(arrays(min_dims=1)),), {})),
    Oracle(N + "rot90", lambda d: ((_matrix(d),), {"k": d(st.integers(-5, 5)),
                                                   "axes": d(st.sampled_from([(0, 1), (1, 0),
                                                                              (-1, 0)]))})),
    Oracle(N + "rollaxis", lambda d: (
        (x := d(arrays(min_dims=1)),), {"axis": d(st.integers(-x.ndim, x.ndim - 1)),
                                        "start": d(st.integers(-x.ndim, x.ndim))})),
    Oracle(N + "permute_dims", lambda d: (
        (x := d(arrays()),), {"axes": tuple(d(st.permutations(range(x.ndim))))})),
    Oracle(N + "matrix_transpose", lambda d: ((_matrix(d),), {})),
    Oracle(N + "resize", lambda d: ((d(arrays()),), {
        "new_shape": tuple(d(st.lists(st.integers(0, 4), max_size=3)))})),
    Oracle(N + "broadcast_shapes", lambda d: (((2, 1), (3,), (1, 1, 1)), {}), grad=False),
    Oracle(N + "copy", lambda d: ((d(arrays()),), {})),
]


def _ints(shape=None, lo=-3, hi=3, **kw):
    return arrays(shape=shape, dtype="int32", lo=lo, hi=hi, **kw)


def _coarse(shape):
    """Floats rounded to 1/1000: no subnormals (which XLA's CPU flushes to zero)."""
    return arrays(shape=shape).map(lambda a: np.round(a, 3))


def _mask(shape):
    return arrays(shape=shape, dtype="bool")


def _unique_indices(d, n, k):
    return np.array(d(st.lists(st.integers(0, n - 1), min_size=k, max_size=k, unique=True)),
                    np.int32)


INDEXING = [
    Oracle(N + "nonzero", lambda d: ((d(_ints(min_dims=1, lo=0, hi=2)),), {})),
    Oracle(N + "nonzero", lambda d: ((d(_ints(min_dims=1, lo=0, hi=2)),), {
        "size": d(st.integers(0, 6)), "fill_value": d(st.sampled_from([None, -1]))}),
        id="size"),
    Oracle(N + "flatnonzero", lambda d: ((d(arrays(lo=-1, hi=1).map(np.round)),), {
        "size": d(st.sampled_from([None, 3])), "fill_value": d(st.sampled_from([None, 7]))})),
    Oracle(N + "argwhere", lambda d: ((d(_ints(lo=0, hi=2)),), {
        "size": d(st.sampled_from([None, 0, 2, 5])), "fill_value": -1})),
    Oracle(N + "extract", lambda d: (
        (d(_mask((2, 3))), d(arrays(shape=(2, 3)))),
        {"size": d(st.sampled_from([None, 1, 6])), "fill_value": 9.0})),
    Oracle(N + "compress", lambda d: (
        (d(_mask((d(st.integers(1, 3)),))), d(arrays(shape=(3, 2)))),
        {"axis": d(st.sampled_from([None, 0, -2]))})),
    Oracle(N + "compress", lambda d: ((d(_mask((2,))), d(arrays(shape=(3, 2)))),
                                      {"axis": 1, "size": 2, "fill_value": 5.0}), id="size"),
    Oracle(N + "choose", lambda d: ((d(_ints((2, 3), 0, 2)), [d(arrays(shape=(3,))) for _ in
                                                              range(3)]), {})),
    Oracle(N + "choose", lambda d: ((d(_ints((4,), -5, 5)), [d(arrays(shape=(4,))) for _ in
                                                             range(2)]),
                                    {"mode": d(st.sampled_from(["wrap", "clip"]))}), id="mode"),
    Oracle(N + "select", lambda d: (
        ([d(_mask((3,))), d(_mask((2, 3)))], [d(arrays(shape=(3,))), d(arrays(shape=(2, 1)))]),
        {"default": d(st.sampled_from([0, 0.5]))})),
    Oracle(N + "piecewise", lambda d: ((d(arrays(shape=(5,))),), {}),
           run=lambda L, fn, x: fn(x, [x < 0, x > 1], [lambda v: v * v, 2.5, lambda v: -v])),
    Oracle(N + "piecewise", lambda d: ((d(arrays(shape=(2, 3))),), {}),
           run=lambda L, fn, x: fn(x, [x < 0], [L.numpy.sin]), id="default"),
    Oracle(N + "place", lambda d: (
        (d(arrays(shape=(2, 3))), d(_mask((2, 3))), d(arrays(min_dims=1, max_dims=1))),
        {"inplace": False})),
    Oracle(N + "put", lambda d: (
        (d(arrays(shape=(2, 3))), _unique_indices(d, 6, 3) - d(st.sampled_from([0, 6])),
         d(arrays(min_dims=1, max_dims=1))),
        {"inplace": False, "mode": d(st.sampled_from([None, "clip", "wrap"]))})),
    Oracle(N + "delete", lambda d: ((d(arrays(shape=(3, 4))), d(st.sampled_from(
        [1, -1, slice(1, None, 2), np.array([0, 2], np.int32)]))),
        {"axis": d(st.sampled_from([None, 0, 1]))})),
    Oracle(N + "delete", lambda d: ((d(arrays(shape=(5,))), _unique_indices(d, 5, 2)),
                                    {"assume_unique_indices": True}), id="unique"),
    Oracle(N + "insert", lambda d: ((d(arrays(shape=(2, 3))), d(st.integers(-2, 2)),
                                     d(arrays(shape=(2,)))), {"axis": 1})),
    Oracle(N + "insert", lambda d: ((d(arrays(shape=(4,))), np.array([1, -1, 1, 4], np.int32),
                                     d(arrays(shape=(1,)))), {}), id="many"),
    Oracle(N + "insert", lambda d: ((d(arrays(shape=(2, 3))), slice(0, 2),
                                     d(arrays(shape=(2, 1)))), {"axis": 0}), id="slice"),
    Oracle(N + "insert", lambda d: ((d(arrays(shape=(4,))), np.array(2, np.int32),
                                     d(arrays(shape=(2,)))), {}),
           run=lambda L, fn, a, i, v: L.jax.jit(fn)(a, i, v), id="traced"),
    Oracle(N + "diag_indices", lambda d: ((d(st.integers(0, 3)), d(st.integers(1, 3))), {})),
    Oracle(N + "diag_indices_from", lambda d: ((d(arrays(shape=(3, 3))),), {})),
    Oracle(N + "indices", lambda d: ((tuple(d(st.lists(st.integers(0, 3), max_size=3))),), {
        "sparse": d(st.booleans()), "dtype": d(st.sampled_from([None, "float32"]))})),
    Oracle(N + "ix_", lambda d: ((d(_ints((2,), 0, 3)), d(_ints((3,), 0, 3))), {})),
    Oracle(N + "mask_indices", lambda d: ((3,), {"k": d(st.integers(-1, 1))}),
           run=lambda L, fn, n, k: fn(n, L.numpy.triu, k)),
    Oracle(N + "ravel_multi_index", lambda d: (
        ((d(_ints((3,), -4, 4)), d(_ints((3,), -4, 4))), (2, 3)),
        {"mode": d(st.sampled_from(["wrap", "clip"])), "order": d(st.sampled_from("CF"))})),
    Oracle(N + "ravel_multi_index", lambda d: (((d(_ints((3,), 0, 1)), d(_ints((3,), 0, 2))),
                                                (2, 3)), {}), id="raise"),
    Oracle(N + "unravel_index", lambda d: ((d(_ints((5,), -9, 9)), (2, 3)), {})),
    Oracle(N + "r_", lambda d: ((d(arrays(shape=(2,))), d(arrays(shape=(3,)))), {}),
           run=lambda L, fn, a, b: fn[a, 0.5, b, 1:4]),
    Oracle(N + "r_", lambda d: ((d(arrays(shape=(2,))), d(arrays(shape=(2,)))), {}),
           run=lambda L, fn, a, b: fn["0,2,0", a, b], id="directive"),
    Oracle(N + "c_", lambda d: ((d(arrays(shape=(2,))), d(arrays(shape=(2, 2)))), {}),
           run=lambda L, fn, a, b: fn[a, b, 0:2]),
    Oracle(N + "mgrid", lambda d: ((), {}), run=lambda L, fn: fn[0:3, -1:1:5j], grad=False),
    Oracle(N + "mgrid", lambda d: ((), {}), run=lambda L, fn: fn[0:2:0.5], grad=False,
           id="1d"),
    Oracle(N + "ogrid", lambda d: ((), {}), run=lambda L, fn: fn[0:3, 1:2:3j], grad=False),
    Oracle(N + "fromfunction", lambda d: ((), {}),
           run=lambda L, fn: fn(lambda i, j: i * 3 + j ** 2, (2, 3))),
    Oracle(N + "fromfunction", lambda d: ((), {}),
           run=lambda L, fn: fn(lambda i: i, (4,), dtype=int), id="int"),
    Oracle(N + "take", lambda d: ((d(arrays(shape=(3, 4))), d(_ints((2, 2), -4, 4))),
                                  {"axis": 1, "mode": d(st.sampled_from(["clip", "wrap"]))})),
    Oracle(N + "take", lambda d: ((d(arrays(shape=(3, 4))), d(_ints((5,), -12, 12))),
                                  {"mode": "fill", "fill_value": -1.0}), id="fill"),
    Oracle(N + "apply_along_axis", lambda d: ((x := d(arrays(min_dims=1)),), {
        "axis": d(st.integers(-x.ndim, x.ndim - 1))}),
        run=lambda L, fn, x, axis: fn(lambda v: L.numpy.stack([L.numpy.sum(v), v[0] * v[-1]]),
                                      axis, x)),
    Oracle(N + "apply_over_axes", lambda d: ((d(arrays(shape=(2, 3, 4))),), {}),
           run=lambda L, fn, x: fn(L.numpy.sum, x, [0, 2])),
    Oracle(N + "vectorize", lambda d: ((d(arrays(shape=(3, 2))), d(arrays(shape=(2,)))), {}),
           run=lambda L, fn, x, y: fn(lambda a, b: L.numpy.sum(a * b) ** 2,
                                      signature="(n),(n)->()")(x, y)),
    Oracle(N + "vectorize", lambda d: ((d(arrays(shape=(3, 1))), d(arrays(shape=(4,)))), {}),
           run=lambda L, fn, x, y: fn(lambda a, b, c: a * c + b, excluded={2})(x, y, 2.0),
           id="scalar"),
    Oracle(N + "vectorize", lambda d: ((d(arrays(shape=(2, 3))),), {}),
           run=lambda L, fn, x: fn(lambda v: (v * 2, L.numpy.sum(v)),
                                   signature="(n)->(n),()")(x), id="two_outputs"),
]


def _axis_of(d, x):
    return d(st.integers(-x.ndim, x.ndim - 1))


def _vec(d, **kw):
    return d(arrays(shape=(d(st.integers(1, 5)),), **kw))


STATISTICS = [
    Oracle(N + "average", lambda d: ((d(arrays(min_dims=1)),), {
        "axis": d(st.sampled_from([None, -1, 0])), "returned": d(st.booleans()),
        "keepdims": d(st.booleans())})),
    Oracle(N + "average", lambda d: ((d(arrays(shape=(2, 3))),), {
        "axis": 1, "weights": d(arrays(shape=(3,), lo=0.5, hi=2)), "returned": True}),
        id="weights1d"),
    Oracle(N + "average", lambda d: ((d(arrays(shape=(2, 3))),), {
        "axis": d(st.sampled_from([None, 0, (0, 1)])),
        "weights": d(arrays(shape=(2, 3), lo=0.5, hi=2))}), id="weights"),
    Oracle(N + "cov", lambda d: ((d(arrays(shape=(d(st.integers(1, 3)), 4))),), {
        "rowvar": d(st.booleans()), "bias": d(st.booleans()),
        "ddof": d(st.sampled_from([None, 0, 2]))}), rtol=1e-4, atol=1e-4),
    Oracle(N + "cov", lambda d: ((d(arrays(shape=(4,))), d(arrays(shape=(4,)))), {
        "fweights": d(_ints((4,), 1, 3)), "aweights": d(arrays(shape=(4,), lo=0.5, hi=2))}),
        id="weights", rtol=1e-4, atol=1e-4),
    Oracle(N + "corrcoef", lambda d: ((d(arrays(shape=(3, 5), lo=-3, hi=3)),), {
        "rowvar": d(st.booleans())}), grad=False, rtol=1e-4, atol=1e-4),
    Oracle(N + "corrcoef", lambda d: ((np.array([1.0, 2.5, -1.0, 0.5], np.float32),
                                       np.array([0.5, -2.0, 1.0, 3.0], np.float32)), {}),
           id="grad", rtol=1e-4, atol=1e-4),
    Oracle(N + "count_nonzero", lambda d: ((d(_ints(lo=-1, hi=1)),), {
        "axis": d(st.sampled_from([None, 0])), "keepdims": d(st.booleans())})),
    Oracle(N + "ptp", lambda d: ((d(arrays(min_dims=1)),), {
        "axis": d(st.sampled_from([None, 0, -1])), "keepdims": d(st.booleans())})),
    Oracle(N + "cumulative_sum", lambda d: ((x := d(arrays(min_dims=1)),), {
        "axis": _axis_of(d, x), "include_initial": d(st.booleans())})),
    Oracle(N + "cumulative_sum", lambda d: ((d(_ints((4,))),), {"include_initial": True}),
           id="int1d"),
    Oracle(N + "cumulative_prod", lambda d: ((x := d(arrays(min_dims=1, lo=-2, hi=2)),), {
        "axis": _axis_of(d, x), "include_initial": d(st.booleans())}), rtol=1e-4),
    Oracle(N + "diff", lambda d: ((x := d(arrays(min_dims=1, max_side=5)),), {
        "n": d(st.integers(0, 3)), "axis": _axis_of(d, x)})),
    Oracle(N + "diff", lambda d: ((d(arrays(shape=(2, 3))),), {
        "prepend": d(st.sampled_from([None, 1.5])), "append": d(arrays(shape=(2, 2)))}),
        id="ends"),
    Oracle(N + "ediff1d", lambda d: ((d(arrays()),), {
        "to_begin": d(st.sampled_from([None, 2.0])), "to_end": d(arrays(max_dims=1))})),
    Oracle(N + "gradient", lambda d: ((d(arrays(min_dims=1, min_side=2)),), {})),
    Oracle(N + "gradient", lambda d: ((d(arrays(shape=(3, 4))), 0.5,
                                       np.array([0.0, 1.0, 1.5, 3.0], np.float32)), {}),
           id="coordinates", rtol=1e-4, atol=1e-4),
    Oracle(N + "gradient", lambda d: ((d(arrays(shape=(3, 4))), 2.0), {"axis": 1}),
           id="axis"),
    Oracle(N + "trapezoid", lambda d: ((x := d(arrays(min_dims=1)),), {
        "dx": d(st.sampled_from([1.0, 0.5])), "axis": _axis_of(d, x)})),
    Oracle(N + "trapezoid", lambda d: ((d(arrays(shape=(2, 4))), d(arrays(shape=(4,)))),
                                       {}), id="x"),
    Oracle(N + "interp", lambda d: ((d(arrays(shape=(6,), lo=-1, hi=4)),
                                     np.array([0.0, 1.0, 1.5, 3.0], np.float32),
                                     d(arrays(shape=(4,)))),
                                    # JAX 0.10 applies left beside right="extrapolate"
                                    dict(zip(("left", "right"), d(st.sampled_from([
                                        (None, None), (-9.0, 9.0), ("extrapolate", 9.0),
                                        ("extrapolate", "extrapolate")]))))),
           rtol=1e-4, atol=1e-4),
    Oracle(N + "interp", lambda d: ((d(arrays(shape=(5,), lo=-4, hi=8)),
                                     np.array([2.0, 0.5, 3.5], np.float32),
                                     d(arrays(shape=(3,)))), {"period": 4.0}),
           id="period", rtol=1e-4, atol=1e-4),
    Oracle(N + "histogramdd", lambda d: ((d(_coarse((6, 2))),), {
        "bins": d(st.sampled_from([2, [3, 2]])),
        "density": d(st.sampled_from([None, True]))}), grad=False, rtol=1e-4),
    Oracle(N + "histogramdd", lambda d: ((d(_coarse((5, 3))),), {
        "bins": 2, "range": [(-1, 1), None, (0, 3)],
        "weights": d(arrays(shape=(5,)))}), grad=False, id="weights", rtol=1e-4),
    Oracle(N + "histogram2d", lambda d: ((d(_coarse((6,))), d(_coarse((6,)))), {
        "bins": d(st.sampled_from([3, [2, 3], np.array([-3.0, 0.0, 3.0], np.float32)]))}),
        grad=False, rtol=1e-4),
    Oracle(N + "convolve", lambda d: ((_vec(d), _vec(d)), {
        "mode": d(st.sampled_from(["full", "same", "valid"]))}), rtol=1e-4, atol=1e-4),
    Oracle(N + "correlate", lambda d: ((_vec(d), _vec(d)), {
        "mode": d(st.sampled_from(["full", "same", "valid"]))}), rtol=1e-4, atol=1e-4),
    Oracle(N + "correlate", lambda d: ((d(_ints((4,))), d(_ints((2,)))), {}), id="int"),
    Oracle(N + "kron", lambda d: ((d(arrays(max_dims=2)), d(arrays(max_dims=3))), {})),
    Oracle(N + "vander", lambda d: ((_vec(d, lo=0.5, hi=2),), {
        "N": d(st.sampled_from([None, 0, 3])), "increasing": d(st.booleans())}), rtol=1e-4),
    Oracle(N + "matvec", lambda d: ((d(arrays(shape=(2, 3, 4))), d(arrays(shape=(4,)))), {})),
    Oracle(N + "vecmat", lambda d: ((d(arrays(shape=(3,))), d(arrays(shape=(2, 3, 4)))), {})),
    Oracle(N + "vecdot", lambda d: ((d(arrays(shape=(2, 3))), d(arrays(shape=(4, 1, 3)))), {})),
    Oracle(N + "vecdot", lambda d: ((d(arrays(shape=(3, 2))), d(arrays(shape=(3, 1)))),
                                    {"axis": 0}), id="axis"),
    Oracle(N + "unwrap", lambda d: ((x := d(arrays(min_dims=1, lo=-10, hi=10)),), {
        "axis": _axis_of(d, x), "discont": d(st.sampled_from([None, 4.0]))}), rtol=1e-4,
        atol=1e-4),
    Oracle(N + "unwrap", lambda d: ((d(arrays(shape=(6,), lo=-10, hi=10)),), {
        "period": 5.0}), id="period", rtol=1e-4, atol=1e-4),
    Oracle(N + "einsum_path", lambda d: (("ij,jk,kl->il", np.ones((2, 3), np.float32),
                                          np.ones((3, 4), np.float32),
                                          np.ones((4, 5), np.float32)), {}),
           run=lambda L, fn, *a: fn(*a)[0], grad=False),
]


def _set_args(d):
    return d(_ints(min_dims=1, max_dims=2, lo=-3, hi=3)), d(_ints(min_dims=1, lo=-3, hi=3))


SETS = [
    Oracle(N + "isin", lambda d: (_set_args(d), {"invert": d(st.booleans())})),
    Oracle(N + "isin", lambda d: ((d(arrays(shape=(4,))), d(arrays(shape=(3,)))), {}),
           id="float"),
    Oracle(N + "intersect1d", lambda d: (_set_args(d), {"return_indices": d(st.booleans())})),
    Oracle(N + "intersect1d", lambda d: (_set_args(d), {
        "return_indices": True, "size": 3, "fill_value": d(st.sampled_from([None, -9]))}),
        id="size"),
    Oracle(N + "setdiff1d", lambda d: (_set_args(d), {})),
    Oracle(N + "setdiff1d", lambda d: (_set_args(d), {
        "size": 4, "fill_value": d(st.sampled_from([None, -9]))}), id="size"),
    Oracle(N + "setxor1d", lambda d: (_set_args(d), {})),
    Oracle(N + "setxor1d", lambda d: (_set_args(d), {
        "size": 5, "fill_value": d(st.sampled_from([None, -9]))}), id="size"),
    Oracle(N + "union1d", lambda d: (_set_args(d), {})),
    Oracle(N + "union1d", lambda d: ((d(_coarse((5,))), d(_coarse((2,)))), {
        "size": 9, "fill_value": d(st.sampled_from([None, -9.0]))}), id="size"),
    Oracle(N + "union1d", lambda d: (_set_args(d), {}),
           run=lambda L, fn, a, b: L.jax.jit(lambda a, b: fn(a, b, size=8))(a, b), id="jit"),
    Oracle(N + "trim_zeros", lambda d: ((d(_ints(min_dims=1, lo=0, hi=1)),), {
        "trim": d(st.sampled_from(["f", "b", "fb"]))})),
    Oracle(N + "trim_zeros", lambda d: ((d(_ints((3, 4), lo=0, hi=1)),), {
        "axis": d(st.sampled_from([None, 0, -1]))}), id="axis"),
    Oracle(N + "sort_complex", lambda d: ((d(_coarse((5,)).map(lambda a: np.round(a))),), {}),
           grad=False),
    Oracle(N + "sort_complex", lambda d: ((d(arrays(shape=(2, 4), dtype="complex64")
                                           .map(np.round)),), {}), grad=False, id="complex"),
]


POLYNOMIALS = [
    Oracle(N + "poly", lambda d: ((_vec(d),), {}), rtol=1e-4, atol=1e-4),
    Oracle(N + "poly", lambda d: ((np.array([[1.0, 2.0], [0.5, 3.0]], np.float32),), {}),
           grad=False, id="matrix", rtol=1e-4, atol=1e-4, batch=False),  # eager: eig
    Oracle(N + "polyadd", lambda d: ((_vec(d), _vec(d)), {})),
    Oracle(N + "polysub", lambda d: ((_vec(d), d(_ints((2,)))), {})),
    Oracle(N + "polymul", lambda d: ((_vec(d), _vec(d)), {}), rtol=1e-4, atol=1e-4),
    Oracle(N + "polymul", lambda d: ((np.array([0.0, 0.0, 1.0, 2.0], np.float32), _vec(d, lo=0.5)),
                                     {"trim_leading_zeros": True}), id="trim", rtol=1e-4,
           atol=1e-4, batch=False),  # trimming reads the values
    Oracle(N + "polydiv", lambda d: ((_vec(d), _vec(d, lo=0.5, hi=2)), {}), rtol=1e-3,
           atol=1e-3),
    Oracle(N + "polyder", lambda d: ((_vec(d),), {"m": d(st.integers(0, 3))})),
    Oracle(N + "polyder", lambda d: ((d(_ints((4,))),), {}), id="int"),
    Oracle(N + "polyint", lambda d: ((_vec(d),), {"m": d(st.integers(0, 3))})),
    Oracle(N + "polyint", lambda d: ((_vec(d),), {"m": 2, "k": d(arrays(shape=(2,)))}),
           id="k"),
    Oracle(N + "polyval", lambda d: ((_vec(d), d(arrays())), {}), rtol=1e-4, atol=1e-4),
    Oracle(N + "polyval", lambda d: ((d(_ints((3,))), d(_ints((2, 2)))), {}), id="int"),
    Oracle(N + "polyfit", lambda d: ((np.linspace(-0.9, 2, 7, dtype=np.float32),
                                      d(arrays(shape=(7,))), d(st.integers(0, 3))), {}),
           rtol=1e-3, atol=1e-3),
    Oracle(N + "polyfit", lambda d: ((np.linspace(-0.9, 2, 7, dtype=np.float32),
                                      d(arrays(shape=(7, 2))), 2), {
        "w": d(arrays(shape=(7,), lo=0.5, hi=2)), "cov": True}), grad=False, rtol=1e-3,
        atol=1e-3, id="cov"),
    Oracle(N + "polyfit", lambda d: ((np.linspace(-0.9, 2, 7, dtype=np.float32),
                                      d(arrays(shape=(7,))), 2), {"full": True}),
           grad=False, rtol=1e-3, atol=1e-3, id="full"),
    # Eigenvalues come in an order of each library's own; compare them sorted.
    Oracle(N + "roots", lambda d: ((np.array([0.0, 1.0, -3.0, 2.0, 0.0], np.float32),), {}),
           run=lambda L, fn, p: L.numpy.sort_complex(fn(p)), grad=False, rtol=1e-4,
           atol=1e-4),
    Oracle(N + "roots", lambda d: ((d(arrays(shape=(4,), lo=0.5, hi=3)),), {}),
           run=lambda L, fn, p: L.numpy.sort_complex(fn(p)), grad=False, rtol=1e-3,
           atol=1e-3, id="drawn"),
]

CREATION = [
    Oracle(N + "logspace", lambda d: ((d(st.floats(-2, 2, width=32)),
                                       d(st.floats(-2, 2, width=32))),
                                      {"num": d(st.integers(0, 6)), "endpoint": d(st.booleans()),
                                       "base": d(st.sampled_from([10.0, 2.0]))}),
           rtol=1e-4, grad=False),
    Oracle(N + "logspace", lambda d: ((d(arrays(shape=(2,), lo=-1, hi=1)),
                                       d(arrays(shape=(3, 1), lo=-1, hi=1))),
                                      {"num": 4, "axis": d(st.integers(-3, 2))}),
           rtol=1e-4, atol=1e-4, id="arrays"),
    Oracle(N + "logspace", lambda d: ((0, 3), {"num": 4, "base": 2.0, "dtype": "int32"}),
           id="int"),
    Oracle(N + "geomspace", lambda d: (d(st.sampled_from([(1.0, 1000.0), (-2.0, -3.0),
                                                          (0.5, 7.0), (1.0, -3.0)])),
                                       {"num": d(st.integers(1, 6)),
                                        "endpoint": d(st.booleans())}),
           rtol=1e-4, grad=False),
    Oracle(N + "geomspace", lambda d: ((d(arrays(shape=(2,), lo=0.5, hi=3)),
                                        d(arrays(shape=(2,), lo=0.5, hi=3))),
                                       {"num": 3, "axis": -1}),
           rtol=1e-4, atol=1e-4, id="arrays"),
    Oracle(N + "frombuffer", lambda d: ((np.arange(6, dtype=np.float32).tobytes(),),
                                        {"dtype": "float32", "count": d(st.integers(-1, 5)),
                                         "offset": 4 * d(st.integers(0, 1))}), grad=False),
    Oracle(N + "frombuffer", lambda d: ((bytes(range(8)),), {"dtype": "uint8"}), grad=False,
           id="bytes"),
    Oracle(N + "fromstring", lambda d: (("1 2.5 -3",), {"sep": " "}), grad=False),
    Oracle(N + "fromstring", lambda d: (("1,2,3",), {"dtype": int, "sep": ","}), grad=False,
           id="int"),
    Oracle(N + "from_dlpack", lambda d: ((d(arrays()),), {}), grad=False,
           run=lambda L, fn, x: fn(np.array(x))),
]

ORACLE = [*STACKING, *INDEXING, *STATISTICS, *SETS, *POLYNOMIALS, *CREATION]

UNCHECKED: dict[str, str] = {
    N + "fromiter": "jax.numpy.fromiter raises NotImplementedError (impure under jit); "
                    "ftorch's runs eagerly: its doctest checks it",
    N + "s_": "NumPy's own numpy.s_ object, re-exported unchanged",
    N + "index_exp": "NumPy's own numpy.index_exp object, re-exported unchanged",
}
