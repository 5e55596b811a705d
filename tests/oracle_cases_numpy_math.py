"""Oracle cases for jax.numpy's further elementwise math, comparisons, bit operations,
window functions and dtype helpers, the jax.lax primitives under them, and jax.nn's
further activations (tests/oracle.py)."""

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from oracle import Oracle, arrays
from oracle_cases_numpy_core import binary, unary


def _away_from(points, margin=0.05):
    """Values moved at least ``margin`` away from each of ``points`` (kinks, jumps)."""
    def fix(x):
        for p in points:
            x = np.where(np.abs(x - p) < margin, p + np.where(x < p, -margin, margin), x)
        return x.astype(np.float32)
    return fix


def _off_integers(x):
    return (np.round(x) + 0.3).astype(np.float32)


def _ints(lo=-50, hi=50, shape=None):
    return arrays(shape=shape, dtype="int32", lo=lo, hi=hi)


def _int_pair(name, lo=-50, hi=50, lo2=None, hi2=None, module="jax.numpy", same_shape=False):
    def args(d):
        if same_shape:
            s1 = s2 = d(hnp.array_shapes(min_dims=0, max_dims=3, max_side=4))
        else:
            s1, s2 = d(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3)).input_shapes
        return (d(_ints(lo, hi, s1)), d(_ints(lo if lo2 is None else lo2,
                                              hi if hi2 is None else hi2, s2))), {}
    return Oracle(f"{module}.{name}", args, grad=False)


def _lax_binary(name, lo=-3.0, hi=3.0, lo2=None, hi2=None, fix=None, **kw):
    """A ``jax.lax`` binary op: operands of one shape and dtype."""
    def args(d):
        s = d(hnp.array_shapes(min_dims=0, max_dims=3, max_side=4))
        x = d(arrays(s, lo=lo, hi=hi))
        y = d(arrays(s, lo=lo if lo2 is None else lo2, hi=hi if hi2 is None else hi2))
        return ((fix(x), y) if fix else (x, y)), {}
    return Oracle(f"jax.lax.{name}", args, **kw)


def _special_floats(d):
    """A float32 array holding zeros of both signs, infinities and NaN among drawn values."""
    x = d(arrays(shape=(6,)))
    return np.concatenate([x, np.float32([0.0, -0.0, np.inf, -np.inf, np.nan])])


