"""JAX's top-level names beyond the transforms: running and waiting, host
transfers, devices, caches and settings (ftorch/runtime.py), host callbacks,
custom_gradient, closure_convert, linear_transpose and jacobian."""

import logging

import mlx.core as mx
import numpy as np
import pytest

import ftorch as ft
import ftorch.numpy as fnp


def test_disable_jit_runs_the_function_eagerly():
    seen = []

    @ft.jit
    def f(x):
        seen.append(type(x).__name__)
        return x * 2

    with ft.disable_jit():
        assert f(mx.array(3.0)).item() == 6.0
    assert seen == ["array"] and f.trace_count == 0
    f(mx.array(3.0))
    assert f.trace_count == 1 and seen[-1] != "array"
    assert not ft.config.disable_jit


def test_clear_caches_retraces():
    f = ft.jit(lambda x: x + 1)
    f(mx.ones(2))
    ft.clear_caches()
    assert f.cache_size() == 0
    f(mx.ones(2))
    assert f.trace_count == 2


def test_log_compiles_context(caplog):
    f = ft.jit(lambda x: x - 1)
    with caplog.at_level(logging.WARNING, logger="ftorch.jit"), ft.log_compiles():
        f(mx.ones(3))
    assert any("x - 1" in r.getMessage() or "lambda" in r.getMessage() for r in caplog.records)
    assert not ft.config.log_compiles


def test_ensure_compile_time_eval_gives_concrete_values_under_jit():
    table = mx.array([1.0, 2.0, 3.0])

    @ft.jit
    def f(x):
        with ft.ensure_compile_time_eval():
            biggest = float(table.max())  # would be a ConcretizationError without it
        return x * biggest + table.sum()

    assert f(mx.array(2.0)).item() == 12.0


def test_transfers_and_devices():
    x = ft.device_put({"a": np.arange(3, dtype=np.float32), "b": 2.0}, mx.cpu)
    assert isinstance(x["a"], mx.array) and isinstance(x["b"], mx.array)
    back = ft.device_get(x)
    assert isinstance(back["a"], np.ndarray) and back["a"].tolist() == [0.0, 1.0, 2.0]
    assert ft.block_until_ready(x) is x
    assert ft.devices() == [mx.default_device()] == ft.local_devices()
    assert ft.device_count() == ft.local_device_count() == 1
    assert ft.default_backend() in ("cpu", "gpu")
    assert ft.devices("cpu") == [mx.Device(mx.cpu)]
    assert ft.process_index() == 0 and ft.process_count() == 1
    with ft.default_device(mx.cpu):
        assert (mx.ones(2) * 2).tolist() == [2.0, 2.0]
    with pytest.raises(TypeError, match="device_put"):
        ft.device_put(1.0, "cuda:0")
    with pytest.raises(TypeError, match="device_get"):
        ft.jit(lambda x: ft.device_get(x))(mx.ones(1))


def test_make_jaxpr_typeof_and_names():
    graph, shape = ft.make_jaxpr(lambda x: x.sum(), return_shape=True)(mx.ones((2, 3)))
    assert "sum" in str(graph) and shape == ft.ShapeDtypeStruct((), mx.float32)
    assert ft.typeof(mx.zeros((2,), mx.int8)) == ft.ShapeDtypeStruct((2,), mx.int8)
    assert ft.jit(lambda x: mx.array(ft.typeof(x).shape[0]))(mx.ones(4)).item() == 4
    with ft.named_scope("block"):
        assert ft.named_call(lambda x: x * 3, name="triple")(mx.array(2.0)).item() == 6.0
    assert "mlx" in ft.print_environment_info(return_string=True)


# ----------------------------------------------------------------------------
# pure_callback
# ----------------------------------------------------------------------------


def _host_cumsum(x, vmap_method=None):
    return ft.pure_callback(lambda a: np.cumsum(a, axis=-1).astype(a.dtype),
                            ft.ShapeDtypeStruct(x.shape, x.dtype), x, vmap_method=vmap_method)


