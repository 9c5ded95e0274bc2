"""Affine copies (Memory.affine_copy): in a "rows" build (a 2-D launch run flat in row-major
order), a load at a * gid0 + b * gid1 + u that is not row-major at gx -- a transposed read
`in[j*n + i]`, a row `A[k*n + j]`, a column `A[i*n + k]`, a reversed or strided walk -- reads the
wave's share of a copy the runtime makes for the launch, where it gathered all of the buffer
through every PE.  Checked against numpy on both machines, with partial waves, loads of a buffer
the kernel also writes (lu's update reads row and column k of the matrix it updates), and an
out-of-bounds read, which is still reported."""
import numpy as np
import pytest

import mncl as cl
from emulator_harness import device_env, launch, mncc_stats
from test_snapshot import LU_UPDATE

SRC = """
__kernel void transpose(__global const float *in, __global float *out, int rows, int cols)
{
    int j = get_global_id(0), i = get_global_id(1);
    if (j < cols && i < rows)
        out[i * cols + j] = in[j * rows + i];
}

__kernel void walks(__global const float *in, __global float *out, int n)
{
    int j = get_global_id(0), i = get_global_id(1);
    out[i * n + j] = in[(n - 1 - j) * n + i] + 2.0f * in[2 * j + i];
}

__kernel void gather_strided(__global const float *x, __global float *y, int incx, int n, int from)
{
    int i = get_global_id(0);
    if (i < n)
        y[i] = x[i * incx + from] - x[(n - 1 - i) * incx];
}

__kernel void by_group(__global const float *in, __global float *out, int stride, int ls)
{
    int lid = get_local_id(0), g = get_group_id(0);
    out[get_global_id(0)] = in[g * stride + (ls - 1 - lid)] + in[lid];
}

__kernel void past_the_end(__global const float *in, __global float *out, int n)
{
    int j = get_global_id(0), i = get_global_id(1);
    out[i * n + j] = in[j * n + i + 1];
}
"""


@pytest.mark.parametrize("machine, rows, cols", [("tiny", 40, 24), ("tiny", 7, 300), ("mncore2", 256, 256),
                                                 ("mncore2", 100, 36)])
def test_a_transpose_matches_numpy(machine, rows, cols):
    x = np.random.default_rng(rows).random((cols, rows), dtype=np.float32)
    (_, got), _ = launch(device_env(machine, new=True), SRC, "transpose", (cols, rows), x,
                         np.full((rows, cols), -1.0, np.float32), np.int32(rows), np.int32(cols))
    np.testing.assert_array_equal(got, x.T)


def test_the_lu_update_reads_its_row_and_column_from_copies():
    """A[i*n + k] and A[k*n + j] of the matrix the kernel updates (test_snapshot's in-place lu update
    checks the results on both machines): read from copies of its launch-start snapshot, which no
    work-item writes (i, j > k), not gathered (a launch of 64 x 64 on mncore2: 699 steps then)."""
    n, k = 64, 3
    A0 = np.random.default_rng(n).integers(-8, 9, (n, n)).astype(np.float32)
    (got,), ev = launch(device_env("mncore2", new=True), LU_UPDATE, "lu_update", (n, n), A0.copy(), np.int32(k),
                        np.int32(n))
    want = A0.copy()
    want[k + 1:, k + 1:] -= np.outer(A0[k + 1:, k], A0[k, k + 1:])
    np.testing.assert_array_equal(got, want)
    assert ev.stats.steps < 400, ev.stats.steps


@pytest.mark.parametrize("machine", ["tiny", "mncore2"])
def test_reversed_and_strided_walks(machine):
    n = 48
    x = np.random.default_rng(3).integers(-9, 9, n * n).astype(np.float32)
    (_, got), _ = launch(device_env(machine, new=True), SRC, "walks", (n, n), x, np.zeros(n * n, np.float32),
                         np.int32(n))
    j, i = np.meshgrid(np.arange(n), np.arange(n))
    np.testing.assert_array_equal(got.reshape(n, n), x[(n - 1 - j) * n + i] + 2 * x[2 * j + i])


@pytest.mark.parametrize("machine, n, incx", [("tiny", 300, 3), ("tiny", 1000, 1), ("mncore2", 5000, 7),
                                              ("mncore2", 100, 2)])
