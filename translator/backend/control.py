"""Control flow and predication: blocks in one linear order under their predicates, phis as
selects, loops as ``.while any`` or sequencer-counted loops, values leaving a loop captured per
lane, and pointer registers that may point into several buffers (MixedPointer).

Every block has a predicate (the lanes that run it); all blocks run in one linear order
(if-conversion), phis become selects on the incoming edges' predicates, stores are masked
writes.  A loop runs as ``.while any`` on its lanes' mask: lanes leave at their exits, values
that escape the loop are captured per lane as they leave.  Every loop pays the any-reduction up
the tree, so even uniform loops are correct without a uniformity proof; a loop whose trip count
the sequencer knows runs as a sequencer loop (counted_loop).
"""
from __future__ import annotations

import re
from dataclasses import replace

from . import idforms, irtypes
from .irread import _VEC, Const, Inst
from .ops import MaskReg, SeqIf, SeqLoop, SeqSet, VReg, WhileAny
from .emitter import CodegenError
from .memory import GATHER_BATCH
from .seqexpr import register
from .values import KINDS, Val, aff_add


class MixedPointer(Exception):
    """A pointer register living across a loop (a header phi, a capture) is given a pointer into
    another buffer than it was made for (`p = c ? a : b` carried around a loop, LLVM's load of a
    phi of `&sums[g]` and `&local_carry`): codegen starts again with the buffers of the IR value
    `name` known, so its register is one offset per buffer and the bools choosing among them
    (Control.persistent, set_multi_ptr)."""
    def __init__(self, name: str, bases: list, line=0):
        super().__init__(name)
        self.name, self.bases, self.line = name, bases, line

    def learn(self, known: dict) -> dict:
        """known (IR value name -> bases) with these bases added; a CodegenError if nothing is new."""
        old = known.get(self.name, [])
        new = list(dict.fromkeys(old + self.bases))
        if new == old:
            raise CodegenError("a pointer into one of several buffers is not supported here", self.line)
        return {**known, self.name: new}


_SWAP = {"sgt": "slt", "slt": "sgt", "sge": "sle", "sle": "sge", "ugt": "ult", "ult": "ugt", "uge": "ule",
         "ule": "uge"}                      # a compare with its operands swapped


