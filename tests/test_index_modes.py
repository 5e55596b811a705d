"""Out-of-range index arrays: every gather and scatter path under each mode,
with its derivatives, eagerly, under ft.jit and under ft.vmap, against NumPy
transcriptions of JAX's documented semantics:

- negative entries wrap once (i + n for i < 0), then the mode decides;
- gathers: ``clip`` reads the nearest end of the axis (``x[idx]`` and
  ``.at[].get()`` by default), ``fill`` reads a fill value (``take`` and
  ``take_along_axis`` by default; NaN for floats);
- scatters: ``drop`` (the default; ``fill`` is an alias) ignores the update,
  ``clip`` applies it at the nearest end of the axis;
- ``promise_in_bounds`` is exact for in-range indices and costs nothing.

The references below build "fill"/"drop" on NumPy by padding each
array-indexed axis with one slot and sending every out-of-range entry there.
"""

import mlx.core as mx
import numpy as np
import pytest
from cases_indexing import decode, encode, expand_ellipsis, index_exprs
from child import run_child
from harness import compiler_off, distinct, floats, shapes
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ftorch as ft
import ftorch.numpy as fnp
from ftorch.core import mlx_at, mlx_getitem

HOW = ("eager", "jit", "vmap")
RTOL, ATOL = 1e-5, 1e-6

# ----------------------------------------------------------------------------
# NumPy transcriptions
# ----------------------------------------------------------------------------


def _array_axes(idx):
    """The axis each index array of ``idx`` (no ``...``) indexes."""
    axes, axis = [], 0
    for e in idx:
        if e is None:
            continue
        if isinstance(e, np.ndarray):
            axes.append(axis)
        axis += 1
    return axes


def _wrapped(a, n):
    a = np.asarray(a).astype(np.int64)
    return np.where(a < 0, a + n, a)


def np_index(idx, shape, mode):
    """``idx`` with its index arrays made NumPy-safe: ``clip`` clamps each
    (wrapped) entry into its axis; ``redirect`` sends every out-of-range entry
    to the slot past the end of its axis (see ``padded``)."""
    sizes = iter([shape[a] for a in _array_axes(idx)])
    out = []
    for e in idx:
        if isinstance(e, np.ndarray):
            n = next(sizes)
            w = _wrapped(e, n)
            e = np.clip(w, 0, n - 1) if mode == "clip" else np.where((w >= 0) & (w < n), w, n)
        out.append(e)
    return tuple(out)


def padded(x, idx, value=0):
    """``x`` with one more slot, holding ``value``, along each array-indexed axis."""
    pads = [(0, 0)] * x.ndim
    for a in _array_axes(idx):
        pads[a] = (0, 1)
    return np.pad(x, pads, constant_values=value)


def unpadded(xp, shape):
    return xp[tuple(slice(0, d) for d in shape)]


def np_gather(x, idx, mode, fill=np.nan):
    """JAX's ``x.at[idx].get(mode=mode)`` (``clip`` or ``fill``)."""
    if mode == "clip":
        return x[np_index(idx, x.shape, "clip")]
    return padded(x, idx, fill)[np_index(idx, x.shape, "redirect")]


def np_gather_grad(x, idx, mode, w):
    """The gradient of ``sum(w * gather(x))``: ``w`` added where each entry was
    read (nowhere for a filled one)."""
    if mode == "clip":
        g = np.zeros_like(x)
        np.add.at(g, np_index(idx, x.shape, "clip"), w)
        return g
    g = padded(np.zeros_like(x), idx)
    np.add.at(g, np_index(idx, x.shape, "redirect"), w)
    return unpadded(g, x.shape)


_UFUNCS = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply,
           "min": np.minimum, "max": np.maximum}


def full_values(v, shape):
    """Values broadcast to the indexed shape, as their own array: NumPy 2.4's
    ufunc.at misreads values that only broadcast against a multi-dimensional
    index (np.add.at(np.zeros(3), [[1, 0], [1, 1]], [1.0, 2.0]) gives
    [2, 1, 0], not [2, 4, 0])."""
    if v.ndim > len(shape):  # extra leading axes of size 1
        v = v.reshape(v.shape[v.ndim - len(shape):])
    return np.array(np.broadcast_to(v, shape))


def np_scatter(x, idx, v, op, mode):
    """JAX's ``x.at[idx].<op>(v, mode=mode)`` (``drop`` or ``clip``) for the
    ops whose result does not depend on the order of repeated updates."""
    ufunc = _UFUNCS.get(op, np.multiply)
    v = full_values(v, x[np_index(idx, x.shape, "clip")].shape)
    v = 1 / v if op == "divide" else v  # as MLX: multiply by the reciprocal
    if mode == "clip":
        out = x.copy()
        ufunc.at(out, np_index(idx, x.shape, "clip"), v)
        return out
    out = padded(x, idx)
    ufunc.at(out, np_index(idx, x.shape, "redirect"), v)
    return unpadded(out, x.shape)


