"""The named optimizers (optax's aliases): each a ``chain`` of building
blocks, with its numeric hyperparameters kept in the state as arrays
(``inject_hyperparams``), so changing the learning rate never retraces a
jitted step. Booleans, dtypes, masks and structural integers stay Python
values.

Each docstring gives the update rule and, where ``mlx.optimizers`` has the
same optimizer, how to reproduce its numbers. In short: MLX's ``Adam`` and
``AdamW`` skip the bias correction unless ``bias_correction=True``; MLX's
``RMSprop`` and ``Adagrad`` add ``eps`` outside the square root; MLX's
``Adamax`` neither corrects the first moment nor adds ``eps`` where optax
does; MLX's ``Adafactor`` defaults to a relative step size and scales its
weight decay by the learning rate.

>>> import ftorch as ft, ftorch.numpy as fnp, ftorch.optim as optim, mlx.core as mx
>>> opt = optim.adamw(1e-2, weight_decay=1e-4)
>>> params = {"w": mx.array([1.0, -2.0])}
>>> state = opt.init(params)
>>> for _ in range(3):
...     grads = ft.grad(lambda p: fnp.sum(p["w"] ** 2))(params)
...     updates, state = opt.update(grads, state, params)
...     params = optim.apply_updates(params, updates)
>>> [round(x, 4) for x in params["w"].tolist()], state.count.item()
([0.97, -1.97], 3)
"""

from __future__ import annotations

from typing import Any

import mlx.core as mx

from ftorch.optim._adaptive import (
    scale_by_adan,
    scale_by_belief,
    scale_by_novograd,
    scale_by_optimistic_gradient,
    scale_by_polyak,
    scale_by_radam,
    scale_by_rprop,
    scale_by_sm3,
    scale_by_yogi,
)
from ftorch.optim._base import (
    GradientTransformation,
    GradientTransformationExtraArgs,
    MaskOrFn,
    ScalarOrSchedule,
    chain,
    identity,
    with_extra_args_support,
)
from ftorch.optim._hyperparams import _optimizer_state, inject_hyperparams
from ftorch.optim._linesearch import scale_by_zoom_linesearch
from ftorch.optim._numerics import add_noise
from ftorch.optim._transform import (
    _adam_chain,
    add_decayed_weights,
    clip_by_block_rms,
    ema,
    scale,
    scale_by_adadelta,
    scale_by_adam,
    scale_by_adamax,
    scale_by_amsgrad,
    scale_by_factored_rms,
    scale_by_lbfgs,
    scale_by_learning_rate,
    scale_by_lion,
    scale_by_muon,
    scale_by_param_block_rms,
    scale_by_rms,
    scale_by_rss,
    scale_by_sign,
    scale_by_stddev,
    scale_by_trust_ratio,
    trace,
)
from ftorch.optim._wrappers import masked

__all__ = [
    "sgd", "adam", "nadam", "adamw", "nadamw", "amsgrad", "adamax", "lion", "rmsprop",
    "adagrad", "adadelta", "adafactor", "lamb", "lars", "muon", "lbfgs",
    "adabelief", "adamaxw", "adan", "novograd", "radam", "rprop", "sm3", "yogi", "fromage",
    "sign_sgd", "signum", "optimistic_gradient_descent", "optimistic_adam",
    "optimistic_adam_v2", "polyak_sgd", "noisy_sgd",
]

_ZOOM_DEFAULT = scale_by_zoom_linesearch(max_linesearch_steps=20, initial_guess_strategy="one")
Number = float | mx.array

# Each optimizer's states are of an InjectHyperparamsState subclass named after
# it, so that an update given another optimizer's state says whose it is. A
# raw factory's argument annotated "| None" may be None; the others that
# inject_hyperparams injects must be numbers, scalar arrays or schedules.
SgdState = _optimizer_state("sgd", "SgdState", __name__)
AdamState = _optimizer_state("adam", "AdamState", __name__)
NadamState = _optimizer_state("nadam", "NadamState", __name__)
AdamWState = _optimizer_state("adamw", "AdamWState", __name__)
NadamWState = _optimizer_state("nadamw", "NadamWState", __name__)
AmsgradState = _optimizer_state("amsgrad", "AmsgradState", __name__)
AdamaxState = _optimizer_state("adamax", "AdamaxState", __name__)
LionState = _optimizer_state("lion", "LionState", __name__)
RmspropState = _optimizer_state("rmsprop", "RmspropState", __name__)
AdagradState = _optimizer_state("adagrad", "AdagradState", __name__)
AdadeltaState = _optimizer_state("adadelta", "AdadeltaState", __name__)
AdafactorState = _optimizer_state("adafactor", "AdafactorState", __name__)
LambState = _optimizer_state("lamb", "LambState", __name__)
LarsState = _optimizer_state("lars", "LarsState", __name__)
MuonState = _optimizer_state("muon", "MuonState", __name__)
AdabeliefState = _optimizer_state("adabelief", "AdabeliefState", __name__)
AdamaxwState = _optimizer_state("adamaxw", "AdamaxwState", __name__)
AdanState = _optimizer_state("adan", "AdanState", __name__)
NovogradState = _optimizer_state("novograd", "NovogradState", __name__)
RadamState = _optimizer_state("radam", "RadamState", __name__)
RpropState = _optimizer_state("rprop", "RpropState", __name__)
Sm3State = _optimizer_state("sm3", "Sm3State", __name__)
YogiState = _optimizer_state("yogi", "YogiState", __name__)
FromageState = _optimizer_state("fromage", "FromageState", __name__)
SignSgdState = _optimizer_state("sign_sgd", "SignSgdState", __name__)
SignumState = _optimizer_state("signum", "SignumState", __name__)
OptimisticGradientDescentState = _optimizer_state(
    "optimistic_gradient_descent", "OptimisticGradientDescentState", __name__)
OptimisticAdamV2State = _optimizer_state("optimistic_adam_v2", "OptimisticAdamV2State",
                                         __name__)


def _sgd(learning_rate, momentum: Number | None, nesterov, accumulator_dtype):
    return chain(
        identity() if momentum is None else trace(momentum, nesterov, accumulator_dtype),
        scale_by_learning_rate(learning_rate))


