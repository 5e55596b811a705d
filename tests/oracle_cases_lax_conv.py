"""Oracle cases for ``jax.lax``'s convolutions, dot products and windowed reductions,
and ``jax.nn.dot_product_attention`` (tests/oracle.py): drawn layouts, strides,
dilations, paddings and groups."""

import numpy as np
from hypothesis import strategies as st
from oracle import Oracle, arrays

# ----------------------------------------------------------------------------
# Convolutions
# ----------------------------------------------------------------------------


def _per_axis(d, nd, lo, hi):
    return tuple(d(st.integers(lo, hi)) for _ in range(nd))


def _layouts(d, nd):
    """Three layout strings (lhs, rhs, out) with the spatial axes in drawn places, or None."""
    if d(st.booleans()):
        return None
    spatial = "HWD"[:nd]
    lhs = "".join(d(st.permutations("NC" + spatial)))
    rhs = "".join(d(st.permutations("OI" + spatial)))
    out = "".join(d(st.permutations("NC" + spatial)))
    return lhs, rhs, out


def _place(canonical: np.ndarray, spec: str, pair: str) -> np.ndarray:
    """``canonical`` (pair[0], pair[1], spatial...) transposed into the layout ``spec``."""
    order = list(pair) + [c for c in spec if c not in pair]
    return np.transpose(canonical, [order.index(c) for c in spec])


def _padding(d, nd, allow_negative=True):
    kind = d(st.sampled_from(["SAME", "VALID", "SAME_LOWER", "pairs"]))
    if kind != "pairs":
        return kind
    lo = -1 if allow_negative else 0
    return [(d(st.integers(lo, 2)), d(st.integers(lo, 2))) for _ in range(nd)]


def _conv_general_dilated(d):
    nd = d(st.integers(1, 3))
    groups = d(st.sampled_from([(1, 1), (2, 1), (1, 2)]))  # (feature, batch)
    fg, bg = groups
    c_group, o = d(st.integers(1, 2)), d(st.integers(1, 2)) * fg * bg
    n = d(st.integers(1, 2)) * bg
    kernel = _per_axis(d, nd, 1, 3)
    rhs_dilation = _per_axis(d, nd, 1, 2)
    lhs_dilation = _per_axis(d, nd, 1, 2)
    strides = _per_axis(d, nd, 1, 2)
    side = 3 if nd == 3 else 5
    spatial = tuple(d(st.integers((k - 1) * r + 1, (k - 1) * r + side))
                    for k, r in zip(kernel, rhs_dilation))
    x = d(arrays((n, c_group * fg, *spatial)))
    w = d(arrays((o, c_group, *kernel)))
    layouts = _layouts(d, nd)
    if layouts is not None:
        x, w = _place(x, layouts[0], "NC"), _place(w, layouts[1], "OI")
    padding = _padding(d, nd)
    if isinstance(padding, str) and max(lhs_dilation) > 1:  # JAX refuses the pair
        padding = [(1, 0)] * nd
    return (x, w, strides, padding), {
        "lhs_dilation": lhs_dilation, "rhs_dilation": rhs_dilation,
        "dimension_numbers": layouts, "feature_group_count": fg, "batch_group_count": bg}


def _conv(d):
    nd = d(st.integers(1, 2))
    kernel = _per_axis(d, nd, 1, 3)
    x = d(arrays((d(st.integers(1, 2)), 2, *(k + d(st.integers(0, 3)) for k in kernel))))
    w = d(arrays((d(st.integers(1, 3)), 2, *kernel)))
    return (x, w, _per_axis(d, nd, 1, 2), d(st.sampled_from(["SAME", "VALID"]))), {}


def _conv_with_general_padding(d):
    (x, w, strides, _), _ = _conv(d)
    nd = x.ndim - 2
    pads = [(d(st.integers(0, 2)), d(st.integers(0, 2))) for _ in range(nd)]
    return (x, w, strides, pads, _per_axis(d, nd, 1, 2), _per_axis(d, nd, 1, 2)), {}


