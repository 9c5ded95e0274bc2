"""Loads of a written buffer from its launch-start copy (Memory.snapshot): where every load of the
buffer precedes every store to it in a work-item's program order, a load can only see the value
the launch started with (another work-item's store would be a data race), so the loads take the
paths of a read-only buffer (uniform, shifted, staged) on a replicated copy the runtime writes,
instead of gathering the buffer as the stores change it.  Checked against numpy; where a load may
follow a store, or the kernel has a barrier, the loads read the buffer itself."""
from __future__ import annotations

import numpy as np
import pytest

import mncl as cl
import translator
from emulator.machine import load_machine
from emulator_harness import buf, device_env, launch, read
from translator.backend import compile_kernel

PIVOT = """
__kernel void upd(__global float *y, int k)
{
    int i = get_global_id(0);
    if (i != k)
        y[i] -= 0.5f * y[k];
}
"""

LU_UPDATE = """
__kernel void lu_update(__global float *A, int k, int n)
{
    int j = get_global_id(0);
    int i = get_global_id(1);
    if (i > k && j > k && i < n && j < n)
        A[i * n + j] = A[i * n + j] - A[i * n + k] * A[k * n + j];
}
"""

# the load of a[idx[i]] may follow the store to a[2i] (LLVM cannot tell them apart): it must see it
AFTER = """
__kernel void after(__global int *a, __global const int *idx, __global int *out)
{
    int i = get_global_id(0);
    a[2 * i] = a[2 * i + 1] + 100;
    out[i] = a[idx[i]];
}
"""

BARRIER = """
__kernel void swap(__global int *a)
{
    int l = get_local_id(0), g = get_global_id(0);
    int v = a[g];
    barrier(CLK_GLOBAL_MEM_FENCE);
    a[g - l + (get_local_size(0) - 1 - l)] = v;
    barrier(CLK_GLOBAL_MEM_FENCE);
    a[g] = a[g] + 1;
}
"""


@pytest.mark.parametrize("machine", ["tiny", "mncore2"])
def test_a_pivot_read_by_every_work_item_is_a_uniform_load(machine):
    n = 8192
    y = np.arange(n, dtype=np.float32)
    (out,), ev = launch(device_env(machine, new=True), PIVOT, "upd", n, y, np.int32(5))
    want = y - np.float32(0.5) * y[5]
    want[5] = y[5]
    np.testing.assert_array_equal(out, want)
    # the pivot from the launch-start copy, not the buffer streamed through every PE (~590 KB on tiny)
    assert ev.stats.dram_bytes < 3 * y.nbytes, ev.stats.dram_bytes


@pytest.mark.parametrize("machine, n", [("tiny", 24), ("mncore2", 64)])
def test_an_in_place_lu_update_matches_numpy(machine, n):
    rng = np.random.default_rng(n)
    A = (rng.integers(1, 4, (n, n)) + np.eye(n) * 4 * n).astype(np.float32)
    env = device_env(machine)
    for k in (0, n // 3, n - 2):
        (got,), _ = launch(env, LU_UPDATE, "lu_update", (n, n), A, np.int32(k), np.int32(n))
        want = A.copy()
        want[k + 1:, k + 1:] -= np.outer(A[k + 1:, k], A[k, k + 1:])
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("machine", ["tiny", "mncore2"])
def test_a_load_that_may_follow_a_store_sees_it(machine):
    n = 512
    a = np.arange(2 * n, dtype=np.int32)
    idx = (2 * np.arange(n)).astype(np.int32)          # each work-item reads back its own store
    idx[::3] += 1                                      # ... or the element it did not write
    (got_a, _, out), _ = launch(device_env(machine), AFTER, "after", n, a, idx, np.zeros(n, np.int32))
    want_a = a.copy()
    want_a[0::2] = a[1::2] + 100
    np.testing.assert_array_equal(got_a, want_a)
    np.testing.assert_array_equal(out, want_a[idx])


def test_a_kernel_with_a_barrier_reads_the_buffer_itself():
    n, ls = 256, 64
    a = np.arange(n, dtype=np.int32)
    ctx, q = device_env("tiny")
    prg = cl.Program(ctx, BARRIER).build()
    b = buf(ctx, a)
    prg.swap(q, (n,), (ls,), b).wait()
    want = a.reshape(-1, ls)[:, ::-1].reshape(-1) + 1
    np.testing.assert_array_equal(read(q, b, a), want)


def test_only_buffers_loaded_before_their_stores_are_snapshots():
    got = {}
    for src, name in ((PIVOT, "upd"), (AFTER, "after"), (BARRIER, "swap")):
        got[name] = compile_kernel(translator.compile_opencl(src, spmd=True), name, load_machine("tiny"), "1d").snapshots
    assert got == {"upd": [0], "after": [], "swap": []}, got
