"""The core of ftorch: primitives, tracers and the stack of active transforms.

Every array operation bottoms out in ``Primitive.bind``. Outside any
transform, ``bind`` is one check and one MLX call. Inside transforms, the
innermost (highest-level) trace among the arguments interprets the primitive
with the rules the primitive carries (JVP, VJP, batching, shape).

This follows the interpreter design of JAX's autodidax: each transform is a
``Trace`` subclass living in ``ftorch/transforms/``; a ``MainTrace`` on a
global stack gives each active transform a level, and tracers from different
levels never mix, which is what rules out perturbation confusion.
"""

from __future__ import annotations

import os
import re
import traceback
from collections.abc import Callable
from contextlib import contextmanager
from typing import Any, NamedTuple

import mlx.core as mx
import numpy as np

from ftorch.dtypes import to_mlx_dtype

__all__ = [
    "Primitive",
    "ShapeDtypeStruct",
    "Trace",
    "Tracer",
    "MainTrace",
    "LeakedTracerError",
    "registry",
]


class ShapeDtypeStruct(NamedTuple):
    """The abstract value of an array: its shape and dtype, no data."""

    shape: tuple[int, ...]
    dtype: mx.Dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)


DTYPE_SHORT_NAMES = {
    mx.bool_: "bool", mx.uint8: "u8", mx.uint16: "u16", mx.uint32: "u32", mx.uint64: "u64",
    mx.int8: "i8", mx.int16: "i16", mx.int32: "i32", mx.int64: "i64", mx.float16: "f16",
    mx.bfloat16: "bf16", mx.float32: "f32", mx.float64: "f64", mx.complex64: "c64",
}


def format_aval(aval: ShapeDtypeStruct) -> str:
    """``f32[2,3]``: a shape and dtype as graphs and error messages print them."""
    return f"{DTYPE_SHORT_NAMES.get(aval.dtype, str(aval.dtype))}[{','.join(map(str, aval.shape))}]"


class LeakedTracerError(Exception):
    """A traced value was used after the transform that made it had finished."""


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def user_frame(tb: Any = None) -> str:
    """``file:line (source)`` of the innermost frame outside ftorch: where the
    user's code is (in the traceback ``tb`` if given, else the current stack)."""
    frames = traceback.extract_tb(tb) if tb is not None else traceback.extract_stack()
    for frame in reversed(frames):
        if not os.path.abspath(frame.filename).startswith(_PACKAGE_DIR + os.sep):
            return f"{frame.filename}:{frame.lineno} ({frame.line})"
    return "an unknown place"


# ----------------------------------------------------------------------------
# Primitives
# ----------------------------------------------------------------------------

#: Every primitive by name; tests walk it to make sure each has all its rules.
registry: dict[str, Primitive] = {}


