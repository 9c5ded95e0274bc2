"""The emulator's fast paths against the general computations they replace.

Each fast path (native fp32 add/mul, the normalisation's no-change check, the cached
write-mask keep bits and their all/none shortcuts, flag nibbles by bit tricks) must give
bit-identical results to the straightforward formula, over random values and the special
ones (+-0, denormals, +-inf, NaN of either sign, the largest and smallest normals).
"""
from __future__ import annotations

import numpy as np
import pytest

from emulator.asm import assemble
from emulator.executor import LUT_L, LUT_LL0, LUT_LL1, LUT_W, Emulator
from emulator.numbers import normalize_bits
from emulator.semantics import _flags_nibble_general, flags_nibble

_UINT = {64: np.uint64, 32: np.uint32, 16: np.uint16}
_EXP = {64: (52, 0x7FF), 32: (23, 0xFF), 16: (9, 0x3F)}


def reference_normalize(bits, width):
    """The rule, spelt out: exponent 0 -> +0; exponent all ones -> mantissa cleared."""
    mbits, emax = _EXP[width]
    t = _UINT[width]
    bits = np.asarray(bits).astype(t)
    e = (bits >> t(mbits)) & t(emax)
    out = np.where(e == emax, bits & ~t((1 << mbits) - 1), bits)
    return np.where(e == 0, t(0), out).astype(t)


SPECIAL32 = np.array([0x00000000, 0x80000000, 0x00000001, 0x807FFFFF, 0x00800000, 0x80800000,
                      0x7F7FFFFF, 0xFF7FFFFF, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000,
                      0x7F800001, 0xFFBFFFFF, 0x3F800000, 0xBF800000, 0x34000000, 0x33800000,
                      0x0B000000, 0x1F800000, 0x5F800000, 0x7F000000], dtype=np.uint32)


def fp32_values(rng, n):
    """Random bit patterns, random moderate floats and the specials, mixed."""
    bits = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    moderate = rng.standard_normal(n).astype(np.float32).view(np.uint32)
    tiny = (rng.standard_normal(n) * 2.0 ** -120).astype(np.float32).view(np.uint32)
    with np.errstate(over="ignore"):
        huge = (rng.standard_normal(n) * 2.0 ** 126).astype(np.float32).view(np.uint32)
    special = SPECIAL32[rng.integers(0, SPECIAL32.size, n)]
    pick = rng.integers(0, 5, n)
    return np.choose(pick, [bits, moderate, tiny, huge, special]).astype(np.uint32)


@pytest.mark.parametrize("width", [64, 32, 16])
def test_normalize_bits_matches_the_rule(width):
    rng = np.random.default_rng(width)
    t = _UINT[width]
    mbits, emax = _EXP[width]
    raw = rng.integers(0, 1 << min(width, 63), 20000, dtype=np.uint64).astype(t)
    if width == 64:
        raw |= rng.integers(0, 2, raw.size, dtype=np.uint64) << np.uint64(63)
    # make each class common: exponent 0, exponent all ones, zeros of both signs
    cls = rng.integers(0, 5, raw.size)
    emask = t(emax << mbits)
    raw = np.where(cls == 1, raw & ~emask, raw)
    raw = np.where(cls == 2, raw | emask, raw)
    raw = np.where(cls == 3, raw & t(1 << (width - 1)), raw)
    for sample in (raw, raw[cls == 0], raw[cls != 1], raw[(cls == 0) | (cls == 4)], raw[cls == 3],
                   raw[:0], np.where(cls == 3, t(0), raw)):
        got = normalize_bits(sample.copy(), width)
        assert got.dtype == t
        assert np.array_equal(got, reference_normalize(sample, width))


@pytest.mark.parametrize("op", [np.add, np.multiply, np.subtract])
def test_native_fp32_equals_float64_then_rounding(op):
    """+, -, * of fp32 done in float32 give the bits of float64 arithmetic rounded to float32,
    once normalised (NaN payloads may differ; the rule makes every NaN an infinity)."""
    rng = np.random.default_rng(7)
    x = fp32_values(rng, 200000).view(np.float32)
    y = fp32_values(rng, 200000).view(np.float32)
    with np.errstate(all="ignore"):
        native = op(x, y)
        wide = op(x, y, dtype=np.float64).astype(np.float32)
    a = normalize_bits(native.view(np.uint32), 32)
    b = normalize_bits(wide.view(np.uint32), 32)
    assert np.array_equal(a, b)


