"""ftorch.amp: policies and loss scales against jmp (the oracle, on JAX
arrays), and the autocast transform: the dtype each category of primitive
runs in, float32 gradients for float32 parameters, composition with grad,
vmap, jit, checkpoint and loops, and a model trained under bfloat16 autocast
reaching the float32 loss."""

import itertools

import jax.numpy as jnp
import jmp
import mlx.core as mx
import numpy as np
import pytest

import ftorch as ft
import ftorch.nn as nn
import ftorch.nn.functional as F
import ftorch.numpy as fnp
import ftorch.random as random
from ftorch import lax, optim

JAX_TO_MLX = {jnp.float32: mx.float32, jnp.bfloat16: mx.bfloat16, jnp.float16: mx.float16,
              jnp.float64: mx.float64}


# ----------------------------------------------------------------------------
# Policies and loss scales, against jmp
# ----------------------------------------------------------------------------


NAMES = ["float32", "full", "f32", "bf16", "bfloat16", "f16", "float16", "p=f32,c=bf16",
         "params=float32,compute=bfloat16,output=float32", "c=f16", "p=bf16", "o=f16,c=bf16",
         "compute=float16,output=float32"]


@pytest.mark.parametrize("name", NAMES)
def test_get_policy_parses_as_jmp(name):
    ours, theirs = ft.amp.get_policy(name), jmp.get_policy(name)
    for field in ("param_dtype", "compute_dtype", "output_dtype"):
        assert getattr(ours, field) == JAX_TO_MLX[getattr(theirs, field)]
    assert str(ours) == str(theirs)


def test_policy_casts_floating_leaves_only():
    policy = ft.amp.get_policy("p=f32,c=bf16,o=f32")
    t = {"w": mx.ones(2), "n": mx.array([1, 2]), "flag": mx.array(True), "s": 3.0}
    cast = policy.cast_to_compute(t)
    assert cast["w"].dtype == mx.bfloat16 and cast["n"].dtype == mx.int32
    assert cast["flag"].dtype == mx.bool_ and cast["s"] == 3.0
    assert policy.cast_to_output(cast)["w"].dtype == mx.float32
    assert policy.with_output_dtype(mx.float16).output_dtype == mx.float16


def test_dynamic_loss_scale_follows_jmp():
    rng = np.random.default_rng(0)
    finite = [bool(f) for f in rng.random(60) < 0.85] + [True] * 10
    ours = ft.amp.DynamicLossScale(mx.array(2.0 ** 15), period=4, factor=2)
    theirs = jmp.DynamicLossScale(jnp.asarray(2.0 ** 15), period=4, factor=2)
    step = ft.jit(lambda s, f: s.adjust(f))
    for f in finite:
        ours, theirs = step(ours, mx.array(f)), theirs.adjust(jnp.asarray(f))
        assert ours.loss_scale.item() == float(theirs.loss_scale)
        assert ours.counter.item() == int(theirs.counter)
    # It never drops below min_loss_scale, and never grows past the largest finite value.
    low = ft.amp.DynamicLossScale(mx.array(4.0), min_loss_scale=mx.array(2.0))
    for _ in range(3):
        low = low.adjust(mx.array(False))
    assert low.loss_scale.item() == 2.0
    high = ft.amp.DynamicLossScale(mx.array(3e38), period=1).adjust(mx.array(True))
    assert high.loss_scale.item() == pytest.approx(3e38)


def test_static_and_noop_loss_scales_and_helpers_follow_jmp():
    g = {"a": mx.array([1.0, 2.0]), "b": mx.array(4.0)}
    s = ft.amp.StaticLossScale(mx.array(8.0))
    assert s.scale(g)["b"].item() == 32.0 and s.unscale(g)["a"].tolist() == [0.125, 0.25]
    assert s.adjust(mx.array(False)) is s
    assert ft.amp.NoOpLossScale().scale(g) is g and ft.amp.NoOpLossScale().loss_scale == 1
    for leaves in ([1.0, 2.0], [1.0, float("nan")], [float("inf")], []):
        t = [mx.array(x) for x in leaves]
        assert ft.amp.all_finite(t).item() == bool(jmp.all_finite([jnp.asarray(x)
                                                                  for x in leaves]))
    picked = ft.amp.select_tree(mx.array(False), g, ft.tree.map(lambda x: -x, g))
    assert picked["b"].item() == -4.0