def np_set(x, idx, v, mode, got):
    """JAX's ``x.at[idx].set(v, mode=mode)``. Where several updates share a
    position one of them lands, unspecified which: the one in ``got`` (the
    result under test) is taken if it is one of them."""
    t = targets(idx, x.shape, mode)
    vb = full_values(v, t.shape)
    out, got = x.copy().ravel(), np.asarray(got).ravel()
    for p in np.unique(t[t >= 0]):
        candidates = vb[t == p]
        out[p] = got[p] if got[p] in candidates else candidates[0]
    return out.reshape(x.shape)


def targets(idx, shape, mode):
    """For each update (the indexed shape), the flat position of ``x`` it
    lands on, or -1 when it is dropped."""
    pos = np.arange(int(np.prod(shape))).reshape(shape)
    if mode == "clip":
        return pos[np_index(idx, shape, "clip")]
    return padded(pos, idx, -1)[np_index(idx, shape, "redirect")]


def unbroadcast(g, shape):
    """A gradient of a broadcast shape summed back to ``shape``."""
    lead = g.ndim - len(shape)
    g = g.sum(axis=tuple(range(lead))) if lead > 0 else g
    axes = tuple(i for i, d in enumerate(shape) if d == 1 and g.shape[i] != 1)
    return g.sum(axis=axes, keepdims=True).reshape(shape) if axes else g.reshape(shape)


def np_scatter_grads(x, idx, v, op, mode, w, out):
    """Gradients of ``sum(w * x.at[idx].<op>(v, mode=mode))`` with respect to
    ``x`` and ``v``; a dropped update's value gets zero. ``set`` needs
    distinct values (to tell which update landed)."""
    t = targets(idx, x.shape, mode)
    vb = full_values(v, t.shape)
    landed = t >= 0
    w_at = np.where(landed, w.ravel()[np.maximum(t, 0)], 0.0)
    out_at = out.ravel()[np.maximum(t, 0)]
    x_at = x.ravel()[np.maximum(t, 0)]
    if op in ("add", "subtract"):
        gx, gv = w, w_at * (1.0 if op == "add" else -1.0)
    elif op in ("multiply", "divide"):
        gx = w * np_scatter(np.ones_like(x), idx, v, op, mode)  # the factors at each position
        gv = w_at * x_at if op == "multiply" else -w_at * out_at / vb
    elif op == "set":
        written = np.zeros(x.size, bool)
        written[t[landed]] = True
        gx = w * ~written.reshape(x.shape)
        gv = w_at * (out_at == vb)
    else:  # min, max: the winner gets the gradient, shared equally among ties
        on_v = landed & (out_at == vb)
        count = (x == out).ravel().astype(np.float64)
        np.add.at(count, t[on_v], 1.0)
        gx = w * (x == out) / count.reshape(x.shape)
        gv = w_at * on_v / count[np.maximum(t, 0)]
    return gx, unbroadcast(np.asarray(gv, np.float64), v.shape)


# ----------------------------------------------------------------------------
# Running a function eagerly, jitted and vmapped
# ----------------------------------------------------------------------------


def _variant(a):
    """A second example of the same shape, for the vmapped run."""
    if a.dtype.kind == "f":
        return 2 * a
    return np.roll(a.ravel(), 1).reshape(a.shape)


def run(how, fn, args):
    """``[(example_args, outputs), ...]``: ``fn`` (returning a tuple of
    arrays) on ``args`` eagerly or under ``ft.jit``, or under ``ft.vmap`` on
    ``args`` and a variant of them stacked."""
    if how == "vmap":
        examples = [list(args), [_variant(a) for a in args]]
        batched = [mx.array(np.stack([a, b])) for a, b in zip(*examples)]
        outs = ft.vmap(fn)(*batched)
        return [(ex, [np.array(o[i]) for o in outs]) for i, ex in enumerate(examples)]
    f = ft.jit(fn) if how == "jit" else fn
    with compiler_off(how == "jit"):  # ftorch's staging is under test, not g++
        outs = f(*[mx.array(a) for a in args])
    return [(list(args), [np.array(o) for o in outs])]


