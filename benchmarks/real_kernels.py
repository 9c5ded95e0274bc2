"""Ordinary OpenCL kernels in the shapes of the public suites on the emulator device, next to Oclgrind.

    python benchmarks/real_kernels.py --quick                 # small sizes: a few minutes
    python benchmarks/real_kernels.py --emu-timeout 120       # the sizes below
    python benchmarks/real_kernels.py --kernel gemv --kernel gemv_t --no-oclgrind --json out.json
    python benchmarks/real_kernels.py --kernel atax --baseline ../main-checkout   # emulator time against another tree

Issue 22's benchmark.  The kernels (benchmarks/real_kernels/*.cl) are our own, written in the
shapes of PolyBench/GPU, SHOC and Rodinia the way an ordinary OpenCL user writes them: one
work-item per output element or row, plain loops, those suites' launch geometry, several
launches where the algorithm needs them (lu, nw, scan, the time-stepped stencils), and the
OpenCL SDK's matrix product in 16 x 16 __local tiles (gemm_tiled) beside the plain one.  The public
code was read to learn the shapes; none of it is copied.  The default sizes run at least 10^5
work-item loop iterations each (the table's `iters`: per launch, each work-item's innermost loop
trips, a loop-free body counting 1).

Per kernel, in a child process of its own (benchmarks/kernel_harness.py, as compiled_kernels.py):
the emulated cycles on --machine (default mncore2), summed over the launches; the DRAM bytes the
launches moved (ev.stats.dram_bytes) against the compulsory bytes (per launch, every element the
launch must read once and every element it writes once, summed over the launches); the achieved
fraction of the modelled DRAM bandwidth (compulsory bytes / (cycles x [links] dram_l2bm bytes per
cycle x groups), as compiled_kernels.py); the emulator's wall time for all the launches (the
fastest of 2 or 3 runs, a third while a run takes under 5 s: the build is excluded, and so, by
the second run, is the first launch's one-time assembly); Oclgrind's wall time for the same launches of the same source on the same inputs; the ratio Oclgrind / emulator.
Every output is checked against a numpy reference: exactly where the inputs are small integers
or dyadic so that every fp32 sum and product is exact (asserted from the magnitudes), else within
a bound derived from the operations (class Bound below).

Targets (issue 22), on mncore2: the emulator faster than Oclgrind on every kernel, at least 10x
at the median; DRAM bytes at most 2x compulsory for every kernel whose accesses are affine (all
but spmv_csr); the row-major gemv within 1.5x of the column-major gemv_t's cycles (4096 x 1024);
every result right.  Exit status 0 unless --check is given and a target is missed.
This file is not a test: pytest collects only tests/ (tests/test_real_kernels.py runs these
kernels at tiny sizes on mncl's CPU device and PoCL against the same references).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time

import numpy as np

from kernel_harness import (REPEAT, compare_checkouts, emulator_child, fmt_table, oclgrind_child, oclgrind_how, pct,
                            run_emulator_process, run_oclgrind, short_error, source_tree, timed_out, times)

MACHINE = "mncore2"
SEED = 22
RATIO_TARGET = 10.0          # median Oclgrind time / emulator time
DRAM_TARGET = 2.0            # DRAM bytes / compulsory bytes, affine kernels
GEMV_TARGET = 1.5            # gemv cycles / gemv_t cycles
SIZES = ("tiny", "quick", "full")
KERNEL_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "real_kernels")

U = 2.0 ** -24               # fp32 unit roundoff
FLUSH = 2.0 ** -126          # absolute error of a result flushed from subnormal to zero
F4 = 4                       # bytes per float / int


def source(name: str) -> str:
    with open(os.path.join(KERNEL_DIR, name + ".cl")) as f:
        return f.read()


def f32(x: float) -> float:
    """The fp32 constant the kernel sees, as the reference's float64."""
    return float(np.float32(x))


def ints(rng, lo: int, hi: int, *shape, dtype=np.float32) -> np.ndarray:
    """Integers in [lo, hi] as `dtype`: sums and products of them are exact in fp32 while < 2^24."""
    return rng.integers(lo, hi + 1, shape).astype(dtype)


def roundup(n: int, m: int) -> int:
    return (n + m - 1) // m * m


def line(n: int, local: int = 256) -> tuple[tuple, tuple | None]:
    """(global, local) of a 1-D range of n work-items as the suites launch it: rounded up to `local`
    work-items per group (the kernels guard), or one range of n for a small n."""
    return ((roundup(n, local),), (local,)) if n >= local else ((n,), None)


def tile(n: int) -> tuple[int, int]:
    """PolyBench/GPU's 32 x 8 work-group for an n x n range, narrowed to divide a small or odd n."""
    return math.gcd(n, 32), math.gcd(n, 8)


# -- references ---------------------------------------------------------------------------------------

