"""ft.debug (print, callback, breakpoint), ft.named_scope and the NaN/Inf
checks (ft.config.debug_nans / debug_infs). JAX is the oracle for what
jax.debug.print prints under jit, vmap, grad and scan."""

import inspect
import io
import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import mlx.core as mx
import numpy as np
import pytest

import ftorch as ft
import ftorch.lax as lax
import ftorch.numpy as fnp
from ftorch.core import primitive

# --------------------------------------------------------------------------
# debug.print against jax.debug.print
# --------------------------------------------------------------------------


def _scenarios(dbg, np_, lax_, T):
    """The same programs written against JAX or ftorch (``T``: the
    transform namespace, jax or ft)."""
    def f(x):
        dbg.print("x={x} sum={s}", x=x, s=np_.sum(x))
        return np_.sum(np_.sin(x) * 2.0)

    def body(c, x):
        dbg.print("step {} carry {}", x, c)
        return c * 2.0 + x, None

    def loop(c):
        return lax_.scan(body, c, np_.arange(3.0))[0]

    def ordered(x):
        dbg.print("first {}", x)
        y = x * 2.0
        dbg.print("second {}", y)
        return y

    def plain(x):
        dbg.print("values", x, np_.sum(x), skip_format_check=True, ordered=True)
        dbg.print(ordered=True)("two-call {a}", a=x * 2.0)
        return x

    return {
        "jit": lambda x: T.jit(f)(x),
        "no placeholders, two-call form": lambda x: T.jit(plain)(x),
        "vmap": lambda x: T.vmap(f)(np_.stack([x, x + 1.0])),
        "jit of vmap": lambda x: T.jit(T.vmap(f))(np_.stack([x, x * 3.0])),
        "grad": lambda x: T.grad(f)(x),
        "jit of grad": lambda x: T.jit(T.grad(f))(x),
        "scan": lambda x: T.jit(loop)(np_.sum(x)),
        "ordered": lambda x: T.jit(ordered)(x),
    }


@pytest.mark.parametrize("name", list(_scenarios(ft.debug, fnp, lax, ft)))
def test_debug_print_prints_what_jax_prints(name, capsys):
    x = np.array([0.5, -1.0, 2.0], np.float32)
    _scenarios(jax.debug, jnp, jax.lax, jax)[name](jnp.asarray(x))
    jax.effects_barrier()
    expected = capsys.readouterr().out
    ft.block_until_ready(_scenarios(ft.debug, fnp, lax, ft)[name](mx.array(x)))
    got = capsys.readouterr().out
    assert got == expected and got


def test_print_runs_at_every_call_not_at_trace(capsys):
    f = ft.jit(lambda x: (ft.debug.print("called with {}", x), x + 1.0)[1])
    for v in (1.0, 2.0, 3.0):
        f(mx.array(v))
    assert capsys.readouterr().out.splitlines() == [
        "called with 1.0", "called with 2.0", "called with 3.0"]
    assert f.trace_count == 1


def test_callback_runs_once_per_example_under_vmap():
    seen = []

    def f(x):
        ft.debug.callback(lambda v, scale: seen.append((v.tolist(), scale)), x, scale="k")
        return x * 2.0

    out = ft.jit(ft.vmap(f))(mx.arange(6.0).reshape(3, 2))
    assert out.shape == (3, 2)
    assert seen == [([0.0, 1.0], "k"), ([2.0, 3.0], "k"), ([4.0, 5.0], "k")]
    seen.clear()
    ft.vmap(ft.vmap(f))(mx.zeros((2, 3, 2)))
    assert len(seen) == 6  # nested vmaps: once per (i, j)


def test_equal_callbacks_all_run():
    calls = []
    record = lambda v: calls.append(float(v))  # noqa: E731

    @ft.jit
    def f(x):
        for _ in range(3):  # the same function on the same value: not merged
            ft.debug.callback(record, x)
        ft.debug.callback(record, 7.0)  # constant operands: not folded at trace time
        return x

    f(mx.array(1.0))
    f(mx.array(2.0))
    assert calls == [1.0, 1.0, 1.0, 7.0, 2.0, 2.0, 2.0, 7.0]


