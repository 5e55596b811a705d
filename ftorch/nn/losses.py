"""Loss functions, as ``mlx.nn.losses``: the same names, arguments, default
``reduction`` of each (``"none"`` for most, ``"mean"`` for
``binary_cross_entropy``, ``l1_loss``, ``mse_loss``, ``smooth_l1_loss`` and
``gaussian_nll_loss``) and values; composed from ftorch ops, so every
transform applies. Logits go through ``log_softmax`` and ``softplus``, so
large ones stay finite.

``reduction`` is ``"none"`` (the per-element loss), ``"mean"`` or ``"sum"``
(over every element).

>>> import ftorch.nn.losses as losses, mlx.core as mx
>>> losses.mse_loss(mx.array([1.0, 2.0]), mx.array([1.0, 4.0])).item()
2.0
"""

from __future__ import annotations

import math
from typing import Any, Literal

import mlx.core as mx
import numpy as np

import ftorch.numpy as fnp
from ftorch.core import is_floating
from ftorch.nn.functional import log_softmax, softplus
from ftorch.primitives.creation import static_number
from ftorch.primitives.reduction import normalize_axis

__all__ = [
    "Reduction", "cross_entropy", "binary_cross_entropy", "nll_loss", "kl_div_loss",
    "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "log_cosh_loss",
    "gaussian_nll_loss", "hinge_loss", "margin_ranking_loss", "cosine_similarity_loss",
    "triplet_loss",
]

#: How a loss reduces its per-element values.
Reduction = Literal["none", "mean", "sum"]
_REDUCTIONS = ("none", "mean", "sum")


def _check_reduction(reduction: Any, fname: str) -> None:
    if not isinstance(reduction, str) or reduction not in _REDUCTIONS:
        raise ValueError(f"{fname}: reduction must be 'none', 'mean' or 'sum', got "
                         f"{reduction!r}")


def _reduce(loss: Any, reduction: str) -> Any:
    if reduction == "mean":
        return fnp.mean(loss)
    if reduction == "sum":
        return fnp.sum(loss)
    return loss


def _same_shape(fname: str, **arrays: Any) -> list[Any]:
    """The arrays (as arrays); they must all have the same shape."""
    out = [fnp.asarray(a) for a in arrays.values()]
    shapes = [tuple(a.shape) for a in out]
    if any(s != shapes[0] for s in shapes):
        described = ", ".join(f"{n} {s}" for n, s in zip(arrays, shapes))
        raise ValueError(f"{fname}: the shapes must match, got {described}")
    return out


def _broadcasting(fname: str, **arrays: Any) -> list[Any]:
    """The arrays (as arrays); their shapes must broadcast together (as in
    ``mlx.nn.losses``, where these losses broadcast)."""
    out = [fnp.asarray(a) for a in arrays.values()]
    shapes = [tuple(a.shape) for a in out]
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        described = ", ".join(f"{n} {s}" for n, s in zip(arrays, shapes))
        raise ValueError(f"{fname}: the shapes must broadcast together, got {described}"
                         ) from None
    return out


def _weighted(loss: Any, weights: Any, fname: str) -> Any:
    if weights is None:
        return loss
    weights = fnp.asarray(weights)
    if tuple(weights.shape) != tuple(loss.shape):
        raise ValueError(f"{fname}: weights of shape {tuple(weights.shape)} must have the "
                         f"loss's shape {tuple(loss.shape)}")
    return fnp.multiply(loss, weights)


def _nonnegative(value: Any, fname: str, name: str) -> float:
    value = static_number(value, fname, name)
    if value < 0:
        raise ValueError(f"{fname}: {name} must not be negative, got {value}")
    return value


# ----------------------------------------------------------------------------
# Classification
# ----------------------------------------------------------------------------