def _reference_mau(x_bits, y_bits, op):
    """The emulator's earlier fp32 vadd / vmul: float64 arithmetic, rounded, normalised."""
    x, y = x_bits.view(np.float32), y_bits.view(np.float32)
    with np.errstate(all="ignore"):
        r = (np.add if op == "vadd" else np.multiply)(x, y, dtype=np.float64).astype(np.float32)
    return reference_normalize(r.view(np.uint32), 32)


@pytest.mark.parametrize("op", ["vadd", "vmul"])
@pytest.mark.parametrize("neg", ["", "-"])
def test_fp32_mau_add_mul_bit_exact_with_specials(op, neg):
    emu = Emulator("tiny")
    P = emu.m.n_pe
    rng = np.random.default_rng(11)
    xs = fp32_values(rng, 4 * P * 2).reshape(4, P, 2)
    ys = fp32_values(rng, 4 * P * 2).reshape(4, P, 2)
    for c in range(4):     # $lr8v: long words 4, 5, 6, 7 (word addresses 8, 10, 12, 14)
        emu.write_pe("r", 8 + 2 * c, xs[c].view(np.uint64))       # (P, 1)
        emu.write_pe("r", 16 + 2 * c, ys[c].view(np.uint64))
    emu.run(assemble(f"f{op} {neg}$lr8v $lr16v $lr0v\nnop\nnop\n"))
    got = np.stack([emu.read_pe("r", 2 * c)[:, 0] for c in range(4)])
    xr = xs ^ np.uint32(0x80000000) if neg else xs
    want = _reference_mau(xr, ys, op).view(np.uint64)[..., 0]
    assert np.array_equal(got, want)


@pytest.mark.parametrize("n", [1, 2, 4])
@pytest.mark.parametrize("msb_first", [True, False])
def test_flags_nibble_bit_tricks(n, msb_first):
    rng = np.random.default_rng(n)
    f = rng.random((4, 96, n)) < 0.5
    for g in (f, f[..., ::-1], np.asfortranarray(f), f[:, ::3]):
        got = flags_nibble(g, msb_first)
        want = _flags_nibble_general(g, msb_first)
        assert got.dtype == np.uint8 and np.array_equal(got, want)


def _reference_store(old, val, nib, lut):
    keep = lut[nib]
    return old ^ ((old ^ val) & keep)


MASKS = {
    "random": lambda rng, P: rng.integers(0, 16, (4, P), dtype=np.uint8),
    "all ones": lambda rng, P: np.full((4, P), 15, np.uint8),
    "none": lambda rng, P: np.zeros((4, P), np.uint8),
    "upper half": lambda rng, P: np.full((4, P), 0xC, np.uint8),
    "lower half": lambda rng, P: np.full((4, P), 0x3, np.uint8),
    "per PE": lambda rng, P: np.broadcast_to(rng.integers(0, 2, P, dtype=np.uint8) * 15, (4, P)).copy(),
}


