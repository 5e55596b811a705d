"""Export a jitted function to run without Python or without ftorch, as
``jax.export``: ``export(jitted)(*args)`` stages it for one signature and
returns an ``Exported``.

An ``Exported`` is the function's staged graph lowered to MLX ops and saved
with ``mx.export_function``: ``mlx_function(path)`` writes the ``.mlxfn``
file that ``mx.import_function`` loads in Python without ftorch, and that
MLX's C++ and Swift APIs load; ``call(*args)`` runs that same exported
function, so it computes what the file computes; ``serialize()`` and
``deserialize(blob)`` carry it with its argument and result trees.
``to_onnx(path)`` converts the staged graph to an ONNX model
(``ftorch.export._onnx``; ``pip install 'ftorch[onnx]'``).

The file takes the function's argument leaves in flattening order
(``in_names``: ``argument params['w']``, ...) and returns its result leaves
(``out_names``); its metadata (``mx.import_function(path,
return_metadata=True)``) lists both as JSON. Exported graphs use MLX's own
ops (not ftorch's faster CPU approximations), so the file runs on any MLX
device.

Shape polymorphism: give a dimension a name (``symbolic_shape("b, 784")``
in a ``ShapeDtypeStruct``) and the file accepts any size there (MLX's
``shapeless`` export). The function is staged at two sizes of each named
dimension; where its graph differs between them (a ``reshape`` to a fixed
size, a constant the size of the batch), export raises naming the equation
and the line that baked the size in, and the exported file is checked
against the graph at the second size before it is returned.

>>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
>>> from ftorch import export
>>> f = ft.jit(lambda params, x: fnp.tanh(x @ params["w"]))
>>> exp = export.export(f)({"w": mx.ones((3, 2))},
...                        ft.ShapeDtypeStruct(export.symbolic_shape("b, 3"), mx.float32))
>>> exp.in_avals
(ShapeDtypeStruct(shape=(3, 2), dtype=mlx.core.float32), ShapeDtypeStruct(shape=('b', 3), \
dtype=mlx.core.float32))
>>> exp.call({"w": mx.ones((3, 2))}, mx.ones((5, 3))).shape
(5, 2)
"""

from __future__ import annotations

import base64
import importlib
import json
import os
import tempfile
from collections.abc import Callable, Sequence
from typing import Any

import mlx.core as mx
import numpy as np
import optree

from ftorch import api_util, tree
from ftorch.backend.lowering import apply_lowering, lower, portable_ops
from ftorch.config import config
from ftorch.core import ShapeDtypeStruct, format_aval
from ftorch.dtypes import to_mlx_dtype
from ftorch.graph import Eqn, Graph, Literal, eqn_needs_host, subgraphs
from ftorch.transforms.jit import jit

__all__ = ["export", "Exported", "deserialize", "symbolic_shape", "symbolic_args_specs",
           "is_symbolic_dim", "default_export_platform", "register_namedtuple_serialization",
           "register_pytree_node_serialization"]

_MAGIC = b"FTORCH-EXPORTED\x00"
_FORMAT_VERSION = 1
# Sizes a named dimension takes in the two stagings that check it is not
# baked in: primes, unlikely to equal the function's fixed sizes.
_PROBE_SIZES = (7, 11)


def symbolic_shape(spec: str) -> tuple[int | str, ...]:
    """A shape from ``"b, 3"``: integers are fixed sizes, names are
    dimensions whose size may vary (the same name, the same size), as
    ``jax.export.symbolic_shape``.

    >>> from ftorch.export import symbolic_shape
    >>> symbolic_shape("batch, 28, 28")
    ('batch', 28, 28)
    """
    if not isinstance(spec, str):
        raise TypeError(f"symbolic_shape: spec must be a str such as 'b, 3', got {spec!r}")
    dims: list[int | str] = []
    for part in (p.strip() for p in spec.strip().strip("()").split(",")):
        if not part:
            continue
        if part.lstrip("-").isdigit():
            if int(part) < 0:
                raise ValueError(f"symbolic_shape: negative size {part} in {spec!r}")
            dims.append(int(part))
        elif part.isidentifier():
            dims.append(part)
        else:
            raise ValueError(f"symbolic_shape: {part!r} in {spec!r} is neither a size nor a "
                             "dimension name (an identifier)")
    return tuple(dims)


def is_symbolic_dim(dim: Any) -> bool:
    """Whether ``dim`` (an entry of a shape) is a named, symbolic dimension,
    as ``jax.export.is_symbolic_dim``.

    >>> from ftorch.export import is_symbolic_dim, symbolic_shape
    >>> [is_symbolic_dim(d) for d in symbolic_shape("b, 3")]
    [True, False]
    """
    return isinstance(dim, str)


