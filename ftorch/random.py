"""``ftorch.random``: random numbers from explicit keys, as ``jax.random``.

Keys are MLX keys (``mx.random.key(seed)`` gives the same key), so ftorch
and MLX draw the same numbers for the same key and shape (except
``permutation``, and ``multivariate_normal`` unless ``method="svd"``: see
their docstrings). Each sampler is a
primitive whose operands are the key (and array parameters), so a key may be
traced: under ``jit`` the numbers follow the key argument (they never freeze
across calls); under ``vmap`` over a batch of keys each example draws what a
Python loop over those keys draws, and with an unbatched key every example
draws the same numbers, as in JAX. Samples are differentiable through their
location and scale parameters (``normal``, ``uniform``, ``gumbel``,
``multivariate_normal``'s mean) and through the array that ``permutation``
and ``choice`` draw from; keys are integers and carry no derivative.

>>> import ftorch.random as random, mlx.core as mx
>>> k1, k2 = random.split(random.key(0))
>>> random.normal(k1, (2,)).shape, bool(mx.all(random.normal(k1, (2,)) == random.normal(k1, (2,))))
((2,), True)
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Any

import mlx.core as mx
import numpy as np

import ftorch.numpy as fnp
import ftorch.primitives as lax
from ftorch.api_util import check_axis
from ftorch.core import Tracer, aval_of, format_aval
from ftorch.dtypes import DTypeLike, to_mlx_dtype
from ftorch.memory import check_fits
from ftorch.primitives.creation import static_shape
from ftorch.primitives.sampling import (
    bernoulli_p,
    bits_p,
    categorical_p,
    fold_in_p,
    gumbel_p,
    normal_p,
    permutation_p,
    randint_p,
    split_p,
    truncated_normal_p,
    uniform_p,
    weighted_sample_p,
)

__all__ = [
    "key", "PRNGKey", "split", "fold_in", "bits", "uniform", "normal", "bernoulli", "randint",
    "gumbel", "categorical", "truncated_normal", "exponential", "permutation", "choice",
    "multivariate_normal",
]


def key(seed: int) -> mx.array:
    """A key from an integer seed: ``mx.random.key(seed)``, the seed's 64
    bits as two uint32 words (high, low). A negative seed counts as its
    two's complement int64, as in JAX with 64-bit integers
    (``jax_enable_x64``): ``key(-1)`` is ``[2**32 - 1, 2**32 - 1]``. Seeds
    must fit in 64 bits: ``-2**63 <= seed < 2**64``.

    >>> import ftorch.random as random
    >>> random.key(0).tolist(), random.key(2**32 + 5).tolist(), random.key(-1).tolist()
    ([0, 0], [1, 5], [4294967295, 4294967295])
    """
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"key: seed must be a Python int, got {type(seed).__name__}: {seed!r}")
    seed = int(seed)
    if not -2 ** 63 <= seed < 2 ** 64:
        raise OverflowError(f"key: seed must fit in 64 bits (-2**63 <= seed < 2**64), got {seed}; "
                            "reduce it first, e.g. seed % 2**64")
    return mx.random.key(seed % 2 ** 64)


PRNGKey = key  # JAX's older name


def _check_key(k: Any, fname: str) -> Any:
    """``k`` as a single key (a NumPy key becomes an MLX array), or an error
    naming ``fname`` that says what was passed and what to pass instead."""
    if isinstance(k, np.ndarray) and k.dtype == np.uint32:
        k = mx.array(k)
    if not isinstance(k, (mx.array, Tracer)):
        hint = (f"; pass the key random.key({k}), not the seed" if isinstance(k, int)
                and not isinstance(k, bool) else "")
        raise TypeError(f"{fname}: key must be a key array (ftorch.random.key(seed)), got "
                        f"{type(k).__name__}: {k!r}{hint}")
    a = aval_of(k)
    if a.dtype == mx.uint32 and len(a.shape) > 1 and a.shape[-1] == 2:
        raise TypeError(f"{fname}: key must be a single key, of shape (2,), but got a batch of "
                        f"keys {format_aval(a)}; to draw with each key, map over them as in JAX: "
                        f"ft.vmap(lambda k: random.{fname}(k, ...))(keys)")
    if a.shape != (2,) or a.dtype != mx.uint32:
        hint = ("; cast raw key data with .astype(mx.uint32)" if a.shape == (2,) and
                mx.issubdtype(a.dtype, mx.integer) else "")
        raise TypeError(f"{fname}: key must be a uint32 array of shape (2,) "
                        f"(ftorch.random.key(seed) or mx.random.key(seed)), got "
                        f"{format_aval(a)}{hint}")
    return k


def _shape_of(value: Any) -> tuple[int, ...]:
    if isinstance(value, (mx.array, Tracer)):
        return tuple(aval_of(value).shape)
    return tuple(np.shape(value))


def _sample_shape(shape: Any, dtype: mx.Dtype, fname: str, **params: Any) -> tuple[int, ...]:
    """``shape`` as a tuple, checked as ``jax.random`` checks it: the shape
    of each parameter in ``params`` (name: the parameter, or its shape as a
    tuple) broadcasts to it. Also checked to fit in memory as ``dtype``: MLX
    would crash allocating it."""
    shape = static_shape(shape, fname)
    for name, value in params.items():
        param_shape = value if type(value) is tuple else _shape_of(value)
        if param_shape:
            _check_broadcasts_to(shape, param_shape, name, fname)
    check_fits(shape, dtype, fname)
    return shape


def _check_broadcasts_to(shape: tuple[int, ...], param_shape: tuple[int, ...], name: str,
                         fname: str) -> None:
    try:
        both = tuple(mx.broadcast_shapes(shape, param_shape))
    except ValueError:
        both = None
    if both != shape:
        fix = (f"shape={both}" if both is not None
               else f"a shape that {param_shape} broadcasts to, such as shape={param_shape}")
        raise ValueError(
            f"{fname}: shape argument {shape} must be broadcast-compatible with the shape "
            f"{param_shape} of {name}, and broadcasting them must give the shape argument (as "
            f"in jax.random); pass {fix}")


def split(key: Any, num: int = 2) -> Any:
    """``num`` new keys from ``key``, stacked: shape ``(num, 2)``.

    >>> import ftorch.random as random
    >>> random.split(random.key(0), 3).shape
    (3, 2)
    """
    key = _check_key(key, "split")
    if isinstance(num, bool) or not isinstance(num, int) or num < 1:
        raise ValueError(f"split: num must be a positive int, got {num!r}")
    check_fits((num, 2), mx.uint32, "split")
    return split_p.bind(key, num=num)


def _float_dtype(dtype: DTypeLike, fname: str) -> mx.Dtype:
    dtype = to_mlx_dtype(dtype, f"{fname}: dtype")
    if dtype not in (mx.float16, mx.bfloat16, mx.float32, mx.float64):
        raise TypeError(f"{fname}: dtype must be a floating dtype, got {dtype}")
    return dtype


def _uniform64(key: Any, shape: tuple[int, ...], open_low: bool = False) -> Any:
    """float64 uniforms in [0, 1) (or (0, 1) with ``open_low``) from 53
    random bits each: MLX's samplers have no float64."""
    b = bits_p.bind(key, shape=shape, dtype=mx.uint64)
    u = lax.astype(lax.bitwise_and(b, mx.array(2 ** 53 - 1, mx.uint64)), mx.float64)
    return lax.multiply(lax.add(u, 0.5) if open_low else u, 2.0 ** -53)


