"""Values, gradients, batching and argument errors of ftorch.numpy.fft and the
``fft`` primitive under it.

Values are checked against numpy.fft (in double precision: ours is complex64).
Gradients are checked against central finite differences in float32 (every
loss here is at most quadratic in its input, so central differences are exact
but for rounding, and a large step keeps that rounding small) and against
values computed with JAX (``jax.numpy.fft``, double precision) stored below.
"""

import mlx.core as mx
import numpy as np
import pytest

import ftorch as ft
import ftorch.numpy as fnp
from ftorch.primitives.fourier import fft as lax_fft

RNG = np.random.default_rng(0)

# ----------------------------------------------------------------------------
# Reference values from JAX (jax.numpy.fft with jax_enable_x64), for the
# inputs below.
# ----------------------------------------------------------------------------

X6 = np.array([0.5, -1.2, 0.3, 2.0, -0.7, 0.1])
X5 = X6[:5]
Z6 = np.array([0.4 + 0.1j, -0.5 + 0.9j, 1.1 - 0.3j, 0.2 + 0.2j, -0.8 - 0.6j, 0.3 + 0.7j])
Z23 = Z6.reshape(2, 3)
H = np.array([1.0, 0.5 - 0.2j, 0.25 + 0.1j, 0.0])
YT = np.array([0.2, 0.1, -0.3, 0.5, 0.0, -0.1])
W = np.array([[1.0, 2.0, 0.5], [0.3, 1.5, 0.8]])
CT6 = np.array([0.3 + 0.8j, -0.6 + 0.2j, 0.1 - 0.4j, 0.9 + 0.0j, -0.2 - 0.5j, 0.4 + 0.3j])

# grad of sum(|rfft(x)|**2) at X6
GRAD_POWER6 = np.array([3.2, -5.4, 2., 13.8, -4., 2.4])
# grad of sum(|rfft(x, n=8, norm="ortho")|**2 * arange(5)) at X5
GRAD_POWER5_ORTHO_N8 = np.array([1.381371, -2.63033, -0.432843, 4.618198, -3.281371])
# grad of sum((irfft(rfft(x) * H, n=6) - YT)**2) at X6
GRAD_FILTER = np.array([-0.051835, -0.200972, 0.485047, 0.540404, 0.166788, 0.260568])
# grad of sum(|fft2(z, norm="ortho")|**2 * W) at Z23
GRAD_COMPLEX_FFT2 = np.array([[1.015214 - 1.333504j, -1.845231 - 1.43568j, 1.920017 + 1.649184j],
                              [0.281517 - 1.588098j, -1.434833 + 1.545167j, 1.463316 - 0.837069j]])
# grad of sum(real(ifft(z, n=8)) * arange(8)) + sum(imag(ifft(z))**2) at Z6
GRAD_COMPLEX_IFFT_PHASE = np.array([3.5 - 0.033333j, -0.633333 - 1.473773j, -0.183333 - 0.35j,
                                    -0.5 - 0.273773j, -0.816667 + 0.15j, -0.366667 - 0.05956j])
VJP_FFT = np.array([0.9 + 0.4j, -0.65 + 2.106218j, 1.176795 + 2.125833j, -0.5 - 0.6j,
                    1.523205 - 0.125833j, -0.65 + 0.893782j])  # fft(z) at Z6, ct CT6
VJP_IFFT_FORWARD = np.array([0.9 + 0.4j, -0.65 + 0.893782j, 1.523205 - 0.125833j, -0.5 - 0.6j,
                             1.176795 + 2.125833j, -0.65 + 2.106218j])
VJP_RFFT_N7 = np.array([0.7, -1.140823, 1.273096, 1.102171, 0.303152, 0.536017])
VJP_IRFFT_N5 = np.array([0.1, 0.027639 - 0.150049j, 0.072361 + 0.327849j])
VJP_IRFFT_N6 = np.array([0.066667, -0.05 - 0.028868j, 0.283333 + 0.144338j, -0.1])
VJP_HFFT = np.array([0.4, -0.3 + 0.173205j, 1.7 - 0.866025j, -0.6])
VJP_IHFFT = np.array([0.116667, -0.129466, 0.155064, 0.016667, 0.328269, -0.187201])
VJP_IRFFT2 = np.array([[0.5, -1. - 1.j, -0.5], [-2., 0., 0.]])
VJP_RFFTN = np.array([[0.9, 1.176795, 1.523205], [-1.3, 0.962436, -1.462436]])
JVP_IRFFT_N5 = np.array([-0.14, -0.028564, 0.067333, 0.465717, -0.064486])
JVP_FFTN = np.array([[0.4 + 0.5j, 2. + 1.1j], [-1.083013 + 0.643782j, 0.783013 - 0.602628j],
                     [-0.216987 + 1.856218j, -0.083013 + 1.302628j]])


