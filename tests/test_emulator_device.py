"""Kernels compiled by the SIMD backend and run on the emulator device (tiny), checked against numpy.

The emulator runs in strict mode, so any hazard or out-of-range access the
generated code commits fails these tests."""
import dataclasses
import re

import numpy as np
import pytest

import mncl as cl

SRC = r"""
__kernel void saxpy(__global const float *x, __global float *y, float a, int n)
{ int i = get_global_id(0); if (i < n) y[i] = a * x[i] + y[i]; }

__kernel void divergent(__global const int *a, __global const int *b, __global int *o, int n) {
  int i = get_global_id(0);
  if (i >= n) return;
  int x = a[i], y = b[i];
  int s = 0;
  if (x > 0) { if (y > 3) s = x / y; else s = x * y; } else s = x % 7;
  while (x > 1) { x = (x & 1) ? 3 * x + 1 : x / 2; s++; }
  o[i] = s;
}

__kernel void floats(__global const float *a, __global const float *b, __global float *o) {
  int i = get_global_id(0);
  o[i] = a[i] / b[i] + sqrt(fabs(a[i])) - fmax(a[i], b[i]);
}

__kernel void ids(__global int *o) {
  int i = get_global_id(0);
  o[i] = get_local_id(0) * 100000 + get_group_id(0) * 10 + (int)get_num_groups(0) % 10;
}

__kernel void mul64(__global const long *a, __global const long *b, __global const int *c, __global int *o) {
  int i = get_global_id(0);
  o[i] = (int)((a[i] * b[i]) >> 17) ^ (c[i] * (int)b[i]);
}

__kernel void scatter(__global const float *a, __global const int *idx, __global float *o,
                      __global const long *b, __global long *o64) {
  int i = get_global_id(0);
  if (a[i] > -0.5f) o[idx[i]] = a[i] + 1.0f;
  o64[idx[i]] = b[i] * 3;
}

__kernel void reverse_in_group(__global const float *x, __global float *y) {
  __local float t[64];
  int l = get_local_id(0), g = get_global_id(0);
  t[l] = x[g];
  barrier(CLK_LOCAL_MEM_FENCE);
  y[g] = t[get_local_size(0) - 1 - l];
}

__kernel void group_sum(__global const float *x, __global float *out, __local float *s) {
  int l = get_local_id(0), n = get_local_size(0);
  s[l] = x[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int k = n / 2; k > 0; k >>= 1) {
    if (l < k) s[l] += s[l + k];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (l == 0) out[get_group_id(0)] = s[0];
}

__kernel void private_arrays(__global const int *a, __global int *o, __global double *od) {
  int i = get_global_id(0);
  int t[8]; double d[4];
  for (int j = 0; j < 8; j++) t[j] = a[i] * j;
  for (int j = 0; j < 4; j++) d[j] = a[i] + 0.5 * j;
  t[a[i] & 7] += 1000;
  if (a[i] > 0) d[a[i] & 3] = -1.0;
  o[i] = t[(a[i] + 3) & 7] + t[a[i] & 7];
  od[i] = d[(i + a[i]) & 3];
}

__kernel void narrow_ints(__global const char *a, __global const ushort *b, __global uchar *o,
                          __global short *o2, __global int *o3) {
  int i = get_global_id(0);
  char x = a[i]; ushort y = b[i];
  uchar t[5];
  for (int j = 0; j < 5; j++) t[j] = (uchar)(x + j);
  o[i] = (uchar)(x * 3) + t[(y & 3)];
  o2[i] = (short)(y >> 3) - x;
  o3[i] = (x < -5) + (y > 40000) * 2 + x / 3 + (int)(y % 7u);
}

__kernel void vectors(__global const float4 *a, __global float4 *o, __global int2 *oi, float s) {
  int i = get_global_id(0);
  float4 x = a[i];
  float4 y = fmax(x.wzyx * s + (float4)(1.0f, 2.0f, 3.0f, 4.0f), x);
  o[i] = select(y, -y, x < 0.0f);
  oi[i] = (int2)(i, -i) + convert_int2(x.xy > x.zw);
}

__kernel void gather(__global const float *a, __global const int *idx, __global float *o) {
  int i = get_global_id(0);
  o[i] = a[idx[i]] * 2.0f;
}
"""


@pytest.fixture(scope="module")
def env():
    dev = cl.get_device(machine="tiny")
    ctx = cl.Context([dev])
    q = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
    return ctx, q, cl.Program(ctx, SRC).build()


def buf(ctx, a):
    return cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=a)


def tiny_asm(src, kernel, options=()):
    """The assembly the SIMD backend makes of `kernel` for the tiny machine."""
    from translator import compile_opencl
    from translator.backend import compile_kernel
    import emulator.machine
    return compile_kernel(compile_opencl(src, spmd=True, options=options), kernel,
                          emulator.machine.load_machine("tiny")).asm


@pytest.mark.parametrize("n", [1, 100, 512, 1000, 2049])
def test_saxpy_is_exact_and_timed(env, n):
    ctx, q, prg = env
    rng = np.random.default_rng(n)
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    yb = buf(ctx, y)
    ev = prg.saxpy(q, (n,), None, buf(ctx, x), yb, np.float32(2), np.int32(n))
    out = np.empty_like(y)
    cl.enqueue_copy(q, out, yb)
    np.testing.assert_array_equal(out, (np.float32(2) * x + y).astype(np.float32))
    assert ev.stats.cycles > 0 and ev.profile.end - ev.profile.start == int(ev.stats.time_s * 1e9)


def test_divergent_branches_loops_and_integer_division(env):
    ctx, q, prg = env
    n = 700
    rng = np.random.default_rng(1)
    a = rng.integers(-50, 100, n).astype(np.int32)
    b = rng.integers(1, 20, n).astype(np.int32)
    ob = cl.Buffer(ctx, 0, 4 * n)
    prg.divergent(q, (n,), None, buf(ctx, a), buf(ctx, b), ob, np.int32(n))
    o = np.empty(n, np.int32)
    cl.enqueue_copy(q, o, ob)

    def ref(x, y):
        s = (int(x / y) if y > 3 else x * y) if x > 0 else int(np.fmod(x, 7))
        while x > 1:
            x = 3 * x + 1 if x & 1 else x // 2
            s += 1
        return s
    np.testing.assert_array_equal(o, [ref(int(x), int(y)) for x, y in zip(a, b)])


def test_float_division_sqrt_and_max(env):
    ctx, q, prg = env
    n = 600
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    ob = cl.Buffer(ctx, 0, 4 * n)
    prg.floats(q, (n,), None, buf(ctx, a), buf(ctx, b), ob)
    o = np.empty(n, np.float32)
    cl.enqueue_copy(q, o, ob)
    ref = a.astype(np.float64) / b + np.sqrt(np.abs(a.astype(np.float64))) - np.maximum(a, b)
    np.testing.assert_allclose(o, ref, rtol=2e-6, atol=2e-6 * np.abs(ref).max())


@pytest.mark.parametrize("n, m", [(700, 700), (100, 1500), (1500, 3000)])
def test_gather_by_index(env, n, m):
    """Indices anywhere in a buffer of several stripe rows (the gather streams every row)."""
    ctx, q, prg = env
    rng = np.random.default_rng(3)
    a = rng.standard_normal(m).astype(np.float32)
    idx = rng.integers(0, m, n).astype(np.int32)
    ob = cl.Buffer(ctx, 0, 4 * n)
    prg.gather(q, (n,), None, buf(ctx, a), buf(ctx, idx), ob)
    o = np.empty(n, np.float32)
    cl.enqueue_copy(q, o, ob)
    np.testing.assert_array_equal(o, a[idx] * 2)