def test_loss_scaling_with_apply_if_finite_skips_overflowing_steps():
    params = {"w": mx.array([1.0, -2.0])}
    opt = optim.apply_if_finite(optim.sgd(0.1), max_consecutive_errors=5)
    state, scale = opt.init(params), ft.amp.DynamicLossScale(mx.array(2.0 ** 10), period=2)

    @ft.jit
    def step(params, state, scale, x):
        loss = lambda p: fnp.sum((p["w"] * x) ** 2)
        grads = scale.unscale(ft.grad(lambda p: scale.scale(loss(p)))(params))
        finite = ft.amp.all_finite(grads)
        updates, state = opt.update(grads, state, params)
        return optim.apply_updates(params, updates), state, scale.adjust(finite)

    params, state, scale = step(params, state, scale, mx.array([1.0, 1.0]))
    assert params["w"].tolist() == pytest.approx([0.8, -1.6])
    before = params["w"]
    params, state, scale = step(params, state, scale, mx.array([float("inf"), 1.0]))
    assert mx.array_equal(params["w"], before)  # skipped
    assert scale.loss_scale.item() == 2.0 ** 9  # and the scale halved


def test_bad_amp_arguments():
    with pytest.raises(ValueError, match="unknown key 'q'"):
        ft.amp.get_policy("q=f32")
    with pytest.raises(ValueError, match="unknown dtype 'f8'"):
        ft.amp.get_policy("c=f8")
    with pytest.raises(ValueError, match="compute_dtype must be a floating dtype"):
        ft.amp.Policy(mx.float32, mx.int32, mx.float32)
    with pytest.raises(ValueError, match="dtype must be bfloat16 or float16"):
        ft.amp.autocast(lambda x: x, mx.float32)
    with pytest.raises(TypeError, match="grads_finite must be a boolean scalar"):
        ft.amp.DynamicLossScale(mx.array(2.0)).adjust(mx.array([True, False]))
    with pytest.raises(TypeError, match="loss_scale must be a floating scalar"):
        ft.amp.DynamicLossScale(mx.array(2))


# ----------------------------------------------------------------------------
# autocast
# ----------------------------------------------------------------------------


def _normal(shape, seed=0):
    return mx.random.normal(shape, key=mx.random.key(seed))


@pytest.mark.parametrize("low", [mx.bfloat16, mx.float16])
def test_each_category_runs_in_its_dtype(low):
    x, w = _normal((4, 8)), _normal((8, 8), 1)

    def probe(x, w):
        h = x @ w                              # low
        return {"matmul": h, "einsum": fnp.einsum("ij,jk->ik", x, w),
                "conv": F.conv1d(x[None], w[:3, None, :]),
                "softmax": F.softmax(h), "log_softmax": F.log_softmax(h),
                "sum": fnp.sum(h), "exp": fnp.exp(h), "mean": fnp.mean(h),
                "layer_norm": F.layer_norm(h, None, None, 1e-5),
                "add": h + x,                   # promote: low + float32 -> float32
                "tanh": fnp.tanh(h),            # promote, one operand: stays low
                "float64": x.astype(mx.float64) @ w.astype(mx.float64),
                "int": fnp.arange(3) * 2}

    out = ft.amp.autocast(probe, low)(x, w)
    expected = {"matmul": low, "einsum": low, "conv": low, "softmax": mx.float32,
                "log_softmax": mx.float32, "sum": mx.float32, "exp": mx.float32,
                # (its statistics in float32, its result in the input's dtype, as MLX's)
                "mean": mx.float32, "layer_norm": low, "add": mx.float32,
                "tanh": low, "float64": mx.float64, "int": mx.int32}
    assert {k: v.dtype for k, v in out.items()} == expected
    np.testing.assert_allclose(np.array(out["matmul"].astype(mx.float32)), np.array(x @ w),
                               rtol=2e-2, atol=5e-2)


def _mlp_loss(params, x, y):
    h = fnp.tanh(x @ params["w1"] + params["b1"])
    return fnp.mean((h @ params["w2"] - y) ** 2)


def _mlp(seed=0):
    return {"w1": _normal((8, 16), seed) * 0.3, "b1": mx.zeros(16),
            "w2": _normal((16, 2), seed + 1) * 0.3}


