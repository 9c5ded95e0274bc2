"""The notation and forms PFN's public MN-Core 2 programs use (issue 19), each checked against values
worked out independently with numpy (or by hand from the number formats), not by the emulator's code."""
from __future__ import annotations

import numpy as np
import pytest

from emulator import AsmError, EmuFault, Emulator, assemble

U64 = np.uint64


def run(src: str, machine: str = "tiny") -> Emulator:
    emu = Emulator(machine)
    emu.run(assemble(src, "forms.vsm"))
    return emu


def words(emu, space, word, n=1):
    """(PE, n) long words."""
    return emu.read_pe(space, word, n)


def f32x2(hi, lo) -> int:
    return int(np.float32(hi).view(np.uint32)) << 32 | int(np.float32(lo).view(np.uint32))


# -- typed immediates ------------------------------------------------------------------------------

@pytest.mark.parametrize("imm, expect", [
    ('imm i"2" $lr0', 0x00000002_00000002),
    ('imm i"-2" $lr0', 0xFFFFFFFE_FFFFFFFE),
    ('imm ui"0xfffffff0" $lr0', 0xFFFFFFF0_FFFFFFF0),
    ('imm f"8.0" $lr0', f32x2(8.0, 8.0)),
    ('imm f"inf" $lr0', f32x2(np.inf, np.inf)),
    ('imm f"-0.5" $lr0', f32x2(-0.5, -0.5)),
    ('imm h"1.5" $lr0', 0x3F00_3F00_3F00_3F00),       # MN-Core half: bias 31, 9 mantissa bits
    ('imm s"-3" $lr0', 0xFFFD_FFFD_FFFD_FFFD),
    ('imm us"0x1234" $lr0', 0x1234_1234_1234_1234),
    ('limm d"2.5" $lr0', int(np.float64(2.5).view(np.uint64))),
    ('limm l"-1" $lr0', 0xFFFFFFFF_FFFFFFFF),
    ('limm f"1.0" $lr0', f32x2(1.0, 1.0)),
])
def test_typed_immediates(imm, expect):
    emu = run(imm)
    assert (words(emu, "r", 0) == U64(expect)).all()


@pytest.mark.parametrize("bad, why", [('imm d"1.0" $lr0', "limm"), ('imm i"3000000000" $lr0', "does not fit"),
                                      ('imm f"1e39" $lr0', "does not fit"), ('imm uf"1" $lr0', "integer types"),
                                      ('imm i"x" $lr0', "bad immediate")])
def test_typed_immediates_errors(bad, why):
    with pytest.raises(AsmError, match=why):
        assemble("nop\n" + bad, "e.vsm")


# -- debug locations, raw DRAM lines, hexadecimal tags ---------------------------------------------------

def test_debug_location_may_skip_levels():
    emu = run("lpassa $peid $lm0\nd get $lm0m1p2 1\nd get $lm0n0c0b0p3 1\nd set $lr0m0p1 1 0000000000000007")
    lines = emu.dump
    assert sum("#d get $lm0m1p2" in ln for ln in lines) == 4            # tiny: 1 group x 2 L2B x 2 L1B
    assert any(ln.startswith("DEBUG-LM0(n0c1b1m1p2,0)") and "v:0x6)" in ln for ln in lines)
    assert sum("#d get $lm0n0c0b0p3" in ln for ln in lines) == 4        # every MAB of L1B 0
    r = words(emu, "r", 0)[:, 0]
    assert (r[np.arange(r.size) % 16 == 1] == 7).all() and r[np.arange(r.size) % 16 != 1].sum() == 0


def test_raw_dram_line_is_hexadecimal():
    emu = run("r 0 1a 2 3FF0000000000000C000000000000000")
    assert emu.read_dram(0, 26, 2, np.float64).tolist() == [1.0, -2.0]
    with pytest.raises(AsmError, match="16 hex digits"):
        assemble("r 0 0 2 3FF0000000000000", "e.vsm")


def test_hexadecimal_tags():
    src = "mvp/n64i1e $d0 $lc0@.0\nnop; wait i1e\nmvp/n64i10 $d64 $lc64@.0\nnop; wait i10"
    run(src)
    with pytest.raises(EmuFault, match="wait i1f: no transfer with tag i1f"):
        run("mvp/n64i1e $d0 $lc0@.0\nnop; wait i1f")


