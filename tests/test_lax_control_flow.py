"""lax control flow: cond, switch, while_loop, fori_loop, scan and map.

For every op: values against NumPy or Python loops, ``ft.jit`` against eager
(the same numbers, one trace across new values), ``ft.grad`` against finite
differences in float64 and against the same loop unrolled in Python,
``ft.vmap`` against Python loops (batched predicates, carries, xs, bounds),
nesting of transforms and loops, staging once whatever the trip count, and
the errors. The per-primitive rule checks (JVP, VJP, second order, vmap) run
on the cases in cases_lax_control_flow.py.

Bodies use functions MLX computes to float64 accuracy on CPU (tanh, arctan,
expm1, cosh): its float64 sin/cos/exp are float32-accurate there. Jit checks
run with MLX's compiler off (graph logic; each fused kernel would be a g++
run); tests/test_jit.py runs the rule cases compiled.
"""

import re

import mlx.core as mx
import numpy as np
import pytest
from cases_lax_control_flow import cond_args
from child import run_child
from harness import away_from_zero, compiler_off, floats
from hypothesis import given
from hypothesis import strategies as st

import ftorch as ft
import ftorch.lax as lax
import ftorch.numpy as fnp
from ftorch.core import registry

# ----------------------------------------------------------------------------
# Helpers
# ----------------------------------------------------------------------------


def f64(a):
    return mx.array(np.asarray(a, np.float64), dtype=mx.float64)


def i32(a):
    return mx.array(np.asarray(a, np.int32))


def same(actual, expected, rtol=1e-12, atol=1e-12):
    """Pytrees of arrays equal leaf by leaf, structure and shapes included."""
    a_leaves, a_tree = ft.tree.flatten(actual)
    e_leaves, e_tree = ft.tree.flatten(expected)
    assert a_tree == e_tree, (a_tree, e_tree)
    for a, e in zip(a_leaves, e_leaves):
        a, e = np.array(a), np.array(e)
        assert a.shape == e.shape, (a.shape, e.shape)
        np.testing.assert_allclose(a, e, rtol=rtol, atol=atol)


def check_jit(f, arg_sets, rtol=1e-12, atol=1e-12):
    """``ft.jit(f)`` gives eager's numbers on every argument set, staged once."""
    jitted = ft.jit(f)
    with compiler_off():
        for args in arg_sets:
            same(jitted(*args), f(*args), rtol, atol)
    assert jitted.trace_count == 1
    return jitted


def fd_grad(f, args, eps=1e-6):
    """Central finite differences of scalar ``f`` w.r.t. each (float64) argument."""
    grads = []
    for k, x in enumerate(args):
        base = np.array(x)
        g = np.zeros_like(base)
        for idx in np.ndindex(base.shape):
            step = np.zeros_like(base)
            step[idx] = eps
            plus = list(args)
            minus = list(args)
            plus[k], minus[k] = f64(base + step), f64(base - step)
            g[idx] = (f(*plus).item() - f(*minus).item()) / (2 * eps)
        grads.append(g)
    return grads


def check_grad(f, args, unrolled=None, rtol=1e-6, atol=1e-7):
    """``ft.grad`` of scalar ``f`` w.r.t. every argument against finite
    differences and (when given) against ``unrolled``, the same computation
    written as a Python loop."""
    argnums = tuple(range(len(args)))
    got = ft.grad(f, argnums=argnums)(*args)
    assert len(got) == len(args)
    scale = 1.0 + abs(f(*args).item())
    for g, d, a in zip(got, fd_grad(f, args), args):
        assert g.shape == a.shape and g.dtype == a.dtype
        np.testing.assert_allclose(np.array(g), d, rtol=rtol, atol=atol * scale,
                                   err_msg="grad vs finite differences")
    if unrolled is not None:
        same(got, ft.grad(unrolled, argnums=argnums)(*args), rtol=1e-10, atol=1e-12)
    return got


def sum_squares(fn):
    """A scalar loss: the sum of squares of every float leaf of ``fn``'s output."""
    def loss(*args):
        leaves = [x for x in ft.tree.leaves(fn(*args)) if mx.issubdtype(x.dtype, mx.floating)]
        total = f64(0.0)
        for x in leaves:
            total = total + fnp.sum(x * x)
        return total
    return loss


def stack(ys, n, like):
    """Per-step outputs ``ys`` stacked (zero steps: empty arrays of ``like``'s
    per-step shapes)."""
    if n == 0:
        return ft.tree.map(lambda a: mx.zeros((0, *a.shape), a.dtype), like,
                           is_leaf=lambda a: isinstance(a, ft.ShapeDtypeStruct))
    return ft.tree.map(lambda *leaves: fnp.stack(list(leaves)), *ys)


def scan_unrolled(f, init, xs=None, length=None, reverse=False):
    """``lax.scan`` as a Python loop (differentiable with ft transforms)."""
    n = length if xs is None else ft.tree.leaves(xs)[0].shape[0]
    carry, ys = init, [None] * n
    for t in (range(n - 1, -1, -1) if reverse else range(n)):
        carry, ys[t] = f(carry, None if xs is None else ft.tree.map(lambda a: a[t], xs))
    if n == 0:
        x0 = None if xs is None else ft.tree.map(
            lambda a: ft.ShapeDtypeStruct(a.shape[1:], a.dtype), xs)
        like = ft.eval_shape(f, init, x0)[1]
        return carry, stack(ys, 0, like)
    return carry, stack(ys, n, None)


def count_eqns(graph, name):
    return len(re.findall(rf"= {name}\[", str(graph)))


# ----------------------------------------------------------------------------
# cond and switch
# ----------------------------------------------------------------------------


def yes(x, w):
    return fnp.arctan(x * w) + x * x


def no(x, w):
    return fnp.expm1(0.5 * x) * w


def cond_f(x, w):
    return lax.cond(fnp.sum(x) > 0, yes, no, x, w)


def np_cond(x, w):
    return np.arctan(x * w) + x * x if x.sum() > 0 else np.expm1(0.5 * x) * w


@given(cond_args())
def test_cond_values_jit_and_grad(args):
    x, w = f64(args[0]), f64(args[1])
    same(cond_f(x, w), np_cond(*args))
    # One trace, whichever branch the new values take.
    check_jit(cond_f, [(x, w), (-x, w), (2 * x, -w)])
    picked = yes if args[0].sum() > 0 else no
    check_grad(sum_squares(cond_f), (x, w), sum_squares(picked))


