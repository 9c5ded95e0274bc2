"""Writes under a fixed cycle pattern (`dst/0100`) store only the cycles the pattern keeps.

The executor stores such a write cycle by cycle (and takes a broadcast's kept cycles straight from
its view).  The reference here is the same instruction unmasked, merged with numpy: the kept cycles
are its values, the others keep what the destination held.
"""
from __future__ import annotations

import numpy as np
import pytest

from emulator import Emulator, assemble

PATTERNS = ["1000", "0100", "0010", "0001", "1010", "0111", "1111", "0000"]


def _emulator():
    emu = Emulator("tiny")
    rng = np.random.default_rng(7)
    P = emu.m.n_pe
    for sp in ("m", "r", "s"):
        emu.write_pe(sp, 0, rng.integers(0, 2**63, (P, 64), dtype=np.uint64))
    emu.run(assemble("l1bmd $lr0v $lb0\nl1bmd $lr8v $lb32\nnop\nnop\n", "fill.vsm"))   # L1BM from the PEs
    return emu


def _run(emu, text, word, n=4):
    emu.run(assemble(text + "\nnop\nnop\n", "m.vsm"))
    return emu.read_pe("s", word, n)


# (the instruction with {m} for its mask, the destination's first word, how many long words it names)
CASES = {
    "broadcast l1bmp": ("l1bmp $lb3 $ls40v{m}", 40, 4),
    "broadcast l1bmp ll": ("l1bmp $llb4 $lls40v{m}", 40, 8),
    "alu": ("lpassa $lm16v $ls40v{m}", 40, 4),
    "alu flat rows": ("lpassa $lm16v $ls[40,44,48,52]{m}", 40, 8),
    "word": ("ipassa $m17v $s[41,45,48,53]{m}", 40, 8),
}


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("pattern", PATTERNS)
def test_kept_cycles_only(case, pattern):
    text, word, n = CASES[case]
    emu = _emulator()
    old = emu.read_pe("s", word, n)
    full = _run(emu, text.format(m=""), word, n)
    emu = _emulator()
    got = _run(emu, text.format(m="/" + pattern), word, n)
    kept = [c for c in range(4) if pattern[c] == "1"]
    want = old.copy()
    if case == "broadcast l1bmp ll":          # cycle c writes long words 2c, 2c + 1
        for c in kept:
            want[:, 2 * c:2 * c + 2] = full[:, 2 * c:2 * c + 2]
    elif case == "alu flat rows":             # cycle c writes long word 2c
        for c in kept:
            want[:, 2 * c] = full[:, 2 * c]
    elif case == "word":                      # cycle c writes word 41, 45, 48, 53: one half of a long word
        words = [41, 45, 48, 53]
        w_old, w_full = old.view(np.uint32).copy(), full.view(np.uint32)
        for c in kept:                        # (a long word's upper half is its even word: the high 32 bits)
            at = 2 * ((words[c] - 40) // 2) + (words[c] % 2 == 0)
            w_old[:, at] = w_full[:, at]
        want = w_old.view(np.uint64)
    else:
        want[:, kept] = full[:, kept]
    np.testing.assert_array_equal(got, want)


def test_one_row_every_cycle_lands_in_cycle_order():
    """Flat rows naming one long word twice: the later kept cycle's value is the one that stays."""
    emu = _emulator()
    src = emu.read_pe("m", 16, 4)
    got = _run(emu, "lpassa $lm16v $ls[40,40,44,46]/1100", 40, 1)
    np.testing.assert_array_equal(got[:, 0], src[:, 1])


@pytest.mark.parametrize("compiled", [True, False])
@pytest.mark.parametrize("text", ["lpassa $lm16v $ls40v/$imr2", "lpassa $llm16v $lls40v/$imr2",
                                  "l1bmp $lb3 $ls40v/$imr2", "lpassa $lm16v $ls[40,44,48,52]/$imr2"])
def test_flag_entry_merges_each_quarter(text, compiled, monkeypatch):
    """A write under a flag entry keeps, per cycle and PE, the 16-bit quarters whose nibble bits
    are set (docs/isa.md, "Masks"), with the compiled merge (native.merge) and without it."""
    from emulator import native
    from emulator.executor import LUT_L, LUT_LL0, LUT_LL1
    if not compiled:
        monkeypatch.setattr(native, "merge", lambda *a: False)
    flags = "imax $lr0v $lr8v $omr2\nnop\n"           # random flags: lanes of either sign
    emu = _emulator()
    old = emu.read_pe("s", 40, 8)
    full = _run(emu, flags + text.replace("/$imr2", ""), 40, 8)
    emu = _emulator()
    got = _run(emu, flags + text, 40, 8)
    nib = emu.state.omr[2]                            # (cycle, PE)
    assert 0 < np.count_nonzero(nib) < nib.size       # a mask that keeps some and not others
    want = old.copy()
    for c in range(4):
        if "$lls" in text:                            # ll: long words 2c and 2c + 1
            for j, lut in ((2 * c, LUT_LL0), (2 * c + 1, LUT_LL1)):
                want[:, j] ^= (old[:, j] ^ full[:, j]) & lut[nib[c]]
        else:
            j = 2 * c if "[" in text else c
            want[:, j] ^= (old[:, j] ^ full[:, j]) & LUT_L[nib[c]]
    np.testing.assert_array_equal(got, want)
