"""The D2Q9 lattice-Boltzmann sample: run a case on a device (or the numpy reference), check it, draw it.

    python samples/lbm/run.py --reference                                   # Taylor-Green, N = 32, 200 steps
    python samples/lbm/run.py --case taylor-green --n 64 --reference        # 800 steps (diffusive scaling)
    python samples/lbm/run.py --case cavity --n 64 --reference --png out/   # Re 100 to steady state, vs Ghia
    python samples/lbm/run.py --case channel --n 96 --steps 24000 --reference --png out/
    python samples/lbm/run.py --form plain --device emulator --machine tiny --n 16 --steps 20
    python samples/lbm/run.py --form task --machine mncore2 --case cavity --n 1024 --steps 4
    python samples/lbm/run.py --form task --resident --machine tiny --case cavity --n 64 --png out/

The scheme (reference.py has it in full): D2Q9, BGK, fp32, one fused pull stream-and-collide per
step, half-way bounce-back walls, a moving lid (cavity).  Forms: 'plain' (samples/lbm/plain.py, one
OpenCL C kernel per step on the 'cpu' or 'emulator' device), 'task' (samples/lbm/task.py, a task
kernel running many steps per launch on the emulator; Taylor-Green and the cavity, n = 64 or 128
on tiny, 1024 or 2048 on mncore2), or --reference (the numpy fp32 reference, host only).  A device run is also run on the reference and compared with it.

Checks (checks.py has the definitions and the reasons for the tolerances):
  taylor-green: L2 error of u against the analytic decay; mass drift <= 1e-6;
  cavity: runs to steady state (u changes < 1e-4 U_lid over 1000 steps; --steps caps the run, or fixes
          it), then Ghia et al. (1982) at Re = 100: max deviation <= 0.02 U_lid, rms <= 0.01; mass drift;
  channel: finite fields only (pictures; reference only);
  device forms: max |u - u_reference| <= 1e-4 u_max.
Exit status 1 when a check fails, 2 on a usage error (a form not built, a missing module).
"""
from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))                      # samples.lbm, mncl, emulator from the checkout

from samples.lbm import checks as C                   # noqa: E402
from samples.lbm import reference as R                # noqa: E402

DEFAULT_N = {"taylor-green": 32, "cavity": 64, "channel": 96}
CAVITY_MAX_STEPS = 200_000       # to steady state, unless --steps says otherwise
CHANNEL_STEPS = 24_000
CHANNEL_ASPECT = 4
BYTES_PER_CELL_STEP = 72         # D2Q9 fp32: 9 populations read + 9 written
PROGRESS_FROM = 2000             # a progress bar from this many steps (or any device run)
MASS_TOL_CAVITY = 1e-5           # the lid's fp32 +-6 w U terms do not cancel exactly: 2.1e-6 at N = 64, 10000 steps


class UsageError(Exception):
    pass


# -- the forms: each advance(f, steps, progress) -> f --------------------------------------------------

class Runner:
    """Runs steps of one form, keeping events and wall time across calls."""

    def __init__(self, args, p: R.Params):
        self.p = p
        self.events: list = []
        self.wall_s = 0.0
        self.steps = 0
        self.label = "numpy reference"
        self.device = None
        if args.reference:
            self._advance = lambda f, s, prog: R.run(f, p, s, progress=prog)
            return
        if p.case == "channel":
            raise UsageError("--case channel runs on the numpy reference only (pictures); add --reference")
        self.device = args.device
        machine = args.machine if args.device == "emulator" else None
        where = f" ({machine or 'default machine'})" if args.device == "emulator" else ""
        if args.form == "task":
            if args.device != "emulator":
                raise UsageError("--form task runs on the emulator device (task kernels are the machine's)")
            from samples.lbm import task
            try:
                solver = task.TaskLBM(p, machine or "mncore2", resident=args.resident)
            except ValueError as e:
                raise UsageError(f"--form task: {e}") from None
            self.label = (f"task{' (resident)' if args.resident else ''} on emulator ({solver.machine.name}; "
                          f"one launch per run, or per steady-state window)")
            run = solver.run
        else:
            from samples.lbm import plain
            self.label = f"plain on {args.device}{where}"
            run = lambda f, s, prog: plain.run(p, f, s, device=args.device, machine=machine, progress=prog)  # noqa: E731

        def adv(f, s, prog):
            res = run(f, s) if args.form == "task" else run(f, s, prog)
            self.events += list(res.events)
            self.wall_s += res.wall_s
            return np.asarray(res.f, np.float32)
        self._advance = adv

    def advance(self, f, steps, progress=None):
        base = self.steps
        prog = (lambda d, *_: progress(base + d)) if progress else None     # progress(done) (or (done, total))
        t0 = time.perf_counter()
        g = self._advance(f, steps, prog)
        if self.device is None:
            self.wall_s += time.perf_counter() - t0
        self.steps += steps
        if progress:
            progress(self.steps)
        return g


