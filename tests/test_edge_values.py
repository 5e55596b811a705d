"""Answers at the edges of a function's domain (infinities, all-masked
slices, Python scalars) are JAX's, or differ from them on purpose and the
translation tables (docs/guides/from-jax.md) say so. Expected values are
what JAX 0.10 gives."""

import math

import mlx.core as mx
import numpy as np
import pytest

import ftorch as ft
import ftorch.numpy as fnp
from ftorch.core import registry

INF, NAN = math.inf, math.nan


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
