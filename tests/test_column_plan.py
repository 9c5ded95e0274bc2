"""The column plan (translator/backend/colplan.py): loads that walk a read-only buffer by a pitch per
pass of a loop (`A[k*n + i]`) are multi-buffered against the loop's work, and a launch narrower
than its wave moves only its work-items' part of each share.

Results against numpy on `tiny` and `mncore2` (the emulator runs strict: a race between a transfer
in flight and the code that reads or overwrites its staging faults), for each shape the plan
rewrites: even and odd pitches (an odd shift loads two long words and joins them), a loop that
stores in every pass, trip counts 0 and 1, sizes that fill no wave, a loop inside a loop, two
column loads in one loop.  Then the plan's effect: cycles per pass of a full-wave column loop and
DRAM bytes of a narrow launch, both bounds that today's main missed (779 cycles per pass; 8x the
compulsory bytes), and `mncl-cc --stats` naming the plan."""
from __future__ import annotations

import numpy as np
import pytest

from emulator_harness import device_env, launch, mncc_stats
from translator.backend import colplan

GEMV_T = r"""
__kernel void gemv_t(__global const float *Wt, __global const float *x, __global float *y, int rows, int cols)
{
    int r = get_global_id(0);
    if (r < rows) {
        float s = 0.0f;
        for (int k = 0; k < cols; k++)
            s += Wt[k * rows + r] * x[k];
        y[r] = s;
    }
}
"""

# a store in every pass (the loads of y and A keep their order with the store in flight)
RMW = r"""
__kernel void rmw(__global const float *A, __global const float *x, __global float *y, int n, int m)
{
    int i = get_global_id(0);
    if (i < n)
        for (int j = 0; j < m; j++)
            y[i] = y[i] + A[j * n + i] * x[j];
}
"""

# two column loads of different buffers, one at an odd constant shift; a loop inside a loop
TWO = r"""
__kernel void two(__global const float *A, __global const float *B, __global float *y, int n, int m, int reps)
{
    int i = get_global_id(0);
    if (i < n) {
        float s = 0.0f;
        for (int r = 0; r < reps; r++)
            for (int k = 0; k < m; k++)
                s += A[k * n + i] * (float)(r + 1) - B[k * (n + 1) + i + 1];
        y[i] = s;
    }
}
"""


@pytest.fixture(scope="module")
def tiny():
    return device_env("tiny")


@pytest.fixture(scope="module")
def mncore2():
    return device_env("mncore2", new=True)


def small_ints(rng, *shape, lo=-2):
    """Integers in [lo, 2]: every fp32 sum and product below is exact, so results compare exactly."""
    return rng.integers(lo, 3, shape).astype(np.float32)


def gemv_t(env, rows, cols, lo=-2, seed=0):
    rng = np.random.default_rng(seed)
    W, x = small_ints(rng, max(cols, 1), rows, lo=lo), small_ints(rng, max(cols, 1), lo=lo)
    (_, _, y), ev = launch(env, GEMV_T, "gemv_t", rows, W, x, np.full(rows, 7, np.float32),
                           np.int32(rows), np.int32(cols))
    ref = (W[:cols].astype(np.float64).T @ x[:cols]) if cols > 0 else np.zeros(rows)
    np.testing.assert_array_equal(y, ref.astype(np.float32))
    return ev


@pytest.mark.parametrize("rows, cols", [(64, 9), (100, 17), (127, 8), (256, 5), (33, 1), (50, 0), (1, 3)])
def test_gemv_t_on_tiny(tiny, rows, cols):
    """Even and odd pitches (rows), a launch that fills no wave, trip counts 1 and 0."""
    gemv_t(tiny, rows, cols)


@pytest.mark.parametrize("rows, cols", [(4096, 13), (4095, 6), (3000, 5), (1000, 7), (333, 4), (100, 2),
                                        (32768 + 77, 3)])
def test_gemv_t_on_mncore2(mncore2, rows, cols):
    """Narrowed waves (packed loops, and every part of a narrow launch's share: 100 .. 4096
    work-items), full waves, a last wave of 77 work-items, odd pitches."""
    gemv_t(mncore2, rows, cols)


@pytest.mark.parametrize("n, m", [(64, 9), (77, 6), (200, 1), (31, 0)])
def test_a_loop_that_stores(tiny, n, m):
    rng = np.random.default_rng(n)
    A, x, y = small_ints(rng, max(m, 1), n), small_ints(rng, max(m, 1)), small_ints(rng, n)
    (_, _, out), _ = launch(tiny, RMW, "rmw", n, A, x, y.copy(), np.int32(n), np.int32(m))
    ref = y.astype(np.float64) + (A[:m].astype(np.float64).T @ x[:m] if m else 0)
    np.testing.assert_array_equal(out, ref.astype(np.float32))