class Primitive:
    """An array operation with all its rules side by side.

    - ``impl(*args, **params)``: the MLX implementation on concrete arrays.
    - ``jvp(primals, tangents, **params) -> (out, tangent_out)``: forward mode.
      A tangent of ``None`` is a symbolic zero; the rule may return ``None``.
    - ``vjp(ct, out, *primals, **params) -> tuple``: reverse mode, one
      cotangent (or ``None`` for zero / not differentiable) per primal. It is
      told, as the keyword ``needed`` (a tuple of bools, as MLX's
      ``argnums``), which primals need a cotangent: traced floating values,
      not constants, data, integers or Python scalars, so it computes none
      for the others and never checks dtypes itself.
    - ``vjp_fwd(primals, **params) -> (out, residuals, vjp_params)``: optional,
      for primitives whose VJP needs more than their inputs (``jit``'s
      intermediate values): reverse mode then runs it instead of ``impl`` and
      calls ``vjp(ct, out, *residuals, **vjp_params)``.
    - ``batch(vals, dims, axis_size, **params) -> (out, out_dim)``: vmap's rule
      (``dims[i]`` is the batch axis of ``vals[i]``, or ``None``).
    - ``abstract_eval(*avals, **params)``: the shape/dtype rule. By default it
      runs ``impl`` on lazy MLX placeholders, which computes nothing (MLX is
      lazy) and agrees with MLX's own shape inference by construction.
    - ``lowering(*args, **params)``: optional, what ``graph.lower`` emits for
      it into one straight-line MLX function (``jit`` inlines its graph);
      ``impl`` when absent.
    - ``needs_host``: it reads values on the host while it runs (a loop
      whose trip count depends on data), so a compiled graph is split at it
      (see ``graph.lower``); its ``lowering`` then runs between compiled
      segments, on concrete arrays.
    - ``communicates``: it exchanges data with other processes (a
      collective), so it runs when the graph runs, never while ``jit``
      stages it (constant folding leaves it alone: processes whose caches
      miss at different times would otherwise disagree on when it runs).
    - ``elementwise``: its operands broadcast and promote to one dtype
      elementwise, so a weakly typed scalar operand (a Python scalar passed to
      ``jit``) takes the dtype of the others.

    Rules are written with ftorch ops, so they are differentiable themselves.
    ``params`` are static, hashable keyword arguments (axes, shapes, dtypes).
    """

    __slots__ = (
        "name", "impl", "jvp", "vjp", "vjp_fwd", "batch",
        "_abstract_eval", "multiple_results", "elementwise", "lowering", "needs_host",
        "communicates",
    )

    def __init__(
        self,
        name: str,
        impl: Callable,
        *,
        jvp: Callable | None = None,
        vjp: Callable | None = None,
        batch: Callable | None = None,
        abstract_eval: Callable | None = None,
        multiple_results: bool = False,
        elementwise: bool = False,
    ):
        if name in registry:
            raise ValueError(f"primitive {name!r} is defined twice")
        self.name = name
        self.impl = impl
        self.jvp = jvp
        self.vjp = vjp
        self.vjp_fwd = None
        self.batch = batch
        self._abstract_eval = abstract_eval
        self.multiple_results = multiple_results
        self.elementwise = elementwise
        self.lowering: Callable | None = None
        self.needs_host = False
        self.communicates = False
        registry[name] = self

    def __repr__(self) -> str:
        return self.name

    def bind(self, *args: Any, **params: Any) -> Any:
        if not _stack:  # the eager fast path: no transform is active
            try:
                return self.impl(*args, **params)
            except Exception:
                self._explain_failure(args)
                raise
        # The innermost (highest-level) transform among the arguments
        # interprets the op. Inlined: this runs for every op under a transform.
        trace = None
        for a in args:
            if isinstance(a, Tracer) and (trace is None or a._trace.main.level > trace.main.level):
                trace = a._trace
        dynamic = _dynamic
        if dynamic is not None and (trace is None or trace.main.level < dynamic.level):
            # Under jit, ops on values the staged function does not trace
            # (constants, outer transforms' values) are staged too.
            trace = dynamic.trace_type(dynamic)
        elif trace is None:
            try:
                return self.impl(*args, **params)
            except Exception:
                self._explain_failure(args)
                raise
        main = trace.main
        if not main.active:
            raise _leak_error(main)
        try:
            tracers = [a if isinstance(a, Tracer) and a._trace.main is main
                       else trace.full_raise(a) for a in args]
        except (TypeError, OverflowError):
            self._explain_failure(args)
            raise
        return trace.process_primitive(self, tracers, params)

    def _explain_failure(self, args: tuple) -> None:
        """Raise a clearer error than MLX's for operands it refused."""
        _check_no_tracers(args)  # a tracer that leaked out of a finished transform
        for i, a in enumerate(args):
            if not isinstance(a, _ARRAY_LIKE) and not isinstance(a, Tracer):
                raise TypeError(
                    f"{self.name}: operand {i} must be an array or a Python scalar, got "
                    f"{type(a).__name__}: {a!r}")
            if type(a) is int and not -2**63 <= a < 2**63:
                raise _conversion_error(a, f"{self.name}: operand {i}", OverflowError())

    def abstract_eval(self, *avals: Any, **params: Any) -> Any:
        if self._abstract_eval is not None:
            return self._abstract_eval(*avals, **params)
        placeholders = [
            mx.zeros(a.shape, a.dtype) if isinstance(a, ShapeDtypeStruct) else a for a in avals
        ]
        out = self.impl(*placeholders, **params)
        if self.multiple_results:
            return [ShapeDtypeStruct(tuple(o.shape), o.dtype) for o in out]
        return ShapeDtypeStruct(tuple(out.shape), out.dtype)

    # Rules are usually attached after the functions they use are defined.
    def def_jvp(self, rule: Callable) -> Callable:
        self.jvp = rule
        return rule

    def def_vjp(self, rule: Callable) -> Callable:
        self.vjp = rule
        return rule

    def def_vjp_fwd(self, rule: Callable) -> Callable:
        self.vjp_fwd = rule
        return rule

    def def_batch(self, rule: Callable) -> Callable:
        self.batch = rule
        return rule


