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