def test_cond_pytree_operands_and_closures():
    a, b = f64([0.3, -1.2]), f64(0.7)

    def f(a, b):
        return lax.cond(b > 0,
                        lambda ops: {"s": fnp.tanh(ops[0]) * b, "t": ops[1]},
                        lambda ops: {"s": ops[0] * 2.0, "t": ops[1] * ops[1]},
                        (a, b * 3.0))

    same(f(a, b), {"s": np.tanh([0.3, -1.2]) * 0.7, "t": 2.1})
    same(f(a, -b), {"s": np.array([0.6, -2.4]), "t": 4.41})
    check_jit(f, [(a, b), (a, -b)])
    check_grad(sum_squares(f), (a, b))
    check_grad(sum_squares(f), (a, -b))


def test_cond_python_number_pred_is_its_truth_value():
    x = f64([1.0, 2.0])
    for pred, expected in [(0.0, -1), (2, 1), (-0.5, 1), (True, 1), (False, -1),
                           (np.bool_(False), -1), (mx.array(0), -1), (mx.array(0.5), 1),
                           (mx.array(3, mx.int32), 1)]:
        same(lax.cond(pred, lambda v: v, lambda v: -v, x), expected * np.array([1.0, 2.0]))


@given(floats((4, 3), -2.0, 2.0), floats((3,), -1.0, 1.0))
def test_cond_vmap_batched_pred_runs_both_branches_and_selects(xs, w):
    xs_m, w_m = f64(xs), f64(w)
    got = ft.vmap(cond_f, in_axes=(0, None))(xs_m, w_m)
    same(got, np.stack([np_cond(x, w) for x in xs]))
    # A batched predicate: both branches run and a select picks per example,
    # no cond equation is left.
    graph = ft.make_graph(ft.vmap(cond_f, in_axes=(0, None)))(xs_m, w_m)
    assert count_eqns(graph, "cond") == 0 and "where" in str(graph)
    # Gradients per example, through the select.
    loss = sum_squares(cond_f)
    grads = ft.vmap(ft.grad(loss, argnums=(0, 1)), in_axes=(0, None))(xs_m, w_m)
    for k in range(xs.shape[0]):
        same(tuple(g[k] for g in grads), ft.grad(loss, argnums=(0, 1))(xs_m[k], w_m), 1e-10, 1e-12)
    # Under jit too, traced once.
    check_jit(ft.vmap(cond_f, in_axes=(0, None)), [(xs_m, w_m), (-xs_m, w_m)])


def test_cond_vmap_unbatched_pred_keeps_one_cond():
    x, ws = f64([0.5, -0.2]), f64([[1.0, 2.0], [-0.5, 0.1], [0.3, 0.3]])
    for sign in (1, -1):
        got = ft.vmap(cond_f, in_axes=(None, 0))(sign * x, ws)
        same(got, np.stack([np_cond(sign * np.array(x), np.array(w)) for w in ws]))
    graph = ft.make_graph(ft.vmap(cond_f, in_axes=(None, 0)))(x, ws)
    assert count_eqns(graph, "cond") == 1


BRANCHES = [lambda x, w: fnp.arctan(x) * w,
            lambda x, w: x * x * w + x,
            lambda x, w: fnp.cosh(x * w)]
NP_BRANCHES = [lambda x, w: np.arctan(x) * w,
               lambda x, w: x * x * w + x,
               lambda x, w: np.cosh(x * w)]


def switch_f(i, x, w):
    return lax.switch(i, BRANCHES, x, w)


@given(st.integers(-3, 5), floats((2,), -1.5, 1.5), floats((2,), -1.5, 1.5))
def test_switch_values_jit_and_grad(i, x, w):
    k = min(max(i, 0), 2)  # clamped, as in JAX
    xm, wm = f64(x), f64(w)
    same(switch_f(i32(i), xm, wm), NP_BRANCHES[k](x, w))
    same(switch_f(i, xm, wm), NP_BRANCHES[k](x, w))  # a Python int index
    check_jit(switch_f, [(i32(j), xm, wm) for j in (i, 0, 1, 2, -7, 9)])
    check_grad(lambda x, w: fnp.sum(switch_f(i32(i), x, w) ** 2), (xm, wm),
               lambda x, w: fnp.sum(BRANCHES[k](x, w) ** 2))


def test_switch_index_out_of_range_is_clamped():
    x, w = f64([0.5, 2.0]), f64([1.5, -1.0])
    first, last = NP_BRANCHES[0](np.array(x), np.array(w)), NP_BRANCHES[2](np.array(x),
                                                                        np.array(w))
    for index, expected in [(-1, first), (-100, first), (3, last), (100, last)]:
        same(switch_f(index, x, w), expected)
        same(switch_f(i32(index), x, w), expected)
    jitted = check_jit(switch_f, [(i32(-5), x, w), (i32(7), x, w)])
    same(jitted(i32(-5), x, w), first)
    same(jitted(i32(7), x, w), last)
    # A single branch: every index picks it.
    same(lax.switch(4, [lambda v: v * 3.0], x), np.array(x) * 3.0)


@given(st.lists(st.integers(-2, 4), min_size=1, max_size=5), st.data())
def test_switch_vmap_batched_index(indices, data):
    n = len(indices)
    xs = data.draw(floats((n, 2), -1.5, 1.5))
    w = data.draw(floats((2,), -1.5, 1.5))
    expected = np.stack([NP_BRANCHES[min(max(i, 0), 2)](x, w) for i, x in zip(indices, xs)])
    got = ft.vmap(switch_f, in_axes=(0, 0, None))(i32(indices), f64(xs), f64(w))
    same(got, expected)
    # Batched operands, one index: one switch on the batch.
    got = ft.vmap(switch_f, in_axes=(None, 0, None))(i32(indices[0]), f64(xs), f64(w))
    same(got, np.stack([NP_BRANCHES[min(max(indices[0], 0), 2)](x, w) for x in xs]))