def check(how, fn, ref, args, ref_sees_result=False):
    """``fn`` against ``ref`` (NumPy) on every example ``run`` makes; with
    ``ref_sees_result``, ``ref`` also gets the first result (``got=``), to
    choose among results the semantics allow."""
    for example, outs in run(how, fn, args):
        expected = ref(*example, got=outs[0]) if ref_sees_result else ref(*example)
        assert len(outs) == len(expected)
        for k, (o, e) in enumerate(zip(outs, expected)):
            e = np.asarray(e)
            assert o.shape == e.shape, (k, o.shape, e.shape)
            np.testing.assert_allclose(o, e.astype(o.dtype), rtol=RTOL, atol=ATOL,
                                       err_msg=f"output {k}")


# ----------------------------------------------------------------------------
# Strategies
# ----------------------------------------------------------------------------


def entries(n, in_range):
    """Index entries for an axis of length ``n``: in range, negative, out of
    range on both sides and very far out."""
    if in_range:
        return st.integers(-n, n - 1)
    return st.integers(-2 * n - 2, 2 * n + 1) | st.sampled_from([10**9, -10**9, n, -n - 1])


@st.composite
def oob_index(draw, shape, in_range=False, kinds=("int", "slice", "array")):
    """An index expression (``...`` written out) with at least one index array
    whose entries may lie outside their axis."""
    idx = expand_ellipsis(draw(index_exprs(shape, kinds=kinds, need_array=True)), len(shape))
    sizes = iter([shape[a] for a in _array_axes(idx)])
    return tuple(draw(hnp.arrays(np.int32, e.shape, elements=entries(next(sizes), in_range)))
                 if isinstance(e, np.ndarray) else e for e in idx)


def _f32(a):
    return np.asarray(a, np.float32)


def _index_of(idx):
    """The index's structure (closed over) and its arrays (passed as arguments)."""
    return encode(idx), [e for e in idx if isinstance(e, np.ndarray)]


# ----------------------------------------------------------------------------
# Gathers
# ----------------------------------------------------------------------------

GET_MODES = [("getitem", None), ("get", "clip"), ("get", "fill"), ("get", "fill-value"),
             ("get", "promise_in_bounds")]


@pytest.mark.parametrize("how", HOW)
@pytest.mark.parametrize("path,mode", GET_MODES)
@given(data=st.data())
def test_getitem_and_get(how, path, mode, data):
    x = _f32(data.draw(floats(shapes(min_dims=1))))
    idx = data.draw(oob_index(x.shape, in_range=mode == "promise_in_bounds"))
    code, arrays = _index_of(idx)
    out_shape = np_gather(x, idx, "clip").shape
    w, t = _f32(data.draw(floats(out_shape))), _f32(data.draw(floats(x.shape)))
    fill = 0.5 if mode == "fill-value" else None
    jmode = "fill" if mode == "fill-value" else mode

    def read(x, arrays):
        i = decode(code, arrays)
        if path == "getitem":
            return fnp.getitem(x, i)
        return fnp.at(x)[i].get(mode=jmode, fill_value=fill)

    def fn(x, w, t, *arrays):
        out, tangent = ft.jvp(lambda x: read(x, arrays), (x,), (t,))
        return out, tangent, ft.grad(lambda x: fnp.sum(read(x, arrays) * w))(x)

    def ref(x, w, t, *arrays):
        i = decode(code, arrays)
        m = "fill" if jmode == "fill" else "clip"
        return (np_gather(x, i, m, np.nan if fill is None else fill),
                np_gather(t, i, m, 0.0), np_gather_grad(x, i, m, w))

    check(how, fn, ref, [x, w, t, *arrays])


TAKE_MODES = [None, "fill", "clip", "wrap", "promise_in_bounds"]


def np_take(x, indices, axis, mode, fill=np.nan):
    if axis is None:
        x, axis = x.ravel(), 0
    axis %= x.ndim
    n = x.shape[axis]
    if mode == "wrap":
        indices = np.mod(indices, n)
    idx = (slice(None),) * axis + (np.asarray(indices),)
    return np_gather(x, idx, "clip" if mode in ("clip", "wrap", "promise_in_bounds") else "fill",
                     fill)


