"""IEEE NaN results on the emulator device although its MAU never makes a NaN (0 * inf, inf - inf
and a NaN operand give +-inf there): the backend's fix-ups (translator/backend/nans.py), checked
against numpy, and their absence under -cl-finite-math-only."""
import numpy as np
import pytest

import mncl as cl

SRC = r"""
__kernel void ops(__global const float *a, __global const float *b, __global const float *c,
                  __global float *o) {
  int i = get_global_id(0);
  float x = a[i], y = b[i], z = c[i];
  o[8 * i] = x + y;
  o[8 * i + 1] = x - y;
  o[8 * i + 2] = x * y;
  o[8 * i + 3] = fma(x, y, z);
  o[8 * i + 4] = x / y;
  o[8 * i + 5] = sqrt(x);
  o[8 * i + 6] = (x * y) - (y * z);
  o[8 * i + 7] = fmax(x * y, z) + fmin(z, x);
}

__kernel void ops64(__global const double *a, __global const double *b, __global double *o) {
  int i = get_global_id(0);
  double x = a[i], y = b[i];
  o[4 * i] = x + y;
  o[4 * i + 1] = x - y;
  o[4 * i + 2] = x * y;
  o[4 * i + 3] = x / y;
}

__kernel void conv(__global const float *a, __global const float *b, __global int *o,
                   __global uchar *u) {
  int i = get_global_id(0);
  o[3 * i] = convert_int_sat(a[i] * 1.0e6f);
  o[3 * i + 1] = convert_int_sat(a[i] + b[i]);
  o[3 * i + 2] = (a[i] * b[i]) != (a[i] * b[i]);
  u[i] = convert_uchar_sat(a[i] * b[i]);
}

__kernel void matvec_t(__global const float *At, __global const float *x, __global float *y, int m, int n) {
  int i = get_global_id(0);
  float s = 0.0f;
  for (int j = 0; j < n; j++)
    s += At[j * m + i] * x[j];
  y[i] = s;
}

__kernel void until(__global const float *a, __global const int *len, __global float *y, int m) {
  int i = get_global_id(0);
  float s = 1.0f, p = 0.0f;
  for (int j = 0; j < len[i]; j++) {
    s = s * a[j * m + i] + p;
    p -= a[j * m + i];
  }
  y[2 * i] = s;
  y[2 * i + 1] = p;
}

__kernel void watched(__global const float *At, __global const float *x, __global float *y,
                      __global int *big, int m, int n) {
  int i = get_global_id(0);
  float s = 0.0f;
  int k = 0;
  for (int j = 0; j < n; j++) {
    s += At[j * m + i] * x[j];
    k += s > 100.0f;
  }
  y[i] = s;
  big[i] = k;
}
"""

SPECIALS = np.array([0.0, -0.0, 1.0, -1.0, 2.5, np.inf, -np.inf, np.nan, 3e38, -3e38], np.float32)


@pytest.fixture(scope="module")
def env():
    dev = cl.get_device(machine="tiny")
    ctx = cl.Context([dev])
    return ctx, cl.CommandQueue(ctx), cl.Program(ctx, SRC).build()


def run(env, kernel, n, *arrays, out=(), scalars=()):
    """Run `kernel` over n work-items on the input arrays and zeroed outputs `out`; the outputs."""
    ctx, q, prg = env
    mf = cl.mem_flags
    bufs = [cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=np.ascontiguousarray(a))
            for a in list(arrays) + list(out)]
    getattr(prg, kernel)(q, (n,), None, *bufs, *scalars)
    res = [np.empty_like(o) for o in out]
    for r, b in zip(res, bufs[len(arrays):]):
        cl.enqueue_copy(q, r, b)
    return res


def same(got, want):
    """Equal values: NaN where numpy has NaN, the same infinities; -0 == +0 and denormal results
    are zero (the MAU makes +0 of both, docs/isa.md)."""
    want = want.astype(got.dtype)
    want = np.where(np.abs(want) < np.finfo(want.dtype).tiny, 0, want)
    np.testing.assert_allclose(got, want, rtol=np.finfo(got.dtype).eps, atol=0)     # division: <= 1 ulp


def test_arithmetic_on_every_pair_of_specials(env):
    a, b, c = (g.ravel() for g in np.meshgrid(SPECIALS, SPECIALS, SPECIALS[[0, 2, 5, 6, 7]], indexing="ij"))
    o, = run(env, "ops", a.size, a, b, c, out=[np.zeros(8 * a.size, np.float32)])
    o = o.reshape(-1, 8)
    with np.errstate(all="ignore"):
        d = a.astype(np.float64)
        same(o[:, 0], a + b)
        same(o[:, 1], a - b)
        same(o[:, 2], a * b)
        same(o[:, 3], (d * b + c).astype(np.float32))          # fused: the product is exact
        big = np.abs(b) > 2.0 ** 126           # 1 / b is denormal, flushed: x / b is 0 (left alone)
        same(o[~big, 4], (a / b)[~big])
        big = np.abs(a) > 2.0 ** 126           # rsqrt(a) squared is denormal: inf (left alone)
        same(o[~big, 5], np.sqrt(a)[~big])
        same(o[:, 6], a * b - b * c)
        same(o[:, 7], np.fmax(a * b, c) + np.fmin(c, a))
    assert np.isnan(o).sum() > 200


