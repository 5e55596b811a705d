"""Convolution and pooling: the primitive layer.

Layouts are MLX's, channels last: an input ``x`` of shape
``(N, *spatial, C_in)``, a kernel ``w`` of shape
``(C_out, *kernel, C_in // groups)``, an output ``(N, *out, C_out)``.

``conv_general`` is ``mx.conv_general``. Along each spatial axis the input
is dilated (``input_dilation - 1`` zeros between elements), padded with
``lo``/``hi`` zeros, and correlated with the kernel (reversed when ``flip``)
dilated by ``kernel_dilation``, at steps of ``stride``; channels split into
``groups`` that each see their own kernels. With ``K' = (K - 1) d + 1`` and
``I' = (I - 1) r + 1``, the output has ``(I' + lo + hi - K') // s + 1``
positions. Transposed convolutions are this op with ``input_dilation`` set to
their stride and a flipped kernel, as MLX builds them. The primitive's
padding is non-negative; the strict wrapper takes any padding and crops
(after dilation, as XLA does) where it is negative, which the rules need.

The op is bilinear: its JVP is ``conv(tx, w) + conv(x, tw)``. Its VJPs
are written with the primitive layer (the conv itself among them), so they
differentiate and batch again:

- for ``x``, the transposed convolution: the cotangent, dilated by
  ``stride`` and padded by ``K' - 1 - lo`` below, correlated with each
  group's kernels (in and out channels swapped, flip undone) at steps of
  ``input_dilation``;
- for ``w``: for each kernel offset, the input positions it met (a strided
  slice of the dilated, padded input), contracted with the cotangent over the
  batch and the output positions: one einsum over the stacked slices, as
  MLX's own kernel gradient (a convolution with the cotangent as kernel and
  the stride as its dilation is many times slower on MLX's CPU).

Batching folds a batched input into ``N``, a batched kernel into the output
channels (group by group), and both into ``groups``. MLX has no grouped 3-d
convolution; there a batched input and kernel run every example against
every kernel and keep the matching pairs (``B`` times the work). MLX's
convolution has no float64 kernel: float64 runs as windows of the input
(``as_strided``) contracted with the kernel.

Pooling takes the max or mean over windows of a padded input, as mlx.nn's
pooling layers: ``max_pool`` pads with ``-inf``, ``avg_pool`` with zeros
and divides by the full window. ``avg_pool`` is linear; its transpose is the
input VJP of a convolution with a constant kernel. ``max_pool``'s
derivatives go through each window's first maximum (ties: the first in
row-major order, as JAX's ``select_and_scatter``): ``max_pool_gather(t, x)``
reads ``t`` there (the JVP) and ``max_pool_scatter(ct, x)`` adds each
window's cotangent there (the VJP); the two are each other's transpose.

>>> import ftorch.lax as lax, mlx.core as mx
>>> x, w = mx.ones((1, 5, 2)), mx.ones((3, 3, 2))
>>> lax.conv_general(x, w, (1,), ((1,), (1,)), (1,), (1,), 1, False).shape
(1, 5, 3)
>>> lax.max_pool(mx.arange(6.0).reshape(1, 6, 1), (2,), (2,), ((0, 0),)).ravel().tolist()
[1.0, 3.0, 5.0]
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import mlx.core as mx

import ftorch.primitives as lax
from ftorch.backend import lowering as lowering_state
from ftorch.core import Primitive, aval_of, is_floating, mlx_at
from ftorch.primitives._rules import add_tangents, linear, move_bdim, shape_of, tangent_to
from ftorch.primitives.linalg import canonical_subscripts
from ftorch.typing import Ints, Shape

__all__ = ["conv_general", "max_pool", "avg_pool", "max_pool_gather", "max_pool_scatter"]

Padding = tuple[Ints, Ints]  # (lo per spatial axis, hi per spatial axis)
Pairs = tuple[tuple[int, int], ...]  # (lo, hi) per spatial axis


def dilated(n: int, d: int) -> int:
    """The extent of ``n`` elements with ``d - 1`` gaps between neighbours."""
    return (n - 1) * d + 1 if n else 0


def conv_out_size(i: int, k: int, stride: int, lo: int, hi: int, kernel_dilation: int,
                  input_dilation: int) -> int:
    """Output positions along one spatial axis (below 1: the kernel does not fit)."""
    return (dilated(i, input_dilation) + lo + hi - dilated(k, kernel_dilation)) // stride + 1


def _with_axis(n: int, at: int, value: Any, rest: Any) -> tuple:
    """A tuple of ``n`` entries: ``value`` at ``at``, ``rest`` elsewhere."""
    return tuple(value if i == at else rest for i in range(n))


# ----------------------------------------------------------------------------
# MLX helpers for the impls: dilation and windows
# ----------------------------------------------------------------------------


def _mx_dilate(x: mx.array, factors: Ints) -> mx.array:
    """``x`` with ``factors[i] - 1`` zeros between neighbours along axis ``i + 1``."""
    for ax, r in enumerate(factors, 1):
        n = x.shape[ax]
        if r == 1 or n == 0:
            continue
        x = mx.pad(mx.expand_dims(x, ax + 1), _with_axis(x.ndim + 1, ax + 1, (0, r - 1), (0, 0)))
        x = x.reshape(*x.shape[:ax], n * r, *x.shape[ax + 2:])
        x = x[(slice(None),) * ax + (slice(0, dilated(n, r)),)]
    return x


def _mx_windows(x: mx.array, window: Ints, stride: Ints, dilation: Ints) -> mx.array:
    """The windows of ``x`` (``(N, *P, C)``, padded already) as a strided
    view ``(N, *out, *window, C)``; for export, stacked strided slices
    (``mx.export_function`` cannot write views; 1.45x slower compiled)."""
    shape = x.shape
    strides = [math.prod(shape[i + 1:]) for i in range(len(shape))]
    spatial = range(1, len(shape) - 1)
    out = [(shape[a] - dilated(k, d)) // s + 1
           for a, k, s, d in zip(spatial, window, stride, dilation)]
    if lowering_state.portable:
        pieces = [x[(slice(None), *(slice(o * d, o * d + s * (n - 1) + 1, s) for o, d, s, n
                                     in zip(offset, dilation, stride, out)), slice(None))]
                  for offset in itertools.product(*(range(k) for k in window))]
        return mx.stack(pieces, axis=x.ndim - 1).reshape(shape[0], *out, *window, shape[-1])
    # mx.contiguous: as_strided reads a sliced view's buffer wrongly (it
    # raises "AsStrided must be used with row contiguous arrays only").
    return mx.as_strided(
        mx.contiguous(x), [shape[0], *out, *window, shape[-1]],
        [strides[0], *(strides[a] * s for a, s in zip(spatial, stride)),
         *(strides[a] * d for a, d in zip(spatial, dilation)), 1])


def _mx_pad(x: mx.array, pairs: Pairs, value: Any) -> mx.array:
    if not any(lo or hi for lo, hi in pairs):
        return x
    return mx.pad(x, [(0, 0), *pairs, (0, 0)], constant_values=value)


# ----------------------------------------------------------------------------
# conv_general
# ----------------------------------------------------------------------------


def _conv_by_windows(x, w, stride, padding, kernel_dilation, input_dilation, groups, flip):
    """The convolution as windows of the input contracted with the kernel
    (MLX's convolution has no float64 kernel)."""
    x, w = x.astype(mx.float64), w.astype(mx.float64)
    nd = x.ndim - 2
    x = _mx_pad(_mx_dilate(x, input_dilation), tuple(zip(*padding)), 0)
    if flip:
        w = w[(slice(None),) + (slice(None, None, -1),) * nd]
    kernel = w.shape[1:-1]
    cols = _mx_windows(x, kernel, stride, kernel_dilation)  # (N, *out, *kernel, C)
    n, out, c_out, c_group = cols.shape[0], cols.shape[1:1 + nd], w.shape[0], w.shape[-1]
    cols = cols.reshape(n, *out, *kernel, groups, c_group)
    w = w.reshape(groups, c_out // groups, *kernel, c_group)
    o, k = "ijk"[:nd], "pqr"[:nd]
    y = mx.einsum(f"n{o}{k}gc,gm{k}c->n{o}gm", cols, w)
    return y.reshape(n, *out, c_out)


def _conv_impl(x, w, *, stride, padding, kernel_dilation, input_dilation, groups, flip):
    if x.dtype == mx.float64 or w.dtype == mx.float64:
        return _conv_by_windows(x, w, stride, padding, kernel_dilation, input_dilation, groups,
                                flip)
    return mx.conv_general(x, w, stride=list(stride), padding=(list(padding[0]),
                                                                list(padding[1])),
                           kernel_dilation=list(kernel_dilation),
                           input_dilation=list(input_dilation), groups=groups, flip=flip)


conv_general_p = Primitive("conv_general", _conv_impl, autocast="low")


def conv_general(x: Any, w: Any, stride: Ints, padding: Padding, kernel_dilation: Ints,
                 input_dilation: Ints, groups: int, flip: bool) -> Any:
    """``mx.conv_general(x, w, ...)`` with every param spelled out per spatial
    axis (``padding`` as ``(lo, hi)`` tuples); a negative padding crops the
    dilated input. The kernel must fit (at least one output position).

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> x = mx.array([1.0, 2.0, 3.0]).reshape(1, 3, 1)
    >>> y = lax.conv_general(x, mx.ones((1, 2, 1)), (1,), ((-1,), (0,)), (1,), (2,), 1, False)
    >>> y.ravel().tolist()  # pairs in [0, 2, 0, 3]: x dilated to [1, 0, 2, 0, 3], cropped
    [2.0, 2.0, 3.0]
    """
    lo, hi = padding
    if min(lo + hi, default=0) >= 0:
        return conv_general_p.bind(x, w, stride=stride, padding=padding,
                                   kernel_dilation=kernel_dilation,
                                   input_dilation=input_dilation, groups=groups, flip=flip)
    # Pad less (never negatively) and slice the output: starting c steps
    # later, a crop of `lo` becomes a pad of lo + c * stride >= 0.
    x_shape, w_shape = shape_of(x), shape_of(w)
    lo1, hi1, crop = [], [], [slice(None)]
    for a, (s, p, q, d, r) in enumerate(zip(stride, lo, hi, kernel_dilation, input_dilation)):
        i, k = dilated(x_shape[a + 1], r), dilated(w_shape[a + 1], d)
        n_out = (i + p + q - k) // s + 1
        c = -(p // s) if p < 0 else 0
        lo1.append(p + c * s)
        hi1.append(max(0, (c + n_out - 1) * s + k - i - lo1[-1]))
        crop.append(slice(c, c + n_out))
    y = conv_general_p.bind(x, w, stride=stride, padding=(tuple(lo1), tuple(hi1)),
                            kernel_dilation=kernel_dilation, input_dilation=input_dilation,
                            groups=groups, flip=flip)
    return lax.static_slice(y, tuple(crop))


@conv_general_p.def_jvp
def _conv_jvp(primals, tangents, **params):
    (x, w), (tx, tw) = primals, tangents
    out = conv_general_p.bind(x, w, **params)
    t = add_tangents(None if tx is None else conv_general_p.bind(tx, w, **params),
                     None if tw is None else conv_general_p.bind(x, tw, **params))
    return out, tangent_to(t, out)


def _swap_kernel_channels(w: Any, groups: int) -> Any:
    """``(C_out, *kernel, C_in // G)`` to ``(C_in, *kernel, C_out // G)``: each
    group's kernels with their in and out channels swapped."""
    ws = shape_of(w)
    nd = len(ws) - 2
    if groups == 1:
        return lax.transpose(w, (nd + 1, *range(1, nd + 1), 0))
    w = lax.reshape(w, (groups, ws[0] // groups, *ws[1:]))  # (G, O/G, *kernel, C/G)
    w = lax.transpose(w, (0, nd + 2, *range(2, nd + 2), 1))  # (G, C/G, *kernel, O/G)
    return lax.reshape(w, (groups * ws[-1], *ws[1:-1], ws[0] // groups))


def conv_input_ct(ct: Any, w: Any, x_shape: Shape, stride: Ints, padding: Padding,
                  kernel_dilation: Ints, input_dilation: Ints, groups: int, flip: bool) -> Any:
    """The cotangent of the input (of shape ``x_shape``) of a convolution
    whose output has cotangent ``ct``: the transposed convolution."""
    lo, hi = padding
    w_shape, ct_shape = shape_of(w), shape_of(ct)
    new_lo, new_hi = [], []
    for a, (s, p, d, r) in enumerate(zip(stride, lo, kernel_dilation, input_dilation)):
        new_lo.append(dilated(w_shape[a + 1], d) - 1 - p)
        new_hi.append(dilated(x_shape[a + 1], r) - 1 + p - (ct_shape[a + 1] - 1) * s)
    return conv_general(ct, _swap_kernel_channels(w, groups), input_dilation,
                        (tuple(new_lo), tuple(new_hi)), kernel_dilation, stride, groups,
                        not flip)


def dilate(x: Any, factors: Ints, value: Any = 0, first_axis: int = 1) -> Any:
    """``x`` with ``factors[i] - 1`` entries ``value`` between neighbours along
    axis ``first_axis + i`` (a convolution's input dilation)."""
    for ax, r in enumerate(factors, first_axis):
        xs = shape_of(x)
        if r == 1 or xs[ax] == 0:
            continue
        x = lax.pad(lax.expand_dims(x, (ax + 1,)), value,
                    _with_axis(len(xs) + 1, ax + 1, (0, r - 1), (0, 0)))
        x = lax.reshape(x, (*xs[:ax], xs[ax] * r, *xs[ax + 1:]))
        x = lax.static_slice(x, (slice(None),) * ax + (slice(0, dilated(xs[ax], r)),))
    return x


def conv_kernel_ct(ct: Any, x: Any, w_shape: Shape, stride: Ints, padding: Padding,
                   kernel_dilation: Ints, input_dilation: Ints, groups: int, flip: bool) -> Any:
    """The cotangent of the kernel (of shape ``w_shape``) of a convolution of
    ``x`` whose output has cotangent ``ct``: for each kernel offset, the input
    positions it met (a strided slice of the dilated, padded input)
    contracted with the cotangent over the batch and output positions."""
    lo, hi = padding
    x_shape, ct_shape = shape_of(x), shape_of(ct)
    nd, kernel, out = len(x_shape) - 2, w_shape[1:-1], ct_shape[1:-1]
    xp = dilate(x, input_dilation)
    if max(lo + hi) > 0:
        xp = lax.pad(xp, 0, ((0, 0), *((max(p, 0), max(q, 0)) for p, q in zip(lo, hi)), (0, 0)))
    # Offset k meets positions k * d + o * s (o < out) of the padded input;
    # a negative lo is a crop, so indices move up by -lo there.
    patches = [
        lax.static_slice(xp, (slice(None), *(
            slice(start, start + dilated(n, s), s)
            for start, n, s in zip((k * d + max(-p, 0) for k, d, p in
                                    zip(offset, kernel_dilation, lo)), out, stride))))
        for offset in itertools.product(*map(range, kernel))]
    patches = lax.concatenate([lax.expand_dims(q, (nd + 1,)) for q in patches], nd + 1)
    c_in, c_out = x_shape[-1], ct_shape[-1]
    patches = lax.reshape(patches, (x_shape[0], *out, math.prod(kernel), groups,
                                    c_in // groups))
    labels_o = [("o", a) for a in range(nd)]
    if groups == 1:  # a tensordot (MLX runs it as one matmul), then (C_out, k, C_in)
        spec = canonical_subscripts([["n", *labels_o, "k", "g", "c"], ["n", *labels_o, "m"]],
                                    ["k", "g", "c", "m"])
        g = lax.einsum(spec, patches, ct)
        g = lax.transpose(g, (3, 0, 1, 2))
    else:
        spec = canonical_subscripts([["n", *labels_o, "k", "g", "c"], ["n", *labels_o, "g", "m"]],
                                    ["g", "m", "k", "c"])
        g = lax.einsum(spec, patches,
                       lax.reshape(ct, (ct_shape[0], *out, groups, c_out // groups)))
    g = lax.reshape(g, (c_out, *kernel, c_in // groups))
    if flip:
        g = lax.static_slice(g, (slice(None),) + (slice(None, None, -1),) * nd)
    return g


def _cast_like(g: Any, x: Any) -> Any:
    dtype = aval_of(x).dtype
    return g if aval_of(g).dtype == dtype else lax.astype(g, dtype)


@conv_general_p.def_vjp
def _conv_vjp(ct, out, x, w, *, needed, **params):
    ct_x = ct_w = None
    if needed[0]:
        ct_x = _cast_like(conv_input_ct(ct, w, shape_of(x), **params), x)
    if needed[1]:
        ct_w = _cast_like(conv_kernel_ct(ct, x, shape_of(w), **params), w)
    return ct_x, ct_w


def _fold_into_batch(x: Any, bdim: int | None, axis_size: int) -> Any:
    """``x`` with its batch axis merged into its leading axis, batch-major."""
    x = move_bdim(x, bdim, 0, axis_size)
    s = shape_of(x)
    return lax.reshape(x, (s[0] * s[1], *s[2:]))


def _unfold_batch(y: Any, axis_size: int) -> Any:
    s = shape_of(y)
    return lax.reshape(y, (axis_size, s[0] // axis_size, *s[1:]))


@conv_general_p.def_batch
def _conv_batch(vals, dims, axis_size, **params):
    (x, w), (dx, dw) = vals, dims
    b, groups = axis_size, params["groups"]
    if dw is None:  # examples are more images
        y = conv_general_p.bind(_fold_into_batch(x, dx, b), w, **params)
        return _unfold_batch(y, b), 0
    w = move_bdim(w, dw, 0, b)  # (B, C_out, *kernel, C_in // G)
    ws = shape_of(w)
    nd, c_out = len(ws) - 3, ws[1]
    if dx is None:  # examples are more kernels: B * C_out outputs, group by group
        w = lax.reshape(w, (b, groups, c_out // groups, *ws[2:]))
        w = lax.transpose(w, (1, 0, *range(2, nd + 4)))  # (G, B, C_out // G, ...)
        y = conv_general_p.bind(x, lax.reshape(w, (b * c_out, *ws[2:])), **params)
        ys = shape_of(y)
        y = lax.reshape(y, (*ys[:-1], groups, b, c_out // groups))
        y = lax.transpose(y, (*range(nd + 1), nd + 2, nd + 1, nd + 3))
        return lax.reshape(y, (*ys[:-1], b, c_out)), nd + 1
    x = move_bdim(x, dx, 0, b)  # (B, N, *spatial, C_in)
    xs = shape_of(x)
    if nd <= 2:  # one group per example and group
        x = lax.transpose(x, (*range(1, nd + 2), 0, nd + 2))  # (N, *spatial, B, C_in)
        x = lax.reshape(x, (*xs[1:-1], b * xs[-1]))
        y = conv_general_p.bind(x, lax.reshape(w, (b * c_out, *ws[2:])),
                                **{**params, "groups": b * groups})
        ys = shape_of(y)
        return lax.reshape(y, (*ys[:-1], b, c_out)), nd + 1
    # No grouped 3-d convolution in MLX: every example against every kernel,
    # then the matching pairs.
    y = conv_general_p.bind(lax.reshape(x, (b * xs[1], *xs[2:])),
                            lax.reshape(w, (b * c_out, *ws[2:])), **params)
    ys = shape_of(y)
    y = lax.reshape(y, (b, xs[1], *ys[1:-1], b, c_out))
    labels = [*range(nd + 2), 0, nd + 3]
    return lax.einsum(canonical_subscripts([labels], labels[:-2] + labels[-1:]), y), 0


# ----------------------------------------------------------------------------
# Pooling: windows of the padded input
# ----------------------------------------------------------------------------


def _lowest(dtype: mx.Dtype) -> Any:
    """What max pooling pads with: ``-inf``, or the least value of an integer dtype."""
    if is_floating(dtype):
        return -math.inf
    return False if dtype == mx.bool_ else mx.iinfo(dtype).min


def _pool_windows(x: mx.array, window: Ints, stride: Ints, padding: Pairs, value: Any):
    return _mx_windows(_mx_pad(x, padding, value), window, stride, (1,) * len(window))


def _window_axes(window: Ints) -> Ints:
    nd = len(window)
    return tuple(range(nd + 1, 2 * nd + 1))


def _batch_pool(prim: Primitive):
    """The batching rule of a pooling primitive: examples are more images
    (every operand's batch axis folds into its leading axis)."""
    def rule(vals, dims, axis_size, **params):
        y = prim.bind(*(_fold_into_batch(v, d, axis_size) for v, d in zip(vals, dims)), **params)
        return _unfold_batch(y, axis_size), 0
    return rule


# avg_pool -------------------------------------------------------------------


def _avg_pool_impl(x, *, window, stride, padding):
    return mx.mean(_pool_windows(x, window, stride, padding, 0), axis=_window_axes(window))


def _avg_pool_transpose(ct, x, *, window, stride, padding):
    # Each channel on its own (channels into the batch) through a
    # convolution's input VJP with the kernel 1 / window size.
    xs, cs = shape_of(x), shape_of(ct)
    nd = len(window)
    ct = lax.transpose(ct, (0, nd + 1, *range(1, nd + 1)))  # (N, C, *out)
    ct = lax.reshape(ct, (cs[0] * cs[-1], *cs[1:-1], 1))
    kernel = mx.full((1, *window, 1), 1 / math.prod(window), aval_of(ct).dtype)
    ones = (1,) * nd
    g = conv_input_ct(ct, kernel, (xs[0] * xs[-1], *xs[1:-1], 1), stride,
                      tuple(zip(*padding)), ones, ones, 1, False)
    g = lax.reshape(g, (xs[0], xs[-1], *xs[1:-1]))
    g = lax.transpose(g, (0, *range(2, nd + 2), 1))
    return _cast_like(g, x) if is_floating(aval_of(x).dtype) else g


avg_pool_p = Primitive("avg_pool", _avg_pool_impl)
linear(avg_pool_p, _avg_pool_transpose)
avg_pool_p.def_batch(_batch_pool(avg_pool_p))


def avg_pool(x: Any, window: Ints, stride: Ints, padding: Pairs) -> Any:
    """The mean over each ``window`` of ``x`` (``(N, *spatial, C)``) padded
    with ``(lo, hi)`` zeros per spatial axis, at steps of ``stride``; a
    window's padding counts in its size (``mlx.nn.AvgPool*``).

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> x = mx.arange(4.0).reshape(1, 4, 1)
    >>> lax.avg_pool(x, (2,), (2,), ((1, 1),)).ravel().tolist()
    [0.0, 1.5, 1.5]
    """
    return avg_pool_p.bind(x, window=window, stride=stride, padding=padding)


# max_pool and its derivatives -------------------------------------------------


def _max_pool_impl(x, *, window, stride, padding):
    windows = _pool_windows(x, window, stride, padding, _lowest(x.dtype))
    return mx.max(windows, axis=_window_axes(window))


def _window_argmax(x: mx.array, window: Ints, stride: Ints, padding: Pairs) -> mx.array:
    """Where each window of ``x`` first peaks: an index into the window in
    row-major order, shape ``(N, *out, C)``."""
    windows = _pool_windows(x, window, stride, padding, _lowest(x.dtype))
    s = windows.shape
    nd = len(window)
    flat = windows.reshape(s[0], *s[1:1 + nd], math.prod(window), s[-1])
    return mx.argmax(flat, axis=nd + 1).astype(mx.int32)


def _max_pool_gather_impl(t, x, *, window, stride, padding):
    nd = len(window)
    idx = mx.expand_dims(_window_argmax(x, window, stride, padding), nd + 1)
    windows = _pool_windows(t, window, stride, padding, 0)
    s = windows.shape
    flat = windows.reshape(s[0], *s[1:1 + nd], math.prod(window), s[-1])
    return mx.take_along_axis(flat, idx, axis=nd + 1).squeeze(nd + 1)


def _max_pool_scatter_impl(ct, x, *, window, stride, padding):
    nd = len(window)
    idx = _window_argmax(x, window, stride, padding)  # (N, *out, C)
    xs, out = x.shape, idx.shape
    padded = [xs[0], *(n + lo + hi for n, (lo, hi) in zip(xs[1:-1], padding)), xs[-1]]
    crop = (slice(None),) + tuple(slice(lo, lo + n) for n, (lo, _) in zip(xs[1:-1], padding))
    if stride == window:  # windows tile the input: no overlaps, no scatter
        hits = mx.arange(math.prod(window)).reshape(-1, 1) == mx.expand_dims(idx, nd + 1)
        g = mx.where(hits, mx.expand_dims(ct, nd + 1), mx.zeros((), ct.dtype))
        g = g.reshape(*out[:-1], *window, out[-1])  # (N, *out, *window, C)
        g = g.transpose(0, *(a for i in range(nd) for a in (1 + i, 1 + nd + i)), 2 * nd + 1)
        g = g.reshape(out[0], *(o * k for o, k in zip(out[1:-1], window)), out[-1])
        g = mx.pad(g, [(0, 0), *((0, p - g.shape[a + 1]) for a, p in enumerate(padded[1:-1])),
                       (0, 0)])
        return g[crop]
    # Padded-input coordinates of each window's maximum.
    coords = []
    for a in reversed(range(nd)):
        coords.append(idx % window[a])
        idx = idx // window[a]
    coords.reverse()
    index = [mx.arange(xs[0]).reshape(_with_axis(nd + 2, 0, -1, 1))]
    for a, k in enumerate(coords):
        start = mx.arange(out[a + 1]).reshape(_with_axis(nd + 2, a + 1, -1, 1)) * stride[a]
        index.append(start + k)
    index.append(mx.arange(xs[-1]).reshape(_with_axis(nd + 2, nd + 1, -1, 1)))
    return mlx_at(mx.zeros(padded, ct.dtype))[tuple(index)].add(ct)[crop]


max_pool_p = Primitive("max_pool", _max_pool_impl)
max_pool_gather_p = Primitive("max_pool_gather", _max_pool_gather_impl)
max_pool_scatter_p = Primitive("max_pool_scatter", _max_pool_scatter_impl)


@max_pool_p.def_jvp
def _max_pool_jvp(primals, tangents, **params):
    (x,), (t,) = primals, tangents
    out = max_pool_p.bind(x, **params)
    return out, None if t is None else max_pool_gather_p.bind(t, x, **params)


@max_pool_p.def_vjp
def _max_pool_vjp(ct, out, x, *, needed, **params):
    return (max_pool_scatter_p.bind(ct, x, **params),)


max_pool_p.def_batch(_batch_pool(max_pool_p))

# Both are linear in their first operand; the second (where the maxima are)
# is data, piecewise constant: no derivative.
linear(max_pool_gather_p, lambda ct, t, x, **params: max_pool_scatter_p.bind(ct, x, **params))
max_pool_gather_p.def_batch(_batch_pool(max_pool_gather_p))
linear(max_pool_scatter_p, lambda ct, c, x, **params: max_pool_gather_p.bind(ct, x, **params))
max_pool_scatter_p.def_batch(_batch_pool(max_pool_scatter_p))


def max_pool(x: Any, window: Ints, stride: Ints, padding: Pairs) -> Any:
    """The maximum over each ``window`` of ``x`` (``(N, *spatial, C)``) padded
    with ``(lo, hi)`` entries of ``-inf`` per spatial axis, at steps of
    ``stride`` (``mlx.nn.MaxPool*``). Its derivative goes to each window's
    first maximum.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> x = mx.array([3.0, 1.0, 2.0]).reshape(1, 3, 1)
    >>> lax.max_pool(x, (2,), (1,), ((1, 0),)).ravel().tolist()
    [3.0, 3.0, 2.0]
    """
    return max_pool_p.bind(x, window=window, stride=stride, padding=padding)


def max_pool_gather(t: Any, x: Any, window: Ints, stride: Ints, padding: Pairs) -> Any:
    """``t`` (shaped as ``x``) read where each window of ``x`` (as ``max_pool``
    takes them) has its first maximum: the JVP of ``max_pool``.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> x, t = mx.array([[[1.0], [3.0], [3.0]]]), mx.array([[[10.0], [20.0], [30.0]]])
    >>> lax.max_pool_gather(t, x, (3,), (1,), ((0, 0),)).ravel().tolist()
    [20.0]
    """
    return max_pool_gather_p.bind(t, x, window=window, stride=stride, padding=padding)


def max_pool_scatter(ct: Any, x: Any, window: Ints, stride: Ints, padding: Pairs) -> Any:
    """Zeros shaped as ``x`` with each window's ``ct`` added where that window of
    ``x`` has its first maximum: the VJP of ``max_pool``.

    >>> import ftorch.lax as lax, mlx.core as mx
    >>> x = mx.array([[[1.0], [3.0], [2.0]]])
    >>> lax.max_pool_scatter(mx.ones((1, 2, 1)), x, (2,), (1,), ((0, 0),)).ravel().tolist()
    [0.0, 2.0, 0.0]
    """
    return max_pool_scatter_p.bind(ct, x, window=window, stride=stride, padding=padding)
