"""Checkpoints of any pytree of arrays: ``save(path, tree)`` and
``load(path, like=None)``.

A checkpoint is one safetensors file written by MLX
(``mx.save_safetensors``). Each array is stored under its readable dotted
path (``params.layers.0.weight``), and the tree's structure (dicts with
their key order, lists, tuples, namedtuples, ``None``, empty containers,
Python scalars) is kept as JSON in the file's metadata, so ``load`` rebuilds
the same tree. Other safetensors readers (``mx.load``, ``safetensors``,
PyTorch) read the arrays by those names.

Every dtype MLX has round-trips, float64 included (stored as its bits,
since safetensors files from MLX have no float64); NumPy leaves keep their
dtype and come back as ``mx.array``; Python ``bool``, ``int`` (int64 range),
``float`` and ``complex`` leaves come back as themselves, exactly.

Writes are atomic: the file is written under a temporary name in the same
directory, flushed to disk, and renamed over ``path``. A save that fails
(a leaf that cannot be saved or would not fit in memory, a full disk)
removes its temporary file and leaves the previous checkpoint intact; a
writer killed mid-write leaves the previous checkpoint too (and perhaps a
``.<name>.tmp-*`` file beside it).

A checkpoint is data, never code. ``load`` reads arrays and a JSON
structure and checks both (header sizes, offsets, dtypes, shapes, the
structure's every node) before MLX reads the file: a truncated, corrupt or
hostile file is a ``ValueError`` naming the file. It imports nothing and
looks no name up in any module: a namedtuple comes back only as a class
passed in ``like=`` or allowed with ``register_checkpoint_type`` (ftorch's
optimizer states are allowed already), a registered pytree node only
through ``like=``. The tensor bytes carry no checksum: a damaged file may
load with different numbers.

>>> import ftorch as ft, mlx.core as mx, os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "ckpt.safetensors")
>>> tree = {"w": mx.ones((2, 3)), "opt": (mx.array(1), None, []), "empty": {}, "step": 7}
>>> ft.save(path, tree)
>>> back = ft.load(path)
>>> back["w"].shape, back["opt"][1:], back["empty"], back["step"]
((2, 3), (None, []), {}, 7)
"""

from __future__ import annotations

import collections
import json
import math
import os
import sys
import tempfile
from typing import Any

import mlx.core as mx
import numpy as np

from ftorch import tree as tree_util
from ftorch.core import ShapeDtypeStruct
from ftorch.dtypes import from_numpy
from ftorch.memory import check_fits
from ftorch.tree import DictKey, GetAttrKey, SequenceKey

__all__ = ["save", "load", "register_checkpoint_type"]

_FORMAT = "ftorch.checkpoint/1"
_TREE_KEY = "ftorch.tree"

# safetensors dtype names and their sizes in bytes (the header check).
_ITEMSIZE = {"BOOL": 1, "U8": 1, "I8": 1, "U16": 2, "I16": 2, "F16": 2, "BF16": 2, "U32": 4,
             "I32": 4, "F32": 4, "U64": 8, "I64": 8, "F64": 8, "C64": 8}
# MLX cannot write float64 to safetensors: such leaves travel as their bits.
_BITS = {mx.float64: mx.uint64}
# Python scalars: how each is stored (its array's safetensors dtype and shape).
_PYTHON = {"bool": ("BOOL", []), "int": ("I64", []), "float": ("U64", []),
           "complex": ("U64", [2])}
_INT64 = (-2**63, 2**63)
# Limits for files from anywhere: safetensors' own header limit, MLX's int32
# dimensions (its reader wraps larger ones silently), and how deep a tree nests.
_MAX_HEADER = 100_000_000
_MAX_DIM = 2**31 - 1
_MAX_DEPTH = 256

# Classes ``load`` rebuilds namedtuples as, by "module:qualname".
_ALLOWED: dict[str, type] = {}


# ---------------------------------------------------------------------------
# Types load may rebuild
# ---------------------------------------------------------------------------

