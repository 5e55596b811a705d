"""ftorch.nn layers: each against the mlx.nn layer with the same weights
(loaded through mlx.utils.tree_unflatten and Module.update), init names,
shapes and dtypes against mlx.nn's, shape-only init, grad and jit (jit
equal to eager), vmap over examples; BatchNorm's state, Dropout's keys,
Sequential's key threading, errors (parameters beyond memory, and apply's
errors naming the mistake and where in the model), and the utilities."""

import dataclasses
import re
from collections.abc import Callable
from typing import Any

import mlx.core as mx
import mlx.nn as mnn
import numpy as np
import pytest
from child import run_child
from harness import compiler_off
from mlx.utils import tree_flatten, tree_unflatten

import ftorch as ft
import ftorch.nn as nn
import ftorch.nn.functional as F
import ftorch.numpy as fnp
import ftorch.optim as optim
import ftorch.random as random

_rng = np.random.default_rng(0)


def _x(*shape: int, scale: float = 1.0) -> mx.array:
    return mx.array((scale * _rng.standard_normal(shape)).astype(np.float32))


_MASK = mnn.MultiHeadAttention.create_additive_causal_mask(5)


@dataclasses.dataclass
class Case:
    """``ours`` and ``theirs`` (an mlx.nn module factory) on ``inputs``;
    ``options`` go to ``apply`` by keyword and to mlx.nn positionally after
    the inputs. ``vmap``: whether the layer applies to one example (the
    inputs' axis 0 is the batch)."""

    ours: nn.Layer
    theirs: Callable[[], Any]
    inputs: tuple
    options: dict = dataclasses.field(default_factory=dict)
    vmap: bool = True
    atol: float = 1e-5
    name: str = ""

    def __repr__(self) -> str:
        return self.name or type(self.ours).__name__


def _case(ours, theirs, *inputs, **kw) -> Case:
    return Case(ours, theirs, inputs, **kw)


