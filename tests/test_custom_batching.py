"""custom_vmap: the user's batching rule (a distinctive one: cos where the
function computes sin) is what vmap uses, alone and under jit, grad and jvp
in any order, and under nested vmap (once, on the merged batch: a rule that
adds its axis_size shows which); unbatched arguments reach the rule as they
are; pytrees; faithful rules (one matmul for a batch of matrix-vector
products) equal the loop, nested and differentiated; sequential_vmap;
errors."""

import mlx.core as mx
import numpy as np
import pytest

import ftorch as ft
import ftorch.numpy as fnp

custom_vmap = ft.custom_batching.custom_vmap
XS = mx.array([0.1, 0.2, 0.3])


def close(a, b):
    np.testing.assert_allclose(np.array(a), np.array(b), rtol=1e-5, atol=1e-6)


@custom_vmap
def f(x):
    return fnp.sin(x)


@f.def_vmap
def _f_rule(axis_size, in_batched, x):
    return fnp.cos(x), in_batched[0]  # distinctive: not what f computes


def test_outside_vmap_the_function_runs():
    close(f(XS[0]), fnp.sin(XS[0]))
    close(ft.jit(f)(XS[0]), fnp.sin(XS[0]))
    close(ft.grad(f)(XS[0]), fnp.cos(XS[0]))


@pytest.mark.parametrize("transform", [
    ft.vmap, lambda g: ft.jit(ft.vmap(g)), lambda g: ft.vmap(ft.jit(g)),
    lambda g: lambda xs: ft.vmap(ft.vmap(g))(xs[None])[0],
])
def test_the_rule_batches(transform):
    close(transform(f)(XS), fnp.cos(XS))


@pytest.mark.parametrize("transform", [
    lambda g: g, ft.jit,
])
def test_derivatives_and_vmap_in_any_order_use_the_rule(transform):
    # The rule is cos, so its derivative is -sin, whichever is outermost.
    expected = -fnp.sin(XS)
    close(transform(ft.grad(lambda x: fnp.sum(ft.vmap(f)(x))))(XS), expected)
    close(transform(ft.vmap(ft.grad(f)))(XS), expected)
    close(transform(ft.vmap(lambda x: ft.jvp(f, (x,), (mx.array(1.0),))[1]))(XS), expected)
    close(transform(lambda x: ft.jvp(ft.vmap(f), (x,), (mx.ones(3),))[1])(XS), expected)


def test_unbatched_arguments_and_pytrees():
    seen = []

    @custom_vmap
    def g(params, x):
        return {"y": params["w"] * x + params["b"], "s": fnp.sum(params["w"])}

    @g.def_vmap
    def _g_rule(axis_size, in_batched, params, x):
        seen.append(in_batched)
        out = {"y": params["w"] * x + params["b"], "s": fnp.sum(params["w"])}
        return out, {"y": True, "s": False}

    params = {"w": mx.array([1.0, 2.0]), "b": mx.array([0.5, 0.5])}
    xs = mx.ones((4, 2))
    got = ft.vmap(g, in_axes=(None, 0))(params, xs)
    assert seen[-1] == ({"w": False, "b": False}, True)
    close(got["y"], mx.broadcast_to(params["w"] + 0.5, (4, 2)))
    close(got["s"], mx.full((4,), 3.0))  # an unbatched result is broadcast by vmap


def test_a_rule_that_batches_a_matrix_vector_product_into_one_matmul():
    calls = []

    @custom_vmap
    def matvec(w, x):
        return w @ x

    @matvec.def_vmap
    def _matvec_rule(axis_size, in_batched, w, x):
        calls.append(in_batched)
        if in_batched == (False, True):
            return x @ fnp.transpose(w), True
        w = w if in_batched[0] else fnp.broadcast_to(w, (axis_size, *w.shape))
        x = x if in_batched[1] else fnp.broadcast_to(x, (axis_size, *x.shape))
        return fnp.einsum("bij,bj->bi", w, x), True

    w = mx.array(np.random.default_rng(0).standard_normal((3, 4)), mx.float32)
    xs = mx.array(np.random.default_rng(1).standard_normal((5, 4)), mx.float32)
    close(ft.vmap(matvec, in_axes=(None, 0))(w, xs), mx.stack([w @ xs[i] for i in range(5)]))
    assert calls[-1] == (False, True)
    ws = mx.stack([w, 2 * w])
    close(ft.vmap(matvec, in_axes=(0, None))(ws, xs[0]), mx.stack([w @ xs[0], 2 * w @ xs[0]]))
    # Per-example gradients with respect to the input go through the rule too.
    got = ft.vmap(ft.grad(lambda x: fnp.sum(matvec(w, x) ** 2)))(xs)
    close(got, mx.stack([2 * (w @ xs[i]) @ w for i in range(5)]))


