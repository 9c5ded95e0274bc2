"""The OpenCL C front end (translator/): API, build options, and kernels run through the
test-only JIT harness (tests/frontend_harness.py) against numpy, and against PoCL where
pyopencl finds a platform."""
from __future__ import annotations


import numpy as np
import pytest

import translator
from translator import CompileError, compile_opencl
from frontend_harness import Local, build

RNG = np.random.default_rng(1234)


# ---------------------------------------------------------------------------- API
def test_api_surface():
    assert isinstance(translator.__version__, str) and translator.__version__
    m = compile_opencl("__kernel void k(__global float *a, const int n, __local int *t) { a[0] = n; }")
    assert "define void @k__wg" in m.llvm_ir.replace('"', "")
    k = m.kernels["k"]
    assert k.wg_function == "k__wg"
    assert [p.kind for p in k.params] == ["global", "scalar", "local"]
    assert [p.dtype for p in k.params] == ["float32", "int32", "int32"]
    assert [p.size for p in k.params] == [4, 4, 4]
    assert k.uses_barrier is False and k.local_mem_bytes == 0


def test_param_info_kinds():
    src = """
    typedef struct { float x; int id; double w; } rec;
    __kernel void k(__global const float4 *a, __constant uint *c, __global rec *r,
                    float s, ulong u, int2 v, __global half *h) { }
    """
    k = compile_opencl(src).kernels["k"]
    p = {q.name: q for q in k.params}
    assert (p["a"].kind, p["a"].type_name, p["a"].dtype, p["a"].size, p["a"].is_const) == ("global", "float4", "float32", 16, True)
    assert (p["c"].kind, p["c"].dtype, p["c"].is_const) == ("constant", "uint32", True)
    assert p["r"].size == 16 and "x" in p["r"].dtype and "f8" in p["r"].dtype
    np.dtype(eval(p["r"].dtype))          # a numpy dtype description
    assert (p["s"].kind, p["s"].dtype, p["s"].size) == ("scalar", "float32", 4)
    assert (p["u"].dtype, p["v"].dtype, p["v"].size) == ("uint64", "int32", 8)
    assert p["h"].dtype == "float16"


def test_barrier_and_local_info():
    src = """
    __kernel void k(__global float *a) {
        __local float t[64];
        __local int u[8];
        t[get_local_id(0)] = a[get_global_id(0)];
        barrier(CLK_LOCAL_MEM_FENCE);
        a[get_global_id(0)] = t[63 - get_local_id(0)] + u[0] * 0;
    }
    __kernel void __attribute__((reqd_work_group_size(64, 1, 1))) j(__global float *a) { a[0] = 1; }
    """
    m = compile_opencl(src)
    assert m.kernels["k"].uses_barrier and m.kernels["k"].local_mem_bytes == 64 * 4 + 8 * 4
    assert m.kernels["j"].reqd_work_group_size == (64, 1, 1)
    assert not m.kernels["j"].uses_barrier


def test_only_compile_error_escapes():
    for bad in [None, 42, "}", "@@", "\x00", "int", "__kernel void k() { int x = 1 / 0; }", "#if\n#endif"]:
        try:
            compile_opencl(bad)
        except CompileError:
            pass
    assert compile_opencl("").kernels == {}


# ---------------------------------------------------------------------------- options
def test_options_defines_and_include(tmp_path):
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "scale.h").write_text("#define SCALE(x) ((x) * FACTOR)\n")
    (tmp_path / "local.h").write_text("#define BIAS 3\n")
    kfile = tmp_path / "k.cl"
    src = '#include "local.h"\n#include <scale.h>\n__kernel void k(__global int *a) { a[get_global_id(0)] = SCALE(a[get_global_id(0)]) + BIAS + EXTRA; }\n'
    p = build(src, filename=str(kfile), options=f"-D FACTOR=5 -DEXTRA -I {tmp_path / 'inc'} -cl-mad-enable -cl-std=CL1.2")
    a = np.arange(8, dtype=np.int32)
    p.run("k", 8, 8, a)
    np.testing.assert_array_equal(a, np.arange(8) * 5 + 3 + 1)
    assert "-cl-mad-enable" in p.cm.options and "-cl-std=CL1.2" in p.cm.options
    # list form
    m = compile_opencl("__kernel void k(__global int *a) { a[0] = N; }", options=["-D", "N=3", "-O3"])
    assert "-O3" in m.options


def test_unknown_option_is_a_diagnostic():
    with pytest.raises(CompileError) as ei:
        compile_opencl("__kernel void k() {}", options="-O2 -fancy-flag")
    assert "unknown build option '-fancy-flag'" in ei.value.log


def test_unhonoured_option_warns():
    m = compile_opencl("__kernel void k(__global float *a) { a[0] = 1; }", options="-cl-denorms-are-zero")
    assert "warning" in m.log and "-cl-denorms-are-zero" in m.log
    m = compile_opencl("__kernel void k(__global float *a) { a[0] = 1; }", options="-cl-denorms-are-zero -w")
    assert m.log == ""


@pytest.mark.parametrize("level", [0, 1, 2, 3])
def test_opt_levels(level):
    src = "__kernel void k(__global float *a) { int i = get_global_id(0); a[i] = a[i] * 2 + 1; }"
    p = build(src, opt_level=level)
    a = np.arange(16, dtype=np.float32)
    p.run("k", 16, 4, a)
    np.testing.assert_array_equal(a, np.arange(16) * 2 + 1)


def test_warning_directive_goes_to_log():
    m = compile_opencl("#warning check me\n__kernel void k(__global float *a) { a[0] = 1; }", filename="w.cl")
    assert "w.cl:1:1: warning: #warning check me" in m.log


# ---------------------------------------------------------------------------- kernels
@pytest.mark.parametrize("ctype,dtype", [("float", np.float32), ("double", np.float64), ("int", np.int32),
                                         ("uint", np.uint32), ("long", np.int64), ("short", np.int16),
                                         ("uchar", np.uint8)])
