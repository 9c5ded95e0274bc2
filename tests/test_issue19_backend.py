"""Issue 19, SIMD backend items: kernels in the shapes of public benchmark suites, compiled for
the emulator device (`tiny`, strict mode: any race or hazard in the generated code faults) and
checked against numpy or Python references.

* read-modify-write loops (PolyBench atax / mvt / gemver): `y[i] += A[i*n + j] * x[j]` with no
  earlier store to y[i] — the previous pass's store is in flight when the next pass loads y;
* rotates (`rotate()`, the shift-or idiom -> llvm.fshl / llvm.fshr; SHOC md5hash);
* a pointer into one of two buffers (`p = c ? a : b`; SHOC scan's bottom_scan)."""
import dataclasses
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings, strategies as st

import mncl as cl


def buf(ctx, a):
    return cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=a)


def run(tiny_env, src, name, gsize, *args, lsize=None):
    """Build `src`, launch kernel `name` over gsize with args (numpy arrays become buffers, read
    back after the launch), and give the arrays' new contents in order."""
    ctx, q = tiny_env
    prg = cl.Program(ctx, src).build()
    bufs = [(a, buf(ctx, a)) if isinstance(a, np.ndarray) and a.ndim else (a, None) for a in args]
    getattr(prg, name)(q, gsize, lsize, *[b if b is not None else a for a, b in bufs])
    out = []
    for a, b in bufs:
        if b is not None:
            r = np.empty_like(a)
            cl.enqueue_copy(q, r, b)
            out.append(r)
    q.finish()
    return out


# ---------------------------------------------------------------- 3: read-modify-write loops

ATAX = r"""
__kernel void atax(__global const float *A, __global const float *x, __global float *y, int n) {
  int i = get_global_id(0);
  if (i < n)
    for (int j = 0; j < n; j++)
      y[i] += A[i * n + j] * x[j];
}
__kernel void mvt(__global const float *A, __global const float *y1, __global float *x1, int n) {
  int i = get_global_id(0);
  if (i < n)
    for (int j = 0; j < n; j++)
      x1[i] = x1[i] + A[j * n + i] * y1[j];
}
__kernel void gemver(__global const float *A, __global float *x, __global const float *y,
                     __global const float *z, float beta, int n) {
  int i = get_global_id(0);
  if (i < n) {
    for (int j = 0; j < n; j++)
      x[i] += beta * A[j * n + i] * y[j];
    x[i] += z[i];
  }
}
"""


@pytest.mark.parametrize("n", [37, pytest.param(600, marks=pytest.mark.slow)])
def test_rmw_loops_without_an_earlier_store(tiny_env, n):
    """PolyBench's shapes: the loop's first load of y[i] precedes every store in the body, so only
    the previous pass's store can be in flight; strict mode faults unless the load waits for it.
    (atax's row-major A is gathered whole in every pass: only the small size.)"""
    rng = np.random.default_rng(n)
    A = rng.integers(-4, 5, n * n).astype(np.float32)
    x, y, z = (rng.integers(-4, 5, n).astype(np.float32) for _ in range(3))
    M = A.reshape(n, n)
    if n < 100:
        _, _, got = run(tiny_env, ATAX, "atax", (n,), A, x, y, np.int32(n))
        np.testing.assert_array_equal(got, y + M @ x)
    _, _, got = run(tiny_env, ATAX, "mvt", (n,), A, x, y, np.int32(n))
    np.testing.assert_array_equal(got, y + M.T @ x)
    _, got, _, _ = run(tiny_env, ATAX, "gemver", (n,), A, x, y, z, np.float32(2), np.int32(n))
    np.testing.assert_array_equal(got, x + 2 * (M.T @ y) + z)


