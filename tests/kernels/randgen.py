"""Random well-defined OpenCL C integer kernels, for differential testing against PoCL.

``random_kernel(seed)`` gives ``(source, inputs, n_outputs)``: a kernel
``rnd`` that reads one element of each input array (one per integer type,
char..ulong), computes a chain of typed variables from random expressions
(every C operator on integers, casts, ?:, compound assignment, if/else and
small loops) and stores each variable, converted to ulong, into ``out``.

Every program is free of undefined behaviour, so any two correct compilers
must agree bit for bit: each expression carries an interval of its possible
values, and a signed + - * or unary minus that could overflow is computed in
the unsigned type instead and cast back (a modular conversion, which is what
OpenCL C implementations do).  Divisors are forced into 1..16; shift counts
are left raw, since OpenCL C defines them modulo the width of the left
operand.  This is the idea of Csmith, kept small.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class IntType:
    name: str
    bits: int
    signed: bool

    @property
    def lo(self):
        return -(1 << (self.bits - 1)) if self.signed else 0

    @property
    def hi(self):
        return (1 << (self.bits - 1)) - 1 if self.signed else (1 << self.bits) - 1

    @property
    def unsigned(self):
        return TYPES["u" + self.name] if self.signed else self

    @property
    def dtype(self):
        return np.dtype(("i" if self.signed else "u") + str(self.bits // 8))


TYPES = {t.name: t for t in (IntType("char", 8, True), IntType("uchar", 8, False),
                             IntType("short", 16, True), IntType("ushort", 16, False),
                             IntType("int", 32, True), IntType("uint", 32, False),
                             IntType("long", 64, True), IntType("ulong", 64, False))}
INT = TYPES["int"]


def promote(t: IntType) -> IntType:
    return INT if t.bits < 32 else t


def common(a: IntType, b: IntType) -> IntType:
    """C99 6.3.1.8, the usual arithmetic conversions, for the integer types."""
    a, b = promote(a), promote(b)
    if a == b:
        return a
    if a.signed == b.signed:
        return a if a.bits >= b.bits else b
    s, u = (a, b) if a.signed else (b, a)
    if u.bits >= s.bits:
        return u
    return s                                          # long can hold every uint


@dataclass(frozen=True)
class Expr:
    code: str
    type: IntType
    lo: int
    hi: int


def full(t: IntType) -> tuple:
    return t.lo, t.hi


def convert(e: Expr, t: IntType) -> Expr:
    lo, hi = (e.lo, e.hi) if t.lo <= e.lo and e.hi <= t.hi else full(t)
    return Expr(f"(({t.name}){e.code})", t, lo, hi)


class Generator:
    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.vars: list[Expr] = []

    def leaf(self) -> Expr:
        r = self.rng.random()
        if r < 0.2:
            t = self.rng.choice(list(TYPES.values()))
            v = self.rng.choice([0, 1, 2, 7, 255, 256, 65535, t.hi, t.lo, self.rng.randint(t.lo, t.hi)])
            v = min(max(v, t.lo), t.hi)
            suffix = {"uint": "u", "long": "L", "ulong": "UL"}.get(t.name, "")
            if t.name in ("char", "uchar", "short", "ushort"):
                return Expr(f"(({t.name}){v})", t, v, v)
            if t.name == "int" and v == t.lo:
                return Expr("(-2147483647 - 1)", t, v, v)
            if t.name == "long" and v == t.lo:
                return Expr("(-9223372036854775807L - 1L)", t, v, v)
            return Expr(f"{v}{suffix}", t, v, v)
        return self.rng.choice(self.vars)

    def expr(self, depth: int) -> Expr:
        if depth <= 0 or self.rng.random() < 0.25:
            return self.leaf()
        kind = self.rng.choice(["arith", "arith", "bits", "shift", "divmod", "cmp", "logic", "unary",
                                "cast", "ternary"])
        return getattr(self, "gen_" + kind)(depth - 1)

    def gen_arith(self, d):
        a, b = self.expr(d), self.expr(d)
        op = self.rng.choice("+-*")
        t = common(a.type, b.type)
        if op == "+":
            lo, hi = a.lo + b.lo, a.hi + b.hi
        elif op == "-":
            lo, hi = a.lo - b.hi, a.hi - b.lo
        else:
            ps = [a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi]
            lo, hi = min(ps), max(ps)
        if t.lo <= lo and hi <= t.hi:
            return Expr(f"({a.code} {op} {b.code})", t, lo, hi)
        if t.signed:                                  # could overflow: wrap in the unsigned type
            u = t.unsigned
            return convert(Expr(f"(({u.name}){a.code} {op} ({u.name}){b.code})", u, *full(u)), t)
        return Expr(f"({a.code} {op} {b.code})", t, *full(t))

    def gen_bits(self, d):
        a, b = self.expr(d), self.expr(d)
        op = self.rng.choice("&|^")
        t = common(a.type, b.type)
        if op == "&" and a.lo >= 0 and b.lo >= 0:
            return Expr(f"({a.code} & {b.code})", t, 0, min(a.hi, b.hi))
        return Expr(f"({a.code} {op} {b.code})", t, *full(t))

    def gen_shift(self, d):
        a, b = self.expr(d), self.expr(d)
        t = promote(a.type)
        op = self.rng.choice(["<<", ">>"])
        if op == "<<" and t.signed:                  # a negative or overflowing << is undefined: shift unsigned
            u = t.unsigned
            return convert(Expr(f"(({u.name}){a.code} << {b.code})", u, *full(u)), t)
        if op == ">>":
            lo, hi = (min(a.lo, 0), max(a.hi, 0)) if t.signed else (0, max(a.hi, 0))
            return Expr(f"({a.code} >> {b.code})", t, lo, hi)
        return Expr(f"({a.code} << {b.code})", t, *full(t))

    def gen_divmod(self, d):
        a, b = self.expr(d), self.expr(d)
        divisor = Expr(f"((({b.code}) & 15) + 1)", common(b.type, INT), 1, 16)
        t = common(a.type, divisor.type)
        a = convert(a, t)                                 # its interval once converted to t
        if self.rng.random() < 0.5:
            return Expr(f"({a.code} / {divisor.code})", t, min(a.lo, 0), max(a.hi, 0))
        return Expr(f"({a.code} % {divisor.code})", t, -15 if a.lo < 0 else 0, 15)

    def gen_cmp(self, d):
        a, b = self.expr(d), self.expr(d)
        op = self.rng.choice(["<", ">", "<=", ">=", "==", "!="])
        return Expr(f"({a.code} {op} {b.code})", INT, 0, 1)

    def gen_logic(self, d):
        a, b = self.expr(d), self.expr(d)
        op = self.rng.choice(["&&", "||"])
        return Expr(f"({a.code} {op} {b.code})", INT, 0, 1)

    def gen_unary(self, d):
        a = self.expr(d)
        t = promote(a.type)
        op = self.rng.choice(["-", "~", "!", "+"])
        if op == "!":
            return Expr(f"(!({a.code}))", INT, 0, 1)
        if op == "+":
            return Expr(f"(+({a.code}))", t, a.lo, a.hi)
        if op == "~":
            lo, hi = (-a.hi - 1, -a.lo - 1) if t.signed else full(t)
            return Expr(f"(~({a.code}))", t, lo, hi)
        if t.signed:
            if a.lo > t.lo:
                return Expr(f"(-({a.code}))", t, -a.hi, -a.lo)
            u = t.unsigned
            return convert(Expr(f"(-({u.name}){a.code})", u, *full(u)), t)
        return Expr(f"(-({a.code}))", t, *full(t))

    def gen_cast(self, d):
        return convert(self.expr(d), self.rng.choice(list(TYPES.values())))

    def gen_ternary(self, d):
        c, a, b = self.expr(d), self.expr(d), self.expr(d)
        t = common(a.type, b.type)
        a2, b2 = convert(a, t), convert(b, t)
        return Expr(f"({c.code} ? {a2.code} : {b2.code})", t, min(a2.lo, b2.lo), max(a2.hi, b2.hi))

    # statements ---------------------------------------------------------------------------

    def assign(self, name: str, t: IntType, depth: int) -> tuple[str, Expr]:
        e = convert(self.expr(depth), t)
        return f"{t.name} {name} = {e.code};", Expr(name, t, e.lo, e.hi)

    def statement(self, v: Expr, depth: int) -> tuple[str, Expr]:
        """A statement updating variable v; gives its code and v's new interval (full after control flow)."""
        r = self.rng.random()
        t = v.type
        if r < 0.35:
            op = self.rng.choice(["+=", "-=", "*=", "&=", "|=", "^=", "<<=", ">>=", "/=", "%="])
            e = self.expr(depth)
            if op in ("/=", "%="):
                e = Expr(f"((({e.code}) & 15) + 1)", common(e.type, INT), 1, 16)
            if op == "<<=" and promote(t).signed:    # v = (T)((U)v << e), U the promoted type made unsigned
                u = promote(t).unsigned
                code = f"{v.code} = ({t.name})(({u.name}){v.code} << {e.code});"
            elif op in ("+=", "-=", "*=") and common(t, e.type).signed:   # v = (T)((U)v op (U)e)
                u = common(t, e.type).unsigned
                code = f"{v.code} = ({t.name})(({u.name}){v.code} {op[0]} ({u.name}){e.code});"
            else:
                code = f"{v.code} {op} {e.code};"
            return code, Expr(v.code, t, *full(t))
        if r < 0.6:
            c = self.expr(depth)
            a = convert(self.expr(depth), t)
            b = convert(self.expr(depth), t)
            return f"if ({c.code}) {{ {v.code} = {a.code}; }} else {{ {v.code} = {b.code}; }}", Expr(v.code, t, *full(t))
        if r < 0.8:
            bound = self.expr(depth)
            u = t.unsigned
            step = convert(self.expr(depth), u)
            return (f"for (int k = 0; k < ((int)({bound.code}) & 7); k++) {{ {v.code} = ({t.name})(({u.name}){v.code} "
                    f"* 3u + {step.code} + (uint)k); }}"), Expr(v.code, t, *full(t))
        a = convert(self.expr(depth), t)
        return f"{v.code} = {a.code};", Expr(v.code, t, a.lo, a.hi)