def test_elementwise_types(ctype, dtype):
    src = f"""
    __kernel void ew(__global const {ctype} *a, __global const {ctype} *b, __global {ctype} *c, {ctype} s) {{
        size_t i = get_global_id(0);
        c[i] = a[i] * s + b[i] - ({ctype})3;
    }}"""
    p = build(src)
    n = 64
    a = (RNG.random(n) * 10).astype(dtype)
    b = (RNG.random(n) * 10).astype(dtype)
    c = np.zeros(n, dtype)
    p.run("ew", n, 16, a, b, c, dtype(2))
    exp = (a * dtype(2) + b - dtype(3)).astype(dtype)
    if np.dtype(dtype).kind == "f":
        np.testing.assert_allclose(c, exp, rtol=1e-6)
    else:
        np.testing.assert_array_equal(c, exp)


def test_vectors_and_swizzles():
    src = """
    __kernel void v(__global const float4 *a, __global float4 *o, __global float2 *o2) {
        int i = get_global_id(0);
        float4 x = a[i];
        float4 y = x.wzyx * (float4)(1.0f, 2.0f, 3.0f, 4.0f) + 0.5f;
        y.xy = y.yx;
        y.s3 = x.lo.y + x.hi.x;
        float2 e = x.even + x.odd;
        o[i] = y;
        o2[i] = (float2)(e.x, dot(x, x)) + (float2)(length(x.xy));
    }"""
    p = build(src)
    a = RNG.random((32, 4)).astype(np.float32)
    o = np.zeros((32, 4), np.float32)
    o2 = np.zeros((32, 2), np.float32)
    p.run("v", 32, 8, a, o, o2)
    y = a[:, ::-1] * np.array([1, 2, 3, 4], np.float32) + 0.5
    y[:, [0, 1]] = y[:, [1, 0]]
    y[:, 3] = a[:, 1] + a[:, 2]
    np.testing.assert_allclose(o, y, rtol=1e-6)
    ln = np.sqrt(a[:, 0] ** 2 + a[:, 1] ** 2)
    np.testing.assert_allclose(o2[:, 0], a[:, 0] + a[:, 1] + ln, rtol=1e-5)
    np.testing.assert_allclose(o2[:, 1], (a * a).sum(1) + ln, rtol=1e-5)


def test_reduction_local_barrier():
    src = """
    __kernel void reduce(__global const float *in, __global float *out, __local float *tmp) {
        int lid = get_local_id(0);
        tmp[lid] = in[get_global_id(0)];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int s = get_local_size(0) / 2; s > 0; s >>= 1) {
            if (lid < s)
                tmp[lid] += tmp[lid + s];
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        if (lid == 0)
            out[get_group_id(0)] = tmp[0];
    }"""
    p = build(src)
    assert p.cm.kernels["reduce"].uses_barrier
    x = RNG.random(1024).astype(np.float32)
    o = np.zeros(8, np.float32)
    p.run("reduce", 1024, 128, x, o, Local(128 * 4))
    np.testing.assert_allclose(o, x.reshape(8, 128).sum(1), rtol=1e-5)


def test_private_values_live_across_barriers_and_uniform_loops():
    src = """
    __kernel void k(__global const int *in, __global int *out, int rounds) {
        __local int buf[64];
        int lid = get_local_id(0), n = get_local_size(0);
        int v = in[get_global_id(0)];
        int acc = 0;
        for (int r = 0; r < rounds; r++) {
            buf[lid] = v;
            barrier(CLK_LOCAL_MEM_FENCE);
            v = buf[(lid + 1) % n];
            acc += v;
            if (r == 1) {
                barrier(CLK_LOCAL_MEM_FENCE);
                continue;
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        out[get_global_id(0)] = acc * 1000 + v;
    }"""
    p = build(src)
    x = RNG.integers(0, 100, 128).astype(np.int32)
    o = np.zeros(128, np.int32)
    p.run("k", 128, 64, x, o, np.int32(5))
    v = x.reshape(2, 64).copy()
    acc = np.zeros_like(v)
    for _ in range(5):
        v = np.roll(v, -1, axis=1)
        acc += v
    np.testing.assert_array_equal(o, (acc * 1000 + v).reshape(-1))


def test_early_return_with_barrier():
    src = """
    __kernel void k(__global int *a, int n) {
        __local int t[32];
        int l = get_local_id(0);
        t[l] = l;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (get_global_id(0) >= n) return;
        a[get_global_id(0)] = t[31 - l];
    }"""
    p = build(src)
    a = np.full(64, -1, np.int32)
    p.run("k", 64, 32, a, np.int32(40))
    exp = np.tile(31 - np.arange(32), 2)
    exp[40:] = -1
    np.testing.assert_array_equal(a, exp)


def test_stencil_2d():
    src = """
    #define AT(img, x, y) img[(y) * w + (x)]
    __kernel void blur(__global const float *in, __global float *out, int w, int h) {
        int x = get_global_id(0), y = get_global_id(1);
        if (x == 0 || y == 0 || x >= w - 1 || y >= h - 1) { AT(out, x, y) = AT(in, x, y); return; }
        float s = 0.0f;
        for (int dy = -1; dy <= 1; ++dy)
            for (int dx = -1; dx <= 1; ++dx)
                s += AT(in, x + dx, y + dy);
        AT(out, x, y) = s / 9.0f;
    }"""
    p = build(src)
    w, h = 32, 16
    img = RNG.random((h, w)).astype(np.float32)
    out = np.zeros_like(img)
    p.run("blur", (w, h), (8, 4), img, out, np.int32(w), np.int32(h))
    exp = img.copy()
    acc = sum(img[1 + dy:h - 1 + dy, 1 + dx:w - 1 + dx] for dy in (-1, 0, 1) for dx in (-1, 0, 1))
    exp[1:-1, 1:-1] = acc / 9.0
    np.testing.assert_allclose(out, exp, rtol=1e-5)


