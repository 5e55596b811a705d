"""Complex numbers through the transforms (JAX's convention, see ``ft.grad``),
the complex primitives (real, imag, conj, complex) and the ftorch.numpy
helpers over them. Reference values were computed with JAX in double
precision, at the points below; ours are complex64."""

import mlx.core as mx
import numpy as np
import pytest

import ftorch as ft
import ftorch.numpy as fnp
import ftorch.primitives as lax

Z = mx.array([0.7 + 0.4j, -0.3 + 1.1j])
Y = mx.array([1.2 - 0.5j, -0.3 + 0.9j])
T = mx.array([0.5 - 0.2j, 0.1 + 0.3j])
CT = mx.array([0.3 + 0.8j, -0.6 + 0.2j])
A = mx.array([[1 + 1j, 0.5 - 2j], [0.3j, -1.0]])

# For each op: its value at Z (and Y), its JVP along T (and T reversed for Y),
# its VJP of CT (of real(CT) for abs), from jax.jvp / jax.vjp.
UNARY_AND_BINARY = {
    'negative': {
        'y': [(-0.7-0.4j), (0.3-1.1j)],
        'jvp': [(-0.5+0.2j), (-0.1-0.3j)],
        'vjp': [(-0.3-0.8j), (0.6-0.2j)],
    },
    'exp': {
        'y': [(1.8547891+0.7841922j), (0.3360323+0.6602227j)],
        'jvp': [(1.084233+0.0211383j), (-0.1644636+0.1668319j)],
        'vjp': [(-0.0709171+1.7190889j), (-0.3336639-0.3289271j)],
    },
    'log': {
        'y': [(-0.2153915+0.5191461j), (0.1311821+1.8370484j)],
        'jvp': [(0.4153846-0.5230769j), (0.2307692-0.1538462j)],
        'vjp': [(0.8153846+0.6769231j), (0.3076923+0.4615385j)],
    },
    'log1p': {
        'y': [(0.5575708+0.2310907j), (0.2653141+1.0040671j)],
        'jvp': [(0.252459-0.1770492j), (0.2352941+0.0588235j)],
        'vjp': [(0.2721311+0.4065574j), (-0.1176471+0.4705882j)],
    },
    'log2': {
        'y': [(-0.3107442+0.7489695j), (0.1892558+2.6503006j)],
        'jvp': [(0.5992733-0.7546405j), (0.3329296-0.2219531j)],
        'vjp': [(1.1763513+0.9765936j), (0.4439062+0.6658592j)],
    },
    'log10': {
        'y': [(-0.0935433+0.2254623j), (0.0569717+0.79782j)],
        'jvp': [(0.1803992-0.2271694j), (0.1002218-0.0668145j)],
        'vjp': [(0.354117+0.293984j), (0.1336291+0.2004436j)],
    },
    'sqrt': {
        'y': [(0.8678208+0.2304623j), (0.6481417+0.8485798j)],
        'jvp': [(0.2405145-0.1791033j), (0.140061+0.048056j)],
        'vjp': [(0.2758012+0.3876817j), (-0.096112+0.2801219j)],
    },
    'square': {
        'y': [(0.33+0.56j), (-1.12-0.66j)],
        'jvp': [(0.86+0.12j), (-0.72+0.04j)],
        'vjp': [(-0.22+1.36j), (-0.08-1.44j)],
    },
    'reciprocal': {
        'y': [(1.0769231-0.6153846j), (-0.2307692-0.8461538j)],
        'jvp': [(-0.1254438+0.8189349j), (0.183432+0.1597633j)],
        'vjp': [(-1.2946746-0.2272189j), (-0.3195266+0.3668639j)],
    },
    'sin': {
        'y': [(0.6964459+0.3141607j), (-0.4930809+1.2759928j)],
        'jvp': [(0.3605021-0.2976769j), (0.0409864+0.5176701j)],
        'vjp': [(0.4597461+0.5820956j), (-1.0353402+0.0819728j)],
    },
    'cos': {
        'y': [(0.8268498-0.2646139j), (1.5939967+0.3947108j)],
        'jvp': [(-0.4110551-0.0177912j), (0.4321059+0.020325j)],
        'vjp': [(0.0423948-0.651405j), (-0.04065+0.8642118j)],
    },
    'tan': {
        'y': [(0.6537405+0.5891633j), (-0.1046944+0.8264238j)],
        'jvp': [(0.6941956+0.1691072j), (0.0847116+0.081091j)],
        'vjp': [(-0.2921769+1.0953065j), (-0.162182+0.1694233j)],
    },
    'arcsin': {
        'y': [(0.6728437+0.4914514j), (-0.2008977+0.9654492j)],
        'jvp': [(0.5759848-0.0186708j), (0.0966141+0.1889536j)],
        'vjp': [(0.0097542+0.9142748j), (-0.3779071+0.1932282j)],
    },
    'arccos': {
        'y': [(0.8979526-0.4914514j), (1.771694-0.9654492j)],
        'jvp': [(-0.5759848+0.0186708j), (-0.0966141-0.1889536j)],
        'vjp': [(-0.0097542-0.9142748j), (0.3779071-0.1932282j)],
    },
    'arctan': {
        'y': [(0.6629088+0.2646517j), (-1.017222+0.9516656j)],
        'jvp': [(0.2655462-0.2621849j), (-0.4666667+0.0666667j)],
        'vjp': [(0.4067227+0.4302521j), (-0.1333333-0.9333333j)],
    },
    'sinh': {
        'y': [(0.6987019+0.4887858j), (-0.1381292+0.9316134j)],
        'jvp': [(0.6371249-0.0835142j), (0.1288334+0.1151094j)],
        'vjp': [(0.110501+1.0134917j), (-0.2302188+0.2576667j)],
    },
    'cosh': {
        'y': [(1.1560872+0.2954064j), (0.4741615-0.2713907j)],
        'jvp': [(0.4471081+0.1046525j), (-0.2932969+0.0517226j)],
        'vjp': [(-0.1814181+0.7055972j), (-0.1034451-0.5865939j)],
    },
    'tanh': {
        'y': [(0.6687379+0.2519156j), (-1.0664855+1.3543468j)],
        'jvp': [(0.2407393-0.2917157j), (-0.6969484+0.7979374j)],
        'vjp': [(0.4544201+0.3919216j), (-1.5958748-1.3938967j)],
    },
    'arcsinh': {
        'y': [(0.6845538+0.327468j), (-0.6499724+1.1256468j)],
        'jvp': [(0.3750295-0.2455829j), (-0.2029834+0.3284341j)],
        'vjp': [(0.3766133+0.6033427j), (-0.6568681-0.4059668j)],
    },
    'arccosh': {
        'y': [(0.4914514+0.8979526j), (0.9654492+1.771694j)],
        'jvp': [(-0.0186708-0.5759848j), (-0.1889536+0.0966141j)],
        'vjp': [(0.9142748-0.0097542j), (-0.1932282-0.3779071j)],
    },
    'arctanh': {
        'y': [(0.625359+0.5791929j), (-0.1335206+0.853162j)],
        'jvp': [(0.5862295+0.1914754j), (0.0831643+0.1156187j)],
        'vjp': [(-0.3239344+0.9232787j), (-0.2312373+0.1663286j)],
    },
    'abs': {
        'y': [0.806226, 1.140175],
        'jvp': [0.334894, 0.263117],
        'vjp': [(0.2604729-0.1488417j), (0.1578704+0.5788583j)],
    },
    'rsqrt': {
        'y': [(1.0763992-0.2858533j), (0.5684579-0.7442537j)],
        'jvp': [(-0.1487982+0.3408893j), (-0.008341+0.129603j)],
        'vjp': [(-0.53559-0.2477795j), (-0.2592059-0.016682j)],
    },
    'add': {
        'y': [(1.9-0.1j), (-0.6+2j)],
        'jvp': [(0.6+0.1j), (0.6+0.1j)],
        'vjp0': [(0.3+0.8j), (-0.6+0.2j)],
        'vjp1': [(0.3+0.8j), (-0.6+0.2j)],
    },
    'subtract': {
        'y': [(-0.5+0.9j), 0.2j],
        'jvp': [(0.4-0.5j), (-0.4+0.5j)],
        'vjp0': [(0.3+0.8j), (-0.6+0.2j)],
        'vjp1': [(-0.3-0.8j), (0.6-0.2j)],
    },
    'multiply': {
        'y': [(1.04+0.13j), (-0.9-0.6j)],
        'jvp': [(0.45-0.24j), (-0.23+0.61j)],
        'vjp0': [(0.76+0.81j), -0.6j],
        'vjp1': [(-0.11+0.68j), (-0.04-0.72j)],
    },
    'divide': {
        'y': [(0.3786982+0.4911243j), (1.2-0.0666667j)],
        'jvp': [(0.5400721-0.0772382j), (0.7355556+0.2955556j)],
        'vjp0': [(-0.0236686+0.6568047j), (0.4+0.5333333j)],
        'vjp1': [(0.331536-0.2371065j), (-0.5155556-0.6133333j)],
    },
    'power': {
        'y': [(0.7455488+0.6681063j), (0.1670352-0.0772235j)],
        'jvp': [(0.6110771-0.5924447j), (0.1723988+0.1526607j)],
        'vjp0': [(0.7115044+1.1815051j), (-0.07411+0.0623337j)],
        'vjp1': [(-0.3467444-0.3330004j), (-0.1576094-0.1452778j)],
    },
    'maximum': {
        'y': [(1.2-0.5j), (-0.3+1.1j)],
        'jvp': [(0.1+0.3j), (0.1+0.3j)],
        'vjp0': [0j, (-0.6+0.2j)],
        'vjp1': [(0.3+0.8j), 0j],
    },
    'minimum': {
        'y': [(0.7+0.4j), (-0.3+0.9j)],
        'jvp': [(0.5-0.2j), (0.5-0.2j)],
        'vjp0': [(0.3+0.8j), 0j],
        'vjp1': [0j, (-0.6+0.2j)],
    },
    'logaddexp': {
        'y': [(1.5761631-0.1677618j), (0.3881388+1j)],
        'jvp': [(0.352373+0.2140369j), (0.2749163+0.0299331j)],
        'vjp0': [(-0.0738092+0.3480121j), (-0.3100335+0.0698996j)],
        'vjp1': [(0.3738092+0.4519879j), (-0.2899665+0.1301004j)],
    },
}

