"""Indexing: forward values against NumPy, gradients where repeats, ties and
overwrites matter, and the error paths."""

import mlx.core as mx
import numpy as np
import pytest
from cases_indexing import (
    CASES,
    MLX_VJP,
    decode,
    expand_ellipsis,
    index_exprs,
    index_shape,
    update_args,
)
from harness import floats, shapes, to_mx
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ftorch as ft
import ftorch.numpy as fnp
from ftorch.core import ShapeDtypeStruct, Tracer


def _mx_index(idx):
    return tuple(mx.array(e) if isinstance(e, np.ndarray) else e for e in idx)


def _np(x):
    return np.array(x)


@given(data=st.data())
def test_basic_indices_match_numpy(data):
    shape = data.draw(shapes(min_dims=0, min_side=0))
    idx = data.draw(hnp.basic_indices(shape, allow_newaxis=True, allow_ellipsis=True))
    n = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    np.testing.assert_array_equal(_np(fnp.getitem(mx.array(n), idx)), n[idx])


@given(data=st.data())
def test_advanced_indices_match_numpy(data):
    shape = data.draw(shapes(min_dims=1))
    idx = data.draw(index_exprs(shape, need_array=data.draw(st.booleans())))
    n = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    # As NumPy arrays, MLX arrays and (for arrays) lists.
    as_list = tuple(e.tolist() if isinstance(e, np.ndarray) and e.ndim else e for e in idx)
    expected = n[expand_ellipsis(idx, len(shape))]
    for form in (idx, _mx_index(idx), as_list):
        np.testing.assert_array_equal(_np(fnp.getitem(mx.array(n), form)), expected)


def test_empty_ellipsis_does_not_separate_advanced_indices():
    x = mx.zeros((2, 1, 1))
    idx = (slice(None), mx.array([0]), Ellipsis, 0)
    assert fnp.getitem(x, idx).shape == x[idx].shape == (2, 1)  # NumPy gives (1, 2)


@given(data=st.data())
def test_getitem_under_transforms_matches(data):
    shape = data.draw(shapes(min_dims=1))
    idx = _mx_index(data.draw(index_exprs(shape)))
    x = mx.array(np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape))
    out, t = ft.jvp(lambda x: x[idx], (x,), (x,))
    np.testing.assert_array_equal(_np(out), _np(x[idx]))
    np.testing.assert_array_equal(_np(t), _np(x[idx]))


def test_boolean_masks_match_numpy():
    n = np.arange(24.0).reshape(2, 3, 4)
    x = mx.array(n)
    for idx in [(n > 5,), (slice(None), n[0] > 5), (n[:, 0, 0] > 0, Ellipsis, 1),
                (np.zeros(2, bool),), ([True, False],)]:
        np.testing.assert_array_equal(_np(fnp.getitem(x, idx)), n[idx])
    np.testing.assert_array_equal(_np(fnp.getitem(x, x > 5)), n[n > 5])


@given(data=st.data())
def test_updates_match_numpy(data):
    x, v, code, *arrays = data.draw(update_args())
    idx = expand_ellipsis(decode(code, arrays), x.ndim)
    x, v = x.astype(np.float32), v.astype(np.float32)
    xm, vm, midx = mx.array(x), mx.array(v), _mx_index(idx)
    # Broadcast by hand: NumPy 2.4's ufunc.at misreads values that only
    # broadcast against a multi-dimensional index.
    target = x[idx].shape
    v = np.array(np.broadcast_to(v.reshape(v.shape[max(v.ndim - len(target), 0):]), target))
    ref = x.copy()
    np.add.at(ref, idx, v)
    np.testing.assert_allclose(_np(fnp.at(xm)[midx].add(vm)), ref, rtol=1e-5, atol=1e-6)
    for op, ufunc in [("multiply", np.multiply), ("min", np.minimum), ("max", np.maximum),
                      ("divide", np.divide)]:
        ref = x.copy()
        # Divisors stay out of the subnormal range, where dividing (as MLX
        # does) by multiplying with the reciprocal overflows.
        divisor = np.where(np.abs(v) < np.finfo(np.float32).tiny, 1.0, v).astype(np.float32)
        ufunc.at(ref, idx, v if op != "divide" else divisor)
        vv = vm if op != "divide" else mx.array(divisor)
        np.testing.assert_allclose(_np(getattr(fnp.at(xm)[midx], op)(vv)), ref,
                                   rtol=1e-5, atol=1e-6)
    ref = x.copy()
    has_arrays = any(isinstance(e, np.ndarray) for e in idx)
    if not has_arrays:  # with repeats, which value lands is unspecified
        ref[idx] = v
        np.testing.assert_array_equal(_np(fnp.at(xm)[midx].set(vm)), ref)
    np.testing.assert_array_equal(_np(fnp.at(xm)[midx].get()), x[idx])
    np.testing.assert_array_equal(_np(xm), x)  # x is untouched


