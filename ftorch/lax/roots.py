"""``custom_root``: a root finder differentiated implicitly, as
``jax.lax.custom_root``.

``x = solve(f, initial_guess)`` is taken to satisfy ``f(x) = 0``, however
``solve`` finds it (Newton's method, bisection, a library call).
Differentiating ``f(x, theta) = 0`` in the values ``theta`` that ``f``
closes over gives ``J_x dx = -J_theta dtheta``: the JVP solves that linear
system with ``tangent_solve(g, y)`` (``g`` the linear map ``J_x``), through
``custom_linear_solve``, whose transpose gives reverse mode. Derivatives
never go through ``solve``, and the initial guess has none.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ftorch.primitives as lax
from ftorch import api_util, tree
from ftorch.core import aval_of
from ftorch.custom import custom_jvp
from ftorch.graph import evaluate
from ftorch.primitives import elementwise
from ftorch.primitives._control import check_same_avals
from ftorch.primitives.solves import custom_linear_solve
from ftorch.transforms.jvp import jvp_flat
from ftorch.transforms.staging import stage_function

__all__ = ["custom_root"]


def custom_root(f: Callable, initial_guess: Any, solve: Callable, tangent_solve: Callable,
                has_aux: bool = False) -> Any:
    """The root of ``f`` that ``solve(f, initial_guess)`` finds,
    differentiated implicitly, as ``jax.lax.custom_root``: ``f`` maps a
    pytree of arrays to one like it, and its derivatives in the values it
    closes over follow from ``f(x) = 0`` (``tangent_solve(g, y)`` solves the
    linear ``g(x) = y``, ``g`` being ``f``'s derivative at the root; for a
    scalar, ``lambda g, y: y / g(1.0)``). With ``has_aux``, ``solve``
    returns ``(root, aux)``, and so does this function; ``aux`` has no
    derivative.

    >>> import ftorch as ft, ftorch.lax as lax, mlx.core as mx
    >>> def newton(f, x):
    ...     for _ in range(20):
    ...         x = x - f(x) / ft.grad(f)(x)
    ...     return x
    >>> def sqrt(a):
    ...     return lax.custom_root(lambda x: x ** 2 - a, a, newton, lambda g, y: y / g(1.0))
    >>> round(sqrt(mx.array(2.0)).item(), 5), round(ft.grad(sqrt)(mx.array(4.0)).item(), 5)
    (1.41421, 0.25)
    """
    fname = "custom_root"
    for name, fn in (("f", f), ("solve", solve), ("tangent_solve", tangent_solve)):
        api_util.check_callable(fn, f"{fname}: {name}")
    guess_leaves, x_tree = api_util.flatten_arrays(initial_guess, f"{fname} initial_guess")
    x_avals = [aval_of(x) for x in guess_leaves]
    names = api_util.leaf_names(x_tree, "initial_guess")

    def like_x(out):
        leaves, out_tree = api_util.flatten_arrays(out, f"{fname} f's output")
        check_same_avals(fname, "f's output and initial_guess", names,
                         (out_tree, [aval_of(x) for x in leaves], "from f"),
                         (x_tree, x_avals, "in initial_guess"))
        return leaves, out_tree

    # f staged once: the values of enclosing transforms it closes over (theta)
    # become explicit arguments, which custom_jvp differentiates.
    args_tree = tree.structure((tree.unflatten(x_tree, [0] * len(x_avals)),))
    staged = stage_function(f, x_avals, args_tree, f"{fname} f", like_x)

    def f_at(theta: list) -> Callable:
        def residual(x):
            leaves, _ = api_util.flatten_arrays(x, f"{fname} f's argument")
            return tree.unflatten(x_tree, evaluate(staged.graph, [*theta, *leaves]))
        return residual

    def find(theta: list, guess: Any) -> Any:
        out = solve(f_at(theta), tree.map(elementwise.stop_gradient, guess))
        if has_aux and not (isinstance(out, tuple) and len(out) == 2):
            raise TypeError(f"{fname}: with has_aux=True, solve must return a pair "
                            f"(root, aux), got {type(out).__name__}")
        return out

    root = custom_jvp(find)

    @root.defjvp
    def root_jvp(primals, tangents):
        theta, guess = primals
        d_theta, _ = tangents
        out = root(theta, guess)
        x = out[0] if has_aux else out
        x_leaves, _ = api_util.flatten_arrays(x, f"{fname} solve's root")
        residual = lambda th: evaluate(staged.graph, [*th, *x_leaves])  # noqa: E731
        _, df = jvp_flat(residual, list(theta), list(d_theta))
        rhs = tree.unflatten(x_tree, [lax.zeros(a.shape, a.dtype) if d is None
                                      else elementwise.negative(d) for d, a in zip(df, x_avals)])

        def jacobian_x(z):  # the linear map J_x at the root
            z_leaves, _ = api_util.flatten_arrays(z, f"{fname} tangent_solve's argument")
            _, dz = jvp_flat(lambda xs: evaluate(staged.graph, [*theta, *xs]), x_leaves,
                             z_leaves)
            return tree.unflatten(x_tree, dz)

        dx = custom_linear_solve(jacobian_x, rhs, tangent_solve,
                                 lambda g_transposed, y: tangent_solve(g_transposed, y))
        if has_aux:
            aux = out[1]
            return out, (dx, tree.map(lambda a: elementwise.multiply(a, 0), aux))
        return out, dx

    return root(list(staged.hoisted), initial_guess)
