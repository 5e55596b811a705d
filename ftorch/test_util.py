"""Checks for derivative and batching rules, as ``jax.test_util``: the checks
ftorch's own test suite runs on every primitive, for the primitives, custom
rules and functions you write.

- ``check_jvp``: ``ft.jvp`` against central finite differences.
- ``check_vjp``: ``ft.vjp`` against ``ft.jvp`` by the dot-product identity
  ``<ct, J t> == <J^T ct, t>``, so the VJP is exactly the transpose of the JVP.
- ``check_grads``: both, and (``order=2``) the same checks on the
  derivatives themselves, which exercises differentiating the rules.
- ``check_batching``: ``ft.vmap`` against a Python loop over the batch.

Run them in float64 (on the CPU): finite differences in float32 only agree to
a few digits, and the default tolerances follow the arguments' dtype. (MLX's
CPU ``sin``, ``cos`` and ``erf`` are only float32-accurate in float64: with
them, pass ``eps=1e-3`` or so.)
Arguments may be pytrees; their floating leaves (and complex ones) are
differentiated along random directions, the other leaves (integer indices,
masks) are passed as they are. Each check raises ``AssertionError`` saying
which check failed and by how much.

>>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
>>> x = mx.array([0.5, 1.5], dtype=mx.float64)
>>> ft.test_util.check_grads(lambda x: fnp.tanh(x) * x, (x,), order=2)
>>> ft.test_util.check_batching(fnp.cumsum, (mx.ones((3, 4)),), in_axes=1)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import mlx.core as mx
import numpy as np

from ftorch import tree
from ftorch.transforms import jvp, vjp, vmap

__all__ = ["check_jvp", "check_vjp", "check_grads", "check_batching"]

_INEXACT = (mx.float16, mx.bfloat16, mx.float32, mx.float64, mx.complex64)
#: (eps, rtol, atol) for finite differences, by the widest differentiated dtype.
_DEFAULTS = {mx.float64: (1e-6, 1e-4, 1e-5), mx.float32: (1e-3, 2e-2, 2e-2),
             mx.complex64: (1e-3, 2e-2, 2e-2)}
_LOW_PRECISION = (1e-2, 1e-1, 1e-1)


def _is_diff(x: Any) -> bool:
    return isinstance(x, mx.array) and x.dtype in _INEXACT


def _as_array(x: Any) -> Any:
    if isinstance(x, np.ndarray) and np.issubdtype(x.dtype, np.inexact):
        return mx.array(x)
    return x


def _np(x: Any) -> np.ndarray:
    if x.dtype in (mx.float16, mx.bfloat16, mx.float32):
        x = x.astype(mx.float64)
    return np.array(x)


def _closed(f: Callable, args: Sequence) -> tuple[Callable, list]:
    """``f`` as a function of the differentiable leaves of ``args`` alone, and those leaves."""
    leaves, treedef = tree.flatten(tree.map(_as_array, tuple(args)))
    diff = [i for i, x in enumerate(leaves) if _is_diff(x)]

    def g(*diff_leaves):
        full = list(leaves)
        for i, d in zip(diff, diff_leaves):
            full[i] = d
        return f(*tree.unflatten(treedef, full))

    return g, [leaves[i] for i in diff]


def _defaults(xs: list, eps: float | None, rtol: float | None,
              atol: float | None) -> tuple[float, float, float]:
    widest = max((x.dtype for x in xs), key=lambda d: d.size, default=mx.float64)
    d_eps, d_rtol, d_atol = _DEFAULTS.get(widest, _LOW_PRECISION)
    return (d_eps if eps is None else eps, d_rtol if rtol is None else rtol,
            d_atol if atol is None else atol)


def _random_like(rng: np.random.Generator, xs: list) -> list:
    out = []
    for x in xs:
        r = rng.standard_normal(tuple(x.shape))
        if x.dtype == mx.complex64:
            r = r + 1j * rng.standard_normal(tuple(x.shape))
        out.append(mx.array(r).astype(x.dtype))
    return out


def _pairing(xs: list, ys: list) -> float:
    """``Re sum(x * y)`` over the leaves: the bilinear pairing under which the
    VJP is the transpose of the JVP (JAX's convention for complex values)."""
    return float(sum(np.real(np.sum(_np(x) * _np(y))) for x, y in zip(xs, ys)))


def _diff_leaves(out: Any) -> list:
    return [o for o in tree.leaves(out) if _is_diff(o)]


def _same_values(got: Any, expected: Any, what: str) -> None:
    """The same outputs (structure, shapes, values), up to rounding."""
    a, b = tree.leaves(got), tree.leaves(expected)
    assert len(a) == len(b), f"{what}: {len(a)} outputs vs {len(b)}"
    for x, y in zip(a, b):
        np.testing.assert_allclose(_np(x), _np(y), rtol=1e-12, atol=1e-12, err_msg=what)


def check_jvp(f: Callable, args: Sequence, *, eps: float | None = None,
              rtol: float | None = None, atol: float | None = None, seed: int = 0) -> None:
    """Check ``ft.jvp(f)`` against central finite differences
    ``(f(x + eps t) - f(x - eps t)) / (2 eps)`` along a random tangent ``t``
    (and its primal output against ``f``'s).
    ``atol`` is scaled by the largest output magnitude (at least 1).

    >>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
    >>> ft.test_util.check_jvp(fnp.expm1, (mx.array([0.0, 1.0], dtype=mx.float64),))
    """
    g, primals = _closed(f, args)
    if not primals:
        return
    eps, rtol, atol = _defaults(primals, eps, rtol, atol)
    tangents = _random_like(np.random.default_rng(seed), primals)
    out, t_out = jvp(g, tuple(primals), tuple(tangents))
    _same_values(out, g(*primals), "jvp's primal output vs the function's")
    plus = g(*[p + eps * t for p, t in zip(primals, tangents)])
    minus = g(*[p - eps * t for p, t in zip(primals, tangents)])
    fd = [(_np(a) - _np(b)) / (2 * eps) for a, b in zip(_diff_leaves(plus), _diff_leaves(minus))]
    got = [_np(t) for t, o in zip(tree.leaves(t_out), tree.leaves(out)) if _is_diff(o)]
    assert len(fd) == len(got), f"jvp: {len(got)} differentiable outputs, f gave {len(fd)}"
    scale = max([1.0] + [float(np.max(np.abs(_np(o)))) for o in _diff_leaves(out) if o.size])
    for k, (a, b) in enumerate(zip(got, fd)):
        assert a.shape == b.shape, f"jvp: tangent output {k} has shape {a.shape}, not {b.shape}"
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol * scale,
                                   err_msg=f"jvp vs finite differences, output {k}")