def uniform(key: Any, shape: Sequence[int] = (), dtype: DTypeLike = mx.float32,
            minval: Any = 0.0, maxval: Any = 1.0) -> Any:
    """Uniform samples in ``[minval, maxval)``, differentiable in the bounds;
    ``mx.random.uniform``'s numbers for the same key, and in float64 53
    random bits of ``bits``.

    >>> import ftorch.random as random, mlx.core as mx
    >>> x = random.uniform(random.key(1), (1000,), minval=2.0, maxval=3.0)
    >>> bool(mx.all((x >= 2.0) & (x < 3.0)))
    True
    """
    return _uniform(key, shape, dtype, minval, maxval, "uniform")


def _uniform(key: Any, shape: Sequence[int], dtype: DTypeLike, minval: Any, maxval: Any,
             fname: str) -> Any:
    key = _check_key(key, fname)
    dtype = _float_dtype(dtype, fname)
    shape = _sample_shape(shape, dtype, fname, minval=minval, maxval=maxval)
    u = (_uniform64(key, shape) if dtype == mx.float64
         else uniform_p.bind(key, shape=shape, dtype=dtype))
    if isinstance(minval, (int, float)) and isinstance(maxval, (int, float)) and (
            minval, maxval) == (0.0, 1.0):
        return u
    # Python bounds take the samples' dtype (their difference would be float32).
    minval, maxval = (mx.array(v, dtype) if isinstance(v, (int, float)) else v
                      for v in (minval, maxval))
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
    key = _check_key(key, "normal")
    dtype = _float_dtype(dtype, "normal")
    shape = _sample_shape(shape, dtype, "normal", loc=loc, scale=scale)
    z = normal_p.bind(key, shape=shape, dtype=dtype)
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
    key = _check_key(key, "gumbel")
    dtype = _float_dtype(dtype, "gumbel")
    shape = _sample_shape(shape, dtype, "gumbel", loc=loc, scale=scale)
    if dtype == mx.float64:
        g = lax.negative(lax.log(lax.negative(lax.log(_uniform64(key, shape, open_low=True)))))
    else:
        g = gumbel_p.bind(key, shape=shape, dtype=dtype)
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
    u = _uniform(key, shape, dtype, 0.0, 1.0, "exponential")
    return lax.negative(lax.log1p(lax.negative(u)))


