"""JAX's top-level names about where and how code runs, on MLX: waiting for
results, moving arrays to and from the host, devices and processes, caches,
and the settings that make sense here (``disable_jit``, ``log_compiles``,
``default_device``, ``ensure_compile_time_eval``), plus ``make_jaxpr``,
``typeof``, ``named_scope`` and ``named_call``.

MLX has one process-wide default device and unified memory: an array lives
wherever the ops that read it run, so ``device_put`` converts and returns,
and ``default_device`` picks the device ops run on (``mx.stream``).
``jax.devices()`` lists every accelerator of a platform; here it is the
default device, the one ftorch computes on.

>>> import ftorch as ft, numpy as np
>>> x = ft.block_until_ready(ft.device_put(np.array([1.0, 2.0], np.float32)))
>>> type(x).__name__, ft.device_get({"x": x})["x"].tolist()
('array', [1.0, 2.0])
"""

from __future__ import annotations

import contextlib
import functools
import io
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import mlx.core as mx
import numpy as np

from ftorch import api_util, tree
from ftorch.config import config
from ftorch.core import ShapeDtypeStruct, Tracer, aval_of, eager_constants, provenance
from ftorch.graph import Graph
from ftorch.transforms.jit import clear_caches
from ftorch.transforms.staging import eval_shape, make_graph

__all__ = [
    "block_until_ready", "device_put", "device_get", "devices", "local_devices",
    "device_count", "local_device_count", "default_backend", "default_device",
    "process_index", "process_count", "process_indices", "clear_caches", "disable_jit",
    "log_compiles", "ensure_compile_time_eval", "make_jaxpr", "typeof", "named_scope", "named_call",
    "print_environment_info",
]


def block_until_ready(x: Any) -> Any:
    """``x`` (a pytree), once every array in it is computed (``mx.eval``),
    as ``jax.block_until_ready``; other leaves pass through.

    >>> import ftorch as ft, mlx.core as mx
    >>> ft.block_until_ready({"y": mx.ones(2) * 3})["y"].tolist()
    [3.0, 3.0]
    """
    arrays = [leaf for leaf in tree.leaves(x) if isinstance(leaf, mx.array)]
    if arrays:
        mx.eval(*arrays)
    return x


def _check_device(device: Any, fname: str) -> None:
    if device is not None and not isinstance(device, (mx.Device, mx.DeviceType)):
        raise TypeError(f"{fname}: device must be an mx.Device (or mx.cpu / mx.gpu) or None; "
                        f"shardings are not supported, got {device!r}")


def device_put(x: Any, device: Any = None, *, src: Any = None, donate: bool = False,
               may_alias: bool | None = None) -> Any:
    """``x`` (a pytree) with its array-likes (NumPy arrays, scalars) made MLX
    arrays, as ``jax.device_put``. MLX memory is unified, so there is no
    copy to make; ``device`` (an ``mx.Device``) is checked and otherwise
    changes nothing (ops choose the device: see ``default_device``).

    >>> import ftorch as ft, numpy as np
    >>> ft.device_put({"a": np.arange(3)})["a"].dtype
    mlx.core.int64
    """
    _check_device(device, "device_put")
    _check_device(src, "device_put")

    def put(leaf: Any) -> Any:
        if isinstance(leaf, (mx.array, Tracer)):
            return leaf
        return api_util.flatten_arrays(leaf, "device_put x")[0][0]

    return tree.map(put, x)


def device_get(x: Any) -> Any:
    """``x`` (a pytree) with its MLX arrays copied to NumPy arrays, as
    ``jax.device_get``; other leaves pass through.

    >>> import ftorch as ft, mlx.core as mx
    >>> type(ft.device_get([mx.ones(2)])[0]).__name__
    'ndarray'
    """
    def get(leaf: Any) -> Any:
        if isinstance(leaf, Tracer):
            raise TypeError(f"device_get: cannot read a traced value ({leaf.describe()}); "
                            "call it outside jit, vmap and grad")
        if isinstance(leaf, mx.array):
            return np.array(leaf.astype(mx.float32) if leaf.dtype == mx.bfloat16 else leaf)
        return leaf

    return tree.map(get, x)


def devices(backend: str | None = None) -> list[mx.Device]:
    """The devices ftorch computes on: MLX's default device, as
    ``jax.devices`` (``backend`` ``"cpu"`` or ``"gpu"`` asks for that one).

    >>> import ftorch as ft
    >>> len(ft.devices())
    1
    """
    if backend is None:
        return [mx.default_device()]
    kinds = {"cpu": mx.cpu, "gpu": mx.gpu, "metal": mx.gpu, "cuda": mx.gpu}
    if backend not in kinds:
        raise ValueError(f"devices: backend must be one of {sorted(kinds)}, got {backend!r}")
    if not mx.is_available(kinds[backend]):
        raise RuntimeError(f"devices: no {backend} device is available to MLX here")
    return [mx.Device(kinds[backend])]


