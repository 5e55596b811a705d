"""Reductions and scans: values against NumPy, ties, zeros, -inf, large
inputs, integer inputs, Tracer methods and error messages; ``where=`` and
``initial=``, and the NaN-ignoring reductions."""

import itertools
import math
import warnings

import mlx.core as mx
import numpy as np
import pytest
from cases_reduction import axis_choice, reduced_count
from harness import (
    check_jvp_fd,
    check_second_order,
    check_vjp_dot,
    check_vmap,
    distinct,
    floats,
    shapes,
)
from harness import close as _close
from hypothesis import given
from hypothesis import strategies as st

import ftorch as ft
import ftorch.numpy as fnp

_np = np.array


@st.composite
def reduce_draw(draw, min_side=1, min_dims=0, tuples=True, fix=None):
    x = draw(floats(shapes(min_dims=min_dims, min_side=min_side), -3.0, 3.0))
    if fix is not None:
        x = fix(x)
    axis = draw(axis_choice(x.ndim, tuples=tuples))
    return x.astype(np.float32), axis, draw(st.booleans())


# ----------------------------------------------------------------------------
# Forward values against NumPy
# ----------------------------------------------------------------------------

SIMPLE = [
    ("sum", np.sum), ("mean", np.mean), ("prod", np.prod), ("max", np.max),
    ("min", np.min), ("amax", np.amax), ("amin", np.amin),
]


