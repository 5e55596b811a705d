"""``ftorch.nn.initializers`` against ``jax.nn.initializers``: the spread of each
initialiser's samples (the numbers themselves come from different generators), fans
from ``in_axis``/``out_axis``/``batch_axis``, orthogonality, and errors."""

import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.nn.initializers as jinit  # noqa: E402
import mlx.core as mx  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import ftorch.nn.initializers as finit  # noqa: E402
import ftorch.random as random  # noqa: E402

SHAPES = [((300, 200), {}), ((3, 3, 40, 50), {}),
          ((20, 30, 40), dict(in_axis=0, out_axis=2, batch_axis=1)),
          ((30, 40, 20), dict(in_axis=(0, 1), out_axis=-1))]


@pytest.mark.parametrize("name", ["glorot_uniform", "glorot_normal", "he_uniform", "he_normal",
                                  "lecun_uniform", "lecun_normal"])
@pytest.mark.parametrize("shape,axes", SHAPES)
def test_spread_matches_jax(name, shape, axes):
    ours = np.array(getattr(finit, name)(**axes)(random.key(0), shape))
    theirs = np.asarray(getattr(jinit, name)(**axes)(jax.random.PRNGKey(0), shape))
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    assert abs(ours.std() / theirs.std() - 1) < 0.03
    assert abs(np.abs(ours).max() / np.abs(theirs).max() - 1) < 0.1


@pytest.mark.parametrize("make", [lambda m: m.normal(0.3), lambda m: m.uniform(2.0),
                                  lambda m: m.truncated_normal(0.5, lower=-1.0, upper=1.5)])
def test_simple_distributions_match_jax(make):
    ours = np.array(make(finit)(random.key(1), (200, 100)))
    theirs = np.asarray(make(jinit)(jax.random.PRNGKey(1), (200, 100)))
    scale = theirs.std()
    for q in (2, 25, 50, 75, 98):
        assert abs(np.percentile(ours, q) - np.percentile(theirs, q)) < 0.1 * scale, q


@pytest.mark.parametrize("shape,column_axis", [((5, 3), -1), ((3, 5), -1), ((4, 2, 6), 0)])
def test_orthogonal_columns(shape, column_axis):
    w = np.array(finit.orthogonal(2.0, column_axis)(random.key(2), shape))
    assert w.shape == shape
    m = np.moveaxis(w, column_axis, -1).reshape(-1, shape[column_axis])
    gram = m.T @ m if m.shape[0] >= m.shape[1] else m @ m.T
    np.testing.assert_allclose(gram, 4.0 * np.eye(len(gram)), atol=1e-4)


def test_delta_orthogonal_is_zero_off_centre():
    w = np.array(finit.delta_orthogonal()(random.key(3), (3, 3, 2, 4)))
    centre = w[1, 1]
    np.testing.assert_allclose(centre @ centre.T, np.eye(2), atol=1e-5)
    w[1, 1] = 0
    assert not w.any()


def test_errors_name_the_argument():
    with pytest.raises(ValueError, match="mode"):
        finit.variance_scaling(1.0, "fan_mid", "normal")
    with pytest.raises(ValueError, match="in_axis 3 is out of range"):
        finit.he_normal(in_axis=3)(random.key(0), (2, 3))
    with pytest.raises(ValueError, match="in axis"):
        finit.delta_orthogonal()(random.key(0), (3, 3, 4, 2))
    with pytest.raises(TypeError, match="floating"):
        finit.normal()(random.key(0), (2,), mx.int32)
