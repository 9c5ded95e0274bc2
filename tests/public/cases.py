"""Kernels in the shapes of the public OpenCL benchmark suites (PolyBench/GPU, SHOC, Rodinia), as data.

Each ``@public(...)`` names a ``.cl`` file beside this module, its arguments (the buffers and
scalars of tests/kernels/spec.py, shared by every launch), the launches a host of that suite
would make (several kernels, one launch per diagonal or pass, global work offsets) and the numpy
reference below it.  tests/public/test_public.py runs every case on each device; README.md says
which public code each kernel follows and what it stresses.

Floating-point inputs are mostly dyadic (k / 2^m, small k), chosen so that every product and
partial sum of the kernel is exact in float32: then any summation order, fma contraction or
not, gives the reference bit for bit and the case checks floats exactly (rtol = atol = 0).  The
cases with divisions by non-powers of two, rsqrt or 0.2f carry a tolerance derived in a comment.

A case a device fails today is a strict xfail naming the item of issue 19 that breaks it
(``xfail={device: reason}``, devices: pocl, cpu, emulator (``tiny``), mncore2 (falls back to
emulator's reason)), so a fix shows up as XPASS.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from kernels.spec import Case, Given, In, InOut, Local, Out, Scalar

PUBLIC_DIR = Path(__file__).resolve().parent
DEVICES = ("pocl", "cpu", "emulator", "mncore2")

I32, U32, F32 = np.int32, np.uint32, np.float32


@dataclass(frozen=True)
class Launch:
    """One kernel launch: ``args`` are names of the case's arguments or by-value numpy scalars."""
    kernel: str
    global_size: tuple
    local_size: tuple | None
    args: tuple
    global_offset: tuple | None = None


@dataclass(frozen=True)
class PublicCase(Case):
    launches: tuple = ()
    follows: str = ""                                  # the public code whose shape it follows
    xfail: dict = field(default_factory=dict)          # device -> "issue 19 item N: ..."
    slow: frozenset = frozenset()                      # devices where the case is `slow`
    isolate: frozenset = frozenset()                   # devices where it runs in a subprocess (may crash)

    def xfail_on(self, device: str) -> str | None:
        if device == "mncore2" and device not in self.xfail:
            return self.xfail.get("emulator")
        return self.xfail.get(device)


PUBLIC: dict[str, PublicCase] = {}


def public(file: str, *, args, launches, follows, **kw):
    """Register the decorated numpy reference as a case named after the function."""

    def register(reference):
        name = reference.__name__
        if name in PUBLIC:
            raise ValueError(f"duplicate public case {name}")
        first = launches[0]
        PUBLIC[name] = PublicCase(
            name=name, file=file, kernel=first.kernel, global_size=first.global_size,
            local_size=first.local_size, args=tuple(args), reference=reference,
            text=(PUBLIC_DIR / file).read_text(), doc=(reference.__doc__ or "").strip(),
            launches=tuple(launches), follows=follows, **kw)
        return reference

    return register


def dyadic(shape, low, high, denominator, dtype=F32):
    """A ``gen=``: values k / denominator uniform in [low, high] (exact in float32, and so are
    the sums and products of the kernels that use them)."""
    def gen(rng):
        k = rng.integers(int(low * denominator), int(high * denominator), size=shape, endpoint=True)
        return (k / denominator).astype(dtype)
    return gen


def zeros(shape, dtype=F32):
    return Given(np.zeros(shape, dtype))


def f64(x):
    return np.asarray(x, np.float64)


# What each item's failure says (a regular expression over the error): an xfail counts only when
# the case fails this way, so a different failure of an xfailed case is still reported.
SYMPTOM = {
    4: r"differ from the numpy reference",
    7: r"live values",
    8: r"select|differ from the numpy reference",
}


def symptom(reason: str) -> str:
    """The pattern of the first item a reason names ("issue 19 item N: ..."); a new bug's: any."""
    if not reason.startswith("issue 19 item"):
        return ""
    return SYMPTOM[int(reason.split("item", 1)[1].split(":")[0].split(",")[0])]


# --------------------------------------------------------------------------------------------
# Dense linear algebra (PolyBench/GPU)
# --------------------------------------------------------------------------------------------

NX, NY = 40, 48


