"""ftorch.optim wrappers: partition/multi_transform, set_to_zero/freeze,
masked, MultiSteps, apply_if_finite and the parameter averages, each checked
against the plain optimizers it should equal, eagerly and in a jitted train
step that is traced once."""

import mlx.core as mx
import numpy as np
import pytest
from harness import compiler_off

import ftorch as ft
import ftorch.numpy as fnp
import ftorch.optim as optim


@pytest.fixture(autouse=True)
def _no_mlx_compiler(request):
    # Values and trace counts are what is tested; one test runs compiled.
    with compiler_off("compiled" not in request.node.name):
        yield


def params0():
    return {"enc": {"w": mx.array([[1.0, -2.0], [0.5, 3.0]]), "b": mx.array([0.1, -0.1])},
            "dec": {"w": mx.array([2.0, -1.0, 0.25]), "b": mx.array(0.5)}}


def grads_at(step):
    """Deterministic, step-dependent gradients shaped like params0()."""
    rng = np.random.default_rng(step)
    return ft.tree.map(lambda p: mx.array(rng.standard_normal(p.shape).astype(np.float32)),
                       params0())


def run(opt, params, steps, grads=grads_at):
    state = opt.init(params)
    for t in range(steps):
        updates, state = opt.update(grads(t), state, params)
        params = optim.apply_updates(params, updates)
    return params, state


def assert_trees_close(a, b, rtol=1e-6, atol=1e-7):
    la, ta = ft.tree.flatten(a)
    lb, tb = ft.tree.flatten(b)
    assert ta == tb
    for x, y in zip(la, lb):
        np.testing.assert_allclose(np.array(x), np.array(y), rtol=rtol, atol=atol)


def stateful_optimizers():
    """Stateful optimizers available now (adam where it exists)."""
    opts = {"sgd_momentum": optim.sgd(0.1, momentum=0.9),
            "trace_scale": optim.chain(optim.trace(0.5, nesterov=True), optim.scale(-0.3))}
    if hasattr(optim, "adam"):
        opts["adam"] = optim.adam(0.01)
    return opts


# ---------------------------------------------------------------------------
# partition / multi_transform
# ---------------------------------------------------------------------------

LABELS_TREE = {"enc": "first", "dec": {"w": "second", "b": "first"}}  # a prefix of the params


def label_fn(params):
    return {"enc": {"w": "first", "b": "first"},
            "dec": {k: ("second" if k == "w" else "first") for k in params["dec"]}}


@pytest.mark.parametrize("labels", [LABELS_TREE, label_fn], ids=["pytree", "function"])
@pytest.mark.parametrize("second", sorted(stateful_optimizers()))
def test_partition_equals_separate_optimizers(labels, second):
    first = optim.sgd(0.05, momentum=0.8)
    opt = optim.multi_transform({"first": first, "second": stateful_optimizers()[second]},
                                labels)
    got, state = run(opt, params0(), 4)
    assert isinstance(state, optim.PartitionState) and set(state.inner_states) == {
        "first", "second"}

    # Each optimizer on its own subset, as a flat dict of its leaves.
    def subset(tree, names):
        return {n: tree[n.split("/")[0]][n.split("/")[1]] for n in names}

    want = {}
    for names, o in ((["enc/w", "enc/b", "dec/b"], first),
                     (["dec/w"], stateful_optimizers()[second])):
        p, _ = run(o, subset(params0(), names), 4, lambda t, names=names: subset(grads_at(t),
                                                                                  names))
        want.update(p)
    assert_trees_close(subset(got, sorted(want)), {k: want[k] for k in sorted(want)})


def test_partition_alias_state_and_errors():
    assert optim.multi_transform is optim.partition
    assert optim.MultiTransformState is optim.PartitionState
    # A label without a transformation, and labels that do not fit the parameters.
    with pytest.raises(ValueError, match="'third'.* no transformation"):
        optim.partition({"first": optim.sgd(0.1)}, {"enc": "first", "dec": "third"}).init(
            params0())
    with pytest.raises(ValueError, match="param_labels has structure"):
        optim.partition({"first": optim.sgd(0.1)}, {"enc": "first"}).init(params0())
    with pytest.raises(TypeError, match=r"transforms\['a'\] must be a GradientTransformation"):
        optim.partition({"a": 0.1}, "a")


