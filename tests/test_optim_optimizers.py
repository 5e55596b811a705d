"""ftorch.optim's named optimizers and building blocks: five steps against
NumPy float64 transcriptions of the published rules (tests/optim_reference.py)
and against mlx.optimizers configured to the same rule; convergence on a
quadratic and on Rosenbrock's function in a jitted train step; one trace
while the learning rate changes; bfloat16/float16 parameters and states
that keep their dtypes; schedules as hyperparameters; and errors."""

import math

import mlx.core as mx
import mlx.optimizers as mlx_optim
import numpy as np
import optim_reference as ref
import pytest
from harness import compiler_off

import ftorch as ft
import ftorch.numpy as fnp
import ftorch.optim as optim


@pytest.fixture(autouse=True)
def _no_mlx_compiler():
    # Values and trace counts are what is tested: no g++ run per fused kernel.
    with compiler_off():
        yield


RNG = np.random.default_rng(0)
P0 = {"w": RNG.standard_normal((3, 4)).astype(np.float32),
      "b": RNG.standard_normal(4).astype(np.float32)}
GRADS = [{k: RNG.standard_normal(v.shape).astype(np.float32) for k, v in P0.items()}
         for _ in range(5)]


def to_mx(tree, dtype=mx.float32):
    return {k: mx.array(v).astype(dtype) for k, v in tree.items()}


def run(opt, params, grads, jit=False):
    """``params`` after one ``opt`` step per gradient dict, and the state."""
    state = opt.init(params)

    def step(params, state, grads):
        updates, state = opt.update(grads, state, params)
        return optim.apply_updates(params, updates), state

    step = ft.jit(step) if jit else step
    for g in grads:
        params, state = step(params, state, to_mx(g, ft.tree.leaves(params)[0].dtype))
    return params, state


def assert_close(got, want, rtol=2e-5, atol=2e-6):
    assert set(got) == set(want)
    for k in want:
        np.testing.assert_allclose(np.array(got[k], np.float64), want[k], rtol=rtol, atol=atol,
                                   err_msg=k)


# (alias, keyword arguments): the same keywords configure the optimizer and its
# NumPy transcription.
CASES = [
    ("sgd", dict(learning_rate=0.1)),
    ("sgd", dict(learning_rate=0.1, momentum=0.9)),
    ("sgd", dict(learning_rate=0.1, momentum=0.9, nesterov=True)),
    ("adam", dict(learning_rate=0.1)),
    ("adam", dict(learning_rate=0.05, b1=0.8, b2=0.99, eps=1e-3, eps_root=1e-4)),
    ("adam", dict(learning_rate=0.1, nesterov=True)),
    ("nadam", dict(learning_rate=0.1, b2=0.99)),
    ("adamw", dict(learning_rate=0.1, weight_decay=0.3)),
    ("nadamw", dict(learning_rate=0.1, weight_decay=0.3)),
    ("amsgrad", dict(learning_rate=0.1, b2=0.9)),
    ("adamax", dict(learning_rate=0.1)),
    ("adamax", dict(learning_rate=0.1, b1=0.5, b2=0.9, eps=0.1)),
    ("lion", dict(learning_rate=0.1)),
    ("lion", dict(learning_rate=0.1, b1=0.5, b2=0.9, weight_decay=0.3)),
    ("rmsprop", dict(learning_rate=0.1)),
    ("rmsprop", dict(learning_rate=0.1, decay=0.99, eps=1e-3, eps_in_sqrt=False)),
    ("rmsprop", dict(learning_rate=0.1, centered=True, initial_scale=1.0, momentum=0.9,
                     nesterov=True, bias_correction=True)),
    ("rmsprop", dict(learning_rate=0.1, momentum=0.5, bias_correction=True, eps=1e-2)),
    ("adagrad", dict(learning_rate=0.5)),
    ("adagrad", dict(learning_rate=0.5, initial_accumulator_value=1.0, eps=1e-2)),
    ("adadelta", dict()),
    ("adadelta", dict(learning_rate=2.0, rho=0.5, eps=1e-2, weight_decay=0.1)),
    ("adafactor", dict()),
    ("adafactor", dict(learning_rate=0.1, min_dim_size_to_factor=2, momentum=0.9,
                       weight_decay_rate=0.01, clipping_threshold=0.5)),
    ("adafactor", dict(learning_rate=0.1, min_dim_size_to_factor=3, decay_rate=0.5,
                       decay_offset=-3, multiply_by_parameter_scale=False,
                       clipping_threshold=None, eps=1e-3)),
    ("adafactor", dict(learning_rate=0.1, min_dim_size_to_factor=2, factored=False)),
    ("lamb", dict(learning_rate=0.1)),
    ("lamb", dict(learning_rate=0.1, b1=0.8, eps=1e-3, weight_decay=0.1)),
    ("lars", dict(learning_rate=1.0)),
    ("lars", dict(learning_rate=1.0, weight_decay=0.1, trust_coefficient=0.1, eps=1e-3,
                  momentum=0.5, nesterov=True)),
    ("muon", dict(learning_rate=0.1)),
    ("muon", dict(learning_rate=0.1, momentum=0.8, weight_decay=0.0, nesterov=False,
                  ns_steps=3)),
]
CASE_IDS = [f"{name}-{i}" for i, (name, _) in enumerate(CASES)]
ALIASES = sorted({name for name, _ in CASES})


