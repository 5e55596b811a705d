"""Reductions and scans: values against NumPy, ties, zeros, -inf, large
inputs, integer inputs, Tracer methods and error messages."""

import itertools
import math

import mlx.core as mx
import numpy as np
import pytest
from cases_reduction import axis_choice, reduced_count
from harness import close as _close
from harness import distinct, floats, shapes
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