def test_callback_in_loops_and_branches():
    seen = []

    def f(x):
        def body(c):
            ft.debug.callback(lambda i: seen.append(("while", int(i))), c[0])
            return c[0] + 1, c[1] * 2.0
        _, y = lax.while_loop(lambda c: c[0] < 3, body, (0, x))
        return lax.cond(y > 5.0,
                        lambda v: (ft.debug.callback(lambda a: seen.append(("big", float(a))), v),
                                   v)[1],
                        lambda v: (ft.debug.callback(lambda a: seen.append(("small", float(a))),
                                                     v), v)[1], y)

    ft.jit(f)(mx.array(1.0))
    assert seen == [("while", 0), ("while", 1), ("while", 2), ("big", 8.0)]


def test_pure_callback_runs_per_example_or_once_as_vmap_method_says():
    calls = []

    def host(a):
        calls.append(a.shape)
        return np.cos(a)

    def f(method):
        return lambda x: ft.pure_callback(host, ft.ShapeDtypeStruct(x.shape, x.dtype), x,
                                          vmap_method=method)

    x = mx.arange(8.0).reshape(4, 2)
    for method, expected in (("sequential", [(2,)] * 4), ("expand_dims", [(4, 2)]),
                             ("broadcast_all", [(4, 2)])):
        calls.clear()
        got = ft.jit(ft.vmap(f(method)))(x)
        np.testing.assert_allclose(np.array(got), np.cos(np.array(x)), rtol=1e-6)
        assert calls == expected, method


def test_breakpoint_opens_pdb_with_the_run_time_values(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.StringIO("p y.tolist()\np label\nc\n"))

    @ft.jit
    def f(x):
        y = x * 3.0
        label = "here"  # noqa: F841  (a local the debugger shows)
        ft.debug.breakpoint()
        return y

    assert f(mx.array([1.0, 2.0])).tolist() == [3.0, 6.0]
    out = capsys.readouterr().out
    assert "[3.0, 6.0]" in out and "'here'" in out and "test_debug.py" in out


def test_debug_log_records_the_callers_line(caplog):
    caplog.set_level("INFO", logger="ftorch.debug")
    ft.jit(lambda x: ft.debug.log("x = {}", x) or x)(mx.array(2.0))
    (record,) = caplog.records
    assert record.getMessage() == "x = 2.0" and record.levelname == "INFO"
    assert record.pathname == __file__ and record.lineno == inspect.currentframe().f_lineno - 3


def test_debug_print_rejects_a_bad_format():
    with pytest.raises(ValueError, match=r"keyword arguments \['y'\] are not used"):
        ft.debug.print("{x}", x=mx.ones(1), y=mx.ones(1))
    with pytest.raises(ValueError, match="asks for"):
        ft.debug.print("{} {}", mx.ones(1))
    with pytest.raises(ValueError, match=r"positional arguments \[1\] are not used"):
        ft.debug.print("{}", mx.ones(1), mx.ones(1))
    with pytest.raises(ValueError, match="bad format string"):
        ft.debug.print("{", mx.ones(1))
    with pytest.raises(TypeError, match="fmt must be a str"):
        ft.debug.print(3)


# --------------------------------------------------------------------------
# named_scope
# --------------------------------------------------------------------------


def test_named_scopes_appear_in_graphs_nested_and_as_decorators():
    @ft.named_scope("head")
    def head(x):
        return fnp.tanh(x)

    def f(x):
        with ft.named_scope("model"):
            with ft.named_scope("layer1"):
                y = x * 2.0
            return head(y)

    text = str(ft.make_graph(f)(mx.ones(2)))
    assert "multiply a 2.0  # model/layer1" in text
    assert "tanh b  # model/head" in text
    # Derived graphs keep the scopes of the operations they come from.
    from ftorch.transforms.vjp import vjp_graph
    _, bwd, _ = vjp_graph(ft.make_graph(f)(mx.ones(2)))
    assert all(e.provenance.scope[0] == "model" for e in bwd.eqns)
    with pytest.raises(TypeError, match="name must be a str"):
        with ft.named_scope(3):
            pass


