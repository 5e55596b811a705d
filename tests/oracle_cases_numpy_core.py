"""Oracle cases for the ``jax.numpy``, ``jax.numpy.linalg`` and ``jax.numpy.fft`` names
ftorch has had from the start: elementwise functions, reductions, shapes, indexing,
sorting, creation, linear algebra and FFTs (tests/oracle.py)."""

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from oracle import Oracle, arrays


def shape(d, min_dims=0, max_dims=3, min_side=1, max_side=4):
    return d(hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side,
                              max_side=max_side))


def axis_of(d, ndim, none=True):
    """An axis of an ``ndim``-array (negative ones too), or None."""
    choices = st.integers(-ndim, ndim - 1) if ndim else st.nothing()
    return d(st.none() | choices if none else choices)


def unary(name, lo=-3.0, hi=3.0, dtype="float32", grad=True, draws=None,
          module="jax.numpy", **kw):
    """A one-argument function on arrays of any shape drawn by ``draws`` (by default with
    entries in ``[lo, hi]``)."""
    draws = draws if draws is not None else arrays(dtype=dtype, lo=lo, hi=hi)
    return Oracle(f"{module}.{name}", lambda d: ((d(draws),), {}), grad=grad, **kw)


def binary(name, lo=-3.0, hi=3.0, lo2=None, hi2=None, dtype="float32", grad=True, **kw):
    def args(d):
        s1, s2 = d(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3)).input_shapes
        x = d(arrays(s1, dtype, lo=lo, hi=hi))
        y = d(arrays(s2, dtype, lo=lo if lo2 is None else lo2, hi=hi if hi2 is None else hi2))
        return (x, y), {}
    return Oracle(f"jax.numpy.{name}", args, grad=grad, **kw)


def reduction(name, grad=True, keepdims=True, lo=-3.0, hi=3.0, distinct=False, min_side=1,
              **kw):
    def args(d):
        x = d(arrays(shape=shape(d, min_side=min_side), lo=lo, hi=hi))
        if distinct:  # no ties: the derivative of max/median/sort is then unambiguous
            x = (np.argsort(np.argsort(x, axis=None)).reshape(x.shape) * 0.37
                 - 1.0).astype(np.float32)
        kwargs = {"axis": axis_of(d, x.ndim)}
        if keepdims:
            kwargs["keepdims"] = d(st.booleans())
        return (x,), kwargs
    return Oracle(f"jax.numpy.{name}", args, grad=grad, **kw)


def _away_from_zero(x, margin=0.2):
    return np.where(np.abs(x) < margin, np.where(x < 0, -margin, margin), x).astype(x.dtype)


def _nz(lo=-3.0, hi=3.0):
    return arrays(lo=lo, hi=hi).map(_away_from_zero)


def _off_half_integers():
    """Values a third of the way between integers: away from round's ties and the kinks."""
    return arrays().map(lambda x: (np.round(x) + 0.3).astype(np.float32))


UNARY_SMOOTH = ["sin", "cos", "tan", "sinh", "cosh", "tanh", "exp", "expm1", "negative",
                "square", "arctan", "arcsinh", "conjugate", "conj", "real", "ravel", "sinc"]
UNARY_INT_VALUED = ["ceil", "floor", "round", "sign"]  # derivative 0 almost everywhere