CASES = [
    _case(nn.Linear(3, 4), lambda: mnn.Linear(3, 4), _x(2, 3)),
    _case(nn.Linear(3, 4, bias=False), lambda: mnn.Linear(3, 4, bias=False), _x(2, 3),
          name="Linear-nobias"),
    _case(nn.Bilinear(3, 2, 4), lambda: mnn.Bilinear(3, 2, 4), _x(5, 3), _x(5, 2)),
    _case(nn.Identity(), lambda: mnn.Identity(), _x(2, 3)),
    _case(nn.Embedding(10, 4), lambda: mnn.Embedding(10, 4), mx.array([[1, 2, 3], [9, 0, 4]])),
    _case(nn.Conv1d(4, 6, 3, stride=2, padding=1, groups=2),
          lambda: mnn.Conv1d(4, 6, 3, stride=2, padding=1, groups=2), _x(2, 9, 4)),
    _case(nn.Conv2d(4, 6, (3, 2), stride=(2, 1), padding=1, dilation=2),
          lambda: mnn.Conv2d(4, 6, (3, 2), stride=(2, 1), padding=1, dilation=2), _x(2, 9, 8, 4)),
    _case(nn.Conv3d(2, 3, 2, bias=False), lambda: mnn.Conv3d(2, 3, 2, bias=False),
          _x(2, 3, 4, 3, 2)),
    _case(nn.ConvTranspose1d(4, 3, 3, stride=2, padding=1, output_padding=1),
          lambda: mnn.ConvTranspose1d(4, 3, 3, stride=2, padding=1, output_padding=1),
          _x(2, 5, 4)),
    _case(nn.ConvTranspose2d(3, 2, 3, stride=2), lambda: mnn.ConvTranspose2d(3, 2, 3, stride=2),
          _x(2, 4, 4, 3)),
    _case(nn.ConvTranspose3d(2, 2, 2, stride=2), lambda: mnn.ConvTranspose3d(2, 2, 2, stride=2),
          _x(2, 2, 2, 2, 2)),
    _case(nn.MaxPool1d(2), lambda: mnn.MaxPool1d(2), _x(2, 8, 3)),
    _case(nn.MaxPool2d(3, stride=2, padding=1), lambda: mnn.MaxPool2d(3, stride=2, padding=1),
          _x(2, 7, 7, 3)),
    _case(nn.AvgPool1d(3, stride=1, padding=1), lambda: mnn.AvgPool1d(3, stride=1, padding=1),
          _x(2, 8, 3)),
    _case(nn.AvgPool2d(2), lambda: mnn.AvgPool2d(2), _x(2, 6, 6, 3)),
    _case(nn.LayerNorm(6), lambda: mnn.LayerNorm(6), _x(2, 6)),
    _case(nn.LayerNorm(6, affine=False), lambda: mnn.LayerNorm(6, affine=False), _x(2, 6),
          name="LayerNorm-noaffine"),
    _case(nn.RMSNorm(6), lambda: mnn.RMSNorm(6), _x(2, 6)),
    _case(nn.GroupNorm(2, 6), lambda: mnn.GroupNorm(2, 6), _x(2, 5, 6), vmap=False),
    _case(nn.GroupNorm(2, 6, pytorch_compatible=True),
          lambda: mnn.GroupNorm(2, 6, pytorch_compatible=True), _x(2, 5, 6), vmap=False,
          name="GroupNorm-pytorch"),
    _case(nn.InstanceNorm(6, affine=True), lambda: mnn.InstanceNorm(6, affine=True),
          _x(2, 5, 6), vmap=False),
    _case(nn.BatchNorm(6), lambda: mnn.BatchNorm(6), _x(4, 6), vmap=False),
    _case(nn.BatchNorm(6, affine=False, track_running_stats=False),
          lambda: mnn.BatchNorm(6, affine=False, track_running_stats=False), _x(4, 6),
          vmap=False, name="BatchNorm-untracked"),
    _case(nn.Dropout(0.3), lambda: mnn.Dropout(0.3), _x(2, 6)),
    _case(nn.MultiHeadAttention(8, 2), lambda: mnn.MultiHeadAttention(8, 2), _x(2, 5, 8),
          _x(2, 3, 8), _x(2, 3, 8), options={"mask": None}),
    _case(nn.MultiHeadAttention(8, 2, query_input_dims=4, key_input_dims=6, value_input_dims=5,
                                value_dims=4, value_output_dims=3, bias=True),
          lambda: mnn.MultiHeadAttention(8, 2, query_input_dims=4, key_input_dims=6,
                                         value_input_dims=5, value_dims=4,
                                         value_output_dims=3, bias=True),
          _x(2, 5, 4), _x(2, 3, 6), _x(2, 3, 5), options={"mask": None}, name="MHA-dims"),
    _case(nn.MultiHeadAttention(8, 2), lambda: mnn.MultiHeadAttention(8, 2), _x(2, 5, 8),
          _x(2, 5, 8), _x(2, 5, 8), options={"mask": _MASK}, name="MHA-causal"),
    _case(nn.RoPE(8), lambda: mnn.RoPE(8), _x(2, 3, 5, 8), options={"offset": 3}),
    _case(nn.RoPE(4, traditional=True, base=500.0, scale=0.5),
          lambda: mnn.RoPE(4, traditional=True, base=500.0, scale=0.5), _x(2, 3, 5, 6),
          name="RoPE-partial-traditional"),
    _case(nn.TransformerEncoderLayer(8, 2, mlp_dims=16),
          lambda: mnn.TransformerEncoderLayer(8, 2, mlp_dims=16), _x(2, 5, 8),
          options={"mask": _MASK}),
    _case(nn.TransformerEncoderLayer(8, 2, mlp_dims=16, norm_first=False, activation=F.gelu),
          lambda: mnn.TransformerEncoderLayer(8, 2, mlp_dims=16, norm_first=False,
                                              activation=mnn.gelu),
          _x(2, 5, 8), options={"mask": None}, name="TransformerEncoderLayer-postnorm"),
    _case(nn.TransformerEncoder(2, 8, 2, mlp_dims=16),
          lambda: mnn.TransformerEncoder(2, 8, 2, mlp_dims=16), _x(2, 5, 8),
          options={"mask": _MASK}),
    _case(nn.TransformerDecoderLayer(8, 2, mlp_dims=16),
          lambda: mnn.TransformerDecoderLayer(8, 2, mlp_dims=16), _x(2, 5, 8), _x(2, 3, 8),
          options={"x_mask": _MASK, "memory_mask": None}),
    _case(nn.RNN(3, 5), lambda: mnn.RNN(3, 5), _x(2, 4, 3)),
    _case(nn.GRU(3, 5), lambda: mnn.GRU(3, 5), _x(2, 4, 3)),
    _case(nn.GRU(3, 5, bias=False), lambda: mnn.GRU(3, 5, bias=False), _x(2, 4, 3),
          name="GRU-nobias"),
    _case(nn.GRU(3, 5), lambda: mnn.GRU(3, 5), _x(2, 4, 3), _x(2, 5), name="GRU-hidden"),
    _case(nn.LSTM(3, 5), lambda: mnn.LSTM(3, 5), _x(2, 4, 3)),
    _case(nn.LSTM(3, 5), lambda: mnn.LSTM(3, 5), _x(2, 4, 3), _x(2, 5), _x(2, 5),
          name="LSTM-hidden"),
    _case(nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2)),
          lambda: mnn.Sequential(mnn.Linear(3, 4), mnn.ReLU(), mnn.Linear(4, 2)), _x(2, 3)),
    _case(nn.PReLU(), lambda: mnn.PReLU(), _x(2, 6, scale=3.0)),
] + [
    _case(ours, theirs, _x(2, 6, scale=3.0), name=repr(ours), atol=3e-6 if
          isinstance(ours, nn.SELU) else 1e-5)
    for ours, theirs in [
        (nn.ReLU(), mnn.ReLU), (nn.GELU(), mnn.GELU),
        (nn.GELU("precise"), lambda: mnn.GELU("precise")),
        (nn.GELU("fast"), lambda: mnn.GELU("fast")), (nn.SiLU(), mnn.SiLU),
        (nn.Tanh(), mnn.Tanh), (nn.Sigmoid(), mnn.Sigmoid), (nn.Softmax(), mnn.Softmax),
        (nn.LogSoftmax(), mnn.LogSoftmax), (nn.ELU(0.5), lambda: mnn.ELU(0.5)),
        (nn.LeakyReLU(0.2), lambda: mnn.LeakyReLU(0.2)), (nn.CELU(1.5), lambda: mnn.CELU(1.5)),
        (nn.SELU(), mnn.SELU), (nn.Mish(), mnn.Mish), (nn.Hardswish(), mnn.Hardswish),
        (nn.HardTanh(), mnn.HardTanh), (nn.Softplus(), mnn.Softplus),
        (nn.Softsign(), mnn.Softsign), (nn.LogSigmoid(), mnn.LogSigmoid), (nn.GLU(), mnn.GLU),
        (nn.Step(0.1), lambda: mnn.Step(0.1)), (nn.Softmin(), mnn.Softmin),
        (nn.HardShrink(), mnn.HardShrink), (nn.Softshrink(), mnn.Softshrink),
        (nn.ReLU6(), mnn.ReLU6), (nn.ReLU2(), mnn.ReLU2),
    ]
]


def _init(case: Case, key: int = 0):
    return case.ours.init(random.key(key), *case.inputs)


def _to_mlx(module: mnn.Module, params, state) -> mnn.Module:
    module.update(tree_unflatten(list(nn.utils.flatten_names(params, state).items())))
    return module


def _assert_trees_close(a, b, atol: float = 1e-5) -> None:
    la, lb = ft.tree.leaves(a), ft.tree.leaves(b)
    assert len(la) == len(lb) and ft.tree.structure(a) == ft.tree.structure(b)
    for x, y in zip(la, lb):
        assert x.shape == y.shape and x.dtype == y.dtype
        np.testing.assert_allclose(np.array(x), np.array(y), atol=atol, rtol=1e-5)


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_matches_mlx_with_the_same_weights(case):
    params, state = _init(case)
    theirs = _to_mlx(case.theirs(), params, state)
    theirs.eval()
    ours, new_state = case.ours.apply(params, state, *case.inputs, **case.options)
    _assert_trees_close(ours, theirs(*case.inputs, *case.options.values()), case.atol)
    _assert_trees_close(new_state, state)


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_init_names_shapes_and_dtypes_are_mlx(case):
    params, state = _init(case)
    ours = {k: (v.shape, v.dtype) for k, v in nn.utils.flatten_names(params, state).items()}
    theirs = {k: (v.shape, v.dtype) for k, v in tree_flatten(case.theirs().parameters())}
    assert ours == theirs
    assert bool(state) == case.ours.has_state


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_init_from_shapes_equals_init_from_arrays(case):
    specs = [ft.ShapeDtypeStruct(x.shape, x.dtype) for x in case.inputs]
    _assert_trees_close(case.ours.init(random.key(3), *specs), _init(case, 3), atol=0)
    # ...and the same key gives the same parameters, another key others.
    params = ft.tree.leaves(_init(case, 3)[0])
    others = ft.tree.leaves(_init(case, 4)[0])
    random_params = [(a, b) for a, b in zip(params, others) if a.size > 1 and not (
        bool(mx.all(a == 1)) or bool(mx.all(a == 0)) or bool(mx.all(a == 0.25)))]
    assert all(not bool(mx.array_equal(a, b)) for a, b in random_params)


