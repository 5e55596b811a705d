import os

from hypothesis import HealthCheck, settings

import ftorch  # noqa: F401  (first: it loads the fast BLAS before mlx.core is imported)

settings.register_profile(
    "default", max_examples=int(os.environ.get("FTORCH_EXAMPLES", "8")), deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True)
settings.load_profile("default")
