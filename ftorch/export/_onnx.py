"""ONNX export of ftorch's graph IR: ``to_onnx(graph)``.

The model targets ONNX opset 18 (the default domain) and IR version 9, which
onnxruntime 1.18 and later run. A graph's inputs and outputs become the
model's, typed with their shapes and dtypes; its constants become
initializers; a Python-scalar ``Literal`` becomes an initializer of the dtype
its equation gives it (the graph's weak typing: it takes the dtype of the
equation's other operands, as MLX treats a Python scalar).

Each primitive has one mapping in ``MAPPINGS`` (one small function per
primitive), written against MLX's semantics where ONNX's differ:

- elementwise math and comparisons run in the dtype MLX computes them in
  (operands are cast first); integer ``floor_divide`` rounds down and
  ``remainder`` takes the divisor's sign (ONNX's integer ``Div`` truncates);
  an integer division by zero gives what MLX gives instead of trapping;
  ``round`` is half to even; ``expm1`` and ``log1p`` are Kahan's accurate
  forms; ``gelu`` is the erf form or the tanh form as its param says;
- reductions, ``argmax``/``argmin``, ``max_pool`` and the sorts treat NaN as
  MLX does (a NaN wins a max or min; sorting puts NaNs last ascending, first
  descending, and is stable);
- layouts: MLX convolutions and pooling are channels last (``NHWC``, kernels
  ``(C_out, *K, C_in / groups)``), ONNX's channels first, so ``Conv`` and the
  pools are wrapped in ``Transpose`` nodes; input dilation (transposed
  convolutions) inserts the zeros explicitly and a flipped kernel is sliced
  backwards; pooling pads explicitly (``-inf`` for max, zeros counted in the
  mean for average, as ``mlx.nn``);
- indexing: ``gather`` and the scatters address every element through one
  index grid (``GatherND``/``ScatterND``), ``take_along_axis`` is
  ``GatherElements``;
- higher-order primitives: ``jit``, ``remat`` and the custom-rule calls
  (``custom_jvp_call``, ``custom_vjp_call``, ``custom_vmap_call``: the
  primal function) are inlined; ``cond`` runs every branch and selects, as
  jit's own lowering does; ``scan`` becomes an ONNX ``Scan`` and ``while`` an
  ONNX ``Loop`` (their bodies read constants from the enclosing graph).

The sign of a zero result is not kept everywhere: onnxruntime's ``Where``
gives 0.0 for a -0.0 it selects from its first operand, and its ``Relu``
passes -0.0 through where MLX gives 0.0.

Not mapped (``NotImplementedError`` naming the primitive): host callbacks
(``pure_callback``, ``debug_callback``), random sampling (ONNX's generators
take no keys), decompositions, solves and matrix functions, FFTs, complex
numbers, quantization, collectives, the special functions ONNX has no
operator for (``lgamma``, ``erfinv``, ``erfc``, ...), ``arctan2``,
``cumprod``/``cummax``/``cummin``, bit manipulation beyond and/or/xor/not
(shifts, bitcasts, ``copysign``, ``nextafter``), ``reduce_precision`` and
``rope``. Whatever is not in ``MAPPINGS`` raises rather than export a model
that computes something else.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import mlx.core as mx
import numpy as np

from ftorch.core import ShapeDtypeStruct, format_aval, is_floating
from ftorch.graph import Eqn, Graph, Literal, Var, aval_of_atom, simplify
from ftorch.primitives.conv import _lowest  # what max pooling pads with
from ftorch.primitives.indexing import ARRAY, indexed_shape
from ftorch.transforms.staging import stage

if TYPE_CHECKING:
    import onnx

__all__ = ["to_onnx", "OPSET", "MAPPINGS"]

#: The ONNX opset of the default domain that exported models import.
OPSET = 18
#: The IR version written into models: the newest that onnxruntime 1.18 reads.
IR_VERSION = 9

_INT64_MIN = -(2**63)


def _import_onnx():
    try:
        import onnx
    except ImportError as e:
        raise ImportError("to_onnx needs the onnx package: pip install 'ftorch[onnx]'") from e
    return onnx


# ----------------------------------------------------------------------------
# Dtypes
# ----------------------------------------------------------------------------

_NUMPY_DTYPES = {
    mx.bool_: np.bool_, mx.uint8: np.uint8, mx.uint16: np.uint16, mx.uint32: np.uint32,
    mx.uint64: np.uint64, mx.int8: np.int8, mx.int16: np.int16, mx.int32: np.int32,
    mx.int64: np.int64, mx.float16: np.float16, mx.float32: np.float32,
    mx.float64: np.float64,
}
# bfloat16 has no NumPy dtype: its constants are written as raw bits.
_EXPORTABLE = frozenset(_NUMPY_DTYPES) | {mx.bfloat16}


def _onnx_dtype(dtype: mx.Dtype) -> int:
    from onnx import TensorProto

    return {
        mx.bool_: TensorProto.BOOL, mx.uint8: TensorProto.UINT8, mx.uint16: TensorProto.UINT16,
        mx.uint32: TensorProto.UINT32, mx.uint64: TensorProto.UINT64,
        mx.int8: TensorProto.INT8, mx.int16: TensorProto.INT16, mx.int32: TensorProto.INT32,
        mx.int64: TensorProto.INT64, mx.float16: TensorProto.FLOAT16,
        mx.bfloat16: TensorProto.BFLOAT16, mx.float32: TensorProto.FLOAT,
        mx.float64: TensorProto.DOUBLE,
    }[dtype]


def _promoted(dtypes: Sequence[mx.Dtype], scalars: Sequence[Any] = ()) -> mx.Dtype:
    """The dtype MLX computes a binary op in: the arrays' dtypes promoted,
    then each Python scalar taking part weakly (an int takes a float array's
    dtype, a float turns an integer array into float32)."""
    probe = None
    for d in dtypes:
        z = mx.zeros((), d)
        probe = z if probe is None else mx.where(True, probe, z)
    for s in scalars:
        probe = mx.array(s) if probe is None else mx.where(True, probe, s)
    return probe.dtype


# ----------------------------------------------------------------------------
# The builder: nodes, initializers, fresh names
# ----------------------------------------------------------------------------


class _Builder:
    """The nodes and initializers of the model being written, and the names
    in use. A loop body (``Scan``, ``Loop``) is a child builder: its nodes are
    its own, its constants and names the model's."""

    def __init__(self, onnx_module: Any, parent: _Builder | None = None):
        self.onnx = onnx_module
        self.nodes: list = []
        self.root = self if parent is None else parent.root
        if parent is None:
            self.initializers: list = []
            self.taken: set[str] = set()
            self.counter = 0
            self.cached: dict = {}
        self.scope = ""

    def fresh(self, hint: str = "t") -> str:
        root = self.root
        while True:
            root.counter += 1
            name = f"{hint}{root.counter}"
            if name not in root.taken:
                root.taken.add(name)
                return name

    def node(self, op: str, inputs: Sequence[str], outputs: int | Sequence[str] = 1,
             **attrs: Any) -> Any:
        """Append ``op(*inputs, **attrs)``; its output name (or names, when
        ``outputs`` is a count above 1 or a list of names)."""
        names = [self.fresh() for _ in range(outputs)] if isinstance(outputs, int) \
            else list(outputs)
        label = f"{self.scope}/{op}" if self.scope else op
        self.nodes.append(self.onnx.helper.make_node(
            op, list(inputs), names, name=self.fresh(label + "_"), **attrs))
        return names[0] if isinstance(outputs, int) and outputs == 1 else names

    def const(self, value: Any, dtype: mx.Dtype) -> str:
        """An initializer holding ``value`` (an array or scalar) as ``dtype``;
        small constants are shared."""
        root = self.root
        array = np.asarray(value, _NUMPY_DTYPES.get(dtype, np.float32))
        key = (dtype, array.shape, array.tobytes()) if array.size <= 16 else None
        if key is not None and key in root.cached:
            return root.cached[key]
        name = self.fresh("c")
        root.initializers.append(_tensor(self.onnx, array, dtype, name))
        if key is not None:
            root.cached[key] = name
        return name

    def ints(self, values: Sequence[int]) -> str:
        """A 1-d int64 initializer: shapes, axes, pads, starts."""
        return self.const(np.asarray(list(values), np.int64), mx.int64)

    def scalar(self, value: Any, dtype: mx.Dtype) -> str:
        return self.const(np.asarray(value), dtype)

    def cast(self, name: str, src: mx.Dtype, dst: mx.Dtype) -> str:
        if src == dst:
            return name
        return self.node("Cast", [name], to=_onnx_dtype(dst))


def _tensor(onnx_module: Any, array: np.ndarray, dtype: mx.Dtype, name: str):
    """``array`` as an ONNX tensor of ``dtype``."""
    if dtype == mx.bfloat16:
        bits = np.asarray(mx.array(array, dtype=mx.float32).astype(mx.bfloat16).view(mx.uint16))
        return onnx_module.helper.make_tensor(name, _onnx_dtype(dtype), bits.shape,
                                              bits.tobytes(), raw=True)
    return onnx_module.numpy_helper.from_array(np.asarray(array, _NUMPY_DTYPES[dtype]), name)


def _numpy_of(array: mx.array) -> np.ndarray:
    """A graph constant's value, for an initializer (bfloat16 via float32,
    which holds it exactly)."""
    if array.dtype == mx.bfloat16:
        return np.asarray(array.astype(mx.float32))
    return np.asarray(array)


# ----------------------------------------------------------------------------
# One equation at a time
# ----------------------------------------------------------------------------


