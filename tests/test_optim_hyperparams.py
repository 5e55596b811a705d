"""ftorch.optim's injected hyperparameters and the errors around a state:
the state's ``hyperparams`` are the values every named optimizer's update
uses, re-injected (``inject_hyperparams(optim.adam)``, as optax is used) and
inside ``chain``, ``masked``, ``multi_transform`` and ``MultiSteps``, eagerly
and under ``ft.jit``; and bad states, trees and hyperparameters are errors
that name the optimizer, the argument and the leaf."""

import mlx.core as mx
import numpy as np
import pytest
from harness import compiler_off

import ftorch as ft
import ftorch.optim as optim


@pytest.fixture(autouse=True)
def _no_mlx_compiler():
    # Values and messages are what is tested: no g++ run per fused kernel.
    with compiler_off():
        yield


# Optimizers whose learning rate is not an injected hyperparameter used as-is at each
# update: plain chains as in optax (lbfgs and polyak_sgd take extra arguments, noisy_sgd
# draws noise), optimistic_adam's is its optimism, rprop's the initial step sizes.
NOT_INJECTED = {"lbfgs", "polyak_sgd", "noisy_sgd", "optimistic_adam", "rprop"}
ALIASES = sorted(set(optim._alias.__all__) - NOT_INJECTED)
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
# How each container holds the named optimizer, and where its injected state is.
WRAPPERS = {
    "alias": (lambda name, lr: getattr(optim, name)(lr), lambda s: s),
    "reinjected": (lambda name, lr: optim.inject_hyperparams(
        getattr(optim, name), static_args=STATIC.get(name, ()))(learning_rate=lr),
        lambda s: s),
    "chain": (lambda name, lr: optim.chain(optim.clip_by_global_norm(10.0),
                                           getattr(optim, name)(lr)), lambda s: s[1]),
    "masked": (lambda name, lr: optim.masked(getattr(optim, name)(lr), {"w": True, "b": False}),
               lambda s: s.inner_state),
    "multi_transform": (lambda name, lr: optim.multi_transform(
        {"opt": getattr(optim, name)(lr), "frozen": optim.set_to_zero()},
        {"w": "opt", "b": "frozen"}), lambda s: s.inner_states["opt"].inner_state),
    "MultiSteps": (lambda name, lr: optim.MultiSteps(getattr(optim, name)(lr), 2),
                   lambda s: s.inner_opt_state),
}


def train(opt, step, set_lr=None):
    """Parameters after four steps, ``set_lr`` written into the injected
    state's hyperparams first (through ``set_lr(state)``)."""
    params = params0()
    state = opt.init(params)
    if set_lr is not None:
        state = set_lr(state)
    for t in range(len(GRADS)):
        updates, state = step(grads(t), state, params)
        params = optim.apply_updates(params, updates)
    return params


def assert_trees_close(got, want):
    for k in want:
        np.testing.assert_allclose(np.array(got[k]), np.array(want[k]), rtol=1e-5, atol=1e-6,
                                   err_msg=k)


@pytest.mark.parametrize("wrapper", sorted(WRAPPERS))
@pytest.mark.parametrize("name", ALIASES)
def test_the_states_learning_rate_is_the_one_the_update_uses(name, wrapper):
    build, injected = WRAPPERS[wrapper]
    opt = build(name, 0.1)
    jitted = ft.jit(opt.update)

    def set_in_place(lr):
        def set_lr(state):
            injected(state).hyperparams["learning_rate"] = lr
            return state
        return set_lr

    want = train(build(name, 0.03), build(name, 0.03).update)
    for mode, step in (("eager", opt.update), ("jit", jitted)):
        frozen = train(opt, step, set_in_place(mx.array(0.0)))
        # The learning rate scales every step here: 0 leaves the parameters
        # (those the optimizer holds) as they were.
        np.testing.assert_array_equal(np.array(frozen["w"]), P0["w"], err_msg=mode)
        assert_trees_close(train(opt, step, set_in_place(mx.array(0.03))), want)
    assert jitted.trace_count == 1