@pytest.mark.parametrize("name,np_fn", SIMPLE, ids=[n for n, _ in SIMPLE])
@given(args=reduce_draw())
def test_reductions_match_numpy(name, np_fn, args):
    x, axis, keepdims = args
    got = getattr(fnp, name)(mx.array(x), axis=axis, keepdims=keepdims)
    assert isinstance(got, mx.array)
    _close(got, np_fn(x.astype(np.float64), axis=axis, keepdims=keepdims), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", ["var", "std"])
@given(args=reduce_draw(), ddof=st.integers(0, 1))
def test_var_std_match_numpy(name, args, ddof):
    x, axis, keepdims = args
    if reduced_count(x.shape, axis) <= ddof:
        ddof = 0
    got = getattr(fnp, name)(mx.array(x), axis=axis, keepdims=keepdims, ddof=ddof)
    expected = getattr(np, name)(x.astype(np.float64), axis=axis, keepdims=keepdims, ddof=ddof)
    _close(got, expected, rtol=1e-4, atol=1e-5)


def _np_logsumexp(x, axis, keepdims):
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    if not keepdims:
        out = np.squeeze(out, axis=axis) if axis != () else out
    return out


@given(args=reduce_draw())
def test_logsumexp_matches_numpy(args):
    x, axis, keepdims = args
    got = fnp.logsumexp(mx.array(x), axis=axis, keepdims=keepdims)
    _close(got, _np_logsumexp(x.astype(np.float64), axis, keepdims), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", ["all", "any"])
@given(args=reduce_draw())
def test_all_any_match_numpy(name, args):
    x, axis, keepdims = args
    b = x > 0.5
    got = getattr(fnp, name)(mx.array(b), axis=axis, keepdims=keepdims)
    assert got.dtype == mx.bool_
    np.testing.assert_array_equal(_np(got), getattr(np, name)(b, axis=axis, keepdims=keepdims))
    # Nonzero numbers count as true.
    got = getattr(fnp, name)(mx.array(x), axis=axis, keepdims=keepdims)
    np.testing.assert_array_equal(_np(got), getattr(np, name)(x, axis=axis, keepdims=keepdims))


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@given(args=reduce_draw(tuples=False, fix=distinct))
def test_argmax_argmin_match_numpy(name, args):
    x, axis, keepdims = args
    got = getattr(fnp, name)(mx.array(x), axis=axis, keepdims=keepdims)
    expected = getattr(np, name)(x, axis=axis, keepdims=keepdims)
    np.testing.assert_array_equal(_np(got), expected)
    assert _np(got).shape == np.shape(expected)


def test_argmax_argmin_take_the_first_tie():
    x = mx.array([[1.0, 3.0, 3.0], [0.0, 0.0, -1.0]])
    assert fnp.argmax(x, axis=1).tolist() == [1, 0]
    assert fnp.argmin(x, axis=1).tolist() == [0, 2]
    assert fnp.argmax(mx.array([2.0, 2.0])).item() == 0


def _np_scan(x, axis, reverse, inclusive, accumulate, identity):
    if axis is None:
        x, axis = x.ravel(), 0
    if reverse:
        x = np.flip(x, axis)
    y = accumulate(x, axis=axis)
    if not inclusive:
        pad = np.full_like(np.take(y, [0], axis=axis), identity)
        y = np.concatenate([pad, np.take(y, range(y.shape[axis] - 1), axis=axis)], axis=axis)
    return np.flip(y, axis) if reverse else y


@st.composite
def scan_draw(draw, zeros=False):
    x = draw(floats(shapes(max_side=5), -1.5, 1.5))
    if zeros and x.size:
        x = np.where(np.array(draw(st.lists(st.booleans(), min_size=x.size, max_size=x.size)))
                     .reshape(x.shape), 0.0, x)
    axis = draw(axis_choice(x.ndim, tuples=False))
    return x, axis, draw(st.booleans()), draw(st.booleans())


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
@given(args=scan_draw())
def test_scans_match_numpy(name, args):
    x, axis, reverse, inclusive = args
    accumulate, identity = (np.cumsum, 0.0) if name == "cumsum" else (np.cumprod, 1.0)
    got = getattr(fnp, name)(mx.array(x.astype(np.float32)), axis=axis, reverse=reverse,
                             inclusive=inclusive)
    _close(got, _np_scan(x, axis, reverse, inclusive, accumulate, identity), atol=1e-5)


def test_inputs_may_be_numpy_lists_and_scalars():
    assert fnp.sum(np.array([1.0, 2.0])).item() == 3.0
    assert fnp.max([1.0, 5.0, 2.0]).item() == 5.0
    assert fnp.mean(4.0).item() == 4.0
    assert fnp.cumsum(3.0).tolist() == [3.0]  # a 0-d array scans as shape (1,)
    assert isinstance(fnp.prod(np.ones(3)), mx.array)


def test_integer_and_boolean_inputs_follow_mlx_dtypes():
    i = mx.array([[1, 2], [3, 4]])
    assert fnp.sum(i).dtype == mx.sum(i).dtype
    assert fnp.mean(i).dtype == mx.float32 and fnp.mean(i).item() == 2.5
    assert fnp.var(i).dtype == mx.float32
    assert fnp.prod(i, axis=0).tolist() == [3, 8]
    assert fnp.sum(mx.array([True, True, False])).item() == 2
    assert fnp.argmax(i).dtype == mx.uint32


def test_size_one_and_empty_edges():
    one = mx.array([[7.0]])
    for name in ("sum", "mean", "prod", "max", "min", "logsumexp"):
        assert getattr(fnp, name)(one, axis=(0, 1)).item() == pytest.approx(7.0)
    assert fnp.var(one).item() == 0.0
    empty = mx.zeros((2, 0))
    assert fnp.sum(empty, axis=1).tolist() == [0.0, 0.0]
    assert fnp.prod(empty, axis=1).tolist() == [1.0, 1.0]
    assert fnp.max(empty, axis=0).shape == (0,)
    assert fnp.all(empty).item() is True and fnp.any(empty).item() is False
    assert fnp.logsumexp(empty, axis=1).tolist() == [-math.inf, -math.inf]
    assert fnp.logsumexp(empty, axis=0, keepdims=True).shape == (1, 0)
    assert fnp.argmax(empty, axis=0).shape == (0,)
    assert fnp.cumsum(empty, axis=1).shape == (2, 0)
    assert fnp.cumprod(empty).shape == (0,)
    assert fnp.sum(mx.ones((2, 3)), axis=()).shape == (2, 3)
    assert fnp.argmax(mx.array(3.0), keepdims=True).item() == 0


# ----------------------------------------------------------------------------
# max / min: ties share the gradient
# ----------------------------------------------------------------------------


def test_max_min_ties_share_the_gradient_equally():
    x = mx.array([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 2.0, 2.0]])
    g = ft.grad(lambda x: fnp.max(x, axis=1).sum())(x)
    _close(g, [[0, 0.5, 0.5, 0], [0.25, 0.25, 0.25, 0.25]])
    g = ft.grad(lambda x: fnp.min(x, axis=1).sum())(x)
    _close(g, [[0, 0, 0, 1], [0.25, 0.25, 0.25, 0.25]])
    # Over several axes, one tie group per output.
    g = ft.grad(fnp.max)(x)
    _close(g, [[0, 0.5, 0.5, 0], [0, 0, 0, 0]])
    # Forward mode gives the mean of the tied tangents.
    _, t = ft.jvp(lambda x: fnp.max(x, axis=-1, keepdims=True), (x,),
                  (mx.array([[9.0, 1.0, 3.0, 9.0], [1.0, 2.0, 3.0, 6.0]]),))
    _close(t, [[2.0], [3.0]])


@given(x=floats(shapes(min_dims=1, max_side=3), -2.0, 2.0).map(np.round))
def test_max_tie_gradient_matches_counting(x):
    # Rounded values tie often; each tied maximum gets 1/count.
    g = ft.grad(lambda v: fnp.max(v, axis=0).sum())(mx.array(x.astype(np.float32)))
    m = x.max(axis=0, keepdims=True)
    expected = (x == m) / (x == m).sum(axis=0, keepdims=True)
    _close(g, expected)


def test_max_second_order_with_ties_is_zero():
    h = ft.hessian(lambda x: fnp.max(x))(mx.array([1.0, 2.0, 2.0]))
    _close(h, np.zeros((3, 3)))


# ----------------------------------------------------------------------------
# prod / cumprod: exact with zeros
# ----------------------------------------------------------------------------


def _loop_prod_grad(x):
    flat = x.ravel()
    g = np.empty_like(flat)
    for i in range(flat.size):
        p = 1.0
        for j in range(flat.size):
            if j != i:
                p *= flat[j]
        g[i] = p
    return g.reshape(x.shape)


def _loop_prod_hessian(x):
    flat = x.ravel()
    n = flat.size
    h = np.zeros((n, n))
    for i, j in itertools.product(range(n), range(n)):
        if i != j:
            h[i, j] = np.prod([flat[k] for k in range(n) if k not in (i, j)])
    return h


ZERO_INPUTS = {
    "one_zero": [2.0, -1.5, 0.0, 3.0],
    "two_zeros": [0.0, 2.0, 0.0, 1.5],
    "all_zeros": [0.0, 0.0, 0.0],
    "no_zero": [1.5, -2.0, 0.5],
}


@pytest.mark.parametrize("values", ZERO_INPUTS.values(), ids=ZERO_INPUTS.keys())
def test_prod_gradient_and_hessian_exact_with_zeros(values):
    x = np.array(values)
    xm = mx.array(x, dtype=mx.float64)
    g = ft.grad(fnp.prod)(xm)
    _close(g, _loop_prod_grad(x), rtol=1e-12, atol=0)
    _, t = ft.jvp(fnp.prod, (xm,), (mx.ones_like(xm),))
    _close(t, _loop_prod_grad(x).sum(), rtol=1e-12, atol=1e-12)
    _close(ft.hessian(fnp.prod)(xm), _loop_prod_hessian(x), rtol=1e-12, atol=0)
    # Central finite differences (prod is a polynomial, so they are exact-ish).
    eps = 1e-6
    fd = [(np.prod(x + eps * e) - np.prod(x - eps * e)) / (2 * eps) for e in np.eye(x.size)]
    _close(g, fd, rtol=1e-6, atol=1e-9)


def test_prod_gradient_with_zeros_over_axes():
    x = np.array([[[0.0, 2.0], [3.0, 0.5]], [[1.5, 0.0], [0.0, -2.0]], [[1.0, 2.0], [3.0, 4.0]]])
    xm = mx.array(x, dtype=mx.float64)
    for axes in [(0,), (1,), (2,), (0, 1), (0, 2), (1, 2), (0, 1, 2), (-1, 0)]:
        g = ft.grad(lambda v: fnp.prod(v, axis=axes).sum())(xm)
        moved = np.moveaxis(x, [a % 3 for a in axes], range(len(axes)))
        lead = moved.shape[:len(axes)]
        rest = moved.reshape(math.prod(lead), -1)
        expected = np.stack([_loop_prod_grad(rest[:, k]) for k in range(rest.shape[1])], -1)
        expected = np.moveaxis(expected.reshape(moved.shape), range(len(axes)),
                               [a % 3 for a in axes])
        _close(g, expected, rtol=1e-12, atol=0)


def _loop_cumprod_jacobian(x, reverse, inclusive):
    n = x.size
    jac = np.zeros((n, n))
    for i, k in itertools.product(range(n), range(n)):
        window = range(k, n) if reverse else range(0, k + 1)
        if not inclusive:
            window = [j for j in window if j != k]
        if i in window:
            jac[k, i] = np.prod([x[j] for j in window if j != i])
    return jac


@pytest.mark.parametrize("values", ZERO_INPUTS.values(), ids=ZERO_INPUTS.keys())
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("inclusive", [True, False])
def test_cumprod_jacobian_exact_with_zeros(values, reverse, inclusive):
    x = np.array(values)
    xm = mx.array(x, dtype=mx.float64)

    def f(v):
        return fnp.cumprod(v, reverse=reverse, inclusive=inclusive)

    expected = _loop_cumprod_jacobian(x, reverse, inclusive)
    _close(ft.jacrev(f)(xm), expected, rtol=1e-12, atol=0)
    _close(ft.jacfwd(f)(xm), expected, rtol=1e-12, atol=0)
    eps = 1e-6
    fd = np.stack([(_np(f(mx.array(x + eps * e, dtype=mx.float64)))
                    - _np(f(mx.array(x - eps * e, dtype=mx.float64)))) / (2 * eps)
                   for e in np.eye(x.size)], -1)
    _close(expected, fd, rtol=1e-6, atol=1e-9)


def test_cumprod_second_order_with_zeros():
    x = np.array([2.0, 0.0, 3.0, 0.0, 1.5])
    w = np.array([1.0, -2.0, 0.5, 3.0, 1.0])

    def f(v):
        return (fnp.cumprod(v) * mx.array(w)).sum()

    h = _np(ft.hessian(f)(mx.array(x)))
    expected = np.zeros((5, 5))
    for i, j in itertools.product(range(5), range(5)):
        if i != j:
            expected[i, j] = sum(w[k] * np.prod([x[m] for m in range(k + 1) if m not in (i, j)])
                                 for k in range(max(i, j), 5))
    _close(h, expected, rtol=1e-12, atol=0)


def test_cumsum_gradient_is_a_reverse_cumsum():
    w = mx.array([1.0, 2.0, 3.0, 4.0])
    g = ft.grad(lambda x: (fnp.cumsum(x) * w).sum())(mx.zeros(4))
    _close(g, [10.0, 9.0, 7.0, 4.0])
    g = ft.grad(lambda x: (fnp.cumsum(x, reverse=True, inclusive=False) * w).sum())(mx.zeros(4))
    _close(g, [0.0, 1.0, 3.0, 6.0])
    x = mx.ones((2, 3))
    g = ft.grad(lambda x: (fnp.cumsum(x) * fnp.arange(6.0)).sum())(x)
    _close(g, np.cumsum(np.arange(6.0)[::-1])[::-1].reshape(2, 3))


# ----------------------------------------------------------------------------
# logsumexp: stability and -inf
# ----------------------------------------------------------------------------


def test_logsumexp_large_inputs_stay_finite():
    x = mx.array([[1000.0, 1000.0], [-1000.0, -1001.0]])
    out = fnp.logsumexp(x, axis=1)
    _close(out, [1000.0 + math.log(2.0), -1000.0 + math.log1p(math.exp(-1.0))], rtol=1e-6)
    g = ft.grad(lambda v: fnp.logsumexp(v, axis=1).sum())(x)
    assert np.isfinite(_np(g)).all()
    _close(g, [[0.5, 0.5], [1 / (1 + math.exp(-1)), 1 / (1 + math.exp(1))]])


def test_logsumexp_of_minus_inf_slices():
    ninf = -math.inf
    x = mx.array([[ninf, ninf, ninf], [0.0, ninf, 0.0]])
    out = fnp.logsumexp(x, axis=1)
    assert _np(out)[0] == ninf
    _close(_np(out)[1], math.log(2.0))
    g = ft.grad(lambda v: fnp.logsumexp(v, axis=1).sum())(x)
    _close(g, [[0.0, 0.0, 0.0], [0.5, 0.0, 0.5]])
    _, t = ft.jvp(lambda v: fnp.logsumexp(v, axis=1), (x,), (mx.ones_like(x),))
    _close(t, [0.0, 1.0])
    # Second order through the -inf slice stays free of nan.
    h = ft.grad(lambda v: ft.grad(lambda u: fnp.logsumexp(u))(v).sum())(
        mx.array([ninf, ninf]))
    assert not np.isnan(_np(h)).any()


def test_logsumexp_keepdims_and_tuple_axes_gradient():
    x = np.random.default_rng(0).standard_normal((2, 3, 4))
    g = ft.grad(lambda v: fnp.logsumexp(v, axis=(0, -1), keepdims=True).sum())(
        mx.array(x, dtype=mx.float64))
    e = np.exp(x - x.max(axis=(0, 2), keepdims=True))
    _close(g, e / e.sum(axis=(0, 2), keepdims=True), rtol=1e-6)


# ----------------------------------------------------------------------------
# var / std
# ----------------------------------------------------------------------------


def test_var_gradient_is_accurate_with_a_large_offset():
    rng = np.random.default_rng(1)
    x = (1e4 + rng.standard_normal(6)).astype(np.float32)
    g = ft.grad(lambda v: fnp.var(v, ddof=1))(mx.array(x))
    x64 = x.astype(np.float64)
    _close(g, 2 * (x64 - x64.mean()) / 5, rtol=1e-3, atol=1e-3)


def test_std_gradient_and_constant_slices():
    x = mx.array([[1.0, 3.0], [2.0, 2.0]])
    g = ft.grad(lambda v: fnp.std(v, axis=1).sum())(x)
    _close(g, [[-0.5, 0.5], [0.0, 0.0]])
    g = ft.grad(lambda v: fnp.std(v, axis=1, ddof=1).sum())(x)
    s = math.sqrt(2.0)
    _close(g, [[-1 / s, 1 / s], [0.0, 0.0]])


def test_mean_gradient():
    g = ft.grad(lambda v: fnp.mean(v, axis=0).sum())(mx.ones((4, 2)))
    _close(g, np.full((4, 2), 0.25))


# ----------------------------------------------------------------------------
# Integer parts of a traced computation, Tracer methods
# ----------------------------------------------------------------------------


def test_integer_intermediates_carry_no_gradient():
    def f(x):
        i = fnp.astype(x, mx.int32)
        return (fnp.mean(i) + fnp.sum(i) + fnp.var(i) + fnp.std(i) + fnp.logsumexp(i)
                + fnp.prod(i) + fnp.max(i) + fnp.cumsum(i).sum() + fnp.cumprod(i).sum()
                + fnp.sum(x))

    _close(ft.grad(f)(mx.array([1.5, 2.5])), [1.0, 1.0])


def test_tracer_methods_dispatch_like_mx_array():
    x = mx.array([[1.0, 4.0, 2.0], [3.0, 0.5, 2.5]])
    calls = {
        "sum": ((0,), {}), "mean": ((1, True), {}), "prod": ((), {}), "max": ((0,), {}),
        "min": ((-1, True), {}), "argmax": ((1,), {}), "argmin": ((None, False), {}),
        "var": ((1, False, 1), {}), "std": ((0,), {"ddof": 1}),
        "cumsum": ((1,), {"reverse": True}), "cumprod": ((0,), {"inclusive": False}),
        "logsumexp": (((0, 1),), {}),
    }
    seen = {}

    def f(v):
        for name, (args, kw) in calls.items():
            seen[name] = getattr(v, name)(*args, **kw).tolist()
        seen["all"] = (v > 0).all(1).tolist()
        seen["any"] = (v > 3).any().tolist()
        return v.sum()

    ft.grad(f)(x)
    for name, (args, kw) in calls.items():
        mx_args = tuple(list(a) if isinstance(a, tuple) else a for a in args)
        np.testing.assert_allclose(seen[name], getattr(x, name)(*mx_args, **kw).tolist(),
                                   rtol=1e-6, err_msg=name)
    assert seen["all"] == [True, True] and seen["any"] is True


# ----------------------------------------------------------------------------
# Errors
# ----------------------------------------------------------------------------

REDUCERS = ["sum", "mean", "prod", "max", "min", "all", "any", "var", "std", "logsumexp"]


@pytest.mark.parametrize("name", REDUCERS)
def test_axis_errors_name_the_axis(name):
    f = getattr(fnp, name)
    x = mx.ones((2, 3))
    with pytest.raises(ValueError, match=rf"{name}: axis 2 is out of range .* ndim 2"):
        f(x, axis=2)
    with pytest.raises(ValueError, match=rf"{name}: axis -3 is out of range"):
        f(x, axis=(0, -3))
    with pytest.raises(ValueError, match=rf"{name}: repeated axis in \(1, -1\)"):
        f(x, axis=(1, -1))
    with pytest.raises(TypeError, match=rf"{name}: axis must be an int"):
        f(x, axis=1.0)
    with pytest.raises(TypeError, match=rf"{name}: axis must be an int"):
        f(x, axis=(0, "1"))


@pytest.mark.parametrize("name", ["argmax", "argmin", "cumsum", "cumprod"])
def test_single_axis_errors(name):
    f = getattr(fnp, name)
    x = mx.ones((2, 3))
    with pytest.raises(ValueError, match=rf"{name}: axis -3 is out of range .* ndim 2"):
        f(x, axis=-3)
    with pytest.raises(TypeError, match=rf"{name}: axis must be an int or None"):
        f(x, axis=(0, 1))
    with pytest.raises(TypeError, match=rf"{name}: axis must be an int"):
        f(x, axis=True)
    with pytest.raises(ValueError, match=rf"{name}: axis 0 is out of range .* ndim 0"):
        f(mx.array(1.0), axis=0)


@pytest.mark.parametrize("name", ["max", "min", "amax", "amin"])
def test_max_min_of_nothing(name):
    f = getattr(fnp, name)
    with pytest.raises(ValueError, match=r"cannot reduce over axis 1 of size 0"):
        f(mx.zeros((2, 0)), axis=1)
    with pytest.raises(ValueError, match=r"cannot reduce over axis 0 of size 0"):
        f(mx.zeros((0,)))


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_argmax_of_nothing(name):
    with pytest.raises(ValueError, match=rf"{name}: cannot take the {name} over an empty array"):
        getattr(fnp, name)(mx.zeros((0, 2)))
    with pytest.raises(ValueError, match=rf"{name}: .* over axis 1 of size 0"):
        getattr(fnp, name)(mx.zeros((2, 0)), axis=-1)


@pytest.mark.parametrize("name", ["var", "std"])
def test_ddof_must_be_an_int(name):
    with pytest.raises(TypeError, match=rf"{name}: ddof must be an int, got 0.5"):
        getattr(fnp, name)(mx.ones(3), ddof=0.5)


def test_ddof_accepts_numpy_ints_and_axes_numpy_ints():
    x = mx.array([1.0, 2.0, 4.0])
    assert fnp.var(x, ddof=np.int64(1)).item() == pytest.approx(np.var([1, 2, 4], ddof=1))
    assert fnp.sum(mx.ones((2, 3)), axis=np.int64(1)).tolist() == [3.0, 3.0]


# ----------------------------------------------------------------------------
# where= and initial=
# ----------------------------------------------------------------------------


def _mx64(x):
    return mx.array(x, dtype=mx.float64) if x.dtype == np.float64 else mx.array(x)


@st.composite
def masked_draw(draw, nans=False):
    """float64 data (with NaNs when ``nans``), an axis, keepdims, and a boolean
    mask whose shape broadcasts to the data's."""
    x = draw(floats(shapes(min_dims=0, min_side=1), -3.0, 3.0))
    if nans and x.size:
        hole = draw(st.lists(st.booleans(), min_size=x.size, max_size=x.size))
        x = np.where(np.array(hole).reshape(x.shape), np.nan, x)
    axis = draw(axis_choice(x.ndim))
    # The mask may drop leading axes or be broadcast along some.
    drop = draw(st.integers(0, x.ndim))
    mshape = tuple(1 if draw(st.booleans()) else d for d in x.shape[drop:])
    mask = np.array(draw(st.lists(st.booleans(), min_size=int(np.prod(mshape)),
                                  max_size=int(np.prod(mshape)))), bool).reshape(mshape)
    return x, axis, draw(st.booleans()), mask


def _close_nan(got, expected, rtol=1e-9, atol=1e-9):
    got, expected = np.array(got), np.asarray(expected)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True)


