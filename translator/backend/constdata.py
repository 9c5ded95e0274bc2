"""Program-scope ``__constant`` data (and LLVM's switch lookup tables): initialisers -> bytes.

The runtime places each table in emulated DRAM once per program; kernels read
it with the same gather as any buffer.  llvmlite's binding does not expose
initialisers, so they are parsed from the module text.
"""
from __future__ import annotations

import re
import struct

from .irread import Unsupported, _float_const, top_level
from .irtypes import type_size

_GLOBAL = re.compile(r"^@(\"[^\"]+\"|[\w.$]+) = [^=]*?\b(constant|global) (.*?)(?:, align \d+)?$", re.M)


def read_globals(ir_text: str) -> dict:
    """name -> (type, initialiser text) for every global with an initialiser."""
    out = {}
    for m in _GLOBAL.finditer(ir_text):
        ty, init = _split_type(m.group(3))
        out[m.group(1).strip('"')] = (ty, init)
    return out


def _split_type(text: str):
    """'[4 x i32] [i32 1, ...]' -> ('[4 x i32]', '[i32 1, ...]')."""
    for k in top_level(text, " "):
        return text[:k], text[k + 1:].strip()
    raise Unsupported(f"global initialiser '{text}'")


def _items(body: str) -> list:
    """Top-level comma-separated items of an aggregate constant's body."""
    cuts = [-1] + list(top_level(body, ",")) + [len(body)]
    return [body[a + 1:b].strip() for a, b in zip(cuts, cuts[1:]) if body[a + 1:b].strip()]


_SCALAR = {"i8": "<b", "i16": "<h", "i32": "<i", "i64": "<q", "float": "<f", "double": "<d"}


def const_bytes(ty: str, init: str) -> bytes:
    ty, init = ty.strip(), init.strip()
    if init == "zeroinitializer" or init in ("undef", "poison"):
        return bytes(type_size(ty))
    if ty in _SCALAR:
        if ty in ("float", "double"):
            return struct.pack(_SCALAR[ty], _float_const(init, ty))
        v = int(init) if init not in ("true", "false") else int(init == "true")
        return struct.pack(_SCALAR[ty].upper(), v & ((1 << (8 * type_size(ty))) - 1))
    if init.startswith('c"'):
        raw = init[2:-1]
        return re.sub(rb"\\([0-9A-Fa-f]{2})", lambda m: bytes([int(m.group(1), 16)]), raw.encode("latin-1"))
    if init[0] in "[<" and ty[0] in "[<":
        return b"".join(const_bytes(*_split_type(it)) for it in _items(init[1:-1]))
    if init[0] == "{" and ty[0] == "{":           # a struct: each field at LLVM's offset, padding zero
        from . import irtypes
        out = bytearray(type_size(ty))
        for (_, off), it in zip(irtypes.fields(ty), _items(init[1:-1])):
            b = const_bytes(*_split_type(it))
            out[off:off + len(b)] = b
        return bytes(out)
    raise Unsupported(f"__constant data of type {ty} ('{init[:40]}')")
