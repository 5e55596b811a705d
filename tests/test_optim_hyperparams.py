"""ftorch.optim's errors around a state: a wrapper given None or another
transformation's state says so, and updates whose tree does not match the
state's or the parameters' name the leaf."""

import mlx.core as mx
import numpy as np
import pytest
from harness import compiler_off

import ftorch.optim as optim


@pytest.fixture(autouse=True)
def _no_mlx_compiler():
    # Values and messages are what is tested: no g++ run per fused kernel.
    with compiler_off():
        yield


ALIASES = sorted(optim._alias.__all__)
RNG = np.random.default_rng(0)
P0 = {"w": RNG.standard_normal((3, 4)).astype(np.float32),
      "b": RNG.standard_normal(4).astype(np.float32)}
GRADS = [{k: RNG.standard_normal(v.shape).astype(np.float32) for k, v in P0.items()}
         for _ in range(4)]


def params0():
    return {k: mx.array(v) for k, v in P0.items()}


def grads(t):
    return {k: mx.array(v) for k, v in GRADS[t].items()}


# Integers that shape the computation stay Python values (as with optax).
STATIC = {"muon": "ns_steps", "adafactor": "min_dim_size_to_factor"}



@pytest.mark.parametrize("make_opt, fname, cls", [
    (lambda: optim.chain(optim.adam(0.1)), "chain", "tuple of 1 states"),
    (lambda: optim.masked(optim.adam(0.1), {"w": True, "b": False}), "masked", "MaskedState"),
    (lambda: optim.multi_transform({"a": optim.adam(0.1)}, "a"), "partition",
     "PartitionState"),
    (lambda: optim.MultiSteps(optim.adam(0.1), 2), "MultiSteps", "MultiStepsState"),
    (lambda: optim.apply_if_finite(optim.adam(0.1), 2), "apply_if_finite",
     "ApplyIfFiniteState"),
    (lambda: optim.scale_by_adam(), "scale_by_adam", "ScaleByAdamState"),
], ids=["chain", "masked", "multi_transform", "MultiSteps", "apply_if_finite", "scale_by_adam"])
def test_wrappers_refuse_none_as_the_state(make_opt, fname, cls):
    opt = make_opt()
    with pytest.raises(TypeError, match=rf"^{fname}: the state must be a {cls} .*got None"):
        opt.update(grads(0), None, params0())


def test_partition_refuses_a_state_of_other_labels():
    state = optim.multi_transform({"a": optim.sgd(0.1)}, "a").init(params0())
    opt = optim.multi_transform({"b": optim.sgd(0.1)}, "b")
    with pytest.raises(TypeError, match=r"partition: the state has the labels \[\"'a'\"\]"):
        opt.update(grads(0), state)


# ---------------------------------------------------------------------------
# Trees that do not match
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("updates, match", [
    ({"w": mx.zeros((3, 4))}, r"updates has no leaf for params\['b'\]"),
    ({"w": mx.zeros((3, 4)), "b": mx.zeros(4), "c": mx.zeros(1)},
     r"updates\['c'\] is not in params"),
    ({"w": mx.zeros((3, 4)), "b": mx.zeros(1)},
     r"updates\['b'\] has shape \(1,\), but params\['b'\] has \(4,\)"),
    ({"w": mx.zeros((2, 3, 4)), "b": mx.zeros(4)},
     r"updates\['w'\] has shape \(2, 3, 4\), but params\['w'\] has \(3, 4\)"),
    ({"w": {"x": mx.zeros((3, 4))}, "b": mx.zeros(4)},
     r"updates has no leaf for params\['w'\]; updates\['w'\]\['x'\] is not in params"),
], ids=["missing", "extra", "shape", "broadcastable", "nested"])
def test_apply_updates_names_the_leaf(updates, match):
    with pytest.raises(ValueError, match=r"^apply_updates: .*" + match):
        optim.apply_updates(params0(), updates)


@pytest.mark.parametrize("make_opt, fname, what", [
    (lambda: optim.scale_by_adam(), "scale_by_adam", "state.mu"),
    (lambda: optim.trace(0.9), "trace", "state.trace"),
    (lambda: optim.MultiSteps(optim.sgd(0.1), 2), "MultiSteps", "state.acc_grads"),
], ids=["scale_by_adam", "trace", "MultiSteps"])
def test_updates_not_like_the_states_parameters_name_the_leaf(make_opt, fname, what):
    opt = make_opt()
    state = opt.init(params0())
    w = rf"{what}\['w'\]"
    with pytest.raises(ValueError, match=rf"^{fname}: updates and {what} differ: updates has no "
                                         rf"leaf for {w}; updates\['v'\] is not in {what}"):
        opt.update({"v": mx.zeros((3, 4)), "b": mx.zeros(4)}, state, params0())
    with pytest.raises(ValueError, match=rf"^{fname}: updates\['w'\] has shape \(4, 3\), but "
                                         rf"{w} has \(3, 4\)"):
        opt.update({"w": mx.zeros((4, 3)), "b": mx.zeros(4)}, state, params0())
