"""The backend's machine-level program before allocation: virtual registers,
one-step operations, transfers and the control tree.

An ``Op`` is one PE step's worth of work for one unit (an ALU, MAU, L1BM or
L2BM expression) written as an assembly template whose ``{d0}``, ``{s0}``,
``{k0}`` ... fields are filled with allocated operands.  A ``VReg`` is a
4-long-word value on every PE (one `$lr<a>v`-style operand); a ``MaskReg`` is
a mask entry.  Control nodes (``WhileAny``, ``SeqLoop``, ``Call``) become the
sequencer program; their sequencer expressions are seqexpr.py trees (a string given to a
constructor is parsed there).

An Op is checked against the ISA table when it is made (``template_error``: the mnemonic, the
operand kinds with placeholder locations, the unit matching the row's unit group), so a bad op is
refused where codegen makes it, as ``BadOp`` with its C line; ``render`` fills a template with the
allocated locations.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from itertools import count

from .seqexpr import Num, Reg, SeqExpr, any_of, negation, register, seq
from .target import WORDS_PER_REGISTER, instruction_error

_ids = count()


class BadOp(Exception):
    """An op that is no instruction of the ISA table: a backend bug, reported at the op's C line."""

    def __init__(self, message: str, line: int = 0):
        super().__init__(message)
        self.line = line


class VReg:
    __slots__ = ("id", "hint")

    def __init__(self, hint=""):
        self.id = next(_ids)
        self.hint = hint

    def __repr__(self):
        return f"v{self.id}{':' + self.hint if self.hint else ''}"


class MaskReg:
    __slots__ = ("id",)

    def __init__(self):
        self.id = next(_ids)

    def __repr__(self):
        return f"k{self.id}"


@dataclass(eq=False)
class Op:
    text: str                      # template: {d0} {s0} {s1} ... {k0} (mask read) {K0} (mask written)
    unit: str                      # alu | mau | l1bm | l2bm | wait | nop
    dsts: tuple = ()               # VRegs written
    srcs: tuple = ()               # VRegs read
    mdst: tuple = ()               # MaskRegs written
    msrc: tuple = ()               # MaskRegs read
    mem: tuple = ()                # fixed locations touched: (("w"|"r"), space, lo, hi) for hazards
    line: int = 0                  # C source line
    partial: bool = False          # a masked write: the destination's other lanes stay live
    carry: bool = False            # a loop-carried register's update (cleanup.coalesce_carried)

    def __post_init__(self):
        why = template_error(self.text, self.unit, len(self.dsts), len(self.srcs), len(self.msrc), len(self.mdst))
        if why:
            raise BadOp(f"'{self.text}' ({self.unit}): {why}", self.line)


def _fields(dsts, srcs, msrc, mdst, at) -> dict:
    """An op template's fields from its operands' locations `at[r]`: (space, slot) for values, an
    entry number for masks."""
    f = {}
    for i, r in enumerate(dsts):
        sp, k = at[r]
        a = WORDS_PER_REGISTER * k
        f[f"d{i}"] = f"$l{sp}{a}v"
        f[f"d{i}c0"] = f"$l{sp}{a}"            # cycle 0's long word, written by every cycle (packing.py)
        f[f"d{i}w0"] = f"${sp}{a}v2"           # each cycle's upper (lane 0) and lower (lane 1) word
        f[f"d{i}w1"] = f"${sp}{a + 1}v2"
    for i, r in enumerate(srcs):
        sp, k = at[r]
        a = WORDS_PER_REGISTER * k
        f[f"s{i}"] = f"$l{sp}{a}v"
        f[f"u{i}"] = f"$l{sp}{a}"              # cycle 0's long word in every cycle
        for c in range(4):                     # cycle c's long word in every cycle (packing.py)
            f[f"s{i}c{c}"] = f"$l{sp}{a + 2 * c}"
    for i, r in enumerate(msrc):
        f[f"k{i}"] = f"$imr{at[r]}"
    for i, r in enumerate(mdst):
        f[f"K{i}"] = f"$omr{at[r]}"
    return f


def render(op: Op, alloc) -> str:
    """The op's assembly expression, its fields filled with the allocated locations."""
    return op.text.format(**_fields(op.dsts, op.srcs, op.msrc, op.mdst, alloc))


_PLACES = {"d": ("r", 0), "s": ("s", 1), "k": 1, "K": 1}     # template_error's stand-in locations


@functools.lru_cache(maxsize=1 << 14)
def template_error(text: str, unit: str, n_dsts: int, n_srcs: int, n_msrc: int, n_mdst: int) -> str | None:
    """Why an op with this template, unit and operand counts is no instruction of the ISA table
    (target.instruction_error on the template filled with placeholder locations), or None.  Kept
    per template: a kernel repeats a few thousand templates over many ops."""
    try:
        filled = text.format(**_fields("d" * n_dsts, "s" * n_srcs, "k" * n_msrc, "K" * n_mdst, _PLACES))
    except (KeyError, IndexError, ValueError) as e:
        return f"template field {e} names no operand of the op"
    return instruction_error(filled, unit)