def test_set_with_repeats_lands_one_value_and_leaves_x():
    x = mx.zeros(4)
    y = fnp.at(x)[mx.array([1, 1, 3])].set(mx.array([5.0, 6.0, 7.0]))
    assert _np(y)[1] in (5.0, 6.0) and _np(y)[3] == 7.0 and _np(y)[0] == 0.0
    assert _np(x).tolist() == [0.0] * 4
    assert fnp.at(x)[[]].set(1.0).tolist() == [0.0] * 4  # empty update


@given(data=st.data())
def test_take_matches_numpy(data):
    n = data.draw(floats(shapes(min_dims=1)))
    axis = data.draw(st.none() | st.integers(-n.ndim, n.ndim - 1))
    d = n.size if axis is None else n.shape[axis]
    idx = data.draw(hnp.arrays(np.int32, hnp.array_shapes(min_dims=0, max_dims=2),
                               elements=st.integers(-d, d - 1)))
    np.testing.assert_allclose(_np(fnp.take(mx.array(n), idx, axis=axis)),
                               np.take(n, idx, axis=axis), rtol=1e-6, atol=1e-6)
    assert fnp.take(mx.array([1, 2, 3]), 2).item() == 3


@given(data=st.data())
def test_take_and_put_along_axis_match_numpy(data):
    n = data.draw(floats(shapes(min_dims=1)))
    axis = data.draw(st.integers(-n.ndim, n.ndim - 1))
    ax = axis % n.ndim
    ishape = tuple(data.draw(st.integers(1, 3)) if i == ax else d for i, d in enumerate(n.shape))
    idx = data.draw(hnp.arrays(np.int32, ishape, elements=st.integers(0, n.shape[ax] - 1)))
    np.testing.assert_allclose(_np(fnp.take_along_axis(mx.array(n), idx, axis)),
                               np.take_along_axis(n, idx, axis), rtol=1e-6, atol=1e-6)
    flat = idx.ravel()[:2] % n.size
    np.testing.assert_allclose(_np(fnp.take_along_axis(mx.array(n), flat, None)),
                               np.take_along_axis(n, flat, None), rtol=1e-6, atol=1e-6)
    # put: unique positions along the axis so the result is determined
    uidx = np.argsort(data.draw(floats(n.shape)), axis=ax).astype(np.int32)
    vals = data.draw(floats(n.shape))
    ref = n.copy()
    np.put_along_axis(ref, uidx, vals, axis)
    np.testing.assert_allclose(
        _np(fnp.put_along_axis(mx.array(n), uidx, mx.array(vals), axis, inplace=False)), ref,
        rtol=1e-6, atol=1e-6)


# ----------------------------------------------------------------------------
# Gradients: repeats, overwrites, ties
# ----------------------------------------------------------------------------


def test_getitem_vjp_accumulates_repeats():
    g = ft.grad(lambda x: fnp.sum(x[mx.array([0, 0, 2, 0])] * mx.array([1.0, 2.0, 3.0, 4.0])))(
        mx.zeros(3))
    assert g.tolist() == [7.0, 0.0, 3.0]
    g = ft.grad(lambda x: fnp.sum(fnp.take(x, [[1, 1]], axis=1)))(mx.zeros((2, 2)))
    assert g.tolist() == [[0.0, 2.0], [0.0, 2.0]]


def test_add_accumulates_repeats_and_is_linear():
    x, v = mx.zeros(3), mx.array([1.0, 2.0, 3.0])
    idx = mx.array([2, 2, 0])
    assert fnp.at(x)[idx].add(v).tolist() == [3.0, 0.0, 3.0]
    gx, gv = ft.grad(lambda x, v: fnp.sum(fnp.at(x)[idx].add(v) * mx.array([1.0, 2.0, 3.0])),
                     argnums=(0, 1))(x, v)
    assert gx.tolist() == [1.0, 2.0, 3.0] and gv.tolist() == [3.0, 3.0, 1.0]


