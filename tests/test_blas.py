"""Loading an optimized BLAS for MLX (ftorch/backend/blas.py).

Loading happens once per process, before mlx.core is imported, so each case
runs `import ftorch` in a fresh interpreter with a controlled environment.
"""

import json
import os
import site
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from ftorch.backend import blas

pytestmark = [pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux only"),
              pytest.mark.cpu_only("the BLAS serves MLX's CPU backend")]

_REPORT = """
import json, warnings
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    {pre}
    import ftorch
    from ftorch.backend import blas
    blas.load()  # a second call must not warn again
d = blas.state.as_dict()
d["resolved"] = blas.resolve()
d["warnings"] = [(w.category.__name__, str(w.message)) for w in caught]
print(json.dumps(d))
"""


# Variables that choose BLAS threads: dropped from children's environments,
# so that each case sets the ones it is about.
_THREAD_VARS = ("FTORCH_BLAS_THREADS", "MKL_NUM_THREADS", "MKL_DOMAIN_NUM_THREADS",
                "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "BLIS_NUM_THREADS",
                "KMP_BLOCKTIME", "OMP_WAIT_POLICY", "MKL_THREADING_LAYER")


def run(code: str, **env: str) -> str:
    full = {k: v for k, v in os.environ.items() if k != "FTORCH_BLAS" and k not in _THREAD_VARS}
    full.update(env)
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=full,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def report(pre: str = "", **env: str) -> dict:
    return json.loads(run(_REPORT.format(pre=pre), **env).strip().splitlines()[-1])


def _mlx_reference_blas() -> str:
    """The reference BLAS bundled with the mlx[cpu] wheel, found like MLX finds it."""
    return report(FTORCH_BLAS="reference")["resolved"]


def _openblas_present() -> bool:
    import ctypes

    for name in blas._OPENBLAS_SONAMES:
        try:
            ctypes.CDLL(name, mode=os.RTLD_LOCAL)
            return True
        except OSError:
            pass
    return False


def _mkl_present() -> bool:
    return bool(blas._mkl_candidates())


# --- choosing candidates (no loading) -------------------------------------------


def test_candidate_order(tmp_path, monkeypatch):
    lib = tmp_path / "lib"
    lib.mkdir()
    for name in ("libmkl_rt.so", "libmkl_rt.so.2", "libmkl_rt.so.3", "libmkl_core.so.3"):
        (lib / name).write_bytes(b"")
    monkeypatch.setattr(sys, "prefix", str(tmp_path))
    monkeypatch.setattr(site, "getuserbase", lambda: str(tmp_path / "user"))
    auto = blas._candidates(None)
    libs = [c[0] for c in auto]
    # System OpenBLAS first, then MKL from PyPI (newest soname first).
    assert libs[:2] == list(blas._OPENBLAS_SONAMES)
    assert libs[2:] == [str(lib / n) for n in ("libmkl_rt.so.3", "libmkl_rt.so.2", "libmkl_rt.so")]
    assert [c[1] for c in auto[:3]] == ["system", "system", "pypi"]
    # An explicit path comes first and the search still follows it.
    explicit = blas._candidates("/opt/x/libblis.so")
    assert explicit[0] == ("/opt/x/libblis.so", "FTORCH_BLAS")
    assert explicit[1:] == auto
    # A kind restricts the search.
    assert [c[1] for c in blas._candidates("mkl")] == ["pypi"] * 3
    assert [c[1] for c in blas._candidates("openblas")] == ["system", "system"]


@pytest.mark.parametrize("name, kind", [
    ("/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0", "openblas"),
    ("/venv/lib/libmkl_rt.so.2", "mkl"),
    ("/usr/lib/libblis.so.4", "blis"),
    ("/x/libblas.so.3", "custom"),
])
def test_kind(name, kind):
    assert blas._kind(name) == kind


