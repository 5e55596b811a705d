"""ftorch.save / ftorch.load: any pytree round-trips (structure, every dtype,
Python scalars, values); loading against ``like`` lists every mismatch; writes
are atomic (a killed writer or a failed save leaves the previous file, and no
temporary one); truncated, corrupt and hostile files are clear errors that
import nothing, checked in a child process so that a crash would show."""

import collections
import enum
import json
import math
import os
import pathlib
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


@ft.serialization.register_checkpoint_type
class Pair(NamedTuple):
    first: object
    second: object


class Unregistered(NamedTuple):
    a: object


@ft.tree.dataclass
class Box:
    inner: object


def assert_same(a, b):
    la, ta = ft.tree.flatten(a)
    lb, tb = ft.tree.flatten(b)
    assert ta == tb
    for x, y in zip(la, lb):
        if not isinstance(x, mx.array):  # a Python scalar
            assert type(x) is type(y) and x == y
            continue
        assert x.dtype == y.dtype and x.shape == y.shape
        np.testing.assert_array_equal(np.array(x.astype(mx.float32) if x.dtype == mx.bfloat16
                                               else x),
                                      np.array(y.astype(mx.float32) if y.dtype == mx.bfloat16
                                               else y))


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
        "python": [1, 2.5, True, 1j],
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


# ---------------------------------------------------------------------------
# Dtypes: every dtype MLX has, from MLX and from NumPy; Python scalars
# ---------------------------------------------------------------------------

_UINT = {1: mx.uint8, 2: mx.uint16, 4: mx.uint32, 8: mx.uint64}


def _bits(x):
    """An array's dtype, shape and exact bytes (NaN payloads, -0.0 included)."""
    raw = x if x.dtype == mx.bool_ else mx.view(x, _UINT[x.dtype.size], stream=mx.cpu)
    return str(x.dtype), x.shape, np.array(raw).tobytes()


def _extremes(name):
    """NumPy values of dtype ``name`` that show a narrowed dtype or a lost bit."""
    dtype = np.dtype(name)
    if dtype.kind == "b":
        return np.array([True, False, True, True])
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return np.array([info.min, info.max, 0, 1, info.max - 1, info.min + 1], dtype)
    real = np.float32 if dtype.kind == "c" else dtype
    info = np.finfo(real)
    values = np.array([info.max, -info.max, info.tiny, info.smallest_subnormal, np.nan,
                       np.inf, -0.0, 1 / 3], real)
    if dtype.kind != "c":
        return values
    out = np.empty(len(values), dtype)
    out.real, out.imag = values, values[::-1]
    return out


def _mlx_extremes(dtype):
    if dtype == mx.bfloat16:  # no NumPy bfloat16 without ml_dtypes
        return mx.array([3.0e38, -1 / 3, 1e-40, np.nan, np.inf, -0.0]).astype(mx.bfloat16)
    return mx.array(_extremes(str(dtype).split(".")[-1]), dtype=dtype)


@pytest.mark.parametrize("dtype", list(ft.dtypes.DTYPES_BY_NAME.values()),
                         ids=list(ft.dtypes.DTYPES_BY_NAME))
def test_every_mlx_dtype_round_trips_exactly(tmp_path, dtype):
    x = _mlx_extremes(dtype)
    assert x.dtype == dtype
    tree = {"x": x, "scalar": x[1], "empty": x[:0], "matrix": mx.stack([x, x[::-1]])}
    ft.save(tmp_path / "x", tree)
    for back in (ft.load(tmp_path / "x"), ft.load(tmp_path / "x", like=tree)):
        assert {k: _bits(v) for k, v in back.items()} == {k: _bits(v) for k, v in tree.items()}


@pytest.mark.parametrize("name", [n for n in ft.dtypes.DTYPES_BY_NAME if n != "bfloat16"])
def test_numpy_leaves_keep_their_dtype(tmp_path, name):
    # float64 used to come back float32; other byte orders and negative
    # strides used to be MLX errors.
    values = _extremes(name)
    swapped = values.astype(values.dtype.newbyteorder("S"))
    tree = {"x": values, "numpy_scalar": values[1], "zero_d": np.asarray(values[0]),
            "reversed": values[::-1], "swapped": swapped,
            "strided": np.stack([values, values])[:, ::2]}
    ft.save(tmp_path / "x", tree)
    back = ft.load(tmp_path / "x")
    for key, original in tree.items():
        original = np.asarray(original)
        assert back[key].dtype == ft.dtypes.DTYPES_BY_NAME[name], key
        assert back[key].shape == original.shape, key
        np.testing.assert_array_equal(np.array(back[key]), original, err_msg=key)


