"""Issue 19 item 4: several work-items storing to one element leave one of the stored values.

The emulator device's scatter sums the changes the PEs make to a chunk of the buffer; before
the claim pass (Scatter.claim_winners (scatter.py)) two PEs storing to one element left the sum of their
changes.  Each kernel here stores from many work-items to repeated, data-given indices, and
each result is checked against numpy: an element holds one of the values stored to it (or its
old value where nobody stored), narrow stores to different bytes of one word all land, and a
breadth-first search with same-value races gives numpy's levels.  On the tiny machine.
"""
from __future__ import annotations

import numpy as np
import pytest

import mncl as cl


def run(tiny_env, src, kernel, gsize, *arrays, out):
    """Launch ``kernel`` over arrays as buffers; returns the array at position ``out``, read back."""
    ctx, q = tiny_env
    mf = cl.mem_flags
    bufs = [cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=a) for a in arrays]
    getattr(cl.Program(ctx, src).build(), kernel)(q, gsize, None, *bufs)
    res = np.empty_like(arrays[out])
    cl.enqueue_copy(q, res, bufs[out])
    return res


def assert_one_stored_value(out, old, idx, vals):
    """Each element holds one of the values stored to it, or its old value where none was."""
    for e in range(len(out)):
        stored = vals[idx == e]
        if len(stored) == 0:
            assert out[e] == old[e], f"element {e}: nobody stored to it, it holds {out[e]}, was {old[e]}"
        else:
            assert out[e] in stored, f"element {e} holds {out[e]}, not one of the {len(stored)} stored values"


TYPES = [("int", np.int32), ("float", np.float32), ("char", np.int8), ("short", np.int16),
         ("long", np.int64), ("uchar", np.uint8)]


@pytest.mark.parametrize("ctype, dt", TYPES, ids=[t for t, _ in TYPES])
def test_writers_with_different_values_leave_one_of_them(tiny_env, ctype, dt):
    n, m = 512, 40                   # about 13 writers per element, some elements untouched
    rng = np.random.default_rng(19)
    idx = rng.integers(0, m, n).astype(np.int32)
    idx[idx == 5] = 6                # element 5: nobody stores to it
    vals = (rng.integers(1, 100, n) * (1 if dt != np.float32 else 0.5)).astype(dt)
    old = np.full(m, 3, dt)
    src = f"""__kernel void k(__global const int *idx, __global const {ctype} *v, __global {ctype} *o) {{
        int i = get_global_id(0);
        o[idx[i]] = v[i];
    }}"""
    out = run(tiny_env, src, "k", (n,), idx, vals, old, out=2)
    assert_one_stored_value(out, old, idx, vals)


@pytest.mark.parametrize("ctype, dt", [("char", np.int8), ("short", np.int16)])
def test_narrow_stores_to_neighbouring_bytes_all_land(tiny_env, ctype, dt):
    """Different work-items (different PEs) store to different bytes of one word: all of them land."""
    n = 512
    perm = np.random.default_rng(3).permutation(n).astype(np.int32)
    vals = (np.arange(n) * 7 + 1).astype(dt)
    src = f"""__kernel void k(__global const int *p, __global const {ctype} *v, __global {ctype} *o) {{
        int i = get_global_id(0);
        o[p[i]] = v[i];
    }}"""
    out = run(tiny_env, src, "k", (n,), perm, vals, np.zeros(n, dt), out=2)
    want = np.zeros(n, dt)
    want[perm] = vals
    np.testing.assert_array_equal(out, want)


def test_bytes_of_one_word_with_several_writers_each(tiny_env):
    """Many writers to each byte of a few words: each byte one of its values, every byte written."""
    n, m = 512, 16
    idx = np.random.default_rng(5).integers(0, m, n).astype(np.int32)
    vals = (np.arange(n) % 120 + 1).astype(np.int8)
    src = """__kernel void k(__global const int *idx, __global const char *v, __global char *o) {
        int i = get_global_id(0);
        o[idx[i]] = v[i];
    }"""
    out = run(tiny_env, src, "k", (n,), idx, vals, np.zeros(m, np.int8), out=2)
    assert_one_stored_value(out, np.zeros(m, np.int8), idx, vals)


def test_two_stores_of_a_work_item_keep_program_order(tiny_env):
    """A work-item's later store to an element outranks its earlier one (a batch of two stores)."""
    n, m = 512, 32
    idx = np.random.default_rng(11).integers(0, m, n).astype(np.int32)
    src = """__kernel void k(__global const int *idx, __global int *o) {
        int i = get_global_id(0);
        o[idx[i]] = -1 - i;
        o[idx[i]] = 1000 + i;
    }"""
    out = run(tiny_env, src, "k", (n,), idx, np.zeros(m, np.int32), out=1)
    assert_one_stored_value(out, np.zeros(m, np.int32), idx, 1000 + np.arange(n, dtype=np.int32))


