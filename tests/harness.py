"""Checks every primitive's rules must pass, and the strategies to drive them.

A ``Case`` names the primitive it covers, an ftorch function exercising it,
and a hypothesis strategy drawing that function's arguments as NumPy arrays
(float64 for floating arguments). ``tests/test_rules.py`` runs every case
through every check below; ``tests/test_registry.py`` fails when a primitive
has no case.

The checks (the first two and the batching check are ``ft.test_util``'s, the
public rule checker, at the tolerances a case sets):
- ``check_jvp_fd``: ``ft.jvp`` against central finite differences in float64.
- ``check_vjp_dot``: ``<ct, J t> == <J^T ct, t>`` between ``ft.vjp`` and ``ft.jvp``.
- ``check_against_mlx``: ``ft.jvp``/``ft.vjp`` against ``mx.jvp``/``mx.vjp``.
- ``check_second_order``: the VJP (the gradient map) is itself checked with
  the two checks above, which exercises differentiating the VJP rules.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable
from typing import Any

import mlx.core as mx
import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ftorch as ft

FLOAT_DTYPES = (np.float16, np.float32, np.float64)


@dataclasses.dataclass
class Case:
    """One way of exercising primitive ``prim``.

    ``fn`` takes the drawn arguments as MLX arrays and returns an array (or a
    pytree of arrays). Floating arguments are differentiated; others (integer
    indices, boolean masks) are passed along as they are. ``mlx_fn`` is the
    same computation in raw MLX, when MLX can differentiate it. ``vjp=False``
    leaves the case out of the reverse-mode checks.
    """

    prim: str
    fn: Callable[..., Any]
    args: st.SearchStrategy
    mlx_fn: Callable[..., Any] | None = None
    second_order: bool = True
    fd: bool = True  # False only where finite differences are not the derivative
    vjp: bool = True  # False where reverse mode is refused (a data-dependent while_loop)
    name: str = ""
    rtol: float = 1e-5
    atol: float = 1e-6
    eps: float = 1e-6

    def __post_init__(self):
        self.name = self.name or self.prim

    def __repr__(self) -> str:
        return self.name


# ----------------------------------------------------------------------------
# Strategies
# ----------------------------------------------------------------------------


def shapes(min_dims: int = 0, max_dims: int = 3, min_side: int = 1, max_side: int = 4):
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side,
                            max_side=max_side)


def floats(shape, lo: float = -3.0, hi: float = 3.0) -> st.SearchStrategy:
    """float64 arrays of ``shape`` (a tuple or a strategy) with values in [lo, hi]."""
    elements = st.floats(lo, hi, allow_nan=False, allow_infinity=False, allow_subnormal=False)
    return hnp.arrays(np.float64, shape, elements=elements)


def away_from_integers(a: np.ndarray, margin: float = 0.05) -> np.ndarray:
    """Move values away from integers (the kinks of floor, round, ...)."""
    base = np.floor(a)
    return base + margin + (1 - 2 * margin) * (a - base)


def away_from_zero(a: np.ndarray, margin: float = 0.1) -> np.ndarray:
    """Move values out of (-margin, margin) (the kinks of abs, sign, ...)."""
    return np.where(a >= 0, a + margin, a - margin)


def distinct(a: np.ndarray, gap: float = 0.05) -> np.ndarray:
    """Make all entries distinct by at least ``gap`` (no ties for max, sort, ...)."""
    flat = a.ravel()
    order = np.argsort(flat, kind="stable")
    ranks = np.empty_like(order)
    ranks[order] = np.arange(flat.size)
    return (flat + gap * ranks).reshape(a.shape)


def np_fd_grad(f: Callable, a: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Central finite differences of a scalar NumPy function ``f`` at ``a``,
    entry by entry: a reference gradient computed without ftorch."""
    g = np.zeros_like(a)
    for idx in np.ndindex(a.shape):
        d = np.zeros_like(a)
        d[idx] = eps
        g[idx] = (f(a + d) - f(a - d)) / (2 * eps)
    return g


@st.composite
def broadcastable(draw, n: int = 2, lo: float = -3.0, hi: float = 3.0, max_dims: int = 3):
    """``n`` float64 arrays whose shapes broadcast together."""
    shape_pair = draw(hnp.mutually_broadcastable_shapes(
        num_shapes=n, min_dims=0, max_dims=max_dims, max_side=4))
    return tuple(draw(floats(s, lo, hi)) for s in shape_pair.input_shapes)


# ----------------------------------------------------------------------------
# Plumbing
# ----------------------------------------------------------------------------