def test_numpy_bfloat16_round_trips(tmp_path):
    import ml_dtypes
    values = np.array([3.0e38, -1 / 3, 1e-40, np.nan, -0.0], ml_dtypes.bfloat16)
    ft.save(tmp_path / "x", {"x": values[::-1]})
    back = ft.load(tmp_path / "x")["x"]
    assert back.dtype == mx.bfloat16
    assert np.array(mx.view(back, mx.uint16)).tobytes() == values[::-1].view(np.uint16).tobytes()


NUMPY_DTYPES_MLX_LACKS = {
    "complex128": "astype(np.complex64)", "<U3": "bool, int, float or complex64",
    "S3": "bool, int, float", "object": "bool, int, float", "datetime64[s]": "bool, int",
    "timedelta64[s]": "bool, int", "V4": "bool, int", "f4,i4": "bool, int"}
if np.dtype(np.longdouble).itemsize > 8:  # float64 itself where long double is
    NUMPY_DTYPES_MLX_LACKS["longdouble"] = "astype(np.float64)"


@pytest.mark.parametrize("name", NUMPY_DTYPES_MLX_LACKS)
def test_numpy_dtypes_mlx_lacks_are_refused(tmp_path, name):
    x = np.zeros(2, np.dtype(name))
    with pytest.raises(TypeError) as info:
        ft.save(tmp_path / "t", {"w": mx.ones(1), "x": [None, x]})
    message = str(info.value)
    assert message.startswith("save: tree['x'][1] is a NumPy array of dtype"), message
    assert "which MLX cannot hold" in message and NUMPY_DTYPES_MLX_LACKS[name] in message
    assert os.listdir(tmp_path) == []


PYTHON_SCALARS = [True, False, 0, -1, 2**63 - 1, -2**63, 0.1, 1 / 3, -0.0, 5e-324,
                  1.7976931348623157e308, float("inf"), 1 + 2j, complex(1e-300, -1 / 3)]


def test_python_scalars_round_trip_exactly(tmp_path):
    tree = {"scalars": PYTHON_SCALARS, "nan": float("nan"), "step": 12, "arrays": mx.ones(2)}
    ft.save(tmp_path / "t", tree)
    for back in (ft.load(tmp_path / "t"), ft.load(tmp_path / "t", like=tree)):
        assert [type(v) for v in back["scalars"]] == [type(v) for v in PYTHON_SCALARS]
        assert [repr(v) for v in back["scalars"]] == [repr(v) for v in PYTHON_SCALARS]
        assert back["step"] == 12 and type(back["step"]) is int
        assert math.isnan(back["nan"]) and type(back["nan"]) is float
        assert math.copysign(1, back["scalars"][8]) == -1.0  # -0.0 kept


def test_python_scalars_that_cannot_be_stored_are_refused(tmp_path):
    with pytest.raises(OverflowError, match=r"save: the int at tree\['n'\] .* int64"):
        ft.save(tmp_path / "t", {"n": 2**63})
    with pytest.raises(TypeError, match=r"save: the leaf at tree\['c'\] is a Color"):
        ft.save(tmp_path / "t", {"c": enum.IntEnum("Color", "RED")(1)})
    assert os.listdir(tmp_path) == []


def test_like_tells_python_scalars_from_arrays(tmp_path):
    ft.save(tmp_path / "t", {"step": 3, "lr": mx.array(0.1)})
    with pytest.raises(ValueError) as info:
        ft.load(tmp_path / "t", like={"step": mx.array(3), "lr": 0.1})
    assert "tree['lr']: dtype float32 in the file, Python float in like" in str(info.value)
    assert "tree['step']: dtype Python int in the file, int32 in like" in str(info.value)


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
    with pytest.raises(ValueError, match="registered pytree node of class .*Box.*pass like="):
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
    with pytest.raises(TypeError, match=r"tree\['a'\]\[0\] is a str"):
        ft.save(tmp_path / "t", {"a": ["1.5"]})
    with pytest.raises(TypeError, match=r"tree\['a'\]\[1\] is a object"):
        ft.save(tmp_path / "t", {"a": [1.5, object()]})
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


