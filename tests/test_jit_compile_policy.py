"""When ft.jit hands a graph to mx.compile (``compile_after``): at once,
after a signature has been in use for some seconds (uncompiled until then:
MLX's lazy graph of the lowered ops), or never; the same numbers either way;
the setting from ``ft.config`` or the environment."""

import logging
import time

import mlx.core as mx
import numpy as np
import pytest
from child import run_child

import ftorch as ft
import ftorch.nn.functional as F
import ftorch.numpy as fnp
from ftorch.config import config, seconds_before_compile


@pytest.fixture
def compiled_calls(monkeypatch):
    """Counts calls of the functions ``mx.compile`` makes (ft.jit and the
    graphs' ``lowered`` look it up on mlx.core at each use)."""
    calls = []
    real = mx.compile

    def counting(f, *args, **kwargs):
        compiled = real(f, *args, **kwargs)

        def call(*a, **k):
            calls.append(f)
            return compiled(*a, **k)

        return call

    monkeypatch.setattr(mx, "compile", counting)
    return calls


def f(x, y):
    return fnp.sum(fnp.tanh(x) * y), x * 2


X, Y = mx.array([0.5, -1.0, 2.0]), mx.array(3.0)


def check(out):
    want = f(X, Y)
    for a, b in zip(out, want):
        np.testing.assert_allclose(np.array(a), np.array(b), rtol=1e-6)


def test_zero_compiles_at_the_first_call(compiled_calls):
    g = ft.jit(f, compile_after=0)
    check(g(X, Y))
    assert len(compiled_calls) == 1


def test_never_runs_uncompiled_with_the_same_numbers(compiled_calls):
    g = ft.jit(f, compile_after=None)
    for _ in range(3):
        check(g(X, Y))
    assert compiled_calls == [] and g.trace_count == 1


def test_compiles_once_the_signature_has_been_in_use_long_enough(compiled_calls, caplog):
    g = ft.jit(f, compile_after=0.2)
    check(g(X, Y))
    check(g(X, Y))
    assert compiled_calls == []
    time.sleep(0.25)
    with caplog.at_level(logging.WARNING, logger="ftorch.jit"):
        config.log_compiles = True
        try:
            check(g(X, Y))
            check(g(X, Y))
        finally:
            config.log_compiles = False
    assert len(compiled_calls) == 2 and g.trace_count == 1
    assert sum("compiling a signature in use for" in r.message for r in caplog.records) == 1


def test_the_config_setting_is_the_default(compiled_calls):
    old = config.jit_compile_after
    try:
        config.jit_compile_after = None
        ft.jit(f)(X, Y)
        assert compiled_calls == []
        config.jit_compile_after = 0
        ft.jit(f)(X, Y)
        assert len(compiled_calls) == 1
    finally:
        config.jit_compile_after = old


def test_static_arguments_and_transforms_follow_the_setting(compiled_calls):
    # The general path (static arguments, calls under grad) runs jit_p's
    # implementation, which follows the same setting.
    g = ft.jit(lambda x, n: fnp.sum(x ** n), static_argnums=1, compile_after=None)
    assert g(X, 2).item() == pytest.approx(5.25)
    dg = ft.grad(lambda x: g(x, 3))(X)
    np.testing.assert_allclose(np.array(dg), 3 * np.array(X) ** 2, rtol=1e-6)
    assert compiled_calls == []


def test_auto_is_zero_off_the_cpu_and_a_delay_on_it():
    assert seconds_before_compile(None) is None and seconds_before_compile(1) == 1.0
    want = 60.0 if mx.default_device() == mx.cpu else 0.0
    assert seconds_before_compile("auto") == want


@pytest.mark.parametrize("bad", [-1, "soon", True])
def test_bad_settings_are_refused(bad):
    with pytest.raises(ValueError, match="compile_after must be"):
        ft.jit(f, compile_after=bad)


def test_environment_variable():
    out = run_child("""
        import os
        print(ft.config.jit_compile_after)
    """, env={"FTORCH_JIT_COMPILE_AFTER": "never"})
    assert out.strip() == "None"
    out = run_child("print(ft.config.jit_compile_after)", env={"FTORCH_JIT_COMPILE_AFTER": "2.5"})
    assert out.strip() == "2.5"


