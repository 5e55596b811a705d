"""Named vmap axes and the collectives over them (``ftorch.lax.psum`` and
co.): values against NumPy, nesting, derivatives across the examples
(BatchNorm statistics, averaged per-example gradients), jit, and errors."""

import mlx.core as mx
import numpy as np
import pytest
from harness import close

import ftorch as ft
import ftorch.lax as lax
import ftorch.numpy as fnp

RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 3))


def f64(a):
    return mx.array(np.asarray(a, dtype=np.float64), dtype=mx.float64)


def named(f, **kwargs):
    return ft.vmap(f, axis_name="i", **kwargs)


# ----------------------------------------------------------------------------
# Values
# ----------------------------------------------------------------------------


def test_reductions_match_numpy():
    x = f64(X)
    n = X.shape[0]
    close(named(lambda v: lax.psum(v, "i"))(x), np.broadcast_to(X.sum(0), X.shape))
    close(named(lambda v: lax.pmean(v, "i"))(x), np.broadcast_to(X.mean(0), X.shape))
    close(named(lambda v: lax.pmax(v, "i"))(x), np.broadcast_to(X.max(0), X.shape))
    close(named(lambda v: lax.pmin(v, "i"))(x), np.broadcast_to(X.min(0), X.shape))
    close(named(lambda v: lax.psum(1, "i"))(x), np.full(n, n))
    close(named(lambda v: lax.axis_index("i"))(x), np.arange(n))


def test_mapped_axis_other_than_zero_and_out_axes():
    x = f64(X)  # examples along axis 1
    got = ft.vmap(lambda v: v - lax.pmean(v, "i"), in_axes=1, out_axes=1, axis_name="i")(x)
    close(got, X - X.mean(1, keepdims=True))


def test_dtypes_follow_jax():
    b = mx.array([True, False, True])
    count = named(lambda v: lax.psum(v, "i"))(b)
    assert count.dtype == mx.int32 and count.tolist() == [2, 2, 2]
    mean = named(lambda v: lax.pmean(v, "i"))(mx.array([1, 3, 2]))
    assert mean.dtype == mx.float32 and mean.tolist() == [2.0, 2.0, 2.0]
    assert named(lambda v: lax.pmax(v, "i"))(mx.array([1, 3, 2])).tolist() == [3, 3, 3]
    assert named(lambda v: lax.axis_index("i"))(mx.zeros(2)).dtype == mx.int32


def test_pytrees():
    x = f64(X)
    out = named(lambda v: lax.psum({"a": v, "b": (2 * v[0],)}, "i"))(x)
    close(out["a"], np.broadcast_to(X.sum(0), X.shape))
    close(out["b"][0], np.full(4, 2 * X[:, 0].sum()))


def test_unbatched_operands():
    # A value the same for every example: psum multiplies by the axis size.
    w = f64([1.0, 2.0, 3.0])
    got = ft.vmap(lambda v, w: lax.psum(w, "i") + 0 * v, in_axes=(0, None), axis_name="i")(
        f64(X), w)
    close(got, np.broadcast_to(4 * np.array([1.0, 2.0, 3.0]), X.shape))
    got = ft.vmap(lambda v, w: lax.all_gather(w, "i"), in_axes=(0, None), axis_name="i")(
        f64(X), w)
    close(got, np.broadcast_to(np.array([1.0, 2.0, 3.0]), (4, 4, 3)))


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_all_gather(axis):
    x = f64(X)  # 4 examples of shape (3,)
    got = named(lambda v: lax.all_gather(v[:, None] * f64([1.0, 2.0]), "i", axis=axis))(x)
    per = X[:, :, None] * np.array([1.0, 2.0])  # (4, 3, 2): each example (3, 2)
    stacked = np.moveaxis(per, 0, axis % 3)
    close(got, np.broadcast_to(stacked, (4,) + stacked.shape))


def test_all_gather_tiled():
    got = named(lambda v: lax.all_gather(v, "i", tiled=True))(f64(X))
    close(got, np.broadcast_to(X.reshape(-1), (4, 12)))