def test_matvec_with_helper():
    src = """
    static inline float dot_row(__global const float *row, __global const float *x, int n) {
        float s = 0.0f;
        for (int j = 0; j < n; j++) s = mad(row[j], x[j], s);
        return s;
    }
    __kernel void matvec(__global const float *A, __global const float *x, __global float *y, int n) {
        int i = get_global_id(0);
        y[i] = dot_row(A + i * n, x, n);
    }"""
    p = build(src)
    n = 48
    A = RNG.random((n, n)).astype(np.float32)
    x = RNG.random(n).astype(np.float32)
    y = np.zeros(n, np.float32)
    p.run("matvec", n, 16, A, x, y, np.int32(n))
    np.testing.assert_allclose(y, A @ x, rtol=1e-5)
    assert "@mncl.dot_row" not in p.cm.llvm_ir.replace('"', "")      # inlined and removed


def test_divergent_branches_and_data_dependent_loops():
    src = """
    __kernel void collatz(__global const uint *in, __global uint *steps, __global int *kind) {
        int i = get_global_id(0);
        uint v = in[i], n = 0;
        while (v != 1u) { v = (v & 1u) ? 3u * v + 1u : v >> 1; n++; }
        steps[i] = n;
        switch (n % 4) {
            case 0: kind[i] = 10; break;
            case 1:
            case 2: kind[i] = 20; break;
            default: kind[i] = -1;
        }
        do { kind[i] += 1; } while (kind[i] < 0);
    }"""
    p = build(src)
    x = RNG.integers(1, 1000, 64).astype(np.uint32)
    steps = np.zeros(64, np.uint32)
    kind = np.zeros(64, np.int32)
    p.run("collatz", 64, 16, x, steps, kind)

    def collatz(v):
        n = 0
        while v != 1:
            v = 3 * v + 1 if v & 1 else v >> 1
            n += 1
        return n
    exp = np.array([collatz(int(v)) for v in x])
    np.testing.assert_array_equal(steps, exp)
    k = np.where(exp % 4 == 0, 11, np.where(exp % 4 == 3, 0, 21))
    np.testing.assert_array_equal(kind, k)


def test_conversions_saturation_rounding():
    src = """
    __kernel void cv(__global const float *f, __global int *r, __global uchar *u, __global char *c,
                     __global short *s, __global const int *iv, __global uchar *iu) {
        int i = get_global_id(0);
        float x = f[i];
        r[4*i+0] = convert_int_rte(x);
        r[4*i+1] = convert_int_rtz(x);
        r[4*i+2] = convert_int_rtp(x);
        r[4*i+3] = convert_int_rtn(x);
        u[i] = convert_uchar_sat(x);
        c[i] = convert_char_sat_rte(x);
        s[i] = convert_short_sat(iv[i]);
        iu[i] = convert_uchar_sat(iv[i]);
    }"""
    p = build(src)
    f = np.array([-300.7, -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.49, 127.6, 255.4, 300.0, np.nan, 1e10, -1e10, 3.7, -3.7],
                 np.float32)
    iv = np.array([-70000, -129, -1, 0, 1, 127, 128, 255, 256, 40000, 32767, -32768, 5, 6, 7, 8], np.int32)
    n = len(f)
    r = np.zeros(4 * n, np.int32)
    u, c, s, iu = np.zeros(n, np.uint8), np.zeros(n, np.int8), np.zeros(n, np.int16), np.zeros(n, np.uint8)
    p.run("cv", n, 1, f, r, u, c, s, iv, iu)
    fin = np.isfinite(f) & (np.abs(f) < 2 ** 31)
    r = r.reshape(n, 4)
    np.testing.assert_array_equal(r[fin, 0], np.rint(f[fin]))
    np.testing.assert_array_equal(r[fin, 1], np.trunc(f[fin]))
    np.testing.assert_array_equal(r[fin, 2], np.ceil(f[fin]))
    np.testing.assert_array_equal(r[fin, 3], np.floor(f[fin]))
    exp_u = np.where(np.isnan(f), 0, np.clip(np.trunc(np.nan_to_num(f)), 0, 255))
    np.testing.assert_array_equal(u, exp_u)
    exp_c = np.where(np.isnan(f), 0, np.clip(np.rint(np.nan_to_num(f)), -128, 127))
    np.testing.assert_array_equal(c, exp_c)
    np.testing.assert_array_equal(s, np.clip(iv, -32768, 32767))
    np.testing.assert_array_equal(iu, np.clip(iv, 0, 255))


def test_integer_semantics():
    src = """
    __kernel void k(__global const int *a, __global const int *b, __global int *o, __global uint *u) {
        int i = get_global_id(0);
        int x = a[i], y = b[i];
        o[6*i+0] = x / y;
        o[6*i+1] = x % y;
        o[6*i+2] = x << (y & 7);
        o[6*i+3] = x >> 33;             /* OpenCL: shift count is taken modulo 32 */
        o[6*i+4] = (char)x + (uchar)y;  /* integer promotions */
        o[6*i+5] = x < 0u;              /* usual arithmetic conversions: x becomes unsigned */
        u[i] = (uint)x * 3u + (y > 0 ? 1u : 2u);
    }"""
    p = build(src)
    a = RNG.integers(-1000, 1000, 32).astype(np.int32)
    b = RNG.integers(1, 50, 32).astype(np.int32) * RNG.choice([-1, 1], 32).astype(np.int32)
    o = np.zeros(6 * 32, np.int32)
    u = np.zeros(32, np.uint32)
    p.run("k", 32, 8, a, b, o, u)
    o = o.reshape(32, 6)
    q = np.trunc(a / b).astype(np.int32)
    np.testing.assert_array_equal(o[:, 0], q)
    np.testing.assert_array_equal(o[:, 1], a - q * b)
    np.testing.assert_array_equal(o[:, 2], a << (b & 7))
    np.testing.assert_array_equal(o[:, 3], a >> 1)
    np.testing.assert_array_equal(o[:, 4], a.astype(np.int8).astype(np.int32) + b.astype(np.uint8).astype(np.int32))
    np.testing.assert_array_equal(o[:, 5], np.zeros(32))
    np.testing.assert_array_equal(u, (a.astype(np.uint32) * 3 + np.where(b > 0, 1, 2)).astype(np.uint32))


@pytest.mark.parametrize("ctype, dtype", [("uchar", np.uint8), ("char", np.int8),
                                          ("ushort", np.uint16), ("short", np.int16)])
