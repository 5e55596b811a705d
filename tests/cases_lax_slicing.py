"""Rule cases for ``ftorch.lax``'s slicing primitives, ``dynamic_slice`` and
``dynamic_update_slice``.

Start indices are drawn past both ends of each axis, so the clamping is
exercised. Static slice sizes come as NumPy integer arrays and are read back
as Python ints. The checks only batch floating arguments under vmap, so the
``*_batched_starts`` cases carry their starts as floats (``(k + 0.5) / 100``,
floored back to ``k`` by the case): each copy vmap makes then has a start one
larger, which exercises the rules for per-example starts.
"""

import mlx.core as mx
import numpy as np
from harness import Case, floats, shapes
from hypothesis import strategies as st

import ftorch.numpy as fnp
from ftorch.primitives.slicing import (
    dynamic_index_in_dim,
    dynamic_slice,
    dynamic_update_slice,
)


def ints(v) -> tuple:
    return tuple(int(i) for i in np.asarray(v).ravel())


def arr(values) -> np.ndarray:
    return np.asarray(values, dtype=np.int64)


def clamped(starts, shape, sizes) -> list[int]:
    """JAX's starts: a negative one counts once from the end, then all clamp."""
    return [min(max(s + d if s < 0 else s, 0), d - n)
            for s, d, n in zip(ints(starts), shape, sizes)]


def decoded(encoded):
    """The integer starts of the float encoding ``(k + 0.5) / 100``."""
    return fnp.astype(fnp.floor(encoded * 100), mx.int32)


# ----------------------------------------------------------------------------
# Strategies
# ----------------------------------------------------------------------------


@st.composite
def window(draw, shape):
    """Starts (possibly out of range, either side) and sizes of a window of ``shape``."""
    starts = [draw(st.integers(-d - 2, d + 2)) for d in shape]
    sizes = [draw(st.integers(0, d)) for d in shape]
    return starts, sizes


@st.composite
def slice_args(draw, encode=False):
    x = draw(floats(shapes(1, 3)))
    starts, sizes = draw(window(x.shape))
    s = (np.asarray(starts) + 0.5) / 100 if encode else arr(starts)
    return x, s, arr(sizes)


@st.composite
def update_args(draw, encode=False):
    x = draw(floats(shapes(1, 3)))
    starts, sizes = draw(window(x.shape))
    u = draw(floats(st.just(tuple(sizes))))
    s = (np.asarray(starts) + 0.5) / 100 if encode else arr(starts)
    return x, u, s


@st.composite
def index_args(draw):
    x = draw(floats(shapes(1, 3)))
    axis = draw(st.integers(-x.ndim, x.ndim - 1))
    return x, arr(draw(st.integers(-x.shape[axis] - 2, x.shape[axis] + 2))), arr(axis)


# ----------------------------------------------------------------------------
# Cases
# ----------------------------------------------------------------------------


def _mx_slice(x, s, n):
    sizes = ints(n)
    starts = mx.array(clamped(s, x.shape, sizes), mx.int32)
    return mx.slice(x, starts, tuple(range(x.ndim)), sizes)


def _mx_update(x, u, s):
    starts = mx.array(clamped(s, x.shape, u.shape), mx.int32)
    return mx.slice_update(x, u, starts, tuple(range(x.ndim)))


CASES = [
    # Starts as one 1-d integer array (int64: clamped before the cast).
    Case("dynamic_slice", lambda x, s, n: dynamic_slice(x, s, ints(n)), slice_args(),
         mlx_fn=_mx_slice),
    # Starts as Python ints.
    Case("dynamic_slice", lambda x, s, n: dynamic_slice(x, ints(s), ints(n)), slice_args(),
         mlx_fn=_mx_slice, name="dynamic_slice_static_starts"),
    Case("dynamic_slice", lambda x, s, n: dynamic_slice(x, list(decoded(s)), ints(n)),
         slice_args(encode=True), name="dynamic_slice_batched_starts"),
    Case("dynamic_slice",
         lambda x, i, a: dynamic_index_in_dim(x, i, int(a), keepdims=False) * 2.0,
         index_args(), name="dynamic_index_in_dim"),
    Case("dynamic_update_slice", lambda x, u, s: dynamic_update_slice(x, u, s),
         update_args(), mlx_fn=_mx_update),
    Case("dynamic_update_slice", lambda x, u, s: dynamic_update_slice(x, u, decoded(s)),
         update_args(encode=True), name="dynamic_update_slice_batched_starts"),
]