@pytest.mark.parametrize("mask", list(MASKS))
def test_masked_stores_match_the_merge_formula(mask):
    """l, ll and word stores under flag entry 1, with the entry rewritten by the host between runs
    (the cached keep bits must follow it); word operands both gathered and sliced, and a word
    every cycle names (the cycles land in order: a masked-off cycle keeps what an earlier one wrote)."""
    emu = Emulator("tiny")
    P = emu.m.n_pe
    rng = np.random.default_rng(3)
    prog = assemble("lpassa $lr16v $lr64v/$imr1\nlpassa $llr32v $llr96v/$imr1\n"
                    "ipassa $r8v $r128v/$imr1\nipassa $r9v2 $r201v4/$imr1\nipassa $r10v2 $r240/$imr1\nnop\nnop\n")
    for _ in range(3):
        for sp in "r":
            emu.write_pe(sp, 0, rng.integers(0, 1 << 63, (P, 128), dtype=np.uint64) * np.uint64(2) + np.uint64(1))
        before = emu.state.mem["r"].copy()
        nib = MASKS[mask](rng, P)
        emu.state.omr[1] = nib
        emu.run(prog)
        after = emu.state.mem["r"]
        want = before.copy()
        # (source first) lpassa: long words 8 + c -> 32 + c
        c4 = np.arange(4)
        want[32 + c4] = _reference_store(before[32 + c4], before[8 + c4], nib, LUT_L)
        # ll: long words 16 + 2c, 17 + 2c -> 48 + 2c, 49 + 2c
        want[48 + 2 * c4] = _reference_store(before[48 + 2 * c4], before[16 + 2 * c4], nib, LUT_LL0)
        want[49 + 2 * c4] = _reference_store(before[49 + 2 * c4], before[17 + 2 * c4], nib, LUT_LL1)
        # ipassa: words 8 + c -> 128 + c (word a is the upper half of long word a // 2 when even)
        b32 = before.view(np.uint32).reshape(before.shape + (2,))
        w32 = want.view(np.uint32).reshape(want.shape + (2,))
        # and words 9 + 2c -> 201 + 4c: one half of evenly strided long words (sliced, not gathered)
        for c in range(4):
            for src, a in ((8 + c, 128 + c), (9 + 2 * c, 201 + 4 * c)):
                old = b32[a >> 1, :, 1 - (a & 1)]
                val = b32[src >> 1, :, 1 - (src & 1)]
                w32[a >> 1, :, 1 - (a & 1)] = _reference_store(old, val, nib[c], LUT_W.astype(np.uint32))
        for c in range(4):     # words 10 + 2c -> 240, cycle after cycle
            w32[120, :, 1] = _reference_store(w32[120, :, 1], b32[5 + c, :, 1], nib[c], LUT_W.astype(np.uint32))
        assert np.array_equal(after, want)


_LANE = {"l": (np.uint64, np.int64), "i": (np.uint32, np.int32), "s": (np.uint16, np.int16)}


@pytest.mark.parametrize("prec", list(_LANE))
@pytest.mark.parametrize("op", ["lsl", "ulsr", "lsr"])
@pytest.mark.parametrize("x_op", ["$lr0v", "$lr2"])
def test_shifts_in_place_match_the_plain_formula(prec, op, x_op):
    """Shifts compute into the buffer of their masked counts; per lane they are x << (y & (w-1)),
    x >> (y & (w-1)) (logical with u, arithmetic without), whatever the counts, also when x is one
    long word broadcast over the cycles ($lr2, no 'v'); the flags are 'result is zero' per lane."""
    emu = Emulator("tiny")
    P = emu.m.n_pe
    rng = np.random.default_rng(5)
    x = rng.integers(0, 1 << 64, (P, 4), dtype=np.uint64, endpoint=False)
    y = rng.integers(0, 1 << 64, (P, 4), dtype=np.uint64, endpoint=False)
    x[:, 3] = 0                                             # zero lanes for the flags
    emu.write_pe("r", 0, x)
    emu.write_pe("s", 0, y)
    name = ("u" if op == "ulsr" else "") + prec + op.lstrip("u")
    emu.run(assemble(f"{name} {x_op} $ls0v $ln0v\n{name} {x_op} $ls0v $omr1\nnop\nnop\n"))
    u, s = _LANE[prec]
    w = np.dtype(u).itemsize * 8
    xs = (x if x_op.endswith("v") else np.repeat(x[:, 1:2], 4, axis=1)).view(u)
    cnt = y.view(u) & u(w - 1)
    if op == "lsl":
        want = xs << cnt
    elif op == "ulsr":
        want = xs >> cnt
    else:
        want = (xs.view(s) >> cnt.astype(s)).view(u)
    got = emu.read_pe("n", 0, 4).view(u)
    assert np.array_equal(got, want)
    lanes_per_long = 64 // w
    zero = (want == 0).reshape(P, 4, lanes_per_long)[..., ::-1]     # lanes MSB first
    weights = np.array({1: [15], 2: [12, 3], 4: [8, 4, 2, 1]}[lanes_per_long], dtype=np.uint8)
    nib = (zero * weights).sum(-1).astype(np.uint8)
    assert np.array_equal(emu.state.omr[1].T, nib)


