"""L-BFGS and the line searches: the first iterates against optax's on Rosenbrock's
function and a logistic regression, convergence of a jitted step, the extra arguments'
errors; and the losses that ftorch.optim exports at its top level."""

import mlx.core as mx
import numpy as np
import pytest

import ftorch as ft
import ftorch.numpy as fnp
import ftorch.optim as optim


def rosenbrock(L):
    def f(x):
        return L.numpy.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
    return f


def logistic(L, X, y):
    def f(w):
        z = X @ w
        return L.numpy.mean(L.numpy.logaddexp(0.0, z) - y * z) + 0.01 * L.numpy.sum(w * w)
    return f


RNG = np.random.default_rng(0)
X = RNG.standard_normal((40, 3)).astype(np.float32)
Y = (X @ np.array([1.0, -2.0, 0.5], np.float32) + 0.3 * RNG.standard_normal(40) > 0).astype(
    np.float32)


def iterates(L, make_opt, f, x0, steps, jit=None):
    opt = make_opt(L)
    value_and_grad = L.optim.value_and_grad_from_state(f)

    def step(x, state):
        value, grad = value_and_grad(x, state=state)
        updates, state = opt.update(grad, state, x, value=value, grad=grad, value_fn=f)
        return L.optim.apply_updates(x, updates), state

    step = jit(step) if jit else step
    x, state, out = x0, opt.init(x0), []
    for _ in range(steps):
        x, state = step(x, state)
        out.append(np.array(x))
    return out, state


def _optax():
    jax = pytest.importorskip("jax")
    optax = pytest.importorskip("optax")
    import types

    return types.SimpleNamespace(numpy=jax.numpy, optim=optax), jax


MAKERS = {
    "lbfgs": lambda L: L.optim.lbfgs(),
    "lbfgs_backtracking": lambda L: L.optim.lbfgs(
        linesearch=L.optim.scale_by_backtracking_linesearch(20, store_grad=True)),
}


@pytest.mark.parametrize("maker", sorted(MAKERS))
@pytest.mark.parametrize("problem", ["rosenbrock", "logistic"])
def test_first_iterates_match_optax(maker, problem):
    J, jax = _optax()
    F = type("F", (), {"numpy": fnp, "optim": optim})
    x0 = np.array([-1.2, 1.0, 0.5], np.float32)
    if problem == "rosenbrock":
        f_ft, f_jax = rosenbrock(F), rosenbrock(J)
    else:
        f_ft, f_jax = logistic(F, mx.array(X), mx.array(Y)), logistic(J, jax.numpy.asarray(X),
                                                                      jax.numpy.asarray(Y))
    ours, _ = iterates(F, MAKERS[maker], f_ft, mx.array(x0), 5)
    theirs, _ = iterates(J, MAKERS[maker], f_jax, jax.numpy.asarray(x0), 5)
    for k, (a, b) in enumerate(zip(ours, theirs)):
        np.testing.assert_allclose(a, b, rtol=2e-3, atol=2e-4, err_msg=f"step {k}")


def test_lbfgs_minimizes_rosenbrock_in_a_jitted_step():
    F = type("F", (), {"numpy": fnp, "optim": optim})
    xs, state = iterates(F, MAKERS["lbfgs"], rosenbrock(F), mx.array([-1.2, 1.0, 0.5]), 60,
                         jit=ft.jit)
    np.testing.assert_allclose(xs[-1], np.ones(3), atol=1e-3)


def test_lbfgs_minimizes_a_logistic_regression():
    F = type("F", (), {"numpy": fnp, "optim": optim})
    f = logistic(F, mx.array(X), mx.array(Y))
    xs, _ = iterates(F, MAKERS["lbfgs"], f, mx.zeros(3), 30, jit=ft.jit)
    grad = ft.grad(f)(mx.array(xs[-1]))
    assert float(fnp.max(fnp.abs(grad))) < 1e-4


def test_line_search_needs_its_extra_arguments():
    opt = optim.scale_by_zoom_linesearch(10)
    p = mx.zeros(2)
    with pytest.raises(TypeError, match="needs value, grad, value_fn"):
        opt.update(mx.ones(2), opt.init(p), p)
    f = lambda p: fnp.sum(p ** 2)  # noqa: E731
    with pytest.raises(TypeError, match=r"\['scale'\] are not arguments of value_fn"):
        opt.update(mx.ones(2), opt.init(p), p, value=f(p), grad=mx.zeros(2), value_fn=f,
                   scale=2.0)


def test_chain_passes_extra_arguments_on_and_becomes_extra_args():
    opt = optim.chain(optim.sgd(1.0), optim.scale_by_backtracking_linesearch(5))
    assert isinstance(opt, optim.GradientTransformationExtraArgs)
    plain = optim.chain(optim.sgd(1.0))
    assert not isinstance(plain, optim.GradientTransformationExtraArgs)


def test_value_and_grad_from_state_needs_a_stored_value():
    opt = optim.sgd(0.1)
    with pytest.raises(ValueError, match="holds no value and gradient"):
        optim.value_and_grad_from_state(lambda p: fnp.sum(p))(mx.zeros(1),
                                                             state=opt.init(mx.zeros(1)))


def test_top_level_losses_are_those_of_losses():
    from oracle_cases_optim import TOP_LEVEL_LOSSES

    for name in TOP_LEVEL_LOSSES:
        assert getattr(optim, name) is getattr(optim.losses, name), name
