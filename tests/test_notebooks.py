"""The research notebooks (notebooks/*.ipynb) run from top to bottom at their
small sizes, and are committed without outputs.

Each notebook is executed by nbclient in a fresh IPython kernel started from
this interpreter (so from the same environment as the tests), with
``FTORCH_NOTEBOOK_SMALL=1`` and the notebooks folder as working directory.
"""

import json
import pathlib
import sys

import pytest

NOTEBOOKS = pathlib.Path(__file__).resolve().parent.parent / "notebooks"
PATHS = sorted(NOTEBOOKS.glob("*.ipynb"))
TIMEOUT_S = 300  # per cell; each notebook takes well under a minute at small sizes


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


@pytest.fixture(scope="module")
def kernel_dir(tmp_path_factory):
    """A kernel spec that starts ipykernel with this interpreter, whatever
    kernels the machine has installed."""
    import ipykernel  # noqa: F401  (the kernel runs it: fail here, clearly, without it)

    root = tmp_path_factory.mktemp("kernels")
    spec = root / "ftorch-notebooks"
    spec.mkdir()
    env = {"FTORCH_NOTEBOOK_SMALL": "1", "MPLBACKEND": "module://matplotlib_inline.backend_inline"}
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "ftorch notebooks", "language": "python", "env": env}))
    return root


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_notebook_runs(path, kernel_dir):
    import nbclient
    import nbformat
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager

    nb = nbformat.read(path, as_version=4)
    ksm = KernelSpecManager(kernel_dirs=[str(kernel_dir)])
    km = KernelManager(kernel_name="ftorch-notebooks", kernel_spec_manager=ksm)
    client = nbclient.NotebookClient(nb, km=km, timeout=TIMEOUT_S,
                                     resources={"metadata": {"path": str(NOTEBOOKS)}})
    client.execute()  # raises CellExecutionError, with the cell and traceback, on an error
    errors = [out for cell in nb.cells if cell.cell_type == "code"
              for out in cell.get("outputs", []) if out.get("output_type") == "error"]
    assert not errors

