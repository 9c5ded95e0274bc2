"""mncl.array's sum, max and dot on the emulator device: the machine's reduction tree (one SPMD
launch, then one task kernel: mncl/reduction_tree.py) against the SPMD folds it replaces
(MNCL_REDUCTION_TREE=0), in the same run.

    python benchmarks/reduction_tree.py                          # tiny and mncore2, 2^12 2^16 2^20
    python benchmarks/reduction_tree.py --machines tiny --sizes 12 16 --runs 5

Per machine, operation and size: the emulated cycles of one call (every launch it makes; they
are the same every run) and its host wall time (the call and the result's .get(), after a
warm-up call that builds the kernels), min and median over --runs runs, and the folds / tree
ratios.  The results of both paths are checked against numpy.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import mncl as cl                    # noqa: E402
import mncl.array as cla             # noqa: E402
from mncl.queue import CommandQueue  # noqa: E402

OPS = {"sum": lambda a, b: cla.sum(a), "max": lambda a, b: cla.max(a), "dot": lambda a, b: cla.dot(a, b)}


class Launches:
    """The events of the commands queued while active (the cycles of a call are theirs)."""

    def __init__(self):
        self.events, self._submit = [], CommandQueue._submit

    def __enter__(self):
        events, submit = self.events, self._submit

        def spy(queue, *a, **k):
            ev = submit(queue, *a, **k)
            events.append(ev)
            return ev
        CommandQueue._submit = spy
        return self

    def __exit__(self, *exc):
        CommandQueue._submit = self._submit

    def cycles(self) -> float:
        for e in self.events:
            e.wait()
        return sum(e.stats.cycles for e in self.events if e.stats is not None)


def run(fn, a, b, runs):
    """(cycles, wall times, value) of fn(a, b).get() after a warm-up call."""
    fn(a, b).get()
    walls = []
    for _ in range(runs):
        with Launches() as spy:
            t0 = time.perf_counter()
            value = fn(a, b).get()
            walls.append(time.perf_counter() - t0)
        cycles = spy.cycles()
    return cycles, walls, value


def check(op, value, x, y):
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    if op == "max":
        assert value == x.max(), (value, x.max())
        return
    ref, scale = (x64.sum(), np.abs(x64).sum()) if op == "sum" else (x64 @ y64, np.abs(x64 * y64).sum())
    assert abs(float(value) - ref) <= 1e-5 * scale, (op, value, ref)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--machines", nargs="+", default=["tiny", "mncore2"])
    ap.add_argument("--sizes", nargs="+", type=int, default=[12, 16, 20], help="log2 of the sizes")
    ap.add_argument("--ops", nargs="+", default=list(OPS), choices=list(OPS))
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args(argv)
    print(f"{'machine':8} {'op':4} {'n':>8} {'fold cycles':>12} {'tree cycles':>12} {'ratio':>6}   "
          f"{'fold wall min/med s':>20} {'tree wall min/med s':>20} {'ratio':>6}")
    for machine in args.machines:
        ctx = cl.Context([cl.get_device("emulator", machine)])
        q = cl.CommandQueue(ctx)
        for lg in args.sizes:
            rng = np.random.default_rng(lg)
            x, y = (rng.standard_normal(1 << lg).astype(np.float32) for _ in range(2))
            a, b = cla.to_device(q, x), cla.to_device(q, y)
            for op in args.ops:
                got = {}
                for path, flag in (("fold", "0"), ("tree", "1")):
                    os.environ["MNCL_REDUCTION_TREE"] = flag
                    cycles, walls, value = run(OPS[op], a, b, args.runs)
                    check(op, value, x, y)
                    got[path] = cycles, min(walls), statistics.median(walls)
                (fc, fmin, fmed), (tc, tmin, tmed) = got["fold"], got["tree"]
                print(f"{machine:8} {op:4} {'2^' + str(lg):>8} {fc:12.0f} {tc:12.0f} {fc / tc:5.1f}x   "
                      f"{fmin:9.3f} /{fmed:9.3f} {tmin:9.3f} /{tmed:9.3f} {fmed / tmed:5.1f}x", flush=True)
    os.environ.pop("MNCL_REDUCTION_TREE", None)


if __name__ == "__main__":
    main()
