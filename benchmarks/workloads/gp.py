"""Gaussian-process marginal likelihood and its gradient, n=512: the negative
log marginal likelihood of an ARD squared-exponential kernel (4 lengthscales,
signal and noise scales, all as logs) on 512 points in 4 dimensions, through
a Cholesky factorisation, and its gradient with respect to the 6
hyperparameters. ``ft.value_and_grad`` under ``ft.jit`` against
``jax.value_and_grad`` under ``jax.jit`` and ``torch.func.grad_and_value``;
MLX has no derivative for its Cholesky, so its column is the gradient
derived by hand, ``0.5 tr((K^-1 - a a^T) dK)`` with ``a = K^-1 y``, under
``mx.compile``.

The target allows 1.5x that hand-written gradient: it needs one
``cholesky_inv``, where reverse mode through a Cholesky factor (ftorch's,
JAX's and PyTorch's alike) costs three n x n matrix products,
``L^-T Phi(L^T Lbar) L^-1``. ``jit`` makes every triangular solve against
``L`` a product with one shared inverse (see
``ftorch.graph.share_triangular_inverses``)."""

from __future__ import annotations

import math

from benchmarks.workloads import Workload

N, DIM = 512, 4


def inputs(rng):
    x = rng.standard_normal((N, DIM)).astype("float32")
    y = (math.sqrt(2.0) * x[:, 0]).astype("float32")
    y = (y + 0.5 * x[:, 1] * x[:, 2] + 0.1 * rng.standard_normal(N)).astype("float32")
    return {"x": x, "y": y,
            "log_lengthscale": rng.uniform(0.0, 0.5, DIM).astype("float32"),
            "log_signal": rng.uniform(-0.2, 0.2, ()).astype("float32"),
            "log_noise": (rng.uniform(-1.5, -1.0, ())).astype("float32")}


HYPERS = ("log_lengthscale", "log_signal", "log_noise")


def _hypers(fw, data):
    return {k: fw.array(data[k]) for k in HYPERS}


def make_nll(lib, cholesky, cho_solve):
    """The negative log marginal likelihood, written against a NumPy-like ``lib``."""
    def nll(h, x, y):
        z = x / lib.exp(h["log_lengthscale"])
        sq = lib.sum(z * z, axis=-1)
        d2 = lib.maximum(sq[:, None] + sq[None, :] - 2.0 * (z @ z.T), 0.0)
        k = lib.exp(2.0 * h["log_signal"] - 0.5 * d2)
        k = k + lib.exp(2.0 * h["log_noise"]) * lib.eye(x.shape[0], dtype=x.dtype)
        chol = cholesky(k)
        alpha = cho_solve(chol, y)
        return (0.5 * lib.sum(y * alpha) + lib.sum(lib.log(lib.diagonal(chol)))
                + 0.5 * x.shape[0] * math.log(2 * math.pi))
    return nll


def ftorch_build(fw, mode, data):
    import ftorch as ft
    import ftorch.numpy as fnp
    import ftorch.scipy.linalg as fsl

    nll = make_nll(fnp, fnp.linalg.cholesky, lambda c, y: fsl.cho_solve((c, True), y))
    step = ft.jit(ft.value_and_grad(nll))
    h, x, y = _hypers(fw, data), fw.array(data["x"]), fw.array(data["y"])
    return lambda: step(h, x, y)


def mlx_build(fw, mode, data):
    import mlx.core as mx

    def value_and_grad(h, x, y):
        n = x.shape[0]
        ls = mx.exp(h["log_lengthscale"])
        z = x / ls
        sq = mx.sum(z * z, axis=-1)
        d2 = mx.maximum(sq[:, None] + sq[None, :] - 2.0 * (z @ z.T), 0.0)
        kf = mx.exp(2.0 * h["log_signal"] - 0.5 * d2)
        noise2 = mx.exp(2.0 * h["log_noise"])
        chol = mx.linalg.cholesky(kf + noise2 * mx.eye(n), stream=mx.cpu)
        v = mx.linalg.solve_triangular(chol, y[:, None], upper=False, stream=mx.cpu)
        alpha = mx.linalg.solve_triangular(chol.T, v, upper=True, stream=mx.cpu)[:, 0]
        value = (0.5 * mx.sum(y * alpha) + mx.sum(mx.log(mx.diagonal(chol)))
                 + 0.5 * n * math.log(2 * math.pi))
        w = mx.linalg.cholesky_inv(chol, stream=mx.cpu) - alpha[:, None] * alpha[None, :]
        wk = w * kf
        # dK/dlog_ls[d] = kf * (z_id - z_jd)^2; sum_ij W_ij kf_ij (z_id - z_jd)^2, expanded.
        zz = z * z
        g_ls = 0.5 * (2.0 * mx.sum(mx.sum(wk, axis=1)[:, None] * zz, axis=0)
                      - 2.0 * mx.sum(z * (wk @ z), axis=0))
        grads = {"log_lengthscale": g_ls, "log_signal": mx.sum(wk),
                 "log_noise": noise2 * mx.trace(w)}
        return value, grads

    step = mx.compile(value_and_grad) if mode == "jit" else value_and_grad
    h, x, y = _hypers(fw, data), fw.array(data["x"]), fw.array(data["y"])
    return lambda: step(h, x, y)


def jax_build(fw, mode, data):
    import jax
    import jax.numpy as jnp
    import jax.scipy.linalg as jsl

    nll = make_nll(jnp, jnp.linalg.cholesky, lambda c, y: jsl.cho_solve((c, True), y))
    step = jax.jit(jax.value_and_grad(nll))
    h, x, y = _hypers(fw, data), fw.array(data["x"]), fw.array(data["y"])
    return lambda: step(h, x, y)


def torch_build(fw, mode, data):
    import torch
    from torch.func import grad_and_value

    class _Lib:
        """torch under NumPy's names, for ``make_nll``."""
        sum, exp, log, diagonal = torch.sum, torch.exp, torch.log, torch.diagonal

        @staticmethod
        def maximum(a, b):
            return torch.clamp(a, min=b)

        @staticmethod
        def eye(n, dtype):
            return torch.eye(n, dtype=dtype)

    nll = make_nll(_Lib, torch.linalg.cholesky,
                   lambda c, y: torch.cholesky_solve(y[:, None], c)[:, 0])

    def value_and_grad(h, x, y):
        g, v = grad_and_value(nll)(h, x, y)
        return v, g

    step = torch.compile(value_and_grad) if mode == "jit" else value_and_grad
    h, x, y = _hypers(fw, data), fw.array(data["x"]), fw.array(data["y"])
    return lambda: step(h, x, y)


WORKLOAD = Workload(
    name="gp_likelihood", doc=__doc__, modes=("jit",), inputs=inputs,
    builders={"mlx": mlx_build, "ftorch": ftorch_build, "jax": jax_build,
              "torch": torch_build},
    targets=(("jit", 1.5),), rtol=5e-3)
