"""``Sequential``: layers applied one after the other.

>>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
>>> model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
>>> params, state = model.init(random.key(0), mx.zeros((2, 4)))
>>> sorted(nn.utils.flatten_names(params))
['layers.0.bias', 'layers.0.weight', 'layers.2.bias', 'layers.2.weight']
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ftorch.nn._layer import Key, Layer, Params, State
from ftorch.nn.layers.activations import as_layer

__all__ = ["Sequential"]


@dataclasses.dataclass(frozen=True, init=False)
class Sequential(Layer):
    """Calls its layers in order, each on the previous one's output, as
    ``mlx.nn.Sequential``.

    Args:
        *layers: ``Layer``s, or plain functions of arrays (wrapped in
            ``Lambda``).

    Params: ``{"layers": [p0, p1, ...]}`` (``{}`` for a layer without
    parameters), so the flat names are ``mlx.nn``'s (``"layers.0.weight"``).
    State: ``{"layers": [s0, s1, ...]}`` when a layer has state, else ``{}``.
    ``init`` gives each layer the shape its predecessor outputs (one pass of
    ``ft.eval_shape`` over the whole chain, computing nothing). ``apply``
    with ``key`` gives layer ``i`` the key ``ftorch.random.split(key, n)[i]``,
    so one key serves all.

    >>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
    >>> model = nn.Sequential(nn.Linear(3, 4), nn.Dropout(0.5), lambda x: 2 * x)
    >>> params, state = model.init(random.key(0), mx.zeros((5, 3)))
    >>> y, state = model.apply(params, state, mx.ones((5, 3)), key=random.key(1), train=True)
    >>> y.shape, state
    ((5, 4), {})
    """

    layers: tuple[Layer, ...]

    def __init__(self, *layers: Any) -> None:
        if len(layers) == 1 and isinstance(layers[0], (list, tuple)):
            layers = tuple(layers[0])
        object.__setattr__(self, "layers", tuple(as_layer(f) for f in layers))

    def __repr__(self) -> str:
        return f"Sequential({', '.join(map(repr, self.layers))})"

    def children(self) -> dict[str, Any]:
        """``{"layers": layers}``, even when there are none."""
        return {"layers": self.layers}

    def apply(self, params: Params, state: State, x: Any, *, key: Key | None = None,
              train: bool = False) -> tuple[Any, State]:
        """``(layer_n(...layer_0(x)), new state)``."""
        run = self.bind(params, state, key=key, train=train)
        for i, layer in enumerate(self.layers):
            # run.layers[i](x), without making a bound child per call: a
            # Sequential of small layers is where the per-layer cost shows.
            x = run._run(("layers", i), layer, (x,), {})
        return x, run.state

    def __len__(self) -> int:
        return len(self.layers)

    def __getitem__(self, index: int | slice) -> Any:
        """A layer, or a ``Sequential`` of a slice of the layers (whose params
        are ``{"layers": params["layers"][index]}``)."""
        if isinstance(index, slice):
            return Sequential(*self.layers[index])
        return self.layers[index]
