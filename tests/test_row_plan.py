"""The row plan (translator/backend/rowplan.py): a work-item walking its own row of a read-only
buffer in a loop is staged into LM0 panel by panel, each element crossing DRAM once, and gives
the same results as numpy; pitches the plan cannot stage (odd, negative) gather and are right."""
import re

import numpy as np
import pytest

import mncl as cl
from emulator_harness import device_env, launch, mncc_stats

ROW_SUM = """
__kernel void rows(__global const float *W, __global const float *x, __global float *y,
                   int rows, int cols, int pitch, int start)
{
    int r = get_global_id(0);
    if (r < rows) {
        float s = 0.0f;
        for (int k = 0; k < cols; k++)
            s += W[r * pitch + k + start] * x[k];
        y[r] = s;
    }
}
"""

INT_ROW = """
__kernel void irow(__global const int *A, __global int *out, int n, int p)
{
    int i = get_global_id(0);
    int acc = 0;
    for (int k = 0; k < n; k++)
        acc = acc * 3 + A[i * p + k];
    out[i] = acc;
}
"""


def run_rows(machine, rows, cols, pitch, start, rng=np.random.default_rng(22)):
    """y = the row products on the emulator device, next to numpy, and the launch's profile."""
    need = max(rows * pitch + start + cols, 1) if pitch >= 0 else (rows + 2) * abs(pitch) + cols
    W = rng.integers(1, 5, need).astype(np.float32)     # small positive integers: exact sums, never 0
    x = rng.integers(1, 5, max(cols, 1)).astype(np.float32)
    base = 0 if pitch >= 0 else (rows + 1) * -pitch
    (_, _, y), ev = launch(device_env(machine, new=True), ROW_SUM, "rows", rows, W, x, np.zeros(rows, np.float32),
                           *map(np.int32, (rows, cols, pitch, start + base)))
    ref = np.array([W[r * pitch + start + base: r * pitch + start + base + cols] @ x[:cols] for r in range(rows)],
                   np.float32)
    return y, ref, ev.stats


@pytest.mark.parametrize("rows, cols, pitch, start", [
    (100, 64, 64, 0),           # one panel
    (77, 300, 300, 0),          # three panels, the last one partial, a partial wave
    (64, 200, 210, 1),          # an odd start: the other half of each long word
    (40, 33, 36, 3),            # rows longer than the loop
    (16, 1, 2, 0),              # one pass
    (20, 0, 8, 0),              # no pass at all
])
def test_row_plan_matches_numpy(rows, cols, pitch, start):
    y, ref, _ = run_rows("tiny", rows, cols, pitch, start)
    np.testing.assert_array_equal(y, ref)


@pytest.mark.parametrize("pitch", [129, -64])
def test_pitches_the_plan_cannot_stage_gather_and_are_right(pitch):
    y, ref, _ = run_rows("tiny", 30, 40, pitch, 0)
    np.testing.assert_array_equal(y, ref)


def test_each_element_crosses_dram_once():
    """A gather moved all of W in every pass of the loop (256 passes x 512 KiB here)."""
    rows, cols = 512, 256
    y, ref, stats = run_rows("tiny", rows, cols, cols, 0)
    np.testing.assert_array_equal(y, ref)
    compulsory = rows * cols * 4
    assert stats.dram_bytes <= 1.1 * compulsory + 64 * 1024


def test_narrowed_wave_on_mncore2():
    """A launch of 1000 rows runs in a wave narrowed 8 times: one cycle of slots per PE.  One MV
    moves the row of every group's work-item at once, but here groups 1-3 have no work-item left, so
    group 0 moves its rows alone (they moved 4x the bytes needed before; a gather moved all of W in
    each of the 96 passes).  An MV moves 64 long words where a row needs 48."""
    y, ref, stats = run_rows("mncore2", 1000, 96, 96, 0)
    np.testing.assert_array_equal(y, ref)
    assert stats.dram_bytes <= 1000 * 64 * 8 + 64 * 1024     # (+ x, y and the argument block)


def test_integer_rows_and_stats_name_the_plan(tmp_path):
    from click.testing import CliRunner
    from translator.cli import main
    src = tmp_path / "irow.cl"
    src.write_text(INT_ROW)
    out = CliRunner().invoke(main, ["--machine", "tiny", "--stats", "-o", str(tmp_path / "irow.mnb"), str(src)])
    assert out.exit_code == 0, out.output
    assert "row plan" in out.output and "gather" not in re.sub(r"\([^)]*gathers\)", "", out.output)
    n, p = 20, 22
    A = np.random.default_rng(5).integers(-50, 50, 200 * p + n).astype(np.int32)
    (_, got), _ = launch(device_env("tiny", new=True), INT_ROW, "irow", 200, A, np.zeros(200, np.int32),
                         np.int32(n), np.int32(p))
    ref = np.zeros(200, np.int64)
    for k in range(n):
        ref = ref * 3 + A[np.arange(200) * p + k]
    np.testing.assert_array_equal(got, ref.astype(np.int64).astype(np.uint32).astype(np.int32))


def test_a_row_read_past_the_buffer_is_reported():
    """The wave-wide bounds condition the plan gives (hoisted by versioning) must not hide a lane
    that reads past W: the last row runs off the end here."""
    rows, cols = 10, 64
    W = np.ones(rows * cols - 5, np.float32)
    x = np.ones(cols, np.float32)
    with pytest.raises(cl.Error, match="out of bounds|outside"):
        launch(device_env("tiny", new=True), ROW_SUM, "rows", rows, W, x, np.zeros(rows, np.float32),
               *map(np.int32, (rows, cols, cols, 0)))