# --------------------------------------------------------------------------
# debug_nans / debug_infs
# --------------------------------------------------------------------------


def _line_of(fn, text):
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(lines) if text in line)


def _loss(x):
    with ft.named_scope("block"):
        y = fnp.sqrt(x)  # the NaN (negative x) or the infinite gradient (x = 0)
    return fnp.sum(y * 2.0)


SQRT_LINE = _line_of(_loss, "fnp.sqrt(x)")


@pytest.mark.parametrize("how", ["eager", "jit", "vmap of jit", "jit of vmap"])
def test_a_nan_is_reported_at_its_line(how):
    x = mx.array([4.0, -1.0])
    run = {"eager": lambda: _loss(x), "jit": lambda: ft.jit(_loss)(x),
           "vmap of jit": lambda: ft.vmap(ft.jit(_loss))(x[:, None]),
           "jit of vmap": lambda: ft.jit(ft.vmap(_loss))(x[:, None])}[how]
    with ft.debug_nans():
        with pytest.raises(FloatingPointError) as info:
            run()
    message = str(info.value)
    assert message.startswith("debug_nans: the result of sqrt (operands f32[")
    assert f"test_debug.py:{SQRT_LINE} (y = fnp.sqrt(x)" in message
    assert "in _loss, in scope 'block'" in message
    assert "backward" not in message


@pytest.mark.parametrize("how", ["grad", "jit of grad", "grad of jit"])
def test_a_backward_pass_infinity_names_the_rule(how):
    x = mx.array([0.0, 1.0])
    run = {"grad": lambda: ft.grad(_loss)(x), "jit of grad": lambda: ft.jit(ft.grad(_loss))(x),
           "grad of jit": lambda: ft.grad(ft.jit(_loss))(x)}[how]
    with ft.debug_infs():
        with pytest.raises(FloatingPointError) as info:
            run()
    message = str(info.value)
    assert "holds an infinity" in message
    assert f"test_debug.py:{SQRT_LINE}" in message
    assert "in the backward pass (the VJP rule of sqrt)" in message


def test_a_forward_pass_nan_under_grad_says_so():
    with ft.debug_nans():
        with pytest.raises(FloatingPointError, match="in the forward pass"):
            ft.grad(_loss)(mx.array([-1.0]))
        with pytest.raises(FloatingPointError, match="in the forward pass"):
            ft.grad(ft.jit(_loss))(mx.array([-1.0]))


def test_no_report_without_a_nan_and_nothing_left_installed():
    with ft.debug_nans(), ft.debug_infs():
        assert ft.jit(ft.grad(_loss))(mx.array([4.0])).item() == pytest.approx(0.5)
        assert primitive._observer is not None
    assert primitive._observer is None
    assert not ft.config.debug_nans
    assert _loss(mx.array([-1.0])).item() != _loss(mx.array([-1.0])).item()  # NaN, unchecked


def test_config_flag_and_environment_variable(tmp_path):
    ft.config.debug_nans = True
    try:
        with pytest.raises(FloatingPointError):
            fnp.log(mx.array([-1.0]))
    finally:
        ft.config.debug_nans = False
    fnp.log(mx.array([-1.0]))  # off again
    script = "import ftorch.numpy as fnp, mlx.core as mx\nfnp.log(mx.array([-2.0]))\n"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env={**os.environ, "FTORCH_DEBUG_NANS": "1"}, cwd=tmp_path, timeout=120)
    assert done.returncode != 0 and "FloatingPointError: debug_nans: the result of log" in \
        done.stderr


def test_debug_print_works_with_jit_disabled(capsys):
    f = ft.jit(lambda x: (ft.debug.print("v {}", x), x)[1])
    with ft.disable_jit():
        f(mx.array(2.0))
    assert capsys.readouterr().out == "v 2.0\n" and f.trace_count == 0
