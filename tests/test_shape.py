"""Shape ops: forward values against NumPy, Tracer methods, special
derivatives, primitive choices and every error path."""

import mlx.core as mx
import numpy as np
import pytest
from harness import floats, shapes
from hypothesis import given
from hypothesis import strategies as st

import ftorch as ft
import ftorch.numpy as fnp
from ftorch.core import Primitive
from ftorch.primitives.shape import static_slice


def same(got, expected):
    if not isinstance(got, (list, tuple)):
        got, expected = [got], [expected]
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert isinstance(g, mx.array)
        e = np.asarray(e)
        if e.dtype == np.float64 and g.dtype == mx.float32:
            e = e.astype(np.float32)  # mx.array() of float64 NumPy data is float32
        assert tuple(g.shape) == e.shape
        np.testing.assert_array_equal(np.array(g), e)


class Recorder:
    """Names of the primitives bound eagerly inside the block."""

    def __enter__(self):
        self.names, self.original = [], Primitive.bind
        rec = self

        def bind(prim, *args, **params):
            rec.names.append(prim.name)
            return rec.original(prim, *args, **params)

        Primitive.bind = bind
        return self

    def __exit__(self, *exc):
        Primitive.bind = self.original


arrays = floats(shapes(0, 4, min_side=0))
nonempty = floats(shapes(1, 4))


def axis_of(draw, ndim):
    return draw(st.integers(-ndim, ndim - 1))


# ----------------------------------------------------------------------------
# Forward values against NumPy
# ----------------------------------------------------------------------------


@given(data=st.data())
def test_transpose(data):
    a = data.draw(arrays)
    perm = data.draw(st.permutations(range(a.ndim)))
    neg = [p - a.ndim if data.draw(st.booleans()) else p for p in perm]
    same(fnp.transpose(mx.array(a), neg), np.transpose(a, perm))
    same(fnp.transpose(mx.array(a)), a.T)
    if a.ndim >= 2:
        same(fnp.transpose(mx.array(a), *perm), np.transpose(a, perm))


@given(data=st.data())
def test_swapaxes_moveaxis(data):
    a = data.draw(nonempty)
    i, j = axis_of(data.draw, a.ndim), axis_of(data.draw, a.ndim)
    same(fnp.swapaxes(mx.array(a), i, j), np.swapaxes(a, i, j))
    k = data.draw(st.integers(1, a.ndim))
    src = data.draw(st.lists(st.integers(0, a.ndim - 1), min_size=k, max_size=k, unique=True))
    dst = data.draw(st.lists(st.integers(-a.ndim, -1), min_size=k, max_size=k,
                             unique=True))
    same(fnp.moveaxis(mx.array(a), src, dst), np.moveaxis(a, src, dst))
    same(fnp.moveaxis(mx.array(a), src[0], dst[0]), np.moveaxis(a, src[0], dst[0]))


@given(a=arrays)
def test_ravel_flatten(a):
    x = mx.array(a)
    same(fnp.ravel(x), a.ravel())
    same(fnp.ravel(x, order="F"), a.ravel(order="F"))
    same(fnp.flatten(x), a.flatten())
    if a.ndim >= 2:
        same(fnp.flatten(x, 1), a.reshape(a.shape[0], int(np.prod(a.shape[1:]))))
        same(fnp.flatten(x, 0, -2), a.reshape((int(np.prod(a.shape[:-1])), a.shape[-1])))
    assert fnp.flatten(mx.array(1.0)).shape == (1,)


@given(data=st.data())
def test_squeeze_expand_dims(data):
    a = data.draw(floats(shapes(0, 4, min_side=0, max_side=2)))
    x = mx.array(a)
    same(fnp.squeeze(x), np.squeeze(a))
    ones = [i for i, d in enumerate(a.shape) if d == 1]
    if ones:
        axes = data.draw(st.lists(st.sampled_from(ones), min_size=1, unique=True))
        axes = tuple(ax - a.ndim if data.draw(st.booleans()) else ax for ax in axes)
        same(fnp.squeeze(x, axes), np.squeeze(a, axes))
    ax = data.draw(st.integers(-a.ndim - 1, a.ndim))
    same(fnp.expand_dims(x, ax), np.expand_dims(a, ax))


@given(data=st.data())
def test_reshape(data):
    a = data.draw(nonempty)
    x = mx.array(a)
    same(fnp.reshape(x, (-1,)), a.reshape(-1))
    same(fnp.reshape(x, a.size, 1), a.reshape(a.size, 1))
    same(fnp.reshape(x, a.shape[::-1]), a.reshape(a.shape[::-1]))


