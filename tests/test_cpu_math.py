"""The float32 approximations jit lowers ``tanh``, ``sigmoid``, ``erf`` and
``gelu`` to in fused CPU kernels (``ftorch.backend.cpu_math``; its ``exp``
is ``sigmoid``'s), and when it does.

Accuracy: a strided sweep over every finite float32 (one bit pattern in 997,
both signs), dense runs near 0, at the clamp bounds and in the tails, against
a float64 reference, in float32 ulps of the exact result. The bounds are the
worst cases of an exhaustive sweep (all 2^32 patterns, documented in the
module). Cost note: each approximation is g++-compiled once (cached in
/tmp/mlx), as in tests/test_jit.py.
"""

import math

import mlx.core as mx
import numpy as np
import pytest

import ftorch as ft
import ftorch.backend.cpu_math as cm
import ftorch.nn.functional as F
import ftorch.numpy as fnp
from ftorch.backend.lowering import lower

# The approximations are the CPU's lowering: on the GPU, jit keeps MLX's own.
pytestmark = pytest.mark.cpu_only("fast CPU math is lowered for the CPU device only")

# Worst errors in ulps over all finite float32 inputs (exhaustive sweep).
BOUNDS = {"tanh": 5.9, "exp": 1.4, "sigmoid": 3.2, "erf": 6.4}


def _sigmoid64(x):
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


REFERENCE = {"tanh": np.tanh, "exp": np.exp, "sigmoid": _sigmoid64,
             "erf": np.frompyfunc(math.erf, 1, 1)}
ODD = {"tanh", "erf"}  # exactly odd: the positive half covers them

# Where each function turns: its clamp, where it rounds to 0 or 1 or overflows.
EDGES = {"tanh": [8.097614288330078, 7.90531110763549805, 0.0004, 9.01],
         "exp": [88.7228391, -87.336544, -103.972, 0.34657359],
         "sigmoid": [-88.7228391, -87.336544, -16.64, 16.64],
         "erf": [3.700066566467285, 3.832506856900711, 0.9, 1e-4]}


def _ulps(y: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """|y - ref| in float32 ulps of ``ref`` (float64); 0 where both are the
    same infinity or both NaN."""
    ref = ref.astype(np.float64)
    _, e = np.frexp(np.abs(ref))
    ulp = np.ldexp(1.0, np.maximum(e - 24, -149))
    with np.errstate(invalid="ignore", over="ignore"):
        err = np.abs(y.astype(np.float64) - ref) / ulp
        same = (y == ref.astype(np.float32)) | (np.isnan(y) & np.isnan(ref))
    return np.where(same, 0.0, err)


def _sample(name: str) -> np.ndarray:
    bits = np.arange(0, 0x7F800000, 997, dtype=np.uint32)
    x = bits.view(np.float32)
    dense = [np.arange(0, 1 << 16, dtype=np.uint32).view(np.float32)]  # 0 and subnormals
    for edge in EDGES[name]:
        at = np.array([abs(edge)], np.float32).view(np.uint32)[0]
        run = np.arange(at - (1 << 15), at + (1 << 15), dtype=np.uint32).view(np.float32)
        dense.append(run * np.float32(np.sign(edge) or 1))
    x = np.concatenate([x, -x] + dense) if name not in ODD else np.concatenate([x] + dense)
    return x


@pytest.mark.parametrize("name", sorted(BOUNDS))
def test_worst_error_over_float32(name):
    x = _sample(name)
    y = np.array(mx.compile(getattr(cm, name))(mx.array(x)))
    with np.errstate(over="ignore"):
        ref = REFERENCE[name](x.astype(np.float64)).astype(np.float64)
    if name == "sigmoid":  # 0 below -88.72, where the exact result is subnormal
        keep = x >= -88.7228
        x, y, ref = x[keep], y[keep], ref[keep]
    err = _ulps(y, ref)
    worst = int(np.argmax(err))
    assert err[worst] <= BOUNDS[name], f"{name}({x[worst]!r}) = {y[worst]!r}, exact {ref[worst]!r}"


def test_sigmoid_far_negative_tail():
    """log-probabilities need sigmoid's relative accuracy for x << 0, where
    0.5 + 0.5 * tanh(x / 2) cancels to nothing."""
    x = np.linspace(-87.3, -20.0, 200_001, dtype=np.float32)
    y = np.array(mx.compile(cm.sigmoid)(mx.array(x))).astype(np.float64)
    ref = _sigmoid64(x.astype(np.float64))
    assert np.max(np.abs(y - ref) / ref) < 4e-7
    naive = np.array(mx.compile(lambda v: 0.5 + 0.5 * cm.tanh(v / 2))(mx.array(x)))
    assert np.max(np.abs(naive - ref) / ref) > 0.5  # the formula it does not use
    below = np.array(mx.compile(cm.sigmoid)(mx.array([-88.8, -1000.0])))
    assert below.tolist() == [0.0, 0.0]


SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, -1e-40, 3e38, -3e38],
                   np.float32)


@pytest.mark.parametrize("name", sorted(BOUNDS))
def test_special_values(name):
    y = np.array(mx.compile(getattr(cm, name))(mx.array(SPECIAL)))
    with np.errstate(over="ignore"):
        ref = REFERENCE[name](SPECIAL.astype(np.float64)).astype(np.float64)
    assert np.array_equal(np.isnan(y), np.isnan(ref))
    assert _ulps(y, ref).max() <= BOUNDS[name]
    if name in ODD:  # the sign of zero is kept
        assert np.signbit(y[:2]).tolist() == [False, True]
        assert y[2:4].tolist() == [1.0, -1.0]