def test_gradients_are_float32_and_close_to_float32_training():
    params, x, y = _mlp(), _normal((32, 8), 5), _normal((32, 2), 6)
    loss = ft.amp.autocast(_mlp_loss)
    value, grads = ft.value_and_grad(loss)(params, x, y)
    assert value.dtype == mx.float32
    exact = ft.grad(_mlp_loss)(params, x, y)
    for k in params:
        assert grads[k].dtype == mx.float32
        np.testing.assert_allclose(np.array(grads[k]), np.array(exact[k]), rtol=0.05,
                                   atol=5e-3)


def test_composes_with_jit_vmap_checkpoint_and_loops():
    params, x, y = _mlp(), _normal((6, 8), 5), _normal((6, 2), 6)
    loss = ft.amp.autocast(_mlp_loss)
    eager = ft.grad(loss)(params, x, y)
    for name, g in [("jit outside", ft.jit(ft.grad(loss))),
                    ("jit inside", ft.grad(ft.amp.autocast(ft.jit(_mlp_loss)))),
                    ("checkpoint", ft.grad(ft.amp.autocast(ft.checkpoint(_mlp_loss)))),
                    ("checkpoint outside", ft.grad(ft.checkpoint(loss)))]:
        got = g(params, x, y)
        for k in params:
            np.testing.assert_allclose(np.array(got[k]), np.array(eager[k]), rtol=1e-2,
                                       atol=1e-3, err_msg=name)
    per_example = ft.vmap(ft.grad(loss), in_axes=(None, 0, 0))(params, x, y)
    loop = [ft.grad(loss)(params, x[i], y[i]) for i in range(6)]
    np.testing.assert_allclose(np.array(per_example["w1"]),
                               np.stack([np.array(g["w1"]) for g in loop]), rtol=1e-2,
                               atol=1e-3)

    # A scan's body runs autocast too, and its carry keeps its dtype.
    def rnn(w, xs):
        def body(h, x):
            h = fnp.tanh(h @ w + x)
            return h, h @ w
        h, ys = lax.scan(body, fnp.zeros(8), xs)
        return h, ys

    w, xs = _normal((8, 8), 2) * 0.3, _normal((5, 8), 3)
    h, ys = ft.amp.autocast(rnn)(w, xs)
    assert h.dtype == ys.dtype == mx.float32  # the body's outputs keep their dtypes
    np.testing.assert_allclose(np.array(ys), np.array(rnn(w, xs)[1]), rtol=0.05, atol=0.02)
    assert not bool(mx.array_equal(ys, rnn(w, xs)[1]))  # but were computed in bfloat16
    graph = str(ft.make_graph(ft.amp.autocast(rnn))(w, xs))
    assert "bf16" in graph and "scan" in graph


def test_training_under_bfloat16_autocast_reaches_the_float32_loss():
    model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 3))
    params, _ = model.init(random.key(0), mx.zeros((1, 16)))
    x = _normal((256, 16), 1)
    labels = fnp.argmax(x[:, :3] + 0.5 * x[:, 3:6], axis=-1)
    opt = optim.adam(1e-2)

    def train(loss_fn):
        p, state = params, opt.init(params)

        @ft.jit
        def step(p, state):
            value, grads = ft.value_and_grad(loss_fn)(p)
            updates, state = opt.update(grads, state, p)
            return optim.apply_updates(p, updates), state, value

        for _ in range(150):
            p, state, value = step(p, state)
        return value.item(), p

    loss = lambda p: fnp.mean(nn.losses.cross_entropy(model(p, x), labels))
    full, _ = train(loss)
    mixed, trained = train(ft.amp.autocast(loss))
    assert all(leaf.dtype == mx.float32 for leaf in ft.tree.leaves(trained))
    assert mixed < 0.2 and abs(mixed - full) < 0.05, (full, mixed)


def test_autocast_leaves_a_function_without_products_unchanged():
    f = lambda x: fnp.sum(fnp.sin(x) * 2.0)
    x = _normal((5,))
    assert ft.amp.autocast(f)(x).item() == f(x).item()
    # itertools: every pair of categories meets through promote without error
    # (bfloat16 with float16 promotes to float32: neither holds the other)
    for a, b in itertools.product([mx.bfloat16, mx.float16, mx.float32], repeat=2):
        assert ft.amp.autocast(lambda u, v: u + v)(x.astype(a), x.astype(b)).dtype == (
            a if a == b else mx.float32)


def test_jit_of_autocast_equals_eager():
    params, x, y = _mlp(), _normal((6, 8), 5), _normal((6, 2), 6)
    loss = ft.amp.autocast(_mlp_loss)
    assert ft.jit(loss)(params, x, y).item() == loss(params, x, y).item()
    eager, staged = ft.grad(loss)(params, x, y), ft.jit(ft.grad(loss))(params, x, y)
    for k in params:
        np.testing.assert_allclose(np.array(staged[k]), np.array(eager[k]), rtol=1e-6,
                                   atol=1e-6)