# ----------------------------------------------------------------------------
# Traces and the transform stack
# ----------------------------------------------------------------------------


class MainTrace:
    """One active transform: its level on the stack and its private data."""

    __slots__ = ("level", "trace_type", "global_data", "active")

    def __init__(self, level: int, trace_type: type, global_data: Any):
        self.level = level
        self.trace_type = trace_type
        self.global_data = global_data
        self.active = True

    def __repr__(self) -> str:
        return f"MainTrace({self.trace_type.__name__}, level={self.level})"


_stack: list[MainTrace] = []
# The staging transform (jit) being traced, if any: it also takes the ops
# whose arguments no higher transform traces.
_dynamic: MainTrace | None = None


@contextmanager
def new_main(trace_type: type, global_data: Any = None, dynamic: bool = False):
    """Push a new transform level for the duration of the block.

    ``dynamic=True`` (staging) also routes to it every op whose arguments
    carry no tracer of a higher level, so that constants get staged too."""
    global _dynamic
    main = MainTrace(len(_stack), trace_type, global_data)
    if not _saved_dunders:
        _install_array_dunders()
    _stack.append(main)
    previous = _dynamic
    if dynamic:
        _dynamic = main
    try:
        yield main
    finally:
        main.active = False
        _dynamic = previous
        _stack.pop()


def _check_no_tracers(args) -> None:
    for a in args:
        if isinstance(a, Tracer) and not a._trace.main.active:
            raise _leak_error(a._trace.main)


_ARRAY_LIKE = (mx.array, np.ndarray, np.generic, bool, int, float, complex)


def _leak_error(main: MainTrace) -> LeakedTracerError:
    return LeakedTracerError(
        f"a value traced by {main.trace_type.transform} (level {main.level}) was used after "
        "that transform finished. Return traced values from the transformed function "
        "instead of storing them in globals or closures."
    )


# mx.random's samplers (MLX names them mlx.core.<name> in its errors).
_MLX_RANDOM = frozenset({"bernoulli", "categorical", "gumbel", "laplace", "multivariate_normal",
                         "normal", "permutation", "randint", "split", "truncated_normal",
                         "uniform"})


def _foreign_call_message(value: str, callee: str, where: str) -> str:
    """Why ``callee`` (an MLX or NumPy function) cannot take ``value`` (a traced
    value), and what to call instead: the ftorch.numpy functions named on the
    user's line."""
    fnp = _numpy()
    # The MLX/NumPy functions called: the callee's name if known, else those on
    # the user's line under the usual module aliases.
    called = re.findall(r"^mlx\.core\.(\w+)\(", callee) or re.findall(
        r"\b(?:mx|mlx\.core|np|numpy)\.(\w+)\s*\(", where)
    if re.search(r"\b(?:mx|mlx\.core)\.random\.", where) or any(
            n in _MLX_RANDOM for n in called):
        return (
            f"{callee} was given {value} at {where}. mx.random cannot draw from a traced "
            "key (or with traced parameters): use ftorch.random with the same key "
            "(import ftorch.random; ftorch.random.normal(key, shape), ...), which draws "
            "the same numbers as mx.random and works under jit and vmap.")
    names = sorted({n for n in called if hasattr(fnp, n)})
    instead = (", ".join(f"fnp.{n}" for n in names) if names
               else "the ftorch.numpy function of the same name")
    return (
        f"{callee} was given {value} at {where}. MLX and NumPy functions cannot see "
        "through ftorch's transforms: call ftorch.numpy instead (import ftorch.numpy as "
        f"fnp; here {instead}). Array operators and methods (x + y, x @ w, x.sum()) work "
        "on traced values as they are."
    )


