"""Row store sets (RowStore.stamped, translator/backend/rowstore.py): a buffer stored more than
once in a loop (covariance's `symmat[j1*m + j2]` and `symmat[j2*m + j1]`), or in a skewed loop,
stores each pass's values and lane mask to planes of a copy, and the runtime writes back, per
element, the value of the last store in program order that stored it.  The same results as a
sequential reading of the C, including where one work-item stores an element twice (a later
pass or a later store wins, even when it puts back the value the buffer held) and where no
lane stores (the buffer keeps its value); the scatter it replaces moved all of the buffer in
every pass."""
import numpy as np
import pytest

import mncl as cl
from emulator_harness import buf, device_env, launch, mncc_stats, read

SYMM = """
__kernel void symm(__global float *sym, __global const float *data, int m, int n)
{
    int j1 = get_global_id(0);
    if (j1 < m) {
        for (int j2 = j1; j2 < m; j2++) {
            float s = 0.0f;
            for (int i = 0; i < n; i++)
                s += data[i * m + j1] * data[i * m + j2];
            sym[j1 * m + j2] = s;
            sym[j2 * m + j1] = s;
        }
    }
}
"""

# lane r: a at r*8 + k, b at r*8 + 2k (k < 4): r*8 (pass 0, b after a), r*8 + 2 (b at pass 1, then a
# at pass 2: a's 7, which the buffer held before, must win), lanes r % 3 == 2 store nothing
TWICE = """
__kernel void twice(__global float *out, int n, int passes)
{
    int r = get_global_id(0);
    if (r < n && r % 3 != 2)
        for (int k = 0; k < passes; k++) {
            out[r * 8 + k] = 7.0f;
            out[r * 8 + 2 * k] = (float)(100 * r + k + 1);
        }
}
"""


# stores outside loops: one lane per work-group (SHOC reduction's `out[get_group_id(0)] = part[0]`),
# and strides known at launch, reversed, two fields
OUTSIDE = """
__kernel void per_group(__global float *out, int n)
{
    int g = get_group_id(0);
    if (get_local_id(0) == 0 && get_global_id(0) < n)
        out[2 * g + 1] = (float)(g * 10 + 3);
}

__kernel void strided(__global const float *x, __global float *y, int n, int incy)
{
    int i = get_global_id(0);
    if (i < n) {
        y[(n - 1 - i) * incy] = x[i];
        y[(n - 1 - i) * incy + 1] = -x[i];
    }
}
"""


# scan's top level: a work-group reads the sums one place down, then stores them at its local ids
TOP = """
__kernel void top(__global float *sums, __local float *a, int groups)
{
    int lid = get_local_id(0);
    a[lid] = (lid > 0 && lid <= groups) ? sums[lid - 1] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < groups)
        sums[lid] = 2.0f * a[lid] + (float)lid;
}

__kernel void reread(__global float *sums, int groups)
{
    int lid = get_local_id(0);
    if (lid < groups)
        sums[lid] = (float)lid;
    if (lid + 1 < groups)
        sums[lid + 1] += 1.0f;
}
"""


def twice_reference(out, n):
    ref = out.copy()
    for r in range(n):
        if r % 3 != 2:
            for k in range(4):
                ref[r * 8 + k] = 7.0
                ref[r * 8 + 2 * k] = 100 * r + k + 1
    return ref


@pytest.mark.parametrize("machine, m, n", [("tiny", 50, 9), ("tiny", 300, 3), ("mncore2", 128, 16),
                                           ("mncore2", 5, 3)])
def test_a_symmetric_product_matches_numpy(machine, m, n):
    """Both triangles, several waves (tiny, 300 columns), a wave that is mostly empty (5)."""
    data = np.random.default_rng(m).integers(-3, 4, (n, m)).astype(np.float32)
    sym = np.full((m, m), -7.0, np.float32)
    (got, _), _ = launch(device_env(machine, new=True), SYMM, "symm", m, sym, data, np.int32(m), np.int32(n))
    np.testing.assert_array_equal(got, data.T.astype(np.float64) @ data)