def test_pure_callback_under_jit_scan_and_vmap():
    x = mx.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    expected = np.cumsum(np.array(x), axis=-1)
    assert np.array_equal(np.array(ft.jit(_host_cumsum)(x)), expected)
    for method in ("sequential", "expand_dims", "broadcast_all"):
        got = ft.jit(ft.vmap(lambda r, m=method: _host_cumsum(r, m)))(x)
        assert np.array_equal(np.array(got), expected)
    _, ys = ft.lax.scan(lambda c, r: (c, _host_cumsum(r)), mx.array(0.0), x)
    assert np.array_equal(np.array(ys), expected)


def test_pure_callback_pytrees_kwargs_and_errors():
    out = ft.pure_callback(lambda a, scale: {"y": a * scale},
                           {"y": ft.ShapeDtypeStruct((2,), mx.float32)}, mx.ones(2), scale=3.0)
    assert out["y"].tolist() == [3.0, 3.0]
    with pytest.raises(NotImplementedError, match="vmap_method"):
        ft.vmap(_host_cumsum)(mx.ones((2, 2)))
    with pytest.raises(TypeError, match="no derivative"):
        ft.grad(lambda x: _host_cumsum(x).sum())(mx.ones(2))
    with pytest.raises(ValueError, match="shape"):
        ft.pure_callback(lambda a: a[:1], ft.ShapeDtypeStruct((2,), mx.float32), mx.ones(2))
    with pytest.raises(ValueError, match="vmap_method"):
        ft.pure_callback(np.sin, ft.ShapeDtypeStruct((), mx.float32), 1.0, vmap_method="x")


def test_pure_callback_with_a_custom_jvp():
    @ft.custom_jvp
    def host_sin(x):
        return ft.pure_callback(np.sin, ft.ShapeDtypeStruct(x.shape, x.dtype), x,
                                vmap_method="sequential")

    host_sin.defjvp(lambda p, t: (host_sin(p[0]), fnp.cos(p[0]) * t[0]))
    x = mx.array([0.0, 1.0])
    assert np.allclose(np.array(ft.vmap(ft.grad(host_sin))(x)), np.cos([0.0, 1.0]))


# ----------------------------------------------------------------------------
# custom_gradient, closure_convert, linear_transpose, jacobian
# ----------------------------------------------------------------------------


def test_custom_gradient_two_arguments_under_jit_and_vmap():
    @ft.custom_gradient
    def f(x, y):
        return x * y, lambda g: (g * 10.0, g * 100.0)

    gx, gy = ft.grad(f, argnums=(0, 1))(mx.array(2.0), mx.array(3.0))
    assert (gx.item(), gy.item()) == (10.0, 100.0)
    g = ft.jit(ft.vmap(ft.grad(lambda x: f(x, x))))(mx.array([1.0, 2.0]))
    assert g.tolist() == [110.0, 110.0]
    with pytest.raises(TypeError):
        ft.jvp(lambda x: f(x, x), (mx.array(1.0),), (mx.array(1.0),))
    with pytest.raises(TypeError, match="custom_gradient"):
        ft.custom_gradient(lambda x: x)(mx.array(1.0))


def test_closure_convert_feeds_custom_vjp():
    def loss(w):
        converted, consts = ft.closure_convert(lambda x: fnp.sin(w * x), mx.array(1.0))
        assert len(consts) == 1

        @ft.custom_vjp
        def call(x, *consts):
            return converted(x, *consts)

        def fwd(x, *consts):
            return call(x, *consts), (x, consts)

        def bwd(res, ct):
            x, consts = res
            _, pullback = ft.vjp(converted, x, *consts)
            return pullback(ct)

        call.defvjp(fwd, bwd)
        return call(mx.array(0.5), *consts)

    w = mx.array(2.0)
    assert np.isclose(ft.grad(loss)(w).item(), 0.5 * np.cos(1.0))
    converted, consts = ft.closure_convert(lambda x: x * 2.0, mx.ones(2))
    assert consts == [] and converted(mx.ones(2)).tolist() == [2.0, 2.0]


def test_linear_transpose_and_jacobian():
    a = mx.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    t = ft.linear_transpose(lambda x: a @ x, ft.ShapeDtypeStruct((2,), mx.float32))
    (ct,) = t(mx.array([1.0, 0.0, 1.0]))
    assert ct.tolist() == [6.0, 8.0]
    with pytest.raises(TypeError, match="linear_transpose"):
        ft.linear_transpose(lambda x: x, mx.array([1, 2]))
    assert ft.jacobian is ft.jacrev