def call_traced(f: Callable, *args: Any) -> Any:
    """Call a function being transformed. MLX functions given a tracer fail
    in their C++ argument conversion (a signature dump, or ``std::bad_cast``),
    before any hook of ours runs: those errors are re-raised saying what
    happened, pointing at the user's line."""
    try:
        return f(*args)
    except (TypeError, RuntimeError) as e:
        message = str(e)
        if isinstance(e, TypeError) and "incompatible function arguments" in message \
                and "Tracer" in message:
            callee = f"mlx.core.{message.split('(', 1)[0]}()"
        elif isinstance(e, RuntimeError) and message == "std::bad_cast":
            callee = "an mlx.core function (it failed to convert an argument: std::bad_cast)"
        else:
            raise
        clearer = TypeError(_foreign_call_message(
            "a traced value", callee, user_frame(e.__traceback__)))
        raise clearer.with_traceback(e.__traceback__) from None


class Trace:
    """The interpreter of one transform at one level."""

    __slots__ = ("main",)
    transform = "a transform"  # how errors name it: "ft.vmap", ...

    def __init__(self, main: MainTrace):
        self.main = main

    def pure(self, val: Any) -> Tracer:  # a value that does not depend on this transform
        raise NotImplementedError

    lift = pure  # a tracer of a lower level

    def full_raise(self, val: Any) -> Tracer:
        if not isinstance(val, Tracer):
            # NumPy constants become MLX arrays so rules never mix the two.
            if not isinstance(val, (mx.array, bool, int, float, complex)):
                if not isinstance(val, (np.ndarray, np.generic)):
                    raise TypeError(f"an operand must be an array or a Python scalar, got "
                                    f"{type(val).__name__}: {val!r}")
                val = mx.array(val)
            elif type(val) is int and not -2**63 <= val < 2**63:  # MLX: std::bad_cast
                raise OverflowError(f"the Python int {val} does not fit in int64")
            return self.pure(val)
        main = val._trace.main
        if main is self.main:
            return val
        if not main.active:
            raise _leak_error(main)
        if main.level < self.main.level:
            return self.lift(val)
        raise _leak_error(main)

    def process_primitive(self, prim: Primitive, tracers: list, params: dict):
        raise NotImplementedError


# ----------------------------------------------------------------------------
# Tracers: what user code sees in place of arrays inside a transform
# ----------------------------------------------------------------------------


_CONVERSION_ERROR = (
    "{what} of {value} would drop its derivative. Inside transforms, use ftorch.numpy ops "
    "instead of mlx.core/numpy functions; to read the value on purpose, use x.item()."
)


# The NumPy layer (ftorch.numpy) that tracers' operators and methods, and
# mx.array's indexing, dispatch to. It is built on this module, so it
# installs itself here when imported instead of being imported by it.
_array_api: Any = None


def install_array_api(module: Any) -> None:
    global _array_api
    _array_api = module


def _numpy() -> Any:
    return _array_api


# NumPy ufuncs that Python operators on (ndarray, tracer) pairs call, and
# their ftorch.numpy functions.
_OPERATOR_UFUNCS = {
    "add": "add", "subtract": "subtract", "multiply": "multiply", "divide": "divide",
    "true_divide": "divide", "floor_divide": "floor_divide", "remainder": "remainder",
    "power": "power", "matmul": "matmul", "bitwise_and": "bitwise_and",
    "bitwise_or": "bitwise_or", "bitwise_xor": "bitwise_xor", "less": "less",
    "less_equal": "less_equal", "greater": "greater", "greater_equal": "greater_equal",
    "equal": "equal", "not_equal": "not_equal",
}