def test_gather_before_a_contiguous_store_waits_for_the_previous_wave(tiny_env):
    """A gather streams the whole buffer, also the share the previous wave's store is still
    writing (a wave's own contiguous loads never meet it): it waits for that store first.  Which
    value a work-item reads of an element another one writes is unspecified; it is one of the two."""
    src = """__kernel void k(__global float *y, __global float *o, int n) {
  int i = get_global_id(0);
  o[i] = y[(i * 7) % n];
  y[i] = -1.0f;
}"""
    n = 1500                                  # three waves of tiny
    y = np.arange(n, dtype=np.float32)
    gy, got, = run(tiny_env, src, "k", (n,), y, np.zeros_like(y), np.int32(n))
    np.testing.assert_array_equal(gy, -1)
    old = y[np.arange(n) * 7 % n]
    assert np.all((got == old) | (got == -1)), got


def rmw_kernel(ty, target, read, lo, hi, step, store_before, second):
    """A read-modify-write loop kernel: y[target] op= <read> in a loop over j."""
    init = f"  y[{target}] = x[i] + ({ty})1;\n" if store_before else ""
    also = f"    z[i] = y[{target}] - ({ty})j;\n" if second else ""
    return f"""
__kernel void k(__global const {ty} *A, __global const {ty} *x, __global {ty} *y, __global {ty} *z,
                int n, int m) {{
  int i = get_global_id(0);
  if (i >= n) return;
{init}  for (int j = {lo}; j < {hi}; j += {step}) {{
    y[{target}] += {read} + ({ty})(j & 3);
{also}  }}
}}
"""


TARGETS = {"i": lambda i, n: i, "2 * i + 1": lambda i, n: 2 * i + 1, "n - 1 - i": lambda i, n: n - 1 - i}
READS = {"A[i * m + j] * x[j]": lambda A, x, y, i, j, n, m: A[i * m + j] * x[j],
         "A[j * n + i]": lambda A, x, y, i, j, n, m: A[j * n + i],
         "x[i] * x[j]": lambda A, x, y, i, j, n, m: x[i] * x[j],
         "y[i]": lambda A, x, y, i, j, n, m: y[i]}
BOUNDS = {"m": lambda m: m, "m - 1": lambda m: m - 1, "(m < 3 ? m : 3)": lambda m: min(m, 3)}


def rmw_reference(ty, target, read, lo, hi, step, store_before, second, A, x, y, z, n, m):
    """The kernel's effect, work-item by work-item in order (numpy vectors over the work-items)."""
    y, z = y.copy(), z.copy()
    i = np.arange(n)
    t = TARGETS[target](i, n)
    if store_before:
        y[t] = x[i] + 1
    for j in range(lo, BOUNDS[hi](m), step):
        y[t] = y[t] + READS[read](A, x, y, i, j, n, m) + y.dtype.type(j & 3)
        if second:
            z[i] = y[t] - y.dtype.type(j)
    return y, z


@st.composite
def rmw_cases(draw):
    ty = draw(st.sampled_from(["float", "int"]))
    target = draw(st.sampled_from(sorted(TARGETS)))
    read = draw(st.sampled_from(sorted(READS)))
    if read == "y[i]" and target != "i":
        read = "x[i] * x[j]"        # another work-item's y[i]: a race between work-items
    lo = draw(st.sampled_from([0, 1]))
    hi = draw(st.sampled_from(sorted(BOUNDS)))
    step = draw(st.sampled_from([1, 1, 2]))
    return dict(ty=ty, target=target, read=read, lo=lo, hi=hi, step=step,
                store_before=draw(st.booleans()), second=draw(st.booleans()),
                n=draw(st.integers(1, 70)), m=draw(st.integers(1, 6)), seed=draw(st.integers(0, 2 ** 16)))


