"""Running a benchmark kernel case on the emulator device and under Oclgrind, each in a child process.

Shared by benchmarks/compiled_kernels.py and benchmarks/real_kernels.py.  A *case* is a plain
dict that crosses into a child process as JSON plus an .npz of its arrays:

  name, source, size (text), arrays {name: ndarray}, outputs [array names],
  min_bytes (the bytes the kernel must move at minimum),
  and either one launch as top-level fields (kernel, global_size, args[, local_size])
  or launches: [{kernel, global_size, local_size (or None), args}, ...] run in order.

An argument is ("buf", array name), ("f32", value), ("f64", value), ("i32", value) or ("local", bytes) (a
``__local`` pointer argument).  A script's ``check(case, outputs)`` compares the outputs
({name: ndarray}) with its reference and returns (ok, max abs error, text); it runs in the
emulator's child and in the parent for Oclgrind's outputs.

The script that owns the cases must answer ``--emulator-child DIR`` (with ``emulator_child``)
and ``--oclgrind-child DIR`` (with ``oclgrind_child``): the children run that script again.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

REPEAT = 3                   # runs per kernel on each side, the fastest counts (inputs restored between)
REPEAT_BELOW_S = 5.0         # ... while a run takes less than this; the second always runs (the first
                             # assembles the builds the launches pick and compiles the emulator's
                             # native kernels: one-time costs, as Oclgrind's build is)


def launches(case: dict) -> list[dict]:
    """The case's launches, in order (a one-launch case keeps them as top-level fields)."""
    if "launches" in case:
        return case["launches"]
    return [{"kernel": case["kernel"], "global_size": case["global_size"],
             "local_size": case.get("local_size"), "args": case["args"]}]


def scalar(kind: str, value):
    return {"f32": np.float32, "f64": np.float64}.get(kind, np.int32)(value)


def make_buffers(cl, ctx, case: dict) -> dict:
    mf = cl.mem_flags
    return {k: cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=v) for k, v in case["arrays"].items()}


def launch_args(cl, bufs: dict, args) -> list:
    out = []
    for kind, v in args:
        if kind == "buf":
            out.append(bufs[v])
        elif kind == "local":
            out.append(cl.LocalMemory(int(v)))
        else:
            out.append(scalar(kind, v))
    return out


def get_kernels(prg, case: dict) -> dict:
    """{kernel name: kernel object}, one object per name (set_arg per launch, as a host does)."""
    names = dict.fromkeys(l["kernel"] for l in launches(case))
    return {name: getattr(prg, name) for name in names}


def enqueue_launches(cl, q, kernels: dict, case: dict, bufs: dict) -> list:
    """Every launch of the case in order on the in-order queue `q`; returns their events."""
    events = []
    for l in launches(case):
        ls = l.get("local_size")
        events.append(kernels[l["kernel"]](q, tuple(l["global_size"]), tuple(ls) if ls else None,
                                           *launch_args(cl, bufs, l["args"])))
    return events


def restore_inputs(cl, q, case: dict, bufs: dict) -> None:
    for k, v in case["arrays"].items():      # the inputs again (kernels update arrays in place)
        cl.enqueue_copy(q, bufs[k], v)
    q.finish()


def read_outputs(cl, q, case: dict, bufs: dict) -> dict:
    outs = {}
    for name in case["outputs"]:
        outs[name] = np.empty_like(case["arrays"][name])
        cl.enqueue_copy(q, outs[name], bufs[name])
    q.finish()
    return outs


def run_case(cl, ctx, q, case: dict) -> dict:
    """Build, run every launch once, read back: {output name: array}.  For tests, on any cl module."""
    prg = cl.Program(ctx, case["source"]).build()
    bufs = make_buffers(cl, ctx, case)
    enqueue_launches(cl, q, get_kernels(prg, case), case, bufs)
    return read_outputs(cl, q, case, bufs)


# -- formatting -------------------------------------------------------------------------------------

def first_line(exc: BaseException) -> str:
    """The informative first line of an error: mncl's build errors put the log after a bare header."""
    lines = [l.strip() for l in str(exc).splitlines() if l.strip()]
    lines = [l for l in lines if not l.endswith(" -") and not l.startswith("Build on ")] or lines
    text = lines[0] if lines else ""
    for prefix in ("the device could not load the compiled module: ",):
        text = text.replace(prefix, "")
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def short_error(msg: str, width: int = 80) -> str:
    """For the table: the stage, then the diagnostic after its 'file:line:col: error: ' prefix."""
    stage, _, rest = msg.partition(" failed: ")
    text = rest.rsplit("error: ", 1)[-1] if "error: " in rest else rest
    out = f"{stage}: {text}" if rest else msg
    return out if len(out) <= width else out[:width - 3] + "..."


