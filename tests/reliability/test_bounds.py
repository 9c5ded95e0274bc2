"""Issue 20, items 3 and 6: the emulator device's bounds checks cover the whole index, and its
out-of-bounds reports say what happened.

The backend's pointer offsets are 32-bit lanes (docs/isa.md); a 64-bit index, or an int index times
the element size, used to wrap: `y[(long)i + (1L << 32)] = 5.0f` wrote y[i] and a load at
-2^32 elements read the launch's argument block, silently.  Each test here failed on 940024f but
the in-bounds guard (test_in_bounds_accesses_...) and the Oclgrind reference.
References: numpy / Python integers for values, the CPU device (where it does not crash) and
Oclgrind for which accesses are out of bounds.
"""
import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import mncl as cl

mf = cl.mem_flags


def run(env, src, name, arrays, gs, *scalars):
    """Build src, launch kernel `name` over gs work-items on buffers holding `arrays`; the buffers'
    contents afterwards (also when the launch fails: then with the error)."""
    ctx, q = env
    prg = cl.Program(ctx, src).build()
    bufs = [cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=a) for a in arrays]
    err = None
    try:
        getattr(prg, name)(q, gs, None, *bufs, *scalars).wait()
    except cl.Error as e:
        err = e
    outs = []
    for a, b in zip(arrays, bufs):
        o = np.empty_like(a)
        cl.enqueue_copy(q, o, b).wait()
        outs.append(o)
    return err, outs


# item 3: 64-bit indices ---------------------------------------------------------------------------
def test_store_at_a_64_bit_index_is_reported_not_wrapped(tiny_env):
    src = ("__kernel void far(__global float *y) {\n"
           "  int i = get_global_id(0);\n"
           "  y[(long)i + (1L << 32)] = 5.0f;\n"
           "}\n")
    err, (y,) = run(tiny_env, src, "far", [np.zeros(64, np.float32)], (64,))
    assert isinstance(err, cl.MemoryError)
    assert "kernel 'far' accessed out of bounds at line 3: index 4294967296 of the buffer passed as " \
           "argument 0 ('y', 256 bytes, elements of 4 bytes) in a write; 64 work-item(s) did" in str(err)
    np.testing.assert_array_equal(y, 0)            # nothing written (it wrote y[i] before)


def test_load_at_a_negative_64_bit_index_is_reported(tiny_env):
    src = ("__kernel void back(__global float *y, __global const float *x) {\n"
           "  int i = get_global_id(0);\n"
           "  y[i] = x[(long)i - (1L << 32)];\n"
           "}\n")
    err, _ = run(tiny_env, src, "back", [np.zeros(64, np.float32), np.arange(64, dtype=np.float32)], (64,))
    assert isinstance(err, cl.MemoryError)
    msg = str(err)
    assert "kernel 'back' accessed out of bounds at line 3: index -4294967296 of the buffer passed as argument 1 " \
           "('x', 256 bytes, elements of 4 bytes) in a read" in msg
    assert "stores" not in msg and "dropped" not in msg        # item 6: a read drops nothing


def test_int_index_times_element_size_past_32_bits_is_reported(tiny_env):
    """i + 2^30 is a valid int; times 4 bytes it is 2^32 + 4i, which a 32-bit offset wrapped to 4i."""
    src = ("__kernel void big(__global float *y) {\n"
           "  int i = get_global_id(0);\n"
           "  y[i + 0x40000000] = 1.0f;\n"
           "}\n")
    err, (y,) = run(tiny_env, src, "big", [np.zeros(64, np.float32)], (64,))
    assert isinstance(err, cl.MemoryError) and "index 1073741824 of the buffer passed as argument 0" in str(err)
    np.testing.assert_array_equal(y, 0)


def test_sum_of_indices_past_32_bits_is_reported(tiny_env):
    """p = y + a (one index), then p[b]: the sum of two 32-bit indices is checked whole."""
    src = ("__kernel void two(__global float *y, long a, long b) {\n"
           "  int i = get_global_id(0);\n"
           "  __global float *p = y + a;\n"
           "  p[b + i] = 3.0f;\n"
           "}\n")
    ctx, q = tiny_env
    for a, b, bad in ((1 << 31, 1 << 31, True), (-(1 << 33), 1 << 33, False), (5, -5, False)):
        err, (y,) = run(tiny_env, src, "two", [np.zeros(64, np.float32)], (64,), np.int64(a), np.int64(b))
        if bad:
            assert isinstance(err, cl.MemoryError) and "index 4294967296 " in str(err), (a, b, err)
            np.testing.assert_array_equal(y, 0)
        else:     # (C calls the intermediate pointer undefined; the device takes the sum as it is)
            assert err is None, (a, b, err)
            np.testing.assert_array_equal(y, 3)


