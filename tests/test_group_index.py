"""`get_group_id(0) * get_local_size(0) + get_local_id(0)`, the usual way OpenCL code spells the
global id, is the global id in a 1-D build (no global offset): a contiguous load and store, not a
gather and a scatter of the whole buffer (IntSel.global_id_sum).  Checked against numpy with int
and size_t arithmetic, either order, several waves and groups, and with a global offset, where
the sum is not the global id and the general path runs."""
from __future__ import annotations

import numpy as np
import pytest

import mncl as cl
from emulator_harness import buf, device_env

SRC = """
__kernel void twice(__global const float *a, __global float *b)
{
    int i = get_group_id(0) * get_local_size(0) + get_local_id(0);
    b[i] = a[i] * 2.0f + (float)get_local_id(0);
}

__kernel void wide(__global const float *a, __global float *b)
{
    size_t i = get_local_id(0) + get_local_size(0) * get_group_id(0);
    b[i] = a[i] - 1.0f;
}
"""


def run(machine, name, gs, ls, offset=None):
    ctx, q = device_env(machine, new=True)
    prg = cl.Program(ctx, SRC).build()
    n = gs + (offset or 0)
    a = ((np.arange(n) * 5) % 17 - 8).astype(np.float32)
    ab, bb = buf(ctx, a), buf(ctx, np.full(n, -7, np.float32))
    kw = {"global_offset": (offset,)} if offset else {}
    ev = getattr(prg, name)(q, (gs,), (ls,), ab, bb, **kw)
    ev.wait()
    out = np.empty(n, np.float32)
    cl.enqueue_copy(q, out, bb)
    return a, out, ev


@pytest.mark.parametrize("machine, gs, ls", [("tiny", 96, 32), ("tiny", 1000, 8), ("mncore2", 12288, 128)])
def test_the_group_sum_is_the_global_id(machine, gs, ls):
    a, out, ev = run(machine, "twice", gs, ls)
    np.testing.assert_array_equal(out, a * 2 + np.arange(gs) % ls)
    a, out, _ = run(machine, "wide", gs, ls)
    np.testing.assert_array_equal(out, a - 1)


def test_contiguous_not_gathered():
    # a gather of `a` and a scatter of `b` over 8 waves of tiny: 10,895 steps; contiguous: 613
    _, _, ev = run("tiny", "twice", 2048, 16)
    assert ev.stats.steps < 2000, ev.stats.steps


def test_with_a_global_offset_the_sum_is_not_the_global_id():
    """With an offset the launch takes another build, where the sum is computed as written:
    work-item g of the launch writes b[g - offset]."""
    gs, ls, off = 96, 32, 64
    a, out, _ = run("tiny", "twice", gs, ls, offset=off)
    want = np.full(gs + off, -7, np.float32)
    want[:gs] = a[:gs] * 2 + np.arange(gs) % ls
    np.testing.assert_array_equal(out, want)
