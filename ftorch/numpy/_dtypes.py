"""Dtypes and introspection as in jax.numpy: the abstract dtype categories
(``floating``, ``integer``, ...) and the other names of MLX's dtypes
(``single``, ``double``, ``bool``, ...), ``issubdtype``, ``isdtype``,
``promote_types``, ``can_cast``, ``finfo``, ``iinfo``, ``dtype``; ``shape``,
``size`` and ``ndim`` of anything array-like; and printing (``array_str``,
``array_repr`` and NumPy's print options, which govern them).

ftorch's dtypes are MLX's (``fnp.float32 is mx.float32``) and its
categories are MLX's ``DtypeCategory`` values (``fnp.floating is
mx.floating``): they work with ``issubdtype`` and as the ``dtype`` of any
function, but are not callable as JAX's scalar types are; write
``fnp.asarray(x, fnp.float32)`` for ``jnp.float32(x)``.

>>> import ftorch.numpy as fnp, mlx.core as mx
>>> fnp.issubdtype(mx.bfloat16, fnp.floating), fnp.promote_types("int8", "uint8")
(True, mlx.core.int16)
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Sequence
from typing import Any

import mlx.core as mx
import numpy as np

from ftorch import dtypes
from ftorch.core import Tracer, aval_of
from ftorch.dtypes import DTYPES_BY_NAME, DTypeLike, to_mlx_dtype
from ftorch.primitives.reduction import normalize_axes
from ftorch.typing import ArrayLike

__all__ = [
    "generic", "number", "inexact", "floating", "complexfloating", "integer",
    "signedinteger", "unsignedinteger", "bool", "int_", "uint", "float_", "double",
    "single", "csingle", "euler_gamma", "issubdtype", "isdtype", "promote_types",
    "can_cast", "finfo", "iinfo", "dtype", "shape", "size", "ndim",
    "get_printoptions", "set_printoptions", "printoptions", "array_str", "array_repr",
]

# The abstract categories, as MLX names them.
generic, number, inexact, floating = mx.generic, mx.number, mx.inexact, mx.floating
complexfloating, integer = mx.complexfloating, mx.integer
signedinteger, unsignedinteger = mx.signedinteger, mx.unsignedinteger

# NumPy's other names of dtypes. int_, uint and float_ are the default ones (ftorch's
# defaults are 32-bit, as jax.numpy's without x64); double is float64.
int_, uint, float_ = mx.int32, mx.uint32, mx.float32
single, double, csingle = mx.float32, mx.float64, mx.complex64

euler_gamma = 0.5772156649015329

# NumPy's abstract scalar types, which jax.numpy's categories are.
_NUMPY_CATEGORIES = {
    np.generic: mx.generic, np.number: mx.number, np.inexact: mx.inexact,
    np.floating: mx.floating, np.complexfloating: mx.complexfloating,
    np.integer: mx.integer, np.signedinteger: mx.signedinteger,
    np.unsignedinteger: mx.unsignedinteger,
}
_NAMES_BY_DTYPE = {d: name for name, d in DTYPES_BY_NAME.items()}


def dtype(dtype: DTypeLike, align: builtins.bool = False,
          copy: builtins.bool = False) -> mx.Dtype:
    """The MLX dtype of ``dtype`` in any spelling (``"float32"``, ``float``,
    ``np.int8``, an MLX dtype) or of an array, as ``jax.numpy.dtype`` reads
    one (``align`` and ``copy`` are NumPy's and change nothing here).

    >>> import ftorch.numpy as fnp, numpy as np
    >>> fnp.dtype("bfloat16"), fnp.dtype(np.int8), fnp.dtype(float)
    (mlx.core.bfloat16, mlx.core.int8, mlx.core.float32)
    """
    del align, copy
    if isinstance(dtype, (mx.array, Tracer)):
        return aval_of(dtype).dtype
    return to_mlx_dtype(dtype, "dtype: dtype")


# What a Python type stands for in issubdtype: NumPy's dtype of it (complex's,
# complex128, MLX lacks: no dtype falls under it).
_PYTHON_TYPES_AS_NUMPY = {builtins.bool: mx.bool_, int: mx.int64, float: mx.float64,
                          complex: None}


def _category_or_dtype(arg: Any, where: str) -> mx.Dtype | mx.DtypeCategory | None:
    if isinstance(arg, mx.DtypeCategory):
        return arg
    if isinstance(arg, type) and arg in _NUMPY_CATEGORIES:
        return _NUMPY_CATEGORIES[arg]
    if isinstance(arg, type) and arg in _PYTHON_TYPES_AS_NUMPY:
        return _PYTHON_TYPES_AS_NUMPY[arg]
    return dtype(arg) if isinstance(arg, (mx.array, Tracer)) else to_mlx_dtype(arg, where)


def issubdtype(arg1: Any, arg2: Any) -> builtins.bool:
    """Whether the dtype or category ``arg1`` is ``arg2`` or falls under the
    category ``arg2``, as ``jax.numpy.issubdtype``. Either may be an MLX
    dtype or category, NumPy's abstract type (``np.floating``) or any
    spelling of a dtype; a Python type means NumPy's dtype of it, as in JAX
    (``float`` is float64, so float32 is not under it).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.issubdtype(mx.int8, fnp.signedinteger), fnp.issubdtype("float16", fnp.integer)
    (True, False)
    """
    first = _category_or_dtype(arg1, "issubdtype: arg1")
    second = _category_or_dtype(arg2, "issubdtype: arg2")
    if first is None or second is None:  # complex128, which no MLX dtype is
        return first is None and second is None
    return mx.issubdtype(first, second)


# The array API's kinds of dtype.
_KINDS = {
    "bool": lambda d: d == mx.bool_,
    "signed integer": lambda d: mx.issubdtype(d, mx.signedinteger),
    "unsigned integer": lambda d: mx.issubdtype(d, mx.unsignedinteger),
    "integral": lambda d: mx.issubdtype(d, mx.integer),
    "real floating": lambda d: mx.issubdtype(d, mx.floating),
    "complex floating": lambda d: mx.issubdtype(d, mx.complexfloating),
    "numeric": lambda d: mx.issubdtype(d, mx.number),
}


def isdtype(dtype: DTypeLike, kind: str | DTypeLike | tuple) -> builtins.bool:
    """Whether ``dtype`` is of ``kind``, as the array API's and
    ``jax.numpy.isdtype``: a kind name (``"bool"``, ``"signed integer"``,
    ``"unsigned integer"``, ``"integral"``, ``"real floating"``,
    ``"complex floating"``, ``"numeric"``), a dtype, or a tuple of them.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.isdtype(mx.float16, "real floating"), fnp.isdtype(mx.int8, ("bool", "integral"))
    (True, True)
    """
    d = to_mlx_dtype(dtype, "isdtype: dtype")
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if isinstance(k, str) and k in _KINDS:
            if _KINDS[k](d):
                return True
        elif to_mlx_dtype(k, f"isdtype: kind (one of {list(_KINDS)} or a dtype)") == d:
            return True
    return False


def promote_types(a: DTypeLike, b: DTypeLike) -> mx.Dtype:
    """The dtype that operands of dtypes ``a`` and ``b`` compute in, as
    ``jax.numpy.promote_types`` (MLX's promotion, which is JAX's lattice
    with 64-bit results kept: ``uint32`` with ``int32`` is ``int64``).

    >>> import ftorch.numpy as fnp
    >>> fnp.promote_types("int32", "float16"), fnp.promote_types("bfloat16", "float16")
    (mlx.core.float16, mlx.core.float32)
    """
    return dtypes.promote_types(to_mlx_dtype(a, "promote_types: a"),
                                to_mlx_dtype(b, "promote_types: b"))


def _numpy_dtype(d: mx.Dtype, fname: str) -> np.dtype:
    """NumPy's dtype of the MLX dtype ``d`` (ml_dtypes' for bfloat16)."""
    if d == mx.bfloat16:
        try:
            import ml_dtypes
        except ImportError:
            raise ImportError(f"{fname}: bfloat16 needs the ml_dtypes package "
                              "(pip install ml_dtypes)") from None
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(_NAMES_BY_DTYPE[d])


def _dtype_of(x: Any, where: str) -> mx.Dtype:
    """The dtype of an array, or of a dtype in any spelling."""
    if isinstance(x, (mx.array, Tracer)):
        return aval_of(x).dtype
    if isinstance(x, np.ndarray):
        return to_mlx_dtype(x.dtype, where)
    return to_mlx_dtype(x, where)


def can_cast(from_: Any, to: DTypeLike, casting: str = "safe") -> builtins.bool:
    """Whether a cast from the dtype (or array) ``from_`` to ``to`` keeps to
    the ``casting`` rule (``"no"``, ``"equiv"``, ``"safe"``,
    ``"same_kind"``, ``"unsafe"``), as ``jax.numpy.can_cast`` (NumPy's rules).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.can_cast(mx.int8, mx.float16), fnp.can_cast(mx.int32, mx.float32)
    (True, False)
    """
    if isinstance(from_, (builtins.bool, int, float, complex)):
        raise TypeError("can_cast: from_ must be a dtype or an array, not a Python "
                        f"scalar ({from_!r}): the answer would depend on its value")
    source = _numpy_dtype(_dtype_of(from_, "can_cast: from_"), "can_cast")
    target = _numpy_dtype(to_mlx_dtype(to, "can_cast: to"), "can_cast")
    return builtins.bool(np.can_cast(source, target, casting))


def finfo(dtype: Any) -> Any:
    """Machine limits of a floating or complex dtype (or of an array's),
    as ``jax.numpy.finfo``: NumPy's ``finfo`` (ml_dtypes' for bfloat16),
    with ``eps``, ``max``, ``min``, ``tiny``, ``bits``, ``resolution``...

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> float(fnp.finfo(mx.bfloat16).eps), fnp.finfo(mx.float32).bits
    (0.0078125, 32)
    """
    d = _dtype_of(dtype, "finfo: dtype")
    if not mx.issubdtype(d, mx.inexact):
        raise TypeError(f"finfo: dtype must be floating or complex, got {d}")
    numpy_dtype = _numpy_dtype(d, "finfo")
    if d == mx.bfloat16:
        import ml_dtypes

        return ml_dtypes.finfo(numpy_dtype)
    return np.finfo(numpy_dtype)


def iinfo(int_type: Any) -> np.iinfo:
    """Machine limits (``min``, ``max``, ``bits``) of an integer dtype (or of
    an array's), as ``jax.numpy.iinfo``: NumPy's ``iinfo``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.iinfo(mx.int8).max, fnp.iinfo(mx.uint16).bits
    (127, 16)
    """
    d = _dtype_of(int_type, "iinfo: int_type")
    if not mx.issubdtype(d, mx.integer):
        raise TypeError(f"iinfo: int_type must be an integer dtype, got {d}")
    return np.iinfo(_numpy_dtype(d, "iinfo"))


# ----------------------------------------------------------------------------
# shape, size, ndim
# ----------------------------------------------------------------------------


def shape(a: ArrayLike) -> tuple[int, ...]:
    """The shape of an array, a nested list or a scalar, as ``jax.numpy.shape``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.shape(mx.zeros((2, 3))), fnp.shape([[1, 2]]), fnp.shape(3.0)
    ((2, 3), (1, 2), ())
    """
    if isinstance(a, (mx.array, Tracer)):
        return tuple(aval_of(a).shape)
    if hasattr(a, "shape"):
        return tuple(a.shape)
    return tuple(np.shape(a))


def ndim(a: ArrayLike) -> int:
    """The number of axes of an array, a nested list or a scalar, as
    ``jax.numpy.ndim``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.ndim(mx.zeros((2, 3))), fnp.ndim(1.0)
    (2, 0)
    """
    return len(shape(a))


def size(a: ArrayLike, axis: int | Sequence[int] | None = None) -> int:
    """The number of elements of an array (along ``axis``, an int or a
    tuple, when given), as ``jax.numpy.size``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.size(mx.zeros((2, 3))), fnp.size(mx.zeros((2, 3)), 1)
    (6, 3)
    """
    dims = shape(a)
    axes = normalize_axes(axis, len(dims), "size")
    return math.prod(dims[i] for i in axes)


# ----------------------------------------------------------------------------
# Printing
# ----------------------------------------------------------------------------

# NumPy's print options, as jax.numpy re-exports them: they govern array_str
# and array_repr (MLX's own repr of an array has its own format).
get_printoptions = np.get_printoptions
set_printoptions = np.set_printoptions
printoptions = np.printoptions


def _as_numpy(a: Any, fname: str) -> np.ndarray:
    if isinstance(a, mx.array):
        if a.dtype == mx.bfloat16:
            return np.array(a.astype(mx.float32)).astype(_numpy_dtype(mx.bfloat16, fname))
        return np.array(a)
    return np.asarray(a)


def array_str(a: ArrayLike, max_line_width: int | None = None, precision: int | None = None,
              suppress_small: builtins.bool | None = None) -> str:
    """The values of ``a`` as NumPy prints them (under NumPy's print
    options, ``printoptions``), as ``jax.numpy.array_str``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.array_str(mx.array([1.0, 2.5]))
    '[1.  2.5]'
    """
    return np.array_str(_as_numpy(a, "array_str"), max_line_width, precision, suppress_small)


def array_repr(arr: ArrayLike, max_line_width: int | None = None,
               precision: int | None = None, suppress_small: builtins.bool | None = None) -> str:
    """``arr`` written as ``array([...], dtype=...)`` with NumPy's formatting
    (under NumPy's print options), as ``jax.numpy.array_repr`` (whose arrays
    print as ``Array(...)``).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.array_repr(mx.array([1.0, 2.5]))
    'array([1. , 2.5], dtype=float32)'
    """
    return np.array_repr(_as_numpy(arr, "array_repr"), max_line_width, precision,
                         suppress_small)


bool = mx.bool_  # last: the builtin is used above
