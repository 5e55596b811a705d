"""User-defined derivative rules: ``custom_jvp`` and ``custom_vjp``, as in
JAX.

Calling a decorated function binds one primitive whose params carry the
user's function and rules, made flat (lists of leaves in and out), so every
transform sees a single operation:

- ``custom_jvp_call``: forward mode applies the user's JVP rule; reverse
  mode transposes it (the rule's tangent output is linear in the tangents:
  its pullback with respect to them gives the cotangents); vmap batches the
  function and the rule alike.
- ``custom_vjp_call``: reverse mode runs the user's ``fwd`` (keeping its
  residuals, a pytree) and then ``bwd``; forward mode is an error, as in
  JAX; vmap batches ``fun``, ``fwd`` and ``bwd``.

Under ``jit`` the call is staged as that primitive, so ``grad(jit(f))`` and
``jit(grad(f))`` use the rules too.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import mlx.core as mx
import numpy as np

import ftorch.primitives as lax
from ftorch import api_util, tree
from ftorch.core import (
    Primitive,
    Tracer,
    as_array,
    aval_of,
    format_aval,
    global_random_key,
    is_complex,
    is_inexact,
)
from ftorch.graph import evaluate
from ftorch.primitives._rules import move_bdim
from ftorch.transforms.autocast import as_written
from ftorch.transforms.staging import ConcretizationError, stage, stage_function
from ftorch.transforms.vjp import vjp_flat
from ftorch.transforms.vmap import batch_flat

__all__ = ["custom_jvp", "custom_vjp", "custom_gradient", "closure_convert"]


class _Signature:
    """How a call's arguments and results are laid out: the static
    (``nondiff_argnums``) arguments, the tree and avals of the others, and
    the tree and avals of the function's result, recorded when it runs."""

    def __init__(self, args: tuple, nondiff: tuple[int, ...], fname: str):
        self.args = args
        self.static = {i: args[i] for i in nondiff if i < len(args)}
        self.positions = [i for i in range(len(args)) if i not in self.static]
        dynamic = tuple(args[i] for i in self.positions)
        self.leaves, self.in_tree = api_util.flatten_arrays(dynamic, f"{fname} argument")
        self._in_avals: tuple | None = None
        self.out_tree: Any = None
        self.out_avals: list | None = None

    @property
    def in_avals(self) -> tuple:
        if self._in_avals is None:  # only the checks of rules' outputs need them
            self._in_avals = tuple(aval_of(x) for x in self.leaves)
        return self._in_avals

    def dynamic(self, leaves: Sequence) -> tuple:
        return tuple(tree.unflatten(self.in_tree, list(leaves)))

    def flatten(self, f: Callable, flatten_out: Callable) -> tuple[Callable, api_util.OutputInfo]:
        """``f`` (the function or a rule taking its arguments) run on the
        dynamic arguments' leaves, the static ones bound."""
        return api_util.flatten_fun(api_util.with_static(f, self.args, self.positions),
                                    self.in_tree, flatten_out)

    def statics(self) -> list:
        return [self.static[i] for i in sorted(self.static)]

    def recording(self, what: str) -> Callable[[Any], tuple[list, Any]]:
        """The ``flatten_out`` of the function itself: its result's leaves,
        recording its tree and avals here."""
        def flatten_out(out: Any) -> tuple[list, Any]:
            leaves, self.out_tree = api_util.flatten_arrays(out, what)
            self.out_avals = [aval_of(x) for x in leaves]
            return leaves, self.out_tree

        return flatten_out


def _name(f: Any) -> str:
    return getattr(f, "__qualname__", None) or getattr(f, "__name__", None) or repr(f)


def _describe(x: Any) -> str:
    """What a rule returned, for an error message."""
    if x is None:
        return "None"
    if isinstance(x, (tuple, list)):
        return f"a {type(x).__name__} of {len(x)}"
    try:
        return f"an array {format_aval(aval_of(x))}"
    except (TypeError, ValueError):
        return f"{type(x).__name__} {x!r}"


_ARRAY_TYPES = (mx.array, np.ndarray, Tracer)
_UNKNOWN = object()


