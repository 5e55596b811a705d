"""``ftorch.numpy.linalg``, as ``jax.numpy.linalg``: matrix decompositions,
solves, determinants, norms and products, differentiable under every
transform, over the strict wrappers of ``ftorch.primitives.decompositions``.
The contractions (``matmul``, ``einsum``, ...) live in ``ftorch.numpy``
itself. Leading batch dimensions are supported throughout.

>>> import ftorch.numpy as fnp, mlx.core as mx
>>> fnp.linalg.cholesky(mx.array([[4.0, 2.0], [2.0, 3.0]])).tolist()[0]
[2.0, 0.0]
>>> x = fnp.linalg.solve(mx.array([[2.0, 1.0], [1.0, 3.0]]), mx.array([3.0, 5.0]))
>>> [round(v, 4) for v in x.tolist()]
[0.8, 1.4]
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any, NamedTuple

import mlx.core as mx

import ftorch.primitives as lax
from ftorch.api_util import check_axis
from ftorch.core import aval_of, is_floating
from ftorch.numpy import _elementwise, _linalg, _reduction, _shape
from ftorch.numpy._creation import asarray
from ftorch.numpy._linalg import broadcast_batch, cast, inexact_dtype, square_matrices
from ftorch.numpy._linalg import cross as _cross
from ftorch.numpy._linalg_orthogonal import *  # noqa: F403
from ftorch.numpy._linalg_orthogonal import __all__ as _orthogonal_names
from ftorch.numpy._linalg_orthogonal import _matrices, svd
from ftorch.primitives import matrix_functions
from ftorch.primitives.reduction import normalize_axes

__all__ = [
    "cholesky", "solve", "inv", "det", "slogdet", "SlogdetResult", "matrix_power",
    "multi_dot", "cross", "norm", "vector_norm", "matrix_norm", "tensorsolve", "tensorinv",
    "cond", "diagonal", "eig", "eigvals", "EigResult", "matmul", "matrix_transpose", "outer",
    "svdvals", "tensordot", "trace", "vecdot", *_orthogonal_names,
]


def _mT(x: Any) -> Any:
    n = len(aval_of(x).shape)
    return lax.transpose(x, (*range(n - 2), n - 1, n - 2))


# ----------------------------------------------------------------------------
# Decompositions and solves
# ----------------------------------------------------------------------------


def cholesky(a: Any) -> Any:
    """The lower Cholesky factor ``L`` of the symmetric positive-definite
    matrices ``a`` (..., n, n): ``a = L @ L.T``.

    As in JAX, ``a`` is symmetrised first (``(a + a.T) / 2``), so gradients
    are symmetric; a matrix that is not positive definite gives a factor of
    NaNs (MLX itself returns a partial factor with no error). Runs on MLX's
    CPU stream (LAPACK).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.linalg.cholesky(mx.array([[4.0, 2.0], [2.0, 3.0]])).tolist()[1][0]
    1.0
    """
    a = square_matrices(a, "cholesky", "a")
    n = len(aval_of(a).shape)
    at = lax.transpose(a, (*range(n - 2), n - 1, n - 2))
    return lax.cholesky(lax.multiply(lax.add(a, at), 0.5))


def solve(a: Any, b: Any) -> Any:
    """``x`` with ``a @ x = b``, for square ``a`` (..., n, n), by LU
    decomposition with partial pivoting.

    As in JAX (0.5 and later), ``b`` is one vector when it is 1-d (shape
    (n,); the result is (..., n)) and otherwise a stack of matrices
    (..., n, k) whose batch dimensions broadcast with ``a``'s. Where ``a`` is
    singular the result is NaN, never an error. The gradient reuses the
    factorization: ``b_bar = solve(a.T, x_bar)``, ``a_bar = -b_bar x.T``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> a = mx.array([[1.0, 2.0], [3.0, 5.0]])
    >>> [round(v, 4) for v in fnp.linalg.solve(a, mx.array([1.0, 2.0])).tolist()]
    [-1.0, 1.0]
    >>> fnp.linalg.solve(mx.stack([a, 2 * a]), mx.eye(2)).shape
    (2, 2, 2)
    """
    a = square_matrices(a, "solve", "a")
    b = asarray(b)
    sa, sb = aval_of(a).shape, aval_of(b).shape
    n = sa[-1]
    if len(sb) == 0:
        raise ValueError("solve: argument b must be (n,) or (..., n, k); got a 0-d array")
    if len(sb) > 1 and len(sa) == len(sb) + 1 and sb[-1] == n and sb[-2] != n:
        raise ValueError(
            f"solve: argument b of shape {tuple(sb)} is not (..., {n}, k) for a of shape "
            f"{tuple(sa)}; a stack of vectors is solved as solve(a, b[..., None])[..., 0] "
            "(as in JAX 0.5 and later)")
    vector = len(sb) == 1
    if (sb[0] if vector else sb[-2]) != n:
        raise ValueError(
            f"solve: argument b must have shape ({n},) or (..., {n}, k) to match a of shape "
            f"{tuple(sa)}; got shape {tuple(sb)}")
    dtype = inexact_dtype(a, b)
    a, b = cast(a, dtype), cast(b, dtype)
    if vector:
        b = lax.reshape(b, (n, 1))
    a, b = broadcast_batch("solve", a, b)
    x = lax.solve(a, b)
    return lax.squeeze(x, (len(aval_of(x).shape) - 1,)) if vector else x


def inv(a: Any) -> Any:
    """The inverses of the square matrices ``a`` (..., n, n), as
    ``solve(a, I)``; NaN where ``a`` is singular.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.linalg.inv(mx.array([[2.0, 0.0], [0.0, 4.0]])).tolist()
    [[0.5, 0.0], [0.0, 0.25]]
    """
    a = square_matrices(a, "inv", "a")
    shape, dtype = aval_of(a)
    return lax.solve(a, lax.broadcast_to(mx.eye(shape[-1], dtype=dtype), shape))


def det(a: Any) -> Any:
    """The determinants (...) of the square matrices ``a`` (..., n, n), by LU
    decomposition (1 for 0 x 0 matrices).

    The gradient is the transposed adjugate, as in JAX: it is right at
    singular matrices too, where ``det(a) inv(a)`` is not defined (for
    ``[[1, 2], [2, 4]]`` it is ``[[4, -2], [-2, 1]]``; below rank n - 1 it is
    zero).

    >>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
    >>> round(fnp.linalg.det(mx.array([[1.0, 2.0], [3.0, 4.0]])).item(), 4)
    -2.0
    >>> ft.grad(fnp.linalg.det)(mx.array([[1.0, 2.0], [2.0, 4.0]])).tolist()
    [[4.0, -2.0], [-2.0, 1.0]]
    """
    return lax.det(square_matrices(a, "det", "a"))


class SlogdetResult(NamedTuple):
    """What ``slogdet`` returns: ``sign`` and ``logabsdet``, each (...)."""

    sign: Any
    logabsdet: Any


def _diagonal(x: Any) -> Any:
    shape, dtype = aval_of(x)
    return lax.sum(lax.multiply(x, mx.eye(shape[-1], dtype=dtype)), (len(shape) - 1,))


def slogdet(a: Any, *, method: str | None = None) -> SlogdetResult:
    """The sign and the log of the absolute value of the determinants of the
    square matrices ``a`` (..., n, n), as ``jax.numpy.linalg.slogdet``:
    ``det(a) = sign * exp(logabsdet)``, without overflow.

    By LU decomposition (``method`` None or ``"lu"``; ``"qr"`` is not
    supported). At a singular matrix ``sign`` is 0 and ``logabsdet`` is
    ``-inf``, as in JAX; the gradient there is not finite. Elsewhere the
    gradient of ``logabsdet`` is ``inv(a).T``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> sign, logabsdet = fnp.linalg.slogdet(mx.array([[0.0, 2.0], [3.0, 0.0]]))
    >>> sign.item(), round(logabsdet.item(), 4)
    (-1.0, 1.7918)
    """
    if method not in (None, "lu"):
        raise ValueError(f"slogdet: method must be None or 'lu', got {method!r}")
    a = square_matrices(a, "slogdet", "a")
    shape, dtype = aval_of(a)
    nd, n = len(shape), shape[-1]
    if 0 in shape:
        return SlogdetResult(mx.ones(shape[:-2], dtype), mx.zeros(shape[:-2], dtype))
    lu, pivots, _ = lax.lu(a)
    diag = _diagonal(lu)
    swaps = lax.sum(lax.astype(lax.not_equal(pivots, mx.arange(n, dtype=mx.int32)), mx.int32),
                    (nd - 2,))
    sign = lax.multiply(lax.astype(lax.subtract(1, lax.multiply(2, lax.remainder(swaps, 2))),
                                   dtype),
                        lax.prod(lax.sign(diag), (nd - 2,)))
    sign = lax.add(sign, 0.0)  # a singular matrix's sign is 0, not -0
    return SlogdetResult(sign, lax.sum(lax.log(lax.abs(diag)), (nd - 2,)))


def matrix_power(a: Any, n: int) -> Any:
    """The integer power ``n`` of the square matrices ``a`` (..., m, m), by
    repeated squaring: the identity for ``n = 0``, powers of ``inv(a)`` for
    ``n < 0``. Integer matrices stay integer for ``n >= 0``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.linalg.matrix_power(mx.array([[1, 1], [1, 0]]), 10).tolist()
    [[89, 55], [55, 34]]
    >>> fnp.linalg.matrix_power(mx.array([[2.0, 0.0], [0.0, 4.0]]), -2).tolist()
    [[0.25, 0.0], [0.0, 0.0625]]
    """
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"matrix_power: exponent n must be an integer, got {n!r}") from None
    a = asarray(a)
    shape, dtype = aval_of(a)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ValueError(
            "matrix_power: argument a must be a square matrix or a stack of them, shape "
            f"(..., m, m); got shape {tuple(shape)}")
    if n == 0:
        return lax.broadcast_to(mx.eye(shape[-1], dtype=dtype), shape)
    if n < 0:
        a, n = inv(a), -n
    result = None
    while True:  # binary powering: the set bits of n, low to high
        if n & 1:
            result = a if result is None else lax.matmul(result, a)
        n >>= 1
        if not n:
            return result
        a = lax.matmul(a, a)


def _chain_order(dims: list[int]) -> list[list[int]]:
    """The split points of the cheapest parenthesisation of a chain of
    matrices whose shapes are ``(dims[i], dims[i + 1])`` (the classic dynamic
    programme over the number of scalar multiplications)."""
    k = len(dims) - 1
    cost = [[0] * k for _ in range(k)]
    split = [[0] * k for _ in range(k)]
    for length in range(1, k):
        for i in range(k - length):
            j = i + length
            cost[i][j] = math.inf
            for s in range(i, j):
                c = cost[i][s] + cost[s + 1][j] + dims[i] * dims[s + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, s
    return split


def multi_dot(arrays: Sequence[Any], *, precision: Any = None) -> Any:
    """The product of a chain of matrices, multiplied in the cheapest order
    (found from the static shapes), as ``numpy.linalg.multi_dot``: the first
    array may be 1-d (a row vector) and the last 1-d (a column vector); the
    others must be 2-d. ``precision`` is accepted for JAX compatibility and
    ignored.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.linalg.multi_dot([mx.ones(10), mx.ones((10, 100)), mx.ones((100, 2))]).tolist()
    [1000.0, 1000.0]
    """
    arrays = [asarray(x) for x in arrays]
    if len(arrays) < 2:
        raise ValueError(f"multi_dot: give at least two arrays, got {len(arrays)}")
    shapes = [tuple(aval_of(x).shape) for x in arrays]
    first_vector, last_vector = len(shapes[0]) == 1, len(shapes[-1]) == 1
    if first_vector:
        arrays[0], shapes[0] = lax.reshape(arrays[0], (1, shapes[0][0])), (1, shapes[0][0])
    if last_vector:
        arrays[-1], shapes[-1] = lax.reshape(arrays[-1], (shapes[-1][0], 1)), (shapes[-1][0], 1)
    for i, shape in enumerate(shapes):
        if len(shape) != 2:
            raise ValueError(
                f"multi_dot: array {i} must be 2-d (only the first and the last may be 1-d); "
                f"got shape {shape}")
    for i in range(len(shapes) - 1):
        if shapes[i][1] != shapes[i + 1][0]:
            raise ValueError(
                f"multi_dot: arrays {i} and {i + 1} do not chain: shapes {shapes[i]} and "
                f"{shapes[i + 1]}")
    dims = [s[0] for s in shapes] + [shapes[-1][1]]
    split = _chain_order(dims)

    def product(i: int, j: int) -> Any:
        if i == j:
            return arrays[i]
        s = split[i][j]
        return lax.matmul(product(i, s), product(s + 1, j))

    out = product(0, len(arrays) - 1)
    if first_vector and last_vector:
        return lax.reshape(out, ())
    if first_vector:
        return lax.reshape(out, (dims[-1],))
    if last_vector:
        return lax.reshape(out, (dims[0],))
    return out


def cross(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    """The cross products of 3-vectors along ``axis`` of ``x1`` and ``x2``
    (which broadcast together; ``axis`` indexes the broadcast shape), as
    ``jax.numpy.linalg.cross``, the Array API function (NumPy's ``cross``
    also takes 2-vectors and separate axes).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.linalg.cross(mx.array([1.0, 0.0, 0.0]), mx.array([0.0, 1.0, 0.0])).tolist()
    [0.0, 0.0, 1.0]
    """
    x1, x2 = asarray(x1), asarray(x2)
    s1, s2 = tuple(aval_of(x1).shape), tuple(aval_of(x2).shape)
    try:
        shape = tuple(mx.broadcast_shapes(s1, s2))
    except ValueError:
        raise ValueError(f"cross: shapes of x1 {s1} and x2 {s2} do not broadcast") from None
    if isinstance(axis, bool) or not isinstance(axis, int):
        raise TypeError(f"cross: axis must be an int, got {axis!r}")
    nd = len(shape)
    ax = check_axis(axis, nd, "cross", of=f"the broadcast shape {shape}")
    for name, s in (("x1", s1), ("x2", s2)):
        if ax - (nd - len(s)) < 0 or s[ax - (nd - len(s))] != 3:
            raise ValueError(
                f"cross: {name} must have size 3 along axis {axis} (3-vectors); got shape {s}")
    return _cross(x1, x2, axis=ax - nd)


def tensorinv(a: Any, ind: int = 2) -> Any:
    """The inverse of ``a`` as a tensor, as ``numpy.linalg.tensorinv``: with
    ``a`` read as a matrix of ``prod(a.shape[:ind])`` rows (which must equal
    the product of the other dimensions), the result has shape
    ``a.shape[ind:] + a.shape[:ind]`` and ``tensordot(result, a, ind)`` is
    the identity.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.linalg.tensorinv(2 * mx.eye(4).reshape(4, 2, 2), ind=1).shape
    (2, 2, 4)
    """
    a = asarray(a)
    shape = tuple(aval_of(a).shape)
    if not isinstance(ind, int) or ind <= 0:
        raise ValueError(f"tensorinv: ind must be a positive integer, got {ind!r}")
    rows, cols = math.prod(shape[:ind]), math.prod(shape[ind:])
    if rows != cols:
        raise ValueError(
            f"tensorinv: a of shape {shape} is not square with ind={ind}: "
            f"prod(a.shape[:{ind}]) = {rows} but prod(a.shape[{ind}:]) = {cols}")
    return lax.reshape(inv(lax.reshape(a, (rows, cols))), shape[ind:] + shape[:ind])


def tensorsolve(a: Any, b: Any, axes: tuple[int, ...] | None = None) -> Any:
    """``x`` with ``tensordot(a, x, x.ndim) = b``, as
    ``numpy.linalg.tensorsolve``: ``x`` has shape ``a.shape[b.ndim:]``, whose
    size must equal ``b``'s. ``axes`` (of ``a``) are moved to the end first.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> a = 2 * mx.eye(6).reshape(2, 3, 6)
    >>> fnp.linalg.tensorsolve(a, mx.ones((2, 3))).shape
    (6,)
    """
    a, b = asarray(a), asarray(b)
    if axes is not None:
        nd = len(aval_of(a).shape)
        moved = normalize_axes(tuple(axes), nd, "tensorsolve")
        order = [i for i in range(nd) if i not in moved] + [
            (ax if ax >= 0 else ax + nd) for ax in axes]
        a = lax.transpose(a, tuple(order))
    sa, sb = tuple(aval_of(a).shape), tuple(aval_of(b).shape)
    out_shape = sa[len(sb):]
    if sa[:len(sb)] != sb or math.prod(out_shape) != math.prod(sb):
        raise ValueError(
            f"tensorsolve: a of shape {sa} does not fit b of shape {sb}: a.shape must start "
            "with b.shape and its remaining dimensions must have b's size")
    n = math.prod(sb)
    return lax.reshape(solve(lax.reshape(a, (n, n)), lax.reshape(b, (n,))), out_shape)


# ----------------------------------------------------------------------------
# Norms
# ----------------------------------------------------------------------------


def _safe_sqrt(s: Any) -> Any:
    """``sqrt(s)`` whose derivative at ``s = 0`` is zero rather than NaN."""
    zero = lax.equal(s, 0)
    return lax.where(zero, 0.0, lax.sqrt(lax.where(zero, 1.0, s)))


def _float(x: Any) -> Any:
    x = asarray(x)
    return x if is_floating(aval_of(x).dtype) else lax.astype(x, mx.float32)


def _reduce(fname: str, op: Any, x: Any, axes: tuple[int, ...], keepdims: bool) -> Any:
    if op in (lax.max, lax.min):
        shape = aval_of(x).shape
        for a in axes:
            if shape[a] == 0:
                raise ValueError(
                    f"{fname}: this ord takes a max or min over axis {a}, which has size 0")
    return op(x, axes, keepdims)


def _vector_norm(fname: str, x: Any, axes: tuple[int, ...], keepdims: bool, ord: Any) -> Any:
    if ord is None or (not isinstance(ord, str) and ord == 2):
        return _safe_sqrt(lax.sum(lax.multiply(x, x), axes, keepdims))
    if isinstance(ord, (str, bool)) or not isinstance(ord, (int, float)):
        raise ValueError(
            f"{fname}: invalid ord {ord!r} for a vector norm; use None, a number, inf or -inf")
    ax = lax.abs(x)
    if ord == math.inf:
        return _reduce(fname, lax.max, ax, axes, keepdims)
    if ord == -math.inf:
        return _reduce(fname, lax.min, ax, axes, keepdims)
    if ord == 0:
        return lax.sum(lax.astype(lax.not_equal(x, 0), aval_of(x).dtype), axes, keepdims)
    if ord == 1:
        return lax.sum(ax, axes, keepdims)
    return lax.power(lax.sum(lax.power(ax, float(ord)), axes, keepdims), 1.0 / ord)


def _singular_values(x: Any) -> Any:
    from ftorch.numpy import _linalg_orthogonal

    svd = getattr(_linalg_orthogonal, "svd", None)
    if svd is None:
        raise NotImplementedError("norm: ord 2, -2 and 'nuc' need svd, which is not available")
    return svd(x, compute_uv=False)


def _matrix_norm(fname: str, x: Any, axes: tuple[int, int], keepdims: bool, ord: Any) -> Any:
    r, c = axes
    if ord is None or ord == "fro":
        return _safe_sqrt(lax.sum(lax.multiply(x, x), tuple(sorted(axes)), keepdims))
    if ord in ("nuc", 2, -2) and not isinstance(ord, bool):
        nd = len(aval_of(x).shape)
        rest = [i for i in range(nd) if i not in axes]
        s = _singular_values(lax.transpose(x, (*rest, r, c)))
        last = len(rest)
        out = (lax.sum(s, (last,)) if ord == "nuc" else
               _reduce(fname, lax.max if ord == 2 else lax.min, s, (last,), False))
        return lax.expand_dims(out, tuple(sorted(axes))) if keepdims else out
    if isinstance(ord, bool) or ord not in (1, -1, math.inf, -math.inf):
        raise ValueError(
            f"{fname}: invalid ord {ord!r} for a matrix norm; use None, 'fro', 'nuc', 1, -1, "
            "2, -2, inf or -inf")
    # 1 and -1: over columns of the sums down each column; inf and -inf: over rows.
    inner, outer = (r, c) if ord in (1, -1) else (c, r)
    sums = lax.sum(lax.abs(x), (inner,), True)
    out = _reduce(fname, lax.max if ord > 0 else lax.min, sums, (outer,), True)
    return out if keepdims else lax.squeeze(out, tuple(sorted(axes)))


def _norm_axes(fname: str, axis: Any, nd: int) -> tuple[int, ...]:
    axes = (axis,) if isinstance(axis, int) else axis
    if not isinstance(axes, (tuple, list)) or not all(
            isinstance(a, int) and not isinstance(a, bool) for a in axes):
        raise TypeError(f"{fname}: axis must be None, an int or a tuple of ints, got {axis!r}")
    out = tuple(check_axis(a, nd, fname) for a in axes)
    if len(set(out)) != len(out):
        raise ValueError(f"{fname}: repeated axis in {axis!r}")
    return out


def norm(x: Any, ord: int | float | str | None = None, axis: int | tuple[int, ...] | None = None,
         keepdims: bool = False) -> Any:
    """A vector or matrix norm, as ``jax.numpy.linalg.norm``.

    ``axis`` an int (or a 1-tuple): vector norms along it, ``ord`` None or 2
    (Euclidean), 1, inf, -inf, 0 (the count of non-zeros) or any number p
    (``sum(|x|^p)^(1/p)``). ``axis`` a pair: matrix norms over those axes,
    ``ord`` None or ``'fro'`` (Frobenius), ``'nuc'`` (sum of singular
    values), 1 / -1 (max / min column sum of ``|x|``), inf / -inf (max / min
    row sum), 2 / -2 (largest / smallest singular value). ``axis`` None:
    the 2-norm of all entries when ``ord`` is None, else a vector norm of a
    1-d ``x`` or a matrix norm of a 2-d one.

    Unlike JAX, whose gradient of the Euclidean and Frobenius norms at zero
    is NaN, the gradient there is zero (a subgradient), as in PyTorch.

    >>> import ftorch as ft, ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.linalg.norm(mx.array([3.0, 4.0])).item()
    5.0
    >>> fnp.linalg.norm(mx.array([[1.0, -2.0], [3.0, 4.0]]), ord=1).item()
    6.0
    >>> ft.grad(fnp.linalg.norm)(mx.zeros(2)).tolist()
    [0.0, 0.0]
    """
    x = _float(x)
    nd = len(aval_of(x).shape)
    if axis is None:
        if ord is None:
            out = _vector_norm("norm", x, tuple(range(nd)), keepdims, None)
            return out
        if nd == 1:
            return _vector_norm("norm", x, (0,), keepdims, ord)
        if nd == 2:
            return _matrix_norm("norm", x, (0, 1), keepdims, ord)
        raise ValueError(
            f"norm: with ord={ord!r} and axis=None, x must be 1-d or 2-d; got shape "
            f"{tuple(aval_of(x).shape)} (give axis)")
    axes = _norm_axes("norm", axis, nd)
    if len(axes) == 1:
        return _vector_norm("norm", x, axes, keepdims, ord)
    if len(axes) == 2:
        return _matrix_norm("norm", x, axes, keepdims, ord)
    raise ValueError(f"norm: axis must name one axis (a vector norm) or two (a matrix norm); "
                     f"got {axis!r}")


def vector_norm(x: Any, /, *, axis: int | tuple[int, ...] | None = None, keepdims: bool = False,
                ord: int | float = 2) -> Any:
    """The vector norm of ``x`` over ``axis`` (None: all entries; a tuple:
    those axes together), as ``jax.numpy.linalg.vector_norm``; ``ord`` as in
    ``norm``'s vector norms. The gradient of the 2-norm at zero is zero.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.linalg.vector_norm(mx.ones((2, 2)), ord=1).item()
    4.0
    """
    x = _float(x)
    nd = len(aval_of(x).shape)
    axes = tuple(range(nd)) if axis is None else _norm_axes("vector_norm", axis, nd)
    return _vector_norm("vector_norm", x, axes, keepdims, ord)


def matrix_norm(x: Any, /, *, keepdims: bool = False, ord: int | str = "fro") -> Any:
    """The matrix norms of ``x``'s last two axes, as
    ``jax.numpy.linalg.matrix_norm``; ``ord`` as in ``norm``'s matrix norms.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.linalg.matrix_norm(mx.ones((3, 2, 2)), ord=mx.inf).tolist()
    [2.0, 2.0, 2.0]
    """
    x = _float(x)
    nd = len(aval_of(x).shape)
    if nd < 2:
        raise ValueError(
            f"matrix_norm: x must have at least 2 dimensions; got shape {tuple(aval_of(x).shape)}")
    return _matrix_norm("matrix_norm", x, (nd - 2, nd - 1), keepdims, ord)


# ----------------------------------------------------------------------------
# The Array API's linalg names and the general eigenproblem
# ----------------------------------------------------------------------------


def _at_least_2d(x: Any, fname: str) -> Any:
    x = asarray(x)
    if aval_of(x).ndim < 2:
        raise ValueError(f"{fname}: x must have at least 2 dimensions; got shape "
                         f"{tuple(aval_of(x).shape)}")
    return x


def _computed_in(x1: Any, x2: Any, preferred_element_type: Any) -> tuple[Any, Any]:
    """The operands cast to ``preferred_element_type`` when it is given
    (``precision`` is XLA's and has no MLX counterpart)."""
    if preferred_element_type is None:
        return x1, x2
    return asarray(x1, preferred_element_type), asarray(x2, preferred_element_type)


def matmul(x1: Any, x2: Any, /, *, precision: Any = None,
           preferred_element_type: Any = None) -> Any:
    """``ftorch.numpy.matmul``, as ``jax.numpy.linalg.matmul`` (the Array
    API's name); ``precision`` is accepted and ignored, and the product is
    computed in ``preferred_element_type`` when given.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.linalg.matmul(mx.ones((2, 3)), mx.ones(3)).tolist()
    [3.0, 3.0]
    """
    return _linalg.matmul(*_computed_in(x1, x2, preferred_element_type))


def tensordot(x1: Any, x2: Any, /, *, axes: int | tuple = 2, precision: Any = None,
              preferred_element_type: Any = None, out_sharding: Any = None) -> Any:
    """``ftorch.numpy.tensordot`` with keyword ``axes``, as
    ``jax.numpy.linalg.tensordot``; ``precision`` and ``out_sharding`` are
    accepted and ignored.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.linalg.tensordot(mx.ones((2, 3)), mx.ones((3, 4)), axes=1).shape
    (2, 4)
    """
    return _linalg.tensordot(*_computed_in(x1, x2, preferred_element_type), axes)


def outer(x1: Any, x2: Any, /) -> Any:
    """The outer product of the vectors ``x1`` (m,) and ``x2`` (n,), (m, n),
    as ``jax.numpy.linalg.outer`` (1-d operands only, unlike
    ``ftorch.numpy.outer``, which flattens).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.linalg.outer(mx.array([1, 2]), mx.array([3, 4])).tolist()
    [[3, 4], [6, 8]]
    """
    x1, x2 = asarray(x1), asarray(x2)
    for name, x in (("x1", x1), ("x2", x2)):
        if aval_of(x).ndim != 1:
            raise ValueError(f"outer: {name} must be 1-d; got shape {tuple(aval_of(x).shape)}")
    return _linalg.outer(x1, x2)


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1, precision: Any = None,
           preferred_element_type: Any = None) -> Any:
    """The dot products ``sum(conj(x1) * x2)`` along ``axis`` of the
    broadcast operands, as ``jax.numpy.linalg.vecdot``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.linalg.vecdot(mx.ones((2, 3)), mx.array([1.0, 2.0, 3.0])).tolist()
    [6.0, 6.0]
    """
    x1, x2 = _computed_in(asarray(x1), asarray(x2), preferred_element_type)
    s1, s2 = tuple(aval_of(x1).shape), tuple(aval_of(x2).shape)
    try:
        shape = tuple(mx.broadcast_shapes(s1, s2))
    except ValueError:
        raise ValueError(f"vecdot: shapes of x1 {s1} and x2 {s2} do not broadcast") from None
    ax = check_axis(axis, len(shape), "vecdot", of=f"the broadcast shape {shape}")
    for name, s in (("x1", s1), ("x2", s2)):
        own = ax - (len(shape) - len(s))
        if own < 0 or s[own] != shape[ax]:
            raise ValueError(f"vecdot: {name} of shape {s} must have size {shape[ax]} along "
                             f"axis {axis} (no broadcasting along the contracted axis)")
    return _reduction.sum(_elementwise.conj(x1) * x2, axis=ax)