def symbolic_args_specs(args: Any, shapes_specs: Any) -> Any:
    """``ShapeDtypeStruct``s for the arrays in ``args`` (a pytree), with the
    shapes of ``shapes_specs`` (a string per array, ``"b, ..."``: ``...``
    keeps the array's remaining sizes; a prefix tree of strings or None,
    None keeping the array's shape), as ``jax.export.symbolic_args_specs``.

    >>> import mlx.core as mx
    >>> from ftorch.export import symbolic_args_specs
    >>> symbolic_args_specs((mx.zeros((4, 3)), mx.zeros(2)), ("b, ...", None))
    (ShapeDtypeStruct(shape=('b', 3), dtype=mlx.core.float32), \
ShapeDtypeStruct(shape=(2,), dtype=mlx.core.float32))
    """
    def spec(x: Any, shapes: str | None) -> ShapeDtypeStruct:
        shape = tuple(x.shape)
        if shapes is None:
            return ShapeDtypeStruct(shape, x.dtype)
        text = shapes.replace("...", "_ELLIPSIS_")
        dims = list(symbolic_shape(text))
        if "_ELLIPSIS_" in dims:
            at = dims.index("_ELLIPSIS_")
            dims[at:at + 1] = shape[at:len(shape) - (len(dims) - at - 1)]
        if len(dims) != len(shape):
            raise ValueError(f"symbolic_args_specs: {shapes!r} has {len(dims)} dimensions, "
                             f"the array {len(shape)}")
        return ShapeDtypeStruct(tuple(dims), x.dtype)

    return tree.map(spec, args, tree.broadcast(shapes_specs, args, is_leaf=lambda s: s is None
                                               or isinstance(s, str)))


def default_export_platform() -> str:
    """The platform exported functions are made on, as
    ``jax.export.default_export_platform``: MLX's default device type
    (``"cpu"`` or ``"gpu"``; an ``.mlxfn`` runs on either).

    >>> from ftorch.export import default_export_platform
    >>> default_export_platform() in ("cpu", "gpu")
    True
    """
    return "gpu" if mx.default_device().type == mx.gpu else "cpu"


class Exported:
    """A function exported for one signature (see the module): its
    argument and result trees (``in_tree`` over ``(args, kwargs)``,
    ``out_tree``), the shapes and dtypes of their leaves (``in_avals``,
    ``out_avals``; names for symbolic dimensions), the leaves' names, and
    the ``.mlxfn`` bytes."""

    def __init__(self, fun_name: str, in_tree: Any, out_tree: Any,
                 in_avals: Sequence[ShapeDtypeStruct], out_avals: Sequence[ShapeDtypeStruct],
                 in_names: Sequence[str], out_names: Sequence[str], mlxfn: bytes,
                 graph: Graph | None = None):
        self.fun_name = fun_name
        self.in_tree = in_tree
        self.out_tree = out_tree
        self.in_avals = tuple(in_avals)
        self.out_avals = tuple(out_avals)
        self.in_names = list(in_names)
        self.out_names = list(out_names)
        self._mlxfn = mlxfn
        #: The staged graph (None for an ``Exported`` read by ``deserialize``).
        self.graph = graph
        self._imported: Callable | None = None

    def __repr__(self) -> str:
        ins = ", ".join(format_aval(a) for a in self.in_avals)
        outs = ", ".join(format_aval(a) for a in self.out_avals)
        return f"Exported({self.fun_name}: ({ins}) -> ({outs}))"

    @property
    def shapeless(self) -> bool:
        """Whether some dimension is symbolic (the file is MLX-shapeless)."""
        return any(isinstance(d, str) for a in self.in_avals for d in a.shape)

    def mlx_function(self, path: str | os.PathLike) -> None:
        """Write the ``.mlxfn`` file: ``mx.import_function(path)`` loads it
        (in Python, C++ or Swift) as a function of the argument leaves in
        ``in_names``' order, returning the result leaves as a tuple."""
        with open(path, "wb") as f:
            f.write(self._mlxfn)

    def call(self, *args: Any, **kwargs: Any) -> Any:
        """Run the exported function (the ``.mlxfn``'s, not a new trace) on
        arguments of the exported structure, shapes and dtypes."""
        leaves, treedef = tree.flatten((args, kwargs))
        if treedef != self.in_tree:
            raise TypeError(f"Exported.call: {self.fun_name!r} was exported for arguments of "
                            f"structure {self.in_tree}, got {treedef}")
        leaves = [self._check_leaf(i, leaf) for i, leaf in enumerate(leaves)]
        _check_dims(leaves, self.in_avals, self.in_names, "Exported.call")
        outs = self._function()(*leaves)
        return tree.unflatten(self.out_tree, list(outs))

    def _check_leaf(self, i: int, leaf: Any) -> mx.array:
        aval, name = self.in_avals[i], self.in_names[i]
        if isinstance(leaf, (bool, int, float, complex, np.ndarray)):
            leaf = mx.array(leaf, aval.dtype) if not isinstance(leaf, np.ndarray) \
                else mx.array(leaf)
        if not isinstance(leaf, mx.array):
            raise TypeError(f"Exported.call: {name} must be an array, got "
                            f"{type(leaf).__name__}")
        if leaf.dtype != aval.dtype or leaf.ndim != len(aval.shape):
            raise TypeError(f"Exported.call: {name} was exported as {format_aval(aval)}, "
                            f"got {format_aval(ShapeDtypeStruct(tuple(leaf.shape), leaf.dtype))}")
        return leaf

    def _function(self) -> Callable:
        if self._imported is None:
            self._imported = _import(self._mlxfn)
        return self._imported

    def serialize(self) -> bytes:
        """The exported function as bytes (``deserialize`` reads them): the
        ``.mlxfn`` with the trees and avals, as ``Exported.serialize`` in
        JAX. The bytes hold no Python objects (no pickle)."""
        header = json.dumps({
            "version": _FORMAT_VERSION,
            "fun_name": self.fun_name,
            "in_tree": _encode_tree(self.in_tree),
            "out_tree": _encode_tree(self.out_tree),
            "in_avals": [_encode_aval(a) for a in self.in_avals],
            "out_avals": [_encode_aval(a) for a in self.out_avals],
            "in_names": self.in_names,
            "out_names": self.out_names,
            "mlx_version": mx.__version__,
        }).encode()
        return _MAGIC + len(header).to_bytes(8, "little") + header + self._mlxfn

    def to_onnx(self, path: str | os.PathLike | None = None, *, opset: int | None = None) -> Any:
        """The function as an ONNX model (an ``onnx.ModelProto``, also
        written to ``path`` if given), converted from the staged graph
        (``ftorch.export._onnx.to_onnx``: the opset, what is mapped); inputs
        and outputs are named after ``in_names`` and ``out_names``."""
        if self.graph is None:
            raise ValueError("Exported.to_onnx: this Exported was read by deserialize and has "
                             "no graph; convert the one made by export")
        if self.shapeless:
            raise ValueError("Exported.to_onnx: converts fixed shapes only; export at the "
                             "shapes to convert")
        from ftorch.export import _onnx

        kwargs = {} if opset is None else {"opset": opset}
        return _onnx.to_onnx(self.graph, path, input_names=[_onnx_name(n) for n in self.in_names],
                             output_names=[_onnx_name(n) for n in self.out_names],
                             model_name=self.fun_name, **kwargs)


