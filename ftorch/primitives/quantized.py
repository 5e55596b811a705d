"""Quantized weights: ``quantize``, ``dequantize`` and ``quantized_matmul``,
on MLX's kernels of the same names.

A quantized matrix is MLX's triple: the packed integers ``w`` (uint32, each
holding ``32 // bits`` values of a row), one ``scale`` per ``group_size``
consecutive values of a row and, in the ``"affine"`` mode, one ``bias``
per group, so that a value is ``scale * q + bias``. The floating-point
modes (``"mxfp4"``, ``"mxfp8"``, ``"nvfp4"``) keep their scales as 8-bit
floats in uint8 and have no bias.

Derivatives: ``dequantize`` and ``quantized_matmul`` are linear in the
scales and biases together (``scale * q + bias``) and ``quantized_matmul``
is linear in ``x``, so their JVPs are the same ops applied to the tangents
and their VJPs reduce a dense cotangent per group. The packed integers and
the 8-bit scales are integer arrays: they never carry a derivative, and
asking ``grad`` for one is the usual error on integer inputs. ``quantize``
rounds, so it is non-differentiable (a straight-through estimator for
quantization-aware training is ``ftorch.nn.functional``'s fake quantization).

Batching: every leading axis of these ops is a batch axis already (MLX
broadcasts them, and a stack of quantized matrices is MLX's ``gather_qmm``
case), so the rules move the vmapped axis to the front.

>>> import ftorch.primitives as prims, mlx.core as mx
>>> w = mx.arange(64, dtype=mx.float32).reshape(1, 64) * (255 / 63)
>>> q, scales, biases = prims.quantize(w, group_size=64, bits=8, mode="affine")
>>> prims.dequantize(q, scales, biases, group_size=64, bits=8, mode="affine",
...                  dtype=mx.float32)[0, :3].tolist()
[0.0, 4.0, 8.0]
"""

from __future__ import annotations

from typing import Any

import mlx.core as mx

import ftorch.primitives as lax
from ftorch.core import Primitive, aval_of
from ftorch.primitives._rules import add_tangents, move_bdim, mT, nondifferentiable, unbroadcast

__all__ = ["quantize", "dequantize", "quantized_matmul", "QUANTIZATION_MODES"]

#: Each mode MLX has: the group sizes and bits it takes, its defaults
#: ``(group_size, bits)``, and whether it has biases.
QUANTIZATION_MODES: dict[str, dict[str, Any]] = {
    "affine": {"group_sizes": (32, 64, 128), "bits": (1, 2, 3, 4, 5, 6, 8),
               "default": (64, 4), "biases": True},
    "mxfp4": {"group_sizes": (32,), "bits": (4,), "default": (32, 4), "biases": False},
    "mxfp8": {"group_sizes": (32,), "bits": (8,), "default": (32, 8), "biases": False},
    "nvfp4": {"group_sizes": (16,), "bits": (4,), "default": (16, 4), "biases": False},
}


def _has_biases(mode: str) -> bool:
    return QUANTIZATION_MODES[mode]["biases"]


