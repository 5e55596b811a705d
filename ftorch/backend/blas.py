"""Make MLX's CPU matmul use an optimized BLAS on Linux.

The Linux ``mlx[cpu]`` wheel links a bundled reference BLAS/LAPACK
(``mlx_cpu.libs/libblas-*.so``, ``liblapack-*.so``), roughly 40x slower than an
optimized BLAS for a float32 matmul. ``libmlx.so`` imports ``cblas_sgemm``,
``cblas_dgemm``, ``sgetrf_`` and the other BLAS/LAPACK entry points as plain,
unversioned dynamic symbols, and the dynamic linker looks such symbols up in
the process's global scope before the library's own dependencies. So a BLAS
loaded with ``RTLD_GLOBAL`` before ``mlx.core`` is imported supplies them.

``load()`` (run by ``import ftorch``) looks for one, in this order:

1. ``FTORCH_BLAS``: ``reference`` (or ``off``) keeps MLX's own BLAS and turns
   all of this off; ``openblas`` or ``mkl`` limits the search to that kind;
   any other value is the path of a shared library to load.
2. A system OpenBLAS, found by the dynamic loader (``libopenblasp.so.0``,
   ``libopenblas.so.0``; Debian/Ubuntu: ``apt-get install libopenblas0-pthread``).
3. MKL installed from PyPI (``pip install "ftorch[blas]"``):
   ``libmkl_rt.so.*`` in ``sys.prefix/lib``, then in the user base's ``lib``.

A library already in the global scope (``LD_PRELOAD``) is used as it is. The
result is checked, without timing anything: ``cblas_sgemm`` looked up in the
global scope (``dlsym(RTLD_DEFAULT)``) must resolve, by ``dladdr``, into the
library just loaded. What happened is kept in ``state``, which
``ftorch.info()`` reports. Failures only warn (once), never raise.

Then it sets the library's thread count (``thread_policy``), through the
library's own call (``MKL_Set_Num_Threads``, ``openblas_set_num_threads``),
which holds process-wide, MLX's worker thread included:

1. ``FTORCH_BLAS_THREADS=<n>``: ``n`` threads.
2. A thread variable the library reads itself (``MKL_NUM_THREADS``,
   ``OPENBLAS_NUM_THREADS``, ``OMP_NUM_THREADS``, ...): left to the library.
3. Otherwise one thread fewer than the usable cores (at least 1, at most the
   library's own default): 1 on a 2-core machine. MLX runs CPU ops on a
   worker thread while the Python thread builds and dispatches the graph,
   and an idle MKL thread spins for 200 ms after each call (OpenBLAS's for
   about 0.1 s), so a second BLAS thread needs a core of its own. Measured
   on 2 cores (``benchmarks/README.md``, "BLAS threads"): on an otherwise
   idle machine a second thread made large matmuls up to 2x and an MLP
   train step 1.6x faster, an RNN step 1.1x slower; beside one busy process
   MKL's slowed every row (up to 1.4x); beside two, it slowed the RNN and
   transformer steps 25-120x (MKL) and the transformer and MLP steps 3x
   (OpenBLAS), each call waiting for a descheduled partner thread.
   Larger machines follow the same rule, unmeasured.

``set_threads(n)`` changes the count at run time.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Mapping
from typing import NamedTuple

__all__ = ["BlasState", "state", "load", "resolve", "gflops", "ThreadChoice", "thread_policy",
           "usable_cores", "set_threads", "threads"]

_ENV = "FTORCH_BLAS"
_OFF = ("reference", "off")
_OPENBLAS_SONAMES = ("libopenblasp.so.0", "libopenblas.so.0")
_FIX = ('pip install "ftorch[blas]" (x86_64) or apt-get install libopenblas0-pthread; '
        f"{_ENV}=reference silences this")
_THREADS_ENV = "FTORCH_BLAS_THREADS"
#: Per library family: its thread-count getter and setter, and the variables
#: it reads itself (those it obeys first, first).
_CONTROLS = {
    "mkl": ("MKL_Get_Max_Threads", "MKL_Set_Num_Threads",
            ("MKL_NUM_THREADS", "MKL_DOMAIN_NUM_THREADS", "OMP_NUM_THREADS")),
    "openblas": ("openblas_get_num_threads", "openblas_set_num_threads",
                 ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")),
    "blis": ("bli_thread_get_num_threads", "bli_thread_set_num_threads",
             ("BLIS_NUM_THREADS", "OMP_NUM_THREADS")),
}


class BlasState:
    """What ``load()`` did, for ``ftorch.info()``.

    ``status`` is one of ``loaded`` (an optimized BLAS was loaded and verified),
    ``preloaded`` (one was already in the global scope), ``disabled``
    (``FTORCH_BLAS=reference``), ``not_found``, ``too_late`` (``mlx.core`` was
    imported first), ``failed`` (loaded but not verified), ``not_linux``, or
    ``pending`` before ``load()`` ran.

    ``threads`` is the library's thread count after ``load()`` (or the last
    ``set_threads``), ``threads_source`` who chose it: ``default-policy``,
    ``env`` (a variable the library reads itself), ``ftorch``
    (``FTORCH_BLAS_THREADS`` or ``set_threads``), ``None`` where it cannot be
    set; ``threads_reason`` says why, and ``blocktime`` how long the library's
    idle threads spin after a call.
    """

    __slots__ = ("status", "kind", "path", "source", "verified", "verification",
                 "reason", "tried", "warning", "threads", "threads_source", "threads_reason",
                 "blocktime", "handle")

    def __init__(self) -> None:
        self.status = "pending"
        self.kind: str | None = None      # openblas, mkl, blis, custom
        self.path: str | None = None      # file the optimized BLAS was loaded from
        self.source: str | None = None    # FTORCH_BLAS, system, pypi, preloaded
        self.verified = False
        self.verification: str | None = None
        self.reason: str | None = None
        self.tried: list[tuple[str, str]] = []  # (candidate, why it was not used)
        self.warning: str | None = None
        self.threads: int | None = None
        self.threads_source: str | None = None  # default-policy, env, ftorch
        self.threads_reason: str | None = None
        self.blocktime: str | None = None
        self.handle = None                # ctypes.CDLL of the loaded library

    def as_dict(self) -> dict:
        d = {k: getattr(self, k) for k in self.__slots__ if k != "handle"}
        d["tried"] = list(self.tried)
        return d

    def __repr__(self) -> str:
        return f"BlasState({self.as_dict()!r})"


state = BlasState()


def _kind(path: str) -> str:
    name = os.path.basename(path).lower()
    for kind in ("openblas", "mkl", "blis"):
        if kind in name:
            return kind
    return "custom"


class _Dl:
    """dlsym/dladdr through ctypes, made on first use (only on Linux)."""

    def __init__(self) -> None:
        import ctypes

        class DlInfo(ctypes.Structure):
            _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                        ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]

        self.ctypes = ctypes
        self.DlInfo = DlInfo
        # dlopen(NULL): symbol lookups through it search the global scope,
        # i.e. dlsym(RTLD_DEFAULT, ...), which is where libmlx's symbols bind.
        self.default = ctypes.CDLL(None)
        try:
            dladdr = self.default.dladdr
        except AttributeError:  # glibc < 2.34 keeps it in libdl
            dladdr = ctypes.CDLL("libdl.so.2").dladdr
        dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(DlInfo)]
        dladdr.restype = ctypes.c_int
        self.dladdr = dladdr

    def where(self, lib, symbol: str = "cblas_sgemm") -> tuple[str, int] | None:
        """(file, base address) of the object defining ``symbol`` as seen from ``lib``."""
        try:
            fn = getattr(lib, symbol)
        except AttributeError:
            return None
        info = self.DlInfo()
        addr = self.ctypes.cast(fn, self.ctypes.c_void_p).value
        if not self.dladdr(addr, self.ctypes.byref(info)) or not info.dli_fname:
            return None
        return os.path.realpath(os.fsdecode(info.dli_fname)), info.dli_fbase


_dl: _Dl | None = None


def _get_dl() -> _Dl:
    global _dl
    if _dl is None:
        _dl = _Dl()
    return _dl


def _mkl_candidates() -> list[str]:
    dirs = [os.path.join(sys.prefix, "lib")]
    try:
        import site

        user = os.path.join(site.getuserbase(), "lib")
        if user not in dirs:
            dirs.append(user)
    except Exception:  # site can be disabled (python -S)
        pass
    found = []
    for d in dirs:
        try:
            names = os.listdir(d)
        except OSError:
            continue
        # Newest soname first: MKL 2021-2025 ship libmkl_rt.so.2, 2026 .so.3.
        found += [os.path.join(d, n) for n in sorted(names, reverse=True)
                  if n == "libmkl_rt.so" or n.startswith("libmkl_rt.so.")]
    return found


def _candidates(request: str | None) -> list[tuple[str, str]]:
    """(library, source) pairs to try in order; ``request`` is FTORCH_BLAS.

    An explicit path comes first and the automatic search still follows it, so
    a bad path falls back (with a warning) instead of leaving MLX slow.
    """
    out = []
    if request and request not in ("openblas", "mkl"):
        out.append((request, _ENV))
        request = None
    if request in (None, "openblas"):
        out += [(name, "system") for name in _OPENBLAS_SONAMES]
    if request in (None, "mkl"):
        out += [(path, "pypi") for path in _mkl_candidates()]
    return out


def _try(dl: _Dl, lib: str, source: str) -> str | None:
    """Load ``lib`` globally and verify it; record success, or return why not."""
    ctypes = dl.ctypes
    try:
        # Locally first, so a library without cblas_sgemm stays out of the
        # global scope; reopening with RTLD_GLOBAL then promotes it.
        handle = ctypes.CDLL(lib, mode=os.RTLD_LOCAL | os.RTLD_NOW)
    except OSError as e:
        return str(e)
    own = dl.where(handle)
    if own is None:
        return "does not export cblas_sgemm"
    handle = ctypes.CDLL(lib, mode=os.RTLD_GLOBAL | os.RTLD_NOW)
    seen = dl.where(dl.default)
    state.handle = handle
    state.path = own[0]
    state.kind = _kind(own[0])
    state.source = source
    if seen is not None and seen[1] == own[1]:
        state.status = "loaded"
        state.verified = True
        state.verification = f"dlsym(RTLD_DEFAULT, 'cblas_sgemm') -> dladdr: {seen[0]}"
    else:
        state.status = "failed"
        state.verification = ("dlsym(RTLD_DEFAULT, 'cblas_sgemm') -> dladdr: "
                              f"{seen[0] if seen else 'not found'}")
        state.reason = f"cblas_sgemm does not resolve to {own[0]}"
    return None


def load() -> BlasState:
    """Load an optimized BLAS for MLX if possible (see the module docstring).

    Runs once, before ``mlx.core`` is imported; later calls return ``state``.
    """
    if state.status != "pending":
        return state
    request = os.environ.get(_ENV, "").strip() or None
    if request is not None and request.lower() in _OFF + ("openblas", "mkl"):
        request = request.lower()
    if not sys.platform.startswith("linux"):
        state.status = "not_linux"
        state.reason = "MLX uses the platform's BLAS (Accelerate on macOS)"
        return state
    if request in _OFF:
        state.status = "disabled"
        state.reason = f"{_ENV}={request}"
        return state
    try:
        _load(request)
    except Exception as e:  # never let this break `import ftorch`
        state.status = "failed"
        state.reason = f"{type(e).__name__}: {e}"
    if state.handle is not None:
        try:
            _apply_threads()
        except Exception as e:  # the BLAS stays loaded with the library's own threads
            state.threads_reason = f"not set: {type(e).__name__}: {e}"
    explicit_failed = bool(state.tried) and state.tried[0][0] == request
    if state.status in ("not_found", "too_late", "failed") or explicit_failed:
        _warn(request)
    return state


def _load(request: str | None) -> None:
    dl = _get_dl()
    pre = dl.where(dl.default)
    if pre is not None:
        state.status = "preloaded"
        state.path = pre[0]
        state.kind = _kind(pre[0])
        state.source = "preloaded"
        state.verified = True
        state.verification = f"dlsym(RTLD_DEFAULT, 'cblas_sgemm') -> dladdr: {pre[0]}"
        try:  # a handle to the library already there, for its thread count
            state.handle = dl.ctypes.CDLL(pre[0], mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
        except OSError:
            pass
        return
    if "mlx.core" in sys.modules:
        state.status = "too_late"
        state.reason = "mlx.core was imported before ftorch"
        return
    for lib, source in _candidates(request):
        why = _try(dl, lib, source)
        if why is None:
            return
        state.tried.append((lib, why))
    state.status = "not_found"
    state.reason = "no optimized BLAS found"


def _warn(request: str | None) -> None:
    if state.status == "too_late":
        msg = ("ftorch: mlx.core was imported before ftorch, so MLX keeps its slow reference "
               f"BLAS; import ftorch first ({_ENV}=reference silences this)")
    elif state.status == "failed":
        msg = (f"ftorch: loading an optimized BLAS failed ({state.reason}); MLX may use its "
               f"slow reference BLAS ({_ENV}=reference silences this)")
    else:
        bad = ""
        if state.tried and state.tried[0][0] == request:
            bad = f"{_ENV}={request} could not be used ({state.tried[0][1]}); "
        if state.status in ("loaded", "preloaded"):
            msg = f"ftorch: {bad}using {state.path} instead"
        else:
            what = f"no {request} found" if request in ("openblas", "mkl") else \
                "no optimized BLAS found"
            msg = f"ftorch: {bad}{what}, so MLX uses its slow reference BLAS; fix: {_FIX}"
    state.warning = msg
    _emit(msg)


def _emit(msg: str) -> None:
    # Point the warning at the user's `import ftorch`, past ftorch's and
    # importlib's own frames.
    here = os.path.dirname(os.path.abspath(__file__))
    frame, level = sys._getframe(0), 1
    while frame.f_back is not None and (frame.f_code.co_filename.startswith(here)
                                        or frame.f_code.co_filename.startswith("<frozen")):
        frame, level = frame.f_back, level + 1
    warnings.warn(msg, RuntimeWarning, stacklevel=level)


def resolve() -> str | None:
    """The file that MLX's ``cblas_sgemm`` binds to now (``None`` if unknown).

    The global scope comes first (an optimized BLAS loaded by ``load()``), then
    the libraries ``libmlx.so`` itself depends on (MLX's reference BLAS).
    """
    if not sys.platform.startswith("linux"):
        return None
    dl = _get_dl()
    seen = dl.where(dl.default)
    if seen is not None:
        return seen[0]
    import mlx

    for d in mlx.__path__:
        lib = os.path.join(d, "lib", "libmlx.so")
        if os.path.exists(lib):
            try:
                handle = dl.ctypes.CDLL(lib, mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
            except OSError:
                continue
            found = dl.where(handle)
            return found[0] if found else None
    return None


def usable_cores() -> int:
    """CPUs this process may run on: its affinity mask where the platform
    has one (``taskset``, cpusets), else ``os.cpu_count()``. CPU quotas
    (``docker --cpus``) are not seen: set ``FTORCH_BLAS_THREADS`` there."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


class ThreadChoice(NamedTuple):
    """What ``thread_policy`` decided."""

    threads: int | None   # to set; None: leave the library's own setting
    source: str           # ftorch, env, default-policy
    reason: str
    warning: str | None = None


def thread_policy(cores: int, env: Mapping[str, str], family: str = "mkl",
                  library_default: int | None = None) -> ThreadChoice:
    """The BLAS thread count for ``cores`` usable cores and environment ``env``.

    ``FTORCH_BLAS_THREADS=<n>`` wins; then a variable that the library
    ``family`` (``mkl``, ``openblas``, ``blis``) reads itself, left to it;
    else ``cores - 1``, at least 1 and at most ``library_default`` (the
    library's own count, where known). See the module docstring for why.

    >>> thread_policy(2, {})[:3]
    (1, 'default-policy', '2 usable cores: 1 thread')
    >>> thread_policy(16, {}, library_default=8).threads
    8
    >>> thread_policy(2, {"OMP_NUM_THREADS": "2"})[:2]
    (None, 'env')
    >>> thread_policy(2, {"OMP_NUM_THREADS": "2", "FTORCH_BLAS_THREADS": "2"})[:2]
    (2, 'ftorch')
    """
    request = env.get(_THREADS_ENV, "").strip()
    warning = None
    if request:
        if request.isdigit() and int(request) >= 1:
            return ThreadChoice(int(request), "ftorch", f"{_THREADS_ENV}={request}")
        warning = f"ftorch: {_THREADS_ENV}={request!r} is not a positive integer; ignored"
    own = _CONTROLS.get(family, (None, None, ("OMP_NUM_THREADS",)))[2]
    for var in own:
        if env.get(var, "").strip():
            return ThreadChoice(None, "env", f"{var}={env[var].strip()}", warning)
    n = max(1, cores - 1)
    why = f"{cores} usable cores: {n} thread{'s' * (n != 1)}"
    if library_default is not None and 1 <= library_default < n:
        n = library_default
        why = f"{cores} usable cores: {n} threads (the library's own default)"
    return ThreadChoice(n, "default-policy", why, warning)


def _family(handle) -> str | None:
    """Which library's thread calls ``handle`` exports (``None``: none known)."""
    if handle is None:
        return None
    for family, (getter, setter, _) in _CONTROLS.items():
        if hasattr(handle, getter) and hasattr(handle, setter):
            return family
    return None


def _set(family: str, n: int) -> None:
    ctypes = _get_dl().ctypes
    # BLIS takes a dim_t (64-bit); MKL and OpenBLAS an int.
    arg = ctypes.c_int64(n) if family == "blis" else ctypes.c_int(n)
    getattr(state.handle, _CONTROLS[family][1])(arg)


def _blocktime(family: str | None, n: int | None, env: Mapping[str, str]) -> str | None:
    """How long the library's idle threads spin after a call, in words."""
    if family is None:
        return None
    if n == 1:
        return "none (1 thread: no thread pool)"
    if family == "mkl":
        layer = env.get("MKL_THREADING_LAYER", "").strip()
        if layer and layer.upper() != "INTEL":
            return f"that of MKL_THREADING_LAYER={layer}"
        for var in ("KMP_BLOCKTIME", "OMP_WAIT_POLICY"):
            if env.get(var, "").strip():
                return f"{var}={env[var].strip()}"
        return "200 ms (Intel OpenMP's default; KMP_BLOCKTIME sets it)"
    if family == "openblas":
        if env.get("OPENBLAS_THREAD_TIMEOUT", "").strip():
            return f"OPENBLAS_THREAD_TIMEOUT={env['OPENBLAS_THREAD_TIMEOUT'].strip()}"
        return "about 0.1 s (OpenBLAS's default, 2**28 cycles)"
    return None


def _apply_threads() -> None:
    """Set the loaded library's thread count by ``thread_policy`` (in ``load()``)."""
    family = _family(state.handle)
    if family is None:
        state.threads_reason = "the library has no thread-count call ftorch knows"
        return
    choice = thread_policy(usable_cores(), os.environ, family, threads())
    if choice.warning:
        _emit(choice.warning)
    if choice.threads is not None:
        _set(family, choice.threads)
    _record(family, choice.threads, choice.source, choice.reason)
    if choice.warning:
        state.threads_reason += f" ({choice.warning.removeprefix('ftorch: ')})"


def _record(family: str, asked: int | None, source: str, reason: str) -> None:
    state.threads = threads()
    if asked is not None and state.threads != asked:
        # MKL caps the count at the cores it sees.
        reason += f"; the library runs {state.threads}"
    state.threads_source, state.threads_reason = source, reason
    state.blocktime = _blocktime(family, state.threads, os.environ)


def set_threads(n: int) -> int | None:
    """Make the loaded BLAS use ``n`` threads from its next call on.

    Holds process-wide (MLX calls the BLAS from its own worker thread) and
    takes effect at once, also after the library has run. Returns the count
    the library reports afterwards, or ``None`` where no BLAS with a thread
    setting ftorch knows is loaded (macOS, MLX's reference BLAS); then it
    does nothing. MKL runs at most as many threads as it sees cores. Only
    the count changes: how long idle threads spin (``KMP_BLOCKTIME``) is
    fixed once the library's thread pool has started.

    >>> import ftorch as ft
    >>> before = ft.backend.blas.threads()
    >>> ft.set_blas_threads(1) in (1, None)
    True
    >>> _ = ft.set_blas_threads(before) if before else None
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"set_threads takes a positive int, got {n!r}")
    family = _family(state.handle)
    if family is None:
        return None
    _set(family, n)
    _record(family, n, "ftorch", f"set_threads({n})")
    return state.threads


def threads() -> int | None:
    """Threads the loaded optimized BLAS uses (``None`` if not known)."""
    family = _family(state.handle)
    if family is None:
        return None
    return int(getattr(state.handle, _CONTROLS[family][0])())


def library_version() -> str | None:
    """The loaded optimized BLAS's own description of itself (``None`` if unknown)."""
    h = state.handle
    if h is None:
        return None
    ctypes = _get_dl().ctypes
    if hasattr(h, "openblas_get_config"):
        h.openblas_get_config.restype = ctypes.c_char_p
        return h.openblas_get_config().decode(errors="replace").strip()
    if hasattr(h, "mkl_get_version_string"):
        buf = ctypes.create_string_buffer(256)
        h.mkl_get_version_string(buf, ctypes.c_int(len(buf)))
        return buf.value.decode(errors="replace").strip()
    return None


def gflops(n: int = 512, seconds: float = 0.2) -> float:
    """Measured float32 ``n x n`` matmul speed on MLX's CPU stream, in GFLOP/s.

    Takes about ``seconds`` (at least one timed product after a warm-up).
    """
    import time

    import mlx.core as mx

    a = mx.random.normal((n, n), dtype=mx.float32, stream=mx.cpu)
    b = mx.random.normal((n, n), dtype=mx.float32, stream=mx.cpu)
    mx.eval(mx.matmul(a, b, stream=mx.cpu))
    reps = 0
    start = time.perf_counter()
    while True:
        mx.eval(mx.matmul(a, b, stream=mx.cpu))
        reps += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return 2.0 * n**3 * reps / elapsed / 1e9
