"""What ftorch runs on: versions, device, BLAS and its speed, mx.compile, threads.

``ftorch.info()`` prints a short report and returns it as a dict;
``python -m ftorch.info`` prints it from the shell.
"""

from __future__ import annotations

import os
import platform
import shutil
import sys
import types
from typing import IO, Any

__all__ = ["info"]

_THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                "MKL_THREADING_LAYER", "KMP_BLOCKTIME", "OMP_WAIT_POLICY", "FTORCH_BLAS",
                "FTORCH_BLAS_THREADS")


def _versions() -> dict[str, str | None]:
    import importlib.metadata as md

    import mlx.core as mx

    import ftorch

    out: dict[str, str | None] = {"ftorch": ftorch.__version__, "mlx": mx.__version__}
    for name in ("numpy", "optree"):
        try:
            out[name] = md.version(name)
        except md.PackageNotFoundError:
            out[name] = None
    out["python"] = f"{platform.python_version()} ({platform.python_implementation()})"
    return out


def _device() -> dict[str, Any]:
    import mlx.core as mx

    def available(name: str) -> bool:
        mod = getattr(mx, name, None)
        try:
            return bool(mod is not None and mod.is_available())
        except Exception:
            return False

    dev = mx.default_device()
    metal, cuda = available("metal"), available("cuda")
    backend = "cpu" if dev.type == mx.DeviceType.cpu else ("metal" if metal else "cuda")
    return {"default": str(dev), "backend": backend, "metal": metal, "cuda": cuda}


def _blas(measure: bool) -> dict[str, Any]:
    from ftorch.backend import blas

    out = blas.state.as_dict()
    out["resolved"] = blas.resolve()
    out["library"] = blas.library_version()
    out["threads"] = blas.threads()
    out["gflops_f32"] = None
    out["matmul_n"] = None
    if measure:
        out["matmul_n"] = n = 512
        out["gflops_f32"] = round(blas.gflops(n=n, seconds=0.2), 1)
    return out


def _compile(measure: bool) -> dict[str, Any]:
    """Whether ``mx.compile`` really fuses kernels here.

    On Linux MLX's CPU backend compiles fused kernels by running ``g++`` and
    keeps the shared objects under ``$TMPDIR/mlx/<version>/cpu``; without
    ``g++`` it quietly runs the uncompiled graph. So the check is: ``g++`` is on
    PATH, and compiling a tiny function leaves a kernel in that cache.
    """
    import mlx.core as mx

    cxx = shutil.which("g++")
    out: dict[str, Any] = {"cxx": cxx, "works": None, "detail": ""}
    if not sys.platform.startswith("linux"):
        out["detail"] = "not checked off Linux"
        return out
    if cxx is None:
        out["works"] = False
        out["detail"] = "no g++ on PATH: mx.compile runs uncompiled (apt-get install g++)"
        return out
    if not measure:
        out["detail"] = "g++ found; not confirmed"
        return out
    import tempfile

    cache = os.path.join(tempfile.gettempdir(), "mlx", mx.__version__, "cpu")

    def kernels() -> set[str]:
        try:
            return {n for n in os.listdir(cache) if n.endswith(".so")}
        except OSError:
            return set()

    before = kernels()
    x = mx.arange(16, dtype=mx.float32, stream=mx.cpu)
    fn = mx.compile(lambda a: mx.exp(a * 0.5) * 2.0 - a)
    try:
        y = fn(x)
        mx.eval(y)
        ok = mx.allclose(y, mx.exp(x * 0.5) * 2.0 - x).item()
    except Exception as e:  # a broken toolchain must not break info()
        out["works"] = False
        out["detail"] = f"mx.compile failed: {type(e).__name__}: {e}"
        return out
    after = kernels()
    # The same kernel may have been built by an earlier run: then it is cached.
    out["works"] = bool(ok and after)
    out["detail"] = (f"{len(after - before)} new / {len(after)} cached kernels in {cache}"
                     if after else f"no compiled kernel appeared in {cache}")
    return out