def _conv_transpose(d):
    nd = d(st.integers(1, 2))
    kernel = _per_axis(d, nd, 1, 3)
    x = d(arrays((d(st.integers(1, 2)), *_per_axis(d, nd, 2, 4), 2)))
    transpose_kernel = d(st.booleans())
    o = d(st.integers(1, 3))
    # HWIO; with transpose_kernel, I and O swap before the convolution.
    w = d(arrays((*kernel, o, 2) if transpose_kernel else (*kernel, 2, o)))
    consistent = d(st.booleans())
    kind = d(st.sampled_from(["SAME", "VALID", "pairs"]))
    padding = kind if kind != "pairs" else [(d(st.integers(0, 1)), d(st.integers(0, 1)))
                                            for _ in range(nd)]
    return (x, w, _per_axis(d, nd, 1, 3), padding), {
        "rhs_dilation": _per_axis(d, nd, 1, 2), "transpose_kernel": transpose_kernel,
        "use_consistent_padding": consistent}


def _patches(d):
    nd = d(st.integers(1, 2))
    filt = _per_axis(d, nd, 1, 3)
    x = d(arrays((d(st.integers(1, 2)), d(st.integers(1, 2)),
                  *(k + d(st.integers(0, 2)) for k in filt))))
    layouts = _layouts(d, nd)
    if layouts is not None:
        x = _place(x, layouts[0], "NC")
    return (x, filt, _per_axis(d, nd, 1, 2), _padding(d, nd, allow_negative=False)), {
        "rhs_dilation": _per_axis(d, nd, 1, 2), "dimension_numbers": layouts}


def _local(d):
    nd = d(st.integers(1, 2))
    filt = _per_axis(d, nd, 1, 2)
    c, o = d(st.integers(1, 2)), d(st.integers(1, 2))
    spatial = tuple(k + d(st.integers(0, 2)) for k in filt)
    strides = _per_axis(d, nd, 1, 2)
    padding = _padding(d, nd, allow_negative=False)
    if isinstance(padding, str):
        padding = "VALID"  # output shape from the pairs below
    else:
        padding = [(lo, hi) for lo, hi in padding]
    pads = [(0, 0)] * nd if padding == "VALID" else padding
    out = tuple((n + lo + hi - k) // s + 1 for n, k, s, (lo, hi) in
                zip(spatial, filt, strides, pads))
    x = d(arrays((d(st.integers(1, 2)), c, *spatial)))
    w = d(arrays((o, c * int(np.prod(filt)), *out)))
    return (x, w, strides, padding, filt), {}


def _shapes(d):
    nd = d(st.integers(1, 2))
    lhs = (d(st.integers(1, 2)), 2, *_per_axis(d, nd, 3, 6))
    rhs = (3, 2, *_per_axis(d, nd, 1, 3))
    return lhs, rhs, _per_axis(d, nd, 1, 3)


def _conv_shape_tuple(d):
    lhs, rhs, strides = _shapes(d)
    pads = [(d(st.integers(0, 2)), d(st.integers(0, 2))) for _ in strides]
    return (lhs, rhs, strides, pads), {}


def _layout_shape_tuple(d):
    lhs, rhs, strides = _shapes(d)
    nd = len(strides)
    layouts = ("NHWC"[:1] + "HW"[:nd] + "C", "HW"[:nd] + "IO", "N" + "HW"[:nd] + "C")
    lhs, rhs = (lhs[0], *lhs[2:], lhs[1]), (*rhs[2:], rhs[1], rhs[0])
    return (lhs, rhs, strides, d(st.sampled_from(["SAME", "VALID"])), layouts), {}


def _padtype_to_pads(d):
    lhs, rhs, strides = _shapes(d)
    return (lhs[2:], rhs[2:], strides, d(st.sampled_from(["SAME", "VALID", "SAME_LOWER"]))), {}


