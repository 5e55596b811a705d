"""Rule cases for convolution and pooling (ftorch/primitives/conv.py, through
the user-facing functions of ftorch/nn/_conv.py).

The drawn configuration (stride, padding, dilations, groups, flip, output
padding; pooling windows) travels as a tuple of ints, ``spec``, beside the
data: the harness closes over non-array arguments (jit, vmap) or passes
them as an integer array (the MLX comparison), and ``decode`` turns either
back into keyword arguments inside the case's function.

MLX has no JVP for its convolution (``mx.jvp`` raises), so ``mlx_fn`` for
the convolutions is ``mlx_conv``: the same convolution written with MLX ops
it differentiates (dilation by padding and reshaping, windows gathered with ``take``,
``einsum``). It crops negative padding after dilating, as ftorch does, so
transposed convolutions with ``padding > dilation * (kernel - 1)`` are
checked too, where ``mx.conv_transpose*`` differ (see tests/test_conv.py).
Pooling is checked against mlx.nn's pooling layers, which MLX differentiates.
"""


import mlx.core as mx
import mlx.nn as mnn
import numpy as np
from harness import Case, distinct, floats
from hypothesis import strategies as st

import ftorch.nn._conv as C
import ftorch.primitives as lax

# The per-axis fields of a spec, after its nd, groups and flip.
FIELDS = ("stride", "lo", "hi", "dilation", "input_dilation", "output_padding")


def encode(nd: int, groups: int = 1, flip: bool = False, **per_axis) -> tuple[int, ...]:
    values = [nd, groups, int(flip)]
    for name in FIELDS:
        values += list(per_axis.get(name, (0,) * nd))
    return tuple(values)


def decode(spec) -> dict:
    """``spec`` back to ``dict(nd=, groups=, flip=, stride=(...), lo=(...), ...)``."""
    v = [int(a) for a in np.asarray(spec).ravel()]
    nd = v[0]
    out = dict(nd=nd, groups=v[1], flip=bool(v[2]))
    for i, name in enumerate(FIELDS):
        out[name] = tuple(v[3 + i * nd:3 + (i + 1) * nd])
    return out


def _one(values: tuple) -> int | tuple:
    """MLX's spelling: an int for one spatial axis, a tuple otherwise."""
    return values[0] if len(values) == 1 else values


def _dilated(n: int, d: int) -> int:
    return (n - 1) * d + 1


# ----------------------------------------------------------------------------
# A convolution MLX can differentiate (forward and reverse)
# ----------------------------------------------------------------------------


