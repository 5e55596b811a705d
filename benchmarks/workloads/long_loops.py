"""Long loops, timed per step: a tanh RNN (hidden 32, input 16, batch 8)
over 1,000 / 20,000 / 100,000 steps, its loss's value and gradient; a neural
ODE's RK4 rollout (2,000 steps of a 16-64-16 tanh MLP, batch 16), value
and gradient in its parameters; an HMC chain (1,000 iterations of 10
leapfrog steps on a 16-dimensional logistic-regression posterior, momenta
and accept draws given, so every framework makes the same chain).

ftorch and JAX loop with ``lax.scan`` under jit; MLX's column is its Python
loop run eagerly (``mx.value_and_grad`` over it): ``mx.compile`` of that
loop unrolls it into one graph, which takes minutes to compile at these
lengths and overflows the C stack from about 8,000 steps. At 100,000 steps
``mx.value_and_grad`` of the loop itself crashes the process (MLX 0.32.4),
so that row has no MLX column."""

from __future__ import annotations

import numpy as np

from benchmarks.workloads import Workload

BATCH, N_IN, HIDDEN = 8, 16, 32


# --- the RNN ----------------------------------------------------------------


def rnn_inputs(steps):
    def make(rng):
        return {"xs": rng.standard_normal((steps, BATCH, N_IN)).astype("float32"),
                "wx": (rng.standard_normal((N_IN, HIDDEN)) * N_IN ** -0.5).astype("float32"),
                "wh": (rng.standard_normal((HIDDEN, HIDDEN)) * HIDDEN ** -0.5).astype("float32"),
                "b": (rng.standard_normal(HIDDEN) * 0.1).astype("float32"),
                "wo": (rng.standard_normal((HIDDEN, 1)) * HIDDEN ** -0.5).astype("float32")}
    return make


def _rnn_args(fw, data):
    return {k: fw.array(data[k]) for k in ("wx", "wh", "b", "wo")}, fw.array(data["xs"])


def rnn_cell(lib, p):
    def cell(h, x):
        return lib.tanh(x @ p["wx"] + h @ p["wh"] + p["b"]), None
    return cell


def rnn_loss(lib, scan, grad=None):
    def loss(p, xs):
        h, _ = scan(rnn_cell(lib, p), lib.zeros((BATCH, HIDDEN)), xs)
        return lib.mean(h @ p["wo"])
    return loss


#: The longest loop whose gradient MLX takes here without crashing (it does at 100,000).
MLX_MAX_GRAD_STEPS = 50_000


def python_scan(f, carry, xs, length=None):
    """``lax.scan`` as the Python loop MLX runs (``xs``: an array, a tuple of
    them, or None with ``length``)."""
    ys = []
    for t in range(length if xs is None else _length(xs)):
        x = None if xs is None else tuple(a[t] for a in xs) if isinstance(xs, tuple) else xs[t]
        carry, y = f(carry, x)
        ys.append(y)
    if ys and ys[0] is not None:
        import mlx.core as mx

        return carry, mx.stack(ys)
    return carry, None


def _length(xs):
    return (xs[0] if isinstance(xs, tuple) else xs).shape[0]


def builders(model, args, value_and_grad=True):
    """The three sides of a loop workload: ``model(lib, scan, grad)`` with
    each framework's ops, loop (MLX: its Python loop, run eagerly) and
    ``grad``; its value and gradient in the first argument when
    ``value_and_grad``."""
    def mlx_build(fw, mode, data):
        import mlx.core as mx

        a = args(fw, data)
        if value_and_grad and _length(a[-1]) > MLX_MAX_GRAD_STEPS:
            raise RuntimeError(f"mx.value_and_grad of a {_length(a[-1])}-step Python loop "
                               "crashes the process (segmentation fault)")
        f = model(mx, python_scan, mx.grad)
        f = mx.value_and_grad(f) if value_and_grad else f
        return lambda: f(*a)

    def ftorch_build(fw, mode, data):
        import ftorch as ft
        import ftorch.numpy as fnp

        f = model(fnp, ft.lax.scan, ft.grad)
        f = ft.jit(ft.value_and_grad(f) if value_and_grad else f)
        a = args(fw, data)
        return lambda: f(*a)

    def jax_build(fw, mode, data):
        import jax
        import jax.numpy as jnp

        f = model(jnp, jax.lax.scan, jax.grad)
        f = jax.jit(jax.value_and_grad(f) if value_and_grad else f)
        a = args(fw, data)
        return lambda: f(*a)

    return {"mlx": mlx_build, "ftorch": ftorch_build, "jax": jax_build}


# --- the RK4 neural ODE ------------------------------------------------------

ODE_STEPS, ODE_DIM, ODE_WIDTH, ODE_BATCH, DT = 2000, 16, 64, 16, 0.01