@pytest.mark.parametrize("how", HOW)
@pytest.mark.parametrize("mode", TAKE_MODES)
@given(data=st.data())
def test_take(how, mode, data):
    x = _f32(data.draw(floats(shapes(min_dims=1))))
    axis = data.draw(st.none() | st.integers(-x.ndim, x.ndim - 1))
    n = x.size if axis is None else x.shape[axis]
    indices = data.draw(hnp.arrays(np.int32, hnp.array_shapes(min_dims=0, max_dims=2, max_side=3),
                                   elements=entries(n, mode == "promise_in_bounds")))
    out_shape = np_take(x, indices, axis, "clip").shape
    w, t = _f32(data.draw(floats(out_shape))), _f32(data.draw(floats(x.shape)))

    def fn(x, w, t, indices):
        def read(x):
            return fnp.take(x, indices, axis=axis, mode=mode)
        out, tangent = ft.jvp(read, (x,), (t,))
        return out, tangent, ft.grad(lambda x: fnp.sum(read(x) * w))(x)

    def ref(x, w, t, indices):
        def read(x, fill=np.nan):
            return np_take(x, indices, axis, mode, fill)
        # The gradient of a read is the transpose of reading a tangent.
        flat = x.reshape(-1) if axis is None else x
        ax = 0 if axis is None else axis % x.ndim
        wrapped = np.mod(indices, flat.shape[ax]) if mode == "wrap" else indices
        m = "fill" if mode in (None, "fill") else "clip"
        g = np_gather_grad(flat, (slice(None),) * ax + (np.asarray(wrapped),), m, w)
        return read(x), read(t, 0.0), g.reshape(x.shape)

    check(how, fn, ref, [x, w, t, indices])


@st.composite
def along_axis_args(draw, in_range=False):
    x = _f32(draw(floats(shapes(min_dims=1))))
    axis = draw(st.integers(-x.ndim, x.ndim - 1))
    ax = axis % x.ndim
    ishape = tuple(draw(st.integers(1, 3)) if i == ax else draw(st.sampled_from([1, d]))
                   for i, d in enumerate(x.shape))
    indices = draw(hnp.arrays(np.int32, ishape, elements=entries(x.shape[ax], in_range)))
    return x, indices, axis


def along_axis_index(shape, indices, axis):
    """take_along_axis's index as one index array per axis."""
    ax = axis % len(shape)
    out = np.broadcast_shapes(shape[:ax] + (1,) + shape[ax + 1:], indices.shape)
    grids = np.ix_(*[np.arange(d) if shape[i] == d else np.zeros(d, int)
                     for i, d in enumerate(out)])
    return tuple(np.broadcast_to(indices, out) if i == ax else np.broadcast_to(g, out)
                 for i, g in enumerate(grids))


@pytest.mark.parametrize("how", HOW)
@pytest.mark.parametrize("mode", [None, "clip", "promise_in_bounds"])
@given(data=st.data())
def test_take_along_axis(how, mode, data):
    x, indices, axis = data.draw(along_axis_args(in_range=mode == "promise_in_bounds"))
    idx = along_axis_index(x.shape, indices, axis)
    w, t = _f32(data.draw(floats(idx[0].shape))), _f32(data.draw(floats(x.shape)))
    fill = data.draw(st.sampled_from([None, -1.0])) if mode is None else None
    m = "fill" if mode is None else "clip"

    def fn(x, w, t, indices):
        def read(x):
            return fnp.take_along_axis(x, indices, axis, mode=mode, fill_value=fill)
        out, tangent = ft.jvp(read, (x,), (t,))
        return out, tangent, ft.grad(lambda x: fnp.sum(read(x) * w))(x)

    def ref(x, w, t, indices):
        i = along_axis_index(x.shape, indices, axis)
        return (np_gather(x, i, m, np.nan if fill is None else fill), np_gather(t, i, m, 0.0),
                np_gather_grad(x, i, m, w))

    check(how, fn, ref, [x, w, t, indices])


# ----------------------------------------------------------------------------
# Scatters
# ----------------------------------------------------------------------------

OPS = ["set", "add", "subtract", "multiply", "divide", "min", "max"]


def _values(draw, g_shape, op, x):
    """Values broadcasting to the indexed shape ``g_shape`` (and ``x``
    adjusted): distinct from each other and from ``x`` for set/min/max, away
    from zero for divide."""
    vshape = tuple(d if draw(st.booleans()) else 1 for d in g_shape)
    vshape = vshape[draw(st.integers(0, len(vshape))):]
    if op == "set":  # one update per position, so that which one lands is known
        vshape = g_shape
    v = draw(floats(vshape))
    if op in ("set", "min", "max"):
        both = distinct(np.concatenate([x.ravel(), v.ravel()]), gap=0.1)
        x, v = both[:x.size].reshape(x.shape), both[x.size:].reshape(v.shape)
    if op == "divide":
        v = np.where(v >= 0, v + 0.5, v - 0.5)
    return _f32(x), _f32(v)


def _unique_positions(idx, shape, mode):
    t = targets(idx, shape, mode)
    return len(np.unique(t[t >= 0])) == np.count_nonzero(t >= 0)