class _Equation:
    """One equation being converted: its params, its operands as ONNX values
    (cast to a dtype on request), its result types, and the builder to emit
    nodes with. A mapping reads everything it needs from here."""

    def __init__(self, builder: _Builder, eqn: Eqn, env: dict[int, str]):
        self.builder = builder
        self.eqn = eqn
        self.env = env
        self.params = eqn.params
        self.out_avals = [v.aval for v in eqn.outs]

    # What the equation is --------------------------------------------------

    @property
    def n_in(self) -> int:
        return len(self.eqn.inputs)

    @property
    def out_dtype(self) -> mx.Dtype:
        return self.out_avals[0].dtype

    @property
    def out_shape(self) -> tuple[int, ...]:
        return tuple(self.out_avals[0].shape)

    def shape(self, i: int) -> tuple[int, ...]:
        return tuple(aval_of_atom(self.eqn.inputs[i]).shape)

    def dtype(self, i: int) -> mx.Dtype:
        """Operand ``i``'s dtype; a Literal's is the one the equation gives it."""
        atom = self.eqn.inputs[i]
        if isinstance(atom, Literal):
            return self.literal_dtype(atom)
        return atom.aval.dtype

    def literal_dtype(self, literal: Literal) -> mx.Dtype:
        # In an elementwise op a Python scalar is weakly typed: it takes the
        # dtype of the other operands (where's condition takes no part).
        inputs = self.eqn.inputs[1:] if self.eqn.prim.name == "where" else self.eqn.inputs
        arrays = [a.aval.dtype for a in inputs if isinstance(a, Var)]
        if self.eqn.prim.elementwise and arrays:
            return _promoted(arrays, [literal.value])
        return aval_of_atom(literal).dtype

    def promoted(self) -> mx.Dtype:
        """The dtype MLX computes this elementwise op in (a comparison's
        operands' common dtype)."""
        arrays = [a.aval.dtype for a in self.eqn.inputs if isinstance(a, Var)]
        scalars = [a.value for a in self.eqn.inputs if isinstance(a, Literal)]
        return _promoted(arrays, scalars)

    # Operands as ONNX values -----------------------------------------------

    def operand(self, i: int, dtype: mx.Dtype | None = None) -> str:
        """Operand ``i`` as an ONNX value, cast to ``dtype`` if given."""
        atom = self.eqn.inputs[i]
        if isinstance(atom, Literal):
            return self.builder.scalar(atom.value, dtype or self.literal_dtype(atom))
        name = self.env[id(atom)]
        return name if dtype is None else self.builder.cast(name, atom.aval.dtype, dtype)

    def operands(self, dtype: mx.Dtype | None = None) -> list[str]:
        return [self.operand(i, dtype) for i in range(self.n_in)]

    # Emitting --------------------------------------------------------------

    def node(self, op: str, inputs: Sequence[str], outputs: int | Sequence[str] = 1,
             **attrs: Any) -> Any:
        return self.builder.node(op, inputs, outputs, **attrs)

    def ints(self, values: Sequence[int]) -> str:
        return self.builder.ints(values)

    def scalar(self, value: Any, dtype: mx.Dtype) -> str:
        return self.builder.scalar(value, dtype)

    def const(self, value: Any, dtype: mx.Dtype) -> str:
        return self.builder.const(value, dtype)

    def cast(self, name: str, src: mx.Dtype, dst: mx.Dtype) -> str:
        return self.builder.cast(name, src, dst)

    def inline(self, graph: Graph, inputs: Sequence[str]) -> list[str]:
        """``graph`` emitted in place, on ``inputs``: its outputs."""
        return _emit_graph(self.builder, graph, inputs)


def _describe_params(params: dict) -> str:
    parts = []
    for key, value in params.items():
        if isinstance(value, Graph):
            text = "<graph>"
        elif callable(value) and hasattr(value, "__qualname__"):
            text = value.__qualname__
        else:
            text = repr(value)
            text = text if len(text) <= 40 else text[:37] + "..."
        parts.append(f"{key}={text}")
    return ", ".join(parts)


def _unmapped(eqn: Eqn, why: str = "") -> NotImplementedError:
    params = _describe_params(eqn.params)
    return NotImplementedError(
        f"to_onnx: primitive {eqn.prim.name!r} has no ONNX mapping (opset {OPSET})"
        + (f": {why}" if why else "") + (f"; params: {params}" if params else "")
        + "; the mapped primitives are listed in ftorch.export._onnx.MAPPINGS")


def _emit_graph(builder: _Builder, graph: Graph, inputs: Sequence[str]) -> list[str]:
    """Emit ``graph``'s equations on the ONNX values ``inputs``; the values
    of its outputs (Literals as constants)."""
    env: dict[int, str] = {}
    for v, c in zip(graph.const_vars, graph.consts):
        _check_dtype(v.aval, "a constant")
        env[id(v)] = builder.const(_numpy_of(c), v.aval.dtype)
    for v, name in zip(graph.in_vars, inputs):
        env[id(v)] = name
    for eqn in graph.eqns:
        mapping = MAPPINGS.get(eqn.prim.name)
        if mapping is None:
            raise _unmapped(eqn)
        for aval in [aval_of_atom(a) for a in eqn.inputs] + [v.aval for v in eqn.outs]:
            if aval.dtype not in _EXPORTABLE:
                raise _unmapped(eqn, f"dtype {aval.dtype} has no ONNX counterpart here")
        outer_scope, builder.scope = builder.scope, eqn.prim.name
        try:
            outs = mapping(_Equation(builder, eqn, env))
        finally:
            builder.scope = outer_scope
        outs = [outs] if isinstance(outs, str) else list(outs)
        for v, name in zip(eqn.outs, outs):
            env[id(v)] = name
    return [builder.scalar(a.value, aval_of_atom(a).dtype) if isinstance(a, Literal)
            else env[id(a)] for a in graph.outs]


def _check_dtype(aval: ShapeDtypeStruct, what: str) -> None:
    if aval.dtype not in _EXPORTABLE:
        raise NotImplementedError(
            f"to_onnx: {what} of {format_aval(aval)}: dtype {aval.dtype} has no ONNX "
            "counterpart here")


# ----------------------------------------------------------------------------
# The public function
# ----------------------------------------------------------------------------


def to_onnx(graph: Graph, path: str | os.PathLike | None = None, *,
            input_names: Sequence[str] | None = None,
            output_names: Sequence[str] | None = None, opset: int = OPSET,
            model_name: str = "ftorch") -> onnx.ModelProto:
    """``graph`` (as ``ft.jit`` stages it) as an ONNX model, checked with
    ``onnx.checker`` and written to ``path`` if given.

    Inputs and outputs are typed with the graph's shapes and dtypes and
    named ``input_names`` / ``output_names`` (default ``input_<i>``,
    ``output_<i>``). A primitive without an ONNX mapping raises
    ``NotImplementedError`` naming it (see the module's docstring for what is
    mapped). Needs the ``onnx`` package (``pip install 'ftorch[onnx]'``).

    Args:
        graph: A staged graph: ``ftorch.graph.simplify(ft.make_graph(f)(*args))``.
        path: Where to write the model (``.onnx``), or None.
        input_names: One name per graph input.
        output_names: One name per graph output.
        opset: The opset to declare; only ``OPSET`` (18) is mapped.
        model_name: The ONNX graph's name.

    >>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx, numpy as np
    >>> import onnxruntime
    >>> from ftorch.graph import simplify
    >>> from ftorch.export._onnx import to_onnx
    >>> graph = simplify(ft.make_graph(lambda x: fnp.tanh(x) * 2.0)(mx.zeros((2, 3))))
    >>> model = to_onnx(graph, input_names=["x"], output_names=["y"])
    >>> [node.op_type for node in model.graph.node]
    ['Tanh', 'Mul', 'Identity']
    >>> session = onnxruntime.InferenceSession(model.SerializeToString(),
    ...                                        providers=["CPUExecutionProvider"])
    >>> (y,) = session.run(None, {"x": np.full((2, 3), 0.5, np.float32)})
    >>> y.shape, bool(np.allclose(y, 2 * np.tanh(0.5)))
    ((2, 3), True)
    """
    onnx = _import_onnx()
    if opset != OPSET:
        raise ValueError(f"to_onnx: the mappings are written for opset {OPSET}, got "
                         f"opset={opset}")
    input_names = _names(input_names, "input", len(graph.in_vars))
    output_names = _names(output_names, "output", len(graph.outs))
    if set(input_names) & set(output_names):
        raise ValueError("to_onnx: input_names and output_names must differ, got "
                         f"{sorted(set(input_names) & set(output_names))} in both")
    for v in graph.in_vars:
        _check_dtype(v.aval, "an input")
    for aval in graph.out_avals:
        _check_dtype(aval, "an output")

    builder = _Builder(onnx)
    builder.taken.update(input_names, output_names)
    outs = _emit_graph(builder, graph, input_names)
    for value, name in zip(outs, output_names):
        builder.node("Identity", [value], [name])

    def typed(name: str, aval: ShapeDtypeStruct):
        return onnx.helper.make_tensor_value_info(name, _onnx_dtype(aval.dtype),
                                                  list(aval.shape))

    onnx_graph = onnx.helper.make_graph(
        builder.nodes, model_name,
        [typed(n, v.aval) for n, v in zip(input_names, graph.in_vars)],
        [typed(n, a) for n, a in zip(output_names, graph.out_avals)],
        initializer=builder.initializers)
    model = onnx.helper.make_model(onnx_graph, producer_name="ftorch",
                                   opset_imports=[onnx.helper.make_opsetid("", OPSET)])
    model.ir_version = IR_VERSION
    onnx.checker.check_model(model, full_check=True)
    if path is not None:
        onnx.save_model(model, os.fspath(path))
    return model


