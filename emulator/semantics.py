"""What each PE instruction computes, as numpy expressions over lanes.

Every function here takes the decoded expression ``e`` and the step context
``ctx`` and works on whole-machine arrays: a value is a pair ``(v0, v1)`` of
uint64 arrays shaped (cycle, PE) -- the two long words of the 128-bit
datapath, v0 the most significant; v1 may be ``None`` for zero.  Operations
that span a MAB view values as (MAB, cycle, PE-in-MAB) through ``to_mab``.  Reading
operands, write masks, flag generation and forwarding are done once, in
``ctx`` (see executor.py); here is only the arithmetic, in the spirit of
Spike's one-line instruction bodies.

Lanes: precision d/l work on one 64-bit lane of v0, f/i/g on two 32-bit
lanes, h/s on four 16-bit lanes.  Operations that are not 128-bit wide leave
the first source's v1 in the result (the SDM's rule).
"""
from __future__ import annotations

import numpy as np

from .numbers import (U64, WIDTH, f32_to_mnhalf, lanes, mnhalf_to_f32, normalize_bits, pack)

FLOAT_PREC = "dfgh"
INT_PREC = "lis"


# -- layouts and lane conversions ---------------------------------------------------

def to_mab(v: np.ndarray) -> np.ndarray:
    """(cycles, P, ...) -> (MAB, cycle, PE in MAB, ...), a view where possible (cycles: 4, or 1 for
    a cycle-uniform expression)."""
    return v.reshape((v.shape[0], -1, 4) + v.shape[2:]).swapaxes(0, 1)


def from_mab(a: np.ndarray) -> np.ndarray:
    """(MAB, cycle, PE in MAB, ...) -> contiguous (cycles, P, ...)."""
    return np.ascontiguousarray(a.swapaxes(0, 1)).reshape((a.shape[1], -1) + a.shape[3:])


_RAW_DT = {"f": {64: np.float64, 32: np.float32}, "u": {64: np.uint64, 32: np.uint32, 16: np.uint16}}


