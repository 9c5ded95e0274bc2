"""Issue 19's OpenCL-path faults, on the CPU device and the emulator device (tiny), against numpy.

- A kernel parameter changed before a barrier is private to each work-item (the CPU device's
  work-group functions shared one copy: wrong values, and pointers advanced once per work-item
  that wrote far out of bounds and killed the process).
- Several work-items storing to one element leave one of the stored values (the emulator
  device's scatter left the sum of their changes).
"""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import mncl as cl


def device(kind):
    devices = cl.get_platforms()[0].get_devices()
    if kind == "emulator":
        return cl.get_device(machine="tiny")
    return next(d for d in devices if d.kind == kind)


@pytest.fixture(scope="module", params=["cpu", "emulator"])
def env(request):
    ctx = cl.Context([device(request.param)])
    return ctx, cl.CommandQueue(ctx)


class ByValue:
    """A by-value vector argument (an array that is not to become a buffer)."""

    def __init__(self, value):
        self.value = value


def run(env, src, kernel, gsize, lsize, *args, out):
    """Launch ``kernel`` with numpy arrays as buffers; returns the array at position ``out``, read back."""
    ctx, q = env
    mf = cl.mem_flags
    bufs = [cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=a) if isinstance(a, np.ndarray)
            else a.value if isinstance(a, ByValue) else a for a in args]
    getattr(cl.Program(ctx, src).build(), kernel)(q, gsize, lsize, *bufs)
    res = np.empty_like(args[out])
    cl.enqueue_copy(q, res, bufs[out])
    return res


# ------------------------------------------------------------------ parameters across barriers
PARAMS = r"""
__kernel void scalar_param(__global int *p, int base) {
    int gid = get_global_id(0);
    base += gid;
    barrier(CLK_LOCAL_MEM_FENCE);
    p[gid] = base;
}
__kernel void pointer_param(__global int *p, __global const int *a) {
    int gid = get_global_id(0);
    p += gid;
    a += 2 * gid;
    barrier(CLK_LOCAL_MEM_FENCE);
    *p = a[1] + (int)get_local_id(0);
}
__kernel void vector_param(__global int2 *o, int2 v) {
    int gid = get_global_id(0);
    v.y = gid;
    v[0] += 1;
    barrier(CLK_LOCAL_MEM_FENCE);
    o[gid] = v;
}
"""


def test_scalar_parameter_changed_before_a_barrier_is_per_work_item(env):
    n = 64
    o = run(env, PARAMS, "scalar_param", (n,), (16,), np.zeros(n, np.int32), np.int32(100), out=0)
    np.testing.assert_array_equal(o, 100 + np.arange(n))


def test_pointer_and_vector_parameters_changed_before_a_barrier(env):
    n = 64
    a = np.arange(2 * n, dtype=np.int32) * 3
    o = run(env, PARAMS, "pointer_param", (n,), (16,), np.zeros(n, np.int32), a, out=0)
    np.testing.assert_array_equal(o, a[1::2] + np.arange(n) % 16)
    v = run(env, PARAMS, "vector_param", (n,), (16,), np.zeros((n, 2), np.int32),
            ByValue(np.array([5, 6], np.int32)), out=0)
    np.testing.assert_array_equal(v, np.stack([np.full(n, 6), np.arange(n)], 1))


BLOCKED_MATMUL = r"""
#define T 8
/* Each work-item moves its pointers to its own elements first, then walks the tiles
   (the register-blocked GEMMs of the public benchmark suites do this). */
__kernel void blocked(__global const float *A, __global const float *B, __global float *C, int n) {
    __local float as[T][T], bs[T][T];
    int tx = get_local_id(0), ty = get_local_id(1);
    A += get_global_id(1) * n + tx;
    B += ty * n + get_global_id(0);
    C += get_global_id(1) * n + get_global_id(0);
    float acc = 0.0f;
    for (int t = 0; t < n; t += T) {
        as[ty][tx] = A[t];
        bs[ty][tx] = B[t * n];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < T; k++)
            acc += as[ty][k] * bs[k][tx];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    *C = acc;
}
"""


