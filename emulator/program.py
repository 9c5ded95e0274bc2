"""Programs: named straight-line blocks plus a sequencer (control) program.

PEs have no program counter; on the real machine the host generates the
instruction stream.  The sequencer models that host: it runs uniform loops,
branches and scalar arithmetic on integer registers (kernel arguments, loop
counters) and calls blocks with address offsets taken from those registers.
The emulator expands it as it runs.  Its work costs no PE cycles, except a
decision that needs data from the device (``.while any`` / ``.if any``),
which costs an any-reduction up the tree.

The text form is described in docs/isa.md ("Programs and the sequencer");
the same structure can be built from Python with these dataclasses.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from .errors import AsmError, EmuFault

# Spaces a .call may offset, and the unit of each offset.
OFFSET_SPACES = {"m": "words", "n": "words", "r": "words", "s": "words",
                 "lb": "long words", "lc": "long words", "d": "long words", "p": "long words"}


@dataclass
class Block:
    name: str
    stmts: list = field(default_factory=list)   # Step | MVStmt | DebugStmt
    line: int = 0


@dataclass
class ScalarExpr:
    """An integer expression over sequencer registers (``%n * 2 + 1``), compiled once."""

    text: str
    code: object = field(repr=False)
    names: tuple = ()

    def eval(self, regs: dict) -> int:
        return self.code(regs)


@dataclass
class Run:
    block: str
    offsets: dict        # space -> ScalarExpr
    line: int
    text: str = ""


@dataclass
class SetReg:
    reg: str
    expr: ScalarExpr
    line: int
    text: str = ""


@dataclass
class Loop:
    reg: str
    start: ScalarExpr
    stop: ScalarExpr
    step: ScalarExpr
    body: list
    line: int
    text: str = ""


@dataclass
class If:
    cond: ScalarExpr
    then: list
    orelse: list
    line: int
    text: str = ""


@dataclass
class Fault:
    """``.fault "message"``: stop the run with a fault (a runtime check the compiler could not
    decide, taken under an ``.if``)."""

    message: str
    line: int
    text: str = ""


@dataclass
class AnyLoop:
    """``.while any $imr<k>``: repeat the body while any PE has any flag set in mask entry k."""

    entry: int
    body: list
    line: int
    text: str = ""


@dataclass
class IfAny:
    entry: int
    then: list
    orelse: list
    line: int
    text: str = ""


@dataclass
class Program:
    blocks: dict = field(default_factory=dict)   # name -> Block
    main: list = field(default_factory=list)     # control nodes
    args: list = field(default_factory=list)     # declared scalar arguments, in order
    source: str = "<asm>"

    def n_statements(self) -> int:
        return sum(len(b.stmts) for b in self.blocks.values())


# -- scalar expressions -------------------------------------------------------------------

_BINOPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.LShift, ast.RShift,
           ast.BitAnd, ast.BitOr, ast.BitXor)
_CMPOPS = (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE)


def _cdiv(a: int, b: int) -> int:
    if b == 0:
        raise ZeroDivisionError
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _cmod(a: int, b: int) -> int:
    return a - _cdiv(a, b) * b


SHIFT_MAX = 63   # registers are 64-bit: a shift count outside 0..63 is an error, as in C
SEQ_MIN, SEQ_MAX = -(1 << 63), (1 << 63) - 1   # a sequencer register is a 64-bit signed integer


class _ShiftCount(ArithmeticError):
    pass


def _shc(b: int) -> int:
    """A shift count, checked: Python would raise on b < 0 and build a huge integer for a large b."""
    if not 0 <= b <= SHIFT_MAX:
        raise _ShiftCount(b)
    return b


def _short(v: int) -> str:
    """A huge value as its sign and bit length (printing a million-digit integer is no help)."""
    return str(v) if v.bit_length() <= 128 else f"{'-' if v < 0 else ''}(a {v.bit_length()}-bit integer)"


def _const(node):
    """The value of an integer literal, or of '-' / '+' applied to one; else None."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _const(node.operand)
        return None if v is None else -v if isinstance(node.op, ast.USub) else v
    return node.value if isinstance(node, ast.Constant) and type(node.value) is int else None


