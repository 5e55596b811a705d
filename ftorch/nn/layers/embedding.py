"""``Embedding``: a lookup table of vectors (``mlx.nn.Embedding``).

>>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
>>> emb = nn.Embedding(10, 4)
>>> params, _ = emb.init(random.key(0), mx.zeros((2, 5), mx.int32))
>>> emb(params, mx.array([[1, 2, 3]])).shape
(1, 3, 4)
"""

from __future__ import annotations

import dataclasses
import math

import mlx.core as mx

import ftorch.numpy as fnp
from ftorch.core import ShapeDtypeStruct
from ftorch.nn import init as initializers
from ftorch.nn._layer import Array, InputSpec, Key, Layer, Params, State, layer_error, spec_of
from ftorch.nn.init import Initializer
from ftorch.nn.layers._checks import check_param_fits, check_positive, checked_param

__all__ = ["Embedding"]

_INDEX_DTYPES = frozenset({mx.int8, mx.int16, mx.int32, mx.int64, mx.uint8, mx.uint16,
                           mx.uint32, mx.uint64})


def _check_indices(layer: Layer, x: InputSpec) -> None:
    dtype = getattr(x, "dtype", None)
    if not isinstance(dtype, mx.Dtype):  # NumPy arrays, lists
        dtype = spec_of(x if isinstance(x, ShapeDtypeStruct) else fnp.asarray(x)).dtype
    if dtype not in _INDEX_DTYPES:
        raise layer_error(layer, f"the input must hold integer indices, got dtype {dtype} "
                          f"(cast them with x.astype(mx.int32))", TypeError)


@dataclasses.dataclass(frozen=True)
class Embedding(Layer):
    r"""Maps each integer in ``[0, num_embeddings)`` to a learned vector of
    size ``dims``: ``y = weight[x]``, as ``mlx.nn.Embedding``.

    ``weight`` has shape ``(num_embeddings, dims)`` and is initialised from
    :math:`\mathcal{N}(0, 1/\text{dims})`. An index outside the table gives
    NaN (``ftorch.numpy.take``'s ``"fill"`` mode) rather than reading
    memory out of bounds.

    Args:
        num_embeddings (int): The size of the vocabulary.
        dims (int): The size of each vector.
        weight_init (callable, optional): An initialiser ``init(key, shape)``
            (``ftorch.nn.init``) for ``weight``. Default: ``None`` (``mlx.nn``'s).

    ``as_linear(params, x)`` is ``x @ weight.T``: the output projection of a
    model that ties its input and output embeddings.

    >>> import ftorch.nn as nn, ftorch.random as random, mlx.core as mx
    >>> emb = nn.Embedding(5, 3)
    >>> params, _ = emb.init(random.key(0), mx.array([0]))
    >>> bool(mx.all(emb(params, mx.array([4]))[0] == params["weight"][4]))
    True
    >>> emb.as_linear(params, mx.ones((2, 3))).shape
    (2, 5)
    """

    num_embeddings: int
    dims: int
    _: dataclasses.KW_ONLY
    weight_init: Initializer | None = None

    def __post_init__(self) -> None:
        check_positive("Embedding", num_embeddings=self.num_embeddings, dims=self.dims)

    def init(self, key: Key, x: InputSpec) -> tuple[Params, State]:
        r"""``weight`` (by default from :math:`\mathcal{N}(0, 1/\text{dims})`); no state."""
        _check_indices(self, x)
        shape = (self.num_embeddings, self.dims)
        check_param_fits(self, "weight", shape)
        initializer = self.weight_init or initializers.normal(0.0, math.sqrt(1.0 / self.dims))
        return {"weight": initializer(key, shape)}, {}

    def apply(self, params: Params, state: State, x: Array, *, key: Key | None = None,
              train: bool = False) -> tuple[Array, State]:
        """``(weight[x], state)``: ``x``'s shape plus ``(dims,)``."""
        _check_indices(self, x)
        weight = checked_param(self, params, "weight", (self.num_embeddings, self.dims))
        return fnp.take(weight, x, axis=0), state

    def as_linear(self, params: Params, x: Array) -> Array:
        """``x @ weight.T``: scores of ``x`` (last axis ``dims``) against every
        embedding, for tied input and output embeddings."""
        return fnp.matmul(x, fnp.swapaxes(params["weight"], 0, 1))
