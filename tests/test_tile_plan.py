"""The tile plan (translator/backend/tileplan.py): a blocked matrix product's A[i*nk + k] and
B[k*nj + j] in a 2-D launch run flat ("rows" builds), staged into LM0 once per wave / panel and
read T-indirect.  Checked against numpy with integer data (every sum exact), on ragged sizes and
partial waves, with the runtime fallback to the gather (an odd pitch of A), the out-of-bounds
report and mncl-cc --stats; the device runs strict (docs/isa.md, "Strict checking")."""

import numpy as np
import pytest

import mncl as cl

from emulator_harness import device_env, mncc_stats

GEMM = """
__kernel void gemm(__global const float *A, __global const float *B, __global float *C,
                   float alpha, float beta, int ni, int nj, int nk)
{
    int j = get_global_id(0);
    int i = get_global_id(1);
    if (i < ni && j < nj) {
        float acc = 0.0f;
        for (int k = 0; k < nk; k++)
            acc += A[i * nk + k] * B[k * nj + j];
        C[i * nj + j] = alpha * acc + beta * C[i * nj + j];
    }
}
"""

# starts that are not 0 (odd ones) and a product of two different launches' sizes
SHIFTED = """
__kernel void shifted(__global const float *A, __global const float *B, __global float *C,
                      int ni, int nj, int nk, int sa, int sb)
{
    int j = get_global_id(0);
    int i = get_global_id(1);
    if (i < ni && j < nj) {
        float acc = 0.0f;
        for (int k = 0; k < nk; k++)
            acc += A[i * nk + k + sa] * B[k * nj + j + sb];
        C[i * nj + j] = acc;
    }
}
"""


@pytest.fixture(scope="module")
def tiny():
    return device_env("tiny")



def ints(rng, *shape):
    return rng.integers(-4, 5, shape).astype(np.float32)


def gemm(env, ni, nj, nk, seed=1):
    """C = 1.5 A B + 0.5 C on the emulator and in numpy (float64: exact for these integers)."""
    ctx, q = env
    rng = np.random.default_rng(seed)
    A, B, C = ints(rng, ni, nk), ints(rng, nk, nj), ints(rng, ni, nj)
    mf = cl.mem_flags
    bufs = [cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=a) for a in (A, B, C)]
    prg = cl.Program(ctx, GEMM).build()
    ev = prg.gemm(q, (nj, ni), None, *bufs, np.float32(1.5), np.float32(0.5), np.int32(ni), np.int32(nj), np.int32(nk))
    out = np.empty_like(C)
    cl.enqueue_copy(q, out, bufs[2])
    q.finish()
    ref = 1.5 * (A.astype(np.float64) @ B.astype(np.float64)) + 0.5 * C.astype(np.float64)
    return out, ref, ev


@pytest.mark.parametrize("ni,nj,nk", [(40, 40, 40), (37, 53, 24), (23, 131, 30), (70, 9, 16)])
def test_gemm_matches_numpy_on_ragged_sizes_and_partial_waves(tiny, modes, ni, nj, nk):
    """Rows of the launch that straddle waves and L2Bs, a last wave that is partial (a wave of tiny
    is 512 work-items), odd pitches of B (nj odd: the even and odd T values in turn), a pitch of B
    above the wave's share of an L2B (131) and below 16 (9)."""
    out, ref, ev = gemm(tiny, ni, nj, nk)
    np.testing.assert_array_equal(out, ref)
    assert modes == ["rows"]
    # A's rows and B about once per wave (B in panels rounded to 64 long words), C's wave shares in
    # and out: far below the gathers' whole buffers in every pass
    waves = -(-ni * nj // 512)
    assert ev.stats.dram_bytes < 4 * (2 * ni * nk + waves * (2 * nk * nj + 8 * 512))


def test_a_launch_the_plan_does_not_fit_runs_nd(tiny, modes):
    """An odd pitch of A (nk = 41) fails the plan's launch test (KernelBinary.launch_tests): the
    launch runs the nd build, which gathers, still exact; the staged launch moves a small fraction
    of its bytes."""
    out, ref, ev = gemm(tiny, 30, 30, 41)
    np.testing.assert_array_equal(out, ref)
    gathered = ev.stats.dram_bytes
    out, ref, ev = gemm(tiny, 30, 30, 40)
    np.testing.assert_array_equal(out, ref)
    assert ev.stats.dram_bytes * 5 < gathered
    assert modes == ["nd", "rows"]


@pytest.mark.parametrize("sa,sb", [(0, 1), (1, 0), (3, 5)])
def test_odd_starts_match_numpy(tiny, modes, sa, sb):
    """A[i*nk + k + sa] and B[k*nj + j + sb]: odd starts shift the staged runs by half a long word."""
    ctx, q = tiny
    ni, nj, nk = 33, 30, 26
    rng = np.random.default_rng(7)
    A, B = ints(rng, ni * nk + sa), ints(rng, nk * nj + sb)
    C = np.zeros((ni, nj), np.float32)
    mf = cl.mem_flags
    bufs = [cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=a) for a in (A, B, C)]
    prg = cl.Program(ctx, SHIFTED).build()
    prg.shifted(q, (nj, ni), None, *bufs, *(np.int32(v) for v in (ni, nj, nk, sa, sb)))
    out = np.empty_like(C)
    cl.enqueue_copy(q, out, bufs[2])
    q.finish()
    ref = A[sa:].reshape(ni, nk).astype(np.float64) @ B[sb:].reshape(nk, nj).astype(np.float64)
    np.testing.assert_array_equal(out, ref)
    assert modes == ["rows"]


