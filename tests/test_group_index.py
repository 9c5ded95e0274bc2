"""`get_group_id(0) * get_local_size(0) + get_local_id(0)`, the usual way OpenCL code spells the
global id, is the global id in a 1-D build (no global offset): a contiguous load and store, not a
gather and a scatter of the whole buffer (IntSel.global_id_sum).  Checked against numpy with int
and size_t arithmetic, either order, several waves and groups, and with a global offset, where
the sum is not the global id and the general path runs."""
from __future__ import annotations

import numpy as np
import pytest

import mncl as cl
from emulator_harness import buf, device_env

SRC = """
__kernel void twice(__global const float *a, __global float *b)
{
    int i = get_group_id(0) * get_local_size(0) + get_local_id(0);
    b[i] = a[i] * 2.0f + (float)get_local_id(0);
}

__kernel void wide(__global const float *a, __global float *b)
{
    size_t i = get_local_id(0) + get_local_size(0) * get_group_id(0);
    b[i] = a[i] - 1.0f;
}

__kernel void cut(__global const float *a, __global float *b)
{
    size_t g = get_group_id(0), l = get_local_id(0);
    int lo = (int)(l << 32), hi = (int)(g << 38);          /* both 0 as ints */
    b[get_global_id(0)] = a[(long)lo + (long)hi + 1];
}

#define BLOCK 64
__kernel void blocked(__global const float *a, __global float *b, int n)
{
    int t = get_local_id(0);
    int i = get_group_id(0) * BLOCK + t;
    int j = (get_group_id(0) << 6) + t;
    if (i < n)
        b[i] = a[j] + 0.5f;
}

#define TX 16
#define TY 4
__kernel void blocked2d(__global const float *a, __global float *b, int w)
{
    int r = get_group_id(1) * TY + get_local_id(1);
    int c = get_group_id(0) * TX + get_local_id(0);
    b[r * w + c] = a[r * w + c] * 2.0f + a[r * w + (c > 0 ? c - 1 : c)];
}

__kernel void blocked_mv(__global const float *W, __global const float *x, __global float *y, int K)
{
    int r = get_group_id(0) * BLOCK + get_local_id(0);
    float s = 0.0f;
    for (int k = 0; k < K; k++)
        s += W[r * K + k] * x[k];
    y[r] = s;
}

__kernel void tiles(__global const float *A, __global float *C, int N)
{
    int tx = get_local_id(0);
    int c = get_group_id(0) * TX + tx, r = get_group_id(1) * TY + get_local_id(1);
    float acc = 0.0f;
    for (int t = 0; t < N / 16; t++)
        acc += A[r * N + t * 16 + tx];
    C[r * N + c] = acc;            /* LLVM: r * N through a phi of two copies (GVN's PRE) */
}

__kernel void scale2d(__global const float *a, __global float *b, int w)
{
    int r = get_group_id(1) * get_local_size(1) + get_local_id(1);
    int c = get_group_id(0) * get_local_size(0) + get_local_id(0);
    b[r * w + c] = a[r * w + c] * 2.0f + a[r * w + (c > 0 ? c - 1 : c)];
}

__kernel void mv(__global const float *W, __global const float *x, __global float *y, int K)
{
    int r = get_group_id(0) * get_local_size(0) + get_local_id(0);
    float s = 0.0f;
    for (int k = 0; k < K; k++)
        s += W[r * K + k] * x[k];
    y[r] = s;
}
"""


def run(machine, name, gs, ls, offset=None):
    ctx, q = device_env(machine, new=True)
    prg = cl.Program(ctx, SRC).build()
    n = gs + (offset or 0)
    a = ((np.arange(n) * 5) % 17 - 8).astype(np.float32)
    ab, bb = buf(ctx, a), buf(ctx, np.full(n, -7, np.float32))
    kw = {"global_offset": (offset,)} if offset else {}
    ev = getattr(prg, name)(q, (gs,), (ls,), ab, bb, **kw)
    ev.wait()
    out = np.empty(n, np.float32)
    cl.enqueue_copy(q, out, bb)
    return a, out, ev


@pytest.mark.parametrize("machine, gs, ls", [("tiny", 96, 32), ("tiny", 1000, 8), ("mncore2", 12288, 128)])
def test_the_group_sum_is_the_global_id(machine, gs, ls):
    a, out, ev = run(machine, "twice", gs, ls)
    np.testing.assert_array_equal(out, a * 2 + np.arange(gs) % ls)
    a, out, _ = run(machine, "wide", gs, ls)
    np.testing.assert_array_equal(out, a - 1)


