"""Argument handling shared by the transforms: argnums, pytrees, checks."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import mlx.core as mx

from ftorch import tree
from ftorch.core import Tracer, as_array, aval_of, is_complex, is_floating, is_inexact


def check_callable(f: Any, fname: str) -> None:
    """Transforms take functions: say so when given something else."""
    if not callable(f):
        raise TypeError(f"{fname}: expected a function to transform, got "
                        f"{type(f).__name__}: {f!r}")


def normalize_argnums(argnums: int | Sequence[int], nargs: int, fname: str) -> tuple[int, ...]:
    """Check ``argnums`` against the call's positional arguments."""
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    if not nums:
        raise ValueError(f"{fname}: argnums must name at least one argument")
    out = []
    for n in nums:
        if not isinstance(n, int):
            raise TypeError(f"{fname}: argnums must be ints, got {n!r}")
        if not -nargs <= n < nargs:
            raise ValueError(
                f"{fname}: argnums={argnums!r} is out of range for a call with {nargs} "
                f"positional argument{'s' if nargs != 1 else ''}"
            )
        if n % nargs in out:
            raise ValueError(f"{fname}: argnums={argnums!r} names argument {n % nargs} twice")
        out.append(n % nargs)
    return tuple(out)


class OutputInfo:
    """What a function made by ``flatten_fun`` learned about its output the
    last time it ran (its tree, its auxiliary data, ...): ``.value``."""

    __slots__ = ("value",)


def flatten_fun(f: Callable, in_tree: Any, flatten_out: Callable[[Any], tuple[list, Any]],
                kwargs: bool = False) -> tuple[Callable, OutputInfo]:
    """``f`` as a function of a list of leaves returning a list of leaves:
    the one way a transform runs a user's function.

    The leaves are unflattened with ``in_tree``, the tree of the positional
    arguments' tuple (of ``(args, kwargs)`` when ``kwargs``); ``flatten_out``
    maps ``f``'s result to its leaves and what to record about it, which
    the returned ``OutputInfo`` holds once the function has run."""
    info = OutputInfo()

    def flat_f(leaves):
        if kwargs:
            args, kw = tree.unflatten(in_tree, leaves)
            out = f(*args, **kw)
        else:
            out = f(*tree.unflatten(in_tree, leaves))
        out_leaves, info.value = flatten_out(out)
        return out_leaves

    return flat_f, info


def flatten_arrays(value: Any, what: str) -> tuple[list, Any]:
    """Flatten a pytree whose leaves must be arrays (or array-likes)."""
    leaves, treedef = tree.flatten(value)
    out = []
    for i, leaf in enumerate(leaves):
        if isinstance(leaf, (mx.array, Tracer)):  # the common case, kept cheap
            out.append(leaf)
            continue
        try:
            out.append(as_array(leaf))
        except TypeError:
            where = leaf_names(treedef, what)[i]
            raise TypeError(
                f"{where} must be an array, got {type(leaf).__name__}: {leaf!r}"
            ) from None
    return out, treedef


def leaf_names(treedef: Any, what: str) -> list[str]:
    return [what + "".join(f"[{p!r}]" for p in path) for path in treedef.paths()]


def check_differentiable(leaves: list, treedef: Any, what: str, fname: str, *,
                         holomorphic: bool = False, complex_ok: bool = True) -> None:
    """Gradients exist only for floating and complex inputs; complex ones only
    where ``complex_ok`` (reverse mode) or with ``holomorphic`` (then all must be)."""
    for name, leaf in zip(leaf_names(treedef, what), leaves):
        dtype = aval_of(leaf).dtype
        if holomorphic:
            if not is_complex(dtype):
                raise TypeError(f"{fname} with holomorphic=True requires complex inputs, but "
                                f"{name} has dtype {dtype}")
        elif not is_inexact(dtype):
            raise TypeError(
                f"{fname} requires floating-point inputs, but {name} has dtype {dtype}; "
                "cast it with .astype(mx.float32) or leave it out of argnums"
            )
        elif is_complex(dtype) and not complex_ok:
            raise TypeError(
                f"{fname} requires real floating-point inputs, but {name} has dtype {dtype}. "
                "For holomorphic functions pass holomorphic=True; for others use ft.jvp "
                "directly (or differentiate w.r.t. the real and imaginary parts)")


def check_output_dtype(dtype: Any, fname: str, holomorphic: bool) -> None:
    """Reverse-mode Jacobians and gradients need real outputs, or complex ones
    with ``holomorphic`` (as JAX)."""
    if holomorphic:
        if not is_complex(dtype):
            raise TypeError(f"{fname} with holomorphic=True requires complex outputs, got "
                            f"dtype {dtype}")
    elif is_complex(dtype):
        raise TypeError(
            f"{fname} requires real-valued outputs, got dtype {dtype}. For holomorphic "
            "functions pass holomorphic=True; for others take a real part (fnp.real, fnp.abs) "
            "or use ft.vjp directly")
    elif not is_floating(dtype):
        raise TypeError(f"{fname} requires a floating-point output, got dtype {dtype}")


def substitute(args: tuple, argnums: tuple[int, ...], values: Sequence) -> tuple:
    args = list(args)
    for n, v in zip(argnums, values):
        args[n] = v
    return tuple(args)


def split_aux(out: Any, has_aux: bool, fname: str) -> tuple[Any, Any]:
    if not has_aux:
        return out, None
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise TypeError(f"{fname}(has_aux=True) needs the function to return a pair (output, aux)")
    return out[0], out[1]


def check_like(value: Any, ref: Any, name: str, role: str) -> None:
    """``value`` must have ``ref``'s shape and, for floating or complex refs, its dtype."""
    v, r = aval_of(value), aval_of(ref)
    if v.shape != r.shape:
        raise ValueError(f"{name}: {role} has shape {v.shape}, expected {r.shape}")
    if is_inexact(r.dtype) and v.dtype != r.dtype:
        raise TypeError(f"{name}: {role} has dtype {v.dtype}, expected {r.dtype}")


def as_output(x: Any, name: str) -> Any:
    if isinstance(x, (mx.array, Tracer)):
        return x
    try:
        return as_array(x)
    except TypeError:
        raise TypeError(f"{name} must be an array, got {type(x).__name__}: {x!r}") from None