# --- graphs too deep for mx.compile ------------------------------------------


def _chain(n):
    """A function whose graph is a chain of about ``n`` equations."""
    def chain(x):
        for _ in range(n):
            x = fnp.tanh(x)
        return x
    return chain


def test_a_graph_deeper_than_the_limit_runs_uncompiled(compiled_calls, monkeypatch, caplog):
    monkeypatch.setattr(config, "jit_max_compile_depth", 50)
    x = mx.array([0.3, -0.2])
    want = np.array(_chain(60)(x))
    deep, shallow = ft.jit(_chain(60), compile_after=0), ft.jit(_chain(40), compile_after=0)
    with caplog.at_level(logging.WARNING, logger="ftorch.jit"):
        for _ in range(2):
            np.testing.assert_allclose(np.array(deep(x)), want, rtol=1e-5)
    # Nothing compiled ran: the executable found the graph too deep before
    # handing it to mx.compile, and runs the uncompiled lowering.
    assert compiled_calls == []
    assert len([r for r in caplog.records if "runs uncompiled" in r.getMessage()]) == 1
    assert "jit_max_compile_depth=50" in caplog.text
    shallow(x)
    shallow(x)
    assert len(compiled_calls) == 2  # below the limit: compiled as before


def test_a_graph_deeper_than_the_limit_gives_the_uncompiled_numbers(monkeypatch):
    # The same lowering as compile_after=None, so the same bits.
    monkeypatch.setattr(config, "jit_max_compile_depth", 50)
    x = mx.array([0.3, -0.2, 1.7])
    now, never = ft.jit(_chain(60), compile_after=0), ft.jit(_chain(60), compile_after=None)
    np.testing.assert_array_equal(np.array(now(x)), np.array(never(x)))


def test_the_depth_counts_a_scan_once_per_step():
    def loop(x):
        return ft.lax.scan(lambda c, _: (fnp.tanh(c), None), x, None, length=100)[0]
    assert ft.graph.depth(ft.make_graph(loop)(mx.ones(2))) >= 100


def test_a_20000_step_scan_runs_under_every_compile_policy():
    # mx.compile recursed past the C stack on such a scan unrolled (a segfault
    # from about 8,000 steps): at once with compile_after=0, and mid-run, when
    # the CPU default's delay ran out. It runs rolled under every policy, its
    # body compiled in chunks (not at all under None), with the same bits.
    out = run_child("""
        import importlib, time, ftorch.lax as lax
        importlib.import_module("ftorch.config").CPU_COMPILE_AFTER = 0.5  # "auto"'s delay
        H = 4
        def loss(w, xs):
            def cell(h, x):
                h = fnp.tanh(h @ w + x)
                return h, fnp.sum(h)
            h, ys = lax.scan(cell, mx.zeros((H,)), xs)
            return fnp.sum(ys) + fnp.sum(h)
        w = mx.array(np.linspace(-0.3, 0.3, H * H).reshape(H, H), mx.float32)
        xs = mx.array(np.sin(np.arange(20000 * H)).reshape(20000, H) * 0.1, mx.float32)
        f = ft.jit(ft.value_and_grad(loss))  # the policy: ft.config's, at each call
        values = []
        for policy in (None, "auto", "auto", 0):  # the second "auto" call is past the delay
            ft.config.jit_compile_after = policy
            v, g = f(w, xs)
            values.append((v.item(), np.array(g)))
        for v, g in values[1:]:  # the same lowering under every policy: the same bits
            assert v == values[0][0]
            np.testing.assert_array_equal(g, values[0][1])
        print("ok", f.trace_count)
    """, timeout=600)
    assert out.split() == ["ok", "1"]


# --- the tiers give the same bits -------------------------------------------