@pytest.mark.parametrize("name", ["sum", "prod", "mean", "var", "std", "all", "any"])
@given(args=masked_draw())
def test_where_matches_numpy(name, args):
    x, axis, keepdims, mask = args
    if name in ("all", "any"):
        x = x > 0
    kw = dict(axis=axis, keepdims=keepdims)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = getattr(np, name)(x, where=mask, **kw)
    if name in ("var", "std"):  # NumPy gives inf for no degrees of freedom; JAX and we NaN
        expected = np.where(np.isinf(expected), np.nan, expected)
    _close_nan(getattr(fnp, name)(_mx64(x), where=mx.array(mask), **kw), expected)


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min"])
@given(args=masked_draw(), initial=st.floats(-2, 2), use_mask=st.booleans())
def test_initial_matches_numpy(name, args, initial, use_mask):
    x, axis, keepdims, mask = args
    kw = dict(axis=axis, keepdims=keepdims, initial=initial)
    if use_mask:
        kw["where"] = mask
    expected = getattr(np, name)(x, **kw)
    if use_mask:
        kw["where"] = mx.array(mask)
    _close_nan(getattr(fnp, name)(_mx64(x), **kw), expected)


def test_where_and_initial_edges():
    x = mx.array([[1.0, 5.0], [2.0, 3.0]])
    none = mx.zeros((2, 2), mx.bool_)
    assert fnp.sum(x, where=none).item() == 0.0
    assert fnp.prod(x, axis=1, where=none).tolist() == [1.0, 1.0]
    assert np.isnan(fnp.mean(x, where=none).item())
    assert fnp.all(x, where=none).item() and not fnp.any(x, where=none).item()
    # Empty axes: max and min take initial; mean is NaN.
    assert fnp.max(mx.zeros((2, 0)), axis=1, initial=-1.0).tolist() == [-1.0, -1.0]
    assert fnp.min(mx.zeros((0, 3)), axis=0, keepdims=True, initial=4).tolist() == [[4, 4, 4]]
    assert np.isnan(fnp.mean(mx.zeros((0,)))).all()
    # The initial takes part even when every element is selected; ints keep their dtype.
    assert fnp.max(mx.array([1, 2], mx.int32), initial=7).item() == 7
    assert fnp.max(mx.array([1, 2], mx.int32), initial=7).dtype == mx.int32
    assert fnp.min(mx.array([3, 9], mx.int8), where=mx.array([False, True]),
                   initial=100).item() == 9
    assert fnp.sum(mx.array([True, True]), where=mx.array([True, False]), initial=3).item() == 4
    # A traced initial is differentiable.
    g = ft.grad(lambda c: fnp.max(mx.array([1.0, 2.0]), initial=c))(mx.array(5.0))
    assert g.item() == 1.0
    g = ft.grad(lambda c: fnp.sum(mx.array([1.0, 2.0]), initial=c))(mx.array(5.0))
    assert g.item() == 1.0