def sgd(learning_rate: ScalarOrSchedule, momentum: float | None = None, nesterov: bool = False,
        accumulator_dtype: mx.Dtype | None = None) -> GradientTransformation:
    """Stochastic gradient descent, with optional (Nesterov) momentum:
    ``t = momentum * t + g``, ``p -= lr * t`` (``lr * (momentum * t + g)``
    with ``nesterov``). MLX's ``SGD(lr, momentum, nesterov=...)`` is the
    same (with ``dampening=0``); its ``weight_decay=wd`` is
    ``chain(add_decayed_weights(wd), sgd(lr, ...))``.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.sgd(0.1, momentum=0.9)
    >>> state = opt.init(mx.zeros(2))
    >>> updates, state = opt.update(mx.ones(2), state)
    >>> updates.tolist(), state.hyperparams["learning_rate"].item()
    ([-0.10000000149011612, -0.10000000149011612], 0.10000000149011612)
    """
    return inject_hyperparams(_sgd, hyperparams=("learning_rate", "momentum"), name="sgd")(
        learning_rate, momentum, nesterov, accumulator_dtype)


# eps_root stays a Python number (a constant for differentiating through the
# step, rarely tuned): at its default 0 the update has no add for it.
_ADAM = ("learning_rate", "b1", "b2", "eps")
_ADAMW = (*_ADAM, "weight_decay")


def _adam(learning_rate, b1, b2, eps, eps_root, mu_dtype, nesterov):
    # chain(scale_by_adam(...), scale_by_learning_rate(learning_rate)), in one pass.
    return _adam_chain(b1, b2, eps, eps_root, mu_dtype, nesterov, learning_rate)


def adam(learning_rate: ScalarOrSchedule, b1: Number = 0.9, b2: Number = 0.999,
         eps: Number = 1e-8, eps_root: Number = 0.0, mu_dtype: mx.Dtype | None = None, *,
         nesterov: bool = False) -> GradientTransformation:
    """Adam: ``m = b1 m + (1 - b1) g``, ``v = b2 v + (1 - b2) g**2``,
    ``p -= lr * m_hat / (sqrt(v_hat + eps_root) + eps)`` with the bias
    corrections ``m_hat = m / (1 - b1**t)``, ``v_hat = v / (1 - b2**t)``
    (``nesterov``: NAdam's ``m_hat``, see ``scale_by_adam``). ``mu_dtype``:
    the dtype of ``m``. ``eps_root`` is kept as given, not in the state's
    ``hyperparams`` (the other numbers are).

    MLX's ``Adam(lr, betas=[b1, b2], eps, bias_correction=True)`` is
    ``adam(lr, b1, b2, eps)``; MLX's default ``bias_correction=False``
    uses ``m / (sqrt(v) + eps)``, which with ``eps=0`` is ``adam`` with the
    learning rate ``lambda n: lr * (1 - b1**(n+1)) / sqrt(1 - b2**(n+1))``.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.adam(0.1)
    >>> u, state = opt.update(mx.array([0.5, -2.0]), opt.init(mx.zeros(2)))
    >>> [round(x, 4) for x in u.tolist()]
    [-0.1, 0.1]
    """
    return inject_hyperparams(_adam, hyperparams=_ADAM, name="adam")(
        learning_rate, b1, b2, eps, eps_root, mu_dtype, nesterov)


def nadam(learning_rate: ScalarOrSchedule, b1: Number = 0.9, b2: Number = 0.999,
          eps: Number = 1e-8, eps_root: Number = 0.0,
          mu_dtype: mx.Dtype | None = None) -> GradientTransformation:
    """NAdam: ``adam(..., nesterov=True)``, whose first moment looks one step
    ahead: ``m_hat = b1 m / (1 - b1**(t+1)) + (1 - b1) g / (1 - b1**t)``.
    MLX has no NAdam.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.nadam(0.1)
    >>> u, state = opt.update(mx.array([0.5, -2.0]), opt.init(mx.zeros(2)))
    >>> [round(x, 4) for x in u.tolist()]
    [-0.1474, 0.1474]
    """
    return inject_hyperparams(_adam, hyperparams=_ADAM, name="nadam")(
        learning_rate, b1, b2, eps, eps_root, mu_dtype, True)


def _adamw(learning_rate, b1, b2, eps, eps_root, mu_dtype, weight_decay, mask, nesterov):
    # chain(scale_by_adam(...), add_decayed_weights(weight_decay, mask),
    #       scale_by_learning_rate(learning_rate)), in one pass.
    return _adam_chain(b1, b2, eps, eps_root, mu_dtype, nesterov, learning_rate, weight_decay,
                       mask)


def adamw(learning_rate: ScalarOrSchedule, b1: Number = 0.9, b2: Number = 0.999,
          eps: Number = 1e-8, eps_root: Number = 0.0, mu_dtype: mx.Dtype | None = None,
          weight_decay: ScalarOrSchedule = 1e-4, mask: MaskOrFn = None, *,
          nesterov: bool = False) -> GradientTransformation:
    """Adam with decoupled weight decay:
    ``p -= lr * (m_hat / (sqrt(v_hat + eps_root) + eps) + weight_decay * p)``
    (the decay scaled by the learning rate, as PyTorch); ``mask`` limits the
    decay to some parameters (see ``masked``).

    MLX's ``AdamW(lr, betas, eps, weight_decay=wd, bias_correction=True)``
    is ``adamw(lr, b1, b2, eps, weight_decay=wd)``: MLX shrinks the
    parameter by ``1 - lr * wd`` before the Adam step, the same sum. MLX's
    defaults differ: ``weight_decay=0.01`` (here ``1e-4``) and no bias
    correction (see ``adam``).

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.adamw(0.1, weight_decay=0.5)
    >>> p = mx.array([2.0])
    >>> round(opt.update(mx.array([1.0]), opt.init(p), p)[0].item(), 4)
    -0.2
    """
    return inject_hyperparams(_adamw, hyperparams=_ADAMW, name="adamw")(
        learning_rate, b1, b2, eps, eps_root, mu_dtype, weight_decay, mask, nesterov)


