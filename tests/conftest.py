import os

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.database import InMemoryExampleDatabase

import ftorch  # (first: it loads the fast BLAS before mlx.core is imported)

# FTORCH_TEST_DEVICE=gpu runs the suite with MLX's GPU (Metal, CUDA) as the
# default device; child processes (tests/child.py) follow it. Tests that only
# make sense on the CPU carry ``@pytest.mark.cpu_only(reason)`` and skip there.
TEST_DEVICE = os.environ.get("FTORCH_TEST_DEVICE", "cpu")
if TEST_DEVICE not in ("cpu", "gpu"):
    raise ValueError(f"FTORCH_TEST_DEVICE={TEST_DEVICE!r}: expected 'cpu' or 'gpu'")
if TEST_DEVICE == "gpu":
    import mlx.core as mx  # here: ftorch must be imported before mlx.core

    if not mx.is_available(mx.gpu):
        raise RuntimeError("FTORCH_TEST_DEVICE=gpu, but MLX has no GPU here")
    mx.set_default_device(mx.gpu)

# Every graph jit stages or derives in the tests is typechecked: a bad rule or
# pass fails at the equation it breaks.
ftorch.config.check_graphs = True
# jit compiles from the first call, as before the default policy that waits on
# the CPU: the suite checks compiled execution (test_jit_compile_policy.py
# checks the policy itself).
ftorch.config.jit_compile_after = 0

# With CI set, Hypothesis's own default has no example database. Its pytest
# plugin wraps a parametrized test's settings once per case, and without a
# database every case walks that whole chain: quadratic time, and a
# RecursionError past about 950 cases (the JAX oracle has 1,300). An in-memory
# database ends the walk at the first level.
settings.register_profile(
    "default", max_examples=int(os.environ.get("FTORCH_EXAMPLES", "8")), deadline=None,
    database=settings.default.database or InMemoryExampleDatabase(),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True)
settings.load_profile("default")


@pytest.fixture(autouse=True)
def _jit_rule_cases_uncompiled(request):
    """The rule checks of the ``jit`` cases check ftorch's graph transforms
    with MLX's compiler off: every derived graph and shape would otherwise
    g++-compile its own fused CPU kernels (about half a second each).
    Compiled execution is checked in tests/test_jit.py."""
    callspec = getattr(request.node, "callspec", None)
    case = callspec.params.get("case") if callspec is not None else None
    from harness import compiler_off  # here: ftorch must be imported before mlx.core

    with compiler_off(getattr(case, "prim", None) == "jit"):
        yield


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "cpu_only(reason): the test checks something only the CPU has; it skips "
        "when FTORCH_TEST_DEVICE=gpu")


def pytest_collection_modifyitems(config, items):
    if TEST_DEVICE == "cpu":
        return
    for item in items:
        marker = item.get_closest_marker("cpu_only")
        if marker is not None:
            reason = marker.args[0] if marker.args else "a CPU-only check"
            item.add_marker(pytest.mark.skip(reason=f"CPU only: {reason}"))
