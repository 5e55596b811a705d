"""Answers at the edges of a function's domain (infinities, all-masked
slices, Python scalars) are JAX's, or differ from them on purpose and the
translation tables (docs/guides/from-jax.md) say so. Expected values are
what JAX 0.10 gives."""

import math

import mlx.core as mx
import numpy as np
import pytest

import ftorch as ft
import ftorch.nn.functional as F
import ftorch.numpy as fnp
import ftorch.scipy.special as fss
import ftorch.scipy.stats.norm as fnorm
from ftorch.core import registry

INF, NAN = math.inf, math.nan
LN2 = math.log(2.0)


def _same(got, want):
    np.testing.assert_array_equal(np.array(got), np.array(want, dtype=np.float32))


class TestLogsumexp:
    # x, logsumexp(x), its gradient, its JVP along [1, 0] (JAX's answers)
    EDGES = [
        ([1.0, INF], INF, [0.0, NAN], NAN),
        ([INF, INF], INF, [NAN, NAN], NAN),
        ([INF, -INF], INF, [NAN, 0.0], NAN),
        ([-INF, 0.0], 0.0, [0.0, 1.0], 0.0),
        ([NAN, 1.0], NAN, [NAN, NAN], NAN),
    ]

    @pytest.mark.parametrize("x, value, grad, tangent", EDGES)
    def test_edges_are_jaxs(self, x, value, grad, tangent):
        x = mx.array(x)
        _same(fnp.logsumexp(x), value)
        _same(ft.grad(fnp.logsumexp)(x), grad)
        _same(ft.jit(ft.grad(fnp.logsumexp))(x), grad)
        _same(ft.vmap(ft.grad(fnp.logsumexp))(x[None])[0], grad)
        _same(ft.jvp(fnp.logsumexp, (x,), (mx.array([1.0, 0.0]),))[1], tangent)

    def test_all_minus_inf_has_a_zero_gradient(self):
        # A deliberate difference: JAX's gradient is nan here; ftorch's
        # (listed in the translation tables) is 0, so that a fully masked
        # row does not turn a whole gradient into nan.
        x = mx.array([[-INF, -INF], [0.0, 0.0]])
        _same(fnp.logsumexp(x, axis=1), [-INF, math.log(2.0)])
        _same(ft.grad(lambda x: fnp.sum(fnp.logsumexp(x, axis=1)))(x), [[0, 0], [0.5, 0.5]])


def _close(got, want):
    got, want = np.array(got), np.array(want, dtype=np.float32)
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=0, equal_nan=True)
    # -0.0 where JAX gives -0.0
    np.testing.assert_array_equal(np.signbit(got[want == 0]), np.signbit(want[want == 0]))


def _check_edges(fn, args, value, grads, elementwise=True):
    args = [mx.array(a, dtype=mx.float32) for a in args]
    argnums = tuple(range(len(args)))
    _close(fn(*args), value)
    got = ft.grad(lambda *a: fnp.sum(fn(*a)), argnums=argnums)(*args)
    for g, want in zip(got, grads):
        np.testing.assert_allclose(np.array(g), np.array(want, dtype=np.float32),
                                   rtol=2e-6, equal_nan=True)
    if elementwise:  # the JVP along ones is the sum of the partial derivatives
        tangent = ft.jvp(fn, tuple(args), tuple(mx.ones_like(a) for a in args))[1]
        with np.errstate(invalid="ignore"):  # inf + -inf
            want = np.sum(np.array(grads, np.float32), 0)
        np.testing.assert_allclose(np.array(tangent), want, rtol=2e-6, equal_nan=True)