def test_not_linux_does_nothing(monkeypatch):
    monkeypatch.setattr(blas, "state", blas.BlasState())
    monkeypatch.setattr(sys, "platform", "darwin")
    monkeypatch.setenv("FTORCH_BLAS", "/nonexistent")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        st = blas.load()
    assert st.status == "not_linux" and st.handle is None and st.warning is None


def test_state_of_this_process():
    st = blas.state
    assert st.status in ("loaded", "preloaded", "disabled", "not_found", "too_late", "failed")
    assert set(st.as_dict()) >= {"status", "kind", "path", "verified", "reason", "warning"}
    assert "BlasState(" in repr(st)


# --- loading, in fresh processes -------------------------------------------------


def test_reference_disables():
    d = report(FTORCH_BLAS="reference")
    assert d["status"] == "disabled"
    assert d["path"] is None and d["tried"] == [] and d["warnings"] == []
    # MLX binds its own bundled BLAS.
    assert "mlx" in d["resolved"]
    assert report(FTORCH_BLAS="off")["status"] == "disabled"


def test_nonexistent_path_warns_once_and_falls_back():
    d = report(FTORCH_BLAS="/nonexistent/libblas.so")
    assert len(d["warnings"]) == 1, d["warnings"]
    category, msg = d["warnings"][0]
    assert category == "RuntimeWarning"
    assert "FTORCH_BLAS=/nonexistent/libblas.so" in msg
    assert d["tried"][0][0] == "/nonexistent/libblas.so"
    if _openblas_present() or _mkl_present():
        assert d["status"] == "loaded" and d["verified"]
        assert d["path"] in msg and d["resolved"] == d["path"]
    else:
        assert d["status"] == "not_found"
        assert "ftorch[blas]" in msg


def test_library_without_cblas_is_not_loaded_globally():
    libm = run("import ctypes.util; print(ctypes.util.find_library('m'))").strip()
    d = report(FTORCH_BLAS=libm)
    assert d["tried"][0] == [libm, "does not export cblas_sgemm"]
    assert len(d["warnings"]) == 1 and "could not be used" in d["warnings"][0][1]


def test_mlx_imported_first_warns_once():
    d = report(pre="import mlx.core", FTORCH_BLAS="")
    if d["status"] == "preloaded":
        pytest.skip("an optimized BLAS is preloaded in this environment")
    assert d["status"] == "too_late"
    assert len(d["warnings"]) == 1
    assert "import ftorch first" in d["warnings"][0][1]
    assert "mlx" in d["resolved"]  # still MLX's own BLAS


def test_mlx_imported_first_with_reference_is_silent():
    d = report(pre="import mlx.core", FTORCH_BLAS="reference")
    assert d["status"] == "disabled" and d["warnings"] == []


def test_explicit_path_is_loaded_and_verified():
    ref = _mlx_reference_blas()
    d = report(FTORCH_BLAS=ref)
    assert d["status"] == "loaded" and d["source"] == "FTORCH_BLAS"
    assert d["verified"] and d["path"] == ref and d["resolved"] == ref
    assert d["kind"] == "custom"
    assert "cblas_sgemm" in d["verification"] and d["warnings"] == []


def test_preloaded_library_is_kept():
    ref = _mlx_reference_blas()
    d = report(FTORCH_BLAS="", LD_PRELOAD=ref)
    assert d["status"] == "preloaded" and d["path"] == ref and d["warnings"] == []


def test_default_picks_system_openblas_first():
    if not _openblas_present():
        pytest.skip("no system OpenBLAS (apt-get install libopenblas0-pthread)")
    d = report(FTORCH_BLAS="")
    assert d["status"] == "loaded" and d["kind"] == "openblas" and d["source"] == "system"
    assert d["verified"] and d["resolved"] == d["path"] and d["warnings"] == []


def test_default_picks_pypi_mkl_without_openblas():
    if not _mkl_present():
        pytest.skip('no MKL from PyPI (pip install "ftorch[blas]")')
    expected = os.path.realpath(blas._mkl_candidates()[0])
    for env in ({"FTORCH_BLAS": "mkl"}, {"FTORCH_BLAS": ""} if not _openblas_present() else None):
        if env is None:
            continue
        d = report(**env)
        assert d["status"] == "loaded" and d["kind"] == "mkl" and d["source"] == "pypi"
        assert d["verified"] and d["path"] == expected == d["resolved"]
        assert d["warnings"] == []