def register_checkpoint_type(cls: type) -> type:
    """Allow ``load`` to rebuild namedtuples of class ``cls`` from a file
    without ``like=``. Usable as a class decorator.

    A checkpoint names its namedtuples' classes as ``"module:qualname"``;
    ``load`` never imports or looks up such a name (a file must not choose
    what code runs), it only finds it among the classes allowed here,
    ftorch's optimizer states included. Any other class name is a
    ``ValueError`` saying how to allow it (as PyTorch's
    ``add_safe_globals`` allows classes for ``torch.load(weights_only=True)``).
    Loading with ``like=`` (a tree of the expected structure) needs no
    registration: ``like`` gives the classes. Registered pytree nodes
    (``ft.tree.dataclass``, ``ft.tree.register_node``) load through ``like=``
    only, since their auxiliary data is not in the file.

    >>> import ftorch as ft, mlx.core as mx, os, tempfile
    >>> from typing import NamedTuple
    >>> @ft.serialization.register_checkpoint_type
    ... class Stats(NamedTuple):
    ...     mean: mx.array
    ...     count: int
    >>> path = os.path.join(tempfile.mkdtemp(), "stats.safetensors")
    >>> ft.save(path, Stats(mx.zeros(3), 10))
    >>> ft.load(path)
    Stats(mean=array([0, 0, 0], dtype=float32), count=10)
    """
    if not _is_namedtuple_class(cls):
        raise TypeError(f"register_checkpoint_type: cls must be a namedtuple class, got "
                        f"{cls!r}; registered pytree nodes load through ft.load(path, like=...)")
    _ALLOWED[_type_name(cls)] = cls
    return cls


def _is_namedtuple_class(cls: Any) -> bool:
    return isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, "_fields")