# Gradients of real losses (and holomorphic derivatives), from jax.grad etc.
G_SUM = [(-2.372-0.984j), (0.508-3.596j)]
G_MEAN = [(0.927395+0.392096j), (0.168016+0.330111j)]
G_MATMUL = [(8.666+0.308j), (-7.01-13.43j)]
G_PROD = [(1.1+0.3j), (0.4-0.7j)]
G_CUMSUM = [(2+1j), (2+0j)]
G_ANGLE = [(-0.615385-1.076923j), (-0.846154+0.230769j)]
G_ABS = [(0.868243-0.496139j), (-0.263117-0.964764j)]
HESS_HOLO = [[(4.2+2.4j), 0j], [(-0+0j), (-1.8+6.6j)]]
JAC_HOLO = [[(0.04302+0.988919j), (0.696446+0.314161j)],
            [(-0.493081+1.275993j), (0.957913+0.913896j)]]


def _close(actual, expected, tol=1e-5):
    actual, expected = np.array(actual), np.asarray(expected)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol)


# ----------------------------------------------------------------------------
# The convention
# ----------------------------------------------------------------------------


def test_convention_matches_jax():
    z = mx.array(1 + 2j)
    assert ft.grad(lambda z: fnp.abs(z) ** 2)(z).item() == 2 - 4j  # 2 * conj(z)
    assert ft.grad(fnp.real)(z).item() == 1 + 0j
    assert ft.grad(fnp.imag)(z).item() == -1j
    assert ft.grad(lambda z: fnp.real(z * z))(z).item() == 2 + 4j
    _close(ft.grad(fnp.abs)(z), 0.4472136 - 0.8944272j)
    assert ft.grad(lambda z: z * z, holomorphic=True)(z).item() == 2 + 4j
    _, pullback = ft.vjp(lambda z: z * z, z)
    assert pullback(mx.array(1j))[0].item() == -4 + 2j
    assert ft.vjp(fnp.conj, z)[1](mx.array(1j))[0].item() == -1j
    assert ft.vjp(fnp.imag, z)[1](mx.array(1.0))[0].item() == -1j
    # A real input of a complex function: the real part of the transpose.
    x_ct = ft.vjp(lambda x: x * (1 + 2j), mx.array(3.0))[1](mx.array(1j))[0]
    assert x_ct.dtype == mx.float32 and x_ct.item() == -2.0
    assert ft.jvp(fnp.conj, (z,), (mx.array(1j),))[1].item() == -1j
    _close(ft.jvp(fnp.abs, (z,), (mx.array(1j),))[1], 0.8944272)
    # abs at 0: derivative 0, as JAX.
    assert ft.grad(fnp.abs)(mx.array(0j)).item() == 0j
    assert ft.jvp(fnp.abs, (mx.array(0j),), (mx.array(1j),))[1].item() == 0.0