def export(fun: Callable, *, platforms: Sequence[str] | None = None) -> Callable[..., Exported]:
    """``fun`` (an ``ft.jit`` function; a plain one is jitted) as a
    function of example arguments (arrays, ``ShapeDtypeStruct``s, Python
    scalars; static arguments as for a call) returning its ``Exported``, as
    ``jax.export.export``. ``platforms`` is accepted for JAX code: an
    ``.mlxfn`` runs on any MLX device.

    >>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
    >>> from ftorch import export
    >>> step = ft.jit(ft.grad(lambda w, x: fnp.sum((x @ w) ** 2)))
    >>> exp = export.export(step)(mx.ones((3, 1)), mx.ones((4, 3)))
    >>> exp.call(mx.ones((3, 1)), mx.ones((4, 3))).reshape(-1).tolist()
    [24.0, 24.0, 24.0]
    """
    api_util.check_callable(fun, "export")
    del platforms
    jitted = fun if hasattr(fun, "trace") else jit(fun)
    fun_name = getattr(fun, "__qualname__", getattr(fun, "__name__", "function"))

    def exported(*args: Any, **kwargs: Any) -> Exported:
        symbols = _symbols(args, kwargs)
        sizes = dict.fromkeys(symbols, _PROBE_SIZES[0])
        traced = jitted.trace(*_concrete(args, sizes), **_concrete(kwargs, sizes))
        graph = traced.graph
        _check_exportable(graph, fun_name)
        example = [mx.zeros(a.shape, a.dtype) for a in graph.in_avals]  # values unused
        in_avals = list(graph.in_avals)
        out_avals = list(graph.out_avals)
        if symbols:
            second = dict.fromkeys(symbols, _PROBE_SIZES[1])
            other = jitted.trace(*_concrete(args, second), **_concrete(kwargs, second)).graph
            graph = _polymorphic(graph, other, fun_name, symbols)
            in_avals = _symbolic_avals(in_avals, other.in_avals, sizes)
            out_avals = _symbolic_avals(out_avals, other.out_avals, sizes)
        out_names = [_path_name("result", p) for p in traced.out_tree.paths()]
        metadata = json.dumps({"function": fun_name, "inputs": [
            {"name": n, "aval": _encode_aval(a)} for n, a in zip(traced.in_names, in_avals)],
            "outputs": [{"name": n, "aval": _encode_aval(a)}
                        for n, a in zip(out_names, out_avals)]})
        mlxfn = _export_bytes(graph, example, bool(symbols), metadata)
        result = Exported(fun_name, traced.in_tree, traced.out_tree, in_avals, out_avals,
                          traced.in_names, out_names, mlxfn, graph)
        if symbols:
            _check_shapeless(result, other, fun_name)
        return result

    return exported


