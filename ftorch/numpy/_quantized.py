"""Quantized matrices, as MLX's ``mx.quantize``, ``mx.dequantize`` and
``mx.quantized_matmul`` (same arguments, defaults and values, bit for bit),
differentiable with respect to the activations and, in the affine mode, the
scales and biases (see ``ftorch.primitives.quantized``), and batchable over
any operand.

>>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
>>> w = mx.random.normal((8, 64), key=mx.random.key(0))
>>> w_q, scales, biases = fnp.quantize(w, bits=8)
>>> x = mx.ones((2, 64))
>>> y = fnp.quantized_matmul(x, w_q, scales, biases, bits=8)
>>> bool(mx.allclose(y, x @ w.T, atol=0.1))
True
>>> ft.grad(lambda s: fnp.quantized_matmul(x, w_q, s, biases, bits=8).sum())(scales).shape
(8, 1)
"""

from __future__ import annotations

import math
from typing import Any

import mlx.core as mx

import ftorch.primitives as lax
from ftorch.core import aval_of, is_floating
from ftorch.numpy import _creation
from ftorch.primitives.quantized import QUANTIZATION_MODES

__all__ = ["quantize", "dequantize", "quantized_matmul"]

_QUANTIZABLE = (mx.float32, mx.float16, mx.bfloat16)


def quantization_params(group_size: int | None, bits: int | None, mode: str,
                        fname: str) -> tuple[int, int]:
    """``(group_size, bits)`` for ``mode``, with MLX's defaults for ``None``;
    a ``ValueError`` naming the argument MLX's kernels do not take."""
    if mode not in QUANTIZATION_MODES:
        raise ValueError(f"{fname}: mode must be one of {sorted(QUANTIZATION_MODES)}, "
                         f"got {mode!r}")
    spec = QUANTIZATION_MODES[mode]
    default_group, default_bits = spec["default"]
    group_size = default_group if group_size is None else group_size
    bits = default_bits if bits is None else bits
    if type(group_size) is not int or group_size not in spec["group_sizes"]:
        raise ValueError(f"{fname}: group_size must be one of {spec['group_sizes']} in the "
                         f"{mode!r} mode, got {group_size!r}")
    if type(bits) is not int or bits not in spec["bits"]:
        raise ValueError(f"{fname}: bits must be one of {spec['bits']} in the {mode!r} mode, "
                         f"got {bits!r}")
    return group_size, bits