def cross_entropy(logits: Any, targets: Any, weights: Any = None, axis: int = -1,
                  label_smoothing: float = 0.0, reduction: Reduction = "none") -> Any:
    """The cross entropy of ``softmax(logits)`` along ``axis`` against
    ``targets``, as ``mlx.nn.losses.cross_entropy``:

    ``loss = -(1 - s) * log_softmax(logits)[target] - s * mean(log_softmax(logits))``

    with ``s = label_smoothing``; for probability targets ``p``,
    ``-(1 - s) * sum(p * log_softmax(logits)) - s * mean(log_softmax(logits))``
    (as PyTorch and optax; mlx.nn's shortcut formula gives the same value
    when ``p`` sums to 1, but not otherwise, and a gradient in ``p`` that
    differs from ``-log_softmax(logits)`` along the ones vector).

    Args:
        logits: unnormalised scores, e.g. ``(N, C)``.
        targets: class indices (integers, ``logits``' shape without ``axis``;
            a class outside ``[-C, C)`` gives a nan loss) or probabilities
            (``logits``' shape; told apart by their ndim, as MLX does).
        weights: optional, the loss's shape: multiplies each loss.
        axis: the class axis. Default: ``-1``.
        label_smoothing: in ``[0, 1)``. Default: ``0``.
        reduction: ``"none"`` | ``"mean"`` | ``"sum"``. Default: ``"none"``.

    >>> import ftorch.nn.losses as losses, mlx.core as mx
    >>> logits = mx.array([[2.0, -1.0], [-1.0, 2.0]])
    >>> [round(v, 4) for v in losses.cross_entropy(logits, mx.array([0, 1])).tolist()]
    [0.0486, 0.0486]
    >>> round(losses.cross_entropy(logits, mx.array([[1.0, 0.0], [0.0, 1.0]]),
    ...                            reduction="mean").item(), 4)
    0.0486
    """
    fname = "cross_entropy"
    _check_reduction(reduction, fname)
    s = static_number(label_smoothing, fname, "label_smoothing")
    if not 0 <= s < 1:
        raise ValueError(f"{fname}: label_smoothing must be in [0, 1), got {s}")
    logits, targets = fnp.asarray(logits), fnp.asarray(targets)
    if logits.ndim == 0:
        raise ValueError(f"{fname}: logits must have a class axis, got a 0-d array")
    ax = normalize_axis(axis, logits.ndim, fname)
    as_probs = targets.ndim == logits.ndim
    index_shape = tuple(d for i, d in enumerate(logits.shape) if i != ax)
    if tuple(targets.shape) != (tuple(logits.shape) if as_probs else index_shape):
        raise ValueError(
            f"{fname}: targets of shape {tuple(targets.shape)} are neither class indices "
            f"(shape {index_shape}) nor probabilities (shape {tuple(logits.shape)}) for logits "
            f"of shape {tuple(logits.shape)} with axis={axis}")
    if not as_probs and (is_floating(targets.dtype) or targets.dtype == mx.bool_):
        raise TypeError(f"{fname}: class-index targets must be integers, got dtype "
                        f"{targets.dtype} (probability targets have the logits' shape)")
    logp = log_softmax(logits, axis=ax)
    if as_probs:
        score = fnp.sum(fnp.multiply(logp, targets), axis=ax)
    else:
        score = fnp.squeeze(
            fnp.take_along_axis(logp, fnp.expand_dims(targets, ax), axis=ax), ax)
    loss = fnp.negative(score)
    if s > 0:
        loss = fnp.subtract(fnp.multiply(loss, 1 - s), fnp.multiply(fnp.mean(logp, axis=ax), s))
    return _reduce(_weighted(loss, weights, fname), reduction)


