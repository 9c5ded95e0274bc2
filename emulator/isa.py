"""The instruction set: one table row per instruction, and the decoded forms.

Every instruction the emulator knows is one ``InstrDef`` row in ``TABLE``:
its opcode pattern, unit group (the VLIW rule counts these), accepted
precisions, operand kinds, semantics function, cost and one example line.
The parser, the executor, the cycle model, docs/isa.md and the tests all
read this table (Spike's ``insns/`` plus its encoding table, in one place);
tests/test_isa_table.py checks that every row has semantics, a cost and a
working example.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from . import semantics as S
from . import transfers as X

# -- unit groups (SDM 3.6.4): at most one expression of each per step -------------
NOP, NOFORWARD, WAIT = "nop", "noforward", "wait"
ALU, MAU_CALC, MAU_MWRITE, MAU_MREAD = "alu", "mau-calc", "mau-mwrite", "mau-mread"
L1BM, L1BM_TURN, L2BM, MV = "l1bm", "l1bm-turnaround", "l2bm", "mv"
MAU_GROUPS = (MAU_CALC, MAU_MWRITE, MAU_MREAD)
# the forwarding path ($aluf, ...) that holds the previous step's result of each unit group
FORWARD_PATH = {ALU: "aluf", MAU_CALC: "mauf", L1BM: "lbf", L1BM_TURN: "lbf", MAU_MREAD: "mreadf"}

# -- pipeline and register facts (docs/isa.md): the executor's checks and the backend read these --
HAZARD_STEPS = {"m": 2, "n": 2, "r": 1, "s": 1, "lb": 2, "lc": 2}   # steps a read must stay clear of a write
GRF_WRITE_CYCLES = 6      # a GRF word is readable this many cycles after the cycle that writes it
MASK_ENTRIES = 32         # $omr / $imr entries: 0 (no mask), 1..15 hold flags, 16..31 fixed cycle patterns
FLAG_MASKS = range(1, 16)  # the entries a step can write flags to (and a '/$imr<k>' mask names)
FIXED_MASK_BASE = 16      # entry 16 + b: the fixed pattern whose bit 3-c enables cycle c ('/bbbb')
MATRIX_ROWS = {"d": 4, "f": 8, "g": 8, "h": 16}   # a matrix register: a 4x4 fp64, 8x8 fp32 or 16x16 half matrix


def fixed_mask_cycles(entry: int) -> tuple:
    """The 4 cycles (bools) the fixed write-mask pattern in entry FIXED_MASK_BASE..MASK_ENTRIES-1 writes."""
    b = entry - FIXED_MASK_BASE
    return tuple(bool(b >> (3 - c) & 1) for c in range(4))


RROPS = ("dfadd", "ffadd", "hfadd", "dmax", "fmax", "hmax", "dmin", "fmin", "hmin",
         "liadd", "iiadd", "siadd", "land", "iand", "sand", "lor", "ior", "sor",
         "lband", "iband", "sband", "lbor", "ibor", "sbor")   # band/bor: the SDM's bitwise names
_RROP_RE = "|".join(sorted(RROPS, key=len, reverse=True))

# Operand kinds, as the table names them.
SRC = "src"        # a PE operand readable by ALU/MAU: $m $n $r $s $t, forwarding paths
SRC1 = "src1"      # as SRC, plus fixed inputs and $mreadf (ALU first input only)
DST = "dst"        # a PE destination: $m $n $r $s $t $omr $nowrite
LB, LC, MAT = "lb", "lc", "mat"
MVLOC = "mvloc"    # a MV operand: $d $p $lc with @ selectors


@dataclass
class Operand:
    """A decoded operand.  Addresses are in the memory's own unit (words for PE memories)."""

    space: str                   # m n r s t omr lb lbi lc x y mauf aluf lbf mreadf nowrite fixed d p
    text: str = ""
    width: str = "l"             # w (32-bit word), l (long), ll (two longs)
    addrs: np.ndarray | None = None   # (4,) word address per cycle, for m n r s
    base: int = 0                # lb/lc/x/y/d/p address, omr entry, fixed-input name index
    tind: bool = False           # LM0 T-register indirect ($lmt...)
    neg: bool = False            # '-' prefix (MAU inputs)
    mod: str | None = None       # 'e' (extend) or 'r' (reduce) suffix
    mask: int | None = None      # write-mask entry (0..31) from '/1000' or '/$imr1'
    madpe: int | None = None     # 'j<madpe>': PEs with subpeid <= madpe add one access width
    reg: int = 0                 # matrix register: 0 = x, 1 = y
    group: int | None = None     # MV selectors: '@g', '@g.l2b', '@.l2b'
    l2b: int | None = None
    fixed: str | None = None     # peid subpeid mabid l1bid l2bid msb1
    cache: dict | None = None    # the executor's worked-out accesses, per block offset
    via: str | None = None       # a read of forwarding path `via` that names its producer's destination,
                                 # which holds the same value (asm.alias_forwarding): no memory read


