"""ftorch.tree: optree-backed pytree helpers."""

import collections

import mlx.core as mx
import numpy as np
import pytest

import ftorch as ft

Pair = collections.namedtuple("Pair", ["a", "b"])


@ft.tree.dataclass
class Layer:
    w: mx.array
    b: mx.array


def sample():
    return {"x": mx.ones((2, 2)), "n": [Pair(mx.zeros(3), None), Layer(mx.ones(1), mx.ones(()))]}


def test_flatten_unflatten_round_trip():
    tree = sample()
    leaves, treedef = ft.tree.flatten(tree)
    assert len(leaves) == 4  # None is an empty subtree
    rebuilt = ft.tree.unflatten(treedef, leaves)
    assert ft.tree.structure(rebuilt) == treedef
    assert isinstance(rebuilt["n"][0], Pair) and isinstance(rebuilt["n"][1], Layer)
    assert rebuilt["n"][0].b is None


def test_map_and_leaves():
    doubled = ft.tree.map(lambda x: x * 2, sample())
    # dict keys come sorted: "n" before "x"
    assert [float(x.sum()) for x in ft.tree.leaves(doubled)] == [0.0, 2.0, 2.0, 8.0]
    summed = ft.tree.map(lambda x, y: x + y, sample(), sample())
    assert float(summed["x"].sum()) == 8.0


def test_register_node():
    class Box:
        def __init__(self, value, label):
            self.value, self.label = value, label

    ft.tree.register_node(Box, lambda b: ((b.value,), b.label), lambda label, ch: Box(ch[0], label))
    g = ft.grad(lambda box: (box.value ** 2).sum())(Box(mx.array([1.0, 2.0]), "v"))
    assert isinstance(g, Box) and g.label == "v" and g.value.tolist() == [2.0, 4.0]


def test_ravel_round_trip_and_dtypes():
    tree = {"w": mx.ones((2, 3), mx.float16), "b": mx.arange(4).astype(mx.float32)}
    flat, unravel = ft.tree.ravel(tree)
    assert flat.shape == (10,) and flat.dtype == mx.float32
    back = unravel(flat)
    assert back["w"].dtype == mx.float16 and back["w"].shape == (2, 3)
    np.testing.assert_array_equal(np.array(back["b"]), np.arange(4))
    with pytest.raises(ValueError, match="size 10"):
        unravel(mx.ones(3))


def test_ravel_is_differentiable():
    tree = {"w": mx.array([1.0, 2.0]), "b": mx.array([3.0])}

    def loss(tree):
        flat, _ = ft.tree.ravel(tree)
        return (flat * mx.array([1.0, 2.0, 3.0])).sum()

    g = ft.grad(loss)(tree)  # leaves in sorted-key order: b, then w
    assert g["b"].tolist() == [1.0] and g["w"].tolist() == [2.0, 3.0]
    _, unravel = ft.tree.ravel(tree)
    g2 = ft.grad(lambda flat: unravel(flat)["b"].sum() * 5)(mx.ones(3))
    assert g2.tolist() == [5.0, 0.0, 0.0]
