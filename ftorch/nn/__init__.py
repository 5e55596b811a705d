"""Neural networks: stateless layers whose parameters are plain pytrees.

A layer (``ftorch.nn.Linear(3, 2)``) holds hyperparameters only.
``params, state = layer.init(key, x)`` makes its parameters, nested dicts
with ``mlx.nn``'s names and layouts (so weights exchange with ``mlx.nn``),
and its state (``{}`` but for BatchNorm's running statistics); ``x`` may be
an ``ft.ShapeDtypeStruct``. ``y, state = layer.apply(params, state, x, *,
key=None, train=False)`` is pure, so ``ft.grad``, ``ft.jit`` and ``ft.vmap``
apply to it; ``layer(params, x)`` is the short form without state. Random
layers (Dropout) take ``key`` in training; containers give each child a key
derived from theirs.

Also here: ``functional`` (activations, normalisations, attention, dropout),
``init`` (mlx.nn's initialisers), ``initializers`` (JAX's),
``losses`` and ``utils`` (``count_params``,
``summary``, ``cast``, ``partition``/``combine``, ``flatten_names``,
``load_weights``, ``save_weights``).

>>> import ftorch as ft, ftorch.nn as nn, ftorch.numpy as fnp, ftorch.random as random
>>> import mlx.core as mx
>>> model = nn.Sequential(nn.Linear(2, 16), nn.GELU(), nn.Dropout(0.1), nn.Linear(16, 1))
>>> params, state = model.init(random.key(0), mx.zeros((8, 2)))
>>> def loss(params, x, y, key):
...     return fnp.mean((model(params, x, key=key, train=True) - y) ** 2)
>>> grads = ft.jit(ft.grad(loss))(params, mx.ones((8, 2)), mx.zeros((8, 1)), random.key(1))
>>> grads["layers"][0]["weight"].shape
(16, 2)
"""

from ftorch.nn import functional, init, initializers, losses, utils
from ftorch.nn._layer import Bound, InputSpec, Key, Layer, Params, State, spec_of
from ftorch.nn.layers import *  # noqa: F403
from ftorch.nn.layers import __all__ as _layers

__all__ = [
    "functional", "init", "initializers",
    "losses", "utils", "Layer", "Bound", "Params", "State", "Key",
    "InputSpec", "spec_of", *_layers,
]