def _loss(case: Case, train: bool = False):
    def loss(params, state, inputs, key):
        out, _ = case.ours.apply(params, state, *inputs, key=key, train=train, **case.options)
        return sum(fnp.sum(fnp.sin(y)) for y in ft.tree.leaves(out))
    return loss


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_grad_and_jit_equal_eager(case):
    params, state = _init(case)
    floats = tuple(x for x in case.inputs if mx.issubdtype(x.dtype, mx.floating))
    ints = tuple(x for x in case.inputs if not mx.issubdtype(x.dtype, mx.floating))
    train = isinstance(case.ours, (nn.Dropout, nn.BatchNorm))

    def loss(params, floats, key):
        return _loss(case, train)(params, state, floats + ints, key)

    key = random.key(7)
    grad = ft.grad(loss, argnums=(0, 1))
    value, grads = loss(params, floats, key), grad(params, floats, key)
    with compiler_off():
        jvalue, jgrads = ft.jit(loss)(params, floats, key), ft.jit(grad)(params, floats, key)
    _assert_trees_close(value, jvalue, 1e-5)
    _assert_trees_close(grads, jgrads, 1e-5)
    if ft.tree.leaves(params):  # a parameter's gradient against finite differences
        name, leaf = next(iter(nn.utils.flatten_names(params).items()))
        direction = mx.array(_rng.standard_normal(leaf.shape).astype(np.float32))
        eps = 1e-2

        def shifted(t):
            moved = nn.utils.load_weights({name: leaf + t * direction}, params, strict=False)
            return loss(moved[0], floats, key).item()

        fd = (shifted(eps) - shifted(-eps)) / (2 * eps)
        analytic = float(mx.sum(nn.utils.flatten_names(grads[0])[name] * direction))
        assert abs(fd - analytic) <= 2e-2 * max(1.0, abs(analytic))


@pytest.mark.parametrize("case", [c for c in CASES if c.vmap], ids=repr)
def test_vmap_over_examples_equals_the_batch(case):
    params, state = _init(case)

    def one(*example):
        return case.ours.apply(params, state, *example, **case.options)[0]

    _assert_trees_close(ft.vmap(one)(*case.inputs), one(*case.inputs), 1e-5)


# ----------------------------------------------------------------------------
# BatchNorm
# ----------------------------------------------------------------------------


def test_batchnorm_running_stats_follow_mlx_and_eval_uses_them():
    x1, x2 = _x(8, 3), _x(8, 3, scale=2.0) + 1.0
    ours = nn.BatchNorm(3, momentum=0.3)
    params, state = ours.init(random.key(0), x1)
    theirs = mnn.BatchNorm(3, momentum=0.3)
    for x in (x1, x2):
        y, state = ours.apply(params, state, x, train=True)
        _assert_trees_close(y, theirs(x))
    _assert_trees_close(state["running_mean"], theirs.running_mean)
    _assert_trees_close(state["running_var"], theirs.running_var)
    theirs.eval()
    y, same = ours.apply(params, state, x1)
    _assert_trees_close(y, theirs(x1))
    assert same is state
    expected = (x1 - state["running_mean"]) / mx.sqrt(state["running_var"] + 1e-5)
    _assert_trees_close(y, expected)


def test_batchnorm_state_under_jit_grad_and_sequential():
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm(4), nn.ReLU())
    x = _x(6, 3)
    params, state = model.init(random.key(0), x)
    assert model.has_state and state["layers"][0] == {} and state["layers"][2] == {}
    assert sorted(state["layers"][1]) == ["running_mean", "running_var"]

    def loss(params, state, x):
        y, state = model.apply(params, state, x, train=True)
        return fnp.sum(y ** 2), state

    (value, new_state), grads = ft.value_and_grad(loss, has_aux=True)(params, state, x)
    with compiler_off():
        (jvalue, jstate), jgrads = ft.jit(ft.value_and_grad(loss, has_aux=True))(
            params, state, x)
    _assert_trees_close((value, new_state, grads), (jvalue, jstate, jgrads))
    assert not bool(mx.array_equal(new_state["layers"][1]["running_mean"],
                                   state["layers"][1]["running_mean"]))
    with pytest.raises(TypeError, match="has state"):
        model(params, x)
    with pytest.raises(TypeError, match="BatchNorm has state"):
        nn.BatchNorm(4)(params["layers"][1], x)
    with pytest.raises(ValueError, match="more than one value per channel"):
        nn.BatchNorm(3).apply(*nn.BatchNorm(3).init(random.key(0), x), x[:1], train=True)


# ----------------------------------------------------------------------------
# Dropout and keys
# ----------------------------------------------------------------------------


def test_dropout_is_deterministic_per_key_and_needs_one_in_training():
    drop, x = nn.Dropout(0.5), mx.ones((64,))
    a = drop({}, x, key=random.key(1), train=True)
    assert bool(mx.array_equal(a, drop({}, x, key=random.key(1), train=True)))
    assert not bool(mx.array_equal(a, drop({}, x, key=random.key(2), train=True)))
    assert set(a.tolist()) == {0.0, 2.0}
    assert drop({}, x) is x and nn.Dropout(0.0)({}, x, train=True) is x
    with pytest.raises(ValueError, match="needs a key in training"):
        drop({}, x, train=True)
    with pytest.raises(TypeError, match="key"):
        drop({}, x, key=3, train=True)
    with pytest.raises(ValueError, match=r"\[0, 1\)"):
        nn.Dropout(1.0)
    model = nn.Sequential(nn.Linear(64, 64), nn.Dropout(0.5))
    params, _ = model.init(random.key(0), x)
    with pytest.raises(ValueError, match="needs a key"):
        model(params, x, train=True)
    y = nn.Dropout2d(0.5)({}, mx.ones((2, 4, 4, 8)), key=random.key(0), train=True)
    assert bool(mx.all(y.min(axis=(1, 2)) == y.max(axis=(1, 2))))


