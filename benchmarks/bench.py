"""ftorch against raw MLX, side by side in one process.

1. ``chain``: 300 tiny elementwise ops, no transform (ftorch.numpy vs
   mlx.core), evaluated once at the end: the per-op dispatch overhead.
   Target: ftorch / raw <= 1.2.
2. ``mlp``: ``value_and_grad`` of a 784-512-512-10 ReLU MLP with a softmax
   cross-entropy loss at batch 128 (``ft.value_and_grad`` with ftorch.numpy
   ops vs ``mx.value_and_grad`` with mlx ops). Target: ftorch / raw <= 1.3.
3. ``per_example``: per-example gradients of a 64-128-10 MLP over a batch
   of 64 (vmap of grad on both sides). Target: ftorch / raw <= 1.3.
4. ``jit_step``: an SGD train step of the MLP of 2., ``ft.jit`` of it against
   ``mx.compile`` of the same step written with ``mx.value_and_grad``.
   Target: ftorch / raw <= 1.05.
5. ``jit_per_example``: ``ft.jit(ft.vmap(ft.grad(loss)))`` against
   ``mx.compile(mx.vmap(mx.grad(loss)))`` on the MLP of 3. Target <= 1.05.
6. ``jit_overhead``: steady-state call of a jitted function of 10 tiny arrays
   (``ft.jit`` vs ``mx.compile``), in microseconds per call. Target <= 2.
7. ``trace_compile``: seconds to stage, simplify and compile (first call) the
   forward and backward pass of a 4-layer transformer block stack, next to
   the first call of ``mx.compile(mx.value_and_grad(...))``.

Each benchmark warms up both sides, then alternates them round by round (so
drifts in machine load hit both alike) and reports medians. The matmuls run
in MLX's CPU BLAS: compare with ``FTORCH_BLAS=reference`` to see its effect.

Run: python benchmarks/bench.py [--quick]
"""

import argparse  # noqa: I001  (ftorch goes before mlx.core: it loads the fast BLAS)
import os
import statistics
import sys
import time

import ftorch as ft
import ftorch.numpy as fnp
from ftorch import _blas
import mlx.core as mx

TARGETS = {"chain": 1.2, "mlp": 1.3, "per_example": 1.3, "jit_step": 1.05,
           "jit_per_example": 1.05, "jit_overhead": 2.0}


# --- timing -------------------------------------------------------------------


