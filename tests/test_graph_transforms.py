"""The graph transforms (``jvp_graph``, ``vjp_graph``, ``batch_graph``) and
the graph passes and plans that control flow lowers with: each against the
interpreter it is built from, on graphs drawn with hypothesis."""

import mlx.core as mx
import numpy as np
import pytest
from harness import compiler_off
from hypothesis import given
from hypothesis import strategies as st

import ftorch as ft
import ftorch.numpy as fnp
from ftorch.backend.rewrites import fuse_summed_matmuls
from ftorch.graph import evaluate, needs_host, typecheck
from ftorch.primitives.loops import _loop_plan
from ftorch.transforms.executable import segmented
from ftorch.transforms.jvp import jvp_graph
from ftorch.transforms.vjp import vjp_graph
from ftorch.transforms.vmap import batch_graph


@pytest.fixture(autouse=True)
def uncompiled():
    with compiler_off():
        yield


def close(a, b, tol=1e-9):
    np.testing.assert_allclose(np.array(a), np.array(b), rtol=tol, atol=tol)


def f(x, w):
    return fnp.tanh(x @ w) * fnp.sum(x), fnp.sin(w)


def arrays(seed, *shapes):
    rng = np.random.default_rng(seed)
    return [mx.array(rng.standard_normal(s), dtype=mx.float64) for s in shapes]


@given(seed=st.integers(0, 100), mask=st.tuples(st.booleans(), st.booleans()))
def test_jvp_graph_matches_jvp(seed, mask):
    x, w, tx, tw = arrays(seed, (3, 2), (2, 4), (3, 2), (2, 4))
    graph = ft.make_graph(f)(x, w)
    derived, nonzero = jvp_graph(graph, mask)
    typecheck(derived)
    tangents = [t for t, m in zip((tx, tw), mask) if m]
    outs = evaluate(derived, [x, w, *tangents])
    zero = [mx.zeros_like(tx), mx.zeros_like(tw)]
    _, expected = ft.jvp(f, (x, w), tuple(t if m else z for t, m, z in zip((tx, tw), mask, zero)))
    got = iter(outs[2:])
    for nz, e in zip(nonzero, expected):
        close(next(got) if nz else mx.zeros_like(e), e)
    # sin(w) has no tangent when w has none: a symbolic zero, unless instantiated.
    assert nonzero[1] == mask[1]
    inst, nonzero = jvp_graph(graph, mask, instantiate=True)
    assert all(nonzero) and len(inst.outs) == 4


@given(seed=st.integers(0, 100))
def test_vjp_graph_matches_vjp(seed):
    x, w, c1, c2 = arrays(seed, (3, 2), (2, 4), (3, 4), (2, 4))
    graph = ft.make_graph(f)(x, w)
    fwd, bwd, nonzero = vjp_graph(graph)
    typecheck(fwd), typecheck(bwd)
    out = evaluate(fwd, [x, w])
    res = out[2:]
    cts = evaluate(bwd, res + [c1, c2])
    expected = ft.vjp(f, x, w)[1]((c1, c2))
    assert nonzero == [True, True]
    for g, e in zip(cts, expected):
        close(g, e)
    close(out[0], f(x, w)[0])


@given(seed=st.integers(0, 100), dims=st.tuples(st.sampled_from([None, 0, 1, 2]),
                                                st.sampled_from([None, 0, 1, 2])))
def test_batch_graph_matches_vmap(seed, dims):
    if dims == (None, None):
        dims = (0, None)
    x, w = arrays(seed, (3, 2), (2, 4))
    graph = ft.make_graph(f)(x, w)
    xb, wb = (mx.stack([a + k for k in range(5)], axis=d) if d is not None else a
              for a, d in zip((x, w), dims))
    batched, out_dims = batch_graph(graph, dims, 5)
    typecheck(batched)
    outs = evaluate(batched, [xb, wb])
    expected = ft.vmap(f, in_axes=dims, out_axes=0)(xb, wb)
    for o, d, e in zip(outs, out_dims, expected):
        close(mx.moveaxis(o, d, 0) if d is not None else mx.broadcast_to(o, e.shape), e)
    forced, forced_dims = batch_graph(graph, dims, 5, force=[True, True])
    assert forced_dims == [0, 0]
    for o, e in zip(evaluate(forced, [xb, wb]), expected):
        close(o, e)


def test_graph_transforms_are_cached_on_the_graph():
    graph = ft.make_graph(f)(mx.ones((3, 2)), mx.ones((2, 4)))
    assert jvp_graph(graph, (True, False))[0] is jvp_graph(graph, (True, False))[0]
    assert vjp_graph(graph)[0] is vjp_graph(graph)[0]
    assert batch_graph(graph, (0, None), 2)[0] is batch_graph(graph, (0, None), 2)[0]


