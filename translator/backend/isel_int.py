"""Instruction selection for integers: binary operations (with ranges and scaled forms
kept for the bounds checks), multiplication and division sequences, compares, and
instructions on odd-width integers."""
from __future__ import annotations

import re
from dataclasses import replace

from .irread import Const, Inst
from .irtypes import container_int, odd_int
from .mathlib import _D
from .ops import SeqIf, SeqLoop, VReg
from .emitter import CodegenError
from .values import aff_add, aff_scale, EXACT, I32, is_pow2, mask_keeps, MAX_GLOBAL_ID, rng_add, rng_scale, SMALL, U32, Val, within
from .nans import callee_base
from .calls import INT_CALLS
from .abi import DERIVED_SLOTS
from .access import block_tests
from .rowstore import known_at_launch


# ------------------------------------------------------------------ instructions
INT_BIN32 = {"add": "iadd", "sub": "isub", "and": "iand", "or": "ior", "xor": "ixor",
             "shl": "ilsl", "lshr": "uilsr", "ashr": "ilsr"}

INT_BIN64 = {"add": "ladd", "sub": "lsub", "and": "land", "or": "lor", "xor": "lxor",
             "shl": "llsl", "lshr": "ulsr", "ashr": "llsr"}

# integers ----------------------------------------------------------------------------------
EXTENDS = {"lshr": False, "udiv": False, "urem": False, "zext": False, "uitofp": False,
           "ashr": True, "sdiv": True, "srem": True, "sext": True, "sitofp": True}


def bare(x):
    """IR value x without the casts around it that keep an id's value (ids are below 2^30)."""
    while isinstance(x, Inst) and (x.op in ("sext", "zext", "freeze") or x.op == "trunc" and x.type == "i32"):
        x = x.ops[0]
    return x


FP32_EXACT = 1 << 22       # operands below this divide exactly in fp32 (divide_uniform)