def nadamw(learning_rate: ScalarOrSchedule, b1: Number = 0.9, b2: Number = 0.999,
           eps: Number = 1e-8, eps_root: Number = 0.0, mu_dtype: mx.Dtype | None = None,
           weight_decay: ScalarOrSchedule = 1e-4,
           mask: MaskOrFn = None) -> GradientTransformation:
    """NAdamW: ``adamw(..., nesterov=True)`` (NAdam's first moment with
    decoupled weight decay). MLX has no NAdamW.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.nadamw(0.1, weight_decay=0.5)
    >>> p = mx.array([2.0])
    >>> round(opt.update(mx.array([1.0]), opt.init(p), p)[0].item(), 4)
    -0.2474
    """
    return inject_hyperparams(_adamw, hyperparams=_ADAMW, name="nadamw")(
        learning_rate, b1, b2, eps, eps_root, mu_dtype, weight_decay, mask, True)


def _amsgrad(learning_rate, b1, b2, eps, eps_root, mu_dtype, bias_correction_mu,
             bias_correction_nu):
    return chain(scale_by_amsgrad(b1, b2, eps, eps_root, mu_dtype, bias_correction_mu,
                                  bias_correction_nu),
                 scale_by_learning_rate(learning_rate))


def amsgrad(learning_rate: ScalarOrSchedule, b1: Number = 0.9, b2: Number = 0.999,
            eps: Number = 1e-8, eps_root: Number = 0.0, mu_dtype: mx.Dtype | None = None,
            bias_correction_mu: bool = True,
            bias_correction_nu: bool = True) -> GradientTransformation:
    """AMSGrad: Adam whose denominator uses the largest bias-corrected second
    moment so far, ``p -= lr * m_hat / (sqrt(max_t v_hat + eps_root) + eps)``
    (the step size never grows back). MLX has no AMSGrad.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.amsgrad(0.1)
    >>> u, state = opt.update(mx.array([0.5, -2.0]), opt.init(mx.zeros(2)))
    >>> [round(x, 4) for x in u.tolist()]
    [-0.1, 0.1]
    """
    return inject_hyperparams(_amsgrad, hyperparams=_ADAM, name="amsgrad")(
        learning_rate, b1, b2, eps, eps_root, mu_dtype, bias_correction_mu, bias_correction_nu)


def _adamax(learning_rate, b1, b2, eps):
    return chain(scale_by_adamax(b1, b2, eps), scale_by_learning_rate(learning_rate))


def adamax(learning_rate: ScalarOrSchedule, b1: Number = 0.9, b2: Number = 0.999,
           eps: Number = 1e-8) -> GradientTransformation:
    """Adamax (Adam with the infinity norm): ``m = b1 m + (1 - b1) g``,
    ``v = max(|g| + eps, b2 v)``, ``p -= lr * m / (1 - b1**t) / v``.

    MLX's ``Adamax(lr, betas, eps)`` uses ``v = max(b2 v, |g|)`` and
    ``p -= lr * m / (v + eps)``, without the bias correction: with ``eps=0``
    on both sides it is ``adamax(lambda n: lr * (1 - b1**(n+1)), b1, b2, 0.0)``.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.adamax(0.1, eps=0.0)
    >>> u, state = opt.update(mx.array([0.5, -2.0]), opt.init(mx.zeros(2)))
    >>> [round(x, 4) for x in u.tolist()]
    [-0.1, 0.1]
    """
    return inject_hyperparams(_adamax, hyperparams=_ADAM, name="adamax")(
        learning_rate, b1, b2, eps)


def _lion(learning_rate, b1, b2, mu_dtype, weight_decay, mask):
    return chain(scale_by_lion(b1, b2, mu_dtype), add_decayed_weights(weight_decay, mask),
                 scale_by_learning_rate(learning_rate))


def lion(learning_rate: ScalarOrSchedule, b1: Number = 0.9, b2: Number = 0.99,
         mu_dtype: mx.Dtype | None = None, weight_decay: ScalarOrSchedule = 1e-3,
         mask: MaskOrFn = None) -> GradientTransformation:
    """Lion: ``p -= lr * (sign(b1 m + (1 - b1) g) + weight_decay * p)``, then
    ``m = b2 m + (1 - b2) g``. Its updates have unit size per element: take
    a learning rate 3-10 times smaller than Adam's.

    MLX's ``Lion(lr, betas=[b1, b2], weight_decay=wd)`` is
    ``lion(lr, b1, b2, weight_decay=wd)``; MLX's default ``weight_decay`` is
    0 (here ``1e-3``).

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.lion(0.1, weight_decay=0.0)
    >>> p = mx.zeros(2)
    >>> [round(x, 4) for x in opt.update(mx.array([0.5, -2.0]), opt.init(p), p)[0].tolist()]
    [-0.1, 0.1]
    """
    return inject_hyperparams(_lion, hyperparams=("learning_rate", "b1", "b2", "weight_decay"),
                              name="lion")(
        learning_rate, b1, b2, mu_dtype, weight_decay, mask)


def _muon(learning_rate, momentum, weight_decay, mask, nesterov, ns_steps, ns_coeffs, eps,
          mu_dtype):
    return chain(add_decayed_weights(weight_decay, mask),
                 scale_by_muon(momentum, nesterov, ns_steps, ns_coeffs, eps, mu_dtype),
                 scale_by_learning_rate(learning_rate))


def muon(learning_rate: ScalarOrSchedule, momentum: Number = 0.95,
         weight_decay: ScalarOrSchedule = 0.01, mask: MaskOrFn = None, nesterov: bool = True,
         ns_steps: int = 5, ns_coeffs: tuple[float, float, float] = (3.4445, -4.7750, 2.0315),
         eps: Number = 1e-7, mu_dtype: mx.Dtype | None = None) -> GradientTransformation:
    """Muon (Jordan et al.), as ``mlx.optimizers.Muon``: the gradient plus
    ``weight_decay * p`` drives a momentum whose update, for parameters of
    two or more axes, is orthogonalized by ``ns_steps`` Newton-Schulz
    iterations and scaled by ``sqrt(max(1, rows / cols))``; ``p -= lr * u``
    (see ``scale_by_muon``). Parameters of fewer axes get the momentum step
    alone: give them (and usually embeddings and the output layer) AdamW
    with ``partition``.

    MLX's ``Muon(lr, momentum, weight_decay, nesterov, ns_steps)`` is the
    same for matrices; for arrays of more than two axes MLX scales by the
    last two axes of the original shape, here by the matrix it
    orthogonalizes (as the reference implementation).

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.muon(0.02, weight_decay=0.0)
    >>> p = mx.zeros((4, 2))
    >>> u, _ = opt.update(mx.ones((4, 2)), opt.init(p), p)
    >>> u.shape, round(abs(u[0, 0].item()), 3)
    ((4, 2), 0.007)
    """
    return inject_hyperparams(_muon, hyperparams=("learning_rate", "momentum", "weight_decay",
                                                  "eps"), name="muon")(
        learning_rate, momentum, weight_decay, mask, nesterov, ns_steps, ns_coeffs, eps,
        mu_dtype)


