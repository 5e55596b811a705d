"""``ft.jit``, ``ft.make_graph``, ``ft.eval_shape`` and the graph passes.

Cost note: on CPU, ``mx.compile`` g++-compiles every new fused elementwise
kernel (half a second or more each, cached in /tmp/mlx). Tests of compiled
execution therefore reuse a few functions and shapes, and the registry runs
compiled on one example per case (FTORCH_JIT_EXAMPLES=n for more); tests
that only check graph logic (printing, passes, errors raised while staging,
higher-order compositions) turn MLX's compiler off, and say so.
"""

import logging
import os
import re

import mlx.core as mx
import numpy as np
import pytest
from cases import CASES
from harness import compiler_off, to_mx
from hypothesis import given, settings
from hypothesis import strategies as st

import ftorch as ft
import ftorch.numpy as fnp
from ftorch.config import config
from ftorch.core import LeakedTracerError, Primitive
from ftorch.graph import Graph, GraphTypeError, cse, dce, evaluate, simplify, typecheck
from ftorch.transforms.staging import ConcretizationError

# ----------------------------------------------------------------------------
# Helpers
# ----------------------------------------------------------------------------


@pytest.fixture
def uncompiled():
    """MLX's compiler off, for tests of graph logic rather than compiled
    execution (staging, printing, passes, errors): each new fused kernel
    would otherwise cost a g++ run."""
    with compiler_off():
        yield


def assert_same(actual, expected, rtol=1e-6, atol=1e-7, what=""):
    """Same tree structure; leaf by leaf same shape, dtype and values
    (NaN-aware, tight tolerance for floats, exact otherwise)."""
    a_leaves, a_tree = ft.tree.flatten(actual)
    e_leaves, e_tree = ft.tree.flatten(expected)
    assert a_tree == e_tree, f"{what}: structure {a_tree} vs {e_tree}"
    for i, (a, e) in enumerate(zip(a_leaves, e_leaves)):
        e = mx.array(e) if not isinstance(e, mx.array) else e
        assert isinstance(a, mx.array), f"{what} leaf {i}: {type(a).__name__}"
        assert a.shape == e.shape, f"{what} leaf {i}: shape {a.shape} vs {e.shape}"
        assert a.dtype == e.dtype, f"{what} leaf {i}: dtype {a.dtype} vs {e.dtype}"
        if mx.issubdtype(e.dtype, mx.inexact):
            ok = mx.allclose(a, e, rtol=rtol, atol=atol, equal_nan=True).item()
        else:
            ok = mx.array_equal(a, e).item()
        assert ok, f"{what} leaf {i}: {a} vs {e}"


def _close_over(fn, args, keep):
    """``fn`` as a function of ``args[i]`` for i in ``keep``, the other
    arguments closed over (concrete)."""
    def f(*kept):
        full = list(args)
        for i, k in zip(keep, kept):
            full[i] = k
        return fn(*full)
    return f, [args[i] for i in keep]


def _is_float(a):
    return isinstance(a, mx.array) and mx.issubdtype(a.dtype, mx.floating)


# ----------------------------------------------------------------------------
# 1. Graph printing and passes
# ----------------------------------------------------------------------------


def _two_in_two_out(x, y):
    return x * y, fnp.tanh(x) + y


_W = mx.array([[1.0, 2.0], [3.0, 4.0]])
_INNER = ft.jit(lambda x: fnp.cos(x) * x)

GOLDEN = [
    ("sum_sin", lambda x: fnp.sum(fnp.sin(x) * 2.0), (mx.ones(3),), """\
graph(a:f32[3]) -> f32[]
  b:f32[3] = sin a
  c:f32[3] = multiply b 2.0
  d:f32[] = sum[axes=(0,), keepdims=False] c
  return d"""),
    ("two_in_two_out", _two_in_two_out, (mx.ones((2, 3)), ft.ShapeDtypeStruct((3,), mx.float32)),
     """\
graph(a:f32[2,3], b:f32[3]) -> (f32[2,3], f32[2,3])
  c:f32[2,3] = multiply a b
  d:f32[2,3] = tanh a
  e:f32[2,3] = add d b
  return c, e"""),
    ("const", lambda x: fnp.exp(_W @ x), (mx.ones(2),), """\
graph(a:f32[2]) -> f32[2]
  consts b:f32[2,2]
  c:f32[2] = matmul b a
  d:f32[2] = exp c
  return d"""),
    ("nested_jit", lambda x: _INNER(x) + 1.0, (mx.ones(2, dtype=mx.float16),), """\
graph(a:f16[2]) -> f16[2]
  b:f16[2] = jit[graph={ graph(a:f16[2]) -> f16[2]
      b:f16[2] = cos a
      c:f16[2] = multiply b a
      return c }] a
  c:f16[2] = add b 1.0
  return c"""),
    ("mixed_dtypes", lambda x, i: fnp.sum(x * i, axis=1),
     (ft.ShapeDtypeStruct((2, 3), mx.float32), mx.ones(3, dtype=mx.int32)), """\
graph(a:f32[2,3], b:i32[3]) -> f32[2]
  c:f32[2,3] = multiply a b
  d:f32[2] = sum[axes=(1,), keepdims=False] c
  return d"""),
]