@pytest.mark.parametrize("name", ALIASES)
def test_a_new_state_with_other_hyperparams_is_used(name):
    # optax's other way: a new state whose hyperparams dict has the new value.
    opt = getattr(optim, name)(0.1)
    params = params0()
    state = opt.init(params)
    state = state._replace(hyperparams={**state.hyperparams, "learning_rate": mx.array(0.0)})
    for step in (opt.update, ft.jit(opt.update)):
        updates, new_state = step(grads(0), state, params)
        assert np.all(np.array(updates["w"]) == 0)
        assert new_state.hyperparams["learning_rate"].item() == 0.0


def test_reinjecting_a_named_optimizer_injects_its_other_numbers():
    # As optax.inject_hyperparams(optax.adam): eps_root too, and the inner
    # state holds no second copy of the hyperparameters.
    opt = optim.inject_hyperparams(optim.adam)(learning_rate=0.1)
    state = opt.init(params0())
    assert sorted(state.hyperparams) == ["b1", "b2", "eps", "eps_root", "learning_rate"]
    assert isinstance(state.inner_state[0], optim.ScaleByAdamState)
    state.hyperparams["b1"] = mx.array(0.5)
    got, _ = opt.update(grads(0), state, params0())
    want, _ = optim.adam(0.1, b1=0.5).update(grads(0), optim.adam(0.1, b1=0.5).init(params0()),
                                             params0())
    assert_trees_close(got, want)


def test_an_injected_optimizer_inside_a_users_factory_reads_the_outer_state():
    def factory(learning_rate, clip):
        return optim.chain(optim.clip_by_global_norm(clip), optim.sgd(learning_rate))

    opt = optim.inject_hyperparams(factory)(learning_rate=0.1, clip=10.0)
    state = opt.init(params0())
    state.hyperparams["learning_rate"] = mx.array(0.0)
    for step in (opt.update, ft.jit(opt.update)):
        updates, _ = step(grads(0), state, params0())
        assert all(np.all(np.array(u) == 0) for u in updates.values())


@pytest.mark.parametrize("wrapper", ["alias", "reinjected"])
def test_a_scheduled_hyperparameter_is_recomputed_each_step(wrapper):
    # As optax: the schedule's value at the count replaces what the state held.
    schedule = lambda count: 0.1 / (1.0 + count)  # noqa: E731
    opt = (optim.sgd(schedule) if wrapper == "alias"
           else optim.inject_hyperparams(optim.sgd)(learning_rate=schedule))
    state = opt.init(params0())
    state.hyperparams["learning_rate"] = mx.array(5.0)
    updates, state = opt.update(grads(0), state)
    np.testing.assert_allclose(np.array(updates["b"]), -0.1 * GRADS[0]["b"], rtol=1e-6)
    updates, state = opt.update(grads(1), state)
    np.testing.assert_allclose(np.array(updates["b"]), -0.05 * GRADS[1]["b"], rtol=1e-6)
    assert state.hyperparams["learning_rate"].item() == pytest.approx(0.05)


def test_a_number_set_by_hand_is_stored_as_an_array():
    opt = optim.adam(0.1)
    state = opt.init(params0())
    state.hyperparams["learning_rate"] = 0.5
    _, state = opt.update(grads(0), state, params0())
    lr = state.hyperparams["learning_rate"]
    assert isinstance(lr, mx.array) and lr.dtype == mx.float32 and lr.item() == 0.5


# ---------------------------------------------------------------------------
# A state that is not this optimizer's
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("name", ALIASES)
def test_update_with_none_as_the_state_names_the_optimizer(name, jit):
    opt = getattr(optim, name)(0.1)
    update = ft.jit(opt.update) if jit else opt.update
    with pytest.raises(TypeError, match=rf"^{name}\.update: the state is None, not the state "
                                        rf"of {name}; pass the state that this optimizer's "
                                        r"init\(params\) returned"):
        update(grads(0), None, params0())


