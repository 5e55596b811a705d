"""Checkpoints of any pytree of arrays: ``save(path, tree)`` and
``load(path, like=None)``.

A checkpoint is one safetensors file written by MLX
(``mx.save_safetensors``). Each array is stored under its readable dotted
path (``params.layers.0.weight``), and the tree's structure (dicts with
their key order, lists, tuples, namedtuples, ``None``, empty containers) is
kept as JSON in the file's metadata, so ``load`` rebuilds the same tree.
Other safetensors readers (``mx.load``, ``safetensors``, PyTorch) read the
arrays by those names.

Writes are atomic: the file is written under a temporary name in the same
directory, flushed to disk, and renamed over ``path``; a writer killed
mid-write leaves the previous checkpoint intact (and perhaps a
``.<name>.tmp-*`` file beside it). ``load`` checks the file's header (sizes,
offsets, dtypes) before MLX reads it, so a truncated or corrupt header is a
``ValueError`` naming the file; the tensor bytes themselves carry no
checksum.

>>> import ftorch as ft, mlx.core as mx, os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "ckpt.safetensors")
>>> tree = {"w": mx.ones((2, 3)), "opt": (mx.array(1), None, []), "empty": {}}
>>> ft.save(path, tree)
>>> back = ft.load(path)
>>> back["w"].shape, back["opt"][1:], back["empty"]
((2, 3), (None, []), {})
"""

from __future__ import annotations

import collections
import importlib
import json
import math
import os
import tempfile
from typing import Any

import mlx.core as mx
import numpy as np
import optree

from ftorch import tree as tree_util
from ftorch.core import ShapeDtypeStruct

__all__ = ["save", "load"]

_FORMAT = "ftorch.checkpoint/1"
_TREE_KEY = "ftorch.tree"

# safetensors dtype names and their sizes in bytes (the header check).
_ITEMSIZE = {"BOOL": 1, "U8": 1, "I8": 1, "U16": 2, "I16": 2, "F16": 2, "BF16": 2, "U32": 4,
             "I32": 4, "F32": 4, "U64": 8, "I64": 8, "F64": 8, "C64": 8}
# MLX cannot write float64 to safetensors: such leaves travel as their bits.
_BITS = {mx.float64: mx.uint64}


# ---------------------------------------------------------------------------
# The structure, as JSON
# ---------------------------------------------------------------------------

def _encode(node: Any, path: tuple, arrays: dict[str, mx.array]) -> Any:
    """``node`` as JSON, its arrays added to ``arrays`` under unique dotted names."""
    where = _path_str(path)
    if node is None:
        return None
    if isinstance(node, (mx.array, np.ndarray)):
        x = mx.array(node) if isinstance(node, np.ndarray) else node
        name = _unique(".".join(str(p) for p in path) or "array", arrays)
        entry = {"array": name}
        if x.dtype in _BITS:
            entry["dtype"] = str(x.dtype).split(".")[-1]
            x = x.view(_BITS[x.dtype])
        arrays[name] = x
        return entry
    if isinstance(node, dict):
        items = []
        for k, v in node.items():
            if not isinstance(k, (str, int)) or isinstance(k, bool):
                raise TypeError(f"save: the key {k!r} at {where} is a {type(k).__name__}; "
                                "checkpoint dict keys must be str or int")
            items.append([k, _encode(v, (*path, k), arrays)])
        if isinstance(node, collections.OrderedDict):
            return {"dict": items, "ordered": True}
        return {"dict": items}
    if isinstance(node, tuple) and hasattr(type(node), "_fields"):
        cls = type(node)
        return {"namedtuple": f"{cls.__module__}:{cls.__qualname__}",
                "fields": [_encode(v, (*path, f), arrays) for f, v in zip(cls._fields, node)]}
    if isinstance(node, (tuple, list)):
        kind = "tuple" if isinstance(node, tuple) else "list"
        return {kind: [_encode(v, (*path, i), arrays) for i, v in enumerate(node)]}
    children = _registered_children(node)
    if children is None:
        raise TypeError(f"save: the leaf at {where} is a {type(node).__name__}; a checkpoint "
                        "holds mx.arrays (or NumPy arrays) in pytree nodes (dicts, lists, "
                        "tuples, namedtuples, None, registered types)")
    cls = type(node)
    return {"node": f"{cls.__module__}:{cls.__qualname__}",
            "children": [_encode(v, (*path, e), arrays) for e, v in children]}


def _registered_children(node: Any) -> list[tuple[Any, Any]] | None:
    """``(entry, child)`` pairs of a pytree node registered with optree (in
    ftorch's namespace), or None for a leaf."""
    if optree.tree_is_leaf(node, none_is_leaf=False, namespace=tree_util.NAMESPACE):
        return None
    children, _, entries, _ = optree.tree_flatten_one_level(
        node, none_is_leaf=False, namespace=tree_util.NAMESPACE)
    return list(zip(entries, children))


