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

__kernel void tiles(__global const float *in, __global float *out, int pitch)
{
    out[get_group_id(0) * pitch + get_local_id(0)] = in[get_global_id(0)];
}

__kernel void bylid(__global const float *in, __global float *out)
{
    int lid = get_local_id(0);
    if (lid < 50)
        out[lid] = in[get_global_id(0)];      /* apart in one group, meeting across groups */
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


def run(machine, name, gs, ls, m, *extra):
    ctx, q = device_env(machine, new=True)
    prg = cl.Program(ctx, SRC).build()
    a = ((np.arange(gs) * 7) % 13 - 6).astype(np.float32)
    args = [buf(ctx, a), buf(ctx, np.full(m, -1, np.float32)), *extra]
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


def test_tiles_of_groups_apart_need_no_claims():
    """out[grp * pitch + lid]: the group and the local id are digits of their own (GROUP_DIM,
    LOCAL_DIM), so the lanes are apart when the pitch is at least the local size (a sequencer
    test); with a shorter pitch the tiles overlap and the claims pick one value per element."""
    gs, ls = 4096, 16
    g = gs // ls
    a, out, ev = run("tiny", "tiles", gs, ls, g * 20, np.int32(20))
    want = np.full(g * 20, -1, np.float32)
    want[(np.arange(gs) // ls) * 20 + np.arange(gs) % ls] = a
    np.testing.assert_array_equal(out, want)
    # claimed: 47,496 steps on tiny (8 waves); unclaimed: 24,696
    assert ev.stats.steps < 35000, ev.stats.steps
    a, out, _ = run("tiny", "tiles", gs, ls, g * 8 + 8, np.int32(8))
    for e in range(out.size):               # element e: lane 8 grp + lid for each (grp, lid) meeting there
        writers = [x for x in range(gs) if (x // ls) * 8 + x % ls == e]
        assert (out[e] == -1) if not writers else out[e] in a[writers], (e, out[e])


@pytest.mark.parametrize("gs, ls", [(64, 64), (96, 96), (300, 100), (1024, 64), (4095, 3), (1536, 384)])
def test_a_store_by_local_id(gs, ls):
    """out[lid]: one work-group's lanes are apart, so a launch of one group stores without claims;
    lanes of different groups meet, and the claims keep one of their values (the group count of
    a wave is rounded up, and one more where waves need not start at a group: tiny's wave is 512
    work-items, so 96, 100 and 3 do not tile it)."""
    a, out, ev = run("tiny", "bylid", gs, ls, 64)
    if gs == ls == 96:
        # the wave's groups bounded by its work-items, so claimed: 776 steps; one group: 491
        assert ev.stats.steps < 650, ev.stats.steps
    g = gs // ls
    for e in range(64):
        writers = [q * ls + e for q in range(g) if e < min(ls, 50)]
        if not writers:
            assert out[e] == -1, (e, out[e])
        else:
            assert out[e] in a[writers], (e, out[e], a[writers][:4])
