"""Emulator wall time and emulated cycles of every public case on one machine (a table).

    python tests/public/timings.py [machine]        # default tiny

Each case is built and launched twice: the first run includes the build (and fills the
compile cache), the second is the emulation alone.  Cycles are the sum over the case's launches.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from public.cases import PUBLIC  # noqa: E402
from public.host import run_launches  # noqa: E402
from test_kernel_corpus_emulator import emulator  # noqa: E402


def main(machine: str = "tiny"):
    env = emulator(machine)
    print(f"| case | launches | first run (s) | emulation (s) | cycles on {machine} |\n|---|---|---|---|---|")
    for name, case in PUBLIC.items():
        try:
            t0 = time.perf_counter()
            run_launches(*env, case)
            t1 = time.perf_counter()
            _, events = run_launches(*env, case)
            t2 = time.perf_counter()
            cycles = sum(ev.stats.cycles for ev in events)
            print(f"| {name} | {len(case.launches)} | {t1 - t0:.1f} | {t2 - t1:.1f} | {cycles:,.0f} |")
        except Exception as e:                              # noqa: BLE001 - a table row says what failed
            print(f"| {name} | {len(case.launches)} | - | - | fails: {' '.join(str(e).split())[:90]} |")


if __name__ == "__main__":
    main(*sys.argv[1:])
