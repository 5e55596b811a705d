"""Rule cases for the collectives (ftorch.distributed). The suite runs in
one process, where every collective is the identity: the checks exercise
the rules' code (JVP, VJP, second order, batching, shape) with a group of
one; tests/test_distributed.py checks their values across two processes."""

from harness import Case, floats, shapes
from hypothesis import strategies as st

import ftorch.distributed as dist

CASES = [
    Case("process_all_sum", dist.all_sum, st.tuples(floats(shapes())),
         name="distributed.all_sum"),
    Case("process_all_sum", dist.all_mean, st.tuples(floats(shapes())),
         name="distributed.all_mean"),
    Case("process_all_sum", lambda x: dist.broadcast(x, root=0), st.tuples(floats(shapes())),
         name="distributed.broadcast"),
    Case("process_all_gather", lambda x: dist.all_gather(x, tiled=True),
         st.tuples(floats(shapes(1))), name="distributed.all_gather[tiled]"),
    Case("process_all_gather", dist.all_gather, st.tuples(floats(shapes())),
         name="distributed.all_gather"),
    Case("process_all_max", dist.all_max, st.tuples(floats(shapes())),
         name="distributed.all_max"),
    Case("process_all_min", dist.all_min, st.tuples(floats(shapes())),
         name="distributed.all_min"),
]
