"""LBM (samples/lbm) on the emulated machine: MLUPS and % of the modelled DRAM roofline, per form.

    python benchmarks/lbm.py                          # 1024^2 and 2048^2 on mncore2
    python benchmarks/lbm.py --n 1024 --steps 2 --task-steps 4
    python benchmarks/lbm.py --machine tiny --n 64 --case taylor-green

D2Q9 in fp32 reads 9 and writes 9 populations per cell and step: 72 B per cell per step is the
compulsory DRAM traffic, so the roofline is peak DRAM bandwidth / 72 B cell updates per second.
Per grid and form, in one run: emulated cycles and time per step, MLUPS, the fraction of that
roofline (above 100% only where the data does not cross DRAM every step), DRAM bytes per step
against the compulsory 72 n^2, and the emulator's wall time per emulated step.

- plain: samples/lbm/plain.cl, one launch per step (the mean over --steps launches); its build
  is the backend's ("rows" is the fast row-major one, "rows-n2" the same on a wave narrowed twice
  when the full wave's staging does not fit L2BM; "nd" gathers).
- task: samples/lbm/task.cl's streaming kernel, --task-steps steps in one launch (the mean per
  step; the cavity's launch also reads the walls' first values once).
- resident: task.cl's resident kernel, where the grid fits in the PEs' local memories: the
  mean per step of a launch of --task-steps steps (reading the grid in and out once included),
  and the cost of one more step (the difference of two launches: what a long run approaches).
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
from samples.lbm import plain, reference, task      # noqa: E402

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


def figures(n: int, cycles: float, events, machine: str, wall_s: float, steps: int) -> dict:
    """A form's per-step figures from its events (cycles per step given: a launch's mean or a
    difference of two launches)."""
    m = load_machine(machine)
    t = cycles / m.clock_hz
    dram = sum(ev.stats.dram_bytes for ev in events) / steps
    roof = m.peak_dram_bytes_per_s() / BYTES_PER_CELL / 1e6
    mlups = n * n / t / 1e6
    return {"cycles": cycles, "time_us": t * 1e6, "mlups": mlups, "roof_pct": 100 * mlups / roof,
            "dram_x": dram / (BYTES_PER_CELL * n * n), "wall_s": wall_s / steps, "roof_mlups": roof}


def measure_plain(n: int, steps: int, machine: str, case: str) -> dict:
    params = plain.Params(case=case, n=n, nu=0.05, u0=0.04, u_lid=0.1)
    res = plain.PlainLBM(params, "emulator", machine).run(reference.init(params), steps)
    if not np.isfinite(res.f).all():
        raise RuntimeError(f"plain, n = {n}: non-finite populations after {steps} steps")
    return figures(n, sum(ev.stats.cycles for ev in res.events) / steps, res.events, machine, res.wall_s, steps)


def measure_task(n: int, steps: int, machine: str, case: str, resident: bool) -> list:
    """[(label, figures)]: the launch's mean; for the resident mode also one more step's cost."""
    params = plain.Params(case=case, n=n, nu=0.05, u0=0.04, u_lid=0.1)
    solver = task.TaskLBM(params, machine, resident)
    f0 = reference.init(params)
    res = solver.run(f0, steps)
    if not np.isfinite(res.f).all():
        raise RuntimeError(f"task, n = {n}: non-finite populations after {steps} steps")
    cycles = res.events[0].stats.cycles
    name = "resident" if resident else "task"
    out = [(f"{name} ({steps} steps/launch)", figures(n, cycles / steps, res.events, machine, res.wall_s, steps))]
    if resident:
        more = solver.run(f0, 2 * steps)
        extra = more.events[0].stats.cycles - cycles
        dram = (more.events[0].stats.dram_bytes - res.events[0].stats.dram_bytes) / steps
        fig = figures(n, extra / steps, [], machine, more.wall_s / 2, steps)     # wall: the longer launch's mean
        fig["dram_x"] = dram / (BYTES_PER_CELL * n * n)
        out.append((f"{name}, one more step", fig))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, action="append", help="grid side (repeatable; default 1024 and 2048)")
    ap.add_argument("--steps", type=int, default=2, help="plain form: steps (one launch each; default 2)")
    ap.add_argument("--task-steps", type=int, default=8, help="task forms: steps in one launch (default 8)")
    ap.add_argument("--machine", default="mncore2")
    ap.add_argument("--case", default="cavity", choices=("taylor-green", "cavity"))
    a = ap.parse_args(argv)
    ns = a.n or [1024, 2048]
    from translator.backend.abi import SlowerBuildWarning
    warnings.simplefilter("ignore", SlowerBuildWarning)     # the notes below say it, with each reason
    build, why = rows_build(a.machine, a.case)
    for w in why:
        print(f"note: on {a.machine}, lbm_step's {w}", file=sys.stderr)
    print(f"D2Q9 {a.case} on {a.machine}; roofline = peak DRAM / {BYTES_PER_CELL} B per cell update; "
          f"the plain form's build: {build}")
    head = (f"{'grid':>11}  {'form':<26} {'cycles/step':>12} {'us/step':>9} {'MLUPS':>9} {'roofline':>9} "
            f"{'DRAM/72B':>8} {'wall s/step':>11}")
    print(head)
    print("-" * len(head))
    roof = None
    for n in ns:
        rows = [("plain (1 launch/step)", measure_plain(n, a.steps, a.machine, a.case))]
        if n in task.sizes(a.machine, n):
            rows += measure_task(n, a.task_steps, a.machine, a.case, False)
            if task.fits_resident(a.machine, n):
                rows += measure_task(n, a.task_steps, a.machine, a.case, True)
        for label, r in rows:
            share = f"{r['roof_pct']:.1f}%" if r["roof_pct"] < 100 else f"{r['roof_pct'] / 100:.2f}x"
            print(f"{n:>5}x{n:<5}  {label:<26} {r['cycles']:>12,.0f} {r['time_us']:>9.1f} {r['mlups']:>9.1f} "
                  f"{share:>9} {r['dram_x']:>7.2f}x {r['wall_s']:>11.2f}", flush=True)
            roof = r["roof_mlups"]
    print(f"(the roofline: {roof:,.0f} MLUPS on {a.machine}; task forms on the sizes task.sizes() lists, "
          f"the resident mode where task.fits_resident())")
    return 0


if __name__ == "__main__":
    sys.exit(main())
