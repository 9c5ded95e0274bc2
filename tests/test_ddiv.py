"""Double division on the emulator device is correctly rounded (OpenCL 1.2 full profile: 0 ulp):
random operands over many exponent ranges, hard cases (quotients near powers of two, x = y,
small integer ratios, divisors near the top and bottom of the exponent range, subnormal operands
whose quotient is normal), bit for bit against numpy; IEEE special values; quotients below the
normal range flush to the zero of the quotient's sign (the MAU has no double subnormals)."""
import numpy as np
import pytest

import mncl as cl

SRC = r"""
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
__kernel void d(__global const double *a, __global const double *b, __global double *c) {
  int i = get_global_id(0);
  c[i] = a[i] / b[i];
}
"""


@pytest.fixture(scope="module")
def env():
    ctx = cl.Context([cl.get_device("emulator", "tiny")])
    return ctx, cl.CommandQueue(ctx), cl.Program(ctx, SRC).build()


def divide(env, a, b):
    ctx, q, prg = env
    a, b = np.ascontiguousarray(a, np.float64), np.ascontiguousarray(b, np.float64)
    mf = cl.mem_flags
    ba = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
    bb = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=b)
    bc = cl.Buffer(ctx, mf.WRITE_ONLY, a.nbytes)
    prg.d(q, (a.size,), None, ba, bb, bc)
    c = np.empty_like(a)
    cl.enqueue_copy(q, c, bc)
    return c


def bits(v):
    return np.asarray(v, np.float64).view(np.uint64)


def want(a, b):
    """numpy's a / b with results below the normal range flushed to the zero of their sign."""
    with np.errstate(all="ignore"):
        w = a / b
    return np.where(np.abs(w) < np.finfo(np.float64).tiny, np.copysign(0.0, w), w)


def assert_bits(got, a, b):
    w = want(a, b)
    bad = (bits(got) != bits(w)) & ~(np.isnan(got) & np.isnan(w))
    if bad.any():
        i = np.flatnonzero(bad)[:8]
        ulps = bits(got[i]).astype(np.int64) - bits(w[i]).astype(np.int64)
        raise AssertionError(f"{bad.sum()} of {a.size} quotients differ, e.g. "
                             + ", ".join(f"{a[k]!r} / {b[k]!r} = {got[k]!r}, not {w[k]!r} ({u:+d} ulp)"
                                         for k, u in zip(i, ulps)))


def test_random_operands_as_in_the_report(env):
    rng = np.random.default_rng(23)
    a, b = rng.uniform(0, 10, 256), rng.uniform(0.1, 10.1, 256)
    assert_bits(divide(env, a, b), a, b)


def test_random_mantissas_over_exponent_ranges(env):
    rng = np.random.default_rng(1)
    n = 4096
    m = rng.uniform(1, 2, (2, n)) * rng.choice([-1.0, 1.0], (2, n))
    ea = rng.integers(-1000, 1000, n)
    eb = np.clip(ea - rng.integers(-1000, 1000, n), -1020, 1020)     # the quotient mostly normal
    a, b = np.ldexp(m[0], ea), np.ldexp(m[1], eb)
    assert_bits(divide(env, a, b), a, b)


def test_operands_near_the_ends_of_the_exponent_range(env):
    rng = np.random.default_rng(2)
    n = 1024
    big = np.ldexp(rng.uniform(1, 2, n), rng.integers(990, 1024, n))          # up to 1.8e308
    small = np.ldexp(rng.uniform(1, 2, n), rng.integers(-1022, -990, n))       # down to 2.2e-308
    mid = rng.uniform(0.5, 4, n)
    a = np.concatenate([big, small, big, small, mid, mid, big, small])
    b = np.concatenate([big[::-1], small[::-1], mid, mid, big, small, small * 1e10, big * 1e-10])
    b[b == np.inf] = 1e308
    assert_bits(divide(env, a, b), a, b)


def test_overflow_and_underflow(env):
    rng = np.random.default_rng(3)
    n = 512
    a = np.ldexp(rng.uniform(1, 2, n), rng.integers(500, 1024, n)) * rng.choice([-1.0, 1.0], n)
    b = np.ldexp(rng.uniform(1, 2, n), rng.integers(-1022, -500, n))
    assert_bits(divide(env, np.concatenate([a, b]), np.concatenate([b, a])),
                np.concatenate([a, b]), np.concatenate([b, a]))
    # at the edges: largest and smallest normal quotients, and the first ones outside
    t = np.finfo(np.float64).tiny
    a = np.array([np.finfo(np.float64).max, t, t, 1.5 * t, -t, 1.0, 4.0, 1.0])
    b = np.array([1.0, 1.0, 2.0, 2.0, 1.0000000000000002, 0.5 / np.finfo(np.float64).max, 0.5 ** 1022, 2.0 ** 1023])
    assert_bits(divide(env, a, b), a, b)


def test_hard_cases(env):
    rng = np.random.default_rng(4)
    n = 2048
    ints = np.arange(1, 65, dtype=np.float64)
    i, j = np.meshgrid(ints, ints, indexing="ij")
    y = rng.uniform(1, 2, n)
    q = np.ldexp(1.0, rng.integers(-30, 30, n))                    # quotients next to powers of two
    a = np.concatenate([i.ravel(), y, y * q, np.nextafter(y * q, 0), np.nextafter(y * q, 9),
                        [1.0, 2.0, 10.0, 1e300, 1e-300, 3.0, 7.0]])
    b = np.concatenate([j.ravel(), y, y, y, y, [3.0, 3.0, 12.0, 3e-5, 7e299, 1e300, 1e-300]])
    assert_bits(divide(env, a, b), a, b)
    # x = m y + half an ulp: the exact quotient is as close to a midpoint as a quotient can be
    m = 1 + rng.integers(0, 2 ** 52, n) * 2.0 ** -52
    b = 1 + rng.integers(0, 2 ** 52, n) * 2.0 ** -52
    a = m * b                                                      # rounded: off a midpoint by a little
    assert_bits(divide(env, a, b), a, b)
    assert_bits(divide(env, np.nextafter(a, 0), b), np.nextafter(a, 0), b)


def test_subnormal_operands_with_a_normal_quotient(env):
    rng = np.random.default_rng(5)
    n = 512
    s = np.ldexp(rng.uniform(1, 2, n), rng.integers(-1074, -1023, n))          # subnormal
    s[:4] = [5e-324, 1e-323, 2.2250738585072009e-308, 1e-310]
    norm = np.ldexp(rng.uniform(1, 2, n), rng.integers(-1000, -900, n))
    a = np.concatenate([s, norm, s, s * 3])
    b = np.concatenate([norm, s, s[::-1], np.full(n, 1e-20)])
    assert_bits(divide(env, a, b), a, b)


def test_special_values(env):
    s = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -2.5, 1e-300, 1e300, 5e-324, -3.0e-310])
    a, b = (g.ravel() for g in np.meshgrid(s, s, indexing="ij"))
    assert_bits(divide(env, a, b), a, b)
