"""Rule cases for the control-flow primitives of ``ftorch.lax``: ``scan``,
``cond`` (``cond`` and ``switch``) and ``while`` (``while_loop``).

Every case closes over nothing: its parameters are arguments, so that the
bodies close over values of the enclosing transforms (hoisted consts).
Predicates and switch indices are computed from the data, with the data
moved away from the decision boundaries so that finite differences do not
straddle one. The ``while`` cases have a trip count that is locally constant
in the data (finite differences are valid) and are forward-mode only
(``vjp=False``): reverse mode through a ``while_loop`` is refused.

The bodies use functions MLX computes to float64 accuracy on CPU (tanh,
arctan, expm1, cosh, ...), not sin/cos/exp (float32-accurate there), so
the default finite-difference step and tolerances hold.
"""

import mlx.core as mx
import numpy as np
from harness import Case, away_from_integers, floats
from hypothesis import strategies as st

import ftorch.lax as lax
import ftorch.numpy as fnp

# ----------------------------------------------------------------------------
# Strategies
# ----------------------------------------------------------------------------


@st.composite
def rnn_args(draw, max_len: int = 4):
    """W (d, d), h0 (d,), xs (n, d) with n in 0..max_len (0 included)."""
    d = draw(st.integers(1, 3))
    n = draw(st.integers(0, max_len))
    return (draw(floats((d, d), -1.0, 1.0)), draw(floats((d,), -1.0, 1.0)),
            draw(floats((n, d), -2.0, 2.0)))


@st.composite
def lstm_like_args(draw):
    """A pytree carry (h, c) and pytree xs (a, b): h0, c0 (d,), a (n, d),
    b (n,), w (d,)."""
    d = draw(st.integers(1, 3))
    n = draw(st.integers(0, 4))
    return (draw(floats((d,), -1.0, 1.0)), draw(floats((d,), -1.0, 1.0)),
            draw(floats((n, d), -1.5, 1.5)), draw(floats((n,), -1.5, 1.5)),
            draw(floats((d,), -1.0, 1.0)))


def _shift_sum(x: np.ndarray, target: float) -> np.ndarray:
    """``x`` shifted evenly so that its sum is ``target``."""
    return x + (target - x.sum()) / x.size


@st.composite
def cond_args(draw, margin: float = 0.5):
    """x (small shape, sum at least ``margin`` away from 0) and w (x's shape)."""
    shape = draw(st.sampled_from([(), (1,), (3,), (2, 2)]))
    x = draw(floats(shape, -2.0, 2.0))
    s = float(x.sum())
    if abs(s) < margin:
        x = _shift_sum(x, margin if s >= 0 else -margin)
    return x, draw(floats(shape, -1.5, 1.5))


@st.composite
def switch_args(draw):
    """x whose sum lies in [-1.5, 3.5] away from integers (the index is its
    floor, -1 and 3 out of range: clamped), and w."""
    shape = draw(st.sampled_from([(), (2,), (2, 2)]))
    x = draw(floats(shape, -1.0, 1.0))
    target = float(away_from_integers(np.asarray(draw(st.floats(-1.5, 3.5))), 0.1))
    return _shift_sum(x, target), draw(floats(shape, -1.5, 1.5))


@st.composite
def while_args(draw):
    shape = draw(st.sampled_from([(), (2,), (3,)]))
    return draw(floats(shape, -1.5, 1.5)), draw(floats(shape, -1.0, 1.0))


@st.composite
def while_data_trip_args(draw):
    """x, w, and n whose value away from integers gives a data-dependent trip
    count floor(n) in 0..3 (constant under small perturbations)."""
    x, w = draw(while_args())
    n = away_from_integers(np.asarray(draw(st.floats(0.0, 3.9))), 0.1)
    return x, w, np.asarray(n, dtype=np.float64)


# ----------------------------------------------------------------------------
# Case functions
# ----------------------------------------------------------------------------


def rnn(W, h0, xs):
    """h_t = tanh(W h_{t-1} + x_t), y_t = arctan(h_t) * h_{t-1}; W closed over."""
    def step(h, x):
        new = fnp.tanh(W @ h + x)
        return new, fnp.arctan(new) * h

    return lax.scan(step, h0, xs)


def rnn_reverse(W, h0, xs):
    def step(h, x):
        new = fnp.arctan(W @ h) / (1.0 + x * x) + 0.5 * h
        return new, new * x

    return lax.scan(step, h0, xs, reverse=True)


def lstm_like(h0, c0, a, b, w):
    """Pytree carry (h, c), pytree xs {'a', 'b'} and pytree ys."""
    def step(carry, x):
        h, c = carry
        gate = fnp.tanh(h * w + x["a"])
        c = c / (1.0 + 0.1 * x["b"] * x["b"]) + gate
        h = fnp.arctan(c) * gate
        return (h, c), {"h": h, "s": fnp.sum(c * x["b"])}

    return lax.scan(step, (h0, c0), {"a": a, "b": b})


def cond_fn(x, w):
    return lax.cond(fnp.sum(x) > 0,
                    lambda x, w: fnp.arctan(x * w) + x * x,
                    lambda x, w: fnp.expm1(0.5 * x) * w,
                    x, w)


def cond_pytree_fn(x, w):
    """Pytree operands and outputs; one branch closes over ``w``, the other
    ignores it (zero tangents in one branch only)."""
    def yes(ops):
        a, b = ops
        return {"u": fnp.tanh(a) * w, "v": b * b}

    def no(ops):
        a, b = ops
        return {"u": a * a * a, "v": fnp.cosh(b)}

    return lax.cond(fnp.sum(x) < 0, yes, no, (x, x * 0.5 + 1.0))


def switch_fn(x, w):
    index = fnp.astype(fnp.floor(fnp.sum(x)), mx.int32)  # -1..3: clamped into 0..2
    return lax.switch(index, [lambda x, w: fnp.arctan(x) * w,
                              lambda x, w: x * x * w + x,
                              lambda x, w: fnp.cosh(x * w)], x, w)


def while_fn(x, w):
    """Three steps of s = arctan(s) * w + x (a counter beside a float state)."""
    def body(carry):
        i, s = carry
        return i + 1, fnp.arctan(s) * w + x

    return lax.while_loop(lambda c: c[0] < 3, body, (mx.array(0), x))[1]


def while_data_trip_fn(x, w, n):
    """floor(n) steps: under vmap with a batched ``n`` the predicate is
    batched (finished examples frozen)."""
    limit = fnp.astype(fnp.floor(n), mx.int32)

    def body(carry):
        i, s = carry
        return i + 1, fnp.tanh(s * w) + 0.5 * x

    return lax.while_loop(lambda c: c[0] < limit, body, (mx.array(0), x))[1]


CASES = [
    Case("scan", rnn, rnn_args(), name="scan-rnn"),
    Case("scan", rnn_reverse, rnn_args(), name="scan-reverse"),
    Case("scan", lstm_like, lstm_like_args(), name="scan-pytree"),
    Case("cond", cond_fn, cond_args(), name="cond-data-pred"),
    Case("cond", cond_pytree_fn, cond_args(), name="cond-pytree"),
    Case("cond", switch_fn, switch_args(), name="cond-switch"),
    Case("while", while_fn, while_args(), name="while-fixed-trip", vjp=False),
    Case("while", while_data_trip_fn, while_data_trip_args(), name="while-data-trip",
         vjp=False),
]
