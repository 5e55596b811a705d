"""Weights exchange between mlx.nn models and their ftorch.nn equivalents:
saved by mlx.nn (files and parameter trees) and loaded into ftorch, and
back (ftorch's params into mlx.nn through files, load_weights and update),
with equal outputs both ways."""

import mlx.core as mx
import mlx.nn as mnn
import numpy as np
import pytest
from mlx.utils import tree_flatten, tree_map, tree_unflatten

import ftorch as ft
import ftorch.nn as nn
import ftorch.numpy as fnp
import ftorch.random as random

_rng = np.random.default_rng(1)


def _x(*shape: int) -> mx.array:
    return mx.array(_rng.standard_normal(shape).astype(np.float32))


def _close(a, b, atol: float = 1e-5) -> None:
    np.testing.assert_allclose(np.array(a), np.array(b), atol=atol, rtol=1e-5)


def _flatten(x):
    return x.reshape(x.shape[0], -1)


def _mlx_cnn() -> mnn.Module:
    return mnn.Sequential(
        mnn.Conv2d(3, 8, 3, padding=1), mnn.BatchNorm(8), mnn.ReLU(), mnn.MaxPool2d(2),
        mnn.Conv2d(8, 4, 3, stride=2, groups=2), mnn.GELU(), _flatten, mnn.Dropout(0.5),
        mnn.Linear(16, 10))


def _ftorch_cnn() -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm(8), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(8, 4, 3, stride=2, groups=2), nn.GELU(),
        lambda x: fnp.reshape(x, (x.shape[0], -1)), nn.Dropout(0.5), nn.Linear(16, 10))


def _train_mlx_batchnorm(module: mnn.Module, x: mx.array) -> None:
    """Move the running statistics away from their initial values."""
    module.train()
    module(x)
    module(2 * x + 1)
    module.eval()


@pytest.mark.parametrize("fmt", ["safetensors", "npz"])
def test_cnn_weights_saved_by_mlx_load_into_ftorch(tmp_path, fmt):
    x = _x(2, 10, 10, 3)
    theirs = _mlx_cnn()
    _train_mlx_batchnorm(theirs, x)
    path = str(tmp_path / f"cnn.{fmt}")
    theirs.save_weights(path)

    ours = _ftorch_cnn()
    # Shapes only: the template costs nothing to build.
    template = ft.eval_shape(lambda: ours.init(random.key(0), x))
    params, state = nn.utils.load_weights(path, *template)
    assert sorted(state["layers"][1]) == ["running_mean", "running_var"]
    _close(state["layers"][1]["running_var"], theirs.layers[1].running_var)
    _close(ours.apply(params, state, x)[0], theirs(x))


def test_cnn_params_from_ftorch_load_into_mlx(tmp_path):
    x = _x(2, 10, 10, 3)
    ours = _ftorch_cnn()
    params, state = ours.init(random.key(3), x)
    for _ in range(2):  # running statistics away from 0 and 1
        _, state = ours.apply(params, state, x, key=random.key(4), train=True)

    # Through a file...
    path = str(tmp_path / "cnn.safetensors")
    nn.utils.save_weights(path, params, state)
    theirs = _mlx_cnn()
    theirs.load_weights(path)
    theirs.eval()
    _close(theirs(x), ours.apply(params, state, x)[0])

    # ...through load_weights on the name/array pairs...
    theirs = _mlx_cnn()
    theirs.load_weights(list(nn.utils.flatten_names(params, state).items()))
    theirs.eval()
    _close(theirs(x), ours.apply(params, state, x)[0])

    # ...and through update with the nested tree.
    theirs = _mlx_cnn()
    theirs.update(tree_unflatten(list(nn.utils.flatten_names(params, state).items())))
    theirs.eval()
    _close(theirs(x), ours.apply(params, state, x)[0])


def test_cnn_training_step_matches_mlx():
    """One training step's loss and gradients agree (BatchNorm in training,
    Dropout left out: MLX's global random state cannot be matched)."""
    x, labels = _x(4, 10, 10, 3), mx.array([1, 2, 3, 4])
    keep = [i for i in range(9) if i != 7]
    theirs = mnn.Sequential(*[_mlx_cnn().layers[i] for i in keep])
    ours = nn.Sequential(*[_ftorch_cnn().layers[i] for i in keep])
    params, state = ours.init(random.key(0), x)
    theirs.update(tree_unflatten(list(nn.utils.flatten_names(params, state).items())))
    theirs.train()

    def our_loss(params, state):
        logits, state = ours.apply(params, state, x, train=True)
        return nn.losses.cross_entropy(logits, labels, reduction="mean"), state

    def their_loss(params):
        theirs.update(params)
        return mnn.losses.cross_entropy(theirs(x), labels, reduction="mean")

    (value, new_state), grads = ft.value_and_grad(our_loss, has_aux=True)(params, state)
    their_value, their_grads = mx.value_and_grad(their_loss)(theirs.trainable_parameters())
    _close(value, their_value)
    ours_flat, theirs_flat = nn.utils.flatten_names(grads), dict(tree_flatten(their_grads))
    assert ours_flat.keys() == theirs_flat.keys()
    for name in ours_flat:
        _close(ours_flat[name], theirs_flat[name], atol=1e-4)
    for name, value in nn.utils.flatten_names(new_state).items():
        _close(value, dict(tree_flatten(theirs.parameters()))[name])


@pytest.mark.parametrize("norm_first", [True, False])
def test_transformer_encoder_layer_exchanges_both_ways(tmp_path, norm_first):
    x, mask = _x(2, 6, 16), mnn.MultiHeadAttention.create_additive_causal_mask(6)
    theirs = mnn.TransformerEncoderLayer(16, 4, mlp_dims=32, dropout=0.1, norm_first=norm_first)
    theirs.update(tree_map(lambda p: p + 0.1 * mx.random.normal(p.shape), theirs.parameters()))
    theirs.eval()
    ours = nn.TransformerEncoderLayer(16, 4, mlp_dims=32, dropout=0.1, norm_first=norm_first)

    # mlx.nn -> ftorch, from the parameter tree.
    template = ours.init(random.key(0), x)
    params, state = nn.utils.load_weights(tree_flatten(theirs.parameters()), *template)
    _close(ours(params, x, mask), theirs(x, mask))
    _close(ours(params, x, "causal"), theirs(x, mask))

    # ftorch -> mlx.nn, through a file.
    params = ft.tree.map(lambda p: p * 1.5, params)
    path = str(tmp_path / "block.safetensors")
    nn.utils.save_weights(path, params, state)
    theirs.load_weights(path)
    _close(theirs(x, mask), ours(params, x, mask))


def test_load_weights_refuses_mismatches():
    layer = nn.Linear(3, 2)
    params, state = layer.init(random.key(0), mx.zeros(3))
    with pytest.raises(ValueError, match=r"missing \['bias'\]"):
        nn.utils.load_weights({"weight": mx.zeros((2, 3))}, params, state)
    with pytest.raises(ValueError, match=r"unexpected \['extra'\]"):
        nn.utils.load_weights({"weight": mx.zeros((2, 3)), "bias": mx.zeros(2),
                               "extra": mx.zeros(1)}, params, state)
    with pytest.raises(ValueError, match="has shape"):
        nn.utils.load_weights({"weight": mx.zeros((3, 2)), "bias": mx.zeros(2)}, params, state)
    loose, _ = nn.utils.load_weights({"bias": mx.ones(2), "extra": mx.zeros(1)}, params, state,
                                     strict=False)
    assert loose["weight"] is params["weight"] and loose["bias"].tolist() == [1.0, 1.0]
