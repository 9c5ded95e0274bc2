"""Build time on the emulator device, this tree against another checkout (today's main), in one run.

    python benchmarks/build_time.py --against ../main-before            # default kernels
    python benchmarks/build_time.py --against DIR --kernel tests/public/scan.cl --rounds 3

Each kernel file is built (``Program(ctx, src).build()``, the program cache off) for the
``mncore2`` machine in a fresh child process per tree and round, the trees alternating so
that load on a shared machine falls on both alike; a child reports its CPU time (front end
+ SIMD backend + assembler; the interpreter's start and imports are not counted). Prints
per kernel the min / median CPU seconds of each tree and the ratio of the medians
(this tree / the other). Issue 19 asked for every corpus kernel under 5 s.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT = ["tests/public/scan.cl", "tests/public/sgemm_blocked.cl", "tests/public/nbody.cl",
           "tests/public/md5.cl", "tests/public/radix.cl"]

CHILD = r"""
import os, sys, time
os.environ["MNCL_CACHE"] = "0"
os.environ["MNCL_MACHINE"] = "mncore2"
import mncl as cl
src = open(sys.argv[1]).read()
ctx = cl.create_some_context()
t = time.process_time()
cl.Program(ctx, src).build()
print(time.process_time() - t)
"""


def build_seconds(tree: str, kernel: str) -> float | str:
    env = dict(os.environ, PYTHONPATH=tree)
    r = subprocess.run([sys.executable, "-c", CHILD, os.path.join(HERE, kernel)], cwd=tree, env=env,
                       capture_output=True, text=True, timeout=1800)
    if r.returncode:
        return (r.stderr.strip().splitlines() or ["died"])[-1][:60]
    return float(r.stdout.split()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--against", required=True, help="another checkout of the project (the peer)")
    ap.add_argument("--kernel", action="append", help="a .cl file, relative to this tree (repeatable)")
    ap.add_argument("--rounds", type=int, default=2)
    a = ap.parse_args(argv)
    trees = {"this": HERE, "other": os.path.abspath(a.against)}
    print(f"{'kernel':32} {'this min/med s':>16} {'other min/med s':>16} {'ratio':>7}")
    for k in a.kernel or DEFAULT:
        got = {name: [] for name in trees}
        for _ in range(a.rounds):
            for name, tree in trees.items():
                got[name].append(build_seconds(tree, k))
        cells, med = [], {}
        for name in trees:
            ok = [s for s in got[name] if isinstance(s, float)]
            if not ok:
                cells.append(f"{got[name][0]:>16}")
                continue
            med[name] = statistics.median(ok)
            cells.append(f"{min(ok):7.2f}/{med[name]:<8.2f}")
        ratio = f"{med['this'] / med['other']:7.2f}" if len(med) == 2 else "      -"
        print(f"{k:32} {cells[0]:>16} {cells[1]:>16} {ratio}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
