"""``ftorch.random``: random numbers from explicit keys, as ``jax.random``.

Keys are MLX keys (``mx.random.key(seed)`` gives the same key), so ftorch
and MLX draw the same numbers for the same key and shape. Each sampler is a
primitive whose operands are the key (and array parameters), so a key may be
traced: under ``jit`` the numbers follow the key argument (they never freeze
across calls); under ``vmap`` over a batch of keys each example draws what a
Python loop over those keys draws, and with an unbatched key every example
draws the same numbers, as in JAX. Samples are differentiable through their
location and scale parameters (``normal``, ``uniform``, ``gumbel``); keys
are integers and carry no derivative.

>>> import ftorch.random as random, mlx.core as mx
>>> k1, k2 = random.split(random.key(0))
>>> random.normal(k1, (2,)).shape, bool(mx.all(random.normal(k1, (2,)) == random.normal(k1, (2,))))
((2,), True)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import mlx.core as mx

import ftorch.primitives as lax
from ftorch.core import Primitive, Tracer, aval_of, format_aval
from ftorch.dtypes import DTypeLike, to_mlx_dtype
from ftorch.primitives._rules import move_bdim, nondifferentiable
from ftorch.primitives.creation import static_shape

__all__ = [
    "key", "PRNGKey", "split", "uniform", "normal", "bernoulli", "randint", "gumbel",
    "categorical", "truncated_normal", "exponential",
]


def key(seed: int) -> mx.array:
    """A key from an integer seed: ``mx.random.key(seed)``.

    >>> import ftorch.random as random
    >>> random.key(0).tolist()
    [0, 0]
    """
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"key: seed must be a Python int, got {type(seed).__name__}: {seed!r}")
    return mx.random.key(seed)


PRNGKey = key  # JAX's older name


def _check_key(k: Any, fname: str) -> Any:
    if not isinstance(k, (mx.array, Tracer)):
        raise TypeError(f"{fname}: key must be a key array (ftorch.random.key(seed)), got "
                        f"{type(k).__name__}: {k!r}")
    a = aval_of(k)
    if a.shape != (2,) or a.dtype != mx.uint32:
        raise TypeError(f"{fname}: key must be a uint32 array of shape (2,) "
                        f"(ftorch.random.key(seed)), got {format_aval(a)}")
    return k


def _sampler(name: str, draw: Callable) -> Primitive:
    """A primitive drawing ``draw(key, *operands, **params)``: not
    differentiable (reparameterised samplers scale its output with ftorch
    ops), batched by drawing example by example, which is what a loop over
    the examples' keys (or parameters) draws."""
    prim = Primitive(f"random_{name}", draw)
    nondifferentiable(prim)

    @prim.def_batch
    def batch(vals, dims, axis_size, **params):
        vals = [v if d is None else move_bdim(v, d, 0, axis_size) for v, d in zip(vals, dims)]
        def example(v, d, i):
            return v if d is None else lax.squeeze(lax.static_slice(v, (slice(i, i + 1),)), (0,))

        draws = [prim.bind(*[example(v, d, i) for v, d in zip(vals, dims)], **params)
                 for i in range(axis_size)]
        return lax.concatenate([lax.expand_dims(x, (0,)) for x in draws], 0), 0

    return prim


split_p = _sampler("split", lambda k, num: mx.random.split(k, num))
uniform_p = _sampler("uniform", lambda k, shape, dtype: mx.random.uniform(
    shape=shape, dtype=dtype, key=k))
normal_p = _sampler("normal", lambda k, shape, dtype: mx.random.normal(shape, dtype, key=k))
gumbel_p = _sampler("gumbel", lambda k, shape, dtype: mx.random.gumbel(shape, dtype, key=k))
bernoulli_p = _sampler("bernoulli", lambda k, p, shape: mx.random.bernoulli(p, shape, key=k))
randint_p = _sampler("randint", lambda k, low, high, shape, dtype: mx.random.randint(
    low, high, shape, dtype, key=k))
categorical_p = _sampler("categorical", lambda k, logits, axis, shape: mx.random.categorical(
    logits, axis, shape, key=k))
truncated_normal_p = _sampler(
    "truncated_normal", lambda k, lower, upper, shape, dtype: mx.random.truncated_normal(
        lower, upper, shape, dtype, key=k))


def split(key: Any, num: int = 2) -> Any:
    """``num`` new keys from ``key``, stacked: shape ``(num, 2)``.

    >>> import ftorch.random as random
    >>> random.split(random.key(0), 3).shape
    (3, 2)
    """
    _check_key(key, "split")
    if isinstance(num, bool) or not isinstance(num, int) or num < 1:
        raise ValueError(f"split: num must be a positive int, got {num!r}")
    return split_p.bind(key, num=num)


def _float_dtype(dtype: DTypeLike, fname: str) -> mx.Dtype:
    dtype = to_mlx_dtype(dtype, f"{fname}: dtype")
    if dtype not in (mx.float16, mx.bfloat16, mx.float32, mx.float64):
        raise TypeError(f"{fname}: dtype must be a floating dtype, got {dtype}")
    return dtype


def _shape(shape: Any, fname: str) -> tuple[int, ...]:
    return static_shape(shape, fname)


