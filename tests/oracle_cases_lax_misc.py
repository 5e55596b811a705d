"""Oracle cases for ``jax.lax``'s elementwise, bit, structural and reduction names, its
collectives over named vmap axes, ``custom_root`` and ``custom_linear_solve``, the
top-level ``jax`` names and ``jax.tree`` / ``jax.tree_util`` (tests/oracle.py)."""

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from oracle import Oracle, arrays


def lax(name, *draws, grad=True, kwargs=None, **kw):
    """``jax.lax.<name>`` of arguments drawn by each of ``draws(d)``."""
    return Oracle(f"jax.lax.{name}",
                  lambda d: (tuple(f(d) for f in draws), kwargs(d) if kwargs else {}),
                  grad=grad, **kw)


def floats(shape=None, lo=-3.0, hi=3.0, **kw):
    return lambda d: d(arrays(shape, lo=lo, hi=hi, **kw))


def ints(shape=None, lo=-50, hi=50, dtype="int32", **kw):
    return lambda d: d(arrays(shape, dtype, lo=lo, hi=hi, **kw))


def pair(dtype="float32", lo=-3.0, hi=3.0, lo2=None, hi2=None, nonzero=False):
    """Two arrays of one shape (lax's binary ops do not broadcast)."""
    def draw(d):
        s = d(hnp.array_shapes(min_dims=0, max_dims=3, max_side=4))
        x = d(arrays(s, dtype, lo=lo, hi=hi))
        y = d(arrays(s, dtype, lo=lo if lo2 is None else lo2, hi=hi if hi2 is None else hi2))
        if nonzero:
            y = np.where(y == 0, 1, y).astype(y.dtype)
        return x, y
    return draw


def binary(name, **kw):
    grad = kw.pop("grad", True)
    rtol = kw.pop("rtol", 1e-5)
    return Oracle(f"jax.lax.{name}", lambda d: (pair(**kw)(d), {}), grad=grad, rtol=rtol)


def shape(d, min_dims=0, max_dims=3, min_side=1):
    return d(hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side,
                              max_side=4))


def axes_of(d, ndim):
    return tuple(sorted(d(st.sets(st.integers(0, ndim - 1), max_size=ndim)))) if ndim else ()


def with_axes(name, dtype="float32", lo=-3.0, hi=3.0, grad=True, distinct=False):
    def args(d):
        x = d(arrays(shape=shape(d), dtype=dtype, lo=lo, hi=hi))
        if distinct:  # no ties: max and min then have one derivative
            x = (np.argsort(np.argsort(x, axis=None)).reshape(x.shape) * 0.37 - 1.0
                 ).astype(np.float32)
        return (x, axes_of(d, x.ndim)), {}
    return Oracle(f"jax.lax.{name}", args, grad=grad)


def scan_along(name, lo=-3.0, hi=3.0, positive=False, distinct=False, **kw):
    def args(d):
        x = d(arrays(shape=shape(d, min_dims=1), lo=lo, hi=hi))
        if distinct:  # no ties: the running extremes then have one derivative
            x = (np.argsort(np.argsort(x, axis=None)).reshape(x.shape) * 0.37 - 1.0
                 ).astype(np.float32)
        if positive:
            x = np.abs(x) + 0.5
        axis = d(st.integers(0, x.ndim - 1))  # JAX's cumulative ops take no negative axes
        return (x,), {"axis": axis, "reverse": d(st.booleans())}
    return Oracle(f"jax.lax.{name}", args, **kw)


def _slice_args(d):
    x = d(arrays(shape=shape(d, min_dims=1)))
    start, limit, stride = [], [], []
    for n in x.shape:
        a = d(st.integers(0, n))
        start.append(a)
        limit.append(d(st.integers(a, n)))
        stride.append(d(st.integers(1, 3)))
    return (x, tuple(start), tuple(limit), tuple(stride)), {}


def _slice_in_dim_args(d):
    x = d(arrays(shape=shape(d, min_dims=1)))
    axis = d(st.integers(0, x.ndim - 1))
    n = x.shape[axis]
    start = d(st.integers(0, n))
    limit = d(st.integers(start, n))  # JAX refuses a limit before the start
    start = d(st.sampled_from([start, start - n, None] if start else [start, None]))
    limit = d(st.sampled_from([limit, limit - n, None] if limit < n else [limit, None]))
    return (x, start, limit, d(st.integers(1, 3)), axis), {}