def _network(params, x):
    """An MLP using every activation the CPU lowering approximates."""
    h = fnp.tanh(x @ params["w1"] + params["b1"])
    h = F.gelu(h @ params["w2"]) + F.gelu(h @ params["w2"], approximate=True)
    return fnp.sum(F.sigmoid(h @ params["w3"]) * fnp.erf(h @ params["w3"]))


def _network_inputs():
    rng = np.random.default_rng(0)
    def normal(*shape):
        return mx.array(rng.normal(0, 1, shape).astype(np.float32))
    return {"w1": normal(8, 16), "b1": normal(16), "w2": normal(16, 16),
            "w3": normal(16, 4)}, normal(32, 8) * 2.0


def _bits(tree_):
    return [np.array(leaf).tobytes() for leaf in ft.tree.leaves(tree_)]


@pytest.mark.cpu_only("the CPU lowering's fast math is what could differ")
@pytest.mark.parametrize("fast_cpu_math", [True, False], ids=["fast_math", "mlx_math"])
def test_compiled_and_uncompiled_tiers_agree_bit_for_bit(fast_cpu_math, monkeypatch):
    monkeypatch.setattr(config, "fast_cpu_math", fast_cpu_math)
    params, x = _network_inputs()
    step = ft.value_and_grad(_network)
    compiled, never = ft.jit(step, compile_after=0), ft.jit(step, compile_after=None)
    want = _bits(compiled(params, x))
    assert _bits(never(params, x)) == want
    # jit under grad: jit_p's derived graphs, each in its tier.
    def outer(policy):
        inner = ft.jit(_network, compile_after=policy)
        return ft.jit(ft.grad(lambda p: inner(p, x)), compile_after=policy)(params)
    assert _bits(outer(0)) == _bits(outer(None))
    # A delayed policy: the same bits before and after the signature compiles.
    delayed = ft.jit(step, compile_after=0.1)
    before = _bits(delayed(params, x))
    time.sleep(0.15)
    assert _bits(delayed(params, x)) == before == want
    assert _bits(delayed(params, x)) == want


def test_each_signature_compiles_on_its_own_clock(caplog):
    # Two shapes of one input structure share a compiled dispatcher, but each
    # compiles once it has been in use for the delay, and a call of one never
    # runs the other's graph.
    g = ft.jit(f, compile_after=0.2)
    X2 = mx.array([1.0, -2.0])
    with caplog.at_level(logging.WARNING, logger="ftorch.jit"):
        config.log_compiles = True
        try:
            check(g(X, Y))
            time.sleep(0.25)
            for _ in range(3):  # X's signature compiled; X2's new, uncompiled
                check(g(X, Y))
                out = g(X2, Y)
                np.testing.assert_allclose(np.array(out[0]), np.array(f(X2, Y)[0]), rtol=1e-6)
            assert sum("compiling a signature" in r.message for r in caplog.records) == 1
            time.sleep(0.25)
            g(X2, Y)
            check(g(X, Y))
        finally:
            config.log_compiles = False
    assert sum("compiling a signature" in r.message for r in caplog.records) == 2
    assert g.trace_count == 2


def test_uncompiled_steps_do_not_chain_their_lazy_outputs():
    # A training loop that reads only the loss: outputs the next loss does not
    # need (batch-norm statistics, here an average of activations) must not
    # stay lazy, each step's graph holding the previous one's activations.
    def step(w, ema, x):
        h = fnp.tanh(x @ w)
        loss, g = ft.value_and_grad(lambda w: fnp.sum(fnp.tanh(x @ w) ** 2))(w)
        return w - 0.01 * g, 0.9 * ema + 0.1 * fnp.mean(h, axis=0), loss

    step = ft.jit(step, compile_after=None)
    w, ema, x = mx.ones((64, 64)) / 64, mx.zeros(64), mx.ones((256, 64))
    for _ in range(5):
        w, ema, loss = step(w, ema, x)
        loss.item()
    mx.eval(w, ema)
    before = mx.get_active_memory()
    for _ in range(50):
        w, ema, loss = step(w, ema, x)
        loss.item()
    grown = mx.get_active_memory() - before
    assert grown < 256 * 64 * 4 * 5, f"active memory grew by {grown} bytes over 50 steps"
