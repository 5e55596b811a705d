"""The research notebooks (notebooks/*.ipynb) run from top to bottom at their
small sizes, and are committed without outputs.

Each notebook is executed by nbclient in a fresh IPython kernel started from
this interpreter (so from the same environment as the tests), with
``FTORCH_NOTEBOOK_SMALL=1`` and the notebooks folder as working directory, by
``docs/notebook_outputs.py``, which keeps the executed copy in
``build/executed/notebooks/`` for the documentation site.
"""

import json
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "docs"))
import notebook_outputs  # noqa: E402

NOTEBOOKS = ROOT / "notebooks"
PATHS = notebook_outputs.notebooks()


def test_notebooks_exist():
    assert PATHS, f"no notebooks in {NOTEBOOKS}"


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_notebook_is_stripped(path):
    """Committed notebooks carry no outputs, execution counts or widget state."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    dirty = [i for i, cell in enumerate(nb["cells"]) if cell["cell_type"] == "code"
             and (cell.get("outputs") or cell.get("execution_count") is not None)]
    assert not dirty, f"{path.name}: cells {dirty} have outputs or execution counts"
    assert "widgets" not in nb.get("metadata", {}), f"{path.name}: has widget state"


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_notebook_runs(path):
    # Executes the notebook (once per session: if test_docs_site.py executed it
    # already, that run is the one checked) and writes its executed copy to
    # build/executed/notebooks/, which the documentation site renders.
    nb = notebook_outputs.run(path)  # raises CellExecutionError, with the cell and traceback
    errors = [out for cell in nb.cells if cell.cell_type == "code"
              for out in cell.get("outputs", []) if out.get("output_type") == "error"]
    assert not errors
    assert notebook_outputs.executed_copy(path) is not None