def deserialize(blob: bytes | bytearray) -> Exported:
    """The ``Exported`` that ``Exported.serialize`` wrote, callable (it has
    no staged graph: ``to_onnx`` needs the original), as
    ``jax.export.deserialize``.

    >>> import ftorch as ft, mlx.core as mx
    >>> from ftorch import export
    >>> exp = export.export(ft.jit(lambda x: {"y": x * 2.0}))(mx.ones(2))
    >>> export.deserialize(exp.serialize()).call(mx.array([1.0, 2.0]))["y"].tolist()
    [2.0, 4.0]
    """
    blob = bytes(blob)
    if not blob.startswith(_MAGIC):
        raise ValueError("deserialize: these bytes were not written by Exported.serialize")
    start = len(_MAGIC) + 8
    size = int.from_bytes(blob[len(_MAGIC):start], "little")
    header = json.loads(blob[start:start + size])
    if header.get("version") != _FORMAT_VERSION:
        raise ValueError(f"deserialize: format version {header.get('version')} is not "
                         f"{_FORMAT_VERSION}, the one this ftorch reads")
    return Exported(header["fun_name"], _decode_tree(header["in_tree"]),
                    _decode_tree(header["out_tree"]),
                    [_decode_aval(a) for a in header["in_avals"]],
                    [_decode_aval(a) for a in header["out_avals"]],
                    header["in_names"], header["out_names"], blob[start + size:])


# ----------------------------------------------------------------------------
# Staging and writing the file
# ----------------------------------------------------------------------------


def _check_exportable(graph: Graph, fun_name: str) -> None:
    """Refuse graphs with equations driven from Python (a data-dependent
    loop, a rolled scan, a host callback): an ``.mlxfn`` holds MLX ops only."""
    for eqn in graph.eqns:
        if eqn_needs_host(eqn):
            inner = next((e for g in subgraphs(eqn.params) for e in g.eqns
                          if eqn_needs_host(e)), None)
            culprit = inner or eqn
            where = culprit.provenance.location() if culprit.provenance else "an unknown place"
            raise ValueError(
                f"export: {fun_name!r} holds {culprit.prim.name!r} (at {where}), which runs "
                "from Python at each call (a loop whose trip count depends on data, a long "
                "scan run rolled, or a host callback); an .mlxfn file holds MLX ops only. "
                "Use lax.scan with unroll=True or a fixed-length fori_loop, and no callbacks.")


def _export_bytes(graph: Graph, example: list, shapeless: bool, metadata: str) -> bytes:
    """The ``.mlxfn`` of ``graph``'s lowering, with MLX's own ops (not the
    CPU approximations: the file may run on any device)."""
    fills = graph.derived.get("shape-following constants")
    graph = _with_contiguous_constants(graph)
    run = _with_fills(graph, fills) if fills else lower(graph)
    previous, config.fast_cpu_math = config.fast_cpu_math, False
    try:
        with tempfile.TemporaryDirectory() as folder, portable_ops():
            path = os.path.join(folder, "function.mlxfn")
            mx.export_function(path, lambda *xs: tuple(run(*xs)), *example,
                               shapeless=shapeless, metadata=metadata)
            with open(path, "rb") as f:
                return f.read()
    finally:
        config.fast_cpu_math = previous


def _with_fills(graph: Graph, fills: dict) -> Callable:
    """``graph`` (a lowered form) as an MLX function that makes each
    shape-following constant once the variable it follows is defined
    (``_make_following``)."""
    by_var: dict[int, list] = {}
    for spec, const_var in zip(fills.values(), [v for v in graph.const_vars if id(v) in fills]):
        by_var.setdefault(id(spec[0]), []).append((const_var, spec[1:]))

    def run(*args: mx.array) -> list:
        env = {id(v): c for v, c in zip(graph.const_vars, graph.consts) if id(v) not in fills}

        def define(var: Any, value: mx.array) -> None:
            env[id(var)] = value
            for const_var, spec in by_var.get(id(var), ()):
                env[id(const_var)] = _make_following(value, *spec, const_var.aval.dtype)

        for v, x in zip(graph.in_vars, args):
            define(v, x)
        for eqn in graph.eqns:
            out = apply_lowering(eqn.prim, [a.value if isinstance(a, Literal) else env[id(a)]
                                            for a in eqn.inputs], eqn.params)
            for v, o in zip(eqn.outs, out if eqn.prim.multiple_results else [out]):
                define(v, o)
        return [a.value if isinstance(a, Literal) else env[id(a)] for a in graph.outs]

    return run


def _with_contiguous_constants(graph: Graph) -> Graph:
    """``graph`` (and the graphs in its equations) with row-contiguous
    constants: ``mx.export_function`` writes a constant's buffer as if it
    were, so a broadcast or transposed constant (folding makes them) would
    be read back wrong."""
    def params_of(eqn: Eqn) -> dict:
        if not subgraphs(eqn.params):
            return eqn.params
        return {k: _with_contiguous_constants(v) if isinstance(v, Graph) else
                tuple(_with_contiguous_constants(g) if isinstance(g, Graph) else g for g in v)
                if isinstance(v, tuple) else v for k, v in eqn.params.items()}

    consts = [mx.contiguous(c) for c in graph.consts]
    mx.eval(consts)
    eqns = [Eqn(e.prim, e.inputs, params_of(e), e.outs, e.provenance) for e in graph.eqns]
    return Graph(graph.in_vars, graph.const_vars, consts, eqns, graph.outs)


