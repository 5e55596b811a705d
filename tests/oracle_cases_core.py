"""Oracle cases for the names ftorch has had from the start outside ``jax.numpy``: the
transforms, ``jax.tree``, FFTs, ``jax.nn``, special functions,
``jax.scipy.stats.norm``, ``jax.random`` and ``jax.lax`` (tests/oracle.py)."""

import numpy as np
from hypothesis import strategies as st
from oracle import Oracle, arrays
from oracle_cases_numpy_core import axis_of, shape, unary


def one(d, **kw):
    """A drawn float32 array, any shape."""
    return d(arrays(**kw))


def _loss(L, x):
    return L.numpy.sum(L.numpy.sin(x) * x)


def _square_matrix(d, n=None):
    n = n or d(st.integers(1, 4))
    return d(arrays((n, n)))


# The transforms, on one smooth function.
TRANSFORMS = [
    Oracle("jax.grad", lambda d: ((one(d, shape=(3,)),), {}),
           run=lambda L, fn, x: fn(lambda x: _loss(L, x))(x)),
    Oracle("jax.value_and_grad", lambda d: ((one(d, shape=(3,)),), {}),
           run=lambda L, fn, x: fn(lambda x: _loss(L, x))(x)),
    Oracle("jax.vjp", lambda d: ((one(d, shape=(3,)), one(d, shape=(3,))), {}),
           run=lambda L, fn, x, c: fn(lambda x: L.numpy.sin(x) * x, x)[1](c)),
    Oracle("jax.jvp", lambda d: ((one(d, shape=(3,)), one(d, shape=(3,))), {}),
           run=lambda L, fn, x, t: fn(lambda x: L.numpy.sin(x) * x, (x,), (t,))),
    Oracle("jax.linearize", lambda d: ((one(d, shape=(3,)), one(d, shape=(3,))), {}),
           run=lambda L, fn, x, t: fn(lambda x: L.numpy.sin(x) * x, x)[1](t)),
    *[Oracle(f"jax.{n}", lambda d: ((one(d, shape=(3,)),), {}),
             run=lambda L, fn, x: fn(lambda x: L.numpy.sin(x) * x[::-1])(x))
      for n in ["jacfwd", "jacrev"]],
    Oracle("jax.hessian", lambda d: ((one(d, shape=(3,)),), {}),
           run=lambda L, fn, x: fn(lambda x: _loss(L, x))(x)),
    Oracle("jax.vmap", lambda d: ((one(d, shape=(4, 3)), one(d, shape=(3,))), {}),
           run=lambda L, fn, x, y: fn(lambda a, b: L.numpy.dot(a, b) * a, in_axes=(0, None))(
               x, y)),
    Oracle("jax.jit", lambda d: ((one(d, shape=(3,)),), {}),
           run=lambda L, fn, x: fn(lambda x: L.numpy.tanh(x) * 2.0)(x)),
    *[Oracle(f"jax.{n}", lambda d: ((one(d, shape=(3,)),), {}),
             run=lambda L, fn, x: L.jax.grad(lambda x: L.numpy.sum(fn(L.numpy.sin)(x)))(x))
      for n in ["checkpoint", "remat"]],
    Oracle("jax.eval_shape", lambda d: ((one(d, shape=(2, 3)),), {}), grad=False,
           run=lambda L, fn, x: L.numpy.zeros(fn(lambda x: x.T @ x, x).shape)),
    Oracle("jax.custom_jvp", lambda d: ((one(d, shape=(3,)),), {}),
           run=lambda L, fn, x: L.jax.grad(lambda x: L.numpy.sum(_clipped_jvp(L, fn)(x)))(x)),
    Oracle("jax.custom_vjp", lambda d: ((one(d, shape=(3,)),), {}),
           run=lambda L, fn, x: L.jax.grad(lambda x: L.numpy.sum(_clipped_vjp(L, fn)(x)))(x)),
]


def _clipped_jvp(L, custom_jvp):
    @custom_jvp
    def f(x):
        return L.numpy.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return L.numpy.sin(x), L.numpy.cos(x) * t * 3.0

    return f


def _clipped_vjp(L, custom_vjp):
    @custom_vjp
    def f(x):
        return L.numpy.sin(x)

    f.defvjp(lambda x: (L.numpy.sin(x), x), lambda x, g: (g * x * 2.0,))
    return f


