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
    random_binomial_p,
    random_gamma_p,
    random_poisson_p,
    split_p,
    truncated_normal_p,
    uniform_p,
    weighted_sample_p,
)

__all__ = [
    "key", "PRNGKey", "split", "fold_in", "bits", "uniform", "normal", "bernoulli", "randint",
    "gumbel", "categorical", "truncated_normal", "exponential", "permutation", "choice",
    "multivariate_normal", "clone", "key_data", "wrap_key_data", "key_impl", "cauchy",
    "laplace", "logistic", "lognormal", "maxwell", "double_sided_maxwell", "pareto", "rademacher",
    "rayleigh", "triangular", "wald", "weibull_min", "geometric", "orthogonal", "gamma",
    "loggamma", "beta", "dirichlet", "chisquare", "f", "t", "generalized_normal", "ball",
    "poisson", "binomial", "multinomial",
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


# ----------------------------------------------------------------------------
# More distributions, as jax.random's: transforms of the draws above, and the
# gamma, Poisson and binomial samplers of ftorch.primitives.sampling.
# ----------------------------------------------------------------------------


def _float_params(fname: str, dtype: mx.Dtype, **params: Any) -> list[Any]:
    """The parameters as arrays of ``dtype`` (Python numbers and integer
    arrays converted; floating arrays cast), in order."""
    out = []
    for name, value in params.items():
        if isinstance(value, (str, bytes)) or value is None:
            raise TypeError(f"{fname}: {name} must be a number or an array, got {value!r}")
        out.append(fnp.asarray(value, dtype))
    return out


def _param_shape(shape: Any, dtype: mx.Dtype, fname: str, **params: Any) -> tuple[int, ...]:
    """``shape`` checked against the parameters (as ``_sample_shape``), or
    their broadcast shape when ``shape`` is None."""
    if shape is None:
        try:
            shape = tuple(mx.broadcast_shapes(*[_shape_of(v) for v in params.values()]))
        except ValueError:
            shapes = ", ".join(f"{k} {_shape_of(v)}" for k, v in params.items())
            raise ValueError(f"{fname}: the shapes of the parameters do not broadcast: "
                             f"{shapes}") from None
    return _sample_shape(shape, dtype, fname, **params)


def _open_uniform(key: Any, shape: tuple[int, ...], dtype: mx.Dtype, fname: str) -> Any:
    """Uniforms in (0, 1): no 0, whose logarithm would be ``-inf``."""
    tiny = float(np.finfo(np.dtype(str(dtype).split(".")[-1])).tiny)
    return _uniform(key, shape, dtype, tiny, 1.0, fname)


def clone(key: Any) -> Any:
    """``key`` itself: ftorch's keys are arrays, never consumed, so a copy is
    the same key (``jax.random.clone`` matters only for JAX's typed keys).

    >>> import ftorch.random as random
    >>> random.clone(random.key(3)).tolist()
    [0, 3]
    """
    return _check_key(key, "clone")


def _check_key_batch(keys: Any, fname: str) -> Any:
    if isinstance(keys, np.ndarray):
        keys = mx.array(keys)
    if not isinstance(keys, (mx.array, Tracer)):
        raise TypeError(f"{fname}: expected key data, a uint32 array of shape (..., 2), got "
                        f"{type(keys).__name__}")
    a = aval_of(keys)
    if a.dtype != mx.uint32 or len(a.shape) < 1 or a.shape[-1] != 2:
        raise TypeError(f"{fname}: expected key data, a uint32 array of shape (..., 2), got "
                        f"{format_aval(a)}")
    return keys


def key_data(keys: Any) -> Any:
    """The raw uint32 words of ``keys`` (shape ``(..., 2)``): ftorch's keys
    already are their data, as JAX's legacy ``PRNGKey`` arrays, so this
    checks and returns them.

    >>> import ftorch.random as random
    >>> random.key_data(random.key(5)).tolist()
    [0, 5]
    """
    return _check_key_batch(keys, "key_data")


def wrap_key_data(key_bits_array: Any, *, impl: Any = None, dtype: Any = None) -> Any:
    """Keys from raw uint32 words (shape ``(..., 2)``): the identity on
    ftorch's keys, after checking them. ``impl`` may only name ftorch's one
    implementation, ``"threefry2x32"``; ``dtype`` (JAX's typed-key dtype)
    only ``None``, as ftorch's keys are raw uint32 arrays.

    >>> import ftorch.random as random, mlx.core as mx
    >>> random.wrap_key_data(mx.array([0, 5], dtype=mx.uint32)).tolist()
    [0, 5]
    """
    if impl is not None and str(impl) != _KEY_IMPL:
        raise ValueError(f"wrap_key_data: impl must be {_KEY_IMPL!r} (ftorch's only key "
                         f"implementation), got {impl!r}")
    if dtype is not None:
        raise ValueError("wrap_key_data: dtype must be None: ftorch's keys are raw uint32 "
                         "arrays, not typed keys")
    return _check_key_batch(key_bits_array, "wrap_key_data")


_KEY_IMPL = "threefry2x32"


def key_impl(keys: Any) -> str:
    """The name of the keys' random bit generator: always
    ``"threefry2x32"``, MLX's (and JAX's default).

    >>> import ftorch.random as random
    >>> random.key_impl(random.key(0))
    'threefry2x32'
    """
    _check_key_batch(keys, "key_impl")
    return _KEY_IMPL


def cauchy(key: Any, shape: Sequence[int] = (), dtype: DTypeLike = mx.float32) -> Any:
    """Standard Cauchy samples, ``tan(pi (u - 1/2))`` of uniform ``u`` in (0, 1).

    >>> import ftorch.random as random
    >>> random.cauchy(random.key(0), (3,)).shape
    (3,)
    """
    dtype = _float_dtype(dtype, "cauchy")
    u = _open_uniform(key, _sample_shape(shape, dtype, "cauchy"), dtype, "cauchy")
    return lax.tan(lax.multiply(lax.subtract(u, 0.5), math.pi))


def laplace(key: Any, shape: Sequence[int] = (), dtype: DTypeLike = mx.float32) -> Any:
    """Standard Laplace samples: ``-sign(u) log1p(-|u|)`` of uniform ``u`` in (-1, 1).

    >>> import ftorch.random as random
    >>> random.laplace(random.key(0), (3,)).shape
    (3,)
    """
    dtype = _float_dtype(dtype, "laplace")
    shape = _sample_shape(shape, dtype, "laplace")
    low = float(np.nextafter(np.float32(-1.0), np.float32(0.0)))
    u = _uniform(key, shape, dtype, low, 1.0, "laplace")
    return lax.negative(lax.multiply(lax.sign(u), lax.log1p(lax.negative(lax.abs(u)))))


def logistic(key: Any, shape: Sequence[int] = (), dtype: DTypeLike = mx.float32) -> Any:
    """Standard logistic samples, ``log(u / (1 - u))`` of uniform ``u`` in (0, 1).

    >>> import ftorch.random as random
    >>> random.logistic(random.key(0), (3,)).shape
    (3,)
    """
    dtype = _float_dtype(dtype, "logistic")
    u = _open_uniform(key, _sample_shape(shape, dtype, "logistic"), dtype, "logistic")
    return lax.subtract(lax.log(u), lax.log1p(lax.negative(u)))


def lognormal(key: Any, sigma: Any = 1.0, shape: Sequence[int] | None = None,
              dtype: DTypeLike = mx.float32) -> Any:
    """Log-normal samples, ``exp(sigma z)`` of standard normal ``z``
    (differentiable in ``sigma``).

    >>> import ftorch.random as random, mlx.core as mx
    >>> bool(mx.all(random.lognormal(random.key(0), 0.5, (100,)) > 0))
    True
    """
    dtype = _float_dtype(dtype, "lognormal")
    (sigma,) = _float_params("lognormal", dtype, sigma=sigma)
    shape = _param_shape(shape, dtype, "lognormal", sigma=sigma)
    return lax.exp(lax.multiply(normal(key, shape, dtype), sigma))


def maxwell(key: Any, shape: Sequence[int] = (), dtype: DTypeLike = mx.float32) -> Any:
    """Maxwell samples: the length of a vector of three standard normals.

    >>> import ftorch.random as random, mlx.core as mx
    >>> bool(mx.all(random.maxwell(random.key(0), (100,)) > 0))
    True
    """
    dtype = _float_dtype(dtype, "maxwell")
    shape = _sample_shape(shape, dtype, "maxwell")
    z = normal(key, (*shape, 3), dtype)
    return fnp.linalg.norm(z, axis=-1)


def double_sided_maxwell(key: Any, loc: Any, scale: Any, shape: Sequence[int] = (),
                         dtype: DTypeLike = mx.float32) -> Any:
    """Double-sided Maxwell samples: ``loc + scale * s * m`` with ``m`` a
    Maxwell sample and ``s`` a random sign (differentiable in ``loc`` and
    ``scale``).

    >>> import ftorch.random as random
    >>> random.double_sided_maxwell(random.key(0), 0.0, 1.0, (3,)).shape
    (3,)
    """
    dtype = _float_dtype(dtype, "double_sided_maxwell")
    loc, scale = _float_params("double_sided_maxwell", dtype, loc=loc, scale=scale)
    shape = _sample_shape(shape, dtype, "double_sided_maxwell", loc=loc, scale=scale)
    maxwell_key, sign_key = split(key)
    signed = lax.multiply(maxwell(maxwell_key, shape, dtype),
                          lax.astype(rademacher(sign_key, shape), dtype))
    return lax.add(lax.multiply(signed, scale), loc)


def pareto(key: Any, b: Any, shape: Sequence[int] | None = None,
           dtype: DTypeLike = mx.float32) -> Any:
    """Pareto samples of shape ``b`` (support ``x >= 1``): ``exp(e / b)`` of a
    standard exponential ``e`` (differentiable in ``b``).

    >>> import ftorch.random as random, mlx.core as mx
    >>> bool(mx.all(random.pareto(random.key(0), 2.0, (100,)) >= 1))
    True
    """
    dtype = _float_dtype(dtype, "pareto")
    (b,) = _float_params("pareto", dtype, b=b)
    shape = _param_shape(shape, dtype, "pareto", b=b)
    return lax.exp(lax.divide(exponential(key, shape, dtype), b))


def rademacher(key: Any, shape: Sequence[int] = (), dtype: DTypeLike = mx.int32) -> Any:
    """Random signs, -1 or 1 with equal probability, as ``dtype`` (int32 by default).

    >>> import ftorch.random as random
    >>> sorted(set(random.rademacher(random.key(0), (50,)).tolist()))
    [-1, 1]
    """
    dtype = to_mlx_dtype(dtype, "rademacher: dtype")
    shape = _sample_shape(shape, dtype, "rademacher")
    heads = bernoulli(key, 0.5, shape)
    return lax.astype(lax.subtract(lax.multiply(lax.astype(heads, mx.int32), 2), 1), dtype)


def rayleigh(key: Any, scale: Any, shape: Sequence[int] | None = None,
             dtype: DTypeLike = mx.float32) -> Any:
    """Rayleigh samples, ``scale sqrt(-2 log u)`` of uniform ``u`` in (0, 1)
    (differentiable in ``scale``).

    >>> import ftorch.random as random, mlx.core as mx
    >>> bool(mx.all(random.rayleigh(random.key(0), 2.0, (100,)) > 0))
    True
    """
    dtype = _float_dtype(dtype, "rayleigh")
    (scale,) = _float_params("rayleigh", dtype, scale=scale)
    shape = _param_shape(shape, dtype, "rayleigh", scale=scale)
    u = _open_uniform(key, shape, dtype, "rayleigh")
    return lax.multiply(lax.sqrt(lax.multiply(lax.log(u), -2.0)), scale)


def triangular(key: Any, left: Any, mode: Any, right: Any, shape: Sequence[int] | None = None,
               dtype: DTypeLike = mx.float32) -> Any:
    """Triangular samples on ``[left, right]`` peaking at ``mode``, by
    inverting the distribution function (differentiable in the three).

    >>> import ftorch.random as random, mlx.core as mx
    >>> x = random.triangular(random.key(0), 0.0, 1.0, 3.0, (100,))
    >>> bool(mx.all((x >= 0) & (x <= 3)))
    True
    """
    dtype = _float_dtype(dtype, "triangular")
    left, mode, right = _float_params("triangular", dtype, left=left, mode=mode, right=right)
    shape = _param_shape(shape, dtype, "triangular", left=left, mode=mode, right=right)
    u = _uniform(key, shape, dtype, 0.0, 1.0, "triangular")
    width = fnp.subtract(right, left)
    split_at = (mode - left) / width  # the distribution function at the mode
    below = left + fnp.sqrt(u * width * (mode - left))
    above = right - fnp.sqrt((1.0 - u) * width * (right - mode))
    return fnp.where(u < split_at, below, above)


def wald(key: Any, mean: Any, shape: Sequence[int] | None = None,
         dtype: DTypeLike = mx.float32) -> Any:
    """Wald (inverse Gaussian) samples of ``mean`` and shape 1, by Michael,
    Schucany and Haas's transformation of a normal and a uniform draw.

    >>> import ftorch.random as random, mlx.core as mx
    >>> bool(mx.all(random.wald(random.key(0), 2.0, (100,)) > 0))
    True
    """
    dtype = _float_dtype(dtype, "wald")
    (mean,) = _float_params("wald", dtype, mean=mean)
    shape = _param_shape(shape, dtype, "wald", mean=mean)
    normal_key, uniform_key = split(key)
    y = fnp.square(normal(normal_key, shape, dtype))
    u = _uniform(uniform_key, shape, dtype, 0.0, 1.0, "wald")
    root = mean + mean * mean * y / 2 - mean / 2 * fnp.sqrt(4 * mean * y + fnp.square(mean * y))
    return fnp.where(u <= mean / (mean + root), root, mean * mean / root)


def weibull_min(key: Any, scale: Any, concentration: Any, shape: Sequence[int] = (),
                dtype: DTypeLike = mx.float32) -> Any:
    """Weibull samples, ``scale (-log1p(-u))^(1/concentration)`` of uniform
    ``u`` (differentiable in both parameters).

    >>> import ftorch.random as random, mlx.core as mx
    >>> bool(mx.all(random.weibull_min(random.key(0), 1.0, 2.0, (100,)) >= 0))
    True
    """
    dtype = _float_dtype(dtype, "weibull_min")
    scale, concentration = _float_params("weibull_min", dtype, scale=scale,
                                         concentration=concentration)
    shape = _sample_shape(shape, dtype, "weibull_min", scale=scale,
                          concentration=concentration)
    u = _uniform(key, shape, dtype, 0.0, 1.0, "weibull_min")
    return scale * fnp.power(fnp.negative(fnp.log1p(fnp.negative(u))), 1.0 / concentration)


def geometric(key: Any, p: Any, shape: Sequence[int] | None = None,
              dtype: DTypeLike = mx.int32) -> Any:
    """Geometric samples: the number of trials up to the first success of
    probability ``p`` (``>= 1``), ``floor(log1p(-u) / log1p(-p)) + 1``.

    >>> import ftorch.random as random, mlx.core as mx
    >>> bool(mx.all(random.geometric(random.key(0), 0.3, (100,)) >= 1))
    True
    """
    dtype = to_mlx_dtype(dtype, "geometric: dtype")
    if not mx.issubdtype(dtype, mx.integer):
        raise TypeError(f"geometric: dtype must be an integer dtype, got {dtype}")
    (p,) = _float_params("geometric", mx.float32, p=p)
    shape = _param_shape(shape, dtype, "geometric", p=p)
    u = _uniform(key, shape, mx.float32, 0.0, 1.0, "geometric")
    trials = fnp.floor(fnp.log1p(fnp.negative(u)) / fnp.log1p(fnp.negative(p))) + 1.0
    return fnp.astype(trials, dtype)


def orthogonal(key: Any, n: int, shape: Sequence[int] = (), dtype: DTypeLike = mx.float32,
               m: int | None = None) -> Any:
    """Random matrices with orthonormal columns (or rows), uniform (Haar)
    among them: ``(*shape, n, m)`` (``m = n`` by default), from the QR
    factorisation of a normal matrix with the signs of ``R``'s diagonal
    moved into ``Q``.

    >>> import ftorch.random as random, ftorch.numpy as fnp, mlx.core as mx
    >>> q = random.orthogonal(random.key(0), 3)
    >>> bool(fnp.allclose(q @ q.T, mx.eye(3), atol=1e-5))
    True
    """
    dtype = _float_dtype(dtype, "orthogonal")
    m = n if m is None else m
    for name, v in (("n", n), ("m", m)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise ValueError(f"orthogonal: {name} must be a non-negative int, got {v!r}")
    shape = static_shape(shape, "orthogonal")
    tall = (max(n, m), min(n, m))
    z = normal(key, _sample_shape((*shape, *tall), dtype, "orthogonal"), dtype)
    q, r = fnp.linalg.qr(z)
    signs = fnp.sign(fnp.diagonal(r, axis1=-2, axis2=-1))
    q = q * fnp.expand_dims(signs, -2)
    return fnp.swapaxes(q, -1, -2) if n < m else q


def _gamma(key: Any, a: Any, shape: Any, dtype: DTypeLike, fname: str, log_space: bool) -> Any:
    key = _check_key(key, fname)
    dtype = _float_dtype(dtype, fname)
    (a,) = _float_params(fname, dtype, a=a)
    shape = _param_shape(shape, dtype, fname, a=a)
    a = fnp.broadcast_to(a, shape)
    return random_gamma_p.bind(key, a, shape=shape, dtype=dtype, log_space=log_space)


def gamma(key: Any, a: Any, shape: Sequence[int] | None = None,
          dtype: DTypeLike = mx.float32) -> Any:
    """Gamma samples of shape ``a`` (scale 1), by Marsaglia and Tsang's method
    (``a < 1`` boosted: ``Gamma(a + 1) U^(1/a)``) with a fixed number of
    vectorised proposal rounds, so it is jittable and vmappable (an element
    keeps a rejected proposal with probability below 1e-21). Differentiable
    in ``a`` by implicit reparameterisation (``lax.random_gamma_grad``), as
    in JAX. float64 samples are computed in float64 from float32 draws.

    >>> import ftorch as ft, ftorch.random as random, mlx.core as mx
    >>> random.gamma(random.key(0), mx.array([0.5, 2.0]), (3, 2)).shape
    (3, 2)
    """
    return _gamma(key, a, shape, dtype, "gamma", log_space=False)


def loggamma(key: Any, a: Any, shape: Sequence[int] | None = None,
             dtype: DTypeLike = mx.float32) -> Any:
    """The logarithms of gamma samples of shape ``a``, computed in log space
    (accurate for tiny ``a``, whose samples underflow to 0); differentiable
    in ``a``.

    >>> import ftorch.random as random, mlx.core as mx
    >>> bool(mx.all(mx.isfinite(random.loggamma(random.key(0), 1e-3, (100,)))))
    True
    """
    return _gamma(key, a, shape, dtype, "loggamma", log_space=True)


def beta(key: Any, a: Any, b: Any, shape: Sequence[int] | None = None,
         dtype: DTypeLike = mx.float32) -> Any:
    """Beta samples, ``X / (X + Y)`` of ``X ~ Gamma(a)`` and ``Y ~ Gamma(b)``
    (computed from their logarithms, so tiny shapes give 0 or 1, not NaN);
    differentiable in ``a`` and ``b``.

    >>> import ftorch.random as random, mlx.core as mx
    >>> x = random.beta(random.key(0), 2.0, 3.0, (100,))
    >>> bool(mx.all((x >= 0) & (x <= 1)))
    True
    """
    dtype = _float_dtype(dtype, "beta")
    a, b = _float_params("beta", dtype, a=a, b=b)
    shape = _param_shape(shape, dtype, "beta", a=a, b=b)
    key_a, key_b = split(_check_key(key, "beta"))
    log_x, log_y = loggamma(key_a, a, shape, dtype), loggamma(key_b, b, shape, dtype)
    top = fnp.maximum(log_x, log_y)
    x, y = fnp.exp(log_x - top), fnp.exp(log_y - top)
    return x / (x + y)


def dirichlet(key: Any, alpha: Any, shape: Sequence[int] | None = None,
              dtype: DTypeLike = mx.float32) -> Any:
    """Dirichlet samples of concentrations ``alpha`` (its last axis, ``K``):
    shape ``(*shape, K)``, normalised gamma samples (through their
    logarithms, a softmax); differentiable in ``alpha``.

    >>> import ftorch.random as random, mlx.core as mx
    >>> x = random.dirichlet(random.key(0), mx.array([1.0, 2.0, 3.0]), (4,))
    >>> x.shape, bool(mx.allclose(x.sum(-1), mx.ones(4)))
    ((4, 3), True)
    """
    dtype = _float_dtype(dtype, "dirichlet")
    (alpha,) = _float_params("dirichlet", dtype, alpha=alpha)
    alpha_shape = _shape_of(alpha)
    if not alpha_shape:
        raise ValueError("dirichlet: alpha must have at least one dimension (the categories)")
    if shape is None:
        shape = alpha_shape[:-1]
    shape = _sample_shape(shape, dtype, "dirichlet",
                          **{"alpha (without its last axis)": alpha_shape[:-1]})
    full = (*shape, alpha_shape[-1])
    log_g = loggamma(key, fnp.broadcast_to(alpha, full), full, dtype)
    return fnp.exp(log_g - fnp.logsumexp(log_g, axis=-1, keepdims=True))


def chisquare(key: Any, df: Any, shape: Sequence[int] | None = None,
              dtype: DTypeLike = mx.float32) -> Any:
    """Chi-square samples of ``df`` degrees of freedom, ``2 Gamma(df / 2)``;
    differentiable in ``df``.

    >>> import ftorch.random as random, mlx.core as mx
    >>> bool(mx.all(random.chisquare(random.key(0), 3.0, (100,)) > 0))
    True
    """
    dtype = _float_dtype(dtype, "chisquare")
    (df,) = _float_params("chisquare", dtype, df=df)
    shape = _param_shape(shape, dtype, "chisquare", df=df)
    return lax.multiply(gamma(key, lax.divide(df, 2.0), shape, dtype), 2.0)


def f(key: Any, dfnum: Any, dfden: Any, shape: Sequence[int] | None = None,
      dtype: DTypeLike = mx.float32) -> Any:
    """F samples, ``(X / dfnum) / (Y / dfden)`` of chi-square ``X``, ``Y``;
    differentiable in both degrees of freedom.

    >>> import ftorch.random as random, mlx.core as mx
    >>> bool(mx.all(random.f(random.key(0), 3.0, 5.0, (100,)) > 0))
    True
    """
    dtype = _float_dtype(dtype, "f")
    dfnum, dfden = _float_params("f", dtype, dfnum=dfnum, dfden=dfden)
    shape = _param_shape(shape, dtype, "f", dfnum=dfnum, dfden=dfden)
    key_num, key_den = split(_check_key(key, "f"))
    num = chisquare(key_num, dfnum, shape, dtype) / dfnum
    return num / (chisquare(key_den, dfden, shape, dtype) / dfden)


def t(key: Any, df: Any, shape: Sequence[int] | None = None,
      dtype: DTypeLike = mx.float32) -> Any:
    """Student's t samples, ``z sqrt((df / 2) / G)`` of a standard normal
    ``z`` and ``G ~ Gamma(df / 2)``; differentiable in ``df``.

    >>> import ftorch.random as random
    >>> random.t(random.key(0), 3.0, (2, 2)).shape
    (2, 2)
    """
    dtype = _float_dtype(dtype, "t")
    (df,) = _float_params("t", dtype, df=df)
    shape = _param_shape(shape, dtype, "t", df=df)
    key_z, key_g = split(_check_key(key, "t"))
    half_df = df / 2
    return normal(key_z, shape, dtype) * fnp.sqrt(half_df / gamma(key_g, half_df, shape, dtype))


def generalized_normal(key: Any, p: float, shape: Sequence[int] = (),
                       dtype: DTypeLike = mx.float32) -> Any:
    """Generalized normal samples of power ``p`` (density proportional to
    ``exp(-|x|^p)``): ``s G^(1/p)`` of a random sign ``s`` and ``G ~
    Gamma(1/p)``.

    >>> import ftorch.random as random
    >>> random.generalized_normal(random.key(0), 1.5, (3,)).shape
    (3,)
    """
    dtype = _float_dtype(dtype, "generalized_normal")
    (p,) = _float_params("generalized_normal", dtype, p=p)
    shape = _sample_shape(shape, dtype, "generalized_normal", p=p)
    key_g, key_s = split(_check_key(key, "generalized_normal"))
    g = gamma(key_g, 1.0 / p, shape, dtype)
    return fnp.astype(rademacher(key_s, shape), dtype) * fnp.power(g, 1.0 / p)


def ball(key: Any, d: int, p: float = 2, shape: Sequence[int] = (),
         dtype: DTypeLike = mx.float32) -> Any:
    """Points uniform in the unit ``p``-norm ball of ``d`` dimensions
    (shape ``(*shape, d)``), by Barthe, Guedon, Mendelson and Naor's
    construction: generalized normal ``g`` and exponential ``e`` give ``g /
    (sum |g|^p + e)^(1/p)``.

    >>> import ftorch.random as random, mlx.core as mx
    >>> x = random.ball(random.key(0), 3, shape=(50,))
    >>> bool(mx.all(mx.linalg.norm(x, axis=-1) <= 1))
    True
    """
    if isinstance(d, bool) or not isinstance(d, int) or d < 1:
        raise ValueError(f"ball: d must be a positive int, got {d!r}")
    dtype = _float_dtype(dtype, "ball")
    shape = _sample_shape(shape, dtype, "ball")
    key_g, key_e = split(_check_key(key, "ball"))
    g = generalized_normal(key_g, p, (*shape, d), dtype)
    e = exponential(key_e, shape, dtype)
    radius = fnp.power(fnp.sum(fnp.power(fnp.abs(g), p), axis=-1) + e, 1.0 / p)
    return g / fnp.expand_dims(radius, -1)


def poisson(key: Any, lam: Any, shape: Sequence[int] | None = None,
            dtype: DTypeLike = mx.int32) -> Any:
    """Poisson samples of mean ``lam`` as integers of ``dtype`` (-1 where
    ``lam < 0``): for ``lam < 10`` the count of unit-rate arrivals in ``[0,
    lam]``, above it Hormann's transformed rejection (PTRS), both with a
    fixed number of vectorised draws (an element keeps an unaccepted draw
    with probability below 1e-19), so jittable and vmappable. Not
    differentiable (integer samples), as in JAX.

    >>> import ftorch.random as random, mlx.core as mx
    >>> x = random.poisson(random.key(0), mx.array([0.5, 50.0]), (2000, 2))
    >>> [round(v) for v in x.astype(mx.float32).mean(0).tolist()]
    [0, 50]
    """
    key = _check_key(key, "poisson")
    dtype = to_mlx_dtype(dtype, "poisson: dtype")
    if not mx.issubdtype(dtype, mx.integer):
        raise TypeError(f"poisson: dtype must be an integer dtype, got {dtype}")
    (lam,) = _float_params("poisson", mx.float32, lam=lam)
    shape = _param_shape(shape, dtype, "poisson", lam=lam)
    return random_poisson_p.bind(key, lax.stop_gradient(lam), shape=shape, dtype=dtype)


def binomial(key: Any, n: Any, p: Any, shape: Sequence[int] | None = None,
             dtype: DTypeLike = mx.float32) -> Any:
    """Binomial samples of ``n`` trials with success probability ``p``, as
    floats of ``dtype`` (NaN for ``n < 0`` or ``p`` outside [0, 1]): for
    ``n min(p, 1-p) < 10`` by inversion (geometric waiting times), above it
    by Hormann's BTRS rejection, each with a fixed number of vectorised
    draws (an element keeps an unaccepted draw with probability below
    1e-19). Not differentiable, as in JAX.

    >>> import ftorch.random as random, mlx.core as mx
    >>> x = random.binomial(random.key(0), 100.0, mx.array([0.02, 0.5]), (2000, 2))
    >>> [round(v) for v in x.mean(0).tolist()]
    [2, 50]
    """
    key = _check_key(key, "binomial")
    dtype = _float_dtype(dtype, "binomial")
    n, p = _float_params("binomial", mx.float32, n=n, p=p)
    shape = _param_shape(shape, dtype, "binomial", n=n, p=p)
    return random_binomial_p.bind(key, lax.stop_gradient(n), lax.stop_gradient(p), shape=shape,
                                  dtype=dtype)


def multinomial(key: Any, n: Any, p: Any, *, shape: Sequence[int] | None = None,
                dtype: DTypeLike = mx.float32, unroll: int | bool = 1) -> Any:
    """Counts of ``n`` draws among the categories of probabilities ``p`` (its
    last axis, ``K``): ``shape`` (which ends with ``K``, as in JAX) defaults
    to the broadcast of ``n``'s and ``p``'s other axes, plus ``K``. Drawn category by category
    as binomials of the draws left (exact). ``unroll`` is accepted for
    JAX's signature; the categories are always unrolled.

    >>> import ftorch.random as random, mlx.core as mx
    >>> x = random.multinomial(random.key(0), 10.0, mx.array([0.2, 0.3, 0.5]), shape=(4, 3))
    >>> x.shape, x.sum(-1).tolist()
    ((4, 3), [10.0, 10.0, 10.0, 10.0])
    """
    key = _check_key(key, "multinomial")
    dtype = _float_dtype(dtype, "multinomial")
    n, p = _float_params("multinomial", mx.float32, n=n, p=p)
    p_shape = _shape_of(p)
    if not p_shape:
        raise ValueError("multinomial: p must have at least one dimension (the categories)")
    categories = p_shape[-1]
    if shape is None:
        shape = tuple(mx.broadcast_shapes(_shape_of(n), p_shape[:-1]))
    else:  # as in JAX, shape includes the categories' axis
        shape = static_shape(shape, "multinomial")
        if shape[-1:] != (categories,):
            raise ValueError(f"multinomial: shape {shape} must end with the {categories} "
                             "categories of p (the samples' last axis), as in JAX")
        shape = shape[:-1]
    batch = {"n": n, "p (without its last axis)": p_shape[:-1]}
    shape = _sample_shape(shape, dtype, "multinomial", **batch)
    keys = split(key, categories) if categories > 1 else key[None]
    left, mass_left = fnp.broadcast_to(n, shape), fnp.ones(shape, mx.float32)
    counts = []
    for i in range(categories - 1):
        p_i = fnp.broadcast_to(p[..., i], shape)
        share = fnp.clip(p_i / fnp.maximum(mass_left, 1e-30), 0.0, 1.0)
        draw = binomial(keys[i], left, share, shape)
        counts.append(draw)
        left, mass_left = left - draw, mass_left - p_i
    counts.append(left)
    return fnp.astype(fnp.stack(counts, axis=-1), dtype)