def _check_packed(w: Any, scales: Any, biases: Any, group_size: int, bits: int, mode: str,
                  fname: str) -> int:
    """Check a quantized matrix's parts against each other; its unpacked
    last-axis length."""
    w_shape, w_dtype = aval_of(w)
    if w_dtype != mx.uint32:
        raise TypeError(f"{fname}: w must be the packed uint32 array quantize returns, got "
                        f"dtype {w_dtype}")
    if len(w_shape) < 2:
        raise ValueError(f"{fname}: w must have at least 2 dimensions, got shape {w_shape}")
    n = w_shape[-1] * 32 // bits
    groups = (*w_shape[:-1], n // group_size)
    if n % group_size:
        raise ValueError(f"{fname}: w's last axis unpacks to {n} values at bits={bits}, which "
                         f"group_size={group_size} does not divide")
    s_shape, s_dtype = aval_of(scales)
    if s_shape != groups:
        raise ValueError(f"{fname}: scales must have shape {groups} (one per group of "
                         f"{group_size} of w's {n} columns at bits={bits}), got {s_shape}")
    if QUANTIZATION_MODES[mode]["biases"]:
        if biases is None:
            raise ValueError(f"{fname}: the {mode!r} mode needs biases")
        if aval_of(biases).shape != groups:
            raise ValueError(f"{fname}: biases must have shape {groups}, like scales, got "
                             f"{aval_of(biases).shape}")
        if not is_floating(s_dtype):
            raise TypeError(f"{fname}: scales must be floating in the 'affine' mode, got "
                            f"{s_dtype}")
    elif biases is not None:
        raise ValueError(f"{fname}: the {mode!r} mode has no biases; pass biases=None")
    elif s_dtype != mx.uint8:
        raise TypeError(f"{fname}: the {mode!r} mode keeps its scales as uint8, got {s_dtype}")
    return n


def quantize(w: Any, group_size: int | None = None, bits: int | None = None,
             mode: str = "affine") -> tuple:
    """Quantize ``w``'s last axis in groups of ``group_size``, as
    ``mx.quantize``: ``(w_q, scales, biases)`` in the ``"affine"`` mode,
    ``(w_q, scales)`` in ``"mxfp4"``, ``"mxfp8"`` and ``"nvfp4"``.

    ``w`` has at least two dimensions, is float32, float16 or bfloat16, and
    its last axis is a multiple of ``group_size``. Rounding has no
    derivative: the result carries none (for quantization-aware training,
    use ``ftorch.nn.functional``'s fake quantization).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> w_q, scales, biases = fnp.quantize(mx.ones((4, 64)), group_size=32, bits=4)
    >>> w_q.shape, w_q.dtype, scales.shape
    ((4, 8), mlx.core.uint32, (4, 2))
    """
    group_size, bits = quantization_params(group_size, bits, mode, "quantize")
    w = _creation.asarray(w)
    shape, dtype = aval_of(w)
    if dtype not in _QUANTIZABLE:
        raise TypeError(f"quantize: w must be float32, float16 or bfloat16, got {dtype}")
    if len(shape) < 2:
        raise ValueError(f"quantize: w must have at least 2 dimensions, got shape {shape}")
    if shape[-1] % group_size:
        raise ValueError(f"quantize: group_size={group_size} must divide w's last axis, of "
                         f"length {shape[-1]} (shape {shape})")
    if mode == "nvfp4" and math.prod(shape) % 32:
        # MLX's kernel packs whole blocks of 32 values (and fails on a reshape otherwise).
        raise ValueError(f"quantize: the 'nvfp4' mode needs w's size to be a multiple of 32, "
                         f"got shape {shape}")
    return tuple(lax.quantize(w, group_size=group_size, bits=bits, mode=mode))


def dequantize(w: Any, scales: Any, biases: Any = None, group_size: int | None = None,
               bits: int | None = None, mode: str = "affine", dtype: Any = None) -> Any:
    """The matrix ``quantize`` packed: ``scales * q + biases`` per group, as
    ``mx.dequantize``. ``dtype`` defaults to the scales' (affine) or
    bfloat16 (MLX's default for the 8-bit scales of the other modes).

    Differentiable with respect to ``scales`` and ``biases`` (affine).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> w = mx.linspace(-1, 1, 64).reshape(1, 64)
    >>> w_q, scales, biases = fnp.quantize(w, bits=8)
    >>> float(mx.abs(fnp.dequantize(w_q, scales, biases, bits=8) - w).max()) < 0.005
    True
    """
    group_size, bits = quantization_params(group_size, bits, mode, "dequantize")
    _check_packed(w, scales, biases, group_size, bits, mode, "dequantize")
    if dtype is None:
        dtype = aval_of(scales).dtype if biases is not None else mx.bfloat16
    return lax.dequantize(w, scales, biases, group_size=group_size, bits=bits, mode=mode,
                          dtype=dtype)


def quantized_matmul(x: Any, w: Any, scales: Any, biases: Any = None, transpose: bool = True,
                     group_size: int | None = None, bits: int | None = None,
                     mode: str = "affine") -> Any:
    """``x @ dequantize(w).T`` (``transpose``, the layout of a linear
    layer's weight) or ``x @ dequantize(w)``, as ``mx.quantized_matmul``,
    without forming the dense matrix.

    Differentiable with respect to ``x`` and, in the affine mode, ``scales``
    and ``biases``. Leading axes broadcast; under ``vmap`` a batch of
    weights is MLX's ``gather_qmm``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> w_q, scales, biases = fnp.quantize(mx.ones((3, 64)))
    >>> fnp.quantized_matmul(mx.ones((2, 64)), w_q, scales, biases).tolist()
    [[64.0, 64.0, 64.0], [64.0, 64.0, 64.0]]
    """
    group_size, bits = quantization_params(group_size, bits, mode, "quantized_matmul")
    if not isinstance(transpose, bool):
        raise TypeError(f"quantized_matmul: transpose must be a bool, got {transpose!r}")
    n = _check_packed(w, scales, biases, group_size, bits, mode, "quantized_matmul")
    x = _creation.asarray(x)
    x_shape, x_dtype = aval_of(x)
    if not is_floating(x_dtype):
        raise TypeError(f"quantized_matmul: x must be floating, got {x_dtype}")
    inner = n if transpose else aval_of(w).shape[-2]
    if not x_shape or x_shape[-1] != inner:
        raise ValueError(
            f"quantized_matmul: x's last axis must be {inner}, the weight's "
            f"{'unpacked columns' if transpose else 'rows'} (transpose={transpose}), "
            f"got x of shape {x_shape}")
    return lax.quantized_matmul(x, w, scales, biases, transpose=transpose,
                                group_size=group_size, bits=bits, mode=mode)
