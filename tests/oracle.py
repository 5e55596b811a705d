"""JAX as the oracle: each ``Oracle`` names a public JAX or optax function that ftorch shares
and draws its arguments; ``check`` runs both libraries on them and compares the outputs
(structure, shapes, dtypes, values) and, where the case asks, their VJPs with respect to
every floating array argument.

The cases live in ``tests/oracle_cases_*.py`` (a list ``ORACLE`` each, and ``UNCHECKED``:
shared names no oracle fits, with the test that checks them instead);
``tests/test_jax_oracle.py`` runs them all and checks that every name ftorch shares with
JAX has one. Arguments are drawn as NumPy arrays and Python values, then handed to JAX as
``jnp`` arrays and to ftorch as ``mx`` arrays. JAX runs on its CPU without x64, so inputs
are float32 and integer arrays int32.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import jax.scipy  # noqa: E402,F401
import jax.scipy.linalg  # noqa: E402,F401
import jax.scipy.special  # noqa: E402,F401
import jax.scipy.stats  # noqa: E402,F401
import mlx.core as mx  # noqa: E402
import numpy as np  # noqa: E402
import optax  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

import ftorch  # noqa: E402
import ftorch.lax  # noqa: E402
import ftorch.nn.functional  # noqa: E402
import ftorch.numpy as fnp  # noqa: E402
import ftorch.optim  # noqa: E402
import ftorch.random  # noqa: E402
import ftorch.scipy  # noqa: E402
import ftorch.tree  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "docs"))
from jax_names import NAMESPACES, jax_names, out_of_scope, public  # noqa: E402,F401


@dataclass(frozen=True)
class Oracle:
    """One check of ``name`` (JAX's or optax's dotted name) against its ftorch namesake.

    ``args(draw)`` returns ``(args, kwargs)`` of NumPy arrays and Python values. ``run``,
    for higher-order functions, is called as ``run(L, fn, *args, **kwargs)`` on each side,
    ``L`` being that side's libraries (``L.numpy``, ``L.lax``, ``L.optim``, ...) and ``fn``
    its namesake of ``name``. ``grad`` compares VJPs, ``values=False`` compares only
    shapes and dtypes (samplers), ``dtypes=False`` skips the dtype comparison.
    ``batch=True`` also checks that ``ft.vmap`` over a batch of two such calls (the
    floating arrays stacked with a perturbed copy) gives what the calls give one by one.
    """

    name: str
    args: Callable[[Callable], tuple[tuple, dict]]
    grad: bool = True
    values: bool = True
    dtypes: bool = True
    rtol: float = 1e-5
    atol: float = 1e-5
    run: Callable | None = None
    id: str = ""
    batch: bool = True

    def __str__(self) -> str:
        return f"{self.name}[{self.id}]" if self.id else self.name


def arrays(shape: tuple[int, ...] | None = None, dtype: str = "float32", min_dims: int = 0,
           max_dims: int = 3, min_side: int = 1, max_side: int = 4, lo: float = -3.0,
           hi: float = 3.0) -> st.SearchStrategy:
    """A NumPy array of ``dtype`` with entries in ``[lo, hi]`` (of the shape given, or of a
    drawn one)."""
    if shape is None:
        shape = hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side,
                                 max_side=max_side)
    dt = np.dtype(dtype)
    if dt.kind == "f":
        width = 32 if dt.itemsize <= 4 else 64
        if width == 32:  # bounds hypothesis can represent exactly
            lo, hi = float(np.float32(lo)), float(np.float32(hi))
        # No subnormals: XLA's CPU flushes them to zero, MLX keeps them.
        elements = st.floats(lo, hi, width=width, allow_subnormal=False)
    elif dt.kind == "b":
        elements = st.booleans()
    elif dt.kind == "c":
        part = st.floats(float(np.float32(lo)), float(np.float32(hi)), width=32,
                         allow_subnormal=False)
        elements = st.builds(complex, part, part)
    else:
        elements = st.integers(int(lo), int(hi))
    return hnp.arrays(dt, shape, elements=elements)


def _side(top, numpy, lax, nn, random, scipy, optim, tree, asarray) -> SimpleNamespace:
    return SimpleNamespace(jax=top, numpy=numpy, lax=lax, nn=nn, random=random, scipy=scipy,
                           optim=optim, tree=tree, asarray=asarray)


JAX = _side(jax, jnp, jax.lax, jax.nn, jax.random, jax.scipy, optax, jax.tree, jnp.asarray)
FTORCH = _side(ftorch, fnp, ftorch.lax, ftorch.nn.functional, ftorch.random, ftorch.scipy,
               ftorch.optim, ftorch.tree, mx.array)


def resolve(name: str) -> tuple[Any, Any]:
    """``name``'s JAX function and its ftorch namesake (AttributeError if ftorch lacks it)."""
    module, _, attr = name.rpartition(".")
    theirs = getattr(importlib.import_module(module), attr)
    ours = getattr(importlib.import_module(NAMESPACES[module]), attr)
    return theirs, ours