def ode_inputs(steps):
    def make(rng):
        return {"ts": (np.arange(steps) * DT).astype("float32"), **_ode_params(rng)}
    return make


def _ode_params(rng):
    return {"h0": rng.standard_normal((ODE_BATCH, ODE_DIM)).astype("float32"),
            "w1": (rng.standard_normal((ODE_DIM, ODE_WIDTH)) * ODE_DIM ** -0.5).astype("float32"),
            "b1": (rng.standard_normal(ODE_WIDTH) * 0.1).astype("float32"),
            "w2": (rng.standard_normal((ODE_WIDTH, ODE_DIM)) * ODE_WIDTH ** -0.5).astype(
                "float32")}


def rk4_step(lib, p):
    def field(h):
        return lib.tanh(h @ p["w1"] + p["b1"]) @ p["w2"]

    def step(h, _):
        k1 = field(h)
        k2 = field(h + 0.5 * DT * k1)
        k3 = field(h + 0.5 * DT * k2)
        k4 = field(h + DT * k3)
        return h + (DT / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4), None
    return step


def _ode_args(fw, data):
    return ({k: fw.array(data[k]) for k in ("w1", "b1", "w2")}, fw.array(data["h0"]),
            fw.array(data["ts"]))


def ode_loss(lib, scan, grad=None):
    def loss(p, h, ts):
        h, _ = scan(rk4_step(lib, p), h, ts)
        return lib.mean(h * h)
    return loss


# --- the HMC chain ------------------------------------------------------------

HMC_ITERS, HMC_LEAPFROG, HMC_DIM, HMC_DATA, HMC_EPS = 1000, 10, 16, 128, 0.02


def hmc_inputs(iters):
    def make(rng):
        return _hmc_data(rng, iters)
    return make


def _hmc_data(rng, iters):
    x = rng.standard_normal((HMC_DATA, HMC_DIM)).astype("float32")
    w = rng.standard_normal(HMC_DIM).astype("float32")
    return {"x": x, "y": (x @ w + rng.standard_normal(HMC_DATA) > 0).astype("float32"),
            "q0": np.zeros(HMC_DIM, "float32"),
            "momenta": rng.standard_normal((iters, HMC_DIM)).astype("float32"),
            "log_u": np.log(rng.uniform(size=iters)).astype("float32")}


def hmc_chain(lib, scan, grad):
    """The chain as a scan over (momentum, log u) draws; samples stacked."""
    def run(x, y, q0, momenta, log_u):
        def log_density(q):
            logits = x @ q
            return lib.sum(y * logits - lib.logaddexp(0.0, logits)) - 0.5 * lib.sum(q * q)

        score = grad(log_density)

        def leapfrog(state, _):
            q, p = state
            p = p + 0.5 * HMC_EPS * score(q)
            q = q + HMC_EPS * p
            return (q, p + 0.5 * HMC_EPS * score(q)), None

        def iteration(q, draw):
            p0, lu = draw
            (q1, p1), _ = scan(leapfrog, (q, p0), None, length=HMC_LEAPFROG)
            log_accept = (log_density(q1) - 0.5 * lib.sum(p1 * p1)
                          - log_density(q) + 0.5 * lib.sum(p0 * p0))
            q = lib.where(lu < log_accept, q1, q)
            return q, q

        _, samples = scan(iteration, q0, (momenta, log_u))
        return lib.mean(samples, axis=0)
    return run


def _hmc_args(fw, data):
    return tuple(fw.array(data[k]) for k in ("x", "y", "q0", "momenta", "log_u"))


# Targets: per step, ftorch over MLX's loop (see benchmarks/README.md).
WORKLOADS = tuple(
    Workload(name=f"rnn_{label}", doc=__doc__, modes=("jit",), inputs=rnn_inputs(steps),
             builders=builders(rnn_loss, _rnn_args), calls_per_step=steps, targets=(("jit", 0.5),),
             rtol=1e-3, memory=True, small=rnn_inputs(40))
    for label, steps in (("1k", 1000), ("20k", 20000), ("100k", 100000))
) + (
    Workload(name="ode_rk4", doc=__doc__, modes=("jit",), inputs=ode_inputs(ODE_STEPS),
             builders=builders(ode_loss, _ode_args), calls_per_step=ODE_STEPS,
             targets=(("jit", 0.5),),
             rtol=1e-3, memory=True, small=ode_inputs(40)),
    Workload(name="hmc_chain", doc=__doc__, modes=("jit",), inputs=hmc_inputs(HMC_ITERS),
             builders=builders(hmc_chain, _hmc_args, value_and_grad=False),
             calls_per_step=HMC_ITERS, targets=(("jit", 0.5),),
             rtol=1e-3, small=hmc_inputs(40)),
)