def _type_name(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def _allowed(name: str) -> type | None:
    """The allowed class named ``name``, or None."""
    if name not in _ALLOWED and name.startswith("ftorch.optim."):
        _allow_optimizer_states()
    return _ALLOWED.get(name)


def _allow_optimizer_states() -> None:
    """Allow ftorch's optimizer states: every namedtuple class of
    ftorch.optim but GradientTransformation (which holds functions)."""
    from ftorch.optim._base import GradientTransformation  # (imports all of ftorch.optim)

    for module_name, module in list(sys.modules.items()):
        if module_name == "ftorch.optim" or module_name.startswith("ftorch.optim."):
            for obj in list(vars(module).values()):
                if (_is_namedtuple_class(obj) and obj.__module__ == module_name
                        and obj is not GradientTransformation):
                    _ALLOWED.setdefault(_type_name(obj), obj)


# ---------------------------------------------------------------------------
# The structure, as JSON
# ---------------------------------------------------------------------------

def _encode(node: Any, path: tuple, arrays: dict[str, mx.array]) -> Any:
    """``node`` as JSON, its arrays added to ``arrays`` under unique dotted names."""
    where = _path_str(path)
    if len(path) > _MAX_DEPTH:
        raise ValueError(f"save: the tree nests deeper than {_MAX_DEPTH} levels (at "
                         f"{where[:200]}...); is it cyclic?")
    if node is None:
        return None
    if isinstance(node, (mx.array, np.ndarray, np.generic)):
        return _encode_array(node, path, arrays)
    if isinstance(node, (bool, int, float, complex)):
        return _encode_scalar(node, path, arrays)
    if isinstance(node, dict):
        items = []
        for k, v in node.items():
            if not isinstance(k, (str, int)) or isinstance(k, bool):
                raise TypeError(f"save: the key {k!r} at {where} is a {type(k).__name__}; "
                                "checkpoint dict keys must be str or int")
            items.append([k, _encode(v, (*path, DictKey(k)), arrays)])
        if isinstance(node, collections.OrderedDict):
            return {"dict": items, "ordered": True}
        return {"dict": items}
    if _is_namedtuple_class(type(node)):
        return {"namedtuple": _type_name(type(node)),
                "fields": [_encode(v, (*path, GetAttrKey(f)), arrays)
                           for f, v in zip(type(node)._fields, node)]}
    if isinstance(node, (tuple, list)):
        kind = "tuple" if isinstance(node, tuple) else "list"
        return {kind: [_encode(v, (*path, SequenceKey(i)), arrays) for i, v in enumerate(node)]}
    children = _registered_children(node)
    if children is None:
        raise TypeError(f"save: the leaf at {where} is a {type(node).__name__}; a checkpoint "
                        "holds mx.arrays, NumPy arrays and Python scalars in pytree nodes "
                        "(dicts, lists, tuples, namedtuples, None, registered types)")
    return {"node": _type_name(type(node)),
            "children": [_encode(v, (*path, e), arrays) for e, v in children]}


def _encode_array(node: Any, path: tuple, arrays: dict[str, mx.array]) -> dict:
    where = _path_str(path)
    x = node if isinstance(node, mx.array) else from_numpy(node, f"save: {where}")
    # MLX would crash evaluating a lazy array it cannot allocate.
    check_fits(x.shape, x.dtype, f"save: {where}")
    name = _unique(_dotted(path) or "array", arrays)
    entry = {"array": name}
    if x.dtype in _BITS:
        entry["dtype"] = _dtype_name(x.dtype)
        x = mx.view(x, _BITS[x.dtype], stream=mx.cpu)  # MLX has float64 on the CPU only
    arrays[name] = x
    return entry


def _encode_scalar(value: bool | int | float | complex, path: tuple,
                   arrays: dict[str, mx.array]) -> dict:
    """A Python scalar, exactly: bool and int (int64) as themselves, float
    as float64, complex as two float64s."""
    kind = type(value).__name__ if type(value) in (bool, int, float, complex) else None
    if kind is None:  # a subclass (an IntEnum, ...): its type would be lost
        raise TypeError(f"save: the leaf at {_path_str(path)} is a {type(value).__name__}; "
                        "convert it to a plain bool, int, float or complex, or an array")
    if kind == "int" and not _INT64[0] <= value < _INT64[1]:
        raise OverflowError(f"save: the int at {_path_str(path)} ({value}) does not fit in "
                            "int64, the widest integer a checkpoint stores; store it as a str "
                            "elsewhere or as several ints")
    stored = (np.array([value.real, value.imag]) if kind == "complex" else
              np.array(value, {"bool": np.bool_, "int": np.int64, "float": np.float64}[kind]))
    entry = _encode_array(stored, path, arrays)
    entry["python"] = kind
    return entry


def _registered_children(node: Any) -> list[tuple[Any, Any]] | None:
    """``(key entry, child)`` pairs of a registered pytree node, or None for a leaf."""
    try:
        return tree_util.flatten_one_level_with_keys(node)[0]
    except ValueError:  # a leaf
        return None


def _unique(name: str, taken: dict) -> str:
    candidate, i = name, 1
    while candidate in taken:
        candidate, i = f"{name}~{i}", i + 1
    return candidate


def _path_str(path: tuple) -> str:
    return "tree" + tree_util.keystr(path)


def _dotted(path: tuple) -> str:
    """A key path as the checkpoint's array name (mlx.nn's dotted names)."""
    return tree_util.keystr(path, simple=True, separator=".")


# Each node kind's allowed fields, and the field holding its children.
_NODE_KINDS = {"array": (frozenset({"array", "dtype", "python"}), None),
               "dict": (frozenset({"dict", "ordered"}), "dict"),
               "list": (frozenset({"list"}), "list"), "tuple": (frozenset({"tuple"}), "tuple"),
               "namedtuple": (frozenset({"namedtuple", "fields"}), "fields"),
               "node": (frozenset({"node", "children"}), "children")}


def _check_structure(spec: Any, path: tuple, found: list[tuple[tuple, dict]]) -> None:
    """Check that ``spec`` (JSON from a file) is a structure ``save`` writes,
    adding ``(path, entry)`` for each of its arrays to ``found``; a
    ``ValueError`` (message: what is wrong, where) otherwise."""
    if len(path) > _MAX_DEPTH:
        raise ValueError(f"the tree nests deeper than {_MAX_DEPTH} levels")
    if spec is None:
        return
    kinds = spec.keys() & _NODE_KINDS.keys() if isinstance(spec, dict) else ()
    if len(kinds) != 1:
        raise ValueError(f"{_path_str(path)} is {_short(spec)}, not a node")
    kind = kinds.pop()
    fields, children_field = _NODE_KINDS[kind]
    if not spec.keys() <= fields:
        raise ValueError(f"{_path_str(path)} has unknown fields: {_short(spec)}")
    if kind == "array":
        if not (isinstance(spec["array"], str) and spec.get("dtype", "float64") == "float64"
                and spec.get("python", "int") in _PYTHON):
            raise ValueError(f"{_path_str(path)} is a malformed array entry: {_short(spec)}")
        found.append((path, spec))
        return
    if kind in ("namedtuple", "node") and not isinstance(spec[kind], str):
        raise ValueError(f"{_path_str(path)} names its class with {_short(spec[kind])}, "
                         "not a str")
    children = spec.get(children_field)
    if not isinstance(children, list) or not isinstance(spec.get("ordered", False), bool):
        raise ValueError(f"{_path_str(path)} is a malformed {kind}: {_short(spec)}")
    if kind != "dict":
        for i, child in enumerate(children):
            _check_structure(child, (*path, SequenceKey(i)), found)
        return
    keys = set()
    for item in children:
        if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], (str, int))
                and not isinstance(item[0], bool) and item[0] not in keys):
            raise ValueError(f"{_path_str(path)} has a malformed or repeated item: "
                             f"{_short(item)}")
        keys.add(item[0])
        _check_structure(item[1], (*path, DictKey(item[0])), found)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _decode(spec: Any, arrays: dict[str, mx.array], path: tuple, file: str) -> Any:
    """The tree of a checked structure (``_check_structure``) of ``file``."""
    if spec is None:
        return None
    if "array" in spec:
        return _decode_array(spec, arrays)
    if "dict" in spec:
        cls = collections.OrderedDict if spec.get("ordered") else dict
        return cls((k, _decode(v, arrays, (*path, DictKey(k)), file)) for k, v in spec["dict"])
    if "list" in spec:
        return [_decode(v, arrays, (*path, SequenceKey(i)), file)
                for i, v in enumerate(spec["list"])]
    if "tuple" in spec:
        return tuple(_decode(v, arrays, (*path, SequenceKey(i)), file)
                     for i, v in enumerate(spec["tuple"]))
    where = f"load: {file}: {_path_str(path)}"
    if "node" in spec:
        raise ValueError(f"{where} was a registered pytree node of class {spec['node']!r}; "
                         "pass like= (a tree of the expected structure) to load it")
    name, fields = spec["namedtuple"], spec["fields"]
    cls = _allowed(name)
    if cls is None:
        raise ValueError(
            f"{where} was a namedtuple of class {name!r}, which load does not rebuild from a "
            "name in a file (a checkpoint is data: it imports nothing); pass like= (a tree of "
            "the expected structure), or allow the class with "
            f"ft.serialization.register_checkpoint_type({name.rpartition(':')[2]})")
    if len(fields) != len(cls._fields):
        raise ValueError(f"{where} has {len(fields)} fields in the file, but {name} has "
                         f"{len(cls._fields)} ({', '.join(cls._fields)})")
    return cls(*(_decode(v, arrays, (*path, GetAttrKey(f)), file)
                 for f, v in zip(cls._fields, fields)))