def exact(ref: np.ndarray, mags, unit: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """(ref, zero tolerance) for a result computed from values that are multiples of `unit`
    (a power of two): every partial sum and product in fp32 is then exact as long as its magnitude
    stays under 2^24 units.  `mags` bound every partial result (e.g. |A| @ |x| for A @ x)."""
    for m in mags:
        assert np.max(np.abs(m)) < 2.0 ** 24 * unit, "inputs too large for an exact fp32 reference"
    assert np.all(np.asarray(ref) / unit == np.round(np.asarray(ref) / unit))
    return np.asarray(ref, np.float64), np.zeros(np.shape(ref))


class Bound:
    """A float64 value and a bound on how far an fp32 evaluation of the same expression, in the
    same order, can be from it (a running error analysis).  Each correctly rounded + - * adds
    at most u |result| (u = 2^-24) to the propagated error, plus 2^-126 for a flushed subnormal;
    a fused multiply-add rounds once instead of twice, so it stays within the bound.  rsqrt and
    division round to within OpenCL's 2 and 2.5 ulp (1 ulp <= 2u |result|).  Inputs and constants
    are fp32 values, so they start exact (e = 0)."""

    __slots__ = ("v", "e")

    def __init__(self, v, e=0.0):
        self.v = np.asarray(v, np.float64)
        self.e = np.asarray(e, np.float64)

    @staticmethod
    def of(x) -> "Bound":
        return x if isinstance(x, Bound) else Bound(x)

    def _round(self, v, e, ulps=1.0) -> "Bound":
        return Bound(v, e + ulps * U * (np.abs(v) + e) + FLUSH)

    def __add__(self, o):
        o = Bound.of(o)
        return self._round(self.v + o.v, self.e + o.e)

    __radd__ = __add__

    def __sub__(self, o):
        o = Bound.of(o)
        return self._round(self.v - o.v, self.e + o.e)

    def __rsub__(self, o):
        return Bound.of(o) - self

    def __mul__(self, o):
        o = Bound.of(o)
        return self._round(self.v * o.v, np.abs(self.v) * o.e + np.abs(o.v) * self.e + self.e * o.e)

    __rmul__ = __mul__

    def __truediv__(self, o):
        o = Bound.of(o)
        assert np.all(np.abs(o.v) > o.e), "divisor not bounded away from 0"
        v = self.v / o.v
        return self._round(v, (self.e + np.abs(v) * o.e) / (np.abs(o.v) - o.e), ulps=5.0)

    def rsqrt(self) -> "Bound":
        assert np.all(self.v > self.e), "rsqrt argument not bounded away from 0"
        v = 1.0 / np.sqrt(self.v)
        return self._round(v, 1.0 / np.sqrt(self.v - self.e) - v, ulps=4.0)

    def __getitem__(self, idx) -> "Bound":
        return Bound(self.v[idx], np.broadcast_to(self.e, self.v.shape)[idx])

    def set(self, idx, other: "Bound") -> None:
        """self[idx] = other (in place, for stencils that update part of an array)."""
        self.e = np.array(np.broadcast_to(self.e, self.v.shape))
        self.v[idx] = other.v
        self.e[idx] = other.e

    def copy(self) -> "Bound":
        return Bound(self.v.copy(), np.array(np.broadcast_to(self.e, self.v.shape)))

    def tolerance(self) -> tuple[np.ndarray, np.ndarray]:
        """(reference, tolerance); the 1e-6 relative slack covers the float64 evaluation of both."""
        return self.v, np.broadcast_to(self.e, self.v.shape) * (1 + 1e-6)


def check(case: dict, outs: dict) -> tuple[bool, float, str]:
    """Every output against the reference: (ok, max abs error, 'OK (..)' / 'MISMATCH (..)')."""
    refs = REFERENCES[case["name"]](case)
    ok, maxerr, bad = True, 0.0, []
    exact_only = True
    for name in case["outputs"]:
        ref, tol = refs[name]
        exact_only &= not np.any(tol)
        out = np.asarray(outs[name], np.float64).reshape(np.shape(ref))
        if not np.all(np.isfinite(out)):
            ok = False
            bad.append(f"{name}: {int((~np.isfinite(out)).sum())} non-finite values")
            maxerr = float("inf")
            continue
        err = np.abs(out - ref)
        maxerr = max(maxerr, float(err.max()) if err.size else 0.0)
        wrong = int((err > tol).sum())
        if wrong:
            ok = False
            bad.append(f"{name}: {wrong}/{err.size} out of tolerance, max err {float(err.max()):.2g}")
    if ok:
        return True, maxerr, "OK (exact)" if exact_only else f"OK (max err {maxerr:.1e})"
    return False, maxerr, "MISMATCH (" + "; ".join(bad) + ")"


# -- the kernels: inputs, launches, compulsory bytes, reference ---------------------------------------
#
# Each builder returns a case for kernel_harness (name, source, size, arrays, outputs, launches,
# min_bytes) plus iters (work-item loop iterations) and affine (every access an affine function of
# the ids and loop counters).  Its reference, in REFERENCES, maps each output to (ref, tolerance).

def launch(kernel, gsize, lsize, *args) -> dict:
    return {"kernel": kernel, "global_size": list(gsize), "local_size": list(lsize) if lsize else None,
            "args": list(args)}


def buf(name):
    return ("buf", name)


def i32(v):
    return ("i32", int(v))


def fl(v):
    return ("f32", float(v))


def local(nbytes):
    return ("local", int(nbytes))


def case(name, size, src, arrays, outputs, launches, min_elems, iters, affine=True) -> dict:
    return dict(name=name, size=size, source=source(src), arrays=arrays, outputs=outputs, launches=launches,
                min_bytes=int(F4 * min_elems), iters=int(iters), affine=affine)


def pick(size: str, tiny, quick, full):
    return {"tiny": tiny, "quick": quick, "full": full}[size]


GEMM_ALPHA, GEMM_BETA = 1.5, 0.25


def gemm(size):
    n = pick(size, 16, 8, 128)
    rng = np.random.default_rng(SEED)
    arr = {"A": ints(rng, -4, 4, n, n), "B": ints(rng, -4, 4, n, n), "C": ints(rng, -4, 4, n, n)}
    ls = tile(n)
    return case("gemm", f"{n}x{n}x{n}", "gemm", arr, ["C"],
                [launch("gemm", (n, n), ls, buf("A"), buf("B"), buf("C"), fl(GEMM_ALPHA), fl(GEMM_BETA),
                        i32(n), i32(n), i32(n))],
                4 * n * n, n ** 3)


def gemm_ref(c):
    a = {k: v.astype(np.float64) for k, v in c["arrays"].items()}
    ref = GEMM_ALPHA * (a["A"] @ a["B"]) + GEMM_BETA * a["C"]
    mag = abs(GEMM_ALPHA) * (abs(a["A"]) @ abs(a["B"])) + abs(a["C"])
    return {"C": exact(ref, [mag], unit=0.25)}


def gemm_tiled(size):
    n = pick(size, 16, 16, 64)
    rng = np.random.default_rng(SEED)
    arr = {"A": ints(rng, -4, 4, n, n), "B": ints(rng, -4, 4, n, n), "C": np.zeros((n, n), np.float32)}
    return case("gemm_tiled", f"{n}x{n}x{n}, 16 x 16 __local tiles", "gemm_tiled", arr, ["C"],
                [launch("gemm_tiled", (n, n), (16, 16), buf("A"), buf("B"), buf("C"), i32(n))],
                3 * n * n, n ** 3)


def gemm_tiled_ref(c):
    a, b = c["arrays"]["A"].astype(np.float64), c["arrays"]["B"].astype(np.float64)
    return {"C": exact(a @ b, [abs(a) @ abs(b)])}


MM2_ALPHA, MM2_BETA = 0.5, 1.5


def mm2(size):
    n = pick(size, 16, 4, 96)
    rng = np.random.default_rng(SEED)
    arr = {"A": ints(rng, -2, 2, n, n), "B": ints(rng, -2, 2, n, n), "C": ints(rng, -2, 2, n, n),
           "D": ints(rng, -2, 2, n, n), "tmp": np.zeros((n, n), np.float32)}
    ls = tile(n)
    return case("2mm", f"{n}x{n}x{n}x{n}", "2mm", arr, ["tmp", "D"],
                [launch("mm2_first", (n, n), ls, buf("A"), buf("B"), buf("tmp"), fl(MM2_ALPHA), i32(n), i32(n), i32(n)),
                 launch("mm2_second", (n, n), ls, buf("tmp"), buf("C"), buf("D"), fl(MM2_BETA), i32(n), i32(n), i32(n))],
                3 * n * n + 4 * n * n, 2 * n ** 3)


def mm2_ref(c):
    a = {k: v.astype(np.float64) for k, v in c["arrays"].items()}
    tmp = MM2_ALPHA * (a["A"] @ a["B"])
    tmag = MM2_ALPHA * (abs(a["A"]) @ abs(a["B"]))
    d = MM2_BETA * a["D"] + tmp @ a["C"]
    dmag = MM2_BETA * abs(a["D"]) + tmag @ abs(a["C"])
    return {"tmp": exact(tmp, [tmag], unit=0.5), "D": exact(d, [dmag], unit=0.25)}


def matvec_pair_arrays(size, rng, names):
    n = pick(size, 32, 16, 512)
    return n, {"A": ints(rng, -2, 2, n, n), **{k: ints(rng, -2, 2, n) for k in names}}


def atax(size):
    rng = np.random.default_rng(SEED)
    n, arr = matvec_pair_arrays(size, rng, ["x"])
    arr.update(tmp=np.zeros(n, np.float32), y=np.zeros(n, np.float32))
    gs, ls = line(n)
    return case("atax", f"{n}x{n}", "atax", arr, ["tmp", "y"],
                [launch("atax_rows", gs, ls, buf("A"), buf("x"), buf("tmp"), i32(n), i32(n)),
                 launch("atax_cols", gs, ls, buf("A"), buf("tmp"), buf("y"), i32(n), i32(n))],
                2 * (n * n + 2 * n), 2 * n * n)


def atax_ref(c):
    a = {k: v.astype(np.float64) for k, v in c["arrays"].items()}
    tmp, tmag = a["A"] @ a["x"], abs(a["A"]) @ abs(a["x"])
    return {"tmp": exact(tmp, [tmag]), "y": exact(a["A"].T @ tmp, [abs(a["A"]).T @ tmag])}


def bicg(size):
    rng = np.random.default_rng(SEED)
    n, arr = matvec_pair_arrays(size, rng, ["r", "p"])
    arr.update(s=np.zeros(n, np.float32), q=np.zeros(n, np.float32))
    gs, ls = line(n)
    return case("bicg", f"{n}x{n}", "bicg", arr, ["s", "q"],
                [launch("bicg_s", gs, ls, buf("A"), buf("r"), buf("s"), i32(n), i32(n)),
                 launch("bicg_q", gs, ls, buf("A"), buf("p"), buf("q"), i32(n), i32(n))],
                2 * (n * n + 2 * n), 2 * n * n)


def bicg_ref(c):
    a = {k: v.astype(np.float64) for k, v in c["arrays"].items()}
    A, M = a["A"], abs(a["A"])
    return {"s": exact(A.T @ a["r"], [M.T @ abs(a["r"])]), "q": exact(A @ a["p"], [M @ abs(a["p"])])}


def mvt(size):
    rng = np.random.default_rng(SEED)
    n, arr = matvec_pair_arrays(size, rng, ["y1", "y2", "x1", "x2"])
    gs, ls = line(n)
    return case("mvt", f"{n}x{n}", "mvt", arr, ["x1", "x2"],
                [launch("mvt_rows", gs, ls, buf("A"), buf("y1"), buf("x1"), i32(n)),
                 launch("mvt_cols", gs, ls, buf("A"), buf("y2"), buf("x2"), i32(n))],
                2 * (n * n + 3 * n), 2 * n * n)


def mvt_ref(c):
    a = {k: v.astype(np.float64) for k, v in c["arrays"].items()}
    A, M = a["A"], abs(a["A"])
    return {"x1": exact(a["x1"] + A @ a["y1"], [abs(a["x1"]) + M @ abs(a["y1"])]),
            "x2": exact(a["x2"] + A.T @ a["y2"], [abs(a["x2"]) + M.T @ abs(a["y2"])])}


GES_ALPHA, GES_BETA = 1.5, 0.5


def gesummv(size):
    n = pick(size, 32, 16, 512)
    rng = np.random.default_rng(SEED)
    arr = {"A": ints(rng, -2, 2, n, n), "B": ints(rng, -2, 2, n, n), "x": ints(rng, -2, 2, n),
           "y": np.zeros(n, np.float32), "tmp": np.zeros(n, np.float32)}
    gs, ls = line(n)
    return case("gesummv", f"{n}x{n}", "gesummv", arr, ["tmp", "y"],
                [launch("gesummv", gs, ls, buf("A"), buf("B"), buf("x"), buf("y"), buf("tmp"),
                        fl(GES_ALPHA), fl(GES_BETA), i32(n))],
                2 * n * n + 3 * n, n * n)


def gesummv_ref(c):
    a = {k: v.astype(np.float64) for k, v in c["arrays"].items()}
    t, u = a["A"] @ a["x"], a["B"] @ a["x"]
    tm, um = abs(a["A"]) @ abs(a["x"]), abs(a["B"]) @ abs(a["x"])
    return {"tmp": exact(t, [tm]), "y": exact(GES_ALPHA * t + GES_BETA * u, [GES_ALPHA * tm + GES_BETA * um], unit=0.5)}


GEMVER_ALPHA, GEMVER_BETA = 1.5, 0.5


def gemver(size):
    n = pick(size, 32, 16, 512)
    rng = np.random.default_rng(SEED)
    arr = {"A": ints(rng, -2, 2, n, n), **{k: ints(rng, -1, 1, n) for k in ("u1", "v1", "u2", "v2", "y", "z")},
           "x": ints(rng, -2, 2, n), "w": ints(rng, -2, 2, n)}
    gs1, ls1 = line(n)
    ls2 = tile(n)
    return case("gemver", f"{n}x{n}", "gemver", arr, ["A", "x", "w"],
                [launch("gemver_update", (n, n), ls2, buf("A"), buf("u1"), buf("v1"), buf("u2"), buf("v2"), i32(n)),
                 launch("gemver_xt", gs1, ls1, buf("A"), buf("x"), buf("y"), fl(GEMVER_BETA), i32(n)),
                 launch("gemver_xz", gs1, ls1, buf("x"), buf("z"), i32(n)),
                 launch("gemver_w", gs1, ls1, buf("A"), buf("x"), buf("w"), fl(GEMVER_ALPHA), i32(n))],
                (2 * n * n + 4 * n) + (n * n + 3 * n) + 3 * n + (n * n + 3 * n),
                n * n + n * n + n + n * n)


def gemver_ref(c):
    a = {k: v.astype(np.float64) for k, v in c["arrays"].items()}
    A = a["A"] + np.outer(a["u1"], a["v1"]) + np.outer(a["u2"], a["v2"])
    Am = abs(a["A"]) + np.outer(abs(a["u1"]), abs(a["v1"])) + np.outer(abs(a["u2"]), abs(a["v2"]))
    x = a["x"] + GEMVER_BETA * (A.T @ a["y"])
    xm = abs(a["x"]) + GEMVER_BETA * (Am.T @ abs(a["y"]))
    x, xm = x + a["z"], xm + abs(a["z"])
    w = a["w"] + GEMVER_ALPHA * (A @ x)
    wm = abs(a["w"]) + GEMVER_ALPHA * (Am @ xm)
    # beta * A[j][i] * y[j]: multiples of 0.5; alpha * A * x: multiples of 0.25 (x is)
    return {"A": exact(A, [Am]), "x": exact(x, [xm], unit=0.5), "w": exact(w, [wm], unit=0.25)}


def covariance(size):
    m = n = pick(size, 16, 4, 128)
    rng = np.random.default_rng(SEED)
    # columns with integer means: centred integer columns (the last row cancels the others) plus a mean
    d = ints(rng, -3, 3, n, m, dtype=np.int64)
    d[-1] = -d[:-1].sum(axis=0)
    data = (d + rng.integers(-4, 5, m)).astype(np.float32)
    arr = {"data": data, "mean": np.zeros(m, np.float32), "symmat": np.zeros((m, m), np.float32)}
    gs, ls = line(m)
    return case("covariance", f"{n}x{m}", "covariance", arr, ["mean", "data", "symmat"],
                [launch("cov_mean", gs, ls, buf("mean"), buf("data"), fl(n), i32(m), i32(n)),
                 launch("cov_center", (m, n), tile(m), buf("mean"), buf("data"), i32(m), i32(n)),
                 launch("cov_symm", gs, ls, buf("symmat"), buf("data"), i32(m), i32(n))],
                (n * m + m) + (2 * n * m + m) + (n * m + m * m),
                m * n + m * n + n * m * (m + 1) // 2)


def covariance_ref(c):
    data = c["arrays"]["data"].astype(np.float64)
    n = data.shape[0]
    mean = data.sum(axis=0) / n
    cen = data - mean
    return {"mean": exact(mean, [abs(data).sum(axis=0)]), "data": exact(cen, [abs(data) + abs(mean)]),
            "symmat": exact(cen.T @ cen, [abs(cen).T @ abs(cen)])}


def jacobi2d(size):
    n, steps = pick(size, (16, 2), (8, 1), (256, 10))
    rng = np.random.default_rng(SEED)
    arr = {"A": rng.uniform(-1, 1, (n, n)).astype(np.float32), "B": np.zeros((n, n), np.float32)}
    ls = tile(n)
    one = [launch("jacobi_step", (n, n), ls, buf("A"), buf("B"), i32(n)),
           launch("jacobi_copy", (n, n), ls, buf("A"), buf("B"), i32(n))]
    inner = (n - 2) ** 2
    return case("jacobi-2d", f"{n}x{n}, {steps} steps", "jacobi2d", arr, ["A", "B"], one * steps,
                steps * ((n * n - 4 + inner) + 2 * inner), steps * 2 * n * n)


def jacobi2d_ref(c):
    n = c["arrays"]["A"].shape[0]
    steps = len(c["launches"]) // 2
    A, B = Bound(c["arrays"]["A"]), Bound(c["arrays"]["B"])
    k = f32(0.2)
    for _ in range(steps):
        B.set((slice(1, -1), slice(1, -1)),
              k * ((((A[1:-1, 1:-1] + A[1:-1, :-2]) + A[1:-1, 2:]) + A[2:, 1:-1]) + A[:-2, 1:-1]))
        A.set((slice(1, -1), slice(1, -1)), B[1:-1, 1:-1])
    assert n == A.v.shape[0]
    return {"A": A.tolerance(), "B": B.tolerance()}


def fdtd2d(size):
    nx, ny, steps = pick(size, (16, 16, 2), (4, 4, 1), (256, 256, 6))
    rng = np.random.default_rng(SEED)
    arr = {"fict": np.arange(steps, dtype=np.float32) * 0.25,
           "ex": rng.uniform(-1, 1, (nx, ny)).astype(np.float32),
           "ey": rng.uniform(-1, 1, (nx, ny)).astype(np.float32),
           "hz": rng.uniform(-1, 1, (nx, ny)).astype(np.float32)}
    ls = tile(ny)
    launches = []
    for t in range(steps):
        launches += [launch("fdtd_ey", (ny, nx), ls, buf("fict"), buf("ey"), buf("hz"), i32(t), i32(nx), i32(ny)),
                     launch("fdtd_ex", (ny, nx), ls, buf("ex"), buf("hz"), i32(nx), i32(ny)),
                     launch("fdtd_hz", (ny, nx), ls, buf("ex"), buf("ey"), buf("hz"), i32(nx), i32(ny))]
    per_step = ((1 + (nx - 1) * ny + nx * ny + nx * ny)               # ey: fict, ey rows 1.., hz, ey written
                + (2 * nx * (ny - 1) + nx * ny)                        # ex: read and written, hz
                + ((nx - 1) * ny + nx * (ny - 1) + 2 * (nx - 1) * (ny - 1)))   # hz: ex, ey, hz read and written
    return case("fdtd-2d", f"{nx}x{ny}, {steps} steps", "fdtd2d", arr, ["ex", "ey", "hz"], launches,
                steps * per_step, steps * 3 * nx * ny)


def fdtd2d_ref(c):
    a = c["arrays"]
    ex, ey, hz = Bound(a["ex"]).copy(), Bound(a["ey"]).copy(), Bound(a["hz"]).copy()
    half, k = f32(0.5), f32(0.7)
    for t in range(len(c["launches"]) // 3):
        ey.set((slice(1, None),), ey[1:] - half * (hz[1:] - hz[:-1]))
        ey.set((0,), Bound(np.full(ey.v.shape[1], float(a["fict"][t]))))
        ex.set((slice(None), slice(1, None)), ex[:, 1:] - half * (hz[:, 1:] - hz[:, :-1]))
        hz.set((slice(0, -1), slice(0, -1)),
               hz[:-1, :-1] - k * (((ex[:-1, 1:] - ex[:-1, :-1]) + ey[1:, :-1]) - ey[:-1, :-1]))
    return {"ex": ex.tolerance(), "ey": ey.tolerance(), "hz": hz.tolerance()}


def conv2d(size):
    n = pick(size, 16, 8, 256)
    rng = np.random.default_rng(SEED)
    arr = {"A": ints(rng, -8, 8, n, n), "w": ints(rng, -8, 8, 9) / np.float32(8),
           "B": np.zeros((n, n), np.float32)}
    ls = tile(n)
    inner = (n - 2) ** 2
    return case("convolution-2d", f"{n}x{n}, 3x3", "conv2d", arr, ["B"],
                [launch("conv2d", (n, n), ls, buf("A"), buf("w"), buf("B"), i32(n), i32(n))],
                n * n + 9 + inner, 9 * inner + (n * n - inner))


def conv2d_ref(c):
    A = c["arrays"]["A"].astype(np.float64)
    w = c["arrays"]["w"].astype(np.float64).reshape(3, 3)
    n = A.shape[0]
    B, M = np.zeros_like(A), np.zeros_like(A)
    for di in range(3):
        for dj in range(3):
            tap = A[di:n - 2 + di, dj:n - 2 + dj]
            B[1:-1, 1:-1] += w[di, dj] * tap
            M[1:-1, 1:-1] += abs(w[di, dj]) * abs(tap)
    return {"B": exact(B, [M], unit=0.125)}


def lu(size):
    n = pick(size, 12, 3, 64)
    rng = np.random.default_rng(SEED)
    # A = L U, L lower with power-of-two diagonal, U unit upper, small integers elsewhere: every step of
    # the elimination (divisions by the pivots included) is exact in fp32
    L = np.tril(ints(rng, -1, 1, n, n, dtype=np.float64), -1) + np.diag(2.0 ** rng.integers(0, 3, n))
    Uu = np.triu(ints(rng, -1, 1, n, n, dtype=np.float64), 1) + np.eye(n)
    arr = {"A": (L @ Uu).astype(np.float32), "L": L.astype(np.float32), "U": Uu.astype(np.float32)}
    launches, min_elems, iters = [], 0, 0
    g1, l1 = line(n)
    for k in range(n):
        launches += [launch("lu_scale", g1, l1, buf("A"), i32(k), i32(n)),
                     launch("lu_update", (n, n), tile(n), buf("A"), i32(k), i32(n))]
        t = n - k - 1
        min_elems += (t + 1 + t) + (t * t + 2 * t + t * t)
        iters += g1[0] + n * n
    c = case("lu", f"{n}x{n}", "lu", arr, ["A"], launches, min_elems, iters)
    return c


def lu_ref(c):
    L, Uu = c["arrays"]["L"].astype(np.float64), c["arrays"]["U"].astype(np.float64)
    out = np.tril(L) + np.triu(Uu, 1)
    return {"A": exact(out, [abs(L) @ abs(Uu)], unit=1.0 / 4)}


def gemv_case(name, size, transposed):
    rows, cols = pick(size, (64, 32), (64, 16), (4096, 1024))
    rng = np.random.default_rng(SEED)
    W = ints(rng, -2, 2, rows, cols)
    arr = {("Wt" if transposed else "W"): np.ascontiguousarray(W.T) if transposed else W,
           "x": ints(rng, -2, 2, cols), "y": np.zeros(rows, np.float32)}
    return case(name, f"{rows}x{cols}", name, arr, ["y"],
                [launch(name, *line(rows),
                        buf("Wt" if transposed else "W"), buf("x"), buf("y"), i32(rows), i32(cols))],
                rows * cols + cols + rows, rows * cols)


def gemv(size):
    return gemv_case("gemv", size, False)


def gemv_t(size):
    return gemv_case("gemv_t", size, True)


def gemv_ref(c):
    a = c["arrays"]
    W = a["W"].astype(np.float64) if "W" in a else a["Wt"].astype(np.float64).T
    x = a["x"].astype(np.float64)
    return {"y": exact(W @ x, [abs(W) @ abs(x)])}


def reduction(size):
    n, groups, lsize = pick(size, (1 << 12, 4, 64), (1 << 6, 2, 8), (1 << 20, 64, 256))
    rng = np.random.default_rng(SEED)
    arr = {"in": ints(rng, -8, 8, n), "partial": np.zeros(groups, np.float32), "total": np.zeros(1, np.float32)}
    return case("reduction", f"2^{n.bit_length() - 1}", "reduction", arr, ["partial", "total"],
                [launch("reduce_sum", (groups * lsize,), (lsize,), buf("in"), buf("partial"), local(4 * lsize), i32(n)),
                 launch("reduce_sum", (lsize,), (lsize,), buf("partial"), buf("total"), local(4 * lsize), i32(groups))],
                (n + groups) + (groups + 1), n + lsize)


def reduction_ref(c):
    x = c["arrays"]["in"].astype(np.float64)
    g = c["arrays"]["partial"].size
    lsize = c["launches"][0]["local_size"][0]
    stride = g * lsize
    # work-item t of group q sums x[q*lsize + t :: stride]; the group's partial is their sum
    per_item = x.reshape(-1, stride).sum(axis=0)
    partial = per_item.reshape(g, lsize).sum(axis=1)
    mag = abs(x).sum()
    return {"partial": exact(partial, [np.full(g, mag)]), "total": exact(np.array([x.sum()]), [np.array([mag])])}


def scan(size):
    n, groups, lsize = pick(size, (1 << 12, 4, 32), (1 << 6, 2, 8), (1 << 18, 64, 128))
    chunk = n // (groups * lsize)
    rng = np.random.default_rng(SEED)
    arr = {"in": ints(rng, -4, 4, n), "sums": np.zeros(groups, np.float32), "out": np.zeros(n, np.float32)}
    return case("scan", f"2^{n.bit_length() - 1}", "scan", arr, ["sums", "out"],
                [launch("scan_sums", (groups * lsize,), (lsize,), buf("in"), buf("sums"), local(4 * lsize), i32(chunk)),
                 launch("scan_top", (lsize,), (lsize,), buf("sums"), local(4 * lsize), local(4 * lsize), i32(groups)),
                 launch("scan_bottom", (groups * lsize,), (lsize,), buf("in"), buf("out"), buf("sums"),
                        local(4 * lsize), local(4 * lsize), i32(chunk))],
                (n + groups) + 2 * groups + (2 * n + groups),
                3 * n + lsize * (lsize.bit_length() - 1))


def scan_ref(c):
    x = c["arrays"]["in"].astype(np.float64)
    g = c["arrays"]["sums"].size
    incl = np.cumsum(x)
    tiles = incl.reshape(g, -1)[:, -1]
    offsets = np.concatenate([[0.0], tiles[:-1]])
    mag = np.cumsum(abs(x))
    return {"sums": exact(offsets, [mag]), "out": exact(incl, [mag])}


def spmv(size):
    rows, maxnz = pick(size, (64, 16), (32, 8), (8192, 64))
    cols = rows
    rng = np.random.default_rng(SEED)
    counts = rng.integers(0, maxnz + 1, rows)
    rowptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    nnz = int(rowptr[-1])
    col = np.concatenate([np.sort(rng.choice(cols, k, replace=False)) for k in counts]).astype(np.int32)
    arr = {"val": ints(rng, -4, 4, nnz), "col": col, "rowptr": rowptr, "x": ints(rng, -4, 4, cols),
           "y": np.zeros(rows, np.float32)}
    return case("spmv_csr", f"{rows}x{cols}, {nnz} nnz", "spmv_csr", arr, ["y"],
                [launch("spmv_csr", *line(rows, 128), buf("val"), buf("col"), buf("rowptr"), buf("x"),
                        buf("y"), i32(rows))],
                2 * nnz + rows + 1 + len(np.unique(col)) + rows, nnz + (rows - np.count_nonzero(counts)),
                affine=False)


def spmv_ref(c):
    a = c["arrays"]
    rowptr, col = a["rowptr"], a["col"]
    val, x = a["val"].astype(np.float64), a["x"].astype(np.float64)
    rows = rowptr.size - 1
    owner = np.repeat(np.arange(rows), np.diff(rowptr))
    y = np.bincount(owner, weights=val * x[col], minlength=rows)
    mag = np.bincount(owner, weights=abs(val * x[col]), minlength=rows)
    return {"y": exact(y, [mag])}


NBODY_EPS2 = 2.0 ** -6


def nbody(size):
    n = pick(size, 64, 16, 1024)
    rng = np.random.default_rng(SEED)
    # positions on a 2^-6 grid in [-2, 2] and masses in 1/16ths: the differences and r2 are exact in fp32
    pos = np.empty((n, 4), np.float32)
    pos[:, :3] = rng.integers(-128, 129, (n, 3)) / 64.0
    pos[:, 3] = rng.integers(8, 17, n) / 16.0
    arr = {"pos": pos, "acc": np.zeros((n, 4), np.float32)}
    return case("nbody", f"{n} bodies", "nbody", arr, ["acc"],
                [launch("nbody_acc", *line(n, 64), buf("pos"), buf("acc"), fl(NBODY_EPS2), i32(n))],
                4 * n + 4 * n, n * n)


def nbody_ref(c):
    pos = c["arrays"]["pos"].astype(np.float64)
    n = pos.shape[0]
    p = [Bound(pos[:, d]) for d in range(4)]
    ax = ay = az = Bound(np.zeros(n))
    for j in range(n):                    # the kernel's order: j ascending, one body at a time
        dx, dy, dz = (Bound(pos[j, d]) - p[d] for d in range(3))
        r2 = ((dx * dx + dy * dy) + dz * dz) + NBODY_EPS2
        inv = r2.rsqrt()
        s = ((Bound(pos[j, 3]) * inv) * inv) * inv
        ax, ay, az = ax + dx * s, ay + dy * s, az + dz * s
    v = np.zeros((n, 4))
    e = np.zeros((n, 4))
    for d, comp in enumerate((ax, ay, az)):
        v[:, d], e[:, d] = comp.v, comp.e
    return {"acc": Bound(v, e).tolerance()}


NW_PENALTY = 2


def nw(size):
    # Rodinia's 16 x 16 blocks; --quick builds the same kernel with 4 x 4 blocks (its build takes
    # minutes today with 16), so the blocks are a #define the case sets
    n, bs = pick(size, (32, 16), (8, 4), (512, 16))
    nb = n // bs
    rng = np.random.default_rng(SEED)
    score = np.zeros((n + 1, n + 1), np.int32)
    score[0, :] = -NW_PENALTY * np.arange(n + 1)
    score[:, 0] = -NW_PENALTY * np.arange(n + 1)
    arr = {"score": score, "sim": rng.integers(-4, 6, (n, n)).astype(np.int32)}
    launches, min_elems = [], 0
    for d in range(2 * nb - 1):
        first, last = max(0, d - nb + 1), min(d, nb - 1)
        blocks = last - first + 1
        launches.append(launch("nw_diagonal", (blocks * bs,), (bs,), buf("score"), buf("sim"), i32(n),
                               i32(NW_PENALTY), i32(d), i32(first)))
        min_elems += blocks * (2 * bs * bs + 2 * bs + 1)
    c = case("nw", f"{n}x{n}, blocks {bs}", "nw", arr, ["score"], launches, min_elems,
             nb * nb * bs * (bs + (2 * bs - 1) + bs))
    assert "#define BS 16\n" in c["source"]
    c["source"] = c["source"].replace("#define BS 16\n", f"#define BS {bs}\n")
    return c


def nw_ref(c):
    score = c["arrays"]["score"].astype(np.int64)
    sim = c["arrays"]["sim"].astype(np.int64)
    n = sim.shape[0]
    for d in range(2, 2 * n + 1):         # cells (i, j) with i + j = d, 1 <= i, j <= n, all at once
        i = np.arange(max(1, d - n), min(n, d - 1) + 1)
        j = d - i
        score[i, j] = np.maximum(score[i - 1, j - 1] + sim[i - 1, j - 1],
                                 np.maximum(score[i - 1, j], score[i, j - 1]) - NW_PENALTY)
    return {"score": (score.astype(np.float64), np.zeros(score.shape))}


HOT = dict(cap=f32(0.125), rx=f32(0.1), ry=f32(0.1), rz=f32(0.05), amb=f32(80.0))


def hotspot(size):
    n, steps = pick(size, (16, 2), (16, 1), (256, 8))
    rng = np.random.default_rng(SEED)
    arr = {"power": rng.uniform(0, 1, (n, n)).astype(np.float32),
           "temp0": rng.uniform(60, 100, (n, n)).astype(np.float32), "temp1": np.zeros((n, n), np.float32)}
    launches = []
    for t in range(steps):
        src, dst = ("temp0", "temp1") if t % 2 == 0 else ("temp1", "temp0")
        launches.append(launch("hotspot_step", (n, n), (min(16, n), min(16, n)), buf("power"), buf(src), buf(dst), i32(n), i32(n),
                               *(fl(HOT[k]) for k in ("cap", "rx", "ry", "rz", "amb"))))
    return case("hotspot", f"{n}x{n}, {steps} steps", "hotspot", arr, ["temp0", "temp1"], launches,
                steps * 3 * n * n, steps * n * n)


def hotspot_ref(c):
    power = Bound(c["arrays"]["power"])
    bufs = [Bound(c["arrays"]["temp0"]), Bound(c["arrays"]["temp1"])]
    for t in range(len(c["launches"])):
        T = bufs[t % 2]
        pad_v = np.pad(T.v, 1, mode="edge")
        pad_e = np.pad(np.broadcast_to(T.e, T.v.shape), 1, mode="edge")
        nb = lambda di, dj: Bound(pad_v[1 + di:pad_v.shape[0] - 1 + di, 1 + dj:pad_v.shape[1] - 1 + dj],
                                  pad_e[1 + di:pad_e.shape[0] - 1 + di, 1 + dj:pad_e.shape[1] - 1 + dj])
        tn, ts, tw, te = nb(-1, 0), nb(1, 0), nb(0, -1), nb(0, 1)
        two_t = 2.0 * T
        inner = (((power + ((tn + ts) - two_t) * HOT["ry"]) + ((te + tw) - two_t) * HOT["rx"])
                 + (HOT["amb"] - T) * HOT["rz"])
        bufs[1 - t % 2] = T + HOT["cap"] * inner
    return {"temp0": bufs[0].tolerance(), "temp1": bufs[1].tolerance()}


BUILDERS = {"gemm": gemm, "gemm_tiled": gemm_tiled, "2mm": mm2, "atax": atax, "bicg": bicg, "mvt": mvt,
            "gesummv": gesummv, "gemver": gemver, "covariance": covariance, "jacobi-2d": jacobi2d, "fdtd-2d": fdtd2d,
            "convolution-2d": conv2d, "lu": lu, "gemv": gemv, "gemv_t": gemv_t, "reduction": reduction,
            "scan": scan, "spmv_csr": spmv, "nbody": nbody, "nw": nw, "hotspot": hotspot}
REFERENCES = {"gemm": gemm_ref, "gemm_tiled": gemm_tiled_ref, "2mm": mm2_ref, "atax": atax_ref, "bicg": bicg_ref,
              "mvt": mvt_ref, "gesummv": gesummv_ref, "gemver": gemver_ref, "covariance": covariance_ref,
              "jacobi-2d": jacobi2d_ref, "fdtd-2d": fdtd2d_ref, "convolution-2d": conv2d_ref, "lu": lu_ref,
              "gemv": gemv_ref, "gemv_t": gemv_ref, "reduction": reduction_ref, "scan": scan_ref,
              "spmv_csr": spmv_ref, "nbody": nbody_ref, "nw": nw_ref, "hotspot": hotspot_ref}
KERNELS = tuple(BUILDERS)


def make_case(name: str, size: str = "full") -> dict:
    return BUILDERS[name](size)


# -- main --------------------------------------------------------------------------------------------

def row_of(c: dict, emu: dict, ocl: dict | None, emu_timeout: float) -> dict:
    """The figures of one kernel, for the table and --json."""
    row = {"kernel": c["name"], "size": c["size"], "launches": len(c["launches"]), "iters": c["iters"],
           "affine": c["affine"], "compulsory_bytes": c["min_bytes"]}
    if "error" in emu:
        row["emu_error"] = emu["error"]
        row["emu_timed_out"] = timed_out(emu)
    else:
        row.update(ok=bool(emu["ok"]), check=emu["check"], cycles=emu["cycles"], steps=emu["steps"],
                   dram_bytes=emu["dram_bytes"], dram_ratio=emu["dram_bytes"] / c["min_bytes"],
                   bw_fraction=emu["bw_fraction"], emu_wall_s=emu["wall_s"], emu_run_s=emu["run_s"],
                   build_s=emu["build_s"])
    if ocl is not None:
        if "error" in ocl:
            row["oclgrind_error"] = ocl["error"]
        else:
            row.update(oclgrind_s=ocl["kernel_s"], oclgrind_ok=bool(ocl["ok"]), oclgrind_check=ocl["check"])
    if "oclgrind_s" in row:
        if "emu_wall_s" in row and row["emu_wall_s"] > 0:
            row["ratio"] = row["oclgrind_s"] / row["emu_wall_s"]
        elif row.get("emu_timed_out"):
            row["ratio_at_most"] = row["oclgrind_s"] / emu_timeout
    return row


def targets(rows: list[dict]) -> tuple[list[tuple], bool]:
    """(target rows, any missed)."""
    out, missed = [], False

    def add(target, kernel, value, good, why=""):
        nonlocal missed
        missed |= not good
        out.append((target, kernel, value, ("met" if good else "NOT MET") + (f" ({why})" if why else "")))

    for r in rows:
        if "emu_error" in r:
            add("result right", r["kernel"], "-", False, "timed out" if r["emu_timed_out"] else "kernel failed")
        else:
            add("result right", r["kernel"], "OK" if r["ok"] else "MISMATCH", r["ok"])
    for r in rows:
        if "ratio" in r:
            add("emulator faster than Oclgrind", r["kernel"], times(r["ratio"]), r["ratio"] > 1.0)
        elif "ratio_at_most" in r:
            add("emulator faster than Oclgrind", r["kernel"], "< " + times(r["ratio_at_most"]),
                r["ratio_at_most"] > 1.0, "emulator timed out")
        elif "emu_error" in r:
            add("emulator faster than Oclgrind", r["kernel"], "-", False, "kernel failed")
        else:
            out.append(("emulator faster than Oclgrind", r["kernel"], "-", "skipped (no Oclgrind time)"))
    ratios = [r.get("ratio", r.get("ratio_at_most")) for r in rows]
    ratios = [x for x in ratios if x is not None]
    if ratios:
        med = statistics.median(ratios)
        bounded = any("ratio_at_most" in r for r in rows)
        add("median ratio >= 10x", "all", ("<= " if bounded else "") + times(med), med >= RATIO_TARGET)
    for r in rows:
        if not r["affine"]:
            out.append(("DRAM <= 2x compulsory (affine)", r["kernel"],
                        f"{r['dram_ratio']:.2f}x" if "dram_ratio" in r else "-", "n/a (irregular accesses)"))
        elif "dram_ratio" in r:
            add("DRAM <= 2x compulsory (affine)", r["kernel"], f"{r['dram_ratio']:.3f}x", r["dram_ratio"] <= DRAM_TARGET)
        else:
            add("DRAM <= 2x compulsory (affine)", r["kernel"], "-", False,
                "timed out" if r["emu_timed_out"] else "kernel failed")
    by = {r["kernel"]: r for r in rows}
    if "gemv" in by and "gemv_t" in by:
        g, t = by["gemv"], by["gemv_t"]
        if "cycles" in g and "cycles" in t:
            q = g["cycles"] / t["cycles"]
            add("gemv cycles <= 1.5x gemv_t's", g["size"], f"{q:.2f}x", q <= GEMV_TARGET)
        else:
            add("gemv cycles <= 1.5x gemv_t's", g["size"], "-", False, "a kernel failed or timed out")
    return out, missed


def mib(b: float) -> str:
    return f"{b / 2**20:.2f}" if b >= 2**20 / 100 else f"{b / 2**20:.2g}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--machine", default=MACHINE, help=f"emulator machine (default {MACHINE})")
    ap.add_argument("--kernel", action="append", choices=KERNELS, help="run only this kernel (repeatable)")
    ap.add_argument("--quick", action="store_true", help="small sizes, for a smoke run of a few minutes")
    ap.add_argument("--no-oclgrind", action="store_true", help="skip Oclgrind")
    ap.add_argument("--emu-timeout", type=float, default=600.0,
                    help="seconds per kernel for the emulator's build + launches (default 600)")
    ap.add_argument("--oclgrind-timeout", type=float, default=600.0, help="seconds per kernel (default 600)")
    ap.add_argument("--repeat", type=int, help="runs per kernel on each side, the fastest counts, while a run takes "
                    f"under 5 s (default {REPEAT}; 1 with --quick)")
    ap.add_argument("--json", metavar="OUT", help="write the rows and targets as JSON")
    ap.add_argument("--check", action="store_true", help="exit 1 if a target is missed")
    ap.add_argument("--baseline", metavar="DIR", help="only compare the time and steps/s in Emulator.run with "
                    "the packages of checkout DIR (today's main, say), the two taking turns")
    ap.add_argument("--rounds", type=int, default=3, help="--baseline: child processes per side and kernel (default 3)")
    ap.add_argument("--oclgrind-child", metavar="DIR", help=argparse.SUPPRESS)
    ap.add_argument("--emulator-child", metavar="DIR", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    repeat = args.repeat or (1 if args.quick else REPEAT)
    if args.oclgrind_child:
        return oclgrind_child(args.oclgrind_child, repeat)
    if args.emulator_child:
        return emulator_child(args.emulator_child, check, args.machine, repeat)
    if args.baseline:
        names = [k for k in KERNELS if not args.kernel or k in args.kernel]
        compare_checkouts([make_case(k, "quick" if args.quick else "full") for k in names], __file__, args.baseline,
                          args.rounds, args.emu_timeout, ["--machine", args.machine, "--repeat", str(repeat)])
        return 0

    t_start = time.perf_counter()
    size = "quick" if args.quick else "full"
    names = [k for k in KERNELS if not args.kernel or k in args.kernel]
    from emulator.machine import load_machine
    m = load_machine(args.machine)
    link = m.links["dram_l2bm"]
    print(f"real kernels on the emulator device, machine {args.machine}: {len(names)} kernel(s), {size} sizes; "
          f"python {sys.version.split()[0]}, numpy {np.__version__}, {os.cpu_count()} CPU(s); tree {source_tree()}; "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print(f"modelled DRAM bandwidth: [links] dram_l2bm {link.bytes_per_cycle:g} B/cycle per group x {m.groups} "
          f"groups = {link.bytes_per_cycle * m.groups:g} B/cycle")
    prefix, how = (None, "--no-oclgrind") if args.no_oclgrind else oclgrind_how()
    print(f"oclgrind: {how}" if prefix is None else
          f"oclgrind: via {how}; OCLGRIND_NUM_THREADS={os.environ.get('OCLGRIND_NUM_THREADS', 'unset (Oclgrind default)')}")
    child = ["--machine", args.machine, "--repeat", str(repeat)]

    rows = []
    for name in names:
        c = make_case(name, size)
        print(f"\n[{name}] {c['size']}, {len(c['launches'])} launch(es), {c['iters']:,} work-item loop iterations, "
              f"compulsory traffic {mib(c['min_bytes'])} MiB", flush=True)
        emu = run_emulator_process(c, args.emu_timeout, __file__, child)
        if "error" in emu:
            print(f"    emulator: {emu['error']}" + (f" (build {emu['build_s']:.3f} s)" if "build_s" in emu else ""))
        else:
            print(f"    emulator: build {emu['build_s']:.3f} s; launches {emu['wall_s']:.3f} s wall ({emu['run_s']:.3f} s "
                  f"in Emulator.run); {emu['cycles']:,.0f} cycles, {emu['steps']:,} steps; DRAM {mib(emu['dram_bytes'])} "
                  f"MiB ({emu['dram_bytes'] / c['min_bytes']:.2f}x compulsory), {pct(emu['bw_fraction'])} of modelled "
                  f"DRAM bandwidth; result {emu['check']}", flush=True)
        ocl = None
        if prefix is not None:
            ocl = run_oclgrind(c, prefix, args.oclgrind_timeout, check, __file__, child)
            print(f"    oclgrind: {ocl['error']}" if "error" in ocl else
                  f"    oclgrind: launches {ocl['kernel_s']:.3f} s (build {ocl['build_s']:.2f} s); result {ocl['check']}",
                  flush=True)
        rows.append(row_of(c, emu, ocl, args.emu_timeout))

    table = [("kernel", "size", "launches", "iters", "result", "cycles", "DRAM MiB", "compulsory MiB", "DRAM/comp",
              "DRAM BW", "emu wall s", "oclgrind s", "ratio")]
    for r in rows:
        ok = "emu_error" not in r
        if "oclgrind_s" in r:
            ocl_s = f"{r['oclgrind_s']:.3f}" + ("" if r["oclgrind_ok"] else " (MISMATCH)")
        else:
            ocl_s = "FAILED" if "oclgrind_error" in r else "-"
        ratio = times(r["ratio"]) if "ratio" in r else ("< " + times(r["ratio_at_most"]) if "ratio_at_most" in r else "-")
        table.append((r["kernel"], r["size"], r["launches"], f"{r['iters']:,}",
                      r["check"] if ok else "FAILED " + short_error(r["emu_error"], 60),
                      f"{r['cycles']:,.0f}" if ok else "-", mib(r["dram_bytes"]) if ok else "-",
                      mib(r["compulsory_bytes"]), f"{r['dram_ratio']:.2f}x" if ok else "-",
                      pct(r["bw_fraction"]) if ok else "-", f"{r['emu_wall_s']:.3f}" if ok else "-", ocl_s, ratio))
    print()
    for line in fmt_table(table):
        print(line)
    ratios = [r.get("ratio", r.get("ratio_at_most")) for r in rows if "ratio" in r or "ratio_at_most" in r]
    if ratios:
        bounded = sum("ratio_at_most" in r for r in rows)
        print(f"\nmedian ratio Oclgrind / emulator: {times(statistics.median(ratios))} over {len(ratios)} kernel(s)"
              + (f" ({bounded} timed out on the emulator: their ratio is an upper bound, so the median is one too)"
                 if bounded else ""))
    trows, missed = targets(rows)
    print()
    for line in fmt_table([("target", "kernel", "value", "status")] + trows):
        print(line)
    print(f"\n(emulator wall = all launches + wait, after the build, the fastest of up to {repeat} run(s); Oclgrind = the "
          "same launches + finish inside its process; cycles and DRAM bytes summed over the launches)")
    print(f"total benchmark time {time.perf_counter() - t_start:.1f} s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": args.machine, "sizes": size, "tree": source_tree(),
                       "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "rows": rows,
                       "targets": [dict(zip(("target", "kernel", "value", "status"), t)) for t in trows]}, f, indent=1)
    return 1 if (args.check and missed) else 0


if __name__ == "__main__":
    sys.exit(main())
