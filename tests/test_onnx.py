"""to_onnx: ftorch's staged graphs as ONNX models, run by onnxruntime and
compared with what ftorch computes for the same graph.

Per primitive: each case stages a small function (checking that the
primitive is in its graph), exports it, and compares onnxruntime's results
with the graph run as jit lowers it (float32 to about 1e-5 relative, integers
and booleans exactly; edge values such as NaN, infinities, -0.0, ties and
zero divisors included where MLX's semantics differ from ONNX's); every
mapped primitive has a case. Models: an MLP, a CNN (with BatchNorm in
inference) and a transformer block, and the gradients of their training
losses, against ``ft.jit``. Then the checker, names and files, and the
errors for what has no mapping.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import mlx.core as mx
import numpy as np
import pytest
from harness import compiler_off
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ftorch as ft
import ftorch.lax as lax
import ftorch.nn as nn
import ftorch.nn.functional as F
import ftorch.numpy as fnp
import ftorch.primitives as prims
import ftorch.random as random
from ftorch.backend.lowering import lower
from ftorch.custom_batching import custom_vmap
from ftorch.graph import Graph, simplify, subgraphs

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from ftorch.export._onnx import MAPPINGS, OPSET, to_onnx  # noqa: E402

RTOL, ATOL = 1e-5, 1e-6
NAN, INF = math.nan, math.inf


# ----------------------------------------------------------------------------
# Helpers
# ----------------------------------------------------------------------------


def staged(f: Callable, *args) -> Graph:
    """The graph ``ft.jit(f)`` runs for ``args``."""
    return simplify(ft.make_graph(f)(*args))


def primitives_in(graph: Graph) -> set[str]:
    found = set()
    for eqn in graph.eqns:
        found.add(eqn.prim.name)
        for g in subgraphs(eqn.params):
            found |= primitives_in(g)
    return found


def run_onnx(model, leaves: list) -> list[np.ndarray]:
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    feeds = {i.name: np.asarray(x) for i, x in zip(session.get_inputs(), leaves)}
    return session.run(None, feeds)


def assert_matches(got: np.ndarray, want, rtol: float = RTOL, atol: float = ATOL) -> None:
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if np.issubdtype(want.dtype, np.floating):
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


def max_abs_difference(f: Callable, *args) -> float:
    """Export ``f`` at ``args``, run it in onnxruntime, check it against
    ``ft.jit(f)`` and return the largest absolute difference."""
    graph = staged(f, *args)
    got = run_onnx(to_onnx(graph), ft.tree.leaves(args))
    want = ft.tree.leaves(ft.jit(f)(*args))
    assert len(got) == len(want)
    worst = 0.0
    for g, w in zip(got, want):
        assert_matches(g, w)
        worst = max(worst, float(np.max(np.abs(g - np.asarray(w)), initial=0.0)))
    return worst


def floats(*shape, lo=-2.0, hi=2.0, seed=0) -> mx.array:
    return mx.array(np.random.RandomState(seed).uniform(lo, hi, shape).astype(np.float32))


def ints(*shape, lo=-5, hi=6, seed=0, dtype=np.int32) -> mx.array:
    return mx.array(np.random.RandomState(seed).randint(lo, hi, shape).astype(dtype))


def bools(*shape, seed=0) -> mx.array:
    return mx.array(np.random.RandomState(seed).rand(*shape) > 0.5)


def f32(values) -> mx.array:
    return mx.array(np.asarray(values, np.float32))


def i32(values) -> mx.array:
    return mx.array(np.asarray(values, np.int32))


SPECIAL = f32([0.0, -0.0, 1.5, -2.5, NAN, INF, -INF, 1e-7, -3e-6, 2.0])


# ----------------------------------------------------------------------------
# One case per primitive mapping (and more where the semantics branch)
# ----------------------------------------------------------------------------


class Case(NamedTuple):
    id: str
    prim: str  # the primitive the case is about: it must be in the staged graph
    f: Callable
    args: tuple
    atol: float = ATOL


def _case(prim: str, f: Callable, *args, tag: str = "", atol: float = ATOL) -> Case:
    return Case(prim + (f"-{tag}" if tag else ""), prim, f, args, atol)


def _unary_cases() -> list[Case]:
    x = floats(3, 4)
    positive = floats(3, 4, lo=0.1, hi=5.0)
    inside = floats(3, 4, lo=-0.9, hi=0.9)
    cases = [_case(name, getattr(prims, name), x) for name in (
        "negative", "abs", "exp", "square", "sin", "cos", "tan", "arctan", "sinh", "cosh",
        "tanh", "arcsinh", "erf", "floor", "ceil", "sigmoid", "relu")]
    cases += [_case(name, getattr(prims, name), positive) for name in (
        "log", "log2", "log10", "sqrt", "rsqrt", "reciprocal")]
    cases += [_case(name, getattr(prims, name), inside) for name in (
        "arcsin", "arccos", "arctanh")]
    cases += [
        _case("arccosh", prims.arccosh, floats(3, 4, lo=1.1, hi=4.0)),
        _case("negative", prims.negative, ints(5), tag="int"),
        _case("abs", prims.abs, ints(5), tag="int"),
        _case("sin", prims.sin, ints(5), tag="int"),  # computed in float32
        _case("sign", prims.sign, SPECIAL),
        _case("sign", prims.sign, ints(6), tag="int"),
        # Relative accuracy near 0 is the point of these two: no absolute slack.
        _case("expm1", prims.expm1, f32([1e-8, -1e-6, 0.5, -3.0, 80.0, INF, -INF, NAN, 0.0]),
              atol=0.0),
        _case("log1p", prims.log1p, f32([1e-8, -1e-6, 0.5, 3.0, -0.9, -1.0, INF, NAN]),
              atol=0.0),
        _case("cbrt", prims.cbrt, f32([-8.0, 27.0, 0.0, -0.0, 1e-3, 5.0, INF, -INF, NAN])),
        _case("floor", prims.floor, ints(5), tag="int"),
        _case("round", prims.round, f32([0.5, 1.5, 2.5, -0.5, -1.5, 2.4, -2.6, NAN])),
        _case("round", lambda x: prims.round(x, 2), floats(3, 4), tag="decimals"),
        _case("isnan", prims.isnan, SPECIAL),
        _case("isnan", prims.isnan, ints(4), tag="int"),
        _case("isinf", prims.isinf, SPECIAL),
        _case("isfinite", prims.isfinite, SPECIAL),
        _case("isfinite", prims.isfinite, ints(4), tag="int"),
        _case("logical_not", prims.logical_not, bools(5)),
        _case("logical_not", prims.logical_not, SPECIAL, tag="truthiness"),
        _case("invert", prims.invert, ints(6)),
        _case("invert", prims.invert, bools(6), tag="bool"),
        _case("relu", prims.relu, SPECIAL, tag="special"),
        _case("astype", lambda x: prims.astype(x, mx.int32), floats(3, 4, lo=-9, hi=9)),
        _case("astype", lambda x: prims.astype(x, mx.float32), ints(5), tag="from-int"),
        _case("astype", lambda x: prims.astype(x, mx.bool_), SPECIAL, tag="to-bool"),
        _case("astype", lambda x: prims.astype(x, mx.float16), floats(4), tag="to-f16"),
        _case("stop_gradient", prims.stop_gradient, x),
        _case("checkpoint_name", lambda x: ft.checkpoint_name(x, "h"), x),
        _case("unique_indices_guard", prims.unique_indices_guard, x),
        _case("optimization_barrier", lambda x, y: prims.optimization_barrier(x, y), x, ints(3)),
    ]
    return cases


def _binary_cases() -> list[Case]:
    x, y, row = floats(3, 4), floats(3, 4, seed=1), floats(4, seed=2)
    positive = floats(3, 4, lo=0.5, hi=3.0)
    cases = [_case(name, getattr(prims, name), x, row) for name in (
        "add", "subtract", "multiply", "divide", "maximum", "minimum", "logaddexp")]
    a = i32([-7, 7, -7, 7, 0, 5, -5, 6, -6, 3])
    b = i32([2, -2, -2, 2, 3, 0, 0, 4, 4, -1])
    fa, fb = f32([-7.0, 7, -7, 7, -0.0, 6, 5.5, -5.5, 1, INF]), \
        f32([2.0, -2, -2, 2, 3, 3, 0.0, 2, INF, 2])
    cases += [
        _case("add", lambda x: prims.add(x, 1.5), x, tag="literal"),
        _case("multiply", lambda n: prims.multiply(n, 2.5), ints(5), tag="int-float-literal"),
        _case("multiply", lambda n: prims.multiply(n, 3), ints(5), tag="int-literal"),
        _case("add", prims.add, ints(3, 4), ints(4, seed=1), tag="int"),
        _case("divide", prims.divide, ints(5, lo=1), ints(5, lo=1, seed=1), tag="int"),
        _case("power", prims.power, positive, y),
        _case("power", prims.power, ints(5, lo=0, hi=4), i32([0, 1, 2, 3, 2]), tag="int"),
        _case("maximum", prims.maximum, SPECIAL, f32(np.full(10, 1.0)), tag="nan"),
        _case("minimum", prims.minimum, SPECIAL, f32(np.full(10, 1.0)), tag="nan"),
        _case("floor_divide", prims.floor_divide, a, b),
        _case("floor_divide", prims.floor_divide, fa, fb, tag="float"),
        _case("remainder", prims.remainder, a, b),
        _case("remainder", prims.remainder, fa, fb, tag="float"),
        _case("rem", prims.rem, a, b),
        _case("rem", prims.rem, fa, fb, tag="float"),
        _case("logaddexp", prims.logaddexp, f32([-INF, INF, 1.0, 0.0, -INF, 1e-8]),
              f32([-INF, INF, 1.0, -INF, 3.0, 0.0]), tag="special"),
        _case("equal", prims.equal, SPECIAL, f32(np.roll(np.asarray(SPECIAL), 1))),
        _case("not_equal", prims.not_equal, SPECIAL, SPECIAL),
        _case("less", prims.less, x, y),
        _case("less", lambda n: prims.less(n, 1.5), ints(6), tag="int-float-literal"),
        _case("less_equal", prims.less_equal, x, row),
        _case("greater", prims.greater, bools(5), bools(5, seed=1), tag="bool"),
        _case("greater", prims.greater, x, y),
        _case("greater_equal", prims.greater_equal, ints(6), ints(6, seed=1)),
        _case("logical_and", prims.logical_and, bools(6), bools(6, seed=1)),
        _case("logical_or", prims.logical_or, SPECIAL, f32(np.zeros(10))),
        _case("logical_xor", prims.logical_xor, bools(6), bools(6, seed=1)),
        _case("bitwise_and", prims.bitwise_and, ints(6, hi=64), ints(6, hi=64, seed=1)),
        _case("bitwise_or", prims.bitwise_or, ints(6, hi=64), ints(6, hi=64, seed=1)),
        _case("bitwise_xor", prims.bitwise_xor, bools(6), bools(6, seed=1), tag="bool"),
        _case("bitwise_xor", prims.bitwise_xor, ints(6, hi=64), ints(6, hi=64, seed=1)),
        _case("where", prims.where, bools(3, 4), x, row),
        _case("where", lambda c, x: prims.where(c, x, -1e9), bools(3, 4), x, tag="literal"),
        _case("where", prims.where, ints(3, 4, lo=0, hi=2), ints(3, 4), x, tag="int-cond"),
    ]
    return cases


def _activation_and_reduction_cases() -> list[Case]:
    x = floats(3, 4, 5)
    with_nan = f32([[1.0, NAN, 3.0], [2.0, 2.0, -1.0], [-INF, 0.0, 5.0]])
    with_inf = f32([[-INF, -INF], [INF, 1.0], [1.0, 2.0]])
    cases = [
        _case("gelu", lambda x: prims.gelu(x, False), x),
        _case("gelu", lambda x: prims.gelu(x, True), x, tag="tanh"),
        _case("softmax", lambda x: prims.softmax(x, (2,)), x),
        _case("softmax", lambda x: prims.softmax(x, (0, 2)), x, tag="axes"),
        _case("log_softmax", lambda x: prims.log_softmax(x, (1,)), x),
        _case("log_softmax", lambda x: prims.log_softmax(x, (1, 2)), x, tag="axes"),
        _case("logsumexp", lambda x: prims.logsumexp(x, (2,)), x),
        _case("logsumexp", lambda x: prims.logsumexp(x, (0, 2), True), x, tag="keepdims"),
        _case("logsumexp", lambda x: prims.logsumexp(x, (1,)), with_inf, tag="inf"),
        _case("sum", lambda x: prims.sum(x, (0, 2)), x),
        _case("sum", lambda x: prims.sum(x, (1,), True), bools(3, 4), tag="bool"),
        _case("mean", lambda x: prims.mean(x, (2,)), x),
        _case("mean", lambda x: prims.mean(x, (0,)), ints(3, 4), tag="int"),
        _case("prod", lambda x: prims.prod(x, (1,)), x),
        _case("max", lambda x: prims.max(x, (1,)), with_nan),
        _case("max", lambda x: prims.max(x, (0, 2), True), x, tag="keepdims"),
        _case("min", lambda x: prims.min(x, (0,)), with_nan),
        _case("min", lambda x: prims.min(x, (1,)), ints(3, 4), tag="int"),
        _case("all", lambda x: prims.all(x, (1,)), bools(3, 4)),
        _case("all", lambda x: prims.all(x, (0,)), SPECIAL, tag="truthiness"),
        _case("any", lambda x: prims.any(x, (1,), True), bools(3, 4)),
        _case("var", lambda x: prims.var(x, (2,)), x),
        _case("var", lambda x: prims.var(x, (0, 1), False, 1), x, tag="ddof"),
        _case("std", lambda x: prims.std(x, (1,), True, 1), x),
        _case("argmax", lambda x: prims.argmax(x, 1), with_nan),
        _case("argmax", lambda x: prims.argmax(x, 0, True), i32([[1, 3], [3, 1], [3, 2]]),
              tag="ties"),
        _case("argmin", lambda x: prims.argmin(x, 1), with_nan),
        _case("cumsum", lambda x: prims.cumsum(x, 1), x),
        _case("cumsum", lambda x: prims.cumsum(x, 2, True, False), x, tag="reverse-exclusive"),
        _case("cumsum", lambda x: prims.cumsum(x, 0), bools(4, 3), tag="bool"),
    ]
    return cases


def _shape_cases() -> list[Case]:
    x = floats(4, 6)
    cube = floats(2, 3, 4)
    return [
        _case("reshape", lambda x: prims.reshape(x, (3, 8)), x),
        _case("reshape", lambda x: prims.reshape(x, (5, 0)), floats(0, 5), tag="empty"),
        _case("transpose", lambda x: prims.transpose(x, (2, 0, 1)), cube),
        _case("broadcast_to", lambda x: prims.broadcast_to(x, (2, 3, 4)), floats(3, 1)),
        _case("static_slice", lambda x: prims.static_slice(
            x, (slice(None, None, -2), slice(1, 5, 3))), x),
        _case("static_slice", lambda x: x[1:3, ::-1], x, tag="indexing"),
        _case("slice_transpose", ft.grad(lambda x: fnp.sum(x[1::2, 4:0:-2] ** 2)), x),
        _case("slice_transpose", ft.grad(lambda x: fnp.sum(x[1:3, 2:5] ** 2)), x, tag="pad"),
        _case("concatenate", lambda a, b: prims.concatenate([a, b, a], 1), x, floats(4, 2)),
        _case("split", lambda x: prims.split(x, (1, 1, 4), 1), x),
        _case("pad", lambda x: prims.pad(x, 0.5, ((1, 2), (0, 3))), x),
        _case("pad", lambda x, v: prims.pad(x, v, ((0, 1), (2, 0))), x, f32(-3.0),
              tag="traced-value"),
        _case("roll", lambda x: prims.roll(x, (1, -8), (0, 1)), x),
    ]


def _indexing_cases() -> list[Case]:
    table = floats(10, 4)
    cube = floats(5, 4, 6)
    ids = i32([[1, -1, 3], [0, 9, -10]])
    return [
        _case("gather", lambda t, i: prims.gather(t, i, spec=("a",)), table, ids),
        _case("gather", lambda x, i: prims.gather(x, i, spec=((0, 5, 1), "a")), cube,
              i32([3, -4, 0]), tag="axis1"),
        _case("gather", lambda x, i, j: prims.gather(x, i, j, spec=("a", (0, 4, 1), "a")),
              cube, i32([[0], [4]]), i32([1, -1, 2]), tag="split-arrays"),
        _case("gather", lambda x, i: prims.gather(x, i, spec=(None, "a", 1, (5, None, -2))),
              cube, i32([2, -1]), tag="mixed"),
        _case("gather", lambda t, i: t[i], table, ids, tag="fnp"),
        _case("gather", lambda x, i, j: prims.gather(x, i, j, spec=("a", "a")), cube,
              i32([[4], [0]]), i32([1, -1, 2]), tag="trailing-axes"),
        _case("scatter", lambda x, v, i: prims.scatter(x, v, i, spec=("a",)), table,
              floats(3, 4, seed=1), i32([7, 0, -2])),
        _case("scatter_add", lambda x, v, i: prims.scatter_add(x, v, i, spec=("a",)), table,
              floats(5, 4, seed=1), i32([1, 1, 0, -1, 1])),
        _case("scatter_add", lambda x, v, i: prims.scatter_add(x, v, i, spec=((0, 5, 1), "a")),
              cube, f32(2.0), i32([[0, 3], [3, 3]]), tag="broadcast"),
        _case("scatter_mul", lambda x, v, i: prims.scatter_mul(x, v, i, spec=("a",),
                                                               unique=True),
              table, floats(2, 4, seed=1), i32([4, 2])),
        _case("scatter_div", lambda x, v, i: prims.scatter_div(x, v, i, spec=("a",),
                                                               unique=True),
              table, floats(2, 4, lo=1, seed=1), i32([4, 2])),
        _case("scatter_min", lambda x, v, i: prims.scatter_min(x, v, i, spec=("a",)), table,
              floats(3, 4, seed=1), i32([1, 1, 5])),
        _case("scatter_max", lambda x, v, i: prims.scatter_max(x, v, i, spec=("a",)), table,
              floats(3, 4, seed=1), i32([1, 1, 5])),
        _case("scatter", lambda x, v: fnp.at(x)[1:3, 2].set(v), table, floats(2, seed=1),
              tag="basic"),
        _case("take_along_axis", lambda x, i: prims.take_along_axis(x, i, 1), table,
              i32([[0, 3], [-1, 2], [1, 1]])[:1]),
        _case("take_along_axis", lambda x, i: prims.take_along_axis(x, i, 1), floats(1, 5),
              i32([[0, 3], [-1, 2], [4, 1]]), tag="broadcast-x"),
        _case("dynamic_slice", lambda x, i, j: lax.dynamic_slice(x, (i, j, 1), (2, 3, 4)),
              cube, i32(4), i32(-2)),
        _case("dynamic_update_slice", lambda x, u, i: lax.dynamic_update_slice(
            x, u, (i, 1, 0)), cube, floats(2, 2, 6, seed=1), i32(1)),
    ]


def _conv_and_pool_cases() -> list[Case]:
    def conv(stride, padding, kernel_dilation, input_dilation, groups, flip):
        return lambda x, w: prims.conv_general(x, w, stride, padding, kernel_dilation,
                                               input_dilation, groups, flip)

    image = floats(2, 7, 6, 4)
    with_nan = mx.array(np.where(np.arange(2 * 7 * 6 * 4).reshape(2, 7, 6, 4) == 30, np.nan,
                                 np.asarray(image)).astype(np.float32))
    window, stride, padding = (3, 2), (2, 1), ((1, 1), (0, 1))
    return [
        _case("conv_general", conv((2,), ((1,), (2,)), (2,), (1,), 1, False), floats(2, 9, 3),
              floats(4, 3, 3, seed=1), tag="1d"),
        _case("conv_general", conv((1, 2), ((0, 1), (1, 0)), (1, 1), (1, 1), 2, False), image,
              floats(6, 3, 2, 2, seed=1), tag="2d-groups"),
        _case("conv_general", conv((1, 1), ((2, 1), (2, 2)), (1, 1), (2, 3), 1, True),
              floats(1, 4, 3, 2), floats(3, 3, 3, 2, seed=1), tag="transposed"),
        _case("conv_general", lambda x, w: F.conv2d(x, w, stride=2, padding=1), image,
              floats(5, 3, 3, 4, seed=1), tag="F.conv2d"),
        _case("max_pool", lambda x: prims.max_pool(x, window, stride, padding), with_nan),
        _case("max_pool", lambda x: prims.max_pool(x, (2,), (2,), ((3, 3),)), floats(1, 4, 2),
              tag="wide-padding"),
        _case("avg_pool", lambda x: prims.avg_pool(x, window, stride, padding), image),
        _case("max_pool_gather", lambda t, x: prims.max_pool_gather(t, x, window, stride,
                                                                    padding), image, with_nan),
        _case("max_pool_scatter", lambda c, x: prims.max_pool_scatter(c, x, window, stride,
                                                                      padding),
              floats(2, 4, 6, 4, seed=1), with_nan),
        _case("max_pool_scatter", ft.grad(lambda x: fnp.sum(prims.max_pool(
            x, (2, 2), (2, 2), ((0, 0), (0, 0))) ** 2)), f32(np.ones((1, 4, 4, 1))),
              tag="ties"),
    ]


def _product_and_sorting_cases() -> list[Case]:
    ties = f32([[2.0, NAN, 1.0, 2.0, -0.0, 0.0, NAN, 1.0], [3.0, 3.0, 3.0, -INF, INF, 1, 2, 3]])
    return [
        _case("matmul", prims.matmul, floats(2, 1, 3, 4), floats(5, 4, 2, seed=1)),
        _case("matmul", prims.matmul, floats(4), floats(3, 4, 2, seed=1), tag="vector"),
        _case("matmul", prims.matmul, ints(3, 4), ints(4, 2, seed=1), tag="int"),
        _case("einsum", lambda a, b: prims.einsum("abc,cd->abd", a, b), floats(2, 3, 4),
              floats(4, 5, seed=1)),
        _case("einsum", lambda a, b: prims.einsum("ab,ab->", a, b), floats(3, 4),
              floats(3, 4, seed=1), tag="full"),
        _case("argsort", lambda x: prims.argsort(x, 1), ties),
        _case("argsort", lambda x: prims.argsort(x, 1, True), ties, tag="descending"),
        _case("argsort", lambda x: prims.argsort(x, 0), ints(7, 3, lo=0, hi=3), tag="int"),
        _case("sort", lambda x: prims.sort(x, 1), ties),
        _case("sort", lambda k1, k2, v: prims.sort((k1, k2, v), 0, True, 2),
              i32([2, 1, 2, 1, 2, 0]), f32([0.5, 3.0, 0.5, -1.0, NAN, 2.0]),
              floats(6), tag="two-keys"),
        _case("top_k", lambda x: prims.top_k(x, 3), ties),
    ]


def _scan_body(carry, x):
    carry = fnp.tanh(carry * 0.9 + x)
    return carry, carry * 2.0


def _call_and_control_cases() -> list[Case]:
    x = floats(3, 4)

    @ft.custom_jvp
    def soft_clip(v):
        return fnp.tanh(v) * 3.0

    @soft_clip.defjvp
    def _soft_clip_jvp(primals, tangents):
        (v,), (t,) = primals, tangents
        return soft_clip(v), t

    @ft.custom_vjp
    def scaled(v):
        return fnp.exp(v) * 2.0

    scaled.defvjp(lambda v: (scaled(v), v), lambda v, ct: (ct,))

    @custom_vmap
    def row_sum(v):
        return fnp.sum(v, axis=-1)

    @row_sum.def_vmap
    def _row_sum_vmap(axis_size, in_batched, v):
        return fnp.sum(v, axis=-1), in_batched[0]

    inner = ft.jit(lambda v: fnp.sin(v) * 2.0 + 1.0)
    return [
        _case("jit", lambda v: inner(v) + inner(v * 3.0), x),
        _case("remat", ft.checkpoint(lambda v: fnp.sin(fnp.cos(v))), x),
        _case("custom_jvp_call", lambda v: soft_clip(v) + 1.0, x),
        _case("custom_vjp_call", lambda v: scaled(v) - 1.0, x),
        _case("custom_vmap_call", lambda v: row_sum(v) * 2.0, x),
        _case("cond", lambda p, v: lax.cond(p, lambda u: u * 2.0, lambda u: fnp.sin(u), v),
              mx.array(False), x),
        _case("cond", lambda i, v: lax.switch(i, [lambda u: u + 1.0, lambda u: u * u,
                                                  lambda u: -u], v), i32(7), x, tag="switch"),
        _case("scan", lambda c, xs: lax.scan(_scan_body, c, xs), floats(4), floats(5, 4)),
        _case("scan", lambda c, xs: lax.scan(_scan_body, c, xs, reverse=True), floats(4),
              floats(5, 4), tag="reverse"),
        _case("scan", lambda c: lax.scan(lambda c, _: (c * 1.5, c), c, None, length=3),
              floats(2), tag="no-xs"),
        _case("scan", lambda c: lax.fori_loop(0, 4, lambda i, c: c * 1.1 + i, c), floats(3),
              tag="no-ys"),
        _case("scan", lambda c, xs: lax.scan(_scan_body, c, xs), floats(3), floats(0, 3),
              tag="no-steps"),
        _case("jit", ft.jit(lambda v: v @ mx.ones((4, 2)) + mx.arange(2)), x, tag="consts"),
        _case("while", lambda n, v: lax.while_loop(lambda s: s[0] < n,
                                                    lambda s: (s[0] + 1, s[1] * 1.5 + 1.0),
                                                    (i32(0), v)), i32(4), x),
    ]


CASES = (_unary_cases() + _binary_cases() + _activation_and_reduction_cases()
         + _shape_cases() + _indexing_cases() + _conv_and_pool_cases()
         + _product_and_sorting_cases() + _call_and_control_cases())


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_primitive_mapping(case: Case):
    graph = staged(case.f, *case.args)
    assert case.prim in primitives_in(graph), f"{case.prim} is not in\n{graph}"
    leaves = ft.tree.leaves(case.args)
    got = run_onnx(to_onnx(graph), leaves)
    with compiler_off():
        want = lower(graph)(*leaves)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert_matches(g, w, atol=case.atol)


def test_every_mapping_has_a_case():
    covered = {c.prim for c in CASES}
    assert sorted(set(MAPPINGS) - covered) == []


# Integer division and remainders, where ONNX's truncating ops and MLX's
# flooring ones part, with zero divisors and broadcasting.
@given(hnp.arrays(np.int32, hnp.array_shapes(max_dims=2, max_side=4),
                  elements=st.integers(-20, 20)),
       hnp.arrays(np.int32, st.sampled_from([(), (1,), (4,)]), elements=st.integers(-6, 6)),
       st.sampled_from(["floor_divide", "remainder", "rem"]))
def test_integer_division_matches_mlx(a, b, name):
    if a.ndim and b.ndim and a.shape[-1] not in (1, b.shape[-1]) and b.shape[-1] != 1:
        b = b[:1]
    args = (mx.array(a), mx.array(b))
    graph = staged(getattr(prims, name), *args)
    (got,) = run_onnx(to_onnx(graph), list(args))
    assert_matches(got, getattr(prims, name)(*args))


# ----------------------------------------------------------------------------
# Models: inference and training gradients against ft.jit
# ----------------------------------------------------------------------------


def _mlp():
    model = nn.Sequential(
        nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 16), nn.GELU(), nn.Linear(16, 16),
        nn.Tanh(), nn.Linear(16, 16), nn.Sigmoid(), nn.Linear(16, 16), nn.SiLU(),
        nn.Linear(16, 4))
    x = random.normal(random.key(1), (8, 6))
    params, _ = model.init(random.key(0), x)
    return model, params, x


def _cnn():
    model = nn.Sequential(
        nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm(4), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(4, 8, 3, stride=2, padding=1), nn.ReLU(), nn.AvgPool2d(2))
    x = random.normal(random.key(1), (2, 12, 12, 1))
    params, state = model.init(random.key(0), x)
    # Running statistics away from their initial values, so inference mode shows.
    _, state = model.apply(params, state, x * 2.0 + 1.0, train=True)
    head = nn.Linear(8, 3)  # the features are (2, 1, 1, 8)
    head_params, _ = head.init(random.key(2), mx.zeros((2, 8)))
    return model, params, state, head, head_params, x


def _transformer():
    embed = nn.Embedding(11, 16)
    block = nn.TransformerEncoderLayer(16, 4, mlp_dims=32, activation=F.gelu)
    norm = nn.RMSNorm(16)
    ids = mx.array([[1, 2, 3, 4, 5, 6], [10, 0, 1, 1, 2, 9]], mx.int32)
    pe, _ = embed.init(random.key(0), ids)
    pb, _ = block.init(random.key(1), mx.zeros((2, 6, 16)))
    pn, _ = norm.init(random.key(2), mx.zeros((2, 6, 16)))
    pn = {**pn, "weight": random.normal(random.key(3), (16,))}  # not all ones: it shows
    params = {"embed": pe, "block": pb, "norm": pn}

    def forward(params, ids, keep):
        h = embed(params["embed"], ids)
        causal = nn.create_additive_causal_mask(ids.shape[1])
        h = block(params["block"], h, causal)
        h = block.attention(params["block"]["attention"], h, h, h, keep[:, None, None, :])
        h = norm(params["norm"], h)
        return h @ params["embed"]["weight"].T  # tied output projection

    keep = mx.array([[True] * 6, [True] * 4 + [False] * 2])
    return forward, params, ids, keep


def test_mlp():
    model, params, x = _mlp()
    err = max_abs_difference(
        lambda p, x: (F.log_softmax(model(p, x), axis=-1), F.softmax(model(p, x), axis=-1)),
        params, x)
    assert err < 1e-5


def test_cnn_inference():
    model, params, state, head, head_params, x = _cnn()

    def predict(params, state, head_params, x):
        y, _ = model.apply(params, state, x)
        return fnp.argmax(head(head_params, y.reshape(y.shape[0], -1)), axis=-1), y

    assert "conv_general" in primitives_in(staged(predict, params, state, head_params, x))
    assert max_abs_difference(predict, params, state, head_params, x) < 1e-5


def test_transformer_block():
    forward, params, ids, keep = _transformer()
    graph = staged(forward, params, ids, keep)
    assert {"gather", "softmax", "gelu", "where", "matmul"} <= primitives_in(graph)
    assert max_abs_difference(forward, params, ids, keep) < 1e-5


def test_training_gradients():
    """The jitted gradients of each model's training loss (a train step's
    gradient: cross-entropy, the CNN's batch statistics, the embedding's
    scatter-add)."""
    model, params, x = _mlp()
    labels = mx.array([0, 1, 2, 3, 0, 1, 2, 3])

    def mlp_loss(params, x, labels):
        return fnp.mean(nn.losses.cross_entropy(model(params, x), labels))

    cnn, cnn_params, state, head, head_params, image = _cnn()

    def cnn_loss(params, head_params, image, labels):
        y, _ = cnn.apply(params, state, image, train=True)
        logits = head(head_params, y.reshape(y.shape[0], -1))
        return fnp.mean(nn.losses.cross_entropy(logits, labels))

    forward, t_params, ids, keep = _transformer()

    def lm_loss(params, ids, keep):
        logits = forward(params, ids, keep)
        return fnp.mean(nn.losses.cross_entropy(logits[:, :-1], ids[:, 1:]))

    steps = {
        "mlp": (ft.value_and_grad(mlp_loss), (params, x, labels)),
        "cnn": (ft.grad(cnn_loss, argnums=(0, 1)), (cnn_params, head_params, image, labels[:2])),
        "lm": (ft.grad(lm_loss), (t_params, ids, keep)),
    }
    for grad, args in steps.values():
        assert max_abs_difference(grad, *args) < 1e-5
    grad, args = steps["cnn"]
    assert {"max_pool_scatter", "conv_general", "einsum"} <= primitives_in(staged(grad, *args))
    grad, args = steps["lm"]
    assert "scatter_add" in primitives_in(staged(grad, *args))


# ----------------------------------------------------------------------------
# The model: checker, names, files; what has no mapping
# ----------------------------------------------------------------------------


def test_model_passes_the_checker_and_round_trips(tmp_path):
    model, params, x = _mlp()
    graph = staged(lambda p, x: model(p, x), params, x)
    n_in = len(graph.in_vars)
    names = [f"p{i}" for i in range(n_in - 1)] + ["x"]
    path = tmp_path / "mlp.onnx"
    proto = to_onnx(graph, path, input_names=names, output_names=["logits"],
                    model_name="mlp")
    onnx.checker.check_model(proto, full_check=True)
    loaded = onnx.load(str(path))
    onnx.checker.check_model(loaded, full_check=True)
    assert loaded.SerializeToString() == proto.SerializeToString()
    assert [i.name for i in loaded.graph.input] == names
    assert [o.name for o in loaded.graph.output] == ["logits"]
    assert loaded.graph.name == "mlp"
    assert loaded.opset_import[0].version == OPSET
    x_type = loaded.graph.input[-1].type.tensor_type
    assert x_type.elem_type == onnx.TensorProto.FLOAT
    assert [d.dim_value for d in x_type.shape.dim] == [8, 6]
    # Constants are initializers, not inputs.
    consts = staged(lambda x: x @ mx.ones((6, 2)), x)
    assert len(to_onnx(consts).graph.initializer) >= 1


def test_names_are_checked():
    graph = staged(lambda x, y: x + y, floats(2), floats(2))
    with pytest.raises(ValueError, match="2 inputs need 2 input_names"):
        to_onnx(graph, input_names=["x"])
    with pytest.raises(ValueError, match="distinct"):
        to_onnx(graph, input_names=["x", "x"])
    with pytest.raises(ValueError, match="differ"):
        to_onnx(graph, input_names=["x", "y"], output_names=["x"])
    with pytest.raises(ValueError, match="opset"):
        to_onnx(graph, opset=17)


def test_outputs_that_are_inputs_or_literals():
    graph = staged(lambda x, y: (x, y * 0.0 + 1.0, x), floats(3), floats(3))
    got = run_onnx(to_onnx(graph), [floats(3), floats(3)])
    assert_matches(got[0], floats(3))
    assert_matches(got[2], floats(3))


def test_unmapped_primitives_raise_naming_them():
    def host(x):
        return ft.pure_callback(lambda v: np.asarray(v) * 2,
                                ft.ShapeDtypeStruct((3,), mx.float32), x)

    with pytest.raises(NotImplementedError, match=r"primitive 'pure_callback' has no ONNX "
                                                  rf"mapping \(opset {OPSET}\)"):
        to_onnx(staged(host, floats(3)))
    with pytest.raises(NotImplementedError, match="primitive 'cholesky'"):
        to_onnx(staged(fnp.linalg.cholesky, mx.eye(3)))
    # Inside an inlined call too.
    with pytest.raises(NotImplementedError, match="primitive 'pure_callback'"):
        to_onnx(staged(lambda x: ft.jit(host)(x) + 1.0, floats(3)))


def test_complex_values_raise():
    with pytest.raises(NotImplementedError, match="complex64"):
        to_onnx(staged(lambda x: fnp.abs(fnp.fft.fft(x)), floats(4)))


def test_weakly_typed_scalar_input_and_half_precision():
    """A Python scalar argument is a weakly typed float32 input: it takes the
    float16 of the array it multiplies, as in MLX."""
    f = lambda x, s: fnp.tanh(x * s) + 1  # noqa: E731
    x = mx.array(np.linspace(-1, 1, 6, dtype=np.float16))
    graph = staged(f, x, 2.0)
    assert graph.in_avals[1].dtype == mx.float32 and graph.out_avals[0].dtype == mx.float16
    (got,) = run_onnx(to_onnx(graph), [x, mx.array(2.0)])
    assert_matches(got, ft.jit(f)(x, 2.0), rtol=1e-3, atol=1e-3)


def test_bfloat16_constants_keep_their_bits():
    weights = mx.array([1.5, -2.0, 3.140625], mx.bfloat16)
    graph = staged(lambda x: (x * weights).astype(mx.float32), mx.ones(3, mx.bfloat16))
    model = to_onnx(graph)
    (init,) = model.graph.initializer
    assert init.data_type == onnx.TensorProto.BFLOAT16
    assert init.raw_data == np.asarray(weights.view(mx.uint16)).tobytes()
    assert model.graph.input[0].type.tensor_type.elem_type == onnx.TensorProto.BFLOAT16