def test_double_arithmetic_on_specials(env):
    s = SPECIALS.astype(np.float64)
    s[-2:] = [1e300, -1e300]
    a, b = (g.ravel() for g in np.meshgrid(s, s, indexing="ij"))
    o, = run(env, "ops64", a.size, a, b, out=[np.zeros(4 * a.size)])
    o = o.reshape(-1, 4)
    with np.errstate(all="ignore"):
        for k, want in enumerate([a + b, a - b, a * b, a / b]):
            big = np.abs(b) > 2.0 ** 1022 if k == 3 else np.zeros(a.size, bool)
            same(o[~big, k], want[~big])


def test_conversions_of_nan_saturate_to_zero(env):
    a, b = (g.ravel() for g in np.meshgrid(SPECIALS, SPECIALS, indexing="ij"))
    o, u = run(env, "conv", a.size, a, b, out=[np.zeros(3 * a.size, np.int32), np.zeros(a.size, np.uint8)])
    o = o.reshape(-1, 3)

    def sat(x, t):
        info = np.iinfo(t)
        return np.where(np.isnan(x), 0, np.clip(np.trunc(np.nan_to_num(x, nan=0.0)), info.min, info.max)).astype(t)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(o[:, 0], sat((a * np.float32(1e6)).astype(np.float64), np.int32))
        np.testing.assert_array_equal(o[:, 1], sat((a + b).astype(np.float64), np.int32))
        np.testing.assert_array_equal(o[:, 2], np.isnan(a * b).astype(np.int32))
        np.testing.assert_array_equal(u, sat((a * b).astype(np.float64), np.uint8))


def reduction_inputs(m=64, n=24):
    rng = np.random.default_rng(5)
    At, x = rng.standard_normal((n, m)).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    x[[2, 3, 4, 7, 9]] = 1.0
    At[5, 3] = np.nan                         # a NaN in the middle
    At[7, 4], At[9, 4] = np.inf, -np.inf      # inf - inf
    At[3, 6] = np.inf                         # stays inf
    x[11], At[11, 8] = 0.0, np.inf            # 0 * inf
    At[2, 9] = At[3, 9] = 3e38                # overflows to inf, then finite terms
    At[2, 10], At[4, 10] = 3e38, -3e38        # back to finite with no inf
    return At, x


def reference_sum(At, x):
    s = np.zeros(At.shape[1], np.float32)
    with np.errstate(all="ignore"):
        for j in range(At.shape[0]):
            s = (s + At[j] * x[j]).astype(np.float32)
    return s


@pytest.mark.parametrize("kernel", ["matvec_t", "watched"])
def test_reduction_loop_with_nan_and_inf_minus_inf(env, kernel):
    """matvec_t's loop carries its sum lazily and runs again exactly only when a sum is +-inf;
    'watched' compares the sum in every pass, so it is settled in the loop."""
    At, x = reduction_inputs()
    m, n = At.shape[1], At.shape[0]
    if kernel == "matvec_t":
        y, = run(env, kernel, m, At.ravel(), x, out=[np.zeros(m, np.float32)], scalars=(np.int32(m), np.int32(n)))
    else:
        y, big = run(env, kernel, m, At.ravel(), x, out=[np.zeros(m, np.float32), np.zeros(m, np.int32)],
                     scalars=(np.int32(m), np.int32(n)))
        with np.errstate(all="ignore"):
            sums = np.cumsum(At * x[:, None], axis=0, dtype=np.float32)
            want = (sums > 100).sum(axis=0)
        np.testing.assert_array_equal(big, want)
    want = reference_sum(At, x)
    assert np.isnan(want[[3, 4, 8]]).all() and np.isinf(want[[6, 9]]).all() and np.isfinite(want[10])
    np.testing.assert_allclose(y, want, rtol=1e-5)


def test_reduction_loop_without_specials_is_exact(env):
    rng = np.random.default_rng(6)
    m, n = 64, 16
    At, x = rng.standard_normal((n, m)).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    y, = run(env, "matvec_t", m, At.ravel(), x, out=[np.zeros(m, np.float32)], scalars=(np.int32(m), np.int32(n)))
    np.testing.assert_allclose(y, reference_sum(At, x), rtol=1e-5)


