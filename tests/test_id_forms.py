"""Stores whose lanes provably never meet skip the scatter's claims (translator/backend/idforms.py).

The claims (issue 19 item 4) made `__local` stores by local id and 2-D `out[y * W + x]` stores
several times slower; an index affine in the work-item ids whose lanes cannot meet, under a
condition on the launch the sequencer tests, now skips them.  Checked three ways: the forms and
conditions themselves; cycles (a launch whose stores cannot meet costs no more than the same
kernel's 1-D, gid-affine store); and results where lanes do meet (a 2-D work-group storing by
local id 0 only, rows of a 2-D store that overlap), which must still leave one stored value.
"""
from __future__ import annotations

import numpy as np
import pytest

import mncl as cl
from translator.backend import idforms

X = ("id", 0, 0, None, None)
Y = ("id", 1, 0, None, None)


def ext(*sizes):
    return lambda d: sizes[d] if isinstance(sizes[d], int) else f"%{sizes[d]}"


def test_a_unit_stride_index_is_one_to_one_when_the_other_dimensions_are_one_wide():
    assert idforms.injective({X: 4}, 4, ext(64, 1, 1)) == []
    assert idforms.injective({X: 4}, 4, ext("lsx", 1, 1)) == ["4 * (%lsx - 1) < 2147483648"]
    assert idforms.injective({X: 4}, 4, ext(64, "lsy", 1)) == ["%lsy == 1"]
    assert idforms.injective({X: 2}, 4, ext("lsx", 1, 1)) is None           # overlapping elements
    assert idforms.injective({X: 4}, 4, ext("lsx", 1, 1), most=1024) == []  # a wave cannot wrap 32 bits


def test_rows_are_apart_when_the_pitch_covers_a_row():
    f = {X: 4, ("id", 1, 0, None, "%p2"): 4, 1: 8}
    assert idforms.injective(f, 4, ext("gx", "gy", 1)) == ["4 * (%gx - 1) + 4 * (%p2) * (%gy - 1) < 2147483648",
                                                           "4 * (%p2) >= 4 * %gx"]


def test_a_multiple_of_an_id_that_wraps_32_bits_is_not_one_to_one():
    """gid * 0x80000000u in 32-bit arithmetic is 0 or 2^31: lanes meet though the form's coefficients
    are apart."""
    assert idforms.injective({X: 1 << 31}, 4, ext(64, 1, 1)) is None


def test_bit_fields_of_one_id_must_cover_all_its_bits():
    hi, lo = ("id", 0, 3, None, None), ("id", 0, 0, 3, None)
    assert idforms.injective({hi: 512, lo: 8}, 8, ext(512, 1, 1)) == []
    assert idforms.injective({lo: 8}, 8, ext("lsx", 1, 1)) is None           # t & 7 alone repeats
    assert idforms.injective({hi: 32, lo: 8}, 8, ext("lsx", 1, 1)) is None   # digits overlap


def test_two_stores_of_a_batch_meet_only_within_the_span():
    assert idforms.meet({X: 24, 1: 4}, {X: 24, 1: 8}, 4, 4, ext("gx", 1, 1)) == []   # o[6i+1], o[6i+2]
    assert idforms.meet({X: 8}, {X: 8, 1: 512}, 8, 8, ext("lsx", 1, 1)) == [(512, "8 * (%lsx - 1)")]
    assert idforms.meet({X: 8}, {Y: 8}, 8, 8, ext("lsx", "lsy", 1)) is None


def run(ctx, q, src, gsize, lsize, *arrays, out=0):
    mf = cl.mem_flags
    bufs = [cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=a) if isinstance(a, np.ndarray) else a
            for a in arrays]
    ev = cl.Program(ctx, src).build().k(q, gsize, lsize, *bufs)
    ev.wait()
    res = np.empty_like(arrays[out])
    cl.enqueue_copy(q, res, bufs[out])
    return res, ev


LOCAL_BY_X = """__kernel void k(__global int *o) {
    __local int t[64];
    int x = get_local_id(0), y = get_local_id(1);
    t[x] = 100 * y + x;
    barrier(CLK_LOCAL_MEM_FENCE);
    o[get_global_id(1) * get_global_size(0) + get_global_id(0)] = t[x];
}"""


