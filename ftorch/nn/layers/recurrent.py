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

import ftorch.numpy as fnp
import ftorch.random as random
from ftorch import lax, tree
from ftorch.nn import functional as F
from ftorch.nn._layer import (
    Array,
    InputSpec,
    Key,
    Layer,
    Params,
    State,
    check_features,
    check_positive,
    layer_error,
    shape_of,
)
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


def _uniform_params(layer: Layer, key: Key, shapes: dict[str, tuple[int, ...]]) -> Params:
    """Every parameter from ``U(-k, k)``, ``k = 1/sqrt(hidden_size)``."""
    scale = 1.0 / math.sqrt(layer.hidden_size)
    keys = random.split(key, len(shapes))
    return {name: init_param(layer, name, None, keys[i], shape, scale) for i, (name, shape) in
            enumerate(shapes.items())}


def _zeros(x_proj: Array, hidden_size: int) -> Array:
    """A zero hidden state for the projected input ``(..., L, n)``."""
    return fnp.zeros(tuple(x_proj.shape[:-2]) + (hidden_size,), x_proj.dtype)


def _over_time(step: Callable, carry: object, x_proj: Array) -> object:
    """``lax.scan`` of ``step(carry, x_t) -> (carry, y_t)`` over axis -2 of
    ``x_proj``: the ``y_t`` stacked on axis -2."""
    _, ys = lax.scan(step, carry, fnp.moveaxis(x_proj, -2, 0))
    return tree.map(lambda y: fnp.moveaxis(y, 0, -2), ys)


# ----------------------------------------------------------------------------
# Elman RNN
# ----------------------------------------------------------------------------


def _rnn_step(params: Params, nonlinearity: Callable, x_proj_t: Array, h: Array) -> Array:
    return nonlinearity(x_proj_t + fnp.matmul(h, fnp.swapaxes(params["Whh"], 0, 1)))


def _rnn_params(layer: RNN | RNNCell, key: Key) -> Params:
    h = layer.hidden_size
    shapes = {"Wxh": (h, layer.input_size), "Whh": (h, h)}
    if layer.bias:
        shapes["bias"] = (h,)
    return _uniform_params(layer, key, shapes)


@dataclasses.dataclass(frozen=True)
class RNN(Layer):
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

    input_size: int
    hidden_size: int
    bias: bool = True
    nonlinearity: Callable[[Array], Array] | None = None

    def __post_init__(self) -> None:
        check_positive("RNN", input_size=self.input_size, hidden_size=self.hidden_size)
        if self.nonlinearity is not None and not callable(self.nonlinearity):
            raise TypeError(f"RNN: nonlinearity must be callable, got {self.nonlinearity!r}")

    def init(self, key: Key, x: InputSpec, hidden: InputSpec | None = None
             ) -> tuple[Params, State]:
        """``Wxh``, ``Whh``, ``bias`` from :math:`\\mathcal{U}(-k, k)`; no state."""
        _check_sequence(self, x, self.input_size)
        return _rnn_params(self, key), {}

    def apply(self, params: Params, state: State, x: Array, hidden: Array | None = None, *,
              key: Key | None = None, train: bool = False) -> tuple[Array, State]:
        """``(hidden states (..., L, H), state)``."""
        _check_sequence(self, x, self.input_size)
        _check_carry(self, hidden, x, "hidden", sequence=True)
        act = self.nonlinearity or fnp.tanh
        x_proj = linear(x, params["Wxh"], params["bias"] if self.bias else None)
        h0 = _zeros(x_proj, self.hidden_size) if hidden is None else hidden

        def step(h, x_t):
            h = _rnn_step(params, act, x_t, h)
            return h, h

        return _over_time(step, h0, x_proj), state


@dataclasses.dataclass(frozen=True)
class RNNCell(Layer):
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

    input_size: int
    hidden_size: int
    bias: bool = True
    nonlinearity: Callable[[Array], Array] | None = None

    def __post_init__(self) -> None:
        check_positive("RNNCell", input_size=self.input_size, hidden_size=self.hidden_size)

    def init(self, key: Key, x: InputSpec, hidden: InputSpec | None = None
             ) -> tuple[Params, State]:
        """``Wxh``, ``Whh``, ``bias`` from :math:`\\mathcal{U}(-k, k)`; no state."""
        check_features(self, x, self.input_size)
        return _rnn_params(self, key), {}

    def apply(self, params: Params, state: State, x: Array, hidden: Array | None = None, *,
              key: Key | None = None, train: bool = False) -> tuple[Array, State]:
        """``(new hidden state, state)``."""
        check_features(self, x, self.input_size)
        _check_carry(self, hidden, x, "hidden", sequence=False)
        x_proj = linear(x, params["Wxh"], params["bias"] if self.bias else None)
        if hidden is None:
            return (self.nonlinearity or fnp.tanh)(x_proj), state
        return _rnn_step(params, self.nonlinearity or fnp.tanh, x_proj, hidden), state