# -- zero-flush masks and opcode suffixes ------------------------------------------------------------------

def test_zero_flush_mask_on_the_opcode():
    # flags of 'lpassa $lm0 $omr1': lane all zero; LM0 holds 7 on PE 2 of each MAB only
    emu = run("d set $lm0p2 1 0000000000000007\nlpassa $lm0 $omr1\nnop\n"
              "lpassa/$imr1 $peid $lr0\nlpassa/1010 $peid $lr8v\nnop")
    peid = np.arange(64) % 16
    sub = peid % 4
    got = words(emu, "r", 0)[:, 0]
    assert (got == np.where(sub == 2, 0, peid)).all()                    # PE 2's flag is 0: flushed
    cyc = words(emu, "r", 8, 4)
    assert (cyc == np.array([1, 0, 1, 0])[None, :] * peid[:, None]).all()


def test_hbfn_mantissa_length():
    # one half 1 + 2^-7 (0x3e04) in a block of zeros: 9 bits keep it, 6 bits round it to 1.0
    emu = run("d set $lm0n0c0b0m0p0 1 3E04000000000000\nhbfn/9 $lm0 $lr0\nhbfn/6 $lm0 $lr2\nnop")
    assert words(emu, "r", 0)[0, 0] == 0x3E04_0000_0000_0000
    assert words(emu, "r", 2)[0, 0] == 0x3E00_0000_0000_0000
    with pytest.raises(AsmError, match="6..9"):
        assemble("hbfn/5 $lm0 $lr0", "e.vsm")


# -- ALU: lnot, rotates, leaky relus -----------------------------------------------------------------------

def test_lnot_and_rotates():
    rng = np.random.default_rng(1)
    x = rng.integers(0, 2**63, 64, dtype=np.uint64) | U64(1)
    x[::5] = 0
    y = rng.integers(0, 200, 64, dtype=np.uint64)
    emu = Emulator("tiny")
    emu.write_pe("r", 0, x[:, None])
    emu.write_pe("s", 0, y[:, None])
    emu.run(assemble("llnot $lr0 $lr2\nlbsl $lr0 $ls0 $lr4\nlbsr $lr0 $ls0 $lr6\nibsl $lr0 $ls0 $lr8\nnop", "r.vsm"))
    assert (words(emu, "r", 2)[:, 0] == (x == 0)).all()
    s = y % 64
    rotl = np.array([(int(a) << int(k) | int(a) >> (64 - int(k))) & (2**64 - 1) for a, k in zip(x, s)], dtype=U64)
    rotr = np.array([(int(a) >> int(k) | int(a) << (64 - int(k))) & (2**64 - 1) for a, k in zip(x, s)], dtype=U64)
    assert (words(emu, "r", 4)[:, 0] == rotl).all() and (words(emu, "r", 6)[:, 0] == rotr).all()
    # ibsl: each 32-bit lane rotated by its own lane of y
    xl, yl = x.view(np.uint32).reshape(64, 2), (y.view(np.uint32).reshape(64, 2) % 32)
    r32 = ((xl.astype(np.uint64) << yl) | (xl.astype(np.uint64) >> ((32 - yl) % 32))) & 0xFFFFFFFF
    r32 = np.where(yl == 0, xl, r32).astype(np.uint32)
    assert (words(emu, "r", 8)[:, 0] == r32.reshape(-1).view(np.uint64)).all()


