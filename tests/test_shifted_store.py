"""`out[gid + u] = v` with u uniform (MNACC's loops from 1 write `b[1 + gid]`): the wave's share of
a copy the runtime keeps shifted by u (RowStore.shifted: a row store of one pass and pitch 1),
not a scatter over the wave's span.  Checked against numpy with constant, negative and argument
shifts, partial waves, lanes out of bounds (still reported), a loop, and the cases that keep the
scatter (the buffer read too, or passed twice)."""
from __future__ import annotations

import numpy as np
import pytest

import mncl as cl
from emulator_harness import buf, device_env, launch, mncc_stats

SRC = """
__kernel void stencil(__global const float *a, __global float *b, int n)
{
    int i = 1 + (int)get_global_id(0);
    if (i < n - 1)
        b[i] = a[i - 1] + 2.0f * a[i] + a[i + 1];
}

__kernel void moved(__global const float *a, __global float *b, int off)
{
    int i = get_global_id(0);
    b[i + off] = a[i] * 3.0f;
}

__kernel void back(__global const float *a, __global float *b)
{
    int i = get_global_id(0);
    if (i >= 2)
        b[i - 2] = a[i];
}

__kernel void passes(__global const float *a, __global float *b, int n)
{
    int i = get_global_id(0);
    for (int t = 0; t < n; t++)
        b[i + 3] = a[i] + (float)t;
}

__kernel void guarded(__global const float *a, __global float *b, int off, int n)
{
    int i = get_global_id(0);
    if (i < n)
        b[i + off] = a[i] * 3.0f;       /* not every lane: the copy's share is read first */
}

__kernel void inplace(__global float *b)
{
    int i = get_global_id(0);
    b[i + 1] = b[i] + 1.0f;             /* read before the store: the copy; reads see launch-start values */
}

__kernel void scale_row(__global float *A, int k, int n)
{
    int j = get_global_id(0);
    if (j > k && j < n)
        A[k * n + j] = A[k * n + j] / A[k * n + k];     /* lu's: loads of the buffer, then the store */
}

__kernel void reread(__global float *b, __global float *c, int off, int m)
{
    int i = get_global_id(0);
    b[i + off] = (float)i;
    c[i] = b[i + m] * 2.0f;             /* a load after the store (its own element when m == off): no copy */
}
"""


def run(machine, name, gs, *args):
    return launch(device_env(machine, new=True), SRC, name, gs, *args)


@pytest.mark.parametrize("machine, n", [("tiny", 700), ("tiny", 2000), ("mncore2", 100000)])
def test_a_stencil_from_one(machine, n):
    a = ((np.arange(n) * 7) % 11 - 5).astype(np.float32)
    (_, b), ev = run(machine, "stencil", n - 2, a, np.full(n, -1, np.float32), np.int32(n))
    want = np.full(n, -1, np.float32)
    want[1:-1] = a[:-2] + 2 * a[1:-1] + a[2:]
    np.testing.assert_array_equal(b, want)
    if machine == "mncore2":
        # scattered over the wave's span: 27,849 steps (100,000 items); through the shifted copy: 480
        assert ev.stats.steps < 2000, ev.stats.steps


@pytest.mark.parametrize("off", [0, 5, 64, 513])
def test_an_argument_shift(off):
    gs = 1000
    a = np.arange(gs, dtype=np.float32)
    (_, b), _ = run("tiny", "moved", gs, a, np.full(gs + off, -1, np.float32), np.int32(off))
    want = np.full(gs + off, -1, np.float32)
    want[off:] = a * 3
    np.testing.assert_array_equal(b, want)


def test_a_negative_shift_and_a_loop():
    gs = 600
    a = np.arange(gs, dtype=np.float32)
    (_, b), _ = run("tiny", "back", gs, a, np.full(gs, -1, np.float32))
    want = np.full(gs, -1, np.float32)
    want[:gs - 2] = a[2:]
    np.testing.assert_array_equal(b, want)
    (_, b), _ = run("tiny", "passes", gs, a, np.zeros(gs + 3, np.float32), np.int32(4))
    np.testing.assert_array_equal(b[3:], a + 3)
    assert not b[:3].any()


def test_out_of_bounds_is_reported():
    gs = 300
    a = np.arange(gs, dtype=np.float32)
    ctx, q = device_env("tiny", new=True)
    prg = cl.Program(ctx, SRC).build()
    ab, bb = buf(ctx, a), buf(ctx, np.zeros(gs, np.float32))
    with pytest.raises(cl.MemoryError, match=r"kernel 'moved' accessed out of bounds at line 12: index 300 of "):
        prg.moved(q, (gs,), None, ab, bb, np.int32(1)).wait()
    b = np.empty(gs, np.float32)
    cl.enqueue_copy(q, b, bb)
    np.testing.assert_array_equal(b[1:], a[:-1] * 3)       # the others' writes landed