def _rmsprop(learning_rate, decay, eps, initial_scale, eps_in_sqrt, centered,
             momentum: Number | None, nesterov, bias_correction):
    scaling = (scale_by_stddev if centered else scale_by_rms)(
        decay, eps, initial_scale, eps_in_sqrt, bias_correction)
    return chain(scaling, scale_by_learning_rate(learning_rate),
                 identity() if momentum is None else trace(momentum, nesterov))


def rmsprop(learning_rate: ScalarOrSchedule, decay: Number = 0.9, eps: Number = 1e-8,
            initial_scale: Number = 0.0, eps_in_sqrt: bool = True, centered: bool = False,
            momentum: Number | None = None, nesterov: bool = False,
            bias_correction: bool = False) -> GradientTransformation:
    """RMSProp: ``v = decay v + (1 - decay) g**2`` (from ``initial_scale``),
    ``p -= lr * g / sqrt(v + eps)`` (``/ (sqrt(v) + eps)`` without
    ``eps_in_sqrt``); ``centered`` divides by the standard deviation
    ``sqrt(v - m**2 ...)`` instead, ``momentum`` adds a ``trace`` of the steps,
    ``bias_correction`` divides the averages by ``1 - decay**t``.

    MLX's ``RMSprop(lr, alpha, eps)`` is
    ``rmsprop(lr, decay=alpha, eps=eps, eps_in_sqrt=False)``; MLX's default
    ``alpha`` is 0.99 (here ``decay=0.9``).

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.rmsprop(0.1, decay=0.75, eps=0.0)
    >>> opt.update(mx.array([2.0]), opt.init(mx.zeros(1)))[0].item()
    -0.20000000298023224
    """
    return inject_hyperparams(_rmsprop, hyperparams=(
        "learning_rate", "decay", "eps", "initial_scale", "momentum"), name="rmsprop")(
        learning_rate, decay, eps, initial_scale, eps_in_sqrt, centered, momentum, nesterov,
        bias_correction)


def _adagrad(learning_rate, initial_accumulator_value, eps):
    return chain(scale_by_rss(initial_accumulator_value, eps),
                 scale_by_learning_rate(learning_rate))


def adagrad(learning_rate: ScalarOrSchedule, initial_accumulator_value: Number = 0.1,
            eps: Number = 1e-7) -> GradientTransformation:
    """Adagrad: ``s = s + g**2`` (from ``initial_accumulator_value``),
    ``p -= lr * g / sqrt(s + eps)``.

    MLX's ``Adagrad(lr, eps)`` starts from ``s = 0`` and divides by
    ``sqrt(s) + eps``: ``adagrad(lr, initial_accumulator_value=0.0,
    eps=0.0)`` matches it to within ``eps / sqrt(s)``.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.adagrad(0.1, initial_accumulator_value=0.0, eps=0.0)
    >>> opt.update(mx.array([2.0]), opt.init(mx.zeros(1)))[0].item()
    -0.10000000149011612
    """
    return inject_hyperparams(_adagrad, hyperparams=(
        "learning_rate", "initial_accumulator_value", "eps"), name="adagrad")(
        learning_rate, initial_accumulator_value, eps)


def _adadelta(learning_rate: ScalarOrSchedule | None, rho, eps, weight_decay, weight_decay_mask):
    # No learning rate is a step of 1, still a descent (optax's chain then skips
    # the negation and ascends).
    return chain(add_decayed_weights(weight_decay, mask=weight_decay_mask),
                 scale_by_adadelta(rho, eps),
                 scale(-1.0) if learning_rate is None else scale_by_learning_rate(learning_rate))


def adadelta(learning_rate: ScalarOrSchedule | None = None, rho: Number = 0.9,
             eps: Number = 1e-6, weight_decay: ScalarOrSchedule = 0.0,
             weight_decay_mask: MaskOrFn = None) -> GradientTransformation:
    """Adadelta: ``e_g = rho e_g + (1 - rho) g**2``,
    ``d = sqrt(e_x + eps) / sqrt(e_g + eps) * g``,
    ``e_x = rho e_x + (1 - rho) d**2``, ``p -= lr * d``;
    ``weight_decay * p`` is added to the gradient first. ``lr=None`` is a
    step of 1 (where optax's ``adadelta()`` skips the negation and ascends).

    MLX's ``AdaDelta(lr, rho, eps)`` is ``adadelta(lr, rho, eps)``.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.adadelta(1.0, rho=0.0, eps=1.0)
    >>> p = mx.zeros(1)
    >>> round(opt.update(mx.array([3.0]), opt.init(p), p)[0].item(), 4)
    -0.9487
    """
    return inject_hyperparams(_adadelta, hyperparams=(
        "learning_rate", "rho", "eps", "weight_decay"), name="adadelta")(
        learning_rate, rho, eps, weight_decay, weight_decay_mask)


def _adafactor(learning_rate: ScalarOrSchedule | None, min_dim_size_to_factor, decay_rate,
               decay_offset, multiply_by_parameter_scale, clipping_threshold: Number | None,
               momentum: Number | None, dtype_momentum,
               weight_decay_rate: ScalarOrSchedule | None, eps, factored, weight_decay_mask):
    steps = [scale_by_factored_rms(factored, decay_rate, decay_offset, min_dim_size_to_factor,
                                   eps)]
    if clipping_threshold is not None:
        steps.append(clip_by_block_rms(clipping_threshold))
    if learning_rate is not None:
        steps.append(scale_by_learning_rate(learning_rate, flip_sign=False))
    if multiply_by_parameter_scale:
        steps.append(scale_by_param_block_rms())
    if momentum is not None:
        steps.append(ema(momentum, debias=False, accumulator_dtype=dtype_momentum))
    if weight_decay_rate is not None:
        steps.append(add_decayed_weights(weight_decay_rate, mask=weight_decay_mask))
    steps.append(scale(-1.0))  # descent
    return chain(*steps)