def test_partition_jitted_traced_once():
    opt = optim.partition({"first": optim.sgd(0.05, momentum=0.8),
                           "second": optim.set_to_zero()}, LABELS_TREE)

    @ft.jit
    def step(p, s, g):
        u, s = opt.update(g, s, p)
        return optim.apply_updates(p, u), s

    params, state = params0(), opt.init(params0())
    for t in range(4):
        params, state = step(params, state, grads_at(t))
    want, _ = run(opt, params0(), 4)
    assert_trees_close(params, want)
    assert step.trace_count == 1
    np.testing.assert_array_equal(np.array(params["dec"]["w"]), np.array(params0()["dec"]["w"]))


# ---------------------------------------------------------------------------
# set_to_zero, freeze, selective_transform
# ---------------------------------------------------------------------------

def test_set_to_zero():
    updates, state = optim.set_to_zero().update(grads_at(0), optim.EmptyState())
    assert state == optim.EmptyState()
    for u, g in zip(ft.tree.leaves(updates), ft.tree.leaves(grads_at(0))):
        assert u.shape == g.shape and u.dtype == g.dtype and not np.array(u).any()


@pytest.mark.parametrize("mask", [{"enc": True, "dec": {"w": False, "b": True}},
                                  lambda p: {"enc": {"w": True, "b": True},
                                             "dec": {"w": False, "b": True}}],
                         ids=["prefix_pytree", "function"])
def test_freeze_keeps_frozen_parameters(mask):
    sgd = optim.sgd(0.1, momentum=0.9)
    for opt in (optim.chain(optim.freeze(mask), sgd), optim.chain(sgd, optim.freeze(mask))):
        params, _ = run(opt, params0(), 5)
        for path in (("enc", "w"), ("enc", "b"), ("dec", "b")):
            np.testing.assert_array_equal(np.array(params[path[0]][path[1]]),
                                          np.array(params0()[path[0]][path[1]]))
        want, _ = run(sgd, {"w": params0()["dec"]["w"]}, 5,
                      lambda t: {"w": grads_at(t)["dec"]["w"]})
        assert_trees_close(params["dec"]["w"], want["w"])
    everything, _ = run(optim.chain(optim.freeze(True), optim.sgd(0.1)), params0(), 2)
    assert_trees_close(everything, params0(), rtol=0, atol=0)


def test_selective_transform_keeps_no_state_for_frozen():
    mask = {"enc": True, "dec": {"w": False, "b": True}}
    opt = optim.selective_transform(optim.sgd(0.1, momentum=0.9), freeze_mask=mask)
    params, state = run(opt, params0(), 3)
    assert_trees_close(params["enc"], params0()["enc"], rtol=0, atol=0)
    want, _ = run(optim.sgd(0.1, momentum=0.9), {"w": params0()["dec"]["w"]}, 3,
                  lambda t: {"w": grads_at(t)["dec"]["w"]})
    assert_trees_close(params["dec"]["w"], want["w"])
    momentum = state.inner_states["train"].inner_state.inner_state[0].trace
    assert len(ft.tree.leaves(momentum)) == 1  # only dec/w


# ---------------------------------------------------------------------------
# masked (a pytree mask, a prefix and a function; stateful chained inner)
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("mask", [
    {"enc": {"w": True, "b": False}, "dec": {"w": True, "b": False}},
    lambda p: ft.tree.map(lambda x: x.size > 2, p),  # the two weight matrices
], ids=["pytree", "function"])
def test_masked_chained_stateful_inner(mask):
    inner = optim.chain(optim.trace(0.9), optim.scale(-0.1))
    params, state = run(optim.masked(inner, mask), params0(), 4)
    trace = state.inner_state[0].trace
    assert isinstance(trace["enc"]["b"], optim.MaskedNode)
    assert isinstance(trace["dec"]["b"], optim.MaskedNode)
    want, _ = run(inner, {"ew": params0()["enc"]["w"], "dw": params0()["dec"]["w"]}, 4,
                  lambda t: {"ew": grads_at(t)["enc"]["w"], "dw": grads_at(t)["dec"]["w"]})
    assert_trees_close(params["enc"]["w"], want["ew"])
    assert_trees_close(params["dec"]["w"], want["dw"])
    # Unmasked leaves get the raw gradient added (masked passes them through).
    raw = sum(np.array(grads_at(t)["enc"]["b"]) for t in range(4))
    np.testing.assert_allclose(np.array(params["enc"]["b"]),
                               np.array(params0()["enc"]["b"]) + raw, rtol=1e-6)