# -- progress -----------------------------------------------------------------------------------------

class Progress:
    """A rich progress bar (or a plain line every 10 % without rich); a no-op when off."""

    def __init__(self, total: int, label: str, on: bool):
        self.total, self.bar, self.task, self.last = total, None, None, -1
        self.on = on
        if not on:
            return
        try:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress as RP, TimeElapsedColumn, \
                TimeRemainingColumn
            self.bar = RP("[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
                          TimeElapsedColumn(), TimeRemainingColumn(), transient=True)
            self.bar.start()
            self.task = self.bar.add_task(label, total=total)
        except ImportError:
            print(f"{label}: {total} steps", flush=True)

    def __call__(self, done: int) -> None:
        if not self.on:
            return
        if self.bar is not None:
            self.bar.update(self.task, completed=min(done, self.total))
        elif self.total and done * 10 // self.total != self.last:
            self.last = done * 10 // self.total
            print(f"  {done}/{self.total} steps", flush=True)

    def close(self):
        if self.bar is not None:
            self.bar.stop()


# -- the cases --------------------------------------------------------------------------------------

def run_case(args, p: R.Params, runner: Runner):
    """Run the case; returns (f0, f, f_before_last_window or None, steps, frames)."""
    f0 = R.init(p)
    frames = []
    if p.case == "cavity":
        cap = args.steps or CAVITY_MAX_STEPS
        window = C.STEADY_WINDOW
        bar = Progress(cap, f"{runner.label}: cavity N = {p.n} (to steady state, at most {cap} steps)",
                       args.progress and (cap >= PROGRESS_FROM or runner.device is not None))
        f, prev = f0, None
        try:
            while runner.steps < cap:
                s = min(window, cap - runner.steps)
                g = runner.advance(f, s, bar)
                prev, f = (f if s == window else None), g
                if not args.steps and prev is not None and C.velocity_change(prev, f) < C.STEADY_TOL * p.u_lid:
                    break
        finally:
            bar.close()
        return f0, f, prev, runner.steps, frames
    steps = args.steps or (C.tg_reference_steps(p.n) if p.case == "taylor-green" else CHANNEL_STEPS)
    bar = Progress(steps, f"{runner.label}: {p.case} N = {p.n}",
                   args.progress and (steps >= PROGRESS_FROM or runner.device is not None))
    try:
        if p.case == "channel" and args.png:
            nf = args.frames
            marks = [steps - (nf - 1 - i) * args.frame_every for i in range(nf)]
            marks = [m for m in marks if m > 0]
            f = f0
            for m in marks:
                f = runner.advance(f, m - runner.steps, bar)
                frames.append((m, f))
            if runner.steps < steps:
                f = runner.advance(f, steps - runner.steps, bar)
        else:
            f = runner.advance(f0, steps, bar)
    finally:
        bar.close()
    return f0, f, None, steps, frames