def test_contiguous_not_gathered():
    # a gather of `a` and a scatter of `b` over 8 waves of tiny: 10,895 steps; contiguous: 613
    _, _, ev = run("tiny", "twice", 2048, 16)
    assert ev.stats.steps < 2000, ev.stats.steps


def test_with_a_global_offset_the_sum_is_not_the_global_id():
    """With an offset the launch takes another build, where the sum is computed as written:
    work-item g of the launch writes b[g - offset]."""
    gs, ls, off = 96, 32, 64
    a, out, _ = run("tiny", "twice", gs, ls, offset=off)
    want = np.full(gs + off, -7, np.float32)
    want[:gs] = a[:gs] * 2 + np.arange(gs) % ls
    np.testing.assert_array_equal(out, want)


def run2d(name, a, gs, ls, *args):
    """Kernel `name` over gs in groups of ls on tiny, from matrix a into a zeroed one: (it, event)."""
    ctx, q = device_env("tiny", new=True)
    prg = cl.Program(ctx, SRC).build()
    ab, bb = buf(ctx, a), buf(ctx, np.zeros_like(a))
    ev = getattr(prg, name)(q, gs, ls, ab, bb, *args)
    out = np.empty_like(a)
    cl.enqueue_copy(q, out, bb)
    return out, ev


def test_a_2d_launch_spelled_with_groups_takes_the_row_major_paths():
    """In a "rows" build (a 2-D launch run flat, no offset) both sums are the global ids, so the
    loads are a sliding window and the store contiguous (the access analysis, PointerForms);
    they were gathers and a scatter of the whole matrix."""
    h, w = 48, 64
    a = ((np.arange(h * w) * 3) % 11 - 5).astype(np.float32).reshape(h, w)
    out, ev = run2d("scale2d", a, (w, h), (16, 4), np.int32(w))
    left = np.concatenate([a[:, :1], a[:, :-1]], axis=1)
    np.testing.assert_array_equal(out, a * 2 + left)
    # whole-matrix gathers and a scatter: 296,448 bytes, 26,008 steps; now 32,256 bytes, 1,983 steps
    assert ev.stats.dram_bytes < 8 * a.nbytes, ev.stats.dram_bytes


def test_a_row_per_work_item_spelled_with_groups_takes_the_row_plan():
    rows, k = 256, 96
    ctx, q = device_env("tiny", new=True)
    prg = cl.Program(ctx, SRC).build()
    W = ((np.arange(rows * k) * 7) % 5 - 2).astype(np.float32).reshape(rows, k)
    x = (np.arange(k) % 3 - 1).astype(np.float32)
    bufs = [buf(ctx, W), buf(ctx, x), buf(ctx, np.zeros(rows, np.float32))]
    ev = prg.mv(q, (rows,), (32,), *bufs, np.int32(k))
    y = np.empty(rows, np.float32)
    cl.enqueue_copy(q, y, bufs[2])
    np.testing.assert_array_equal(y, W @ x)
    # W gathered in every pass: 9,444,352 bytes, 205,330 steps; the row plan: 138,240 bytes, 2,875 steps
    assert ev.stats.dram_bytes < 8 * W.nbytes, ev.stats.dram_bytes


