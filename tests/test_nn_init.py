"""ftorch.nn.init: shapes and dtypes, determinism per key, statistics for
fixed keys (generous tolerances), fans as mlx.nn.init, orthogonality, vmap
over keys and jit, errors, shapes beyond memory."""

import math

import mlx.core as mx
import mlx.nn as mnn
import numpy as np
import pytest
from child import run_child
from harness import close as _close

import ftorch as ft
import ftorch.nn.init as init
import ftorch.random as random

_np = np.array

# (name, factory call, shape, expected mean, expected std) for a (256, 512)
# weight: fan_in 512, fan_out 256.
_FI, _FO = 512, 256
_SHAPE = (_FO, _FI)
# The standard deviation of a standard normal truncated to (-2, 2).
_TN = 0.87962566103423978

STATISTICS = [
    ("uniform", init.uniform(), 0.5, math.sqrt(1 / 12)),
    ("uniform_ab", init.uniform(-3.0, 1.0), -1.0, 4 / math.sqrt(12)),
    ("normal", init.normal(), 0.0, 1.0),
    ("normal_ms", init.normal(mean=2.0, std=0.5), 2.0, 0.5),
    ("truncated_normal", init.truncated_normal(std=2.0), 0.0, 2.0 * _TN),
    ("truncated_normal_shifted", init.truncated_normal(mean=1.0, std=0.1, lower=-1.0, upper=1.0),
     1.0, 0.1 * 0.5396),
    ("glorot_uniform", init.glorot_uniform(), 0.0, math.sqrt(2 / (_FI + _FO))),
    ("glorot_normal", init.glorot_normal(gain=2.0), 0.0, 2 * math.sqrt(2 / (_FI + _FO))),
    ("he_uniform", init.he_uniform(), 0.0, 1 / math.sqrt(_FI)),
    ("he_uniform_fan_out", init.he_uniform("fan_out", gain=math.sqrt(2)), 0.0,
     math.sqrt(2 / _FO)),
    ("he_normal", init.he_normal(), 0.0, 1 / math.sqrt(_FI)),
    ("he_normal_fan_out", init.he_normal(mode="fan_out", gain=3.0), 0.0, 3 / math.sqrt(_FO)),
    ("lecun_uniform", init.lecun_uniform(), 0.0, 1 / math.sqrt(_FI)),
    ("lecun_normal", init.lecun_normal(), 0.0, 1 / math.sqrt(_FI)),
    ("vs_fan_avg_tn", init.variance_scaling(2.0, "fan_avg"), 0.0,
     math.sqrt(2.0 / ((_FI + _FO) / 2))),
    ("vs_fan_geo_avg_uniform", init.variance_scaling(0.5, "fan_geo_avg", "uniform"), 0.0,
     math.sqrt(0.5 / math.sqrt(_FI * _FO))),
    ("vs_fan_out_normal", init.variance_scaling(1.0, "fan_out", "normal"), 0.0,
     1 / math.sqrt(_FO)),
    ("constant", init.constant(-0.25), -0.25, 0.0),
    ("zeros", lambda k, s, dtype=mx.float32: init.zeros(k, s, dtype), 0.0, 0.0),
    ("ones", lambda k, s, dtype=mx.float32: init.ones(k, s, dtype), 1.0, 0.0),
]
_IDS = [s[0] for s in STATISTICS]


@pytest.mark.parametrize("name,fn,mean,std", STATISTICS, ids=_IDS)
def test_statistics(name, fn, mean, std):
    w = fn(random.key(0), _SHAPE)
    assert isinstance(w, mx.array) and w.shape == _SHAPE and w.dtype == mx.float32
    wn = _np(w).astype(np.float64)
    # 131072 samples: the sample mean is within 5 standard errors, the std within 3%.
    assert abs(wn.mean() - mean) <= 5 * std / math.sqrt(wn.size) + 1e-7, wn.mean()
    assert abs(wn.std() - std) <= 0.03 * std + 1e-7, (wn.std(), std)


@pytest.mark.parametrize("name,fn,mean,std", STATISTICS, ids=_IDS)
def test_determinism_shapes_and_dtypes(name, fn, mean, std):
    k1, k2 = random.split(random.key(42))
    a, b, c = fn(k1, (6, 3, 2, 5)), fn(k1, (6, 3, 2, 5)), fn(k2, (6, 3, 2, 5))
    assert a.shape == (6, 3, 2, 5)
    assert mx.array_equal(a, b)
    assert mx.array_equal(a, c) == (std == 0)
    for dtype in (mx.float16, mx.bfloat16, "float32"):
        w = fn(k1, [4, 7], dtype=dtype)
        assert w.shape == (4, 7) and w.dtype == (mx.float32 if dtype == "float32" else dtype)


