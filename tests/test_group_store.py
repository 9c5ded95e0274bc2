"""A store by one lane of each work-group, `if (lid == 0) out[get_group_id(0)] = part[0]` (every
reduction's last line): distinct groups store to distinct elements, so the scatter needs no claim
pass (scatter.lone_in_group, idforms.GROUP_DIM).  Checked against numpy on several waves and
group sizes, with the early-return spelling, and with stores where two lanes may meet, which
keep their claims."""
from __future__ import annotations

import numpy as np
import pytest

import mncl as cl
from emulator_harness import buf, device_env

SRC = """
__kernel void sums(__global const float *in, __global float *out, __local float *part)
{
    int lid = get_local_id(0);
    part[lid] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        float s = 0.0f;
        for (int j = 0; j < 4; j++)
            s += part[j];
        out[get_group_id(0)] = s;
    }
}

__kernel void first(__global const float *in, __global float *out)
{
    if (get_local_id(0) != 0)
        return;
    out[2 * get_group_id(0) + 1] = in[get_global_id(0)];
}

__kernel void halves(__global const float *in, __global float *out)
{
    if (get_local_id(0) == 0)
        out[get_group_id(0) / 2] = in[get_global_id(0)];     /* two groups to one element */
}

__kernel void two(__global const float *in, __global float *out)
{
    if (get_local_id(0) < 2)                                  /* two lanes of a group meet */
        out[get_group_id(0)] = in[get_global_id(0)];
}
"""


def run(machine, name, gs, ls, m):
    ctx, q = device_env(machine, new=True)
    prg = cl.Program(ctx, SRC).build()
    a = ((np.arange(gs) * 7) % 13 - 6).astype(np.float32)
    args = [buf(ctx, a), buf(ctx, np.full(m, -1, np.float32))]
    if name == "sums":
        args.append(cl.LocalMemory(4 * ls))
    ev = getattr(prg, name)(q, (gs,), (ls,), *args)
    out = np.empty(m, np.float32)
    cl.enqueue_copy(q, out, args[1])
    return a, out, ev


@pytest.mark.parametrize("machine, gs, ls", [("tiny", 512, 8), ("tiny", 4096, 16), ("mncore2", 32768, 64)])
def test_one_store_per_group(machine, gs, ls):
    g = gs // ls
    a, out, _ = run(machine, "sums", gs, ls, g)
    np.testing.assert_array_equal(out, a.reshape(g, ls)[:, :4].sum(axis=1))
    a, out, _ = run(machine, "first", gs, ls, 2 * g)
    want = np.full(2 * g, -1, np.float32)
    want[1::2] = a[::ls]
    np.testing.assert_array_equal(out, want)


def test_the_claim_pass_is_gone():
    # with the claim pass: 8,246 steps on tiny (8 waves); without: 5,221
    _, _, ev = run("tiny", "sums", 4096, 16, 256)
    assert ev.stats.steps < 6500, ev.stats.steps


def test_stores_that_may_meet_keep_their_claims():
    gs, ls = 512, 8
    a, out, _ = run("tiny", "halves", gs, ls, gs // ls // 2)
    firsts = a[::ls]
    for e in range(out.size):                 # one of the two groups' values, not their sum
        assert out[e] in (firsts[2 * e], firsts[2 * e + 1]), (e, out[e])
    a, out, _ = run("tiny", "two", gs, ls, gs // ls)
    for e in range(out.size):
        assert out[e] in (a[e * ls], a[e * ls + 1]), (e, out[e])