def _index_in_dim_args(d):
    x = d(arrays(shape=shape(d, min_dims=1)))
    axis = d(st.integers(0, x.ndim - 1))
    n = x.shape[axis]
    return (x, d(st.integers(-n, n - 1)), axis, d(st.booleans())), {}


def _index_take_args(d):
    x = d(arrays(shape=shape(d, min_dims=2)))
    axes = tuple(d(st.lists(st.integers(0, x.ndim - 1), min_size=1, max_size=x.ndim,
                            unique=True)))
    n = d(st.integers(1, 4))
    idxs = tuple(d(arrays((n,), "int32", lo=0, hi=x.shape[a] - 1)) for a in axes)
    return (x, idxs, axes), {}


def _broadcast_in_dim_args(d):
    out = shape(d, min_dims=1)
    dims = tuple(sorted(d(st.sets(st.integers(0, len(out) - 1), max_size=len(out)))))
    in_shape = tuple(d(st.sampled_from([1, out[i]])) for i in dims)
    return (d(arrays(in_shape)), out, dims), {}


def _collapse_args(d):
    x = d(arrays(shape=shape(d, min_dims=1)))
    start = d(st.integers(0, x.ndim - 1))
    return (x, start, d(st.none() | st.integers(start + 1, x.ndim))), {}


def _tile_args(d):
    x = d(arrays(shape=shape(d)))
    return (x, tuple(d(st.integers(0, 3)) for _ in x.shape)), {}


def _stack_args(d):
    s = shape(d)
    xs = [d(arrays(s)) for _ in range(d(st.integers(1, 3)))]
    return (xs, d(st.integers(-len(s) - 1, len(s)))), {}


def _unstack_args(d):
    x = d(arrays(shape=shape(d, min_dims=1)))
    return (x, d(st.integers(-x.ndim, x.ndim - 1))), {}


def _rev_args(d):
    x = d(arrays(shape=shape(d)))
    return (x, axes_of(d, x.ndim)), {}


def _clamp_args(scalar_bounds):
    def args(d):
        x = d(arrays(shape=shape(d)))
        lo = d(arrays(() if scalar_bounds else x.shape, lo=-2.0, hi=0.0))
        hi = lo + d(arrays(lo.shape, lo=0.125, hi=2.0))
        return (lo, x, hi), {}
    return args


def _select_n_args(d):
    s = shape(d)
    n = d(st.integers(1, 3))
    cases = [d(arrays(s)) for _ in range(n)]
    which = d(arrays(s, "bool")) if n <= 2 and d(st.booleans()) else d(
        arrays(s, "int32", lo=0, hi=n - 1))
    return (which, *cases), {}


def _shift_args(d):
    s = shape(d)
    return (d(arrays(s, "int32", lo=-1000, hi=1000)), d(arrays(s, "int32", lo=-2, hi=40))), {}


def _reduce_precision_args(d):
    x = d(arrays(shape=shape(d), lo=-1e5, hi=1e5))
    return (x,), {"exponent_bits": d(st.integers(2, 8)), "mantissa_bits": d(st.integers(0, 23))}


def _bitcast_args(d):
    x = d(arrays(shape=shape(d)))
    return (x, d(st.sampled_from(["int32", "uint32", "uint8", "int16", "float16"]))), {}


def _broadcasted_iota_args(d):
    s = shape(d, min_dims=1)
    return (d(st.sampled_from(["int32", "float32"])), s, d(st.integers(0, len(s) - 1))), {}


def _broadcast_shapes_args(d):
    s1, s2 = d(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3)).input_shapes
    return (s1, s2), {}


def _mapped(d, extra_axis=False):
    """An operand to vmap over the axis "i" of size n, and n; with
    ``extra_axis``, each example has an axis of length n too."""
    n = d(st.integers(1, 4))
    rest = list(shape(d, max_dims=2))
    if extra_axis:
        rest.insert(d(st.integers(0, len(rest))), n)
    return d(arrays((n, *rest))), n


def _permutation(d, n):
    return list(d(st.permutations(range(n))))


def _ppermute_args(d):
    x, n = _mapped(d)
    return (x, "i", list(enumerate(_permutation(d, n)))), {}


def _pshuffle_args(d):
    x, n = _mapped(d)
    return (x, "i", _permutation(d, n)), {}


