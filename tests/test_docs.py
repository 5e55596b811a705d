"""Every docstring example in ftorch runs and prints what it shows."""

import doctest
import importlib
import pkgutil

import pytest

import ftorch

MODULES = sorted(m.name for m in pkgutil.walk_packages(ftorch.__path__, "ftorch."))


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, report=True)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"


def test_readme_states_the_jax_coverage():
    """The README's coverage table is what docs/jax_names.py counts now."""
    import re
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    sys.path.insert(0, str(root / "docs"))
    from jax_names import coverage_table

    readme = (root / "README.md").read_text()
    block = re.search(r"<!-- jax-coverage:[^\n]*-->\n(.*?)<!-- /jax-coverage -->", readme,
                      re.S)
    assert block is not None, "README.md has no jax-coverage block"
    assert block.group(1).strip() == coverage_table().strip(), (
        "README.md's coverage table is stale: paste `python docs/jax_names.py`'s output")