@given(shape_pair=st.data())
def test_broadcast(shape_pair):
    from hypothesis.extra import numpy as hnp

    shp = shape_pair.draw(hnp.mutually_broadcastable_shapes(num_shapes=3, max_side=3))
    arrs = [np.arange(int(np.prod(s)), dtype=np.float32).reshape(s) for s in shp.input_shapes]
    same(fnp.broadcast_arrays(*[mx.array(a) for a in arrs]), np.broadcast_arrays(*arrs))
    same(fnp.broadcast_to(mx.array(arrs[0]), shp.result_shape),
         np.broadcast_to(arrs[0], shp.result_shape))


@given(data=st.data())
def test_concatenate_stack(data):
    shape = data.draw(shapes(1, 3, min_side=0))
    axis = axis_of(data.draw, len(shape))
    parts = []
    for _ in range(data.draw(st.integers(1, 3))):
        s = list(shape)
        s[axis] = data.draw(st.integers(0, 3))
        parts.append(data.draw(floats(st.just(tuple(s)))))
    same(fnp.concatenate([mx.array(p) for p in parts], axis=axis),
         np.concatenate(parts, axis=axis))
    same(fnp.concatenate([mx.array(p) for p in parts], axis=None),
         np.concatenate(parts, axis=None))
    sax = data.draw(st.integers(-len(shape) - 1, len(shape)))
    same(fnp.stack([mx.array(parts[0])] * 2, axis=sax), np.stack([parts[0]] * 2, axis=sax))


@given(data=st.data())
def test_split(data):
    a = data.draw(floats(shapes(1, 3, min_side=0, max_side=6)))
    axis = axis_of(data.draw, a.ndim)
    n = a.shape[axis]
    divisors = [k for k in range(1, 7) if n % k == 0] if n else [1, 2, 3]
    k = data.draw(st.sampled_from(divisors))
    same(fnp.split(mx.array(a), k, axis=axis), np.split(a, k, axis=axis))
    # Any indices, with Python's slice rules: negative, out of range, decreasing.
    idx = data.draw(st.lists(st.integers(-8, 8), max_size=4))
    same(fnp.split(mx.array(a), idx, axis=axis), np.split(a, idx, axis=axis))
    same(fnp.split(mx.array(a), np.array(idx, dtype=np.int64), axis=axis),
         np.split(a, idx, axis=axis))


@given(data=st.data())
def test_pad(data):
    a = data.draw(floats(shapes(0, 3, min_side=0)))
    # NumPy refuses an empty pad_width, the "pairs" form of a 0-d array.
    forms = ["int", "pair", "pairs", "single"] if a.ndim else ["int", "pair", "single"]
    form = data.draw(st.sampled_from(forms))
    if form == "int":
        pw = data.draw(st.integers(0, 3))
    elif form == "pair":
        pw = (data.draw(st.integers(0, 3)), data.draw(st.integers(0, 3)))
    elif form == "single":
        pw = ((data.draw(st.integers(0, 3)), data.draw(st.integers(0, 3))),)
    else:
        pw = tuple((data.draw(st.integers(0, 3)), data.draw(st.integers(0, 3)))
                   for _ in range(a.ndim))
    c = data.draw(st.sampled_from([0, 1.5, -2.0]))
    same(fnp.pad(mx.array(a), pw, constant_values=c), np.pad(a, pw, constant_values=c))
    widths = np.broadcast_to(np.asarray(pw).reshape(-1, 2) if np.size(pw) == 2 else pw,
                             (a.ndim, 2))
    if all(d > 0 or not (w[0] or w[1]) for d, w in zip(a.shape, widths)):
        for mode in ("edge", "reflect", "symmetric", "wrap"):
            same(fnp.pad(mx.array(a), pw, mode=mode), np.pad(a, pw, mode=mode))


def test_pad_wide_and_traced_value():
    a = np.arange(3.0)
    for mode in ("reflect", "symmetric", "wrap", "edge"):
        same(fnp.pad(mx.array(a), (7, 5), mode=mode), np.pad(a, (7, 5), mode=mode))
    same(fnp.pad(mx.array([5.0]), 3, mode="reflect"), np.pad([5.0], 3, mode="reflect"))
    same(fnp.pad(mx.array(a), 1, constant_values=mx.array(4.0)), np.pad(a, 1,
                                                                        constant_values=4.0))
    # Integer arrays keep their dtype.
    same(fnp.pad(mx.array([1, 2]), 1, constant_values=7), np.pad([1, 2], 1, constant_values=7))


