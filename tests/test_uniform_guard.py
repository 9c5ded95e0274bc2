"""Stores under a uniform guard (control.py, Emitter.active_when): a loop's lane mask, a branch on
a scalar argument and their joins are every lane the kernel runs, or none, under a sequencer
condition.  A full wave's store then skips the merge read of its share (SHOC scan's
`out[base + k]` in `for (k = 0; k < chunk; k++)` read all of `out` once more), and where the
condition fails (no lane entered) the buffer keeps its values."""
import numpy as np
import pytest

from emulator_harness import device_env, launch

ROWS = """
__kernel void rows(__global const int *in, __global int *out, int chunk)
{
    int base = get_global_id(0) * chunk;
    int run = 0;
    for (int k = 0; k < chunk; k++) {
        run += in[base + k];
        out[base + k] = run;
    }
}
"""

GUARDED = """
__kernel void guarded(__global const float *x, __global float *y, int flag, int lo)
{
    int i = get_global_id(0);
    if (flag > lo)                       /* outside it y keeps its values */
        y[i] = 2.0f * x[i];
    if (i % 3 == 0)                      /* a per-lane branch: its lanes merge */
        y[i] += 0.5f;
}
"""

EARLY_OUT = """
__kernel void early_out(__global const float *x, __global float *y, int flag, int lo)
{
    int i = get_global_id(0);
    if (flag > lo)
        return;
    y[i] = x[i] + 1.0f;
}
"""

AFTER_LOOP = """
__kernel void after_loop(__global const float *x, __global float *y, int n)
{
    int i = get_global_id(0);
    float xi = x[i], s = 0.0f;
    for (int k = 0; k < n; k++)
        s += xi * (float)k;
    y[i] = s + xi;                       /* after the loop's join: every lane again */
}
"""


@pytest.mark.parametrize("machine, n", [("tiny", 4 * 512), ("mncore2", 4096)])   # full waves
def test_a_row_store_in_a_guarded_loop_skips_the_merge_read(machine, n):
    chunk = 32                           # (rows of whole staging panels: `in` moves once)
    x = np.random.default_rng(1).integers(-9, 9, n * chunk).astype(np.int32)
    (_, got), ev = launch(device_env(machine, new=True), ROWS, "rows", n, x, np.full_like(x, -7), np.int32(chunk))
    np.testing.assert_array_equal(got, np.cumsum(x.reshape(n, chunk), axis=1).ravel())
    # in once, out once; the merge read of every pass moved out a second time (3x)
    assert ev.stats.dram_bytes <= 2.1 * x.nbytes, ev.stats.dram_bytes


def test_a_loop_no_lane_enters_stores_nothing():
    x = np.arange(1024, dtype=np.int32)
    (_, got), _ = launch(device_env("tiny", new=True), ROWS, "rows", 1024, x, np.full_like(x, -7), np.int32(0))
    np.testing.assert_array_equal(got, np.full_like(x, -7))


@pytest.mark.parametrize("flag, lo", [(1, 0), (0, 0), (-5, -6), (-6, -5)])
def test_a_branch_on_arguments_stores_what_numpy_computes(flag, lo):
    n = 3 * 512 + 77                     # full waves and a partial one
    x = np.random.default_rng(2).uniform(-4, 4, n).astype(np.float32)
    (_, got), ev = launch(device_env("tiny", new=True), GUARDED, "guarded", n, x, np.full_like(x, 9.0),
                          np.int32(flag), np.int32(lo))
    want = np.float32(2) * x if flag > lo else np.full_like(x, 9.0)
    want[::3] += np.float32(0.5)
    np.testing.assert_array_equal(got, want)
    (_, got), ev = launch(device_env("tiny", new=True), EARLY_OUT, "early_out", n, x, np.full_like(x, 9.0),
                          np.int32(flag), np.int32(lo))
    np.testing.assert_array_equal(got, np.full_like(x, 9.0) if flag > lo else x + np.float32(1))