def local_devices(process_index: int | None = None, backend: str | None = None
                  ) -> list[mx.Device]:
    """``devices(backend)``: each process computes on its own device, as
    ``jax.local_devices``.

    >>> import ftorch as ft
    >>> ft.local_devices() == ft.devices()
    True
    """
    return devices(backend)


def device_count(backend: str | None = None) -> int:
    """1: ftorch computes on one device per process, as ``jax.device_count``
    counts a platform's devices.

    >>> import ftorch as ft
    >>> ft.device_count()
    1
    """
    return len(devices(backend))


def local_device_count(backend: str | None = None) -> int:
    """1, as ``device_count``: ``jax.local_device_count``.

    >>> import ftorch as ft
    >>> ft.local_device_count()
    1
    """
    return device_count(backend)


def default_backend() -> str:
    """``"gpu"`` when MLX's default device is its GPU (Metal or CUDA), else
    ``"cpu"``, as ``jax.default_backend``.

    >>> import ftorch as ft
    >>> ft.default_backend() in ("cpu", "gpu")
    True
    """
    return "gpu" if mx.default_device().type == mx.gpu else "cpu"


@contextlib.contextmanager
def default_device(device: Any) -> Iterator[None]:
    """Run the ops of the block on ``device`` (an ``mx.Device``, ``mx.cpu``
    or ``mx.gpu``): MLX's ``mx.stream``, as ``jax.default_device``.

    >>> import ftorch as ft, mlx.core as mx
    >>> with ft.default_device(mx.cpu):
    ...     y = mx.ones(2) + 1
    >>> y.tolist()
    [2.0, 2.0]
    """
    _check_device(device, "default_device")
    with mx.stream(device):
        yield


def _distributed() -> Any:
    from ftorch import distributed  # the layer above: imported when asked

    return distributed


def process_index() -> int:
    """This process's rank among those ``ftorch.distributed`` (MLX's
    distributed launcher) started, 0 without one, as ``jax.process_index``.

    >>> import ftorch as ft
    >>> ft.process_index()
    0
    """
    return _distributed().rank()


def process_count() -> int:
    """How many processes ``ftorch.distributed`` runs (1 without a
    launcher), as ``jax.process_count``.

    >>> import ftorch as ft
    >>> ft.process_count()
    1
    """
    return _distributed().size()


def process_indices() -> list[int]:
    """The ranks of all the processes, as ``jax.process_indices``.

    >>> import ftorch as ft
    >>> ft.process_indices()
    [0]
    """
    return list(range(process_count()))


@contextlib.contextmanager
def _setting(name: str, value: Any) -> Iterator[None]:
    previous = getattr(config, name)
    setattr(config, name, value)
    try:
        yield
    finally:
        setattr(config, name, previous)


def disable_jit(disable: bool = True) -> contextlib.AbstractContextManager:
    """A context in which every ``ft.jit`` function runs its Python function
    eagerly, op by op (prints and breakpoints see concrete values), as
    ``jax.disable_jit``; ``ft.config.disable_jit`` is the global switch.

    >>> import ftorch as ft, mlx.core as mx
    >>> f = ft.jit(lambda x: x * 2)
    >>> with ft.disable_jit():
    ...     y = f(mx.array(3.0))
    >>> y.item(), f.trace_count
    (6.0, 0)
    """
    return _setting("disable_jit", bool(disable))


def debug_nans(enable: bool = True) -> contextlib.AbstractContextManager:
    """A context in which an operation that makes a NaN raises
    ``FloatingPointError`` naming it, its operands' shapes, the line that
    wrote it, its named scope and, under ``grad``, the pass and the rule,
    as ``jax.debug_nans``; ``ft.config.debug_nans`` (``FTORCH_DEBUG_NANS=1``)
    is the global switch (``ftorch.transforms.float_checks``).

    >>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
    >>> with ft.debug_nans():
    ...     fnp.sqrt(mx.array([4.0])).tolist()
    [2.0]
    """
    return _setting("debug_nans", bool(enable))


def debug_infs(enable: bool = True) -> contextlib.AbstractContextManager:
    """As ``debug_nans``, for infinities, as ``jax.debug_infs``;
    ``ft.config.debug_infs`` (``FTORCH_DEBUG_INFS=1``) is the global switch.

    >>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
    >>> with ft.debug_infs():
    ...     fnp.log(mx.array([0.0]))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    FloatingPointError: debug_infs: the result of log (operands f32[1]) holds an infinity, ...
    """
    return _setting("debug_infs", bool(enable))


def log_compiles(enable: bool = True) -> contextlib.AbstractContextManager:
    """A context in which each jit trace is logged with its reason (to the
    ``ftorch.jit`` logger), as ``jax.log_compiles``;
    ``ft.config.log_compiles`` is the global switch.

    >>> import ftorch as ft
    >>> with ft.log_compiles():
    ...     ft.config.log_compiles
    True
    """
    return _setting("log_compiles", bool(enable))


