"""The differentiation API as users call it, built on the interpreters
(JAX's ``api.py``): ``jvp``, ``linearize`` and ``jacfwd`` on the JVP
interpreter (``transforms/jvp.py``), ``vjp``, ``value_and_grad``, ``grad``,
``jacrev`` and ``hessian`` on the tape (``transforms/vjp.py``). Each flattens
the user's function with ``api_util.flatten_fun`` and checks its arguments
and outputs with ``api_util``'s checks.

>>> import ftorch, mlx.core as mx
>>> from ftorch.api import jacrev
>>> jacrev(lambda x: x ** 2)(mx.array([1.0, 2.0])).tolist()
[[2.0, 0.0], [0.0, 4.0]]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import mlx.core as mx

import ftorch.primitives as lax
from ftorch import api_util, tree
from ftorch.core import ShapeDtypeStruct, aval_of, is_complex, is_inexact
from ftorch.transforms.jvp import JVPTracer, jvp_flat
from ftorch.transforms.vjp import VJPTracer, vjp_flat
from ftorch.transforms.vmap import vmap
from ftorch.typing import PyTree

__all__ = ["jvp", "linearize", "jacfwd", "vjp", "value_and_grad", "grad", "jacrev", "jacobian",
           "hessian", "linear_transpose", "fwd_and_bwd"]


def _strip(aux: PyTree) -> PyTree:
    """Auxiliary outputs leave a transform without its tracers: a tracer of
    a forward or reverse pass that has ended stands for its primal."""

    def primal(x):
        while isinstance(x, (JVPTracer, VJPTracer)) and not x._trace.main.active:
            x = x.primal
        return x

    return tree.map(primal, aux)


def _per_argnums(dargs: tuple, argnums: int | Sequence[int]) -> Any:
    return dargs[0] if isinstance(argnums, int) else dargs


def _differentiated(args: tuple, argnums: int | Sequence[int], fname: str, holomorphic: bool,
                    complex_ok: bool = True) -> tuple[tuple[int, ...], list, Any]:
    """The positions ``argnums`` names in a call of ``args``, and the leaves
    and tree of those arguments, checked to be differentiable."""
    nums = api_util.normalize_argnums(argnums, len(args), fname)
    leaves, treedef = api_util.flatten_arrays(tuple(args[n] for n in nums), "args")
    api_util.check_differentiable(leaves, treedef, "args", fname, holomorphic=holomorphic,
                                  complex_ok=complex_ok)
    return nums, leaves, treedef


# ----------------------------------------------------------------------------
# Forward mode
# ----------------------------------------------------------------------------


def jvp(
    f: Callable, primals: Sequence[PyTree], tangents: Sequence[PyTree], has_aux: bool = False
) -> tuple[PyTree, PyTree] | tuple[PyTree, PyTree, PyTree]:
    """Evaluate ``f(*primals)`` and its directional derivative along ``tangents``.

    ``primals`` and ``tangents`` are sequences of the same pytrees; each
    tangent leaf has its primal's shape and dtype.

    >>> import ftorch as ft, mlx.core as mx
    >>> y, dy = ft.jvp(lambda x: x * x, (mx.array(3.0),), (mx.array(1.0),))
    >>> y.item(), dy.item()
    (9.0, 6.0)
    """
    api_util.check_callable(f, "jvp")
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("jvp: primals and tangents must be tuples (or lists) of arguments")
    if len(primals) != len(tangents):
        raise ValueError(f"jvp: got {len(primals)} primals but {len(tangents)} tangents")
    p_leaves, p_tree = api_util.flatten_arrays(tuple(primals), "primals")
    t_leaves, t_tree = api_util.flatten_arrays(tuple(tangents), "tangents")
    if p_tree != t_tree:
        raise ValueError(
            f"jvp: tangents must have the structure of primals; got {t_tree} for primals {p_tree}"
        )
    names = api_util.leaf_names(p_tree, "tangents")
    for name, p, t in zip(names, p_leaves, t_leaves):
        api_util.check_like(t, p, "jvp", name)
    t_leaves = [t if is_inexact(aval_of(p).dtype) else None for p, t in zip(p_leaves, t_leaves)]
    flat_f, out_info = api_util.flatten_fun(f, p_tree, api_util.output_flattener("jvp", has_aux))
    out_primals, out_tangents = jvp_flat(flat_f, p_leaves, t_leaves)
    o_tree, aux = out_info.value
    out_tangents = [
        lax.zeros_like(p) if t is None else t for p, t in zip(out_primals, out_tangents)
    ]
    result = tree.unflatten(o_tree, out_primals), tree.unflatten(o_tree, out_tangents)
    return (*result, _strip(aux)) if has_aux else result


def linearize(f: Callable, *primals: PyTree) -> tuple[PyTree, Callable]:
    """``f(*primals)`` and the linear map ``tangents -> J @ tangents``.

    The map re-runs ``f`` forward with ``jvp`` on each call.

    >>> import ftorch as ft, mlx.core as mx
    >>> y, f_jvp = ft.linearize(ft.numpy.sin, mx.array(0.0))
    >>> f_jvp(mx.array(2.0)).item()
    2.0
    """
    api_util.check_callable(f, "linearize")
    # The output alone: a forward pass with no tangent work.
    p_leaves, p_tree = api_util.flatten_arrays(tuple(primals), "primals")
    flat_f, out_info = api_util.flatten_fun(f, p_tree, api_util.output_flattener("linearize"))
    out_leaves, _ = jvp_flat(flat_f, p_leaves, [None] * len(p_leaves))
    out = tree.unflatten(out_info.value[0], out_leaves)

    def f_jvp(*tangents):
        if len(tangents) != len(primals):
            raise TypeError(
                f"linearize: the map takes {len(primals)} tangents, got {len(tangents)}")
        return jvp(f, primals, tangents)[1]

    return out, f_jvp


def jacfwd(f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
           holomorphic: bool = False) -> Callable:
    """The Jacobian of ``f`` by forward mode: a JVP vmapped over the input basis.

    Each leaf of the result has shape ``out_leaf.shape + in_leaf.shape``,
    nested as the output tree of input trees (a tuple over ``argnums`` when
    it is a sequence). Inputs must be real, or complex with
    ``holomorphic=True`` (then the outputs must be complex too), as in JAX.

    >>> import ftorch as ft, mlx.core as mx
    >>> ft.jacfwd(lambda x: x ** 2)(mx.array([1.0, 2.0])).tolist()
    [[2.0, 0.0], [0.0, 4.0]]
    """
    api_util.check_callable(f, "jacfwd")

    def jacobian(*args, **kwargs):
        nums, d_leaves, d_tree = _differentiated(args, argnums, "jacfwd", holomorphic,
                                                 complex_ok=False)
        flat_f, out_info = api_util.flatten_fun(api_util.with_static(f, args, nums, kwargs), d_tree,
                                                api_util.output_flattener("jacfwd", has_aux))

        # One vmapped JVP per input leaf, over the identity basis of that leaf.
        out_primals: list = []
        columns = []  # columns[i][k]: d out_k / d in_i, shape (*out_k.shape, in_i.size)
        for i, leaf in enumerate(d_leaves):
            def push(t, i=i):
                tangents = [None] * len(d_leaves)
                tangents[i] = t
                outs, ts = jvp_flat(flat_f, d_leaves, tangents)
                out_primals[:] = outs
                return [lax.zeros_like(p) if t is None else t for p, t in zip(outs, ts)]

            n = leaf.size
            basis = lax.reshape(mx.eye(n, dtype=leaf.dtype), (n, *leaf.shape))
            if n:
                columns.append(vmap(push, out_axes=-1)(basis))
            else:
                push(lax.zeros(leaf.shape, leaf.dtype))
                columns.append([lax.zeros((*o.shape, 0), o.dtype) for o in out_primals])
        if not d_leaves:
            out_primals = flat_f(d_leaves)
        if holomorphic:
            for o in out_primals:
                api_util.check_output_dtype(aval_of(o).dtype, "jacfwd", True)
        o_tree, aux = out_info.value
        jac = []
        for k, o in enumerate(out_primals):
            row = [lax.reshape(columns[i][k], (*o.shape, *leaf.shape))
                   for i, leaf in enumerate(d_leaves)]
            jac.append(_per_argnums(tree.unflatten(d_tree, row), argnums))
        result = tree.unflatten(o_tree, jac)
        return (result, _strip(aux)) if has_aux else result

    return jacobian


# ----------------------------------------------------------------------------
# Reverse mode
# ----------------------------------------------------------------------------


def vjp(f: Callable, *primals: PyTree, has_aux: bool = False
        ) -> tuple[PyTree, Callable] | tuple[PyTree, Callable, PyTree]:
    """Evaluate ``f(*primals)`` and return it with its pullback.

    ``pullback(cotangent)`` takes a cotangent shaped like the output and
    returns a tuple with one cotangent per primal; it can be called many times.

    >>> import ftorch as ft, mlx.core as mx
    >>> y, pullback = ft.vjp(lambda x: x * x, mx.array(3.0))
    >>> pullback(mx.array(1.0))[0].item()
    6.0
    """
    api_util.check_callable(f, "vjp")
    p_leaves, p_tree = api_util.flatten_arrays(primals, "primals")
    flat_f, out_info = api_util.flatten_fun(f, p_tree, api_util.output_flattener("vjp", has_aux))
    out_leaves, flat_pullback = vjp_flat(flat_f, p_leaves)
    o_tree, aux = out_info.value

    def pullback(cotangent: PyTree) -> tuple:
        c_leaves, c_tree = api_util.flatten_arrays(cotangent, "cotangent")
        if c_tree != o_tree:
            raise ValueError(
                f"pullback: the cotangent must have the output's structure {o_tree}, got {c_tree}")
        for name, c, o in zip(api_util.leaf_names(o_tree, "cotangent"), c_leaves, out_leaves):
            api_util.check_like(c, o, "pullback", name)
        c_leaves = [c if is_inexact(aval_of(o).dtype) else None
                    for c, o in zip(c_leaves, out_leaves)]
        cts = flat_pullback(c_leaves)
        cts = [lax.zeros_like(p) if c is None else c for p, c in zip(p_leaves, cts)]
        return tree.unflatten(p_tree, cts)

    out = tree.unflatten(o_tree, out_leaves)
    return (out, pullback, _strip(aux)) if has_aux else (out, pullback)


def value_and_grad(
    f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
    holomorphic: bool = False,
) -> Callable:
    """A function returning ``f``'s value and its gradient w.r.t. ``argnums``.

    ``f`` must return a real scalar (with ``has_aux``: a pair ``(scalar, aux)``,
    and the value is that pair), or a complex one with ``holomorphic=True``.
    Keyword arguments are passed through and not differentiated. Complex
    inputs follow JAX's convention (see ``grad``).

    >>> import ftorch as ft, mlx.core as mx
    >>> value, g = ft.value_and_grad(lambda w: (w ** 2).sum())(mx.array([1.0, 2.0]))
    >>> value.item(), g.tolist()
    (5.0, [2.0, 4.0])
    """
    api_util.check_callable(f, "value_and_grad")

    def value_and_grad_f(*args, **kwargs):
        nums = api_util.normalize_argnums(argnums, len(args), "grad")
        dargs = tuple(args[n] for n in nums)
        p_leaves, p_tree = api_util.flatten_arrays(dargs, "args")
        for i, leaf in enumerate(p_leaves):
            dtype = aval_of(leaf).dtype
            if not is_inexact(dtype) or (holomorphic and not is_complex(dtype)):
                path = tree.key_paths(p_tree)[i]
                name = f"argument {nums[path[0].idx]}" + tree.keystr(path[1:])
                if holomorphic:
                    raise TypeError(f"grad with holomorphic=True requires complex inputs, "
                                    f"but {name} has dtype {dtype}")
                raise TypeError(
                    f"grad requires floating-point inputs, but {name} has dtype "
                    f"{dtype}; cast it with .astype(mx.float32) or leave it out of argnums")

        def flatten_out(out):
            out, aux = api_util.split_aux(out, has_aux, "grad")
            out = api_util.as_output(out, "grad: the function's output")
            shape, dtype = aval_of(out).shape, aval_of(out).dtype
            if shape != ():
                raise TypeError(
                    f"grad requires a scalar output (shape ()), got shape {shape}; "
                    "reduce it (e.g. .sum()) or use ft.vjp / ft.jacrev")
            api_util.check_output_dtype(dtype, "grad", holomorphic)
            return [out], aux

        flat_f, out_info = api_util.flatten_fun(api_util.with_static(f, args, nums, kwargs),
                                                p_tree, flatten_out)
        (value,), pullback = vjp_flat(flat_f, p_leaves)
        aux = _strip(out_info.value)
        cts = pullback([lax.ones_like(value)])
        grads = [lax.zeros_like(p) if c is None else c for p, c in zip(p_leaves, cts)]
        g = _per_argnums(tree.unflatten(p_tree, grads), argnums)
        return ((value, aux) if has_aux else value), g

    return value_and_grad_f


def grad(f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
         holomorphic: bool = False) -> Callable:
    """The gradient of a scalar function ``f`` w.r.t. ``argnums``.

    >>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
    >>> ft.grad(fnp.sin)(mx.array(0.0)).item()
    1.0
    >>> ft.grad(ft.grad(fnp.cos))(mx.array(0.0)).item()
    -1.0

    Complex numbers (JAX's convention). A complex64 value ``z = x + iy`` is
    differentiated as the pair of reals ``(x, y)``:

    - ``ft.jvp`` applies the real-linear derivative to a complex tangent
      ``t``: for ``|z|**2`` it gives ``2 * real(conj(z) * t)``; for a
      holomorphic ``f`` it gives ``f'(z) * t``.
    - ``ft.vjp`` gives the transpose of that map for the pairing
      ``<c, t> = real(sum(c * t))`` (no conjugation): ``ct -> ct * f'(z)`` for
      a holomorphic ``f``, ``conj`` for ``conj``, ``ct -> -1j * ct`` for
      ``imag``, and ``ct -> real(ct * a)`` for the real input of ``x * a``.
    - ``grad`` of a real-valued function of complex inputs is ``vjp`` with
      cotangent 1: ``dL/dx - 1j * dL/dy``, the conjugate of the steepest
      ascent direction. ``grad(lambda z: fnp.abs(z) ** 2)(z)`` is
      ``2 * conj(z)``; a gradient-descent step is ``z - lr * conj(g)``.
    - A complex output needs ``holomorphic=True`` (and complex inputs): the
      result is then ``f'(z)``. Otherwise ``grad`` refuses it, as JAX does;
      take a real part (``fnp.real``, ``fnp.abs``) or use ``ft.vjp``.

    MLX has no complex128: complex values are complex64 throughout.

    >>> z = mx.array(1 + 2j)
    >>> ft.grad(lambda z: fnp.abs(z) ** 2)(z).item()
    (2-4j)
    >>> ft.grad(lambda z: z * z, holomorphic=True)(z).item()
    (2+4j)
    """
    api_util.check_callable(f, "grad")
    vg = value_and_grad(f, argnums, has_aux, holomorphic)

    def grad_f(*args, **kwargs):
        (value, g) = vg(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return grad_f


def jacrev(f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
           holomorphic: bool = False) -> Callable:
    """The Jacobian of ``f`` by reverse mode: the pullback vmapped over the output basis.

    Same layout as ``jacfwd``: ``out_leaf.shape + in_leaf.shape`` per pair.
    Complex outputs need ``holomorphic=True`` (with complex inputs); real
    outputs of complex inputs give the rows ``grad`` would (see ``grad``).

    >>> import ftorch as ft, mlx.core as mx
    >>> ft.jacrev(lambda x: x ** 2)(mx.array([1.0, 2.0])).tolist()
    [[2.0, 0.0], [0.0, 4.0]]
    """
    api_util.check_callable(f, "jacrev")

    def jacobian(*args, **kwargs):
        nums, d_leaves, d_tree = _differentiated(args, argnums, "jacrev", holomorphic)

        flat_f, out_info = api_util.flatten_fun(api_util.with_static(f, args, nums, kwargs), d_tree,
                                                api_util.output_flattener("jacrev", has_aux))
        out_leaves, pullback = vjp_flat(flat_f, d_leaves)
        o_tree, aux = out_info.value
        for o in out_leaves:
            if holomorphic or is_complex(o.dtype):
                api_util.check_output_dtype(o.dtype, "jacrev", holomorphic)
        jac = []
        for k, o in enumerate(out_leaves):
            def pull(c, k=k):
                cts = [None] * len(out_leaves)
                cts[k] = c
                return [lax.zeros_like(leaf) if g is None else g
                        for leaf, g in zip(d_leaves, pullback(cts))]

            n = o.size
            if n:
                basis = lax.reshape(mx.eye(n, dtype=o.dtype), (n, *o.shape))
                rows = vmap(pull)(basis)  # one vmapped pullback over the output basis
            else:
                rows = [lax.zeros((0, *leaf.shape), leaf.dtype) for leaf in d_leaves]
            per_in = [lax.reshape(r, (*o.shape, *leaf.shape)) for r, leaf in zip(rows, d_leaves)]
            jac.append(_per_argnums(tree.unflatten(d_tree, per_in), argnums))
        result = tree.unflatten(o_tree, jac)
        return (result, _strip(aux)) if has_aux else result

    return jacobian


#: ``jax.jacobian``: the Jacobian by reverse mode, ``jacrev``.
jacobian = jacrev


def linear_transpose(fun: Callable, *primals: PyTree, reduce_axes: tuple = ()) -> Callable:
    """The transpose of the linear function ``fun``, as
    ``jax.linear_transpose``: ``primals`` (arrays or ``ShapeDtypeStruct``s,
    only their shapes and dtypes matter) describe its arguments; the result
    maps a cotangent shaped like ``fun``'s output to a tuple of one
    cotangent per argument. ``fun`` is assumed linear (its pullback at zero
    is then its transpose).

    >>> import ftorch as ft, mlx.core as mx
    >>> t = ft.linear_transpose(lambda x, y: 2.0 * x + y, mx.array(1.0), mx.array(2.0))
    >>> [c.item() for c in t(mx.array(1.0))]
    [2.0, 1.0]
    """
    api_util.check_callable(fun, "linear_transpose")
    if reduce_axes:
        raise NotImplementedError("linear_transpose: reduce_axes is not supported")

    def zero(p):
        shape, dtype = (p.shape, p.dtype) if isinstance(p, ShapeDtypeStruct) else aval_of(p)
        if not is_inexact(dtype):
            raise TypeError(f"linear_transpose: the arguments must be floating, got {dtype}")
        return lax.zeros(tuple(shape), dtype)

    zeros = tree.map(zero, primals, is_leaf=lambda x: isinstance(x, ShapeDtypeStruct))
    _, pullback = vjp(lambda *args: fun(*args), *zeros)

    def transposed(*cotangent: PyTree) -> tuple:
        return pullback(cotangent[0] if len(cotangent) == 1 else cotangent)

    return transposed


def fwd_and_bwd(fun: Callable, argnums: int | Sequence[int], has_aux: bool = False,
                jitted: bool = True) -> tuple[Callable, Callable]:
    """``fwd`` and ``bwd``, the forward and backward passes of ``fun`` as two
    functions, as ``jax.fwd_and_bwd``: ``fwd(*args)`` returns ``(out,
    residuals)`` (``(out, residuals, aux)`` with ``has_aux``), and
    ``bwd(residuals, cotangent)`` the cotangents of the ``argnums``
    arguments (one, or a tuple for a sequence ``argnums``). Both are jitted
    unless ``jitted=False``, so each traces once. The residuals are the
    arguments: ``bwd`` runs the forward pass again, inside its own graph.

    >>> import ftorch as ft, mlx.core as mx
    >>> fwd, bwd = ft.fwd_and_bwd(lambda x, w: (x * w).sum(), argnums=1)
    >>> y, res = fwd(mx.ones(2), mx.array(3.0))
    >>> y.item(), bwd(res, mx.array(1.0)).item()
    (6.0, 2.0)
    """
    from ftorch.transforms.jit import jit

    api_util.check_callable(fun, "fwd_and_bwd")

    def forward(*args):
        out = fun(*args)
        if has_aux:
            out, aux = api_util.split_aux(out, True, "fwd_and_bwd")
            return out, args, aux
        return out, args

    def backward(residuals, cotangent):
        nums = api_util.normalize_argnums(argnums, len(residuals), "fwd_and_bwd")

        def restricted(*diff):
            out = fun(*api_util.substitute(residuals, nums, diff))
            return api_util.split_aux(out, True, "fwd_and_bwd")[0] if has_aux else out

        _, pullback = vjp(restricted, *(residuals[n] for n in nums))
        cts = pullback(cotangent)
        return cts[0] if isinstance(argnums, int) else cts

    return (jit(forward), jit(backward)) if jitted else (forward, backward)


def hessian(f: Callable, argnums: int | Sequence[int] = 0,
            holomorphic: bool = False) -> Callable:
    """The Hessian of a scalar ``f``: ``jacfwd(jacrev(f))``.

    >>> import ftorch as ft, mlx.core as mx
    >>> ft.hessian(lambda x: (x ** 3).sum())(mx.array([1.0, 2.0])).tolist()
    [[6.0, 0.0], [0.0, 12.0]]
    """
    api_util.check_callable(f, "hessian")
    return jacfwd(jacrev(f, argnums, holomorphic=holomorphic), argnums, holomorphic=holomorphic)
