"""__local memory laid out like the wave (Memory.local_unit): `part[get_local_id(0) + u]` with u
uniform (a constant, a scalar argument, a work-group tree's halving or doubling counter) moves as a
contiguous share of the L2B's work-groups' blocks, where the launch's only __local block is that
argument, one 4-byte element per work-item; any other launch gathers and scatters.  Checked
against numpy on `tiny` and `mncore2`, and the loops whose counters halve or double run as
sequencer loops (Control.geometric_trips) with the trip counts C gives."""
from __future__ import annotations

import numpy as np
import pytest

import mncl as cl
import subprocess
import sys

from emulator_harness import buf, device_env, mncc_stats, read


def mncc_asm(path) -> str:
    out = path.with_suffix(".vsm")
    r = subprocess.run([sys.executable, "-m", "translator.cli", "-S", "--machine", "tiny", "-o", str(out), str(path)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return out.read_text()

TREE = """
__kernel void tree(__global const float *in, __global float *out, __local float *part)
{
    int lid = get_local_id(0);
    part[lid] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int span = get_local_size(0) / 2; span > 0; span /= 2) {
        if (lid < span)
            part[lid] += part[lid + span];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        out[get_group_id(0)] = part[0];
}
"""

SCAN = """
__kernel void scan(__global const int *in, __global int *out, __local int *a)
{
    int lid = get_local_id(0);
    a[lid] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int d = 1; d < get_local_size(0); d *= 2) {
        int v = lid >= d ? a[lid] + a[lid - d] : a[lid];
        barrier(CLK_LOCAL_MEM_FENCE);
        a[lid] = v;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    out[get_global_id(0)] = a[lid];
}
"""

SHIFTS = """
__kernel void shifts(__global const int *in, __global int *out, __local int *s, int u)
{
    int lid = get_local_id(0), n = get_local_size(0);
    if (lid % 3 != 1)                               /* a masked store: the others keep -1 */
        s[lid] = in[get_global_id(0)];
    else
        s[lid] = -1;
    barrier(CLK_LOCAL_MEM_FENCE);
    int a = lid >= 1 ? s[lid - 1] : 0;              /* odd, even and argument shifts */
    int b = lid + 3 < n ? s[lid + 3] : 0;
    int c = lid + 2 < n ? s[lid + 2] : 0;
    int d = lid + u < n ? s[lid + u] : 0;
    out[get_global_id(0)] = a * 1000000 + b * 10000 + c * 100 + d;
}
"""


SCAN2 = """
void scan_local(__local float *a, __local float *b)
{
    int lid = get_local_id(0);
    for (int d = 1; d < get_local_size(0); d *= 2) {
        b[lid] = lid >= d ? a[lid] + a[lid - d] : a[lid];
        barrier(CLK_LOCAL_MEM_FENCE);
        a[lid] = b[lid];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

__kernel void scan2(__global const float *in, __global float *out, __local float *a, __local float *b,
                    __local float *c)
{
    int lid = get_local_id(0);
    a[lid] = in[get_global_id(0)];
    c[lid] = 1.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    scan_local(a, b);
    out[get_global_id(0)] = a[lid] + c[lid];
}
"""


def tree_ref(x, ls):
    return x.reshape(-1, ls).sum(axis=1, dtype=np.float32)


def shifts_ref(x, ls, u):
    s = x.reshape(-1, ls).copy()
    s[:, 1::3] = -1
    n = ls
    out = np.zeros_like(s)
    for lid in range(n):
        a = s[:, lid - 1] if lid >= 1 else 0
        b = s[:, lid + 3] if lid + 3 < n else 0
        c = s[:, lid + 2] if lid + 2 < n else 0
        d = s[:, lid + u] if lid + u < n else 0
        out[:, lid] = a * 1000000 + b * 10000 + c * 100 + d
    return out.reshape(-1)


@pytest.mark.parametrize("machine, n, ls", [("tiny", 1024, 64), ("tiny", 512, 8), ("tiny", 256, 256),
                                            ("tiny", 96, 32), ("mncore2", 16384, 256), ("mncore2", 256, 256)])
def test_tree_reduction_matches_numpy(machine, n, ls):
    ctx, q = device_env(machine)
    prg = cl.Program(ctx, TREE).build()
    x = np.random.default_rng(n + ls).integers(-8, 8, n).astype(np.float32)
    ob = buf(ctx, np.zeros(n // ls, np.float32))
    prg.tree(q, (n,), (ls,), buf(ctx, x), ob, cl.LocalMemory(4 * ls)).wait()
    np.testing.assert_array_equal(read(q, ob, np.zeros(n // ls, np.float32)), tree_ref(x, ls))


@pytest.mark.parametrize("local_bytes", [8 * 64, 4 * 64 + 16])
def test_a_block_that_is_not_one_element_per_work_item_gathers(local_bytes):
    """A __local argument longer than the work-group puts the blocks apart from the wave's layout:
    the launch fails the plan's tests and takes the gather and scatter."""
    ctx, q = device_env("tiny")
    prg = cl.Program(ctx, TREE).build()
    n, ls = 1024, 64
    x = np.random.default_rng(3).integers(-8, 8, n).astype(np.float32)
    ob = buf(ctx, np.zeros(n // ls, np.float32))
    prg.tree(q, (n,), (ls,), buf(ctx, x), ob, cl.LocalMemory(local_bytes)).wait()
    np.testing.assert_array_equal(read(q, ob, np.zeros(n // ls, np.float32)), tree_ref(x, ls))


def test_a_static_local_array_before_the_argument_gathers():
    src = TREE.replace("int lid = get_local_id(0);", "__local float pad[4]; int lid = get_local_id(0); "
                       "if (lid < 4) pad[lid] = 0.0f;")
    ctx, q = device_env("tiny")
    prg = cl.Program(ctx, src).build()
    n, ls = 512, 32
    x = np.random.default_rng(4).integers(-8, 8, n).astype(np.float32)
    ob = buf(ctx, np.zeros(n // ls, np.float32))
    prg.tree(q, (n,), (ls,), buf(ctx, x), ob, cl.LocalMemory(4 * ls)).wait()
    np.testing.assert_array_equal(read(q, ob, np.zeros(n // ls, np.float32)), tree_ref(x, ls))


@pytest.mark.parametrize("machine, n, ls", [("tiny", 1024, 128), ("tiny", 64, 16), ("mncore2", 8192, 128)])
def test_hillis_steele_scan_matches_numpy(machine, n, ls):
    ctx, q = device_env(machine)
    prg = cl.Program(ctx, SCAN).build()
    x = np.random.default_rng(n).integers(-100, 100, n).astype(np.int32)
    ob = buf(ctx, np.zeros(n, np.int32))
    prg.scan(q, (n,), (ls,), buf(ctx, x), ob, cl.LocalMemory(4 * ls)).wait()
    np.testing.assert_array_equal(read(q, ob, np.zeros(n, np.int32)), np.cumsum(x.reshape(-1, ls), axis=1).reshape(-1))


@pytest.mark.parametrize("machine, n, ls, sizes", [
    ("tiny", 1024, 64, (1, 1, 1)),        # three arrays laid out like the wave, one after another
    ("tiny", 1000, 8, (1, 1, 1)),         # (a partial wave)
    ("tiny", 512, 64, (1, 2, 1)),         # b twice as long: the blocks side by side, gathered
    ("mncore2", 8192, 128, (1, 1, 1))])
def test_several_local_arrays_match_numpy(machine, n, ls, sizes):
    ctx, q = device_env(machine)
    prg = cl.Program(ctx, SCAN2).build()
    x = np.random.default_rng(n + ls).integers(-100, 100, n).astype(np.float32)
    ob = buf(ctx, np.zeros(n, np.float32))
    prg.scan2(q, (n,), (ls,), buf(ctx, x), ob, *(cl.LocalMemory(4 * ls * z) for z in sizes)).wait()
    want = np.cumsum(x.reshape(-1, ls), axis=1).reshape(-1) + 1
    np.testing.assert_array_equal(read(q, ob, np.zeros(n, np.float32)), want)


@pytest.mark.parametrize("machine, ls, u", [("tiny", 64, 5), ("tiny", 32, 0), ("tiny", 128, 64), ("mncore2", 64, 7)])
def test_shifted_and_masked_accesses_match_numpy(machine, ls, u):
    ctx, q = device_env(machine)
    prg = cl.Program(ctx, SHIFTS).build()
    n = 1024
    x = np.random.default_rng(ls + u).integers(0, 99, n).astype(np.int32)
    ob = buf(ctx, np.zeros(n, np.int32))
    prg.shifts(q, (n,), (ls,), buf(ctx, x), ob, cl.LocalMemory(4 * ls), np.int32(u)).wait()
    np.testing.assert_array_equal(read(q, ob, np.zeros(n, np.int32)), shifts_ref(x, ls, u))


def test_stats_name_the_unit_plan(tmp_path):
    err = mncc_stats(tmp_path / "tree.cl", TREE, "--machine", "tiny")
    assert "unit plan: the L2B's work-groups' blocks loaded as a contiguous share, shifted" in err, err
    assert "unit plan: the wave's share stored into the L2B's work-groups' blocks" in err, err


def test_the_tree_moves_a_share_per_level_not_the_scratch():
    """Each level of the tree moves the L2B's share once (a load, a shifted load, a store) instead
    of streaming every work-group's block through every PE (gather and scatter)."""
    n, ls = 16384, 256
    x = np.ones(n, np.float32)
    cycles = {}
    for lbytes in (4 * ls, 8 * ls):             # the plan, and the same kernel gathering
        ctx, q = device_env("mncore2", new=True)
        prg = cl.Program(ctx, TREE).build()
        ob = buf(ctx, np.zeros(n // ls, np.float32))
        ev = prg.tree(q, (n,), (ls,), buf(ctx, x), ob, cl.LocalMemory(lbytes))
        ev.wait()
        np.testing.assert_array_equal(read(q, ob, np.zeros(n // ls, np.float32)), np.full(n // ls, ls, np.float32))
        cycles[lbytes] = ev.stats.cycles
    assert cycles[4 * ls] * 2 < cycles[8 * ls], cycles


HALVING = """
__kernel void trips(__global int *out, int n, int lo)
{
    int i = get_global_id(0), g = get_global_size(0), c = 0, last = 0;
    for (int s = g / 2; s > 0; s /= 2) { c++; last = s; }
    out[5 * i] = c * 1000 + last;
    c = 0; last = 0;
    for (int s = g; s >= 4; s >>= 2) { c++; last = s; }
    out[5 * i + 1] = c * 1000 + last;
    c = 0; last = 0;
    for (int d = 1; d < n; d *= 2) { c++; last = d; }
    out[5 * i + 2] = c * 1000 + last;
    c = 0; last = 0;
    for (int d = 3; d <= n; d <<= 1) { c++; last = d; }
    out[5 * i + 3] = c * 1000 + last;
    c = 0; last = 0;
    for (unsigned s = (unsigned)g; s != 0; s >>= 1) { c++; last = (int)s; }
    out[5 * i + 4] = c * 1000 + last;
}
"""


def trips_ref(g, n, lo):
    def count(start, stay, step):
        c = last = 0
        s = start
        while stay(s):
            c, last, s = c + 1, s, step(s)
        return c * 1000 + last
    return [count(g // 2, lambda s: s > 0, lambda s: s // 2),
            count(g, lambda s: s >= 4, lambda s: s >> 2),
            count(1, lambda d: d < n, lambda d: d * 2),
            count(3, lambda d: d <= n, lambda d: d << 1),
            count(g, lambda s: s != 0, lambda s: s >> 1)]


@pytest.mark.parametrize("g, n, lo", [(256, 256, 1), (1000, 1000, 3), (1, 1, 1), (7, 0, 8), (33, -5, 1),
                                      (5, 1 << 30, 2)])
def test_halving_and_doubling_loops_count_as_c_does(tmp_path, g, n, lo):
    """Counters halved from a launch size, or doubled from a constant up to an argument, are
    sequencer loops with C's trip counts (the last loop, which LLVM counts down by its own trip
    count, stays a `.while any`)."""
    ctx, q = device_env("tiny")
    prg = cl.Program(ctx, HALVING).build()
    ob = buf(ctx, np.zeros(5 * g, np.int32))
    prg.trips(q, (g,), None, ob, np.int32(n), np.int32(lo)).wait()
    got = read(q, ob, np.zeros(5 * g, np.int32)).reshape(g, 5)
    assert (got == np.array(trips_ref(g, n, lo), np.int32)).all(), (got[0], trips_ref(g, n, lo))
    if g == 256:
        (tmp_path / "t.cl").write_text(HALVING)
        asm = mncc_asm(tmp_path / "t.cl")
        assert asm.count(".while") == 1 and asm.count(".loop %n") >= 4, asm


def test_a_small_work_group_launch_runs_in_a_narrow_wave():
    """One work-group of 256 on mncore2 (a wave holds 32,768): the launch narrows as one without
    __local memory does (its groups tile the narrowed L2B runs), so each level of the tree moves
    the narrow wave's shares, not a full wave's (~3 MB of DRAM in the full wave)."""
    n = ls = 256
    ctx, q = device_env("mncore2", new=True)
    prg = cl.Program(ctx, TREE).build()
    x = np.arange(n, dtype=np.float32)
    ob = buf(ctx, np.zeros(1, np.float32))
    ev = prg.tree(q, (n,), (ls,), buf(ctx, x), ob, cl.LocalMemory(4 * ls))
    ev.wait()
    assert read(q, ob, np.zeros(1, np.float32))[0] == x.sum()
    assert ev.stats.dram_bytes < 1 << 20, ev.stats.dram_bytes


MIXED = """
__kernel void mixed(__global const int *in, __global int *out, __local int *s)
{
    int lid = get_local_id(0), n = get_local_size(0);
    s[lid] = in[get_global_id(0)];                  /* the unit plan */
    barrier(CLK_LOCAL_MEM_FENCE);
    int p = (lid * 7) % n;                          /* a permutation: gathered and scattered */
    int v = s[p];
    barrier(CLK_LOCAL_MEM_FENCE);
    s[p] = v * 10 + lid;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = s[lid] - (lid + 1 < n ? s[lid + 1] : 0);   /* the unit plan again */
}
"""


@pytest.mark.parametrize("machine, ls", [("tiny", 64), ("mncore2", 128)])
def test_unit_and_gathered_accesses_of_one_array_agree(machine, ls):
    ctx, q = device_env(machine)
    prg = cl.Program(ctx, MIXED).build()
    n = 1024
    x = np.random.default_rng(ls).integers(0, 1000, n).astype(np.int32)
    ob = buf(ctx, np.zeros(n, np.int32))
    prg.mixed(q, (n,), (ls,), buf(ctx, x), ob, cl.LocalMemory(4 * ls)).wait()
    s = x.reshape(-1, ls).copy()
    lid = np.arange(ls)
    p = (lid * 7) % ls
    t = np.empty_like(s)
    t[:, p] = s[:, p] * 10 + lid
    nxt = np.concatenate([t[:, 1:], np.zeros((t.shape[0], 1), np.int32)], axis=1)
    np.testing.assert_array_equal(read(q, ob, np.zeros(n, np.int32)), (t - nxt).reshape(-1))