def make(name, **kwargs):
    return getattr(optim, name)(**kwargs)


@pytest.mark.parametrize("name, kwargs", CASES, ids=CASE_IDS)
def test_matches_numpy_transcription(name, kwargs):
    got, state = run(make(name, **kwargs), to_mx(P0), GRADS)
    want = ref.run(getattr(ref, name), P0, GRADS, **kwargs)
    assert_close(got, want)
    assert state.count.item() == len(GRADS)


@pytest.mark.parametrize("nesterov", [False, True])
@pytest.mark.parametrize("mask", [None, {"w": True, "b": False},
                                  lambda p: {k: k == "b" for k in p}],
                         ids=["no_mask", "mask", "mask_fn"])
def test_adamw_is_its_chain(mask, nesterov):
    # adam and adamw form each step in one expression: the same numbers as the
    # chain of building blocks optax spells them with, and the same state.
    fused = optim.adamw(0.1, b2=0.99, eps_root=1e-3, weight_decay=0.3, mask=mask,
                        nesterov=nesterov)
    # The chain's hyperparameters as the float32 arrays the injected state holds.
    f32 = mx.array
    chained = optim.chain(
        optim.scale_by_adam(f32(0.9), f32(0.99), f32(1e-8), 1e-3, nesterov=nesterov),
        optim.add_decayed_weights(f32(0.3), mask), optim.scale_by_learning_rate(f32(0.1)))
    got, state = run(fused, to_mx(P0), GRADS)
    want, want_state = run(chained, to_mx(P0), GRADS)
    assert_close(got, {k: np.array(v, np.float64) for k, v in want.items()}, rtol=1e-6,
                 atol=1e-7)
    assert ft.tree.structure(state.inner_state) == ft.tree.structure(want_state)
    for a, b in zip(ft.tree.leaves(state.inner_state), ft.tree.leaves(want_state)):
        np.testing.assert_allclose(np.array(a), np.array(b), rtol=1e-6)
    adam, _ = run(optim.adam(0.1), to_mx(P0), GRADS)
    plain, _ = run(optim.chain(optim.scale_by_adam(f32(0.9), f32(0.999), f32(1e-8)),
                               optim.scale(-f32(0.1))), to_mx(P0), GRADS)
    assert_close(adam, {k: np.array(v, np.float64) for k, v in plain.items()}, rtol=1e-6,
                 atol=1e-7)


def test_adafactor_factors_as_optax():
    """The factored leaves keep the means over their two largest axes; the
    others a full second moment."""
    params = {"m": mx.zeros((5, 2, 3)), "v": mx.zeros(7)}
    state = optim.adafactor(0.1, min_dim_size_to_factor=3).init(params)
    factored = state.inner_state[0]
    assert isinstance(factored, optim.FactoredState)
    assert factored.v_row["m"].shape == (2, 3)  # the mean over axis 0 (the largest)
    assert factored.v_col["m"].shape == (5, 2)  # over axis 2 (the second largest)
    assert factored.v["m"].shape == (1,) and factored.v["v"].shape == (7,)
    g = {"m": mx.array(RNG.standard_normal((5, 2, 3)).astype(np.float32)),
         "v": mx.array(RNG.standard_normal(7).astype(np.float32))}
    opt = optim.adafactor(0.1, min_dim_size_to_factor=3)
    got, _ = run(opt, params, [g, g])
    want = ref.run(ref.adafactor, {k: np.array(v) for k, v in params.items()},
                   [{k: np.array(v) for k, v in g.items()}] * 2, learning_rate=0.1,
                   min_dim_size_to_factor=3)
    assert_close(got, want)


# ---------------------------------------------------------------------------
# mlx.optimizers, configured to the same rule
# ---------------------------------------------------------------------------

B1, B2, LR = 0.9, 0.99, 0.05


def mlx_adam_schedule(n):
    # MLX's Adam without bias correction, with eps=0: m / sqrt(v) is Adam's
    # corrected ratio times (1 - b1**t) / sqrt(1 - b2**t).
    return LR * (1 - B1 ** (n + 1.0)) / fnp.sqrt(1 - B2 ** (n + 1.0))


