"""ftorch.optim schedules: values against NumPy transcriptions of their
formulas (and optax, where installed), under jit with a traced count, against
mlx.optimizers' schedules of the same configuration, and argument errors."""

import math

import mlx.core as mx
import mlx.optimizers as mlx_optim
import numpy as np
import pytest
from harness import compiler_off

import ftorch as ft
import ftorch.optim as optim

COUNTS = np.arange(0, 241)


@pytest.fixture(autouse=True)
def _no_mlx_compiler():
    # Values and trace counts are what is tested: no g++ run per fused kernel.
    with compiler_off():
        yield


# ---------------------------------------------------------------------------
# NumPy transcriptions (float64) of each formula, elementwise over counts
# ---------------------------------------------------------------------------

def np_polynomial(init, end, power, steps, begin=0):
    def f(n):
        if steps == 0:
            return np.full(np.shape(n), float(init))
        t = np.clip(n - begin, 0, steps)
        return (init - end) * (1 - t / steps) ** power + end
    return f


def np_piecewise_constant(init, bs):
    def f(n):
        n = np.asarray(n, np.float64)
        v = np.full(n.shape, float(init))
        for b, s in sorted(bs.items()):
            v = v * np.where(n >= b, s, 1.0)
        return v
    return f


def np_exponential(init, steps, rate, begin=0, staircase=False, end=None):
    def f(n):
        e = np.asarray(n, np.float64) - begin
        p = np.floor(e / steps) if staircase else e / steps
        v = np.where(e <= 0, init, init * rate ** p)
        if end is not None:
            v = np.maximum(v, end) if rate < 1 else np.minimum(v, end)
        return v
    return f


def np_cosine(init, steps, alpha=0.0, exponent=1.0):
    def f(n):
        t = np.minimum(n, steps)
        return init * ((1 - alpha) * (0.5 * (1 + np.cos(np.pi * t / steps))) ** exponent + alpha)
    return f


def np_join(fs, boundaries):
    def f(n):
        n = np.asarray(n)
        v = fs[0](n)
        for b, g in zip(boundaries, fs[1:]):
            v = np.where(n < b, v, g(n - b))
        return v
    return f


def np_warmup_cosine(init, peak, warmup, decay, end=0.0, exponent=1.0):
    return np_join([np_polynomial(init, peak, 1, warmup),
                    np_cosine(peak, decay - warmup, end / peak, exponent)], [warmup])


def np_interpolate(kind, init, bs):
    bounds = [0] + sorted(bs)
    values = [init]
    for b in sorted(bs):
        values.append(values[-1] * bs[b])

    def f(n):
        n = np.asarray(n, np.float64)
        out = np.full(n.shape, values[-1])
        for i in range(len(bounds) - 1):  # the interval each count lies in
            pct = (n - bounds[i]) / max(bounds[i + 1] - bounds[i], 1)
            a, b = values[i], values[i + 1]
            v = (b - a) * pct + a if kind == "linear" else b + (a - b) / 2 * (np.cos(np.pi * pct)
                                                                             + 1)
            out = np.where((bounds[i] <= n) & (n < bounds[i + 1]), v, out)
        return out
    return f


def np_onecycle_cosine(steps, peak, pct_start=0.3, div=25.0, final_div=1e4):
    return np_interpolate("cosine", peak / div, {int(pct_start * steps): div,
                                                 steps: 1 / (div * final_div)})


def np_onecycle_linear(steps, peak, pct_start=0.3, pct_final=0.85, div=25.0, final_div=1e4):
    return np_interpolate("linear", peak / div, {int(pct_start * steps): div,
                                                 int(pct_final * steps): 1 / div,
                                                 steps: 1 / final_div})


CYCLES = [dict(init_value=0.0, peak_value=1.0, warmup_steps=5, decay_steps=50),
          dict(init_value=0.1, peak_value=0.5, warmup_steps=10, decay_steps=100, end_value=0.01)]