def test_leaky_relus():
    x = np.array([1.5, -2.0], np.float32)
    y = np.array([3.0, 5.0], np.float32)
    emu = Emulator("tiny")
    emu.write_pe("r", 0, int(f32x2(*x)))
    emu.write_pe("s", 0, int(f32x2(*y)))
    emu.write_pe("r", 2, int(np.float64(-1.0).view(np.uint64)))
    emu.write_pe("s", 2, int(np.float64(40.0).view(np.uint64)))
    emu.write_pe("r", 4, 0x3E00_BE00_3E00_BE00)     # halves 1, -1, 1, -1
    emu.write_pe("s", 4, 0x4000_4000_4100_4100)     # halves 2, 2, 3, 3
    emu.run(assemble("flrelud $lr0 $ls0 $lr8\ndlreluo $lr2 $ls2 $lr10\nhilrelud $lr4 $ls4 $lr12\nnop", "l.vsm"))
    assert words(emu, "r", 8)[0, 0] == f32x2(3.0, 2.5)                # negative x: y / 2
    assert words(emu, "r", 10)[0, 0] == np.float64(5.0).view(np.uint64)   # y / 8
    assert words(emu, "r", 12)[0, 0] == 0x4000_4200_4100_4300        # 2, 4, 3, 6: y * 2 where x < 0


# -- transfers -----------------------------------------------------------------------------------------------

def test_l1bmd_plus_and_minus_one():
    emu = run("lpassa $peid $lr0\nnop\nl1bmd $lr0v $lb0\nnop\nnop\nl1bmd+1 $lb0 $lr8v\nl1bmd-1 $lb0 $lr16v\nnop")
    peid = np.arange(16)                        # tiny: 4 MABs of 4 PEs per L1B
    assert (words(emu, "r", 8)[:16, 0] == (peid - 4) % 16).all()        # MAB m reads MAB m-1's share
    assert (words(emu, "r", 16)[:16, 0] == (peid + 4) % 16).all()
    with pytest.raises(AsmError, match="distribute only"):
        assemble("l1bmd+1 $lr0v $lb0", "e.vsm")


def test_l2bm_sets_pairs_and_bitwise_reduces():
    emu = Emulator("mncore2")
    vals = np.random.default_rng(2).integers(0, 2**16, (64, 64), dtype=np.uint64)     # (L1B, 64 long words)
    emu.state.l1bm[:, 0:64] = vals
    emu.run(assemble("l2bmr2liadd $lb0 $lc0\nl2bmrsbor $lb0 $lc512\nl2bmi@2,5 $lb0 $lb1024\n"
                     "l2bmb@1,3 $lc2048 $lb2048", "t.vsm"))
    per = vals.reshape(8, 8, 64)                                          # L2B, L1B, j
    pairs = per.reshape(8, 4, 2, 64).sum(axis=2)
    assert (emu.state.l2bm[:, 0:256] == pairs.reshape(8, 256)).all()
    h = per.view(np.uint16).reshape(8, 8, 64, 4)
    assert (emu.state.l2bm[:, 512:576].view(np.uint16).reshape(8, 64, 4) == np.bitwise_or.reduce(h, axis=1)).all()
    lb = emu.state.l1bm.reshape(8, 8, -1)
    assert (lb[:, [2, 5], 1024:1088] == per[:, [2], :]).all() and not lb[:, [0, 1, 3, 4, 6, 7], 1024:1088].any()
    emu2 = Emulator("tiny")
    emu2.state.l2bm[:, 0:64] = 5
    emu2.run(assemble("l2bmb@1 $lc0 $lb0", "b.vsm"))
    assert (emu2.state.l1bm[:, 0] == [0, 5, 0, 5]).all()                # L1B 1 of each L2B only
    with pytest.raises(EmuFault, match="L1B 3 does not exist"):
        emu2.run(assemble("l2bmb@3 $lc0 $lb0", "b.vsm"))


def test_l1bmrsbor():
    emu = Emulator("tiny")
    x = np.random.default_rng(3).integers(0, 2**63, 64, dtype=np.uint64)
    emu.write_pe("r", 0, x[:, None])
    emu.run(assemble("l1bmrsbor $lr0 $lb0\nl1bmrlband $lr0 $lb16\nnop\nnop", "r.vsm"))
    per = x.reshape(4, 4, 4)                                              # L1B, MAB, PE
    want_or = np.bitwise_or.reduce(per.view(np.uint16).reshape(4, 4, 4, 4), axis=1).reshape(4, 4, 4)
    assert (emu.state.l1bm[:, 0:4].view(np.uint16).reshape(4, 4, 4) == want_or).all()
    assert (emu.state.l1bm[:, 16:20] == np.bitwise_and.reduce(per, axis=1)).all()


