"""ftorch.save / ftorch.load: any pytree round-trips (structure, dtypes,
values); loading against ``like`` lists every mismatch; writes are atomic
(a killed writer leaves the previous file); truncated and corrupt files are
clear errors, checked in a child process so that a crash would show."""

import collections
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from typing import NamedTuple

import mlx.core as mx
import numpy as np
import pytest
from child import run_child

import ftorch as ft
import ftorch.optim as optim


class Pair(NamedTuple):
    first: object
    second: object


@ft.tree.dataclass
class Box:
    inner: object


def assert_same(a, b):
    la, ta = ft.tree.flatten(a)
    lb, tb = ft.tree.flatten(b)
    assert ta == tb
    for x, y in zip(la, lb):
        assert x.dtype == y.dtype and x.shape == y.shape
        np.testing.assert_array_equal(np.array(x.astype(mx.float32) if x.dtype == mx.bfloat16
                                               else x),
                                      np.array(y.astype(mx.float32) if y.dtype == mx.bfloat16
                                               else y))


DTYPES = [mx.bool_, mx.uint8, mx.int8, mx.int16, mx.uint16, mx.int32, mx.uint32, mx.int64,
          mx.uint64, mx.float16, mx.bfloat16, mx.float32, mx.complex64]


def test_round_trip_of_every_node_kind(tmp_path):
    tree = {
        "params": {"layers": [{"weight": mx.ones((2, 3)), "bias": mx.zeros(2)}, {}]},
        "tuple": (mx.array(1), None, ()),
        "pair": Pair(mx.arange(3), [mx.array([True, False])]),
        "ordered": collections.OrderedDict(b=mx.array(2.0), a=mx.array(1.0)),
        7: mx.array([1.5]),
        "none": None,
        "empty": {},
        "scalar": mx.array(3.0),
    }
    path = tmp_path / "ckpt.safetensors"
    ft.save(path, tree)
    back = ft.load(path)
    assert type(back["pair"]) is Pair and back["tuple"][1:] == (None, ())
    assert list(back) == list(tree)  # key order and int keys kept
    assert back["empty"] == {} and back["none"] is None
    assert back["params"]["layers"][1] == {}
    assert_same(back, tree)
    assert_same(ft.load(path, like=tree), tree)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: str(d).split(".")[-1])
def test_dtypes_round_trip(tmp_path, dtype):
    x = (mx.arange(6).reshape(2, 3) % 2).astype(dtype)
    ft.save(tmp_path / "x", {"x": x})
    back = ft.load(tmp_path / "x")["x"]
    assert back.dtype == dtype
    assert_same(back, x)


def test_float64_round_trips_through_its_bits(tmp_path):
    # MLX's safetensors writer has no float64: ftorch stores the bits.
    x = mx.array(np.array([1 / 3, 1e-300, -2.5]), dtype=mx.float64)
    assert x.dtype == mx.float64
    ft.save(tmp_path / "f64", {"x": x})
    back = ft.load(tmp_path / "f64")["x"]
    assert back.dtype == mx.float64
    assert np.array(back, copy=True).tolist() == np.array(x, copy=True).tolist()


def test_optimizer_state_round_trips_and_training_resumes(tmp_path):
    opt = optim.chain(optim.clip_by_global_norm(1.0), optim.adamw(0.1, weight_decay=0.1))
    params = {"w": mx.array([1.0, -2.0]), "b": mx.array(0.5)}
    state = opt.init(params)

    def step(params, state):
        grads = ft.grad(lambda p: ft.numpy.sum(p["w"] ** 2) + p["b"] ** 2)(params)
        updates, state = opt.update(grads, state, params)
        return optim.apply_updates(params, updates), state

    params, state = step(params, state)
    ft.save(tmp_path / "run", {"params": params, "opt": state})
    restored = ft.load(tmp_path / "run", like={"params": params, "opt": state})
    assert_same(restored, {"params": params, "opt": state})
    a = step(params, state)
    b = step(restored["params"], restored["opt"])
    assert_same(a, b)


def test_registered_nodes_need_like(tmp_path):
    tree = {"box": Box(mx.ones(2))}
    ft.save(tmp_path / "box", tree)
    with pytest.raises(ValueError, match="registered pytree node.*pass like="):
        ft.load(tmp_path / "box")
    back = ft.load(tmp_path / "box", like=tree)
    assert isinstance(back["box"], Box)
    assert_same(back, tree)


def test_shape_dtype_structs_as_like(tmp_path):
    tree = {"w": mx.ones((2, 3)), "n": mx.array(1, mx.int32)}
    ft.save(tmp_path / "t", tree)
    like = {"w": ft.ShapeDtypeStruct((2, 3), mx.float32), "n": ft.ShapeDtypeStruct((), mx.int32)}
    assert_same(ft.load(tmp_path / "t", like=like), tree)


def test_every_mismatch_with_like_is_listed(tmp_path):
    ft.save(tmp_path / "t", {"a": mx.ones((2, 3)), "b": mx.zeros(2, mx.int32),
                             "extra": mx.ones(1)})
    like = {"a": mx.ones((3, 2)), "b": mx.zeros(2, mx.float32), "missing": mx.ones(1)}
    with pytest.raises(ValueError) as info:
        ft.load(tmp_path / "t", like=like)
    message = str(info.value)
    for part in ["tree['a']: shape (2, 3) in the file, (3, 2) in like",
                 "tree['b']: dtype int32 in the file, float32 in like",
                 "tree['extra']: in the file, not in like",
                 "tree['missing']: in like, not in the file"]:
        assert part in message


