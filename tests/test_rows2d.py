"""2-D launches run flat in row-major order (the "rows" builds, translator/backend/rows.py): their
row-major accesses take the 1-D contiguous and shifted paths; checked against numpy, with the
variant each launch took, the fallback to "nd" where a pitch is not the row, partial waves and the
out-of-bounds report."""

import numpy as np
import pytest

import mncl as cl
from translator.backend import abi

from emulator_harness import buf, mncc_stats, read

JACOBI = """
__kernel void jacobi_step(__global const float *A, __global float *B, int n)
{
    int j = get_global_id(0);
    int i = get_global_id(1);
    if (i >= 1 && i < n - 1 && j >= 1 && j < n - 1)
        B[i * n + j] = 0.2f * (A[i * n + j] + A[i * n + j - 1] + A[i * n + j + 1]
                               + A[(i + 1) * n + j] + A[(i - 1) * n + j]);
}
"""

CONV = """
__kernel void conv2d(__global const float *A, __constant float *w, __global float *B, int ni, int nj)
{
    int j = get_global_id(0);
    int i = get_global_id(1);
    if (i > 0 && i < ni - 1 && j > 0 && j < nj - 1) {
        float acc = 0.0f;
        for (int di = -1; di <= 1; di++)
            for (int dj = -1; dj <= 1; dj++)
                acc += w[(di + 1) * 3 + dj + 1] * A[(i + di) * nj + j + dj];
        B[i * nj + j] = acc;
    }
}
"""

GEMM = """
__kernel void gemm(__global const float *A, __global const float *B, __global float *C,
                   float alpha, float beta, int ni, int nj, int nk)
{
    int j = get_global_id(0);
    int i = get_global_id(1);
    if (i < ni && j < nj) {
        float acc = 0.0f;
        for (int k = 0; k < nk; k++)
            acc += A[i * nk + k] * B[k * nj + j];
        C[i * nj + j] = alpha * acc + beta * C[i * nj + j];
    }
}
"""

# a pitch that is get_global_size(0) and one that is a constant
CENTRE = """
#define W 24
__kernel void centre(__global float *d, __global const float *mean, __global float *e)
{
    int j = get_global_id(0);
    int i = get_global_id(1);
    d[i * get_global_size(0) + j] -= mean[j];
    e[i * W + j] = 2.0f * mean[j];
}
"""

CLAMP = """
__kernel void clamp4(__global const float *t, __global float *o, int rows, int cols)
{
    int c = get_global_id(0);
    int r = get_global_id(1);
    if (r < rows && c < cols) {
        float n = t[(r > 0 ? r - 1 : r) * cols + c];
        float s = t[(r < rows - 1 ? r + 1 : r) * cols + c];
        float w = t[r * cols + (c > 0 ? c - 1 : c)];
        float e = t[r * cols + (c < cols - 1 ? c + 1 : c)];
        o[r * cols + c] = n + 2.0f * s + 4.0f * w + 8.0f * e;
    }
}
"""

SHIFT = """
__kernel void shift(__global const float *x, __global float *o, int n, int k)
{
    int j = get_global_id(0);
    int i = get_global_id(1);
    o[i * n + j] = x[(i + k) * n + j];
}
"""


@pytest.fixture(scope="module")
def tiny():
    ctx = cl.Context([cl.get_device("emulator", "tiny")])
    return ctx, cl.CommandQueue(ctx)




def jacobi(ctx, q, n, gx=None):
    """One jacobi step over n x n on a launch gx wide (gx > n: a pitch that is not the row);
    (result, numpy's, the launch's event)."""
    rng = np.random.default_rng(n)
    A = rng.random(n * n, dtype=np.float32)
    B = rng.random(n * n, dtype=np.float32)
    prg = cl.Program(ctx, JACOBI).build()
    b = buf(ctx, B)
    ev = prg.jacobi_step(q, (gx or n, n), None, buf(ctx, A), b, np.int32(n))
    out = read(q, b, B)
    a2, ref = A.reshape(n, n), B.reshape(n, n).copy()
    ref[1:-1, 1:-1] = np.float32(0.2) * (a2[1:-1, 1:-1] + a2[1:-1, :-2] + a2[1:-1, 2:] + a2[2:, 1:-1]
                                         + a2[:-2, 1:-1])
    return out.reshape(n, n), ref, ev


@pytest.mark.parametrize("n", [32, 40, 37])      # 2 full waves of tiny; a partial last wave; rows across waves
def test_jacobi_2d_runs_flat_and_matches_numpy(tiny, modes, n):
    ctx, q = tiny
    out, ref, _ = jacobi(ctx, q, n)
    np.testing.assert_array_equal(out, ref)
    assert modes == ["rows"]


