"""IEEE NaN results and signed zeros on a machine whose MAU never makes a NaN or a -0
(docs/language.md, "NaN results and signed zeros").

The MAU normalises its outputs: where IEEE arithmetic gives NaN (0 * inf, inf - inf, a NaN
operand) it gives +-inf, and every zero (an underflow too) is +0.  Fixing every MAU result would cost ALU work after every add and
multiply (an earlier attempt made matvec 4x slower).  Instead the backend uses a property of
chains of add / sub / mul / fma / neg: where IEEE gives a finite value or an infinity the MAU
gives the same, and where IEEE gives NaN the MAU gives +-inf.  So:

* A float ``Val`` made by such an operation is *lazy*: ``Val.lazy`` records the operation and its
  operand ``Val``s, and its register may hold +-inf where the IEEE result is NaN.  Lazy operands
  feed further chain operations unchanged.
* Where a lazy value leaves the chain (``Values.val``: a store, a compare, a conversion, a call,
  a select or phi, a division ...) it is *settled* in place: if any lane is +-0 or +-inf
  (three ALU ops and one any-reduction, ``special``), the NaN lanes are recomputed from the
  chain (``nan_bool``: a NaN operand, inf - inf, 0 * inf) and get a quiet NaN, and the zero
  lanes get the IEEE sign (``true_sign``; a float underflow is the zero of the exact result's
  sign: the device has no CL_FP_DENORM).
* A pure loop whose float accumulators are only chained (matvec's ``s += a[j] * x[j]``) carries
  them lazily; after it, if any lane (of those that entered it) of a float value leaving it is
  +-0 or +-inf, the loop runs again in exact mode (every operation settled at once, no
  any-reduction) and its results replace the first run's.  An inf or NaN stays one in such a
  chain, and a zero's sign depends on its whole history, so the common case pays one test
  after the loop.
* Division and sqrt are not chain operations (their Newton sequences give finite numbers for
  some special operands): their special values are fixed at once, by ALU selects.
* Operations with LLVM's ``nnan`` (``-cl-finite-math-only``, ``-cl-fast-relaxed-math``) are exact
  by assumption: no fix-ups.
"""
from __future__ import annotations

import functools
import math
import re

from .irread import Const, Inst
from .ops import IfAnyLane

# the emitter's state a loop's exact run starts again from (snapshot, restore)
STATE = ("vals", "acc", "edge", "pred", "phi_caps_after", "seq_ivs", "checked", "fast_cache", "escapes")


ABS64, INF64, QNAN64 = (1 << 63) - 1, 0x7FF << 52, 0x7FF8 << 48
CHAIN_OPS = ("fadd", "fsub", "fmul", "fneg")
CHAIN_CALLS = ("fmuladd", "fma")
# intrinsics without an effect: a lazy loop may call them (on values outside its chains)
PURE_CALLS = frozenset("sqrt fabs floor ceil trunc rint nearbyint round roundeven copysign minnum maxnum "
                       "minimum maximum exp exp2 log log2 log10 sin cos pow powi fshl fshr smax smin umax "
                       "umin abs ctpop ctlz cttz bswap bitreverse".split())
_FLAGS = re.compile(r"\s*(?:%\S+\s*=\s*)?(?:(?:tail|notail|musttail)\s+)?\w+((?:\s+(?:nnan|ninf|nsz|arcp|contract|afn|"
                    r"reassoc|fast))*)")


def fast_math_flags(i: Inst) -> set:
    """The fast-math flags (nnan, afn, fast ...) LLVM put on instruction i."""
    m = _FLAGS.match(i.text or "")
    return set(m.group(1).split()) if m else set()


def no_nans(i: Inst) -> bool:
    """i carries LLVM's nnan (or fast) flag: its operands and result are assumed not NaN."""
    return bool({"nnan", "fast"} & fast_math_flags(i))


def callee_base(i: Inst) -> str:
    name = i.callee or ""
    return name.split(".")[1] if name.startswith("llvm.") else name


