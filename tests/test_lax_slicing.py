"""ftorch.lax's slicing functions against NumPy, under jit, vmap and grad,
and their errors. The rules themselves are checked in test_rules.py
(tests/cases_lax_slicing.py)."""

import mlx.core as mx
import numpy as np
import pytest
from harness import close
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ftorch as ft
import ftorch.numpy as fnp
from ftorch.primitives.slicing import (
    dynamic_index_in_dim,
    dynamic_slice,
    dynamic_slice_in_dim,
    dynamic_update_index_in_dim,
    dynamic_update_slice,
    dynamic_update_slice_in_dim,
    select,
)


def np_starts(starts, shape, sizes, allow_negative=True):
    """JAX's documented rule: a negative start counts once from the end, then
    each start is clamped so that the window fits."""
    return [min(max(s + d if s < 0 and allow_negative else s, 0), d - n)
            for s, d, n in zip(starts, shape, sizes)]


def np_window(starts, sizes):
    return tuple(slice(s, s + n) for s, n in zip(starts, sizes))


def np_slice(x, starts, sizes, allow_negative=True):
    return x[np_window(np_starts(starts, x.shape, sizes, allow_negative), sizes)]


def np_update(x, u, starts):
    out = x.copy()
    out[np_window(np_starts(starts, x.shape, u.shape), u.shape)] = u
    return out


@st.composite
def window_args(draw, min_dims=0):
    """An int array and starts (in range or out of it, either side) and sizes
    of a window of it."""
    shape = draw(hnp.array_shapes(min_dims=min_dims, max_dims=3, min_side=0, max_side=5))
    x = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    starts = [draw(st.integers(-d - 3, d + 3)) for d in shape]
    sizes = [draw(st.integers(0, d)) for d in shape]
    return x, starts, sizes


# Every form start indices may take: Python ints, 0-d arrays of any integer
# dtype, one 1-d array, a NumPy array.
START_FORMS = {
    "ints": lambda s: s,
    "0d_int32": lambda s: [mx.array(v, mx.int32) for v in s],
    "0d_mixed": lambda s: [mx.array(v, (mx.int8, mx.int64, mx.int16)[i % 3])
                           for i, v in enumerate(s)],
    "1d_array": lambda s: mx.array(s, mx.int32),
    "numpy": lambda s: np.array(s, np.int64),
}


# ----------------------------------------------------------------------------
# Values
# ----------------------------------------------------------------------------


@pytest.mark.parametrize("form", sorted(START_FORMS))
@given(args=window_args())
def test_dynamic_slice_matches_numpy(form, args):
    x, starts, sizes = args
    if form == "1d_array" and not starts:
        starts_arg = mx.zeros((0,), mx.int32)
    else:
        starts_arg = START_FORMS[form](starts)
    close(dynamic_slice(mx.array(x), starts_arg, sizes), np_slice(x, starts, sizes))


@pytest.mark.parametrize("form", ["ints", "0d_mixed", "1d_array"])
@given(args=window_args(min_dims=1))
def test_dynamic_update_slice_matches_numpy(form, args):
    x, starts, sizes = args
    u = -1 - np.arange(int(np.prod(sizes)), dtype=np.int32).reshape(sizes)
    got = dynamic_update_slice(mx.array(x), mx.array(u), START_FORMS[form](starts))
    close(got, np_update(x, u, starts))


