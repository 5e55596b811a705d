"""Dtype policies, with jmp's names and parsing: which dtype parameters are
kept in, computed in, and returned in.

>>> import ftorch as ft, mlx.core as mx
>>> print(ft.amp.get_policy("p=f32,c=bf16"))
p=full,c=bf16,o=bf16
"""

from __future__ import annotations

import dataclasses
from typing import Any

import mlx.core as mx
import numpy as np

import ftorch.numpy as fnp
from ftorch import tree
from ftorch.core import Tracer, is_floating
from ftorch.dtypes import DTypeLike, to_mlx_dtype

__all__ = ["Policy", "get_policy", "cast_to_full", "cast_to_half", "half_dtype"]

_NAMES = {mx.bfloat16: ("bf16", "bfloat16"), mx.float16: ("f16", "float16"),
          mx.float32: ("full", "f32", "float32"), mx.float64: ("f64", "float64")}
_BY_NAME = {name: dtype for dtype, names in _NAMES.items() for name in names}


def _cast_floating(t: Any, dtype: Any) -> Any:
    """``t`` with its floating array leaves cast to ``dtype``: MLX arrays and
    tracers cast, NumPy arrays made MLX arrays of ``dtype`` (NumPy has no
    bfloat16); other leaves (integer and boolean arrays, Python scalars) as
    they are, as jmp's casts."""
    def cast(x: Any) -> Any:
        if isinstance(x, (mx.array, Tracer)) and is_floating(x.dtype) and x.dtype != dtype:
            return fnp.astype(x, dtype)
        if isinstance(x, np.ndarray) and np.issubdtype(x.dtype, np.floating):
            return mx.array(x).astype(dtype)
        return x
    return tree.map(cast, t)


@dataclasses.dataclass(frozen=True)
class Policy:
    """The dtypes of mixed precision, as ``jmp.Policy``: ``param_dtype``
    (what the parameters are stored and updated in), ``compute_dtype``
    (what the model computes in) and ``output_dtype`` (what it returns).

    >>> import ftorch as ft, mlx.core as mx
    >>> policy = ft.amp.Policy(mx.float32, mx.bfloat16, mx.float32)
    >>> policy.cast_to_output(policy.cast_to_compute(mx.ones(2))).dtype
    mlx.core.float32
    """

    param_dtype: Any
    compute_dtype: Any
    output_dtype: Any

    def __post_init__(self) -> None:
        for name in ("param_dtype", "compute_dtype", "output_dtype"):
            dtype = to_mlx_dtype(getattr(self, name), f"Policy: {name}")
            if not is_floating(dtype):
                raise ValueError(f"Policy: {name} must be a floating dtype, got {dtype}")
            object.__setattr__(self, name, dtype)

    def cast_to_param(self, t: Any) -> Any:
        """``t``'s floating leaves in ``param_dtype``.

        >>> import ftorch as ft, mlx.core as mx
        >>> ft.amp.get_policy("p=f32,c=bf16").cast_to_param(mx.ones(2, mx.bfloat16)).dtype
        mlx.core.float32
        """
        return _cast_floating(t, self.param_dtype)

    def cast_to_compute(self, t: Any) -> Any:
        """``t``'s floating leaves in ``compute_dtype`` (integer and boolean
        leaves as they are).

        >>> import ftorch as ft, mlx.core as mx
        >>> batch = {"x": mx.ones((2, 3)), "label": mx.array([0, 1])}
        >>> cast = ft.amp.get_policy("p=f32,c=bf16").cast_to_compute(batch)
        >>> cast["x"].dtype, cast["label"].dtype
        (mlx.core.bfloat16, mlx.core.int32)
        """
        return _cast_floating(t, self.compute_dtype)

    def cast_to_output(self, t: Any) -> Any:
        """``t``'s floating leaves in ``output_dtype``.

        >>> import ftorch as ft, mlx.core as mx
        >>> policy = ft.amp.get_policy("p=f32,c=bf16,o=f32")
        >>> policy.cast_to_output(mx.ones(2, mx.bfloat16)).dtype
        mlx.core.float32
        """
        return _cast_floating(t, self.output_dtype)

    def with_output_dtype(self, output_dtype: DTypeLike) -> Policy:
        """The policy with another ``output_dtype``.

        >>> import ftorch as ft, mlx.core as mx
        >>> print(ft.amp.get_policy("c=bf16").with_output_dtype(mx.float32))
        p=full,c=bf16,o=full
        """
        return dataclasses.replace(self, output_dtype=output_dtype)

    def __str__(self) -> str:
        return "p={},c={},o={}".format(*(_NAMES[d][0] for d in (
            self.param_dtype, self.compute_dtype, self.output_dtype)))


def half_dtype() -> Any:
    """The 16-bit dtype for this machine: bfloat16 (MLX computes in it on every
    backend; jmp picks float16 off TPUs, where MLX's CPU is slow in it).

    >>> import ftorch as ft
    >>> ft.amp.half_dtype()
    mlx.core.bfloat16
    """
    return mx.bfloat16


def _parse_dtype(value: str) -> Any:
    if value == "half":
        return half_dtype()
    try:
        return _BY_NAME[value]
    except KeyError:
        raise ValueError(f"get_policy: unknown dtype {value!r}: use full, half, float16, "
                         f"bfloat16, float32, float64 or a short form (f32, bf16, f16, "
                         f"f64)") from None


def get_policy(policy_name: str) -> Policy:
    """A ``Policy`` from jmp's spelling: one dtype for all three
    (``"float32"``, ``"half"``), or ``key=dtype`` pairs with keys ``params``
    (``p``), ``compute`` (``c``) and ``output`` (``o``); parameters default
    to float32, compute to the parameters', output to compute's. ``"half"``
    is ``half_dtype()``, bfloat16 (jmp's is float16 off TPUs).

    >>> import ftorch as ft
    >>> str(ft.amp.get_policy("params=float32,compute=bfloat16,output=float32"))
    'p=full,c=bf16,o=full'
    """
    if not isinstance(policy_name, str):
        raise TypeError(f"get_policy: policy_name must be a str, got "
                        f"{type(policy_name).__name__}")
    if "=" not in policy_name:
        dtype = _parse_dtype(policy_name)
        return Policy(dtype, dtype, dtype)
    param, compute, output = mx.float32, None, None
    for part in policy_name.split(","):
        key, sep, value = part.partition("=")
        if not sep:
            raise ValueError(f"get_policy: {part!r} in {policy_name!r} is not key=dtype")
        dtype = _parse_dtype(value)
        if key in ("p", "params"):
            param = dtype
        elif key in ("c", "compute"):
            compute = dtype
        elif key in ("o", "output"):
            output = dtype
        else:
            raise ValueError(f"get_policy: unknown key {key!r} in {policy_name!r}: use "
                             f"params, compute or output")
    compute = param if compute is None else compute
    return Policy(param, compute, compute if output is None else output)


def cast_to_full(t: Any) -> Any:
    """``t``'s floating leaves in float32.

    >>> import ftorch as ft, mlx.core as mx
    >>> ft.amp.cast_to_full([mx.ones(1, mx.float16), mx.array([1])])[0].dtype
    mlx.core.float32
    """
    return _cast_floating(t, mx.float32)


def cast_to_half(t: Any) -> Any:
    """``t``'s floating leaves in ``half_dtype()``.

    >>> import ftorch as ft, mlx.core as mx
    >>> ft.amp.cast_to_half({"w": mx.ones(2)})["w"].dtype
    mlx.core.bfloat16
    """
    return _cast_floating(t, half_dtype())