@pytest.mark.parametrize("f, args, expected", [g[1:] for g in GOLDEN],
                         ids=[g[0] for g in GOLDEN])
def test_make_graph_golden(f, args, expected, uncompiled):
    assert str(ft.make_graph(f)(*args)) == expected


def test_make_graph_static_argnums(uncompiled):
    g = ft.make_graph(lambda x, n: x * n, static_argnums=1)(mx.ones(2), 3)
    assert str(g) == "graph(a:f32[2]) -> f32[2]\n  b:f32[2] = multiply a 3\n  return b"


def test_simplify_folds_constant_subexpression(uncompiled):
    graph = ft.make_graph(lambda x: x + fnp.sin(mx.array(1.0)) * 2)(mx.ones(3))
    assert [e.prim.name for e in graph.eqns] == ["sin", "multiply", "add"]
    simple = simplify(graph)
    assert str(simple) == ("graph(a:f32[3]) -> f32[3]\n  consts b:f32[]\n"
                           "  c:f32[3] = add a b\n  return c")
    assert len(simple.consts) == 1
    assert mx.allclose(simple.consts[0], mx.sin(mx.array(1.0)) * 2).item()
    x = mx.array([0.5, -1.0, 2.0])
    assert_same(evaluate(simple, [x]), evaluate(graph, [x]))
    assert_same(evaluate(simple, [x]), [x + mx.sin(mx.array(1.0)) * 2])


def _dup_and_dead(x):
    a = fnp.exp(x)
    b = fnp.exp(x)
    fnp.log(x)  # unused
    return a * b


def test_dce_drops_unused_op(uncompiled):
    graph = ft.make_graph(_dup_and_dead)(mx.ones(3))
    assert [e.prim.name for e in graph.eqns] == ["exp", "exp", "log", "multiply"]
    assert [e.prim.name for e in dce(graph).eqns] == ["exp", "exp", "multiply"]
    x = mx.array([0.1, 0.2, 0.3])
    assert_same(evaluate(dce(graph), [x]), evaluate(graph, [x]))


def test_cse_merges_duplicate_op(uncompiled):
    graph = ft.make_graph(_dup_and_dead)(mx.ones(3))
    merged = cse(graph)
    assert [e.prim.name for e in merged.eqns] == ["exp", "log", "multiply"]
    mul = merged.eqns[-1]
    assert mul.inputs[0] is mul.inputs[1] is merged.eqns[0].outs[0]
    simple = simplify(graph)
    assert str(simple) == ("graph(a:f32[3]) -> f32[3]\n  b:f32[3] = exp a\n"
                           "  c:f32[3] = multiply b b\n  return c")
    x = mx.array([0.1, 0.2, 0.3])
    assert_same(evaluate(simple, [x]), evaluate(graph, [x]))
    assert_same(evaluate(simple, [x]), [mx.exp(x) * mx.exp(x)])


def test_cse_merges_commuted_sums_and_products_only(uncompiled):
    graph = ft.make_graph(lambda x, y: (x * y, y * x, x + y, y + x, x - y, y - x))(
        mx.ones(3), mx.ones(3))
    assert [e.prim.name for e in cse(graph).eqns] == ["multiply", "add", "subtract", "subtract"]
    x, y = mx.array([1.0, -2.0, 3.0]), mx.array([0.5, 4.0, -1.0])
    assert_same(evaluate(cse(graph), [x, y]), [x * y, x * y, x + y, x + y, x - y, y - x])


def test_cse_keeps_different_params_and_literals(uncompiled):
    graph = ft.make_graph(lambda x: (fnp.sum(x, axis=0), fnp.sum(x, axis=1), x * 2, x * 2.0))(
        mx.ones((2, 3)))
    # Same primitive, different params or differently typed literals: not merged.
    assert len(cse(graph).eqns) == 4


def test_cse_keeps_signed_zero_literals(uncompiled):
    f = lambda x: (1 / (x * 0.0), 1 / (x * -0.0))
    x = mx.array([1.0, 2.0])
    assert_same(ft.jit(f)(x), f(x))


def _graphs_in(entry):
    """Every graph in a ``derived`` cache entry (tuples of graphs and info)."""
    if isinstance(entry, Graph):
        yield entry
    elif isinstance(entry, tuple):
        for e in entry:
            yield from _graphs_in(e)