def test_narrow_integer_builtins_keep_their_type(ctype, dtype):
    """Builtin overloads are chosen by the arguments' own type, without C's integer promotion:
    sub_sat(ushort, ushort) saturates at 0 and 65535 (it gave int's saturation), mul_hi takes the
    upper half of the ushort product (it gave 0), rotate turns within 16 bits."""
    src = f"""
    __kernel void k(__global const {ctype} *a, __global const {ctype} *b, __global long *o) {{
        int i = get_global_id(0);
        {ctype} x = a[i], y = b[i];
        o[5*i+0] = add_sat(x, y);
        o[5*i+1] = sub_sat(x, y);
        o[5*i+2] = mul_hi(x, y);
        o[5*i+3] = rotate(x, y);
        o[5*i+4] = hadd(x, y);
    }}"""
    info = np.iinfo(dtype)
    a = RNG.integers(info.min, info.max, 64, dtype=dtype, endpoint=True)
    b = RNG.integers(info.min, info.max, 64, dtype=dtype, endpoint=True)
    a[:4], b[:4] = [info.max, info.min, info.max, 0], [info.max, info.max, info.min, 0]
    o = np.zeros(5 * 64, np.int64)
    build(src).run("k", 64, 8, a, b, o)
    o = o.reshape(64, 5)
    x, y = a.astype(np.int64), b.astype(np.int64)
    bits = info.bits
    r = (y % bits)
    turned = ((x & (2**bits - 1)) << r | (x & (2**bits - 1)) >> (bits - r)) & (2**bits - 1)
    np.testing.assert_array_equal(o[:, 0], np.clip(x + y, info.min, info.max))
    np.testing.assert_array_equal(o[:, 1], np.clip(x - y, info.min, info.max))
    np.testing.assert_array_equal(o[:, 2], (x * y) >> bits)
    np.testing.assert_array_equal(o[:, 3], turned.astype(np.uint64).astype(dtype).astype(np.int64))
    np.testing.assert_array_equal(o[:, 4], (x + y) >> 1)


def test_division_by_zero_does_not_trap():
    p = build("__kernel void k(__global int *a) { a[0] = a[1] / a[2]; a[3] = a[1] % a[2]; a[4] = (-2147483647 - 1) / a[5]; }")
    a = np.array([0, 7, 0, 0, 0, -1], np.int32)
    p.run("k", 1, 1, a)                  # unspecified values, but no SIGFPE


def test_math_builtins():
    src = """
    __kernel void m(__global const float *x, __global float *o) {
        int i = get_global_id(0);
        float v = x[i];
        o[12*i+0] = sqrt(v);    o[12*i+1] = exp(v);       o[12*i+2] = log(v);
        o[12*i+3] = sin(v);     o[12*i+4] = tan(v);       o[12*i+5] = atan2(v, 2.0f);
        o[12*i+6] = pow(v, 1.5f); o[12*i+7] = fma(v, v, 1.0f); o[12*i+8] = rsqrt(v);
        o[12*i+9] = clamp(v, 0.5f, 1.5f); o[12*i+10] = cbrt(v); o[12*i+11] = hypot(v, 3.0f);
    }"""
    p = build(src)
    x = (RNG.random(64) * 2 + 0.1).astype(np.float32)
    o = np.zeros(12 * 64, np.float32)
    p.run("m", 64, 16, x, o)
    o = o.reshape(64, 12)
    x64 = x.astype(np.float64)
    exp = [np.sqrt(x64), np.exp(x64), np.log(x64), np.sin(x64), np.tan(x64), np.arctan2(x64, 2.0),
           x64 ** 1.5, x64 * x64 + 1, 1 / np.sqrt(x64), np.clip(x64, 0.5, 1.5), np.cbrt(x64), np.hypot(x64, 3.0)]
    for k, e in enumerate(exp):
        np.testing.assert_allclose(o[:, k], e, rtol=4e-7 * 4, err_msg=f"column {k}")


def test_structs_and_pointers():
    src = """
    typedef struct { float3 pos; float mass; int id; } particle;
    struct pair { int a, b; };
    __kernel void step(__global particle *p, __global struct pair *q, float dt) {
        int i = get_global_id(0);
        __global particle *me = p + i;
        me->pos += (float3)(dt, 2.0f * dt, me->mass);
        me->id = me->id * 2 + (int)(&p[i] - p);
        struct pair t = q[i];
        int tmp = t.a; t.a = t.b; t.b = tmp;
        q[i] = t;
    }"""
    p = build(src)
    info = p.cm.kernels["step"].params[0]
    dt = np.dtype(eval(info.dtype))
    assert dt.itemsize == info.size == 32
    n = 8
    arr = np.zeros(n, dt)
    arr["mass"] = np.arange(n)
    arr["id"] = np.arange(n)
    q = np.arange(2 * n, dtype=np.int32)
    p.run("step", n, 4, arr, q, np.float32(0.5))
    np.testing.assert_allclose(arr["pos"][:, 0], 0.5)
    np.testing.assert_allclose(arr["pos"][:, 1], 1.0)
    np.testing.assert_allclose(arr["pos"][:, 2], np.arange(n))
    np.testing.assert_array_equal(arr["id"], np.arange(n) * 3)
    np.testing.assert_array_equal(q.reshape(n, 2), np.arange(2 * n).reshape(n, 2)[:, ::-1])


def test_vload_vstore_and_as_type():
    src = """
    __kernel void k(__global const float *a, __global float *b, __global uint *bits) {
        int i = get_global_id(0);
        float4 v = vload4(i, a);
        float3 w = vload3(i, a + 100);
        vstore4(v * 2.0f, i, b);
        vstore3(w, i, b + 100);
        bits[i] = as_uint(a[i]);
    }"""
    p = build(src)
    a = RNG.random(200).astype(np.float32)
    b = np.zeros(200, np.float32)
    bits = np.zeros(8, np.uint32)
    p.run("k", 8, 4, a, b, bits)
    np.testing.assert_allclose(b[:32], a[:32] * 2)
    np.testing.assert_allclose(b[100:124], a[100:124])
    np.testing.assert_array_equal(bits, a[:8].view(np.uint32))