def bernoulli(key: Any, p: Any = 0.5, shape: Sequence[int] | None = None) -> Any:
    """Boolean samples, True with probability ``p`` (broadcast to ``shape``).

    >>> import ftorch.random as random
    >>> random.bernoulli(random.key(0), 0.5, (4,)).dtype
    mlx.core.bool
    """
    key = _check_key(key, "bernoulli")
    if not isinstance(p, (mx.array, Tracer)):
        p = mx.array(p, mx.float32)
    shape = _sample_shape(_shape_of(p) if shape is None else shape, mx.bool_, "bernoulli", p=p)
    return bernoulli_p.bind(key, p, shape=shape)


def randint(key: Any, shape: Sequence[int], minval: int, maxval: int,
            dtype: DTypeLike = mx.int32) -> Any:
    """Integers uniform in ``[minval, maxval)``.

    >>> import ftorch.random as random, mlx.core as mx
    >>> x = random.randint(random.key(0), (100,), 3, 7)
    >>> bool(mx.all((x >= 3) & (x < 7)))
    True
    """
    key = _check_key(key, "randint")
    dtype = to_mlx_dtype(dtype, "randint: dtype")
    for name, v in (("minval", minval), ("maxval", maxval)):
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError(f"randint: {name} must be a Python int, got {v!r}")
    return randint_p.bind(key, shape=_sample_shape(shape, dtype, "randint"), low=minval,
                          high=maxval, dtype=dtype)


def categorical(key: Any, logits: Any, axis: int = -1,
                shape: Sequence[int] | None = None) -> Any:
    """Indices drawn with probabilities ``softmax(logits)`` along ``axis``.

    >>> import ftorch.random as random, mlx.core as mx
    >>> random.categorical(random.key(0), mx.array([0.0, 100.0])).item()
    1
    """
    key = _check_key(key, "categorical")
    if not isinstance(logits, (mx.array, Tracer)):
        logits = mx.array(logits, mx.float32)
    logits_shape = _shape_of(logits)
    axis = _axis(axis, len(logits_shape), "categorical")
    batch = logits_shape[:axis] + logits_shape[axis + 1:]
    if shape is not None:
        shape = _sample_shape(shape, mx.int32, "categorical", **{
            f"logits (without axis {axis})": batch})
    # MLX draws one Gumbel number per category and sample.
    out = batch if shape is None else shape
    check_fits(out + logits_shape[axis:axis + 1], aval_of(logits).dtype, "categorical")
    # int32 indices, as JAX's (MLX draws uint32 ones).
    return lax.astype(categorical_p.bind(key, logits, axis=axis, shape=shape), mx.int32)