def _import(mlxfn: bytes) -> Callable:
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "function.mlxfn")
        with open(path, "wb") as f:
            f.write(mlxfn)
        return mx.import_function(path)


# ----------------------------------------------------------------------------
# Symbolic dimensions
# ----------------------------------------------------------------------------


def _is_spec(x: Any) -> bool:
    return isinstance(x, ShapeDtypeStruct)


def _symbols(args: tuple, kwargs: dict) -> list[str]:
    found: list[str] = []
    for leaf in tree.leaves((args, kwargs), is_leaf=_is_spec):
        if _is_spec(leaf):
            found += [d for d in leaf.shape if isinstance(d, str) and d not in found]
    return found


def _concrete(x: Any, sizes: dict[str, int]) -> Any:
    """``x`` with its symbolic dimensions at ``sizes``."""
    return tree.map(lambda leaf: ShapeDtypeStruct(
        tuple(sizes[d] if isinstance(d, str) else d for d in leaf.shape),
        to_mlx_dtype(leaf.dtype, "export: dtype")) if _is_spec(leaf) else leaf, x,
        is_leaf=_is_spec)


def _symbolic_avals(first: list, second: Sequence, sizes: dict[str, int]
                    ) -> list[ShapeDtypeStruct]:
    """Avals with each dimension that changed between the two stagings
    written in terms of the symbol it follows (``b``, ``2*b``, ``b+1``)."""
    out = []
    for a, b in zip(first, second):
        dims = [d1 if d1 == d2 else _dim_expression(d1, d2, sizes)
                for d1, d2 in zip(a.shape, b.shape)]
        out.append(ShapeDtypeStruct(tuple(dims), a.dtype))
    return out


def _dim_expression(d1: int, d2: int, sizes: dict[str, int]) -> str:
    p1, p2 = _PROBE_SIZES
    scale, rem = divmod(d2 - d1, p2 - p1)
    offset = d1 - scale * p1
    if rem or len(sizes) != 1:
        return "?"
    name = next(iter(sizes))
    term = name if scale == 1 else f"{scale}*{name}"
    return term if offset == 0 else f"{term}{offset:+d}"


class _BakedIn(Exception):
    """Where two stagings at different sizes differ: (equation, what)."""


def _polymorphic(first: Graph, second: Graph, fun_name: str, symbols: list) -> Graph:
    """The lowered form of ``first`` made to run at any size of the symbolic
    dimensions, from its difference with ``second`` (staged at other
    sizes): a ``reshape`` whose target differs in one axis reshapes to -1
    there. Any other difference means the graph bakes a size in, and MLX's
    shapeless export would run it with the first one: raise naming it."""
    lower(first), lower(second)  # compare the forms that are lowered
    try:
        return _unify(first.derived["lowered form"], second.derived["lowered form"])
    except _BakedIn as e:
        eqn, what = e.args
    where = eqn.provenance.location() if eqn is not None and eqn.provenance else "its graph"
    name = eqn.prim.name if eqn is not None else "the graph"
    raise ValueError(
        f"export: {fun_name!r} is not polymorphic in {', '.join(map(repr, symbols))}: "
        f"{name} at {where} {what}, so it depends on the size of a symbolic dimension. Export "
        "at fixed shapes, or keep that size out of Python arithmetic (reshape with -1, "
        "broadcasting).") from None


def _unify(a: Graph, b: Graph) -> Graph:
    if len(a.eqns) != len(b.eqns) or len(a.consts) != len(b.consts):
        raise _BakedIn(None, "stages a different number of operations at the two sizes")
    index_a, index_b = _var_indices(a), _var_indices(b)
    fills = {}
    for var_a, var_b, ca, cb in zip(a.const_vars, b.const_vars, a.consts, b.consts):
        if tuple(ca.shape) == tuple(cb.shape):
            if not mx.array_equal(ca, cb, equal_nan=True).item():
                raise _BakedIn(_first_reader(a, var_a), "reads a constant whose value depends "
                               "on the size (such as 1/n of a mean over that dimension)")
        else:  # a filled constant the size of the batch: made from a variable's shape
            fills[id(var_a)] = _shape_following(a, b, var_a, var_b, ca, cb, index_a, index_b)
    eqns = []
    for ea, eb in zip(a.eqns, b.eqns):
        if ea.prim is not eb.prim:
            raise _BakedIn(ea, f"is {eb.prim.name} at the other size")
        if [_atom_key(x, index_a) for x in ea.inputs] != [_atom_key(x, index_b)
                                                          for x in eb.inputs]:
            raise _BakedIn(ea, "reads other operands at the other size")
        params = {}
        for key, va in ea.params.items():
            vb = eb.params.get(key)
            if isinstance(va, Graph) and isinstance(vb, Graph):
                params[key] = _unify(va, vb)
            elif (isinstance(va, tuple) and isinstance(vb, tuple) and len(va) == len(vb)
                  and any(isinstance(g, Graph) for g in va)):
                params[key] = tuple(_unify(x, y) if isinstance(x, Graph) else x
                                    for x, y in zip(va, vb))
            elif _same_param(va, vb):
                params[key] = va
            elif ea.prim.name == "reshape" and key == "shape" and len(va) == len(vb) and sum(
                    x != y for x, y in zip(va, vb)) == 1:
                params[key] = tuple(-1 if x != y else x for x, y in zip(va, vb))
            else:
                raise _BakedIn(ea, f"has {key}={va!r} at one size and {vb!r} at the other")
        eqns.append(Eqn(ea.prim, ea.inputs, params, ea.outs, ea.provenance))
    unified = Graph(a.in_vars, a.const_vars, a.consts, eqns, a.outs)
    unified.derived["shape-following constants"] = fills
    return unified