@pytest.mark.parametrize("n", [0, 5])
def test_a_store_after_a_counted_loop_writes_every_lane(n):
    m = 4 * 512
    x = np.random.default_rng(3).integers(-3, 3, m).astype(np.float32)
    (_, got), ev = launch(device_env("tiny", new=True), AFTER_LOOP, "after_loop", m, x, np.full_like(x, 9.0),
                          np.int32(n))
    np.testing.assert_array_equal(got, x * np.float32(sum(range(n))) + x)
    assert ev.stats.dram_bytes <= 1.2 * 2 * x.nbytes, ev.stats.dram_bytes


SPLIT = """
__kernel void split(__global const float *x, __global float *lo, __global float *hi, int n)
{
    int i = get_global_id(0);
    if (i < n)                           /* per lane; every lane or none in most waves */
        lo[i] = x[i] + 1.0f;
    if (i + 3 >= n)
        hi[i] = x[i] - 1.0f;
}
"""


@pytest.mark.parametrize("n", [0, 100, 512, 700, 1024, 1533, 1536, 5000])
def test_a_guard_on_the_global_id_stores_where_it_holds(n):
    """tiny's wave is 512 work-items: waves wholly inside, wholly outside and across the guard."""
    gs = 1536
    x = np.random.default_rng(n).integers(-9, 9, gs).astype(np.float32)
    lo, hi = np.full_like(x, 7.0), np.full_like(x, 8.0)
    (_, got_lo, got_hi), _ = launch(device_env("tiny", new=True), SPLIT, "split", gs, x, lo, hi, np.int32(n))
    i = np.arange(gs)
    np.testing.assert_array_equal(got_lo, np.where(i < n, x + np.float32(1), lo))
    np.testing.assert_array_equal(got_hi, np.where(i + 3 >= n, x - np.float32(1), hi))


TAIL = """
__kernel void tail(__global const float *x, __global float *y, int n)
{
    int i = get_global_id(0);
    if (TEST)                            /* the store is on the test's other side */
        return;
    y[i] = x[i] * 2.0f;
}
"""

TESTS = {"i < n": np.less, "n > i": np.less, "i > n": np.greater, "n < i": np.greater,
         "i >= n": np.greater_equal, "n <= i": np.greater_equal, "i <= n": np.less_equal,
         "n >= i": np.less_equal}


@pytest.mark.parametrize("test", TESTS)
def test_a_store_past_an_early_return_on_the_global_id(test):
    """Every form LLVM makes of the test (icmp slt / sgt, either operand first) in waves wholly
    inside, wholly outside and across the bound."""
    gs = 1536
    env = device_env("tiny", new=True)
    i = np.arange(gs)
    for n in (0, 100, 511, 512, 700, 1024, 1533, 1536, 5000):
        x = np.random.default_rng(n).integers(-9, 9, gs).astype(np.float32)
        (_, got), _ = launch(env, TAIL.replace("TEST", test), "tail", gs, x, np.full_like(x, 7.0), np.int32(n))
        np.testing.assert_array_equal(got, np.where(TESTS[test](i, n), np.float32(7), x * np.float32(2)),
                                      err_msg=f"{test}, n = {n}")


def test_a_guarded_store_filling_its_halves_skips_the_merge_read():
    """1024 work-items of mncore2's narrowed wave (two of its eight halves) under `if (i < n)`: x is
    read and y written once (the merge read moved y too)."""
    src = """__kernel void axpy(__global const float *x, __global float *y, int n)
    { int i = get_global_id(0); if (i < n) y[i] = 3.0f * x[i] + 1.0f; }"""
    x = np.random.default_rng(4).integers(-9, 9, 1024).astype(np.float32)
    y = np.random.default_rng(5).integers(-9, 9, 1024).astype(np.float32)
    (_, got), ev = launch(device_env("mncore2", new=True), src, "axpy", 1024, x, y.copy(), np.int32(1024))
    np.testing.assert_array_equal(got, np.float32(3) * x + np.float32(1))
    assert ev.stats.dram_bytes <= 2 * x.nbytes + 1024, ev.stats.dram_bytes
