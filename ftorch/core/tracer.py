"""Tracers: what user code sees in place of arrays inside a transform.

A ``Tracer`` has the operators, properties and methods users write on
``mx.array``; each dispatches to the ``ftorch.numpy`` function of the same
name. Conversions that would drop a derivative (``float()``, NumPy, an
``mlx.core`` function) raise an error that names the value, the user's line
and what to call instead.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import mlx.core as mx

from ftorch.core.avals import ShapeDtypeStruct, format_aval, is_floating
from ftorch.core.errors import leak_error, user_frame

# The NumPy layer (ftorch.numpy) that tracers' operators and methods, and
# mx.array's hooks while a transform runs, dispatch to. It is built on the
# core, so it installs itself here when imported instead of being imported.
_array_api: Any = None


def install_array_api(module: Any) -> None:
    """Make ``module`` (ftorch.numpy) what tracers' operators call."""
    global _array_api
    _array_api = module


def array_api() -> Any:
    """ftorch.numpy, once it has installed itself.

    >>> import ftorch.numpy as fnp
    >>> array_api() is fnp
    True
    """
    return _array_api


_CONVERSION_ERROR = (
    "{what} of {value} would drop its derivative. Inside transforms, use ftorch.numpy ops "
    "instead of mlx.core/numpy functions; to read the value on purpose, use x.item()."
)

# mx.random's samplers (MLX names them mlx.core.<name> in its errors).
_MLX_RANDOM = frozenset({"bernoulli", "categorical", "gumbel", "laplace", "multivariate_normal",
                         "normal", "permutation", "randint", "split", "truncated_normal",
                         "uniform"})


def _foreign_call_message(value: str, callee: str, where: str) -> str:
    """Why ``callee`` (an MLX or NumPy function) cannot take ``value`` (a traced
    value), and what to call instead: the ftorch.numpy functions named on the
    user's line."""
    fnp = _array_api
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
    happened, pointing at the user's line.

    >>> call_traced(lambda x: x + 1, 2)
    3
    """
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
            raise leak_error(main)

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
            return getattr(_array_api, name)(*inputs)
        raise TypeError(_foreign_call_message(self.describe(), f"numpy.{ufunc.__name__}",
                                              user_frame()))

    def item(self):
        return self._concrete().item()

    def tolist(self):
        return self._concrete().tolist()

    # Indexing and functional updates.
    def __getitem__(self, idx):
        self._check_live()  # an impl indexing a leaked tracer would recurse
        return _array_api.getitem(self, idx)

    def __setitem__(self, idx, value):
        raise TypeError(
            "traced arrays are immutable: write x = x.at[idx].set(value) "
            "(or ftorch.numpy.at(x)[idx].set(value), which also works on mx.array)"
        )

    @property
    def at(self):
        return _array_api.at(self)

    @property
    def T(self):
        return _array_api.transpose(self)

    @property
    def mT(self):
        return _array_api.swapaxes(self, -1, -2)

    @property
    def real(self):
        return _array_api.real(self)

    @property
    def imag(self):
        return _array_api.imag(self)

    def __neg__(self):
        return _array_api.negative(self)

    def __pos__(self):
        return self

    def __abs__(self):
        return _array_api.abs(self)

    def __invert__(self):
        return _array_api.invert(self)


class PrimalTracer(Tracer):
    """A tracer that carries its primal value (a JVP's or a VJP's): its
    aval, shape, dtype and concrete value are the primal's."""

    __slots__ = ("primal",)

    @property
    def aval(self) -> ShapeDtypeStruct:
        p = self.primal
        return p.aval if isinstance(p, Tracer) else ShapeDtypeStruct(p.shape, p.dtype)

    # Read straight off the primal: these are on every rule's path.
    shape = property(lambda self: self.primal.shape)
    dtype = property(lambda self: self.primal.dtype)
    ndim = property(lambda self: self.primal.ndim)

    def concrete(self) -> Any:
        p = self.primal
        return p.concrete() if isinstance(p, Tracer) else p


def array_method(name: str) -> Callable:
    """A method that calls the ftorch.numpy function ``name`` on its array.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> array_method("ravel")(mx.ones((2, 2))).shape
    (4,)
    """
    def method(self, *args, **kwargs):
        return getattr(_array_api, name)(self, *args, **kwargs)

    method.__name__ = name
    method.__doc__ = f"``x.{name}(...)`` is ``ftorch.numpy.{name}(x, ...)``."
    return method


def _binary(name: str, reflected: bool) -> Callable:
    # The ftorch.numpy function is looked up on first use (it imports the
    # core) and kept: operators are on every traced op's path.
    fn = None

    def resolve():
        nonlocal fn
        fn = getattr(_array_api, name)
        return fn

    if reflected:
        def op(self, other):
            return (fn or resolve())(other, self)
    else:
        def op(self, other):
            return (fn or resolve())(self, other)
    return op


#: Python's binary operators (``__add__`` is "add") and their ftorch.numpy functions.
BINARY_OPS = {
    "add": "add", "sub": "subtract", "mul": "multiply", "truediv": "divide",
    "floordiv": "floor_divide", "mod": "remainder", "pow": "power", "matmul": "matmul",
    "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
}
#: Python's comparisons and their ftorch.numpy functions.
COMPARISONS = {
    "lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal",
    "eq": "equal", "ne": "not_equal",
}
for _dunder, _op in BINARY_OPS.items():
    setattr(Tracer, f"__{_dunder}__", _binary(_op, reflected=False))
    setattr(Tracer, f"__r{_dunder}__", _binary(_op, reflected=True))
for _dunder, _op in COMPARISONS.items():
    setattr(Tracer, f"__{_dunder}__", _binary(_op, reflected=False))
Tracer.__hash__ = None  # like arrays: == is elementwise

#: mx.array's methods (and JAX's array methods) that ftorch.numpy has, so
#: that code written on arrays runs on tracers.
ARRAY_METHODS = (
    "sum", "mean", "prod", "max", "min", "argmax", "argmin", "all", "any", "var", "std",
    "cumsum", "cumprod", "logsumexp", "reshape", "transpose", "swapaxes", "moveaxis",
    "squeeze", "flatten", "ravel", "astype", "abs", "exp", "log", "log1p", "log2", "log10",
    "sqrt", "rsqrt", "square", "reciprocal", "sin", "cos", "round", "clip", "take", "split",
    "dot", "repeat", "conj", "conjugate", "diagonal", "trace",
)
for _name in ARRAY_METHODS:
    setattr(Tracer, _name, array_method(_name))
