"""Task kernels (``__task``, docs/language.md "Task kernels: the MN-Core extensions") on the
emulator device's 'tiny' machine: 1 group x 2 L2B x 2 L1B x 4 MAB x 4 PE.

Every transfer builtin and direction is checked against a numpy model of its layout written
here from docs/isa.md ("Transfer layouts"), not from the compiler.  Data only leaves the
machine through DRAM, so each test is a round trip: known transfers move data down to the
level under test, the builtin under test runs there, known transfers bring a result back up;
per-PE location values (mn_pe_index() ...) are mixed into the data on the way so that a wrong
PE / L1B / L2B mapping shows up.  The model works in long words (uint64): a long word holds
2 ints / floats or 4 halves, the first of them the most significant (docs/isa.md "Data and
lanes"); host arrays are the same bytes, little-endian.

Then every misuse diagnostic: the compile-time ones (a build failure naming the line) and the
run-time ones (a sequencer fault naming the C line).
"""
import re

import numpy as np
import pytest

import mncl as cl
from emulator.numbers import f32_to_mnhalf, mnhalf_to_f32

mf = cl.mem_flags

G, L, N, M, P = 1, 2, 2, 4, 4       # tiny: groups, L2B per group, L1B per L2B, MAB per L1B, PE per MAB
Q = M * P                            # PEs per L1B
EPL = {"int": 2, "float": 2, "long": 1, "mnhalf": 4}     # elements per long word
VEC = {"int": "mnint8", "float": "mnfloat8", "long": "mnlong4", "mnhalf": "mnhalf16"}


@pytest.fixture(scope="module")
def env():
    from emulator.machine import load_machine
    m = load_machine("tiny")
    assert (m.groups, m.l2b_per_group, m.l1b_per_l2b, m.mab_per_l1b, m.pe_per_mab) == (G, L, N, M, P)
    dev = cl.get_device(machine="tiny")
    ctx = cl.Context([dev])
    return ctx, cl.CommandQueue(ctx)


def run(env, src, *args):
    """Build src, run its task kernel once with args (numpy arrays become buffers, numpy
    scalars are passed as they are), and return the last array argument as read back."""
    ctx, q = env
    prg = cl.Program(ctx, src).build()
    knl = getattr(prg, re.search(r"__task\s+void\s+(\w+)", src).group(1))
    bufs = [cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=a) if isinstance(a, np.ndarray) else a
            for a in args]
    knl.set_args(*bufs)
    ev = cl.enqueue_task(q, knl)
    ev.wait()
    assert ev.stats.cycles > 0
    a, b = [(a, b) for a, b in zip(args, bufs) if isinstance(a, np.ndarray)][-1]
    out = np.empty_like(a)
    cl.enqueue_copy(q, out, b)
    return out


# -- data ---------------------------------------------------------------------------------------
def lw(a):
    """Any array's bytes as long words."""
    return np.ascontiguousarray(a).view(np.uint64)


def as_(a, dt):
    return np.ascontiguousarray(a).view(dt)


def rand_ints(seed, n_longs, lo=-2**31, hi=2**31):
    return lw(np.random.default_rng(seed).integers(lo, hi, 2 * n_longs, dtype=np.int64).astype(np.int32))


def rand_floats(seed, n_longs, integral=False):
    r = np.random.default_rng(seed)
    x = r.integers(-1000, 1000, 2 * n_longs).astype(np.float32) if integral else \
        (r.standard_normal(2 * n_longs) * 4).astype(np.float32)
    return lw(x)


def rand_halves(seed, n_longs):
    x = (np.random.default_rng(seed).standard_normal(4 * n_longs) * 3).astype(np.float32)
    return lw(f32_to_mnhalf(x).astype(np.uint16))


def poison(n_longs):
    """An output buffer's initial contents: a pattern no result has."""
    return np.full(n_longs, 0xDEADBEEFDEADBEEF, np.uint64)


def host(x64, t):
    """Long words -> the host array of element type t (the same bytes)."""
    return as_(x64, {"int": np.int32, "float": np.float32, "long": np.int64, "mnhalf": np.uint16}[t])


# -- the numpy model of the layouts (docs/isa.md "Transfer layouts") -----------------------------
# L2BM contents: (L, n); L1BM: (L, N, n); PE vectors: (L, N, Q, 4) -- 4 cycles x 1 long word,
# PE index q = 4 m + p within its L1B.
def mvd_down(x):                      # L2B l gets the l-th 1/L of the n long words
    return x.reshape(L, -1)


def mvd_up(lc):
    return lc.reshape(-1)