def test_psum_scatter():
    y = RNG.standard_normal((4, 4, 2))
    got = named(lambda v: lax.psum_scatter(v, "i"))(f64(y))
    close(got, y.sum(0))
    z = RNG.standard_normal((4, 8, 2))
    got = named(lambda v: lax.psum_scatter(v, "i", scatter_dimension=0, tiled=True))(f64(z))
    close(got, z.sum(0).reshape(4, 2, 2))
    got = named(lambda v: lax.psum_scatter(v, "i", scatter_dimension=1, tiled=True))(
        f64(np.swapaxes(z, 1, 2)))
    close(got, np.swapaxes(z.sum(0).reshape(4, 2, 2), 1, 2))


def test_scatter_and_gather_are_inverse():
    got = named(lambda v: lax.psum_scatter(lax.all_gather(v, "i"), "i"))(f64(X))
    close(got, 4 * X)


# ----------------------------------------------------------------------------
# Nesting
# ----------------------------------------------------------------------------


Y = RNG.standard_normal((2, 3, 2))  # axis "i" (2) outside axis "j" (3)


def nest(f):
    return ft.vmap(ft.vmap(f, axis_name="j"), axis_name="i")


def test_nested_names():
    y = f64(Y)
    close(nest(lambda v: lax.psum(v, "j"))(y), np.broadcast_to(Y.sum(1, keepdims=True), Y.shape))
    close(nest(lambda v: lax.psum(v, "i"))(y), np.broadcast_to(Y.sum(0, keepdims=True), Y.shape))
    close(nest(lambda v: lax.psum(v, ("i", "j")))(y),
          np.broadcast_to(Y.sum((0, 1), keepdims=True), Y.shape))
    close(nest(lambda v: lax.pmax(v, ("j", "i")))(y),
          np.broadcast_to(Y.max((0, 1), keepdims=True), Y.shape))
    close(nest(lambda v: lax.axis_index(("i", "j")))(y), np.arange(6).reshape(2, 3))
    close(nest(lambda v: lax.axis_index("i") * 10 + lax.axis_index("j"))(y),
          [[0, 1, 2], [10, 11, 12]])
    got = nest(lambda v: lax.all_gather(v, ("i", "j")))(y)
    close(got, np.broadcast_to(Y.reshape(6, 2), (2, 3, 6, 2)))


def test_nested_psum_scatter_over_two_axes():
    z = RNG.standard_normal((2, 3, 6))
    got = nest(lambda v: lax.psum_scatter(v, ("i", "j")))(f64(z))
    close(got, z.sum((0, 1)).reshape(2, 3))


def test_inner_name_shadows_outer():
    y = f64(np.arange(6.0).reshape(2, 3))
    got = ft.vmap(ft.vmap(lambda v: lax.psum(v, "i"), axis_name="i"), axis_name="i")(y)
    close(got, [[3.0] * 3, [12.0] * 3])


def test_unnamed_vmap_around_named_one():
    # The outer vmap is a plain batch: each of its slices has its own sums.
    y = f64(Y)
    got = ft.vmap(named(lambda v: lax.psum(v, "i")), in_axes=2, out_axes=2)(y)
    close(got, np.broadcast_to(Y.sum(0, keepdims=True), Y.shape))


# ----------------------------------------------------------------------------
# Derivatives across examples
# ----------------------------------------------------------------------------


def batchnorm(x, gamma, beta, axis_name=None, eps=1e-5):
    """Normalise with batch statistics: over the named axis (per example), or
    over axis 0 of the batch (``axis_name=None``)."""
    if axis_name is None:
        mu = fnp.mean(x, axis=0)
        var = fnp.mean((x - mu) ** 2, axis=0)
    else:
        mu = lax.pmean(x, axis_name)
        var = lax.pmean((x - mu) ** 2, axis_name)
    return (x - mu) / fnp.sqrt(var + eps) * gamma + beta


XB = RNG.standard_normal((5, 3))
GAMMA, BETA, C = RNG.standard_normal(3), RNG.standard_normal(3), RNG.standard_normal((5, 3))


def per_example_loss(x, gamma, beta, c):
    return fnp.sum(fnp.tanh(batchnorm(x, gamma, beta, "batch")) * c)


def batch_loss(x, gamma, beta, c):
    return fnp.sum(fnp.tanh(batchnorm(x, gamma, beta)) * c)


def test_batchnorm_value():
    got = ft.vmap(lambda x: batchnorm(x, f64(GAMMA), f64(BETA), "batch"), axis_name="batch")(
        f64(XB))
    mu, var = XB.mean(0), XB.var(0)
    close(got, (XB - mu) / np.sqrt(var + 1e-5) * GAMMA + BETA, rtol=1e-10, atol=1e-12)