def pct(frac: float) -> str:
    return f"{frac * 100:.1f}%" if frac >= 0.01 else f"{frac * 100:.2g}%"


def times(r: float) -> str:
    return f"{r:.1f}x" if r >= 1 else f"{r:.2g}x"


def timed_out(emu: dict) -> bool:
    """The emulator's launch (not its build) ran past --emu-timeout."""
    return emu.get("error", "").startswith("launch failed: timed out")


def fmt_table(rows) -> list[str]:
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(rows[0]))]
    line = lambda cells: "  ".join(str(c).ljust(w) for c, w in zip(cells, widths)).rstrip()
    return [line(rows[0]), line(["-" * w for w in widths])] + [line(r) for r in rows[1:]]


def source_tree() -> str:
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        head = subprocess.run(["git", "-C", here, "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, timeout=10)
        dirty = subprocess.run(["git", "-C", here, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10)
        if head.returncode == 0:
            return f"git {head.stdout.strip()}" + (", with uncommitted changes" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        pass
    return "not a git checkout"


# -- the emulator device ----------------------------------------------------------------------------

def fresh_emulator_device(machine: str):
    """A new emulator device for `machine` (its own Emulator), not registered with the platform."""
    import mncl
    return mncl.get_device(machine=machine, new=True)


def run_emulator(case: dict, check, machine: str, progress=lambda res: None, repeat: int = REPEAT) -> dict:
    """Build (timed), the fastest of up to `repeat` timed runs of all the case's launches, the
    result checked.  Never raises: errors land in 'error'.  progress(res) is called when a stage
    starts, so a parent that has to kill a slow child still knows how far it got.  Cycles, steps,
    emulated time and DRAM bytes are summed over the launches of the fastest run."""
    import mncl as cl
    res = {"stage": "device"}
    try:
        dev = fresh_emulator_device(machine)
        emu = dev.backend.emu             # the Emulator itself (lazy; about a millisecond)
        run = emu.run
        res["run_s"] = 0.0

        def timed_run(*a, **k):           # how much of the launch is the emulator proper
            t = time.perf_counter()
            try:
                return run(*a, **k)
            finally:
                res["run_s"] += time.perf_counter() - t
        emu.run = timed_run
        ctx = cl.Context([dev])
        q = cl.CommandQueue(ctx)
        res["stage"] = "build"
        progress(res)
        t0 = time.perf_counter()
        prg = cl.Program(ctx, case["source"]).build()
        res["build_s"] = time.perf_counter() - t0
        kernels = get_kernels(prg, case)
        res["stage"] = "buffers"
        bufs = make_buffers(cl, ctx, case)
        res["stage"] = "launch"
        progress(res)
        best = None
        for _ in range(repeat):
            restore_inputs(cl, q, case, bufs)
            res["run_s"] = 0.0
            t0 = time.perf_counter()
            events = enqueue_launches(cl, q, kernels, case, bufs)
            events[-1].wait()
            wall = time.perf_counter() - t0
            if best is None or (wall, res["run_s"]) < best[:2]:
                best = (wall, res["run_s"], events)
            if wall > REPEAT_BELOW_S and _:
                break
        res["wall_s"], res["run_s"], events = best
        stats = [ev.stats for ev in events]
        res["cycles"] = float(sum(st.cycles for st in stats))
        res["steps"] = int(sum(st.steps for st in stats))
        res["emulated_s"] = sum(st.time_s for st in stats)
        res["dram_bytes"] = sum(st.dram_bytes for st in stats)
        m = stats[0].machine
        res["dram_bytes_per_cycle"] = m.links["dram_l2bm"].bytes_per_cycle * m.groups
        res["bw_fraction"] = case["min_bytes"] / (res["cycles"] * res["dram_bytes_per_cycle"]) if res["cycles"] else 0.0
        res["stage"] = "read back"
        res["ok"], res["max_err"], res["check"] = check(case, read_outputs(cl, q, case, bufs))
        res.pop("stage")
    except Exception as exc:          # a report, not a test: the row says what failed, the script goes on
        res["error"] = f"{res['stage']} failed: {first_line(exc)}"
    return res


def write_case(case: dict, d: str) -> None:
    """A case for a child process: case.json (the plain fields) and in.npz (the arrays)."""
    with open(os.path.join(d, "case.json"), "w") as f:
        json.dump({k: v for k, v in case.items() if k != "arrays"}, f)
    np.savez(os.path.join(d, "in.npz"), **case["arrays"])


def read_case(d: str) -> dict:
    with open(os.path.join(d, "case.json")) as f:
        case = json.load(f)
    with np.load(os.path.join(d, "in.npz")) as z:
        case["arrays"] = {k: z[k].copy() for k in z.files}
    return case


def emulator_child(d: str, check, machine: str, repeat: int = REPEAT) -> int:
    """Runs in the emulator's child process: one JSON line per stage started, the result last."""
    def progress(res):
        print(json.dumps(res), flush=True)
    print(json.dumps(run_emulator(read_case(d), check, machine, progress, repeat)), flush=True)
    return 0


def last_json(text) -> dict | None:
    if isinstance(text, bytes):
        text = text.decode(errors="replace")
    for line in reversed((text or "").strip().splitlines()):
        try:
            return json.loads(line)
        except ValueError:
            continue
    return None


def run_emulator_process(case: dict, timeout: float, script: str, child_args=(), checkout: str | None = None) -> dict:
    """run_emulator in a fresh process (`script --emulator-child DIR *child_args`): a kernel that
    hangs, crashes the interpreter or exhausts memory becomes a row that says so, and no launch
    sees another kernel's.  checkout: import the emulator (and mncl, translator) from that tree."""
    d = tempfile.mkdtemp(prefix="kernel_harness_emu_")
    try:
        write_case(case, d)
        cmd = [sys.executable, os.path.abspath(script), "--emulator-child", d, *child_args]
        try:
            env = {**os.environ, "MNCL_CACHE": "0"}
            if checkout:
                env["PYTHONPATH"] = os.path.abspath(checkout)
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
        except subprocess.TimeoutExpired as e:
            res = last_json(e.stdout) or {"stage": "start-up"}
            res["error"] = f"{res.pop('stage', 'launch')} failed: timed out after {timeout:.0f} s (--emu-timeout)"
            return res
        res = last_json(r.stdout)
        if r.returncode or res is None:
            tail = (r.stderr.strip() or r.stdout.strip()).splitlines()
            res = res or {"stage": "start-up"}
            res["error"] = (f"{res.pop('stage', 'launch')} failed: child exit {r.returncode}: "
                            f"{tail[-1] if tail else ''}")
        return res
    finally:
        shutil.rmtree(d, ignore_errors=True)


def compare_checkouts(cases, script: str, checkout: str, rounds: int, timeout: float, child_args=()) -> None:
    """Each case's emulator steps/s (steps / time in Emulator.run) and time in Emulator.run with this
    tree's packages and with `checkout`'s, the two taking turns `rounds` times (the same machine load
    for both); prints the best and the median of each side and their ratios.  Where the two trees'
    compilers emit different programs (other step counts), the time is the figure that compares."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    print(f"steps/s and seconds in Emulator.run, this tree ({here}) against {os.path.abspath(checkout)}, "
          f"{rounds} alternating round(s) of child processes per kernel")
    rows = [("kernel", "steps this / base", "steps/s this best, median", "base best, median", "ratio best, median",
             "run s this best", "base best", "time ratio best, median")]
    for case in cases:
        runs = {"this": [], "base": []}           # (steps, seconds in Emulator.run)
        for i in range(rounds):
            for side in (("this", "base") if i % 2 == 0 else ("base", "this")):
                res = run_emulator_process(case, timeout, script, child_args, None if side == "this" else checkout)
                if "error" in res:
                    print(f"    [{case['name']}] {side}: {res['error']}")
                    continue
                runs[side].append((res["steps"], max(res["run_s"], 1e-9)))
        if not runs["this"] or not runs["base"]:
            continue
        rate = {k: [n / t for n, t in v] for k, v in runs.items()}
        secs = {k: [t for _, t in v] for k, v in runs.items()}
        best, med = ({k: f(v) for k, v in rate.items()} for f in (max, np.median))
        fast, mid = ({k: f(v) for k, v in secs.items()} for f in (min, np.median))
        rows.append((case["name"], f"{runs['this'][0][0]:,} / {runs['base'][0][0]:,}",
                     f"{best['this']:,.0f}, {med['this']:,.0f}", f"{best['base']:,.0f}, {med['base']:,.0f}",
                     f"{best['this'] / best['base']:.2f}x, {med['this'] / med['base']:.2f}x",
                     f"{fast['this']:.3f}", f"{fast['base']:.3f}",
                     f"{fast['base'] / fast['this']:.2f}x, {mid['base'] / mid['this']:.2f}x"))
        print(f"    [{case['name']}] this {', '.join(f'{t:.3f} s' for t in secs['this'])}; "
              f"base {', '.join(f'{t:.3f} s' for t in secs['base'])}", flush=True)
    print()
    for line in fmt_table(rows):
        print(line)


# -- Oclgrind ----------------------------------------------------------------------------------------

ICD_PATHS = ("/etc/OpenCL/vendors/oclgrind.icd",)


def oclgrind_child(workdir: str, repeat: int = REPEAT) -> int:
    """Runs inside the Oclgrind process: build, the fastest of up to `repeat` runs of all the
    launches + finish, save the outputs."""
    import pyopencl as cl
    case = read_case(workdir)
    plats = [p for p in cl.get_platforms() if "oclgrind" in p.name.lower()]
    if not plats:
        print(json.dumps({"error": f"no Oclgrind platform among {[p.name for p in cl.get_platforms()]}"}))
        return 0
    dev = plats[0].get_devices()[0]
    ctx = cl.Context([dev])
    q = cl.CommandQueue(ctx)
    t0 = time.perf_counter()
    prg = cl.Program(ctx, case["source"]).build()
    build_s = time.perf_counter() - t0
    bufs = make_buffers(cl, ctx, case)
    kernels = get_kernels(prg, case)
    kernel_s = float("inf")
    for _ in range(repeat):
        restore_inputs(cl, q, case, bufs)
        t0 = time.perf_counter()
        enqueue_launches(cl, q, kernels, case, bufs)
        q.finish()
        kernel_s = min(kernel_s, time.perf_counter() - t0)
        if kernel_s > REPEAT_BELOW_S and _:
            break
    np.savez(os.path.join(workdir, "out.npz"), **read_outputs(cl, q, case, bufs))
    print(json.dumps({"build_s": build_s, "kernel_s": kernel_s, "device": dev.name}))
    return 0


def oclgrind_how():
    """(command prefix, description) to run a PyOpenCL script under Oclgrind, or (None, why not)."""
    try:
        import pyopencl  # noqa: F401  (the child needs it)
    except ImportError:
        return None, "pyopencl not installed (pip install pyopencl)"
    icd = next((p for p in ICD_PATHS if os.path.exists(p)), None)
    if icd:
        return [], f"ICD file {icd}"
    wrapper = shutil.which("oclgrind")
    if wrapper:
        return [wrapper], f"the '{wrapper}' wrapper (no oclgrind.icd registered)"
    return None, "not installed"


def run_oclgrind(case: dict, prefix: list, timeout: float, check, script: str, child_args=()) -> dict:
    """oclgrind_child under Oclgrind (`prefix script --oclgrind-child DIR *child_args`), its outputs checked here."""
    d = tempfile.mkdtemp(prefix="kernel_harness_ocl_")
    try:
        write_case(case, d)
        cmd = prefix + [sys.executable, os.path.abspath(script), "--oclgrind-child", d, *child_args]
        t0 = time.perf_counter()
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return {"error": f"timed out after {timeout:.0f} s"}
        wall = time.perf_counter() - t0
        if r.returncode:
            tail = (r.stderr.strip() or r.stdout.strip()).splitlines()
            return {"error": f"exit {r.returncode}: {tail[-1] if tail else ''}"}
        try:
            info = json.loads(r.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            return {"error": f"unreadable child output: {r.stdout.strip()[-200:]!r}"}
        if "error" in info:
            return info
        with np.load(os.path.join(d, "out.npz")) as z:
            outs = {k: z[k].copy() for k in z.files}
        info["ok"], info["max_err"], info["check"] = check(case, outs)
        info["process_wall_s"] = wall
        info["stderr"] = r.stderr.strip()
        return info
    finally:
        shutil.rmtree(d, ignore_errors=True)