@pytest.mark.parametrize("machine", ["tiny", "mncore2"])
def test_a_constant_block_is_the_global_id_when_the_launch_says_so(machine):
    """`get_group_id(0) * BLOCK + tid` is the global id only when the local size is BLOCK: the 1-D
    build assumes it under a launch test; a launch with another local size runs the "nd" build,
    where group g's work-items write b[64 g .. 64 g + ls)."""
    gs, n = 4096, 4000
    for ls, steps_below in ((64, 2500), (32, None)):
        ctx, q = device_env(machine, new=True)
        prg = cl.Program(ctx, SRC).build()
        a = ((np.arange(gs) * 3) % 7 - 3).astype(np.float32)
        ab, bb = buf(ctx, a), buf(ctx, np.full(gs, -1, np.float32))
        ev = prg.blocked(q, (gs,), (ls,), ab, bb, np.int32(n))
        out = np.empty(gs, np.float32)
        cl.enqueue_copy(q, out, bb)
        want = np.full(gs, -1, np.float32)
        i = (np.arange(gs) // ls) * 64 + np.arange(gs) % ls
        i = i[i < n]
        want[i] = a[i] + 0.5
        np.testing.assert_array_equal(out, want, err_msg=f"local size {ls}")
        if steps_below and machine == "tiny":
            # the sums computed as written, `a` gathered and `b` scattered: 40,866 steps; now 316
            assert ev.stats.steps < steps_below, ev.stats.steps


def test_constant_blocks_in_the_plans():
    """The access forms take `grp * BLOCK + lid` for the global id too, under the same launch
    tests (access.block_tests): a 2-D kernel with constant tiles takes the rows paths and a row
    per work-item the row plan when the local size is the block; with another it runs "nd",
    where the sums are what they say."""
    ctx, q = device_env("tiny", new=True)
    prg = cl.Program(ctx, SRC).build()
    h, w = 48, 64
    a = ((np.arange(h * w) * 3) % 11 - 5).astype(np.float32).reshape(h, w)
    left = np.concatenate([a[:, :1], a[:, :-1]], axis=1)
    for ls in ((16, 4), (8, 4)):
        ab, bb = buf(ctx, a), buf(ctx, np.full((h, w), -1, np.float32))
        ev = prg.blocked2d(q, (w if ls[0] == 16 else w // 2, h), ls, ab, bb, np.int32(w))
        out = np.empty((h, w), np.float32)
        cl.enqueue_copy(q, out, bb)
        if ls == (16, 4):
            np.testing.assert_array_equal(out, a * 2 + left)
            # whole-matrix gathers and a scatter: 296,448 bytes; the rows paths: 32,256
            assert ev.stats.dram_bytes < 8 * a.nbytes, ev.stats.dram_bytes
        else:                   # half the columns: group (gx, gy) covers columns 16 gx .. 16 gx + 7
            c = np.arange(w // 2)
            cols = (c // 8) * 16 + c % 8
            want = np.full((h, w), -1, np.float32)
            want[:, cols] = (a * 2 + left)[:, cols]
            np.testing.assert_array_equal(out, want)
    rows, k = 256, 96
    W = ((np.arange(rows * k) * 7) % 5 - 2).astype(np.float32).reshape(rows, k)
    x = (np.arange(k) % 3 - 1).astype(np.float32)
    for ls in (64, 32):
        bufs = [buf(ctx, W), buf(ctx, x), buf(ctx, np.full(rows, -1, np.float32))]
        n = rows if ls == 64 else rows // 2        # (ls 32: group g covers rows 64 g .. 64 g + 31)
        ev = prg.blocked_mv(q, (n,), (ls,), *bufs, np.int32(k))
        y = np.empty(rows, np.float32)
        cl.enqueue_copy(q, y, bufs[2])
        r = (np.arange(n) // ls) * 64 + np.arange(n) % ls
        want = np.full(rows, -1, np.float32)
        want[r] = (W @ x)[r]
        np.testing.assert_array_equal(y, want, err_msg=f"local size {ls}")
        if ls == 64:
            # W gathered in every pass: 9,444,352 bytes; the row plan: 138,240
            assert ev.stats.dram_bytes < 8 * W.nbytes, ev.stats.dram_bytes


def test_a_join_of_two_copies_of_one_index():
    """GVN computes `r * N` on both edges into the loop's exit and joins them with a phi; one form
    on every edge is the join's (access.py), so the store is contiguous in the rows build, not a
    scatter of the whole matrix."""
    h, n = 48, 64
    A = ((np.arange(h * n) * 3) % 11 - 5).astype(np.float32).reshape(h, n)
    out, ev = run2d("tiles", A, (n, h), (16, 4), np.int32(n))
    c = np.arange(n)
    want = A.reshape(h, n // 16, 16).sum(axis=1)[:, c % 16]
    np.testing.assert_array_equal(out, want)
    # the store scattered: 28,875 steps; contiguous: 8,140
    assert ev.stats.steps < 15000, ev.stats.steps


def test_a_truncated_sum_is_not_the_global_id():
    """(int)(lid << 32) and (int)(grp << 38) are 0: their sum is no multiple of the global id."""
    ctx, q = device_env("tiny", new=True)
    prg = cl.Program(ctx, SRC).build()
    a = np.arange(256, dtype=np.float32)
    ab, bb = buf(ctx, a), buf(ctx, np.zeros(256, np.float32))
    prg.cut(q, (256,), (16,), ab, bb)
    out = np.empty(256, np.float32)
    cl.enqueue_copy(q, out, bb)
    np.testing.assert_array_equal(out, np.full(256, 1, np.float32))