def adafactor(learning_rate: ScalarOrSchedule | None = None, min_dim_size_to_factor: int = 128,
              decay_rate: Number = 0.8, decay_offset: int | mx.array = 0,
              multiply_by_parameter_scale: bool = True,
              clipping_threshold: Number | None = 1.0, momentum: Number | None = None,
              dtype_momentum: mx.Dtype = mx.float32,
              weight_decay_rate: ScalarOrSchedule | None = None, eps: Number = 1e-30,
              factored: bool = True, weight_decay_mask: MaskOrFn = None,
              ) -> GradientTransformation:
    """Adafactor: ``g`` divided by the root of a moving average of
    ``g**2 + eps`` (factored into row and column means for matrices whose
    two largest axes are at least ``min_dim_size_to_factor``; decay
    ``1 - (t - decay_offset)**-decay_rate``), clipped to a root mean square
    of ``clipping_threshold``, times ``learning_rate`` (``None``: 1) and,
    with ``multiply_by_parameter_scale``, ``max(rms(p), 1e-3)``; then an
    optional moving average (``momentum``, kept in ``dtype_momentum``) and
    ``weight_decay_rate * p`` (not scaled by the learning rate).

    MLX's ``Adafactor(lr, relative_step=False, beta_1=b1, clip_threshold=c,
    scale_parameter=s)`` on 2-D and smaller parameters is
    ``adafactor(lr, min_dim_size_to_factor=1, momentum=b1,
    clipping_threshold=c, multiply_by_parameter_scale=s)``. MLX factors
    every parameter of two or more dimensions (its last two axes), takes
    ``decay_rate=-0.8`` for this ``0.8``, ignores the learning rate by
    default (``relative_step=True``: ``min(1e-2, 1/sqrt(t))``) and scales
    its weight decay by the whole step size (``lr * max(rms(p), 1e-3)``),
    which no constant ``weight_decay_rate`` reproduces.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.adafactor(0.1, multiply_by_parameter_scale=False)
    >>> p = mx.zeros(2)
    >>> opt.update(mx.array([3.0, -3.0]), opt.init(p), p)[0].tolist()
    [-0.10000000149011612, 0.10000000149011612]
    """
    return inject_hyperparams(_adafactor, hyperparams=(
        "learning_rate", "decay_rate", "decay_offset", "clipping_threshold", "momentum",
        "weight_decay_rate", "eps"), name="adafactor")(
        learning_rate, min_dim_size_to_factor, decay_rate, decay_offset,
        multiply_by_parameter_scale, clipping_threshold, momentum, dtype_momentum,
        weight_decay_rate, eps, factored, weight_decay_mask)


def _lamb(learning_rate, b1, b2, eps, eps_root, weight_decay, mask):
    return chain(scale_by_adam(b1, b2, eps, eps_root), add_decayed_weights(weight_decay, mask),
                 scale_by_trust_ratio(), scale_by_learning_rate(learning_rate))


def lamb(learning_rate: ScalarOrSchedule, b1: Number = 0.9, b2: Number = 0.999,
         eps: Number = 1e-6, eps_root: Number = 0.0, weight_decay: ScalarOrSchedule = 0.0,
         mask: MaskOrFn = None) -> GradientTransformation:
    """LAMB: Adam's direction plus weight decay,
    ``r = m_hat / (sqrt(v_hat + eps_root) + eps) + weight_decay * p``, scaled
    per parameter by the trust ratio ``||p|| / ||r||``:
    ``p -= lr * ||p|| / ||r|| * r`` (a ratio of 1 where a norm is 0). MLX
    has no LAMB.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.lamb(0.1)
    >>> p = mx.array([3.0, 4.0])
    >>> [round(x, 4) + 0.0 for x in opt.update(mx.array([1.0, 0.0]), opt.init(p), p)[0].tolist()]
    [-0.5, 0.0]
    """
    return inject_hyperparams(_lamb, hyperparams=_ADAMW, name="lamb")(
        learning_rate, b1, b2, eps, eps_root, weight_decay, mask)


def _lars(learning_rate, weight_decay, weight_decay_mask, trust_coefficient, eps,
          trust_ratio_mask, momentum, nesterov):
    return chain(add_decayed_weights(weight_decay, mask=weight_decay_mask),
                 masked(scale_by_trust_ratio(trust_coefficient=trust_coefficient, eps=eps),
                        trust_ratio_mask),
                 scale_by_learning_rate(learning_rate), trace(momentum, nesterov))


def lars(learning_rate: ScalarOrSchedule, weight_decay: ScalarOrSchedule = 0.0,
         weight_decay_mask: MaskOrFn = True, trust_coefficient: Number = 0.001,
         eps: Number = 0.0, trust_ratio_mask: MaskOrFn = True, momentum: Number = 0.9,
         nesterov: bool = False) -> GradientTransformation:
    """LARS: ``d = g + weight_decay * p`` scaled per parameter by the trust
    ratio ``trust_coefficient * ||p|| / (||d|| + eps)`` (1 where a norm is
    0), times ``lr``, through (Nesterov) momentum ``t = momentum t + step``;
    ``p -= t``. The masks choose the parameters that get weight decay and
    the trust ratio. MLX has no LARS.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.lars(0.1, trust_coefficient=1.0)
    >>> p = mx.array([3.0, 4.0])
    >>> [round(x, 4) for x in opt.update(mx.array([1.0, 0.0]), opt.init(p), p)[0].tolist()]
    [-0.5, 0.0]
    """
    return inject_hyperparams(_lars, hyperparams=(
        "learning_rate", "weight_decay", "trust_coefficient", "eps", "momentum"), name="lars")(
        learning_rate, weight_decay, weight_decay_mask, trust_coefficient, eps,
        trust_ratio_mask, momentum, nesterov)


