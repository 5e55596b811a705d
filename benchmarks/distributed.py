"""Data parallelism with ftorch.distributed, on the processes of mlx.launch:

    mlx.launch -n 2 --backend ring --python .venv/bin/python benchmarks/distributed.py

Rank 0 prints three tables (median of --rounds timed calls, after warm-up):

1. The digits CNN's jitted AdamW train step (examples/train_digits.py) on
   one process at B examples, alone (the other processes wait), against the
   data-parallel step on every process at B examples each (a global batch of
   B x processes): gradients averaged with the bucketed all-reduce.
2. All-reduce time and bandwidth of ftorch.distributed.all_sum against
   mx.distributed.all_sum on the same float32 buffers.
3. Averaging the gradients of a model with many small leaves: one
   all-reduce per leaf against buckets (all_mean_grads), jitted.

On one machine the processes share its cores: the data-parallel step's
extra time is contention plus communication, not communication alone.
"""

# ruff: noqa: E402, I001  (ftorch goes before mlx.core: it loads the fast BLAS)
import argparse
import importlib.util
import pathlib
import statistics
import time

import ftorch as ft
import ftorch.distributed as dist
import ftorch.random as random
import mlx.core as mx
import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent


def timed(f, rounds: int, warmup: int = 3, sync: bool = True) -> float:
    """Median seconds per call of ``f`` (which evaluates its results), with
    ``sync`` every process starting each call together."""
    for _ in range(warmup):
        f()
    times = []
    for _ in range(rounds):
        if sync:
            dist.barrier()
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def load_example():
    spec = importlib.util.spec_from_file_location("train_digits",
                                                  ROOT / "examples" / "train_digits.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def train_step_times(batch: int, rounds: int) -> tuple[float, float]:
    digits = load_example()
    model = digits.make_model()
    params, state = model.init(random.key(0), ft.ShapeDtypeStruct((1, 8, 8, 1), mx.float32))
    opt = digits.make_optimizer(1e-3, 1e-4, 1000)
    n = dist.size()
    rng = np.random.default_rng(0)

    def run(step, size):
        b = {"x": mx.array(rng.random((size, 8, 8, 1), dtype=np.float32)),
             "y": mx.array(rng.integers(0, 10, size, dtype=np.int32))}
        carry = [params, state, opt.init(params)]

        def call():
            carry[0], carry[1], carry[2], loss, _ = step(*carry, b, random.key(1))
            mx.eval(carry, loss)

        return call

    single, _ = digits.make_steps(model, opt)
    # Rank 0 alone (timed without barriers); the others wait at the barrier.
    alone = timed(run(single, batch), rounds, sync=False) if dist.rank() == 0 else 0.0
    alone = dist.broadcast(mx.array(alone, mx.float32)).item()
    parallel, _ = digits.make_steps(model, opt, distributed=True)
    together = timed(run(parallel, batch * n), rounds)
    return alone, together


def all_reduce_times(sizes: list[int], rounds: int) -> list[tuple[int, float, float, float]]:
    """Per size: the median times of raw and ftorch all-reduces, and the
    median of their per-round ratios (the two alternate within each round,
    so a drift in machine load favours neither)."""
    rows = []
    for nbytes in sizes:
        x = mx.ones((nbytes // 4,), mx.float32)
        raw_call = lambda: mx.eval(mx.distributed.all_sum(x))  # noqa: E731
        ours_call = lambda: mx.eval(dist.all_sum(x))  # noqa: E731
        pairs = [(timed(raw_call, 1, warmup=1 if r == 0 else 0),
                  timed(ours_call, 1, warmup=1 if r == 0 else 0)) for r in range(3 * rounds)]
        raw = statistics.median(p[0] for p in pairs)
        ours = statistics.median(p[1] for p in pairs)
        rows.append((nbytes, raw, ours, statistics.median(b / a for a, b in pairs)))
    return rows


def bucketing_times(layers: int, width: int, rounds: int) -> tuple[int, int, list]:
    rng = np.random.default_rng(0)
    grads = {f"layer{i}": {"weight": mx.array(rng.random((width, width), dtype=np.float32)),
                           "bias": mx.array(rng.random((width,), dtype=np.float32))}
             for i in range(layers)}
    leaves = ft.tree.leaves(grads)
    nbytes = sum(a.nbytes for a in leaves)
    rows = []
    for label, bucket_bytes in (("one all-reduce per leaf", None),
                                ("buckets of 1 MiB", 2 ** 20),
                                ("buckets of 25 MiB (default)", dist.DEFAULT_BUCKET_BYTES)):
        f = ft.jit(lambda g, b=bucket_bytes: dist.all_mean_grads(g, bucket_bytes=b))
        count = len(leaves) if bucket_bytes is None else len(
            dist._buckets(leaves, bucket_bytes))
        rows.append((label, count, timed(lambda: mx.eval(f(grads)), rounds)))
    return len(leaves), nbytes, rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20, help="timed calls per measurement")
    parser.add_argument("--batch", type=int, default=64, help="examples per process per step")
    parser.add_argument("--layers", type=int, default=100,
                        help="layers of the many-leaf model (2 leaves each)")
    parser.add_argument("--width", type=int, default=64, help="its width")
    args = parser.parse_args()
    dist.init()
    n, rank = dist.size(), dist.rank()
    say = print if rank == 0 else (lambda *a, **k: None)
    say(f"{n} processes (mx.distributed), MLX {mx.__version__}, {mx.default_device()}")

    alone, together = train_step_times(args.batch, args.rounds)
    say(f"\n1. digits CNN train step, {args.batch} examples per process")
    say(f"   {'one process alone':<44}{alone * 1e3:9.2f} ms")
    say(f"   {f'{n} processes, data-parallel (global {args.batch * n})':<44}"
        f"{together * 1e3:9.2f} ms   x{together / alone:.2f}")

    rows = all_reduce_times([2 ** 10, 2 ** 16, 2 ** 20, 2 ** 24], args.rounds)
    say("\n2. all-reduce of a float32 buffer")
    say(f"   {'bytes':>10} {'mx.distributed':>15} {'ftorch':>12} {'ratio':>7} {'GB/s':>7}"
        "   (ratio: median of paired rounds)")
    for nbytes, raw, ours, ratio in rows:
        say(f"   {nbytes:>10,} {raw * 1e6:>12.1f} us {ours * 1e6:>9.1f} us {ratio:>7.3f} "
            f"{nbytes / ours / 1e9:>7.2f}")

    count, nbytes, rows = bucketing_times(args.layers, args.width, args.rounds)
    say(f"\n3. averaging gradients of {count} leaves ({nbytes / 2 ** 20:.2f} MiB), jitted")
    base = rows[0][2]
    for label, k, t in rows:
        say(f"   {label:<30}{k:>5} all-reduces {t * 1e3:9.2f} ms   x{t / base:.2f}")


if __name__ == "__main__":
    main()