def _c(a):
    return mx.array(np.asarray(a).astype(np.complex64))


def _r(a):
    return mx.array(np.asarray(a).astype(np.float32))


def _close(actual, expected, tol=1e-5):
    actual, expected = np.array(actual), np.asarray(expected)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    scale = max(1.0, float(np.max(np.abs(expected))) if expected.size else 1.0)
    np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol * scale)


# ----------------------------------------------------------------------------
# Values against numpy.fft
# ----------------------------------------------------------------------------

X = RNG.standard_normal((3, 4, 5))
Z = RNG.standard_normal((3, 4, 5)) + 1j * RNG.standard_normal((3, 4, 5))

VALUE_CASES = [
    ("fft", Z, {}), ("fft", Z, {"n": 7}), ("fft", Z, {"n": 3, "axis": 1}),
    ("fft", X, {"norm": "ortho"}), ("fft", Z, {"axis": 0, "norm": "forward"}),
    ("ifft", Z, {}), ("ifft", Z, {"n": 6, "axis": 0, "norm": "forward"}),
    ("ifft", Z, {"n": 2, "norm": "ortho"}),
    ("rfft", X, {}), ("rfft", X, {"n": 8, "axis": 0, "norm": "ortho"}), ("rfft", X, {"n": 3}),
    ("rfft", X, {"norm": "forward", "axis": 1}),
    ("irfft", Z, {}), ("irfft", Z, {"n": 9}), ("irfft", Z, {"n": 4, "axis": 1, "norm": "forward"}),
    ("irfft", Z, {"n": 1}), ("irfft", Z, {"norm": "ortho", "axis": 0}),
    ("hfft", Z, {}), ("hfft", Z, {"n": 7, "norm": "ortho"}), ("hfft", Z, {"norm": "forward"}),
    ("ihfft", X, {}), ("ihfft", X, {"n": 6, "norm": "forward"}), ("ihfft", X, {"norm": "ortho"}),
    ("fft2", Z, {}), ("fft2", Z, {"s": (3, 6), "axes": (0, 2)}), ("ifft2", Z, {"norm": "ortho"}),
    ("ifft2", Z, {"s": (2, 2)}),
    ("rfft2", X, {}), ("rfft2", X, {"axes": (2, 0)}), ("rfft2", X, {"s": (5, 4)}),
    ("irfft2", Z, {}), ("irfft2", Z, {"s": (5, 5)}), ("irfft2", Z, {"axes": (0, 1)}),
    ("fftn", Z, {}), ("fftn", Z, {"s": (2, 3), "axes": (1, 2)}), ("fftn", Z, {"axes": (2, 0)}),
    ("ifftn", Z, {"axes": (1,)}), ("ifftn", Z, {"norm": "forward"}),
    ("rfftn", X, {"s": (4, 4, 4)}), ("rfftn", X, {"axes": (-1, 0)}), ("rfftn", X, {}),
    ("irfftn", Z, {"s": (3, 4, 7), "norm": "ortho"}), ("irfftn", Z, {"axes": (0, 1)}),
    ("irfftn", Z, {}),
]


@pytest.mark.filterwarnings("ignore:`axes` should not be `None`:DeprecationWarning")
@pytest.mark.parametrize("name,a,kwargs", VALUE_CASES,
                         ids=[f"{n}-{k}" for n, _, k in VALUE_CASES])
def test_matches_numpy(name, a, kwargs):
    got = getattr(fnp.fft, name)(_c(a) if np.iscomplexobj(a) else _r(a), **kwargs)
    expected = getattr(np.fft, name)(a, **kwargs)
    assert got.dtype == (mx.complex64 if np.iscomplexobj(expected) else mx.float32)
    _close(got, expected, 1e-4)