class _CustomFunction:
    """What ``custom_jvp`` and ``custom_vjp`` share: the function, its
    static arguments, and the check that a rule's primal output is the
    function's (structure, shapes and dtypes)."""

    kind = ""
    _MAX_TYPES = 64  # signatures remembered (static arguments may be new objects each call)

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()):
        api_util.check_callable(fun, self.kind)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        # (argument tree, avals, static arguments) -> the function's output tree and avals.
        self._out_types: dict = {}

    def _out_type(self, sig: _Signature, fresh: bool = False) -> tuple | None:
        """The function's output tree and avals for ``sig``'s arguments: from
        this call if the function ran in it, else from a trace of it on the
        arguments' shapes, made once per signature. ``None`` where there is
        nothing to compare with: the trace needs values, or draws from MLX's
        global random state, or the static arguments are arrays or unhashable."""
        if sig.out_avals is not None:
            return sig.out_tree, sig.out_avals
        statics = tuple(sig.statics())
        if statics and any(isinstance(x, _ARRAY_TYPES) for x in tree.leaves(statics)):
            return None  # arrays are no key: they would be kept alive, one per call
        key = (sig.in_tree, sig.in_avals, statics)
        try:
            known = self._out_types.get(key, _UNKNOWN) if not fresh else _UNKNOWN
        except TypeError:
            return None
        if known is not _UNKNOWN:
            return known
        run, out_info = sig.flatten(self.fun, api_util.output_flattener(self.kind))
        random_key = global_random_key()
        try:
            graph, _ = stage(run, sig.in_avals, f"{self.kind} function {_name(self.fun)!r}")
            known: tuple | None = (out_info.value[0], list(graph.out_avals))
        except ConcretizationError:
            known = None
        except RuntimeError:
            if global_random_key() is random_key:
                raise
            known = None
        if len(self._out_types) >= self._MAX_TYPES:
            self._out_types.clear()
        self._out_types[key] = known
        return known

    def _check_primal_out(self, sig: _Signature, out: Any, rule: str,
                          what: str) -> tuple[list, list]:
        """The leaves of ``out``, a rule's primal output, and their avals,
        which must be the function's: the same structure, shapes and dtypes."""
        leaves, out_tree = api_util.flatten_arrays(out, f"{self.kind}: {what} of {rule}")
        got = (out_tree, [aval_of(x) for x in leaves])
        expected = self._out_type(sig)
        if expected is not None and expected != got and sig.out_avals is None:
            expected = self._out_type(sig, fresh=True)  # the function may have changed since
        if expected is not None and expected != got:
            self._mismatch(got, expected, rule, what)
        sig.out_tree = out_tree
        return leaves, got[1]

    def _mismatch(self, got: tuple, expected: tuple, rule: str, what: str) -> None:
        (out_tree, avals), (fun_tree, fun_avals) = got, expected
        fname = _name(self.fun)
        if out_tree != fun_tree:
            raise TypeError(f"{self.kind}: {rule} returned {what} of structure {out_tree}, "
                            f"but {fname!r} returns {fun_tree}; it must be the function's output")
        for name, have, want in zip(api_util.leaf_names(out_tree, what), avals, fun_avals):
            if have != want:
                raise (ValueError if have.shape != want.shape else TypeError)(
                    f"{self.kind}: {rule} returned {format_aval(have)} as {name}, but "
                    f"{fname!r} returns {format_aval(want)} there; it must be the function's "
                    "output")


def _at_zero(vals: Sequence, dims: Sequence, axis_size: int) -> list:
    return [move_bdim(v, d, 0, axis_size) for v, d in zip(vals, dims)]


def _batched(f: Callable, axis_size: int) -> Callable:
    """A flat function of leaves all batched at axis 0, with its outputs
    batched at axis 0 too (what a batched rule must return)."""
    def run(*groups):
        leaves = [x for g in groups for x in g]
        sizes = [len(g) for g in groups]

        def inner(xs):
            parts, start = [], 0
            for n in sizes:
                parts.append(xs[start:start + n])
                start += n
            out = f(*parts)
            return [x for o in (out if isinstance(out, tuple) else (out,)) for x in o]

        outs, dims = batch_flat(inner, leaves, [0] * len(leaves), axis_size)
        return [move_bdim(o, d, 0, axis_size) for o, d in zip(outs, dims)]
    return run


# ----------------------------------------------------------------------------
# custom_jvp
# ----------------------------------------------------------------------------


custom_jvp_call_p = Primitive(
    "custom_jvp_call", lambda *leaves, fun, jvp: fun(leaves), multiple_results=True)


@custom_jvp_call_p.def_jvp
def _custom_jvp_jvp(primals, tangents, fun, jvp):
    tangents = [lax.zeros_like(p) if t is None else t for p, t in zip(primals, tangents)]
    outs, t_outs = jvp(list(primals), tangents)
    # Integer and boolean outputs have zero tangents, whatever the rule said.
    return outs, [t if is_inexact(aval_of(o).dtype) else None for o, t in zip(outs, t_outs)]