@dataclass(eq=False)
class MV:
    """An MV statement in a block of its own, called with a DRAM offset expression."""
    text: str                      # e.g. 'mvd/n4096i3 $d0 $lc0'
    d_offset: SeqExpr              # added to the $d address
    line: int = 0
    chain: tuple = ()              # a staged load's (tag, lc, lb): its wait, l2bmd and l1bmd follow it
    lc_offset: SeqExpr | None = None   # added to the $lc address (rowplan.py), when not None
    share: bool = False            # a wave share (each L2B's part for its own lanes, either way):
                                   # an L2B with no work-item may skip its part (colplan.narrow_shares)

    def __post_init__(self):
        self.d_offset = seq(self.d_offset)
        if self.lc_offset is not None:
            self.lc_offset = seq(self.lc_offset)


@dataclass(eq=False)
class WhileAny:
    mask: MaskReg                  # loop while any lane has a flag in it
    body: list = field(default_factory=list)
    line: int = 0


@dataclass(eq=False)
class SeqLoop:
    """reg counts from start while below stop (by step), running body each time."""
    reg: Reg
    start: SeqExpr
    stop: SeqExpr
    body: list = field(default_factory=list)
    step: SeqExpr = Num(1)

    def __post_init__(self):
        self.reg, self.start, self.stop, self.step = register(self.reg), seq(self.start), seq(self.stop), seq(self.step)


@dataclass(eq=False)
class SeqIf:
    """A branch the sequencer takes on an expression of its registers (uniform by construction).

    A bounds check's fallback records the conditions it stands for in ``unless``: its cond is
    that one of them fails, so when all hold only ``orelse`` runs (versioning.py relies on it).
    A *staging* branch moves data into areas only the reads after it use (a row plan's panel,
    an x[k] table's block): reads of other areas may go first (cleanup.hoist_staging)."""
    cond: SeqExpr
    then: list = field(default_factory=list)
    orelse: list = field(default_factory=list)
    unless: tuple = ()             # sequencer conditions: when all hold, the branch is its orelse
    staging: bool = False

    def __post_init__(self):
        self.cond, self.unless = seq(self.cond), tuple(map(seq, self.unless))

    @classmethod
    def fallback(cls, holds, then, orelse=()) -> "SeqIf":
        """`then` (a bounds check, a plan's gather) unless every condition of `holds` holds, then
        `orelse`: the branch versioning.py drops from a loop's copy where they hold throughout."""
        holds = tuple(map(seq, holds))
        return cls(any_of(map(negation, holds)), list(then), list(orelse), unless=holds)


@dataclass(eq=False)
class SeqSet:
    """Set a sequencer register (state the sequencer keeps between waves and iterations)."""
    reg: Reg
    expr: SeqExpr

    def __post_init__(self):
        self.reg, self.expr = register(self.reg), seq(self.expr)


@dataclass(eq=False)
class SeqFault:
    """Stop the run with a fault naming the C line (a runtime check, under a SeqIf)."""
    message: str


@dataclass(eq=False)
class IfAnyLane:
    """Run a sub-list only when some lane has a flag in the mask entry (an any-reduction)."""
    mask: MaskReg
    then: list = field(default_factory=list)


@dataclass(eq=False)
class Call:
    """Run a sub-list with address offsets (the gather chunk body, for instance)."""
    body: list
    offsets: dict                  # space -> SeqExpr
    name: str = ""

    def __post_init__(self):
        self.offsets = {k: seq(v) for k, v in self.offsets.items()}


def flat_ops(items):
    """Every Op of an ops tree, in program order (branches and loop bodies included)."""
    for it in items:
        if isinstance(it, Op):
            yield it
            continue
        for attr in ("body", "then", "orelse"):
            yield from flat_ops(getattr(it, attr, ()))


def rewrite(items, fn):
    """Replace, inner items first, each item of an ops tree for which fn gives a list (None keeps
    the item), in place; a replacement is not visited again."""
    k = 0
    while k < len(items):
        it = items[k]
        for attr in ("body", "then", "orelse"):
            rewrite(getattr(it, attr, ()), fn)
        new = fn(it)
        if new is None:
            k += 1
        else:
            items[k:k + 1] = new
            k += len(new)


def drop_ops(items, ids: set):
    """Remove the Ops whose id() is in ids from an ops tree, in place."""
    items[:] = [it for it in items if not (isinstance(it, Op) and id(it) in ids)]
    for it in items:
        for attr in ("body", "then", "orelse"):
            drop_ops(getattr(it, attr, []), ids)