def test_var_without_degrees_of_freedom_is_nan():
    x = mx.array([1.0, 2.0])
    for name in ("var", "std"):
        for ddof in (2, 3):
            assert np.isnan(getattr(fnp, name)(x, ddof=ddof).item())
        g = ft.grad(lambda v, name=name: getattr(fnp, name)(v, ddof=2))(x)
        assert g.tolist() == [0.0, 0.0]
    assert np.isnan(fnp.var(x, where=mx.array([True, False]), ddof=1).item())


@given(args=masked_draw())
def test_masked_gradients_match_finite_differences(args):
    x, axis, keepdims, mask = args
    m = mx.array(mask)
    args64 = (mx.array(x, dtype=mx.float64),)
    fns = [lambda v: fnp.sum(v, axis, keepdims, where=m) * v.sum(),
           lambda v: fnp.prod(v, axis, keepdims, where=m, initial=1.5)]
    if (np.sum(np.broadcast_to(mask, x.shape), axis=axis) > 0).all():  # else a NaN mean
        fns.append(lambda v: fnp.mean(v * v, axis, keepdims, where=m))
    for fn in fns:
        check_jvp_fd(fn, args64)
        check_vjp_dot(fn, args64)


def test_masked_out_infinities_and_nans_get_zero_gradient():
    x = mx.array([1.0, np.inf, 3.0, np.nan], dtype=mx.float64)
    keep = mx.array([True, False, True, False])
    for name, expected in [("sum", [1, 0, 1, 0]), ("mean", [0.5, 0, 0.5, 0]),
                           ("var", [-1, 0, 1, 0]), ("std", [-0.5, 0, 0.5, 0])]:
        got = ft.grad(lambda v, name=name: getattr(fnp, name)(v, where=keep))(x)
        _close(got, expected, 1e-12, 1e-12)
    got = ft.grad(lambda v: fnp.max(v, where=keep, initial=-10.0))(x)
    _close(got, [0, 0, 1, 0], 1e-12, 1e-12)


