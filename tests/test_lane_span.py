"""Gathers and scatters whose index is an affine form of the global id (Memory.lane_span) pass only
the chunks of the buffer the wave's live lanes can touch: `out[i + off] = v` into a large buffer,
or a 64-bit `x[i + off]`, used to stream the whole buffer through every PE for every wave.
Checked against numpy, with the DRAM they move."""
from __future__ import annotations

import numpy as np
import pytest

import mncl as cl
from emulator_harness import device_env, launch

SRC = """
__kernel void put(__global float *out, __global const float *in, int off)
{
    int i = get_global_id(0);
    out[i + off] = in[i] * 2.0f;
}

__kernel void put_two(__global float *out, int off, int n)
{
    int i = get_global_id(0);
    out[off + n - 1 - i] = (float)i;        /* backwards, and a second store in the same batch */
    out[off + n + 3 * i] = -(float)i;
}

__kernel void get_double(__global const double *x, __global double *y, int off)
{
    int i = get_global_id(0);
    y[i] = x[i + off] + 1.0;
}
"""

BIG = 1 << 18


@pytest.mark.parametrize("machine, n, off", [("tiny", 1000, 5000), ("tiny", 700, BIG - 700), ("mncore2", 5000, 77777),
                                             ("mncore2", 40000, 3)])
def test_a_shifted_store_into_a_large_buffer_moves_its_span(machine, n, off):
    out = np.full(BIG, 7, np.float32)
    x = np.arange(n, dtype=np.float32)
    (got, _), ev = launch(device_env(machine, new=True), SRC, "put", n, out, x, np.int32(off))
    want = out.copy()
    want[off:off + n] = 2 * x
    np.testing.assert_array_equal(got, want)
    # a few times the span (chunks down and up); the whole buffer was 1 MiB each way for every wave
    assert ev.stats.dram_bytes < 16 * n + 64 * 1024, ev.stats.dram_bytes


@pytest.mark.parametrize("machine, n", [("tiny", 600), ("mncore2", 3000)])
def test_a_batch_of_stores_with_other_spans(machine, n):
    off = 10000
    out = np.zeros(BIG, np.float32)
    (got,), ev = launch(device_env(machine, new=True), SRC, "put_two", n, out, np.int32(off), np.int32(n))
    want = out.copy()
    i = np.arange(n)
    want[off + n - 1 - i] = i
    want[off + n + 3 * i] = -i
    np.testing.assert_array_equal(got, want)
    # (`off + n - 1 - i` is `(off + n) + ~i` in the IR: the xor keeps its affine form)
    assert ev.stats.dram_bytes < 16 * 4 * n + 64 * 1024, ev.stats.dram_bytes


@pytest.mark.parametrize("machine", ["tiny", "mncore2"])
def test_a_64_bit_gather_at_an_offset_moves_its_span(machine):
    n, off = 1000, 70000
    x = np.arange(BIG, dtype=np.float64) * 0.5
    (_, y), ev = launch(device_env(machine, new=True), SRC, "get_double", n, x, np.zeros(n), np.int32(off))
    np.testing.assert_array_equal(y, x[off:off + n] + 1)
    assert ev.stats.dram_bytes < x.nbytes / 8, ev.stats.dram_bytes


def test_a_store_out_of_bounds_is_still_reported():
    n = 1000
    with pytest.raises(cl.Error, match="out of bounds"):
        launch(device_env("tiny"), SRC, "put", n, np.zeros(BIG, np.float32), np.ones(n, np.float32),
               np.int32(BIG - 10))