# function, arguments, its value, the gradient of its sum with respect to
# each argument: JAX 0.10's answers (jax.numpy, jax.nn, jax.scipy.special,
# jax.scipy.stats.norm of the same name).
EDGES = [
    ("logaddexp", fnp.logaddexp,
     [[INF, INF, -INF, -INF, 0.0, NAN], [INF, -INF, -INF, 0.0, -INF, 1.0]],
     [INF, INF, -INF, 0.0, 0.0, NAN],
     [[1.0, 1.0, NAN, 0.0, 1.0, NAN], [1.0, 0.0, NAN, 1.0, 0.0, NAN]]),
    ("softplus", F.softplus, [[INF, -INF, 0.0, 1e30]], [INF, 0.0, LN2, 1e30],
     [[1.0, 0.0, 0.5, 1.0]]),
    ("log_sigmoid", F.log_sigmoid, [[-INF, INF, 0.0, -1e30]], [-INF, -0.0, -LN2, -1e30],
     [[1.0, 0.0, 0.5, 1.0]]),
    ("softplus'", ft.vmap(ft.grad(F.softplus)), [[INF, -INF, 0.0]], [1.0, 0.0, 0.5],
     [[0.0, 0.0, 0.25]]),
    ("logit", fss.logit, [[0.0, 1.0, 0.5]], [-INF, INF, 0.0], [[INF, INF, 4.0]]),
    ("sign", fnp.sign, [[NAN, -0.0, 0.0, 2.0, -INF]], [NAN, -0.0, 0.0, 1.0, -1.0], [[0.0] * 5]),
    ("maximum", fnp.maximum, [[0.0, 1.0, NAN, INF, -INF, 1.0], [0.0, 2.0, 1.0, INF, -INF, NAN]],
     [0.0, 2.0, NAN, INF, -INF, NAN],
     [[0.5, 0.0, 0.0, 0.5, 0.5, 0.0], [0.5, 1.0, 0.0, 0.5, 0.5, 0.0]]),
    ("minimum", fnp.minimum, [[0.0, 1.0, NAN, INF, -INF, 1.0], [0.0, 2.0, 1.0, INF, -INF, NAN]],
     [0.0, 1.0, NAN, INF, -INF, NAN],
     [[0.5, 1.0, 0.0, 0.5, 0.5, 0.0], [0.5, 0.0, 0.0, 0.5, 0.5, 0.0]]),
    ("clip", lambda x: fnp.clip(x, -1.0, 1.0), [[-1.0, 1.0, 0.0, 2.0]], [-1.0, 1.0, 0.0, 1.0],
     [[0.5, 0.5, 1.0, 0.0]]),
    ("relu", F.relu, [[0.0, -0.0, 1.0, -1.0]], [0.0, 0.0, 1.0, 0.0], [[0.0, 0.0, 1.0, 0.0]]),
    ("relu6", F.relu6, [[0.0, 6.0, 3.0, 7.0, -1.0]], [0.0, 6.0, 3.0, 6.0, 0.0],
     [[0.0, 0.0, 1.0, 0.0, 0.0]]),
    ("elu", F.elu, [[0.0, -1.0, 1.0, -INF]], [0.0, math.expm1(-1.0), 1.0, -1.0],
     [[1.0, math.exp(-1.0), 1.0, 0.0]]),
    ("elu-alpha", lambda x: F.elu(x, 2.0), [[0.0, -1.0]], [0.0, 2.0 * math.expm1(-1.0)],
     [[2.0, 2.0 * math.exp(-1.0)]]),
    ("celu", F.celu, [[0.0, -1.0]], [0.0, math.expm1(-1.0)], [[1.0, math.exp(-1.0)]]),
    ("leaky_relu", F.leaky_relu, [[0.0, -1.0]], [0.0, -0.01], [[1.0, 0.01]]),
    ("hard_tanh", F.hard_tanh, [[1.0, -1.0, 0.0, 2.0, NAN]], [1.0, -1.0, 0.0, 1.0, NAN],
     [[1.0, 1.0, 1.0, 0.0, 1.0]]),
    ("hard_sigmoid", F.hard_sigmoid, [[3.0, -3.0, 0.0]], [1.0, 0.0, 0.5], [[0.0, 0.0, 1 / 6]]),
    ("hard_swish", F.hard_swish, [[3.0, -3.0, 0.0]], [3.0, -0.0, 0.0], [[1.0, 0.0, 0.5]]),
    ("softmax", F.softmax, [[-INF, 0.0, 0.0]], [0.0, 0.5, 0.5], [[0.0, 0.0, 0.0]]),
    ("log_softmax", F.log_softmax, [[-INF, 0.0, 0.0]], [-INF, -LN2, -LN2], [[1.0, -0.5, -0.5]]),
    ("sqrt", fnp.sqrt, [[0.0, INF]], [0.0, INF], [[INF, 0.0]]),
    ("log1p", fnp.log1p, [[-1.0, 0.0]], [-INF, 0.0], [[INF, 1.0]]),
    ("arctan2", fnp.arctan2, [[0.0, 1.0], [0.0, 0.0]], [0.0, math.pi / 2],
     [[NAN, 0.0], [NAN, -1.0]]),
    ("xlogy", fss.xlogy, [[0.0, 0.0, 1.0], [0.0, 1.0, 0.0]], [0.0, 0.0, -INF],
     [[-INF, 0.0, -INF], [NAN, 0.0, INF]]),
    ("xlog1py", fss.xlog1py, [[0.0, 0.0, 1.0], [-1.0, 0.0, -1.0]], [0.0, 0.0, -INF],
     [[-INF, 0.0, -INF], [NAN, 0.0, INF]]),
    ("entr", fss.entr, [[0.0, 1.0]], [-0.0, -0.0], [[INF, -1.0]]),
    ("erfinv", fss.erfinv, [[1.0, -1.0, 0.0]], [INF, -INF, 0.0],
     [[INF, INF, math.sqrt(math.pi) / 2]]),
    ("gammaln", fss.gammaln, [[0.0, -1.0]], [INF, INF], [[NAN, NAN]]),
    ("digamma", fss.digamma, [[0.0, 1.0]], [NAN, -0.5772157], [[INF, math.pi ** 2 / 6]]),
    ("log_ndtr", fss.log_ndtr, [[-INF, INF, 0.0]], [-INF, -0.0, -LN2],
     [[NAN, 0.0, math.sqrt(2 / math.pi)]]),
    ("norm.logcdf", fnorm.logcdf, [[-INF, INF, 0.0]], [-INF, -0.0, -LN2],
     [[NAN, 0.0, math.sqrt(2 / math.pi)]]),
]