@custom_jvp_call_p.def_vjp
def _custom_jvp_vjp(cts, out, *primals, fun, jvp, needed):
    # The rule's tangent output is linear in the tangents: its pullback with
    # respect to them is the transpose, the primals' cotangents.
    zeros = [lax.zeros_like(p) for p in primals]
    _, pullback = vjp_flat(lambda ts: jvp(list(primals), ts)[1], zeros)
    in_cts = pullback([lax.zeros_like(o) if c is None else c for c, o in zip(cts, out)])
    return tuple(c if n else None for c, n in zip(in_cts, needed))


@custom_jvp_call_p.def_batch
def _custom_jvp_batch(vals, dims, axis_size, fun, jvp):
    vals = _at_zero(vals, dims, axis_size)
    fun_b = _batched(lambda xs: fun(xs), axis_size)
    jvp_b2 = _batched(lambda ps, ts: tuple(jvp(ps, ts)), axis_size)

    def jvp_b(ps, ts):
        outs = jvp_b2(ps, ts)
        half = len(outs) // 2
        return outs[:half], outs[half:]

    outs = custom_jvp_call_p.bind(*vals, fun=fun_b, jvp=jvp_b)
    return outs, [0] * len(outs)


class custom_jvp(_CustomFunction):
    """A function with a user-defined JVP rule, as ``jax.custom_jvp``: the
    rule is ``rule(*nondiff_args, primals, tangents) -> (out, tangent_out)``
    (``primals`` and ``tangents`` tuples of the other arguments). Reverse
    mode transposes it. As in JAX, ``out`` must have the function's output
    structure, shapes and dtypes, and ``tangent_out`` the same, but only the
    shapes of integer and boolean outputs (whose tangents are zero).

    >>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
    >>> @ft.custom_jvp
    ... def f(x):
    ...     return fnp.sin(x)
    >>> @f.defjvp
    ... def f_jvp(primals, tangents):
    ...     (x,), (t,) = primals, tangents
    ...     return f(x), 10.0 * t
    >>> ft.grad(f)(mx.array(0.0)).item(), ft.jvp(f, (mx.array(0.0),), (mx.array(1.0),))[1].item()
    (10.0, 10.0)
    """

    kind = "custom_jvp"

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()):
        super().__init__(fun, nondiff_argnums)
        self.rule: Callable | None = None

    def defjvp(self, rule: Callable) -> Callable:
        """Set the JVP rule; returns it (usable as a decorator)."""
        api_util.check_callable(rule, "custom_jvp.defjvp")
        self.rule = rule
        return rule

    def __call__(self, *args: Any) -> Any:
        if self.rule is None:
            raise AttributeError("custom_jvp: no JVP rule; define one with @f.defjvp")
        sig = _Signature(args, self.nondiff_argnums, "custom_jvp")
        fun, rule = self.fun, self.rule
        where = f"the JVP rule {_name(rule)!r} of {_name(fun)!r}"

        flat_fun, _ = sig.flatten(fun, sig.recording("custom_jvp output"))

        def flat_jvp(primals, tangents):
            got = rule(*sig.statics(), sig.dynamic(primals), sig.dynamic(tangents))
            if not (isinstance(got, (tuple, list)) and len(got) == 2):
                raise TypeError(f"custom_jvp: {where} must return a pair (primal_out, "
                                f"tangent_out), got {_describe(got)}")
            outs, avals = self._check_primal_out(sig, got[0], where, "primal_out")
            return outs, _check_tangents(got[1], avals, sig.out_tree, where)

        # (The function and its rule run as written under ft.amp.autocast: the
        # rule's output must have the function's dtypes.)
        outs = custom_jvp_call_p.bind(*sig.leaves, fun=as_written(flat_fun),
                                      jvp=as_written(flat_jvp))
        return tree.unflatten(sig.out_tree, outs)