def test_typecheck_accepts_staged_and_derived_graphs(uncompiled):
    def f(x, w):
        return fnp.sum(fnp.tanh(x @ w) ** 2, axis=-1)

    jf = ft.jit(f)
    x, w = mx.ones((4, 3)), mx.ones((3, 2))
    ft.grad(lambda w: fnp.sum(jf(x, w)))(w)
    ft.jvp(lambda w: jf(x, w), (w,), (w,))
    ft.vmap(jf, in_axes=(0, None))(mx.ones((5, 4, 3)), w)
    # Staging jf once more finds its cached graph: the one the transforms derived from.
    (eqn,) = ft.make_graph(jf)(x, w).eqns
    graph = eqn.params["graph"]
    derived = [g for entry in graph.derived.values() for g in _graphs_in(entry)]
    assert len(derived) >= 4  # jvp, the vjp split (forward, backward), vmap
    for g in [graph, *derived]:
        assert typecheck(g) is g


def test_typecheck_names_the_equation_that_breaks(uncompiled):
    graph = ft.make_graph(lambda x: fnp.sum(fnp.sin(x) * 2.0))(mx.ones(3))
    graph.eqns[1].outs[0].aval = ft.ShapeDtypeStruct((4,), mx.float32)
    with pytest.raises(GraphTypeError, match=r"multiply gives f32\[3\] but its outputs are "
                                             r"typed f32\[4\] at equation 1 \(c:f32\[4\] ="):
        typecheck(graph)
    graph = ft.make_graph(lambda x: fnp.sum(fnp.sin(x) * 2.0))(mx.ones(3))
    graph.eqns.reverse()
    with pytest.raises(GraphTypeError, match="used before it is defined at equation 0"):
        typecheck(graph)
    graph = ft.make_graph(lambda x: x @ x)(mx.ones((2, 2)))
    graph.in_vars[0].aval = ft.ShapeDtypeStruct((2, 3), mx.float32)
    with pytest.raises(GraphTypeError, match="matmul's shape rule fails"):
        typecheck(graph)


# ----------------------------------------------------------------------------
# 2, 3. jit and eval_shape agree with eager on every rule case
# ----------------------------------------------------------------------------

# Cases whose integer arguments encode Python-level structure (axes, an index
# expression's code, pad widths, repeats, ...): traced, they raise
# ConcretizationError; closed over (concrete), they jit fine.
NEEDS_CONCRETE = {
    "softmax", "log_softmax",
    "gather-getitem", "gather-getitem-duplicates", "gather-at-get", "gather-take",
    "static_slice-getitem", "take_along_axis", "scatter-put_along_axis",
    "scatter_add-basic", "scatter_add-mixed", "scatter_add-duplicates",
    "scatter-basic", "scatter-mixed", "scatter-duplicates",
    "scatter_mul-basic", "scatter_mul-unique", "scatter_mul-duplicates",
    "scatter_div-basic", "scatter_div-unique", "scatter_div-duplicates",
    "scatter_min", "scatter_max", "scatter_max-duplicates",
    "sum", "mean", "max", "min", "prod", "prod_zeros", "var", "std", "logsumexp",
    "cumsum", "cumprod", "cumprod_zeros", "argmax", "argmin", "all", "any",
    "transpose", "moveaxis", "static_slice", "flip", "slice_transpose", "concatenate",
    "split_indices", "split_sections",
    "pad", "pad_traced_value", "pad_edge", "pad_reflect", "pad_symmetric", "pad_wrap_wide",
    "pad_reflect_wide", "roll", "tile", "repeat", "repeat_each",
    "dynamic_slice", "dynamic_slice_static_starts", "dynamic_slice_batched_starts",
    "dynamic_index_in_dim",
}


def test_needs_concrete_names_are_cases():
    assert NEEDS_CONCRETE <= {c.name for c in CASES}


# Compiled execution: each case's fused kernels cost a g++ run per new kernel
# (its dtypes, broadcasting pattern, ...), so one example per case by default.
JIT_EXAMPLES = int(os.environ.get("FTORCH_JIT_EXAMPLES", "1"))


def _jit_case(case, args, run):
    """``run(f, arrays)`` with every array argument traced; for the cases in
    NEEDS_CONCRETE (and only those) that raises ConcretizationError, and the
    non-floating arguments are closed over instead. Non-array arguments
    (einsum subscripts) are always closed over."""
    f, arrays = _close_over(case.fn, args, [i for i, a in enumerate(args)
                                            if isinstance(a, mx.array)])
    if case.name not in NEEDS_CONCRETE:
        return f, arrays, run(f, arrays)
    with pytest.raises(ConcretizationError, match="needs the concrete value"):
        run(f, arrays)
    f, arrays = _close_over(case.fn, args, [i for i, a in enumerate(args) if _is_float(a)])
    return f, arrays, run(f, arrays)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