class Tracer:
    """A stand-in for an array inside a transform.

    It supports the operators and methods users write on ``mx.array``; each
    dispatches to the ``ftorch.numpy`` op of the same name.
    """

    __slots__ = ("_trace",)

    # Subclasses define ``aval`` (a ShapeDtypeStruct) and ``concrete``.
    @property
    def aval(self) -> ShapeDtypeStruct:
        raise NotImplementedError

    @property
    def shape(self) -> tuple[int, ...]:
        return self.aval.shape

    @property
    def dtype(self) -> mx.Dtype:
        return self.aval.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def itemsize(self) -> int:
        return self.dtype.size

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.size

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def __repr__(self) -> str:
        shape = ",".join(map(str, self.shape))
        return f"{type(self).__name__}<{self.dtype}[{shape}], level={self._trace.main.level}>"

    def describe(self) -> str:
        """What this value is, for error messages: 'a traced f32[3] array (ft.vmap)'."""
        return f"a traced {format_aval(self.aval)} array ({self._trace.main.trace_type.transform})"

    def _check_live(self) -> None:
        main = self._trace.main
        if not main.active:
            raise _leak_error(main)

    # Python control flow needs a concrete value; autodiff tracers have one.
    def concrete(self) -> mx.array:
        raise TypeError(
            f"{self!r} has no concrete value here; use ftorch.numpy.where for "
            "data-dependent choices"
        )

    def _concrete(self) -> mx.array:
        self._check_live()
        return self.concrete()

    def __bool__(self) -> bool:
        return bool(self._concrete())

    def __int__(self) -> int:
        return int(self._concrete())

    def __index__(self) -> int:
        if is_floating(self.dtype) or self.shape:  # as NumPy: a 0-d integer array only
            raise TypeError("only integer scalar arrays can be converted to a scalar index")
        return int(self._concrete())

    # float(), complex() and NumPy conversion are refused: MLX and NumPy call
    # them implicitly (mx.sin(tracer)), which would silently drop the
    # derivative. Reading a value on purpose is spelled .item().
    def conversion_error(self, what: str) -> Exception:
        """The error for ``what`` (float(), a NumPy conversion) on this value."""
        return TypeError(_CONVERSION_ERROR.format(what=what, value=self.describe()))

    def __float__(self) -> float:
        self._check_live()
        raise self.conversion_error("float()")

    def __complex__(self) -> complex:
        self._check_live()
        raise self.conversion_error("complex()")

    def __array__(self, dtype=None, copy=None):
        self._check_live()
        raise self.conversion_error("Conversion to a NumPy array")

    def __mlx_array__(self):
        # MLX calls this when an mlx.core function (mx.exp, mx.array, ...) is
        # given a tracer: say which value and what to call instead.
        self._check_live()
        raise TypeError(_foreign_call_message(self.describe(), "an mlx.core function",
                                              user_frame()))

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        self._check_live()
        # Python operators on an (ndarray, tracer) pair arrive here: apply ours.
        name = _OPERATOR_UFUNCS.get(ufunc.__name__)
        if name is not None and method == "__call__" and len(inputs) == 2 and not kwargs:
            return getattr(_numpy(), name)(*inputs)
        raise TypeError(_foreign_call_message(self.describe(), f"numpy.{ufunc.__name__}",
                                              user_frame()))

    def item(self):
        return self._concrete().item()

    def tolist(self):
        return self._concrete().tolist()

    # Indexing and functional updates.
    def __getitem__(self, idx):
        self._check_live()  # an impl indexing a leaked tracer would recurse
        return _numpy().getitem(self, idx)

    def __setitem__(self, idx, value):
        raise TypeError(
            "traced arrays are immutable: write x = x.at[idx].set(value) "
            "(or ftorch.numpy.at(x)[idx].set(value), which also works on mx.array)"
        )

    @property
    def at(self):
        return _numpy().at(self)

    @property
    def T(self):
        return _numpy().transpose(self)

    @property
    def mT(self):
        return _numpy().swapaxes(self, -1, -2)

    @property
    def real(self):
        return _numpy().real(self)

    @property
    def imag(self):
        return _numpy().imag(self)

    def __neg__(self):
        return _numpy().negative(self)

    def __pos__(self):
        return self

    def __abs__(self):
        return _numpy().abs(self)

    def __invert__(self):
        return _numpy().invert(self)


def _method(name: str) -> Callable:
    def method(self, *args, **kwargs):
        return getattr(_numpy(), name)(self, *args, **kwargs)

    method.__name__ = name
    return method


def _binary(name: str, reflected: bool) -> Callable:
    # The ftorch.numpy function is looked up on first use (it imports this
    # module) and kept: operators are on every traced op's path.
    fn = None

    def resolve():
        nonlocal fn
        fn = getattr(_numpy(), name)
        return fn

    if reflected:
        def op(self, other):
            return (fn or resolve())(other, self)
    else:
        def op(self, other):
            return (fn or resolve())(self, other)
    return op


_BINARY_OPS = {
    "add": "add", "sub": "subtract", "mul": "multiply", "truediv": "divide",
    "floordiv": "floor_divide", "mod": "remainder", "pow": "power", "matmul": "matmul",
    "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
}
_COMPARISONS = {
    "lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal",
    "eq": "equal", "ne": "not_equal",
}
for _dunder, _op in _BINARY_OPS.items():
    setattr(Tracer, f"__{_dunder}__", _binary(_op, reflected=False))
    setattr(Tracer, f"__r{_dunder}__", _binary(_op, reflected=True))
