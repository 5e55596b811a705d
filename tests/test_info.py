"""ftorch.info(): the environment report."""

import io
import os
import subprocess
import sys

import numpy as np
import optree
import pytest

import ftorch as ft  # before mlx.core, so that this file alone runs with the fast BLAS
from ftorch.backend import blas


def test_dict_without_measuring():
    import mlx.core as mx

    out = io.StringIO()
    d = ft.info(measure=False, file=out)
    assert set(d) == {"versions", "platform", "device", "blas", "compile", "threads"}
    v = d["versions"]
    assert v["ftorch"] == ft.__version__ and v["mlx"] == mx.__version__
    assert v["numpy"] == np.__version__ and v["optree"] == optree.__version__
    assert v["python"].startswith(".".join(map(str, sys.version_info[:2])))
    dev = d["device"]
    assert dev["backend"] in ("cpu", "metal", "cuda")
    assert isinstance(dev["metal"], bool) and isinstance(dev["cuda"], bool)
    assert dev["default"] == str(mx.default_device())
    b = d["blas"]
    assert b["status"] == blas.state.status and b["path"] == blas.state.path
    assert b["gflops_f32"] is None
    t = d["threads"]
    assert t["cpu_count"] == os.cpu_count()
    assert set(t["env"]) >= {"OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"}
    text = out.getvalue()
    for word in ("ftorch", "mlx", "numpy", "optree", "python", "device", "blas", "compile",
                 "threads"):
        assert word in text


def test_show_false_prints_nothing(capsys):
    ft.info(measure=False, show=False)
    assert capsys.readouterr().out == ""


def test_measure_reports_gflops(capsys):
    d = ft.info()
    b = d["blas"]
    assert isinstance(b["gflops_f32"], float) and b["gflops_f32"] > 0
    assert b["matmul_n"] == 512
    assert "GFLOP/s" in capsys.readouterr().out
    if sys.platform.startswith("linux"):
        assert b["resolved"] and os.path.exists(b["resolved"])
        if b["status"] in ("loaded", "preloaded"):
            assert b["resolved"] == b["path"]


def test_thread_env_is_reported(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    d = ft.info(measure=False, show=False)
    assert d["threads"]["env"]["OMP_NUM_THREADS"] == "3"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="g++ check is Linux only")
def test_compile_without_gxx(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    c = ft.info(show=False, measure=False)["compile"]
    assert c["cxx"] is None and c["works"] is False and "g++" in c["detail"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="g++ check is Linux only")
def test_compile_check():
    import shutil

    c = ft.info(show=False)["compile"]
    if shutil.which("g++") is None:
        assert c["works"] is False
    else:
        assert c["works"] is True, c["detail"]


def test_info_stays_callable_after_importing_the_module():
    import ftorch.info  # noqa: F401  (rebinds the attribute to the module)

    assert callable(ft.info)
    assert set(ft.info(measure=False, show=False)) >= {"versions", "blas"}
    from ftorch import info

    assert callable(info)


def test_run_as_module():
    proc = subprocess.run([sys.executable, "-m", "ftorch.info"], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "found in sys.modules" not in proc.stderr  # runpy warns when imported early
    assert proc.stdout.startswith("ftorch ") and "GFLOP/s" in proc.stdout


def test_blas_threads_are_reported():
    d = ft.info(measure=False, show=False)
    b, t = d["blas"], d["threads"]
    assert b["threads"] == t["blas"] == blas.threads()
    assert b["threads_source"] == t["blas_source"] == blas.state.threads_source
    assert t["blas_reason"] == blas.state.threads_reason
    assert t["blas_blocktime"] == blas.state.blocktime
    assert "FTORCH_BLAS_THREADS" in t["env"] and "KMP_BLOCKTIME" in t["env"]
    if blas._family(blas.state.handle) is None:
        assert t["blas"] is None and t["blas_source"] is None
    else:
        assert t["blas"] >= 1
        assert t["blas_source"] in ("default-policy", "env", "ftorch")


def test_blas_threads_in_the_printed_report():
    if blas._family(blas.state.handle) is None:
        pytest.skip(f"no optimized BLAS with a thread setting is loaded ({blas.state.status})")
    env = {k: v for k, v in os.environ.items()
           if k not in ("MKL_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS")}
    env["FTORCH_BLAS_THREADS"] = "1"
    proc = subprocess.run([sys.executable, "-m", "ftorch.info"], capture_output=True,
                          text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "blas 1 (ftorch: FTORCH_BLAS_THREADS=1)" in proc.stdout
    assert "blas idle threads spin: none (1 thread: no thread pool)" in proc.stdout