class _Rewrite(ast.NodeTransformer):
    """'/' and '%' with C's truncation, shift counts checked; registers looked up in the dict 'R'."""

    def visit_BinOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, (ast.Div, ast.FloorDiv, ast.Mod)):
            fn = "_cmod" if isinstance(node.op, ast.Mod) else "_cdiv"
            return ast.copy_location(ast.Call(ast.Name(fn, ast.Load()), [node.left, node.right], []), node)
        if isinstance(node.op, (ast.LShift, ast.RShift)):
            node.right = ast.copy_location(ast.Call(ast.Name("_shc", ast.Load()), [node.right], []), node.right)
        return node

    def visit_Name(self, node):
        return ast.copy_location(
            ast.Subscript(ast.Name("R", ast.Load()), ast.Constant(node.id), ast.Load()), node)


_COMPILED: dict = {}      # expression text -> (function, register names): a program repeats its expressions
_COMPILED_MAX = 1 << 16  # (a loop's versioned and prefetched copies), each compiled once per process


def compile_scalar(text: str, line: int = 0, source: str = "<asm>", raw: str = "") -> ScalarExpr:
    """Compile an integer expression where registers are written %name."""
    got = _COMPILED.get(text)
    if got is None:
        got = _compile_scalar(text, line, source, raw)
        if len(_COMPILED) < _COMPILED_MAX:
            _COMPILED[text] = got
    fn, names = got

    def run(regs, fn=fn):
        try:
            v = fn(regs)
        except _ShiftCount as e:
            raise EmuFault(f"shift count {e.args[0]} in '{text.strip()}' is outside 0..{SHIFT_MAX}",
                           line, raw, None, source) from None
        if -0x8000000000000000 <= v <= 0x7fffffffffffffff:     # SEQ_MIN..SEQ_MAX, as constants
            return v
        # evaluated exactly, then checked: a register never grows past 64 bits (no Python bigint
        # squaring itself without end, no silent wrap)
        raise EmuFault(f"'{text.strip()}' = {_short(v)} overflows a sequencer register "
                       f"(64-bit signed: {SEQ_MIN}..{SEQ_MAX})", line, raw, None, source)
    return ScalarExpr(text.strip(), run, names)


def _compile_scalar(text: str, line: int, source: str, raw: str) -> tuple:
    """(the function of a register dict, the register names) of compile_scalar's expression."""
    py = re.sub(r"%([A-Za-z_]\w*)", r"_r_\1", text).replace("&&", " and ").replace("||", " or ")
    try:
        tree = ast.parse(py.strip(), mode="eval")
    except (SyntaxError, ValueError):       # ValueError: a NUL byte, before Python 3.11.4
        raise AsmError(f"bad scalar expression '{text.strip()}'", line, raw, source) from None
    except (RecursionError, MemoryError):   # what Python's parser raises on too deep nesting
        raise AsmError(f"scalar expression '{text.strip()[:40]}...' is too deeply nested", line, raw, source) from None
    names = []
    for node in ast.walk(tree):
        ok = isinstance(node, (ast.Expression, ast.BinOp, ast.UnaryOp, ast.USub, ast.UAdd, ast.Not,
                               ast.Invert, ast.Compare, ast.BoolOp, ast.And, ast.Or, ast.Load,
                               ast.IfExp) + _BINOPS + _CMPOPS)
        if isinstance(node, ast.Constant):
            ok = isinstance(node.value, int) and not isinstance(node.value, bool)
        elif isinstance(node, ast.Name):
            ok = node.id.startswith("_r_")
            if ok:
                names.append(node.id[3:])
        if not ok:
            raise AsmError(f"bad scalar expression '{text.strip()}': only integers, %registers and "
                           f"C operators are allowed", line, raw, source)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.LShift, ast.RShift)):
            k = _const(node.right)
            if k is not None and not 0 <= k <= SHIFT_MAX:
                raise AsmError(f"bad scalar expression '{text.strip()}': shift count {k} is outside "
                               f"0..{SHIFT_MAX}", line, raw, source)
    try:
        tree = ast.fix_missing_locations(_Rewrite().visit(tree))
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("_r_"):
                node.value = node.value[3:]
        lam = ast.Expression(ast.Lambda(
            ast.arguments(posonlyargs=[], args=[ast.arg("R")], kwonlyargs=[], kw_defaults=[], defaults=[]),
            ast.UnaryOp(ast.UAdd(), tree.body)))      # unary plus: a comparison's bool becomes an int
        fn = eval(compile(ast.fix_missing_locations(lam), "<scalar>", "eval"),
                  {"_cdiv": _cdiv, "_cmod": _cmod, "_shc": _shc, "__builtins__": {}})
    except (RecursionError, MemoryError):   # the rewrite and Python's compiler recurse too
        raise AsmError(f"scalar expression '{text.strip()[:40]}...' is too deeply nested", line, raw, source) from None
    return fn, tuple(dict.fromkeys(names))