def test_jacobi_2d_moves_the_wave_not_the_buffer(tiny):
    """The 5-point stencil's loads are shifted wave shares and its store a contiguous one: the
    nd build gathered all of A five times per wave (85,132 cycles, 231,936 DRAM bytes)."""
    ctx, q = tiny
    out, ref, ev = jacobi(ctx, q, 40)
    np.testing.assert_array_equal(out, ref)
    s = ev.stats.summary()
    assert s["cycles"] < 12000 and s["dram_bytes"] < 80000, (s["cycles"], s["dram_bytes"])


def test_a_pitch_that_is_not_the_row_falls_back_to_nd(tiny, modes):
    """A launch 5 columns wider than the matrix: n != gx, so i * n + j is not the flat position."""
    ctx, q = tiny
    out, ref, _ = jacobi(ctx, q, 30, gx=35)
    np.testing.assert_array_equal(out, ref)
    assert modes == ["nd"]


def test_a_global_offset_falls_back_to_nd(tiny, modes):
    ctx, q = tiny
    n = 20
    x = np.arange(n * n, dtype=np.float32)
    o = np.zeros(n * n, np.float32)
    prg = cl.Program(ctx, SHIFT).build()
    ob = buf(ctx, o)
    prg.shift(q, (n, n - 2), None, buf(ctx, x), ob, np.int32(n), np.int32(1), global_offset=(0, 1))
    out = read(q, ob, o).reshape(n, n)
    np.testing.assert_array_equal(out[1:n - 1], x.reshape(n, n)[2:])
    np.testing.assert_array_equal(out[[0, n - 1]], 0)
    assert modes == ["nd"]


@pytest.mark.parametrize("ni,nj", [(30, 45), (21, 16)])
def test_convolution_2d_matches_numpy(tiny, modes, ni, nj):
    ctx, q = tiny
    rng = np.random.default_rng(ni)
    A = rng.random(ni * nj, dtype=np.float32)
    w = rng.random(9, dtype=np.float32)
    B = np.zeros(ni * nj, np.float32)
    prg = cl.Program(ctx, CONV).build()
    b = buf(ctx, B)
    prg.conv2d(q, (nj, ni), None, buf(ctx, A), buf(ctx, w), b, np.int32(ni), np.int32(nj))
    out = read(q, b, B).reshape(ni, nj)
    a2, ref = A.reshape(ni, nj), np.zeros((ni, nj), np.float32)
    acc = np.zeros((ni - 2, nj - 2), np.float32)
    for di in (-1, 0, 1):
        for dj in (-1, 0, 1):
            acc = acc + w[(di + 1) * 3 + dj + 1] * a2[1 + di:ni - 1 + di, 1 + dj:nj - 1 + dj]
    ref[1:-1, 1:-1] = acc
    np.testing.assert_allclose(out, ref, rtol=1e-6, atol=1e-6)
    assert modes == ["rows"]


def test_gemm_c_update_matches_numpy(tiny, modes):
    """C's read and write are contiguous; A's rows and B's columns keep their nd movement."""
    ctx, q = tiny
    ni, nj, nk = 20, 28, 9
    rng = np.random.default_rng(1)
    A = rng.random(ni * nk, dtype=np.float32)
    B = rng.random(nk * nj, dtype=np.float32)
    C = rng.random(ni * nj, dtype=np.float32)
    prg = cl.Program(ctx, GEMM).build()
    c = buf(ctx, C)
    prg.gemm(q, (nj, ni), None, buf(ctx, A), buf(ctx, B), c, np.float32(1.5), np.float32(0.5),
             np.int32(ni), np.int32(nj), np.int32(nk))
    out = read(q, c, C).reshape(ni, nj)
    ref = np.float32(1.5) * (A.reshape(ni, nk) @ B.reshape(nk, nj)) + np.float32(0.5) * C.reshape(ni, nj)
    np.testing.assert_allclose(out, ref, rtol=1e-5)
    assert modes == ["rows-res"]          # (A and B are small: resident in LM0 on top of the flat build)