def test_divergent_loop_with_two_lazy_accumulators(env):
    m, n = 32, 12
    rng = np.random.default_rng(7)
    a = rng.uniform(0.5, 2, (n, m)).astype(np.float32)
    a[:2, 1], a[2, 1] = 1.0, np.inf    # s = 0, then 0 * inf
    a[2, 2] = np.nan
    a[1, 5] = 3e38                     # s overflows to inf and stays there
    a[1:3, 6] = 3e38                   # s inf, p -inf, then inf + -inf
    length = rng.integers(0, n + 1, m).astype(np.int32)
    length[[1, 2, 5, 6]] = n
    y, = run(env, "until", m, a.ravel(), length, out=[np.zeros(2 * m, np.float32)], scalars=(np.int32(m),))
    s, p = np.ones(m, np.float32), np.zeros(m, np.float32)
    with np.errstate(all="ignore"):
        for j in range(n):
            on = j < length
            s = np.where(on, (s * a[j] + p).astype(np.float32), s)
            p = np.where(on, (p - a[j]).astype(np.float32), p)
    assert np.isnan(s[[1, 2, 6]]).all() and np.isinf(s[5])
    np.testing.assert_allclose(y.reshape(-1, 2), np.stack([s, p], 1), rtol=1e-5)


def asm(src, kernel, options=()):
    from translator import compile_opencl
    from translator.backend import compile_kernel
    import emulator.machine
    return compile_kernel(compile_opencl(src, spmd=True, options=options), kernel,
                          emulator.machine.load_machine("tiny")).asm


@pytest.mark.parametrize("option", ["-cl-finite-math-only", "-cl-fast-relaxed-math"])
def test_finite_math_only_skips_the_fix_ups(option):
    """The default build tests for infinities where values leave a chain (one any-reduction) and
    after a lazy loop; with nnan on the instructions there is nothing to fix."""
    src = SRC.split("__kernel void conv")[0] + "__kernel void matvec_t" + SRC.split("__kernel void matvec_t")[1]
    for kernel in ("ops", "matvec_t"):
        default, fast = asm(src, kernel), asm(src, kernel, [option])
        assert default.count(".if any") > fast.count(".if any")
        assert len(fast.splitlines()) < len(default.splitlines())


ZEROS = r"""
__kernel void zeros(__global const float *a, __global const float *b, __global const float *c,
                    __global float *o) {
  int i = get_global_id(0);
  float x = a[i], y = b[i], z = c[i];
  o[6 * i] = x * y;
  o[6 * i + 1] = x + y;
  o[6 * i + 2] = x - y;
  o[6 * i + 3] = fma(x, y, z);
  o[6 * i + 4] = -(x * y) + z;
  o[6 * i + 5] = (x * y) * z;
}

__kernel void product(__global const float *a, __global const float *b, __global const float *s0,
                      __global float *y, int m, int n) {
  int i = get_global_id(0);
  float p = 1.0f, s = s0[i];
  for (int j = 0; j < n; j++) {
    p *= a[j * m + i];
    s += b[j * m + i] * -0.0f;
  }
  y[2 * i] = p;
  y[2 * i + 1] = s;
}

__kernel void counted(__global const float *a, __global float *y, int m, int n) {
  int i = get_global_id(0);
  float p = 1.0f, s = 0.0f;
  for (int j = 0; j < n; j++) {
    p *= a[j * m + i];
    s = fabs(s) + 1.0f;      /* a call: the loop is settled in every pass, not run again */
  }
  y[2 * i] = p;
  y[2 * i + 1] = s;
}

__kernel void ext(__global const float *a, __global double *y) {
  y[get_global_id(0)] = a[get_global_id(0)];
}

__kernel void tiny(__global const float *a, __global const float *b, __global float *o) {
  int i = get_global_id(0);
  float x = a[i], y = b[i];
  o[3 * i] = sqrt(x);
  o[3 * i + 1] = x / y;
  o[3 * i + 2] = y / x;
}
"""

ZERO_SPECIALS = np.array([0.0, -0.0, 1.0, -1.0, 2.5, -3.0, 1e-30, -1e-30, np.inf, -np.inf, np.nan], np.float32)


@pytest.fixture(scope="module")
def zenv():
    dev = cl.get_device(machine="tiny")
    ctx = cl.Context([dev])
    return ctx, cl.CommandQueue(ctx), cl.Program(ctx, ZEROS).build()


def flushed(x):
    """x (float32) with subnormals made zeros of their sign: what a device without CL_FP_DENORM
    may give for a subnormal result."""
    x = np.array(x, np.float32)
    tiny = np.abs(x) < np.finfo(np.float32).tiny
    x[tiny] = np.copysign(np.float32(0), x[tiny])
    return x


def same_bits(got, want):
    """Equal as IEEE values, with zeros of the same sign and NaN where want has NaN."""
    want = flushed(want)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=0)
    z = want == 0
    np.testing.assert_array_equal(np.signbit(got[z]), np.signbit(want[z]))