def raw_lanes(v: np.ndarray, width: int, kind: str = "u") -> np.ndarray:
    """The lanes of a uint64 array in memory order (least significant first): a view, with no copy
    whenever the last axis is contiguous (a broadcast operand's long word too).

    Element-wise operations do not care about lane order and run fastest on this view."""
    dt = _RAW_DT[kind][width]
    if v.ndim == 0 or v.strides[-1] != v.itemsize:
        v = np.ascontiguousarray(v)
    return v.view(dt).reshape(v.shape + (64 // width,))


def to_float(v0: np.ndarray, prec: str, raw: bool = False) -> np.ndarray:
    """Slot-0 lanes as floats: (..., n) float64 (d), float32 (f, g), float32 from mnhalf (h).

    MSB lane first, or in memory order with raw=True (for element-wise use)."""
    w = WIDTH[prec]
    if prec == "d":
        return lanes(v0, 64, "f")
    if prec in "fg":
        x = raw_lanes(v0, 32, "f") if raw else lanes(v0, 32, "f")
        if prec == "g":  # pseudo-fp32: the low 5 mantissa bits are ignored
            u = raw_lanes(v0, 32) if raw else lanes(v0, 32)
            x = (u & np.uint32(0xFFFFFFE0)).view(np.float32)
        return x
    return mnhalf_to_f32(raw_lanes(v0, w) if raw else lanes(v0, w))


def _normalized(x: np.ndarray, width: int) -> np.ndarray:
    """Output normalisation of float lanes (their bits; x itself when nothing changes)."""
    return normalize_bits(x.view(np.uint64 if width == 64 else np.uint32), width)


def from_float(x: np.ndarray, prec: str, raw: bool = False) -> np.ndarray:
    """(..., n) floats -> slot-0 uint64, rounded (RNE) into prec and normalised (lanes as to_float)."""
    x = np.asarray(x)
    dt = np.float64 if prec == "d" else np.float32
    if x.dtype != dt:                        # (the native fp32 results need no rounding)
        with np.errstate(over="ignore"):    # rounding past the largest float gives inf, as it should
            x = x.astype(dt)
    if prec == "d":
        bits = _normalized(x, 64)
    elif prec in "fg":
        bits = _normalized(x, 32)
    else:
        bits = normalize_bits(f32_to_mnhalf(x), 16)
    if raw:
        return np.ascontiguousarray(bits).view(np.uint64).reshape(bits.shape[:-1])
    return pack(bits)


def sign_flags(bits_lanes: np.ndarray, width: int) -> np.ndarray:
    """True where the MSB (sign) of each lane is 0."""
    return (bits_lanes >> (width - 1)) == 0


def flags_nibble(flag_lanes: np.ndarray, msb_first: bool = True) -> np.ndarray:
    """(P, 4, n) bool per lane -> (P, 4) uint8 nibble, each lane owning 4/n bits (MSB lane high).
    ``msb_first=False``: the lanes are in memory order (LSB lane first), as ``lanes_le`` gives."""
    n = flag_lanes.shape[-1]
    if flag_lanes.dtype != np.bool_ or n not in (1, 2, 4):
        return _flags_nibble_general(flag_lanes, msb_first)
    f, le = flag_lanes, not msb_first
    if f.strides[-1] < 0:          # a reversed view: flip it back (free) and the lane order with it
        f, le = f[..., ::-1], not le
    if n == 1:
        return f[..., 0].view(np.uint8) * np.uint8(15)
    f = np.ascontiguousarray(f)    # lane k of a row is byte k of a uint16 / uint32
    if n == 2:                     # the two lanes' bytes as one uint16: byte k is 3 x lane k's flag
        v = f.view(np.uint16)[..., 0] * np.uint16(3)
        # lane 0 the low bits (le): byte 1's 3 moves to bits 2-3; else byte 0's does, byte 1's comes down
        v = (v | (v >> np.uint16(6))) if le else ((v << np.uint16(2)) | (v >> np.uint16(8)))
        return v.astype(np.uint8) & np.uint8(15)
    v = f.view(np.uint32)[..., 0]
    if not le:
        v = v.byteswap()
    v = v | (v >> np.uint32(7))    # byte j -> bit j
    v |= v >> np.uint32(14)
    v &= np.uint32(15)
    return v.astype(np.uint8)


def _flags_nibble_general(flag_lanes, msb_first):
    n = flag_lanes.shape[-1]
    f = flag_lanes.astype(np.uint8)
    if not msb_first:
        f = f[..., ::-1]
    if n == 1:
        return f[..., 0] * np.uint8(15)
    if n == 2:
        return (f[..., 0] * np.uint8(12)) | (f[..., 1] * np.uint8(3))
    per = 4 // n
    weights = np.array([((1 << per) - 1) << (4 - per * (i + 1)) for i in range(n)], dtype=np.uint8)
    return (f * weights).sum(axis=-1, dtype=np.uint8)


_LE = {64: (np.uint64, np.int64), 32: (np.uint32, np.int32), 16: (np.uint16, np.int16)}


def lanes_le(x: np.ndarray, width: int, signed: bool = False) -> np.ndarray:
    """uint64 (...) as (..., 64 // width) lanes in memory order (LSB lane first): for element-wise
    operations, where lane order does not matter, this is a view with no copy either way."""
    if width == 64:             # one lane per long word: a view whatever x's layout
        return x.view(_LE[64][signed])[..., None]
    if x.ndim and x.strides[-1] != x.itemsize:
        x = np.ascontiguousarray(x)
    return x.view(_LE[width][signed]).reshape(x.shape + (64 // width,))


def pack_le(r: np.ndarray) -> np.ndarray:
    """Inverse of lanes_le."""
    r = np.ascontiguousarray(r)
    if r.shape[-1] == 1 and r.itemsize == 8:     # one 64-bit lane: drop the unit axis
        return r[..., 0].view(U64)
    return r.view(U64).reshape(r.shape[:-1])


def sm_key(bits: np.ndarray, width: int) -> np.ndarray:
    """Sign-magnitude bit patterns -> int64 keys ordered as the values (+0 above -0)."""
    b = bits.astype(np.int64)
    mag = b & ((1 << (width - 1)) - 1)
    return np.where(b >> (width - 1) & 1, -mag - 1, mag)


# -- ALU ------------------------------------------------------------------------
# Each ALU instruction is a lane function (e, prec, x0, x1, y0, ctx) -> (out0, out1, flags); alu_op
# makes it the row's semantics: operands read, result and flags written, once, there.

def alu_op(fn):
    """An ALU lane function as a table row's semantics (e, ctx): reads x (and y's first long word),
    writes the result; flags is None or a function giving the (4, P) flag nibbles when a mask
    entry is written.  The lane function stays reachable as ``.lanes``."""
    def sem(e, ctx):
        x0, x1 = ctx.read(e.srcs[0], e) if e.srcs else (None, None)
        y0 = ctx.read(e.srcs[1], e)[0] if len(e.srcs) > 1 else None
        out0, out1, flags = fn(e, e.prec or "l", x0, x1, y0, ctx)
        ctx.write_all(e, out0, out1, flags)
    sem.__name__, sem.__qualname__, sem.__doc__, sem.__module__ = fn.__name__, fn.__qualname__, fn.__doc__, fn.__module__
    sem.lanes = fn
    return sem


@alu_op
def passa(e, prec, x0, x1, y0, ctx):
    """The 128-bit input; flag: lane all zero."""
    w = WIDTH[prec]
    return x0, x1, lambda: flags_nibble(lanes_le(x0, w) == 0, False)


@alu_op
def zero(e, prec, x0, x1, y0, ctx):
    """128 zero bits."""
    z = ctx.zeros()
    return z, z, None


@alu_op
def imm(e, prec, x0, x1, y0, ctx):
    """The payload the assembler built, in every cycle."""
    v = ctx.full(e.imm)
    return v, v, None


def _int_result(e, prec, r, x1, overflow):
    """An integer result: flag result >= 0, or (u) no carry / borrow, worked out only when a flag
    is written (ctx calls it before the step's writes land)."""
    out = pack_le(r)
    if not e.unsigned:
        return out, x1, lambda: flags_nibble(sign_flags(r, WIDTH[prec]), False)
    return out, x1, lambda: flags_nibble(~overflow(), False)


@alu_op
def inc(e, prec, x0, x1, y0, ctx):
    """x + 1, wrapping."""
    xs = lanes_le(x0, WIDTH[prec])
    return _int_result(e, prec, xs + xs.dtype.type(1), x1, lambda: xs == np.iinfo(xs.dtype).max)


@alu_op
def dec(e, prec, x0, x1, y0, ctx):
    """x - 1, wrapping."""
    xs = lanes_le(x0, WIDTH[prec])
    return _int_result(e, prec, xs - xs.dtype.type(1), x1, lambda: xs == 0)


@alu_op
def add(e, prec, x0, x1, y0, ctx):
    """x + y, wrapping."""
    w = WIDTH[prec]
    xs = lanes_le(x0, w)
    r = xs + lanes_le(y0, w)
    return _int_result(e, prec, r, x1, lambda: r < xs)


@alu_op
def sub(e, prec, x0, x1, y0, ctx):
    """x - y, wrapping."""
    w = WIDTH[prec]
    xs, ys = lanes_le(x0, w), lanes_le(y0, w)
    return _int_result(e, prec, xs - ys, x1, lambda: xs < ys)


def _bits_result(r, x1):
    """A bitwise result; flag: lane zero."""
    return pack_le(r), x1, lambda: flags_nibble(r == 0, False)


def _words_result(r, prec, x1):
    """A bitwise result computed on whole long words (the same bits, lane by lane, whatever the lanes:
    one numpy call, no lane views); flag: lane zero, worked out from the lanes when asked."""
    return r, x1, lambda: flags_nibble(lanes_le(r, WIDTH[prec]) == 0, False)


@alu_op
def and_(e, prec, x0, x1, y0, ctx):
    return _words_result(np.bitwise_and(x0, y0), prec, x1)


@alu_op
def or_(e, prec, x0, x1, y0, ctx):
    return _words_result(np.bitwise_or(x0, y0), prec, x1)


@alu_op
def xor(e, prec, x0, x1, y0, ctx):
    return _words_result(np.bitwise_xor(x0, y0), prec, x1)


@alu_op
def not_(e, prec, x0, x1, y0, ctx):
    return _words_result(np.invert(x0), prec, x1)


@alu_op
def lnot(e, prec, x0, x1, y0, ctx):
    """Logical not: 1 where the lane is 0."""
    xs = lanes_le(x0, WIDTH[prec])
    return _bits_result((xs == 0).astype(xs.dtype), x1)


def _counts(x0, y0, w):
    """x's lanes and y's lanes mod the lane width (shift and rotate counts)."""
    xs = lanes_le(x0, w)
    return xs, np.bitwise_and(lanes_le(y0, w), xs.dtype.type(w - 1))


@alu_op
def bsl(e, prec, x0, x1, y0, ctx):
    """x rotated left (a count of 0 gives x | x = x)."""
    w = WIDTH[prec]
    xs, sh = _counts(x0, y0, w)
    back = np.bitwise_and(xs.dtype.type(w) - sh, xs.dtype.type(w - 1))
    return _bits_result(np.left_shift(xs, sh) | np.right_shift(xs, back), x1)


@alu_op
def bsr(e, prec, x0, x1, y0, ctx):
    """x rotated right."""
    w = WIDTH[prec]
    xs, sh = _counts(x0, y0, w)
    back = np.bitwise_and(xs.dtype.type(w) - sh, xs.dtype.type(w - 1))
    return _bits_result(np.right_shift(xs, sh) | np.left_shift(xs, back), x1)


@alu_op
def lsl(e, prec, x0, x1, y0, ctx):
    """x shifted left; the result overwrites the counts (one buffer, no copy)."""
    xs, sh = _counts(x0, y0, WIDTH[prec])
    return _bits_result(np.left_shift(xs, sh, out=sh), x1)


@alu_op
def lsr(e, prec, x0, x1, y0, ctx):
    """x shifted right: logical with the u prefix, else arithmetic (the same bits as signed lanes:
    the counts are < w)."""
    w = WIDTH[prec]
    xs, sh = _counts(x0, y0, w)
    if e.unsigned:
        return _bits_result(np.right_shift(xs, sh, out=sh), x1)
    xi = lanes_le(x0, w, signed=True)
    si = sh.view(xi.dtype)
    return _bits_result(np.right_shift(xi, si, out=si).view(xs.dtype), x1)


def _maxmin(e, prec, x0, x1, y0, is_max):
    w = WIDTH[prec]
    if prec in FLOAT_PREC:
        xb, yb = lanes(x0, w), lanes(y0, w)
        kx, ky = sm_key(xb, w), sm_key(yb, w)
        both_zero = ((kx == 0) | (kx == -1)) & ((ky == 0) | (ky == -1))
        take_x = (kx >= ky if is_max else kx <= ky) | both_zero
        eq = (kx == ky) | both_zero
    else:                                 # element-wise: lanes in memory order
        # integers: the chosen lane is np.maximum's (minimum's); x is chosen when x >= y (x <= y),
        # equal lanes included, so the flag is that comparison, worked out only when it is written
        xs, ys = lanes_le(x0, w, not e.unsigned), lanes_le(y0, w, not e.unsigned)
        r = (np.maximum if is_max else np.minimum)(xs, ys).view(_LE[w][0])
        return pack_le(r), x1, lambda: flags_nibble(xs >= ys if is_max else xs <= ys, False)
    r = np.where(take_x, xb, yb)
    return pack(r), x1, lambda: flags_nibble(take_x | eq)


@alu_op
def max_(e, prec, x0, x1, y0, ctx):
    """The larger of x, y (floats by sign-magnitude order, both zero -> x); flag: x chosen or equal."""
    return _maxmin(e, prec, x0, x1, y0, True)


@alu_op
def min_(e, prec, x0, x1, y0, ctx):
    """The smaller of x, y (as max_)."""
    return _maxmin(e, prec, x0, x1, y0, False)


_FTOI_RANGE = {False: np.iinfo(np.int32), True: np.iinfo(np.uint32)}


@alu_op
def ftoi(e, prec, x0, x1, y0, ctx):
    """Toward zero, clipped to the lane's range (NaN gives 0); u: of |x|."""
    w = WIDTH[prec]
    if prec == "f":           # element-wise in memory order, the clip in float64 (both ends exact)
        with np.errstate(invalid="ignore"):   # a signalling NaN becomes 0 below
            t = np.trunc(lanes_le(x0, 32).view(np.float32), dtype=np.float64)
        if e.unsigned:
            np.abs(t, out=t)
        info = _FTOI_RANGE[e.unsigned]
        np.clip(t, float(info.min), float(info.max), out=t)
        np.copyto(t, 0.0, where=np.isnan(t))
        return pack_le(t.astype(info.dtype)), x1, None     # (whole numbers in the lane's range: exact)
    dt = lanes(x0, w).dtype if e.unsigned else lanes(x0, w, "i").dtype
    info = np.iinfo(dt)
    if prec == "d":           # element-wise; where every lane is inside the range (no NaN), a cast
        with np.errstate(invalid="ignore"):
            t = np.trunc(x0.view(np.float64))
        if e.unsigned:
            np.abs(t, out=t)
        if t.size and float(info.min) <= t.min() and t.max() < float(info.max):
            return t.astype(dt).view(U64), x1, None
    t = np.trunc(to_float(x0, prec).astype(np.float64))
    t = np.where(np.isnan(t), 0.0, np.abs(t) if e.unsigned else t)
    big, small = t >= float(info.max), t <= float(info.min)
    r = np.where(big | small, 0.0, t).astype(np.uint64 if e.unsigned else np.int64)
    r = np.where(big, info.max, np.where(small, info.min, r)).astype(dt)
    return pack(r), x1, None


@alu_op
def itof(e, prec, x0, x1, y0, ctx):
    """Integer to float of the same width, RNE."""
    w = WIDTH[prec]
    if prec == "f":           # int32 -> float32 rounds to nearest even, and gives no -0, denormal or NaN
        return pack_le(lanes_le(x0, 32, not e.unsigned).astype(np.float32)), x1, None
    xi = lanes(x0, w) if e.unsigned else lanes(x0, w, "i")
    if prec == "d":           # a 64-bit integer is a normal double or 0: the output rule changes nothing
        return xi[..., 0].astype(np.float64).view(U64), x1, None
    return from_float(xi.astype(np.float64), prec), x1, None


@alu_op
def floor(e, prec, x0, x1, y0, ctx):
    return from_float(np.floor(to_float(x0, prec)), prec), x1, None


_RSQRT_KEEP = np.uint64(~((1 << 47) - 1) & ((1 << 64) - 1))     # sign, exponent, 5 fraction bits


def _rsqrt_f32(x0):
    """rsqrt's fp32 result element-wise in memory order, or None when a lane is NaN (the general
    path below keeps which NaN numpy gives).  1/sqrt(|x|) of an fp32 is a normal float64; keeping 5
    fraction bits is floor(m * 64) / 64 of its frexp mantissa, and that value is exact in fp32."""
    with np.errstate(divide="ignore", invalid="ignore"):     # (a signalling NaN is invalid)
        t = lanes_le(x0, 32).view(np.float32).astype(np.float64)
        np.abs(t, out=t)
        np.sqrt(t, out=t)
        np.divide(1.0, t, out=t)
    b = t.view(np.uint64)
    b &= _RSQRT_KEEP
    if np.isnan(t).any():
        return None
    return pack_le(_normalized(t.astype(np.float32), 32))


@alu_op
def rsqrt(e, prec, x0, x1, y0, ctx):
    """Approximate 1/sqrt(|x|); flag: x >= 0."""
    w = WIDTH[prec]
    if prec == "f":
        r = _rsqrt_f32(x0)
        if r is not None:
            return r, x1, lambda: flags_nibble(sign_flags(lanes(x0, w), w))
    with np.errstate(divide="ignore", invalid="ignore"):
        xf = np.abs(to_float(x0, prec).astype(np.float64))
        r = 1.0 / np.sqrt(xf)
    m, ex = np.frexp(r)                       # keep 5 mantissa bits: the unit's documented accuracy
    r = np.ldexp(np.floor(m * 64.0) / 64.0, ex)
    r = np.where(np.isinf(r), np.inf, r)
    return from_float(r, prec), x1, lambda: flags_nibble(sign_flags(lanes(x0, w), w))


@alu_op
def relu(e, prec, x0, x1, y0, ctx):
    """y where x's sign is 0, else -0; flag: x's sign is 0."""
    w = WIDTH[prec]
    xb, yb = lanes(x0, w), lanes(y0, w)
    keep = sign_flags(xb, w)
    r = np.where(keep, yb, yb.dtype.type(1 << (w - 1)))
    return pack(r), x1, lambda: flags_nibble(keep)


def _leaky(prec, x0, x1, y0, factor):
    """y where x's sign is 0, else y * factor (a power of two); flag: x's sign is 0."""
    w = WIDTH[prec]
    keep = sign_flags(lanes(x0, w), w)
    y = to_float(y0, prec).astype(np.float64)
    with np.errstate(over="ignore"):
        r = np.where(keep, y, y * factor)
    return from_float(r, prec), x1, lambda: flags_nibble(keep)


@alu_op
def lrelud(e, prec, x0, x1, y0, ctx):
    return _leaky(prec, x0, x1, y0, 0.5)


@alu_op
def lreluo(e, prec, x0, x1, y0, ctx):
    return _leaky(prec, x0, x1, y0, 0.125)


@alu_op
def ilrelud(e, prec, x0, x1, y0, ctx):
    return _leaky(prec, x0, x1, y0, 2.0)


@alu_op
def packbit(e, prec, x0, x1, y0, ctx):
    """(x << 1) | msb(y); flag: msb(y) is 0."""
    w = WIDTH[prec]
    xb, yb = lanes(x0, w), lanes(y0, w)
    r = (xb << xb.dtype.type(1)) | (yb >> yb.dtype.type(w - 1))
    return pack(r), x1, lambda: flags_nibble(sign_flags(yb, w))


def _mab_rotate(x0: np.ndarray, shift: int) -> np.ndarray:
    """x0 (cycles, P) with PE i's long word moved to PE i+shift of its MAB (mod 4): two slice copies
    into one new array (np.roll on the (MAB, cycle, PE) view costs ten times as much)."""
    src = x0.reshape(x0.shape[0], -1, 4)
    out = np.empty(src.shape, dtype=x0.dtype)
    out[..., shift:] = src[..., :4 - shift]
    out[..., :shift] = src[..., 4 - shift:]
    return out.reshape(x0.shape)


@alu_op
def msl(e, prec, x0, x1, y0, ctx):
    """PE i's long word moves to PE i+1 of its MAB (0->1->2->3->0)."""
    return _mab_rotate(x0, 1), x1, None


@alu_op
def msr(e, prec, x0, x1, y0, ctx):
    """PE i's long word moves to PE i-1 of its MAB."""
    return _mab_rotate(x0, 3), x1, None


# -- MAU vector mode ----------------------------------------------------------

def mau_in(ctx, op, e, prec, raw=False):
    """A MAU input as float64 lanes of prec, honouring the operand's '-', 'e' and 'r' modifiers.

    Returns (lanes, v1): v1 is the operand's second long word, which a 64-bit result keeps."""
    v0, v1 = ctx.read(op, e)
    if op.mod == "e":                  # one precision lower, from the upper word(s)
        lower = {"d": "f", "f": "h", "g": "h"}[prec]
        x = to_float(v0, lower)
        n = {"d": 1, "f": 2, "g": 2}[prec]
        x = x[..., :n].astype(np.float64)
    elif op.mod == "r" and prec == "h":  # four fp32 in the 128-bit word reduced to half
        f = np.concatenate([lanes(v0, 32, "f"), lanes(v1 if v1 is not None else ctx.zeros(), 32, "f")], -1)
        x = mnhalf_to_f32(f32_to_mnhalf(f)).astype(np.float64)
    else:                              # exact float32/float64 values; ufuncs below compute in float64
        x = to_float(v0, prec, raw)
        if not raw:
            x = x.astype(np.float64)
    return (-x if op.neg else x), v1


def mau_acc_in(ctx, op, e):
    """The fp32 addend of a half FMA: four fp32 over the 128-bit word."""
    v0, v1 = ctx.read(op, e)
    if op.mod == "e":      # four halves in the first long word, extended to fp32
        x = to_float(v0, "h").astype(np.float64)
    else:
        x = np.concatenate([lanes(v0, 32, "f"), lanes(v1 if v1 is not None else ctx.zeros(), 32, "f")], -1)
        x = x.astype(np.float64)
    return -x if op.neg else x


def mau_out(ctx, e, r: np.ndarray, prec: str, x1, raw: bool = False):
    """Round float64 lanes r to the output precision, normalise, and write with MAU flags."""
    if prec == "h":        # four fp32 results across v0, v1; 'r' reduces them to four halves
        if e.out_reduce:
            out0, out1 = from_float(r, "h"), ctx.zeros()
            bits = lanes(out0, 16)
            flags = lambda: flags_nibble(sign_flags(bits, 16) | (bits == 0))
        else:
            bits = normalize_bits(r.astype(np.float32).view(np.uint32), 32)
            out0, out1 = pack(bits[..., :2]), pack(bits[..., 2:])
            flags = lambda: flags_nibble(~(bits >> 31).astype(bool))
        ctx.write_all(e, out0, out1, flags)
        return
    if e.out_reduce:       # d -> f in the upper word, f -> h in the upper 32 bits
        low = {"d": "f", "f": "h", "g": "h"}[prec]
        n = r.shape[-1]
        padded = np.concatenate([r, np.zeros(r.shape[:-1] + (64 // {"f": 32, "h": 16}[low] - n,))], -1)
        out0 = from_float(padded, low)
        w = WIDTH[low]
    else:
        out0 = from_float(r, prec, raw)
        w = WIDTH[prec]
    if raw:
        flags = lambda: flags_nibble(sign_flags(raw_lanes(out0, w), w)[..., ::-1])
    else:
        flags = lambda: flags_nibble(sign_flags(lanes(out0, w), w))
    ctx.write_all(e, out0, x1, flags)


def _mau_x(e, ctx):
    """A vector op's first input: (lanes, its second long word, raw).  Element-wise fp64/fp32 work
    runs on lanes in memory order (raw); anything positional does not."""
    raw = e.prec != "h" and not e.out_reduce and not any(o.mod for o in e.srcs)
    x, x1 = mau_in(ctx, e.srcs[0], e, e.prec, raw)
    return x, x1, raw


# fp32 lanes in memory order add and multiply natively (x.dtype float32): float64 then rounding to
# float32 is the same as float32 arithmetic for + and * (53 >= 2 * 24 + 2: the double rounding is
# innocuous), and half the work.  Not for vfma: its sum of an exact product is rounded twice.
# inf - inf, 0 * inf: IEEE results, not errors (np.errstate below).

def _product(e, ctx, x, raw):
    """x * y as float64 products (exact for fp32 and half) in one owned buffer, updated in place (x
    may be a view of the machine's memory, so it is copied first); fp64: the other half's PEs
    (subpeid = PE index in its MAB) give +0."""
    r = x.astype(np.float64)
    np.multiply(r, mau_in(ctx, e.srcs[1], e, e.prec, raw)[0], out=r)
    if e.prec == "d":
        off = {"u": slice(2, 4), "d": slice(0, 2)}[e.half]
        r.reshape((r.shape[0], -1, 4) + r.shape[2:])[:, :, off] = 0.0
    return r


def vfma(e, ctx):
    """x*y + z per lane (the fp32 addend of a half FMA: mau_acc_in)."""
    x, x1, raw = _mau_x(e, ctx)
    with np.errstate(invalid="ignore", over="ignore"):
        if x.dtype == np.float32:     # fp32 lanes: the same float64 sum of the exact product, in two
            r = ctx.scratch(x.shape, np.float64, 0)          # reused buffers; a plain cast-copy is
            t = ctx.scratch(x.shape, np.float64, 1)          # several times cheaper than a ufunc
            np.copyto(r, x)                                  # casting its inputs as it goes
            np.copyto(t, mau_in(ctx, e.srcs[1], e, e.prec, raw)[0])
            np.multiply(r, t, out=r)
            np.copyto(t, mau_in(ctx, e.srcs[2], e, e.prec, raw)[0])
            np.add(r, t, out=r)
            mau_out(ctx, e, r, e.prec, x1, raw)      # rounds r into a new fp32 array: r does not escape
            return
        r = _product(e, ctx, x, raw)
        z = mau_acc_in(ctx, e.srcs[2], e) if e.prec == "h" else mau_in(ctx, e.srcs[2], e, e.prec, raw)[0]
        np.add(r, z, out=r)
    mau_out(ctx, e, r, e.prec, x1, raw)


def vmul(e, ctx):
    """x*y per lane."""
    x, x1, raw = _mau_x(e, ctx)
    with np.errstate(invalid="ignore", over="ignore"):
        if x.dtype == np.float32:
            r = np.multiply(x, mau_in(ctx, e.srcs[1], e, e.prec, raw)[0])
            # a zero times a negative number is -0, which the output rule makes +0: adding +0 does
            # that in one pass here (-0 + +0 = +0, and x + +0 = x for every other x), so the
            # normalisation's check finds nothing to change in the common case (idle lanes of zeros)
            np.add(r, r.dtype.type(0), out=r)
        else:
            r = _product(e, ctx, x, raw)
    mau_out(ctx, e, r, e.prec, x1, raw)


def vadd(e, ctx):
    """x + y per lane (hvadd's y may be an extended fp32 addend)."""
    x, x1, raw = _mau_x(e, ctx)
    y_op = e.srcs[1]
    with np.errstate(invalid="ignore", over="ignore"):
        y = mau_acc_in(ctx, y_op, e) if y_op.mod == "e" else mau_in(ctx, y_op, e, e.prec, raw)[0]
        r = np.add(x, y, dtype=np.float32 if x.dtype == np.float32 else np.float64)
    mau_out(ctx, e, r, e.prec, x1, raw)


def vpassa(e, ctx):
    """x normalised (with r: to the next lower precision)."""
    x, x1, raw = _mau_x(e, ctx)
    mau_out(ctx, e, x, e.prec, x1, raw)


# -- MAU matrix mode ---------------------------------------------------------------
# A matrix register is 16 rows of 4 long words (one per PE of the MAB): a 4x4
# fp64, 8x8 fp32 or 16x16 half matrix, row i at row i.

def mwrite(e, ctx):
    """Rows r.. of $lx/$ly from the 4 cycles (ll: 2 rows per cycle); column k from PE k."""
    v0, v1 = ctx.read(e.srcs[0], e)
    reg, row = e.dsts[0].reg, e.dsts[0].base
    n_mab = ctx.machine.n_mab
    mat = ctx.state.matrix
    if e.dsts[0].width == "ll":
        both = np.stack([to_mab(v0), to_mab(v1)], 2)            # mab, cycle, slot, pe
        mat[:, reg, row:row + 8, :] = both.reshape(n_mab, 8, 4)
    else:
        mat[:, reg, row:row + 4, :] = to_mab(v0)


def _matrix_values(ctx, reg, prec):
    """The matrix register as a float64 (MAB, rows, cols) array in prec."""
    m = ctx.state.matrix[:, reg]                  # mab, 16 rows, 4 pe
    if prec == "d":
        return m[:, :4, :].view(np.float64)
    if prec in "fg":
        f = to_float(m[:, :8, :], prec)            # mab, 8, 4pe, 2 lanes
        return f.reshape(m.shape[0], 8, 8).astype(np.float64)
    h = mnhalf_to_f32(lanes(m, 16))               # mab, 16, 4pe, 4 lanes
    return h.reshape(m.shape[0], 16, 16).astype(np.float64)


def _matrix_product(e, ctx):
    """Matrix-vector mode: per cycle A b, b spread over the MAB's 4 PEs: (cycle, P, lanes), and the
    input's second long word."""
    prec, reg = e.prec, e.srcs[0].reg
    a = _matrix_values(ctx, reg, prec)
    n_mab = ctx.machine.n_mab
    b, x1 = mau_in(ctx, e.srcs[1], e, prec)
    b = to_mab(b)                                    # mab, cycle, pe, lane
    if prec == "d":
        vec = b[..., 0]                              # mab, cycle, 4
        y = np.einsum("mjk,mck->mcj", a, vec)        # 4 outputs, one per PE
        keep = {"u": (0, 1), "d": (2, 3)}[e.half]
        sel = np.zeros(4, bool)
        sel[list(keep)] = True
        y = np.where(sel, y, 0.0)[..., None]         # mab, cycle, pe, 1
    elif prec == "f":                                # 8x4: even columns against the PEs' first lanes
        vec = b[..., 0]                              # mab, cycle, 4
        y = np.einsum("mjk,mck->mcj", a[:, :, 0::2], vec).reshape(n_mab, 4, 4, 2)
    elif prec == "g":                                # 8x8: all 8 fp32 of the cycle
        vec = b.reshape(n_mab, 4, 8)
        y = np.einsum("mjk,mck->mcj", a, vec).reshape(n_mab, 4, 4, 2)
    else:                                            # 16x16
        vec = b.reshape(n_mab, 4, 16)
        y = np.einsum("mjk,mck->mcj", a, vec).reshape(n_mab, 4, 4, 4)
    return from_mab(y), x1                           # cycle, P, lanes


def mmul(e, ctx):
    """Per cycle A b."""
    r, x1 = _matrix_product(e, ctx)
    mau_out(ctx, e, r, e.prec, x1)


def mfma(e, ctx):
    """Per cycle A b + c."""
    r, x1 = _matrix_product(e, ctx)
    c = e.srcs[2]
    r = r + (mau_acc_in(ctx, c, e) if e.prec == "h" else mau_in(ctx, c, e, e.prec)[0])
    mau_out(ctx, e, r, e.prec, x1)


def mread(e, ctx):
    """Transposed read: rows r.. of the transpose, in the layout mwrite takes."""
    prec, src = e.prec, e.srcs[0]
    m = ctx.state.matrix[:, src.reg]                          # mab, 16, 4
    n_mab = m.shape[0]
    if prec == "d":
        t = m[:, :4, :].transpose(0, 2, 1)                     # rows of A^T
        v0, v1 = from_mab(t[:, src.base:src.base + 4, :]), None  # mab, cycle, pe
    elif prec in "fg":
        el = lanes(m[:, :8, :], 32).reshape(n_mab, 8, 8)
        t = el.transpose(0, 2, 1)[:, src.base:src.base + 4, :]   # mab, cycle, 8
        v0, v1 = from_mab(pack(t.reshape(n_mab, 4, 4, 2))), None
    else:                                                     # 16x16 halves, two rows per cycle (ll)
        el = lanes(m, 16).reshape(n_mab, 16, 16)
        t = el.transpose(0, 2, 1)[:, src.base:src.base + 8, :].reshape(n_mab, 4, 2, 4, 4)  # mab,c,slot,pe,4
        p = pack(t)                                           # mab, c, slot, pe
        v0, v1 = from_mab(p[:, :, 0, :]), from_mab(p[:, :, 1, :])
    ctx.write_all(e, v0, v1, None)


def bfn(e, ctx):
    """Block-float conversion: a block shares its largest exponent; mantissas round (RNE) to it.

    Blocks: d and f, the 4 PEs of a MAB at one cycle (per lane); g, the 8 fp32 of a
    cycle across the MAB; h, the 16 halves of a cycle across the MAB.  The result is
    stored as the equal ordinary value (see docs/isa.md)."""
    prec = e.prec
    v0, v1 = ctx.read(e.srcs[0], e)
    x = to_float(v0, prec).astype(np.float64)        # cycle, P, n
    blk = to_mab(x)                                   # mab, cycle, pe, lane
    mbits = {"d": 52, "f": 23, "g": 18, "h": e.bfn_bits or 9}[prec]
    axes = (2,) if prec in "df" else (2, 3)
    _, ex = np.frexp(blk)
    emax = np.max(np.where(blk == 0, -100000, ex), axis=axes, keepdims=True)
    emax = np.where(emax == -100000, 0, emax)        # an all-zero block
    ulp = np.ldexp(1.0, emax - 1 - mbits)
    q = np.rint(blk / ulp) * ulp
    q = np.where(np.isinf(blk), blk, q)
    out = from_float(from_mab(q), prec)
    ctx.write_all(e, out, v1, None)
