"""Convolutions and pooling on channels-last arrays, as mlx.core and mlx.nn
have them: the argument checking in front of ``ftorch.primitives.conv``.

Inputs are ``(N, *spatial, C_in)`` and kernels ``(C_out, *kernel, C_in // groups)``;
``stride``, ``padding`` and ``dilation`` are an int or one int per spatial
axis. All of them are differentiable (forward and reverse, to any order) and
batch under ``vmap`` in both the input and the kernel.

>>> import ftorch.nn._conv as C, mlx.core as mx
>>> C.conv2d(mx.ones((1, 4, 4, 3)), mx.ones((8, 3, 3, 3)), padding=1).shape
(1, 4, 4, 8)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import ftorch.primitives as lax
from ftorch.core import as_array, is_floating
from ftorch.primitives.conv import conv_out_size, dilated
from ftorch.primitives.creation import static_int
from ftorch.typing import Ints

__all__ = [
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "conv_general", "max_pool1d", "max_pool2d", "avg_pool1d", "avg_pool2d",
]

IntOrTuple = int | Sequence[int]

_SPATIAL = {1: "L", 2: "H, W", 3: "D, H, W"}
_KERNEL = {1: "K", 2: "KH, KW", 3: "KD, KH, KW"}


# ----------------------------------------------------------------------------
# Argument checking
# ----------------------------------------------------------------------------


def _ints(value: Any, n: int, fname: str, what: str, minimum: int | None = None) -> Ints:
    """``value`` (an int or a sequence of ``n`` ints) as ``n`` ints, each at
    least ``minimum``."""
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise ValueError(f"{fname}: {what} must be an int or a sequence of {n} ints (one per "
                             f"spatial axis), got {value!r}")
        out = tuple(static_int(v, fname, what) for v in value)
    else:
        out = (static_int(value, fname, what),) * n
    if minimum is not None and any(v < minimum for v in out):
        bound = "positive" if minimum == 1 else "non-negative"
        raise ValueError(f"{fname}: {what} must be {bound}, got {value!r}")
    return out


def _input(x: Any, nd: int, fname: str, channels: str = "C_in") -> Any:
    x = as_array(x, f"{fname}: x")
    if x.ndim != nd + 2:
        raise ValueError(
            f"{fname}: x must have shape (N, {_SPATIAL[nd]}, {channels}) ({nd + 2} dimensions, "
            f"batch first, channels last), got shape {tuple(x.shape)}")
    return x


def _operands(x: Any, w: Any, nd: int, groups: Any, fname: str) -> tuple[Any, Any, int]:
    x = _input(x, nd, fname)
    w = as_array(w, f"{fname}: weight")
    if w.ndim != nd + 2:
        raise ValueError(
            f"{fname}: weight must have shape (C_out, {_KERNEL[nd]}, C_in // groups) "
            f"({nd + 2} dimensions), got shape {tuple(w.shape)}")
    if not is_floating(x.dtype):
        raise TypeError(f"{fname}: x must be a floating-point array, got dtype {x.dtype}")
    groups = static_int(groups, fname, "groups")
    if groups < 1:
        raise ValueError(f"{fname}: groups must be positive, got {groups}")
    if groups > 1 and nd == 3:
        raise ValueError(f"{fname}: groups must be 1 for 3-d convolutions (MLX has no grouped "
                         f"3-d convolution), got {groups}")
    c_in, c_out = x.shape[-1], w.shape[0]
    if c_in % groups or c_out % groups:
        raise ValueError(
            f"{fname}: groups={groups} must divide both the input channels (x shape "
            f"{tuple(x.shape)}: {c_in}) and the output channels (weight shape "
            f"{tuple(w.shape)}: {c_out})")
    if w.shape[-1] * groups != c_in:
        raise ValueError(
            f"{fname}: weight's last axis must be C_in // groups = {c_in // groups} (x shape "
            f"{tuple(x.shape)}, groups={groups}), got weight shape {tuple(w.shape)}")
    return x, w, groups


def _padding_pair(padding: Any, nd: int, fname: str) -> tuple[Ints, Ints]:
    """An int, ``nd`` ints (both sides), or a pair ``(lo, hi)`` of those."""
    if (isinstance(padding, (list, tuple)) and len(padding) == 2
            and all(isinstance(p, (list, tuple)) for p in padding)):
        return (_ints(padding[0], nd, fname, "padding (low side)"),
                _ints(padding[1], nd, fname, "padding (high side)"))
    p = _ints(padding, nd, fname, "padding")
    return p, p


def _conv(fname: str, x: Any, w: Any, stride: Ints, padding: tuple[Ints, Ints],
          kernel_dilation: Ints, input_dilation: Ints, groups: int, flip: bool) -> Any:
    """The convolution after checking that the kernel fits the padded input."""
    for a, (s, lo, hi, d, r) in enumerate(zip(stride, *padding, kernel_dilation,
                                               input_dilation)):
        i, k = x.shape[a + 1], w.shape[a + 1]
        if conv_out_size(i, k, s, lo, hi, d, r) < 1:
            raise ValueError(
                f"{fname}: the kernel does not fit the input along spatial axis {a}: weight shape "
                f"{tuple(w.shape)} spans {dilated(k, d)} positions (dilation {d}), the input "
                f"(x shape {tuple(x.shape)}) spans {dilated(i, r) + lo + hi} after dilation "
                f"and padding ({lo}, {hi})")
    return lax.conv_general(x, w, stride, padding, kernel_dilation, input_dilation, groups,
                            flip)


# ----------------------------------------------------------------------------
# Convolutions
# ----------------------------------------------------------------------------


def _conv_nd(nd: int, x: Any, weight: Any, stride: IntOrTuple, padding: IntOrTuple,
             dilation: IntOrTuple, groups: int) -> Any:
    fname = f"conv{nd}d"
    x, weight, groups = _operands(x, weight, nd, groups, fname)
    p = _ints(padding, nd, fname, "padding")
    return _conv(fname, x, weight, _ints(stride, nd, fname, "stride", 1), (p, p),
                 _ints(dilation, nd, fname, "dilation", 1), (1,) * nd, groups, False)


def conv1d(x: Any, weight: Any, stride: IntOrTuple = 1, padding: IntOrTuple = 0,
           dilation: IntOrTuple = 1, groups: int = 1) -> Any:
    """1-d cross-correlation of ``x`` ``(N, L, C_in)`` with ``weight``
    ``(C_out, K, C_in // groups)``, as ``mx.conv1d``: ``padding`` zeros on both
    sides (negative: a crop), the kernel dilated by ``dilation``, at steps of
    ``stride``; result ``(N, L_out, C_out)``.

    >>> import ftorch.nn._conv as C, mlx.core as mx
    >>> C.conv1d(mx.arange(4.0).reshape(1, 4, 1), mx.ones((1, 2, 1))).ravel().tolist()
    [1.0, 3.0, 5.0]
    """
    return _conv_nd(1, x, weight, stride, padding, dilation, groups)


def conv2d(x: Any, weight: Any, stride: IntOrTuple = 1, padding: IntOrTuple = 0,
           dilation: IntOrTuple = 1, groups: int = 1) -> Any:
    """2-d cross-correlation of ``x`` ``(N, H, W, C_in)`` with ``weight``
    ``(C_out, KH, KW, C_in // groups)``, as ``mx.conv2d``.

    >>> import ftorch.nn._conv as C, mlx.core as mx
    >>> C.conv2d(mx.ones((1, 5, 5, 2)), mx.ones((3, 3, 3, 2)), stride=2).shape
    (1, 2, 2, 3)
    """
    return _conv_nd(2, x, weight, stride, padding, dilation, groups)


def conv3d(x: Any, weight: Any, stride: IntOrTuple = 1, padding: IntOrTuple = 0,
           dilation: IntOrTuple = 1, groups: int = 1) -> Any:
    """3-d cross-correlation of ``x`` ``(N, D, H, W, C_in)`` with ``weight``
    ``(C_out, KD, KH, KW, C_in)``, as ``mx.conv3d`` (``groups`` must be 1).

    >>> import ftorch.nn._conv as C, mlx.core as mx
    >>> C.conv3d(mx.ones((1, 3, 3, 3, 1)), mx.ones((2, 2, 2, 2, 1)), padding=1).shape
    (1, 4, 4, 4, 2)
    """
    return _conv_nd(3, x, weight, stride, padding, dilation, groups)


def _conv_transpose_nd(nd: int, x: Any, weight: Any, stride: IntOrTuple,
                       padding: IntOrTuple, dilation: IntOrTuple,
                       output_padding: IntOrTuple, groups: int) -> Any:
    # As MLX builds it: the input dilated by the stride, padded by the
    # dilated kernel's extent less `padding`, against the flipped kernel.
    fname = f"conv_transpose{nd}d"
    x, weight, groups = _operands(x, weight, nd, groups, fname)
    stride = _ints(stride, nd, fname, "stride", 1)
    padding = _ints(padding, nd, fname, "padding")
    dilation = _ints(dilation, nd, fname, "dilation", 1)
    output_padding = _ints(output_padding, nd, fname, "output_padding", 0)
    lo = tuple(dilated(k, d) - 1 - p for k, d, p in zip(weight.shape[1:-1], dilation, padding))
    hi = tuple(a + b for a, b in zip(lo, output_padding))
    return _conv(fname, x, weight, (1,) * nd, (lo, hi), dilation, stride, groups, True)


def conv_transpose1d(x: Any, weight: Any, stride: IntOrTuple = 1, padding: IntOrTuple = 0,
                     dilation: IntOrTuple = 1, output_padding: IntOrTuple = 0,
                     groups: int = 1) -> Any:
    """1-d transposed convolution of ``x`` ``(N, L, C_in)`` with ``weight``
    ``(C_out, K, C_in // groups)``, as ``mx.conv_transpose1d``: the output has
    ``(L - 1) * stride - 2 * padding + dilation * (K - 1) + 1 + output_padding``
    positions.

    >>> import ftorch.nn._conv as C, mlx.core as mx
    >>> x = mx.array([1.0, 2.0]).reshape(1, 2, 1)
    >>> C.conv_transpose1d(x, mx.array([1.0, 10.0]).reshape(1, 2, 1), stride=2).ravel().tolist()
    [1.0, 10.0, 2.0, 20.0]
    """
    return _conv_transpose_nd(1, x, weight, stride, padding, dilation, output_padding, groups)


def conv_transpose2d(x: Any, weight: Any, stride: IntOrTuple = 1, padding: IntOrTuple = 0,
                     dilation: IntOrTuple = 1, output_padding: IntOrTuple = 0,
                     groups: int = 1) -> Any:
    """2-d transposed convolution of ``x`` ``(N, H, W, C_in)`` with ``weight``
    ``(C_out, KH, KW, C_in // groups)``, as ``mx.conv_transpose2d``.

    >>> import ftorch.nn._conv as C, mlx.core as mx
    >>> C.conv_transpose2d(mx.ones((1, 3, 3, 2)), mx.ones((4, 3, 3, 2)), stride=2).shape
    (1, 7, 7, 4)
    """
    return _conv_transpose_nd(2, x, weight, stride, padding, dilation, output_padding, groups)


def conv_transpose3d(x: Any, weight: Any, stride: IntOrTuple = 1, padding: IntOrTuple = 0,
                     dilation: IntOrTuple = 1, output_padding: IntOrTuple = 0,
                     groups: int = 1) -> Any:
    """3-d transposed convolution of ``x`` ``(N, D, H, W, C_in)`` with
    ``weight`` ``(C_out, KD, KH, KW, C_in)``, as ``mx.conv_transpose3d``
    (``groups`` must be 1).

    >>> import ftorch.nn._conv as C, mlx.core as mx
    >>> C.conv_transpose3d(mx.ones((1, 2, 2, 2, 1)), mx.ones((1, 2, 2, 2, 1))).shape
    (1, 3, 3, 3, 1)
    """
    return _conv_transpose_nd(3, x, weight, stride, padding, dilation, output_padding, groups)


def conv_general(x: Any, weight: Any, stride: IntOrTuple = 1,
                 padding: IntOrTuple | tuple[Sequence[int], Sequence[int]] = 0,
                 kernel_dilation: IntOrTuple = 1, input_dilation: IntOrTuple = 1,
                 groups: int = 1, flip: bool = False) -> Any:
    """General convolution of ``x`` ``(N, *spatial, C_in)`` (1 to 3 spatial
    axes) with ``weight`` ``(C_out, *kernel, C_in // groups)``, as
    ``mx.conv_general``: ``x`` dilated by ``input_dilation``, padded by
    ``padding`` (an int, one int per axis, or a pair ``(lo, hi)`` of
    sequences), against the kernel dilated by ``kernel_dilation`` (reversed
    when ``flip``), at steps of ``stride``.

    A negative padding crops the dilated input (as XLA does; MLX crops
    before dilating, so the two differ where ``input_dilation > 1``).

    >>> import ftorch.nn._conv as C, mlx.core as mx
    >>> x = mx.array([1.0, 2.0]).reshape(1, 2, 1)
    >>> C.conv_general(x, mx.ones((1, 1, 1)), input_dilation=3, padding=([0], [1])).ravel().tolist()
    [1.0, 0.0, 0.0, 2.0, 0.0]
    """
    fname = "conv_general"
    x = as_array(x, f"{fname}: x")
    nd = x.ndim - 2
    if nd not in (1, 2, 3):
        raise ValueError(f"{fname}: x must have shape (N, *spatial, C_in) with 1 to 3 spatial "
                         f"axes, got shape {tuple(x.shape)}")
    x, weight, groups = _operands(x, weight, nd, groups, fname)
    if not isinstance(flip, bool):
        raise TypeError(f"{fname}: flip must be True or False, got {flip!r}")
    return _conv(fname, x, weight, _ints(stride, nd, fname, "stride", 1),
                 _padding_pair(padding, nd, fname),
                 _ints(kernel_dilation, nd, fname, "kernel_dilation", 1),
                 _ints(input_dilation, nd, fname, "input_dilation", 1), groups, flip)


# ----------------------------------------------------------------------------
# Pooling
# ----------------------------------------------------------------------------


def _pool(nd: int, kind: str, x: Any, kernel_size: IntOrTuple, stride: IntOrTuple | None,
          padding: IntOrTuple) -> Any:
    fname = f"{kind}_pool{nd}d"
    x = _input(x, nd, fname, "C")
    window = _ints(kernel_size, nd, fname, "kernel_size", 1)
    stride = window if stride is None else _ints(stride, nd, fname, "stride", 1)
    padding = _ints(padding, nd, fname, "padding", 0)
    for a, (k, p) in enumerate(zip(window, padding)):
        if x.shape[a + 1] + 2 * p < k:
            raise ValueError(
                f"{fname}: kernel_size {k} is larger than spatial axis {a} of the input "
                f"(x shape {tuple(x.shape)}) with padding {p} on both sides")
    pairs = tuple((p, p) for p in padding)
    pool = lax.max_pool if kind == "max" else lax.avg_pool
    return pool(x, window, stride, pairs)


def max_pool1d(x: Any, kernel_size: IntOrTuple, stride: IntOrTuple | None = None,
               padding: IntOrTuple = 0) -> Any:
    """The maximum over windows of ``kernel_size`` along ``L`` of ``x``
    ``(N, L, C)``, at steps of ``stride`` (default: ``kernel_size``), after
    ``padding`` entries of ``-inf`` on both sides, as ``mlx.nn.MaxPool1d``.
    The gradient goes to each window's first maximum.

    >>> import ftorch.nn._conv as C, mlx.core as mx
    >>> C.max_pool1d(mx.array([1.0, 3.0, 2.0, 0.0]).reshape(1, 4, 1), 2).ravel().tolist()
    [3.0, 2.0]
    """
    return _pool(1, "max", x, kernel_size, stride, padding)


def max_pool2d(x: Any, kernel_size: IntOrTuple, stride: IntOrTuple | None = None,
               padding: IntOrTuple = 0) -> Any:
    """The maximum over ``kernel_size`` windows of ``x`` ``(N, H, W, C)``, as
    ``mlx.nn.MaxPool2d`` (see ``max_pool1d``).

    >>> import ftorch.nn._conv as C, mlx.core as mx
    >>> C.max_pool2d(mx.arange(16.0).reshape(1, 4, 4, 1), 2).squeeze().tolist()
    [[5.0, 7.0], [13.0, 15.0]]
    """
    return _pool(2, "max", x, kernel_size, stride, padding)


def avg_pool1d(x: Any, kernel_size: IntOrTuple, stride: IntOrTuple | None = None,
               padding: IntOrTuple = 0) -> Any:
    """The mean over windows of ``kernel_size`` along ``L`` of ``x``
    ``(N, L, C)``, at steps of ``stride`` (default: ``kernel_size``), after
    ``padding`` zeros on both sides that count in the window's size, as
    ``mlx.nn.AvgPool1d``.

    >>> import ftorch.nn._conv as C, mlx.core as mx
    >>> C.avg_pool1d(mx.array([1.0, 3.0, 2.0]).reshape(1, 3, 1), 2, padding=1).ravel().tolist()
    [0.5, 2.5]
    """
    return _pool(1, "avg", x, kernel_size, stride, padding)


def avg_pool2d(x: Any, kernel_size: IntOrTuple, stride: IntOrTuple | None = None,
               padding: IntOrTuple = 0) -> Any:
    """The mean over ``kernel_size`` windows of ``x`` ``(N, H, W, C)``, as
    ``mlx.nn.AvgPool2d`` (see ``avg_pool1d``).

    >>> import ftorch.nn._conv as C, mlx.core as mx
    >>> C.avg_pool2d(mx.arange(16.0).reshape(1, 4, 4, 1), 2).squeeze().tolist()
    [[2.5, 4.5], [10.5, 12.5]]
    """
    return _pool(2, "avg", x, kernel_size, stride, padding)