def test_atomics_across_groups():
    src = """
    __kernel void hist(__global const uint *x, __global int *h) {
        atomic_inc(&h[x[get_global_id(0)] % 8]);
        atomic_add(&h[8], 2);
        atomic_max(&h[9], (int)x[get_global_id(0)]);
    }"""
    p = build(src)
    x = RNG.integers(0, 1000, 256).astype(np.uint32)
    h = np.zeros(10, np.int32)
    p.run("hist", 256, 32, x, h)
    np.testing.assert_array_equal(h[:8], np.bincount(x % 8, minlength=8))
    assert h[8] == 512 and h[9] == x.max()


def test_constant_tables_and_3d_ndrange():
    src = """
    __constant int weights[4] = {1, 2, 3, 4};
    __kernel void k(__global int *o) {
        size_t x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
        size_t w = get_global_size(0), h = get_global_size(1);
        o[(z * h + y) * w + x] = weights[x % 4] + 10 * (int)y + 100 * (int)z + 1000 * (int)get_work_dim()
                                 + 0 * (int)get_local_linear_id();
    }"""
    p = build(src)
    o = np.zeros((3, 4, 8), np.int32)
    p.run("k", (8, 4, 3), (4, 2, 1), o)
    z, y, x = np.meshgrid(np.arange(3), np.arange(4), np.arange(8), indexing="ij")
    np.testing.assert_array_equal(o, np.array([1, 2, 3, 4])[x % 4] + 10 * y + 100 * z + 3000)


def test_global_offset():
    p = build("__kernel void k(__global int *o) { o[get_global_id(0) - get_global_offset(0)] = get_global_id(0); }")
    o = np.zeros(16, np.int32)
    p.run("k", 16, 4, o, offset=(100,))
    np.testing.assert_array_equal(o, np.arange(100, 116))


def test_true_and_false_are_bool_keywords():
    """OpenCL C 1.2 (s6.1.1) has bool, true and false: Rodinia's bfs/hotspot/pathfinder write
    `mask[tid] = false;` and `bool done = true;`."""
    src = """
    enum { ONE = true };
    __kernel void k(__global char *mask, __global int *o) {
        int i = get_global_id(0);
        bool stop = false;
        int a[true + 1];
        a[0] = 5; a[1] = 6;
        while (!stop) { if (a[0] > 2) stop = true; a[0]--; }
        switch (i & 1) { case true: o[i] = 100; break; case false: o[i] = 200; break; }
        o[i] += (int)sizeof(true) * 10 + ONE + a[0] + (true == 1) + (false == 0);
        mask[i] = (i % 3 == 0) ? true : false;
    }"""
    p = build(src)
    mask, o = np.full(8, 9, np.int8), np.zeros(8, np.int32)
    p.run("k", 8, 4, mask, o)
    i = np.arange(8)
    np.testing.assert_array_equal(mask, i % 3 == 0)
    np.testing.assert_array_equal(o, np.where(i & 1, 100, 200) + 10 + 1 + 4 + 2)
    for bad, msg in [("__kernel void k(__global int *o) { int false = 0; o[0] = false; }", "'false' is a keyword"),
                     ("__kernel void k(__global int *o) { true = 0; }", "not assignable")]:
        with pytest.raises(CompileError, match=msg):
            compile_opencl(bad)


# ---------------------------------------------------------------------------- a tiled matmul
def test_tiled_matmul_compiles_and_runs():
    """(How long compiling takes is benchmarks/compiled_kernels.py's to measure, not a test's.)"""
    kernel = """
    __kernel void mm(__global const float *A, __global const float *B, __global float *C, int n) {
        __local float As[16][16];
        __local float Bs[16][16];
        int tx = get_local_id(0), ty = get_local_id(1);
        int row = get_global_id(1), col = get_global_id(0);
        float acc = 0.0f;
        for (int t = 0; t < n / 16; t++) {
            As[ty][tx] = A[row * n + t * 16 + tx];
            Bs[ty][tx] = B[(t * 16 + ty) * n + col];
            barrier(CLK_LOCAL_MEM_FENCE);
            for (int k = 0; k < 16; k++) acc += As[ty][k] * Bs[k][tx];
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        C[row * n + col] = acc;
    }"""
    p = build(kernel)
    n = 32
    A = RNG.random((n, n)).astype(np.float32)
    B = RNG.random((n, n)).astype(np.float32)
    C = np.zeros((n, n), np.float32)
    p.run("mm", (n, n), (16, 16), A, B, C, np.int32(n))
    np.testing.assert_allclose(C, A @ B, rtol=1e-4)


# ---------------------------------------------------------------------------- PoCL
def _pocl():
    try:
        import pyopencl as cl
        for plat in cl.get_platforms():
            devs = plat.get_devices()
            if devs and "Portable Computing Language" in plat.name:
                return cl, cl.Context([devs[0]])
    except Exception:
        pass
    return None, None


POCL_KERNELS = [
    ("saxpy", """
    __kernel void saxpy(__global const float *x, __global float *y, float a) {
        int i = get_global_id(0);
        y[i] = a * x[i] + y[i];
    }""", lambda rng: [rng.random(256).astype(np.float32), rng.random(256).astype(np.float32), np.float32(1.5)], [1]),
    ("vecops", """
    __kernel void vecops(__global const int4 *a, __global int4 *o) {
        int i = get_global_id(0);
        int4 v = a[i];
        int4 m = v > (int4)(50);
        o[i] = select(v.wzyx, v * 2, m) + convert_int4(convert_float4(v) * 0.5f) + (v.s0123 >> 1);
    }""", lambda rng: [rng.integers(0, 100, (64, 4)).astype(np.int32), np.zeros((64, 4), np.int32)], [1]),
    ("scan", """
    __kernel void scan(__global const int *in, __global int *out, __local int *t) {
        int l = get_local_id(0), n = get_local_size(0);
        t[l] = in[get_global_id(0)];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int off = 1; off < n; off <<= 1) {
            int v = l >= off ? t[l - off] : 0;
            barrier(CLK_LOCAL_MEM_FENCE);
            t[l] += v;
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        out[get_global_id(0)] = t[l];
    }""", lambda rng: [rng.integers(0, 10, 256).astype(np.int32), np.zeros(256, np.int32), "local"], [1]),
]