def test_missing_kind_warns():
    if _openblas_present():
        pytest.skip("a system OpenBLAS is present")
    d = report(FTORCH_BLAS="openblas")
    assert d["status"] == "not_found"
    assert len(d["warnings"]) == 1 and "no openblas found" in d["warnings"][0][1]


_MATMUL = """
import sys, numpy as np, ftorch
from ftorch.backend import blas
import mlx.core as mx
a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
out = {}
for dt in ("float32", "float64"):
    x = mx.array(a, dtype=getattr(mx, dt)); y = mx.array(b, dtype=getattr(mx, dt))
    out[dt] = np.array(mx.matmul(x, y, stream=mx.cpu))
    # Transposed operands take cblas_sgemm's transpose flags.
    out[dt + "_t"] = np.array(mx.matmul(y.T, x.T, stream=mx.cpu))
sq = mx.array(a[:40, :40] + 40 * np.eye(40, dtype=np.float32))
out["inv"] = np.array(mx.linalg.inv(sq, stream=mx.cpu))
np.savez(sys.argv[3], status=blas.state.status, **out)
"""


def test_matmul_agrees_with_reference(tmp_path):
    probe = report(FTORCH_BLAS="")
    if probe["status"] not in ("loaded", "preloaded"):
        pytest.skip("no optimized BLAS in this environment")
    rng = np.random.default_rng(0)
    a = rng.standard_normal((67, 67)).astype(np.float32)
    b = rng.standard_normal((67, 45)).astype(np.float32)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    code = textwrap.dedent(_MATMUL)
    results = {}
    for name, env in (("fast", ""), ("ref", "reference")):
        full = {k: v for k, v in os.environ.items() if k != "FTORCH_BLAS"}
        full["FTORCH_BLAS"] = env
        subprocess.run([sys.executable, "-c", code, str(tmp_path / "a.npy"),
                        str(tmp_path / "b.npy"), str(tmp_path / f"{name}.npz")],
                       env=full, check=True, timeout=120)
        results[name] = np.load(tmp_path / f"{name}.npz")
    fast, ref = results["fast"], results["ref"]
    assert str(fast["status"]) in ("loaded", "preloaded") and str(ref["status"]) == "disabled"
    exact = a.astype(np.float64) @ b.astype(np.float64)
    # Entries are sums of 67 products of magnitude ~1: allow a few ulps of ~10 per term.
    for key, tol in (("float32", 1e-4), ("float64", 1e-11)):
        np.testing.assert_allclose(fast[key], ref[key], rtol=tol, atol=tol)
        np.testing.assert_allclose(fast[key], exact, rtol=tol, atol=tol)
        np.testing.assert_allclose(fast[key + "_t"], ref[key + "_t"], rtol=tol, atol=tol)
        np.testing.assert_allclose(fast[key + "_t"], exact.T, rtol=tol, atol=tol)
    np.testing.assert_allclose(fast["inv"], ref["inv"], rtol=1e-5, atol=1e-7)


# --- the thread policy: a pure function of (cores, environment) -------------------


@pytest.mark.parametrize("cores, default, expected", [
    (1, None, 1), (2, None, 1), (3, None, 2), (4, None, 3), (16, None, 15),
    (2, 2, 1), (4, 2, 2), (16, 8, 8), (64, 32, 32), (16, 0, 15),
])
def test_policy_default(cores, default, expected):
    for family in ("mkl", "openblas", "blis", "custom"):
        c = blas.thread_policy(cores, {}, family, default)
        assert (c.threads, c.source, c.warning) == (expected, "default-policy", None)
        assert f"{cores} usable cores" in c.reason