@given(args=window_args(min_dims=1), data=st.data())
def test_in_dim_functions_match_numpy(args, data):
    x, _, _ = args
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    d = x.shape[axis]
    start = data.draw(st.integers(-d - 3, d + 3))
    size = data.draw(st.integers(0, d))
    starts, sizes = [0] * x.ndim, list(x.shape)
    starts[axis], sizes[axis] = start, size
    xm = mx.array(x)
    close(dynamic_slice_in_dim(xm, mx.array(start), size, axis), np_slice(x, starts, sizes))
    u_shape = list(x.shape)
    u_shape[axis] = size
    u = -1 - np.arange(int(np.prod(u_shape)), dtype=np.int32).reshape(u_shape)
    close(dynamic_update_slice_in_dim(xm, mx.array(u), start, axis), np_update(x, u, starts))
    if d:
        sizes[axis] = 1
        row = np_slice(x, starts, sizes)
        close(dynamic_index_in_dim(xm, start, axis), row)
        close(dynamic_index_in_dim(xm, start, axis, keepdims=False), np.squeeze(row, axis))
        u1 = -np.ones(row.shape, np.int32)
        expected = np_update(x, u1, starts)
        close(dynamic_update_index_in_dim(xm, mx.array(u1), start, axis), expected)
        close(dynamic_update_index_in_dim(xm, mx.array(np.squeeze(u1, axis)), start, axis),
              expected)


def test_jax_documented_examples():
    # The examples of the jax.lax docs, clamping and negative starts included.
    x = mx.arange(12).reshape(3, 4)
    assert dynamic_slice(x, (1, 1), (2, 3)).tolist() == [[5, 6, 7], [9, 10, 11]]
    assert dynamic_slice(x, (1, 1), (2, 4)).tolist() == [[4, 5, 6, 7], [8, 9, 10, 11]]
    assert dynamic_slice_in_dim(mx.arange(5), 4, 3).tolist() == [2, 3, 4]
    assert dynamic_slice_in_dim(x, 1, 2, axis=1).tolist() == [[1, 2], [5, 6], [9, 10]]
    z, y = mx.zeros(6), mx.ones(3)
    for start, expected in ((2, [0, 0, 1, 1, 1, 0]), (3, [0, 0, 0, 1, 1, 1]),
                            (5, [0, 0, 0, 1, 1, 1])):
        assert dynamic_update_slice(z, y, (start,)).tolist() == expected
        assert dynamic_update_slice_in_dim(z, y, start, axis=0).tolist() == expected
    assert dynamic_update_index_in_dim(z, 1.0, 2, axis=0).tolist() == [0, 0, 1, 0, 0, 0]
    assert dynamic_update_index_in_dim(z, mx.array([1.0]), 10, 0).tolist() == [0] * 5 + [1]
    assert dynamic_update_index_in_dim(mx.zeros((4, 4)), mx.ones(4), 1, axis=0).tolist() == [
        [0] * 4, [1] * 4, [0] * 4, [0] * 4]


def test_negative_starts_count_from_the_end():
    x = mx.arange(5)
    assert dynamic_slice_in_dim(x, -2, 2).tolist() == [3, 4]
    assert dynamic_slice_in_dim(x, mx.array(-2), 2).tolist() == [3, 4]
    assert dynamic_slice_in_dim(x, -1, 3).tolist() == [2, 3, 4]  # wraps to 4, clamps to 2
    assert dynamic_slice_in_dim(x, -7, 2).tolist() == [0, 1]  # wraps once only
    assert dynamic_index_in_dim(x, -1, keepdims=False).item() == 4
    # allow_negative_indices=False: a negative start is out of range and clamps to 0.
    assert dynamic_slice_in_dim(x, -2, 2, allow_negative_indices=False).tolist() == [0, 1]
    assert dynamic_slice(mx.arange(12).reshape(3, 4), (mx.array(-1), -1), (1, 1),
                         allow_negative_indices=(False, True)).tolist() == [[3]]
    assert dynamic_update_slice(mx.zeros(4), mx.ones(1), (-1,)).tolist() == [0, 0, 0, 1]