def _unique(name: str, taken: dict) -> str:
    candidate, i = name, 1
    while candidate in taken:
        candidate, i = f"{name}~{i}", i + 1
    return candidate


def _path_str(path: tuple) -> str:
    return "tree" + "".join(f"[{p!r}]" for p in path)


def _decode(spec: Any, arrays: dict[str, mx.array], path: tuple) -> Any:
    if spec is None:
        return None
    if "array" in spec:
        x = arrays[spec["array"]]
        return x.view(getattr(mx, spec["dtype"])) if "dtype" in spec else x
    if "dict" in spec:
        cls = collections.OrderedDict if spec.get("ordered") else dict
        return cls((k, _decode(v, arrays, (*path, k))) for k, v in spec["dict"])
    if "list" in spec:
        return [_decode(v, arrays, (*path, i)) for i, v in enumerate(spec["list"])]
    if "tuple" in spec:
        return tuple(_decode(v, arrays, (*path, i)) for i, v in enumerate(spec["tuple"]))
    if "node" in spec:
        raise ValueError(f"load: {_path_str(path)} was a {spec['node']} (a registered pytree "
                         "node); pass like= (a tree of the expected structure) to load it")
    cls = _import_class(spec["namedtuple"], path)
    return cls(*(_decode(v, arrays, (*path, f)) for f, v in zip(cls._fields, spec["fields"])))


def _import_class(name: str, path: tuple) -> type:
    module, _, qualname = name.partition(":")
    try:
        obj: Any = importlib.import_module(module)
        for part in qualname.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError):
        raise ValueError(f"load: {_path_str(path)} was a {name}, which cannot be imported here; "
                         "pass like= (a tree of the expected structure) to load it") from None
    return obj


def _children(spec: dict) -> list:
    if "dict" in spec:
        return [v for _, v in spec["dict"]]
    for kind in ("list", "tuple", "fields", "children"):
        if kind in spec:
            return spec[kind]
    raise KeyError(f"no children in {spec}")


def _arrays_of(spec: Any) -> list[dict]:
    """The array entries of a structure, in order."""
    if spec is None:
        return []
    if "array" in spec:
        return [spec]
    return [a for c in _children(spec) for a in _arrays_of(c)]


def _array_paths(spec: Any, path: tuple) -> list[tuple[tuple, dict]]:
    """``(path, entry)`` of each array of a structure."""
    if spec is None:
        return []
    if "array" in spec:
        return [(path, spec)]
    if "dict" in spec:
        keyed = spec["dict"]
    else:
        keyed = list(enumerate(_children(spec)))
    return [a for k, v in keyed for a in _array_paths(v, (*path, k))]


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
    return tuple(_skeleton(v) for v in _children(spec))


# ---------------------------------------------------------------------------
# save
# ---------------------------------------------------------------------------

def save(path: str | os.PathLike, tree: Any) -> None:
    """Write ``tree`` (a pytree of arrays: parameters, optimizer state, ...)
    to ``path`` as a safetensors file, atomically.

    Args:
        path: the file to write (replaced if it exists; the name is used as
          given, with no extension added).
        tree: dicts (str or int keys), lists, tuples, namedtuples and None
          holding ``mx.array`` (or NumPy) leaves.

    >>> import ftorch as ft, ftorch.optim as optim, mlx.core as mx, os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "state.safetensors")
    >>> opt = optim.adam(1e-3)
    >>> state = opt.init({"w": mx.zeros(3)})
    >>> ft.save(path, {"params": {"w": mx.zeros(3)}, "opt": state})
    >>> type(ft.load(path)["opt"]).__name__
    'InjectHyperparamsState'
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
    os.close(fd)
    try:
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

def _read_header(path: str) -> dict:
    """The safetensors header of ``path``, checked against the file's size:
    a clear error for a truncated or corrupt file, before MLX reads it."""
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
        raw = f.read(n)
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise bad(f"its header is not JSON ({e})") from None
    if not isinstance(header, dict):
        raise bad("its header is not a JSON object")
    data_size = size - 8 - n
    for name, info in header.items():
        if name == "__metadata__":
            if info is not None and not (isinstance(info, dict)
                                         and all(isinstance(v, str) for v in info.values())):
                raise bad("its metadata is not a map of strings")
            continue
        try:
            dtype, shape, (begin, end) = info["dtype"], info["shape"], info["data_offsets"]
            ok = (dtype in _ITEMSIZE and all(isinstance(s, int) and s >= 0 for s in shape)
                  and isinstance(begin, int) and isinstance(end, int))
        except (KeyError, TypeError, ValueError):
            ok = False
        if not ok:
            raise bad(f"the entry of {name!r} is malformed: {info!r}")
        if not 0 <= begin <= end <= data_size:
            raise bad(f"{name!r} lies at bytes {begin}..{end} of a {data_size}-byte data "
                      "section (truncated?)")
        if end - begin != math.prod(shape) * _ITEMSIZE[dtype]:
            raise bad(f"{name!r} has {end - begin} bytes for shape {tuple(shape)} of {dtype}")
    return header


def load(path: str | os.PathLike, like: Any = None) -> Any:
    """Read a checkpoint written by ``save``.

    Args:
        path: the file.
        like: a tree of the expected structure (arrays or
            ``ft.ShapeDtypeStruct`` leaves), or None. Given, the file must
            match it in structure, shapes and dtypes (a ``ValueError`` lists
            every mismatch), and the result has ``like``'s structure (its
            node types: any pytree). A plain safetensors file (from
            ``mx.save_safetensors`` or ``mlx.nn.Module.save_weights``) loads
            into ``like`` by the dotted names of its leaves.

    Returns:
        the tree; without ``like``, a plain safetensors file gives a dict
        from names to arrays.

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
    try:
        arrays = mx.load(path, format="safetensors")
    except Exception as e:  # MLX's reader refused what the header check let through
        raise ValueError(f"load: {path} is not a valid checkpoint: {e}") from None
    if _TREE_KEY not in metadata:  # a plain safetensors file: names are the tree
        return arrays if like is None else _match_like(path, arrays, None, like)
    try:
        spec = json.loads(metadata[_TREE_KEY])
        names = {a["array"] for a in _arrays_of(spec)}
    except (json.JSONDecodeError, TypeError, KeyError, AttributeError):
        raise ValueError(f"load: {path} is not a valid checkpoint: its tree structure "
                         "metadata is corrupt") from None
    if names != set(arrays):
        raise ValueError(f"load: {path} is not a valid checkpoint: the arrays "
                         f"{sorted(names ^ set(arrays))} are in its structure or its data, "
                         "not both")
    if like is None:
        return _decode(spec, arrays, ())
    by_path = {_dotted(p): _decode(entry, arrays, p) for p, entry in _array_paths(spec, ())}
    return _match_like(path, by_path, _skeleton(spec), like)