def matrix_transpose(x: Any, /) -> Any:
    """``x`` with its last two axes swapped, as
    ``jax.numpy.linalg.matrix_transpose`` (at least 2-d).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.linalg.matrix_transpose(mx.ones((4, 2, 3))).shape
    (4, 3, 2)
    """
    return _mT(_at_least_2d(x, "matrix_transpose"))


def diagonal(x: Any, /, *, offset: int = 0) -> Any:
    """The diagonals (..., k) of the matrices in ``x``'s last two axes
    (``offset`` above the main one, below when negative), as
    ``jax.numpy.linalg.diagonal``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.linalg.diagonal(mx.array([[1, 2], [3, 4]]), offset=1).tolist()
    [2]
    """
    return _shape.diagonal(_at_least_2d(x, "diagonal"), offset, -2, -1)


def trace(x: Any, /, *, offset: int = 0, dtype: Any = None) -> Any:
    """The traces (...) of the matrices in ``x``'s last two axes (``offset``
    as in ``diagonal``), as ``jax.numpy.linalg.trace``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.linalg.trace(mx.ones((2, 3, 3))).tolist()
    [3.0, 3.0]
    """
    return _reduction.trace(_at_least_2d(x, "trace"), offset, -2, -1, dtype)


def svdvals(x: Any, /) -> Any:
    """The singular values (..., k), descending, of the matrices ``x``
    (..., m, n), as ``jax.numpy.linalg.svdvals``; differentiable (see
    ``svd``).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.linalg.svdvals(mx.array([[3.0, 0.0], [0.0, -4.0]])).tolist()
    [4.0, 3.0]
    """
    return svd(x, compute_uv=False)


