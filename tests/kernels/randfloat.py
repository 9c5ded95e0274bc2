"""Random float kernels whose results are the same bit for bit on every correct compiler.

``random_float_kernel(seed)`` gives ``(source, inputs, n_outputs)``: a kernel
``rndf`` mixing float variables with the integer inputs (the usual
arithmetic conversions int/uint/long -> float), ?:, comparisons, fabs,
floor, ceil, trunc, copysign-free sign tricks, multiplication by powers of
two, and saturating float -> int conversions in all four rounding modes; it
stores ``as_uint`` of each float variable and each converted integer.

Floating point is deterministic only where IEEE rounding is: + - * and
conversions are correctly rounded, but OpenCL C lets a*b+c be fused, and
x/y or sqrt may be off by ulps.  So every product here is exact: each value
carries a bound |v| <= M and a count k of fraction bits (v is a multiple of
2^-k), and a product is only formed when M_a*M_b*2^(k_a+k_b) fits in 24 bits
-- then fused and unfused evaluation agree.  Sums may round (deterministically),
after which the value is marked inexact and never multiplied again.  Division
is only by powers of two.  No NaN, infinity or signed zero can reach an
output, so the bits compare exactly.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

from .randgen import TYPES

EXACT = 2 ** 24


@dataclass(frozen=True)
class F:
    code: str
    m: float            # bound on |value|
    k: int              # fraction bits (value is a multiple of 2^-k) when exact
    exact: bool

    def fits(self):
        return self.exact and self.m * 2 ** self.k <= EXACT


class FloatGenerator:
    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.vars: list[F] = []
        self.ints = {"x_int": (TYPES["int"], 2 ** 31), "x_uint": (TYPES["uint"], 2 ** 32),
                     "x_short": (TYPES["short"], 2 ** 15), "x_uchar": (TYPES["uchar"], 255),
                     "x_long": (TYPES["long"], 2 ** 63), "x_small": (TYPES["int"], 1000)}

    def leaf(self) -> F:
        r = self.rng.random()
        if r < 0.3 or not self.vars:
            name = self.rng.choice(list(self.ints))
            _, m = self.ints[name]
            return F(f"(float){name}", m, 0, m <= EXACT)
        if r < 0.45:
            v = self.rng.choice([0.5, 1.5, 2.0, 3.0, 0.25, 7.0, 100.0, 1024.0, 0.125])
            v = -v if self.rng.random() < 0.3 else v
            k = 0
            while v * 2 ** k != int(v * 2 ** k):
                k += 1
            return F(f"({v!r}f)", abs(v), k, True)
        return self.rng.choice(self.vars)

    def expr(self, depth: int) -> F:
        if depth <= 0 or self.rng.random() < 0.25:
            return self.leaf()
        d = depth - 1
        r = self.rng.randrange(9)
        if r <= 1:                                          # + -
            a, b = self.expr(d), self.expr(d)
            op = self.rng.choice("+-")
            exact = a.exact and b.exact
            res = F(f"({a.code} {op} {b.code})", a.m + b.m, max(a.k, b.k), exact)
            return res if res.fits() else F(res.code, res.m, 0, False)
        if r == 2:                                          # exact products only
            a, b = self.expr(d), self.expr(d)
            if a.fits() and b.fits() and a.m * b.m * 2 ** (a.k + b.k) <= EXACT:
                return F(f"({a.code} * {b.code})", a.m * b.m, a.k + b.k, True)
            return F(f"({a.code} + {b.code})", a.m + b.m, 0, False)
        if r == 3:                                          # scaling by powers of two is exact
            a = self.expr(d)
            e = self.rng.choice([-2, -1, 1, 2])
            code = f"({a.code} * {2.0 ** e!r}f)"
            if e < 0:
                return F(code, a.m * 2 ** e, a.k - e, a.exact)
            return F(code, a.m * 2 ** e, max(a.k - e, 0), a.exact)
        if r == 4:
            a = self.expr(d)
            f = self.rng.choice(["fabs", "floor", "ceil", "trunc"])
            return F(f"{f}({a.code})", a.m + (1 if f != "fabs" else 0), a.k if f == "fabs" else 0, a.exact)
        if r == 5:                                          # comparisons pick a value
            a, b, c, e = self.expr(d), self.expr(d), self.expr(d), self.expr(d)
            op = self.rng.choice(["<", ">", "<=", ">=", "==", "!="])
            return F(f"(({a.code} {op} {b.code}) ? {c.code} : {e.code})", max(c.m, e.m), max(c.k, e.k),
                     c.exact and e.exact)
        if r == 6:                                          # integer arithmetic mixed with a float
            name = self.rng.choice(list(self.ints))
            _, m = self.ints[name]
            a = self.expr(d)
            res = F(f"({name} + {a.code})", m + a.m, a.k, a.exact and m <= EXACT)
            return res if res.fits() else F(res.code, res.m, 0, False)
        if r == 7:                                          # round trip through a saturating conversion
            a = self.expr(d)
            mode = self.rng.choice(["", "_rte", "_rtz", "_rtp", "_rtn"])
            return F(f"(float)convert_int_sat{mode}({a.code})", min(a.m + 1, 2 ** 31), 0, a.m + 1 <= EXACT)
        a = self.expr(d)
        return F(f"(-{a.code})", a.m, a.k, a.exact)

    def clean(self, v: F) -> str:
        """A float expression whose zero is +0 (x + 0.0f turns -0 into +0 under round-to-nearest)."""
        return f"({v.code} + 0.0f)"


def random_float_kernel(seed: int, n_vars: int = 8, depth: int = 4):
    g = FloatGenerator(seed)
    lines = ["    int i = get_global_id(0);",
             "    int x_int = in_int[i];", "    uint x_uint = in_uint[i];", "    short x_short = in_short[i];",
             "    uchar x_uchar = in_uchar[i];", "    long x_long = in_long[i];", "    int x_small = in_int[i] % 1000;"]
    outs = []
    for k in range(n_vars):
        e = g.expr(depth)
        name = f"f{k}"
        lines.append(f"    float {name} = {g.clean(e)};")
        g.vars.append(F(name, e.m, e.k, e.exact))
        outs.append(f"as_uint({name})")
        mode = g.rng.choice(["", "_rte", "_rtz", "_rtp", "_rtn"])
        outs.append(f"(uint)convert_int_sat{mode}({name} * 0.5f)")
    for k, o in enumerate(outs):
        lines.append(f"    out[{len(outs)} * i + {k}] = {o};")
    inputs = {"in_int": TYPES["int"], "in_uint": TYPES["uint"], "in_short": TYPES["short"],
              "in_uchar": TYPES["uchar"], "in_long": TYPES["long"]}
    params = ", ".join(f"__global const {t.name} *{n}" for n, t in inputs.items())
    source = (f"/* random float kernel, seed {seed} (tests/kernels/randfloat.py) */\n"
              f"__kernel void rndf({params}, __global uint *out)\n{{\n" + "\n".join(lines) + "\n}\n")
    return source, inputs, len(outs)
