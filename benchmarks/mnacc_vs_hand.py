"""MNACC against hand-written MNCL: the same loop, the same data, the same machine, one run.

    python benchmarks/mnacc_vs_hand.py [--machine mncore2] [--quick]

For three programs under benchmarks/mnacc/ (a row-major matrix-vector product, a 2-D Jacobi
time loop, the n-body force loop in Goose's style) it runs the program through mnacc on the
emulator device and the hand-written OpenCL C kernel a user would write for the same loop
through mncl, on the same inputs, and prints for each: emulated time of the loop's launches
(all of them: the stencil's time steps, the n-body's combining kernel), its share of the
machine's DRAM bandwidth, and the ratio mnacc / hand-written (target: at most 2).  mnacc's
printed checksum is compared with the same program built by gcc, the hand kernel's output
with numpy.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

HAND = {
    "matvec": """
__kernel void matvec(__global const float *a, __global const float *x, __global float *y, int m)
{
    int i = get_global_id(0);
    float s = 0.0f;
    for (int j = 0; j < m; j++)
        s += a[i * m + j] * x[j];
    y[i] = s;
}""",
    "stencil2d": """
__kernel void jacobi(__global const float *u, __global float *v, int n)
{
    int j = get_global_id(0), i = get_global_id(1);     /* the whole grid: its rows are the array's */
    if (i >= 1 && i < n - 1 && j >= 1 && j < n - 1)
        v[i * n + j] = 0.2f * (u[i * n + j] + u[(i - 1) * n + j] + u[(i + 1) * n + j]
                               + u[i * n + j - 1] + u[i * n + j + 1]);
}""",
    "nbody": """
__kernel void forces(__global const float *pos, __global const float *mass, __global float *acc,
                     __global float *phi, float eps2, int n)
{
    int i = get_global_id(0);
    float xi = pos[3 * i], yi = pos[3 * i + 1], zi = pos[3 * i + 2];
    float ax = 0.0f, ay = 0.0f, az = 0.0f, p = 0.0f;
    for (int j = 0; j < n; j++) {
        float dx = pos[3 * j] - xi, dy = pos[3 * j + 1] - yi, dz = pos[3 * j + 2] - zi;
        float rinv = 1.0f / sqrt(dx * dx + dy * dy + dz * dz + eps2);
        float mr3 = mass[j] * rinv * rinv * rinv;
        ax += dx * mr3;
        ay += dy * mr3;
        az += dz * mr3;
        p -= mass[j] * rinv;
    }
    acc[3 * i] = ax;
    acc[3 * i + 1] = ay;
    acc[3 * i + 2] = az;
    phi[i] = p;
}""",
}

SIZES = {"matvec": dict(N=4096, M=1024), "stencil2d": dict(N=512, STEPS=4), "nbody": dict(N=1024)}
QUICK = {"matvec": dict(N=1024, M=256), "stencil2d": dict(N=128, STEPS=2), "nbody": dict(N=256)}


def hand(name, size, ctx, queue):
    """Run the hand-written kernel on the program's inputs; (events, max error against numpy)."""
    import mncl as cl
    mf = cl.mem_flags
    prg = cl.Program(ctx, HAND[name]).build()

    def buf(a):
        return cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=np.ascontiguousarray(a))
    evs = []
    if name == "matvec":
        n, m = size["N"], size["M"]
        i, j = np.meshgrid(np.arange(n), np.arange(m), indexing="ij")
        a = ((i * 7 + j * 3) % 13 - 6).astype(np.float32)
        x = (np.arange(m) % 5 * 0.25).astype(np.float32)
        y = cl.Buffer(ctx, mf.READ_WRITE, 4 * n)
        evs.append(prg.matvec(queue, (n,), None, buf(a), buf(x), y, np.int32(m)))
        got = np.empty(n, np.float32)
        cl.enqueue_copy(queue, got, y)
        want = a.astype(np.float64) @ x
        return evs, float(np.max(np.abs(got - want)) / np.max(np.abs(want)))
    if name == "stencil2d":
        n, steps = size["N"], size["STEPS"]
        i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
        u0 = ((i * 3 + j * 5) % 17 * 0.125).astype(np.float32)
        u, v = buf(u0), buf(u0)
        for _ in range(steps):
            evs.append(prg.jacobi(queue, (n, n), None, u, v, np.int32(n)))
            evs.append(prg.jacobi(queue, (n, n), None, v, u, np.int32(n)))
        got = np.empty_like(u0)
        cl.enqueue_copy(queue, got, u)
        a, b = u0.copy(), u0.copy()
        for _ in range(steps):
            for src, dst in ((a, b), (b, a)):
                dst[1:-1, 1:-1] = np.float32(0.2) * (src[1:-1, 1:-1] + src[:-2, 1:-1] + src[2:, 1:-1]
                                                     + src[1:-1, :-2] + src[1:-1, 2:])
        return evs, float(np.max(np.abs(got - a)) / np.max(np.abs(a)))
    n = size["N"]
    k = np.arange(n)
    pos = np.stack([(k * 7) % 101 * 0.05, (k * 13) % 97 * 0.05, (k * 29) % 89 * 0.05], 1).astype(np.float32)
    mass = (1.0 + (k % 3) * 0.5).astype(np.float32)
    acc, phi = cl.Buffer(ctx, mf.READ_WRITE, 12 * n), cl.Buffer(ctx, mf.READ_WRITE, 4 * n)
    evs.append(prg.forces(queue, (n,), None, buf(pos), buf(mass), acc, phi, np.float32(0.01), np.int32(n)))
    got = np.empty((n, 3), np.float32)
    cl.enqueue_copy(queue, got, acc)
    d = pos[None, :, :].astype(np.float64) - pos[:, None, :]
    rinv = 1 / np.sqrt((d ** 2).sum(-1) + 0.01)
    want = (d * (mass[None, :] * rinv ** 3)[..., None]).sum(1)
    return evs, float(np.max(np.abs(got - want)) / np.max(np.abs(want)))


