"""Helpers shared by the transforms, the rules and ftorch.numpy: the
abstract value of any operand, Python values accepted as arrays, and MLX's
global random key."""

from __future__ import annotations

from typing import Any

import mlx.core as mx
import numpy as np

from ftorch.core.avals import ShapeDtypeStruct
from ftorch.core.errors import conversion_error
from ftorch.core.tracer import Tracer

#: What an operand may be besides a tracer: arrays and Python or NumPy scalars.
ARRAY_LIKE = (mx.array, np.ndarray, np.generic, bool, int, float, complex)

# Python scalars are weakly typed: these are their dtypes on their own.
_SCALAR_DTYPES = {bool: mx.bool_, int: mx.int32, float: mx.float32, complex: mx.complex64}


def aval_of(x: Any) -> ShapeDtypeStruct:
    """Shape and dtype of an array, tracer, NumPy array or Python scalar.

    >>> import mlx.core as mx
    >>> aval_of(mx.zeros((2, 3))).shape, aval_of(1.5).dtype
    ((2, 3), mlx.core.float32)
    """
    if isinstance(x, mx.array):
        return ShapeDtypeStruct(x.shape, x.dtype)
    if isinstance(x, Tracer):
        return x.aval
    scalar_dtype = _SCALAR_DTYPES.get(type(x))
    if scalar_dtype is not None:
        return ShapeDtypeStruct((), scalar_dtype)
    return ShapeDtypeStruct(tuple(np.shape(x)), mx.array(x).dtype)


def as_array(x: Any, name: str = "argument") -> Any:
    """Accept an mx.array, a tracer, a NumPy array or a Python scalar.

    >>> as_array([1, 2]).tolist()
    [1, 2]
    """
    if isinstance(x, (mx.array, Tracer)):
        return x
    if isinstance(x, (np.ndarray, np.generic, bool, int, float, complex, list, tuple)):
        try:
            return mx.array(x)
        except (RuntimeError, ValueError) as e:  # MLX's "std::bad_cast" names nothing
            raise conversion_error(x, name, e) from None
    raise TypeError(f"{name} must be an array, got {type(x).__name__}: {x!r}")


# MLX keeps its global random key in this list (mx.random.state) and replaces
# the key on every draw without key=; reading the module attribute is slow.
_RANDOM_STATE = mx.random.state


def global_random_key() -> Any:
    """MLX's current global random key: a draw from the global state (an
    ``mx.random.*`` call without ``key=``) replaces it, which transforms that
    must refuse such draws compare before and after.

    >>> import mlx.core as mx
    >>> before = global_random_key(); _ = mx.random.normal((2,))
    >>> global_random_key() is before
    False
    """
    return _RANDOM_STATE[0]
