"""Every name ftorch shares with JAX and optax, against JAX and optax themselves
(tests/oracle.py): values, shapes and dtypes on drawn arguments, and VJPs where defined.

A namesake that disagrees with JAX fails here unless the case draws around a difference
listed in the docs' translation tables (docs/hooks.py). The last test keeps the list
honest: every shared name has a case, or an entry in some case file's ``UNCHECKED`` with
the test that checks it instead.
"""

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracle import NAMESPACES, cases, check, jax_names, out_of_scope, public, resolve

ORACLE, UNCHECKED = cases()

# JAX compiles each function for each new shape (tens of milliseconds), so the oracle
# draws a quarter of the suite's examples per name.
EXAMPLES = max(2, int(os.environ.get("FTORCH_EXAMPLES", "8")) // 4)


@pytest.mark.parametrize("case", ORACLE, ids=str)
@settings(max_examples=EXAMPLES)
@given(data=st.data())
def test_agrees_with_jax(case, data):
    check(case, data.draw)


@pytest.mark.parametrize("case", ORACLE, ids=str)
def test_case_names_a_shared_function(case):
    resolve(case.name)


def test_every_shared_name_has_an_oracle():
    covered = {c.name for c in ORACLE} | set(UNCHECKED)
    skipped = out_of_scope()
    missing = []
    for jax_mod, names in jax_names().items():
        ours = set(public(NAMESPACES[jax_mod])) if _exists(NAMESPACES[jax_mod]) else set()
        missing += [f"{jax_mod}.{n}" for n in names
                    if n in ours and n not in skipped.get(jax_mod, {})
                    and f"{jax_mod}.{n}" not in covered]
    assert not missing, f"{len(missing)} shared names without an oracle case: {missing}"


def _exists(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None