for _dunder, _op in _COMPARISONS.items():
    setattr(Tracer, f"__{_dunder}__", _binary(_op, reflected=False))
Tracer.__hash__ = None  # like arrays: == is elementwise

# mx.array's methods (and JAX's array methods) that ftorch.numpy has, so
# that code written on arrays runs on tracers.
_ARRAY_METHODS = (
    "sum", "mean", "prod", "max", "min", "argmax", "argmin", "all", "any", "var", "std",
    "cumsum", "cumprod", "logsumexp", "reshape", "transpose", "swapaxes", "moveaxis",
    "squeeze", "flatten", "ravel", "astype", "abs", "exp", "log", "log1p", "log2", "log10",
    "sqrt", "rsqrt", "square", "reciprocal", "sin", "cos", "round", "clip", "take", "split",
    "dot", "repeat", "conj", "conjugate", "diagonal", "trace",
)
for _name in _ARRAY_METHODS:
    setattr(Tracer, _name, _method(_name))


# mx.array's binary operators raise on operands they do not know instead of
# returning NotImplemented, so `W @ x` with a tracer `x` would fail. From the
# first transform on, they defer to tracers (and behave as before otherwise).
# They stay installed: swapping type slots at every transform call costs tens
# of microseconds, the deferring check a fraction of one per operator.
_ARRAY_DUNDERS = [
    *(f"__{d}__" for d in _BINARY_OPS), *(f"__r{d}__" for d in _BINARY_OPS),
    *(f"__i{d}__" for d in _BINARY_OPS),  # a += t falls back to a = a + t
    *(f"__{d}__" for d in _COMPARISONS),
]
_saved_dunders: dict[str, Any] = {}


def _deferring(original: Callable) -> Callable:
    def dunder(self, other):
        if isinstance(other, Tracer):
            return NotImplemented
        return original(self, other)

    return dunder


def _install_array_dunders() -> None:
    for name in _ARRAY_DUNDERS:
        original = mx.array.__dict__.get(name)
        if original is not None:
            _saved_dunders[name] = original
            setattr(mx.array, name, _deferring(original))


# Indexing, functional updates and casts of mx.array, from import on: JAX's
# spellings work on plain arrays as on tracers (``x.at[i].set(v)``,
# ``x[mask]``, ``x.astype(float)``), and an mx.array indexed by a tracer (an
# embedding table in a vmapped function) defers to ftorch. MLX's own methods
# run first; ftorch's only where MLX refuses, so MLX code keeps MLX's speed.
# The primitives' MLX impls call MLX's own methods directly.
mlx_getitem = mx.array.__getitem__
mlx_setitem = mx.array.__setitem__
_mlx_astype = mx.array.astype
_mlx_at = mx.array.__dict__["at"]


def mlx_at(x: mx.array) -> Any:
    """MLX's own ``x.at`` (its ``ArrayAt``), for the primitives' MLX impls."""
    return _mlx_at.__get__(x)


def _check_int_index(x: mx.array, idx: int) -> None:
    """MLX reads past the end for an out-of-range ``x[i]`` (and crashes for
    some negative ``i``); tuples of ints it checks itself."""
    if x.ndim and not -x.shape[0] <= idx < x.shape[0]:
        raise IndexError(f"index {idx} is out of bounds for axis 0 with size {x.shape[0]}")


def _array_getitem(self: mx.array, idx: Any) -> Any:
    if type(idx) is int:
        _check_int_index(self, idx)
    try:
        return mlx_getitem(self, idx)
    except (TypeError, ValueError):  # boolean masks, tracers, lists of arrays
        return _numpy().getitem(self, idx)


def _array_setitem(self: mx.array, idx: Any, value: Any) -> None:
    parts = idx if type(idx) is tuple else (idx,)
    if isinstance(value, Tracer) or any(isinstance(e, Tracer) for e in parts):
        raise TypeError(
            "x[idx] = value updates an mx.array in place, which cannot take traced values: "
            "write x = x.at[idx].set(value) (a new array, differentiable in x and value)")
    if type(idx) is int:
        _check_int_index(self, idx)
    mlx_setitem(self, idx, value)


