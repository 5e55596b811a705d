"""ftorch.profiler: rows per primitive and per named scope, jitted calls as
one row with their traces and compilations, jit_ops, steps with their peak
memory, the Chrome trace, and the observer gone after the block."""

import json

import mlx.core as mx
import pytest
from harness import compiler_off

import ftorch as ft
import ftorch.numpy as fnp
from ftorch.core import primitive, provenance
from ftorch.transforms import executable


@pytest.fixture(autouse=True)
def _nothing_left_installed():
    yield
    assert primitive._observer is None
    assert executable.listeners == []


def test_eager_rows_are_the_primitives_called_with_their_counts():
    x = mx.ones(8)
    with ft.profiler.profile() as prof:
        for _ in range(2):
            fnp.sum(fnp.exp(fnp.sin(x)))
        fnp.exp(x)
    rows = {r.name: r for r in prof.key_averages()}
    assert {name: r.calls for name, r in rows.items()} == {"sin": 2, "exp": 3, "sum": 2}
    for r in rows.values():
        assert r.total_s >= r.self_s > 0
        assert r.mean_s == pytest.approx(r.total_s / r.calls)
    assert sum(r.percent for r in rows.values()) == pytest.approx(100.0)
    assert [e.name for e in prof.events()] == ["sin", "exp", "sum", "sin", "exp", "sum", "exp"]


def test_a_scope_running_a_big_matmul_takes_most_of_the_time():
    big = mx.ones((512, 512))
    small = mx.ones(4)
    with ft.profiler.profile() as prof:
        for _ in range(3):
            with ft.named_scope("model"):
                with ft.named_scope("big"):
                    fnp.matmul(big, big)
                with ft.named_scope("small"):
                    fnp.add(small, 1.0)
    rows = {r.scope: r for r in prof.key_averages(group_by="scope")}
    assert set(rows) == {"model", "model/big", "model/small"}
    assert rows["model/big"].calls == rows["model/small"].calls == 3
    assert rows["model"].calls == 6 and rows["model"].self_s == 0.0
    assert rows["model"].total_s == pytest.approx(rows["model/big"].total_s
                                                  + rows["model/small"].total_s)
    assert rows["model/big"].percent + rows["model/small"].percent == pytest.approx(100.0)
    # Each matmul takes longer than each add (the fastest of each: a shared
    # machine may stall any one call).
    fastest = {scope: min(e.duration_s for e in prof.events() if e.scope == ("model", scope))
               for scope in ("big", "small")}
    assert fastest["big"] > 5 * fastest["small"]
    assert prof.key_averages(group_by="scope")["model/big"].name == "big"


def test_backward_operations_count_toward_their_forward_scope():
    def loss(x):
        with ft.named_scope("layer"):
            h = fnp.tanh(x)
        return fnp.sum(h)

    with ft.profiler.profile() as prof:
        ft.grad(loss)(mx.ones(4))
    backward = [e for e in prof.events() if e.args.get("rule") == "the VJP rule of tanh"]
    assert backward and all(e.scope == ("layer",) for e in backward)
    assert provenance.recording is False  # the profile's eager provenance is off again


def test_a_jitted_function_is_one_row_traced_once_per_signature():
    f = ft.jit(lambda x: fnp.sum(fnp.sin(x) * 2.0))
    with compiler_off(), ft.profiler.profile() as prof:
        for _ in range(3):
            f(mx.ones(3))
        first = {r.name: r.calls for r in prof.key_averages()}
        f(mx.ones(5))  # a new shape: a cache miss
    assert first == {"jit(<lambda>)": 3, "trace(<lambda>)": 1, "compile(<lambda>)": 1}
    rows = prof.key_averages()
    assert rows["jit(<lambda>)"].calls == 4
    assert rows["trace(<lambda>)"].calls == 2 == f.trace_count
    assert rows["compile(<lambda>)"].calls == 2  # each signature's first compiled call
    assert not any(r.name in ("sin", "multiply", "sum") for r in rows)
    # A compilation inside a call counts as the compile row's, not the call's.
    calls = [e for e in prof.events() if e.category == "jit"]
    compiles = [e for e in prof.events() if e.category == "compile"]
    assert calls[0].self_s == pytest.approx(calls[0].duration_s - compiles[0].duration_s)