def test_per_example_grads_flow_across_the_batch():
    # Inside the vmap, an example's input gradient collects every example's
    # loss through the statistics: it is the total loss's gradient (JAX's rule).
    args = (f64(XB), f64(GAMMA), f64(BETA), f64(C))
    per = ft.vmap(ft.grad(per_example_loss), in_axes=(0, None, None, 0), axis_name="batch")(*args)
    close(per, ft.grad(batch_loss)(*args), rtol=1e-9, atol=1e-12)


def test_pmean_of_per_example_grads_is_the_batch_mean_grad():
    args = (f64(XB), f64(GAMMA), f64(BETA), f64(C))

    def step(x, gamma, beta, c):
        g = ft.grad(per_example_loss, argnums=(1, 2))(x, gamma, beta, c)
        return lax.pmean(g, "batch")

    got = ft.vmap(step, in_axes=(0, None, None, 0), axis_name="batch")(*args)
    expected = ft.grad(lambda g, b: batch_loss(args[0], g, b, args[3]) / 5, argnums=(0, 1))(
        args[1], args[2])
    for k in range(2):
        close(got[k], np.broadcast_to(np.array(expected[k]), (5, 3)), rtol=1e-9, atol=1e-12)


def test_grad_outside_the_vmap():
    args = (f64(XB), f64(GAMMA), f64(BETA), f64(C))

    def total(x, gamma, beta, c):
        per = ft.vmap(per_example_loss, in_axes=(0, None, None, 0), axis_name="batch")(
            x, gamma, beta, c)
        return fnp.sum(per)

    got = ft.grad(total, argnums=(0, 1, 2))(*args)
    expected = ft.grad(batch_loss, argnums=(0, 1, 2))(*args)
    for g, e in zip(got, expected):
        close(g, e, rtol=1e-9, atol=1e-12)


def test_jvp_and_pmax_derivative():
    x = f64([1.0, 4.0, 2.0])
    t = f64([0.5, 2.0, -1.0])
    out, tangent = ft.jvp(named(lambda v: lax.pmax(v, "i") * v), (x,), (t,))
    close(out, [4.0, 16.0, 8.0])
    close(tangent, 2.0 * np.array([1.0, 4.0, 2.0]) + 4.0 * np.array([0.5, 2.0, -1.0]))
    # Ties share the cotangent.
    g = ft.vmap(ft.grad(lambda v: lax.pmax(v, "i")), axis_name="i")(f64([3.0, 1.0, 3.0]))
    close(g, [1.5, 0.0, 1.5])


def test_gather_gradient_is_scatter():
    xs = f64([1.0, 2.0, 3.0])
    w = f64([0.0, 1.0, 2.0])
    g = ft.vmap(ft.grad(lambda v: fnp.sum(lax.all_gather(v, "i") ** 2 * w)), axis_name="i")(xs)
    close(g, [0.0, 12.0, 36.0])  # JAX's values


def test_hessian_through_psum():
    def energy(x):
        return fnp.sum(named(lambda v: lax.psum(v, "i") ** 3)(x))

    x = f64([0.5, -1.0, 2.0])
    s = 1.5
    close(ft.hessian(energy)(x), np.full((3, 3), 3 * 6 * s), rtol=1e-10)


# ----------------------------------------------------------------------------
# jit and control flow
# ----------------------------------------------------------------------------


def test_jit_of_named_vmap():
    args = (f64(XB), f64(GAMMA), f64(BETA), f64(C))
    f = ft.jit(ft.vmap(ft.grad(per_example_loss), in_axes=(0, None, None, 0),
                       axis_name="batch"))
    close(f(*args), ft.grad(batch_loss)(*args), rtol=1e-9, atol=1e-12)
    close(f(*args), ft.grad(batch_loss)(*args), rtol=1e-9, atol=1e-12)  # the cached trace
    assert f.trace_count == 1


def test_named_vmap_of_jit():
    f = ft.jit(lambda v: v - lax.pmean(v, "i") + lax.axis_index("i"))
    got = named(f)(f64(X))
    close(got, X - X.mean(0) + np.arange(4)[:, None])
    got = named(ft.jit(lambda v: lax.all_gather(v, "i")))(f64(X))
    close(got, np.broadcast_to(X, (4, 4, 3)))
    g = named(ft.grad(ft.jit(lambda v: lax.psum(v, "i") ** 2)))(f64([1.0, 2.0, 3.0]))
    close(g, [36.0, 36.0, 36.0])