def _check_tangents(t_out: Any, out_avals: list, out_tree: Any, where: str) -> list:
    """The leaves of a JVP rule's ``tangent_out``: the structure of its
    primal output, and each leaf its primal's shape and (for floating and
    complex primals) dtype, as JAX's tangent types. Integer and boolean
    outputs have zero tangents: any dtype of their shape is accepted, and
    ignored."""
    leaves, t_tree = api_util.flatten_arrays(t_out, f"custom_jvp: tangent_out of {where}")
    if t_tree != out_tree:
        raise TypeError(f"custom_jvp: {where} returned a tangent_out of structure {t_tree} for "
                        f"a primal_out of structure {out_tree}; they must be the same")
    for k, (t, oa) in enumerate(zip(leaves, out_avals)):
        ta = aval_of(t)
        if ta.shape != oa.shape or (is_inexact(oa.dtype) and ta.dtype != oa.dtype):
            name = api_util.leaf_names(out_tree, "tangent_out")[k]
            error = ValueError if ta.shape != oa.shape else TypeError
            raise error(
                f"custom_jvp: {where} returned {format_aval(ta)} as {name}, for a primal "
                f"output of {format_aval(oa)}; a tangent must have its primal's shape and "
                "dtype (only its shape for integer and boolean outputs)")
    return leaves


# ----------------------------------------------------------------------------
# custom_vjp
# ----------------------------------------------------------------------------


custom_vjp_call_p = Primitive(
    "custom_vjp_call", lambda *leaves, fun, fwd, bwd: fun(leaves), multiple_results=True)


@custom_vjp_call_p.def_jvp
def _custom_vjp_jvp(primals, tangents, fun, fwd, bwd):
    raise TypeError(
        "custom_vjp: forward-mode differentiation (jvp, jacfwd) of a custom_vjp function "
        "is not supported, as in JAX; give it a custom_jvp rule instead")


@custom_vjp_call_p.def_vjp_fwd
def _custom_vjp_fwd(primals, fun, fwd, bwd):
    out, res = fwd(list(primals))
    return out, res, {"bwd": bwd, "n_out": len(out)}


@custom_vjp_call_p.def_vjp
def _custom_vjp_vjp(cts, out, *res, bwd, n_out, needed):
    cts = [lax.zeros_like(o) if c is None else c for c, o in zip(cts, out)]
    in_cts = bwd(list(res), cts)
    return tuple(c if n else None for c, n in zip(in_cts, needed))


@custom_vjp_call_p.def_batch
def _custom_vjp_batch(vals, dims, axis_size, fun, fwd, bwd):
    vals = _at_zero(vals, dims, axis_size)
    fun_b = _batched(lambda xs: fun(xs), axis_size)
    counts: list = []

    def fwd_flat(xs):
        out, res = fwd(xs)
        counts[:] = [len(out)]
        return out, res

    fwd_b2 = _batched(fwd_flat, axis_size)

    def fwd_b(xs):
        outs = fwd_b2(xs)
        return outs[:counts[0]], outs[counts[0]:]

    def bwd_b(res, cts):
        def flat(r, c):  # per example: None becomes a zero of the example's shape
            return [lax.zeros(x.shape[1:], x.dtype) if g is None else g
                    for g, x in zip(bwd(r, c), vals)]

        return _batched(flat, axis_size)(res, cts)

    outs = custom_vjp_call_p.bind(*vals, fun=fun_b, fwd=fwd_b, bwd=bwd_b)
    return outs, [0] * len(outs)