MLX_CASES = {
    "sgd": (lambda: mlx_optim.SGD(LR), lambda: optim.sgd(LR)),
    "sgd_momentum": (lambda: mlx_optim.SGD(LR, momentum=0.9),
                     lambda: optim.sgd(LR, momentum=0.9)),
    "sgd_nesterov": (lambda: mlx_optim.SGD(LR, momentum=0.9, nesterov=True),
                     lambda: optim.sgd(LR, momentum=0.9, nesterov=True)),
    # MLX's SGD weight decay is L2 on the gradient, before the momentum.
    "sgd_weight_decay": (lambda: mlx_optim.SGD(LR, momentum=0.9, weight_decay=0.1),
                         lambda: optim.chain(optim.add_decayed_weights(0.1),
                                             optim.sgd(LR, momentum=0.9))),
    "adam_bias_correction": (
        lambda: mlx_optim.Adam(LR, betas=[B1, B2], eps=1e-6, bias_correction=True),
        lambda: optim.adam(LR, B1, B2, eps=1e-6)),
    "adam_mlx_default": (lambda: mlx_optim.Adam(LR, betas=[B1, B2], eps=0.0),
                         lambda: optim.adam(mlx_adam_schedule, B1, B2, eps=0.0)),
    "adamw": (lambda: mlx_optim.AdamW(LR, betas=[B1, B2], eps=1e-6, weight_decay=0.1,
                                      bias_correction=True),
              lambda: optim.adamw(LR, B1, B2, eps=1e-6, weight_decay=0.1)),
    # MLX's Adamax: no bias correction of m, eps added outside the max.
    "adamax": (lambda: mlx_optim.Adamax(LR, betas=[B1, B2], eps=0.0),
               lambda: optim.adamax(lambda n: LR * (1 - B1 ** (n + 1.0)), B1, B2, eps=0.0)),
    "lion": (lambda: mlx_optim.Lion(LR, betas=[B1, B2], weight_decay=0.1),
             lambda: optim.lion(LR, B1, B2, weight_decay=0.1)),
    "lion_no_decay": (lambda: mlx_optim.Lion(LR), lambda: optim.lion(LR, weight_decay=0.0)),
    "rmsprop": (lambda: mlx_optim.RMSprop(LR, alpha=0.9, eps=1e-4),
                lambda: optim.rmsprop(LR, decay=0.9, eps=1e-4, eps_in_sqrt=False)),
    # MLX's Adagrad starts from 0 and adds eps outside the root: equal up to
    # eps / sqrt(sum of squares).
    "adagrad": (lambda: mlx_optim.Adagrad(LR, eps=1e-10),
                lambda: optim.adagrad(LR, initial_accumulator_value=0.0, eps=0.0)),
    "adadelta": (lambda: mlx_optim.AdaDelta(0.5, rho=0.8, eps=1e-4),
                 lambda: optim.adadelta(0.5, rho=0.8, eps=1e-4)),
    # MLX's Adafactor with an absolute step size, on parameters of 2 and 1 axes
    # (MLX factors every matrix: min_dim_size_to_factor=1); weight decay
    # cannot align (MLX scales it by the parameter scale too).
    "adafactor": (lambda: mlx_optim.Adafactor(LR, relative_step=False),
                  lambda: optim.adafactor(LR, min_dim_size_to_factor=1)),
    "muon": (lambda: mlx_optim.Muon(LR), lambda: optim.muon(LR)),
    "muon_plain": (lambda: mlx_optim.Muon(LR, momentum=0.8, weight_decay=0.0, nesterov=False,
                                          ns_steps=3),
                   lambda: optim.muon(LR, momentum=0.8, weight_decay=0.0, nesterov=False,
                                      ns_steps=3)),
    "adafactor_momentum": (
        lambda: mlx_optim.Adafactor(LR, relative_step=False, beta_1=0.8, clip_threshold=0.5,
                                    scale_parameter=False),
        lambda: optim.adafactor(LR, min_dim_size_to_factor=1, momentum=0.8,
                                clipping_threshold=0.5, multiply_by_parameter_scale=False)),
}


@pytest.mark.parametrize("case", sorted(MLX_CASES))
def test_matches_mlx_optimizers(case):
    make_mlx, make_ft = MLX_CASES[case]
    params = {**to_mx(P0), "t": mx.array(RNG.standard_normal((5, 2)).astype(np.float32))}
    grads = [{**g, "t": RNG.standard_normal((5, 2)).astype(np.float32)} for g in GRADS]
    got, _ = run(make_ft(), params, grads)
    theirs, mlx_opt = params, make_mlx()
    for g in grads:
        theirs = mlx_opt.apply_gradients(to_mx(g), theirs)
    assert_close(got, {k: np.array(v, np.float64) for k, v in theirs.items()}, rtol=1e-5,
                 atol=1e-6)