@settings(max_examples=JIT_EXAMPLES)
@given(data=st.data())
def test_jit_matches_eager(case, data):
    args = to_mx(data.draw(case.args))
    jitted = []

    def run(f, arrays):
        jitted.append(ft.jit(f))
        return jitted[-1](*arrays)

    f, arrays, out = _jit_case(case, args, run)
    assert jitted[-1].trace_count == 1
    assert_same(out, case.fn(*args), rtol=1e-5, atol=1e-6, what=case.name)
    # A second call hits the cache.
    assert_same(jitted[-1](*arrays), out, what=case.name)
    assert jitted[-1].trace_count == 1


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
@settings(max_examples=3)
@given(data=st.data())
def test_eval_shape_matches_eager(case, data):
    args = to_mx(data.draw(case.args))

    def run(f, arrays):
        return ft.eval_shape(f, *[ft.ShapeDtypeStruct(a.shape, a.dtype) for a in arrays])

    _, _, shapes = _jit_case(case, args, run)
    expected = ft.tree.map(lambda o: ft.ShapeDtypeStruct(tuple(o.shape), o.dtype),
                           case.fn(*args))
    is_sds = lambda x: isinstance(x, ft.ShapeDtypeStruct)  # a NamedTuple: a node otherwise
    s_leaves, s_tree = ft.tree.flatten(shapes, is_leaf=is_sds)
    e_leaves, e_tree = ft.tree.flatten(expected, is_leaf=is_sds)
    assert s_tree == e_tree
    for s, e in zip(s_leaves, e_leaves):
        assert isinstance(s, ft.ShapeDtypeStruct)
        assert (tuple(s.shape), s.dtype) == (e.shape, e.dtype)


def test_eval_shape_pytrees_and_kwargs():
    def f(p, x, *, scale):
        return {"y": fnp.tanh(x @ p["w"] + p["b"]) * scale, "n": fnp.sum(x, axis=0)}

    p = {"w": ft.ShapeDtypeStruct((3, 4), mx.float32), "b": mx.zeros(4)}
    out = ft.eval_shape(f, p, ft.ShapeDtypeStruct((5, 3), mx.float32),
                        scale=ft.ShapeDtypeStruct((), mx.float16))
    assert out == {"y": ft.ShapeDtypeStruct((5, 4), mx.float32),
                   "n": ft.ShapeDtypeStruct((3,), mx.float32)}
    with pytest.raises(TypeError, match=r"args\[0\]\[1\]\[0\] must be an array, a Python scalar or "
                                        "a ShapeDtypeStruct"):
        ft.eval_shape(f, p, ["a"], scale=1.0)


# ----------------------------------------------------------------------------
# 4. Composition with the other transforms
# ----------------------------------------------------------------------------


def _f(x):
    return fnp.sum(fnp.sin(x) * x)


def _g(x):  # vector -> vector, for Jacobians
    return fnp.sin(x) * x


_X = mx.array([0.3, -1.2, 2.0])
_XS = mx.array([[0.3, -1.2, 2.0], [1.5, 0.1, -0.7]])


def _df(x):  # d/dx sum(sin(x) * x)
    return mx.cos(x) * x + mx.sin(x)


def _d2f(x):
    return 2 * mx.cos(x) - x * mx.sin(x)


# Each derived graph (JVP, VJP, batched, ...) g++-compiles its own fused
# kernels. The first-order compositions run compiled; the higher-order ones
# check the graph transforms (the rules of jit_p) with MLX's compiler off.
COMPOSITIONS = [
    ("jit(grad(f))", True, lambda: ft.jit(ft.grad(_f))(_X), lambda: ft.grad(_f)(_X)),
    ("grad(jit(f))", True, lambda: ft.grad(ft.jit(_f))(_X), lambda: ft.grad(_f)(_X)),
    ("vmap(jit(f))", True, lambda: ft.vmap(ft.jit(_f))(_XS), lambda: ft.vmap(_f)(_XS)),
    ("jit(jit(f))", True, lambda: ft.jit(ft.jit(_f))(_X), lambda: _f(_X)),
    ("jvp(jit(f))", True, lambda: ft.jvp(ft.jit(_g), (_X,), (_X,)),
     lambda: ft.jvp(_g, (_X,), (_X,))),
    ("jit(vmap(grad(f)))", False, lambda: ft.jit(ft.vmap(ft.grad(_f)))(_XS),
     lambda: ft.vmap(ft.grad(_f))(_XS)),
    ("vmap(jit(f), in_axes=1)", False, lambda: ft.vmap(ft.jit(_g), in_axes=1)(_XS),
     lambda: ft.vmap(_g, in_axes=1)(_XS)),
    ("grad(grad(jit(f)))", False,
     lambda: ft.grad(ft.grad(ft.jit(lambda x: fnp.sin(x) * x)))(_X[0]),
     lambda: ft.grad(ft.grad(lambda x: fnp.sin(x) * x))(_X[0])),
    ("vmap(grad(jit(f)))", False, lambda: ft.vmap(ft.grad(ft.jit(_f)))(_XS),
     lambda: ft.vmap(ft.grad(_f))(_XS)),
    ("jit(vmap(jit(f)))", False, lambda: ft.jit(ft.vmap(ft.jit(_f)))(_XS),
     lambda: ft.vmap(_f)(_XS)),
    ("jacrev(jit(f))", False, lambda: ft.jacrev(ft.jit(_g))(_X), lambda: ft.jacrev(_g)(_X)),
    ("jacfwd(jit(f))", False, lambda: ft.jacfwd(ft.jit(_g))(_X), lambda: ft.jacfwd(_g)(_X)),
    ("hessian(jit(f))", False, lambda: ft.hessian(ft.jit(_f))(_X), lambda: ft.hessian(_f)(_X)),
    ("value_and_grad(jit(f))", False, lambda: ft.value_and_grad(ft.jit(_f))(_X),
     lambda: ft.value_and_grad(_f)(_X)),
]


