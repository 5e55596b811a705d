"""Oracle cases for the optax names ftorch.optim has had from the start: each optimizer and
transformation takes three steps on a small least-squares problem in both libraries, and
each schedule is read at a range of steps (tests/oracle.py)."""

import numpy as np
from hypothesis import strategies as st
from oracle import Oracle, arrays


def _problem(d):
    return (d(arrays((3, 2))), d(arrays((2,))), d(arrays((4, 3))), d(arrays((4, 2)))), {}


def _loss(L, params, x, y):
    return L.numpy.mean((x @ params["w"] + params["b"] - y) ** 2)


def steps(name, make, n=3, **kw):
    """``make(L, fn)`` builds the transformation from ``fn`` (the namesake of ``name``);
    the case compares the parameters after ``n`` steps."""
    def run(L, fn, w, b, x, y):
        opt = make(L, fn)
        params = {"w": w, "b": b}
        state = opt.init(params)
        for _ in range(n):
            grads = L.jax.grad(lambda p: _loss(L, p, x, y))(params)
            updates, state = opt.update(grads, state, params)
            params = L.optim.apply_updates(params, updates)
        return params
    return Oracle(f"optax.{name}", _problem, run=run, grad=False,
                  rtol=kw.pop("rtol", 1e-4), atol=kw.pop("atol", 1e-5), **kw)


def optimizer(name, *args, **kwargs):
    return steps(name, lambda L, fn: fn(*args, **kwargs))


def schedule(name, *args, **kwargs):
    def run(L, fn):
        s = fn(*args, **kwargs)
        return [s(step) for step in range(0, 60, 4)]
    return Oracle(f"optax.{name}", lambda d: ((), {}), run=run, grad=False, dtypes=False,
                  rtol=1e-5, atol=1e-7)


OPTIMIZERS = [
    optimizer("sgd", 0.1), optimizer("sgd", 0.1, momentum=0.9, nesterov=True),
    optimizer("adam", 0.1), optimizer("adamw", 0.1, weight_decay=0.1),
    optimizer("adamax", 0.1), optimizer("amsgrad", 0.1), optimizer("nadam", 0.1),
    optimizer("nadamw", 0.1), optimizer("adagrad", 0.1), optimizer("adadelta", 1.0),
    optimizer("rmsprop", 0.1), optimizer("rmsprop", 0.1, centered=True, momentum=0.5),
    optimizer("lion", 0.05), optimizer("lamb", 0.1), optimizer("lars", 0.1),
    optimizer("adafactor", 0.1),
    *[steps(n, lambda L, fn: fn()) for n in [
        "scale_by_adam", "scale_by_adamax", "scale_by_amsgrad", "scale_by_adadelta",
        "scale_by_lion", "scale_by_rms", "scale_by_rss", "scale_by_stddev", "scale_by_sign",
        "scale_by_trust_ratio", "scale_by_param_block_norm", "scale_by_param_block_rms",
        "scale_by_factored_rms", "identity", "set_to_zero"]],
    steps("scale", lambda L, fn: fn(-0.1)),
    steps("scale_by_learning_rate", lambda L, fn: fn(0.1)),
    steps("scale_by_schedule", lambda L, fn: fn(lambda c: -0.1 / (1.0 + c))),
    steps("trace", lambda L, fn: fn(0.9)), steps("ema", lambda L, fn: fn(0.9)),
    steps("clip", lambda L, fn: fn(0.05)), steps("clip_by_global_norm", lambda L, fn: fn(0.1)),
    steps("clip_by_block_rms", lambda L, fn: fn(0.1)),
    steps("add_decayed_weights", lambda L, fn: fn(0.1)),
    steps("chain", lambda L, fn: fn(L.optim.clip_by_global_norm(1.0), L.optim.scale_by_adam(),
                                    L.optim.scale(-0.1))),
    steps("masked", lambda L, fn: fn(L.optim.sgd(0.1), {"w": True, "b": False})),
    steps("freeze", lambda L, fn: L.optim.chain(fn({"w": True, "b": False}),
                                                L.optim.sgd(0.1))),
    steps("selective_transform", lambda L, fn: fn(L.optim.sgd(0.1),
                                                  freeze_mask={"w": False, "b": True})),
    steps("multi_transform", lambda L, fn: fn({"a": L.optim.sgd(0.1), "b": L.optim.adam(0.1)},
                                              {"w": "a", "b": "b"})),
    steps("partition", lambda L, fn: fn({"a": L.optim.sgd(0.1), "b": L.optim.adam(0.1)},
                                        {"w": "a", "b": "b"})),
    steps("apply_if_finite", lambda L, fn: fn(L.optim.sgd(0.1), 2)),
    steps("inject_hyperparams", lambda L, fn: fn(L.optim.adam)(learning_rate=0.1)),
    steps("MultiSteps", lambda L, fn: fn(L.optim.sgd(0.1), every_k_schedule=2), n=4),
]