@given(data=st.data())
def test_roll(data):
    a = data.draw(floats(shapes(0, 3, min_side=0)))
    shift = data.draw(st.integers(-9, 9))
    same(fnp.roll(mx.array(a), shift), np.roll(a, shift))
    if a.ndim:
        k = data.draw(st.integers(1, 3))
        axes = [axis_of(data.draw, a.ndim) for _ in range(k)]
        shifts = [data.draw(st.integers(-9, 9)) for _ in range(k)]
        same(fnp.roll(mx.array(a), shifts, axes), np.roll(a, shifts, axes))
        same(fnp.roll(mx.array(a), shift, tuple(axes)), np.roll(a, shift, tuple(axes)))
        same(fnp.roll(mx.array(a), tuple(shifts), axes[0]), np.roll(a, tuple(shifts), axes[0]))


@given(data=st.data())
def test_tile(data):
    a = data.draw(floats(shapes(0, 3, min_side=0, max_side=3)))
    reps = data.draw(st.lists(st.integers(0, 3), max_size=4))
    same(fnp.tile(mx.array(a), reps), np.tile(a, reps))
    r = data.draw(st.integers(0, 3))
    same(fnp.tile(mx.array(a), r), np.tile(a, r))


@given(data=st.data())
def test_repeat(data):
    a = data.draw(floats(shapes(0, 3, min_side=0)))
    r = data.draw(st.integers(0, 3))
    same(fnp.repeat(mx.array(a), r), np.repeat(a, r))
    if a.ndim:
        axis = axis_of(data.draw, a.ndim)
        same(fnp.repeat(mx.array(a), r, axis=axis), np.repeat(a, r, axis=axis))
        n = a.shape[axis]
        reps = data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
        same(fnp.repeat(mx.array(a), reps, axis=axis), np.repeat(a, reps, axis=axis))
        same(fnp.repeat(mx.array(a), mx.array(reps, dtype=mx.int32), axis=axis),
             np.repeat(a, reps, axis=axis))
        same(fnp.repeat(mx.array(a), [r], axis=axis), np.repeat(a, [r], axis=axis))


@given(data=st.data())
def test_flip(data):
    a = data.draw(floats(shapes(0, 3, min_side=0)))
    same(fnp.flip(mx.array(a)), np.flip(a))
    if a.ndim:
        axes = data.draw(st.lists(st.integers(-a.ndim, a.ndim - 1), min_size=1,
                                  unique_by=lambda i: i % a.ndim))
        same(fnp.flip(mx.array(a), tuple(axes)), np.flip(a, tuple(axes)))
        same(fnp.flip(mx.array(a), axes[0]), np.flip(a, axes[0]))


@given(data=st.data())
def test_static_slice_matches_python_slicing(data):
    a = data.draw(floats(shapes(1, 3, min_side=0)))
    k = data.draw(st.integers(1, a.ndim))
    sl = tuple(slice(data.draw(st.none() | st.integers(-6, 6)),
                     data.draw(st.none() | st.integers(-6, 6)),
                     data.draw(st.none() | st.sampled_from([-3, -2, -1, 1, 2, 3])))
               for _ in range(k))
    same(static_slice(mx.array(a), sl), a[sl])
    # Its VJP is the transpose: scatter the cotangent back in place.
    ct = np.ones(a[sl].shape)
    expected = np.zeros(a.shape)
    expected[sl] += ct
    _, pullback = ft.vjp(lambda x: static_slice(x, sl), mx.array(a))
    same(pullback(mx.array(ct))[0], expected)


def test_mixed_inputs():
    same(fnp.transpose([[1, 2, 3]]), np.transpose([[1, 2, 3]]))
    same(fnp.pad(np.arange(3.0), 1), np.pad(np.arange(3.0), 1))
    same(fnp.concatenate([np.ones(2), [3.0]]), np.concatenate([np.ones(2), [3.0]]))
    same(fnp.broadcast_arrays(2.0, np.zeros(3)), np.broadcast_arrays(2.0, np.zeros(3)))
    same(fnp.split(np.arange(4.0), 2), np.split(np.arange(4.0), 2))


# ----------------------------------------------------------------------------
# Tracer methods and call forms
# ----------------------------------------------------------------------------