ORACLE = [
    # Aliases
    unary("absolute", draws=arrays().map(_away_from([0.0]))),
    unary("acos", lo=-0.9, hi=0.9), unary("asin", lo=-0.9, hi=0.9), unary("atan"),
    unary("acosh", lo=1.1, hi=5.0), unary("asinh"), unary("atanh", lo=-0.9, hi=0.9),
    binary("atan2"), binary("pow", lo=0.5, hi=3.0, lo2=-2.0, hi2=2.0),
    # Real functions
    unary("positive"), unary("positive", dtype="int32", id="int"),
    unary("fabs", draws=arrays().map(_away_from([0.0]))),
    unary("fabs", dtype="int32", lo=-9, hi=9, id="int"),
    unary("cbrt"), unary("cbrt", dtype="int32", lo=-30, hi=30, id="int"),
    unary("exp2"), unary("exp2", dtype="int32", lo=-5, hi=5, id="int"),
    binary("float_power", lo=0.5, hi=3.0, lo2=-2.0, hi2=2.0),
    binary("logaddexp2"),
    unary("i0"), unary("deg2rad"), unary("radians"), unary("rad2deg"), unary("degrees"),
    unary("deg2rad", dtype="int32", lo=-200, hi=200, id="int"),
    binary("hypot", lo=0.2, hi=3.0),
    binary("hypot", lo=-3.0, hi=-0.2, id="negative"),
    Oracle("jax.numpy.heaviside",
           lambda d: ((d(arrays().map(_away_from([0.0]))), d(arrays(shape=()))), {})),
    Oracle("jax.numpy.heaviside",
           lambda d: ((np.float32([-1.0, 0.0, 2.0, np.nan]), d(arrays(shape=(4,)))), {}),
           id="zero"),
    # Rounding and remainders
    unary("trunc", draws=arrays().map(_off_integers)),
    unary("trunc", dtype="int32", id="int"),
    unary("rint", draws=arrays().map(_off_integers)),
    unary("rint", dtype="int32", id="int"),
    unary("modf", draws=arrays().map(_off_integers)),
    Oracle("jax.numpy.modf", lambda d: ((_special_floats(d),), {}), grad=False, id="special"),
    binary("fmod", lo=-5.0, hi=5.0, lo2=0.5, hi2=3.0, grad=False),
    Oracle("jax.numpy.fmod", lambda d: ((d(arrays(lo=-5.0, hi=5.0).map(
        lambda x: (np.round(x) + 0.3).astype(np.float32))), np.float32(2.0)), {}), id="grad"),
    _int_pair("fmod", lo2=1, hi2=9), _int_pair("fmod", lo2=-9, hi2=-1),
    binary("divmod", lo2=0.5, hi2=3.0, grad=False), _int_pair("divmod", lo2=1, hi2=9),
    binary("fmax", grad=True), binary("fmin", grad=True),
    Oracle("jax.numpy.fmax", lambda d: ((np.float32([1.0, np.nan, np.nan, 2.0]),
                                         np.float32([np.nan, 2.0, np.nan, 2.0])), {}), id="nan"),
    Oracle("jax.numpy.fmin", lambda d: ((np.float32([1.0, np.nan, np.nan, 2.0]),
                                         np.float32([np.nan, 2.0, np.nan, 2.0])), {}), id="nan"),
    _int_pair("fmax"),
    Oracle("jax.numpy.nan_to_num", lambda d: ((_special_floats(d),), {})),
    Oracle("jax.numpy.nan_to_num", lambda d: ((_special_floats(d),), {
        "nan": d(st.floats(-5, 5, width=32)), "posinf": d(st.floats(-5, 5, width=32)),
        "neginf": d(st.floats(-5, 5, width=32))}), id="given"),
    unary("nan_to_num", dtype="int32", id="int"),
    # The pieces of a float
    binary("copysign", lo=0.1, hi=3.0, lo2=-3.0, hi2=3.0),
    binary("copysign", lo=-3.0, hi=-0.1, lo2=-3.0, hi2=3.0, id="negative"),
    Oracle("jax.numpy.copysign", lambda d: ((np.float32([0.0, 0.0, -0.0, 2.0]),
                                             np.float32([1.0, -1.0, 1.0, -0.0])), {}),
           id="zeros"),
    Oracle("jax.numpy.signbit", lambda d: ((_special_floats(d),), {}), grad=False),
    unary("signbit", dtype="int32", id="int"),
    unary("frexp", lo=-1e6, hi=1e6), unary("frexp", dtype="int32", id="int"),
    Oracle("jax.numpy.frexp", lambda d: ((_special_floats(d),), {}), grad=False, id="special"),
    # Away from x1 = 0, where JAX's derivative is 1 rather than 2 ** x2.
    Oracle("jax.numpy.ldexp", lambda d: ((d(arrays(shape=(2, 3), lo=-1e3, hi=1e3).map(
        _away_from([0.0], 1e-3))),
                                          d(_ints(-120, 120, (3,)))), {})),
    Oracle("jax.numpy.nextafter", lambda d: ((_special_floats(d),
                                               np.roll(_special_floats(d), 3)), {}), grad=False),
    binary("nextafter", grad=False, id="drawn"),
    Oracle("jax.numpy.spacing", lambda d: ((_special_floats(d)[:-3],), {}), grad=False),
    unary("spacing", lo=-1e30, hi=1e30, grad=False, id="wide"),
    _int_pair("gcd", lo=-100, hi=100), _int_pair("lcm", lo=-100, hi=100),
    # Comparisons
    Oracle("jax.numpy.isclose", lambda d: ((_special_floats(d), _special_floats(d)
                                            * np.float32(1 + 1e-6)), {})),
    Oracle("jax.numpy.isclose", lambda d: ((d(arrays(shape=(5,))), d(arrays(shape=(5,)))),
                                           {"rtol": 0.5, "atol": 0.5, "equal_nan": True}),
           id="loose"),
    _int_pair("isclose"),
    Oracle("jax.numpy.allclose", lambda d: ((d(arrays(shape=(4,))),
                                             d(arrays(shape=(4,)))), {"atol": 2.0})),
    Oracle("jax.numpy.array_equal", lambda d: ((_special_floats(d), _special_floats(d)),
                                               {"equal_nan": d(st.booleans())})),
    Oracle("jax.numpy.array_equal", lambda d: ((d(_ints(0, 1, (2, 3))),
                                                d(_ints(0, 1, d(st.sampled_from(
                                                    [(2, 3), (3, 2), (3,)]))))), {}),
           id="shapes"),
    Oracle("jax.numpy.array_equiv", lambda d: ((d(_ints(0, 1, (3,))),
                                                d(_ints(0, 1, (2, 3)))), {})),
    Oracle("jax.numpy.isposinf", lambda d: ((_special_floats(d),), {}), grad=False),
    Oracle("jax.numpy.isneginf", lambda d: ((_special_floats(d),), {}), grad=False),
    unary("isposinf", dtype="int32", id="int"),
    Oracle("jax.numpy.isscalar", lambda d: ((d(st.sampled_from(
        [1, 2.5, True, "a", None, [1], (1, 2)])),), {})),
    Oracle("jax.numpy.isscalar", lambda d: ((d(arrays(min_dims=0, max_dims=2)),), {}),
           id="array"),
    Oracle("jax.numpy.iterable", lambda d: ((d(st.sampled_from([1, 2.5, [1], (1, 2), "ab",
                                                                None])),), {})),
    # jax.lax primitives
    Oracle("jax.lax.cbrt", lambda d: ((d(arrays().map(_away_from([0.0]))),), {})),
    _lax_binary("rem", lo=-5.0, hi=5.0, lo2=0.5, hi2=3.0,
                fix=lambda x: (np.round(x) + 0.3).astype(np.float32)),
    _int_pair("rem", lo2=1, hi2=9, module="jax.lax", same_shape=True),
    _int_pair("shift_left", lo=-1000, hi=1000, lo2=-2, hi2=34, module="jax.lax",
              same_shape=True),
    _int_pair("shift_right_arithmetic", lo=-1000, hi=1000, lo2=-2, hi2=34, module="jax.lax",
              same_shape=True),
    _int_pair("shift_right_logical", lo=-1000, hi=1000, lo2=-2, hi2=34, module="jax.lax",
              same_shape=True),
    Oracle("jax.lax.population_count", lambda d: ((d(_ints(-2**31, 2**31 - 1)),), {})),
    Oracle("jax.lax.bitcast_convert_type", lambda d: ((_special_floats(d),),
                                                      {"new_dtype": np.int32}), grad=False),
]