@public("atax.cl", follows="PolyBench/GPU atax (atax_kernel1, atax_kernel2)",
       args=[In("A", F32, NX * NY, gen=dyadic(NX * NY, -2, 2, 4)), In("x", F32, NY, gen=dyadic(NY, -2, 2, 4)),
             InOut("tmp", F32, NX, gen=zeros(NX)), InOut("y", F32, NY, gen=zeros(NY)),
             Scalar("nx", I32, NX), Scalar("ny", I32, NY)],
       launches=[Launch("atax_rows", (64,), (32,), ("A", "x", "tmp", "nx", "ny")),
                 Launch("atax_cols", (64,), (32,), ("A", "y", "tmp", "nx", "ny"))])
def atax(A, x, tmp, y, nx, ny):
    a = f64(A).reshape(nx, ny)
    t = a @ f64(x)
    return {"tmp": t, "y": a.T @ t}


@public("bicg.cl", follows="PolyBench/GPU bicg (bicgKernel1, bicgKernel2)",
       args=[In("A", F32, NX * NY, gen=dyadic(NX * NY, -2, 2, 4)), In("p", F32, NY, gen=dyadic(NY, -2, 2, 4)),
             In("r", F32, NX, gen=dyadic(NX, -2, 2, 4)), Out("q", F32, NX), Out("s", F32, NY),
             Scalar("nx", I32, NX), Scalar("ny", I32, NY)],
       launches=[Launch("bicg_q", (48,), (16,), ("A", "p", "q", "nx", "ny")),
                 Launch("bicg_s", (48,), (16,), ("A", "r", "s", "nx", "ny"))])
def bicg(A, p, r, q, s, nx, ny):
    a = f64(A).reshape(nx, ny)
    return {"q": a @ f64(p), "s": a.T @ f64(r)}


N_MVT = 40


@public("mvt.cl", follows="PolyBench/GPU mvt (mvt_kernel1, mvt_kernel2)",
       args=[In("a", F32, N_MVT * N_MVT, gen=dyadic(N_MVT * N_MVT, -2, 2, 4)),
             InOut("x1", F32, N_MVT, gen=dyadic(N_MVT, -8, 8, 2)), InOut("x2", F32, N_MVT, gen=dyadic(N_MVT, -8, 8, 2)),
             In("y1", F32, N_MVT, gen=dyadic(N_MVT, -2, 2, 4)), In("y2", F32, N_MVT, gen=dyadic(N_MVT, -2, 2, 4)),
             Scalar("n", I32, N_MVT)],
       launches=[Launch("mvt_forward", (64,), (32,), ("a", "x1", "y1", "n")),
                 Launch("mvt_transposed", (64,), (32,), ("a", "x2", "y2", "n"))])
def mvt(a, x1, x2, y1, y2, n):
    m = f64(a).reshape(n, n)
    return {"x1": f64(x1) + m @ f64(y1), "x2": f64(x2) + m.T @ f64(y2)}


N_GV = 32


@public("gemver.cl", follows="PolyBench/GPU gemver (gemver_kernel1..3)",
       slow=frozenset({"emulator"}),
       args=[InOut("A", F32, N_GV * N_GV, gen=dyadic(N_GV * N_GV, -2, 2, 4))]
       + [In(v, F32, N_GV, gen=dyadic(N_GV, -1, 1, 4)) for v in ("u1", "v1", "u2", "v2", "y", "z")]
       + [InOut("x", F32, N_GV, gen=zeros(N_GV)), InOut("w", F32, N_GV, gen=zeros(N_GV)),
          Scalar("alpha", F32, 0.5), Scalar("beta", F32, 0.25), Scalar("n", I32, N_GV)],
       launches=[Launch("gemver_rank2", (32, 32), (8, 8), ("A", "u1", "v1", "u2", "v2", "n")),
                 Launch("gemver_xt", (32,), (16,), ("A", "x", "y", "beta", "n")),
                 Launch("gemver_xz", (32,), (16,), ("x", "z", "n")),
                 Launch("gemver_w", (32,), (16,), ("A", "w", "x", "alpha", "n"))])
def gemver(A, u1, v1, u2, v2, y, z, x, w, alpha, beta, n):
    a = f64(A).reshape(n, n) + np.outer(u1, v1) + np.outer(u2, v2)
    xs = f64(x) + float(beta) * (a.T @ f64(y)) + f64(z)
    return {"A": a, "x": xs, "w": f64(w) + float(alpha) * (a @ xs)}


NI, NJ, NK = 24, 20, 16