SCHEDULES = [
    schedule("constant_schedule", 0.3),
    schedule("linear_schedule", 1.0, 0.1, 30, transition_begin=5),
    schedule("polynomial_schedule", 1.0, 0.1, 2.0, 30, transition_begin=5),
    schedule("exponential_decay", 1.0, 10, 0.5, transition_begin=4, staircase=True,
             end_value=0.2),
    schedule("cosine_decay_schedule", 1.0, 40, alpha=0.1),
    schedule("piecewise_constant_schedule", 1.0, {10: 0.5, 30: 0.1}),
    schedule("piecewise_interpolate_schedule", "cosine", 1.0, {10: 0.5, 30: 0.1}),
    schedule("linear_onecycle_schedule", 50, 1.0),
    schedule("cosine_onecycle_schedule", 50, 1.0),
    schedule("warmup_cosine_decay_schedule", 0.0, 1.0, 10, 50, end_value=0.1),
    schedule("warmup_exponential_decay_schedule", 0.0, 1.0, 10, 5, 0.5, end_value=0.1),
    schedule("warmup_constant_schedule", 0.0, 1.0, 10),
    schedule("sgdr_schedule", [dict(init_value=0.0, peak_value=1.0, warmup_steps=5,
                                    decay_steps=25), dict(init_value=0.0, peak_value=0.5,
                                                          warmup_steps=5, decay_steps=25)]),
]


def _join(L, fn):
    s = fn([L.optim.constant_schedule(1.0), L.optim.linear_schedule(1.0, 0.0, 20)], [10])
    return [s(step) for step in range(0, 40, 3)]


def _tree_pair(d):
    return ({"a": d(arrays((3,))), "b": d(arrays((2, 2)))},
            {"a": d(arrays((3,))), "b": d(arrays((2, 2)))}), {}


UTILITIES = [
    Oracle("optax.join_schedules", lambda d: ((), {}), run=_join, grad=False, dtypes=False),
    Oracle("optax.global_norm", lambda d: (_tree_pair(d)[0][:1], {})),
    Oracle("optax.apply_updates", _tree_pair),
    Oracle("optax.incremental_update", lambda d: (_tree_pair(d)[0] + (0.3,), {})),
    Oracle("optax.periodic_update", lambda d: (_tree_pair(d)[0] + (np.int32(d(st.integers(0, 9))),
                                                                   3), {}), grad=False),
    Oracle("optax.safe_increment", lambda d: ((np.int32(d(st.integers(0, 100))),), {}),
           grad=False),
    *[Oracle(f"optax.{n}", lambda d: ((d(arrays((3,))) * 10, np.int32(0), None), {}),
             run=lambda L, fn, u, s, p: fn(u, s, p)[0], grad=False, dtypes=False)
      for n in ["skip_not_finite"]],
    Oracle("optax.skip_large_updates", lambda d: ((d(arrays((3,))), np.int32(0), None, 4.0), {}),
           run=lambda L, fn, u, s, p, m: fn(u, s, p, m)[0], grad=False, dtypes=False),
]

ORACLE = [*OPTIMIZERS, *SCHEDULES, *UTILITIES]

_STATE = "a state class: the case of the transformation that returns it checks its numbers"
_TYPE = "a type (alias or protocol), not a function"
UNCHECKED = {
    **{f"optax.{n}": _STATE for n in [
        "AddDecayedWeightsState", "ApplyIfFiniteState", "ClipByGlobalNormState", "ClipState",
        "EmaState", "EmptyState", "FactoredState", "InjectHyperparamsState", "MaskedState",
        "MultiStepsState", "MultiTransformState", "PartitionState", "ScaleByAdaDeltaState",
        "ScaleByAdamState", "ScaleByAmsgradState", "ScaleByLionState", "ScaleByRStdDevState",
        "ScaleByRmsState", "ScaleByRssState", "ScaleByScheduleState", "ScaleByTrustRatioState",
        "TraceState"]},
    **{f"optax.{n}": _TYPE for n in [
        "GradientTransformation", "OptState", "Params", "ScalarOrSchedule", "Schedule",
        "ShouldSkipUpdateFunction", "Updates"]},
    "optax.MaskedNode": "a marker class: tests/test_optim_wrappers.py checks masked states",
}
