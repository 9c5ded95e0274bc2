"""verify(): an ops tree checked against the ISA table between backend passes, so a bad op is a
compile error naming its C line (Op.line) instead of an assembler error, or a wrong result, later.

compile_kernel runs it after every pass of PIPELINE when the environment variable
MNCL_VERIFY_BACKEND=1 is set (tests/test_backend_passes.py compiles kernels so).  What it checks
grows with what the passes have decided:

* always: an op's operands are VRegs (values) and MaskRegs (masks), its template is an
  instruction of the table in its unit (ops.template_error), its fixed locations (mem) are
  (r|w, space, lo, hi) with a known space and lo < hi; a control node's mask is a MaskReg;
* once allocated: every value and mask has a location the machine has (target.Registers), and the
  op with its locations filled in is an instruction (a spilled value where the ISA takes no LM
  operand is not);
* once scheduled: each step keeps the unit-group rules (the assembler's build_step: one expression
  per group, LM0 and LM1 at one region each, no imm with LM0), each read comes at least GAP steps
  after the write it reads (target.GAP) and a block's last writes settle before it ends.
"""
from __future__ import annotations

import os

from .ops import BadOp, MaskReg, Op, VReg, render, template_error
from .schedule import Block, merge_only
from .target import GAP, WORDS_PER_REGISTER, Registers, instruction_error, step_error

ENV = "MNCL_VERIFY_BACKEND"


def enabled() -> bool:
    """Whether compile_kernel verifies after every pass (MNCL_VERIFY_BACKEND set, and not 0)."""
    return os.environ.get(ENV, "0") not in ("", "0")


def verify(tree: list, alloc: dict | None = None, regs: Registers | None = None, after: str = "") -> None:
    """Raise BadOp (with the offending op's C line) where the tree breaks a rule above; `alloc`
    once registers are allocated, `regs` what the machine has."""
    where = f"verify after {after}: " if after else "verify: "

    def walk(items):
        for it in items:
            if isinstance(it, Op):
                _op(it, alloc, regs, where)
            elif isinstance(it, Block):         # _block parses each op with its locations
                for step in it.steps:
                    for op in step:
                        _op(op, alloc, regs, where, rendered=False)
                _block(it, alloc, where)
            else:
                mask = getattr(it, "mask", None)
                if mask is not None and not isinstance(mask, MaskReg):
                    raise BadOp(f"{where}{type(it).__name__} tests {mask!r}, not a mask register")
                for attr in ("body", "then", "orelse"):
                    walk(getattr(it, attr, ()))
    walk(tree)


def _op(op: Op, alloc, regs, where: str, rendered: bool = True) -> None:
    def bad(msg):
        raise BadOp(f"{where}'{op.text}' ({op.unit}, line {op.line}): {msg}", op.line)
    for kind, regs_of, names in ((VReg, op.dsts + op.srcs, "destinations and sources"),
                                 (MaskReg, op.mdst + op.msrc, "mask operands")):
        if not all(isinstance(r, kind) for r in regs_of):
            bad(f"its {names} must be {kind.__name__}s, got {regs_of}")
    why = template_error(op.text, op.unit, len(op.dsts), len(op.srcs), len(op.msrc), len(op.mdst))
    if why:
        bad(why)
    for m in op.mem:
        if len(m) != 4 or m[0] not in ("r", "w") or m[1] not in GAP or not m[2] < m[3]:
            bad(f"fixed location {m} is not (r|w, one of {', '.join(GAP)}, lo, hi) with lo < hi")
    if alloc is None:
        return
    for r in op.dsts + op.srcs + op.mdst + op.msrc:
        if r not in alloc:
            bad(f"{r!r} has no location")
        if regs is not None and not _fits(alloc[r], r, regs):
            bad(f"{r!r} is at {alloc[r]}, which the machine does not have")
    why = rendered and instruction_error(render(op, alloc), op.unit)
    if why:
        bad(f"as '{render(op, alloc)}': {why}")


def _fits(loc, r, regs: Registers) -> bool:
    if isinstance(r, MaskReg):
        return loc in regs.masks
    sp, k = loc
    if sp in ("r", "s"):
        return 0 <= k < regs.grf
    lo, hi = (regs.lm1_from, regs.lm1_top) if sp == "n" else (0, regs.lm_words)
    return sp in ("n", "m") and lo <= WORDS_PER_REGISTER * k and WORDS_PER_REGISTER * (k + 1) <= hi


def _block(block: Block, alloc, where: str) -> None:
    """The step rules and the hazards of one scheduled block."""
    def key(r):
        return ("mask", alloc[r]) if isinstance(r, MaskReg) else alloc[r]

    def gap(r):
        return 1 if isinstance(r, MaskReg) else GAP[alloc[r][0]]

    def bad(t, msg, ops):
        line = next((o.line for o in ops if o.line), 0)
        raise BadOp(f"{where}step {t} of a block ({'; '.join(o.text for o in ops)}): {msg}", line)
    written, mem_written = {}, []       # location -> (step, gap); [(step, space, lo, hi)] of recent writes
    for t, step in enumerate(block.steps):
        why = step_error(tuple(render(o, alloc) for o in step))
        if why:
            bad(t, why, step)
        mem_written = [w for w in mem_written if t - w[0] < GAP[w[1]]]
        for op in step:
            for k, r in enumerate(op.srcs + op.msrc):
                w = written.get(key(r))
                if w is not None and t - w[0] < gap(r) and not merge_only(op, k):
                    bad(t, f"reads {r!r} at {alloc[r]} {t - w[0]} step(s) after its write; the machine needs "
                           f"{gap(r)}", [op])
            for kind, sp, lo, hi in op.mem:
                if kind == "r" and any(s == sp and a < hi and lo < b for _, s, a, b in mem_written):
                    bad(t, f"reads {sp} words {lo}..{hi - 1} fewer than {GAP[sp]} steps after a write", [op])
        for op in step:
            for r in op.dsts + op.mdst:
                written[key(r)] = (t, gap(r))
            mem_written += [(t, sp, lo, hi) for kind, sp, lo, hi in op.mem if kind == "w"]
    n = len(block.steps)
    late = [(loc, t) for loc, (t, g) in written.items() if n - t < g] + \
        [((sp, lo, hi), t) for t, sp, lo, hi in mem_written if n - t < GAP[sp]]
    if late and not block.open:         # (an open block's are schedule.trim_pads' to check)
        loc, t = late[0]
        bad(t, f"the block ends before the write of {loc} settles", block.steps[t])
