"""Plain MLX code costs the same with ftorch imported: ``a + b``, ``a @ b``,
``a * 2.0``, ``a[0]``, ``a[1:3]`` and ``a[idx]`` on 4x4 float32 arrays
(dispatch only: nothing is evaluated in the loop), timed in child processes.
The mlx column's child never imports ftorch; the ftorch column's imports it
first (``mlx_untouched``), and also calls ``ft.grad`` 100 times before
timing (``mlx_untouched_grad``). Both children run the same MLX code, so the
ratio is what importing ftorch (and running transforms) leaves on
``mx.array``."""

from __future__ import annotations

import atexit
import functools
import os
import subprocess
import sys
from pathlib import Path

from benchmarks.workloads import Workload

#: Iterations of the six ops per step.
ITERATIONS = 1000
OPS_PER_ITERATION = 6

# The child: set up, then for each line read from stdin ("<n>") run the ops
# n times and print a checksum of their results (the same on every side).
_CHILD = """
import sys
setup = sys.argv[1]
if setup != "mlx":
    import ftorch as ft, ftorch.numpy as fnp
import mlx.core as mx
import numpy as np
if sys.argv[2] == "gpu":
    mx.set_default_device(mx.gpu)
rng = np.random.default_rng(0)
a, b = (mx.array(rng.standard_normal((4, 4)).astype(np.float32)) for _ in range(2))
idx = mx.array([0, 2])
if setup == "ftorch_grad":
    grad = ft.grad(lambda x: fnp.sum(a @ x * 2.0))
    for _ in range(100):
        mx.eval(grad(b))
for line in sys.stdin:
    for _ in range(int(line)):
        a + b
        a @ b
        a * 2.0
        a[0]
        a[1:3]
        a[idx]
    out = ((a + b).sum() + (a @ b).sum() + (a * 2.0).sum() + a[0].sum() + a[1:3].sum()
           + a[idx].sum())
    print(out.item(), flush=True)
"""


@functools.cache
def _child(setup: str, device: str) -> subprocess.Popen:
    """A child process set up as ``setup`` says ("mlx": MLX alone, "ftorch":
    ftorch imported, "ftorch_grad": and ft.grad called), kept for the rows."""
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(root), os.environ.get("PYTHONPATH")) if p)}
    proc = subprocess.Popen([sys.executable, "-c", _CHILD, setup, device], cwd=root, env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    atexit.register(proc.stdin.close)  # the child exits at the end of its input
    return proc


def _step(setup: str):
    def build(fw, mode, data):
        import mlx.core as mx

        proc = _child(setup, fw.device)

        def step():
            proc.stdin.write(f"{ITERATIONS}\n")
            proc.stdin.flush()
            line = proc.stdout.readline()
            if not line:
                raise RuntimeError(f"the {setup} child process exited (code {proc.poll()})")
            return mx.array(float(line))
        return step
    return build


def inputs(rng):
    return {}  # each child makes its own (the same) arrays


WORKLOADS = tuple(
    Workload(name=name, doc=__doc__, modes=("eager",), inputs=inputs,
             calls_per_step=ITERATIONS * OPS_PER_ITERATION, targets=(("eager", 1.05),),
             builders={"mlx": _step("mlx"), "ftorch": _step(setup)})
    for name, setup in (("mlx_untouched", "ftorch"), ("mlx_untouched_grad", "ftorch_grad")))