def test_set_gradients_follow_the_value_that_landed():
    x, v = mx.zeros(4), mx.array([1.0, 2.0, 3.0])
    idx = mx.array([0, 0, 2])
    w = mx.array([1.0, 2.0, 3.0, 4.0])
    y = fnp.at(x)[idx].set(v)
    landed = 0 if y[0].item() == 1.0 else 1
    gx, gv = ft.grad(lambda x, v: fnp.sum(fnp.at(x)[idx].set(v) * w), argnums=(0, 1))(x, v)
    assert gx.tolist() == [0.0, 2.0, 0.0, 4.0]
    expected = [0.0, 0.0, 3.0]
    expected[landed] = 1.0
    assert gv.tolist() == expected
    # a scalar broadcast to repeated positions gets each position's cotangent once
    g = ft.grad(lambda s: fnp.sum(fnp.at(x)[idx].set(s) * w))(mx.array(5.0))
    assert g.item() == 4.0


def test_min_max_gradients_go_to_the_winner_and_split_ties():
    x = mx.array([1.0, 5.0, 2.0])
    f = lambda x, v: fnp.sum(fnp.at(x)[mx.array([0, 1, 2])].max(v))
    gx, gv = ft.grad(f, argnums=(0, 1))(x, mx.array([3.0, 5.0, 0.0]))
    assert gx.tolist() == [0.0, 0.5, 1.0] and gv.tolist() == [1.0, 0.5, 0.0]
    # three-way tie through repeats
    f = lambda x, v: fnp.sum(fnp.at(x)[mx.array([0, 0])].min(v))
    gx, gv = ft.grad(f, argnums=(0, 1))(mx.array([2.0]), mx.array([2.0, 2.0]))
    np.testing.assert_allclose(_np(gx), [1 / 3])
    np.testing.assert_allclose(_np(gv), [1 / 3, 1 / 3])


def test_multiply_divide_need_unique_indices_for_value_gradients():
    x, v = mx.array([1.0, 2.0, 3.0]), mx.array([2.0, 4.0])
    idx = mx.array([0, 2])
    for op in ("multiply", "divide"):
        f = lambda x, v: fnp.sum(getattr(fnp.at(x)[idx], op)(v))
        with pytest.raises(NotImplementedError, match="unique_indices=True"):
            ft.grad(f, argnums=1)(x, v)
        with pytest.raises(NotImplementedError, match="unique_indices=True"):
            ft.jvp(lambda v: f(x, v), (v,), (v,))
        gx = ft.grad(f)(x, v)  # x is fine either way
        expected = [2.0, 1.0, 4.0] if op == "multiply" else [0.5, 1.0, 0.25]
        np.testing.assert_allclose(_np(gx), expected)
        g = lambda x, v: fnp.sum(getattr(fnp.at(x)[idx], op)(v, unique_indices=True))
        gv = ft.grad(g, argnums=1)(x, v)
        expected = [1.0, 3.0] if op == "multiply" else [-1 / 4, -3 / 16]
        np.testing.assert_allclose(_np(gv), expected)
    # basic indices are always unique
    gv = ft.grad(lambda v: fnp.sum(fnp.at(x)[1:].multiply(v)))(v)
    np.testing.assert_allclose(_np(gv), [2.0, 3.0])
    # repeats multiply in turn
    assert fnp.at(x)[mx.array([0, 0])].multiply(v).tolist() == [8.0, 2.0, 3.0]


