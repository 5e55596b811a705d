"""``ftorch.extend``: what defining a new primitive takes, as ``jax.extend``:
the ``Primitive`` class and the helpers ftorch's own primitives declare
their rules with (see ``notebooks/07_your_own_primitive.ipynb`` and
``ft.test_util`` to check the rules you write).

A primitive is ``Primitive(name, impl)``: ``impl`` computes it on concrete
MLX arrays. Its rules are written with ftorch ops (``ftorch.lax``), so they
are differentiable and batchable themselves:

- ``derivative(prim, f)``: a unary op given its derivative ``f(x, y)``
  (``y`` the output); both JVP and VJP follow.
- ``linear(prim, transpose)``: an op linear in its first operand, given its
  transpose.
- ``nondifferentiable(prim)``: zero derivative almost everywhere.
- ``vectorized(prim)``, ``broadcasting(prim)``, ``reducer(prim)``: the
  batching rules of elementwise, broadcasting and reducing ops;
  ``move_bdim`` and ``unbroadcast`` for rules written by hand.
- ``accurate_exp``: ``mx.exp`` that is accurate in float64 too (MLX's CPU
  float64 ``exp`` is only float32-accurate), for impls.

Names are global and unique: prefix yours (``"mylib.op"``).

>>> import ftorch as ft, ftorch.extend as fx, ftorch.lax as lax, mlx.core as mx
>>> cube_p = fx.Primitive("ftorch.extend.example_cube", lambda x: x * x * x)
>>> fx.derivative(cube_p, lambda x, y: lax.multiply(3.0, lax.square(x)))
>>> fx.vectorized(cube_p)
>>> ft.grad(lambda x: cube_p.bind(x))(mx.array(2.0)).item()
12.0
>>> ft.vmap(ft.grad(lambda x: cube_p.bind(x)))(mx.array([1.0, 2.0])).tolist()
[3.0, 12.0]
"""

from ftorch.core import Primitive
from ftorch.primitives._rules import (
    broadcasting,
    derivative,
    linear,
    move_bdim,
    nondifferentiable,
    reducer,
    unbroadcast,
    vectorized,
)
from ftorch.primitives.elementwise import accurate_exp

__all__ = [
    "Primitive", "derivative", "linear", "nondifferentiable", "vectorized", "broadcasting",
    "reducer", "move_bdim", "unbroadcast", "accurate_exp",
]
