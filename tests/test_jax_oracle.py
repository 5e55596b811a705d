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
from oracle import (
    NAMESPACES,
    cases,
    check,
    check_batching,
    jax_names,
    out_of_scope,
    public,
    resolve,
)

ORACLE, UNCHECKED = cases()

# JAX compiles each function for each new shape (tens of milliseconds), so the oracle
# draws an eighth of the suite's examples per name (one by default; each run draws anew).
EXAMPLES = max(1, int(os.environ.get("FTORCH_EXAMPLES", "8")) // 8)


@pytest.mark.parametrize("case", ORACLE, ids=str)
@settings(max_examples=EXAMPLES)
@given(data=st.data())
def test_agrees_with_jax(case, data):
    check(case, data.draw)


BATCHED = [c for c in ORACLE if c.batch and c.values and c.run is None]


@pytest.mark.parametrize("case", BATCHED, ids=str)
@settings(max_examples=1)
@given(data=st.data())
def test_vmap_agrees_with_a_loop(case, data):
    """Everything JAX batches, ftorch batches too: vmap of each function against a loop."""
    check_batching(case, data.draw)


@pytest.mark.parametrize("case", ORACLE, ids=str)
def test_case_names_a_shared_function(case):
    resolve(case.name)


def test_every_shared_name_has_an_oracle():
    covered = {c.name for c in ORACLE} | set(UNCHECKED)
    skipped = out_of_scope()
    missing = []
    for jax_mod, names in jax_names().items():
        ours = set(public(NAMESPACES[jax_mod]))
        missing += [f"{jax_mod}.{n}" for n in names
                    if n in ours and n not in skipped.get(jax_mod, {})
                    and f"{jax_mod}.{n}" not in covered]
    assert not missing, f"{len(missing)} shared names without an oracle case: {missing}"


CONSTANTS = ["e", "pi", "inf", "nan", "euler_gamma"]
DTYPES = ["bfloat16", "bool_", "complex64", "float16", "float32", "float64", "int8", "int16",
          "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


def test_constants_and_dtypes_are_jax_numpys():
    import jax.numpy as jnp
    import mlx.core as mx
    import numpy as np

    import ftorch.numpy as fnp

    for name in CONSTANTS:
        if hasattr(fnp, name):
            np.testing.assert_equal(getattr(fnp, name), getattr(jnp, name), err_msg=name)
    assert fnp.newaxis is jnp.newaxis is None
    assert isinstance(fnp.asarray([1.0]), fnp.ndarray)
    for name in DTYPES:
        ours = getattr(fnp, name)
        theirs = np.dtype(getattr(jnp, name))
        made = mx.zeros((1,), ours) if isinstance(ours, mx.Dtype) else fnp.asarray(0, ours)
        assert np.array(made.astype(mx.float32) if made.dtype == mx.bfloat16 else made
                        ).dtype.name == ("float32" if name == "bfloat16" else theirs.name), name