class custom_vjp(_CustomFunction):
    """A function with a user-defined VJP, as ``jax.custom_vjp``:
    ``fwd(*args) -> (out, residuals)`` and
    ``bwd(*nondiff_args, residuals, ct_out) -> tuple`` of one cotangent (a
    pytree like the argument, or ``None``) per differentiable argument.
    As in JAX, ``out`` must have the function's output structure, shapes
    and dtypes, and each cotangent its argument's structure (``None`` for
    any zero subtree) and shapes; a floating cotangent of another precision
    is cast to the argument's dtype, and those of integer and boolean
    arguments are ignored.

    >>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
    >>> @ft.custom_vjp
    ... def clip_gradient(x):
    ...     return x
    >>> clip_gradient.defvjp(lambda x: (x, None), lambda res, ct: (fnp.clip(ct, -1.0, 1.0),))
    >>> ft.grad(lambda x: 5.0 * clip_gradient(x))(mx.array(2.0)).item()
    1.0
    """

    kind = "custom_vjp"

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()):
        super().__init__(fun, nondiff_argnums)
        self.fwd: Callable | None = None
        self.bwd: Callable | None = None

    def defvjp(self, fwd: Callable, bwd: Callable) -> None:
        """Set the forward and backward functions."""
        api_util.check_callable(fwd, "custom_vjp.defvjp")
        api_util.check_callable(bwd, "custom_vjp.defvjp")
        self.fwd, self.bwd = fwd, bwd

    def __call__(self, *args: Any) -> Any:
        if self.fwd is None:
            raise AttributeError("custom_vjp: no rule; define one with f.defvjp(fwd, bwd)")
        sig = _Signature(args, self.nondiff_argnums, "custom_vjp")
        fun, fwd, bwd = self.fun, self.fwd, self.bwd
        fwd_where = f"the fwd rule {_name(fwd)!r} of {_name(fun)!r}"
        bwd_where = f"the bwd rule {_name(bwd)!r} of {_name(fun)!r}"
        flat_fun, _ = sig.flatten(fun, sig.recording("custom_vjp output"))

        def fwd_out(got: Any) -> tuple[tuple[list, list], Any]:
            """fwd's ``(out, residuals)`` as (out leaves, residual leaves),
            recording the residuals' tree."""
            if not (isinstance(got, (tuple, list)) and len(got) == 2):
                raise TypeError(f"custom_vjp: {fwd_where} must return a pair (out, residuals), "
                                f"got {_describe(got)}")
            out, res = got
            res_leaves, res_tree = tree.flatten(res)
            return (self._check_primal_out(sig, out, fwd_where, "out")[0], res_leaves), res_tree

        flat_fwd, res_info = sig.flatten(fwd, fwd_out)

        def flat_bwd(res_leaves, cts):
            got = bwd(*sig.statics(), tree.unflatten(res_info.value, list(res_leaves)),
                      tree.unflatten(sig.out_tree, list(cts)))
            return _check_cotangents(got, sig, bwd_where)

        outs = custom_vjp_call_p.bind(*sig.leaves, fun=as_written(flat_fun),
                                      fwd=as_written(flat_fwd), bwd=as_written(flat_bwd))
        return tree.unflatten(sig.out_tree, outs)


def _placed(got: Any, sig: _Signature, where: str) -> list:
    """The cotangents in ``got`` at their arguments' leaves, ``None`` at
    those of the zero subtrees (``None`` in ``got``)."""
    leaves: list = [None] * len(sig.leaves)

    def place(ct, positions):
        if ct is not None:
            if not isinstance(positions, int):  # a leaf where the argument has a subtree
                raise ValueError
            leaves[positions] = ct

    args = sig.dynamic(list(range(len(sig.leaves))))  # each argument's leaves' positions
    for i, (ct, positions) in enumerate(zip(got, args)):
        try:
            tree.map(place, ct, positions, is_leaf=lambda x: x is None)
        except ValueError:
            raise TypeError(
                f"custom_vjp: {where} returned a cotangent of structure {tree.structure(ct)} as "
                f"output[{i}], for an argument of structure {tree.structure(positions)}; return "
                "a pytree like the argument (None for a zero leaf or subtree)") from None
    return leaves


def _check_cotangents(got: Any, sig: _Signature, where: str) -> list:
    """The leaves of what a bwd rule returned, one cotangent per argument
    leaf (``None`` for zero), checked as JAX does: a tuple (or list) with
    one entry per differentiable argument, each ``None`` or a pytree like
    the argument with ``None`` for any zero subtree, each leaf of its
    argument's shape. A floating cotangent of another precision is cast to
    the argument's dtype (JAX accepts it too); integer, boolean and complex
    ones for real arguments are errors. Integer and boolean arguments have
    no cotangent: whatever is returned for them is ignored."""
    n_args = sig.in_tree.num_children
    if not (isinstance(got, (tuple, list)) and len(got) == n_args):
        raise TypeError(
            f"custom_vjp: {where} must return a tuple of {n_args} cotangent(s), one per "
            f"differentiable argument (None for a zero one), got {_describe(got)}")
    leaves, ct_tree = tree.flatten(tuple(got))
    if ct_tree != sig.in_tree:  # None for zero subtrees, or a wrong structure
        leaves = _placed(got, sig, where)
    for k, (ct, a) in enumerate(zip(leaves, sig.in_avals)):
        if ct is None:
            continue
        if not is_inexact(a.dtype):  # JAX: float0, ignored
            leaves[k] = None
            continue
        if not isinstance(ct, (mx.array, Tracer)):  # the common case is kept cheap
            name = api_util.leaf_names(sig.in_tree, "output")[k]
            ct = leaves[k] = as_array(ct, f"custom_vjp: {name} of {where}")
        c = aval_of(ct)
        if c == a:
            continue
        name = api_util.leaf_names(sig.in_tree, "output")[k]
        if c.shape != a.shape:
            raise ValueError(
                f"custom_vjp: {where} returned {format_aval(c)} as {name}, for an argument "
                f"of {format_aval(a)}; a cotangent must have its argument's shape (or be None, "
                "for zero)")
        if not is_inexact(c.dtype) or (is_complex(c.dtype) and not is_complex(a.dtype)):
            raise TypeError(
                f"custom_vjp: {where} returned {format_aval(c)} as {name}, for an argument of "
                f"{format_aval(a)}; a cotangent must have its argument's dtype")
        leaves[k] = lax.astype(ct, a.dtype)
    return leaves


