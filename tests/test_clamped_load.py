"""Clamped neighbours in a 1-D build (Memory.clamped_load): `a[min(i + 1, n - 1)]`,
`a[max(i - 1, 0)]` and `i > 0 ? a[i - 1] : a[i]` are two contiguous, shifted or uniform loads with
a choice per lane, not a gather of all of `a`.  Checked against numpy, with the clamp inside and
outside the launch, in a loop, with 64-bit indices, and with an index out of bounds, which is
still reported."""
from __future__ import annotations

import numpy as np
import pytest

import mncl as cl
from emulator_harness import device_env, launch

SRC = """
__kernel void right(__global const float *a, __global float *b, int n)
{ int i = get_global_id(0); b[i] = a[min(i + 1, n - 1)] - a[i]; }

__kernel void left(__global const float *a, __global float *b, int n)
{ int i = get_global_id(0); b[i] = a[max(i - 1, 0)] + 2.0f * a[min(i, n - 1)]; }

__kernel void pick(__global const float *a, __global float *b, int n)
{ int i = get_global_id(0); b[i] = i > 0 ? a[i - 1] : a[i]; }

__kernel void wide(__global const float *a, __global float *b, ulong n)
{ size_t i = get_global_id(0); b[i] = a[min(i + 2, n - 1)]; }

__kernel void smooth(__global const float *a, __global float *b, int n, int steps)
{
    int i = get_global_id(0);
    float s = 0.0f;
    for (int t = 0; t < steps; t++)
        s += a[max(i - t, 0)] * (float)(t + 1);
    b[i] = s;
}
"""


def clamp(x, n):
    return np.clip(x, 0, n - 1)


@pytest.mark.parametrize("machine, gs", [("tiny", 300), ("tiny", 1000), ("mncore2", 5000)])
def test_clamped_neighbours_match_numpy(machine, gs):
    env = device_env(machine, new=True)
    a = ((np.arange(gs) * 7) % 13 - 6).astype(np.float32)
    i = np.arange(gs)
    for name, n, want in [("right", gs, a[clamp(i + 1, gs)] - a),
                          ("right", gs // 2, None),
                          ("left", gs, a[clamp(i - 1, gs)] + 2 * a[clamp(i, gs)]),
                          ("pick", gs, a[np.where(i > 0, i - 1, i)])]:
        if want is None:             # the clamp inside the launch: lanes past n read a[n - 1]
            want = a[np.minimum(i + 1, n - 1)] - a
        (_, out), ev = launch(env, SRC, name, gs, a, np.zeros(gs, np.float32), np.int32(n))
        np.testing.assert_array_equal(out, want.astype(np.float32), err_msg=f"{name} n={n}")
    (_, out), _ = launch(env, SRC, "wide", gs, a, np.zeros(gs, np.float32), np.uint64(gs))
    np.testing.assert_array_equal(out, a[clamp(i + 2, gs)])


def test_in_a_loop_and_without_a_gather():
    gs, steps = 700, 5
    a = (np.arange(gs) % 9 - 4).astype(np.float32)
    (_, out), ev = launch(device_env("tiny", new=True), SRC, "smooth", gs, a, np.zeros(gs, np.float32),
                                np.int32(gs), np.int32(steps))
    i = np.arange(gs)
    want = sum(a[np.maximum(i - t, 0)] * (t + 1) for t in range(steps))
    np.testing.assert_array_equal(out, want.astype(np.float32))
    # `a[max(i - t, 0)]` gathered in every pass: 1,293 steps; a shifted and a uniform load: 516
    assert ev.stats.steps < 800, ev.stats.steps


def test_an_index_past_the_end_is_still_reported():
    """The bounds are checked on the address each lane takes, not on the two loads."""
    gs = 300
    a = np.ones(gs, np.float32)
    with pytest.raises(cl.MemoryError, match=rf"kernel 'right' accessed out of bounds at line 3: index {gs} of "
                                             r"the buffer passed as argument 0"):
        launch(device_env("tiny", new=True), SRC, "right", gs, a, np.zeros(gs, np.float32), np.int32(gs + 1))
