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

__all__ = ["scaled_dot_product_attention", "dot_product_attention"]

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


# ----------------------------------------------------------------------------
# jax.nn.dot_product_attention: (B, T, N, H) layout
# ----------------------------------------------------------------------------


def _attention_mask(mask: Any, shape: tuple[int, ...], is_causal: bool, query_seq_lengths: Any,
                    key_value_seq_lengths: Any, local_window_size: Any) -> Any:
    """Where each query (axis -2) may attend each key (axis -1), broadcasting
    against the logits' ``shape`` ``(B, N, T, S)``; None when everywhere."""
    fname = "dot_product_attention"
    t, s = shape[-2:]
    rows, cols = mx.arange(t)[:, None], mx.arange(s)[None]
    allowed = None

    def both(a, b):
        return b if a is None else fnp.logical_and(a, b)

    if mask is not None:
        mask = fnp.asarray(mask)
        if mask.dtype != mx.bool_:
            raise TypeError(f"{fname}: mask must be boolean (True: attend), got dtype "
                            f"{mask.dtype}; pass an additive mask as bias")
        allowed = mask
    if is_causal:
        allowed = both(allowed, rows >= cols)
    if local_window_size is not None:
        left, right = ((local_window_size, local_window_size)
                       if isinstance(local_window_size, int) else local_window_size)
        allowed = both(allowed, (cols >= rows - left) & (cols <= rows + right))
    for lengths, positions in ((query_seq_lengths, rows), (key_value_seq_lengths, cols)):
        if lengths is not None:
            lengths = fnp.asarray(lengths)
            if lengths.ndim != 1 or lengths.shape[0] != shape[0]:
                raise ValueError(f"{fname}: sequence lengths must have shape (B,) = "
                                 f"({shape[0]},), got {tuple(lengths.shape)}")
            within = fnp.less(positions, fnp.reshape(lengths, (-1, 1, 1, 1)))
            allowed = both(allowed, within)
    return allowed


def dot_product_attention(query: Any, key: Any, value: Any, bias: Any = None, mask: Any = None,
                          *, scale: float | None = None, is_causal: bool = False,
                          query_seq_lengths: Any = None, key_value_seq_lengths: Any = None,
                          local_window_size: int | tuple[int, int] | None = None,
                          implementation: str | None = None,
                          return_residual: bool = False) -> Any:
    """Multi-head attention ``softmax(scale * q k^T + bias, masked) v`` in
    JAX's layout, as ``jax.nn.dot_product_attention``; composed from ftorch
    ops (the logits and softmax in float32 for half-precision inputs).

    Args:
        query: ``(B, T, N, H)`` (or ``(T, N, H)``).
        key: ``(B, S, K, H)``; ``N`` must be a multiple of ``K`` (grouped-query
            attention: query head ``n`` uses key/value head ``n // (N / K)``).
        value: ``(B, S, K, H)``.
        bias: added to the logits, broadcasting against ``(B, N, T, S)``.
        mask: boolean, broadcasting against ``(B, N, T, S)``; True attends.
        scale: multiplies the logits. Default: ``1 / sqrt(H)``.
        is_causal: query ``i`` attends keys ``j <= i`` (aligned at the start).
        query_seq_lengths: ``(B,)``: queries past each length give zeros.
        key_value_seq_lengths: ``(B,)``: keys past each length are not attended.
        local_window_size: ``w`` or ``(left, right)``: query ``i`` attends
            keys ``i - left`` to ``i + right``.
        implementation: ``None`` or ``"xla"`` (the same here); ``"cudnn"``
            is a ``ValueError`` (no cuDNN on MLX).
        return_residual: only False (the default) is supported.

    A query that may attend nothing averages the values, as in JAX (its
    logits all become one large negative number).

    Returns:
        ``(B, T, N, H)`` (or ``(T, N, H)``), of ``query``'s dtype.

    >>> import ftorch.nn.functional as F, mlx.core as mx
    >>> q = k = mx.zeros((1, 2, 1, 4))
    >>> v = mx.array([1.0, 3.0]).reshape(1, 2, 1, 1) * mx.ones((1, 2, 1, 4))
    >>> F.dot_product_attention(q, k, v, is_causal=True)[0, :, 0, 0].tolist()
    [1.0, 2.0]
    """
    fname = "dot_product_attention"
    if implementation not in (None, "xla"):
        raise ValueError(f"{fname}: implementation must be None or 'xla' (MLX has no "
                         f"{implementation!r}), got {implementation!r}")
    if return_residual:
        raise NotImplementedError(f"{fname}: return_residual=True is not supported")
    q, k, v = fnp.asarray(query), fnp.asarray(key), fnp.asarray(value)
    if not q.ndim == k.ndim == v.ndim or q.ndim not in (3, 4):
        raise ValueError(f"{fname}: query, key and value must all be (B, T, N, H) or all "
                         f"(T, N, H), got shapes {tuple(q.shape)}, {tuple(k.shape)} and "
                         f"{tuple(v.shape)}")
    unbatched = q.ndim == 3
    if unbatched:
        q, k, v = q[None], k[None], v[None]
    b, t, n, h = q.shape
    s, kv_heads = k.shape[1], k.shape[2]
    if k.shape != v.shape or k.shape[0] != b or k.shape[3] != h or n % kv_heads:
        raise ValueError(f"{fname}: key and value must be (B, S, K, H) with query's B and H "
                         f"and K dividing its N heads, got query {tuple(q.shape)}, key "
                         f"{tuple(k.shape)} and value {tuple(v.shape)}")
    scale = 1.0 / math.sqrt(h) if scale is None else static_number(scale, fname, "scale")
    g = n // kv_heads
    qg = fnp.reshape(q, (b, t, kv_heads, g, h))
    logits = fnp.einsum("btkgh,bskh->bkgts", stats_input(qg), stats_input(k))
    logits = fnp.reshape(fnp.multiply(logits, scale), (b, n, t, s))
    if bias is not None:
        logits = fnp.add(logits, fnp.astype(fnp.asarray(bias), logits.dtype))
    allowed = _attention_mask(mask, logits.shape, is_causal, query_seq_lengths,
                              key_value_seq_lengths, local_window_size)
    if allowed is not None:
        logits = fnp.where(allowed, logits, -0.7 * float(mx.finfo(logits.dtype).max))
    probs = fnp.astype(softmax(logits, axis=-1), v.dtype)
    probs = fnp.reshape(probs, (b, kv_heads, g, t, s))
    out = fnp.reshape(fnp.einsum("bkgts,bskh->btkgh", probs, v), (b, t, n, h))
    if query_seq_lengths is not None:  # queries past the length give zeros, as JAX
        valid = mx.arange(t)[None] < fnp.reshape(fnp.asarray(query_seq_lengths), (-1, 1))
        out = fnp.where(fnp.reshape(valid, (b, t, 1, 1)), out, 0)
    out = fnp.astype(out, q.dtype)
    return out[0] if unbatched else out