def test_pitches_from_the_global_size_and_a_constant(tiny, modes):
    """d[i * get_global_size(0) + j] runs flat at any width; e[i * 24 + j] only when gx is 24."""
    ctx, q = tiny
    mean = np.arange(24, dtype=np.float32)
    prg = cl.Program(ctx, CENTRE).build()
    for gx, rows in ((24, 30), (16, 30)):
        d = np.ones(gx * rows, np.float32)
        e = np.zeros(24 * rows, np.float32)
        db, eb = buf(ctx, d), buf(ctx, e)
        prg.centre(q, (gx, rows), None, db, buf(ctx, mean), eb)
        np.testing.assert_array_equal(read(q, db, d).reshape(rows, gx), np.broadcast_to(1 - mean[:gx], (rows, gx)))
        ref = np.zeros((rows, 24), np.float32)
        ref[:, :gx] = 2 * mean[:gx]
        np.testing.assert_array_equal(read(q, eb, e).reshape(rows, 24), ref)
    assert modes == ["rows-noalias", "nd-noalias"]      # (d, mean and e apart: mean[j] read once)


@pytest.mark.parametrize("rows,cols", [(30, 40), (17, 29)])
def test_clamped_neighbours_are_two_flat_loads_chosen_per_lane(tiny, modes, rows, cols):
    """Rodinia hotspot's edges: LLVM writes r > 0 ? r - 1 : r as r + sext(r > 0); each such load
    is two shifted wave shares and a per-lane select, no gather."""
    ctx, q = tiny
    T = np.random.default_rng(rows).random(rows * cols, dtype=np.float32)
    o = np.zeros(rows * cols, np.float32)
    prg = cl.Program(ctx, CLAMP).build()
    ob = buf(ctx, o)
    prg.clamp4(q, (cols, rows), None, buf(ctx, T), ob, np.int32(rows), np.int32(cols))
    t = np.pad(T.reshape(rows, cols), 1, mode="edge")
    ref = (t[:-2, 1:-1] + np.float32(2) * t[2:, 1:-1]) + np.float32(4) * t[1:-1, :-2] + np.float32(8) * t[1:-1, 2:]
    np.testing.assert_array_equal(read(q, ob, o).reshape(rows, cols), ref)
    assert modes == ["rows"]


# the neighbour forms LLVM rewrites: f - n - 1 as f + ~n (an xor), and the window's clipped
# neighbour i >= 2 ? f - 2 n : f as f - (i >= 2 ? 2 n : 0) (a select between offsets)
REWRITTEN = """
__kernel void corners(__global const float *a, __global float *o, int n, int rows)
{
    int j = get_global_id(0);
    int i = get_global_id(1);
    int f = i * n + j;
    float up_left = (i > 0 && j > 0) ? a[(i > 0 && j > 0) ? f - n - 1 : f] : 0.0f;
    float m = a[f];
    m = fmax(m, a[i >= 2 ? f - 2 * n : f]);
    m = fmax(m, a[rows - 1 - i >= 2 ? f + 2 * n : f]);
    o[f] = up_left + 4.0f * m;
}
"""


@pytest.mark.parametrize("rows,cols", [(30, 40), (17, 29)])
def test_neighbours_llvm_rewrites_are_not_gathered(tiny, modes, tmp_path, rows, cols):
    """f - n - 1 (LLVM: f + ~n) and a choice between f - 2n and f (LLVM: f - select(c, 2n, 0))
    are shifted wave shares chosen per lane, as the plain forms of the LBM and Harris samples
    need; both used to be gathers (the whole buffer through every PE)."""
    ctx, q = tiny
    A = np.random.default_rng(rows).random(rows * cols, dtype=np.float32)
    o = np.zeros(rows * cols, np.float32)
    prg = cl.Program(ctx, REWRITTEN).build()
    ob = buf(ctx, o)
    ev = prg.corners(q, (cols, rows), None, buf(ctx, A), ob, np.int32(cols), np.int32(rows))
    a = A.reshape(rows, cols)
    ul = np.zeros_like(a)
    ul[1:, 1:] = a[:-1, :-1]
    m = a.copy()
    m[2:] = np.maximum(m[2:], a[:-2])
    m[:-2] = np.maximum(m[:-2], a[2:])
    np.testing.assert_array_equal(read(q, ob, o).reshape(rows, cols), ul + np.float32(4) * m)
    assert modes == ["rows"]
    assert ev.stats.summary()["dram_bytes"] < 8 * 4 * rows * cols       # a gather moves the buffer per wave
    report = mncc_stats(tmp_path / "k.cl", REWRITTEN, "--machine", "tiny", "--mode", "rows")
    assert "gathered" not in report, report