@pytest.mark.parametrize("n", [1, 2, 3, 6, 7])
def test_one_dimensional_lengths(n):
    x = RNG.standard_normal(n)
    _close(fnp.fft.rfft(_r(x)), np.fft.rfft(x), 1e-5)
    _close(fnp.fft.irfft(fnp.fft.rfft(_r(x)), n=n), x, 1e-5)
    _close(fnp.fft.ifft(fnp.fft.fft(_r(x))), x, 1e-5)


def test_input_dtypes():
    # Integers and booleans become float32 / complex64, as in jax.numpy.
    assert fnp.fft.fft(mx.array([1, 2, 3])).dtype == mx.complex64
    assert fnp.fft.rfft(mx.array([True, False])).tolist() == [1 + 0j, 1 + 0j]
    _close(fnp.fft.rfft(mx.array([1.0, 2.0], dtype=mx.float16)), [3, -1])
    # A real input to irfft is taken as complex with zero imaginary part.
    _close(fnp.fft.irfft(mx.array([2.0, 0.0, 0.0])), [0.5, 0.5, 0.5, 0.5])
    # A Python list or NumPy array is accepted.
    _close(fnp.fft.fft(np.array([1.0, 1.0])), [2, 0])


def test_frequencies_and_shifts():
    for n in (1, 2, 5, 6):
        for d in (1.0, 0.1):
            _close(fnp.fft.fftfreq(n, d), np.fft.fftfreq(n, d), 1e-6)
            _close(fnp.fft.rfftfreq(n, d), np.fft.rfftfreq(n, d), 1e-6)
    assert fnp.fft.fftfreq(4).dtype == mx.float32
    assert fnp.fft.fftfreq(4, dtype=mx.float16).dtype == mx.float16
    for axes in (None, 0, (1, 2), -1, ()):
        _close(fnp.fft.fftshift(_r(X), axes), np.fft.fftshift(X, axes))
        _close(fnp.fft.ifftshift(_r(X), axes), np.fft.ifftshift(X, axes))
    _close(fnp.fft.ifftshift(fnp.fft.fftshift(_c(Z), (0, 2)), (0, 2)), Z)


def test_primitive_directly():
    z = RNG.standard_normal((2, 3, 4)) + 1j * RNG.standard_normal((2, 3, 4))
    _close(lax_fft(_c(z), "fft", (3, 4)), np.fft.fftn(z, axes=(1, 2)), 1e-4)
    _close(lax_fft(_c(z), "ifft", (4,)), np.fft.ifft(z), 1e-4)
    _close(lax_fft(_r(z.real), "rfft", (2, 3, 4)), np.fft.rfftn(z.real), 1e-4)
    _close(lax_fft(_c(z[..., :3]), "irfft", (3, 5)),
           np.fft.irfftn(z[..., :3], s=(3, 5), axes=(1, 2)), 1e-4)
    # Empty batches: empty results of the right shape.
    assert lax_fft(mx.zeros((0, 4), mx.complex64), "fft", (4,)).shape == (0, 4)
    assert lax_fft(mx.zeros((0, 3), mx.complex64), "irfft", (4,)).shape == (0, 4)
    assert fnp.fft.rfft(mx.zeros((2, 0, 6)), axis=-1).shape == (2, 0, 4)


# ----------------------------------------------------------------------------
# Gradients: against finite differences (float32) and stored JAX values
# ----------------------------------------------------------------------------


def _fd_grad(loss, x, eps=0.5):
    """Central differences of a real ``loss`` at the real or complex ``x``,
    as ``dL/dre - 1j dL/dim`` for complex ``x`` (ftorch's and JAX's grad)."""
    x = np.asarray(x)
    g = np.zeros(x.shape, dtype=x.dtype)
    make = _c if np.iscomplexobj(x) else _r
    directions = [1.0, 1j] if np.iscomplexobj(x) else [1.0]
    for idx in np.ndindex(x.shape):
        for d in directions:
            e = np.zeros(x.shape, dtype=x.dtype)
            e[idx] = eps * d
            diff = (loss(make(x + e)).item() - loss(make(x - e)).item()) / (2 * eps)
            g[idx] += diff if d == 1.0 else -1j * diff
    return g


