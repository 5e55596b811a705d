"""The benchmark suite keeps working: every workload builds for MLX and
ftorch in each of its modes, and both compute the same numbers (MLX's
compiler off: this checks the workloads, not the speed)."""

import json

import numpy as np
import pytest
from harness import compiler_off

from benchmarks import frameworks, run
from benchmarks.harness import Mismatch, Timing, check_agree, paired_ratio
from benchmarks.workloads import WORKLOADS

FWS = frameworks.load(["mlx", "ftorch"], "cpu")


@pytest.mark.parametrize("name,mode", [(w.name, m) for w in WORKLOADS.values() for m in w.modes])
def test_workload_agrees_with_mlx(name, mode):
    w = WORKLOADS[name]
    data = (w.small or w.inputs)(np.random.default_rng(0))
    with compiler_off():
        outs = {}
        for n, fw in FWS.items():
            outs[n] = w.builders[n](fw, mode, data)()
            fw.sync(outs[n])
        check_agree(outs, FWS, w.rtol, w.compared)


def test_check_agree_catches_a_difference():
    mlx = FWS["mlx"]
    outs = {"mlx": (mlx.array(np.ones(3, np.float32)),),
            "ftorch": (mlx.array(np.array([1, 1, 1.01], np.float32)),)}
    with pytest.raises(Mismatch, match="output 0: ftorch differs from mlx"):
        check_agree(outs, FWS, rtol=1e-3)
    outs["ftorch"] = (mlx.array(np.ones(4, np.float32)),)
    with pytest.raises(Mismatch, match="shape"):
        check_agree(outs, FWS, rtol=1e-3)


def test_check_agree_compares_the_leading_arrays_only():
    mlx = FWS["mlx"]
    outs = {"mlx": (mlx.array(np.ones(3, np.float32)), mlx.array(np.ones(2, np.float32))),
            "ftorch": (mlx.array(np.ones(3, np.float32)), mlx.array(np.zeros(4, np.float32)))}
    check_agree(outs, FWS, rtol=1e-3, compared=1)
    with pytest.raises(Mismatch, match="output 1"):
        check_agree(outs, FWS, rtol=1e-3)


def test_ratios_pair_the_times_of_each_round():
    # Per-round ratios 2, 3 and 1: their median is 2, the ratio of medians 1.
    ours, theirs = Timing(0.0, [2.0, 30.0, 4.0]), Timing(0.0, [1.0, 10.0, 4.0])
    assert paired_ratio(ours, theirs) == 2.0


def test_command_line_writes_a_row_per_mode(tmp_path, capsys):
    out = tmp_path / "r.json"
    with compiler_off():
        code = run.main(["-w", "chain", "-f", "mlx,ftorch", "--rounds", "5", "--budget", "0.2",
                         "--json", str(out)])
    assert code == 0
    result = json.loads(out.read_text())
    rows = {(r["workload"], r["mode"]): r for r in result["rows"]}
    assert set(rows) == {("chain", "eager"), ("chain", "jit")}
    for r in rows.values():
        assert set(r["median_s"]) == {"mlx", "ftorch"}
        assert r["ratio_mlx"] > 0
    assert rows[("chain", "jit")]["labels"] == {"mlx": "mx.compile", "ftorch": "ft.jit"}
    assert "chain" in capsys.readouterr().out


def test_command_line_rejects_an_unknown_workload():
    with pytest.raises(SystemExit):
        run.parse_args(["-w", "chain,nope"])
