"""Float32 approximations of ``tanh``, ``exp``, ``sigmoid``, ``erf`` and
``gelu`` written in MLX's arithmetic ops, for the CPU kernels that
``mx.compile`` fuses: ``ftorch.backend.lowering`` emits them for the
``tanh``, ``sigmoid``, ``erf`` and ``gelu`` primitives when it lowers a graph
for the CPU (the table ``LOWERINGS``, where ``applies``).

``exp`` is here as ``sigmoid``'s building block; ``exp_p`` keeps MLX's. It is
15 ops deep, past the 11 at which MLX ends a fused kernel, so in a graph it
spans two kernels: alone 2.3x faster than MLX's, a softmax 2.1x, an attention
block 1.1x, the benchmark transformer's step not measurably (0.817 against
0.819 of MLX's math), for four more kernels to build (1.5 s of its 16 s first
call). ``"exp": exp`` in ``LOWERINGS`` turns it on.

Why: MLX's fused CPU kernels are C++ built with ``g++ -O3`` and no ``-march``,
so no FMA. There ``mx.tanh`` is a call per element into the C library, and
MLX's ``exp`` (which its ``sigmoid`` and ``erf`` use too) makes six
``std::fma`` calls (library calls, without ``-mfma``) and a ``std::floor``
call per element. The functions here are a clamp, a few
dozen multiplies and adds and one divide, which the compiler keeps in
registers; inside a fused kernel (1M float32 elements, 2-core x86_64) they
run 4.2-4.7x (``tanh``), 2.2-2.4x (``exp``), 2.2-3x (``sigmoid``) and
3.9-4.8x (``erf``) faster than MLX's. Outside a fused kernel each op is
its own kernel and they are slower than MLX's, so eager execution keeps
MLX's ops. jit's uncompiled tier (a signature's runs before
``compile_after``) runs the same lowering as its compiled tier, op by op, so
that a signature's results do not change when it compiles; there a tanh
RNN's step costs about 1.8x what it does with MLX's ops (``rnn``: 71 against
40 ms; ``rnn_scan`` 1.4x), a GELU transformer's 0.9x (see
``ft.config.fast_cpu_math``).

Accuracy: the worst error over every finite float32 input (an exhaustive
sweep against float64 NumPy/SciPy; ``tests/test_cpu_math.py`` checks a strided
sample of each), in float32 ulps of the exact result:

============  ============================  ===================================
function      here                          MLX's own (the same sweep, strided)
============  ============================  ===================================
``tanh``      5.9                           2.2
``exp``       1.4                           inf from 88.0; 0 below -88
``sigmoid``   3.2 (x >= -88.72; 0 below)    63 in the negative tail; 0 below -88
``erf``       6.4                           2^24 near 0 (0 below about 1e-8)
============  ============================  ===================================

``exp`` and ``sigmoid`` give subnormal results where the exact ones are
(MLX's flush them to 0 from -88), and ``sigmoid`` keeps its relative error
in the far negative tail, where ``0.5 + 0.5 * tanh(x / 2)`` would lose it all
(it is ``1 / (1 + exp(-x))``, with no subtraction from 1). Signed zeros, the
infinities and NaN are as in MLX: ``tanh(-0.0) = -0.0``, ``tanh(inf) = 1``,
``exp(-inf) = 0``, ``erf(-inf) = -1``, NaN in gives NaN out.

Each is one clamp and one polynomial or rational function, not piecewise: a
select keeps a whole fused kernel scalar (with g++'s default
``-ftrapping-math`` it does not vectorise one), and MLX ends a fused kernel
11 ops deep, so a shallow expression (Estrin's scheme) stays in one kernel.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import mlx.core as mx

from ftorch.config import config

__all__ = ["tanh", "exp", "sigmoid", "erf", "gelu", "LOWERINGS", "applies"]

# ----------------------------------------------------------------------------
# The approximations (float32 MLX arrays in and out)
# ----------------------------------------------------------------------------

# tanh: Eigen's and XLA's rational approximation, x * P(x^2) / Q(x^2) with P
# of degree 6 (an odd numerator of degree 13) and Q of degree 3, on x clamped
# to the last point where this evaluation of it is exactly 1 before it first
# exceeds 1 (Eigen's 7.90531 is that point for its Horner form).
_TANH_CLAMP = 8.097614288330078
_TANH_P = (4.89352455891786e-03, 6.37261928875436e-04, 1.48572235717979e-05,
           5.12229709037114e-08, -8.60467152213735e-11, 2.00018790482477e-13,
           -2.76076847742355e-16)
_TANH_Q = (4.89352518554385e-03, 2.26843463243900e-03, 1.18534705686654e-04,
           1.19825839466702e-06)


def tanh(x: mx.array) -> mx.array:
    """``tanh`` of a float32 array in MLX's arithmetic ops, for fused CPU
    kernels: at most 5.9 ulps from the exact value over all finite float32
    inputs (MLX's ``tanh``: 2.2); exactly ±1 from ±8.0976 on and never beyond;
    ``-0.0`` for ``-0.0``; NaN stays NaN.

    >>> import ftorch.backend.cpu_math as cm, mlx.core as mx
    >>> [round(v, 6) for v in cm.tanh(mx.array([-0.5, 0.0, 20.0])).tolist()]
    [-0.462117, 0.0, 1.0]
    """
    xc = mx.clip(x, -_TANH_CLAMP, _TANH_CLAMP)
    z = xc * xc
    z2 = z * z
    p, q = _TANH_P, _TANH_Q
    # Estrin's scheme: a shallow expression, so MLX fuses it into one kernel
    # (its fusion stops 11 ops deep) and the CPU overlaps the products.
    num = ((p[0] + p[1] * z) + z2 * (p[2] + p[3] * z)
           + (z2 * z2) * ((p[4] + p[5] * z) + z2 * p[6]))
    den = (q[0] + q[1] * z) + z2 * (q[2] + q[3] * z)
    # x * (P / Q), not (x * P) / Q: the quotient is about 1 near 0, so tiny
    # and subnormal x come back within an ulp, with their sign.
    return xc * (num / den)


# exp: Cody and Waite's reduction x = n ln2 + r, |r| <= ln2 / 2, then e^r by
# Cephes' polynomial for expf, and 2^n built from integer shifts (MLX has no
# ldexp, and no bitcast inside a fused kernel).
_LOG2E = 1.4426950408889634
_LN2_HI, _LN2_LO = 0.693359375, -2.12194440e-4  # ln 2 = HI + LO; n * HI is exact
_ROUND = 12582912.0  # 1.5 * 2^23: (y + _ROUND) - _ROUND rounds y to an integer
_EXP_P = (5.0000001201e-1, 1.6666665459e-1, 4.1665795894e-2, 8.3334519073e-3,
          1.3981999507e-3, 1.9875691500e-4)
_EXP_LO, _EXP_HI = -104.0, 88.75  # exp underflows to 0 below, overflows above


def _pow2(n: mx.array) -> tuple[mx.array, mx.array]:
    """``(b, a)`` with ``b * a * a == 2^n`` exactly, for int32 ``n`` in
    [-150, 128]; each factor a normal float32, so multiplying a value by
    ``b``, then ``a``, then ``a`` rounds once, at the end."""
    u = n + 150  # in [0, 278]: 2^n = 2^(16 (q - 9)) * 2^(r - 6)
    q = mx.right_shift(u, 4)
    r = u - mx.left_shift(q, 4)
    one = mx.array(1, mx.int32)
    a = mx.left_shift(one, q).astype(mx.float32) * 2.0 ** -9  # 2^(q - 9)
    a2 = a * a
    a4 = a2 * a2
    b = mx.left_shift(one, r).astype(mx.float32) * 2.0 ** -6  # 2^(r - 6)
    return b, a4 * a4  # 2^(8 (q - 9)), applied twice


def exp(x: mx.array) -> mx.array:
    """``exp`` of a float32 array in MLX's arithmetic ops, for fused CPU
    kernels: at most 1.4 ulps from the exact value over all finite float32
    inputs, subnormal results included, ``inf`` from 88.7228 (MLX's ``exp``
    gives ``inf`` from 88.0 and 0 below -88).

    >>> import ftorch.backend.cpu_math as cm, mlx.core as mx
    >>> cm.exp(mx.array([0.0, -float("inf"), 100.0])).tolist()
    [1.0, 0.0, inf]
    """
    xc = mx.clip(x, _EXP_LO, _EXP_HI)
    n = (xc * _LOG2E + _ROUND) - _ROUND
    r = (xc - n * _LN2_HI) - n * _LN2_LO
    r2 = r * r
    c = _EXP_P
    poly = (c[0] + c[1] * r) + r2 * (c[2] + c[3] * r) + (r2 * r2) * (c[4] + c[5] * r)
    er = (1.0 + r) + r2 * poly  # e^r
    # NaN keeps to the float path (er is NaN): the integer path gets 0.
    b, a = _pow2(mx.where(n == n, n, 0.0).astype(mx.int32))
    return ((er * b) * a) * a


def sigmoid(x: mx.array) -> mx.array:
    """The logistic function of a float32 array as ``1 / (1 + exp(-x))`` with
    ``exp`` above, for fused CPU kernels: at most 3.2 ulps from the exact
    value for every float32 input down to -88.72 (subnormal results from
    -87.34), so the far negative tail keeps its relative accuracy, which
    ``0.5 + 0.5 * tanh(x / 2)`` would lose (MLX's: 63 ulps there); 0 below
    -88.72, as MLX's is below -88.

    >>> import ftorch.backend.cpu_math as cm, mlx.core as mx
    >>> cm.sigmoid(mx.array([0.0, 1000.0, -1000.0])).tolist()
    [0.5, 1.0, 0.0]
    """
    return 1.0 / (1.0 + exp(-x))


# erf: Eigen's and XLA's rational approximation, x * P(x^2) / Q(x^2) with P
# of degree 4 and Q of degree 6, on x clamped to where it first reaches 1 in
# float32 (beyond, it wobbles an ulp either side of 1 up to XLA's 3.8325).
_ERF_CLAMP = 3.700066566467285
_ERF_P = (1.128379143519084, 0.18520832239976145, 0.050955695062380861,
          0.0034082910107109506, 0.00022905065861350646)
_ERF_Q = (1.0, 0.49746925110067538, 0.11098505178285362, 0.014070470171167667,
          0.0010179625278914885, 0.000023547966471313185, -1.1791602954361697e-7)


def erf(x: mx.array) -> mx.array:
    """``erf`` of a float32 array in MLX's arithmetic ops, for fused CPU
    kernels: at most 6.4 ulps from the exact value over all finite float32
    inputs (MLX's ``erf`` loses all relative accuracy near 0), exactly ±1
    beyond ±3.70007, never beyond.

    >>> import ftorch.backend.cpu_math as cm, mlx.core as mx
    >>> [round(v, 6) for v in cm.erf(mx.array([-0.5, 0.0, 9.0])).tolist()]
    [-0.5205, 0.0, 1.0]
    """
    xc = mx.clip(x, -_ERF_CLAMP, _ERF_CLAMP)
    z = xc * xc
    z2 = z * z
    z4 = z2 * z2
    p, q = _ERF_P, _ERF_Q
    num = (p[0] + p[1] * z) + z2 * (p[2] + p[3] * z) + z4 * p[4]
    den = ((q[0] + q[1] * z) + z2 * (q[2] + q[3] * z)
           + z4 * ((q[4] + q[5] * z) + z2 * q[6]))
    return xc * (num / den)


# ----------------------------------------------------------------------------
# The lowering rules that use them
# ----------------------------------------------------------------------------

_INV_SQRT2 = 1.0 / math.sqrt(2.0)
_GELU_TANH_SCALE = math.sqrt(2.0 / math.pi)
_GELU_TANH_CUBIC = 0.044715


def gelu(x: mx.array, approximate: bool) -> mx.array:
    """The Gaussian error linear unit of a float32 array with ``erf`` above
    (its tanh form with ``tanh`` above), for fused CPU kernels; ``x * x * x``
    rather than ``x ** 3``, a call to ``pow`` per element there.

    >>> import ftorch.backend.cpu_math as cm, mlx.core as mx
    >>> [round(v, 5) for v in cm.gelu(mx.array([-1.0, 0.0, 2.0]), False).tolist()]
    [-0.15866, 0.0, 1.9545]
    """
    if approximate:
        inner = _GELU_TANH_SCALE * (x + _GELU_TANH_CUBIC * (x * x * x))
        return 0.5 * x * (1 + tanh(inner))
    return x * (1 + erf(x * _INV_SQRT2)) / 2


#: What ``ftorch.backend.lowering`` emits for these primitives (by name) in
#: place of their own lowering where ``applies``: float32 operands on the CPU
#: while ``ft.config.fast_cpu_math`` is on. ``exp`` is left out (see the module);
#: ``"exp": exp`` here would turn it on.
LOWERINGS: dict[str, Callable] = {"tanh": tanh, "sigmoid": sigmoid, "erf": erf, "gelu": gelu}


def applies(x: Any) -> bool:
    """Whether ``LOWERINGS`` replaces a primitive's own lowering for operand
    ``x`` now: a float32 array on the CPU with ``ft.config.fast_cpu_math``
    on (not on Metal and CUDA, nor for other dtypes). The choice is made
    when the graph is lowered, the same whether ``mx.compile`` traces the
    lowering (jit's compiled tier) or it runs op by op (the uncompiled
    tier), so both give the same bits.

    >>> import ftorch.backend.cpu_math as cm, mlx.core as mx
    >>> cm.applies(mx.ones(2)) == (mx.default_device() == mx.cpu)
    True
    >>> cm.applies(mx.ones(2, mx.float16))
    False
    """
    return (config.fast_cpu_math and type(x) is mx.array and x.dtype == mx.float32
            and mx.default_device() == mx.cpu)