def test_masked_prefix_mask_and_errors():
    opt = optim.masked(optim.scale(0.0), {"enc": True, "dec": False})
    updates, _ = opt.update(grads_at(0), opt.init(params0()))
    assert not np.array(updates["enc"]["w"]).any()
    np.testing.assert_array_equal(np.array(updates["dec"]["w"]),
                                  np.array(grads_at(0)["dec"]["w"]))
    with pytest.raises(TypeError, match=r"mask\['enc'\] must be a Python bool"):
        optim.masked(optim.scale(0.0), {"enc": 1, "dec": False}).init(params0())
    with pytest.raises(ValueError, match="mask has structure"):
        optim.masked(optim.scale(0.0), {"enc": True}).init(params0())


# ---------------------------------------------------------------------------
# MultiSteps
# ---------------------------------------------------------------------------

def mean_tree(trees):
    return ft.tree.map(lambda *xs: sum(xs) / len(xs), *trees)


@pytest.mark.parametrize("name", sorted(stateful_optimizers()))
def test_multisteps_equals_step_on_mean_gradient(name):
    inner = stateful_optimizers()[name]
    opt = optim.MultiSteps(inner, every_k_schedule=3)
    params, state = params0(), opt.init(params0())
    ref_params, ref_state = params0(), inner.init(params0())
    for t in range(9):
        updates, state = opt.update(grads_at(t), state, params)
        if t % 3 != 2:  # zero updates on the mini-steps in between
            assert all(not np.array(u).any() for u in ft.tree.leaves(updates))
            assert not opt.has_updated(state).item()
        else:
            assert opt.has_updated(state).item()
            ref_updates, ref_state = inner.update(
                mean_tree([grads_at(t - 2), grads_at(t - 1), grads_at(t)]), ref_state,
                ref_params)
            assert_trees_close(updates, ref_updates, rtol=1e-5, atol=1e-6)
            ref_params = optim.apply_updates(ref_params, ref_updates)
        params = optim.apply_updates(params, updates)
        assert state.mini_step.item() == (t + 1) % 3 and state.gradient_step.item() == (t + 1) // 3
    assert_trees_close(params, ref_params, rtol=1e-5, atol=1e-6)


def test_multisteps_jitted_train_step_compiled():
    inner = optim.sgd(0.1, momentum=0.9)
    opt = optim.MultiSteps(inner, every_k_schedule=3)

    def loss(p, x):
        pred = fnp.sum(p["w"] * x) + p["b"]
        return (pred - 1.0) ** 2

    @ft.jit
    def step(p, s, x):
        u, s = opt.update(ft.grad(loss)(p, x), s, p)
        return optim.apply_updates(p, u), s, opt.has_updated(s)

    xs = [mx.array(np.random.default_rng(i).standard_normal(3).astype(np.float32))
          for i in range(9)]
    params = {"w": mx.array([1.0, -2.0, 0.5]), "b": mx.array(0.3)}
    state = opt.init(params)
    ref, ref_state = params, inner.init(params)
    for t, x in enumerate(xs):
        params, state, updated = step(params, state, x)
        assert updated.item() == (t % 3 == 2)
        if t % 3 == 2:
            g = mean_tree([ft.grad(loss)(ref, xs[i]) for i in (t - 2, t - 1, t)])
            u, ref_state = inner.update(g, ref_state, ref)
            ref = optim.apply_updates(ref, u)
        assert_trees_close(params, ref, rtol=1e-5, atol=1e-6)
    assert step.trace_count == 1


def test_multisteps_sum_schedule_and_skip():
    # use_grad_mean=False sums; k from a schedule of the gradient step (1, then 2).
    opt = optim.MultiSteps(optim.sgd(1.0), lambda step: fnp.where(step < 1, 1, 2),
                           use_grad_mean=False)
    step = ft.jit(lambda g, s: opt.update(g, s))
    state = opt.init(mx.zeros(1))
    got = []
    for g in (1.0, 2.0, 3.0, 4.0, 5.0):
        u, state = step(mx.array([g]), state)
        got.append(u.item())
    assert got == [-1.0, 0.0, -5.0, 0.0, -9.0]
    assert step.trace_count == 1

    # A non-finite mini-step is dropped: zero update, state as before it.
    opt = optim.MultiSteps(optim.sgd(1.0), 2, should_skip_update_fn=optim.skip_not_finite)
    step = ft.jit(lambda g, s: opt.update(g, s))
    state = opt.init(mx.zeros(1))
    u, state = step(mx.array([2.0]), state)
    before = state
    u, state = step(mx.array([float("nan")]), state)
    assert u.item() == 0.0 and state.mini_step.item() == 1
    assert state.acc_grads.item() == before.acc_grads.item()
    assert state.skip_state["num_not_finite"].item() == 1
    u, state = step(mx.array([4.0]), state)
    assert u.item() == -3.0 and state.gradient_step.item() == 1
    assert step.trace_count == 1