@pytest.mark.parametrize("compiled, transformed, eager", [c[1:] for c in COMPOSITIONS],
                         ids=[c[0] for c in COMPOSITIONS])
def test_composition_matches_eager(compiled, transformed, eager):
    with compiler_off(not compiled):
        assert_same(transformed(), eager(), rtol=1e-5, atol=1e-6)


def test_composition_values(uncompiled):
    # The eager transforms compared with above are checked against the
    # analytic derivatives too, so that a bug common to both cannot hide.
    assert_same(ft.grad(ft.jit(_f))(_X), _df(_X), rtol=1e-5, atol=1e-6)
    assert_same(ft.jit(ft.grad(_f))(_X), _df(_X), rtol=1e-5, atol=1e-6)
    assert_same(ft.vmap(ft.grad(ft.jit(_f)))(_XS), _df(_XS), rtol=1e-5, atol=1e-6)
    assert_same(ft.hessian(ft.jit(_f))(_X), mx.diag(_d2f(_X)), rtol=1e-5, atol=1e-6)
    assert_same(ft.jacfwd(ft.jit(_g))(_X), mx.diag(_df(_X)), rtol=1e-5, atol=1e-6)
    assert_same(ft.jacrev(ft.jit(_g))(_X), mx.diag(_df(_X)), rtol=1e-5, atol=1e-6)


def test_grad_of_jit_stays_staged(uncompiled):
    # grad(jit(f)) binds jit_p on derived graphs: staged again, it shows
    # nested jit equations rather than the inlined derivative.
    listing = str(ft.make_graph(ft.grad(ft.jit(_f)))(_X))
    assert "jit[graph={" in listing
    assert not re.search(r"^  \w+:\S+ = (sin|cos) ", listing, re.M), listing


def test_jit_closing_over_outer_grad_tracer():
    x0 = mx.array([1.0, 2.0, -3.0])
    w0 = mx.array([0.5, -0.5, 2.0])
    jitted = []

    def loss(w):
        jitted.append(ft.jit(lambda x: fnp.sum(x * w)))
        return jitted[-1](x0)

    assert_same(ft.grad(loss)(w0), x0)
    assert jitted[-1].cache_size() == 0  # closes over a tracer: valid for one call only
    # Closed-over tracers are hoisted to graph inputs, so every transform sees them.
    with compiler_off():  # graph logic: more derived graphs, each its own kernels
        # Second order through the hoisted tracer: d/dw sum(x * w**2) = 2 x w.
        h = ft.grad(lambda w: ft.jit(lambda x: fnp.sum(x * w * w))(x0))(w0)
        assert_same(h, 2 * x0 * w0)
        ws = mx.stack([w0, 2 * w0])
        out = ft.vmap(lambda w: ft.jit(lambda x: fnp.sum(x * w))(x0))(ws)
        assert_same(out, mx.sum(x0 * ws, axis=1))
        out = ft.jvp(lambda w: ft.jit(lambda x: x * w)(x0), (w0,), (x0,))
        assert_same(out, (x0 * w0, x0 * x0))


def test_jit_pytree_args_and_outputs():
    def f(params, batch):
        x, y = batch
        return {"pred": x @ params["w"], "parts": (params["b"] * params["b"], fnp.sum(y, axis=0))}

    params = {"w": mx.array([[1.0, 0.5], [-1.0, 2.0]]), "b": mx.array([0.1, -0.2])}
    batch = (mx.array([[1.0, 2.0], [3.0, -1.0]]), mx.array([[0.0, 1.0], [1.0, 0.0]]))
    jf = ft.jit(f)
    out = jf(params, batch)
    assert isinstance(out, dict) and isinstance(out["parts"], tuple)
    assert_same(out, f(params, batch))
    assert_same(out["pred"], batch[0] @ params["w"])
    # Another structure (a list in place of a tuple) is another trace.
    assert_same(jf(params, list(batch)), out)
    assert jf.trace_count == 2
    with compiler_off():  # graph logic: the VJP of a graph with pytree inputs

        def loss(p):
            out = jf(p, batch)
            return fnp.sum(out["pred"]) + fnp.sum(out["parts"][0])

        g = ft.grad(loss)(params)
    assert_same(g, {"w": mx.broadcast_to(mx.sum(batch[0], axis=0)[:, None], (2, 2)),
                    "b": 2 * params["b"]})