def test_errors():
    @custom_vmap
    def no_rule(x):
        return x

    with pytest.raises(AttributeError, match="no batching rule"):
        no_rule(XS)

    @custom_vmap
    def bad(x):
        return x

    @bad.def_vmap
    def _bad_rule(axis_size, in_batched, x):
        return x, (True, False)

    with pytest.raises(TypeError, match="out_batched has structure"):
        ft.vmap(bad)(XS)

    @custom_vmap
    def unbatched_claim(x):
        return x

    @unbatched_claim.def_vmap
    def _claim_rule(axis_size, in_batched, x):
        return x[0], True

    with pytest.raises(ValueError, match="marked batched but has shape"):
        ft.vmap(unbatched_claim)(XS)
    with pytest.raises(TypeError, match="keyword arguments"):
        f(x=XS)
    with pytest.raises(TypeError, match="expected a function"):
        custom_vmap(3)


# ----------------------------------------------------------------------------
# Nested vmap: the outer batch is merged into the inner one and the rule runs
# once on the product of the sizes (a rule whose result shows its axis_size
# tells which batch it saw).
# ----------------------------------------------------------------------------

X2 = mx.array([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]])


@custom_vmap
def sized(x):
    return fnp.sin(x)


@sized.def_vmap
def _sized_rule(axis_size, in_batched, x):
    return fnp.cos(x) + axis_size, in_batched[0]


@pytest.mark.parametrize("transform", [
    lambda g: ft.vmap(ft.vmap(g)),
    lambda g: ft.jit(ft.vmap(ft.vmap(g))),
    lambda g: ft.vmap(ft.jit(ft.vmap(g))),
    lambda g: ft.vmap(ft.vmap(ft.jit(g))),
    lambda g: lambda xs: ft.vmap(ft.vmap(ft.vmap(g)))(xs[None])[0],
])
def test_nested_vmap_calls_the_rule_on_the_merged_batch(transform):
    close(transform(sized)(X2), fnp.cos(X2) + 6)


def test_single_vmap_calls_the_rule_with_its_own_size():
    close(ft.vmap(sized)(X2[0]), fnp.cos(X2[0]) + 3)
    close(ft.jit(ft.vmap(sized))(X2[0]), fnp.cos(X2[0]) + 3)
    close(ft.vmap(ft.vmap(sized), in_axes=1)(X2), (fnp.cos(X2) + 6).T)


@pytest.mark.parametrize("transform", [lambda g: g, ft.jit])
def test_derivatives_of_nested_vmap_use_the_rule(transform):
    minus_sin, minus_cos = -fnp.sin(X2), -fnp.cos(X2)
    close(transform(ft.grad(lambda x: fnp.sum(ft.vmap(ft.vmap(sized))(x))))(X2), minus_sin)
    close(transform(ft.vmap(ft.vmap(ft.grad(sized))))(X2), minus_sin)
    close(transform(ft.vmap(ft.grad(lambda x: fnp.sum(ft.vmap(sized)(x)))))(X2), minus_sin)
    close(transform(lambda x: ft.jvp(ft.vmap(ft.vmap(sized)), (x,), (fnp.ones_like(x),))[1])(X2),
          minus_sin)
    close(transform(ft.vmap(ft.vmap(lambda x: ft.jvp(sized, (x,), (mx.array(1.0),))[1])))(X2),
          minus_sin)
    # Second derivatives: the rule (cos + n) differentiated twice is -cos.
    close(transform(ft.vmap(ft.vmap(ft.grad(ft.grad(sized)))))(X2), minus_cos)
    inner = ft.grad(lambda x: fnp.sum(ft.vmap(sized)(x)))
    close(transform(ft.grad(lambda x: fnp.sum(inner(x))))(X2[0]), minus_cos[0])


def test_outside_vmap_derivatives_are_the_functions():
    close(ft.grad(sized)(X2[0, 0]), fnp.cos(X2[0, 0]))
    close(ft.jvp(sized, (X2,), (mx.ones_like(X2),))[1], fnp.cos(X2))
    close(ft.grad(ft.grad(sized))(X2[0, 0]), -fnp.sin(X2[0, 0]))


# ----------------------------------------------------------------------------
# A faithful rule (it batches the function exactly) equals a Python loop under
# every mix of batched and unbatched arguments, nested or not, and so do its
# derivatives.
# ----------------------------------------------------------------------------