# (name, ours, reference); the configurations put boundaries inside COUNTS.
CASES = [
    ("constant", optim.constant_schedule(0.25), lambda n: np.full(np.shape(n), 0.25)),
    ("polynomial", optim.polynomial_schedule(1.0, 0.01, 2, 100, 5),
     np_polynomial(1.0, 0.01, 2, 100, 5)),
    ("polynomial_frac_power", optim.polynomial_schedule(0.5, 2.0, 0.5, 60),
     np_polynomial(0.5, 2.0, 0.5, 60)),
    ("linear", optim.linear_schedule(0.0, 1.0, 50, 10), np_polynomial(0.0, 1.0, 1, 50, 10)),
    ("linear_no_transition", optim.linear_schedule(0.5, 1.0, 0), np_polynomial(0.5, 1.0, 1, 0)),
    ("piecewise_constant", optim.piecewise_constant_schedule(1.0, {10: 0.5, 50: 0.1, 200: 0.0}),
     np_piecewise_constant(1.0, {10: 0.5, 50: 0.1, 200: 0.0})),
    ("piecewise_constant_none", optim.piecewise_constant_schedule(2.0),
     np_piecewise_constant(2.0, {})),
    ("exponential", optim.exponential_decay(1.0, 10, 0.9), np_exponential(1.0, 10, 0.9)),
    ("exponential_staircase_end", optim.exponential_decay(1.0, 7, 0.5, 20, True, 0.1),
     np_exponential(1.0, 7, 0.5, 20, True, 0.1)),
    ("exponential_growth_end", optim.exponential_decay(0.1, 7, 1.5, 20, False, 3.0),
     np_exponential(0.1, 7, 1.5, 20, False, 3.0)),
    ("cosine", optim.cosine_decay_schedule(2.0, 37), np_cosine(2.0, 37)),
    ("cosine_alpha_exponent", optim.cosine_decay_schedule(1.0, 100, 0.1, 2.0),
     np_cosine(1.0, 100, 0.1, 2.0)),
    ("warmup_constant", optim.warmup_constant_schedule(0.1, 1.0, 30),
     np_polynomial(0.1, 1.0, 1, 30)),
    ("warmup_cosine", optim.warmup_cosine_decay_schedule(0.0, 1.0, 20, 150, 0.05, 1.5),
     np_warmup_cosine(0.0, 1.0, 20, 150, 0.05, 1.5)),
    ("warmup_cosine_no_warmup", optim.warmup_cosine_decay_schedule(0.1, 1.0, 0, 150),
     np_warmup_cosine(0.1, 1.0, 0, 150)),
    ("warmup_exponential", optim.warmup_exponential_decay_schedule(0.0, 1.0, 20, 10, 0.8, 5,
                                                                   True, 0.2),
     np_join([np_polynomial(0.0, 1.0, 1, 20), np_exponential(1.0, 10, 0.8, 5, True, 0.2)],
             [20])),
    ("join", optim.join_schedules([optim.linear_schedule(0.0, 1.0, 10),
                                   optim.cosine_decay_schedule(1.0, 90),
                                   optim.constant_schedule(0.3)], [10, 130]),
     np_join([np_polynomial(0.0, 1.0, 1, 10), np_cosine(1.0, 90),
              lambda n: np.full(np.shape(n), 0.3)], [10, 130])),
    ("sgdr", optim.sgdr_schedule(CYCLES),
     np_join([np_warmup_cosine(0.0, 1.0, 5, 50), np_warmup_cosine(0.1, 0.5, 10, 100, 0.01)],
             [50])),
    ("interpolate_linear", optim.piecewise_interpolate_schedule(
        "linear", 1.0, {10: 3.0, 40: 0.2, 100: 0.5}),
     np_interpolate("linear", 1.0, {10: 3.0, 40: 0.2, 100: 0.5})),
    ("interpolate_cosine", optim.piecewise_interpolate_schedule(
        "cosine", 1.0, {10: 3.0, 40: 0.2, 100: 0.5}),
     np_interpolate("cosine", 1.0, {10: 3.0, 40: 0.2, 100: 0.5})),
    ("linear_onecycle", optim.linear_onecycle_schedule(200, 1.0), np_onecycle_linear(200, 1.0)),
    ("cosine_onecycle", optim.cosine_onecycle_schedule(200, 1.0, 0.25, 10.0, 100.0),
     np_onecycle_cosine(200, 1.0, 0.25, 10.0, 100.0)),
    ("step_decay", optim.step_decay(0.1, 0.9, 10),
     lambda n: 0.1 * 0.9 ** (np.asarray(n) // 10)),
]
IDS = [c[0] for c in CASES]


def close(got, want):
    np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=2e-6, atol=2e-7)


@pytest.mark.parametrize("name,schedule,reference", CASES, ids=IDS)
def test_matches_formula(name, schedule, reference):
    # An array of counts (elementwise), int32 counts one at a time, Python ints.
    close(schedule(mx.array(COUNTS, mx.int32)), reference(COUNTS))
    for n in (0, 1, 9, 10, 11, 50, 150, 200, 240, 10_000):
        close(schedule(mx.array(n, mx.int32)), reference(np.asarray(n)))
        v = schedule(n)
        assert isinstance(v, mx.array) and v.shape == ()
        close(v, reference(np.asarray(n)))


@pytest.mark.parametrize("name,schedule,reference", CASES, ids=IDS)
def test_jit_traced_count(name, schedule, reference):
    f = ft.jit(schedule)
    for n in (0, 5, 10, 20, 37, 100, 149, 150, 151, 239):
        close(f(mx.array(n, mx.int32)), reference(np.asarray(n)))
    assert f.trace_count == 1


def test_schedule_as_learning_rate_in_jitted_step():
    schedule = optim.warmup_cosine_decay_schedule(0.0, 1.0, 3, 10)
    opt = optim.sgd(schedule)

    @ft.jit
    def step(p, s):
        u, s = opt.update({"w": mx.ones(1)}, s, p)
        return optim.apply_updates(p, u), s

    params, state = {"w": mx.zeros(1)}, opt.init({"w": mx.zeros(1)})
    lrs = []
    for _ in range(12):
        params, state = step(params, state)
        lrs.append(state.hyperparams["learning_rate"].item())
    want = [schedule(n).item() for n in range(12)]
    np.testing.assert_allclose(lrs, want, rtol=1e-6)
    np.testing.assert_allclose(params["w"].item(), -sum(want), rtol=1e-5)
    assert step.trace_count == 1


# ---------------------------------------------------------------------------
# mlx.optimizers' schedules of the same configurations
# ---------------------------------------------------------------------------

MLX_CASES = [
    ("step_decay", optim.step_decay(0.1, 0.9, 10), mlx_optim.step_decay(0.1, 0.9, 10)),
    ("cosine_decay", optim.cosine_decay_schedule(0.1, 100, alpha=0.01 / 0.1),
     mlx_optim.cosine_decay(0.1, 100, 0.01)),
    ("exponential_decay", optim.exponential_decay(0.1, 1, 0.97),
     mlx_optim.exponential_decay(0.1, 0.97)),
    ("linear_schedule", optim.linear_schedule(0.0, 0.1, 50), mlx_optim.linear_schedule(0.0, 0.1,
                                                                                         50)),
    ("join_schedules", optim.join_schedules([optim.linear_schedule(0.0, 0.1, 10),
                                             optim.cosine_decay_schedule(0.1, 200)], [10]),
     mlx_optim.join_schedules([mlx_optim.linear_schedule(0.0, 0.1, 10),
                               mlx_optim.cosine_decay(0.1, 200)], [10])),
]


@pytest.mark.parametrize("name,ours,theirs", MLX_CASES, ids=[c[0] for c in MLX_CASES])
def test_matches_mlx_optimizers(name, ours, theirs):
    counts = mx.array(COUNTS, mx.int32)
    np.testing.assert_allclose(np.array(ours(counts)), np.array(theirs(counts)), rtol=1e-5,
                               atol=1e-7)


def test_matches_optax():
    jax = pytest.importorskip("jax")
    optax = pytest.importorskip("optax")
    made = {
        "polynomial_schedule": (1.0, 0.01, 2.0, 100, 5),
        "linear_schedule": (0.0, 1.0, 50, 10),
        "piecewise_constant_schedule": (1.0, {10: 0.5, 50: 0.1, 200: 0.0}),
        "exponential_decay": (1.0, 7, 0.5, 20, True, 0.1),
        "cosine_decay_schedule": (1.0, 100, 0.1, 2.0),
        "piecewise_interpolate_schedule": ("cosine", 1.0, {10: 3.0, 40: 0.2, 100: 0.5}),
        "linear_onecycle_schedule": (200, 1.0),
        "cosine_onecycle_schedule": (200, 1.0, 0.25, 10.0, 100.0),
        "warmup_constant_schedule": (0.1, 1.0, 30),
        "warmup_cosine_decay_schedule": (0.0, 1.0, 20, 150, 0.05, 1.5),
        "warmup_exponential_decay_schedule": (0.0, 1.0, 20, 10, 0.8, 5, True, 0.2),
        "sgdr_schedule": (CYCLES,),
    }
    for name, args in made.items():
        ours = np.array(getattr(optim, name)(*args)(mx.array(COUNTS, mx.int32)))
        # vmapped: not every optax schedule is elementwise in its count
        theirs = jax.jit(jax.vmap(getattr(optax, name)(*args)))(COUNTS.astype(np.int32))
        theirs = np.array(theirs)
        np.testing.assert_allclose(ours, theirs, rtol=2e-6, atol=2e-7, err_msg=name)


# ---------------------------------------------------------------------------
# Argument errors: raised when the schedule is made, naming the argument
# ---------------------------------------------------------------------------

ERRORS = [
    (lambda: optim.cosine_decay_schedule(1.0, 0), ValueError, "decay_steps must be positive"),
    (lambda: optim.cosine_decay_schedule(1.0, -5), ValueError, "decay_steps"),
    (lambda: optim.cosine_decay_schedule(1.0, None), TypeError, "decay_steps must be an int"),
    (lambda: optim.linear_schedule(0.0, 1.0, -1), ValueError,
     "transition_steps must be non-negative"),
    (lambda: optim.polynomial_schedule(0.0, 1.0, 2, 10, -3), ValueError,
     "transition_begin must be non-negative"),
    (lambda: optim.exponential_decay(1.0, 0, 0.5), ValueError,
     "transition_steps must be positive"),
    (lambda: optim.exponential_decay(1.0, 10, 0.0), ValueError, "decay_rate must not be zero"),
    (lambda: optim.exponential_decay(1.0, 10, 0.5, transition_begin=-1), ValueError,
     "transition_begin"),
    (lambda: optim.warmup_cosine_decay_schedule(0.0, 1.0, 10, 10), ValueError,
     "decay_steps .* must exceed warmup_steps"),
    (lambda: optim.warmup_cosine_decay_schedule(0.0, 1.0, -1, 10), ValueError, "warmup_steps"),
    (lambda: optim.piecewise_constant_schedule(1.0, {5: -0.5}), ValueError, "non-negative"),
    (lambda: optim.piecewise_interpolate_schedule("cubic", 1.0), ValueError,
     "interpolate_type"),
    (lambda: optim.cosine_onecycle_schedule(0, 1.0), ValueError, "transition_steps"),
    (lambda: optim.linear_onecycle_schedule(-2, 1.0), ValueError, "transition_steps"),
    (lambda: optim.step_decay(0.1, 0.9, 0), ValueError, "step_size must be positive"),
    (lambda: optim.join_schedules([], []), ValueError, "at least one schedule"),
    (lambda: optim.join_schedules([optim.constant_schedule(1.0)] * 2, []), ValueError,
     "2 schedules need 1 boundaries, got 0"),
    (lambda: optim.join_schedules([optim.constant_schedule(1.0)] * 3, [5, 2]), ValueError,
     "non-decreasing"),
    (lambda: optim.join_schedules([optim.constant_schedule(1.0), 0.5], [5]), TypeError,
     r"schedules\[1\] must be callable"),
]


@pytest.mark.parametrize("make,error,match", ERRORS, ids=range(len(ERRORS)))
def test_argument_errors(make, error, match):
    with pytest.raises(error, match=match):
        make()


def test_zero_transition_holds_init_value():
    # optax's documented behaviour: no warmup, the value is init_value throughout.
    s = optim.linear_schedule(0.5, 1.0, 0)
    assert [s(n).item() for n in (0, 1, 100)] == [0.5, 0.5, 0.5]
    assert math.isclose(optim.warmup_cosine_decay_schedule(0.0, 1.0, 0, 10)(0).item(), 1.0)