def test_outputs_stay_in_range():
    for name in ("tanh", "erf"):
        y = mx.compile(getattr(cm, name))(mx.array(_sample(name)))
        assert mx.abs(y).max().item() <= 1.0
    s = mx.compile(cm.sigmoid)(mx.array(_sample("sigmoid")))
    assert 0.0 <= s.min().item() and s.max().item() <= 1.0


# ----------------------------------------------------------------------------
# When jit uses them
# ----------------------------------------------------------------------------

X = mx.array(np.random.default_rng(0).normal(0, 3, 4096).astype(np.float32))
OPS = [("tanh", fnp.tanh, mx.tanh), ("sigmoid", F.sigmoid, mx.sigmoid),
       ("erf", fnp.erf, mx.erf)]


@pytest.fixture
def fast_cpu_math():
    """Restore ft.config.fast_cpu_math after the test."""
    before = ft.config.fast_cpu_math
    yield
    ft.config.fast_cpu_math = before


@pytest.mark.parametrize("name,op,mlx_op", OPS, ids=[o[0] for o in OPS])
def test_jit_uses_them_and_the_switch_turns_them_off(name, op, mlx_op, fast_cpu_math):
    ft.config.fast_cpu_math = True
    f = ft.jit(op)
    on = f(X)
    assert mx.array_equal(on, mx.compile(getattr(cm, name))(X)).item()
    assert not mx.array_equal(on, mlx_op(X)).item()
    with np.errstate(over="ignore"):
        ref = REFERENCE[name](np.array(X, np.float64)).astype(np.float64)
    assert _ulps(np.array(on), ref).max() <= BOUNDS[name]
    ft.config.fast_cpu_math = False  # a new trace, with MLX's op
    assert mx.array_equal(f(X), mlx_op(X)).item()
    assert f.trace_count == 2
    ft.config.fast_cpu_math = True  # the first trace again, from the cache
    assert mx.array_equal(f(X), on).item()
    assert f.trace_count == 2
    assert mx.array_equal(op(X), mlx_op(X)).item()  # eager: MLX's op


def test_retrace_reason_is_logged(fast_cpu_math, caplog):
    f = ft.jit(fnp.tanh)
    f(X)
    ft.config.fast_cpu_math = False
    ft.config.log_compiles = True
    try:
        with caplog.at_level("WARNING", logger="ftorch.jit"):
            f(X)
    finally:
        ft.config.log_compiles = False
    assert "fast_cpu_math changed: True -> False" in caplog.text


def test_general_path_follows_the_switch(fast_cpu_math):
    """Calls that do not take the mx.compile fast path (NumPy arguments, under
    grad) lower through jit_p's impl, keyed the same way."""
    xs = np.array(X)
    f = ft.jit(fnp.tanh)
    assert mx.array_equal(f(xs), mx.compile(cm.tanh)(X)).item()
    ft.config.fast_cpu_math = False
    assert mx.array_equal(f(xs), mx.tanh(X)).item()


@pytest.mark.parametrize("dtype", [mx.float16, mx.bfloat16])
def test_other_dtypes_keep_mlx_kernels(dtype):
    x = X.astype(dtype)
    for _, op, mlx_op in OPS:
        assert mx.array_equal(ft.jit(op)(x), mx.compile(mlx_op)(x)).item()


def test_lowering_run_op_by_op_uses_them_too():
    """jit's uncompiled tier runs the lowered graph op by op: the same
    approximations as the compiled kernels, to the bit."""
    graph = ft.make_graph(fnp.tanh)(X)
    eager = lower(graph)(X)[0]
    assert mx.array_equal(eager, mx.compile(lower(graph))(X)[0]).item()
    assert mx.array_equal(eager, mx.compile(cm.tanh)(X)).item()
    assert not mx.array_equal(eager, mx.tanh(X)).item()


def test_other_devices_keep_mlx_kernels(monkeypatch):
    """Metal and CUDA keep MLX's kernels (simulated: the device is read when
    the graph is lowered)."""
    monkeypatch.setattr(cm.mx, "default_device", lambda: mx.Device(mx.gpu))
    assert mx.array_equal(ft.jit(fnp.tanh)(X), mx.tanh(X)).item()


def test_derivatives_under_jit():
    """The rules are the primitive's (1 - y^2 for tanh, from the fast y):
    grad and jvp under jit agree with eager to the approximation's accuracy."""
    def loss(x):
        return fnp.sum(fnp.tanh(x) * F.sigmoid(x) + fnp.exp(-x * x) + fnp.erf(x))

    x = X[:512]
    for transform in (ft.grad(loss), lambda x: ft.jvp(loss, (x,), (fnp.ones_like(x),))[1]):
        np.testing.assert_allclose(np.array(ft.jit(transform)(x)), np.array(transform(x)),
                                   rtol=2e-5, atol=1e-6)
    np.testing.assert_allclose(np.array(ft.grad(lambda x: fnp.sum(ft.jit(fnp.tanh)(x)))(x)),
                               np.array(1 - mx.tanh(x) ** 2), rtol=1e-5, atol=2e-6)


@pytest.mark.parametrize("approximate", [False, True])
def test_gelu_and_silu_under_jit(approximate):
    x = X[:1024]
    np.testing.assert_allclose(np.array(ft.jit(lambda x: F.gelu(x, approximate))(x)),
                               np.array(F.gelu(x, approximate)), rtol=2e-6, atol=2e-6)
    np.testing.assert_allclose(np.array(ft.jit(F.silu)(x)), np.array(F.silu(x)),
                               rtol=2e-6, atol=2e-6)


def test_exp_keeps_mlx_kernel():
    """exp_p is not lowered to cpu_math.exp (no gain measured on a workload:
    see the module's docstring)."""
    assert mx.array_equal(ft.jit(fnp.exp)(X), mx.exp(X)).item()