@pytest.mark.parametrize("family, var", [
    ("mkl", "MKL_NUM_THREADS"), ("mkl", "MKL_DOMAIN_NUM_THREADS"), ("mkl", "OMP_NUM_THREADS"),
    ("openblas", "OPENBLAS_NUM_THREADS"), ("openblas", "GOTO_NUM_THREADS"),
    ("openblas", "OMP_NUM_THREADS"), ("blis", "BLIS_NUM_THREADS"), ("blis", "OMP_NUM_THREADS"),
    ("custom", "OMP_NUM_THREADS"),
])
def test_policy_leaves_the_librarys_own_variable_to_it(family, var):
    c = blas.thread_policy(2, {var: " 2 "}, family, 2)
    assert (c.threads, c.source, c.reason) == (None, "env", f"{var}=2")


def test_policy_ignores_other_librarys_variables_and_empty_ones():
    assert blas.thread_policy(2, {"OPENBLAS_NUM_THREADS": "2"}, "mkl").source == "default-policy"
    assert blas.thread_policy(2, {"MKL_NUM_THREADS": "2"}, "openblas").source == "default-policy"
    assert blas.thread_policy(2, {"MKL_NUM_THREADS": ""}, "mkl").source == "default-policy"


def test_policy_ftorch_setting_wins():
    env = {"FTORCH_BLAS_THREADS": "3", "MKL_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    assert blas.thread_policy(2, env, "mkl", 2) == (3, "ftorch", "FTORCH_BLAS_THREADS=3", None)


@pytest.mark.parametrize("bad", ["0", "-1", "two", "1.5"])
def test_policy_bad_ftorch_setting_warns_and_falls_through(bad):
    c = blas.thread_policy(2, {"FTORCH_BLAS_THREADS": bad}, "mkl")
    assert (c.threads, c.source) == (1, "default-policy")
    assert "FTORCH_BLAS_THREADS" in c.warning and repr(bad) in c.warning
    c = blas.thread_policy(2, {"FTORCH_BLAS_THREADS": bad, "OMP_NUM_THREADS": "2"}, "mkl")
    assert (c.threads, c.source) == (None, "env") and c.warning


def test_usable_cores(monkeypatch):
    if hasattr(os, "sched_getaffinity"):
        assert blas.usable_cores() == len(os.sched_getaffinity(0))
        monkeypatch.delattr(os, "sched_getaffinity")
    assert blas.usable_cores() == os.cpu_count()


def test_blocktime_words():
    assert blas._blocktime(None, 2, {}) is None
    assert blas._blocktime("mkl", 1, {}).startswith("none")
    assert "200 ms" in blas._blocktime("mkl", 2, {})
    assert blas._blocktime("mkl", 2, {"KMP_BLOCKTIME": "0"}) == "KMP_BLOCKTIME=0"
    assert blas._blocktime("mkl", 2, {"OMP_WAIT_POLICY": "passive"}) == "OMP_WAIT_POLICY=passive"
    assert "GNU" in blas._blocktime("mkl", 2, {"MKL_THREADING_LAYER": "GNU"})
    assert "0.1 s" in blas._blocktime("openblas", 2, {})


def test_set_threads_rejects_bad_counts():
    for bad in (0, -1, True, 1.0, "2"):
        with pytest.raises(ValueError):
            blas.set_threads(bad)


# --- the thread policy applied, in fresh processes --------------------------------

_THREADS = """
import json
import ftorch
from ftorch.backend import blas
import mlx.core as mx
a = mx.ones((256, 256))
mx.eval(a @ a)  # the library has run: its pool (if any) exists
d = {k: getattr(blas.state, k) for k in
     ("status", "kind", "threads", "threads_source", "threads_reason", "blocktime")}
d["family"] = blas._family(blas.state.handle)
d["live"] = blas.threads()  # the library's own getter, through the handle
d["cores"] = blas.usable_cores()
{extra}
print(json.dumps(d))
"""


def threads_report(extra: str = "", **env: str) -> dict:
    out = run(_THREADS.replace("{extra}", textwrap.dedent(extra)), **env)
    return json.loads(out.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def family() -> str:
    """The family of the BLAS that loads by default here (skips where none does)."""
    d = threads_report()
    if d["family"] is None:
        pytest.skip(f"no optimized BLAS with a thread setting is loaded (status {d['status']}, "
                    f"kind {d['kind']}): nothing to set")
    return d["family"]


def test_default_policy_takes_effect(family):
    d = threads_report()
    assert d["threads_source"] == "default-policy"
    assert d["threads"] == d["live"]
    # cores - 1, or fewer where the library's own default is lower.
    assert 1 <= d["live"] <= max(1, d["cores"] - 1)
    assert d["threads_reason"].startswith(f"{d['cores']} usable cores")
    # Empty variables count as unset.
    empty = threads_report(FTORCH_BLAS_THREADS="", **{blas._CONTROLS[family][2][0]: ""})
    assert (empty["threads_source"], empty["live"]) == ("default-policy", d["live"])
    if d["live"] == 1:
        assert d["blocktime"].startswith("none")


@pytest.mark.parametrize("n", [1, 2, 3])
def test_ftorch_setting_takes_effect(family, n):
    own = blas._CONTROLS[family][2][0]  # MKL_NUM_THREADS, OPENBLAS_NUM_THREADS, ...
    d = threads_report(FTORCH_BLAS_THREADS=str(n), **{own: "1" if n > 1 else "2"})
    assert d["threads_source"] == "ftorch"
    assert d["threads_reason"].startswith(f"FTORCH_BLAS_THREADS={n}")
    assert d["threads"] == d["live"]
    if n <= d["cores"]:
        assert d["live"] == n
    else:  # MKL caps the count at the cores it sees, and says so
        assert 1 <= d["live"] <= n
        assert d["live"] == n or d["threads_reason"].endswith(f"the library runs {d['live']}")


@pytest.mark.parametrize("which", ["own", "OMP_NUM_THREADS"])
def test_explicit_library_variable_wins_over_the_policy(family, which):
    var = blas._CONTROLS[family][2][0] if which == "own" else which
    for n in (1, 2):
        d = threads_report(**{var: str(n)})
        assert (d["threads_source"], d["threads_reason"]) == ("env", f"{var}={n}")
        assert d["threads"] == d["live"] == min(n, d["cores"])


def test_bad_ftorch_setting_warns_once(family):
    out = run("import warnings\n"
              "with warnings.catch_warnings(record=True) as w:\n"
              "    warnings.simplefilter('always')\n"
              "    import ftorch\n"
              "    ftorch.backend.blas.load()\n"
              "print([str(x.message) for x in w])\n"
              "print(ftorch.backend.blas.state.threads_source)", FTORCH_BLAS_THREADS="lots")
    warned, source = out.strip().splitlines()[-2:]
    assert warned.count("FTORCH_BLAS_THREADS") == 1 and source == "default-policy"


def test_set_threads_at_run_time(family):
    d = threads_report("""
        d["after"] = []
        for n in (2, 1, 2):
            d["after"].append((blas.set_threads(n), blas.threads(), blas.state.threads_source))
            mx.eval(a @ a)
        d["reason"] = blas.state.threads_reason
    """)
    if d["cores"] < 2:
        pytest.skip("one usable core: MKL caps its threads at 1")
    assert d["after"] == [[2, 2, "ftorch"], [1, 1, "ftorch"], [2, 2, "ftorch"]]
    assert d["reason"] == "set_threads(2)"


def test_no_thread_setting_without_an_optimized_blas():
    d = threads_report('d["set"] = blas.set_threads(2)', FTORCH_BLAS="reference")
    assert d["threads"] is None and d["live"] is None and d["set"] is None
    assert d["threads_source"] is None and d["blocktime"] is None
    ref = _mlx_reference_blas()  # a library without thread calls: left alone
    d = threads_report(FTORCH_BLAS=ref)
    assert d["status"] == "loaded" and d["family"] is None and d["threads"] is None
    assert "no thread-count call" in d["threads_reason"]