class IntSelection:
    """Integer instructions."""

    def __init__(self, em):
        self.em = em

    def div_exact(self, x: VReg, rcp: VReg, half_rcp: VReg = None) -> VReg:
        """x / n for non-negative 32-bit x and a launch constant n given as rcp = fp64 1/n (and
        half_rcp = 1/(2n) where it is at hand): trunc(x * (1/n) + 1/(2n)) is exact (x < 2^31, so
        the product's error is far below the 1/(2n) margin to the next integer)."""
        em = self.em
        half_rcp = half_rcp or em.floats.fmul64(em.const64(0x3FE0000000000000), rcp)
        out = []
        for r in em.split64(x, signed=False):
            out.append(em.alu("udftoi", em.floats.fmul64(em.alu("uditof", r), rcp, add=half_rcp)))
        return em.join32(*out)

    def global_id_sum(self, i: Inst) -> Val | None:
        """m * get_global_id(0) for `m * (get_group_id(0) * get_local_size(0) + get_local_id(0))`
        (in either order, through casts, shifts and constant factors: LLVM writes the sign
        extension of the sum as `((grp << 38) + (lid << 32)) >> 30`) in a 1-D build, where the
        launch has no global offset: the same value, in which the contiguous paths see the
        global id.  With a constant for the local size (`get_group_id(0) * BLOCK + tid`) the same,
        under a launch test that the local size is that constant (KernelBinary.launch_tests: a
        launch with another runs the "nd" build, which computes the sum as written)."""
        em = self.em
        if not em.one_d or em.rows is not None:
            return None
        terms = sorted((self.id_term(o) or ("", 0) for o in i.ops), key=lambda t: t[0] != "lid")
        (lk, m), (gk, g) = terms
        if lk != "lid" or gk not in ("grp", "grp*ls") or m <= 0 or g <= 0 or g % m \
                or m * MAX_GLOBAL_ID >= 1 << (31 if i.type == "i32" else 63):      # (m * gid must not wrap)
            return None
        if gk == "grp*ls" and g != m:
            return None
        if gk == "grp":
            if not g // m < MAX_GLOBAL_ID:
                return None
            em.launch_tests |= block_tests({(0, g // m)})
        v = em.workitems.ids_value(3)
        if i.type == "i32":
            v = Val("i32", (v.narrow,), gid_affine=v.gid_affine, rng=v.rng)
        return v if m == 1 else self.mul_const(v, m, i.type == "i64", (m, 0, None))

    def id_term(self, x):
        """("lid", m), ("grp", m) or ("grp*ls", m) when IR value x is m times the local id, the
        group id or the group id times the local size in dimension 0 (through casts, constant
        factors and shifts), else None."""
        slot = self.id_slot(x)
        if slot in (("ids", 0), ("wg", 7)):
            return ("lid" if slot[0] == "ids" else "grp"), 1
        if isinstance(x, Inst) and x.op in ("sext", "zext", "freeze", "trunc"):
            t = self.id_term(x.ops[0])      # (a truncation keeps m * id where it stays below 2^31)
            return t if t and (x.op != "trunc" or x.type == "i32" and t[1] * MAX_GLOBAL_ID <= 1 << 31) else None
        if not isinstance(x, Inst) or x.op not in ("mul", "shl") or len(x.ops) != 2:
            return None
        a, b = x.ops
        if x.op == "mul" and isinstance(a, Const):
            a, b = b, a
        if isinstance(b, Const) and type(b.value) is int:
            c = b.value if x.op == "mul" else 1 << b.value if 0 <= b.value < 63 else 0
            t = self.id_term(a)
            return (t[0], t[1] * c) if t and 0 < c < 1 << 40 else None
        if x.op == "mul":
            for u, w in ((a, b), (b, a)):
                t = self.id_term(u)
                if t and t[0] == "grp" and self.id_slot(w) == ("wg", 4):
                    return "grp*ls", t[1]
        return None

    def id_slot(self, x):
        """("ids" or "wg", long word) when IR value x (through casts) is a load of that slot: an id,
        a launch size, a group id; else None."""
        x = bare(x)
        if not (isinstance(x, Inst) and x.op == "load" and x.type == "i64"):
            return None
        p = self.em.values.val(x.ops[0])
        return (p.base[0], p.coff // 8) if p.kind == "ptr" and p.off is None and p.base in (("ids",), ("wg",)) \
            else None

    def mul_exact32(self, a: VReg, b: VReg, signed=True) -> VReg:
        """a * b of i32 lanes whose true product is known to stay below 2^53 (a quotient times
        its divisor): one exact fp64 product per 64-bit lane instead of mul_general's two."""
        em = self.em
        conv, back = ("ditof", "dftoi") if signed else ("uditof", "udftoi")
        out = [em.alu(back, em.floats.fmul64(em.alu(conv, x), em.alu(conv, y)))
               for x, y in zip(em.split64(a, signed), em.split64(b, signed))]
        return em.join32(*out)

    @staticmethod
    def guarded_divisor(d):
        """n when d is the front end's divide-by-zero guard (bad ? 1 : n), else None."""
        if isinstance(d, Inst) and d.op == "select" and isinstance(d.ops[1], Const) and d.ops[1].value == 1:
            return d.ops[2]
        return None

    def quotient_by(self, q, n) -> bool:
        """q is an i32 division by n (or by the guard (bad ? 1 : n)), so |q * n| <= |x|."""
        if not (isinstance(q, Inst) and q.op in ("sdiv", "udiv") and q.type == "i32"):
            return False
        return q.ops[1] is n or self.guarded_divisor(q.ops[1]) is n

    def mul32(self, a: VReg, b: VReg) -> VReg:
        return self.mul_general(Val("i32", (a,)), Val("i32", (b,)), False).regs[0]

    def widened(self, i: Inst, p: VReg):
        """An instruction on an odd-width integer (i33 from LLVM's closed forms of loops, i24 ...):
        computed in the next supported width (i32 or i64), whose upper bits are don't-care, as for
        i8/i16; operands are zero- or sign-extended from the odd width where the operation reads
        those bits (shifts right, division, compares, extensions, conversions)."""
        em = self.em
        op = i.op
        signed = EXTENDS.get(op, i.pred[:1] == "s" if op == "icmp" else None)
        if op == "call":                                   # umax.i2 and the like
            signed = INT_CALLS.get(callee_base(i))
        ops = []
        for o in i.ops:
            ty = getattr(o, "type", "")
            if not odd_int(ty):
                ops.append(o)
                continue
            if op not in ("add", "sub", "mul", "and", "or", "xor", "shl", "trunc", "icmp", "select", "phi", "freeze") \
                    and signed is None:
                raise CodegenError(f"'{op}' on {ty} is not supported on the emulator device", em.line)
            v = em.values.val(o)
            if signed is not None or op == "icmp":
                n = int(ty[1:])
                bits = 64 if n > 32 else 32
                sh = em.c32(bits - n)
                mn = ("l" if bits == 64 else "i") + "lsl", ("l" if bits == 64 else "i") + "lsr"
                if not signed:
                    mn = mn[0], "ulsr" if bits == 64 else "uilsr"
                v = Val(v.kind, tuple(em.alu(mn[1], em.alu(mn[0], r, sh), sh) for r in v.regs))
            ops.append(em.values.proxy(container_int(ty), v))
        dt = container_int(i.type) if odd_int(i.type) else i.type
        if op in ("zext", "sext", "trunc") and dt == ops[0].type:     # i33 -> i64, i64 -> i33: the value itself
            em.vals[i] = em.values.val(ops[0])
            return
        fake = Inst(op, i.name, dt, ops, text=i.text, block=i.block, pred=i.pred, elem=i.elem,
                    phi_blocks=i.phi_blocks, callee=i.callee, line=i.line)
        em.codegen.inst(fake, p)
        if fake in em.vals:
            em.vals[i] = em.vals[fake]

    def int_binop(self, i: Inst) -> Val:
        em = self.em
        a, b = em.values.val(i.ops[0]), em.values.val(i.ops[1])
        op = i.op
        if i.type == "i1":
            mn = {"and": "iand", "or": "ior", "xor": "ixor"}.get(op)
            if mn is None:
                raise CodegenError(f"'{op}' on booleans is not supported", em.line)
            return Val("b", (em.alu(mn, a.regs[0], b.regs[0]),))
        if i.type in SMALL:           # computed in 32 bits; only these need the operands extended
            if op in ("lshr", "udiv", "urem", "ashr", "sdiv", "srem"):
                signed = op in ("ashr", "sdiv", "srem")
                a, b = (em.values.norm_small(x, i.type, signed) for x in (a, b))
            mn = INT_BIN32.get(op)
            if mn:
                return Val("i32", (em.alu(mn, a.regs[0], b.regs[0]),))
            if op == "mul":
                return self.mul_general(a, b, False) if b.const is None else self.mul_const(a, b.const, False, None)
            return self.divide(op, a, b, False)
        if i.type not in ("i32", "i64"):
            raise CodegenError(f"arithmetic on {i.type} is not supported on the emulator device yet", em.line)
        if op == "add" or op == "or" and " disjoint " in f" {i.text} ":
            gid = self.global_id_sum(i)
            if gid is not None:
                return gid
        if op == "and":
            for x, m in ((a, b), (b, a)):
                if mask_keeps(m.const, em.values.int_rng(x)):
                    return x          # x & 0x7fffffff of an id LLVM proved positive: x, still an id's form
        wide = i.type == "i64"
        aff = None
        ca, cb = em.values.affine(a, i.ops[0]), em.values.affine(b, i.ops[1])
        if ca and cb:
            if op in ("add", "sub"):
                aff = aff_add(ca, cb, 1 if op == "add" else -1)
            elif op == "mul" and ca[0] == 0 and ca[2] is None:
                aff = aff_scale(cb, ca[1])
            elif op == "mul" and cb[0] == 0 and cb[2] is None:
                aff = aff_scale(ca, cb[1])
            elif op == "shl" and cb[0] == 0 and cb[2] is None and 0 <= cb[1] < (64 if i.type == "i64" else 32):
                aff = aff_scale(ca, 1 << cb[1])
            elif op == "or" and " disjoint " in f" {i.text} ":      # (no common bits: an add)
                aff = aff_add(ca, cb, 1)
            elif op == "xor" and cb == (0, -1, None):                # ~x, how LLVM writes -x - 1
                aff = aff_add((0, -1, None), ca, -1)
        rng = self.binop_rng(op, a, b) if wide else None
        if op in INT_BIN32:
            if wide and a.narrow is not None and b.narrow is not None and op in ("add", "sub", "and", "or", "xor", "shl") \
                    and not (op == "shl" and not (b.const is not None and 0 <= b.const < 32)):
                # the low 32 bits in step (ids, offsets); the whole value from them where its range
                # shows it is a 32-bit one, else by the 64-bit operation
                n = em.alu(INT_BIN32[op], a.narrow, b.narrow)
                sc = self.scaled_binop(op, a, b)
                if aff is not None and within(rng, I32):
                    hi, lo = em.split64(n)
                    return Val("i64", (hi, lo), narrow=n, gid_affine=aff, rng=rng, scaled=sc)
                regs = tuple(em.alu(INT_BIN64[op], x, y) for x, y in zip(em.values.wide(a), em.values.wide(b)))
                return Val("i64", regs, narrow=n, gid_affine=aff, rng=rng, scaled=sc)
            if not wide:
                r = self.binop_rng(op, replace(a, rng=em.values.int_rng(a)), replace(b, rng=em.values.int_rng(b)))
                return Val("i32", (em.alu(INT_BIN32[op], a.regs[0], b.regs[0]),), gid_affine=aff,
                           rng=r if within(r, I32) else None)      # (a range past 32 bits: it wraps)
            ra, rb = em.values.wide(a), em.values.wide(b)
            regs = tuple(em.alu(INT_BIN64[op], x, y) for x, y in zip(ra, rb))
            nar = None
            xa = em.values.affine(a, i.ops[0])
            if op == "ashr" and b.const is not None and 0 < b.const <= 32 and xa and xa[2] is None \
                    and xa[0] % (1 << 32) == 0 and xa[1] % (1 << 32) == 0:
                # (y << 32) >> k with y affine, as LLVM writes sext(i + c) * 4: y is the high halves
                sh = 32 - b.const
                y = em.join32(*(em.alu("ulsr", r, em.c32(32)) for r in em.values.wide(a)))
                nar = y if sh == 0 else em.alu("ilsl", y, em.c32(sh))
                yr = I32                 # y: the low half of x in (x << 32) >> k
                if isinstance(i.ops[0], Inst) and i.ops[0].op == "shl" and em.values.val(i.ops[0].ops[1]).const == 32 \
                        and within(em.values.val(i.ops[0].ops[0]).rng, I32):
                    yr = em.values.val(i.ops[0].ops[0]).rng
                return Val("i64", regs, narrow=nar, gid_affine=(xa[0] >> b.const, xa[1] >> b.const, None),
                           rng=rng_scale(yr, 1 << sh), scaled=(y, sh, yr) if sh else None)
            if op == "ashr" and b.const is not None and 0 < b.const <= 32 and isinstance(i.ops[0], Inst) \
                    and i.ops[0].op == "shl" and em.values.val(i.ops[0].ops[1]).const == 32:
                # sext(trunc(x)) << (32 - k) as LLVM writes it (k = 32: a plain sign extension; k = 30: an
                # int index scaled to a 4-byte offset): the 32-bit facet is x's low half shifted
                src = em.values.val(i.ops[0].ops[0])
                sh = 32 - b.const
                nar = em.values.narrow(src) if sh == 0 else em.alu("ilsl", em.values.narrow(src), em.c32(sh))
                aff = src.gid_affine and aff_scale(src.gid_affine, 1 << sh)
                r = src.rng if within(src.rng, I32) else I32
                return Val("i64", regs, narrow=nar, gid_affine=aff, rng=rng_scale(r, 1 << sh),
                           scaled=(em.values.narrow(src), sh, r) if sh else None)
            return Val("i64", regs, narrow=nar, gid_affine=aff, rng=rng)
        if op == "mul":
            const = b.const if b.const is not None else a.const
            other = a if b.const is not None else b
            if const is not None:
                return self.mul_const(other, const, wide, aff)
            got = None if wide else self.derived_product(i)
            if got is not None:
                return got
            for q, n in ((i.ops[0], i.ops[1]), (i.ops[1], i.ops[0])):
                if not wide and self.quotient_by(q, n):     # (x / n) * n, as in x - (x / n) * n
                    cond = em.small_quotients.get(em.values.val(q).regs[0])
                    if cond is None:
                        return Val("i32", (self.mul_exact32(a.regs[0], b.regs[0], q.op == "sdiv"),))
                    # where the quotient came from fp32, the product (at most x < 2^22) is exact there
                    out = em.new("qn")
                    outer, em.items = em.items, []
                    em.alu("fftoi", em.mau("fvmul", em.alu("fitof", a.regs[0]), em.alu("fitof", b.regs[0])),
                           dst=out)
                    fast, em.items = em.items, []
                    em.copy(self.mul_exact32(a.regs[0], b.regs[0], q.op == "sdiv"), out)
                    slow, em.items = em.items, outer
                    em.items.append(SeqIf(cond, fast, slow))
                    return Val("i32", (out,))
            return self.mul_general(a, b, wide)
        g, n = i.ops[1], self.guarded_divisor(i.ops[1])
        if not wide and n is not None and em.values.uniform_register(n):
            # the front end's guard, x / (bad ? 1 : n) for a uniform n: divide by n, then take
            # x / 1 where the guard holds
            em.uniform_divisor = em.values.uniform_register(n)
            try:
                q = self.divide(op, a, em.values.val(n), wide).regs[0]
            finally:
                em.uniform_divisor = False
            by_one = a.regs[0] if op in ("sdiv", "udiv") else em.c32(0)
            r = em.select32(em.values.val(g.ops[0]).regs[0], by_one, q)
            if q in em.small_quotients:     # its fp32 test excludes the guard's cases (n < 1)
                em.small_quotients[r] = em.small_quotients[q]
            return Val("i32", (r,))
        em.uniform_divisor = b.const is None and em.values.uniform_register(i.ops[1])
        try:
            return self.divide(op, a, b, wide)
        finally:
            em.uniform_divisor = False

    @staticmethod
    def binop_rng(op, a: Val, b: Val):
        """An interval holding the true value of i64 `a op b`, from the operands' (Val.rng), or None."""
        ra, rb = a.rng, b.rng
        if op in ("add", "sub"):
            return rng_add(ra, rb, 1 if op == "add" else -1)
        if op == "shl" and b.const is not None and 0 <= b.const < 63:
            r = rng_scale(ra, 1 << b.const)
            return r if within(r, (-(1 << 63), (1 << 63) - 1)) else None
        if op == "and" and (within(ra, (0, 1 << 63)) or within(rb, (0, 1 << 63))):
            return (0, min(r[1] for r in (ra, rb) if within(r, (0, 1 << 63))))
        if op in ("and", "or", "xor") and within(ra, I32) and within(rb, I32):
            return I32                        # (two's complement: 32-bit values stay 32-bit)
        if op in ("lshr", "ashr") and b.const is not None and 0 <= b.const < 64:
            if within(ra, (0, 1 << 63)) or (op == "ashr" and ra is not None):
                return ra[0] >> b.const, ra[1] >> b.const
            return (0, (1 << (64 - b.const)) - 1) if op == "lshr" else None
        return None

    def scaled_of(self, v: Val):
        """(u, k, rng of u) with v == u << k exactly and u's low 32 bits in VReg u (Val.scaled), or None."""
        if v.scaled is not None:
            return v.scaled
        if v.narrow is not None and within(v.rng, EXACT):
            return v.narrow, 0, v.rng
        return None

    def scaled_binop(self, op, a: Val, b: Val):
        """Val.scaled of i64 `a op b`: a sum or difference of two scaled by the same power of two (a
        constant too), or a shift of a 32-bit value; only with k > 0 (k = 0 is the narrow facet)."""
        em = self.em
        sa = self.scaled_of(a)
        if op == "shl" and b.const is not None and sa is not None and within(sa[2], I32) and sa[1] + b.const < 63:
            return sa[0], sa[1] + b.const, sa[2]
        if op not in ("add", "sub"):
            return None
        sb = self.scaled_of(b)
        if sa is None or sb is None:
            return None
        for x, y in ((a, sb), (b, sa)):        # a constant takes the other side's scale
            if x.const is not None and y[1] and x.const % (1 << y[1]) == 0:
                c = x.const >> y[1]
                if x is a:
                    sa = (em.c32(c), y[1], (c, c))
                else:
                    sb = (em.c32(c), y[1], (c, c))
        if sa[1] != sb[1] or not sa[1]:
            return None
        r = rng_add(sa[2], sb[2], 1 if op == "add" else -1)
        if not (within(r, I32) or within(r, U32)):      # (idx_wide rebuilds u from its low 32 bits)
            return None
        return em.alu(INT_BIN32[op], sa[0], sb[0]), sa[1], r

    def mul_const(self, x: Val, c: int, wide: bool, aff) -> Val:
        em = self.em
        bits = 64 if wide else 32
        c &= (1 << bits) - 1
        if c == 0:
            return em.values.const_val(Const("i64" if wide else "i32", 0))
        neg = False
        if c >> (bits - 1):
            c, neg = (1 << bits) - c, True
        terms = [k for k in range(bits) if c >> k & 1]
        if len(terms) > 4:
            return self.mul_general(x, em.values.const_val(Const("i64" if wide else "i32", c if not neg else -c)), wide)

        def build(regs, mn_shl, mn_add, mn_sub, cshift):
            acc = None
            for k in terms:
                t = regs if k == 0 else em.alu(mn_shl, regs, cshift(k))
                acc = t if acc is None else em.alu(mn_add, acc, t)
            if neg:
                acc = em.alu(mn_sub, em.const64(0), acc)
            return acc
        if not wide:
            r = rng_scale(em.values.int_rng(x), -c if neg else c)
            return Val("i32", (build(x.regs[0], "ilsl", "iadd", "isub", em.c32),), gid_affine=aff,
                       rng=r if within(r, I32) else None)
        cs = -c if neg else c
        rng = rng_scale(x.rng, cs)
        if not within(rng, (-(1 << 63), (1 << 63) - 1)):
            rng = None
        if x.narrow is not None and aff is not None and max(terms) < 31 and within(rng, I32):
            n = build(x.narrow, "ilsl", "iadd", "isub", em.c32)     # the product fits 32 bits
            hi, lo = em.split64(n)
            return Val("i64", (hi, lo), narrow=n, gid_affine=aff, rng=rng)
        regs = tuple(build(r, "llsl", "ladd", "lsub", em.c32) for r in x.regs)
        sx = self.scaled_of(x)
        sc = (sx[0], sx[1] + len(bin(c)) - 3, sx[2]) if not neg and is_pow2(c) and sx and within(sx[2], I32) \
            and sx[1] + c.bit_length() < 64 else None
        nar = build(x.narrow, "ilsl", "iadd", "isub", em.c32) if x.narrow is not None else None
        return Val("i64", regs, gid_affine=aff, rng=rng, narrow=nar, scaled=sc if sc and sc[1] else None)

    def derived_product(self, i: Inst) -> Val | None:
        """A 32-bit product of scalar arguments (lu's `k * n`): every lane's value is one the
        runtime works out at launch from the arguments (KernelBinary.derived) and puts in a spare
        word of the argument block, which the prologue reads like an argument, where the lanes'
        product through fp64 pieces took about 25 steps.  None when an operand is not such a value
        or the spare words are taken."""
        em = self.em
        parts = [em.values.seq_expr(x) for x in i.ops]
        if None in parts or not all(known_at_launch(e) for e in parts):
            return None
        e = f"(({parts[0]}) * ({parts[1]})) & 4294967295"
        if e not in em.derived:
            if len(em.derived) == len(DERIVED_SLOTS):
                return None
            slot = DERIVED_SLOTS[len(em.derived)]
            em.derived[e] = slot, em.codegen.argval(slot, "derived")      # (read in the prologue)
        return Val("i32", (em.derived[e][1],))

    def mul_general(self, a: Val, b: Val, wide: bool) -> Val:
        """Integer product modulo 2^32 (2^64) of two lane values, through exact fp64 products.

        x * y = xl * y + ((xh * y) << 16) with xl, xh the 16-bit halves of x: each
        product is below 2^48 (of y's low 32 bits), exact in fp64."""
        em = self.em
        if wide:
            return Val("i64", tuple(self.mul64_lane(x, y) for x, y in zip(em.values.wide(a), em.values.wide(b))))
        x, y = a.regs[0], b.regs[0]
        xl = em.alu("iand", x, em.c32(0xFFFF))
        xh = em.alu("uilsr", x, em.c32(16))
        out = []
        for part in (0, 1):          # odd work-items (upper lane), even (lower lane)
            def lane64(r):
                return em.alu("ulsr", r, em.c32(32)) if part == 0 else em.alu("land", r, em.const64(0xFFFFFFFF))
            fy = em.alu("uditof", lane64(y))
            p1 = em.floats.fmul64(em.alu("uditof", lane64(xl)), fy)
            p2 = em.floats.fmul64(em.alu("uditof", lane64(xh)), fy)
            i1 = em.alu("udftoi", p1)
            i2 = em.alu("llsl", em.alu("udftoi", p2), em.c32(16))
            out.append(em.alu("ladd", i1, i2))
        return Val("i32", (em.join32(*out),))

    def mul64_lane(self, x, y):
        """x * y modulo 2^64 of one 64-bit lane: the low halves' full product plus the cross terms << 32."""
        em = self.em
        lo = lambda r: em.alu("land", r, em.const64(0xFFFFFFFF))
        hi = lambda r: em.alu("ulsr", r, em.c32(32))

        def full32(a, b):            # a * b for a, b < 2^32: two products below 2^48, exact in fp64
            fb = em.alu("uditof", b)
            p0 = em.alu("udftoi", em.floats.fmul64(em.alu("uditof", em.alu("land", a, em.const64(0xFFFF))), fb))
            p1 = em.alu("udftoi", em.floats.fmul64(em.alu("uditof", em.alu("ulsr", a, em.c32(16))), fb))
            return em.alu("ladd", p0, em.alu("llsl", p1, em.c32(16)))
        xl, yl = lo(x), lo(y)
        cross = em.alu("ladd", full32(hi(x), yl), full32(xl, hi(y)))
        return em.alu("ladd", full32(xl, yl), em.alu("llsl", cross, em.c32(32)))

    def divide(self, op, a: Val, b: Val, wide: bool) -> Val:
        em = self.em
        c = b.const
        if c is not None and c > 0 and is_pow2(c) and not wide:
            k = c.bit_length() - 1
            x = a.regs[0]
            if op == "udiv":
                return Val("i32", (em.alu("uilsr", x, em.c32(k)),))
            if op == "urem":
                return Val("i32", (em.alu("iand", x, em.c32(c - 1)),))
            # signed: round toward zero
            bias = em.alu("uilsr", em.alu("ilsr", x, em.c32(31)), em.c32(32 - k)) if k else em.c32(0)
            t = em.alu("iadd", x, bias)
            if op == "sdiv":
                return Val("i32", (em.alu("ilsr", t, em.c32(k)),))
            return Val("i32", (em.alu("isub", x, em.alu("iand", t, em.c32(-c))),))
        if wide:
            return self.divide64(op, a, b)
        if em.uniform_divisor:
            return self.divide_uniform(op, a.regs[0], b.regs[0], a.gid_affine)
        return self.divide32(op, a.regs[0], b.regs[0])

    def divide_uniform(self, op, x, y, aff=None) -> Val:
        """Division by a value every lane shares (a kernel argument, say): one reciprocal per wave
        (cached), then each quotient is trunc((|x| + 1/2) / |y|) by div_exact, exact for 32 bits.

        When x is affine in the global id (a 1-D launch), waves in which the sequencer sees
        0 <= x < 2^22 and 1 <= y < 2^22 take fp32 instead, one instruction over both lanes of a
        long word where fp64 takes two: trunc((x + 1/2) * fp32(1/y)) is exact there, because
        (x + 1/2) / y lies at least 1/(2y) from an integer and the two roundings move it by less
        than (x + 1/2) / y * 2^-23 < 1/(2y)."""
        em = self.em
        signed = op in ("sdiv", "srem")
        ay, rcp, half_rcp = self.reciprocal(y, signed)      # before any branch: both paths read it
        if em.one_d and aff is not None and em.uniform_divisor:
            lo, hi = em.bounds.wave_extent(aff)
            n = em.uniform_divisor
            cond = f"1 <= ({n}) < {FP32_EXACT} and {lo} >= 0 and {hi} < {FP32_EXACT}"
            rcp32 = self.reciprocal32(y, signed)
            out = em.new("quot")
            outer, em.items = em.items, []
            q = em.alu("fftoi", em.mau("fvmul", em.mau("fvadd", em.alu("fitof", x), em.c32(0x3F000000)), rcp32))
            if op in ("urem", "srem"):
                q = em.alu("isub", x, em.alu("fftoi", em.mau("fvmul", em.alu("fitof", q),
                                                             em.alu("fitof", y))))
            em.copy(q, out)
            fast, em.items = em.items, []
            em.copy(self.divide_uniform(op, x, y).regs[0], out)
            slow, em.items = em.items, outer
            em.items.append(SeqIf(cond, fast, slow))
            em.small_quotients[out] = cond
            return Val("i32", (out,))
        if signed:
            sx, sy = em.alu("ilsr", x, em.c32(31)), em.alu("ilsr", y, em.c32(31))
            ax = em.alu("isub", em.alu("ixor", x, sx), sx)
        else:
            ax = x
        q = self.div_exact(ax, rcp, half_rcp)
        if op in ("urem", "srem"):
            r = em.alu("isub", ax, self.mul_exact32(q, ay, signed=False))
            return Val("i32", (em.alu("isub", em.alu("ixor", r, sx), sx) if signed else r,))
        if signed:
            s_ = em.alu("ixor", sx, sy)
            q = em.alu("isub", em.alu("ixor", q, s_), s_)
        return Val("i32", (q,))

    def reciprocal(self, y, signed):
        """(|y|, fp64 1/|y|, fp64 1/(2|y|)) for the uniform divisor y: once per kernel argument (in
        the prologue), else once per wave where it is first needed."""
        em = self.em
        param = re.fullmatch(r"%p(\d+)", em.uniform_divisor)
        key = ("recip", int(param[1]) if param else y, signed)
        if key not in em.ids_cache:
            if param:
                outer, em.items = em.items, []
                y = em.codegen.param_word(int(param[1]), "divisor")
            ay = em.alu("isub", em.alu("ixor", y, em.alu("ilsr", y, em.c32(31))),
                        em.alu("ilsr", y, em.c32(31))) if signed else y
            fy = em.alu("uditof", em.alu("land", ay, em.const64(0xFFFFFFFF)))
            # (Newton's reciprocal is enough: div_exact's margin is 1/(2|y|), far above its
            # few ulps; the correctly rounded division costs ~50 more steps)
            rcp = _D(em, 1, prologue=True).recip(fy, 4)[0]
            em.ids_cache[key] = (ay, rcp, em.floats.fmul64(em.const64(0x3FE0000000000000), rcp))
            if param:
                em.prologue += em.items
                em.items = outer
        return em.ids_cache[key]

    def reciprocal32(self, y, signed) -> VReg:
        """fp32 of reciprocal's 1/|y| (equal to 1/y where the fp32 division runs: y >= 1), made
        where that is, from it."""
        em = self.em
        key = ("recip32", em.uniform_divisor, signed)
        if key not in em.ids_cache:
            rcp = self.reciprocal(y, signed)[1]
            outer, em.items = em.items, []
            em.ids_cache[key] = em.floats.f64_to_f32((rcp, rcp)).regs[0]
            made, em.items = em.items, outer
            if re.fullmatch(r"%p\d+", em.uniform_divisor):
                em.prologue += made
            else:
                em.items += made
        return em.ids_cache[key]

    def divide64(self, op, a: Val, b: Val) -> Val:
        """64-bit division and remainder: restoring long division, 64 steps run by the sequencer."""
        em = self.em
        signed = op in ("sdiv", "srem")
        c1, c63 = em.c32(1), em.c32(63)
        out = []
        for x, y in zip(em.values.wide(a), em.values.wide(b)):
            if signed:
                sx, sy = em.alu("llsr", x, c63), em.alu("llsr", y, c63)      # -1 where negative
                x = em.alu("lsub", em.alu("lxor", x, sx), sx)
                y = em.alu("lsub", em.alu("lxor", y, sy), sy)
            n = em.copy(x)
            q, r = em.copy(em.const64(0)), em.copy(em.const64(0))
            outer, em.items = em.items, []
            bit = em.alu("ulsr", n, c63)
            em.alu("llsl", n, c1, dst=n)
            em.alu("lor", em.alu("llsl", r, c1), bit, dst=r)
            ge = em.flags("ulmax", r, y)                      # r >= y
            em.masked_copy(em.alu("lsub", r, y), r, ge)
            em.alu("llsl", q, c1, dst=q)
            em.masked_copy(em.alu("linc", q), q, ge)
            body, em.items = em.items, outer
            em.items.append(SeqLoop(em.seq_reg("q"), "0", "64", body))
            if op == "sdiv":
                s_ = em.alu("lxor", sx, sy)
                q = em.alu("lsub", em.alu("lxor", q, s_), s_)
            elif op == "srem":
                r = em.alu("lsub", em.alu("lxor", r, sx), sx)
            out.append(q if op in ("udiv", "sdiv") else r)
        return Val("i64", tuple(out))

    def divide32(self, op, x, y) -> Val:
        """32-bit division and remainder through fp64: q = trunc(x * (1/y)), then corrected by one.

        1/y starts from the ALU's 5-bit rsqrt (squared) and takes four Newton
        steps (5 -> 80 bits); the quotient of two 32-bit integers is then within
        one of the truth, and one integer correction makes it exact."""
        em = self.em
        signed = op in ("sdiv", "srem")
        if signed:
            sx = em.alu("ilsr", x, em.c32(31))             # -1 where negative
            sy = em.alu("ilsr", y, em.c32(31))
            ax = em.alu("isub", em.alu("ixor", x, sx), sx)   # |x| (as unsigned)
            ay = em.alu("isub", em.alu("ixor", y, sy), sy)
        else:
            ax, ay = x, y
        out_q, out_r = [], []
        one = em.const64(0x3FF0000000000000)
        for part in (0, 1):
            def lane64(r):
                return em.alu("ulsr", r, em.c32(32)) if part == 0 else em.alu("land", r, em.const64(0xFFFFFFFF))
            fx = em.alu("uditof", lane64(ax))
            fy = em.alu("uditof", lane64(ay))
            r0 = em.alu("drsqrt", fy)
            r = em.floats.fmul64(r0, r0)
            for _ in range(4):
                e = em.floats.fmul64(em.alu("lxor", fy, em.const64(1 << 63)), r, add=one)    # 1 - y r
                r = em.floats.fmul64(r, e, add=r)                                                # r + r e
            q = em.alu("udftoi", em.floats.fmul64(fx, r))
            # correction: rem = x - q*y (exact in 64 bits), fix q by one either way
            qy = em.alu("udftoi", em.floats.fmul64(em.alu("uditof", q), fy))
            rem = em.alu("lsub", lane64(ax), qy)
            yl = lane64(ay)
            neg = em.flags("lmax", em.const64(-1), rem)          # rem < 0  <=>  -1 >= rem
            qd = em.alu("ldec", q)
            em.masked_copy(qd, q, neg)
            rd = em.alu("ladd", rem, yl)
            em.masked_copy(rd, rem, neg)
            big = em.flags("lmax", rem, yl)                        # rem >= y
            em.masked_copy(em.alu("linc", q), q, big)
            em.masked_copy(em.alu("lsub", rem, yl), rem, big)
            out_q.append(q)
            out_r.append(rem)
        q = em.join32(*out_q)
        rem = em.join32(*out_r)
        if op in ("udiv", "urem"):
            return Val("i32", (q if op == "udiv" else rem,))
        if op == "sdiv":
            s = em.alu("ixor", sx, sy)
            return Val("i32", (em.alu("isub", em.alu("ixor", q, s), s),))
        return Val("i32", (em.alu("isub", em.alu("ixor", rem, sx), sx),))

    # comparisons -------------------------------------------------------------------------------
    def cmp_pair(self, mn, a: Val, b: Val, swap=False, invert=False, eq=False):
        """A comparison of 64-bit lanes -> a 32-bit-lane bool."""
        em = self.em
        ra, rb = em.values.wide(a), em.values.wide(b)
        res = []
        for x, y in zip(ra, rb):
            if swap:
                x, y = y, x
            k = em.flags(mn, x, y)
            res.append(em.bool_from_mask(k, invert))
        return em.join32(*res)

    def icmp(self, pred, a: Val, b: Val) -> VReg:
        em = self.em
        if a.kind == "ptr":
            if a.base != b.base or a.base[0] == "either":
                # a pointer into a buffer is never null; whether two buffer arguments are one buffer
                # the kernel cannot tell (a pointer's value is its offset in its buffer)
                if pred in ("eq", "ne") and "null" in (a.base[0], b.base[0]) and "either" not in (a.base[0], b.base[0]):
                    return em.c32(-1 if pred == "ne" else 0)
                raise CodegenError("comparing pointers into different buffers (or a pointer that may point into "
                                   "either of two) is not supported on the emulator device", em.line)
            a, b = Val("i32", (em.memory.ptr_off(a),)), Val("i32", (em.memory.ptr_off(b),))
        # 64-bit values compare by their low 32 bits where both lie in one 2^32 window (signed
        # compares: both 32-bit signed values; unsigned ones: either window)
        same_window = within(a.rng, I32) and within(b.rng, I32) or \
            (pred[0] == "u" or pred in ("eq", "ne")) and within(a.rng, U32) and within(b.rng, U32)
        wide = a.kind == "i64" and not (a.narrow is not None and b.narrow is not None and same_window and
                                        a.gid_affine is not None and b.gid_affine is not None)
        if pred in ("eq", "ne"):
            if wide:
                return self.cmp_pair("lxor", a, b, invert=pred == "ne")
            return em.bool_from_mask(em.flags("ixor", em.values.narrow(a), em.values.narrow(b)), invert=pred == "ne")
        unsigned = pred[0] == "u"
        rel = pred[1:]
        swap = rel in ("gt", "le")         # a > b == b < a;  a <= b == b >= a
        invert = rel in ("lt", "gt")       # x < y == !(x >= y)
        if wide:
            return self.cmp_pair(("u" if unsigned else "") + "lmax", a, b, swap, invert)
        x, y = em.values.narrow(a), em.values.narrow(b)
        if swap:
            x, y = y, x
        return em.bool_from_mask(em.flags(("u" if unsigned else "") + "imax", x, y), invert)