def _first_reader(graph: Graph, var: Any) -> Eqn | None:
    return next((e for e in graph.eqns if any(x is var for x in e.inputs)), None)


def _shape_following(a: Graph, b: Graph, var_a: Any, var_b: Any, ca: mx.array, cb: mx.array,
                     index_a: dict, index_b: dict) -> tuple:
    """For a constant whose size on one axis follows the symbolic dimensions
    and whose values are one value or a count along that axis (a gradient's
    seed of ones, the row indices of a gather), how to make it from a
    variable defined before it is read: (variable, its axis of that size,
    the constant's axis, "fill" or "iota", the value, the constant's shape)."""
    reader = _first_reader(a, var_a)
    baked = _BakedIn(reader, f"reads a constant of shape {tuple(ca.shape)} at one size and "
                     f"{tuple(cb.shape)} at the other")
    differing = [k for k, (m, n) in enumerate(zip(ca.shape, cb.shape)) if m != n]
    if ca.ndim != cb.ndim or len(differing) != 1 or not ca.size:
        raise baked
    axis = differing[0]
    kind = value = None
    first = ca.reshape(-1)[0]
    if mx.all(ca == first).item() and mx.all(cb == first).item():
        kind, value = "fill", first
    elif all(_is_count(c, axis) for c in (ca, cb)):
        kind = "iota"
    if kind is None:
        raise baked
    first_use = a.eqns.index(reader) if reader is not None else len(a.eqns)
    known = list(a.in_vars) + [v for e in a.eqns[:first_use] for v in e.outs]
    ids_b = {i: v for v, i in index_b.items()}
    for v in known:
        other = _shape_of_var(b, ids_b.get(index_a[id(v)]))
        if other is None:
            continue
        for ref_axis, (m, n) in enumerate(zip(v.aval.shape, other)):
            if m == ca.shape[axis] and n == cb.shape[axis]:
                return v, ref_axis, axis, kind, value, tuple(ca.shape)
    raise baked


def _is_count(c: mx.array, axis: int) -> bool:
    """Whether ``c`` holds 0, 1, 2, ... along ``axis`` (the same across the
    other axes)."""
    shape = [1] * c.ndim
    shape[axis] = c.shape[axis]
    count = mx.arange(c.shape[axis]).reshape(shape).astype(c.dtype)
    return mx.array_equal(c, mx.broadcast_to(count, c.shape)).item()


def _make_following(ref: mx.array, ref_axis: int, axis: int, kind: str, value: Any,
                    shape: tuple, dtype: mx.Dtype) -> mx.array:
    """The constant ``_shape_following`` describes, from ``ref``'s size on
    ``ref_axis``, with ops MLX's shapeless export resizes (reductions,
    cumulative sums, broadcasting, transposes; not reshapes or broadcasts
    to a shape)."""
    others = tuple(i for i in range(ref.ndim) if i != ref_axis)
    line = mx.sum(mx.zeros_like(ref).astype(mx.float32), axis=others) if others else \
        mx.zeros_like(ref).astype(mx.float32)
    line = mx.cumsum(line + 1, axis=0) - 1 if kind == "iota" else line + value.astype(
        mx.float32)
    # Broadcasting puts the line on the last axis; a transpose moves it.
    moved = tuple(n for i, n in enumerate(shape) if i != axis) + (1,)
    return mx.moveaxis(line + mx.zeros(moved), -1, axis).astype(dtype)


def _shape_of_var(graph: Graph, var_id: int | None) -> tuple | None:
    for v in graph.in_vars + [v for e in graph.eqns for v in e.outs]:
        if id(v) == var_id:
            return tuple(v.aval.shape)
    return None


def _var_indices(graph: Graph) -> dict[int, int]:
    order = graph.in_vars + graph.const_vars + [v for e in graph.eqns for v in e.outs]
    return {id(v): i for i, v in enumerate(order)}


def _atom_key(atom: Any, index: dict[int, int]) -> Any:
    return ("literal", repr(atom.value)) if isinstance(atom, Literal) else index.get(id(atom))


def _same_param(a: Any, b: Any) -> bool:
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_same_param(x, y) for x, y in zip(a, b))
    if callable(a) and callable(b) and not isinstance(a, (mx.Dtype, type)):
        # Rules and closures are made again at each trace: the same code.
        return getattr(a, "__code__", a) is getattr(b, "__code__", b) or a == b
    try:
        return bool(a == b)
    except Exception:
        return a is b


