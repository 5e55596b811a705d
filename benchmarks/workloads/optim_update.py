"""The optimizer update alone, jitted: ``adam`` and ``adamw`` (weight decay
0.01) applied to given gradients, on the parameters of the 784-512-512-10
MLP (``mlp_train``, 0.67 M parameters in 6 arrays) and of the 2-layer d=128
transformer (``transformer``, 0.46 M in 16 arrays). ``ftorch.optim`` under
``ft.jit`` against ``mlx.optimizers`` under ``mx.compile`` and optax under
``jax.jit``; each side carries its optimizer state from call to call."""

from __future__ import annotations

from functools import partial

from benchmarks.workloads import Workload, mlp_train, transformer

LR, WEIGHT_DECAY = 1e-3, 0.01
MODELS = {"mlp": mlp_train, "transformer": transformer}


def _inputs(model):
    def inputs(rng):
        data = MODELS[model].inputs(rng)
        params = {k: v for k, v in data.items() if v.dtype == "float32" and k not in (
            "x", "onehot")}
        grads = {"grad." + k: rng.standard_normal(v.shape).astype("float32")
                 for k, v in params.items()}
        return {**params, **grads}
    return inputs


def _params(fw, data):
    return {k: fw.array(v) for k, v in data.items() if not k.startswith("grad.")}


def _grads(fw, data):
    return {k[5:]: fw.array(v) for k, v in data.items() if k.startswith("grad.")}


def _carried(step, params, grads, state):
    """A step of no arguments that feeds each call's state to the next."""
    box = [state]

    def run():
        new_params, box[0] = step(params, grads, box[0])
        return new_params

    return run


def _builders(name):
    def ftorch_build(fw, mode, data):
        import ftorch as ft
        import ftorch.optim as optim

        opt = (optim.adam(LR) if name == "adam"
               else optim.adamw(LR, weight_decay=WEIGHT_DECAY))
        params, grads = _params(fw, data), _grads(fw, data)

        @ft.jit
        def step(params, grads, state):
            updates, state = opt.update(grads, state, params)
            return optim.apply_updates(params, updates), state

        return _carried(step, params, grads, opt.init(params))

    def mlx_build(fw, mode, data):
        import mlx.core as mx
        import mlx.optimizers as optimizers

        opt = (optimizers.Adam(LR, bias_correction=True) if name == "adam"
               else optimizers.AdamW(LR, weight_decay=WEIGHT_DECAY, bias_correction=True))
        params, grads = _params(fw, data), _grads(fw, data)
        opt.init(params)
        state = [opt.state]

        @partial(mx.compile, inputs=state, outputs=state)
        def step(params, grads):
            return opt.apply_gradients(grads, params)

        return lambda: step(params, grads)

    def jax_build(fw, mode, data):
        import jax
        import optax

        opt = (optax.adam(LR) if name == "adam"
               else optax.adamw(LR, weight_decay=WEIGHT_DECAY))
        params, grads = _params(fw, data), _grads(fw, data)

        @jax.jit
        def step(params, grads, state):
            updates, state = opt.update(grads, state, params)
            return optax.apply_updates(params, updates), state

        return _carried(step, params, grads, opt.init(params))

    builders = {"mlx": mlx_build, "ftorch": ftorch_build}
    try:
        import optax  # noqa: F401
    except ImportError:
        return builders
    return {**builders, "jax": jax_build}


WORKLOADS = tuple(
    Workload(name=f"{name}_{model}", doc=__doc__, modes=("jit",), inputs=_inputs(model),
             builders=_builders(name), targets=(("jit", 1.05),), rtol=1e-5)
    for name in ("adam", "adamw") for model in MODELS)