BFS = r"""
__kernel void expand(__global const int *start, __global const int *degree, __global const int *edges,
                     __global char *frontier, __global char *updating, __global const char *visited,
                     __global int *cost, int n)
{
    int v = get_global_id(0);
    if (v < n && frontier[v]) {
        frontier[v] = 0;
        for (int e = start[v]; e < start[v] + degree[v]; e++) {
            int w = edges[e];
            if (!visited[w]) {
                cost[w] = cost[v] + 1;          /* many work-items, one value: a benign race */
                updating[w] = 1;
            }
        }
    }
}

__kernel void settle(__global char *frontier, __global char *updating, __global char *visited,
                     __global int *more, int n)
{
    int v = get_global_id(0);
    if (v < n && updating[v]) {
        frontier[v] = 1;
        visited[v] = 1;
        more[0] = 1;
        updating[v] = 0;
    }
}
"""


def test_bfs_with_same_value_races_gives_numpy_levels(tiny_env):
    """A breadth-first search in the shape of Rodinia's: a level's frontier nodes all store
    cost + 1 to their shared neighbours, and set their byte flags."""
    ctx, q = tiny_env
    n, deg = 300, 6
    rng = np.random.default_rng(8)
    edges = rng.integers(0, n, (n, deg)).astype(np.int32)
    edges[:, 0] = (np.arange(n) + 1) % n          # a ring: every node is reached
    start = (np.arange(n) * deg).astype(np.int32)
    degree = np.full(n, deg, np.int32)
    want = np.full(n, -1, np.int32)                # numpy's levels
    want[0], level, front = 0, 0, np.array([0])
    while len(front):
        nxt = np.unique(edges[front].ravel())
        nxt = nxt[want[nxt] < 0]
        want[nxt] = level + 1
        level, front = level + 1, nxt
    mf = cl.mem_flags
    buf = lambda a: cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=a)
    frontier, visited = np.zeros(n, np.int8), np.zeros(n, np.int8)
    frontier[0] = visited[0] = 1
    cost = np.full(n, -1, np.int32)
    cost[0] = 0
    b = dict(start=buf(start), degree=buf(degree), edges=buf(edges.ravel()), frontier=buf(frontier),
             updating=buf(np.zeros(n, np.int8)), visited=buf(visited), cost=buf(cost),
             more=buf(np.zeros(1, np.int32)))
    prg = cl.Program(ctx, BFS).build()
    for _ in range(n):
        cl.enqueue_copy(q, b["more"], np.zeros(1, np.int32))
        prg.expand(q, (n,), None, b["start"], b["degree"], b["edges"], b["frontier"], b["updating"],
                   b["visited"], b["cost"], np.int32(n))
        prg.settle(q, (n,), None, b["frontier"], b["updating"], b["visited"], b["more"], np.int32(n))
        more = np.empty(1, np.int32)
        cl.enqueue_copy(q, more, b["more"])
        if not more[0]:
            break
    cl.enqueue_copy(q, cost, b["cost"])
    np.testing.assert_array_equal(cost, want)


@pytest.mark.parametrize("ctype, dt", [("char", np.int8), ("short", np.int16)])
def test_narrow_stores_at_the_global_id_skip_the_claims_and_all_land(tiny_env, ctype, dt):
    """Every work-item its own element (affine index): no claims (may_collide), every byte lands."""
    n = 512
    vals = (np.arange(n) * 5 + 3).astype(dt)
    src = f"""__kernel void k(__global const {ctype} *v, __global {ctype} *o) {{
        int i = get_global_id(0);
        o[i] = v[i] + 1;
    }}"""
    out = run(tiny_env, src, "k", (n,), vals, np.zeros(n, dt), out=1)
    np.testing.assert_array_equal(out, (vals + 1).astype(dt))