@dataclasses.dataclass(frozen=True)
class _KeyEcho(nn.Layer):
    """Returns the key it was given."""

    def init(self, key, x):
        return {}, {}

    def apply(self, params, state, x, *, key=None, train=False):
        return key, state


def test_sequential_threads_keys_params_and_state():
    model = nn.Sequential(_KeyEcho(), lambda k: k, _KeyEcho())
    key = random.key(5)
    echoed = model.apply({"layers": [{}, {}, {}]}, {}, mx.zeros(2), key=key)[0]
    # Each child gets split(key, n)[i]: the first and last differ.
    keys = random.split(key, 3)
    assert echoed.tolist() == keys[2].tolist() and keys[0].tolist() != keys[2].tolist()
    run = model.bind({"layers": [{}, {}, {}]}, {}, key=key)  # the children one by one
    assert run.layers[-1](mx.zeros(2)).tolist() == keys[2].tolist()
    with pytest.raises(TypeError, match="one at a time"):
        run.layers[1:]

    model = nn.Sequential(nn.Dropout(0.5), nn.Dropout(0.5))
    x = mx.ones((256,))
    y = model({"layers": [{}, {}]}, x, key=key, train=True)
    k0, k1 = random.split(key, 2)
    expected = F.dropout(F.dropout(x, 0.5, key=k0), 0.5, key=k1)
    assert bool(mx.array_equal(y, expected))
    assert not bool(mx.array_equal(F.dropout(x, 0.5, key=k0), F.dropout(x, 0.5, key=k1)))


def test_transformer_dropout_keys_differ_per_call_and_agree_under_jit():
    block = nn.TransformerEncoderLayer(8, 2, mlp_dims=16, dropout=0.5)
    x = _x(2, 5, 8)
    params, _ = block.init(random.key(0), x)

    def run(params, x, key):
        return block(params, x, "causal", key=key, train=True)

    a, b = run(params, x, random.key(1)), run(params, x, random.key(2))
    assert not bool(mx.allclose(a, b))
    with compiler_off():
        _assert_trees_close(a, ft.jit(run)(params, x, random.key(1)))
    _assert_trees_close(block(params, x, "causal"), block(params, x, "causal", train=False))


# ----------------------------------------------------------------------------
# Layers as values, composition, errors
# ----------------------------------------------------------------------------


def test_layers_are_hashable_pytrees_without_leaves():
    a, b = nn.Linear(3, 4), nn.Linear(3, 4)
    assert a == b and hash(a) == hash(b) and ft.tree.leaves(a) == []
    assert nn.Conv2d(3, 4, 3) == nn.Conv2d(3, 4, (3, 3))
    assert nn.MultiHeadAttention(8, 2) == nn.MultiHeadAttention(8, 2, query_input_dims=8)
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.input_dims = 5
    params, _ = a.init(random.key(0), mx.zeros(3))
    f = ft.jit(lambda layer, p, x: layer(p, x))
    with compiler_off():
        f(a, params, mx.ones(3))
        f(b, params, mx.ones(3))
    assert f.trace_count == 1


def test_ensemble_init_under_vmap():
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    keys = random.split(random.key(0), 3)
    params = ft.vmap(lambda k: model.init(k, ft.ShapeDtypeStruct((3,), mx.float32))[0])(keys)
    assert params["layers"][0]["weight"].shape == (3, 4, 3)
    one = model.init(keys[1], mx.zeros(3))[0]
    _assert_trees_close(ft.tree.map(lambda p: p[1], params), one)
    ys = ft.vmap(model)(params, mx.ones((3, 3)))
    _assert_trees_close(ys[1], model(one, mx.ones(3)))


def test_custom_composite_layer_and_checkpointed_encoder():
    @dataclasses.dataclass(frozen=True)
    class Residual(nn.Layer):
        body: nn.Layer

        def apply(self, params, state, x, *, key=None, train=False):
            run = self.bind(params, state, key=key, train=train)
            return x + run.body(x), run.state

    block = Residual(nn.Sequential(nn.LayerNorm(4), nn.BatchNorm(4)))
    params, state = block.init(random.key(0), mx.zeros((5, 4)))
    assert list(nn.utils.flatten_names(params, state)) == [
        "body.layers.0.bias", "body.layers.0.weight", "body.layers.1.bias",
        "body.layers.1.weight", "body.layers.1.running_mean", "body.layers.1.running_var"]
    # The child's parameters are those it would make alone with split(key, 1)[0].
    alone = block.body.init(random.split(random.key(0), 1)[0], mx.zeros((5, 4)))
    _assert_trees_close((params["body"], state["body"]), alone, atol=0)
    _, new = block.apply(params, state, _x(5, 4), train=True)
    assert ft.tree.structure(new) == ft.tree.structure(state)

    @dataclasses.dataclass(frozen=True)
    class NormThenDrop(nn.Layer):
        norm: nn.Layer = nn.BatchNorm(4)
        drop: nn.Layer = nn.Dropout(0.5)

        def apply(self, params, state, x, *, key=None, train=False):
            run = self.bind(params, state, key=key, train=train)
            return run.drop(run.norm(x)), run.state

    layer = NormThenDrop()
    params, state = layer.init(random.key(0), mx.zeros((5, 4)))
    assert list(params) == ["norm"] and sorted(state) == ["drop", "norm"]
    x = _x(5, 4)
    y, new = layer.apply(params, state, x, key=random.key(1), train=True)
    assert ft.tree.structure(new) == ft.tree.structure(state)
    # The dropout, child 1 of 2, draws with split(key, 2)[1].
    normed, _ = nn.BatchNorm(4).apply(params["norm"], state["norm"], x, train=True)
    assert bool(mx.array_equal(y, F.dropout(normed, 0.5, key=random.split(random.key(1), 2)[1])))

    @dataclasses.dataclass(frozen=True)
    class Heads(nn.Layer):
        heads: dict
        scale: nn.Layer = nn.Linear(2, 2)

        def apply(self, params, state, x, *, key=None, train=False):
            run = self.bind(params, state, key=key, train=train)
            return {name: run.heads[name](x) for name in run.heads}, run.state

    heads = Heads({"b": nn.Linear(4, 3), "a": nn.Linear(4, 2)})
    params, state = heads.init(random.key(2), mx.zeros((5, 4)))
    assert sorted(nn.utils.flatten_names(params)) == [
        "heads.a.bias", "heads.a.weight", "heads.b.bias", "heads.b.weight"]  # scale: not called
    keys = random.split(random.key(2), 3)  # dict children in sorted key order, then scale
    _assert_trees_close(params["heads"]["a"], nn.Linear(4, 2).init(keys[0], mx.zeros(4))[0],
                        atol=0)
    assert {k: v.shape for k, v in heads(params, mx.ones((5, 4))).items()} == {
        "a": (5, 2), "b": (5, 3)}

    @dataclasses.dataclass(frozen=True)
    class ReadsItsOwnParams(nn.Layer):
        body: nn.Layer = nn.Linear(2, 2)

        def apply(self, params, state, x, *, key=None, train=False):
            return self.body(params["body"], x) * params["scale"], state

    with pytest.raises(TypeError, match="reads its params itself.*define ReadsItsOwnParams.init"):
        ReadsItsOwnParams().init(random.key(0), mx.zeros(2))

    plain = nn.TransformerEncoder(2, 8, 2, mlp_dims=16)
    remat = nn.TransformerEncoder(2, 8, 2, mlp_dims=16, checkpoint=True)
    x = _x(2, 5, 8)
    params, _ = plain.init(random.key(0), x)

    def loss(layer):
        return lambda p: fnp.sum(layer(p, x, "causal") ** 2)

    _assert_trees_close(ft.grad(loss(remat))(params), ft.grad(loss(plain))(params), 1e-5)


