"""LBM (samples/lbm) on the emulated machine: MLUPS and % of the modelled DRAM roofline.

    python benchmarks/lbm.py                          # 1024^2 and 2048^2 on mncore2, 3 steps each
    python benchmarks/lbm.py --n 256 --steps 2        # a quick look
    python benchmarks/lbm.py --machine tiny --n 64 --case taylor-green

D2Q9 in fp32 reads 9 and writes 9 populations per cell and step: 72 B per cell per step is the
compulsory DRAM traffic, so the roofline is peak DRAM bandwidth / 72 B cell updates per second.
Per grid: emulated cycles and time per step (the mean over the timed steps, halo launches
included), MLUPS, % of that roofline, DRAM bytes per step against the compulsory 72 n^2, the
build the backend ran ("rows" is the fast row-major one, "rows-n2" the same on a wave narrowed twice
when the full wave's staging does not fit L2BM; "nd" gathers), and the emulator's wall
time per emulated step.  The task form's column says "not built" until samples/lbm has one.
"""
from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from emulator.machine import load_machine          # noqa: E402
from samples.lbm import plain, reference            # noqa: E402

BYTES_PER_CELL = 72


def rows_build(machine: str, case: str) -> tuple:
    """The rows build lbm_step's 2-D launch runs on `machine`, as the runtime picks it (abi.choose_variant:
    the full wave's, else one narrowed 2 or 4 times), and why the faster ones did not compile;
    ("nd", reasons) when none does."""
    from translator import compile_opencl
    from translator.backend import compile_kernel
    src = plain.SOURCE_PATH.read_text()
    module = compile_opencl(src, filename=str(plain.SOURCE_PATH), options=(f"-DLBM_CASE={plain.CASES[case]}",),
                            spmd=True)
    why = []
    for mode in ("rows", "rows-n2", "rows-n4"):
        try:
            compile_kernel(module, "lbm_step", load_machine(machine), mode)
            return mode, why
        except Exception as e:          # noqa: BLE001 - reported, not hidden
            why.append(f"{mode}: {str(e).splitlines()[0]}")
    return "nd", why


def measure_plain(n: int, steps: int, machine: str, case: str) -> dict:
    params = plain.Params(case=case, n=n, nu=0.05, u0=0.04, u_lid=0.1)
    solver = plain.PlainLBM(params, "emulator", machine)
    res = solver.run(reference.init(params), steps)
    if not np.isfinite(res.f).all():
        raise RuntimeError(f"n = {n}: non-finite populations after {steps} steps")
    cycles = sum(ev.stats.cycles for ev in res.events) / steps
    t = sum(ev.stats.time_s for ev in res.events) / steps
    dram = sum(ev.stats.dram_bytes for ev in res.events) / steps
    peak = load_machine(machine).peak_dram_bytes_per_s()
    mlups = n * n / t / 1e6
    roof = peak / BYTES_PER_CELL / 1e6
    return {"n": n, "cycles": cycles, "time_us": t * 1e6, "mlups": mlups, "roof_pct": 100 * mlups / roof,
            "dram_x": dram / (BYTES_PER_CELL * n * n), "wall_s": res.wall_s / steps, "roof_mlups": roof}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, action="append", help="grid side (repeatable; default 1024 and 2048)")
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--machine", default="mncore2")
    ap.add_argument("--case", default="cavity", choices=sorted(plain.CASES))
    a = ap.parse_args(argv)
    ns = a.n or [1024, 2048]
    from translator.backend.abi import SlowerBuildWarning
    warnings.simplefilter("ignore", SlowerBuildWarning)     # the notes below say it, with each reason
    build, why = rows_build(a.machine, a.case)
    for w in why:
        print(f"note: on {a.machine}, lbm_step's {w}", file=sys.stderr)
    print(f"D2Q9 {a.case} on {a.machine}, {a.steps} step(s) per grid, roofline = peak DRAM / {BYTES_PER_CELL} B")
    head = (f"{'grid':>11} | {'plain: cycles/step':>18} {'us/step':>9} {'MLUPS':>9} {'% roof':>7} "
            f"{'DRAM/72B':>8} {'build':>7} {'wall s/step':>11} | {'task form':>9}")
    print(head)
    print("-" * len(head))
    for n in ns:
        r = measure_plain(n, a.steps, a.machine, a.case)
        print(f"{n:>5}x{n:<5} | {r['cycles']:>18,.0f} {r['time_us']:>9.1f} {r['mlups']:>9.1f} {r['roof_pct']:>6.2f}% "
              f"{r['dram_x']:>7.2f}x {build:>7} {r['wall_s']:>11.2f} | {'not built':>9}", flush=True)
    print(f"(the roofline: {r['roof_mlups']:,.0f} MLUPS on {a.machine})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