ORACLE = [
    *[unary(n) for n in UNARY_SMOOTH],
    *[unary(n, draws=_off_half_integers()) for n in UNARY_INT_VALUED],
    unary("abs", draws=_nz()),
    unary("log", lo=0.1, hi=5.0), unary("log2", lo=0.1, hi=5.0),
    unary("log10", lo=0.1, hi=5.0), unary("log1p", lo=-0.9, hi=5.0),
    unary("sqrt", lo=0.1, hi=5.0),
    unary("reciprocal", draws=_nz()),
    unary("arcsin", lo=-0.9, hi=0.9), unary("arccos", lo=-0.9, hi=0.9),
    unary("arctanh", lo=-0.9, hi=0.9),
    unary("arccosh", lo=1.1, hi=5.0),
    unary("isfinite", grad=False), unary("isinf", grad=False),
    unary("isnan", grad=False), unary("isreal", grad=False),
    unary("iscomplex", grad=False),
    unary("imag"), unary("angle", dtype="complex64", grad=False),
    unary("invert", dtype="int32", lo=-50, hi=50),
    unary("logical_not", dtype="bool"),
    *[binary(n) for n in ["add", "subtract", "multiply", "arctan2", "logaddexp"]],
    *[binary(n) for n in ["maximum", "minimum"]],
    binary("divide", lo2=0.5, hi2=3.0), binary("true_divide", lo2=0.5, hi2=3.0),
    binary("power", lo=0.5, hi=3.0, lo2=-2.0, hi2=2.0),
    binary("mod", lo2=0.5, hi2=3.0, grad=False), binary("remainder", lo2=0.5, hi2=3.0, grad=False),
    binary("floor_divide", lo2=0.5, hi2=3.0, grad=False),
    *[binary(n, grad=False) for n in ["equal", "not_equal", "less", "less_equal", "greater",
                                       "greater_equal"]],
    *[binary(n, dtype="bool") for n in ["logical_and", "logical_or", "logical_xor"]],
    *[binary(n, dtype="int32", lo=-50, hi=50) for n in ["bitwise_and", "bitwise_or",
                                                         "bitwise_xor"]],
    *[reduction(n) for n in ["sum", "mean", "prod", "nansum", "nanmean", "nanprod"]],
    *[reduction(n, distinct=True) for n in ["max", "min", "amax", "amin", "nanmax", "nanmin"]],
    *[reduction(n, grad=False) for n in ["all", "any"]],
    *[reduction(n, keepdims=False, grad=False, dtypes=False, distinct=True)
      for n in ["argmax", "argmin", "nanargmax", "nanargmin"]],
    # Over two or more distinct values: at a zero deviation the gradients differ on purpose.
    *[reduction(n, distinct=True, min_side=2) for n in ["std", "var", "nanstd", "nanvar"]],
    reduction("median", distinct=True), reduction("nanmedian", distinct=True),
]


def with_axis(name, min_dims=1, grad=True, none=False, extra=None, draws=None, **kw):
    """A function of one array and an ``axis`` (and more keywords drawn by ``extra``)."""
    def args(d):
        x = d(draws if draws is not None else arrays(shape=shape(d, min_dims=min_dims)))
        kwargs = {"axis": axis_of(d, x.ndim, none=none)}
        if extra is not None:
            kwargs.update(extra(d, x))
        return (x,), kwargs
    return Oracle(f"jax.numpy.{name}", args, grad=grad, **kw)


def _distinct(x):
    """``x``'s entries replaced by distinct values in the same order (no ties to sort)."""
    return (np.argsort(np.argsort(x, axis=None, kind="stable")).reshape(x.shape) * 0.37
            - 1.0).astype(np.float32)


def distinct_arrays(min_dims=1, max_dims=3):
    return arrays(min_dims=min_dims, max_dims=max_dims).map(_distinct)


def _matmul_args(d):
    n, k, m = (d(st.integers(1, 4)) for _ in range(3))
    batch = shape(d, max_dims=2)
    return (d(arrays((*batch, n, k))), d(arrays((k, m)))), {}


def _split_args(d, name, min_dims):
    x = d(arrays(shape=shape(d, min_dims=min_dims)))
    axis = {"hsplit": 1 if x.ndim > 1 else 0, "vsplit": 0, "dsplit": 2}.get(name)
    size = x.shape[axis if axis is not None else 0]
    divisors = [k for k in range(1, size + 1) if size % k == 0]
    return (x, d(st.sampled_from(divisors))), {}