def test_bounds():
    k = random.key(1)
    w = _np(init.uniform(-2.0, -1.0)(k, (1000,)))
    assert (w >= -2).all() and (w < -1).all()
    w = _np(init.truncated_normal(std=0.5, lower=-1.0, upper=3.0)(k, (2000,)))
    assert (w > -0.5).all() and (w < 1.5).all()
    for fn, limit in ((init.glorot_uniform(gain=2.0), 2 * math.sqrt(6 / 12)),
                      (init.he_uniform(), math.sqrt(3 / 4)),
                      (init.he_uniform("fan_out"), math.sqrt(3 / 8)),
                      (init.lecun_uniform(), math.sqrt(3 / 4))):
        w = _np(fn(k, (8, 4)))
        assert np.abs(w).max() <= limit and np.abs(w).max() > 0.6 * limit
    # The truncated distributions of variance_scaling stay within 2 stds.
    w = _np(init.lecun_normal()(k, (4000, 25)))
    assert np.abs(w).max() <= 2 / _TN / 5 + 1e-6


def test_factory_dtype_is_the_default():
    k = random.key(0)
    assert init.normal(dtype=mx.float16)(k, (2,)).dtype == mx.float16
    assert init.normal(dtype=mx.float16)(k, (2,), mx.float32).dtype == mx.float32
    assert init.he_normal(dtype="bfloat16")(k, (2, 2)).dtype == mx.bfloat16
    assert init.constant(1, dtype=np.float16)(None, (2,)).dtype == mx.float16
    assert init.orthogonal(dtype=mx.float16)(k, (3, 3)).dtype == mx.float16


def test_fans_match_mlx_nn():
    for shape in ((5, 3), (16, 3, 3, 8), (4, 2, 7)):
        assert init.fans(shape) == mnn.init._calculate_fan_in_fan_out(mx.zeros(shape))
    # mlx.nn.init's scales for the same layouts: the bound of glorot_uniform
    # and he_uniform is reached within a few percent on a large sample.
    shape = (64, 3, 3, 32)
    fan_in, fan_out = init.fans(shape)
    w = _np(init.glorot_uniform()(random.key(0), shape))
    assert abs(np.abs(w).max() / math.sqrt(6 / (fan_in + fan_out)) - 1) < 0.01
    w = _np(init.he_normal("fan_out")(random.key(0), shape))
    assert abs(w.std() * math.sqrt(fan_out) - 1) < 0.03


def test_aliases():
    assert init.xavier_uniform is init.glorot_uniform
    assert init.xavier_normal is init.glorot_normal
    assert init.kaiming_uniform is init.he_uniform
    assert init.kaiming_normal is init.he_normal
    for name in init.__all__:
        assert hasattr(init, name), name


def test_constants_ignore_the_key_and_identity():
    assert init.zeros(None, (2, 3)).tolist() == [[0.0] * 3] * 2
    assert init.ones(random.key(0), 2, mx.float16).tolist() == [1.0, 1.0]
    assert init.constant(3.0)(None, ()).item() == 3.0
    _close(init.identity()(None, (3, 3)), np.eye(3))
    with pytest.raises(ValueError, match=r"identity: shape must be square and 2-d, got \(2, 3\)"):
        init.identity()(None, (2, 3))


@pytest.mark.parametrize("shape", [(4, 4), (3, 7), (9, 2), (6, 2, 2, 3), (1, 5)])
def test_orthogonal(shape):
    k = random.key(5)
    w = init.orthogonal(gain=1.5)(k, shape)
    assert w.shape == shape and w.dtype == mx.float32
    m = _np(w).reshape(shape[0], -1).astype(np.float64) / 1.5
    rows, cols = m.shape
    gram = m @ m.T if rows <= cols else m.T @ m
    _close(gram, np.eye(min(rows, cols)), atol=2e-5)
    assert mx.array_equal(w, init.orthogonal(gain=1.5)(k, shape))
    assert not mx.array_equal(w, init.orthogonal(gain=1.5)(random.key(6), shape))


def test_orthogonal_is_sign_corrected():
    # With the signs of diag(R) folded into Q, Q's distribution is uniform
    # (Haar): the diagonal of a 2x2 draw is positive about as often as not.
    diag = [_np(init.orthogonal()(random.key(i), (2, 2)))[0, 0] for i in range(200)]
    assert 60 < sum(d > 0 for d in diag) < 140