def test_the_scatter_stays_where_the_copy_cannot_serve():
    gs = 500
    b0 = np.arange(gs + 1, dtype=np.float32)
    (b,), _ = run("tiny", "inplace", gs, b0.copy())
    assert b[0] == 0
    # lanes run as one wave here: each reads b[i] before any stores, so b[i + 1] = b0[i] + 1
    np.testing.assert_array_equal(b[1:], b0[:-1] + 1)
    ctx, q = device_env("tiny", new=True)
    prg = cl.Program(ctx, SRC).build()
    shared = buf(ctx, np.arange(gs + 7, dtype=np.float32))
    prg.moved(q, (gs,), None, shared, shared, np.int32(7))     # the buffer passed twice: scattered
    out = np.empty(gs + 7, np.float32)
    cl.enqueue_copy(q, out, shared)
    np.testing.assert_array_equal(out[:7], np.arange(7))
    np.testing.assert_array_equal(out[7:], np.arange(gs, dtype=np.float32) * 3)


@pytest.mark.parametrize("machine", ["tiny", "mncore2"])
def test_a_guarded_store_to_a_buffer_passed_twice(machine):
    """Passed twice, the buffer has no copy (its address -1) and the kernel scatters: the copy's
    read of a store under a condition must stay inside that guard (it was hoisted to the wave's
    start, where it read DRAM at -1 and faulted: an in-place scan of a slice in mncl.array)."""
    n, off = 100, 200
    x = np.arange(off + n, dtype=np.float32)
    ctx, q = device_env(machine, new=True)
    prg = cl.Program(ctx, SRC).build()
    shared = buf(ctx, x)
    prg.guarded(q, (128,), None, shared, shared, np.int32(off), np.int32(n)).wait()
    out = np.empty_like(x)
    cl.enqueue_copy(q, out, shared)
    want = x.copy()
    want[off:] = x[:n] * 3
    np.testing.assert_array_equal(out, want)
    (_, b), _ = run(machine, "guarded", 128, x, np.zeros(off + n, np.float32), np.int32(off), np.int32(n))
    np.testing.assert_array_equal(b[off:], x[:n] * 3)
    assert not b[:off].any()


@pytest.mark.parametrize("machine", ["tiny", "mncore2"])
def test_a_buffer_read_before_its_store_takes_the_copy(machine, tmp_path):
    """lu's row scaling, A[k*n + j] = A[k*n + j] / A[k*n + k] for j > k: the loads come before the
    store, so the store takes the shifted copy (it scattered over the wave's span: 542 steps a
    launch of 64 on mncore2, 357 of them the scatter's) and the loads read the buffer as it was."""
    n = 64
    rng = np.random.default_rng(7)
    A0 = (rng.integers(-8, 9, (n, n)) * 2.0 ** rng.integers(0, 3, (n, n))).astype(np.float32)
    A0[np.diag_indices(n)] = 2.0 ** rng.integers(-2, 3, n)
    for k in (0, 5, n - 1):
        (A,), ev = run(machine, "scale_row", n, A0.copy(), np.int32(k), np.int32(n))
        want = A0.copy()
        want[k, k + 1:] = A0[k, k + 1:] / A0[k, k]
        np.testing.assert_array_equal(A, want)
        if machine == "mncore2":
            assert ev.stats.steps < 400, ev.stats.steps
    stats = mncc_stats(tmp_path / "k.cl", SRC, "-k", "scale_row")
    assert "store A (global, 4 B): unit; shifted store" in stats, stats


def test_a_load_after_the_store_keeps_the_scatter(tmp_path):
    gs = 700
    (b, c), _ = run("tiny", "reread", gs, np.zeros(gs + 3, np.float32), np.zeros(gs, np.float32), np.int32(3),
                    np.int32(3))
    np.testing.assert_array_equal(b[3:], np.arange(gs))
    np.testing.assert_array_equal(c, 2 * np.arange(gs, dtype=np.float32))
    stats = mncc_stats(tmp_path / "k.cl", SRC, "-k", "reread")
    assert "store b (global, 4 B): neighbourhood; wave-span scatter" in stats, stats


def test_the_scatter_it_does_not_take_costs_no_steps():
    """The scatter beside the copy is a fallback: zeroing its Z area (64 steps on mncore2) waits
    for a run that takes it (Scatter.ensure_z), and lu's row scaling, 64 work-items, pays none."""
    n = 64
    A0 = np.arange(n * n, dtype=np.float32).reshape(n, n) + 1
    (A,), ev = run("mncore2", "scale_row", n, A0.copy(), np.int32(3), np.int32(n))
    want = A0.copy()
    want[3, 4:] = A0[3, 4:] / A0[3, 3]
    np.testing.assert_array_equal(A, want)
    assert ev.stats.steps < 210, ev.stats.steps