# ---------------------------------------------------------------------------
# Convergence, in a jitted train step
# ---------------------------------------------------------------------------

QA = mx.array([[0.5, 1.0, 2.0], [1.5, 0.8, 1.2]])
QC = mx.array([[1.0, -2.0, 0.5], [0.0, 3.0, -1.0]])
QD = mx.array([1.0, -1.0, 2.0])


def quadratic(p):
    """Minimum 0 at ``w = QC``, ``b = QD``."""
    return 0.5 * fnp.sum(QA * (p["w"] - QC) ** 2) + 0.5 * fnp.sum((p["b"] - QD) ** 2)


def rosenbrock(p):
    """Minimum 0 at ``(1, 1)``, at the end of a long curved valley."""
    x, y = p["xy"][0], p["xy"][1]
    return (1 - x) ** 2 + 100 * (y - x * x) ** 2


def minimise(opt, loss, params, steps):
    @ft.jit
    def step(params, state):
        updates, state = opt.update(ft.grad(loss)(params), state, params)
        return optim.apply_updates(params, updates), state

    state = opt.init(params)
    for _ in range(steps):
        params, state = step(params, state)
    assert step.trace_count == 1
    return loss(params).item()


def cos(lr, steps):
    return optim.cosine_decay_schedule(lr, steps)


# name -> (quadratic: kwargs, steps, tolerance), (Rosenbrock from (-1.2, 1): the same).
# Lion's sign steps, and any step on Rosenbrock's valley, settle with a decaying
# learning rate; the adaptive methods without momentum crawl along that valley
# (their tolerance there is looser). Adafactor's default step, relative to the
# parameters' RMS, shrinks where the valley passes near the origin.
CONVERGENCE = {
    "sgd": ((dict(learning_rate=0.5, momentum=0.5), 100, 1e-8),
            (dict(learning_rate=3e-3, momentum=0.9), 400, 1e-4)),
    "adam": ((dict(learning_rate=0.1), 150, 1e-6),
             (dict(learning_rate=0.5), 400, 1e-2)),
    "nadam": ((dict(learning_rate=0.1), 150, 1e-6),
              (dict(learning_rate=cos(1.0, 400)), 400, 2e-2)),
    "adamw": ((dict(learning_rate=0.1, weight_decay=0.0), 150, 1e-6),
              (dict(learning_rate=0.5, weight_decay=0.0), 400, 1e-2)),
    "nadamw": ((dict(learning_rate=0.1, weight_decay=0.0), 150, 1e-6),
               (dict(learning_rate=cos(1.0, 400), weight_decay=0.0), 400, 2e-2)),
    "amsgrad": ((dict(learning_rate=0.1), 200, 1e-6),
                (dict(learning_rate=1.0), 1000, 2e-2)),
    "adamax": ((dict(learning_rate=0.1), 150, 1e-6),
               (dict(learning_rate=1.0), 1000, 1e-2)),
    "lion": ((dict(learning_rate=cos(0.1, 150), weight_decay=0.0), 150, 1e-4),
             (dict(learning_rate=cos(0.1, 400), weight_decay=0.0), 400, 1e-2)),
    "rmsprop": ((dict(learning_rate=cos(0.1, 150)), 150, 1e-4),
                (dict(learning_rate=cos(0.01, 400), momentum=0.9), 400, 1e-4)),
    "adagrad": ((dict(learning_rate=0.5), 150, 1e-6),
                (dict(learning_rate=2.0), 1000, 0.1)),
    "adadelta": ((dict(learning_rate=1.0, eps=1e-3), 300, 1e-4),
                 (dict(learning_rate=cos(10.0, 1000)), 1000, 0.1)),
    "adafactor": ((dict(learning_rate=cos(0.5, 150), min_dim_size_to_factor=2), 150, 1e-4),
                  (dict(learning_rate=cos(0.2, 600), momentum=0.9,
                        multiply_by_parameter_scale=False), 600, 1e-4)),
    "lamb": ((dict(learning_rate=cos(0.1, 150)), 150, 1e-4),
             (dict(learning_rate=cos(0.1, 400)), 400, 1e-2)),
    "muon": ((dict(learning_rate=cos(0.3, 300), weight_decay=0.0), 300, 1e-4),
             (dict(learning_rate=0.01, weight_decay=0.0), 1000, 1e-3)),
    "lars": ((dict(learning_rate=cos(0.3, 300), trust_coefficient=1.0, momentum=0.5), 300,
              1e-4),
             (dict(learning_rate=cos(0.01, 400), trust_coefficient=1.0), 400, 1e-4)),
}


