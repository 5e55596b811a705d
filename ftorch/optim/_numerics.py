"""optax's numerical helpers on pytrees: moment updates and bias
corrections (the pieces the ``scale_by_*`` transforms are made of), norms
with a floor and a finite gradient at 0, ``scale_gradient``, and the
transformations that constrain updates (``zero_nans``,
``keep_params_nonnegative``) or add noise (``add_noise``).

>>> import ftorch.optim as optim, mlx.core as mx
>>> m = optim.update_moment({"w": mx.array([2.0])}, {"w": mx.array([0.0])}, 0.9, 1)
>>> [round(x, 4) for x in optim.bias_correction(m, 0.9, 1)["w"].tolist()]
[2.0]
"""

from __future__ import annotations

from typing import Any, NamedTuple

import mlx.core as mx

import ftorch.lax as lax
import ftorch.numpy as fnp
import ftorch.numpy.linalg as linalg
import ftorch.random as random
from ftorch import tree
from ftorch.optim._base import GradientTransformation, _check_state, safe_increment
from ftorch.optim._transform import _count0, _leafwise, _need_params

__all__ = [
    "bias_correction", "update_moment", "update_moment_per_elem_norm",
    "update_infinity_moment", "safe_norm", "safe_root_mean_squares", "scale_gradient",
    "zero_nans", "ZeroNansState", "keep_params_nonnegative", "NonNegativeParamsState",
    "add_noise", "AddNoiseState",
]


def bias_correction(moment: Any, decay: float | Any, count: int | Any) -> Any:
    """Each leaf of ``moment`` divided by ``1 - decay ** count`` (Adam's bias
    correction of a moving average started at 0).

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> optim.bias_correction(mx.array([0.5]), 0.5, 1).tolist()
    [1.0]
    """
    correction = 1.0 - fnp.power(fnp.asarray(decay, mx.float32), fnp.asarray(count, mx.float32))
    return tree.map(lambda t: t / fnp.astype(correction, t.dtype), moment)


def update_moment(updates: Any, moments: Any, decay: float | Any, order: int) -> Any:
    """``(1 - decay) * u ** order + decay * moment``, leaf by leaf.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> optim.update_moment(mx.array([2.0]), mx.array([1.0]), 0.5, 2).tolist()
    [2.5]
    """
    return tree.map(lambda g, t: (1 - decay) * g ** order + decay * t, updates, moments)


def update_moment_per_elem_norm(updates: Any, moments: Any, decay: float | Any,
                                order: int) -> Any:
    """``(1 - decay) * u ** order + decay * moment``, leaf by leaf, as optax's:
    a real ``u`` is raised to ``order`` as it is (signed, for an odd order), a
    complex one's modulus is.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> optim.update_moment_per_elem_norm(mx.array([-2.0]), mx.array([0.0]), 0.5, 2).tolist()
    [2.0]
    """
    def one(g, t):
        if fnp.iscomplexobj(g):
            norm = fnp.abs(g) ** order
        else:
            norm = fnp.square(g) if order == 2 else g ** order
        return (1 - decay) * norm + decay * t

    return tree.map(one, updates, moments)


def update_infinity_moment(updates: Any, moments: Any, decay: float | Any,
                           eps: float | Any) -> Any:
    """``max(|u| + eps, decay * moment)``, leaf by leaf (Adamax's second
    moment).

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> optim.update_infinity_moment(mx.array([-2.0]), mx.array([3.0]), 0.5, 0.0).tolist()
    [2.0]
    """
    return tree.map(lambda g, t: fnp.maximum(fnp.abs(g) + eps, decay * t), updates, moments)