def test_in_bounds_accesses_through_64_bit_arithmetic_still_work(tiny_env):
    src = ("__kernel void fine(__global float *y, __global const float *x, __global const int *idx) {\n"
           "  int i = get_global_id(0);\n"
           "  long j = (long)i + (1L << 32);\n"
           "  y[j - (1L << 32)] = x[(ulong)idx[i]] + x[63 - i];\n"
           "}\n")
    x = np.arange(64, dtype=np.float32)
    idx = np.random.default_rng(5).integers(0, 64, 64).astype(np.int32)
    err, (y, _, _) = run(tiny_env, src, "fine", [np.zeros(64, np.float32), x, idx], (64,))
    assert err is None
    np.testing.assert_array_equal(y, x[idx] + x[::-1])


def test_struct_of_12_bytes_indexed_out_of_bounds(tiny_env):
    """A struct whose size is not a power of two: its index is checked in structs, not in bytes."""
    src = ("typedef struct { float a, b, c; } t3;\n"
           "__kernel void st(__global t3 *s, int k) {\n"
           "  int i = get_global_id(0);\n"
           "  s[i + k].b = 7.0f;\n"
           "}\n")
    s = np.zeros(3 * 16, np.float32)
    err, (out,) = run(tiny_env, src, "st", [s], (16,), np.int32(0))
    assert err is None and np.array_equal(out.reshape(16, 3)[:, 1], np.full(16, 7.0))
    err, _ = run(tiny_env, src, "st", [s], (16,), np.int32(0x20000000))    # 12 * (2^29 + i) wraps 32 bits
    assert isinstance(err, cl.MemoryError) and "index 536870912 " in str(err) and "elements of 12 bytes" in str(err)


def test_private_array_index_out_of_bounds_is_reported(tiny_env):
    """a[k] = 9 with k = 5 on a float a[4] wrote a[1] (the index wrapped in the work-item's block)."""
    src = ("__kernel void pv(__global float *out, int k) {\n"
           "  int i = get_global_id(0); float a[4];\n"
           "  for (int j = 0; j < 4; j++) a[j] = j;\n"
           "  a[k] = 9.0f;\n"
           "  out[i] = a[0] + 10 * a[1] + 100 * a[2] + 1000 * a[3];\n"
           "}\n")
    err, (out,) = run(tiny_env, src, "pv", [np.zeros(16, np.float32)], (16,), np.int32(2))
    assert err is None and np.all(out == 3910)
    err, (out,) = run(tiny_env, src, "pv", [np.zeros(16, np.float32)], (16,), np.int32(5))
    assert isinstance(err, cl.MemoryError)
    assert "kernel 'pv' accessed out of bounds at line 4: index 5 of a private array (16 bytes, elements of 4 " \
           "bytes) in a write; 16 work-item(s) did" in str(err)
    assert np.all(out == 3210)                     # the store was dropped


# 64-bit integer arithmetic in index expressions: the high word is kept --------------------------
EXPRS = {
    "add7f": ("(long)i + 0x7fffffffL", lambda i: i + 0x7FFFFFFF),
    "add80": ("(long)i + 0x80000000L", lambda i: i + 0x80000000),
    "gidadd": ("(long)get_global_id(0) + 0xffffffffL", lambda i: i + 0xFFFFFFFF),
    "ugid": ("(long)((ulong)get_global_id(0) + 0x7fffffffUL)", lambda i: i + 0x7FFFFFFF),
    "scaled": ("(long)(i + 0x40000000) * 4", lambda i: (i + 0x40000000) * 4),
    "sub": ("(long)i - (1L << 32)", lambda i: i - (1 << 32)),
    "shl": ("(long)i << 31", lambda i: i << 31),
    "lt": ("(long)((long)i + 0x7fffffffL > 0x80000000L)", lambda i: int(i + 0x7FFFFFFF > 0x80000000)),
}


def test_i64_arithmetic_on_32_bit_values_keeps_the_high_word(tiny_env):
    """The 32-bit facet of an i64 was taken for the whole value: (long)i + 0x7fffffffL gave
    -2^31 + i - 1 for i >= 1."""
    src = "\n".join(f"__kernel void {k}(__global long *y) {{ int i = get_global_id(0); y[i] = {e}; }}"
                    for k, (e, _) in EXPRS.items())
    for k, (_, ref) in EXPRS.items():
        err, (y,) = run(tiny_env, src, k, [np.zeros(8, np.int64)], (8,))
        assert err is None
        assert y.tolist() == [ref(i) for i in range(8)], k


