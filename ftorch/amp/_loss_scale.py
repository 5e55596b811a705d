"""Loss scaling for float16 training, with jmp's classes and semantics:
scale the loss before differentiating, unscale the gradients, and (dynamic)
adjust the scale by whether they came out finite. All are pytrees, so they
pass through ``ft.jit`` as part of a training state.

>>> import ftorch as ft, mlx.core as mx
>>> scale = ft.amp.DynamicLossScale(mx.array(2.0 ** 15), period=2)
>>> for finite in (True, True, False):
...     scale = scale.adjust(mx.array(finite))
>>> scale.loss_scale.item(), scale.counter.item()
(32768.0, 0)
"""

from __future__ import annotations

import dataclasses
from typing import Any

import mlx.core as mx
import optree

import ftorch.numpy as fnp
from ftorch import tree
from ftorch.core import Tracer, aval_of, is_floating

__all__ = ["NoOpLossScale", "StaticLossScale", "DynamicLossScale", "LossScale", "all_finite",
           "select_tree"]


def _check_floating(x: Any, owner: str, name: str) -> Any:
    x = fnp.asarray(x)
    if not is_floating(aval_of(x).dtype) or aval_of(x).shape != ():
        raise TypeError(f"{owner}: {name} must be a floating scalar, got {aval_of(x)}")
    return x


def _scale_tree(t: Any, factor: Any) -> Any:
    return tree.map(lambda x: x * factor, t)


@tree.dataclass(frozen=True)
class NoOpLossScale:
    """No scaling: ``scale`` and ``unscale`` return their input (``loss_scale``
    is 1), for code written for a loss scale that trains in bfloat16 or float32.

    >>> import ftorch as ft, mlx.core as mx
    >>> ft.amp.NoOpLossScale().scale(mx.array(3.0)).item()
    3.0
    """

    @property
    def loss_scale(self) -> int:
        """1."""
        return 1

    def scale(self, t: Any) -> Any:
        """``t`` as it is.

        >>> import ftorch as ft
        >>> ft.amp.NoOpLossScale().scale({"loss": 2.0})
        {'loss': 2.0}
        """
        return t

    def unscale(self, t: Any) -> Any:
        """``t`` as it is.

        >>> import ftorch as ft
        >>> ft.amp.NoOpLossScale().unscale([0.5])
        [0.5]
        """
        return t

    def adjust(self, grads_finite: Any) -> NoOpLossScale:
        """This scale.

        >>> import ftorch as ft, mlx.core as mx
        >>> scale = ft.amp.NoOpLossScale()
        >>> scale.adjust(mx.array(False)) is scale
        True
        """
        return self


@tree.dataclass(frozen=True)
class StaticLossScale:
    """Scales by a fixed ``loss_scale`` (an array or a number).

    >>> import ftorch as ft, mlx.core as mx
    >>> ft.amp.StaticLossScale(mx.array(128.0)).unscale(mx.array(256.0)).item()
    2.0
    """

    loss_scale: Any

    def scale(self, t: Any) -> Any:
        """``t``'s leaves times ``loss_scale``.

        >>> import ftorch as ft, mlx.core as mx
        >>> ft.amp.StaticLossScale(mx.array(128.0)).scale(mx.array(0.5)).item()
        64.0
        """
        return _scale_tree(t, self.loss_scale)

    def unscale(self, t: Any) -> Any:
        """``t``'s leaves divided by ``loss_scale``.

        >>> import ftorch as ft, mlx.core as mx
        >>> ft.amp.StaticLossScale(mx.array(4.0)).unscale({"g": mx.array(2.0)})["g"].item()
        0.5
        """
        return _scale_tree(t, 1 / self.loss_scale)

    def adjust(self, grads_finite: Any) -> StaticLossScale:
        """This scale (a static scale never changes).

        >>> import ftorch as ft, mlx.core as mx
        >>> ft.amp.StaticLossScale(mx.array(4.0)).adjust(mx.array(False)).loss_scale.item()
        4.0
        """
        return self


