"""ftorch against raw MLX, side by side in one process.

1. ``chain``: 300 tiny elementwise ops, no transform (ftorch.numpy vs
   mlx.core), evaluated once at the end: the per-op dispatch overhead.
   Target: ftorch / raw <= 1.2.
2. ``mlp``: ``value_and_grad`` of a 784-512-512-10 ReLU MLP with a softmax
   cross-entropy loss at batch 128 (``ft.value_and_grad`` with ftorch.numpy
   ops vs ``mx.value_and_grad`` with mlx ops). Target: ftorch / raw <= 1.3.
3. ``per_example``: per-example gradients of a 64-128-10 MLP over a batch
   of 64 (vmap of grad on both sides). Target: ftorch / raw <= 1.3.

Each benchmark warms up both sides, then alternates them round by round (so
drifts in machine load hit both alike) and reports medians. The matmuls run
in MLX's CPU BLAS: compare with ``FTORCH_BLAS=reference`` to see its effect.

Run: python benchmarks/bench.py [--quick]
"""

import argparse  # noqa: I001  (ftorch goes before mlx.core: it loads the fast BLAS)
import statistics
import sys
import time

import ftorch as ft
import ftorch.numpy as fnp
from ftorch import _blas
import mlx.core as mx

TARGETS = {"chain": 1.2, "mlp": 1.3, "per_example": 1.3}


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
    print(f"{name:<6} raw {r:9.3f} ms   ftorch {o:9.3f} ms   ratio {ratio:5.2f}"
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


def mlp_fns(batch: int = 128, sizes=(784, 512, 512, 10)):
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
        lse = getattr(lib, "logsumexp", None)
        mean = getattr(lib, "mean", None)

        def loss(params, x, onehot):
            h = x
            for layer in params[:-1]:
                h = lib.maximum(h @ layer["w"] + layer["b"], 0.0)
            z = h @ params[-1]["w"] + params[-1]["b"]
            # Logits stay small at this initialisation, so the plain form is safe.
            norm = lse(z, axis=-1) if lse is not None else lib.log(lib.sum(lib.exp(z), axis=-1))
            nll = norm - lib.sum(z * onehot, axis=-1)
            return mean(nll) if mean is not None else lib.sum(nll) / nll.shape[0]
        return loss

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


def per_example_fns(batch: int = 64, sizes=(64, 128, 10)):
    """Per-example gradients of a small MLP: vmap of grad on both sides."""
    from ftorch.transforms.vmap import vmap

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

    raw_pe = mx.vmap(mx.grad(make_loss(mx)), in_axes=(None, 0, 0))
    ours_pe = vmap(ft.grad(make_loss(fnp)), in_axes=(None, 0, 0))
    for k, v in raw_pe(params, x, onehot).items():
        assert mx.allclose(v, ours_pe(params, x, onehot)[k], rtol=1e-3, atol=1e-5).item()
    return (lambda: mx.eval(raw_pe(params, x, onehot)),
            lambda: mx.eval(ours_pe(params, x, onehot)))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer rounds (a few seconds)")
    args = ap.parse_args(argv)
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
    print(f"total {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