@pytest.mark.parametrize("name", sorted(CONVERGENCE))
def test_converges_on_a_quadratic(name):
    kwargs, steps, tol = CONVERGENCE[name][0]
    params = {"w": mx.zeros((2, 3)), "b": mx.zeros(3)}
    assert minimise(make(name, **kwargs), quadratic, params, steps) < tol


@pytest.mark.parametrize("name", sorted(CONVERGENCE))
def test_converges_on_rosenbrock(name):
    kwargs, steps, tol = CONVERGENCE[name][1]
    assert minimise(make(name, **kwargs), rosenbrock, {"xy": mx.array([-1.2, 1.0])},
                    steps) < tol


# ---------------------------------------------------------------------------
# One trace while the learning rate changes
# ---------------------------------------------------------------------------

FIRST_CASE = {name: kwargs for name, kwargs in reversed(CASES)}  # each alias's first case


def with_lr(name):
    return {**FIRST_CASE[name], "learning_rate": 0.1}


def lr_steps(opt, params, hyperparams, jit):
    """Five steps, the learning rate set to a new value before each."""
    def step(params, state, grads):
        updates, state = opt.update(grads, state, params)
        return optim.apply_updates(params, updates), state

    jitted = ft.jit(step)
    state = opt.init(params)
    for i, g in enumerate(GRADS):
        hyperparams(state)["learning_rate"] = mx.array(0.1 / (i + 1))
        params, state = (jitted if jit else step)(params, state, to_mx(g))
    return params, jitted.trace_count


@pytest.mark.parametrize("name", ALIASES)
def test_changing_the_learning_rate_does_not_retrace(name):
    opt = make(name, **with_lr(name))
    got, traces = lr_steps(opt, to_mx(P0), lambda s: s.hyperparams, jit=True)
    assert traces == 1
    want, _ = lr_steps(opt, to_mx(P0), lambda s: s.hyperparams, jit=False)
    assert_close(got, {k: np.array(v, np.float64) for k, v in want.items()}, rtol=1e-6,
                 atol=1e-7)


def test_chained_optimizer_keeps_its_hyperparameters_in_its_own_state():
    # In a user's chain the injected state is the optimizer's element of the tuple.
    opt = optim.chain(optim.clip_by_global_norm(1.0), optim.adamw(0.1, weight_decay=0.1))
    got, traces = lr_steps(opt, to_mx(P0), lambda s: s[1].hyperparams, jit=True)
    assert traces == 1
    want, _ = lr_steps(opt, to_mx(P0), lambda s: s[1].hyperparams, jit=False)
    assert_close(got, {k: np.array(v, np.float64) for k, v in want.items()}, rtol=1e-6,
                 atol=1e-7)


# ---------------------------------------------------------------------------
# dtypes
# ---------------------------------------------------------------------------

def dtypes(tree):
    return [x.dtype for x in ft.tree.leaves(tree)]


@pytest.mark.parametrize("dtype", [mx.bfloat16, mx.float16], ids=["bfloat16", "float16"])
@pytest.mark.parametrize("name", ALIASES)
def test_low_precision_parameters_keep_their_dtype(name, dtype):
    opt = make(name, **with_lr(name))
    params = to_mx(P0, dtype)
    state = opt.init(params)
    state_dtypes = dtypes(state)

    @ft.jit
    def step(params, state, grads):
        updates, state = opt.update(grads, state, params)
        assert dtypes(updates) == [dtype, dtype]
        return optim.apply_updates(params, updates), state

    for g in GRADS[:3]:
        params, state = step(params, state, to_mx(g, dtype))
        assert dtypes(params) == [dtype, dtype]
        assert dtypes(state) == state_dtypes
    assert step.trace_count == 1
    assert all(np.isfinite(np.array(p.astype(mx.float32))).all() for p in params.values())


def inner(state, i=0):
    return state.inner_state[i]