@tree.dataclass(frozen=True)
class DynamicLossScale:
    """A loss scale that grows by ``factor`` after ``period`` finite steps in
    a row, and shrinks by ``factor`` (not below ``min_loss_scale``) at a step
    whose gradients are not finite, as ``jmp.DynamicLossScale``. A pytree
    of ``loss_scale`` and ``counter`` (``period``, ``factor`` static).

    A training step under float16 autocast, with ``optim.apply_if_finite``
    skipping the steps whose gradients overflowed:

    >>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
    >>> from ftorch import optim
    >>> loss = ft.amp.autocast(lambda p, x: fnp.sum((x @ p["w"]) ** 2), mx.float16)
    >>> opt = optim.apply_if_finite(optim.sgd(0.1), max_consecutive_errors=5)
    >>> @ft.jit
    ... def step(params, opt_state, loss_scale, x):
    ...     scaled = ft.grad(lambda p: loss_scale.scale(loss(p, x)))(params)
    ...     grads = loss_scale.unscale(scaled)
    ...     updates, opt_state = opt.update(grads, opt_state, params)
    ...     loss_scale = loss_scale.adjust(ft.amp.all_finite(grads))
    ...     return optim.apply_updates(params, updates), opt_state, loss_scale
    >>> params = {"w": mx.ones((2, 1))}
    >>> state, scale = opt.init(params), ft.amp.DynamicLossScale(mx.array(2.0 ** 10))
    >>> params, state, scale = step(params, state, scale, mx.array([[1.0, 2.0]]))
    >>> w = lambda: [round(v, 4) for v in params["w"].reshape(-1).tolist()]
    >>> params["w"].dtype, w(), scale.loss_scale.item()
    (mlx.core.float32, [0.4, -0.2], 1024.0)
    >>> big = mx.array([[1e3, 1e3]])  # float16 overflows: the step is skipped
    >>> params, state, scale = step(params, state, scale, big)
    >>> w(), scale.loss_scale.item()
    ([0.4, -0.2], 512.0)
    """

    loss_scale: Any
    counter: Any = dataclasses.field(default_factory=lambda: mx.array(0, mx.int32))
    period: int = optree.dataclasses.field(default=2000, pytree_node=False)
    factor: int = optree.dataclasses.field(default=2, pytree_node=False)
    min_loss_scale: Any = dataclasses.field(default_factory=lambda: mx.array(1.0))

    def __post_init__(self) -> None:
        # (optree rebuilds the node with leaves that may be tracers: check arrays only.)
        if isinstance(self.loss_scale, (mx.array, float, int)) and not isinstance(
                self.loss_scale, Tracer):
            _check_floating(self.loss_scale, "DynamicLossScale", "loss_scale")
        if not isinstance(self.period, int) or self.period < 1:
            raise ValueError(f"DynamicLossScale: period must be a positive int, got "
                             f"{self.period!r}")

    def scale(self, t: Any) -> Any:
        """``t``'s leaves times ``loss_scale``.

        >>> import ftorch as ft, mlx.core as mx
        >>> ft.amp.DynamicLossScale(mx.array(1024.0)).scale(mx.array(0.5)).item()
        512.0
        """
        return _scale_tree(t, self.loss_scale)

    def unscale(self, t: Any) -> Any:
        """``t``'s leaves divided by ``loss_scale``.

        >>> import ftorch as ft, mlx.core as mx
        >>> ft.amp.DynamicLossScale(mx.array(1024.0)).unscale([mx.array(512.0)])[0].item()
        0.5
        """
        return _scale_tree(t, 1 / self.loss_scale)

    def adjust(self, grads_finite: Any) -> DynamicLossScale:
        """The next scale, given whether this step's gradients are finite
        (a boolean scalar): a new object, this one is unchanged.

        >>> import ftorch as ft, mlx.core as mx
        >>> scale = ft.amp.DynamicLossScale(mx.array(1024.0), period=1)
        >>> scale.adjust(mx.array(True)).loss_scale.item(), scale.loss_scale.item()
        (2048.0, 1024.0)
        >>> scale.adjust(mx.array(False)).loss_scale.item()
        512.0
        """
        grads_finite = fnp.asarray(grads_finite)
        if aval_of(grads_finite).shape != () or aval_of(grads_finite).dtype != mx.bool_:
            raise TypeError(f"DynamicLossScale.adjust: grads_finite must be a boolean scalar, "
                            f"got {aval_of(grads_finite)}")
        grown = self.loss_scale * self.factor
        grown = fnp.where(fnp.all(fnp.isfinite(grown)), grown, self.loss_scale)
        at_period = self.counter == self.period - 1
        loss_scale = fnp.where(
            grads_finite, fnp.where(at_period, grown, self.loss_scale),
            fnp.maximum(self.min_loss_scale, self.loss_scale / self.factor))
        counter = ((self.counter + 1) % self.period) * grads_finite
        return DynamicLossScale(loss_scale, counter.astype(mx.int32), self.period, self.factor,
                                self.min_loss_scale)


LossScale = NoOpLossScale | StaticLossScale | DynamicLossScale


def all_finite(t: Any) -> Any:
    """A boolean scalar: whether every element of ``t``'s leaves is finite.

    >>> import ftorch as ft, mlx.core as mx
    >>> ft.amp.all_finite({"a": mx.ones(2), "b": mx.array([1.0, float("inf")])}).item()
    False
    """
    leaves = tree.leaves(t)
    if not leaves:
        return mx.array(True)
    return fnp.all(fnp.stack([fnp.all(fnp.isfinite(x)) for x in leaves]))


def select_tree(pred: Any, a: Any, b: Any) -> Any:
    """``a`` where the boolean scalar ``pred`` holds, else ``b``, leaf by leaf
    (the trees have one structure).

    >>> import ftorch as ft, mlx.core as mx
    >>> ft.amp.select_tree(mx.array(False), {"x": mx.ones(1)}, {"x": mx.zeros(1)})["x"].item()
    0.0
    """
    pred = fnp.asarray(pred)
    if aval_of(pred).shape != () or aval_of(pred).dtype != mx.bool_:
        raise TypeError(f"select_tree: pred must be a boolean scalar, got {aval_of(pred)}")
    if tree.structure(a) != tree.structure(b):
        raise ValueError(f"select_tree: a and b must have one structure, got "
                         f"{tree.structure(a)} and {tree.structure(b)}")
    return tree.map(lambda x, y: fnp.where(pred, x, y), a, b)
