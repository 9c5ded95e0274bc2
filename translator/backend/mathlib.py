"""Math builtins as sequences of machine instructions (see docs/language.md for their accuracy).

``lower_math(em, name, ty, args, p)`` gives the Val of ``name(args)`` for an LLVM
intrinsic's base name (``exp`` for ``llvm.exp.f32``) or a library function
(``tanhf``), or None when the function is not one of these; ``frexp``, ``remquo``
and ``lgamma_r`` also store their int through the private variable of their last
argument (under predicate p), and ``frem`` (fmod) comes here from isel_float.

How.  The machine has no transcendental instructions: the ALU gives floor,
float <-> integer conversions, a 5-bit rsqrt seed and integer operations on the
bit patterns; the MAU gives fp64 add and (two-step, see ``fmul64``) multiply and
multiply-add, each rounded to nearest (a multiply-add rounds twice: it is not
fused), with results normalised (subnormals flush to +0, -0 becomes +0, NaN
becomes infinity).  So every function here is range reduction done exactly with
integer tricks and split constants (Cody-Waite), a polynomial, and a rebuild,
all in fp64, followed by ALU fix-ups for the special values (NaN, infinities,
zeros, negative arguments) that the MAU cannot carry:

* **float** functions widen both work-items of the f32 register to fp64 lanes,
  run the fp64 algorithm at a lower target accuracy (shorter polynomials, no
  double-double corrections: about 2^-36 relative), and round once to float.
  The result is within about 0.5 ulp + 2^-10 ulp of the exact value.
* **double** functions run on the Val's two 64-bit-lane registers.  Where one
  rounding error matters they carry the lost low part explicitly: Dekker's
  exact product (``_two_prod``, splitting by an integer rounding of the bit
  pattern), exact residuals for sqrt and division, a double-double log for pow.

Integer intrinsics (smax/smin/umax/umin/abs of i8/i16/i64, ctpop/ctlz/cttz) are
exact ALU sequences.

Constants live in registers made with an inline ``limm`` where they are used (not
in the prologue), so a kernel that calls many functions does not keep every
coefficient live for its whole length.
"""
from __future__ import annotations

import struct
from decimal import Context, Decimal
from fractions import Fraction
from math import factorial

from .values import SMALL, Val
from .ops import MaskReg, VReg, WhileAny
from .emitter import CodegenError

M64 = (1 << 64) - 1
SIGN = 1 << 63
ABS = SIGN - 1
FRAC = (1 << 52) - 1
INF = 0x7FF0000000000000
QNAN = 0x7FF8000000000000
ONE = 0x3FF0000000000000
MAGIC = 1.5 * 2.0 ** 52          # x + MAGIC rounds x to an integer held in the low mantissa bits