def lbfgs(learning_rate: ScalarOrSchedule | None = None, memory_size: int = 10,
          scale_init_precond: bool = True,
          linesearch: GradientTransformation | None = _ZOOM_DEFAULT,
          ) -> GradientTransformationExtraArgs:
    """L-BFGS: ``chain(scale_by_lbfgs(memory_size, scale_init_precond),
    scale_by_learning_rate(learning_rate), linesearch)`` (``scale(-1)``
    without a learning rate; no line search with ``linesearch=None``). The
    default line search is ``scale_by_zoom_linesearch(20,
    initial_guess_strategy="one")``, which needs ``update(grads, state,
    params, value=..., grad=..., value_fn=...)``;
    ``value_and_grad_from_state`` gives the value and gradient it computed
    at the new parameters. As in optax, the hyperparameters are not in the
    state (it is a chain's tuple).

    >>> import ftorch.numpy as fnp, ftorch.optim as optim, mlx.core as mx
    >>> f = lambda p: fnp.sum((p - 1.0) ** 2) + fnp.sum(p ** 4)
    >>> opt, p = optim.lbfgs(), mx.zeros(3)
    >>> state = opt.init(p)
    >>> value_and_grad = optim.value_and_grad_from_state(f)
    >>> for _ in range(10):
    ...     value, grad = value_and_grad(p, state=state)
    ...     u, state = opt.update(grad, state, p, value=value, grad=grad, value_fn=f)
    ...     p = optim.apply_updates(p, u)
    >>> [round(x, 4) for x in p.tolist()]
    [0.5898, 0.5898, 0.5898]
    """
    scaling = scale(-1.0) if learning_rate is None else scale_by_learning_rate(learning_rate)
    return with_extra_args_support(chain(
        scale_by_lbfgs(memory_size, scale_init_precond), scaling,
        identity() if linesearch is None else linesearch))


def _adabelief(learning_rate, b1, b2, eps, eps_root, nesterov):
    return chain(scale_by_belief(b1, b2, eps, eps_root, nesterov=nesterov),
                 scale_by_learning_rate(learning_rate))


def adabelief(learning_rate: ScalarOrSchedule, b1: Number = 0.9, b2: Number = 0.999,
              eps: Number = 1e-16, eps_root: Number = 1e-16, *,
              nesterov: bool = False) -> GradientTransformation:
    """AdaBelief: Adam whose second moment tracks the squared deviation of
    the gradient from its moving average, ``s = b2 s + (1 - b2) (g - m)**2
    + eps_root``; ``p -= lr * m_hat / (sqrt(s_hat) + eps)`` (see
    ``scale_by_belief``).

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.adabelief(0.1)
    >>> u, _ = opt.update(mx.array([0.5, -2.0]), opt.init(mx.zeros(2)))
    >>> [round(x, 4) for x in u.tolist()]
    [-0.1111, 0.1111]
    """
    return inject_hyperparams(_adabelief, hyperparams=_ADAM, name="adabelief")(
        learning_rate, b1, b2, eps, eps_root, nesterov)


def _adamaxw(learning_rate, b1, b2, eps, weight_decay, mask):
    return chain(scale_by_adamax(b1, b2, eps), add_decayed_weights(weight_decay, mask),
                 scale_by_learning_rate(learning_rate))


def adamaxw(learning_rate: ScalarOrSchedule, b1: Number = 0.9, b2: Number = 0.999,
            eps: Number = 1e-8, weight_decay: ScalarOrSchedule = 1e-4,
            mask: MaskOrFn = None) -> GradientTransformation:
    """Adamax with decoupled weight decay:
    ``p -= lr * (m / (1 - b1**t) / v + weight_decay * p)`` (see ``adamax``).

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.adamaxw(0.1, eps=0.0, weight_decay=0.5)
    >>> p = mx.array([2.0])
    >>> round(opt.update(mx.array([1.0]), opt.init(p), p)[0].item(), 4)
    -0.2
    """
    return inject_hyperparams(_adamaxw, hyperparams=(*_ADAM, "weight_decay"), name="adamaxw")(
        learning_rate, b1, b2, eps, weight_decay, mask)


def _adan(learning_rate, b1, b2, b3, eps, eps_root, weight_decay, mask):
    return chain(scale_by_adan(b1, b2, b3, eps, eps_root),
                 add_decayed_weights(weight_decay, mask), scale_by_learning_rate(learning_rate))


def adan(learning_rate: ScalarOrSchedule, b1: Number = 0.98, b2: Number = 0.92,
         b3: Number = 0.99, eps: Number = 1e-8, eps_root: Number = 1e-8,
         weight_decay: ScalarOrSchedule = 0.0, mask: MaskOrFn = None) -> GradientTransformation:
    """Adan (adaptive Nesterov momentum, Xie et al.): ``scale_by_adan``'s
    step plus ``weight_decay * p``, times ``-lr``.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.adan(0.1)
    >>> p = mx.zeros(2)
    >>> [round(x, 4) for x in opt.update(mx.array([0.5, -2.0]), opt.init(p), p)[0].tolist()]
    [-0.1, 0.1]
    """
    return inject_hyperparams(_adan, hyperparams=(
        "learning_rate", "b1", "b2", "b3", "eps", "eps_root", "weight_decay"), name="adan")(
        learning_rate, b1, b2, b3, eps, eps_root, weight_decay, mask)


def _novograd(learning_rate, b1, b2, eps, eps_root, weight_decay):
    return chain(scale_by_novograd(b1, b2, eps, eps_root, weight_decay),
                 scale_by_learning_rate(learning_rate))


def novograd(learning_rate: ScalarOrSchedule, b1: Number = 0.9, b2: Number = 0.25,
             eps: Number = 1e-6, eps_root: Number = 0.0,
             weight_decay: Number = 0.0) -> GradientTransformation:
    """NovoGrad (Ginsburg et al.): Adam-like with a second moment per layer,
    the moving average of the gradient's squared norm (see
    ``scale_by_novograd``); ``p -= lr * m``.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.novograd(0.1)
    >>> p = mx.zeros(2)
    >>> [round(x, 4) for x in opt.update(mx.array([3.0, -4.0]), opt.init(p), p)[0].tolist()]
    [-0.06, 0.08]
    """
    return inject_hyperparams(_novograd, hyperparams=(
        "learning_rate", "b1", "b2", "eps", "eps_root", "weight_decay"), name="novograd")(
        learning_rate, b1, b2, eps, eps_root, weight_decay)