def _pad_args(d):
    x = d(arrays(shape=shape(d, min_dims=1)))
    widths = [(d(st.integers(0, 2)), d(st.integers(0, 2))) for _ in range(x.ndim)]
    mode = d(st.sampled_from(["constant", "edge", "reflect", "symmetric", "wrap"]))
    return (x, widths), {"mode": mode}


def _take_along_args(d):
    x = d(arrays(shape=shape(d, min_dims=1)))
    axis = axis_of(d, x.ndim, none=False)
    idx_shape = list(x.shape)
    idx_shape[axis] = d(st.integers(1, 4))
    idx = d(arrays(tuple(idx_shape), "int32", lo=0, hi=x.shape[axis] - 1))
    return (x, idx), {"axis": axis}


def _quantile_args(d):
    x = d(distinct_arrays())
    q = d(arrays(shape=(d(st.integers(1, 3)),), lo=0.05, hi=0.95))
    method = d(st.sampled_from(["linear", "lower", "higher", "midpoint", "nearest"]))
    return (x, q), {"axis": axis_of(d, x.ndim), "method": method}


def _percentile_args(d):
    (x, q), kw = _quantile_args(d)
    return (x, (q * 100).astype(np.float32)), kw


def _arg(d, min_dims=1, max_dims=3):
    return d(arrays(shape=shape(d, min_dims=min_dims, max_dims=max_dims)))


def _moveaxis_args(d):
    x = _arg(d)
    return (x, axis_of(d, x.ndim, none=False), axis_of(d, x.ndim, none=False)), {}


def _swapaxes_args(d):
    (x, a, b), _ = _moveaxis_args(d)
    return (x, a, b), {}


def _transpose_args(d):
    x = _arg(d, min_dims=0)
    return (x, tuple(int(i) for i in d(st.permutations(range(x.ndim))))), {}


def _reshape_args(d):
    x = _arg(d, min_dims=0)
    return (x, (-1,) if d(st.booleans()) else (*x.shape[::-1],)), {}


def _expand_dims_args(d):
    x = _arg(d, min_dims=0)
    return (x, d(st.integers(-x.ndim - 1, x.ndim))), {}


def _concat_args(d, same_shape=False):
    x = _arg(d)
    axis = axis_of(d, x.ndim, none=False)
    parts = [x]
    for _ in range(d(st.integers(0, 2))):
        s = list(x.shape)
        if not same_shape:
            s[axis] = d(st.integers(1, 3))
        parts.append(d(arrays(tuple(s))))
    return (parts,), {"axis": axis}


def _stack_args(d):
    x = _arg(d, min_dims=0)
    parts = [x] + [d(arrays(x.shape)) for _ in range(d(st.integers(0, 2)))]
    return (parts,), {"axis": d(st.integers(-x.ndim - 1, x.ndim))}


def _tile_args(d):
    x = _arg(d, min_dims=0)
    return (x, tuple(d(st.integers(1, 3)) for _ in range(d(st.integers(1, 3))))), {}


def _repeat_args(d):
    x = _arg(d)
    return (x, d(st.integers(1, 3))), {"axis": axis_of(d, x.ndim)}


def _roll_args(d):
    x = _arg(d)
    return (x, d(st.integers(-5, 5))), {"axis": axis_of(d, x.ndim)}


def _broadcast_to_args(d):
    x = _arg(d, min_dims=0)
    return (x, (*shape(d, max_dims=2), *x.shape)), {}


def _clip_args(d):
    x = _arg(d, min_dims=0)
    return (x,), {"min": -1.0, "max": 1.5}


def _where_args(d):
    s = d(hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=3)).input_shapes
    return (d(arrays(s[0], "bool")), d(arrays(s[1])), d(arrays(s[2]))), {}


def _take_args(d):
    x = _arg(d)
    axis = axis_of(d, x.ndim)
    size = x.size if axis is None else x.shape[axis]
    return (x, d(arrays(shape(d, max_dims=2), "int32", lo=0, hi=size - 1))), {"axis": axis}