def check_rmw(tiny_env, case):
    case = dict(case)
    n, m, seed = case.pop("n"), case.pop("m"), case.pop("seed")
    dt = np.float32 if case["ty"] == "float" else np.int32
    rng = np.random.default_rng(seed)
    A = rng.integers(-3, 4, n * max(n, m)).astype(dt)     # small integers: float sums are exact
    x = rng.integers(-3, 4, max(n, m)).astype(dt)
    y = rng.integers(-3, 4, 2 * n + 1).astype(dt)
    z = rng.integers(-3, 4, n).astype(dt)
    src = rmw_kernel(**case)
    _, _, gy, gz = run(tiny_env, src, "k", (n,), A, x, y, z, np.int32(n), np.int32(m))
    ry, rz = rmw_reference(**case, A=A, x=x, y=y, z=z, n=n, m=m)
    np.testing.assert_array_equal(gy, ry, err_msg=src)
    np.testing.assert_array_equal(gz, rz, err_msg=src)


SETTINGS = dict(deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))


ATAX_LIKE = dict(ty="float", target="i", read="A[i * m + j] * x[j]", lo=0, hi="m", step=1, store_before=False,
                 second=False, n=45, m=5, seed=1)


@settings(max_examples=4, **SETTINGS)
@given(rmw_cases())
@example(ATAX_LIKE)
@example(dict(ATAX_LIKE, ty="int", read="A[j * n + i]", step=2, second=True))
def test_random_rmw_loops_run_strict(tiny_env, case):
    check_rmw(tiny_env, case)


@pytest.mark.slow
@settings(max_examples=60, **SETTINGS)
@given(rmw_cases())
def test_random_rmw_loops_run_strict_more(tiny_env, case):
    check_rmw(tiny_env, case)


# ---------------------------------------------------------------- 6: rotates (llvm.fshl / llvm.fshr)

def funnel_reference(left, a, b, c, bits):
    """LLVM's fshl / fshr on Python integers: a:b shifted by c mod bits, the high / low half."""
    z, m = int(c) % bits, (1 << bits) - 1
    cat = (int(a) & m) << bits | (int(b) & m)
    return (cat << z >> bits) & m if left else (cat >> z) & m


FUNNEL = r"""
__kernel void f(__global const T *a, __global const T *b, __global const T *c, __global T *o) {
  int i = get_global_id(0);
  T y = b[i], x = a[i], s = c[i];          /* y first: the rewritten call reads it */
  o[i] = rotate(x, s) ^ y;
}
"""


@pytest.mark.parametrize("op", ["fshl", "fshr"])
@pytest.mark.parametrize("ty,dt", [("uchar", np.uint8), ("ushort", np.uint16), ("uint", np.uint32),
                                   ("ulong", np.uint64)])
def test_funnel_shifts_by_every_amount(tiny_env, monkeypatch, op, ty, dt):
    """fshl / fshr with two different operands and per-lane amounts over every value mod the width
    and beyond it: rotate()'s llvm.fshl(x, x, s) rewritten in the IR to op(x, y, s), where y is the
    value the kernel xors in (no OpenCL C form asks for a general funnel shift)."""
    import translator
    bits = np.dtype(dt).itemsize * 8
    compile_opencl = translator.compile_opencl

    def rewritten(*args, **kw):
        m = compile_opencl(*args, **kw)
        t = f"i{bits}"
        call = re.search(rf"(%[\w.]+) = tail call {t} @llvm\.fshl\.{t}\({t} (%[\w.]+), {t} \2, {t} (%[\w.]+)\)", m.llvm_ir)
        r, x, s = call.groups()
        xor = re.search(rf"= xor {t} (?:{re.escape(r)}, (%[\w.]+)|(%[\w.]+), {re.escape(r)}(?![\w.]))", m.llvm_ir)
        y = xor.group(1) or xor.group(2)
        assert m.llvm_ir.index(f"{y} = ") < call.start()
        ir = m.llvm_ir.replace(call.group(0), f"{r} = tail call {t} @llvm.{op}.{t}({t} {x}, {t} {y}, {t} {s})")
        return dataclasses.replace(m, llvm_ir=ir.replace(f"@llvm.fshl.{t}(", f"@llvm.{op}.{t}("))
    monkeypatch.setattr(translator, "compile_opencl", rewritten)
    n = 600
    rng = np.random.default_rng(bits)
    a = rng.integers(0, np.iinfo(dt).max, n, dtype=dt, endpoint=True)
    b = rng.integers(0, np.iinfo(dt).max, n, dtype=dt, endpoint=True)
    c = (np.arange(n) % (3 * bits)).astype(dt)            # every amount, up to twice the width and over
    c[-50:] = rng.integers(0, np.iinfo(dt).max, 50, dtype=dt, endpoint=True)
    ctx, q = tiny_env
    prg = cl.Program(ctx, FUNNEL).build(options=f"-D T={ty} -D OP_{op}")    # its own build: not cached
    bufs = [buf(ctx, v) for v in (a, b, c, np.zeros_like(a))]
    prg.f(q, (n,), None, *bufs)
    got = np.empty_like(a)
    cl.enqueue_copy(q, got, bufs[-1])
    want = np.array([funnel_reference(op == "fshl", x, y, s, bits) ^ int(y) for x, y, s in zip(a, b, c)], dt)
    np.testing.assert_array_equal(got, want)