def test_signed_zeros_of_chained_arithmetic(zenv):
    """-0 where IEEE gives it (the MAU makes every zero +0): x * y by the signs, -0 + -0, x - x
    (+0), fma with a zero product, and products that underflow (1e-30 * -1e-30 is -0)."""
    a, b, c = (g.ravel() for g in np.meshgrid(ZERO_SPECIALS, ZERO_SPECIALS, ZERO_SPECIALS[[0, 1, 2, 7]], indexing="ij"))
    o, = run(zenv, "zeros", a.size, a, b, c, out=[np.zeros(6 * a.size, np.float32)])
    o = o.reshape(-1, 6)
    with np.errstate(all="ignore"):
        d = a.astype(np.float64)
        p = a * b
        same_bits(o[:, 0], p)
        same_bits(o[:, 1], a + b)
        same_bits(o[:, 2], a - b)
        same_bits(o[:, 3], (d * b + c).astype(np.float32))
        same_bits(o[:, 4], -p + c)
        same_bits(o[:, 5], p * c)
    assert (o[:, 0] == 0).sum() > 50 and np.signbit(o[o[:, 0] == 0, 0]).sum() > 20


def test_signed_zeros_from_a_lazy_loop():
    """A product loop and a sum of zeros carry their values lazily; a lane whose result is +-0
    makes the loop run again exactly, which gives the IEEE sign (-0 after an odd number of
    negative factors, -0 + -0 ... stays -0), only for the lanes that ran it."""
    dev = cl.get_device(machine="tiny")
    ctx = cl.Context([dev])
    env = ctx, cl.CommandQueue(ctx), cl.Program(ctx, ZEROS).build()
    m, n = 48, 5
    rng = np.random.default_rng(8)
    a = rng.uniform(-2, 2, (n, m)).astype(np.float32)
    a[2, :16] = 0.0                            # products of 0 with signs of the others
    a[1, :8] = -a[1, :8]
    a[:, 16:24] = 1e-20 * np.sign(a[:, 16:24])  # products underflow to signed zeros
    s0 = np.where(np.arange(m) % 2, -0.0, 0.0).astype(np.float32)
    b = rng.uniform(0.5, 2, (n, m)).astype(np.float32)
    y, = run(env, "product", m, a.ravel(), b.ravel(), s0, out=[np.zeros(2 * m, np.float32)],
             scalars=(np.int32(m), np.int32(n)))
    p, s = np.ones(m, np.float32), s0.copy()
    for j in range(n):
        p = flushed(p * a[j])
        s = s + b[j] * np.float32(-0.0)
    same_bits(y[0::2], p)
    same_bits(y[1::2], s)
    assert np.signbit(y[0::2][p == 0]).any() and np.signbit(y[1::2]).sum() > 10


def test_float_subnormals_are_flushed_to_signed_zeros(zenv):
    """No CL_FP_DENORM: a float subnormal operand of sqrt or a division is the zero of its sign,
    and a subnormal quotient is the zero of the quotient's sign."""
    x = np.array([1e-40, -1e-40, 1e-40, 2.0, -3.0, 0.0, 1e-40, 1e-30], np.float32)
    y = np.array([1.0, 1.0, -4.0, 1e-40, 1e-40, 1e-40, 1e-40, -1e10], np.float32)
    o, = run(zenv, "tiny", x.size, x, y, out=[np.zeros(3 * x.size, np.float32)])
    o = o.reshape(-1, 3)
    fx, fy = flushed(x), flushed(y)
    with np.errstate(all="ignore"):
        same_bits(o[:, 0], np.sqrt(fx))
        same_bits(o[:, 1], fx / fy)           # 0 / 1e-40 is 0 / 0; 1e-30 / -1e10 underflows to -0
        same_bits(o[:, 2], fy / fx)


def test_emulator_reports_no_float_denormals():
    dev = cl.get_device(machine="tiny")
    fp = dev.single_fp_config
    assert not fp & cl.device_fp_config.DENORM
    assert fp & cl.device_fp_config.INF_NAN and fp & cl.device_fp_config.ROUND_TO_NEAREST


def test_widening_keeps_nan_and_the_sign_of_zero(zenv):
    """float -> double goes through the MAU, which makes NaN inf and -0 +0: both are put back."""
    a = np.array([np.nan, -np.nan, -0.0, 0.0, 1.5, -2.0, np.inf, -np.inf, 1e-40, -3e38], np.float32)
    y, = run(zenv, "ext", a.size, a, out=[np.zeros(a.size, np.float64)])
    np.testing.assert_array_equal(y, a.astype(np.float64))
    np.testing.assert_array_equal(np.signbit(y[2:]), np.signbit(a[2:]))


