"""Instruction selection for floating point: arithmetic (fp64 multiply in two MAU steps),
division and sqrt by Newton sequences, compares with IEEE NaNs, and the conversions between
integer and float kinds."""
from __future__ import annotations

from .irread import Inst
from .ops import VReg
from .emitter import CodegenError
from .values import I32, KINDS, U32, Val, within
from .nans import no_nans


class FloatSelection:
    """Float instructions and conversions."""

    def __init__(self, em):
        self.em = em

    CASTS = ("zext", "sext", "trunc", "sitofp", "uitofp", "fptosi", "fptoui", "fpext", "fptrunc", "bitcast",
             "ptrtoint", "inttoptr")

    def fmul64(self, x, y, add=None):
        """fp64 x * y (+ add) on all four PEs of each MAB: the u and d halves."""
        t = self.em.new()
        if add is None:
            self.em.op("dvmulu {s0} {s1} {d0}", "mau", (t,), (x, y))
            d = self.em.new()
            self.em.op("dvfmad {s0} {s1} {s2} {d0}", "mau", (d,), (x, y, t))
        else:
            self.em.op("dvfmau {s0} {s1} {s2} {d0}", "mau", (t,), (x, y, add))
            d = self.em.new()
            self.em.op("dvfmad {s0} {s1} {s2} {d0}", "mau", (d,), (x, y, t))
        return d

    def is_nan(self, v: Val) -> VReg:
        """A bool per lane: v is a NaN (its magnitude bits above infinity's), by integer compares."""
        if v.const is not None:
            return self.em.c32(-1 if v.const != v.const else 0)
        if v.kind == "f64":
            mag = Val("i64", tuple(self.em.alu("land", r, self.em.const64(0x7FFFFFFFFFFFFFFF)) for r in v.regs))
            return self.em.ints._cmp_pair("lmax", Val("i64", (self.em.const64(0x7FF0000000000000),) * 2), mag, invert=True)
        mag = self.em.alu("iand", v.regs[0], self.em.c32(0x7FFFFFFF))
        return self.em.bool_from_mask(self.em.flags("imax", self.em.c32(0x7F800000), mag), invert=True)

    def fcmp(self, pred, a: Val, b: Val) -> VReg:
        """IEEE predicates: the compare on the values (a NaN compares as its bit pattern), then
        false where an operand is a NaN for the ordered ones, true for the unordered ones."""
        if pred == "true":
            return self.em.c32(-1)
        if pred == "false":
            return self.em.c32(0)
        nans = [self.is_nan(x) for x in (a, b) if x.const is None or x.const != x.const]
        uno = nans[0] if len(nans) == 1 else self.em.b_or(*nans) if nans else None
        if pred in ("ord", "uno"):
            if uno is None:
                return self.em.c32(0 if pred == "uno" else -1)
            return uno if pred == "uno" else self.em.b_not(uno)
        c = self.fcmp_values(pred[1:], a, b)
        if uno is None:
            return c
        return self.em.b_or(c, uno) if pred[0] == "u" else self.em.b_and(c, self.em.b_not(uno))

    def fcmp_values(self, p, a: Val, b: Val) -> VReg:
        wide = a.kind == "f64"
        mn = "dmax" if wide else "fmax"

        def ge(x, y, invert=False):
            if wide:
                return self.em.ints._cmp_pair(mn, x, y, invert=invert)
            return self.em.bool_from_mask(self.em.flags(mn, x.regs[0], y.regs[0]), invert)
        if p in ("ge",):
            return ge(a, b)
        if p == "le":
            return ge(b, a)
        if p == "lt":
            return ge(a, b, True)
        if p == "gt":
            return ge(b, a, True)
        if p in ("eq", "ne"):
            e = self.em.b_and(ge(a, b), ge(b, a))
            return e if p == "eq" else self.em.b_not(e)
        raise CodegenError(f"floating-point comparison '{p}' is not supported", self.em.line)

    # floating point ------------------------------------------------------------------------------
    def float_op(self, i: Inst) -> Val:
        op = i.op
        wide = i.type == "double"
        if i.type not in ("float", "double"):
            raise CodegenError(f"floating-point type {i.type} is not supported on the emulator device", self.em.line)
        chain = op != "fdiv"              # a division's operands are settled (nans.py)
        a = self.em.values.raw(i.ops[0]) if chain else self.em.values.val(i.ops[0])
        if op == "fneg":
            sign = self.em.const64(1 << 63) if wide else self.em.c32(0x80000000)
            v = Val(a.kind, tuple(self.em.alu("lxor", r, sign) for r in a.regs))
            return self.em.nans.lazy_result(i, v, ("neg", a)) if a.lazy else v
        b = self.em.values.raw(i.ops[1]) if chain else self.em.values.val(i.ops[1])
        v = self.float_arith(op, wide, a, b)
        if op == "fdiv":                  # exact: its special values are fixed at once
            if not no_nans(i):
                v.regs = tuple(self.em.nans.division_specials(q, x, y, wide) for q, x, y in zip(v.regs, a.regs, b.regs))
            return v
        return self.em.nans.lazy_result(i, v, ({"fadd": "add", "fsub": "sub", "fmul": "mul"}[op], a, b))

    def float_arith(self, op, wide, a: Val, b: Val) -> Val:
        self.em.flops += 1
        if op == "frem":
            raise CodegenError("fmod / '%' on floats is not supported on the emulator device yet", self.em.line)
        if wide:
            if op == "fadd":
                return Val("f64", tuple(self.em.mau("dvadd", x, y) for x, y in zip(a.regs, b.regs)))
            if op == "fsub":
                return Val("f64", tuple(self.em.mau("dvadd", x, y, neg=(1,)) for x, y in zip(a.regs, b.regs)))
            if op == "fmul":
                return Val("f64", tuple(self.fmul64(x, y) for x, y in zip(a.regs, b.regs)))
            return Val("f64", tuple(self.fdiv64(x, y) for x, y in zip(a.regs, b.regs)))
        x, y = a.regs[0], b.regs[0]
        if op == "fadd":
            return Val("f32", (self.em.mau("fvadd", x, y),))
        if op == "fsub":
            return Val("f32", (self.em.mau("fvadd", x, y, neg=(1,)),))
        if op == "fmul":
            return Val("f32", (self.em.mau("fvmul", x, y),))
        return Val("f32", (self.fdiv32(x, y),))

    def fdiv32(self, x, y):
        """x / y: Newton reciprocal from the 5-bit rsqrt, then one residual correction (<= 1 ulp)."""
        sign = self.em.c32(0x80000000)
        ay = self.em.alu("iand", y, self.em.c32(0x7FFFFFFF))
        sx = self.em.alu("ixor", x, self.em.alu("iand", y, sign))          # x with the quotient's sign
        r0 = self.em.alu("frsqrt", ay)
        r = self.em.mau("fvmul", r0, r0)
        one = self.em.c32(0x3F800000)
        for _ in range(3):
            e = self.em.mau("fvfma", ay, r, one, neg=(0,))              # 1 - |y| r
            r = self.em.mau("fvfma", r, e, r)
        q = self.em.mau("fvmul", sx, r)
        res = self.em.mau("fvfma", ay, q, sx, neg=(0,))                 # sx - |y| q  (exact)
        return self.em.mau("fvfma", res, r, q)

    def fdiv64(self, x, y):
        sign = self.em.const64(1 << 63)
        ay = self.em.alu("land", y, self.em.const64((1 << 63) - 1))
        sx = self.em.alu("lxor", x, self.em.alu("land", y, sign))
        r0 = self.em.alu("drsqrt", ay)
        r = self.fmul64(r0, r0)
        one = self.em.const64(0x3FF0000000000000)
        nay = self.em.alu("lxor", ay, sign)
        for _ in range(4):
            e = self.fmul64(nay, r, add=one)
            r = self.fmul64(r, e, add=r)
        q = self.fmul64(sx, r)
        res = self.fmul64(nay, q, add=sx)
        return self.fmul64(res, r, add=q)

    def fsqrt32(self, x):
        """sqrt(x) = x * rsqrt(x), rsqrt refined by Newton steps; sqrt(+-0) = +-0 (a subnormal x
        too: flushed, no CL_FP_DENORM), sqrt(inf) = inf."""
        y = self.em.alu("frsqrt", x)
        half = self.em.c32(0x3F000000)
        three_half = self.em.c32(0x3FC00000)
        for _ in range(3):
            hx = self.em.mau("fvmul", x, half)
            t = self.em.mau("fvmul", y, y)
            u = self.em.mau("fvfma", hx, t, three_half, neg=(0,))       # 1.5 - 0.5 x y^2
            y = self.em.mau("fvmul", y, u)
        s = self.em.mau("fvmul", x, y)
        res = self.em.mau("fvfma", s, s, x, neg=(0,))                    # x - s^2
        hy = self.em.mau("fvmul", y, half)
        s = self.em.mau("fvfma", res, hy, s)
        tiny = self.em.flags("uimax", self.em.c32(0x007FFFFF), self.em.alu("iand", x, self.em.c32(0x7FFFFFFF)))
        self.em.masked_copy(self.em.alu("iand", x, self.em.c32(0x80000000)), s, tiny)     # +-0, a subnormal flushed
        self.em.masked_copy(x, s, self.em.flags("ixor", x, self.em.c32(0x7F800000)))     # sqrt(+inf)
        return s

    # conversions ---------------------------------------------------------------------------------
    def cast(self, i: Inst) -> Val:
        op, src = i.op, i.ops[0]
        v = self.em.values.val(src)
        st, dt = src.type, i.type
        if op == "ptrtoint":
            # a pointer's integer value is its byte offset within its buffer (docs/isa.md): differences
            # of pointers into one buffer are right, absolute addresses are not the host's
            off = self.em.memory.ptr_off(v)
            if dt == "i64":
                return Val("i64", self.em.split64(off, signed=False), narrow=off, rng=U32)
            return Val("i32", (off,))
        if op in ("bitcast",) or (op in ("ptrtoint", "inttoptr")):
            if st == dt or (op == "bitcast" and st in ("ptr",)):
                return v
            if op == "bitcast" and KINDS.get(self.em.values.kind_of(st)) == KINDS.get(self.em.values.kind_of(dt)):
                return Val(self.em.values.kind_of(dt), v.regs, narrow=v.narrow)
            raise CodegenError(f"'{op}' from {st} to {dt} is not supported on the emulator device", self.em.line)
        if op == "zext" or op == "sext":
            signed = op == "sext"
            r = I32 if signed else U32
            if within(self.em.values.int_rng(v), (0, I32[1])) or (not signed and " nneg " in f" {i.text} "):
                r = self.em.values.int_rng(v) if within(self.em.values.int_rng(v), (0, I32[1])) else (0, I32[1])   # (nneg: LLVM's word)
            if st == "i1":
                x = v.regs[0] if signed else self.em.alu("iand", v.regs[0], self.em.c32(1))
                v, r = Val("i32", (x,)), ((-1, 0) if signed else (0, 1))
            elif st in self.em.values.SMALL:
                v = self.em.values.norm_small(v, st, signed)
                r = (-(1 << self.em.values.SMALL[st] - 1), (1 << self.em.values.SMALL[st] - 1) - 1) if signed else (0, (1 << self.em.values.SMALL[st]) - 1)
            if dt in ("i32", "i16", "i8"):
                return Val("i32", v.regs, gid_affine=v.gid_affine)
            if dt == "i64":
                hi, lo = self.em.split64(v.regs[0], signed)
                return Val("i64", (hi, lo), narrow=v.regs[0], gid_affine=v.gid_affine, rng=r)
        if op == "trunc":
            if dt == "i1":
                n = self.em.values.narrow(v)
                return Val("b", (self.em.bool_from_mask(self.em.flags("ixor", self.em.alu("iand", n, self.em.c32(1)), self.em.c32(0)),
                                                     invert=True),))
            if dt in ("i32", "i16", "i8"):     # i8/i16 keep don't-care upper bits
                return Val("i32", (self.em.values.narrow(v),), gid_affine=v.gid_affine if dt == "i32" else None,
                           rng=v.rng if dt == "i32" and within(v.rng, I32) else None)
            raise CodegenError(f"truncation to {dt} is not supported on the emulator device yet", self.em.line)
        if op in ("sitofp", "uitofp"):
            u = "u" if op == "uitofp" else ""
            if st in self.em.values.SMALL:
                v, st = self.em.values.norm_small(v, st, not u), "i32"
            if dt == "float" and st in ("i32", "i16", "i8", "i1"):
                return Val("f32", (self.em.alu(u + "fitof", v.regs[0]),))
            if dt == "double":
                regs = self.em.values.wide(v, signed=not u)
                return Val("f64", tuple(self.em.alu(u + "ditof", r) for r in regs))
            if dt == "float" and st == "i64":
                regs = self.em.values.wide(v, signed=not u)
                return self.f64_to_f32(tuple(self.em.alu(u + "ditof", r) for r in regs))
        if op in ("fptosi", "fptoui"):
            if st == "float" and dt == "i32" and op == "fptoui":     # [2^31, 2^32) is past fftoi's range
                return Val("i32", (self.em.join32(*(self.em.alu("udftoi", r) for r in self.f32_to_f64(v.regs[0]))),))
            if st == "float" and dt in ("i32", "i16", "i8"):
                return Val("i32", (self.em.alu("fftoi", v.regs[0]),))
            if st == "double" and dt in ("i64", "i32"):
                regs = tuple(self.em.alu("dftoi", r) for r in v.regs)
                if dt == "i64":
                    return Val("i64", regs)
                return Val("i32", (self.em.join32(*regs),))
            if st == "float" and dt == "i64":
                d = self.f32_to_f64(v.regs[0])
                return Val("i64", tuple(self.em.alu("dftoi", r) for r in d))
        if op == "fpext" and st == "float" and dt == "double":
            regs = self.f32_to_f64(v.regs[0])
            if no_nans(i):
                return Val("f64", regs)
            return Val("f64", tuple(self.widened_specials(d, f) for d, f in zip(regs, self.f32_in_high(v.regs[0]))))
        if op == "fptrunc" and st == "double" and dt == "float":
            return self.f64_to_f32(v.regs)
        raise CodegenError(f"conversion '{op}' from {st} to {dt} is not supported on the emulator device yet",
                           self.em.line)

    def f32_to_f64(self, x):
        hi = self.em.new()
        self.em.op("dvpassa {s0}e {d0}", "mau", (hi,), (x,))
        t = self.em.alu("llsl", x, self.em.c32(32))
        lo = self.em.new()
        self.em.op("dvpassa {s0}e {d0}", "mau", (lo,), (t,))
        return hi, lo

    def f32_in_high(self, x):
        """The (odd, even) float lanes of x each in the high half of a long word (f32_to_f64's order)."""
        return x, self.em.alu("llsl", x, self.em.c32(32))

    def widened_specials(self, d, f):
        """d, the MAU's widening of the float in the high half of f, with f's sign (the MAU makes
        -0 +0) and a quiet NaN where f is a NaN (the MAU makes it inf)."""
        sign = self.em.const64(1 << 63)
        mag = self.em.alu("land", f, self.em.const64(0x7FFFFFFF << 32))
        d = self.em.copy(d)
        self.em.masked_copy(self.em.const64(0x7FF8 << 48), d, self.em.flags("ulmax", mag, self.em.const64(0x7F800001 << 32)))
        return self.em.alu("lor", d, self.em.alu("land", f, sign))

    def f64_to_f32(self, regs) -> Val:
        th, tl = (self.em.mau("dvpassar", r) for r in regs)
        a = self.em.alu("land", th, self.em.const64(0xFFFFFFFF00000000))
        b = self.em.alu("ulsr", tl, self.em.c32(32))
        return Val("f32", (self.em.alu("lor", a, b),))