def check_vjp(f: Callable, args: Sequence, *, rtol: float | None = None,
              atol: float | None = None, seed: int = 1, reference: str = "jvp",
              eps: float | None = None) -> None:
    """Check that ``ft.vjp(f)`` is the transpose of ``f``'s derivative:
    ``<ct, J t> == <J^T ct, t>`` for random ``t`` and ``ct`` (with
    ``<x, y> = Re sum(x * y)``), and that each cotangent has its primal's
    shape and dtype (and the primal output is ``f``'s). ``J t`` comes from
    ``ft.jvp`` (``reference="jvp"``, exact) or from central finite
    differences with step ``eps`` (``"fd"``: for functions without forward
    mode, such as ``custom_vjp`` ones).

    >>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
    >>> ft.test_util.check_vjp(fnp.tanh, (mx.array([0.3, -1.0], dtype=mx.float64),))
    """
    g, primals = _closed(f, args)
    if not primals:
        return
    if reference not in ("jvp", "fd"):
        raise ValueError(f"check_vjp: reference must be 'jvp' or 'fd'; got {reference!r}")
    eps, rtol, atol = _defaults(primals, eps, rtol, atol)
    rng = np.random.default_rng(seed)
    tangents = _random_like(rng, primals)
    if reference == "jvp":
        out, t_out = jvp(g, tuple(primals), tuple(tangents))
    else:
        out = g(*primals)
        plus = g(*[p + eps * t for p, t in zip(primals, tangents)])
        minus = g(*[p - eps * t for p, t in zip(primals, tangents)])
        t_out = tree.map(lambda a, b: (a - b) / (2 * eps), plus, minus)
    out_vjp, pullback = vjp(g, *primals)
    _same_values(out_vjp, out, "vjp's primal output vs the function's")
    out_leaves, treedef = tree.flatten(out)
    cts = [_random_like(rng, [o])[0] if _is_diff(o) else mx.zeros(o.shape, o.dtype)
           for o in out_leaves]
    ct_in = pullback(tree.unflatten(treedef, cts))
    for k, (c, p) in enumerate(zip(ct_in, primals)):
        assert tuple(c.shape) == tuple(p.shape) and c.dtype == p.dtype, (
            f"vjp: cotangent {k} is {tuple(c.shape)} {c.dtype}, its primal "
            f"{tuple(p.shape)} {p.dtype}")
    keep = [i for i, o in enumerate(out_leaves) if _is_diff(o)]
    lhs = _pairing([cts[i] for i in keep], [tree.leaves(t_out)[i] for i in keep])
    rhs = _pairing(list(ct_in), tangents)
    np.testing.assert_allclose(lhs, rhs, rtol=rtol, atol=atol * (1 + abs(lhs)),
                               err_msg="vjp: <ct, J t> vs <J^T ct, t>")


