"""How ftorch's API handles a user's functions and arguments (JAX's
``api_util``): running a function on flat leaves (``flatten_fun``), the
check that outputs are arrays (``flatten_arrays``, ``output_flattener``),
naming a leaf by its key path (``leaf_names``), and the argument checks
(``check_callable``, ``normalize_argnums``, ``check_axis``) with the
messages every caller shares.

>>> from ftorch import api_util, tree
>>> import mlx.core as mx
>>> args = (mx.ones(2), {"w": mx.ones(3)})
>>> leaves, in_tree = api_util.flatten_arrays(args, "args")
>>> flat_f, out = api_util.flatten_fun(lambda x, p: (x.sum() + p["w"].sum(), 2.0), in_tree,
...                                   api_util.output_flattener("f"))
>>> [y.item() for y in flat_f(leaves)]
[5.0, 2.0]
>>> out.value[0]
PyTreeSpec((*, *))
>>> api_util.leaf_names(in_tree, "args")
['args[0]', "args[1]['w']"]
"""

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


def check_axis(axis: int, ndim: int, fname: str, argname: str = "axis", *,
               of: str | Callable[[], str] | None = None, within: str | None = None) -> int:
    """``axis`` counted from 0 (a negative one from the end), after checking
    that it is one of ``ndim`` axes; else the ``ValueError`` every function
    raises: "fname: argname axis [in within] is out of range for of", ``of``
    being "an array of ndim N" unless given (a function making it, where
    naming the operand costs more than the check).

    >>> from ftorch.api_util import check_axis
    >>> check_axis(-1, 3, "sum")
    2
    >>> check_axis(2, 2, "swapaxes", "axis1")
    Traceback (most recent call last):
    ...
    ValueError: swapaxes: axis1 2 is out of range for an array of ndim 2
    """
    if not -ndim <= axis < ndim:
        subject = f"{argname} {axis}" + (f" in {within}" if within else "")
        of = of() if callable(of) else of
        raise ValueError(f"{fname}: {subject} is out of range for "
                         f"{of or f'an array of ndim {ndim}'}")
    return axis % ndim


def normalize_argnums(argnums: int | Sequence[int], nargs: int, fname: str) -> tuple[int, ...]:
    """Check ``argnums`` against the call's positional arguments.

    >>> from ftorch.api_util import normalize_argnums
    >>> normalize_argnums((0, -1), 3, "grad")
    (0, 2)
    """
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
    the one way ftorch runs a user's function (transforms, custom rules,
    control flow).

    The leaves are unflattened with ``in_tree``, the tree of the positional
    arguments' tuple (of ``(args, kwargs)`` when ``kwargs``); ``flatten_out``
    maps ``f``'s result to its leaves and what to record about it (most
    callers: ``output_flattener``), which the returned ``OutputInfo`` holds
    once the function has run. Static arguments are bound into ``f`` first
    (``with_static``)."""
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


def output_flattener(fname: str, has_aux: bool = False, what: str = "output"
                     ) -> Callable[[Any], tuple[list, tuple[Any, Any]]]:
    """The ``flatten_out`` of ``flatten_fun`` for a function whose result is
    a pytree of arrays (with ``has_aux``, a pair ``(result, aux)``): the
    result's leaves, checked by ``flatten_arrays``, recording ``(its tree, aux)``."""
    def flatten_out(out: Any) -> tuple[list, tuple[Any, Any]]:
        out, aux = split_aux(out, has_aux, fname)
        leaves, treedef = flatten_arrays(out, what)
        return leaves, (treedef, aux)

    return flatten_out


def with_static(f: Callable, args: Sequence, dynamic: Sequence[int],
                kwargs: dict | None = None) -> Callable:
    """``f`` as a function of the arguments at positions ``dynamic`` only,
    the others (and the keyword arguments) fixed to those of the call."""
    kwargs = kwargs or {}
    return lambda *values: f(*substitute(args, dynamic, values), **kwargs)


def flatten_arrays(value: Any, what: str) -> tuple[list, Any]:
    """Flatten a pytree whose leaves must be arrays (or array-likes, which are
    converted): the one check of a user's arrays and results, naming the leaf
    that is not one ("what['w'] must be an array, got str: 'a'")."""
    leaves, treedef = tree.flatten(value)
    out = []
    for i, leaf in enumerate(leaves):
        if isinstance(leaf, (mx.array, Tracer)):  # the common case, kept cheap
            out.append(leaf)
            continue
        try:
            out.append(as_array(leaf))
        except TypeError:
            raise TypeError(
                f"{leaf_names(treedef, what)[i]} must be an array, got "
                f"{type(leaf).__name__}: {leaf!r}") from None
    return out, treedef


def leaf_names(treedef: Any, what: str) -> list[str]:
    """Each leaf of ``treedef`` named by its key path under ``what``, as
    ``ftorch.tree.keystr`` writes it: ``what['w'][0]``, ``what.field``."""
    return [what + tree.keystr(path) for path in tree.key_paths(treedef)]


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


def substitute(args: Sequence, argnums: Sequence[int], values: Sequence) -> tuple:
    """``args`` with the ones at ``argnums`` replaced by ``values``."""
    args = list(args)
    for n, v in zip(argnums, values):
        args[n] = v
    return tuple(args)


def split_aux(out: Any, has_aux: bool, fname: str) -> tuple[Any, Any]:
    """``(output, aux)`` of a function's result: the pair it returns with
    ``has_aux``, else ``(result, None)``."""
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
    """``flatten_arrays``'s check for a result that must be one array."""
    if isinstance(x, (mx.array, Tracer)):
        return x
    try:
        return as_array(x)
    except TypeError:
        raise TypeError(f"{name} must be an array, got {type(x).__name__}: {x!r}") from None