def l2bmd_down(lc):                   # L1B i gets $lc[a + 8N c + 8i + j] at $lb[b + 8c + j]
    n = lc.shape[1]
    return lc.reshape(L, n // (8 * N), N, 8).transpose(0, 2, 1, 3).reshape(L, N, -1)


def l2bmd_up(lb):
    k = lb.shape[2]
    return lb.reshape(L, N, k // 8, 8).transpose(0, 2, 1, 3).reshape(L, -1)


def l2bmb(lc):                        # every L1B of the L2B gets the same long words
    return np.repeat(lc[:, None, :], N, axis=1)


def l1bmd_down(lb):                   # PE i, cycle c <- $lb[a + 4M c + i]
    assert lb.shape[2] == 4 * Q
    return lb.reshape(L, N, 4, Q).transpose(0, 1, 3, 2)


def l1bmd_up(pe):
    return pe.transpose(0, 1, 3, 2).reshape(L, N, 4 * Q)


def l1bmp(lb4):                       # every PE, cycle c <- $lb[a + c]
    return np.repeat(lb4[:, :, None, :], Q, axis=2)


def l1bmm(lb16):                      # PE (m, p), cycle c <- $lb[a + 4c + p]
    cp = lb16.reshape(L, N, 4, P).transpose(0, 1, 3, 2)           # [p, c]
    return np.ascontiguousarray(np.broadcast_to(cp[:, :, None], (L, N, M, P, 4))).reshape(L, N, Q, 4)


def l1bmr(pe, op):                    # $lb[a + 4c + p] = op over m of PE (m, p)'s cycle c
    r = op(pe.reshape(L, N, M, P, 4), axis=2)                       # (L, N, P, 4) [p, c]
    return np.ascontiguousarray(r.transpose(0, 1, 3, 2)).reshape(L, N, 16)


def lane_op(t, fn):
    """A reduction over an axis of long words, lane by lane, on element type t."""
    dt = {"int": np.int32, "float": np.float32, "long": np.int64}[t]

    def op(a, axis):
        a = np.ascontiguousarray(a)
        v = a.view(dt).reshape(a.shape + (-1,))
        r = fn(v, axis=axis).astype(dt)
        return np.ascontiguousarray(r).view(np.uint64).reshape(r.shape[:-1])
    return op


def OR(v, axis):
    return np.bitwise_or.reduce(v, axis=axis)


def AND(v, axis):
    return np.bitwise_and.reduce(v, axis=axis)


OPS = {"MN_ADD": np.sum, "MN_MAX": np.max, "MN_MIN": np.min, "MN_OR": OR, "MN_AND": AND}


def i32(a):
    return as_(a, np.int32)


def u32(a):
    return as_(a, np.uint32)


def from32(a):
    return lw(a)


def iadd(a, b):
    return from32(u32(a) + u32(b))


def isub(a, b):
    return from32(u32(a) - u32(b))


def ishl(a, k):
    return from32(u32(a) << np.uint32(k))


def per_pe(f):
    """A per-PE value, shape (L, N, Q, 4), both 32-bit lanes of every cycle = f(l, i, m, p)."""
    l, i, m, p = np.meshgrid(range(L), range(N), range(M), range(P), indexing="ij")
    v = np.asarray(f(l, i, m, p), np.uint64).reshape(L, N, Q, 1)
    return np.repeat(v * np.uint64(0x100000001), 4, axis=3)


TAG = per_pe(lambda l, i, m, p: (4 * m + p) | i << 4 | l << 5)    # unique on the board
TAG_C = "mnint8 tag = mn_pe_index() | (mn_l1b_index() << 4) | (mn_l2b_index() << 5);"


# -- kernel fragments: the known transfers ------------------------------------------------------
def down_src(t, k, src="x"):
    """DRAM -> L2BM (mvd) -> L1BM (l2bmd) -> k per-PE vectors a0.. (l1bmd): 256 k long words."""
    e = EPL[t]
    lines = [f"L2BM {t} xs[{128 * k * e}];", f"L1BM {t} xl[{64 * k * e}];",
             f"mn_distribute(xs, {src}, {256 * k * e});", f"mn_distribute(xl, xs, {128 * k * e});"]
    lines += [f"{VEC[t]} a{j} = mn_distribute(xl + {64 * j * e});" for j in range(k)]
    return "\n    ".join(lines)


def down(x, k):
    lb = l2bmd_down(mvd_down(x))
    return [l1bmd_down(lb[:, :, 64 * j:64 * (j + 1)]) for j in range(k)]


def up_src(t, results, dst="y"):
    """k per-PE vectors -> L1BM (l1bmd) -> L2BM (l2bmd) -> DRAM (mvd): 256 k long words."""
    e, k = EPL[t], len(results)
    lines = [f"L1BM {t} ol[{64 * k * e}];", f"L2BM {t} os[{128 * k * e}];"]
    lines += [f"mn_gather(ol + {64 * j * e}, {r});" for j, r in enumerate(results)]
    lines += [f"mn_gather(os, ol, {128 * k * e});", f"mn_gather({dst}, os, {256 * k * e});"]
    return "\n    ".join(lines)


def up(pes):
    return mvd_up(l2bmd_up(np.concatenate([l1bmd_up(p) for p in pes], axis=2)))


def check(got, want):
    got, want = lw(got), lw(want)
    assert got.shape == want.shape
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, (f"{bad.size} of {got.size} long words differ; first at {bad[:8].tolist()}: "
                           f"got {[hex(v) for v in got[bad[:4]]]}, want {[hex(v) for v in want[bad[:4]]]}")


# == values: locations and the whole known chain =================================================
def test_location_values(env):
    src = f"""
__task void where(DRAM int *y)
{{
    mnint8 w = mn_pe_in_mab() | (mn_mab_index() << 2) | (mn_pe_index() << 4) | (mn_l1b_index() << 8)
               | (mn_l2b_index() << 12) | (mn_group_index() << 16);
    {up_src("int", ["w"])}
}}"""
    y = run(env, src, poison(256))
    want = per_pe(lambda l, i, m, p: p | m << 2 | (4 * m + p) << 4 | i << 8 | l << 12 | (l // L) << 16)
    check(y, up([want]))


def test_distribute_down_and_gather_up_the_whole_tree(env):
    x = rand_ints(1, 256)
    src = f"""
__task void chain(DRAM const int *x, DRAM int *y)
{{
    {down_src("int", 1)}
    {TAG_C}
    {up_src("int", ["a0 ^ tag"])}
}}"""
    y = run(env, src, host(x, "int"), poison(256))
    check(y, up([down(x, 1)[0] ^ TAG]))


# == DRAM <-> L2BM ================================================================================
@pytest.mark.parametrize("grp", ["", "0, "], ids=["every-group", "group-0"])
def test_unicast_dram_to_l2bm(env, grp):
    x = rand_ints(2, 256)
    src = f"""
__task void uni_down(DRAM const int *x, DRAM int *y)
{{
    L2BM int a[256];
    mn_unicast(a, x + 256, 256, {grp}0);    /* L2B 0 <- the second half */
    mn_unicast(a, x, 256, {grp}1);          /* L2B 1 <- the first half */
    mn_gather(y, a, 512);
}}"""
    y = run(env, src, host(x, "int"), poison(256))
    check(y, np.concatenate([x[128:], x[:128]]))


@pytest.mark.parametrize("grp", ["", "0, "], ids=["every-group", "group-0"])
def test_unicast_l2bm_to_dram(env, grp):
    x = rand_ints(3, 256)
    src = f"""
__task void uni_up(DRAM const int *x, DRAM int *y)
{{
    L2BM int a[256];
    mn_distribute(a, x, 512);
    mn_unicast(y, a, 256, {grp}1);
    mn_unicast(y + 256, a, 256, {grp}0);
}}"""
    y = run(env, src, host(x, "int"), poison(256))
    check(y, np.concatenate([x[128:], x[:128]]))


def test_broadcast_dram_to_both_l2bms(env):                           # mvb2
    x = rand_ints(4, 128)
    src = """
__task void bcast2(DRAM const int *x, DRAM int *y)
{
    L2BM int a[512];
    mn_broadcast(a + 256, x, 256);
    mn_unicast(y, a + 256, 256, 0);
    mn_unicast(y + 256, a + 256, 256, 1);
}"""
    y = run(env, src, host(x, "int"), poison(256))
    check(y, np.concatenate([x, x]))


def test_broadcast_board(env):                                        # mvb
    x = rand_ints(5, 128)
    src = """
__task void bcast_board(DRAM const int *x, DRAM int *y)
{
    L2BM int a[256];
    mn_broadcast_board(a, x, 256, 0);
    mn_gather(y, a, 512, 0);
}"""
    y = run(env, src, host(x, "int"), poison(256))
    check(y, np.concatenate([x, x]))


@pytest.mark.parametrize("grp", ["", ", 0"], ids=["every-group", "group-0"])
def test_distribute_dram_to_l2bms(env, grp):                           # mvd
    x = rand_ints(6, 256)
    src = f"""
__task void dist(DRAM const int *x, DRAM int *y)
{{
    L2BM int a[384];
    mn_distribute(a + 128, x, 512{grp});        /* L2B l <- the l-th half, at long word 64 */
    mn_unicast(y, a + 128, 256, 0);
    mn_unicast(y + 256, a + 128, 256, 1);
}}"""
    y = run(env, src, host(x, "int"), poison(256))
    check(y, x)


@pytest.mark.parametrize("grp", ["", ", 0"], ids=["every-group", "group-0"])
def test_gather_l2bms_to_dram(env, grp):                               # mvd
    x = rand_ints(7, 256)
    src = f"""
__task void gath(DRAM const int *x, DRAM int *y)
{{
    L2BM int a[384];
    mn_unicast(a + 128, x + 256, 256, 0);
    mn_unicast(a + 128, x, 256, 1);
    mn_gather(y + 512, a + 128, 512{grp});
}}"""
    y = run(env, src, host(x, "int"), poison(512))
    check(y, np.concatenate([poison(256), x[128:], x[:128]]))


@pytest.mark.parametrize("t,op", [("float", "MN_ADD"), ("int", "MN_ADD"), ("float", "MN_MAX"),
                                  ("float", "MN_MIN"), ("int", "MN_OR"), ("int", "MN_AND")])
def test_reduce_l2bms_to_dram(env, t, op):                             # mvr2
    x = rand_floats(8, 256, integral=True) if t == "float" else rand_ints(8, 256)
    src = f"""
__task void red2(DRAM const {t} *x, DRAM {t} *y)
{{
    L2BM {t} a[256];
    mn_distribute(a, x, 512);
    mn_reduce(y, a, 256, {op});
}}"""
    y = run(env, src, host(x, t), poison(128))
    check(y, lane_op(t, OPS[op])(x.reshape(L, 128), axis=0))


@pytest.mark.parametrize("t,op", [("float", "MN_ADD"), ("int", "MN_ADD")])
def test_reduce_board(env, t, op):                                     # mvr
    x = rand_floats(9, 256, integral=True) if t == "float" else rand_ints(9, 256)
    src = f"""
__task void redb(DRAM const {t} *x, DRAM {t} *y)
{{
    L2BM {t} a[256];
    mn_distribute(a, x, 512);
    mn_reduce_board(y + 256, a, 256, 0, {op});
}}"""
    y = run(env, src, host(x, t), poison(256))
    check(y, np.concatenate([poison(128), lane_op(t, OPS[op])(x.reshape(L, 128), axis=0)]))


# == L2BM <-> L1BM ================================================================================
# A readback of every L1BM that does not use l2bmd: each PE shifts its L1B's data by 16 x its
# L1B index, l2bmr MN_ADD sums the L2B's two L1BMs, so each 32-bit lane holds L1B 0's low
# 16 bits and L1B 1's above them.
SPLIT_C = "mnint8 sh = mn_l1b_index() << 4;"
SPLIT = per_pe(lambda l, i, m, p: 16 * i)


def split_sum(lb):                    # l2bmr MN_ADD of the shifted L1BMs: (L, N, n) -> (L, n)
    return lane_op("int", np.sum)(lb, axis=1)


def test_broadcast_l2bm_to_l1bms(env):                                 # l2bmb
    x = rand_ints(10, 256, 0, 1 << 16)
    src = f"""
__task void l2b(DRAM const int *x, DRAM int *y)
{{
    L2BM int xs[256];
    L1BM int xl[256];
    L1BM int ol[256];
    L2BM int os[256];
    mn_distribute(xs, x, 512);
    mn_broadcast(xl, xs + 128, 128);          /* L1BM long words 0..63 <- L2BM 64..127 */
    mn_broadcast(xl + 128, xs, 128);          /* 64..127 <- 0..63 */
    {SPLIT_C}
    mnint8 a0 = mn_distribute(xl);
    mnint8 a1 = mn_distribute(xl + 128);
    mn_gather(ol, a0 << sh);
    mn_gather(ol + 128, a1 << sh);
    mn_reduce(os, ol, 256, MN_ADD);
    mn_gather(y, os, 512);
}}"""
    y = run(env, src, host(x, "int"), poison(256))
    lc = mvd_down(x)
    lb = l2bmb(np.concatenate([lc[:, 64:], lc[:, :64]], axis=1))
    pes = [l1bmd_down(lb[:, :, :64]), l1bmd_down(lb[:, :, 64:])]
    lb2 = np.concatenate([l1bmd_up(ishl_pe(p, SPLIT)) for p in pes], axis=2)
    check(y, mvd_up(split_sum(lb2)))


def ishl_pe(a, sh):
    return from32(u32(a) << u32(sh)).reshape(a.shape)


def test_distribute_l2bm_to_l1bms(env):                                # l2bmd
    x = rand_ints(11, 512, 0, 1 << 16)
    src = f"""
__task void l2d(DRAM const int *x, DRAM int *y)
{{
    L2BM int xs[512];
    L1BM int xl[256];
    L1BM int ol[128];
    L2BM int os[128];
    mn_distribute(xs, x, 1024);
    mn_distribute(xl + 128, xs + 256, 256);   /* L2BM 128..255 -> L1BM 64..127 of each L1B */
    {SPLIT_C}
    mnint8 a = mn_distribute(xl + 128);
    mn_gather(ol, a << sh);
    mn_reduce(os, ol, 128, MN_ADD);
    mn_gather(y, os, 256);
}}"""
    y = run(env, src, host(x, "int"), poison(128))
    lb = l2bmd_down(mvd_down(x)[:, 128:])                              # (L, N, 64)
    check(y, mvd_up(split_sum(l1bmd_up(ishl_pe(l1bmd_down(lb), SPLIT)))))


def test_gather_l1bms_to_l2bm(env):                                    # l2bmd, up
    x = rand_ints(12, 128)
    src = f"""
__task void l2g(DRAM const int *x, DRAM int *y)
{{
    L2BM int xs[128];
    L1BM int xl[128];
    L1BM int ol[256];
    L2BM int os[768];
    mn_distribute(xs, x, 256);
    mn_broadcast(xl, xs, 128);                /* both L1Bs alike: the PEs make them differ */
    {TAG_C}
    mnint8 a = mn_distribute(xl);
    mn_gather(ol + 128, a ^ tag);
    mn_gather(os + 256, ol + 128, 256);       /* L1B i's long words 64..127 -> L2BM 128..255 */
    mn_gather(y, os + 256, 512);
}}"""
    y = run(env, src, host(x, "int"), poison(256))
    pe = l1bmd_down(l2bmb(mvd_down(x))) ^ TAG
    check(y, up([pe]))


@pytest.mark.parametrize("t,op", [("int", "MN_ADD"), ("float", "MN_ADD"), ("float", "MN_MAX"),
                                  ("float", "MN_MIN"), ("int", "MN_OR"), ("int", "MN_AND")])
def test_reduce_l1bms_to_l2bm(env, t, op):                             # l2bmr
    x = rand_floats(13, 512, integral=True) if t == "float" else rand_ints(13, 512)
    src = f"""
__task void l2r(DRAM const {t} *x, DRAM {t} *y)
{{
    L2BM {t} xs[512];
    L1BM {t} xl[256];
    L2BM {t} os[256];
    mn_distribute(xs, x, 1024);
    mn_distribute(xl, xs, 512);               /* each L1B its own 128 long words */
    mn_reduce(os + 128, xl + 128, 128, {op}); /* L1BM 64..127 -> L2BM 64..127 */
    mn_reduce(os, xl, 128, {op});
    mn_gather(y, os, 512);
}}"""
    y = run(env, src, host(x, t), poison(256))
    lb = l2bmd_down(mvd_down(x))                                         # (L, N, 128)
    check(y, mvd_up(lane_op(t, OPS[op])(lb, axis=1)))


# == L1BM <-> PE ==================================================================================
def test_broadcast_l1bm_to_pes(env):                                   # l1bmp
    x = rand_ints(14, 256)
    src = f"""
__task void l1p(DRAM const int *x, DRAM int *y)
{{
    {down_src("int", 1)}
    {TAG_C}
    mnint8 b = mn_broadcast(xl + 40);         /* long words 20..23 */
    {up_src("int", ["b ^ tag"])}
}}"""
    y = run(env, src, host(x, "int"), poison(256))
    lb = l2bmd_down(mvd_down(x))
    check(y, up([l1bmp(lb[:, :, 20:24]) ^ TAG]))


def test_broadcast_mabs(env):                                          # l1bmm
    x = rand_ints(15, 256)
    src = f"""
__task void l1m(DRAM const int *x, DRAM int *y)
{{
    {down_src("int", 1)}
    {TAG_C}
    mnint8 b = mn_broadcast_mabs(xl + 64);    /* long words 32..47 */
    {up_src("int", ["b ^ tag"])}
}}"""
    y = run(env, src, host(x, "int"), poison(256))
    lb = l2bmd_down(mvd_down(x))
    check(y, up([l1bmm(lb[:, :, 32:48]) ^ TAG]))


def test_distribute_l1bm_to_pes(env):                                  # l1bmd
    x = rand_ints(16, 512)
    src = f"""
__task void l1d(DRAM const int *x, DRAM int *y)
{{
    {down_src("int", 2)}
    {TAG_C}
    mnint8 b = mn_distribute(xl + 64);        /* L1BM long words 32..95 */
    {up_src("int", ["b + tag", "a1 ^ tag"])}
}}"""
    y = run(env, src, host(x, "int"), poison(512))
    lb = l2bmd_down(mvd_down(x))
    b = l1bmd_down(lb[:, :, 32:96])
    check(y, up([iadd(b, TAG).reshape(b.shape), down(x, 2)[1] ^ TAG]))


def test_gather_pes_to_l1bm(env):                                      # l1bmd, up
    x = rand_ints(17, 256)
    src = f"""
__task void l1g(DRAM const int *x, DRAM int *y)
{{
    {down_src("int", 1)}
    {TAG_C}
    L1BM int ol[384];
    L2BM int os[256];
    mn_gather(ol + 256, mn_broadcast(xl + 8) ^ tag);     /* PE -> L1BM long words 128..191 */
    mn_gather(os, ol + 256, 256);
    mn_gather(y, os, 512);
}}"""
    y = run(env, src, host(x, "int"), poison(256))
    lb = l2bmd_down(mvd_down(x))
    check(y, up([l1bmp(lb[:, :, 4:8]) ^ TAG]))


def test_reduce_pes_to_l1bm_float(env):                                # l1bmr: MN_ADD, MN_MAX, MN_MIN
    x = rand_floats(18, 256, integral=True)
    src = f"""
__task void l1r(DRAM const float *x, DRAM float *y)
{{
    {down_src("float", 1)}
    L1BM float ol[128];
    L2BM float os[256];
    mnfloat8 sq = a0 * a0;
    mn_reduce(ol, a0, MN_ADD);                /* long words 4c + p over the MABs */
    mn_reduce(ol + 32, a0, MN_MAX);
    mn_reduce(ol + 64, a0, MN_MIN);
    mn_reduce(ol + 96, sq, MN_ADD);
    mn_gather(os, ol, 256);
    mn_gather(y, os, 512);
}}"""
    y = run(env, src, host(x, "float"), poison(256))
    a = down(x, 1)[0]
    sq = lw(as_(a, np.float32) * as_(a, np.float32)).reshape(a.shape)
    f = lambda op, v: l1bmr(v, lane_op("float", op))
    lb = np.concatenate([f(np.sum, a), f(np.max, a), f(np.min, a), f(np.sum, sq)], axis=2)
    check(y, mvd_up(l2bmd_up(lb)))


def test_reduce_pes_to_l1bm_int(env):                                  # l1bmr: MN_ADD, MN_OR, MN_AND
    x = rand_ints(19, 256)
    src = f"""
__task void l1ri(DRAM const int *x, DRAM int *y)
{{
    {down_src("int", 1)}
    {TAG_C}
    L1BM int ol[128];
    L2BM int os[256];
    mnint8 v = a0 ^ tag;
    mn_reduce(ol + 96, v, MN_ADD);
    mn_reduce(ol + 64, v, MN_OR);
    mn_reduce(ol + 32, v, MN_AND);
    mn_reduce(ol, tag, MN_ADD);
    mn_gather(os, ol, 256);
    mn_gather(y, os, 512);
}}"""
    y = run(env, src, host(x, "int"), poison(256))
    a = down(x, 1)[0] ^ TAG
    f = lambda op, v: l1bmr(v, lane_op("int", op))
    lb = np.concatenate([f(np.sum, TAG), f(AND, a), f(OR, a), f(np.sum, a)], axis=2)
    check(y, mvd_up(l2bmd_up(lb)))


def test_reduce_pes_to_l1bm_of_a_vector_expression(env):
    x = rand_ints(32, 256)
    src = f"""
__task void l1re(DRAM const int *x, DRAM int *y)
{{
    {down_src("int", 1)}
    {TAG_C}
    L1BM int ol[64];
    L2BM int os[128];
    mn_reduce(ol, a0 ^ tag, MN_ADD);
    mn_reduce(ol + 32, a0 + a0, MN_OR);
    mn_gather(os, ol, 128);
    mn_gather(y, os, 256);
}}"""
    y = run(env, src, host(x, "int"), poison(128))
    a = down(x, 1)[0]
    f = lambda op, v: l1bmr(v, lane_op("int", op))
    lb = np.concatenate([f(np.sum, a ^ TAG), f(OR, iadd(a, a))], axis=2)
    check(y, mvd_up(l2bmd_up(lb)))


# == asynchronous transfers ======================================================================
def test_async_forms_and_two_events_in_flight(env):
    x = rand_ints(20, 768)
    src = f"""
__task void asyn(DRAM const int *x, DRAM int *y)
{{
    L2BM int a[256];
    L2BM int b[256];
    L2BM int c[256];
    L1BM int xl[128];
    mn_event e1 = mn_distribute_async(a, x, 512);
    mn_event e2 = mn_broadcast_async(b, x + 512, 256);        /* two in flight */
    mn_wait(e2);
    mn_wait(e1);
    mn_event e[2];
    e[0] = mn_gather_async(y, a, 512);                         /* y long words 0..255 */
    e[1] = mn_reduce_async(y + 512, b, 256, MN_ADD);           /* 256..383: 2 x x[256..383] */
    mn_distribute(xl, a, 256);                                 /* PE work meanwhile, reading a */
    {TAG_C}
    mnint8 v = mn_distribute(xl);
    v = v ^ tag;
    mn_wait(e[1]);
    mn_wait(e[0]);
    e1 = mn_broadcast_board_async(c, x + 768, 256, 0);
    e2 = mn_unicast_async(b, x + 1024, 256, 1);
    mn_wait(e1);
    mn_event e3 = mn_reduce_board_async(y + 768, c, 256, 0, MN_ADD);   /* 384..511: 2 x x[384..511] */
    mn_wait(e2);
    e2 = mn_unicast_async(y + 1024, b, 256, 1);                /* 512..639: x[512..639] */
    mn_wait(e3);
    mn_wait(e2);
    mn_gather(xl, v);
    mn_gather(a, xl, 256);
    e1 = mn_gather_async(y + 1280, a, 512, 0);                 /* 640..895: the PEs' values */
    mn_wait(e1);
}}"""
    y = run(env, src, host(x, "int"), poison(896))
    want = np.concatenate([x[:256], iadd(x[256:384], x[256:384]), iadd(x[384:512], x[384:512]),
                           x[512:640], up([down(x[:256], 1)[0] ^ TAG])[:256]])
    check(y, want)


def test_double_buffered_loop_with_an_event_array(env):
    x = rand_ints(21, 1024)
    src = f"""
__task void dbuf(DRAM const int *x, DRAM int *y)
{{
    L2BM int b0[256];
    L2BM int b1[256];
    L1BM int xl[128];
    mnint8 acc = 0;
    mn_event ev[2];
    ev[0] = mn_distribute_async(b0, x, 512);
    for (int t = 0; t < 4; t++) {{
        if (t + 1 < 4)
            ev[(t + 1) % 2] = mn_distribute_async(t % 2 ? b0 : b1, x + 512 * (t + 1), 512);
        mn_wait(ev[t % 2]);
        mn_distribute(xl, t % 2 ? b1 : b0, 256);
        mnint8 v = mn_distribute(xl);
        acc = (acc << 1) ^ v;
    }}
    {up_src("int", ["acc"])}
}}"""
    y = run(env, src, host(x, "int"), poison(256))
    acc = np.zeros((L, N, Q, 4), np.uint64)
    for t in range(4):
        acc = ishl(acc, 1).reshape(acc.shape) ^ down(x[256 * t:256 * (t + 1)], 1)[0]
    check(y, up([acc]))


# == per-PE vector operations ===================================================================
def f32(a):
    return as_(a, np.float32)


def test_float_vector_arithmetic_and_fma(env):
    x = rand_floats(22, 512)
    src = f"""
__task void fops(DRAM const float *x, DRAM float *y)
{{
    {down_src("float", 2)}
    mnfloat8 s = a0 + a1;
    mnfloat8 d = a0 - a1;
    mnfloat8 p = a0 * a1;
    mnfloat8 f = mn_fma(a0, a1, s);
    mnfloat8 k = a0 * 0.5f + -1.25f;
    {up_src("float", ["s", "d", "p", "f", "k"])}
}}"""
    y = run(env, src, host(x, "float"), poison(256 * 5))
    a, b = down(x, 2)
    fa, fb = f32(a), f32(b)
    s = fa + fb
    fma = (fa.astype(np.float64) * fb.astype(np.float64) + s.astype(np.float64)).astype(np.float32)
    k = fa * np.float32(0.5) + np.float32(-1.25)
    res = [lw(v).reshape(a.shape) for v in (s, fa - fb, fa * fb, fma, k)]
    check(y, up(res))


def test_int_vector_operations(env):
    x = rand_ints(23, 512)
    src = f"""
__task void iops(DRAM const int *x, DRAM int *y)
{{
    {down_src("int", 2)}
    {TAG_C}
    mnint8 sh = tag & 31;
    {up_src("int", ["a0 + a1", "a0 - a1", "a0 & a1", "a0 | a1", "a0 ^ a1", "a0 << sh", "a0 >> sh",
                    "a0 + 7", "a1 - -3"])}
}}"""
    y = run(env, src, host(x, "int"), poison(256 * 9))
    a, b = down(x, 2)
    sh = u32(TAG) & np.uint32(31)
    res = [iadd(a, b), isub(a, b), a & b, a | b, a ^ b, from32(u32(a) << sh), from32(i32(a) >> sh.astype(np.int32)),
           from32(i32(a) + np.int32(7)), from32(i32(b) + np.int32(3))]
    check(y, up([r.reshape(a.shape) for r in res]))


def halves(w):
    """(..., ) long words -> (..., 4) mnhalf bit patterns, the most significant first."""
    return np.stack([(w >> np.uint64(48 - 16 * k)) & np.uint64(0xFFFF) for k in range(4)], -1).astype(np.uint16)


def fp32_pair(hi, lo):
    """Two float32 arrays -> the long words (hi, lo), hi the more significant."""
    return (as_(hi, np.uint32).astype(np.uint64) << np.uint64(32)) | as_(lo, np.uint32).astype(np.uint64)


def test_half_fma_and_lo_hi(env):
    x = rand_halves(24, 512)
    src = f"""
__task void hfma(DRAM const mnhalf *x, DRAM float *y)
{{
    {down_src("mnhalf", 2)}
    mnfloat16 acc = 0.0f;
    acc = mn_fma(a0, a1, acc);
    mnfloat16 acc2 = mn_fma(a1, a1, acc);
    {up_src("float", ["mn_lo(acc)", "mn_hi(acc)", "mn_lo(acc2)", "mn_hi(acc2)"])}
}}"""
    y = run(env, src, host(x, "mnhalf"), poison(256 * 4))
    a, b = (mnhalf_to_f32(halves(v)).astype(np.float64) for v in down(x, 2))
    r1 = (a * b).astype(np.float32)                          # lanes 0..3, the most significant first
    r2 = (b * b + r1.astype(np.float64)).astype(np.float32)
    res = [fp32_pair(r[..., 0], r[..., 1]) for r in (r1,)] + [fp32_pair(r1[..., 2], r1[..., 3])] + \
          [fp32_pair(r2[..., 0], r2[..., 1]), fp32_pair(r2[..., 2], r2[..., 3])]
    check(y, up(res))


def test_splat_halves(env):
    x = rand_halves(25, 256)
    src = f"""
__task void splat(DRAM const mnhalf *x, DRAM mnhalf *y)
{{
    {down_src("mnhalf", 1)}
    {up_src("mnhalf", [f"mn_splat(a0, {h})" for h in range(4)])}
}}"""
    y = run(env, src, host(x, "mnhalf"), poison(256 * 4))
    h = halves(down(x, 1)[0]).astype(np.uint64)
    check(y, up([h[..., k] * np.uint64(0x0001000100010001) for k in range(4)]))


def test_msl_msr(env):
    x = rand_ints(26, 256)
    src = f"""
__task void shifts(DRAM const int *x, DRAM int *y)
{{
    {down_src("int", 1)}
    {TAG_C}
    mnint8 v = a0 ^ tag;
    {up_src("int", ["mn_msl(v)", "mn_msr(v)", "mn_msl(mn_msl(v))"])}
}}"""
    y = run(env, src, host(x, "int"), poison(256 * 3))
    v = (down(x, 1)[0] ^ TAG).reshape(L, N, M, P, 4)
    msl = np.roll(v, 1, axis=3)              # PE p takes PE p-1's value: 0 -> 1 -> 2 -> 3 -> 0
    msr = np.roll(v, -1, axis=3)
    check(y, up([w.reshape(L, N, Q, 4) for w in (msl, msr, np.roll(v, 2, axis=3))]))



def select_inputs():
    r = np.random.default_rng(27)
    shape = (L, N, Q, 8)                  # 32-bit lanes of the PEs' three vectors a0, a1, a2
    A = r.integers(-2**31, 2**31, shape).astype(np.int32)
    B = np.where(r.random(shape) < 0.5, A, r.integers(-2**31, 2**31, shape)).astype(np.int32)
    C = np.where(r.random(shape) < 0.5, 0, r.integers(-2**31, 2**31, shape)).astype(np.int32)
    x = up([lw(A), lw(B), lw(C)])         # up() is down()'s inverse: this x loads them
    assert all((i32(v) == w).all() for v, w in zip(down(x, 3), (A, B, C)))
    assert (A == B).any() and (A != B).any() and (C == 0).any() and (C != 0).any()
    return x, A, B, C


SELECTS = {               # the select, and its numpy model on (A, B, C, TAG, p)
    "eq": ("mn_select(a0 == a1, a2, a1)", lambda A, B, C, T, p: np.where(A == B, C, B)),
    "ne": ("mn_select(a0 != a1, a2, a1)", lambda A, B, C, T, p: np.where(A != B, C, B)),
    "plain": ("mn_select(a2, a0, a1)", lambda A, B, C, T, p: np.where(C != 0, A, B)),
    "location-eq": ("mn_select(mn_pe_in_mab() == 2, a0, tag)", lambda A, B, C, T, p: np.where(p == 2, A, T)),
    "plain-expression": ("mn_select(tag & 1, a0, a1)", lambda A, B, C, T, p: np.where(T & 1, A, B)),
}


def select_kernel(exprs):
    return f"""
__task void sel(DRAM const int *x, DRAM int *y)
{{
    {down_src("int", 3)}
    {TAG_C}
    {up_src("int", exprs)}
}}"""


def select_model(names, A, B, C):
    T, p = i32(TAG), i32(per_pe(lambda l, i, m, p: p))
    return up([lw(SELECTS[k][1](A, B, C, T, p)).reshape(L, N, Q, 4) for k in names])


@pytest.mark.parametrize("form", list(SELECTS))
def test_select(env, form):
    x, A, B, C = select_inputs()
    y = run(env, select_kernel([SELECTS[form][0]]), host(x, "int"), poison(256))
    check(y, select_model([form], A, B, C))


def test_several_selects_in_one_kernel(env):
    x, A, B, C = select_inputs()
    y = run(env, select_kernel([SELECTS[k][0] for k in SELECTS]), host(x, "int"), poison(256 * len(SELECTS)))
    check(y, select_model(list(SELECTS), A, B, C))


def test_select_between_float_vectors(env):
    x = rand_floats(34, 512)
    src = f"""
__task void fsel(DRAM const float *x, DRAM float *y)
{{
    {down_src("float", 2)}
    {TAG_C}
    mnint8 c = tag & 2;
    mnfloat8 r = mn_select(c, a0, a1);
    {up_src("float", ["r"])}
}}"""
    y = run(env, src, host(x, "float"), poison(256))
    a, b = down(x, 2)
    check(y, up([np.where((TAG & np.uint64(2)) != 0, a, b)]))


# == statements: loops, arrays, if ==============================================================
@pytest.mark.parametrize("n", [5, 8])
def test_private_array_indexed_by_a_sequencer_loop(env, n):
    x = rand_ints(28, 256)
    src = f"""
__task void arr(DRAM const int *x, DRAM int *y, int n)
{{
    {down_src("int", 1)}
    {TAG_C}
    mnint8 arr[8];
    mnint8 v = a0;
    for (int i = 0; i < n; i++) {{
        arr[i] = v;
        v = v + tag;
    }}
    mnint8 acc = 0;
    for (int i = 0; i < n; i++)
        acc = (acc << 1) ^ arr[n - 1 - i];
    mnint8 first = 0;
    for (int i = 1; i < n; i += 3)
        first = first + arr[i];
    mnint8 last = arr[n - 1];
    {up_src("int", ["acc", "last", "first"])}
}}"""
    y = run(env, src, host(x, "int"), poison(256 * 3), np.int32(n))
    a = down(x, 1)[0]
    arr = [a]
    for i in range(1, n):
        arr.append(iadd(arr[-1], TAG).reshape(a.shape))
    acc = np.zeros_like(a)
    for i in range(n):
        acc = ishl(acc, 1).reshape(a.shape) ^ arr[n - 1 - i]
    first = np.zeros_like(a)
    for i in range(1, n, 3):
        first = iadd(first, arr[i]).reshape(a.shape)
    check(y, up([acc, arr[n - 1], first]))


def test_unrolled_constant_loops(env):
    x = rand_ints(29, 1024)
    src = f"""
__task void unroll(DRAM const int *x, DRAM int *y)
{{
    L2BM int xs[1024];
    L1BM int xl[512];
    mn_distribute(xs, x, 2048);
    for (int k = 0; k < 4; k++)
        mn_distribute(xl + 128 * k, xs + 256 * k, 256);
    {TAG_C}
    mnint8 acc = tag;
    for (int k = 0; k <= 3; k++) {{
        mnint8 w = mn_distribute(xl + 128 * k);
        for (int j = 0; j < 2; j++)
            acc = acc + w;
        acc = acc ^ tag;
    }}
    mnint8 part[3];
    for (int k = 0; k < 6; k += 2)
        part[k / 2] = mn_distribute(xl + 64 * k);
    {up_src("int", ["acc", "part[0]", "part[1]", "part[2]"])}
}}"""
    y = run(env, src, host(x, "int"), poison(256 * 4))
    lc = mvd_down(x)
    lb = np.concatenate([l2bmd_down(lc[:, 128 * k:128 * (k + 1)]) for k in range(4)], axis=2)   # (L, N, 256)
    acc = TAG
    for k in range(4):
        w = l1bmd_down(lb[:, :, 64 * k:64 * (k + 1)])
        acc = iadd(iadd(acc, w), w).reshape(w.shape) ^ TAG
    parts = [l1bmd_down(lb[:, :, 32 * k:32 * k + 64]) for k in (0, 2, 4)]
    check(y, up([acc] + parts))


@pytest.mark.parametrize("n", [1, 3])
def test_run_time_addresses_in_a_sequencer_loop(env, n):
    """Every level's transfer with an address the sequencer computes (a .call offset)."""
    x = rand_ints(33, 768)
    src = f"""
__task void rtaddr(DRAM const int *x, DRAM int *y, int n)
{{
    L2BM int xs[768];
    L1BM int xl[384];
    L1BM int kl[128];
    L2BM int ks[256];
    {TAG_C}
    mnint8 acc = tag;
    for (int k = 0; k < n; k++) {{
        mn_distribute(xs + 256 * k, x + 512 * k, 512);      /* mvd: DRAM and L2BM offsets */
        mn_distribute(xl + 128 * k, xs + 256 * k, 256);     /* l2bmd: L2BM and L1BM offsets */
        mnint8 w = mn_distribute(xl + 128 * k);             /* l1bmd: an L1BM offset */
        acc = (acc << 1) ^ w;
        mn_gather(kl, w ^ tag);
        mn_gather(ks, kl, 256);
        mn_gather(y + 512 * k, ks, 512);                    /* mvd up: a DRAM offset */
    }}
    mnint8 last = mn_broadcast(xl + 128 * (n - 1) + 8);     /* l1bmp: long word 64 (n - 1) + 4 */
    {up_src("int", ["acc", "last"], dst="y + 512 * 3")}
}}"""
    y = run(env, src, host(x, "int"), poison(256 * 5), np.int32(n))
    acc, want = TAG, [poison(256)] * 3
    lb = None
    for k in range(n):
        w = down(x[256 * k:256 * (k + 1)], 1)[0]
        acc = ishl(acc, 1) ^ w
        want[k] = up([w ^ TAG])
        lb = l2bmd_down(mvd_down(x[256 * k:256 * (k + 1)]))
    check(y, np.concatenate(want + [up([acc, l1bmp(lb[:, :, 4:8])])]))


@pytest.mark.parametrize("n", [2, 5, 7])
def test_uniform_if(env, n):
    x = rand_ints(30, 256)
    src = f"""
__task void uif(DRAM const int *x, DRAM int *y, int n)
{{
    {down_src("int", 1)}
    {TAG_C}
    mnint8 r = a0;
    if (n > 3)
        r = r + tag;
    else
        r = r ^ tag;
    if (NUM_L1B == 2)
        r = r + r;
    else
        r = r - tag;
    if (n == 7) {{
        r = r - tag;
        if (n > 6)
            r = r ^ a0;
    }}
    {up_src("int", ["r"])}
}}"""
    y = run(env, src, host(x, "int"), poison(256), np.int32(n))
    a = down(x, 1)[0]
    r = iadd(a, TAG) if n > 3 else a ^ TAG
    r = iadd(r, r)
    if n == 7:
        r = isub(r, TAG) ^ a
    check(y, up([r.reshape(a.shape)]))


# == compile-time misuse diagnostics ==============================================================
def build_error(env, src):
    """The build fails with mncl's build error; returns (message, the line of /*HERE*/)."""
    ctx, _ = env
    with pytest.raises(cl.RuntimeError) as e:
        cl.Program(ctx, src).build()
    assert e.value.code_name == "BUILD_PROGRAM_FAILURE"
    here = [k + 1 for k, ln in enumerate(src.splitlines()) if "/*HERE*/" in ln]
    return str(e.value), here[0] if here else None


def expect_build_error(env, src, *patterns):
    msg, line = build_error(env, src)
    if line is not None:
        assert f"kernel.cl:{line}:" in msg, msg
    assert "error:" in msg
    for p in patterns:
        assert re.search(p, msg), f"{p!r} not in: {msg}"


def task(body, params="DRAM const float *x, DRAM float *y"):
    return f"__task void bad({params})\n{{\n{body}\n}}\n"


SIZE_CASES = {          # family: (declarations, the call with a size that is not a whole unit)
    "mvp": ("L2BM float a[256];", "mn_unicast(a, x, 64, 0);"),                    # 32 of 64 long words
    "mvb2": ("L2BM float a[256];", "mn_broadcast(a, x, 192);"),                   # 96
    "mvb": ("L2BM float a[256];", "mn_broadcast_board(a, x, 100, 0);"),           # 50
    "mvd": ("L2BM float a[256];", "mn_distribute(a, x, 100);"),                   # 50 of 128
    "mvd-half-unit": ("L2BM float a[256];", "mn_distribute(a, x, 128);"),   # 64 of 128
    "mvd-up-half-unit": ("L2BM float a[256];", "mn_gather(y, a, 384);"),    # 192 of 128
    "mvr2": ("L2BM float a[256];", "mn_reduce(y, a, 64, MN_ADD);"),
    "mvr": ("L2BM float a[256];", "mn_reduce_board(y, a, 96, 0, MN_ADD);"),
    "l2bmb": ("L2BM float a[256]; L1BM float b[256];", "mn_broadcast(b, a, 96);"),   # 48 of 64
    "l2bmd": ("L2BM float a[256]; L1BM float b[256];", "mn_distribute(b, a, 64);"),  # 32 of 64
    "l2bmd-up": ("L2BM float a[256]; L1BM float b[256];", "mn_gather(a, b, 192);"),  # 96 of 64
    "l2bmr": ("L2BM float a[256]; L1BM float b[256];", "mn_reduce(a, b, 64, MN_ADD);"),
}


@pytest.mark.parametrize("case", [pytest.param(*v.values, id=k, marks=v.marks) if hasattr(v, "values")
                                  else pytest.param(v, id=k) for k, v in SIZE_CASES.items()])
def test_size_not_a_whole_unit(env, case):
    decl, call = case
    expect_build_error(env, task(f"    {decl}\n    {call} /*HERE*/"), r"whole units of \d+ long words")


def test_constant_address_not_a_whole_long_word(env):
    expect_build_error(env, task("    L2BM float a[256];\n    mn_distribute(a, x + 1, 256); /*HERE*/"),
                       "not a whole long word")
    expect_build_error(env, task("    L2BM float a[256];\n    L1BM float b[256];\n"
                                 "    mn_distribute(b, a + 3, 128); /*HERE*/"), "not a whole long word")
    expect_build_error(env, task("    L1BM float b[256];\n    mnfloat8 v = mn_broadcast(b + 1); /*HERE*/"),
                       "not a whole long word")


def test_constant_out_of_bounds_on_an_l2bm_array(env):
    expect_build_error(env, task("    L2BM float a[256];\n    L1BM float b[512];\n"
                                 "    mn_distribute(b, a + 128, 256); /*HERE*/"), "outside 'a'")
    expect_build_error(env, task("    L2BM float a[256];\n    mn_distribute(a + 192, x, 512); /*HERE*/"),
                       "outside 'a'")
    expect_build_error(env, task("    L1BM float b[128];\n    mnfloat8 v = mn_distribute(b + 8); /*HERE*/"),
                       "outside 'b'")


@pytest.mark.parametrize("decl,what", [
    ("L2BM long big[32769];", "L2BM array 'big'"),
    ("L2BM float a[32768];\n    L2BM float big[32770]; /*HERE*/", "L2BM array 'big'"),
    ("L1BM long big[8193];", "L1BM array 'big'"),
    ("L1BM double a[4000];\n    L1BM int big[8322]; /*HERE*/", "L1BM array 'big'"),
])
def test_allocation_beyond_capacity(env, decl, what):
    if "/*HERE*/" not in decl:
        decl += " /*HERE*/"
    expect_build_error(env, task("    " + decl), what, "32768|8192")


def test_private_arrays_beyond_lm(env):
    expect_build_error(env, task("    mnfloat8 a[512];\n    mnfloat8 b[512];\n    mnint8 c[1]; /*HERE*/"),
                       "private array")
    expect_build_error(env, task("    mnfloat16 a[257]; /*HERE*/"), "private array")


def test_writing_through_a_const_dram_pointer(env):
    expect_build_error(env, task("    L2BM float a[256];\n    mn_gather(x, a, 512); /*HERE*/"),
                       "'x', a pointer to const")
    expect_build_error(env, task("    L2BM float a[256];\n    mn_unicast(x + 128, a, 128, 0); /*HERE*/"),
                       "'x', a pointer to const")


@pytest.mark.parametrize("call,msg", [
    ("mn_broadcast(b, x, 128);", "'mn_broadcast' cannot move DRAM -> L1BM"),
    ("mn_distribute(b, x, 256);", "'mn_distribute' cannot move DRAM -> L1BM"),
    ("mn_gather(y, b, 256);", "'mn_gather' cannot move L1BM -> DRAM"),
    ("mn_broadcast(a, b, 128);", "'mn_broadcast' cannot move L1BM -> L2BM"),
    ("mn_unicast(a, b, 128, 0);", "'mn_unicast' cannot move L1BM -> L2BM"),
    ("mn_reduce(a, x, 128, MN_ADD);", "'mn_reduce' cannot move DRAM -> L2BM"),
])
def test_wrong_direction(env, call, msg):
    expect_build_error(env, task(f"    L2BM float a[256];\n    L1BM float b[256];\n    {call} /*HERE*/"),
                       re.escape(msg))


def test_waiting_twice(env):
    expect_build_error(env, task("    L2BM float a[256];\n    mn_event e = mn_distribute_async(a, x, 512);\n"
                                 "    mn_wait(e);\n    mn_wait(e); /*HERE*/"),
                       "waiting on event 'e', which has no transfer in flight")


def test_reusing_an_event_in_flight(env):
    expect_build_error(env, task("    L2BM float a[256];\n    L2BM float b[256];\n    mn_event e[2];\n"
                                 "    e[1] = mn_distribute_async(a, x, 512);\n"
                                 "    e[1] = mn_distribute_async(b, x, 512); /*HERE*/\n    mn_wait(e[1]);"),
                       r"event 'e\[1\]' still has a transfer in flight")


def test_kernel_ending_with_a_transfer_in_flight(env):
    msg, _ = build_error(env, task("    L2BM float a[256];\n    mn_event e = mn_distribute_async(a, x, 512);"))
    assert "transfer in flight" in msg and "'e'" in msg and "mn_wait" in msg, msg
    assert re.search(r"kernel\.cl:[2-5]:", msg), msg         # the body's braces or the transfer


def test_scope_ending_with_a_transfer_in_flight(env):
    msg, _ = build_error(env, task("    L2BM float a[256];\n    {\n"
                                   "        mn_event e = mn_distribute_async(a, x, 512);\n    }"))
    assert "transfer in flight" in msg and "'e'" in msg, msg
    assert re.search(r"kernel\.cl:[4-6]:", msg), msg         # the inner scope's braces or the transfer


def test_unknown_builtin(env):
    expect_build_error(env, task("    L1BM float b[256];\n    mnfloat8 v = mn_teleport(b); /*HERE*/"),
                       "'mn_teleport' is not a task-kernel builtin")


def test_while_loop(env):
    expect_build_error(env, task("    int i = 0;\n    while (i < 4) /*HERE*/\n        i++;"),
                       "no while loops")


@pytest.mark.parametrize("param", ["float *p", "L2BM float *p", "__global float *p"])
def test_non_dram_pointer_parameter(env, param):
    msg, _ = build_error(env, f"__task void bad(DRAM float *y, {param})\n{{\n}}\n")
    assert "parameter 'p' must point to DRAM" in msg and "kernel.cl:1:" in msg, msg


# == run-time faults ================================================================================
def run_fault(env, src, *args):
    with pytest.raises(cl.Error) as e:
        run(env, src, *args)
    return str(e.value)


def test_out_of_bounds_dram_transfer_with_a_runtime_offset(env):
    src = """__task void oob(DRAM const float *x, DRAM float *y, int off)
{
    L2BM float a[256];
    mn_distribute(a, x + off, 512);
    mn_gather(y, a, 512);
}
"""
    x, y = np.arange(1024, dtype=np.float32), np.zeros(512, np.float32)
    for off in (0, 512):                                       # the build and in-bounds runs are fine
        np.testing.assert_array_equal(run(env, src, x, y, np.int32(off)), x[off:off + 512])
    msg = run_fault(env, src, x, y, np.int32(514))
    assert "line 4" in msg and "mn_distribute" in msg and "outside 'x'" in msg, msg
    msg = run_fault(env, src, x, y, np.int32(-2))
    assert "line 4" in msg and "outside 'x'" in msg, msg
    msg = run_fault(env, src, x, y, np.int32(1))               # not a whole long word
    assert "line 4" in msg and "long word" in msg, msg


def test_out_of_bounds_private_array_index_at_run_time(env):
    src = f"""__task void idx(DRAM const int *x, DRAM int *y, int n)
{{
    mnint8 arr[4];
    {TAG_C}
    for (int i = 0; i < n; i++)
        arr[i] = tag;
    {up_src("int", ["arr[0]"])}
}}
"""
    run(env, src, host(rand_ints(31, 256), "int"), poison(256), np.int32(4))
    msg = run_fault(env, src, host(rand_ints(31, 256), "int"), poison(256), np.int32(5))
    assert "line 6" in msg and "outside 'arr'" in msg, msg


def test_out_of_bounds_l2bm_transfer_with_a_runtime_offset(env):
    src = """__task void oob2(DRAM const float *x, DRAM float *y, int off)
{
    L2BM float xs[256];
    L1BM float xl[128];
    mn_distribute(xs, x, 512);
    mn_distribute(xl, xs + off, 128);
    mn_gather(xs, xl, 128);
    mn_gather(y, xs, 512);
}
"""
    x, y = np.arange(512, dtype=np.float32), np.zeros(512, np.float32)
    lc = mvd_down(lw(x)).copy()
    lc[:, :64] = l2bmd_up(l2bmd_down(lc[:, 64:128]))          # off = 128 floats: long words 64..127
    check(run(env, src, x, y, np.int32(128)), mvd_up(lc))
    msg = run_fault(env, src, x, y, np.int32(130))
    assert "line 6" in msg and "outside 'xs'" in msg, msg


def test_waiting_twice_inside_a_sequencer_loop(env):
    src = """__task void wait2(DRAM const float *x, DRAM float *y, int n)
{
    L2BM float a[256];
    mn_event e = mn_distribute_async(a, x, 512);
    for (int i = 0; i < n; i++)
        mn_wait(e);
    mn_gather(y, a, 512);
}
"""
    x, y = np.ones(512, np.float32), np.zeros(512, np.float32)
    out = run(env, src, x, y, np.int32(1))
    np.testing.assert_array_equal(out, x)
    msg = run_fault(env, src, x, y, np.int32(2))
    assert "line 6" in msg and "'e'" in msg and "no transfer in flight" in msg, msg


def test_reusing_an_event_in_flight_inside_a_sequencer_loop(env):
    src = """__task void reuse(DRAM const float *x, DRAM float *y, int n)
{
    L2BM float a[256];
    mn_event e;
    for (int i = 0; i < n; i++)
        e = mn_distribute_async(a, x, 512);
    mn_wait(e);
    mn_gather(y, a, 512);
}
"""
    x, y = np.ones(512, np.float32), np.zeros(512, np.float32)
    out = run(env, src, x, y, np.int32(1))
    np.testing.assert_array_equal(out, x)
    msg = run_fault(env, src, x, y, np.int32(2))
    assert "line 6" in msg and "still has a transfer in flight" in msg, msg


def test_waiting_on_an_event_started_in_a_branch_not_taken(env):
    src = """__task void branch(DRAM const float *x, DRAM float *y, int n)
{
    L2BM float a[256];
    mn_event e;
    if (n > 0)
        e = mn_distribute_async(a, x, 512);
    mn_wait(e);
    mn_gather(y, a, 512);
}
"""
    x, y = np.ones(512, np.float32), np.zeros(512, np.float32)
    np.testing.assert_array_equal(run(env, src, x, y, np.int32(1)), x)
    msg = run_fault(env, src, x, y, np.int32(0))
    assert "line 7" in msg and "'e'" in msg and "no transfer in flight" in msg, msg


def test_kernel_ending_with_a_transfer_in_flight_at_run_time(env):
    src = """__task void tail(DRAM const float *x, DRAM float *y, int n)
{
    L2BM float a[256];
    mn_event e;
    mn_distribute(a, x, 512);
    mn_gather(y, a, 512);
    if (n > 0)
        e = mn_distribute_async(a, x, 512);
}
"""
    x, y = np.ones(512, np.float32), np.zeros(512, np.float32)
    run(env, src, x, y, np.int32(0))
    msg = run_fault(env, src, x, y, np.int32(1))
    assert "'e'" in msg and "transfer in flight" in msg, msg


# == launching ======================================================================================
COPY = """__task void copy(DRAM const float *x, DRAM float *y)
{
    L2BM float a[256];
    mn_distribute(a, x, 512);
    mn_gather(y, a, 512);
}
"""


def test_ndrange_launch_of_a_task_kernel_is_an_error(env):
    ctx, q = env
    prg = cl.Program(ctx, COPY).build()
    xb = cl.Buffer(ctx, mf.READ_WRITE, 2048)
    with pytest.raises(cl.LogicError, match="task kernel.*enqueue_task"):
        prg.copy(q, (64,), None, xb, xb).wait()


def test_task_kernel_on_the_cpu_device_is_an_error():
    cpu = [d for d in cl.get_platforms()[0].get_devices() if "CPU" in d.name.upper()]
    ctx = cl.Context(cpu[:1])
    q = cl.CommandQueue(ctx)
    x = np.arange(512, dtype=np.float32)
    xb = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=x)
    yb = cl.Buffer(ctx, mf.READ_WRITE, x.nbytes)
    with pytest.raises(cl.Error, match="emulator device only"):
        k = cl.Program(ctx, COPY).build().copy
        k.set_args(xb, yb)
        cl.enqueue_task(q, k).wait()


# == the matrix unit from C ========================================================================
def matrix_model(a_rows, b, rows, cols_per_pe):
    """A b per MAB and cycle: A's row r*4 + c from matrix-row vector r's cycle c, column
    cols_per_pe * p + lane from PE p; b likewise per cycle.  -> (L, N, M, 4 cycles, outputs)."""
    def split(v):                                    # (L, N, Q, 4) long words -> (L, N, M, 4c, P*lanes)
        lanes = halves(v).astype(np.uint16) if cols_per_pe == 4 else \
            np.stack([as_(v >> np.uint64(32), np.uint64).astype(np.uint32), v.astype(np.uint32)], -1)
        vals = mnhalf_to_f32(lanes) if cols_per_pe == 4 else lanes.view(np.float32)
        return vals.reshape(L, N, M, P, 4, cols_per_pe).transpose(0, 1, 2, 4, 3, 5).reshape(L, N, M, 4, -1)
    A = np.concatenate([split(a) for a in a_rows], axis=3).astype(np.float64)       # (L, N, M, rows, cols)
    return np.einsum("lnmrk,lnmck->lnmcr", A[:, :, :, :rows], split(b).astype(np.float64))


def test_matrix_vector_half(env):
    x = rand_halves(40, 256 * 5)
    src = f"""
__task void mv(DRAM const mnhalf *x, DRAM float *y)
{{
    {down_src("mnhalf", 5)}
    mn_matrix_rows(0, a0);
    mn_matrix_rows(4, a1);
    mn_matrix_rows(8, a2);
    mn_matrix_rows(12, a3);
    mnfloat16 r = mn_matrix_vector(a4);
    mnfloat16 s = mn_matrix_vector(a4, r);
    {up_src("float", ["mn_lo(r)", "mn_hi(r)", "mn_lo(s)", "mn_hi(s)"])}
}}"""
    y = run(env, src, host(x, "mnhalf"), poison(256 * 4))
    pes = down(x, 5)
    r = matrix_model(pes[:4], pes[4], 16, 4).astype(np.float32)        # exact products, one rounding
    s = (2 * r.astype(np.float64)).astype(np.float32)
    def outs(v):                                     # output j -> PE j // 4, lane j % 4
        v = v.reshape(L, N, M, 4, P, 4).transpose(0, 1, 2, 4, 3, 5).reshape(L, N, Q, 4, 4)
        return [fp32_pair(v[..., 0], v[..., 1]), fp32_pair(v[..., 2], v[..., 3])]
    check(y, up(outs(r) + outs(s)))


def test_matrix_vector_fp32_and_block_float(env):
    x = rand_floats(41, 256 * 3)
    src = f"""
__task void mvf(DRAM const float *x, DRAM float *y)
{{
    {down_src("float", 3)}
    mn_matrix_rows(0, a0);
    mn_matrix_rows(4, a1);
    mnfloat8 r = mn_matrix_vector(a2);
    mnfloat8 q = mn_block_float(a2);
    {up_src("float", ["r", "q"])}
}}"""
    y = lw(run(env, src, host(x, "float"), poison(256 * 2)))
    pes = down(x, 3)

    def floats(v):                    # PE vectors (L, N, Q, 4) -> (L, N, M, cycle, P * 2) floats
        f = np.stack([(v >> np.uint64(32)).astype(np.uint32), v.astype(np.uint32)], -1).view(np.float32)
        return f.reshape(L, N, M, P, 4, 2).transpose(0, 1, 2, 4, 3, 5).reshape(L, N, M, 4, 8)
    got_r, got_q = (floats(l1bmd_down(l2bmd_down(mvd_down(y))[:, :, 64 * k:64 * (k + 1)])) for k in range(2))
    # the g matrix mode ignores its inputs' low 5 mantissa bits (docs/isa.md): a relative tolerance
    want = matrix_model(pes[:2], pes[2], 8, 2)
    np.testing.assert_allclose(got_r, want, rtol=2e-4, atol=1e-4 * np.abs(want).max())
    # block float: a cycle's 8 floats across the MAB share the largest exponent; each value moves by
    # at most half a unit of 18 mantissa bits at that exponent
    f = floats(pes[2]).astype(np.float64)
    top = np.abs(f).max(axis=(4,), keepdims=True)
    assert np.all(np.abs(got_q - f) <= top * 2.0 ** -17), np.abs(got_q - f).max()
    assert np.any(got_q != f)                      # it did round something