def binary_cross_entropy(inputs: Any, targets: Any, weights: Any = None,
                         with_logits: bool = True, reduction: Reduction = "mean") -> Any:
    """The binary cross entropy, as ``mlx.nn.losses.binary_cross_entropy``:
    for logits ``x`` (``with_logits=True``), the stable
    ``softplus(x) - x * t``; for probabilities ``p``,
    ``-(t * log(p) + (1 - t) * log(1 - p))`` with each log clipped below at
    ``-100`` (as MLX and PyTorch).

    Args:
        inputs: logits or probabilities.
        targets: targets in ``[0, 1]``, ``inputs``' shape.
        weights: optional, ``inputs``' shape: multiplies each loss.
        with_logits: whether ``inputs`` are logits. Default: ``True``.
        reduction: ``"none"`` | ``"mean"`` | ``"sum"``. Default: ``"mean"``.

    >>> import ftorch.nn.losses as losses, mlx.core as mx
    >>> x, t = mx.array([1000.0, -1000.0, 0.0]), mx.array([1.0, 0.0, 1.0])
    >>> [round(v, 4) for v in losses.binary_cross_entropy(x, t, reduction="none").tolist()]
    [0.0, 0.0, 0.6931]
    """
    fname = "binary_cross_entropy"
    _check_reduction(reduction, fname)
    if not isinstance(with_logits, bool):
        raise TypeError(f"{fname}: with_logits must be True or False, got {with_logits!r}")
    inputs, targets = _same_shape(fname, inputs=inputs, targets=targets)
    if with_logits:
        loss = fnp.subtract(softplus(inputs), fnp.multiply(inputs, targets))
    else:
        log_p = fnp.maximum(fnp.log(inputs), -100.0)
        log_q = fnp.maximum(fnp.log(fnp.subtract(1, inputs)), -100.0)
        loss = fnp.negative(fnp.add(fnp.multiply(targets, log_p),
                                    fnp.multiply(fnp.subtract(1, targets), log_q)))
    return _reduce(_weighted(loss, weights, fname), reduction)


def nll_loss(inputs: Any, targets: Any, axis: int = -1, reduction: Reduction = "none") -> Any:
    """The negative log likelihood ``-inputs[target]`` along ``axis``, of
    log-probabilities ``inputs`` and integer class ``targets`` (``inputs``'
    shape without ``axis``), as ``mlx.nn.losses.nll_loss``.

    >>> import ftorch.nn.losses as losses, mlx.core as mx
    >>> losses.nll_loss(mx.array([[-0.5, -2.0]]), mx.array([1])).tolist()
    [2.0]
    """
    fname = "nll_loss"
    _check_reduction(reduction, fname)
    inputs, targets = fnp.asarray(inputs), fnp.asarray(targets)
    if inputs.ndim == 0:
        raise ValueError(f"{fname}: inputs must have a class axis, got a 0-d array")
    ax = normalize_axis(axis, inputs.ndim, fname)
    expected = tuple(d for i, d in enumerate(inputs.shape) if i != ax)
    if tuple(targets.shape) != expected:
        raise ValueError(f"{fname}: targets of shape {tuple(targets.shape)} must be inputs' "
                         f"shape {tuple(inputs.shape)} without axis {axis}: {expected}")
    if is_floating(targets.dtype) or targets.dtype == mx.bool_:
        raise TypeError(f"{fname}: targets must be integer class indices, got dtype "
                        f"{targets.dtype}")
    picked = fnp.take_along_axis(inputs, fnp.expand_dims(targets, ax), axis=ax)
    return _reduce(fnp.negative(fnp.squeeze(picked, ax)), reduction)


def kl_div_loss(inputs: Any, targets: Any, axis: int = -1, reduction: Reduction = "none") -> Any:
    """The Kullback-Leibler divergence ``KL(targets || inputs)`` along
    ``axis``, both given as log-probabilities:
    ``sum(exp(targets) * (targets - inputs), axis)``, as
    ``mlx.nn.losses.kl_div_loss``.

    >>> import ftorch.nn.losses as losses, mlx.core as mx, math
    >>> lp = mx.log(mx.array([0.5, 0.5]))
    >>> losses.kl_div_loss(lp, lp).item()
    0.0
    """
    fname = "kl_div_loss"
    _check_reduction(reduction, fname)
    inputs, targets = _broadcasting(fname, inputs=inputs, targets=targets)
    diff = fnp.subtract(targets, inputs)
    if diff.ndim == 0:
        raise ValueError(f"{fname}: inputs must have a distribution axis, got a 0-d array")
    ax = normalize_axis(axis, diff.ndim, fname)
    return _reduce(fnp.sum(fnp.multiply(fnp.exp(targets), diff), axis=ax), reduction)