UNCHECKED = {}


def _nn(name, draws=None, grad=True, **kw):
    draws = draws if draws is not None else arrays()
    return Oracle(f"jax.nn.{name}", lambda d: ((d(draws),), {}), grad=grad, **kw)


def _axis_and_mask(d, x):
    axis = d(st.none() | st.integers(-x.ndim, x.ndim - 1)) if x.ndim else None
    return axis, d(arrays(shape=x.shape, dtype="bool"))


def _logmeanexp_args(d):
    x = d(arrays(min_dims=1))
    axis, mask = _axis_and_mask(d, x)
    mask.flat[0] = True  # some element in each reduction... at least the first
    kwargs = {"axis": axis, "keepdims": d(st.booleans())}
    if d(st.booleans()):
        kwargs["where"] = np.ones_like(mask) if axis is not None else mask
    return (x,), kwargs


def _standardize_args(d):
    x = d(arrays(min_dims=1, min_side=2))
    # Spread out, so that the variance is far from 0 (where float32 cancellation in the
    # "fast" variance makes the result ill-conditioned).
    x = (x + np.arange(x.size).reshape(x.shape)).astype(np.float32)
    kwargs = {"axis": d(st.integers(-x.ndim, x.ndim - 1)),
              "algorithm": d(st.sampled_from(["fast", "stable"]))}
    return (x,), kwargs


