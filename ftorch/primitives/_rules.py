"""What primitive rules share: helpers for the common shapes of rule
(non-differentiable, derivative-given, linear, vectorized, broadcasting,
reducer), and the small operations rules are written with. Everything here
calls the strict wrappers of the primitive layer (``lax``), never
``ftorch.numpy``."""

from __future__ import annotations

import functools
from typing import Any

import mlx.core as mx

import ftorch.primitives as lax
from ftorch.core import Tracer, aval_of, is_inexact


def shape_of(x: Any) -> tuple[int, ...]:
    if isinstance(x, (mx.array, Tracer)):  # tracers read it off their value
        return x.shape
    return aval_of(x).shape


def is_constant_scalar(x: Any) -> bool:
    return isinstance(x, (bool, int, float, complex))


def unbroadcast(ct: Any, x: Any) -> Any:
    """Sum a cotangent of a broadcast result back to ``x``'s shape and dtype.

    Returns ``None`` when ``x`` cannot carry a gradient (a Python scalar or an
    integer or boolean array). A complex cotangent of a real ``x`` is cast to
    its real part: the transpose of promoting ``x`` to complex."""
    if isinstance(x, (mx.array, Tracer)):  # read once: on every binary op's VJP
        shape, dtype = x.shape, x.dtype
    elif is_constant_scalar(x):
        return None
    else:
        shape, dtype = aval_of(x)
    if not is_inexact(dtype):
        return None
    ct_shape = ct.shape
    if ct_shape != shape:
        lead = len(ct_shape) - len(shape)
        inner = tuple(lead + i for i, d in enumerate(shape) if d == 1 and ct_shape[lead + i] != 1)
        if inner:
            ct = lax.reshape(lax.sum(ct, tuple(range(lead)) + inner, True), shape)
        else:  # only new leading axes (a bias): one sum gives the shape
            ct = lax.sum(ct, tuple(range(lead)))
    if ct.dtype != dtype:
        ct = lax.astype(ct, dtype)
    return ct


def tangent_to(t: Any, out: Any) -> Any:
    """Broadcast and cast an input's tangent to the output's shape and dtype."""
    if t is None:
        return None
    out_aval = aval_of(out)
    if shape_of(t) != out_aval.shape:
        t = lax.broadcast_to(t, out_aval.shape)
    if aval_of(t).dtype != out_aval.dtype:
        t = lax.astype(t, out_aval.dtype)
    return t


def add_tangents(a: Any, b: Any) -> Any:
    """Sum of two tangents, either of which may be a symbolic zero (None)."""
    if a is None:
        return b
    if b is None:
        return a
    return lax.add(a, b)


# ----------------------------------------------------------------------------
# Batching rules: batch(vals, dims, axis_size, **params) -> (out, out_dim)
# ----------------------------------------------------------------------------


def move_bdim(x: Any, bdim: int | None, to: int, axis_size: int) -> Any:
    """``x`` with its batch axis at ``to`` (broadcast in when unbatched)."""
    if bdim is None:
        shape = list(aval_of(x).shape)
        shape.insert(to, axis_size)
        return lax.broadcast_to(lax.reshape(x, tuple(1 if i == to else d
                                                     for i, d in enumerate(shape))),
                                tuple(shape))
    if bdim == to:
        return x
    axes = [a for a in range(aval_of(x).ndim) if a != bdim]
    axes.insert(to, bdim)
    return lax.transpose(x, tuple(axes))


def batch_elementwise(prim, vals, dims, axis_size, **params):
    """The rule for broadcasting elementwise ops: align the batch axes so that
    NumPy broadcasting of the per-example shapes still holds."""
    # Fast path (one pass, on every batched op's path): every batched operand
    # has its batch axis the same number k of axes from its end, and no
    # unbatched operand reaches that far: plain broadcasting then lines the
    # batch axes up, with no copy.
    k = None
    unbatched_rank = out_rank = 0
    fast = True
    for v, d in zip(vals, dims):
        r = v.ndim if isinstance(v, (mx.array, Tracer)) else aval_of(v).ndim
        if d is None:
            unbatched_rank = max(unbatched_rank, r)
        else:
            r -= 1
            if k is None:
                k = r - d
            elif r - d != k:
                fast = False
        out_rank = max(out_rank, r)
    if fast and unbatched_rank <= k:
        return prim.bind(*vals, **params), out_rank - k
    aligned = []
    for v, d in zip(vals, dims):
        if d is None:
            aligned.append(v)
            continue
        v = move_bdim(v, d, 0, axis_size)
        shape = aval_of(v).shape
        if len(shape) - 1 < out_rank:
            v = lax.reshape(v, (shape[0],) + (1,) * (out_rank - len(shape) + 1) + shape[1:])
        aligned.append(v)
    return prim.bind(*aligned, **params), 0