def test_reduction_argument_errors():
    x = mx.ones((2, 3))
    cases = [
        (lambda: fnp.max(x, where=x > 0), ValueError,
         r"max: where= needs initial= as well"),
        (lambda: fnp.nanmin(x, axis=0, where=x > 0), ValueError,
         r"nanmin: where= needs initial= as well"),
        (lambda: fnp.sum(x, where=mx.ones((2, 3))), ValueError,
         r"sum: where must be a boolean array, got dtype mlx.core.float32"),
        (lambda: fnp.mean(x, where=mx.ones((3, 3), mx.bool_)), ValueError,
         r"mean: where of shape \(3, 3\) does not broadcast to the input's shape \(2, 3\)"),
        (lambda: fnp.any(x, where=mx.ones((1, 2, 3), mx.bool_)), ValueError,
         r"any: where of shape \(1, 2, 3\) does not broadcast"),
        (lambda: fnp.sum(x, initial=[1.0, 2.0]), ValueError,
         r"sum: initial must be a scalar, got an array of shape \(2,\)"),
        (lambda: fnp.max(x, initial=mx.zeros(2)), ValueError,
         r"max: initial must be a scalar"),
        (lambda: fnp.prod(x, initial="a"), TypeError, r"prod: initial must be a number"),
        (lambda: fnp.max(mx.zeros((0,)), where=mx.ones(0, mx.bool_)), ValueError,
         r"max: where= needs initial="),
    ]
    for name in ("sum", "prod", "mean", "var", "std", "max", "min", "all", "any", "argmax",
                 "argmin", "cumsum", "cumprod", "nansum", "nanprod", "nanmean", "nanvar",
                 "nanstd", "nanmax", "nanmin", "nanargmax", "nanargmin", "nancumsum",
                 "nancumprod", "trace"):
        cases.append((lambda name=name: getattr(fnp, name)(x, out=x), NotImplementedError,
                      rf"{name}: the 'out' argument is not supported"))
    for fn, error, message in cases:
        with pytest.raises(error, match=message):
            fn()