@pytest.mark.parametrize("make_opt, pick, want", [
    (lambda: optim.adam(0.1, mu_dtype=mx.float32), lambda s: (inner(s).mu, inner(s).nu),
     (mx.float32, mx.bfloat16)),
    (lambda: optim.adamw(0.1, mu_dtype=mx.float32), lambda s: (inner(s).mu, inner(s).nu),
     (mx.float32, mx.bfloat16)),
    (lambda: optim.nadam(0.1, mu_dtype=mx.float32), lambda s: (inner(s).mu, inner(s).nu),
     (mx.float32, mx.bfloat16)),
    (lambda: optim.amsgrad(0.1, mu_dtype=mx.float32),
     lambda s: (inner(s).mu, inner(s).nu_max), (mx.float32, mx.bfloat16)),
    (lambda: optim.lion(0.1, mu_dtype=mx.float32), lambda s: (inner(s).mu,),
     (mx.float32,)),
    (lambda: optim.sgd(0.1, momentum=0.9, accumulator_dtype=mx.float32),
     lambda s: (inner(s).trace,), (mx.float32,)),
    (lambda: optim.adafactor(0.1, momentum=0.9), lambda s: (inner(s, 4).ema, inner(s).v),
     (mx.float32, mx.bfloat16)),
    (lambda: optim.adafactor(0.1, momentum=0.9, dtype_momentum=mx.bfloat16),
     lambda s: (inner(s, 4).ema,), (mx.bfloat16,)),
    (lambda: optim.ema(0.9, accumulator_dtype=mx.float32), lambda s: (s.ema,),
     (mx.float32,)),
], ids=["adam", "adamw", "nadam", "amsgrad", "lion", "sgd", "adafactor", "adafactor_bf16",
        "ema"])
def test_accumulator_dtypes_are_honoured(make_opt, pick, want):
    opt = make_opt()
    params = to_mx(P0, mx.bfloat16)
    state = opt.init(params)
    for _ in range(2):
        for tree, dtype in zip(pick(state), want):
            assert set(dtypes(tree)) == {dtype}
        updates, state = opt.update(to_mx(GRADS[0], mx.bfloat16), state, params)
        assert set(dtypes(updates)) == {mx.bfloat16}


# ---------------------------------------------------------------------------
# Schedules as hyperparameters
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", ALIASES)
def test_learning_rate_schedule(name):
    schedule = lambda count: 0.1 / (1.0 + count)  # noqa: E731
    opt = make(name, **{**with_lr(name), "learning_rate": schedule})
    params = to_mx(P0)
    state = opt.init(params)
    assert state.hyperparams["learning_rate"].item() == pytest.approx(0.1)
    seen = []
    for g in GRADS[:3]:
        updates, state = opt.update(to_mx(g), state, params)
        params = optim.apply_updates(params, updates)
        seen.append(state.hyperparams["learning_rate"].item())
    assert seen == pytest.approx([0.1, 0.05, 0.1 / 3])
    # ... and it is the learning rate used: the same as setting it by hand.
    want, _ = lr_steps_values(make(name, **with_lr(name)), [0.1, 0.05, 0.1 / 3])
    assert_close(params, {k: np.array(v, np.float64) for k, v in want.items()}, rtol=1e-6,
                 atol=1e-7)


def lr_steps_values(opt, lrs):
    params = to_mx(P0)
    state = opt.init(params)
    for lr, g in zip(lrs, GRADS):
        state.hyperparams["learning_rate"] = mx.array(lr)
        updates, state = opt.update(to_mx(g), state, params)
        params = optim.apply_updates(params, updates)
    return params, state


def test_sgd_step_follows_the_schedule_under_jit():
    opt = optim.sgd(lambda count: 1.0 / (1.0 + count))
    step = ft.jit(lambda p, s: opt.update({"w": mx.ones(1)}, s, p))
    state, sizes = opt.init({"w": mx.zeros(1)}), []
    for _ in range(3):
        u, state = step({"w": mx.zeros(1)}, state)
        sizes.append(u["w"].item())
    assert sizes == pytest.approx([-1.0, -0.5, -1 / 3]) and step.trace_count == 1
    assert state.hyperparams["learning_rate"].item() == pytest.approx(1 / 3)


def test_weight_decay_schedule():
    opt = optim.adamw(0.1, weight_decay=lambda count: 0.5 * count)
    got, state = run(opt, to_mx(P0), GRADS[:3])
    assert state.hyperparams["weight_decay"].item() == 1.0
    want = {}
    for k, p in P0.items():
        p, s = np.asarray(p, np.float64), {}
        for t, g in enumerate(GRADS[:3], start=1):
            p, s = ref.adamw(p, np.asarray(g[k], np.float64), s, t, 0.1,
                             weight_decay=0.5 * (t - 1))
        want[k] = p
    assert_close(got, want)


def test_add_decayed_weights_with_a_schedule_counts_its_own_steps():
    opt = optim.add_decayed_weights(lambda count: count + 1.0)
    p = mx.array([2.0])
    state = opt.init(p)
    u1, state = opt.update(mx.zeros(1), state, p)
    u2, state = opt.update(mx.zeros(1), state, p)
    assert (u1.item(), u2.item(), state.count.item()) == (2.0, 4.0, 2)


