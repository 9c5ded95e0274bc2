"""Issue 19, items 7 and 9: kernels with more live values than registers build (spilling to
LM1, then to the LM0 words the kernel leaves free), and large unrolled kernels build fast.

Item 9: a radix-8 FFT in the shape of SHOC's fft kernels builds within a time bound; the
backend passes were made faster without changing what they emit (checked by compiling the
kernel corpus before and after with the same PYTHONHASHSEED and comparing the assembly).

Item 7: a register-blocked SGEMM in the shape of SHOC's sgemmNN (16 accumulators per
work-item, each a chain of 16 multiply-adds per slab, a B tile in __local memory) kept
768 values live until its chains were settled (nans.py); it is built with its float chains
settled every few values and its values spilled to LM1 and LM0, and checked against numpy on
the ``tiny`` machine (strict mode checks every LM hazard the spills add).  A synthetic kernel
with N values live at once, for N around the register count and past LM1, runs exactly;
past what fits, the build error gives the numbers.
"""
from __future__ import annotations

import os

import numpy as np
import pytest

os.environ.setdefault("MNCL_CACHE", "0")

import mncl as cl  # noqa: E402

SGEMM = """
/* C = alpha * A B + beta * C, column-major (BLAS) like SHOC's sgemmNN: a work-group of 16 x 4
   work-items makes a 64 x 16 block of C; a work-item, one row of it, keeps its 16 results in
   c[] and per 16-deep slab of k stages a 16 x 16 tile of B in local memory. */
#define ROW16(s, t, acc) do { \\
    acc[0] += s * t[0]; acc[1] += s * t[1]; acc[2] += s * t[2]; acc[3] += s * t[3]; \\
    acc[4] += s * t[4]; acc[5] += s * t[5]; acc[6] += s * t[6]; acc[7] += s * t[7]; \\
    acc[8] += s * t[8]; acc[9] += s * t[9]; acc[10] += s * t[10]; acc[11] += s * t[11]; \\
    acc[12] += s * t[12]; acc[13] += s * t[13]; acc[14] += s * t[14]; acc[15] += s * t[15]; } while (0)
__kernel void sgemm_nn(__global const float *A, int lda, __global const float *B, int ldb,
                       __global float *C, int ldc, int k, float alpha, float beta)
{
    const int tx = get_local_id(0), ty = get_local_id(1);
    const int id = tx + 16 * ty;
    A += get_group_id(0) * 64 + id;
    B += tx + mul24((int)get_group_id(1) * 16 + ty, ldb);
    C += get_group_id(0) * 64 + id + mul24((int)get_group_id(1) * 16, ldc);
    const __global float *Bend = B + k;
    float c[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    __local float tile[16][17];
    do {
        float a0 = A[0], a1 = A[lda], a2 = A[2 * lda], a3 = A[3 * lda];
        for (int q = 0; q < 16; q += 4)
            tile[tx][ty + q] = B[q * ldb];
        barrier(CLK_LOCAL_MEM_FENCE);
        /* unrolled as SHOC writes it: the next four a's load while these are used */
        A += 4 * lda;
        ROW16(a0, tile[0], c); a0 = A[0];
        ROW16(a1, tile[1], c); a1 = A[lda];
        ROW16(a2, tile[2], c); a2 = A[2 * lda];
        ROW16(a3, tile[3], c); a3 = A[3 * lda];
        A += 4 * lda;
        ROW16(a0, tile[4], c); a0 = A[0];
        ROW16(a1, tile[5], c); a1 = A[lda];
        ROW16(a2, tile[6], c); a2 = A[2 * lda];
        ROW16(a3, tile[7], c); a3 = A[3 * lda];
        A += 4 * lda;
        ROW16(a0, tile[8], c); a0 = A[0];
        ROW16(a1, tile[9], c); a1 = A[lda];
        ROW16(a2, tile[10], c); a2 = A[2 * lda];
        ROW16(a3, tile[11], c); a3 = A[3 * lda];
        A += 4 * lda;
        ROW16(a0, tile[12], c);
        ROW16(a1, tile[13], c);
        ROW16(a2, tile[14], c);
        ROW16(a3, tile[15], c);
        B += 16;
        barrier(CLK_LOCAL_MEM_FENCE);
    } while (B < Bend);
    for (int j = 0; j < 16; j++, C += ldc)
        C[0] = alpha * c[j] + beta * C[0];
}
"""


def _buf(ctx, a):
    return cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=a)


