"""C types of the host program as MNCL sees them: OpenCL C spellings, numpy dtypes, identities.

The host is LP64 (x86-64 / aarch64 Linux): ``long`` is 64 bits on both sides, so every
arithmetic type the host has maps to an OpenCL C type of the same size and meaning.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

# normalised C spelling -> (OpenCL C spelling, numpy dtype)
ARITH = {
    "char": ("char", np.int8), "signed char": ("char", np.int8), "unsigned char": ("uchar", np.uint8),
    "short": ("short", np.int16), "unsigned short": ("ushort", np.uint16),
    "int": ("int", np.int32), "unsigned int": ("uint", np.uint32),
    "long": ("long", np.int64), "unsigned long": ("ulong", np.uint64),
    "long long": ("long", np.int64), "unsigned long long": ("ulong", np.uint64),
    "float": ("float", np.float32), "double": ("double", np.float64),
}


def normalise(names: list[str]) -> str | None:
    """['long', 'unsigned', 'int'] -> 'unsigned long'; None for what is not an arithmetic type."""
    unsigned = "unsigned" in names
    rest = [w for w in names if w not in ("signed", "unsigned")]
    if rest == ["char"]:
        return "unsigned char" if unsigned else "signed char" if "signed" in names else "char"
    key = " ".join(w for w in rest if w != "int") if rest != ["int"] else ""
    base = {"": "int", "short": "short", "long": "long", "long long": "long long",
            "float": "float", "double": "double"}.get(key)
    if base is None or (unsigned and base in ("float", "double")):
        return None
    return f"unsigned {base}" if unsigned else base


@dataclass
class CType:
    """A variable's type: element type, array dimensions (outermost first) and pointer-ness."""
    base: str                          # normalised arithmetic C type ("double", "unsigned int")
    dims: list = field(default_factory=list)   # int per dimension; None where not known (pointer, x[])
    first_dim_expr: object = None      # the AST of a parameter's declared first dimension, if any
    is_pointer: bool = False           # declared as a pointer (T *p, T (*p)[M])
    is_param: bool = False             # a function parameter (an array parameter is a pointer)
    is_const: bool = False

    @property
    def is_array(self) -> bool:
        return bool(self.dims)

    @property
    def cl(self) -> str:
        return ARITH[self.base][0]

    @property
    def dtype(self):
        return np.dtype(ARITH[self.base][1])

    @property
    def is_float(self) -> bool:
        return self.base in ("float", "double")


def identity(op: str, t: CType) -> str:
    """The OpenCL C literal a partial result of a reduction by op starts from."""
    if op in ("+", "|", "^", "||"):
        return "0"
    if op in ("*", "&&"):
        return "1"
    if op == "&":
        return "~0"
    if t.is_float:
        return "-INFINITY" if op == "max" else "INFINITY"
    info = np.iinfo(t.dtype)
    value = int(info.min if op == "max" else info.max)
    suffix = {"long": "L", "ulong": "UL", "uint": "U"}.get(t.cl, "")
    if value == -(1 << 63):
        return "(-9223372036854775807L - 1)"
    return f"({value}{suffix})"


def combine(op: str, acc: str, x: str, t: CType) -> str:
    """acc op x as an OpenCL C expression."""
    if op in ("max", "min"):
        return f"{'f' if t.is_float else ''}{op}({acc}, {x})"
    return f"{acc} {op} {x}"