def md5_source():
    """MD5 of one 64-byte block per work-item (the SHOC md5hash shape: a key from the id, hashed,
    the digest compared); the shift table in rotate() for the first half of the rounds and as
    the shift-or idiom for the second, so both become llvm.fshl."""
    import math
    k = ", ".join(f"0x{int(abs(math.sin(j + 1)) * 2 ** 32) & 0xFFFFFFFF:08x}u" for j in range(64))
    s = ", ".join(str(v) for v in [7, 12, 17, 22] * 4 + [5, 9, 14, 20] * 4 + [4, 11, 16, 23] * 4
                  + [6, 10, 15, 21] * 4)
    return f"""
__constant uint K[64] = {{{k}}};
__constant uint S[64] = {{{s}}};

__kernel void md5(__global const uint *keys, __global uint *digest) {{
  int i = get_global_id(0);
  uint m[16];
  for (int w = 0; w < 16; w++) m[w] = 0;
  m[0] = keys[i];                    /* a 4-byte message, little-endian */
  m[1] = 0x80;                       /* the padding bit */
  m[14] = 32;                        /* the message length in bits */
  uint a = 0x67452301u, b = 0xefcdab89u, c = 0x98badcfeu, d = 0x10325476u;
  for (int j = 0; j < 64; j++) {{
    uint f; int g;
    if (j < 16)      {{ f = (b & c) | (~b & d); g = j; }}
    else if (j < 32) {{ f = (d & b) | (~d & c); g = (5 * j + 1) & 15; }}
    else if (j < 48) {{ f = b ^ c ^ d;          g = (3 * j + 5) & 15; }}
    else             {{ f = c ^ (b | ~d);       g = (7 * j) & 15; }}
    f += a + K[j] + m[g];
    uint r = S[j];
    a = d; d = c; c = b;
    b += j < 32 ? rotate(f, r) : (f << r) | (f >> (32 - r));
  }}
  digest[4 * i] = a + 0x67452301u;     digest[4 * i + 1] = b + 0xefcdab89u;
  digest[4 * i + 2] = c + 0x98badcfeu; digest[4 * i + 3] = d + 0x10325476u;
}}

__kernel void md5_unrolled_round(__global const uint *x, __global const uint *y, __global uint *o) {{
  int i = get_global_id(0);             /* constant rotates, as an unrolled md5 writes them */
  uint v = x[i], w = y[i];              /* and a constant funnel of two values: fshl(v, w, 5) */
  o[i] = rotate(v, 7u) + ((v << 12) | (v >> 20)) + rotate(v, 39u) + (rotate(v, 0u) ^ rotate(v, 32u))
         + ((v << 5) | (w >> 27));
}}
"""


def test_md5_like_hash_matches_hashlib(tiny_env):
    import hashlib
    n = 100
    keys = (np.arange(n, dtype=np.uint32) * 2654435761).astype(np.uint32)
    _, got = run(tiny_env, md5_source(), "md5", (n,), keys, np.zeros(4 * n, np.uint32))
    want = np.frombuffer(b"".join(hashlib.md5(int(k).to_bytes(4, "little")).digest() for k in keys), "<u4")
    np.testing.assert_array_equal(got, want)