@pytest.mark.parametrize("step", ["write", "fsync", "rename"])
@pytest.mark.parametrize("error", [OSError(28, "No space left on device"), KeyboardInterrupt()],
                         ids=["OSError", "KeyboardInterrupt"])
def test_a_failed_save_leaves_the_previous_file_and_no_temporary(tmp_path, monkeypatch, step,
                                                                   error):
    path = tmp_path / "ckpt"
    ft.save(path, {"w": mx.ones(3)})

    def fail(original):
        def failing(*args, **kwargs):
            if step == "write":  # a partial file, then the error
                pathlib.Path(args[0]).write_bytes(b"partial")
            raise error
        return failing

    target = {"write": (mx, "save_safetensors"), "fsync": (os, "fsync"),
              "rename": (os, "replace")}[step]
    monkeypatch.setattr(*target, fail(getattr(*target)))
    with pytest.raises(type(error)):
        ft.save(path, {"w": mx.zeros(5)})
    monkeypatch.undo()
    assert os.listdir(tmp_path) == ["ckpt"]
    assert ft.load(path)["w"].tolist() == [1.0, 1.0, 1.0]


@pytest.mark.skipif(not hasattr(signal, "SIGXFSZ"), reason="no file size limits here")
def test_a_full_disk_leaves_the_previous_file_and_no_temporary(tmp_path):
    # A file size limit stands for a full disk: MLX's writer fails mid-file.
    path = tmp_path / "ckpt"
    ft.save(path, {"w": mx.ones(3)})
    out = run_child(f"""
        import os, resource, signal
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a failed write, not a killed process
        resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, resource.RLIM_INFINITY))
        try:
            ft.save({str(path)!r}, {{"w": mx.ones(10**6)}})
        except Exception as e:
            print(type(e).__name__)
    """)
    assert out.strip() in ("RuntimeError", "OSError")
    assert os.listdir(tmp_path) == ["ckpt"]
    assert ft.load(path)["w"].tolist() == [1.0, 1.0, 1.0]


def test_a_lazy_array_too_large_to_compute_is_a_memory_error(tmp_path):
    # Saving it used to crash the process (MLX evaluating an allocation that
    # cannot succeed) and leave a temporary file beside the checkpoint.
    path = tmp_path / "ckpt"
    ft.save(path, {"w": mx.ones(3)})
    out = run_child(f"""
        import os
        for big in (mx.zeros((10**6, 10**6)), mx.ones((10**6, 10**6), mx.int8) + 1,
                    mx.broadcast_to(mx.array(1.0), (10**7, 10**7))):
            try:
                ft.save({str(path)!r}, {{"w": mx.ones(3), "opt": [big]}})
            except MemoryError as e:
                print(str(e).startswith("save: tree['opt'][0]: an array of shape"))
        print(os.listdir({str(tmp_path)!r}), ft.load({str(path)!r})["w"].tolist())
    """)
    assert out.split("\n")[:4] == ["True", "True", "True", "['ckpt'] [1.0, 1.0, 1.0]"]


def test_trees_nested_too_deeply_are_refused(tmp_path):
    deep = mx.ones(1)
    for _ in range(200):
        deep = [deep]
    ft.save(tmp_path / "t", deep)
    assert_same(ft.load(tmp_path / "t"), deep)
    cyclic = [mx.ones(1)]
    cyclic.append(cyclic)
    with pytest.raises(ValueError, match="nests deeper than 256 levels.*cyclic"):
        ft.save(tmp_path / "c", cyclic)
    assert os.listdir(tmp_path) == ["t"]


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


# ---------------------------------------------------------------------------
# A checkpoint is data: namedtuples come back only as allowed classes, and a
# file from anywhere gives a tree or a ValueError, never an import or a crash
# ---------------------------------------------------------------------------

def _parts(path):
    """A checkpoint's header (JSON) and data section."""
    data = pathlib.Path(path).read_bytes()
    n = int.from_bytes(data[:8], "little")
    return json.loads(data[8:8 + n]), data[8 + n:]


def _write(path, header, data):
    raw = header if isinstance(header, bytes) else json.dumps(header).encode()
    pathlib.Path(path).write_bytes(len(raw).to_bytes(8, "little") + raw + data)


def _with_tree(header, tree_json):
    """``header`` with its structure metadata replaced (JSON text or a value)."""
    text = tree_json if isinstance(tree_json, str) else json.dumps(tree_json)
    return {**header, "__metadata__": {**header["__metadata__"], "ftorch.tree": text}}


