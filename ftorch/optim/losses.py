"""Loss functions, as ``optax.losses``: the same names, arguments and
values, each an unreduced loss (per example, or per element) that the
caller averages. Composed from ftorch ops, so every transform applies.
``axis`` and ``where`` (a mask of the elements that count) are as in
optax: ``where`` of one axis fewer than the logits is broadcast along
``axis``.

The losses ``mlx.nn`` also has, with a ``reduction`` argument, are in
``ftorch.nn.losses``; the shared ones are one implementation.

>>> import ftorch.optim.losses as losses, mlx.core as mx
>>> logits = mx.array([[2.0, -1.0], [-1.0, 2.0]])
>>> [round(v, 4) for v in losses.softmax_cross_entropy_with_integer_labels(
...     logits, mx.array([0, 1])).tolist()]
[0.0486, 0.0486]
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Protocol

import mlx.core as mx

import ftorch.lax as lax
import ftorch.numpy as fnp
from ftorch import api
from ftorch.core import Tracer, is_floating
from ftorch.nn import losses as nn_losses
from ftorch.nn.functional import log_sigmoid, log_softmax, one_hot, sigmoid, softmax
from ftorch.numpy._reduction import normalize_axes
from ftorch.primitives.reduction import normalize_axis
from ftorch.scipy.special import logsumexp

__all__ = [
    "squared_error", "l2_loss", "huber_loss", "log_cosh", "cosine_similarity",
    "cosine_distance", "hinge_loss", "perceptron_loss", "multiclass_hinge_loss",
    "multiclass_perceptron_loss", "sparsemax_loss", "multiclass_sparsemax_loss",
    "sigmoid_binary_cross_entropy", "sigmoid_focal_loss", "softmax_cross_entropy",
    "softmax_cross_entropy_with_integer_labels", "safe_softmax_cross_entropy",
    "poly_loss_cross_entropy", "kl_divergence", "kl_divergence_with_log_targets",
    "generalized_kl_divergence", "convex_kl_divergence", "smooth_labels", "ctc_loss",
    "ctc_loss_with_forward_probs", "ntxent", "triplet_margin_loss", "ranking_softmax_loss",
    "dice_loss", "binary_dice_loss", "multiclass_generalized_dice_loss",
    "make_fenchel_young_loss",
]

Axis = int | tuple[int, ...] | None


# ---------------------------------------------------------------------------
# Argument checks
# ---------------------------------------------------------------------------

def _floating(fname: str, name: str, x: Any) -> Any:
    x = fnp.asarray(x)
    if not is_floating(x.dtype):
        raise TypeError(f"{fname}: {name} must be floating, got dtype {x.dtype}")
    return x


def _integer(fname: str, name: str, x: Any) -> Any:
    x = fnp.asarray(x)
    if is_floating(x.dtype) or x.dtype == mx.bool_:
        raise TypeError(f"{fname}: {name} must be integers (class indices), got dtype "
                        f"{x.dtype}")
    return x


def _same_shape(fname: str, names: tuple[str, str], a: Any, b: Any) -> None:
    if tuple(a.shape) != tuple(b.shape):
        raise ValueError(f"{fname}: {names[0]} and {names[1]} must have the same shape, got "
                         f"{tuple(a.shape)} and {tuple(b.shape)}")


def _errors(fname: str, predictions: Any, targets: Any) -> Any:
    """``predictions - targets`` (``predictions`` without targets)."""
    predictions = _floating(fname, "predictions", predictions)
    if targets is None:
        return predictions
    targets = fnp.asarray(targets)
    _same_shape(fname, ("predictions", "targets"), predictions, targets)
    return predictions - targets


def _mask_like(where: Any, x: Any, axis: Axis) -> Any:
    """``where`` as a bool array of ``x``'s rank: one axis fewer is
    broadcast along ``axis`` (as optax)."""
    if where is None:
        return None
    where = fnp.asarray(where, dtype=mx.bool_)
    if where.ndim != x.ndim:
        where = fnp.expand_dims(where, axis)
    return where


def _masked_log_softmax(x: Any, axis: Axis, where: Any) -> Any:
    """``log_softmax`` over ``axis`` of the elements ``where`` holds (0
    elsewhere, with zero gradient there)."""
    if where is None:
        return log_softmax(x, axis=axis)
    return fnp.where(where, x - logsumexp(x, axis=axis, where=where, keepdims=True), 0.0)


# ---------------------------------------------------------------------------
# Regression
# ---------------------------------------------------------------------------

def squared_error(predictions: Any, targets: Any | None = None) -> Any:
    """``(predictions - targets) ** 2``, elementwise (``predictions ** 2``
    without targets); the mean squared error is its mean.

    >>> import ftorch.optim.losses as losses, mlx.core as mx
    >>> losses.squared_error(mx.array([1.0, 3.0]), mx.array([1.0, 1.0])).tolist()
    [0.0, 4.0]
    """
    return fnp.square(_errors("squared_error", predictions, targets))


def l2_loss(predictions: Any, targets: Any | None = None) -> Any:
    """``0.5 * (predictions - targets) ** 2``, elementwise.

    >>> import ftorch.optim.losses as losses, mlx.core as mx
    >>> losses.l2_loss(mx.array([1.0, 3.0])).tolist()
    [0.5, 4.5]
    """
    return 0.5 * fnp.square(_errors("l2_loss", predictions, targets))


def huber_loss(predictions: Any, targets: Any | None = None, *, delta: Any = 1.0) -> Any:
    """The Huber loss of ``e = predictions - targets``: ``0.5 * e ** 2``
    where ``|e| <= delta``, else ``delta * (|e| - 0.5 * delta)``
    (elementwise; ``ftorch.nn.losses.huber_loss`` with ``reduction``).

    >>> import ftorch.optim.losses as losses, mlx.core as mx
    >>> losses.huber_loss(mx.array([0.5, 3.0])).tolist()
    [0.125, 2.5]
    """
    e = _errors("huber_loss", predictions, targets)
    return nn_losses.huber_loss(e, fnp.zeros_like(e), delta=delta)


def log_cosh(predictions: Any, targets: Any | None = None) -> Any:
    """``log(cosh(predictions - targets))``, elementwise, finite for large
    errors (``ftorch.nn.losses.log_cosh_loss`` with ``reduction``).

    >>> import ftorch.optim.losses as losses, mlx.core as mx
    >>> [round(v, 3) for v in losses.log_cosh(mx.array([0.0, 100.0])).tolist()]
    [0.0, 99.307]
    """
    e = _errors("log_cosh", predictions, targets)
    return nn_losses.log_cosh_loss(e, fnp.zeros_like(e))


def cosine_similarity(predictions: Any, targets: Any, *, epsilon: Any = 0.0, axis: Axis = -1,
                      where: Any = None) -> Any:
    """The cosine of the angle between ``predictions`` and ``targets``
    along ``axis``: ``sum(a * b) / (|a| |b|)``, each squared norm at least
    ``epsilon``; ``where`` limits the sums to some elements.

    >>> import ftorch.optim.losses as losses, mlx.core as mx
    >>> losses.cosine_similarity(mx.array([[1.0, 0.0], [0.0, 1.0]]),
    ...                          mx.array([[2.0, 0.0], [0.0, -3.0]])).tolist()
    [1.0, -1.0]
    """
    fname = "cosine_similarity"
    a = _floating(fname, "predictions", predictions)
    b = _floating(fname, "targets", targets)

    def unit(x):
        norm2 = fnp.sum(fnp.square(x), axis=axis, where=where, keepdims=True)
        return x / fnp.sqrt(fnp.maximum(norm2, epsilon))

    return fnp.sum(unit(a) * unit(b), axis=axis, where=where)


def cosine_distance(predictions: Any, targets: Any, *, epsilon: Any = 0.0, axis: Axis = -1,
                    where: Any = None) -> Any:
    """``1 - cosine_similarity(predictions, targets)``.

    >>> import ftorch.optim.losses as losses, mlx.core as mx
    >>> losses.cosine_distance(mx.array([1.0, 0.0]), mx.array([0.0, 2.0])).item()
    1.0
    """
    return 1.0 - cosine_similarity(predictions, targets, epsilon=epsilon, axis=axis,
                                   where=where)


# ---------------------------------------------------------------------------
# Classification: margins
# ---------------------------------------------------------------------------

def hinge_loss(predictor_outputs: Any, targets: Any) -> Any:
    """``max(0, 1 - predictor_outputs * targets)`` for targets in
    ``{-1, 1}`` (``ftorch.nn.losses.hinge_loss`` with ``reduction``).

    >>> import ftorch.optim.losses as losses, mlx.core as mx
    >>> losses.hinge_loss(mx.array([0.5, 2.0]), mx.array([1.0, -1.0])).tolist()
    [0.5, 3.0]
    """
    return nn_losses.hinge_loss(predictor_outputs, targets)


def perceptron_loss(predictor_outputs: Any, targets: Any) -> Any:
    """``max(0, -predictor_outputs * targets)`` for targets in ``{-1, 1}``.

    >>> import ftorch.optim.losses as losses, mlx.core as mx
    >>> losses.perceptron_loss(mx.array([0.5, 2.0]), mx.array([1.0, -1.0])).tolist()
    [0.0, 2.0]
    """
    x, t = fnp.asarray(predictor_outputs), fnp.asarray(targets)
    _same_shape("perceptron_loss", ("predictor_outputs", "targets"), x, t)
    return fnp.maximum(0, -x * t)


def _label_scores(fname: str, scores: Any, labels: Any) -> tuple[Any, Any, Any]:
    """``scores`` (classes last), the labels' one-hot and the labels'
    scores."""
    scores = fnp.asarray(scores)
    labels = _integer(fname, "labels", labels)
    if scores.ndim == 0 or tuple(labels.shape) != tuple(scores.shape[:-1]):
        raise ValueError(f"{fname}: labels of shape {tuple(labels.shape)} must have the shape "
                         f"of scores {tuple(scores.shape)} without its last (class) axis")
    hot = one_hot(labels, scores.shape[-1], dtype=scores.dtype)
    return scores, hot, fnp.sum(scores * hot, axis=-1)


def multiclass_hinge_loss(scores: Any, labels: Any) -> Any:
    """``max_k(scores_k + [k != label]) - scores_label`` over the last axis
    (the multiclass SVM loss).

    >>> import ftorch.optim.losses as losses, mlx.core as mx
    >>> losses.multiclass_hinge_loss(mx.array([[2.0, 0.5], [0.0, 0.5]]), mx.array([0, 0])).tolist()
    [0.0, 1.5]
    """
    scores, hot, label_score = _label_scores("multiclass_hinge_loss", scores, labels)
    return fnp.max(scores + 1.0 - hot, axis=-1) - label_score


def multiclass_perceptron_loss(scores: Any, labels: Any) -> Any:
    """``max_k scores_k - scores_label`` over the last axis.

    >>> import ftorch.optim.losses as losses, mlx.core as mx
    >>> losses.multiclass_perceptron_loss(mx.array([[2.0, 0.5]]), mx.array([1])).tolist()
    [1.5]
    """
    scores, _, label_score = _label_scores("multiclass_perceptron_loss", scores, labels)
    return fnp.max(scores, axis=-1) - label_score


def _sparse_plus(x: Any) -> Any:
    """0 below -1, ``(x + 1) ** 2 / 4`` on ``[-1, 1]``, ``x`` above 1."""
    return fnp.where(x <= -1.0, 0.0, fnp.where(x >= 1.0, x, 0.25 * fnp.square(x + 1.0)))


def sparsemax_loss(logits: Any, labels: Any) -> Any:
    """The binary sparsemax loss, ``sparse_plus(-logits)`` where the label
    is 1 (true), ``sparse_plus(logits)`` where it is 0, with
    ``sparse_plus(x)`` 0 below -1, ``(x + 1)**2 / 4`` up to 1, ``x`` above.

    >>> import ftorch.optim.losses as losses, mlx.core as mx
    >>> losses.sparsemax_loss(mx.array([0.0, 3.0, 3.0]), mx.array([1, 1, 0])).tolist()
    [0.25, 0.0, 3.0]
    """
    logits = fnp.asarray(logits)
    return _sparse_plus(fnp.where(fnp.asarray(labels), -logits, logits))


def _simplex_projection(z: Any) -> Any:
    """The Euclidean projection of each vector along the last axis onto the
    probability simplex (sparsemax): ``max(z - tau, 0)`` with ``tau`` from
    the sorted values."""
    n = z.shape[-1]
    ranked = -fnp.sort(-z, axis=-1)
    cumulative = fnp.cumsum(ranked, axis=-1) - 1.0
    ks = fnp.arange(1, n + 1, dtype=z.dtype)
    support = fnp.sum(fnp.astype(ranked - cumulative / ks > 0, mx.int32), axis=-1,
                      keepdims=True)
    tau = fnp.take_along_axis(cumulative, support - 1, axis=-1) / fnp.astype(support, z.dtype)
    return fnp.maximum(z - tau, 0.0)


def multiclass_sparsemax_loss(scores: Any, labels: Any) -> Any:
    """The sparsemax loss of integer ``labels`` over the last axis:
    ``<p, s - s_label> + (1 - |p|^2) / 2`` with ``p = sparsemax(s)``, the
    projection of ``s`` onto the simplex.

    >>> import ftorch.optim.losses as losses, mlx.core as mx
    >>> scores = mx.array([[3.0, 0.0], [0.0, 0.0]])
    >>> losses.multiclass_sparsemax_loss(scores, mx.array([0, 0])).tolist()
    [0.0, 0.25]
    """
    scores, hot, label_score = _label_scores("multiclass_sparsemax_loss", scores, labels)
    p = _simplex_projection(scores)
    margins = fnp.where(hot > 0, 0.0, scores - label_score[..., None])
    return (fnp.sum(p * fnp.where(p > 0, margins, 0.0), axis=-1)
            + 0.5 * (1.0 - fnp.sum(p * p, axis=-1)))


# ---------------------------------------------------------------------------
# Classification: cross entropies
# ---------------------------------------------------------------------------

def sigmoid_binary_cross_entropy(logits: Any, labels: Any) -> Any:
    """The cross entropy of ``sigmoid(logits)`` against ``labels`` (0/1 or
    probabilities), elementwise:
    ``-labels log(sigmoid(logits)) - (1 - labels) log(sigmoid(-logits))``.

    >>> import ftorch.optim.losses as losses, mlx.core as mx
    >>> [round(v, 4) for v in losses.sigmoid_binary_cross_entropy(
    ...     mx.array([0.0, 2.0]), mx.array([1.0, 0.0])).tolist()]
    [0.6931, 2.1269]
    """
    logits = _floating("sigmoid_binary_cross_entropy", "logits", logits)
    labels = fnp.astype(labels, logits.dtype)
    return -labels * log_sigmoid(logits) - (1.0 - labels) * log_sigmoid(-logits)


def sigmoid_focal_loss(logits: Any, labels: Any, *, alpha: Any | None = None,
                       gamma: Any = 2.0) -> Any:
    """The focal loss (Lin et al.): the sigmoid cross entropy times
    ``(1 - p_t) ** gamma``, ``p_t`` the probability given to the true
    label; with ``alpha``, weighted by ``alpha`` for positives and
    ``1 - alpha`` for negatives.

    >>> import ftorch.optim.losses as losses, mlx.core as mx
    >>> [round(v, 4) for v in losses.sigmoid_focal_loss(mx.array([0.0]), mx.array([1.0])).tolist()]
    [0.1733]
    """
    logits = _floating("sigmoid_focal_loss", "logits", logits)
    labels = fnp.astype(labels, logits.dtype)
    cross_entropy = sigmoid_binary_cross_entropy(logits, labels)
    # log(1 - p_t) = log((1 - y) p + y (1 - p)), in log space.
    log_miss = logsumexp(fnp.stack([log_sigmoid(logits), log_sigmoid(-logits)], axis=-1),
                         axis=-1, b=fnp.stack([1.0 - labels, labels], axis=-1))
    loss = cross_entropy * fnp.exp(gamma * log_miss)
    if alpha is None:
        return loss
    return (alpha * labels + (1.0 - alpha) * (1.0 - labels)) * loss


def softmax_cross_entropy(logits: Any, labels: Any, axis: Axis = -1, where: Any = None) -> Any:
    """The cross entropy ``-sum(labels * log_softmax(logits))`` over
    ``axis`` (``labels`` probabilities, logits' shape); ``where`` keeps the
    softmax and the sum to some classes.

    >>> import ftorch.optim.losses as losses, mlx.core as mx
    >>> round(losses.softmax_cross_entropy(mx.array([2.0, -1.0]), mx.array([1.0, 0.0])).item(), 4)
    0.0486
    """
    logits = _floating("softmax_cross_entropy", "logits", logits)
    where = _mask_like(where, logits, axis)
    log_probs = _masked_log_softmax(logits, axis, where)
    return -fnp.sum(labels * log_probs, axis=axis, where=where)


def _classes_last(fname: str, x: Any, axis: Axis) -> tuple[Any, int]:
    """``x`` with the class axes (an int or a tuple) moved last and merged
    into one, and that axis's position."""
    if isinstance(axis, int):
        return x, normalize_axis(axis, x.ndim, fname)
    if not isinstance(axis, tuple):
        raise TypeError(f"{fname}: axis must be an int or a tuple of ints, got {axis!r}")
    classes = normalize_axes(axis, x.ndim, fname)
    batch = tuple(i for i in range(x.ndim) if i not in classes)
    x = fnp.transpose(x, batch + tuple(classes))
    return fnp.reshape(x, tuple(x.shape[:len(batch)]) + (-1,)), len(batch)


def softmax_cross_entropy_with_integer_labels(logits: Any, labels: Any, axis: int | tuple[
        int, ...] = -1, where: Any = None) -> Any:
    """The cross entropy of ``softmax(logits)`` over ``axis`` (an int, or a
    tuple of axes taken together as one) against integer class ``labels``
    (the logits' shape without ``axis``): ``logsumexp(logits) -
    logits[label]``. ``where`` masks classes out (0 loss where it masks
    them all).

    >>> import ftorch.optim.losses as losses, mlx.core as mx
    >>> [round(v, 4) for v in losses.softmax_cross_entropy_with_integer_labels(
    ...     mx.array([[2.0, -1.0], [2.0, -1.0]]), mx.array([0, 1])).tolist()]
    [0.0486, 3.0486]
    """
    fname = "softmax_cross_entropy_with_integer_labels"
    logits = _floating(fname, "logits", logits)
    labels = _integer(fname, "labels", labels)
    where = _mask_like(where, logits, axis)
    logits, ax = _classes_last(fname, logits, axis)
    if where is not None:
        where, _ = _classes_last(fname, where, axis)
    label_logits = fnp.squeeze(fnp.take_along_axis(logits, fnp.expand_dims(labels, ax), axis=ax),
                               axis=ax)
    out = logsumexp(logits, axis=ax, where=where) - label_logits
    if where is not None:
        out = fnp.where(fnp.any(where, axis=ax), out, 0.0)
    return out


def safe_softmax_cross_entropy(logits: Any, labels: Any) -> Any:
    """``softmax_cross_entropy`` over the last axis, finite (and with finite
    gradients) where a logit is ``-inf`` and its label 0: such terms count
    as 0 rather than ``0 * -inf``.

    >>> import ftorch.optim.losses as losses, mlx.core as mx
    >>> round(losses.safe_softmax_cross_entropy(mx.array([0.0, 0.0, -float("inf")]),
    ...                                         mx.array([1.0, 0.0, 0.0])).item(), 4)
    0.6931
    """
    logits = _floating("safe_softmax_cross_entropy", "logits", logits)
    labels = fnp.asarray(labels)
    log_probs = log_softmax(logits, axis=-1)
    # A zero label's term is 0 (not 0 * -inf); its derivative in the label is
    # still log_softmax where that is finite.
    kept = fnp.where(fnp.logical_or(labels != 0, fnp.isfinite(log_probs)), log_probs, 0.0)
    return -fnp.sum(labels * kept, axis=-1)


def poly_loss_cross_entropy(logits: Any, labels: Any, *, epsilon: Any = 2.0, axis: Axis = -1,
                            where: Any = None) -> Any:
    """PolyLoss (Leng et al.): ``softmax_cross_entropy + epsilon *
    sum(labels * (1 - softmax(logits)))``.

    >>> import ftorch.optim.losses as losses, mlx.core as mx
    >>> round(losses.poly_loss_cross_entropy(mx.array([0.0, 0.0]), mx.array([1.0, 0.0])).item(), 4)
    1.6931
    """
    fname = "poly_loss_cross_entropy"
    logits = _floating(fname, "logits", logits)
    labels = _floating(fname, "labels", labels)
    mask = _mask_like(where, logits, axis)
    p = fnp.exp(_masked_log_softmax(logits, axis, mask))
    one_minus_pt = fnp.sum(labels * (1 - p), axis=axis, where=mask)
    return softmax_cross_entropy(logits, labels, axis, where) + epsilon * one_minus_pt


# ---------------------------------------------------------------------------
# Divergences and label smoothing
# ---------------------------------------------------------------------------

def kl_divergence(log_predictions: Any, targets: Any, axis: Axis = -1, where: Any = None) -> Any:
    """``KL(targets || predictions) = sum(t * (log t - log p))`` over
    ``axis``, given ``log p`` (``0 log 0`` is 0).

    >>> import ftorch.optim.losses as losses, mlx.core as mx
    >>> round(losses.kl_divergence(mx.log(mx.array([0.5, 0.5])), mx.array([1.0, 0.0])).item(), 4)
    0.6931
    """
    log_p = _floating("kl_divergence", "log_predictions", log_predictions)
    t = _floating("kl_divergence", "targets", targets)
    log_t = fnp.where(t == 0, 0.0, fnp.log(fnp.where(t == 0, 1.0, t)))
    return fnp.sum(t * (log_t - log_p), axis=axis, where=where)


def kl_divergence_with_log_targets(log_predictions: Any, log_targets: Any, axis: Axis = -1,
                                   where: Any = None) -> Any:
    """``kl_divergence`` given the targets' logarithms:
    ``sum(exp(log t) * (log t - log p))``.

    >>> import ftorch.optim.losses as losses, mlx.core as mx
    >>> round(losses.kl_divergence_with_log_targets(mx.log(mx.array([0.5, 0.5])),
    ...                                             mx.array([0.0, -100.0])).item(), 4)
    0.6931
    """
    fname = "kl_divergence_with_log_targets"
    log_p = _floating(fname, "log_predictions", log_predictions)
    log_t = _floating(fname, "log_targets", log_targets)
    return fnp.sum(fnp.exp(log_t) * (log_t - log_p), axis=axis, where=where)


def generalized_kl_divergence(log_predictions: Any, targets: Any, axis: Axis = -1,
                              where: Any = None) -> Any:
    """The KL divergence of unnormalised measures, ``sum(t (log t - log p)
    + p - t)``: convex in ``p``, 0 at ``p = t``.

    >>> import ftorch.optim.losses as losses, mlx.core as mx
    >>> losses.generalized_kl_divergence(mx.log(mx.array([2.0])), mx.array([2.0])).item()
    0.0
    """
    log_p = _floating("generalized_kl_divergence", "log_predictions", log_predictions)
    return (kl_divergence(log_p, targets, axis=axis, where=where)
            + fnp.sum(fnp.exp(log_p) - targets, axis=axis, where=where))


def convex_kl_divergence(log_predictions: Any, targets: Any, axis: Axis = -1,
                         where: Any = None) -> Any:
    """``generalized_kl_divergence`` (optax's older name for it).

    >>> import ftorch.optim.losses as losses, mlx.core as mx
    >>> losses.convex_kl_divergence(mx.array([0.0]), mx.array([1.0])).item()
    0.0
    """
    return generalized_kl_divergence(log_predictions, targets, axis=axis, where=where)


def smooth_labels(labels: Any, alpha: Any, *, axis: Axis = -1, where: Any = None) -> Any:
    """Label smoothing: ``(1 - alpha) * labels + alpha / K``, ``K`` the
    number of classes along ``axis`` (those ``where`` holds).

    >>> import ftorch.optim.losses as losses, mlx.core as mx
    >>> losses.smooth_labels(mx.array([1.0, 0.0, 0.0, 0.0]), 0.2).tolist()
    [0.8500000238418579, 0.05000000074505806, 0.05000000074505806, 0.05000000074505806]
    """
    labels = _floating("smooth_labels", "labels", labels)
    if where is None:
        axes = normalize_axes(axis, labels.ndim, "smooth_labels") if axis is not None else range(
            labels.ndim)
        count = math.prod(labels.shape[a] for a in axes)
    else:
        count = fnp.sum(fnp.asarray(where), axis=axis, keepdims=True)
    return (1.0 - alpha) * labels + alpha / count


# ---------------------------------------------------------------------------
# Sequences: CTC
# ---------------------------------------------------------------------------

def ctc_loss_with_forward_probs(logits: Any, logit_paddings: Any, labels: Any,
                                label_paddings: Any, *, blank_id: int = 0,
                                log_epsilon: Any = -1e5) -> tuple[Any, Any, Any]:
    """The CTC loss (Graves et al.) of each sequence, and the forward
    variables: ``(loss (B,), log_alpha_blank (T, B, N+1), log_alpha_emit
    (T, B, N))``, ``log_alpha_blank[t, b, n]`` the log probability of having
    emitted ``n`` labels and being on a blank after frame ``t``,
    ``log_alpha_emit[t, b, n]`` of being on label ``n``.

    ``logits`` is ``(B, T, K)``, ``logit_paddings`` ``(B, T)`` (1.0 on
    padding frames), ``labels`` ``(B, N)`` integers and ``label_paddings``
    ``(B, N)`` (1.0 on padding labels, which must come last). Impossible
    paths have log probability near ``log_epsilon`` (not ``-inf``, so
    gradients stay finite).

    >>> import ftorch.optim.losses as losses, mlx.core as mx
    >>> loss, blank, emit = losses.ctc_loss_with_forward_probs(
    ...     mx.zeros((1, 2, 2)), mx.zeros((1, 2)), mx.array([[1]]), mx.zeros((1, 1)))
    >>> round(loss.item(), 4), blank.shape, emit.shape
    (0.2877, (2, 1, 2), (2, 1, 1))
    """
    fname = "ctc_loss_with_forward_probs"
    logits = _floating(fname, "logits", logits)
    labels = _integer(fname, "labels", labels)
    logit_paddings, label_paddings = fnp.asarray(logit_paddings), fnp.asarray(label_paddings)
    if logits.ndim != 3 or labels.ndim != 2:
        raise ValueError(f"{fname}: logits must be (batch, frames, classes) and labels (batch, "
                         f"labels), got shapes {tuple(logits.shape)} and {tuple(labels.shape)}")
    batch, _, classes = logits.shape
    n = labels.shape[1]
    _same_shape(fname, ("labels", "label_paddings"), labels, label_paddings)
    if tuple(logit_paddings.shape) != tuple(logits.shape[:2]):
        raise ValueError(f"{fname}: logit_paddings must have shape {tuple(logits.shape[:2])} "
                         f"(batch, frames), got {tuple(logit_paddings.shape)}")
    if labels.shape[0] != batch:
        raise ValueError(f"{fname}: labels have batch size {labels.shape[0]}, logits {batch}")
    dtype = logits.dtype
    log_probs = log_softmax(logits, axis=-1)
    label_count = n - fnp.astype(fnp.sum(label_paddings, axis=1), mx.int32)
    # 1.0 where a label equals the next one: no direct step between them.
    repeat = fnp.astype(labels[:, :-1] == labels[:, 1:], dtype)
    repeat = fnp.concatenate([repeat, fnp.zeros((batch, 1), dtype)], axis=1)
    blank_logp = fnp.transpose(log_probs[:, :, blank_id:blank_id + 1], (1, 0, 2))   # (T, B, 1)
    emit_logp = fnp.transpose(
        fnp.einsum("btk,bnk->btn", log_probs, one_hot(labels, classes, dtype=dtype)),
        (1, 0, 2))                                                                   # (T, B, N)

    def add_to_blank(blank, score):
        """Blank states 1..N gain the paths ending in ``score`` (label n)."""
        return fnp.concatenate([blank[:, :1], fnp.logaddexp(blank[:, 1:], score)], axis=-1)

    def frame(carry, x):
        blank, emit = carry
        logp_emit, logp_blank, pad = x
        # Close the previous frame: a label may be followed by a blank (always) or,
        # unless repeated, move straight to the next label through blank n.
        merged = add_to_blank(blank, emit + log_epsilon * repeat)
        new_emit = fnp.logaddexp(merged[:, :-1] + logp_emit, emit + logp_emit)
        new_blank = add_to_blank(merged + logp_blank,
                                 emit + logp_blank + log_epsilon * (1.0 - repeat))
        pad = fnp.reshape(pad, (batch, 1))
        new_emit = pad * emit + (1.0 - pad) * new_emit
        new_blank = pad * blank + (1.0 - pad) * new_blank
        return (new_blank, new_emit), (new_blank, new_emit)

    init = (fnp.concatenate([fnp.zeros((batch, 1), dtype),
                             fnp.full((batch, n), log_epsilon, dtype)], axis=1),
            fnp.full((batch, n), log_epsilon, dtype))
    _, (log_blank, log_emit) = lax.scan(
        frame, init, (emit_logp, blank_logp, fnp.transpose(fnp.astype(logit_paddings, dtype))))
    last = add_to_blank(log_blank[-1], log_emit[-1])
    log_blank = fnp.concatenate([log_blank[:-1], last[None]], axis=0)
    loss = -fnp.sum(last * one_hot(label_count, n + 1, dtype=dtype), axis=-1)
    return loss, log_blank, log_emit


def ctc_loss(logits: Any, logit_paddings: Any, labels: Any, label_paddings: Any, *,
             blank_id: int = 0, log_epsilon: Any = -1e5) -> Any:
    """The CTC loss of each sequence, ``(B,)``: the first result of
    ``ctc_loss_with_forward_probs``.

    >>> import ftorch.optim.losses as losses, mlx.core as mx
    >>> round(losses.ctc_loss(mx.zeros((1, 2, 2)), mx.zeros((1, 2)), mx.array([[1]]),
    ...                       mx.zeros((1, 1))).item(), 4)
    0.2877
    """
    return ctc_loss_with_forward_probs(logits, logit_paddings, labels, label_paddings,
                                       blank_id=blank_id, log_epsilon=log_epsilon)[0]


# ---------------------------------------------------------------------------
# Embeddings and rankings
# ---------------------------------------------------------------------------

def ntxent(embeddings: Any, labels: Any, temperature: Any = 0.07) -> Any:
    """The normalised temperature-scaled cross entropy (SimCLR's
    contrastive loss) of ``embeddings`` ``(N, D)`` whose equal ``labels``
    ``(N,)`` mark positive pairs: the mean over positive pairs of
    ``-log(exp(s_ij) / (exp(s_ij) + sum_negatives exp(s_ik)))``,
    ``s = cosine similarity / temperature``.

    >>> import ftorch.optim.losses as losses, mlx.core as mx
    >>> e = mx.array([[1.0, 0.0], [1.0, 0.1], [0.0, 1.0], [0.1, 1.0]])
    >>> round(losses.ntxent(e, mx.array([0, 0, 1, 1])).item(), 4)
    0.0
    """
    embeddings = _floating("ntxent", "embeddings", embeddings)
    labels = fnp.asarray(labels)
    if embeddings.ndim != 2 or labels.shape[:1] != embeddings.shape[:1]:
        raise ValueError(f"ntxent: embeddings must be (N, D) and labels (N,), got shapes "
                         f"{tuple(embeddings.shape)} and {tuple(labels.shape)}")
    eps = float(mx.finfo(embeddings.dtype).eps)
    sims = cosine_similarity(embeddings[None, :, :], embeddings[:, None, :], epsilon=eps)
    sims = sims / temperature
    same = labels[:, None] == labels[None, :]
    positive = fnp.logical_and(same, fnp.logical_not(fnp.eye(labels.shape[0], dtype=mx.bool_)))
    negatives = fnp.where(same, -fnp.inf, sims)
    positives = fnp.where(positive, sims, -fnp.inf)
    shift = lax.stop_gradient(fnp.max(fnp.concatenate([negatives, positives], axis=1), axis=1,
                                      keepdims=True))
    denominator = (fnp.sum(fnp.exp(negatives - shift), axis=1, keepdims=True)
                   + fnp.exp(positives - shift))
    log_ratio = positives - shift - fnp.log(denominator)
    return (-fnp.sum(fnp.where(positive, log_ratio, 0.0))
            / fnp.astype(fnp.sum(positive), embeddings.dtype))


def triplet_margin_loss(anchors: Any, positives: Any, negatives: Any, axis: int = -1,
                        norm_degree: Any = 2, margin: Any = 1.0, eps: Any = 1e-6) -> Any:
    """``max(|a - pos| - |a - neg| + margin, 0)`` with the distances along
    ``axis`` computed as ``(sum(|d| ** norm_degree) + eps) ** (1 /
    norm_degree)`` (``ftorch.nn.losses.triplet_loss`` with ``reduction``).

    >>> import ftorch.optim.losses as losses, mlx.core as mx
    >>> a, pos, neg = mx.array([[0.0, 0.0]]), mx.array([[3.0, 4.0]]), mx.array([[0.0, 1.0]])
    >>> [round(v, 4) for v in losses.triplet_margin_loss(a, pos, neg, eps=0.0).tolist()]
    [5.0]
    """
    for name, x in (("anchors", anchors), ("positives", positives), ("negatives", negatives)):
        _floating("triplet_margin_loss", name, x)
    return nn_losses.triplet_loss(anchors, positives, negatives, axis=axis, p=norm_degree,
                                  margin=margin, eps=eps)


def ranking_softmax_loss(logits: Any, labels: Any, *, where: Any = None, weights: Any = None,
                         reduce_fn: Callable[..., Any] | None = fnp.mean) -> Any:
    """The listwise softmax loss of ranking: the cross entropy of
    ``softmax(logits)`` over the last axis (the items of a list) against
    the relevance ``labels`` (times ``weights``), reduced over lists by
    ``reduce_fn(loss, where=...)`` (``None``: one loss per list). ``where``
    masks items out; a list with none counts 0.

    >>> import ftorch.optim.losses as losses, mlx.core as mx
    >>> round(losses.ranking_softmax_loss(mx.array([[0.0, 0.0]]), mx.array([[1.0, 0.0]])).item(), 4)
    0.6931
    """
    logits = _floating("ranking_softmax_loss", "logits", logits)
    labels = fnp.astype(labels, logits.dtype)
    if where is not None:
        where = fnp.asarray(where, dtype=mx.bool_)
        labels = fnp.where(where, labels, 0.0)
    if weights is not None:
        labels = labels * weights
    loss = -fnp.sum(labels * _masked_log_softmax(logits, -1, where), axis=-1, where=where)
    lists = None if where is None else fnp.any(where, axis=-1)
    if reduce_fn is None:
        return loss if lists is None else fnp.where(lists, loss, 0.0)
    out = reduce_fn(loss, where=lists)
    if reduce_fn is fnp.mean:  # no list at all: 0, not the NaN of an empty mean
        out = fnp.where(fnp.logical_and(fnp.isnan(out), fnp.logical_not(fnp.any(
            fnp.isnan(loss)))), 0.0, out)
    return out


# ---------------------------------------------------------------------------
# Segmentation: Dice
# ---------------------------------------------------------------------------

def _reduce_classes(loss: Any, reduction: str, fname: str) -> Any:
    if reduction == "mean":
        return fnp.mean(loss, axis=-1)
    if reduction == "sum":
        return fnp.sum(loss, axis=-1)
    if reduction == "none":
        return loss
    raise ValueError(f"{fname}: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")


def dice_loss(predictions: Any, targets: Any, *, class_weights: Any | None = None,
              smooth: Any = 1.0, alpha: Any = 0.5, beta: Any = 0.5, apply_softmax: bool = True,
              reduction: str = "mean", ignore_background: bool = False,
              axis: Any | None = None) -> Any:
    """The Dice (Tversky, with ``alpha`` and ``beta``) loss per example and
    class: ``1 - (I + smooth) / (I + alpha (P - I) + beta (T - I) +
    smooth)`` with ``I = sum(p * t)``, ``P = sum(p)``, ``T = sum(t)`` over
    ``axis`` (default: all but the first and the last, class, axis); ``p``
    is the softmax of ``predictions`` over classes (the sigmoid for one
    class) with ``apply_softmax``, else ``predictions`` as probabilities.
    ``class_weights`` scales each class, ``ignore_background`` drops class
    0, and ``reduction`` (``"mean"``, ``"sum"``, ``"none"``) reduces over
    classes, giving ``(batch,)``.

    >>> import ftorch.optim.losses as losses, mlx.core as mx
    >>> t = mx.array([[[1.0, 0.0], [0.0, 1.0]]])
    >>> [round(v, 4) for v in losses.dice_loss(t * 20.0, t).tolist()]
    [0.0]
    """
    fname = "dice_loss"
    predictions, targets = fnp.asarray(predictions), fnp.asarray(targets)
    if predictions.ndim == targets.ndim - 1:
        predictions = predictions[..., None]
    if targets.ndim == predictions.ndim - 1:
        targets = targets[..., None]
    _same_shape(fname, ("predictions", "targets"), predictions, targets)
    if not apply_softmax and not isinstance(predictions, Tracer):
        sums = fnp.sum(predictions, axis=-1)
        if not bool(fnp.all(fnp.abs(sums - 1.0) <= 1e-5 + 1e-8)):
            raise ValueError(f"{fname}: with apply_softmax=False, predictions must be "
                             "probabilities summing to 1 over the class (last) axis; their sums "
                             f"range over [{float(fnp.min(sums)):.6f}, {float(fnp.max(sums)):.6f}]")
    probs = predictions
    if apply_softmax:
        probs = sigmoid(predictions) if predictions.shape[-1] == 1 else softmax(predictions,
                                                                                 axis=-1)
    axes = tuple(range(1, probs.ndim - 1)) if axis is None else axis
    intersection = fnp.sum(probs * targets, axis=axes)
    pred_sum = fnp.sum(probs, axis=axes)
    target_sum = fnp.sum(targets, axis=axes)
    coefficient = (intersection + smooth) / (intersection + alpha * (pred_sum - intersection)
                                             + beta * (target_sum - intersection) + smooth)
    loss = 1.0 - coefficient
    if class_weights is not None:
        class_weights = fnp.asarray(class_weights)
        if class_weights.ndim != 1:
            raise ValueError(f"{fname}: class_weights must be 1-d (one per class), got shape "
                             f"{tuple(class_weights.shape)}")
        loss = loss * class_weights
    if ignore_background and probs.shape[-1] > 1:
        loss = loss[..., 1:]
    return _reduce_classes(loss, reduction, fname)


def multiclass_generalized_dice_loss(predictions: Any, targets: Any, *, smooth: Any = 1.0,
                                     apply_softmax: bool = True,
                                     ignore_background: bool = False) -> Any:
    """The generalised Dice loss (Sudre et al.): ``dice_loss`` with each
    class weighted by ``1 / (frequency ** 2 + 1e-7)`` (normalised to
    average 1), averaged over examples and classes (a scalar).

    >>> import ftorch.optim.losses as losses, mlx.core as mx
    >>> t = mx.array([[[1.0, 0.0], [0.0, 1.0]]])
    >>> round(losses.multiclass_generalized_dice_loss(t * 20.0, t).item(), 4)
    0.0
    """
    predictions, targets = fnp.asarray(predictions), fnp.asarray(targets)
    _same_shape("multiclass_generalized_dice_loss", ("predictions", "targets"), predictions,
                targets)
    frequencies = fnp.sum(targets, axis=tuple(range(targets.ndim - 1)))
    weights = 1.0 / (fnp.square(frequencies) + 1e-7)
    weights = weights / fnp.sum(weights) * weights.shape[0]
    return fnp.mean(dice_loss(predictions, targets, class_weights=weights, smooth=smooth,
                              apply_softmax=apply_softmax, reduction="none",
                              ignore_background=ignore_background))


def binary_dice_loss(predictions: Any, targets: Any, *, smooth: Any = 1.0,
                     apply_sigmoid: bool = True) -> Any:
    """``dice_loss`` of one class (logits through a sigmoid with
    ``apply_sigmoid``), averaged into one loss per example.

    >>> import ftorch.optim.losses as losses, mlx.core as mx
    >>> t = mx.array([[1.0, 0.0, 1.0]])
    >>> [round(v, 4) for v in losses.binary_dice_loss(t * 40.0 - 20.0, t).tolist()]
    [0.0]
    """
    predictions, targets = fnp.asarray(predictions), fnp.asarray(targets)
    if predictions.ndim == targets.ndim and predictions.shape[-1] != 1:
        predictions, targets = predictions[..., None], targets[..., None]
    return dice_loss(predictions, targets, smooth=smooth, apply_softmax=apply_sigmoid,
                     reduction="mean")


# ---------------------------------------------------------------------------
# Fenchel-Young losses
# ---------------------------------------------------------------------------

class MaxFun(Protocol):
    """A convex "max" of a vector of scores (``logsumexp``, ...)."""

    def __call__(self, scores: Any, *args: Any, **kwargs: Any) -> Any: ...


def make_fenchel_young_loss(max_fun: MaxFun) -> Callable[..., Any]:
    """The Fenchel-Young loss of ``max_fun`` (Blondel et al.):
    ``loss(scores, targets, *args, **kwargs) = max_fun(scores, *args,
    **kwargs) - <targets, scores>`` over the last axis, ``max_fun`` applied
    to each vector of scores. ``logsumexp`` gives the softmax cross
    entropy.

    >>> import ftorch.optim.losses as losses, ftorch.scipy.special as sp, mlx.core as mx
    >>> loss = losses.make_fenchel_young_loss(sp.logsumexp)
    >>> round(loss(mx.array([[2.0, -1.0]]), mx.array([[1.0, 0.0]])).item(), 4)
    0.0486
    """
    def fenchel_young_loss(scores: Any, targets: Any, *args: Any, **kwargs: Any) -> Any:
        scores, targets = fnp.asarray(scores), fnp.asarray(targets)
        lead = tuple(scores.shape[:-1])
        flat = fnp.reshape(scores, (-1, scores.shape[-1]))
        maxima = api.vmap(lambda s: max_fun(s, *args, **kwargs))(flat)
        return fnp.reshape(maxima, lead) - fnp.sum(targets * scores, axis=-1)

    return fenchel_young_loss