def _names(names: Sequence[str] | None, kind: str, n: int) -> list[str]:
    if names is None:
        return [f"{kind}_{i}" for i in range(n)]
    names = list(names)
    if len(names) != n:
        raise ValueError(f"to_onnx: {n} {kind}s need {n} {kind}_names, got {len(names)}")
    if len(set(names)) != n or not all(isinstance(s, str) and s for s in names):
        raise ValueError(f"to_onnx: {kind}_names must be distinct non-empty strings, "
                         f"got {names}")
    return names


# ----------------------------------------------------------------------------
# Shared pieces of mappings
# ----------------------------------------------------------------------------


def _bool(e: _Equation, i: int) -> str:
    return e.operand(i, mx.bool_)


def _full(e: _Equation, value: Any, shape: Sequence[int], dtype: mx.Dtype) -> str:
    """A constant of ``shape`` filled with ``value`` (an Expand of a scalar)."""
    return e.node("Expand", [e.scalar(value, dtype), e.ints(shape)])


def _has_nan(e: _Equation, x: str, axes: Sequence[int], keepdims: bool) -> str:
    """Whether each slice of ``x`` over ``axes`` holds a NaN (bool)."""
    nans = e.node("Cast", [e.node("IsNaN", [x])], to=_onnx_dtype(mx.int32))
    found = e.node("ReduceMax", [nans, e.ints(axes)], keepdims=int(keepdims))
    return e.node("Cast", [found], to=_onnx_dtype(mx.bool_))


def _nan_wins(e: _Equation, x: str, y: str, axes: Sequence[int], keepdims: bool,
              dtype: mx.Dtype) -> str:
    """``y`` (a max or min of ``x`` over ``axes``) made NaN where its slice
    holds a NaN: ONNX's reductions and pools skip NaNs, MLX's propagate them."""
    if not is_floating(dtype):
        return y
    return e.node("Where", [_has_nan(e, x, axes, keepdims), e.scalar(math.nan, dtype), y])


def _arg_extreme_index(e: _Equation, x: str, axis: int, keepdims: bool, op: str = "ArgMax",
                       floating: bool = True) -> str:
    """``ArgMax``/``ArgMin`` (int64) at the first extreme, or at the first NaN
    where there is one (MLX's: a NaN wins; ONNX's skip NaNs)."""
    idx = e.node(op, [x], axis=axis, keepdims=int(keepdims), select_last_index=0)
    if not floating:
        return idx
    nans = e.cast(e.node("IsNaN", [x]), mx.bool_, mx.int32)
    first_nan = e.node("ArgMax", [nans], axis=axis, keepdims=int(keepdims), select_last_index=0)
    return e.node("Where", [_has_nan(e, x, (axis,), keepdims), first_nan, idx])


def _signbit(e: _Equation, x: str, dtype: mx.Dtype) -> str:
    """Whether ``x`` is negative, -0.0 included (1 / -0.0 is -inf)."""
    zero = e.scalar(0, dtype)
    negative_zero = e.node("And", [e.node("Equal", [x, zero]),
                                   e.node("Less", [e.node("Reciprocal", [x]), zero])])
    return e.node("Or", [e.node("Less", [x, zero]), negative_zero])


def _slice(e: _Equation, x: str, starts: Sequence[int], ends: Sequence[int],
           axes: Sequence[int], steps: Sequence[int] | None = None) -> str:
    inputs = [x, e.ints(starts), e.ints(ends), e.ints(axes)]
    if steps is not None:
        inputs.append(e.ints(steps))
    return e.node("Slice", inputs)


def _reshape(e: _Equation, x: str, shape: Sequence[int]) -> str:
    return e.node("Reshape", [x, e.ints(shape)], allowzero=1)


def _transpose(e: _Equation, x: str, perm: Sequence[int]) -> str:
    if tuple(perm) == tuple(range(len(perm))):
        return x
    return e.node("Transpose", [x], perm=list(perm))


def _log1p(e: _Equation, x: str, dtype: mx.Dtype) -> str:
    """``log(1 + x)`` accurate for small ``x`` (Kahan: with ``u = 1 + x``
    rounded, ``log(u) * x / (u - 1)``; ``x`` itself where ``u == 1``)."""
    one = e.scalar(1, dtype)
    u = e.node("Add", [x, one])
    um1 = e.node("Sub", [u, one])
    exact = e.node("Equal", [u, one])
    safe = e.node("Where", [exact, one, um1])
    y = e.node("Div", [e.node("Mul", [e.node("Log", [u]), x]), safe])
    y = e.node("Where", [e.node("IsInf", [u], detect_negative=0), u, y])  # log1p(inf)
    return e.node("Where", [exact, x, y])


# ----------------------------------------------------------------------------
# Elementwise mappings
# ----------------------------------------------------------------------------


def _in_result_dtype(op: str, **attrs: Any) -> Callable[[_Equation], str]:
    """An elementwise op computed in the result's dtype (MLX casts its
    operands to it: ``sin`` of an integer array is float32)."""

    def mapping(e: _Equation) -> str:
        return e.node(op, e.operands(e.out_dtype), **attrs)

    mapping.__doc__ = f"ONNX ``{op}`` on the operands cast to the result's dtype."
    return mapping


def _comparison(op: str, negate: bool = False) -> Callable[[_Equation], str]:
    """A comparison in the operands' promoted dtype (a float Python scalar
    compares an integer array as float32); ONNX orders no booleans, so they
    compare as int32."""

    def mapping(e: _Equation) -> str:
        dtype = e.promoted()
        if dtype == mx.bool_ and op != "Equal":
            dtype = mx.int32
        out = e.node(op, e.operands(dtype))
        return e.node("Not", [out]) if negate else out

    return mapping


def _logical(op: str) -> Callable[[_Equation], str]:
    """A logical op on the operands' truth values."""

    def mapping(e: _Equation) -> str:
        return e.node(op, e.operands(mx.bool_))

    return mapping


def _bitwise(op: str, bool_op: str) -> Callable[[_Equation], str]:
    """A bitwise op: its logical counterpart on booleans."""

    def mapping(e: _Equation) -> str:
        return e.node(bool_op if e.out_dtype == mx.bool_ else op, e.operands(e.out_dtype))

    return mapping


def _identity(e: _Equation) -> str:
    """No computation (stop_gradient, checkpoint_name, ...)."""
    return e.node("Identity", [e.operand(0)])


def _identities(e: _Equation) -> list[str]:
    """Each operand as it is (optimization_barrier)."""
    return [e.node("Identity", [name]) for name in e.operands()]


def _floor_or_ceil(op: str) -> Callable[[_Equation], str]:
    def mapping(e: _Equation) -> str:
        if not is_floating(e.out_dtype):  # integers are whole already
            return e.node("Identity", [e.operand(0, e.out_dtype)])
        return e.node(op, [e.operand(0, e.out_dtype)])

    return mapping


def _sign(e: _Equation) -> str:
    """ONNX ``Sign``, except that NaN gives NaN and a zero itself (MLX's, JAX's)."""
    dtype = e.out_dtype
    x = e.operand(0, dtype)
    s = e.node("Sign", [x])
    if not is_floating(dtype):
        return s
    return e.node("Where", [e.node("Equal", [s, e.scalar(0, dtype)]), x, s])


def _expm1(e: _Equation) -> str:
    """``exp(x) - 1`` accurate for small ``x`` (Kahan: with ``u = exp(x)``,
    ``(u - 1) * x / log(u)``; ``x`` where ``u == 1``, -1 where ``u - 1 == -1``,
    ``u`` where it is infinite)."""
    dtype = e.out_dtype
    x = e.operand(0, dtype)
    one = e.scalar(1, dtype)
    u = e.node("Exp", [x])
    um1 = e.node("Sub", [u, one])
    log_u = e.node("Log", [u])
    exact = e.node("Equal", [u, one])
    y = e.node("Div", [e.node("Mul", [um1, x]), e.node("Where", [exact, one, log_u])])
    y = e.node("Where", [e.node("Equal", [um1, e.scalar(-1, dtype)]), um1, y])
    y = e.node("Where", [e.node("IsInf", [u], detect_negative=0), u, y])
    return e.node("Where", [exact, x, y])


def _log1p_mapping(e: _Equation) -> str:
    return _log1p(e, e.operand(0, e.out_dtype), e.out_dtype)


def _log_base(base: float) -> Callable[[_Equation], str]:
    def mapping(e: _Equation) -> str:
        dtype = e.out_dtype
        log = e.node("Log", [e.operand(0, dtype)])
        return e.node("Div", [log, e.scalar(math.log(base), dtype)])

    return mapping


def _rsqrt(e: _Equation) -> str:
    return e.node("Reciprocal", [e.node("Sqrt", [e.operand(0, e.out_dtype)])])


def _square(e: _Equation) -> str:
    x = e.operand(0, e.out_dtype)
    return e.node("Mul", [x, x])


def _round(e: _Equation) -> str:
    """Half to even (ONNX ``Round``'s rule, as MLX's), at ``decimals`` places:
    ``round(x * 10**d) / 10**d`` as MLX computes it."""
    decimals = e.params["decimals"]
    dtype = e.out_dtype
    x = e.operand(0, dtype)
    if not is_floating(dtype):
        if decimals < 0:
            raise _unmapped(e.eqn, "an integer rounded to negative decimals")
        return e.node("Identity", [x])
    if decimals == 0:
        return e.node("Round", [x])
    scale = e.scalar(10.0 ** decimals, dtype)
    return e.node("Div", [e.node("Round", [e.node("Mul", [x, scale])]), scale])


def _isnan(e: _Equation) -> str:
    if not is_floating(e.dtype(0)):
        return _full(e, False, e.out_shape, mx.bool_)
    return e.node("IsNaN", [e.operand(0)])