def case_checks(args, p, f0, f, prev, steps, reference_f) -> list:
    out = []
    if reference_f is not None:
        out.append(C.agreement(f, reference_f, p.u_max, "device"))
    if p.case == "taylor-green":
        out.append(C.taylor_green_error(f, p, steps))
        out.append(C.mass_drift(f0, f))
    elif p.case == "cavity":
        if prev is not None:
            out.append(C.steady_state(prev, f, p.u_lid))
        else:
            out.append(C.Check("steady state", float("nan"), C.STEADY_TOL, False,
                               f"fewer than {C.STEADY_WINDOW} steps in the last window: cannot tell"))
        md = C.mass_drift(f0, f)
        md.tolerance, md.passed = MASS_TOL_CAVITY, md.value <= MASS_TOL_CAVITY
        md.detail += "; the lid's fp32 terms: tolerance 1e-5"
        out.append(md)
        if abs(p.re - 100) < 1e-9:
            out += C.ghia(f, p.u_lid)
        else:
            print(f"(Ghia comparison only at Re = 100; this run is Re = {p.re:g})")
    else:
        ok = bool(np.all(np.isfinite(f)))
        out.append(C.Check("channel: all populations finite", 0.0 if ok else 1.0, 0.0, ok))
    return out


# -- the table --------------------------------------------------------------------------------------

def perf_rows(runner: Runner, p: R.Params, steps: int) -> list[tuple[str, str]]:
    cells = p.nx * p.ny
    rows = [("form", runner.label), ("grid", f"{p.nx} x {p.ny} = {cells} cells"), ("steps", str(steps))]
    if runner.events and hasattr(runner.events[0], "stats") and getattr(runner.events[0], "stats", None) is not None:
        sums = [ev.stats.summary() for ev in runner.events]
        t = sum(s["time_s"] for s in sums)
        peak = sums[0]["roofline"]["dram_bytes_per_s"]
        mlups = cells * steps / t / 1e6 if t else float("nan")
        links: dict = defaultdict(float)
        for s in sums:
            for k, v in s["bytes_by_link"].items():
                links[k.split(".")[0]] += v
        rows += [("emulated time per step", f"{t / steps * 1e6:,.2f} us"),
                 ("MLUPS (emulated)", f"{mlups:,.2f}"),
                 ("% of DRAM roofline", f"{100 * BYTES_PER_CELL_STEP * mlups * 1e6 / peak:.1f}%  "
                                        f"(72 B/cell/step x MLUPS / {peak / 1e9:,.1f} GB/s)")]
        for k in sorted(links):
            rows.append((f"bytes moved: {k}", f"{links[k] / 1e6:,.3f} MB  ({links[k] / (cells * steps):.1f} B/cell/step)"))
        rows.append(("emulator wall time", f"{runner.wall_s:.2f} s  ({runner.wall_s / steps * 1e3:.2f} ms per step)"))
    else:
        mlups = cells * steps / runner.wall_s / 1e6 if runner.wall_s else float("nan")
        rows += [("host wall time", f"{runner.wall_s:.2f} s  ({runner.wall_s / steps * 1e3:.3f} ms per step)"),
                 ("MLUPS (host)", f"{mlups:,.2f}")]
    return rows


def print_rows(rows) -> None:
    w = max(len(a) for a, _ in rows)
    for a, b in rows:
        print(f"  {a.ljust(w)}  {b}")


# -- pictures ------------------------------------------------------------------------------------------

def draw(args, p, f, frames, steps) -> list[Path]:
    from samples.lbm import plots
    d = Path(args.png)
    solid = R.channel_solid(p) if p.case == "channel" else None
    tag = f"{p.case}-n{p.n}"
    what = {"taylor-green": f"Taylor-Green, N = {p.n}, step {steps}",
            "cavity": f"cavity, Re = {p.re:g}, N = {p.n}, step {steps}",
            "channel": f"cylinder, Re = {p.re:g}, {p.nx} x {p.ny}, step {steps}"}[p.case]
    out = [plots.speed(f, d / f"{tag}-speed.png", p.u_max, f"{what}: |u| / u_max, streamlines", solid),
           plots.vorticity(f, d / f"{tag}-vorticity.png", f"{what}: vorticity", solid)]
    if p.case == "cavity" and abs(p.re - 100) < 1e-9:          # Ghia's columns are Re = 100
        out.append(plots.ghia_profiles(f, d / f"{tag}-ghia.png", p.u_lid,
                                       f"cavity Re = {p.re:g}, N = {p.n}: centre lines vs Ghia et al. (1982)"))
    if frames:
        out.append(plots.frames([g for _, g in frames], [s for s, _ in frames], d / f"{tag}-frames.png", solid,
                                f"flow past a cylinder, Re = {p.re:g}: vorticity"))
    return out