def test_descent_on_a_complex_parameter():
    # A gradient step along conj(grad) decreases a real loss of z.
    target = mx.array([1 - 1j, 2 + 0.5j])

    def loss(z):
        return fnp.sum(fnp.abs(z - target) ** 2)

    z = mx.zeros(2, mx.complex64)
    for _ in range(50):
        z = z - 0.1 * fnp.conj(ft.grad(loss)(z))
    _close(z, np.array(target), 1e-4)


@pytest.mark.parametrize("name", sorted(UNARY_AND_BINARY))
def test_elementwise_rules_on_complex_match_jax(name):
    ref = UNARY_AND_BINARY[name]
    f = lax.rsqrt if name == "rsqrt" else getattr(fnp, name)
    if "vjp0" in ref:
        y, ty = ft.jvp(f, (Z, Y), (T, T[::-1]))
        cts = ft.vjp(f, Z, Y)[1](CT)
        _close(cts[0], ref["vjp0"], 1e-4)
        _close(cts[1], ref["vjp1"], 1e-4)
    else:
        y, ty = ft.jvp(f, (Z,), (T,))
        ct = CT if y.dtype == mx.complex64 else fnp.real(CT)
        (g,) = ft.vjp(f, Z)[1](ct)
        assert g.dtype == mx.complex64
        _close(g, ref["vjp"], 1e-4)
    _close(y, ref["y"], 1e-4)
    _close(ty, ref["jvp"], 1e-4)


