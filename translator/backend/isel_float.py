"""Instruction selection for floating point: arithmetic (fp64 multiply in two MAU steps),
division and sqrt by Newton sequences, compares with IEEE NaNs, and the conversions between
integer and float kinds."""
from __future__ import annotations

from .irread import Const, Inst
from .ops import VReg
from .emitter import CodegenError
from .values import I32, KINDS, SMALL, U32, Val, within
from .nans import callee_base, fast_math_flags, no_nans
from .mathlib import _D, lower_math


class FloatSelection:
    """Float instructions and conversions."""

    def __init__(self, em):
        self.em = em

    def fmul64(self, x, y, add=None):
        """fp64 x * y (+ add) on all four PEs of each MAB: the u and d halves."""
        em = self.em
        t = em.new()
        if add is None:
            em.op("dvmulu {s0} {s1} {d0}", "mau", (t,), (x, y))
            d = em.new()
            em.op("dvfmad {s0} {s1} {s2} {d0}", "mau", (d,), (x, y, t))
        else:
            em.op("dvfmau {s0} {s1} {s2} {d0}", "mau", (t,), (x, y, add))
            d = em.new()
            em.op("dvfmad {s0} {s1} {s2} {d0}", "mau", (d,), (x, y, t))
        return d

    def is_nan(self, v: Val) -> VReg:
        """A bool per lane: v is a NaN (its magnitude bits above infinity's), by integer compares."""
        em = self.em
        if v.const is not None:
            return em.c32(-1 if v.const != v.const else 0)
        if v.kind == "f64":
            mag = Val("i64", tuple(em.alu("land", r, em.const64(0x7FFFFFFFFFFFFFFF)) for r in v.regs))
            return em.ints.cmp_pair("lmax", Val("i64", (em.const64(0x7FF0000000000000),) * 2), mag, invert=True)
        mag = em.alu("iand", v.regs[0], em.c32(0x7FFFFFFF))
        return em.bool_from_mask(em.flags("imax", em.c32(0x7F800000), mag), invert=True)

    def fcmp(self, pred, a: Val, b: Val) -> VReg:
        """IEEE predicates: the compare on the values (a NaN compares as its bit pattern), then
        false where an operand is a NaN for the ordered ones, true for the unordered ones."""
        em = self.em
        if pred == "true":
            return em.c32(-1)
        if pred == "false":
            return em.c32(0)
        nans = [self.is_nan(x) for x in (a, b) if x.const is None or x.const != x.const]
        uno = nans[0] if len(nans) == 1 else em.b_or(*nans) if nans else None
        if pred in ("ord", "uno"):
            if uno is None:
                return em.c32(0 if pred == "uno" else -1)
            return uno if pred == "uno" else em.b_not(uno)
        c = self.fcmp_values(pred[1:], a, b)
        if uno is None:
            return c
        return em.b_or(c, uno) if pred[0] == "u" else em.b_and(c, em.b_not(uno))

    def fcmp_values(self, p, a: Val, b: Val) -> VReg:
        em = self.em
        wide = a.kind == "f64"
        mn = "dmax" if wide else "fmax"

        def ge(x, y, invert=False):
            if wide:
                return em.ints.cmp_pair(mn, x, y, invert=invert)
            return em.bool_from_mask(em.flags(mn, x.regs[0], y.regs[0]), invert)
        if p in ("ge",):
            return ge(a, b)
        if p == "le":
            return ge(b, a)
        if p == "lt":
            return ge(a, b, True)
        if p == "gt":
            return ge(b, a, True)
        if p in ("eq", "ne"):
            e = em.b_and(ge(a, b), ge(b, a))
            return e if p == "eq" else em.b_not(e)
        raise CodegenError(f"floating-point comparison '{p}' is not supported", em.line)

    # floating point ------------------------------------------------------------------------------
    def float_op(self, i: Inst) -> Val:
        em = self.em
        op = i.op
        wide = i.type == "double"
        if i.type not in ("float", "double"):
            raise CodegenError(f"floating-point type {i.type} is not supported on the emulator device", em.line)
        if op == "frem":                  # fmod: exact long division (mathlib)
            return lower_math(em, "fmod", i.type, [em.values.val(o) for o in i.ops])
        chain = op != "fdiv"              # a division's operands are settled (nans.py)
        if op == "fmul":                  # x * 1 and x * -1 are exact: x and -x, not lazy MAU products
            for x, c in ((i.ops[0], i.ops[1]), (i.ops[1], i.ops[0])):
                if isinstance(c, Const) and isinstance(c.value, float) and c.value in (1.0, -1.0):
                    v = em.values.raw(x)
                    return v if c.value == 1.0 else self.negate(i, v, wide)
        a = em.values.raw(i.ops[0]) if chain else em.values.val(i.ops[0])
        if op == "fneg":
            return self.negate(i, a, wide)
        if op == "fdiv" and not wide and self.is_rsqrt(i):
            em.flops += 1
            x = em.values.val(i.ops[1].ops[0])
            return Val("f32", (self.frsqrt32(x.regs[0], nans=not no_nans(i)),))
        b = em.values.raw(i.ops[1]) if chain else em.values.val(i.ops[1])
        v = self.float_arith(op, wide, a, b)
        if op == "fdiv":                  # exact: its special values are fixed at once
            if not no_nans(i):
                v.regs = tuple(em.nans.division_specials(q, x, y, wide) for q, x, y in zip(v.regs, a.regs, b.regs))
            return v
        return em.nans.lazy_result(i, v, ({"fadd": "add", "fsub": "sub", "fmul": "mul"}[op], a, b))

    @staticmethod
    def is_rsqrt(i: Inst) -> bool:
        """`fdiv afn 1.0, sqrt afn x` (float): OpenCL's rsqrt, or 1 / sqrt under -cl-fast-relaxed-math,
        which lets it be approximated (LLVM's `afn`; `fast` includes it)."""
        d = i.ops[1]
        afn = lambda x: bool({"afn", "fast"} & fast_math_flags(x))
        return i.type == "float" and isinstance(i.ops[0], Const) and i.ops[0].value == 1.0 and afn(i) \
            and isinstance(d, Inst) and d.op == "call" and callee_base(d) == "sqrt" and afn(d)

    def negate(self, i: Inst, a: Val, wide: bool) -> Val:
        """-a by its sign bit (exact; lazy when a is: nans.py)."""
        em = self.em
        sign = em.const64(1 << 63) if wide else em.c32(0x80000000)
        v = Val(a.kind, tuple(em.alu("lxor", r, sign) for r in a.regs))
        return em.nans.lazy_result(i, v, ("neg", a)) if a.lazy else v

    def float_arith(self, op, wide, a: Val, b: Val) -> Val:
        em = self.em
        em.flops += 1
        if wide:
            if op == "fadd":
                return Val("f64", tuple(em.mau("dvadd", x, y) for x, y in zip(a.regs, b.regs)))
            if op == "fsub":
                return Val("f64", tuple(em.mau("dvadd", x, y, neg=(1,)) for x, y in zip(a.regs, b.regs)))
            if op == "fmul":
                return Val("f64", tuple(self.fmul64(x, y) for x, y in zip(a.regs, b.regs)))
            return Val("f64", self.fdiv64(tuple(a.regs), tuple(b.regs)))
        x, y = a.regs[0], b.regs[0]
        if op == "fadd":
            return Val("f32", (em.mau("fvadd", x, y),))
        if op == "fsub":
            return Val("f32", (em.mau("fvadd", x, y, neg=(1,)),))
        if op == "fmul":
            return Val("f32", (em.mau("fvmul", x, y),))
        return Val("f32", (self.fdiv32(x, y),))

    def fdiv32(self, x, y):
        """x / y: Newton reciprocal from the 5-bit rsqrt, then one residual correction (<= 1 ulp)."""
        em = self.em
        sign = em.c32(0x80000000)
        ay = em.alu("iand", y, em.c32(0x7FFFFFFF))
        sx = em.alu("ixor", x, em.alu("iand", y, sign))          # x with the quotient's sign
        r0 = em.alu("frsqrt", ay)
        r = em.mau("fvmul", r0, r0)
        one = em.c32(0x3F800000)
        for _ in range(3):
            e = em.mau("fvfma", ay, r, one, neg=(0,))              # 1 - |y| r
            r = em.mau("fvfma", r, e, r)
        q = em.mau("fvmul", sx, r)
        res = em.mau("fvfma", ay, q, sx, neg=(0,))                 # sx - |y| q  (exact)
        return em.mau("fvfma", res, r, q)

    def fdiv64(self, x, y):
        """x / y correctly rounded (mathlib's _D.div_cr) for registers x, y, or for tuples of
        registers (the lanes of a double Val) at once, sharing their constants; special values
        are nans.division_specials' work."""
        D = _D(self.em, len(x) if isinstance(x, tuple) else 1, prologue=True)
        q = D.div_cr(x, y)
        for lane in zip(*((x, y) if isinstance(x, tuple) else ((x,), (y,))), *D.parts):
            self.em.div_parts[lane[:2]] = lane[2:]        # |x|, |y|, the sign: for division_specials
        return q if isinstance(x, tuple) else q[0]

    def fsqrt32(self, x):
        """sqrt(x) = x * rsqrt(x), rsqrt refined by Newton steps; sqrt(+-0) = +-0 (a subnormal x
        too: flushed, no CL_FP_DENORM), sqrt(inf) = inf."""
        em = self.em
        y = em.alu("frsqrt", x)
        half = em.c32(0x3F000000)
        three_half = em.c32(0x3FC00000)
        for _ in range(3):
            hx = em.mau("fvmul", x, half)
            t = em.mau("fvmul", y, y)
            u = em.mau("fvfma", hx, t, three_half, neg=(0,))       # 1.5 - 0.5 x y^2
            y = em.mau("fvmul", y, u)
        s = em.mau("fvmul", x, y)
        res = em.mau("fvfma", s, s, x, neg=(0,))                    # x - s^2
        hy = em.mau("fvmul", y, half)
        s = em.mau("fvfma", res, hy, s)
        tiny = em.flags("uimax", em.c32(0x007FFFFF), em.alu("iand", x, em.c32(0x7FFFFFFF)))
        em.masked_copy(em.alu("iand", x, em.c32(0x80000000)), s, tiny)     # +-0, a subnormal flushed
        em.masked_copy(x, s, em.flags("ixor", x, em.c32(0x7F800000)))     # sqrt(+inf)
        return s

    def frsqrt32(self, x, nans=True):
        """rsqrt(x), OpenCL's builtin (2 ulp allowed), where the program asks for it (`fdiv afn 1,
        sqrt afn x`: builtins.py): the 5-bit seed and three Newton steps y + y/2 (1 - x y^2), a
        third of `1 / sqrt(x)`'s steps; rsqrt(+-0) = +-inf (a subnormal x too: flushed, no
        CL_FP_DENORM), rsqrt(+inf) = +0 and, unless the program rules NaNs out, NaN for x < 0
        and x NaN."""
        em = self.em
        y = em.alu("frsqrt", x)
        half, one = em.c32(0x3F000000), em.c32(0x3F800000)
        for _ in range(3):            # (x y and y/2 stay normal for every normal x; x/2 and y^2 would not)
            e = em.mau("fvfma", em.mau("fvmul", x, y), y, one, neg=(0,))     # 1 - x y^2
            y = em.mau("fvfma", em.mau("fvmul", y, half), e, y)
        inf = em.c32(0x7F800000)
        if nans:      # (x >= +inf unsigned: +inf, NaNs and every x < 0; the masks below fix +inf and -0)
            em.masked_copy(em.c32(0x7FC00000), y, em.flags("uimax", x, inf))
        em.masked_copy(em.c32(0), y, em.flags("ixor", x, inf))                                # +inf
        tiny = em.flags("uimax", em.c32(0x007FFFFF), em.alu("iand", x, em.c32(0x7FFFFFFF)))
        em.masked_copy(em.alu("ior", em.alu("iand", x, em.c32(0x80000000)), inf), y, tiny)   # +-0
        return y

    # conversions ---------------------------------------------------------------------------------
    def cast(self, i: Inst) -> Val:
        em = self.em
        op, src = i.op, i.ops[0]
        v = em.values.val(src)
        st, dt = src.type, i.type
        if op == "ptrtoint":
            # a pointer's integer value is its byte offset within its buffer (docs/isa.md): differences
            # of pointers into one buffer are right, absolute addresses are not the host's
            off = em.memory.ptr_off(v)
            if dt == "i64":
                return Val("i64", em.split64(off, signed=False), narrow=off, rng=U32)
            return Val("i32", (off,))
        if op in ("bitcast",) or (op in ("ptrtoint", "inttoptr")):
            if st == dt or (op == "bitcast" and st in ("ptr",)):
                return v
            if op == "bitcast" and KINDS.get(em.values.kind_of(st)) == KINDS.get(em.values.kind_of(dt)):
                return Val(em.values.kind_of(dt), v.regs, narrow=v.narrow)
            raise CodegenError(f"'{op}' from {st} to {dt} is not supported on the emulator device", em.line)
        if op == "zext" or op == "sext":
            signed = op == "sext"
            r = I32 if signed else U32
            if within(em.values.int_rng(v), (0, I32[1])) or (not signed and " nneg " in f" {i.text} "):
                # non-negative (nneg: LLVM's word)
                r = em.values.int_rng(v) if within(em.values.int_rng(v), (0, I32[1])) else (0, I32[1])
            if st == "i1":
                x = v.regs[0] if signed else em.alu("iand", v.regs[0], em.c32(1))
                v, r = Val("i32", (x,)), ((-1, 0) if signed else (0, 1))
            elif st in SMALL:
                v = em.values.norm_small(v, st, signed)
                r = (-(1 << SMALL[st] - 1), (1 << SMALL[st] - 1) - 1) if signed else (0, (1 << SMALL[st]) - 1)
            if dt in ("i32", "i16", "i8"):
                return Val("i32", v.regs, gid_affine=v.gid_affine)
            if dt == "i64":
                hi, lo = em.split64(v.regs[0], signed)
                return Val("i64", (hi, lo), narrow=v.regs[0], gid_affine=v.gid_affine, rng=r)
        if op == "trunc":
            if dt == "i1":
                n = em.values.narrow(v)
                return Val("b", (em.bool_from_mask(em.flags("ixor", em.alu("iand", n, em.c32(1)), em.c32(0)),
                                                   invert=True),))
            if dt in ("i32", "i16", "i8"):     # i8/i16 keep don't-care upper bits
                return Val("i32", (em.values.narrow(v),), gid_affine=v.gid_affine if dt == "i32" else None,
                           rng=v.rng if dt == "i32" and within(v.rng, I32) else None)
            raise CodegenError(f"truncation to {dt} is not supported on the emulator device yet", em.line)
        if op in ("sitofp", "uitofp"):
            u = "u" if op == "uitofp" else ""
            if st in SMALL:
                v, st = em.values.norm_small(v, st, not u), "i32"
            if dt == "float" and st in ("i32", "i16", "i8", "i1"):
                return Val("f32", (em.alu(u + "fitof", v.regs[0]),))
            if dt == "double":
                regs = em.values.wide(v, signed=not u)
                return Val("f64", tuple(em.alu(u + "ditof", r) for r in regs))
            if dt == "float" and st == "i64":
                regs = em.values.wide(v, signed=not u)
                return self.f64_to_f32(tuple(em.alu(u + "ditof", r) for r in regs))
        if op in ("fptosi", "fptoui"):
            if st == "float" and dt == "i32" and op == "fptoui":     # [2^31, 2^32) is past fftoi's range
                return Val("i32", (em.join32(*(em.alu("udftoi", r) for r in self.f32_to_f64(v.regs[0]))),))
            if st == "float" and dt in ("i32", "i16", "i8"):
                return Val("i32", (em.alu("fftoi", v.regs[0]),))
            if st == "double" and dt in ("i64", "i32"):
                regs = tuple(em.alu("dftoi", r) for r in v.regs)
                if dt == "i64":
                    return Val("i64", regs)
                return Val("i32", (em.join32(*regs),))
            if st == "float" and dt == "i64":
                d = self.f32_to_f64(v.regs[0])
                return Val("i64", tuple(em.alu("dftoi", r) for r in d))
        if op == "fpext" and st == "float" and dt == "double":
            regs = self.f32_to_f64(v.regs[0])
            if no_nans(i):
                return Val("f64", regs)
            return Val("f64", tuple(self.widened_specials(d, f) for d, f in zip(regs, self.f32_in_high(v.regs[0]))))
        if op == "fptrunc" and st == "double" and dt == "float":
            out = self.f64_to_f32(v.regs)
            return out if no_nans(i) else Val("f32", (self.narrowed_nans(v.regs, out.regs[0]),))
        raise CodegenError(f"conversion '{op}' from {st} to {dt} is not supported on the emulator device yet",
                           em.line)

    def f32_to_f64(self, x):
        em = self.em
        hi = em.new()
        em.op("dvpassa {s0}e {d0}", "mau", (hi,), (x,))
        t = em.alu("llsl", x, em.c32(32))
        lo = em.new()
        em.op("dvpassa {s0}e {d0}", "mau", (lo,), (t,))
        return hi, lo

    def f32_in_high(self, x):
        """The (odd, even) float lanes of x each in the high half of a long word (f32_to_f64's order)."""
        em = self.em
        return x, em.alu("llsl", x, em.c32(32))

    def widened_specials(self, d, f):
        """d, the MAU's widening of the float in the high half of f, with f's sign (the MAU makes
        -0 +0) and a quiet NaN where f is a NaN (the MAU makes it inf)."""
        em = self.em
        sign = em.const64(1 << 63)
        mag = em.alu("land", f, em.const64(0x7FFFFFFF << 32))
        d = em.copy(d)
        em.masked_copy(em.const64(0x7FF8 << 48), d, em.flags("ulmax", mag, em.const64(0x7F800001 << 32)))
        return em.alu("lor", d, em.alu("land", f, sign))

    def narrowed_nans(self, regs, res):
        """res (two floats narrowed from the doubles in regs: regs[0] -> the high half) with a quiet
        NaN wherever the double was a NaN, and the double's sign: the MAU's narrowing makes a NaN
        infinity and -0 +0, and a NaN or -0 made by a masked copy (a math function's special case)
        is not one the MAU chains track."""
        em = self.em
        halves = (0xFFFFFFFF00000000, 0x00000000FFFFFFFF)
        sign = em.const64(1 << 63)
        res = em.alu("lor", res, em.alu("land", regs[0], sign))                        # the high float's
        res = em.alu("lor", res, em.alu("ulsr", em.alu("land", regs[1], sign), em.c32(32)))   # the low one's
        m = None
        for r, half in zip(regs, halves):
            nan = em.bool_from_mask(em.flags("lmax", em.alu("land", r, em.const64((1 << 63) - 1)),
                                             em.const64(0x7FF0000000000001)))
            part = em.alu("land", nan, em.const64(half))
            m = part if m is None else em.alu("lor", m, part)
        keep = em.alu("land", res, em.alu("lxor", m, em.const64((1 << 64) - 1)))
        return em.alu("lor", keep, em.alu("land", m, em.const64(0x7FC000007FC00000)))

    def f64_to_f32(self, regs) -> Val:
        em = self.em
        th, tl = (em.mau("dvpassar", r) for r in regs)
        a = em.alu("land", th, em.const64(0xFFFFFFFF00000000))
        b = em.alu("ulsr", tl, em.c32(32))
        return Val("f32", (em.alu("lor", a, b),))