def _bits(v: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", v))[0]


def _float(b: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", b & M64))[0]


# ------------------------------------------------------------------ constants, to 60 digits
_C = Context(prec=60)
_PI = Decimal("3.14159265358979323846264338327950288419716939937510582097494459")
_LN2 = _C.ln(Decimal(2))
_LN10 = _C.ln(Decimal(10))


def _trunc_bits(d: Decimal, bits: int) -> float:
    """d rounded to `bits` significant bits (so products with small integers stay exact)."""
    f = float(d)
    e = (_bits(f) >> 52 & 0x7FF) - 1023
    q = Decimal(2) ** (e - bits + 1)
    return float(_C.multiply(_C.to_integral_value(_C.divide(d, q)), q))


def _split(d: Decimal, bits: int):
    hi = _trunc_bits(d, bits)
    return hi, float(_C.subtract(d, Decimal(hi)))


def _grid(d: Decimal, frac_bits: int) -> float:
    """d rounded to a multiple of 2^-frac_bits."""
    q = Decimal(2) ** -frac_bits
    return float(_C.multiply(_C.to_integral_value(_C.divide(d, q)), q))


LOG2E = float(_C.divide(1, _LN2))
# ln 2 on a 2^-42 grid (k * LN2_HI is exact for |k| < 2^11), and the rest
LN2_HI = _grid(_LN2, 42)
LN2_LO = float(_C.subtract(_LN2, Decimal(LN2_HI)))
LOG2_10 = float(_C.divide(_LN10, _LN2))
LG2 = _C.divide(_LN2, _LN10)                         # log10(2)
LG2_HI, LG2_LO = _split(LG2, 40)
IL2_HI, IL2_LO = float(_C.divide(1, _LN2)), float(_C.subtract(_C.divide(1, _LN2), Decimal(float(_C.divide(1, _LN2)))))
IL10_HI = float(_C.divide(1, _LN10))
IL10_LO = float(_C.subtract(_C.divide(1, _LN10), Decimal(IL10_HI)))
# pi/2 in three parts: n * P1 and n * P2 are exact for |n| < 2^20
_PIO2 = _C.divide(_PI, 2)
PIO2_1 = _trunc_bits(_PIO2, 33)
PIO2_2 = _trunc_bits(_C.subtract(_PIO2, Decimal(PIO2_1)), 33)
PIO2_3 = float(_C.subtract(_C.subtract(_PIO2, Decimal(PIO2_1)), Decimal(PIO2_2)))
TWO_OVER_PI = float(_C.divide(2, _PI))

# Taylor coefficients, lowest degree first
EXP_D = [1.0 / factorial(k) for k in range(14)]            # |r| <= ln2/2: truncation 2^-57.7
EXP_F = [1.0 / factorial(k) for k in range(10)]            # 2^-37


def _scaled(c: Decimal, n):
    return [float(_C.divide(_C.power(c, k), factorial(k))) for k in range(n)]


EXPM1_D = [1.0 / factorial(k) for k in range(17)]         # |r| <= 0.7: 2^-57
EXPM1_F = [1.0 / factorial(k) for k in range(13)]         # 2^-39
EXP2_F, EXP10_F = _scaled(_LN2, 10), _scaled(_LN10, 10)
LN2_D = float(_LN2)
LN2_D_LO = float(_C.subtract(_LN2, Decimal(LN2_D)))
LN10_D = float(_LN10)
LN10_D_LO = float(_C.subtract(_LN10, Decimal(LN10_D)))
# sin r = r + r z SIN(z), cos r = 1 - z/2 + z^2 COS(z), z = r^2, |r| <= pi/4
SIN_D = [(-1) ** (k + 1) / factorial(2 * k + 3) for k in range(8)]      # to r^17: 2^-62
SIN_F = [(-1) ** (k + 1) / factorial(2 * k + 3) for k in range(5)]      # to r^11: 2^-36
COS_D = [(-1) ** k / factorial(2 * k + 4) for k in range(7)]            # to r^16: 2^-58
COS_F = [(-1) ** k / factorial(2 * k + 4) for k in range(5)]            # to r^12: 2^-39
# log(1+u)-(1-u) series: log m = log c + 2 s + s z ATANH(z), s = (m-c)/(m+c), z = s^2 <= 0.00134
ATANH_D = [2.0 / (2 * k + 3) for k in range(5)]                         # 2^-61
ATANH_F = [2.0 / (2 * k + 3) for k in range(3)]                         # 2^-41

# log: m in [sqrt(1/2), sqrt(2)) is split at 2^(+-0.1), 2^(+-0.3) into five intervals around
# c = 2^(j/5) rounded to 8 bits; log c on the same 2^-42 grid as LN2_HI so k ln2 + log c is exact
LOG_T = [_bits(float(_C.power(Decimal(2), Decimal(e)))) for e in ("-0.3", "-0.1", "0.1", "0.3")]
LOG_C = [round(float(_C.power(Decimal(2), Decimal(j) / 5)) * 128) / 128 for j in (-2, -1, 0, 1, 2)]
LOG_LC_HI = [_grid(_C.ln(Decimal(c)), 42) for c in LOG_C]
LOG_LC_LO = [float(_C.subtract(_C.ln(Decimal(c)), Decimal(h))) for c, h in zip(LOG_C, LOG_LC_HI)]


# ------------------------------------------------------------------ fp64 lane arithmetic
class _D:
    """fp64 and int64 operations on tuples of 64-bit-lane registers (a double Val's two, or
    a float Val's two work-items widened).  Operands: a tuple (one register per lane), a VReg
    (the same in every lane), a float (a constant value) or an int (a constant bit pattern)."""

    def __init__(self, em, n=2, prologue=False):
        self.em, self.n = em, n
        self.prologue = prologue         # constants made once in the kernel's prologue (em.const64)

    # operands
    def kb(self, bits: int) -> VReg:
        """A register holding the pattern, made where it is used (an ALU step, usually free
        beside the MAU work) so that no constant stays live across a long computation."""
        bits &= M64
        if self.prologue:
            return self.em.const64(bits)
        r = self.em.new(f"k{bits:x}")
        self.em.op(f"limm 0x{bits:016x} {{d0}}", "alu", (r,), ())
        return r

    def L(self, a) -> tuple:
        if isinstance(a, tuple):
            return a
        if isinstance(a, VReg):
            return (a,) * self.n
        if isinstance(a, float):
            return (self.kb(_bits(a)),) * self.n
        if isinstance(a, int):
            return (self.kb(a),) * self.n
        raise TypeError(a)

    # MAU (fp64, each result rounded; multiply-adds round twice)
    def add(self, a, b):
        return tuple(self.em.mau("dvadd", x, y) for x, y in zip(self.L(a), self.L(b)))

    def sub(self, a, b):
        return tuple(self.em.mau("dvadd", x, y, neg=(1,)) for x, y in zip(self.L(a), self.L(b)))

    def _fma1(self, x, y, z, nx=False, nz=False):
        em = self.em
        t, d = em.new(), em.new()
        sx = "-" if nx else ""
        if z is None:
            em.op(f"dvmulu {sx}{{s0}} {{s1}} {{d0}}", "mau", (t,), (x, y))
        else:
            em.op(f"dvfmau {sx}{{s0}} {{s1}} {'-' if nz else ''}{{s2}} {{d0}}", "mau", (t,), (x, y, z))
        em.op(f"dvfmad {sx}{{s0}} {{s1}} {{s2}} {{d0}}", "mau", (d,), (x, y, t))
        return d

    def mul(self, a, b, neg=False):
        return tuple(self._fma1(x, y, None, neg) for x, y in zip(self.L(a), self.L(b)))

    def fma(self, a, b, c, na=False, nc=False):
        """(+-a*b) +- c, rounded after the product and after the sum."""
        return tuple(self._fma1(x, y, z, na, nc) for x, y, z in zip(self.L(a), self.L(b), self.L(c)))

    def poly(self, x, coeffs):
        """Horner: coeffs[0] + x coeffs[1] + ... (lowest degree first)."""
        p = self.fma(float(coeffs[-1]), x, float(coeffs[-2]))
        for c in reversed(coeffs[:-2]):
            p = self.fma(p, x, float(c))
        return p

    # ALU
    def ia(self, mn, *srcs):
        return tuple(self.em.alu(mn, *xs) for xs in zip(*(self.L(s) for s in srcs)))

    def abs(self, a):
        return self.ia("land", a, ABS)

    def neg(self, a):
        return self.ia("lxor", a, SIGN)

    def flags(self, mn, *srcs):
        return tuple(self.em.flags(mn, *xs) for xs in zip(*(self.L(s) for s in srcs)))

    def sel(self, masks, a, b):
        """a where the lane's mask is set, else b."""
        out = []
        for k, x, y in zip(masks, self.L(a), self.L(b)):
            d = self.em.copy(y)
            self.em.masked_copy(x, d, k)
            out.append(d)
        return tuple(out)

    def put(self, masks, a, into):
        """into[lane] = a where the mask is set (in place)."""
        for k, x, d in zip(masks, self.L(a), into):
            self.em.masked_copy(x, d, k)
        return into

    def bools(self, masks):
        """Masks -> 0 / -1 long words."""
        return tuple(self.em.bool_from_mask(k) for k in masks)

    # masks
    def ge_i(self, a, b):            # signed 64-bit a >= b
        return self.flags("lmax", a, b)

    def ge_f(self, a, b):            # float a >= b (sign-magnitude order, -0 == +0)
        return self.flags("dmax", a, b)

    def is_nan(self, x):
        return self.ge_i(self.abs(x), INF + 1)

    def is_inf_or_nan(self, x):
        return self.ge_i(self.abs(x), INF)

    def is_zero(self, x):            # +-0
        return self.flags("llsl", x, 1)

    def is_neg(self, x):             # sign bit set (-0 included)
        return self.ge_i(-1, x)

    # building blocks
    def rint_small(self, t):
        """(t rounded to an integer as a float, the same as an int64) for |t| < 2^51."""
        nf = self.add(t, MAGIC)
        ni = self.ia("lsub", nf, _bits(MAGIC))
        return self.sub(nf, MAGIC), ni

    def subnormal_bits(self, v):
        """The integer nearest v for 0 <= v <= 2^52 (as an int64): the bits of a subnormal result
        scaled by 2^1074 (the MAU would flush the result itself)."""
        return self.ia("lsub", self.add(v, 2.0 ** 52), _bits(2.0 ** 52))

    def pow2(self, ni):
        """2^n for int64 n in [-1022, 1023], as a float."""
        return self.ia("llsl", self.ia("ladd", ni, 1023), 52)

    def scale(self, p, ni):
        """p * 2^n for |n| < 2044, in two exact steps (overflow gives inf, underflow 0)."""
        n1 = self.ia("llsr", ni, 1)
        n2 = self.ia("lsub", ni, n1)
        return self.mul(self.mul(p, self.pow2(n1)), self.pow2(n2))

    def split(self, a):
        """Dekker split: a = hi + lo exactly, hi with 26 significant bits and |lo| <= 2^-27 |a|
        (hi is a rounded at bit 27 of the bit pattern, so both halves have at most 26 bits)."""
        hi = self.ia("land", self.ia("ladd", a, 1 << 26), M64 ^ ((1 << 27) - 1))
        return hi, self.sub(a, hi)

    def two_prod(self, a, b, bsplit=None):
        """(p, e) with p = fl(a b) and p + e = a b exactly (Dekker; no fused multiply-add)."""
        p = self.mul(a, b)
        ah, al = self.split(a)
        bh, bl = bsplit or self.split(b)
        t = self.fma(ah, bh, p, nc=True)
        t = self.fma(ah, bl, t)
        t = self.fma(al, bh, t)
        return p, self.fma(al, bl, t)

    def recip(self, d, iters):
        """1/d for d > 0 (normal): the rsqrt seed squared (~4.5 bits), then Newton steps."""
        y = self.ia("drsqrt", d)
        r = self.mul(y, y)
        for _ in range(iters):
            e = self.fma(d, r, 1.0, na=True)
            r = self.fma(r, e, r)
        return r

    def div(self, a, b, acc):
        """a / b for finite b != 0: correctly rounded ('d', div_cr) or about 2^-50 ('f')."""
        if acc == "d":
            return self.div_cr(a, b)
        sa = self.ia("lxor", a, self.ia("land", b, SIGN))
        return self.mul(sa, self.recip(self.abs(b), 4))

    def exp_split(self, z):
        """(w, m) for z = |x|: w the pattern of z with the exponent field made signed and exact for a
        subnormal z (its bits converted to a double, exponent lowered by 1074; ``llsr w 52`` is then
        the biased exponent, <= 0 below the normal range), m the mantissa in [1, 2)."""
        w = self.ia("lsub", self.ia("uditof", z), 1074 << 52)
        self.put(self.flags("ulmax", z, 1 << 52), z, w)           # normal (or inf / NaN): z
        return w, self.ia("lor", self.ia("land", w, FRAC), ONE)

    def div_cr(self, a, b):
        """a / b correctly rounded (IEEE round to nearest even) for finite a, b != 0 whose
        quotient is a normal double, subnormal operands included; a quotient beyond the largest
        double is inf, one below the normal range (flushed by the MAU) the zero of its sign.
        0 / b is +-0; a / 0, infinities and NaNs give some number (nans.division_specials puts
        the IEEE results there).

        The mantissas m_a, m_b in [1, 2) (a subnormal's from an exact integer-to-double
        conversion of its bits) are divided, and the quotient scaled by 2^(e_a - e_b) in two exact
        MAU steps, which overflow to inf and underflow to 0 where the quotient does.  Division of
        the mantissas: 1/m_b from the rsqrt seed and three Newton steps (relative error about
        2^-32), q0 = m_a r, the residual m_a - q0 m_b by Dekker's split (its first three steps are
        exact, the last rounds once), q1 = q0 + residual * r, which is faithful (within an ulp,
        between the two doubles around the quotient).  The residual of q1 is exact
        (|m_a - q1 m_b| < ulp: 53 bits on the grid of the products), and the quotient m_a / m_b
        lies beyond the midpoint between q1 and its upper neighbour exactly when that residual
        exceeds m_b * ulp(q1)/2 (an exact product: a power of two times m_b, made on the ALU),
        beyond the lower midpoint when it is below -m_b * ulp(q1)/2 (where q1 is a power of two
        the lower ulp is half as large, but then the quotient is never between the two
        thresholds: m_a / m_b is 1 or at least 2^-52 / m_b away from 1).  A quotient of two
        doubles is never a midpoint itself, so there is no tie to break."""
        ax, ay = self.abs(a), self.abs(b)
        sgn = self.ia("land", self.ia("lxor", a, b), SIGN)
        self.parts = (ax, ay, sgn)                     # for nans.division_specials

        wx, mx = self.exp_split(ax)
        wy, my = self.exp_split(ay)
        # 2^k = 2^n1 2^n2 with k = e_a - e_b clamped to [-2046, 2046] (beyond: 0 or inf anyway)
        k2 = self.ia("ladd", self.ia("lsub", self.ia("llsr", wx, 52), self.ia("llsr", wy, 52)), 2046)
        k2 = self.ia("lmin", self.ia("lmax", k2, 0), 4092)
        n1 = self.ia("llsr", k2, 1)
        p1 = self.ia("llsl", n1, 52)                                   # 2^(n1 - 1023)
        p2 = self.ia("llsl", self.ia("lsub", k2, n1), 52)
        r = self.recip(my, 3)
        bh, bl = self.split(my)

        def residual(q):                                               # m_a - q m_b
            qh, ql = self.split(q)
            t = self.fma(qh, bh, mx, na=True)
            t = self.fma(qh, bl, t, na=True)
            t = self.fma(ql, bh, t, na=True)
            return self.fma(ql, bl, t, na=True)
        q0 = self.mul(mx, r)
        q1 = self.fma(residual(q0), r, q0)
        r1 = residual(q1)
        tu = self.ia("ladd", self.ia("land", q1, INF), self.ia("lsub", my, 1076 << 52))   # m_b ulp(q1) / 2
        res = self.ia("ladd", q1, 1)                                   # beyond the upper midpoint
        self.put(self.ge_f(tu, r1), q1, res)
        self.put(self.ge_f(self.neg(tu), r1), self.ia("lsub", q1, 1), res)     # below the lower one
        return self.ia("lor", self.mul(self.mul(res, p1), p2), sgn)


def _exp_core(D: _D, x, acc, base="e", xl=None, adj=0, times=None):
    """base^x (e^(x + xl) for base e) for finite or infinite x, times 2^adj and, in 'd', `times` (a
    factor taken in before the last rounding: times + times (e^r - 1)); NaN is the caller's.

    n = rint(x / log_base 2), r = x - n log_base 2 (|r| <= ln2/2 after scaling to base e),
    base^x = 2^n e^r.  'd' keeps r as r + rl and sums e^r = 1 + (r + (rl + r^2 q(r))) so that
    the final rounding dominates; exp2 and exp10 form r ln2 and x ln10 as exact products."""
    d = acc == "d"
    lim = {"e": 800.0, "2": 1100.0, "10": 331.0}[base]
    x = D.ia("dmin", D.ia("dmax", x, -lim), lim)
    rl = xl
    if base == "2":
        nf, ni = D.rint_small(x)
        r0 = D.sub(x, nf)                               # exact
        if not d:
            return D.scale(D.poly(r0, EXP2_F), _adj(D, ni, adj))
        r, e = D.two_prod(r0, LN2_D, bsplit=_const_split(D, LN2_D))
        rl = D.add(e, D.mul(r0, LN2_D_LO))
    else:
        if base == "10" and d:                          # e^(x ln10), x ln10 as an exact product
            p, e = D.two_prod(x, LN10_D, bsplit=_const_split(D, LN10_D))
            rl = D.add(e, D.mul(x, LN10_D_LO))
            x = p
            base = "e"
        hi, lo, c = (LN2_HI, LN2_LO, LOG2E) if base == "e" else (LG2_HI, LG2_LO, LOG2_10)
        nf, ni = D.rint_small(D.mul(x, c))
        r = D.fma(nf, hi, x, na=True)                 # exact: n * hi has < 53 bits, x - n hi by Sterbenz
        r = D.fma(nf, lo, r, na=True)
        if not d:
            return D.scale(D.poly(r, EXP_F if base == "e" else EXP10_F), _adj(D, ni, adj))
    if rl is not None:                                  # r + rl -> r + (a remainder below r's ulp)
        r2 = D.add(r, rl)
        rl = D.sub(rl, D.sub(r2, r))
        r = r2
    q = D.fma(D.mul(r, r), D.poly(r, EXP_D[2:]), rl) if rl is not None else D.mul(D.mul(r, r), D.poly(r, EXP_D[2:]))
    p = D.add(1.0, D.add(r, q)) if times is None else D.fma(times, D.add(r, q), times)
    return D.scale(p, _adj(D, ni, adj))


def _adj(D, ni, adj):
    return D.ia("ladd", ni, adj) if adj else ni


def _expm1_core(D: _D, x, acc):
    """e^x - 1 without cancellation: n = 0 for |x| < 0.7 (r = x), else n, r as for exp and
    e^x - 1 = 2^n (e^r - 1) + (2^n - 1), or 2^n e^r when 2^n - 1 rounds to 2^n."""
    d = acc == "d"
    x = D.ia("dmin", D.ia("dmax", x, -60.0), 760.0)
    nf, ni = D.rint_small(D.mul(x, LOG2E))
    small_x = D.ge_f(0.7, D.abs(x))
    nf = D.put(small_x, 0, nf)
    ni = D.put(small_x, 0, ni)
    r = D.fma(nf, LN2_HI, x, na=True)
    r = D.fma(nf, LN2_LO, r, na=True)
    q = D.poly(r, (EXPM1_D if d else EXPM1_F)[2:])     # (e^r - 1 - r) / r^2
    p = D.add(r, D.mul(D.mul(r, r), q))                # e^r - 1
    s = D.pow2(D.ia("lmin", ni, 60))
    small = D.add(D.mul(s, p), D.sub(s, 1.0))
    big = D.scale(D.add(p, 1.0), ni)                   # n > 56: the -1 is below an ulp
    return D.sel(D.ge_i(ni, 57), big, small)


def _log_core(D: _D, x, acc, want_lo=False):
    """log x for positive finite x as (hi, lo) (lo None unless want_lo).

    x = 2^k m, m in [sqrt(1/2), sqrt(2)) by integer operations on the bits; c is the nearest of
    five short constants (|m/c - 1| < 0.077), s = (m - c)/(m + c) (|s| < 0.037) with its
    rounding error from an exact residual, log m = log c + 2 atanh s."""
    d = acc == "d"
    tiny = D.ge_i((1 << 52) - 1, x)                    # subnormal (or zero): scale by 2^54 first
    x = D.sel(tiny, D.mul(x, 2.0 ** 54), x)
    kadj = D.sel(tiny, -54, 0)
    ix = D.ia("ladd", x, ONE - 0x3FE6A09E667F3BCD)
    k = D.ia("ladd", D.ia("lsub", D.ia("llsr", ix, 52), 1023), kadj)
    m = D.ia("ladd", D.ia("land", ix, FRAC), 0x3FE6A09E667F3BCD)
    kf = D.ia("ditof", k)
    c = _log_table(D, m, LOG_C)
    c2 = D.ia("ladd", c, 1 << 52)                      # 2c
    f = D.sub(m, c)                                    # exact (Sterbenz)
    dh = D.add(c2, f)                                  # m + c = 2c + f
    r = D.recip(dh, 4 if d else 3)
    sh = D.mul(f, r)
    z = D.mul(sh, sh)
    t = D.mul(D.mul(sh, z), D.poly(z, ATANH_D if d else ATANH_F))
    lch, lcl = _log_table(D, m, LOG_LC_HI), _log_table(D, m, LOG_LC_LO)
    s1 = D.add(D.mul(kf, LN2_HI), lch)                 # exact: both on the 2^-42 grid
    cc = D.add(sh, sh)
    h0 = D.add(s1, cc)
    small = D.add(D.mul(kf, LN2_LO), lcl)
    if not d:
        return D.add(h0, D.add(t, small)), None
    dl = D.sub(f, D.sub(dh, c2))                       # m + c = dh + dl exactly
    p, e = D.two_prod(sh, dh)
    rho = D.sub(D.sub(D.sub(f, p), e), D.mul(sh, dl))  # f - sh (m + c), exactly enough
    sl = D.mul(rho, r)
    e1 = D.sub(cc, D.sub(h0, s1))                      # Fast2Sum: |s1| >= |2 sh| or s1 = 0
    lo = D.add(D.add(t, D.add(D.add(sl, sl), small)), e1)
    hi = D.add(h0, lo)
    if not want_lo:
        return hi, None
    return hi, D.sub(lo, D.sub(hi, h0))


def _log_table(D: _D, m, table):
    """table[j] for the interval j of m (thresholds LOG_T)."""
    return _pick(D, m, LOG_T, [table])[0]


def _log_fix(D: _D, x, res):
    """log's special values: log(+-0) = -inf, log(x < 0) = NaN, log(inf) = inf, NaN -> NaN."""
    res = D.sel(D.is_inf_or_nan(x), x, res)
    res = D.sel(D.is_neg(x), QNAN, res)
    return D.sel(D.is_zero(x), INF | SIGN, res)


def _log_lanes(kind):
    def fn(D, x, acc):
        if acc == "f" or kind == "e":
            h, _ = _log_core(D, x, acc)
            if kind == "2":
                h = D.mul(h, IL2_HI)
            elif kind == "10":
                h = D.mul(h, IL10_HI)
            return _log_fix(D, x, h)
        h, lo = _log_core(D, x, acc, want_lo=True)
        chi, clo = (IL2_HI, IL2_LO) if kind == "2" else (IL10_HI, IL10_LO)
        p, e = D.two_prod(h, chi, bsplit=_const_split(D, chi))
        t = D.add(D.add(D.mul(h, clo), D.mul(lo, chi)), e)
        return _log_fix(D, x, D.add(p, t))
    return fn


def _const_split(D, c: float):
    hi = _float((_bits(c) + (1 << 26)) & (M64 ^ ((1 << 27) - 1)))
    return D.L(hi), D.L(c - hi)


def _exp_lanes(base):
    def fn(D, x, acc):
        return _exp_core(D, x, acc, base)
    return fn


def _expm1_lanes(D, x, acc):
    return _expm1_core(D, x, acc)


def _log1p_lanes(D, x, acc):
    """log(1 + x) = log u + (x - (u - 1)) / u with u = fl(1 + x): the correction restores what
    rounding 1 + x lost."""
    u = D.add(x, 1.0)
    h, _ = _log_core(D, u, acc)
    c = D.sub(x, D.sub(u, 1.0))
    res = D.add(h, D.mul(c, D.recip(u, 4)))
    if acc == "d":                                     # |x| < 2^-10: the series, x + x^2 q(x)
        q = D.poly(x, [-1.0 / 2, 1.0 / 3, -1.0 / 4, 1.0 / 5, -1.0 / 6])
        res = D.sel(D.ge_f(2.0 ** -10, D.abs(x)), D.fma(D.mul(x, x), q, x), res)
    res = D.sel(D.is_inf_or_nan(x), x, res)
    res = D.put(D.ge_f(-1.0, x), QNAN, res)            # x < -1 (and -inf) ...
    return D.put(D.flags("lxor", x, _bits(-1.0)), INF | SIGN, res)     # ... x = -1: -inf


def _cosh_lanes(D, x, acc):
    """(e^|x| + e^-|x|) / 2, or e^|x| / 2 (scaled inside exp, so no early overflow) past 22."""
    ax = D.ia("dmin", D.abs(x), 800.0)
    e = _exp_core(D, ax, acc)
    near = D.mul(D.add(e, D.recip(D.ia("dmin", e, 2.0 ** 40), 4)), 0.5)
    far = _exp_core(D, ax, acc, adj=-1)
    return D.sel(D.ge_f(22.0, ax), near, far)


def _sinh_lanes(D, ax, acc):                           # odd: (t + t / (t + 1)) / 2, t = e^|x| - 1
    a = D.ia("dmin", ax, 800.0)
    t = _expm1_core(D, D.ia("dmin", a, 22.0), acc)
    near = D.mul(D.add(t, D.div(t, D.add(t, 1.0), acc)), 0.5)
    far = _exp_core(D, a, acc, adj=-1)
    return D.sel(D.ge_f(22.0, a), near, far)


def _sincos_core(D: _D, ax, acc):
    """(sin r, cos r, n) with ax = n pi/2 + r, |r| <= pi/4, for 0 <= ax < 2^20 pi/2."""
    d = acc == "d"
    nf, ni = D.rint_small(D.mul(ax, TWO_OVER_PI))
    r1 = D.fma(nf, PIO2_1, ax, na=True)                # exact
    w = D.mul(nf, PIO2_2)                              # exact
    rh0 = D.sub(r1, w)
    w3 = D.mul(nf, PIO2_3)
    rh = D.sub(rh0, w3)
    z = D.mul(rh, rh)
    hz = D.mul(z, 0.5)
    if d:
        tail = D.sub(D.sub(r1, rh0), w)                # the low part lost in rh0 and rh
        rl = D.add(D.sub(D.sub(rh0, rh), w3), tail)
        s = D.add(rh, D.add(D.mul(D.mul(rh, z), D.poly(z, SIN_D)), rl))
        wc = D.sub(1.0, hz)
        corr = D.sub(D.sub(1.0, wc), hz)               # exact: the rounding error of 1 - z/2
        c = D.add(wc, D.add(corr, D.sub(D.mul(D.mul(z, z), D.poly(z, COS_D)), D.mul(rh, rl))))
    else:
        s = D.fma(D.mul(rh, z), D.poly(z, SIN_F), rh)
        c = D.add(D.sub(1.0, hz), D.mul(D.mul(z, z), D.poly(z, COS_F)))
    return s, c, ni


def _sin_lanes(D, ax, acc):                            # odd: ax = |x|
    s, c, ni = _sincos_core(D, ax, acc)
    even = D.flags("land", ni, 1)
    v = D.sel(even, s, c)
    res = D.ia("lxor", v, D.ia("llsl", D.ia("land", ni, 2), 62))
    return D.sel(D.is_inf_or_nan(ax), QNAN, res)


def _cos_lanes(D, x, acc):
    ax = D.abs(x)
    s, c, ni = _sincos_core(D, ax, acc)
    even = D.flags("land", ni, 1)
    v = D.sel(even, c, s)
    res = D.ia("lxor", v, D.ia("llsl", D.ia("land", D.ia("ladd", ni, 1), 2), 62))
    return D.sel(D.is_inf_or_nan(ax), QNAN, res)


def _tan_lanes(D, ax, acc):                            # odd
    s, c, ni = _sincos_core(D, ax, acc)
    even = D.flags("land", ni, 1)
    num = D.sel(even, s, D.neg(c))
    den = D.sel(even, c, s)
    res = D.div(num, den, acc)
    return D.sel(D.is_inf_or_nan(ax), QNAN, res)


def _tanh_lanes(D, ax, acc):                           # odd: tanh |x| = t / (t + 2), t = e^(2|x|) - 1
    a = D.ia("dmin", ax, 22.0)
    t = _expm1_core(D, D.add(a, a), acc)
    return D.div(t, D.add(t, 2.0), acc)


def _sqrt_lanes(D, x, acc):
    """sqrt: Newton on (s, h) ~ (sqrt x, 1/(2 sqrt x)) from the rsqrt seed; 'd' then corrects s
    with the exact residual x - s^2 and checks the rounding against the neighbours' midpoints
    (Tuckerman), which makes it correctly rounded."""
    d = acc == "d"
    xs = x
    if d:                                              # keep s^2's split products normal
        tiny = D.ge_i(_bits(2.0 ** -900), x)
        big = D.ge_i(x, _bits(2.0 ** 900))
        xs = D.sel(tiny, D.mul(x, 2.0 ** 1000), x)
        xs = D.put(big, D.mul(x, 2.0 ** -1000), xs)
        post = D.sel(tiny, 2.0 ** -500, 1.0)
        post = D.put(big, 2.0 ** 500, post)
    y = D.ia("drsqrt", xs)
    s = D.mul(xs, y)
    h = D.mul(y, 0.5)
    for _ in range(3 if d else 4):
        r = D.fma(s, h, 0.5, na=True)
        s = D.fma(s, r, s)
        h = D.fma(h, r, h)
    if d:
        s = D.fma(_residual(D, xs, s), h, s)
        r1 = _residual(D, xs, s)
        up = D.ia("ladd", s, 1)
        dn = D.ia("lsub", s, 1)
        tu = D.mul(s, D.sub(up, s))                    # s ulp_up  (exact)
        td = D.mul(s, D.sub(s, dn), neg=True)          # -s ulp_down
        res = D.sel(D.ge_f(tu, r1), s, up)
        res = D.put(D.ge_f(td, r1), dn, res)
        s = D.mul(res, post)
    s = D.sel(D.is_inf_or_nan(x), x, s)                # +inf, NaN
    s = D.put(D.is_neg(x), QNAN, s)                    # x < 0, -inf
    return D.put(D.is_zero(x), x, s)                   # +-0


def _residual(D, x, s):
    """x - s^2, exactly when s is within an ulp of sqrt x (Dekker's split, no fused multiply-add)."""
    sh, sl = D.split(s)
    t = D.fma(sh, sh, x, na=True)                      # x - sh^2: exact
    t = D.fma(D.add(sh, sh), sl, t, na=True)
    return D.fma(sl, sl, t, na=True)


def _hypot_lanes(D, x, y, acc):
    ax, ay = D.abs(x), D.abs(y)
    a = D.ia("dmax", ax, ay)
    b = D.ia("dmin", ax, ay)
    if acc == "f":                                     # float operands: no overflow in fp64
        h = _sqrt_lanes(D, D.fma(a, a, D.mul(b, b)), "f")
    else:                                              # scale a into [1, 4) by a power of two
        e = D.ia("lmin", D.ia("lmax", D.ia("ulsr", a, 52), 1), 2045)
        sc = D.ia("llsl", D.ia("lsub", 2046, e), 52)
        isc = D.ia("llsl", e, 52)
        a1, b1 = D.mul(a, sc), D.mul(b, sc)
        h = D.mul(_sqrt_lanes(D, D.fma(a1, a1, D.mul(b1, b1)), "d"), isc)
    h = D.sel(D.is_zero(a), 0, h)
    h = D.put(D.is_nan(x), QNAN, h)
    h = D.put(D.is_nan(y), QNAN, h)
    h = D.put(D.flags("lxor", ax, INF), INF, h)         # an infinity wins over NaN
    return D.put(D.flags("lxor", ay, INF), INF, h)


def _pow_lanes(D, x, y, acc):
    """pow: e^(y log|x|) with log|x| in double-double for 'd'; then the C99/OpenCL special cases."""
    d = acc == "d"
    ax = D.abs(x)
    h, lo = _log_core(D, ax, acc, want_lo=d)
    if d:
        p, e = D.two_prod(y, h)
        wl = D.add(e, D.mul(y, lo))
        wl = D.ia("dmin", D.ia("dmax", wl, -2.0 ** -20), 2.0 ** -20)   # inf / NaN garbage when |w| is huge
        res = _exp_core(D, p, acc, "e", xl=wl)
    else:
        res = _exp_core(D, D.mul(y, h), acc, "e")
    # y an integer (inf counts: floor |y| == |y|), odd when also |y| < 2^53 and its low bit is set
    ay = D.abs(y)
    intb = D.bools(D.flags("lxor", D.ia("dfloor", ay), ay))
    odd = D.ia("land", D.ia("llsl", D.ia("dftoi", ay), 63), intb)
    odd = D.put(D.ge_i(ay, _bits(2.0 ** 53)), 0, odd)
    sgn = D.ia("land", x, odd)                          # the sign of the result
    res = D.ia("lxor", res, sgn)
    return _pow_specials(D, x, y, ax, ay, res, sgn, intb)


def _pow_specials(D, x, y, ax, ay, res, sgn, intb):
    # negative finite x with a non-integer finite y
    bad = D.bools(D.is_neg(x))
    bad = D.ia("land", bad, D.bools(D.ge_i(INF - 1, ax)))           # x finite
    bad = D.ia("land", bad, D.ia("lnot", intb))                      # y not an integer
    bad = D.ia("land", bad, D.bools(D.ge_i(INF - 1, ay)))
    bad = D.ia("land", bad, D.ia("lnot", D.bools(D.is_zero(x))))
    res = D.sel(D.flags("lnot", bad), QNAN, res)
    # x = +-0, |x| = inf or |y| = inf: 0 or inf (|x| > 1 and y > 0, or |x| < 1 and y < 0: inf)
    spec = D.ia("lor", D.bools(D.is_zero(x)), D.bools(D.ge_i(ax, INF)))
    spec = D.ia("lor", spec, D.bools(D.flags("lxor", ay, INF)))
    gt1 = D.bools(D.ge_i(ax, ONE + 1))
    ypos = D.bools(D.ge_i(y, 1))                                     # y > +0 (bits, sign clear)
    mag = D.ia("land", D.ia("lnot", D.ia("lxor", gt1, ypos)), INF)
    res = D.sel(D.flags("lnot", spec), D.ia("lor", mag, sgn), res)
    # NaN in: NaN
    res = D.put(D.is_nan(x), QNAN, res)
    res = D.put(D.is_nan(y), QNAN, res)
    # pow(x, +-0) = 1, pow(+1, y) = 1, pow(-1, +-inf) = 1
    res = D.put(D.is_zero(y), ONE, res)
    res = D.put(D.flags("lxor", x, ONE), ONE, res)
    m1 = D.ia("land", D.bools(D.flags("lxor", x, ONE | SIGN)), D.bools(D.flags("lxor", ay, INF)))
    return D.put(D.flags("lnot", m1), ONE, res)


# ------------------------------------------------------------------ rounding functions (exact)
def _round_fn(em, kind, x: Val) -> Val:
    """rint (nearest even), ceil, trunc, round (half away from zero), on f32 lanes or f64 lanes.

    |x| >= 2^52 (2^23) is already an integer (or inf/NaN) and is returned as is."""
    wide = x.kind == "f64"
    p = "d" if wide else "f"
    sign = (1 << 63) if wide else 0x80000000
    absm = sign - 1
    big_t = _bits(2.0 ** 52) if wide else 0x4B000000
    k = (lambda v: em.const64(v)) if wide else (lambda v: em.c32(v))
    ibig = "lmax" if wide else "imax"
    out = []
    for r in x.regs:
        a = em.alu("land" if wide else "iand", r, k(absm))
        s = em.alu("land" if wide else "iand", r, k(sign))
        if kind == "rint":
            two = _bits(2.0 ** 52) if wide else 0x4B000000
            t = em.mau(p + "vadd", em.mau(p + "vadd", a, k(two)), k(two), neg=(1,))
            v = em.alu("lor", t, s)
        elif kind == "trunc":
            v = em.alu("lor", em.alu(p + "floor", a), s)
        elif kind == "round":
            t = em.alu(p + "floor", a)
            frac = em.mau(p + "vadd", a, t, neg=(1,))                # exact
            half = k(_bits(0.5) if wide else 0x3F000000)
            up = em.flags(p + "max", frac, half)                     # frac >= 0.5
            one = k(ONE if wide else 0x3F800000)
            em.masked_copy(em.mau(p + "vadd", t, one), t, up)
            v = em.alu("lor", t, s)
        else:                                                        # ceil x = -floor(-x)
            v = em.alu("lxor", em.alu(p + "floor", em.alu("lxor", r, k(sign))), k(sign))
        if kind == "ceil":                                           # the result has x's sign (ceil(+0) = +0)
            v = em.alu("lor", em.alu("land", v, k(absm)), s)
        big = em.flags(ibig, a, k(big_t))
        em.masked_copy(r, v, big)
        out.append(v)
    return Val(x.kind, tuple(out))


# ------------------------------------------------------------------ float <-> lanes
def _to64(em, x32: VReg):
    """A float register's two work-items as fp64 lanes (exact; the sign of zero kept)."""
    hi, lo = em.floats.f32_to_f64(x32)
    s = em.const64(SIGN)
    hi = em.alu("lor", hi, em.alu("land", x32, s))
    lo = em.alu("lor", lo, em.alu("land", em.alu("llsl", x32, em.c32(32)), s))
    return hi, lo


def _to32(em, lanes) -> VReg:
    """fp64 lanes -> a float register, NaN kept (the MAU's conversion makes it infinity)."""
    res = em.floats.f64_to_f32(lanes).regs[0]
    D = _D(em)
    hi, lo = D.bools(D.is_nan(lanes))
    both = em.alu("lor", em.alu("land", hi, em.const64(0xFFFFFFFF00000000)), em.alu("land", lo, em.const64(0xFFFFFFFF)))
    em.masked_copy(em.c32(0x7FC00000), res, em.mask_of(both))
    sign = em.const64(SIGN)                            # and the sign of a zero (the MAU gives +0)
    s = em.alu("lor", em.alu("land", lanes[0], sign), em.alu("ulsr", em.alu("land", lanes[1], sign), em.c32(32)))
    return em.alu("lor", res, s)


def _nan32(em, r: VReg):
    """Mask of the float lanes holding NaN."""
    return em.flags("imax", em.alu("iand", r, em.c32(0x7FFFFFFF)), em.c32(0x7F800001))


def _lanes(em, fn, acc, *args):
    """fn on each 64-bit lane in turn: one lane's values live at a time (the kernel around a call
    may leave few registers free), at the cost of less overlap between the two chains."""
    out = []
    for k in range(len(args[0])):
        out.append(fn(_D(em, 1), *((a[k],) for a in args), acc)[0])
    return tuple(out)


def _unary(em, ty, x: Val, fn, odd=False, sub=False):
    """fn on x's lanes (odd: on |x|, the sign put back); sub: float results below the normal range
    are rounded to subnormals (_f32_subnormals), not flushed."""
    if ty == "double":
        D = _D(em)
        xs = D.abs(x.regs) if odd else x.regs
        res = _lanes(em, fn, "d", xs)
        if odd:
            res = D.ia("lxor", res, D.ia("land", x.regs, SIGN))
        return Val("f64", D.sel(D.is_nan(x.regs), x.regs, res))
    xr = x.regs[0]
    src = em.alu("iand", xr, em.c32(0x7FFFFFFF)) if odd else xr
    D = _D(em)
    lanes = _lanes(em, fn, "f", _to64(em, src))
    res = _to32(em, lanes)
    if sub:
        res = _f32_subnormals(em, lanes, res)
    if odd:
        res = em.alu("ixor", res, em.alu("iand", xr, em.c32(0x80000000)))
    em.masked_copy(xr, res, _nan32(em, xr))
    return Val("f32", (res,))


def _binary(em, ty, x: Val, y: Val, fn, nan_keep=None):
    if ty == "double":
        return Val("f64", _lanes(em, lambda D, a, b, acc: fn(D, a, b, acc), "d", x.regs, y.regs))
    xr, yr = x.regs[0], y.regs[0]
    res = _to32(em, _lanes(em, lambda D, a, b, acc: fn(D, a, b, acc), "f", _to64(em, xr), _to64(em, yr)))
    # NaN operands were widened to infinities: put the NaN back where the result depends on it
    qn = em.c32(0x7FC00000)
    em.masked_copy(qn, res, _nan32(em, xr))
    em.masked_copy(qn, res, _nan32(em, yr))
    if nan_keep:
        nan_keep(em, xr, yr, res)
    return Val("f32", (res,))


def _pow_keep32(em, xr, yr, res):
    one = em.c32(0x3F800000)
    em.masked_copy(one, res, em.flags("ixor", xr, one))                          # pow(1, y)
    em.masked_copy(one, res, em.flags("ilsl", yr, em.c32(1)))                    # pow(x, +-0)


def _hypot_keep32(em, xr, yr, res):
    inf = em.c32(0x7F800000)
    em.masked_copy(inf, res, em.flags("ixor", em.alu("iand", xr, em.c32(0x7FFFFFFF)), inf))
    em.masked_copy(inf, res, em.flags("ixor", em.alu("iand", yr, em.c32(0x7FFFFFFF)), inf))


# ------------------------------------------------------------------ inverse trigonometric, cbrt
# atan u = u + u z ATAN(z), z = u^2, |u| <= tan(pi/12): alternating Taylor series
ATAN_D = [(-1) ** (k + 1) / (2 * k + 3) for k in range(14)]             # z <= 0.0718: 2^-56
ATAN_F = [(-1) ** (k + 1) / (2 * k + 3) for k in range(9)]              # 2^-38
TAN_PI12 = float(_C.subtract(2, _C.sqrt(Decimal(3))))                   # 2 - sqrt 3 = tan(pi/12)
SQRT3 = float(_C.sqrt(Decimal(3)))
PIO6_HI, PIO6_LO = _split(_C.divide(_PI, 6), 53)
PIO2_HI, PIO2_LO = _split(_PIO2, 53)
PIO4 = float(_C.divide(_PI, 4))
PI_HI, PI_LO = _split(_PI, 53)


def _atan_core(D: _D, t, acc):
    """atan t for 0 <= t <= 1: t > tan(pi/12) is reduced by atan t = pi/6 + atan((t sqrt3 - 1) /
    (t + sqrt3)), then the series."""
    mid = D.ge_f(t, TAN_PI12)
    u = D.sel(mid, D.div(D.fma(t, SQRT3, 1.0, nc=True), D.add(t, SQRT3), acc), t)
    z = D.mul(u, u)
    p = D.fma(D.mul(u, z), D.poly(z, ATAN_D if acc == "d" else ATAN_F), u)
    return D.sel(mid, D.add(D.add(p, PIO6_LO), PIO6_HI), p)


def _atan_lanes(D, ax, acc):                           # odd: ax = |x|
    """atan |x|: |x| > 1 as pi/2 - atan(1/|x|) (|x| clamped to 2^60: atan(inf) = pi/2 there)."""
    big = D.ge_f(ax, 1.0)
    a = D.ia("dmin", ax, 2.0 ** 60)
    t = D.sel(big, D.div(1.0, a, acc), a)
    r = _atan_core(D, t, acc)
    return D.sel(big, D.add(D.sub(PIO2_LO, r), PIO2_HI), r)


def _atan2_lanes(D, y, x, acc):
    """atan2(y, x): atan of min/max of |y|, |x| (scaled by a power of two to keep the quotient in
    range), pi/2 minus it where |y| > |x|, pi minus that where x is negative (its sign bit), the
    sign of y; C99's cases for zeros, infinities and NaN."""
    ax, ay = D.abs(x), D.abs(y)
    swap = D.ge_f(ay, ax)                               # |y| >= |x|
    num = D.ia("dmin", ax, ay)
    den = D.ia("dmax", ax, ay)
    hi = D.ge_f(den, 2.0 ** 500)
    num = D.sel(hi, D.mul(num, 2.0 ** -600), num)
    den = D.sel(hi, D.mul(den, 2.0 ** -600), den)
    lo = D.ge_f(2.0 ** -500, den)
    num = D.sel(lo, D.mul(num, 2.0 ** 600), num)
    den = D.sel(lo, D.mul(den, 2.0 ** 600), den)
    den = D.put(D.is_zero(den), 1.0, den)               # both zero: 0 / 1
    r = _atan_core(D, D.div(num, D.ia("dmin", den, 2.0 ** 1000), acc), acc)
    r = D.sel(swap, D.add(D.sub(PIO2_LO, r), PIO2_HI), r)
    r = D.put(D.is_zero(ay), 0.0, r)                    # y = +-0: 0 (then pi for negative x)
    xinf, yinf = D.ge_i(ax, INF), D.ge_i(ay, INF)
    r = D.put(xinf, 0.0, r)                             # x infinite, y finite: 0 or pi
    r = D.put(yinf, PIO2_HI, r)                         # y infinite, x finite: pi/2
    both = D.flags("lxor", D.ia("land", D.bools(xinf), D.bools(yinf)), -1)
    r = D.put(both, PIO4, r)                            # both infinite: pi/4 or 3 pi/4
    r = D.sel(D.is_neg(x), D.add(D.sub(PI_LO, r), PI_HI), r)
    r = D.ia("lor", r, D.ia("land", y, SIGN))
    r = D.put(D.is_nan(x), QNAN, r)
    return D.put(D.is_nan(y), QNAN, r)


def _asin_lanes(D, ax, acc):                           # odd: asin |x| = atan(|x| / sqrt((1-|x|)(1+|x|)))
    w = D.mul(D.sub(1.0, ax), D.add(1.0, ax))
    s = _sqrt_lanes(D, D.ia("dmax", w, 0.0), acc)
    r = _atan_lanes(D, D.div(ax, D.ia("dmax", s, 2.0 ** -1000), acc), acc)
    r = D.put(D.flags("lxor", ax, ONE), PIO2_HI, r)     # |x| = 1
    return D.put(D.ge_i(ax, ONE + 1), QNAN, r)          # |x| > 1


def _acos_lanes(D, x, acc):                            # acos x = 2 atan(sqrt((1 - x) / (1 + x)))
    ax = D.abs(x)
    q = D.div(D.sub(1.0, x), D.ia("dmax", D.add(1.0, x), 2.0 ** -1000), acc)
    r = D.mul(_atan_lanes(D, _sqrt_lanes(D, q, acc), acc), 2.0)
    r = D.put(D.flags("lxor", x, _bits(-1.0)), PI_HI, r)      # x = -1
    return D.put(D.ge_i(ax, ONE + 1), QNAN, r)           # |x| > 1


def _asinh_lanes(D, ax, acc):                          # odd: log1p(a + a^2 / (1 + sqrt(1 + a^2)))
    a = D.ia("dmin", ax, 2.0 ** 500)
    a2 = D.mul(a, a)
    big = D.ge_f(a, 2.0 ** 26)                          # a^2 + 1 = a^2: log(2a)
    r = _log1p_lanes(D, D.add(a, D.div(a2, D.add(1.0, _sqrt_lanes(D, D.add(1.0, a2), acc)), acc)), acc)
    r = D.sel(big, D.add(_log_lanes("e")(D, a, acc), LN2_D), r)
    return D.put(D.ge_i(ax, INF), INF, r)


def _acosh_lanes(D, x, acc):                           # log1p(t + sqrt(t (t + 2))), t = x - 1
    t = D.sub(D.ia("dmin", x, 2.0 ** 500), 1.0)
    big = D.ge_f(x, 2.0 ** 26)
    r = _log1p_lanes(D, D.add(t, _sqrt_lanes(D, D.mul(t, D.add(t, 2.0)), acc)), acc)
    r = D.sel(big, D.add(_log_lanes("e")(D, x, acc), LN2_D), r)
    r = D.put(D.ge_i(x, INF), INF, r)
    return D.put(D.flags("lxor", D.bools(D.ge_f(x, 1.0)), 0), QNAN, r)   # not x >= 1: x < 1, -inf


def _atanh_lanes(D, ax, acc):                          # odd: log1p(2a / (1 - a)) / 2
    r = D.mul(_log1p_lanes(D, D.div(D.add(ax, ax), D.ia("dmax", D.sub(1.0, ax), 2.0 ** -1000), acc), acc), 0.5)
    r = D.put(D.flags("lxor", ax, ONE), INF, r)         # |x| = 1
    return D.put(D.ge_i(ax, ONE + 1), QNAN, r)          # |x| > 1


def _cbrt_lanes(D, ax, acc):                           # odd: e^(log|x| / 3), then Newton steps
    a = D.ia("dmax", ax, 2.0 ** -1070)
    y = _exp_core(D, D.mul(_log_lanes("e")(D, a, acc), 1.0 / 3.0), acc)
    for _ in range(2 if acc == "d" else 1):             # y -= (y^3 - a) / (3 y^2)
        y2 = D.mul(y, y)
        y = D.sub(y, D.div(D.fma(y2, y, a, nc=True), D.mul(y2, 3.0), acc))
    y = D.put(D.is_zero(ax), 0.0, y)
    return D.put(D.ge_i(ax, INF), INF, y)


def _logb_lanes(D, x, acc):
    """The unbiased exponent of |x| as a float (x widened from float is normal in fp64); logb(+-0)
    = -inf, logb(+-inf) = +inf (NaN: the caller's)."""
    ax = D.abs(x)
    e = D.ia("ditof", D.ia("lsub", D.ia("ulsr", ax, 52), 1023))
    e = D.put(D.is_zero(x), _bits(float("-inf")), e)
    return D.put(D.ge_i(ax, INF), INF, e)


def _fdim_lanes(D, x, y, acc):
    """x - y where x > y, else +0; NaN in: NaN."""
    r = D.sel(D.ge_f(y, x), 0.0, D.sub(x, y))
    r = D.put(D.is_nan(x), QNAN, r)
    return D.put(D.is_nan(y), QNAN, r)


# ------------------------------------------------------------------ erf, erfc
_SQRTPI = _C.sqrt(_PI)
# erf x = x ERF(x^2) for |x| <= 1/2: the Taylor series 2/sqrt(pi) sum (-1)^n x^2n / (n! (2n + 1))
ERF_D = [float(_C.divide(2 * (-1) ** n, _C.multiply(_SQRTPI, factorial(n) * (2 * n + 1)))) for n in range(13)]   # 2^-58
ERF_F = ERF_D[:9]                                                                                              # 2^-35
ERF0_LO = float(_C.subtract(_C.divide(2, _SQRTPI), Decimal(ERF_D[0])))
# erfc a = e^(-a^2) erfcx(a) for a >= 1/2: erfcx by polynomials on six intervals, in s = a - centre below 2,
# in s = 1/a^2 - centre above (where erfcx(a) = G(1/a^2) / a): Chebyshev interpolants of mpmath's erfc at
# 40 digits, as (centre, coefficients lowest degree first), relative error in the comments
ERFCX_BOUNDS = [1.0, 1.5, 2.0, 3.0, 4.0]        # [1/2, 1) [1, 1.5) [1.5, 2) in a; [2, 3) [3, 4) [4, 27.5] in 1/a^2
ERFCX_D = [
    (0.75, [0.5069376502931449, -0.3679726916557954, 0.2309581315512983, -0.1298360619948811,
         0.06679054252756655, -0.03189726203968118, 0.014289198666213443, -0.00605153229729106,
         0.0024376373433168705, -0.000938512056293829, 0.0003467512575452147, -0.0001233545520026088,
         4.236125943559736e-05, -1.408512949400527e-05, 4.653752310183548e-06, -1.4567881256540653e-06]),  # 7e-21
    (1.25, [0.3678229164523611, -0.20882187596460985, 0.1067955714965988, -0.05021827439590757,
         0.022011364250856973, -0.009081627632934392, 0.0035531099032542093, -0.001325782929691643,
         0.00047397030874139306, -0.00016296000887578774, 5.40541122285361e-05, -1.734409336769538e-05,
         5.3946692066374445e-06, -1.6304221149021363e-06, 4.893358643758936e-07, -1.4014723295155354e-07]),  # 8e-22
    (1.75, [0.2849722347374364, -0.1309763455144852, 0.05576363008708727, -0.022259995241388327,
         0.008404319207328828, -0.003020974651425132, 0.001039204522447579, -0.00034353335347108127,
         0.00010950528830290082, -3.375535521437002e-05, 1.0086688982312066e-05, -2.927939486626321e-06,
         8.270256850394113e-07, -2.277358935253532e-07, 6.226424227984388e-08, -1.6346008547376946e-08]),  # 1e-22
    (0.18055555555555555, [0.5230854290703457, -0.18769256801198514, 0.16674985080426585,
         -0.21160589604663851, 0.3303212577148162, -0.5929514186217368, 1.1791444120834231,
         -2.5379906346315253, 5.821051364014508, -14.069722025083289, 35.55771177104199,
         -93.30877008939875, 249.83411903469434, -696.6739523293144, 2406.8217417626606, -7107.460764934976]),  # 5e-19
    (0.08680555555555555, [0.5423523579239247, -0.22592263421286918, 0.25047792013028736,
         -0.4174585393490865, 0.889455684436564, -2.2463412384738546, 6.441698669222455,
         -20.40919596013932, 70.11774806695102, -257.72139037612686, 1003.2479656749256,
         -4103.947923828114, 17512.772304421345, -77735.582736846, 377832.1099205165, -1795779.7276228513]),  # 8e-24
    (0.031911157024793385, [0.5555874999971024, -0.2579109955833683, 0.3401877402399647,
         -0.711064140287461, 1.985007313978005, -6.816273438391932, 27.43890690231932, -125.48530473372603,
         637.7963444244688, -3545.1067821009115, 21305.068802411966, -136891.02646295077,
         908734.4098405355, -6501337.167299223, 65213828.308175564, -524707019.5847246]),  # 2e-19
]
ERFCX_F = [
    (0.75, [0.5069376502938031, -0.36797269165602925, 0.23095813102470586, -0.12983606180778126,
         0.06679060987747207, -0.03189728597054881, 0.014286186725900043, -0.006050461966833372,
         0.0024924956775210206, -0.0009580116689668863]),  # 1e-12
    (1.25, [0.36782291645246334, -0.20882187596464263, 0.10679557141479447, -0.05021827436968301,
         0.022011374714963765, -0.009081630987610344, 0.00355264178887919, -0.0013256328448626215,
         0.00048250252587523165, -0.00016569608397905286]),  # 3e-13
    (1.75, [0.2849722347374554, -0.13097634551449072, 0.05576363007186446, -0.022259995236972377,
         0.008404321154801074, -0.0030209752163786762, 0.0010391173793422336, -0.00034350807208012975,
         0.00011109454077501562, -3.4216481556351035e-05]),  # 7e-14
    (0.18055555555555555, [0.5230854290705433, -0.18769256801250672, 0.16674984875641105,
         -0.21160589064291258, 0.3303246425005734, -0.5929603480795549, 1.1771949402126953,
         -2.532850324659395, 6.274827529389826, -15.264864781585054]),  # 5e-13
    (0.08680555555555555, [0.5423523579239249, -0.22592263421286976, 0.2504779201180428,
         -0.4174585392988877, 0.8894558500704386, -2.246341917456596, 6.440915509171237,
         -20.405986210980046, 71.62470071881741, -263.8947498099269]),  # 3e-16
    (0.031911157024793385, [0.5555874999971355, -0.25791099558358394, 0.34018773847024586,
         -0.7110641287736675, 1.985022378363801, -6.8163713956498855, 27.394263830535483,
         -125.19534711408042, 691.1572517630316, -3890.7951940303396]),  # 7e-14
]


def _pick(D: _D, key, bounds, tables):
    """For each table, table[j] for the interval j of key among bounds (bit patterns, ascending; key
    compared as an integer: non-negative doubles), one lane at a time (few masks live)."""
    outs = [[] for _ in tables]
    for lane in range(D.n):
        masks = [D.em.flags("lmax", key[lane], D.kb(b)) for b in bounds]
        for out, table in zip(outs, tables):
            v = D.em.copy(D.kb(_bits(table[0])))
            for mk, val in zip(masks, table[1:]):
                D.em.masked_copy(D.kb(_bits(val)), v, mk)
            out.append(v)
    return [tuple(o) for o in outs]


def _erfc_big(D: _D, a, acc, scale=0):
    """erfc(a) 2^scale for 1/2 <= a (finite): e^(-a^2) from the exact square a^2 = h + l (double),
    times erfcx a from its interval's polynomial; a is clamped to 27.5 (erfc below 2^-1090)."""
    d = acc == "d"
    a = D.ia("dmin", a, 27.5)
    table = ERFCX_D if d else ERFCX_F
    ia = D.recip(a, 4)
    far = D.ge_f(a, 2.0)
    v = D.sel(far, D.mul(ia, ia), a)
    picks = _pick(D, a, [_bits(b) for b in ERFCX_BOUNDS],
                  [[c for c, _ in table]] + [[co[k] for _, co in table] for k in range(len(table[0][1]))])
    s, coef = D.sub(v, picks[0]), picks[1:]
    p = D.fma(coef[-1], s, coef[-2])
    for c in reversed(coef[:-2]):
        p = D.fma(p, s, c)
    p = D.sel(far, D.div(p, a, acc) if d else D.mul(p, ia), p)     # G(1/a^2) / a (double: rounded once)
    if d:                                              # (erfcx taken into exp's last rounding)
        h, l = D.two_prod(a, a)
        return _exp_core(D, D.neg(h), acc, xl=D.neg(l), adj=scale, times=p)
    return D.mul(_exp_core(D, D.neg(D.mul(a, a)), acc, adj=scale), p)


def _erf_small(D: _D, x, acc, one=None):
    """erf x (one - erf x if `one`) for |x| <= 1/2: the Taylor series; 'd' takes the leading term
    x 2/sqrt(pi) as an exact product (with the constant's low part) and sums it last."""
    z = D.mul(x, x)
    if acc != "d":
        e = D.mul(x, D.poly(z, ERF_F))
        return e if one is None else D.sub(one, e)
    ph, pl = D.two_prod(x, ERF_D[0], bsplit=_const_split(D, ERF_D[0]))
    tail = D.add(D.mul(D.mul(x, z), D.poly(z, ERF_D[1:])), D.add(pl, D.mul(x, ERF0_LO)))
    if one is None:
        return D.add(ph, tail)
    s, e = _fast2sum(D, one, D.neg(ph))
    return D.add(s, D.sub(e, tail))


def _erf_lanes(D, ax, acc):                            # odd: erf |x| = 1 - erfc |x| from 1/2 on
    big = D.sub(1.0, _erfc_big(D, D.ia("dmax", ax, 0.5), acc))
    return D.sel(D.ge_f(0.5, ax), _erf_small(D, ax, acc), big)


def _erfc_lanes(D, x, acc):
    """erfc x: 1 - erf x for |x| <= 1/2; beyond, erfc |x| = e^(-x^2) erfcx |x|, and 2 minus that for
    x < 0.  A double result below 2^-1022 is made from its bits (the MAU would flush it): erfc computed
    times 2^64, then rounded to an integer at 2^(1074 - 64) times that."""
    ax = D.abs(x)
    a = D.ia("dmax", ax, 0.5)
    if acc == "d":
        e64 = _erfc_big(D, a, acc, scale=64)
        e = D.sel(D.ge_f(2.0 ** -958, e64), D.subnormal_bits(D.mul(e64, 2.0 ** 1010)), D.mul(e64, 2.0 ** -64))
    else:
        e = _erfc_big(D, a, acc)
    r = D.sel(D.is_neg(x), D.sub(2.0, e), e)
    return D.sel(D.ge_f(0.5, ax), _erf_small(D, x, acc, one=1.0), r)


# ------------------------------------------------------------------ tgamma, lgamma
# Stirling: log G(y) = (y - 1/2) log y - y + log sqrt(2 pi) + S(1/y), S(t) = t sum B_2k / (2k (2k - 1)) t^(2k-2)
_BERN = [Fraction(1, 6), Fraction(-1, 30), Fraction(1, 42), Fraction(-1, 30), Fraction(5, 66), Fraction(-691, 2730),
         Fraction(7, 6), Fraction(-3617, 510), Fraction(43867, 798), Fraction(-174611, 330)]
STIRLING_D = [float(b / (2 * k * (2 * k - 1))) for k, b in enumerate(_BERN, 1)]     # y >= 10: 2^-62
STIRLING_F = STIRLING_D[:5]                                                         # 2^-46
GAMMA_MIN = 10.0                        # below, G(x) = G(x + n) / (x (x + 1) ... (x + n - 1))
LNSQ2PI_HI, LNSQ2PI_LO = _split(_C.divide(_C.ln(_C.multiply(2, _PI)), 2), 53)
LNPI_HI, LNPI_LO = _split(_C.ln(_PI), 53)
# sin(pi f) = f SINPI(f^2) for |f| <= 1/2
SINPI_D = [float(_C.divide(_C.power(_PI, 2 * k + 1) * (-1) ** k, factorial(2 * k + 1))) for k in range(12)]  # 2^-59
SINPI_F = SINPI_D[:9]                                                                                         # 2^-37
# log G(1 + t) and log G(2 + t) for |t| <= 0.1: their Taylor series, -gamma t + sum (-1)^k zeta(k) / k t^k and
# (1 - gamma) t + sum (-1)^k (zeta(k) - 1) / k t^k (coefficients of t, t^2, ...; from mpmath at 40 digits)
LG1_D = [-0.5772156649015329, 0.8224670334241132, -0.40068563438653143, 0.27058080842778454, -0.20738555102867398,
         0.1695571769974082, -0.1440498967688461, 0.12550966952474304, -0.11133426586956469, 0.1000994575127818,
         -0.09095401714582904, 0.083353840546109, -0.0769325164113522, 0.07143294629536133, -0.06666870588242046,
         0.06250095514121304, -0.058823978658684585]                                   # 17 terms: 2^-56
LG2_D = [0.42278433509846713, 0.3224670334241132, -0.0673523010531981, 0.020580808427784546, -0.007385551028673986,
         0.0028905103307415234, -0.001192753911703261, 0.0005096695247430425, -0.00022315475845357939,
         9.945751278180853e-05, -4.492623673813314e-05, 2.050721277567069e-05, -9.439488275268397e-06,
         4.374866789907488e-06]                                                         # 14 terms: 2^-56
LG1_F, LG2_F = LG1_D[:11], LG2_D[:9]                                                    # 2^-34


def _fast2sum(D: _D, a, b):
    """(s, e): s = fl(a + b), s + e = a + b exactly, for |a| >= |b| (or a = 0)."""
    s = D.add(a, b)
    return s, D.sub(b, D.sub(s, a))


def _loop(D: _D, state, cond, body):
    """A WhileAny loop (one lane: D.n == 1) over loop-carried copies of `state` (tuples of registers):
    body(state) -> the next state, run while the mask cond(state) gives is set in any lane; cond gives
    (mnemonic, a, b) of an ALU instruction whose flags are that mask.  Returns the final state."""
    em = D.em
    regs = [(em.copy(D.L(v)[0]),) for v in state]
    k = MaskReg()

    def test():
        mn, a, b = cond(regs)
        em.op(f"{mn} {{s0}} {{s1}} {{K0}}", "alu", (), (D.L(a)[0], D.L(b)[0]), mdst=(k,))
    test()
    outer, em.items = em.items, []
    for new, reg in zip(body(regs), regs):
        em.copy(D.L(new)[0], dst=reg[0])
    test()
    loop, em.items = em.items, outer
    em.items.append(WhileAny(k, loop, em.line))
    return regs


def _two_sum(D: _D, a, b):
    """(s, e): s = fl(a + b), s + e = a + b exactly (Knuth: any magnitudes)."""
    s = D.add(a, b)
    bb = D.sub(s, a)
    return s, D.add(D.sub(a, D.sub(s, bb)), D.sub(b, bb))


def _lgamma_shifted(D: _D, z, acc):
    """(h, l, ph, pl) for -GAMMA_MIN < z < 2^60 (finite): log G(z + n) = h + l by Stirling's series,
    with the shift P = z (z + 1) ... (z + n - 1) = ph + pl (a loop: n the least taking z + n to
    GAMMA_MIN or beyond; 0 from there on, P = 1), so that G(z) = G(z + n) / P.  'd' carries z + k,
    P and the logarithm's sum in double-double (each z + k as an exact sum, each product Dekker's),
    so that log G(z + n) - log |P| is good to about 2^-60 absolutely."""
    d = acc == "d"

    def step(st):
        yh, yl, ph, pl = st
        more = D.ge_f(GAMMA_MIN, yh)
        if not d:
            return D.sel(more, D.add(yh, 1.0), yh), yl, D.sel(more, D.mul(ph, yh), ph), pl
        p, e = D.two_prod(ph, yh)
        nh, nl = _fast2sum(D, p, D.add(D.add(e, D.mul(ph, yl)), D.mul(pl, yh)))
        big = D.ge_f(D.abs(yh), 1.0)                                     # yh + 1 as an exact sum
        s, t = _fast2sum(D, D.sel(big, yh, 1.0), D.sel(big, 1.0, yh))
        return D.sel(more, s, yh), D.sel(more, D.add(yl, t), yl), D.sel(more, nh, ph), D.sel(more, nl, pl)
    yh, yl, ph, pl = _loop(D, (z, 0.0, 1.0, 0.0), lambda st: ("dmax", D.kb(_bits(GAMMA_MIN)), st[0]), step)
    iy = D.recip(yh, 4)
    st = D.mul(iy, D.poly(D.mul(iy, iy), STIRLING_D if d else STIRLING_F))
    t = D.sub(yh, 0.5)                                                   # exact
    if not d:
        lh, _ = _log_core(D, yh, acc)
        h = D.add(D.sub(D.mul(t, lh), yh), D.add(st, LNSQ2PI_HI))
        return h, None, ph, pl
    lh, ll = _log_core(D, yh, acc, want_lo=True)
    ll = D.add(ll, D.mul(yl, iy))                                        # log(yh + yl)
    p, e = D.two_prod(t, lh)
    lo = D.add(D.add(e, D.mul(t, ll)), D.mul(yl, lh))
    w, e1 = _fast2sum(D, p, D.neg(yh))                                   # (y - 1/2) log y >= y from 10 on
    w, e2 = _fast2sum(D, w, LNSQ2PI_HI)
    w, e3 = _fast2sum(D, w, st)
    lo = D.add(lo, D.add(D.add(D.sub(e1, yl), D.add(e2, LNSQ2PI_LO)), e3))
    return _fast2sum(D, w, lo) + (ph, pl)


def _sinpi(D: _D, x, acc):
    """(sin(pi x), the mask of x a nonzero integer) for finite x: f = x - rint x exactly (x beyond
    2^51 is an integer), the Taylor series of sin(pi f), the sign of (-1)^rint(x)."""
    xc = D.ia("dmax", D.ia("dmin", x, 2.0 ** 51), -2.0 ** 51)
    nf, ni = D.rint_small(xc)
    f = D.sub(xc, nf)
    z = D.mul(f, f)
    if acc == "d":                                     # pi f as an exact product plus the rest
        ph, pl = D.two_prod(f, PI_HI, bsplit=_const_split(D, PI_HI))
        s = D.add(ph, D.add(D.add(pl, D.mul(f, PI_LO)), D.mul(D.mul(f, z), D.poly(z, SINPI_D[1:]))))
    else:
        s = D.mul(f, D.poly(z, SINPI_F))
    isint = D.ia("land", D.bools(D.is_zero(f)), D.bools(D.ge_f(D.abs(x), 0.5)))    # (f of a tiny x flushes)
    return D.ia("lxor", s, D.ia("llsl", ni, 63)), D.flags("lnot", isint)


def _gamma_parts(D: _D, x, acc):
    """(wh, wl, sign, isint, la): log |G(x)| = wh + wl (wl None in 'f'), the sign bit of G(x), the mask
    of x a nonzero integer, log |x|.  x > -10: log G(x + n) - log |P| (P's sign is G(x)'s); x <= -10:
    the reflection, log pi - log |x| - log |sin(pi x)| - log G(-x) (sin(pi x) has G(x)'s sign); both
    sums in double-double for double."""
    d = acc == "d"
    refl = D.ge_f(-GAMMA_MIN, x)
    z = D.ia("dmin", D.sel(refl, D.neg(x), x), 2.0 ** 60)
    z = D.put(D.is_inf_or_nan(x), 1.0, z)                                # (no garbage in the loop)
    h, l, ph, pl = _lgamma_shifted(D, z, acc)
    aph = D.abs(ph)
    s, isint = _sinpi(D, x, acc)
    la, lal = _log_core(D, D.ia("dmin", D.abs(x), 2.0 ** 1023), acc, want_lo=d)
    ls, lsl = _log_core(D, D.sel(D.is_zero(s), 1.0, D.abs(s)), acc, want_lo=d)
    sign = D.ia("land", D.sel(refl, s, ph), SIGN)
    if not d:
        wh = D.sub(h, _log_core(D, aph, acc)[0])
        return D.sel(refl, D.sub(D.sub(D.sub(LNPI_HI, la), ls), wh), wh), None, sign, isint, la
    lh, ll = _log_core(D, aph, acc, want_lo=True)
    ll = D.add(ll, D.mul(D.ia("lxor", pl, D.ia("land", ph, SIGN)), D.recip(aph, 2)))   # log |ph + pl|
    wh, wl = _two_sum(D, h, D.neg(lh))
    wl = D.add(wl, D.sub(l, ll))
    rh, e1 = _two_sum(D, LNPI_HI, D.neg(la))
    rh, e2 = _two_sum(D, rh, D.neg(ls))
    rh, e3 = _two_sum(D, rh, D.neg(wh))
    rl = D.add(D.add(e1, e2), D.add(e3, D.sub(D.sub(D.sub(LNPI_LO, lal), lsl), wl)))
    return D.sel(refl, rh, wh), D.sel(refl, rl, wl), sign, isint, la


def _tgamma_lanes(D, x, acc):
    """G(x) = +-e^(log |G(x)|) (_gamma_parts; for double with the logarithm's low part carried into the
    exponential's reduction).  A double result below 2^-1022 is made from its bits (e^W computed times
    2^64, as erfc's).  Poles: G(+-0) = +-inf, a negative integer or -inf gives NaN; G(x) overflows
    beyond 171.62 (35.04 in float); |x| < 2^-1000: 1/x."""
    wh, wl, sign, isint, _ = _gamma_parts(D, x, acc)
    if acc == "d":
        low = D.ge_f(-700.0, wh)
        e64 = _exp_core(D, wh, acc, xl=wl, adj=D.sel(low, 64, 0))
        g = D.sel(low, D.sel(D.ge_f(2.0 ** -958, e64), D.subnormal_bits(D.mul(e64, 2.0 ** 1010)),
                             D.mul(e64, 2.0 ** -64)), e64)
    else:
        g = _exp_core(D, wh, acc)
    r = D.ia("lor", g, sign)
    r = D.put(D.ge_f(2.0 ** -1000, D.abs(x)), D.div(1.0, x, acc), r)    # 1/x - gamma: P would flush
    r = D.put(D.flags("lnot", D.ia("land", D.bools(isint), D.bools(D.is_neg(x)))), QNAN, r)
    r = D.put(D.is_zero(x), D.ia("lor", INF, D.ia("land", x, SIGN)), r)
    r = D.put(D.flags("lxor", x, INF), INF, r)
    return D.put(D.flags("lxor", x, INF | SIGN), QNAN, r)


def _lgamma_sign_lanes(D, x, acc):
    """(log |G(x)|, the sign of G(x) as +-1): _gamma_parts', but for the Taylor series around 1 and 2
    (|x - 1|, |x - 2| <= 0.1, where log G vanishes), x (log x - 1) - log(x) / 2 from 2^60 and -log |x|
    below 2^-1000.  Poles (0, negative integers, +-inf): +inf, the sign glibc's."""
    d = acc == "d"
    wh, wl, sign, isint, la = _gamma_parts(D, x, acc)
    sign = D.sel(D.is_neg(sign), -1, 1)
    g = D.add(wh, wl) if d else wh
    for c, coef in ((1.0, LG1_D if d else LG1_F), (2.0, LG2_D if d else LG2_F)):
        t = D.sub(x, c)                                                # exact near c
        g = D.sel(D.ge_f(0.1, D.abs(t)), D.mul(t, D.poly(t, coef)), g)
    ax = D.abs(x)
    g = D.sel(D.ge_f(ax, 2.0 ** 60), D.fma(ax, D.sub(la, 1.0), D.mul(la, 0.5), nc=True), g)
    tiny = D.ge_f(2.0 ** -1000, ax)                                    # -log |x| - gamma x: P would flush
    r = D.put(tiny, D.neg(la), g)
    sign = D.put(tiny, D.sel(D.is_neg(x), -1, 1), sign)
    negint = D.ia("land", D.bools(isint), D.bools(D.is_neg(x)))
    pole = D.ia("lor", D.ia("lor", negint, D.bools(D.is_zero(x))), D.bools(D.ge_i(ax, INF)))
    r = D.put(D.flags("lnot", pole), INF, r)
    sign = D.put(D.flags("lnot", negint), 1, sign)                      # glibc's
    sign = D.put(D.is_zero(x), D.sel(D.is_neg(x), -1, 1), sign)
    return D.put(D.is_nan(x), QNAN, r), sign


def _lgamma_lanes(D, x, acc):
    return _lgamma_sign_lanes(D, x, acc)[0]


UNARY = {
    "exp": (_exp_lanes("e"), False), "exp2": (_exp_lanes("2"), False), "exp10": (_exp_lanes("10"), False),
    "expm1": (_expm1_lanes, False),
    "log": (_log_lanes("e"), False), "log2": (_log_lanes("2"), False), "log10": (_log_lanes("10"), False),
    "sin": (_sin_lanes, True), "cos": (_cos_lanes, False), "tan": (_tan_lanes, True),
    "tanh": (_tanh_lanes, True), "sinh": (_sinh_lanes, True), "cosh": (_cosh_lanes, False),
    "log1p": (_log1p_lanes, False),
    "atan": (_atan_lanes, True), "asin": (_asin_lanes, True), "acos": (_acos_lanes, False),
    "asinh": (_asinh_lanes, True), "acosh": (_acosh_lanes, False), "atanh": (_atanh_lanes, True),
    "cbrt": (_cbrt_lanes, True), "logb": (_logb_lanes, False),
    "erf": (_erf_lanes, True), "erfc": (_erfc_lanes, False),
    "tgamma": (_tgamma_lanes, False), "lgamma": (_lgamma_lanes, False),
}
LIBM_FLOAT = {"logbf": "logb", "fdimf": "fdim", "atanf": "atan", "asinf": "asin", "acosf": "acos", "atan2f": "atan2", "asinhf": "asinh",
              "acoshf": "acosh", "atanhf": "atanh", "cbrtf": "cbrt", "tanf": "tan", "tanhf": "tanh", "hypotf": "hypot", "expm1f": "expm1", "exp10f": "exp10",
              "powf": "pow", "expf": "exp", "exp2f": "exp2", "logf": "log", "log2f": "log2",
              "log10f": "log10", "sinf": "sin", "cosf": "cos", "sqrtf": "sqrt", "copysignf": "copysign",
              "sinhf": "sinh", "coshf": "cosh", "log1pf": "log1p", "remainderf": "remainder", "nextafterf": "nextafter",
              "erff": "erf", "erfcf": "erfc", "tgammaf": "tgamma", "lgammaf": "lgamma"}


def _ldexp(em, ty, x: Val, nl) -> Val:
    """x * 2^n, exact unless the result under- or overflows: n < -1000 first takes 2^-1000 into x
    (if that flushes x, the result is below 2^-1022 too), then two exact power-of-two steps."""
    D = _D(em)
    lanes = x.regs if ty == "double" else _to64(em, x.regs[0])
    pre = D.ge_i(-1001, nl)
    v = D.sel(pre, D.mul(lanes, 2.0 ** -1000), lanes)
    n = D.sel(D.ge_i(-1001, nl), D.ia("ladd", nl, 1000), nl)
    n = D.ia("lmin", D.ia("lmax", n, -2044), 2044)
    res = D.ia("lor", D.scale(v, n), D.ia("land", lanes, SIGN))       # x's sign (zeros stay signed)
    res = D.sel(D.is_nan(lanes), lanes, res)
    if ty == "double":
        return Val("f64", res)
    out = _to32(em, res)
    em.masked_copy(x.regs[0], out, _nan32(em, x.regs[0]))
    return Val("f32", (out,))


# ------------------------------------------------------------------ remainders, exponents, neighbours (exact)
REM_CHUNK = 48          # quotient bits taken per step of fmod's long division
INT_MIN, INT_MAX = -(1 << 31), (1 << 31) - 1        # glibc's FP_ILOGB0 and FP_ILOGBNAN, and ilogb(inf)


def _rem_core(D: _D, x, y, fmod: bool):
    """(r, q): fmod(x, y) (fmod) or remainder(x, y) on fp64 lanes, exact, with q the low three bits of
    the integral quotient's magnitude, signed as x / y (remquo's).

    Long division of the mantissas m_x, m_y in [1, 2) (subnormals normalised, D.exp_split): with
    d = e_x - e_y, |x| mod |y| = (m_x 2^d mod m_y) 2^e_y.  A loop (WhileAny: as many passes as the
    widest exponent gap among the lanes, one for most) takes up to REM_CHUNK bits of d a pass:
    r <- r 2^c - n m_y with n = rint(r 2^c / m_y) (|n| < 2^49, from a reciprocal good to 2^-51, so
    |r| stays below 3/4 m_y) and n m_y as Dekker's exact product: r stays exact, a multiple of
    2^-52 below 2.  The quotient's low bits follow along (q <- q 2^c + n mod 8).  Then fmod takes
    r into [0, m_y), remainder into [-m_y/2, m_y/2] with ties to the even quotient, and r 2^e_y is
    exact, or made from its bits where it is below the normal range (the MAU would flush it).
    Zeros, infinities and NaN follow C99; |x| < |y| / 2 (fmod: |x| < |y|) gives x."""
    ax, ay = D.abs(x), D.abs(y)
    wx, mx = D.exp_split(ax)
    wy, my = D.exp_split(ay)
    ey = D.ia("llsr", wy, 52)
    d = D.ia("lsub", D.ia("llsr", wx, 52), ey)
    nan = D.ia("lor", D.ia("lor", D.bools(D.is_inf_or_nan(x)), D.bools(D.is_nan(y))), D.bools(D.is_zero(y)))
    keep = D.ia("lor", D.bools(D.ge_i(ay, INF)), D.bools(D.is_zero(x)))           # y infinite, x zero: x
    keep = D.ia("lor", keep, D.bools(D.ge_i(-1 if fmod else -2, d)))               # |x| small next to |y|
    d = D.sel(D.flags("lnot", D.ia("lor", nan, keep)), 0, d)                    # no passes for those
    inv = D.recip(my, 4)
    ysplit = D.split(my)

    def step(r, q, c):
        r2 = D.mul(r, D.pow2(c))
        nf, ni = D.rint_small(D.mul(r2, inv))
        p, e = D.two_prod(nf, my, bsplit=ysplit)
        return D.sub(D.sub(r2, p), e), D.ia("land", D.ia("ladd", D.ia("llsl", q, c), ni), 7)
    # the first pass, also for d = -1 (remainder of |x| in [|y| / 2, |y|)): r 2^-1, q = 0 or 1
    c = D.ia("lmin", D.ia("lmax", d, -1), REM_CHUNK)
    r, q = step(mx, 0, c)

    def more(st):                                      # the rest of d, REM_CHUNK bits a pass
        c = D.ia("lmin", st[2], REM_CHUNK)
        return step(st[0], st[1], c) + (D.ia("lsub", st[2], c),)
    r, q, _ = _loop(D, (r, q, D.ia("lsub", d, c)), lambda st: ("lmax", st[2], 1), more)
    # fmod: r into [0, m_y); remainder: then above m_y / 2 (or at it with an odd quotient) r - m_y.
    # The quotient's bits are glibc's: floor(|x / y|) mod 8, plus one where remainder rounds up (8 then)
    neg = D.is_neg(r)
    r = D.sel(neg, D.add(r, my), r)
    q = D.ia("land", D.sel(neg, D.ia("lsub", q, 1), q), 7)
    if not fmod:
        half = D.mul(my, 0.5)
        odd = D.ia("lnot", D.bools(D.flags("land", q, 1)))
        above = D.ia("lnot", D.bools(D.ge_f(half, r)))
        up = D.ia("lor", above, D.ia("land", D.bools(D.flags("lxor", r, half)), odd))
        up = D.flags("lnot", up)
        r = D.sel(up, D.sub(r, my), r)
        q = D.sel(up, D.ia("ladd", q, 1), q)
    s = D.ia("lsub", ey, 1023)
    res = D.scale(r, s)
    sub = D.subnormal_bits(D.abs(D.mul(r, D.pow2(D.ia("lmin", D.ia("ladd", s, 1074), 1023)))))
    res = D.put(D.ge_i(_bits(2.0 ** -1022) - 1, D.abs(res)), D.ia("lor", sub, D.ia("land", r, SIGN)), res)
    res = D.ia("lxor", res, D.ia("land", x, SIGN))
    q = D.sel(D.is_neg(D.ia("lxor", x, y)), D.ia("lsub", 0, q), q)
    res = D.sel(D.flags("lnot", keep), x, res)
    res = D.put(D.flags("lnot", nan), QNAN, res)
    q = D.put(D.flags("lnot", D.ia("lor", nan, keep)), 0, q)
    return res, q


def _f32_subnormals(em, lanes, out):
    """Put into float register `out` the subnormal floats of fp64 lanes below 2^-126 (the narrowing
    flushes them): their bits are |v| 2^149 rounded to an integer (exact where v is a float)."""
    D = _D(em)
    bits = D.ia("lor", D.subnormal_bits(D.mul(D.abs(lanes), 2.0 ** 149)), D.ia("ulsr", D.ia("land", lanes, SIGN), 32))
    tiny = D.bools(D.ge_i(_bits(2.0 ** -126) - 1, D.abs(lanes)))
    em.masked_copy(em.join32(*bits), out, em.mask_of(em.join32(*tiny)))
    return out


def _two_out(em, ty, args, fn, nan_int=None):
    """fn(D, *lanes) -> (fp64 result lanes, int64 lanes) on each 64-bit lane of float or double args:
    (the result Val, the ints as an i32 Val); float results are exact, subnormals included."""
    wide = ty == "double"
    ins = [a.regs if wide else _to64(em, a.regs[0]) for a in args]
    res, ints = [], []
    for k in range(2):
        a, b = fn(_D(em, 1), *((v[k],) for v in ins))
        res.append(a[0])
        ints.append(b[0])
    n = Val("i32", (em.join32(*ints),))
    if wide:
        return Val("f64", tuple(res)), n
    out = _f32_subnormals(em, tuple(res), _to32(em, tuple(res)))
    for a in args:                     # NaN operands were widened to infinities: NaN in, NaN out
        em.masked_copy(em.c32(0x7FC00000), out, _nan32(em, a.regs[0]))
    if nan_int is not None:
        em.masked_copy(em.c32(nan_int), n.regs[0], _nan32(em, args[0].regs[0]))
    return Val("f32", (out,)), n


def _frexp_lanes(D, x):
    """(m, e): x = m 2^e, |m| in [1/2, 1), exact (subnormals normalised); +-0, +-inf and NaN: (x, 0)."""
    ax = D.abs(x)
    w, m = D.exp_split(ax)
    e = D.ia("lsub", D.ia("llsr", w, 52), 1022)
    m = D.ia("lor", D.ia("lsub", m, 1 << 52), D.ia("land", x, SIGN))
    odd = D.ia("lor", D.bools(D.is_zero(x)), D.bools(D.is_inf_or_nan(x)))
    return D.sel(D.flags("lnot", odd), x, m), D.sel(D.flags("lnot", odd), 0, e)


def _ilogb_lanes(D, x):
    """(x, ilogb x): the unbiased exponent, subnormals included; 0 and NaN give INT_MIN, inf INT_MAX
    (glibc's FP_ILOGB0, FP_ILOGBNAN)."""
    ax = D.abs(x)
    w, _ = D.exp_split(ax)
    e = D.ia("lsub", D.ia("llsr", w, 52), 1023)
    e = D.put(D.ge_i(ax, INF), INT_MAX, e)
    e = D.put(D.is_nan(x), INT_MIN, e)
    return x, D.put(D.is_zero(x), INT_MIN, e)


def _nextafter(em, ty, x: Val, y: Val) -> Val:
    """The neighbour of x towards y, on the bit patterns (exact, subnormals included): +-1 on the
    pattern, the smallest subnormal of y's sign from a zero, y where x == y, NaN where either is."""
    wide = ty == "double"
    p, sign = ("l", 1 << 63) if wide else ("i", 1 << 31)
    k = em.const64 if wide else em.c32
    out = []
    for xr, yr in zip(x.regs, y.regs):
        mag = k(sign - 1)
        ax, ay = em.alu(p + "and", xr, mag), em.alu(p + "and", yr, mag)
        inf = k(0x7FF0000000000000 if wide else 0x7F800000)

        def key(r):                  # the pattern as a signed integer in the order of the values
            return em.alu(p + "xor", r, em.alu(p + "and", em.alu(p + "lsr", r, k(63 if wide else 31)), mag))
        kx, ky = key(xr), key(yr)
        # away from zero when y is beyond x on x's side: (y > x) == (x > 0)
        gt = em.bool_from_mask(em.flags(p + "max", ky, kx))                     # y >= x
        pos = em.bool_from_mask(em.flags(p + "max", xr, k(0)))                  # x >= +0 (sign clear)
        away = em.alu(p + "xor", em.alu(p + "xor", gt, pos), k(-1))
        r = em.alu(p + "sub", xr, k(1))
        em.masked_copy(em.alu(p + "add", xr, k(1)), r, em.flags(p + "not", away))
        tiny = em.alu(p + "or", em.alu(p + "and", yr, k(sign)), k(1))
        em.masked_copy(tiny, r, em.flags(p + "or", ax, k(0)))                  # x = +-0: +-2^-1074 (2^-149)
        em.masked_copy(yr, r, em.flags(p + "xor", kx, ky))                      # x == y
        em.masked_copy(yr, r, em.flags(p + "or", em.alu(p + "or", ax, ay), k(0)))   # both zeros: y
        qnan, above_inf = k(0x7FF8000000000000 if wide else 0x7FC00000), em.alu(p + "add", inf, k(1))
        for a in (ax, ay):
            em.masked_copy(qnan, r, em.flags("u" + p + "max", a, above_inf))
        out.append(r)
    return Val(x.kind, tuple(out))


def _store_int(em, ptr: Val, v: Val, p):
    """Store i32 v through the private pointer a libm call's out-argument is (frexp, remquo, lgamma_r)."""
    if ptr.kind != "ptr" or ptr.base != ("priv",):
        raise CodegenError("a math function's out-argument must be a private variable here", em.line)
    if ptr.off is not None:
        p = em.memory.check_private(ptr, 4, p, store=True)
    em.memory.private_access(ptr, "i32", v, p)


# ------------------------------------------------------------------ integers
def _int_fn(em, name, ty, args):
    if name in ("smax", "smin", "umax", "umin"):
        mn = ("u" if name[0] == "u" else "") + name[1:]
        a, b = args[0], args[1]
        if ty == "i64":
            return Val("i64", tuple(em.alu(mn[:-3] + "l" + mn[-3:], x, y)
                                    for x, y in zip(em.values.wide(a), em.values.wide(b))))
        if ty in SMALL:
            signed = name[0] == "s"
            a, b = em.values.norm_small(a, ty, signed), em.values.norm_small(b, ty, signed)
            return Val("i32", (em.alu(mn[:-3] + "i" + mn[-3:], a.regs[0], b.regs[0]),))
        return None
    if name == "abs":
        a = args[0]
        if ty == "i64":
            zero = em.const64(0)
            return Val("i64", tuple(em.alu("lmax", x, em.alu("lsub", zero, x)) for x in em.values.wide(a)))
        if ty in SMALL:
            x = em.values.norm_small(a, ty, True).regs[0]
            return Val("i32", (em.alu("imax", x, em.alu("isub", em.c32(0), x)),))
        return None
    if name in ("ctpop", "ctlz", "cttz"):
        if ty == "i64":
            return Val("i64", tuple(_bitcount(em, name, r, 64) for r in em.values.wide(args[0])))
        if ty == "i32":
            return Val("i32", (_bitcount(em, name, args[0].regs[0], 32),))
        if ty in SMALL:
            bits = SMALL[ty]
            x = em.values.norm_small(args[0], ty, False).regs[0]
            v = _bitcount(em, name, x, 32)
            if name == "ctlz":
                v = em.alu("isub", v, em.c32(32 - bits))
            elif name == "cttz":
                v = em.alu("imin", v, em.c32(bits))
            return Val("i32", (v,))
    return None


def _bitcount(em, name, x, w):
    """popcount / leading zeros / trailing zeros of w-bit lanes (SWAR; ctlz and cttz through popcount)."""
    p = "l" if w == 64 else "i"
    k = (lambda v: em.const64(v)) if w == 64 else (lambda v: em.c32(v))
    rep = lambda byte: int.from_bytes(bytes([byte]) * (w // 8), "little")    # noqa: E731
    if name == "ctlz":
        for sh in (1, 2, 4, 8, 16, 32)[: 6 if w == 64 else 5]:
            x = em.alu(p + "or", x, em.alu("u" + p + "lsr", x, k(sh)))
        x = em.alu(p + "not", x)
    elif name == "cttz":
        x = em.alu(p + "and", em.alu(p + "not", x), em.alu(p + "sub", x, k(1)))
    x = em.alu(p + "sub", x, em.alu(p + "and", em.alu("u" + p + "lsr", x, k(1)), k(rep(0x55))))
    x = em.alu(p + "add", em.alu(p + "and", x, k(rep(0x33))),
               em.alu(p + "and", em.alu("u" + p + "lsr", x, k(2)), k(rep(0x33))))
    x = em.alu(p + "and", em.alu(p + "add", x, em.alu("u" + p + "lsr", x, k(4))), k(rep(0x0F)))
    for sh in (8, 16, 32)[: 3 if w == 64 else 2]:
        x = em.alu(p + "add", x, em.alu("u" + p + "lsr", x, k(sh)))
    return em.alu(p + "and", x, k(0x7F))


# ------------------------------------------------------------------ entry
OUT_INT = {"frexp": "frexp", "frexpf": "frexp", "remquo": "remquo", "remquof": "remquo",
           "lgamma_r": "lgamma_r", "lgammaf_r": "lgamma_r"}


def lower_math(em, name: str, ty: str, args: list, p=None):
    if name in ("ilogb", "ilogbf") and ty == "i32":
        fty = "double" if args[0].kind == "f64" else "float"
        return _two_out(em, fty, args, _ilogb_lanes, nan_int=INT_MIN)[1]
    if name in OUT_INT and ty in ("float", "double"):
        acc = "d" if ty == "double" else "f"
        fn = {"frexp": _frexp_lanes, "remquo": lambda D, x, y: _rem_core(D, x, y, False),
              "lgamma_r": lambda D, x: _lgamma_sign_lanes(D, x, acc)}[OUT_INT[name]]
        v, n = _two_out(em, ty, args[:-1], fn)
        _store_int(em, args[-1], n, p)            # the int through the out-argument (a private variable)
        return v
    if ty not in ("float", "double"):
        return _int_fn(em, name, ty, args)
    if ty == "float" and name in LIBM_FLOAT:
        name = LIBM_FLOAT[name]
    for a in args:
        if a.kind not in ("f32", "f64", "i32", "i64"):
            return None
    if name in ("rint", "roundeven", "nearbyint", "ceil", "trunc", "round"):
        return _round_fn(em, "rint" if name in ("roundeven", "nearbyint") else name, args[0])
    if name == "copysign":
        if ty == "double":
            return Val("f64", tuple(em.alu("lor", em.alu("land", a, em.const64(ABS)), em.alu("land", b, em.const64(SIGN)))
                                    for a, b in zip(args[0].regs, args[1].regs)))
        return Val("f32", (em.alu("ior", em.alu("iand", args[0].regs[0], em.c32(0x7FFFFFFF)),
                                  em.alu("iand", args[1].regs[0], em.c32(0x80000000))),))
    if name == "sqrt":
        if ty != "double":
            return None
        return Val("f64", _lanes(em, _sqrt_lanes, "d", args[0].regs))
    if name in UNARY:
        fn, odd = UNARY[name]
        return _unary(em, ty, args[0], fn, odd, sub=name in ("erf", "erfc", "tgamma"))
    if name in ("ldexp", "powi") and len(args) == 2 and args[1].kind in ("i32", "i64"):
        n = args[1]
        nl = em.values.wide(n) if n.kind == "i64" else em.split64(n.regs[0])
        if name == "powi":
            y = Val("f64", tuple(em.alu("ditof", r) for r in nl)) if ty == "double" else \
                Val("f32", (em.alu("fitof", em.values.narrow(n)),))
            return _binary(em, ty, args[0], y, _pow_lanes, _pow_keep32)
        return _ldexp(em, ty, args[0], nl)
    if name == "pow":
        return _binary(em, ty, args[0], args[1], _pow_lanes, _pow_keep32)
    if name == "hypot":
        return _binary(em, ty, args[0], args[1], _hypot_lanes, _hypot_keep32)
    if name == "fdim":
        return _binary(em, ty, args[0], args[1], _fdim_lanes)
    if name == "atan2":
        return _binary(em, ty, args[0], args[1], _atan2_lanes)
    if name in ("fmod", "remainder"):
        return _two_out(em, ty, args, lambda D, x, y: _rem_core(D, x, y, name == "fmod"))[0]
    if name == "nextafter":
        return _nextafter(em, ty, args[0], args[1])
    return None