def _radam(learning_rate, b1, b2, eps, eps_root, threshold, nesterov):
    return chain(scale_by_radam(b1, b2, eps, eps_root, threshold, nesterov=nesterov),
                 scale_by_learning_rate(learning_rate))


def radam(learning_rate: ScalarOrSchedule, b1: Number = 0.9, b2: Number = 0.999,
          eps: Number = 1e-8, eps_root: Number = 0.0, threshold: Number = 5.0, *,
          nesterov: bool = False) -> GradientTransformation:
    """Rectified Adam (Liu et al.): Adam's step times a rectification of
    its variance once enough steps are averaged, plain momentum before
    (see ``scale_by_radam``).

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.radam(0.1)
    >>> u, _ = opt.update(mx.array([0.5, -2.0]), opt.init(mx.zeros(2)))
    >>> [round(x, 4) for x in u.tolist()]
    [-0.05, 0.2]
    """
    return inject_hyperparams(_radam, hyperparams=(*_ADAM, "threshold"), name="radam")(
        learning_rate, b1, b2, eps, eps_root, threshold, nesterov)


def _rprop(learning_rate, eta_minus, eta_plus, min_step_size, max_step_size):
    return chain(scale_by_rprop(learning_rate, eta_minus, eta_plus, min_step_size,
                                max_step_size), scale(-1.0))


def rprop(learning_rate: Number, eta_minus: Number = 0.5, eta_plus: Number = 1.2,
          min_step_size: Number = 1e-6, max_step_size: Number = 50.0) -> GradientTransformation:
    """Rprop (Riedmiller and Braun): per element, a step size that grows
    while the gradient keeps its sign and shrinks when it flips;
    ``p -= step_size * sign(g)`` (see ``scale_by_rprop``). For full-batch
    gradients.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.rprop(0.1)
    >>> s = opt.init(mx.zeros(2))
    >>> u, s = opt.update(mx.array([2.0, -3.0]), s); u, s = opt.update(mx.array([1.0, 1.0]), s)
    >>> u.tolist()
    [-0.10000000149011612, -0.0]
    """
    return inject_hyperparams(_rprop, hyperparams=(
        "learning_rate", "eta_minus", "eta_plus", "min_step_size", "max_step_size"),
        name="rprop")(learning_rate, eta_minus, eta_plus, min_step_size, max_step_size)


def _sm3(learning_rate, momentum):
    return chain(scale_by_sm3(momentum), scale(-learning_rate))


def sm3(learning_rate: Number, momentum: Number = 0.9) -> GradientTransformation:
    """SM3 (Anil et al.): memory-efficient Adagrad keeping one accumulator
    per axis of each parameter, with momentum (see ``scale_by_sm3``).

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.sm3(1.0)
    >>> u, _ = opt.update(mx.array([[3.0, 4.0]]), opt.init(mx.zeros((1, 2))))
    >>> [round(x, 3) for x in u[0].tolist()]
    [-0.1, -0.1]
    """
    return inject_hyperparams(_sm3, hyperparams=("learning_rate", "momentum"), name="sm3")(
        learning_rate, momentum)


def _yogi(learning_rate, b1, b2, eps):
    return chain(scale_by_yogi(b1, b2, eps), scale_by_learning_rate(learning_rate))


def yogi(learning_rate: ScalarOrSchedule, b1: Number = 0.9, b2: Number = 0.999,
         eps: Number = 1e-3) -> GradientTransformation:
    """Yogi (Zaheer et al.): Adam with an additive second-moment update that
    moves ``v`` toward ``g**2`` by ``(1 - b2) g**2`` (see ``scale_by_yogi``).

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.yogi(0.1)
    >>> u, _ = opt.update(mx.array([0.5, -2.0]), opt.init(mx.zeros(2)))
    >>> [round(x, 4) for x in u.tolist()]
    [-0.0996, 0.0999]
    """
    return inject_hyperparams(_yogi, hyperparams=("learning_rate", "b1", "b2", "eps"),
                              name="yogi")(learning_rate, b1, b2, eps)


def _fromage(learning_rate, min_norm):
    if callable(learning_rate):
        def shrink(count):
            return 1 / (1 + learning_rate(count) ** 2) ** 0.5
        return chain(scale_by_trust_ratio(min_norm),
                     scale_by_learning_rate(lambda c: shrink(c) * learning_rate(c)),
                     add_decayed_weights(lambda c: shrink(c) - 1))
    shrink = 1 / (1 + learning_rate ** 2) ** 0.5
    return chain(scale_by_trust_ratio(min_norm), scale_by_learning_rate(learning_rate * shrink),
                 add_decayed_weights(shrink - 1))


def fromage(learning_rate: ScalarOrSchedule, min_norm: Number = 1e-6) -> GradientTransformation:
    """Fromage (Bernstein et al.): each parameter steps by ``lr`` times its
    norm along its normalised gradient, then shrinks by ``1 / sqrt(1 +
    lr**2)``: ``p = (p - lr |p| / |g| g) / sqrt(1 + lr**2)``.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.fromage(0.5)
    >>> p = mx.array([3.0, 4.0])
    >>> [round(x, 3) for x in optim.apply_updates(p, opt.update(mx.array([0.0, 1.0]),
    ...                                           opt.init(p), p)[0]).tolist()]
    [2.683, 1.342]
    """
    return inject_hyperparams(_fromage, hyperparams=("learning_rate", "min_norm"),
                              name="fromage")(learning_rate, min_norm)


def _sign_sgd(learning_rate):
    return chain(scale_by_sign(), scale_by_learning_rate(learning_rate))


def sign_sgd(learning_rate: ScalarOrSchedule) -> GradientTransformation:
    """SignSGD: ``p -= lr * sign(g)``.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.sign_sgd(0.5)
    >>> opt.update(mx.array([2.0, -0.1]), opt.init(mx.zeros(2)))[0].tolist()
    [-0.5, 0.5]
    """
    return inject_hyperparams(_sign_sgd, hyperparams=("learning_rate",), name="sign_sgd")(
        learning_rate)