@pytest.mark.parametrize("cell, seq", [
    (nn.RNNCell(3, 4, nonlinearity=F.relu), nn.RNN(3, 4, nonlinearity=F.relu)),
    (nn.GRUCell(3, 4), nn.GRU(3, 4)),
    (nn.LSTMCell(3, 4), nn.LSTM(3, 4)),
], ids=lambda layer: type(layer).__name__)
def test_cells_are_one_step_of_their_sequence_layer(cell, seq):
    x = _x(2, 6, 3)
    params, _ = seq.init(random.key(0), x)
    assert ft.tree.structure(params) == ft.tree.structure(
        cell.init(random.key(0), x[:, 0])[0])
    out = seq(params, x)
    lstm = isinstance(cell, nn.LSTMCell)
    hs = out[0] if lstm else out
    carry = (hs[:, 0], out[1][:, 0]) if lstm else hs[:, 0]
    _assert_trees_close(cell(params, x[:, 0]), carry)
    # Looping the cell over the sequence gives the sequence layer's output.
    for t in range(1, 6):
        carry = cell(params, x[:, t], *carry) if lstm else cell(params, x[:, t], carry)
    _assert_trees_close(carry, (hs[:, -1], out[1][:, -1]) if lstm else hs[:, -1])


def test_embedding_lookup_and_tied_projection():
    emb = nn.Embedding(6, 3)
    params, _ = emb.init(random.key(0), mx.array([0]))
    ids = mx.array([[5, 0], [2, 2]])
    _assert_trees_close(emb(params, ids), params["weight"][ids])
    _assert_trees_close(emb.as_linear(params, emb(params, ids)),
                        emb(params, ids) @ params["weight"].T)
    assert bool(mx.all(mx.isnan(emb(params, mx.array([6])))))  # out of range: NaN
    grads = ft.grad(lambda p: fnp.sum(emb(p, ids)))(params)["weight"]
    assert grads[:, 0].tolist() == [1.0, 0.0, 2.0, 0.0, 0.0, 1.0]


def test_clear_errors():
    with pytest.raises(ValueError, match="must have 3 features"):
        nn.Linear(3, 4).init(random.key(0), mx.zeros((2, 5)))
    with pytest.raises(ValueError, match="input_dims must be a positive int"):
        nn.Linear(0, 4)
    with pytest.raises(ValueError, match="divisible by groups"):
        nn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match="must be NHWC"):
        nn.Conv2d(3, 4, 3).init(random.key(0), mx.zeros((5, 3)))
    with pytest.raises(TypeError, match="integer indices"):
        nn.Embedding(3, 4).init(random.key(0), mx.zeros(2))
    with pytest.raises(ValueError, match="divisible by num_heads"):
        nn.MultiHeadAttention(6, 4)
    with pytest.raises(ValueError, match="must be a sequence"):
        nn.GRU(3, 4).init(random.key(0), mx.zeros(3))
    with pytest.raises(ValueError, match="approx"):
        nn.GELU("exact")
    with pytest.raises(TypeError, match="Layer or a function"):
        nn.Sequential(nn.ReLU(), 3)
    with pytest.raises(AttributeError, match=r"no child 'nope'; its children are \['layers'\]"):
        _ = nn.Sequential(nn.ReLU()).bind({}, {}).nope
    with pytest.raises(NotImplementedError, match="ReLU does not define init"):
        nn.Layer.init(nn.ReLU(), random.key(0), mx.zeros(2))


def test_sequential_indexing_and_shape_propagation():
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.MaxPool2d(2),
                          lambda x: fnp.reshape(x, (x.shape[0], -1)), nn.Linear(64, 2))
    x = ft.ShapeDtypeStruct((2, 10, 10, 3), mx.float32)
    params, state = model.init(random.key(0), x)
    assert params["layers"][4]["weight"].shape == (2, 64) and state == {}
    assert len(model) == 5 and isinstance(model[0], nn.Conv2d)
    head = model[:3]
    y = head({"layers": params["layers"][:3]}, mx.ones((2, 10, 10, 3)))
    assert y.shape == (2, 4, 4, 4)
    assert model.eval_shape(params, state, x).shape == (2, 2)


# ----------------------------------------------------------------------------
# Utilities
# ----------------------------------------------------------------------------


