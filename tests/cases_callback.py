"""Rule cases for ``pure_callback``: it has no derivative (as in JAX), so
only its batching (each ``vmap_method``) and staging are checked here;
tests/test_runtime.py checks the rest. ``debug_callback`` (``ft.debug``) has
no results: its case checks that it leaves every transform of the function
around it intact; tests/test_debug.py checks what the callback sees."""

import numpy as np
from harness import Case, floats, shapes

import ftorch as ft


def _host_square(vmap_method):
    def fn(x):
        return ft.pure_callback(lambda a: np.square(a), ft.ShapeDtypeStruct(x.shape, x.dtype), x,
                                vmap_method=vmap_method)
    return fn


CASES = [
    Case("pure_callback", _host_square(method), floats(shapes()).map(lambda a: (a,)),
         fd=False, vjp=False, name=f"pure_callback_{method}")
    for method in ("sequential", "expand_dims", "broadcast_all")
]


def _observed_product(x):
    ft.debug.callback(lambda a: np.asarray(a).sum(), x)
    return ft.numpy.tanh(x) * x


CASES.append(Case("debug_callback", _observed_product, floats(shapes()).map(lambda a: (a,)),
                  name="debug_callback"))
