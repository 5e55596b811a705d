"""Rule cases for reductions and scans.

The drawn ``axis``/``keepdims`` (and scan flags, ``ddof``) travel as a small
integer array, ``spec``, beside the data: the harness passes non-floating
arrays along untouched, and ``decode``/``decode_scan`` turn it back into
keyword arguments inside the case's function.
"""

import math

import mlx.core as mx
import numpy as np
from harness import Case, distinct, floats, shapes
from hypothesis import strategies as st

import ftorch.numpy as fnp

_NONE, _INT, _TUPLE = 0, 1, 2


@st.composite
def axis_choice(draw, ndim: int, tuples: bool = True, none: bool = True):
    """``None``, one axis (maybe negative) or a tuple of distinct axes (maybe empty)."""
    kinds = ([_NONE] if none else []) + ([_INT] if ndim else []) + ([_TUPLE] if tuples else [])
    kind = draw(st.sampled_from(kinds))
    if kind == _NONE:
        return None
    if kind == _INT:
        return draw(st.integers(-ndim, ndim - 1))
    picked = draw(st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim)) if ndim else []
    return tuple(a - ndim if draw(st.booleans()) else a for a in picked)


def encode(axis, keepdims: bool, *extra: int) -> np.ndarray:
    if axis is None:
        body = [_NONE]
    elif isinstance(axis, int):
        body = [_INT, axis]
    else:
        body = [_TUPLE, *axis]
    return np.array([int(keepdims), *extra, *body], dtype=np.int64)


def decode(spec, n_extra: int = 0) -> tuple[dict, list]:
    """``spec`` back to ``dict(axis=..., keepdims=...)`` and the extra ints."""
    values = spec.tolist()
    extra, (kind, *axes) = values[1:1 + n_extra], values[1 + n_extra:]
    axis = None if kind == _NONE else (axes[0] if kind == _INT else tuple(axes))
    return dict(axis=axis, keepdims=bool(values[0])), extra


def reduced_count(shape, axis) -> int:
    if axis is None:
        return math.prod(shape)
    axes = (axis,) if isinstance(axis, int) else axis
    return math.prod(shape[a] for a in axes)


@st.composite
def reduce_args(draw, lo=-3.0, hi=3.0, fix=None, max_side=4, tuples=True, min_dims=0):
    x = draw(floats(shapes(min_dims=min_dims, max_side=max_side), lo, hi))
    if fix is not None:
        x = fix(x)
    axis = draw(axis_choice(x.ndim, tuples=tuples))
    return x, encode(axis, draw(st.booleans()))


@st.composite
def var_args(draw, nonconstant: bool = False):
    """With ``nonconstant``, every reduced slice has two distinct values at least
    (std has a kink where a slice is constant)."""
    shape = shapes(min_dims=1, min_side=2) if nonconstant else shapes()
    x = distinct(draw(floats(shape, -3.0, 3.0)), 0.1)
    axis = draw(axis_choice(x.ndim))
    if nonconstant and axis == ():
        axis = None
    ddof = draw(st.integers(0, 1)) if reduced_count(x.shape, axis) > 1 else 0
    return x, encode(axis, draw(st.booleans()), ddof)


@st.composite
def with_zeros(draw, x: np.ndarray) -> np.ndarray:
    """``x`` with some entries (at least one when nonempty) set to exactly 0."""
    if x.size == 0:
        return x
    mask = draw(st.lists(st.booleans(), min_size=x.size, max_size=x.size))
    mask[draw(st.integers(0, x.size - 1))] = True
    return np.where(np.array(mask).reshape(x.shape), 0.0, x)


@st.composite
def prod_args(draw, zeros: bool):
    x = draw(floats(shapes(max_side=3), -1.5, 1.5))
    if zeros:
        x = draw(with_zeros(x))
    axis = draw(axis_choice(x.ndim))
    return x, encode(axis, draw(st.booleans()))


@st.composite
def scan_args(draw, zeros: bool = False, lo=-3.0, hi=3.0):
    x = draw(floats(shapes(max_side=5), lo, hi))
    if zeros:
        x = draw(with_zeros(x))
    axis = draw(axis_choice(x.ndim, tuples=False))
    return x, encode(axis, False, int(draw(st.booleans())), int(draw(st.booleans())))