def test_cond_errors():
    x = mx.array([1.0, 2.0])
    with pytest.raises(TypeError, match=r"same structure.*false_fun.*true_fun"):
        lax.cond(True, lambda v: v, lambda v: (v, v), x)
    with pytest.raises(TypeError, match=re.escape(
            "output['b'] is f32[] from false_fun and f32[2] from true_fun")):
        lax.cond(True, lambda v: {"a": v, "b": v}, lambda v: {"a": v, "b": v[0]}, x)
    with pytest.raises(TypeError, match=re.escape(
            "output[1] is f16[2] from false_fun and f32[2] from true_fun")):
        lax.cond(True, lambda v: (v, v), lambda v: (v, v.astype(mx.float16)), x)
    with pytest.raises(TypeError, match=re.escape(
            "output is f32[2] from branches[0] and i32[2] from branches[2]")):
        lax.switch(0, [lambda v: v, lambda v: v, lambda v: v.astype(mx.int32)], x)
    with pytest.raises(TypeError, match=re.escape("pred must be a scalar, got an array of "
                                                  "bool[2]")):
        lax.cond(x > 1, lambda v: v, lambda v: -v, x)
    with pytest.raises(TypeError, match=re.escape("pred must be a scalar, got an array of "
                                                  "bool[1]")):
        lax.cond(mx.array([True]), lambda v: v, lambda v: -v, x)
    with pytest.raises(TypeError, match=re.escape("index must be an integer scalar, got "
                                                  "f32[]")):
        lax.switch(mx.array(1.0), [lambda v: v, lambda v: -v], x)
    with pytest.raises(TypeError, match=r"index must be an integer scalar"):
        lax.switch(1.0, [lambda v: v, lambda v: -v], x)
    with pytest.raises(TypeError, match=r"index must be a scalar"):
        lax.switch(mx.array([0, 1]), [lambda v: v, lambda v: -v], x)
    with pytest.raises(TypeError, match=r"non-empty"):
        lax.switch(0, [], x)
    with pytest.raises(TypeError, match=r"true_fun must be callable"):
        lax.cond(True, 1.0, lambda v: v, x)


# ----------------------------------------------------------------------------
# while_loop
# ----------------------------------------------------------------------------


def halve_until_small(x):
    """A data-dependent trip count: halve while sum(|x|) > 1, counting steps."""
    return lax.while_loop(lambda c: fnp.sum(fnp.abs(c[1])) > 1.0,
                          lambda c: (c[0] + 1, c[1] * 0.5), (mx.array(0), x))


def np_halve_until_small(x):
    n = 0
    while np.abs(x).sum() > 1.0:
        n, x = n + 1, x * 0.5
    return n, x


def three_steps(x, w):
    """A fixed trip count (a counter beside a float state)."""
    return lax.while_loop(lambda c: c[0] < 3,
                          lambda c: (c[0] + 1, fnp.arctan(c[1]) * w + x), (mx.array(0), x))[1]


def three_steps_unrolled(x, w):
    s = x
    for _ in range(3):
        s = fnp.arctan(s) * w + x
    return s


@given(floats((3,), -8.0, 8.0))
def test_while_loop_values_and_jit(x):
    n, expected = np_halve_until_small(x)
    same(halve_until_small(f64(x)), (n, expected))
    # Different trip counts (zero included), one trace.
    check_jit(halve_until_small, [(f64(x),), (f64(x * 10),), (f64(x * 0.01),)])


@given(floats((3,), -8.0, 8.0), floats((3,), -1.0, 1.0))
def test_while_loop_jvp(x, t):
    xm, tm = f64(x), f64(t)
    n, _ = np_halve_until_small(x)
    (count, out), (count_t, out_t) = ft.jvp(halve_until_small, (xm,), (tm,))
    assert count.item() == n
    same(out_t, t * 0.5 ** n)
    w = f64([0.7, -1.2, 0.4])
    out, out_t = ft.jvp(three_steps, (xm, w), (tm, f64([0.3, 0.1, -0.2])))
    ref, ref_t = ft.jvp(three_steps_unrolled, (xm, w), (tm, f64([0.3, 0.1, -0.2])))
    same(out, ref)
    same(out_t, ref_t, 1e-10, 1e-12)
    eps = 1e-6
    fd = (np.array(three_steps(f64(x + eps * t), w)) - np.array(three_steps(f64(x - eps * t), w)))
    np.testing.assert_allclose(np.array(ft.jvp(lambda x: three_steps(x, w), (xm,), (tm,))[1]),
                               fd / (2 * eps), rtol=1e-6, atol=1e-7)


def test_while_loop_grad_raises():
    x, w = f64([0.5, -1.0, 2.0]), f64([0.7, -1.2, 0.4])
    with pytest.raises(ValueError, match="fori_loop"):
        ft.grad(lambda x: fnp.sum(three_steps(x, w)))(x)
    with pytest.raises(ValueError, match="fori_loop"):
        ft.vjp(lambda x: halve_until_small(x)[1], x)
    # fori_loop with traced bounds is a while_loop: the same.
    f = ft.jit(lambda x, n: lax.fori_loop(0, n, lambda i, v: v * 0.5, x))
    with pytest.raises(ValueError, match="fori_loop"):
        ft.grad(lambda x: fnp.sum(f(x, mx.array(3))))(x)


@given(st.lists(st.floats(-8.0, 8.0), min_size=1, max_size=5))
def test_while_loop_vmap_batched_condition(values):
    xs = np.stack([np.array([v, v / 3.0, -v / 2.0]) for v in values])
    expected = [np_halve_until_small(x) for x in xs]
    counts, outs = ft.vmap(halve_until_small)(f64(xs))
    # Every example ran its own trip count: the finished ones were frozen.
    same(counts, np.array([n for n, _ in expected]))
    same(outs, np.stack([o for _, o in expected]))
    # Nested: while inside jit inside vmap.
    counts, outs = ft.vmap(ft.jit(halve_until_small))(f64(xs))
    same(counts, np.array([n for n, _ in expected]))
    same(outs, np.stack([o for _, o in expected]))


def test_while_loop_vmap_unbatched_condition_and_batched_carry():
    # The predicate depends on the counter only (not batched); the state is.
    x, ws = f64([0.5, -1.0]), f64([[0.7, -1.2], [0.1, 0.2], [2.0, -0.3]])
    got = ft.vmap(three_steps, in_axes=(None, 0))(x, ws)
    same(got, np.stack([np.array(three_steps(x, w)) for w in ws]))
    # The predicate reads an unbatched carry while another carry is batched;
    # a carry that is unbatched at first becomes batched through the body.
    def f(x, w):
        return lax.while_loop(lambda c: c[0] < 4,
                              lambda c: (c[0] + 1, c[1] * w + c[2], c[2] + 1.0),
                              (mx.array(0), x, f64(0.0)))
    got = ft.vmap(f, in_axes=(None, 0))(x, ws)
    for k in range(ws.shape[0]):
        same(tuple(g[k] for g in got), f(x, ws[k]))