def _decode_array(entry: dict, arrays: dict[str, mx.array]) -> Any:
    x = arrays[entry["array"]]
    if "dtype" in entry:
        x = mx.view(x, mx.float64, stream=mx.cpu)
    kind = entry.get("python")
    if kind is None:
        return x
    if kind == "complex":
        real, imag = x.tolist()
        return complex(real, imag)
    return {"bool": bool, "int": int, "float": float}[kind](x.item())


def _skeleton(spec: Any) -> Any:
    """The structure up to node types: dicts, lists, tuples (namedtuples and
    registered nodes as tuples of their children), None, and 0 per array."""
    if spec is None:
        return None
    if "array" in spec:
        return 0
    if "dict" in spec:
        cls = collections.OrderedDict if spec.get("ordered") else dict
        return cls((k, _skeleton(v)) for k, v in spec["dict"])
    if "list" in spec:
        return [_skeleton(v) for v in spec["list"]]
    children = spec.get("tuple", spec.get("fields", spec.get("children")))
    return tuple(_skeleton(v) for v in children)


# ---------------------------------------------------------------------------
# save
# ---------------------------------------------------------------------------

def save(path: str | os.PathLike, tree: Any) -> None:
    """Write ``tree`` (a pytree of arrays: parameters, optimizer state, ...)
    to ``path`` as a safetensors file, atomically.

    Args:
        path: the file to write (replaced if it exists; the name is used as
          given, with no extension added).
        tree: dicts (str or int keys), lists, tuples, namedtuples, registered
          pytree nodes and None holding ``mx.array`` leaves (any dtype),
          NumPy arrays (any dtype MLX has: complex128 and others are a
          ``TypeError``; they load as ``mx.array``) and Python ``bool``,
          ``int``, ``float``, ``complex`` scalars.

    Raises:
        TypeError: a leaf or dict key a checkpoint cannot hold (named by its
          path in the tree).
        MemoryError: a lazy array too large to be computed.

    Nothing is written (and a previous file at ``path`` is left as it was)
    when the save fails.

    >>> import ftorch as ft, ftorch.optim as optim, mlx.core as mx, os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "state.safetensors")
    >>> opt = optim.adam(1e-3)
    >>> state = opt.init({"w": mx.zeros(3)})
    >>> ft.save(path, {"params": {"w": mx.zeros(3)}, "opt": state})
    >>> type(ft.load(path)["opt"]).__name__
    'AdamState'
    """
    path = os.fspath(path)
    arrays: dict[str, mx.array] = {}
    spec = _encode(tree, (), arrays)
    metadata = {"format": _FORMAT, _TREE_KEY: json.dumps(spec, separators=(",", ":"))}
    directory = os.path.dirname(os.path.abspath(path))
    # MLX writes to a path faster than through a Python file object; the
    # suffix keeps it from appending its own.
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.tmp-",
                               suffix=".safetensors", dir=directory)
    try:
        os.close(fd)
        mx.save_safetensors(tmp, arrays, metadata)
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    _fsync_dir(directory)


