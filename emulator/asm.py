"""The assembler: VSM text -> decoded Program.

Takes the text of a ``.vsm`` file and gives a ``program.Program`` whose
blocks hold decoded ``isa.Step`` / ``isa.MVStmt`` / ``isa.DebugStmt``
statements, ready for the executor.  Work is line by line:

  statement  := comment | 'quit' | debug | mask-directive | nop/k | mv | step | directive
  step       := expression (';' expression)*
  expression := opcode operand*            (opcode matched against isa.TABLE)

Everything that can be checked without running is checked here: opcodes,
precisions, operand kinds and counts, alignment, the VLIW unit-group rule,
two writes to one operand, LM read/write conflicts.  Every error is an
``AsmError`` naming the source, the line and its text.
"""
from __future__ import annotations

import re
from dataclasses import replace

import numpy as np

from . import isa
from .errors import AsmError
from .isa import DebugStmt, Expr, MVStmt, Operand, Step
from .transfers import MV_UNIT
from .program import AnyLoop, Block, Fault, If, IfAny, Loop, Program, Run, SetReg, compile_scalar, OFFSET_SPACES

WL = {"w": 1, "l": 2, "ll": 4}
FIXED = ("peid", "subpeid", "mabid", "l1bid", "l2bid", "msb1")
FORWARD = ("mauf", "aluf", "lbf", "mreadf")
MASK_SPACES = "rstmnk"   # mask directive letters: GRF0 GRF1 T LM0 LM1 mask registers
MAX_NUMBER = (1 << 32) - 1   # largest address / size / selector / tag / count: far above any memory
MAX_NOP_REPEAT = 1 << 16     # nop/<k> expands to k steps
MAX_NESTING = 64             # .loop / .if / .while nested deeper is an error (the tools walk them recursively)
MAX_MASK_ENTRY = isa.MASK_ENTRIES - 1
_FLAGS = f"{isa.FLAG_MASKS[0]}..{isa.FLAG_MASKS[-1]}"   # the entries that hold flags, as messages say
_NEWLINE_RE = re.compile(r"\r\n|\r|\n")   # what open() counts as a line end (not \f, \x85, U+2028 ...)

_PE_RE = re.compile(r"(?P<w>ll|l)?(?P<sp>[mnrs])(?:(?P<t>t)(?P<taddr>\d+)?|(?P<addr>\d+))?"
                    r"(?P<v>v(?P<adri>\d+)?)?(?P<flat>\[[\d\s,]*\])?(?:j(?P<j>\d+))?(?P<mod>[er])?")
_FWD_RE = re.compile(r"(?P<f>mauf|aluf|lbf|mreadf)(?P<mod>e)?")   # $alufe: a forwarded MAU input, extended
_BAR_RE = re.compile(r"l?(?P<sp>[mn])b")                          # $lmb, $lnb: LM0 / LM1 base-address registers
_TYPED_IMM_RE = re.compile(r'(?P<u>u)?(?P<t>[dfhils])"(?P<v>[^"]*)"')
_T_RE = re.compile(r"(?:ll|l)?t(?P<mod>[er])?")
_OMR_RE = re.compile(r"omr(?P<n>\d+)")
_LB_RE = re.compile(r"(?P<w>ll|l)?b(?:(?P<i>i)|(?P<addr>\d+))")
_LC_RE = re.compile(r"lc(?P<addr>\d+)(?:@(?P<g>\d+)?(?:\.(?P<l2b>\d+))?)?")
_MAT_RE = re.compile(r"(?P<w>ll|l)?(?P<reg>[xy])(?P<addr>\d+)?")
_DP_RE = re.compile(r"(?P<sp>[dp])(?P<addr>\d+)(?:@(?P<g>\d+))?")
_MASK_RE = re.compile(r"(?:ll)?(?P<bits>[01]{4})[tp]?|\$(?:ll)?imr(?P<n>\d+)[tp]?")
_MASKDIR_RE = re.compile(r"mask(?:ll|l)?(?P<sp>[rstmnk]*)")
_DEBUG_LOC_RE = re.compile(
    r"\$(?P<mem>(?:ll|l)?[mnrs]\d+|(?:ll|l)?t|omr\d+|(?:ll|l)?b\d+|lc\d+|[dp]\d+|(?:ll|l)?[xy]\d*)"
    r"(?:n(?P<n>\d+))?(?:c(?P<c>\d+))?(?:b(?P<b>\d+))?(?:m(?P<m>\d+))?(?:p(?P<p>\d+))?$")
_HEX_RE = re.compile(r"[0-9a-fA-F]+")


class _Ctx:
    """Where the parser is: for error messages."""

    def __init__(self, source: str):
        self.source, self.line, self.text = source, 0, ""

    def error(self, msg: str) -> AsmError:
        return AsmError(msg, self.line, self.text, self.source)


# -- operands ---------------------------------------------------------------------------

def _int(s: str, cx: _Ctx, what: str = "number") -> int:
    try:
        return int(s, 0)
    except (TypeError, ValueError):
        raise cx.error(f"bad {what} '{s}'") from None


def _num(s: str, cx: _Ctx, what: str, tok: str, limit: int = MAX_NUMBER) -> int:
    """A decimal field of an operand or opcode (matched by \\d+), at most `limit`."""
    digits = s.lstrip("0") or "0"
    if len(digits) > len(str(limit)) or int(digits) > limit:
        shown = s if len(s) <= 24 else s[:20] + "..."
        raise cx.error(f"{what} {shown} in '{tok}' is too large (at most {limit})")
    return int(digits)


def _hexnum(s: str, cx: _Ctx, what: str, tok: str, limit: int = MAX_NUMBER) -> int:
    """A hexadecimal field (MV/wait tags, raw DRAM lines), at most `limit`."""
    if not _HEX_RE.fullmatch(s):
        raise cx.error(f"bad hexadecimal {what} '{s}' in '{tok}'")
    digits = s.lstrip("0") or "0"
    if len(digits) > 16 or int(digits, 16) > limit:
        shown = s if len(s) <= 24 else s[:20] + "..."
        raise cx.error(f"hexadecimal {what} {shown} in '{tok}' is too large (at most {limit})")
    return int(digits, 16)