def test_tracer_methods():
    a = np.arange(24.0).reshape(2, 3, 4)
    got = {}

    def f(x):
        got["reshape"] = x.reshape(4, 6)
        got["reshape_tuple"] = x.reshape((6, -1))
        got["transpose"] = x.transpose()
        got["transpose_var"] = x.transpose(1, 0, 2)
        got["transpose_tuple"] = x.transpose((2, 0, 1))
        got["T"] = x.T
        got["mT"] = x.mT
        got["swapaxes"] = x.swapaxes(0, 2)
        got["moveaxis"] = x.moveaxis(0, -1)
        got["squeeze"] = x.reshape(1, 24, 1).squeeze()
        got["squeeze_axis"] = x.reshape(1, 24, 1).squeeze(0)
        got["flatten"] = x.flatten()
        got["ravel"] = x.ravel()
        return fnp.sum(x)

    ft.grad(f)(mx.array(a))
    primal = {k: v.primal for k, v in got.items()}
    expected = {
        "reshape": a.reshape(4, 6), "reshape_tuple": a.reshape(6, -1), "transpose": a.T,
        "transpose_var": a.transpose(1, 0, 2), "transpose_tuple": a.transpose(2, 0, 1),
        "T": a.T, "mT": np.swapaxes(a, -1, -2), "swapaxes": np.swapaxes(a, 0, 2),
        "moveaxis": np.moveaxis(a, 0, -1), "squeeze": a.reshape(24),
        "squeeze_axis": a.reshape(24, 1), "flatten": a.ravel(), "ravel": a.ravel(),
    }
    for k, e in expected.items():
        same(primal[k], e)


# ----------------------------------------------------------------------------
# Derivatives and primitive choices
# ----------------------------------------------------------------------------


def test_identity_ops_return_input_without_binding():
    x = mx.ones((2, 3))
    with Recorder() as rec:
        for y in (fnp.transpose(x, (0, 1)), fnp.moveaxis(x, 0, 0), fnp.swapaxes(x, 1, 1),
                  fnp.squeeze(x), fnp.reshape(x, (2, 3)), fnp.pad(x, 0), fnp.roll(x, 3, 1),
                  fnp.roll(x, 0), fnp.tile(x, 1), fnp.repeat(x, 1, axis=0),
                  fnp.flip(mx.ones((1, 3)), 0), fnp.split(x, 1)[0], fnp.broadcast_to(x, (2, 3)),
                  fnp.concatenate([x])):
            assert y is x or y.shape == (1, 3)
    assert rec.names == []


def test_primitive_choices():
    x = mx.ones((2, 3, 4))
    cases = [
        (lambda: fnp.moveaxis(x, 0, -1), ["transpose"]),
        (lambda: fnp.swapaxes(x, 0, 1), ["transpose"]),
        (lambda: fnp.squeeze(mx.ones((1, 3))), ["reshape"]),
        (lambda: fnp.flip(x, 1), ["static_slice"]),
        (lambda: fnp.roll(x, (1, 2), (0, 2)), ["roll"]),
        (lambda: fnp.split(x, 2, axis=2), ["split"]),
        (lambda: fnp.pad(x, 1), ["pad"]),
    ]
    for fn, names in cases:
        with Recorder() as rec:
            fn()
        assert rec.names == names


def test_flip_vjp_is_a_flip():
    x = mx.array(np.arange(6.0).reshape(2, 3))
    tape = []
    original = Primitive.bind

    def bind(prim, *args, **params):
        tape.append(prim.name)
        return original(prim, *args, **params)

    _, pullback = ft.vjp(lambda x: fnp.flip(x, 1), x)
    Primitive.bind = bind
    try:
        ct = pullback(mx.array(np.arange(6.0).reshape(2, 3)))[0]
    finally:
        Primitive.bind = original
    same(ct, np.flip(np.arange(6.0).reshape(2, 3), 1))
    assert "slice_transpose" not in tape


def test_split_vjp_concatenates_with_zeros():
    x = mx.array(np.arange(6.0))
    g = ft.grad(lambda x: fnp.sum(fnp.split(x, [2, 3])[1] * 5.0))(x)
    same(g, [0, 0, 5, 0, 0, 0])
    # Decreasing indices make overlapping pieces, whose gradients add up.
    g = ft.grad(lambda x: fnp.sum(fnp.split(x, [4, 1])[0]) + fnp.sum(fnp.split(x, [4, 1])[2]))(x)
    same(g, [1, 2, 2, 2, 1, 1])