@pytest.mark.parametrize("how", HOW)
@pytest.mark.parametrize("mode", [None, "clip", "promise_in_bounds"])
@pytest.mark.parametrize("op", OPS)
@given(data=st.data())
def test_scatter(how, mode, op, data):
    x = data.draw(floats(shapes(min_dims=1)))
    idx = data.draw(oob_index(x.shape, in_range=mode == "promise_in_bounds"))
    code, arrays = _index_of(idx)
    x, v = _values(data.draw, np_gather(x, idx, "clip").shape, op, x)
    w = _f32(data.draw(floats(x.shape)))
    m = "clip" if mode == "clip" else "drop"
    # The derivative of multiply/divide with respect to the values needs
    # unique positions (promised with unique_indices=True); with repeats it is
    # refused, and x's derivative alone is checked.
    examples = [arrays] + ([[_variant(a) for a in arrays]] if how == "vmap" else [])
    unique = op not in ("multiply", "divide") or all(
        _unique_positions(decode(code, ex), x.shape, m) for ex in examples)

    def update(x, v, arrays):
        at = fnp.at(x)[decode(code, arrays)]
        if op in ("multiply", "divide"):
            return getattr(at, op)(v, unique_indices=unique, mode=mode)
        return getattr(at, op)(v, mode=mode)

    def fn(x, v, w, *arrays):
        def loss(x, v):
            return fnp.sum(update(x, v, arrays) * w)
        if unique:
            gx, gv = ft.grad(loss, argnums=(0, 1))(x, v)
        else:
            gx, gv = ft.grad(loss)(x, v), fnp.zeros_like(v)
        return update(x, v, arrays), gx, gv

    def ref(x, v, w, *arrays, got):
        i = decode(code, arrays)
        out = np_set(x, i, v, m, got) if op == "set" else np_scatter(x, i, v, op, m)
        gx, gv = np_scatter_grads(x, i, v, op, m, w, out)
        return out, gx, gv if unique else np.zeros_like(v)

    check(how, fn, ref, [x, v, w, *arrays], ref_sees_result=True)


@pytest.mark.parametrize("how", HOW)
@pytest.mark.parametrize("mode", [None, "clip", "promise_in_bounds"])
@given(data=st.data())
def test_put_along_axis(how, mode, data):
    x, indices, axis = data.draw(along_axis_args(in_range=mode == "promise_in_bounds"))
    idx = along_axis_index(x.shape, indices, axis)
    m = "clip" if mode == "clip" else "drop"
    x, v = _values(data.draw, idx[0].shape, "set", x)
    w = _f32(data.draw(floats(x.shape)))

    def fn(x, v, w, indices):
        def put(x, v):
            return fnp.put_along_axis(x, indices, v, axis, inplace=False, mode=mode)
        return (put(x, v), *ft.grad(lambda x, v: fnp.sum(put(x, v) * w), argnums=(0, 1))(x, v))

    def ref(x, v, w, indices, got):
        i = along_axis_index(x.shape, indices, axis)
        out = np_set(x, i, v, m, got)
        return (out, *np_scatter_grads(x, i, v, "set", m, w, out))

    check(how, fn, ref, [x, v, w, indices], ref_sees_result=True)


# ----------------------------------------------------------------------------
# fnp.at is a superset of MLX's x.at
# ----------------------------------------------------------------------------

MLX_METHODS = ["add", "subtract", "multiply", "divide", "maximum", "minimum"]


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
@given(data=st.data())
def test_at_matches_mlx_for_in_range_indices(dtype, data):
    x = data.draw(floats(shapes(min_dims=1)))
    # MLX's own x.at misplaces ints and new axes beside index arrays (it
    # raises, or writes elsewhere): those are checked against NumPy above.
    idx = data.draw(oob_index(x.shape, in_range=True, kinds=("slice", "array")))
    idx = tuple(e for e in idx if e is not None)
    v = data.draw(floats(np_gather(x, idx, "clip").shape))
    v = np.where(np.abs(v) < 0.5, 1.0, v)  # divide: no tiny divisors
    if dtype == np.int32:
        x, v = np.round(x * 3), np.round(v * 3)
    x, v = mx.array(x.astype(dtype)), mx.array(v.astype(dtype))
    i = tuple(mx.array(e) if isinstance(e, np.ndarray) else e for e in idx)
    if v.size == 0:  # MLX's x.at dies of SIGFPE on an empty update
        for method in MLX_METHODS:
            assert np.array_equal(np.array(getattr(fnp.at(x)[i], method)(v)), np.array(x))
        return
    for method in MLX_METHODS:
        expected = np.array(getattr(mlx_at(x)[i], method)(v))
        np.testing.assert_array_equal(np.array(getattr(fnp.at(x)[i], method)(v)), expected,
                                      err_msg=method)
    np.testing.assert_array_equal(np.array(fnp.at(x)[i].get()), np.array(mlx_getitem(x, i)))