LOSSES = [
    ("power6", lambda x: fnp.sum(fnp.abs(fnp.fft.rfft(x)) ** 2), X6, GRAD_POWER6),
    ("power5_ortho_n8",
     lambda x: fnp.sum(fnp.abs(fnp.fft.rfft(x, n=8, norm="ortho")) ** 2 * mx.arange(5.0)),
     X5, GRAD_POWER5_ORTHO_N8),
    ("filter",
     lambda x: fnp.sum((fnp.fft.irfft(fnp.fft.rfft(x) * _c(H), n=6) - _r(YT)) ** 2),
     X6, GRAD_FILTER),
    ("complex_fft2",
     lambda z: fnp.sum(fnp.abs(fnp.fft.fft2(z, norm="ortho")) ** 2 * _r(W)),
     Z23, GRAD_COMPLEX_FFT2),
    ("complex_ifft",
     lambda z: fnp.sum(fnp.real(fnp.fft.ifft(z, n=8)) * mx.arange(8.0))
     + fnp.sum(fnp.imag(fnp.fft.ifft(z)) ** 2),
     Z6, GRAD_COMPLEX_IFFT_PHASE),
]


@pytest.mark.parametrize("name,loss,x,expected", LOSSES, ids=[c[0] for c in LOSSES])
def test_gradients_of_real_losses(name, loss, x, expected):
    make = _c if np.iscomplexobj(x) else _r
    g = ft.grad(loss)(make(x))
    assert g.dtype == (mx.complex64 if np.iscomplexobj(x) else mx.float32)
    _close(g, expected, 1e-5)
    _close(g, _fd_grad(loss, x), 1e-4)
    # Compiled, and through value_and_grad, the same.
    _close(ft.jit(ft.grad(loss))(make(x)), expected, 1e-5)


def test_gradient_finite_differences_larger_inputs():
    x = RNG.standard_normal((3, 8))
    spectrum_weights = _r(RNG.uniform(0.5, 2.0, (4, 5)))

    def loss(x):
        s = fnp.fft.rfft2(x, s=(4, 8), norm="ortho")
        return fnp.sum(fnp.abs(s) ** 2 * spectrum_weights) + fnp.sum(fnp.real(s))

    _close(ft.grad(loss)(_r(x)), _fd_grad(loss, x), 1e-4)