def _dotted(path: tuple) -> str:
    return ".".join(str(p) for p in path)


def _like_skeleton(node: Any) -> Any:
    """``like``'s structure as ``_skeleton`` gives a file's."""
    if node is None:
        return None
    if isinstance(node, (mx.array, np.ndarray, ShapeDtypeStruct)):
        return 0
    if isinstance(node, dict):
        return type(node)((k, _like_skeleton(v)) for k, v in node.items())
    if isinstance(node, list):
        return [_like_skeleton(v) for v in node]
    if isinstance(node, tuple):
        return tuple(_like_skeleton(v) for v in node)
    children = _registered_children(node)
    if children is None:
        raise TypeError(f"load: like's leaves must be arrays or ft.ShapeDtypeStruct, got "
                        f"{type(node).__name__}")
    return tuple(_like_skeleton(v) for _, v in children)


def _match_like(path: str, have: dict[str, Any], skeleton: Any, like: Any) -> Any:
    """The file's arrays (by dotted path) in ``like``'s structure, or a
    ValueError listing every difference of structure, shape and dtype
    (``skeleton``: the file's structure; None for a plain safetensors file,
    matched by names only)."""
    like_skeleton = _like_skeleton(like)
    like_leaves, like_def = tree_util.flatten(
        like, is_leaf=lambda x: isinstance(x, ShapeDtypeStruct))
    want = {_dotted(p): x for p, x in zip(tree_util.structure(like_skeleton).paths(),
                                          like_leaves)}
    problems = [f"{_display(n)}: in like, not in the file" for n in want.keys() - have.keys()]
    problems += [f"{_display(n)}: in the file, not in like" for n in have.keys() - want.keys()]
    for name in want.keys() & have.keys():
        (ws, wd), (hs, hd) = _describe(want[name]), _describe(have[name])
        if ws != hs:
            problems.append(f"{_display(name)}: shape {hs} in the file, {ws} in like")
        if wd != hd:
            problems.append(f"{_display(name)}: dtype {_dtype_name(hd)} in the file, "
                            f"{_dtype_name(wd)} in like")
    if not problems and skeleton is not None:
        file_def, like_def_s = tree_util.structure(skeleton), tree_util.structure(like_skeleton)
        if file_def != like_def_s:
            problems.append(f"the structure differs: {file_def} in the file, {like_def_s} "
                            "in like")
    if problems:
        listed = "\n".join(f"  {p}" for p in sorted(problems))
        raise ValueError(f"load: {path} does not match like:\n{listed}")
    return tree_util.unflatten(like_def, [have[name] for name in want])


def _describe(x: Any) -> tuple[tuple[int, ...], Any]:
    dtype = x.dtype
    if isinstance(dtype, np.dtype):
        dtype = mx.array(np.zeros((), dtype)).dtype
    return tuple(x.shape), dtype


def _display(name: str) -> str:
    return "tree" + "".join(f"[{int(p) if p.isdigit() else p!r}]" for p in name.split("."))


def _dtype_name(dtype: Any) -> str:
    return str(dtype).split(".")[-1]