# ----------------------------------------------------------------------------
# Regression
# ----------------------------------------------------------------------------


def mse_loss(predictions: Any, targets: Any, reduction: Reduction = "mean") -> Any:
    """The squared error ``(predictions - targets) ** 2`` (same shapes), as
    ``mlx.nn.losses.mse_loss``.

    >>> import ftorch.nn.losses as losses, mlx.core as mx
    >>> losses.mse_loss(mx.array([1.0, 2.0]), mx.array([1.0, 4.0]), reduction="sum").item()
    4.0
    """
    _check_reduction(reduction, "mse_loss")
    p, t = _same_shape("mse_loss", predictions=predictions, targets=targets)
    return _reduce(fnp.square(fnp.subtract(p, t)), reduction)


def l1_loss(predictions: Any, targets: Any, reduction: Reduction = "mean") -> Any:
    """The absolute error ``|predictions - targets|`` (same shapes), as
    ``mlx.nn.losses.l1_loss``.

    >>> import ftorch.nn.losses as losses, mlx.core as mx
    >>> losses.l1_loss(mx.array([1.0, 2.0]), mx.array([2.0, 4.0])).item()
    1.5
    """
    _check_reduction(reduction, "l1_loss")
    p, t = _same_shape("l1_loss", predictions=predictions, targets=targets)
    return _reduce(fnp.abs(fnp.subtract(p, t)), reduction)


def smooth_l1_loss(predictions: Any, targets: Any, beta: float = 1.0,
                   reduction: Reduction = "mean") -> Any:
    """The smooth L1 loss of ``d = |predictions - targets|`` (same shapes):
    ``0.5 * d ** 2 / beta`` where ``d < beta``, else ``d - 0.5 * beta``, as
    ``mlx.nn.losses.smooth_l1_loss`` (``huber_loss / beta``).

    >>> import ftorch.nn.losses as losses, mlx.core as mx
    >>> losses.smooth_l1_loss(mx.array([0.5, 3.0]), mx.zeros(2), reduction="none").tolist()
    [0.125, 2.5]
    """
    fname = "smooth_l1_loss"
    _check_reduction(reduction, fname)
    beta = static_number(beta, fname, "beta")
    if beta <= 0:
        raise ValueError(f"{fname}: beta must be positive, got {beta}")
    p, t = _same_shape(fname, predictions=predictions, targets=targets)
    d = fnp.abs(fnp.subtract(p, t))
    # min(d, beta) keeps the untaken branch's gradient finite and exact.
    q = fnp.minimum(d, beta)
    loss = fnp.add(fnp.multiply(fnp.square(q), 0.5 / beta), fnp.subtract(d, q))
    return _reduce(loss, reduction)


def huber_loss(inputs: Any, targets: Any, delta: float = 1.0,
               reduction: Reduction = "none") -> Any:
    """The Huber loss of ``a = |inputs - targets|``: ``0.5 * a ** 2`` where
    ``a <= delta``, else ``delta * (a - 0.5 * delta)``, as
    ``mlx.nn.losses.huber_loss``.

    >>> import ftorch.nn.losses as losses, mlx.core as mx
    >>> losses.huber_loss(mx.array([0.5, 3.0]), mx.zeros(2)).tolist()
    [0.125, 2.5]
    """
    fname = "huber_loss"
    _check_reduction(reduction, fname)
    delta = _nonnegative(delta, fname, "delta")
    inputs, targets = _broadcasting(fname, inputs=inputs, targets=targets)
    a = fnp.abs(fnp.subtract(inputs, targets))
    q = fnp.minimum(a, delta)
    loss = fnp.add(fnp.multiply(fnp.square(q), 0.5), fnp.multiply(fnp.subtract(a, q), delta))
    return _reduce(loss, reduction)


