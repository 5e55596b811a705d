"""What ``ftorch.profiler`` costs, off and on. ``eager``: 60 tiny
elementwise ops (sin, multiply, add) on an 8-element vector, dispatch-bound,
the case where a per-op check would show. ``jit``: a jitted SGD step of a
two-layer linear model (64-128-10, squared error), batch 32: no
activation, so that ftorch's graph is MLX's (a ReLU's or tanh's derivative
or lowering would differ). ``profiler_off`` is ftorch as it runs
normally, no profile recording (an eager op tests that no observer is
installed; a jitted call, that none is before its C++ lookup); its ratios
to MLX are the ones to compare with ``chain`` and ``mlp_train``.
``profiler_on`` runs each ftorch step inside ``ftorch.profiler.profile()``
(started and stopped per step), against MLX unprofiled: what recording
costs (eager: each op evaluated on its own, MLX's lazy batching lost)."""

from __future__ import annotations

from benchmarks.workloads import Workload, mlx_side

N_OPS = 60
SIZES, BATCH, LR = (64, 128, 10), 32, 0.05


def inputs(rng):
    data = {"v": rng.standard_normal(8).astype("float32"),
            "x": rng.standard_normal((BATCH, SIZES[0])).astype("float32"),
            "y": rng.standard_normal((BATCH, SIZES[-1])).astype("float32")}
    for i, (n_in, n_out) in enumerate(zip(SIZES[:-1], SIZES[1:])):
        data[f"w{i}"] = (rng.standard_normal((n_in, n_out)) / n_in ** 0.5).astype("float32")
    return data


def _step(fw, mode, data):
    """The unprofiled step of either side (MLX, or ftorch as it is)."""
    side = mlx_side(fw)
    lib = side.lib
    if mode == "eager":
        v = fw.array(data["v"])

        def chain():
            x = v
            for _ in range(N_OPS // 3):
                x = lib.add(lib.multiply(lib.sin(x), 1.01), 0.1)
            return x

        return chain

    def loss(w0, w1, x, y):
        return lib.mean(lib.square(lib.matmul(lib.matmul(x, w0), w1) - y))

    grad = side.grad(loss, argnums=(0, 1))

    @side.jit
    def sgd(w0, w1, x, y):  # arrays, not a list: each side's fastest call
        g0, g1 = grad(w0, w1, x, y)
        return w0 - LR * g0, w1 - LR * g1

    args = [fw.array(data[k]) for k in ("w0", "w1", "x", "y")]
    return lambda: sgd(*args)


def profiled(fw, mode, data):
    import ftorch as ft

    step = _step(fw, mode, data)

    def run():
        with ft.profiler.profile():
            return step()

    return run


WORKLOADS = (
    Workload(name="profiler_off", doc=__doc__, modes=("eager", "jit"), inputs=inputs,
             builders={"mlx": _step, "ftorch": _step}),
    Workload(name="profiler_on", doc=__doc__, modes=("eager", "jit"), inputs=inputs,
             targets=(), builders={"mlx": _step, "ftorch": profiled}),
)
