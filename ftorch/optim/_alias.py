"""The named optimizers (optax's aliases): each a ``chain`` of building
blocks, with its numeric hyperparameters kept in the state as arrays
(``inject_hyperparams``), so changing the learning rate never retraces a
jitted step.
"""

from __future__ import annotations

import mlx.core as mx

from ftorch.optim._base import GradientTransformation, ScalarOrSchedule, chain, identity
from ftorch.optim._hyperparams import inject_hyperparams
from ftorch.optim._transform import scale_by_learning_rate, trace

__all__ = ["sgd"]


def _sgd(learning_rate, momentum, nesterov, accumulator_dtype):
    return chain(
        identity() if momentum is None else trace(momentum, nesterov, accumulator_dtype),
        scale_by_learning_rate(learning_rate))


def sgd(learning_rate: ScalarOrSchedule, momentum: float | None = None, nesterov: bool = False,
        accumulator_dtype: mx.Dtype | None = None) -> GradientTransformation:
    """Stochastic gradient descent, with optional (Nesterov) momentum:
    ``t = momentum * t + g``, ``p -= lr * t`` (``lr * (momentum * t + g)``
    with ``nesterov``). MLX's ``SGD(weight_decay=...)`` is
    ``chain(add_decayed_weights(wd), sgd(lr, ...))``.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.sgd(0.1, momentum=0.9)
    >>> state = opt.init(mx.zeros(2))
    >>> updates, state = opt.update(mx.ones(2), state)
    >>> updates.tolist(), state.hyperparams["learning_rate"].item()
    ([-0.10000000149011612, -0.10000000149011612], 0.10000000149011612)
    """
    return inject_hyperparams(_sgd, hyperparams=("learning_rate", "momentum"))(
        learning_rate, momentum, nesterov, accumulator_dtype)
