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


# Key paths: the expected values are the outputs JAX documents for the same
# calls (jax.tree.flatten_with_path, leaves_with_path, map_with_path,
# jax.tree_util.keystr, jax.tree.broadcast).


def test_flatten_with_path_as_jax_documents():
    path_vals, treedef = ft.tree.flatten_with_path([1, {"x": 3}])
    assert path_vals == [((ft.tree.SequenceKey(idx=0),), 1),
                         ((ft.tree.SequenceKey(idx=1), ft.tree.DictKey(key="x")), 3)]
    assert repr(path_vals) == ("[((SequenceKey(idx=0),), 1), "
                               "((SequenceKey(idx=1), DictKey(key='x')), 3)]")
    assert treedef == ft.tree.structure([1, {"x": 3}])
    assert ft.tree.leaves_with_path([1, {"x": 3}]) == path_vals


def test_map_with_path_as_jax_documents():
    assert ft.tree.map_with_path(lambda path, x: x + path[0].idx, [1, 2, 3]) == [1, 3, 5]
    # The other trees may be deeper (the first is a prefix of them), as in tree.map.
    got = ft.tree.map_with_path(lambda p, x, y: (ft.tree.keystr(p), x, y),
                                {"a": 1, "b": [2]}, {"a": (10, 11), "b": [20]})
    assert got == {"a": ("['a']", 1, (10, 11)), "b": [("['b'][0]", 2, 20)]}


def test_keystr_as_jax_documents():
    params = {"foo": {"bar": {"baz": 1, "bat": [2, 3]}}}
    paths = [path for path, _ in ft.tree.leaves_with_path(params)]
    assert [ft.tree.keystr(p) for p in paths] == [
        "['foo']['bar']['bat'][0]", "['foo']['bar']['bat'][1]", "['foo']['bar']['baz']"]
    assert [ft.tree.keystr(p, simple=True, separator="/") for p in paths] == [
        "foo/bar/bat/0", "foo/bar/bat/1", "foo/bar/baz"]
    assert ft.tree.keystr(()) == ""


def test_key_entries_of_each_node_kind():
    class Box:
        def __init__(self, value):
            self.value = value

    ft.tree.register_node(Box, lambda b: ((b.value,), None), lambda _, ch: Box(ch[0]))
    tree = {"pair": Pair(1, None), "layer": Layer(2, 3), "box": Box(4),
            "od": collections.OrderedDict(z=5), "t": (6,)}
    names = {ft.tree.keystr(p): x for p, x in ft.tree.leaves_with_path(tree)}
    # As JAX: namedtuple and dataclass fields are attributes, a node registered
    # without keys has flat indices.
    assert names == {"['box'][<flat index 0>]": 4, "['layer'].w": 2, "['layer'].b": 3,
                     "['od']['z']": 5, "['pair'].a": 1, "['t'][0]": 6}
    dotted = [ft.tree.keystr(p, simple=True, separator=".")
              for p, _ in ft.tree.leaves_with_path(tree)]
    assert dotted == ["box.0", "layer.w", "layer.b", "od.z", "pair.a", "t.0"]


def test_register_dataclass_fields_are_attribute_keys():
    import dataclasses

    @ft.tree.register_dataclass
    @dataclasses.dataclass
    class Point:
        x: float
        y: float

    assert [ft.tree.keystr(p) for p, _ in ft.tree.leaves_with_path(Point(1.0, 2.0))] == [
        ".x", ".y"]


def test_flatten_one_level_with_keys():
    pairs, _ = ft.tree.flatten_one_level_with_keys({"b": 1, "a": [2]})
    assert pairs == [(ft.tree.DictKey("a"), [2]), (ft.tree.DictKey("b"), 1)]
    pairs, _ = ft.tree.flatten_one_level_with_keys(Layer(1, 2))
    assert pairs == [(ft.tree.GetAttrKey("w"), 1), (ft.tree.GetAttrKey("b"), 2)]
    with pytest.raises(ValueError, match="is a leaf"):
        ft.tree.flatten_one_level_with_keys(mx.ones(2))


def test_broadcast_as_jax_documents():
    assert ft.tree.broadcast((1, 2, 3), (0, {"a": 0, "b": 0}, (0, 0))) == (
        1, {"a": 2, "b": 2}, (3, 3))
    with pytest.raises(ValueError):
        ft.tree.broadcast((1, 2), (0, 0, 0))