def test_jitted_function_reused_for_a_new_axis_size():
    f = ft.jit(lambda v: v * lax.pmean(v, "i"))
    close(named(f)(f64(X)), X * X.mean(0))
    close(named(f)(f64(X[:2])), X[:2] * X[:2].mean(0))


def test_jitted_all_gather_follows_the_axis_size():
    f = ft.jit(lambda v: lax.all_gather(v, "i"))
    close(named(f)(f64(X)), np.broadcast_to(X, (4, 4, 3)))
    close(named(f)(f64(X[:2])), np.broadcast_to(X[:2], (2, 2, 3)))


def test_jitted_call_with_no_operand_on_the_axis():
    # Neither the jitted call nor the loop gets an operand that varies over
    # "i": the collectives inside still meet their axis.
    w = f64([1.0, 2.0])
    f = ft.jit(lambda w: lax.psum(w, "i") + lax.axis_index("i"))
    got = ft.vmap(lambda v: f(w) * v, axis_name="i")(f64(X[:, :2]))
    close(got, (4 * np.array([1.0, 2.0]) + np.arange(4)[:, None]) * X[:, :2])
    got = ft.vmap(lambda v: v * lax.fori_loop(0, 2, lambda k, c: c + lax.pmax(w * k, "i"), w),
                  axis_name="i")(f64(X[:, :2]))
    close(got, X[:, :2] * np.array([2.0, 4.0]))


def test_jit_of_a_collective_in_a_derivative():
    g = named(ft.grad(ft.jit(lambda v: lax.psum(v, "i") ** 2)))(f64([1.0, 2.0, 3.0]))
    close(g, [36.0, 36.0, 36.0])
    g = named(ft.grad(ft.jit(lambda v: fnp.sum(lax.all_gather(v, "i") ** 2 * f64([0, 1, 2])))))(
        f64([1.0, 2.0, 3.0]))
    close(g, [0.0, 12.0, 36.0])


def test_scan_and_cond_bodies():
    def f(v):
        def body(c, _):
            c = c - 0.5 * lax.pmean(c, "i")
            return c, lax.psum(c, "i")
        c, ys = lax.scan(body, v, None, length=3)
        return lax.cond(lax.axis_index("i") > 0, lambda c: c + lax.psum(c, "i"),
                        lambda c: c, c), ys

    (out, ys) = named(f)(f64(X))
    c = X.copy()
    sums = []
    for _ in range(3):
        c = c - 0.5 * c.mean(0)
        sums.append(c.sum(0))
    expected = np.where(np.arange(4)[:, None] > 0, c + c.sum(0), c)
    close(out, expected, rtol=1e-10, atol=1e-12)
    close(ys, np.broadcast_to(np.stack(sums), (4, 3, 3)), rtol=1e-10, atol=1e-12)


def test_while_loop_stopping_on_a_collective():
    def f(v):
        return lax.while_loop(lambda c: lax.pmax(c, "i") < 10.0, lambda c: c * 2.0, v)

    close(named(f)(f64([1.0, 3.0])), [4.0, 12.0])


def test_jit_outside_the_vmap_traces_once_inside_at_every_call():
    inner = ft.jit(lambda v: v * lax.psum(v, "i"))
    outer = ft.jit(named(lambda v: v * lax.psum(v, "i")))
    for _ in range(2):
        close(named(inner)(f64(X)), X * X.sum(0))
        close(outer(f64(X)), X * X.sum(0))
    assert outer.trace_count == 1 and inner.trace_count == 2


# ----------------------------------------------------------------------------
# Errors
# ----------------------------------------------------------------------------


def test_unbound_axis_name():
    x = f64(X)
    with pytest.raises(NameError, match="psum: unbound axis name: 'i'"):
        lax.psum(x, "i")
    with pytest.raises(NameError, match="pmean: unbound axis name: 'j'"):
        named(lambda v: lax.pmean(v, "j"))(x)
    with pytest.raises(NameError, match="axis_index: unbound axis name: 'k'"):
        named(lambda v: lax.axis_index(("i", "k")))(x)
    with pytest.raises(NameError, match="all_gather: unbound axis name"):
        ft.jit(lambda v: lax.all_gather(v, "i"))(x)
    with pytest.raises(NameError, match="unbound axis name: 'i'"):
        ft.vmap(lambda v: lax.psum(v, "i"))(x)  # an unnamed vmap