def test_higher_order_primitives_keep_their_operands_dtypes():
    a, b = mx.ones(3, mx.bfloat16), mx.ones(3)
    f = lambda a, b: (a + 1, b * 2)
    cases = {
        "plain": f, "jit": ft.jit(f), "checkpoint": ft.checkpoint(f),
        "cond": lambda a, b: lax.cond(mx.array(True), f, lambda a, b: (a, b), a, b),
        "scan": lambda a, b: lax.scan(lambda c, _: (f(*c), None), (a, b), None, length=2)[0],
        "while": lambda a, b: lax.while_loop(lambda c: c[1][0] < 5, lambda c: f(*c), (a, b)),
        "sort": lambda a, b: lax.sort((a, b), num_keys=1),
        "barrier": lambda a, b: lax.optimization_barrier((a, b)),
    }
    for name, g in cases.items():
        out = ft.amp.autocast(g)(a, b)
        assert (out[0].dtype, out[1].dtype) == (mx.bfloat16, mx.float32), name


def test_grad_and_vmap_inside_autocast():
    params, x, y = _mlp(), _normal((6, 8), 5), _normal((6, 2), 6)
    grads = ft.amp.autocast(ft.grad(_mlp_loss))(params, x, y)
    outside = ft.grad(ft.amp.autocast(_mlp_loss))(params, x, y)
    for k in params:
        assert grads[k].dtype == mx.float32
        np.testing.assert_allclose(np.array(grads[k]), np.array(outside[k]), rtol=0.05,
                                   atol=5e-3)
    rows = ft.amp.autocast(ft.vmap(lambda w, r: r @ w, in_axes=(None, 0)))(params["w1"], x)
    assert rows.dtype == mx.bfloat16
    np.testing.assert_allclose(np.array(rows.astype(mx.float32)), np.array(x @ params["w1"]),
                               rtol=2e-2, atol=5e-2)


def test_custom_rules_run_as_written():
    @ft.custom_vjp
    def project(w, x):
        return x @ w

    project.defvjp(lambda w, x: (x @ w, (w, x)),
                   lambda res, g: (res[1].T @ g * 10.0, g @ res[0].T))
    w, x = _normal((3, 2)), _normal((4, 3), 1)
    loss = lambda w: fnp.sum(project(w, x))
    exact = ft.grad(loss)(w)
    for name, grad in [("autocast inside grad", ft.grad(ft.amp.autocast(loss))),
                       ("grad inside autocast", ft.amp.autocast(ft.grad(loss)))]:
        got = grad(w)
        assert got.dtype == mx.float32, name
        np.testing.assert_allclose(np.array(got), np.array(exact), rtol=1e-6, err_msg=name)
    assert ft.amp.autocast(project)(w, x).dtype == mx.float32
    batched = ft.amp.autocast(ft.vmap(project, in_axes=(None, 0)))(w, x)
    assert batched.dtype == mx.float32


def test_policy_and_autocast_argument_checks():
    policy = ft.amp.get_policy("p=f32,c=bf16")
    cast = policy.cast_to_compute({"x": np.ones(2), "n": np.arange(2)})
    assert cast["x"].dtype == mx.bfloat16 and isinstance(cast["n"], np.ndarray)
    assert ft.amp.autocast(lambda x: x @ x, "float16")(mx.ones((2, 2))).dtype == mx.float16
    with pytest.raises(ValueError, match="autocast: dtype must be bfloat16 or float16"):
        ft.amp.autocast(lambda x: x, mx.int32)
    with pytest.raises(TypeError, match="autocast: f must be callable"):
        ft.amp.autocast(3)
    with pytest.raises(TypeError, match="get_policy: policy_name must be a str"):
        ft.amp.get_policy(None)
    with pytest.raises(ValueError, match="is not key=dtype"):
        ft.amp.get_policy("p=f32,bf16")
    with pytest.raises(ValueError, match="autocast must be 'low', 'float32' or 'promote'"):
        ft.extend.Primitive("amp_test_bad_category", lambda x: x, autocast="half")
    with pytest.raises(ValueError, match="must have one structure"):
        ft.amp.select_tree(mx.array(True), [mx.ones(1)], (mx.ones(1),))
