"""NumPy float64 transcriptions of the published update rules of the named
optimizers, written from the papers' and optax's documented formulas (not
from ftorch's code), for tests/test_optim_optimizers.py.

Each rule is ``rule(p, g, s, t, **hyperparameters) -> (p, s)`` for one
parameter array: ``s`` a dict of the rule's buffers (empty at the start),
``t`` the 1-based step. The keyword names and defaults are the optimizer's.
``run`` applies a rule to a dict of parameters over a gradient sequence.
"""

import numpy as np


def run(rule, params, grads, **hp):
    """``params`` (dict of arrays) after one step of ``rule`` per element of
    ``grads`` (a list of dicts like ``params``), in float64."""
    out = {}
    for k, p in params.items():
        p, s = np.asarray(p, np.float64), {}
        for t, g in enumerate(grads, start=1):
            p, s = rule(p, np.asarray(g[k], np.float64), s, t, **hp)
        out[k] = p
    return out


def _ema(s, key, x, decay, init=0.0):
    s[key] = decay * s.get(key, init) + (1 - decay) * x
    return s[key]


def _momentum(step, s, momentum, nesterov):
    """Heavy-ball momentum on a step: ``b = momentum b + step``."""
    if momentum is None:
        return step
    s["trace"] = momentum * s.get("trace", 0.0) + step
    return step + momentum * s["trace"] if nesterov else s["trace"]


def _norm(x):
    return np.sqrt(np.sum(x * x))


def _rms(x):
    return np.sqrt(np.mean(x * x))


def sgd(p, g, s, t, learning_rate, momentum=None, nesterov=False):
    return p - learning_rate * _momentum(g, s, momentum, nesterov), s


def _adam_direction(g, s, t, b1, b2, eps, eps_root, nesterov=False, amsgrad=False):
    """Kingma & Ba's bias-corrected ratio (Dozat's look-ahead first moment
    with ``nesterov``, Reddi et al.'s running maximum with ``amsgrad``)."""
    m = _ema(s, "m", g, b1)
    v = _ema(s, "v", g * g, b2)
    if nesterov:
        m_hat = b1 * m / (1 - b1 ** (t + 1)) + (1 - b1) * g / (1 - b1 ** t)
    else:
        m_hat = m / (1 - b1 ** t)
    v_hat = v / (1 - b2 ** t)
    if amsgrad:
        s["v_max"] = v_hat = np.maximum(s.get("v_max", 0.0), v_hat)
    return m_hat / (np.sqrt(v_hat + eps_root) + eps)


def adam(p, g, s, t, learning_rate, b1=0.9, b2=0.999, eps=1e-8, eps_root=0.0, nesterov=False):
    return p - learning_rate * _adam_direction(g, s, t, b1, b2, eps, eps_root, nesterov), s


def nadam(p, g, s, t, learning_rate, **hp):
    return adam(p, g, s, t, learning_rate, nesterov=True, **hp)


def adamw(p, g, s, t, learning_rate, b1=0.9, b2=0.999, eps=1e-8, eps_root=0.0,
          weight_decay=1e-4, nesterov=False):
    d = _adam_direction(g, s, t, b1, b2, eps, eps_root, nesterov)
    return p - learning_rate * (d + weight_decay * p), s


def nadamw(p, g, s, t, learning_rate, **hp):
    return adamw(p, g, s, t, learning_rate, nesterov=True, **hp)


def amsgrad(p, g, s, t, learning_rate, b1=0.9, b2=0.999, eps=1e-8, eps_root=0.0):
    return p - learning_rate * _adam_direction(g, s, t, b1, b2, eps, eps_root, amsgrad=True), s


def adamax(p, g, s, t, learning_rate, b1=0.9, b2=0.999, eps=1e-8):
    m = _ema(s, "m", g, b1)
    s["u"] = np.maximum(np.abs(g) + eps, b2 * s.get("u", 0.0))
    return p - learning_rate * m / (1 - b1 ** t) / s["u"], s


def lion(p, g, s, t, learning_rate, b1=0.9, b2=0.99, weight_decay=1e-3):
    m = s.get("m", 0.0)
    c = b1 * m + (1 - b1) * g
    s["m"] = b2 * m + (1 - b2) * g
    return p - learning_rate * (np.sign(c) + weight_decay * p), s


def rmsprop(p, g, s, t, learning_rate, decay=0.9, eps=1e-8, initial_scale=0.0,
            eps_in_sqrt=True, centered=False, momentum=None, nesterov=False,
            bias_correction=False):
    v = _ema(s, "v", g * g, decay, init=initial_scale)
    m = _ema(s, "m", g, decay) if centered else 0.0
    if bias_correction:
        v, m = v / (1 - decay ** t), m / (1 - decay ** t)
    var = v - m * m
    scaled = g / np.sqrt(var + eps) if eps_in_sqrt else g / (np.sqrt(var) + eps)
    return p - _momentum(learning_rate * scaled, s, momentum, nesterov), s


