"""A process of a multi-process test of ftorch.distributed, started by
``mlx.launch -n 2 --backend ring`` (see tests/test_distributed.py):

    distributed_worker.py check OUT_DIR   collectives' values and derivatives,
                                          then a few data-parallel train steps
                                          whose parameters rank 0 saves to
                                          OUT_DIR/params.safetensors
    distributed_worker.py crash OUT_DIR   rank 1 exits before a collective

A failed check raises, so the process exits non-zero (mlx.launch then
reports it and stops the other rank). ``train`` is also run in a single
process by the test, for the reference parameters.
"""

# ruff: noqa: E402, I001  (ftorch goes before mlx.core: it loads the fast BLAS)
import os
import sys

import ftorch as ft
import ftorch.distributed as dist
import ftorch.numpy as fnp
import ftorch.optim as optim
import mlx.core as mx
import numpy as np

STEPS, GLOBAL_BATCH, FEATURES, HIDDEN = 4, 8, 3, 5


def global_batches() -> list[dict]:
    """The same fixed global batches on every process."""
    rng = np.random.default_rng(0)
    return [{"x": mx.array(rng.normal(size=(GLOBAL_BATCH, FEATURES)).astype(np.float32)),
             "y": mx.array(rng.normal(size=(GLOBAL_BATCH, 1)).astype(np.float32))}
            for _ in range(STEPS)]


def init_params() -> dict:
    rng = np.random.default_rng(1)
    shapes = {"w1": (FEATURES, HIDDEN), "b1": (HIDDEN,), "w2": (HIDDEN, 1), "b2": (1,)}
    return {k: mx.array(0.5 * rng.normal(size=s).astype(np.float32)) for k, s in shapes.items()}


def loss_fn(params, batch):
    h = fnp.tanh(batch["x"] @ params["w1"] + params["b1"])
    return fnp.mean((h @ params["w2"] + params["b2"] - batch["y"]) ** 2)


def train(bucket_bytes=64) -> dict:
    """A few Adam steps, each on this process's shard of the global batch,
    gradients averaged across processes (in buckets of ``bucket_bytes``, or
    one all-reduce per leaf with ``None``) inside the jitted step."""
    opt = optim.adam(0.05)
    params = init_params()
    opt_state = opt.init(params)

    @ft.jit
    def step(params, opt_state, batch):
        grads = ft.grad(loss_fn)(params, dist.shard_batch(batch))
        grads = dist.all_mean_grads(grads, bucket_bytes=bucket_bytes)
        updates, opt_state = opt.update(grads, opt_state, params)
        return optim.apply_updates(params, updates), opt_state

    for batch in global_batches():
        params, opt_state = step(params, opt_state, batch)
    return params


def close(a, b, tol=1e-6):
    np.testing.assert_allclose(np.array(a), np.array(b), rtol=tol, atol=tol)


def check_collectives() -> None:
    r, n = dist.rank(), dist.size()
    x = mx.arange(3, dtype=mx.float32) + r
    rows = np.arange(3)[None] + np.arange(n)[:, None]
    close(dist.all_sum(x), rows.sum(0))
    close(dist.all_mean(x), rows.mean(0))
    close(dist.all_max(x), rows.max(0))
    close(dist.all_min(x), rows.min(0))
    close(dist.all_gather(x), rows)
    close(dist.all_gather(x, tiled=True), rows.reshape(-1))
    close(dist.broadcast({"v": x}, root=n - 1)["v"], rows[-1])
    assert dist.broadcast(mx.array([r == 0])).tolist() == [True]
    close(ft.jit(lambda v: dist.all_sum(2 * v) + 1)(x), 2 * rows.sum(0) + 1)
    close(ft.vmap(dist.all_sum)(mx.stack([x, -x])), np.stack([rows.sum(0), -rows.sum(0)]))
    close(ft.vmap(lambda v: dist.all_gather(v, tiled=True))(mx.stack([x, -x])),
          np.stack([rows.reshape(-1), -rows.reshape(-1)]))

    # Derivatives of the total, over processes, of each process's loss.
    c = float(r + 1)
    y = sum((np.arange(3) + s) * (s + 1) for s in range(n))  # all_sum(x * c)
    for f in (ft.grad(lambda w: fnp.sum(dist.all_sum(w * c) ** 2)),
              ft.jit(ft.grad(lambda w: fnp.sum(dist.all_sum(w * c) ** 2)))):
        close(f(x), 2 * n * y * c)
    weights = [np.arange(n * 3, dtype=np.float32).reshape(n, 3) * (s + 1) for s in range(n)]
    g = ft.grad(lambda w: fnp.sum(dist.all_gather(w) * mx.array(weights[r])))(x)
    close(g, sum(w[r] for w in weights))
    g = ft.grad(lambda w: fnp.sum(dist.broadcast(w, root=0) * c))(x)
    close(g, np.full(3, sum(s + 1.0 for s in range(n))) if r == 0 else np.zeros(3))
    _, t = ft.jvp(dist.all_max, (x,), (mx.ones(3) * c,))
    close(t, np.full(3, float(n)))  # the largest rank holds every maximum

    grads = {"a": x, "b": [x[:2] * 2, mx.ones((2, 2)) * r]}
    means = ft.tree.map(lambda a: np.array(a), dist.all_mean(grads))
    for bucket_bytes in (None, 8, 10 ** 6):
        got = ft.jit(lambda t, b=bucket_bytes: dist.all_mean_grads(t, bucket_bytes=b))(grads)
        ft.tree.map(close, got, means)

    try:
        dist.shard_batch({"x": mx.ones((7, 2))})
    except ValueError as e:
        assert "batch['x'] has 7 examples along axis 0, which 2 processes" in str(e), str(e)
    else:
        raise AssertionError("shard_batch split 7 examples in 2")

    params = init_params()
    dist.check_identical(params)
    try:
        dist.check_identical({**params, "b1": params["b1"] + r})
    except RuntimeError as e:
        assert "x['b1']: ranks [1] differ from rank 0" in str(e), str(e)
        assert "w1" not in str(e), str(e)
    else:
        raise AssertionError("check_identical missed a difference")


def main() -> int:
    mode, out_dir = sys.argv[1], sys.argv[2]
    dist.init()
    r = dist.rank()
    assert dist.size() == 2, dist.size()
    if mode == "crash":
        if r == 1:
            os._exit(1)
        try:
            mx.eval(dist.all_sum(mx.ones(4)))
        except RuntimeError as e:
            print(f"rank {r}: collective failed: {e}", flush=True)
            return 3
        print(f"rank {r}: collective returned", flush=True)
        return 0
    check_collectives()
    params = train()
    dist.check_identical(params)
    per_leaf = train(bucket_bytes=None)
    ft.tree.map(close, per_leaf, params)
    dist.save(os.path.join(out_dir, "params.safetensors"), params)
    print(f"rank {r}: done", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