RNG = np.random.default_rng(0)
W = mx.array(RNG.standard_normal((3, 4)), mx.float32)
V = mx.array(RNG.standard_normal((4,)), mx.float32)
WS = mx.array(RNG.standard_normal((2, 5, 3, 4)), mx.float32)
VS = mx.array(RNG.standard_normal((2, 5, 4)), mx.float32)


@custom_vmap
def affine(p, v):
    return {"y": p["w"] @ v + p["b"], "norm": fnp.sum(p["w"] * p["w"])}


@affine.def_vmap
def _affine_rule(axis_size, in_batched, p, v):
    pb, vb = in_batched
    wb, bb = pb["w"], pb["b"]
    if vb and not wb:
        y = v @ fnp.transpose(p["w"])  # one matmul for the batch
    else:
        y = fnp.matmul(p["w"], v[..., None])[..., 0]
    y = y + p["b"]
    norm = fnp.sum(p["w"] * p["w"], axis=(-2, -1))
    return {"y": y, "norm": norm}, {"y": wb or bb or vb, "norm": wb}


def _affine_ref(p, v):
    return {"y": p["w"] @ v + p["b"], "norm": fnp.sum(p["w"] * p["w"])}


def _loop(fn, ws, vs, w_axis, v_axis, n):
    outs = [fn({"w": ws if w_axis is None else ws[i], "b": mx.ones(3)},
               vs if v_axis is None else vs[i]) for i in range(n)]
    return {k: mx.stack([o[k] for o in outs]) for k in outs[0]}


@pytest.mark.parametrize("w_axis, v_axis", [(0, None), (None, 0), (0, 0)])
def test_faithful_rule_equals_the_loop(w_axis, v_axis):
    ws = WS[0] if w_axis is not None else W
    vs = VS[0] if v_axis is not None else V
    batched = ft.vmap(lambda w, v: affine({"w": w, "b": mx.ones(3)}, v), in_axes=(w_axis, v_axis))
    expected = _loop(_affine_ref, ws, vs, w_axis, v_axis, 5)
    for k, v in batched(ws, vs).items():
        close(v, expected[k])
    # Per-example gradients through the rule's derivative.
    loss = ft.grad(lambda w, v: fnp.sum(affine({"w": w, "b": mx.ones(3)}, v)["y"] ** 2),
                   argnums=(0, 1))
    loss_ref = ft.grad(lambda w, v: fnp.sum(_affine_ref({"w": w, "b": mx.ones(3)}, v)["y"] ** 2),
                       argnums=(0, 1))
    for got, want in zip(ft.vmap(loss, in_axes=(w_axis, v_axis))(ws, vs),
                         ft.vmap(loss_ref, in_axes=(w_axis, v_axis))(ws, vs)):
        close(got, want)


@pytest.mark.parametrize("outer, inner", [
    ((0, None), (None, 0)), ((None, 0), (0, None)), ((0, 0), (0, 0)), ((0, 0), (None, 0)),
])
def test_faithful_rule_under_nested_vmap(outer, inner):
    def pick(full, single, o, i):  # full has the outer batch (2) then the inner (5)
        if o is not None:
            return full if i is not None else full[:, 0]
        return full[0] if i is not None else single

    ws, vs = pick(WS, W, outer[0], inner[0]), pick(VS, V, outer[1], inner[1])

    def fn(g):
        return ft.vmap(ft.vmap(lambda w, v: g({"w": w, "b": mx.ones(3)}, v), in_axes=inner),
                       in_axes=outer)

    got, want = fn(affine)(ws, vs), fn(_affine_ref)(ws, vs)
    for k in want:
        close(got[k], want[k])
    got = ft.jit(fn(affine))(ws, vs)
    for k in want:
        close(got[k], want[k])
    gw = ft.grad(lambda w, v: fnp.sum(fn(affine)(w, v)["y"] ** 2), argnums=(0, 1))(ws, vs)
    gw_ref = ft.grad(lambda w, v: fnp.sum(fn(_affine_ref)(w, v)["y"] ** 2), argnums=(0, 1))(ws, vs)
    for a, b in zip(gw, gw_ref):
        close(a, b)


def test_unbatched_results_stay_unbatched():
    # The rule marks "norm" unbatched when w is: vmap may then map it to None.
    out = ft.vmap(lambda v: affine({"w": W, "b": mx.ones(3)}, v),
                  out_axes={"y": 0, "norm": None})(VS[0])
    close(out["norm"], fnp.sum(W * W))
    out = ft.vmap(ft.vmap(lambda v: affine({"w": W, "b": mx.ones(3)}, v),
                          out_axes={"y": 0, "norm": None}),
                  out_axes={"y": 0, "norm": None})(VS)
    close(out["norm"], fnp.sum(W * W))
    assert out["y"].shape == (2, 5, 3)