GESUMMV = """
__kernel void gesummv(__global const float *A, __global const float *B, __global const float *x,
                      __global float *y, float alpha, float beta, int n)
{
    int i = get_global_id(0);
    if (i < n) {
        float t = 0.0f, u = 0.0f;
        for (int j = 0; j < n; j++) {
            t += A[i * n + j] * x[j];
            u += B[i * n + j] * x[j];
        }
        y[i] = alpha * t + beta * u;
    }
}
"""


def test_two_rows_and_no_room_left_in_lm0():
    """Two row loads in one loop, in a launch small enough that the runtime keeps buffers resident
    in LM0 (a "-res" build): the second plan finds no room and gathers.  (Finding no room once
    sent the compiler into an endless loop.)"""
    n = 16
    rng = np.random.default_rng(3)
    A, B = (rng.integers(1, 4, (n, n)).astype(np.float32) for _ in range(2))
    x = rng.integers(1, 4, n).astype(np.float32)
    (*_, y), _ = launch(device_env("mncore2", new=True), GESUMMV, "gesummv", n, A, B, x, np.zeros(n, np.float32),
                        np.float32(2), np.float32(3), np.int32(n))
    np.testing.assert_array_equal(y, 2 * (A @ x) + 3 * (B @ x))


ROWS_POINTER = """
__kernel void mv(__global const float *a_buf, __global const float *x, __global float *y)
{
    __global const float (*a)[64] = (__global const float (*)[64])a_buf;
    int i = (int)get_global_id(0);
    float s = 0.0f;
    for (int j = 0; j < 64; j++)
        s += a[i][j] * x[j];
    y[i] = s;
}
"""


def test_an_int_row_index_into_a_pointer_to_rows_is_a_row(tmp_path):
    """`a[i][j]` with `int i = get_global_id(0)` and a pointer to rows (how mnacc indexes a 2-D
    array): LLVM writes the index's sign extension as `ashr (shl g, 32), 32`, which the access
    analysis read as irregular, so all of `a` was gathered on every pass of the loop."""
    err = mncc_stats(tmp_path / "mv.cl", ROWS_POINTER, "--machine", "tiny", "--noalias")
    assert "load a_buf (global, 4 B): row in the loop" in err, err
    assert "irregular" not in err and "whole-buffer gather" not in err, err


ROW_AT = """
__kernel void rows_at(__global const float *W, __global const float *x, __global float *y,
                      int rows, int cols, int pitch)
{
    int r = get_global_id(0);
    if (r < rows) {
        float s = 0.0f;
        for (int k = 0; k < cols; k++)
            s += W[r * pitch + k + START] * x[k];
        y[r] = s;
    }
}
"""


def run_rows_at(machine, rows, cols, pitch, start):
    """run_rows with the start a constant of the kernel (as the paired copy needs)."""
    src = ROW_AT.replace("START", str(start))
    rng = np.random.default_rng(rows + cols)
    W = rng.integers(1, 5, rows * pitch + start + cols).astype(np.float32)
    x = rng.integers(1, 5, cols).astype(np.float32)
    (_, _, y), ev = launch(device_env(machine, new=True), src, "rows_at", rows, W, x, np.zeros(rows, np.float32),
                          *map(np.int32, (rows, cols, pitch)))
    ref = np.array([W[r * pitch + start:r * pitch + start + cols] @ x for r in range(rows)], np.float32)
    return y, ref, ev.stats


@pytest.mark.parametrize("machine, rows, cols, pitch, start", [
    ("tiny", 100, 64, 64, 0),
    ("tiny", 77, 280, 300, 16),     # three panels, the last partial, rows of 300 long words padded to 304
    ("tiny", 200, 20, 22, 0),       # pair rows of 22 long words, blocks past the launch's last row
    ("tiny", 77, 280, 301, 8),      # an odd pitch, a start of one granule
    ("tiny", 31, 40, 41, 0),        # an odd number of rows: the last pair half past the buffer
    ("tiny", 33, 40, 42, 3),        # a start inside a granule: the rows as they are
    ("tiny", 40, 96, 100, 32),      # rows read on into the next row: the paired copy gathers
    ("mncore2", 1000, 64, 100, 32),
])
def test_paired_row_copy_matches_numpy(machine, rows, cols, pitch, start):
    """A constant start at a granule takes the paired row copy (rowplan.stage_paired: the two rows
    of a lane pair side by side, one MV per L2B and l2bmd to its L1Bs); any other start the copy
    as it is."""
    y, ref, stats = run_rows_at(machine, rows, cols, pitch, start)
    np.testing.assert_array_equal(y, ref)
    if start + cols <= pitch:          # staged: W crosses DRAM about once (a gather: once a pass)
        assert stats.dram_bytes <= 1.5 * rows * pitch * 4 + 64 * 1024, stats.dram_bytes


def test_an_odd_pitch_at_a_granule_is_staged():
    """Long word e of a pair row holds element e of both rows, so the paired copy takes any
    positive pitch: an odd one used to gather, all of W in every pass of the loop."""
    rows, cols = 512, 127
    y, ref, stats = run_rows_at("tiny", rows, cols, cols, 0)
    np.testing.assert_array_equal(y, ref)
    assert stats.dram_bytes <= 1.2 * rows * cols * 4 + 64 * 1024