@contextlib.contextmanager
def compiler_off(off: bool = True):
    """MLX's compiler off for the block (``off=False``: left as it is). Tests
    of graph logic use it: on CPU each new fused kernel costs a g++ run."""
    if not off:
        yield
        return
    mx.disable_compile()
    try:
        yield
    finally:
        mx.enable_compile()


def to_mx(args: tuple, dtype=mx.float64) -> tuple:
    """NumPy arguments as MLX arrays; floating ones in ``dtype``."""
    out = []
    for a in args:
        if isinstance(a, np.generic):  # NumPy ufuncs turn 0-d arrays into scalars
            a = np.asarray(a)
        if isinstance(a, np.ndarray) and a.dtype in FLOAT_DTYPES:
            out.append(mx.array(a.astype(np.float64 if dtype == mx.float64 else np.float32),
                                dtype=dtype))
        elif isinstance(a, np.ndarray):
            out.append(mx.array(a))
        else:
            out.append(a)
    return tuple(out)


def _is_diff(a: Any) -> bool:
    return isinstance(a, mx.array) and a.dtype in (mx.float16, mx.bfloat16, mx.float32, mx.float64)


def _np(x: Any) -> np.ndarray:
    return np.array(x.astype(mx.float64) if x.dtype != mx.float64 and _is_diff(x) else x)


def _split(fn: Callable, args: tuple) -> tuple[Callable, list[int], list]:
    """Close ``fn`` over its non-differentiable arguments."""
    diff = [i for i, a in enumerate(args) if _is_diff(a)]

    def f(*dargs):
        full = list(args)
        for i, d in zip(diff, dargs):
            full[i] = d
        return fn(*full)

    return f, diff, [args[i] for i in diff]


def _leaves(x: Any) -> list:
    return ft.tree.leaves(x)


def _random_like(rng: np.random.Generator, xs: list) -> list:
    return [mx.array(rng.standard_normal(tuple(x.shape)), dtype=x.dtype) for x in xs]


def close(actual, expected, rtol=1e-5, atol=1e-6):
    """One array against expected values, shapes included."""
    actual, expected = np.array(actual), np.asarray(expected)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol)


def assert_close(actual, expected, rtol, atol, what):
    a, e = [_np(x) for x in _leaves(actual)], [_np(x) for x in _leaves(expected)]
    assert len(a) == len(e), f"{what}: {len(a)} outputs vs {len(e)}"
    for x, y in zip(a, e):
        assert x.shape == y.shape, f"{what}: shape {x.shape} vs {y.shape}"
        np.testing.assert_allclose(x, y, rtol=rtol, atol=atol, err_msg=what)


# ----------------------------------------------------------------------------
# The checks
# ----------------------------------------------------------------------------


def check_jvp_fd(fn: Callable, args: tuple, *, rtol=1e-5, atol=1e-6, eps=1e-6, seed=0):
    """``ft.jvp`` agrees with central finite differences (float64 arguments):
    ``ft.test_util.check_jvp`` at ten times a case's tolerances."""
    ft.test_util.check_jvp(fn, args, eps=eps, rtol=rtol * 10, atol=atol * 10, seed=seed)


def check_vjp_dot(fn: Callable, args: tuple, *, rtol=1e-5, atol=1e-6, seed=1):
    """``<ct, J t> == <J^T ct, t>``: the VJP is the transpose of the JVP
    (``ft.test_util.check_vjp``), and the primal outputs are ``fn``'s."""
    ft.test_util.check_vjp(fn, args, rtol=rtol * 10, atol=atol * 10, seed=seed)


