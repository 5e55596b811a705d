"""Executed copies of the notebooks, so that the site shows their outputs.

The notebooks in ``notebooks/`` are committed without outputs. The site
renders, in place of each, a copy executed at its small sizes
(``FTORCH_NOTEBOOK_SMALL=1``, what the tests run) that is kept in
``build/executed/notebooks/`` (ignored by git). A copy records the SHA-256
of the notebook it was executed from, and is used only while that notebook
is unchanged.

- ``tests/test_notebooks.py`` executes every notebook and writes its copy;
  ``tests/test_docs_site.py`` executes, before it builds the site, only the
  notebooks without a current copy. Both go through :func:`run`, which
  executes a notebook once per process: in one pytest session each notebook
  runs once, whichever of the two tests comes first.
- ``docs/hooks.py`` renders the current copy of a notebook when there is
  one, and otherwise executes the notebook as the site is built
  (``FTORCH_DOCS_EXECUTE=0`` renders it without outputs instead).
- ``python docs/notebook_outputs.py`` executes the notebooks without a
  current copy (``--all``: every notebook; names select some).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
# build/executed/ mirrors the repository (build/executed/notebooks/01_quickstart.ipynb):
# the docs build reads a notebook from there as from the repository's root.
EXECUTED = ROOT / "build" / "executed" / "notebooks"
TIMEOUT_S = 300  # per cell; each notebook takes at most a few minutes at small sizes
FROM = "ftorch_executed_from"  # the copy's metadata key: the source notebook's SHA-256

# The kernel: ipykernel on this interpreter (so the environment of the tests or
# of the docs build, whatever kernels the machine has), at small sizes, with
# matplotlib's inline backend (PNG outputs).
KERNEL_ENV = {"FTORCH_NOTEBOOK_SMALL": "1",
              "MPLBACKEND": "module://matplotlib_inline.backend_inline"}

_runs: dict[tuple[Path, str], object] = {}  # (notebook, its hash) -> executed notebook or error


def notebooks() -> list[Path]:
    return sorted(NOTEBOOKS.glob("*.ipynb"))


def source_hash(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def copy_path(path: Path) -> Path:
    return EXECUTED / Path(path).name


def executed_copy(path: Path) -> Path | None:
    """The executed copy of ``path`` if there is one executed from the notebook
    as it is now, else None."""
    copy = copy_path(path)
    try:
        meta = json.loads(copy.read_text(encoding="utf-8")).get("metadata", {})
    except (OSError, ValueError):
        return None
    return copy if meta.get(FROM) == source_hash(path) else None


def execute(path: Path, timeout: int = TIMEOUT_S):
    """Execute the notebook ``path`` at small sizes in a fresh kernel, with
    ``notebooks/`` as working directory, and write its executed copy. Returns
    the executed notebook; raises nbclient's ``CellExecutionError`` (with the
    cell and its traceback) if a cell fails, and then writes nothing."""
    import ipykernel  # noqa: F401  (the kernel runs it: fail here, clearly, without it)
    import nbclient
    import nbformat
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager

    path = Path(path)
    digest = source_hash(path)
    nb = nbformat.read(path, as_version=4)
    with tempfile.TemporaryDirectory() as kernels:
        spec = Path(kernels) / "ftorch-notebooks"
        spec.mkdir()
        (spec / "kernel.json").write_text(json.dumps({
            "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": "ftorch notebooks", "language": "python", "env": KERNEL_ENV}))
        km = KernelManager(kernel_name="ftorch-notebooks",
                           kernel_spec_manager=KernelSpecManager(kernel_dirs=[kernels]))
        client = nbclient.NotebookClient(nb, km=km, timeout=timeout,
                                         resources={"metadata": {"path": str(path.parent)}})
        client.execute()
    nb.metadata[FROM] = digest
    EXECUTED.mkdir(parents=True, exist_ok=True)
    # Written whole, then renamed: a reader never sees half a copy.
    tmp = EXECUTED / f".{path.name}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        nbformat.write(nb, f)
    os.replace(tmp, copy_path(path))
    return nb


def run(path: Path):
    """:func:`execute`, once per process and version of the notebook: a later
    call returns the same executed notebook, or raises the same error."""
    key = (Path(path).resolve(), source_hash(path))
    if key not in _runs:
        try:
            _runs[key] = execute(path)
        except Exception as e:  # kept, and raised again on every call
            _runs[key] = e
    result = _runs[key]
    if isinstance(result, Exception):
        raise result
    return result


def main(argv: list[str]) -> int:
    every = "--all" in argv
    names = [a for a in argv if not a.startswith("-")]
    paths = [p for p in notebooks() if not names or p.stem in names or p.name in names]
    todo = [p for p in paths if every or executed_copy(p) is None]
    print(f"{len(paths) - len(todo)} of {len(paths)} notebooks have a current copy in "
          f"{EXECUTED.relative_to(ROOT)}/; executing {len(todo)}")
    failed = []
    for path in todo:
        start = time.perf_counter()
        try:
            execute(path)
        except Exception as e:
            failed.append(path.name)
            print(f"{path.name}: FAILED\n{e}", file=sys.stderr)
            continue
        print(f"{path.name}: {time.perf_counter() - start:.0f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
