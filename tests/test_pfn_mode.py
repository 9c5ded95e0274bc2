"""Compatibility with the programs written for PFN's emulator (issue 19): the two-long-word L1BM
layouts, cross-group MV forms, the PFN-compatible mode and the GRF write-read rule.

Expected values come from PFN's published testcases and tutorial (see tests/fidelity/README.md),
not from this emulator."""
import numpy as np
import pytest

from emulator import AsmError, EmuFault, Emulator, assemble

LB16 = "d set $lb0n0c0b0 16 " + "".join(f"l{k:016X}" for k in range(16))


def run(src, machine="tiny", **kw):
    emu = Emulator(machine, **kw)
    emu.run(assemble(src, "t.vsm"))
    return emu


# -- item 10: the ll layout of l1bmm / l1bmm@ / l1bmr ------------------------------------------

def test_l1bmm_ll_gives_pe_p_the_pair_p_and_p_plus_4():
    emu = run(LB16 + "\nl1bmm $llb0 $llm0v\n")
    lm = emu.read_pe("m", 0, 4)[:4]                   # MAB 0's PEs, long words 0..3
    assert lm.tolist() == [[p, p + 4, 8 + p, 12 + p] for p in range(4)]


def test_l1bmm_at_ll_writes_back_in_the_same_layout():
    emu = run(LB16 + "\nl1bmm $llb0 $llm0v\nnop\nnop\nl1bmm@0 $llm0v $llb64\nnop\nnop\n")
    assert emu.state.l1bm[0, 64:80].tolist() == list(range(16))


def test_l1bmr_ll_reduces_in_the_same_layout():
    # every MAB's PE p holds (p, 100 + p) in its first two long words: the sums over 4 MABs (tiny)
    emu = Emulator("tiny")
    pe = np.arange(emu.m.n_pe) % 4
    emu.write_pe("r", 0, np.stack([pe, 100 + pe], 1))
    emu.run(assemble("l1bmrliadd $llr0 $llb0\n", "t.vsm"))
    mabs = emu.m.mab_per_l1b
    assert emu.state.l1bm[0, 0:8].tolist() == [mabs * p for p in range(4)] + [mabs * (100 + p) for p in range(4)]


def test_l1bmd_ll_round_trip():
    emu = Emulator("tiny")
    n = 4 * emu.m.pe_per_l1b
    emu.state.l1bm[:, :2 * n] = np.arange(2 * n, dtype=np.uint64)
    emu.run(assemble("l1bmd $llb0 $llr0v\nnop\nl1bmd $llr0v $llb1024\nnop\nnop\n", "t.vsm"))
    assert emu.state.l1bm[0, 1024:1024 + 2 * n].tolist() == list(range(2 * n))
    P = emu.m.pe_per_l1b
    assert emu.read_pe("r", 0, 2)[1].tolist() == [1, P + 1]       # PE 1, cycle 0: parts 0 and 1


# -- item 11: cross-group mvp, mvp with a bare $lc, mvd between PDM and DRAM --------------------

@pytest.fixture(scope="module")
def board():
    return Emulator("mncore2")


def _fill(emu, space, g, addr, value, n=64):
    emu.write_dram(g, addr, np.full(n, value, np.uint64), space=space)


def test_mvp_dram_of_one_group_to_pdm_of_another(board):
    for g in range(4):
        _fill(board, "d", g, 0, 10 + g)
        _fill(board, "p", g, 64, 0)
    board.run(assemble("mvp/n64i1 $d0@1 $p64@0\nnop; wait i1\n", "t.vsm"))
    assert board.read_dram(0, 64, 64, space="p").tolist() == [11] * 64
    assert board.read_dram(1, 64, 64, space="p").tolist() == [0] * 64     # not the source group's PDM


def test_mvp_l2bm_of_group_1_to_dram_of_group_0(board):
    board.state.l2bm[1 * 2 + 0, 0:64] = 77
    _fill(board, "d", 0, 1024, 0)
    _fill(board, "d", 1, 1024, 0)
    board.run(assemble("mvp/n64i2 $lc0@1.0 $d1024@0\nnop; wait i2\n", "t.vsm"))
    assert board.read_dram(0, 1024, 64).tolist() == [77] * 64
    assert board.read_dram(1, 1024, 64).tolist() == [0] * 64


def test_mvp_pdm_to_pdm_across_and_within_groups(board):
    _fill(board, "p", 2, 0, 5)
    board.run(assemble("mvp/n64i1 $p0@2 $p128@3\nnop; wait i1\nmvp/n64i2 $p128@3 $p192@3\nnop; wait i2\n",
                       "t.vsm"))
    assert board.read_dram(3, 192, 64, space="p").tolist() == [5] * 64


def test_mvp_with_a_bare_lc_names_l2b_0_of_every_group(board):
    for g in range(4):
        board.state.l2bm[2 * g, 256:320] = 20 + g
        board.state.l2bm[2 * g + 1, 256:320] = 99
    board.run(assemble("mvp/n64i1 $lc256 $d4096\nnop; wait i1\n", "t.vsm"))
    assert [int(board.read_dram(g, 4096, 1)[0]) for g in range(4)] == [20, 21, 22, 23]


def test_mvd_spreads_one_pdm_over_the_groups_drams_and_gathers_back(board):
    x = np.arange(256, dtype=np.uint64) + 1000
    board.write_dram(0, 0, x, space="p")
    board.run(assemble("mvd/n256i1 $p0@0 $d8192\nnop; wait i1\nmvd/n256i2 $d8192 $p512@1\nnop; wait i2\n",
                       "t.vsm"))
    assert [board.read_dram(g, 8192, 64).tolist() for g in range(4)] == [x[64 * g:64 * g + 64].tolist()
                                                                       for g in range(4)]
    assert board.read_dram(1, 512, 256, space="p").tolist() == x.tolist()