def log_cosh_loss(inputs: Any, targets: Any, reduction: Reduction = "none") -> Any:
    """``log(cosh(inputs - targets))``, computed as
    ``logaddexp(d, -d) - log(2)`` so it stays finite for large errors, as
    ``mlx.nn.losses.log_cosh_loss``.

    >>> import ftorch.nn.losses as losses, mlx.core as mx
    >>> [round(v, 3) for v in losses.log_cosh_loss(mx.array([0.0, 100.0]), mx.zeros(2)).tolist()]
    [0.0, 99.307]
    """
    _check_reduction(reduction, "log_cosh_loss")
    inputs, targets = _broadcasting("log_cosh_loss", inputs=inputs, targets=targets)
    d = fnp.subtract(inputs, targets)
    return _reduce(fnp.subtract(fnp.logaddexp(d, fnp.negative(d)), math.log(2.0)), reduction)


def gaussian_nll_loss(inputs: Any, targets: Any, vars: Any, full: bool = False,
                      eps: float = 1e-6, reduction: Reduction = "mean") -> Any:
    """The negative log likelihood of ``targets`` under ``N(inputs, vars)``:
    ``0.5 * (log(v) + (targets - inputs) ** 2 / v)`` with
    ``v = max(vars, eps)``, plus ``0.5 * log(2 pi)`` when ``full`` (all three
    of the same shape), as ``mlx.nn.losses.gaussian_nll_loss``.

    >>> import ftorch.nn.losses as losses, mlx.core as mx
    >>> losses.gaussian_nll_loss(mx.array([0.0]), mx.array([2.0]), mx.array([1.0])).item()
    2.0
    """
    fname = "gaussian_nll_loss"
    _check_reduction(reduction, fname)
    eps = _nonnegative(eps, fname, "eps")
    inputs, targets, vars = _same_shape(fname, inputs=inputs, targets=targets, vars=vars)
    v = fnp.maximum(vars, eps)
    loss = fnp.multiply(fnp.add(fnp.log(v), fnp.divide(fnp.square(fnp.subtract(targets, inputs)),
                                                       v)), 0.5)
    if full:
        loss = fnp.add(loss, 0.5 * math.log(2 * math.pi))
    return _reduce(loss, reduction)


# ----------------------------------------------------------------------------
# Margins and similarities
# ----------------------------------------------------------------------------


def hinge_loss(inputs: Any, targets: Any, reduction: Reduction = "none") -> Any:
    """``max(0, 1 - inputs * targets)`` for targets in ``{-1, 1}``, as
    ``mlx.nn.losses.hinge_loss``.

    >>> import ftorch.nn.losses as losses, mlx.core as mx
    >>> losses.hinge_loss(mx.array([0.5, 2.0]), mx.array([1.0, -1.0])).tolist()
    [0.5, 3.0]
    """
    _check_reduction(reduction, "hinge_loss")
    inputs, targets = _broadcasting("hinge_loss", inputs=inputs, targets=targets)
    return _reduce(fnp.maximum(fnp.subtract(1, fnp.multiply(inputs, targets)), 0), reduction)


def margin_ranking_loss(inputs1: Any, inputs2: Any, targets: Any, margin: float = 0.0,
                        reduction: Reduction = "none") -> Any:
    """``max(0, -targets * (inputs1 - inputs2) + margin)`` for targets in
    ``{-1, 1}`` (1: ``inputs1`` should rank higher), all of the same shape,
    as ``mlx.nn.losses.margin_ranking_loss``.

    >>> import ftorch.nn.losses as losses, mlx.core as mx
    >>> losses.margin_ranking_loss(mx.array([1.0, 1.0]), mx.array([2.0, 0.0]),
    ...                            mx.array([1.0, 1.0]), margin=0.5).tolist()
    [1.5, 0.0]
    """
    fname = "margin_ranking_loss"
    _check_reduction(reduction, fname)
    x1, x2, t = _same_shape(fname, inputs1=inputs1, inputs2=inputs2, targets=targets)
    loss = fnp.maximum(fnp.add(fnp.negative(fnp.multiply(t, fnp.subtract(x1, x2))), margin), 0)
    return _reduce(loss, reduction)