def truncated_normal(key: Any, lower: float, upper: float, shape: Sequence[int] | None = None,
                     dtype: DTypeLike = mx.float32) -> Any:
    """Normal samples conditioned on ``lower < x < upper``.

    >>> import ftorch.random as random, mlx.core as mx
    >>> x = random.truncated_normal(random.key(0), -1.0, 1.0, (100,))
    >>> bool(mx.all((x > -1.0) & (x < 1.0)))
    True
    """
    key = _check_key(key, "truncated_normal")
    for name, bound in (("lower", lower), ("upper", upper)):
        if _shape_of(bound) != ():
            raise TypeError(f"truncated_normal: {name} must be a float (arrays of bounds are not "
                            f"supported), got an array of shape {_shape_of(bound)}")
    dtype = _float_dtype(dtype, "truncated_normal")
    shape = _sample_shape(() if shape is None else shape, dtype, "truncated_normal")
    if dtype == mx.float64:
        raise TypeError("truncated_normal: MLX's sampler has no float64; draw in float32 and "
                        "cast with .astype(mx.float64)")
    return truncated_normal_p.bind(key, lower=float(lower), upper=float(upper), shape=shape,
                                   dtype=dtype)


def fold_in(key: Any, data: Any) -> Any:
    """A new key from ``key`` and an integer ``data`` (a Python int or an
    integer array, possibly traced: ``vmap(lambda i: fold_in(k, i))`` gives
    each index its key), taken modulo 2**32 (as uint32). The same keys as
    ``jax.random.fold_in``; a batch of keys or data folds in one draw.

    >>> import ftorch.random as random
    >>> random.fold_in(random.key(7), 5).tolist()
    [3583082021, 1947592014]
    """
    key = _check_key(key, "fold_in")
    if isinstance(data, bool) or not isinstance(data, (int, mx.array, Tracer)):
        raise TypeError(f"fold_in: data must be an int or an integer array, got {data!r}")
    if isinstance(data, int):
        data = mx.array(data % 2 ** 32, mx.uint32)
    a = aval_of(data)
    if a.shape != () or not (mx.issubdtype(a.dtype, mx.integer)):
        raise TypeError(f"fold_in: data must be an integer scalar, got {format_aval(a)}")
    return fold_in_p.bind(key, data)


_BITS_DTYPES = (mx.uint8, mx.uint16, mx.uint32, mx.uint64)


def bits(key: Any, shape: Sequence[int] = (), dtype: DTypeLike = mx.uint32) -> Any:
    """Uniformly random bits as unsigned integers of ``dtype`` (uint8, 16,
    32 or 64): the words MLX's samplers start from (MLX's C++ ``bits``,
    which its Python API does not expose), and ``jax.random.bits`` under
    ``jax_threefry_partitionable=False`` (JAX's default scheme now differs).

    >>> import ftorch.random as random, mlx.core as mx
    >>> k = random.key(0)
    >>> bool(mx.all(random.bits(k, (3, 2)) == mx.random.split(k, 3)))
    True
    """
    key = _check_key(key, "bits")
    dtype = to_mlx_dtype(dtype, "bits: dtype")
    if dtype not in _BITS_DTYPES:
        raise TypeError(f"bits: dtype must be one of uint8, uint16, uint32, uint64, got {dtype}")
    return bits_p.bind(key, shape=_sample_shape(shape, dtype, "bits"), dtype=dtype)


def _axis(axis: Any, ndim: int, fname: str) -> int:
    if isinstance(axis, bool) or not isinstance(axis, int):
        raise TypeError(f"{fname}: axis must be an int, got {axis!r}")
    return check_axis(axis, max(ndim, 1), fname, of=f"an array of {ndim} dimensions")


def _sort_keys_shape(shape: tuple[int, ...], fname: str) -> tuple[int, ...]:
    check_fits(shape, mx.uint64, fname)  # a permutation sorts 64-bit random keys
    return shape


