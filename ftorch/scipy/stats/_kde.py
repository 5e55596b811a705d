"""``gaussian_kde``, as ``jax.scipy.stats.gaussian_kde``: a Gaussian kernel
density estimate from (weighted) samples, a pytree (its arrays are leaves, so
it passes through ``jit``, ``grad`` and ``vmap``)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import ftorch.numpy as fnp
from ftorch import random as _random
from ftorch import tree as _tree
from ftorch.scipy import linalg as _linalg
from ftorch.scipy import special as _special
from ftorch.scipy.stats._common import promote

__all__ = ["gaussian_kde"]

_LOG_2PI = math.log(2.0 * math.pi)


def _atleast_2d(x: Any) -> Any:
    return fnp.reshape(x, (1,) * (2 - x.ndim) + tuple(x.shape)) if x.ndim < 2 else x


class gaussian_kde:  # noqa: N801 (JAX's and SciPy's name)
    """A Gaussian kernel density estimate of ``dataset`` (``(d, n)``: ``n``
    points of ``d`` dimensions; a 1-D array is ``d = 1``), each point
    weighted by ``weights`` (uniform by default). The kernel's covariance is
    the data's weighted covariance times ``factor**2``, ``factor`` from
    ``bw_method``: ``"scott"`` (the default, ``neff**(-1/(d+4))``),
    ``"silverman"``, a scalar, or a callable of the estimate. Attributes as
    JAX's: ``dataset``, ``weights``, ``neff`` (the effective sample size),
    ``covariance``, ``inv_cov``, ``d``, ``n``.

    >>> import ftorch.scipy.stats as stats, mlx.core as mx
    >>> kde = stats.gaussian_kde(mx.array([-1.0, 0.0, 0.5, 2.0]))
    >>> [round(v, 6) for v in kde.pdf(mx.array([0.0, 1.0])).tolist()]
    [0.26852, 0.223548]
    """

    neff: Any
    dataset: Any
    weights: Any
    covariance: Any
    inv_cov: Any

    def __init__(self, dataset: Any, bw_method: None | str | Any | Callable = None,
                 weights: Any = None) -> None:
        dataset = _atleast_2d(fnp.asarray(dataset))
        if fnp.iscomplexobj(dataset):
            raise NotImplementedError("gaussian_kde: complex data is not supported")
        if dataset.size <= 1:
            raise ValueError("gaussian_kde: dataset must have more than one element")
        d, n = dataset.shape
        if weights is None:
            (dataset,) = promote("gaussian_kde", dataset)
            weights = fnp.full((n,), 1.0 / n, dtype=dataset.dtype)
        else:
            dataset, weights = promote("gaussian_kde", dataset, weights)
            if weights.ndim != 1 or weights.shape[0] != n:
                raise ValueError(f"gaussian_kde: weights must be one-dimensional, of length "
                                 f"n = {n} (the dataset's points), got shape "
                                 f"{tuple(weights.shape)}")
            weights = weights / fnp.sum(weights)
        self.dataset, self.weights = dataset, weights
        self.neff = 1.0 / fnp.sum(weights * weights)
        if bw_method is None or bw_method == "scott":
            factor = fnp.power(self.neff, -1.0 / (d + 4))
        elif bw_method == "silverman":
            factor = fnp.power(self.neff * (d + 2) / 4.0, -1.0 / (d + 4))
        elif callable(bw_method):
            factor = bw_method(self)
        elif not isinstance(bw_method, str) and fnp.asarray(bw_method).ndim == 0:
            factor = bw_method
        else:
            raise ValueError("gaussian_kde: bw_method must be 'scott', 'silverman', a scalar "
                             f"or a callable, got {bw_method!r}")
        data_cov = _weighted_covariance(dataset, weights)
        self.covariance = data_cov * factor ** 2
        self.inv_cov = fnp.linalg.inv(data_cov) / factor ** 2

    @property
    def d(self) -> int:
        """The number of dimensions."""
        return self.dataset.shape[0]

    @property
    def n(self) -> int:
        """The number of data points."""
        return self.dataset.shape[1]

    def evaluate(self, points: Any) -> Any:
        """The estimated density at ``points`` (``(d, m)``, or ``m`` points of
        one dimension, or one point of ``d``).

        >>> import ftorch.scipy.stats as stats, mlx.core as mx
        >>> kde = stats.gaussian_kde(mx.array([[0.0, 1.0, 2.0], [0.0, 2.0, 1.0]]))
        >>> kde.evaluate(mx.array([[1.0], [1.0]])).shape
        (1,)
        """
        return fnp.exp(self.logpdf(points))

    __call__ = evaluate

    def pdf(self, x: Any) -> Any:
        """The estimated density at ``x``, ``evaluate(x)``.

        >>> import ftorch.scipy.stats as stats, mlx.core as mx
        >>> stats.gaussian_kde(mx.array([0.0, 1.0])).pdf(mx.array([0.5])).shape
        (1,)
        """
        return self.evaluate(x)

    def logpdf(self, x: Any) -> Any:
        """``log`` of the estimated density at ``x``, through ``logsumexp``
        (finite far from the data).

        >>> import ftorch.scipy.stats as stats, mlx.core as mx
        >>> [round(v, 4) for v in stats.gaussian_kde(mx.array([0.0, 1.0])).logpdf(
        ...     mx.array([40.0])).tolist()]
        [-2008.0985]
        """
        points = self._reshape_points(x)
        dataset, points, inv_cov, weights = promote(
            "gaussian_kde.logpdf", self.dataset, points, self.inv_cov, self.weights)
        whitening = fnp.linalg.cholesky(inv_cov)  # whitening @ whitening.T == inv_cov
        data_w = fnp.matmul(dataset.T, whitening)
        points_w = fnp.matmul(points.T, whitening)
        log_norm = (fnp.sum(fnp.log(fnp.diagonal(whitening))) - 0.5 * self.d * _LOG_2PI)
        sq = fnp.sum(fnp.square(points_w[:, None, :] - data_w[None, :, :]), axis=-1)
        return _special.logsumexp(fnp.log(weights)[None, :] + log_norm - 0.5 * sq, axis=1)

    def integrate_gaussian(self, mean: Any, cov: Any) -> Any:
        """The integral of the estimate times the normal density of ``mean``
        and ``cov``.

        >>> import ftorch.scipy.stats as stats, mlx.core as mx
        >>> kde = stats.gaussian_kde(mx.array([0.0, 1.0]))
        >>> round(kde.integrate_gaussian(mx.array(0.5), mx.array(1.0)).item(), 6)
        0.310292
        """
        mean = fnp.reshape(fnp.asarray(mean), (-1,))
        cov = _atleast_2d(fnp.asarray(cov))
        if tuple(mean.shape) != (self.d,):
            raise ValueError(f"gaussian_kde.integrate_gaussian: mean must have {self.d} "
                             f"entries, got shape {tuple(mean.shape)}")
        if tuple(cov.shape) != (self.d, self.d):
            raise ValueError(f"gaussian_kde.integrate_gaussian: cov must be ({self.d}, "
                             f"{self.d}), got shape {tuple(cov.shape)}")
        factor, norm = self._convolution(self.covariance + cov)
        return _convolve(factor, norm, self.dataset, self.weights, mean)

    def integrate_box_1d(self, low: Any, high: Any) -> Any:
        """The estimate's mass between the scalars ``low`` and ``high`` (one
        dimension only).

        >>> import ftorch.scipy.stats as stats, mlx.core as mx
        >>> round(stats.gaussian_kde(mx.array([0.0, 1.0])).integrate_box_1d(-50.0, 50.0).item(), 6)
        1.0
        """
        if self.d != 1:
            raise ValueError("gaussian_kde.integrate_box_1d: only one-dimensional estimates")
        if fnp.asarray(low).ndim != 0 or fnp.asarray(high).ndim != 0:
            raise ValueError("gaussian_kde.integrate_box_1d: low and high must be scalars")
        sigma = fnp.sqrt(self.covariance[0, 0])
        low_z = (low - self.dataset[0]) / sigma
        high_z = (high - self.dataset[0]) / sigma
        return fnp.sum(self.weights * (_special.ndtr(high_z) - _special.ndtr(low_z)))

    def integrate_kde(self, other: gaussian_kde) -> Any:
        """The integral of the product of this estimate and ``other``.

        >>> import ftorch.scipy.stats as stats, mlx.core as mx
        >>> kde = stats.gaussian_kde(mx.array([0.0, 1.0]))
        >>> round(kde.integrate_kde(kde).item(), 6)
        0.347589
        """
        if other.d != self.d:
            raise ValueError(f"gaussian_kde.integrate_kde: the estimates have {self.d} and "
                             f"{other.d} dimensions")
        factor, norm = self._convolution(self.covariance + other.covariance)
        small, large = (self, other) if self.n < other.n else (other, self)
        per_point = fnp.stack([_convolve(factor, norm, large.dataset, large.weights,
                                         small.dataset[:, j]) for j in range(small.n)])
        return fnp.sum(per_point * small.weights)

    def resample(self, key: Any, shape: tuple[int, ...] = ()) -> Any:
        """``shape`` new points drawn from the estimate (``(d, *shape)``): data
        points chosen by weight plus kernel noise.

        >>> import ftorch.scipy.stats as stats, ftorch.random as random, mlx.core as mx
        >>> stats.gaussian_kde(mx.array([0.0, 1.0])).resample(random.key(0), (5,)).shape
        (1, 5)
        """
        index_key, noise_key = _random.split(key)
        index = _random.choice(index_key, self.n, shape=shape, p=self.weights)
        noise = _random.multivariate_normal(
            noise_key, fnp.zeros(self.d, self.covariance.dtype), self.covariance, shape=shape,
            dtype=self.dataset.dtype)
        return fnp.take(self.dataset, index, axis=1) + fnp.moveaxis(noise, -1, 0)

    def integrate_box(self, low_bounds: Any, high_bounds: Any, maxpts: Any = None) -> Any:
        """Not supported (as in JAX): only 1-D boxes, ``integrate_box_1d``.

        >>> import ftorch.scipy.stats as stats, mlx.core as mx
        >>> stats.gaussian_kde(mx.array([0.0, 1.0])).integrate_box(0.0, 1.0)
        Traceback (most recent call last):
        NotImplementedError: gaussian_kde.integrate_box: only 1-D boxes are supported; ...
        """
        raise NotImplementedError("gaussian_kde.integrate_box: only 1-D boxes are supported; "
                                  "use integrate_box_1d")

    def set_bandwidth(self, bw_method: Any = None) -> None:
        """Not supported (as in JAX): the estimate is immutable; build a new
        one with ``bw_method``.

        >>> import ftorch.scipy.stats as stats, mlx.core as mx
        >>> stats.gaussian_kde(mx.array([0.0, 1.0])).set_bandwidth("silverman")
        Traceback (most recent call last):
        NotImplementedError: gaussian_kde.set_bandwidth: the estimate is immutable; ...
        """
        raise NotImplementedError("gaussian_kde.set_bandwidth: the estimate is immutable; "
                                  "build a new one with bw_method")

    def tree_flatten(self) -> tuple[tuple[Any, ...], None]:
        """The estimate's arrays, as a pytree's children (no auxiliary data).

        >>> import ftorch.scipy.stats as stats, mlx.core as mx
        >>> len(stats.gaussian_kde(mx.array([0.0, 1.0])).tree_flatten()[0])
        5
        """
        return (self.neff, self.dataset, self.weights, self.covariance, self.inv_cov), None

    @classmethod
    def tree_unflatten(cls, aux_data: None, children: Any) -> gaussian_kde:
        """The estimate of ``tree_flatten``'s children.

        >>> import ftorch.scipy.stats as stats, mlx.core as mx
        >>> kde = stats.gaussian_kde(mx.array([0.0, 1.0]))
        >>> stats.gaussian_kde.tree_unflatten(None, kde.tree_flatten()[0]).n
        2
        """
        kde = cls.__new__(cls)
        kde.neff, kde.dataset, kde.weights, kde.covariance, kde.inv_cov = children
        return kde

    def _convolution(self, cov: Any) -> tuple[Any, Any]:
        factor = fnp.linalg.cholesky(cov)
        norm = 1.0 / (math.sqrt(2.0 * math.pi) ** self.d * fnp.prod(fnp.diagonal(factor)))
        return factor, norm

    def _reshape_points(self, points: Any) -> Any:
        points = fnp.asarray(points)
        if fnp.iscomplexobj(points):
            raise NotImplementedError("gaussian_kde: complex points are not supported")
        points = _atleast_2d(points)
        d, m = points.shape
        if d != self.d:
            if d == 1 and m == self.d:
                return fnp.reshape(points, (self.d, 1))
            raise ValueError(f"gaussian_kde: points have {d} dimensions, the dataset {self.d}")
        return points


def _weighted_covariance(dataset: Any, weights: Any) -> Any:
    """The unbiased covariance of the rows of ``dataset`` under reliability
    weights summing to 1 (``numpy.cov(..., aweights=weights)``)."""
    centred = dataset - fnp.sum(dataset * weights, axis=1, keepdims=True)
    dof = 1.0 - fnp.sum(weights * weights)
    return _atleast_2d(fnp.matmul(centred * weights, centred.T) / dof)


def _convolve(factor: Any, norm: Any, points: Any, weights: Any, mean: Any) -> Any:
    """``norm * sum_i weights_i exp(-|factor^-1 (points_i - mean)|^2 / 2)``."""
    diff = points - mean[:, None]
    whitened = _linalg.solve_triangular(factor, diff, lower=True)
    return norm * fnp.sum(fnp.exp(-0.5 * fnp.sum(whitened * whitened, axis=0)) * weights)


_tree.register_node(gaussian_kde, lambda kde: kde.tree_flatten(),
                    gaussian_kde.tree_unflatten)