def adagrad(p, g, s, t, learning_rate, initial_accumulator_value=0.1, eps=1e-7):
    s["sum"] = s.get("sum", initial_accumulator_value) + g * g
    return p - learning_rate * g / np.sqrt(s["sum"] + eps), s


def adadelta(p, g, s, t, learning_rate=None, rho=0.9, eps=1e-6, weight_decay=0.0):
    g = g + weight_decay * p
    e_g = _ema(s, "e_g", g * g, rho)
    d = np.sqrt(s.get("e_x", 0.0) + eps) / np.sqrt(e_g + eps) * g
    _ema(s, "e_x", d * d, rho)
    return p - (1.0 if learning_rate is None else learning_rate) * d, s


def adafactor(p, g, s, t, learning_rate=None, min_dim_size_to_factor=128, decay_rate=0.8,
              decay_offset=0, multiply_by_parameter_scale=True, clipping_threshold=1.0,
              momentum=None, weight_decay_rate=None, eps=1e-30, factored=True):
    """Shazeer & Stern's rule: the second moment of a matrix whose two
    largest axes are long enough is estimated from its row and column means,
    ``V = R C^T / mean(R)``."""
    beta = 1 - (t - decay_offset) ** -decay_rate
    g2 = g * g + eps
    big = np.argsort(p.shape, kind="stable")[-2:] if p.ndim >= 2 else ()
    if factored and len(big) == 2 and p.shape[big[0]] >= min_dim_size_to_factor:
        a, b = sorted(big)  # the estimate is symmetric in the two axes
        r = _ema(s, "r", g2.mean(axis=b, keepdims=True), beta)
        c = _ema(s, "c", g2.mean(axis=a, keepdims=True), beta)
        v = r * c / r.mean(axis=a, keepdims=True)
    else:
        v = _ema(s, "v", g2, beta)
    u = g / np.sqrt(v)
    if clipping_threshold is not None:
        u = u / max(1.0, _rms(u) / clipping_threshold)
    if learning_rate is not None:
        u = learning_rate * u
    if multiply_by_parameter_scale:
        u = u * max(_rms(p), 1e-3)
    if momentum is not None:
        u = _ema(s, "m", u, momentum)
    if weight_decay_rate is not None:
        u = u + weight_decay_rate * p
    return p - u, s


def _trust_ratio(p, d, coefficient=1.0, eps=0.0):
    pn, dn = _norm(p), _norm(d)
    return 1.0 if pn == 0 or dn == 0 else coefficient * pn / (dn + eps)


def lamb(p, g, s, t, learning_rate, b1=0.9, b2=0.999, eps=1e-6, eps_root=0.0,
         weight_decay=0.0):
    """You et al.: Adam's direction plus weight decay, scaled per layer by
    ``||p|| / ||r||``."""
    r = _adam_direction(g, s, t, b1, b2, eps, eps_root) + weight_decay * p
    return p - learning_rate * _trust_ratio(p, r) * r, s


def lars(p, g, s, t, learning_rate, weight_decay=0.0, trust_coefficient=0.001, eps=0.0,
         momentum=0.9, nesterov=False):
    """You, Gitman & Ginsburg: the decayed gradient scaled per layer by
    ``trust_coefficient ||p|| / (||d|| + eps)``, through momentum."""
    d = g + weight_decay * p
    step = learning_rate * _trust_ratio(p, d, trust_coefficient, eps) * d
    return p - _momentum(step, s, momentum, nesterov), s


def muon(p, g, s, t, learning_rate, momentum=0.95, weight_decay=0.01, nesterov=True,
         ns_steps=5, ns_coeffs=(3.4445, -4.7750, 2.0315), eps=1e-7):
    """Jordan et al.'s Muon as MLX defines it: L2-coupled decay, an EMA
    momentum, and for a matrix the quintic Newton-Schulz iteration
    ``X <- a X + (b A + c A^2) X`` (``A = X X^T``) from ``X / ||X||_F`` over
    the shorter side, scaled by ``sqrt(max(1, rows / cols))``."""
    g = g + weight_decay * p
    m = _ema(s, "m", g, momentum)
    u = (1 - momentum) * g + momentum * m if nesterov else m
    if u.ndim >= 2:
        x = u.reshape(u.shape[0], -1)
        rows, cols = x.shape
        x = x.T if rows > cols else x
        x = x / (_norm(x) + eps)
        a, b, c = ns_coeffs
        for _ in range(ns_steps):
            gram = x @ x.T
            x = a * x + (b * gram + c * gram @ gram) @ x
        x = x.T if rows > cols else x
        u = x.reshape(u.shape) * max(1.0, rows / cols) ** 0.5
    return p - learning_rate * u, s