def test_a_1d_stride_known_at_launch(machine, n, incx, tmp_path):
    """`x[i * incx]` in a 1-D build: the stride is an argument, so no contiguous path took it."""
    x = np.random.default_rng(n).integers(-50, 50, n * incx + 2).astype(np.float32)
    (_, got), _ = launch(device_env(machine, new=True), SRC, "gather_strided", n, x, np.zeros(n, np.float32),
                         np.int32(incx), np.int32(n), np.int32(1))
    i = np.arange(n)
    np.testing.assert_array_equal(got, x[i * incx + 1] - x[(n - 1 - i) * incx])
    err = mncc_stats(tmp_path / "s.cl", SRC, "-k", "gather_strided")
    assert "affine copy" in err and "gather (" not in err, err


@pytest.mark.parametrize("machine, groups, ls, stride", [("tiny", 30, 16, 20), ("mncore2", 64, 64, 100),
                                                         ("mncore2", 300, 32, 33)])
def test_reads_by_local_and_group_id(machine, groups, ls, stride, tmp_path):
    """A 1-D build's `in[g * stride + ls - 1 - lid]` and `in[lid]`: group and local ids, a stride
    known at launch; each work-item reads its group's slice reversed."""
    x = np.random.default_rng(groups).integers(-50, 50, groups * stride + ls).astype(np.float32)
    ctx, q = device_env(machine, new=True)
    mf = cl.mem_flags
    ob = cl.Buffer(ctx, mf.WRITE_ONLY, 4 * groups * ls)
    cl.Program(ctx, SRC).build().by_group(q, (groups * ls,), (ls,), cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR,
                                          hostbuf=x), ob, np.int32(stride), np.int32(ls))
    got = np.empty(groups * ls, np.float32)
    cl.enqueue_copy(q, got, ob)
    g, lid = np.divmod(np.arange(groups * ls), ls)
    np.testing.assert_array_equal(got, x[g * stride + ls - 1 - lid] + x[lid])
    err = mncc_stats(tmp_path / "g.cl", SRC, "-k", "by_group")
    assert err.count("affine copy") == 2 and "gather (" not in err, err


def test_an_out_of_bounds_read_is_still_reported():
    n = 16
    with pytest.raises(cl.Error, match="out of bounds"):
        launch(device_env("tiny", new=True), SRC, "past_the_end", (n, n), np.zeros(n * n, np.float32),
               np.zeros(n * n, np.float32), np.int32(n))


def test_a_transpose_moves_its_shares_not_the_buffer(tmp_path):
    """256 x 256 on mncore2: 9,717 steps when the read gathered; the copy's shares cross DRAM once
    (in, out, and the guarded store's merge read)."""
    n = 256
    x = np.random.default_rng(0).random((n, n), dtype=np.float32)
    (_, got), ev = launch(device_env("mncore2", new=True), SRC, "transpose", (n, n), x, np.zeros_like(x),
                          np.int32(n), np.int32(n))
    np.testing.assert_array_equal(got, x.T)
    assert ev.stats.steps < 1000, ev.stats.steps
    assert ev.stats.dram_bytes <= 3 * x.nbytes + 4096, ev.stats.dram_bytes
    err = mncc_stats(tmp_path / "t.cl", SRC, "--mode", "rows", "-k", "transpose")
    assert "affine copy" in err and "gather" not in err, err


def test_a_kept_copy_follows_the_buffer():
    """The runtime keeps an affine copy between launches while the buffer does not change
    (EmulatorDevice.kept): a transpose relaunched on changed contents reads them."""
    ctx, q = device_env("mncore2", new=True)
    prg = cl.Program(ctx, SRC).build()
    n = 128
    x = np.arange(n * n, dtype=np.float32).reshape(n, n)
    mf = cl.mem_flags
    xb = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
    ob = cl.Buffer(ctx, mf.WRITE_ONLY, x.nbytes)
    for step in range(3):
        if step == 2:
            x[7, 9] = -1.0
            cl.enqueue_copy(q, xb, x)
        prg.transpose(q, (n, n), None, xb, ob, np.int32(n), np.int32(n))
        got = np.empty_like(x)
        cl.enqueue_copy(q, got, ob)
        np.testing.assert_array_equal(got, x.T)