def permutation(key: Any, x: Any, axis: int = 0, independent: bool = False) -> Any:
    """A random permutation of ``range(x)`` (``x`` an int), or ``x`` shuffled
    along ``axis`` (differentiable in ``x``); with ``independent``, each
    slice along ``axis`` is shuffled on its own. Permutations are uniform:
    positions are sorted by 64-bit random keys, so ties (which would keep
    the original order) have probability about ``n**2 / 2**65``. This is why
    the order differs from ``mx.random.permutation``'s, which sorts 32-bit
    words (ties about ``n**2 / 2**33``: likely from ``n`` near 10**5).

    >>> import ftorch.random as random
    >>> sorted(random.permutation(random.key(0), 5).tolist())
    [0, 1, 2, 3, 4]
    """
    key = _check_key(key, "permutation")
    if isinstance(x, int) and not isinstance(x, bool):
        if x < 0:
            raise ValueError(f"permutation: x must be a non-negative int or an array, got {x}")
        return permutation_p.bind(key, shape=_sort_keys_shape((x,), "permutation"), axis=0)
    if not isinstance(x, (mx.array, Tracer)):
        raise TypeError(f"permutation: x must be an int or an array, got {type(x).__name__}")
    shape = tuple(aval_of(x).shape)
    if not shape:
        raise ValueError("permutation: x must have at least one dimension, or be an int")
    axis = _axis(axis, len(shape), "permutation")
    if independent:
        order = permutation_p.bind(key, shape=_sort_keys_shape(shape, "permutation"), axis=axis)
        return fnp.take_along_axis(x, order, axis=axis)
    order = permutation_p.bind(key, shape=_sort_keys_shape((shape[axis],), "permutation"), axis=0)
    return fnp.take(x, order, axis=axis)


def choice(key: Any, a: Any, shape: Sequence[int] = (), replace: bool = True, p: Any = None,
           axis: int = 0) -> Any:
    """Samples of ``range(a)`` (``a`` an int) or of ``a``'s slices along
    ``axis``, with probabilities ``p`` (uniform by default), with or without
    replacement, as ``jax.random.choice``. Without replacement and with
    ``p``, the Gumbel top-k trick draws the sample.

    >>> import ftorch.random as random
    >>> x = random.choice(random.key(0), 10, (4,), replace=False)
    >>> len(set(x.tolist()))
    4
    """
    key = _check_key(key, "choice")
    shape = static_shape(shape, "choice")
    if isinstance(a, int) and not isinstance(a, bool):
        n, population = a, None
    elif isinstance(a, (mx.array, Tracer)):
        a_shape = tuple(aval_of(a).shape)
        if not a_shape:
            raise ValueError("choice: a must be an int or an array with at least one dimension")
        axis = _axis(axis, len(a_shape), "choice")
        n, population = a_shape[axis], a
    else:
        raise TypeError(f"choice: a must be an int or an array, got {type(a).__name__}")
    size = math.prod(shape)
    # What the draw allocates: the samples, and without replacement or p a
    # permutation of the whole population.
    sample_shape = shape if population is None else (
        shape + a_shape[:axis] + a_shape[axis + 1:])
    check_fits(sample_shape, mx.int32 if population is None else aval_of(a).dtype, "choice")
    if not replace and p is None:
        _sort_keys_shape((n,), "choice")
    if n <= 0 and size > 0:
        raise ValueError("choice: cannot draw from an empty population")
    if p is not None:
        if not isinstance(p, (mx.array, Tracer)):
            p = mx.array(p, mx.float32)
        if tuple(aval_of(p).shape) != (n,):
            raise ValueError(f"choice: p must have shape ({n},) (one probability per "
                             f"element), got {format_aval(aval_of(p))}")
    if replace:
        if p is None:
            idx = randint(key, shape, 0, n)
        else:
            idx = categorical(key, fnp.log(p), shape=shape)
    else:
        if size > n:
            raise ValueError(f"choice: cannot take {size} samples from a population of {n} "
                             "without replacement")
        if p is None:
            idx = permutation(key, n)[:size]
        else:
            idx = weighted_sample_p.bind(key, fnp.log(p), size=size)
        idx = fnp.reshape(idx, shape)
    return idx if population is None else fnp.take(population, idx, axis=axis)