def test_jit_kwargs():
    def f(x, y=None, *, scale):
        return x * scale if y is None else x * scale + y

    jf = ft.jit(f)
    x, y, s = mx.array([1.0, 2.0]), mx.array([0.5, 0.5]), mx.array([3.0, -1.0])
    assert_same(jf(x, scale=s), x * s)
    assert_same(jf(x, y=y, scale=s), x * s + y)
    assert jf.trace_count == 2
    assert_same(jf(x, y=2 * y, scale=2 * s), x * s * 2 + 2 * y)
    assert jf.trace_count == 2
    with compiler_off():  # graph logic: the VJP with respect to a keyword argument
        assert_same(ft.grad(lambda s: fnp.sum(jf(x, scale=s)))(s), x)


def test_jit_numpy_and_python_outputs():
    jf = ft.jit(lambda x: (fnp.sin(x), 2.0, np.arange(2)))
    out = jf(np.array([1.0, 2.0], dtype=np.float32))  # a NumPy argument is converted
    assert_same(out, (mx.sin(mx.array([1.0, 2.0])), mx.array(2.0), mx.array([0, 1], mx.int64)))
    assert_same(jf(mx.array([3.0, 4.0])), (mx.sin(mx.array([3.0, 4.0])), mx.array(2.0),
                                            mx.array([0, 1], mx.int64)))
    assert jf.trace_count == 1


@ft.tree.dataclass
class _Params:
    w: mx.array
    b: mx.array


def test_compiled_dispatch_outside_transforms(monkeypatch):
    # Outside transforms, calls go through mx.compile's own dispatch (compiler
    # on here), without binding jit_p.
    binds = []
    original = Primitive.bind
    monkeypatch.setattr(Primitive, "bind", lambda prim, *args, **params: (
        binds.append(prim.name), original(prim, *args, **params))[1])
    with pytest.raises(ConcretizationError, match="if x > 0"):  # the function's error, as is
        ft.jit(_branchy)(mx.array(1.0))
    # An output structure that depends on the input shape.
    jf = ft.jit(lambda x: (x, 2 * x) if x.shape[0] > 1 else 3 * x)
    two, one = mx.array([1.0, 2.0]), mx.array([1.0])
    for _ in range(2):
        assert_same(jf(two), (two, 2 * two))
        assert_same(jf(one), 3 * one)
    assert jf.trace_count == 2
    # Registered pytree nodes in and out; a NumPy argument takes the general
    # path, which outside transforms runs the signature's executable as is.
    step = ft.jit(lambda p, x: _Params(p.w * x, p.b + 1))
    p = _Params(mx.array([1.0, 2.0]), mx.array(0.5))
    for x in (mx.array(3.0), np.array(3.0, np.float32), mx.array(3.0)):
        out = step(p, x)
        assert isinstance(out, _Params)
        assert_same((out.w, out.b), (mx.array([3.0, 6.0]), mx.array(1.5)))
    assert step.trace_count == 1
    assert "jit" not in binds


# ----------------------------------------------------------------------------
# 5. The cache
# ----------------------------------------------------------------------------


def test_cache_by_shape_and_dtype():
    jf = ft.jit(lambda x: fnp.sin(x))
    a = mx.array([0.1, 0.2, 0.3])
    assert_same(jf(a), mx.sin(a))
    assert jf.trace_count == 1
    b = mx.array([1.0, -2.0, 3.0])  # new values, same shape: no retrace, new result
    assert_same(jf(b), mx.sin(b))
    assert jf.trace_count == 1
    c = mx.array([1.0, 2.0])  # new shape
    assert_same(jf(c), mx.sin(c))
    assert jf.trace_count == 2
    assert_same(jf(a), mx.sin(a))  # the first shape again: still cached
    assert jf.trace_count == 2
    d = a.astype(mx.float16)  # new dtype
    out = jf(d)
    assert out.dtype == mx.float16
    assert_same(out, mx.sin(d))
    assert jf.trace_count == 3
    assert jf.cache_size() == 3
    jf.clear_cache()
    assert jf.cache_size() == 0
    assert_same(jf(b), mx.sin(b))
    assert jf.trace_count == 4
    assert jf.cache_size() == 1