def test_structure_mismatch_without_leaves_is_an_error(tmp_path):
    ft.save(tmp_path / "t", {"a": mx.ones(1), "b": {}})
    with pytest.raises(ValueError, match="structure differs"):
        ft.load(tmp_path / "t", like={"a": mx.ones(1), "b": None})
    with pytest.raises(ValueError, match="structure differs"):
        ft.load(tmp_path / "t", like={"a": mx.ones(1), "b": []})


def test_plain_safetensors_load_by_name(tmp_path):
    # A file from mx.save_safetensors (or mlx.nn's save_weights) loads into a
    # tree by the dotted names of its leaves.
    path = str(tmp_path / "mlx.safetensors")
    mx.save_safetensors(path, {"layers.0.weight": mx.ones((2, 2)), "layers.1.bias": mx.ones(3)})
    like = {"layers": [{"weight": mx.zeros((2, 2))}, {"bias": mx.zeros(3)}]}
    back = ft.load(path, like=like)
    assert back["layers"][1]["bias"].tolist() == [1.0, 1.0, 1.0]
    assert set(ft.load(path)) == {"layers.0.weight", "layers.1.bias"}
    # ... and ftorch's files are plain safetensors to other readers.
    ft.save(tmp_path / "ft.safetensors", like)
    assert set(mx.load(str(tmp_path / "ft.safetensors"))) == {"layers.0.weight",
                                                              "layers.1.bias"}


def test_bad_trees_are_refused(tmp_path):
    with pytest.raises(TypeError, match=r"tree\['a'\]\[0\] is a float"):
        ft.save(tmp_path / "t", {"a": [1.5]})
    with pytest.raises(TypeError, match="keys must be str or int"):
        ft.save(tmp_path / "t", {(1, 2): mx.ones(1)})
    assert not os.path.exists(tmp_path / "t")
    assert os.listdir(tmp_path) == []  # no temporary file left behind


def test_overwrite_keeps_the_name_and_leaves_no_temporary(tmp_path):
    path = tmp_path / "t"
    ft.save(path, {"a": mx.ones(1)})
    ft.save(path, {"a": mx.zeros(2)})
    assert ft.load(path)["a"].tolist() == [0.0, 0.0]
    assert os.listdir(tmp_path) == ["t"]


def test_a_killed_writer_leaves_the_previous_file(tmp_path):
    path = tmp_path / "ckpt"
    ft.save(path, {"step": mx.array(1), "w": mx.ones(4)})
    # A child writes large checkpoints to the same path in a loop; killed
    # while it writes, it must leave a complete file behind: the old or a new one.
    source = textwrap.dedent(f"""
        import ftorch as ft, mlx.core as mx, sys
        big = {{"step": mx.array(2), "w": mx.ones((32, 1024, 1024))}}
        mx.eval(big)
        print("ready", flush=True)
        while True:
            ft.save({str(path)!r}, big)
    """)
    for attempt in range(3):
        proc = subprocess.Popen([sys.executable, "-c", source], stdout=subprocess.PIPE,
                                text=True)
        try:
            assert proc.stdout.readline().strip() == "ready"
            time.sleep(0.2 + 0.15 * attempt)
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
        back = ft.load(path)
        assert back["step"].item() in (1, 2)
        assert back["w"].shape in ((4,), (32, 1024, 1024))
        leftovers = [f for f in os.listdir(tmp_path) if f.startswith(".ckpt.tmp-")]
        if leftovers:  # the kill came mid-write (not between two writes)
            break
    else:
        raise AssertionError("the writer was never killed mid-write")


# ---------------------------------------------------------------------------
# Truncated and corrupt files: clear errors, never a crash (child processes)
# ---------------------------------------------------------------------------

def _write_corrupt_files(directory):
    """Damaged copies of a good checkpoint, by name."""
    good = directory / "good"
    ft.save(good, {"w": mx.arange(1000, dtype=mx.float32), "b": {"c": mx.ones((3, 3))}})
    data = good.read_bytes()
    n = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + n])
    files = {
        "empty": b"",
        "short": data[:5],
        "truncated_header": data[:8 + n // 2],
        "truncated_data": data[:-100],
        "huge_length": (2 ** 62).to_bytes(8, "little") + data[8:],
        "not_json": data[:8] + b"\xff" * n + data[8 + n:],
        "garbage": bytes(range(256)) * 20,
    }
    bad_offsets = dict(header)
    bad_offsets["w"] = {**header["w"], "data_offsets": [0, 10 ** 9]}
    bad_shape = dict(header)
    bad_shape["w"] = {**header["w"], "shape": [10 ** 6]}
    bad_dtype = dict(header)
    bad_dtype["w"] = {**header["w"], "dtype": "Q7"}
    bad_tree = dict(header)
    bad_tree["__metadata__"] = {**header["__metadata__"], "ftorch.tree": "{not json"}
    for name, h in [("bad_offsets", bad_offsets), ("bad_shape", bad_shape),
                    ("bad_dtype", bad_dtype), ("bad_tree", bad_tree)]:
        raw = json.dumps(h).encode()
        files[name] = len(raw).to_bytes(8, "little") + raw + data[8 + n:]
    for name, content in files.items():
        (directory / name).write_bytes(content)
    return sorted(files)


def test_truncated_and_corrupt_files_are_clear_errors(tmp_path):
    names = _write_corrupt_files(tmp_path)
    out = run_child(f"""
        import os
        for name in {names!r}:
            try:
                ft.load(os.path.join({str(tmp_path)!r}, name))
            except ValueError as e:
                print(name, "ValueError", str(e).splitlines()[0])
            else:
                print(name, "loaded")
    """)
    lines = dict(line.split(" ", 1) for line in out.strip().splitlines())
    assert sorted(lines) == names
    for name in names:
        assert lines[name].startswith("ValueError load: "), (name, lines[name])
        assert "not a valid checkpoint" in lines[name]