def _groups(x: Any, group_size: int) -> Any:
    """``x`` (..., n) as (..., n // group_size, group_size)."""
    shape = aval_of(x).shape
    return lax.reshape(x, (*shape[:-1], shape[-1] // group_size, group_size))


def _levels(w: Any, scales: Any, *, group_size: int, bits: int, mode: str, dtype: Any) -> Any:
    """The integer levels ``q`` of the packed ``w`` (affine), as ``dtype``:
    dequantizing with unit scales and zero biases. They do not depend on the
    scales, so the arrays standing in for them are constants."""
    shape = aval_of(scales).shape
    return dequantize(w, mx.ones(shape, dtype), mx.zeros(shape, dtype), group_size=group_size,
                      bits=bits, mode=mode, dtype=dtype)


def _batch_leading(vals, dims, axis_size):
    """Every operand with the vmapped axis in front (broadcast in where it
    was not batched), so MLX's broadcasting over leading axes applies."""
    return [move_bdim(v, d, 0, axis_size) for v, d in zip(vals, dims)]


# ----------------------------------------------------------------------------
# quantize
# ----------------------------------------------------------------------------


def _quantize_impl(w, *, group_size, bits, mode):
    return list(mx.quantize(w, group_size, bits, mode=mode))


quantize_p = Primitive("quantize", _quantize_impl, multiple_results=True)
nondifferentiable(quantize_p)


@quantize_p.def_batch
def _quantize_batch(vals, dims, axis_size, **params):
    # Rows are quantized independently: the vmapped axis is one more leading axis.
    (w,) = _batch_leading(vals, dims, axis_size)
    outs = quantize_p.bind(w, **params)
    return outs, [0] * len(outs)


def quantize(w: Any, *, group_size: int, bits: int, mode: str) -> list:
    """``[w_q, scales]`` (and ``biases`` in the affine mode) of ``w``'s
    last axis, as ``mx.quantize``; ``ftorch.numpy.quantize`` checks the
    arguments and calls this."""
    return quantize_p.bind(w, group_size=group_size, bits=bits, mode=mode)


# ----------------------------------------------------------------------------
# dequantize
# ----------------------------------------------------------------------------


def _dequantize_impl(w, scales, biases=None, *, group_size, bits, mode, dtype):
    if dtype == mx.float64 and not _has_biases(mode):
        # MLX's float64 output is wrong for the 8-bit-scale modes (mxfp8, nvfp4);
        # their values are exact in float32.
        out = mx.dequantize(w, scales, None, group_size, bits, mode=mode, dtype=mx.float32)
        return out.astype(mx.float64)
    return mx.dequantize(w, scales, biases, group_size, bits, mode=mode, dtype=dtype)


dequantize_p = Primitive("dequantize", _dequantize_impl)


@dequantize_p.def_jvp
def _dequantize_jvp(primals, tangents, **params):
    out = dequantize_p.bind(*primals, **params)
    if not _has_biases(params["mode"]) or all(t is None for t in tangents[1:]):
        return out, None  # integer scales: nothing differentiable
    w, scales, biases = primals
    _, ts, tb = tangents
    # scale * q + bias is linear in (scale, bias) together.
    zeros = mx.zeros(aval_of(scales).shape, aval_of(scales).dtype)
    return out, dequantize_p.bind(w, zeros if ts is None else ts, zeros if tb is None else tb,
                                  **params)


@dequantize_p.def_vjp
def _dequantize_vjp(ct, out, w, scales, biases=None, *, needed, group_size, bits, mode, dtype):
    if biases is None:
        return (None,) * 2
    grouped = _groups(ct, group_size)
    ct_scales = ct_biases = None
    if needed[1]:
        q = _groups(_levels(w, scales, group_size=group_size, bits=bits, mode=mode,
                            dtype=aval_of(ct).dtype), group_size)
        ct_scales = unbroadcast(lax.sum(lax.multiply(grouped, q), (len(q.shape) - 1,)), scales)
    if needed[2]:
        ct_biases = unbroadcast(lax.sum(grouped, (len(grouped.shape) - 1,)), biases)
    return None, ct_scales, ct_biases


@dequantize_p.def_batch
def _dequantize_batch(vals, dims, axis_size, **params):
    return dequantize_p.bind(*_batch_leading(vals, dims, axis_size), **params), 0


def dequantize(w: Any, scales: Any, biases: Any = None, *, group_size: int, bits: int,
               mode: str, dtype: Any) -> Any:
    """``scales * q + biases`` per group of ``w``'s last axis, as
    ``mx.dequantize``; ``ftorch.numpy.dequantize`` checks the arguments and
    calls this."""
    operands = (w, scales) if biases is None else (w, scales, biases)
    return dequantize_p.bind(*operands, group_size=group_size, bits=bits, mode=mode,
                             dtype=dtype)


# ----------------------------------------------------------------------------
# quantized_matmul
# ----------------------------------------------------------------------------


def _quantized_matmul_impl(x, w, scales, biases=None, *, transpose, group_size, bits, mode):
    if x.dtype == mx.float64 or scales.dtype == mx.float64:
        # MLX's kernel has no float64 (it raises, or with float64 scales returns
        # garbage): dequantize, which does, and multiply densely.
        dense = _dequantize_impl(w, scales, biases, group_size=group_size, bits=bits, mode=mode,
                                 dtype=mx.float64)
        return mx.matmul(x, mx.swapaxes(dense, -1, -2) if transpose else dense)
    return mx.quantized_matmul(x, w, scales, biases, transpose, group_size, bits, mode=mode)


quantized_matmul_p = Primitive("quantized_matmul", _quantized_matmul_impl)


@quantized_matmul_p.def_jvp
def _quantized_matmul_jvp(primals, tangents, **params):
    x, w, *quant = primals
    tx, _, *tquant = tangents
    out = quantized_matmul_p.bind(*primals, **params)
    t_out = None if tx is None else quantized_matmul_p.bind(tx, w, *quant, **params)
    if _has_biases(params["mode"]) and any(t is not None for t in tquant):
        # x @ (scale * q + bias).T is linear in (scale, bias) together.
        zeros = mx.zeros(aval_of(quant[0]).shape, aval_of(quant[0]).dtype)
        ts, tb = (zeros if t is None else t for t in tquant)
        t_out = add_tangents(t_out, quantized_matmul_p.bind(x, w, ts, tb, **params))
    return out, t_out


def _weight_cotangent(ct, x, w_aval, transpose):
    """The cotangent of the dense weight (``w``'s leading axes, then its
    matrix) of ``y = x @ W.T`` (``transpose``) or ``y = x @ W``."""
    x_shape, ct_shape = aval_of(x).shape, aval_of(ct).shape
    if len(x_shape) == 1:  # a vector: a matrix of one row
        x_shape, ct_shape = (1, *x_shape), (*ct_shape[:-1], 1, ct_shape[-1])
        x, ct = lax.reshape(x, x_shape), lax.reshape(ct, ct_shape)
    if x_shape[:-2] != ct_shape[:-2]:  # x broadcast against w's leading axes
        x = lax.broadcast_to(x, (*ct_shape[:-2], *x_shape[-2:]))
    dense = lax.matmul(mT(ct), x) if transpose else lax.matmul(mT(x), ct)
    lead = len(aval_of(dense).shape) - len(w_aval)
    if lead:  # leading axes of x that w broadcast along
        dense = lax.sum(dense, tuple(range(lead)))
    extra = tuple(i for i, d in enumerate(w_aval[:-2]) if d == 1 and dense.shape[i] != 1)
    if extra:
        dense = lax.sum(dense, extra, True)
    return dense


@quantized_matmul_p.def_vjp
def _quantized_matmul_vjp(ct, out, x, w, scales, biases=None, *, needed, transpose, group_size,
                          bits, mode):
    quant = (scales,) if biases is None else (scales, biases)
    params = dict(group_size=group_size, bits=bits, mode=mode)
    ct_x = None
    if needed[0]:
        ct_x = unbroadcast(quantized_matmul_p.bind(ct, w, *quant, transpose=not transpose,
                                                   **params), x)
    ct_scales = ct_biases = None
    if biases is not None and (needed[2] or needed[3]):
        # The dense weight's cotangent, reduced per group as dequantize's VJP does.
        s_shape = aval_of(scales).shape
        w_shape = (*s_shape[:-1], s_shape[-1] * group_size)
        dense = _weight_cotangent(ct, x, w_shape, transpose)
        _, ct_scales, ct_biases = _dequantize_vjp(
            dense, None, w, scales, biases, needed=(False, needed[2], needed[3]),
            dtype=aval_of(dense).dtype, **params)
    return (ct_x, None, ct_scales) + ((ct_biases,) if biases is not None else ())


@quantized_matmul_p.def_batch
def _quantized_matmul_batch(vals, dims, axis_size, **params):
    x, *weights = vals
    x_dim, *w_dims = dims
    if all(d is None for d in w_dims):  # one weight for every example: x's rows
        x = move_bdim(x, x_dim, 0, axis_size)
        return quantized_matmul_p.bind(x, *weights, **params), 0
    # A stack of weights (MLX's gather_qmm case): line the vmapped axes up in
    # front and pad the per-example leading axes to one rank, which MLX's
    # broadcasting of leading axes then pairs.
    weights = _batch_leading(weights, w_dims, axis_size)
    x = move_bdim(x, x_dim, 0, axis_size)
    vector = len(aval_of(x).shape) == 2  # per example a vector (k,)
    if vector:
        x = lax.reshape(x, (axis_size, 1, aval_of(x).shape[-1]))
    x_rank, w_rank = len(aval_of(x).shape), len(aval_of(weights[0]).shape)
    if x_rank < w_rank:
        shape = aval_of(x).shape
        x = lax.reshape(x, (shape[0], *(1,) * (w_rank - x_rank), *shape[1:]))
    elif w_rank < x_rank:
        weights = [lax.reshape(v, (axis_size, *(1,) * (x_rank - w_rank),
                                   *aval_of(v).shape[1:])) for v in weights]
    out = quantized_matmul_p.bind(x, *weights, **params)
    if vector:
        shape = aval_of(out).shape
        out = lax.reshape(out, (*shape[:-2], shape[-1]))
    return out, 0


def quantized_matmul(x: Any, w: Any, scales: Any, biases: Any = None, *, transpose: bool,
                     group_size: int, bits: int, mode: str) -> Any:
    """``x @ dequantize(w).T`` (``transpose``) or ``x @ dequantize(w)``, as
    ``mx.quantized_matmul``; ``ftorch.numpy.quantized_matmul`` checks the
    arguments and calls this."""
    operands = (x, w, scales) if biases is None else (x, w, scales, biases)
    return quantized_matmul_p.bind(*operands, transpose=transpose, group_size=group_size,
                                   bits=bits, mode=mode)