def _norm(x: Any, axis: int) -> Any:
    return fnp.sqrt(fnp.sum(fnp.square(x), axis=axis))


def cosine_similarity_loss(x1: Any, x2: Any, axis: int = 1, eps: float = 1e-8,
                           reduction: Reduction = "none") -> Any:
    """The cosine similarity along ``axis``,
    ``sum(x1 * x2) / max(|x1| * |x2|, eps)``, as
    ``mlx.nn.losses.cosine_similarity_loss`` (note its default ``axis=1``:
    the embedding axis of ``(N, D)``; it is a similarity, to be maximised).

    >>> import ftorch.nn.losses as losses, mlx.core as mx
    >>> losses.cosine_similarity_loss(mx.array([[1.0, 0.0], [0.0, 1.0]]),
    ...                               mx.array([[2.0, 0.0], [0.0, -3.0]])).tolist()
    [1.0, -1.0]
    """
    fname = "cosine_similarity_loss"
    _check_reduction(reduction, fname)
    eps = _nonnegative(eps, fname, "eps")
    x1, x2 = fnp.broadcast_arrays(*_broadcasting(fname, x1=x1, x2=x2))
    if x1.ndim == 0:
        raise ValueError(f"{fname}: x1 and x2 must have an embedding axis, got 0-d arrays")
    ax = normalize_axis(axis, x1.ndim, fname)
    den = fnp.maximum(fnp.multiply(_norm(x1, ax), _norm(x2, ax)), eps)
    return _reduce(fnp.divide(fnp.sum(fnp.multiply(x1, x2), axis=ax), den), reduction)


def triplet_loss(anchors: Any, positives: Any, negatives: Any, axis: int = -1, p: int = 2,
                 margin: float = 1.0, eps: float = 1e-6, reduction: Reduction = "none") -> Any:
    """The triplet margin loss
    ``max(|a - pos|_p - |a - neg|_p + margin, 0)`` with the ``p``-norms along
    ``axis`` computed as ``(sum(|d| ** p) + eps) ** (1 / p)``, as
    ``mlx.nn.losses.triplet_loss``.

    >>> import ftorch.nn.losses as losses, mlx.core as mx
    >>> a, pos, neg = mx.array([[0.0, 0.0]]), mx.array([[3.0, 4.0]]), mx.array([[0.0, 1.0]])
    >>> [round(v, 4) for v in losses.triplet_loss(a, pos, neg, eps=0.0).tolist()]
    [5.0]
    """
    fname = "triplet_loss"
    _check_reduction(reduction, fname)
    p = static_number(p, fname, "p")
    if p <= 0:
        raise ValueError(f"{fname}: p must be positive, got {p}")
    eps = _nonnegative(eps, fname, "eps")
    a, pos, neg = _broadcasting(fname, anchors=anchors, positives=positives,
                                negatives=negatives)

    def dist(d):
        ax = normalize_axis(axis, d.ndim, fname) if d.ndim else None
        if ax is None:
            raise ValueError(f"{fname}: the samples must have a feature axis, got 0-d arrays")
        return fnp.power(fnp.add(fnp.sum(fnp.power(fnp.abs(d), p), axis=ax), eps), 1.0 / p)

    loss = fnp.maximum(fnp.add(fnp.subtract(dist(fnp.subtract(a, pos)),
                                            dist(fnp.subtract(a, neg))), margin), 0)
    return _reduce(loss, reduction)
