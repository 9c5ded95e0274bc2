"""Triangular loops: a counter that starts at the global id (`for (j = i; j < n; j++)`) runs on the
sequencer from the wave's least start, each lane joining at its own start (Control.skewed_loop), so
`a[j]` is a broadcast and `m[j * n + i]` a contiguous store, not gathers and scatters.  Checked
against numpy, with lanes that start at, past and far below the bound, and against the cost the
gathers had."""
from __future__ import annotations

import numpy as np
import pytest

from emulator_harness import device_env, launch

SRC = """
__kernel void suffix(__global float *out, __global const float *a, int n)
{
    int i = get_global_id(0);
    float s = 0.0f;
    for (int j = i; j < n; j++)            /* no guard: lanes past n run no pass */
        s += a[j] * (float)(j - i + 1);
    out[i] = s;
}

__kernel void upper(__global float *m, __global const float *a, int n)
{
    int i = get_global_id(0);
    if (i < n) {
        int k = 0;
        for (int j = i + 2; j <= n - 1; j++) {   /* an inclusive bound, an offset start */
            m[j * n + i] = a[j] - a[i];
            m[i * n + j] = (float)k;
            k += 3;
        }
        m[i * n + i] = (float)k;
    }
}

__kernel void last(__global int *out, __global const int *a, int n)
{
    int i = get_global_id(0);
    int j = i;
    while (j < n && a[j] != 0)              /* two exits: not skewed, still right */
        j++;
    out[i] = j;
}
"""


def suffix_ref(a, gs):
    n = a.size
    out = np.zeros(gs, np.float64)
    for i in range(min(gs, n)):
        out[i] = (a[i:] * np.arange(1, n - i + 1)).sum()
    return out


@pytest.mark.parametrize("machine, gs, n", [("tiny", 300, 200), ("tiny", 100, 250), ("tiny", 1000, 900),
                                            ("mncore2", 3000, 2000)])
def test_a_triangular_sum_matches_numpy(machine, gs, n):
    a = ((np.arange(n) % 7) - 3).astype(np.float32)
    (out, _), ev = launch(device_env(machine, new=True), SRC, "suffix", gs, np.full(gs, 9, np.float32), a,
                          np.int32(n))
    np.testing.assert_array_equal(out, suffix_ref(a.astype(np.float64), gs).astype(np.float32))


def test_the_counter_reads_are_broadcasts():
    """a[j] is one element for the whole wave in each pass: the DRAM a gather of `a` in every pass
    moved (all of a through every PE, n times) is gone."""
    n = 2000
    a = np.ones(n, np.float32)
    (out, _), ev = launch(device_env("mncore2", new=True), SRC, "suffix", n, np.zeros(n, np.float32), a, np.int32(n))
    np.testing.assert_array_equal(out, suffix_ref(a.astype(np.float64), n).astype(np.float32))
    assert ev.stats.dram_bytes < 64 * a.nbytes, ev.stats.dram_bytes


@pytest.mark.parametrize("machine, n", [("tiny", 37), ("mncore2", 40)])
def test_a_row_and_a_column_of_one_matrix(machine, n):
    """Stores to a row and a column of one matrix in a skewed loop (a lane waits until its pass
    comes, so the counter is uniform): a scatter, and a store of one contiguous span per pass."""
    a = np.arange(n, dtype=np.float32) * 0.5
    m = np.full((n, n), -1, np.float32)
    (got, _), ev = launch(device_env(machine, new=True), SRC, "upper", n, m, a, np.int32(n))
    want = m.copy()
    for i in range(n):
        k = 0
        for j in range(i + 2, n):
            want[j, i] = a[j] - a[i]
            want[i, j] = k
            k += 3
        want[i, i] = k
    np.testing.assert_array_equal(got, want)
    # the two stores may meet (the compiler cannot say where), so one pass of both claimed every
    # element: 71,379 steps on tiny; a pass each, unclaimed, 43,842
    if machine == "tiny":
        assert ev.stats.steps < 55000, ev.stats.steps


def test_a_loop_with_two_exits_is_left_alone():
    n = 500
    a = np.ones(n, np.int32)
    a[[40, 41, 300]] = 0
    (out, _), _ = launch(device_env("tiny", new=True), SRC, "last", n, np.zeros(n, np.int32), a, np.int32(n))
    zeros = np.flatnonzero(a == 0)
    want = [next((z for z in zeros if z >= i), n) for i in range(n)]
    np.testing.assert_array_equal(out, want)
