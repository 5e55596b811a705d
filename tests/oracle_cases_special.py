"""Oracle cases for the incomplete gamma and beta functions, the exponential integrals,
the Hurwitz zeta function and the rest of ``jax.scipy.special`` and its ``jax.lax``
primitives, on drawn arguments inside each function's domain (float32, as JAX runs).

Where JAX differentiates only some arguments (``betainc`` in ``x``, ``igamma_grad_a`` and
``random_gamma_grad`` not at all), the others are drawn as Python floats, which are not
differentiated. SciPy-checked accuracy beyond JAX's (tails, large parameters) is in
tests/test_special_functions.py.
"""

import numpy as np
from hypothesis import strategies as st
from oracle import Oracle, arrays


def _positive(d, lo, hi, shape=(3,)):
    return d(arrays(shape, lo=lo, hi=hi))


def _pair(lo_a, hi_a, lo_x, hi_x):
    """``(a, x)`` of shape (3,), in the given ranges."""
    return lambda d: ((_positive(d, lo_a, hi_a), _positive(d, lo_x, hi_x)), {})


def _scalar(d, lo, hi):
    return float(np.float32(d(st.floats(lo, hi))))


def _special(name, args, **kw):
    return Oracle(f"jax.scipy.special.{name}", args, **kw)


def _lax(name, args, **kw):
    return Oracle(f"jax.lax.{name}", args, **kw)


def _harmonic(d):
    """``(n, m, theta, phi)`` with ``0 <= n <= 6`` and ``|m| <= n``."""
    n = d(arrays((3,), "int32", lo=0, hi=6))
    fraction = d(arrays((3,), lo=-1.0, hi=1.0))
    m = np.round(fraction * n).astype(np.int32)
    return (n, m, d(arrays((3,), lo=0.0, hi=3.1)), d(arrays((3,), lo=0.0, hi=6.2))), {}


def _unary(name, lo, hi, **kw):
    return _special(name, lambda d: ((d(arrays(lo=lo, hi=hi)),), {}), **kw)


INCOMPLETE = [
    *[_special(n, _pair(0.2, 8.0, 0.05, 12.0), rtol=2e-4, atol=1e-5, id="small")
      for n in ["gammainc", "gammaincc"]],
    # Around the transition x ~ a at larger a (Temme's expansion here).
    *[_special(n, lambda d: ((a := _positive(d, 20.0, 60.0),
                              (a * d(arrays((3,), lo=0.8, hi=1.2))).astype(np.float32)), {}),
               rtol=1e-3, atol=1e-5, id="temme") for n in ["gammainc", "gammaincc"]],
    *[_lax(n, _pair(0.2, 8.0, 0.05, 12.0), rtol=2e-4, atol=1e-5) for n in ["igamma", "igammac"]],
    _lax("igamma_grad_a", lambda d: ((_scalar(d, 0.3, 8.0), _positive(d, 0.1, 10.0)), {}),
         grad=False, rtol=1e-3, atol=1e-5),
    # (JAX's random_gamma_grad takes arrays only.)
    _lax("random_gamma_grad", _pair(0.3, 8.0, 0.1, 10.0), grad=False, rtol=1e-3, atol=1e-5),
    _special("betainc", lambda d: ((_scalar(d, 0.3, 6.0), _scalar(d, 0.3, 6.0),
                                    _positive(d, 0.02, 0.98)), {}), rtol=1e-3, atol=1e-5),
    _lax("betainc", lambda d: ((_scalar(d, 0.3, 6.0), _scalar(d, 0.3, 6.0),
                                _positive(d, 0.02, 0.98)), {}), rtol=1e-3, atol=1e-5),
]

GAMMA = [
    _unary("loggamma", 0.1, 8.0, rtol=1e-4),
    _unary("factorial", 0.0, 8.0, rtol=1e-4),
    _special("factorial", lambda d: ((d(arrays((3,), "int32", lo=-2, hi=8)),), {}),
             grad=False, rtol=1e-4, id="int"),
    _special("comb", lambda d: ((_positive(d, 3.0, 10.0), _positive(d, 0.0, 3.0)), {}),
             rtol=1e-4, atol=1e-4),
    _special("comb", lambda d: ((d(arrays((3,), "int32", lo=0, hi=8)),
                                 d(arrays((3,), "int32", lo=-1, hi=9))),
                                {"repetition": d(st.booleans())}),
             grad=False, rtol=1e-4, atol=1e-4, id="int"),
    _special("poch", _pair(0.3, 5.0, -0.2, 3.0), rtol=1e-4, atol=1e-4),
    _special("bernoulli", lambda d: ((d(st.integers(0, 24)),), {}), grad=False, rtol=1e-5),
]