# ----------------------------------------------------------------------------
# NaN-ignoring reductions
# ----------------------------------------------------------------------------

NAN_REDUCTIONS = ["nansum", "nanprod", "nanmean", "nanvar", "nanstd", "nanmax", "nanmin"]


@pytest.mark.parametrize("name", NAN_REDUCTIONS)
@given(args=masked_draw(nans=True))
def test_nan_reductions_match_numpy(name, args):
    x, axis, keepdims, _ = args
    if name in ("nanmax", "nanmin") and x.size == 0:
        return
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = getattr(np, name)(x, axis=axis, keepdims=keepdims)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning for all-NaN slices
        got = getattr(fnp, name)(_mx64(x), axis=axis, keepdims=keepdims)
    _close_nan(got, expected, rtol=1e-8)


@pytest.mark.parametrize("name", ["nanvar", "nanstd"])
@given(args=masked_draw(nans=True), ddof=st.integers(0, 2))
def test_nanvar_nanstd_ddof_match_numpy(name, args, ddof):
    x, axis, keepdims, _ = args
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = getattr(np, name)(x, axis=axis, keepdims=keepdims, ddof=ddof)
    got = getattr(fnp, name)(_mx64(x), axis=axis, keepdims=keepdims, ddof=ddof)
    _close_nan(got, expected, rtol=1e-8)