def _fsync_dir(directory: str) -> None:
    """Make the rename itself durable (where the platform allows it)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# ---------------------------------------------------------------------------
# load
# ---------------------------------------------------------------------------

def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict:
    """A JSON object, refusing repeated keys (readers differ on which wins)."""
    out = dict(pairs)
    if len(out) != len(pairs):
        counts = collections.Counter(k for k, _ in pairs)
        raise ValueError(f"the key {next(k for k, c in counts.items() if c > 1)!r} is repeated")
    return out


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _parse_json(raw: bytes | str) -> Any:
    """Strict JSON: UTF-8, no NaN or Infinity, no repeated keys; any failure
    (nesting too deep included) a ValueError."""
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        return json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
    except RecursionError:
        raise ValueError("its JSON nests too deeply") from None
    except ValueError as e:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise ValueError(f"it is not valid JSON ({e})") from None


def _read_header(path: str) -> dict:
    """The safetensors header of ``path``, checked against the file's size
    (as the safetensors library checks it, and for MLX's int32 shapes): a
    clear error for a truncated, corrupt or hostile file, before MLX reads it."""
    def bad(why: str) -> ValueError:
        return ValueError(f"load: {path} is not a valid checkpoint: {why}")

    size = os.path.getsize(path)
    with open(path, "rb") as f:
        head = f.read(8)
        if len(head) < 8:
            raise bad(f"{size} bytes, shorter than a safetensors header (truncated?)")
        n = int.from_bytes(head, "little")
        if n > size - 8:
            raise bad(f"the header claims {n} bytes but the file has {size - 8} after its "
                      "length (truncated?)")
        if n > _MAX_HEADER:
            raise bad(f"its header claims {n} bytes, more than safetensors' limit of "
                      f"{_MAX_HEADER}")
        raw = f.read(n)
    try:
        header = _parse_json(raw)
    except ValueError as e:
        raise bad(f"its header: {e}") from None
    if not isinstance(header, dict):
        raise bad("its header is not a JSON object")
    data_size = size - 8 - n
    spans = []
    for name, info in header.items():
        if name == "__metadata__":
            if info is not None and not (isinstance(info, dict)
                                         and all(isinstance(v, str) for v in info.values())):
                raise bad("its metadata is not a map of strings")
            continue
        try:
            dtype, shape, offsets = info["dtype"], info["shape"], info["data_offsets"]
            # (type(...) is int: JSON's true and false are bools, an int subclass)
            ok = (type(dtype) is str and dtype in _ITEMSIZE and type(shape) is list
                  and all(type(s) is int and 0 <= s <= _MAX_DIM for s in shape)
                  and type(offsets) is list and len(offsets) == 2
                  and all(type(o) is int for o in offsets))
        except (KeyError, TypeError):
            ok = False
        if not ok:
            raise bad(f"the entry of {name!r} is malformed: {_short(info)}")
        begin, end = offsets
        if not 0 <= begin <= end <= data_size:
            raise bad(f"{name!r} lies at bytes {begin}..{end} of a {data_size}-byte data "
                      "section (truncated?)")
        if end - begin != math.prod(shape) * _ITEMSIZE[dtype]:
            raise bad(f"{name!r} has {end - begin} bytes for shape {tuple(shape)} of {dtype}")
        spans.append((begin, end, name))
    # The arrays tile the data section, without overlaps or holes.
    at = 0
    for begin, end, name in sorted(spans):
        if begin != at:
            raise bad(f"{name!r} starts at byte {begin} of the data section, where the "
                      f"previous array ends at {at} (overlapping or missing data)")
        at = end
    if at != data_size:
        raise bad(f"its arrays end at byte {at} of a {data_size}-byte data section")
    return header


def _read_structure(path: str, header: dict) -> tuple[Any, list[tuple[tuple, dict]]]:
    """The checked tree structure in ``header``'s metadata, and its arrays'
    ``(path, entry)``, matched with the header's arrays."""
    def bad(why: str) -> ValueError:
        return ValueError(f"load: {path} is not a valid checkpoint: {why}")

    found: list[tuple[tuple, dict]] = []
    try:
        spec = _parse_json(header["__metadata__"][_TREE_KEY])
        _check_structure(spec, (), found)
    except ValueError as e:
        raise bad(f"its tree structure: {e}") from None
    names = [entry["array"] for _, entry in found]
    stored = header.keys() - {"__metadata__"}
    if len(set(names)) != len(names) or set(names) != stored:
        repeated = {n for n, c in collections.Counter(names).items() if c > 1}
        odd = sorted(set(names) ^ stored | repeated)
        raise bad(f"the arrays {_short(odd)} are in its structure or its data, not once in both")
    for p, entry in found:
        info = header[entry["array"]]
        want = _PYTHON.get(entry.get("python"))
        if (("dtype" in entry and info["dtype"] != "U64")
                or (want is not None and [info["dtype"], info["shape"]] != list(want))):
            raise bad(f"{_path_str(p)} is stored as {info['dtype']} of shape "
                      f"{tuple(info['shape'])}, which does not fit its entry {_short(entry)}")
    return spec, found


def load(path: str | os.PathLike, like: Any = None) -> Any:
    """Read a checkpoint written by ``save``.

    Args:
        path: the file.
        like: a tree of the expected structure (arrays, ``ft.ShapeDtypeStruct``
            or Python scalar leaves), or None. Given, the file must match it in
            structure, shapes and dtypes (a ``ValueError`` lists every
            mismatch), and the result has ``like``'s structure (its node
            types: any pytree). A plain safetensors file (from
            ``mx.save_safetensors`` or ``mlx.nn.Module.save_weights``) loads
            into ``like`` by the dotted names of its leaves.

    Returns:
        the tree; without ``like``, a plain safetensors file gives a dict
        from names to arrays.

    Raises:
        ValueError: the file is not a valid checkpoint (truncated, corrupt,
          hostile), or names a namedtuple class that is neither in ``like``
          nor allowed with ``register_checkpoint_type``, or does not match
          ``like``.

    ``load`` treats the file as data: whatever it holds, it imports no
    module and calls no function named in it.

    >>> import ftorch as ft, mlx.core as mx, os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "p.safetensors")
    >>> ft.save(path, {"w": mx.ones(2)})
    >>> ft.load(path, like={"w": mx.zeros(3)})
    Traceback (most recent call last):
    ...
    ValueError: load: ... does not match like:
      tree['w']: shape (2,) in the file, (3,) in like
    """
    path = os.fspath(path)
    header = _read_header(path)
    metadata = header.get("__metadata__") or {}
    spec, found = _read_structure(path, header) if _TREE_KEY in metadata else (None, None)
    try:
        arrays = mx.load(path, format="safetensors")
    except Exception as e:  # MLX's reader refused what the header check let through
        raise ValueError(f"load: {path} is not a valid checkpoint: {e}") from None
    if spec is None:  # a plain safetensors file: names are the tree
        return arrays if like is None else _match_like(path, arrays, None, like)
    if like is None:
        return _decode(spec, arrays, (), path)
    by_path = {_dotted(p): _decode_array(entry, arrays) for p, entry in found}
    return _match_like(path, by_path, _skeleton(spec), like)


_SCALARS = (bool, int, float, complex)


def _like_skeleton(node: Any) -> Any:
    """``like``'s structure as ``_skeleton`` gives a file's."""
    if node is None:
        return None
    if isinstance(node, (mx.array, np.ndarray, ShapeDtypeStruct, *_SCALARS)):
        return 0
    if isinstance(node, dict):
        return type(node)((k, _like_skeleton(v)) for k, v in node.items())
    if isinstance(node, list):
        return [_like_skeleton(v) for v in node]
    if isinstance(node, tuple):
        return tuple(_like_skeleton(v) for v in node)
    children = _registered_children(node)
    if children is None:
        raise TypeError(f"load: like's leaves must be arrays, ft.ShapeDtypeStruct or Python "
                        f"scalars, got {type(node).__name__}")
    return tuple(_like_skeleton(v) for _, v in children)


def _match_like(path: str, have: dict[str, Any], skeleton: Any, like: Any) -> Any:
    """The file's arrays (by dotted path) in ``like``'s structure, or a
    ValueError listing every difference of structure, shape and dtype
    (``skeleton``: the file's structure; None for a plain safetensors file,
    matched by names only)."""
    like_skeleton = _like_skeleton(like)
    like_leaves, like_def = tree_util.flatten(
        like, is_leaf=lambda x: isinstance(x, ShapeDtypeStruct))
    want = {_dotted(p): x for p, x in zip(tree_util.key_paths(tree_util.structure(like_skeleton)),
                                          like_leaves)}
    problems = [f"{_display(n)}: in like, not in the file" for n in want.keys() - have.keys()]
    problems += [f"{_display(n)}: in the file, not in like" for n in have.keys() - want.keys()]
    for name in want.keys() & have.keys():
        (ws, wd), (hs, hd) = _describe(want[name]), _describe(have[name])
        if ws != hs:
            problems.append(f"{_display(name)}: shape {hs} in the file, {ws} in like")
        if wd != hd:
            problems.append(f"{_display(name)}: dtype {hd} in the file, {wd} in like")
    if not problems and skeleton is not None:
        file_def, like_def_s = tree_util.structure(skeleton), tree_util.structure(like_skeleton)
        if file_def != like_def_s:
            problems.append(f"the structure differs: {file_def} in the file, {like_def_s} "
                            "in like")
    if problems:
        listed = "\n".join(f"  {p}" for p in sorted(problems))
        raise ValueError(f"load: {path} does not match like:\n{listed}")
    return tree_util.unflatten(like_def, [have[name] for name in want])


def _describe(x: Any) -> tuple[tuple[int, ...], str]:
    """Shape and dtype name (a Python scalar's: 'Python int', ...)."""
    if isinstance(x, _SCALARS):
        return (), f"Python {type(x).__name__}"
    return tuple(x.shape), _dtype_name(x.dtype)


def _display(name: str) -> str:
    """A dotted array name as the path ``_path_str`` shows."""
    return _path_str(tuple(SequenceKey(int(p)) if p.isdigit() else DictKey(p)
                           for p in name.split(".")))


def _dtype_name(dtype: Any) -> str:
    """MLX's and NumPy's dtypes by one name: 'float64', 'bool', ..."""
    return dtype.name if isinstance(dtype, np.dtype) else str(dtype).split(".")[-1]
