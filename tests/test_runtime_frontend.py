"""The runtime with the real front end: by-value vectors, structs and half, attributes, threads, guards."""
import threading

import numpy as np
import pytest

import mncl as cl
from mncl import cltypes

pytest.importorskip("translator")
try:
    from translator import compile_opencl  # noqa: F401
except ImportError:
    pytest.skip("the OpenCL C front end is not available yet", allow_module_level=True)

mf = cl.mem_flags

SRC = """
typedef struct { float scale; int offset; } params_t;

__kernel void vec_args(__global float *out, float4 v, float3 w, int2 k, params_t p, half h)
{
    out[0] = v.x; out[1] = v.y; out[2] = v.z; out[3] = v.w;
    out[4] = w.x; out[5] = w.y; out[6] = w.z;
    out[7] = (float)k.x; out[8] = (float)k.y;
    out[9] = p.scale; out[10] = (float)p.offset;
    out[11] = vload_half(0, (__private half *)&h);
}

__kernel __attribute__((reqd_work_group_size(8, 1, 1)))
void fixed(__global int *out) { out[get_global_id(0)] = get_local_size(0); }

__kernel void block_sum(__global const float *in, __global float *out)
{
    __local float tile[64];
    int l = get_local_id(0);
    tile[l] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = 32; s > 0; s >>= 1) {
        if (l < s) tile[l] += tile[l + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0) out[get_group_id(0)] = tile[0];
}

__kernel void overrun(__global int *a, int n) { int i = get_global_id(0); a[i + n] = i; }
"""


@pytest.fixture(scope="module")
def env():
    ctx = cl.create_some_context()
    q = cl.CommandQueue(ctx)
    return ctx, q, cl.Program(ctx, SRC).build()


def test_by_value_vectors_structs_and_half(env):
    ctx, q, prg = env
    out = cl.Buffer(ctx, mf.WRITE_ONLY, 12 * 4)
    params = np.array((2.5, -7), dtype=[("scale", np.float32), ("offset", np.int32)])[()]
    for v, w, k in [(cltypes.make_float4(1, 2, 3, 4), cltypes.make_float3(5, 6, 7), cltypes.make_int2(8, 9)),
                    (np.array([1, 2, 3, 4], np.float32), [5.0, 6.0, 7.0], (8, 9))]:
        prg.vec_args(q, (1,), None, out, v, w, k, params, np.float16(0.5))
        res = np.empty(12, np.float32)
        cl.enqueue_copy(q, res, out)
        assert res.tolist() == [1, 2, 3, 4, 5, 6, 7, 8, 9, 2.5, -7, 0.5]
    with pytest.raises(cl.LogicError, match="has 4 components; got 2"):
        prg.vec_args.set_arg(1, [1.0, 2.0])
    with pytest.raises(cl.LogicError, match="INVALID_ARG_SIZE"):
        prg.vec_args.set_arg(1, np.zeros(3, np.float32))
    with pytest.raises(cl.LogicError, match="does not fit in int32"):
        prg.vec_args.set_arg(3, (1, 2 ** 40))


def test_reqd_work_group_size(env):
    ctx, q, prg = env
    out = cl.Buffer(ctx, mf.WRITE_ONLY, 32 * 4)
    prg.fixed(q, (32,), None, out)              # None: the required size is used
    res = np.empty(32, np.int32)
    cl.enqueue_copy(q, res, out)
    assert (res == 8).all()
    with pytest.raises(cl.LogicError, match="reqd_work_group_size"):
        prg.fixed(q, (32,), (16,), out)
    dev = ctx.devices[0]
    assert prg.fixed.get_work_group_info(cl.kernel_work_group_info.COMPILE_WORK_GROUP_SIZE, dev) == [8, 1, 1]
    assert prg.fixed.get_work_group_info(cl.kernel_work_group_info.WORK_GROUP_SIZE, dev) == 8


def test_static_local_arrays_and_barriers_on_the_thread_pool(env):
    ctx, q, prg = env
    groups = 4096                                  # 2^18 work-items: split over the pool
    x = np.random.default_rng(3).integers(-100, 100, groups * 64).astype(np.float32)
    bx = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
    bo = cl.Buffer(ctx, mf.WRITE_ONLY, groups * 4)
    prg.block_sum(q, x.shape, (64,), bx, bo)
    res = np.empty(groups, np.float32)
    cl.enqueue_copy(q, res, bo)
    np.testing.assert_array_equal(res, x.reshape(groups, 64).sum(axis=1))
    assert prg.block_sum.get_work_group_info(cl.kernel_work_group_info.LOCAL_MEM_SIZE, ctx.devices[0]) == 256


def test_queues_run_concurrently_from_threads(env):
    ctx, _, prg = env
    errors = []

    def job(seed):
        try:
            q = cl.CommandQueue(ctx)
            x = np.random.default_rng(seed).standard_normal(64 * 256).astype(np.float32)
            bx = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
            bo = cl.Buffer(ctx, mf.WRITE_ONLY, 256 * 4)
            for _ in range(20):
                prg.block_sum(q, x.shape, (64,), bx, bo)
            res = np.empty(256, np.float32)
            cl.enqueue_copy(q, res, bo)
            np.testing.assert_allclose(res, x.reshape(256, 64).sum(axis=1), rtol=1e-4, atol=1e-4)
        except Exception as e:   # noqa: BLE001 - collected for the main thread
            errors.append(e)
    threads = [threading.Thread(target=job, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_out_of_bounds_from_c_is_caught(env):
    ctx, q, prg = env
    a = cl.Buffer(ctx, mf.READ_WRITE, 16 * 4)
    ev = prg.overrun(q, (16,), None, a, np.int32(2))
    with pytest.raises(cl.MemoryError, match="kernel 'overrun' wrote out of bounds .* argument 0 \\('a'"):
        ev.wait()
    prg.overrun(q, (16,), None, a, np.int32(0)).wait()


def test_a_slow_small_ndrange_is_split_over_threads_after_its_first_run(env):
    ctx, q, _ = env
    prg = cl.Program(ctx, """
    __kernel void busy(__global const float *x, __global float *out, int n, int m)
    {
        float acc = 0.0f;
        for (int k = 0; k < n; k++)
            acc = acc * 0.999f + x[(k + get_global_id(0)) % m];
        out[get_global_id(0)] = acc;
    }""").build()
    m, items, n = 97, 64, 20000
    x = np.random.default_rng(5).random(m).astype(np.float32)
    bx = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
    bo = cl.Buffer(ctx, mf.WRITE_ONLY, items * 4)
    results = []
    for _ in range(3):
        prg.busy(q, (items,), None, bx, bo, np.int32(n), np.int32(m))
        res = np.empty(items, np.float32)
        cl.enqueue_copy(q, res, bo)
        results.append(res)
    loaded = prg._loaded[ctx.devices[0]]
    assert any(name == "busy" for name, _ in loaded.slow)      # > 0.5 ms on one thread: split
    for r in results[1:]:
        np.testing.assert_array_equal(r, results[0])
    acc = np.zeros(items, np.float32)
    idx = np.arange(items)
    for k in range(n):
        acc = acc * np.float32(0.999) + x[(k + idx) % m]
    np.testing.assert_allclose(results[0], acc, rtol=1e-4)