@pytest.mark.parametrize("name,src,mk,outs", POCL_KERNELS, ids=[k[0] for k in POCL_KERNELS])
def test_against_pocl(name, src, mk, outs):
    cl, ctx = _pocl()
    if cl is None:
        pytest.skip("no OpenCL platform")
    rng = np.random.default_rng(7)
    args = mk(rng)
    n_items = 64 if name == "vecops" else 256
    local = 64
    ours = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    p = build(src)
    p.run(name, n_items, local, *[Local(local * 4) if isinstance(a, str) else a for a in ours])
    q = cl.CommandQueue(ctx)
    prog = cl.Program(ctx, src).build()
    mf = cl.mem_flags
    bufs, clargs = [], []
    for a in args:
        if isinstance(a, np.ndarray):
            b = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=a)
            bufs.append((a, b))
            clargs.append(b)
        elif isinstance(a, str):
            clargs.append(cl.LocalMemory(local * 4))
        else:
            clargs.append(a)
    getattr(prog, name)(q, (n_items,), (local,), *clargs)
    for idx in outs:
        host = args[idx].copy()
        cl.enqueue_copy(q, host, [b for a, b in bufs][idx])
        q.finish()
        if host.dtype.kind == "f":
            np.testing.assert_allclose(ours[idx], host, rtol=1e-6)
        else:
            np.testing.assert_array_equal(ours[idx], host)


def test_concurrent_compiles():
    import threading
    srcs = [f"__kernel void k{i}(__global int *a) {{ a[get_global_id(0)] += {i}; }}" for i in range(8)]
    results, errors = {}, []

    def work(i):
        try:
            results[i] = compile_opencl(srcs[i])
        except Exception as e:          # pragma: no cover - reported below
            errors.append(e)
    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert all(f"k{i}__wg" in results[i].llvm_ir for i in range(8))


def test_directed_rounding_to_float():
    src = """
    __kernel void k(__global const int *i, __global const long *l, __global const double *d, __global float *o) {
        int g = get_global_id(0);
        o[9*g+0] = convert_float_rtz(i[g]); o[9*g+1] = convert_float_rtp(i[g]); o[9*g+2] = convert_float_rtn(i[g]);
        o[9*g+3] = convert_float_rtz(l[g]); o[9*g+4] = convert_float_rtp(l[g]); o[9*g+5] = convert_float_rtn(l[g]);
        o[9*g+6] = convert_float_rtz(d[g]); o[9*g+7] = convert_float_rtp(d[g]); o[9*g+8] = convert_float_rtn(d[g]);
    }"""
    p = build(src)
    i = np.array([16777217, -16777217, 2 ** 31 - 1, 5], np.int32)
    l = np.array([2 ** 63 - 1, -(2 ** 63), 2 ** 24 + 1, -(2 ** 40) - 1], np.int64)
    d = np.array([1 / 3, -1 / 3, 1e300, 0.5], np.float64)
    o = np.zeros(36, np.float32)
    p.run("k", 4, 1, i, l, d, o)
    o = o.reshape(4, 9)
    f = np.float32
    assert list(o[0, :3]) == [f(16777216), f(16777218), f(16777216)]
    assert list(o[1, :3]) == [f(-16777216), f(-16777216), f(-16777218)]
    assert o[2, 0] == f(2147483520) and o[2, 1] == f(2 ** 31) and o[3, 0] == 5
    assert o[0, 3] == np.nextafter(f(2 ** 63), f(0)) and o[0, 4] == f(2 ** 63)
    assert o[1, 3] == o[1, 4] == o[1, 5] == f(-(2 ** 63))
    assert o[2, 3] == f(2 ** 24) and o[2, 4] == f(2 ** 24 + 2)
    up = f(1 / 3)                         # round to nearest is above 1/3
    dn = np.nextafter(up, f(0))
    assert o[0, 6] == dn and o[0, 7] == up and o[0, 8] == dn
    assert o[1, 6] == -dn and o[1, 7] == -dn and o[1, 8] == -up
    assert o[2, 6] == np.finfo(np.float32).max and np.isinf(o[2, 7]) and o[2, 8] == np.finfo(np.float32).max
    assert list(o[3, 6:]) == [0.5, 0.5, 0.5]


def test_diagnostic_inside_an_included_header(tmp_path):
    (tmp_path / "util.h").write_text("#define TWICE(x) (2 * (x))\nfloat helper(float x) { return x + missing; }\n")
    k = tmp_path / "k.cl"
    k.write_text('#include "util.h"\n__kernel void k(__global float *a) { a[0] = helper(TWICE(a[0])); }\n')
    with pytest.raises(CompileError) as ei:
        compile_opencl(k.read_text(), filename=str(k))
    d = ei.value.diagnostics[0]
    assert (d.filename, d.line, d.column) == (str(tmp_path / "util.h"), 2, 36)
    assert d.message == "use of undeclared identifier 'missing'"


def test_verifier_failure_is_an_internal_compiler_error(monkeypatch):
    from llvmlite import ir
    import translator.lower as lower
    real = lower.Lowering.run

    def broken(self):
        module, kernels = real(self)
        f = ir.Function(module, ir.FunctionType(ir.IntType(32), []), name="bad")
        ir.IRBuilder(f.append_basic_block()).ret_void()      # wrong return type: does not verify
        return module, kernels
    monkeypatch.setattr(lower.Lowering, "run", broken)
    with pytest.raises(CompileError) as ei:
        compile_opencl("__kernel void kern(__global int *a) { a[0] = 1; }")
    assert "internal compiler error in kernel kern" in ei.value.log


def test_internal_exception_is_a_compile_error(monkeypatch):
    import translator.lower as lower

    def boom(self, n):
        raise KeyError("oops")
    monkeypatch.setattr(lower.Lowering, "e_BinaryOp", boom)
    with pytest.raises(CompileError) as ei:
        compile_opencl("__kernel void k(__global int *a) { a[0] = a[1] + 1; }")
    assert "internal compiler error" in ei.value.log