def _pe_addrs(m: re.Match, width: str, cx: _Ctx, tok: str) -> tuple[np.ndarray, bool]:
    tind = bool(m["t"])
    base = m["taddr"] if tind else m["addr"]
    if m["flat"]:
        if base is not None or m["v"]:
            raise cx.error(f"operand '{tok}': a flat address list replaces the address and 'v'")
        vals = [v.strip() for v in m["flat"][1:-1].split(",")]
        if len(vals) != 4 or not all(vals):
            raise cx.error(f"operand '{tok}': a flat address list needs exactly 4 addresses")
        addrs = np.array([_num(v, cx, "address", tok) for v in vals], dtype=np.int64)
    else:
        if base is None and not tind:
            raise cx.error(f"operand '{tok}' needs an address")
        a = _num(base or "0", cx, "address", tok)
        adri = (_num(m["adri"], cx, "address increment", tok) if m["adri"] else 1) if m["v"] else 0
        addrs = a + adri * np.arange(4, dtype=np.int64) * WL[width]
    if width == "l" and np.any(addrs % 2):
        raise cx.error(f"operand '{tok}': long-word addresses must be even (word addresses), got {list(addrs)}")
    if width == "ll" and np.any(addrs % 4):
        raise cx.error(f"operand '{tok}': double-long-word addresses must be multiples of 4, got {list(addrs)}")
    return addrs, tind


_OPERANDS: dict[str, Operand] = {}     # token -> its decoded form (generated programs repeat a few hundred)
_OPERANDS_MAX = 1 << 16


def parse_operand(tok: str, cx: _Ctx) -> Operand:
    """One operand token, including its '-' prefix and '/mask' suffix.  A token decodes the same
    wherever it stands, so decoded ones are kept: each use gets its own copy (the executor hangs
    its per-use cache on it), sharing the read-only address array."""
    op = _OPERANDS.get(tok)
    if op is None:
        op = _parse_operand(tok, cx)
        if op.addrs is not None:
            op.addrs.flags.writeable = False
        if len(_OPERANDS) >= _OPERANDS_MAX:
            _OPERANDS.clear()
        _OPERANDS[tok] = op
    copy = object.__new__(Operand)           # (dataclasses.replace re-runs __init__: 4x slower)
    copy.__dict__.update(op.__dict__)
    return copy


def _parse_operand(tok: str, cx: _Ctx) -> Operand:
    text = tok
    mask = None
    if "/" in tok:
        tok, mtxt = tok.split("/", 1)
        mm = _MASK_RE.fullmatch(mtxt)
        if not mm:
            raise cx.error(f"bad write mask '/{mtxt}' on '{tok}': use /<4 binary digits> or /$imr<{_FLAGS}>")
        if mm["bits"]:
            mask = isa.FIXED_MASK_BASE + int(mm["bits"], 2)
        else:
            mask = _num(mm["n"], cx, "mask entry", text, MAX_MASK_ENTRY)
            if mask not in isa.FLAG_MASKS:
                raise cx.error(f"write mask '$imr{mask}': mask entries {_FLAGS} hold flags (0 and "
                               f"{isa.FIXED_MASK_BASE}..{isa.MASK_ENTRIES - 1} are fixed)")
    neg = tok.startswith("-")
    if neg:
        tok = tok[1:]
    if not tok.startswith("$"):
        raise cx.error(f"bad operand '{text}': operands start with '$'")
    body = tok[1:]
    op = None
    if body in FIXED:
        op = Operand("fixed", text, width="ll", fixed=body)
    elif (m := _FWD_RE.fullmatch(body)):
        op = Operand(m["f"], text, width="ll", mod=m["mod"])
    elif (m := _BAR_RE.fullmatch(body)):
        op = Operand(m["sp"] + "b", text, width="l")
    elif body == "nowrite":
        op = Operand("nowrite", text, width="ll")
    elif (m := _OMR_RE.fullmatch(body)):
        op = Operand("omr", text, width="l", base=_num(m["n"], cx, "mask entry", text, MAX_MASK_ENTRY))
    elif (m := _T_RE.fullmatch(body)):
        op = Operand("t", text, width="ll", mod=m["mod"])
    elif (m := _PE_RE.fullmatch(body)):
        width = m["w"] or "w"
        addrs, tind = _pe_addrs(m, width, cx, text)
        if tind and m["sp"] != "m":
            raise cx.error(f"operand '{text}': T-indirect addressing exists only on LM0 ($lmt...)")
        madpe = None
        if m["j"] is not None:
            if m["sp"] not in "mn" or tind:
                raise cx.error(f"operand '{text}': 'j<madpe>' modifies LM0/LM1 addresses, and not with T-indirect")
            madpe = _num(m["j"], cx, "madpe", text, 3)
        op = Operand(m["sp"], text, width=width, addrs=addrs, tind=tind, mod=m["mod"], madpe=madpe)
    elif (m := _LB_RE.fullmatch(body)):
        op = Operand("lbi" if m["i"] else "lb", text, width=m["w"] or "l",
                     base=_num(m["addr"] or "0", cx, "address", text))
    elif (m := _LC_RE.fullmatch(body)):
        op = Operand("lc", text, base=_num(m["addr"], cx, "address", text),
                     group=_num(m["g"], cx, "group", text) if m["g"] else None,
                     l2b=_num(m["l2b"], cx, "L2B", text) if m["l2b"] else None)
    elif (m := _MAT_RE.fullmatch(body)):
        op = Operand(m["reg"], text, width=m["w"] or "l", base=_num(m["addr"] or "0", cx, "row", text),
                     reg=int(m["reg"] == "y"))
    elif (m := _DP_RE.fullmatch(body)):
        op = Operand(m["sp"], text, base=_num(m["addr"], cx, "address", text),
                     group=_num(m["g"], cx, "group", text) if m["g"] else None)
    if op is None:
        raise cx.error(f"unknown operand '{text}' (see docs/isa.md, 'Operands')")
    op.neg, op.mask = neg, mask
    return op


# -- expressions -----------------------------------------------------------------------------

_READABLE = {"m", "n", "r", "s", "t", "mauf", "aluf", "lbf"}
_WRITABLE = {"m", "n", "r", "s", "t", "omr", "nowrite", "mb", "nb"}


