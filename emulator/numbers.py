"""Number formats of the machine, vectorised.

Data lives in uint64 "long words".  A long word holds one fp64/int64, two
fp32/int32 or four 16-bit values; the first (index 0) of those is the most
significant part, as the public dumps print them (``d getf`` of
0x3F80000040A00000 shows ``(1, 5)``).  ``lanes`` gives that MSB-first view
without copying, ``pack`` turns lanes back into long words.

MN-Core half ("mnhalf") is not IEEE binary16: 1 sign bit, 6 exponent bits
with bias 31, 9 mantissa bits (0x3e00 = 1.0, 0x4280 = 5.0).  It has no
subnormals (exponent 0 is zero) and exponent 63 is infinity; there is no NaN.
Conversions round to nearest even.
"""
from __future__ import annotations

import sys

import numpy as np

if sys.byteorder != "little":  # pragma: no cover
    raise ImportError("the emulator's lane views assume a little-endian host")

U64 = np.uint64
_UINT = {64: np.uint64, 32: np.uint32, 16: np.uint16}
_SINT = {64: np.int64, 32: np.int32, 16: np.int16}
_FLOAT = {64: np.float64, 32: np.float32}
WIDTH = {"d": 64, "l": 64, "f": 32, "g": 32, "i": 32, "h": 16, "s": 16}


def lanes(x: np.ndarray, width: int, kind: str = "u") -> np.ndarray:
    """View uint64 array x (...) as (..., 64 // width) lanes, MSB lane first (a view where x allows)."""
    n = 64 // width
    if kind == "f":
        dt = _FLOAT[width]
    elif kind == "i":
        dt = _SINT[width]
    else:
        dt = _UINT[width]
    if n == 1:
        return x.view(dt)[..., None]
    if x.ndim and x.strides[-1] != x.itemsize:
        x = np.ascontiguousarray(x)
    return x.view(dt).reshape(x.shape + (n,))[..., ::-1]


def pack(lanes_arr: np.ndarray) -> np.ndarray:
    """Inverse of ``lanes``: (..., n) lanes, MSB first, of any 64/n-bit dtype -> uint64 (...)."""
    n = lanes_arr.shape[-1]
    if n == 1:
        return np.ascontiguousarray(lanes_arr[..., 0]).view(U64)
    width = 64 // n
    a = np.ascontiguousarray(lanes_arr[..., ::-1]).view(_UINT[width])
    return a.view(U64).reshape(lanes_arr.shape[:-1])


# -- MN-Core half ------------------------------------------------------------

def f32_to_mnhalf(x) -> np.ndarray:
    """float32 values -> uint16 mnhalf bit patterns, round to nearest even.

    The classic integer trick: adding 0x1FFF plus the kept mantissa's lowest bit and
    shifting rounds the 23-bit mantissa to 9 bits, carrying into the exponent.  (Checked
    against a field-by-field conversion over all 2^32 inputs.)"""
    xa = np.asarray(x, dtype=np.float32)
    b = xa.reshape(-1).view(np.uint32)
    a = b & np.uint32(0x7FFFFFFF)
    r = ((a + np.uint32(0x1FFF) + ((a >> np.uint32(14)) & np.uint32(1))) >> np.uint32(14)).astype(np.int32)
    r -= (127 - 31) << 9                                   # rebias the exponent (e:m9 stays packed)
    np.clip(r, 0, 63 << 9, out=r)                          # overflow -> infinity
    r[r < (1 << 9)] = 0                                    # exponent 0 after rounding: zero (no subnormals)
    r[a >= np.uint32(0x7F800000)] = 63 << 9                # infinity and NaN -> infinity
    r[a < np.uint32(0x00800000)] = 0                       # float32 zeros and subnormals -> zero
    out = r.astype(np.uint16) | ((b >> np.uint32(16)) & np.uint32(0x8000)).astype(np.uint16)
    return out.reshape(xa.shape)


def _mnhalf_to_f32_bits(h: np.ndarray) -> np.ndarray:
    h = h.astype(np.uint32)
    s = h >> 15
    e = (h >> 9) & 0x3F
    m = h & 0x1FF
    bits = (s << 31) | ((e + (127 - 31)) << 23) | (m << 14)
    bits = np.where(e == 0, s << 31, bits)
    return np.where(e == 63, (s << 31) | np.uint32(0x7F800000), bits).astype(np.uint32)


_MNHALF_TO_F32 = _mnhalf_to_f32_bits(np.arange(1 << 16)).view(np.float32)   # every pattern: a table


def mnhalf_to_f32(h) -> np.ndarray:
    """uint16 mnhalf bit patterns -> float32 (exact), by table."""
    return _MNHALF_TO_F32[np.asarray(h, dtype=np.uint16)]


# -- output normalisation of the RRN and MAU ------------------------------------

_EXP = {64: (52, 0x7FF), 32: (23, 0xFF), 16: (9, 0x3F)}


def normalize_bits(bits: np.ndarray, width: int) -> np.ndarray:
    """The MAU/RRN output rule: exponent 0 -> +0; exponent all ones -> mantissa cleared (no NaN).

    Returns bits itself (not a copy) when the rule changes nothing, which is checked with
    reductions: no lane has the top exponent, and as many lanes are nonzero as have a nonzero
    exponent (so no -0 and no denormal)."""
    mbits, emax = _EXP[width]
    t = _UINT[width]
    bits = bits.astype(t, copy=False)
    top = t(emax << mbits)
    e = bits & top
    if e.size == 0:
        return bits
    if e.max() == top:
        bits = np.where(e == top, bits & ~t((1 << mbits) - 1), bits)
    if e.min() == 0 and np.count_nonzero(e) != np.count_nonzero(bits):   # (no zero exponent: no -0, no denormal)
        bits = bits * (e != 0)
    return bits


def normalize_in_place(bits: np.ndarray, width: int, e: np.ndarray) -> None:
    """normalize_bits(bits, width) written back into bits (uint lanes of the width), with e a
    scratch array of bits' shape and dtype: the same checks, no new array unless a lane changes."""
    mbits, emax = _EXP[width]
    t = bits.dtype.type
    top = t(emax << mbits)
    np.bitwise_and(bits, top, out=e)
    if e.size == 0:
        return
    if e.max() == top:
        np.copyto(bits, bits & ~t((1 << mbits) - 1), where=e == top)
    if e.min() == 0 and np.count_nonzero(e) != np.count_nonzero(bits):
        np.multiply(bits, e != 0, out=bits)


def f64_bits(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float64).view(np.uint64)


def f32_bits(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float32).view(np.uint32)