def test_counted_loop_settles_every_pass(zenv):
    """A counted loop that settles in every pass (it calls fabs) used to settle the carried product
    only in its last pass, where its exit is: 0 * inf in the first pass then gave -inf, not NaN."""
    m, n = 8, 3
    a = np.ones((n, m), np.float32)
    a[0, :4] = 0.0
    a[1, ::2] = np.inf
    a[0, 4:] = -1.0
    a[2, 1] = -1.0
    y, = run(zenv, "counted", m, a.ravel(), out=[np.zeros(2 * m, np.float32)], scalars=(np.int32(m), np.int32(n)))
    y = y[0::2]
    with np.errstate(all="ignore"):
        same_bits(y, a.prod(axis=0))
    assert np.isnan(y[[0, 2]]).all() and np.signbit(y[1])


ACCUMULATE = r"""
__kernel void dot(__global const float *a, __global const float *x, __global float *y, int n) {
  int i = get_global_id(0);
  float s = 0.0f;                       /* +0: sums of it are never -0 but by a flushed underflow */
  for (int k = 0; k < n; k++) s += a[i * n + k] * x[k];
  y[i] = s;
}
__kernel void dot_from(__global const float *a, __global const float *x, __global float *y, int n) {
  int i = get_global_id(0);
  float s = y[i];                       /* may be -0: a zero result needs the exact run */
  for (int k = 0; k < n; k++) s += a[i * n + k] * x[k];
  y[i] = s;
}
__kernel void dot_scaled(__global const float *a, __global const float *x, __global float *y, int n) {
  int i = get_global_id(0);
  float s = 1.5f * y[i];                /* a lazy product: settled before the loop, then tested */
  for (int k = 0; k < n; k++) s += a[i * n + k] * x[k];
  y[i] = s;
}
"""


def test_zero_sum_from_plus_zero_needs_no_exact_run():
    """An accumulator that starts at +0 and is only added to is +0 wherever it ends at zero
    (x - x is +0; -0 + -0 is the only -0 sum), so a zero sum no longer runs the loop again:
    the same cycles as sums that are never zero.  One that starts from memory still does, and
    keeps -0 + -0 ... = -0."""
    from tests.emulator_harness import device_env, launch
    env = device_env("tiny")
    m, n = 64, 12
    rng = np.random.default_rng(9)
    x = rng.integers(1, 4, n).astype(np.float32)
    a = rng.integers(1, 4, (m, n)).astype(np.float32)
    a_zero = a.copy()
    a_zero[::3, :2] = [x[1], -x[0]]              # exactly cancelling terms ...
    a_zero[::3, 2:] = 0.0                        # ... and nothing else: the sum is 0
    a_zero[1::3] *= -0.0                         # products of -0: still a +0 sum
    a_zero[2, :2] = [-1.5e-38 / x[0], 1.4e-38 / x[1]]    # an underflow (its sign is undefined)
    a_zero[2, 2:] = 0.0
    cycles = []
    for data in (a, a_zero):
        (_, _, y), ev = launch(env, ACCUMULATE, "dot", m, data.ravel(), x, np.ones(m, np.float32), np.int32(n))
        want = (data.astype(np.float64) @ x).astype(np.float32)
        np.testing.assert_allclose(y, want, rtol=1e-6, atol=1e-37)
        cycles.append(ev.stats.cycles)
    assert (y == 0).sum() > 30 and not np.signbit(y).any()
    assert cycles[1] == cycles[0], cycles           # no exact run for the zero sums
    neg = np.full(m, -0.0, np.float32)
    minus = np.full((m, n), -1.0, np.float32)
    (_, _, y), ev = launch(env, ACCUMULATE, "dot_from", m, minus.ravel(), np.zeros(n, np.float32), neg, np.int32(n))
    assert (y == 0).all() and np.signbit(y).all()  # -0 + (-1 * 0) ... = -0, from the exact run
    assert ev.stats.cycles > cycles[0]


VECTORS = r"""
__kernel void vec(__global const float4 *a, __global const float4 *b, __global const float *c,
                  __global float4 *d, __global float *o) {
  int i = get_global_id(0);
  float4 x = a[i] - b[i];               /* element by element: each element stays lazy */
  o[3 * i] = x.x * c[i];                /* one element leaves its chain through another */
  o[3 * i + 1] = (x * x).y + x.z;
  o[3 * i + 2] = fma(x, x, x).w;
  d[i] = x;                             /* the whole vector: every element settled */
}
"""