def _check_shapeless(exp: Exported, other: Graph, fun_name: str) -> None:
    """Run the exported file at the second sizes against the graph staged
    there: MLX's shapeless export may refuse an op or give other shapes."""
    rng = np.random.default_rng(0)
    args = [mx.array(rng.standard_normal(a.shape).astype(np.float32)).astype(a.dtype)
            if mx.issubdtype(a.dtype, mx.floating) else mx.zeros(a.shape, a.dtype)
            for a in other.in_avals]
    expected = lower(other)(*args)
    try:
        got = exp._function()(*args)
        mx.eval(got)
    except Exception as e:
        raise ValueError(f"export: MLX's shapeless export of {fun_name!r} fails at other sizes "
                         f"of its symbolic dimensions ({e}); export at fixed shapes") from None
    for k, (g, e) in enumerate(zip(got, expected)):
        if tuple(g.shape) != tuple(e.shape) or not np.allclose(
                np.array(g.astype(mx.float32) if g.dtype == mx.bfloat16 else g),
                np.array(e.astype(mx.float32) if e.dtype == mx.bfloat16 else e),
                rtol=1e-4, atol=1e-5, equal_nan=True):
            raise ValueError(f"export: MLX's shapeless export of {fun_name!r} computes result "
                             f"{k} wrongly at other sizes of its symbolic dimensions; export "
                             "at fixed shapes")


def _check_dims(leaves: list, avals: Sequence[ShapeDtypeStruct], names: Sequence[str],
                fname: str) -> None:
    bound: dict[str, tuple[int, str]] = {}
    for leaf, aval, name in zip(leaves, avals, names):
        for axis, (got, want) in enumerate(zip(leaf.shape, aval.shape)):
            if isinstance(want, int):
                if got != want:
                    raise ValueError(f"{fname}: {name} has size {got} on axis {axis}, exported "
                                     f"as {format_aval(aval)}")
            elif want in bound and bound[want][0] != got:
                raise ValueError(f"{fname}: dimension {want!r} is {bound[want][0]} in "
                                 f"{bound[want][1]} but {got} in {name} (axis {axis})")
            else:
                bound.setdefault(want, (got, name))


# ----------------------------------------------------------------------------
# Trees and avals as JSON
# ----------------------------------------------------------------------------


# Node types that serialize writes, by type and by their serialized name:
# (name, serialize_auxdata, deserialize_auxdata, from_children); namedtuples
# have no auxdata.
_SERIALIZED_TYPES: dict[type, tuple] = {}
_TYPES_BY_NAME: dict[str, type] = {}


def register_namedtuple_serialization(nodetype: type, *, serialized_name: str) -> type:
    """Let ``Exported.serialize`` write trees holding the namedtuple class
    ``nodetype`` under ``serialized_name``, as
    ``jax.export.register_namedtuple_serialization``. ftorch's own
    namedtuples (optimizer states) need no registration.

    >>> import collections
    >>> from ftorch import export
    >>> Batch = collections.namedtuple("Batch", "x y")
    >>> export.register_namedtuple_serialization(Batch, serialized_name="doc.Batch")
    <class 'ftorch.export.Batch'>
    """
    if not (isinstance(nodetype, type) and issubclass(nodetype, tuple)
            and hasattr(nodetype, "_fields")):
        raise TypeError(f"register_namedtuple_serialization: {nodetype!r} is not a namedtuple "
                        "class")
    _register(nodetype, serialized_name, (serialized_name, None, None, None))
    return nodetype


def register_pytree_node_serialization(nodetype: type, *, serialized_name: str,
                                       serialize_auxdata: Callable[[Any], bytes],
                                       deserialize_auxdata: Callable[[bytes], Any],
                                       from_children: Callable | None = None) -> type:
    """Let ``Exported.serialize`` write trees holding nodes of ``nodetype``
    (registered with ``ft.tree.register_node`` first), as
    ``jax.export.register_pytree_node_serialization``: its auxiliary data as
    the bytes ``serialize_auxdata`` makes, read back by
    ``deserialize_auxdata``; ``from_children(aux, children)`` rebuilds a node
    (default: the registered unflatten function).

    >>> import ftorch as ft
    >>> from ftorch import export
    >>> class Pair:
    ...     def __init__(self, a, b, tag): self.a, self.b, self.tag = a, b, tag
    >>> _ = ft.tree.register_node(Pair, lambda p: ((p.a, p.b), p.tag),
    ...                           lambda tag, ab: Pair(*ab, tag))
    >>> export.register_pytree_node_serialization(
    ...     Pair, serialized_name="doc.Pair", serialize_auxdata=str.encode,
    ...     deserialize_auxdata=bytes.decode)
    <class 'ftorch.export.Pair'>
    """
    for f, what in ((serialize_auxdata, "serialize_auxdata"),
                    (deserialize_auxdata, "deserialize_auxdata")):
        api_util.check_callable(f, f"register_pytree_node_serialization: {what}")
    _register(nodetype, serialized_name,
              (serialized_name, serialize_auxdata, deserialize_auxdata, from_children))
    return nodetype


