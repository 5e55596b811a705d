"""Rule cases for the shape primitives and the composites built on them.

Static arguments (axes, permutations, pad widths, slices) are drawn as NumPy
integer arrays: the checks pass integer arrays along undifferentiated, and
the case functions read them back as Python ints.
"""

import mlx.core as mx
import numpy as np
from harness import Case, floats, shapes
from hypothesis import strategies as st

import ftorch.numpy as fnp
from ftorch.primitives.shape import slice_transpose_p, static_slice


def ints(v) -> tuple:
    return tuple(int(i) for i in np.asarray(v).ravel())


def pairs(v) -> tuple:
    flat = ints(v)
    return tuple(zip(flat[::2], flat[1::2]))


def slices(spec) -> tuple:
    return tuple(slice(*row) for row in pairs_of3(spec))


def pairs_of3(spec) -> tuple:
    flat = ints(spec)
    return tuple(tuple(flat[i:i + 3]) for i in range(0, len(flat), 3))


def arr(values) -> np.ndarray:
    return np.asarray(values, dtype=np.int64)


# ----------------------------------------------------------------------------
# Strategies
# ----------------------------------------------------------------------------


@st.composite
def with_perm(draw):
    """An array of ndim >= 2 and a permutation of its axes other than the identity."""
    x = draw(floats(shapes(2, 4)))
    perm = draw(st.permutations(range(x.ndim)))
    if perm == sorted(perm):
        perm = perm[1:] + perm[:1]
    return x, arr(perm)


@st.composite
def with_move(draw):
    x = draw(floats(shapes(2, 4)))
    src = draw(st.integers(-x.ndim, x.ndim - 1))
    dst = draw(st.integers(-x.ndim, x.ndim - 1).filter(lambda d: d % x.ndim != src % x.ndim))
    return x, arr(src), arr(dst)


@st.composite
def with_slices(draw):
    """An array and one (start, stop, step) per leading axis, not all ``:``."""
    x = draw(floats(shapes(1, 3)))
    k = draw(st.integers(1, x.ndim))
    spec = []
    for _ in range(k):
        step = draw(st.sampled_from([-3, -2, -1, 1, 2, 3]))
        spec.append((draw(st.integers(-5, 5)), draw(st.integers(-5, 5)), step))
    if all(slice(*s).indices(d) == (0, d, 1) for s, d in zip(spec, x.shape)):
        spec[0] = (0, x.shape[0], -1)
    return x, arr(spec)


def _norm_slices(spec, shape):
    """The canonical params static_slice binds: empty as (0, 0, 1), tight stops."""
    norm = []
    for s, d in zip(pairs_of3(spec), shape):
        r = range(*slice(*s).indices(d))
        stop = r.start + len(r) * r.step
        norm.append((r.start, None if stop < 0 else stop, r.step) if r else (0, 0, 1))
    return tuple(norm)


@st.composite
def with_transposed_slices(draw):
    """A cotangent of a static slice: (ct, full shape, slice spec)."""
    base, spec = draw(with_slices())
    shape = np.empty(base.shape)[slices(spec)].shape
    return draw(floats(st.just(shape))), arr(base.shape), spec


@st.composite
def concat_args(draw):
    shape = draw(shapes(1, 3))
    axis = draw(st.integers(-len(shape), len(shape) - 1))
    xs = []
    for _ in range(draw(st.integers(2, 3))):
        s = list(shape)
        s[axis] = draw(st.integers(0, 3))
        xs.append(draw(floats(st.just(tuple(s)))))
    return (*xs, arr(axis))


@st.composite
def split_indices_args(draw):
    x = draw(floats(shapes(1, 3)))
    axis = draw(st.integers(-x.ndim, x.ndim - 1))
    n = x.shape[axis]
    idx = sorted(draw(st.lists(st.integers(0, n), min_size=1, max_size=3)))
    return x, arr(idx), arr(axis)


@st.composite
def split_sections_args(draw):
    shape = list(draw(shapes(1, 3)))
    axis = draw(st.integers(0, len(shape) - 1))
    sections = draw(st.sampled_from([2, 3]))
    shape[axis] = sections * draw(st.integers(1, 2))
    return draw(floats(st.just(tuple(shape)))), arr(sections), arr(axis)