@pytest.mark.parametrize("env, n", [("tiny", 64), ("tiny", 45), ("mncore2", 700)])
def test_two_column_loads_and_a_loop_inside_a_loop(request, env, n):
    rng = np.random.default_rng(n)
    m, reps = 5, 3
    A, B = small_ints(rng, m, n), small_ints(rng, m * (n + 1) + 1)
    (_, _, y), _ = launch(request.getfixturevalue(env), TWO, "two", n, A, B, np.zeros(n, np.float32),
                          np.int32(n), np.int32(m), np.int32(reps))
    Bk = np.array([[B[k * (n + 1) + i + 1] for i in range(n)] for k in range(m)], np.float64)
    ref = sum(((r + 1) * A.astype(np.float64) - Bk).sum(axis=0) for r in range(reps))
    np.testing.assert_array_equal(y, ref.astype(np.float32))


def test_same_results_with_the_plan_off(tiny, monkeypatch):
    """The pipelined loop computes what the per-pass loop computes (zeros among the results: the
    exact rerun of the loop, pipelined as well)."""
    rng = np.random.default_rng(5)
    W, x = small_ints(rng, 11, 96), small_ints(rng, 11)
    args = (W, x, np.zeros(96, np.float32), np.int32(96), np.int32(11))
    on = launch(tiny, GEMV_T, "gemv_t", 96, *args)[0][2]
    monkeypatch.setattr(colplan, "ENABLED", False)
    src = GEMV_T.replace("gemv_t", "gemv_t_off")           # (another program: not the cached build)
    off = launch(tiny, src, "gemv_t_off", 96, *args)[0][2]
    np.testing.assert_array_equal(on, off)


def test_full_wave_column_loop_overlaps_its_transfers(mncore2):
    """32768 rows (one full wave on mncore2), positive data (no zero result, so no exact rerun):
    each pass's 128 KiB takes 256 cycles of the modelled DRAM bandwidth; waiting for every pass's
    MV cost 779 cycles a pass on main, multi-buffered it is about 310."""
    cols = 32
    ev = gemv_t(mncore2, 32768, cols, lo=1)
    assert ev.stats.cycles / cols < 450


def test_narrow_launch_moves_its_own_share(mncore2):
    """512 work-items in a wave of 4096 (narrowed 8 times): each pass moves the 2 KiB they read, not
    the wave's 16 KiB (8x the compulsory bytes on main)."""
    rows, cols = 512, 96
    ev = gemv_t(mncore2, rows, cols, lo=1)
    compulsory = 4 * (rows * cols + rows + cols)
    assert ev.stats.dram_bytes < 1.5 * compulsory


def test_stats_name_the_plan(tmp_path):
    src = tmp_path / "gemv_t.cl"
    err = mncc_stats(src, GEMV_T)
    assert f"{src}:8: load Wt (global, 4 B): column in the loop at line 8; column: double-buffered shifted load" \
        in err, err


SAXPY = r"""
__kernel void saxpy(__global const float *x, __global float *y, float a, int n)
{
    int i = get_global_id(0);
    if (i < n)
        y[i] = a * x[i] + y[i];
}
"""


@pytest.mark.parametrize("n", [100, 1000, 3000, 9000])
def test_narrow_shares_of_loads_outside_loops(mncore2, n):
    """A read-only buffer's wave share moved by the wave's first loads, issued a wave early
    (prefetch.py, also before the wave loop) and narrowed to the launch's part."""
    rng = np.random.default_rng(n)
    x, y = small_ints(rng, n), small_ints(rng, n)
    (_, out), _ = launch(mncore2, SAXPY, "saxpy", n, x, y.copy(), np.float32(2), np.int32(n))
    np.testing.assert_array_equal(out, (2 * x.astype(np.float64) + y).astype(np.float32))


def test_many_column_loads_share_the_l2bm_evenly():
    """covariance's symmetric product: two column loads whose loop bounds checks version the loop
    (four staged loads) in a full-wave build.  Buffer sets of one depth for all of them fit in
    L2BM where sets made one load at a time (the first ones four deep) ran out at the last and
    left every load waiting for its MV in every pass."""
    from pathlib import Path
    from translator import compile_opencl
    from translator.backend import compile_kernel
    import emulator.machine
    src = (Path(__file__).parent.parent / "benchmarks" / "real_kernels" / "covariance.cl").read_text()
    kb = compile_kernel(compile_opencl(src, spmd=True), "cov_symm", emulator.machine.load_machine("mncore2"))
    plans = [p[3] for p in kb.plans if p[1] == "data"]
    assert plans == ["column: double-buffered shifted load"], plans