# ---------------------------------------------------------------------------
# Building blocks
# ---------------------------------------------------------------------------

def test_clip_and_global_norm():
    tree = {"a": mx.array([3.0, -12.0]), "b": mx.array([[4.0]])}
    assert optim.global_norm(tree).item() == pytest.approx(13.0)
    clipped, _ = optim.clip_by_global_norm(6.5).update(tree, optim.EmptyState())
    assert clipped["a"].tolist() == pytest.approx([1.5, -6.0])
    same, _ = optim.clip_by_global_norm(20.0).update(tree, optim.EmptyState())
    assert same["a"].tolist() == [3.0, -12.0]
    c, _ = optim.clip(5.0).update(tree, optim.EmptyState())
    assert c["a"].tolist() == [3.0, -5.0] and c["b"].tolist() == [[4.0]]
    bf = {"a": mx.array([300.0, 400.0], mx.bfloat16)}
    assert optim.clip_by_global_norm(1.0).update(bf, optim.EmptyState())[0]["a"].dtype == \
        mx.bfloat16


def test_clip_by_global_norm_under_jit_and_grad():
    opt = optim.clip_by_global_norm(1.0)
    f = ft.jit(lambda t: opt.update(t, optim.EmptyState())[0])
    for scale in (0.1, 10.0):
        out = f({"a": mx.array([3.0, 4.0]) * scale})
        assert optim.global_norm(out).item() == pytest.approx(min(5.0 * scale, 1.0))
    assert f.trace_count == 1
    g = ft.grad(lambda x: fnp.sum(opt.update({"a": x}, optim.EmptyState())[0]["a"]))(
        mx.array([3.0, 4.0]))
    # d/dx of x / |x|: (I - x x^T / |x|^2) / |x| applied to ones.
    x = np.array([3.0, 4.0])
    want = (np.ones(2) - x * x.sum() / 25.0) / 5.0
    np.testing.assert_allclose(np.array(g), want, rtol=1e-5)


def test_ema_debias_and_trace():
    opt = optim.ema(0.9)
    state = opt.init(mx.zeros(1))
    for _ in range(3):
        u, state = opt.update(mx.array([2.0]), state)
    assert u.item() == pytest.approx(2.0)  # debiased: a constant input's mean
    assert state.ema.item() == pytest.approx(2.0 * (1 - 0.9 ** 3))
    assert state.count.item() == 3


def test_add_decayed_weights_mask():
    params = {"w": mx.array([2.0]), "b": mx.array([3.0])}
    opt = optim.add_decayed_weights(0.5, mask={"w": True, "b": False})
    u, _ = opt.update({"w": mx.zeros(1), "b": mx.zeros(1)}, opt.init(params), params)
    assert (u["w"].item(), u["b"].item()) == (1.0, 0.0)
    opt = optim.adamw(0.1, weight_decay=0.5, mask=lambda p: {k: k == "w" for k in p})
    zero = {"w": mx.zeros(1), "b": mx.zeros(1)}
    u, _ = opt.update(zero, opt.init(params), params)
    assert u["w"].item() == pytest.approx(-0.1) and u["b"].item() == 0.0


def test_lars_masks():
    params = {"w": mx.array([3.0, 4.0]), "b": mx.array([1.0])}
    grads = {"w": mx.array([0.0, 1.0]), "b": mx.array([2.0])}
    opt = optim.lars(1.0, weight_decay=0.5, weight_decay_mask={"w": True, "b": False},
                     trust_coefficient=1.0, trust_ratio_mask={"w": True, "b": False})
    u, _ = opt.update(grads, opt.init(params), params)
    d = np.array([1.5, 3.0])  # g + 0.5 p
    np.testing.assert_allclose(np.array(u["w"]), -5.0 / np.linalg.norm(d) * d, rtol=1e-6)
    assert u["b"].item() == -2.0  # neither decayed nor scaled


def test_trust_ratio_is_one_for_zero_parameters():
    u, _ = optim.scale_by_trust_ratio().update(mx.array([1.0, 2.0]), optim.EmptyState(),
                                               mx.zeros(2))
    assert u.tolist() == [1.0, 2.0]
    g = ft.grad(lambda p: fnp.sum(optim.scale_by_trust_ratio(min_norm=1e-3).update(
        mx.ones(2), optim.EmptyState(), p)[0]))(mx.zeros(2))
    assert np.isfinite(np.array(g)).all()