def test_while_loop_errors():
    x = mx.array([1.0, 2.0])
    with pytest.raises(TypeError, match=re.escape("cond_fun must return a scalar, got "
                                                  "bool[2]")):
        lax.while_loop(lambda v: v < 3, lambda v: v + 1, x)
    with pytest.raises(TypeError, match=re.escape(
            "carry is f32[2] in init_val and f32[1] in body_fun's output")):
        lax.while_loop(lambda v: True, lambda v: v[:1], x)
    with pytest.raises(TypeError, match=re.escape(
            "carry[1] is f32[2] in init_val and f16[2] in body_fun's output. " + CARRY_HINT)):
        lax.while_loop(lambda c: c[0] < 2, lambda c: (c[0] + 1, c[1].astype(mx.float16)),
                       (mx.array(0), x))


# ----------------------------------------------------------------------------
# fori_loop
# ----------------------------------------------------------------------------


def fori_body(i, v, x):
    return fnp.tanh(v * 0.9) + fnp.astype(i, x.dtype) * 0.1 * x


def fori_static(x, lo=1, hi=4):
    return lax.fori_loop(lo, hi, lambda i, v: fori_body(i, v, x), x)


def fori_unrolled(x, lo=1, hi=4):
    v = x
    for i in range(lo, hi):
        v = fori_body(mx.array(i), v, x)
    return v


def np_fori(x, lo, hi):
    v = x
    for i in range(lo, hi):
        v = np.tanh(v * 0.9) + i * 0.1 * x
    return v


@given(floats((3,), -2.0, 2.0), st.integers(-2, 3), st.integers(0, 4))
def test_fori_loop_static_bounds(x, lo, n):
    hi = lo + n
    xm = f64(x)
    same(fori_static(xm, lo, hi), np_fori(x, lo, hi))
    # Static bounds: a scan (differentiable in reverse mode), whatever the
    # bounds' form (Python ints or concrete arrays).
    same(lax.fori_loop(i32(lo), i32(hi), lambda i, v: fori_body(i, v, xm), xm),
         np_fori(x, lo, hi))
    check_jit(lambda x: fori_static(x, lo, hi), [(xm,), (xm * 0.5,)])
    check_grad(lambda x: fnp.sum(fori_static(x, lo, hi) ** 2), (xm,),
               lambda x: fnp.sum(fori_unrolled(x, lo, hi) ** 2))
    graph = ft.make_graph(lambda x: fori_static(x, lo, hi))(xm)
    assert count_eqns(graph, "scan") == 1 and count_eqns(graph, "while") == 0


def test_fori_loop_empty_range_returns_init():
    x = f64([1.0, -2.0])
    same(lax.fori_loop(3, 1, lambda i, v: v + 1.0, x), np.array([1.0, -2.0]))
    same(lax.fori_loop(2, 2, lambda i, v: v + 1.0, x), np.array([1.0, -2.0]))


def fori_traced(lo, hi, x):
    return lax.fori_loop(lo, hi, lambda i, v: fori_body(i, v, x), x)


@given(floats((3,), -2.0, 2.0))
def test_fori_loop_traced_bounds_under_jit(x):
    xm = f64(x)
    bounds = [(1, 4), (0, 0), (2, 7), (3, 1), (-2, 1)]
    jitted = check_jit(fori_traced, [(i32(lo), i32(hi), xm) for lo, hi in bounds])
    for lo, hi in bounds:
        same(jitted(i32(lo), i32(hi), xm), np_fori(x, lo, hi))
    # Traced bounds: a while_loop.
    graph = ft.make_graph(fori_traced)(i32(1), i32(4), xm)
    assert count_eqns(graph, "while") == 1 and count_eqns(graph, "scan") == 0
    # Forward mode through it.
    t = f64([0.3, -0.1, 1.0])
    out_t = ft.jvp(lambda x: jitted(i32(1), i32(4), x), (xm,), (t,))[1]
    same(out_t, ft.jvp(fori_unrolled, (xm,), (t,))[1], 1e-10, 1e-12)


@given(st.lists(st.tuples(st.integers(-1, 3), st.integers(0, 4)), min_size=1, max_size=4),
       floats((3,), -2.0, 2.0))
def test_fori_loop_vmap_batched_bounds(bounds, x):
    los = [lo for lo, _ in bounds]
    his = [lo + n for lo, n in bounds]
    expected = np.stack([np_fori(x, lo, hi) for lo, hi in zip(los, his)])
    got = ft.vmap(fori_traced, in_axes=(0, 0, None))(i32(los), i32(his), f64(x))
    same(got, expected)
    # Batched upper bound and batched init.
    xs = np.stack([x * (k + 1) for k in range(len(bounds))])
    got = ft.vmap(fori_traced, in_axes=(None, 0, 0))(i32(los[0]), i32(his), f64(xs))
    same(got, np.stack([np_fori(xk, los[0], hi) for xk, hi in zip(xs, his)]))


def test_fori_loop_bound_errors():
    x = f64(1.0)
    with pytest.raises(TypeError, match="integer"):
        lax.fori_loop(0.0, 3, lambda i, v: v, x)
    with pytest.raises(TypeError, match="integer"):
        ft.jit(lambda n: lax.fori_loop(0, n, lambda i, v: v, x))(f64(3.0))


CARRY_HINT = ("The carry keeps its type from one iteration to the next: make body_fun return "
              "init_val's structure, shapes and dtypes")
FORI_INIT = {"w": mx.zeros(3), "n": mx.array(0)}


@pytest.mark.parametrize("body, message", [
    (lambda i, v: {"w": v["w"][:2], "n": v["n"]},
     "fori_loop: body_fun(i, val)'s output and init_val must have the same shapes and dtypes, "
     "but val['w'] is f32[3] in init_val and f32[2] in body_fun's output. " + CARRY_HINT),
    (lambda i, v: {"w": v["w"], "n": v["n"] + 0.5},
     "but val['n'] is i32[] in init_val and f32[] in body_fun's output. " + CARRY_HINT),
    (lambda i, v: (v["w"], v["n"]),
     "fori_loop: body_fun(i, val)'s output and init_val must have the same structure, but it is "
     "PyTreeSpec({'n': *, 'w': *}) in init_val and PyTreeSpec((*, *)) in body_fun's output. "
     + CARRY_HINT),
], ids=["shape", "dtype", "structure"])
@pytest.mark.parametrize("bounds", ["static", "traced"])
def test_fori_loop_carry_errors_name_fori_loop_and_the_users_carry(body, message, bounds):
    # Static bounds make a scan, traced ones a while_loop: either way the
    # error is fori_loop's, about init_val's leaves (no loop index in it).
    if bounds == "static":
        def run():
            return lax.fori_loop(0, 3, body, FORI_INIT)
    else:
        def run():
            return ft.jit(lambda n: lax.fori_loop(0, n, body, FORI_INIT))(mx.array(3))
    with pytest.raises(TypeError, match=re.escape(message)):
        run()


