"""Number formats against references written independently of emulator/numbers.py."""
import math

import numpy as np
import pytest

from emulator.numbers import f32_to_mnhalf, lanes, mnhalf_to_f32, normalize_bits, pack


def ref_decode(h: int) -> float:
    s, e, m = h >> 15, (h >> 9) & 0x3F, h & 0x1FF
    if e == 0:
        return -0.0 if s else 0.0
    if e == 63:
        return -math.inf if s else math.inf
    return (-1) ** s * (1 + m / 512) * 2.0 ** (e - 31)


def test_public_examples():
    assert mnhalf_to_f32(np.uint16(0x3E00)) == 1.0
    assert mnhalf_to_f32(np.uint16(0x4280)) == 5.0
    assert f32_to_mnhalf(np.float32(5.0)) == 0x4280
    assert f32_to_mnhalf(np.float32(-1.0)) == 0xBE00


def test_decode_all_65536_patterns():
    h = np.arange(65536, dtype=np.uint32).astype(np.uint16)
    got = mnhalf_to_f32(h).astype(np.float64)
    want = np.array([ref_decode(int(x)) for x in range(65536)])
    assert np.array_equal(got, want) and np.array_equal(np.signbit(got), np.signbit(want))


def test_encode_round_trips_every_finite_pattern():
    h = np.arange(65536, dtype=np.uint32).astype(np.uint16)
    e = (h >> 9) & 0x3F
    finite = (e > 0) & (e < 63)
    assert np.array_equal(f32_to_mnhalf(mnhalf_to_f32(h[finite])), h[finite])


def test_encode_rounds_to_nearest_even_against_exact_rationals():
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(20000) * 10.0 ** rng.integers(-8, 9, 20000)).astype(np.float32)
    got = mnhalf_to_f32(f32_to_mnhalf(x)).astype(np.float64)
    # reference: the nearest representable value, ties to even mantissa, by brute force on neighbours
    for xi, gi in zip(x.astype(np.float64)[:3000], got[:3000]):
        m, ex = math.frexp(abs(xi))              # abs = m * 2^ex, m in [0.5, 1)
        ulp = 2.0 ** (ex - 1 - 9)
        lo = math.floor(abs(xi) / ulp) * ulp
        hi = lo + ulp
        if abs(xi) - lo < hi - abs(xi):
            r = lo
        elif abs(xi) - lo > hi - abs(xi):
            r = hi
        else:
            r = lo if int(round(lo / ulp)) % 2 == 0 else hi
        if r < 2.0 ** -30:                       # below the smallest normal: no subnormals
            r = 0.0
        assert gi == math.copysign(r, xi), (xi, gi, r)


def test_overflow_to_infinity_and_underflow_to_zero():
    assert mnhalf_to_f32(f32_to_mnhalf(np.float32(1e10))) == np.inf
    assert mnhalf_to_f32(f32_to_mnhalf(np.float32(-1e10))) == -np.inf
    assert f32_to_mnhalf(np.float32(1e-12)) == 0
    assert f32_to_mnhalf(np.float32(-1e-12)) == 0x8000
    assert f32_to_mnhalf(np.float32(np.nan)) in (0x7E00, 0xFE00)
    # the largest finite value, and the boundary that rounds up into infinity
    assert mnhalf_to_f32(np.uint16(0x7DFF)) == 4290772992.0
    assert f32_to_mnhalf(np.float32(4290772992.0 + 2 ** 21)) == 0x7E00
    # just below the smallest normal rounds up to it
    assert f32_to_mnhalf(np.float32(2.0 ** -30 * (1 - 2 ** -12))) == 0x0200


def test_normalisation_flushes_subnormals_and_negative_zero():
    bits = np.array([0x00000042, 0x80000000, 0x7F800001, 0x3F800000], dtype=np.uint32)
    assert normalize_bits(bits, 32).tolist() == [0, 0, 0x7F800000, 0x3F800000]


@pytest.mark.parametrize("w", [64, 32, 16])
def test_lanes_are_msb_first_and_pack_inverts(w):
    x = np.array([0x0123456789ABCDEF], dtype=np.uint64)
    l = lanes(x, w)
    n = 64 // w
    want = [(0x0123456789ABCDEF >> (w * (n - 1 - i))) & ((1 << w) - 1) for i in range(n)]
    assert l[0].tolist() == want
    assert pack(l).tolist() == x.tolist()