NN = [
    _nn("hard_silu", arrays().map(_away_from([-3.0, 3.0]))),
    _nn("swish"), _nn("soft_sign"), _nn("identity"),
    _nn("log1mexp", arrays(lo=0.05, hi=5.0)),
    Oracle("jax.nn.logmeanexp", _logmeanexp_args),
    _nn("sparse_plus", arrays().map(_away_from([-1.0, 1.0]))),
    _nn("sparse_sigmoid", arrays().map(_away_from([-1.0, 1.0]))),
    _nn("squareplus"),
    Oracle("jax.nn.squareplus", lambda d: ((d(arrays()),), {"b": d(st.floats(0.5, 8.0))}),
           id="b"),
    Oracle("jax.nn.standardize", _standardize_args, rtol=1e-4, atol=1e-4),
    Oracle("jax.nn.standardize", lambda d: ((d(arrays(shape=(3, 4))),), {
        "mean": d(arrays(shape=(3, 1))), "variance": d(arrays(shape=(3, 1), lo=0.5, hi=2.0)),
        "epsilon": 0.1}), id="given"),
]
ORACLE += NN


def _shift_args(dtype, lo, hi):
    def args(d):
        s1, s2 = d(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=2)).input_shapes
        return (d(arrays(s1, dtype, lo=lo, hi=hi)), d(arrays(s2, dtype, lo=0, hi=10))), {}
    return args


def _packbits_args(d):
    a = d(arrays(min_dims=1, dtype=d(st.sampled_from(["bool", "int32", "uint8"])), lo=0, hi=2))
    axis = d(st.none() | st.integers(-a.ndim, a.ndim - 1))
    return (a,), {"axis": axis, "bitorder": d(st.sampled_from(["big", "little"]))}


def _unpackbits_args(d):
    a = d(arrays(min_dims=1, dtype="uint8", lo=0, hi=255))
    axis = d(st.none() | st.integers(-a.ndim, a.ndim - 1))
    return (a,), {"axis": axis, "count": d(st.none() | st.integers(-7, 12)),
                  "bitorder": d(st.sampled_from(["big", "little"]))}


BITS = [
    *[Oracle(f"jax.numpy.{name}", _shift_args(dtype, lo, hi), id=dtype)
      for name in ("left_shift", "right_shift", "bitwise_left_shift", "bitwise_right_shift")
      for dtype, lo, hi in (("int32", -1000, 1000), ("uint8", 0, 255), ("int8", -128, 127))],
    Oracle("jax.numpy.right_shift", lambda d: ((d(_ints(-1000, 1000)), 3), {}), id="scalar"),
    *[unary(name, dtype=dtype, lo=-100, hi=100, id=dtype)
      for name in ("bitwise_invert", "bitwise_not") for dtype in ("int32", "bool")],
    *[Oracle("jax.numpy.bitwise_count", lambda d, dt=dt: ((d(arrays(dtype=dt, lo=lo, hi=hi)),),
                                                          {}), id=dt)
      for dt, lo, hi in [("int32", -2**31, 2**31 - 1), ("uint8", 0, 255),
                         ("int16", -2**15, 2**15 - 1), ("bool", 0, 1)]],
    Oracle("jax.numpy.packbits", _packbits_args),
    Oracle("jax.numpy.unpackbits", _unpackbits_args),
]
ORACLE += BITS


WINDOWS = [
    *[Oracle(f"jax.numpy.{name}", lambda d: ((d(st.integers(0, 12)),), {}), atol=1e-6)
      for name in ("bartlett", "blackman", "hamming", "hanning")],
    Oracle("jax.numpy.kaiser", lambda d: ((d(st.integers(0, 12)),
                                           np.float32(d(st.floats(0.0, 8.0)))), {}),
           rtol=1e-5, atol=1e-6),
]
ORACLE += WINDOWS


# Dtypes both libraries have, by name, but the 64-bit ones (JAX without x64 makes their
# arrays 32-bit), and the abstract categories.
DTYPE_NAMES = ["bool", "uint8", "uint16", "uint32", "int8", "int16", "int32", "float16",
               "bfloat16", "float32", "complex64"]
CATEGORIES = ["generic", "number", "inexact", "floating", "complexfloating", "integer",
              "signedinteger", "unsignedinteger"]
KINDS = ["bool", "signed integer", "unsigned integer", "integral", "real floating",
         "complex floating", "numeric"]


def _two_dtypes(d, pool=DTYPE_NAMES):
    return (d(st.sampled_from(pool)), d(st.sampled_from(pool))), {}


def _promotable(d):
    """Two dtype names whose promotion is not a 64-bit type (uint32 with a signed one)."""
    a, b = _two_dtypes(d)[0]
    if "uint32" in (a, b) and {a, b} & {"int8", "int16", "int32"}:
        a = b = "uint32"
    return (a, b), {}


