"""The CPU device against PoCL on the same kernels: saxpy on 2^22 floats, a 4096 x 4096 matrix-vector product.

    python benchmarks/cpu_device.py            # a few seconds on a 2-core machine
    python benchmarks/cpu_device.py --runs 20 --check

Both sides run the same OpenCL C source through the same PyOpenCL-shaped host
code (``mncl`` and ``pyopencl`` on PoCL's CPU device), local size None, and the
script checks both results against numpy.  The figure per kernel is the median
over ``--runs`` of the wall time from the kernel call to ``queue.finish()``
(host clock, time.perf_counter), after one untimed warm-up call; ratio =
mncl time / PoCL time measured in this run.  Target: ratio <= 3.
Without pyopencl or PoCL the mncl figures are printed alone.
The exit status is 0 unless ``--check`` is given and a target is missed.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

SAXPY = """
__kernel void saxpy(__global const float *x, __global float *y, float a, int n)
{
    int i = get_global_id(0);
    if (i < n)
        y[i] = a * x[i] + y[i];
}
"""

MATVEC = """
__kernel void matvec(__global const float *A, __global const float *x, __global float *y, int n)
{
    int row = get_global_id(0);
    float acc = 0.0f;
    for (int j = 0; j < n; j++)
        acc += A[row * n + j] * x[j];
    y[row] = acc;
}
"""


def pocl_context():
    try:
        import pyopencl
    except ImportError:
        return None, "pyopencl is not installed"
    try:
        platforms = [p for p in pyopencl.get_platforms() if "Portable Computing Language" in p.name]
    except pyopencl.Error as e:
        return None, f"no OpenCL platform ({e})"
    if not platforms:
        return None, "PoCL is not installed"
    return (pyopencl, pyopencl.Context(platforms[0].get_devices()[:1])), ""


def timed(queue, fn, runs):
    fn()
    queue.finish()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        queue.finish()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), min(times), max(times)


def bench(cl, ctx, runs):
    """{name: (median s, min s, max s, correct)} for both kernels on one implementation."""
    mf = cl.mem_flags
    q = cl.CommandQueue(ctx)
    out = {}
    n = 1 << 22
    rng = np.random.default_rng(1)
    x = rng.standard_normal(n).astype(np.float32)
    y0 = rng.standard_normal(n).astype(np.float32)
    bx = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
    by = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=y0)
    k = cl.Program(ctx, SAXPY).build().saxpy
    a = np.float32(0.5)
    t = timed(q, lambda: k(q, (n,), None, bx, by, a, np.int32(n)), runs)
    y = np.empty_like(y0)
    cl.enqueue_copy(q, y, by)
    expect = y0.copy()
    for _ in range(runs + 1):
        expect = a * x + expect
    out["saxpy 2^22"] = (*t, np.allclose(y, expect, rtol=1e-5, atol=1e-5), 3 * n * 4)

    m = 4096
    A = rng.standard_normal((m, m)).astype(np.float32)
    v = rng.standard_normal(m).astype(np.float32)
    bA = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=A)
    bv = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=v)
    bo = cl.Buffer(ctx, mf.WRITE_ONLY, m * 4)
    k = cl.Program(ctx, MATVEC).build().matvec
    t = timed(q, lambda: k(q, (m,), None, bA, bv, bo, np.int32(m)), runs)
    res = np.empty(m, np.float32)
    cl.enqueue_copy(q, res, bo)
    out["matvec 4096x4096"] = (*t, np.allclose(res, A.astype(np.float64) @ v, rtol=1e-3, atol=1e-2),
                               (m * m + 2 * m) * 4)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=10, help="timed runs per kernel (median reported)")
    ap.add_argument("--check", action="store_true", help="exit 1 if a ratio exceeds 3 or a result is wrong")
    args = ap.parse_args(argv)

    import mncl
    ctx = mncl.Context([d for d in mncl.get_platforms()[0].get_devices() if d.kind == "cpu"][:1])
    ours = bench(mncl, ctx, args.runs)
    print(f"mncl device: {ctx.devices[0].name}, {ctx.devices[0].max_compute_units} compute units")
    peer, why = pocl_context()
    theirs = None
    if peer:
        print(f"PoCL device: {peer[1].devices[0].name}")
        theirs = bench(peer[0], peer[1], args.runs)
    else:
        print(f"PoCL: skipped ({why})")
    print(f"\n{'kernel':<18}{'mncl ms':>10}{'GB/s':>8}{'PoCL ms':>10}{'GB/s':>8}{'ratio':>8}  target  ok")
    failed = False
    for name, (med, lo, hi, ok, nbytes) in ours.items():
        line = f"{name:<18}{med * 1e3:>10.2f}{nbytes / med / 1e9:>8.2f}"
        good = ok
        if theirs:
            pmed, _, _, pok, _ = theirs[name]
            ratio = med / pmed
            good = good and pok and ratio <= 3.0
            line += f"{pmed * 1e3:>10.2f}{nbytes / pmed / 1e9:>8.2f}{ratio:>8.2f}  <= 3    {'yes' if good else 'NO'}"
        else:
            line += f"{'-':>10}{'-':>8}{'-':>8}  <= 3    {'(no peer)'}"
        if not ok:
            line += "  (mncl result WRONG)"
        failed |= not good
        print(line)
    print(f"\n(median of {args.runs} runs, wall time from the call to queue.finish(); "
          f"spread mncl: " + ", ".join(f"{n} {lo * 1e3:.2f}-{hi * 1e3:.2f} ms"
                                        for n, (_, lo, hi, _, _) in ours.items()) + ")")
    return 1 if (args.check and failed) else 0


if __name__ == "__main__":
    sys.exit(main())