def ensure_compile_time_eval() -> contextlib.AbstractContextManager:
    """A context in which, while ``jit`` stages a function, ops on values
    that are not traced (constants, NumPy and MLX arrays the function closes
    over) run at once, so their results are concrete (usable in Python
    control flow), as ``jax.ensure_compile_time_eval``. Ops on traced
    values are still staged.

    >>> import ftorch as ft, mlx.core as mx
    >>> @ft.jit
    ... def f(x):
    ...     with ft.ensure_compile_time_eval():
    ...         n = int(mx.array(3) * 2)   # concrete, even under jit
    ...     return x * n
    >>> f(mx.array(1.0)).item()
    6.0
    """
    return eager_constants()


def make_jaxpr(fun: Callable, static_argnums: int | Sequence[int] = (),
               axis_env: None = None, return_shape: bool = False) -> Callable:
    """``fun`` staged into ftorch's graph IR (``ft.make_graph``), which
    prints like a jaxpr, as ``jax.make_jaxpr``; with ``return_shape``, also
    the output's ``ShapeDtypeStruct`` pytree.

    >>> import ftorch as ft, mlx.core as mx
    >>> print(ft.make_jaxpr(lambda x: x * 2.0 + 1.0)(mx.ones(2)))
    graph(a:f32[2]) -> f32[2]
      b:f32[2] = multiply a 2.0
      c:f32[2] = add b 1.0
      return c
    """
    if axis_env is not None:
        raise NotImplementedError("make_jaxpr: axis_env is not supported; stage the function "
                                  "inside the vmap that names the axis")
    staged = make_graph(fun, static_argnums)
    if not return_shape:
        return staged

    def with_shape(*args: Any, **kwargs: Any) -> tuple[Graph, Any]:
        graph = staged(*args, **kwargs)
        return graph, eval_shape(fun, *args, **kwargs)

    return with_shape


def typeof(x: Any) -> ShapeDtypeStruct:
    """The shape and dtype of ``x`` (an array, a traced value, a scalar), as
    ``jax.typeof`` gives its abstract value.

    >>> import ftorch as ft, mlx.core as mx
    >>> ft.typeof(mx.zeros((2, 3), mx.int8))
    ShapeDtypeStruct(shape=(2, 3), dtype=mlx.core.int8)
    """
    return aval_of(x)


@contextlib.contextmanager
def named_scope(name: str) -> Iterator[None]:
    """Name the operations of a block (a context manager) or of a function
    (a decorator), as ``jax.named_scope``. Scopes nest (``"model/layer1"``);
    the names appear in ``make_graph``'s printout, in the profiler's table
    (``ftorch.profiler``) and in the NaN checks' reports
    (``ft.config.debug_nans``).

    >>> import ftorch as ft, mlx.core as mx
    >>> def f(x):
    ...     with ft.named_scope("layer1"):
    ...         return x * 2.0
    >>> print(ft.make_graph(f)(mx.ones(2)))
    graph(a:f32[2]) -> f32[2]
      b:f32[2] = multiply a 2.0  # layer1
      return b
    """
    if not isinstance(name, str):
        raise TypeError(f"named_scope: name must be a str, got {type(name).__name__}")
    with provenance.scope(name):
        yield


def named_call(fun: Callable, *, name: str | None = None) -> Callable:
    """``fun`` with its operations in the named scope ``name`` (default:
    its ``__name__``), as ``jax.named_call``.

    >>> import ftorch as ft, mlx.core as mx
    >>> inc = ft.named_call(lambda x: x + 1.0, name="inc")
    >>> print(ft.make_graph(inc)(mx.ones(2)))
    graph(a:f32[2]) -> f32[2]
      b:f32[2] = add a 1.0  # inc
      return b
    """
    api_util.check_callable(fun, "named_call")
    if name is not None and not isinstance(name, str):
        raise TypeError(f"named_call: name must be a str or None, got {type(name).__name__}")
    scope_name = name if name is not None else getattr(fun, "__name__", "call")

    @functools.wraps(fun)
    def named(*args, **kwargs):
        with provenance.scope(scope_name):
            return fun(*args, **kwargs)

    return named


def print_environment_info(return_string: bool = False) -> str | None:
    """What ftorch runs on (versions, device, BLAS, compiler), as
    ``jax.print_environment_info``: ``ft.info`` without its timings.

    >>> import ftorch as ft
    >>> "mlx" in ft.print_environment_info(return_string=True)
    True
    """
    from ftorch.info import info

    out = io.StringIO()
    info(measure=False, file=out)
    if return_string:
        return out.getvalue()
    print(out.getvalue(), end="")
    return None
