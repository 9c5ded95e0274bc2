"""Per-instruction cost of the emulator on the full machine (mncore2, 4096 PEs).

    python benchmarks/op_costs.py              # about half a minute
    python benchmarks/op_costs.py --random     # memories filled with random bits first
    python benchmarks/op_costs.py --n 500 --runs 5

Each case is a small block (the instruction, plus nops so that strict mode sees no
hazard) called by a sequencer loop n times; the program is assembled once, run once
to warm the executor's caches, then ``emu.run`` is timed ``--runs`` times and the
median is kept.  Printed per case: microseconds per loop iteration, and the ratio to
the ``iadd`` case measured in the same run (the peer; a ratio survives a faster or
busier machine better than a raw time).  A bare ``nop`` case shows the fixed cost of
a step.  With the default zeroed memories every float is +0, the common case of a
freshly started machine; ``--random`` fills LM0/LM1/GRF0/GRF1 with random bit
patterns (NaN, inf, denormals and all), so the slow paths of normalisation run.

The block bodies are the ones the speed work of branch emu-speed was measured on.
This file is not a test: pytest collects only tests/.
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from emulator.asm import assemble
from emulator.executor import Emulator

CASES = [
    ("nop", "    nop"),
    ("iadd", "    iadd $lr0v $lr8v $lr16v\n    nop\n    nop"),
    ("inot (flag write)", "    inot $lr0v $omr1\n    nop\n    nop"),
    ("T-indirect read", "    lpassa $lmt0 $lr8v\n    nop\n    nop"),
    ("T-indirect write", "    ipassa $lr8v $mt64\n    nop\n    nop"),
    ("lpassa masked", "    inot $lr0v $omr1\n    nop\n    lpassa $lr8v $lr16v/$imr1\n    nop"),
    ("lpassa mixed mask", "    ldec $subpeid $omr1\n    nop\n    lpassa $lr8v $lr16v/$imr1\n    nop"),
    ("fvadd", "    fvadd $lr0v $lr8v $lr16v\n    nop\n    nop"),
    ("fvmul", "    fvmul $lr0v $lr8v $lr16v\n    nop\n    nop"),
    ("fvfma", "    fvfma $lr0v $lr8v $lr24v $lr16v\n    nop\n    nop"),
    ("dvfmad", "    dvfmad $lr0v $lr8v $lr24v $lr16v\n    nop\n    nop"),
    ("ditof", "    ditof $lr0v $lr16v\n    nop\n    nop"),
    ("l1bmd", "    l1bmd $lb0 $lr0v\n    nop\n    nop"),
    ("l2bmd", "    l2bmd $lc0 $lb0\n    nop\n    nop"),
    # the rest of the steps of a compiled matrix-vector product (benchmarks/compiled_kernels.py matvec_t)
    ("ladd", "    ladd $lr0v $lr8v $lr16v\n    nop\n    nop"),
    ("lor", "    lor $lr0v $lr8v $lr16v\n    nop\n    nop"),
    ("llsl", "    llsl $lr0v $lr8v $lr16v\n    nop\n    nop"),
    ("ulsr", "    ulsr $lr0v $lr8v $lr16v\n    nop\n    nop"),
    ("l1bmp", "    l1bmp $lb0 $lr0v\n    nop\n    nop"),
    ("l2bmd up", "    l2bmd $lb0 $lc0\n    nop\n    nop"),
    ("mvd down", "    mvd/n4096i1 $d0 $lc64\n    wait i1\n    nop"),
    ("mvd up", "    mvd/n4096i1 $lc64 $d0\n    wait i1\n    nop"),
    # the commonest steps of compiled kernels (benchmarks/real_kernels.py: jacobi-2d, gemv_t, atax)
    ("l1bmp ll", "    l1bmp $llb72 $llm16v\n    nop\n    nop"),
    ("lpassa", "    lpassa $lr232v $lr272v\n    nop\n    nop"),
    ("lpassa flag mask", "    inot $lr0v $omr1\n    nop\n    lpassa $lr8v $lr16v/$imr1\n    nop"),
    ("imax flag", "    imax $lr496v $lr248v $omr5\n    nop\n    nop"),
    ("msl", "    msl $lr320v $lr344v\n    nop\n    nop"),
    ("zero", "    zero $lr320v\n    nop\n    nop"),
    ("iadd; l1bmriiadd", "    iadd $lr0v $lr8v $lr16v; l1bmriiadd $lr24v $lb64\n    nop\n    nop"),
    ("fvmul; iand", "    iand $lr112v $lr488v $lr248v; fvmul $lr112v $lr160v $lr168v\n    nop\n    nop"),
]


def bench(emu, body, n, runs):
    src = f".block b\n{body}\n.endblock\n.loop %i = 0, {n}\n    .call b\n.endloop\n"
    prog = assemble(src)
    emu.run(prog)
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        emu.run(prog)
        times.append(time.perf_counter() - t)
    return statistics.median(times) / n * 1e6


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=1000, help="loop iterations per run (default 1000)")
    ap.add_argument("--runs", type=int, default=3, help="timed runs per case; the median is kept (default 3)")
    ap.add_argument("--random", action="store_true", help="fill the PE memories with random bits first")
    ap.add_argument("--only", nargs="*", help="names of the cases to run (default all)")
    args = ap.parse_args(argv)
    emu = Emulator("mncore2")
    if args.random:
        rng = np.random.default_rng(2024)
        for mem in emu.state.mem.values():
            mem[:64] = rng.integers(0, 1 << 64, size=mem[:64].shape, dtype=np.uint64, endpoint=False)
    cases = [c for c in CASES if not args.only or c[0] in args.only or c[0] == "iadd"]
    res = {name: bench(emu, body, args.n, args.runs) for name, body in cases}
    ref = res["iadd"]
    print(f"{'case':<20} {'us/iter':>9} {'x iadd':>7}")
    for name, us in res.items():
        print(f"{name:<20} {us:9.1f} {us / ref:7.2f}")


if __name__ == "__main__":
    main()
