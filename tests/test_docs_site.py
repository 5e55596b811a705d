"""The documentation site (mkdocs.yml, docs/): it builds with ``mkdocs build
--strict`` (a warning is an error: a broken link or anchor, a page missing
from the files, a docstring the API reference cannot parse), and every
``python`` code block of its hand-written pages runs. Blocks that cannot run
here (JAX or PyTorch code) are fenced as ``py`` instead."""

import importlib.util
import os
import pathlib
import re
import subprocess
import sys
import tempfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
BUILD_TIMEOUT = 600  # about 20 s on 2 cores; generous for a loaded machine
PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def _env() -> dict:
    # Material prints a banner about its successor on every build.
    return {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONDONTWRITEBYTECODE": "1"}


def test_site_builds_strictly():
    if importlib.util.find_spec("mkdocs") is None:
        pytest.fail("mkdocs is not installed: pip install -e '.[dev]' (the docs build is "
                    "part of the test suite)")
    with tempfile.TemporaryDirectory() as site:
        try:
            result = subprocess.run(
                [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", site],
                cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=BUILD_TIMEOUT)
        except subprocess.TimeoutExpired as e:
            pytest.fail(f"mkdocs build took over {BUILD_TIMEOUT} s:\n{e.stderr or ''}")
        output = result.stdout + result.stderr
        problems = [line for line in output.splitlines()
                    if line.startswith(("WARNING", "ERROR")) or "Aborted" in line]
        assert result.returncode == 0, (
            "mkdocs build --strict failed:\n" + "\n".join(problems) + "\n\n" + output[-6000:])
        built = pathlib.Path(site)
        for page in ["index.html", "guides/from-jax/index.html", "api/numpy/index.html",
                     "notebooks/01_quickstart/index.html"]:
            assert (built / page).is_file(), page
        # The JAX table is generated at build time from ftorch's namespaces.
        jax_page = (built / "guides/from-jax/index.html").read_text()
        assert "<!-- ftorch:names" not in jax_page and "value_and_grad" in jax_page


_RUNNER = """
import pathlib, re, sys, traceback
import ftorch  # before mlx.core, as the pages say
block = re.compile(r"^```python\\n(.*?)^```", re.S | re.M)
failed = []
for path in sys.argv[1:]:
    code = "\\n\\n".join(block.findall(pathlib.Path(path).read_text()))
    try:
        exec(compile(code, path + " (its python blocks, joined)", "exec"), {"__name__": "__docs__"})
    except Exception:
        failed.append(path + ":\\n" + traceback.format_exc())
print("\\n".join(failed), file=sys.stderr)
sys.exit(1 if failed else 0)
"""


def test_guide_snippets_run():
    pages = sorted(p for p in DOCS.rglob("*.md") if PYTHON_BLOCK.search(p.read_text()))
    assert len(pages) >= 10, pages
    with tempfile.TemporaryDirectory() as cwd:  # snippets may write files
        result = subprocess.run([sys.executable, "-c", _RUNNER, *map(str, pages)], cwd=cwd,
                                env={**_env(), "PYTHONPATH": str(ROOT)}, capture_output=True,
                                text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-8000:]