def decode_scan(spec) -> dict:
    kw, (reverse, inclusive) = decode(spec, 2)
    return dict(axis=kw["axis"], reverse=bool(reverse), inclusive=bool(inclusive))


def _reduce(f):
    return lambda x, spec: f(x, **decode(spec)[0])


def _var(f):
    def g(x, spec):
        kw, (ddof,) = decode(spec, 1)
        return f(x, ddof=ddof, **kw)
    return g


def _scan(f):
    return lambda x, spec: f(x, **decode_scan(spec))


def _mlx_axis(f):
    # MLX wants a list (or int) for several axes.
    def g(x, spec):
        kw, _ = decode(spec)
        if isinstance(kw["axis"], tuple):
            kw["axis"] = list(kw["axis"])
        return f(x, **kw)
    return g


def _mlx_var(f):
    def g(x, spec):
        kw, (ddof,) = decode(spec, 1)
        if isinstance(kw["axis"], tuple):
            kw["axis"] = list(kw["axis"])
        return f(x, ddof=ddof, **kw)
    return g


def _with_float(f):
    # An integer or boolean output beside a differentiable one.
    return lambda x, spec: (f(x, spec), x * 2.0)


def _arg(f):
    def g(x, spec):
        kw, _ = decode(spec)
        return f(x, **kw)
    return g


@st.composite
def arg_args(draw):
    x = distinct(draw(floats(shapes(min_dims=0), -3.0, 3.0)))
    return x, encode(draw(axis_choice(x.ndim, tuples=False)), draw(st.booleans()))


# MLX's CPU float64 exp is only float32-accurate (see cases_elementwise.py).
LOOSE = dict(eps=1e-3, rtol=1e-3, atol=1e-4)

CASES = [
    Case("sum", _reduce(fnp.sum), reduce_args(), mlx_fn=_mlx_axis(mx.sum)),
    Case("mean", _reduce(fnp.mean), reduce_args(), mlx_fn=_mlx_axis(mx.mean)),
    Case("max", _reduce(fnp.max), reduce_args(fix=distinct), mlx_fn=_mlx_axis(mx.max)),
    Case("min", _reduce(fnp.min), reduce_args(fix=distinct), mlx_fn=_mlx_axis(mx.min)),
    Case("max", lambda x: fnp.max(fnp.concatenate([x, x]), axis=0), floats(shapes(1, 2))
         .map(lambda a: (distinct(a),)), name="max_ties", mlx_fn=None),
    Case("prod", _reduce(fnp.prod), prod_args(zeros=False), mlx_fn=_mlx_axis(mx.prod)),
    Case("prod", _reduce(fnp.prod), prod_args(zeros=True), name="prod_zeros"),
    Case("var", _var(fnp.var), var_args(), mlx_fn=_mlx_var(mx.var)),
    Case("std", _var(fnp.std), var_args(nonconstant=True), mlx_fn=_mlx_var(mx.std)),
    Case("logsumexp", _reduce(fnp.logsumexp), reduce_args(),
         mlx_fn=_mlx_axis(mx.logsumexp), **LOOSE),
    Case("cumsum", _scan(fnp.cumsum), scan_args(), mlx_fn=_scan(mx.cumsum)),
    # MLX has no JVP for cumprod; test_reduction.py checks it against loops.
    Case("cumprod", _scan(fnp.cumprod), scan_args(lo=-1.5, hi=1.5)),
    Case("cumprod", _scan(fnp.cumprod), scan_args(zeros=True, lo=-1.5, hi=1.5),
         name="cumprod_zeros"),
    Case("argmax", _with_float(_arg(fnp.argmax)), arg_args()),
    Case("argmin", _with_float(_arg(fnp.argmin)), arg_args()),
    Case("all", _with_float(_reduce(lambda x, **kw: fnp.all(x > 0, **kw))), reduce_args()),
    Case("any", _with_float(_reduce(lambda x, **kw: fnp.any(x > 0, **kw))), reduce_args()),
]
