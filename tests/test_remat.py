"""ft.checkpoint: the same values and derivatives as without it, under every
transform; the backward pass recomputes what the policy does not save, and
neither ftorch's CSE nor mx.compile merges that back into the forward pass
(the peak memory, measured, is lower, eager and jitted)."""

import mlx.core as mx
import pytest

import ftorch as ft
import ftorch.lax as lax
import ftorch.numpy as fnp
import ftorch.random as random
from ftorch.graph import Graph, subgraphs

policies = ft.checkpoint_policies
POLICIES = [None, policies.nothing_saveable, policies.everything_saveable,
            policies.dots_saveable, policies.dots_with_no_batch_dims_saveable]


def mlp(ws, x):
    for w in ws:
        x = fnp.tanh(x @ w)
    return x


def loss_with(policy, segment=2, **kwargs):
    block = ft.checkpoint(mlp, policy=policy, **kwargs)

    def loss(ws, x):
        for i in range(0, len(ws), segment):
            x = block(ws[i:i + segment], x)
        return fnp.mean(x ** 2)

    return loss


def plain_loss(ws, x):
    return fnp.mean(mlp(ws, x) ** 2)


def weights(n=4, d=6, b=5, seed=0):
    keys = random.split(random.key(seed), n + 1)
    return [random.normal(k, (d, d)) * 0.5 for k in keys[:n]], random.normal(keys[n], (b, d))


def close(a, b, tol=1e-5):
    for x, y in zip(ft.tree.leaves(a), ft.tree.leaves(b)):
        assert x.shape == y.shape and mx.allclose(x, y, rtol=tol, atol=tol).item()


@pytest.mark.parametrize("policy", POLICIES, ids=lambda p: getattr(p, "__name__", "default"))
def test_same_values_and_gradients_under_every_transform(policy):
    ws, x = weights()
    loss = loss_with(policy)
    close(loss(ws, x), plain_loss(ws, x))
    expected = ft.grad(plain_loss)(ws, x)
    close(ft.grad(loss)(ws, x), expected)
    close(ft.jit(ft.grad(loss))(ws, x), expected)
    close(ft.grad(ft.jit(loss))(ws, x), expected)
    # Per-example gradients, forward over reverse and reverse over reverse.
    xs = mx.stack([x, 2 * x])
    close(ft.vmap(ft.grad(loss), in_axes=(None, 0))(ws, xs),
          ft.vmap(ft.grad(plain_loss), in_axes=(None, 0))(ws, xs))
    t = [mx.ones_like(w) for w in ws]
    close(ft.jvp(ft.grad(loss), (ws, x), (t, mx.zeros_like(x)))[1],
          ft.jvp(ft.grad(plain_loss), (ws, x), (t, mx.zeros_like(x)))[1], 1e-4)
    hess = ft.grad(lambda x: fnp.sum(ft.grad(loss, argnums=1)(ws, x) ** 2))
    close(hess(x), ft.grad(lambda x: fnp.sum(ft.grad(plain_loss, argnums=1)(ws, x) ** 2))(x),
          1e-4)


def _all_eqns(graph: Graph):
    for eqn in graph.eqns:
        yield eqn
        for sub in subgraphs(eqn.params):
            yield from _all_eqns(sub)


def _backward_remat(graph: Graph) -> Graph:
    """The graph of the backward remat equation (the one whose inputs
    include the cotangent, so the last one)."""
    return [e for e in graph.eqns if e.prim.name == "remat"][-1].params["graph"]


@pytest.mark.parametrize("policy, recomputed", [
    (policies.nothing_saveable, {"matmul": 2, "tanh": 2}),
    (policies.dots_saveable, {"matmul": 0, "tanh": 2}),  # the products are saved
    (policies.everything_saveable, {"matmul": 0, "tanh": 0}),
])
def test_the_backward_pass_recomputes_what_the_policy_does_not_save(policy, recomputed):
    ws, x = weights(n=2)
    graph = ft.make_graph(ft.grad(loss_with(policy)))(ws, x)
    backward = _backward_remat(graph)
    names = [e.prim.name for e in _all_eqns(backward)]
    # Besides the recomputation, the VJP's own products: a weight gradient
    # and an input cotangent per layer.
    assert names.count("tanh") == recomputed["tanh"]
    assert names.count("matmul") == recomputed["matmul"] + 4
    # Everything the backward pass reads from the forward pass goes through
    # the barrier that waits for the cotangent, so the recomputation cannot
    # run early, and ftorch's CSE cannot merge it with the forward pass.
    barrier = backward.eqns[0]
    assert barrier.prim.name == "optimization_barrier"
    known, cotangent = backward.in_vars[:-1], backward.in_vars[-1]
    assert cotangent in barrier.inputs
    for eqn in backward.eqns[1:]:
        assert not set(map(id, known)) & set(map(id, eqn.inputs)), eqn.prim.name