def other_than(name):
    # sign_sgd's state is sgd's (stateless steps, one learning rate): compatible.
    return "adam" if name in ("sgd", "sign_sgd") else "sgd"


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("name", ALIASES)
def test_update_with_another_optimizers_state_names_both(name, jit):
    other = other_than(name)
    opt = getattr(optim, name)(0.1)
    update = ft.jit(opt.update) if jit else opt.update
    state = getattr(optim, other)(0.1).init(params0())
    with pytest.raises(TypeError, match=rf"^{name}\.update: the state is the state of {other}"):
        update(grads(0), state, params0())


@pytest.mark.parametrize("name, other", [("adamw", "lamb"), ("adam", "amsgrad"),
                                         ("amsgrad", "adam")])
def test_another_optimizers_state_of_the_same_hyperparameters_names_both(name, other):
    opt = getattr(optim, name)(0.1)
    with pytest.raises(TypeError, match=rf"^{name}\.update: the state is the state of {other}, "
                                        rf"not of {name} \("):
        opt.update(grads(0), getattr(optim, other)(0.1).init(params0()), params0())


def test_compatible_states_are_accepted():
    # nadam's state is adam's (the same moments): no error, as in optax.
    state = optim.nadam(0.1).init(params0())
    optim.adam(0.1).update(grads(0), state, params0())


def test_a_state_of_the_same_optimizer_built_otherwise_says_which_hyperparameter():
    state = optim.sgd(0.1).init(params0())
    with pytest.raises(TypeError, match=r"sgd.update: state.hyperparams does not fit sgd: "
                                        r"\['momentum'\] is missing"):
        optim.sgd(0.1, momentum=0.9).update(grads(0), state)


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


def test_wrappers_name_the_inner_optimizer_given_another_state():
    sgd_state = optim.masked(optim.sgd(0.1), {"w": True, "b": False}).init(params0())
    with pytest.raises(TypeError, match=r"adam.update: the state is the state of sgd"):
        optim.masked(optim.adam(0.1), {"w": True, "b": False}).update(grads(0), sgd_state,
                                                                       params0())
    ms_state = optim.MultiSteps(optim.sgd(0.1), 2).init(params0())
    with pytest.raises(TypeError, match=r"adam.update: the state is the state of sgd"):
        optim.MultiSteps(optim.adam(0.1), 2).update(grads(0), ms_state, params0())


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
    (lambda: optim.adam(0.1), r"adam\.update: scale_by_adam", "state.mu"),
    (lambda: optim.sgd(0.1, momentum=0.9), r"sgd\.update: trace", "state.trace"),
    (lambda: optim.MultiSteps(optim.sgd(0.1), 2), "MultiSteps", "state.acc_grads"),
    (lambda: optim.scale_by_adam(), "scale_by_adam", "state.mu"),
    (lambda: optim.trace(0.9), "trace", "state.trace"),
], ids=["adam", "sgd_momentum", "MultiSteps", "scale_by_adam", "trace"])
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


# ---------------------------------------------------------------------------
# Hyperparameters of the wrong kind
# ---------------------------------------------------------------------------

BAD_VALUES = [("0.1", r"got str: '0.1'"), ([0.1], r"got list: \[0.1\]"),
              (True, "got bool: True"), (None, "got None")]


# learning_rate=None is no scaling in adadelta and adafactor, as in optax.
@pytest.mark.parametrize("name, value, got", [
    (name, value, got) for name in ALIASES for value, got in BAD_VALUES
    if not (value is None and name in ("adadelta", "adafactor"))])
def test_a_learning_rate_of_the_wrong_type_is_an_error_at_construction(name, value, got):
    with pytest.raises(TypeError, match=rf"^{name}: learning_rate must be a number, a scalar "
                                        rf"array or a schedule .*, {got}"):
        getattr(optim, name)(value)


