"""The documentation site (mkdocs.yml, docs/): it builds with ``mkdocs build
--strict`` (a warning is an error: a broken link or anchor, a page missing
from the files, a docstring the API reference cannot parse), every
``python`` code block of its hand-written pages runs, the notebooks' pages
show their outputs, and no title in the navigation, a table of contents or
a page's ``<title>`` has lost the text of a code span. Blocks that cannot run
here (JAX or PyTorch code) are fenced as ``py`` instead.

The notebooks' outputs come from their executed copies in
build/executed/notebooks/ (docs/notebook_outputs.py). Before the build, the
notebooks without a current copy are executed here, through the same
once-per-session run that tests/test_notebooks.py checks: in one session each
notebook runs once, whichever test file comes first. The build itself executes
nothing (``FTORCH_DOCS_EXECUTE=0``)."""

import html
import importlib.util
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
sys.path.insert(0, str(DOCS))
import notebook_outputs  # noqa: E402

BUILD_TIMEOUT = 600  # about 40 s on 2 cores; generous for a loaded machine
PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def _env() -> dict:
    # Material prints a banner about its successor on every build.
    return {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONDONTWRITEBYTECODE": "1"}


@pytest.fixture(scope="module")
def executed():
    """Every notebook's executed copy is current, or the error of its run."""
    failed = {}
    for path in notebook_outputs.notebooks():
        if notebook_outputs.executed_copy(path) is None:
            try:
                notebook_outputs.run(path)
            except Exception as e:
                failed[path.name] = e
    return failed


@pytest.fixture(scope="module")
def site(executed):
    """The site built with ``--strict``: (its folder, mkdocs' exit status and output)."""
    if importlib.util.find_spec("mkdocs") is None:
        pytest.fail("mkdocs is not installed: pip install -e '.[dev]' (the docs build is "
                    "part of the test suite)")
    with tempfile.TemporaryDirectory() as built:
        try:
            result = subprocess.run(
                [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", built],
                cwd=ROOT, env={**_env(), "FTORCH_DOCS_EXECUTE": "0"}, capture_output=True,
                text=True, timeout=BUILD_TIMEOUT)
        except subprocess.TimeoutExpired as e:
            pytest.fail(f"mkdocs build took over {BUILD_TIMEOUT} s:\n{e.stderr or ''}")
        yield pathlib.Path(built), result.returncode, result.stdout + result.stderr


def _built(site) -> pathlib.Path:
    built, returncode, _ = site
    if returncode != 0:
        pytest.fail("the site does not build (see test_site_builds_strictly)")
    return built


def test_site_builds_strictly(site):
    built, returncode, output = site
    problems = [line for line in output.splitlines()
                if line.startswith(("WARNING", "ERROR")) or "Aborted" in line]
    assert returncode == 0, (
        "mkdocs build --strict failed:\n" + "\n".join(problems) + "\n\n" + output[-6000:])
    for page in ["index.html", "guides/from-jax/index.html", "api/numpy/index.html",
                 "notebooks/01_quickstart/index.html"]:
        assert (built / page).is_file(), page
    # The JAX table is generated at build time from ftorch's namespaces.
    jax_page = (built / "guides/from-jax/index.html").read_text()
    assert "<!-- ftorch:names" not in jax_page and "value_and_grad" in jax_page


PNG = re.compile(r'<img\b[^>]*\bsrc="data:image/png;base64,')


@pytest.mark.parametrize("path", notebook_outputs.notebooks(),
                         ids=[p.stem for p in notebook_outputs.notebooks()])
def test_notebook_page_shows_outputs(path, executed, site):
    """A notebook's page carries the outputs of its executed copy: as many
    plots, and its first printed line. Nothing of it is in the committed
    notebook, which has no outputs."""
    if path.name in executed:
        pytest.fail(f"{path.name} does not run at small sizes (see test_notebooks.py):\n"
                    f"{executed[path.name]}")
    page = (_built(site) / "notebooks" / path.stem / "index.html").read_text(encoding="utf-8")
    copy = notebook_outputs.executed_copy(path)
    assert copy is not None, f"{path.name}: its executed copy changed during the build"
    outputs = [out for cell in json.loads(copy.read_text(encoding="utf-8"))["cells"]
               if cell["cell_type"] == "code" for out in cell.get("outputs", [])]
    assert outputs, f"{path.name}: the executed notebook has no outputs"
    plots = sum("image/png" in out.get("data", {}) for out in outputs)
    shown = len(PNG.findall(page))
    assert shown >= plots, f"{path.name}: {plots} plots in its executed copy, {shown} on its page"
    printed = [line.strip() for out in outputs if out["output_type"] == "stream"
               for line in "".join(out["text"]).splitlines() if line.strip()]
    if printed:
        assert printed[0] in html.unescape(page), (
            f"{path.name}: its first printed line {printed[0]!r} is not on its page")


def test_some_notebook_pages_have_plots(site):
    pages = (_built(site) / "notebooks").glob("*/index.html")
    assert sum(len(PNG.findall(p.read_text(encoding="utf-8"))) for p in pages) >= 5


# A title that lost a code span: "under , and , to any order", "with  and",
# "1. : derivatives", "The staged graph:" (but ".mlxfn and ONNX" is whole).
LOST_CODE = re.compile(r"\s[,;:!?)]|\s\.(?!\w)|\(\s|\s\s|[,:(]$|^[,;:]|^\.(?!\w)")
NAV_TEXT = re.compile(r'<span class="md-ellipsis">(.*?)</span>', re.S)


def _titles(page: str) -> list[str]:
    """The titles of the navigation, the table of contents and the page."""
    found = [m.group(1) for m in NAV_TEXT.finditer(page)]
    found += re.findall(r"<title>(.*?)</title>", page, re.S)
    return [html.unescape(re.sub(r"<[^>]*>", "", t)).strip() for t in found]


def _has(text: str, code: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(code)}(?!\w)", text) is not None


def test_titles_keep_code_spans(site):
    built = _built(site)
    bad = {}
    for page in sorted(built.rglob("*.html")):
        for title in _titles(page.read_text(encoding="utf-8")):
            if LOST_CODE.search(title):
                bad.setdefault(title, str(page.relative_to(built)))
    assert not bad, f"titles that lost a code span (title: a page showing it): {bad}"
    # Every code span of a notebook's headings is in its page's titles (its
    # table of contents), and those of its first heading in the navigation of
    # every page ("A new op that works under `grad`, `vmap` and `jit`").
    home = (built / "index.html").read_text(encoding="utf-8")
    for path in notebook_outputs.notebooks():
        page = (built / "notebooks" / path.stem / "index.html").read_text(encoding="utf-8")
        titles = " | ".join(_titles(page))
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        headings = [h for cell in cells if cell["cell_type"] == "markdown"
                    for h in re.findall(r"^#{1,6} (.*)$", "".join(cell["source"]), re.M)]
        for heading in headings:
            for code in re.findall(r"`([^`]+)`", heading):
                assert _has(titles, code), f"{path.name}: `{code}` of {heading!r} missing"
        link = re.search(rf'href="notebooks/{path.stem}/"[^>]*>(.*?)</a>', home, re.S)
        nav = " ".join(html.unescape(re.sub(r"<[^>]*>", "", link.group(1))).split()) if link else ""
        for code in re.findall(r"`([^`]+)`", headings[0] if headings else ""):
            assert _has(nav, code), (
                f"{path.name}: `{code}` of {headings[0]!r} not in its navigation title {nav!r}")


def test_notebook_tables_of_contents_link_to_headings(site):
    built = _built(site)
    for page in sorted((built / "notebooks").glob("*/index.html")):
        text = page.read_text(encoding="utf-8")
        start = text.find("md-nav--secondary")  # the page's table of contents
        toc = text[start:text.find("</nav>", start)] if start >= 0 else ""
        ids = set(re.findall(r'\bid="([^"]+)"', text))
        missing = [a for a in re.findall(r'href="#([^"]+)"', toc) if a not in ids]
        assert not missing, f"{page.parent.name}: table of contents links to {missing}"


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