@pytest.mark.parametrize("name, fn, args, value, grads", EDGES, ids=[e[0] for e in EDGES])
def test_edges_are_jaxs(name, fn, args, value, grads):
    _check_edges(fn, args, value, grads, elementwise=name not in ("softmax", "log_softmax"))


# Where ftorch's answer differs from JAX's on purpose (the translation tables
# in docs/guides/from-jax.md list each): function, arguments, ftorch's value
# and gradients; JAX 0.10's differing answer in the comment.
DELIBERATE = [
    # JAX: gradients [[e, 1], [1, e]] (exp of the finite operand)
    ("logaddexp", fnp.logaddexp, [[1.0, INF], [INF, 1.0]], [INF, INF], [[0.0, 1.0], [1.0, 0.0]]),
    # JAX: 1 at 0 and -0.0
    ("abs", fnp.abs, [[0.0, -0.0, 1.0]], [0.0, 0.0, 1.0], [[0.0, 0.0, 1.0]]),
    # JAX: NaN at x = 0
    ("power", fnp.power, [[0.0, 2.0], [0.0, 0.0]], [1.0, 1.0], [[0.0, 0.0], [0.0, LN2]]),
    # JAX: 0 at 0 and 1
    ("ndtri", fss.ndtri, [[0.0, 1.0, 0.5]], [-INF, INF, 0.0],
     [[INF, INF, math.sqrt(2 * math.pi)]]),
    ("norm.ppf", fnorm.ppf, [[0.0, 1.0]], [-INF, INF], [[INF, INF]]),
    ("norm.isf", fnorm.isf, [[0.0, 1.0]], [INF, -INF], [[-INF, -INF]]),
    # JAX: 1 (i0'(0) is i1(0) = 0)
    ("i0", fss.i0, [[0.0]], [1.0], [[0.0]]),
    # JAX: NaN
    ("linalg.norm", fnp.linalg.norm, [[0.0, 0.0]], 0.0, [[0.0, 0.0]]),
    ("linalg.norm-fro", lambda x: fnp.linalg.norm(x.reshape(2, 2)), [[0.0] * 4], 0.0, [[0.0] * 4]),
    # JAX: 1 at the 0 entry (as its abs)
    ("linalg.norm-1", lambda x: fnp.linalg.norm(x, ord=1), [[0.0, 1.0]], 1.0, [[0.0, 1.0]]),
    # JAX: NaN
    ("std", fnp.std, [[2.0, 2.0]], 0.0, [[0.0, 0.0]]),
    ("var-no-dof", lambda x: fnp.var(x, ddof=1), [[2.0]], NAN, [[0.0]]),
    ("nn.logsumexp", F.logsumexp, [[-INF, -INF]], -INF, [[0.0, 0.0]]),
    ("special.logsumexp", fss.logsumexp, [[-INF, -INF]], -INF, [[0.0, 0.0]]),
    # JAX's default is approximate=True: 0.841192, gradient 1.082964
    ("gelu", F.gelu, [[1.0]], [0.8413447], [[1.0833155]]),
]


@pytest.mark.parametrize("name, fn, args, value, grads", DELIBERATE,
                         ids=[e[0] for e in DELIBERATE])
def test_deliberate_differences(name, fn, args, value, grads):
    _check_edges(fn, args, value, grads, elementwise=np.ndim(value) > 0)


def _unary_primitives():
    """The elementwise primitives of one operand and no parameters."""
    names = []
    for name, prim in sorted(registry.items()):
        if not prim.elementwise:
            continue
        try:
            prim.bind(mx.array(0.5))
        except (TypeError, ValueError):  # more operands, parameters, or not for floats
            continue
        names.append(name)
    return names


UNARY = _unary_primitives()


def test_there_are_unary_primitives():
    assert len(UNARY) > 40


def _public_unary_functions():
    """(namespace.name, function) for each public function of ftorch.numpy,
    ftorch.scipy.special and ftorch.nn.functional that is a unary primitive."""
    import ftorch.nn.functional as fnn
    import ftorch.scipy.special as fss

    return [(f"{label}.{name}", getattr(module, name)) for name in UNARY
            for label, module in (("fnp", fnp), ("fss", fss), ("fnn", fnn))
            if callable(getattr(module, name, None))]


PUBLIC_UNARY = _public_unary_functions()


def test_there_are_public_unary_functions():
    assert len(PUBLIC_UNARY) > 40


@pytest.mark.parametrize("name, fn", PUBLIC_UNARY, ids=[n for n, _ in PUBLIC_UNARY])
@pytest.mark.parametrize("scalar", [0.5, 2, -1])
def test_unary_functions_take_python_scalars(name, fn, scalar):
    # As every jax.numpy function does: a Python number is a weakly typed
    # scalar, so it gives what a float32 (or int32) array of it gives.
    want = fn(mx.array(scalar) if isinstance(scalar, float) else mx.array(float(scalar)))
    got = fn(scalar)
    np.testing.assert_allclose(np.array(got), np.array(want), rtol=1e-6, equal_nan=True)