def _array_astype(self: mx.array, dtype: Any, stream: Any = None) -> mx.array:
    if not isinstance(dtype, mx.Dtype):
        dtype = to_mlx_dtype(dtype, "astype: dtype")
    return _mlx_astype(self, dtype) if stream is None else _mlx_astype(self, dtype, stream)


_array_getitem.__doc__ = mlx_getitem.__doc__
_array_astype.__doc__ = _mlx_astype.__doc__
mx.array.__getitem__ = _array_getitem
mx.array.__setitem__ = _array_setitem
mx.array.astype = _array_astype
mx.array.at = property(
    lambda self: _numpy().at(self),
    doc="Functional updates: JAX's x.at[idx].set/get/add/.../min/max(v) and MLX's "
        "add/subtract/multiply/divide/minimum/maximum, as ftorch.numpy.at(x)[idx].")
# JAX's array methods that mx.array lacks, so JAX code runs on plain arrays.
for _name in _ARRAY_METHODS:
    if not hasattr(mx.array, _name):
        setattr(mx.array, _name, _method(_name))


# ----------------------------------------------------------------------------
# Helpers shared by transforms and rules
# ----------------------------------------------------------------------------

# MLX keeps its global random key in this list (mx.random.state) and replaces
# the key on every draw without key=; reading the module attribute is slow.
_RANDOM_STATE = mx.random.state


def global_random_key() -> Any:
    """MLX's current global random key: a draw from the global state (an
    ``mx.random.*`` call without ``key=``) replaces it, which transforms that
    must refuse such draws compare before and after."""
    return _RANDOM_STATE[0]


FLOATING = frozenset((mx.float16, mx.bfloat16, mx.float32, mx.float64))
#: The dtypes that carry tangents and cotangents: real floating and complex
#: (NumPy's ``inexact``).
INEXACT = FLOATING | {mx.complex64}


def is_floating(dtype: mx.Dtype) -> bool:
    """A real floating dtype."""
    return dtype in FLOATING


def is_inexact(dtype: mx.Dtype) -> bool:
    """A real floating or complex dtype: one that is differentiated."""
    return dtype in INEXACT


def is_complex(dtype: mx.Dtype) -> bool:
    return dtype == mx.complex64


def aval_of(x: Any) -> ShapeDtypeStruct:
    """Shape and dtype of an array, tracer, NumPy array or Python scalar."""
    if isinstance(x, mx.array):
        return ShapeDtypeStruct(x.shape, x.dtype)
    if isinstance(x, Tracer):
        return x.aval
    scalar_dtype = _SCALAR_DTYPES.get(type(x))
    if scalar_dtype is not None:
        return ShapeDtypeStruct((), scalar_dtype)
    return ShapeDtypeStruct(tuple(np.shape(x)), mx.array(x).dtype)


# Python scalars are weakly typed: these are their dtypes on their own.
_SCALAR_DTYPES = {bool: mx.bool_, int: mx.int32, float: mx.float32, complex: mx.complex64}


def as_array(x: Any, name: str = "argument") -> Any:
    """Accept an mx.array, a tracer, a NumPy array or a Python scalar."""
    if isinstance(x, (mx.array, Tracer)):
        return x
    if isinstance(x, (np.ndarray, np.generic, bool, int, float, complex, list, tuple)):
        try:
            return mx.array(x)
        except (RuntimeError, ValueError) as e:  # MLX's "std::bad_cast" names nothing
            raise _conversion_error(x, name, e) from None
    raise TypeError(f"{name} must be an array, got {type(x).__name__}: {x!r}")


def _conversion_error(x: Any, name: str, error: Exception) -> Exception:
    """Why MLX could not make an array of the Python value ``x``."""
    def ints(v):
        if isinstance(v, (list, tuple)):
            for item in v:
                yield from ints(item)
        elif type(v) is int:
            yield v

    big = [v for v in ints(x) if not -2**63 <= v < 2**63]
    if big:
        return OverflowError(f"{name}: the Python int {big[0]} does not fit in int64, MLX's "
                             "widest integer; pass it as a float, or split it")
    text = str(error).removeprefix("[array] ")
    return ValueError(f"{name}: cannot make an array of {type(x).__name__} {x!r:.80}: {text} "
                      "(nested lists must be rectangular, of numbers or arrays)")