@pytest.mark.parametrize("dtype", [mx.float16, mx.bfloat16, mx.int64, mx.uint8, mx.bool_])
def test_dtypes_are_kept(dtype):
    x = mx.arange(6).reshape(2, 3).astype(dtype)
    s = dynamic_slice(x, (mx.array(1, mx.uint32), 1), (1, 2))
    assert s.dtype == dtype and s.tolist() == x[1:, 1:].tolist()
    u = dynamic_update_slice(x, mx.zeros((1, 2), dtype), (mx.array(9, mx.uint64), 1))
    assert u.dtype == dtype and u.tolist() == mx.concatenate(
        [x[:, :1], mx.concatenate([x[:1, 1:], mx.zeros((1, 2), dtype)])], axis=1).tolist()


def test_wide_start_values_do_not_overflow():
    x = mx.arange(4)
    assert dynamic_slice(x, (mx.array(2**40, mx.int64),), (2,)).tolist() == [2, 3]
    assert dynamic_slice(x, (-(2**40),), (2,)).tolist() == [0, 1]
    assert dynamic_slice(x, (mx.array(127, mx.int8),), (1,)).tolist() == [3]
    assert dynamic_slice(x, (mx.array(np.array(2**63, np.uint64)),), (1,)).tolist() == [3]


def test_zero_dimensional_operand():
    x = mx.array(3.0)
    assert dynamic_slice(x, (), ()).item() == 3.0
    assert dynamic_update_slice(x, 5.0, []).item() == 5.0


# ----------------------------------------------------------------------------
# Transforms
# ----------------------------------------------------------------------------


def test_jit_with_traced_starts_does_not_retrace():
    x = mx.arange(20.0).reshape(4, 5)
    xn = np.array(x)
    f = ft.jit(lambda x, i, j: dynamic_slice(x, (i, j), (2, 3)))
    g = ft.jit(lambda x, u, i: dynamic_update_slice_in_dim(x, u, i, axis=1))
    u = -mx.ones((4, 2))
    for i, j in [(0, 0), (1, 2), (3, 4), (-1, -7), (9, -2)]:
        close(f(x, mx.array(i), mx.array(j)), np_slice(xn, [i, j], [2, 3]))
        close(f(x, mx.array(i), mx.array(j)), dynamic_slice(x, (i, j), (2, 3)))
        close(g(x, u, mx.array(j)), np_update(xn, np.array(u), [0, j]))
    assert f.trace_count == 1 and g.trace_count == 1


@given(args=window_args(min_dims=1), size=st.integers(1, 4), data=st.data())
def test_vmap_batched_starts_match_a_loop(args, size, data):
    x, starts, sizes = args
    xf = mx.array(x.astype(np.float32))
    # Per-example starts on some axes, shared ones on the others.
    batched = [data.draw(st.booleans()) for _ in starts]
    per_ex = [mx.array([s + k * b for k in range(size)]) if b else s
              for s, b in zip(starts, batched)]
    in_axes = tuple(0 if b else None for b in batched)

    def f(*s):
        return dynamic_slice(xf, s, sizes)

    if not any(batched):
        return
    got = ft.vmap(f, in_axes=in_axes)(*per_ex)
    loop = [np_slice(x, [s[k].item() if b else s for s, b in zip(per_ex, batched)], sizes)
            for k in range(size)]
    close(got, np.stack(loop).astype(np.float32))

    u = mx.array(-1.0 - np.arange(size * int(np.prod(sizes))).reshape((size, *sizes)))
    got = ft.vmap(lambda u, *s: dynamic_update_slice(xf, u, s), in_axes=(0, *in_axes))(
        u, *per_ex)
    loop = [np_update(x.astype(np.float32), np.array(u[k]),
                      [s[k].item() if b else s for s, b in zip(per_ex, batched)])
            for k in range(size)]
    close(got, np.stack(loop))


def test_vmap_batched_operand_shared_start():
    xs = mx.arange(24.0).reshape(2, 3, 4)
    got = ft.vmap(lambda x: dynamic_slice_in_dim(x, 2, 2, axis=1), in_axes=1)(xs)
    close(got, np.stack([np.array(xs)[:, k, 2:4] for k in range(3)]))