def _put_along_args(d):
    (x, idx), kw = _take_along_args(d)
    idx = np.argsort(d(arrays(idx.shape)), axis=kw["axis"])[..., :]  # distinct per slice
    idx = np.take(idx, np.arange(min(idx.shape[kw["axis"]], x.shape[kw["axis"]])),
                  axis=kw["axis"]).astype(np.int32)
    values = d(arrays(idx.shape))
    return (x, idx, values), {"axis": kw["axis"], "inplace": False}


def _searchsorted_args(d):
    a = np.sort(d(arrays((d(st.integers(1, 6)),))))
    return (a, d(arrays(shape(d)))), {"side": d(st.sampled_from(["left", "right"]))}


def _matrix(d, n=None, m=None):
    n = n or d(st.integers(1, 4))
    return d(arrays((n, m or d(st.integers(1, 4)))))


def _spd(d, batch=()):
    n = d(st.integers(1, 4))
    a = d(arrays((*batch, n, n)))
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n, dtype=np.float32)).astype(np.float32)


def _well_conditioned(d, batch=()):
    n = d(st.integers(1, 4))
    a = d(arrays((*batch, n, n), lo=-1.0, hi=1.0))
    return (a + (n + 1) * np.eye(n, dtype=np.float32)).astype(np.float32)


def _einsum_args(d):
    spec = d(st.sampled_from(["ij,jk->ik", "ij->ji", "ii->i", "bij,bjk->bik", "i,i->",
                              "ij,j->i", "ijk->k"]))
    sizes = {c: d(st.integers(1, 4)) for c in "bijk"}
    if spec == "ii->i":
        sizes["j"] = sizes["i"]
    inputs = spec.split("->")[0].split(",")
    arrays_ = [d(arrays(tuple(sizes[c] if spec != "ii->i" else sizes["i"] for c in term)))
               for term in inputs]
    return (spec, *arrays_), {}


def _fft_args(d, real=False, n_axes=1):
    dtype = "float32" if real else "complex64"
    x = d(arrays(shape=shape(d, min_dims=n_axes), dtype=dtype))
    return (x,), {}


def _int_hist_args(d):
    return (d(arrays(shape(d, min_dims=1, max_dims=1), "int32", lo=0, hi=6)),), {}


def _digitize_args(d):
    bins = np.unique(d(arrays((d(st.integers(1, 5)),))))
    return (d(arrays(shape(d))), bins), {}


def _histogram_args(d):
    return (d(arrays(shape(d, min_dims=1, max_dims=1))),), {"bins": d(st.integers(1, 6))}


def _unique_args(d):
    return (d(arrays(shape(d, min_dims=1, max_dims=1), "int32", lo=0, hi=4)),), {}


def _unique_values_args(d):
    return (np.sort(d(arrays(shape(d, min_dims=1, max_dims=1), "int32", lo=0, hi=4))),), {}


def _lexsort_args(d):
    n = d(st.integers(1, 6))
    return (tuple(d(arrays((n,), "int32", lo=0, hi=2)) for _ in range(2)),), {}


def _partition_args(d):
    x = d(distinct_arrays())
    return (x, d(st.integers(0, x.shape[-1] - 1))), {}


def _indices_of_n(d):
    n = d(st.integers(1, 5))
    return (n,), {"k": d(st.integers(-n, n))}


def _creation(name, args, **kw):
    return Oracle(f"jax.numpy.{name}", args, grad=False, **kw)