CONV = [
    Oracle("jax.lax.conv_general_dilated", _conv_general_dilated, rtol=1e-4, atol=1e-4),
    Oracle("jax.lax.conv", _conv, rtol=1e-4, atol=1e-4),
    Oracle("jax.lax.conv_with_general_padding", _conv_with_general_padding, rtol=1e-4,
           atol=1e-4),
    Oracle("jax.lax.conv_transpose", _conv_transpose, rtol=1e-4, atol=1e-4),
    Oracle("jax.lax.conv_general_dilated_patches", _patches),
    Oracle("jax.lax.conv_general_dilated_local", _local, rtol=1e-4, atol=1e-4),
    Oracle("jax.lax.conv_dimension_numbers",
           lambda d: (((1, 2, 3, 4), (5, 2, 3, 3), d(st.sampled_from(
               [None, ("NHWC", "HWIO", "NHWC"), ("NCHW", "OIHW", "NCHW"),
                ("NWHC", "WHOI", "CNHW")]))), {}), grad=False),
    Oracle("jax.lax.conv_general_permutations",
           lambda d: ((d(st.sampled_from([("NHWC", "HWIO", "NCHW"), ("CWN", "OWI", "WNC"),
                                          ("NDHWC", "DWHIO", "NCDHW")])),), {}), grad=False),
    Oracle("jax.lax.conv_shape_tuple", _conv_shape_tuple, grad=False),
    Oracle("jax.lax.conv_general_shape_tuple", _layout_shape_tuple, grad=False),
    Oracle("jax.lax.conv_transpose_shape_tuple", _layout_shape_tuple, grad=False),
    Oracle("jax.lax.padtype_to_pads", _padtype_to_pads, grad=False),
]

ORACLE = [*CONV]

UNCHECKED = {
    "jax.lax.ConvDimensionNumbers": "a NamedTuple of specs: conv_dimension_numbers' case "
                                    "compares it, and conv_general_dilated's cases use it",
    "jax.lax.PaddingType": "an enum of the padding strings: padtype_to_pads' case covers them",
}


# ----------------------------------------------------------------------------
# Dot products
# ----------------------------------------------------------------------------


def _dot_general(d):
    """Operands with batch, contracting and free axes in drawn positions."""
    n_batch, n_contract = d(st.integers(0, 2)), d(st.integers(0, 2))
    n_lfree, n_rfree = d(st.integers(0, 2)), d(st.integers(0, 2))
    batch = [d(st.integers(1, 3)) for _ in range(n_batch)]
    contract = [d(st.integers(1, 3)) for _ in range(n_contract)]

    def operand(n_free):
        kinds = [("b", i) for i in range(n_batch)] + [("c", i) for i in range(n_contract)]
        kinds += [("f", i) for i in range(n_free)]
        order = d(st.permutations(kinds))
        sizes = {"b": batch, "c": contract}
        shape = tuple(sizes[k][i] if k in sizes else d(st.integers(1, 3)) for k, i in order)
        axes = {k: [order.index((k, i)) for i in range(len(sizes[k]))] for k in sizes}
        return d(arrays(shape)), axes

    (x, lx), (y, ly) = operand(n_lfree), operand(n_rfree)
    return (x, y, ((tuple(lx["c"]), tuple(ly["c"])), (tuple(lx["b"]), tuple(ly["b"])))), {}


def _dot(d):
    m, k, n = d(st.integers(1, 3)), d(st.integers(1, 3)), d(st.integers(1, 3))
    x = d(arrays(d(st.sampled_from([(k,), (m, k)]))))
    y = d(arrays(d(st.sampled_from([(k,), (k, n)]))))
    return (x, y), {}


def _batch_matmul(d):
    batch = tuple(d(st.integers(1, 3)) for _ in range(d(st.integers(0, 2))))
    m, k, n = d(st.integers(1, 3)), d(st.integers(1, 3)), d(st.integers(1, 3))
    return (d(arrays((*batch, m, k))), d(arrays((*batch, k, n)))), {}


def _ragged_dot(d):
    g, k, n = d(st.integers(1, 3)), d(st.integers(1, 3)), d(st.integers(1, 3))
    sizes = np.array([d(st.integers(0, 3)) for _ in range(g)], dtype=np.int32)
    m = int(sizes.sum()) + d(st.integers(0, 2))  # rows past the groups give zeros
    m = max(m, 1)
    return (d(arrays((m, k))), d(arrays((g, k, n))), sizes), {}


