"""Sequencer expressions as a typed tree: the loop bounds, branch conditions, register updates and
address offsets of the control nodes (ops.py).

The sequencer's language (emulator/program.py ``compile_scalar``) is Python's expression syntax
over integers and ``%registers`` with C's operators: ``/`` and ``%`` truncate, shift counts are
0..63, a comparison gives 0 or 1, ``&&`` and ``||`` are ``and`` and ``or`` (task.py writes them).  ``parse`` reads it into ``Reg``, ``Num``, ``Paren``, ``Unary``,
``Binary``, ``Compare``, ``BoolOp`` and ``IfExp`` nodes; passes ask a tree for its free registers
(``regs``), substitute a value for a register (``at``), or evaluate it (``evaluate``) instead of
editing text.

A parsed tree keeps the spacing and parentheses of its text, so ``str`` gives the text back byte
for byte (the assembly is what the backend always printed); the builders (``binary``, ``compare``,
``all_of``, ``any_of``, ``negation``) space operators as the backend writes them unless told
``gap=""``, and parenthesise an operand only where precedence needs it.  Nodes are immutable and
compare by structure and spacing, so two expressions are equal when they print the same.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

# binding strength, loosest first (Python's, which the sequencer's parser uses)
IFEXP, OR, AND, NOT, CMP, BOR, XOR, BAND, SHIFT, ADD, MUL, UNARY, ATOM = range(13)
BINARY = {"|": BOR, "^": XOR, "&": BAND, "<<": SHIFT, ">>": SHIFT, "+": ADD, "-": ADD,
          "*": MUL, "/": MUL, "//": MUL, "%": MUL}
COMPARISONS = ("==", "!=", "<", "<=", ">", ">=")
SHIFT_MAX = 63                    # a sequencer register is 64-bit signed (emulator/program.py)
SEQ_MIN, SEQ_MAX = -(1 << 63), (1 << 63) - 1


class SeqExpr:
    """A sequencer expression; subclasses are the node kinds."""
    prec = ATOM

    def kids(self) -> tuple:
        return ()

    def rebuild(self, kids) -> "SeqExpr":
        return self

    def regs(self) -> frozenset:
        """The names of the registers it reads."""
        out = set()
        stack = [self]
        while stack:
            e = stack.pop()
            if isinstance(e, Reg):
                out.add(e.name)
            stack.extend(e.kids())
        return frozenset(out)

    def substitute(self, values: dict) -> "SeqExpr":
        """The tree with each register named in `values` replaced by its value (as given: wrap it
        in a Paren where precedence needs one; ``at`` does)."""
        if not self.kids():
            return self
        new = [k.substitute(values) for k in self.kids()]
        return self if all(a is b for a, b in zip(new, self.kids())) else self.rebuild(new)

    def unwrapped(self) -> "SeqExpr":
        """The expression inside any parentheses around it."""
        e = self
        while isinstance(e, Paren):
            e = e.inner
        return e


@dataclass(frozen=True)
class Reg(SeqExpr):
    """A sequencer register or launch argument, %name."""
    name: str

    def __str__(self):
        return f"%{self.name}"

    def substitute(self, values):
        return values.get(self.name, self)


@dataclass(frozen=True)
class Num(SeqExpr):
    """A non-negative integer literal (a negative one is Unary '-'); text: its spelling when not
    decimal."""
    value: int
    text: str | None = None

    def __str__(self):
        return self.text or str(self.value)


@dataclass(frozen=True)
class Paren(SeqExpr):
    inner: SeqExpr
    pad: tuple = ("", "")          # the spacing inside the parentheses

    def __str__(self):
        return f"({self.pad[0]}{self.inner}{self.pad[1]})"

    def kids(self):
        return (self.inner,)

    def rebuild(self, kids):
        return Paren(kids[0], self.pad)


@dataclass(frozen=True)
class Unary(SeqExpr):
    op: str                        # - + ~ not
    operand: SeqExpr
    gap: str = ""

    @property
    def prec(self):
        return NOT if self.op == "not" else UNARY

    def __str__(self):
        return f"{self.op}{self.gap}{self.operand}"

    def kids(self):
        return (self.operand,)

    def rebuild(self, kids):
        return Unary(self.op, kids[0], self.gap)


@dataclass(frozen=True)
class Binary(SeqExpr):
    op: str                        # | ^ & << >> + - * / // %
    left: SeqExpr
    right: SeqExpr
    gaps: tuple = (" ", " ")       # the spacing before and after the operator

    @property
    def prec(self):
        return BINARY[self.op]

    def __str__(self):
        return f"{self.left}{self.gaps[0]}{self.op}{self.gaps[1]}{self.right}"

    def kids(self):
        return (self.left, self.right)

    def rebuild(self, kids):
        return Binary(self.op, kids[0], kids[1], self.gaps)


@dataclass(frozen=True)
class Compare(SeqExpr):
    """first ops[0] rest[0] ops[1] rest[1] ...: a chain, as in Python (a < b < c is a < b and b < c)."""
    first: SeqExpr
    ops: tuple
    rest: tuple
    gaps: tuple                    # per operator: the spacing before and after it
    prec = CMP

    def __str__(self):
        return str(self.first) + "".join(f"{g[0]}{o}{g[1]}{x}" for o, x, g in zip(self.ops, self.rest, self.gaps))

    def kids(self):
        return (self.first, *self.rest)

    def rebuild(self, kids):
        return Compare(kids[0], self.ops, tuple(kids[1:]), self.gaps)


@dataclass(frozen=True)
class BoolOp(SeqExpr):
    """values joined by and, or by or (Python's: the value of the operand that decides)."""
    op: str                        # and | or
    values: tuple
    seps: tuple                    # the text between two values: ' and ', '&&', ...

    @property
    def prec(self):
        return AND if self.op == "and" else OR

    def __str__(self):
        return str(self.values[0]) + "".join(f"{g}{x}" for x, g in zip(self.values[1:], self.seps))

    def kids(self):
        return self.values

    def rebuild(self, kids):
        return BoolOp(self.op, tuple(kids), self.seps)


@dataclass(frozen=True)
class IfExp(SeqExpr):
    """then if cond else orelse."""
    then: SeqExpr
    cond: SeqExpr
    orelse: SeqExpr
    gaps: tuple = (" ", " ", " ", " ")
    prec = IFEXP

    def __str__(self):
        g = self.gaps
        return f"{self.then}{g[0]}if{g[1]}{self.cond}{g[2]}else{g[3]}{self.orelse}"

    def kids(self):
        return (self.then, self.cond, self.orelse)

    def rebuild(self, kids):
        return IfExp(*kids, self.gaps)


# -- parsing ----------------------------------------------------------------------------------

class SeqSyntaxError(ValueError):
    pass


_WORDS = ("and", "or", "not", "if", "else")
_OPS = ("<<", ">>", "<=", ">=", "==", "!=", "//", "&&", "||", "+", "-", "*", "/", "%", "&", "|", "^", "~", "<", ">", "(", ")")


def _tokens(text: str):
    """(kind, text, the whitespace before it): kinds reg, num, word, op, end."""
    out, i, n = [], 0, len(text)
    while True:
        j = i
        while j < n and text[j] in " \t":
            j += 1
        ws, i = text[i:j], j
        if i == n:
            out.append(("end", "", ws))
            return out
        c = text[i]
        if c == "%" and i + 1 < n and (text[i + 1].isalpha() or text[i + 1] == "_"):
            j = i + 1
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            out.append(("reg", text[i + 1:j], ws))
        elif c.isdigit():
            j = i
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            out.append(("num", text[i:j], ws))
        elif c.isalpha() or c == "_":
            j = i
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            if text[i:j] not in _WORDS:
                raise SeqSyntaxError(f"'{text[i:j]}' in sequencer expression '{text}': registers are written %name")
            out.append(("word", text[i:j], ws))
        else:
            op = next((o for o in _OPS if text.startswith(o, i)), None)
            if op is None:
                raise SeqSyntaxError(f"unexpected '{c}' in sequencer expression '{text}'")
            out.append(("op", op, ws))
            j = i + len(op)
        i = j


class _Parser:
    """Recursive descent over Python's precedence levels.  Each parse method leaves the
    whitespace before its expression's first token to its caller (it is the caller's gap)."""

    def __init__(self, text):
        self.text, self.toks, self.k = text, _tokens(text), 0

    def peek(self):
        return self.toks[self.k]

    def take(self):
        t = self.toks[self.k]
        self.k += 1
        return t

    def gap(self):
        """The whitespace before the next token, which the caller keeps."""
        return self.peek()[2]

    def is_(self, *texts):
        kind, text, _ = self.peek()
        return kind in ("op", "word") and text in texts

    def fail(self, what):
        kind, text, _ = self.peek()
        raise SeqSyntaxError(f"{what} at '{text or 'the end'}' in sequencer expression '{self.text}'")

    def ifexp(self):
        then = self.boolop("or")
        if not self.is_("if"):
            return then
        g0 = self.take()[2]
        g1 = self.gap()
        cond = self.boolop("or")
        if not self.is_("else"):
            self.fail("expected 'else'")
        g2 = self.take()[2]
        g3 = self.gap()
        return IfExp(then, cond, self.ifexp(), (g0, g1, g2, g3))

    def boolop(self, op):
        part = (lambda: self.boolop("and")) if op == "or" else self.negation
        values, seps = [part()], []
        while self.is_(op, "||" if op == "or" else "&&"):
            _, spelt, g0 = self.take()
            seps.append(g0 + spelt + self.gap())
            values.append(part())
        return values[0] if len(values) == 1 else BoolOp(op, tuple(values), tuple(seps))

    def negation(self):
        if self.is_("not"):
            self.take()
            g = self.gap()
            return Unary("not", self.negation(), g)
        return self.comparison()

    def comparison(self):
        first = self.binary(BOR)
        ops, rest, gaps = [], [], []
        while self.is_(*COMPARISONS):
            g0, op = self.peek()[2], self.take()[1]
            gaps.append((g0, self.gap()))
            ops.append(op)
            rest.append(self.binary(BOR))
        return Compare(first, tuple(ops), tuple(rest), tuple(gaps)) if ops else first

    def binary(self, level):
        if level > MUL:
            return self.unary()
        left = self.binary(level + 1)
        while self.peek()[0] == "op" and BINARY.get(self.peek()[1]) == level:
            g0, op = self.peek()[2], self.take()[1]
            g1 = self.gap()
            left = Binary(op, left, self.binary(level + 1), (g0, g1))
        return left

    def unary(self):
        if self.is_("-", "+", "~"):
            op = self.take()[1]
            g = self.gap()
            return Unary(op, self.unary(), g)
        return self.atom()

    def atom(self):
        kind, text, _ = self.peek()
        if kind == "reg":
            self.take()
            return Reg(text)
        if kind == "num":
            self.take()
            try:
                value = int(text, 0)
            except ValueError:
                self.fail("bad number")
            return Num(value, None if text == str(value) else text)
        if self.is_("("):
            self.take()
            pad0 = self.gap()
            inner = self.ifexp()
            if not self.is_(")"):
                self.fail("expected ')'")
            pad1 = self.take()[2]
            return Paren(inner, (pad0, pad1))
        self.fail("expected a register, a number or '('")


@lru_cache(maxsize=8192)
def parse(text: str) -> SeqExpr:
    """The tree of a sequencer expression; str() of it gives `text` back (SeqSyntaxError when it
    is not one, or has spacing at either end, which a tree cannot keep)."""
    p = _Parser(text)
    if p.gap():
        p.fail("leading spacing")
    e = p.ifexp()
    if p.peek()[0] != "end":
        p.fail("unexpected token")
    if p.gap():
        p.fail("trailing spacing")
    return e


def seq(x) -> SeqExpr:
    """x as a SeqExpr: parsed when a string, as it is when a tree; an int is a number."""
    if isinstance(x, SeqExpr):
        return x
    if isinstance(x, int):
        return num(x)
    if isinstance(x, str):
        return parse(x)
    raise TypeError(f"a sequencer expression, not {type(x).__name__} {x!r}")


def register(x) -> Reg:
    """x (a Reg or its text, %name) as a Reg."""
    r = seq(x)
    if not isinstance(r, Reg):
        raise ValueError(f"'{x}' is not a sequencer register")
    return r


# -- building ---------------------------------------------------------------------------------

def num(v: int) -> SeqExpr:
    return Num(v) if v >= 0 else Unary("-", Num(-v))


def _operand(e: SeqExpr, prec: int) -> SeqExpr:
    """e, parenthesised when it binds looser than `prec`."""
    return Paren(e) if e.prec < prec else e


def binary(op: str, left, right, gap: str = " ") -> SeqExpr:
    """left op right (left-associative: a right operand of the same strength is parenthesised)."""
    p = BINARY[op]
    return Binary(op, _operand(seq(left), p), _operand(seq(right), p + 1), (gap, gap))


def compare(left, op: str, right, gap: str = " ") -> SeqExpr:
    assert op in COMPARISONS, op
    return Compare(_operand(seq(left), CMP + 1), (op,), (_operand(seq(right), CMP + 1),), ((gap, gap),))


def _joined(op: str, terms) -> SeqExpr:
    p = AND if op == "and" else OR
    terms = [_operand(seq(t), p + 1) for t in terms]
    assert terms, f"{op} of nothing"
    return terms[0] if len(terms) == 1 else BoolOp(op, tuple(terms), (f" {op} ",) * (len(terms) - 1))


def all_of(terms) -> SeqExpr:
    """t1 and t2 and ... (one term: itself)."""
    return _joined("and", terms)


def any_of(terms) -> SeqExpr:
    """t1 or t2 or ... (one term: itself)."""
    return _joined("or", terms)


def negation(e) -> SeqExpr:
    """not (e): always parenthesised, as the backend writes it."""
    return Unary("not", Paren(seq(e)), " ")


def at(e, reg, value) -> SeqExpr:
    """e with register reg (a Reg or its name) replaced by (value): e's value at that point."""
    name = reg.name if isinstance(reg, Reg) else reg
    return seq(e).substitute({name: Paren(seq(value))})


# -- evaluating -------------------------------------------------------------------------------

def _cdiv(a: int, b: int) -> int:
    if b == 0:
        raise ZeroDivisionError("division by zero in a sequencer expression")
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _shift(b: int) -> int:
    if not 0 <= b <= SHIFT_MAX:
        raise ValueError(f"shift count {b} is outside 0..{SHIFT_MAX}")
    return b


_ARITH = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
          "/": _cdiv, "//": _cdiv, "%": lambda a, b: a - _cdiv(a, b) * b,
          "<<": lambda a, b: a << _shift(b), ">>": lambda a, b: a >> _shift(b),
          "&": lambda a, b: a & b, "|": lambda a, b: a | b, "^": lambda a, b: a ^ b}