@pytest.mark.parametrize("src, why", [
    ("mvp/n64 $d0@1 $p64", "name the group on both operands"),
    ("mvp/n64 $p0 $p64", "PDM -> PDM mvp names both groups"),
    ("mvp/n64 $d0 $d64", "mvp moves between"),
    ("mvp/n64 $lc0@1 $d0@1", "mvp reaches one L2BM"),
    ("mvd/n64 $p0 $d0", "names the PDM's group only"),
    ("mvd/n64 $p0@0 $d0@1", "names the PDM's group only"),
])
def test_mv_forms_without_a_meaning_are_rejected_by_name(src, why):
    with pytest.raises(AsmError, match=why):
        assemble(src + "\n", "t.vsm")


# -- the GRF write-read rule: a write is complete 6 cycles after its cycle -----------------------

def test_grf_write_in_cycle_0_is_readable_in_cycle_3_of_the_next_step():
    emu = run("imm 0x4 $ls8/1000\niadd $aluf $ls2v $ls10v\n")      # reads word 8 in cycle 3 only
    assert emu.read_words("s", 8, 1)[0].tolist() == [4]


@pytest.mark.parametrize("src", [
    "imm 0x4 $ls8/1000\niadd $aluf $ls8 $ls10v\n",          # cycle 0 of the next step: 4 cycles later
    "imm 0x4 $ls8\niadd $aluf $ls2v $ls10v\n",              # written in cycle 3, read in cycle 3
    "linc $lr0v $lr8v\nlinc $lr8v $lr16v\n",                 # the usual same-cycle case
])
def test_grf_reads_before_the_write_completes_still_fault(src):
    with pytest.raises(EmuFault, match="readable 6 cycles after"):
        run(src)


# -- PFN-compatible mode ------------------------------------------------------------------------

RACY = """mvp/n64i1 $d0 $lc0@.0
l2bmb $lc0 $lb0
linc $lr0 $lr2
linc $lr2 $lm0
lpassa $lm0 $ln2
"""


def test_strict_mode_faults_where_pfn_mode_counts_and_runs_on():
    with pytest.raises(EmuFault, match="race"):
        run(RACY)
    emu = Emulator("tiny", pfn=True)
    emu.write_dram(0, 0, np.full(64, 9, np.uint64))
    emu.run(assemble(RACY, "t.vsm"))
    assert emu.state.l1bm[0, 0] == 9                      # the transfer completed at once
    assert emu.read_pe("n", 2, 1)[0, 0] == 2               # the LM 2-step rule was not enforced
    assert emu.breaches == 3                               # the race, the GRF and the LM hazards
    assert emu.pfn_report().startswith("pfn mode: strict mode would have faulted 3 time(s); the first: "
                                       "t.vsm:2: fault: race")


def test_pfn_mode_reports_a_clean_program_as_clean():
    emu = Emulator("tiny", pfn=True)
    emu.run(assemble("linc $lr0 $lr2\nnop\nlinc $lr2 $lr4\n", "t.vsm"))
    assert emu.breaches == 0 and "would have run this program too" in emu.pfn_report()


# -- the judge ---------------------------------------------------------------------------------

from emulator.judge import JudgeError, decode, judge  # noqa: E402

CASE = """# ======= YOUR VSM WILL BE INSERTED HERE =======
# ======= Output =======
d getd $lm0n0c0b0m0p0 1 # expect=[1.0, 2.0] / Float @[0],[1] atol=0.01 rtol=0
"""


@pytest.mark.parametrize("payload, ok", [("3F8000004000A3D7", True),      # 2.01: inside atol
                                         ("3F80000040028F5C", False)])    # 2.04: outside
def test_judge_tolerance_is_the_first_expect_lines(payload, ok):
    answer = f"d set $lm0n0c0b0m0p0 1 {payload}\n"      # debug statements are dropped from answers...
    assert not judge(CASE, answer, "tiny").accepted          # ...so this leaves zeros
    case = CASE.replace("# ======= YOUR", f"d set $lm0n0c0b0m0p0 1 {payload}\n# ======= YOUR")
    v = judge(case, "nop\n", "tiny")
    assert v.accepted == ok, v.message


def test_judge_reads_dtypes_as_the_judge_does():
    assert decode(0x48656C6C6F2C2077, "String") == list("Hello, w")
    assert decode(0x0000000180000000, "Int") == [1, -2**31]
    assert decode(0x7FF8000000000001, "Double") == [float("inf")]      # an all-ones exponent: infinity
    assert decode(0x0000000100000000, "Float") == [0.0, 0.0]           # exponent 0: zero
    assert decode(0x3E00428000000000, "Half") == [1.0, 5.0, 0.0, 0.0]


def test_judge_names_a_file_that_is_not_a_testcase():
    with pytest.raises(JudgeError, match="not a contest testcase"):
        judge("d getd $d0n0 1\n", "nop\n", "tiny", "t.vsm")


def test_judge_runs_raw_dram_input_lines_when_the_assembler_reads_them():
    case = ("r 0 000000000 001 3E8000003FE00000\n" + CASE.replace("[1.0, 2.0]", "[0.25, 1.75]")
            .replace("$lm0n0c0b0m0p0", "$d0n0"))
    try:
        assemble("r 0 000000000 001 3E8000003FE00000\n", "t.vsm")
    except AsmError:
        pytest.skip("this assembler does not read raw DRAM lines ('r ...') yet")
    assert judge(case, "nop\n", "mncore2").accepted
