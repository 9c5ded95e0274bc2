"""Random well-defined OpenCL C integer vector kernels, for differential testing against PoCL.

``random_vector_kernel(seed)`` gives ``(source, width, element types, number of outputs)``:
a kernel ``rndv`` that loads one vector per element type with ``vload<n>``,
computes vector variables from random expressions and stores each, widened
with ``convert_ulong<n>``, with ``vstore<n>``.

The expressions use OpenCL's own vector rules, where front ends tend to go
wrong: no integer promotion (uchar4 + uchar4 wraps in uchar), shift counts
modulo the element width, relational operators giving a *signed* vector of
the same element size holding -1 or 0, ``select`` testing each component's
most significant bit, ``abs`` giving the unsigned type, ``convert_<T><n>``
with and without ``_sat``, ``as_<T><n>`` between equal sizes, swizzles and
vector literals built from halves.  Signed + - * go through ``as_u...`` so
nothing overflows; everything else is defined for all inputs.
"""
from __future__ import annotations

import random

from .randgen import TYPES

WIDTHS = (2, 3, 4, 8, 16)
SWIZZLE = "0123456789abcdef"


def unsigned_of(t: str) -> str:
    return t if t.startswith("u") else "u" + t


def signed_of(t: str) -> str:
    return t[1:] if t.startswith("u") else t


def same_size(t: str) -> list:
    return [u for u in TYPES if TYPES[u].bits == TYPES[t].bits]


class VectorGenerator:
    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.n = self.rng.choice(WIDTHS)
        self.types = self.rng.sample(list(TYPES), 3)
        self.vars: dict[str, list] = {}                    # element type -> names of vectors of it

    def vt(self, t: str) -> str:
        return f"{t}{self.n}"

    def leaf(self, t: str) -> str:
        if self.vars.get(t) and self.rng.random() < 0.8:
            return self.rng.choice(self.vars[t])
        info = TYPES[t]
        vals = [self.rng.choice([0, 1, 3, info.hi, info.lo, self.rng.randint(info.lo, info.hi)]) for _ in range(self.n)]
        return f"(({self.vt(t)})({', '.join(self.literal(t, v) for v in vals)}))"

    def literal(self, t: str, v: int) -> str:
        if v == TYPES[t].lo and TYPES[t].signed:
            return f"({t})({v + 1} - 1)" if t not in ("long",) else "(long)(-9223372036854775807L - 1L)"
        suffix = "UL" if t == "ulong" else "L" if t == "long" else "u" if t == "uint" else ""
        return f"({t}){v}{suffix}"

    def expr(self, t: str, depth: int) -> str:
        """An expression of type <t><n>."""
        if depth <= 0 or self.rng.random() < 0.2:
            return self.leaf(t)
        d = depth - 1
        u = unsigned_of(t)
        r = self.rng.randrange(12)
        if r == 0:                                          # + - *, wrapping
            op = self.rng.choice("+-*")
            a, b = self.expr(t, d), self.expr(t, d)
            if t == u:
                return f"({a} {op} {b})"
            return f"as_{self.vt(t)}(as_{self.vt(u)}({a}) {op} as_{self.vt(u)}({b}))"
        if r == 1:
            return f"({self.expr(t, d)} {self.rng.choice('&|^')} {self.expr(t, d)})"
        if r == 2:                                          # count modulo the element width
            op = self.rng.choice(["<<", ">>"])
            if op == "<<" and t != u:
                return f"as_{self.vt(t)}(as_{self.vt(u)}({self.expr(t, d)}) << as_{self.vt(u)}({self.expr(t, d)}))"
            return f"({self.expr(t, d)} {op} {self.expr(t, d)})"
        if r == 3:                                          # relational: a signed vector of -1/0, same size
            s = signed_of(t)
            other = self.rng.choice(same_size(t))
            op = self.rng.choice(["<", ">", "<=", ">=", "==", "!="])
            cmp = f"({self.expr(other, d)} {op} {self.expr(other, d)})"
            return cmp if s == t else f"as_{self.vt(t)}({cmp})"
        if r == 4:                                          # select by the mask's top bit
            m = self.rng.choice(same_size(t))
            return f"select({self.expr(t, d)}, {self.expr(t, d)}, {self.expr(m, d)})"
        if r == 5:
            f = self.rng.choice(["min", "max"])
            return f"{f}({self.expr(t, d)}, {self.expr(t, d)})"
        if r == 6:
            a, b = self.expr(t, d), self.expr(t, d)
            return f"clamp({self.expr(t, d)}, min({a}, {b}), max({a}, {b}))"
        if r == 7:                                          # abs gives the unsigned type
            src = self.rng.choice(same_size(t))
            arg = self.expr(src, d)
            if TYPES[src].signed:                           # keep the minimum away: PoCL miscompiles abs(INT_MIN)
                arg = f"({arg} | ({src})1)"                 # (abs_min.cl tests it against numpy instead)
            e = f"abs({arg})"
            return e if t == u else f"as_{self.vt(t)}({e})"
        if r == 8:                                          # conversions, modular or saturating
            src = self.rng.choice(list(TYPES))
            sat = "_sat" if self.rng.random() < 0.5 else ""
            return f"convert_{self.vt(t)}{sat}({self.expr(src, d)})"
        if r == 9:
            return self.swizzle(self.expr(t, d), self.expr(t, d), t)
        if r == 10:
            return f"(~{self.expr(t, d)})"
        if t == u:                                          # unary minus, wrapping
            return f"(-{self.expr(t, d)})"
        return f"as_{self.vt(t)}(-as_{self.vt(u)}({self.expr(t, d)}))"

    def swizzle(self, a: str, b: str, t: str) -> str:
        n = self.n
        if n == 3:
            return f"({a}).{''.join(self.rng.choice('xyz') for _ in range(3))}"
        r = self.rng.random()
        if r < 0.4:
            idx = [self.rng.randrange(n) for _ in range(n)]
            return f"({a}).s{''.join(SWIZZLE[k] for k in idx)}"
        if r < 0.7:
            return f"(({self.vt(t)})(({a}).hi, ({b}).lo))"
        return f"(({self.vt(t)})(({a}).odd, ({b}).even))"


def random_vector_kernel(seed: int, n_vars: int = 6, depth: int = 3):
    g = VectorGenerator(seed)
    n = g.n
    lines = ["    int i = get_global_id(0);"]
    for t in g.types:
        lines.append(f"    {g.vt(t)} in_{t}_v = vload{n}(i, in_{t});")
        g.vars[t] = [f"in_{t}_v"]
    outs = []
    for k in range(n_vars):
        t = g.rng.choice(g.types)
        name = f"v{k}"
        lines.append(f"    {g.vt(t)} {name} = {g.expr(t, depth)};")
        g.vars[t].append(name)
        outs.append(name)
    for k, name in enumerate(outs):
        lines.append(f"    vstore{n}(convert_ulong{n}({name}), {len(outs)} * i + {k}, out);")
    params = ", ".join(f"__global const {t} *in_{t}" for t in g.types)
    source = (f"/* random vector kernel, seed {seed} (tests/kernels/randvec.py) */\n"
              f"__kernel void rndv({params}, __global ulong *out)\n{{\n" + "\n".join(lines) + "\n}\n")
    return source, n, g.types, len(outs)
