"""Run a snippet in a child Python process, for checks whose failure mode is a
crash (a segfault or an abort kills the child, not the test run) or a hang."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

_PRELUDE = ("import os, ftorch as ft, ftorch.numpy as fnp, mlx.core as mx, numpy as np\n"
            # the parent's device (tests/conftest.py)
            "if os.environ.get('FTORCH_TEST_DEVICE') == 'gpu': mx.set_default_device(mx.gpu)\n")


def run_child(source: str, timeout: float = 120, env: dict[str, str] | None = None,
              prelude: bool = True) -> str:
    """Run ``source`` (with ftorch, ftorch.numpy, mlx.core and numpy imported
    as ``ft``, ``fnp``, ``mx``, ``np``, unless ``prelude`` is false: then
    nothing is imported) in a fresh interpreter; return its stdout. A crash,
    a hang past ``timeout`` seconds or an uncaught exception fails with the
    child's output. ``env`` adds environment variables."""
    code = (_PRELUDE if prelude else "") + textwrap.dedent(source)
    try:
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=timeout, env={**os.environ, **(env or {})})
    except subprocess.TimeoutExpired as e:
        raise AssertionError(f"the child process hung for {timeout} s:\n{code}") from e
    if proc.returncode != 0:
        raise AssertionError(
            f"the child process exited with {proc.returncode}:\n{code}\n"
            f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr[-4000:]}")
    return proc.stdout