@pytest.mark.parametrize("machine, n", [("tiny", 40), ("tiny", 333), ("mncore2", 1000)])
def test_the_last_store_in_program_order_wins(machine, n):
    out = np.full(n * 8 + 8, 7.0, np.float32)
    out[1::5] = -1.0
    (got,), _ = launch(device_env(machine, new=True), TWICE, "twice", n, out.copy(), np.int32(n), np.int32(4))
    np.testing.assert_array_equal(got, twice_reference(out, n))


@pytest.mark.parametrize("machine", ["tiny", "mncore2"])
@pytest.mark.parametrize("n, lo, passes", [(100, 1, 4), (700, 2, 4), (1000, 3, 3), (50, 5, 3)])
def test_loops_from_an_argument_and_loops_no_lane_enters(machine, n, lo, passes):
    """A counter from `lo` (the pass counter still counts from 0), and a loop that runs no pass
    (the copy comes back with no flag set: the buffer keeps every value)."""
    src = TWICE.replace("k = 0; k < passes", "k = lo; k < passes").replace("int n, int passes", "int n, int lo, int passes")
    out = np.full(n * 8 + 8, 7.0, np.float32)
    out[1::5] = -1.0
    (got,), _ = launch(device_env(machine, new=True), src, "twice", n, out.copy(), np.int32(n), np.int32(lo),
                       np.int32(passes))
    want = out.copy()
    for r in range(n):
        if r % 3 != 2:
            for k in range(lo, passes):
                want[r * 8 + k] = 7.0
                want[r * 8 + 2 * k] = 100 * r + k + 1
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("machine, n, ls", [("tiny", 1000, 20), ("tiny", 64, 64), ("mncore2", 8192, 128),
                                            ("mncore2", 300, 50)])