def test_at_repeats_accumulate_as_in_mlx():
    x, i = mx.zeros(3), mx.array([0, 0, 2, 0])
    v = mx.array([1.0, 2.0, 3.0, 4.0])
    # x.at (ftorch's, which runs MLX's own for these names on plain arrays)
    # and fnp.at(x) agree with mlx_at(x), MLX's own ArrayAt.
    for at in (lambda a: a.at, fnp.at):
        assert at(x)[i].add(v).tolist() == mlx_at(x)[i].add(v).tolist() == [7.0, 0.0, 3.0]
        assert at(x)[i].subtract(v).tolist() == mlx_at(x)[i].subtract(v).tolist()
        assert at(x + 1)[i].multiply(v).tolist() == mlx_at(x + 1)[i].multiply(v).tolist()
        assert (at(x)[i].maximum(v).tolist() == mlx_at(x)[i].maximum(v).tolist()
                == [4.0, 0.0, 3.0])
        assert at(x)[i].minimum(-v).tolist() == mlx_at(x)[i].minimum(-v).tolist()
    # and on traced values
    g = ft.grad(lambda x: fnp.sum(x.at[i].maximum(v) + x.at[i].minimum(-v)))(mx.zeros(3))
    assert g.tolist() == [0.0, 2.0, 0.0]  # x loses at 0 and 2 both times


# ----------------------------------------------------------------------------
# Particular semantics
# ----------------------------------------------------------------------------


def test_fill_is_drop_for_scatters_and_modes_default_as_jax():
    x = mx.array([1.0, 2.0, 3.0])
    i = mx.array([-1, 3, -4, 0])
    v = mx.array([10.0, 20.0, 30.0, 40.0])
    for op in OPS:
        drop = getattr(fnp.at(x)[i], op)(v, mode="drop")
        assert getattr(fnp.at(x)[i], op)(v, mode="fill").tolist() == drop.tolist()
        assert getattr(fnp.at(x)[i], op)(v).tolist() == drop.tolist()
    assert fnp.at(x)[i].add(v).tolist() == [41.0, 2.0, 13.0]
    assert fnp.at(x)[i].add(v, mode="clip").tolist() == [71.0, 2.0, 33.0]
    assert fnp.getitem(x, i).tolist() == [3.0, 3.0, 1.0, 1.0]
    assert fnp.at(x)[i].get().tolist() == [3.0, 3.0, 1.0, 1.0]
    assert np.isnan(fnp.take(x, i).tolist()).tolist() == [False, True, True, False]
    assert fnp.take(x, i, mode="wrap").tolist() == [3.0, 1.0, 3.0, 1.0]


def test_default_fill_values_per_dtype():
    i = mx.array([0, 7])
    assert np.isnan(fnp.take(mx.array([1.0, 2.0], mx.float16), i).tolist()[1])
    assert np.isnan(fnp.take(mx.array([1.0, 2.0], mx.bfloat16), i).astype(mx.float32)
                    .tolist()[1])
    for dtype, expected in [(mx.int32, -2**31), (mx.int8, -128), (mx.int64, -2**63),
                            (mx.uint8, 255), (mx.uint32, 2**32 - 1), (mx.uint64, 2**64 - 1)]:
        assert fnp.take(mx.array([1, 2], dtype), i).tolist() == [1, expected], dtype
    assert fnp.take(mx.array([False, False]), i).tolist() == [False, True]
    assert fnp.take_along_axis(mx.array([1, 2]), i, 0, fill_value=9).tolist() == [1, 9]
    assert fnp.at(mx.array([1, 2]))[i].get(mode="fill", fill_value=-5).tolist() == [1, -5]


@pytest.mark.parametrize("dtype", [mx.int8, mx.uint8, mx.int16, mx.uint16, mx.int64,
                                   mx.uint32, mx.uint64])
def test_index_dtypes(dtype):
    signed = dtype in (mx.int8, mx.int16, mx.int64)
    n = 200  # beyond int8's range: every int8 entry is in range
    x = mx.arange(n, dtype=mx.float32)
    raw = [0, 5, 127] + ([-1, -128] if signed else [199, 255])
    i = mx.array(raw, dtype=dtype)
    w = _wrapped(np.array(raw), n)
    np.testing.assert_array_equal(np.array(fnp.getitem(x, i)), np.clip(w, 0, n - 1))
    np.testing.assert_array_equal(np.array(fnp.take(x, i)),
                                  np.where(w < n, w, np.nan))
    out = np.array(fnp.at(x)[i].set(-1.0))
    expected = np.arange(n, dtype=np.float32)
    expected[w[w < n]] = -1.0
    np.testing.assert_array_equal(out, expected)