@public("gemm.cl", follows="PolyBench/GPU gemm (gemm_kernel)",
       args=[In("a", F32, NI * NK, gen=dyadic(NI * NK, -2, 2, 4)), In("b", F32, NK * NJ, gen=dyadic(NK * NJ, -2, 2, 4)),
             InOut("c", F32, NI * NJ, gen=dyadic(NI * NJ, -4, 4, 2)),
             Scalar("alpha", F32, 1.5), Scalar("beta", F32, -0.5),
             Scalar("ni", I32, NI), Scalar("nj", I32, NJ), Scalar("nk", I32, NK)],
       launches=[Launch("gemm_naive", (24, 24), (8, 8), ("a", "b", "c", "alpha", "beta", "ni", "nj", "nk"))])
def gemm(a, b, c, alpha, beta, ni, nj, nk):
    prod = f64(a).reshape(ni, nk) @ f64(b).reshape(nk, nj)
    return {"c": float(beta) * f64(c).reshape(ni, nj) + float(alpha) * prod}


N_SY, M_SY = 24, 16


@public("syrk.cl", follows="PolyBench/GPU syrk (syrk_kernel)", slow=frozenset({"emulator"}),
       args=[In("a", F32, N_SY * M_SY, gen=dyadic(N_SY * M_SY, -2, 2, 4)),
             InOut("c", F32, N_SY * N_SY, gen=dyadic(N_SY * N_SY, -4, 4, 2)),
             Scalar("alpha", F32, 0.5), Scalar("beta", F32, 1.5), Scalar("n", I32, N_SY), Scalar("m", I32, M_SY)],
       launches=[Launch("syrk_update", (24, 24), (8, 4), ("a", "c", "alpha", "beta", "n", "m"))])
def syrk(a, c, alpha, beta, n, m):
    am = f64(a).reshape(n, m)
    return {"c": float(beta) * f64(c).reshape(n, n) + float(alpha) * (am @ am.T)}


# SHOC sgemm: 64 x 16 tiles of C per 16 x 4 work-group
M_SG, N_SG, K_SG = 64, 16, 32


