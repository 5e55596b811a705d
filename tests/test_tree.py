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


# ----------------------------------------------------------------------------
# jax.tree's and jax.tree_util's other names (what JAX 0.10 gives in comments)
# ----------------------------------------------------------------------------


def test_reductions():
    assert ft.tree.all([1, {"a": True}]) and not ft.tree.all([1, 0]) and ft.tree.all([])
    assert ft.tree.reduce(lambda a, b: a + b, {"x": 1, "y": (2, 3)}) == 6
    assert ft.tree.reduce(lambda a, b: a + b, [], 5) == 5
    with pytest.raises(TypeError):
        ft.tree.reduce(lambda a, b: a + b, [])
    calls = []

    def add(a, b):
        calls.append((a, b))
        return a + b
    assert ft.tree.reduce_associative(add, [1, 2, 3, 4, 5]) == 15
    assert calls[:2] == [(1, 2), (3, 4)]  # pairwise, not left to right
    assert ft.tree.reduce_associative(add, [], identity=0) == 0
    with pytest.raises(TypeError, match="identity"):
        ft.tree.reduce_associative(add, [])


def test_transpose():
    outer, inner = ft.tree.structure([0, 0]), ft.tree.structure((0, 0))
    assert ft.tree.transpose(outer, inner, [(1, 2), (3, 4)]) == ([1, 3], [2, 4])
    assert ft.tree.transpose(outer, None, [(1, 2), (3, 4)]) == ([1, 3], [2, 4])
    assert ft.tree.tree_transpose is ft.tree.transpose


def test_tree_util_names_are_the_short_ones():
    t = ft.tree
    pairs = [(t.tree_map, t.map), (t.tree_leaves, t.leaves), (t.tree_flatten, t.flatten),
             (t.tree_unflatten, t.unflatten), (t.tree_structure, t.structure),
             (t.tree_reduce, t.reduce), (t.tree_all, t.all), (t.tree_broadcast, t.broadcast),
             (t.tree_flatten_with_path, t.flatten_with_path),
             (t.tree_leaves_with_path, t.leaves_with_path),
             (t.tree_map_with_path, t.map_with_path),
             (t.tree_reduce_associative, t.reduce_associative)]
    assert all(a is b for a, b in pairs)


def test_register_pytree_node_and_classes():
    class Pt:
        def __init__(self, x, y):
            self.x, self.y = x, y

    ft.tree.register_pytree_node(Pt, lambda p: ((p.x, p.y), "aux"),
                                 lambda aux, ch: Pt(*ch))
    out = ft.tree.map(lambda v: v * 2, Pt(1, 2))
    assert (out.x, out.y) == (2, 4)
    assert [ft.tree.keystr(k) for k, _ in ft.tree.leaves_with_path(Pt(1, 2))] == [
        "[<flat index 0>]", "[<flat index 1>]"]

    class Keyed:
        def __init__(self, a):
            self.a = a

    ft.tree.register_pytree_node(
        Keyed, lambda k: ((k.a,), None), lambda aux, ch: Keyed(*ch),
        flatten_with_keys_func=lambda k: (((ft.tree.DictKey("a"), k.a),), None))
    assert ft.tree.keystr(ft.tree.leaves_with_path(Keyed(3))[0][0]) == "['a']"

    @ft.tree.register_pytree_with_keys_class
    class Named:
        def __init__(self, w):
            self.w = w

        def tree_flatten_with_keys(self):
            return ((ft.tree.GetAttrKey("w"), self.w),), None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)

    grads = ft.grad(lambda n: (n.w ** 2).sum())(Named(mx.array([1.0, 2.0])))
    assert grads.w.tolist() == [2.0, 4.0]


def test_register_static_and_static_fields():
    import dataclasses

    @ft.tree.register_static
    @dataclasses.dataclass(frozen=True)
    class Cfg:
        n: int = 3

    assert ft.tree.leaves({"c": Cfg(), "x": 1}) == [1]
    assert ft.tree.map(lambda v: v, {"c": Cfg(5)})["c"] == Cfg(5)

    @ft.tree.register_dataclass
    @dataclasses.dataclass
    class Op:
        x: mx.array
        kind: str = ft.tree.static(default="add")

    leaves, treedef = ft.tree.flatten(Op(mx.ones(2)))
    assert len(leaves) == 1 and ft.tree.unflatten(treedef, leaves).kind == "add"


def test_structure_queries():
    assert ft.tree.all_leaves([1, 2.0]) and not ft.tree.all_leaves([1, [2]])
    assert not ft.tree.all_leaves([1, None])
    assert ft.tree.is_tree_node(dict) and ft.tree.is_tree_node(Pair)
    assert ft.tree.is_tree_node(Layer) and not ft.tree.is_tree_node(int)
    assert not ft.tree.is_tree_node({})  # a type is asked about, as in JAX
    children, aux = ft.tree.flatten_one_level({"b": 1, "a": [2]})
    assert children == [[2], 1]
    with pytest.raises(ValueError):
        ft.tree.flatten_one_level(1)
    td = ft.tree.structure((1, [2, 3]))
    assert ft.tree.treedef_children(td) == [ft.tree.structure(1), ft.tree.structure([2, 3])]
    assert ft.tree.treedef_is_leaf(ft.tree.structure(1))
    assert ft.tree.treedef_is_leaf(ft.tree.structure(None))
    assert ft.tree.treedef_is_leaf(ft.tree.structure([]))  # one node, as in JAX
    assert not ft.tree.treedef_is_leaf(td)
    assert ft.tree.treedef_tuple([ft.tree.structure(1), td]) == ft.tree.structure((1, (1, [2, 3])))


def test_partial_is_a_pytree_through_transforms():
    scale = ft.tree.Partial(lambda w, x: w * x, mx.array(3.0))
    assert ft.tree.leaves(scale)[0].item() == 3.0
    assert ft.jit(lambda f, x: f(x))(scale, mx.array(2.0)).item() == 6.0
    g = ft.grad(lambda f: f(mx.array(2.0)))(scale)
    assert isinstance(g, ft.tree.Partial) and g.args[0].item() == 2.0
    nested = ft.tree.Partial(ft.tree.Partial(lambda a, b, c=0: a + b + c, 1), 2, c=3)
    assert nested() == 6 and len(ft.tree.leaves(nested)) == 3