@pytest.mark.parametrize("n, local", [(999, 27), (1024, 64), (3000, 500), (7, 7), (2049, 3)])
def test_local_and_group_ids_for_any_local_size(env, n, local):
    ctx, q, prg = env
    ob = cl.Buffer(ctx, 0, 4 * n)
    prg.ids(q, (n,), (local,), ob)
    o = np.empty(n, np.int32)
    cl.enqueue_copy(q, o, ob)
    i = np.arange(n)
    np.testing.assert_array_equal(o, (i % local) * 100000 + (i // local) * 10 + (n // local) % 10)


def test_64_bit_and_32_bit_multiplication_of_run_time_values(env):
    ctx, q, prg = env
    n = 300
    rng = np.random.default_rng(4)
    a, b = (rng.integers(-2**63, 2**63 - 1, n, dtype=np.int64) for _ in range(2))
    c = rng.integers(-2**31, 2**31 - 1, n).astype(np.int32)
    ob = cl.Buffer(ctx, 0, 4 * n)
    prg.mul64(q, (n,), None, buf(ctx, a), buf(ctx, b), buf(ctx, c), ob)
    o = np.empty(n, np.int32)
    cl.enqueue_copy(q, o, ob)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(o, ((a * b) >> 17).astype(np.int32) ^ (c * b.astype(np.int32)))


@pytest.mark.parametrize("n, m", [(16, 16), (500, 700), (1000, 1000), (100, 1500)])
def test_scatter_by_index_under_a_mask(env, n, m):
    """Stores anywhere in buffers of several stripe rows, from several waves, 32- and 64-bit."""
    ctx, q, prg = env
    rng = np.random.default_rng(n + m)
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.integers(-2**40, 2**40, n)
    idx = rng.permutation(m)[:n].astype(np.int32)
    o, o64 = rng.standard_normal(m).astype(np.float32), rng.integers(-2**40, 2**40, m)
    want, want64 = o.copy(), o64.copy()
    want[idx[a > -0.5]] = a[a > -0.5] + 1
    want64[idx] = b * 3
    ob, ob64 = buf(ctx, o), buf(ctx, o64)
    prg.scatter(q, (n,), None, buf(ctx, a), buf(ctx, idx), ob, buf(ctx, b), ob64)
    cl.enqueue_copy(q, o, ob)
    cl.enqueue_copy(q, o64, ob64)
    np.testing.assert_array_equal(o, want)
    np.testing.assert_array_equal(o64, want64)


@pytest.mark.parametrize("n, local", [(64, 64), (1024, 64), (960, 48), (3000, 60)])
def test_local_array_and_barrier_reverse_each_group(env, n, local):
    """Groups that tile the wave (64) and groups that do not (48, 60: the wave holds whole groups)."""
    ctx, q, prg = env
    x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    yb = cl.Buffer(ctx, 0, 4 * n)
    prg.reverse_in_group(q, (n,), (local,), buf(ctx, x), yb)
    y = np.empty(n, np.float32)
    cl.enqueue_copy(q, y, yb)
    np.testing.assert_array_equal(y, x.reshape(-1, local)[:, ::-1].reshape(-1))


@pytest.mark.parametrize("n, local", [(64, 64), (1024, 64), (512, 32)])
def test_local_pointer_argument_tree_reduction(env, n, local):
    ctx, q, prg = env
    x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    ob = cl.Buffer(ctx, 0, 4 * (n // local))
    prg.group_sum(q, (n,), (local,), buf(ctx, x), ob, cl.LocalMemory(4 * local))
    o = np.empty(n // local, np.float32)
    cl.enqueue_copy(q, o, ob)
    want = x.reshape(-1, local)
    for k in (local // 2 ** j for j in range(1, local.bit_length())):   # the kernel's order, in fp32
        want = want[:, :k] + want[:, k:2 * k]
    np.testing.assert_array_equal(o, want[:, 0])


@pytest.mark.parametrize("options", ["", "-cl-opt-disable"])
def test_private_arrays_indexed_at_run_time(env, options):
    ctx, q, _ = env
    prg = cl.Program(ctx, SRC).build(options=options)
    n = 700
    a = np.random.default_rng(5).integers(-100, 100, n).astype(np.int32)
    ob, odb = cl.Buffer(ctx, 0, 4 * n), cl.Buffer(ctx, 0, 8 * n)
    prg.private_arrays(q, (n,), None, buf(ctx, a), ob, odb)
    o, od = np.empty(n, np.int32), np.empty(n)
    cl.enqueue_copy(q, o, ob)
    cl.enqueue_copy(q, od, odb)
    rows = np.arange(n)
    t = a[:, None] * np.arange(8)
    t[rows, a & 7] += 1000
    d = a[:, None] + 0.5 * np.arange(4)
    d[rows[a > 0], (a & 3)[a > 0]] = -1.0
    np.testing.assert_array_equal(o, t[rows, (a + 3) & 7] + t[rows, a & 7])
    np.testing.assert_array_equal(od, d[rows, (rows + a) & 3])


@pytest.mark.parametrize("op", ["bswap", "bitreverse"])
def test_byte_and_bit_reversal_intrinsics(env, monkeypatch, op):
    """LLVM turns the byte-swap idiom into llvm.bswap.i16/i32/i64; the bitreverse case renames those
    calls in the IR (same signatures), as no OpenCL C builtin asks for llvm.bitreverse directly."""
    import translator
    ctx, q, _ = env
    src = """__kernel void r(__global const ushort *h, __global const uint *w, __global const ulong *l,
                    __global ushort *oh, __global uint *ow, __global ulong *ol)
{
    int i = get_global_id(0);
    ushort x = h[i]; uint y = w[i]; ulong z = l[i];
    oh[i] = (ushort)((x >> 8) | (x << 8));
    ow[i] = (y >> 24) | ((y >> 8) & 0xff00u) | ((y << 8) & 0xff0000u) | (y << 24);
    ulong lo = (uint)z, hi = z >> 32;
    lo = (lo >> 24) | ((lo >> 8) & 0xff00u) | ((lo << 8) & 0xff0000u) | ((lo << 24) & 0xff000000u);
    hi = (hi >> 24) | ((hi >> 8) & 0xff00u) | ((hi << 8) & 0xff0000u) | ((hi << 24) & 0xff000000u);
    ol[i] = (lo << 32) | hi;
}
"""
    compile_opencl = translator.compile_opencl

    def renamed(*args, **kw):
        m = compile_opencl(*args, **kw)
        assert all(f"@llvm.bswap.i{n}(" in m.llvm_ir for n in (16, 32, 64))
        return dataclasses.replace(m, llvm_ir=m.llvm_ir.replace("@llvm.bswap.", f"@llvm.{op}."))
    monkeypatch.setattr(translator, "compile_opencl", renamed)
    prg = cl.Program(ctx, src).build(options=f"-D OP_{op}")     # its own build: no cached program
    rng = np.random.default_rng(9)
    ins = [rng.integers(0, np.iinfo(t).max, 300, dtype=t, endpoint=True) for t in (np.uint16, np.uint32, np.uint64)]
    outs = [buf(ctx, np.zeros_like(a)) for a in ins]
    prg.r(q, (300,), None, *(buf(ctx, a) for a in ins), *outs).wait()
    for a, ob in zip(ins, outs):
        got = np.empty_like(a)
        cl.enqueue_copy(q, got, ob)
        bits = a.dtype.itemsize * 8
        if op == "bswap":
            want = a.byteswap()
        else:
            want = np.array([int(f"{int(v):0{bits}b}"[::-1], 2) for v in a], a.dtype)
        np.testing.assert_array_equal(got, want)


INT_MIN_MAX = r"""
__kernel void ic(__global const char *c, __global const short *h, __global const int *w, __global const long *l,
                 __global const uchar *uc, __global const ushort *uh, __global const uint *uw, __global const ulong *ul,
                 __global long *o)
{
    int i = get_global_id(0), j = (i * 7 + 3) % get_global_size(0);
    o[16 * i + 0] = max(c[i], c[j]);   o[16 * i + 1] = min(h[i], h[j]);
    o[16 * i + 2] = max(w[i], w[j]);   o[16 * i + 3] = min(l[i], l[j]);
    o[16 * i + 4] = max(uc[i], uc[j]); o[16 * i + 5] = min(uh[i], uh[j]);
    o[16 * i + 6] = max(uw[i], uw[j]); o[16 * i + 7] = (long)min(ul[i], ul[j]);
    o[16 * i + 8] = abs(c[i]);         o[16 * i + 9] = abs(h[i]);
    o[16 * i + 10] = abs(w[i]);        o[16 * i + 11] = (long)abs(l[i]);
    o[16 * i + 12] = sub_sat(uw[i], uw[j]); o[16 * i + 13] = add_sat(uw[i], uw[j]);
    o[16 * i + 14] = sub_sat(uh[i], uh[j]); o[16 * i + 15] = (long)add_sat(ul[i], ul[j]);
}
"""


def test_integer_min_max_abs_and_saturation_of_every_width(env):
    """LLVM's smax/smin/umax/umin/abs of i8 to i64 and uadd.sat (only the i32 min/max and abs were
    lowered): min, max, abs, add_sat and sub_sat against numpy, extremes included."""
    ctx, q, _ = env
    n = 200
    rng = np.random.default_rng(4)
    types = (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)
    ins = [rng.integers(np.iinfo(t).min, np.iinfo(t).max, n, dtype=t, endpoint=True) for t in types]
    for a in ins:
        a[:4] = [np.iinfo(a.dtype).min, np.iinfo(a.dtype).max, 0, 1]
    ob = buf(ctx, np.zeros(16 * n, np.int64))
    cl.Program(ctx, INT_MIN_MAX).build().ic(q, (n,), None, *(buf(ctx, a) for a in ins), ob).wait()
    got = np.empty((n, 16), np.int64)
    cl.enqueue_copy(q, got, ob)
    c, h, w, l, uc, uh, uw, ul = (a.astype(object) for a in ins)
    j = (np.arange(n) * 7 + 3) % n
    wrap = lambda v: np.array([int(x) & (2**64 - 1) for x in v], np.uint64).view(np.int64)
    want = [np.maximum(c, c[j]), np.minimum(h, h[j]), np.maximum(w, w[j]), np.minimum(l, l[j]),
            np.maximum(uc, uc[j]), np.minimum(uh, uh[j]), np.maximum(uw, uw[j]), np.minimum(ul, ul[j]),
            abs(c) % 2**8, abs(h) % 2**16, abs(w) % 2**32, abs(l) % 2**64,
            np.maximum(uw - uw[j], 0), np.minimum(uw + uw[j], 2**32 - 1),
            np.maximum(uh - uh[j], 0), np.minimum(ul + ul[j], 2**64 - 1)]
    for k, v in enumerate(want):
        np.testing.assert_array_equal(got[:, k], wrap(v), err_msg=f"o[16 * i + {k}]")


def test_char_and_short_loads_stores_and_arithmetic(env):
    """1- and 2-byte elements share 32-bit words: narrow stores from neighbouring work-items merge."""
    ctx, q, prg = env
    n = 777
    rng = np.random.default_rng(6)
    a = rng.integers(-128, 128, n).astype(np.int8)
    b = rng.integers(0, 65536, n).astype(np.uint16)
    outs = [np.zeros(n, np.uint8), np.zeros(n, np.int16), np.zeros(n, np.int32)]
    bufs = [buf(ctx, o) for o in outs]
    prg.narrow_ints(q, (n,), None, buf(ctx, a), buf(ctx, b), *bufs)
    for o, ob in zip(outs, bufs):
        cl.enqueue_copy(q, o, ob)
    ai, bi = a.astype(np.int32), b.astype(np.int32)
    t = (ai[:, None] + np.arange(5)).astype(np.uint8)
    np.testing.assert_array_equal(outs[0], ((ai * 3).astype(np.uint8) + t[np.arange(n), bi & 3]).astype(np.uint8))
    np.testing.assert_array_equal(outs[1], ((bi >> 3).astype(np.int16) - ai).astype(np.int16))
    np.testing.assert_array_equal(outs[2], (ai < -5) + (bi > 40000) * 2 + np.trunc(ai / 3).astype(np.int32) + bi % 7)


def test_vector_types_swizzles_selects_and_conversions(env):
    ctx, q, prg = env
    n = 300
    a = np.random.default_rng(7).standard_normal((n, 4)).astype(np.float32)
    ob, oib = cl.Buffer(ctx, 0, 16 * n), cl.Buffer(ctx, 0, 8 * n)
    prg.vectors(q, (n,), None, buf(ctx, a), ob, oib, np.float32(1.5))
    o, oi = np.empty((n, 4), np.float32), np.empty((n, 2), np.int32)
    cl.enqueue_copy(q, o, ob)
    cl.enqueue_copy(q, oi, oib)
    y = np.maximum(a[:, ::-1] * np.float32(1.5) + np.array([1, 2, 3, 4], np.float32), a)
    np.testing.assert_array_equal(o, np.where(a < 0, -y, y))
    i = np.arange(n)
    np.testing.assert_array_equal(oi, np.stack([i, -i], 1) + np.where(a[:, :2] > a[:, 2:], -1, 0))


def test_unsupported_constructs_are_build_errors_naming_the_kernel(env):
    ctx, _, _ = env
    src = "__kernel void k(__global float *o, int j) { float t[2000]; t[j] = 1; o[get_global_id(0)] = t[j / 2]; }"
    with pytest.raises(cl.RuntimeError, match="kernel 'k'.*private arrays need 8000 bytes per work-item"):
        cl.Program(ctx, src).build()


def test_profile_has_cycles_per_source_line_and_reports(env, tmp_path, monkeypatch):
    """ev.stats attributes cycles to C lines; MNCL_PROFILE writes a Chrome trace and an HTML report."""
    ctx, q, _ = env
    src = ("__kernel void k(__global const float *x, __global float *y, int n)\n"
           "{\n"
           "    int i = get_global_id(0);\n"
           "    float s = 0;\n"
           "    for (int j = 0; j < n; j++) s = s * 0.5f + x[i] / (x[i] + j + 1.0f);\n"
           "    y[i] = s;\n"
           "}\n")
    monkeypatch.setenv("MNCL_PROFILE", str(tmp_path))
    prg = cl.Program(ctx, src).build()
    x = np.arange(600, dtype=np.float32)
    yb = cl.Buffer(ctx, 0, 4 * 600)
    ev = prg.k(q, (600,), None, buf(ctx, x), yb, np.int32(5))
    ev.wait()
    by_line = ev.stats.cycles_by_line
    assert abs(sum(by_line.values()) - ev.stats.cycles) <= 1024      # all but the final drain
    assert by_line.get(5, 0) > 1000 and by_line.get(6, 0) > 0         # the loop, and the store with its transfers
    assert ev.stats.summary()["roofline"]["bound"] in ("memory", "compute")
    html = next(tmp_path.glob("k-*.html")).read_text()
    assert "x[i] / (x[i] + j + 1.0f)" in html and next(tmp_path.glob("k-*.trace.json")).stat().st_size > 0


def test_out_of_bounds_is_reported_with_kernel_line_buffer_and_index(env):
    """The launch fails naming the kernel, the C line, the argument and the first bad index;
    in-bounds stores land, the out-of-bounds ones are dropped and the other buffer is untouched."""
    ctx, q, _ = env
    src = ("__kernel void over(__global float *a, __global float *b, int k) {\n"
           "  int i = get_global_id(0);\n"
           "  b[i] = 1.0f;\n"
           "  a[i + k] = 2.0f;\n"
           "}\n")
    prg = cl.Program(ctx, src).build()
    a, b = buf(ctx, np.zeros(16, np.float32)), buf(ctx, np.zeros(16, np.float32))
    with pytest.raises(cl.MemoryError, match=r"kernel 'over' accessed out of bounds at line 4: index 1[6-8] of "
                                             r"the buffer passed as argument 0 \('a', 64 bytes"):
        prg.over(q, (16,), None, a, b, np.int32(3)).wait()
    out = np.empty(16, np.float32)
    cl.enqueue_copy(q, out, a)
    np.testing.assert_array_equal(out, [0, 0, 0] + [2] * 13)
    cl.enqueue_copy(q, out, b)
    np.testing.assert_array_equal(out, np.ones(16))
    prg.over(q, (16,), None, a, b, np.int32(0)).wait()          # in bounds: no error


@pytest.mark.parametrize("stride", [2, 3, 5])
def test_strided_stores(env, stride):
    """o[s * i]: LLVM scales the index by s << 32 before the shift back: a product beyond 32 bits."""
    ctx, q, _ = env
    src = f"__kernel void k(__global const float *x, __global float *o) {{ o[{stride} * get_global_id(0)] = x[get_global_id(0)]; }}"
    prg = cl.Program(ctx, src).build()
    x = np.arange(300, dtype=np.float32) + 1
    ob = buf(ctx, np.zeros(stride * 300, np.float32))
    prg.k(q, (300,), None, buf(ctx, x), ob)
    o = np.empty(stride * 300, np.float32)
    cl.enqueue_copy(q, o, ob)
    want = np.zeros_like(o)
    want[::stride] = x
    np.testing.assert_array_equal(o, want)


@pytest.mark.parametrize("gs", [(301,), (100, 6)])
def test_a_strided_read_may_end_inside_its_stride(env, gs):
    """x[2 * i + 2] of a float array: LLVM steps i by 8 bytes, and x's last float (index 2n) is in
    bounds though the 8-byte step it starts is not whole; once refused as out of bounds."""
    ctx, q, _ = env
    src = ("__kernel void k(__global const float *x, __global float *o) {\n"
           "  long i = get_global_id(0), j = get_global_id(1);\n"
           "  o[j * get_global_size(0) + i] = x[2 * i + 2] + (float)j;\n"
           "}\n")
    n, rows = gs[0], (gs[1] if len(gs) > 1 else 1)
    x = np.arange(2 * n + 1, dtype=np.float32)
    ob = buf(ctx, np.zeros(n * rows, np.float32))
    cl.Program(ctx, src).build().k(q, gs, None, buf(ctx, x), ob).wait()
    o = np.empty(n * rows, np.float32)
    cl.enqueue_copy(q, o, ob)
    np.testing.assert_array_equal(o.reshape(rows, n), x[2:][::2][None, :] + np.arange(rows)[:, None])


def test_bounds_checks_the_sequencer_clears_still_catch_the_last_wave(env):
    """x[i + k] across several waves: the sequencer clears the whole-wave checks of the early
    waves, and the per-lane check of the wave that leaves the buffer still reports it."""
    ctx, q, _ = env
    src = ("__kernel void shift(__global const float *x, __global float *o, int k) {\n"
           "  int i = get_global_id(0);\n"
           "  o[i] = x[i + k];\n"
           "}\n")
    prg = cl.Program(ctx, src).build()
    n = 3037                       # several waves of tiny (8 work-items per PE), the last one partial
    x = np.arange(n, dtype=np.float32)
    xb, ob = buf(ctx, x), buf(ctx, np.zeros(n, np.float32))
    prg.shift(q, (n - 5,), None, xb, ob, np.int32(5)).wait()
    out = np.empty(n, np.float32)
    cl.enqueue_copy(q, out, ob)
    np.testing.assert_array_equal(out[:n - 5], x[5:])
    with pytest.raises(cl.MemoryError, match=rf"kernel 'shift' accessed out of bounds at line 3: index {n} of "
                                             r"the buffer passed as argument 0"):
        prg.shift(q, (n,), None, xb, ob, np.int32(5)).wait()


def test_column_major_matvec_takes_the_shifted_path_in_a_sequencer_loop(env):
    """At[j * m + i] with a uniform x[j]: the access is the work-item index moved by a value
    the sequencer knows, in a loop it runs; checked against numpy for m off any wave size."""
    ctx, q, _ = env
    src = ("__kernel void mvt(__global const float *At, __global const float *x, __global float *y, int m, int n) {\n"
           "  int i = get_global_id(0);\n"
           "  float s = 0.0f;\n"
           "  for (int j = 0; j < n; j++) s += At[j * m + i] * x[j];\n"
           "  y[i] = s;\n"
           "}\n")
    prg = cl.Program(ctx, src).build()
    rng = np.random.default_rng(3)
    m, n = 1000, 9
    A = rng.uniform(-1, 1, (m, n)).astype(np.float32)
    x = rng.uniform(-1, 1, n).astype(np.float32)
    yb = buf(ctx, np.zeros(m, np.float32))
    prg.mvt(q, (m,), None, buf(ctx, np.ascontiguousarray(A.T)), buf(ctx, x), yb, np.int32(m), np.int32(n)).wait()
    y = np.empty(m, np.float32)
    cl.enqueue_copy(q, y, yb)
    np.testing.assert_allclose(y, A.astype(np.float64) @ x, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("n", [7, -3, 1, 0])
def test_division_by_a_kernel_argument_uses_the_prologue_reciprocal(env, n):
    """i / n and i % n with n an argument: one reciprocal for the launch; the front end's guard
    (x / 0 reads as x / 1) still holds per lane."""
    ctx, q, _ = env
    src = ("__kernel void k(__global int *q, __global int *r, int n) {\n"
           "  int i = get_global_id(0) - 600;\n"
           "  q[get_global_id(0)] = i / n;\n"
           "  r[get_global_id(0)] = i % n;\n"
           "}\n")
    prg = cl.Program(ctx, src).build()
    qb, rb = buf(ctx, np.zeros(1200, np.int32)), buf(ctx, np.zeros(1200, np.int32))
    prg.k(q, (1200,), None, qb, rb, np.int32(n)).wait()
    got_q, got_r = np.empty(1200, np.int32), np.empty(1200, np.int32)
    cl.enqueue_copy(q, got_q, qb)
    cl.enqueue_copy(q, got_r, rb)
    i = np.arange(1200, dtype=np.int64) - 600
    d = n if n else 1
    want_q = np.trunc(i / d).astype(np.int64)
    np.testing.assert_array_equal(got_q, want_q)
    np.testing.assert_array_equal(got_r, i - want_q * d)


def many_live_values(name, n_vals):
    """A kernel that computes n_vals values first and combines them in reverse: all live at once."""
    body = "".join(f"  uint v{k} = x * {2 * k + 3}u ^ {k}u;\n" for k in range(n_vals))
    body += "  uint s = 0;\n" + "".join(f"  s = s * 3u + v{k};\n" for k in reversed(range(n_vals)))
    return (f"__kernel void {name}(__global const uint *a, __global uint *o) {{\n"
            "  uint x = a[get_global_id(0)];\n" + body + "  o[get_global_id(0)] = s;\n}\n")


def test_more_live_values_than_registers_spill_to_lm1(env):
    """200 values live at once do not fit the 128 GRF registers: the allocator keeps the ones
    needed last in LM1 and the result is still exact (strict mode checks the LM1 hazards)."""
    ctx, q, _ = env
    n_vals = 200
    prg = cl.Program(ctx, many_live_values("many", n_vals)).build()
    a = np.random.default_rng(5).integers(0, 2 ** 32, 300, dtype=np.uint32)
    ob = buf(ctx, np.zeros(300, np.uint32))
    prg.many(q, (300,), None, buf(ctx, a), ob).wait()
    got = np.empty(300, np.uint32)
    cl.enqueue_copy(q, got, ob)
    s = np.zeros(300, np.uint32)
    for k in reversed(range(n_vals)):
        s = s * np.uint32(3) + (a * np.uint32(2 * k + 3) ^ np.uint32(k))
    np.testing.assert_array_equal(got, s)


def test_a_kernel_too_big_for_registers_and_lm1_is_a_build_error_with_the_numbers(env):
    ctx, _, _ = env
    src = many_live_values("huge", 800)
    with pytest.raises(cl.RuntimeError, match=r"kernel 'huge'.*needs more than \d+ live values.*128 4-long-word "
                                              r"registers.*room for \d+ more in LM1"):
        cl.Program(ctx, src).build()


@pytest.mark.parametrize("n", [0, 1, 6])
@pytest.mark.parametrize("options", ["", "-cl-opt-disable"])
def test_counted_loop_under_a_branch_with_swapped_phis_read_after_it(env, n, options):
    """A loop the sequencer counts, entered by some lanes only; its header phis swap (a, b = b,
    a + b) and are read after the loop, so they must hold the last pass's values, not one more."""
    ctx, q, _ = env
    src = ("__kernel void fib(__global int *out, __global int *prev, int n) {\n"
           "  int i = get_global_id(0);\n"
           "  int a = i, b = 1, p = -1;\n"
           "  if (i % 3 != 0) {\n"
           "    for (int k = 0; k < n; k++) { p = a * 2 + k; int t = a + b; a = b; b = t; }\n"
           "  }\n"
           "  out[i] = a;\n"
           "  prev[i] = p;\n"
           "}\n")
    prg = cl.Program(ctx, src).build(options=options)
    m = 333
    ob, pb = buf(ctx, np.zeros(m, np.int32)), buf(ctx, np.zeros(m, np.int32))
    prg.fib(q, (m,), None, ob, pb, np.int32(n)).wait()
    got_a, got_p = np.empty(m, np.int32), np.empty(m, np.int32)
    cl.enqueue_copy(q, got_a, ob)
    cl.enqueue_copy(q, got_p, pb)
    a, b, p = np.arange(m, dtype=np.int32), np.ones(m, np.int32), np.full(m, -1, np.int32)
    run = np.arange(m) % 3 != 0
    for k in range(n):
        p = np.where(run, a * 2 + k, p)
        a, b = np.where(run, b, a), np.where(run, a + b, b)
    np.testing.assert_array_equal(got_a, a)
    np.testing.assert_array_equal(got_p, p)


@pytest.mark.parametrize("n", [7, -3, -1, 0, 65537, -2147483647])
def test_quotient_times_divisor_is_exact_on_every_edge(env, n):
    """x - (x / n) * n (the stencil's column) multiplies in one fp64 product: check it at the
    extremes, with the front end's guard (x / 0 and INT_MIN / -1 read as x / 1)."""
    ctx, q, _ = env
    src = ("__kernel void k(__global const int *x, __global int *col, __global uint *ucol, int n) {\n"
           "  int i = get_global_id(0);\n"
           "  int v = x[i];\n"
           "  col[i] = v - (v / n) * n;\n"
           "  uint u = (uint)v, un = (uint)n;\n"
           "  ucol[i] = u - (u / un) * un;\n"
           "}\n")
    prg = cl.Program(ctx, src).build()
    lo, hi = np.iinfo(np.int32).min, np.iinfo(np.int32).max
    x = np.concatenate([[lo, lo + 1, hi, hi - 1, 0, 1, -1],
                        np.random.default_rng(3).integers(lo, hi, 500, dtype=np.int64, endpoint=True)]).astype(np.int32)
    cb, ub = buf(ctx, np.zeros_like(x)), buf(ctx, np.zeros(x.size, np.uint32))
    prg.k(q, (x.size,), None, buf(ctx, x), cb, ub, np.int32(n)).wait()
    got, ugot = np.empty_like(x), np.empty(x.size, np.uint32)
    cl.enqueue_copy(q, got, cb)
    cl.enqueue_copy(q, ugot, ub)
    x64 = x.astype(np.int64)
    bad = (n == 0) | ((x64 == lo) & (n == -1))
    quo = np.where(bad, x64, np.trunc(x64 / (n if n else 1)).astype(np.int64))
    np.testing.assert_array_equal(got, (x64 - quo * n).astype(np.int32))   # wraps like C's int
    u, un = x.view(np.uint32).astype(np.uint64), np.uint64(np.uint32(np.int32(n)))
    uquo = u // un if un else u
    np.testing.assert_array_equal(ugot, (u - uquo * un).astype(np.uint32))


@pytest.mark.parametrize("dtype", ["float", "double"])
def test_comparisons_with_nan_inputs_follow_ieee(env, dtype):
    """NaNs read from memory (the MAU never makes one: docs/isa.md) compare unordered: every
    ordered predicate is false, != is true, isnan and convert_*_sat see them."""
    ctx, q, _ = env
    src = (f"__kernel void k(__global const {dtype} *a, __global const {dtype} *b, __global int *cmp) {{\n"
           "  int i = get_global_id(0);\n"
           f"  {dtype} x = a[i], y = b[i];\n"
           "  cmp[i] = (x < y) | (x > y) << 1 | (x == y) << 2 | (x != y) << 3 | (x != x) << 4 | (x <= y) << 5\n"
           "           | (x >= y) << 6 | isnan(y) << 7 | (convert_int_sat(x) == 0) << 8;\n"
           "}\n")
    prg = cl.Program(ctx, src).build()
    nt = np.float32 if dtype == "float" else np.float64
    vals = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5, -2.0, 3e30], nt)
    a, b = (x.ravel().copy() for x in np.meshgrid(vals, vals))
    cb = buf(ctx, np.zeros(a.size, np.int32))
    prg.k(q, (a.size,), None, buf(ctx, a), buf(ctx, b), cb).wait()
    got = np.empty(a.size, np.int32)
    cl.enqueue_copy(q, got, cb)
    with np.errstate(invalid="ignore"):
        sat = np.where(np.isnan(a), 0, np.clip(np.nan_to_num(a), -2.0 ** 31, 2.0 ** 31 - 1)).astype(np.int64)
        want = ((a < b) | (a > b) << 1 | (a == b) << 2 | (a != b) << 3 | (a != a) << 4 | (a <= b) << 5
                | (a >= b) << 6 | np.isnan(b) << 7 | (sat == 0) << 8)
    np.testing.assert_array_equal(got, want.astype(np.int32))


@pytest.mark.parametrize("n", [-1, 0, 5])
@pytest.mark.parametrize("options", ["", "-cl-opt-disable"])
def test_loops_with_an_inclusive_bound_run_on_the_sequencer(env, n, options):
    """for (t = 0; t <= n; t++) is counted (n - 0 + 1 passes) and its loads of row t stay
    uniform, not gathers; counting down to an inclusive bound too."""
    ctx, q, _ = env
    src = ("__kernel void k(__global const float *a, __global float *o, int n) {\n"
           "  int i = get_global_id(0);\n"
           "  float s = 0.0f;\n"
           "  for (int t = 0; t <= n; t++) s += a[t * 8 + i % 8];\n"
           "  for (int t = n; t >= 1; t--) s += 100.0f * t;\n"
           "  o[i] = s;\n"
           "}\n")
    prg = cl.Program(ctx, src).build(options=options)
    a = np.random.default_rng(2).standard_normal(64).astype(np.float32)
    ob = buf(ctx, np.zeros(40, np.float32))
    prg.k(q, (40,), None, buf(ctx, a), ob, np.int32(n)).wait()
    got = np.empty(40, np.float32)
    cl.enqueue_copy(q, got, ob)
    i = np.arange(40)
    want = np.zeros(40, np.float32)
    for t in range(n + 1):
        want += a[t * 8 + i % 8]
    for t in range(n, 0, -1):
        want += np.float32(100.0 * t)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    up = src.replace("  for (int t = n; t >= 1; t--) s += 100.0f * t;\n", "")
    asm = tiny_asm(up, "k", options)
    assert ".while any" not in asm and ".loop %n0" in asm


def test_two_queues_on_one_emulator_device_do_not_interleave_launches(env):
    """Each queue has its own worker thread; the device has one emulated machine, so launches
    from two queues must run one at a time (each writes the argument block, runs, reads back)."""
    ctx, _, prg = env
    queues = [cl.CommandQueue(ctx) for _ in range(2)]
    rng = np.random.default_rng(9)
    xs = [rng.standard_normal(3000).astype(np.float32) for _ in range(2)]
    ys = [buf(ctx, np.zeros(3000, np.float32)) for _ in range(2)]
    xbufs = [buf(ctx, x) for x in xs]
    for _ in range(6):
        for k, q in enumerate(queues):
            prg.saxpy(q, (3000,), None, xbufs[k], ys[k], np.float32(k + 1), np.int32(3000))
    for q in queues:
        q.finish()
    for k in range(2):
        got = np.empty(3000, np.float32)
        cl.enqueue_copy(queues[k], got, ys[k])
        want = np.zeros(3000, np.float32)
        for _ in range(6):
            want = np.float32(k + 1) * xs[k] + want
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("trips", [0, 1, 5])
def test_vector_accumulators_leaving_a_run_time_loop_keep_every_element(env, trips):
    """float4 / long2 / int8 values carried out of a loop with a run-time trip count: every element
    (the exit capture once kept only the first two registers of a vector)."""
    ctx, q, _ = env
    src = """__kernel void acc(__global float *f, __global long *l, __global int *k, int n) {
        int i = get_global_id(0);
        float4 s = 0; long2 t = 0; int8 u = 0;
        for (int j = 0; j < n; j++) {
            s += (float4)(1, 2, 3, 4) * (float)(i + 1);
            t += (long2)(3, (long)1 << 40) + i;
            u += (int8)(1, 2, 3, 4, 5, 6, 7, 8) * i;
        }
        vstore4(s, i, f); vstore2(t, i, l); vstore8(u, i, k);
    }"""
    prg = cl.Program(ctx, src).build()
    n = 100
    f, l, k = np.zeros(4 * n, np.float32), np.zeros(2 * n, np.int64), np.zeros(8 * n, np.int32)
    bufs = [buf(ctx, a) for a in (f, l, k)]
    prg.acc(q, (n,), None, *bufs, np.int32(trips))
    for a, b in zip((f, l, k), bufs):
        cl.enqueue_copy(q, a, b)
    i = np.arange(n)[:, None]
    np.testing.assert_array_equal(f.reshape(n, 4), trips * np.array([1, 2, 3, 4], np.float32) * (i + 1))
    np.testing.assert_array_equal(l.reshape(n, 2), trips * (np.array([3, 1 << 40]) + i))
    np.testing.assert_array_equal(k.reshape(n, 8), trips * np.arange(1, 9) * i)


STENCIL = """__kernel void stencil(__global const float *in, __global float *out, int N, float c, float w)
{
    int i = get_global_id(0);
    int r = i / N;
    int col = i - r * N;
    if (r > 0 && r < N - 1 && col > 0 && col < N - 1)
        out[i] = c * in[i] + w * (in[i - 1] + in[i + 1] + in[i - N] + in[i + N]);
    else
        out[i] = in[i];
}
"""


@pytest.mark.parametrize("n", [7, 32, 45])
def test_stores_of_both_arms_merge_into_one(env, n):
    """out[i] stored in both arms of an if/else is one store after the join (diamonds.py): full
    waves write without reading, a tail wave keeps what lies past the last work-item, and an
    out-of-bounds store names both arms' lines."""
    ctx, q, _ = env
    prg = cl.Program(ctx, STENCIL).build()
    src = np.random.default_rng(n).standard_normal(n * n).astype(np.float32)
    out = buf(ctx, np.full(n * n + 3, 7.0, np.float32))
    prg.stencil(q, (n * n,), None, buf(ctx, src), out, np.int32(n), np.float32(0.5), np.float32(0.125)).wait()
    got = np.empty(n * n + 3, np.float32)
    cl.enqueue_copy(q, got, out)
    a = src.reshape(n, n).astype(np.float64)
    want = a.copy()
    want[1:-1, 1:-1] = 0.5 * a[1:-1, 1:-1] + 0.125 * (a[1:-1, :-2] + a[1:-1, 2:] + a[:-2, 1:-1] + a[2:, 1:-1])
    np.testing.assert_allclose(got[:n * n], want.reshape(-1), rtol=1e-6, atol=1e-6)
    assert (got[n * n:] == 7.0).all()
    small = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, size=4 * (n * n - 2))
    with pytest.raises(cl.MemoryError, match=r"at line 7 or 9: index %d " % (n * n - 2)):
        prg.stencil(q, (n * n,), None, buf(ctx, src), small, np.int32(n), np.float32(0.5), np.float32(0.125)).wait()
    asm = tiny_asm(STENCIL, "stencil")
    # one store's MV up to DRAM in each of the wave body's two copies (prefetch.py); two bounds reports
    assert asm.count("$d0\n") == 2 + 2


DIVMOD = """__kernel void divmod(__global int *q, __global int *r, __global int *c, int n)
{
    int i = get_global_id(0);
    int k = i - (int)get_global_offset(0);
    q[k] = i / n;
    r[k] = i % n;
    c[k] = i - (i / n) * n;
}
"""


@pytest.mark.parametrize("n", [1, 3, 7, 1000, (1 << 22) - 1, 1 << 22, 123456789, 0, -1, -7])
@pytest.mark.parametrize("offset", [0, (1 << 22) - 700])
def test_division_of_the_global_id_by_an_argument(env, n, offset):
    """i / n and i % n for i the global id: waves whose operands the sequencer sees below 2^22
    take the fp32 path (divide_uniform), the others fp64; the launch at an offset straddles 2^22,
    so one kernel runs both. Checked against the CPU device (the same divide-by-zero rule)."""
    ctx, q, _ = env
    m = 1500
    outs = {}
    for name, dev in (("emu", ctx), ("cpu", None)):
        if dev is None:
            cpu = [d for d in cl.get_platforms()[0].get_devices() if d.type == cl.device_type.CPU][0]
            c2 = cl.Context([cpu])
            q2 = cl.CommandQueue(c2)
        else:
            c2, q2 = ctx, q
        prg = cl.Program(c2, DIVMOD).build()
        bufs = [cl.Buffer(c2, cl.mem_flags.READ_WRITE, size=4 * m) for _ in range(3)]
        prg.divmod(q2, (m,), None, *bufs, np.int32(n), global_offset=(offset,)).wait()
        res = []
        for b in bufs:
            a = np.empty(m, np.int32)
            cl.enqueue_copy(q2, a, b)
            res.append(a)
        outs[name] = res
    for e, c in zip(outs["emu"], outs["cpu"]):
        np.testing.assert_array_equal(e, c)
    if n > 0:
        i = np.arange(offset, offset + m, dtype=np.int64)
        np.testing.assert_array_equal(outs["emu"][0], i // n)
        np.testing.assert_array_equal(outs["emu"][1], i % n)
    asm = tiny_asm(DIVMOD, "divmod")
    assert "fitof" in asm and f"< {1 << 22}" in asm        # the fp32 path is there, under its test


def test_assembly_is_the_same_from_one_compile_to_the_next():
    """Gathers, scatters and 64-bit division make sequencer loops of their own; their registers
    are numbered, so mncl-cc -S output can be diffed and cached (they were named from object ids)."""
    src = """__kernel void g(__global const int *idx, __global const float *a, __global float *o, __global float *h)
{
    int i = get_global_id(0);
    o[i] = a[idx[i]] + a[(i * 7) % 64];
    h[idx[i]] += 1.0f;
    o[i] += (float)(((long)i * 12345) / (long)(idx[i] + 1));
}
"""
    first, second = (tiny_asm(src, "g") for _ in range(2))
    assert first == second and "%r1 " in first


def test_a_divisor_computed_in_the_kernel_serves_both_division_paths(env):
    """n + 1 is uniform but not an argument, so its reciprocal is made in the wave body: before the
    fp32/fp64 branch of its first division, since the second division (operands past 2^22) takes
    the other path in the same wave and reads it too."""
    ctx, q, _ = env
    src = """__kernel void d(__global int *a, __global int *b, int n)
{
    int i = get_global_id(0);
    int m = n + 1;
    a[i] = i / m;
    b[i] = (i + 5000000) / m;
}
"""
    prg = cl.Program(ctx, src).build()
    size = 1000
    bufs = [cl.Buffer(ctx, cl.mem_flags.READ_WRITE, size=4 * size) for _ in range(2)]
    prg.d(q, (size,), None, *bufs, np.int32(6)).wait()
    i = np.arange(size)
    for got_buf, want in zip(bufs, (i // 7, (i + 5000000) // 7)):
        got = np.empty(size, np.int32)
        cl.enqueue_copy(q, got, got_buf)
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("options", ["", "-cl-opt-disable"])
def test_a_pass_counter_divisor_is_not_read_from_a_lane_that_left(env, options):
    """k runs 2, 3, ... in every lane still in the loop, but a lane that returned keeps its last k,
    and it may share a long word with one still running: dividing by k must not take the
    reciprocal of the first lane's k for both (at -O0, odd work-items missed 3, 5, 7 ...)."""
    ctx, q, _ = env
    src = """__kernel void f(__global const int *a, __global int *out)
{
    int i = get_global_id(0), x = a[i];
    for (int k = 2; k < 12; k++)
        if (x % k == 0) { out[i] = k; return; }
    out[i] = -1;
}
"""
    prg = cl.Program(ctx, src).build(options=options)
    a = np.random.default_rng(5).integers(1, 1000, 256).astype(np.int32)
    ob = buf(ctx, np.zeros(256, np.int32))
    prg.f(q, (256,), None, buf(ctx, a), ob).wait()
    got = np.empty(256, np.int32)
    cl.enqueue_copy(q, got, ob)
    k = np.arange(2, 12)
    divides = a[:, None] % k == 0
    np.testing.assert_array_equal(got, np.where(divides.any(1), k[divides.argmax(1)], -1))


def test_values_leaving_a_loop_through_a_block_after_it_keep_each_lanes_last_pass(env):
    """The private store makes LLVM reload arr in a block of its own after the loop
    (loop.exit.loopexit), so p0 and p3 reach the exit's phi from there, not from the loop: a lane
    that left after one pass must still see its own values, not those of later passes run for
    lanes with more (it read the last pass's registers: barrier_252 of the random corpus)."""
    ctx, q, _ = env
    src = """__kernel void k(__global const uint *in, __global uint *out)
{
    uint i = get_global_id(0), x = in[i], n = x & 3u;
    uint arr[4] = {x, x ^ 1u, i, n};
    uint p0 = x + i, p3 = x * 7u + i;
    for (uint k = 0; k < n; k++) {
        if (x & k & 1u)
            arr[(p0 + x) & 3u] = k;
        else {
            p3 = p0 ^ (x + k);
            p0 = i + k;
        }
    }
    out[3 * i] = p0;
    out[3 * i + 1] = p3;
    out[3 * i + 2] = arr[0] + arr[1] * 3u + arr[2] * 5u + arr[3] * 7u;
}
"""
    x = np.random.default_rng(8).integers(0, 2**32, 200, dtype=np.uint32)
    ob = buf(ctx, np.zeros(600, np.uint32))
    cl.Program(ctx, src).build().k(q, (200,), None, buf(ctx, x), ob).wait()
    got = np.empty(600, np.uint32)
    cl.enqueue_copy(q, got, ob)
    want = []
    for i, v in enumerate(int(v) for v in x):
        arr, p0, p3 = [v, v ^ 1, i, v & 3], (v + i) % 2**32, (v * 7 + i) % 2**32
        for k in range(v & 3):
            if v & k & 1:
                arr[(p0 + v) & 3] = k
            else:
                p3, p0 = p0 ^ ((v + k) % 2**32), i + k
        want += [p0, p3, (arr[0] + arr[1] * 3 + arr[2] * 5 + arr[3] * 7) % 2**32]
    np.testing.assert_array_equal(got, np.array(want, np.uint32))


UNIFORM_IN_LOOPS = r"""
__kernel void utab(__global const float *x, __global const int *k, __global const double *d,
                   __global const long *l, __global float *o, __global double *od, int n, int s) {
  int i = get_global_id(0);
  float a = x[1];                        /* outside any loop: one broadcast long word */
  double b = 0.0;
  long c = 0;
  for (int j = 0; j < n; j++) {
    a += x[j + s] * (float)(i + 1);      /* 32-bit, odd and even elements, across blocks */
    c += k[j] ^ l[n - 1 - j];            /* 32-bit int; 64-bit walking down */
    b += d[j] * (double)(i & 3);
  }
  int t[PRIV];                           /* private arrays take LM0 before the tables */
  for (int j = 0; j < PRIV; j++) t[j] = j * i;
  o[i] = a + (float)c + (float)t[i % PRIV];
  od[i] = b + (double)c;
}
"""


@pytest.mark.parametrize("n, s, priv", [(0, 0, 4), (1, 3, 4), (300, 5, 4), (300, 0, 200)])
def test_uniform_loads_in_a_loop_read_per_block_tables(env, n, s, priv):
    """x[j] in a loop comes from a table in LM0 filled once per block of 64 elements (a 32-bit
    one from the buffer's widened copy, in both lanes), which must give what numpy gives for
    floats, ints, doubles and longs, walking up and down and across blocks, next to private
    arrays (priv=200: 8 work-items x 1 KiB of LM0)."""
    ctx, q, _ = env
    src = UNIFORM_IN_LOOPS.replace("PRIV", str(priv))
    prg = cl.Program(ctx, src).build()
    asm = tiny_asm(src, "utab")
    # four tables: l[n - 1 - j] walks down one too (LLVM writes its index with ~j, affine as -j - 1)
    assert len(set(re.findall(r"\.set (%ut\d+)", asm))) == 4
    assert "%w0" in asm and "%w1" in asm and "%w2" not in asm     # x and k from their widened copies
    rng = np.random.default_rng(n + s)
    m = 77
    x = rng.uniform(-1, 1, n + s + 2).astype(np.float32)
    k = rng.integers(-2**31, 2**31, max(n, 1), dtype=np.int64).astype(np.int32)
    d = rng.uniform(-1, 1, max(n, 1))
    l = rng.integers(-2**62, 2**62, max(n, 1), dtype=np.int64)
    ob, odb = buf(ctx, np.zeros(m, np.float32)), buf(ctx, np.zeros(m))
    prg.utab(q, (m,), None, buf(ctx, x), buf(ctx, k), buf(ctx, d), buf(ctx, l), ob, odb,
             np.int32(n), np.int32(s)).wait()
    o, od = np.empty(m, np.float32), np.empty(m)
    cl.enqueue_copy(q, o, ob)
    cl.enqueue_copy(q, od, odb)
    i = np.arange(m)
    a = np.full(m, x[1], np.float32)
    b = np.zeros(m)
    c = np.zeros(1, np.int64)
    for j in range(n):
        a = (a + x[j + s] * (i + 1).astype(np.float32)).astype(np.float32)
        c += np.int64(k[j]) ^ l[n - 1 - j]          # wraps, as the kernel's long does
        b = b + d[j] * (i & 3)
    np.testing.assert_array_equal(o, a + np.float32(c[0]) + (i * (i % priv)).astype(np.float32))
    np.testing.assert_array_equal(od, b + np.float64(c[0]))


def test_uniform_loads_without_room_for_a_table_keep_the_broadcast_path(env):
    """Ten x[j] streams next to 1 KiB private arrays: LM0 (tiny: 4096 words, 1024 for gathers
    and scatters, 2048 for the arrays) has room for eight tables of 128 words; the other two read
    their broadcast long word every pass, and all ten sums are right."""
    ctx, q, _ = env
    names = "abcdefghkl"         # (not i, j: the kernel's own)
    src = ("__kernel void six(" + ", ".join(f"__global const float *{v}" for v in names)
           + ", __global float *o, int n) {\n  int i = get_global_id(0);\n  int t[200];\n"
           "  for (int j = 0; j < 200; j++) t[j] = i + j;\n  float s = 0.0f;\n"
           "  for (int j = 0; j < n; j++) s += " + " + ".join(f"{v}[j] * {k + 1}.0f" for k, v in enumerate(names))
           + ";\n  o[i] = s + (float)t[i % 200];\n}\n")
    assert len(set(re.findall(r"\.set (%ut\d+)", tiny_asm(src, "six")))) == 8
    prg = cl.Program(ctx, src).build()
    rng = np.random.default_rng(6)
    n, m = 70, 33
    xs = [rng.uniform(-1, 1, n).astype(np.float32) for _ in names]
    ob = buf(ctx, np.zeros(m, np.float32))
    prg.six(q, (m,), None, *[buf(ctx, x) for x in xs], ob, np.int32(n)).wait()
    o = np.empty(m, np.float32)
    cl.enqueue_copy(q, o, ob)
    s = np.float32(0)
    for j in range(n):
        term = np.float32(0)
        for k, x in enumerate(xs):
            term = np.float32(term + x[j] * np.float32(k + 1)) if k else np.float32(x[j] * np.float32(1))
        s = np.float32(s + term)
    np.testing.assert_allclose(o, s + (np.arange(m) + np.arange(m) % 200).astype(np.float32), rtol=1e-5)


NARROW = r"""
__kernel void narrow(__global const float *x, __global const int *idx, __global float *o,
                     __global const int *perm, __global int *inv, int n, int k) {
  int i = get_global_id(0);
  float s = x[i] + x[i + 3];                  /* contiguous, and shifted (x is replicated) */
  for (int j = 0; j < k; j++) s += x[j];      /* uniform, in a loop */
  s += x[idx[i]];                             /* gathered */
  if (i < n) o[i] = s;
  if (i % 5 == 0) inv[perm[i]] = i;          /* scattered */
}
"""


@pytest.fixture(scope="module")
def mncore2():
    dev = cl.get_device(machine="mncore2")
    ctx = cl.Context([dev])
    return ctx, cl.CommandQueue(ctx), cl.Program(ctx, NARROW).build()


@pytest.mark.parametrize("g", [1, 4095, 4096, 4097, 8193, 16384, 16385])
def test_small_launches_run_in_narrowed_waves(mncore2, g):
    """On mncore2 a 1-D launch of at most 4096, 8192 or 16384 work-items runs in a wave 8, 4 or
    2 times narrower (layout.narrowest): every data path must still give numpy's answer, and
    the launch must move less than a full wave would."""
    from translator.backend import Layout
    ctx, q, prg = mncore2
    lay = Layout.of(ctx.devices[0].backend.machine)
    f = lay.narrowest(g)
    assert f == (8 if g <= 4096 else 4 if g <= 8192 else 2 if g <= 16384 else 1)
    rng = np.random.default_rng(g)
    x = rng.uniform(-1, 1, g + 8).astype(np.float32)
    idx = rng.integers(0, g + 8, g).astype(np.int32)
    n, k = g - g // 3, 5
    perm = rng.permutation(g).astype(np.int32)
    ob, ib = buf(ctx, np.zeros(g, np.float32)), buf(ctx, np.full(g, -1, np.int32))
    ev = prg.narrow(q, (g,), None, buf(ctx, x), buf(ctx, idx), ob, buf(ctx, perm), ib, np.int32(n), np.int32(k))
    o, inv = np.empty(g, np.float32), np.empty(g, np.int32)
    cl.enqueue_copy(q, o, ob)
    cl.enqueue_copy(q, inv, ib)
    s = x[:g] + x[3:g + 3]
    for j in range(k):
        s = (s + x[j]).astype(np.float32)
    s = (s + x[idx]).astype(np.float32)
    np.testing.assert_array_equal(o[:n], s[:n])
    assert (o[n:] == 0).all()
    want = np.full(g, -1, np.int32)
    want[perm[::5]] = np.arange(0, g, 5)
    np.testing.assert_array_equal(inv, want)
    assert ("narrow", f"1d-n{f}" if f > 1 else "1d") in prg._loaded[ctx.devices[0]].kernels
    assert ev.stats.cycles > 0


@pytest.mark.parametrize("f", [1, 2, 4, 8])
def test_a_narrowed_wave_holds_each_of_its_work_items_once(f):
    """layout.item_of_slot: the slots of a wave narrowed f times hold work-items 0 .. wave/f - 1
    once each, and every other slot is empty (-1)."""
    import emulator.machine
    from translator.backend import Layout
    lay = Layout.of(emulator.machine.load_machine("mncore2")).narrowed(f)
    items = lay.item_of_slot()
    held = np.sort(items[items >= 0])
    np.testing.assert_array_equal(held, np.arange(lay.wave))
    if f == 8:                      # 8 times narrower: cycle 0 only
        assert (items[:, 1:] < 0).all()


def test_out_of_bounds_in_a_narrowed_wave_is_reported(mncore2):
    ctx, q, prg = mncore2
    g = 300
    x = np.zeros(g + 8, np.float32)
    args = [buf(ctx, x), buf(ctx, np.zeros(g, np.int32)), buf(ctx, np.zeros(g, np.float32)),
            buf(ctx, np.arange(g, dtype=np.int32)), buf(ctx, np.zeros(g, np.int32)), np.int32(g), np.int32(g + 9)]
    with pytest.raises(cl.MemoryError, match=r"kernel 'narrow' accessed out of bounds at line 6: index 308 of the "
                                             r"buffer passed as argument 0 \('x'"):
        prg.narrow(q, (g,), None, *args).wait()


def loop_copies(asm, reg):
    """Each `.loop reg` of the sequencer program, in order: (its control lines, the text of the
    blocks they call)."""
    blocks = dict(re.findall(r"^\.block (\w+)\n(.*?)^\.endblock", asm, re.M | re.S))
    prog = asm.rsplit(".endblock\n", 1)[1].splitlines()
    out = []
    for k, line in enumerate(prog):
        if line.strip().startswith(f".loop {reg} "):
            ind = line[:len(line) - len(line.lstrip())]
            end = next(j for j in range(k + 1, len(prog)) if prog[j] == f"{ind}.endloop")
            ctl = "\n".join(prog[k:end + 1])
            out.append((ctl, "".join(blocks[b] for b in re.findall(r"\.call (b\d+)", ctl))))
    return out


MVT = ("__kernel void mvt(__global const float *At, __global const float *x, __global float *y, int m, int n) {\n"
       "  int i = get_global_id(0);\n"
       "  float s = 0.0f;\n"
       "  for (int j = 0; j < n; j++) s += At[j * m + i] * x[j];\n"
       "  y[i] = s;\n"
       "}\n")


@pytest.mark.parametrize("n", [0, 1, 9])
def test_a_loop_in_bounds_runs_a_copy_without_its_bounds_checks(env, n):
    """The checks of At[j * m + i] and x[j] are affine in j: the sequencer clears them for the
    first and the last pass before the loop and then runs a copy without the per-pass fallbacks
    and without the per-lane counters only they read; also for 0 and 1 passes."""
    ctx, q, _ = env
    prg = cl.Program(ctx, MVT).build()
    rng = np.random.default_rng(n)
    m = 1000
    A = rng.uniform(-1, 1, (m, n)).astype(np.float32)
    x = rng.uniform(-1, 1, max(n, 1)).astype(np.float32)
    yb = buf(ctx, np.full(m, 7, np.float32))
    At = np.ascontiguousarray(A.T) if n else np.zeros(1, np.float32)
    prg.mvt(q, (m,), None, buf(ctx, At), buf(ctx, x), yb, np.int32(m), np.int32(n)).wait()
    y = np.empty(m, np.float32)
    cl.enqueue_copy(q, y, yb)
    np.testing.assert_allclose(y, A.astype(np.float64) @ x[:n], rtol=1e-5, atol=1e-5)
    (orig, orig_blocks), (fast, fast_blocks) = loop_copies(tiny_asm(MVT, "mvt"), "%n0")
    assert ".if not (" in orig and "ladd" in orig_blocks
    assert ".if not (" not in fast and "ladd" not in fast_blocks


@pytest.mark.parametrize("short", ["At", "x"])
def test_a_loop_leaving_its_buffer_on_its_last_pass_still_reports_it(env, short):
    """The whole-loop test fails, so the original loop runs and its per-lane check reports the
    line, the buffer and an index the last pass reads."""
    ctx, q, _ = env
    prg = cl.Program(ctx, MVT).build()
    m, n = 1000, 5
    At = np.zeros(n * m - (3 if short == "At" else 0), np.float32)
    x = np.zeros(n - (short == "x"), np.float32)
    bad = range((n - 1) * m + m - 3, n * m) if short == "At" else range(n - 1, n)
    arg = 0 if short == "At" else 1
    with pytest.raises(cl.MemoryError, match=rf"kernel 'mvt' accessed out of bounds at line 4: index \d+ of the "
                                             rf"buffer passed as argument {arg}") as e:
        prg.mvt(q, (m,), None, buf(ctx, At), buf(ctx, x), buf(ctx, np.zeros(m, np.float32)),
                np.int32(m), np.int32(n)).wait()
    assert int(re.search(r"index (\d+)", str(e.value)).group(1)) in bad


NESTED = ("__kernel void k(__global const float *a, __global const float *w, __global float *o, int m, int r, int c) {\n"
          "  int i = get_global_id(0);\n"
          "  float s = 0.0f;\n"
          "  for (int p = 0; p < r; p++) {\n"
          "    float t = a[p * m + i];\n"
          "    for (int q = 0; q < c; q++)\n"
          "      s += t * w[p * c + q] + a[(p + q) * m + i];\n"
          "  }\n"
          "  o[i] = s;\n"
          "}\n")


@pytest.mark.parametrize("r, c, rows", [(3, 4, 6), (1, 1, 1), (0, 5, 1), (3, 4, 5)])
def test_nested_loops_version_on_the_inner_loops_end_conditions(env, r, c, rows, monkeypatch):
    """The inner loop's end conditions are affine in the outer counter, so the outer loop has a
    copy with no fallback at any depth; a read past the buffer on the very last pass (rows too
    few for p + q = r + c - 2) still runs the checked loops and is reported at its line."""
    ctx, q, _ = env
    prg = cl.Program(ctx, NESTED).build()
    rng = np.random.default_rng(r * 10 + c)
    m = 700
    a = rng.uniform(-1, 1, (rows, m)).astype(np.float32)
    w = rng.uniform(-1, 1, max(r * c, 1)).astype(np.float32)
    ob = buf(ctx, np.zeros(m, np.float32))
    run = lambda: prg.k(q, (m,), None, buf(ctx, a), buf(ctx, w), ob, np.int32(m), np.int32(r), np.int32(c)).wait()
    if r and r + c - 1 > rows:
        with pytest.raises(cl.MemoryError, match=r"kernel 'k' accessed out of bounds at line 7: index \d+ of the "
                                                 r"buffer passed as argument 0"):
            run()
        return
    run()
    want = np.zeros(m)
    for p in range(r):
        for j in range(c):
            want += a[p].astype(np.float64) * w[p * c + j] + a[p + j]
    got = np.empty(m, np.float32)
    cl.enqueue_copy(q, got, ob)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    asm = tiny_asm(NESTED, "k")
    assert asm == tiny_asm(NESTED, "k")                 # deterministic with the copies
    import translator.backend.colplan as colplan        # (whose copies of the body, one per buffer set,
    monkeypatch.setattr(colplan, "ENABLED", False)      # would multiply the versions counted here)
    asm = tiny_asm(NESTED, "k")
    outer, inner = loop_copies(asm, "%n0"), loop_copies(asm, "%n1")
    assert len(outer) == 2 and len(inner) == 3          # checked outer (checked, fast inner), fast outer
    assert ".if not (" not in outer[1][0] and "ladd" not in outer[1][1]


PACKED = r"""
__kernel void mvt(__global const float *At, __global const float *x, __global float *y, int m, int n, int k) {
  int i = get_global_id(0);
  float s = 0.0f;
  for (int j = 0; j < n; j++)
    s += At[j * m + i + k] * x[j] - x[j + 1];
  y[i] = s;
}
"""


@pytest.fixture(scope="module")
def packed_pair(mncore2):
    """The PACKED kernel twice on mncore2: as compiled, and with cycle packing off (what the
    backend made before it), each compiled at its first launch."""
    import translator.backend.packing as packing
    ctx, q, _ = mncore2
    progs = {}
    for on in (True, False):
        prg = cl.Program(ctx, PACKED + ("" if on else "/* unpacked */\n")).build()   # not shared
        packing.ENABLED = on
        try:
            run_mvt(ctx, q, prg, 64, 64, 1, 0)
        finally:
            packing.ENABLED = True
        progs[on] = prg
        asm = prg._loaded[ctx.devices[0]].kernels[("mvt", "1d-n8")].asm
        assert ("%pq1" in asm) == on
    return ctx, q, progs


def run_mvt(ctx, q, prg, g, m, n, k, cols=None):
    rng = np.random.default_rng(g * 1000 + n)
    At = rng.uniform(-1, 1, (cols if cols is not None else n) * m + k + 8).astype(np.float32)
    x = rng.uniform(-1, 1, n + 1).astype(np.float32)
    yb = buf(ctx, np.zeros(g, np.float32))
    prg.mvt(q, (g,), None, buf(ctx, At), buf(ctx, x), yb, np.int32(m), np.int32(n), np.int32(k)).wait()
    y = np.empty(g, np.float32)
    cl.enqueue_copy(q, y, yb)
    want = np.zeros(g, np.float32)
    for j in range(n):
        col = At[j * m + k:j * m + k + g]
        want = (want + ((col * x[j]).astype(np.float32) - x[j + 1]).astype(np.float32)).astype(np.float32)
    return y, want


@pytest.mark.parametrize("g, m, n, k", [(4096, 4096, 13, 0), (1000, 1003, 7, 1), (3001, 3002, 9, 1),
                                        (300, 301, 8, 0)] + [(100, 128, n, 3) for n in (0, 1, 2, 3, 4, 5, 7, 8)]
                         + [(700, 700, 300, 2)])
def test_cycle_packed_loop_gives_the_bits_of_the_unpacked_one(packed_pair, g, m, n, k):
    """A counted loop in a wave narrowed 8 times runs four passes at once, one per cycle
    (packing.py): for any trip count, odd and even shifts (the funnelled load; with m odd the
    shift's parity changes every pass and those groups run unpacked) and table reads that
    cross a block within a group (x[j + 1] at j = 127), the result is bit for bit the
    unpacked loop's, and numpy's fp32 sum in the same order."""
    ctx, q, progs = packed_pair
    y, want = run_mvt(ctx, q, progs[True], g, m, n, k)
    y0, _ = run_mvt(ctx, q, progs[False], g, m, n, k)
    np.testing.assert_array_equal(y, y0)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)


def test_cycle_packing_applies_to_the_narrowed_matvec_only():
    """The loop is packed in mode 1d-n8 (its fast copy: the checked copy stays as it was), with
    its staged load in four buffer sets, and not in a full wave."""
    from translator import compile_opencl
    from translator.backend import compile_kernel
    import emulator.machine
    mod = compile_opencl(PACKED, spmd=True)
    m2 = emulator.machine.load_machine("mncore2")
    asm = compile_kernel(mod, "mvt", m2, "1d-n8").asm
    # checked, the loop as it was (where the first group's passes disagree), a group's original
    # body (one per buffer set: four), rest
    assert asm.count(".loop %pq1 = 0, ") == 1 and asm.count(".loop %n0 = ") == 7
    assert "mvd/n512i241 " in asm and "wait i244" in asm        # group q + 3's MVs before group q's wait
    # the table's four entries of a group: one read of four (lpassa $lm<a>v), or, folded into the
    # ops that use them (cleanup.fold_table_reads), its four long words
    words = {int(a) for a in re.findall(r"\$lm(\d+)\b", asm)}
    assert re.search(r"lpassa \$lm\d+v ", asm) or any({a + 2, a + 4, a + 6} <= words for a in words)
    assert "%pq" not in compile_kernel(mod, "mvt", m2, "1d").asm


MULTI_LOAD = r"""
__kernel void two(__global const float *A, __global const float *B, __global float *y, int m, int n) {
  int i = get_global_id(0);
  float s = 0.0f;
  for (int j = 0; j < n; j++)
    s += A[j * m + i] * B[j * m + i];
  y[i] = s;
}
__kernel void three(__global const float *A, __global const float *B, __global const float *C,
                    __global float *y, int m, int n) {
  int i = get_global_id(0);
  float s = 0.0f;
  for (int j = 0; j < n; j++)
    s += A[j * m + i] * B[j * m + i] + C[j * m + i];
  y[i] = s;
}
"""


@pytest.mark.parametrize("n", [0, 5, 9, 13, 40])
def test_packed_loads_take_as_many_buffer_sets_as_the_prefetch_tags_allow(mncore2, n):
    """Each staged load (and an odd shift's second MV) takes one tag per buffer set from 241..248:
    two loads (four MVs) get two sets, three loads (six) none; either way the sums are numpy's,
    for loops of 0 to 9 groups (fewer groups than sets, too)."""
    from translator import compile_opencl
    from translator.backend import compile_kernel
    import emulator.machine
    mod = compile_opencl(MULTI_LOAD, spmd=True)
    m2 = emulator.machine.load_machine("mncore2")
    two, three = (compile_kernel(mod, k, m2, "1d-n8").asm for k in ("two", "three"))
    assert "wait i248" in two and "wait i249" not in two and "%pq1 % 2 == 0" in two
    assert "%pq1" in three and "wait i241" not in three          # packed, not prefetched
    ctx, q, _ = mncore2
    prg = cl.Program(ctx, MULTI_LOAD).build()
    g, m = 96, 100
    rng = np.random.default_rng(n)
    A, B, C = (rng.uniform(-1, 1, n * m + 1).astype(np.float32) for _ in range(3))
    for name, arrays in (("two", (A, B)), ("three", (A, B, C))):
        yb = buf(ctx, np.zeros(g, np.float32))
        getattr(prg, name)(q, (g,), None, *[buf(ctx, a) for a in arrays], yb, np.int32(m), np.int32(n)).wait()
        y = np.empty(g, np.float32)
        cl.enqueue_copy(q, y, yb)
        want = np.zeros(g, np.float32)
        for j in range(n):
            col = [a[j * m:j * m + g] for a in arrays]
            t = (col[0] * col[1]).astype(np.float32)
            want = (want + (t + col[2] if name == "three" else t).astype(np.float32)).astype(np.float32)
        np.testing.assert_array_equal(y, want)


def test_out_of_bounds_in_a_cycle_packed_loop_is_reported(packed_pair):
    """At too short for the last column: the checked copy of the loop runs and reports what the
    unpacked loop reports."""
    ctx, q, progs = packed_pair
    msgs = []
    for on in (True, False):
        with pytest.raises(cl.MemoryError, match=r"kernel 'mvt' accessed out of bounds at line 6: index 4008 of the "
                                                 r"buffer passed as argument 0 \('At'.*; 492 work-item") as e:
            run_mvt(ctx, q, progs[on], 500, 500, 9, 0, cols=8)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def test_a_kernel_whose_narrowed_form_does_not_compile_runs_in_the_full_wave(mncore2, monkeypatch):
    """The narrowed form is compiled on the first small launch; should that fail, the launch runs
    in the full wave the build already compiled (and the narrowed form is not tried again)."""
    import translator.backend
    from translator import CompileError
    ctx, q, _ = mncore2
    prg = cl.Program(ctx, SRC).build()
    real, tried = translator.backend.compile_kernel, []

    def no_narrow(module, kernel, machine, mode="1d"):
        if "-n" in mode:
            tried.append(mode)
            raise CompileError("narrowed form refused (test)")
        return real(module, kernel, machine, mode)
    monkeypatch.setattr(translator.backend, "compile_kernel", no_narrow)
    for n in (100, 300):
        x, y = np.arange(n, dtype=np.float32), np.ones(n, np.float32)
        yb = buf(ctx, y)
        prg.saxpy(q, (n,), None, buf(ctx, x), yb, np.float32(2), np.int32(n)).wait()
        out = np.empty_like(y)
        cl.enqueue_copy(q, out, yb)
        np.testing.assert_array_equal(out, 2 * x + 1)
    assert tried == ["1d-n8"]


PREFETCHED = r"""
__kernel void pf(__global const float *x, __global const float *z, __global float *y, int u) {
  int i = get_global_id(0);
  y[i] = y[i] + 2.0f * x[i] - z[i + 1] + z[i + u];
}
"""


@pytest.mark.parametrize("n", [1, 511, 512, 513, 1024, 1536, 2500])
def test_the_next_waves_read_only_loads_move_during_this_wave(env, n):
    """x[i], z[i + 1] (two long-word loads) and z[i + u] (read-only buffers) of wave w + 1 are
    issued during wave w, into the other of two sets of staging areas (prefetch.py), and so is
    y[i], which the kernel writes, but only at y[i] or loads only before it stores (from its
    launch-start snapshot, Memory.snapshot): with one more store elsewhere (a scatter) and a load
    after it, y waits for its own wave.  Results as numpy's for one wave, a partial one and up to
    five (tiny: 512 work-items a wave), odd and even wave counts."""
    ctx, q, _ = env
    asm = tiny_asm(PREFETCHED, "pf")
    assert asm.count("i253 ") == 5 and re.search(r"\.if %wx \+ 1 < %nwx", asm)
    scattering = PREFETCHED.replace("z[i + u];", "z[i + u];\n  if (i == 0) y[u] = 1.0f;")
    assert tiny_asm(scattering, "pf").count("i253 ") == 5          # (a snapshot)
    loading = PREFETCHED.replace("z[i + u];", "z[i + u];\n  if (i == 0) y[u] = y[u + 1] + 1.0f;")
    assert tiny_asm(loading, "pf").count("i253 ") == 4
    prg = cl.Program(ctx, PREFETCHED).build()
    rng = np.random.default_rng(n)
    u = 3
    x = rng.uniform(-1, 1, n).astype(np.float32)
    z = rng.uniform(-1, 1, n + u).astype(np.float32)
    y = rng.uniform(-1, 1, n).astype(np.float32)
    yb = buf(ctx, y)
    prg.pf(q, (n,), None, buf(ctx, x), buf(ctx, z), yb, np.int32(u)).wait()
    got = np.empty(n, np.float32)
    cl.enqueue_copy(q, got, yb)
    want = ((y + (np.float32(2) * x).astype(np.float32)).astype(np.float32) - z[1:n + 1]).astype(np.float32)
    np.testing.assert_array_equal(got, (want + z[u:n + u]).astype(np.float32))


JUMPING = r"""
__kernel void jump(__global const float *x, __global const double *d, __global float *o, __global double *od,
                   int n, int step) {
  int i = get_global_id(0);
  float a = 0.0f;
  double b = 0.0;
  for (int j = 0; j < n; j++) {
    a += x[j * step] * (float)(i + 1);       /* step > 64: every pass another block, the prefetch dropped */
    b += d[j * step + 1] * (double)(i & 3);
  }
  o[i] = a;
  od[i] = b;
}
"""


@pytest.mark.parametrize("n, step", [(300, 1), (64, 1), (65, 1), (40, 64), (40, 67), (30, 128), (50, 32)])
def test_tables_prefetch_the_next_block_and_survive_jumps(env, n, step):
    """A table fetch starts the MV of the block after it (uniform_table's %pf); an index that
    skips it waits for that MV and fetches its own block, in blocks of either parity."""
    ctx, q, _ = env
    prg = cl.Program(ctx, JUMPING).build()
    assert "%pf" in tiny_asm(JUMPING, "jump")
    rng = np.random.default_rng(n + step)
    m = 40
    x = rng.uniform(-1, 1, n * step + 1).astype(np.float32)
    d = rng.uniform(-1, 1, n * step + 2)
    ob, odb = buf(ctx, np.zeros(m, np.float32)), buf(ctx, np.zeros(m))
    prg.jump(q, (m,), None, buf(ctx, x), buf(ctx, d), ob, odb, np.int32(n), np.int32(step)).wait()
    o, od = np.empty(m, np.float32), np.empty(m)
    cl.enqueue_copy(q, o, ob)
    cl.enqueue_copy(q, od, odb)
    i = np.arange(m)
    a, b = np.zeros(m, np.float32), np.zeros(m)
    for j in range(n):
        a = (a + x[j * step] * (i + 1).astype(np.float32)).astype(np.float32)
        b = b + d[j * step + 1] * (i & 3)
    np.testing.assert_array_equal(o, a)
    np.testing.assert_array_equal(od, b)


BATCHED = r"""
#define S5(b, i0, c) b[i0 + c] = v + c; b[i0 + c + 1] = v * 3 - c; b[i0 + c + 2] = v ^ c; \
    b[i0 + c + 3] = c - v; b[i0 + c + 4] = v >> 1;
__kernel void batched(__global const int *a, __global int *out, __global uchar *by, __global short *sh,
                      __global int *wide, __global long *lg, int k, int j)
{
    int i = get_global_id(0);
    int v = a[i];
    S5(out, 7 * i, 0) S5(out, 7 * i, k)          /* k = 2: out[7i+2..4] twice, the later store wins */
    out[7 * i + 5] = out[7 * i + j] + 1;        /* j = 1: a load of the batch's buffer ends the batch */
    out[7 * i + 6] = v & 255;
    by[3 * i] = (uchar)v; by[3 * i + 1] = (uchar)(v >> 8); by[3 * i + 2] = (uchar)(v >> 16);
    sh[3 * i + 1] = (short)v; sh[3 * i] = (short)(v >> 4); sh[3 * i + 2] = (short)(v >> 12);
    lg[3 * i + 1] = (long)v * 77777; lg[3 * i] = -(long)v; lg[3 * i + 2] = ((long)v << 20) ^ 5;
    S5(wide, 45 * i, 0) S5(wide, 45 * i, 5) S5(wide, 45 * i, 10) S5(wide, 45 * i, 15) S5(wide, 45 * i, 20)
    S5(wide, 45 * i, 25) S5(wide, 45 * i, 30) S5(wide, 45 * i, 35) S5(wide, 45 * i, 40)
}
"""


def _batched_reference(a):
    """BATCHED in numpy (int32 arithmetic wraps as OpenCL's does)."""
    n = a.size
    v = a.astype(np.int64)

    def s5(rows, o):
        for j, x in enumerate((v + o, v * 3 - o, v ^ o, o - v, v >> 1)):
            rows[:, o + j] = x

    out = np.zeros((n, 7), np.int64)
    s5(out, 0)
    s5(out, 2)
    out[:, 5] = out[:, 1] + 1
    out[:, 6] = v & 255
    by = np.stack([v, v >> 8, v >> 16], axis=1) & 255
    sh = np.stack([v >> 4, v, v >> 12], axis=1) & 0xFFFF
    wide = np.zeros((n, 45), np.int64)
    for o in range(0, 45, 5):
        s5(wide, o)
    lg = np.stack([-v, v * 77777, (v << 20) ^ 5], axis=1).reshape(-1)
    as32 = lambda x: x.reshape(-1).astype(np.uint64).astype(np.uint32).view(np.int32)
    return (as32(out), by.reshape(-1).astype(np.uint8), sh.reshape(-1).astype(np.uint16).view(np.int16),
            as32(wide), lg)


@pytest.mark.parametrize("n", [1, 37, 300, 600, pytest.param(1100, marks=pytest.mark.slow)])
def test_batched_scatters(env, n):
    """Stores to one buffer at strided offsets, batched into one pass over its chunks: 32-bit,
    8- and 16-bit ones whose neighbours (other work-items, maybe other PEs) share a word, a word
    stored twice in one batch, a batch longer than SCATTER_BATCH, 64-bit ones, and partial waves."""
    ctx, q, _ = env
    prg = cl.Program(ctx, BATCHED).build()
    a = np.random.default_rng(n).integers(-2**31, 2**31 - 1, n).astype(np.int32)
    bufs = [np.full(7 * n, 5, np.int32), np.full(3 * n, 9, np.uint8), np.full(3 * n, 7, np.int16),
            np.full(45 * n, 3, np.int32), np.full(3 * n, -2, np.int64)]
    dev = [buf(ctx, x) for x in bufs]
    prg.batched(q, (n,), None, buf(ctx, a), *dev, np.int32(2), np.int32(1))
    for got, want, d in zip(bufs, _batched_reference(a), dev):
        cl.enqueue_copy(q, got, d)
        np.testing.assert_array_equal(got, want)


def test_batches_make_one_pass_per_batch():
    """One pass over a buffer's chunks (one mvr on tiny) per batch of stores: out 2 (the load ends
    the first), by 1, sh 1, wide 2 (45 stores, SCATTER_BATCH = 32 a pass); in both copies of the
    wave body (wave prefetch).  lg's longs, three fields at the global id, take no pass: they are
    contiguous shares of its split copy (splitcopy.py)."""
    from translator.backend.codegen import Codegen
    assert Codegen.SCATTER_BATCH == 32
    asm = tiny_asm(BATCHED, "batched")
    blocks = dict(re.findall(r"\.block (\w+)\n(.*?)\.endblock", asm, re.S))
    passes = [d for b, d in re.findall(r"\.call (\w+) d=(%b\d)", asm) if "mvriiadd" in blocks[b]]
    assert sorted(passes) == sorted(["%b1", "%b1", "%b2", "%b3", "%b4", "%b4"] * 2)


def test_batches_shrink_when_registers_run_out(monkeypatch):
    """A kernel whose batches of stores need more registers than the machine has is built again
    with batches of 4 (then 1): here the first build is made to fail as the allocator would."""
    import translator.backend as backend
    from translator.backend.regalloc import AllocError
    real, tried = backend._lower, []

    def lower(module, info, machine, lay, mode, batch, box, *rest):
        tried.append(batch)
        made = real(module, info, machine, lay, mode, batch, box, *rest)
        if batch > 4:
            raise AllocError("the kernel needs more than 620 live values at once (pretend)")
        return made
    monkeypatch.setattr(backend, "_lower", lower)
    asm = tiny_asm(BATCHED, "batched")
    assert tried == [32, 4]
    blocks = dict(re.findall(r"\.block (\w+)\n(.*?)\.endblock", asm, re.S))
    passes = [d for b, d in re.findall(r"\.call (\w+) d=(%b\d)", asm) if "mvriiadd" in blocks[b]]
    assert passes.count("%b4") == 2 * 12          # wide's 45 stores, 4 a pass, in both body copies


ONE_ELEMENT = """
__kernel void one_element(__global const int *a, __global int *flag, __global long *wide,
                          __global char *bytes, __global int *who, const int k)
{
    int i = get_global_id(0);
    if (a[i] > 0) {
        flag[1] = 7;                 /* many work-items store the same value */
        wide[k] = -5;                /* at an index the sequencer knows, 64-bit */
        bytes[2] = (char)9;          /* one byte of a word other work-items leave alone */
        who[0] = i;                  /* different values: one of them */
    }
}
"""


@pytest.mark.parametrize("n", [1, 8, 300, 1100])
def test_stores_to_one_element(env, n):
    """Stores from many work-items (in many PEs, over several waves) to one element leave one
    of the stored values, as on the CPU device, not the sum of their changes."""
    ctx, q, _ = env
    prg = cl.Program(ctx, ONE_ELEMENT).build()
    a = np.random.default_rng(n).integers(-3, 3, n).astype(np.int32)
    a[n // 2] = 1                                    # at least one work-item stores
    host = [np.full(4, 3, np.int32), np.full(4, 11, np.int64), np.full(8, 1, np.int8),
            np.full(2, -1, np.int32)]
    dev = [buf(ctx, x) for x in host]
    prg.one_element(q, (n,), None, buf(ctx, a), *dev, np.int32(2))
    for got, d in zip(host, dev):
        cl.enqueue_copy(q, got, d)
    flag, wide, bytes_, who = host
    np.testing.assert_array_equal(flag, [3, 7, 3, 3])
    np.testing.assert_array_equal(wide, [11, 11, -5, 11])
    np.testing.assert_array_equal(bytes_, [1, 1, 9, 1, 1, 1, 1, 1])
    assert who[1] == -1 and who[0] in np.flatnonzero(a > 0), who


RESIDENT = """
__kernel void bubble(__global int *data, const int n)      /* one work-item sorts: a task */
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j + 1 < n - i; j++) {
            int a = data[j], b = data[j + 1];
            if (a > b) { data[j] = b; data[j + 1] = a; }
        }
}
__kernel void hist(__global const int *keys, __global const int *table, __global int *out,
                   __global short *narrow, __global long *wide, const int m)
{
    int i = get_global_id(0), s = 0;
    for (int k = 0; k < m; k++)                  /* a read-only table gathered in a loop */
        s += table[(keys[i] + 3 * k) & 63];
    out[i] = s;
    for (int k = 0; k < m; k++) {                /* each work-item its own narrow and wide elements */
        narrow[(i * 7 + k) % 96] = (short)(k - i);
        wide[(i * 5 + k) % 40] = (long)s << 33;
    }
}
"""


def resident_modes(prg, ctx, kernel):
    return {m for k, m in prg._loaded[ctx.devices[0]].binaries if k == kernel and "-res" in m}


@pytest.mark.parametrize("n", [1, 9, 64])
def test_a_resident_buffer_is_sorted_in_place(env, n):
    """A one-work-item bubble sort keeps `data` in LM0 for the wave (-res) and agrees with numpy."""
    ctx, q, _ = env
    prg = cl.Program(ctx, RESIDENT).build()
    a = np.random.default_rng(n).integers(-1000, 1000, n).astype(np.int32)
    d = buf(ctx, a)
    prg.bubble(q, (1,), (1,), d, np.int32(n))
    got = np.empty_like(a)
    cl.enqueue_copy(q, got, d)
    np.testing.assert_array_equal(got, np.sort(a))
    assert resident_modes(prg, ctx, "bubble")


@pytest.mark.parametrize("n", [5, 300])
def test_resident_tables_and_scattered_stores_match_numpy(env, n):
    """Many work-items in one and several waves: a read-only table gathered in a loop, 16- and
    64-bit stores each work-item makes to elements no other work-item stores in the last pass."""
    ctx, q, _ = env
    prg = cl.Program(ctx, RESIDENT).build()
    rng = np.random.default_rng(n)
    keys, table = rng.integers(0, 1000, n).astype(np.int32), rng.integers(-50, 50, 64).astype(np.int32)
    m = 3
    out, narrow, wide = np.zeros(n, np.int32), np.full(96, 7, np.int16), np.full(40, 9, np.int64)
    dev = [buf(ctx, x) for x in (keys, table, out, narrow, wide)]
    prg.hist(q, (n,), None, *dev, np.int32(m))
    for host, d in zip((out, narrow, wide), dev[2:]):
        cl.enqueue_copy(q, host, d)
    i = np.arange(n)
    s = sum(table[(keys + 3 * k) & 63] for k in range(m))
    np.testing.assert_array_equal(out, s)
    want_n, want_w = np.full(96, 7, np.int16), np.full(40, 9, np.int64)
    for k in range(m):                              # last writer of each element, in (k, i) order
        want_n[(i * 7 + k) % 96] = (k - i).astype(np.int16)
        want_w[(i * 5 + k) % 40] = s.astype(np.int64) << 33
    if n == 5:                                      # (elements two work-items store are a race)
        np.testing.assert_array_equal(narrow, want_n)
        np.testing.assert_array_equal(wide, want_w)
    assert resident_modes(prg, ctx, "hist")


def test_aliased_or_too_big_buffers_are_not_resident(env):
    """The same buffer passed twice, or one bigger than LM0's copy, runs the build without
    resident copies, with the same results."""
    ctx, q, _ = env
    prg = cl.Program(ctx, RESIDENT).build("-D OWN_LOAD")     # its own loaded program: no -res run yet
    big = 1 << 13                                    # more long words than a resident copy holds
    a = np.random.default_rng(2).integers(-9, 9, big).astype(np.int32)
    d = buf(ctx, a)
    prg.bubble(q, (1,), (1,), d, np.int32(12))
    got = np.empty_like(a)
    cl.enqueue_copy(q, got, d)
    np.testing.assert_array_equal(got[:12], np.sort(a[:12]))
    np.testing.assert_array_equal(got[12:], a[12:])
    assert not resident_modes(prg, ctx, "bubble")
    keys = np.arange(64, dtype=np.int32)[::-1].copy()
    t = buf(ctx, keys)
    out, narrow, wide = (buf(ctx, x) for x in (np.zeros(8, np.int32), np.zeros(96, np.int16), np.zeros(40, np.int64)))
    prg.hist(q, (8,), None, t, t, out, narrow, wide, np.int32(2))      # keys are the table too
    got = np.empty(8, np.int32)
    cl.enqueue_copy(q, got, out)
    np.testing.assert_array_equal(got, keys[keys[:8]] + keys[(keys[:8] + 3) & 63])
    assert not resident_modes(prg, ctx, "hist")


MASKED = r"""
__kernel void mvt(__global const float *At, __global const float *x, __global float *y, int m, int n, int k) {
  int i = get_global_id(0);
  float s = 0.0f;
  for (int j = 0; j < n; j++) {
    float a = At[j * m + i + k];
    s += rsqrt(fabs(a) + x[j]) * (a > 0.25f ? a : -0.5f * a);
  }
  y[i] = s;
}
"""


@pytest.mark.parametrize("g, m, n, k", [(1000, 1003, 7, 1), (300, 300, 64, 0), (100, 128, 5, 3)])
def test_a_loop_with_masks_made_in_the_pass_is_packed_bit_for_bit(mncore2, g, m, n, k):
    """rsqrt's special cases and a select are writes under masks the pass makes: masks are per
    cycle, so such ops are lane-wise and the loop packs (it did not: nbody's force loop), giving
    the unpacked loop's bits."""
    import translator.backend.packing as packing
    ctx, q, _ = mncore2
    ys = {}
    for on in (True, False):
        prg = cl.Program(ctx, MASKED + ("" if on else "/* unpacked */\n")).build()
        packing.ENABLED = on
        try:
            rng = np.random.default_rng(g + n)
            At = rng.uniform(-1, 1, n * m + k + 8).astype(np.float32)
            x = rng.uniform(1, 2, n + 1).astype(np.float32)
            yb = buf(ctx, np.zeros(g, np.float32))
            prg.mvt(q, (g,), None, buf(ctx, At), buf(ctx, x), yb, np.int32(m), np.int32(n), np.int32(k)).wait()
        finally:
            packing.ENABLED = True
        ys[on] = np.empty(g, np.float32)
        cl.enqueue_copy(q, ys[on], yb)
        asm = prg._loaded[ctx.devices[0]].kernels[("mvt", "1d-n8")].asm
        assert ("%pq1" in asm) == on
    np.testing.assert_array_equal(ys[True], ys[False])
    a = At[:n * m].reshape(n, m)[:, k:k + g] if n else np.zeros((0, g), np.float32)
    want = (1 / np.sqrt(np.abs(a) + x[:n, None]) * np.where(a > 0.25, a, -0.5 * a)).sum(axis=0)
    np.testing.assert_allclose(ys[True], want, rtol=1e-4, atol=1e-4)



def test_a_mask_the_carried_part_reads_is_made_there():
    """mvt's `x1[i] += A[i*n + j] * y1[j]` carries its sum under a mask made from the pass's values
    (the sum's NaN tracking): a compare making a mask is lane-wise, but the carried part runs once
    per pass and cannot pick a cycle of a mask, so that compare stays in the carried part and the
    loop still packs (mvt fell from 47,744 to 91,228 cycles when it did not)."""
    from translator import compile_opencl
    from translator.backend import compile_kernel
    import emulator.machine
    from pathlib import Path
    src = (Path(__file__).resolve().parents[1] / "benchmarks" / "real_kernels" / "mvt.cl").read_text()
    mod = compile_opencl(src, spmd=True)
    m2 = emulator.machine.load_machine("mncore2")
    for k in ("mvt_rows", "mvt_cols"):
        assert ".loop %pq1 = 0, " in compile_kernel(mod, k, m2, "1d-n8-noalias").asm, k