def _convert(x: Any, asarray: Callable) -> Any:
    if isinstance(x, np.ndarray):
        return asarray(x)
    if isinstance(x, (tuple, list)):
        return type(x)(_convert(v, asarray) for v in x)
    if isinstance(x, dict):
        return {k: _convert(v, asarray) for k, v in x.items()}
    return x


def _flat(x: Any) -> list[Any]:
    """The NumPy arrays of a nest of tuples, lists and dicts, in order."""
    if isinstance(x, np.ndarray):
        return [x]
    if isinstance(x, (tuple, list)):
        return [a for v in x for a in _flat(v)]
    if isinstance(x, dict):
        return [a for k in sorted(x) for a in _flat(x[k])]
    return []


def _replace(x: Any, new: list[Any]) -> Any:
    """``x`` with its NumPy arrays replaced, in ``_flat``'s order, by ``new``'s items."""
    if isinstance(x, np.ndarray):
        return new.pop(0)
    if isinstance(x, (tuple, list)):
        return type(x)(_replace(v, new) for v in x)
    if isinstance(x, dict):
        return {k: _replace(x[k], new) for k in sorted(x)}
    return x


def _is_float(a: np.ndarray) -> bool:
    return np.issubdtype(a.dtype, np.floating)


def _numpy(x: Any) -> np.ndarray:
    if isinstance(x, mx.array):
        return np.array(x.astype(mx.float32) if x.dtype == mx.bfloat16 else x)
    return np.asarray(x)


def _caller(side: SimpleNamespace, fn: Any, case: Oracle) -> Callable:
    if case.run is None:
        return fn
    return lambda *a, **k: case.run(side, fn, *a, **k)


def compare(ours: Any, theirs: Any, case: Oracle, what: str) -> None:
    """Assert that two outputs agree leaf by leaf (count, shape, dtype, values)."""
    a, b = ftorch.tree.leaves(ours), jax.tree.leaves(theirs)
    assert len(a) == len(b), f"{case} {what}: {len(a)} output leaves, JAX has {len(b)}"
    for i, (x, y) in enumerate(zip(a, b)):
        x, y = _numpy(x), _numpy(y)
        where = f"{case} {what}, leaf {i}"
        assert x.shape == y.shape, f"{where}: shape {x.shape}, JAX's {y.shape}"
        if case.dtypes:
            assert x.dtype == y.dtype, f"{where}: dtype {x.dtype}, JAX's {y.dtype}"
        if case.values:
            if x.dtype.kind in "fc" or y.dtype.kind in "fc":
                np.testing.assert_allclose(x, y, rtol=case.rtol, atol=case.atol,
                                           equal_nan=True, err_msg=where)
            else:
                np.testing.assert_array_equal(x, y, err_msg=where)