def _register(nodetype: type, name: str, entry: tuple) -> None:
    if not isinstance(name, str) or not name:
        raise TypeError(f"serialized_name must be a non-empty str, got {name!r}")
    if nodetype in _SERIALIZED_TYPES or name in _TYPES_BY_NAME:
        raise ValueError(f"{nodetype.__name__} or the name {name!r} is registered for "
                         "serialization already")
    _SERIALIZED_TYPES[nodetype] = entry
    _TYPES_BY_NAME[name] = nodetype


def _ftorch_name(nodetype: type) -> str | None:
    """The serialized name of one of ftorch's own namedtuple classes."""
    module = getattr(nodetype, "__module__", "")
    if (module.startswith("ftorch.") and issubclass(nodetype, tuple)
            and hasattr(nodetype, "_fields")):
        return f"{module}:{nodetype.__qualname__}"
    return None


def _type_named(name: str) -> type:
    if name in _TYPES_BY_NAME:
        return _TYPES_BY_NAME[name]
    module, _, qualname = name.partition(":")
    if module.startswith("ftorch.") and qualname:
        found: Any = importlib.import_module(module)
        for part in qualname.split("."):
            found = getattr(found, part, None)
        if isinstance(found, type) and _ftorch_name(found) == name:
            return found
    raise ValueError(f"deserialize: the tree holds a node serialized as {name!r}, which is not "
                     "registered (register_namedtuple_serialization / "
                     "register_pytree_node_serialization)")


def _encode_tree(treedef: Any) -> Any:
    """A tree as JSON: tuples, lists, dicts (str keys) and None, and
    namedtuples and nodes registered for serialization, by name; leaves are
    ``{"leaf": i}``."""
    skeleton = tree.unflatten(treedef, list(range(treedef.num_leaves)))

    def encode(node: Any) -> Any:
        kind = type(node)
        if kind is int:
            return {"leaf": node}
        if node is None:
            return None
        if kind is tuple:
            return {"tuple": [encode(c) for c in node]}
        if kind is list:
            return [encode(c) for c in node]
        if kind is dict and all(isinstance(k, str) for k in node):
            return {"dict": [[k, encode(v)] for k, v in node.items()]}
        entry = _SERIALIZED_TYPES.get(kind)
        name = entry[0] if entry is not None else _ftorch_name(kind)
        if name is not None and (entry is None or entry[1] is None):  # a namedtuple
            return {"namedtuple": name, "children": [encode(c) for c in node]}
        if entry is not None:
            children, aux, _, _ = optree.tree_flatten_one_level(node, namespace=tree.NAMESPACE)
            return {"node": name, "aux": base64.b64encode(entry[1](aux)).decode(),
                    "children": [encode(c) for c in children]}
        raise TypeError(
            f"serialize: the argument or result tree holds a {kind.__name__}; tuples, lists, "
            "dicts with str keys, None and ftorch's namedtuples are written, other types once "
            "registered with register_namedtuple_serialization or "
            "register_pytree_node_serialization")

    return encode(skeleton)


def _decode_tree(data: Any) -> Any:
    def decode(node: Any) -> Any:
        if node is None:
            return None
        if isinstance(node, list):
            return [decode(c) for c in node]
        if "leaf" in node:
            return _Leaf(node["leaf"])
        if "tuple" in node:
            return tuple(decode(c) for c in node["tuple"])
        if "dict" in node:
            return {k: decode(v) for k, v in node["dict"]}
        children = [decode(c) for c in node["children"]]
        if "namedtuple" in node:
            return _type_named(node["namedtuple"])(*children)
        nodetype = _type_named(node["node"])
        _, _, deserialize_aux, from_children = _SERIALIZED_TYPES[nodetype]
        aux = deserialize_aux(base64.b64decode(node["aux"]))
        if from_children is not None:
            return from_children(aux, children)
        entry = optree.register_pytree_node.get(nodetype, namespace=tree.NAMESPACE)
        return entry.unflatten_func(aux, children)

    return tree.structure(decode(data), is_leaf=lambda x: isinstance(x, _Leaf))


class _Leaf:
    __slots__ = ("index",)

    def __init__(self, index: int):
        self.index = index


def _encode_aval(aval: ShapeDtypeStruct) -> dict:
    return {"shape": list(aval.shape), "dtype": str(aval.dtype).removeprefix("mlx.core.")}


def _decode_aval(data: dict) -> ShapeDtypeStruct:
    return ShapeDtypeStruct(tuple(data["shape"]), getattr(mx, data["dtype"]))


def _path_name(root: str, path: tuple) -> str:
    return root + "".join(f"[{p!r}]" for p in path)


def _onnx_name(name: str) -> str:
    """An ONNX value name from a leaf name (``argument params['w']`` ->
    ``params.w``)."""
    name = name.removeprefix("argument ")
    for old, new in (("['", "."), ("']", ""), ("[", "."), ("]", ""), (" ", "_")):
        name = name.replace(old, new)
    return name

