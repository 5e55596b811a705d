"""Transforms: interpreters over the primitives' rules, one file each."""

from ftorch.transforms.jit import jit
from ftorch.transforms.jvp import jacfwd, jvp, linearize
from ftorch.transforms.staging import eval_shape, make_graph
from ftorch.transforms.vjp import grad, hessian, jacrev, value_and_grad, vjp
from ftorch.transforms.vmap import vmap

__all__ = [
    "jvp", "linearize", "jacfwd", "vjp", "grad", "value_and_grad", "jacrev", "hessian", "vmap",
    "jit", "make_graph", "eval_shape",
]