def _isinf(e: _Equation) -> str:
    if not is_floating(e.dtype(0)):
        return _full(e, False, e.out_shape, mx.bool_)
    return e.node("IsInf", [e.operand(0)])


def _isfinite(e: _Equation) -> str:
    if not is_floating(e.dtype(0)):
        return _full(e, True, e.out_shape, mx.bool_)
    x = e.operand(0)
    return e.node("Not", [e.node("Or", [e.node("IsNaN", [x]), e.node("IsInf", [x])])])


def _logical_not(e: _Equation) -> str:
    return e.node("Not", [_bool(e, 0)])


def _invert(e: _Equation) -> str:
    if e.out_dtype == mx.bool_:
        return e.node("Not", [e.operand(0, mx.bool_)])
    return e.node("BitwiseNot", [e.operand(0, e.out_dtype)])


def _cbrt(e: _Equation) -> str:
    """MLX's cube root as ftorch computes it: ``|x| ** (1/3)`` refined by one
    Newton step (kept where finite), with ``x``'s sign."""
    dtype = e.out_dtype
    x = e.operand(0, dtype)
    ax = e.node("Abs", [x])
    y = e.node("Pow", [ax, e.scalar(1.0 / 3.0, dtype)])
    y2 = e.node("Mul", [y, y])
    step = e.node("Div", [e.node("Sub", [e.node("Mul", [y2, y]), ax]),
                          e.node("Mul", [e.scalar(3.0, dtype), y2])])
    refined = e.node("Sub", [y, step])
    finite = e.node("Not", [e.node("Or", [e.node("IsNaN", [refined]),
                                          e.node("IsInf", [refined])])])
    y = e.node("Where", [finite, refined, y])
    return e.node("Where", [_signbit(e, x, dtype), e.node("Neg", [y]), y])


def _divide_guarded(e: _Equation, b: str, dtype: mx.Dtype) -> tuple[str, str]:
    """An integer divisor with 0 replaced by 1 (ONNX's integer Div and Mod
    trap on 0), and where it was 0."""
    zero = e.node("Equal", [b, e.scalar(0, dtype)])
    return e.node("Where", [zero, e.scalar(1, dtype), b]), zero


def _floor_divide(e: _Equation) -> str:
    """Division rounded down. Integers: ONNX's ``Div`` truncates, so a
    quotient with a remainder of the other sign than the divisor goes one
    lower; a zero divisor gives 0, as MLX."""
    dtype = e.out_dtype
    a, b = e.operand(0, dtype), e.operand(1, dtype)
    if is_floating(dtype):
        return e.node("Floor", [e.node("Div", [a, b])])
    safe, zero = _divide_guarded(e, b, dtype)
    q = e.node("Div", [a, safe])
    r = e.node("Sub", [a, e.node("Mul", [q, safe])])
    q = e.node("Sub", [q, e.node("Cast", [_off_sign(e, r, safe, dtype)],
                                 to=_onnx_dtype(dtype))])
    return e.node("Where", [zero, e.scalar(0, dtype), q])


def _off_sign(e: _Equation, r: str, b: str, dtype: mx.Dtype) -> str:
    """Where a truncated remainder ``r`` is nonzero and of the other sign than
    the divisor ``b``."""
    zero = e.scalar(0, dtype)
    return e.node("And", [e.node("Not", [e.node("Equal", [r, zero])]),
                          e.node("Xor", [e.node("Less", [r, zero]),
                                         e.node("Less", [b, zero])])])


def _remainder(e: _Equation) -> str:
    """The remainder with the divisor's sign (Python's ``%``, MLX's). An
    integer remainder by zero gives the dividend, as MLX."""
    dtype = e.out_dtype
    a, b = e.operand(0, dtype), e.operand(1, dtype)
    if is_floating(dtype):
        r = e.node("Mod", [a, b], fmod=1)
        return e.node("Where", [_off_sign(e, r, b, dtype), e.node("Add", [r, b]), r])
    safe, zero = _divide_guarded(e, b, dtype)
    return e.node("Where", [zero, a, e.node("Mod", [a, safe], fmod=0)])


def _rem(e: _Equation) -> str:
    """C's ``fmod``: the remainder with the dividend's sign; an integer
    remainder by zero is 0 (ftorch's ``rem``)."""
    dtype = e.out_dtype
    a, b = e.operand(0, dtype), e.operand(1, dtype)
    if is_floating(dtype):
        return e.node("Mod", [a, b], fmod=1)
    safe, zero = _divide_guarded(e, b, dtype)
    return e.node("Where", [zero, e.scalar(0, dtype), e.node("Mod", [a, safe], fmod=1)])


def _logaddexp(e: _Equation) -> str:
    """``max + log1p(exp(-|x - y|))``; equal operands (two infinities of one
    sign among them) give ``x + log 2``."""
    dtype = e.out_dtype
    a, b = e.operand(0, dtype), e.operand(1, dtype)
    big = e.node("Max", [a, b])
    gap = e.node("Neg", [e.node("Abs", [e.node("Sub", [a, b])])])
    out = e.node("Add", [big, _log1p(e, e.node("Exp", [gap]), dtype)])
    same = e.node("Add", [a, e.scalar(math.log(2.0), dtype)])
    return e.node("Where", [e.node("Equal", [a, b]), same, out])


def _where(e: _Equation) -> str:
    dtype = e.out_dtype
    return e.node("Where", [_bool(e, 0), e.operand(1, dtype), e.operand(2, dtype)])


def _astype(e: _Equation) -> str:
    return e.node("Cast", [e.operand(0)], to=_onnx_dtype(e.params["dtype"])) \
        if e.dtype(0) != e.params["dtype"] else e.node("Identity", [e.operand(0)])


# ----------------------------------------------------------------------------
# Activations and normalizations
# ----------------------------------------------------------------------------


def _gelu(e: _Equation) -> str:
    """The erf form ``x (1 + erf(x / sqrt 2)) / 2``, or with ``approximate``
    the tanh form ``x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) / 2``, as the
    primitive defines them."""
    dtype = e.out_dtype
    x = e.operand(0, dtype)
    one = e.scalar(1.0, dtype)
    if e.params["approximate"]:
        cube = e.node("Mul", [e.node("Mul", [x, x]), x])
        inner = e.node("Add", [x, e.node("Mul", [e.scalar(0.044715, dtype), cube])])
        th = e.node("Tanh", [e.node("Mul", [e.scalar(math.sqrt(2.0 / math.pi), dtype), inner])])
        return e.node("Mul", [e.node("Mul", [e.scalar(0.5, dtype), x]),
                              e.node("Add", [one, th])])
    erf = e.node("Erf", [e.node("Mul", [x, e.scalar(1.0 / math.sqrt(2.0), dtype)])])
    return e.node("Div", [e.node("Mul", [x, e.node("Add", [one, erf])]),
                          e.scalar(2.0, dtype)])


def _shifted_by_max(e: _Equation, x: str, axes: Sequence[int]) -> str:
    return e.node("Sub", [x, e.node("ReduceMax", [x, e.ints(axes)], keepdims=1)])


def _softmax(e: _Equation) -> str:
    """ONNX ``Softmax`` along one axis; over several, ``exp(x - max) / sum``."""
    dtype, axes = e.out_dtype, e.params["axes"]
    x = e.operand(0, dtype)
    if len(axes) == 1:
        return e.node("Softmax", [x], axis=axes[0])
    z = e.node("Exp", [_shifted_by_max(e, x, axes)])
    return e.node("Div", [z, e.node("ReduceSum", [z, e.ints(axes)], keepdims=1)])


def _log_softmax(e: _Equation) -> str:
    """ONNX ``LogSoftmax`` along one axis; over several,
    ``(x - max) - log(sum(exp(x - max)))``."""
    dtype, axes = e.out_dtype, e.params["axes"]
    x = e.operand(0, dtype)
    if len(axes) == 1:
        return e.node("LogSoftmax", [x], axis=axes[0])
    shifted = _shifted_by_max(e, x, axes)
    total = e.node("ReduceSum", [e.node("Exp", [shifted]), e.ints(axes)], keepdims=1)
    return e.node("Sub", [shifted, e.node("Log", [total])])


def _logsumexp(e: _Equation) -> str:
    """``log(sum(exp(x - m))) + m`` with ``m`` the max, taken as 0 where it
    is infinite (so that all ``-inf`` gives ``-inf`` and a ``+inf`` gives
    ``+inf``)."""
    dtype, axes, keepdims = e.out_dtype, e.params["axes"], e.params["keepdims"]
    x = e.operand(0, dtype)
    if not axes:
        return e.node("Identity", [x])
    m = e.node("ReduceMax", [x, e.ints(axes)], keepdims=1)
    m = e.node("Where", [e.node("IsInf", [m]), e.scalar(0, dtype), m])
    total = e.node("ReduceSum", [e.node("Exp", [e.node("Sub", [x, m])]), e.ints(axes)],
                   keepdims=1)
    out = e.node("Add", [e.node("Log", [total]), m])
    return out if keepdims else _reshape(e, out, e.out_shape)


# ----------------------------------------------------------------------------
# Reductions and scans
# ----------------------------------------------------------------------------


def _reduction(op: str) -> Callable[[_Equation], str]:
    """ONNX ``Reduce*`` over ``axes`` in the result's dtype (a sum of
    booleans counts in int32, a mean of integers is float32)."""

    def mapping(e: _Equation) -> str:
        dtype, axes, keepdims = e.out_dtype, e.params["axes"], e.params["keepdims"]
        x = e.operand(0, dtype)
        if not axes:  # ONNX would reduce everything
            return e.node("Identity", [x])
        return e.node(op, [x, e.ints(axes)], keepdims=int(keepdims))

    return mapping