def test_deep_expressions():
    terms = " + ".join(f"a[{i % 8}]" for i in range(1500))
    p = build(f"__kernel void k(__global float *a, __global float *o) {{ o[0] = {terms}; o[1] = {'(' * 300}a[1]{')' * 300}; }}")
    a = np.arange(8, dtype=np.float32)
    o = np.zeros(2, np.float32)
    p.run("k", 1, 1, a, o)
    assert o[0] == np.float32(sum(i % 8 for i in range(1500))) and o[1] == 1
    with pytest.raises(CompileError):
        compile_opencl("__kernel void k(__global float *a) { a[0] = " + "(" * 5000 + "1" + ")" * 5000 + "; }")


# measured max error of the float versions, in ulp of the float64 reference (0.5 = correctly
# rounded); docs/language.md quotes these.  Bounds leave a little margin over the measurement.
ULP_BOUNDS = {
    "sqrt": (np.sqrt, 0, 1e6, 0.5), "rsqrt": (lambda x: 1 / np.sqrt(x), 1e-3, 1e6, 2),
    "exp": (np.exp, -80, 80, 1), "exp2": (np.exp2, -120, 120, 1), "exp10": (lambda x: 10.0 ** x, -30, 30, 1),
    "log": (np.log, 1e-30, 1e30, 1), "log2": (np.log2, 1e-30, 1e30, 1), "log10": (np.log10, 1e-30, 1e30, 2),
    "sin": (np.sin, -100, 100, 1), "cos": (np.cos, -100, 100, 1), "tan": (np.tan, -10, 10, 1),
    "asin": (np.arcsin, -1, 1, 1), "acos": (np.arccos, -1, 1, 1), "atan": (np.arctan, -100, 100, 1),
    "sinh": (np.sinh, -80, 80, 2), "cosh": (np.cosh, -80, 80, 2), "tanh": (np.tanh, -20, 20, 2),
    "cbrt": (np.cbrt, -1e6, 1e6, 1), "expm1": (np.expm1, -10, 10, 1), "log1p": (np.log1p, -0.9, 100, 1),
    "sinpi": (lambda x: np.sin(np.pi * x), -4, 4, 0.5), "cospi": (lambda x: np.cos(np.pi * x), -4, 4, 0.5),
    "tanpi": (lambda x: np.tan(np.pi * x), -0.49, 0.49, 0.5), "asinpi": (lambda x: np.arcsin(x) / np.pi, -1, 1, 0.5),
    "acospi": (lambda x: np.arccos(x) / np.pi, -1, 1, 0.5), "atanpi": (lambda x: np.arctan(x) / np.pi, -100, 100, 0.5),
}


def test_math_accuracy_in_ulp():
    names = list(ULP_BOUNDS)
    body = "\n".join(f"    o[{k}*n+i] = {nm}(x[{k}*n+i]);" for k, nm in enumerate(names))
    p = build(f"__kernel void m(__global const float *x, __global float *o, int n) {{ int i = get_global_id(0);\n{body}\n}}")
    n = 2048
    rng = np.random.default_rng(0)
    xs = []
    for nm in names:
        _, lo, hi, _ = ULP_BOUNDS[nm]
        v = np.exp(rng.uniform(np.log(lo), np.log(hi), n)) if lo > 0 and hi / lo > 1e4 else rng.uniform(lo, hi, n)
        xs.append(v.astype(np.float32))
    x = np.concatenate(xs)
    o = np.zeros_like(x)
    p.run("m", n, 64, x, o, np.int32(n))
    for k, nm in enumerate(names):
        f, _, _, bound = ULP_BOUNDS[nm]
        ref = f(xs[k].astype(np.float64))
        got = o[k * n:(k + 1) * n].astype(np.float64)
        ok = np.isfinite(ref) & (np.abs(ref) < 3e38) & (np.abs(ref) > 1e-37)
        ulp = np.spacing(np.abs(ref[ok]).astype(np.float32)).astype(np.float64)
        err = (np.abs(got[ok] - ref[ok]) / ulp).max()
        assert err <= bound + 1e-9, f"{nm}: {err:.2f} ulp > {bound}"


def test_pointer_out_builtins_and_shuffle():
    src = """
    __kernel void k(__global const float *x, __global float *o, __global int *e, __global uint4 *sh) {
        int i = get_global_id(0);
        float ip, tr, c;
        int ex;
        o[7*i+0] = fract(x[i], &ip); o[7*i+1] = ip;
        o[7*i+2] = modf(x[i], &tr);  o[7*i+3] = tr;
        o[7*i+4] = sincos(x[i], &c); o[7*i+5] = c;
        o[7*i+6] = frexp(x[i], &ex); e[i] = ex;
        sh[i] = shuffle2((uint4)(10, 20, 30, 40), (uint4)(50, 60, 70, 80), (uint4)(i, 7 - i, 3, 4))
              + shuffle((uint4)(1, 2, 3, 4), (uint4)(3, 2, 1, 0));
    }"""
    p = build(src)
    x = np.array([1.25, -1.25, 3.0, 7.5], np.float32)
    o = np.zeros(28, np.float32)
    e = np.zeros(4, np.int32)
    sh = np.zeros((4, 4), np.uint32)
    p.run("k", 4, 4, x, o, e, sh)
    o = o.reshape(4, 7)
    np.testing.assert_allclose(o[:, 0], x - np.floor(x))
    np.testing.assert_array_equal(o[:, 1], np.floor(x))
    np.testing.assert_allclose(o[:, 2], x - np.trunc(x))
    np.testing.assert_array_equal(o[:, 3], np.trunc(x))
    np.testing.assert_allclose(o[:, 4], np.sin(x), rtol=1e-6)
    np.testing.assert_allclose(o[:, 5], np.cos(x), rtol=1e-6)
    m, ex = np.frexp(x)
    np.testing.assert_array_equal(o[:, 6], m)
    np.testing.assert_array_equal(e, ex)
    ab = np.array([10, 20, 30, 40, 50, 60, 70, 80])
    exp = np.stack([ab[[i, 7 - i, 3, 4]] + np.array([4, 3, 2, 1]) for i in range(4)])
    np.testing.assert_array_equal(sh, exp)