def _as_array_of(L, dtype):
    """The name of the dtype an array of ``dtype`` has: how a dtype result is compared
    (JAX without x64 makes 64-bit dtypes 32-bit)."""
    return str(L.numpy.zeros((), dtype).dtype).removeprefix("mlx.core.")


def _category_row(L, fn):
    return [L.numpy.issubdtype(fn, getattr(L.numpy, c)) for c in CATEGORIES]


DTYPES = [
    Oracle("jax.numpy.issubdtype", lambda d: _two_dtypes(d, DTYPE_NAMES + CATEGORIES),
           run=lambda L, fn, a, b: fn(getattr(L.numpy, a), getattr(L.numpy, b))),
    Oracle("jax.numpy.issubdtype", lambda d: ((d(st.sampled_from(DTYPE_NAMES)),
                                               d(st.sampled_from([float, int, complex]))),
                                              {}), id="python"),
    Oracle("jax.numpy.isdtype", lambda d: ((d(st.sampled_from(DTYPE_NAMES)),
                                            d(st.sampled_from(KINDS) | st.tuples(
                                                st.sampled_from(KINDS),
                                                st.sampled_from(DTYPE_NAMES)))), {})),
    Oracle("jax.numpy.promote_types", _promotable,
           run=lambda L, fn, a, b: _as_array_of(L, fn(a, b))),
    Oracle("jax.numpy.can_cast", lambda d: (_two_dtypes(d)[0], {"casting": d(st.sampled_from(
        ["no", "equiv", "safe", "same_kind", "unsafe"]))})),
    Oracle("jax.numpy.can_cast", lambda d: ((d(arrays(dtype=d(st.sampled_from(
        ["float32", "int8", "bool"])))), d(st.sampled_from(DTYPE_NAMES))), {}), id="array"),
    Oracle("jax.numpy.finfo", lambda d: ((d(st.sampled_from(
        ["float16", "bfloat16", "float32", "complex64"])),), {}),
           run=lambda L, fn, name: [fn(name).eps, fn(name).max, fn(name).min, fn(name).tiny,
                                    fn(name).bits, fn(name).resolution]),
    Oracle("jax.numpy.iinfo", lambda d: ((d(st.sampled_from(
        ["uint8", "uint16", "uint32", "int8", "int16", "int32"])),), {}),
           run=lambda L, fn, name: [fn(name).min, fn(name).max, fn(name).bits]),
    Oracle("jax.numpy.dtype", lambda d: ((d(st.sampled_from(DTYPE_NAMES + [float, int, bool])),),
                                         {}), run=lambda L, fn, x: _as_array_of(L, fn(x))),
    Oracle("jax.numpy.shape", lambda d: ((d(arrays(min_dims=0)),), {})),
    Oracle("jax.numpy.ndim", lambda d: ((d(arrays(min_dims=0)),), {})),
    Oracle("jax.numpy.size", lambda d: ((d(arrays(min_dims=0)),), {})),
    Oracle("jax.numpy.size", lambda d: ((d(arrays(shape=(2, 3, 4))),),
                                        {"axis": d(st.sampled_from([0, -1, (0, 2)]))}),
           id="axis"),
    Oracle("jax.numpy.euler_gamma", lambda d: ((), {}), run=lambda L, value: value),
    *[Oracle(f"jax.numpy.{name}", lambda d: ((), {}), run=_category_row)
      for name in CATEGORIES + ["bool", "int_", "uint", "float_", "double", "single",
                                "csingle"]],
    *[Oracle(f"jax.numpy.{name}", lambda d: ((), {}),
             run=lambda L, fn: _as_array_of(L, fn), id="dtype")
      for name in ["bool", "int_", "uint", "float_", "single", "csingle"]],
]
ORACLE += DTYPES

UNCHECKED.update({
    name: "NumPy's own function in both (jax.numpy re-exports it): "
          "tests/test_numpy_math.py checks that it governs array_str"
    for name in ["jax.numpy.get_printoptions", "jax.numpy.set_printoptions",
                 "jax.numpy.printoptions"]
})
UNCHECKED.update({
    name: "formats as NumPy does, where JAX prints float32 with float64 digits and fails "
          "on 0-d arrays: tests/test_numpy_math.py checks it against NumPy"
    for name in ["jax.numpy.array_str", "jax.numpy.array_repr"]
})