def _extreme_reduction(op: str) -> Callable[[_Equation], str]:
    """``ReduceMax``/``ReduceMin``, NaN where a slice holds one (MLX's)."""

    def mapping(e: _Equation) -> str:
        dtype, axes, keepdims = e.out_dtype, e.params["axes"], e.params["keepdims"]
        x = e.operand(0, dtype)
        if not axes:
            return e.node("Identity", [x])
        if dtype == mx.bool_:  # ONNX has no boolean max: as int32
            as_int = e.cast(x, mx.bool_, mx.int32)
            y = e.node(op, [as_int, e.ints(axes)], keepdims=int(keepdims))
            return e.cast(y, mx.int32, mx.bool_)
        y = e.node(op, [x, e.ints(axes)], keepdims=int(keepdims))
        return _nan_wins(e, x, y, axes, keepdims, dtype)

    return mapping


def _truth_reduction(op: str) -> Callable[[_Equation], str]:
    """``all`` (a min of the truth values) or ``any`` (a max), as int32."""

    def mapping(e: _Equation) -> str:
        axes, keepdims = e.params["axes"], e.params["keepdims"]
        truth = e.cast(e.operand(0, mx.bool_), mx.bool_, mx.int32)
        if not axes:
            return e.cast(truth, mx.int32, mx.bool_)
        y = e.node(op, [truth, e.ints(axes)], keepdims=int(keepdims))
        return e.cast(y, mx.int32, mx.bool_)

    return mapping


def _moment(root: bool) -> Callable[[_Equation], str]:
    """``var`` (or its square root, ``std``) as MLX computes it: the mean of
    the squared deviations from the mean, times ``n / (n - ddof)``."""

    def mapping(e: _Equation) -> str:
        dtype, axes = e.out_dtype, e.params["axes"]
        keepdims, ddof = e.params["keepdims"], e.params["ddof"]
        x = e.operand(0, dtype)
        shape = e.shape(0)
        n = math.prod(shape[a] for a in axes)
        if axes:
            centered = e.node("Sub", [x, e.node("ReduceMean", [x, e.ints(axes)], keepdims=1)])
            out = e.node("ReduceMean", [e.node("Mul", [centered, centered]), e.ints(axes)],
                         keepdims=int(keepdims))
        else:
            out = e.node("Mul", [x, e.scalar(0, dtype)])
        if ddof:
            factor = n / (n - ddof) if n != ddof else math.inf
            out = e.node("Mul", [out, e.scalar(factor, dtype)])
        return e.node("Sqrt", [out]) if root else out

    return mapping


def _arg_extreme(op: str) -> Callable[[_Equation], str]:
    """``ArgMax``/``ArgMin`` as MLX takes them (``_arg_extreme_index``), cast
    to the result's dtype (uint32)."""

    def mapping(e: _Equation) -> str:
        idx = _arg_extreme_index(e, e.operand(0), e.params["axis"], e.params["keepdims"], op,
                                 is_floating(e.dtype(0)))
        return e.cast(idx, mx.int64, e.out_dtype)

    return mapping


def _cumsum(e: _Equation) -> str:
    dtype = e.out_dtype
    return e.node("CumSum", [e.operand(0, dtype), e.scalar(e.params["axis"], mx.int64)],
                  exclusive=int(not e.params["inclusive"]), reverse=int(e.params["reverse"]))


# ----------------------------------------------------------------------------
# Shapes
# ----------------------------------------------------------------------------


def _reshape_mapping(e: _Equation) -> str:
    return _reshape(e, e.operand(0), e.params["shape"])


def _transpose_mapping(e: _Equation) -> str:
    return e.node("Transpose", [e.operand(0)], perm=list(e.params["axes"]))


def _broadcast_to(e: _Equation) -> str:
    return e.node("Expand", [e.operand(0), e.ints(e.params["shape"])])


def _slice_bounds(slices: Sequence[tuple]) -> tuple[list, list, list, list]:
    """ONNX ``Slice``'s starts, ends, axes and steps for canonical slices (a
    stop of None runs backwards past index 0)."""
    starts, ends, axes, steps = [], [], [], []
    for axis, (start, stop, step) in enumerate(slices):
        starts.append(start)
        ends.append(_INT64_MIN if stop is None else stop)
        axes.append(axis)
        steps.append(step)
    return starts, ends, axes, steps


def _static_slice(e: _Equation) -> str:
    return _slice(e, e.operand(0), *_slice_bounds(e.params["slices"]))


def _slice_transpose(e: _Equation) -> str:
    """Zeros with the cotangent at the sliced positions: a ``Pad`` for unit
    steps, else a ``ScatterND`` at the positions' index grid."""
    slices, shape, dtype = e.params["slices"], e.params["shape"], e.out_dtype
    ct = e.operand(0, dtype)
    if all(step == 1 for _, _, step in slices):
        before = [s[0] for s in slices] + [0] * (len(shape) - len(slices))
        after = [d - s[1] for s, d in zip(slices, shape)] + [0] * (len(shape) - len(slices))
        return e.node("Pad", [ct, e.ints(before + after), e.scalar(0, dtype)])
    ranges = [np.arange(start, -1 if stop is None else stop, step)
              for start, stop, step in slices]
    grid = np.stack(np.meshgrid(*ranges, indexing="ij"), axis=-1).astype(np.int64)
    return e.node("ScatterND", [_full(e, 0, shape, dtype), e.const(grid, mx.int64), ct])


def _concatenate(e: _Equation) -> str:
    return e.node("Concat", e.operands(e.out_dtype), axis=e.params["axis"])


def _split(e: _Equation) -> list[str]:
    """Each piece a ``Slice`` (pieces may be empty, which ``Split`` refuses)."""
    axis, indices = e.params["axis"], e.params["indices"]
    x = e.operand(0)
    bounds = [0, *indices, e.shape(0)[axis]]
    return [_slice(e, x, [lo], [hi], [axis]) for lo, hi in zip(bounds, bounds[1:])]


def _pad(e: _Equation) -> str:
    pad_width = e.params["pad_width"]
    dtype = e.out_dtype
    value = _reshape(e, e.operand(1, dtype), ())
    pads = [lo for lo, _ in pad_width] + [hi for _, hi in pad_width]
    return e.node("Pad", [e.operand(0, dtype), e.ints(pads), value])


def _roll(e: _Equation) -> str:
    """Each axis's shift as a slice of the tail before the head."""
    x = e.operand(0)
    shape = e.shape(0)
    for shift, axis in zip(e.params["shift"], e.params["axes"]):
        n = shape[axis]
        s = shift % n if n else 0
        if s:
            x = e.node("Concat", [_slice(e, x, [n - s], [n], [axis]),
                                  _slice(e, x, [0], [n - s], [axis])], axis=axis)
    return e.node("Identity", [x])


# ----------------------------------------------------------------------------
# Indexing
# ----------------------------------------------------------------------------


def _as_index(e: _Equation, i: int, size: int) -> str:
    """Index operand ``i`` as int64, a negative entry counted from the end of
    an axis of ``size`` (MLX takes entries in ``[-size, size)``)."""
    idx = e.operand(i, mx.int64)
    if e.dtype(i) in (mx.uint8, mx.uint16, mx.uint32, mx.uint64, mx.bool_):
        return idx
    negative = e.node("Less", [idx, e.scalar(0, mx.int64)])
    return e.node("Where", [negative, e.node("Add", [idx, e.scalar(size, mx.int64)]), idx])


def _index_grid(e: _Equation, x_shape: tuple[int, ...], spec: tuple, first_array: int
                ) -> tuple[str, tuple[int, ...]]:
    """The int64 grid ``(*out, x.ndim)`` of positions in ``x`` that the index
    ``spec`` addresses (its index arrays are operands ``first_array`` on),
    and ``out``, the indexed shape: NumPy's advanced indexing spelled out
    position by position (slices as ranges, ints as constants, arrays
    broadcast in their block), so one ``GatherND``/``ScatterND`` does it."""
    n_arrays = spec.count(ARRAY)
    arrays = [ShapeDtypeStruct(e.shape(first_array + k), e.dtype(first_array + k))
              for k in range(n_arrays)]
    out_shape, start, block = indexed_shape(x_shape, spec, arrays)
    rank = len(out_shape)

    def position(j: int) -> int:  # the output axis of the j-th non-array axis
        return j if j < start else j + block

    def along(pos: int, values: np.ndarray) -> str:
        dims = [1] * rank
        dims[pos] = len(values)
        return e.const(values.astype(np.int64).reshape(dims), mx.int64)

    parts, axis, j, k = [], 0, 0, 0
    for entry in spec:
        if entry is None:
            j += 1
            continue
        if isinstance(entry, tuple):
            begin, stop, step = entry
            parts.append(along(position(j), np.arange(begin, -1 if stop is None else stop,
                                                      step)))
            j += 1
        elif entry == ARRAY:
            idx = _as_index(e, first_array + k, x_shape[axis])
            a_shape = arrays[k].shape
            lead = start + block - len(a_shape)
            parts.append(_reshape(e, idx, (1,) * lead + tuple(a_shape)
                                  + (1,) * (rank - start - block)))
            k += 1
        else:  # an int (normalized: non-negative)
            parts.append(e.scalar(entry, mx.int64))
        axis += 1
    for d in x_shape[axis:]:
        parts.append(along(position(j), np.arange(d)))
        j += 1
    target = e.ints(list(out_shape) + [1])
    columns = [e.node("Expand", [e.node("Unsqueeze", [p, e.ints([-1])]), target])
               for p in parts]
    grid = columns[0] if len(columns) == 1 else e.node("Concat", columns, axis=-1)
    return grid, tuple(out_shape)


