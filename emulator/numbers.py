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
    """float32 values -> uint16 mnhalf bit patterns, round to nearest even."""
    b = np.asarray(x, dtype=np.float32).view(np.uint32)
    s = (b >> 31).astype(np.uint32)
    e8 = ((b >> 23) & 0xFF).astype(np.int32)
    m23 = b & 0x7FFFFF
    m = m23 >> 14
    rem = m23 & 0x3FFF
    up = (rem > 0x2000) | ((rem == 0x2000) & ((m & 1) == 1))
    m = m + up.astype(np.uint32)
    e = e8 - 127 + 31 + (m >> 9).astype(np.int32)
    m = m & 0x1FF
    out = (s << 15) | (np.clip(e, 0, 63).astype(np.uint32) << 9) | m
    out = np.where((e <= 0) | (e8 == 0), s << 15, out)              # underflow -> signed zero
    out = np.where((e >= 63) | (e8 == 255), (s << 15) | (63 << 9), out)  # overflow, inf, nan -> inf
    return out.astype(np.uint16)


def mnhalf_to_f32(h) -> np.ndarray:
    """uint16 mnhalf bit patterns -> float32 (exact)."""
    h = np.asarray(h, dtype=np.uint16).astype(np.uint32)
    s = h >> 15
    e = (h >> 9) & 0x3F
    m = h & 0x1FF
    bits = (s << 31) | ((e + (127 - 31)) << 23) | (m << 14)
    bits = np.where(e == 0, s << 31, bits)
    bits = np.where(e == 63, (s << 31) | np.uint32(0x7F800000), bits)
    return bits.astype(np.uint32).view(np.float32)


# -- output normalisation of the RRN and MAU ------------------------------------

_EXP = {64: (52, 0x7FF), 32: (23, 0xFF), 16: (9, 0x3F)}


def normalize_bits(bits: np.ndarray, width: int) -> np.ndarray:
    """The MAU/RRN output rule: exponent 0 -> +0; exponent all ones -> mantissa cleared (no NaN)."""
    mbits, emax = _EXP[width]
    t = _UINT[width]
    bits = bits.astype(t, copy=False)
    e = bits & t(emax << mbits)
    top = e == t(emax << mbits)
    if top.any():
        bits = np.where(top, bits & ~t((1 << mbits) - 1), bits)
    return bits * (e != 0)


def f64_bits(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float64).view(np.uint64)


def f32_bits(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float32).view(np.uint32)