def _signum(learning_rate, beta, accumulator_dtype):
    return chain(ema(beta, debias=False, accumulator_dtype=accumulator_dtype), scale_by_sign(),
                 scale_by_learning_rate(learning_rate))


def signum(learning_rate: ScalarOrSchedule, beta: Number = 0.9,
           accumulator_dtype: mx.Dtype | None = None) -> GradientTransformation:
    """Signum: ``m = beta m + (1 - beta) g``, ``p -= lr * sign(m)``.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.signum(0.5)
    >>> opt.update(mx.array([2.0, -0.1]), opt.init(mx.zeros(2)))[0].tolist()
    [-0.5, 0.5]
    """
    return inject_hyperparams(_signum, hyperparams=("learning_rate", "beta"), name="signum")(
        learning_rate, beta, accumulator_dtype)


def _optimistic_gradient_descent(learning_rate, alpha, beta):
    return chain(scale_by_optimistic_gradient(alpha, beta),
                 scale_by_learning_rate(learning_rate))


def optimistic_gradient_descent(learning_rate: ScalarOrSchedule, alpha: Number = 1.0,
                                beta: Number = 1.0) -> GradientTransformation:
    """Optimistic gradient descent for min-max games:
    ``p -= lr * ((alpha + beta) g - beta g_prev)``.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.optimistic_gradient_descent(0.1)
    >>> s = opt.init(mx.zeros(1))
    >>> u, s = opt.update(mx.array([1.0]), s); u, s = opt.update(mx.array([3.0]), s)
    >>> round(u.item(), 4)
    -0.5
    """
    return inject_hyperparams(_optimistic_gradient_descent, hyperparams=(
        "learning_rate", "alpha", "beta"), name="optimistic_gradient_descent")(
        learning_rate, alpha, beta)


def _optimistic_adam_v2(learning_rate, alpha, beta, b1, b2, eps, eps_root, mu_dtype, nesterov):
    return chain(scale_by_adam(b1, b2, eps, eps_root, mu_dtype, nesterov=nesterov),
                 scale_by_optimistic_gradient(alpha, beta), scale_by_learning_rate(learning_rate))


def optimistic_adam_v2(learning_rate: ScalarOrSchedule, *, alpha: Number = 1.0,
                       beta: Number = 1.0, b1: Number = 0.9, b2: Number = 0.999,
                       eps: Number = 1e-8, eps_root: Number = 0.0,
                       mu_dtype: mx.Dtype | None = None,
                       nesterov: bool = True) -> GradientTransformation:
    """Optimistic Adam: the optimistic gradient (``alpha``, ``beta``) of
    Adam's steps (NAdam's with ``nesterov``), times ``-lr``.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.optimistic_adam_v2(0.1)
    >>> u, _ = opt.update(mx.array([0.5, -2.0]), opt.init(mx.zeros(2)))
    >>> [round(x, 4) for x in u.tolist()]
    [-0.1474, 0.1474]
    """
    return inject_hyperparams(_optimistic_adam_v2, hyperparams=(
        "learning_rate", "alpha", "beta", "b1", "b2", "eps"), name="optimistic_adam_v2")(
        learning_rate, alpha, beta, b1, b2, eps, eps_root, mu_dtype, nesterov)


def optimistic_adam(learning_rate: Number, optimism: Number | None = None, b1: Number = 0.9,
                    b2: Number = 0.999, eps: Number = 1e-8, eps_root: Number = 0.0,
                    mu_dtype: mx.Dtype | None = None, *,
                    nesterov: bool = True) -> GradientTransformation:
    """Optimistic Adam, optax's first form: ``optimistic_adam_v2(1.0,
    alpha=learning_rate, beta=optimism)`` (``optimism`` defaults to the
    learning rate); no schedules.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.optimistic_adam(0.1)
    >>> u, _ = opt.update(mx.array([0.5, -2.0]), opt.init(mx.zeros(2)))
    >>> [round(x, 4) for x in u.tolist()]
    [-0.1474, 0.1474]
    """
    if callable(learning_rate):
        raise ValueError("optimistic_adam: learning_rate must be a number (no schedules); "
                         "optimistic_adam_v2 takes schedules")
    return optimistic_adam_v2(1.0, alpha=learning_rate,
                              beta=learning_rate if optimism is None else optimism, b1=b1,
                              b2=b2, eps=eps, eps_root=eps_root, mu_dtype=mu_dtype,
                              nesterov=nesterov)


def polyak_sgd(max_learning_rate: Number = 1.0, scaling: ScalarOrSchedule = 1.0,
               f_min: Number = 0.0, eps: Number = 0.0,
               variant: str = "sps") -> GradientTransformationExtraArgs:
    """SGD with the Polyak step size: ``p -= scaling * min((f(p) - f_min) /
    (|g|**2 + eps), max_learning_rate) * g``; ``update`` takes the
    objective's ``value=`` (see ``scale_by_polyak``). As optax's, a plain
    chain: its hyperparameters are not in the state.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.polyak_sgd()
    >>> opt.update(mx.array([2.0]), opt.init(mx.zeros(1)), value=mx.array(1.0))[0].tolist()
    [-0.5]
    """
    return chain(sgd(learning_rate=scaling),
                 scale_by_polyak(f_min, max_learning_rate, eps, variant))


def noisy_sgd(learning_rate: ScalarOrSchedule, eta: Number = 0.01, gamma: Number = 0.55,
              key: Any | int | None = None, *, seed: int | None = None
              ) -> GradientTransformation:
    """SGD with annealed Gaussian gradient noise: ``p -= lr * (g + n)``,
    ``n ~ N(0, eta / t ** gamma)`` (see ``add_noise``; ftorch's random
    streams differ from JAX's).

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.noisy_sgd(0.1, key=0)
    >>> opt.update(mx.ones(2), opt.init(mx.zeros(2)))[0].shape
    (2,)
    """
    return chain(add_noise(eta, gamma, key, seed=seed), scale_by_learning_rate(learning_rate))
