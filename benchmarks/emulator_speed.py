"""How fast and how big the emulator is on the full machine, next to Oclgrind.

    python benchmarks/emulator_speed.py            # about a minute on a 2-core machine
    python benchmarks/emulator_speed.py --help     # runs, loop counts, --check
    python benchmarks/emulator_speed.py --baseline /work/wt/base   # [1] against another checkout

Prints, in one run:

1. full-machine (``mncore2``, 4096 PEs) PE steps per second for a mixed
   ALU + MAU + L1BM block: BLOCK_STEPS VLIW steps, each ``fvfma; ladd;
   l1bmd``, inside ``.block body`` and repeated by a sequencer loop, so the
   assembler is not what is timed.  The program is assembled once; one
   ``Emulator("mncore2")`` is built (outside the timed region) and reused;
   the figure is the median over the timed runs of profile.steps / wall time
   of ``emu.run(prog)`` (time.perf_counter).  Target: >= 5,000 steps/s.
2. the resident memory (VmRSS) of a fresh process that has just built
   ``Emulator("mncore2")`` and no user buffers.  Target: < 1 GiB.
3. Oclgrind's wall time for an equivalent OpenCL kernel (4096 work-items,
   one per PE, in work-groups of 64 = one L1B) doing the same work per
   work-item as one pass of the block does per PE, and the ratio
   emulator time / Oclgrind time for that same work, measured in this run.
   The kernel runs in a subprocess: under the ``oclgrind`` wrapper (which
   preloads its runtime), or directly when an ``oclgrind.icd`` is registered
   with the ICD loader.  Both sides start from the same memory contents and
   the script compares their results, so "equivalent" is checked, not just
   claimed.  Skipped, with a line saying why, when oclgrind or pyopencl
   (``pip install pyopencl``) is missing.

``--baseline DIR`` measures [1] only, in child processes: one imports the emulator from this
checkout, the other from DIR (another checkout, e.g. today's main), taking turns (``--rounds``
of each, ``--runs`` timed runs per child), and prints both sides' steps/s and the ratio this /
DIR of the fastest runs and of the medians: both sides see the same machine load.  It prints
the same per CPU second of the child too, which a busy machine's time slicing does not stretch.

The exit status is 0 unless ``--check`` is given and a target is not met.
This file is not a test: pytest collects only tests/ (pyproject testpaths).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

MACHINE = "mncore2"
BLOCK_STEPS = 256          # VLIW steps in the block (a multiple of 32: the address pattern's period)
SEED = 2024
STEPS_TARGET = 5_000       # steps/s, from the issue
RSS_TARGET_MIB = 1024      # < 1 GiB

# The block.  Step i (k = i mod 32) is
#   fvfma $lm{8k}v $ln{8k}v $lr{8k}v $ls{256+8k}v ; ladd $ls{8k}v $lm{8k}v $lr{256+8k}v ; L1BM
# with L1BM = l1bmd $lb{256(k mod 16)} $lr{256+8((k+16) mod 32)}v  (distribute) on even steps
#          or l1bmd $ls{8k}v $lb{4096+256(k mod 16)}                (gather)     on odd steps.
# Reads come only from LM0/LM1/GRF0/GRF1 words 0..255 and L1BM long words 0..4095; writes go only
# to GRF0/GRF1 words 256..511 and L1BM long words 4096..8191.  So nothing written is ever read
# (no hazard within 2 steps for LM / 1 for GRF, also across loop iterations), the two GRF0 writes
# of an even step are 16 regions apart, and LM0 is read at one region per step (MAU and ALU share
# it).  Strict mode (the default) would fault otherwise; every run here is strict.
#
# Work per PE per step (a step is 4 cycles; 'v' operands take long words 2c apart, c = 0..3):
#   fvfma on long words: 2 fp32 FMAs per cycle   -> 8 FMAs (16 flop), 12 long reads, 4 long writes
#   ladd:                1 int64 add per cycle   -> 4 adds,            8 long reads, 4 long writes
#   l1bmd:               1 long word per cycle   -> 4 long words L1BM -> PE memory (even steps)
#                                                   or PE memory -> L1BM (odd steps)
# The OpenCL kernel below does exactly this per work-item and step: 4 x (one float2 fma = 2 FMAs,
# one long add, one long move), with the same loads and stores, PE memories as per-work-item
# slices of global buffers laid out like the emulator's (PE, long word) arrays and the L1BM as a
# per-work-group slice.  The script checks the FMA count against the emulator's profile.flops.
FMAS_PER_PE_STEP = 8
ADDS_PER_PE_STEP = 4
MOVES_PER_PE_STEP = 4


def block_lines(n_steps: int = BLOCK_STEPS) -> list[str]:
    lines = []
    for i in range(n_steps):
        k = i % 32
        mau = f"fvfma $lm{8 * k}v $ln{8 * k}v $lr{8 * k}v $ls{256 + 8 * k}v"
        alu = f"ladd $ls{8 * k}v $lm{8 * k}v $lr{256 + 8 * k}v"
        if i % 2 == 0:
            l1 = f"l1bmd $lb{256 * (k % 16)} $lr{256 + 8 * ((k + 16) % 32)}v"
        else:
            l1 = f"l1bmd $ls{8 * k}v $lb{4096 + 256 * (k % 16)}"
        lines.append(f"{mau}; {alu}; {l1}")
    return lines


def program_text(loops: int, n_steps: int = BLOCK_STEPS) -> str:
    return "\n".join([".block body", *block_lines(n_steps), ".endblock",
                      f".loop %k = 0, {loops}", ".call body", ".endloop", ""])


OPENCL_KERNEL = r"""
#define LM  2048   /* long words of LM0 / LM1 per PE */
#define GRF 256    /* long words of GRF0 / GRF1 per PE */
#define LB  8192   /* long words of L1BM per L1B */
__kernel void mixed(__global ulong *lm0, __global ulong *lm1, __global ulong *grf0,
                    __global ulong *grf1, __global ulong *l1bm, const int nsteps) {
  size_t pe = get_global_id(0);
  size_t i = get_local_id(0);        /* PE within its L1B, as l1bmd numbers them */
  __global ulong *m = lm0 + pe * LM, *n = lm1 + pe * LM, *r = grf0 + pe * GRF, *s = grf1 + pe * GRF;
  __global ulong *lb = l1bm + get_group_id(0) * LB;
  for (int st = 0; st < nsteps; ++st) {
    int k = st & 31;
    for (int c = 0; c < 4; ++c) {              /* the 4 cycles of a step */
      int a = 4 * k + c;                       /* long word of $l?{8k}v at cycle c */
      /* MAU: fvfma $lm{8k}v $ln{8k}v $lr{8k}v $ls{256+8k}v -- 2 fp32 FMAs */
      s[128 + a] = as_ulong(fma(as_float2(m[a]), as_float2(n[a]), as_float2(r[a])));
      /* ALU: ladd $ls{8k}v $lm{8k}v $lr{256+8k}v -- 1 int64 add */
      r[128 + a] = s[a] + m[a];
      /* L1BM: l1bmd, PE i <-> $lb[base + 64c + i] */
      if (st & 1) lb[4096 + 256 * (k & 15) + 64 * c + i] = s[a];
      else        r[128 + 4 * ((k + 16) & 31) + c] = lb[256 * (k & 15) + 64 * c + i];
    }
  }
}
"""


# -- memory contents both sides start from ------------------------------------------------------

def initial_memory(n_pe: int, lm_longs: int, grf_longs: int, n_l1b: int, l1bm_longs: int) -> dict:
    """Random fp32 pairs in [0.5, 1) as long words: no zeros, subnormals or overflow in the FMAs."""
    rng = np.random.default_rng(SEED)

    def longs(*shape):
        return (0.5 + 0.5 * rng.random(shape + (2,), dtype=np.float32)).view(np.uint64)[..., 0]

    return {"m": longs(n_pe, lm_longs), "n": longs(n_pe, lm_longs), "r": longs(n_pe, grf_longs),
            "s": longs(n_pe, grf_longs), "lb": longs(n_l1b, l1bm_longs)}


def pe_major(emu, sp: str) -> np.ndarray:
    """A (PE, long word) view of PE memory sp, whichever way round the emulator stores it."""
    a = emu.state.mem[sp]
    return a if a.shape[0] == emu.m.n_pe else a.T


def load_memory(emu, mem: dict) -> None:
    for sp in "mnrs":
        pe_major(emu, sp)[...] = mem[sp]
    emu.state.l1bm[...] = mem["lb"]


# -- 1. steps per second ------------------------------------------------------------------------

def time_runs(emu, prog, runs: int, warmup: int = 1):
    """(list of (steps, seconds, profile, CPU seconds)) for `runs` timed emu.run(prog) after `warmup`
    untimed ones."""
    for _ in range(warmup):
        emu.run(prog)
    out = []
    for _ in range(runs):
        t0, c0 = time.perf_counter(), time.process_time()
        prof = emu.run(prog)
        out.append((prof.steps, time.perf_counter() - t0, prof, time.process_time() - c0))
    return out


# -- 2. resident memory of a fresh emulator ---------------------------------------------------------

RSS_CHILD = r"""
import json, resource, sys
def status():
    out = {}
    for line in open("/proc/self/status"):
        k, _, v = line.partition(":")
        if k in ("VmRSS", "VmHWM"):
            out[k] = int(v.split()[0]) / 1024.0      # kB -> MiB
    return out