@pytest.mark.parametrize("name,loss,expected", [
    ("sum", lambda z: fnp.abs(fnp.sum(z * z)) ** 2, G_SUM),
    ("mean", lambda z: fnp.real(fnp.mean(fnp.exp(z))), G_MEAN),
    ("matmul", lambda z: fnp.sum(fnp.abs(A @ z) ** 2), G_MATMUL),
    ("prod", lambda z: fnp.imag(fnp.prod(z)), G_PROD),
    ("cumsum", lambda z: fnp.sum(fnp.real(fnp.cumsum(z) * mx.array([1j, 2.0]))), G_CUMSUM),
    ("angle", lambda z: fnp.sum(fnp.angle(z)), G_ANGLE),
    ("abs", lambda z: fnp.sum(fnp.abs(z)), G_ABS),
])
def test_gradients_of_real_losses_match_jax(name, loss, expected):
    _close(ft.grad(loss)(Z), expected, 1e-4)
    _close(ft.jit(ft.grad(loss))(Z), expected, 1e-4)


def test_holomorphic_jacobians_and_hessian():
    def f(z):
        return fnp.sin(z) * z[::-1]

    _close(ft.jacfwd(f, holomorphic=True)(Z), JAC_HOLO, 1e-4)
    _close(ft.jacrev(f, holomorphic=True)(Z), JAC_HOLO, 1e-4)
    _close(ft.hessian(lambda z: fnp.sum(z ** 3), holomorphic=True)(Z), HESS_HOLO, 1e-4)
    value, g = ft.value_and_grad(lambda z: fnp.sum(z ** 2), holomorphic=True)(Z)
    _close(g, 2 * np.array(Z), 1e-6)
    # jacrev of a real output of complex inputs: rows of grad.
    _close(ft.jacrev(lambda z: fnp.abs(z) ** 2)(Z), np.diag(2 * np.conj(np.array(Z))), 1e-6)


