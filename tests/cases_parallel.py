"""Rule cases for the collectives over named vmap axes (``ftorch.lax.psum``,
``pmean``, ``pmax``, ``pmin``, ``all_gather``, ``psum_scatter``,
``axis_index``).

A collective needs an enclosing vmap of its axis name, so each case's
function maps its first argument's leading axis with
``ft.vmap(..., axis_name="i")`` and calls the collective inside: the checks
then differentiate and batch (with an outer, unnamed vmap) through the named
one. The examples' results are mixed with per-example values, so that the
derivative of a collective reaches both the example itself and the others.
The functions use tanh, which MLX computes to float64 accuracy on the CPU
(sin does not), so finite differences hold at the default tolerances.
"""

from harness import Case, distinct, floats
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ftorch as ft
import ftorch.lax as lax
import ftorch.numpy as fnp


@st.composite
def examples(draw, lead=(), distinct_values=False):
    """``x`` (n, *lead, *rest): n examples (1 to 4) of shape ``lead + rest``,
    and ``w`` of the per-example shape. ``lead`` may hold ``"n"`` (the
    number of examples) or ``"2n"``."""
    n = draw(st.integers(1, 4))
    head = tuple(n if d == "n" else 2 * n if d == "2n" else d for d in lead)
    rest = draw(hnp.array_shapes(min_dims=0, max_dims=2 - len(head), max_side=3))
    x = draw(floats((n, *head, *rest), -2.0, 2.0))
    if distinct_values:
        x = distinct(x)
    return x, draw(floats(head + rest, -2.0, 2.0))


def named(f, in_axes=0):
    """``f(xi, w)`` mapped over the examples of ``x`` as the axis ``"i"``."""
    return lambda x, w: ft.vmap(f, in_axes=(in_axes, None), axis_name="i")(x, w)


def _moved(f):
    """The examples along the last axis of ``x`` instead of the first."""
    return lambda x, w: named(f, in_axes=-1)(fnp.moveaxis(x, 0, -1), w)


@st.composite
def nested(draw, distinct_values=False):
    """``x`` (m, n, k) and ``w`` (k,): two named axes of examples."""
    m, n, k = draw(st.integers(1, 3)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
    x = draw(floats((m, n, k), -2.0, 2.0))
    return (distinct(x) if distinct_values else x), draw(floats((k,), -2.0, 2.0))


def _nested(f):
    """``f(xij, w)`` mapped over axis ``"i"`` (outer) and ``"j"`` (inner)."""
    inner = ft.vmap(f, in_axes=(0, None), axis_name="j")
    return lambda x, w: ft.vmap(inner, in_axes=(0, None), axis_name="i")(x, w)


CASES = [
    Case("psum", named(lambda xi, w: lax.psum(xi * w, "i") * fnp.tanh(xi)), examples()),
    Case("psum", _moved(lambda xi, w: fnp.tanh(lax.psum(xi * xi, "i")) + xi * w), examples(),
         name="psum[in_axes=-1]"),
    # The closed-over w is the same for every example: psum(w) is w times the axis size.
    Case("psum", named(lambda xi, w: lax.psum(w, "i") * xi + lax.psum(xi, "i")), examples(),
         name="psum[unbatched]"),
    Case("psum", _nested(lambda x, w: lax.psum(x * w, ("i", "j")) * x), nested(),
         name="psum[two axes]"),
    Case("psum", _nested(lambda x, w: lax.psum(x, "i") * lax.psum(x * w, "j")), nested(),
         name="psum[each axis]"),
    Case("pmean", named(lambda xi, w: (xi - lax.pmean(xi, "i"))
                       * fnp.tanh(lax.pmean(xi * xi, "i") + w)), examples(), name="pmean"),
    Case("pmax", named(lambda xi, w: lax.pmax(xi, "i") * (xi + w)),
         examples(distinct_values=True)),
    Case("pmax", _nested(lambda x, w: lax.pmax(x + w, ("i", "j")) * x),
         nested(distinct_values=True), name="pmax[two axes]"),
    Case("pmin", named(lambda xi, w: lax.pmin(xi + w, "i") * xi),
         examples(distinct_values=True)),
    Case("all_gather", named(lambda xi, w: lax.all_gather(xi * w, "i") * fnp.tanh(xi)),
         examples(), name="all_gather"),
    Case("all_gather",
         named(lambda xi, w: fnp.sum(lax.all_gather(xi, "i", axis=-1) ** 2, axis=-1) * w),
         examples(), name="all_gather[axis=-1]"),
    Case("all_gather", named(lambda xi, w: lax.all_gather(xi * w, "i", tiled=True)),
         examples(lead=(2,)), name="all_gather[tiled]"),
    Case("all_gather", _nested(lambda x, w: lax.all_gather(x * w, ("i", "j"), axis=1)),
         nested(), name="all_gather[two axes]"),
    Case("psum_scatter", named(lambda xi, w: lax.psum_scatter(xi * w, "i") * xi[0]),
         examples(lead=("n",)), name="psum_scatter"),
    Case("psum_scatter",
         named(lambda xi, w: fnp.tanh(lax.psum_scatter(xi * w, "i", tiled=True))),
         examples(lead=("2n",)), name="psum_scatter[tiled]"),
    Case("axis_index", named(lambda xi, w: xi * (lax.axis_index("i") + w)), examples()),
]