def test_one_lane_a_group_stores_at_its_group(machine, n, ls):
    ctx, q = device_env(machine, new=True)
    prg = cl.Program(ctx, OUTSIDE).build()
    groups = -(-n // ls)
    out = np.full(2 * groups + 3, -1.0, np.float32)
    mem = buf(ctx, out)
    prg.per_group(q, (groups * ls,), (ls,), mem, np.int32(n))
    got = read(q, mem, out)
    want = out.copy()
    want[1:2 * groups:2] = np.arange(groups) * 10 + 3
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("machine, n, incy", [("tiny", 500, 3), ("tiny", 100, 2), ("mncore2", 3000, 5)])
def test_reversed_strided_stores_of_two_fields(machine, n, incy, tmp_path):
    x = np.random.default_rng(n).integers(-9, 9, n).astype(np.float32)
    y = np.full(n * incy + 2, 5.0, np.float32)
    (_, got), _ = launch(device_env(machine, new=True), OUTSIDE, "strided", n, x, y.copy(), np.int32(n),
                         np.int32(incy))
    want = y.copy()
    at = (n - 1 - np.arange(n)) * incy
    want[at], want[at + 1] = x, -x
    np.testing.assert_array_equal(got, want)
    err = mncc_stats(tmp_path / "k.cl", OUTSIDE, "-k", "strided")
    assert err.count("row store set") == 2 and "scattered" not in err, err


@pytest.mark.parametrize("machine, ls, groups", [("tiny", 64, 50), ("mncore2", 256, 200), ("mncore2", 128, 128)])
def test_stores_at_local_ids_after_loads_of_the_buffer(machine, ls, groups, tmp_path):
    """The loads come before the store (a barrier between: they read the buffer as the launch
    found it); one work-group, so each element has one writer."""
    sums = np.random.default_rng(ls).integers(-9, 9, groups + 3).astype(np.float32)
    ctx, q = device_env(machine, new=True)
    mem = buf(ctx, sums)
    cl.Program(ctx, TOP).build().top(q, (ls,), (ls,), mem, cl.LocalMemory(4 * ls), np.int32(groups))
    got = read(q, mem, sums)
    want = sums.copy()
    want[:groups] = 2 * np.concatenate([[0], sums[:groups - 1]]) + np.arange(groups)
    np.testing.assert_array_equal(got, want)
    err = mncc_stats(tmp_path / "k.cl", TOP, "-k", "top")
    assert "store sums (global, 4 B): neighbourhood; row store set" in err, err
    assert "the store to 'sums' is scattered" not in err, err
    # the loads, all before the stores (the barrier only orders stores after them), read the
    # launch's snapshot of sums: its copy at the local ids, not a gather
    assert "load sums (global, 4 B): neighbourhood; affine copy" in err, err


def test_a_load_after_the_store_keeps_the_scatter(tmp_path):
    """A load that can run after the store (`+=` on an element another work-item stored): the copy
    would hide the store from it."""
    err = mncc_stats(tmp_path / "k.cl", TOP, "-k", "reread")
    assert "row store set" not in err, err


def test_a_buffer_passed_twice_scatters_and_is_right():
    ctx, q = device_env("tiny", new=True)
    src = TWICE.replace("__global float *out, int n,", "__global float *out, __global float *alias, int n,")
    prg = cl.Program(ctx, src).build()
    n = 60
    out = np.full(n * 8 + 8, 3.0, np.float32)
    mem = buf(ctx, out)
    prg.twice(q, (n,), None, mem, mem, np.int32(n), np.int32(4))
    got = read(q, mem, out)
    np.testing.assert_array_equal(got, twice_reference(out, n))


@pytest.mark.parametrize("src", [SYMM, TWICE])
def test_stats_name_the_set(tmp_path, src):
    err = mncc_stats(tmp_path / "k.cl", src)
    assert err.count("row store set") == 2, err
    assert "scattered" not in err, err


def test_the_symmetric_product_moves_no_scatter():
    """128 columns on mncore2: the scatters passed all of `sym` through every PE twice a pass
    (1,476,276 steps for PolyBench covariance's kernel); the copy's planes are contiguous shares."""
    m, n = 128, 16
    data = np.random.default_rng(1).integers(-3, 4, (n, m)).astype(np.float32)
    (got, _), ev = launch(device_env("mncore2", new=True), SYMM, "symm", m, np.zeros((m, m), np.float32), data,
                          np.int32(m), np.int32(n))
    np.testing.assert_array_equal(got, data.T.astype(np.float64) @ data)
    assert ev.stats.steps < 60_000, ev.stats.steps


# Rodinia nw's write-back: each work-group puts its 16 x 16 block back at the group's place, one
# store per row of the block (the loop unrolled: sixteen stores to one buffer)
BLOCKS = """
#define BS 16
__kernel void put_blocks(__global int *score, int w, int diag, int first)
{
    int t = get_local_id(0);
    int bi = first + get_group_id(0), bj = diag - bi;
    int r0 = bi * BS, c0 = bj * BS;
    for (int k = 0; k < BS; k++)
        score[(r0 + k + 1) * w + c0 + t + 1] = 1000 * bi + 10 * k + t;
}
"""


@pytest.mark.parametrize("machine, n, diag", [("tiny", 64, 2), ("tiny", 64, 5), ("mncore2", 512, 31)])
def test_sixteen_stores_of_a_block_each_go_to_the_set(machine, n, diag, tmp_path):
    """Sixteen stores to one buffer were past the set's limit (8) and scattered: every store moved
    all of nw's 1 MiB score through every PE, 2.2 million steps for a launch of 16 work-items."""
    bs, nb, w = 16, n // 16, n + 1
    first = max(0, diag - nb + 1)
    blocks = min(diag, nb - 1) - first + 1
    score = np.random.default_rng(n).integers(-9, 9, (w, w)).astype(np.int32)
    ctx, q = device_env(machine, new=True)
    mem = buf(ctx, score)
    ev = cl.Program(ctx, BLOCKS).build().put_blocks(q, (blocks * bs,), (bs,), mem, np.int32(w), np.int32(diag),
                                                    np.int32(first))
    got = read(q, mem, score)
    want = score.copy()
    for b in range(blocks):
        bi = first + b
        bj = diag - bi
        want[bi * bs + 1:bi * bs + bs + 1, bj * bs + 1:bj * bs + bs + 1] = \
            1000 * bi + 10 * np.arange(bs)[:, None] + np.arange(bs)[None, :]
    np.testing.assert_array_equal(got, want)
    assert ev.stats.steps < 20_000, ev.stats.steps
    err = mncc_stats(tmp_path / "k.cl", BLOCKS)
    assert err.count("row store set") == 16 and "scattered" not in err, err