def test_constant_rotates(tiny_env):
    x, y = np.random.default_rng(5).integers(0, 2 ** 32, (2, 300), dtype=np.uint32)
    _, _, got = run(tiny_env, md5_source(), "md5_unrolled_round", (300,), x, y, np.zeros_like(x))
    rot = lambda v, r: (v << np.uint32(r % 32)) | (v >> np.uint32((32 - r % 32) % 32)) if r % 32 else v
    np.testing.assert_array_equal(got, rot(x, 7) + rot(x, 12) + rot(x, 39) + (x ^ x) + ((x << 5) | (y >> 27)))


VECTOR_ROTATE = r"""
__kernel void v(__global const uint4 *a, __global const uint4 *s, __global uint4 *o,
                __global const ushort2 *h, __global ushort2 *oh) {
  int i = get_global_id(0);
  o[i] = rotate(a[i], s[i]);
  oh[i] = rotate(h[i], (ushort2)(3, 17));
}
"""


def test_vector_rotates(tiny_env):
    rng = np.random.default_rng(6)
    a = rng.integers(0, 2 ** 32, 4 * 200, dtype=np.uint32)
    s = rng.integers(0, 100, 4 * 200, dtype=np.uint32)
    h = rng.integers(0, 2 ** 16, 2 * 200, dtype=np.uint16)
    _, _, got, _, goth = run(tiny_env, VECTOR_ROTATE, "v", (200,), a, s, np.zeros_like(a), h, np.zeros_like(h))
    np.testing.assert_array_equal(got, [funnel_reference(True, x, x, r, 32) for x, r in zip(a, s)])
    np.testing.assert_array_equal(goth, [funnel_reference(True, x, x, r, 16) for x, r in zip(h, [3, 17] * 200)])


# ---------------------------------------------------------------- 8: a pointer into one of two buffers

BLOCK_SCAN = r"""
float group_exscan(float v, __local float *tmp)     /* Kogge-Stone over the work-group */
{
  int l = get_local_id(0), m = get_local_size(0);
  tmp[l] = 0.0f;
  tmp[l + m] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int d = 1; d < m; d <<= 1) {
    float t = tmp[l + m - d]; barrier(CLK_LOCAL_MEM_FENCE);
    tmp[l + m] += t;          barrier(CLK_LOCAL_MEM_FENCE);
  }
  return tmp[l + m - 1];
}

/* Each group scans its region of `in` in windows of one float4 per work-item, seeded with the
   group's sum from an earlier pass; the seed of the next window comes through __local memory.
   LLVM turns `base = sums[g]` ... `base = carry` into one load of a phi of the two pointers. */
__kernel void block_scan(__global const float *in, __global const float *sums, __global float *out,
                         int n, __local float *tmp)
{
  __local float carry;
  carry = 0.0f;
  __global const float4 *in4 = (__global const float4 *) in;
  __global float4 *out4 = (__global float4 *) out;
  int chunk = (n / 4) / get_num_groups(0);
  int first = get_group_id(0) * chunk;
  int last = get_group_id(0) == get_num_groups(0) - 1 ? n / 4 : first + chunk;
  int k = first + get_local_id(0);
  float base = sums[get_group_id(0)];
  for (int w = first; w < last; w += get_local_size(0), k += get_local_size(0)) {
    float4 v = (float4)(0.0f);
    if (k < last) v = in4[k];
    v.y += v.x; v.z += v.y; v.w += v.z;
    v += group_exscan(v.w, tmp) + base;
    if (k < last) out4[k] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) == get_local_size(0) - 1) carry = v.w;
    barrier(CLK_LOCAL_MEM_FENCE);
    base = carry;
  }
}
"""


