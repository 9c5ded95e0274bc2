"""A launch that fills a fraction of a narrowed wave moves only the halves of each wave share its
work-items live in (colplan.narrow_shares): loads, the merge read and the store of `y[i]`,
copies (a shifted store), __local memory's shares.  Every size across the tiers (1, 2, 4 and
all 8 of mncore2's L2B halves, 512 work-items each in a wave narrowed 8 times) gives numpy's
results, and the bytes moved follow the work-items."""
import numpy as np
import pytest

import mncl as cl
from emulator_harness import device_env, launch

AXPY = """
__kernel void axpy(__global const float *x, __global float *y, float a, int n)
{
    int i = get_global_id(0);
    if (i < n)
        y[i] = a * x[i] + y[i];
}
"""

SCALE_ROW = """
__kernel void scale_row(__global float *A, int k, int n)
{
    int j = get_global_id(0);
    if (j > k && j < n)
        A[k * n + j] = A[k * n + j] / A[k * n + k];
}
"""

GROUP_SUMS = """
__kernel void group_sums(__global const float *x, __global float *sums, __local float *part)
{
    int lid = get_local_id(0);
    part[lid] = x[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = get_local_size(0) / 2; s > 0; s /= 2) {
        if (lid < s)
            part[lid] += part[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        sums[get_group_id(0)] = part[0];
}
"""


def ints(n, seed, lo=-8, hi=8):
    return np.random.default_rng(seed).integers(lo, hi, n).astype(np.float32)


@pytest.fixture(scope="module")
def mncore2():
    return device_env("mncore2", new=True)


@pytest.mark.parametrize("gs, n", [(1, 1), (64, 60), (512, 512), (513, 513), (1000, 1000), (2048, 1999),
                                   (2049, 2049), (4096, 4096), (4100, 4100), (9000, 8999)])
def test_axpy_across_the_tiers(mncore2, gs, n):
    x, y = ints(gs, gs), ints(gs, gs + 1)
    (_, got), _ = launch(mncore2, AXPY, "axpy", gs, x, y.copy(), np.float32(3), np.int32(n))
    want = y.copy()
    want[:n] = np.float32(3) * x[:n] + y[:n]
    np.testing.assert_array_equal(got, want)


def test_a_small_launch_moves_its_halves_only():
    """64 work-items of a wave of 4096: x, y's merge read and y's store move one half each (2 KiB)
    instead of all 8 (16 KiB each)."""
    x, y = ints(64, 1), ints(64, 2)
    (_, got), ev = launch(device_env("mncore2", new=True), AXPY, "axpy", 64, x, y.copy(), np.float32(3), np.int32(64))
    np.testing.assert_array_equal(got, np.float32(3) * x + y)
    assert ev.stats.dram_bytes <= 4 * 2048 + 1024, ev.stats.dram_bytes


@pytest.mark.parametrize("n", [64, 700])
def test_a_shifted_store_of_a_small_launch(mncore2, n):
    """lu's row scaling: the shifted copy's halves."""
    A = np.random.default_rng(n).integers(1, 5, (n, n)).astype(np.float32)
    k = 3
    ctx, q = env = device_env("mncore2", new=True)
    (got,), ev = launch(env, SCALE_ROW, "scale_row", n, A.copy(), np.int32(k), np.int32(n))
    want = A.copy()
    want[k, k + 1:] = A[k, k + 1:] / A[k, k]
    np.testing.assert_array_equal(got.reshape(n, n), want)
    if n == 64:
        assert ev.stats.dram_bytes <= 8 * 1024, ev.stats.dram_bytes


@pytest.mark.parametrize("gs", [128, 1024, 4096, 8192])
def test_local_shares_of_a_small_launch(gs):
    ls = 128
    x = ints(gs, gs)
    ctx, q = device_env("mncore2", new=True)
    mf = cl.mem_flags
    xb = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
    sb = cl.Buffer(ctx, mf.READ_WRITE, 4 * (gs // ls))
    ev = cl.Program(ctx, GROUP_SUMS).build().group_sums(q, (gs,), (ls,), xb, sb, cl.LocalMemory(4 * ls))
    sums = np.empty(gs // ls, np.float32)
    cl.enqueue_copy(q, sums, sb)
    np.testing.assert_array_equal(sums, x.reshape(-1, ls).sum(axis=1))
    if gs == 128:      # one work-group: its L2B's blocks only (the tree's 7 rounds moved all 8 halves)
        assert ev.stats.dram_bytes <= 160 * 1024, ev.stats.dram_bytes
