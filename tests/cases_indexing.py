"""Rule cases for indexing: gather (advanced getitem, take), static_slice (basic
getitem), take_along_axis and the scatter family behind ``fnp.at``.

An index expression travels through the harness as an int32 "code" array
(one row per index position) plus its index arrays, all undifferentiated;
``decode`` turns them back into the Python index inside the case function.
"""

import copy

import mlx.core as mx
import numpy as np
from harness import Case, distinct, floats, shapes
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ftorch.numpy as fnp
from ftorch.core import mlx_at

# ----------------------------------------------------------------------------
# Index expressions as harness arguments
# ----------------------------------------------------------------------------

_INT, _SLICE, _NEWAXIS, _ARRAY, _ELLIPSIS = range(5)
_NONE = 1 << 20  # stands for None inside a slice


def encode(idx: tuple) -> np.ndarray:
    """An index tuple (arrays replaced by their position k) as an int32 array."""
    rows = []
    k = 0
    for e in idx:
        if e is None:
            rows.append((_NEWAXIS, 0, 0, 0))
        elif e is Ellipsis:
            rows.append((_ELLIPSIS, 0, 0, 0))
        elif isinstance(e, slice):
            rows.append((_SLICE, *(_NONE if v is None else v for v in (e.start, e.stop, e.step))))
        elif isinstance(e, np.ndarray):
            rows.append((_ARRAY, k, 0, 0))
            k += 1
        else:
            rows.append((_INT, int(e), 0, 0))
    return np.array(rows, dtype=np.int32).reshape(-1, 4)


def decode(code, arrays) -> tuple:
    out = []
    for kind, a, b, c in np.array(code).tolist():
        if kind == _INT:
            out.append(a)
        elif kind == _SLICE:
            out.append(slice(*(None if v == _NONE else v for v in (a, b, c))))
        elif kind == _NEWAXIS:
            out.append(None)
        elif kind == _ELLIPSIS:
            out.append(Ellipsis)
        else:
            out.append(arrays[a])
    return tuple(out)


@st.composite
def index_exprs(draw, shape, kinds=("int", "slice", "array"), need_array=False,
                unique=False, dup=False):
    """An index tuple for an array of ``shape``: ints, slices, integer arrays
    (int32, broadcasting together, negative entries too), ``None`` and ``...``.

    ``unique``: at most one (1-D, repeat-free) array. ``dup``: one 1-D array
    drawn from few values, so repeats are likely."""
    ndim = len(shape)
    use_ellipsis = draw(st.booleans())
    n_front = draw(st.integers(0, ndim))
    n_back = draw(st.integers(0, ndim - n_front)) if use_ellipsis else 0
    axes = list(range(n_front)) + list(range(ndim - n_back, ndim))
    chosen = [draw(st.sampled_from(kinds)) for _ in axes]
    if need_array and "array" not in chosen:
        if not axes:
            axes, chosen, n_front = [0], ["array"], 1
        else:
            chosen[draw(st.integers(0, len(axes) - 1))] = "array"
    if unique or dup:  # keep one array only
        first = chosen.index("array") if "array" in chosen else -1
        chosen = [c if c != "array" or i == first else "slice" for i, c in enumerate(chosen)]
    bshape = draw(hnp.array_shapes(min_dims=0, max_dims=2, max_side=3))
    entries = []
    for ax, kind in zip(axes, chosen):
        d = shape[ax]
        if kind == "int":
            entries.append(draw(st.integers(-d, d - 1)))
        elif kind == "slice":
            bound = st.none() | st.integers(-d - 1, d + 1)
            entries.append(slice(draw(bound), draw(bound),
                                 draw(st.sampled_from([None, 1, 2, -1, -2]))))
        elif unique:
            n = draw(st.integers(1, d))
            vals = draw(st.permutations(range(d)))[:n]
            neg = draw(st.lists(st.booleans(), min_size=n, max_size=n))
            entries.append(np.array([v - d if s else v for v, s in zip(vals, neg)], np.int32))
        elif dup:
            n = draw(st.integers(2, 5))
            entries.append(np.array(
                draw(st.lists(st.integers(-min(d, 2), min(d, 2) - 1), min_size=n, max_size=n)),
                np.int32))
        else:
            s = tuple(b if draw(st.booleans()) else 1 for b in bshape)
            s = s[draw(st.integers(0, len(s))):]
            entries.append(draw(hnp.arrays(np.int32, s, elements=st.integers(-d, d - 1))))
    idx = entries[:n_front] + ([Ellipsis] if use_ellipsis else []) + entries[n_front:]
    for _ in range(draw(st.integers(0, 1))):
        idx.insert(draw(st.integers(0, len(idx))), None)
    return tuple(idx)