def test_block_scan_seed_through_a_pointer_phi(tiny_env):
    """SHOC scan's bottom_scan shape: the seed's load is of a pointer into `sums` or into __local
    memory, carried around the window loop."""
    ctx, q = tiny_env
    L, G, W = 32, 4, 3
    n = 4 * L * W * G
    rng = np.random.default_rng(3)
    x = rng.integers(-5, 6, n).astype(np.float32)
    sums = rng.integers(-50, 50, G).astype(np.float32)
    prg = cl.Program(ctx, BLOCK_SCAN).build()
    bx, bs, bo = buf(ctx, x), buf(ctx, sums), buf(ctx, np.zeros_like(x))
    prg.block_scan(q, (L * G,), (L,), bx, bs, bo, np.int32(n), cl.LocalMemory(8 * L))
    got = np.empty_like(x)
    cl.enqueue_copy(q, got, bo)
    np.testing.assert_array_equal(got, np.concatenate([np.cumsum(r) + s for r, s in zip(x.reshape(G, -1), sums)]))


EITHER = r"""
__kernel void uniform_sel(__global float *a, __global float *b, __global const float *x, int flag) {
  int i = get_global_id(0);
  __global float *p = flag ? a : b;
  p[i] = x[i] * 2 + p[i];
}
__kernel void divergent_sel(__global float *a, __global float *b, __global float *x, int flag) {
  int i = get_global_id(0), n = get_global_size(0);
  __global const float *p = (i & 1) ? a : b;
  x[i] = p[i] + p[n - 1 - i];
}
__kernel void if_else(__global float *a, __global float *b, __global const float *x, int flag) {
  int i = get_global_id(0);
  __global float *p;
  if (x[i] > 0) p = a; else p = b;
  p[i] = 7;
}
__kernel void in_loop(__global float *a, __global float *b, __global float *x, int flag) {
  int i = get_global_id(0), n = get_global_size(0);
  float acc = 0;
  for (int k = 0; k < flag; k++) {
    __global const float *s = (k & 1) ? a : b;              /* uniform */
    __global const float *t = (x[i] + k > 1) ? a : b;       /* divergent */
    acc += s[(i + k) % n] + 10 * t[i];
  }
  x[i] = acc;
}
__kernel void carried(__global float *a, __global float *b, __global float *x, int flag) {
  int i = get_global_id(0);
  __global float *src = a, *dst = b;
  for (int k = 0; k < flag; k++) {
    dst[i] = src[i] + k;
    __global float *t = src;
    if (x[i] > k - 2) { src = dst; dst = t; }                /* a divergent swap */
  }
  x[i] = src[i];
}
__kernel void escapes(__global float *a, __global float *b, __global float *x, int flag) {
  int i = get_global_id(0);
  __global const float *best = b;
  int k = 0;
  while (k < flag && x[i] + k < 3) {                        /* each lane leaves in its own pass */
    best = (k & 1) ? a + k : b + k;
    k++;
  }
  x[i] = best[i];
}
__kernel void three(__global float *a, __global float *b, __global float *x, int flag) {
  int i = get_global_id(0);
  __global float *p = a;
  for (int k = 0; k < flag; k++) {
    p[i] += 1;
    int m = ((int)x[i] + k) % 3;                             /* x itself may be p's buffer */
    p = m == 0 ? a : m == 1 ? b : x;
  }
  p[i] += 100;
}
"""


@pytest.fixture(scope="module")
def either(tiny_env):
    return cl.Program(tiny_env[0], EITHER).build()


def either_inputs(n=300):
    a = np.arange(n + 8, dtype=np.float32)
    b = -np.arange(n + 8, dtype=np.float32) - 1000
    x = (np.arange(n + 8) % 5 - 2).astype(np.float32)
    return a, b, x


def run_either(tiny_env, prg, name, flag, n=300):
    ctx, q = tiny_env
    arrays = either_inputs(n)
    bufs = [buf(ctx, v) for v in arrays]
    getattr(prg, name)(q, (n,), None, *bufs, np.int32(flag))
    out = []
    for v, bb in zip(arrays, bufs):
        r = np.empty_like(v)
        cl.enqueue_copy(q, r, bb)
        out.append(r)
    return out