def test_vector_elements_keep_ieee_nans_and_zero_signs():
    """A float vector computed element by element keeps its elements lazy (Values.make_vec):
    extracting one and chaining it on settles only where it leaves the chain, and storing the
    vector settles each element: NaN (inf - inf, 0 * inf) and signed zeros as numpy has them."""
    from tests.emulator_harness import device_env, launch
    env = device_env("tiny")
    vals = np.array([0.0, -0.0, 1.5, -2.0, np.inf, -np.inf, np.nan, 3e38, -3e38, 1e-30], np.float32)
    a, b = (g.ravel() for g in np.meshgrid(vals, vals, indexing="ij"))
    n = a.size // 4 * 4
    a4, b4 = a[:n].reshape(-1, 4), np.roll(b[:n], 3).reshape(-1, 4)
    c = np.resize(vals[::-1], len(a4)).astype(np.float32)
    (_, _, _, d, o), _ = launch(env, VECTORS, "vec", len(a4), a4.ravel(), b4.ravel(), c,
                                np.zeros(n, np.float32), np.zeros(3 * len(a4), np.float32))
    with np.errstate(all="ignore"):
        x = (a4 - b4).astype(np.float32)
        same_bits(d.reshape(-1, 4), x)
        o = o.reshape(-1, 3)
        same_bits(o[:, 0], x[:, 0] * c)
        same_bits(o[:, 1], x[:, 1] * x[:, 1] + x[:, 2])
        same_bits(o[:, 2], (x[:, 3].astype(np.float64) * x[:, 3] + x[:, 3]).astype(np.float32))
    assert np.isnan(d).any() and np.signbit(d[d == 0]).any()


def test_vector_elements_are_settled_where_they_leave_the_chain():
    """VECTORS settles its 4-element difference once per element stored and once per value
    leaving a chain (15 settles, each two tests: any +-0 or +-inf, then any +-inf); settling every
    element of every vector result made 35 settles."""
    import re
    assert len(re.findall(r"\.if any", asm(VECTORS, "vec"))) <= 2 * 15


ROOTS = r"""
__kernel void roots(__global const float *a, __global const float *x, __global float *y, int n) {
  int i = get_global_id(0);
  float s = 0.0f;
  for (int j = 0; j < n; j++)          /* sqrt has no effect: the loop still carries s lazily */
    s += sqrt(a[i * n + j]) * x[j];
  y[i] = s;
}
"""


def test_a_loop_calling_a_pure_intrinsic_carries_its_sum_lazily():
    """sqrt in the loop (not on the sum) leaves it a lazy loop: no settle test in each pass, one
    after it; a NaN from sqrt(-1) or inf * 0 still comes out as numpy's."""
    from tests.emulator_harness import device_env, launch
    import re
    tests = len(re.findall(r"\.if any", asm(ROOTS, "roots")))
    assert tests <= 2, tests       # the test after the loop and the bounds report's (5 with a test per pass)
    m, n = 40, 6
    rng = np.random.default_rng(11)
    a = rng.uniform(0, 4, (m, n)).astype(np.float32)
    x = rng.uniform(-1, 1, n).astype(np.float32)
    a[1, 2], a[2, 0], a[3, 1], a[4, :] = -1.0, np.inf, 0.0, 0.0
    x[1] = 0.0
    a[5, 1] = np.inf                                     # sqrt(inf) * 0: NaN
    (_, _, y), _ = launch(device_env("tiny"), ROOTS, "roots", m, a.ravel(), x, np.zeros(m, np.float32), np.int32(n))
    with np.errstate(all="ignore"):
        want = np.zeros(m, np.float32)
        for j in range(n):
            want = (want + np.sqrt(a[:, j]) * x[j]).astype(np.float32)
    same_bits(y, want)
    assert np.isnan(y[[1, 5]]).all() and np.isinf(y[2]) and y[4] == 0 and not np.signbit(y[4])


SIXTEEN = "__kernel void sums(__global const float *a, __global float *y, int n) {\n  int i = get_global_id(0);\n" + \
    "".join(f"  float s{k} = 0.0f;\n" for k in range(16)) + \
    "  for (int j = 0; j < n; j++) {\n" + \
    "".join(f"    s{k} += a[(i + {k}) * n + j] * {k + 1}.0f;\n" for k in range(16)) + "  }\n" + \
    "".join(f"  y[16 * i + {k}] = s{k};\n" for k in range(16)) + "}\n"


def test_sixteen_lazy_accumulators_leave_their_loop_within_the_mask_entries():
    """The test after a lazy loop makes each accumulator's mask a bool at once: sixteen masks live
    together do not fit the machine's 15 entries (SHOC's register-blocked sgemm failed to build)."""
    text = asm(SIXTEEN, "sums")
    assert text.count(".if any") >= 1


