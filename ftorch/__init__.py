"""ftorch: composable function transforms (grad, vjp, jvp, vmap, jit) on MLX.

>>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
>>> ft.grad(lambda x: fnp.sum(x ** 2))(mx.array([1.0, 2.0])).tolist()
[2.0, 4.0]
"""

# Must run before anything imports mlx.core: it makes MLX's CPU matmul use
# an optimized BLAS on Linux (see ftorch/backend/blas.py).
from ftorch.backend import blas as _blas

_blas.load()

from ftorch import tree
from ftorch.core import LeakedTracerError, ShapeDtypeStruct
from ftorch.transforms import (
    grad,
    hessian,
    jacfwd,
    jacrev,
    jvp,
    linearize,
    eval_shape,
    jit,
    make_graph,
    value_and_grad,
    vjp,
    vmap,
)
from ftorch.config import config
from ftorch.api import fwd_and_bwd, jacobian, linear_transpose
from ftorch.primitives.callback import pure_callback
from ftorch.transforms.staging import ConcretizationError
from ftorch import numpy
from ftorch import lax
from ftorch import random
from ftorch import scipy
from ftorch import ops
from ftorch import test_util
from ftorch import extend
from ftorch.custom import closure_convert, custom_gradient, custom_jvp, custom_vjp
from ftorch import custom_batching
from ftorch.transforms.remat import checkpoint, checkpoint_name, checkpoint_policies, remat
from ftorch.numpy import stop_gradient
from ftorch import nn
from ftorch.serialization import load, save
from ftorch import distributed
from ftorch import amp
from ftorch import debug
from ftorch import profiler
from ftorch import export
from ftorch.transforms import float_checks as _float_checks  # noqa: F401  (the NaN checks)
from ftorch.backend.blas import set_threads as set_blas_threads
from ftorch.runtime import (
    block_until_ready,
    clear_caches,
    debug_infs,
    debug_nans,
    default_backend,
    default_device,
    device_count,
    device_get,
    device_put,
    devices,
    disable_jit,
    ensure_compile_time_eval,
    local_device_count,
    local_devices,
    log_compiles,
    make_jaxpr,
    named_call,
    named_scope,
    print_environment_info,
    process_count,
    process_index,
    process_indices,
    typeof,
)

tree_util = tree  # jax.tree_util's names are in ftorch.tree too

__version__ = "0.1.0"

__all__ = [
    "grad", "value_and_grad", "vjp", "jvp", "linearize", "jacfwd", "jacrev", "hessian", "vmap",
    "jit", "make_graph", "eval_shape", "config", "stop_gradient", "tree", "numpy", "nn",
    "ShapeDtypeStruct", "ConcretizationError", "LeakedTracerError", "info", "lax", "random",
    "scipy", "ops", "test_util", "extend",
    "custom_jvp", "custom_vjp", "custom_batching", "checkpoint", "remat", "checkpoint_name",
    "checkpoint_policies", "save", "load", "set_blas_threads", "distributed", "amp", "debug",
    "profiler",
    "export",
    "jacobian", "linear_transpose", "fwd_and_bwd", "custom_gradient", "closure_convert",
    "pure_callback", "tree_util", "block_until_ready", "device_put", "device_get", "devices",
    "local_devices", "device_count", "local_device_count", "default_backend", "default_device",
    "process_index", "process_count", "process_indices", "clear_caches", "disable_jit",
    "debug_nans", "debug_infs",
    "log_compiles", "ensure_compile_time_eval", "make_jaxpr", "typeof", "named_scope",
    "named_call", "print_environment_info",
]


def __getattr__(name: str):
    # ftorch.info is imported on first use, so that `python -m ftorch.info`
    # does not find it already imported (runpy warns about that).
    if name == "info":
        from ftorch.info import info

        globals()["info"] = info
        return info
    raise AttributeError(f"module 'ftorch' has no attribute {name!r}")
