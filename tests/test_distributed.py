"""ftorch.distributed: the collectives in one process (identities) and in two
(``mlx.launch -n 2 --backend ring`` on loopback, running
tests/distributed_worker.py), data-parallel training against one process,
and a rank that dies mid-job."""

import os
import pathlib
import random as pyrandom
import signal
import socket
import subprocess
import sys

import mlx.core as mx
import numpy as np
import pytest

import ftorch as ft
import ftorch.distributed as dist
from ftorch.distributed import _buckets, _reduce_in_buckets

TESTS = pathlib.Path(__file__).resolve().parent
LAUNCHER = pathlib.Path(sys.executable).with_name("mlx.launch")


# ----------------------------------------------------------------------------
# One process: every collective is the identity
# ----------------------------------------------------------------------------


def test_one_process_group():
    assert (dist.size(), dist.rank()) == (1, 0)
    assert dist.is_initialized() and dist.init() is dist.init()


@pytest.mark.parametrize("dtype", [mx.float32, mx.float64, mx.int32, mx.bool_, mx.complex64])
def test_collectives_are_identities(dtype):
    x = mx.arange(6).reshape(2, 3).astype(dtype)
    for f in (dist.all_sum, dist.all_max, dist.all_min, dist.broadcast):
        y = f(x)
        assert y.dtype == dtype and mx.array_equal(y, x), f
    assert dist.all_gather(x).shape == (1, 2, 3)
    assert mx.array_equal(dist.all_gather(x, tiled=True), x)
    mean = dist.all_mean(x)
    assert mean.dtype == (dtype if dtype in (mx.float32, mx.float64, mx.complex64)
                          else mx.float32)


def test_pytrees_jit_and_vmap():
    tree = {"a": mx.ones((2, 2)), "b": [mx.arange(3), 2.0]}
    out = dist.all_sum(tree)
    assert ft.tree.structure(out) == ft.tree.structure(tree)
    assert out["b"][1].item() == 2.0
    f = ft.jit(lambda t: dist.all_mean(dist.all_gather(t)))
    assert f(tree)["a"].shape == (1, 2, 2)
    xs = mx.arange(12.0).reshape(4, 3)
    assert mx.array_equal(ft.vmap(lambda v: dist.all_gather(v, tiled=True))(xs), xs)
    assert ft.vmap(dist.all_gather, in_axes=1)(xs).shape == (3, 1, 4)


def test_derivatives_in_one_process():
    x = mx.array([1.0, 3.0, 2.0])
    assert ft.grad(lambda w: (dist.all_sum(w) ** 2).sum())(x).tolist() == [2.0, 6.0, 4.0]
    assert ft.grad(lambda w: dist.all_max(w).sum())(x).tolist() == [1.0, 1.0, 1.0]
    g = ft.jit(ft.grad(lambda w: (dist.broadcast(w) * w).sum()))(x)
    assert g.tolist() == [2.0, 6.0, 4.0]


def test_argument_errors():
    with pytest.raises(ValueError, match="broadcast: root must be an int in \\[0, 1\\)"):
        dist.broadcast(mx.ones(2), root=1)
    with pytest.raises(ValueError, match="all_gather: with tiled=True, x needs at least one"):
        dist.all_gather(mx.array(1.0), tiled=True)
    with pytest.raises(TypeError, match=r"all_sum: x\['a'\] must be an array, got str"):
        dist.all_sum({"a": "text"})
    with pytest.raises(TypeError, match="group must be an mx.distributed.Group"):
        dist.all_sum(mx.ones(2), group="world")
    with pytest.raises(ValueError, match=r"shard_batch: axis 2 is out of range for batch\['x'\]"):
        dist.shard_batch({"x": mx.ones((4, 2))}, axis=2)
    with pytest.raises(TypeError, match=r"all_mean_grads: grads\['n'\] has dtype .*int32"):
        dist.all_mean_grads({"w": mx.ones(2), "n": mx.array(1)})
    with pytest.raises(ValueError, match="all_mean_grads: bucket_bytes must be a positive int"):
        dist.all_mean_grads({"w": mx.ones(2)}, bucket_bytes=0)
    with pytest.raises(TypeError, match=r"check_identical: x\['w'\] is a traced value"):
        ft.jit(lambda w: dist.check_identical({"w": w}) or w)(mx.ones(2))


def test_shard_batch_one_process():
    batch = {"x": mx.ones((6, 2)), "y": np.arange(6)}
    out = dist.shard_batch(batch)
    assert out["x"].shape == (6, 2) and isinstance(out["y"], mx.array)
    assert dist.shard_batch(mx.ones((3, 5)), axis=-1).shape == (3, 5)


def test_bucketing_round_trips_exactly():
    rng = np.random.default_rng(0)
    leaves = [mx.array(rng.normal(size=s).astype(np.float32)) for s in [(3, 4), (5,), (), (7, 2)]]
    leaves.insert(2, mx.array(rng.normal(size=(4,)), mx.float64))
    leaves.append(mx.array(rng.normal(size=(2, 2)), mx.float16))
    # 48 + 20 bytes fill the first float32 bucket; the scalar starts the
    # next; buckets of each dtype, in the order the dtypes first appear.
    assert _buckets(leaves, 68) == [[0, 1], [3, 4], [2], [5]]
    assert _buckets(leaves, 10 ** 6) == [[0, 1, 3, 4], [2], [5]]
    assert _buckets(leaves, 1) == [[0], [1], [3], [4], [2], [5]]
    for size in (1, 68, 10 ** 6):
        calls = []

        def reduce(flat):
            calls.append(flat.shape)
            return flat

        out = _reduce_in_buckets(leaves, size, reduce)
        assert len(calls) == len(_buckets(leaves, size))
        for a, b in zip(out, leaves):
            assert a.dtype == b.dtype and a.shape == b.shape and mx.array_equal(a, b)
    # Staged and scaled, each leaf gets its own piece back.
    out = ft.jit(lambda *ls: _reduce_in_buckets(ls, 68, lambda f: f * 2))(*leaves)
    for a, b in zip(out, leaves):
        assert mx.array_equal(a, b * 2)