def test_fori_loop_carry_error_for_a_python_scalar_init_val():
    with pytest.raises(TypeError, match=re.escape(
            "but val is i32[] in init_val and f32[] in body_fun's output. " + CARRY_HINT
            + " (cast with .astype, or give init_val the dtype body_fun produces, e.g. 0.0 "
            "rather than 0 for a float carry)")):
        lax.fori_loop(0, 3, lambda i, v: v + 0.5, 0)
    with pytest.raises(TypeError, match=re.escape("fori_loop: body_fun(i, val)'s output")):
        ft.vmap(lambda x: lax.fori_loop(0, 3, lambda i, v: v[:1], x))(mx.zeros((2, 3)))


# ----------------------------------------------------------------------------
# scan
# ----------------------------------------------------------------------------


def rnn_step(W):
    def step(h, x):
        new = fnp.tanh(W @ h + x)
        return new, fnp.arctan(new) * h
    return step


def rnn(W, h0, xs, reverse=False):
    return lax.scan(rnn_step(W), h0, xs, reverse=reverse)


def np_rnn(W, h0, xs, reverse=False):
    h, ys = h0, [None] * len(xs)
    for t in (range(len(xs) - 1, -1, -1) if reverse else range(len(xs))):
        new = np.tanh(W @ h + xs[t])
        h, ys[t] = new, np.arctan(new) * h
    return h, np.stack(ys) if ys else np.zeros((0, len(h0)))


@st.composite
def rnn_inputs(draw):
    d = draw(st.integers(1, 3))
    n = draw(st.integers(0, 4))
    return (draw(floats((d, d), -1.0, 1.0)), draw(floats((d,), -1.0, 1.0)),
            draw(floats((n, d), -2.0, 2.0)), draw(st.booleans()))


@given(rnn_inputs())
def test_scan_rnn_values_jit_and_grad(inputs):
    W, h0, xs, reverse = inputs
    args = (f64(W), f64(h0), f64(xs))
    same(rnn(*args, reverse=reverse), np_rnn(W, h0, xs, reverse), 1e-12, 1e-14)

    def f(W, h0, xs):
        return rnn(W, h0, xs, reverse)

    check_jit(f, [args, (args[0] * 0.5, -args[1], args[2] + 1.0)])
    check_grad(sum_squares(f), args,
               sum_squares(lambda W, h0, xs: scan_unrolled(rnn_step(W), h0, xs,
                                                           reverse=reverse)))


def _pytree_step(w):
    def step(carry, x):
        h, c = carry["h"], carry["c"]
        gate = fnp.tanh(h * w + x[0])
        c = c / (1.0 + 0.1 * x[1] * x[1]) + gate
        h = fnp.arctan(c) * gate
        return {"h": h, "c": c}, (h, fnp.sum(c * x[1]))
    return step


def _counter_step(c, x):
    i, s = c
    return (i + 1, s * 0.9 + fnp.astype(i, s.dtype) * x), fnp.tanh(s)


# name -> (fn of float64 args, arg shapes, scan kwargs for the unrolled reference)
SCAN_VARIANTS = {
    "pytree-carry-and-xs": (
        lambda h, c, a, b, w: lax.scan(_pytree_step(w), {"h": h, "c": c}, (a, b)),
        lambda h, c, a, b, w: scan_unrolled(_pytree_step(w), {"h": h, "c": c}, (a, b)),
        [(2,), (2,), (3, 2), (3,), (2,)]),
    "pytree-reverse": (
        lambda h, c, a, b, w: lax.scan(_pytree_step(w), {"h": h, "c": c}, (a, b),
                                       reverse=True),
        lambda h, c, a, b, w: scan_unrolled(_pytree_step(w), {"h": h, "c": c}, (a, b),
                                            reverse=True),
        [(2,), (2,), (4, 2), (4,), (2,)]),
    "no-xs-with-length": (
        lambda c, w: lax.scan(lambda c, _: (fnp.tanh(c * w) + 0.5, c * c), c, None, length=4),
        lambda c, w: scan_unrolled(lambda c, _: (fnp.tanh(c * w) + 0.5, c * c), c, None,
                                   length=4),
        [(3,), (3,)]),
    "length-zero-no-xs": (
        lambda c, w: lax.scan(lambda c, _: (c * w, c), c, None, length=0),
        lambda c, w: scan_unrolled(lambda c, _: (c * w, c), c, None, length=0),
        [(3,), (3,)]),
    "length-zero-xs": (
        lambda c, xs: lax.scan(lambda c, x: (c * x, c + x), c, xs),
        lambda c, xs: scan_unrolled(lambda c, x: (c * x, c + x), c, xs),
        [(2,), (0, 2)]),
    "length-matching-xs": (
        lambda c, xs: lax.scan(lambda c, x: (fnp.tanh(c + x), c * x), c, xs, length=3),
        lambda c, xs: scan_unrolled(lambda c, x: (fnp.tanh(c + x), c * x), c, xs),
        [(2,), (3, 2)]),
    "ys-none": (
        lambda c, xs: lax.scan(lambda c, x: (fnp.arctan(c) * x + c, None), c, xs),
        lambda c, xs: (scan_unrolled(lambda c, x: (fnp.arctan(c) * x + c, None), c, xs)[0],
                       None),
        [(2,), (3, 2)]),
    "carry-none": (
        lambda xs: lax.scan(lambda c, x: (None, fnp.tanh(x) * x), None, xs),
        lambda xs: (None, fnp.tanh(xs) * xs),
        [(3, 2)]),
    "int-counter-carry": (
        lambda s, xs: lax.scan(_counter_step, (mx.array(0), s), xs),
        lambda s, xs: scan_unrolled(_counter_step, (mx.array(0), s), xs),
        [(2,), (4, 2)]),
    "unroll-arg": (
        lambda c, xs: lax.scan(lambda c, x: (fnp.tanh(c * x), c), c, xs, unroll=2),
        lambda c, xs: scan_unrolled(lambda c, x: (fnp.tanh(c * x), c), c, xs),
        [(2,), (3, 2)]),
}


@pytest.mark.parametrize("name", sorted(SCAN_VARIANTS))
@given(data=st.data())
def test_scan_variants(name, data):
    fn, unrolled, shapes = SCAN_VARIANTS[name]
    args = tuple(f64(data.draw(floats(s, -1.5, 1.5))) for s in shapes)
    same(fn(*args), unrolled(*args), 1e-12, 1e-14)
    check_jit(fn, [args, tuple(a * 0.5 for a in args)])
    check_grad(sum_squares(fn), args, sum_squares(unrolled))