def _check_kind(op: Operand, kind: str, e_name: str, pos: str, cx: _Ctx) -> None:
    ok = {
        isa.SRC: op.space in _READABLE,
        isa.SRC1: op.space in _READABLE or op.space in ("fixed", "mreadf"),
        isa.DST: op.space in _WRITABLE,
        isa.LB: op.space in ("lb", "lbi"),
        isa.LC: op.space == "lc",
        isa.MAT: op.space in ("x", "y"),
        isa.MVLOC: op.space in ("d", "p", "lc"),
    }[kind]
    if not ok:
        want = {isa.SRC: "a PE operand ($m $n $r $s $t or a forwarding path)",
                isa.SRC1: "a PE operand, fixed input or forwarding path",
                isa.DST: "a PE destination ($m $n $r $s $t $omr $lmb $lnb or $nowrite)",
                isa.LB: "an L1BM operand ($lb<addr>)", isa.LC: "an L2BM operand ($lc<addr>)",
                isa.MAT: "a matrix register ($lx/$ly)", isa.MVLOC: "$d, $p or $lc"}[kind]
        raise cx.error(f"'{e_name}': {pos} operand '{op.text}' must be {want}")
    if op.space == "fixed" and kind != isa.SRC1:
        raise cx.error(f"'{e_name}': fixed input '{op.text}' may only be an ALU instruction's first input")
    if op.space == "omr" and op.base not in isa.FLAG_MASKS:
        raise cx.error(f"'{e_name}': '{op.text}': only mask entries {_FLAGS} are writable")
    if op.mask is not None and kind != isa.DST:
        raise cx.error(f"'{e_name}': write mask on '{op.text}', which is not written")


# Typed immediates (i"2", ui"0x10", f"8.0", f"inf", h"1.5", s"-3"; limm also d"..", l"..", ul".."):
# the value in its type's bits, repeated to fill the payload (32 bits for imm, 64 for limm), so every
# lane of that type holds it.  (PFN's programs use them; the layout of h/s in the payload is our choice.)
_TYPED_WIDTH = {"d": 64, "l": 64, "f": 32, "i": 32, "h": 16, "s": 16}