MARKER_MODULE = """
import pathlib
pathlib.Path(__file__).with_name("imported").touch()

class T(tuple):
    _fields = ("a",)
    def __new__(cls, *args):
        pathlib.Path(__file__).with_name("called").touch()
        return tuple.__new__(cls, args)
"""

HOSTILE_CLASSES = ["marker_module:T", "os:system", "builtins:eval", "subprocess:Popen",
                   "ftorch.optim._base:GradientTransformation", "ftorch.optim:os.system",
                   "ftorch.optim._base:Any", "test_serialization:Pair", ":", "os", ""]


def test_namedtuples_come_back_only_as_allowed_classes(tmp_path):
    ft.save(tmp_path / "t", {"u": Unregistered(mx.ones(2)), "p": Pair(mx.zeros(1), 3)})
    with pytest.raises(ValueError) as info:
        ft.load(tmp_path / "t")
    message = str(info.value)
    assert "tree['u'] was a namedtuple of class 'test_serialization:Unregistered'" in message
    assert "pass like=" in message and "register_checkpoint_type(Unregistered)" in message
    like = {"u": Unregistered(mx.ones(2)), "p": Pair(mx.zeros(1), 3)}
    back = ft.load(tmp_path / "t", like=like)
    assert type(back["u"]) is Unregistered and type(back["p"]) is Pair
    assert_same(back, like)
    # A registered class with other fields than the file's is refused too.
    ft.save(tmp_path / "p", Pair(1, 2))
    header, data = _parts(tmp_path / "p")
    spec = json.loads(header["__metadata__"]["ftorch.tree"])
    spec["fields"].append(None)
    _write(tmp_path / "p3", _with_tree(header, spec), data)
    with pytest.raises(ValueError, match="3 fields in the file, but test_serialization:Pair "
                                         "has 2 .first, second."):
        ft.load(tmp_path / "p3")


def test_register_checkpoint_type_takes_namedtuple_classes_only():
    for not_namedtuple in (Box, tuple, Pair(1, 2), "test_serialization:Pair", dict):
        with pytest.raises(TypeError, match="register_checkpoint_type: cls must be a "
                                            "namedtuple class"):
            ft.serialization.register_checkpoint_type(not_namedtuple)


def test_optimizer_states_load_without_like_in_a_fresh_process(tmp_path):
    opt = optim.chain(optim.masked(optim.adamw(0.1), {"w": True, "b": False}),
                      optim.apply_if_finite(optim.sgd(0.1, momentum=0.9), 3))
    params = {"w": mx.ones(2), "b": mx.zeros(1)}
    state = opt.init(params)
    ft.save(tmp_path / "opt", state)
    out = run_child(f"""
        import sys
        state = ft.load({str(tmp_path / "opt")!r})
        print(sorted({{type(node).__name__ for node in ft.tree.leaves(
            state, is_leaf=lambda x: hasattr(x, "_fields"))}}))
    """)
    assert out.strip() == "['ApplyIfFiniteState', 'MaskedState']"
    assert_same(ft.load(tmp_path / "opt"), state)
    assert_same(ft.load(tmp_path / "opt", like=state), state)


def test_load_imports_and_calls_nothing_a_file_names(tmp_path):
    (tmp_path / "marker_module.py").write_text(MARKER_MODULE)
    ft.save(tmp_path / "good", {"u": Unregistered(mx.ones(2)), "b": Box(mx.ones(1))})
    header, data = _parts(tmp_path / "good")
    spec = json.loads(header["__metadata__"]["ftorch.tree"])
    names = []
    for i, cls in enumerate(HOSTILE_CLASSES):
        for kind in ("u", "b"):
            edited = json.loads(json.dumps(spec))
            node = dict(edited["dict"])[kind]
            node["namedtuple" if kind == "u" else "node"] = cls
            names.append(f"{kind}{i}")
            _write(tmp_path / names[-1], _with_tree(header, edited), data)
    out = run_child(f"""
        import os, sys
        import ftorch.optim
        sys.path.insert(0, {str(tmp_path)!r})
        before = set(sys.modules)
        for name in {names!r}:
            try:
                ft.load(os.path.join({str(tmp_path)!r}, name))
                print(name, "loaded")
            except ValueError as e:
                print(name, "ValueError", "pass like=" in str(e))
        print("new modules:", sorted(set(sys.modules) - before))
    """)
    lines = out.strip().splitlines()
    assert lines[:-1] == [f"{name} ValueError True" for name in names]
    assert lines[-1] == "new modules: []"
    assert not (tmp_path / "imported").exists() and not (tmp_path / "called").exists()