@given(rnn_inputs(), st.integers(1, 3))
def test_scan_vmap(inputs, size):
    W, h0, xs, reverse = inputs
    W, h0, xs = f64(W), f64(h0), f64(xs)

    def f(W, h0, xs):
        return rnn(W, h0, xs, reverse)

    batch = [1.0 + 0.25 * k for k in range(size)]
    Ws = mx.stack([W * b for b in batch])
    h0s = mx.stack([h0 * b for b in batch])
    xss = mx.stack([xs - b for b in batch])
    for in_axes, batched in [((None, 0, None), (W, h0s, xs)),    # a batched carry
                             ((None, None, 0), (W, h0, xss)),    # batched xs
                             ((0, None, None), (Ws, h0, xs)),    # a batched const
                             ((0, 0, 0), (Ws, h0s, xss))]:
        got = ft.vmap(f, in_axes=in_axes)(*batched)
        per = [f(*[a if ax is None else a[k] for a, ax in zip(batched, in_axes)])
               for k in range(size)]
        same(got, stack(per, size, None), 1e-12, 1e-14)
    # xs batched along their second axis (not the scanned one), output batch
    # axis last.
    got = ft.vmap(f, in_axes=(None, None, 1), out_axes=-1)(W, h0, mx.moveaxis(xss, 0, 1))
    per = [f(W, h0, xss[k]) for k in range(size)]
    same(got, ft.tree.map(lambda *a: fnp.stack(list(a), axis=-1), *per), 1e-12, 1e-14)


def test_scan_stages_body_once_whatever_the_length():
    calls = []

    def body(c, x):
        calls.append(None)
        return fnp.tanh(c * 0.9 + x), c

    def f(xs):
        return lax.scan(body, f64(0.0), xs)

    for n in (3, 300):
        xs = f64(np.linspace(-1, 1, n))
        del calls[:]
        f(xs)
        assert len(calls) == 1, f"eager, length {n}: body called {len(calls)} times"
        del calls[:]
        jitted = ft.jit(f)
        with compiler_off():
            jitted(xs)
            jitted(xs * 2)
        assert len(calls) == 1 and jitted.trace_count == 1
        del calls[:]
        ft.grad(lambda xs: fnp.sum(f(xs)[1]))(xs)
        assert len(calls) == 1, f"grad, length {n}: body called {len(calls)} times"
        del calls[:]
        ft.vmap(f)(mx.stack([xs, xs]))
        assert len(calls) == 1, f"vmap, length {n}: body called {len(calls)} times"
        graph = ft.make_graph(f)(xs)
        assert count_eqns(graph, "scan") == 1, str(graph)
        assert f"length={n}" in str(graph)
        assert len(graph.eqns) <= 3  # the scan (and nothing per step)


def test_make_graph_shows_one_equation_per_control_flow_op():
    x = f64([0.5, -1.0])
    g = ft.make_graph(lambda x: lax.while_loop(lambda v: fnp.sum(v) < 10.0,
                                               lambda v: v * 2.0, x))(x)
    assert count_eqns(g, "while") == 1
    g = ft.make_graph(lambda x: cond_f(x, x))(x)
    assert count_eqns(g, "cond") == 1
    g = ft.make_graph(lambda x: lax.map(lambda v: v * 2.0, x))(f64(np.ones((50, 2))))
    assert count_eqns(g, "scan") == 1


# Under jit a scan body is split: carry-independent work batched over all
# steps before the loop, the recurrence per step, the rest (ys, and
# accumulator carries c + v_t, summed) batched after it. Each body below
# stresses one path of that split; jit must give eager's numbers and
# gradients.
_PLAN_BODIES = {
    "input-projection": lambda W, U, c, xs: lax.scan(
        lambda h, x: (fnp.tanh(W @ h + U @ x), h * 2.0), c, xs),
    "accumulate-x": lambda W, U, c, xs: lax.scan(
        lambda c, x: ((c[0] + U @ x, fnp.tanh(c[1]) * x[0]), c[1]), (c, c), xs),
    "accumulate-const-and-fixed": lambda W, U, c, xs: lax.scan(
        lambda c, x: ((c[0] + W[0], c[1] + fnp.tanh(W[1]), fnp.tanh(c[2] + x[0])), c[2]),
        (c, c, c), xs),
    "accumulate-recurrence": lambda W, U, c, xs: lax.scan(
        lambda c, x: ((c[0] + fnp.tanh(c[1]) * 3.0, fnp.tanh(W @ c[1] + U @ x)), x),
        (c, c), xs, reverse=True),
    "accumulate-outer-products": lambda W, U, c, xs: lax.scan(
        lambda c, x: ((c[0] + fnp.reshape(c[1], (3, 1)) @ fnp.reshape(x, (1, 2)),
                       fnp.tanh(W @ c[1] + U @ x)), None), (U * 0.0, c), xs),
    "accumulator-feeding-accumulator": lambda W, U, c, xs: lax.scan(
        lambda c, x: ((c[0] + U @ x, c[1] + c[0], c[2] + c[2]), c[1]), (c, c, c), xs),
    "passthroughs": lambda W, U, c, xs: lax.scan(
        lambda c, x: ((x, c[2], fnp.tanh(W[0]), c[3]), (c[1], W, x)), (U[0], c, c, c), xs),
    "nested-scan-and-cond": lambda W, U, c, xs: lax.scan(
        lambda c, x: (lax.cond(fnp.sum(x) > 0,
                               lambda c: lax.scan(lambda d, z: (fnp.tanh(d * z + c), d), c,
                                                  U @ x * fnp.ones((2, 3)))[0],
                               lambda c: c * fnp.sum(x), c), c), c, xs),
}


@pytest.mark.parametrize("name", sorted(_PLAN_BODIES))
def test_scan_under_jit_splits_the_body(name):
    rng = np.random.default_rng(1)
    args = (f64(rng.uniform(-1, 1, (3, 3))), f64(rng.uniform(-1, 1, (3, 2))),
            f64(rng.uniform(-1, 1, 3)), f64(rng.uniform(-1, 1, (4, 2))))
    fn = _PLAN_BODIES[name]
    check_jit(fn, [args, tuple(a * 0.5 for a in args)], 1e-10, 1e-12)
    loss = ft.grad(sum_squares(fn), argnums=(0, 1, 2, 3))
    check_jit(loss, [args], 1e-10, 1e-12)
    for length in (0, 1):
        short = (*args[:3], args[3][:length])
        same(ft.jit(fn)(*short), fn(*short), 1e-10, 1e-12)