def mlx_conv(x, w, stride, lo, hi, kernel_dilation, input_dilation, groups, flip):
    """``conv_general`` in MLX ops that ``mx.jvp`` and ``mx.vjp`` handle."""
    nd = x.ndim - 2
    for a, r in enumerate(input_dilation):
        if r > 1:
            n = x.shape[a + 1]
            x = mx.expand_dims(x, a + 2)
            x = mx.pad(x, [(0, 0)] * (a + 2) + [(0, r - 1)] + [(0, 0)] * (nd - a))
            x = x.reshape(*x.shape[:a + 1], n * r, *x.shape[a + 3:])
            x = x[(slice(None),) * (a + 1) + (slice(0, _dilated(n, r)),)]
    for a, (p, q) in enumerate(zip(lo, hi)):
        x = mx.pad(x, [(0, 0)] * (a + 1) + [(max(p, 0), max(q, 0))] + [(0, 0)] * (nd - a))
        x = x[(slice(None),) * (a + 1) + (slice(max(-p, 0), x.shape[a + 1] - max(-q, 0)),)]
    if flip:
        w = w[(slice(None),) + (slice(None, None, -1),) * nd]
    kernel = w.shape[1:-1]
    n, out = x.shape[0], []
    for a, (k, s, d) in enumerate(zip(kernel, stride, kernel_dilation)):
        # Windows along axis a: (..., S, ...) -> (..., O, K, ...) by a gather.
        out.append((x.shape[1 + 2 * a] - _dilated(k, d)) // s + 1)
        idx = mx.arange(out[-1])[:, None] * s + mx.arange(k)[None, :] * d
        x = mx.take(x, idx, axis=1 + 2 * a)
    # (N, O1, K1, O2, K2, ..., C) -> (N, *out, *kernel, C)
    cols = x.transpose(0, *range(1, 2 * nd, 2), *range(2, 2 * nd + 1, 2), 2 * nd + 1)
    c_out, c_group = w.shape[0], w.shape[-1]
    cols = cols.reshape(n, *out, *kernel, groups, c_group)
    w = w.reshape(groups, c_out // groups, *kernel, c_group)
    o, k = "ijk"[:nd], "pqr"[:nd]
    return mx.einsum(f"n{o}{k}gc,gm{k}c->n{o}gm", cols, w).reshape(n, *out, c_out)


def mlx_conv_transpose(x, w, stride, padding, dilation, output_padding, groups):
    """A transposed convolution as MLX builds one, on ``mlx_conv``."""
    nd = x.ndim - 2
    lo = tuple(_dilated(k, d) - 1 - p for k, d, p in zip(w.shape[1:-1], dilation, padding))
    hi = tuple(a + b for a, b in zip(lo, output_padding))
    return mlx_conv(x, w, (1,) * nd, lo, hi, dilation, stride, groups, True)


# ----------------------------------------------------------------------------
# Strategies
# ----------------------------------------------------------------------------


@st.composite
def _channels(draw, nd: int):
    """(groups, C_in, C_out, C_in // groups): MLX has no grouped 3-d convolution."""
    groups = 1 if nd == 3 else draw(st.integers(1, 2))
    c_in, c_out = groups * draw(st.integers(1, 2)), groups * draw(st.integers(1, 2))
    return groups, c_in, c_out, c_in // groups


def _per_axis(draw, nd: int, lo: int, hi: int) -> tuple[int, ...]:
    return tuple(draw(st.integers(lo, hi)) for _ in range(nd))


@st.composite
def conv_args(draw, nd: int, general: bool = False):
    """``x``, ``w`` and a spec for ``conv{nd}d`` (symmetric padding, maybe
    negative, no input dilation) or, with ``general``, ``conv_general``
    (asymmetric padding, input dilation, flip)."""
    groups, c_in, c_out, c_group = draw(_channels(nd))
    max_side = 3 if nd == 3 else 4
    kernel = _per_axis(draw, nd, 1, 3)
    stride = _per_axis(draw, nd, 1, 3)
    dilation = _per_axis(draw, nd, 1, 2)
    lo = _per_axis(draw, nd, -1, 2)
    hi = _per_axis(draw, nd, -1, 2) if general else lo
    input_dilation = _per_axis(draw, nd, 1, 3) if general else (1,) * nd
    flip = draw(st.booleans()) if general else False
    sides = []
    for k, d, p, q, r in zip(kernel, dilation, lo, hi, input_dilation):
        least = max(1, -(-(_dilated(k, d) - p - q - 1) // r) + 1)  # the kernel fits
        sides.append(draw(st.integers(least, least + max_side - 1)))
    x = draw(floats((draw(st.integers(1, 2)), *sides, c_in)))
    w = draw(floats((c_out, *kernel, c_group)))
    return x, w, encode(nd, groups, flip, stride=stride, lo=lo, hi=hi, dilation=dilation,
                        input_dilation=input_dilation)


@st.composite
def conv_transpose_args(draw, nd: int):
    """``x``, ``w`` and a spec for ``conv_transpose{nd}d``; the padding may
    exceed the dilated kernel (a crop of the dilated input)."""
    groups, c_in, c_out, c_group = draw(_channels(nd))
    kernel = _per_axis(draw, nd, 1, 3)
    stride = _per_axis(draw, nd, 1, 3)
    dilation = _per_axis(draw, nd, 1, 2)
    padding = _per_axis(draw, nd, 0, 3)
    output_padding = tuple(draw(st.integers(0, s - 1)) for s in stride)
    sides = []
    for k, s, d, p, q in zip(kernel, stride, dilation, padding, output_padding):
        least = max(1, -(-(2 * p - _dilated(k, d) - q + 1) // s) + 1)  # a nonempty output
        sides.append(draw(st.integers(least, least + (2 if nd == 3 else 3))))
    x = draw(floats((draw(st.integers(1, 2)), *sides, c_in)))
    w = draw(floats((c_out, *kernel, c_group)))
    return x, w, encode(nd, groups, stride=stride, lo=padding, dilation=dilation,
                        output_padding=output_padding)


@st.composite
def pool_args(draw, nd: int, distinct_values: bool = False, default_stride: bool = False):
    """``x`` and a spec (kernel size in ``dilation``, padding in ``lo``) for
    ``{max,avg}_pool{nd}d``; the padding is at most half the window, so every
    window holds an element of ``x``. A stride of 0 means the default."""
    window = _per_axis(draw, nd, 1, 3)
    stride = (0,) * nd if default_stride else _per_axis(draw, nd, 1, 3)
    padding = tuple(draw(st.integers(0, k // 2)) for k in window)
    sides = tuple(draw(st.integers(max(1, k - 2 * p), 5)) for k, p in zip(window, padding))
    x = draw(floats((draw(st.integers(1, 2)), *sides, draw(st.integers(1, 3)))))
    if distinct_values:
        x = distinct(x)
    return x, encode(nd, stride=stride, lo=padding, dilation=window)


@st.composite
def pool_derivative_args(draw, nd: int, scatter: bool):
    """``(t, x, spec)`` for ``max_pool_gather`` or ``(ct, x, spec)`` for
    ``max_pool_scatter``: ``x`` (distinct values) places the maxima."""
    x, spec = draw(pool_args(nd, distinct_values=True))
    p = _pool_params(spec)
    shape = tuple(lax.max_pool(mx.array(x), **p).shape) if scatter else x.shape
    return draw(floats(shape)), x, spec


# ----------------------------------------------------------------------------
# The functions under test, configured by a spec
# ----------------------------------------------------------------------------


def _conv_nd(nd: int, mlx: bool = False):
    def f(x, w, spec):
        c = decode(spec)
        if mlx:
            return mlx_conv(x, w, c["stride"], c["lo"], c["lo"], c["dilation"], (1,) * nd,
                            c["groups"], False)
        fn = getattr(C, f"conv{nd}d")
        return fn(x, w, stride=_one(c["stride"]), padding=_one(c["lo"]),
                  dilation=_one(c["dilation"]), groups=c["groups"])
    return f


def _conv_general(mlx: bool = False):
    def f(x, w, spec):
        c = decode(spec)
        if mlx:
            return mlx_conv(x, w, c["stride"], c["lo"], c["hi"], c["dilation"],
                            c["input_dilation"], c["groups"], c["flip"])
        return C.conv_general(x, w, stride=c["stride"], padding=(c["lo"], c["hi"]),
                              kernel_dilation=c["dilation"], input_dilation=c["input_dilation"],
                              groups=c["groups"], flip=c["flip"])
    return f


def _conv_transpose_nd(nd: int, mlx: bool = False):
    def f(x, w, spec):
        c = decode(spec)
        if mlx:
            return mlx_conv_transpose(x, w, c["stride"], c["lo"], c["dilation"],
                                      c["output_padding"], c["groups"])
        fn = getattr(C, f"conv_transpose{nd}d")
        return fn(x, w, stride=_one(c["stride"]), padding=_one(c["lo"]),
                  dilation=_one(c["dilation"]), output_padding=_one(c["output_padding"]),
                  groups=c["groups"])
    return f


def _pool_params(spec) -> dict:
    """The primitive's params for a pooling spec."""
    c = decode(spec)
    stride = c["dilation"] if c["stride"][0] == 0 else c["stride"]
    return dict(window=c["dilation"], stride=stride, padding=tuple((p, p) for p in c["lo"]))


def _pool(kind: str, nd: int, mlx: bool = False):
    def f(x, spec):
        c = decode(spec)
        stride = None if c["stride"][0] == 0 else _one(c["stride"])
        if mlx:
            layer = getattr(mnn, f"{kind.capitalize()}Pool{nd}d")
            return layer(_one(c["dilation"]), stride, _one(c["lo"]))(x)
        return getattr(C, f"{kind}_pool{nd}d")(x, _one(c["dilation"]), stride, _one(c["lo"]))
    return f


def _pool_derivative(name: str):
    fn = getattr(lax, name)
    return lambda a, x, spec: fn(a, x, **_pool_params(spec))


CASES = [
    *[Case("conv_general", _conv_nd(nd), conv_args(nd), mlx_fn=_conv_nd(nd, mlx=True),
           name=f"conv{nd}d") for nd in (1, 2, 3)],
    *[Case("conv_general", _conv_general(), conv_args(nd, general=True),
           mlx_fn=_conv_general(mlx=True), name=f"conv_general[{nd}d]") for nd in (1, 2, 3)],
    *[Case("conv_general", _conv_transpose_nd(nd), conv_transpose_args(nd),
           mlx_fn=_conv_transpose_nd(nd, mlx=True), name=f"conv_transpose{nd}d")
      for nd in (1, 2, 3)],
    *[Case("max_pool", _pool("max", nd), pool_args(nd, distinct_values=True),
           mlx_fn=_pool("max", nd, mlx=True), name=f"max_pool{nd}d") for nd in (1, 2)],
    Case("max_pool", _pool("max", 2), pool_args(2, True, default_stride=True),
         mlx_fn=_pool("max", 2, mlx=True), name="max_pool2d[default stride]"),
    *[Case("avg_pool", _pool("avg", nd), pool_args(nd), mlx_fn=_pool("avg", nd, mlx=True),
           name=f"avg_pool{nd}d") for nd in (1, 2)],
    Case("avg_pool", _pool("avg", 1), pool_args(1, default_stride=True),
         mlx_fn=_pool("avg", 1, mlx=True), name="avg_pool1d[default stride]"),
    *[Case(name, _pool_derivative(name), pool_derivative_args(nd, name == "max_pool_scatter"),
           name=f"{name}[{nd}d]")
      for name in ("max_pool_gather", "max_pool_scatter") for nd in (1, 2)],
]
