"""Constant folding: C literals and operators evaluated at compile time.

The front end's integer constant expressions (lower.py: array sizes, case
labels, enumerators, initialisers) and the task compiler's uniform integers
(backend/task.py: sizes and offsets known when it compiles) fold through the
same functions, so both read a literal and apply an operator alike: C99 6.4.4
literal typing, division truncating toward zero, comparisons and logical
operators giving 0 or 1.  An operation Python cannot do (a division by zero,
a negative shift) raises as Python does; the caller decides what that means.
"""
from __future__ import annotations

import re

from .cltypes import INT, LONG, UINT, ULONG

_UNARY = {"-": lambda v: -v, "+": lambda v: v, "~": lambda v: ~v, "!": lambda v: int(not v)}
_BINARY = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
           "/": lambda a, b: (int(a / b) if isinstance(a, int) and isinstance(b, int) else a / b),
           "%": lambda a, b: (a - int(a / b) * b), "<<": lambda a, b: a << b, ">>": lambda a, b: a >> b,
           "&": lambda a, b: a & b, "|": lambda a, b: a | b, "^": lambda a, b: a ^ b,
           "<": lambda a, b: int(a < b), ">": lambda a, b: int(a > b), "<=": lambda a, b: int(a <= b),
           ">=": lambda a, b: int(a >= b), "==": lambda a, b: int(a == b), "!=": lambda a, b: int(a != b),
           "&&": lambda a, b: int(bool(a) and bool(b)), "||": lambda a, b: int(bool(a) or bool(b))}
BINARY_OPS = frozenset(_BINARY)


def fold_unary(op: str, v):
    """The value of ``op v`` (``-``, ``+``, ``~``, ``!``), or None for another operator."""
    f = _UNARY.get(op)
    return f(v) if f else None


def fold_binary(op: str, a, b):
    """The value of ``a op b`` for C's arithmetic, shift, bitwise, relational and logical
    operators, or None for another operator."""
    f = _BINARY.get(op)
    return f(a, b) if f else None


def parse_int(text):
    """An integer literal -> (value, type) with C99 typing (int, uint, long, ulong)."""
    s = text.lower()
    m = re.fullmatch(r"(0x[0-9a-f]+|0b[01]+|0[0-7]*|[1-9][0-9]*)(u?l{0,2}|l{0,2}u?)", s)
    if not m:
        return None, None
    body, suf = m.group(1), m.group(2)
    if len(body.lstrip("0xb")) > 70:      # more digits than any 64-bit value has (in binary: 64)
        return 1 << 64, None             # too large, without converting (Python caps int() at 4300 digits)
    if body.startswith("0x"):
        v = int(body, 16)
    elif body.startswith("0b"):
        v = int(body[2:], 2)
    elif body.startswith("0") and len(body) > 1:
        v = int(body, 8)
    else:
        v = int(body)
    dec = not body.startswith("0") or body == "0"
    uns = "u" in suf
    lng = "l" in suf
    cands = []
    if not lng:
        cands += [UINT] if uns else ([INT] if dec else [INT, UINT])
    cands += [ULONG] if uns else ([LONG] if dec else [LONG, ULONG])
    if not uns and dec:
        cands.append(ULONG)
    for t in cands:
        hi = (1 << (t.bits - (1 if t.signed else 0))) - 1
        if v <= hi:
            return v, t
    return v, None


def parse_float(text):
    s = text.lower()
    single = s.endswith("f")
    if s.endswith(("f", "l")):
        s = s[:-1]
    try:
        if s.startswith("0x"):
            v = float.fromhex(s)
        else:
            v = float(s)
    except ValueError:
        return None, single
    if single:
        import struct
        try:
            v = struct.unpack("f", struct.pack("f", v))[0]
        except OverflowError:
            v = float("inf")
    return v, single


_ESC = {"n": 10, "t": 9, "r": 13, "0": 0, "\\": 92, "'": 39, '"': 34, "a": 7, "b": 8, "f": 12, "v": 11, "?": 63}


def parse_char(text, lw=None, node=None):
    body = text[1:-1] if text.startswith("'") else text
    if len(body) == 1:
        return ord(body)
    if body.startswith("\\"):
        r = body[1:]
        if r.startswith("x"):
            return int(r[1:], 16)
        if r and all(c in "01234567" for c in r):
            return int(r, 8)
        if r in _ESC:
            return _ESC[r]
    if lw is not None:
        lw.error(node, f"unsupported character constant {text}")
    return 0