def test_grad_through_traced_start():
    x = mx.arange(12.0).reshape(3, 4)

    def loss(x, i):
        return fnp.sum(dynamic_slice(x, (i, mx.array(1)), (2, 2)) ** 2)

    for i in (0, 1, 5, -1):
        expected = np.zeros((3, 4), np.float32)
        r = np_starts([i], [3], [2])[0]
        expected[r:r + 2, 1:3] = 2 * np.array(x)[r:r + 2, 1:3]
        close(ft.grad(loss)(x, mx.array(i)), expected)
        close(ft.jit(ft.grad(loss))(x, mx.array(i)), expected)
    # Through an update: the overwritten window gets no gradient.
    gx, gu = ft.grad(lambda x, u: fnp.sum(dynamic_update_slice(x, u, (mx.array(2),)) * 3.0),
                     argnums=(0, 1))(mx.ones(5), mx.ones(2))
    assert gx.tolist() == [3, 3, 0, 0, 3] and gu.tolist() == [3, 3]


# ----------------------------------------------------------------------------
# select
# ----------------------------------------------------------------------------


@given(data=st.data())
def test_select_matches_numpy(data):
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4))
    pred = data.draw(hnp.arrays(np.bool_, shape))
    a = data.draw(hnp.arrays(np.float32, shape, elements=st.floats(-5, 5, width=32)))
    b = data.draw(hnp.arrays(np.float32, shape, elements=st.floats(-5, 5, width=32)))
    close(select(mx.array(pred), mx.array(a), mx.array(b)), np.where(pred, a, b))
    scalar = data.draw(st.booleans())
    close(select(mx.array(scalar), mx.array(a), mx.array(b)), a if scalar else b)


def test_select_scalars_grad_and_vmap():
    assert select(True, 1.0, mx.array(2.0, mx.float16)).dtype == mx.float16
    assert select(mx.array(False), mx.array(1), 7).item() == 7  # as JAX: no broadcasting
    pred = mx.array([True, False, True])
    g = ft.grad(lambda a, b: fnp.sum(select(pred, a, b) * mx.array([1.0, 2.0, 3.0])),
                argnums=(0, 1))(mx.ones(3), mx.ones(3))
    assert g[0].tolist() == [1, 0, 3] and g[1].tolist() == [0, 2, 0]
    out = ft.vmap(lambda p, a: select(p, a, -a))(mx.array([True, False]), mx.ones((2, 2)))
    assert out.tolist() == [[1, 1], [-1, -1]]


@pytest.mark.parametrize("args, error, match", [
    ((mx.array([1, 0]), mx.ones(2), mx.zeros(2)), TypeError, "pred must be a boolean"),
    ((mx.array([True]), mx.ones(2), mx.zeros(2)), ValueError, "pred must be a scalar or"),
    ((True, mx.ones(2), mx.zeros(3)), ValueError, "same shape"),
    ((True, mx.ones(2), mx.zeros((1, 2))), ValueError, "same shape"),
    ((True, mx.ones(2), 0.0), ValueError, "same shape"),
    ((True, mx.ones(2), mx.zeros(2, mx.int32)), TypeError, "same dtype"),
    ((True, mx.ones(2), mx.zeros(2, mx.float16)), TypeError, "same dtype"),
])
def test_select_errors(args, error, match):
    with pytest.raises(error, match=match):
        select(*args)


# ----------------------------------------------------------------------------
# Errors
# ----------------------------------------------------------------------------

X = mx.zeros((3, 4))