def test_cache_static_argnums_and_argnames():
    # (A static n used as a slice bound: no new fused kernel per value.)
    by_num = ft.jit(lambda x, n: fnp.sum(x[:n]), static_argnums=1)
    by_name = ft.jit(lambda x, n: fnp.sum(x[:n]), static_argnames="n")
    x = mx.array([1.0, 2.0, 4.0])
    for jf in (by_num, by_name):
        assert_same(jf(x, 2), mx.array(3.0))
        assert jf.trace_count == 1
        assert_same(jf(x * x, 2), mx.array(5.0))  # same static value: a hit, new values
        assert jf.trace_count == 1
        assert_same(jf(x, 3), mx.array(7.0))  # a new static value changes the result
        assert jf.trace_count == 2
        assert_same(jf(x, 2), mx.array(3.0))
        assert jf.trace_count == 2
        assert jf.cache_size() == 2
    # Static by position or by name, whichever was declared.
    assert_same(by_name(x, n=1), mx.array(1.0))
    assert_same(by_num(x, n=1), mx.array(1.0))


def test_cache_static_values_of_different_types(uncompiled):
    jf = ft.jit(lambda x, n: x * n, static_argnums=1)
    i = mx.array([1, 2])
    assert_same(jf(i, 2), i * 2)
    assert_same(jf(i, 2.0), i * 2.0)  # float32; the cached int32 graph is returned


def test_static_arg_controls_python_flow():
    def f(x, mode):
        if mode == "square":
            return x * x
        return -x

    jf = ft.jit(f, static_argnames="mode")
    x = mx.array([1.0, -2.0])
    assert_same(jf(x, "square"), x * x)
    assert_same(jf(x, mode="negate"), -x)
    assert jf.trace_count == 2


@pytest.fixture
def log_compiles():
    saved = config.log_compiles
    config.log_compiles = True
    try:
        yield
    finally:
        config.log_compiles = saved


def test_log_compiles(caplog, log_compiles):
    jf = ft.jit(lambda x, n: x * n, static_argnums=1)
    x = mx.array([1.0, 2.0])

    def records():
        out = [r for r in caplog.records if r.name == "ftorch.jit"]
        caplog.clear()
        return out

    with caplog.at_level(logging.WARNING, logger="ftorch.jit"):
        jf(x, 2)
        (r,) = records()
        assert r.levelno == logging.WARNING
        assert "first call" in r.getMessage() and "<lambda>" in r.getMessage()
        jf(x + 1, 2)
        assert records() == []  # a cache hit logs nothing
        jf(mx.ones(3), 2)
        (r,) = records()
        assert "new shapes/dtypes" in r.getMessage() and "f32[2] -> f32[3]" in r.getMessage()
        jf(mx.ones(3), 4)
        (r,) = records()
        assert "static arguments changed" in r.getMessage()
        jf(mx.ones(3, dtype=mx.float16), 4)
        (r,) = records()
        assert "f32[3] -> f16[3]" in r.getMessage()
    config.log_compiles = False
    jf(mx.ones(4), 2)
    assert records() == []


# ----------------------------------------------------------------------------
# 6. Errors
# ----------------------------------------------------------------------------


def _branchy(x):
    if x > 0:
        return x * x
    return -x


def test_control_flow_on_traced_value(uncompiled):
    with pytest.raises(ConcretizationError,
                       match=r"computed from argument x\).*static_argnums") as info:
        ft.jit(_branchy)(mx.array(1.0))
    assert "_branchy" in str(info.value) and "if x > 0" in str(info.value)
    assert isinstance(info.value, TypeError)


@pytest.mark.parametrize("convert", [float, int, bool, lambda s: s.item()],
                         ids=["float", "int", "bool", "item"])
def test_concretizing_conversions(convert, uncompiled):
    with pytest.raises(ConcretizationError,
                       match=r"needs the concrete value of an abstract f32\[\] array "
                             r"\(computed from argument x\)"):
        ft.jit(lambda x: convert(x))(mx.array(1.5))


def test_concretization_of_constant_and_under_grad(uncompiled):
    # Ops on constants are staged too: their values are abstract as well.
    with pytest.raises(ConcretizationError, match=r"\(a constant\)"):
        ft.jit(lambda x: x * float(fnp.sum(mx.array([1.0, 2.0]))))(mx.array(1.0))
    with pytest.raises(ConcretizationError, match="computed from argument"):
        ft.jit(ft.grad(_branchy))(mx.array(1.0))
    # Outside jit, grad has concrete values: the same function works.
    assert ft.grad(_branchy)(mx.array(3.0)).item() == 6.0


def test_non_array_argument_not_static(uncompiled):
    jf = ft.jit(lambda x, n: x * n)
    for bad in ("a", object()):
        with pytest.raises(TypeError, match=r"argument n .*static_argnums"):
            jf(mx.array([1.0]), bad)
    with pytest.raises(TypeError, match=r"argument n .*static_argnums"):
        jf(mx.array([1.0]), n="b")
    assert jf.trace_count == 0