# ----------------------------------------------------------------------------
# custom_gradient, closure_convert
# ----------------------------------------------------------------------------


def custom_gradient(fun: Callable) -> Callable:
    """A function with a hand-written gradient, as ``jax.custom_gradient``:
    ``fun(*args)`` returns ``(value, vjp)``, where ``vjp(cotangent)`` gives
    one cotangent per argument (a tuple; a single one for one argument).
    Built on ``custom_vjp``: reverse mode calls ``fun`` again on the saved
    arguments for its ``vjp`` (its residuals are the arguments), and forward
    mode is refused, as in JAX.

    >>> import ftorch as ft, mlx.core as mx
    >>> @ft.custom_gradient
    ... def f(x):
    ...     return x ** 2, lambda g: 10.0 * g
    >>> f(mx.array(3.0)).item(), ft.grad(f)(mx.array(3.0)).item()
    (9.0, 10.0)
    """
    api_util.check_callable(fun, "custom_gradient")
    where = f"the function {_name(fun)!r} given to custom_gradient"

    def split(args: tuple) -> tuple[Any, Callable]:
        got = fun(*args)
        if not (isinstance(got, (tuple, list)) and len(got) == 2 and callable(got[1])):
            raise TypeError(f"custom_gradient: {where} must return a pair (value, vjp "
                            f"function), got {_describe(got)}")
        return got[0], got[1]

    def value(*args):
        return split(args)[0]

    def fwd(*args):
        return split(args)[0], args

    def bwd(args, ct):
        cts = split(args)[1](ct)
        return tuple(cts) if isinstance(cts, (tuple, list)) else (cts,)

    call = custom_vjp(value)
    call.defvjp(fwd, bwd)
    return functools.wraps(fun)(lambda *args: call(*args))


def closure_convert(fun: Callable, *example_args: Any) -> tuple[Callable, list]:
    """``fun`` with the traced values it closes over made explicit, as
    ``jax.closure_convert``: returns ``(converted, consts)`` with
    ``converted(*args, *consts) == fun(*args)``, for arguments of
    ``example_args``' structure, shapes and dtypes. The ``consts`` are the
    values of enclosing transforms (``grad``, ``vmap``...) that ``fun``
    closes over, which ``custom_vjp`` and ``custom_jvp`` can then take as
    arguments (JAX also hoists closed-over concrete floating arrays; here
    those stay inside, as they carry no derivative).

    >>> import ftorch as ft, mlx.core as mx
    >>> def outer(w):
    ...     converted, consts = ft.closure_convert(lambda x: x * w, mx.array(1.0))
    ...     return converted(mx.array(2.0), *consts), len(consts)
    >>> outer(mx.array(3.0))[0].item(), ft.grad(lambda w: outer(w)[0])(mx.array(3.0)).item()
    (6.0, 2.0)
    """
    api_util.check_callable(fun, "closure_convert")
    leaves, in_tree = api_util.flatten_arrays(example_args, "closure_convert example_args")
    staged = stage_function(fun, [aval_of(x) for x in leaves], in_tree,
                            f"closure_convert {_name(fun)}",
                            api_util.output_flattener("closure_convert"))
    n_consts = len(staged.hoisted)
    out_tree = staged.out_tree

    def converted(*args_and_consts: Any) -> Any:
        n_args = len(args_and_consts) - n_consts
        args, consts = args_and_consts[:n_args], args_and_consts[n_args:]
        arg_leaves, arg_tree = api_util.flatten_arrays(args, "closure_convert arguments")
        if arg_tree != in_tree:
            raise TypeError(f"closure_convert: the converted function takes arguments of "
                            f"structure {in_tree}, got {arg_tree}")
        outs = evaluate(staged.graph, [*consts, *arg_leaves])
        return tree.unflatten(out_tree[0], outs)

    return converted, list(staged.hoisted)
