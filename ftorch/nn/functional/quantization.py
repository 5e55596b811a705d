"""Fake quantization for quantization-aware training: ``fake_quantize``
(PyTorch's ``fake_quantize_per_tensor_affine`` / ``per_channel_affine``,
and per group), its learned-step-size variant ``fake_quantize_lsq`` (Esser
et al., 2019), and ``quantization_params``, the scale and zero point of a
range (PyTorch's observers' rule).

Both round to the integer grid in the forward pass and pass gradients
straight through (to ``x`` where it lies inside the grid's range, zero
outside), written with ``stop_gradient``: ``grad``, ``jvp``, ``vmap`` and
``jit`` all apply.

>>> import ftorch as ft, ftorch.nn.functional as F, mlx.core as mx
>>> x = mx.array([-1.0, 0.1, 0.26, 3.0])
>>> F.fake_quantize(x, bits=4, scale=0.25).tolist()
[-1.0, 0.0, 0.25, 1.75]
>>> ft.grad(lambda x: F.fake_quantize(x, bits=4, scale=0.25).sum())(x).tolist()
[1.0, 1.0, 1.0, 0.0]
"""

from __future__ import annotations

from typing import Any

import mlx.core as mx
import numpy as np

import ftorch.numpy as fnp
from ftorch.core import Tracer, aval_of, is_floating
from ftorch.primitives.reduction import normalize_axis

__all__ = ["fake_quantize", "fake_quantize_lsq", "quantization_params", "quantization_range"]


def quantization_range(bits: int, symmetric: bool, fname: str = "quantization_range"
                       ) -> tuple[int, int]:
    """``(qmin, qmax)`` of ``bits``-bit integers: signed when ``symmetric``
    (``[-2^(b-1), 2^(b-1) - 1]``), else unsigned (``[0, 2^b - 1]``). ``bits``
    is 2 to 16; ``fname`` names the caller in the error.

    >>> import ftorch.nn.functional as F
    >>> F.quantization_range(8, True), F.quantization_range(4, False)
    ((-128, 127), (0, 15))
    """
    if isinstance(bits, bool) or not isinstance(bits, int) or not 2 <= bits <= 16:
        raise ValueError(f"{fname}: bits must be an int in [2, 16], got {bits!r}")
    if symmetric:
        return -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    return 0, 2 ** bits - 1


def quantization_params(low: Any, high: Any, *, bits: int = 8,
                        symmetric: bool = True) -> tuple[Any, Any]:
    """``(scale, zero_point)`` that map the range ``[low, high]`` (arrays:
    per tensor, channel or group) onto ``bits``-bit integers, as PyTorch's
    observers compute them: the range is widened to hold 0; symmetric uses
    ``max(|low|, high)`` over half the integer range and zero point 0;
    asymmetric spreads ``[low, high]`` over the whole range. The zero point
    is an integer (as float); the scale is at least float32's epsilon. An
    empty range (``low > high``: nothing observed) gives scale 1 and zero
    point 0, as in PyTorch.

    >>> import ftorch.nn.functional as F, mlx.core as mx
    >>> scale, zp = F.quantization_params(mx.array(-1.0), mx.array(3.0), bits=8,
    ...                                   symmetric=False)
    >>> round(scale.item(), 6), zp.item()
    (0.015686, 64.0)
    >>> [v.item() for v in F.quantization_params(mx.array(-1.0), mx.array(7.5), bits=4)]
    [1.0, 0.0]
    """
    qmin, qmax = quantization_range(bits, symmetric, "quantization_params")
    low, high = fnp.asarray(low), fnp.asarray(high)
    empty = low > high
    low, high = fnp.minimum(low, 0.0), fnp.maximum(high, 0.0)
    eps = float(mx.finfo(mx.float32).eps)
    if symmetric:
        scale = fnp.maximum(fnp.maximum(-low, high) / ((qmax - qmin) / 2), eps)
        zero_point = fnp.zeros_like(scale)
    else:
        scale = fnp.maximum((high - low) / (qmax - qmin), eps)
        zero_point = fnp.clip(qmin - fnp.round(low / scale), qmin, qmax)
    return fnp.where(empty, 1.0, scale), fnp.where(empty, 0.0, zero_point)


def _known(value: Any) -> np.ndarray | None:
    """``value`` as a NumPy array where it is known (an array, or traced under
    ``grad``), ``None`` under ``jit`` or ``vmap``: the value checks that need
    it are skipped there."""
    if isinstance(value, Tracer):
        try:
            value = value._concrete()
        except TypeError:
            return None
    return np.asarray(value)