def test_python_scalars_are_traced_weakly_typed(uncompiled):
    step = ft.jit(lambda p, g, lr: p - lr * g)
    p16 = mx.ones(3, mx.float16)
    out = step(p16, p16, 0.5)
    assert out.dtype == mx.float16 and out.tolist() == [0.5] * 3
    assert step(p16, p16, 0.25).tolist() == [0.75] * 3
    assert step(p16, p16, lr=0.125).dtype == mx.float16
    assert step.trace_count == 2  # positional, then keyword: the value never retraces
    f = ft.jit(lambda x, n: x * (n * 2 + 1))  # weak arithmetic stays weak
    for x, n in [(mx.ones(2, mx.float16), 3), (mx.ones(2, mx.int8), 3),
                 (mx.arange(3), 2.5), (mx.ones(2, mx.bfloat16), 0.5)]:
        eager = x * (n * 2 + 1)
        got = f(x, n)
        assert got.dtype == eager.dtype
        np.testing.assert_array_equal(np.array(got.astype(mx.float32)),
                                      np.array(eager.astype(mx.float32)))
    g = ft.jit(lambda x, n: x + fnp.sqrt(n))  # as eager: mx.sqrt(2.0) is float32
    assert g(p16, 2.0).dtype == (p16 + fnp.sqrt(2.0)).dtype == mx.float32
    # Under grad, the scalar is a constant of the jitted function.
    grad = ft.grad(lambda x, lr: fnp.sum(step(x, x, lr)))(mx.ones(3), 0.5)
    assert grad.tolist() == [0.5] * 3


def test_unhashable_static_argument(uncompiled):
    with pytest.raises(TypeError, match="must be hashable"):
        ft.jit(lambda x, n: x * n[0], static_argnums=1)(mx.array([1.0]), [2])
    with pytest.raises(TypeError, match="must be hashable"):
        ft.jit(lambda x, n: x * n[0], static_argnames="n")(mx.array([1.0]), n=[2])


def test_leaked_tracer(uncompiled):
    leaked = []

    def f(x):
        leaked.append(x)
        return x * 2

    assert_same(ft.jit(f)(mx.array([1.0, 2.0])), mx.array([2.0, 4.0]))
    with pytest.raises(LeakedTracerError, match="after that transform finished"):
        fnp.sin(leaked[0])
    with pytest.raises(LeakedTracerError):
        leaked[0] + 1
    with pytest.raises(LeakedTracerError):
        ft.jit(lambda x: x + leaked[0])(mx.array([1.0, 2.0]))


def test_global_random_state_refused(uncompiled):
    with pytest.raises(RuntimeError, match="global random state.*frozen"):
        ft.jit(lambda x: x + mx.random.normal((2,)))(mx.array([1.0, 2.0]))


def test_not_callable():
    with pytest.raises(TypeError, match="expected a function"):
        ft.jit(3)


def test_non_array_output(uncompiled):
    with pytest.raises(TypeError, match="returned a str"):
        ft.jit(lambda x: "x")(mx.array(1.0))


# ----------------------------------------------------------------------------
# 7. donate_argnums
# ----------------------------------------------------------------------------


def test_donate_argnums_rejects_static_and_non_int():
    with pytest.raises(ValueError, match="donate_argnums entry 1"):
        ft.jit(lambda x, n: x * n, static_argnums=1, donate_argnums=1)
    with pytest.raises(ValueError, match="donate_argnums entry 1"):
        ft.jit(lambda x, n: x * n, static_argnames="n", donate_argnums=(0, 1))
    with pytest.raises(ValueError, match="donate_argnums entry"):
        ft.jit(lambda x, n: x * n, donate_argnums="x")


def test_donate_argnums_result_unchanged():
    jf = ft.jit(lambda x, n: fnp.sin(x[:n]), static_argnums=1, donate_argnums=0)
    assert_same(jf(mx.array([1.0, 2.0, 3.0]), 2), mx.sin(mx.array([1.0, 2.0])))
    x = mx.array([0.5, -1.0, 3.0])
    assert_same(jf(x, 3), mx.sin(x))
    assert_same(x, mx.array([0.5, -1.0, 3.0]))  # still held by us: not overwritten
    assert_same(ft.jit(lambda x, y: x * y, donate_argnums=(0, 1))(x, x), x * x)


def test_donate_argnums_out_of_range_for_the_call():
    jf = ft.jit(lambda x: x + 1.0, donate_argnums=3)
    with pytest.raises(ValueError, match="donate_argnums=.*out of range.*1 positional"):
        jf(mx.array(1.0))


def test_negative_static_argnums():
    jf = ft.jit(lambda x, n: x * n, static_argnums=-1)
    assert_same(jf(mx.array([1.0, 2.0]), 3), mx.array([3.0, 6.0]))
    with pytest.raises(ValueError, match="static_argnums entry -3 is out of range"):
        ft.jit(lambda x, n: x * n, static_argnums=-3)