def test_bad_arguments():
    x = f64(X)
    with pytest.raises(ValueError, match=r"all_gather: axis 2 is out of range for an operand "
                                         r"of shape \(3,\)"):
        named(lambda v: lax.all_gather(v, "i", axis=2))(x)
    with pytest.raises(ValueError, match="all_gather: axis 1 is out of range"):
        named(lambda v: lax.all_gather(v, "i", axis=1, tiled=True))(x)
    with pytest.raises(ValueError, match="psum_scatter: scatter_dimension 0 of the operand of "
                                         r"shape \(3,\) has length 3, which must be equal to "
                                         "the size 4"):
        named(lambda v: lax.psum_scatter(v, "i"))(x)
    with pytest.raises(ValueError, match="a multiple of the size 4"):
        named(lambda v: lax.psum_scatter(v, "i", tiled=True))(x)
    with pytest.raises(TypeError, match="axis_name must be a hashable"):
        named(lambda v: lax.psum(v, ["i"]))(x)
    with pytest.raises(ValueError, match="repeated axis name"):
        named(lambda v: lax.psum(v, ("i", "i")))(x)
    with pytest.raises(NotImplementedError, match="axis_index_groups"):
        named(lambda v: lax.psum(v, "i", axis_index_groups=[[0, 1], [2, 3]]))(x)
    with pytest.raises(TypeError, match="vmap: axis_name must be hashable"):
        ft.vmap(lambda v: v, axis_name=["i"])
    with pytest.raises(ValueError, match="chunk_size cannot be combined with axis_name"):
        ft.vmap(lambda v: v, axis_name="i", chunk_size=2)


def test_ppermute_with_a_partial_permutation_gives_zeros():
    x = mx.array([1.0, 2.0, 3.0])
    f = ft.vmap(lambda r: lax.ppermute(r, "i", [(1, 2), (2, 0)]), axis_name="i")
    assert f(x).tolist() == [3.0, 0.0, 2.0]
    # Its transpose sends the cotangent back: example 1's input feeds example 2.
    g = ft.grad(lambda x: (f(x) * mx.array([10.0, 20.0, 30.0])).sum())(x)
    assert g.tolist() == [0.0, 30.0, 10.0]


def test_all_to_all_tiled_and_under_jit():
    x = mx.arange(24.0).reshape(2, 4, 3)  # per example: (4, 3), split into 2 blocks of 2
    f = ft.vmap(lambda r: lax.all_to_all(r, "i", 0, 1, tiled=True), axis_name="i")
    expected = np.stack([np.concatenate([np.array(x[j, 2 * i:2 * i + 2]) for j in range(2)],
                                        axis=1) for i in range(2)])
    assert np.array_equal(np.array(f(x)), expected)
    assert np.array_equal(np.array(ft.jit(f)(x)), expected)


def test_exchanges_over_two_nested_axes():
    x = mx.arange(6.0).reshape(2, 3)
    inner = lambda r: lax.pshuffle(r, ("i", "j"), [5, 4, 3, 2, 1, 0])  # noqa: E731
    got = ft.vmap(ft.vmap(inner, axis_name="j"), axis_name="i")(x)
    assert got.tolist() == [[5.0, 4.0, 3.0], [2.0, 1.0, 0.0]]
    size = ft.vmap(ft.vmap(lambda r: r * lax.axis_size(("i", "j")), axis_name="j"),
                   axis_name="i")(mx.ones((2, 3)))
    assert size.tolist() == [[6.0] * 3] * 2


def test_exchange_argument_errors():
    x = mx.ones((2, 3))
    with pytest.raises(ValueError, match="ppermute: perm"):
        ft.vmap(lambda r: lax.ppermute(r, "i", [(0, 1), (1, 1)]), axis_name="i")(x)
    with pytest.raises(ValueError, match="pshuffle: perm"):
        ft.vmap(lambda r: lax.pshuffle(r, "i", [0, 0]), axis_name="i")(x)
    with pytest.raises(ValueError, match="all_to_all: split_axis"):
        ft.vmap(lambda r: lax.all_to_all(r, "i", 0, 0), axis_name="i")(x)
    with pytest.raises(NameError):
        lax.axis_size("nope")