@dataclass
class InstrDef:
    name: str                    # mnemonic without prefixes
    group: str                   # unit group
    pattern: str                 # regex for the opcode, with named groups
    sem: Callable
    srcs: tuple                  # operand kinds of the sources
    dst: str | None              # DST (one or more), LB, LC, MAT, MVLOC, or None
    precs: str = ""              # accepted precision letters; "" = untyped
    default_prec: str | None = None
    unsigned: bool = False       # accepts the 'u' prefix
    cost: str = "1 step (4 cycles)"
    doc: str = ""
    example: str = ""
    flops_per_lane: int = 0      # FLOPs per lane per cycle (MAU vector mode), for the profile
    mau_rate: bool = False       # a vector product: runs at the machine's vector FMA rate (machine.mau_vector)
    flags: bool = True           # raises mask flags (may write $omr)
    regex: re.Pattern = field(init=False, repr=False)

    def __post_init__(self):
        self.regex = re.compile(self.pattern + r"$")


@dataclass
class Expr:
    """One expression of a step (or one MV statement): a table row with its decoded fields."""

    defn: InstrDef
    srcs: list
    dsts: list
    prec: str | None = None
    unsigned: bool = False
    half: str | None = None      # dv*/dm*: 'u' (PEs 0,1) or 'd' (PEs 2,3)
    out_reduce: bool = False     # 'r' suffix on the opcode
    rop: str | None = None       # reduce op of l1bmr/l2bmr/mvr
    sel: int | None = None       # @<mab> / @<l1b>
    imm: int = 0
    size: int = 0                # MV /n<size>
    tag: int | None = None       # MV i<tag>, wait i<tag> (written in hexadecimal)
    text: str = ""
    zflush: int | None = None    # zero-flush mask entry from the opcode's '/$imr<k>' or '/<bbbb>'
    bfn_bits: int | None = None  # hbfn/<k>: mantissa bits after the conversion (6..9)
    mab_shift: int = 0           # l1bmd+1 / l1bmd-1: MAB m takes MAB m-shift's share
    l1bset: tuple | None = None  # l2bmb@<set> / l2bmi@<set>: the L1Bs named


@dataclass
class Step:
    """One PE instruction statement: up to one expression per unit group, 4 cycles."""

    exprs: list
    line: int
    text: str
    masks: dict                  # multi-line write mask in force: space -> entry
    nop: bool = False
    noforward: bool = False
    wait: int | None = None      # tag awaited before this step issues
    groups: tuple = ()
    src: int = 0                 # C source line a '# line N' comment names (0: none)
    plans: dict | None = field(default=None, compare=False, repr=False)   # the executor's step plans (plan.py)


_CYCLE_MIXING = ("mwrite", "mread", "mmul", "mfma", "bfn")


def cycle_uniform(e: Expr) -> bool:
    """An ALU/MAU expression whose every operand names one location in all four cycles (a plain
    register, or a fixed value such as $peid) and that writes no mask: every cycle computes the
    same thing (the executor computes cycle 0 and gives its result to all four; the assembler's
    alias_forwarding relies on it too)."""
    def plain(op):
        return op.space in ("m", "n", "r", "s") and not op.tind and (op.addrs == op.addrs[0]).all()
    return (e.defn.group in (ALU, MAU_CALC) and e.defn.name not in _CYCLE_MIXING and e.zflush is None
            and all(op.space == "fixed" or (plain(op) and op.madpe is None) for op in e.srcs)
            and all(op.space == "nowrite" or plain(op) for op in e.dsts))


