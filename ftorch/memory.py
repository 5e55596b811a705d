"""Refusing allocations the device cannot hold, before MLX is asked.

MLX allocates lazily and does not check for a failed allocation: evaluating
``mx.zeros((10**6, 10**6))`` crashes the process. ftorch's creation and
broadcasting ops call ``check_fits`` first and raise ``MemoryError`` instead.
The check runs on hot paths (``broadcast_to`` is in many derivative rules),
so it is one product and one comparison for any array that fits easily.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence

import mlx.core as mx

__all__ = ["check_fits", "device_memory"]

# Arrays of at most this many elements fit whatever their dtype (MLX's widest
# dtypes take 8 bytes); 0 until the device's memory is read, on first use.
_ELEMENTS_THAT_ALWAYS_FIT = 0
_WIDEST_ITEMSIZE = 8
_memory: tuple[int, str] | None = None


def device_memory() -> tuple[int, str]:
    """The bytes of memory of the default device, and where that figure comes
    from: what MLX reports for a GPU (Metal, CUDA), else the machine's RAM.
    Read once, then cached.

    >>> from ftorch.memory import device_memory
    >>> size, source = device_memory()
    >>> size > 2**20
    True
    """
    global _memory
    if _memory is None:
        _memory = _read_device_memory()
    return _memory


def _read_device_memory() -> tuple[int, str]:
    # Older MLX had the report under mx.metal only.
    read = getattr(mx, "device_info", None) or getattr(mx.metal, "device_info", None)
    try:
        info = read() if read is not None else {}
    except Exception:  # no such device
        info = {}
    for key in ("memory_size", "total_memory"):  # Metal's name, CUDA's name
        if info.get(key):
            return int(info[key]), f"the memory of {info.get('device_name', 'the GPU')}"
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"), "the machine's RAM"
    except (AttributeError, ValueError, OSError):  # no sysconf (Windows): nothing to compare with
        return 2**63, "unknown"


def check_fits(shape: Sequence[int], dtype: mx.Dtype, fname: str) -> None:
    """Raise ``MemoryError`` if an array of ``shape`` and ``dtype`` would not
    fit in the device's memory; ``fname`` names the function for the message.

    >>> import mlx.core as mx
    >>> from ftorch.memory import check_fits
    >>> check_fits((10**6, 10**6), mx.float32, "zeros")
    Traceback (most recent call last):
    ...
    MemoryError: zeros: an array of shape (1000000, 1000000) and dtype float32 needs 4.0 TB ...
    """
    if math.prod(shape) > _ELEMENTS_THAT_ALWAYS_FIT:
        _check_bytes(shape, dtype, fname)


def _check_bytes(shape: Sequence[int], dtype: mx.Dtype, fname: str) -> None:
    global _ELEMENTS_THAT_ALWAYS_FIT
    capacity, source = device_memory()
    _ELEMENTS_THAT_ALWAYS_FIT = capacity // _WIDEST_ITEMSIZE
    needed = math.prod(shape) * dtype.size
    if needed > capacity:
        raise MemoryError(
            f"{fname}: an array of shape {tuple(shape)} and dtype {_dtype_name(dtype)} needs "
            f"{_bytes(needed)} ({needed} bytes), more than the {_bytes(capacity)} available "
            f"({source}), so it cannot be allocated (MLX would crash trying). Use a smaller "
            "shape, a narrower dtype, or compute it in pieces.")


def _dtype_name(dtype: mx.Dtype) -> str:
    return str(dtype).removeprefix("mlx.core.")


def _bytes(n: float) -> str:
    """``n`` bytes in decimal units: '4.0 TB'."""
    units = ("bytes", "kB", "MB", "GB", "TB", "PB")
    i = 0
    while n >= 1000 and i < len(units) - 1:
        n /= 1000
        i += 1
    return f"{n:.0f} {units[i]}" if i == 0 else f"{n:.1f} {units[i]}"