def is_chain(i: Inst) -> bool:
    """i is an operation a lazy value may flow through: + - * negation, fma / fmuladd."""
    return i.op in CHAIN_OPS or i.op == "call" and callee_base(i) in CHAIN_CALLS


class NanFixups:
    """Lazy NaN results, their settling, and loops run again exactly."""

    def __init__(self, em):
        self.em = em

    def _w(self, wide: bool):
        """(prefix, magnitude mask, infinity, quiet NaN, sign shift) registers of float or double lanes."""
        em = self.em
        if wide:
            c = em.const64
            return "l", c((1 << 63) - 1), c(0x7FF << 52), c(0x7FF8 << 48), em.c32(63)
        c = em.c32
        return "i", c(0x7FFFFFFF), c(0x7F800000), c(0x7FC00000), c(31)

    def lazy_result(self, i: Inst, v, how: tuple):
        """v, the result of chain operation `how` = (op, operand Vals...), marked lazy unless i
        assumes no NaNs; settled at once in exact mode."""
        em = self.em
        if no_nans(i):
            return v
        v.lazy = how
        if em.exact_mode:
            self.fix_nans(v, guard=False)
            v.lazy = None
        elif em.lazy_cap is not None and self.chain_longer(v, em.lazy_cap):
            self.fix_nans(v, guard=True)
            v.lazy = None
        return v

    def chain_longer(self, v, cap: int) -> bool:
        """Whether lazy v's chain has more than `cap` lazy values: each keeps its operands live
        until the chain is settled (16 accumulators of 16 fmas each keep 768), so a kernel that
        runs out of registers is built again with its chains settled at that length (lazy_cap)."""
        seen, work = set(), [v]
        while work:
            x = work.pop()
            if x.lazy is None or id(x) in seen:
                continue
            seen.add(id(x))
            if len(seen) > cap:
                return True
            work += [y for y in x.lazy[1:] if hasattr(y, "lazy")]
        return False

    def settle(self, v):
        """v with IEEE NaNs and zero signs (in place): a lazy value's NaN and zero lanes, fixed
        when any lane is +-0 or +-inf."""
        em = self.em
        if v.elts is not None:              # a vector of lazy elements (Values.make_vec)
            for e in v.elts:
                self.settle(e)
            return v
        if v.lazy is None or id(v) in em.settled:
            return v
        ctx = em.loop_stack[-1] if em.loop_stack else None
        if ctx is not None and ctx["lazy"] and not em.exact_mode:
            self.put_off(v, ctx)
        else:
            self.fix_nans(v, guard=not em.exact_mode)
        em.settled.add(id(v))
        return v

    def put_off(self, v, ctx):
        """Settle v inside a lazy loop by noting, in the loop's `seen` lanes, those running this
        pass where v is +-0 or +-inf, instead of testing them at once: after the loop one test
        covers every pass, and a lane noted runs the loop again exactly (rerun_exactly), so a
        pass pays two ALU operations, not an any-reduction (nbody's rsqrt of a sum of squares)."""
        em = self.em
        for r in v.regs:
            em.alu("ior", ctx["seen"], em.b_and(em.bool_from_mask(self.special(v, r)), em.cur_pred), dst=ctx["seen"])
        ctx["deferred"] = True

    def special(self, v, r, step=None, live=None):
        """A mask entry set in the lanes of register r of float v that hold +-0 or +-inf (the MAU
        makes no NaN or subnormal): |r| - 1, where 0 wraps to the top, compared unsigned with the
        largest finite magnitude.  step (float only): a register to add instead of -1, 1.0's
        pattern in lanes to leave out (so a zero there is not counted; see rerun_exactly).  live
        (float only): a bool of the lanes that count, so that lanes outside the branch (zeros, as
        often as not) do not make the fix run."""
        em = self.em
        p, mag, inf, _, _ = self._w(v.kind == "f64")
        top = em.const64((0x7FF << 52) - 1) if p == "l" else em.c32(0x7F7FFFFF)
        a = em.alu(p + "and", r, mag)
        d = em.alu(p + "dec", a) if step is None else em.alu("iadd", a, step)
        if live is not None and p == "i":
            d = em.b_and(d, live)
        return em.flags("u" + p + "max", d, top)

    def infinite(self, v, r):
        """A mask entry set in the lanes of register r of float v that hold +-inf (or a NaN)."""
        em = self.em
        p, mag, inf, _, _ = self._w(v.kind == "f64")
        return em.flags("u" + p + "max", em.alu(p + "and", r, mag), inf)

    def fix_nans(self, v, guard: bool):
        """Put the IEEE value in the lanes of lazy v where the MAU's differs: a quiet NaN where
        IEEE gives NaN, and the IEEE sign where the result is zero (the MAU makes every zero +0,
        and flushes an underflow to +0); guard: only when some lane is +-0 or +-inf (an
        any-reduction), else unconditionally."""
        em = self.em
        p, mag, _, qnan, _ = self._w(v.kind == "f64")
        chain = v.lazy[0] != "sqrt"      # (sqrt fixes its zeros itself, and its NaNs are finite)
        for j, r in enumerate(v.regs):
            if guard:
                # under a branch, only the lanes that take it (a step more, which straight-line
                # code, saxpy's, would pay in every full wave)
                k = self.special(v, r, live=None if em.cur_pred is em.active else em.cur_pred)
                outer, em.items = em.items, []
            if chain:
                sign = em.alu(p + "and", self.true_sign(v, j, {}), self.sign_bit(v))
                em.masked_copy(sign, r, em.flags(p + "and", r, mag))
            # a chain's IEEE NaN is +-inf here: results with zeros and no infinity (exact integer
            # data, lu's eliminations) skip working the NaN lanes out
            if guard and chain:
                k_inf = self.infinite(v, r)
                zeros, em.items = em.items, []
            nan = self.nan_bool(v, j, {})
            em.masked_copy(qnan, r, em.flags(p + "not", nan))
            if guard and chain:
                nans, em.items = em.items, zeros
                em.items.append(IfAnyLane(k_inf, nans))
            if guard:
                then, em.items = em.items, outer
                em.items.append(IfAnyLane(k, then))

    def sign_bit(self, v):
        em = self.em
        return em.const64(1 << 63) if v.kind == "f64" else em.c32(0x80000000)

    def true_sign(self, x, j: int, memo: dict):
        """A register whose sign bit is the IEEE sign of register j of lazy-or-exact x (other bits
        are junk; meaningless in NaN lanes): x's own where x is exact, settled or its MAU result
        is not zero, else worked out from the chain's operands.  A settled operand ends the walk,
        so settling each value of a long chain (a store after each `y += ...`) costs the same
        for each, not the chain's length."""
        em = self.em
        key = id(x)
        if key in memo:
            return memo[key]
        r = x.regs[j]
        if x.lazy is None or id(x) in em.settled:
            return r
        p, mag, _, _, _ = self._w(x.kind == "f64")
        c = em.const64 if p == "l" else em.c32
        op, *a = x.lazy
        s = [self.true_sign(y, j, memo) for y in a]
        if op == "neg":
            out = em.alu(p + "xor", s[0], self.sign_bit(x))
        elif op == "mul":                # exact: the operands' signs
            out = em.alu(p + "xor", s[0], s[1])
        else:                            # the rounded sum is zero: from the operands' magnitudes
            m = [em.alu(p + "and", y.regs[j], mag) for y in a]
            if op == "sub":
                s[1] = em.alu(p + "xor", s[1], self.sign_bit(x))
            if op == "fma":              # a * b + c: the product's sign and (rounded) magnitude
                pm = em.alu(p + "and", em.floats.fmul64(a[0].regs[j], a[1].regs[j]) if p == "l"
                            else em.mau("fvmul", a[0].regs[j], a[1].regs[j]), mag)
                em.masked_copy(c(1), pm, em.flags(p + "and", pm, mag))   # a product that underflowed
                for y in m[:2]:                                              # ... unless it is exactly 0
                    em.masked_copy(c(0), pm, em.flags(p + "and", y, mag))
                s, m = [em.alu(p + "xor", s[0], s[1]), s[2]], [pm, m[2]]
            out = em.copy(r)
            em.masked_copy(self.zero_sum_sign(p, s, m), out, em.flags(p + "and", r, mag))
        memo[key] = out
        return out

    def zero_sum_sign(self, p, s, m):
        """The sign of a sum of two terms (signs s, magnitudes m) that rounds to zero or a
        subnormal: the larger term's sign; for equal magnitudes the AND of the signs (x - x is
        +0 rounding to nearest, -0 + -0 is -0)."""
        em = self.em
        out = em.copy(s[0])
        em.masked_copy(s[1], out, em.flags("u" + p + "max", m[1], m[0]))
        em.masked_copy(em.alu(p + "and", s[0], s[1]), out, em.flags(p + "xor", m[0], m[1]))
        return out

    def nan_bool(self, x, j: int, memo: dict):
        """All ones in the lanes of register j of x whose IEEE value is NaN, from x's chain."""
        em = self.em
        key = id(x)
        if key in memo:
            return memo[key]
        p, mag, inf, _, sh = self._w(x.kind == "f64")
        c = em.c32

        def test(mn, a, b, invert=False):
            return em.bool_from_mask(em.flags(p + mn, a, b), invert)

        def is_inf(y):
            return test("xor", em.alu(p + "and", y.regs[j], mag), inf)

        def is_zero(y):
            return test("and", y.regs[j], mag)

        def negative(r):                 # all ones where r's sign bit is set
            return em.alu(p + "lsr", r, sh)

        def any_of(*bs):
            return functools.reduce(em.b_or, bs)

        if x.const is not None:
            out = c(-1 if x.const != x.const else 0)
        elif x.lazy is None or id(x) in em.settled:      # exact (settled in place): its own register
            out = test("max", inf, em.alu(p + "and", x.regs[j], mag), invert=True)    # |x| > inf
        else:
            op, *a = x.lazy
            nans = [self.nan_bool(y, j, memo) for y in a if not (y.const is not None and y.const == y.const)]
            if op == "neg":
                out = nans[0]
            elif op in ("add", "sub"):       # inf - inf
                d = negative(em.alu(p + "xor", a[0].regs[j], a[1].regs[j]))
                d = d if op == "add" else em.b_not(d)
                out = any_of(*nans, em.b_and(em.b_and(is_inf(a[0]), is_inf(a[1])), d))
            elif op in ("mul", "fma"):       # 0 * inf, and for fma inf - inf after the exact product
                ia, ib, za, zb = is_inf(a[0]), is_inf(a[1]), is_zero(a[0]), is_zero(a[1])
                terms = [em.b_and(ia, zb), em.b_and(za, ib)]
                if op == "fma":
                    d = negative(em.alu(p + "xor", em.alu(p + "xor", a[0].regs[j], a[1].regs[j]), a[2].regs[j]))
                    terms.append(em.b_and(em.b_and(em.b_or(ia, ib), is_inf(a[2])), d))
                out = any_of(*nans, *terms)
            elif op == "sqrt":               # a negative number (not -0; for float, not a flushed subnormal)
                tiny = is_zero(a[0]) if p == "l" else em.bool_from_mask(
                    em.flags("uimax", c(0x007FFFFF), em.alu("iand", a[0].regs[j], mag)))
                out = any_of(*nans, em.b_and(negative(a[0].regs[j]), em.b_not(tiny)))
            else:
                raise ValueError(f"internal: unknown lazy operation {op}")
        memo[key] = out
        return out

    def nan_mask(self, r, wide: bool):
        """A mask entry set in the lanes of float register r that hold a NaN (|r| > inf)."""
        em = self.em
        if wide:
            mag = em.alu("land", r, em.const64((1 << 63) - 1))
            return em.flags("lmax", mag, em.const64(0x7FF0000000000001))
        return em.flags("imax", em.alu("iand", r, em.c32(0x7FFFFFFF)), em.c32(0x7F800001))

    def division_specials(self, q, x, y, wide: bool):
        """q = x / y from the Newton sequence, with IEEE results where an operand is zero,
        infinite or NaN (the sequence gives +-inf of either sign or a finite number there):
        signed zeros, signed infinities, NaN for 0/0, inf/inf and a NaN operand.  A float
        subnormal operand is the zero of its sign, and a quotient the MAU flushed is the zero of
        the quotient's sign (no CL_FP_DENORM)."""
        em = self.em
        if wide:
            return self._division_specials64(q, x, y)
        p, mag, inf, qnan, _ = self._w(wide)
        c = em.const64 if wide else em.c32
        top = 1 << (63 if wide else 31)
        ax, ay = em.alu(p + "and", x, mag), em.alu(p + "and", y, mag)
        zero = em.alu(p + "and", em.alu(p + "xor", x, y), c(top))          # the quotient's sign
        big = em.alu(p + "or", zero, inf)
        if wide:
            x0, y0 = em.flags(p + "and", x, mag), em.flags(p + "and", y, mag)
            q0 = x0
        else:                          # float subnormals count as zeros (flushed), as does an underflow
            tiny = c(0x007FFFFF)
            x0, y0 = em.flags("uimax", tiny, ax), em.flags("uimax", tiny, ay)
            q0 = em.flags(p + "and", q, mag)
        xinf, yinf = em.flags(p + "xor", ax, inf), em.flags(p + "xor", ay, inf)
        q = em.copy(q)
        em.masked_copy(zero, q, yinf)                    # finite / inf
        em.masked_copy(zero, q, q0)                      # 0 / y, and a quotient that underflowed
        for k, other in ((y0, x0), (xinf, yinf)):          # x / 0, inf / y; NaN for 0 / 0, inf / inf
            t = em.copy(big)
            em.masked_copy(qnan, t, other)
            em.masked_copy(t, q, k)
        em.masked_copy(x, q, self.nan_mask(x, wide))     # a NaN operand
        em.masked_copy(y, q, self.nan_mask(y, wide))
        return q

    def _division_specials64(self, q, x, y):
        """Double: the division (mathlib's div_cr) is IEEE for finite nonzero operands (subnormals
        included), so the IEEE value of the other cases is made from x and y alone, beside the
        division, and replaces q in one step: a NaN operand (y's if both are), NaN for 0 / 0 and
        inf / inf, else (one operand 0 or inf) +-inf where |x| > |y| and +-0 where |x| < |y|."""
        em = self.em
        c = em.const64
        parts = em.div_parts.get((x, y))
        if parts:
            ax, ay, zero = parts
        else:
            ax, ay = em.alu("land", x, c(ABS64)), em.alu("land", y, c(ABS64))
            zero = em.alu("land", em.alu("lxor", x, y), c(1 << 63))                     # the quotient's sign
        v = em.alu("lor", zero, c(INF64))
        em.masked_copy(zero, v, em.flags("ulmax", ay, ax))                              # |x| <= |y|: 0
        em.masked_copy(c(QNAN64), v, em.flags("lxor", ax, ay))                           # 0/0, inf/inf
        em.masked_copy(x, v, em.flags("lmax", ax, c(INF64 + 1)))                         # a NaN operand
        em.masked_copy(y, v, em.flags("lmax", ay, c(INF64 + 1)))
        m = em.alu("ulmax", em.alu("lsub", ax, c(1)), em.alu("lsub", ay, c(1)))       # 0 wraps to the top
        em.masked_copy(q, v, em.flags("ulmax", c(INF64 - 2), m))                          # both finite, nonzero
        return v

    # loops -------------------------------------------------------------------------------------
    def lazy_loop(self, h) -> bool:
        """Whether loop h may carry its float accumulators lazily and be run again exactly when a
        value leaving it is +-inf: it has no inner loop, no store or call with an effect (an
        intrinsic of PURE_CALLS has none), and
        every use inside it of a float header phi, and of what is chained from one, is a chain
        operation or a header phi (no settling inside the loop)."""
        em = self.em
        if em.exact_mode:
            return False
        blocks = em.loops[h]
        if any(n != h and n in em.loops for n in blocks):
            return False
        insts = [i for n in blocks for i in em.bmap[n].insts]
        for i in insts:
            if i.op in ("store", "atomicrmw", "cmpxchg", "fence") or i.op == "call" and not (
                    callee_base(i) in CHAIN_CALLS or (i.callee or "").startswith(("llvm.lifetime", "llvm.dbg"))
                    or (i.callee or "").startswith("llvm.") and callee_base(i) in PURE_CALLS):
                return False
        work = [i for i in em.bmap[h].insts if i.op == "phi" and i.type in ("float", "double")]
        if not work:
            return False
        chained = set(work)
        while work:
            x = work.pop()
            for u in em.users.get(x, []):
                if u.block not in blocks or u in chained:
                    continue
                if u.op == "phi" and u.block == h:
                    continue
                if u.type not in ("float", "double") or no_nans(u) or not is_chain(u):
                    return False         # a sink, or exact already
                chained.add(u)
                work.append(u)
        return True

    def _chain(self, h) -> list:
        """The chain operations and header phis of float values in loop h."""
        em = self.em
        return [i for n in em.loops[h] for i in em.bmap[n].insts if i.type in ("float", "double") and (
            is_chain(i) or i.op == "phi" and i.block == h)]

    @staticmethod
    def _sign_operands(i) -> list:
        """The operands of chain operation i whose -0 can make its result -0 (fmul and fneg: any
        zero operand, so all)."""
        if i.op == "fadd" or i.op == "phi":
            return list(i.ops)
        if i.op == "fsub":
            return [i.ops[0]]
        if i.op == "call":
            return [[o for o in i.ops if not isinstance(o, tuple)][2]]
        return list(i.ops)

    def settle_starts(self, h):
        """Settle, before lazy loop h, the lazy f32 values from outside it that its chain starts
        from (gemm's or 2mm's `acc = beta * D[..]`): a lazy value's -0 may show as +0, so
        clear_starts could not test them, and every zero result ran the loop again.  A few
        operations before the loop, instead of a second run of it whenever a result is zero."""
        em = self.em
        inside = set(em.loops[h])
        for i in self._chain(h):
            for o in self._sign_operands(i):
                v = em.vals.get(o) if isinstance(o, Inst) and o.block not in inside else None
                if v is not None and v.kind == "f32" and v.lazy is not None and id(v) not in em.settled:
                    self.settle(v)
                    em.entry_settled.add(id(v))

    def clear_starts(self, h) -> list:
        """[(IR value, f32 register)] of the values from outside loop h whose -0 could make a
        value leaving it -0 (mvt's ``x1[i] += ...`` starts at the loaded x1[i]), when every such
        value is f32 and settled (its register holds its IEEE bits); else [].  In the lanes where
        none of them is -0, never_minus_zero(h, those values) holds (rerun_exactly)."""
        em = self.em
        inside = set(em.loops[h])
        chain = self._chain(h)
        out = []
        for i in chain:
            for o in self._sign_operands(i):
                if isinstance(o, Const) or o in chain or any(o is x for x, _ in out):
                    continue
                if isinstance(o, Inst) and o.block in inside:
                    continue                    # varies in the loop: not a start
                v = em.vals.get(o)
                if v is None or v.kind != "f32" or v.lazy is not None and id(v) not in em.settled | em.entry_settled:
                    return []
                out.append((o, v.regs[0]))
        return out

    def never_minus_zero(self, h, clear=()) -> set:
        """The float values of lazy loop h that can be -0 only by a flushed underflow: a sum is
        -0 only when both its terms are (x - x is +0), an fma only when its addend is, so an
        accumulator that starts at a +0 constant and is only added to stays clear of -0.  OpenCL
        1.2 (7.5.3) leaves the sign of a flushed zero undefined, so such a value that ends at
        zero is +0 as the MAU made it and needs no exact run (docs/language.md).  clear: values
        from outside the loop taken not to be -0 (clear_starts)."""
        chain = self._chain(h)
        maybe = set()              # may be -0: grows to a fixed point from the optimistic start

        def neg0(o) -> bool:
            if isinstance(o, Const):
                return o.value == 0 and math.copysign(1.0, o.value) < 0
            return o in maybe or o not in chain and not any(o is c for c in clear)

        changed = True
        while changed:
            changed = False
            for i in chain:
                if i in maybe:
                    continue
                if i.op == "fadd":
                    hit = all(neg0(o) for o in self._sign_operands(i))
                elif i.op in ("phi", "fsub", "call"):
                    hit = any(neg0(o) for o in self._sign_operands(i))
                else:                   # fmul, fneg: a zero operand of either sign
                    hit = True
                if hit:
                    maybe.add(i)
                    changed = True
        return set(chain) - maybe

    def snapshot(self) -> dict:
        em = self.em
        return {a: dict(getattr(em, a)) for a in STATE} | {"flops": em.flops}

    def restore(self, s: dict):
        em = self.em
        for a, v in s.items():
            setattr(em, a, dict(v) if isinstance(v, dict) else v)
        em.settled = set()

    def rerun_exactly(self, h, body, before: dict, exports: list, leaving: list, lanes=None, seen=None):
        """After loop h ran with lazy accumulators: if any lane of a float value in `leaving`
        ((IR value, register) of those of `exports`, the first run's escape, carried and exit-phi
        registers in the order emit_loop gives them, read after the loop) is +-inf or +-0 (where
        NaNs and zero signs may be wrong; +-inf only for a value never_minus_zero clears, or
        clears given that no start of the loop (clear_starts) is -0 in a lane that entered it,
        which is then tested instead), run the loop again from the state `before` it in exact
        mode and copy its results over the first run's.  lanes: the bool of the lanes that entered the loop (only those are tested
        for zeros, for float values).  seen: the lanes whose settling in the loop was put off
        (put_off), which run it again too."""
        em = self.em
        floats = [(i, v) for i, v in leaving if v.kind in ("f32", "f64")]
        if not floats and seen is None:
            return
        plus_zero = self.never_minus_zero(h)
        starts = self.clear_starts(h) if any(i not in plus_zero for i, _ in floats) else []
        cleared = self.never_minus_zero(h, [o for o, _ in starts]) - plus_zero if starts else set()
        if not any(i in cleared for i, _ in floats):
            starts = []
        # only the lanes that entered the loop: the wave's idle lanes keep a zero (an integer -1
        # where `lanes` is set, 1.0's pattern where not, is added to |r|: see special)
        step = em.alu("ior", lanes, em.c32(0x3F800000)) if lanes is not None and any(
            i not in plus_zero | cleared and v.kind == "f32" for i, v in floats) else None

        def masks():
            for i, v in floats:
                for r in v.regs:
                    yield self.infinite(v, r) if i in plus_zero | cleared else \
                        self.special(v, r, step if v.kind == "f32" else None)
            for _, r in starts:            # a start that is -0 (in a lane that entered): exact run
                k0 = em.flags("ixor", r, em.c32(-(1 << 31)))
                yield k0 if lanes is None else em.mask_of(em.b_and(em.bool_from_mask(k0), lanes))
        n = sum(len(v.regs) for _, v in floats) + len(starts)
        # each mask made into a bool at once: sixteen accumulators' masks would not all fit
        if n == 1 and seen is None:
            k = next(masks())
        else:
            k = em.mask_of(functools.reduce(em.b_or, [*map(em.bool_from_mask, masks()), *([seen] if seen else [])]))
        after = self.snapshot()
        self.restore(before)
        outer, em.items = em.items, []
        em.exact_mode = True
        try:
            again = em.control.emit_loop(h, body)
        finally:
            em.exact_mode = False
        for a, b in zip(exports, again):
            em.control.assign(a, b)
        then, em.items = em.items, outer
        self.restore(after)
        em.items.append(IfAnyLane(k, then))