def test_pointers_advanced_before_a_barrier_loop_in_a_child_process():
    """On the CPU device this wrote far out of bounds and killed the process (SIGSEGV): run in
    a child so a crash fails the test instead of the suite."""
    code = textwrap.dedent(f"""
        import numpy as np, mncl as cl
        dev = next(d for d in cl.get_platforms()[0].get_devices() if d.kind == "cpu")
        ctx = cl.Context([dev]); q = cl.CommandQueue(ctx)
        n = 256
        rng = np.random.default_rng(5)
        a, b = (rng.integers(-4, 5, (n, n)).astype(np.float32) for _ in range(2))
        mf = cl.mem_flags
        ab, bb = (cl.Buffer(ctx, mf.COPY_HOST_PTR, hostbuf=x) for x in (a, b))
        cb = cl.Buffer(ctx, 0, a.nbytes)
        cl.Program(ctx, {BLOCKED_MATMUL!r}).build().blocked(q, (n, n), (8, 8), ab, bb, cb, np.int32(n))
        c = np.empty_like(a); cl.enqueue_copy(q, c, cb)
        assert np.array_equal(c, a @ b), "wrong product"
        print("ok")
    """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "ok", f"exit {r.returncode}: {r.stderr[-2000:]}"


def test_blocked_matmul_on_the_emulator():
    ctx = cl.Context([device("emulator")])
    n = 32
    rng = np.random.default_rng(6)
    a, b = (rng.integers(-4, 5, (n, n)).astype(np.float32) for _ in range(2))
    c = run((ctx, cl.CommandQueue(ctx)), BLOCKED_MATMUL, "blocked", (n, n), (8, 8), a, b,
            np.zeros_like(a), np.int32(n), out=2)
    np.testing.assert_array_equal(c, a @ b)


# ------------------------------------------------------------------ several stores to one element
SAME_ELEMENT = r"""
__kernel void store_seven(__global const int *idx, __global int *out) {
    int i = get_global_id(0);
    out[idx[i]] = 7;
}
__kernel void store_own(__global const int *idx, __global int *out) {
    int i = get_global_id(0);
    out[idx[i]] = 1000 + i;
}
"""

@pytest.mark.parametrize("kind", ["cpu", "emulator"])
def test_many_stores_to_one_element_leave_one_stored_value(kind):
    ctx = cl.Context([device(kind)])
    env = (ctx, cl.CommandQueue(ctx))
    n, writers = 1024, 32
    idx = (np.random.default_rng(7).permutation(n) % (n // writers)).astype(np.int32)
    out = run(env, SAME_ELEMENT, "store_seven", (n,), None, idx, np.zeros(n, np.int32), out=1)
    np.testing.assert_array_equal(out, np.where(np.arange(n) < n // writers, 7, 0))
    out = run(env, SAME_ELEMENT, "store_own", (n,), None, idx, np.zeros(n, np.int32), out=1)
    for e in range(n // writers):                # one of the values stored to it, whichever
        assert out[e] in 1000 + np.flatnonzero(idx == e), f"element {e} holds {out[e]}"


# ------------------------------------------------------------------ private memory beyond the stack
@pytest.mark.parametrize("src, lsize, says", [
    ("__kernel void k(__global float *o) { float t[4 << 20]; int i = get_global_id(0);"
     " for (int j = 0; j < (4 << 20); j += 4096) t[j + i] = j; o[i] = t[i + 4096]; }",
     (4,), "bytes of private memory per work-group"),
    ("__kernel void k(__global float *o) { float t[65536]; int l = get_local_id(0);"
     " for (int j = 0; j < 65536; j++) t[j] = j + l; barrier(CLK_LOCAL_MEM_FENCE);"
     " o[get_global_id(0)] = t[65535 - l]; }",
     (256,), "for each of its 256 work-items"),
])
def test_private_memory_beyond_the_thread_stack_is_an_error_not_a_crash(src, lsize, says):
    """A work-group's private storage lives on the thread's stack on the CPU device: more than fits
    overflowed it (SIGSEGV); it is an OUT_OF_RESOURCES error naming the numbers, in a child process
    so that a crash fails the test instead of the suite."""
    code = textwrap.dedent(f"""
        import mncl as cl
        dev = next(d for d in cl.get_platforms()[0].get_devices() if d.kind == "cpu")
        ctx = cl.Context([dev]); q = cl.CommandQueue(ctx)
        ob = cl.Buffer(ctx, 0, 4 * 1024)
        try:
            cl.Program(ctx, {src!r}).build().k(q, (1024,), {lsize!r}, ob)
            q.finish()
        except cl.Error as e:
            print(e)
    """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, f"exit {r.returncode}: {r.stderr[-2000:]}"
    assert "OUT_OF_RESOURCES" in r.stdout and says in r.stdout, r.stdout