def _threads(b: dict[str, Any]) -> dict[str, Any]:
    try:
        affinity: int | None = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        affinity = None
    return {"cpu_count": os.cpu_count(), "affinity": affinity, "blas": b["threads"],
            "blas_source": b["threads_source"], "blas_reason": b["threads_reason"],
            "blas_blocktime": b["blocktime"],
            "env": {k: os.environ.get(k) for k in _THREAD_VARS}}


def _format(d: dict[str, Any]) -> str:
    v, dev, b, c, t = d["versions"], d["device"], d["blas"], d["compile"], d["threads"]
    yes = {True: "yes", False: "no", None: "?"}
    lines = [f"ftorch {v['ftorch']}  ({d['platform']})"]
    lines += [f"  {k:<8} {v[k] or 'not installed'}" for k in ("mlx", "numpy", "optree", "python")]
    lines.append(f"device     default {dev['default']}, backend {dev['backend']}; "
                 f"metal: {yes[dev['metal']]}, cuda: {yes[dev['cuda']]}")
    if b["status"] in ("loaded", "preloaded"):
        what = (f"{b['kind']} {b['path']} ({b['status']}, from {b['source']}; "
                f"verified: {yes[b['verified']]})")
    elif b["status"] == "not_linux":
        what = f"platform default ({b['reason']})"
    else:
        what = f"MLX's reference BLAS ({b['status']}: {b['reason']})"
    lines.append(f"blas       {what}")
    if b["resolved"]:
        lines.append(f"           cblas_sgemm -> {b['resolved']}")
    if b["library"]:
        lines.append(f"           {b['library']}")
    if b["gflops_f32"] is not None:
        n = b["matmul_n"]
        lines.append(f"           float32 {n}x{n} matmul on the CPU: {b['gflops_f32']} GFLOP/s")
    if b["warning"]:
        lines.append(f"           warning: {b['warning']}")
    lines.append(f"compile    mx.compile compiles: {yes[c['works']]}; g++: {c['cxx'] or 'none'}"
                 + (f"; {c['detail']}" if c["detail"] else ""))
    env = ", ".join(f"{k}={val}" for k, val in t["env"].items() if val is not None)
    lines.append(f"threads    cpu_count {t['cpu_count']}, usable {t['affinity']}, "
                 f"blas {t['blas'] if t['blas'] is not None else '?'}"
                 + (f" ({t['blas_source']}: {t['blas_reason']})" if t["blas_source"] else "")
                 + (f"; {env}" if env else ""))
    if t["blas_blocktime"]:
        lines.append(f"           blas idle threads spin: {t['blas_blocktime']}")
    return "\n".join(lines)


def info(*, measure: bool = True, show: bool = True, file: IO[str] | None = None) -> dict:
    """Print and return what ftorch runs on.

    Versions (ftorch, mlx, numpy, optree, python), MLX's default device and
    whether Metal/CUDA are available, the BLAS that MLX's CPU matmul uses (see
    ``ftorch/backend/blas.py``) with its measured float32 GFLOP/s, whether
    ``mx.compile`` really compiles here (on Linux it needs ``g++``), and thread
    counts: the BLAS's, who chose it and why (``ftorch/backend/blas.py``'s policy),
    and how long its idle threads spin. ``measure=False`` skips the two timed
    checks (about 0.2 s, plus a one-off g++ run of about a second the first
    time); ``show=False`` only returns the dict.

    >>> import ftorch as ft
    >>> d = ft.info(measure=False, show=False)
    >>> sorted(d)
    ['blas', 'compile', 'device', 'platform', 'threads', 'versions']
    """
    b = _blas(measure)
    d = {
        "versions": _versions(),
        "platform": platform.platform(terse=True) + f" {platform.machine()}",
        "device": _device(),
        "blas": b,
        "compile": _compile(measure),
        "threads": _threads(b),
    }
    if show:
        print(_format(d), file=file if file is not None else sys.stdout)
    return d


class _CallableModule(types.ModuleType):
    # `import ftorch.info` rebinds the attribute ftorch.info to this module;
    # being callable keeps `ft.info()` working all the same.
    def __call__(self, **kwargs: Any) -> dict:
        return info(**kwargs)


sys.modules[__name__].__class__ = _CallableModule

if __name__ == "__main__":
    info()