TREE = [
    Oracle(f"jax.tree.{n}", lambda d: ((one(d, shape=(2,)), one(d, shape=(3,))), {}),
           run=run, grad=False)
    for n, run in [
        ("map", lambda L, fn, a, b: fn(lambda x, y: x * 2, {"a": a, "b": [b]}, {"a": a, "b": [b]})),
        ("leaves", lambda L, fn, a, b: fn({"b": (a, None), "a": [b]})),
        ("flatten", lambda L, fn, a, b: fn({"b": (a, None), "a": [b]})[0]),
        ("unflatten", lambda L, fn, a, b: fn(L.tree.structure({"x": a, "y": [b, b]}),
                                             [b, a, a])),
        ("structure", lambda L, fn, a, b: L.tree.unflatten(fn({"x": a, "y": (b,)}), [b, a])),
        ("leaves_with_path", lambda L, fn, a, b: [v for _, v in fn({"x": a, "y": [b]})]),
        ("flatten_with_path", lambda L, fn, a, b: [v for _, v in fn({"x": a, "y": [b]})[0]]),
        ("map_with_path", lambda L, fn, a, b: fn(lambda p, v: v * len(p), {"x": a, "y": [b]})),
        ("broadcast", lambda L, fn, a, b: fn(a, {"x": 0, "y": (1, 2)})),
    ]
]


def _fft(name, real=False, n_axes=1, **kw):
    def args(d):
        x = d(arrays(shape=shape(d, min_dims=n_axes, max_dims=3, min_side=2),
                     dtype="float32" if real else "complex64"))
        return (x,), kw
    return Oracle(f"jax.numpy.fft.{name}", args, grad=False, rtol=1e-4, atol=1e-4)


FFT = [
    *[_fft(n) for n in ["fft", "ifft", "hfft", "irfft"]],
    *[_fft(n, n_axes=2) for n in ["fft2", "ifft2", "fftn", "ifftn", "irfft2", "irfftn"]],
    *[_fft(n, real=True) for n in ["rfft", "ihfft"]],
    *[_fft(n, real=True, n_axes=2) for n in ["rfft2", "rfftn"]],
    Oracle("jax.numpy.fft.fftfreq", lambda d: ((d(st.integers(1, 7)),), {"d": 0.5}), grad=False),
    Oracle("jax.numpy.fft.rfftfreq", lambda d: ((d(st.integers(1, 7)),), {"d": 0.5}),
           grad=False),
    *[Oracle(f"jax.numpy.fft.{n}", lambda d: ((one(d, min_dims=1),), {})) for n in
      ["fftshift", "ifftshift"]],
]


def _nn(name, lo=-3.0, hi=3.0, **kw):
    return Oracle(f"jax.nn.{name}", lambda d: ((one(d, lo=lo, hi=hi),), kw))


def _off_kinks(x):
    """Values at least 0.05 from the kinks at 0, ±1, ±3 and 6 of the piecewise activations."""
    for kink in (0.0, 1.0, -1.0, 3.0, -3.0, 6.0):
        near = np.abs(x - kink) < 0.05
        x = np.where(near, kink + 0.1, x)
    return x.astype(np.float32)


NN = [
    *[_nn(n) for n in ["sigmoid", "softplus", "silu", "tanh", "log_sigmoid", "mish", "celu",
                       "elu", "selu"]],
    *[Oracle(f"jax.nn.{n}", lambda d: ((d(arrays(lo=-8, hi=8).map(_off_kinks)),), {}))
      for n in ["relu", "relu6", "hard_sigmoid", "hard_swish", "hard_tanh", "leaky_relu"]],
    Oracle("jax.nn.gelu", lambda d: ((one(d),), {"approximate": d(st.booleans())})),
    Oracle("jax.nn.glu", lambda d: ((d(arrays((2, 4))),), {"axis": d(st.sampled_from([0, -1]))})),
    *[Oracle(f"jax.nn.{n}", lambda d: ((x := one(d, min_dims=1),),
                                       {"axis": axis_of(d, x.ndim)}))
      for n in ["softmax", "log_softmax", "logsumexp"]],
    Oracle("jax.nn.one_hot", lambda d: ((d(arrays(shape(d, max_dims=2), "int32", lo=-1, hi=4)),
                                         5), {}), grad=False),
]