def _gather(e: _Equation) -> str:
    """``x[idx]``: one ``Gather`` for a single index array after full slices
    (an embedding lookup), else a ``GatherND`` at the index grid."""
    spec, x_shape = e.params["spec"], e.shape(0)
    axis = len(spec) - 1
    if (spec[-1] == ARRAY and spec.count(ARRAY) == 1
            and all(s == (0, d, 1) for s, d in zip(spec[:-1], x_shape))):
        return e.node("Gather", [e.operand(0), _as_index(e, 1, x_shape[axis])], axis=axis)
    grid, _ = _index_grid(e, x_shape, spec, 1)
    return e.node("GatherND", [e.operand(0), grid])


def _scatter(reduction: str, reciprocal: bool = False) -> Callable[[_Equation], str]:
    """``x`` with ``x[idx]`` replaced (``reduction="none"``), added to,
    multiplied, ... by the values broadcast to the indexed shape: a
    ``ScatterND`` at the index grid. ``scatter_div`` multiplies by ``1 / v``,
    as MLX does."""

    def mapping(e: _Equation) -> str:
        dtype, spec, x_shape = e.out_dtype, e.params["spec"], e.shape(0)
        x = e.operand(0, dtype)
        grid, out_shape = _index_grid(e, x_shape, spec, 2)
        if 0 in out_shape:  # nothing indexed: MLX leaves x as it is
            return e.node("Identity", [x])
        v, v_shape = e.operand(1, dtype), e.shape(1)
        if len(v_shape) > len(out_shape):  # leading length-1 axes of the values
            v = _reshape(e, v, v_shape[len(v_shape) - len(out_shape):])
        if reciprocal:
            v = e.node("Reciprocal", [v])
        v = e.node("Expand", [v, e.ints(out_shape)])
        attrs = {} if reduction == "none" else {"reduction": reduction}
        return e.node("ScatterND", [x, grid, v], **attrs)

    return mapping


def _take_along_axis(e: _Equation) -> str:
    """``GatherElements`` on ``x`` and the indices broadcast to the result's
    shape (but along ``axis``)."""
    axis, x_shape, out_shape = e.params["axis"], e.shape(0), e.out_shape
    x = e.operand(0)
    widened = tuple(d if a == axis else n for a, (d, n) in enumerate(zip(x_shape, out_shape)))
    if widened != x_shape:
        x = e.node("Expand", [x, e.ints(widened)])
    idx = e.node("Expand", [_as_index(e, 1, x_shape[axis]), e.ints(out_shape)])
    return e.node("GatherElements", [x, idx], axis=axis)


def _starts(e: _Equation, first: int, count: int) -> str:
    """Operands ``first`` to ``first + count`` (0-d start indices) as one
    int64 vector."""
    starts = [_reshape(e, e.operand(first + i, mx.int64), (1,)) for i in range(count)]
    return e.node("Concat", starts, axis=0)


def _dynamic_slice(e: _Equation) -> str:
    """The window of ``sizes`` at the start operands (in bounds: the public
    functions clamp them); axes without a start are taken from 0."""
    sizes, x_shape = e.params["sizes"], e.shape(0)
    n_starts = e.n_in - 1
    x = e.operand(0)
    if n_starts:
        starts = _starts(e, 1, n_starts)
        ends = e.node("Add", [starts, e.ints(sizes[:n_starts])])
        x = e.node("Slice", [x, starts, ends, e.ints(range(n_starts))])
    rest = range(n_starts, len(x_shape))
    if any(sizes[a] != x_shape[a] for a in rest):
        x = _slice(e, x, [0] * len(rest), [sizes[a] for a in rest], list(rest))
    return e.node("Identity", [x])


def _dynamic_update_slice(e: _Equation) -> str:
    """``x`` with the window at the start operands replaced by the update: a
    ``ScatterND`` at the window's index grid (start + offset per axis)."""
    dtype, u_shape = e.out_dtype, e.shape(1)
    n_starts, rank = e.n_in - 2, len(u_shape)
    if 0 in u_shape:
        return e.node("Identity", [e.operand(0, dtype)])
    columns = []
    for a, d in enumerate(u_shape):
        dims = [1] * rank
        dims[a] = d
        offsets = e.const(np.arange(d, dtype=np.int64).reshape(dims), mx.int64)
        if a < n_starts:
            offsets = e.node("Add", [offsets, e.operand(2 + a, mx.int64)])
        columns.append(e.node("Expand", [e.node("Unsqueeze", [offsets, e.ints([-1])]),
                                         e.ints(list(u_shape) + [1])]))
    grid = columns[0] if len(columns) == 1 else e.node("Concat", columns, axis=-1)
    return e.node("ScatterND", [e.operand(0, dtype), grid, e.operand(1, dtype)])


# ----------------------------------------------------------------------------
# Convolution and pooling: MLX is channels last, ONNX channels first
# ----------------------------------------------------------------------------


def _channels_first(nd: int) -> tuple[int, ...]:
    return (0, nd + 1, *range(1, nd + 1))


def _channels_last(nd: int) -> tuple[int, ...]:
    return (0, *range(2, nd + 2), 1)


def _dilate(e: _Equation, x: str, shape: list[int], factors: Sequence[int]) -> str:
    """``x`` (channels first) with ``r - 1`` zeros between neighbours along
    each spatial axis (factor ``r``): a length-``r`` axis padded behind each
    element, merged, and the trailing zeros cut."""
    for i, r in enumerate(factors):
        a = 2 + i
        n = shape[a]
        if r == 1 or n == 0:
            continue
        x = _reshape(e, x, shape[:a + 1] + [1] + shape[a + 1:])
        after = [0] * (len(shape) + 1)
        after[a + 1] = r - 1
        x = e.node("Pad", [x, e.ints([0] * (len(shape) + 1) + after)])
        x = _reshape(e, x, shape[:a] + [n * r] + shape[a + 1:])
        shape = shape[:a] + [(n - 1) * r + 1] + shape[a + 1:]
        x = _slice(e, x, [0], [shape[a]], [a])
    return x


def _conv_general(e: _Equation) -> str:
    """``Conv`` between transposes to and from channels first; the input
    dilated explicitly, the kernel ``(C_out, *K, C_in / groups)`` transposed
    to ``(C_out, C_in / groups, *K)`` and reversed when ``flip``."""
    p, dtype = e.params, e.out_dtype
    x_shape, w_shape = e.shape(0), e.shape(1)
    nd = len(x_shape) - 2
    x = _transpose(e, e.operand(0, dtype), _channels_first(nd))
    shape = [x_shape[i] for i in _channels_first(nd)]
    x = _dilate(e, x, shape, p["input_dilation"])
    w = _transpose(e, e.operand(1, dtype), _channels_first(nd))
    if p["flip"]:
        w = _slice(e, w, [-1] * nd, [_INT64_MIN] * nd, list(range(2, nd + 2)), [-1] * nd)
    lo, hi = p["padding"]
    y = e.node("Conv", [x, w], kernel_shape=list(w_shape[1:-1]), strides=list(p["stride"]),
               dilations=list(p["kernel_dilation"]), group=p["groups"], pads=[*lo, *hi])
    return _transpose(e, y, _channels_last(nd))


def _padded_spatial(e: _Equation, x: str, padding: Sequence[tuple[int, int]], value: Any,
                    dtype: mx.Dtype) -> str:
    """``x`` (channels last) padded with ``value`` along its spatial axes."""
    if not any(lo or hi for lo, hi in padding):
        return x
    before = [0, *(lo for lo, _ in padding), 0]
    after = [0, *(hi for _, hi in padding), 0]
    return e.node("Pad", [x, e.ints(before + after), e.scalar(value, dtype)])


def _max_pool(e: _Equation) -> str:
    """``MaxPool`` of the input padded with ``-inf`` (explicitly: ONNX limits
    pads to less than a window); NaN where a window holds one, ``-inf`` where
    it holds nothing else (MLX's)."""
    window, stride, padding = e.params["window"], e.params["stride"], e.params["padding"]
    dtype, nd = e.out_dtype, len(window)
    x = _padded_spatial(e, e.operand(0, dtype), padding, _lowest(dtype), dtype)
    x = _transpose(e, x, _channels_first(nd))
    pool = dict(kernel_shape=list(window), strides=list(stride))
    y = e.node("MaxPool", [x], **pool)
    if is_floating(dtype):
        def anywhere(mask: str) -> str:  # whether a window holds a true entry of mask
            found = e.node("MaxPool", [e.cast(mask, mx.bool_, dtype)], **pool)
            return e.cast(found, dtype, mx.bool_)

        # onnxruntime starts each window at the lowest finite value: a window
        # of -inf only (the padding among them) gives that, not -inf.
        lowest = e.scalar(float(mx.finfo(dtype).min), dtype)
        floor_only = e.node("And", [e.node("Equal", [y, lowest]),
                                    e.node("Not", [anywhere(e.node("Equal", [x, lowest]))])])
        y = e.node("Where", [floor_only, e.scalar(-math.inf, dtype), y])
        y = e.node("Where", [anywhere(e.node("IsNaN", [x])), e.scalar(math.nan, dtype), y])
    return _transpose(e, y, _channels_last(nd))


def _avg_pool(e: _Equation) -> str:
    """``AveragePool`` of the input padded with zeros, which count in each
    window's size (``mlx.nn.AvgPool``)."""
    window, stride, padding = e.params["window"], e.params["stride"], e.params["padding"]
    dtype, nd = e.out_dtype, len(window)
    x = _padded_spatial(e, e.operand(0, dtype), padding, 0, dtype)
    x = _transpose(e, x, _channels_first(nd))
    y = e.node("AveragePool", [x], kernel_shape=list(window), strides=list(stride))
    return _transpose(e, y, _channels_last(nd))