def _grouping(shape: tuple, axis: int | None, group_size: int | None,
              fname: str) -> tuple[tuple | None, int | None, tuple]:
    """How ``x`` of ``shape`` splits into quantization blocks:
    ``(grouped shape or None, the channel axis or None, the axes its min and
    max reduce over)``."""
    if group_size is not None:
        if axis is not None:
            raise ValueError(f"{fname}: give axis (per channel) or group_size (per group along "
                             f"the last axis), not both")
        if isinstance(group_size, bool) or not isinstance(group_size, int) or group_size < 1 \
                or not shape or shape[-1] % group_size:
            raise ValueError(f"{fname}: group_size must be a positive int dividing x's last "
                             f"axis, got {group_size!r} for shape {shape}")
        grouped = (*shape[:-1], shape[-1] // group_size, group_size)
        return grouped, None, (len(grouped) - 1,)
    if axis is None:
        return None, None, tuple(range(len(shape)))
    channel = normalize_axis(axis, len(shape), fname)
    return None, channel, tuple(a for a in range(len(shape)) if a != channel)


def _laid_out(value: Any, name: str, shape: tuple, grouped: tuple | None, channel: int | None,
              fname: str) -> Any:
    """A given ``scale``, ``zero_point`` or ``step`` shaped to broadcast
    against ``x`` (``grouped`` when given): a scalar as it is; per channel,
    one value per channel (PyTorch's layout) or ``x``'s rank with 1s; per
    group, ``x.shape[:-1] + (groups,)`` (``mx.quantize``'s layout) or that
    with a trailing 1."""
    value = fnp.asarray(value)
    vshape = tuple(value.shape)
    if not vshape:
        return value
    if channel is not None:
        if vshape == (shape[channel],):
            return fnp.reshape(value, tuple(shape[channel] if a == channel else 1
                                            for a in range(len(shape))))
        if len(vshape) == len(shape):
            return value
        raise ValueError(f"{fname}: {name} must have shape ({shape[channel]},) (one per "
                         f"channel along axis {channel}) or x's rank, got {vshape}")
    if grouped is not None:
        if vshape == grouped[:-1]:
            return fnp.expand_dims(value, -1)
        if vshape == (*grouped[:-1], 1):
            return value
        raise ValueError(f"{fname}: {name} must have shape {grouped[:-1]} (one per group), got "
                         f"{vshape}")
    return value


def _check_positive(value: Any, name: str, fname: str) -> None:
    known = _known(value)
    if known is not None and not np.all(known > 0):
        raise ValueError(f"{fname}: {name} must be positive, got {known.min()} among its values")


def fake_quantize(x: Any, *, bits: int = 8, axis: int | None = None,
                  group_size: int | None = None, symmetric: bool = True, scale: Any = None,
                  zero_point: Any = None) -> Any:
    """``x`` quantized to ``bits``-bit integers and back: ``(clip(round(x /
    scale) + zero_point, qmin, qmax) - zero_point) * scale``, rounding half
    to even, as ``torch.fake_quantize_per_tensor_affine`` and
    ``..._per_channel_affine``. Its gradient is straight through: the
    cotangent where ``round(x / scale) + zero_point`` lies in ``[qmin,
    qmax]``, 0 outside (PyTorch's rule).

    Blocks: per tensor (``axis=None``), per channel along ``axis``, or per
    group of ``group_size`` consecutive elements along the last axis.
    ``symmetric``: signed integers (``quantization_range``) and zero point
    0; else unsigned with a zero point.

    ``scale`` and ``zero_point`` default to ``quantization_params`` of each
    block's min and max (read from ``x``, not differentiated). Given (and
    not differentiated either; ``fake_quantize_lsq`` learns a scale), they
    are a scalar, one value per channel (shape ``(x.shape[axis],)``) or per
    group (``x.shape[:-1] + (groups,)``, as ``mx.quantize`` gives scales);
    ``zero_point`` (default 0) holds integers in ``[qmin, qmax]``. Their
    values are checked where known (not under ``jit`` or ``vmap``).

    >>> import ftorch.nn.functional as F, mlx.core as mx
    >>> w = mx.array([[0.1, -0.5, 0.33], [2.0, 1.0, -4.0]])
    >>> F.fake_quantize(w, bits=4, axis=0).tolist()
    [[0.1333..., -0.4666..., 0.3333...], [2.1333..., 1.0666..., -3.7333...]]
    >>> F.fake_quantize(w, bits=8, axis=0, scale=mx.array([0.25, 1.0])).tolist()
    [[0.0, -0.5, 0.25], [2.0, 1.0, -4.0]]
    >>> F.fake_quantize(w, bits=2, group_size=3, symmetric=False).shape
    (2, 3)
    """
    fname = "fake_quantize"
    x = fnp.asarray(x)
    shape, dtype = aval_of(x)
    if not is_floating(dtype):
        raise TypeError(f"{fname}: x must be floating, got {dtype}")
    qmin, qmax = quantization_range(bits, symmetric, fname)
    grouped, channel, reduced = _grouping(tuple(shape), axis, group_size, fname)
    blocks = fnp.reshape(x, grouped) if grouped is not None else x
    if scale is None:
        if zero_point is not None:
            raise ValueError(f"{fname}: zero_point needs scale")
        stats = fnp.stop_gradient(blocks)
        scale, zero_point = quantization_params(
            fnp.min(stats, axis=reduced, keepdims=True),
            fnp.max(stats, axis=reduced, keepdims=True), bits=bits, symmetric=symmetric)
    else:
        _check_positive(scale, "scale", fname)
        scale = fnp.stop_gradient(_laid_out(scale, "scale", shape, grouped, channel, fname))
        if zero_point is None:
            zero_point = fnp.zeros_like(scale)
        else:
            known = _known(zero_point)
            if known is not None and not (np.all(known == np.round(known)) and np.all(
                    (known >= qmin) & (known <= qmax))):
                raise ValueError(f"{fname}: zero_point must hold integers in [{qmin}, {qmax}], "
                                 f"got {known}")
            zero_point = fnp.stop_gradient(
                _laid_out(zero_point, "zero_point", shape, grouped, channel, fname))
    q = fnp.round(blocks / scale) + zero_point
    inside = (q >= qmin) & (q <= qmax)
    dequantized = fnp.stop_gradient((fnp.clip(q, qmin, qmax) - zero_point) * scale)
    # Value: exactly the dequantized grid point (the added term is 0). Derivative: 1 inside
    # the range, 0 outside; where() keeps x = inf (inf - inf) from reaching either.
    out = dequantized + fnp.where(inside, blocks - fnp.stop_gradient(blocks), 0.0)
    out = fnp.reshape(out, shape) if grouped is not None else out
    return fnp.astype(out, dtype)


def _scale_gradient(x: Any, factor: float) -> Any:
    """``x`` whose gradient is multiplied by ``factor`` (its value unchanged)."""
    return fnp.stop_gradient(x - x * factor) + x * factor


def fake_quantize_lsq(x: Any, step: Any, *, bits: int = 8, symmetric: bool = True,
                      axis: int | None = None, grad_scale: float | None = None) -> Any:
    """Fake quantization with a learned step size (LSQ, Esser et al. 2019):
    ``round(clip(x / step, -Q_n, Q_p)) * step``, where ``[-Q_n, Q_p]`` is
    ``quantization_range(bits, symmetric)`` (signed, or unsigned ``[0, 2^b -
    1]`` for non-negative activations). ``step`` is a trainable positive
    scalar (per tensor) or, with ``axis``, one per channel along ``axis``
    (shape ``(x.shape[axis],)``, or ``x``'s rank with 1s).

    Gradients (the paper's eq. 3): to ``x`` straight through inside the
    range, 0 outside; to ``step``, ``round(x/s) - x/s`` inside and ``-Q_n``
    or ``Q_p`` where clipped, times ``grad_scale``. By default that is the
    paper's ``1 / sqrt(n * Q_p)`` with ``n = x.size / step.size``, the
    elements sharing a step: right for weights; for activations the paper
    counts the features of one example, so pass ``grad_scale`` when ``x`` is
    a batch (or call this under ``vmap``). ``grad_scale=1.0`` turns it off.

    >>> import ftorch as ft, ftorch.nn.functional as F, mlx.core as mx
    >>> x = mx.array([0.3, -0.8, 5.0])
    >>> F.fake_quantize_lsq(x, mx.array(0.25), bits=4).tolist()
    [0.25, -0.75, 1.75]
    >>> ft.grad(lambda s: F.fake_quantize_lsq(x, s, bits=4, grad_scale=1.0).sum())(
    ...     mx.array(0.25)).item()
    7.0
    """
    fname = "fake_quantize_lsq"
    x, step = fnp.asarray(x), fnp.asarray(step)
    if not is_floating(aval_of(x).dtype) or not is_floating(aval_of(step).dtype):
        raise TypeError(f"{fname}: x and step must be floating, got {aval_of(x).dtype} and "
                        f"{aval_of(step).dtype}")
    qmin, qmax = quantization_range(bits, symmetric, fname)
    shape = tuple(x.shape)
    _, channel, _ = _grouping(shape, axis, None, fname)
    if channel is None and step.ndim:
        raise ValueError(f"{fname}: step must be a scalar without axis, got shape "
                         f"{tuple(step.shape)}; pass axis for one step per channel")
    step = _laid_out(step, "step", shape, None, channel, fname)
    _check_positive(step, "step", fname)
    if grad_scale is None:
        per_step = max(1, x.size // max(1, step.size))
        grad_scale = 1.0 / (per_step * qmax) ** 0.5
    s = _scale_gradient(step, grad_scale)
    v = fnp.clip(x / s, qmin, qmax)
    # round(v) - v has no rounding error (Sterbenz), so rounded is exactly round(v); its
    # derivative is 1, v's.
    rounded = v + fnp.stop_gradient(fnp.round(v) - v)
    return fnp.astype(rounded * s, x.dtype)
