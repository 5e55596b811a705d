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
