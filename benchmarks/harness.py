"""Timing: every framework of a row in one process, interleaved, medians.

A row is one workload in one mode. Its steps (one per framework) are each
called once (the first call, which includes tracing and compiling), checked
against each other, warmed up, then timed round by round. Each round calls
every step once, in an order that rotates from round to round, so that a
drift in machine load hits all of them alike.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from benchmarks.frameworks import Framework, leaves


@dataclass
class Timing:
    """One framework's times in one row, in seconds per call."""

    first_s: float
    times: list[float] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def spread(self) -> float:
        """Interquartile range over median: how noisy the row was."""
        q = statistics.quantiles(self.times, n=4)
        return (q[2] - q[0]) / self.median


def paired_ratio(a: Timing, b: Timing) -> float:
    """Median over rounds of ``a``'s time over ``b``'s in the same round.

    The steps of a round run back to back, so a drift in machine load
    (common on shared machines) scales both times of a pair alike and
    cancels in their ratio, where a ratio of the two medians keeps it."""
    return statistics.median(x / y for x, y in zip(a.times, b.times))


class Mismatch(AssertionError):
    """Two frameworks computed different numbers for the same workload."""


def check_agree(outs: dict[str, Any], fws: dict[str, Framework], rtol: float,
                compared: int | None = None) -> None:
    """All results equal the first one's to ``rtol`` (relative to each
    array's largest magnitude: float32 sums in different orders); only
    their first ``compared`` arrays if given (a train step's loss, say,
    where the rest is each framework's own state)."""
    names = list(outs)
    ref_name = names[0]
    ref = [fws[ref_name].to_numpy(x) for x in leaves(outs[ref_name])[:compared]]
    for name in names[1:]:
        got = [fws[name].to_numpy(x) for x in leaves(outs[name])[:compared]]
        if len(got) != len(ref):
            raise Mismatch(f"{name} returned {len(got)} arrays, {ref_name} {len(ref)}")
        for i, (a, b) in enumerate(zip(ref, got)):
            if a.shape != b.shape:
                raise Mismatch(f"output {i}: {name} has shape {b.shape}, {ref_name} {a.shape}")
            scale = max(float(np.max(np.abs(a), initial=0.0)), 1e-6)
            err = float(np.max(np.abs(a.astype(np.float64) - b), initial=0.0))
            if err > rtol * scale:
                raise Mismatch(f"output {i}: {name} differs from {ref_name} by {err:.3g} "
                               f"(largest magnitude {scale:.3g})")


def run_row(steps: dict[str, Callable[[], Any]], fws: dict[str, Framework], *, warmup: int,
            rounds: int, budget_s: float, calls_per_step: int = 1,
            rtol: float = 2e-3, compared: int | None = None,
            required: tuple[str, ...] = ("mlx", "ftorch"),
            ) -> tuple[dict[str, Timing], dict[str, str]]:
    """Time each step (a function of no arguments returning its result).

    Results are checked with ``check_agree(..., rtol, compared)``.
    Returns the timings and, by name, the steps other than ``required``
    whose first call raised (they are left out of the row)."""

    def timed(name: str) -> tuple[float, Any]:
        t = time.perf_counter()
        out = steps[name]()
        fws[name].sync(out)
        return time.perf_counter() - t, out

    timings, outs, failed = {}, {}, {}
    for name in list(steps):
        try:
            first, outs[name] = timed(name)
        except Exception as e:
            if name in required:
                raise
            failed[name] = f"{type(e).__name__}: {e}"
            steps = {n: s for n, s in steps.items() if n != name}
            continue
        timings[name] = Timing(first / calls_per_step)
    check_agree(outs, fws, rtol, compared)
    del outs

    names = list(steps)
    per_round = sum(timed(n)[0] for n in names)
    warmup = max(1, min(warmup, int(0.2 * budget_s / per_round)))
    rounds = max(5, min(rounds, int(0.8 * budget_s / per_round)))
    for _ in range(warmup):
        for n in names:
            timed(n)
    for r in range(rounds):
        k = r % len(names)
        for n in names[k:] + names[:k]:
            timings[n].times.append(timed(n)[0] / calls_per_step)
    return timings, failed
