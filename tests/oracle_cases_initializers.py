"""Oracle cases for ``jax.nn.initializers`` (``ftorch.nn.initializers``): shapes and dtypes
of every initialiser against JAX's, and values where no randomness is involved; the
spreads are compared with JAX's in tests/test_nn_initializers.py."""

import numpy as np
from hypothesis import strategies as st
from oracle import Oracle


def _key(d):
    return np.array([0, d(st.integers(0, 1000))], dtype=np.uint32)


def _shape(d, min_dims=2):
    return tuple(d(st.lists(st.integers(1, 5), min_size=min_dims, max_size=4)))


def _factory(name, make=lambda fn: fn(), values=False, min_dims=2):
    return Oracle(f"jax.nn.initializers.{name}", lambda d: ((_key(d), _shape(d, min_dims)), {}),
                  run=lambda L, fn, key, shape: make(fn)(key, shape), values=values, grad=False)


ORACLE = [
    *[_factory(n) for n in ["glorot_uniform", "glorot_normal", "xavier_uniform",
                            "xavier_normal", "he_uniform", "he_normal", "kaiming_uniform",
                            "kaiming_normal", "lecun_uniform", "lecun_normal", "orthogonal"]],
    *[_factory(n, min_dims=0) for n in ["normal", "uniform", "truncated_normal"]],
    _factory("variance_scaling", lambda fn: fn(0.5, "fan_avg", "uniform", in_axis=0,
                                               out_axis=1)),
    _factory("constant", lambda fn: fn(0.25), values=True, min_dims=0),
    *[Oracle(f"jax.nn.initializers.{n}", lambda d: ((_key(d), _shape(d, 0)), {}), grad=False)
      for n in ["zeros", "ones"]],
    Oracle("jax.nn.initializers.delta_orthogonal",
           lambda d: ((_key(d), (3, 3, 2, d(st.integers(2, 4)))), {}),
           run=lambda L, fn, key, shape: fn()(key, shape), values=False, grad=False),
]

UNCHECKED = {"jax.nn.initializers.Initializer": "a protocol type, not a function"}