def _all_to_all_args(d):
    x, n = _mapped(d, extra_axis=True)
    split = [a for a, m in enumerate(x.shape[1:]) if m == n][0]
    return (x, "i", split, d(st.integers(0, x.ndim - 2))), {}


def _pswapaxes_args(d):
    x, n = _mapped(d, extra_axis=True)
    return (x, "i", [a for a, m in enumerate(x.shape[1:]) if m == n][0]), {}


def _over_axis(L, fn, x, name, *args):
    return L.jax.vmap(lambda r: fn(r, name, *args), axis_name=name)(x)


def _spd_system(d):
    """A symmetric positive definite matrix and a right-hand side."""
    n = d(st.integers(1, 4))
    m = d(arrays((n, n)))
    return (m @ m.T + n * np.eye(n, dtype=np.float32)).astype(np.float32), d(arrays((n,)))


def _conjugate_gradient(L, steps=8):
    """CG with a fixed number of steps, in either library's numpy."""
    def cg(matvec, b):
        x = L.numpy.zeros_like(b)
        r = p = b
        for _ in range(steps):
            rr = L.numpy.sum(r * r)
            ap = matvec(p)
            alpha = rr / (L.numpy.sum(p * ap) + 1e-30)
            x, r = x + alpha * p, r - alpha * ap
            p = r + L.numpy.sum(r * r) / (rr + 1e-30) * p
        return x
    return cg


def _solve_by_cg(L, fn, a, b):
    return fn(lambda x: a @ x, b, _conjugate_gradient(L), symmetric=True)


def _solve_general(L, fn, a, b):
    a = a + L.numpy.triu(a, 1)  # not symmetric
    return fn(lambda x: a @ x, b, lambda mv, r: L.numpy.linalg.solve(a, r),
              lambda vm, r: L.numpy.linalg.solve(a.T, r))


def _newton(L, steps=30):
    def solve(f, x):
        for _ in range(steps):
            x = x - f(x) / L.jax.grad(f)(x)
        return x
    return solve


def _cube_root(L, fn, a, c):
    """The root of x^3 + c x - a (increasing in x for c > 0)."""
    return fn(lambda x: x ** 3 + c * x - a, L.numpy.zeros_like(a), _newton(L),
              lambda g, y: y / g(1.0))


def _root_of_system(L, fn, a, b):
    """The root of a x + 0.1 tanh(x) - b, a vector, by Newton on the system."""
    def f(x):
        return a @ x + 0.1 * L.numpy.tanh(x) - b

    def solve(f, x):
        for _ in range(20):
            x = x - L.numpy.linalg.solve(L.jax.jacfwd(f)(x), f(x))
        return x

    def tangent_solve(g, y):
        return L.numpy.linalg.solve(L.jax.jacfwd(g)(y), y)
    return fn(f, L.numpy.zeros_like(b), solve, tangent_solve)


def _nest(d):
    """A nest of dicts, tuples and lists of arrays."""
    return (({"w": d(arrays()), "b": [d(arrays()), d(arrays())]}, (d(arrays()),)),), {}


_TREE_RUNS = {
    "map": lambda L, fn, t: fn(lambda x, y: x * 2 + y, t, t),
    "leaves": lambda L, fn, t: fn(t),
    "flatten": lambda L, fn, t: fn(t)[0],
    "reduce": lambda L, fn, t: fn(lambda a, x: a + L.numpy.sum(x), t, 0.0),
    "reduce_associative": lambda L, fn, t: fn(lambda a, b: L.numpy.sum(a) + L.numpy.sum(b), t),
    "all": lambda L, fn, t: L.numpy.asarray(fn(L.tree.map(lambda x: x.size > 0, t))),
    "map_with_path": lambda L, fn, t: fn(lambda path, x: x * len(path), t),
    "transpose": lambda L, fn, t: fn(L.tree.structure([0, 0]), None,
                                     [t[0]["b"], (t[0]["w"], t[1][0])]),
}

def _vector(d, n=3):
    return d(arrays((n,)))


def _custom_gradient(L, fn, x):
    f = fn(lambda x: (L.numpy.sin(x), lambda g: (g * 2.0 * L.numpy.cos(x),)))
    return f(x)


def _closure_convert(L, fn, w, y):
    converted, consts = fn(lambda v: L.numpy.sin(v * w), y)
    return converted(y, *consts)