ROW0 = """
__kernel void ey(__global const float *fict, __global float *ey, __global const float *hz, int t, int nx, int ny)
{
    int j = get_global_id(0);
    int i = get_global_id(1);
    if (i < nx && j < ny) {
        if (i == 0)
            ey[j] = fict[t];
        else
            ey[i * ny + j] = ey[i * ny + j] - 0.5f * (hz[i * ny + j] - hz[(i - 1) * ny + j]);
    }
}

__kernel void row1(__global float *o, int n)
{
    int j = get_global_id(0);
    int i = get_global_id(1);
    if (i == 1)
        o[j] = 7.0f;
    else if (i > 1)
        o[i * n + j] = (float)i;
}
"""


@pytest.mark.parametrize("nx,ny", [(30, 40), (9, 70)])
def test_a_store_only_row_0_makes_is_contiguous(tiny, modes, nx, ny):
    """PolyBench fdtd-2d's ey update: ey[j] under i == 0 is the flat position there (no pitch to
    check), so it is a contiguous store like the others; a store under i == 1 is not (scattered)."""
    ctx, q = tiny
    rng = np.random.default_rng(nx)
    fict = np.arange(4, dtype=np.float32) * 0.25
    E, H = rng.random(nx * ny, dtype=np.float32), rng.random(nx * ny, dtype=np.float32)
    prg = cl.Program(ctx, ROW0).build()
    eb = buf(ctx, E)
    prg.ey(q, (ny, nx), None, buf(ctx, fict), eb, buf(ctx, H), np.int32(2), np.int32(nx), np.int32(ny))
    e, h = E.reshape(nx, ny), H.reshape(nx, ny)
    ref = np.concatenate([np.full((1, ny), fict[2]), e[1:] - np.float32(0.5) * (h[1:] - h[:-1])])
    np.testing.assert_array_equal(read(q, eb, E).reshape(nx, ny), ref)
    o = np.zeros(nx * ny, np.float32)
    ob = buf(ctx, o)
    prg.row1(q, (ny, nx), None, ob, np.int32(ny))
    ref = np.repeat(np.arange(nx, dtype=np.float32), ny).reshape(nx, ny)
    ref[0], ref[1] = 7, 0
    np.testing.assert_array_equal(read(q, ob, o).reshape(nx, ny), ref)
    assert modes == ["rows", "rows"]


def test_out_of_bounds_in_a_flat_launch_is_reported(tiny, modes):
    """x[(i + k) * n + j] leaves x in the last k rows: the sequencer cannot clear those waves,
    and the per-lane check reports a bad index (the first lane's that went out of bounds, as in a
    1-D launch: rows 38 and 39 read elements 1600..1679)."""
    ctx, q = tiny
    n = 40
    x = np.arange(n * n, dtype=np.float32)
    o = np.zeros(n * n, np.float32)
    prg = cl.Program(ctx, SHIFT).build()
    ob = buf(ctx, o)
    prg.shift(q, (n, n - 2), None, buf(ctx, x), ob, np.int32(n), np.int32(2))   # in bounds
    np.testing.assert_array_equal(read(q, ob, o).reshape(n, n)[:n - 2], x.reshape(n, n)[2:])
    with pytest.raises(cl.MemoryError, match=r"kernel 'shift' accessed out of bounds at line 6: index 16[0-7]\d of "
                                             r"the buffer passed as argument 0 \('x', 6400 bytes.* 80 work-item"):
        prg.shift(q, (n, n), None, buf(ctx, x), ob, np.int32(n), np.int32(2)).wait()
    assert modes == ["rows", "rows"]


def test_jacobi_2d_on_mncore2(modes):
    """200 x 200: two waves of mncore2, the second partial.  Each shifted load moves the whole wave's
    share (128 KiB), so DRAM bytes are a few times the compulsory 320 KB; the nd build gathered
    all of A for each of the five loads."""
    ctx = cl.Context([cl.get_device("emulator", "mncore2")])
    q = cl.CommandQueue(ctx)
    out, ref, ev = jacobi(ctx, q, 200)
    np.testing.assert_array_equal(out, ref)
    assert modes == ["rows"]
    assert ev.stats.summary()["dram_bytes"] < 2.5e6


@pytest.mark.parametrize("n, most", [(64, 130), (256, 180)])
def test_a_rows_wave_is_its_flat_positions(modes, n, most):
    """A rows wave is W x 1 x 1: the slot is the flat position, with no divisions by the wave's
    width in the prologue (183 and 224 steps when it split the slot like an N-D wave's)."""
    ctx = cl.Context([cl.get_device("emulator", "mncore2")])
    q = cl.CommandQueue(ctx)
    prg = cl.Program(ctx, """__kernel void inc(__global const float *in, __global float *out, int n)
    {
        int j = get_global_id(0), i = get_global_id(1);
        out[i * n + j] = in[i * n + j] + 1.0f;
    }""").build()
    x = np.arange(n * n, dtype=np.float32)
    ob = buf(ctx, np.zeros_like(x))
    ev = prg.inc(q, (n, n), None, buf(ctx, x), ob, np.int32(n))
    np.testing.assert_array_equal(read(q, ob, x), x + 1)
    assert modes[0].startswith("rows") and ev.stats.steps <= most, (modes, ev.stats.steps)


