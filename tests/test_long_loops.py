"""Long loops under jit: a scan run rolled (chunks of its body compiled once
and called from Python) and a while_loop checking its condition once per
chunk of masked iterations, against eager and against the unrolled lowering,
under grad, jvp, vmap and every compile policy; and a 100,000-step scan in a
child process, where an unrolled graph used to overflow the C stack.

Most checks run with MLX's compiler off (the chunk logic is the same; each
fused kernel would be a g++ run); ``test_rolled_scan_compiled`` compiles.
"""

import contextlib
import importlib

import mlx.core as mx
import numpy as np
import pytest
from child import run_child
from harness import compiler_off, floats
from hypothesis import given
from hypothesis import strategies as st
from test_lax_control_flow import SCAN_VARIANTS, f64, same, sum_squares

import ftorch as ft
import ftorch.lax as lax
import ftorch.numpy as fnp

loops = importlib.import_module("ftorch.primitives.loops")


@contextlib.contextmanager
def rolled(k=None):
    """Every scan of more than one step runs rolled, in chunks of ``k``
    steps (``None``: as the body's size says); yields the chunk size of each
    call of the rolled driver."""
    calls = []
    original = loops._rolled_loop

    def recording(loop, consts, carry, xs, length, reverse, unroll):
        calls.append(min(loops._chunk_steps(loop, unroll), length))
        return original(loop, consts, carry, xs, length, reverse, unroll)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(loops, "UNROLL_MAX_EQNS", 0)
        patch.setattr(loops, "UNROLL_MAX_STEPS", 1)
        patch.setattr(loops, "_rolled_loop", recording)
        if k is not None:
            patch.setattr(loops, "CHUNK_EQNS", 10 ** 6)
            patch.setattr(loops, "MAX_CHUNK_STEPS", k)
        yield calls


ROLLABLE = sorted(n for n in SCAN_VARIANTS if not n.startswith("length-zero")
                  and n != "unroll-arg")


@pytest.mark.parametrize("name", ROLLABLE)
@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize("policy", [0, None, "auto"])
@given(data=st.data())
def test_rolled_scan_matches_eager_in_value_grad_jvp_and_vmap(name, k, policy, data):
    fn, _, shapes = SCAN_VARIANTS[name]
    args = tuple(f64(data.draw(floats(s, -1.5, 1.5))) for s in shapes)
    loss = sum_squares(fn)
    argnums = tuple(range(len(args)))
    tangents = tuple(a * 0.5 - 0.25 for a in args)
    batch = tuple(fnp.stack([a, a * 0.5, -a]) for a in args)
    with compiler_off(), rolled(k) as calls:
        same(ft.jit(fn, compile_after=policy)(*args), fn(*args))
        same(ft.jit(ft.grad(loss, argnums=argnums), compile_after=policy)(*args),
             ft.grad(loss, argnums=argnums)(*args), 1e-10, 1e-12)
        same(ft.jit(lambda *a: ft.jvp(fn, a, tangents), compile_after=policy)(*args),
             ft.jvp(fn, args, tangents), 1e-10, 1e-12)
        same(ft.jit(ft.vmap(fn), compile_after=policy)(*batch), ft.vmap(fn)(*batch))
    assert calls and set(calls) <= {k, 1, 2}  # chunks of k (or of the steps left)


def test_rolled_scan_with_a_length_not_a_multiple_of_the_chunk():
    def f(w, xs):
        h, ys = lax.scan(lambda h, x: (fnp.tanh(h * w + x), h * x), fnp.zeros(2, fnp.float64),
                         xs, reverse=True)
        return fnp.sum(h) + fnp.sum(ys * ys)

    w, xs = f64([0.5, -0.7]), f64(np.sin(np.arange(22.0)).reshape(11, 2))
    with compiler_off(), rolled(4) as calls:
        same(ft.jit(ft.value_and_grad(f, argnums=(0, 1)))(w, xs),
             ft.value_and_grad(f, argnums=(0, 1))(w, xs), 1e-12, 1e-14)
    assert calls == [4, 4]  # the forward scan and the backward one


def test_unroll_sets_the_chunk_and_true_unrolls_in_full():
    def f(c, xs, unroll):
        return lax.scan(lambda c, x: (fnp.tanh(c + x), c), c, xs, unroll=unroll)

    c, xs = f64([0.1, 0.2]), f64(np.ones((7, 2)))
    with compiler_off(), rolled() as calls:
        same(ft.jit(f, static_argnums=2)(c, xs, 3), f(c, xs, 3))
        assert calls == [3]
        same(ft.jit(f, static_argnums=2)(c, xs, True), f(c, xs, True))
    assert calls == [3]  # unroll=True: inlined into the compiled graph


def test_rolled_scan_nested_and_around_a_while_loop():
    def f(w, xs):
        def outer(c, row):
            inner, _ = lax.scan(lambda a, x: (fnp.tanh(a * w + x), None), c, row)
            n = lax.while_loop(lambda v: v[0] < 3, lambda v: (v[0] + 1, v[1] * 0.5),
                               (mx.array(0), inner))[1]
            return n + c, fnp.sum(n)
        return lax.scan(outer, fnp.zeros(3, fnp.float64), xs)

    w = f64([0.3, -0.4, 0.9])
    xs = f64(np.cos(np.arange(60.0)).reshape(5, 4, 3))
    with compiler_off(), rolled(2) as calls:
        for policy in (0, None):
            same(ft.jit(f, compile_after=policy)(w, xs), f(w, xs))
    assert len(calls) >= 2