def test_checkpoint_name_and_name_policies():
    def f(x):
        h = ft.checkpoint_name(fnp.sin(x) * 3.0, "h")
        return fnp.sum(fnp.tanh(h))

    x = mx.array([0.3, -0.2])
    expected = ft.grad(f)(x)
    for policy, recomputes_sin in [(policies.save_only_these_names("h"), False),
                                   (policies.save_any_names_but_these("h"), True),
                                   (policies.save_only_these_names("other"), True)]:
        g = ft.checkpoint(f, policy=policy)
        close(ft.grad(g)(x), expected)
        backward = _backward_remat(ft.make_graph(ft.grad(g))(x))
        # sin appears in the backward pass as cos (its derivative) either way.
        assert ("sin" in [e.prim.name for e in backward.eqns]) == recomputes_sin
    close(ft.checkpoint_name({"a": x}, "n")["a"], x)


def test_pytrees_static_arguments_and_closures():
    def f(params, x, activation):
        return {"y": activation(x @ params["w"] + params["b"]), "n": fnp.sum(x)}

    params = {"w": mx.ones((3, 2)) * 0.1, "b": mx.zeros(2)}
    x = mx.ones((4, 3))
    g = ft.checkpoint(f, static_argnums=2)
    expected = ft.grad(lambda p: fnp.sum(f(p, x, fnp.tanh)["y"]))(params)
    close(ft.grad(lambda p: fnp.sum(g(p, x, fnp.tanh)["y"]))(params), expected)
    # A checkpointed function closing over a traced value of the enclosing grad.
    close(ft.grad(lambda w: fnp.sum(ft.checkpoint(lambda x: fnp.tanh(x @ w))(x)))(params["w"]),
          ft.grad(lambda w: fnp.sum(fnp.tanh(x @ w)))(params["w"]))
    # remat is checkpoint; the barrier passes pytrees through.
    assert ft.remat is ft.checkpoint
    close(lax.optimization_barrier({"a": x, "b": (params["b"],)}), {"a": x, "b": (params["b"],)})


def test_errors():
    with pytest.raises(TypeError, match="expected a function"):
        ft.checkpoint(3)
    with pytest.raises(TypeError, match="policy must be a function"):
        ft.checkpoint(fnp.sin, policy="dots")
    with pytest.raises(TypeError, match=r"checkpoint argument\[0\]\['a'\] must be an array"):
        ft.checkpoint(lambda d: d["a"])({"a": "text"})
    with pytest.raises(TypeError, match="name must be a str"):
        ft.checkpoint_name(mx.ones(2), 3)
    with pytest.raises(ValueError, match="out of range"):
        ft.checkpoint(fnp.sin, static_argnums=3)(mx.ones(2))


def _peak_mib(f, *args):
    mx.eval(args)
    f(*args)  # warm up: compile, caches
    mx.synchronize()
    mx.reset_peak_memory()
    base = mx.get_active_memory()
    mx.eval(f(*args))
    return (mx.get_peak_memory() - base) / 2 ** 20


@pytest.mark.parametrize("jitted", [False, True], ids=["eager", "jit"])
def test_checkpointing_lowers_peak_memory(jitted):
    # 32 tanh layers, activations of 1 MiB: plain reverse mode keeps every
    # layer's activations; checkpointing 4-layer segments keeps 8 segment
    # inputs and one segment's recomputation.
    ws, x = weights(n=32, d=256, b=1024)
    plain, ckpt = ft.grad(plain_loss), ft.grad(loss_with(None, segment=4))
    if jitted:
        plain, ckpt = ft.jit(plain), ft.jit(ckpt)
    close(ckpt(ws, x), plain(ws, x), 1e-4)
    plain_mib, ckpt_mib = _peak_mib(plain, ws, x), _peak_mib(ckpt, ws, x)
    assert ckpt_mib < 0.7 * plain_mib, (plain_mib, ckpt_mib)


def test_checkpointed_scan_body():
    def loss(w, xs, wrap):
        step = wrap(lambda c, x: (fnp.tanh(c @ w + x), fnp.sum(c)))
        c, ys = lax.scan(step, mx.ones(3), xs)
        return fnp.sum(c) + fnp.sum(ys)

    w, xs = mx.eye(3) * 0.5 + 0.1, mx.ones((5, 3))
    expected = ft.grad(loss)(w, xs, lambda f: f)
    close(ft.grad(loss)(w, xs, ft.checkpoint), expected)
    close(ft.jit(ft.grad(loss), static_argnums=2)(w, xs, ft.checkpoint), expected)