def test_async_work_group_copy():
    src = """
    __kernel void k(__global const float *in, __global float *out, __global float *out2, __local float *tile) {
        int l = get_local_id(0), n = get_local_size(0), g = get_group_id(0);
        event_t e = async_work_group_copy(tile, in + g * n, n, 0);
        wait_group_events(1, &e);
        out[get_global_id(0)] = tile[n - 1 - l] * 2.0f;
        e = async_work_group_strided_copy(out2 + g * n, tile, n / 2, 2, 0);
        wait_group_events(1, &e);
    }"""
    p = build(src)
    assert p.cm.kernels["k"].uses_barrier
    x = np.arange(128, dtype=np.float32)
    o, o2 = np.zeros(128, np.float32), np.zeros(128, np.float32)
    p.run("k", 128, 32, x, o, o2, Local(128))
    np.testing.assert_array_equal(o, (x.reshape(4, 32)[:, ::-1] * 2).reshape(-1))
    exp2 = np.zeros((4, 32), np.float32)
    exp2[:, 0::2] = x.reshape(4, 32)[:, :16]
    np.testing.assert_array_equal(o2, exp2.reshape(-1))


def test_vector_subscript_extension():
    p = build("""
    __kernel void k(__global float4 *a, __global float *o) {
        int i = get_global_id(0);
        float4 v = a[i];
        float s = 0.0f;
        for (int c = 0; c < 4; c++) { s += v[c] * (c + 1); v[c] = c; }
        a[i][3] = s;
        o[i] = v[0] + v[1] + v[2] + v[3];
    }""")
    a = RNG.random((8, 4)).astype(np.float32)
    orig = a.copy()
    o = np.zeros(8, np.float32)
    p.run("k", 8, 8, a, o)
    np.testing.assert_allclose(a[:, 3], orig @ np.array([1, 2, 3, 4], np.float32), rtol=1e-6)
    np.testing.assert_array_equal(o, np.full(8, 6.0))


MATH_1 = ["sqrt", "rsqrt", "exp", "exp2", "exp10", "log", "log2", "log10", "sin", "cos", "tan", "asin", "acos",
          "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "cbrt", "erf", "erfc", "expm1", "log1p",
          "lgamma", "tgamma", "logb", "fabs", "floor", "ceil", "trunc", "rint", "round", "sinpi", "cospi", "tanpi",
          "asinpi", "acospi", "atanpi", "native_sin", "native_exp", "half_log", "native_recip", "sign", "degrees",
          "radians", "ilogb"]
MATH_2 = ["pow", "powr", "fmin", "fmax", "copysign", "atan2", "atan2pi", "hypot", "fdim", "nextafter", "remainder",
          "fmod", "maxmag", "minmag", "step", "native_divide"]


@pytest.mark.parametrize("t", ["float", "double", "float4"])
def test_every_math_symbol_resolves_in_process(t):
    """Every external symbol the math builtins reference resolves once libm is loaded (as the runtime does)."""
    import ctypes.util
    import re
    import llvmlite.binding as llvm
    lines = [f"o[0] += (float){f}(x[0]);" if t != "float4" else f"o[0] += (float){f}(v).x;" for f in MATH_1]
    lines += [f"o[1] += (float){f}(x[0], x[1]);" if t != "float4" else f"o[1] += (float){f}(v, v).y;" for f in MATH_2]
    lines += ["o[2] += (float)pown(x[0], 3) + (float)rootn(x[0], 3) + (float)ldexp(x[0], 2);" if t != "float4" else
              "o[2] += pown(v, (int4)(3)).z + rootn(v, (int4)(3)).w;"]
    lines += ["{ __private " + ("float4" if t == "float4" else t) + " ip; int e; o[3] += (float)fract(" +
              ("v" if t == "float4" else "x[0]") + ", &ip)" + (".x" if t == "float4" else "") + "; }"]
    xt = "double" if t == "double" else "float"
    src = (f"__kernel void k(__global const {xt} *x, __global float *o) {{\n"
           f"    float4 v = (float4)((float)x[0], (float)x[1], 0.5f, 2.0f);\n    " + "\n    ".join(lines) + "\n}")
    m = compile_opencl(src)
    externals = sorted(set(re.findall(r"^declare .*? @\"?([\w.]+)\"?\(", m.llvm_ir, re.M)) - {""})
    externals = [e for e in externals if not e.startswith("llvm.")]
    llvm.load_library_permanently(ctypes.util.find_library("m"))
    missing = [e for e in externals if not llvm.address_of_symbol(e)]
    assert not missing, missing
    p = build(src)
    x = np.array([0.7, 0.3], np.float64 if t == "double" else np.float32)
    o = np.zeros(4, np.float32)
    p.run("k", 1, 1, x, o)
    assert np.isfinite(o[[1, 2, 3]]).all()


def test_return_inside_a_barrier_loop_does_not_hang():
    # work-item 0 leaves early; the loop's condition then follows the first work-item still running,
    # and the loop ends when every work-item has returned
    src = """
    __kernel void k(__global int *a, int n) {
        __local int t[16];
        int l = get_local_id(0);
        for (int i = 0; i < n; i++) {
            t[l] = i;
            barrier(CLK_LOCAL_MEM_FENCE);
            a[get_global_id(0)] += t[(l + 1) % 16];
            if (l == 0 && i == 1) return;
            if (i == 3 + l) return;
            barrier(CLK_LOCAL_MEM_FENCE);
        }
    }"""
    p = build(src)
    a = np.zeros(16, np.int32)
    p.run("k", 16, 16, a, np.int32(1 << 30))
    assert a[0] == 0 + 1
    for l in range(1, 15):
        assert a[l] == sum(range(3 + l + 1)), l
    assert a[15] == 0 + 1 * 18            # its neighbour, work-item 0, stopped writing t[0] = 1