SPECIAL = [
    *[unary(n, module="jax.scipy.special", rtol=1e-4, atol=1e-5, lo=lo, hi=hi)
      for n, lo, hi in [("erf", -3, 3), ("erfc", -3, 3), ("erfinv", -0.9, 0.9),
                        ("expit", -5, 5), ("logit", 0.05, 0.95), ("gammaln", 0.2, 8),
                        ("digamma", 0.3, 8), ("gamma", 0.2, 4), ("i0", 0.1, 3), ("i0e", 0.1, 3),
                        ("i1", -3, 3), ("i1e", -3, 3), ("ndtr", -4, 4), ("ndtri", 0.02, 0.98),
                        ("log_ndtr", -8, 4), ("entr", 0.05, 3)]],
    unary("gammasgn", module="jax.scipy.special", lo=-3.5, hi=3.5, grad=False),
    *[Oracle(f"jax.scipy.special.{n}", lambda d: ((one(d, shape=(3,), lo=0.2, hi=4),
                                                   one(d, shape=(3,), lo=0.2, hi=4)), {}),
             rtol=1e-4, atol=1e-5)
      for n in ["beta", "betaln", "xlogy", "xlog1py", "kl_div", "rel_entr"]],
    Oracle("jax.scipy.special.polygamma",
           lambda d: ((d(st.integers(0, 3)), one(d, shape=(3,), lo=0.5, hi=5)), {}),
           rtol=1e-4, atol=1e-4),
    Oracle("jax.scipy.special.multigammaln",
           lambda d: ((one(d, shape=(3,), lo=2.0, hi=6), d(st.integers(1, 3))), {}),
           rtol=1e-4, atol=1e-4),
    *[Oracle(f"jax.scipy.special.{n}", lambda d: ((x := one(d, min_dims=1),),
                                                  {"axis": axis_of(d, x.ndim)}))
      for n in ["softmax", "log_softmax", "logsumexp"]],
]


NORM = [
    *[Oracle(f"jax.scipy.stats.norm.{n}",
             lambda d: ((one(d, shape=(3,)), one(d, shape=(3,)), one(d, shape=(), lo=0.5, hi=2)),
                        {}), rtol=1e-4, atol=1e-5)
      for n in ["pdf", "logpdf", "cdf", "logcdf", "sf", "logsf"]],
    *[Oracle(f"jax.scipy.stats.norm.{n}",
             lambda d: ((one(d, shape=(3,), lo=0.05, hi=0.95), one(d, shape=(3,)),
                         one(d, shape=(), lo=0.5, hi=2)), {}), rtol=1e-4, atol=1e-4)
      for n in ["ppf", "isf"]],
]


def _key(d):
    return np.array([0, d(st.integers(0, 1000))], dtype=np.uint32)


def _sampler(name, extra=(), kwargs=None, **kw):
    """A sampler: shapes and dtypes only (the numbers are MLX's, not JAX's)."""
    return Oracle(f"jax.random.{name}", lambda d: ((_key(d), *extra), dict(kwargs or {})),
                  values=False, grad=False, **kw)


RANDOM = [
    *[_sampler(n, ((2, 3),)) for n in ["normal", "uniform", "gumbel", "exponential", "bits"]],
    _sampler("bernoulli", (0.3, (2, 3))), _sampler("randint", ((2, 3), 0, 5)),
    _sampler("categorical", (np.zeros((2, 4), np.float32),)),
    _sampler("choice", (5, (3,))), _sampler("permutation", (5,)),
    _sampler("truncated_normal", (-1.0, 1.0, (2, 3))),
    _sampler("multivariate_normal", (np.zeros(2, np.float32), np.eye(2, dtype=np.float32))),
    _sampler("split", (), run=lambda L, fn, k: fn(k, 3)),
    Oracle("jax.random.fold_in", lambda d: ((_key(d), d(st.integers(0, 2 ** 31 - 1))), {}),
           grad=False),
    Oracle("jax.random.PRNGKey", lambda d: ((d(st.integers(0, 2 ** 31 - 1)),), {}), grad=False),
    Oracle("jax.random.key", lambda d: ((d(st.integers(0, 2 ** 31 - 1)),), {}), grad=False,
           run=lambda L, fn, s: L.random.key_data(fn(s)) if hasattr(L.random, "key_data")
           else fn(s)),
]


def _lax_unary(name, lo=-3.0, hi=3.0, **kw):
    return unary(name, lo=lo, hi=hi, module="jax.lax", **kw)


def _lax_binary(name, **kw):
    return Oracle(f"jax.lax.{name}", lambda d: ((x := one(d), d(arrays(x.shape))), {}), **kw)