def test_scan_errors():
    x = mx.array([1.0, 2.0])
    with pytest.raises(TypeError, match=re.escape(
            "carry is f32[2] in init and f32[] in f's output carry")):
        lax.scan(lambda c, v: (c[0], v), x, x)
    with pytest.raises(TypeError, match=re.escape(
            "carry['c'] is f32[2] in init and f16[2] in f's output carry")):
        lax.scan(lambda c, v: ({"h": c["h"], "c": c["c"].astype(mx.float16)}, v),
                 {"h": x, "c": x}, x)
    with pytest.raises(TypeError, match=re.escape(
            "carry[1] is f32[2] in init and f32[1] in f's output carry. The carry keeps its "
            "type from one iteration to the next: make f return init's structure")):
        lax.scan(lambda c, v: ((c[0], c[1][:1]), v), (x, x), x)
    with pytest.raises(TypeError, match=r"same structure"):
        lax.scan(lambda c, v: ((c, c), v), x, x)
    with pytest.raises(ValueError, match=re.escape(
            "xs['a'] has 2, xs['b'] has 3")):
        lax.scan(lambda c, v: (c, v), x, {"a": mx.zeros((2, 1)), "b": mx.zeros((3,))})
    with pytest.raises(ValueError, match=re.escape("length=3 but xs has leading size 2")):
        lax.scan(lambda c, v: (c, v), x, x, length=3)
    with pytest.raises(ValueError, match=r"no xs.*length="):
        lax.scan(lambda c, v: (c, v), x)
    with pytest.raises(ValueError, match=r"0-d"):
        lax.scan(lambda c, v: (c, v), x, mx.array(1.0))
    with pytest.raises(TypeError, match=r"pair \(carry, y\)"):
        lax.scan(lambda c, v: c, x, x)
    with pytest.raises(TypeError, match=r"length must be a non-negative"):
        lax.scan(lambda c, v: (c, v), x, None, length=-1)


# ----------------------------------------------------------------------------
# map
# ----------------------------------------------------------------------------


def map_body(v):
    return {"a": fnp.tanh(v) * v, "s": fnp.sum(fnp.arctan(v))}


def np_map(xs):
    return {"a": np.tanh(xs) * xs, "s": np.arctan(xs).sum(-1)}


@pytest.mark.parametrize("n,batch_size", [(5, None), (7, 3), (6, 3), (2, 5), (4, 1),
                                          (0, None)])
@given(data=st.data())
def test_map(n, batch_size, data):
    xs = data.draw(floats((n, 2), -2.0, 2.0))
    xm = f64(xs)

    def f(xs):
        return lax.map(map_body, xs, batch_size=batch_size)

    same(f(xm), np_map(xs), 1e-12, 1e-14)
    check_jit(f, [(xm,), (xm * 2,)])
    if n:
        check_grad(sum_squares(f), (xm,),
                   sum_squares(lambda xs: stack([map_body(xs[k]) for k in range(n)], n, None)))
        got = ft.vmap(f, in_axes=1)(xm)  # mapping over the other axis
        same(got, stack([f(xm[:, k]) for k in range(2)], 2, None), 1e-12, 1e-14)


def test_map_errors():
    with pytest.raises(ValueError, match=r"batch_size must be a positive int"):
        lax.map(lambda v: v, f64(np.ones(3)), batch_size=0)


# ----------------------------------------------------------------------------
# Nesting
# ----------------------------------------------------------------------------


def rnn_loss(W, h0, xs):
    h, ys = rnn(W, h0, xs)
    return fnp.sum(ys * ys) + fnp.sum(h)


def rnn_loss_unrolled(W, h0, xs):
    h, ys = scan_unrolled(rnn_step(W), h0, xs)
    return fnp.sum(ys * ys) + fnp.sum(h)


def test_scan_inside_grad_inside_vmap_inside_jit():
    rng = np.random.default_rng(0)
    W = f64(rng.uniform(-1, 1, (2, 2)))
    h0s, xss = f64(rng.uniform(-1, 1, (3, 2))), f64(rng.uniform(-2, 2, (3, 4, 2)))
    jitted = ft.jit(ft.vmap(ft.grad(rnn_loss, argnums=(0, 2)), in_axes=(None, 0, 0)))
    with compiler_off():
        got = jitted(W, h0s, xss)
        jitted(W * 0.5, h0s, xss)
    assert jitted.trace_count == 1
    for k in range(3):
        expected = ft.grad(rnn_loss_unrolled, argnums=(0, 2))(W, h0s[k], xss[k])
        same((got[0][k], got[1][k]), expected, 1e-10, 1e-12)


def inner_outer(w, xs):
    """A scan over rows whose body scans over the row's entries."""
    def inner(c, x):
        return fnp.tanh(c * w + x), c * x

    def outer(c, row):
        c2, ys = lax.scan(inner, c, row)
        return c2 * 0.5, fnp.sum(ys)

    return lax.scan(outer, f64(0.1), xs)


def inner_outer_unrolled(w, xs):
    c, outs = f64(0.1), []
    for r in range(xs.shape[0]):
        ys = []
        for t in range(xs.shape[1]):
            c, y = fnp.tanh(c * w + xs[r, t]), c * xs[r, t]
            ys.append(y)
        c = c * 0.5
        outs.append(fnp.sum(fnp.stack(ys)))
    return c, fnp.stack(outs)


@given(floats((), -1.5, 1.5), floats((3, 2), -1.5, 1.5))
def test_scan_of_scan(w, xs):
    args = (f64(w), f64(xs))
    same(inner_outer(*args), inner_outer_unrolled(*args), 1e-12, 1e-14)
    check_jit(inner_outer, [args, (args[0] * 2, args[1])])
    check_grad(sum_squares(inner_outer), args, sum_squares(inner_outer_unrolled))
    tiled = mx.repeat(args[1][:, None, :], 2, axis=1)  # a batch axis 1 of size 2
    got = ft.vmap(inner_outer, in_axes=(None, 1))(args[0], tiled)
    same(got, ft.tree.map(lambda a: fnp.stack([a, a]), inner_outer(*args)), 1e-12, 1e-14)


def cond_in_scan(w, xs):
    def step(c, x):
        c = lax.cond(x > 0, lambda c: fnp.tanh(c * w + x), lambda c: c * x - w, c)
        return c, c * c
    return lax.scan(step, f64(0.3), xs)


def cond_in_scan_unrolled(w, xs):
    c, ys = f64(0.3), []
    for t in range(xs.shape[0]):
        x = xs[t]
        c = fnp.tanh(c * w + x) if bool(x > 0) else c * x - w
        ys.append(c * c)
    return c, fnp.stack(ys)