def _read(q, b, like):
    out = np.empty_like(like)
    cl.enqueue_copy(q, out, b)
    return out


@pytest.mark.slow
def test_register_blocked_sgemm_builds_and_matches_numpy(tiny_env):
    ctx, q = tiny_env
    m, n, k = 128, 32, 32
    rng = np.random.default_rng(19)
    a = rng.standard_normal((k, m), np.float32)        # column-major m x k: a[kk, i] = A(i, kk)
    b = rng.standard_normal((n, k), np.float32)
    c = rng.standard_normal((n, m), np.float32)
    alpha, beta = np.float32(1.5), np.float32(-0.5)
    prg = cl.Program(ctx, SGEMM).build()
    cb = _buf(ctx, c)
    prg.sgemm_nn(q, (m // 4, n // 4), (16, 4), _buf(ctx, a), np.int32(m), _buf(ctx, b), np.int32(k), cb,
                 np.int32(m), np.int32(k), alpha, beta).wait()
    want = alpha * (b.astype(np.float64) @ a.astype(np.float64)) + beta * c     # (n, m): C(i, j) at [j, i]
    np.testing.assert_allclose(_read(q, cb, c), want, rtol=1e-4, atol=1e-4)


def many_live_values(name, n_vals):
    """n_vals values computed first and combined in reverse: all live at once."""
    body = "".join(f"  uint v{k} = x * {2 * k + 3}u ^ {k}u;\n" for k in range(n_vals))
    body += "  uint s = 0;\n" + "".join(f"  s = s * 3u + v{k};\n" for k in reversed(range(n_vals)))
    return (f"__kernel void {name}(__global const uint *a, __global uint *o) {{\n"
            "  uint x = a[get_global_id(0)];\n" + body + "  o[get_global_id(0)] = s;\n}\n")


@pytest.mark.parametrize("n_vals", [40, 44, pytest.param(310, marks=pytest.mark.slow),
                                    pytest.param(330, marks=pytest.mark.slow)])
def test_n_live_values_run_exactly(tiny_env, n_vals):
    """About 3 n_vals values live at once (the values and their two constants): around the 128 GRF
    registers (40, 44), and past the 496 slots of LM1 (310, 330: beyond 256 constants the least read
    are made where read, cleanup.rematerialise_constants)."""
    ctx, q = tiny_env
    prg = cl.Program(ctx, many_live_values("many", n_vals)).build()
    a = np.random.default_rng(n_vals).integers(0, 2 ** 32, 300, dtype=np.uint32)
    ob = _buf(ctx, np.zeros(300, np.uint32))
    prg.many(q, (300,), None, _buf(ctx, a), ob).wait()
    s = np.zeros(300, np.uint32)
    for k in reversed(range(n_vals)):
        s = s * np.uint32(3) + (a * np.uint32(2 * k + 3) ^ np.uint32(k))
    np.testing.assert_array_equal(_read(q, ob, s), s)


def test_more_values_than_registers_lm1_and_lm0_hold_is_an_error_with_the_numbers(tiny_env):
    ctx, _ = tiny_env
    with pytest.raises(cl.RuntimeError, match=r"kernel 'huge'.*needs more than \d+ live values.*128 4-long-word "
                                              r"registers.*room for 496 more in LM1 and \d+ in LM0"):
        cl.Program(ctx, many_live_values("huge", 950)).build()


FFT = """/* 512-point complex FFTs, one per work-group of 64 work-items, in the shape of SHOC's fft
   kernels: three passes of fully unrolled radix-8 butterflies on float2 values, sincos
   twiddles between them, and transposes through __local memory.
   n = n1 + 64 n2, k = k2 + 8 k1: pass 1 is a DFT8 over n2 for each n1 (work-item n1), then
   the twiddle W512^(n1 k2); the 64-point DFTs over n1 (one per k2) split the same way. */
#define CMUL(a, b) ((float2)((a).x * (b).x - (a).y * (b).y, (a).x * (b).y + (a).y * (b).x))
#define MULMI(a) ((float2)((a).y, -(a).x))         /* a * -i */
#define R2 0.70710678118654752f
#define BFLY(a, b) { float2 t_ = a; a = t_ + b; b = t_ - b; }

/* x[0..7] <- DFT8(x): decimation in frequency, outputs put back in natural order */
#define FFT8(x) { \
    BFLY(x[0], x[4]); BFLY(x[1], x[5]); BFLY(x[2], x[6]); BFLY(x[3], x[7]); \
    x[5] = (float2)(R2 * (x[5].x + x[5].y), R2 * (x[5].y - x[5].x)); \
    x[6] = MULMI(x[6]); \
    x[7] = (float2)(R2 * (x[7].y - x[7].x), -R2 * (x[7].x + x[7].y)); \
    BFLY(x[0], x[2]); BFLY(x[1], x[3]); BFLY(x[4], x[6]); BFLY(x[5], x[7]); \
    x[3] = MULMI(x[3]); x[7] = MULMI(x[7]); \
    BFLY(x[0], x[1]); BFLY(x[2], x[3]); BFLY(x[4], x[5]); BFLY(x[6], x[7]); \
    float2 s_ = x[1]; x[1] = x[4]; x[4] = s_; s_ = x[3]; x[3] = x[6]; x[6] = s_; }

/* x[r] *= exp(-2 pi i * r * m / n) */
#define TWIDDLE(x, m, n) { for (int r_ = 1; r_ < 8; r_++) { \
    float c_, s_ = sincos(-2.0f * M_PI_F * (float)(r_ * (m)) / (float)(n), &c_); \
    x[r_] = CMUL(x[r_], (float2)(c_, s_)); } }

/* write x[r] to lds[wbase + r * wstride], then read x[r] from lds[rbase + r * rstride] */
#define EXCHANGE(x, lds, wbase, wstride, rbase, rstride) { \
    for (int r_ = 0; r_ < 8; r_++) lds[(wbase) + r_ * (wstride)] = x[r_]; \
    barrier(CLK_LOCAL_MEM_FENCE); \
    for (int r_ = 0; r_ < 8; r_++) x[r_] = lds[(rbase) + r_ * (rstride)]; \
    barrier(CLK_LOCAL_MEM_FENCE); }

/* the inverse transform is conj(DFT(conj(x))): sign -1 conjugates on the way in and out */
#define FFT512(work, sign) { \
    __local float2 lds[512]; \
    int t = get_local_id(0), hi = t >> 3, lo = t & 7; \
    __global float2 *w = work + get_group_id(0) * 512; \
    float2 x[8]; \
    for (int r = 0; r < 8; r++) x[r] = w[t + 64 * r] * (float2)(1.0f, sign); \
    FFT8(x); \
    TWIDDLE(x, t, 512); \
    EXCHANGE(x, lds, t, 64, hi * 64 + lo, 8);         /* (k2 = hi, m1 = lo) reads n1 = m1 + 8 m2 */ \
    FFT8(x); \
    TWIDDLE(x, lo, 64); \
    EXCHANGE(x, lds, hi * 64 + lo, 8, hi * 64 + lo * 8, 1);   /* (k2, j2 = lo) reads m1 */ \
    FFT8(x); \
    for (int r = 0; r < 8; r++) w[hi + 8 * lo + 64 * r] = x[r] * (float2)(1.0f, sign); }

__kernel void fft_forward(__global float2 *work) FFT512(work, 1.0f)

__kernel void fft_inverse(__global float2 *work) FFT512(work, -1.0f)
"""


@pytest.mark.slow
def test_fft_matches_numpy(tiny_env):
    ctx, q = tiny_env
    rng = np.random.default_rng(9)
    x = (rng.standard_normal((2, 512)) + 1j * rng.standard_normal((2, 512))).astype(np.complex64)
    prg = cl.Program(ctx, FFT).build()
    for kernel, ref in ((prg.fft_forward, np.fft.fft(x)), (prg.fft_inverse, 512 * np.fft.ifft(x))):
        wb = _buf(ctx, x.view(np.float32).copy())
        kernel(q, (128,), (64,), wb).wait()
        got = _read(q, wb, x.view(np.float32)).view(np.complex64)
        np.testing.assert_allclose(got, ref, rtol=0, atol=2e-3 * np.abs(ref).max())


def test_fft_builds_within_time():
    """The backend's CPU time for one FFT kernel on the full machine (2.0-2.6 s measured on a
    shared 2-core machine with __local memory per L2B and batched gathers, 2.7-4.6 s before, 4.7-6.9 s
    before the scheduler, allocator and seq_expr fixes): the bound is about 3 times the measured
    time, so it catches a pass going quadratic again."""
    import translator
    from emulator.machine import load_machine
    from timing import cpu_seconds
    from translator.backend import compile_kernel
    module = translator.compile_opencl(FFT, spmd=True)
    machine = load_machine("mncore2")
    assert cpu_seconds(lambda: compile_kernel(module, "fft_forward", machine, "1d"), 8.0) < 8.0