LAX = [
    *[_lax_unary(n) for n in ["sin", "cos", "tan", "sinh", "cosh", "tanh", "exp", "expm1",
                              "erf", "square", "stop_gradient"]],
    *[_lax_unary(n, dtype="complex64", grad=False) for n in ["real", "imag", "conj"]],
    *[_lax_unary(n, grad=False) for n in ["sign", "floor", "ceil"]],
    _lax_unary("abs", draws=arrays().map(lambda x: np.where(np.abs(x) < 0.1, 0.5, x)
                                         .astype(np.float32))),
    *[_lax_unary(n, lo=0.1, hi=5) for n in ["log", "sqrt", "rsqrt", "reciprocal", "lgamma",
                                            "digamma", "erfc", "bessel_i0e", "bessel_i1e"]],
    _lax_unary("log1p", lo=-0.5, hi=5),
    _lax_unary("round", grad=False),
    *[_lax_binary(n) for n in ["add", "complex"]],
    *[Oracle(f"jax.lax.{n}", lambda d: ((x := d(arrays(shape(d), "int32", lo=-9, hi=9)),
                                         d(arrays(x.shape, "int32", lo=-9, hi=9))), {}))
      for n in ["bitwise_and", "bitwise_or", "bitwise_xor"]],
    Oracle("jax.lax.polygamma", lambda d: ((np.float32(d(st.integers(0, 2))),
                                            one(d, shape=(3,), lo=0.5, hi=5)), {}), rtol=1e-4),
    Oracle("jax.lax.select", lambda d: ((b := d(arrays(shape(d), "bool")),
                                         d(arrays(b.shape)), d(arrays(b.shape))), {})),
]

ORACLE = [*TRANSFORMS, *TREE, *FFT, *NN, *SPECIAL, *NORM, *RANDOM, *LAX]

UNCHECKED = {
    "jax.ShapeDtypeStruct": "a class: tests/test_transforms.py checks eval_shape's outputs",
    "jax.config": "ftorch's own settings object (ft.config), not JAX's flags",
    "jax.checkpoint_policies": "policies by name: tests/test_remat.py checks each",
    "jax.tree_util.register_dataclass": "tests/test_tree.py registers and flattens dataclasses",
    "jax.tree_util.keystr": "tests/test_tree.py compares with JAX's documented strings",
    "jax.tree_util.DictKey": "a key class: tests/test_tree.py",
    "jax.tree_util.SequenceKey": "a key class: tests/test_tree.py",
    "jax.tree_util.GetAttrKey": "a key class: tests/test_tree.py",
    "jax.tree_util.FlattenedIndexKey": "a key class: tests/test_tree.py",
    "jax.tree_util.KeyEntry": "a type alias",
    "jax.tree_util.KeyPath": "a type alias",
    "jax.tree_util.flatten_one_level_with_keys": "tests/test_tree.py",
    "jax.debug_nans": "a context of the NaN checks: tests/test_debug.py checks their reports",
    "jax.debug_infs": "a context of the Inf checks: tests/test_debug.py checks their reports",
    "jax.debug.print": "tests/test_debug.py compares what it prints with jax.debug.print's "
                       "under jit, vmap, grad and scan",
    "jax.debug.log": "as debug.print, to a logger: tests/test_debug.py",
    "jax.debug.callback": "a host call for its effect: tests/test_debug.py counts its calls "
                          "under vmap, loops and branches",
    "jax.debug.breakpoint": "opens pdb: tests/test_debug.py drives it",
    **{f"jax.export.{n}": "exports to MLX's .mlxfn, not StableHLO: tests/test_export.py "
                          "checks exported functions against the jitted ones"
       for n in ["export", "Exported", "deserialize", "symbolic_shape", "symbolic_args_specs",
                 "is_symbolic_dim", "default_export_platform",
                 "register_namedtuple_serialization", "register_pytree_node_serialization"]},
    **{f"jax.profiler.{n}": "records with ftorch.profiler and writes a Chrome trace, not "
                            "xprof's: tests/test_profiler.py"
       for n in ["trace", "start_trace", "stop_trace", "TraceAnnotation",
                 "StepTraceAnnotation", "annotate_function"]},
}


def _lax(name, args, **kw):
    return Oracle(f"jax.lax.{name}", args, **kw)


def _x(d, min_dims=1, **kw):
    return d(arrays(shape=shape(d, min_dims=min_dims), **kw))