@public("sgemm_blocked.cl", follows="SHOC sgemm (sgemmNN: register-blocked, pointer parameters advanced)",
       isolate=frozenset({"cpu"}), slow=frozenset({"emulator"}),
       args=[In("A", F32, M_SG * K_SG, gen=dyadic(M_SG * K_SG, -2, 2, 4)), Scalar("lda", I32, K_SG),
             In("B", F32, K_SG * N_SG, gen=dyadic(K_SG * N_SG, -2, 2, 4)), Scalar("ldb", I32, N_SG),
             InOut("C", F32, M_SG * N_SG, gen=dyadic(M_SG * N_SG, -4, 4, 2)), Scalar("ldc", I32, N_SG),
             Scalar("k", I32, K_SG), Scalar("alpha", F32, 1.5), Scalar("beta", F32, -0.5)],
       launches=[Launch("sgemm_regblock", (M_SG // 64 * 16, N_SG // 16 * 4), (16, 4),
                        ("A", "lda", "B", "ldb", "C", "ldc", "k", "alpha", "beta"))])
def sgemm_blocked(A, lda, B, ldb, C, ldc, k, alpha, beta):
    prod = f64(A).reshape(M_SG, K_SG) @ f64(B).reshape(K_SG, N_SG)
    return {"C": float(alpha) * prod + float(beta) * f64(C).reshape(M_SG, N_SG)}


# --------------------------------------------------------------------------------------------
# Stencils
# --------------------------------------------------------------------------------------------

N_JAC, STEPS_JAC = 20, 2


# Tolerance: a step sums five float32 values in [0, 1] (4 roundings of at most 2^-24 * 5 each),
# scales by 0.2f (its own error and one more rounding: 2 * 2^-24): at most 0.2 * 4 * 5 * 2^-24 +
# 2 * 2^-24 = 3.6e-7 per step; averaging does not amplify earlier errors, so two steps stay
# within 7.2e-7: atol 1e-6.
@public("jacobi2d.cl", follows="PolyBench/GPU jacobi-2d (runJacobi2D_kernel1/2)", atol=1e-6,
       slow=frozenset({"emulator"}),
       args=[InOut("A", F32, N_JAC * N_JAC, 0, 1), InOut("B", F32, N_JAC * N_JAC, gen=zeros(N_JAC * N_JAC)),
             Scalar("n", I32, N_JAC)],
       launches=[Launch(k, (24, 24), (8, 8), ("A", "B", "n"))
                 for _ in range(STEPS_JAC) for k in ("jacobi_average", "jacobi_copy")])
def jacobi2d(A, B, n):
    a, b = f64(A).reshape(n, n), f64(B).reshape(n, n)
    for _ in range(STEPS_JAC):
        b[1:-1, 1:-1] = 0.2 * (a[1:-1, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:] + a[2:, 1:-1] + a[:-2, 1:-1])
        a[1:-1, 1:-1] = b[1:-1, 1:-1]
    return {"A": a, "B": b}


ROWS_HS, COLS_HS = 20, 28
HS = dict(cap_inv=0.5, rx_inv=0.1, ry_inv=0.1, rz_inv=0.01, ambient=300.0)


def hotspot_reference_step(power, t, cap_inv, rx_inv, ry_inv, rz_inv, ambient):
    p = np.pad(t, 1, mode="edge")
    ns = p[:-2, 1:-1] + p[2:, 1:-1] - 2 * t
    ew = p[1:-1, :-2] + p[1:-1, 2:] - 2 * t
    return t + cap_inv * (power + ns * ry_inv + ew * rx_inv + (ambient - t) * rz_inv)


# Tolerance: about a dozen float32 operations per step on temperatures near 330 (one ulp 3e-5),
# and 0.1f / 0.01f / 0.5f are not the decimal values: two steps stay within 12 * 2 * 3e-5 = 7e-4
# of the float64 result: atol 1e-3.
@public("hotspot.cl", follows="Rodinia hotspot (calculate_temp)", atol=1e-3, slow=frozenset({"emulator"}),
       args=[In("power", F32, ROWS_HS * COLS_HS, 0, 1),
             InOut("t0", F32, ROWS_HS * COLS_HS, 320, 340), InOut("t1", F32, ROWS_HS * COLS_HS, gen=zeros(ROWS_HS * COLS_HS)),
             Scalar("rows", I32, ROWS_HS), Scalar("cols", I32, COLS_HS)]
       + [Scalar(k, F32, v) for k, v in HS.items()],
       launches=[Launch("hotspot_step", (32, 24), (8, 8),
                        ("power", src, dst, "rows", "cols", *HS)) for src, dst in (("t0", "t1"), ("t1", "t0"))])
def hotspot(power, t0, t1, rows, cols, **coef):
    p = f64(power).reshape(rows, cols)
    c = {k: float(v) for k, v in coef.items()}
    first = hotspot_reference_step(p, f64(t0).reshape(rows, cols), **c)
    return {"t1": first, "t0": hotspot_reference_step(p, first, **c)}


ROWS_PF, COLS_PF = 6, 56


@public("pathfinder.cl", follows="Rodinia pathfinder (dynproc_kernel)",
       args=[In("wall", I32, ROWS_PF * COLS_PF, 0, 9), InOut("ping", I32, COLS_PF, gen=Given(np.zeros(COLS_PF, I32))),
             InOut("pong", I32, COLS_PF, gen=Given(np.zeros(COLS_PF, I32))), Scalar("cols", I32, COLS_PF)],
       launches=[Launch("pathfinder_row", (64,), (16,),
                        ("wall", "ping" if r % 2 else "pong", "pong" if r % 2 else "ping", "cols", I32(r)))
                 for r in range(ROWS_PF)])
def pathfinder(wall, ping, pong, cols):
    w = wall.reshape(-1, cols).astype(np.int64)
    rows = {"ping": ping.astype(np.int64), "pong": pong.astype(np.int64)}
    for r in range(ROWS_PF):                           # the launches' ping-pong, row 0 reading zeros
        src, dst = ("ping", "pong") if r % 2 else ("pong", "ping")
        prev = rows[src]
        left = np.concatenate([[2**62], prev[:-1]])
        right = np.concatenate([prev[1:], [2**62]])
        rows[dst] = w[r] + np.minimum(prev, np.minimum(left, right))
    return rows


NX3, NY3, NZ3 = 12, 10, 8


@public("stencil3d.cl", follows="SHOC stencil / Parboil stencil (7-point, 3-D range)",
       args=[In("src", F32, NX3 * NY3 * NZ3, gen=dyadic(NX3 * NY3 * NZ3, 0, 4, 16)),
             Out("dst", F32, NX3 * NY3 * NZ3, fill=-1), Scalar("nx", I32, NX3), Scalar("ny", I32, NY3),
             Scalar("nz", I32, NZ3), Scalar("c0", F32, 0.25), Scalar("c1", F32, 0.125)],
       launches=[Launch("stencil7", (12, 12, 8), (4, 4, 2), ("src", "dst", "nx", "ny", "nz", "c0", "c1"))])
def stencil3d(src, dst, nx, ny, nz, c0, c1):
    a = f64(src).reshape(nz, ny, nx)
    out = a.copy()
    i = a[1:-1, 1:-1, 1:-1]
    out[1:-1, 1:-1, 1:-1] = float(c0) * i + float(c1) * (
        a[1:-1, 1:-1, :-2] + a[1:-1, 1:-1, 2:] + a[1:-1, :-2, 1:-1] + a[1:-1, 2:, 1:-1] + a[:-2, 1:-1, 1:-1] + a[2:, 1:-1, 1:-1])
    return {"dst": out}


# --------------------------------------------------------------------------------------------
# Reductions and scans (SHOC)
# --------------------------------------------------------------------------------------------

N_RED, GROUPS_RED, WG_RED = 1000, 8, 32


@public("reduce.cl", follows="SHOC reduction (reduce, then the partial sums on one work-group)",
       args=[In("data", F32, N_RED, gen=dyadic(N_RED, -4, 4, 8)), InOut("partial", F32, GROUPS_RED, gen=zeros(GROUPS_RED)),
             Out("total", F32, 1), Local("scratch", 4 * WG_RED)],
       launches=[Launch("reduce_sum", (GROUPS_RED * WG_RED,), (WG_RED,), ("data", "partial", "scratch", U32(N_RED))),
                 Launch("reduce_sum", (8,), (8,), ("partial", "total", "scratch", U32(GROUPS_RED)))])
def reduce(data, partial, total):
    d = f64(data)
    stride = GROUPS_RED * WG_RED
    per_item = np.array([d[i::stride].sum() for i in range(stride)])
    parts = per_item.reshape(GROUPS_RED, WG_RED).sum(axis=1)
    return {"partial": parts, "total": [d.sum()]}


N_SCAN, BLOCK_SCAN = 300, 64
GROUPS_SCAN = -(-N_SCAN // BLOCK_SCAN)


@public("scan.cl", follows="SHOC scan (reduce, top_scan, bottom_scan)", slow=frozenset({"emulator"}),
       args=[In("data", I32, N_SCAN, -1000, 1000), InOut("isums", I32, GROUPS_SCAN, gen=Given(np.zeros(GROUPS_SCAN, I32))),
             Out("out", I32, N_SCAN)],
       launches=[Launch("block_sums", (GROUPS_SCAN * 32,), (32,), ("data", "isums", I32(N_SCAN), I32(BLOCK_SCAN))),
                 Launch("top_scan", (32,), (32,), ("isums", I32(GROUPS_SCAN))),
                 Launch("bottom_scan", (GROUPS_SCAN * 32,), (32,),
                        ("data", "out", "isums", I32(N_SCAN), I32(BLOCK_SCAN)))])
def scan(data, isums, out):
    sums = np.add.reduceat(data.astype(np.int64), np.arange(0, N_SCAN, BLOCK_SCAN))
    return {"isums": np.cumsum(sums) - sums, "out": np.cumsum(data.astype(np.int64))}


# --------------------------------------------------------------------------------------------
# Sorts
# --------------------------------------------------------------------------------------------

CHUNK_BIT, GROUPS_BIT = 64, 2


@public("bitonic.cl", follows="AMD APP SDK / NVIDIA OpenCL samples bitonic sort (local-memory stage)",
       args=[InOut("keys", U32, CHUNK_BIT * GROUPS_BIT, 0, 2**32 - 1)],
       launches=[Launch("bitonic_local", (CHUNK_BIT // 2 * GROUPS_BIT,), (CHUNK_BIT // 2,), ("keys",))])
def bitonic(keys):
    return {"keys": np.sort(keys.reshape(GROUPS_BIT, CHUNK_BIT), axis=1)}


N_RADIX = 128


@public("radix.cl", follows="SHOC sort / SDK radix sorts (one launch per 4-bit digit)", slow=frozenset({"emulator"}),
       args=[InOut("keys_a", U32, N_RADIX, 0, 2**16 - 1), InOut("vals_a", U32, N_RADIX, gen=Given(np.arange(N_RADIX, dtype=U32))),
             InOut("keys_b", U32, N_RADIX, gen=Given(np.zeros(N_RADIX, U32))),
             InOut("vals_b", U32, N_RADIX, gen=Given(np.zeros(N_RADIX, U32)))],
       launches=[Launch("radix_pass", (N_RADIX,), (64,), ("keys_a", "vals_a", "keys_b", "vals_b", I32(N_RADIX), I32(p)))
                 for p in range(4)])
def radix(keys_a, vals_a, keys_b, vals_b):
    order = np.argsort(keys_a, kind="stable")
    # after four passes the result is back in the "a" pair; the "b" pair holds the sort by the
    # three low digits (pass 2's output)
    low3 = np.argsort(keys_a & 0xFFF, kind="stable")
    return {"keys_a": keys_a[order], "vals_a": vals_a[order], "keys_b": keys_a[low3], "vals_b": vals_a[low3]}


# --------------------------------------------------------------------------------------------
# Sparse matrix-vector (SHOC spmv)
# --------------------------------------------------------------------------------------------

ROWS_SP, COLS_SP = 60, 50


def csr_matrix(rng):
    counts = rng.integers(0, 9, size=ROWS_SP)
    start = np.concatenate([[0], np.cumsum(counts)]).astype(I32)
    cols = np.concatenate([np.sort(rng.choice(COLS_SP, c, replace=False)) for c in counts]).astype(I32)
    vals = (rng.integers(-16, 17, size=start[-1]) / 8).astype(F32)
    return start, cols, vals


_CSR = csr_matrix(np.random.default_rng(19))


@public("spmv.cl", follows="SHOC spmv (spmv_csr_scalar_kernel)",
       args=[In("val", F32, _CSR[2].size, gen=Given(_CSR[2])), In("cols", I32, _CSR[1].size, gen=Given(_CSR[1])),
             In("row_start", I32, ROWS_SP + 1, gen=Given(_CSR[0])), In("vec", F32, COLS_SP, gen=dyadic(COLS_SP, -2, 2, 8)),
             Out("out", F32, ROWS_SP, fill=-1), Scalar("rows", I32, ROWS_SP)],
       launches=[Launch("spmv_csr_scalar", (64,), (32,), ("val", "cols", "row_start", "vec", "out", "rows"))])
def spmv(val, cols, row_start, vec, out, rows):
    y = np.zeros(rows)
    for r in range(rows):
        k = slice(row_start[r], row_start[r + 1])
        y[r] = (f64(val[k]) * f64(vec)[cols[k]]).sum()
    return {"out": y}


# --------------------------------------------------------------------------------------------
# Graph traversal (Rodinia bfs): many frontier nodes store the same value to one neighbour
# --------------------------------------------------------------------------------------------

N_BFS = 48


def random_graph(rng):
    """A connected-ish undirected graph: a random spanning tree plus extra edges, as adjacency lists."""
    adj = [set() for _ in range(N_BFS)]
    for v in range(1, N_BFS):
        u = int(rng.integers(0, v))
        adj[u].add(v)
        adj[v].add(u)
    for _ in range(3 * N_BFS):
        u, v = (int(t) for t in rng.integers(0, N_BFS, 2))
        if u != v:
            adj[u].add(v)
            adj[v].add(u)
    degree = np.array([len(a) for a in adj], I32)
    start = np.concatenate([[0], np.cumsum(degree)[:-1]]).astype(I32)
    edges = np.concatenate([sorted(a) for a in adj]).astype(I32)
    return start, degree, edges


_GRAPH = random_graph(np.random.default_rng(6))


def bfs_levels(start, degree, edges, source=0):
    cost = np.full(N_BFS, -1, np.int64)
    cost[source] = 0
    frontier = [source]
    while frontier:
        nxt = []
        for u in frontier:
            for v in edges[start[u]:start[u] + degree[u]]:
                if cost[v] < 0:
                    cost[v] = cost[u] + 1
                    nxt.append(v)
        frontier = nxt
    return cost


_DEPTH = int(bfs_levels(*_GRAPH).max())


def one_hot(n, at, dtype):
    v = np.zeros(n, dtype)
    v[at] = 1
    return v


def _cost0():
    c = np.full(N_BFS, -1, I32)
    c[0] = 0
    return c


# Every level needs an expand and a settle launch; one more level finds the frontier empty.
BFS_LEVELS = _DEPTH + 1

NODE_T = np.dtype([("first", I32), ("count", I32)])
_NODES = np.zeros(N_BFS, NODE_T)
_NODES["first"], _NODES["count"] = _GRAPH[0], _GRAPH[1]


@public("bfs.cl", follows="Rodinia bfs, OpenCL version (BFS_1, BFS_2; char masks, true/false)", slow=frozenset({"emulator"}),
       args=[In("nodes", NODE_T, N_BFS, gen=Given(_NODES)), In("edges", I32, _GRAPH[2].size, gen=Given(_GRAPH[2])),
             InOut("frontier", np.int8, N_BFS, gen=Given(one_hot(N_BFS, 0, np.int8))),
             InOut("next", np.int8, N_BFS, gen=Given(np.zeros(N_BFS, np.int8))),
             InOut("visited", np.int8, N_BFS, gen=Given(one_hot(N_BFS, 0, np.int8))),
             InOut("cost", I32, N_BFS, gen=Given(_cost0())), InOut("again", np.int8, 1, gen=Given(np.zeros(1, np.int8))),
             Scalar("n", I32, N_BFS)],
       launches=[launch for _ in range(BFS_LEVELS) for launch in (
           Launch("visit_frontier", (128,), (32,), ("nodes", "edges", "frontier", "next", "visited", "cost", "n")),
           Launch("settle_frontier", (128,), (32,), ("frontier", "next", "visited", "again", "n")))])
def bfs(nodes, edges, frontier, next, visited, cost, again, n):
    levels = bfs_levels(*_GRAPH)
    return {"cost": levels, "visited": (levels >= 0).astype(np.int8), "frontier": np.zeros(N_BFS),
            "next": np.zeros(N_BFS), "again": [1]}


@public("bfs_int.cl", follows="OpenDwarfs / Rodinia bfs (kernel1, kernel2; int masks)",
       args=[In("start", I32, N_BFS, gen=Given(_GRAPH[0])), In("degree", I32, N_BFS, gen=Given(_GRAPH[1])),
             In("edges", I32, _GRAPH[2].size, gen=Given(_GRAPH[2])),
             InOut("frontier", I32, N_BFS, gen=Given(one_hot(N_BFS, 0, I32))),
             InOut("next", I32, N_BFS, gen=Given(np.zeros(N_BFS, I32))),
             InOut("visited", I32, N_BFS, gen=Given(one_hot(N_BFS, 0, I32))),
             InOut("cost", I32, N_BFS, gen=Given(_cost0())), InOut("again", I32, 1, gen=Given(np.zeros(1, I32))),
             Scalar("n", I32, N_BFS)],
       launches=[launch for _ in range(BFS_LEVELS) for launch in (
           Launch("expand", (128,), (32,), ("start", "degree", "edges", "frontier", "next", "visited", "cost", "n")),
           Launch("advance", (128,), (32,), ("frontier", "next", "visited", "again", "n")))])
def bfs_int(start, degree, edges, frontier, next, visited, cost, again, n):
    levels = bfs_levels(*_GRAPH)
    return {"cost": levels, "visited": (levels >= 0).astype(I32), "frontier": np.zeros(N_BFS),
            "next": np.zeros(N_BFS), "again": [1]}


# --------------------------------------------------------------------------------------------
# N-body (SHOC / AMD SDK)
# --------------------------------------------------------------------------------------------

N_BODY, WG_BODY, DT, SOFT2 = 32, 8, 0.01, 0.05


def bodies(rng):
    p = rng.uniform(-1, 1, size=(N_BODY, 4))
    p[:, 3] = rng.uniform(0.5, 1.0, size=N_BODY)
    return p.astype(F32)


# Tolerance: r2 >= soft2 = 0.05 bounds each term by m / soft2 = 1 / 0.05^1.5 ~ 90; 32 terms with a
# few float32 roundings each plus rsqrt's 2 ulp leave |acc| errors below 32 * 90 * 8 * 2^-24 ~ 1.4e-3,
# times dt = 0.01 in the velocity (1.4e-5), and again in the position: atol 1e-4.
@public("nbody.cl", follows="SHOC / AMD APP SDK nbody (float4, local tile, rsqrt)", atol=1e-4, slow=frozenset({"emulator"}),
       args=[In("pos", F32, (N_BODY, 4), gen=bodies), In("vel", F32, (N_BODY, 4), -0.1, 0.1),
             Out("new_pos", F32, (N_BODY, 4)), Out("new_vel", F32, (N_BODY, 4)), Local("tile", 16 * WG_BODY),
             Scalar("n", I32, N_BODY), Scalar("dt", F32, DT), Scalar("soft2", F32, SOFT2)],
       launches=[Launch("nbody_step", (N_BODY,), (WG_BODY,), ("pos", "vel", "new_pos", "new_vel", "tile", "n", "dt", "soft2"))])
def nbody(pos, vel, new_pos, new_vel, n, dt, soft2):
    p, v = f64(pos), f64(vel)
    d = p[None, :, :3] - p[:, None, :3]
    r2 = (d ** 2).sum(-1) + float(F32(soft2))
    acc = (p[None, :, 3] * r2 ** -1.5)[:, :, None] * d
    v2, p2 = v.copy(), p.copy()
    v2[:, :3] += acc.sum(1) * float(F32(dt))
    p2[:, :3] += v2[:, :3] * float(F32(dt))
    return {"new_pos": p2, "new_vel": v2}


# --------------------------------------------------------------------------------------------
# Dynamic programming on anti-diagonals (Rodinia nw)
# --------------------------------------------------------------------------------------------

N_NW, PENALTY = 8, 3


def nw_score0():
    s = np.zeros((N_NW + 1) ** 2, I32).reshape(N_NW + 1, N_NW + 1)
    s[0, :] = -PENALTY * np.arange(N_NW + 1)
    s[:, 0] = -PENALTY * np.arange(N_NW + 1)
    return s.reshape(-1)


@public("nw.cl", follows="Rodinia nw (needle_opencl_shared_1/2, one launch per diagonal)",
       args=[InOut("score", I32, (N_NW + 1) ** 2, gen=Given(nw_score0())),
             In("similarity", I32, (N_NW + 1) ** 2, -4, 5), Scalar("n", I32, N_NW), Scalar("penalty", I32, PENALTY)],
       launches=[Launch("nw_diagonal", (16,), (8,), ("score", "similarity", "n", "penalty", I32(d)))
                 for d in range(2, 2 * N_NW + 1)])
def nw(score, similarity, n, penalty):
    s = score.reshape(n + 1, n + 1).astype(np.int64)
    sim = similarity.reshape(n + 1, n + 1)
    for i in range(1, n + 1):
        for j in range(1, n + 1):
            s[i, j] = max(s[i - 1, j - 1] + sim[i, j], s[i - 1, j] - penalty, s[i, j - 1] - penalty)
    return {"score": s}


# --------------------------------------------------------------------------------------------
# Hashing with rotates (SHOC md5hash)
# --------------------------------------------------------------------------------------------

N_MD5, SALT = 64, 0xC0FFEE11


@public("md5.cl", follows="SHOC md5hash (FindKeyWithDigest_Kernel's MD5 rounds)",
       args=[Out("digest", U32, 4 * N_MD5), Scalar("salt", U32, SALT), Scalar("n", I32, N_MD5)],
       launches=[Launch("md5_of_index", (N_MD5,), (32,), ("digest", "salt", "n"))])
def md5(digest, salt, n):
    out = []
    for g in range(n):
        words = np.array([g, (g * 0x9E3779B9) & 0xFFFFFFFF, g ^ int(salt), int(salt)], "<u4")
        out.append(np.frombuffer(hashlib.md5(words.tobytes()).digest(), "<u4"))
    return {"digest": np.concatenate(out)}


# --------------------------------------------------------------------------------------------
# Global work offsets (hosts that split a range into several launches)
# --------------------------------------------------------------------------------------------

N_TRIAD, CHUNK_TRIAD = 1000, 256


@public("triad.cl", follows="SHOC triad, launched in chunks with global_work_offset",
       args=[In("a", F32, N_TRIAD, gen=dyadic(N_TRIAD, -8, 8, 4)), In("b", F32, N_TRIAD, gen=dyadic(N_TRIAD, -8, 8, 4)),
             Out("c", F32, N_TRIAD, fill=-1), Scalar("s", F32, 2.5), Scalar("n", I32, N_TRIAD)],
       launches=[Launch("triad", (CHUNK_TRIAD,), (64,), ("a", "b", "c", "s", "n"), global_offset=(off,))
                 for off in range(0, N_TRIAD, CHUNK_TRIAD)])
def triad(a, b, c, s, n):
    return {"c": f64(a) + float(s) * f64(b)}
