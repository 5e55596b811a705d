"""The Elman RNN of ``rnn`` over 256 steps, loss value and gradient under
jit: ftorch and JAX loop with ``lax.scan``; MLX and PyTorch compile the
Python loop (MLX has no loop construct)."""

from __future__ import annotations

from benchmarks.workloads import Workload, mlx_side, rnn
from benchmarks.workloads.rnn import _args, make_loss

STEPS = 256


def inputs(rng):
    return rnn.inputs(rng, STEPS)


def make_scan_loss(lib, scan):
    def loss(p, xs, y):
        def cell(h, x):
            return lib.tanh(x @ p["wx"] + h @ p["wh"] + p["b"]), None

        h, _ = scan(cell, lib.tanh(xs[0] @ p["wx"] + p["b"]), xs[1:])
        return lib.mean(lib.square(h @ p["wo"] - y))
    return loss


def mlx_build(fw, mode, data):
    side = mlx_side(fw)
    f = side.jit(side.value_and_grad(make_loss(side.lib, STEPS)))
    args = _args(fw, data)
    return lambda: f(*args)


def ftorch_build(fw, mode, data):
    import ftorch as ft
    import ftorch.numpy as fnp

    f = ft.jit(ft.value_and_grad(make_scan_loss(fnp, ft.lax.scan)))
    args = _args(fw, data)
    return lambda: f(*args)


def jax_build(fw, mode, data):
    import jax
    import jax.numpy as jnp

    f = jax.jit(jax.value_and_grad(make_scan_loss(jnp, jax.lax.scan)))
    args = _args(fw, data)
    return lambda: f(*args)


def torch_build(fw, mode, data):
    import torch
    from torch.func import grad_and_value

    gv = grad_and_value(make_loss(torch, STEPS))

    def f(p, xs, y):
        grads, loss = gv(p, xs, y)
        return loss, grads

    f = torch.compile(f)
    args = _args(fw, data)
    return lambda: f(*args)


WORKLOAD = Workload(
    name="rnn_scan", doc=__doc__, modes=("jit",), inputs=inputs, targets=(("jit", 0.75),),
    builders={"mlx": mlx_build, "ftorch": ftorch_build, "jax": jax_build, "torch": torch_build})