DOT = [
    Oracle("jax.lax.dot_general", _dot_general, rtol=1e-4, atol=1e-4),
    Oracle("jax.lax.dot_general", lambda d: (
        (d(arrays((2, 3), "int32")), d(arrays((3, 2), "int32")), (((1,), (0,)), ((), ()))),
        {"preferred_element_type": d(st.sampled_from([None, "float32"]))}), id="int32"),
    Oracle("jax.lax.dot", _dot, rtol=1e-4, atol=1e-4),
    Oracle("jax.lax.batch_matmul", _batch_matmul, rtol=1e-4, atol=1e-4),
    Oracle("jax.lax.ragged_dot", _ragged_dot, rtol=1e-4, atol=1e-4),
]

ORACLE += DOT
UNCHECKED["jax.lax.DotDimensionNumbers"] = "a type alias of tuples: dot_general's cases use it"


# ----------------------------------------------------------------------------
# Windowed and general reductions
# ----------------------------------------------------------------------------

_IDENTITY = {"add": 0.0, "mul": 1.0, "max": -np.inf, "min": np.inf}


def _computation(L, kind):
    """``kind``'s computation on one side: JAX's ``lax.mul`` is ftorch's ``lax.multiply``,
    and ``generic`` is a function neither side can recognise."""
    if kind == "generic":
        return lambda a, b: a + b
    if kind == "mul":
        return getattr(L.lax, "mul", None) or L.lax.multiply
    return getattr(L.lax, kind)


def _tied(d, shape):
    """Floats with many ties (small integers, no -0.0), so tie rules show."""
    return (np.round(d(arrays(shape, lo=-2.0, hi=2.0))) + 0.0).astype(np.float32)


def _reduce_window(kinds, identity=True):
    def args(d):
        kind = d(st.sampled_from(kinds))
        nd = d(st.integers(1, 3))
        shape = _per_axis(d, nd, 1, 5 if nd < 3 else 3)
        x = _tied(d, shape) if kind in ("max", "min") else d(arrays(shape))
        padding = d(st.sampled_from(["SAME", "VALID", "SAME_LOWER", "pairs"]))
        if padding == "pairs":
            padding = [(d(st.integers(0, 2)), d(st.integers(0, 2))) for _ in range(nd)]
        init = _IDENTITY.get(kind, 0.0) if identity else d(st.sampled_from([-1.0, 0.5, 2.0]))
        # JAX has no VJP of a windowed max or min with window dilation.
        window_dilation = (1,) * nd if kind in ("max", "min") and identity else _per_axis(
            d, nd, 1, 2)
        return (x, init, kind, _per_axis(d, nd, 1, 3), _per_axis(d, nd, 1, 2), padding,
                _per_axis(d, nd, 1, 2), window_dilation), {}
    return args


def _run_reduce_window(L, fn, x, init, kind, *rest):
    return fn(x, init, _computation(L, kind), *rest)


def _reduce(identity):
    def args(d):
        kind = d(st.sampled_from(["add", "mul", "max", "min", "generic"]))
        x = _tied(d, _per_axis(d, d(st.integers(0, 3)), 1, 4))
        dims = tuple(a for a in range(x.ndim) if d(st.booleans()))
        # XLA drops a reduction over length-1 axes, init and all: other inits only beyond.
        trivial = np.prod([x.shape[a] for a in dims]) == 1
        init = _IDENTITY.get(kind, 0.0) if identity or trivial else 0.5
        return (x, init, kind, dims), {}
    return args


def _run_reduce(L, fn, x, init, kind, dims):
    return fn(x, init, _computation(L, kind), dims)


def _reduce_pair(d):
    """Two operands reduced together: a sum and a running maximum (no ties: the
    association order picks among tied maxima)."""
    shape = _per_axis(d, d(st.integers(1, 3)), 1, 4)
    x = (np.array(d(st.permutations(range(int(np.prod(shape)))))) * 0.5).astype(np.float32)
    x = x.reshape(shape)
    dims = tuple(a for a in range(x.ndim) if d(st.booleans()))
    return (x, x * 2, dims), {}


def _top_k_args(d):
    x = _tied(d, _per_axis(d, d(st.integers(1, 3)), 1, 5))
    axis = d(st.integers(-x.ndim, x.ndim - 1))
    return (x, d(st.integers(1, x.shape[axis]))), {
        "reduction_dimension": axis, "aggregate_to_topk": d(st.booleans())}