def index_args(idx) -> tuple:
    return (encode(idx), *[e for e in idx if isinstance(e, np.ndarray)])


def expand_ellipsis(idx, ndim):
    """``idx`` with ``...`` written out as whole-axis slices. An ``...`` that
    stands for no axes does not separate advanced indices in MLX (nor in
    ftorch), while NumPy counts it as a separator; written out, both agree."""
    where = [i for i, e in enumerate(idx) if e is Ellipsis]
    if not where:
        return idx
    used = sum(1 for e in idx if e is not None and e is not Ellipsis)
    i = where[0]
    return idx[:i] + (slice(None),) * (ndim - used) + idx[i + 1:]


def index_shape(shape, idx) -> tuple:
    return np.empty(shape)[expand_ellipsis(idx, len(shape))].shape


@st.composite
def getitem_args(draw, **kw):
    x = draw(floats(shapes(min_dims=1)))
    idx = draw(index_exprs(x.shape, need_array=True, **kw))
    return (x, *index_args(idx))


def _nontrivial(shape, idx) -> bool:
    """A basic index that slices something (so static_slice is called)."""
    expanded = []
    for e in idx:
        if e is Ellipsis:
            expanded += [slice(None)] * (len(shape) - sum(
                1 for f in idx if f is not None and f is not Ellipsis))
        elif e is not None:
            expanded.append(e)
    return any(d > 1 if not isinstance(e, slice) else e.indices(d) != (0, d, 1)
               for e, d in zip(expanded, shape))


@st.composite
def basic_getitem_args(draw):
    x = draw(floats(shapes(min_dims=1)))
    idx = draw(hnp.basic_indices(x.shape, min_dims=0, allow_newaxis=True,
                                 allow_ellipsis=True).filter(lambda i: _nontrivial(
                                     x.shape, i if isinstance(i, tuple) else (i,))))
    idx = idx if isinstance(idx, tuple) else (idx,)
    return (x, *index_args(idx))


def _values_shape(draw, g_shape):
    """A shape that broadcasts to ``g_shape`` (drops leading axes, sets 1s)."""
    s = tuple(d if draw(st.booleans()) else 1 for d in g_shape)
    return s[draw(st.integers(0, len(s))):]


@st.composite
def update_args(draw, kinds=("int", "slice", "array"), need_array=False, unique=False,
                dup=False, int_values=False, lo=-3.0, hi=3.0, fix=None):
    """(x, values, code, *arrays) for ``fnp.at(x)[idx].op(values)``."""
    x = draw(floats(shapes(min_dims=1), lo, hi))
    idx = draw(index_exprs(x.shape, kinds=kinds, need_array=need_array, unique=unique,
                           dup=dup))
    vshape = _values_shape(draw, index_shape(x.shape, idx))
    if int_values:
        v = draw(hnp.arrays(np.int32, vshape, elements=st.integers(1, 3)))
    else:
        v = draw(floats(vshape, lo, hi))
    if fix is not None:
        x, v = fix(x, v)
    return (x, v, *index_args(idx))


def _all_distinct(x, v):
    # No ties between x and the values (or among values) for min/max.
    both = distinct(np.concatenate([x.ravel(), v.ravel()]), gap=0.1)
    return both[:x.size].reshape(x.shape), both[x.size:].reshape(v.shape)


def _away_from_zero(x, v):
    return x, np.where(v >= 0, v + 0.5, v - 0.5)


# ----------------------------------------------------------------------------
# Case functions
# ----------------------------------------------------------------------------


def _getitem(x, code, *arrays):
    return fnp.getitem(x, decode(code, arrays))


def _mx_getitem(x, code, *arrays):
    return x[decode(code, arrays)]


def _method_getitem(x, code, *arrays):
    return fnp.at(x)[decode(code, arrays)].get()


def _update(op, **kw):
    def fn(x, v, code, *arrays):
        if v.dtype == mx.int32:  # values held constant
            v = fnp.astype(v, x.dtype)
        return getattr(fnp.at(x)[decode(code, arrays)], op)(v, **kw)
    fn.__name__ = op
    return fn


def _mx_add(x, v, code, *arrays):
    return mlx_at(x)[decode(code, arrays)].add(v)  # MLX's own ArrayAt, not ftorch's


def _mx_set(x, v, code, *arrays):
    y = copy.copy(x)
    y[decode(code, arrays)] = v
    return y


@st.composite
def take_args(draw):
    x = draw(floats(shapes(min_dims=1)))
    axis = draw(st.none() | st.integers(-x.ndim, x.ndim - 1))
    d = x.size if axis is None else x.shape[axis]
    ishape = draw(hnp.array_shapes(min_dims=0, max_dims=2, max_side=4))
    indices = draw(hnp.arrays(np.int32, ishape, elements=st.integers(-d, d - 1)))
    return (x, indices, encode_axis(axis))