def test_grad_of_a_jitted_function_names_its_passes():
    f = ft.jit(lambda x: fnp.sum(fnp.tanh(x)))
    with compiler_off(), ft.profiler.profile() as prof:
        ft.grad(f)(mx.ones(3))
    names = {r.name for r in prof.key_averages() if r.name.startswith("jit(")}
    assert names == {"jit(<lambda> forward)", "jit(<lambda> backward)"}


def test_jit_ops_attributes_time_to_the_primitives_inside():
    @ft.jit
    def step(w, x):
        with ft.named_scope("layer"):
            return fnp.tanh(fnp.matmul(x, w))

    w, x = mx.ones((64, 64)), mx.ones((8, 64))
    expected = step(w, x)
    with compiler_off(), ft.profiler.profile(jit_ops=True) as prof:
        for _ in range(2):
            out = step(w, x)
    assert mx.array_equal(out, expected)
    rows = prof.key_averages()
    assert {r.name: r.calls for r in rows} == {"jit(step)": 2, "matmul": 2, "tanh": 2}
    call = rows["jit(step)"]
    assert call.total_s > call.self_s
    assert call.total_s >= rows["matmul"].total_s + rows["tanh"].total_s
    scopes = {r.scope: r.calls for r in prof.key_averages(group_by="scope")}
    assert scopes == {"": 2, "layer": 4}  # the jitted calls themselves are outside it
    assert not any(e.category == "compile" for e in prof.events())  # nothing compiled


def test_steps_record_the_peak_memory_of_each():
    small = mx.ones(4)
    with ft.profiler.profile() as prof:
        fnp.add(small, 1.0)
        prof.step()
        big = fnp.zeros((1024, 1024))  # 4 MiB, then 4 more
        fnp.add(big, 1.0)
        del big
        prof.step()
        fnp.add(small, 1.0)
        prof.step()
    assert [s.index for s in prof.steps] == [0, 1, 2]
    peaks = [s.peak_memory for s in prof.steps]
    assert peaks[1] > peaks[0] + 7 * 2**20 > peaks[2]
    for s, t in zip(prof.steps, prof.steps[1:]):
        assert t.start_s == pytest.approx(s.start_s + s.duration_s)


def test_the_last_step_is_recorded_when_something_ran_in_it():
    with ft.profiler.profile() as prof:
        fnp.exp(mx.ones(2))
        prof.step()
        fnp.exp(mx.ones(2))
    assert len(prof.steps) == 2
    with ft.profiler.profile() as prof:
        fnp.exp(mx.ones(2))
    assert len(prof.steps) == 1  # no step() at all: the block is one step


def test_chrome_trace_is_well_formed_trace_event_json(tmp_path):
    f = ft.jit(lambda x: fnp.cos(x) + 1.0)
    with compiler_off(), ft.profiler.profile() as prof:
        for _ in range(2):
            with ft.named_scope("eager"):
                fnp.exp(f(mx.ones((2, 3))))
            prof.step()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(path)
    events = json.loads(path.read_text())["traceEvents"]
    assert isinstance(events, list)
    assert {e["cat"] for e in events} == {"primitive", "jit", "trace", "compile", "step"}
    for e in events:
        assert e["ph"] == "X"
        assert isinstance(e["name"], str) and isinstance(e["pid"], int)
        assert isinstance(e["tid"], int) and isinstance(e["args"], dict)
        assert e["ts"] >= 0 and e["dur"] >= 0
    starts = [e["ts"] for e in events]
    assert starts == sorted(starts)
    steps = [e for e in events if e["cat"] == "step"]
    assert [s["name"] for s in steps] == ["ProfilerStep#0", "ProfilerStep#1"]
    assert all(s["args"]["peak_memory"] > 0 for s in steps)
    # Every event lies inside a step.
    for e in events:
        assert any(s["ts"] <= e["ts"] and e["ts"] + e["dur"] <= s["ts"] + s["dur"] + 1e-3
                   for s in steps)
    exp = next(e for e in events if e["name"] == "exp")
    assert exp["args"]["scope"] == "eager" and exp["args"]["shapes"] == ["f32[2,3]"]