@pytest.mark.parametrize("name", ["l1bmp", "l1bmm", "l1bmm4", "l1bmd"])
@pytest.mark.parametrize("k", [1, 2])
def test_l1bm_down_layouts_match_the_documented_addresses(name, k):
    """L1BM -> PE transfers build their (cycle, PE) values in place in one buffer; each PE cycle gets
    the long words transfers.py documents (a + ... + j, j < k), for every layout, l and ll."""
    emu = Emulator("tiny")
    m = emu.m
    M = m.mab_per_l1b
    rng = np.random.default_rng(k)
    emu.state.l1bm[:, :256] = rng.integers(0, 1 << 64, (m.n_l1b, 256), dtype=np.uint64, endpoint=False)
    a = 8
    w = "ll" if k == 2 else "l"
    emu.run(assemble(f"{name} ${w}b{a} ${w}r0v\nnop\nnop\n"))
    got = emu.read_pe("r", 0, 4 * k).reshape(m.n_pe, 4, k)               # PE, cycle, j
    pe = np.arange(m.n_pe)
    l1b, i = pe // m.pe_per_l1b, pe % m.pe_per_l1b                      # L1B, PE in the L1B
    mab, p = i // 4, i % 4
    c, j = np.arange(4)[None, :, None], np.arange(k)[None, None, :]
    addr = {"l1bmp": a + k * c + j + 0 * i[:, None, None],
            "l1bmm": a + 4 * k * c + 4 * j + p[:, None, None],
            "l1bmm4": a + k * M * c + M * j + (4 * (mab >> 2) + p)[:, None, None],
            "l1bmd": a + k * 4 * M * c + 4 * M * j + i[:, None, None]}[name]
    want = emu.state.l1bm[l1b[:, None, None], addr]
    assert np.array_equal(got, want)


def test_cycle_uniform_expressions_match_the_four_cycle_computation(monkeypatch):
    """An ALU/MAU expression whose operands are all plain (one location in every cycle) runs once,
    on cycle 0: memories, forwarding paths and masks must come out as when all four cycles run,
    over random bits (specials included), masked and unmasked, l/ll/word widths and fixed values."""
    import emulator.executor as executor
    src = ("fvadd $lr0 $lr2 $lr4\nnop\nlpassa $mauf $ln0v\n"
           "dvfmad $lr8 $lr12 $lr16 $ls0/$imr1\nnop\nlpassa $mauf $ln8v\n"
           "iadd $peid $lr20 $ls4\nlsl $lr22 $lr24 $ls6/$imr1\nnop\nlpassa $aluf $ln16v\n"
           "msl $lr26 $ls8\nfvmul $llr28 $llr32 $lls12\nfvpassa $lr36 $nowrite\nnop\n"
           "ipassa $r41 $r43/$imr1\nfmax $lr44 $lr46 $ls16\nnop\nnop\n")
    results, taken = [], []
    general = executor._cycle_uniform
    for fast in (True, False):
        monkeypatch.setattr(executor, "_cycle_uniform", lambda e: fast and taken.append(e) is None and general(e))
        emu = Emulator("tiny")
        P = emu.m.n_pe
        rng = np.random.default_rng(11)
        for sp in "mnrs":
            bits = rng.integers(0, 1 << 63, (P, 64), dtype=np.uint64) * np.uint64(3)
            spec = SPECIAL32.astype(np.uint64)[rng.integers(0, SPECIAL32.size, (2, P, 22))]
            bits[:, ::3] = (spec[0] << np.uint64(32)) | spec[1]
            emu.write_pe(sp, 0, bits)
        emu.state.omr[1] = rng.integers(0, 16, emu.state.omr[1].shape, dtype=np.uint8)
        emu.run(assemble(src))
        results.append([emu.state.mem[sp].copy() for sp in "mnrs"])
    assert sum(map(general, taken)) == 9       # all but the three reads of a forwarding path
    for fast, slow in zip(*results):
        assert np.array_equal(fast, slow)