@given(floats((), -1.5, 1.5), floats((4,), -2.0, 2.0))
def test_cond_inside_scan(w, xs):
    xs = away_from_zero(xs)
    args = (f64(w), f64(xs))
    same(cond_in_scan(*args), cond_in_scan_unrolled(*args), 1e-12, 1e-14)
    check_jit(cond_in_scan, [args, (args[0], -args[1])])
    check_grad(sum_squares(cond_in_scan), args, sum_squares(cond_in_scan_unrolled))
    # Per example, the predicate at each step is batched.
    xss = mx.stack([args[1], -args[1], args[1] * 2])
    got = ft.vmap(cond_in_scan, in_axes=(None, 0))(args[0], xss)
    same(got, stack([cond_in_scan(args[0], xss[k]) for k in range(3)], 3, None), 1e-12, 1e-14)


@given(floats((), -1.0, 1.0), floats((3,), -1.5, 1.5))
def test_grad_of_grad_through_scan(w, xs):
    wm, xm = f64(w), f64(xs)

    def f(w, xs):
        return fnp.sum(lax.scan(lambda c, x: (fnp.tanh(c * w + x), c * w), f64(0.2), xs)[1] ** 2)

    def f_unrolled(w, xs):
        return fnp.sum(scan_unrolled(lambda c, x: (fnp.tanh(c * w + x), c * w), f64(0.2),
                                     xs)[1] ** 2)

    d2 = ft.grad(ft.grad(f))(wm, xm)
    same(d2, ft.grad(ft.grad(f_unrolled))(wm, xm), 1e-10, 1e-12)
    # The second derivative against finite differences of the first.
    check_grad(lambda w: ft.grad(f)(w, xm), (wm,), lambda w: ft.grad(f_unrolled)(w, xm))
    # Mixed second derivatives (w, xs) through the scan.
    mixed = ft.jacrev(ft.grad(f), argnums=1)(wm, xm)
    same(mixed, ft.jacrev(ft.grad(f_unrolled), argnums=1)(wm, xm), 1e-10, 1e-12)


def test_transform_compositions():
    rng = np.random.default_rng(2)
    W, h0, xs = (f64(rng.uniform(-1, 1, (2, 2))), f64(rng.uniform(-1, 1, 2)),
                 f64(rng.uniform(-2, 2, (4, 2))))
    with compiler_off():
        # grad of jit, hessian, linearize through scan.
        same(ft.grad(ft.jit(rnn_loss), argnums=(0, 1, 2))(W, h0, xs),
             ft.grad(rnn_loss_unrolled, argnums=(0, 1, 2))(W, h0, xs), 1e-10, 1e-12)
        same(ft.hessian(rnn_loss)(W, h0, xs), ft.hessian(rnn_loss_unrolled)(W, h0, xs),
             1e-10, 1e-12)
        lin = ft.linearize(lambda W: rnn_loss(W, h0, xs), W)[1]
        lin_u = ft.linearize(lambda W: rnn_loss_unrolled(W, h0, xs), W)[1]
        same(lin(W * 0.1), lin_u(W * 0.1), 1e-10, 1e-12)
        # vmap of vmap of scan.
        Ws, xss = mx.stack([W, W * 0.5]), mx.stack([xs, -xs, xs * 0.3])
        got = ft.vmap(ft.vmap(rnn_loss, in_axes=(0, None, None)), in_axes=(None, None, 0))(
            Ws, h0, xss)
        same(got, np.array([[rnn_loss(Ws[i], h0, xss[j]).item() for i in range(2)]
                            for j in range(3)]))
        # Forward mode through while_loop: jacfwd, twice, and under jit.
        x, w = f64([0.5, -1.0, 2.0]), f64([0.7, -1.2, 0.4])
        same(ft.jacfwd(three_steps)(x, w), ft.jacfwd(three_steps_unrolled)(x, w), 1e-10, 1e-12)
        same(ft.jacfwd(ft.jacfwd(lambda x: fnp.sum(three_steps(x, w))))(x),
             ft.jacfwd(ft.jacfwd(lambda x: fnp.sum(three_steps_unrolled(x, w))))(x),
             1e-10, 1e-12)
        jvp_w = ft.jit(lambda x, t: ft.jvp(lambda x: three_steps(x, w), (x,), (t,)))
        same(jvp_w(x, w), ft.jvp(lambda x: three_steps_unrolled(x, w), (x,), (w,)), 1e-10, 1e-12)
        # vmap of a while_loop (batched predicate) under jit.
        X = f64(rng.uniform(-8, 8, (4, 3)))
        same(ft.jit(ft.vmap(halve_until_small))(X), ft.vmap(halve_until_small)(X))
        # A while_loop inside a scan, under jit and jvp.
        def wl(h0, xs):
            def step(c, x):
                return lax.while_loop(lambda v: fnp.sum(fnp.abs(v)) > 0.5, lambda v: v * 0.5,
                                      c + x), c
            return lax.scan(step, h0, xs)
        same(ft.jit(wl)(h0, xs), wl(h0, xs))
        jvp_wl = ft.jit(lambda h0, xs: ft.jvp(wl, (h0, xs), (h0, xs)))
        same(jvp_wl(h0, xs), ft.jvp(wl, (h0, xs), (h0, xs)), 1e-10, 1e-12)


def test_jit_cond_runs_only_the_taken_branch_of_a_host_loop():
    """``cond(x > 0, <while_loop that only ends for x > 0>, identity)``: JAX
    runs the taken branch only, under jit too. Computing every branch and
    selecting (jit's lowering of cond) would never return for x <= 0."""
    out = run_child("""
        import ftorch.lax as lax

        def f(x):
            return lax.cond(x > 0,
                            lambda x: lax.while_loop(lambda v: v < 10.0, lambda v: v * 2.0, x),
                            lambda x: x - 1.0, x)

        jf = ft.jit(f)
        print(f(mx.array(0.0)).item(), jf(mx.array(1.5)).item(), jf(mx.array(0.0)).item(),
              jf(mx.array(-2.0)).item())
        g = ft.jit(lambda i, x: lax.switch(i, [lambda x: x,
                                               lambda x: lax.while_loop(lambda v: v < 10.0,
                                                                        lambda v: v * 2.0, x)],
                                           x))
        print(g(mx.array(0), mx.array(0.0)).item())
    """, timeout=30)
    assert out.split() == ["-1.0", "12.0", "-1.0", "-3.0", "0.0"]


def test_control_flow_primitives_are_registered():
    for name in ("cond", "while", "scan"):
        assert name in registry
        prim = registry[name]
        assert prim.multiple_results
        assert prim.jvp is not None and prim.batch is not None