def test_save_and_check_identical_one_process(tmp_path):
    tree = {"w": mx.ones((2, 3)), "n": mx.array(3)}
    dist.check_identical(tree)
    dist.save(tmp_path / "t.safetensors", tree)
    assert ft.load(tmp_path / "t.safetensors")["w"].shape == (2, 3)
    with pytest.raises(OSError):
        dist.save(tmp_path / "missing" / "t.safetensors", tree)


def test_fingerprint_sees_any_one_element():
    from ftorch.distributed import _fingerprint

    for dtype in (mx.float32, mx.float64, mx.float16, mx.int8, mx.bool_):
        x = (mx.arange(10) % 2).astype(dtype)
        base = _fingerprint(x).item()
        for i in range(10):
            y = mx.where(mx.arange(10) == i, 1 - x if dtype == mx.bool_ else x + 1, x)
            assert _fingerprint(y.astype(dtype)).item() != base, (dtype, i)


# ----------------------------------------------------------------------------
# Two processes on loopback
# ----------------------------------------------------------------------------

needs_launcher = pytest.mark.skipif(
    not LAUNCHER.exists() or not mx.distributed.is_available(),
    reason="needs mlx.launch and an MLX build with a distributed backend")


def _free_ports(count: int) -> int:
    """A first port of ``count`` consecutive free ones (the ring backend
    listens on one per rank)."""
    for _ in range(100):
        first = pyrandom.randrange(20000, 60000)
        try:
            for p in range(first, first + count):
                with socket.socket() as s:
                    s.bind(("127.0.0.1", p))
            return first
        except OSError:
            continue
    raise RuntimeError("no free ports")


def _launch(script: pathlib.Path, *args: str, timeout: float = 60,
            env: dict | None = None) -> subprocess.CompletedProcess:
    """``mlx.launch -n 2 --backend ring script args`` on loopback; the
    launcher and both ranks are killed if they outlive ``timeout``."""
    cmd = [str(LAUNCHER), "-n", "2", "--backend", "ring", "--starting-port",
           str(_free_ports(2)), "--python", sys.executable, str(script), *args]
    env = {**os.environ, "PYTHONPATH": str(TESTS), **(env or {})}
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          env=env, start_new_session=True) as proc:
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            raise AssertionError(f"the job ran past {timeout} s:\n{out}\n{err[-4000:]}") from None
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


@needs_launcher
def test_two_processes_collectives_and_training_match_one(tmp_path):
    job = _launch(TESTS / "distributed_worker.py", "check", str(tmp_path))
    # mlx.launch exits 0 even when a rank fails: its warnings tell.
    assert "[WARN]" not in job.stderr, job.stdout + job.stderr[-4000:]
    assert "rank 0: done" in job.stdout and "rank 1: done" in job.stdout, job.stdout
    trained = ft.load(tmp_path / "params.safetensors")

    import distributed_worker as worker

    reference = worker.train()  # one process, the whole global batch per step
    for name, value in reference.items():
        np.testing.assert_allclose(np.array(trained[name]), np.array(value), rtol=2e-5,
                                   atol=2e-6, err_msg=name)
    # The training moved the parameters: the comparison is not vacuous.
    assert not np.allclose(np.array(trained["w1"]), np.array(worker.init_params()["w1"]))


@needs_launcher
def test_a_rank_that_dies_ends_the_job(tmp_path):
    job = _launch(TESTS / "distributed_worker.py", "crash", str(tmp_path))
    # Rank 1 exits before the collective; rank 0's all_sum raises ("[ring]
    # connection to a peer was lost") or the launcher stops it first.
    assert "Node with rank 1 exited with code 1" in job.stderr, job.stderr
    assert "collective returned" not in job.stdout, job.stdout


@needs_launcher
def test_train_digits_distributed(tmp_path):
    # One epoch on two processes, MLX's compiler off (no g++ run per kernel).
    job = _launch(TESTS.parent / "examples" / "train_digits.py", "--distributed", "--epochs", "1",
                  "--quiet", "--out-dir", str(tmp_path), "--min-accuracy", "0.3",
                  timeout=120, env={"MLX_DISABLE_COMPILE": "1"})
    assert "[WARN]" not in job.stderr, job.stdout + job.stderr[-4000:]
    out = job.stdout
    # Rank 0 alone prints, and saves.
    assert out.count("reloaded checkpoint: test accuracy") == 1, out
    assert "2 processes, 32 examples each per step" in out, out
    assert [p.name for p in tmp_path.iterdir()] == ["digits.safetensors"]
    reloaded = float(out.split("reloaded checkpoint: test accuracy ")[1].split()[0])
    assert reloaded >= 0.3


def test_jit_never_runs_a_collective_while_it_stages():
    # Processes whose caches miss at different times would disagree on when
    # a folded collective runs: constant folding leaves them in the graph.
    from ftorch.graph import fold_constants

    c = mx.ones(3)
    graph = fold_constants(ft.make_graph(lambda x: x + dist.all_sum(c))(mx.ones(3)))
    assert [e.prim.name for e in graph.eqns] == ["process_all_sum", "add"]