def test_vmap_over_keys_and_jit():
    keys = random.split(random.key(7), 4)
    for fn in (init.glorot_uniform(), init.he_normal(), init.lecun_normal(),
               init.truncated_normal(0.1), init.normal(1.0, 2.0)):
        loop = mx.stack([fn(keys[i], (3, 5)) for i in range(4)])
        _close(ft.vmap(lambda k, fn=fn: fn(k, (3, 5)))(keys), loop)
        jitted = ft.jit(lambda k, fn=fn: fn(k, (3, 5)))
        for i in range(2):  # the numbers follow the key argument
            _close(jitted(keys[i]), fn(keys[i], (3, 5)))


def test_errors():
    k = random.key(0)
    with pytest.raises(ValueError, match=r"glorot_uniform: shape must have at least 2 "
                                         r"dimensions .* got \(5,\)"):
        init.glorot_uniform()(k, (5,))
    with pytest.raises(ValueError, match=r"fans: shape must have at least 2 dimensions"):
        init.fans((3,))
    with pytest.raises(ValueError, match=r"orthogonal: shape must have at least 2 dimensions"):
        init.orthogonal()(k, (3,))
    with pytest.raises(ValueError, match=r"he_normal: mode must be 'fan_in' or 'fan_out', "
                                         r"got 'fan_avg'"):
        init.he_normal("fan_avg")
    with pytest.raises(ValueError, match=r"variance_scaling: mode must be one of"):
        init.variance_scaling(1.0, "fan")
    with pytest.raises(ValueError, match=r"variance_scaling: distribution must be one of .* "
                                         r"got 'gauss'"):
        init.variance_scaling(1.0, "fan_in", "gauss")
    with pytest.raises(ValueError, match=r"variance_scaling: scale must not be negative"):
        init.variance_scaling(-1.0)
    with pytest.raises(ValueError, match=r"normal: std must not be negative, got -1"):
        init.normal(std=-1)
    with pytest.raises(ValueError, match=r"uniform: low must not exceed high"):
        init.uniform(1.0, 0.0)
    with pytest.raises(ValueError, match=r"truncated_normal: lower must be below upper"):
        init.truncated_normal(lower=1.0, upper=1.0)
    with pytest.raises(TypeError, match=r"normal: mean must be a real number, got 'a'"):
        init.normal("a")
    with pytest.raises(TypeError, match=r"he_uniform: dtype must be a floating dtype, got "
                                        r"mlx.core.int32"):
        init.he_uniform()(k, (2, 2), mx.int32)
    with pytest.raises(TypeError, match=r"constant: dtype must be a floating dtype"):
        init.constant(1, dtype=int)
    with pytest.raises(TypeError, match=r"glorot_normal: key must be a key array"):
        init.glorot_normal()(None, (2, 2))
    with pytest.raises(TypeError, match=r"uniform: shape must be an int or a sequence of ints"):
        init.uniform()(k, (2, 2.5))
    with pytest.raises(TypeError, match=r"orthogonal: the key must be a concrete array"):
        ft.jit(lambda key: init.orthogonal()(key, (3, 3)))(k)


# Every initialiser, as a factory call (zeros and ones are initialisers themselves).
_EVERY = {
    "constant": "init.constant(0.5)", "zeros": "init.zeros", "ones": "init.ones",
    "identity": "init.identity()", "uniform": "init.uniform()", "normal": "init.normal()",
    "truncated_normal": "init.truncated_normal()",
    "variance_scaling": "init.variance_scaling(1.0)", "glorot_uniform": "init.glorot_uniform()",
    "glorot_normal": "init.glorot_normal()", "xavier_uniform": "init.xavier_uniform()",
    "xavier_normal": "init.xavier_normal()", "he_uniform": "init.he_uniform()",
    "he_normal": "init.he_normal()", "kaiming_uniform": "init.kaiming_uniform()",
    "kaiming_normal": "init.kaiming_normal()", "lecun_uniform": "init.lecun_uniform()",
    "lecun_normal": "init.lecun_normal()", "orthogonal": "init.orthogonal()",
}


def test_every_initialiser_is_covered_below():
    assert set(_EVERY) == set(init.__all__) - {"Initializer", "fans"}


def test_shapes_beyond_memory_are_a_memory_error_naming_the_initialiser():
    # MLX crashes allocating them: a child process survives that. An alias
    # is named as the function it is (xavier_uniform is glorot_uniform).
    cases = ", ".join(f"({getattr(init, name).__name__!r}, {call})"
                      for name, call in _EVERY.items())
    out = run_child(f"""
        import ftorch.nn.init as init, ftorch.random as random
        for name, fn in [{cases}]:
            try:
                mx.eval(fn(random.key(0), (10**6, 10**6)))
                print("made")
            except MemoryError as e:
                said = str(e).startswith(name + ":") and "(1000000, 1000000)" in str(e)
                print("MemoryError" if said else e)
    """)
    assert out.split("\n")[:-1] == ["MemoryError"] * len(_EVERY)