def _lmbda(d):
    """A Box-Cox exponent at least 0.05 from 0, where JAX's derivative in it is 0 (the
    limit is ``log(x)^2 / 2``; docs/hooks.py lists the difference)."""
    lmbda = d(arrays((3,), lo=0.05, hi=2.0))
    return (lmbda * d(st.sampled_from([-1, 1]))).astype(np.float32)


TRANSFORMS = [
    _special("boxcox", lambda d: ((_positive(d, 0.1, 4.0), _lmbda(d)), {}),
             rtol=1e-4, atol=1e-5),
    _special("boxcox1p", lambda d: ((_positive(d, -0.9, 3.0), _lmbda(d)), {}),
             rtol=1e-4, atol=1e-5),
]

INTEGRALS = [
    _unary("erfcx", -3.0, 8.0, rtol=1e-4),
    _unary("exp1", 0.05, 20.0, rtol=1e-4, atol=1e-6),
    _special("expi", lambda d: (((d(arrays(lo=0.6, hi=20.0)) * d(st.sampled_from([-1, 1])))
                                  .astype(np.float32),), {}), rtol=1e-4, atol=1e-6),
    _special("zeta", lambda d: ((_positive(d, 1.2, 8.0), _positive(d, 0.3, 5.0)), {}),
             rtol=1e-4, atol=1e-5),
    _lax("zeta", lambda d: ((_positive(d, 1.2, 8.0), _positive(d, 0.3, 5.0)), {}),
         grad=False, rtol=1e-4, atol=1e-5),
    _special("hyp1f1", lambda d: ((_positive(d, 0.2, 3.0), _positive(d, 0.5, 3.0),
                                   d(arrays((3,), lo=-3.0, hi=3.0))), {}),
             rtol=1e-4, atol=1e-4),
]

MORE = [
    _unary("dawsn", -8.0, 8.0, rtol=1e-4, atol=1e-6),
    # JAX's derivative of spence is NaN on about (1, 3) (docs/hooks.py): values only there.
    _unary("spence", 0.02, 1.0, rtol=1e-4, atol=1e-5),
    _unary("spence", 0.02, 8.0, rtol=1e-4, atol=1e-5, grad=False, id="values"),
    # (JAX's derivative at n = 0 is NaN: docs/hooks.py.)
    _special("expn", lambda d: ((d(arrays((3,), "int32", lo=1, hi=6)), _positive(d, 0.05, 8.0)),
                                {}), rtol=1e-4, atol=1e-6),
    _special("expn", lambda d: ((d(arrays((3,), "int32", lo=0, hi=6)), _positive(d, 0.05, 8.0)),
                                {}), grad=False, rtol=1e-4, atol=1e-6, id="n0"),
    # JAX's bessel_jn is NaN below |z| ~ 4 and its derivative is not J_k' (docs/hooks.py):
    # values above 5 only; tests/test_special_functions.py checks the rest against SciPy.
    _special("bessel_jn", lambda d: ((d(arrays(lo=5.0, hi=25.0)),),
                                     {"v": d(st.integers(0, 4))}), grad=False,
             rtol=1e-4, atol=2e-6),
    _special("owens_t", lambda d: ((d(arrays((3,), lo=-4.0, hi=4.0)),
                                    d(arrays((3,), lo=-4.0, hi=4.0))), {}),
             rtol=1e-4, atol=1e-6),
    _lax("erf_inv", lambda d: ((d(arrays(lo=-0.9, hi=0.9)),), {}), rtol=1e-4, atol=1e-5),
    # Both branches (series and continued fraction) and both signs; Ci is -inf at 0, kept away.
    _unary("sici", 0.05, 12.0, rtol=1e-4, atol=1e-5),
    _unary("sici", -12.0, -0.05, rtol=1e-4, atol=1e-5, id="negative"),
    _unary("fresnel", -4.0, 4.0, rtol=1e-4, atol=1e-5),
    # Both sides of 0 (Pfaff's transformation below); JAX's values outside [-1, 1] differ.
    # Values in all four arguments; derivatives in x only (JAX's in a, b, c are 0).
    _special("hyp2f1", lambda d: ((_positive(d, 0.2, 2.0), _positive(d, -1.5, 2.0),
                                   _positive(d, 0.5, 3.0), d(arrays((3,), lo=-1.0, hi=0.8))),
                                  {}), grad=False, rtol=2e-4, atol=1e-5),
    _special("hyp2f1", lambda d: ((d(st.floats(0.2, 2.0)), d(st.floats(-1.5, 2.0)),
                                   d(st.floats(0.5, 3.0)), d(arrays((3,), lo=-1.0, hi=0.8))),
                                  {}), rtol=1e-3, atol=1e-4, id="x-derivative"),
    _special("sph_harm_y", lambda d: _harmonic(d), grad=False, rtol=1e-4, atol=1e-5),
]

ORACLE = [*INCOMPLETE, *GAMMA, *TRANSFORMS, *INTEGRALS, *MORE]

UNCHECKED = {}