def test_count_cast_partition_combine():
    model = nn.Sequential(nn.Embedding(10, 4), nn.Linear(4, 3))
    params, _ = model.init(random.key(0), mx.zeros((2,), mx.int32))
    assert nn.utils.count_params(params) == 10 * 4 + 4 * 3 + 3
    half = nn.utils.cast({"p": params, "step": mx.array(1)}, mx.bfloat16)
    assert {x.dtype for x in ft.tree.leaves(half["p"])} == {mx.bfloat16}
    assert half["step"].dtype == mx.int32

    train, frozen = nn.utils.partition(params, lambda name, x: name.startswith("layers.1"))
    assert train["layers"][0]["weight"] is None and frozen["layers"][1]["bias"] is None
    _assert_trees_close(nn.utils.combine(train, frozen), params, atol=0)

    ids = mx.array([1, 2])

    def loss(train):
        return fnp.sum(model(nn.utils.combine(train, frozen), ids) ** 2)

    grads = ft.grad(loss)(train)
    assert grads["layers"][0]["weight"] is None
    full = ft.grad(lambda p: fnp.sum(model(p, ids) ** 2))(params)
    _assert_trees_close(grads["layers"][1], full["layers"][1])


def test_flatten_and_unflatten_names_round_trip_with_mlx():
    module = mnn.Sequential(mnn.Linear(2, 3), mnn.ReLU(), mnn.BatchNorm(3), mnn.Linear(3, 1))
    flat = dict(tree_flatten(module.parameters()))
    nested = nn.utils.unflatten_names(flat)
    assert nested["layers"][1] == {} and sorted(nested["layers"][2]) == [
        "bias", "running_mean", "running_var", "weight"]
    again = nn.utils.flatten_names(nested)
    assert again.keys() == flat.keys()
    assert all(again[k] is flat[k] for k in flat)
    assert tree_unflatten(list(again.items()))["layers"][3]["weight"] is flat["layers.3.weight"]


def test_summary_lists_sublayers():
    model = nn.TransformerEncoderLayer(8, 2, mlp_dims=16)
    x = ft.ShapeDtypeStruct((2, 5, 8), mx.float32)
    params, state = model.init(random.key(0), x)
    text = nn.utils.summary(model, params, state, x, mask="causal")
    lines = text.splitlines()
    assert "TransformerEncoderLayer" in lines[2]
    assert any(line.startswith("attention.query_proj") and "(2, 5, 8)" in line for line in lines)
    assert any(line.startswith("linear1") and "(2, 5, 16)" in line for line in lines)
    assert f"{nn.utils.count_params(params)} parameters" in lines[-1]


def test_mixed_precision_with_float32_master_weights():
    # bfloat16 compute, float32 master weights in the optimizer: the cast is
    # differentiable, so gradients come back in float32 for the master copy.
    model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
    params, _ = model.init(random.key(0), mx.zeros((8, 4)))
    x = random.normal(random.key(1), (64, 4))
    y = fnp.sum(x, axis=1, keepdims=True)

    def loss(master):
        low = nn.utils.cast(master, mx.bfloat16)
        out = model(low, x.astype(mx.bfloat16))
        assert out.dtype == mx.bfloat16
        return fnp.mean(fnp.square(out.astype(mx.float32) - y))

    opt = optim.adamw(1e-2)
    state = opt.init(params)

    @ft.jit
    def step(params, state):
        value, grads = ft.value_and_grad(loss)(params)
        updates, state = opt.update(grads, state, params)
        return optim.apply_updates(params, updates), state, value, grads

    first = None
    for _ in range(60):
        params, state, value, grads = step(params, state)
        first = value.item() if first is None else first
    assert {g.dtype for g in ft.tree.leaves(grads)} == {mx.float32}
    assert {p.dtype for p in ft.tree.leaves(params)} == {mx.float32}
    assert value.item() < 0.1 * first
    assert step.trace_count == 1


# ----------------------------------------------------------------------------
# Bad input: parameters beyond memory, and errors naming the mistake at apply
# ----------------------------------------------------------------------------

# A layer of each kind with parameters or state, too big for any device, and
# its inputs' shapes (float32; Embedding's int32).
HUGE = [
    ("nn.Linear(10**6, 10**6)", [(10**6,)]),
    ("nn.Bilinear(10**4, 10**4, 10**4)", [(10**4,), (10**4,)]),
    ("nn.Embedding(10**6, 10**6)", [(3,)]),
    ("nn.Conv1d(10**6, 10**6, 1)", [(4, 10**6)]),
    ("nn.Conv2d(10**5, 10**5, 10)", [(10, 10, 10**5)]),
    ("nn.Conv3d(10**5, 10**5, 10)", [(10, 10, 10, 10**5)]),
    ("nn.ConvTranspose1d(10**6, 10**6, 1)", [(4, 10**6)]),
    ("nn.ConvTranspose2d(10**5, 10**5, 10)", [(10, 10, 10**5)]),
    ("nn.ConvTranspose3d(10**5, 10**5, 10)", [(10, 10, 10, 10**5)]),
    ("nn.LayerNorm(10**12)", [(10**12,)]),
    ("nn.RMSNorm(10**12)", [(10**12,)]),
    ("nn.GroupNorm(1, 10**12)", [(2, 10**12)]),
    ("nn.InstanceNorm(10**12, affine=True)", [(2, 10**12)]),
    ("nn.BatchNorm(10**12)", [(2, 10**12)]),
    ("nn.BatchNorm(10**12, affine=False)", [(2, 10**12)]),
    ("nn.PReLU(10**12)", [(10**12,)]),
    ("nn.MultiHeadAttention(10**6, 1)", [(2, 10**6)]),
    ("nn.TransformerEncoderLayer(10**6, 1)", [(2, 10**6)]),
    ("nn.TransformerEncoder(1, 10**6, 1)", [(2, 10**6)]),
    ("nn.TransformerDecoderLayer(10**6, 1)", [(2, 10**6), (2, 10**6)]),
    ("nn.TransformerDecoder(1, 10**6, 1)", [(2, 10**6), (2, 10**6)]),
    ("nn.RNN(10**6, 10**6)", [(2, 10**6)]),
    ("nn.GRU(10**6, 10**6)", [(2, 10**6)]),
    ("nn.LSTM(10**6, 10**6)", [(2, 10**6)]),
    ("nn.RNNCell(10**6, 10**6)", [(10**6,)]),
    ("nn.GRUCell(10**6, 10**6)", [(10**6,)]),
    ("nn.LSTMCell(10**6, 10**6)", [(10**6,)]),
    ("nn.Sequential(nn.ReLU(), nn.Linear(10**6, 10**6))", [(10**6,)]),
]


