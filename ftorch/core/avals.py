"""Abstract values: an array's shape and dtype without its data, how graphs
and error messages print them, and the dtype classes transforms ask about."""

from __future__ import annotations

from typing import NamedTuple

import mlx.core as mx


class ShapeDtypeStruct(NamedTuple):
    """The abstract value of an array: its shape and dtype, no data.

    >>> import mlx.core as mx
    >>> ShapeDtypeStruct((2, 3), mx.float32).ndim
    2
    """

    shape: tuple[int, ...]
    dtype: mx.Dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)


DTYPE_SHORT_NAMES = {
    mx.bool_: "bool", mx.uint8: "u8", mx.uint16: "u16", mx.uint32: "u32", mx.uint64: "u64",
    mx.int8: "i8", mx.int16: "i16", mx.int32: "i32", mx.int64: "i64", mx.float16: "f16",
    mx.bfloat16: "bf16", mx.float32: "f32", mx.float64: "f64", mx.complex64: "c64",
}


def format_aval(aval: ShapeDtypeStruct) -> str:
    """``f32[2,3]``: a shape and dtype as graphs and error messages print them.

    >>> import mlx.core as mx
    >>> format_aval(ShapeDtypeStruct((2, 3), mx.float32))
    'f32[2,3]'
    """
    return f"{DTYPE_SHORT_NAMES.get(aval.dtype, str(aval.dtype))}[{','.join(map(str, aval.shape))}]"


FLOATING = frozenset((mx.float16, mx.bfloat16, mx.float32, mx.float64))
#: The dtypes that carry tangents and cotangents: real floating and complex
#: (NumPy's ``inexact``).
INEXACT = FLOATING | {mx.complex64}


def is_floating(dtype: mx.Dtype) -> bool:
    """A real floating dtype.

    >>> import mlx.core as mx
    >>> is_floating(mx.bfloat16), is_floating(mx.complex64)
    (True, False)
    """
    return dtype in FLOATING


def is_inexact(dtype: mx.Dtype) -> bool:
    """A real floating or complex dtype: one that is differentiated.

    >>> import mlx.core as mx
    >>> is_inexact(mx.complex64), is_inexact(mx.int32)
    (True, False)
    """
    return dtype in INEXACT


def is_complex(dtype: mx.Dtype) -> bool:
    """The complex dtype (MLX has one: complex64).

    >>> import mlx.core as mx
    >>> is_complex(mx.complex64)
    True
    """
    return dtype == mx.complex64