def test_mncl_cc_prints_the_plan_of_a_rows_build(tmp_path):
    err = mncc_stats(tmp_path / "jacobi.cl", JACOBI, "--machine", "tiny", "--mode", "rows")
    assert "kernel 'jacobi_step' (rows): memory accesses" in err
    assert "store B (global, 4 B): unit; contiguous store (row-major: pitch the parameter 'n' == " \
           "global size 0)" in err
    assert "sliding window of the wave's rows and halo, one DRAM read per wave (windowplan.py) (row-major" \
        in err                       # (the window plan: tests/test_window_plan.py)
    assert "gather" not in err
    err = mncc_stats(tmp_path / "row0.cl", ROW0, "--machine", "tiny", "--mode", "rows")
    assert ":8: store ey (global, 4 B): unit; contiguous store (row-major: pitch none: row 0 only)" in err
    assert ":19: store o (global, 4 B): unit; contiguous" not in err


@pytest.mark.parametrize("gs,off,barrier,n,pitches,modes_built,want", [
    ((64, 64), (0, 0, 0), False, 64, ["p1"], ("rows", "nd"), "rows"),
    ((64, 64), (0, 0, 0), False, 63, ["p1"], ("rows", "nd"), "nd"),         # the pitch is not the row
    ((64, 64), (0, 0, 0), False, 64, ["p1", 64, "gx"], ("rows", "nd"), "rows"),
    ((64, 64), (0, 0, 0), False, 64, ["p1", 32], ("rows", "nd"), "nd"),
    ((64, 64), (0, 0, 0), False, 64, [], ("rows", "nd"), "nd"),              # nothing to gain
    ((64, 64), (0, 0, 0), False, 64, ["p1"], ("nd",), "nd"),                 # rows does not compile
    ((64, 64), (0, 0, 0), False, 64, ["p1"], ("rows-n2", "nd"), "rows-n2"),  # only on a wave narrowed twice
    ((64, 64), (0, 0, 0), False, 64, ["p1"], ("rows-n4", "nd"), "rows-n4"),
    ((64, 64), (0, 1, 0), False, 64, ["p1"], ("rows", "nd"), "nd"),          # a global offset
    ((64, 64), (0, 0, 0), True, 64, ["p1"], ("rows", "nd"), "nd"),           # barriers: whole groups
    ((64, 64, 2), (0, 0, 0), False, 64, ["p1"], ("rows", "nd"), "nd"),       # 3-D
])
def test_choose_variant_takes_rows_only_where_the_pitches_are_the_row(gs, off, barrier, n, pitches, modes_built,
                                                                       want):
    from dataclasses import dataclass, field

    from emulator.machine import load_machine
    from mncl.backend import Launch
    from translator import CompileError
    from translator.backend import Layout
    from translator.module import Diagnostic, KernelInfo, ParamInfo

    @dataclass
    class Binary:
        mode: str
        pitches: list = field(default_factory=list)
        replicated: list = field(default_factory=list)
        snapshots: list = field(default_factory=list)
        resident: list = field(default_factory=list)
        resident_one: list = field(default_factory=list)
        resident_bytes: int = 0

    def build(mode):
        if mode not in modes_built:
            raise CompileError([Diagnostic("error", "refused (test)", "k.cl", 1, 1)])
        return Binary(mode, pitches if mode.startswith("rows") else [])

    params = (ParamInfo("a", "global", "float *", "float32", 4), ParamInfo("n", "scalar", "int", "int32", 4))
    info = KernelInfo("k", params, "k__wg", uses_barrier=barrier)
    lay = Layout.of(load_machine("mncore2"))
    gs3 = tuple(gs) + (1,) * (3 - len(gs))
    kb, _, shape = abi.choose_variant(lay, info, Launch(len(gs), gs3, (1, 1, 1), off),
                                      [type("B", (), {"nbytes": 4 << 20, "dram": 0})(),
                                       np.int32(n).tobytes()], build, set())
    assert kb.mode == want
    assert (shape[:3] == (lay.for_mode(want).wave, 1, 1)) == want.startswith("rows")
