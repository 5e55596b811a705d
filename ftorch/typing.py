"""The type aliases ftorch's signatures share, each with one meaning
(JAX: ``jax.typing``; optax: ``Params``, ``Updates``).

>>> from ftorch.typing import Shape, ShapeLike
>>> Shape, ShapeLike
(tuple[int, ...], int | collections.abc.Sequence[int])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ftorch.dtypes import DTypeLike

__all__ = [
    "Array", "ArrayLike", "Shape", "ShapeLike", "Axis", "Ints", "DTypeLike", "PyTree", "Params",
    "State", "Key",
]

#: An ``mx.array``, or a traced value standing for one under a transform.
Array = Any
#: What converts to an array: an array, a NumPy array, a Python scalar or a nested list.
ArrayLike = Any
#: A full shape, as the primitive layer takes it: a tuple of non-negative ints.
Shape = tuple[int, ...]
#: A shape as users write it (NumPy's): an int or a sequence of ints.
ShapeLike = int | Sequence[int]
#: An axis argument as users write it: an int, a sequence of ints, or None for all axes.
Axis = int | Sequence[int] | None
#: One int per spatial axis, normalised (a convolution's strides, dilations, window).
Ints = tuple[int, ...]
#: Nested dicts, lists and tuples (and registered nodes) of arrays.
PyTree = Any
#: A model's parameters: a pytree of arrays (nn layers: nested dicts and lists).
Params = PyTree
#: A layer's state: ``{}``, or nested dicts of arrays (BatchNorm's running statistics).
State = PyTree
#: A key of ``ftorch.random`` (``ftorch.random.key(seed)``).
Key = Array
