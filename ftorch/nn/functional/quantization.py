"""Fake quantization for quantization-aware training: ``fake_quantize``
(PyTorch's ``fake_quantize_per_tensor_affine`` / ``per_channel_affine``,
and per group), its learned-step-size variant ``fake_quantize_lsq`` (Esser
et al., 2019), and ``quantization_params``, the scale and zero point of a
range (PyTorch's observers' rule).

Both round to the integer grid in the forward pass and pass gradients
straight through (to ``x`` where it lies inside the grid's range, zero
outside), written with ``stop_gradient``: every transform applies.

>>> import ftorch as ft, ftorch.nn.functional as F, mlx.core as mx
>>> x = mx.array([-1.0, 0.1, 0.26, 3.0])
>>> F.fake_quantize(x, bits=4, scale=mx.array(0.25)).tolist()
[-1.0, 0.0, 0.25, 1.75]
>>> ft.grad(lambda x: F.fake_quantize(x, bits=4, scale=mx.array(0.25)).sum())(x).tolist()
[1.0, 1.0, 1.0, 0.0]
"""

from __future__ import annotations

from typing import Any

import mlx.core as mx

import ftorch.numpy as fnp
from ftorch.core import aval_of, is_floating
from ftorch.primitives.reduction import normalize_axis

__all__ = ["fake_quantize", "fake_quantize_lsq", "quantization_params", "quantization_range"]


def quantization_range(bits: int, symmetric: bool, fname: str = "fake_quantize") -> tuple:
    """``(qmin, qmax)`` of ``bits``-bit integers: signed when ``symmetric``
    (``[-2^(b-1), 2^(b-1) - 1]``), else unsigned (``[0, 2^b - 1]``).

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
    is an integer (as float); the scale is at least float32's epsilon.

    >>> import ftorch.nn.functional as F, mlx.core as mx
    >>> scale, zp = F.quantization_params(mx.array(-1.0), mx.array(3.0), bits=8,
    ...                                   symmetric=False)
    >>> round(scale.item(), 6), zp.item()
    (0.015686, 64.0)
    """
    qmin, qmax = quantization_range(bits, symmetric, "quantization_params")
    low, high = fnp.minimum(fnp.asarray(low), 0.0), fnp.maximum(fnp.asarray(high), 0.0)
    eps = float(mx.finfo(mx.float32).eps)
    if symmetric:
        scale = fnp.maximum(fnp.maximum(-low, high) / ((qmax - qmin) / 2), eps)
        return scale, fnp.zeros_like(scale)
    scale = fnp.maximum((high - low) / (qmax - qmin), eps)
    zero_point = fnp.clip(qmin - fnp.round(low / scale), qmin, qmax)
    return scale, zero_point