def check_grads(f: Callable, args: Sequence, order: int = 2,
                modes: Sequence[str] = ("fwd", "rev"), *, eps: float | None = None,
                rtol: float | None = None, atol: float | None = None, seed: int = 0) -> None:
    """Check ``f``'s derivatives up to ``order``: forward mode (``"fwd"``,
    ``check_jvp``) and reverse mode (``"rev"``, ``check_vjp``), then the same
    on the JVP and on the pullback themselves for each higher order, as
    ``jax.test_util.check_grads``.

    >>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
    >>> ft.test_util.check_grads(fnp.log1p, (mx.array([0.5, 2.0], dtype=mx.float64),))
    """
    if order < 1:
        raise ValueError(f"check_grads: order must be at least 1; got {order}")
    bad = [m for m in modes if m not in ("fwd", "rev")]
    if bad or not modes:
        raise ValueError(f"check_grads: modes must be among 'fwd' and 'rev'; got {modes!r}")
    g, primals = _closed(f, args)
    if not primals:
        return
    if "fwd" in modes:
        check_jvp(g, primals, eps=eps, rtol=rtol, atol=atol, seed=seed)
    if "rev" in modes:
        # Without forward mode (a custom_vjp function), J t by finite differences.
        check_vjp(g, primals, rtol=rtol, atol=atol, seed=seed + 1, eps=eps,
                  reference="jvp" if "fwd" in modes else "fd")
    if order == 1:
        return
    rng = np.random.default_rng(seed + 2)
    # Higher orders: the derivative maps as functions of the primals, along
    # fixed directions, checked one order lower with looser tolerances.
    looser = dict(eps=eps, rtol=None if rtol is None else 10 * rtol,
                  atol=None if atol is None else 10 * atol, seed=seed + 3)
    if "fwd" in modes:
        tangents = tuple(_random_like(rng, primals))
        check_grads(lambda *p: jvp(g, p, tangents)[1], primals, order - 1, modes, **looser)
    if "rev" in modes:
        out_leaves, treedef = tree.flatten(g(*primals))
        ct = tree.unflatten(treedef, [_random_like(rng, [o])[0] if _is_diff(o)
                                      else mx.zeros(o.shape, o.dtype) for o in out_leaves])
        check_grads(lambda *p: vjp(g, *p)[1](ct), primals, order - 1, modes, **looser)


def check_batching(f: Callable, args: Sequence, in_axes: int | None | Sequence[int | None] = 0,
                   out_axes: Any = 0, *, rtol: float | None = None,
                   atol: float | None = None) -> None:
    """Check ``ft.vmap(f, in_axes, out_axes)(*args)`` against stacking ``f``
    over the batch in a Python loop. ``args`` are the batched arguments;
    ``in_axes`` says where each argument's batch axis is (``None``: not
    batched), as in ``ft.vmap``. Tolerances default to a few ulps of the
    arguments' dtype.

    >>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
    >>> ft.test_util.check_batching(fnp.matmul, (mx.ones((5, 2, 3)), mx.ones((3, 4))),
    ...                             in_axes=(0, None))
    """
    args = tuple(tree.map(_as_array, tuple(args)))
    axes = tuple(in_axes) if isinstance(in_axes, (list, tuple)) else (in_axes,) * len(args)
    if len(axes) != len(args):
        raise ValueError(f"check_batching: in_axes has {len(axes)} entries for "
                         f"{len(args)} arguments")
    sizes = {x.shape[ax] for a, ax in zip(args, axes) if ax is not None
             for x in tree.leaves(a)}
    if len(sizes) != 1:
        raise ValueError("check_batching: the batched arguments must share one batch size "
                         f"along in_axes; got sizes {sorted(sizes)}")
    size = sizes.pop()

    def slice_of(a: Any, ax: int | None, i: int) -> Any:
        if ax is None:
            return a
        return tree.map(lambda x: x[(slice(None),) * (ax % x.ndim) + (i,)], a)

    loop = [f(*[slice_of(a, ax, i) for a, ax in zip(args, axes)]) for i in range(size)]
    got = vmap(f, in_axes=axes, out_axes=out_axes)(*args)
    leaves0, treedef = tree.flatten(loop[0])
    out_axes_leaves = (tree.leaves(out_axes) if not isinstance(out_axes, int)
                       else [out_axes] * len(leaves0))
    got_leaves = tree.leaves(got)
    assert len(got_leaves) == len(leaves0), (
        f"vmap: {len(got_leaves)} outputs, the loop {len(leaves0)}")
    widest = max((x.dtype for x in tree.leaves(args) if _is_diff(x)), key=lambda d: d.size,
                 default=mx.float32)
    ulp = float(np.finfo(np.float64 if widest == mx.float64 else np.float32).eps)
    rtol = 100 * ulp if rtol is None else rtol
    atol = 100 * ulp if atol is None else atol
    for k, (g_leaf, ax) in enumerate(zip(got_leaves, out_axes_leaves)):
        expected = np.stack([_np(tree.leaves(o)[k]) for o in loop], axis=ax)
        actual = _np(g_leaf)
        assert actual.shape == expected.shape, (
            f"vmap: output {k} has shape {actual.shape}, the loop {expected.shape}")
        np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol,
                                   err_msg=f"vmap vs loop, output {k}")