def safe_norm(x: Any, min_norm: float | Any, ord: int | float | str | None = None,
              axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Any:
    """``max(norm(x, ord, axis), min_norm)`` (``numpy.linalg.norm``'s
    ``ord`` and ``axis``), whose gradient is 0, not NaN, where the norm is
    below ``min_norm`` (also at ``x = 0``).

    >>> import ftorch as ft, ftorch.optim as optim, mlx.core as mx
    >>> ft.grad(lambda x: optim.safe_norm(x, 1e-6))(mx.zeros(2)).tolist()
    [0.0, 0.0]
    """
    x = fnp.asarray(x)
    norm = linalg.norm(x, ord=ord, axis=axis, keepdims=True)
    low = norm <= min_norm
    safe_x = fnp.where(low, fnp.ones_like(x), x)
    if not keepdims:
        norm = linalg.norm(x, ord=ord, axis=axis, keepdims=False)
        low = norm <= min_norm
    return fnp.where(low, min_norm, linalg.norm(safe_x, ord=ord, axis=axis, keepdims=keepdims))


def safe_root_mean_squares(x: Any, min_rms: float | Any) -> Any:
    """``max(sqrt(mean(x ** 2)), min_rms)`` with a gradient of 0, not NaN,
    below ``min_rms``.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> optim.safe_root_mean_squares(mx.array([3.0, 4.0]), 1.0).item()
    3.535533905029297
    """
    x = fnp.asarray(x)
    rms = fnp.sqrt(fnp.mean(fnp.square(x)))
    low = rms <= min_rms
    safe_x = fnp.where(low, fnp.ones_like(x), x)
    return fnp.where(low, min_rms, fnp.sqrt(fnp.mean(fnp.square(safe_x))))


def scale_gradient(inputs: Any, scale: float | Any) -> Any:
    """``inputs`` unchanged, but their gradient multiplied by ``scale`` (0:
    ``stop_gradient``), leaf by leaf.

    >>> import ftorch as ft, ftorch.optim as optim, mlx.core as mx
    >>> ft.grad(lambda x: optim.scale_gradient(x, 0.5) * 3.0)(mx.array(1.0)).item()
    1.5
    """
    def one(x):
        fixed = lax.stop_gradient(x)
        return fixed + scale * (x - fixed)  # the value is x; the derivative scale

    return tree.map(one, inputs)


class ZeroNansState(NamedTuple):
    """``found_nan``: per leaf, whether the last update held a NaN."""

    found_nan: Any


def zero_nans() -> GradientTransformation:
    """Replace NaNs in the updates by 0, recording per leaf whether there
    were any.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.zero_nans()
    >>> u, s = opt.update(mx.array([1.0, float("nan")]), opt.init(mx.zeros(2)))
    >>> u.tolist(), s.found_nan.item()
    ([1.0, 0.0], True)
    """
    def init(params):
        return ZeroNansState(tree.map(lambda p: mx.array(False), params))

    def update(updates, state, params=None):
        _check_state("zero_nans", state, ZeroNansState)
        found = tree.map(lambda u: fnp.any(fnp.isnan(u)), updates)
        return tree.map(lambda u: fnp.where(fnp.isnan(u), fnp.zeros_like(u), u),
                        updates), ZeroNansState(found)

    return GradientTransformation(init, update)


class NonNegativeParamsState(NamedTuple):
    """``keep_params_nonnegative``'s (empty) state."""


def keep_params_nonnegative() -> GradientTransformation:
    """Clip the updates so that no parameter goes below 0: where ``p + u <
    0`` the update is ``-p``. ``update`` needs ``params``.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt, p = optim.keep_params_nonnegative(), mx.array([1.0, 1.0])
    >>> opt.update(mx.array([-3.0, 0.5]), opt.init(p), p)[0].tolist()
    [-1.0, 0.5]
    """
    def update(updates, state, params=None):
        fname = "keep_params_nonnegative"
        _need_params(fname, params)
        (updates,) = _leafwise(fname, lambda u, p: (fnp.where(p + u < 0, -p, u),), 1, updates,
                               params, what=("params",))
        return updates, state

    return GradientTransformation(lambda params: NonNegativeParamsState(), update)


class AddNoiseState(NamedTuple):
    """``count`` (int32) and ``rng_key``, the key of the next draw."""

    count: Any
    rng_key: Any


def add_noise(eta: float | Any, gamma: float | Any, key: Any | int | None = None, *,
              seed: int | None = None) -> GradientTransformation:
    """Add Gaussian noise of variance ``eta / t ** gamma`` (``t`` the step,
    from 1) to the updates (Neelakantan et al.). ``key`` is an
    ``ftorch.random`` key or an int seed (default 0; ``seed`` is its
    older name). ftorch's random streams differ from JAX's: the same key
    draws other noise than optax.

    >>> import ftorch.optim as optim, mlx.core as mx
    >>> opt = optim.add_noise(0.01, 0.55, key=0)
    >>> u, s = opt.update(mx.zeros(3), opt.init(mx.zeros(3)))
    >>> u.shape, s.count.item()
    ((3,), 1)
    """
    if seed is not None:
        if key is not None:
            raise ValueError("add_noise: give key or seed, not both")
        key = seed

    def init(params):
        k = random.key(0 if key is None else key) if key is None or isinstance(key, int) else key
        return AddNoiseState(_count0(), k)

    def update(updates, state, params=None):
        _check_state("add_noise", state, AddNoiseState)
        count = safe_increment(state.count)
        std = fnp.sqrt(eta / fnp.power(fnp.astype(count, mx.float32), gamma))
        next_key, draw_key = random.split(state.rng_key)
        leaves, treedef = tree.flatten(updates)
        keys = random.split(draw_key, max(len(leaves), 1))
        noisy = [u + fnp.astype(std, u.dtype) * random.normal(keys[i], u.shape, u.dtype)
                 for i, u in enumerate(leaves)]
        return tree.unflatten(treedef, noisy), AddNoiseState(count, next_key)

    return GradientTransformation(init, update)