def _fwd_and_bwd(L, fn, x, w):
    fwd, bwd = fn(lambda x, w: L.numpy.sum(L.numpy.sin(x * w)), argnums=(0, 1))
    y, residuals = fwd(x, w)
    return y, bwd(residuals, L.numpy.ones(()))


def _host_sin(L, fn, x):
    return fn(lambda a: np.sin(a).astype(a.dtype), L.jax.ShapeDtypeStruct(x.shape, x.dtype), x)


ORACLE = [
    *[lax(n, floats(lo=lo, hi=hi)) for n, lo, hi in [
        ("acos", -0.9, 0.9), ("asin", -0.9, 0.9), ("atan", -3.0, 3.0), ("acosh", 1.1, 4.0),
        ("asinh", -3.0, 3.0), ("atanh", -0.9, 0.9), ("exp2", -3.0, 3.0),
        ("logistic", -3.0, 3.0), ("neg", -3.0, 3.0)]],
    lax("cbrt", floats(lo=0.1, hi=30.0)),
    lax("cbrt", lambda d: np.asarray(-d(arrays(lo=0.1, hi=30.0))), id="negative"),
    lax("is_finite", lambda d: np.array([1.0, np.inf, -np.inf, np.nan], np.float32), grad=False),
    Oracle("jax.lax.integer_pow", lambda d: ((d(arrays(lo=0.3, hi=2.0)),),
                                             {"y": d(st.integers(-3, 4))})),
    Oracle("jax.lax.integer_pow", lambda d: ((d(arrays(dtype="int32", lo=-5, hi=5)),),
                                             {"y": d(st.integers(0, 4))}), id="int"),
    binary("atan2"), binary("sub"), binary("mul"), binary("pow", lo=0.2, hi=3.0),
    binary("div", lo2=0.5, hi2=3.0),
    binary("div", dtype="int32", lo=-50, hi=50, nonzero=True, grad=False),
    binary("rem", dtype="int32", lo=-50, hi=50, nonzero=True, grad=False),
    binary("rem", lo2=0.5, hi2=3.0),
    *[binary(n, grad=False) for n in ["eq", "ne", "lt", "le", "gt", "ge"]],
    *[binary(n, dtype="int32", lo=-3, hi=3, grad=False) for n in ["eq", "lt", "ge"]],
    binary("nextafter", grad=False),
    binary("mulhi", dtype="int32", lo=-(2 ** 31), hi=2 ** 31 - 1, grad=False),
    binary("mulhi", dtype="uint32", lo=0, hi=2 ** 32 - 1, grad=False),
    lax("bitwise_not", ints()), lax("bitwise_not", lambda d: d(arrays(dtype="bool")), id="bool"),
    lax("population_count", ints(lo=-(2 ** 31), hi=2 ** 31 - 1)),
    lax("population_count", ints(lo=0, hi=255, dtype="uint8"), id="uint8"),
    lax("clz", ints(lo=-(2 ** 31), hi=2 ** 31 - 1)),
    lax("clz", ints(lo=0, hi=2 ** 16 - 1, dtype="uint16"), id="uint16"),
    Oracle("jax.lax.shift_left", _shift_args, grad=False),
    Oracle("jax.lax.shift_right_arithmetic", _shift_args, grad=False),
    Oracle("jax.lax.shift_right_logical", _shift_args, grad=False),
    Oracle("jax.lax.bitcast_convert_type", _bitcast_args, grad=False),
    Oracle("jax.lax.convert_element_type",
           lambda d: ((d(arrays(lo=-100, hi=100)), d(st.sampled_from(["int32", "float16",
                                                                      "bool"]))), {}),
           grad=False),
    Oracle("jax.lax.convert_element_type",
           lambda d: ((d(arrays(dtype="int32", lo=0, hi=255)), "uint8"), {}), id="uint8"),
    Oracle("jax.lax.convert_element_type",
           lambda d: ((d(arrays()), "float32"), {}), id="float"),
    Oracle("jax.lax.reduce_precision", _reduce_precision_args),
    Oracle("jax.lax.clamp", _clamp_args(False)),
    # JAX's VJP fails for scalar bounds of an array x (its transpose's select).
    Oracle("jax.lax.clamp", _clamp_args(True), grad=False, id="scalar_bounds"),
    Oracle("jax.lax.select_n", _select_n_args),
    Oracle("jax.lax.broadcast", lambda d: ((d(arrays()), shape(d, max_dims=2)), {})),
    Oracle("jax.lax.broadcast_in_dim", _broadcast_in_dim_args),
    Oracle("jax.lax.broadcast_to_rank",
           lambda d: ((d(arrays(max_dims=2)), d(st.integers(0, 4))), {})),
    Oracle("jax.lax.broadcast_shapes", _broadcast_shapes_args, grad=False),
    Oracle("jax.lax.broadcasted_iota", _broadcasted_iota_args, grad=False),
    Oracle("jax.lax.iota",
           lambda d: ((d(st.sampled_from(["int32", "float32"])), d(st.integers(0, 5))), {}),
           grad=False),
    Oracle("jax.lax.collapse", _collapse_args),
    Oracle("jax.lax.rev", _rev_args),
    Oracle("jax.lax.slice", _slice_args),
    Oracle("jax.lax.slice_in_dim", _slice_in_dim_args),
    Oracle("jax.lax.index_in_dim", _index_in_dim_args),
    Oracle("jax.lax.index_take", _index_take_args),
    Oracle("jax.lax.tile", _tile_args),
    Oracle("jax.lax.stack", _stack_args),
    Oracle("jax.lax.unstack", _unstack_args),
    with_axes("reduce_sum"), with_axes("reduce_prod", lo=0.5, hi=1.5),
    with_axes("reduce_max", distinct=True), with_axes("reduce_min", distinct=True),
    *[with_axes(n, dtype="int32", lo=-(2 ** 31), hi=2 ** 31 - 1, grad=False)
      for n in ["reduce_and", "reduce_or", "reduce_xor"]],
    *[Oracle(f"jax.lax.{n}", lambda d: ((d(arrays(shape=shape(d), dtype="bool")),), {}),
             grad=False, id="bool",
             run=lambda L, fn, x: fn(x, tuple(range(x.ndim))))
      for n in ["reduce_and", "reduce_or", "reduce_xor"]],
    scan_along("cumlogsumexp", lo=-30.0, hi=30.0),
    scan_along("cumsum"), scan_along("cumprod", positive=True),
    scan_along("cummax", distinct=True), scan_along("cummin", distinct=True),
    Oracle("jax.lax.empty", lambda d: ((shape(d), "float32"), {}), values=False),
    # Collectives, inside vmap(axis_name="i"); JAX's vmap takes only full permutations
    # and untiled all_to_all (tests/test_named_axes.py checks the others).
    Oracle("jax.lax.ppermute", _ppermute_args, run=_over_axis),
    Oracle("jax.lax.pshuffle", _pshuffle_args, run=_over_axis),
    Oracle("jax.lax.all_to_all", _all_to_all_args, run=_over_axis),
    Oracle("jax.lax.pswapaxes", _pswapaxes_args, run=_over_axis),
    Oracle("jax.lax.custom_linear_solve", lambda d: (_spd_system(d), {}), run=_solve_by_cg,
           rtol=1e-4, atol=1e-4),
    Oracle("jax.lax.custom_linear_solve", lambda d: (_spd_system(d), {}), run=_solve_general,
           rtol=1e-4, atol=1e-4, id="transpose_solve"),
    Oracle("jax.lax.custom_root",
           lambda d: ((d(arrays(shape=(), lo=-3.0, hi=3.0)), d(arrays(shape=(), lo=0.5, hi=2.0))),
                      {}), run=_cube_root, rtol=1e-4, atol=1e-4),
    Oracle("jax.lax.custom_root", lambda d: (_spd_system(d), {}), run=_root_of_system,
           rtol=1e-4, atol=1e-4, id="system"),
    *[Oracle(f"{module}.{prefix}{name}", _nest, run=run)
      for name, run in _TREE_RUNS.items()
      for module, prefix in (("jax.tree", ""), ("jax.tree_util", "tree_"))],
    # Top-level names.
    Oracle("jax.jacobian", lambda d: ((_vector(d),), {}),
           run=lambda L, fn, x: fn(lambda x: L.numpy.sin(x) * L.numpy.sum(x))(x)),
    Oracle("jax.linear_transpose", lambda d: ((d(arrays((2, 3))), _vector(d, 2)), {}),
           run=lambda L, fn, a, ct: fn(lambda x: a @ x, L.numpy.zeros(3))(ct)),
    Oracle("jax.custom_gradient", lambda d: ((_vector(d),), {}), run=_custom_gradient),
    Oracle("jax.closure_convert", lambda d: ((_vector(d), _vector(d)), {}),
           run=_closure_convert),
    Oracle("jax.fwd_and_bwd", lambda d: ((_vector(d), _vector(d)), {}), run=_fwd_and_bwd,
           grad=False),
    Oracle("jax.pure_callback", lambda d: ((d(arrays()),), {}), run=_host_sin, grad=False),
    Oracle("jax.named_call", lambda d: ((_vector(d),), {}),
           run=lambda L, fn, x: fn(L.numpy.sin, name="sine")(x)),
    Oracle("jax.block_until_ready", lambda d: (({"a": d(arrays())},), {})),
    Oracle("jax.device_put", lambda d: ((d(arrays()),), {})),
    # A host transfer: it refuses traced values (JAX's batches them).
    Oracle("jax.device_get", lambda d: (({"a": d(arrays())},), {}), grad=False, batch=False),
    Oracle("jax.lax.broadcast_like",
           lambda d: ((d(arrays((3,))), d(arrays(shape=(d(st.integers(1, 3)), 3)))), {})),
    Oracle("jax.lax.batch_matmul",
           lambda d: ((d(arrays((2, 3, 4))), d(arrays((2, 4, 2)))), {}), rtol=1e-4, atol=1e-4),
    Oracle("jax.lax.shape_as_value", lambda d: ((shape(d),), {}), grad=False),
    Oracle("jax.lax.rng_uniform",
           lambda d: ((np.array(0.0, np.float32), np.array(1.0, np.float32), shape(d)), {}),
           values=False),
    Oracle("jax.lax.rng_bit_generator",
           lambda d: ((np.zeros(4, np.uint32), shape(d)),
                      {"dtype": d(st.sampled_from([np.uint8, np.uint32]))}), values=False),
    Oracle("jax.lax.axis_size", lambda d: ((_mapped(d)[0],), {}),
           run=lambda L, fn, x: L.jax.vmap(lambda r: r * fn("i"), axis_name="i")(x)),
]