@st.composite
def pad_args(draw, min_side=1, max_width=None):
    """An array and a (ndim, 2) array of pad widths, not all zero; widths stay
    below each axis' length when ``max_width`` is "inside" (MLX's reflect)."""
    x = draw(floats(shapes(1, 3, min_side=min_side)))
    widths = []
    for d in x.shape:
        hi = d - 1 if max_width == "inside" else (max_width or 2)
        widths.append((draw(st.integers(0, hi)), draw(st.integers(0, hi))))
    if not any(b or a for b, a in widths):
        widths[0] = (1, 0)
    return x, arr(widths)


@st.composite
def pad_value_args(draw):
    x, widths = draw(pad_args())
    return x, draw(floats(())), widths


@st.composite
def roll_args(draw):
    x = draw(floats(shapes(1, 3, min_side=2)))
    k = draw(st.integers(1, x.ndim))
    axes = draw(st.lists(st.integers(-x.ndim, x.ndim - 1), min_size=k, max_size=k))
    shift = draw(st.lists(st.integers(-6, 6), min_size=k, max_size=k))
    total = {}
    for s, a in zip(shift, axes):
        total[a % x.ndim] = total.get(a % x.ndim, 0) + s
    if all(s % x.shape[a] == 0 for a, s in total.items()):
        axes.append(0)
        shift.append(1)
    return x, arr(shift), arr(axes)


@st.composite
def tile_args(draw):
    x = draw(floats(shapes(0, 3)))
    reps = draw(st.lists(st.integers(1, 3), min_size=1, max_size=4))
    if all(r == 1 for r in reps):
        reps[0] = 2
    if len(reps) <= x.ndim:  # keep a broadcast in the computation
        reps = [2] + reps
    return x, arr(reps)


@st.composite
def repeat_args(draw):
    x = draw(floats(shapes(1, 3)))
    axis = draw(st.integers(-x.ndim, x.ndim - 1))
    return x, arr(draw(st.integers(2, 3))), arr(axis)


@st.composite
def repeat_each_args(draw):
    x = draw(floats(shapes(1, 3, min_side=2)))
    axis = draw(st.integers(-x.ndim, x.ndim - 1))
    n = x.shape[axis]
    reps = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    if len(set(reps)) == 1:
        reps[0] = reps[0] + 1
    return x, arr(reps), arr(axis)


@st.composite
def flip_args(draw):
    x = draw(floats(shapes(1, 3, min_side=2)))
    axes = draw(st.lists(st.integers(0, x.ndim - 1), min_size=1, max_size=x.ndim, unique=True))
    return x, arr(axes)


# ----------------------------------------------------------------------------
# Cases
# ----------------------------------------------------------------------------


def _slice_transpose(ct, shape, spec):
    shape = ints(shape)
    return slice_transpose_p.bind(ct, slices=_norm_slices(spec, shape), shape=shape)


def _mx_slice_transpose(ct, shape, spec):
    # Canonical slices again: MLX's VJP mis-sizes some empty negative-step ones.
    shape = ints(shape)
    idx = tuple(slice(*n) for n in _norm_slices(spec, shape))
    return mx.zeros(shape, ct.dtype).at[idx].add(ct)


def _pad_modes(mode, **kw):
    return Case(
        "concatenate", lambda x, w: fnp.pad(x, pairs(w), mode=mode),
        pad_args(min_side=2, max_width="inside"),
        mlx_fn=lambda x, w: mx.pad(x, pairs(w), mode=mode), name=f"pad_{mode}", **kw)


