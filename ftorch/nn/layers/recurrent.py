"""Recurrent layers: ``RNN``, ``GRU``, ``LSTM`` over sequences (``mlx.nn``'s
semantics and parameter names, looped with ``ftorch.lax.scan``), and the
single steps ``RNNCell``, ``GRUCell``, ``LSTMCell`` with the same parameters.

Sequences are ``(..., L, D)`` (batch axes first, as ``mlx.nn``'s ``NLD`` or
``LD``); the input projection of every step is one matmul before the loop.

>>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
>>> gru = nn.GRU(3, 5)
>>> params, _ = gru.init(random.key(0), mx.zeros((2, 7, 3)))
>>> sorted(params), gru(params, mx.ones((2, 7, 3))).shape
(['Wh', 'Wx', 'b', 'bhn'], (2, 7, 5))
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import ClassVar

import ftorch.numpy as fnp
import ftorch.random as random
from ftorch import lax, tree
from ftorch.nn import functional as F
from ftorch.nn._layer import Array, InputSpec, Key, Layer, Params, State, layer_error
from ftorch.nn.layers._checks import check_features, check_positive, shape_of
from ftorch.nn.layers.linear import init_param, linear

__all__ = ["RNN", "GRU", "LSTM", "RNNCell", "GRUCell", "LSTMCell"]


def _check_sequence(layer: Layer, x: InputSpec, input_size: int) -> None:
    shape = shape_of(x)
    if len(shape) < 2:
        raise layer_error(layer, f"the input must be a sequence (..., L, {input_size}), got "
                          f"shape {tuple(shape)}")
    check_features(layer, x, input_size)


def _check_carry(layer: Layer, carry: Array | None, x: Array, name: str, sequence: bool
                 ) -> None:
    """A clear error unless the initial ``carry`` (``hidden`` or ``cell``)
    is ``(..., hidden_size)``: for a sequence, the input's batch axes exactly
    (the loop's carry keeps its shape); for a cell, axes broadcasting with them."""
    if carry is None:
        return
    shape, size = tuple(shape_of(carry)), layer.hidden_size
    batch = tuple(shape_of(x))[:-2 if sequence else -1]
    if sequence and shape != batch + (size,):
        raise layer_error(layer, f"{name} must have shape {batch + (size,)} (the input's batch "
                          f"axes, then hidden_size={size}), got shape {shape}")
    if not sequence and (not shape or shape[-1] != size):
        raise layer_error(layer, f"{name} must have hidden_size={size} features on its last "
                          f"axis, got shape {shape}")


def _hidden_product(h: Array, weight: Array) -> Array:
    """``h @ weight.T``: the hidden state's contribution to a step."""
    return fnp.matmul(h, weight.T)


@dataclasses.dataclass(frozen=True)
class _Recurrent(Layer):
    r"""What the recurrent layers share: their fields, parameters from
    :math:`\mathcal{U}(-k, k)`, :math:`k = 1/\sqrt{H}`, the input's
    projection before the loop, zero initial carries, and the loop over
    axis -2 (``lax.scan``), or one step for a cell. A family (RNN, GRU,
    LSTM) defines its parameters' shapes and its step; its two classes set
    ``sequence``."""

    input_size: int
    hidden_size: int
    bias: bool = True

    sequence: ClassVar[bool]  # loop over the sequence (RNN), or one step (RNNCell)
    carries: ClassVar[tuple[str, ...]] = ("hidden",)
    projection: ClassVar[tuple[str, str]]  # the names of the input's weight and bias

    def __post_init__(self) -> None:
        check_positive(type(self).__name__, input_size=self.input_size,
                       hidden_size=self.hidden_size)

    def _shapes(self) -> dict[str, tuple[int, ...]]:
        """The parameters' shapes."""
        raise NotImplementedError

    def _step(self, params: Params, x_proj_t: Array, carry: tuple) -> tuple:
        """The carry after a step from the projected input ``x_proj_t``."""
        raise NotImplementedError

    def _check_input(self, x: InputSpec) -> None:
        if self.sequence:
            _check_sequence(self, x, self.input_size)
        else:
            check_features(self, x, self.input_size)

    def _init(self, key: Key, x: InputSpec) -> tuple[Params, State]:
        self._check_input(x)
        shapes = self._shapes()
        scale = 1.0 / math.sqrt(self.hidden_size)
        keys = random.split(key, len(shapes))
        return {name: init_param(self, name, None, keys[i], shape, scale)
                for i, (name, shape) in enumerate(shapes.items())}, {}

    def _output(self, params: Params, x: Array, carries: tuple) -> Array | tuple:
        """Every step's carry stacked on axis -2 (a sequence layer), or the
        new carry (a cell); one array for a single carry, else a tuple."""
        self._check_input(x)
        for name, carry in zip(self.carries, carries):
            _check_carry(self, carry, x, name, self.sequence)
        weight, bias = self.projection
        x_proj = linear(x, params[weight], params[bias] if self.bias else None)
        batch = tuple(x_proj.shape[:-2 if self.sequence else -1])
        carry = tuple(fnp.zeros(batch + (self.hidden_size,), x_proj.dtype) if c is None else c
                      for c in carries)
        if self.sequence:
            def step(carry: tuple, x_t: Array) -> tuple[tuple, tuple]:
                carry = self._step(params, x_t, carry)
                return carry, carry

            _, out = lax.scan(step, carry, fnp.moveaxis(x_proj, -2, 0))
            out = tree.map(lambda y: fnp.moveaxis(y, 0, -2), out)
        else:
            out = self._step(params, x_proj, carry)
        return out[0] if len(out) == 1 else out

    def init(self, key: Key, x: InputSpec, hidden: InputSpec | None = None
             ) -> tuple[Params, State]:
        r"""The parameters from :math:`\mathcal{U}(-k, k)`; no state."""
        return self._init(key, x)

    def apply(self, params: Params, state: State, x: Array, hidden: Array | None = None, *,
              key: Key | None = None, train: bool = False) -> tuple[Array, State]:
        """``(output, state)``: the hidden states ``(..., L, H)`` of a
        sequence layer, or a cell's new hidden state."""
        return self._output(params, x, (hidden,)), state


# ----------------------------------------------------------------------------
# Elman RNN
# ----------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _RNNBase(_Recurrent):
    nonlinearity: Callable[[Array], Array] | None = None

    projection = ("Wxh", "bias")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.nonlinearity is not None and not callable(self.nonlinearity):
            raise TypeError(f"{type(self).__name__}: nonlinearity must be callable, got "
                            f"{self.nonlinearity!r}")

    def _shapes(self) -> dict[str, tuple[int, ...]]:
        h = self.hidden_size
        return {"Wxh": (h, self.input_size), "Whh": (h, h), **({"bias": (h,)} if self.bias
                                                                 else {})}

    def _step(self, params: Params, x_proj_t: Array, carry: tuple) -> tuple:
        (h,) = carry
        return ((self.nonlinearity or fnp.tanh)(x_proj_t + _hidden_product(h, params["Whh"])),)


class RNN(_RNNBase):
    r"""An Elman recurrent layer, as ``mlx.nn.RNN``: for each step

    .. math:: h_{t+1} = \tanh(W_{xh} x_t + W_{hh} h_t + b)

    Args:
        input_size (int): The input's feature size ``D``.
        hidden_size (int): The hidden state's size ``H``.
        bias (bool, optional): Whether to use ``b``. Default: ``True``.
        nonlinearity (callable, optional): Replaces ``tanh`` (an ftorch
            function). Default: ``None`` (``tanh``).

    Params: ``Wxh (H, D)``, ``Whh (H, H)``, ``bias (H,)``, from
    :math:`\mathcal{U}(-k, k)`, :math:`k = 1/\sqrt{H}`.
    ``apply(params, state, x, hidden=None)``: ``x`` of shape ``(..., L, D)``,
    ``hidden`` (``(..., H)``) the initial state (zeros by default); returns
    every step's hidden state, ``(..., L, H)``.

    >>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
    >>> rnn = nn.RNN(2, 4)
    >>> params, _ = rnn.init(random.key(0), mx.zeros((5, 2)))
    >>> rnn(params, mx.ones((5, 2))).shape
    (5, 4)
    """

    sequence = True


class RNNCell(_RNNBase):
    r"""One step of ``RNN``, with the same parameters:
    :math:`h' = \tanh(W_{xh} x + W_{hh} h + b)`.

    Args:
        input_size (int): The input's feature size ``D``.
        hidden_size (int): The hidden state's size ``H``.
        bias (bool, optional): Whether to use ``b``. Default: ``True``.
        nonlinearity (callable, optional): Replaces ``tanh``. Default: ``None``.

    ``apply(params, state, x, hidden=None)``: ``x`` of shape ``(..., D)``,
    ``hidden`` ``(..., H)`` (zeros by default); returns the new hidden state.

    >>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
    >>> cell = nn.RNNCell(2, 4)
    >>> params, _ = cell.init(random.key(0), mx.zeros(2))
    >>> cell(params, mx.ones((3, 2)), mx.zeros((3, 4))).shape
    (3, 4)
    """

    sequence = False


# ----------------------------------------------------------------------------
# GRU
# ----------------------------------------------------------------------------


class _GRUBase(_Recurrent):
    projection = ("Wx", "b")

    def _shapes(self) -> dict[str, tuple[int, ...]]:
        h = self.hidden_size
        return {"Wx": (3 * h, self.input_size), "Wh": (3 * h, h),
                **({"b": (3 * h,), "bhn": (h,)} if self.bias else {})}

    def _step(self, params: Params, x_proj_t: Array, carry: tuple) -> tuple:
        """One step from the projected input ``W_x x_t + b`` (``(..., 3H)``)."""
        (h,) = carry
        size = self.hidden_size
        n_at = 2 * size
        h_proj = _hidden_product(h, params["Wh"])
        rz = F.sigmoid(x_proj_t[..., :n_at] + h_proj[..., :n_at])
        r, z = rz[..., :size], rz[..., size:]
        h_n = h_proj[..., n_at:]
        if self.bias:
            h_n = h_n + params["bhn"]
        n = fnp.tanh(x_proj_t[..., n_at:] + r * h_n)
        return ((1 - z) * n + z * h,)


_GRU_MATH = r"""
    .. math::
        \begin{aligned}
        r_t &= \sigma (W_{xr}x_t + W_{hr}h_t + b_{r}) \\
        z_t &= \sigma (W_{xz}x_t + W_{hz}h_t + b_{z}) \\
        n_t &= \tanh(W_{xn}x_t + b_{n} + r_t \odot (W_{hn}h_t + b_{hn})) \\
        h_{t + 1} &= (1 - z_t) \odot n_t + z_t \odot h_t
        \end{aligned}
"""


class GRU(_GRUBase):
    __doc__ = r"""A gated recurrent unit layer, as ``mlx.nn.GRU``: for each step
""" + _GRU_MATH + r"""
    Args:
        input_size (int): The input's feature size ``D``.
        hidden_size (int): The hidden state's size ``H``.
        bias (bool, optional): Whether to use biases. Default: ``True``.

    Params: ``Wx (3H, D)``, ``Wh (3H, H)``, ``b (3H,)``, ``bhn (H,)`` (gates
    in the order r, z, n), from :math:`\mathcal{U}(-k, k)`,
    :math:`k = 1/\sqrt{H}`. ``apply(params, state, x, hidden=None)``: ``x``
    of shape ``(..., L, D)``, ``hidden`` ``(..., H)`` the initial state
    (zeros by default); returns every step's hidden state, ``(..., L, H)``.

    >>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
    >>> gru = nn.GRU(2, 4)
    >>> params, _ = gru.init(random.key(0), mx.zeros((3, 5, 2)))
    >>> gru(params, mx.ones((3, 5, 2)), mx.zeros((3, 4))).shape
    (3, 5, 4)
    """

    sequence = True


class GRUCell(_GRUBase):
    __doc__ = r"""One step of ``GRU``, with the same parameters:
""" + _GRU_MATH + r"""
    Args:
        input_size (int): The input's feature size ``D``.
        hidden_size (int): The hidden state's size ``H``.
        bias (bool, optional): Whether to use biases. Default: ``True``.

    ``apply(params, state, x, hidden=None)``: ``x`` of shape ``(..., D)``,
    ``hidden`` ``(..., H)`` (zeros by default); returns the new hidden state.
    Loop it yourself with ``ftorch.lax.scan`` for custom recurrences.

    >>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
    >>> cell = nn.GRUCell(2, 4)
    >>> params, _ = cell.init(random.key(0), mx.zeros(2))
    >>> cell(params, mx.ones((3, 2)), mx.zeros((3, 4))).shape
    (3, 4)
    """

    sequence = False


# ----------------------------------------------------------------------------
# LSTM
# ----------------------------------------------------------------------------


class _LSTMBase(_Recurrent):
    projection = ("Wx", "bias")
    carries = ("hidden", "cell")

    def _shapes(self) -> dict[str, tuple[int, ...]]:
        h = self.hidden_size
        return {"Wx": (4 * h, self.input_size), "Wh": (4 * h, h),
                **({"bias": (4 * h,)} if self.bias else {})}

    def _step(self, params: Params, x_proj_t: Array, carry: tuple) -> tuple:
        """One step from the projected input ``W_x x_t + b`` (``(..., 4H)``)."""
        h, c = carry
        ifgo = x_proj_t + _hidden_product(h, params["Wh"])
        n = self.hidden_size
        i, f = F.sigmoid(ifgo[..., :n]), F.sigmoid(ifgo[..., n:2 * n])
        g, o = fnp.tanh(ifgo[..., 2 * n:3 * n]), F.sigmoid(ifgo[..., 3 * n:])
        c = f * c + i * g
        return o * fnp.tanh(c), c

    def init(self, key: Key, x: InputSpec, hidden: InputSpec | None = None,
             cell: InputSpec | None = None) -> tuple[Params, State]:
        r"""``Wx``, ``Wh``, ``bias`` from :math:`\mathcal{U}(-k, k)`; no state."""
        return self._init(key, x)

    def apply(self, params: Params, state: State, x: Array, hidden: Array | None = None,
              cell: Array | None = None, *, key: Key | None = None, train: bool = False
              ) -> tuple[tuple[Array, Array], State]:
        """``((hidden, cell), state)``: every step's, each ``(..., L, H)``, for
        a sequence layer; the new ones for a cell."""
        return self._output(params, x, (hidden, cell)), state


_LSTM_MATH = r"""
    .. math::
        \begin{aligned}
        i_t &= \sigma (W_{xi}x_t + W_{hi}h_t + b_{i}) \\
        f_t &= \sigma (W_{xf}x_t + W_{hf}h_t + b_{f}) \\
        g_t &= \tanh (W_{xg}x_t + W_{hg}h_t + b_{g}) \\
        o_t &= \sigma (W_{xo}x_t + W_{ho}h_t + b_{o}) \\
        c_{t + 1} &= f_t \odot c_t + i_t \odot g_t \\
        h_{t + 1} &= o_t \tanh(c_{t + 1})
        \end{aligned}
"""


class LSTM(_LSTMBase):
    __doc__ = r"""A long short-term memory layer, as ``mlx.nn.LSTM``: for each step
""" + _LSTM_MATH + r"""
    Args:
        input_size (int): The input's feature size ``D``.
        hidden_size (int): The hidden state's size ``H``.
        bias (bool, optional): Whether to use a bias. Default: ``True``.

    Params: ``Wx (4H, D)``, ``Wh (4H, H)``, ``bias (4H,)`` (gates in the
    order i, f, g, o), from :math:`\mathcal{U}(-k, k)`, :math:`k = 1/\sqrt{H}`.
    ``apply(params, state, x, hidden=None, cell=None)``: ``x`` of shape
    ``(..., L, D)``, the initial ``hidden`` and ``cell`` ``(..., H)`` (zeros
    by default); returns ``(hidden states, cell states)``, each
    ``(..., L, H)``, as ``mlx.nn.LSTM``.

    >>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
    >>> lstm = nn.LSTM(2, 4)
    >>> params, _ = lstm.init(random.key(0), mx.zeros((5, 2)))
    >>> hs, cs = lstm(params, mx.ones((3, 5, 2)))
    >>> hs.shape, cs.shape
    ((3, 5, 4), (3, 5, 4))
    """

    sequence = True


class LSTMCell(_LSTMBase):
    __doc__ = r"""One step of ``LSTM``, with the same parameters:
""" + _LSTM_MATH + r"""
    Args:
        input_size (int): The input's feature size ``D``.
        hidden_size (int): The hidden state's size ``H``.
        bias (bool, optional): Whether to use a bias. Default: ``True``.

    ``apply(params, state, x, hidden=None, cell=None)``: ``x`` of shape
    ``(..., D)``, ``hidden`` and ``cell`` ``(..., H)`` (zeros by default);
    returns ``(new hidden, new cell)``.

    >>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
    >>> cell = nn.LSTMCell(2, 4)
    >>> params, _ = cell.init(random.key(0), mx.zeros(2))
    >>> h, c = cell(params, mx.ones((3, 2)))
    >>> h.shape, c.shape
    ((3, 4), (3, 4))
    """

    sequence = False
