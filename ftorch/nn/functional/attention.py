"""Scaled dot-product attention, as ``mlx.core.fast.scaled_dot_product_attention``.

>>> import ftorch.nn.functional as F, mlx.core as mx
>>> q = k = v = mx.ones((1, 2, 3, 4))
>>> F.scaled_dot_product_attention(q, k, v).shape
(1, 2, 3, 4)
"""

from __future__ import annotations

import math
from typing import Any

import mlx.core as mx
import numpy as np

from ftorch import numpy as fnp
from ftorch.core import is_floating
from ftorch.nn.functional.activations import softmax
from ftorch.nn.functional.normalization import stats_input
from ftorch.primitives.creation import static_number

__all__ = ["scaled_dot_product_attention"]

# ----------------------------------------------------------------------------
# Attention
# ----------------------------------------------------------------------------


def _check_attention_shapes(q: Any, k: Any, v: Any) -> int:
    """The number of query heads per key/value head; clear errors for
    shapes ``scaled_dot_product_attention`` cannot combine."""
    fname = "scaled_dot_product_attention"
    shapes = {"q": tuple(q.shape), "k": tuple(k.shape), "v": tuple(v.shape)}
    if not q.ndim == k.ndim == v.ndim >= 3:
        raise ValueError(f"{fname}: q, k and v must have the same ndim, at least 3 "
                         f"((B, H, L, D) or (H, L, D)), got shapes {shapes}")
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"{fname}: q and k must have the same head dimension D (last axis), "
                         f"got shapes {shapes}")
    if k.shape[-3:-1] != v.shape[-3:-1]:
        raise ValueError(f"{fname}: k and v must have the same heads and length (axes -3 and "
                         f"-2), got shapes {shapes}")
    h, h_kv = q.shape[-3], k.shape[-3]
    if h_kv == 0 or h % h_kv:
        raise ValueError(f"{fname}: the {h} query heads must be a multiple of the {h_kv} "
                         f"key/value heads, got shapes {shapes}")
    try:
        np.broadcast_shapes(q.shape[:-3], k.shape[:-3], v.shape[:-3])
    except ValueError:
        raise ValueError(f"{fname}: the batch axes of q, k and v do not broadcast, got shapes "
                         f"{shapes}") from None
    return h // h_kv


def _combine_masks(scores: Any, mask: Any, causal: bool) -> Any:
    """``scores`` with a boolean mask (False: the finite minimum, as MLX)
    or an additive one applied, and the lower-right causal mask."""
    fname = "scaled_dot_product_attention"
    lq, lk = scores.shape[-2:]
    low = float(mx.finfo(scores.dtype).min)
    if causal:
        allowed = mx.arange(lq)[:, None] + (lk - lq) >= mx.arange(lk)[None]
        scores = fnp.where(allowed, scores, low)
    if mask is None:
        return scores
    mask = fnp.asarray(mask)
    try:
        fits = mask.ndim <= scores.ndim and np.broadcast_shapes(
            tuple(mask.shape), tuple(scores.shape)) == tuple(scores.shape)
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"{fname}: mask of shape {tuple(mask.shape)} does not broadcast "
                         f"against the scores' shape {tuple(scores.shape)} (B, H, L_q, L_kv)")
    if mask.dtype == mx.bool_:
        return fnp.where(mask, scores, low)
    if not is_floating(mask.dtype):
        raise TypeError(f"{fname}: mask must be boolean (True: attend) or an additive float "
                        f"array, got dtype {mask.dtype}")
    return fnp.add(scores, fnp.astype(mask, scores.dtype))


def scaled_dot_product_attention(q: Any, k: Any, v: Any, *, scale: float | None = None,
                                 mask: Any = None, is_causal: bool = False) -> Any:
    """Multi-head attention ``softmax(scale * q @ k^T + mask) @ v`` per head,
    as ``mlx.core.fast.scaled_dot_product_attention``, composed from ftorch
    ops (so it differentiates, vmaps and jits).

    Multi-query and grouped-query attention: ``k`` and ``v`` may have fewer
    heads ``H_kv`` dividing ``H``; query head ``h`` uses key/value head
    ``h // (H / H_kv)`` (do not tile ``k`` and ``v``). The softmax is
    computed in float32 for float16/bfloat16 inputs, as MLX does.

    Args:
        q: queries ``(B, H, L_q, D)`` (any number of batch axes, or none).
        k: keys ``(B, H_kv, L_kv, D)``.
        v: values ``(B, H_kv, L_kv, D_v)``.
        scale: multiplies the scores. Default: ``1 / sqrt(D)``.
        mask: optional, broadcasting against ``(B, H, L_q, L_kv)``: boolean
            (True: attend; a masked score becomes the dtype's finite minimum,
            so a row with nothing to attend averages ``v``, as in MLX) or
            additive (float, added to the scores); ``"causal"`` is
            ``is_causal=True``, MLX's spelling.
        is_causal: apply the causal mask, aligned lower-right as MLX's
            ``"causal"``: query ``i`` attends key ``j`` when
            ``j <= i + L_kv - L_q``. Combines with ``mask``.

    Returns:
        ``(B, H, L_q, D_v)``.

    >>> import ftorch.nn.functional as F, mlx.core as mx
    >>> q = k = mx.zeros((1, 1, 2, 4))
    >>> v = mx.array([[[[1.0], [3.0]]]])
    >>> F.scaled_dot_product_attention(q, k, v).tolist()
    [[[[2.0], [2.0]]]]
    >>> F.scaled_dot_product_attention(q, k, v, is_causal=True).tolist()
    [[[[1.0], [2.0]]]]
    """
    fname = "scaled_dot_product_attention"
    q, k, v = fnp.asarray(q), fnp.asarray(k), fnp.asarray(v)
    if isinstance(mask, str):
        if mask != "causal":
            raise ValueError(f"{fname}: the only mask string is 'causal', got {mask!r}")
        mask, is_causal = None, True
    if not isinstance(is_causal, bool):
        raise TypeError(f"{fname}: is_causal must be True or False, got {is_causal!r}")
    rep = _check_attention_shapes(q, k, v)
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else static_number(
        scale, fname, "scale")
    h, lq, lk = q.shape[-3], q.shape[-2], k.shape[-2]
    qs = fnp.multiply(q, scale)
    if rep > 1:  # (..., H_kv, rep, L_q, D) against (..., H_kv, 1, L_kv, D)
        qs = fnp.reshape(qs, (*q.shape[:-3], h // rep, rep, lq, q.shape[-1]))
        k, v = fnp.expand_dims(k, -3), fnp.expand_dims(v, -3)
    scores = fnp.matmul(qs, fnp.swapaxes(k, -1, -2))
    if rep > 1:
        scores = fnp.reshape(scores, (*scores.shape[:-4], h, lq, lk))
    scores = _combine_masks(stats_input(scores), mask, is_causal)
    p = fnp.astype(softmax(scores, axis=-1), fnp.result_type(q, k, v))
    if rep > 1:
        p = fnp.reshape(p, (*p.shape[:-3], h // rep, rep, lq, lk))
    out = fnp.matmul(p, v)
    if rep > 1:
        out = fnp.reshape(out, (*out.shape[:-4], h, lq, out.shape[-1]))
    return out