def test_transform_errors():
    with pytest.raises(TypeError, match="grad requires real-valued outputs.*holomorphic=True"):
        ft.grad(lambda z: z * z)(mx.array(1j))
    with pytest.raises(TypeError, match="grad with holomorphic=True requires complex inputs"):
        ft.grad(lambda x: x * x, holomorphic=True)(mx.array(1.0))
    with pytest.raises(TypeError, match="grad with holomorphic=True requires complex outputs"):
        ft.grad(fnp.abs, holomorphic=True)(mx.array(1j))
    with pytest.raises(TypeError, match="jacfwd requires real floating-point inputs.*ft.jvp"):
        ft.jacfwd(fnp.abs)(Z)
    with pytest.raises(TypeError, match="jacfwd with holomorphic=True requires complex outputs"):
        ft.jacfwd(fnp.abs, holomorphic=True)(Z)
    with pytest.raises(TypeError, match="jacrev requires real-valued outputs"):
        ft.jacrev(lambda z: z * z)(Z)
    with pytest.raises(TypeError, match="jacrev with holomorphic=True requires complex inputs"):
        ft.jacrev(fnp.sin, holomorphic=True)(mx.ones(2))
    with pytest.raises(TypeError, match="requires floating-point inputs.*int32"):
        ft.grad(lambda i: fnp.sum(i * 1.0))(mx.array([1, 2]))
    # Tangents and cotangents must be complex64 for complex primals.
    with pytest.raises(TypeError, match="expected mlx.core.complex64"):
        ft.jvp(fnp.sin, (Z,), (mx.ones(2),))


@pytest.mark.parametrize("name,args", [
    ("expm1", (Z,)), ("erf", (Z,)), ("erfinv", (Z,)), ("floor", (Z,)), ("ceil", (Z,)),
    ("arctan2", (Z, Y)), ("remainder", (Z, Y)),
])
def test_ops_mlx_refuses_on_complex(name, args):
    # MLX refuses these when building the op (not later at evaluation).
    with pytest.raises(ValueError, match="[Nn]ot supported|not supported"):
        getattr(fnp, name)(*args)
    with pytest.raises(ValueError, match="[Nn]ot supported|not supported"):
        ft.grad(lambda *a: fnp.sum(fnp.abs(getattr(fnp, name)(*a))))(*args)


# ----------------------------------------------------------------------------
# The complex primitives and the ftorch.numpy helpers
# ----------------------------------------------------------------------------