# ----------------------------------------------------------------------------
# GRU
# ----------------------------------------------------------------------------


def _gru_params(layer: GRU | GRUCell, key: Key) -> Params:
    h = layer.hidden_size
    shapes = {"Wx": (3 * h, layer.input_size), "Wh": (3 * h, h)}
    if layer.bias:
        shapes.update(b=(3 * h,), bhn=(h,))
    return _uniform_params(layer, key, shapes)


def _gru_step(params: Params, hidden_size: int, bias: bool, x_proj_t: Array, h: Array
              ) -> Array:
    """One GRU step from the projected input ``W_x x_t + b`` (``(..., 3H)``)."""
    n_at = 2 * hidden_size
    h_proj = fnp.matmul(h, fnp.swapaxes(params["Wh"], 0, 1))
    rz = F.sigmoid(x_proj_t[..., :n_at] + h_proj[..., :n_at])
    r, z = rz[..., :hidden_size], rz[..., hidden_size:]
    h_n = h_proj[..., n_at:]
    if bias:
        h_n = h_n + params["bhn"]
    n = fnp.tanh(x_proj_t[..., n_at:] + r * h_n)
    return (1 - z) * n + z * h


_GRU_MATH = r"""
    .. math::
        \begin{aligned}
        r_t &= \sigma (W_{xr}x_t + W_{hr}h_t + b_{r}) \\
        z_t &= \sigma (W_{xz}x_t + W_{hz}h_t + b_{z}) \\
        n_t &= \tanh(W_{xn}x_t + b_{n} + r_t \odot (W_{hn}h_t + b_{hn})) \\
        h_{t + 1} &= (1 - z_t) \odot n_t + z_t \odot h_t
        \end{aligned}
"""


@dataclasses.dataclass(frozen=True)
class GRU(Layer):
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

    input_size: int
    hidden_size: int
    bias: bool = True

    def __post_init__(self) -> None:
        check_positive("GRU", input_size=self.input_size, hidden_size=self.hidden_size)

    def init(self, key: Key, x: InputSpec, hidden: InputSpec | None = None
             ) -> tuple[Params, State]:
        """``Wx``, ``Wh``, ``b``, ``bhn`` from :math:`\\mathcal{U}(-k, k)`; no state."""
        _check_sequence(self, x, self.input_size)
        return _gru_params(self, key), {}

    def apply(self, params: Params, state: State, x: Array, hidden: Array | None = None, *,
              key: Key | None = None, train: bool = False) -> tuple[Array, State]:
        """``(hidden states (..., L, H), state)``."""
        _check_sequence(self, x, self.input_size)
        _check_carry(self, hidden, x, "hidden", sequence=True)
        x_proj = linear(x, params["Wx"], params["b"] if self.bias else None)
        h0 = _zeros(x_proj, self.hidden_size) if hidden is None else hidden

        def step(h, x_t):
            h = _gru_step(params, self.hidden_size, self.bias, x_t, h)
            return h, h

        return _over_time(step, h0, x_proj), state


@dataclasses.dataclass(frozen=True)
class GRUCell(Layer):
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

    input_size: int
    hidden_size: int
    bias: bool = True

    def __post_init__(self) -> None:
        check_positive("GRUCell", input_size=self.input_size, hidden_size=self.hidden_size)

    def init(self, key: Key, x: InputSpec, hidden: InputSpec | None = None
             ) -> tuple[Params, State]:
        """``Wx``, ``Wh``, ``b``, ``bhn`` from :math:`\\mathcal{U}(-k, k)`; no state."""
        check_features(self, x, self.input_size)
        return _gru_params(self, key), {}

    def apply(self, params: Params, state: State, x: Array, hidden: Array | None = None, *,
              key: Key | None = None, train: bool = False) -> tuple[Array, State]:
        """``(new hidden state, state)``."""
        check_features(self, x, self.input_size)
        _check_carry(self, hidden, x, "hidden", sequence=False)
        x_proj = linear(x, params["Wx"], params["b"] if self.bias else None)
        if hidden is None:
            hidden = fnp.zeros(tuple(x_proj.shape[:-1]) + (self.hidden_size,), x_proj.dtype)
        return _gru_step(params, self.hidden_size, self.bias, x_proj, hidden), state