COLMUL = r"""
__kernel void colmul(__global float *out, __global const float *A, __global const float *B, int n, int c)
{
    int j = get_global_id(0);
    float s = 0.0f;
    for (int i = 0; i < n; i++)
        s += A[i * n + c] * B[i * n + j];       /* A's column c: one element for every lane a pass */
    out[j] = s;
}
"""


@pytest.mark.parametrize("env, n, c", [("tiny", 64, 5), ("tiny", 33, 32), ("mncore2", 64, 0), ("mncore2", 300, 299)])
def test_a_column_every_lane_reads_is_pipelined(request, env, n, c):
    """A[i * n + c] moves a new block each pass (Memory.walks): the coming passes' blocks move while
    this one computes.  On main each pass fetched its block into a table and waited out the MV:
    31,332 cycles (tiny) and 37,080 (mncore2) for n = 64; now about 10,000."""
    rng = np.random.default_rng(n)
    A, B = small_ints(rng, n, n), small_ints(rng, n, n)
    (out, _, _), ev = launch(request.getfixturevalue(env), COLMUL, "colmul", n, np.zeros(n, np.float32), A, B,
                             np.int32(n), np.int32(c))
    np.testing.assert_array_equal(out, (A[:, c].astype(np.float64) @ B).astype(np.float32))
    if n == 64:
        assert ev.stats.cycles < 15000, ev.stats.cycles


STRIDED = r"""
__kernel void strided(__global float *o, __global const float *x, __global int *hits, int step, int n)
{
    int i = get_global_id(0);
    float a = 0.0f;
    for (int j = 0; j < n; j++) {
        hits[(i * 7 + j) % 61 + 61 * i] = j;  /* a scatter in the same pass */
        a += x[j * step] * (float)(i + 1);    /* the sequencer picks the table (step 1) or the walk */
    }
    o[i] = a;
}
"""


@pytest.mark.parametrize("step", [1, 3, 64, 100])
def test_a_stride_of_the_launch_picks_table_or_walk(tiny, step):
    n, m = 70, 24
    x = (np.arange(n * step + 1) % 5 - 2).astype(np.float32)
    (o, _, hits), _ = launch(tiny, STRIDED, "strided", m, np.zeros(m, np.float32), x, np.full(61 * m, -1, np.int32),
                             np.int32(step), np.int32(n))
    i = np.arange(m)
    np.testing.assert_array_equal(o, (x[:n * step:step].sum() * (i + 1)).astype(np.float32))
    want = np.full(61 * m, -1, np.int32)
    for j in range(n):
        want[(i * 7 + j) % 61 + 61 * i] = j
    np.testing.assert_array_equal(hits, want)


# sixteen column loads after the loop is unrolled, each hoisted with a staging area of its own
UNROLLED = r"""
__kernel void mv(__global const float *A, __global const float *x, __global float *y, int rows)
{
    int i = get_global_id(0);
    if (i < rows) {
        float s = 0.0f;
        for (int k = 0; k < 16; k++)
            s = s * 0.5f + A[k * 103 + i + 1] * x[k + 2];
        y[i] = s;
    }
}
"""


@pytest.mark.parametrize("rows", [100, 5000])
def test_an_unrolled_loop_of_column_loads_leaves_l2bm_for_the_shared_staging(rows):
    """The loads' own staging areas once took all of mncore2's L2BM, and the "1d" build (which
    Program.build makes) failed: "the kernel's transfers need 32896 long words of L2BM"."""
    rng = np.random.default_rng(5)
    P = max(103, rows)
    A = rng.integers(-4, 5, 17 * P + rows + 8).astype(np.float32)
    x = rng.integers(-3, 4, 20).astype(np.float32)
    (_, _, y), _ = launch(device_env("mncore2"), UNROLLED.replace("103", str(P)), "mv", rows, A, x,
                          np.zeros(rows, np.float32), np.int32(rows))
    want = np.zeros(rows, np.float32)
    for k in range(16):
        want = want * np.float32(0.5) + A[k * P + np.arange(rows) + 1] * x[k + 2]
    np.testing.assert_array_equal(y, want)