def encode_axis(axis):
    # The harness turns every argument into an array; the axis travels as one too.
    return np.array(_NONE if axis is None else axis, np.int32)


def decode_axis(code):
    axis = code.item()
    return None if axis == _NONE else axis


def _take(x, indices, axis):
    return fnp.take(x, indices, axis=decode_axis(axis))


def _mx_take(x, indices, axis):
    axis = decode_axis(axis)
    return mx.take(x, indices) if axis is None else mx.take(x, indices, axis=axis)


@st.composite
def along_axis_args(draw, with_values=False):
    x = draw(floats(shapes(min_dims=1)))
    axis = draw(st.integers(-x.ndim, x.ndim - 1))
    ax = axis % x.ndim
    n = draw(st.integers(1, 4))
    # indices broadcast against x off the axis: size 1 or x's size there
    ishape = tuple(n if i == ax else draw(st.sampled_from([1, d]))
                   for i, d in enumerate(x.shape))
    d = x.shape[ax]
    idx = draw(hnp.arrays(np.int32, ishape, elements=st.integers(-d, d - 1)))
    if not with_values:
        return (x, idx, encode_axis(axis))
    out_shape = tuple(n if i == ax else d for i, d in enumerate(x.shape))
    return (x, draw(floats(_values_shape(draw, out_shape))), idx, encode_axis(axis))


def _take_along(x, idx, axis):
    return fnp.take_along_axis(x, idx, decode_axis(axis))


def _mx_take_along(x, idx, axis):
    return mx.take_along_axis(x, idx, axis=decode_axis(axis))


def _put_along(x, v, idx, axis):
    return fnp.put_along_axis(x, idx, v, decode_axis(axis), inplace=False)


# ----------------------------------------------------------------------------

ADV = dict(need_array=True)
BASIC = dict(kinds=("int", "slice"))

CASES = [
    Case("gather", _getitem, getitem_args(), mlx_fn=_mx_getitem, name="gather-getitem"),
    Case("gather", _getitem, getitem_args(dup=True), mlx_fn=_mx_getitem,
         name="gather-getitem-duplicates"),
    Case("gather", _method_getitem, getitem_args(), name="gather-at-get"),
    Case("gather", _take, take_args(), mlx_fn=_mx_take, name="gather-take"),
    Case("static_slice", _getitem, basic_getitem_args(), mlx_fn=_mx_getitem,
         name="static_slice-getitem"),
    Case("take_along_axis", _take_along, along_axis_args(), mlx_fn=_mx_take_along),
    Case("scatter", _put_along, along_axis_args(with_values=True), name="scatter-put_along_axis"),
    Case("scatter_add", _update("add"), update_args(**BASIC), name="scatter_add-basic"),
    Case("scatter_add", _update("add"), update_args(), name="scatter_add-mixed"),
    Case("scatter_add", _update("add"), update_args(dup=True, **ADV),
         name="scatter_add-duplicates"),
    Case("scatter", _update("set"), update_args(**BASIC), name="scatter-basic"),
    Case("scatter", _update("set"), update_args(), name="scatter-mixed"),
    Case("scatter", _update("set"), update_args(dup=True, **ADV), name="scatter-duplicates"),
    Case("scatter_mul", _update("multiply"), update_args(**BASIC), name="scatter_mul-basic"),
    Case("scatter_mul", _update("multiply", unique_indices=True),
         update_args(unique=True, **ADV), name="scatter_mul-unique"),
    # Repeats: differentiated with respect to x only (values are int32 constants).
    Case("unique_indices_guard", _update("multiply"),
         update_args(dup=True, int_values=True, **ADV), name="scatter_mul-duplicates"),
    Case("scatter_div", _update("divide"), update_args(fix=_away_from_zero, **BASIC),
         name="scatter_div-basic"),
    Case("scatter_div", _update("divide", unique_indices=True),
         update_args(unique=True, fix=_away_from_zero, **ADV), name="scatter_div-unique"),
    Case("scatter_div", _update("divide"), update_args(dup=True, int_values=True, **ADV),
         name="scatter_div-duplicates"),
    Case("scatter_min", _update("min"), update_args(fix=_all_distinct), name="scatter_min"),
    Case("scatter_max", _update("max"), update_args(fix=_all_distinct), name="scatter_max"),
    Case("scatter_max", _update("max"), update_args(dup=True, fix=_all_distinct, **ADV),
         name="scatter_max-duplicates"),
]

# Raw MLX differentiates these scatters in reverse mode only (mx.jvp of a
# scatter is not implemented), so tests/test_indexing.py compares them with
# mx.vjp directly.
MLX_VJP = {"scatter_add-mixed": _mx_add, "scatter-mixed": _mx_set}