_MVN_METHODS = ("cholesky", "eigh", "svd")


def multivariate_normal(key: Any, mean: Any, cov: Any, shape: Sequence[int] | None = None,
                        dtype: DTypeLike = mx.float32, method: str = "cholesky") -> Any:
    """Samples of a multivariate normal: ``mean + factor @ z`` with
    ``factor @ factor.T == cov``: the Cholesky factor (``method="cholesky"``),
    ``V sqrt(W)`` from ``eigh`` (eigenvalues that round-off makes negative
    count as 0) or the symmetric root ``U sqrt(S) V^T`` from the SVD
    (``"svd"``: the numbers of ``mx.random.multivariate_normal`` for the same
    key). The factor is computed once, in ``cov``'s precision (float64 stays
    float64, others compute in float32), and the samples are differentiable
    in ``mean`` and, with every method, in ``cov``. ``shape`` defaults to the
    broadcast of ``mean.shape[:-1]`` and ``cov.shape[:-2]``.

    >>> import ftorch.random as random, mlx.core as mx
    >>> random.multivariate_normal(random.key(0), mx.zeros(3), mx.eye(3), (5,)).shape
    (5, 3)
    """
    key = _check_key(key, "multivariate_normal")
    if method not in _MVN_METHODS:
        raise ValueError(f"multivariate_normal: method must be one of {', '.join(_MVN_METHODS)}"
                         f", got {method!r}")
    dtype = _float_dtype(dtype, "multivariate_normal")
    mean = mean if isinstance(mean, (mx.array, Tracer)) else mx.array(mean, dtype)
    cov = cov if isinstance(cov, (mx.array, Tracer)) else mx.array(cov, dtype)
    m, c = aval_of(mean), aval_of(cov)
    if len(m.shape) < 1 or len(c.shape) < 2 or c.shape[-2:] != (m.shape[-1], m.shape[-1]):
        raise ValueError(f"multivariate_normal: mean must be (..., n) and cov (..., n, n), got "
                         f"{format_aval(m)} and {format_aval(c)}")
    batch = (tuple(m.shape[:-1]), tuple(c.shape[:-2]))
    try:
        full = tuple(mx.broadcast_shapes(*batch))
    except ValueError:
        raise ValueError(f"multivariate_normal: the batch shapes of mean {batch[0]} and cov "
                         f"{batch[1]} do not broadcast") from None
    if shape is not None:
        shape = static_shape(shape, "multivariate_normal")
        try:
            ok = tuple(mx.broadcast_shapes(shape, full)) == shape
        except ValueError:
            ok = False
        if not ok:
            raise ValueError(f"multivariate_normal: shape {shape} must be a broadcast of the "
                             f"batch shapes of mean {batch[0]} and cov {batch[1]}, as in JAX")
        full = shape
    n = c.shape[-1]
    check_fits(full + (n,), dtype, "multivariate_normal")
    cov = fnp.astype(cov, mx.float64 if c.dtype == mx.float64 else mx.float32)
    z = normal(key, full + (n,), dtype)
    if method == "svd":
        # z @ (U sqrt(S) V^T), as mx.random.multivariate_normal draws it.
        u, s, vt = fnp.linalg.svd(cov, full_matrices=False)
        root = fnp.astype(fnp.matmul(u * fnp.expand_dims(fnp.sqrt(s), -2), vt), dtype)
        return fnp.add(fnp.matmul(fnp.expand_dims(z, -2), root)[..., 0, :], mean)
    if method == "eigh":
        w, v = fnp.linalg.eigh(cov)
        factor = v * fnp.expand_dims(fnp.sqrt(fnp.maximum(w, 0.0)), -2)
    else:
        factor = fnp.linalg.cholesky(cov)
    draw = fnp.matmul(fnp.astype(factor, dtype), fnp.expand_dims(z, -1))[..., 0]
    return fnp.add(draw, mean)