def test_pad_gradients():
    x = mx.array(np.arange(3.0))
    # Edge and reflect send the padded positions' gradient to their sources.
    same(ft.grad(lambda x: fnp.sum(fnp.pad(x, (2, 1), mode="edge")))(x), [3, 1, 2])
    same(ft.grad(lambda x: fnp.sum(fnp.pad(x, 2, mode="reflect")))(x), [2, 3, 2])
    same(ft.grad(lambda x: fnp.sum(fnp.pad(x, 3, mode="wrap")))(x), [3, 3, 3])
    # The fill value gets the gradient of every padded position.
    g = ft.grad(lambda c: fnp.sum(fnp.pad(mx.ones((2, 2)), 1, constant_values=c) ** 2))
    same(g(mx.array(3.0)), 2 * 3.0 * 12)
    # Python fill values and integer arrays are constants.
    same(ft.grad(lambda x: fnp.sum(fnp.pad(x, 1, constant_values=2.0)))(x), [1, 1, 1])
    # Forward mode with only the fill value varying.
    _, t = ft.jvp(lambda c: fnp.pad(x, 1, constant_values=c), (mx.array(1.0),), (mx.array(1.0),))
    same(t, [1, 0, 0, 0, 1])
    # float64 fill value on a float32 array: its cotangent keeps its dtype.
    c64 = mx.array(1.0, dtype=mx.float64)
    g = ft.grad(lambda c: fnp.sum(fnp.pad(mx.ones(2), 1, constant_values=c)))(c64)
    assert g.dtype == mx.float64 and g.item() == 2.0


def test_repeat_tile_roll_gradients():
    x = mx.array(np.arange(3.0))
    same(ft.grad(lambda x: fnp.sum(fnp.repeat(x, [2, 0, 3]) * 1.0))(x), [2, 0, 3])
    same(ft.grad(lambda x: fnp.sum(fnp.repeat(x, [0, 0, 0])))(x), [0, 0, 0])
    same(ft.grad(lambda x: fnp.sum(fnp.tile(x, (2, 2))))(x), [4, 4, 4])
    w = mx.array(np.arange(3.0) + 1)
    same(ft.grad(lambda x: fnp.sum(fnp.roll(x, 1) * w))(x), np.roll(np.arange(3.0) + 1, -1))


def test_higher_order_through_shape_ops():
    x = mx.array(np.arange(1.0, 7.0).reshape(2, 3))

    def f(x):
        y = fnp.transpose(fnp.pad(x, 1, mode="reflect"))
        return fnp.sum(fnp.roll(y, 1, 0) ** 3)

    h = ft.hessian(f)(x)
    assert h.shape == (2, 3, 2, 3)
    eps = 1e-3
    x64 = x.astype(mx.float64)
    g = ft.grad(f)
    e = mx.zeros((2, 3), mx.float64).at[0, 1].add(1.0)
    fd = (g(x64 + eps * e) - g(x64 - eps * e)) / (2 * eps)
    np.testing.assert_allclose(np.array(h[:, :, 0, 1]), np.array(fd), rtol=1e-4)


# ----------------------------------------------------------------------------
# Errors
# ----------------------------------------------------------------------------


def raises(exc, match, fn, *args, **kwargs):
    with pytest.raises(exc, match=match):
        fn(*args, **kwargs)


