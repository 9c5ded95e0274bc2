"""Calls: barriers and no-op intrinsics, fma and the float builtins the ALU has, the integer
intrinsics (min / max / abs, saturating add, funnel shifts, byte and bit reversal), memory
intrinsics (memory.py) and the math library (mathlib.py)."""
from __future__ import annotations

from .irread import Inst
from .ops import VReg
from .emitter import CodegenError
from .values import SMALL, Val
from .nans import callee_base, no_nans
from .mathlib import lower_math


# llvm.<name> integer intrinsics int_call lowers -> whether their operands are signed
INT_CALLS = {"smax": True, "smin": True, "abs": True, "umax": False, "umin": False, "usub": False, "uadd": False}


class Calls:
    """Calls to builtins and intrinsics."""

    def __init__(self, em):
        self.em = em

    def int_call(self, base: str, ty: str, args) -> Val:
        """llvm.smax/smin/umax/umin/abs and the unsigned saturating add and subtract, from the ALU's
        max and min (i8/i16 extended to 32 bits first: their upper bits are don't-care):
        usub.sat(a, b) = max(a, b) - b, uadd.sat(a, b) = min(a, ~b) + b."""
        em = self.em
        signed, kind = INT_CALLS[base], args[0].kind
        a, b = args[0], args[1] if base != "abs" else args[0]     # abs's second operand is an i1 flag
        if ty in SMALL:
            a, b = em.values.norm_small(a, ty, signed), em.values.norm_small(b, ty, signed)
        w, u = ("l" if ty == "i64" else "i"), ("" if signed else "u")
        out = []
        for x, y in zip(a.regs, b.regs):
            if base == "abs":
                out.append(em.alu(w + "max", x, em.alu(w + "sub", em.const64(0), x)))
            elif base == "usub":
                out.append(em.alu(w + "sub", em.alu(u + w + "max", x, y), y))
            elif base == "uadd":
                out.append(em.alu(w + "add", em.alu(u + w + "min", x, em.alu(w + "xor", y, em.const64(-1))), y))
            else:
                out.append(em.alu(u + w + base[1:], x, y))
        return Val(kind, tuple(out))

    def funnel(self, left: bool, ty: str, a: Val, b: Val, c: Val) -> Val:
        """llvm.fshl / llvm.fshr (rotate(), `(x << r) | (x >> (32 - r))`): a:b shifted by c mod the
        width W, the high (fshl) or low (fshr) half kept.  The ALU's shifts take their amount mod
        the lane width, so a 32/64-bit funnel by z never shifts by W: fshl is (a << z) | ((b >> 1)
        >> ~z), fshr ((a << 1) << ~z) | (b >> z); by a constant, one shift each way (z = 0 is an
        operand).  An i8/i16 (upper lane bits don't-care) is a:b in one 32-bit lane, shifted."""
        em = self.em
        W = int(ty[1:])
        wide = W == 64
        shl, shr, not_, and_, or_ = ("llsl", "ulsr", "lnot", "land", "lor") if wide else \
            ("ilsl", "uilsr", "inot", "iand", "ior")
        mask = em.const64 if wide else em.c32
        if c.const is not None:
            z = c.const % W
            if z == 0:
                return a if left else b
            up = z if left else W - z                      # a moves up by this much, b down by W - up
            if W < 32:
                b = Val(b.kind, (em.alu(and_, b.regs[0], mask((1 << W) - 1)),))
            return Val(a.kind, tuple(em.alu(or_, em.alu(shl, x, em.c32(up)), em.alu(shr, y, em.c32(W - up)))
                                     for x, y in zip(a.regs, b.regs)))
        if W < 32:
            t = em.alu(or_, em.alu(shl, a.regs[0], em.c32(W)), em.alu(and_, b.regs[0], mask((1 << W) - 1)))
            z = em.alu(and_, c.regs[0], mask(W - 1))
            return Val(a.kind, (em.alu(shr, em.alu(shl, t, z), em.c32(W)) if left else em.alu(shr, t, z),))
        one = em.c32(1)
        out = []
        for x, y, n in zip(a.regs, b.regs, em.values.wide(c, signed=False) if wide else c.regs):
            if left:
                out.append(em.alu(or_, em.alu(shl, x, n), em.alu(shr, em.alu(shr, y, one), em.alu(not_, n))))
            else:
                out.append(em.alu(or_, em.alu(shl, em.alu(shl, x, one), em.alu(not_, n)), em.alu(shr, y, n)))
        return Val(a.kind, tuple(out))

    def reverse(self, v: Val, ty: str, unit: int) -> Val:
        """Reverse the order of v's `unit`-bit fields (8: llvm.bswap, 1: llvm.bitreverse): swap
        neighbouring fields, then pairs of them and so on up to the lane's halves (a shift and a mask
        each way), then shift an i8/i16 down from the top of its 32-bit lane (whose upper bits are
        don't-care, and leave at the bottom)."""
        em = self.em
        wide = ty == "i64"
        lane = 64 if wide else 32
        shl, shr, and_, or_ = ("llsl", "ulsr", "land", "lor") if wide else ("ilsl", "uilsr", "iand", "ior")
        mask = em.const64 if wide else em.c32
        out = []
        for x in v.regs:                        # an i64 Val holds two registers (KINDS)
            s = unit
            while s < lane:
                low = sum(((1 << s) - 1) << k for k in range(0, lane, 2 * s))     # the even fields of width s
                x = em.alu(or_, em.alu(and_, em.alu(shr, x, em.c32(s)), mask(low)),
                           em.alu(shl, em.alu(and_, x, mask(low)), em.c32(s)))
                s *= 2
            out.append(em.alu(shr, x, em.c32(lane - int(ty[1:]))) if int(ty[1:]) < lane else x)
        return Val(v.kind, tuple(out))

    # calls -------------------------------------------------------------------------------------------
    def call(self, i: Inst, p: VReg):
        em = self.em
        name, base = i.callee, callee_base(i)
        get = em.values.raw if base in ("fmuladd", "fma") else em.values.val      # chain operations (nans.py)
        args = [get(o) for o in i.ops if not (isinstance(o, tuple) and o[0] in ("fn", "meta"))]
        if name == "__mncl_barrier":
            em.has_barrier = True
            return None              # lock-step SIMD: every access before it has completed
        if name.startswith(("llvm.lifetime", "llvm.assume", "llvm.dbg", "llvm.experimental.noalias")):
            return None
        ty = i.type
        wide = ty == "double"
        if base in ("fmuladd", "fma") and ty in ("float", "double"):
            em.flops += 2
            if wide:
                v = Val("f64", tuple(em.floats.fmul64(x, y, add=z) for x, y, z in zip(*(a.regs for a in args))))
            else:
                v = Val("f32", (em.mau("fvfma", args[0].regs[0], args[1].regs[0], args[2].regs[0]),))
            return em.nans.lazy_result(i, v, ("fma", *args))
        if base == "fabs":
            m = em.const64((1 << 63) - 1) if wide else em.c32(0x7FFFFFFF)
            return Val(args[0].kind, tuple(em.alu("land", r, m) for r in args[0].regs))
        if base == "sqrt" and ty == "float":
            v = Val("f32", (em.floats.fsqrt32(args[0].regs[0]),))
            if not no_nans(i):       # a negative x gives a finite number, not +-inf: settled at once
                v.lazy = ("sqrt", args[0])
                em.nans.fix_nans(v, guard=False)
                v.lazy = None
            return v
        if base in ("minnum", "maxnum", "minimum", "maximum") and ty in ("float", "double"):
            mn = ("d" if wide else "f") + ("min" if "min" in base else "max")
            out = []
            for x, y in zip(args[0].regs, args[1].regs):
                r = em.alu(mn, x, y)
                if base in ("minnum", "maxnum") and not no_nans(i):   # a NaN operand gives the other
                    for a, b in ((args[0], y), (args[1], x)):
                        if a.const is None:
                            em.masked_copy(b, r, em.nans.nan_mask(a.regs[len(out)], wide))
                out.append(r)
            return Val(args[0].kind, tuple(out))
        if base == "floor" and ty in ("float", "double"):
            out = []
            mag = em.const64((1 << 63) - 1) if wide else em.c32(0x7FFFFFFF)
            for r in args[0].regs:       # the ALU's floor makes -0 +0: floor(+-0) is x
                f = em.alu(("d" if wide else "f") + "floor", r)
                em.masked_copy(r, f, em.flags(("l" if wide else "i") + "and", r, mag))
                out.append(f)
            return Val(args[0].kind, tuple(out))
        if base in INT_CALLS and ty in ("i8", "i16", "i32", "i64"):
            return self.int_call(base, ty, args)
        if base in ("fshl", "fshr") and ty in ("i8", "i16", "i32", "i64"):
            return self.funnel(base == "fshl", ty, *args)
        if base in ("bswap", "bitreverse") and ty in ("i1", "i8", "i16", "i32", "i64"):
            return args[0] if ty == "i1" else self.reverse(args[0], ty, 8 if base == "bswap" else 1)
        if name == "__mncl_local":
            return Val("ptr", base=("local",), off=Val("i32", (em.workitems.local_base(),)), coff=args[0].const)
        if base in ("memset", "memcpy", "memmove"):
            return em.memory.mem_intrinsic(base, args, p)
        v = lower_math(em, base, ty, args, p)
        if v is not None:
            return v
        raise CodegenError(f"function '{name}' is not supported on the emulator device yet", em.line)