def test_every_kind_of_layer_with_parameters_is_in_huge():
    covered = {type(eval(source)) for source, _ in HUGE}
    with_params = {type(c.ours) for c in CASES if ft.tree.leaves(_init(c))}
    assert with_params <= covered


def test_parameters_beyond_memory_are_a_memory_error_naming_the_layer():
    # MLX crashes allocating them: a child process survives that.
    out = run_child(f"""
        import ftorch.nn as nn, ftorch.random as random
        for source, shapes in {HUGE!r}:
            layer = eval(source)
            specs = [ft.ShapeDtypeStruct(s, mx.int32 if "Embedding" in source else mx.float32)
                     for s in shapes]
            try:
                mx.eval(layer.init(random.key(0), *specs))
                print("made")
            except MemoryError as e:
                said = str(e).startswith(type(layer).__name__) and "needs" in str(e)
                print("MemoryError" if said else e)
        try:
            mx.eval(nn.create_additive_causal_mask(10**6))
        except MemoryError as e:
            print("MemoryError" if "create_additive_causal_mask" in str(e) else e)
    """)
    assert out.split("\n")[:-1] == ["MemoryError"] * (len(HUGE) + 1)


def _wider(case: Case) -> tuple:
    """The case's inputs, the first with one more feature (last axis)."""
    x = case.inputs[0]
    return (mx.zeros(x.shape[:-1] + (x.shape[-1] + 1,), x.dtype),) + case.inputs[1:]


def _init_refuses(case: Case, inputs: tuple) -> bool:
    try:
        case.ours.init(random.key(0), *inputs)
    except ValueError:
        return True
    return False


@pytest.mark.parametrize("case", [c for c in CASES if _init_refuses(c, _wider(c))], ids=repr)
def test_apply_refuses_other_features_as_init_does_naming_the_layer(case):
    inputs = _wider(case)
    with pytest.raises(ValueError) as info:
        case.ours.apply(*_init(case), *inputs, **case.options)
    message = str(info.value)
    assert message.startswith(type(case.ours).__name__) and str(inputs[0].shape) in message


_CONVS = [nn.Conv1d(3, 4, 2), nn.Conv2d(3, 4, 2), nn.Conv3d(3, 4, 2), nn.ConvTranspose1d(3, 4, 2),
          nn.ConvTranspose2d(3, 4, 2), nn.ConvTranspose3d(3, 4, 2)]


@pytest.mark.parametrize("conv", _CONVS, ids=lambda c: type(c).__name__)
@pytest.mark.parametrize("batch", [(2,), ()], ids=["batch", "example"])
def test_channels_first_inputs_are_called_so(conv, batch):
    spatial = (5,) * conv.nd
    params, _ = conv.init(random.key(0), mx.zeros(batch + spatial + (3,)))
    axis = len(batch)
    with pytest.raises(ValueError, match=rf"last axis must be its 3 channels .* looks "
                                         rf"channels-first .* fnp.moveaxis\(x, {axis}, -1\)"):
        conv(params, mx.zeros(batch + (3,) + spatial))
    with pytest.raises(ValueError, match=r"last axis must be its 3 channels"):
        conv(params, mx.zeros(batch + spatial + (4,)))


def _perturbed(params, name, value=None, rename=None):
    """``params`` with the leaf ``name`` replaced by ``value``, or renamed, or
    left out."""
    flat = nn.utils.flatten_names(params)
    leaf = flat.pop(name)
    if value is not None:
        flat[name] = value
    elif rename is not None:
        flat[name.rpartition(".")[0] + ("." if "." in name else "") + rename] = leaf
    return nn.utils.unflatten_names(flat) if flat else {}


@pytest.mark.parametrize("case", [c for c in CASES if ft.tree.leaves(_init(c)[0])], ids=repr)
def test_params_of_another_layer_name_the_layer_path_and_entry(case):
    params, state = _init(case)
    name = sorted(nn.utils.flatten_names(params))[0]
    leaf = nn.utils.flatten_names(params)[name]
    *path, last = name.split(".")
    where = "".join(f"[{p}]" if p.isdigit() else f".{p}" for p in path)

    def message(bad):
        with pytest.raises(ValueError) as info:
            case.ours.apply(bad, state, *case.inputs, **case.options)
        text = str(info.value)
        assert text.startswith(type(case.ours).__name__ + (where + " (" if where else "("))
        return text

    grown = mx.concatenate([leaf, leaf[:1]], 0)
    assert (f"'{last}' has shape {grown.shape}, not {leaf.shape}"
            in message(_perturbed(params, name, grown)))
    assert f"'{last}' is missing" in message(_perturbed(params, name))
    renamed = message(_perturbed(params, name, rename="renamed"))
    assert f"'{last}' is missing" in renamed and "'renamed' is not one of its params" in renamed


def _biases(params) -> list[str]:
    return [n for n in nn.utils.flatten_names(params) if n.rpartition(".")[2] in ("bias", "b")]


@pytest.mark.parametrize("case", [c for c in CASES if _biases(_init(c)[0])], ids=repr)
def test_a_missing_bias_is_named_not_skipped(case):
    # Layers used to add a bias only when the params had one.
    params, state = _init(case)
    name = _biases(params)[0]
    with pytest.raises(ValueError, match=rf"'{name.rpartition('.')[2]}' is missing"):
        case.ours.apply(_perturbed(params, name), state, *case.inputs, **case.options)