def _lax_pad_args(d):
    x = _x(d)
    config = [(d(st.integers(-1, 2)), d(st.integers(-1, 2)), d(st.integers(0, 2)))
              for _ in range(x.ndim)]
    config = [(lo, hi, i) if n + lo + hi + (n - 1) * i >= 0 else (0, 0, i)
              for (lo, hi, i), n in zip(config, x.shape)]
    return (x, np.float32(0.5), config), {}


def _sizes(d, n):
    cuts = sorted(d(st.lists(st.integers(0, n), max_size=3)))
    points = [0, *cuts, n]
    return tuple(b - a for a, b in zip(points, points[1:]))


def _lax_split_args(d):
    x = _x(d)
    axis = d(st.integers(0, x.ndim - 1))
    return (x, _sizes(d, x.shape[axis])), {"axis": axis}


def _dynamic_slice_args(d):
    x = _x(d)
    sizes = tuple(d(st.integers(1, n)) for n in x.shape)
    starts = tuple(np.int32(d(st.integers(-2, n))) for n in x.shape)
    return (x, starts, sizes), {}


def _dynamic_update_slice_args(d):
    x = _x(d)
    update = d(arrays(tuple(d(st.integers(1, n)) for n in x.shape)))
    starts = tuple(np.int32(d(st.integers(-2, n))) for n in x.shape)
    return (x, update, starts), {}


def _in_dim_args(d, kind):
    x = _x(d)
    axis = d(st.integers(0, x.ndim - 1))
    index = np.int32(d(st.integers(-x.shape[axis], x.shape[axis] - 1)))
    if kind == "slice":
        return (x, index, d(st.integers(1, x.shape[axis]))), {"axis": axis}
    if kind == "index":
        return (x, index), {"axis": axis, "keepdims": d(st.booleans())}
    update_shape = list(x.shape)
    update_shape[axis] = 1 if kind == "update_index" else d(st.integers(1, x.shape[axis]))
    update = d(arrays(tuple(update_shape)))
    if kind == "update_index":
        update = update.squeeze(axis) if d(st.booleans()) else update
    return (x, update, index, axis), {}


def _scan_run(L, fn, c, xs):
    return fn(lambda c, x: (L.numpy.sin(c) * x + c, c * x), c, xs)


def _while_run(L, fn, x):
    return fn(lambda s: s[0] < 4, lambda s: (s[0] + 1, L.numpy.tanh(s[1]) * 1.5), (0, x))[1]


def _cond_run(L, fn, p, x):
    return fn(p.sum() > 0, lambda v: L.numpy.sin(v), lambda v: v * 2.0, x)


def _switch_run(L, fn, i, x):
    return fn(i, [lambda v: L.numpy.sin(v), lambda v: v * 2.0, L.numpy.cos], x)


def _assoc_run(L, fn, x):
    return fn(lambda a, b: a * 0.5 + b, x)


def _collective(name, run, **kw):
    return _lax(name, lambda d: ((d(arrays((4, 3))),), {}),
                run=lambda L, fn, x: L.jax.vmap(lambda v: run(L, fn, v), axis_name="i")(x),
                **kw)


def _two_like(d, x):
    return x, d(arrays(x.shape, str(x.dtype)))


def _arg_extreme_args(d):
    x = _distinct_x(d)
    return (x, d(st.integers(0, x.ndim - 1)), np.int32), {}


def _cumulative_args(d, x):
    return (x,), {"axis": d(st.integers(0, x.ndim - 1)), "reverse": d(st.booleans())}


def _top_k_args(d):
    x = _distinct_x(d)
    return (x, 1), {"axis": d(st.integers(-x.ndim, x.ndim - 1))}


def _two(d, dtype="float32"):
    x = _x(d, 0, dtype=dtype)
    return (x, d(arrays(x.shape, dtype))), {}


def _distinct_x(d):
    x = _x(d)
    return (np.argsort(np.argsort(x, axis=None)).reshape(x.shape) * 0.37 - 1).astype(np.float32)


