"""Global settings: ``ft.config``.

>>> import ftorch as ft
>>> ft.config.log_compiles = True    # log each jit trace, and why it happened
>>> ft.config.log_compiles = False

``FTORCH_LOG_COMPILES=1`` in the environment turns the log on at import.
``ft.config.check_graphs = True`` (or ``FTORCH_CHECK_GRAPHS=1``) typechecks
every graph jit stages or derives (``ftorch.graph.typecheck``), so that a bad
rule or pass is caught at the equation it breaks; the test suite turns it on.
Log records go to the ``ftorch.jit`` logger at WARNING level, so they show
without any logging setup.

``ft.config.jit_compile_after`` says when a jitted function's graph is handed
to ``mx.compile`` (``FTORCH_JIT_COMPILE_AFTER``: seconds, or ``never``):
``0`` from the first call, ``s`` once a call signature has been in use for
``s`` seconds (until then its graph runs as MLX's lazy graph of the lowered
ops, with no kernel compilation), ``None`` never; ``"auto"`` (the default)
is 0 on Metal and CUDA and ``CPU_COMPILE_AFTER`` seconds on the CPU, where
MLX builds each fused kernel with ``g++`` (see ``ft.jit``).
``ft.config.jit_max_compile_depth`` (``FTORCH_JIT_MAX_COMPILE_DEPTH``: a
number of equations, or ``none``) is the deepest graph handed to
``mx.compile``, which would overflow the C stack on deeper ones (a long
chain of ops; a long ``lax.scan`` runs rolled, so it does not count): those
run uncompiled whatever the policy, with a warning on the ``ftorch.jit``
logger.

``ft.config.debug_nans`` / ``debug_infs`` (``FTORCH_DEBUG_NANS=1``,
``FTORCH_DEBUG_INFS=1``; ``ft.debug_nans()`` for a block) raise
``FloatingPointError`` at the operation that makes the first NaN (infinity),
naming it (``ftorch.transforms.float_checks``).

``ft.config.fast_cpu_math`` (default ``True``; ``FTORCH_FAST_CPU_MATH=0`` turns
it off) lets jit lower float32 ``tanh``, ``sigmoid``, ``erf`` and ``gelu`` on
the CPU to the approximations of ``ftorch.backend.cpu_math`` (a few ulps,
several times faster than MLX's in compiled kernels); off, jit emits MLX's
own ops. Either way both tiers of ``jit_compile_after`` run the same lowering,
so a signature gives the same bits before and after it compiles. Measured on
2 cores (ms a step, jitted, compiled / uncompiled tier): a tanh RNN
(``rnn``) 20 / 71 with the fast math, 26 / 40 without; ``rnn_scan`` 121 /
203 against 133 / 148; a GELU transformer 54 / 68 against 64 / 75; no
difference without these functions (``mlp_train``). It stays on: compiled
steps, where long runs spend their time, are 10-30% faster, and the
uncompiled tier runs only a signature's first minute. A jitted function
traces again when it changes.
"""

from __future__ import annotations

import os

#: ``jit_compile_after="auto"`` on the CPU, in seconds. Measured on the flagship
#: (benchmarks/README.md): compiling its step costs about 25 s of g++ and saves
#: about 27% per step afterwards, so it pays after about 90 s of uncompiled use;
#: waiting 60 s bounds what a run that stops just after compiling loses.
CPU_COMPILE_AFTER = 60.0

#: ``jit_max_compile_depth``'s default: the deepest graph (in equations, see
#: ``ftorch.graph.depth``) that jit hands to ``mx.compile``, whose passes
#: recurse once per level on the C stack (about 190 bytes a level). Measured
#: on Linux x86-64 with an 8 MB stack: a raw MLX chain crashes from about
#: 43,600 ops deep; a tanh RNN's value and gradient (11 equations a step here,
#: about 5 MLX levels) ran at 8,000 steps and crashed from 9,000. A quarter of
#: the raw limit leaves room for equations that lower to several MLX ops; a
#: thread with a smaller stack (512 kB on macOS's non-main threads) may need
#: a lower setting.
MAX_COMPILE_DEPTH = 10_000