def batch_unary(prim):
    """The batching rule of a unary elementwise op: the batch axis stays put."""
    return lambda vals, dims, axis_size, **params: (prim.bind(*vals, **params), dims[0])


def batch_nary(prim):
    """The batching rule of a broadcasting elementwise op."""
    return functools.partial(batch_elementwise, prim)


# ----------------------------------------------------------------------------
# Matrices (the trailing two axes), for the linear-algebra rules
# ----------------------------------------------------------------------------


def mT(x: Any) -> Any:
    """``x`` with its matrices transposed."""
    n = len(shape_of(x))
    return lax.transpose(x, (*range(n - 2), n - 1, n - 2))


def tri(x: Any, *, lower: bool, strict: bool = False) -> Any:
    """The lower or upper triangle of ``x``'s (m, n) matrices, without the
    diagonal when ``strict``."""
    shape, dtype = aval_of(x)
    ones = mx.ones(tuple(shape[-2:]), dtype=dtype)
    k = 1 if strict else 0
    return lax.multiply(x, mx.tril(ones, -k) if lower else mx.triu(ones, k))


def diag_part(x: Any) -> Any:
    """The main diagonals (..., n) of ``x``'s square matrices."""
    shape, dtype = aval_of(x)
    return lax.sum(lax.multiply(x, mx.eye(shape[-1], dtype=dtype)), (len(shape) - 1,))


# ----------------------------------------------------------------------------
# The common shapes of rule, declared in one line under a primitive
# ----------------------------------------------------------------------------


def nondifferentiable(prim) -> None:
    """Rules of an op whose derivative is zero almost everywhere (floor,
    sign, comparisons): no tangent, no cotangent."""

    def jvp(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        return out, ([None] * len(out) if prim.multiple_results else None)

    def vjp(ct, out, *primals, needed, **params):
        return (None,) * len(primals)

    prim.def_jvp(jvp)
    prim.def_vjp(vjp)


def derivative(prim, f) -> None:
    """Rules of a unary op given its derivative ``f(x, y) -> f'(x)`` (``y``
    is the op's output): the JVP is ``t * f'(x)``, the VJP ``ct * f'(x)``."""

    def jvp(primals, tangents, **params):
        (x,), (t,) = primals, tangents
        y = prim.bind(x, **params)
        return y, lax.multiply(t, f(x, y))

    def vjp(ct, y, x, *, needed, **params):
        return (lax.multiply(ct, f(x, y)),)

    prim.def_jvp(jvp)
    prim.def_vjp(vjp)


def linear(prim, transpose) -> None:
    """Rules of an op linear in its first operand (the others are static
    data): its JVP applies it to the tangent; its VJP is
    ``transpose(ct, *primals, **params)``, the cotangent of that operand."""

    def jvp(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        t = tangents[0]
        return out, (None if t is None else prim.bind(t, *primals[1:], **params))

    def vjp(ct, out, *primals, needed, **params):
        return (transpose(ct, *primals, **params),) + (None,) * (len(primals) - 1)

    prim.def_jvp(jvp)
    prim.def_vjp(vjp)


def vectorized(prim) -> None:
    """The batching rule of an op applied to each element: the batch axis
    stays where it is."""
    prim.def_batch(batch_unary(prim))


def broadcasting(prim) -> None:
    """The batching rule of an elementwise op that broadcasts its operands."""
    prim.def_batch(batch_nary(prim))


def reducer(prim) -> None:
    """The batching rule of a reduction over the static ``axes``: the batch
    axis moves to the front and every reduced axis shifts past it."""

    def batch(vals, dims, axis_size, *, axes, **params):
        x = move_bdim(vals[0], dims[0], 0, axis_size)
        out = prim.bind(x, *vals[1:], axes=tuple(a + 1 for a in axes), **params)
        return out, 0

    prim.def_batch(batch)