def _reduce_axes(shape: tuple, axis: int | None, group_size: int | None, fname: str) -> Any:
    """``x`` reshaped for per-group statistics and the axes its min/max
    reduce: ``(reshape or None, axes)``."""
    if group_size is not None:
        if axis is not None:
            raise ValueError(f"{fname}: give axis (per channel) or group_size (per group along "
                             f"the last axis), not both")
        if not isinstance(group_size, int) or group_size < 1 or not shape or \
                shape[-1] % group_size:
            raise ValueError(f"{fname}: group_size must be a positive int dividing x's last "
                             f"axis, got {group_size!r} for shape {shape}")
        grouped = (*shape[:-1], shape[-1] // group_size, group_size)
        return grouped, (len(grouped) - 1,)
    if axis is None:
        return None, tuple(range(len(shape)))
    ax = normalize_axis(axis, len(shape), fname)
    return None, tuple(a for a in range(len(shape)) if a != ax)


def fake_quantize(x: Any, *, bits: int = 8, axis: int | None = None,
                  group_size: int | None = None, symmetric: bool = True, scale: Any = None,
                  zero_point: Any = None) -> Any:
    """``x`` quantized to ``bits``-bit integers and back: ``(clip(round(x /
    scale) + zero_point, qmin, qmax) - zero_point) * scale``, with a
    straight-through gradient (the cotangent where ``x`` is inside the
    grid's range, 0 outside), as ``torch.fake_quantize_per_tensor_affine``.

    ``scale`` and ``zero_point`` (broadcasting against ``x``) default to
    ``quantization_params`` of ``x``'s own min and max (not differentiated),
    per tensor (``axis=None``), per channel along ``axis``, or per group of
    ``group_size`` along the last axis. ``symmetric``: signed integers and
    zero point 0; else unsigned with a zero point. Rounding is half to even.

    >>> import ftorch.nn.functional as F, mlx.core as mx
    >>> w = mx.array([[0.1, -0.5, 0.33], [2.0, 1.0, -4.0]])
    >>> F.fake_quantize(w, bits=4, axis=0).tolist()
    [[0.1333..., -0.4666..., 0.3333...], [2.1333..., 1.0666..., -3.7333...]]
    """
    fname = "fake_quantize"
    x = fnp.asarray(x)
    shape, dtype = aval_of(x)
    if not is_floating(dtype):
        raise TypeError(f"{fname}: x must be floating, got {dtype}")
    qmin, qmax = quantization_range(bits, symmetric, fname)
    grouped, axes = _reduce_axes(shape, axis, group_size, fname)
    xg = fnp.reshape(x, grouped) if grouped is not None else x
    if scale is None:
        if zero_point is not None:
            raise ValueError(f"{fname}: zero_point needs scale")
        stats = fnp.stop_gradient(xg)
        scale, zero_point = quantization_params(
            fnp.min(stats, axis=axes, keepdims=True), fnp.max(stats, axis=axes, keepdims=True),
            bits=bits, symmetric=symmetric)
    else:
        scale = fnp.stop_gradient(fnp.asarray(scale))
        zero_point = fnp.zeros_like(scale) if zero_point is None else fnp.stop_gradient(
            fnp.asarray(zero_point))
        if fnp.ndim(scale) == 0 and isinstance(scale, mx.array) and scale.item() <= 0:
            raise ValueError(f"{fname}: scale must be positive, got {scale.item()}")
    q = fnp.round(xg / scale) + zero_point
    inside = (q >= qmin) & (q <= qmax)
    dequantized = fnp.stop_gradient((fnp.clip(q, qmin, qmax) - zero_point) * scale)
    # Straight through inside the range; nothing flows outside it.
    out = fnp.where(inside, xg + fnp.stop_gradient(dequantized - xg), dequantized)
    out = fnp.reshape(out, shape) if grouped is not None else out
    return fnp.astype(out, dtype)


def _scale_gradient(x: Any, factor: float) -> Any:
    """``x`` whose gradient is multiplied by ``factor`` (its value unchanged)."""
    return fnp.stop_gradient(x - x * factor) + x * factor


def fake_quantize_lsq(x: Any, step: Any, *, bits: int = 8, symmetric: bool = True,
                      grad_scale: float | None = None) -> Any:
    """Fake quantization with a learned step size (LSQ, Esser et al. 2019):
    ``round(clip(x / step, -Q_n, Q_p)) * step``, ``step`` a trainable
    positive array broadcasting against ``x`` (one per tensor or per channel).

    Gradients: straight through to ``x`` inside the range; to ``step``,
    LSQ's ``round(x/s) - x/s`` inside and ``-Q_n`` or ``Q_p`` at the clip,
    times ``grad_scale`` (default ``1 / sqrt(n * Q_p)``, ``n`` the elements
    per step, the paper's choice).

    >>> import ftorch as ft, ftorch.nn.functional as F, mlx.core as mx
    >>> x = mx.array([0.3, -0.8, 5.0])
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
    if grad_scale is None:
        per_step = max(1, x.size // max(1, step.size))
        grad_scale = 1.0 / (per_step * qmax) ** 0.5
    s = _scale_gradient(step, grad_scale)
    v = fnp.clip(x / s, qmin, qmax)
    rounded = v + fnp.stop_gradient(fnp.round(v) - v)
    return rounded * s
