"""Rule cases for the sorting primitives (sort, argsort, top_k, cummax,
cummin) and the composites built on them (quantiles, partition, segment
reductions). Inputs are drawn without ties (``distinct``), where the
derivatives of order statistics are defined and finite differences agree."""

import numpy as np
from harness import Case, away_from_integers, distinct, floats, shapes
from hypothesis import strategies as st

import ftorch.numpy as fnp
import ftorch.ops as ops
import ftorch.primitives as lax


def untied(min_dims=1, max_dims=3):
    """A float64 array with at least one axis and entries at least 0.05 apart."""
    return floats(shapes(min_dims, max_dims)).map(distinct)


@st.composite
def with_axis(draw, min_dims=1):
    x = draw(untied(min_dims))
    return x, draw(st.integers(-x.ndim, x.ndim - 1))


def _one(strategy):
    return strategy.map(lambda x: (x,))


@st.composite
def keyed(draw):
    """(keys, values): integer keys with ties and float values of one shape."""
    x = draw(untied())
    keys = draw(st.lists(st.integers(0, 2), min_size=x.size, max_size=x.size))
    return np.array(keys, dtype=np.int32).reshape(x.shape), x


@st.composite
def x_and_q(draw):
    """``x`` and two quantiles whose positions along axis 0 are not whole
    (where the quantile has a kink in ``q``)."""
    x = draw(untied())
    n = x.shape[0]
    q = draw(floats((2,), 0.05, 0.95))
    if n > 1:
        q = away_from_integers(q * (n - 1), 0.1) / (n - 1)
    return x, q


@st.composite
def segments(draw):
    """(data, segment_ids): rows of data and ids in [-1, 4] (-1 is dropped)."""
    n = draw(st.integers(1, 6))
    rest = draw(shapes(0, 2))
    data = distinct(draw(floats((n, *rest))))
    ids = np.array(draw(st.lists(st.integers(-1, 4), min_size=n, max_size=n)), np.int32)
    return data, ids


def _finite(y):
    """Empty segments (+-inf) as 0, so finite differences stay finite."""
    return fnp.where(fnp.isinf(y), 0.0, y)


CASES = [
    Case("sort", lambda x: lax.sort(x), _one(untied()), name="sort"),
    Case("sort", lambda x, a: fnp.sort(x, axis=a), with_axis(), name="sort[axis]"),
    Case("sort", lambda x: fnp.sort(x, axis=None, descending=True), _one(untied()),
         name="sort[flat,descending]"),
    Case("sort", lambda k, v: lax.sort_key_val(k, v), keyed(), name="sort_key_val"),
    Case("sort", lambda x: lax.sort((x, 2.0 * x, x * x), 0, num_keys=2), _one(untied()),
         name="sort[3 operands]"),
    Case("sort", lambda x: fnp.median(x, axis=-1), _one(untied()), name="median"),
    Case("sort", lambda x, q: fnp.quantile(x, q, axis=0), x_and_q(),
         name="quantile[q traced]"),
    Case("sort", lambda x: fnp.nanpercentile(x, np.array([10.0, 50.0, 90.0]), axis=None,
                                             method="midpoint"),
         _one(untied()), name="nanpercentile"),
    Case("argsort", lambda x: lax.argsort(x, x.ndim - 1), _one(untied()), name="argsort"),
    Case("argsort", lambda x: fnp.argsort(x, axis=0, descending=True), _one(untied()),
         name="argsort[descending]"),
    Case("argsort", lambda x: fnp.partition(x, 0, axis=-1), _one(untied()), name="partition"),
    Case("top_k", lambda x: lax.top_k(x, 1), _one(untied()), name="top_k[1]"),
    Case("top_k", lambda x: lax.top_k(x, x.shape[-1])[0], _one(untied()), name="top_k[all]"),
    Case("cummax", lambda x: lax.cummax(x, 0), _one(untied()), name="cummax"),
    Case("cummax", lambda x: lax.cummax(x, -1, reverse=True), _one(untied()),
         name="cummax[reverse]"),
    Case("cummin", lambda x: lax.cummin(x, 0), _one(untied()), name="cummin"),
    Case("cummin", lambda x: lax.cummin(x, -1, reverse=True), _one(untied()),
         name="cummin[reverse]"),
    Case("scatter_add", lambda d, i: ops.segment_sum(d, i, num_segments=5), segments(),
         name="segment_sum"),
    Case("scatter_max", lambda d, i: _finite(ops.segment_max(d, i, num_segments=5)), segments(),
         name="segment_max"),
    Case("scatter_min", lambda d, i: _finite(ops.segment_min(d, i, num_segments=5)), segments(),
         name="segment_min"),
]