def summed(evs):
    sums = [e.stats.summary() for e in evs]
    t = sum(s["time_s"] for s in sums)
    dram = sum(s["dram_bytes"] for s in sums)
    return t, dram / t / sums[0]["roofline"]["dram_bytes_per_s"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--machine", default="mncore2")
    ap.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    ap.add_argument("--program", action="append", choices=list(HAND), help="only these (default: all three)")
    args = ap.parse_args()
    import mncl as cl
    from mnacc.driver import compile_program
    from mnacc.runtime import Runner
    ctx = cl.Context([cl.get_device("emulator", args.machine)])
    queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
    rows, ok = [], True
    for name in args.program or list(HAND):
        size = (QUICK if args.quick else SIZES)[name]
        path = os.path.join(ROOT, "benchmarks", "mnacc", name + ".c")
        defines = [f"{k}={v}" for k, v in size.items()]
        with tempfile.TemporaryDirectory() as tmp:
            exe = os.path.join(tmp, name)
            subprocess.run(["gcc", "-O2", "-ffp-contract=off", *(f"-D{d}" for d in defines), "-o", exe, path,
                            "-lm"], check=True)
            want = float(subprocess.run([exe], check=True, capture_output=True, text=True).stdout)
        runner = Runner(compile_program(path, defines), "emulator", args.machine)
        read, write = os.pipe()                      # the program's stdout: its checksum
        saved = os.dup(1)
        os.dup2(write, 1)
        try:
            status = runner.run([path])
        finally:
            os.dup2(saved, 1)
            os.close(write)
        got = float(os.read(read, 1 << 16).decode())
        os.close(read)
        prof = runner.profile()
        t_m = sum(p["time_s"] for p in prof)
        frac_m = sum(p["dram_fraction"] * p["time_s"] for p in prof) / t_m
        evs, err = hand(name, size, ctx, queue)
        t_h, frac_h = summed(evs)
        rel = abs(got - want) / max(abs(want), 1e-30)
        good = status == 0 and rel < 1e-4 and err < 1e-4
        ok &= good
        rows.append((name, " ".join(defines), t_m, frac_m, t_h, frac_h, t_m / t_h, rel, err))
    print(f"machine {args.machine}; emulated time of the loop's launches; DRAM: share of the modeled bandwidth")
    print(f"{'program':10} {'size':18} {'mnacc us':>10} {'DRAM':>6} {'hand us':>10} {'DRAM':>6} {'ratio':>6}  "
          f"{'mnacc vs gcc':>12} {'hand vs numpy':>13}")
    for name, size, t_m, f_m, t_h, f_h, ratio, rel, err in rows:
        print(f"{name:10} {size:18} {t_m * 1e6:10.1f} {f_m:6.1%} {t_h * 1e6:10.1f} {f_h:6.1%} {ratio:6.2f}  "
              f"{rel:12.1e} {err:13.1e}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