_CMP = {"==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
        "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}


def _value(e: SeqExpr, regs: dict):
    if isinstance(e, Num):
        return e.value
    if isinstance(e, Reg):
        return regs[e.name]
    if isinstance(e, Paren):
        return _value(e.inner, regs)
    if isinstance(e, Unary):
        v = _value(e.operand, regs)
        return not v if e.op == "not" else -v if e.op == "-" else +v if e.op == "+" else ~v
    if isinstance(e, Binary):
        return _ARITH[e.op](_value(e.left, regs), _value(e.right, regs))
    if isinstance(e, Compare):
        a = _value(e.first, regs)
        for op, x in zip(e.ops, e.rest):
            b = _value(x, regs)
            if not _CMP[op](a, b):
                return False
            a = b
        return True
    if isinstance(e, BoolOp):
        for v in e.values:
            r = _value(v, regs)
            if (not r) if e.op == "and" else r:
                return r
        return r
    if isinstance(e, IfExp):
        return _value(e.then if _value(e.cond, regs) else e.orelse, regs)
    raise TypeError(type(e).__name__)


def evaluate(e, regs: dict) -> int:
    """e's value with the registers `regs` (name -> int), as the sequencer computes it (a
    comparison is 0 or 1; OverflowError past 64 bits)."""
    v = int(_value(seq(e), regs))
    if not SEQ_MIN <= v <= SEQ_MAX:
        raise OverflowError(f"'{e}' = {v} overflows a sequencer register")
    return v