def test_tracer_at_and_setitem():
    def f(x):
        return fnp.sum(x.at[1].set(x[0] * 3.0) ** 2)

    g = ft.grad(f)(mx.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(_np(g), [20.0, 0.0, 6.0])

    def bad(x):
        x[0] = 1.0
        return x

    with pytest.raises(TypeError, match="immutable"):
        ft.grad(lambda x: fnp.sum(bad(x)))(mx.ones(2))


@pytest.mark.parametrize("name", sorted(MLX_VJP))
@given(data=st.data())
def test_scatter_vjp_agrees_with_mlx(name, data):
    case = next(c for c in CASES if c.name == name)
    x, v, *rest = to_mx(data.draw(case.args), mx.float32)
    ct = mx.array(np.random.default_rng(0).standard_normal(tuple(x.shape)), dtype=mx.float32)
    gx, gv = ft.vjp(lambda x, v: case.fn(x, v, *rest), x, v)[1](ct)
    try:
        _, (ex, ev) = mx.vjp(lambda x, v: MLX_VJP[name](x, v, *rest), [x, v], [ct])
    except ValueError:
        return  # MLX's own VJP fails for some broadcast values (e.g. a 0-d index array)
    if name.startswith("scatter-") and any(a.size > 1 for a in rest[1:]):
        return  # which repeat lands may differ between the two; checked above
    if 0 in index_shape(x.shape, decode(rest[0], rest[1:])):
        return  # MLX's VJP gives the values a nonzero cotangent for an empty update
    np.testing.assert_allclose(_np(gx), _np(ex), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_np(gv), _np(ev), rtol=1e-5, atol=1e-6)


# ----------------------------------------------------------------------------
# Errors
# ----------------------------------------------------------------------------


def test_index_errors():
    x = mx.zeros((2, 3))
    with pytest.raises(IndexError, match="too many indices.*2-dimensional, but 3"):
        fnp.getitem(x, (0, 0, 0))
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 1 with size 3"):
        fnp.getitem(x, (0, 3))
    with pytest.raises(IndexError, match="index -3 is out of bounds for axis 0 with size 2"):
        fnp.getitem(x, -3)
    with pytest.raises(IndexError, match="single ellipsis"):
        fnp.getitem(x, (Ellipsis, Ellipsis))
    with pytest.raises(IndexError, match="float.*index position 1"):
        fnp.getitem(x, (0, 1.0))
    with pytest.raises(IndexError, match="float32 array at index position 0"):
        fnp.getitem(x, mx.array([0.0]))
    with pytest.raises(IndexError, match="float64 array"):
        fnp.getitem(x, np.array([0.5]))
    with pytest.raises(IndexError, match="boolean scalar"):
        fnp.getitem(x, True)
    with pytest.raises(IndexError, match="boolean index did not match.*axis 0.*size of axis is 2"):
        fnp.getitem(x, np.array([True, False, True]))
    with pytest.raises(IndexError, match="str"):
        fnp.getitem(x, "a")
    with pytest.raises(IndexError, match="out of bounds for axis 0"):
        fnp.at(x)[5].set(1.0)
    with pytest.raises(IndexError, match="too many indices"):
        mx.zeros(()) if False else fnp.at(x)[0, 0, 0].add(1.0)


class _AbstractMask(Tracer):
    """A traced mask with no concrete value (as under vmap)."""

    __slots__ = ()

    @property
    def aval(self):
        return ShapeDtypeStruct((4,), mx.bool_)

    def concrete(self):
        raise TypeError("no concrete value")


def test_mask_without_a_value_is_refused_with_a_pointer_to_where():
    x = mx.arange(4.0)
    mask = _AbstractMask()
    with pytest.raises(TypeError, match="fnp.where"):
        fnp.getitem(x, mask)
    with pytest.raises(TypeError, match="fnp.where"):
        fnp.at(x)[mask].set(0.0)
    # a mask whose value is known is fine under a transform
    g = ft.grad(lambda x: fnp.sum(x[x > 1.5]))(x)
    assert g.tolist() == [0.0, 0.0, 1.0, 1.0]


def test_update_errors():
    x = mx.zeros(4)
    with pytest.raises(ValueError, match=r"at\[...\]\.set: values of shape \(3,\).*\(2,\)"):
        fnp.at(x)[1:3].set(mx.ones(3))


def test_take_errors():
    x = mx.zeros((2, 3))
    with pytest.raises(TypeError, match="take: indices must be integers"):
        fnp.take(x, mx.array([0.5]))
    with pytest.raises(TypeError, match="take: indices must be integers"):
        fnp.take(x, 1.0)
    with pytest.raises(ValueError, match="take: axis 2 is out of range"):
        fnp.take(x, [0], axis=2)
    with pytest.raises(ValueError, match="same number of dimensions"):
        fnp.take_along_axis(x, mx.array([0]), axis=1)
    with pytest.raises(ValueError, match="take_along_axis: axis -3 is out of range"):
        fnp.take_along_axis(x, mx.zeros((2, 1), mx.int32), axis=-3)
    with pytest.raises(ValueError, match="do not broadcast.*axis 0"):
        fnp.take_along_axis(x, mx.zeros((3, 1), mx.int32), axis=1)
    with pytest.raises(ValueError, match="axis=None, indices must be 1-D"):
        fnp.take_along_axis(x, mx.zeros((2, 1), mx.int32), axis=None)
    with pytest.raises(TypeError, match="put_along_axis: indices must be integers"):
        fnp.put_along_axis(x, mx.zeros((2, 1)), 1.0, axis=1, inplace=False)


def test_index_shape_helper_agrees_with_numpy():
    assert index_shape((2, 3, 4), (np.array([0, 1]), None, np.array([0, 1]))) == (2, 1, 4)