@pytest.mark.parametrize("name", ["fftoi", "ufftoi", "fitof", "ufitof"])
def test_fp32_conversions_match_the_rule(name):
    """fp32 -> int32/uint32 truncates toward zero (u: of |x|), clips to the lane's range and gives
    0 for NaN; int32/uint32 -> fp32 rounds to nearest even: as float64 arithmetic says, over random
    bit patterns and the specials (both clipping ends, +-0, denormals, infinities, NaN)."""
    emu = Emulator("tiny")
    P = emu.m.n_pe
    rng = np.random.default_rng(9)
    bits = fp32_values(rng, P * 8).reshape(P, 4, 2)
    bits[:2, 0] = np.array([[0x4F000000, 0xCF000000], [0x4F800000, 0x4EFFFFFF]], np.uint32)   # +-2^31, 2^32
    emu.write_pe("r", 0, np.ascontiguousarray(bits[..., ::-1]).view(np.uint64)[..., 0])
    emu.run(assemble(f"{name} $lr0v $ln0v\nnop\nnop\n"))
    got = emu.read_pe("n", 0, 4)[..., None].view(np.uint32)[..., ::-1]
    unsigned = name.startswith("u")
    if name.endswith("ftoi"):
        with np.errstate(invalid="ignore"):
            t = np.trunc(bits.view(np.float32).astype(np.float64))
        t = np.abs(t) if unsigned else t
        lo, hi = (0, 2**32 - 1) if unsigned else (-2**31, 2**31 - 1)
        want = np.where(np.isnan(t), 0, np.clip(np.nan_to_num(t), lo, hi)).astype(np.int64)
        want = want.astype(np.uint32 if unsigned else np.int32).view(np.uint32)
    else:
        ints = bits if unsigned else bits.view(np.int32)
        want = ints.astype(np.float64).astype(np.float32).view(np.uint32)
    assert np.array_equal(got, want)


def test_fp32_rsqrt_matches_the_frexp_rule():
    """frsqrt keeps 5 fraction bits of the float64 1/sqrt(|x|) (floor of the frexp mantissa times
    64): the element-wise path that clears the low 47 bits must give the same fp32 lanes, over
    random patterns and the specials (+-0 gives inf, inf gives 0, denormals); with a NaN among them
    the general path answers."""
    from emulator.semantics import from_float, rsqrt, to_float
    rng = np.random.default_rng(11)

    def rule(x0):
        with np.errstate(divide="ignore", invalid="ignore"):
            r = 1.0 / np.sqrt(np.abs(to_float(x0, "f").astype(np.float64)))
            m, ex = np.frexp(r)
            r = np.ldexp(np.floor(m * 64.0) / 64.0, ex)
        return from_float(np.where(np.isinf(r), np.inf, r), "f")

    for nan in (False, True):
        bits = fp32_values(rng, 4 * 64 * 2)
        if not nan:
            bits[np.isnan(bits.view(np.float32))] = 0x3F800000
        x0 = bits.view(np.uint64).reshape(4, 64)
        assert np.isnan(bits.view(np.float32)).any() == nan
        assert np.array_equal(rsqrt.lanes(None, "f", x0, None, None, None)[0], rule(x0))


@pytest.mark.parametrize("unsigned", [False, True])
def test_fp64_conversions_match_the_rule(unsigned):
    """dftoi truncates toward zero (u: of |x|), saturates at the 64-bit range's ends and gives 0 for
    NaN; ditof rounds to nearest: the cast the element-wise paths make where every lane is inside
    the range must agree with the rule, and a lane outside it (or NaN) must take the rule."""
    from types import SimpleNamespace
    from emulator.semantics import ftoi, itof
    rng = np.random.default_rng(12 + unsigned)
    e = SimpleNamespace(unsigned=unsigned)
    dt = np.uint64 if unsigned else np.int64
    lo, hi = np.iinfo(dt).min, np.iinfo(dt).max
    edges = np.array([0.0, -0.0, 0.5, -0.5, 2.0**63, -2.0**63, 2.0**64, -2.0**64, 2.0**63 - 1024,
                      np.inf, -np.inf, 1e300, -1e-300, np.nan])
    for outside in (False, True):
        vals = rng.standard_normal(256) * 2.0 ** rng.integers(0, 62, 256)
        vals[:edges.size] = edges if outside else np.nan_to_num(edges, nan=1.0).clip(-2.0**62, 2.0**62)
        want = []
        for v in vals.tolist():
            t = abs(np.trunc(v)) if unsigned else np.trunc(v)
            want.append(0 if np.isnan(t) else hi if t >= float(hi) else lo if t <= float(lo) else int(t))
        want = np.array(want, dtype=dt)
        got = ftoi.lanes(e, "d", vals.view(np.uint64).reshape(4, 64), None, None, None)[0]
        assert np.array_equal(got.view(dt).reshape(-1), want)
    ints = rng.integers(lo, hi, 256, dtype=dt, endpoint=True)
    ints[:3] = [lo, hi, 0]
    got = itof.lanes(e, "d", ints.view(np.uint64).reshape(4, 64), None, None, None)[0]
    assert np.array_equal(got.view(np.float64).reshape(-1), ints.astype(np.float64))