def test_integer_arguments_are_not_differentiated():
    seen = []

    @custom_vmap
    def shift(x, k):
        return x * k.astype(mx.float32)

    @shift.def_vmap
    def _shift_rule(axis_size, in_batched, x, k):
        seen.append(in_batched)
        k = k.astype(mx.float32)
        return x * (k[:, None] if in_batched[1] and x.ndim > 1 else k), any(in_batched)

    x, k = mx.ones((4, 2)), mx.array(3)
    close(ft.vmap(ft.grad(lambda x: fnp.sum(shift(x, k))))(x), 3 * mx.ones((4, 2)))
    close(ft.grad(lambda x: fnp.sum(ft.vmap(shift, in_axes=(0, None))(x, k)))(x),
          3 * mx.ones((4, 2)))
    ks = mx.array([1, 2, 3, 4])
    close(ft.vmap(ft.grad(lambda x, k: fnp.sum(shift(x, k))))(x, ks),
          mx.broadcast_to(ks[:, None].astype(mx.float32), (4, 2)))
    # The integer argument is not batched by reverse mode's rule.
    assert (True, False) in seen


def test_the_matvec_rule_is_one_matmul():
    @custom_vmap
    def matvec(w, v):
        return w @ v

    @matvec.def_vmap
    def _rule(axis_size, in_batched, w, v):
        assert in_batched == (False, True)
        return v @ fnp.transpose(w), True

    vs = VS.reshape(10, 4)
    graph = ft.make_graph(ft.vmap(matvec, in_axes=(None, 0)))(W, vs)
    got = ft.jit(ft.vmap(matvec, in_axes=(None, 0)))(W, vs)
    close(got, mx.stack([W @ vs[i] for i in range(10)]))
    assert "custom_vmap_call" in str(graph)


# ----------------------------------------------------------------------------
# sequential_vmap and more errors
# ----------------------------------------------------------------------------


def test_sequential_vmap_loops():
    from ftorch.custom_batching import sequential_vmap

    g = sequential_vmap(lambda x, y: fnp.sum(x * y))
    xs = mx.arange(6.0).reshape(3, 2)
    close(ft.vmap(g, in_axes=(0, None))(xs, mx.array([1.0, 2.0])), mx.array([2.0, 8.0, 14.0]))
    close(ft.vmap(ft.vmap(g))(xs[None], xs[None]), fnp.sum(xs * xs, axis=1)[None])
    close(ft.grad(lambda x: fnp.sum(ft.vmap(g)(x, x)))(xs), 2 * xs)
    close(g(xs[0], xs[1]), fnp.sum(xs[0] * xs[1]))


def _with_rule(rule, fun=lambda x: x):
    g = custom_vmap(fun)
    g.def_vmap(rule)
    return g


def test_rule_errors():
    with pytest.raises(TypeError, match="must return a pair"):
        ft.vmap(_with_rule(lambda n, b, x: x))(XS)
    with pytest.raises(TypeError, match="must be a bool"):
        ft.vmap(_with_rule(lambda n, b, x: (x, 1)))(XS)
    with pytest.raises(TypeError, match=r"structure .* returns"):
        ft.vmap(_with_rule(lambda n, b, x: ((x, x), (True, True))))(XS)
    with pytest.raises(ValueError, match=r"out of the rule .* is, per example, f32\[3\], but"):
        ft.vmap(_with_rule(lambda n, b, x: (fnp.broadcast_to(x[:, None], (3, 3)), True)))(XS)
    with pytest.raises(ValueError, match=r"per example, i32\[\], but .* f32\[\]"):
        ft.vmap(_with_rule(lambda n, b, x: (x.astype(mx.int32), True)))(XS)
    # Under vmap(grad(f)) and nested vmap the same checks hold.
    with pytest.raises(ValueError, match="marked batched but has shape"):
        ft.vmap(ft.vmap(_with_rule(lambda n, b, x: (x[0], True))))(X2)
    # out_batched must not depend on values.
    flip = iter([True, False, True, False])
    g = _with_rule(lambda n, b, x: (x, True) if next(flip) else (x[0], False))
    with pytest.raises(ValueError, match="must depend only on in_batched"):
        ft.jit(ft.vmap(g))(XS)
    with pytest.raises(TypeError, match="expected a function"):
        custom_vmap(fnp.sin).def_vmap(3)