def _hostile_files(directory):
    """Files that are not checkpoints ``save`` writes, each ``load`` must
    refuse with a ValueError: damaged headers, lying sizes and offsets,
    shapes MLX would wrap, wrong JSON types, structures naming code."""
    ft.save(directory / "good", {"w": mx.arange(1000, dtype=mx.float32),
                                 "b": {"c": mx.ones((3, 3)), "e": mx.zeros((0,))},
                                 "p": Pair(mx.array(1), 2.5)})
    header, data = _parts(directory / "good")
    spec = json.loads(header["__metadata__"]["ftorch.tree"])
    w, e = header["w"], header["b.e"]
    files = {}

    def entry(name, **changes):
        return {**header, name: {**header[name], **changes}}

    # The safetensors header.
    for i, value in enumerate([[10**12], [2**32 + 1000], [-1000], [1000.0], [True] * 1000,
                               "1000", None, {"a": 1000}, [[1000]]]):
        files[f"w_shape_{i}"] = entry("w", shape=value)
    for i, value in enumerate([[2**31, 0], [0, 2**40], [2**64, 0], [-1, 0]]):
        files[f"e_shape_{i}"] = entry("b.e", shape=value)
    begin, end = w["data_offsets"]
    for i, value in enumerate([[begin - 4, end - 4], [end, begin], [begin, end + 4],
                               [begin, end, end], [begin], [float(begin), end],
                               [str(begin), end], None, [begin + 2**64, end + 2**64],
                               [False, end]]):
        files[f"w_offsets_{i}"] = entry("w", data_offsets=value)
    files["overlap"] = entry("b.c", data_offsets=[begin, begin + 36])
    files["hole"] = {**header, "extra": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]}}
    files["empty_inside"] = entry("b.e", data_offsets=[begin + 4, begin + 4])
    for i, value in enumerate(["Q7", "F64", 5, None, ["F32"], "f32", "BF16"]):
        files[f"w_dtype_{i}"] = entry("w", dtype=value)
    for i, value in enumerate(["F32", [1, 2], None, 7]):
        files[f"w_entry_{i}"] = {**header, "w": value}
    files["w_f64"] = entry("w", dtype="F64", shape=[500])  # MLX reads no F64
    plain = {k: v for k, v in header.items() if k != "__metadata__"}
    files["plain_wrapping_shape"] = {**plain, "b.e": {**e, "shape": [2**31, 0]}}
    files["plain_surrogate"] = json.dumps(plain).replace('"w"', '"\\ud800"').encode()
    files["w_missing_shape"] = {**header, "w": {"dtype": "F32", "data_offsets": w["data_offsets"]}}
    for i, value in enumerate([[1, 2], "text", 3, None, True]):
        files[f"header_{i}"] = value
    for i, value in enumerate([[1], "text", {"a": 1}, {"ftorch.tree": None}]):
        files[f"metadata_{i}"] = {**header, "__metadata__": value}
    raw = json.dumps(header)
    files["repeated_key"] = (raw[:-1] + ', "w": ' + json.dumps(w) + "}").encode()
    files["nan"] = raw.replace(json.dumps(e["shape"]), "[NaN]").encode()
    files["non_utf8"] = raw.encode().replace(b'"w"', b'"\xff\xfe"')
    files["surrogate"] = raw.replace('"w"', '"\\ud800"').encode()
    files["deep_header"] = b'{"__metadata__":' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    files["cut_header"] = raw.encode()[:len(raw) // 2]
    # The tree structure in the metadata.
    nodes = dict(spec["dict"])

    def tree(**changes):
        return _with_tree(header, {"dict": [[k, changes.get(k, v)] for k, v in nodes.items()]})

    for i, value in enumerate(["{not json", "\ud800", "[" * 100_000 + "]" * 100_000, "NaN"]):
        files[f"tree_text_{i}"] = _with_tree(header, value)
    for i, value in enumerate([None, [], "w", 3, {"dict": {"w": 1}}, {"set": []},
                               {"list": [], "tuple": []}, {"dict": [], "evil": 1}]):
        files[f"tree_top_{i}"] = _with_tree(header, value)
    for i, value in enumerate([
            {"array": "w", "dtype": "system"}, {"array": "w", "dtype": "__class__"},
            {"array": "w", "dtype": "float64"}, {"array": "w", "python": "int"},
            {"array": "w", "python": "eval"}, {"array": 5}, {"array": ["w"]}, {"array": "nope"},
            {"array": "b.c"}, {"list": {"a": 1}}, {"tuple": "ab"},
            {"namedtuple": ["os", "system"], "fields": []},
            {"namedtuple": "os:system", "fields": 3},
            {"node": "os:system", "children": [{"array": "w"}]},
            {"namedtuple": "os:system", "fields": [{"array": "w"}]},
            {"namedtuple": "test_serialization:Pair", "fields": [{"array": "w"}]}]):
        files[f"tree_w_{i}"] = tree(w=value)
    b_items = nodes["b"]["dict"]
    for i, items in enumerate([[["c"]], [[True, b_items[0][1]]], [[1.5, b_items[0][1]]],
                               [[None, b_items[0][1]]], b_items + b_items[:1],
                               [["c", b_items[0][1]], ["c", b_items[1][1]]], "items"]):
        files[f"tree_b_{i}"] = tree(b={"dict": items})
    files["tree_ordered"] = tree(b={"dict": b_items, "ordered": "yes"})
    deep = {"array": "w"}
    for _ in range(300):
        deep = {"list": [deep]}
    files["tree_deep"] = tree(w=deep)
    for name, content in files.items():
        _write(directory / name, content, data)
    return sorted(files)


def _mutants(directory, count):
    """``count`` random truncations and byte flips of a good checkpoint:
    each must load or be a ValueError (the tensor bytes have no checksum, so
    a flip there, or in a name or a key, may load)."""
    good = (directory / "good").read_bytes()
    header_end = 8 + int.from_bytes(good[:8], "little")
    rng = np.random.default_rng(0)
    names = []
    for i in range(count):
        data = bytearray(good)
        if i % 3 == 0:
            data = data[:rng.integers(0, len(good))]
        else:
            for _ in range(rng.integers(1, 4)):
                at = rng.integers(0, header_end if rng.random() < 0.8 else len(good))
                data[at] ^= 1 << rng.integers(0, 8)
        names.append(f"mutant_{i}")
        (directory / names[-1]).write_bytes(bytes(data))
    return names


def test_hostile_and_damaged_files_are_value_errors(tmp_path):
    hostile = _hostile_files(tmp_path)
    mutants = _mutants(tmp_path, 25 * int(os.environ.get("FTORCH_EXAMPLES", "8")))
    out = run_child(f"""
        import os, sys
        import ftorch.optim
        sys.path.insert(0, os.path.dirname({__file__!r}))
        before = set(sys.modules)
        for name in {hostile + mutants!r}:
            try:
                ft.load(os.path.join({str(tmp_path)!r}, name))
                print(name, "loaded")
            except ValueError as e:
                print(name, "ValueError" if str(e).startswith("load: ") else repr(e))
            except Exception as e:
                print(name, repr(e).replace(chr(10), " "))
        print("new modules:", sorted(set(sys.modules) - before))
    """)
    lines = out.strip().splitlines()
    outcomes = dict(line.split(" ", 1) for line in lines[:-1])
    assert {n: outcomes[n] for n in hostile} == dict.fromkeys(hostile, "ValueError")
    assert {n: outcomes[n] for n in mutants if outcomes[n] not in ("ValueError", "loaded")} == {}
    assert lines[-1] == "new modules: []"


def test_many_repeated_names_are_refused_quickly(tmp_path):
    # Finding what is repeated takes linear time, not quadratic.
    ft.save(tmp_path / "t", {"w": mx.ones(1)})
    header, data = _parts(tmp_path / "t")
    many = {"list": [{"array": "w"}] * 80_000}
    _write(tmp_path / "names", _with_tree(header, many), data)
    keys = ", ".join(f'"k{i}": 0' for i in range(80_000))
    _write(tmp_path / "keys", f'{{{keys}, "k0": 1}}'.encode(), data)
    start = time.perf_counter()
    for name in ("names", "keys"):
        with pytest.raises(ValueError, match="not once in both|'k0' is repeated"):
            ft.load(tmp_path / name)
    assert time.perf_counter() - start < 5  # quadratic: over 10 s