# the launch's own limits ----------------------------------------------------------------------------
def test_global_offset_past_32_bits_is_refused_at_the_call(tiny_env):
    """get_global_id(0) with an offset of 2^32 + 5 gave 5 (the offset was truncated)."""
    ctx, q = tiny_env
    prg = cl.Program(ctx, "__kernel void k(__global ulong *y) "
                          "{ y[get_global_id(0) - get_global_offset(0)] = get_global_id(0); }").build()
    b = cl.Buffer(ctx, mf.READ_WRITE, 64 * 8)
    with pytest.raises(cl.LogicError, match="INVALID_GLOBAL_OFFSET - global size 64 \\+ offset 4294967301 in "
                                            "dimension 0 exceeds 1073741824"):
        prg.k(q, (64,), None, b, global_offset=((1 << 32) + 5,))
    with pytest.raises(cl.LogicError, match="INVALID_GLOBAL_WORK_SIZE"):
        prg.k(q, ((1 << 32) + 64,), None, b)
    prg.k(q, (64,), None, b, global_offset=(1000,)).wait()              # within the limit: fine
    out = np.empty(64, np.uint64)
    cl.enqueue_copy(q, out, b).wait()
    np.testing.assert_array_equal(out, np.arange(1000, 1064))


def test_buffers_are_at_most_what_32_bit_offsets_check_exactly():
    """mncore2 offered 4 GiB buffers (a quarter of its DRAM), whose sizes the kernel saw as 0."""
    ctx = cl.Context([cl.get_device(machine="mncore2")])
    d = ctx.devices[0]
    assert d.max_mem_alloc_size == 1 << 30
    with pytest.raises(cl.Error, match="INVALID_BUFFER_SIZE"):
        cl.Buffer(ctx, mf.READ_WRITE, (1 << 32) - 8)


# item 6: what the report says -------------------------------------------------------------------
def test_float4_index_is_counted_in_float4s(tiny_env):
    src = ("__kernel void v4(__global float4 *v, __global float *out) {\n"
           "  int i = get_global_id(0);\n"
           "  out[i] = v[i + 1].x;\n"
           "}\n")
    err, _ = run(tiny_env, src, "v4", [np.zeros(16, np.float32), np.zeros(4, np.float32)], (4,))
    assert isinstance(err, cl.MemoryError)
    assert "index 4 of the buffer passed as argument 0 ('v', 64 bytes, elements of 16 bytes) in a read" in str(err)


def test_uint_index_is_printed_unsigned(tiny_env):
    src = ("__kernel void un(__global float *y) {\n"
           "  uint u = (uint)get_global_id(0) - 1u;\n"
           "  y[u] = 1.0f;\n"
           "}\n")
    err, (y,) = run(tiny_env, src, "un", [np.zeros(8, np.float32)], (8,))
    assert isinstance(err, cl.MemoryError)
    assert "index 4294967295 of the buffer passed as argument 0 ('y', 32 bytes, elements of 4 bytes) in a write; " \
           "1 work-item(s) did; their writes there were dropped" in str(err)
    np.testing.assert_array_equal(y, [1] * 7 + [0])


# the references ---------------------------------------------------------------------------------
ORACLE = textwrap.dedent("""
    import numpy as np, pyopencl as cl
    ctx = cl.Context(cl.get_platforms()[0].get_devices())
    q = cl.CommandQueue(ctx)
    src = '__kernel void far(__global float *y) { int i = get_global_id(0); y[(long)i + (1L << 32)] = 5.0f; }'
    prg = cl.Program(ctx, src).build()
    y = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 256)
    prg.far(q, (64,), None, y)
    q.finish()
""")


@pytest.mark.skipif(shutil.which("oclgrind") is None, reason="Oclgrind is not installed")
def test_oclgrind_also_calls_the_64_bit_store_out_of_bounds(tmp_path):
    """The reference: Oclgrind finds the same store out of bounds (this device reports it, above)."""
    pytest.importorskip("pyopencl")
    script = tmp_path / "far.py"
    script.write_text(ORACLE)
    r = subprocess.run(["oclgrind", sys.executable, str(script)], capture_output=True, text=True, timeout=300,
                       env={**os.environ, "PYOPENCL_COMPILER_OUTPUT": "0"})
    assert "Invalid write" in r.stderr, r.stderr[-2000:]


PROBE = textwrap.dedent("""
    import os, numpy as np, mncl as cl
    ctx = cl.create_some_context(); q = cl.CommandQueue(ctx)
    src = '__kernel void far(__global float *y) { int i = get_global_id(0); y[(long)i + (1L << 32)] = 5.0f; }'
    prg = cl.Program(ctx, src).build()
    y = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=np.zeros(64, np.float32))
    try:
        prg.far(q, (64,), None, y).wait()
        print("NO ERROR")
    except cl.Error as e:
        print("ERROR", e)
""")


def test_emulator_device_reports_the_64_bit_store_in_a_child_process():
    """The same probe as a program of its own (the default device): it exits normally with the error."""
    env = {**os.environ, "MNCL_DEVICE": "emulator", "MNCL_MACHINE": "tiny", "MNCL_CACHE": "0"}
    r = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "ERROR" in r.stdout and "kernel 'far' accessed out of bounds at line 1: index 4294967296" in r.stdout