import numpy
from emulator import Emulator
before = status()
emu = Emulator(sys.argv[1])
after = status()
print(json.dumps({"before": before, "after": after, "state_nbytes": emu.state.nbytes(),
                  "maxrss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0}))
"""


STEPS_CHILD = r"""
import json, sys
sys.path.insert(0, sys.argv[1])                       # the checkout whose emulator is measured
sys.path.insert(1, sys.argv[2])                       # this script's directory
import emulator_speed as es
from emulator import Emulator, assemble
runs, loops = int(sys.argv[3]), int(sys.argv[4])
prog = assemble(es.program_text(loops), source="emulator_speed.vsm")
emu = Emulator(es.MACHINE)
m = emu.m
es.load_memory(emu, es.initial_memory(m.n_pe, m.lm_words // 2, m.grf_words // 2, m.n_l1b, m.l1bm_longs))
res = es.time_runs(emu, prog, runs)
print(json.dumps({"rates": [s / dt for s, dt, _, _ in res], "cpu_rates": [s / max(c, 1e-9) for s, _, _, c in res],
                  "source": es.emulator_source()}))
"""


def steps_child(checkout: str, runs: int, loops: int) -> dict:
    """[1] in a fresh process that imports the emulator from `checkout`."""
    here = os.path.dirname(os.path.abspath(__file__))
    env = {**os.environ, "PYTHONPATH": checkout}
    r = subprocess.run([sys.executable, "-c", STEPS_CHILD, checkout, here, str(runs), str(loops)],
                       capture_output=True, text=True, timeout=600, env=env)
    if r.returncode:
        raise RuntimeError(f"steps child for {checkout} failed: {r.stderr.strip()[-400:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def compare_baseline(base: str, rounds: int, runs: int, loops: int) -> int:
    """[1] here and in `base`, alternating; prints both and the ratios."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sides = {"this": here, "base": os.path.abspath(base)}
    rates = {k: [] for k in sides}
    cpu = {k: [] for k in sides}
    src = {}
    print(f"steps/s of [1] ({BLOCK_STEPS} steps x {loops} loops, {runs} timed runs per child), "
          f"{rounds} rounds, the two sides taking turns")
    for i in range(rounds):
        for k in (("this", "base") if i % 2 == 0 else ("base", "this")):
            out = steps_child(sides[k], runs, loops)
            rates[k] += out["rates"]
            cpu[k] += out["cpu_rates"]
            src[k] = out["source"]
            print(f"    round {i + 1} {k}: " + ", ".join(f"{r:,.0f}" for r in out["rates"]))
    for k in sides:
        print(f"{k:>5}: {src[k]}: steps/s best {max(rates[k]):,.0f}, median {statistics.median(rates[k]):,.0f}")
    print(f"ratio this / base: best {max(rates['this']) / max(rates['base']):.2f}x, "
          f"median {statistics.median(rates['this']) / statistics.median(rates['base']):.2f}x")
    # steps per CPU second of the child: what a busy machine's time slicing does not stretch
    print(f"per CPU second: this best {max(cpu['this']):,.0f} median {statistics.median(cpu['this']):,.0f}, "
          f"base best {max(cpu['base']):,.0f} median {statistics.median(cpu['base']):,.0f}; ratio best "
          f"{max(cpu['this']) / max(cpu['base']):.2f}x, median {statistics.median(cpu['this']) / statistics.median(cpu['base']):.2f}x")
    return 0


def measure_rss(machine: str) -> dict:
    r = subprocess.run([sys.executable, "-c", RSS_CHILD, machine], capture_output=True, text=True, timeout=120)
    if r.returncode:
        raise RuntimeError(f"RSS child failed: {r.stderr.strip()}")
    return json.loads(r.stdout)


# -- 3. Oclgrind ---------------------------------------------------------------------------------

ICD_PATHS = ("/etc/OpenCL/vendors/oclgrind.icd",)


def oclgrind_host(args) -> int:
    """Runs inside the Oclgrind subprocess: build, time the kernel, save its results."""
    import pyopencl as cl
    plats = [p for p in cl.get_platforms() if "oclgrind" in p.name.lower()]
    if not plats:
        print(json.dumps({"error": f"no Oclgrind platform among {[p.name for p in cl.get_platforms()]}"}))
        return 0
    ctx = cl.Context(plats[0].get_devices())
    q = cl.CommandQueue(ctx)
    t0 = time.perf_counter()
    prg = cl.Program(ctx, OPENCL_KERNEL).build()
    build_s = time.perf_counter() - t0
    n_pe, lm, grf, n_l1b, lbl = args.shape
    mem = initial_memory(n_pe, lm, grf, n_l1b, lbl)
    mf = cl.mem_flags
    bufs = {sp: cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=mem[sp]) for sp in ("m", "n", "r", "s", "lb")}
    q.finish()
    times = []
    for _ in range(args.oclgrind_runs):
        t0 = time.perf_counter()
        prg.mixed(q, (n_pe,), (n_pe // n_l1b,), bufs["m"], bufs["n"], bufs["r"], bufs["s"], bufs["lb"],
                  np.int32(args.oclgrind_steps))
        q.finish()
        times.append(time.perf_counter() - t0)
    for sp in ("r", "s", "lb"):
        cl.enqueue_copy(q, mem[sp], bufs[sp])
    q.finish()
    np.savez(os.path.join(args.outdir, "ocl.npz"), r=mem["r"], s=mem["s"], lb=mem["lb"])
    print(json.dumps({"build_s": build_s, "times": times, "platform": plats[0].name,
                      "device": plats[0].get_devices()[0].name}))
    return 0


def run_oclgrind(emu, steps: int, runs: int, timeout: float) -> dict:
    """{'skipped': why} or {'times': [...], 'results': {...}, ...}."""
    try:
        import pyopencl  # noqa: F401  (only to know whether the child can run)
    except ImportError:
        return {"skipped": "pyopencl not installed (pip install pyopencl): skipped"}
    icd = next((p for p in ICD_PATHS if os.path.exists(p)), None)
    wrapper = shutil.which("oclgrind")
    if wrapper is None and icd is None:
        return {"skipped": "oclgrind not installed: skipped"}
    m = emu.m
    outdir = tempfile.mkdtemp(prefix="emu_speed_ocl_")
    cmd = [sys.executable, os.path.abspath(__file__), "--oclgrind-host", "--outdir", outdir,
           "--oclgrind-steps", str(steps), "--oclgrind-runs", str(runs),
           "--shape", *map(str, (m.n_pe, m.lm_words // 2, m.grf_words // 2, m.n_l1b, m.l1bm_longs))]
    how = f"ICD file {icd}" if icd else f"'{wrapper}' wrapper (no oclgrind.icd registered)"
    if icd is None:
        cmd = [wrapper] + cmd
    try:
        t0 = time.perf_counter()
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        wall = time.perf_counter() - t0
    except subprocess.TimeoutExpired:
        shutil.rmtree(outdir, ignore_errors=True)
        return {"skipped": f"oclgrind run timed out after {timeout:.0f} s: skipped"}
    try:
        if r.returncode:
            return {"skipped": f"oclgrind run failed (exit {r.returncode}): {r.stderr.strip()[-400:]}"}
        info = json.loads(r.stdout.strip().splitlines()[-1])
        if "error" in info:
            return {"skipped": info["error"]}
        with np.load(os.path.join(outdir, "ocl.npz")) as z:
            info["results"] = {k: z[k].copy() for k in z.files}
        info["how"], info["process_wall_s"] = how, wall
        info["stderr"] = r.stderr.strip()
        return info
    finally:
        shutil.rmtree(outdir, ignore_errors=True)


def compare_results(emu, ocl: dict) -> str:
    """How the emulator's final memories agree with the kernel's."""
    st = emu.state
    ints = [("GRF0 (ladd, l1bmd)", pe_major(emu, "r"), ocl["r"]), ("L1BM (l1bmd gather)", st.l1bm, ocl["lb"])]
    parts = []
    for name, a, b in ints:
        parts.append(f"{name}: {'identical' if np.array_equal(a, b) else f'{int((a != b).sum())} long words differ'}")
    a, b = np.ascontiguousarray(pe_major(emu, "s")), ocl["s"]
    same = a == b
    fa = a.view(np.float32).astype(np.float64)
    fb = b.view(np.float32).astype(np.float64)
    rel = float(np.max(np.abs(fa - fb) / np.maximum(np.abs(fb), 1e-30)))
    parts.append(f"GRF1 (fvfma): {int(same.sum())}/{same.size} long words bit-identical, max rel. diff {rel:.1e}"
                 + ("" if same.all() else " (the emulator rounds its fp32 FMA through fp64)"))
    return "; ".join(parts)


# -- main --------------------------------------------------------------------------------------------

def emulator_source() -> str:
    """Where the emulator under test comes from: its path, and the git commit if it is a checkout."""
    import emulator
    pkg = os.path.dirname(os.path.abspath(emulator.__file__))
    try:
        head = subprocess.run(["git", "-C", pkg, "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, timeout=10)
        dirty = subprocess.run(["git", "-C", pkg, "status", "--porcelain", "--", "."], capture_output=True,
                               text=True, timeout=10)
        if head.returncode == 0:
            return f"{pkg} (git {head.stdout.strip()}{', with uncommitted changes' if dirty.stdout.strip() else ''})"
    except (OSError, subprocess.SubprocessError):
        pass
    return pkg


def fmt_row(cells, widths):
    return "  ".join(str(c).ljust(w) for c, w in zip(cells, widths)).rstrip()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5, help="timed runs for the steps/s median (default 5)")
    ap.add_argument("--loops", type=int, default=8, help="block repetitions per run (default 8)")
    ap.add_argument("--oclgrind-steps", type=int, default=BLOCK_STEPS,
                    help=f"steps of the Oclgrind comparison (default {BLOCK_STEPS}: one pass of the block)")
    ap.add_argument("--oclgrind-runs", type=int, default=1, help="timed Oclgrind kernel runs (default 1)")
    ap.add_argument("--oclgrind-timeout", type=float, default=180.0)
    ap.add_argument("--no-oclgrind", action="store_true", help="skip the Oclgrind comparison")
    ap.add_argument("--check", action="store_true", help="exit 1 if a target is not met")
    ap.add_argument("--baseline", metavar="DIR", help="compare [1] with the emulator of checkout DIR (child processes)")
    ap.add_argument("--rounds", type=int, default=3, help="--baseline: child processes per side (default 3)")
    ap.add_argument("--oclgrind-host", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--outdir", help=argparse.SUPPRESS)
    ap.add_argument("--shape", type=int, nargs=5, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.oclgrind_host:
        return oclgrind_host(args)
    if args.baseline:
        return compare_baseline(args.baseline, args.rounds, args.runs, args.loops)
    if args.oclgrind_steps % 32:
        ap.error("--oclgrind-steps must be a multiple of 32 (the block's address pattern)")

    from emulator import Emulator, assemble
    t_start = time.perf_counter()
    print(f"emulator speed benchmark: machine {MACHINE}, python {sys.version.split()[0]}, "
          f"numpy {np.__version__}, {os.cpu_count()} CPU(s)")
    print(f"emulator: {emulator_source()}")

    # 1. steps per second
    prog = assemble(program_text(args.loops), source="emulator_speed.vsm")
    emu = Emulator(MACHINE)
    m = emu.m
    load_memory(emu, initial_memory(m.n_pe, m.lm_words // 2, m.grf_words // 2, m.n_l1b, m.l1bm_longs))
    print(f"\n[1] block: {BLOCK_STEPS} steps of 'fvfma; ladd; l1bmd', .call'ed {args.loops} times per run; "
          f"{m.n_pe} PEs; strict mode")
    print(f"    e.g. step 0: {block_lines(1)[0]}")
    print(f"         step 1: {block_lines(2)[1]}")
    res = time_runs(emu, prog, args.runs)
    prof = res[0][2]
    assert prof.steps == BLOCK_STEPS * args.loops, prof.steps
    flop_per_pe_step = prof.flops / prof.steps / m.n_pe
    assert flop_per_pe_step == 2 * FMAS_PER_PE_STEP, flop_per_pe_step    # the counting above
    rates = [s / dt for s, dt, *_ in res]
    steps_s = statistics.median(rates)
    print(f"    runs: " + ", ".join(f"{dt:.3f} s" for _, dt, _ in res) + f"  ({prof.steps} steps each)")
    print(f"    steps/s: median {steps_s:,.0f} (min {min(rates):,.0f}, max {max(rates):,.0f}); "
          f"{steps_s * m.n_pe:,.0f} PE-steps/s; {steps_s * m.n_pe * 2 * FMAS_PER_PE_STEP / 1e6:,.1f} emulated "
          f"Mflop/s; emulated machine time per run {prof.time_s * 1e6:.2f} us")

    # 2. resident memory
    rss = measure_rss(MACHINE)
    rss_mib = rss["after"]["VmRSS"]
    print(f"\n[2] fresh process: VmRSS {rss['before']['VmRSS']:.1f} MiB after 'import numpy, emulator', "
          f"{rss_mib:.1f} MiB after Emulator('{MACHINE}') (peak {rss['after']['VmHWM']:.1f} MiB); "
          f"the state's arrays total {rss['state_nbytes'] / 2**20:.1f} MiB once every page is touched")

    # 3. Oclgrind, same work
    n_cmp = args.oclgrind_steps
    print(f"\n[3] Oclgrind vs emulator, same work: {n_cmp} steps x {m.n_pe} PEs = "
          f"{n_cmp * m.n_pe * FMAS_PER_PE_STEP:,} fp32 FMAs, {n_cmp * m.n_pe * ADDS_PER_PE_STEP:,} int64 adds, "
          f"{n_cmp * m.n_pe * MOVES_PER_PE_STEP:,} L1BM<->PE long words")
    ocl_s = ratio = None
    ocl_note = "--no-oclgrind: skipped" if args.no_oclgrind else None
    if ocl_note:
        print(f"    {ocl_note}")
    if not args.no_oclgrind:
        cmp_prog = assemble(program_text(n_cmp // BLOCK_STEPS, BLOCK_STEPS) if n_cmp % BLOCK_STEPS == 0
                            else program_text(1, n_cmp), source="emulator_speed_cmp.vsm")
        cres = time_runs(emu, cmp_prog, 3)
        emu_cmp_s = statistics.median(dt for _, dt, _ in cres)
        assert cres[0][0] == n_cmp
        ocl = run_oclgrind(emu, n_cmp, args.oclgrind_runs, args.oclgrind_timeout)
        if "skipped" in ocl:
            ocl_note = ocl["skipped"]
            print(f"    {ocl_note}")
            print(f"    emulator: {emu_cmp_s:.3f} s")
        else:
            ocl_s = statistics.median(ocl["times"])
            ratio = emu_cmp_s / ocl_s
            print(f"    Oclgrind via {ocl['how']}; device '{ocl['device']}'; "
                  f"OCLGRIND_NUM_THREADS={os.environ.get('OCLGRIND_NUM_THREADS', 'unset (Oclgrind default)')}")
            print(f"    Oclgrind kernel: " + ", ".join(f"{t:.2f} s" for t in ocl["times"]) +
                  f" (build {ocl['build_s']:.2f} s, whole subprocess {ocl['process_wall_s']:.1f} s)")
            print(f"    emulator:        {emu_cmp_s:.3f} s (median of 3 runs)")
            print(f"    ratio emulator/Oclgrind: {ratio:.4f} (the emulator is {1 / ratio:,.0f}x faster)")
            try:
                agreement = compare_results(emu, ocl["results"])
            except Exception as exc:      # a report, not a test: keep going to the table
                agreement = f"comparison failed: {type(exc).__name__}: {exc}"
            print(f"    results: {agreement}")
            if ocl["stderr"]:
                print(f"    oclgrind stderr: {ocl['stderr'][-300:]}")

    # the table
    met = lambda ok: "met" if ok else "NOT MET"
    rows = [("figure", "value", "target", "status"),
            (f"{MACHINE} steps/s (fvfma;ladd;l1bmd)", f"{steps_s:,.0f}", f">= {STEPS_TARGET:,}",
             met(steps_s >= STEPS_TARGET)),
            (f"RSS after Emulator('{MACHINE}')", f"{rss_mib:.1f} MiB", f"< {RSS_TARGET_MIB} MiB",
             met(rss_mib < RSS_TARGET_MIB))]
    if ocl_s is not None:
        rows += [(f"Oclgrind time, {n_cmp} steps", f"{ocl_s:.2f} s", "-", "info"),
                 (f"emulator time, {n_cmp} steps", f"{ocl_s * ratio:.3f} s", "-", "info"),
                 ("ratio emulator/Oclgrind", f"{ratio:.4f}", "-", "info")]
    else:
        rows.append(("Oclgrind comparison", "skipped", "-", ocl_note))
    widths = [max(len(str(r[i])) for r in rows) for i in range(4)]
    print()
    print(fmt_row(rows[0], widths))
    print(fmt_row(["-" * w for w in widths], widths))
    for r in rows[1:]:
        print(fmt_row(r, widths))
    print(f"\ntotal benchmark time {time.perf_counter() - t_start:.1f} s")
    ok = steps_s >= STEPS_TARGET and rss_mib < RSS_TARGET_MIB
    return 0 if ok or not args.check else 1


if __name__ == "__main__":
    sys.exit(main())