@pytest.mark.parametrize("call, error, match", [
    (lambda: dynamic_slice(X, (0,), (1, 1)), ValueError, "start_indices has 1 entries"),
    (lambda: dynamic_slice(X, mx.array([0, 0, 0]), (1, 1)), ValueError,
     "start_indices has 3 entries"),
    (lambda: dynamic_slice(X, 0, (1, 1)), TypeError, "start_indices must be a sequence"),
    (lambda: dynamic_slice(X, mx.zeros((2, 1), mx.int32), (1, 1)), ValueError,
     "start_indices must be a sequence of scalars or a 1-d array"),
    (lambda: dynamic_slice(X, (0, 1.5), (1, 1)), TypeError,
     r"start_indices\[1\] must be an integer"),
    (lambda: dynamic_slice(X, (0, True), (1, 1)), TypeError,
     r"start_indices\[1\] must be an integer"),
    (lambda: dynamic_slice(X, (mx.array(0.0), 0), (1, 1)), TypeError,
     r"start_indices\[0\] must be an integer, got dtype"),
    (lambda: dynamic_slice(X, mx.array([0.0, 1.0]), (1, 1)), TypeError,
     "start_indices must be integers"),
    (lambda: dynamic_slice(X, (mx.array([0]), 0), (1, 1)), ValueError,
     r"start_indices\[0\] must be a scalar"),
    (lambda: dynamic_slice(X, (0, 0), (1,)), ValueError, "slice_sizes has 1 entries"),
    (lambda: dynamic_slice(X, (0, 0), (1, 5)), ValueError, r"slice_sizes\[1\] = 5"),
    (lambda: dynamic_slice(X, (0, 0), (-1, 1)), ValueError, r"slice_sizes\[0\] = -1"),
    (lambda: dynamic_slice(X, (0, 0), (1, 1.5)), TypeError, r"slice_sizes\[1\] must be an int"),
    (lambda: dynamic_slice(X, (0, 0), 2), TypeError, "slice_sizes must be a sequence"),
    (lambda: dynamic_slice(X, (0, 0), (1, 1), allow_negative_indices=(True,)), ValueError,
     "allow_negative_indices has 1 entries"),
    (lambda: dynamic_update_slice(X, mx.ones(2), (0, 0)), ValueError,
     "update must have operand's ndim 2"),
    (lambda: dynamic_update_slice(X, mx.ones((4, 1)), (0, 0)), ValueError,
     r"update \(shape \(4, 1\)\) is larger than operand"),
    (lambda: dynamic_update_slice(X, mx.ones((1, 1), mx.int32), (0, 0)), TypeError,
     "update must have operand's dtype"),
    (lambda: dynamic_update_slice(X, mx.ones((1, 1)), (0,)), ValueError,
     "start_indices has 1 entries"),
    (lambda: dynamic_update_slice(X, mx.ones((1, 1)), (0, 0.5)), TypeError,
     r"start_indices\[1\] must be an integer"),
    (lambda: dynamic_slice_in_dim(X, 0, 5, axis=1), ValueError, r"slice_sizes\[1\] = 5"),
    (lambda: dynamic_slice_in_dim(X, 0, 1, axis=2), ValueError, "axis 2 is out of range"),
    (lambda: dynamic_slice_in_dim(X, 0.5, 1), TypeError, r"start_indices\[0\] must be an int"),
    (lambda: dynamic_index_in_dim(X, 0, axis=-3), ValueError, "axis -3 is out of range"),
    (lambda: dynamic_update_slice_in_dim(X, mx.ones((3,)), 0, axis=1), ValueError,
     "update must have operand's ndim"),
    (lambda: dynamic_update_index_in_dim(X, mx.ones((2, 2, 2)), 0, axis=0), ValueError,
     "update must have operand's ndim"),
    (lambda: dynamic_update_index_in_dim(X, mx.ones(3, mx.int32), 0, axis=1), TypeError,
     "update must have operand's dtype"),
])
def test_errors_name_the_argument(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_traced_slice_size_under_jit_is_an_error():
    f = ft.jit(lambda x, n: dynamic_slice(x, (0, 0), (n, 1)))
    with pytest.raises(Exception, match=r"slice_sizes\[0\]"):
        f(X, mx.array(2))
