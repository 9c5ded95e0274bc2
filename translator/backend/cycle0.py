"""Cycle 0 only: in a wave narrowed 4 or 8 times every work-item sits in cycle 0 of its PE
(layout.item_of_slot: slots past `l1bm_used` of each L1B hold none), so what an ALU or MAU op
computes in cycles 1..3 belongs to no work-item.  Such an op reads each general-register source
as its cycle-0 long word in every cycle (`$lr<a>` for `$lr<a>v`), and writes one long word
(`$lr<a>`) where every reader of the destination reads cycle 0, else all four (each cycle's is
cycle 0's result).  The emulator then computes one cycle instead of four and stores one row
instead of four (emulator/isa.py, cycle_uniform).  lu's 64 x 64 update, reduction's and scan's
kernels and the matrix-vector products' 512 and 4096 rows run in such waves.

Cycles 1..3 still matter in four cases, and ops reading or making those values keep their four
cycles (and so do the values they make, through registers and mask entries):

* packing.py's passes (pass 4q + c in cycle c): packing marks its ops `varies`;
* the live-lane chain: the slot numbers (written under fixed cycle masks, `imm 1 {d0}/0100`),
  the slot position each cycle's long word has in L1BM, and the mask `in_wave` made of it
  (codegen marks them `exact` and `varies`), so that every live-lane mask built on in_wave keeps
  the slots of cycles 1..3 out of stores, scatters and any-reductions;
* T-indirect words, the T register and moves between PEs (`msl`, `msr`): gathers and scatters
  spread a chunk's long words over the cycles;
* a vector operand written into a template (packing's table reads, resident copies).

Transfers keep their operands: a load fills four cycles (cycle 0's long word is the work-item's),
a store moves what the registers hold (cycles 1..3 go to slots no share moves), and a register a
transfer reads is written whole.  LM operands keep theirs too: the assembler allows LM0 / LM1 at
one region a step, and another op of the step may name the same words as a vector.
"""
from __future__ import annotations

import re

from .ops import Op, flat_ops

FIXED_CYCLES = re.compile(r"/[01]{4}\b")          # an op under a fixed cycle mask
VECTOR_LITERAL = re.compile(r"\$l?l?[a-z]+\d+v")    # a vector operand written into the template
PER_CYCLE_PLACES = re.compile(r"\$l?l?[mn]t\d|\$t\b|^ms[lr] ")   # T-indirect words, T, moves between PEs
SOURCE_FIELD = re.compile(r"\{s(\d+)\}")
CYCLE_FIELD = re.compile(r"\{s(\d+)c[123]\}")
READS, WRITES = 1, 2         # Op.cycle0: the sources read at cycle 0; the destination written there too
COMPUTING = ("alu", "mau")


def cycle0_only(lay) -> bool:
    """Whether a wave of this layout has work-items in cycle 0 only."""
    return lay.l1bm_used <= lay.pe_l1b


def varies(op: Op) -> bool:
    """Whether op's results differ from cycle to cycle where that matters, whatever it reads."""
    return op.varies or bool(VECTOR_LITERAL.search(op.text)) or bool(PER_CYCLE_PLACES.search(op.text))


def mark_cycle0(tree: list, lay) -> list:
    """Set `cycle0` on the ops of tree (the module docstring), in a wave whose work-items are all
    in cycle 0: READS on the ALU and MAU ops that read no per-cycle value, WRITES on those of them
    whose destinations no op reads beyond cycle 0.  The per-cycle values: a fixed point over every
    op of the tree (loops and branches included, regardless of order), the registers and mask
    entries written by an op that varies or reads a per-cycle value."""
    if not cycle0_only(lay):
        return tree
    ops = list(flat_ops(tree))
    varying = set()
    changed = True
    while changed:
        changed = False
        for op in ops:
            if varies(op) or any(r in varying for r in op.srcs + op.msrc):
                new = [r for r in op.dsts + op.mdst if r not in varying]
                if new:
                    varying.update(new)
                    changed = True
    for op in ops:
        if op.unit in COMPUTING and not (varies(op) or op.exact or FIXED_CYCLES.search(op.text)):
            op.cycle0 = READS if not any(r in varying for r in sources(op)) else 0
    # a destination all of whose readers read cycle 0 is written at cycle 0 too (one long word)
    whole = {r for op in ops for r in four_cycle_reads(op)} | varying
    for op in ops:
        if op.cycle0 and not op.partial and not op.msrc and "{d0}" in op.text and \
                not any(r in whole for r in op.dsts):
            op.cycle0 = WRITES
    return tree


def sources(op: Op) -> list:
    """The registers op's template reads through its {s<i>} fields."""
    return [op.srcs[int(i)] for i in SOURCE_FIELD.findall(op.text)]


def four_cycle_reads(op: Op) -> list:
    """The registers op reads beyond their cycle-0 long word: a transfer's, a four-cycle ALU or MAU
    op's, and those named by a cycle field ({s<i>c<c>}, c > 0)."""
    if op.unit not in COMPUTING:
        return list(op.srcs)
    got = [op.srcs[int(i)] for i in CYCLE_FIELD.findall(op.text)]
    return got + ([] if op.cycle0 else sources(op))