def test_rolled_scan_compiled():
    # The compiler on: chunks of 16 steps (and one of 2) as mx.compile'd functions.
    def loss(w, xs):
        h, _ = lax.scan(lambda h, x: (fnp.tanh(h @ w + x), None), fnp.zeros((2, 4)), xs)
        return fnp.sum(h * h)

    w = mx.array(np.linspace(-0.5, 0.5, 16).reshape(4, 4), mx.float32)
    xs = mx.array(np.sin(np.arange(50 * 8.0)).reshape(50, 2, 4), mx.float32)
    with rolled(16) as calls:
        value, grad = ft.jit(ft.value_and_grad(loss), compile_after=0)(w, xs)
        never = ft.jit(ft.value_and_grad(loss), compile_after=None)(w, xs)
    assert 16 in calls
    want_value, want_grad = ft.value_and_grad(loss)(w, xs)
    np.testing.assert_allclose(value.item(), want_value.item(), rtol=1e-5)
    np.testing.assert_allclose(np.array(grad), np.array(want_grad), rtol=1e-4, atol=1e-6)
    assert value.item() == never[0].item()  # the same lowering: the same bits
    np.testing.assert_array_equal(np.array(grad), np.array(never[1]))


def test_rolled_scan_compiles_a_fixed_number_of_chunks_whatever_the_length(monkeypatch):
    # The chunk functions are made once per chunk size, not per step: a
    # longer loop only calls them more times.
    made = []
    original = loops._chunk_function

    def counting(loop, n_consts, n_carry, k, reverse):
        key = ("rolled chunk", n_consts, n_carry, k, reverse)
        if key not in loop.derived:
            made.append(k)
        return original(loop, n_consts, n_carry, k, reverse)

    monkeypatch.setattr(loops, "_chunk_function", counting)
    for n in (1000, 5000):
        def f(c, xs):
            return lax.scan(lambda c, x: (fnp.tanh(c * 0.9 + x), None), c, xs)[0]
        with compiler_off():
            ft.jit(f, compile_after=0)(mx.zeros(3), mx.ones((n, 3)))
    k = made[0]  # as the body's size says
    assert k > 1 and made == [k, 1000 % k, k, 5000 % k]


# --- while_loop: chunks of masked iterations ----------------------------------


@pytest.mark.parametrize("k", [1, 3, 16])
@given(start=st.integers(-5, 40), limit=st.integers(0, 30))
def test_while_loop_chunks_give_the_exact_trip_count(k, start, limit):
    def f(i, x):
        return lax.while_loop(lambda c: c[0] < limit,
                              lambda c: (c[0] + 1, fnp.tanh(c[1] * 0.9 + 0.1)), (i, x))

    x = f64([0.2, -0.3])
    want = f(mx.array(start), x)
    with compiler_off(), pytest.MonkeyPatch.context() as patch:
        patch.setattr(loops, "MAX_WHILE_CHUNK_STEPS", k)
        for policy in (0, None):
            same(ft.jit(f, compile_after=policy)(mx.array(start), x), want)
        # forward mode and a batched condition, chunked the same way
        t = f64([1.0, 0.5])
        same(ft.jit(lambda x, t: ft.jvp(lambda x: f(mx.array(start), x), (x,), (t,)))(x, t),
             ft.jvp(lambda x: f(mx.array(start), x), (x,), (t,)))
        starts = mx.array([start, start + 3, start - 7])
        same(ft.jit(ft.vmap(f, in_axes=(0, None)))(starts, x),
             ft.vmap(f, in_axes=(0, None))(starts, x))


def test_while_loop_checks_the_host_once_per_chunk(monkeypatch):
    monkeypatch.setattr(loops, "MAX_WHILE_CHUNK_STEPS", 8)
    reads = []
    original = loops._while_chunk

    def counting(*args):
        chunk = original(*args)

        def call(*ops):
            reads.append(None)
            return chunk(*ops)
        return call

    monkeypatch.setattr(loops, "_while_chunk", counting)
    f = ft.jit(lambda x: lax.while_loop(lambda c: c[0] < 100, lambda c: (c[0] + 1, c[1] * 0.5),
                                        (mx.array(0), x)), compile_after=0)
    with compiler_off():
        n, _ = f(mx.ones(2))
    assert n.item() == 100
    assert len(reads) == 13  # ceil(100 / 8) chunks, not 100 host reads


# --- no length crashes the process ---------------------------------------------


def test_a_100000_step_scan_runs_and_differentiates_under_jit():
    out = run_child("""
        import ftorch.lax as lax
        H, T = 8, 100_000
        def loss(w, xs):
            def cell(h, x):
                return fnp.tanh(h @ w + x), None
            h, _ = lax.scan(cell, mx.zeros((2, H)), xs)
            return fnp.sum(h * h)
        w = mx.array(np.linspace(-0.3, 0.3, H * H).reshape(H, H), mx.float32)
        xs = mx.array(np.sin(np.arange(T * 2 * H)).reshape(T, 2, H) * 0.1, mx.float32)
        results = []
        for policy in (0, "auto"):
            v, g = ft.jit(ft.value_and_grad(loss), compile_after=policy)(w, xs)
            results.append((v.item(), np.array(g)))
        assert np.isfinite(results[0][0]) and np.isfinite(results[0][1]).all()
        assert results[0][0] == results[1][0]
        np.testing.assert_array_equal(results[0][1], results[1][1])
        print("ok")
    """, timeout=600)
    assert out.split() == ["ok"]
