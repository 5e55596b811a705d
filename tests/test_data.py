"""ftorch.data: batches, DataLoader, split and shard over in-memory pytrees."""

import collections

import mlx.core as mx
import numpy as np
import pytest

import ftorch as ft
import ftorch.data as fdata

Pair = collections.namedtuple("Pair", ["x", "y"])


def ids(batch_list, get=lambda b: b["y"]):
    """The example ids of a list of batches, in the order drawn."""
    return [i for b in batch_list for i in get(b).tolist()]


def make(n=10):
    """Examples whose features encode their id, to check that leaves stay aligned."""
    y = mx.arange(n)
    return {"x": mx.stack([y * 10, y * 10 + 1], axis=1), "y": y}


def check_aligned(batch):
    assert batch["x"][:, 0].tolist() == (batch["y"] * 10).tolist()


@pytest.mark.parametrize("key", [None, 0])
@pytest.mark.parametrize("n,bs", [(10, 3), (10, 5), (10, 10), (10, 12), (1, 1)])
def test_batches_cover_every_example_once(n, bs, key):
    key = None if key is None else ft.random.key(key)
    out = list(fdata.batches(make(n), bs, key=key))
    assert len(out) == -(-n // bs)
    assert [b["y"].shape[0] for b in out] == [bs] * (n // bs) + ([n % bs] if n % bs else [])
    assert sorted(ids(out)) == list(range(n))
    for b in out:
        check_aligned(b)
        assert isinstance(b["x"], mx.array) and b["x"].shape[1:] == (2,)
    if key is None:
        assert ids(out) == list(range(n))


def test_batches_shuffle_is_the_keys_permutation():
    key = ft.random.key(3)
    got = ids(fdata.batches(make(20), 6, key=key))
    assert got == ft.random.permutation(key, 20).tolist()
    assert got != list(range(20))
    assert got == ids(fdata.batches(make(20), 6, key=ft.random.key(3)))
    assert got != ids(fdata.batches(make(20), 6, key=ft.random.key(4)))


def test_drop_last():
    out = list(fdata.batches(make(10), 4, drop_last=True))
    assert [b["y"].tolist() for b in out] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    shuffled = list(fdata.batches(make(10), 4, drop_last=True, key=ft.random.key(0)))
    assert [b["y"].shape for b in shuffled] == [(4,), (4,)]
    assert len(set(ids(shuffled))) == 8
    # An exact multiple drops nothing.
    assert len(list(fdata.batches(make(8), 4, drop_last=True))) == 2
    with pytest.raises(ValueError, match="drop_last.*no batch"):
        fdata.batches(make(3), 4, drop_last=True)


def test_pytrees_tuple_namedtuple_nested_and_single_array():
    X, y = mx.arange(12).reshape(6, 2), mx.arange(6)
    (xb, yb), = list(fdata.batches((X, y), 6))
    assert xb.tolist() == X.tolist() and yb.tolist() == y.tolist()
    out = list(fdata.batches(Pair(X, y), 4))
    assert all(isinstance(b, Pair) for b in out) and out[1].y.tolist() == [4, 5]
    nested = {"inputs": (X, {"mask": y > 2}), "labels": [y]}
    b = next(iter(fdata.batches(nested, 4, key=ft.random.key(0))))
    assert ft.tree.structure(b) == ft.tree.structure(nested)
    assert b["inputs"][1]["mask"].tolist() == (b["labels"][0] > 2).tolist()
    assert b["inputs"][0][:, 0].tolist() == (b["labels"][0] * 2).tolist()
    assert [a.tolist() for a in fdata.batches(y, 4)] == [[0, 1, 2, 3], [4, 5]]


def test_numpy_inputs_become_mx_arrays():
    X = np.arange(12, dtype=np.float32).reshape(6, 2)
    y = np.arange(6, dtype=np.int32)
    out = list(fdata.batches({"x": X, "y": y}, 4, key=ft.random.key(1)))
    assert all(type(leaf) is mx.array for b in out for leaf in ft.tree.leaves(b))
    assert out[0]["x"].dtype == mx.float32 and out[0]["y"].dtype == mx.int32
    for b in out:
        np.testing.assert_array_equal(np.array(b["x"]), X[np.array(b["y"])])
    loader = fdata.DataLoader((X, mx.array(y)), 4)
    assert [b[1].tolist() for b in loader.epoch(0)] == [[0, 1, 2, 3], [4, 5]]


NUMPY_DTYPES = [name for name in ft.dtypes.DTYPES_BY_NAME if name != "bfloat16"]


@pytest.mark.parametrize("name", NUMPY_DTYPES)
@pytest.mark.parametrize("make_batches", [
    lambda data: list(fdata.batches(data, 2)),
    lambda data: list(fdata.batches(data, 2, key=ft.random.key(0))),
    lambda data: list(fdata.DataLoader(data, 2)),
    lambda data: list(fdata.split(data, [0.5, 0.5], key=ft.random.key(0))),
    lambda data: [fdata.shard(data, 1, 2)]], ids=["batches", "shuffled", "loader", "split",
                                                  "shard"])
def test_numpy_leaves_keep_their_dtype(name, make_batches):
    # float64 used to come back float32; other byte orders and negative
    # strides used to be MLX errors.
    values = (np.arange(5) % 2).astype(name) if name != "float64" else np.array(
        [1 / 3, 1e-300, -2.5, 1e300, np.nan])
    data = {"x": values, "reversed": values[::-1],
            "swapped": values.astype(values.dtype.newbyteorder("S")),
            "strided": np.stack([values] * 4, axis=1)[:, ::2]}
    expected = {k: np.ascontiguousarray(v) for k, v in data.items()}
    data["y"] = np.arange(5)  # the example ids, to check the values
    for batch in make_batches(data):
        rows = np.array(batch["y"])
        for key, want in expected.items():
            assert batch[key].dtype == ft.dtypes.DTYPES_BY_NAME[name], key
            np.testing.assert_array_equal(np.array(batch[key]), want[rows], err_msg=key)


@pytest.mark.parametrize("name", ["complex128", "<U3", "object", "datetime64[s]", "f4,i4"])
def test_numpy_dtypes_mlx_lacks_are_refused(name):
    data = {"x": mx.zeros((4, 2)), "extra": [np.zeros(4, np.dtype(name))]}
    for call, fname in [(lambda: fdata.batches(data, 2), "batches"),
                        (lambda: fdata.DataLoader(data, 2), "DataLoader"),
                        (lambda: fdata.split(data, [2, 2], key=ft.random.key(0)), "split"),
                        (lambda: fdata.shard(data, 0, 2), "shard")]:
        with pytest.raises(TypeError) as info:
            call()
        assert str(info.value).startswith(f"{fname}: data['extra'][0] is a NumPy array of "
                                          f"dtype {np.dtype(name)}, which MLX cannot hold")


def test_batches_checks_when_called():
    # Errors come from the call, before any batch is drawn.
    with pytest.raises(ValueError, match=r"data\['x'\]: 10, data\['y'\]: 9"):
        fdata.batches({"x": mx.zeros((10, 2)), "y": mx.zeros(9)}, 2)
    with pytest.raises(ValueError, match=r"data\[0\]: 4, data\[1\]\[0\]: 4, data\[1\]\[1\]: 5"):
        fdata.batches((mx.zeros(4), (mx.zeros(4), mx.zeros(5))), 2)
    with pytest.raises(ValueError, match="batch_size must be a positive int, got 0"):
        fdata.batches(make(), 0)
    with pytest.raises(TypeError, match="batch_size must be a positive int"):
        fdata.batches(make(), 2.0)
    with pytest.raises(ValueError, match="no arrays"):
        fdata.batches({}, 2)
    with pytest.raises(ValueError, match="empty"):
        fdata.batches(mx.zeros((0, 3)), 2)
    with pytest.raises(ValueError, match=r"data\['s'\] is a scalar"):
        fdata.batches({"s": mx.array(1.0), "y": mx.zeros(3)}, 2)
    with pytest.raises(TypeError, match=r"data\['n'\] must be an mx.array or a NumPy array"):
        fdata.batches({"n": 3, "y": mx.zeros(3)}, 2)
    with pytest.raises(TypeError, match="batches: key must be"):
        fdata.batches(make(), 2, key=0)


def test_loader_epochs_differ_and_repeat():
    loader = fdata.DataLoader(make(20), 6, shuffle=True, key=ft.random.key(0))
    assert len(loader) == 4 and loader.num_examples == 20
    epochs = [ids(loader.epoch(e)) for e in range(4)]
    for order in epochs:
        assert sorted(order) == list(range(20))
    assert len({tuple(order) for order in epochs}) == 4
    assert epochs[2] == ids(loader.epoch(2))  # deterministic, whatever ran before
    again = fdata.DataLoader(make(20), 6, shuffle=True, key=ft.random.key(0))
    assert ids(again.epoch(3)) == epochs[3]
    # Epoch e is batches() with the key fold_in(key, e).
    assert epochs[1] == ids(fdata.batches(make(20), 6, key=ft.random.fold_in(ft.random.key(0), 1)))
    for b in loader.epoch(0):
        check_aligned(b)


def test_loader_iteration_runs_successive_epochs():
    loader = fdata.DataLoader(make(20), 6, shuffle=True, key=ft.random.key(5))
    seen = [ids(loader) for _ in range(3)]
    assert seen == [ids(loader.epoch(e)) for e in range(3)]
    assert loader.next_epoch == 3
    loader.next_epoch = 1  # resume
    assert ids(loader) == seen[1]
    ids(loader.epoch(7))  # epoch() leaves the count alone
    assert loader.next_epoch == 2


def test_loader_unshuffled_and_drop_last():
    loader = fdata.DataLoader(make(10), 4)
    assert len(loader) == 3
    assert [b["y"].tolist() for b in loader] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert ids(loader.epoch(5)) == list(range(10))
    dropped = fdata.DataLoader(make(10), 4, drop_last=True, shuffle=True, key=ft.random.key(0))
    assert len(dropped) == 2
    for e in range(3):
        assert [b["y"].shape for b in dropped.epoch(e)] == [(4,), (4,)]
    assert "batches=2" in repr(dropped)


def test_loader_errors():
    with pytest.raises(ValueError, match="shuffle=True needs a key"):
        fdata.DataLoader(make(), 2, shuffle=True)
    with pytest.raises(TypeError, match="DataLoader: key must be"):
        fdata.DataLoader(make(), 2, shuffle=True, key=3)
    with pytest.raises(ValueError, match="DataLoader: batch_size"):
        fdata.DataLoader(make(), -1)
    with pytest.raises(ValueError, match="DataLoader: .*leading"):
        fdata.DataLoader((mx.zeros(3), mx.zeros(4)), 2)
    with pytest.raises(ValueError, match="epoch must be a non-negative int"):
        fdata.DataLoader(make(), 2).epoch(-1)


@pytest.mark.parametrize("sizes,expected", [
    ([0.8, 0.2], [8, 2]), ([7, 3], [7, 3]), ([0.5, 0.25, 0.25], [6, 2, 2]),
    ([1 / 3] * 3, [4, 3, 3]), ([10, 0], [10, 0]), ([1.0], [10]),
])
def test_split_sizes_and_disjoint(sizes, expected):
    parts = fdata.split(make(10), sizes, key=ft.random.key(0))
    assert [p["y"].shape[0] for p in parts] == expected
    assert sorted(i for p in parts for i in p["y"].tolist()) == list(range(10))
    for p in parts:
        check_aligned(p)


def test_split_is_random_and_reproducible():
    a = fdata.split(make(20), [0.5, 0.5], key=ft.random.key(0))[0]["y"].tolist()
    assert a == fdata.split(make(20), [0.5, 0.5], key=ft.random.key(0))[0]["y"].tolist()
    assert a != fdata.split(make(20), [0.5, 0.5], key=ft.random.key(1))[0]["y"].tolist()
    assert sorted(a) != list(range(10))
    train, test = fdata.split((np.arange(6.0), np.arange(6)), [4, 2], key=ft.random.key(2))
    assert type(train[0]) is mx.array and train[0].tolist() == train[1].tolist()


def test_split_errors():
    key = ft.random.key(0)
    with pytest.raises(ValueError, match="sum to the number of examples, 10"):
        fdata.split(make(10), [5, 4], key=key)
    with pytest.raises(ValueError, match="sum to 1"):
        fdata.split(make(10), [0.5, 0.4], key=key)
    with pytest.raises(ValueError, match=r"lie in \[0, 1\]"):
        fdata.split(make(10), [1.5, -0.5], key=key)
    with pytest.raises(TypeError, match="non-empty sequence"):
        fdata.split(make(10), 0.8, key=key)
    with pytest.raises(TypeError, match="split: key must be"):
        fdata.split(make(10), [5, 5], key=None)


@pytest.mark.parametrize("n,count", [(10, 3), (10, 5), (7, 1), (3, 4), (12, 4)])
def test_shard_padded_covers_everything(n, count):
    shards = [fdata.shard(make(n), i, count) for i in range(count)]
    per = -(-n // count)
    assert all(s["y"].shape[0] == per for s in shards)
    got = [i for s in shards for i in s["y"].tolist()]
    assert set(got) == set(range(n)) and len(got) == per * count
    assert shards[0]["y"].tolist()[:2] == list(range(0, n, count))[:2]  # strided
    for s in shards:
        check_aligned(s)


@pytest.mark.parametrize("n,count", [(10, 3), (12, 4), (5, 5)])
def test_shard_drop_last_is_disjoint(n, count):
    shards = [fdata.shard(make(n), i, count, drop_last=True)["y"].tolist() for i in range(count)]
    assert all(len(s) == n // count for s in shards)
    got = [i for s in shards for i in s]
    assert sorted(got) == list(range(n // count * count))


def test_shard_matches_distributed_sampler():
    # torch.utils.data.DistributedSampler(range(10), num_replicas=4, rank=r, shuffle=False)
    expected = [[0, 4, 8], [1, 5, 9], [2, 6, 0], [3, 7, 1]]
    assert [fdata.shard(mx.arange(10), r, 4).tolist() for r in range(4)] == expected
    expected_drop = [[0, 4], [1, 5], [2, 6], [3, 7]]
    assert [fdata.shard(mx.arange(10), r, 4, drop_last=True).tolist()
            for r in range(4)] == expected_drop


def test_shard_errors():
    with pytest.raises(ValueError, match=r"index must be an int in \[0, 3\)"):
        fdata.shard(make(), 3, 3)
    with pytest.raises(ValueError, match="count must be a positive int"):
        fdata.shard(make(), 0, 0)
    with pytest.raises(ValueError, match="would all be empty"):
        fdata.shard(make(3), 0, 4, drop_last=True)
