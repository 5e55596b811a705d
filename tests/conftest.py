import os

import pytest
from hypothesis import HealthCheck, settings

import ftorch  # (first: it loads the fast BLAS before mlx.core is imported)

# Every graph jit stages or derives in the tests is typechecked: a bad rule or
# pass fails at the equation it breaks.
ftorch.config.check_graphs = True
# jit compiles from the first call, as before the default policy that waits on
# the CPU: the suite checks compiled execution (test_jit_compile_policy.py
# checks the policy itself).
ftorch.config.jit_compile_after = 0

settings.register_profile(
    "default", max_examples=int(os.environ.get("FTORCH_EXAMPLES", "8")), deadline=None,
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