ORACLE += [
    with_axis("cumsum"), with_axis("cumprod"), with_axis("nancumsum"), with_axis("nancumprod"),
    with_axis("sort", draws=distinct_arrays()),
    with_axis("argsort", grad=False, draws=distinct_arrays()),
    with_axis("flip", none=True),
    Oracle("jax.numpy.squeeze", lambda d: ((d(arrays((1, 3, 1))),),
                                           {"axis": d(st.sampled_from([None, 0, 2, -1]))})),
    Oracle("jax.numpy.moveaxis", _moveaxis_args), Oracle("jax.numpy.swapaxes", _swapaxes_args),
    Oracle("jax.numpy.transpose", _transpose_args), Oracle("jax.numpy.reshape", _reshape_args),
    Oracle("jax.numpy.expand_dims", _expand_dims_args),
    Oracle("jax.numpy.concatenate", _concat_args), Oracle("jax.numpy.stack", _stack_args),
    Oracle("jax.numpy.tile", _tile_args), Oracle("jax.numpy.repeat", _repeat_args),
    Oracle("jax.numpy.roll", _roll_args), Oracle("jax.numpy.broadcast_to", _broadcast_to_args),
    Oracle("jax.numpy.broadcast_arrays", lambda d: (tuple(
        d(arrays(s)) for s in d(hnp.mutually_broadcastable_shapes(num_shapes=2)).input_shapes),
        {})),
    Oracle("jax.numpy.clip", _clip_args), Oracle("jax.numpy.where", _where_args),
    Oracle("jax.numpy.take", _take_args),
    Oracle("jax.numpy.take_along_axis", _take_along_args),
    Oracle("jax.numpy.put_along_axis", _put_along_args),
    Oracle("jax.numpy.searchsorted", _searchsorted_args, grad=False),
    Oracle("jax.numpy.pad", _pad_args),
    Oracle("jax.numpy.quantile", _quantile_args), Oracle("jax.numpy.nanquantile", _quantile_args),
    Oracle("jax.numpy.percentile", _percentile_args),
    Oracle("jax.numpy.nanpercentile", _percentile_args),
    Oracle("jax.numpy.partition", _partition_args),
    Oracle("jax.numpy.argpartition", _partition_args, grad=False, values=False),
    Oracle("jax.numpy.lexsort", _lexsort_args, grad=False),
    Oracle("jax.numpy.matmul", _matmul_args),
    Oracle("jax.numpy.dot", lambda d: ((_matrix(d, m=3), _matrix(d, n=3)), {})),
    Oracle("jax.numpy.vdot", lambda d: ((d(arrays((3,))), d(arrays((3,)))), {})),
    Oracle("jax.numpy.inner", lambda d: ((_matrix(d, m=3), _matrix(d, m=3)), {})),
    Oracle("jax.numpy.outer", lambda d: ((_arg(d), _arg(d)), {})),
    Oracle("jax.numpy.tensordot", lambda d: ((d(arrays((2, 3, 4))), d(arrays((3, 4, 2)))),
                                             {"axes": 2})),
    Oracle("jax.numpy.cross", lambda d: ((d(arrays((2, 3))), d(arrays((2, 3)))), {})),
    Oracle("jax.numpy.einsum", _einsum_args),
    Oracle("jax.numpy.trace", lambda d: ((_matrix(d),), {"offset": d(st.integers(-1, 1))})),
    Oracle("jax.numpy.diagonal", lambda d: ((_matrix(d),), {"offset": d(st.integers(-1, 1))})),
    Oracle("jax.numpy.diag", lambda d: ((d(st.sampled_from([_arg(d, max_dims=1), _matrix(d)])),),
                                        {"k": d(st.integers(-1, 1))})),
    Oracle("jax.numpy.diagflat", lambda d: ((_arg(d),), {"k": d(st.integers(-1, 1))})),
    Oracle("jax.numpy.tril", lambda d: ((_matrix(d),), {"k": d(st.integers(-1, 1))})),
    Oracle("jax.numpy.triu", lambda d: ((_matrix(d),), {"k": d(st.integers(-1, 1))})),
    Oracle("jax.numpy.fill_diagonal",
           lambda d: ((_matrix(d), 2.0), {"inplace": False})),
    Oracle("jax.numpy.ravel", lambda d: ((_arg(d, min_dims=0),), {})),
    *[Oracle(f"jax.numpy.{n}", lambda d, n=n: _split_args(d, n, 3 if n == "dsplit" else
                                                           (2 if n in ("hsplit", "vsplit")
                                                            else 1)))
      for n in ["split", "array_split", "hsplit", "vsplit", "dsplit"]],
    Oracle("jax.numpy.bincount", _int_hist_args, grad=False),
    Oracle("jax.numpy.digitize", _digitize_args, grad=False),
    Oracle("jax.numpy.histogram", _histogram_args, grad=False),
    Oracle("jax.numpy.histogram_bin_edges", _histogram_args, grad=False),
    *[Oracle(f"jax.numpy.{n}", _unique_args, grad=False)
      for n in ["unique", "unique_all", "unique_counts", "unique_inverse"]],
    Oracle("jax.numpy.unique_values", _unique_values_args, grad=False),
    _creation("arange", lambda d: ((d(st.integers(-3, 3)), d(st.integers(4, 9))),
                                   {"step": d(st.integers(1, 3))})),
    _creation("linspace", lambda d: ((d(st.floats(-3, 0)), d(st.floats(1, 3))),
                                     {"num": d(st.integers(0, 6)),
                                      "endpoint": d(st.booleans())}), rtol=1e-6, atol=1e-6),
    _creation("eye", lambda d: ((d(st.integers(0, 4)),), {"M": d(st.integers(0, 4)),
                                                         "k": d(st.integers(-2, 2))})),
    _creation("identity", lambda d: ((d(st.integers(0, 4)),), {})),
    _creation("tri", lambda d: ((d(st.integers(0, 4)),), {"k": d(st.integers(-2, 2))})),
    *[_creation(n, lambda d: (((d(st.integers(0, 3)), 2),), {})) for n in ["zeros", "ones"]],
    _creation("empty", lambda d: (((d(st.integers(0, 3)), 2),), {}), values=False),
    _creation("full", lambda d: (((d(st.integers(0, 3)), 2), 1.5), {})),
    *[_creation(n, lambda d: ((_arg(d, min_dims=0),), {}))
      for n in ["zeros_like", "ones_like"]],
    _creation("empty_like", lambda d: ((_arg(d, min_dims=0),), {}), values=False),
    _creation("full_like", lambda d: ((_arg(d, min_dims=0), 2.5), {})),
    _creation("meshgrid", lambda d: ((_arg(d, max_dims=1), _arg(d, max_dims=1)),
                                     {"indexing": d(st.sampled_from(["xy", "ij"]))})),
    *[_creation(n, _indices_of_n) for n in ["tril_indices", "triu_indices"]],
    *[_creation(n, lambda d: ((_matrix(d),), {"k": d(st.integers(-1, 1))}))
      for n in ["tril_indices_from", "triu_indices_from"]],
    _creation("array", lambda d: ((_arg(d, min_dims=0),), {})),
    _creation("asarray", lambda d: ((_arg(d, min_dims=0),), {})),
    Oracle("jax.numpy.astype", lambda d: ((_arg(d, min_dims=0), "int32"), {}), grad=False),
    _creation("iscomplexobj", lambda d: ((_arg(d, min_dims=0),), {})),
    _creation("isrealobj", lambda d: ((_arg(d, min_dims=0),), {})),
    _creation("result_type", lambda d: ((_arg(d, min_dims=0), d(st.sampled_from(
        [2, 2.0, np.int32(1), np.zeros(2, np.int32)]))), {}),
        run=lambda L, fn, *a: L.numpy.zeros((), fn(*a))),
]

_CONSTANT = "a constant or dtype: test_constants_and_dtypes_are_jax_numpys"
UNCHECKED = {f"jax.numpy.{n}": _CONSTANT for n in [
    "e", "pi", "inf", "nan", "euler_gamma", "newaxis", "bfloat16", "bool_", "complex64",
    "float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16",
    "uint32", "uint64"]}

ORACLE += [unary("around", draws=_off_half_integers(), grad=False)]
UNCHECKED["jax.numpy.ndarray"] = "the array type: test_constants_and_dtypes_are_jax_numpys"