class Config:
    __slots__ = ("log_compiles", "check_graphs", "jit_compile_after", "jit_max_compile_depth",
                 "fast_cpu_math", "disable_jit", "_debug_nans", "_debug_infs", "_watchers")

    def __init__(self) -> None:
        self.log_compiles: bool = _flag("FTORCH_LOG_COMPILES")
        self.check_graphs: bool = _flag("FTORCH_CHECK_GRAPHS")
        self.jit_compile_after: float | str | None = _seconds("FTORCH_JIT_COMPILE_AFTER")
        self.jit_max_compile_depth: int | None = _depth("FTORCH_JIT_MAX_COMPILE_DEPTH")
        self.fast_cpu_math: bool = os.environ.get("FTORCH_FAST_CPU_MATH", "1") != "0"
        self.disable_jit: bool = _flag("FTORCH_DISABLE_JIT")
        self._debug_nans: bool = _flag("FTORCH_DEBUG_NANS")
        self._debug_infs: bool = _flag("FTORCH_DEBUG_INFS")
        # Called when a setting that other modules act on changes (the NaN
        # checks install an observer).
        self._watchers: list = []

    @property
    def debug_nans(self) -> bool:
        """Raise ``FloatingPointError`` where an operation first makes a NaN
        (``ftorch.transforms.float_checks``); ``FTORCH_DEBUG_NANS=1``."""
        return self._debug_nans

    @debug_nans.setter
    def debug_nans(self, value: bool) -> None:
        self._debug_nans = bool(value)
        for watcher in self._watchers:
            watcher()

    @property
    def debug_infs(self) -> bool:
        """Raise ``FloatingPointError`` where an operation first makes an
        infinity; ``FTORCH_DEBUG_INFS=1``."""
        return self._debug_infs

    @debug_infs.setter
    def debug_infs(self, value: bool) -> None:
        self._debug_infs = bool(value)
        for watcher in self._watchers:
            watcher()

    def __repr__(self) -> str:
        return (f"Config(log_compiles={self.log_compiles}, check_graphs={self.check_graphs}, "
                f"jit_compile_after={self.jit_compile_after!r}, "
                f"jit_max_compile_depth={self.jit_max_compile_depth!r}, "
                f"fast_cpu_math={self.fast_cpu_math}, disable_jit={self.disable_jit}, "
                f"debug_nans={self.debug_nans}, debug_infs={self.debug_infs})")


def _flag(name: str) -> bool:
    return os.environ.get(name, "") not in ("", "0")


def _seconds(name: str) -> float | str | None:
    value = os.environ.get(name, "").strip().lower()
    if value in ("", "auto"):
        return "auto"
    if value == "never":
        return None
    try:
        return float(value)
    except ValueError:
        raise ValueError(f"{name} must be a number of seconds, 'never' or 'auto', got "
                         f"{value!r}") from None


def _depth(name: str) -> int | None:
    value = os.environ.get(name, "").strip().lower()
    if value == "":
        return MAX_COMPILE_DEPTH
    if value == "none":
        return None
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"{name} must be a number of equations or 'none', got "
                         f"{value!r}") from None


def seconds_before_compile(value: float | str | None) -> float | None:
    """Seconds of use after which a jitted signature is compiled (None:
    never) for a ``jit_compile_after`` setting, ``"auto"`` resolved for the
    default device."""
    if value == "auto":
        import mlx.core as mx

        return CPU_COMPILE_AFTER if mx.default_device() == mx.cpu else 0.0
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ValueError(f"jit: compile_after must be a number of seconds >= 0, None (never) "
                         f"or 'auto', got {value!r}")
    return float(value)


config = Config()