def check(case: Oracle, draw: Callable) -> None:
    """Run ``case`` on drawn arguments in both libraries and compare."""
    theirs_fn, ours_fn = resolve(case.name)
    args, kwargs = case.args(draw)
    ours_call, theirs_call = _caller(FTORCH, ours_fn, case), _caller(JAX, theirs_fn, case)
    theirs = theirs_call(*_convert(args, jnp.asarray), **_convert(kwargs, jnp.asarray))
    ours = ours_call(*_convert(args, mx.array), **_convert(kwargs, mx.array))
    compare(ours, theirs, case, "value")
    if case.grad and case.values:
        _check_vjp(case, args, kwargs, ours_call, theirs_call, theirs)


def _check_vjp(case, args, kwargs, ours_call, theirs_call, theirs) -> None:
    inputs = _flat((args, kwargs))
    wrt = [i for i, a in enumerate(inputs) if _is_float(a)]
    outs = [i for i, y in enumerate(jax.tree.leaves(theirs))
            if jnp.issubdtype(jnp.result_type(y), jnp.floating)]
    if not wrt or not outs:
        return
    rng = np.random.default_rng(0)
    leaves = jax.tree.leaves(theirs)
    cotangents = [rng.standard_normal(np.shape(leaves[i])).astype(np.float32) for i in outs]

    def restricted(call, asarray, leaves_of):
        def f(*diff):
            new = [asarray(a) for a in inputs]
            for i, d in zip(wrt, diff):
                new[i] = d
            a, k = _replace((args, kwargs), new)
            out = leaves_of(call(*a, **k))
            return [out[i] for i in outs]
        return f

    f_jax = restricted(theirs_call, jnp.asarray, jax.tree.leaves)
    f_ft = restricted(ours_call, mx.array, ftorch.tree.leaves)
    _, pullback = jax.vjp(f_jax, *[jnp.asarray(inputs[i]) for i in wrt])
    expected = pullback([jnp.asarray(c) for c in cotangents])
    _, pullback = ftorch.vjp(f_ft, *[mx.array(inputs[i]) for i in wrt])
    got = pullback([mx.array(c) for c in cotangents])
    compare(list(got), list(expected), case, "VJP")


def cases() -> tuple[list[Oracle], dict[str, str]]:
    """Every ``tests/oracle_cases_*.py``'s ``ORACLE`` and ``UNCHECKED``, gathered."""
    found, unchecked = [], {}
    for path in sorted(Path(__file__).parent.glob("oracle_cases_*.py")):
        module = importlib.import_module(path.stem)
        found += module.ORACLE
        unchecked.update(getattr(module, "UNCHECKED", {}))
    return found, unchecked


def check_batching(case: Oracle, draw: Callable) -> None:
    """``ft.vmap`` of ``case``'s ftorch function over its floating array arguments, each
    stacked with a perturbed copy, against the two calls made one by one."""
    _, ours_fn = resolve(case.name)
    args, kwargs = case.args(draw)
    inputs = _flat((args, kwargs))
    wrt = [i for i, a in enumerate(inputs) if _is_float(a)]
    if not wrt:
        return
    call = _caller(FTORCH, ours_fn, case)
    variants = [inputs, [a * np.float32(0.75) + np.float32(0.125) if i in wrt else a
                         for i, a in enumerate(inputs)]]

    def one(*diff):
        new = [mx.array(a) for a in inputs]
        for i, d in zip(wrt, diff):
            new[i] = d
        a, k = _replace((args, kwargs), new)
        return call(*a, **k)

    looped = [one(*[mx.array(v[i]) for i in wrt]) for v in variants]
    stacked = [mx.array(np.stack([v[i] for v in variants])) for i in wrt]
    batched = ftorch.vmap(one)(*stacked)
    expected = jax.tree.map(lambda *xs: np.stack([_numpy(x) for x in xs]),
                            *[ftorch.tree.map(_numpy, out) for out in looped])
    compare(batched, expected, Oracle(case.name, case.args, dtypes=False, rtol=case.rtol,
                                      atol=case.atol, values=case.values, id=case.id),
            "vmap")