WINDOWS = [
    Oracle("jax.lax.reduce_window", _reduce_window(["add", "max", "min"]),
           run=_run_reduce_window, rtol=1e-4, atol=1e-4, id="monoid"),
    Oracle("jax.lax.reduce_window", _reduce_window(["add", "max", "min", "mul", "generic"],
                                                   identity=False),
           run=_run_reduce_window, grad=False, rtol=1e-4, atol=1e-4, id="any init"),
    Oracle("jax.lax.reduce_window", _reduce_window(["mul", "generic"]),
           run=_run_reduce_window, grad=False, rtol=1e-4, atol=1e-4, id="mul, generic"),
    Oracle("jax.lax.reduce_window", lambda d: ((d(arrays((4, 5))), d(arrays((4, 5)))), {}),
           run=lambda L, fn, x, y: fn((x, y), (0.0, -np.inf),
                                      lambda a, b: (a[0] + b[0], L.numpy.maximum(a[1], b[1])),
                                      (2, 3), (1, 2), "SAME"),
           grad=False, rtol=1e-4, atol=1e-4, id="pytree"),
    Oracle("jax.lax.reduce_window_shape_tuple", lambda d: (
        (_per_axis(d, 2, 1, 6), _per_axis(d, 2, 1, 3), _per_axis(d, 2, 1, 2),
         [(d(st.integers(0, 2)), d(st.integers(0, 2))) for _ in range(2)],
         _per_axis(d, 2, 1, 2), _per_axis(d, 2, 1, 2)), {}), grad=False),
    Oracle("jax.lax.reduce", _reduce(identity=True), rtol=1e-4, atol=1e-4, run=_run_reduce),
    # JAX's VJP of a monoid ignores a non-identity init (d(0.5 * x * y)/dx = y, says it).
    Oracle("jax.lax.reduce", _reduce(identity=False), rtol=1e-4, atol=1e-4, run=_run_reduce,
           grad=False, id="any init"),
    Oracle("jax.lax.reduce", _reduce_pair, rtol=1e-4, atol=1e-4, id="pytree",
           run=lambda L, fn, x, y, dims: fn(
               (x, y), (0.0, -np.inf), lambda a, b: (a[0] + b[0], L.numpy.maximum(a[1], b[1])),
               dims)),
    Oracle("jax.lax.approx_max_k", _top_k_args),
    Oracle("jax.lax.approx_min_k", _top_k_args),
]

ORACLE += WINDOWS


# ----------------------------------------------------------------------------
# jax.nn.dot_product_attention
# ----------------------------------------------------------------------------


def _attention(d):
    b, t, s = d(st.integers(1, 2)), d(st.integers(1, 4)), d(st.integers(1, 4))
    kv_heads, group, h = d(st.integers(1, 2)), d(st.integers(1, 2)), d(st.integers(1, 4))
    batched = d(st.booleans())
    lead = (b,) if batched else ()
    q = d(arrays((*lead, t, kv_heads * group, h)))
    k = d(arrays((*lead, s, kv_heads, h)))
    v = d(arrays((*lead, s, kv_heads, h)))
    kwargs = {"is_causal": d(st.booleans()), "scale": d(st.sampled_from([None, 0.5]))}
    if d(st.booleans()):
        kwargs["bias"] = d(arrays((*lead, kv_heads * group, t, s)))
    if d(st.booleans()):
        kwargs["mask"] = d(arrays((*lead, 1, t, s), "bool"))
    if d(st.booleans()):
        kwargs["local_window_size"] = d(st.sampled_from([1, (0, 1), (2, 0)]))
    if batched and d(st.booleans()):
        kwargs["key_value_seq_lengths"] = np.array([d(st.integers(1, s)) for _ in range(b)],
                                                   np.int32)
    if batched and d(st.booleans()):
        kwargs["query_seq_lengths"] = np.array([d(st.integers(1, t)) for _ in range(b)],
                                               np.int32)
    return (q, k, v), kwargs


ORACLE += [Oracle("jax.nn.dot_product_attention", _attention, rtol=1e-4, atol=1e-4)]
