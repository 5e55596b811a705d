"""``ftorch.optim``: optimizers as pure functions, in optax's form.

A ``GradientTransformation`` is ``init(params) -> state`` and
``update(grads, state, params=None) -> (updates, state)``;
``apply_updates(params, updates)`` takes the step. States are pytrees of
arrays, so a train step is jittable as it is, and the named optimizers keep
their hyperparameters (the learning rate, ...) in the state as arrays: set
``state.hyperparams["learning_rate"]`` to change it without a retrace.

>>> import ftorch as ft, ftorch.numpy as fnp, ftorch.optim as optim, mlx.core as mx
>>> opt = optim.sgd(0.5)
>>> params = {"w": mx.array([2.0])}
>>> state = opt.init(params)
>>> grads = ft.grad(lambda p: fnp.sum(p["w"] ** 2))(params)
>>> updates, state = opt.update(grads, state, params)
>>> optim.apply_updates(params, updates)["w"].tolist()
[0.0]
"""

from ftorch.optim import (
    _adaptive,
    _alias,
    _base,
    _hyperparams,
    _linesearch,
    _numerics,
    _schedule,
    _transform,
    _utilities,
    _wrappers,
    losses,
)
from ftorch.optim._adaptive import *  # noqa: F403
from ftorch.optim._alias import *  # noqa: F403
from ftorch.optim._base import *  # noqa: F403
from ftorch.optim._hyperparams import *  # noqa: F403
from ftorch.optim._linesearch import *  # noqa: F403
from ftorch.optim._numerics import *  # noqa: F403
from ftorch.optim._schedule import *  # noqa: F403
from ftorch.optim._transform import *  # noqa: F403
from ftorch.optim._utilities import *  # noqa: F403
from ftorch.optim._wrappers import *  # noqa: F403
from ftorch.optim.losses import (  # noqa: F401  (re-exported: _TOP_LEVEL_LOSSES)
    convex_kl_divergence,
    cosine_distance,
    cosine_similarity,
    ctc_loss,
    ctc_loss_with_forward_probs,
    generalized_kl_divergence,
    hinge_loss,
    huber_loss,
    kl_divergence,
    l2_loss,
    log_cosh,
    ntxent,
    safe_softmax_cross_entropy,
    sigmoid_binary_cross_entropy,
    sigmoid_focal_loss,
    smooth_labels,
    softmax_cross_entropy,
    softmax_cross_entropy_with_integer_labels,
    squared_error,
)

# The losses optax also exports at its top level (all are in ``losses``).
_TOP_LEVEL_LOSSES = [
    "convex_kl_divergence", "cosine_distance", "cosine_similarity", "ctc_loss",
    "ctc_loss_with_forward_probs", "generalized_kl_divergence", "hinge_loss", "huber_loss",
    "kl_divergence", "l2_loss", "log_cosh", "ntxent", "safe_softmax_cross_entropy",
    "sigmoid_binary_cross_entropy", "sigmoid_focal_loss", "smooth_labels",
    "softmax_cross_entropy", "softmax_cross_entropy_with_integer_labels", "squared_error",
]

__all__ = [*_base.__all__, *_hyperparams.__all__, *_transform.__all__, *_adaptive.__all__,
           *_numerics.__all__, *_utilities.__all__,
           *_wrappers.__all__, *_linesearch.__all__, *_alias.__all__, *_schedule.__all__,
           "losses", *_TOP_LEVEL_LOSSES]