@pytest.mark.parametrize("flag", [0, 1])
def test_pointer_select_uniform_divergent_and_if_else(tiny_env, either, flag):
    n = 300
    a, b, x = either_inputs(n)
    i = np.arange(n)
    ga, gb, _ = run_either(tiny_env, either, "uniform_sel", flag)
    want_a, want_b = a.copy(), b.copy()
    (want_a if flag else want_b)[:n] += 2 * x[:n]
    np.testing.assert_array_equal(ga, want_a)
    np.testing.assert_array_equal(gb, want_b)
    _, _, gx = run_either(tiny_env, either, "divergent_sel", flag)
    p = lambda j: np.where(i & 1, a[j], b[j])
    np.testing.assert_array_equal(gx[:n], p(i) + p(n - 1 - i))
    ga, gb, _ = run_either(tiny_env, either, "if_else", flag)
    want_a, want_b = a.copy(), b.copy()
    want_a[:n][x[:n] > 0] = 7
    want_b[:n][x[:n] <= 0] = 7
    np.testing.assert_array_equal(ga, want_a)
    np.testing.assert_array_equal(gb, want_b)


@pytest.mark.parametrize("trips", [0, 1, 4])
def test_pointer_select_in_loops(tiny_env, either, trips):
    """Selects in a loop (uniform and divergent condition), a pointer carried around a loop that
    swaps between two buffers in some lanes only, and one that leaves a `.while any` loop per lane."""
    n = 300
    a, b, x = either_inputs(n)
    i = np.arange(n)
    _, _, gx = run_either(tiny_env, either, "in_loop", trips)
    acc = np.zeros(n, np.float32)
    for k in range(trips):
        s = a if k & 1 else b
        acc += s[(i + k) % n] + 10 * np.where(x[:n] + k > 1, a[:n], b[:n])
    np.testing.assert_array_equal(gx[:n], acc)

    ga, gb, gx = run_either(tiny_env, either, "carried", trips)
    wa, wb = a.copy(), b.copy()
    on_a = np.ones(n, bool)                   # src is a
    for k in range(trips):
        src = np.where(on_a, wa[:n], wb[:n])
        np.copyto(wb[:n], src + k, where=on_a)
        np.copyto(wa[:n], src + k, where=~on_a)
        on_a ^= x[:n] > k - 2
    np.testing.assert_array_equal(ga, wa)
    np.testing.assert_array_equal(gb, wb)
    np.testing.assert_array_equal(gx[:n], np.where(on_a, wa[:n], wb[:n]))

    _, _, gx = run_either(tiny_env, either, "escapes", trips)
    want = b[:n].copy()
    done = np.zeros(n, bool)
    for k in range(trips):
        done |= x[:n] + k >= 3
        want = np.where(done, want, (a if k & 1 else b)[i + k])
    np.testing.assert_array_equal(gx[:n], want)

    ga, gb, gx = run_either(tiny_env, either, "three", trips)
    bufs = [v.copy() for v in (a, b, x)]
    for j in range(n):                      # lane by lane, as C does
        p = 0
        for k in range(trips):
            bufs[p][j] += 1
            m = int(np.fmod(int(bufs[2][j]) + k, 3))
            p = 0 if m == 0 else 1 if m == 1 else 2
        bufs[p][j] += 100
    for g, w in zip((ga, gb, gx), bufs):
        np.testing.assert_array_equal(g, w)


def test_pointer_compare_across_buffers_is_a_clear_build_error(tiny_env):
    src = """__kernel void k(__global float *a, __global float *b, __global float *x) {
  int i = get_global_id(0);
  __global float *p = (x[i] > 0) ? a : b;
  x[i] = (p + i == a + i) ? 1.0f : 2.0f;
}"""
    with pytest.raises(cl.RuntimeError, match=r"kernel\.cl:\d+:\d+: error: kernel 'k': comparing pointers into "
                                             r"different buffers"):
        cl.Program(tiny_env[0], src).build()