def test_stores_at_the_first_global_id_of_a_2d_launch_leave_one_value(tiny_env):
    """o[x] from a 2-D launch: the index is affine in get_global_id(0), but the rows collide."""
    nx, ny = 64, 8
    src = """__kernel void k(__global int *o) {
        o[get_global_id(0)] = 1000 * get_global_id(1) + get_global_id(0);
    }"""
    out = run(tiny_env, src, "k", (nx, ny), np.zeros(nx, np.int32), out=0)
    assert ((out % 1000 == np.arange(nx)) & (out // 1000 < ny)).all(), out


def test_stores_at_the_global_id_with_an_offset_land(tiny_env):
    """A 1-D launch with a global offset (the general form): every work-item its own element."""
    ctx, q = tiny_env
    n, off = 300, 20
    prg = cl.Program(ctx, """__kernel void k(__global int *o) {
        int i = get_global_id(0); o[i] = 3 * i; }""").build()
    ob = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=np.zeros(n + off, np.int32))
    prg.k(q, (n,), None, ob, global_offset=(off,))
    out = np.empty(n + off, np.int32)
    cl.enqueue_copy(q, out, ob)
    np.testing.assert_array_equal(out, np.where(np.arange(n + off) >= off, 3 * np.arange(n + off), 0))


def test_two_stores_whose_elements_meet_across_work_items_leave_one_value(tiny_env):
    """o[i] = 1 and o[i + 1] = 2 in one batch: work-item i's second store meets work-item i + 1's
    first (each store alone is every work-item its own element)."""
    n = 256
    src = """__kernel void k(__global int *o) {
        int i = get_global_id(0);
        o[i] = 1;
        o[i + 1] = 2;
    }"""
    out = run(tiny_env, src, "k", (n,), np.zeros(n + 1, np.int32), out=0)
    assert out[0] == 1 and out[n] == 2 and np.isin(out[1:n], (1, 2)).all(), out


def test_vector_stores_at_the_global_id_land(tiny_env):
    """vstore4 at 4 i + 1 and 4 i + 3 (short4: the elements of neighbouring work-items interleave,
    never meet): no claims needed, every element lands."""
    n = 128
    src = """__kernel void k(__global short *o) {
        int i = get_global_id(0);
        short4 v = (short4)(i, i + 1, i + 2, i + 3);
        vstore4(v, 2 * i, o);
        vstore4(v * (short)2, 2 * i + 1, o);
    }"""
    out = run(tiny_env, src, "k", (n,), np.zeros(8 * n, np.int16), out=0)
    i = np.arange(n)[:, None] + np.arange(4)
    want = np.concatenate([i, 2 * i], axis=1).ravel().astype(np.int16)
    np.testing.assert_array_equal(out, want)


def test_a_buffer_gathered_in_a_loop_and_stored_by_many_keeps_one_value(tiny_env):
    """A small buffer a loop gathers may stay resident in LM0 for the wave, where each PE's changes
    are summed at its end: one that several work-items store to stays in DRAM (claims) unless the
    launch has one work-item."""
    n, m = 300, 4
    keys = np.random.default_rng(4).integers(0, 1000, n).astype(np.int32)
    src = """__kernel void k(__global const int *keys, __global int *o, __global int *s, const int m) {
        int i = get_global_id(0), t = 0;
        for (int k = 0; k < m; k++)
            t += o[(keys[i] + k) & 15] & 1;
        s[i] = t;
        o[keys[i] & 15] = 1000 + i;
    }"""
    ctx, q = tiny_env
    old = np.full(16, 3, np.int32)
    bufs = [cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=a)
            for a in (keys, old, np.zeros(n, np.int32))]
    cl.Program(ctx, src).build().k(q, (n,), None, *bufs, np.int32(m))
    out = np.empty_like(old)
    cl.enqueue_copy(q, out, bufs[1])
    assert_one_stored_value(out, old, keys & 15, 1000 + np.arange(n, dtype=np.int32))


@pytest.mark.slow
def test_racing_stores_on_mncore2_leave_one_value():
    """The claims across MN-Core 2's four groups (mvr into group 0's PDM, mvb back): int and char."""
    ctx = cl.Context([cl.get_device(machine="mncore2")])
    env2 = (ctx, cl.CommandQueue(ctx))
    n, m = 4096, 100
    idx = np.random.default_rng(1).integers(0, m, n).astype(np.int32)
    vals = (np.arange(n) + 1000).astype(np.int32)
    src = """__kernel void k(__global const int *idx, __global const int *v, __global int *o) {
        int i = get_global_id(0);
        o[idx[i]] = v[i];
    }"""
    out = run(env2, src, "k", (n,), idx, vals, np.zeros(m, np.int32), out=2)
    assert_one_stored_value(out, np.zeros(m, np.int32), idx, vals)
    src = """__kernel void k(__global const int *idx, __global char *o) {
        int i = get_global_id(0);
        o[idx[i]] = (char)(i & 127);
    }"""
    out = run(env2, src, "k", (n,), idx, np.zeros(m, np.int8), out=1)
    assert_one_stored_value(out, np.zeros(m, np.int8), idx, (np.arange(n) & 127).astype(np.int8))
