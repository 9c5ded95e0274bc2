"""Compiled kernels on the emulated MN-Core 2: emulated cycles, DRAM bandwidth, wall time next to Oclgrind.

    python benchmarks/compiled_kernels.py --quick       # small sizes: 10-20 s on a 2-core machine
    python benchmarks/compiled_kernels.py --emu-timeout 420   # the issue's sizes: ~8 min; the row-major
                                                              # matvec times out (docs/performance.md)
    python benchmarks/compiled_kernels.py --kernel saxpy --no-oclgrind
    python benchmarks/compiled_kernels.py --quick --baseline /work/wt/base   # steps/s against another checkout

Six kernels, the same OpenCL C source on both sides:

  saxpy    y[i] = a*x[i] + y[i]                    2^20 floats        (--quick: 2^16)
  matvec   y[i] = sum_j A[i*n + j] * x[j]          4096 x 1024 floats (--quick: 512 x 32)
           one work-item per row, a plain loop over j (row-major A: a strided gather per step)
  matvec_t y[i] = sum_j At[j*m + i] * x[j]         the same product with A stored transposed
           (column-major, the coalesced layout a GPU programmer would pick): contiguous loads
  stencil  5-point, out[i] = c*in[i] + w*(in[i-1] + in[i+1] + in[i-N] + in[i+N])
           on the interior, border copied; 1024 x 1024 (--quick: 256 x 256);
           a 1-D NDRange with row/column from the id (--stencil-2d: a 2-D NDRange)
  daxpy    saxpy in double precision                2^20 doubles       (--quick: 2^16)
  scale4   q[i] = f(p[i]) over float4 vectors       2^18 float4        (--quick: 2^14)

For each kernel, on mncl's emulator device for the ``mncore2`` machine, in a
child process of its own (so one kernel's launch cannot disturb the next, and a
kernel that hangs or kills the interpreter becomes a row saying so;
``--emu-timeout``):

* build: wall time of ``Program(ctx, src).build()`` with the program cache off
  (``MNCL_CACHE=0`` in the child), i.e. front end + SIMD backend + assembler;
* compile: the ``mncl-cc`` equivalent, OpenCL C to MN-Core assembly text:
  ``translator.compile_opencl(src, spmd=True)`` + ``translator.backend.compile_kernel``
  (median of 3, in a process where LLVM is already initialised); when an
  ``mncl-cc`` command is on PATH it is timed as well, as a subprocess;
* emulator: wall time (time.perf_counter) of one kernel call + ``ev.wait()``,
  the fastest of up to REPEAT (3) launches (at least two: the first assembles the
  build; fewer than three when one takes over 5 s; the inputs are written back,
  untimed, before each, and Oclgrind gets the same)
  after the build, so it holds the launch only: argument block and buffers
  written to emulated DRAM, the run, buffers read back (the detail line
  says how much of it is ``Emulator.run``);
* cycles: ``ev.stats.cycles``, the emulated cycle count of that launch;
* BW: bytes the kernel must move at minimum (each input read once, each
  output written once) / (cycles * modelled DRAM bytes per cycle), the
  modelled rate being ``[links] dram_l2bm`` bytes_per_cycle (per group) times
  the groups, from emulator/presets/mncore2.toml (4 x 128 B/cycle);
* the result against numpy: OK or MISMATCH with the max error.  A kernel
  that fails to build, faults or gives wrong results is reported in its row
  with the error's first line, and the script goes on.

Oclgrind runs the same kernel on the same inputs in a subprocess (under the
``oclgrind`` wrapper command, or directly when an ``oclgrind.icd`` is registered),
one subprocess per kernel; the child times only the kernel call +
``queue.finish()`` (not Python start-up, not the build) and prints it; the
parent checks the child's result against numpy too.  ratio = Oclgrind time /
emulator time.  Without oclgrind or pyopencl the Oclgrind columns say why.

``--baseline DIR`` only compares the emulator's speed: each kernel's steps/s in Emulator.run with
this tree's packages and with DIR's (another checkout), the two taking turns ``--rounds`` times.

Targets (from the issue): emulator wall time at least 10x shorter than
Oclgrind's; saxpy at >= 50% of the modelled DRAM bandwidth; compile under 2 s.
The exit status is 0 unless ``--check`` is given and a target is missed or a
result is wrong.  This file is not a test: pytest collects only tests/.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

from kernel_harness import (REPEAT, compare_checkouts, emulator_child, first_line, fmt_table, oclgrind_child,
                            oclgrind_how, pct, run_emulator_process, run_oclgrind, short_error, source_tree, timed_out,
                            times)

MACHINE = "mncore2"
SEED = 7
RATIO_TARGET = 10.0          # Oclgrind time / emulator time
BW_TARGET = 0.50             # saxpy, fraction of the modelled DRAM bandwidth
COMPILE_TARGET_S = 2.0

SAXPY = r"""
__kernel void saxpy(__global const float *x, __global float *y, float a)
{
    int i = get_global_id(0);
    y[i] = a * x[i] + y[i];
}
"""

MATVEC_T = r"""
__kernel void matvec_t(__global const float *At, __global const float *x, __global float *y, int m, int n)
{
    int i = get_global_id(0);
    float s = 0.0f;
    for (int j = 0; j < n; j++)
        s += At[j * m + i] * x[j];
    y[i] = s;
}
"""

MATVEC = r"""
__kernel void matvec(__global const float *A, __global const float *x, __global float *y, int n)
{
    int i = get_global_id(0);
    float s = 0.0f;
    for (int j = 0; j < n; j++)
        s += A[i * n + j] * x[j];
    y[i] = s;
}
"""

DAXPY = r"""
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
__kernel void daxpy(__global const double *x, __global double *y, double a)
{
    int i = get_global_id(0);
    y[i] = a * x[i] + y[i];
}
"""

SCALE4 = r"""
__kernel void scale4(__global const float4 *p, __global float4 *q, float a)
{
    int i = get_global_id(0);
    float4 v = p[i];
    q[i] = (float4)(a * v.x, a * v.y + v.x, a * v.z, v.w);
}
"""

STENCIL_1D = r"""
__kernel void stencil(__global const float *in, __global float *out, int N, float c, float w)
{
    int i = get_global_id(0);
    int r = i / N;
    int col = i - r * N;
    if (r > 0 && r < N - 1 && col > 0 && col < N - 1)
        out[i] = c * in[i] + w * (in[i - 1] + in[i + 1] + in[i - N] + in[i + N]);
    else
        out[i] = in[i];
}
"""

STENCIL_2D = r"""
__kernel void stencil(__global const float *in, __global float *out, int N, float c, float w)
{
    int col = get_global_id(0);
    int r = get_global_id(1);
    int i = r * N + col;
    if (r > 0 && r < N - 1 && col > 0 && col < N - 1)
        out[i] = c * in[i] + w * (in[i - 1] + in[i + 1] + in[i - N] + in[i + N]);
    else
        out[i] = in[i];
}
"""

SAXPY_A = 2.5
STENCIL_C, STENCIL_W = 0.5, 0.125


# -- the kernels: inputs, launch, reference -------------------------------------------------------
#
# A case is a plain dict (benchmarks/kernel_harness.py runs it in the emulator's and Oclgrind's child
# processes, as JSON + an .npz of the arrays): name, kernel, source, size (text), global_size,
# arrays {name: ndarray}, args: list of ("buf", array name) / ("f32", value) / ("i32", value),
# outputs: [array names], min_bytes: bytes the kernel must move at minimum.

def make_case(name: str, quick: bool, stencil_2d: bool = False) -> dict:
    rng = np.random.default_rng(SEED)
    u = lambda *shape: rng.uniform(-1.0, 1.0, shape).astype(np.float32)
    if name == "saxpy":
        n = 1 << (16 if quick else 20)
        return dict(name=name, kernel="saxpy", source=SAXPY, size=f"2^{n.bit_length() - 1}",
                    global_size=[n], arrays={"x": u(n), "y": u(n)},
                    args=[("buf", "x"), ("buf", "y"), ("f32", SAXPY_A)], outputs=["y"], min_bytes=3 * 4 * n)
    if name == "daxpy":
        n = 1 << (16 if quick else 20)
        d = lambda: rng.uniform(-1.0, 1.0, n)
        return dict(name=name, kernel="daxpy", source=DAXPY, size=f"2^{n.bit_length() - 1} doubles",
                    global_size=[n], arrays={"x": d(), "y": d()},
                    args=[("buf", "x"), ("buf", "y"), ("f64", SAXPY_A)], outputs=["y"], min_bytes=3 * 8 * n)
    if name == "scale4":
        n = 1 << (14 if quick else 18)
        return dict(name=name, kernel="scale4", source=SCALE4, size=f"2^{n.bit_length() - 1} float4",
                    global_size=[n], arrays={"p": u(n, 4), "q": np.zeros((n, 4), np.float32)},
                    args=[("buf", "p"), ("buf", "q"), ("f32", SAXPY_A)], outputs=["q"], min_bytes=2 * 16 * n)
    if name == "matvec":
        m, n = (512, 32) if quick else (4096, 1024)
        return dict(name=name, kernel="matvec", source=MATVEC, size=f"{m}x{n}", global_size=[m],
                    arrays={"A": u(m, n), "x": u(n), "y": np.zeros(m, np.float32)},
                    args=[("buf", "A"), ("buf", "x"), ("buf", "y"), ("i32", n)], outputs=["y"],
                    min_bytes=4 * (m * n + n + m))
    if name == "matvec_t":
        m, n = (512, 32) if quick else (4096, 1024)
        return dict(name=name, kernel="matvec_t", source=MATVEC_T, size=f"{m}x{n}", global_size=[m],
                    arrays={"At": np.ascontiguousarray(u(m, n).T), "x": u(n), "y": np.zeros(m, np.float32)},
                    args=[("buf", "At"), ("buf", "x"), ("buf", "y"), ("i32", m), ("i32", n)], outputs=["y"],
                    min_bytes=4 * (m * n + n + m))
    if name == "stencil":
        N = 256 if quick else 1024
        return dict(name=name, kernel="stencil", source=STENCIL_2D if stencil_2d else STENCIL_1D,
                    size=f"{N}x{N}" + (" 2-D" if stencil_2d else ""),
                    global_size=[N, N] if stencil_2d else [N * N],
                    arrays={"in": u(N, N), "out": np.zeros((N, N), np.float32)},
                    args=[("buf", "in"), ("buf", "out"), ("i32", N), ("f32", STENCIL_C), ("f32", STENCIL_W)],
                    outputs=["out"], min_bytes=2 * 4 * N * N)
    raise ValueError(name)


KERNELS = ("saxpy", "matvec", "matvec_t", "stencil", "daxpy", "scale4")


def reference(case: dict) -> tuple[np.ndarray, np.ndarray]:
    """(expected output, per-element tolerance), in float64."""
    a = {k: v.astype(np.float64) for k, v in case["arrays"].items()}
    if case["name"] == "daxpy":        # one fp64 rounding each, or none with a fused multiply-add
        ref = SAXPY_A * a["x"] + a["y"]
        return ref, 2 * 2.0 ** -53 * (abs(SAXPY_A * a["x"]) + abs(a["y"])) + 1e-300
    if case["name"] == "scale4":
        p = a["p"]
        ref = np.stack([SAXPY_A * p[:, 0], SAXPY_A * p[:, 1] + p[:, 0], SAXPY_A * p[:, 2], p[:, 3]], axis=1)
        big = abs(p).max(axis=1, keepdims=True)     # each component's terms are at most this
        return ref, 4 * 2.0 ** -24 * (SAXPY_A + 1) * big + 1e-30
    if case["name"] == "saxpy":
        ref = SAXPY_A * a["x"] + a["y"]
        # fp32 with or without a fused multiply-add: two roundings at most
        return ref, 2 * 2.0 ** -24 * (abs(SAXPY_A * a["x"]) + abs(a["y"])) + 1e-30
    if case["name"] in ("matvec", "matvec_t"):
        ref = a["A"] @ a["x"] if "A" in a else a["At"].T @ a["x"]
        n = a["x"].size
        mat = a["A"] if "A" in a else a["At"].T
        return ref, 2 * n * 2.0 ** -24 * (abs(mat) @ abs(a["x"])) + 1e-30   # a sequential fp32 sum's bound
    if case["name"] == "stencil":
        src = a["in"]
        ref = src.copy()
        ref[1:-1, 1:-1] = STENCIL_C * src[1:-1, 1:-1] + STENCIL_W * (
            src[1:-1, :-2] + src[1:-1, 2:] + src[:-2, 1:-1] + src[2:, 1:-1])
        tol = np.full_like(src, 1e-30)
        tol[1:-1, 1:-1] = 8 * 2.0 ** -24 * (abs(STENCIL_C * src[1:-1, 1:-1]) + abs(STENCIL_W) * (
            abs(src[1:-1, :-2]) + abs(src[1:-1, 2:]) + abs(src[:-2, 1:-1]) + abs(src[2:, 1:-1])))
        return ref, tol
    raise ValueError(case["name"])


def check(case: dict, out: np.ndarray) -> tuple[bool, float, str]:
    """(ok, max abs error, 'OK (max err ..)' / 'MISMATCH (..)')."""
    ref, tol = reference(case)
    out = np.asarray(out, np.float64).reshape(ref.shape)
    if not np.all(np.isfinite(out)):
        bad = int((~np.isfinite(out)).sum())
        return False, float("inf"), f"MISMATCH ({bad} non-finite values)"
    err = np.abs(out - ref)
    maxerr = float(err.max()) if err.size else 0.0
    wrong = int((err > tol).sum())
    if wrong == 0:
        return True, maxerr, f"OK (max err {maxerr:.1e})"
    return False, maxerr, f"MISMATCH (max err {maxerr:.2g}, {wrong}/{err.size} elements out of tolerance)"


def check_outputs(case: dict, outs: dict) -> tuple[bool, float, str]:
    """check() for kernel_harness, which hands over every output by name (these cases have one)."""
    return check(case, outs[case["outputs"][0]])


# -- the mncl-cc equivalent --------------------------------------------------------------------------

def time_compile(case: dict, runs: int = 3) -> dict:
    """OpenCL C -> MN-Core assembly in process (median of `runs`), and `mncl-cc` if it is on PATH."""
    out = {}
    try:
        from emulator.machine import load_machine
        from translator import compile_opencl
        from translator.backend import compile_kernel
        machine = load_machine(MACHINE)
        times = []
        for _ in range(runs):
            t0 = time.perf_counter()
            module = compile_opencl(case["source"], filename=f"{case['kernel']}.cl", spmd=True)
            kb = compile_kernel(module, case["kernel"], machine, "1d" if len(case["global_size"]) == 1 else "nd")
            times.append(time.perf_counter() - t0)
        out["compile_s"] = statistics.median(times)
        out["compile_spread"] = (min(times), max(times))
        out["asm_lines"] = kb.asm.count("\n")
    except Exception as exc:
        out["compile_error"] = first_line(exc)
    cc = shutil.which("mncl-cc")
    if cc:
        d = tempfile.mkdtemp(prefix="compiled_kernels_cc_")
        try:
            src = os.path.join(d, f"{case['kernel']}.cl")
            with open(src, "w") as f:
                f.write(case["source"])
            mode = "1d" if len(case["global_size"]) == 1 else "nd"
            cmd = [cc, "-S", "--machine", MACHINE, "--mode", mode, "-k", case["kernel"], "-o",
                   os.path.join(d, f"{case['kernel']}.vsm"), src]
            t0 = time.perf_counter()
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
            dt = time.perf_counter() - t0
            if r.returncode == 0:
                out["mncl_cc_s"] = dt
            else:
                msg = (r.stderr.strip() or r.stdout.strip()).replace(src, os.path.basename(src)).splitlines()
                out["mncl_cc_error"] = f"exit {r.returncode}: {msg[0] if msg else ''}"
        except (OSError, subprocess.SubprocessError) as exc:
            out["mncl_cc_error"] = first_line(exc)
        finally:
            shutil.rmtree(d, ignore_errors=True)
    else:
        out["mncl_cc_error"] = "mncl-cc not on PATH (timed translator.compile_opencl + backend.compile_kernel)"
    return out


# -- main --------------------------------------------------------------------------------------------

def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small sizes (2^16, 512x32, 256x256) for a smoke run")
    ap.add_argument("--kernel", action="append", choices=KERNELS,
                    help="run only this kernel (repeatable; default: all four)")
    ap.add_argument("--stencil-2d", action="store_true", help="the stencil as a 2-D NDRange instead of 1-D")
    ap.add_argument("--no-oclgrind", action="store_true", help="skip Oclgrind")
    ap.add_argument("--oclgrind-timeout", type=float, default=900.0, help="seconds per kernel (default 900)")
    ap.add_argument("--emu-timeout", type=float, default=1800.0,
                    help="seconds per kernel for the emulator's build + launch (default 1800)")
    ap.add_argument("--check", action="store_true", help="exit 1 if a target is missed or a result is wrong")
    ap.add_argument("--baseline", metavar="DIR", help="only compare steps/s with the packages of checkout DIR")
    ap.add_argument("--rounds", type=int, default=3, help="--baseline: child processes per side and kernel (default 3)")
    ap.add_argument("--oclgrind-child", metavar="DIR", help=argparse.SUPPRESS)
    ap.add_argument("--emulator-child", metavar="DIR", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.oclgrind_child:
        return oclgrind_child(args.oclgrind_child)
    if args.emulator_child:
        return emulator_child(args.emulator_child, check_outputs, MACHINE)
    if args.baseline:
        names = [k for k in KERNELS if not args.kernel or k in args.kernel]
        compare_checkouts([make_case(k, args.quick, args.stencil_2d) for k in names], __file__, args.baseline,
                          args.rounds, args.emu_timeout)
        return 0

    t_start = time.perf_counter()
    names = [k for k in KERNELS if not args.kernel or k in args.kernel]
    from emulator.machine import load_machine
    m = load_machine(MACHINE)
    link = m.links["dram_l2bm"]
    print(f"compiled kernels on the emulator device, machine {MACHINE}: {len(names)} kernel(s)"
          f"{', --quick sizes' if args.quick else ''}; python {sys.version.split()[0]}, numpy {np.__version__}, "
          f"{os.cpu_count()} CPU(s); tree {source_tree()}")
    print(f"modelled DRAM bandwidth: [links] dram_l2bm {link.bytes_per_cycle:g} B/cycle per group x {m.groups} "
          f"groups = {link.bytes_per_cycle * m.groups:g} B/cycle ({link.bytes_per_cycle * m.groups * m.clock_hz / 1e9:.0f} "
          f"GB/s at {m.clock_hz / 1e6:.0f} MHz)")
    prefix, how = (None, "--no-oclgrind") if args.no_oclgrind else oclgrind_how()
    if prefix is None:
        print(f"oclgrind: {how}")
    else:
        print(f"oclgrind: via {how}; OCLGRIND_NUM_THREADS="
              f"{os.environ.get('OCLGRIND_NUM_THREADS', 'unset (Oclgrind default)')}")

    results = []
    for name in names:
        case = make_case(name, args.quick, args.stencil_2d)
        print(f"\n[{name}] {case['size']}, global size {tuple(case['global_size'])}, "
              f"minimum traffic {case['min_bytes'] / 2**20:.2f} MiB")
        emu = run_emulator_process(case, args.emu_timeout, __file__)
        if "error" in emu:
            print(f"    emulator: {emu['error']}" + (f" (build {emu['build_s']:.3f} s)" if "build_s" in emu else ""))
        else:
            print(f"    emulator: build {emu['build_s']:.3f} s; launch {emu['wall_s']:.3f} s wall "
                  f"({emu['run_s']:.3f} s in Emulator.run, the rest moving buffers in and out); "
                  f"{emu['cycles']:,.0f} cycles = {emu['emulated_s'] * 1e6:,.1f} us emulated, "
                  f"{emu['steps']:,} VLIW steps ({emu['steps'] / max(emu['run_s'], 1e-9):,.0f} steps/s); "
                  f"DRAM traffic {emu['dram_bytes'] / 2**20:.2f} MiB "
                  f"({emu['dram_bytes'] / case['min_bytes']:.2f}x the minimum); "
                  f"{pct(emu['bw_fraction'])} of modelled DRAM bandwidth; result {emu['check']}")
        comp = time_compile(case)
        if "compile_error" in comp:
            print(f"    compile (OpenCL C -> assembly): {comp['compile_error']}")
        else:
            lo, hi = comp["compile_spread"]
            print(f"    compile (OpenCL C -> assembly, in process): median {comp['compile_s']:.3f} s "
                  f"({lo:.3f}-{hi:.3f}), {comp['asm_lines']} assembly lines")
        if "mncl_cc_s" in comp:
            print(f"    mncl-cc: {comp['mncl_cc_s']:.3f} s (subprocess)")
        else:
            print(f"    mncl-cc: {comp['mncl_cc_error']}")
        ocl = None
        if prefix is not None:
            ocl = run_oclgrind(case, prefix, args.oclgrind_timeout, check_outputs, __file__)
            if "error" in ocl:
                print(f"    oclgrind: {ocl['error']}")
            else:
                print(f"    oclgrind: kernel {ocl['kernel_s']:.3f} s (build {ocl['build_s']:.2f} s, whole "
                      f"subprocess {ocl['process_wall_s']:.1f} s); result {ocl['check']}")
                if ocl.get("stderr"):
                    print(f"    oclgrind stderr: {ocl['stderr'][-300:]}")
        results.append((case, emu, comp, ocl))

    # the table
    rows = [("kernel", "size", "emulator result", "cycles", "DRAM BW", "build s", "compile s",
             "mncl-cc s", "emu wall s", "oclgrind s", "ratio")]
    for case, emu, comp, ocl in results:
        ok = "error" not in emu
        comp_s = f"{comp['compile_s']:.3f}" if "compile_s" in comp else "FAILED"
        cc_s = f"{comp['mncl_cc_s']:.3f}" if "mncl_cc_s" in comp else ("-" if not shutil.which("mncl-cc") else "FAILED")
        if ocl is None:
            ocl_s = "-"
        elif "error" in ocl:
            ocl_s = "FAILED"
        else:
            ocl_s = f"{ocl['kernel_s']:.3f}" + ("" if ocl["ok"] else " (MISMATCH)")
        ratio = "-"
        if ok and ocl and "error" not in ocl and emu["wall_s"] > 0:
            ratio = times(ocl["kernel_s"] / emu["wall_s"])
        elif timed_out(emu) and ocl and "error" not in ocl:
            ratio = "< " + times(ocl["kernel_s"] / args.emu_timeout)
        rows.append((case["name"], case["size"],
                     (emu["check"] if ok else "FAILED " + short_error(emu["error"])),
                     f"{emu['cycles']:,.0f}" if ok else "-",
                     pct(emu["bw_fraction"]) if ok else "-",
                     f"{emu['build_s']:.3f}" if "build_s" in emu else "-",
                     comp_s, cc_s, f"{emu['wall_s']:.3f}" if ok else "-", ocl_s, ratio))
    print()
    for line in fmt_table(rows):
        print(line)

    # the targets
    missed = False
    trows = [("target", "kernel", "value", "status")]
    for case, emu, comp, ocl in results:
        ok = "error" not in emu and emu.get("ok")
        if "error" in emu or not emu.get("ok"):
            missed = True
        if ocl is None or "error" in ocl:
            why = "no Oclgrind time" if ocl is None else "Oclgrind failed"
            trows.append(("emulator >= 10x faster than Oclgrind", case["name"], "-", f"skipped ({why})"))
        elif "error" in emu:
            trows.append(("emulator >= 10x faster than Oclgrind", case["name"],
                          "< " + times(ocl["kernel_s"] / args.emu_timeout) if timed_out(emu) else "-",
                          "NOT MET (" + ("launch timed out" if timed_out(emu) else "kernel failed") + ")"))
            missed = True
        else:
            r = ocl["kernel_s"] / emu["wall_s"]
            good = r >= RATIO_TARGET and ok
            missed |= not good
            trows.append(("emulator >= 10x faster than Oclgrind", case["name"], times(r),
                          ("met" if good else "NOT MET") + ("" if ok else " (result wrong)")))
    for case, emu, comp, ocl in results:
        if case["name"] == "saxpy":
            if "error" in emu:
                trows.append(("saxpy >= 50% of modelled DRAM BW", "saxpy", "-", "NOT MET (kernel failed)"))
                missed = True
            else:
                good = emu["bw_fraction"] >= BW_TARGET and emu["ok"]
                missed |= not good
                trows.append(("saxpy >= 50% of modelled DRAM BW", "saxpy", pct(emu["bw_fraction"]),
                              "met" if good else "NOT MET"))
    for case, emu, comp, ocl in results:
        # the command when there is one (what a user waits for, Python start-up included), else the API
        t, what = (comp["mncl_cc_s"], "mncl-cc") if "mncl_cc_s" in comp else (comp.get("compile_s"), "in process")
        if t is not None:
            good = t < COMPILE_TARGET_S
            missed |= not good
            trows.append(("compile < 2 s", case["name"], f"{t:.3f} s ({what})", "met" if good else "NOT MET"))
        else:
            missed = True
            trows.append(("compile < 2 s", case["name"], "-", "NOT MET (compile failed)"))
    print()
    for line in fmt_table(trows):
        print(line)
    print(f"\n(the fastest of up to {REPEAT} launches per kernel on each side, inputs restored between; emulator wall = kernel call + ev.wait() after the build; "
          f"Oclgrind = kernel call + finish inside its process; builds timed separately)")
    print(f"total benchmark time {time.perf_counter() - t_start:.1f} s")
    return 1 if (args.check and missed) else 0


if __name__ == "__main__":
    sys.exit(main())