def random_kernel(seed: int, n_vars: int = 8, depth: int = 4):
    """(source, {array name: IntType}, number of outputs per work-item) for one seed."""
    g = Generator(seed)
    inputs = {}
    body = ["    int i = get_global_id(0);"]
    for t in TYPES.values():
        name = f"x_{t.name}"
        inputs[f"in_{t.name}"] = t
        body.append(f"    {t.name} {name} = in_{t.name}[i];")
        g.vars.append(Expr(name, t, *full(t)))
    outs = []
    for k in range(n_vars):
        t = g.rng.choice(list(TYPES.values()))
        code, var = g.assign(f"v{k}", t, depth)
        body.append("    " + code)
        for _ in range(g.rng.randint(0, 2)):
            code, var = g.statement(var, depth - 1)
            body.append("    " + code)
        g.vars.append(var)
        outs.append(var.code)
    for k, name in enumerate(outs):
        body.append(f"    out[{len(outs)} * i + {k}] = (ulong){name};")
    params = ", ".join(f"__global const {t.name} *{n}" for n, t in inputs.items())
    source = (f"/* random kernel, seed {seed} (tests/kernels/randgen.py) */\n"
              f"__kernel void rnd({params}, __global ulong *out)\n{{\n" + "\n".join(body) + "\n}\n")
    return source, inputs, len(outs)


def random_inputs(seed: int, inputs: dict, n: int) -> dict:
    """Input arrays mixing edge values with uniform ones over each type's whole range."""
    rng = np.random.default_rng(seed)
    arrays = {}
    for name, t in inputs.items():
        edges = np.array([0, 1, t.hi, t.lo, t.lo + 1 if t.signed else 2, t.hi - 1], dtype=object)
        data = rng.integers(t.lo, t.hi, size=n, dtype=t.dtype, endpoint=True)
        data[:len(edges)] = edges.astype(t.dtype)
        arrays[name] = rng.permutation(data)
    return arrays