@pytest.mark.parametrize("name", ["nansum", "nanmean", "nanvar", "nanmax"])
@given(args=masked_draw(nans=True))
def test_nan_reductions_with_where(name, args):
    x, axis, keepdims, mask = args
    kw = dict(axis=axis, keepdims=keepdims)
    if name == "nanmax":
        kw["initial"] = -5.0
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = getattr(np, name)(x, where=mask, **kw)
    _close_nan(getattr(fnp, name)(_mx64(x), where=mx.array(mask), **kw), expected, rtol=1e-8)


@pytest.mark.parametrize("name", ["nanargmax", "nanargmin"])
@given(args=masked_draw(nans=True), keepdims=st.booleans())
def test_nanargmax_nanargmin_match_numpy(name, args, keepdims):
    x, _, _, _ = args
    if not x.size:
        return
    axis = None if x.ndim == 0 or args[1] is None or not isinstance(args[1], int) else args[1]
    # NumPy raises on all-NaN slices; as jax.numpy, they give -1.
    safe = np.where(np.isnan(x).all(axis=axis, keepdims=True), 0.0, x)
    expected = getattr(np, name)(safe, axis=axis, keepdims=keepdims)
    expected = np.where(np.isnan(x).all(axis=axis, keepdims=keepdims), -1, expected)
    got = getattr(fnp, name)(_mx64(x), axis=axis, keepdims=keepdims)
    assert got.dtype == mx.int32
    _close(got, expected)


def test_nanargmax_prefers_a_real_infinity_to_a_nan():
    assert fnp.nanargmax(mx.array([np.nan, -np.inf])).item() == 1
    assert fnp.nanargmin(mx.array([np.nan, np.inf, np.nan])).item() == 1
    assert fnp.nanargmax(mx.array([3, 1, 3])).item() == 0  # integers: argmax, as int32