class Control:
    """Blocks, predicates, phis and loops."""

    def __init__(self, em):
        self.em = em

    def exit_test(self, h, blocks):
        """(the block that leaves, [the latch], the compare it leaves on, whether it leaves when the
        compare holds) for loop h with one exit and one latch, leaving on an integer compare, else
        None."""
        em = self.em
        exits = [(n, s_) for n in blocks for s_ in em.succ[n] if s_ not in blocks]
        latches = [p_ for p_ in em.preds[h] if p_ in blocks]
        if len(exits) != 1 or len(latches) != 1:
            return None
        src, dst = exits[0]
        t = em.bmap[src].insts[-1]
        if t.op != "br" or len(em.succ[src]) != 2 or not isinstance(t.ops[0], Inst) or t.ops[0].op != "icmp":
            return None
        cmp, exit_on_true = t.ops[0], em.succ[src][0] == dst
        z = cmp.ops[0]
        if cmp.pred in ("ne", "eq") and isinstance(cmp.ops[1], Const) and cmp.ops[1].value == 0 \
                and isinstance(z, Inst) and z.op == "zext" and isinstance(z.ops[0], Inst) and z.ops[0].op == "icmp":
            cmp, exit_on_true = z.ops[0], exit_on_true == (cmp.pred == "ne")     # -O0's (c != 0) wrapper
        return src, latches, cmp, exit_on_true

    def counted_loop(self, h, blocks, phis):
        """(trip count expression, counter phi, its start, the IR value of its bound) for a loop the
        sequencer can run, or None.

        The loop must leave only where its counter, stepped by 1 from a start the sequencer
        knows, meets a bound the sequencer knows: then every lane runs the same iterations."""
        em = self.em
        test = self.exit_test(h, blocks)
        if test is None:
            return None
        _, latches, cmp, exit_on_true = test
        pred = cmp.pred
        a, b = cmp.ops
        for iv in phis:
            blk = [blk for blk in iv.phi_blocks if blk not in blocks]
            if len(blk) != 1:
                continue
            start = em.values.seq_expr(iv.ops[iv.phi_blocks.index(blk[0])])
            step = iv.ops[iv.phi_blocks.index(latches[0])] if latches[0] in iv.phi_blocks else None
            if start is not None and self.geometric(step, iv) and iv.type == "i32":
                got = self.geometric_trips(iv, step, blk[0], start, a, b, pred, exit_on_true)
                if got:
                    return got
                continue
            if start is None or not (isinstance(step, Inst) and step.op == "add" and step.ops[0] is iv
                                     and isinstance(step.ops[1], Const) and step.ops[1].value == 1):
                continue
            for x, bound, sw in ((a, b, False), (b, a, True)):
                if x is not step and x is not iv:
                    continue
                bexpr = em.values.seq_expr(bound)
                if bexpr is None:
                    continue
                pr = {"sgt": "slt", "ugt": "ult", "slt": "sgt", "ult": "ugt", "sge": "sle", "uge": "ule",
                      "sle": "sge", "ule": "uge"}.get(pred, pred) if sw else pred
                stay, leave = ("ne", "slt", "ult", "sle", "ule"), ("eq", "sge", "uge", "sgt", "ugt")
                if pr not in (leave if exit_on_true else stay):
                    continue       # the loop would stay while the counter is past the bound
                n = f"({bexpr}) - ({start})"
                if pr in ("sle", "ule", "sgt", "ugt"):      # an inclusive bound: i <= n
                    n = f"({n}) + 1"
                if x is iv:        # the test precedes the step: one more pass that only leaves
                    n = f"({n}) + 1"
                return f"({n} if {n} > 1 else 1)", iv, start, bound, None
        return None

    def skewed_loop(self, h, blocks, phis):
        """counted_loop's answer for a loop whose counter starts at the global id plus a uniform
        part and steps by 1 while below a bound the sequencer knows, entered only by lanes whose
        start is below it (a triangular loop, `for (j2 = j1; j2 < m; j2++)`, and the guard LLVM
        puts before it): the sequencer runs the counter c from the wave's least start, and lane x
        of the wave (its start the least + x, x = em.sx) joins the loop at pass x, when c is its
        start, so the counter is c in every lane that runs a pass and its indices are broadcasts or
        contiguous accesses, not gathers.  Until it joins, a lane only waits: it runs nothing and
        keeps its registers (emit_loop's ready flags).  Every lane leaves when c reaches the bound,
        having run its own passes in order, each once.  1-D builds only, where em.sx is the lane's
        place in the wave."""
        em = self.em
        test = self.exit_test(h, blocks) if em.one_d and em.rows is None else None
        if test is None:
            return None
        src, latches, cmp, exit_on_true = test
        for iv in phis:
            entry = [v for blk, v in zip(iv.phi_blocks, iv.ops) if blk not in blocks]
            step = iv.ops[iv.phi_blocks.index(latches[0])] if latches[0] in iv.phi_blocks else None
            if iv.type != "i32" or len(entry) != 1 or not (
                    isinstance(step, Inst) and step.op == "add" and step.ops[0] is iv
                    and isinstance(step.ops[1], Const) and step.ops[1].value == 1):
                continue
            v = em.vals.get(entry[0]) if isinstance(entry[0], Inst) else None
            aff = em.values.affine(v, entry[0]) if v is not None and v.kind == "i32" else None
            if aff is None or aff[0] != 1:
                continue
            for x, bound, sw in ((cmp.ops[0], cmp.ops[1], False), (cmp.ops[1], cmp.ops[0], True)):
                b = em.values.seq_expr(bound)
                top = x is iv and src == h              # tested before the body
                if b is None or not (top or x is step and src == latches[0]):
                    continue
                pr = _SWAP.get(cmp.pred, cmp.pred) if sw else cmp.pred
                if exit_on_true:      # the test that keeps the lane in the loop
                    pr = {"sge": "slt", "sgt": "sle", "eq": "ne"}.get(pr)
                if pr not in ("slt", "sle", "ne") or not self.entered_below(h, entry[0], bound, pr == "sle"):
                    continue
                # the lanes stay while their counter (tested before the body) or the next one
                # (after it) is below the bound: the last pass is c = bound (bound - 1)
                b = f"({b}) + 1" if pr == "sle" else b
                lo = em.bounds.wave_extent(aff)[0]
                n = f"({b}) - ({lo})" + (" + 1" if top else "")
                return f"({n} if {n} > 1 else 1)", iv, lo, bound, None
        return None

    def entered_below(self, h, start, bound, inclusive: bool) -> bool:
        """Whether loop h runs only in lanes where start < bound (<= for inclusive): a branch on
        that compare dominates it (the guard LLVM's loop rotation leaves before a `for`)."""
        em = self.em
        if em.dominators is None:
            em.dominators = idforms.dominators(em.rpo, em.preds)
        for d in em.dominators.get(h, ()):
            ps = [p_ for p_ in em.preds.get(d, []) if p_ not in em.loops[h]]     # (not h's back edge)
            br = em.bmap[ps[0]].insts[-1] if len(ps) == 1 else None
            if br is None or br.op != "br" or len(em.succ[ps[0]]) != 2 or em.succ[ps[0]][0] == em.succ[ps[0]][1] \
                    or not isinstance(br.ops[0], Inst) or br.ops[0].op != "icmp":
                continue
            c = br.ops[0]
            if c.ops[0] is start and c.ops[1] is bound:
                pred = c.pred
            elif c.ops[1] is start and c.ops[0] is bound:
                pred = _SWAP.get(c.pred, c.pred)
            else:
                continue
            if d != em.succ[ps[0]][0]:
                pred = idforms.NEGATE.get(pred)
            if pred == "slt" or inclusive and pred == "sle":
                return True
        return False

    @staticmethod
    def geometric(step, iv):
        """(">>" or "<<", bits) when `step` halves or doubles the counter iv by a power of two each
        pass (a work-group tree's `span /= 2`, `d *= 2`), else None."""
        if not (isinstance(step, Inst) and len(step.ops) == 2 and step.ops[0] is iv and isinstance(step.ops[1], Const)
                and type(step.ops[1].value) is int and step.ops[1].value > 0):
            return None
        c = step.ops[1].value
        if step.op in ("lshr", "ashr", "shl") and c < 31:
            return (">>" if step.op != "shl" else "<<"), c
        if step.op in ("sdiv", "udiv", "mul") and c & (c - 1) == 0 and c > 1:
            return (">>" if step.op != "mul" else "<<"), c.bit_length() - 1
        return None

    def geometric_trips(self, iv, step, entry, start, a, b, pred, exit_on_true):
        """counted_loop's answer for a halving counter that stays while above a constant bound
        (`for (s = n / 2; s > 0; s >>= 1)`), or a doubling one from a positive constant that stays
        while below a bound the sequencer knows (`for (d = 1; d < n; d *= 2)`): the passes are
        counted by summing the tests of the counter's values over every power of two an i32 can
        take, and the counter is `start >> (bits * pass)` (`<<`) in the body."""
        em = self.em
        way, bits = self.geometric(step, iv)
        init = iv.ops[iv.phi_blocks.index(entry)]
        for x, bound, sw in ((a, b, False), (b, a, True)):
            if isinstance(x, Inst) and x.op in ("sext", "zext") and x.ops[0] in (step, iv):
                x = x.ops[0]          # (an i64 test of the counter: the counter's values fit i32)
            if x is not step and x is not iv:
                continue
            pr = {"sgt": "slt", "ugt": "ult", "slt": "sgt", "ult": "ugt", "sge": "sle", "uge": "ule",
                  "sle": "sge", "ule": "uge"}.get(pred, pred) if sw else pred
            if exit_on_true:      # the test that keeps the loop going
                pr = {"eq": "ne", "ne": "eq", "sgt": "sle", "ugt": "ule", "slt": "sge", "ult": "uge",
                      "sge": "slt", "uge": "ult", "sle": "sgt", "ule": "ugt"}[pr]
            first = 0 if x is iv else 1                  # the tested value is pass p's counter, or the next
            vals = [f"(({start}) {way} {bits * (p + first)})" for p in range(31 // bits + 1)]
            if way == ">>":
                # the values fall to 0 and stay there: only from a start that is not negative
                # (an ashr or sdiv of a negative one never reaches 0), with a bound of 0 or more
                c = bound.value if isinstance(bound, Const) and type(bound.value) is int else None
                if not em.values.small(init) or c is None:
                    continue
                floor = {"ne": 0 if c == 0 else None, "sgt": c, "ugt": c, "sge": c - 1, "uge": c - 1}.get(pr)
                if floor is None or floor < 0:
                    continue
                stays = [f"({v} > {floor})" for v in vals]
            else:
                # the values rise from a positive constant; the bound is one the sequencer knows
                e = em.values.seq_expr(bound)
                if not (isinstance(init, Const) and type(init.value) is int and init.value > 0) or e is None \
                        or pr not in ("slt", "ult", "sle", "ule") or pr[0] == "u" and not em.values.small(bound):
                    continue      # (an unsigned test against a negative bound would run on past 2^31)
                op = "<" if pr in ("slt", "ult") else "<="
                stays = [f"({v} {op} ({e}))" for v in vals]
            n = f"(1 + {' + '.join(stays)})"
            return n, iv, start, None, lambda r: f"(({start}) {way} ({bits} * {r}))"
        return None

    def pass_ivs(self, h, blocks, phis):
        """(pass counter, uniform phis, {phi: affine form}) for a loop that runs until no lane is
        left: its header phis that step by a uniform amount (a constant, or one the sequencer
        knows: a grid-stride loop's get_global_size(0)) on the one back edge.  Every lane still in
        the loop in pass t entered with the others and took the back edge t times, so such a phi
        is start + t * step in every lane that runs the pass.  One that starts at a value the
        sequencer knows becomes a sequencer expression in the loop (its index then moves no more
        than one element), not after it; one that starts at an affine form in the global id
        (`for (i = gid; i < n; i += get_global_size(0))`) keeps its register but gets the form
        start + t * step in the loop, so `in[i]` is a shifted contiguous load, not a gather."""
        em = self.em
        latches = [b for b in em.preds[h] if b in blocks]
        if len(latches) != 1:
            return None
        found = []                      # (phi, its start: a sequencer expression or an affine form, its step)
        for iv in phis:
            nxt = iv.ops[iv.phi_blocks.index(latches[0])] if latches[0] in iv.phi_blocks else None
            if not (isinstance(nxt, Inst) and nxt.op in ("add", "sub") and nxt.ops[0] is iv):
                continue
            step = em.values.seq_expr(nxt.ops[1])
            entries = [v for blk, v in zip(iv.phi_blocks, iv.ops) if blk not in blocks]
            if step is None or len(entries) != 1:
                continue
            c = nxt.ops[1]
            if isinstance(c, Const):
                step = f"({c.value * (1 if nxt.op == 'add' else -1)})"
            else:
                step = f"({step})" if nxt.op == "add" else f"(-({step}))"
            start = em.values.seq_expr(entries[0])
            if start is None and isinstance(entries[0], Inst) and em.vals.get(entries[0]) is not None \
                    and em.vals[entries[0]].kind == "i32":
                start = em.values.affine(em.vals[entries[0]], entries[0])
            if start is not None:
                found.append((iv, start, step))
        if not found:
            return None
        t = em.seq_reg("t")
        em.pass_counters.add(t)
        forms, parts = {}, {}
        for iv, start, step in found:
            if isinstance(start, str):
                em.seq_ivs[iv] = f"(({start}) + {step} * {t})"
            else:
                forms[iv] = aff_add(start, (0, 0, f"{step} * {t}"))
                parts[iv] = start, step
        return t, [iv for iv, start, _ in found if isinstance(start, str)], forms, parts

    def grid_passes(self, h, blocks, passes):
        """A sequencer expression of the passes of a loop that runs until no lane is left
        (pass_ivs) and leaves only where an index of pass_ivs' form start(gid) + t * step (a
        grid-stride loop, `for (i = gid; i < n; i += get_global_size(0))`) reaches a bound the
        sequencer knows, in a 1-D launch, step a positive constant or the global size: the lane
        with the least start runs the most passes, so they cover every lane (a pass with every
        lane gone changes nothing) and the loop can run on the sequencer, without an
        any-reduction per pass and with its shifted loads pipelined (colplan.py).  None
        otherwise."""
        em = self.em
        test = self.exit_test(h, blocks) if em.one_d else None
        if test is None:
            return None
        _, _, cmp, exit_on_true = test
        _, _, forms, parts = passes
        for x, bound, sw in ((cmp.ops[0], cmp.ops[1], False), (cmp.ops[1], cmp.ops[0], True)):
            iv = x if x in forms else x.ops[0] if isinstance(x, Inst) and x.op == "add" and x.ops[0] in forms else None
            b = em.values.seq_expr(bound)
            if iv is None or b is None:
                continue
            pred = {"sgt": "slt", "slt": "sgt", "sge": "sle", "sle": "sge"}.get(cmp.pred, cmp.pred) if sw else cmp.pred
            # the lane goes on while x < b (x <= b: while x < b + 1)
            if pred not in (("sge", "sgt") if exit_on_true else ("slt", "sle")):
                continue
            start, step = parts[iv]
            if x is not iv and em.values.seq_expr(x.ops[1]) != em.values.seq_expr(
                    iv.ops[iv.phi_blocks.index(next(p_ for p_ in em.preds[h] if p_ in blocks))].ops[1]):
                continue           # x is iv plus something else than its step
            if not re.fullmatch(r"\((\d+|%g[xyz])\)", step) or step == "(0)":
                continue           # a step not known to be positive (a constant, the global size)
            if pred in ("sgt", "sle"):
                b = f"({b}) + 1"
            lo = em.bounds.wave_extent(start)[0]
            n = f"((({b}) - ({lo}) + {step} - 1) / {step} if ({b}) - ({lo}) > 0 else 0)"
            # tested after the step: a lane that entered runs at least one pass; before it: one
            # more pass that only leaves
            return f"({n} if {n} > 1 else 1)" if x is not iv else f"{n} + 1"
        return None

    def in_loop(self, n, h):
        em = self.em
        return h is None or n in em.loops[h]

    def emit_region(self, names, header):
        em = self.em
        done = set()
        for n in names:
            if n in done:
                continue
            if n in em.loops and n != header:
                body = [m for m in names if m in em.loops[n]]
                self.emit_loop(n, body)
                done.update(body)
                continue
            self.emit_block(n)
            done.add(n)

    def contribute(self, src, dst, p):
        em = self.em
        em.edge[(src, dst)] = p
        ctx = em.loop_stack[-1] if em.loop_stack else None
        if ctx is not None and dst == ctx["header"]:
            ctx["next"] = p if ctx["next"] is None else em.b_or(ctx["next"], p)
            return
        if ctx is not None and dst not in em.loops[ctx["header"]]:
            # leaving the loop: accumulate the lanes that took this exit, capture phi inputs
            ex = ctx["exits"][(src, dst)]
            em.alu("ior", ex, p, dst=ex)
            bottom = ctx["bottom"]
            if bottom and (src, dst) == (bottom["src"], bottom["dst"]):
                em.kept_equal(ex, p)       # (its one exit, taken once: in the last pass)
            get = em.values.raw if ctx["lazy"] else em.values.val      # a lazy loop settles after it (nans.py)
            settled = set(em.settled)
            for phi, cap in ctx["phicaps"].get((src, dst), []):
                v = get(phi.ops[phi.phi_blocks.index(src)])
                self.capture(cap, v, p)
            if ctx["bottom"]:                # a counted loop's exit runs in its last pass only: what it
                em.settled = settled       # settled is still unsettled in the other passes (nans.py)
            return
        em.acc[dst] = p if dst not in em.acc else em.either(em.acc[dst], p)

    def capture(self, cap: Val, v: Val, p: VReg):
        em = self.em
        if v.kind == "vec":                  # element by element (64-bit elements take two registers)
            for c, e in zip(em.values.elems(cap), em.values.elems(v)):
                self.capture(c, e, p)
            return
        if v.kind == "ptr":
            if self.is_multi_ptr(cap):
                return self.set_multi_ptr(cap, v, p)
            self.check_same_buffer(cap, v)
            src = [em.memory.carried_off(v)]
            dst = cap.off.regs
        else:
            src, dst = v.regs, cap.regs
        if len(dst) == 1:
            em.masked_copy(src[0], dst[0], em.mask_of(p))
        else:
            hi, lo = em.widen_bool(p)
            for cc, s, d in ((hi, src[0], dst[0]), (lo, src[1], dst[1])):
                em.masked_copy(s, d, em.flags("lnot", cc))

    def persistent(self, ty, name: str = None) -> Val:
        """A register set that lives across a loop (phis, captures) for IR value `name`.  A pointer
        takes its buffer from the first value assigned to it, or, when an earlier attempt found it
        holds pointers into several (MixedPointer), is one offset register per buffer under bools
        choosing among them: a nested ("either", c, A, B) as a select of two pointers makes."""
        em = self.em
        k = em.values.kind_of(ty)
        if k == "vec" and irtypes.is_aggregate(ty):
            return em.values.make_vec([self.persistent(lt) for lt, _ in em.values.leaves(ty)])
        if k == "vec":
            m = _VEC.fullmatch(ty)
            return em.values.make_vec([self.persistent(m.group(2).strip()) for _ in range(int(m.group(1)))])
        if k == "ptr":
            bases = em.ptr_bases.get(name, [None])
            reg = Val("ptr", base=bases[-1], off=Val("i32", (em.copy(em.c32(0)),)))
            for b in reversed(bases[:-1]):
                reg = Val("ptr", base=("either", em.copy(em.c32(0)), Val("ptr", base=b, off=Val(
                    "i32", (em.copy(em.c32(0)),))), reg))
            reg.home = name
            return reg
        regs = tuple(em.copy(em.c32(0)) for _ in range(KINDS[k]))
        return Val(k, regs)

    # pointer registers into several buffers (MixedPointer) ---------------------------------------
    @staticmethod
    def leaf_bases(v: Val) -> list:
        """The buffers pointer v may point into."""
        if v.base and v.base[0] == "either":
            return Control.leaf_bases(v.base[2]) + Control.leaf_bases(v.base[3])
        return [v.base] if v.base is not None else []

    def is_multi_ptr(self, reg: Val) -> bool:
        return reg.base is not None and reg.base[0] == "either" and reg.home is not None

    def check_same_buffer(self, reg: Val, v: Val):
        """reg (a one-buffer pointer register) may take v: it is into reg's buffer (which the first
        assignment sets); else MixedPointer, so the next attempt gives reg a register per buffer."""
        em = self.em
        if reg.base is None and not (v.base and v.base[0] == "either"):
            reg.base = v.base
        if reg.base != v.base or reg.base[0] == "either":
            if reg.home is None:
                raise CodegenError("a pointer that may point into two different buffers is not supported", em.line)
            raise MixedPointer(reg.home, self.leaf_bases(reg) + self.leaf_bases(v), em.line)

    def ptr_leaves(self, v: Val, cond=None) -> list:
        """[(bool register or None for every lane, one-buffer pointer)]: where pointer v points
        into which buffer, within the lanes of cond."""
        em = self.em
        if not (v.base and v.base[0] == "either"):
            return [(cond, v)]
        _, c, a, b = v.base
        nc = em.b_not(c)
        return self.ptr_leaves(a, c if cond is None else em.b_and(cond, c)) + \
            self.ptr_leaves(b, nc if cond is None else em.b_and(cond, nc))

    def set_multi_ptr(self, reg: Val, v: Val, p=None):
        """reg = v (in the lanes of p) for a register with an offset per buffer (persistent): in the
        lanes where v points into buffer B, B's offset and the bools that lead to it.  Conditions and
        offsets are read first: v may be made of reg's own registers (`p = c ? p : q`)."""
        em = self.em
        moves = []                        # (mask or None, [(destination, source register)])
        for cond, leaf in self.ptr_leaves(v, p):
            sets, node = [], reg          # down reg's (either, c, A, rest) chain to leaf's buffer
            while node.base[0] == "either" and node.base[2].base != leaf.base:
                sets.append((node.base[1], em.c32(0)))
                node = node.base[3]
            if node.base[0] == "either":
                sets.append((node.base[1], em.c32(-1)))
                node = node.base[2]
            if node.base != leaf.base:
                raise MixedPointer(reg.home, self.leaf_bases(reg) + [leaf.base], em.line)
            sets.append((node.off.regs[0], em.memory.carried_off(leaf)))
            moves.append((None if cond is None else em.mask_of(cond), sets))
        for k, sets in moves:
            for dst, src in sets:
                if k is None:
                    em.copy(src, dst)
                else:
                    em.masked_copy(src, dst, k)

    def phi_value(self, phi, edges):
        """Select among a phi's incoming values by the predicates of the given incoming edges."""
        em = self.em
        out = None
        caps = em.phi_caps_after.get(phi, {})
        for blk, v in zip(phi.phi_blocks, phi.ops):
            if (blk, phi.block) not in edges or (blk, phi.block) not in em.edge:
                continue
            val = caps[blk] if blk in caps else em.values.val(v)
            if out is None:
                out = val
            else:
                out = em.values.select(em.edge[(blk, phi.block)], val, out)
        return out

    def block_pred(self, n):
        em = self.em
        if n == em.f.blocks[0].name:
            return em.active
        p = em.acc.get(n)
        if p is None:
            return em.c32(0)          # unreachable in this region
        head = self.diamond_head(n)
        return em.pred[head] if head in em.pred else p

    def diamond_head(self, n):
        """E when n joins the two arms of an if/else E -> {A, B} -> n: n runs on E's lanes, the same
        register (so a store there is seen to cover the wave, see fast_store)."""
        em = self.em
        arms = em.preds[n]
        if len(arms) != 2 or arms[0] == arms[1] or n in em.loops:
            return None
        if any(em.succ[a] != [n] or len(em.preds[a]) != 1 for a in arms):
            return None
        head = em.preds[arms[0]][0]
        return head if em.preds[arms[1]] == [head] and sorted(em.succ[head]) == sorted(arms) else None

    def emit_inst(self, i, p):
        """Emit IR instruction i of a block under predicate p."""
        em = self.em
        em.line = i.line or em.line
        em.site_line = getattr(i, "oob_line", None)     # a merged store stands for two lines
        em.deferred = False
        em.codegen.inst(i, p)
        if em.deferred:               # its value comes from a gather still waiting for its pass
            em.pending.add(i)
        if i in em.escapes:
            em.memory.flush_gathers()
            ctx = em.loop_stack[-1]
            v = em.vals[i] if ctx["lazy"] else em.nans.settle(em.vals[i])
            if ctx["bottom"] and i in ctx["own"]:
                # a counted loop's lanes all leave in its last pass, and i's block, which
                # dominates the exit, runs then for all of them: captured in that pass only
                outer, em.items = em.items, []
                self.capture(em.escapes[i], v, p)
                em.items = outer + [SeqIf(ctx["bottom"]["last"], em.items)]
            else:
                self.capture(em.escapes[i], v, p)

    def loads_ahead(self, body, at: int, place: dict, done: set) -> list:
        """The loads after body[at] (which reads a waiting gather's value) that may join the
        waiting pass, with the address arithmetic they need, to be emitted first and marked done:
        up to the next instruction that may write memory or leave the block, those loads whose
        operands are made before body[at] (place: an instruction's index in body) or by integer
        arithmetic that is itself free to move (Codegen.GATHER_NEUTRAL, reading no waiting value),
        a pass's worth at most.  Moving a
        load above arithmetic of its block changes nothing it reads, and the unrolled loop of a
        tiled product (As[ty][k] * Bs[k][tx], k = 0..15) then gathers eight loads a pass, not
        two."""
        em = self.em
        free, loads = set(), []
        room = GATHER_BATCH - len(em.gathers[1])
        for j in body[at + 1:]:
            if j in done:
                continue
            if j.op in ("store", "call", "atomicrmw", "cmpxchg", "fence") or j is body[-1]:
                break
            if j.op in em.codegen.GATHER_NEUTRAL and not any(o in em.pending for o in j.ops) \
                    and all(o in free or o in done or place.get(o, -1) < at for o in j.ops):
                free.add(j)
                if j.op == "load":
                    loads.append(j)
                    if len(loads) >= room:
                        break
        need = set()

        def close(x):
            if x in free and x not in need:
                need.add(x)
                for o in x.ops:
                    close(o)
        for j in loads:
            close(j)
        out = [j for j in body[at + 1:] if j in need]
        done.update(out)
        return out

    def emit_block(self, n, pred=None):
        em = self.em
        b = em.bmap[n]
        p = pred if pred is not None else self.block_pred(n)
        em.pred[n] = em.cur_pred = p
        em.elected = {}
        em.settled = set()
        phis = [i for i in b.insts if i.op == "phi"]
        if phis and pred is None:
            incoming = {(blk, n) for blk in em.preds[n]}
            vals = [self.phi_value(phi, incoming) for phi in phis]
            for phi, v in zip(phis, vals):
                em.vals[phi] = v
                if phi in em.escapes:      # a join inside a loop whose value is read after it
                    self.capture(em.escapes[phi], v, p)
        body = [i for i in b.insts if i.op != "phi"]
        place = {i: at for at, i in enumerate(body)}
        done = set()
        for at, i in enumerate(body):
            if i in done:
                continue
            if em.gathers and em.codegen.may_use_gathers(i):
                for j in self.loads_ahead(body, at, place, done):
                    self.emit_inst(j, p)
            self.emit_inst(i, p)
        em.memory.flush_gathers()
        em.scatter.flush_scatters()
        em.bounds.flush_checks()
        t = b.insts[-1]
        if t.op == "br":
            succ = em.succ[n]
            ctx = em.loop_stack[-1] if em.loop_stack else None
            bottom = ctx and ctx["bottom"]
            if len(succ) == 1:
                self.contribute(n, succ[0], p)
            elif bottom and bottom["src"] == n:
                # a counted loop's test: the sequencer takes it, so every lane here goes round
                # again, and leaves in the last pass only (no per-lane compare, no exit mask)
                self.contribute(n, ctx["header"], p)
                outer, em.items = em.items, []
                self.contribute(n, bottom["dst"], p)
                em.items = outer + [SeqIf(bottom["last"], em.items)]
            else:
                c = em.values.val(t.ops[0]).regs[0]
                on, off = em.b_and(p, c), em.b_and(p, em.b_not(c))
                whole, test = em.active_when(p), em.values.lane_test(t.ops[0])
                if whole is not None:
                    em.split_of[on], em.split_of[off] = (off, whole, p), (on, whole, p)
                    for side, holds in zip((on, off), test or ()):    # every lane or none, as the sequencer tells
                        em.all_active[side] = f"({whole}) and ({holds})" if whole else holds
                self.contribute(n, succ[0], on)
                self.contribute(n, succ[1], off)
        elif t.op == "switch":
            v = em.values.narrow(em.values.val(t.ops[0]))
            default = t.ops[1]
            rest = p
            # llvmlite lists only the labels: the case values come from the text
            pairs = re.findall(r"(i\d+ -?\d+), label %\"?([^\s\"]+)", t.text.split("[", 1)[1])
            for c, lbl in pairs:
                ty, val = c.split()
                eq = em.bool_from_mask(em.flags("ixor", v, em.values.narrow(em.values.const_val(Const(ty, int(val))))))
                if (n, lbl) not in em.edge:
                    self.contribute(n, lbl, em.b_and(p, eq))
                rest = em.b_and(rest, em.b_not(eq))
            self.contribute(n, default, rest)

    @staticmethod
    def read_after(u: Inst, i: Inst, blocks) -> bool:
        """Whether user u reads loop value i after the loop, so i must be captured as each lane
        leaves (later passes overwrite its register): any use outside but a phi on an exit edge
        (phicaps), including a phi that takes i from a block after the loop (LCSSA's
        loop.exit.loopexit -> loop.exit)."""
        if u.block in blocks:
            return False
        return u.op != "phi" or any(v is i and b not in blocks for b, v in zip(u.phi_blocks, u.ops))

    def emit_loop(self, h, body):
        """Emit loop h; gives the registers of the values that leave it (escapes, header phis, exit
        phis), for rerun_exactly."""
        em = self.em
        lazy = em.nans.lazy_loop(h)
        if lazy:
            em.nans.settle_starts(h)
        before = em.nans.snapshot() if lazy else None
        em.settled = set()
        blocks = em.loops[h]
        entry_edges = {(p, h) for p in em.preds[h] if p not in blocks}
        back_edges = {(p, h) for p in em.preds[h] if p in blocks}
        hb = em.bmap[h]
        phis = [i for i in hb.insts if i.op == "phi"]
        counted, wait = self.counted_loop(h, blocks, phis), None
        if not counted:
            counted = self.skewed_loop(h, blocks, phis)
            if counted:                 # the passes so far, for the lanes' ready flags (below)
                wait = self.persistent("i32").regs[0]
                em.skewed.add(h)
        bottom = None
        if counted:
            # %ne: an exact rerun (nans.py); %sk: a skewed loop, which packing.py leaves alone
            seq_reg = f"%{'sk' if wait else 'n'}{'e' if em.exact_mode else ''}{len(em.seq_ivs)}"
            em.seq_ivs[counted[1]] = counted[4](seq_reg) if counted[4] else f"({counted[2]} + {seq_reg})"
            (src, dst), = [(n, s) for n in blocks for s in em.succ[n] if s not in blocks]
            if src in em.preds[h] and not wait:
                # tested at the bottom (a rotated loop): all lanes that entered run every pass
                bottom = {"src": src, "dst": dst, "last": f"{seq_reg} == {counted[0]} - 1"}
        passes = None if counted else self.pass_ivs(h, blocks, phis)
        if passes:
            em.items.append(SeqSet(passes[0], "0"))
        # loop-carried registers, set from the entry edges
        entry_pred = self.block_pred(h)
        M = em.copy(entry_pred)
        if bottom:
            em.kept_equal(M, entry_pred)       # all lanes that enter run every pass
        carried = {}
        for phi in phis:
            v0 = self.phi_value(phi, entry_edges)
            reg = self.persistent(phi.type, phi.name)
            self.assign(reg, v0)
            carried[phi] = reg
        exits = {}
        phicaps = {}
        for n in blocks:
            for s in em.succ[n]:
                if s not in blocks:
                    exits[(n, s)] = em.copy(em.c32(0))
                    for phi in (i for i in em.bmap[s].insts if i.op == "phi"):
                        if n in phi.phi_blocks:
                            phicaps.setdefault((n, s), []).append((phi, self.persistent(phi.type, phi.name)))
        esc = {}
        for n in blocks:
            for i in em.bmap[n].insts:
                if i.type in ("void", "label") or i in carried:
                    continue        # a header phi needs no capture: lanes that left keep their carried value
                if any(self.read_after(u, i, blocks) for u in em.users.get(i, [])):
                    esc[i] = self.persistent(i.type, i.name)
        saved_esc = em.escapes
        em.escapes = {**saved_esc, **esc}
        k = MaskReg()
        em.op("inot {s0} {K0}", "alu", (), (M,), mdst=(k,))
        seen = em.copy(em.c32(0)) if lazy else None     # lanes whose settling a lazy loop put off (nans.py)
        outer, em.items = em.items, []
        ctx = {"header": h, "next": None, "exits": exits, "phicaps": phicaps, "bottom": bottom, "lazy": lazy,
               "seen": seen, "deferred": False,
               "own": frozenset(esc),                             # values leaving this loop
               "stores": em.memory.stores_to_buffers(blocks),     # (settle_stores)
               "seq_reg": seq_reg if counted else None,           # the pass counter and the number of
               "trips": counted[0] if counted else None}          # passes (rowplan.py)
        em.loop_stack.append(ctx)
        for phi, reg in carried.items():        # (in the loop: a grid-stride phi's form, pass_ivs)
            em.vals[phi] = replace(reg, gid_affine=passes[2][phi]) if passes and phi in passes[2] else reg
        if counted and counted[1] in carried and carried[counted[1]].kind in ("i32", "i64"):
            # the counter runs from its start up to its bound (one past, inclusive): its range
            lo = em.values.int_rng(self.phi_value(counted[1], entry_edges))
            hi = em.values.ir_rng(counted[3])
            if lo is not None and hi is not None:
                carried[counted[1]].rng = (lo[0], max(lo[1], hi[1] + 1))
        ready = None
        if wait is not None:        # a skewed loop: the lanes whose pass has come (skewed_loop)
            ready = em.bool_from_mask(em.flags("uimax", wait, em.sx))
        self.emit_block(h, pred=M if ready is None else em.b_and(M, ready))
        self.emit_region([n for n in body if n != h], h)
        # next iteration: header phis from the back edges (parallel copy), then the lane mask
        news = {}
        get = em.values.raw if lazy else em.values.val
        for phi, reg in carried.items():
            cur = reg
            for blk, v in zip(phi.phi_blocks, phi.ops):
                if (blk, h) in back_edges and (blk, h) in em.edge:
                    # in a counted loop the back edge holds every lane that entered: lanes that
                    # did not never read the register again, so no select
                    if not bottom:
                        cur = em.values.select(em.edge[(blk, h)], get(v), cur)
                    elif v in carried:            # another phi's register: copy before it changes
                        cur = self.persistent(phi.type, phi.name)
                        self.assign(cur, get(v))
                    else:
                        cur = get(v)
            news[phi] = cur
        for phi, reg in carried.items():
            if self.is_multi_ptr(reg) and news[phi] is not reg:
                # a pointer into several buffers is a tree of the registers it selects among, maybe
                # other carried ones: copied before any of them changes
                tmp = self.persistent(phi.type, phi.name)
                self.set_multi_ptr(tmp, news[phi])
                news[phi] = tmp
        late = []                 # a counted loop's phis read after it keep the last pass's value
        for phi, reg in carried.items():
            if news[phi] is reg:
                continue
            if bottom and any(u.block not in blocks for u in em.users.get(phi, [])):
                late.append(phi)
                continue
            self.assign(reg, news[phi], carry=True)
        if late:
            body_items, em.items = em.items, []
            for phi in late:
                self.assign(carried[phi], news[phi])
            em.items = body_items + [SeqIf(f"not ({bottom['last']})", em.items)]
        if not bottom:
            nxt = ctx["next"] if ctx["next"] is not None else em.c32(0)
            if ready is not None:      # lanes still waiting stay in the loop
                nxt = em.b_or(nxt, em.b_and(M, em.b_not(ready)))
                self.assign(Val("i32", (wait,)), Val("i32", (em.alu("iadd", wait, em.c32(1)),)), carry=True)
            em.copy(nxt, M)
            em.op("inot {s0} {K0}", "alu", (), (M,), mdst=(k,))
        if passes:
            em.items.append(SeqSet(passes[0], f"{passes[0]} + 1"))
            for phi in passes[1]:
                del em.seq_ivs[phi]
        em.loop_stack.pop()
        # a uniform trip count runs on the sequencer; any other loop until no lane is left
        loop = SeqLoop(seq_reg, "0", counted[0], em.items) if counted else WhileAny(k, em.items, em.line)
        grid = None if counted or not passes else self.grid_passes(h, blocks, passes)
        if grid:
            # the sequencer runs the passes the wave needs, counting them itself (the body's own
            # count goes)
            loop = SeqLoop(passes[0], "0", grid, [it for it in em.items
                                                  if not (isinstance(it, SeqSet) and it.reg == register(passes[0]))])
        em.items = outer
        if ctx.get("settle_before"):
            em.memory.settle_stores(whole_buffer=True)
        em.items += ctx.get("before", [])         # values the loop's staged loads made for it (tileplan.py)
        em.items.append(loop)
        em.escapes = saved_esc
        caps = [cap for lst in phicaps.values() for _, cap in lst]
        exports = list(esc.values()) + list(carried.values()) + caps
        if lazy:
            leaving = list(esc.items()) + [(phi, reg) for phi, reg in carried.items()
                                           if any(u.block not in blocks for u in em.users.get(phi, []))]
            leaving += [(phi.ops[phi.phi_blocks.index(src)], cap) for (src, _), lst in phicaps.items() for phi, cap in lst]
            em.nans.rerun_exactly(h, body, before, exports, leaving, entry_pred, seen if ctx["deferred"] else None)
        em.settled = set()
        for i, cap in list(esc.items()) + list(carried.items()):
            em.vals[i] = cap
            if i in saved_esc:          # escapes the enclosing loop too: capture for the lanes that ran this one
                self.capture(saved_esc[i], cap, entry_pred)
        for (src, dst), ex in exits.items():
            em.edge[(src, dst)] = ex
            em.acc[dst] = ex if dst not in em.acc else em.either(em.acc[dst], ex)
        # exit-block phis read the captured values
        em.phi_caps_after = em.phi_caps_after
        for (src, dst), lst in phicaps.items():
            for phi, cap in lst:
                em.phi_caps_after.setdefault(phi, {})[src] = cap
        return exports

    def assign(self, reg: Val, v: Val, carry=False):
        """reg = v; carry: the update of a loop-carried register at the end of a pass, a copy
        emit.coalesce_carried may remove."""
        em = self.em
        if reg.kind == "ptr":
            if self.is_multi_ptr(reg):
                return self.set_multi_ptr(reg, v)
            self.check_same_buffer(reg, v)
            em.op("lpassa {s0} {d0}", "alu", (reg.off.regs[0],), (em.memory.carried_off(v),)).carry = carry
            return
        for s, d in zip(v.regs, reg.regs):
            em.op("lpassa {s0} {d0}", "alu", (d,), (s,)).carry = carry