# -- main ------------------------------------------------------------------------------------------------

def parse(argv):
    ap = argparse.ArgumentParser(prog="samples/lbm/run.py", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    ap.add_argument("--case", choices=R.CASES, default="taylor-green")
    ap.add_argument("--n", type=int, help="cells per side (default: taylor-green 32, cavity 64, channel 96 rows)")
    ap.add_argument("--steps", type=int, help="time steps (default: taylor-green 200 (n/32)^2; cavity: to "
                    f"steady state, at most {CAVITY_MAX_STEPS}; channel {CHANNEL_STEPS})")
    ap.add_argument("--re", type=float, default=R.RE, help="Reynolds number, cavity U_lid n / nu, channel U D / nu "
                    "(default 100)")
    ap.add_argument("--form", choices=("plain", "task"), default="plain")
    ap.add_argument("--resident", action="store_true", help="--form task: keep the grid in the PEs' local "
                    "memories for the whole run (where it fits: n = 64, 128 on tiny, 1024 on mncore2)")
    ap.add_argument("--machine", default=None, help="emulator machine: tiny, mncore2 or a TOML file "
                    "(default: the device's, $MNCL_MACHINE else mncore2)")
    ap.add_argument("--device", choices=("cpu", "emulator"), default="emulator")
    ap.add_argument("--reference", action="store_true", help="run the numpy fp32 reference instead of a device form")
    ap.add_argument("--png", metavar="DIR", help="write pictures to DIR")
    ap.add_argument("--aspect", type=int, default=CHANNEL_ASPECT, help="channel: width / height (default 4)")
    ap.add_argument("--frames", type=int, default=4, help="channel with --png: vorticity frames (default 4)")
    ap.add_argument("--frame-every", type=int, default=600, help="channel: steps between frames (default 600)")
    ap.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bar")
    args = ap.parse_args(argv)
    if args.n is not None and args.n < 4:
        ap.error("--n must be at least 4")
    if args.steps is not None and args.steps < 1:
        ap.error("--steps must be at least 1")
    if args.resident and args.form != "task":
        ap.error("--resident is a mode of --form task")
    return args


def main(argv=None) -> int:
    args = parse(argv)
    n = args.n or DEFAULT_N[args.case]
    p = R.Params.for_case(args.case, n, re=args.re, aspect=args.aspect if args.case == "channel" else 1)
    try:
        runner = Runner(args, p)
    except UsageError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"{p.case}: {p.nx} x {p.ny} cells, nu = {p.nu:.6g}, tau = {p.tau:.6g}, "
          + (f"u0 = {p.u0:g}" if p.case == "taylor-green" else f"U = {p.u_lid:g}, Re = {p.re:g}")
          + f"; {runner.label}", flush=True)
    try:
        f0, f, prev, steps, frames = run_case(args, p, runner)
    except Exception as e:          # a build or launch error of the device form: its message, not a traceback
        if runner.device is None or type(e).__module__.split(".")[0] != "mncl":
            raise
        print(f"error: {e}", file=sys.stderr)
        return 1

    reference_f = None
    if runner.device is not None:
        reference_f = R.run(f0, p, steps)
    print(f"\n{steps} steps")
    print_rows(perf_rows(runner, p, steps))
    results = case_checks(args, p, f0, f, prev, steps, reference_f)
    print("\nchecks")
    for c in results:
        print("  " + c.line)
    if args.png:
        for path in draw(args, p, f, frames, steps):
            print(f"wrote {path}")
    failed = [c for c in results if not c.passed]
    if failed:
        print(f"\n{len(failed)} check(s) failed")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
