"""Rule cases for the quantized primitives (quantize, dequantize,
quantized_matmul). The weights are drawn as floats and quantized by MLX
(float32 in, as its kernel needs); the scales and biases are then float64,
so the derivative checks with respect to them (and to the activations) run
at the usual tolerances. The packed integers and the 8-bit scales of the
floating-point modes are integer operands: no derivative, unbatched."""

import mlx.core as mx
import numpy as np
from harness import Case, floats
from hypothesis import strategies as st

import ftorch.numpy as fnp

# (mode, group_size, bits) drawn from; every mode MLX has.
_SETTINGS = [("affine", 32, 2), ("affine", 32, 4), ("affine", 64, 8), ("affine", 32, 3),
             ("mxfp4", 32, 4), ("mxfp8", 32, 8), ("nvfp4", 16, 4)]


def _packed(w: np.ndarray, mode: str, group_size: int, bits: int) -> tuple:
    """MLX's quantization of ``w`` as NumPy arrays: floating scales and
    biases in float64, integer parts as they are."""
    parts = mx.quantize(mx.array(w, dtype=mx.float32), group_size, bits, mode=mode)
    return tuple(np.array(p) if p.dtype in (mx.uint32, mx.uint8) else
                 np.array(p.astype(mx.float32)).astype(np.float64) for p in parts)


def _weight(settings, transpose=True):
    """A drawn weight quantized with ``settings``: its packed parts and its
    unpacked shape (rows of the result when ``transpose``)."""
    mode, group_size, bits = settings
    # (MLX's nvfp4 kernel needs whole blocks of 32 values: a group pair.)
    cols = st.integers(1, 2).map(lambda k: max(group_size, 32) * k)
    rows = st.integers(1, 3) if transpose else cols
    return st.tuples(rows, cols).flatmap(
        lambda rc: floats(rc, -2.0, 2.0).map(lambda w: (_packed(w, *settings), rc)))


def _matmul_args(settings, transpose):
    def with_x(packed_shape):
        packed, (rows, cols) = packed_shape
        inner = cols if transpose else rows
        x = st.sampled_from([(inner,), (2, inner), (2, 1, inner)]).flatmap(floats)
        return x.map(lambda x: (x, *packed))
    return _weight(settings, transpose).flatmap(with_x)


def _qmm_case(settings, transpose=True):
    mode, group_size, bits = settings
    kw = dict(transpose=transpose, group_size=group_size, bits=bits, mode=mode)

    def mlx_fn(x, w, *quant):
        quant = [q.astype(mx.float32) if q.dtype == mx.float64 else q for q in quant]
        return mx.quantized_matmul(x, w, *quant, **kw)

    # MLX has no JVP with respect to affine scales and biases: tests/test_quantized.py
    # checks them against its VJP instead.
    return Case("quantized_matmul", lambda x, w, *quant: fnp.quantized_matmul(x, w, *quant, **kw),
                _matmul_args(settings, transpose), mlx_fn=None if mode == "affine" else mlx_fn,
                rtol=1e-4, atol=1e-5,
                name=f"quantized_matmul_{mode}{bits}" + ("" if transpose else "_nt"))


def _dequantize_case(settings):
    mode, group_size, bits = settings
    kw = dict(group_size=group_size, bits=bits, mode=mode)
    return Case("dequantize", lambda w, *quant: fnp.dequantize(w, *quant, dtype=mx.float64, **kw),
                _weight(settings).map(lambda a: a[0]), name=f"dequantize_{mode}{bits}")


def _quantize_case(settings):
    mode, group_size, bits = settings
    kw = dict(group_size=group_size, bits=bits, mode=mode)

    def fn(w):  # the quantized parts, beside a differentiable output
        return (*fnp.quantize(fnp.astype(w, mx.float32), **kw), w * 2.0)

    return Case("quantize", fn, _weight(settings).map(lambda a: (_unpacked(a[1]),)), fd=False,
                second_order=False, name=f"quantize_{mode}{bits}")


def _unpacked(shape):
    return np.linspace(-1.0, 1.0, shape[0] * shape[1]).reshape(shape)


CASES = [
    *[_quantize_case(s) for s in [("affine", 32, 4), ("mxfp8", 32, 8)]],
    *[_dequantize_case(s) for s in [("affine", 32, 4), ("affine", 64, 3), ("nvfp4", 16, 4)]],
    *[_qmm_case(s) for s in [("affine", 32, 4), ("affine", 32, 3), ("mxfp4", 32, 4),
                             ("mxfp8", 32, 8), ("nvfp4", 16, 4)]],
    _qmm_case(("affine", 64, 8), transpose=False),
]