def test_zero_sum_from_a_start_that_is_not_minus_zero_needs_no_exact_run():
    """An accumulator that starts from memory (``s = y[i]``, mvt's ``x1[i] += ...``) can end at -0
    only where it starts at -0: the loop's after-test asks that of the starts (in the lanes that
    entered), not of every zero result, so zero sums from +0 or non-zero starts run once; a -0
    start still takes the exact run and keeps IEEE's signs."""
    from tests.emulator_harness import device_env, launch
    env = device_env("tiny")
    m, n = 64, 12
    rng = np.random.default_rng(10)
    x = rng.integers(1, 4, n).astype(np.float32)
    a = rng.integers(1, 4, (m, n)).astype(np.float32)
    start = rng.integers(-3, 4, m).astype(np.float32)
    a_zero = a.copy()
    a_zero[:, 0] = -start / x[0]                 # start + a x ... = 0 in every row: zero results
    a_zero[:, 1:] = 0.0
    a_zero[::2] *= -1.0                          # (and -0 products in half of them)
    a_zero[::2, 0] *= -1.0
    def sequential(data, s):                     # the loop's order, in fp32 (numpy's dot starts from +0)
        for k in range(n):
            s = s + data[:, k] * x[k]
        return s

    cycles = []
    for data in (a, a_zero):
        (_, _, y), ev = launch(env, ACCUMULATE, "dot_from", m, data.ravel(), x, start.copy(), np.int32(n))
        same_bits(y, sequential(data, start))
        cycles.append(ev.stats.cycles)
    assert (y == 0).all()
    assert cycles[1] == cycles[0], cycles           # no exact run for the zero sums
    mixed = start.copy()
    mixed[5] = -0.0                                  # one -0 start: the exact run, IEEE's signs
    zeros = a_zero.copy()
    zeros[5] = -0.0                                  # -0 + (-0 * x) ... = -0
    zeros[6] = 0.0
    mixed[6] = -0.0                                  # -0 + (+0 * x) = +0
    (_, _, y), ev = launch(env, ACCUMULATE, "dot_from", m, zeros.ravel(), x, mixed.copy(), np.int32(n))
    same_bits(y, sequential(zeros, mixed))
    assert np.signbit(y[5]) and not np.signbit(y[6])
    assert ev.stats.cycles > cycles[0]


def test_zero_sums_from_a_scaled_start_need_no_exact_run():
    """2mm's `acc = beta * D[..]`: the start is a product whose -0 the MAU may show as +0, so it is
    settled before the loop (NanFixups.settle_starts) and tested there; zero results from starts
    that are not -0 run once (before, every zero result ran the loop again), a -0 start still
    takes the exact run and IEEE's signs."""
    from tests.emulator_harness import device_env, launch
    env = device_env("tiny")
    m, n = 64, 12
    rng = np.random.default_rng(11)
    x = rng.integers(1, 4, n).astype(np.float32)
    start = rng.integers(-3, 4, m).astype(np.float32)
    a = rng.integers(1, 4, (m, n)).astype(np.float32)
    a_zero = np.zeros_like(a)
    a_zero[:, 0] = -np.float32(1.5) * start / x[0]          # 1.5 start + a x ... = 0 in every row

    def sequential(data, s):
        s = np.float32(1.5) * s
        for k in range(n):
            s = s + data[:, k] * x[k]
        return s

    steps = []
    for data in (a, a_zero):
        (_, _, y), ev = launch(env, ACCUMULATE, "dot_scaled", m, data.ravel(), x, start.copy(), np.int32(n))
        same_bits(y, sequential(data, start))
        steps.append(ev.stats.steps)
    assert (y == 0).all()
    assert steps[1] == steps[0], steps
    minus = start.copy()
    minus[5] = -0.0                                  # 1.5 * -0 = -0, + (-0 products) = -0
    zeros = a_zero.copy()
    zeros[5] = -0.0
    (_, _, y), ev = launch(env, ACCUMULATE, "dot_scaled", m, zeros.ravel(), x, minus.copy(), np.int32(n))
    same_bits(y, sequential(zeros, minus))
    assert np.signbit(y[5])
    assert ev.stats.steps > steps[0]