_TREE_TESTS = "structures and registration, not array functions: tests/test_tree.py"

_RUNTIME_TESTS = "not an array function (devices, settings, caches): tests/test_runtime.py"

UNCHECKED = {
    **{f"jax.{n}": _RUNTIME_TESTS for n in [
        "clear_caches", "default_backend", "default_device", "device_count", "devices",
        "disable_jit", "ensure_compile_time_eval", "local_device_count", "local_devices",
        "log_compiles", "named_scope", "print_environment_info", "process_count",
        "process_index", "process_indices"]},
    "jax.make_jaxpr": "returns ftorch's graph IR, not a jaxpr: tests/test_runtime.py",
    "jax.typeof": "returns a ShapeDtypeStruct, not JAX's ShapedArray: tests/test_runtime.py",
    **{f"jax.tree.{n}": _TREE_TESTS for n in [
        "broadcast", "flatten_with_path", "leaves_with_path", "static", "structure",
        "unflatten"]},
    **{f"jax.tree_util.{n}": _TREE_TESTS for n in [
        "DictKey", "FlattenedIndexKey", "GetAttrKey", "KeyEntry", "KeyPath", "Partial",
        "PyTreeDef", "SequenceKey", "all_leaves", "flatten_one_level",
        "flatten_one_level_with_keys", "is_tree_node", "keystr", "register_dataclass",
        "register_pytree_node", "register_pytree_node_class", "register_pytree_with_keys",
        "register_pytree_with_keys_class", "register_static", "tree_broadcast",
        "tree_flatten_with_path", "tree_leaves_with_path", "tree_structure",
        "tree_unflatten", "treedef_children", "treedef_is_leaf", "treedef_tuple"]},
    "jax.lax.dtype": "returns a dtype, not an array: tests/test_lax_misc.py",
    "jax.lax.scatter_sub": "takes ftorch's indexing spec, not XLA's dimension numbers "
                           "(docs/hooks.py): tests/test_lax_misc.py",
    "jax.lax.scatter_apply": "takes ftorch's indexing spec, not XLA's dimension numbers "
                             "(docs/hooks.py): tests/test_lax_misc.py",
}
