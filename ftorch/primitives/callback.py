"""``pure_callback``: a host (NumPy) function called from traced code, as
``jax.pure_callback``; the primitive layer.

The callback gets NumPy arrays and returns values of the shapes and dtypes
declared up front, so the call is one primitive whose shape rule needs no
running. It reads its operands on the host, so under ``jit`` the compiled
graph is split around it (``needs_host``) and it runs on concrete arrays.
It must be pure: jit may drop it if its result is unused, or run it once
for equal calls. It has no derivative (wrap it in ``custom_jvp`` or
``custom_vjp`` for one); ``vmap`` needs ``vmap_method``, as in JAX.

>>> import ftorch as ft, mlx.core as mx, numpy as np
>>> f = lambda x: ft.pure_callback(np.sinc, ft.ShapeDtypeStruct(x.shape, x.dtype), x)
>>> ft.jit(f)(mx.array([0.0, 0.5])).tolist()
[1.0, 0.6366197...]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mlx.core as mx
import numpy as np

import ftorch.primitives as lax
from ftorch import api_util, tree
from ftorch.core import Primitive, ShapeDtypeStruct, format_aval
from ftorch.dtypes import to_mlx_dtype
from ftorch.primitives._rules import move_bdim

__all__ = ["pure_callback"]

VMAP_METHODS = ("sequential", "expand_dims", "broadcast_all", "legacy_vectorized")


def _host(x: mx.array) -> np.ndarray:
    return np.array(x.astype(mx.float32) if x.dtype == mx.bfloat16 else x)


def _impl(*operands, callback, result_avals, vmap_method):
    outs = callback([_host(x) for x in operands])
    results = []
    for k, (out, aval) in enumerate(zip(outs, result_avals)):
        out = mx.array(np.asarray(out)).astype(aval.dtype)
        if tuple(out.shape) != tuple(aval.shape):
            raise ValueError(
                f"pure_callback: the callback returned an array of shape {tuple(out.shape)} "
                f"as result {k}, declared {format_aval(aval)} in result_shape_dtypes")
        results.append(out)
    return results


pure_callback_p = Primitive("pure_callback", _impl, multiple_results=True, needs_host=True)
pure_callback_p.def_abstract_eval(lambda *avals, result_avals, **params: list(result_avals))


def _not_differentiable(*args, **params):
    raise TypeError("pure_callback: the callback has no derivative, as in JAX; wrap the call "
                    "in ft.custom_jvp or ft.custom_vjp to give it one")


pure_callback_p.def_jvp(_not_differentiable)
pure_callback_p.def_vjp(_not_differentiable)


@pure_callback_p.def_batch
def _batch(vals, dims, axis_size, *, callback, result_avals, vmap_method):
    params = dict(callback=callback, result_avals=result_avals, vmap_method=vmap_method)
    if vmap_method is None:
        raise NotImplementedError(
            "pure_callback: vmap of a callback needs vmap_method ('sequential': one call per "
            "example; 'expand_dims' or 'broadcast_all': one call on the batch), as in JAX")
    if vmap_method == "sequential":
        rows = []
        for i in range(axis_size):
            picked = [v if d is None else lax.dynamic_index_in_dim(v, i, d, keepdims=False)
                      for v, d in zip(vals, dims)]
            rows.append(pure_callback_p.bind(*picked, **params))
        outs = [lax.concatenate([lax.expand_dims(r[k], (0,)) for r in rows], 0)
                for k in range(len(result_avals))]
        return outs, [0] * len(outs)
    # One call on the whole batch, its axis first: unbatched operands get a
    # length-1 axis there (expand_dims) or the full batch (broadcast_all).
    batched = []
    for v, d in zip(vals, dims):
        if d is not None:
            batched.append(move_bdim(v, d, 0, axis_size))
        elif vmap_method == "broadcast_all":
            batched.append(move_bdim(v, None, 0, axis_size))
        else:
            batched.append(lax.expand_dims(v, (0,)))
    avals = tuple(ShapeDtypeStruct((axis_size, *a.shape), a.dtype) for a in result_avals)
    outs = pure_callback_p.bind(*batched, **dict(params, result_avals=avals))
    return outs, [0] * len(outs)


def _result_aval(x: Any) -> ShapeDtypeStruct:
    if not (hasattr(x, "shape") and hasattr(x, "dtype")):
        raise TypeError(f"pure_callback: result_shape_dtypes must be a pytree of objects with "
                        f"shape and dtype (ft.ShapeDtypeStruct, arrays), got {x!r}")
    return ShapeDtypeStruct(tuple(x.shape), to_mlx_dtype(x.dtype, "pure_callback: dtype"))


def pure_callback(callback: Callable, result_shape_dtypes: Any, *args: Any,
                  sharding: None = None, vmap_method: str | None = None, **kwargs: Any) -> Any:
    """Call the host function ``callback(*args, **kwargs)`` on NumPy arrays
    from traced code (``jit``, ``vmap``, loops), as ``jax.pure_callback``.
    ``result_shape_dtypes`` is a pytree of ``ShapeDtypeStruct``s (or
    arrays) describing what it returns. ``vmap_method`` says how ``vmap``
    calls it: ``"sequential"`` once per example, ``"expand_dims"`` once on
    the batch (unbatched operands get a leading axis of length 1),
    ``"broadcast_all"`` once with every operand batched; ``None`` refuses.
    Not differentiable.

    >>> import ftorch as ft, mlx.core as mx, numpy as np
    >>> def host_median(x):
    ...     return ft.pure_callback(lambda a: np.median(a, axis=-1).astype(a.dtype),
    ...                             ft.ShapeDtypeStruct(x.shape[:-1], x.dtype), x,
    ...                             vmap_method="expand_dims")
    >>> ft.vmap(host_median)(mx.array([[1.0, 5.0, 2.0], [4.0, 3.0, 9.0]])).tolist()
    [2.0, 4.0]
    """
    api_util.check_callable(callback, "pure_callback")
    if sharding is not None:
        raise NotImplementedError("pure_callback: sharding is not supported (one device)")
    if vmap_method is not None and vmap_method not in VMAP_METHODS:
        raise ValueError(f"pure_callback: vmap_method must be one of {VMAP_METHODS} or None, "
                         f"got {vmap_method!r}")
    leaves, in_tree = api_util.flatten_arrays(args, "pure_callback argument")
    results = tree.flatten(result_shape_dtypes,
                           is_leaf=lambda x: isinstance(x, ShapeDtypeStruct))
    result_avals = tuple(_result_aval(r) for r in results[0])
    out_tree = results[1]

    def flat_callback(host_leaves: list) -> list:
        out = callback(*tree.unflatten(in_tree, host_leaves), **kwargs)
        out_leaves, got_tree = tree.flatten(out)
        if got_tree != out_tree:
            raise TypeError(f"pure_callback: the callback returned a result of structure "
                            f"{got_tree}, declared {out_tree} in result_shape_dtypes")
        return out_leaves

    outs = pure_callback_p.bind(*leaves, callback=flat_callback,
                                result_avals=result_avals, vmap_method=vmap_method)
    return tree.unflatten(out_tree, outs)


# ----------------------------------------------------------------------------
# debug_callback: a host call for its effect (ft.debug.print, .callback,
# .breakpoint), with no results
# ----------------------------------------------------------------------------


def _debug_impl(*operands, callback, ordered):
    callback([_host(x) for x in operands])
    return []


# It reads its operands on the host, so jit splits its graph there; having no
# results, the graph passes keep every one and run each at each call.
debug_callback_p = Primitive("debug_callback", _debug_impl, multiple_results=True,
                             needs_host=True)
debug_callback_p.def_abstract_eval(lambda *avals, **params: [])


@debug_callback_p.def_jvp
def _debug_jvp(primals, tangents, **params):
    # As JAX: the callback sees the primal values, in the forward pass only.
    debug_callback_p.bind(*primals, **params)
    return [], []


debug_callback_p.def_vjp(lambda cts, out, *primals, needed, **params: (None,) * len(primals))


@debug_callback_p.def_batch
def _debug_batch(vals, dims, axis_size, **params):
    # As JAX: called once per example, in order.
    for i in range(axis_size):
        debug_callback_p.bind(*[v if d is None else lax.dynamic_index_in_dim(v, i, d, False)
                                for v, d in zip(vals, dims)], **params)
    return [], []