def uniform(key: Any, shape: Sequence[int] = (), dtype: DTypeLike = mx.float32,
            minval: Any = 0.0, maxval: Any = 1.0) -> Any:
    """Uniform samples in ``[minval, maxval)``, differentiable in the bounds.

    >>> import ftorch.random as random, mlx.core as mx
    >>> x = random.uniform(random.key(1), (1000,), minval=2.0, maxval=3.0)
    >>> bool(mx.all((x >= 2.0) & (x < 3.0)))
    True
    """
    _check_key(key, "uniform")
    dtype = _float_dtype(dtype, "uniform")
    u = uniform_p.bind(key, shape=_shape(shape, "uniform"), dtype=dtype)
    if isinstance(minval, (int, float)) and isinstance(maxval, (int, float)) and (
            minval, maxval) == (0.0, 1.0):
        return u
    return lax.add(lax.multiply(u, lax.subtract(maxval, minval)), minval)


def normal(key: Any, shape: Sequence[int] = (), dtype: DTypeLike = mx.float32,
           loc: Any = None, scale: Any = None) -> Any:
    """Standard normal samples (``loc + scale * z`` when given: differentiable
    in ``loc`` and ``scale``); the same numbers as ``mx.random.normal`` with
    the same key.

    >>> import ftorch.random as random, mlx.core as mx
    >>> k = random.key(0)
    >>> bool(mx.all(random.normal(k, (3,)) == mx.random.normal((3,), key=k)))
    True
    """
    _check_key(key, "normal")
    dtype = _float_dtype(dtype, "normal")
    z = normal_p.bind(key, shape=_shape(shape, "normal"), dtype=dtype)
    if scale is not None:
        z = lax.multiply(z, scale)
    if loc is not None:
        z = lax.add(z, loc)
    return z


def gumbel(key: Any, shape: Sequence[int] = (), dtype: DTypeLike = mx.float32,
           loc: Any = None, scale: Any = None) -> Any:
    """Standard Gumbel samples (``loc + scale * g`` when given).

    >>> import ftorch.random as random
    >>> random.gumbel(random.key(0), (2, 3)).shape
    (2, 3)
    """
    _check_key(key, "gumbel")
    g = gumbel_p.bind(key, shape=_shape(shape, "gumbel"), dtype=_float_dtype(dtype, "gumbel"))
    if scale is not None:
        g = lax.multiply(g, scale)
    if loc is not None:
        g = lax.add(g, loc)
    return g


def exponential(key: Any, shape: Sequence[int] = (), dtype: DTypeLike = mx.float32) -> Any:
    """Standard exponential samples, ``-log(1 - u)`` of uniform ``u``.

    >>> import ftorch.random as random, mlx.core as mx
    >>> bool(mx.all(random.exponential(random.key(0), (100,)) >= 0))
    True
    """
    u = uniform(key, shape, dtype)
    return lax.negative(lax.log1p(lax.negative(u)))


def bernoulli(key: Any, p: Any = 0.5, shape: Sequence[int] | None = None) -> Any:
    """Boolean samples, True with probability ``p`` (broadcast to ``shape``).

    >>> import ftorch.random as random
    >>> random.bernoulli(random.key(0), 0.5, (4,)).dtype
    mlx.core.bool
    """
    _check_key(key, "bernoulli")
    if not isinstance(p, (mx.array, Tracer)):
        p = mx.array(p, mx.float32)
    shape = tuple(aval_of(p).shape) if shape is None else _shape(shape, "bernoulli")
    return bernoulli_p.bind(key, p, shape=shape)


def randint(key: Any, shape: Sequence[int], minval: int, maxval: int,
            dtype: DTypeLike = mx.int32) -> Any:
    """Integers uniform in ``[minval, maxval)``.

    >>> import ftorch.random as random, mlx.core as mx
    >>> x = random.randint(random.key(0), (100,), 3, 7)
    >>> bool(mx.all((x >= 3) & (x < 7)))
    True
    """
    _check_key(key, "randint")
    dtype = to_mlx_dtype(dtype, "randint: dtype")
    for name, v in (("minval", minval), ("maxval", maxval)):
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError(f"randint: {name} must be a Python int, got {v!r}")
    return randint_p.bind(key, shape=_shape(shape, "randint"), low=minval, high=maxval,
                          dtype=dtype)


def categorical(key: Any, logits: Any, axis: int = -1,
                shape: Sequence[int] | None = None) -> Any:
    """Indices drawn with probabilities ``softmax(logits)`` along ``axis``.

    >>> import ftorch.random as random, mlx.core as mx
    >>> random.categorical(random.key(0), mx.array([0.0, 100.0])).item()
    1
    """
    _check_key(key, "categorical")
    if not isinstance(axis, int) or isinstance(axis, bool):
        raise TypeError(f"categorical: axis must be an int, got {axis!r}")
    shape = None if shape is None else _shape(shape, "categorical")
    return categorical_p.bind(key, logits, axis=axis, shape=shape)


def truncated_normal(key: Any, lower: float, upper: float, shape: Sequence[int] | None = None,
                     dtype: DTypeLike = mx.float32) -> Any:
    """Normal samples conditioned on ``lower < x < upper``.

    >>> import ftorch.random as random, mlx.core as mx
    >>> x = random.truncated_normal(random.key(0), -1.0, 1.0, (100,))
    >>> bool(mx.all((x > -1.0) & (x < 1.0)))
    True
    """
    _check_key(key, "truncated_normal")
    shape = () if shape is None else _shape(shape, "truncated_normal")
    return truncated_normal_p.bind(key, lower=float(lower), upper=float(upper), shape=shape,
                                   dtype=_float_dtype(dtype, "truncated_normal"))
