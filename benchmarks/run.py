"""ftorch against raw MLX, JAX and PyTorch: one table, one JSON file.

Each row is a workload in one mode. ``eager`` runs MLX, ftorch and PyTorch
(``torch.func``) op by op; ``jit`` runs ``mx.compile``, ``ft.jit``,
``jax.jit`` and ``torch.compile``. The frameworks of a row run in one
process, interleaved round by round; the table shows median times per call
and the ratios ftorch/MLX (with the target), ftorch/JAX and ftorch/PyTorch,
each the median over rounds of the two times measured in the same round.
JAX and PyTorch are used when installed (``pip install -e ".[bench]"``).

    python -m benchmarks                         # everything, about 10 minutes
    python -m benchmarks --quick -w chain,mlp_train -f mlx,ftorch
    python -m benchmarks --list
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import sys
import time
import traceback
from pathlib import Path

import numpy as np

from benchmarks import frameworks
from benchmarks.harness import Mismatch, paired_ratio, run_row
from benchmarks.workloads import WORKLOADS

DEFAULT_JSON = Path(__file__).parent / "results" / "latest.json"


def _csv(choices):
    def parse(text: str) -> list[str]:
        items = [t.strip() for t in text.split(",") if t.strip()]
        bad = [t for t in items if t not in choices]
        if bad:
            raise argparse.ArgumentTypeError(
                f"unknown {', '.join(bad)}; choose from {', '.join(choices)}")
        return items
    return parse


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="python -m benchmarks",
                                 description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-w", "--workloads", type=_csv(list(WORKLOADS)), default=list(WORKLOADS),
                    help="comma-separated workloads (default: all)")
    ap.add_argument("-f", "--frameworks", type=_csv(frameworks.NAMES),
                    default=list(frameworks.NAMES),
                    help="comma-separated frameworks (default: all installed)")
    ap.add_argument("-m", "--modes", type=_csv(("eager", "jit")), default=["eager", "jit"])
    ap.add_argument("--device", choices=("cpu", "gpu"), default="cpu",
                    help="where every framework runs (gpu: Metal or CUDA for MLX, CUDA otherwise)")
    ap.add_argument("--quick", action="store_true", help="fewer rounds: a smoke run")
    ap.add_argument("--rounds", type=int, help="timed rounds per row (at most)")
    ap.add_argument("--budget", type=float, help="seconds of timing per row (about)")
    ap.add_argument("--json", type=Path, default=DEFAULT_JSON, help=f"default: {DEFAULT_JSON}")
    ap.add_argument("--first-call", action="store_true",
                    help="also time each jit row's first call (trace and compile) with each "
                         "framework in a fresh process with empty compilation caches")
    ap.add_argument("--list", action="store_true", help="describe the workloads and exit")
    ap.add_argument("--first-call-worker", nargs=3, help=argparse.SUPPRESS)
    return ap.parse_args(argv)


def _fmt_time(s: float | None) -> str:
    if s is None:
        return "-"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if s >= scale:
            return f"{s / scale:.3g} {unit}"
    return f"{s / 1e-6:.3g} us"


def _fmt_ratio(r: float | None) -> str:
    return "-" if r is None else f"{r:.2f}"


def machine() -> dict:
    from ftorch.backend import blas

    st = blas.state
    blas = f"{st.kind}" if st.status in ("loaded", "preloaded") else f"reference ({st.status})"
    if st.threads is not None:
        blas += f", {st.threads} thread{'s' * (st.threads != 1)} ({st.threads_source})"
    return {"date": datetime.date.today().isoformat(), "python": platform.python_version(),
            "platform": platform.platform(),
            "processor": platform.processor() or platform.machine(),
            "cpus": os.cpu_count(), "mlx_cpu_blas": blas, "lowering": lowering()}


def lowering() -> str:
    """How ft.jit lowered the rows: fast CPU math, and when it compiles."""
    import ftorch as ft

    fast = ("fast CPU math (tanh, sigmoid, erf, gelu)" if ft.config.fast_cpu_math
            else "MLX's transcendentals")
    return f"ft.jit: {fast}, compile_after={ft.config.jit_compile_after!r}"


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.first_call_worker:
        print(json.dumps(first_call_worker(*args.first_call_worker)))
        return 0
    if args.list:
        for w in WORKLOADS.values():
            print(f"{w.name} ({', '.join(w.modes)}): {' '.join(w.doc.split())}")
        return 0
    fws = frameworks.load(args.frameworks, args.device)
    missing = [n for n in args.frameworks if n not in fws]
    warmup, rounds, budget = (2, 10, 1.0) if args.quick else (5, 1000, 8.0)
    rounds, budget = args.rounds or rounds, args.budget or budget
    info = {**machine(), "device": args.device,
            "versions": {n: fw.version() for n, fw in fws.items()},
            "command": " ".join(["python -m benchmarks",
                                 *(sys.argv[1:] if argv is None else argv)])}
    print("; ".join(info["versions"].values()) + f"; MLX CPU BLAS: {info['mlx_cpu_blas']}; "
          + info["lowering"])
    if missing:
        print(f"not installed, skipped: {', '.join(missing)}")
    print(f"median time per call over up to {rounds} interleaved rounds (~{budget:g} s a row), "
          "ratios: median of per-round ratios; "
          "eager: mlx | ftorch | torch.func; jit: mx.compile | ft.jit | jax.jit | torch.compile")
    header = (f"{'workload':<19}{'mode':<6}" + "".join(f"{n:>10}" for n in frameworks.NAMES)
              + f"{'ft/mlx':>9}{'target':>8}{'ft/jax':>8}{'ft/torch':>9}")
    print(header)
    print("-" * len(header), flush=True)

    rows, start = [], time.perf_counter()
    for w in (WORKLOADS[n] for n in args.workloads):
        data = w.inputs(np.random.default_rng(0))
        for mode in (m for m in w.modes if m in args.modes):
            rows.append(run_one(w, mode, data, fws, warmup, rounds, budget))
            if args.first_call and mode == "jit":
                rows[-1]["cold_first_s"] = first_calls(w, fws, args.device)
    info["total_s"] = round(time.perf_counter() - start, 1)
    print(f"total {info['total_s']} s")

    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"machine": info, "rows": rows}, indent=1) + "\n")
    print(f"wrote {args.json}")
    return 1 if any(r.get("error", "").startswith("mismatch") for r in rows) else 0


def run_one(w, mode, data, fws, warmup, rounds, budget) -> dict:
    """Build, time and print one row; failures of other frameworks are
    reported in the row (``torch.compile`` does not take everything)."""
    row = {"workload": w.name, "mode": mode, "labels": {}, "median_s": {}, "first_s": {},
           "spread": {}, "notes": {}}
    steps = {}
    for name, fw in fws.items():
        if name not in w.builders or name not in frameworks.LABELS.get(mode, {}):
            continue
        try:
            steps[name] = w.builders[name](fw, mode, data)
        except Exception as e:  # noqa: BLE001  (recorded, and the row goes on)
            if name == "ftorch":
                raise
            row["notes"][name] = f"build failed: {type(e).__name__}: {e}"
    try:
        timings, failed = run_row(steps, fws, warmup=warmup, rounds=rounds, budget_s=budget,
                                  calls_per_step=w.calls_per_step, rtol=w.rtol,
                                  compared=w.compared)
    except Mismatch as e:
        row["error"] = f"mismatch: {e}"
        print(f"{w.name:<19}{mode:<6}MISMATCH {e}", flush=True)
        return row
    except Exception as e:  # noqa: BLE001
        row["error"] = f"{type(e).__name__}: {e}"
        traceback.print_exc()
        print(f"{w.name:<19}{mode:<6}FAILED {row['error']}", flush=True)
        return row
    row["notes"].update({n: f"first call failed: {e}" for n, e in failed.items()})
    for name, t in timings.items():
        row["labels"][name] = frameworks.LABELS[mode][name]
        row["median_s"][name], row["first_s"][name] = t.median, t.first_s
        row["spread"][name] = round(t.spread, 3)
    m = row["median_s"]
    target = dict(w.targets).get(mode)
    for other in ("mlx", "jax", "torch"):
        row[f"ratio_{other}"] = (paired_ratio(timings["ftorch"], timings[other])
                                 if "ftorch" in timings and other in timings else None)
    ratio = row["ratio_mlx"]
    row["target"] = target
    mark = "" if ratio is None or target is None else (" ok" if ratio <= target else " MISS")
    print(f"{w.name:<19}{mode:<6}" + "".join(f"{_fmt_time(m.get(n)):>10}" for n in frameworks.NAMES)
          + f"{_fmt_ratio(ratio):>9}{'-' if target is None else '<=' + str(target) + mark:>8}"
          + f"{_fmt_ratio(row['ratio_jax']):>8}{_fmt_ratio(row['ratio_torch']):>9}", flush=True)
    if w.memory:
        peaks = {n: fws[n].peak_memory(steps[n]) for n in timings}
        row["peak_mib"] = {n: round(b / 2 ** 20, 1) for n, b in peaks.items() if b is not None}
        print(f"{'':<25}peak memory: " + ", ".join(
            f"{frameworks.LABELS[mode][n]} {v:.0f} MiB" for n, v in row["peak_mib"].items()))
    for name, note in row["notes"].items():
        print(f"{'':<25}{name}: {note[:200]}")
    return row


def first_call_worker(workload: str, framework: str, device: str) -> float:
    w = WORKLOADS[workload]
    fw = frameworks.load([framework], device)[framework]
    step = w.builders[framework](fw, "jit", w.inputs(np.random.default_rng(0)))
    t = time.perf_counter()
    fw.sync(step())
    return time.perf_counter() - t


def first_calls(w, fws, device) -> dict[str, float | str]:
    """Seconds to the first result of each framework's jit step, each in a
    fresh process with empty caches: MLX keeps compiled CPU kernels under
    $TMPDIR/mlx, PyTorch's inductor under $TMPDIR too, and JAX's persistent
    cache is off by default."""
    import subprocess
    import tempfile

    # ftorch twice: its default policy (on the CPU, uncompiled until a
    # signature has been in use for a while) and compiled from the first call.
    runs = [(name, name, {}) for name in fws]
    if "ftorch" in fws:
        runs.insert([r[0] for r in runs].index("ftorch") + 1,
                    ("ftorch_compiled", "ftorch", {"FTORCH_JIT_COMPILE_AFTER": "0"}))
        runs[[r[0] for r in runs].index("ftorch")][2]["FTORCH_JIT_COMPILE_AFTER"] = "auto"
    out = {}
    for key, name, env in runs:
        with tempfile.TemporaryDirectory() as tmp:
            proc = subprocess.run(
                [sys.executable, "-m", "benchmarks", "--first-call-worker", w.name, name, device],
                capture_output=True, text=True, env={**os.environ, "TMPDIR": tmp, **env},
                cwd=Path(__file__).parent.parent)
        if proc.returncode == 0:
            out[key] = float(proc.stdout.strip().splitlines()[-1])
        else:
            out[key] = "failed: " + (proc.stderr.strip().splitlines() or ["?"])[-1]
    labels = {**frameworks.LABELS["jit"], "ftorch_compiled": "ft.jit(compile_after=0)"}
    print(f"{'':<25}first call, fresh process: " + ", ".join(
        f"{labels[n]} " + (f"{v:.2f} s" if isinstance(v, float) else v)
        for n, v in out.items()), flush=True)
    return out


if __name__ == "__main__":
    sys.exit(main())