def cond(x: Any, p: Any = None) -> Any:
    """The condition numbers of the matrices ``x`` (..., m, n) in the norm
    ``p``, as ``jax.numpy.linalg.cond``: ``p`` None, 2 or -2 from the
    singular values (``s_max / s_min``, or its inverse), any other matrix
    norm of ``norm`` as ``norm(x, p) * norm(inv(x), p)`` (square ``x``
    only). ``inf`` where ``x`` is singular.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.linalg.cond(mx.array([[1.0, 0.0], [0.0, 4.0]])).item()
    4.0
    """
    x = _at_least_2d(x, "cond")
    nd = aval_of(x).ndim
    if p is None or (not isinstance(p, str) and p in (2, -2)):
        s = svdvals(x)
        big, small = _reduction.max(s, axis=-1), _reduction.min(s, axis=-1)
        ratio = big / small if p != -2 else small / big
        return lax.where(lax.equal(small, 0.0), math.inf if p != -2 else 0.0, ratio)
    x = square_matrices(x, "cond", "x")
    inverse = inv(x)
    out = norm(x, ord=p, axis=(nd - 2, nd - 1)) * norm(inverse, ord=p, axis=(nd - 2, nd - 1))
    singular = _reduction.any(_elementwise.logical_not(_elementwise.isfinite(inverse)),
                               axis=(-2, -1))
    return lax.where(singular, math.inf, out)