def test_products_by_one_and_minus_one_are_exact_sign_flips(tiny_env):
    """`x * (float2)(1, -1)` (LLVM keeps a vector product by a constant): x and -x bit for bit,
    zeros' signs and subnormals included, NaN still NaN; no MAU product and so no settle of it."""
    import translator
    from emulator.machine import load_machine
    from translator.backend import compile_kernel
    src = """__kernel void k(__global const float2 *a, __global float2 *o) {
        o[get_global_id(0)] = a[get_global_id(0)] * (float2)(1.0f, -1.0f);
    }"""
    asm = compile_kernel(translator.compile_opencl(src, spmd=True), "k", load_machine("tiny"), "1d").asm
    assert "fvmul" not in asm
    ctx, q = tiny_env
    a = np.tile(np.array([0.0, -0.0, 1.5, np.inf, -np.inf, 3e-39, np.nan, -2.0], np.float32), 64)
    mf = cl.mem_flags
    ab = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
    ob = cl.Buffer(ctx, mf.READ_WRITE, a.nbytes)
    cl.Program(ctx, src).build().k(q, (a.size // 2,), None, ab, ob).wait()
    o = np.empty_like(a)
    cl.enqueue_copy(q, o, ob)
    want = (a.reshape(-1, 2) * np.array([1, -1], np.float32)).reshape(-1)
    num = ~np.isnan(want)
    np.testing.assert_array_equal(o[num].view(np.uint32), want[num].view(np.uint32))
    assert np.isnan(o[~num]).all()


FORCES = r"""
__kernel void forces(__global const float *x, __global const float *y, __global float *f, float scale, int n) {
  int i = get_global_id(0);
  float s = 0.0f;
  for (int j = 0; j < n; j++) {
    float d = (y[j] - x[i]) * scale;
    s += d * rsqrt(d * d) + 1.0f / d;
  }
  f[i] = s;
}
"""


@pytest.mark.parametrize("scale, y", [
    (1.0, [1.0, 2.0]),                   # d = 0 where x[i] is 1 or 2: rsqrt(0) = inf, 0 * inf = NaN
    (-1.0, [4.0]),                       # -0 where x[i] is 4: 1 / -0 = -inf, NaN with the other term
    (0.5, [np.inf]),                     # every lane: -inf + inf
    (1.0, [0.5]),                        # no special lane: the loop runs once
])
def test_a_lazy_loop_puts_off_settling_and_runs_again_when_a_pass_was_special(scale, y):
    """rsqrt and 1 / d settle d (a chained product) inside a lazy loop: the lanes where it is
    +-0 or +-inf are noted in the pass, not tested with an any-reduction, and the loop runs
    again exactly after it (nans.put_off); the results are numpy's, NaNs and infinities too."""
    from tests.emulator_harness import device_env, launch
    import re
    assert not re.search(r"\.if any", asm(FORCES, "forces").split(".loop")[1].split(".endloop")[0])
    rng = np.random.default_rng(5)
    x = np.concatenate([np.float32([1.0, 2.0, 4.0]), rng.uniform(8, 9, 61).astype(np.float32)])
    ys = np.concatenate([rng.uniform(-4, -3, 5), np.float32(y), rng.uniform(-4, -3, 5)]).astype(np.float32)
    (_, _, f), _ = launch(device_env("tiny"), FORCES, "forces", x.size, x, ys, np.zeros(x.size, np.float32),
                          np.float32(scale), np.int32(ys.size))
    with np.errstate(all="ignore"):
        d = (ys[None, :] - x[:, None]) * np.float32(scale)
        terms = d * (np.float32(1) / np.sqrt(d * d)) + np.float32(1) / d
        want = np.zeros(x.size, np.float32)
        for j in range(ys.size):
            want = (want + terms[:, j]).astype(np.float32)
    np.testing.assert_array_equal(np.isnan(f), np.isnan(want))
    assert np.isnan(want).any() == (y != [0.5])
    ok = ~np.isnan(want)
    np.testing.assert_allclose(f[ok], want[ok], rtol=1e-5)


SUB_PRODUCT = r"""
__kernel void sub_product(__global const float *a, __global const float *b, __global const float *c,
                          __global float *o, int n) {
  int i = get_global_id(0);
  if (i < n)
    o[i] = a[i] - b[i] * c[i];
}
"""


def test_a_store_works_out_nans_only_when_a_running_lane_is_infinite():
    """The fix of a chain result stored under a branch runs when a lane taking the branch is +-0
    or +-inf (not for the lanes past n), and of it, the NaN part (its operands' zeros and
    infinities, ~45 steps) only when such a lane is +-inf: exact integer data whose results are
    often zero (lu's eliminations) pays the sign part alone."""
    ctx = cl.Context([cl.get_device(machine="tiny")])
    q = cl.CommandQueue(ctx)
    prg = cl.Program(ctx, SUB_PRODUCT).build()
    n, items = 256, 512                           # a wave of tiny's, half of it past n
    rng = np.random.default_rng(3)
    b, c = (rng.integers(1, 4, n).astype(np.float32) for _ in range(2))
    every3 = np.arange(n) % 3 == 0
    steps = {}
    for name, a in [("none", b * c + 1), ("zeros", np.where(every3, b * c, b * c + 1)),
                    ("inf", np.where(every3, np.inf, b * c + 1)),
                    ("nan", np.where(every3, np.inf, b * c + 1))]:
        cc = np.where(every3, 0, c).astype(np.float32) if name == "nan" else c    # inf - inf * 0
        o = cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, 4 * n)
        ev = prg.sub_product(q, (items,), None, *(cl.Buffer(ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR,
                                                             hostbuf=np.float32(x)) for x in (a, b, cc)), o, np.int32(n))
        got = np.empty(n, np.float32)
        cl.enqueue_copy(q, got, o)
        with np.errstate(all="ignore"):
            same_bits(got, np.float32(a) - b * cc)
        steps[name] = ev.stats.steps
    assert steps["zeros"] - steps["none"] >= 10      # the sign part ran; not for the lanes past the end
    assert steps["inf"] - steps["zeros"] >= 30       # the NaN part ran only here
    assert steps["nan"] == steps["inf"]
