"""mncl sweep's throughput: a fixed sweep run serially (no Dask), then on local Dask clusters of 1
and 2 worker processes, in one run; prints points per second, the 2-worker speedup (issue 27's
target: at least 1.7x on a 2-core machine) and the scheduling overhead per point against the
median point's time (target: under 5%).

    python benchmarks/sweep.py [--points 16] [--steps 10000] [--machine mncore2] [--repeat 2]

The points are emulations of one vector loop (.vsm, no compile step, so every point costs the
same), each with a different trip count so none is taken from another; the cache is off.
Cluster start-up is timed apart from the sweeps.
"""
from __future__ import annotations

import argparse
import pathlib
import statistics
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

from mncl import sweep as sw  # noqa: E402

PROGRAM = """# a vector FMA loop over every PE: %n steps
.arg %n
.loop %i = 0, %n
    fvfma $lr0v $lr8v $lr16v $lr24v
.endloop
"""


def make_spec(folder: pathlib.Path, points: int, steps: int, machine: str) -> dict:
    (folder / "loop.vsm").write_text(PROGRAM)
    (folder / "spec.toml").write_text(f"""
[[run]]
name = "loop"
kind = "vsm"
source = "loop.vsm"
args = {{ n = "{{n}}" }}

[axes]
machine = ["{machine}"]
n = {[steps + i for i in range(points)]}
""")
    return sw.load_spec(folder / "spec.toml")


def timed_sweep(spec, workers: int):
    """(sweep seconds, cluster start-up seconds, rows) for workers = 0 (serial) or a LocalCluster."""
    if workers == 0:
        t = time.perf_counter()
        r = sw.sweep(spec, workers=0, cache=False)
        return time.perf_counter() - t, 0.0, r.rows
    from dask.distributed import Client
    t = time.perf_counter()
    cluster = sw.local_cluster(workers)
    client = Client(cluster)
    client.run(lambda: __import__("mncl.sweep") and __import__("emulator"))   # imports before timing
    startup = time.perf_counter() - t
    try:
        t = time.perf_counter()
        r = sw.sweep(spec, client=client, cache=False)
        return time.perf_counter() - t, startup, r.rows
    finally:
        client.close()
        cluster.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=16)
    ap.add_argument("--steps", type=int, default=10000, help="PE steps per point (about)")
    ap.add_argument("--machine", default="mncore2")
    ap.add_argument("--repeat", type=int, default=2, help="rounds; min and median are reported")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        spec = make_spec(pathlib.Path(d), a.points, a.steps, a.machine)
        runs = {0: [], 1: [], 2: []}
        for _ in range(a.repeat):
            for w in runs:
                runs[w].append(timed_sweep(spec, w))
    failed = [r for rs in runs.values() for _, _, rows in rs for r in rows if r["status"] != "ok"]
    if failed:
        sys.exit(f"FAIL: {len(failed)} point(s) failed: {failed[0]['error']}")
    point_s = statistics.median(r["wall_s"] for _, _, rows in runs[0] for r in rows)
    print(f"mncl sweep: {a.points} points of about {a.steps:,} PE steps on {a.machine}, {a.repeat} round(s); "
          f"median point {point_s:.3f} s (serial)")
    print(f"{'':<22}{'sweep s (min / median)':>26}{'points/s (best)':>18}{'start-up s':>12}"
          f"{'median point s':>16}")
    best = {}
    for w, label in ((0, "serial, no Dask"), (1, "Dask, 1 worker"), (2, "Dask, 2 workers")):
        ts = [t for t, _, _ in runs[w]]
        best[w] = min(ts)
        start = statistics.median(s for _, s, _ in runs[w])
        inside = statistics.median(r["wall_s"] for _, _, rows in runs[w] for r in rows)
        print(f"{label:<22}{min(ts):>12.2f} / {statistics.median(ts):<11.2f}{a.points / min(ts):>18.2f}"
              f"{start:>12.2f}{inside:>16.3f}")
    speedup = best[1] / best[2]
    overhead = (best[1] - best[0]) / a.points
    print(f"2 workers / 1 worker: {speedup:.2f}x points per second (target >= 1.7x)")
    print(f"scheduling overhead per point: {overhead * 1e3:.1f} ms = {100 * overhead / point_s:.1f}% of the "
          f"median point (target < 5%)")


if __name__ == "__main__":
    main()