def test_checks_can_fail(monkeypatch):
    # With a wrong rule (irfft's transpose without its bin weights), the
    # comparisons above fail.
    import ftorch.primitives.fourier as fft_module

    monkeypatch.setattr(fft_module, "_irfft_weights", lambda n: mx.ones((n // 2 + 1,)))
    _, loss, x, expected = LOSSES[2]
    wrong = ft.grad(loss)(_r(x))
    with pytest.raises(AssertionError):
        _close(wrong, expected, 1e-5)
    with pytest.raises(AssertionError):
        _close(wrong, _fd_grad(loss, x), 1e-4)


VJPS = [
    ("fft", fnp.fft.fft, _c(Z6), _c(CT6), VJP_FFT),
    ("ifft_forward", lambda z: fnp.fft.ifft(z, norm="forward"), _c(Z6), _c(CT6), VJP_IFFT_FORWARD),
    ("rfft_n7", lambda x: fnp.fft.rfft(x, n=7), _r(X6), _c(CT6[:4]), VJP_RFFT_N7),
    ("irfft_n5", lambda z: fnp.fft.irfft(z, n=5), _c(Z6[:3]), _r(YT[:5]), VJP_IRFFT_N5),
    ("irfft_n6", fnp.fft.irfft, _c(Z6[:4]), _r(YT), VJP_IRFFT_N6),
    ("hfft", lambda z: fnp.fft.hfft(z, n=6), _c(Z6[:4]), _r(YT), VJP_HFFT),
    ("ihfft", fnp.fft.ihfft, _r(X6), _c(CT6[:4]), VJP_IHFFT),
    ("irfft2", lambda z: fnp.fft.irfft2(z, s=(2, 4)), _c(Z23), _r(np.arange(8.0).reshape(2, 4) - 3),
     VJP_IRFFT2),
    ("rfftn_axes", lambda x: fnp.fft.rfftn(x, axes=(1, 0)), _r(X6.reshape(2, 3)),
     _c(CT6.reshape(2, 3)), VJP_RFFTN),
]


@pytest.mark.parametrize("name,f,x,ct,expected", VJPS, ids=[c[0] for c in VJPS])
def test_vjp_matches_jax(name, f, x, ct, expected):
    _, pullback = ft.vjp(f, x)
    (g,) = pullback(ct)
    assert g.dtype == x.dtype and g.shape == x.shape
    _close(g, expected, 1e-5)


def test_jvp_matches_jax():
    _, t = ft.jvp(lambda z: fnp.fft.irfft(z, n=5), (_c(Z6[:3]),), (_c(CT6[:3]),))
    assert t.dtype == mx.float32
    _close(t, JVP_IRFFT_N5, 1e-5)
    _, t = ft.jvp(lambda z: fnp.fft.fftn(z, s=(3, 2)), (_c(Z23),), (_c(CT6.reshape(2, 3)),))
    _close(t, JVP_FFTN, 1e-5)


def test_linearity_and_second_order():
    # Hessian-vector products of a quadratic spectral loss are constant.
    x = _r(X6)

    def loss(x):
        return fnp.sum(fnp.abs(fnp.fft.rfft(x)) ** 2)

    # sum |rfft(x)|^2 = x^T A x with A = (N/2)(I + J) + ..., computed by jacfwd(grad).
    h = ft.hessian(loss)(x)
    h_fd = np.stack([_fd_grad(loss, X6 + e) - _fd_grad(loss, X6) for e in np.eye(6)])
    _close(h, h_fd, 1e-3)


# ----------------------------------------------------------------------------
# vmap and jit of every public function
# ----------------------------------------------------------------------------

TRANSFORMS = [
    ("fft", lambda a: fnp.fft.fft(a, n=5), True),
    ("ifft", lambda a: fnp.fft.ifft(a, axis=0, norm="ortho"), True),
    ("rfft", lambda a: fnp.fft.rfft(a, n=6), False),
    ("irfft", lambda a: fnp.fft.irfft(a, n=7), True),
    ("hfft", lambda a: fnp.fft.hfft(a), True),
    ("ihfft", lambda a: fnp.fft.ihfft(a, norm="forward"), False),
    ("fft2", fnp.fft.fft2, True),
    ("ifft2", lambda a: fnp.fft.ifft2(a, s=(2, 3)), True),
    ("rfft2", fnp.fft.rfft2, False),
    ("irfft2", lambda a: fnp.fft.irfft2(a, s=(3, 4)), True),
    ("fftn", lambda a: fnp.fft.fftn(a, axes=(1, 0)), True),
    ("ifftn", fnp.fft.ifftn, True),
    ("rfftn", lambda a: fnp.fft.rfftn(a, axes=(0, 1)), False),
    ("irfftn", lambda a: fnp.fft.irfftn(a, s=(3, 4)), True),
    ("fftshift", fnp.fft.fftshift, False),
    ("ifftshift", lambda a: fnp.fft.ifftshift(a, axes=0), True),
]


@pytest.mark.parametrize("name,f,complex_input", TRANSFORMS, ids=[c[0] for c in TRANSFORMS])
@pytest.mark.parametrize("in_axis", [0, 1, 2])
def test_vmap_matches_loop(name, f, complex_input, in_axis):
    batch = RNG.standard_normal((4, 3, 4)) + (1j * RNG.standard_normal((4, 3, 4))
                                              if complex_input else 0)
    batch = np.moveaxis(batch, 0, in_axis)
    arr = _c(batch) if complex_input else _r(batch)
    got = ft.vmap(f, in_axes=in_axis)(arr)
    expected = np.stack([np.array(f(arr[(slice(None),) * in_axis + (i,)])) for i in range(4)])
    _close(got, expected, 1e-6)


@pytest.mark.parametrize("name,f,complex_input", TRANSFORMS, ids=[c[0] for c in TRANSFORMS])
def test_jit_matches_eager(name, f, complex_input):
    a = RNG.standard_normal((3, 4)) + (1j * RNG.standard_normal((3, 4)) if complex_input else 0)
    arr = _c(a) if complex_input else _r(a)
    _close(ft.jit(f)(arr), f(arr), 1e-6)


def test_grad_of_vmap_and_vmap_of_grad():
    xs = _r(RNG.standard_normal((3, 6)))

    def loss(x):
        return fnp.sum(fnp.abs(fnp.fft.rfft(x, n=8)) ** 2 * mx.arange(5.0))

    per_example = ft.vmap(ft.grad(loss))(xs)
    expected = np.stack([np.array(ft.grad(loss)(xs[i])) for i in range(3)])
    _close(per_example, expected, 1e-6)
    _close(ft.grad(lambda xs: fnp.sum(ft.vmap(loss)(xs)))(xs), expected, 1e-6)


def test_frequencies_under_jit():
    _close(ft.jit(lambda x: x * fnp.fft.fftfreq(4))(mx.ones(4)), np.fft.fftfreq(4))


# ----------------------------------------------------------------------------
# Errors
# ----------------------------------------------------------------------------


def test_errors():
    x = mx.ones((2, 4))
    with pytest.raises(ValueError, match="fft: norm must be one of"):
        fnp.fft.fft(x, norm="bad")
    with pytest.raises(ValueError, match="ihfft: norm must be one of"):
        fnp.fft.ihfft(x, norm="Ortho")
    with pytest.raises(ValueError, match="rfft: axis 2 is out of range"):
        fnp.fft.rfft(x, axis=2)
    with pytest.raises(ValueError, match="fftn: repeated axis"):
        fnp.fft.fftn(x, axes=(0, -2))
    with pytest.raises(ValueError, match="fft: invalid transform length 0 along axis 1"):
        fnp.fft.fft(x, n=0)
    with pytest.raises(ValueError, match="irfft: invalid transform length -2"):
        fnp.fft.irfft(x, n=-2)
    with pytest.raises(ValueError, match="irfft: invalid transform length 0.*give n"):
        fnp.fft.irfft(mx.ones((3, 1)))
    with pytest.raises(ValueError, match="fftn: s=.* and axes=.* must have the same length"):
        fnp.fft.fftn(x, s=(2,), axes=(0, 1))
    with pytest.raises(ValueError, match="fftn: s=.* has more entries"):
        fnp.fft.fftn(x, s=(2, 2, 2))
    with pytest.raises(TypeError, match="fft: axis must be an int"):
        fnp.fft.fft(x, axis=(0, 1))
    with pytest.raises(ValueError, match="fft2: axes must be a pair"):
        fnp.fft.fft2(x, axes=(0,))
    with pytest.raises(TypeError, match="rfft: a must be real"):
        fnp.fft.rfft(mx.array([1j]))
    with pytest.raises(TypeError, match="fft: a has dtype float64.*complex128"):
        fnp.fft.fft(mx.ones(2, dtype=mx.float64))
    with pytest.raises(ValueError, match="fft: axis -1 is out of range for an array of ndim 0"):
        fnp.fft.fft(mx.array(1.0))
    with pytest.raises(ValueError, match="fftn: no axes to transform"):
        fnp.fft.fftn(mx.array(1.0))
    with pytest.raises(ValueError, match="fftfreq: n must be >= 1"):
        fnp.fft.fftfreq(0)
    with pytest.raises(TypeError, match="rfftfreq: dtype must be a floating dtype"):
        fnp.fft.rfftfreq(4, dtype=mx.int32)
    with pytest.raises(ValueError, match="fftshift: repeated axis"):
        fnp.fft.fftshift(x, axes=(1, 1))


def test_primitive_errors():
    z = mx.ones((2, 4), mx.complex64)
    with pytest.raises(ValueError, match="fft_type must be one of"):
        lax_fft(z, "dct", (4,))
    with pytest.raises(ValueError, match="fft_lengths must be a non-empty tuple of positive"):
        lax_fft(z, "fft", (0,))
    with pytest.raises(ValueError, match="needs trailing axes"):
        lax_fft(z, "fft", (3,))
    with pytest.raises(ValueError, match=r"'irfft' of lengths \(4,\) needs trailing axes \(3,\)"):
        lax_fft(z, "irfft", (4,))
    with pytest.raises(ValueError, match="more axes than x"):
        lax_fft(z, "fft", (1, 2, 4))
    with pytest.raises(TypeError, match="'rfft' needs a float32 x"):
        lax_fft(z, "rfft", (4,))
    with pytest.raises(TypeError, match="'fft' needs a complex64 x"):
        lax_fft(mx.ones((4,)), "fft", (4,))
