"""Transforms: interpreters over the primitives' rules, one file each; the
differentiation API built on them is ``ftorch.api``, re-exported here."""

from ftorch.api import grad, hessian, jacfwd, jacrev, jvp, linearize, value_and_grad, vjp
from ftorch.transforms.jit import jit
from ftorch.transforms.staging import eval_shape, make_graph
from ftorch.transforms.vmap import vmap

__all__ = [
    "jvp", "linearize", "jacfwd", "vjp", "grad", "value_and_grad", "jacrev", "hessian", "vmap",
    "jit", "make_graph", "eval_shape",
]