@pytest.mark.parametrize("name", ["nancumsum", "nancumprod"])
@given(args=masked_draw(nans=True))
def test_nan_scans_match_numpy(name, args):
    x, axis, _, _ = args
    axis = axis if isinstance(axis, int) else None
    got = getattr(fnp, name)(_mx64(x), axis=axis)
    _close_nan(got, getattr(np, name)(x, axis=axis))


def test_nan_reductions_of_integers_are_the_plain_ones():
    x = mx.array([[1, 2], [3, 5]], mx.int32)
    assert fnp.nansum(x).item() == 11 and fnp.nanprod(x, axis=0).tolist() == [3, 10]
    assert fnp.nanmean(x, axis=1).tolist() == [1.5, 4.0]
    assert fnp.nanmax(x).item() == 5 and fnp.nanmin(x, axis=1).tolist() == [1, 3]
    assert fnp.nancumsum(x).tolist() == [1, 3, 6, 11]
    assert fnp.nanvar(x, axis=1).tolist() == [0.25, 1.0]


@given(x=floats(shapes(min_dims=1, min_side=2), -3.0, 3.0), seed=st.integers(0, 2**16))
def test_nan_entries_get_zero_gradient(x, seed):
    rng = np.random.default_rng(seed)
    holes = rng.random(x.shape) < 0.3
    x = np.where(holes, np.nan, x)
    xs = mx.array(x, dtype=mx.float64)
    for name in ("nansum", "nanmean", "nanvar", "nanstd", "nanmax", "nanprod"):
        g = np.array(ft.grad(lambda v, name=name: fnp.nansum(getattr(fnp, name)(v, axis=-1)))(xs))
        assert (g[holes] == 0).all(), name
        assert np.isfinite(g).all(), name
    # On the other entries: the gradient of the plain reduction of what is left.
    flat = x.ravel()
    kept = flat[~np.isnan(flat)]
    for name in ("nansum", "nanmean", "nanvar"):
        g = np.array(ft.grad(getattr(fnp, name))(mx.array(flat, dtype=mx.float64)))
        if kept.size:
            plain = np.array(ft.grad(getattr(fnp, name[3:]))(mx.array(kept, dtype=mx.float64)))
            _close(g[~np.isnan(flat)], plain, 1e-9, 1e-12)


@pytest.mark.parametrize("name", ["nanmean", "nanvar", "nansum", "nanstd"])
def test_nan_reduction_derivatives_match_finite_differences(name):
    x = distinct(np.random.default_rng(5).standard_normal((3, 4)), 0.1)
    hole = np.zeros(x.shape, bool)
    hole[0, 1] = hole[2, 2] = True
    kw = {"ddof": 1} if name in ("nanvar", "nanstd") else {}
    nan = mx.array(np.nan, dtype=mx.float64)

    # Finite differences would see NaN at the NaN entries: those are put in
    # inside the function, and the other entries are differentiated.
    def with_holes(v):
        return getattr(fnp, name)(fnp.where(mx.array(hole), nan, v), axis=1, **kw)

    args = (mx.array(x, dtype=mx.float64),)
    check_jvp_fd(with_holes, args)
    check_vjp_dot(with_holes, args)
    check_second_order(with_holes, args)


# ----------------------------------------------------------------------------
# jit and vmap of the new reductions
# ----------------------------------------------------------------------------

_W = np.array([[True, False, True, True], [False, False, True, False], [True] * 4])
NEW_REDUCTIONS = {
    "sum_where": lambda x: fnp.sum(x, 1, where=mx.array(_W), initial=0.5),
    "prod_where": lambda x: fnp.prod(x, 0, True, where=mx.array(_W[0])),
    "max_where": lambda x: fnp.max(x, -1, where=mx.array(_W), initial=-1.0),
    "min_initial": lambda x: fnp.min(x, None, initial=0.0),
    "mean_where": lambda x: fnp.mean(x, 1, where=mx.array(_W)),
    "var_where": lambda x: fnp.var(x, (0, 1), where=mx.array(_W), ddof=1),
    "std_where": lambda x: fnp.std(x, 0, where=mx.array(_W)),
    "all_where": lambda x: fnp.all(x > 0, 1, where=mx.array(_W)),
    "trace": lambda x: fnp.trace(x, 1),
    **{name: (lambda x, name=name: getattr(fnp, name)(fnp.where(x > 1.0, np.nan, x), axis=1))
       for name in ("nansum", "nanprod", "nanmean", "nanvar", "nanstd", "nanmax", "nanmin",
                    "nanargmax", "nanargmin", "nancumsum", "nancumprod")},
}


@pytest.mark.parametrize("name", list(NEW_REDUCTIONS))
def test_new_reductions_jit_matches_eager_and_vmap_matches_a_loop(name):
    from harness import compiler_off

    fn = NEW_REDUCTIONS[name]
    x = mx.array(np.random.default_rng(3).standard_normal((3, 4)) * 2, dtype=mx.float64)
    with compiler_off():
        _close_nan(ft.jit(fn)(x), fn(x), 0, 0)
    check_vmap(fn, (x,))