def test_multisteps_as_gradient_transformation_and_errors():
    opt = optim.chain(optim.scale(2.0), optim.MultiSteps(optim.sgd(1.0), 2)
                      .gradient_transformation())
    state = opt.init(mx.zeros(1))
    u1, state = opt.update(mx.array([1.0]), state)
    u2, state = opt.update(mx.array([3.0]), state)
    assert (u1.item(), u2.item()) == (0.0, -4.0)
    with pytest.raises(ValueError, match="every_k_schedule must be at least 1"):
        optim.MultiSteps(optim.sgd(1.0), 0)
    with pytest.raises(TypeError, match="opt must be a GradientTransformation"):
        optim.MultiSteps(optim.sgd, 2)
    bad = optim.MultiSteps(optim.sgd(1.0), 2, should_skip_update_fn=lambda u, s, p: (0, ()))
    with pytest.raises(ValueError, match="bool scalar"):
        bad.update(mx.ones(1), bad.init(mx.zeros(1)))


# ---------------------------------------------------------------------------
# apply_if_finite
# ---------------------------------------------------------------------------

def test_apply_if_finite_skips_and_counts():
    inner = optim.sgd(0.1, momentum=0.9)
    opt = optim.apply_if_finite(inner, max_consecutive_errors=2)

    @ft.jit
    def step(p, s, g):
        u, s = opt.update(g, s, p)
        return optim.apply_updates(p, u), s

    nan = float("nan")
    grads = [1.0, nan, float("inf"), 2.0, nan, nan, nan]
    params, state = {"w": mx.array([1.0, 2.0])}, opt.init({"w": mx.zeros(2)})
    ref, ref_state = params, inner.init(params)
    expect = [(0, 0, True), (1, 1, False), (2, 2, False), (0, 2, True), (1, 3, False),
              (2, 4, False), (3, 5, False)]
    for t, g in enumerate(grads):
        before, before_state = params, state
        params, state = step(params, state, {"w": mx.array([g, 1.0])})
        assert (state.notfinite_count.item(), state.total_notfinite.item(),
                state.last_finite.item()) == expect[t]
        if np.isfinite(g):
            u, ref_state = inner.update({"w": mx.array([g, 1.0])}, ref_state, ref)
            ref = optim.apply_updates(ref, u)
            assert_trees_close(params, ref)
        elif t < 6:  # skipped: parameters and the inner state as they were
            assert_trees_close(params, before, rtol=0, atol=0)
            assert_trees_close(state.inner_state, before_state.inner_state, rtol=0, atol=0)
        else:  # a third NaN in a row is more than 2: the update is taken
            assert np.isnan(np.array(params["w"])[0])
    assert step.trace_count == 1
    with pytest.raises(ValueError, match="max_consecutive_errors must be non-negative"):
        optim.apply_if_finite(inner, -1)


# ---------------------------------------------------------------------------
# incremental_update, periodic_update
# ---------------------------------------------------------------------------

def test_incremental_update_is_an_ema():
    decay = 0.9
    params = [{"w": mx.array([float(t), -float(t)]), "n": None} for t in range(1, 6)]
    ema = params[0]
    want = np.array([1.0, -1.0])
    for p in params[1:]:
        ema = optim.incremental_update(p, ema, 1 - decay)
        want = (1 - decay) * np.array(p["w"]) + decay * want
    assert ema["n"] is None
    np.testing.assert_allclose(np.array(ema["w"]), want, rtol=1e-6)
    half = optim.incremental_update(mx.ones(2, mx.bfloat16), mx.zeros(2, mx.bfloat16),
                                    mx.array(0.25))
    assert half.dtype == mx.bfloat16 and half.tolist() == [0.25, 0.25]


def test_periodic_update_traced_steps():
    f = ft.jit(lambda new, old, n: optim.periodic_update(new, old, n, 3))
    new, old = {"w": mx.array([1.0, 2.0])}, {"w": mx.array([0.0, 0.0])}
    got = [f(new, old, mx.array(n, mx.int32))["w"].tolist() for n in range(7)]
    assert got == [[1.0, 2.0] if n % 3 == 0 else [0.0, 0.0] for n in range(7)]
    assert f.trace_count == 1
    assert optim.periodic_update(new, old, 4, 2)["w"].tolist() == [1.0, 2.0]
    with pytest.raises(ValueError, match="update_period must be positive"):
        optim.periodic_update(new, old, 1, 0)