def test_errors():
    x = mx.ones((2, 3))
    raises(ValueError, r"transpose: axes \(0,\) do not match", fnp.transpose, x, (0,))
    raises(ValueError, r"transpose: repeated axis", fnp.transpose, x, (0, 0))
    raises(ValueError, r"transpose: axes 2 is out of range", fnp.transpose, x, (0, 2))
    raises(TypeError, r"transpose: axes must be", fnp.transpose, x, (0, 1.5))
    raises(TypeError, r"transpose: give axes either", fnp.transpose, x, (0, 1), 2)
    raises(TypeError, r"transpose: axes given both", fnp.transpose, x, None, 1)
    raises(ValueError, r"swapaxes: axis1 2 is out of range", fnp.swapaxes, x, 2, 0)
    raises(ValueError, r"swapaxes: axis2 -3 is out of range", fnp.swapaxes, x, 0, -3)
    raises(ValueError, r"swapaxes: axis1 -2 is out of range", fnp.swapaxes, mx.ones(3), -2, -1)
    raises(ValueError, r"moveaxis: source 2 is out of range", fnp.moveaxis, x, 2, 0)
    raises(ValueError, r"moveaxis: destination -3", fnp.moveaxis, x, 0, -3)
    raises(ValueError, r"moveaxis: repeated axis in source", fnp.moveaxis, x, (0, -2), (0, 1))
    raises(ValueError, r"moveaxis: source .* same number", fnp.moveaxis, x, (0, 1), 0)
    raises(ValueError, r"squeeze: cannot squeeze axis 1 of size 3", fnp.squeeze, x, 1)
    raises(ValueError, r"squeeze: axis 2 is out of range", fnp.squeeze, x, 2)
    raises(ValueError, r"squeeze: repeated axis", fnp.squeeze, mx.ones((1, 2)), (0, -2))
    raises(ValueError, r"ravel: order must be", fnp.ravel, x, "K")
    raises(ValueError, r"flatten: start_axis 1 comes after end_axis 0", fnp.flatten, x, 1, 0)
    raises(ValueError, r"flatten: end_axis 2 is out of range", fnp.flatten, x, 0, 2)
    raises(ValueError, r"flatten: start_axis 1 is out of range for a 0-d", fnp.flatten,
           mx.array(1.0), 1)
    raises(ValueError, r"broadcast_arrays: shapes \(2, 3\), \(4,\)", fnp.broadcast_arrays,
           x, mx.ones(4))
    raises(ValueError, r"broadcast_to: cannot broadcast shape \(2, 3\) to \(3,\)",
           fnp.broadcast_to, x, (3,))
    raises(ValueError, r"concatenate: axis 2 is out of range", fnp.concatenate, [x, x], 2)
    raises(ValueError, r"concatenate: array 1 has shape", fnp.concatenate, [x, mx.ones((3, 4))])
    raises(ValueError, r"stack: array 1 has shape", fnp.stack, [x, mx.ones(3)])
    raises(ValueError, r"split: axis 1 of size 3 does not divide into 2", fnp.split, x, 2, 1)
    raises(ValueError, r"split: indices_or_sections must be a positive", fnp.split, x, 0)
    raises(ValueError, r"split: axis 2 is out of range", fnp.split, x, 2, 2)
    raises(ValueError, r"split: cannot split a zero-dimensional", fnp.split, mx.array(1.0), 1)
    raises(TypeError, r"split: indices_or_sections must be", fnp.split, x, [1.5])
    raises(TypeError, r"split: indices_or_sections must be", fnp.split, x, 1.5)
    raises(TypeError, r"split: axis must be an integer", fnp.split, x, 2, 0.5)
    raises(ValueError, r"pad: pad_width must be non-negative", fnp.pad, x, -1)
    raises(TypeError, r"pad: pad_width must be of integral type", fnp.pad, x, 1.5)
    raises(ValueError, r"pad: pad_width .* does not fit an array of ndim 2", fnp.pad, x,
           ((1, 1), (1, 1), (1, 1)))
    raises(ValueError, r"pad: pad_width .* too many dimensions", fnp.pad, x, [[[1, 1]]])
    raises(ValueError, r"pad: mode 'mean' is not supported", fnp.pad, x, 1, mode="mean")
    raises(ValueError, r"pad: constant_values must be a scalar", fnp.pad, x, 1,
           constant_values=mx.ones(2))
    raises(ValueError, r"pad: cannot extend the empty axis 0", fnp.pad, mx.ones((0, 2)), 1,
           mode="edge")
    raises(ValueError, r"roll: shift \(1, 2\) and axis \(0, 1, 0\) must have the same length",
           fnp.roll, x, (1, 2), (0, 1, 0))
    raises(ValueError, r"roll: axis 2 is out of range", fnp.roll, x, 1, 2)
    raises(TypeError, r"roll: shift must be", fnp.roll, x, 1.5, 0)
    raises(ValueError, r"tile: reps must be non-negative", fnp.tile, x, (-1, 2))
    raises(TypeError, r"tile: reps must be", fnp.tile, x, "ab")
    raises(ValueError, r"repeat: repeats must be non-negative", fnp.repeat, x, -1)
    raises(ValueError, r"repeat: repeats has 2 counts but axis 1 has size 3", fnp.repeat, x,
           [1, 2], 1)
    raises(ValueError, r"repeat: axis -3 is out of range", fnp.repeat, x, 2, -3)
    raises(TypeError, r"repeat: repeats must be", fnp.repeat, x, 1.5)
    raises(ValueError, r"flip: axis 2 is out of range", fnp.flip, x, 2)
    raises(ValueError, r"flip: repeated axis", fnp.flip, x, (1, -1))
    raises(IndexError, r"too many slices", static_slice, x, (slice(None),) * 3)