def test_negative_entries_wrap_once_then_the_mode_applies():
    x = mx.array([1.0, 2.0, 3.0])
    i = mx.array([-3, -4, -7])  # -> 0, -1 (clip: 0), -4 (clip: 0)
    assert fnp.getitem(x, i).tolist() == [1.0, 1.0, 1.0]
    assert np.isnan(fnp.take(x, i).tolist()).tolist() == [False, True, True]
    assert fnp.at(x)[i].add(1.0).tolist() == [2.0, 2.0, 3.0]
    assert fnp.at(x)[i].add(1.0, mode="clip").tolist() == [4.0, 2.0, 3.0]


def test_drop_is_exact():
    # A dropped add leaves -0.0 as it is (the neutral update is -0.0).
    y = fnp.at(mx.array([-0.0, 1.0, -0.0]))[mx.array([5, -9])].add(1.0)
    assert np.signbit(np.array(y)).tolist() == [True, False, True]
    # A dropped set does not overwrite the real update at the clamped position.
    for _ in range(5):
        y = fnp.at(mx.zeros(3))[mx.array([2, 5, 9, 2 - 3])].set(mx.array([7.0, 8.0, 9.0, 7.0]))
        assert y.tolist() == [0.0, 0.0, 7.0]
    # A dropped min/max update does not tie with an infinite x: x keeps its
    # whole gradient and the dropped value gets none.
    x = mx.array([0.0, np.inf])
    for op, v in [("min", np.inf), ("max", -np.inf)]:
        xx = x if op == "min" else -x
        gx, gv = ft.grad(lambda x, v: fnp.sum(getattr(fnp.at(x)[mx.array([0, 2])], op)(v)),
                         argnums=(0, 1))(xx, mx.array([5.0 if op == "min" else -5.0, v]))
        assert gx.tolist() == [1.0, 1.0] and gv.tolist() == [0.0, 0.0], op


def test_multiply_divide_value_gradients_with_dropped_updates():
    x = mx.array([1.0, 2.0, 3.0])
    i = mx.array([2, 5, 0])  # 5 is dropped
    v = mx.array([2.0, 4.0, 5.0])
    for op, gv in [("multiply", [3.0, 0.0, 1.0]), ("divide", [-3 / 4, 0.0, -1 / 25])]:
        g = ft.grad(lambda v: fnp.sum(getattr(fnp.at(x)[i], op)(v, unique_indices=True)))(v)
        np.testing.assert_allclose(np.array(g), gv, rtol=1e-6)


def test_empty_axes():
    empty = mx.zeros((0, 2))
    assert np.isnan(np.array(fnp.take(empty, mx.array([0, 1]), axis=0))).all()
    assert fnp.take(empty, mx.array([0, 1]), axis=0).shape == (2, 2)
    with pytest.raises(IndexError, match="empty axis"):
        fnp.take(empty, mx.array([0]), axis=0, mode="clip")
    with pytest.raises(IndexError, match="empty axis"):
        fnp.getitem(empty, mx.array([0]))
    with pytest.raises(IndexError, match="empty axis"):
        fnp.take_along_axis(empty, mx.zeros((1, 2), mx.int32), 0, mode="clip")
    assert fnp.take(empty, mx.array([], mx.int32), axis=0).shape == (0, 2)
    assert fnp.at(empty)[mx.array([3])].add(1.0).shape == (0, 2)
    assert fnp.put_along_axis(
        empty, mx.zeros((1, 2), mx.int32), 1.0, 0, inplace=False).shape == (0, 2)


def test_unknown_modes_are_errors_naming_the_choices():
    x, i = mx.zeros(3), mx.array([0])
    cases = [
        (lambda: fnp.take(x, i, mode="raise"), "take", "'clip', 'fill', 'wrap'"),
        (lambda: fnp.take_along_axis(x, i, 0, mode="drop"), "take_along_axis",
         "'clip', 'fill', 'promise_in_bounds'"),
        (lambda: fnp.at(x)[i].get(mode="drop"), r"at\[\.\.\.\]\.get", "'clip', 'fill'"),
        (lambda: fnp.at(x)[i].set(1.0, mode="wrap"), r"at\[\.\.\.\]\.set",
         "'drop', 'fill', 'clip', 'promise_in_bounds'"),
        (lambda: fnp.at(x)[i].subtract(1.0, mode="Clip"), r"at\[\.\.\.\]\.subtract", "'drop'"),
        (lambda: fnp.at(x)[0].add(1.0, mode="bad"), r"at\[\.\.\.\]\.add", "'drop'"),
        (lambda: fnp.put_along_axis(x, i, 1.0, 0, inplace=False, mode="bad"), "put_along_axis",
         "'drop'"),
    ]
    for call, name, valid in cases:
        with pytest.raises(ValueError, match=rf"{name}: unknown mode .*; the valid modes are "
                                             rf".*{valid}"):
            call()