def test_mvb4_and_mvr4():
    emu = Emulator("mncore2")
    data = np.arange(1, 257, dtype=np.uint64)
    emu.write_dram(0, 0, data)
    emu.run(assemble("mvb4/n256i1 $d0@0 $lc0\nnop; wait i1\nmvr4liadd/n256i2 $lc0 $d1024@2\nnop; wait i2", "m.vsm"))
    lc = emu.state.l2bm.reshape(4, 2, -1)[:, :, 0:64]                    # group, L2B, 64
    assert (lc == data.reshape(4, 1, 64)).all()                          # group q gets quarter q, both L2Bs
    assert (emu.read_dram(2, 1024, 256) == 2 * data).all()               # each group's 2 L2Bs summed, in order


# -- operands ----------------------------------------------------------------------------------------------

def test_base_address_register_and_madpe():
    emu = run("ipassa $subpeid $lnb\nnop\nlpassa $peid $ln8\nnop\nlpassa $peid $lm0j1\nnop")
    sub, peid = np.arange(64) % 4, np.arange(64) % 16
    ln = words(emu, "n", 8, 2)                      # base = subpeid words, long-word access truncates it
    at = 8 + (sub & ~1)
    for pe in range(64):
        assert ln[pe, (at[pe] - 8) // 2] == peid[pe]
    lm = words(emu, "m", 0, 2)                      # j1: PEs 0, 1 of each MAB one long word higher
    assert (lm[np.arange(64), np.where(sub <= 1, 1, 0)] == peid).all()


def test_alufe_and_hvadd_extended_addend():
    emu = run("d set $lr0n0c0b0m0p0 1 3E00400041004200\nd set $ls0n0c0b0m0p0 1 3E003E003E003E00\n"
              "hvadd $lr0 $ls0e $llr4\nlpassa $lr0 $nowrite\nhvfma $lr0 $ls0 $alufe $llr8\nnop")
    halves = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    sums = (halves + 1).view(np.uint32).astype(np.uint64)
    assert words(emu, "r", 4, 2)[0].tolist() == [int(sums[0] << 32 | sums[1]), int(sums[2] << 32 | sums[3])]
    fmas = (halves * 1 + halves).view(np.uint32).astype(np.uint64)
    assert words(emu, "r", 8, 2)[0].tolist() == [int(fmas[0] << 32 | fmas[1]), int(fmas[2] << 32 | fmas[3])]


def test_two_turnaround_expressions_in_one_step():
    emu = Emulator("tiny")
    x = np.arange(64, dtype=np.float64) + 0.5
    emu.write_pe("r", 0, x.view(np.uint64)[:, None])
    emu.run(assemble("l1bmrdfadd $lr0v $lbi; l1bmm $lbi $lr8v\nnop", "t.vsm"))
    sums = x.reshape(4, 4, 4).sum(axis=1)                                 # L1B, PE: over the 4 MABs
    got = words(emu, "r", 8)[:, 0].view(np.float64).reshape(4, 4, 4)
    assert (got == sums[:, None, :]).all()
    with pytest.raises(AsmError, match="two l1bm-turnaround"):
        assemble("l1bmm $lbi $lr0v; l1bmp $lbi $lr8v", "e.vsm")


def test_getf_prints_an_fp32_subnormal_as_zero():
    emu = run("d set $lm0n0c0b0m0p0 1 0000004280000000\nd getf $lm0n0c0b0m0p0 1")
    assert emu.dump == ["DEBUG-LM0(n0c0b0m0p0,0):(0, -0) (0x00000042, 0x80000000) #d getf $lm0n0c0b0m0p0 1"]


def test_a_repeated_operand_decodes_to_its_own_copy():
    """parse_operand keeps decoded tokens: each use still gets its own Operand (the executor
    hangs a per-use cache on it) and the shared address array cannot be changed in place."""
    from emulator.asm import _Ctx, parse_operand
    a, b = parse_operand("$lr8v", _Ctx("t")), parse_operand("$lr8v", _Ctx("t"))
    assert a is not b and list(a.addrs) == [8, 10, 12, 14]
    a.cache = {0: "mine"}
    assert b.cache is None
    with pytest.raises(ValueError):
        a.addrs[0] = 0