def test_local_stores_that_meet_in_a_2d_group_still_leave_one_value(tiny_env):
    ctx, q = tiny_env
    out, _ = run(ctx, q, LOCAL_BY_X, (16, 4), (16, 4), np.zeros(64, np.int32))
    out = out.reshape(4, 16)
    x = np.arange(16)
    assert ((out - x) % 100 == 0).all() and ((out - x) // 100 < 4).all(), out   # some row's value
    assert (out == out[0]).all()                                               # the same in every row


def test_local_stores_by_local_id_in_a_1d_group_skip_the_claims(tiny_env):
    """The same kernel in 1-D groups: no two lanes meet, and it costs less than the same launch
    storing through an index the compiler cannot prove one-to-one ((5 x) % 16, which is), whose
    stores must claim."""
    ctx, q = tiny_env
    flat, ev1 = run(ctx, q, LOCAL_BY_X, (64,), (16,), np.zeros(64, np.int32))
    np.testing.assert_array_equal(flat, np.tile(np.arange(16), 4))
    claiming = LOCAL_BY_X.replace("t[x] = 100", "t[(x * 5) % 16] = 100").replace("= t[x];", "= t[(x * 5) % 16];")
    flat2, ev2 = run(ctx, q, claiming, (64,), (16,), np.zeros(64, np.int32))
    np.testing.assert_array_equal(flat2, flat)
    assert ev1.stats.cycles < 0.9 * ev2.stats.cycles, (ev1.stats.cycles, ev2.stats.cycles)


ROWS = """__kernel void k(__global int *o, int pitch) {
    int x = get_global_id(0), y = get_global_id(1);
    o[y * pitch + x] = 1000 * y + x;
}"""


@pytest.mark.parametrize("pitch", [16, 20, 8, 4])
def test_rows_stored_with_a_pitch_are_right_whether_or_not_they_overlap(tiny_env, pitch):
    """pitch >= the row's 16 work-items: no lanes meet, no claims; below it rows overlap and the
    claims run (an element holds one writer's value, not the sum of their changes)."""
    ctx, q = tiny_env
    n = 3 * pitch + 16
    out, _ = run(ctx, q, ROWS, (16, 4), None, np.full(n, -1, np.int32), np.int32(pitch))
    writers = {}
    for y in range(4):
        for x in range(16):
            writers.setdefault(y * pitch + x, []).append(1000 * y + x)
    for e in range(n):
        assert out[e] in writers.get(e, [-1]), (e, out[e], writers.get(e))


def test_an_fft_style_transpose_through_local_memory(tiny_env):
    """lds[(t >> 3) * 64 + (t & 7) + 8 r]: bit fields of the local id, one-to-one."""
    src = """__kernel void k(__global float *o, __global const float *a) {
        __local float lds[512];
        int t = get_local_id(0), hi = t >> 3, lo = t & 7;
        for (int r = 0; r < 8; r++) lds[hi * 64 + lo + 8 * r] = a[get_group_id(0) * 512 + 8 * t + r];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int r = 0; r < 8; r++) o[get_group_id(0) * 512 + t + 64 * r] = lds[t + 64 * r];
    }"""
    ctx, q = tiny_env
    a = np.arange(1024, dtype=np.float32)
    out, _ = run(ctx, q, src, (128,), (64,), np.zeros(1024, np.float32), a)
    want = np.empty_like(a)
    for g in range(2):
        for t in range(64):
            for r in range(8):
                want[g * 512 + (t >> 3) * 64 + (t & 7) + 8 * r] = a[g * 512 + 8 * t + r]
    np.testing.assert_array_equal(out, want)


def test_rows_that_cannot_overlap_skip_the_claims(tiny_env):
    ctx, q = tiny_env
    cycles = {}
    for pitch in (16, 4):
        _, ev = run(ctx, q, ROWS, (16, 4), None, np.full(3 * pitch + 16, -1, np.int32), np.int32(pitch))
        cycles[pitch] = ev.stats.cycles
    assert cycles[16] < 0.85 * cycles[4], cycles


GUARDED = """__kernel void k(__global int *o, int nj, __global const int *lim) {
    int j = get_global_id(0), i = get_global_id(1);
    if (j < BOUND)
        o[i * nj + j] = 1000 * i + j;
}"""


def test_a_guard_on_the_id_bounds_the_rows_it_stores(tiny_env):
    """`if (j < nj)` on a launch wider than nj: the rows of o[i * nj + j] are apart among the
    lanes that store, so no claims; the same bound read from a buffer is not known, and claims.
    A guard that lets rows overlap (j < nj + 4) still leaves one writer's value."""
    ctx, q = tiny_env
    nj, lim = 20, np.array([20], np.int32)
    cycles = {}
    for bound in ("nj", "lim[0]", "nj + 4"):
        src = GUARDED.replace("BOUND", bound)
        out, ev = run(ctx, q, src, (24, 8), (8, 8), np.full(8 * nj + 4, -1, np.int32), np.int32(nj),
                      cl.Buffer(ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR, hostbuf=lim))
        cycles[bound] = ev.stats.cycles
        width = nj + 4 if bound == "nj + 4" else nj
        writers = {}
        for i in range(8):
            for j in range(width):
                writers.setdefault(i * nj + j, []).append(1000 * i + j)
        for e in range(len(out)):
            assert out[e] in writers.get(e, [-1]), (bound, e, out[e], writers.get(e))
    assert cycles["nj"] < 0.85 * cycles["lim[0]"], cycles


def test_stores_whose_index_wraps_still_claim(tiny_env):
    """idx = gid * 0x80000000u wraps to 0 and 2^31 (then masked to 0): every lane stores to o[0]."""
    src = """__kernel void k(__global int *o) {
        uint idx = (uint)get_global_id(0) * 0x80000000u;
        o[idx & 1u] = (int)get_global_id(0) + 1;
    }"""
    ctx, q = tiny_env
    out, _ = run(ctx, q, src, (16,), None, np.zeros(2, np.int32))
    assert 1 <= out[0] <= 16 and out[1] == 0, out


def test_a_join_of_one_form_on_every_edge_is_that_form():
    """LLVM's PRE leaves `phi [n * gid1, before the loop], [n * gid1, in it]` as the row of a
    store after a loop (a tiled product's `C[row * n + col]`): one form on every edge is the
    join's; different forms, or a cycle through the join, are none."""
    from translator.backend.irread import Const, Inst
    gid = Inst("load", "g", "i32")

    def leaf(x):
        return {X: 1} if x is gid else None

    def mul(name):
        return Inst("mul", name, "i32", [gid, Const("i32", 12)])
    same = Inst("phi", "p", "i32", [mul("a"), mul("b")])
    assert idforms.form_of(same, leaf) == {X: 12}
    other = Inst("phi", "q", "i32", [mul("a"), gid])
    assert idforms.form_of(other, leaf) is None
    loop = Inst("phi", "r", "i32", [gid])
    loop.ops.append(loop)                             # r = phi [gid, r]: a cycle
    assert idforms.form_of(loop, leaf) is None


TILED_STORE = """
__kernel void mm(__global const float *A, __global float *C, int n) {
    __local float As[4][4];
    int tx = get_local_id(0), ty = get_local_id(1), col = get_global_id(0), row = get_global_id(1);
    float acc = 0.0f;
    for (int t = 0; t < n / 4; t++) {
        As[ty][tx] = A[row * n + t * 4 + tx];
        barrier(CLK_LOCAL_MEM_FENCE);
        acc += As[ty][0] + As[0][tx];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    C[row * n + col] = acc;
}"""


def test_a_store_after_a_loop_by_a_joined_row_skips_the_claims():
    """The store of `C[row * n + col]` after the loop whose row LLVM joins by a phi: its lanes
    cannot meet where n covers the wave's rows, so the groups build has no claim pass (a claim
    costs a third of gemm_tiled's cycles at 64^3)."""
    from emulator.machine import load_machine
    import translator
    from translator.backend import compile_kernel
    module = translator.compile_opencl(TILED_STORE, spmd=True)
    seq = compile_kernel(module, "mm", load_machine("tiny"), "groups").asm.split(".arg ")[1]
    store = seq[seq.index("d=%b1"):]                  # the pass of C's store, after the loop
    assert ".if %items > 1" not in store and ".if (not (" in store


def test_a_narrowed_form_reads_its_constants_in_the_narrow_type():
    """`(int)(get_global_id(0) - 1)`: instcombine's i64 constant 4294967295 is -1 as an int, and a
    coefficient that wraps is read the same way; 64-bit forms are left alone."""
    wrapped, ONE = idforms.wrapped, idforms.ONE
    gid = ("id", 0, 0, None, None)
    assert wrapped({ONE: 4294967295, gid: 1}, 32) == {ONE: -1, gid: 1}
    assert wrapped({ONE: 4294967296, gid: 4294967293}, 32) == {gid: -3}
    assert wrapped({ONE: 4294967295}, 64) == {ONE: 4294967295} and wrapped(None, 32) is None
