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