@given(seed=st.integers(0, 100), t=st.integers(1, 5))
def test_fuse_summed_matmuls(seed, t):
    a, b = arrays(seed, (t, 3, 2), (t, 2, 4))
    graph = ft.make_graph(lambda a, b: fnp.sum(a @ b, axis=0))(a, b)
    fused = typecheck(fuse_summed_matmuls(graph))
    matmuls = [e for e in fused.eqns if e.prim.name == "matmul"]
    assert len(matmuls) == 1 and matmuls[0].inputs[0].aval.shape == (3, 2 * t)
    close(evaluate(fused, [a, b])[0], fnp.sum(a @ b, axis=0))
    # A product used elsewhere is left alone.
    def both(a, b):
        m = a @ b
        return fnp.sum(m, axis=0), m

    graph = ft.make_graph(both)(a, b)
    assert fuse_summed_matmuls(graph) is graph


def test_scan_loop_plan_hoists_and_sinks():
    """The RNN's scans under grad: per step one matmul forward and one
    backward; the input projection and the weight gradients are single
    matmuls outside the loop."""
    def loss(p, xs):
        h, _ = ft.lax.scan(lambda h, x: (fnp.tanh(x @ p["u"] + h @ p["w"]), None),
                           mx.zeros((2, 4), mx.float64), xs)
        return fnp.sum(h)

    p = {"u": arrays(0, (3, 4))[0], "w": arrays(1, (4, 4))[0]}
    xs = arrays(2, (6, 2, 3))[0]
    graph = ft.make_graph(ft.grad(loss))(p, xs)
    scans = [e for e in graph.eqns if e.prim.name == "scan"]
    assert len(scans) == 2
    for eqn in scans:
        plan = _loop_plan(eqn.params["graph"], eqn.params["n_consts"], eqn.params["n_carry"],
                          eqn.params["length"])
        loop_matmuls = [e for e in plan.loop.eqns if e.prim.name == "matmul"]
        assert len(loop_matmuls) == 1, plan.loop
    backward = _loop_plan(scans[1].params["graph"], scans[1].params["n_consts"],
                          scans[1].params["n_carry"], scans[1].params["length"])
    assert len(backward.accumulators) == 2  # the gradients of u and w
    assert all(e.inputs[0].aval.ndim == 2 for e in backward.after.eqns if e.prim.name == "matmul")
    expected = ft.grad(loss)(p, xs)
    got = ft.jit(ft.grad(loss))(p, xs)
    for k in p:
        close(got[k], expected[k], 1e-10)


def test_a_graph_with_a_while_loop_runs_as_compiled_segments():
    def f(x):
        y = fnp.sin(x) * 2.0
        n = ft.lax.while_loop(lambda v: fnp.sum(v) < 100.0, lambda v: v * 2.0, y + 1.0)
        return fnp.cos(n) + y

    x = mx.array([0.5, 1.0], mx.float64)
    graph = ft.make_graph(f)(x)
    assert needs_host(graph)
    assert not needs_host(ft.make_graph(fnp.sin)(x))
    close(segmented(graph)(x)[0], f(x))
    jf = ft.jit(f)
    close(jf(x), f(x))
    close(jf(x + 1.0), f(x + 1.0))
    assert jf.trace_count == 1


@pytest.mark.parametrize("transpose", [False, True])
def test_solves_against_one_matrix_share_its_inverse(transpose):
    import ftorch.primitives as lax
    import ftorch.scipy.linalg as fsl
    from ftorch.backend.rewrites import for_lowering, share_triangular_inverses
    from ftorch.graph import simplify

    rng = np.random.default_rng(0)
    m = rng.standard_normal((5, 5))
    a = mx.array(m @ m.T + 5 * np.eye(5), dtype=mx.float64)
    y = mx.array(rng.standard_normal(5), dtype=mx.float64)

    def nll(a, y):
        chol = fnp.linalg.cholesky(a)
        alpha = fsl.cho_solve((chol, True), y)
        extra = lax.triangular_solve(chol, a, left_side=not transpose, lower=True,
                                     transpose_a=transpose)
        return 0.5 * fnp.sum(y * alpha) + fnp.sum(fnp.log(fnp.diagonal(chol))) + fnp.sum(extra)

    f = ft.value_and_grad(nll)
    graph = for_lowering(simplify(ft.make_graph(f)(a, y)))
    names = [e.prim.name for e in graph.eqns]
    assert names.count("triangular_inverse") == 1 and "triangular_solve" not in names
    typecheck(graph)
    for got, expected in zip(ft.tree.leaves(evaluate(graph, [a, y])), ft.tree.leaves(f(a, y))):
        close(got, expected)
    # A single solve is left to MLX's own.
    single = ft.make_graph(lambda a, b: lax.triangular_solve(a, b, lower=True))(a, a)
    assert share_triangular_inverses(single) is single