def test_out_of_bounds_is_still_reported(tiny, modes):
    """nk larger than A's rows: the wave-wide test fails, the per-lane check reports the access."""
    ctx, q = tiny
    ni, nj, nk = 30, 30, 40
    rng = np.random.default_rng(3)
    A, B, C = ints(rng, ni, nk), ints(rng, nk + 2, nj), ints(rng, ni, nj)
    mf = cl.mem_flags
    bufs = [cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=a) for a in (A, B, C)]
    prg = cl.Program(ctx, GEMM).build()
    with pytest.raises(cl.MemoryError, match=r"kernel 'gemm' accessed out of bounds at line 10.*argument 0 \('A'"):
        prg.gemm(q, (nj, ni), None, *bufs, np.float32(1), np.float32(0), np.int32(ni), np.int32(nj),
                 np.int32(nk + 2)).wait()
    assert modes == ["rows"]


@pytest.mark.slow
@pytest.mark.parametrize("ni,nj,nk", [(128, 128, 128), (200, 200, 64)])
def test_gemm_on_mncore2_moves_each_element_about_once(ni, nj, nk):
    """On mncore2: half a wave (groups 0 and 1 hold work-items), and two waves, the first filling
    all four groups' L2Bs.  A and B each cross DRAM about once per wave (the gathers moved them
    ~257 times over at 128^3); C is read and written as whole-wave shares."""
    out, ref, ev = gemm(device_env("mncore2"), ni, nj, nk)
    np.testing.assert_array_equal(out, ref)
    assert ev.stats.dram_bytes < 2 * 4 * (ni * nk + nk * nj + 2 * ni * nj)
    assert ev.stats.cycles < 100_000


def test_mncl_cc_names_the_plan(tmp_path):
    err = mncc_stats(tmp_path / "gemm.cl", GEMM, "--machine", "tiny", "--mode", "rows")
    assert "load A (global, 4 B): row in the loop at line 10; tile plan: the wave's rows of each L2B" in err
    assert "load B (global, 4 B): column in the loop at line 10; tile plan: panels of rows" in err
    assert "remark" not in err


def test_a_small_launch_takes_the_narrowest_rows_build(modes):
    """64 x 64 on mncore2 (an eighth of a wave): the rows build narrowed 8 times, whose wave holds
    the launch and whose L2Bs hold an eighth of the rows.  It used to run the nd build, gathering
    A and B in every pass (4,264,448 DRAM bytes, 65 times the compulsory, and 270,828 cycles): the
    rows build's tile-plan test fails (66 rows of A an L2B against an LM0 region of 56).  A
    narrowed build's empty slots (layout.item_of_slot) had read A's rows at negative addresses.
    (On the device the suite's earlier tests share this launch took 41,600 cycles: its empty slots
    computed on what they left in LM0, test_cycles_do_not_depend_on_what_earlier_launches_left.)"""
    out, ref, ev = gemm(device_env("mncore2"), 64, 64, 64)
    np.testing.assert_array_equal(out, ref)
    assert modes == ["rows-n8"]
    assert ev.stats.dram_bytes < 2 * 4 * 4 * 64 * 64
    assert ev.stats.cycles < 30_000


def test_a_launch_too_tall_for_the_plan_takes_a_wave_narrowed_twice(modes):
    """1024 rows of 64 on mncore2: more than a wave, so the plain rows build comes first, and
    its tile plan does not fit (66 rows of A an L2B); the wave narrowed twice holds 34."""
    out, ref, ev = gemm(device_env("mncore2"), 1024, 64, 64)
    np.testing.assert_array_equal(out, ref)
    assert modes == ["rows-n2"]
    assert ev.stats.dram_bytes < 2 * 4 * (1024 * 64 * 3 + 64 * 64)


PERM2D = """
__kernel void perm2d(__global const int *perm, __global const float *val, __global float *out, int n)
{
    int j = get_global_id(0);
    int i = get_global_id(1);
    if (i < n && j < n)
        out[perm[i * n + j]] = val[i * n + j] + 1.0f;
}
"""


def test_a_narrowed_rows_builds_empty_slots_scatter_nothing(modes):
    """A rows build narrowed for a small 2-D launch has slots that hold no work-item: they repeat
    the slot numbers of slots that do, without their inputs.  Only the 1-D builds left them out of
    the live lanes (Emitter.in_wave), so here they scattered too: one element of 4,096 came out
    wrong, with no error."""
    from emulator_harness import launch
    n = 64
    rng = np.random.default_rng(1)
    perm = rng.permutation(n * n).astype(np.int32)
    val = rng.integers(-50, 50, n * n).astype(np.float32)
    want = np.zeros(n * n, np.float32)
    want[perm] = val + 1
    (_, _, out), _ = launch(device_env("mncore2", new=True), PERM2D, "perm2d", (n, n), perm, val,
                            np.zeros(n * n, np.float32), np.int32(n))
    assert modes == ["rows-n8"]
    np.testing.assert_array_equal(out, want)


def test_cycles_do_not_depend_on_what_earlier_launches_left(modes):
    """The empty slots of a narrowed rows build computed on whatever PE memory held: with
    infinities left in LM0 the product's lazy NaN check found some and ran the loop again exactly
    (7,953 steps against 2,100 on a fresh device; the suite's shared device gave 41,600 cycles
    for this launch, 14,544 alone).  Now they are not live."""
    env = device_env("mncore2", new=True)
    fresh = gemm(env, 64, 64, 64)[2].stats
    for mem in env[0].devices[0].backend.emu.state.mem.values():
        mem[...] = np.uint64(0x7F8000007F800000)
    out, ref, ev = gemm(env, 64, 64, 64)
    np.testing.assert_array_equal(out, ref)
    assert modes == ["rows-n8", "rows-n8"]
    assert (ev.stats.steps, ev.stats.cycles) == (fresh.steps, fresh.cycles)