def check_against_mlx(fn: Callable, mlx_fn: Callable, args: tuple, *, rtol=1e-4, atol=1e-5,
                      seed=2):
    """``ft.jvp``/``ft.vjp`` agree with ``mx.jvp``/``mx.vjp`` (float32)."""
    args32 = to_mx(tuple(np.asarray(a) if not isinstance(a, np.ndarray) else a for a in args),
                   dtype=mx.float32)
    f, diff, primals = _split(fn, args32)
    g, _, _ = _split(mlx_fn, args32)
    if not primals:
        return
    rng = np.random.default_rng(seed)
    tangents = _random_like(rng, primals)

    def as_list(h):
        return lambda *a: _leaves(h(*a))

    mx_out, mx_t = mx.jvp(as_list(g), list(primals), list(tangents))
    out, t_out = ft.jvp(f, tuple(primals), tuple(tangents))
    assert_close(_leaves(out), mx_out, rtol, atol, "output vs MLX")
    keep = [i for i, o in enumerate(mx_out) if _is_diff(o)]
    # Where MLX's own tangent does not even have its output's shape, its JVP
    # rule is broken (mx.jvp of x[[0, 0], -5::-1] on shape (1, 4) gives a
    # (2, 4) tangent for a (2, 0) result): ours must have the right shape.
    broken = [i for i in keep if tuple(mx_t[i].shape) != tuple(mx_out[i].shape)]
    for i in broken:
        assert tuple(_leaves(t_out)[i].shape) == tuple(mx_out[i].shape), "jvp shape"
    keep = [i for i in keep if i not in broken]
    assert_close([_leaves(t_out)[i] for i in keep], [mx_t[i] for i in keep], rtol, atol,
                 "jvp vs mx.jvp")
    cts = [mx.array(rng.standard_normal(tuple(o.shape)), dtype=o.dtype) for o in mx_out]
    _, pullback = ft.vjp(f, *primals)
    ft_ct = pullback(ft.tree.unflatten(ft.tree.structure(out), cts))
    if broken:  # MLX's VJP is broken there too (it raises); the other checks cover ours
        for c, p in zip(ft_ct, primals):
            assert tuple(c.shape) == tuple(p.shape), "vjp shape"
        return
    _, mx_ct = mx.vjp(as_list(g), list(primals), cts)
    assert_close(list(ft_ct), mx_ct, rtol, atol, "vjp vs mx.vjp")


def check_second_order(fn: Callable, args: tuple, *, rtol=1e-5, atol=1e-6, eps=1e-6, seed=3):
    """Differentiate the pullback ``x -> J(x)^T ct``: forward (jvp of vjp,
    i.e. Hessian-vector products) against finite differences, and reverse
    (vjp of vjp) by the dot-product identity."""
    f, diff, primals = _split(fn, args)
    if not primals:
        return
    rng = np.random.default_rng(seed)
    out = f(*primals)
    out_leaves, treedef = ft.tree.flatten(out)
    cts = [mx.array(rng.standard_normal(tuple(o.shape)), dtype=o.dtype) if _is_diff(o)
           else mx.zeros(o.shape, o.dtype) for o in out_leaves]
    ct = ft.tree.unflatten(treedef, cts)

    def pulled(*dargs):
        return ft.vjp(f, *dargs)[1](ct)

    check_jvp_fd(pulled, tuple(primals), rtol=rtol * 10, atol=atol * 10, eps=eps, seed=seed)
    check_vjp_dot(pulled, tuple(primals), rtol=rtol * 10, atol=atol * 10, seed=seed)


def check_vmap(fn: Callable, args: tuple, *, size: int = 3, seed=4, rtol=1e-10, atol=1e-12):
    """``vmap(fn)`` equals stacking ``fn`` over a Python loop
    (``ft.test_util.check_batching``).

    Each floating argument gets a batch axis at a random position (or stays
    unbatched); other arguments (indices, encoded parameters) stay unbatched.
    Outputs are compared with their batch axis at a random position too."""
    # Non-array arguments (e.g. einsum subscripts) are closed over.
    arrays = [i for i, a in enumerate(args) if isinstance(a, mx.array)]
    if len(arrays) < len(args):
        def over_arrays(*arrs):
            full = list(args)
            for i, a in zip(arrays, arrs):
                full[i] = a
            return fn(*full)

        return check_vmap(over_arrays, tuple(args[i] for i in arrays), size=size, seed=seed,
                          rtol=rtol, atol=atol)
    rng = np.random.default_rng(seed)
    in_axes, batched = [], []
    for a in args:
        if _is_diff(a) and rng.random() < 0.8:
            ax = int(rng.integers(0, a.ndim + 1))
            copies = [np.array(a) + 0.01 * k for k in range(size)]
            batched.append(mx.array(np.stack(copies, axis=ax), dtype=a.dtype))
            in_axes.append(ax)
        else:
            batched.append(a)
            in_axes.append(None)
    if all(ax is None for ax in in_axes):
        return
    first = fn(*[b if ax is None else b[(slice(None),) * ax + (0,)]
                 for b, ax in zip(batched, in_axes)])
    leaves0, treedef = ft.tree.flatten(first)
    out_axes = ft.tree.unflatten(treedef, [int(rng.integers(0, o.ndim + 1)) for o in leaves0])
    ft.test_util.check_batching(fn, tuple(batched), tuple(in_axes), out_axes, rtol=rtol,
                                atol=atol)