LAX_CORE = [
    *[_lax(n, _two) for n in ["max", "min"]],
    *[_lax(n, _arg_extreme_args, grad=False) for n in ["argmax", "argmin"]],
    *[_lax(n, lambda d: _cumulative_args(d, _x(d))) for n in ["cumsum", "cumprod"]],
    *[_lax(n, lambda d: _cumulative_args(d, _distinct_x(d))) for n in ["cummax", "cummin"]],
    _lax("pad", _lax_pad_args), _lax("split", _lax_split_args),
    _lax("round", lambda d: ((d(arrays().map(lambda x: (np.round(x * 2) / 2).astype(
        np.float32))),), {}), grad=False),
    _lax("top_k", _top_k_args),
    _lax("sort", lambda d: ((_distinct_x(d),), {})),
    _lax("sort_key_val", lambda d: (_two_like(d, _distinct_x(d)), {})),
    _lax("concatenate", lambda d: ((list(_two_like(d, _x(d))), 0), {})),
    _lax("expand_dims", lambda d: ((_x(d, 0), (0,)), {})),
    _lax("reshape", lambda d: ((x := _x(d, 0), (x.size,)), {})),
    _lax("squeeze", lambda d: ((d(arrays((1, 3, 1))), (0, 2)), {})),
    _lax("transpose", lambda d: ((x := _x(d, 0), tuple(range(x.ndim))[::-1]), {})),
    _lax("full", lambda d: (((2, d(st.integers(0, 3))), 1.5), {}), grad=False),
    _lax("full_like", lambda d: ((_x(d, 0), 2.5), {}), grad=False),
    _lax("dynamic_slice", _dynamic_slice_args),
    _lax("dynamic_update_slice", _dynamic_update_slice_args),
    _lax("dynamic_slice_in_dim", lambda d: _in_dim_args(d, "slice")),
    _lax("dynamic_index_in_dim", lambda d: _in_dim_args(d, "index")),
    _lax("dynamic_update_slice_in_dim", lambda d: _in_dim_args(d, "update_slice")),
    _lax("dynamic_update_index_in_dim", lambda d: _in_dim_args(d, "update_index")),
    _lax("scan", lambda d: ((d(arrays((2,))), d(arrays((5, 2)))), {}), run=_scan_run),
    _lax("fori_loop", lambda d: ((d(arrays((3,))),), {}),
         run=lambda L, fn, x: fn(0, 4, lambda i, v: L.numpy.sin(v) + i, x)),
    _lax("while_loop", lambda d: ((d(arrays((3,))),), {}), run=_while_run, grad=False),
    _lax("map", lambda d: ((d(arrays((4, 2))),), {}),
         run=lambda L, fn, x: fn(lambda r: L.numpy.sum(L.numpy.sin(r) * r), x)),
    _lax("cond", lambda d: ((d(arrays((3,))), d(arrays((3,)))), {}), run=_cond_run),
    _lax("switch", lambda d: ((np.int32(d(st.integers(-1, 3))), d(arrays((3,)))), {}),
         run=_switch_run),
    _lax("associative_scan", lambda d: ((d(arrays((5, 2))),), {}), run=_assoc_run),
    _lax("optimization_barrier", lambda d: ((_x(d, 0),), {})),
    _collective("psum", lambda L, fn, v: fn(v, "i")),
    _collective("pmean", lambda L, fn, v: fn(v, "i")),
    _collective("pmax", lambda L, fn, v: fn(v, "i"), grad=False),
    _collective("pmin", lambda L, fn, v: fn(v, "i"), grad=False),
    _collective("all_gather", lambda L, fn, v: fn(v, "i")),
    _collective("axis_index", lambda L, fn, v: fn("i") * v),
    _lax("psum_scatter", lambda d: ((d(arrays((4, 4))),), {}),
         run=lambda L, fn, x: L.jax.vmap(lambda v: fn(v, "i", tiled=True), axis_name="i")(x)),
]

LAX_CORE += [
    _lax("fft", lambda d: ((d(arrays((2, 4), "complex64")), d(st.sampled_from(
        ["FFT", "IFFT", "fft"])), (4,)), {}), grad=False, rtol=1e-4, atol=1e-4),
    _lax("fft", lambda d: ((d(arrays((2, 4))), "RFFT", (4,)), {}), grad=False, rtol=1e-4,
         atol=1e-4, id="rfft"),
]
ORACLE += LAX_CORE
UNCHECKED.update({
    "jax.lax.RoundingMethod": "an enum: the jax.lax.round case passes its values",
    "jax.lax.FftType": "an enum: the jax.lax.fft case passes its names",
    **{f"jax.lax.{n}": "takes ftorch's indexing spec, not XLA's dimension numbers (listed in "
                       "the translation table); tests/test_indexing.py checks it"
       for n in ["gather", "scatter", "scatter_add", "scatter_mul", "scatter_min",
                 "scatter_max"]},
})