def test_scale_by_rms_bias_correction_matches_adam_without_momentum():
    # optax documents this identity: rms(b2, eps outside, bias-corrected) == adam(b1=0).
    a, _ = run(optim.chain(optim.scale_by_rms(0.99, 1e-8, eps_in_sqrt=False,
                                              bias_correction=True), optim.scale(-0.1)),
               to_mx(P0), GRADS)
    b, _ = run(optim.chain(optim.scale_by_adam(0.0, 0.99), optim.scale(-0.1)), to_mx(P0),
               GRADS)
    assert_close(a, {k: np.array(v, np.float64) for k, v in b.items()}, rtol=1e-6)


def test_optimizer_state_is_vmappable():
    # One optimizer per example: parameters and states batched along axis 0.
    opt = optim.adam(0.1)
    params = mx.array(RNG.standard_normal((4, 3)).astype(np.float32))
    grads = mx.array(RNG.standard_normal((4, 3)).astype(np.float32))
    state = ft.vmap(opt.init)(params)
    u, state = ft.vmap(opt.update)(grads, state, params)
    for i in range(4):
        ui, _ = opt.update(grads[i], opt.init(params[i]), params[i])
        np.testing.assert_allclose(np.array(u[i]), np.array(ui), rtol=1e-6)


def test_updates_are_differentiable_in_the_hyperparameters():
    # A meta-gradient: d(p after one Adam step)/d(learning rate) = the update / lr.
    def after(lr):
        opt = optim.adam(lr)
        p = mx.array([1.0, -2.0])
        u, _ = opt.update(mx.array([0.5, 0.25]), opt.init(p), p)
        return fnp.sum(optim.apply_updates(p, u))

    assert ft.grad(after)(mx.array(0.1)).item() == pytest.approx(-2.0, rel=1e-4)


# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------

def test_state_of_another_transformation_is_refused():
    p = to_mx(P0)
    with pytest.raises(TypeError, match="scale_by_adam: the state must be a ScaleByAdamState"):
        optim.scale_by_adam().update(p, optim.scale_by_lion().init(p))
    with pytest.raises(TypeError, match="ScaleByAmsgradState"):
        optim.adam(0.1).update(p, optim.amsgrad(0.1).init(p), p)
    with pytest.raises(TypeError, match="scale_by_rms: the state must be a "
                                        "ScaleByRmsWithCountState"):
        optim.scale_by_rms(bias_correction=True).update(p, optim.scale_by_rms().init(p))
    with pytest.raises(TypeError):  # another optimizer's hyperparameters
        optim.adam(0.1).update(p, optim.lion(0.1).init(p), p)


def test_state_for_other_parameters_is_refused():
    opt = optim.adam(0.1)
    state = opt.init(to_mx(P0))
    with pytest.raises(ValueError, match=r"scale_by_adam: updates and state.mu differ: "
                                         r"updates has no leaf for state.mu\['b'\]"):
        opt.update({"w": mx.zeros((3, 4))}, state)
    with pytest.raises(ValueError, match=r"updates\['b'\] has shape \(2,\), but "
                                         r"state.mu\['b'\] has \(4,\)"):
        opt.update({"w": mx.zeros((3, 4)), "b": mx.zeros(2)}, state)
    fopt = optim.scale_by_factored_rms()
    with pytest.raises(ValueError, match="scale_by_factored_rms"):
        fopt.update(mx.zeros(3), fopt.init(mx.zeros(2)))


@pytest.mark.parametrize("make_opt", [
    lambda: optim.adamw(0.1), lambda: optim.lion(0.1), lambda: optim.lamb(0.1),
    lambda: optim.lars(0.1), lambda: optim.adafactor(0.1),
    lambda: optim.scale_by_trust_ratio(), lambda: optim.scale_by_param_block_rms(),
], ids=["adamw", "lion", "lamb", "lars", "adafactor", "trust_ratio", "param_block_rms"])
def test_missing_parameters(make_opt):
    opt = make_opt()
    p = to_mx(P0)
    with pytest.raises(ValueError, match="needs the parameters"):
        opt.update(p, opt.init(p))


def test_bad_lion_mode():
    with pytest.raises(ValueError, match="mode must be"):
        optim.scale_by_lion(mode="soft")


def test_negative_learning_rate_ascends():
    opt = optim.adam(-0.1)
    u, _ = opt.update(mx.array([2.0]), opt.init(mx.zeros(1)))
    assert u.item() == pytest.approx(0.1, rel=1e-4)


def test_optimizer_without_momentum_state_and_none_learning_rate():
    # adadelta and adafactor take learning_rate=None (no scaling), as optax.
    for opt in (optim.adadelta(), optim.adafactor()):
        state = opt.init(to_mx(P0))
        assert "learning_rate" not in state.hyperparams
        u, _ = opt.update(to_mx(GRADS[0]), state, to_mx(P0))
        assert all(math.isfinite(x) for x in np.array(u["w"]).ravel())