@pytest.mark.parametrize("name, arg", [
    ("adam", "b1"), ("adam", "eps"), ("adamw", "weight_decay"), ("nadam", "b2"),
    ("lion", "b2"), ("rmsprop", "decay"), ("adagrad", "initial_accumulator_value"),
    ("adadelta", "rho"), ("adafactor", "decay_rate"), ("lamb", "eps"),
    ("lars", "trust_coefficient"), ("muon", "momentum"), ("amsgrad", "b1"),
    ("adamax", "eps"), ("nadamw", "weight_decay")])
@pytest.mark.parametrize("value, got", BAD_VALUES, ids=["str", "list", "bool", "None"])
def test_other_hyperparameters_of_the_wrong_type_are_errors(name, arg, value, got):
    with pytest.raises(TypeError, match=rf"^{name}: {arg} must be a number.*{got}"):
        getattr(optim, name)(0.1, **{arg: value})


def test_optional_hyperparameters_take_none():
    optim.sgd(0.1, momentum=None)
    optim.rmsprop(0.1, momentum=None)
    optim.adafactor(None, clipping_threshold=None, momentum=None, weight_decay_rate=None)


def test_an_array_hyperparameter_must_be_a_scalar():
    with pytest.raises(ValueError, match=r"^adam: learning_rate must be a scalar, got an array "
                                         r"of shape \(2,\)"):
        optim.adam(mx.array([0.1, 0.2]))


def test_a_schedule_must_return_a_number():
    with pytest.raises(TypeError, match=r"^sgd: the value of the schedule given for "
                                        r"learning_rate must be a number or a scalar array, got "
                                        r"str"):
        optim.sgd(lambda count: "0.1")


def test_reinjecting_checks_the_inner_optimizers_arguments_at_construction():
    with pytest.raises(TypeError, match=r"^adam: learning_rate must be a number.*got str"):
        optim.inject_hyperparams(optim.adam)(learning_rate="0.1")
    with pytest.raises(TypeError, match=r"^adam: got an unexpected keyword argument 'lr'"):
        optim.inject_hyperparams(optim.adam)(learning_rate=0.1, lr=0.1)


@pytest.mark.parametrize("kwargs, match", [
    (dict(static_args="lr"), r"static_args names \['lr'\]"),
    (dict(static_args=("mask", "nesterov")), r"static_args names \['nesterov'\]"),
    (dict(hyperparams=("learning_rate", "beta")), r"hyperparams names \['beta'\]"),
])
def test_inject_hyperparams_refuses_names_the_factory_does_not_take(kwargs, match):
    def factory(learning_rate, mask=None):
        return optim.sgd(learning_rate)

    with pytest.raises(ValueError, match=rf"^inject_hyperparams: {match}, which factory does "
                                         r"not take \(its arguments: \['learning_rate', "
                                         r"'mask'\]\)"):
        optim.inject_hyperparams(factory, **kwargs)


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("edit, match", [
    (lambda hp: hp.__setitem__("lr", mx.array(0.1)),
     r"'lr' is not a hyperparameter of adam"),
    (lambda hp: hp.pop("b1"), r"\['b1'\] is missing"),
    (lambda hp: hp.__setitem__("eps_root", mx.array(0.1)),
     r"'eps_root' is fixed in this adam \(built with eps_root=0.0\)"),
], ids=["misspelt", "missing", "fixed"])
def test_state_hyperparams_of_other_names_are_errors(edit, match, jit):
    opt = optim.adam(0.1)
    state = opt.init(params0())
    edit(state.hyperparams)
    update = ft.jit(opt.update) if jit else opt.update
    with pytest.raises(TypeError, match=r"^adam.update: state.hyperparams does not fit adam: "
                                        + match):
        update(grads(0), state, params0())


def test_a_state_hyperparameter_that_is_not_a_number_is_an_error():
    opt = optim.adam(0.1)
    state = opt.init(params0())
    state.hyperparams["learning_rate"] = "0.01"
    with pytest.raises(TypeError, match=r"^adam.update: state.hyperparams\['learning_rate'\] "
                                        r"must be a number or a scalar array, got str"):
        opt.update(grads(0), state, params0())
