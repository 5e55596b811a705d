"""The checks the layers share: of their arguments (``check_positive``,
``ntuple``), inputs (``check_features``, ``check_spatial``, ...), keys and
parameters, each raising an error that names the layer (``layer_error``).

>>> import ftorch.nn as nn, mlx.core as mx
>>> from ftorch.nn.layers._checks import check_features
>>> try:
...     check_features(nn.Linear(3, 2), mx.zeros((4, 5)), 3)
... except ValueError as error:
...     print(error)
Linear(...): the input must have 3 features on axis -1, got shape (4, 5)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import mlx.core as mx

from ftorch.memory import check_fits
from ftorch.nn._layer import Array, InputSpec, Layer, Params, layer_error, spec_of

__all__ = [
    "check_param_fits", "check_key", "shape_of", "check_features", "checked_param",
    "check_ndim", "ntuple", "check_positive", "check_spatial",
]


def check_param_fits(layer: Layer, name: str, shape: Sequence[int]) -> None:
    """A ``MemoryError`` naming ``layer`` and its parameter ``name`` if a
    float32 array of ``shape`` would not fit in the device's memory (MLX
    would crash allocating it); ``init`` calls it before making each one."""
    try:
        check_fits(shape, mx.float32, f"the parameter {name!r}")
    except MemoryError as error:
        raise layer_error(layer, str(error), MemoryError) from None


def check_key(key: Any, where: str) -> None:
    """A clear error when ``key`` is not an ``ftorch.random`` key."""
    if isinstance(key, int) and not isinstance(key, bool):
        raise TypeError(f"{where}: key must be a key array, ftorch.random.key({key}), "
                        f"not the int {key}")
    spec = spec_of(key) if hasattr(key, "shape") else None
    if spec is None or tuple(spec.shape) != (2,) or spec.dtype != mx.uint32:
        got = f"{type(key).__name__}" if spec is None else f"shape {tuple(spec.shape)} " \
            f"{spec.dtype}"
        raise TypeError(f"{where}: key must be an ftorch.random key (ftorch.random.key(seed): "
                        f"uint32, shape (2,)), got {got}")


def shape_of(x: Any) -> tuple[int, ...]:
    """The shape of ``x`` (an array, a traced value or an
    ``ft.ShapeDtypeStruct``), read directly: layers check their inputs with
    it on every ``apply``."""
    shape = getattr(x, "shape", None)
    return tuple(spec_of(x).shape) if shape is None else shape


def check_features(layer: Layer, x: Any, expected: int, what: str = "the input",
                   axis: int = -1) -> None:
    """A clear error when ``x``'s ``axis`` is not ``expected`` long."""
    try:
        if x.shape[axis] == expected:  # the common case, first: apply calls this each time
            return
    except (AttributeError, IndexError):
        pass
    shape = shape_of(x)
    if len(shape) <= (axis if axis >= 0 else -axis - 1) or shape[axis] != expected:
        raise layer_error(layer, f"{what} must have {expected} features on axis {axis}, got "
                          f"shape {tuple(shape)}")


def checked_param(layer: Layer, params: Params, name: str, shape: tuple[int, ...]) -> Array:
    """``params[name]``, after a clear error unless its shape is ``shape``:
    for a weight that sets the output's size, where another layer's would
    pass silently (one tuple comparison)."""
    value = params[name]
    if shape_of(value) != shape:
        raise layer_error(layer, f"the params' {name!r} has shape {tuple(shape_of(value))}, not "
                          f"{shape}: pass the params that its init returns")
    return value


def check_ndim(layer: Layer, x: Any, allowed: tuple[int, ...], layout: str) -> None:
    """A clear error when ``x`` has a number of axes outside ``allowed``."""
    shape = shape_of(x)
    if len(shape) not in allowed:
        raise layer_error(layer, f"the input must be {layout} ({' or '.join(map(str, allowed))} "
                          f"axes), got shape {tuple(shape)}")


def ntuple(value: Any, n: int, name: str, owner: str) -> tuple[int, ...]:
    """``value`` (an int or a sequence of ``n`` ints) as a tuple of ``n`` ints."""
    if isinstance(value, int) and not isinstance(value, bool):
        return (value,) * n
    if isinstance(value, (tuple, list)) and len(value) == n and all(
            isinstance(v, int) and not isinstance(v, bool) for v in value):
        return tuple(value)
    raise TypeError(f"{owner}: {name} must be an int or a tuple of {n} ints, got {value!r}")


def check_positive(owner: str, **values: Any) -> None:
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{owner}: {name} must be a positive int, got {value!r}")


_SPATIAL = {1: "L", 2: "HW", 3: "DHW"}


def check_spatial(layer: Layer, x: InputSpec, nd: int, channels: int | None) -> None:
    """A clear error unless ``x`` is ``(N, *spatial, C)`` or ``(*spatial, C)``
    with ``nd`` spatial axes (and ``channels`` channels); an input that looks
    channels-first (PyTorch's ``NCHW``) is called so."""
    shape = shape_of(x)
    layout = f"N{_SPATIAL[nd]}C"
    if len(shape) - nd not in (1, 2):
        raise layer_error(layer, f"the input must be {layout} (or one example without N, "
                          f"{layout[1:]}), got shape {tuple(shape)}")
    if channels is None or shape[-1] == channels:
        return
    message = (f"the input's last axis must be its {channels} channels ({layout}), got shape "
               f"{tuple(shape)}")
    first = len(shape) - nd - 1  # where channels-first inputs have them
    if shape[first] == channels:
        channels_first = ("N" if first else "") + "C" + _SPATIAL[nd]
        message += (f": it looks channels-first ({channels_first}), but ftorch's convolutions "
                    f"and pooling are channels-last, as MLX's; move the channels last with "
                    f"fnp.moveaxis(x, {first}, -1)")
    raise layer_error(layer, message)