def test_complex_primitive():
    out = lax.complex(mx.array([1.0, float("inf"), 0.0]), mx.array([2.0, 3.0, float("inf")]))
    assert out.dtype == mx.complex64
    assert out.tolist() == [1 + 2j, complex(float("inf"), 3), complex(0, float("inf"))]
    assert lax.complex(mx.array([1.0, 2.0], mx.float16), 3.0).tolist() == [1 + 3j, 2 + 3j]
    g_re, g_im = ft.grad(lambda a, b: fnp.abs(lax.complex(a, b)) ** 2, argnums=(0, 1))(
        mx.array(3.0), mx.array(4.0))
    assert (g_re.item(), g_im.item()) == (6.0, 8.0)
    with pytest.raises(TypeError, match="complex: re must be a real floating.*complex128"):
        lax.complex(mx.array(1.0, mx.float64), mx.array(1.0))
    with pytest.raises(TypeError, match="complex: im must be a real floating"):
        lax.complex(mx.array(1.0), mx.array(1))


def test_strict_wrappers_want_complex():
    for f in (lax.real, lax.imag, lax.conj):
        with pytest.raises(TypeError, match="expected a complex64 array"):
            f(mx.array([1.0]))


def test_numpy_helpers():
    x = mx.array([1.0, -2.0])
    assert fnp.real(x) is x and fnp.conj(x) is x and fnp.conjugate(x) is x
    assert fnp.imag(x).tolist() == [0.0, 0.0]
    assert fnp.real(Z).dtype == mx.float32
    _close(fnp.angle(mx.array([1j, -1.0, 1 + 1j])), [np.pi / 2, np.pi, np.pi / 4])
    _close(fnp.angle(mx.array([-3, 2])), [np.pi, 0.0])
    assert fnp.angle(mx.array(1j), deg=True).item() == pytest.approx(90.0)
    assert fnp.iscomplexobj(Z) and not fnp.iscomplexobj(x)
    assert fnp.isrealobj(x) and not fnp.isrealobj(Z)
    assert fnp.iscomplex(mx.array([1 + 0j, 1j])).tolist() == [False, True]
    assert fnp.isreal(mx.array([1 + 0j, 1j])).tolist() == [True, False]
    assert fnp.isreal(x).tolist() == [True, True]
    # Real gradients through the helpers on real inputs.
    assert ft.grad(lambda x: fnp.sum(fnp.real(x) * fnp.conj(x)))(x).tolist() == [2.0, -4.0]


def test_tracer_attributes():
    z = mx.array(1 + 2j)
    assert ft.grad(lambda z: (z * z.conj()).real)(z).item() == 2 - 4j
    assert ft.grad(lambda z: z.imag)(z).item() == -1j
    assert ft.grad(lambda z: fnp.real(z.conjugate()))(z).item() == 1 + 0j


def test_casts_between_real_and_complex():
    x = mx.array([1.0, 2.0])
    # real -> complex -> real: the identity, derivative 1.
    assert ft.grad(lambda x: fnp.sum(fnp.astype(fnp.astype(x, mx.complex64) * 1j * -1j,
                                                mx.float32)))(x).tolist() == [1.0, 1.0]
    # complex -> real keeps the real part: its transpose is ct + 0j.
    assert ft.grad(lambda z: fnp.sum(fnp.astype(z, mx.float32)))(Z).tolist() == [1 + 0j] * 2
    # jvp of a cast to complex carries the tangent.
    assert ft.jvp(lambda x: fnp.astype(x, mx.complex64), (x,), (mx.ones(2),))[1].tolist() == \
        [1 + 0j, 1 + 0j]


@pytest.mark.parametrize("f", [fnp.real, fnp.imag, fnp.conj, fnp.angle, fnp.abs,
                               lambda z: lax.complex(fnp.imag(z), fnp.real(z))])
def test_vmap_and_jit(f):
    zs = mx.array(np.array([[1 + 2j, -0.5j], [3.0 + 0j, 2 - 1j], [0.1 + 0.1j, -1 - 1j]],
                           dtype=np.complex64))
    expected = np.stack([np.array(f(zs[i])) for i in range(3)])
    _close(ft.vmap(f)(zs), expected, 1e-6)
    _close(ft.vmap(f, in_axes=1, out_axes=1)(zs.T), expected.T, 1e-6)
    _close(ft.jit(f)(zs), expected, 1e-6)