CASES = [
    Case("reshape", lambda x: fnp.reshape(x, x.shape[::-1] + (1,)), floats(shapes()).map(
        lambda a: (a,)), mlx_fn=lambda x: mx.reshape(x, x.shape[::-1] + (1,))),
    Case("reshape", lambda x: fnp.ravel(fnp.squeeze(fnp.expand_dims(x, 0), 0)) * 2,
         floats(shapes(2)).map(lambda a: (a,)), mlx_fn=lambda x: x.flatten() * 2,
         name="squeeze_ravel"),
    Case("broadcast_to", lambda x: fnp.broadcast_to(x, (2,) + tuple(3 if d == 1 else d
                                                                    for d in x.shape)),
         floats(shapes()).map(lambda a: (a,)),
         mlx_fn=lambda x: mx.broadcast_to(x, (2,) + tuple(3 if d == 1 else d for d in x.shape))),
    Case("broadcast_to", lambda x, y: fnp.broadcast_arrays(x, y),
         st.tuples(floats((3, 1)), floats((1, 4))),
         mlx_fn=lambda x, y: list(mx.broadcast_arrays(x, y)), name="broadcast_arrays"),
    Case("transpose", lambda x, p: fnp.transpose(x, ints(p)), with_perm(),
         mlx_fn=lambda x, p: mx.transpose(x, ints(p))),
    Case("transpose", lambda x, s, d: fnp.moveaxis(x, int(s), int(d)), with_move(),
         mlx_fn=lambda x, s, d: mx.moveaxis(x, int(s), int(d)), name="moveaxis"),
    Case("transpose", lambda x: fnp.swapaxes(fnp.transpose(x), 0, -1),
         floats(shapes(2)).map(lambda a: (a,)),
         mlx_fn=lambda x: mx.swapaxes(mx.transpose(x), 0, -1), name="swapaxes"),
    Case("static_slice", lambda x, s: static_slice(x, slices(s)), with_slices(),
         # MLX's own slice JVP mis-sizes some empty negative-step slices
         # (x[-3:0:-3] of length 2), so MLX is given the canonical slices.
         mlx_fn=lambda x, s: x[tuple(slice(*n) for n in _norm_slices(s, x.shape))]),
    Case("static_slice", lambda x, a: fnp.flip(x, ints(a)), flip_args(),
         mlx_fn=lambda x, a: mx.flip(x, ints(a)), name="flip"),
    Case("slice_transpose", _slice_transpose, with_transposed_slices(),
         mlx_fn=_mx_slice_transpose),
    Case("concatenate", lambda *a: fnp.concatenate(a[:-1], axis=int(a[-1])), concat_args(),
         mlx_fn=lambda *a: mx.concatenate(a[:-1], axis=int(a[-1]))),
    Case("concatenate", lambda x, y: fnp.stack([x, y, x], axis=-1),
         floats(shapes()).flatmap(lambda a: floats(st.just(a.shape)).map(lambda b: (a, b))),
         mlx_fn=lambda x, y: mx.stack([x, y, x], axis=-1), name="stack"),
    Case("split", lambda x, i, a: fnp.split(x, list(ints(i)), axis=int(a)),
         split_indices_args(),
         mlx_fn=lambda x, i, a: mx.split(x, list(ints(i)), axis=int(a)), name="split_indices"),
    Case("split", lambda x, k, a: fnp.split(x, int(k), axis=int(a)), split_sections_args(),
         mlx_fn=lambda x, k, a: mx.split(x, int(k), axis=int(a)), name="split_sections"),
    # Only some pieces used: the VJP fills in zeros for the others.
    Case("split", lambda x: fnp.split(x, [1, 2], axis=-1)[1] * 3.0,
         floats(shapes(1, 3, min_side=3)).map(lambda a: (a,)),
         mlx_fn=lambda x: mx.split(x, [1, 2], axis=-1)[1] * 3.0, name="split_one_piece"),
    Case("pad", lambda x, w: fnp.pad(x, pairs(w)), pad_args(),
         mlx_fn=lambda x, w: mx.pad(x, pairs(w))),
    # MLX's VJP with respect to constant_values crashes, so no mlx_fn here.
    Case("pad", lambda x, c, w: fnp.pad(x, pairs(w), constant_values=c), pad_value_args(),
         name="pad_traced_value"),
    _pad_modes("edge"),
    _pad_modes("reflect"),
    _pad_modes("symmetric"),
    # Widths beyond the axis length take several reflections / wraps.
    Case("concatenate", lambda x, w: fnp.pad(x, pairs(w), mode="wrap"),
         pad_args(max_width=6), name="pad_wrap_wide"),
    Case("concatenate", lambda x, w: fnp.pad(x, pairs(w), mode="reflect"),
         pad_args(min_side=2, max_width=7), name="pad_reflect_wide"),
    Case("roll", lambda x, s, a: fnp.roll(x, ints(s), ints(a)), roll_args(),
         mlx_fn=lambda x, s, a: mx.roll(x, ints(s), ints(a))),
    Case("roll", lambda x: fnp.roll(x, -1), floats(shapes(1, 3, min_side=2)).map(
        lambda a: (a,)), mlx_fn=lambda x: mx.roll(x, -1), name="roll_flat"),
    Case("broadcast_to", lambda x, r: fnp.tile(x, ints(r)), tile_args(),
         mlx_fn=lambda x, r: mx.tile(x, ints(r)), name="tile"),
    Case("broadcast_to", lambda x, r, a: fnp.repeat(x, int(r), axis=int(a)), repeat_args(),
         mlx_fn=lambda x, r, a: mx.repeat(x, int(r), axis=int(a)), name="repeat"),
    Case("split", lambda x, r, a: fnp.repeat(x, ints(r), axis=int(a)), repeat_each_args(),
         name="repeat_each"),
]
