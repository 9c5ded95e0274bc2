"""The row store (translator/backend/rowstore.py): `out[gid * P + k + s] = v` in a loop goes, pass
by pass, to a transposed copy as the wave's contiguous share, which the runtime writes back into
the buffer: the same results as numpy, lanes that do not store keep the buffer's values, each
element crosses DRAM about once (a scatter moved all of the buffer in every pass), and a buffer
passed twice takes the scatter and is right too."""
import numpy as np
import pytest

import mncl as cl
from emulator_harness import device_env, launch, mncc_stats

PREFIX_ROWS = """
__kernel void rows_out(__global const float *in, __global float *out, int n, int pitch, int chunk, int start)
{
    int r = get_global_id(0);
    if (r < n && r % 3 != 1) {                  /* every third work-item stores nothing */
        float run = 0.0f;
        for (int k = 0; k < chunk; k++) {
            run += in[r * chunk + k];
            out[r * pitch + k + start] = run;
        }
    }
}
"""

SCAN_ROWS = """
__kernel void scan_rows(__global const int *in, __global int *out, int chunk)
{
    int base = get_global_id(0) * chunk;
    int run = 0;
    for (int k = 0; k < chunk; k++) {
        run += in[base + k];
        out[base + k] = run;
    }
}
"""


def prefix_rows(machine, n, chunk, pitch, start):
    rng = np.random.default_rng(n + chunk)
    x = rng.integers(-4, 5, n * chunk).astype(np.float32)
    out = np.full(n * pitch + start + chunk + 5, -1.0, np.float32)
    (_, got), ev = launch(device_env(machine, new=True), PREFIX_ROWS, "rows_out", n, x, out.copy(),
                          *map(np.int32, (n, pitch, chunk, start)))
    ref = out.copy()
    sums = np.cumsum(x.reshape(n, chunk), axis=1)
    for r in range(n):
        if r % 3 != 1:
            ref[r * pitch + start:r * pitch + start + chunk] = sums[r]
    return got, ref, ev.stats


@pytest.mark.parametrize("machine, n, chunk, pitch, start", [
    ("tiny", 100, 8, 8, 0),
    ("tiny", 700, 5, 7, 3),          # rows apart, a partial second wave, a start inside a long word
    ("tiny", 40, 1, 1, 0),           # one pass
    ("mncore2", 1000, 12, 12, 0),
])
def test_row_store_matches_numpy_and_keeps_what_no_lane_stores(machine, n, chunk, pitch, start):
    got, ref, _ = prefix_rows(machine, n, chunk, pitch, start)
    np.testing.assert_array_equal(got, ref)


def test_rows_that_overlap_keep_what_the_one_storing_lane_stored():
    """Rows 2 apart and 3 long, only even work-items storing: an odd lane's copy holds the old
    values of elements its neighbours store, so writing every copy back would put them back
    (the runtime passes -1 for such rows and the kernel scatters)."""
    src = PREFIX_ROWS.replace("r % 3 != 1", "r % 2 == 0")
    n, chunk, pitch = 100, 3, 2
    x = np.random.default_rng(5).integers(-4, 5, n * chunk).astype(np.float32)
    out = np.full(n * pitch + chunk + 5, -1.0, np.float32)
    (_, got), _ = launch(device_env("tiny", new=True), src, "rows_out", n, x, out.copy(),
                         *map(np.int32, (n, pitch, chunk, 0)))
    sums = np.cumsum(x.reshape(n, chunk), axis=1)
    for r in range(0, n, 2):
        out[r * pitch:r * pitch + chunk] = sums[r]
    np.testing.assert_array_equal(got, out)


def test_each_element_crosses_dram_about_once():
    """4096 rows of 32 on mncore2: the scatter moved all of `out` in every one of the 32 passes."""
    n, chunk = 4096, 32
    x = np.random.default_rng(3).integers(-50, 50, n * chunk).astype(np.int32)
    (_, got), ev = launch(device_env("mncore2", new=True), SCAN_ROWS, "scan_rows", n, x, np.zeros_like(x),
                          np.int32(chunk))
    np.testing.assert_array_equal(got, np.cumsum(x.reshape(n, chunk), axis=1).ravel())
    assert ev.stats.dram_bytes <= 2.0 * 2 * x.nbytes


def test_a_buffer_passed_twice_scatters_and_is_right():
    """`out` is `in` too: the copy would hide one argument's stores from the other's loads."""
    ctx, q = device_env("tiny", new=True)
    prg = cl.Program(ctx, SCAN_ROWS).build()
    x = np.arange(64 * 4, dtype=np.int32)
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=x)
    prg.scan_rows(q, (64,), None, buf, buf, np.int32(4))
    got = np.empty_like(x)
    cl.enqueue_copy(q, got, buf)
    np.testing.assert_array_equal(got, np.cumsum(x.reshape(64, 4), axis=1).ravel())


def test_stats_name_the_row_store(tmp_path):
    err = mncc_stats(tmp_path / "scan.cl", SCAN_ROWS, "--machine", "tiny")
    assert "store out (global, 4 B): row in the loop" in err and "row store" in err, err
    assert "scattered" not in err, err


def test_a_launch_with_a_global_offset_stores_its_own_rows():
    ctx, q = device_env("tiny", new=True)
    prg = cl.Program(ctx, SCAN_ROWS).build()
    n, chunk, off = 200, 16, 40
    x = np.random.default_rng(7).integers(-9, 9, (n + off) * chunk).astype(np.int32)
    out = np.full_like(x, -1)
    xb = cl.Buffer(ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR, hostbuf=x)
    ob = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=out)
    prg.scan_rows(q, (n,), None, xb, ob, np.int32(chunk), global_offset=(off,)).wait()
    cl.enqueue_copy(q, out, ob)
    want = np.full_like(x, -1)
    want[off * chunk:] = np.cumsum(x.reshape(-1, chunk)[off:], axis=1).ravel()
    np.testing.assert_array_equal(out, want)