class EigResult(NamedTuple):
    """What ``eig`` returns: complex eigenvalues and eigenvectors (columns)."""

    eigenvalues: Any
    eigenvectors: Any


def eig(a: Any) -> EigResult:
    """The eigenvalues (..., n) and unit eigenvectors (columns of (..., n, n))
    of the real square matrices ``a``, complex64, as
    ``jax.numpy.linalg.eig``: MLX's LAPACK ``geev`` on the CPU stream, in
    float32 (float64 input is computed in float32: MLX's eig returns
    complex64 only). Eigenvectors are not differentiable (as JAX's, by
    default); the eigenvalues are (``eigvals``).

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.linalg.eig(mx.array([[0.0, 1.0], [-1.0, 0.0]])).eigenvalues.tolist()
    [1j, -1j]
    """
    x = _eig_input(a, "eig")
    w, v = matrix_functions.eig(x)
    return EigResult(w, v)


def eigvals(a: Any) -> Any:
    """The eigenvalues (..., n), complex64, of the real square matrices
    ``a``, as ``jax.numpy.linalg.eigvals`` (LAPACK on the CPU stream, in
    float32). Differentiable where they are distinct:
    ``dw = diag(V^-1 da V)``.

    >>> import ftorch.numpy as fnp, mlx.core as mx
    >>> fnp.linalg.eigvals(mx.array([[2.0, 0.0], [0.0, 3.0]])).tolist()
    [(2+0j), (3+0j)]
    """
    return matrix_functions.eig(_eig_input(a, "eigvals"), vectors=False)[0]


def _eig_input(a: Any, fname: str) -> Any:
    x, _ = _matrices(a, fname, "a", square=True)
    return x if aval_of(x).dtype == mx.float32 else lax.astype(x, mx.float32)