def _typed_imm(m: re.Match, bits: int, tok: str, cx: _Ctx) -> int:
    t, unsigned, text = m["t"], bool(m["u"]), m["v"].strip()
    w = _TYPED_WIDTH[t]
    if unsigned and t in "dfh":
        raise cx.error(f"immediate {tok}: 'u' applies to integer types (ui, us, ul)")
    if w > bits:
        raise cx.error(f"immediate {tok}: a {w}-bit value does not fit imm's 32-bit payload (use limm)")
    try:
        if t in "dfh":
            v = float(text)
            with np.errstate(over="ignore"):
                x = np.float64(v) if t == "d" else np.float32(v)
            if np.isinf(x) and not np.isinf(v):
                raise cx.error(f"immediate {tok} does not fit in {'fp64' if t == 'd' else 'fp32'}")
            if t == "h":
                from .numbers import f32_to_mnhalf
                raw = int(f32_to_mnhalf(np.array([x], np.float32))[0])
            else:
                raw = int(x.view(np.uint64 if t == "d" else np.uint32))
        else:
            v = int(text, 0)
            lo = 0 if unsigned else -(1 << (w - 1))
            hi = (1 << w) - 1 if unsigned else (1 << (w - 1)) - 1
            if not lo <= v <= hi:
                raise cx.error(f"immediate {tok} does not fit in {'u' if unsigned else ''}{t} ({lo}..{hi})")
            raw = v & ((1 << w) - 1)
    except (ValueError, OverflowError):
        raise cx.error(f"bad immediate '{tok}'") from None
    out = 0
    for _ in range(bits // w):
        out = out << w | raw
    return out


def _imm_payload(tok: str, long: bool, cx: _Ctx) -> int:
    if (m := _TYPED_IMM_RE.fullmatch(tok)):
        return _typed_imm(m, 64 if long else 32, tok, cx)
    try:
        if re.fullmatch(r"[-+]?(\d+\.\d*|\.\d+|\d+[eE][-+]?\d+|\d+\.\d*[eE][-+]?\d+)[fF]?", tok):
            v = float(tok.rstrip("fF"))
            with np.errstate(over="ignore"):
                f = np.float64(v) if long else np.float32(v)
            if not np.isfinite(f):
                raise cx.error(f"immediate {tok} does not fit in {'fp64' if long else 'fp32'}")
            return int(f.view(np.uint64 if long else np.uint32))
        v = int(tok, 0)
    except ValueError:
        raise cx.error(f"bad immediate '{tok}'") from None
    bits = 64 if long else 32
    if not -(1 << (bits - 1)) <= v < (1 << bits):
        raise cx.error(f"immediate {tok} does not fit in {bits} bits")
    return v & ((1 << bits) - 1)


def parse_expr(text: str, cx: _Ctx) -> Expr:
    toks = text.split()
    opcode, args = toks[0], toks[1:]
    suffix = None          # a PE opcode's '/...': a zero-flush mask, or hbfn's mantissa length
    if "/" in opcode and not opcode.startswith("mv"):
        opcode, suffix = opcode.split("/", 1)
    defn, m = isa.match_opcode(opcode)
    if defn is None:
        raise cx.error(f"unknown instruction '{opcode}' (docs/isa.md lists the supported set)")
    g = m.groupdict()
    prec = g.get("p") or defn.default_prec
    if defn.precs and prec is None:
        raise cx.error(f"'{opcode}' needs a precision prefix, one of {', '.join(defn.precs)}")
    if prec and defn.precs and prec not in defn.precs:
        raise cx.error(f"'{opcode}': precision '{prec}' is not valid for {defn.name} (one of {defn.precs})")
    e = Expr(defn, [], [], prec=prec, unsigned=bool(g.get("u")), half=g.get("half"),
             out_reduce=bool(g.get("r")), rop=g.get("rop"), text=text.strip())
    if g.get("sel") is not None:
        e.sel = _num(g["sel"], cx, "selector", opcode)
    if g.get("n") is not None:
        e.size = _num(g["n"], cx, "size", opcode)
    if g.get("tag") is not None:
        e.tag = _hexnum(g["tag"], cx, "tag", opcode)
        if e.tag == 0:
            raise cx.error(f"'{opcode}': tag 0 is not a valid tag")
    if g.get("shift"):
        e.mab_shift = int(g["shift"])
    if g.get("set") is not None:
        e.l1bset = tuple(sorted({_num(x, cx, "L1B", opcode) for x in g["set"].split(",")}))
    if suffix is not None:
        _opcode_suffix(e, suffix, opcode, cx)
    if defn.name == "imm":
        if not args:
            raise cx.error(f"'{opcode}' needs a payload and a destination")
        e.imm = _imm_payload(args[0], prec == "l", cx)
        if prec != "l":
            e.imm = (e.imm << 32 | e.imm) if not e.unsigned else (e.imm << 32)
        args = args[1:]
        e.prec = "l"
    elif e.unsigned and not defn.unsigned:
        raise cx.error(f"'{opcode}': {defn.name} has no unsigned form")
    if defn.name in ("vfma", "vmul", "mmul", "mfma") and prec == "d" and e.half is None:
        raise cx.error(f"'{opcode}': fp64 products need the half selector: {opcode}u (PEs 0,1) or {opcode}d (PEs 2,3)")
    if e.half is not None and prec != "d":
        raise cx.error(f"'{opcode}': the u/d half selector exists only for fp64 (d) products")
    if e.rop and e.rop[0] in "dfgh" and e.rop[1:] in ("iadd", "and", "or"):
        raise cx.error(f"'{opcode}': integer reduce needs l/i/s precision")
    if defn.group == isa.WAIT:
        if len(args) != 1 or not re.fullmatch(r"i[0-9a-fA-F]+", args[0]):
            raise cx.error("'wait' takes one tag: wait i<hexadecimal tag>")
        e.tag = _hexnum(args[0][1:], cx, "tag", args[0])
        if e.tag == 0:
            raise cx.error("'wait i0': tag 0 is not a valid tag")
        return e
    if defn.group in (isa.NOP, isa.NOFORWARD):
        if args:
            raise cx.error(f"'{opcode}' takes no operands")
        return e
    ops = [parse_operand(a, cx) for a in args]
    _bind_operands(e, ops, opcode, cx)
    return e


_ZFLUSH_GROUPS = (isa.ALU, isa.MAU_CALC, isa.MAU_MREAD, isa.L1BM)


def _opcode_suffix(e: Expr, suffix: str, opcode: str, cx: _Ctx) -> None:
    """'hbfn/9' (half block float with 9 mantissa bits) or a zero-flush mask 'lpassa/$imr1'."""
    if e.defn.name == "bfn" and suffix.isdigit():
        if e.prec != "h":
            raise cx.error(f"'{opcode}/{suffix}': the mantissa length applies to half block float (hbfn/6..9)")
        e.bfn_bits = _num(suffix, cx, "mantissa length", opcode + "/" + suffix, 9)
        if e.bfn_bits < 6:
            raise cx.error(f"'{opcode}/{suffix}': hbfn keeps 6..9 mantissa bits")
        return
    if e.defn.group not in _ZFLUSH_GROUPS:
        raise cx.error(f"'{opcode}/{suffix}': a zero-flush mask applies to ALU, MAU, mread and L1BM -> PE "
                       f"instructions only")
    mm = _MASK_RE.fullmatch(suffix)
    if not mm:
        raise cx.error(f"bad zero-flush mask '/{suffix}' on '{opcode}': use /<4 binary digits> or /$imr<{_FLAGS}>")
    if mm["bits"]:
        e.zflush = isa.FIXED_MASK_BASE + int(mm["bits"], 2)
    else:
        e.zflush = _num(mm["n"], cx, "mask entry", opcode + "/" + suffix, MAX_MASK_ENTRY)
        if e.zflush not in isa.FLAG_MASKS:
            raise cx.error(f"zero-flush mask '$imr{e.zflush}': mask entries {_FLAGS} hold flags")


def _bind_operands(e: Expr, ops: list, opcode: str, cx: _Ctx) -> None:
    defn = e.defn
    srcs_kinds = list(defn.srcs)
    dst_kind = defn.dst
    # transfers named by operand order: l1bmd / l2bmd go up when the L1BM/L2BM operand comes second
    if defn.name == "l1bmd":
        if ops and ops[0].space in ("lb", "lbi"):
            srcs_kinds, dst_kind = [isa.LB], isa.DST
        else:
            srcs_kinds, dst_kind = [isa.SRC], isa.LB
    if defn.name == "l2bmd" and ops and ops[0].space == "lb":
        srcs_kinds, dst_kind = [isa.LB], isa.LC
    down = defn.group != isa.L1BM or isa.LB in srcs_kinds
    if e.mab_shift and not down:
        raise cx.error(f"'{opcode}': l1bmd+1 / l1bmd-1 distribute only ($lb source first)")
    if e.zflush is not None and not down:
        raise cx.error(f"'{opcode}': a zero-flush mask applies to L1BM -> PE transfers only")
    ns = len(srcs_kinds)
    if len(ops) < ns + (1 if dst_kind else 0):
        raise cx.error(f"'{opcode}' needs {ns} source(s){' and a destination' if dst_kind else ''}, "
                       f"got {len(ops)} operand(s)")
    e.srcs, e.dsts = ops[:ns], ops[ns:]
    for i, (op, kind) in enumerate(zip(e.srcs, srcs_kinds)):
        _check_kind(op, kind, opcode, f"source {i + 1}", cx)
    if dst_kind is None and e.dsts:
        raise cx.error(f"'{opcode}' takes no destination")
    if dst_kind != isa.DST and len(e.dsts) > 1:
        raise cx.error(f"'{opcode}' takes one destination, got {len(e.dsts)}")
    for op in e.dsts:
        _check_kind(op, dst_kind, opcode, "destination", cx)
    if any(op.space == "nowrite" for op in e.dsts) and len(e.dsts) > 1:
        raise cx.error(f"'{opcode}': $nowrite cannot be combined with other destinations")
    mau = defn.group in isa.MAU_GROUPS
    for i, op in enumerate(e.srcs):
        if (op.neg or op.mod) and not mau:
            raise cx.error(f"'{opcode}': input modifiers ('-', 'e', 'r') apply to MAU inputs only ('{op.text}')")
        addend = i == 2 or (i == 1 and defn.name == "vadd")     # hvadd's second input is the addend
        if op.mod == "e" and e.prec == "h" and not addend:   # only the fp32 addend of a half FMA extends
            raise cx.error(f"'{opcode}': '{op.text}': there is no precision below half to extend from")
        if op.mod == "r" and e.prec != "h":
            raise cx.error(f"'{opcode}': '{op.text}': input reduction 'r' applies to half-precision inputs")
        if op.space == "mreadf" and defn.group != isa.ALU:
            raise cx.error(f"'{opcode}': $mreadf may only be an ALU instruction's first input")
    if defn.group == isa.MAU_MWRITE:
        d = e.dsts[0]
        rows = 8 if d.width == "ll" else 4
        if d.width == "ll" and e.prec != "h":
            raise cx.error(f"'{opcode}': two rows per cycle ($llx) only for hmwrite")
        limit = isa.MATRIX_ROWS[e.prec]
        if d.base + rows > limit:
            raise cx.error(f"'{opcode}': rows {d.base}..{d.base + rows - 1} are outside the {limit}-row "
                           f"{'fp64' if e.prec == 'd' else 'fp32' if e.prec in 'fg' else 'half'} matrix")
    if defn.group == isa.MAU_MREAD:
        s = e.srcs[0]
        rows = 8 if e.prec == "h" else 4
        limit = isa.MATRIX_ROWS[e.prec]
        if s.base + rows > limit:
            raise cx.error(f"'{opcode}': rows {s.base}..{s.base + rows - 1} are outside the {limit}-row matrix")
    if defn.group == isa.MV:
        _check_mv(e, opcode, cx)


def _check_mv(e: Expr, opcode: str, cx: _Ctx) -> None:
    s, d = e.srcs[0], e.dsts[0]
    if e.size <= 0 or e.size % MV_UNIT:
        raise cx.error(f"'{opcode}': the size /n{e.size} must be a positive multiple of {MV_UNIT} long words")
    name = e.defn.name
    kinds = (s.space, d.space)
    down = s.space in ("d", "p") and d.space == "lc"
    up = s.space == "lc" and d.space in ("d", "p")
    if name == "mvp":
        if not (down or up or kinds in (("d", "p"), ("p", "d"), ("p", "p"))):
            raise cx.error(f"'{opcode}': mvp moves between $d/$p and $lc, between $p and $d, or from $p to $p")
        lc = d if down else s if up else None
        if lc is not None and lc.group is not None and lc.l2b is None:
            raise cx.error(f"'{opcode}': mvp reaches one L2BM: write '$lc<addr>@<group>.<l2b>'")
        if (s.group is None) != (d.group is None):
            raise cx.error(f"'{opcode}': name the group on both operands (one group to another), or on "
                           f"neither (every group in parallel)")
        if kinds == ("p", "p") and s.group is None:
            raise cx.error(f"'{opcode}': a PDM -> PDM mvp names both groups: '$p<addr>@<g> $p<addr>@<g>'")
    elif name in ("mvb", "mvb2", "mvb4"):
        if not down:
            raise cx.error(f"'{opcode}': {name} broadcasts from $d/$p to $lc")
        if name in ("mvb", "mvb4") and s.group is None:
            raise cx.error(f"'{opcode}': {name} broadcasts one group's memory: write '$d<addr>@<group>'")
        if d.group is not None or d.l2b is not None:
            raise cx.error(f"'{opcode}': {name} writes every target L2BM: no '@' on $lc")
    elif name == "mvd":
        if kinds in (("p", "d"), ("d", "p")):     # spread one group's PDM over the groups' DRAMs, or back
            pdm = s if kinds == ("p", "d") else d
            if pdm.group is None or (d if pdm is s else s).group is not None:
                raise cx.error(f"'{opcode}': mvd between PDM and DRAM names the PDM's group only: "
                               f"'mvd $p<addr>@<g> $d<addr>' or 'mvd $d<addr> $p<addr>@<g>'")
            return
        if not (down or up):
            raise cx.error(f"'{opcode}': mvd moves between $d/$p and $lc, or between $p@<g> and $d")
        lc = d if down else s
        if lc.group is not None or lc.l2b is not None:
            raise cx.error(f"'{opcode}': mvd spreads over a group's L2BMs: no '@' on $lc")
    else:  # mvr, mvr2
        if not up:
            raise cx.error(f"'{opcode}': {name} reduces $lc into $d/$p")
        if s.group is not None or s.l2b is not None:
            raise cx.error(f"'{opcode}': {name} reads every source L2BM: no '@' on $lc")
        if name in ("mvr", "mvr4") and d.group is None:
            raise cx.error(f"'{opcode}': {name} writes one group's memory: write '$d<addr>@<group>'")


# -- steps ------------------------------------------------------------------------------------

def _regions(op: Operand):
    return (op.space, op.width, tuple(op.addrs) if op.addrs is not None else op.base, op.tind)


def _words(op: Operand) -> set:
    n = WL[op.width]
    return {int(a) + k for a in op.addrs for k in range(n)}


_SRC_RE = re.compile(r"#\s*line\s+(\d+)")


def _src_line(raw: str) -> int:
    """The C line a compiler's '# line N' comment names: the profile attributes the step's cycles to it."""
    m = _SRC_RE.search(raw)
    return int(m.group(1)) if m else 0


def build_step(exprs: list, cx: _Ctx, masks: dict) -> Step:
    st = Step(exprs=[], line=cx.line, text=cx.text.strip(), masks=dict(masks), src=_src_line(cx.text))
    groups = []
    for e in exprs:
        g = e.defn.group
        if g == isa.L1BM and any(o.space == "lbi" for o in e.srcs):
            g = isa.L1BM_TURN      # the turnaround down-transfer; the up-transfer filling $lbi is 'l1bm'

        if g in groups:
            raise cx.error(f"two {g} expressions in one step ('{e.text}'): at most one per unit group")
        groups.append(g)
        if g == isa.NOP:
            st.nop = True
        elif g == isa.NOFORWARD:
            st.noforward = True
        elif g == isa.WAIT:
            st.wait = e.tag
        else:
            st.exprs.append(e)
    if sum(e.zflush is not None for e in st.exprs) > 1:
        raise cx.error("at most one zero-flush mask in a step")
    if st.nop and len([g for g in groups if g != isa.WAIT]) > 1:
        raise cx.error("'nop' can share a step only with 'wait'")
    mau = [e for e in st.exprs if e.defn.group in isa.MAU_GROUPS]
    if len(mau) > 2:
        raise cx.error("at most two of MAU calc / mwrite / mread can issue in one step")
    if len(mau) == 2 and mau[0].prec != mau[1].prec:
        raise cx.error("two MAU expressions in one step must have the same precision")
    mats = [o.reg for e in st.exprs for o in e.srcs + e.dsts if o.space in ("x", "y")]
    if len(mats) != len(set(mats)):
        raise cx.error("a matrix register ($lx/$ly) may appear only once in a step")
    # writes: no two expressions to the same place
    written = {}
    for e in st.exprs:
        for o in e.dsts:
            if o.space in ("m", "n", "r", "s"):
                words = _words(o) if not o.tind else {"t"}
                prev = written.setdefault(o.space, set())
                if prev & words or (o.tind and prev):
                    raise cx.error(f"two writes to ${o.space} at the same address in one step ('{o.text}')")
                prev |= words
            elif o.space in ("t", "omr"):
                key = (o.space, o.base)
                if key in written:
                    raise cx.error(f"two writes to '{o.text}' in one step")
                written[key] = True
    # LM0/LM1: read or write in a step, both only at the very same region
    for sp in ("m", "n"):
        reads = {_regions(o) for e in st.exprs for o in e.srcs if o.space == sp}
        writes = {_regions(o) for e in st.exprs for o in e.dsts if o.space == sp}
        if len(reads) > 1:
            raise cx.error(f"LM{'01'[sp == 'n']} is read at two different regions in one step")
        if reads and writes and reads != writes:
            raise cx.error(f"LM{'01'[sp == 'n']} is read and written in one step at different addresses "
                           f"(allowed only at the same region)")
    if any(e.defn.name == "imm" for e in st.exprs) and any(
            o.space == "m" for e in st.exprs for o in e.srcs + e.dsts):
        raise cx.error("'imm' cannot issue in a step that accesses LM0")
    # $lbi: the expression that fills the turnaround register runs first
    st.exprs.sort(key=lambda e: 0 if any(o.space == "lbi" for o in e.dsts) else 1)
    st.groups = tuple(groups)
    return st


# -- debug statements ------------------------------------------------------------------------------

def parse_debug(line: str, cx: _Ctx) -> DebugStmt:
    toks = line.split()
    if len(toks) < 3:
        raise cx.error("debug statement: 'd set <loc> <n> <payload>' or 'd get[d|f|h] <loc> <n>'")
    verb = toks[1]
    if verb == "set":
        if len(toks) != 5:
            raise cx.error("'d set' takes a location, a count and one payload: d set $lm0n0c0b0m0p0 1 3FF0000000000000")
        kind, dtype = "set", ""
    elif (mm := re.fullmatch(r"get(b?[dfgh])?", verb)):
        if len(toks) != 4:
            raise cx.error("'d get' takes a location and a count: d get $lm0n0c0b0m0p0 1")
        kind, dtype = "get", (mm[1] or "").lstrip("b")
    else:
        raise cx.error(f"unknown debug statement 'd {verb}' (d set, d get, d getd, d getf, d geth)")
    m = _DEBUG_LOC_RE.fullmatch(toks[2])
    if not m:
        raise cx.error(f"bad debug location '{toks[2]}': e.g. $lm0n0c0b0m0p0, $ltn0c0b0m0p0, $lb0n0c0b0")
    target = parse_operand("$" + m["mem"], cx)
    if target.space in ("x", "y"):
        raise cx.error("'d get/set' on matrix registers is not supported (docs/isa.md)")
    levels = [m[k] for k in "ncbmp"]   # a level left out means every instance of it ($lm0m0p0, as PFN's tests)
    depth = {"lb": 3, "lc": 2, "d": 1, "p": 1}.get(target.space, 5)
    if any(v is not None for v in levels[depth:]):
        raise cx.error(f"debug location '{toks[2]}' goes deeper than the memory's level")
    loc = tuple(_num(v, cx, "index", toks[2]) if v is not None else None for v in levels[:depth])
    count = _int(toks[3], cx, "count")
    if count <= 0:
        raise cx.error(f"debug count must be positive, got {count}")
    payload = None
    if kind == "set":
        p = toks[4]
        parts = p[1:].split("l") if p.startswith("l") else [p[i:i + 16] for i in range(0, len(p), 16)]
        if any(len(x) != 16 or not re.fullmatch(r"[0-9a-fA-F]{16}", x) for x in parts):
            raise cx.error("'d set' payload: one hex run of 16 digits per long word, or l<16 hex digits> each")
        if len(parts) != count:
            raise cx.error(f"'d set' count {count} does not match the payload's {len(parts)} long word(s)")
        payload = [int(x, 16) for x in parts]
    return DebugStmt(kind, dtype, target, loc, count, payload, cx.line, cx.text.strip())


def parse_raw(line: str, cx: _Ctx) -> DebugStmt:
    """'r <group> <addr> <n> <payload>': a raw DRAM input line of PFN's testcases, every field hexadecimal
    (addr in long words, payload 16 hex digits per long word).  The same as 'd set $d<addr>n<group> <n> ...'."""
    toks = line.split()
    if len(toks) != 5:
        raise cx.error("raw DRAM line: 'r <group> <addr> <n> <payload>', fields in hexadecimal")
    group = _hexnum(toks[1], cx, "group", toks[1])
    addr = _hexnum(toks[2], cx, "address", toks[2])
    count = _hexnum(toks[3], cx, "count", toks[3])
    p = toks[4]
    if count == 0 or len(p) != 16 * count or not _HEX_RE.fullmatch(p):
        raise cx.error(f"raw DRAM line: the payload must be 16 hex digits per long word ({count} long word(s))")
    target = Operand("d", f"$d{addr}", base=addr)
    return DebugStmt("set", "", target, (group,), count, [int(p[i:i + 16], 16) for i in range(0, len(p), 16)],
                     cx.line, cx.text.strip())


# -- the whole file ------------------------------------------------------------------------------------

def assemble(text: str, source: str = "<asm>") -> Program:
    """Assemble VSM text (with optional sequencer directives) into a Program."""
    cx = _Ctx(source)
    prog = Program(source=source)
    stack = [("main", prog.main, None)]      # (kind, list of nodes, node)
    block = None                             # the .block being filled, if any
    anon = None                              # the anonymous block collecting top-level statements
    masks = {}
    n_anon = 0
    decoded = {}                             # (step text, masks) -> its Step: compiled code repeats lines

    def flush():
        nonlocal anon
        anon = None

    def target_block():
        nonlocal anon, n_anon
        if block is not None:
            return block
        if anon is None:
            n_anon += 1
            anon = Block(f"_top{n_anon}", line=cx.line)
            prog.blocks[anon.name] = anon
            stack[-1][1].append(Run(anon.name, {}, cx.line))
        return anon

    for lineno, raw in enumerate(_NEWLINE_RE.split(text), 1):
        cx.line, cx.text = lineno, raw
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if line == "quit":
            break
        if line.startswith("."):
            block, masks = _directive(line, cx, prog, stack, block, flush, masks)
            continue
        tb = target_block()
        toks = line.split()
        if toks[0] == "d":
            tb.stmts.append(parse_debug(line, cx))
        elif toks[0] == "r":
            tb.stmts.append(parse_raw(line, cx))
        elif (mm := _MASKDIR_RE.fullmatch(toks[0])):
            if len(toks) != 2:
                raise cx.error("mask directive: mask[l|ll][r][s][t][m][n][k] <entry>")
            entry = _int(toks[1], cx, "mask entry")
            if not 0 <= entry <= MAX_MASK_ENTRY:
                raise cx.error(f"mask entry {entry} is outside 0..31")
            for sp in (mm["sp"] or MASK_SPACES):
                masks[sp] = entry
            masks = {k: v for k, v in masks.items() if v != 0}
        elif (mm := re.fullmatch(r"nop/(\d+)", toks[0])):
            if len(toks) != 1:
                raise cx.error("'nop/<k>' takes no operands")
            k = _num(mm[1], cx, "repeat count", toks[0], MAX_NOP_REPEAT)
            if k <= 0:
                raise cx.error("'nop/<k>' needs k >= 1")
            for _ in range(k):
                tb.stmts.append(Step([], lineno, raw.strip(), dict(masks), nop=True, groups=(isa.NOP,),
                                     src=_src_line(raw)))
        elif toks[0].startswith("mv"):
            if ";" in line:
                raise cx.error("an MV statement stands alone on its line")
            e = parse_expr(line, cx)
            if e.defn.group != isa.MV:
                raise cx.error(f"unknown MV instruction '{toks[0]}'")
            tb.stmts.append(MVStmt(e, lineno, raw.strip()))
        else:
            key = (line, tuple(masks.items()))
            if (st := decoded.get(key)) is None:
                st = decoded[key] = _decode_step(line, cx, masks)
            tb.stmts.append(replace(st, line=lineno, text=raw.strip(), masks=dict(masks), src=_src_line(raw)))
    if block is not None:
        cx.line, cx.text = block.line, ""
        raise cx.error(f"'.block {block.name}' has no '.endblock'")
    if len(stack) > 1:
        kind, _, node = stack[-1]
        cx.line, cx.text = node.line, node.text
        raise cx.error(f"'.{kind}' has no matching '.end{kind}'")
    _check_calls(prog.main, prog, cx)
    for b in prog.blocks.values():
        alias_forwarding(b)
    return prog


def _decode_step(line: str, cx: _Ctx, masks: dict) -> Step:
    """The Step of one line of expressions (the line's comment already removed)."""
    parts = [p.strip() for p in line.split(";")]
    if any(not p for p in parts[:-1]) or not parts[0]:
        raise cx.error("empty expression in a step")
    exprs = [parse_expr(p, cx) for p in parts if p]
    if any(e.defn.group == isa.MV for e in exprs):
        raise cx.error("an MV statement stands alone on its line")
    st = build_step(exprs, cx, masks)
    if st.wait is not None and not st.exprs and not st.nop:
        st.nop = True          # 'wait i1' alone: a nop step that waits (extension)
    return st


def _push(stack: list, frame: tuple, cx: _Ctx):
    if len(stack) > MAX_NESTING:
        raise cx.error(f"'.{frame[0]}' nested more than {MAX_NESTING} deep")
    stack.append(frame)


_DIRECTIVE_RE = re.compile(r"\.(?P<d>\w+)\s*(?P<rest>.*)")


def _directive(line, cx, prog, stack, block, flush, masks):
    m = _DIRECTIVE_RE.fullmatch(line)
    d, rest = (m["d"], m["rest"].strip()) if m else ("", "")
    nodes = stack[-1][1]
    if d == "block":
        if block is not None:
            raise cx.error(f"'.block' inside '.block {block.name}'")
        if len(stack) > 1:
            raise cx.error("'.block' must be at the top level, outside loops and branches")
        if not re.fullmatch(r"[A-Za-z_]\w*", rest):
            raise cx.error("'.block <name>': a block needs a name")
        if rest in prog.blocks:
            raise cx.error(f"block '{rest}' is defined twice")
        flush()
        b = Block(rest, line=cx.line)
        prog.blocks[rest] = b
        return b, {}
    if d == "endblock":
        if block is None:
            raise cx.error("'.endblock' without '.block'")
        return None, {}
    if block is not None:
        raise cx.error(f"'.{d}' inside '.block {block.name}': blocks are straight-line code")
    flush()
    if d == "arg":
        for a in rest.replace(",", " ").split():
            if not re.fullmatch(r"%[A-Za-z_]\w*", a):
                raise cx.error(f"'.arg': bad argument name '{a}' (write %name)")
            prog.args.append(a[1:])
    elif d == "set":
        mm = re.fullmatch(r"%([A-Za-z_]\w*)\s*=\s*(.+)", rest)
        if not mm:
            raise cx.error("'.set %reg = <expr>'")
        nodes.append(SetReg(mm[1], compile_scalar(mm[2], cx.line, cx.source, cx.text), cx.line, line))
    elif d == "fault":
        mm = re.fullmatch(r'"(.*)"', rest)
        if not mm:
            raise cx.error("'.fault \"<message>\"'")
        nodes.append(Fault(mm[1], cx.line, line))
    elif d == "call":
        toks = rest.split()
        if not toks:
            raise cx.error("'.call <block> [space=<expr> ...]'")
        offsets = {}
        for t in toks[1:]:
            mm = re.fullmatch(r"(\w+)\s*=\s*(.+)", t)
            if not mm or mm[1] not in OFFSET_SPACES:
                raise cx.error(f"'.call': bad offset '{t}' (spaces: {', '.join(OFFSET_SPACES)})")
            offsets[mm[1]] = compile_scalar(mm[2], cx.line, cx.source, cx.text)
        nodes.append(Run(toks[0], offsets, cx.line, line))
    elif d == "loop":
        mm = re.fullmatch(r"%([A-Za-z_]\w*)\s*=\s*([^,]+),([^,]+)(?:,(.+))?", rest)
        if mm:
            node = Loop(mm[1], compile_scalar(mm[2], cx.line, cx.source, cx.text),
                        compile_scalar(mm[3], cx.line, cx.source, cx.text),
                        compile_scalar(mm[4] or "1", cx.line, cx.source, cx.text), [], cx.line, line)
        elif rest:
            node = Loop("_", compile_scalar("0"), compile_scalar(rest, cx.line, cx.source, cx.text),
                        compile_scalar("1"), [], cx.line, line)
        else:
            raise cx.error("'.loop %i = <start>, <stop>[, <step>]' or '.loop <count>'")
        nodes.append(node)
        _push(stack, ("loop", node.body, node), cx)
    elif d == "endloop":
        _pop(stack, "loop", cx)
    elif d in ("if", "while"):
        mm = re.fullmatch(r"any\s+\$imr(\d+)", rest)
        if mm:
            entry = _num(mm[1], cx, "mask entry", rest, MAX_MASK_ENTRY)
            if not 1 <= entry <= 15:
                raise cx.error(f"'.{d} any $imr{entry}': mask entries 1..15 hold flags")
            node = (IfAny(entry, [], [], cx.line, line) if d == "if" else AnyLoop(entry, [], cx.line, line))
        elif d == "if" and rest:
            node = If(compile_scalar(rest, cx.line, cx.source, cx.text), [], [], cx.line, line)
        else:
            raise cx.error(f"'.{d} any $imr<k>'" + (" or '.if <expr>'" if d == "if" else ""))
        nodes.append(node)
        _push(stack, (d, node.then if d == "if" else node.body, node), cx)
    elif d == "else":
        kind, _, node = stack[-1]
        if kind != "if" or getattr(node, "_else", False):
            raise cx.error("'.else' without '.if'")
        node._else = True
        stack[-1] = ("if", node.orelse, node)
    elif d == "endif":
        _pop(stack, "if", cx)
    elif d == "endwhile":
        _pop(stack, "while", cx)
    else:
        raise cx.error(f"unknown directive '.{d}' (docs/isa.md, 'Programs and the sequencer')")
    return None, masks


def _pop(stack, kind, cx):
    if stack[-1][0] != kind:
        raise cx.error(f"'.end{kind}' without '.{kind}'")
    stack.pop()


def _check_calls(nodes, prog, cx):
    for n in nodes:
        if isinstance(n, Run) and n.block not in prog.blocks:
            cx.line, cx.text = n.line, n.text
            raise cx.error(f"'.call {n.block}': no such block")
        for sub in ("body", "then", "orelse"):
            if hasattr(n, sub):
                _check_calls(getattr(n, sub), prog, cx)


_PLAIN = ("m", "n", "r", "s")
_PATH_OF = {g: isa.FORWARD_PATH[g] for g in (isa.ALU, isa.MAU_CALC)}     # (paths of results a PE memory holds)


def alias_forwarding(block) -> None:
    """Reads of $aluf / $mauf that name, in effect, a register: where the step before, in the same
    block, is the producer's and wrote its result whole into one long-word PE-memory operand (no
    mask, no base address moved in that step, a different location each cycle or a cycle-uniform
    producer), that operand holds what the path holds.  The read then takes it from there (an
    Operand with ``via`` set: the executor binds it like any plain operand and reports no memory
    read, so the hazard checks see a forwarding read): compiled code's forwarding costs what a
    register read does.  A reader with a two-long-word operand keeps the path (it reads the path's
    second long word, zeros).  Steps are copied, not changed: decoded steps are shared."""
    stmts = block.stmts
    for i in range(1, len(stmts)):
        st, prev = stmts[i], stmts[i - 1]
        if not isinstance(st, Step) or not isinstance(prev, Step) or not prev.exprs or prev.noforward:
            continue
        if not any(o.space in _PATH_OF.values() and o.via is None for e in st.exprs for o in e.srcs):
            continue
        dest = {}
        for e in prev.exprs:
            path = _PATH_OF.get(e.defn.group)
            d = _whole_destination(e, prev)
            if path and d is not None and not any(_moves(d, o) for f in prev.exprs if f is not e for o in f.dsts):
                dest[path] = d
        if not dest:
            continue
        exprs = []
        for e in st.exprs:
            if any(o.width == "ll" for o in e.srcs + e.dsts if o.space in _PLAIN):
                exprs.append(e)           # (a path is read as two long words: a second one of zeros)
                continue
            srcs = [replace(dest[o.space], text=o.text, neg=o.neg, mod=o.mod, via=o.space, cache=None)
                    if o.space in dest and o.via is None else o for o in e.srcs]
            exprs.append(replace(e, srcs=srcs) if any(a is not b for a, b in zip(srcs, e.srcs)) else e)
        stmts[i] = replace(st, exprs=exprs, plans=None)


def _whole_destination(e, step):
    """e's one PE-memory destination if e writes it whole, as the forwarding path holds e's result
    (see alias_forwarding), else None."""
    mem = [o for o in e.dsts if o.space in _PLAIN]
    if len(mem) != 1 or any(o.space not in _PLAIN + ("omr",) for o in e.dsts) or e.zflush is not None:
        return None
    d = mem[0]
    if d.width != "l" or d.mask or step.masks.get(d.space) or d.tind or d.madpe is not None or d.addrs is None:
        return None
    return d if len({int(x) for x in d.addrs}) == 4 or isa.cycle_uniform(e) else None


def _moves(d, o) -> bool:
    """Whether destination o of another expression of the step moves the words d names: a
    base-address write (every later LM0 / LM1 address adds it).  (Two writes that may overlap in
    one step are an assembly error, build_step.)"""
    return (o.space, d.space) in (("mb", "m"), ("nb", "n"))