# ----------------------------------------------------------------------------
# LSTM
# ----------------------------------------------------------------------------


def _lstm_params(layer: LSTM | LSTMCell, key: Key) -> Params:
    h = layer.hidden_size
    shapes = {"Wx": (4 * h, layer.input_size), "Wh": (4 * h, h)}
    if layer.bias:
        shapes["bias"] = (4 * h,)
    return _uniform_params(layer, key, shapes)


def _lstm_step(params: Params, hidden_size: int, x_proj_t: Array, h: Array, c: Array
               ) -> tuple[Array, Array]:
    """One LSTM step from the projected input ``W_x x_t + b`` (``(..., 4H)``)."""
    ifgo = x_proj_t + fnp.matmul(h, fnp.swapaxes(params["Wh"], 0, 1))
    n = hidden_size
    i, f = F.sigmoid(ifgo[..., :n]), F.sigmoid(ifgo[..., n:2 * n])
    g, o = fnp.tanh(ifgo[..., 2 * n:3 * n]), F.sigmoid(ifgo[..., 3 * n:])
    c = f * c + i * g
    return o * fnp.tanh(c), c


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


@dataclasses.dataclass(frozen=True)
class LSTM(Layer):
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

    input_size: int
    hidden_size: int
    bias: bool = True

    def __post_init__(self) -> None:
        check_positive("LSTM", input_size=self.input_size, hidden_size=self.hidden_size)

    def init(self, key: Key, x: InputSpec, hidden: InputSpec | None = None,
             cell: InputSpec | None = None) -> tuple[Params, State]:
        """``Wx``, ``Wh``, ``bias`` from :math:`\\mathcal{U}(-k, k)`; no state."""
        _check_sequence(self, x, self.input_size)
        return _lstm_params(self, key), {}

    def apply(self, params: Params, state: State, x: Array, hidden: Array | None = None,
              cell: Array | None = None, *, key: Key | None = None, train: bool = False
              ) -> tuple[tuple[Array, Array], State]:
        """``((hidden states, cell states), state)``, each ``(..., L, H)``."""
        _check_sequence(self, x, self.input_size)
        _check_carry(self, hidden, x, "hidden", sequence=True)
        _check_carry(self, cell, x, "cell", sequence=True)
        x_proj = linear(x, params["Wx"], params["bias"] if self.bias else None)
        h0 = _zeros(x_proj, self.hidden_size) if hidden is None else hidden
        c0 = _zeros(x_proj, self.hidden_size) if cell is None else cell

        def step(carry, x_t):
            h, c = _lstm_step(params, self.hidden_size, x_t, *carry)
            return (h, c), (h, c)

        return _over_time(step, (h0, c0), x_proj), state


@dataclasses.dataclass(frozen=True)
class LSTMCell(Layer):
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

    input_size: int
    hidden_size: int
    bias: bool = True

    def __post_init__(self) -> None:
        check_positive("LSTMCell", input_size=self.input_size, hidden_size=self.hidden_size)

    def init(self, key: Key, x: InputSpec, hidden: InputSpec | None = None,
             cell: InputSpec | None = None) -> tuple[Params, State]:
        """``Wx``, ``Wh``, ``bias`` from :math:`\\mathcal{U}(-k, k)`; no state."""
        check_features(self, x, self.input_size)
        return _lstm_params(self, key), {}

    def apply(self, params: Params, state: State, x: Array, hidden: Array | None = None,
              cell: Array | None = None, *, key: Key | None = None, train: bool = False
              ) -> tuple[tuple[Array, Array], State]:
        """``((new hidden, new cell), state)``."""
        check_features(self, x, self.input_size)
        _check_carry(self, hidden, x, "hidden", sequence=False)
        _check_carry(self, cell, x, "cell", sequence=False)
        x_proj = linear(x, params["Wx"], params["bias"] if self.bias else None)
        shape = tuple(x_proj.shape[:-1]) + (self.hidden_size,)
        h = fnp.zeros(shape, x_proj.dtype) if hidden is None else hidden
        c = fnp.zeros(shape, x_proj.dtype) if cell is None else cell
        return _lstm_step(params, self.hidden_size, x_proj, h, c), state
