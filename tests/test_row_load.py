"""Row loads from a transposed copy (rowplan.RowPlan.transposed): `W[r * P + k + s]` in a loop over
k reads, each pass, the wave's share of row k of a copy the runtime makes for the launch
(element k * items + r), a column load the column plan multi-buffers, instead of panels handed
out PE by PE.  Results are numpy's for pitches shorter and longer than the loop, offsets, partial
waves and several waves; a launch that fills its waves takes the copy (a quarter of the
panels' steps), a few rows in a wide wave stage panels."""
import numpy as np
import pytest

from emulator_harness import device_env, launch
from test_forwarding import ROWS
from test_row_plan import run_rows

@pytest.mark.parametrize("rows, cols, pitch, start", [
    (512, 64, 64, 0),        # one half of a wave narrowed 8 times
    (700, 40, 41, 3),        # an odd pitch, a start inside a long word
    (4096, 33, 20, 1),       # rows that overlap: the loop reads on into the next rows
    (5000, 16, 16, 0),       # two waves, the second partial
])
def test_row_loads_match_numpy(rows, cols, pitch, start):
    y, ref, _ = run_rows("mncore2", rows, cols, pitch, start)
    np.testing.assert_array_equal(y, ref)


def test_a_full_wave_takes_the_copy():
    """4096 rows of 256 on mncore2 (its wave narrowed 8 times, full): under 5 steps a pass (1,184
    steps); the panels handed out PE by PE took over 17 (4,496)."""
    y, ref, stats = run_rows("mncore2", 4096, 256, 256, 0)
    np.testing.assert_array_equal(y, ref)
    assert stats.steps <= 5 * 256, stats.steps
    assert stats.dram_bytes <= 1.1 * 4096 * 256 * 4 + 64 * 1024, stats.dram_bytes


def test_a_small_launch_in_a_wide_wave_stages_panels():
    """100 rows in tiny's wave of 512: the copy's shares would be four-fifths empty, so the runtime
    makes none and the panels move the rows (about once)."""
    y, ref, stats = run_rows("tiny", 100, 64, 64, 0)
    np.testing.assert_array_equal(y, ref)
    assert stats.dram_bytes <= 1.5 * 100 * 64 * 4 + 64 * 1024, stats.dram_bytes


TWO_PASSES = """
__kernel void two_passes(__global const float *in, __global float *out, int chunk)
{
    int base = get_global_id(0) * chunk;
    float s = 0.0f;
    for (int k = 0; k < chunk; k++)
        s += in[base + k];
    float run = -s;
    for (int k = 0; k < chunk; k++) {   /* the same rows again: the panels stay staged for it */
        run += in[base + k];
        out[base + k] = run;
    }
}
"""


def test_rows_read_by_two_loops_cross_dram_once():
    """SHOC scan's bottom launch reads its rows twice; a transposed copy would move them twice."""
    n, chunk = 8192, 32
    x = np.random.default_rng(8).integers(-4, 5, n * chunk).astype(np.float32)
    (_, got), ev = launch(device_env("mncore2", new=True), TWO_PASSES, "two_passes", n, x, np.zeros_like(x),
                          np.int32(chunk))
    rows = x.reshape(n, chunk).astype(np.float64)
    np.testing.assert_array_equal(got, (np.cumsum(rows, axis=1) - rows.sum(axis=1, keepdims=True)).ravel())
    assert ev.stats.dram_bytes <= 1.2 * 2 * x.nbytes, ev.stats.dram_bytes


def test_a_launch_without_the_copy_runs_the_panels_without_branches():
    """64 rows on tiny take the panels: versioning.py's second copy of the loop (the copy's guard
    failed, the panels' held) runs them without a sequencer branch a pass: 891 steps, 1,341 when
    every pass chose between the copy and the panels (822 before there was a copy)."""
    n = 64
    rng = np.random.default_rng(3)
    A, x = rng.integers(-3, 4, (n, n)).astype(np.float32), rng.integers(-3, 4, n).astype(np.float32)
    (_, _, y), ev = launch(device_env("tiny", new=True), ROWS, "rows", n, A, x, np.zeros(n, np.float32), np.int32(n))
    np.testing.assert_array_equal(y, A.astype(np.float64) @ x)
    assert ev.stats.steps <= 1000, ev.stats.steps


def test_a_kept_copy_follows_the_buffer():
    """The runtime keeps a row load's copy between launches while the buffer does not change
    (EmulatorDevice.kept): relaunched with the same W, then with W changed in one element, then
    with another x (a copy of W still right), the results follow."""
    import mncl as cl
    from test_row_plan import ROW_SUM
    ctx, q = device_env("mncore2", new=True)
    prg = cl.Program(ctx, ROW_SUM).build()
    rows, cols = 4096, 64
    rng = np.random.default_rng(9)
    W = rng.integers(1, 5, rows * cols).astype(np.float32)
    x = rng.integers(1, 5, cols).astype(np.float32)
    mf = cl.mem_flags
    wb, xb = (cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a) for a in (W, x))
    yb = cl.Buffer(ctx, mf.WRITE_ONLY, rows * 4)
    for change in ("none", "W", "x"):
        if change == "W":
            W[rows * cols // 2 + 3] += 7
            cl.enqueue_copy(q, wb, W)
        elif change == "x":
            x[5] -= 2
            cl.enqueue_copy(q, xb, x)
        prg.rows(q, (rows,), None, wb, xb, yb, *map(np.int32, (rows, cols, cols, 0)))
        y = np.empty(rows, np.float32)
        cl.enqueue_copy(q, y, yb)
        np.testing.assert_array_equal(y, W.reshape(rows, cols) @ x, err_msg=change)