def test_static_ints_still_raise():
    with pytest.raises(IndexError, match="index 5 is out of bounds"):
        fnp.getitem(mx.zeros(3), 5)
    with pytest.raises(IndexError, match="index 5 is out of bounds"):
        fnp.at(mx.zeros(3))[5].add(1.0, mode="clip")


def test_fill_value_must_be_a_concrete_scalar():
    with pytest.raises(ValueError, match="fill_value must be a scalar"):
        fnp.take(mx.zeros(3), mx.array([0]), fill_value=[1.0, 2.0])
    with pytest.raises(TypeError, match="fill_value must be a concrete scalar"):
        ft.grad(lambda f: fnp.sum(fnp.take(mx.zeros(3), mx.array([4]), fill_value=f)))(
            mx.array(1.0))


def _equations(graph) -> list[str]:
    return [eqn.prim.name for eqn in graph.eqns]


def test_promise_in_bounds_adds_nothing():
    x, i, i2 = mx.zeros((3, 4)), mx.array([0, 2]), mx.zeros((3, 1), mx.int32)
    graphs = {
        "take": ft.make_graph(lambda x, i: fnp.take(x, i, axis=1, mode="promise_in_bounds")),
        "get": ft.make_graph(lambda x, i: fnp.at(x)[i].get(mode="promise_in_bounds")),
        "add": ft.make_graph(lambda x, i: fnp.at(x)[i].add(1.0, mode="promise_in_bounds")),
    }
    assert _equations(graphs["take"](x, i)) == ["gather"]
    assert _equations(graphs["get"](x, i)) == ["gather"]
    assert _equations(graphs["add"](x, i)) == ["scatter_add"]
    g = ft.make_graph(lambda x, i: fnp.take_along_axis(x, i, 1, mode="promise_in_bounds"))
    assert _equations(g(x, i2)) == ["take_along_axis"]
    # the default modes add a few elementwise ops on the indices
    assert "gather" in _equations(ft.make_graph(lambda x, i: fnp.take(x, i, axis=1))(x, i))


def test_basic_indexing_is_untouched():
    g = ft.make_graph(lambda x: x[1:, 0])(mx.zeros((3, 4)))
    assert _equations(g) == ["static_slice", "reshape"]


# ----------------------------------------------------------------------------
# What used to crash the process
# ----------------------------------------------------------------------------


def test_out_of_range_indices_no_longer_crash():
    out = run_child("""
        x = mx.array([1.0, 2.0, 3.0])
        big = mx.array([0, 10**9, -10**9])
        print(fnp.at(x)[mx.array([5])].add(1.0).tolist())
        print(ft.grad(lambda x: fnp.sum(x[[0, 5]]))(x).tolist())
        print(ft.grad(lambda x: fnp.sum(fnp.getitem(x, big)))(x).tolist())
        print(ft.grad(lambda x: fnp.sum(fnp.take(x, big, mode="clip")))(x).tolist())
        print(ft.grad(lambda x, v: fnp.sum(fnp.at(x)[big].set(v)), argnums=(0, 1))(
            x, mx.ones(3))[1].tolist())
        print(ft.jit(lambda x, i: fnp.at(x)[i].add(1.0))(x, big).tolist())
        print(ft.vmap(lambda i: fnp.take_along_axis(x, i, 0))(big[:, None]).tolist())
        put = lambda i: fnp.put_along_axis(x, i, 0.0, 0, inplace=False)
        print(ft.vmap(put)(big[:, None]).tolist())
        g = ft.jit(ft.grad(lambda x: fnp.sum(fnp.at(x)[big].get(mode="fill", fill_value=0.0))))
        print(g(x).tolist())
        mx.eval(fnp.at(mx.zeros((1000, 1000)))[mx.array([10**9]), mx.array([-10**9])].max(1.0))
        print("done")
    """)
    lines = out.splitlines()
    assert lines[0] == "[1.0, 2.0, 3.0]"
    assert lines[1] == "[1.0, 0.0, 1.0]"
    assert lines[2] == lines[3] == "[2.0, 0.0, 1.0]"
    assert lines[4] == "[1.0, 0.0, 0.0]"
    assert lines[5] == "[2.0, 2.0, 3.0]"
    assert lines[8] == "[1.0, 0.0, 0.0]"
    assert lines[-1] == "done"
