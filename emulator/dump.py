"""``d get`` output, in the format of PFN's MN-Core 2 emulator dumps.

  DEBUG-LM0(n0c0b0m0p1,0):(f:0, i:{{0x0,0x0},{0x0,0x1}}, v:0x1) #d get $lm0n0c0b0m0 1
  DEBUG-LM0(n0c0b0m0p0,0):(1) (0x3ff0000000000000) #d getd $lm0n0c0b0m0p0 1
  DEBUG-OMR(n0c0b0m0p0,1):Mask{15} #d get $omr1n0c0b0m0p0 1     (one line per cycle)

The untyped form prints the long word as a double, as four 16-bit parts and as
hex.  Every float shown prints a subnormal as the zero of its sign, as the public
dumps do (``d getf`` of 0x0000004280000000 is ``(0, -0)``).
"""
from __future__ import annotations

import numpy as np

from .numbers import lanes, mnhalf_to_f32

NAMES = {"m": "LM0", "n": "LM1", "r": "GREG0", "s": "GREG1", "t": "TREG", "omr": "OMR",
         "lb": "L1BM", "lc": "L2BM", "d": "DRAM", "p": "PDM"}


def _g(x: float) -> str:
    return "%g" % x


def _untyped(v: int) -> str:
    d = float(np.uint64(v).view(np.float64))
    if (v >> 52) & 0x7FF == 0:
        d = 0.0 if not v >> 63 else -0.0
    h = [(v >> s) & 0xFFFF for s in (48, 32, 16, 0)]
    return f"(f:{_g(d)}, i:{{{{0x{h[0]:X},0x{h[1]:X}}},{{0x{h[2]:X},0x{h[3]:X}}}}}, v:0x{v:X})"


_EXP = {64: 0x7FF0000000000000, 32: 0x7F800000}


def _flushed(bits: np.ndarray, width: int, ftype) -> np.ndarray:
    """Float lanes as PFN's dumps print them: a subnormal as the zero of its sign (0x00000042 is 0)."""
    t = bits.dtype.type
    keep = np.where(bits & t(_EXP[width]) == 0, bits & t(1 << (width - 1)), bits)
    return np.ascontiguousarray(keep).view(ftype)


def _typed(v: int, dtype: str) -> str:
    x = np.array([v], dtype=np.uint64)
    if dtype == "d":
        return f"({_g(float(_flushed(x, 64, np.float64)[0]))}) (0x{v:016x})"
    if dtype in "fg":
        bits = lanes(x, 32)[0]
        vals = _flushed(bits, 32, np.float32)
        return "(" + ", ".join(_g(float(f)) for f in vals) + ") (" + ", ".join(f"0x{int(b):08x}" for b in bits) + ")"
    bits = lanes(x, 16)[0]
    vals = mnhalf_to_f32(bits)
    return "(" + ", ".join(_g(float(f)) for f in vals) + ") (" + ", ".join(f"0x{int(b):04x}" for b in bits) + ")"


def format_get(d, units, vals, addrs) -> list[str]:
    """Lines for one ``d get``: vals is (units, count) uint64, or (units, count, 4) mask nibbles for $omr."""
    name = NAMES[d.target.space]
    text = d.text.split("#", 1)[0].strip()
    out = []
    if d.target.space == "omr":
        for u, entries in zip(units, vals):
            for k, row in enumerate(entries):
                out.extend(f"DEBUG-{name}({u},{d.target.base + k}):Mask{{{int(n)}}} #{text}" for n in row)
        return out
    for u, row in zip(units, vals):
        for a, v in zip(addrs, row):
            v = int(v)
            body = _typed(v, d.dtype) if d.dtype else _untyped(v)
            out.append(f"DEBUG-{name}({u},{int(a)}):{body} #{text}")
    return out