@dataclass
class MVStmt:
    expr: Expr
    line: int
    text: str


@dataclass
class DebugStmt:
    kind: str                    # 'set' or 'get'
    dtype: str                   # '', 'd', 'f', 'h'
    target: Operand
    loc: tuple                   # (group, l2b, l1b, mab, pe), None = all
    count: int
    payload: list | None
    line: int
    text: str


def _row(name, group, pattern, sem, srcs, dst, precs="", **kw):
    return InstrDef(name, group, pattern, sem, tuple(srcs), dst, precs, **kw)


_P = r"(?P<p>[dfghlis])?"
_U = r"(?P<u>u)?"
_TAG = r"(?:i(?P<tag>[0-9a-fA-F]+))?"   # MV tags are hexadecimal (PFN's programs write i1e)
_SET = r"(?P<set>\d+(?:,\d+)*)"        # an L1B set: 3 or 0,2

TABLE: list[InstrDef] = [
    # ---- ALU -------------------------------------------------------------------------
    _row("passa", ALU, _P + "passa", S.passa, [SRC1], DST, "dfhlis", default_prec="l",
         doc="copy the 128-bit input; flag: lane all zero", example="lpassa $subpeid $lm0"),
    _row("zero", ALU, "zero", S.zero, [], DST, doc="128 zero bits; no flags", flags=False, example="zero $lr0"),
    _row("imm", ALU, r"(?P<p>l)?imm(?P<u>u)?", S.imm, [], DST,
         doc="32-bit payload as xxxx (immu: x0x0); limm: a 64-bit payload in both long words; no flags",
         flags=False, example="imm 0x3f800000 $lr0"),
    _row("inc", ALU, _U + r"(?P<p>[lis])?inc", S.inc, [SRC1], DST, "lis", default_prec="l", unsigned=True,
         doc="x + 1 (wraps); flag: result >= 0 (u: no overflow)", example="linc $lm0 $ln0"),
    _row("dec", ALU, _U + r"(?P<p>[lis])?dec", S.dec, [SRC1], DST, "lis", default_prec="l", unsigned=True,
         doc="x - 1 (wraps); flag: result >= 0 (u: no borrow)", example="ldec $lr0 $lr2"),
    _row("add", ALU, _U + r"(?P<p>[lis])?add", S.add, [SRC1, SRC], DST, "lis", default_prec="l",
         unsigned=True, doc="x + y (wraps); flag: result >= 0 (u: no carry)", example="ladd $lr0 $ls0 $lr2"),
    _row("sub", ALU, _U + r"(?P<p>[lis])?sub", S.sub, [SRC1, SRC], DST, "lis", default_prec="l",
         unsigned=True, doc="x - y (wraps); flag: result >= 0 (u: no borrow)", example="isub $lr0 $ls0 $lr2"),
    _row("and", ALU, r"(?P<p>[lis])?and", S.and_, [SRC1, SRC], DST, "lis", default_prec="l",
         doc="x & y; flag: lane zero", example="land $lr0 $ls0 $lr2"),
    _row("or", ALU, r"(?P<p>[lis])?or", S.or_, [SRC1, SRC], DST, "lis", default_prec="l",
         doc="x | y; flag: lane zero", example="lor $lr0 $ls0 $lr2"),
    _row("xor", ALU, r"(?P<p>[lis])?xor", S.xor, [SRC1, SRC], DST, "lis", default_prec="l",
         doc="x ^ y; flag: lane zero", example="lxor $lr0 $ls0 $lr2"),
    _row("not", ALU, r"(?P<p>[lis])?not", S.not_, [SRC1], DST, "lis", default_prec="l",
         doc="~x; flag: lane zero", example="lnot $lr0 $lr2"),
    _row("lnot", ALU, r"(?P<p>[lis])lnot", S.lnot, [SRC1], DST, "lis",
         doc="logical not: 1 where x is 0, else 0; flag: lane zero", example="ilnot $lr0 $lr2"),
    _row("bsl", ALU, r"(?P<p>[lis])?bsl", S.bsl, [SRC1, SRC], DST, "lis", default_prec="l",
         doc="x rotated left by (y mod width); flag: lane zero", example="ibsl $lr0 $ls0 $lr2"),
    _row("bsr", ALU, r"(?P<p>[lis])?bsr", S.bsr, [SRC1, SRC], DST, "lis", default_prec="l",
         doc="x rotated right by (y mod width); flag: lane zero", example="sbsr $lr0 $ls0 $lr2"),
    _row("lsl", ALU, r"(?P<p>[lis])?lsl", S.lsl, [SRC1, SRC], DST, "lis", default_prec="l",
         doc="x << (y mod width); flag: lane zero", example="llsl $lr0 $ls0 $lr2"),
    _row("lsr", ALU, _U + r"(?P<p>[lis])?lsr", S.lsr, [SRC1, SRC], DST, "lis", default_prec="l", unsigned=True,
         doc="x >> (y mod width), arithmetic (u: logical); flag: lane zero", example="ulsr $lr0 $ls0 $lr2"),
    _row("max", ALU, _U + r"(?P<p>[dfhlis])max", S.max_, [SRC1, SRC], DST, "dfhlis", unsigned=True,
         doc="larger of x, y (floats by sign-magnitude order, both zero -> x); flag: x chosen or equal",
         example="fmax $lr0 $ls0 $lr2"),
    _row("min", ALU, _U + r"(?P<p>[dfhlis])min", S.min_, [SRC1, SRC], DST, "dfhlis", unsigned=True,
         doc="smaller of x, y (as max); flag: x chosen or equal", example="lmin $lr0 $ls0 $lr2"),
    _row("ftoi", ALU, _U + r"(?P<p>[dfh])ftoi", S.ftoi, [SRC1], DST, "dfh", unsigned=True,
         doc="float to integer of the same width, toward zero, clipped (u: of |x|); no flags",
         flags=False, example="dftoi $lr0 $lr2"),
    _row("itof", ALU, _U + r"(?P<p>[dfh])itof", S.itof, [SRC1], DST, "dfh", unsigned=True,
         doc="EXTENSION: integer to float of the same width, RNE; no flags", flags=False, example="fitof $lr0 $lr2"),
    _row("floor", ALU, r"(?P<p>[dfh])floor", S.floor, [SRC1], DST, "dfh",
         doc="round toward -inf; no flags", flags=False, example="dfloor $lr0 $lr2"),
    _row("rsqrt", ALU, r"(?P<p>[dfh])rsqrt", S.rsqrt, [SRC1], DST, "dfh",
         doc="approximate 1/sqrt(|x|), 5 mantissa bits; flag: x >= 0", example="frsqrt $lr0 $lr2"),
    _row("relu", ALU, r"(?P<p>[dfh])relu0?", S.relu, [SRC1, SRC], DST, "dfh",
         doc="y where x's sign is 0, else -0; flag: x's sign is 0", example="drelu $lr0 $ls0 $lr2"),
    _row("lrelud", ALU, r"(?P<p>[dfh])lrelud", S.lrelud, [SRC1, SRC], DST, "dfh",
         doc="leaky relu: y where x's sign is 0, else y/2; flag: x's sign is 0", example="flrelud $lr0 $ls0 $lr2"),
    _row("lreluo", ALU, r"(?P<p>[dfh])lreluo", S.lreluo, [SRC1, SRC], DST, "dfh",
         doc="leaky relu: y where x's sign is 0, else y/8; flag: x's sign is 0", example="dlreluo $lr0 $ls0 $lr2"),
    _row("ilrelud", ALU, r"(?P<p>[dfh])ilrelud", S.ilrelud, [SRC1, SRC], DST, "dfh",
         doc="inverse of lrelud: y where x's sign is 0, else y*2 (exponent + 1); flag: x's sign is 0",
         example="hilrelud $lr0 $ls0 $lr2"),
    _row("packbit", ALU, r"(?P<p>[dfhlis])packbit", S.packbit, [SRC1, SRC], DST, "dfhlis",
         doc="(x << 1) | msb(y); flag: msb(y) is 0", example="lpackbit $lr0 $ls0 $lr2"),
    _row("msl", ALU, "msl", S.msl, [SRC1], DST,
         doc="PE p of a MAB takes PE p-1's long word (0->1->2->3->0); no flags", flags=False, example="msl $lr0 $lr2"),
    _row("msr", ALU, "msr", S.msr, [SRC1], DST,
         doc="PE p takes PE p+1's long word; no flags", flags=False, example="msr $lr0 $lr2"),
    _row("bfn", ALU, r"(?P<p>[dfgh])bfn", S.bfn, [SRC1], DST, "dfgh",
         doc="block-float conversion for the matrix unit (see docs/isa.md); hbfn/<k>: k = 6..9 mantissa bits; no flags",
         flags=False, example="dbfn $lm0v $lr0v"),
    # ---- MAU vector mode -----------------------------------------------------------
    _row("vfma", MAU_CALC, r"(?P<p>[dfh])vfma(?P<half>[ud])?(?P<r>r)?", S.vfma, [SRC, SRC, SRC], DST,
         "dfh", flops_per_lane=2, mau_rate=True, doc="x*y + z per lane (d: products on PEs 0,1 (u) or 2,3 (d)); "
         "flag: result sign is 0", example="fvfma $lm0 $ln0 $lr0 $ls0"),
    _row("vmul", MAU_CALC, r"(?P<p>[dfh])vmul(?P<half>[ud])?(?P<r>r)?", S.vmul, [SRC, SRC], DST,
         "dfh", flops_per_lane=1, mau_rate=True, doc="x*y per lane (d: u/d halves as vfma)", example="dvmulu $lm0 $ln0 $nowrite"),
    _row("vadd", MAU_CALC, r"(?P<p>[dfh])vadd(?P<r>r)?", S.vadd, [SRC, SRC], DST, "dfh",
         flops_per_lane=1, doc="x + y per lane", example="dvadd $lr0 $ls0 $ls2"),
    _row("vpassa", MAU_CALC, r"(?P<p>[dfh])vpassa(?P<r>r)?", S.vpassa, [SRC], DST, "dfh",
         doc="x normalised (subnormals and -0 to +0); with r: to the next lower precision",
         example="dvpassar $lm0v $n0v"),
    # ---- MAU matrix mode -----------------------------------------------------------
    _row("mwrite", MAU_MWRITE, r"(?P<p>[dfgh])mwrite", S.mwrite, [SRC], MAT, "dfgh",
         doc="rows r..r+3 (ll: r..r+7) of $lx/$ly from the 4 cycles; column k from PE k",
         flags=False, example="dmwrite $lr0v $lx0"),
    _row("mmul", MAU_CALC, r"(?P<p>[dfgh])mmul(?P<half>[ud])?(?P<r>r)?", S.mmul, [MAT, SRC], DST,
         "dfgh", flops_per_lane=0, doc="per cycle A b, b across the MAB's PEs (d: rows 0,1 (u) or 2,3 (d))",
         example="dmmulu $lx $ls0v $nowrite"),
    _row("mfma", MAU_CALC, r"(?P<p>[dfgh])mfma(?P<half>[ud])?(?P<r>r)?", S.mfma, [MAT, SRC, SRC], DST,
         "dfgh", flops_per_lane=0, doc="per cycle A b + c", example="dmfmad $lx $ls0v $mauf $lm8v"),
    _row("mread", MAU_MREAD, r"(?P<p>[dfgh])mread", S.mread, [MAT], DST, "dfgh",
         doc="rows of the transpose, in mwrite's layout; bits copied", flags=False, example="dmread $lx0 $lr0v"),
    # ---- L1BM <-> PE --------------------------------------------------------------------
    _row("l1bmp", L1BM, "l1bmp", X.l1bmp, [LB], DST, cost="1 step; 4 (ll: 8) long words read",
         doc="broadcast: every PE gets $lb[a+c] at cycle c", flags=False, example="l1bmp $lb0 $lr0v"),
    _row("l1bmm", L1BM, "l1bmm", X.l1bmm, [LB], DST, cost="1 step; 16 (ll: 32) long words read",
         doc="16x1: PE p of every MAB gets $lb[a+4c+p]", flags=False, example="l1bmm $lb0 $lm4v/1000"),
    _row("l1bmm4", L1BM, "l1bmm4", X.l1bmm4, [LB], DST, cost="1 step; 64 (ll: 128) long words read",
         doc="4x4: PE p of MAB m gets $lb[a+16c+4(m>>2)+p]", flags=False, example="l1bmm4 $lb0 $lr0v"),
    _row("l1bmd", L1BM, r"l1bmd(?P<shift>[+-]1)?", X.l1bmd, [SRC], None, cost="1 step; 4 long words per PE",
         doc="distribute ($lb -> PE: PE i gets $lb[a+64c+i]) or gather (PE -> $lb), by operand order; "
             "l1bmd+1 / l1bmd-1 (distribute): MAB m gets MAB m-1's / m+1's share, wrapping in the L1B",
         flags=False, example="l1bmd $lb0 $lr0v"),
    _row("l1bmm@", L1BM, r"l1bmm@(?P<sel>\d+)", X.l1bmm_at, [SRC], LB, cost="1 step; 16 long words written",
         doc="MAB sel's PEs write $lb[a+4c+p]", example="l1bmm@0 $lr0v $lb0"),
    _row("l1bmm4@", L1BM, r"l1bmm4@(?P<sel>\d+)", X.l1bmm4_at, [SRC], LB, cost="1 step; 64 long words written",
         doc="MABs with (m & 3) == sel write $lb[a+16c+4(m>>2)+p]", example="l1bmm4@0 $lr0v $lb0"),
    _row("l1bmr", L1BM, rf"l1bmr(?P<rop>{_RROP_RE})", X.l1bmr, [SRC], LB, cost="1 step; 16 long words written",
         doc="reduce over the 16 MABs: $lb[a+4c+p] = op over m", example="l1bmrdfadd $lm0 $lb0"),
    _row("l1bmr4", L1BM, rf"l1bmr4(?P<rop>{_RROP_RE})", X.l1bmr4, [SRC], LB,
         cost="1 step; 64 long words written", doc="reduce over m & 3: $lb[a+16c+4(m>>2)+p]",
         example="l1bmr4liadd $lr0v $lb0"),
    # ---- L2BM <-> L1BM -----------------------------------------------------------------
    _row("l2bmb", L2BM, r"l2bmb(?:@" + _SET + ")?", X.l2bmb, [LC], LB, cost="1 step; 64 long words to every L1BM",
         doc="broadcast $lc[a..a+63] to $lb[b..b+63] of every L1B of the L2B (@<set>: of the L1Bs named, e.g. @3 or @0,2)",
         example="l2bmb $lc0 $lb0"),
    _row("l2bmd", L2BM, "l2bmd", X.l2bmd, [LC], LB, cost="1 step; 32 long words per L1BM",
         doc="distribute (L1B i gets $lc[a+64c+8i+j] at $lb[b+8c+j]) or gather, by operand order",
         example="l2bmd $lc0 $lb0"),
    _row("l2bm@", L2BM, r"l2bm@(?P<sel>\d+)", X.l2bm_at, [LB], LC, cost="1 step; 64 long words",
         doc="L1B sel's $lb[b..b+63] to $lc[a..a+63]", example="l2bm@0 $lb0 $lc0"),
    _row("l2bmr", L2BM, rf"l2bmr(?P<rop>{_RROP_RE})", X.l2bmr, [LB], LC, cost="1 step; 64 long words",
         doc="reduce over the L2B's L1Bs: $lc[a+j] = op over i of $lb_i[b+j]", example="l2bmrliadd $lb0 $lc0"),
    _row("l2bmr2", L2BM, rf"l2bmr2(?P<rop>{_RROP_RE})", X.l2bmr2, [LB], LC, cost="1 step; 64 long words per L1B pair",
         doc="reduce pairs of L1Bs: $lc[a+64k+j] = op of $lb_2k[b+j] and $lb_2k+1[b+j]", example="l2bmr2liadd $lb0 $lc0"),
    _row("l2bmi", L2BM, r"l2bmi@" + _SET, X.l2bmi, [LB], LB, cost="1 step; 64 long words to each L1BM of the set",
         doc="L1BM to L1BM: the set's lowest L1B's $lb[a..a+63] to $lb[b..b+63] of every L1B of the set",
         example="l2bmi@0,1 $lb0 $lb64"),
    # ---- DRAM / PDM <-> L2BM (asynchronous, tagged) -------------------------------------------
    _row("mvp", MV, r"mvp/n(?P<n>\d+)" + _TAG, X.mvp, [MVLOC], MVLOC,
         cost="latency + bytes / bandwidth of each link crossed; concurrent with PE steps",
         doc="unicast n long words between DRAM/PDM and one L2BM, PDM <-> DRAM or PDM -> PDM; groups named on "
             "both operands may differ (the group bus); no group: every group; $lc with no @: L2B 0",
         example="mvp/n64i1 $d0 $lc0@.0"),
    _row("mvb", MV, r"mvb/n(?P<n>\d+)" + _TAG, X.mvb, [MVLOC], MVLOC, cost="as mvp, plus the group bus",
         doc="broadcast n long words from one group's DRAM/PDM to every L2BM", example="mvb/n64i1 $d0@0 $lc0"),
    _row("mvb2", MV, r"mvb2/n(?P<n>\d+)" + _TAG, X.mvb2, [MVLOC], MVLOC, cost="as mvp",
         doc="broadcast within a group: its DRAM/PDM to both of its L2BMs", example="mvb2/n64i1 $d0 $lc0"),
    _row("mvb4", MV, r"mvb4/n(?P<n>\d+)" + _TAG, X.mvb4, [MVLOC], MVLOC, cost="as mvb",
         doc="distribute over the groups and broadcast: part q of one group's n long words (n/groups each) to "
             "both L2BMs of group q", example="mvb4/n256i1 $d0@0 $lc0"),
    _row("mvd", MV, r"mvd/n(?P<n>\d+)" + _TAG, X.mvd, [MVLOC], MVLOC, cost="as mvp",
         doc="distribute a group's n long words over its L2BMs, n/L2B each in L2B order (or gather back); "
             "$p@g -> $d: over the groups' DRAMs, n/groups each in group order (or gather back)",
         example="mvd/n128i1 $d0 $lc0"),
    _row("mvr", MV, rf"mvr(?P<rop>{_RROP_RE})/n(?P<n>\d+)" + _TAG, X.mvr, [MVLOC], MVLOC,
         cost="as mvb", doc="reduce every L2BM's n long words into one group's DRAM/PDM",
         example="mvrliadd/n64i1 $lc0 $d0@0"),
    _row("mvr2", MV, rf"mvr2(?P<rop>{_RROP_RE})/n(?P<n>\d+)" + _TAG, X.mvr2, [MVLOC], MVLOC,
         cost="as mvp", doc="reduce a group's two L2BMs into its DRAM/PDM", example="mvr2liadd/n64i1 $lc0 $d0"),
    _row("mvr4", MV, rf"mvr4(?P<rop>{_RROP_RE})/n(?P<n>\d+)" + _TAG, X.mvr4, [MVLOC], MVLOC, cost="as mvb",
         doc="reduce each group's two L2BMs (n/groups long words) into part q of one group's n long words",
         example="mvr4liadd/n256i1 $lc0 $d0@0"),
    # ---- synchronisation ----------------------------------------------------------------------
    _row("nop", NOP, "nop", None, [], None, doc="4 idle cycles; forwarding paths keep their values",
         example="nop"),
    _row("noforward", NOFORWARD, "noforward", None, [], None,
         doc="the step's results do not update the forwarding paths", example="noforward; lpassa $lr0 $lr2"),
    _row("wait", WAIT, "wait", None, [], None, cost="stalls until every transfer with the tag has completed",
         doc="wait i<tag>: issue nothing more (PE or MV) until the tag's transfers are done",
         example="mvp/n64i1 $d0 $lc0@.0\nnop; wait i1"),
]

BY_NAME = {d.name: d for d in TABLE}


@functools.lru_cache(maxsize=4096)
def match_opcode(op: str):
    """(InstrDef, match) for an opcode, or (None, None); kept, as programs repeat a few opcodes."""
    for d in TABLE:
        m = d.regex.match(op)
        if m:
            return d, m
    return None, None