def test_observer_is_removed_when_the_block_raises():
    with pytest.raises(ValueError, match="inside"):
        with ft.profiler.profile() as prof:
            fnp.exp(mx.ones(2))
            raise ValueError("inside")
    assert primitive._observer is None and executable.listeners == []
    assert [r.name for r in prof.key_averages()] == ["exp"]
    fnp.exp(mx.ones(2))  # not recorded
    assert len(prof.events()) == 1


def test_profiles_do_not_nest():
    with ft.profiler.profile() as outer:
        with pytest.raises(RuntimeError, match="do not nest"):
            with ft.profiler.profile():
                pass
        fnp.exp(mx.ones(2))  # the outer one still records
    assert [e.name for e in outer.events()] == ["exp"]
    with pytest.raises(RuntimeError, match="recorded already"):
        outer.start()
    with pytest.raises(RuntimeError, match="not recording"):
        outer.step()


def test_table_sorts_limits_and_checks_its_arguments():
    with ft.profiler.profile() as prof:
        for _ in range(3):
            fnp.exp(mx.ones(2))
        fnp.matmul(mx.ones((256, 256)), mx.ones((256, 256)))
    avgs = prof.key_averages()
    lines = avgs.table(sort_by="calls").splitlines()
    assert lines[0].split() == ["name", "calls", "total", "ms", "self", "ms", "mean", "ms",
                                "%", "self"]
    assert lines[1].split()[:2] == ["exp", "3"]
    assert len(avgs.table(row_limit=1).splitlines()) == 3  # header, one row, the total
    assert str(avgs) == avgs.table()
    assert avgs.sorted("cpu_time_total") == avgs.sorted("total")
    assert "(the rest: Python" in lines[-1]
    with pytest.raises(ValueError, match="sort_by"):
        avgs.table(sort_by="flops")
    with pytest.raises(ValueError, match="group_by"):
        prof.key_averages(group_by="line")
    with pytest.raises(KeyError):
        avgs["cos"]


def test_rich_renders_the_rows():
    rich = pytest.importorskip("rich")
    from rich.console import Console

    with ft.profiler.profile() as prof:
        fnp.exp(mx.ones(2))
    console = Console(record=True, width=120)
    console.print(prof.key_averages())
    assert "exp" in console.export_text()
    assert rich is not None


def test_gpu_trace_needs_metal(tmp_path):
    if mx.metal.is_available():
        pytest.skip("Metal is here: the capture would run")
    with pytest.raises(RuntimeError, match="Metal"):
        ft.profiler.profile(gpu_trace=tmp_path / "run.gputrace")


def test_memory_summary_names_active_peak_and_cache():
    kept = fnp.zeros((256, 1024))  # 1 MiB
    mx.eval(kept)
    lines = ft.profiler.memory_summary().splitlines()
    assert [line.split()[0] for line in lines[1:]] == ["active", "peak", "cache", "limit"]
    assert lines[1].split()[2] in ("MiB", "GiB")


def test_jax_profiler_names(tmp_path):
    from ftorch import profiler

    step = ft.jit(lambda x: fnp.sum(fnp.tanh(x)))
    with profiler.trace(tmp_path / "run"):
        for i in range(3):
            with profiler.StepTraceAnnotation("train", step_num=i):
                with profiler.TraceAnnotation("forward"):
                    step(mx.ones(4))
    (written,) = (tmp_path / "run").iterdir()
    events = json.loads(written.read_text())["traceEvents"]
    assert sum(e["name"].startswith("jit(") for e in events) == 3
    assert sum(e.get("cat") == "step" for e in events) == 3
    with pytest.raises(RuntimeError, match="no trace is being recorded"):
        profiler.stop_trace()
    profiler.start_trace(tmp_path)
    with pytest.raises(RuntimeError, match="already being recorded"):
        profiler.start_trace(tmp_path)
    assert profiler.stop_trace().endswith(".trace.json")
    named = profiler.annotate_function(lambda x: fnp.exp(x), name="act")
    assert "exp a  # act" in str(ft.make_graph(named)(mx.ones(2)))