def _time(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def compare(name: str, raw, ours, warmup: int, rounds: int, budget_s: float) -> dict:
    # Fewer rounds for slow cases (e.g. the reference BLAS), to stay within budget_s.
    per_pair = _time(raw) + _time(ours)
    warmup = max(1, min(warmup, int(0.2 * budget_s / per_pair)))
    for _ in range(warmup):
        raw()
        ours()
    rounds = max(5, min(rounds, int(0.8 * budget_s / per_pair)))
    t_raw, t_ours = [], []
    for i in range(rounds):
        # Alternate which side goes first.
        if i % 2:
            t_ours.append(_time(ours))
            t_raw.append(_time(raw))
        else:
            t_raw.append(_time(raw))
            t_ours.append(_time(ours))
    r, o = statistics.median(t_raw) * 1e3, statistics.median(t_ours) * 1e3
    ratio = o / r
    ok = "ok" if ratio <= TARGETS[name] else "ABOVE TARGET"
    print(f"{name:<15} raw {r:9.3f} ms   ftorch {o:9.3f} ms   ratio {ratio:5.2f}"
          f"   (target <= {TARGETS[name]}: {ok}; {rounds} rounds)", flush=True)
    return {"raw_ms": r, "ftorch_ms": o, "ratio": ratio}


# --- 1. elementwise chain -----------------------------------------------------


def chain_fns(n_ops: int = 300):
    x0 = mx.random.normal((8,))
    mx.eval(x0)

    def make(lib):
        sin, mul, add = lib.sin, lib.multiply, lib.add

        def run():
            x = x0
            for _ in range(n_ops // 3):
                x = add(mul(sin(x), 1.01), 0.1)
            mx.eval(x)
        return run

    return make(mx), make(fnp)


# --- 2. MLP value_and_grad ----------------------------------------------------


def mlp_setup(batch: int = 128, sizes=(784, 512, 512, 10)):
    """Parameters, data and a loss maker (``lib`` is mlx.core or ftorch.numpy)."""
    mx.random.seed(0)
    params = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        params.append({"w": mx.random.normal((n_in, n_out)) * (2.0 / n_in) ** 0.5,
                       "b": mx.zeros((n_out,))})
    x = mx.random.normal((batch, sizes[0]))
    labels = mx.random.randint(0, sizes[-1], (batch,))
    onehot = (mx.arange(sizes[-1])[None, :] == labels[:, None]).astype(mx.float32)
    mx.eval(params, x, onehot)

    def make_loss(lib):
        def loss(params, x, onehot):
            h = x
            for layer in params[:-1]:
                h = lib.maximum(h @ layer["w"] + layer["b"], 0.0)
            z = h @ params[-1]["w"] + params[-1]["b"]
            return lib.mean(lib.logsumexp(z, axis=-1) - lib.sum(z * onehot, axis=-1))
        return loss

    return params, x, onehot, make_loss


def mlp_fns():
    params, x, onehot, make_loss = mlp_setup()
    raw_vg = mx.value_and_grad(make_loss(mx))
    ours_vg = ft.value_and_grad(make_loss(fnp))

    def raw():
        mx.eval(raw_vg(params, x, onehot))

    def ours():
        mx.eval(ours_vg(params, x, onehot))

    # Same numbers on both sides.
    (lr, gr), (lo, go) = raw_vg(params, x, onehot), ours_vg(params, x, onehot)
    assert abs(lr.item() - lo.item()) < 1e-4 * max(1.0, abs(lr.item())), (lr, lo)
    for a, b in zip(ft.tree.leaves(gr), ft.tree.leaves(go)):
        assert mx.allclose(a, b, rtol=1e-3, atol=1e-5).item()
    return raw, ours


def per_example_setup(batch: int = 64, sizes=(64, 128, 10)):
    mx.random.seed(1)
    params = {"w1": mx.random.normal(sizes[:2]) * 0.1, "b1": mx.zeros((sizes[1],)),
              "w2": mx.random.normal(sizes[1:]) * 0.1}
    x = mx.random.normal((batch, sizes[0]))
    onehot = mx.eye(sizes[-1])[mx.random.randint(0, sizes[-1], (batch,))]
    mx.eval(params, x, onehot)

    def make_loss(lib):
        def loss(p, x, y):
            h = lib.maximum(x @ p["w1"] + p["b1"], 0.0)
            z = h @ p["w2"]
            return lib.logsumexp(z, axis=-1) - lib.sum(z * y, axis=-1)
        return loss

    return params, x, onehot, make_loss


def per_example_fns(jit: bool = False):
    """Per-example gradients of a small MLP: vmap of grad on both sides."""
    params, x, onehot, make_loss = per_example_setup()
    raw_pe = mx.vmap(mx.grad(make_loss(mx)), in_axes=(None, 0, 0))
    ours_pe = ft.vmap(ft.grad(make_loss(fnp)), in_axes=(None, 0, 0))
    if jit:
        raw_pe, ours_pe = mx.compile(raw_pe), ft.jit(ours_pe)
    _check_close(raw_pe(params, x, onehot), ours_pe(params, x, onehot))
    return (lambda: mx.eval(raw_pe(params, x, onehot)),
            lambda: mx.eval(ours_pe(params, x, onehot)))


def _check_close(raw, ours) -> None:
    """Both sides compute the same numbers."""
    for a, b in zip(ft.tree.leaves(raw), ft.tree.leaves(ours)):
        assert mx.allclose(a, b, rtol=1e-3, atol=1e-5).item(), (a, b)


# --- 4.-7. jit ----------------------------------------------------------------


def jit_step_fns(lr: float = 0.01):
    from mlx.utils import tree_map

    params, x, onehot, make_loss = mlp_setup()

    def make_step(value_and_grad, tmap, lib):
        vg = value_and_grad(make_loss(lib))

        def step(params, x, onehot):
            loss, grads = vg(params, x, onehot)
            return loss, tmap(lambda p, g: p - lr * g, params, grads)
        return step

    raw = mx.compile(make_step(mx.value_and_grad, tree_map, mx))
    ours = ft.jit(make_step(ft.value_and_grad, ft.tree.map, fnp))
    _check_close(raw(params, x, onehot), ours(params, x, onehot))
    return lambda: mx.eval(raw(params, x, onehot)), lambda: mx.eval(ours(params, x, onehot))


def jit_overhead_fns(n_args: int = 10, calls: int = 100):
    """``calls`` calls per timing (one call is a few microseconds); results
    are evaluated once at the end, so the time is the call path."""
    xs = [mx.full((2,), float(i)) for i in range(n_args)]
    mx.eval(xs)

    def make(lib):
        def f(*xs):
            total = xs[0]
            for x in xs[1:]:
                total = lib.add(total, x)
            return total
        return f

    raw, ours = mx.compile(make(mx)), ft.jit(make(fnp))
    _check_close(raw(*xs), ours(*xs))

    def run(g):
        def timed():
            outs = [g(*xs) for _ in range(calls)]
            mx.eval(outs)
        return timed
    return run(raw), run(ours)


def transformer_setup(layers: int = 4, seq: int = 64, dim: int = 128, heads: int = 4):
    mx.random.seed(2)
    s = dim ** -0.5
    params = [{"qkv": mx.random.normal((dim, 3 * dim)) * s, "out": mx.random.normal((dim, dim)) * s,
               "up": mx.random.normal((dim, 4 * dim)) * s,
               "down": mx.random.normal((4 * dim, dim)) * s / 2,
               "g1": mx.ones((dim,)), "g2": mx.ones((dim,))} for _ in range(layers)]
    x = mx.random.normal((seq, dim))
    mask = mx.triu(mx.full((seq, seq), -1e9), k=1)
    mx.eval(params, x, mask)

    def make_loss(lib, softmax):
        def norm(h, g):
            mu = lib.mean(h, axis=-1, keepdims=True)
            var = lib.mean(lib.square(h - mu), axis=-1, keepdims=True)
            return (h - mu) * lib.rsqrt(var + 1e-5) * g

        def block(p, h):
            q, k, v = lib.split(norm(h, p["g1"]) @ p["qkv"], 3, axis=-1)
            q, k, v = (lib.transpose(lib.reshape(t, (seq, heads, dim // heads)), (1, 0, 2))
                       for t in (q, k, v))
            a = softmax(q @ lib.swapaxes(k, -1, -2) * (dim // heads) ** -0.5 + mask, -1)
            o = lib.reshape(lib.transpose(a @ v, (1, 0, 2)), (seq, dim))
            h = h + o @ p["out"]
            u = norm(h, p["g2"]) @ p["up"]
            return h + lib.maximum(u, 0.0) @ p["down"]

        def loss(params, x):
            h = x
            for p in params:
                h = block(p, h)
            return lib.mean(lib.square(h))
        return loss

    return params, x, make_loss


def first_call_seconds(side: str) -> dict:
    """Time to the first result of the jitted 4-layer transformer forward and
    backward pass, on one side ("ftorch" or "raw")."""
    from ftorch.nn.functional import softmax

    params, x, make_loss = transformer_setup()
    out = {}
    if side == "ftorch":
        loss = make_loss(fnp, softmax)
        t = time.perf_counter()
        graph = ft.make_graph(ft.value_and_grad(loss))(params, x)
        out["stage_s"], out["equations"] = time.perf_counter() - t, len(graph.eqns)
        fn = ft.jit(ft.value_and_grad(loss))
    else:
        fn = mx.compile(mx.value_and_grad(make_loss(mx, lambda a, axis: mx.softmax(a, axis=axis))))
    t = time.perf_counter()
    mx.eval(fn(params, x))
    out["first_call_s"] = time.perf_counter() - t
    return out


def trace_compile_times() -> dict:
    """Each side in a fresh process with an empty MLX kernel cache (MLX keeps
    compiled CPU kernels under $TMPDIR/mlx, which would favour the second)."""
    import json
    import subprocess
    import tempfile

    result = {}
    for side in ("raw", "ftorch"):
        with tempfile.TemporaryDirectory() as tmp:
            proc = subprocess.run(
                [sys.executable, __file__, "--first-call", side], capture_output=True, text=True,
                env={**os.environ, "TMPDIR": tmp}, check=True)
            result[side] = json.loads(proc.stdout.strip().splitlines()[-1])
    raw, ours = result["raw"], result["ftorch"]
    print(f"{'trace_compile':<15} raw first call {raw['first_call_s']:6.2f} s   ftorch first call "
          f"{ours['first_call_s']:6.2f} s (staging {ours['stage_s']:.3f} s, "
          f"{ours['equations']} equations; cold kernel cache each)", flush=True)
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer rounds (a few seconds)")
    ap.add_argument("--first-call", choices=("raw", "ftorch"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.first_call:  # the worker of trace_compile_times
        import json

        print(json.dumps(first_call_seconds(args.first_call)))
        return 0
    warmup, rounds, budget = (3, 15, 3.0) if args.quick else (10, 100, 20.0)

    st = _blas.state
    blas = f"{st.kind} ({st.path})" if st.status in ("loaded", "preloaded") else \
        f"MLX reference ({st.status})"
    print(f"ftorch {ft.__version__}, mlx {mx.__version__}, device {mx.default_device()}, "
          f"BLAS: {blas}")
    print(f"medians over up to {rounds} alternating rounds after up to {warmup} warm-ups")
    start = time.perf_counter()
    compare("chain", *chain_fns(), warmup=warmup * 3, rounds=rounds * 3, budget_s=budget)
    compare("mlp", *mlp_fns(), warmup=warmup, rounds=rounds, budget_s=budget)
    compare("per_example", *per_example_fns(), warmup=warmup, rounds=rounds, budget_s=budget)
    compare("jit_step", *jit_step_fns(), warmup=warmup, rounds=rounds, budget_s=budget)
    compare("jit_per_example", *per_example_fns(jit=True), warmup=warmup, rounds=rounds,
            budget_s=budget)
    r = compare("jit_overhead", *jit_overhead_fns(), warmup=warmup, rounds=rounds,
                budget_s=budget)
    print(f"{'':<15} per call: mx.compile {r['raw_ms'] * 10:.1f} us, ft.jit "
          f"{r['ftorch_ms'] * 10:.1f} us")
    trace_compile_times()
    print(f"total {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