def test_sequential_names_the_layer_whose_params_do_not_fit():
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    params, _ = model.init(random.key(0), mx.zeros((2, 3)))
    other, _ = nn.Linear(4, 3).init(random.key(1), mx.zeros(4))
    bad = {"layers": params["layers"][:2] + [other]}
    expected = (r"^Sequential.layers\[2\] \(Linear\): the params do not fit this layer: "
                r"'bias' has shape \(3,\), not \(2,\); 'weight' has shape \(3, 4\), not \(2, 4\)")
    x = mx.ones((2, 3))
    for run in (model, ft.jit(model), ft.grad(lambda p, x: fnp.sum(model(p, x)))):
        with pytest.raises(ValueError, match=expected):
            run(bad, x)
    with pytest.raises(ValueError, match=r"params is init's \(params, state\) pair: unpack it"):
        model(model.init(random.key(0), x), x)
    with pytest.raises(ValueError, match=r"^Sequential.layers\[0\] \(Linear\): the input must "
                                         r"have 3 features on axis -1, got shape \(2, 5\)"):
        model(params, mx.ones((2, 5)))
    with pytest.raises(ValueError, match=r"^Sequential.layers\[1\] \(Linear\): the input must "
                                         r"have 5 features on axis -1, got shape \(2, 4\)"):
        nn.Sequential(nn.Linear(3, 4), nn.Linear(5, 2)).init(random.key(0), x)


@pytest.mark.parametrize("train", [False, True])
def test_batchnorm_state_that_does_not_fit(train):
    bn = nn.BatchNorm(6)
    params, state = bn.init(random.key(0), mx.zeros((4, 6)))
    x = _x(4, 6)
    for size in (4, 1):  # (1,) would broadcast silently
        bad = {**state, "running_mean": mx.zeros(size)}
        with pytest.raises(ValueError, match=rf"^BatchNorm\(.*\): the state does not fit .*"
                                             rf"'running_mean' has shape \({size},\), not \(6,\)"):
            bn.apply(params, bad, x, train=train)
    with pytest.raises(ValueError, match=r"the state does not fit .*'running_var' is missing"):
        bn.apply(params, {"running_mean": state["running_mean"]}, x, train=train)
    model = nn.Sequential(nn.Linear(3, 6), nn.BatchNorm(6))
    params, state = model.init(random.key(0), mx.zeros((4, 3)))
    state["layers"][1]["running_var"] = mx.ones(5)
    with pytest.raises(ValueError, match=r"^Sequential.layers\[1\] \(BatchNorm\): the state "
                                         r"does not fit .*'running_var' has shape \(5,\), not "
                                         r"\(6,\)"):
        model.apply(params, state, _x(4, 3), train=train)


def test_groupnorm_needs_examples_and_channels_that_fit():
    gn = nn.GroupNorm(2, 4)
    params, _ = gn.init(random.key(0), mx.zeros((1, 4)))
    with pytest.raises(ValueError, match=r"^GroupNorm\(.*\): the input must be \(N, ..., C\), "
                                         r"got shape \(4,\)"):
        gn(params, mx.ones(4))
    with pytest.raises(ValueError, match=r"must have 4 features on axis -1, got shape \(2, 6\)"):
        gn(params, mx.ones((2, 6)))
    with pytest.raises(ValueError, match=r"dims=6 must be divisible by num_groups=4"):
        nn.GroupNorm(4, 6)


@pytest.mark.parametrize("layer", [nn.RNN(3, 5), nn.GRU(3, 5), nn.LSTM(3, 5)],
                         ids=lambda layer: type(layer).__name__)
def test_recurrent_layers_name_a_wrong_rank_or_hidden_size(layer):
    params, _ = layer.init(random.key(0), mx.zeros((2, 4, 3)))
    name = type(layer).__name__
    with pytest.raises(ValueError, match=rf"^{name}\(.*\): the input must be a sequence "
                                         r"\(..., L, 3\), got shape \(3,\)"):
        layer(params, mx.ones(3))
    x = _x(2, 4, 3)
    carries = ["hidden", "cell"] if name == "LSTM" else ["hidden"]
    for i, carry in enumerate(carries):
        for bad in (mx.zeros((2, 4)), mx.zeros(5)):
            args = [mx.zeros((2, 5))] * len(carries)
            args[i] = bad
            got = re.escape(str(bad.shape))
            with pytest.raises(ValueError, match=rf"^{name}\(.*\): {carry} must have shape "
                                                 rf"\(2, 5\) .* got shape {got}"):
                layer(params, x, *args)


@pytest.mark.parametrize("cell", [nn.RNNCell(3, 5), nn.GRUCell(3, 5), nn.LSTMCell(3, 5)],
                         ids=lambda layer: type(layer).__name__)
def test_cells_name_a_wrong_input_or_hidden_size(cell):
    params, _ = cell.init(random.key(0), mx.zeros(3))
    name = type(cell).__name__
    with pytest.raises(ValueError, match=rf"^{name}\(.*\): the input must have 3 features"):
        cell(params, mx.ones((2, 4)))
    carries = 2 if name == "LSTMCell" else 1
    for i in range(carries):
        args = [mx.zeros((2, 5))] * carries
        args[i] = mx.zeros((2, 4))
        with pytest.raises(ValueError, match=rf"^{name}\(.*\): (hidden|cell) must have "
                                             r"hidden_size=5 features"):
            cell(params, mx.ones((2, 3)), *args)


def test_embedding_attention_and_transformer_inputs_at_apply():
    emb = nn.Embedding(5, 3)
    params, _ = emb.init(random.key(0), mx.array([0]))
    with pytest.raises(TypeError, match=r"^Embedding\(.*\): the input must hold integer "
                                        r"indices, got dtype mlx.core.float32"):
        emb(params, mx.array([1.0, 2.0]))
    mha = nn.MultiHeadAttention(8, 2)
    params, _ = mha.init(random.key(0), mx.zeros((2, 5, 8)))
    with pytest.raises(ValueError, match=r"the keys and values must have the same length "
                                         r"\(axis -2\), got shapes \(2, 3, 8\) and \(2, 4, 8\)"):
        mha(params, _x(2, 5, 8), _x(2, 3, 8), _x(2, 4, 8))
    with pytest.raises(ValueError, match=r"the values must be \(..., L, 8\) "
                                         r"\(value_input_dims=8\), got shape \(2, 3, 6\)"):
        mha(params, _x(2, 5, 8), _x(2, 3, 8), _x(2, 3, 6))
    dec = nn.TransformerDecoderLayer(8, 2, mlp_dims=16)
    params, _ = dec.init(random.key(0), mx.zeros((3, 8)), mx.zeros((5, 8)))
    with pytest.raises(ValueError, match=r"^TransformerDecoderLayer\(.*\): memory must have 8 "
                                         r"features on axis -1, got shape \(5, 6\)"):
        dec(params, _x(3, 8), _x(5, 6))