def _window_positions(padded: Sequence[int], window: Sequence[int], stride: Sequence[int]
                      ) -> np.ndarray:
    """``(n_windows, window size)``: each window's elements (row-major) as
    positions in the flattened padded spatial axes."""
    out = [(p - k) // s + 1 for p, k, s in zip(padded, window, stride)]
    offsets = np.stack(np.meshgrid(*[np.arange(k) for k in window], indexing="ij"), -1)
    corners = np.stack(np.meshgrid(*[np.arange(o) * s for o, s in zip(out, stride)],
                                   indexing="ij"), -1)
    coords = corners.reshape(-1, 1, len(window)) + offsets.reshape(1, -1, len(window))
    return np.ravel_multi_index(tuple(np.moveaxis(coords, -1, 0)), tuple(padded))


def _windows(e: _Equation, x: str, x_shape: Sequence[int], padding, table: np.ndarray,
             value: Any, dtype: mx.Dtype) -> str:
    """The windows of ``x`` (channels last) padded with ``value``:
    ``(N, n_windows, window size, C)``."""
    padded = [n + lo + hi for n, (lo, hi) in zip(x_shape[1:-1], padding)]
    flat = _reshape(e, _padded_spatial(e, x, padding, value, dtype),
                    (x_shape[0], math.prod(padded), x_shape[-1]))
    return e.node("Gather", [flat, e.const(table, mx.int64)], axis=1)


def _window_argmax(e: _Equation) -> tuple[str, np.ndarray, list[int], list[int]]:
    """Where each window of operand 1 (``x``, as ``max_pool`` takes them)
    first peaks, ``(N, n_windows, 1, C)`` int64; the windows' positions, the
    padded spatial shape and the output's spatial shape."""
    window, stride, padding = e.params["window"], e.params["stride"], e.params["padding"]
    x_shape, dtype = e.shape(1), e.dtype(1)
    padded = [n + lo + hi for n, (lo, hi) in zip(x_shape[1:-1], padding)]
    out = [(q - k) // s + 1 for q, k, s in zip(padded, window, stride)]
    table = _window_positions(padded, window, stride)
    windows = _windows(e, e.operand(1), x_shape, padding, table, _lowest(dtype), dtype)
    return (_arg_extreme_index(e, windows, 2, True, floating=is_floating(dtype)), table, padded,
            out)


def _max_pool_gather(e: _Equation) -> str:
    """``t`` read where each window of ``x`` first peaks."""
    x_shape, dtype = e.shape(1), e.out_dtype
    idx, table, _, out = _window_argmax(e)
    t_windows = _windows(e, e.operand(0, dtype), x_shape, e.params["padding"], table, 0, dtype)
    picked = e.node("GatherElements", [t_windows, idx], axis=2)
    return _reshape(e, picked, (x_shape[0], *out, x_shape[-1]))


def _max_pool_scatter(e: _Equation) -> str:
    """Each window's cotangent added where that window of ``x`` first peaks:
    a ``ScatterElements`` (add) into the padded input, then cropped."""
    x_shape, dtype, padding = e.shape(1), e.out_dtype, e.params["padding"]
    idx, table, padded, out = _window_argmax(e)
    n, c, n_windows = x_shape[0], x_shape[-1], table.shape[0]
    positions = e.node("Expand", [e.const(table.reshape(1, *table.shape, 1), mx.int64),
                                  e.ints([n, *table.shape, c])])
    targets = _reshape(e, e.node("GatherElements", [positions, idx], axis=2),
                       (n, n_windows, c))
    ct = _reshape(e, e.operand(0, dtype), (n, n_windows, c))
    zeros = _full(e, 0, (n, math.prod(padded), c), dtype)
    summed = e.node("ScatterElements", [zeros, targets, ct], axis=1, reduction="add")
    summed = _reshape(e, summed, (n, *padded, c))
    lows = [lo for lo, _ in padding]
    return _slice(e, summed, lows, [lo + d for lo, d in zip(lows, x_shape[1:-1])],
                  list(range(1, len(padded) + 1)))


# ----------------------------------------------------------------------------
# Products
# ----------------------------------------------------------------------------


def _matmul(e: _Equation) -> str:
    """ONNX ``MatMul`` has NumPy's rules, as MLX's: vectors, broadcast batches."""
    return e.node("MatMul", e.operands(e.out_dtype))


def _einsum(e: _Equation) -> str:
    return e.node("Einsum", e.operands(e.out_dtype), equation=e.params["subscripts"])


# ----------------------------------------------------------------------------
# Sorting
# ----------------------------------------------------------------------------


def _sort_key(e: _Equation, key: str, dtype: mx.Dtype) -> tuple[str, mx.Dtype]:
    """A key ``TopK`` orders as MLX orders ``key``: float16 and bfloat16 as
    float32, booleans and narrow integers as int32, wide unsigned as int64."""
    if dtype in (mx.float16, mx.bfloat16):
        target = mx.float32
    elif dtype in (mx.bool_, mx.int8, mx.int16, mx.uint8, mx.uint16):
        target = mx.int32
    elif dtype == mx.uint32:
        target = mx.int64
    else:
        target = dtype
    return e.cast(key, dtype, target), target


def _stable_order(e: _Equation, key: str, dtype: mx.Dtype, axis: int, n: int,
                  descending: bool) -> str:
    """The stable permutation (int64) sorting ``key`` along ``axis``:
    ascending with NaNs last, or descending with NaNs first. ``TopK`` keeps
    equal entries in order (its spec), so a second pass on "is NaN" after a
    pass with NaNs as infinities puts the NaNs at the end, in order."""
    key, dtype = _sort_key(e, key, dtype)
    k = e.ints([n])
    largest = int(descending)
    if not is_floating(dtype):
        return e.node("TopK", [key, k], 2, axis=axis, largest=largest, sorted=1)[1]
    nans = e.node("IsNaN", [key])
    filled = e.node("Where", [nans, e.scalar(-math.inf if descending else math.inf, dtype),
                              key])
    order = e.node("TopK", [filled, k], 2, axis=axis, largest=largest, sorted=1)[1]
    nans_in_order = e.node("GatherElements", [e.cast(nans, mx.bool_, mx.float32), order],
                           axis=axis)
    by_nan = e.node("TopK", [nans_in_order, k], 2, axis=axis, largest=largest, sorted=1)[1]
    return e.node("GatherElements", [order, by_nan], axis=axis)


def _argsort(e: _Equation) -> str:
    axis = e.params["axis"]
    order = _stable_order(e, e.operand(0), e.dtype(0), axis, e.shape(0)[axis],
                          e.params["descending"])
    return e.cast(order, mx.int64, e.out_dtype)


def _sort(e: _Equation) -> list[str]:
    """The operands permuted by the stable lexicographic order of the first
    ``num_keys`` (the last key sorted first, each earlier one stably after)."""
    axis, num_keys = e.params["dimension"], e.params["num_keys"]
    n = e.shape(0)[axis]
    order = _stable_order(e, e.operand(num_keys - 1), e.dtype(num_keys - 1), axis, n, False)
    for i in reversed(range(num_keys - 1)):
        key = e.node("GatherElements", [e.operand(i), order], axis=axis)
        order = e.node("GatherElements", [order, _stable_order(e, key, e.dtype(i), axis, n,
                                                               False)], axis=axis)
    return [e.node("GatherElements", [x, order], axis=axis) for x in e.operands()]


def _top_k(e: _Equation) -> list[str]:
    """The first ``k`` of the stable descending order (NaNs first, as MLX's)."""
    x_shape, k = e.shape(0), e.params["k"]
    axis = len(x_shape) - 1
    order = _stable_order(e, e.operand(0), e.dtype(0), axis, x_shape[axis], True)
    top = _slice(e, order, [0], [k], [axis])
    values = e.node("GatherElements", [e.operand(0), top], axis=axis)
    return [values, e.cast(top, mx.int64, e.out_avals[1].dtype)]


# ----------------------------------------------------------------------------
# Calls and control flow
# ----------------------------------------------------------------------------


def _inline_graph(e: _Equation) -> list[str]:
    """A call of a staged graph (``jit``, ``remat``): its equations in place."""
    return e.inline(e.params["graph"], e.operands())


def _inline_function(e: _Equation) -> list[str]:
    """A custom-rule call (``custom_jvp_call``, ``custom_vjp_call``,
    ``custom_vmap_call``): its primal function staged and inlined; the rules
    only matter to transforms."""
    avals = [aval_of_atom(a) for a in e.eqn.inputs]
    graph, hoisted = stage(e.params["fun"], avals, "to_onnx: a custom-rule function")
    if hoisted:
        raise _unmapped(e.eqn, "its function closes over values of an enclosing transform")
    return e.inline(simplify(graph), e.operands())


def _cond(e: _Equation) -> list[str]:
    """Every branch, then each output selected by the index (clamped into
    range, as ``cond`` takes it): what jit's own lowering runs."""
    branches = e.params["branches"]
    operands = [e.operand(i) for i in range(1, e.n_in)]
    outs = [e.inline(g, operands) for g in branches]
    index = e.node("Clip", [e.operand(0, mx.int64), e.scalar(0, mx.int64),
                            e.scalar(len(branches) - 1, mx.int64)])
    result = outs[-1]
    for i in range(len(branches) - 2, -1, -1):
        pick = e.node("Equal", [index, e.scalar(i, mx.int64)])
        result = [e.node("Where", [pick, a, b]) for a, b in zip(outs[i], result)]
    return [e.node("Identity", [r]) for r in result]


def _body(e: _Equation, graph: Graph, outer: Sequence[str], loop_avals: Sequence,
          extra_inputs: Sequence = (), extra_outputs: Callable | None = None):
    """A loop body as an ONNX graph: inputs typed by ``extra_inputs`` (name,
    aval) then ``loop_avals``, ``graph`` emitted on ``outer`` (outer-scope
    values: consts) and those inputs; ``extra_outputs(builder, inputs,
    outputs)`` may add leading outputs, as (value, aval) pairs."""
    onnx = e.builder.onnx
    body = _Builder(onnx, e.builder)
    names = [body.fresh("in") for _ in loop_avals]
    outs = _emit_graph(body, graph, list(outer) + names)
    lead = extra_outputs(body, names, outs) if extra_outputs is not None else []
    out_names = []
    for value, aval in [*lead, *zip(outs, graph.out_avals)]:
        out_names.append((body.node("Identity", [value]), aval))

    def typed(name, aval):
        return onnx.helper.make_tensor_value_info(name, _onnx_dtype(aval.dtype),
                                                  list(aval.shape))

    return onnx.helper.make_graph(
        body.nodes, e.builder.fresh("body"),
        [typed(n, a) for n, a in extra_inputs] + [typed(n, a) for n, a in zip(names,
                                                                               loop_avals)],
        [typed(n, a) for n, a in out_names])


def _scan(e: _Equation) -> list[str]:
    """ONNX ``Scan``: the carry as its state, the xs as scan inputs (a
    dummy one when there are none, to give the trip count), the ys stacked
    in the order of the xs (``reverse`` scans and stacks backwards)."""
    p = e.params
    graph, n_consts, n_carry, length = p["graph"], p["n_consts"], p["n_carry"], p["length"]
    ops = e.operands()
    consts, carry, xs = ops[:n_consts], ops[n_consts:n_consts + n_carry], ops[n_consts + n_carry:]
    n_ys = len(graph.outs) - n_carry
    if length == 0:  # onnxruntime's Scan cannot run no steps: the carry, and empty ys
        return [e.node("Identity", [c]) for c in carry] + [
            e.const(np.zeros(a.shape, _NUMPY_DTYPES.get(a.dtype, np.float32)), a.dtype)
            for a in e.out_avals[n_carry:]]
    in_avals = graph.in_avals[n_consts:]
    dummy = []
    if not xs:
        xs = [e.const(np.zeros((length,), np.float32), mx.float32)]
        dummy = [ShapeDtypeStruct((), mx.float32)]
    # The body takes the dummy input last and leaves it unused.
    body = _body(e, graph, consts, in_avals + dummy)
    direction = int(p["reverse"])
    directions = {"scan_output_directions": [direction] * n_ys} if n_ys else {}
    return e.node("Scan", carry + xs, n_carry + n_ys, body=body, num_scan_inputs=len(xs),
                  scan_input_directions=[direction] * len(xs), **directions)


def _while(e: _Equation) -> list[str]:
    """ONNX ``Loop`` without a trip count: the condition graph runs on the
    initial carry, then after each body."""
    p = e.params
    cond_graph, body_graph = p["cond_graph"], p["body_graph"]
    n_cond, n_body = p["n_cond_consts"], p["n_body_consts"]
    ops = e.operands()
    cond_consts, body_consts, carry = ops[:n_cond], ops[n_cond:n_cond + n_body], \
        ops[n_cond + n_body:]
    first = _emit_graph(e.builder, cond_graph, cond_consts + carry)[0]
    first = e.cast(first, cond_graph.out_avals[0].dtype, mx.bool_)
    bool_aval = ShapeDtypeStruct((), mx.bool_)

    def condition(body: _Builder, _inputs, outs):
        test = _emit_graph(body, cond_graph, cond_consts + list(outs))[0]
        return [(body.cast(test, cond_graph.out_avals[0].dtype, mx.bool_), bool_aval)]

    extra = [(e.builder.fresh("iteration"), ShapeDtypeStruct((), mx.int64)),
             (e.builder.fresh("go"), bool_aval)]
    body = _body(e, body_graph, body_consts, body_graph.in_avals[n_body:], extra, condition)
    outs = e.node("Loop", ["", first, *carry], len(carry), body=body)
    return [outs] if isinstance(outs, str) else outs


# ----------------------------------------------------------------------------
# The table: every mapped primitive, by name
# ----------------------------------------------------------------------------

#: Each mapped primitive's mapping: a function of the equation being
#: converted (``_Equation``) returning its result's ONNX value (or values).
MAPPINGS: dict[str, Callable[[_Equation], Any]] = {
    # Unary math, in the result's dtype
    "negative": _in_result_dtype("Neg"),
    "abs": _in_result_dtype("Abs"),
    "sign": _sign,
    "exp": _in_result_dtype("Exp"),
    "expm1": _expm1,
    "log": _in_result_dtype("Log"),
    "log1p": _log1p_mapping,
    "log2": _log_base(2.0),
    "log10": _log_base(10.0),
    "sqrt": _in_result_dtype("Sqrt"),
    "rsqrt": _rsqrt,
    "square": _square,
    "reciprocal": _in_result_dtype("Reciprocal"),
    "cbrt": _cbrt,
    "sin": _in_result_dtype("Sin"),
    "cos": _in_result_dtype("Cos"),
    "tan": _in_result_dtype("Tan"),
    "arcsin": _in_result_dtype("Asin"),
    "arccos": _in_result_dtype("Acos"),
    "arctan": _in_result_dtype("Atan"),
    "sinh": _in_result_dtype("Sinh"),
    "cosh": _in_result_dtype("Cosh"),
    "tanh": _in_result_dtype("Tanh"),
    "arcsinh": _in_result_dtype("Asinh"),
    "arccosh": _in_result_dtype("Acosh"),
    "arctanh": _in_result_dtype("Atanh"),
    "erf": _in_result_dtype("Erf"),
    "floor": _floor_or_ceil("Floor"),
    "ceil": _floor_or_ceil("Ceil"),
    "round": _round,
    "isnan": _isnan,
    "isinf": _isinf,
    "isfinite": _isfinite,
    "logical_not": _logical_not,
    "invert": _invert,
    # Binary math, broadcasting, in the result's dtype
    "add": _in_result_dtype("Add"),
    "subtract": _in_result_dtype("Sub"),
    "multiply": _in_result_dtype("Mul"),
    "divide": _in_result_dtype("Div"),
    "floor_divide": _floor_divide,
    "remainder": _remainder,
    "rem": _rem,
    "power": _in_result_dtype("Pow"),
    "maximum": _in_result_dtype("Max"),
    "minimum": _in_result_dtype("Min"),
    "logaddexp": _logaddexp,
    # Comparisons and logic
    "equal": _comparison("Equal"),
    "not_equal": _comparison("Equal", negate=True),
    "less": _comparison("Less"),
    "less_equal": _comparison("LessOrEqual"),
    "greater": _comparison("Greater"),
    "greater_equal": _comparison("GreaterOrEqual"),
    "logical_and": _logical("And"),
    "logical_or": _logical("Or"),
    "logical_xor": _logical("Xor"),
    "bitwise_and": _bitwise("BitwiseAnd", "And"),
    "bitwise_or": _bitwise("BitwiseOr", "Or"),
    "bitwise_xor": _bitwise("BitwiseXor", "Xor"),
    "where": _where,
    "astype": _astype,
    # Identities
    "stop_gradient": _identity,
    "checkpoint_name": _identity,
    "unique_indices_guard": _identity,
    "optimization_barrier": _identities,
    # Activations and normalizations
    "relu": _in_result_dtype("Relu"),
    "sigmoid": _in_result_dtype("Sigmoid"),
    "gelu": _gelu,
    "softmax": _softmax,
    "log_softmax": _log_softmax,
    "logsumexp": _logsumexp,
    # Reductions and scans
    "sum": _reduction("ReduceSum"),
    "mean": _reduction("ReduceMean"),
    "prod": _reduction("ReduceProd"),
    "max": _extreme_reduction("ReduceMax"),
    "min": _extreme_reduction("ReduceMin"),
    "all": _truth_reduction("ReduceMin"),
    "any": _truth_reduction("ReduceMax"),
    "var": _moment(root=False),
    "std": _moment(root=True),
    "argmax": _arg_extreme("ArgMax"),
    "argmin": _arg_extreme("ArgMin"),
    "cumsum": _cumsum,
    # Shapes
    "reshape": _reshape_mapping,
    "transpose": _transpose_mapping,
    "broadcast_to": _broadcast_to,
    "static_slice": _static_slice,
    "slice_transpose": _slice_transpose,
    "concatenate": _concatenate,
    "split": _split,
    "pad": _pad,
    "roll": _roll,
    # Indexing
    "gather": _gather,
    "scatter": _scatter("none"),
    "scatter_add": _scatter("add"),
    "scatter_mul": _scatter("mul"),
    "scatter_div": _scatter("mul", reciprocal=True),
    "scatter_min": _scatter("min"),
    "scatter_max": _scatter("max"),
    "take_along_axis": _take_along_axis,
    "dynamic_slice": _dynamic_slice,
    "dynamic_update_slice": _dynamic_update_slice,
    # Convolution and pooling
    "conv_general": _conv_general,
    "max_pool": _max_pool,
    "avg_pool": _avg_pool,
    "max_pool_gather": _max_pool_gather,
    "max_pool_scatter": _max_pool_scatter,
    # Products
    "matmul": _matmul,
    "einsum": _einsum,
    # Sorting
    "argsort": _argsort,
    "sort": _sort,
    "top_k": _top_k,
    # Calls and control flow
    "jit": _inline_graph,
    "remat": _inline_graph,
    "custom_jvp_call": _inline_function,
    "custom_vjp_call": _inline_function,
    "custom_vmap_call": _inline_function,
    "cond": _cond,
    "scan": _scan,
    "while": _while,
}
