"""Issue 20, items 4, 5, 8, 14 and 15: every misuse of the runtime API is an ``mncl.Error`` naming
the call (and the argument), never a bare Python exception, a silent truncation or a dead process.

Crash probes (mapping raw device memory with bad strides or an object dtype) run in a child
process, so a regression shows as a failed test rather than a dead pytest.
"""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import mncl as cl
from mncl.binary import MAGIC, dump_module

mf = cl.mem_flags
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SRC = """
__kernel void axpy(__global float *y, __global const float *x, float a) {
    int i = get_global_id(0);
    y[i] = y[i] + a * x[i];
}
__kernel void fill(__global float *y, __global float *unused, float v) {
    y[get_global_id(0)] = v;
}
__constant float TABLE[4] = {1.5f, 2.5f, 3.5f, 4.5f};
__kernel void lookup(__global float *y) {
    int i = get_global_id(0);
    y[i] = TABLE[i & 3];
}
"""


def _cpu():
    return next(d for d in cl.get_platforms()[0].get_devices() if d.kind == "cpu")


def _tiny():
    return cl.get_device(machine="tiny")


@pytest.fixture(scope="module", params=["cpu", "tiny"])
def env(request):
    dev = _cpu() if request.param == "cpu" else _tiny()
    ctx = cl.Context([dev])
    q = cl.CommandQueue(ctx)
    prg = cl.Program(ctx, SRC).build()
    return ctx, q, prg


def _buf(ctx, n=16, value=0.0):
    return cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=np.full(n, value, np.float32))


def _raises(fn, routine, code_name, *words):
    """``fn()`` raises an mncl.Error of ``routine`` with ``code_name`` whose message has ``words``."""
    with pytest.raises(cl.Error) as info:
        r = fn()
        if isinstance(r, cl.Event):
            r.wait()
    e = info.value
    assert e.routine == routine and e.code_name == code_name, str(e)
    for w in words:
        assert w in str(e), str(e)
    return e


def run_child(code: str, env_extra=None, timeout=300):
    """Run ``code`` in a fresh interpreter (the worktree's packages); (returncode, stdout + stderr)."""
    env = {**os.environ, "PYTHONPATH": ROOT, **(env_extra or {})}
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, cwd=ROOT,
                       capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout + p.stderr


# -- item 4: objects of another context ----------------------------------------------------------
def test_objects_of_another_context_are_rejected_at_the_call(env):
    ctx, q, prg = env
    ctx2 = cl.Context(ctx.devices)
    q2 = cl.CommandQueue(ctx2)
    mine, theirs = _buf(ctx), _buf(ctx2)
    host = np.zeros(16, np.float32)
    _raises(lambda: cl.enqueue_copy(q, theirs, host), "enqueue_copy", "INVALID_CONTEXT", "another context")
    _raises(lambda: cl.enqueue_copy(q, host, theirs), "enqueue_copy", "INVALID_CONTEXT")
    _raises(lambda: cl.enqueue_copy(q, mine, theirs), "enqueue_copy", "INVALID_CONTEXT")
    _raises(lambda: cl.enqueue_fill_buffer(q, theirs, np.float32(1), 0, 64), "enqueue_fill_buffer",
            "INVALID_CONTEXT")
    _raises(lambda: cl.enqueue_map_buffer(q, theirs, cl.map_flags.READ, 0, (16,), np.float32),
            "enqueue_map_buffer", "INVALID_CONTEXT")
    _raises(lambda: prg.axpy.set_arg(1, theirs), "Kernel.set_arg", "INVALID_MEM_OBJECT",
            "argument 1 ('x'", "kernel 'axpy'", "another context")
    _raises(lambda: prg.axpy(q2, (16,), None, mine, mine, np.float32(1)), "enqueue_nd_range_kernel",
            "INVALID_CONTEXT", "kernel 'axpy'")
    ev = cl.enqueue_marker(q2)
    _raises(lambda: cl.enqueue_marker(q, wait_for=[ev]), "enqueue", "INVALID_CONTEXT", "wait_for")
    _raises(lambda: cl.enqueue_copy(q, host, mine, wait_for=[ev]), "enqueue", "INVALID_CONTEXT")


def test_buffers_of_two_emulator_machines_never_share_memory():
    """A buffer made for one emulated machine, passed to a kernel of another (whose DRAM heap
    knows nothing of it), was silently aliased with that machine's own buffers."""
    tiny = cl.Context([_tiny()])
    other = cl.Context([cl.get_device(machine="mncore2")])
    prg = cl.Program(other, SRC).build()
    _raises(lambda: prg.fill.set_arg(0, _buf(tiny)), "Kernel.set_arg", "INVALID_MEM_OBJECT", "argument 0 ('y'")


def test_a_buffer_of_a_context_with_two_devices_is_refused_on_the_device_it_does_not_live_on():
    ctx = cl.Context([_tiny(), _cpu()])
    q_cpu = cl.CommandQueue(ctx, ctx.devices[1])
    b = _buf(ctx)                     # lives on the first device, the emulator
    _raises(lambda: cl.enqueue_copy(q_cpu, np.zeros(16, np.float32), b), "enqueue_copy",
            "INVALID_MEM_OBJECT", "lives on device")
    prg = cl.Program(ctx, SRC).build()
    _raises(lambda: prg.fill(q_cpu, (16,), None, b, None, np.float32(1)), "enqueue_nd_range_kernel",
            "INVALID_MEM_OBJECT", "argument 0 ('y'")


# -- item 5: silent truncation -------------------------------------------------------------------
@pytest.mark.parametrize("size", [10.7, 16.0, "16", None, True])
def test_a_buffer_size_must_be_an_integer(env, size):
    ctx, q, prg = env
    _raises(lambda: cl.Buffer(ctx, mf.READ_WRITE, size), "Buffer", "INVALID_BUFFER_SIZE", "size")


def test_numpy_integer_sizes_are_integers(env):
    ctx, q, prg = env
    assert cl.Buffer(ctx, mf.READ_WRITE, np.int64(24)).size == 24


def test_an_integer_a_float_parameter_cannot_hold_exactly_is_refused(env):
    ctx, q, prg = env
    y, x = _buf(ctx, 16, 0.0), _buf(ctx, 16, 1.0)
    _raises(lambda: prg.axpy(q, (16,), None, y, x, 2 ** 24 + 1), "Kernel.set_arg", "INVALID_ARG_VALUE",
            "argument 2 ('a'", "kernel 'axpy'", "16777217", "no exact float32")
    _raises(lambda: prg.axpy.set_arg(2, np.int32(2 ** 24 + 1)), "Kernel.set_arg", "INVALID_ARG_VALUE",
            "argument 2 ('a'")
    prg.axpy(q, (16,), None, y, x, 2 ** 24).wait()               # exact: accepted
    prg.axpy(q, (16,), None, y, x, 0.1).wait()                   # a float rounds, as numpy's float32(0.1)
    out = np.empty(16, np.float32)
    cl.enqueue_copy(q, out, y)
    want = np.float32(2 ** 24) + np.float32(0.1)
    assert np.array_equal(out, np.full(16, want, np.float32))


def test_release_really_releases(env):
    ctx, q, prg = env
    b = _buf(ctx)
    x = _buf(ctx, 16, 1.0)
    prg.axpy.set_args(b, x, np.float32(1))
    b.release()
    b.release()                                     # a second release is harmless
    assert "released" in repr(b)
    _raises(lambda: cl.enqueue_copy(q, b, np.zeros(16, np.float32)), "enqueue_copy", "INVALID_MEM_OBJECT",
            "released")
    _raises(lambda: cl.enqueue_copy(q, np.zeros(16, np.float32), b), "enqueue_copy", "INVALID_MEM_OBJECT")
    _raises(lambda: cl.enqueue_fill_buffer(q, b, np.float32(0), 0, 64), "enqueue_fill_buffer",
            "INVALID_MEM_OBJECT")
    _raises(lambda: cl.enqueue_map_buffer(q, b, cl.map_flags.READ, 0, 4, np.float32),
            "enqueue_map_buffer", "INVALID_MEM_OBJECT")
    _raises(lambda: b.get_info(cl.mem_info.SIZE), "Buffer.get_info", "INVALID_MEM_OBJECT")
    _raises(lambda: b.int_ptr, "Buffer.int_ptr", "INVALID_MEM_OBJECT")
    # set before the release: the launch refuses it
    _raises(lambda: cl.enqueue_nd_range_kernel(q, prg.axpy, (16,), None), "enqueue_nd_range_kernel",
            "INVALID_MEM_OBJECT", "argument 0 ('y'", "released")
    _raises(lambda: prg.axpy.set_arg(0, b), "Kernel.set_arg", "INVALID_MEM_OBJECT", "argument 0 ('y'")
    y = _buf(ctx)
    prg.axpy(q, (16,), None, y, x, np.float32(3)).wait()          # the kernel works with a live buffer
    out = np.empty(16, np.float32)
    cl.enqueue_copy(q, out, y)
    assert np.array_equal(out, np.full(16, 3, np.float32))


@pytest.mark.parametrize("value", ["nan", "abc", "-1", "0", "inf"])
def test_a_bad_emulator_time_limit_names_the_variable(tiny_env, monkeypatch, value):
    ctx, q = tiny_env
    prg = cl.Program(ctx, SRC).build()
    monkeypatch.setenv("MNCL_EMU_TIME_LIMIT", value)
    _raises(lambda: prg.fill(q, (16,), None, _buf(ctx), None, np.float32(1)), "enqueue_nd_range_kernel",
            "INVALID_VALUE", "MNCL_EMU_TIME_LIMIT", value)


# -- item 8: mapping raw memory ------------------------------------------------------------------
MAP_PROBE = """
    import numpy as np, mncl as cl
    devs = cl.get_platforms()[0].get_devices()
    dev = cl.get_device(machine="tiny") if "{device}" == "tiny" else next(d for d in devs if d.kind == "cpu")
    ctx = cl.Context([dev]); q = cl.CommandQueue(ctx)
    b = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 64)
    R = cl.map_flags.READ | cl.map_flags.WRITE
    for kw in [dict(shape=(4,), dtype=object), dict(shape=(2,), dtype=np.dtype([("o", object)])),
               dict(shape=(4,), dtype=np.float32, strides=(1 << 40,)),
               dict(shape=(4,), dtype=np.float32, strides=(-4,)), dict(shape=(4, 4), dtype=np.float32, strides=(4,)),
               dict(shape=(4, 4), dtype=np.float32, strides=(64, 4)), dict(shape=(17,), dtype=np.float32),
               dict(shape=(-1,), dtype=np.float32), dict(shape=(4,), dtype="no such dtype"),
               dict(shape=(4,), dtype=np.float32, offset=-8), dict(shape=(4,), dtype=np.float32, offset=60),
               dict(shape=(4,), dtype=np.float32, order="X"), dict(shape=(4.5,), dtype=np.float32),
               dict(shape=(0,), dtype=np.void)]:
        kw.setdefault("offset", 0)
        try:
            a, ev = cl.enqueue_map_buffer(q, b, R, kw.pop("offset"), kw.pop("shape"), kw.pop("dtype"), **kw)
            a[...] = 1
            print("MAPPED", a.shape)
        except cl.LogicError as e:
            assert e.routine == "enqueue_map_buffer", e
            print("REFUSED", e.code_name)
    print("DONE")
"""


@pytest.mark.parametrize("device", ["cpu", "tiny"])
def test_map_buffer_checks_dtype_shape_strides_and_offset(device):
    rc, out = run_child(MAP_PROBE.format(device=device))
    assert rc == 0, out
    assert out.count("REFUSED INVALID_VALUE") == 14 and "MAPPED" not in out and "DONE" in out, out


def test_mapped_arrays_with_strides_see_the_buffer(env):
    ctx, q, prg = env
    data = np.arange(24, dtype=np.float32)
    b = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=data)
    ref = data.reshape(4, 6)
    a, ev = cl.enqueue_map_buffer(q, b, cl.map_flags.READ, 0, (4, 6), np.float32)
    assert np.array_equal(a, ref)
    a.base.release()
    a, ev = cl.enqueue_map_buffer(q, b, cl.map_flags.READ, 0, (6, 4), np.float32, order="F")
    assert np.array_equal(a, data.reshape(4, 6).T)
    a.base.release()
    a, ev = cl.enqueue_map_buffer(q, b, cl.map_flags.READ, 8, (3, 2), np.float32, strides=(24, 8))
    assert np.array_equal(a, data[2:].reshape(-1)[:18].reshape(3, 6)[:, ::2][:, :2])
    a.base.release()


# -- item 14: emulator DRAM is freed --------------------------------------------------------------
def test_dropped_buffers_free_emulator_dram(tiny_env):
    """Allocate and drop ten times the device's memory, 1 MiB at a time (failed at number 128)."""
    ctx, q = tiny_env
    mib = 1 << 20
    n = 10 * ctx.devices[0].global_mem_size // mib
    for i in range(n):
        b = cl.Buffer(ctx, mf.READ_WRITE, mib)
        del b
    for i in range(n):                          # release() frees as well, even while the object lives
        b = cl.Buffer(ctx, mf.READ_WRITE, mib)
        b.release()


def test_freed_dram_is_reused_without_aliasing(tiny_env):
    ctx, q = tiny_env
    prg = cl.Program(ctx, SRC).build()
    keep = []
    for k in range(6):                           # a fragmented heap: every other buffer dropped
        b = _buf(ctx, 4096, float(k))
        if k % 2:
            keep.append((k, b))
    import gc
    gc.collect()
    fresh = [_buf(ctx, 1024, 100.0 + j) for j in range(5)]      # reuse the holes
    for j, b in enumerate(fresh):
        prg.fill(q, (1024,), None, b, None, np.float32(200 + j))
    prg.lookup(q, (4096,), None, keep[0][1])                     # __constant data survived the churn
    q.finish()
    out = np.empty(4096, np.float32)
    cl.enqueue_copy(q, out, keep[0][1])
    assert np.array_equal(out, np.tile(np.float32([1.5, 2.5, 3.5, 4.5]), 1024))
    for k, b in keep[1:]:
        cl.enqueue_copy(q, out, b)
        assert np.array_equal(out, np.full(4096, k, np.float32)), k
    small = np.empty(1024, np.float32)
    for j, b in enumerate(fresh):
        cl.enqueue_copy(q, small, b)
        assert np.array_equal(small, np.full(1024, 200 + j, np.float32))


def test_dram_heap_coalesces_free_blocks():
    from mncl.dram_heap import GRAIN, DramHeap
    h = DramHeap(64, 64 + 10 * GRAIN)
    a, b, c = h.alloc(3 * GRAIN), h.alloc(3 * GRAIN), h.alloc(3 * GRAIN)
    assert (a, b, c) == (64, 64 + 3 * GRAIN, 64 + 6 * GRAIN)
    assert h.alloc(2 * GRAIN) is None                 # one grain left
    h.free(b, 3 * GRAIN)
    h.free(a, 3 * GRAIN)
    assert h.alloc(6 * GRAIN) == a                    # the two neighbours joined
    h.free(c, 3 * GRAIN - 5)                          # rounded up to the grain, as alloc rounded it
    h.free(a, 6 * GRAIN)
    assert h.largest_free() == 10 * GRAIN and h.in_use == 0


# -- item 15: errors that name the problem ---------------------------------------------------------
def test_unbalanced_quotes_in_build_options(env):
    ctx, q, prg = env
    _raises(lambda: cl.Program(ctx, SRC).build(options="-D X='1"), "Program.build", "INVALID_BUILD_OPTIONS",
            "quot")
    _raises(lambda: cl.Program(ctx, SRC).build(options=["-DX=1", 3]), "Program.build",
            "INVALID_BUILD_OPTIONS")
    _raises(lambda: cl.Program(ctx, SRC).build(options=42), "Program.build", "INVALID_BUILD_OPTIONS")


def test_wait_lists_must_hold_events(env):
    ctx, q, prg = env
    _raises(lambda: cl.enqueue_marker(q, wait_for=[1]), "enqueue", "INVALID_EVENT_WAIT_LIST", "wait_for holds 1")
    _raises(lambda: cl.enqueue_marker(q, wait_for=5), "enqueue", "INVALID_EVENT_WAIT_LIST")
    _raises(lambda: cl.enqueue_copy(q, np.zeros(4, np.float32), _buf(ctx), wait_for=[None]), "enqueue",
            "INVALID_EVENT_WAIT_LIST")
    _raises(lambda: cl.wait_for_events([1]), "wait_for_events", "INVALID_EVENT_WAIT_LIST")


def _binary_variants(good: bytes):
    doc = json.loads(good[len(MAGIC):])
    k = next(iter(doc["kernels"]))

    def mutated(f):
        d = json.loads(json.dumps(doc))
        f(d)
        return MAGIC + json.dumps(d).encode()
    return [
        MAGIC + b"[]", MAGIC + b'{"format_version": 1, "kernels": []}', MAGIC + b"[" * 100000,
        MAGIC + b"\xff\xfe", b"ELF", 17,
        mutated(lambda d: d["kernels"].__setitem__(k, [])),
        mutated(lambda d: d["kernels"][k]["params"][0].__setitem__("dtype", 3)),
        mutated(lambda d: d["kernels"][k]["params"][0].__setitem__("kind", "private")),
        mutated(lambda d: d["kernels"][k]["params"].append("x")),
        mutated(lambda d: d["kernels"][k].__setitem__("reqd_work_group_size", [0, 1])),
        mutated(lambda d: d["kernels"][k].__setitem__("uses_barrier", "yes")),
        mutated(lambda d: d["kernels"][k].__setitem__("local_mem_bytes", -4)),
        mutated(lambda d: d["kernels"][k].__setitem__("extra", 1)),
        mutated(lambda d: d.__setitem__("llvm_ir", None)),
        mutated(lambda d: d.__setitem__("options", [1])),
    ]


def test_malformed_binaries_are_invalid_binary(env):
    ctx, q, prg = env
    good = prg.get_info(cl.program_info.BINARIES)[0]
    for i, data in enumerate(_binary_variants(good)):
        e = _raises(lambda: cl.Program(ctx, ctx.devices, [data]), "Program", "INVALID_BINARY")
        assert "binary 0" in str(e), (i, str(e))
    _raises(lambda: cl.Program(ctx, ctx.devices[0], good), "Program", "INVALID_VALUE")
    _raises(lambda: cl.Program(ctx, [None], [good]), "Program", "INVALID_DEVICE")


def test_a_bad_machine_leaves_the_cpu_device_working():
    code = """
        import numpy as np, mncl as cl
        ctx = cl.create_some_context()
        b = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=np.arange(4.0))
        print("CPU OK", ctx.devices[0].kind)
    """
    rc, out = run_child(code, {"MNCL_MACHINE": "bogus", "MNCL_DEVICE": "cpu"})
    assert rc == 0 and "CPU OK cpu" in out, out
    rc, out = run_child("import mncl as cl\ntry:\n    cl.create_some_context()\nexcept cl.Error as e:\n"
                        "    print('ERR', e.routine, e.code_name, e.what)\n",
                        {"MNCL_MACHINE": "bogus", "MNCL_DEVICE": "emulator"})
    assert rc == 0 and "ERR create_some_context DEVICE_NOT_FOUND MNCL_MACHINE='bogus'" in out, out
    p = subprocess.run([sys.executable, "-m", "mncl.cli", "info"], capture_output=True, text=True, cwd=ROOT,
                       env={**os.environ, "PYTHONPATH": ROOT, "MNCL_MACHINE": "bogus"}, timeout=300)
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    assert "MNCL_MACHINE='bogus'" in p.stderr and "mncl-cpu" in p.stdout


def test_a_profile_path_that_is_not_a_directory(tiny_env, monkeypatch, tmp_path):
    ctx, q = tiny_env
    prg = cl.Program(ctx, SRC).build()
    f = tmp_path / "file"
    f.write_text("x")
    monkeypatch.setenv("MNCL_PROFILE", str(f))
    e = _raises(lambda: prg.fill(q, (16,), None, _buf(ctx), None, np.float32(1)), "enqueue_nd_range_kernel",
                "INVALID_VALUE", "MNCL_PROFILE", "kernel 'fill'")
    assert "internal error" not in str(e)


def test_overlong_identifiers_and_literals_are_diagnosed(env):
    ctx, q, prg = env
    long_name = "v" * 1500
    e = _raises(lambda: cl.Program(ctx, f"__kernel void k(__global int *y) {{ int {long_name} = 1; y[0] = {long_name}; }}"
                                   ).build(), "Program.build", "BUILD_PROGRAM_FAILURE", "identifier", "1500 characters",
                "kernel.cl:1:")
    assert "internal compiler error" not in str(e)
    e = _raises(lambda: cl.Program(ctx, "__kernel void k(__global int *y) { y[0] = " + "7" * 5000 + "; }").build(),
                "Program.build", "BUILD_PROGRAM_FAILURE", "too large", "5000 characters", "kernel.cl:1:")
    assert "internal compiler error" not in str(e) and "(5000 characters)" in str(e)


def test_none_for_a_pointer_the_kernel_never_reads(env):
    ctx, q, prg = env
    y = _buf(ctx)
    prg.fill(q, (16,), None, y, None, np.float32(2.5)).wait()
    out = np.empty(16, np.float32)
    cl.enqueue_copy(q, out, y)
    assert np.array_equal(out, np.full(16, 2.5, np.float32))


def test_the_chosen_local_size_fits_the_device(tiny_env):
    from mncl.kernel import _make_launch
    ctx, q = tiny_env
    prg = cl.Program(ctx, SRC).build()
    d = ctx.devices[0]
    for gs in [(1 << 20,), (1 << 21,), (1 << 12, 1 << 10), (96 * 1024,)]:
        launch = _make_launch(prg.fill, d, gs, None, None, False, False)
        assert np.prod(launch.local_size) <= d.max_work_group_size
        assert all(l <= m for l, m in zip(launch.local_size, d.max_work_item_sizes))


def _call_table(ctx, q, prg, b):
    """(call, routine, code) for misuses of every public call, with arguments of the wrong kind."""
    k = prg.axpy
    h = np.zeros(4, np.float32)
    return [
        (lambda: cl.Context(devices=[3]), "Context", "INVALID_DEVICE"),
        (lambda: cl.Context(devices=[]), "Context", "INVALID_VALUE"),
        (lambda: cl.Context(devices="cpu"), "Context", "INVALID_VALUE"),
        (lambda: cl.Context(devices=7), "Context", "INVALID_VALUE"),
        (lambda: ctx.get_info([1]), "Context.get_info", "INVALID_VALUE"),
        (lambda: cl.CommandQueue(None), "CommandQueue", "INVALID_CONTEXT"),
        (lambda: cl.CommandQueue(ctx, properties="x"), "CommandQueue", "INVALID_VALUE"),
        (lambda: cl.CommandQueue(ctx, device=3), "CommandQueue", "INVALID_DEVICE"),
        (lambda: q.get_info({}), "CommandQueue.get_info", "INVALID_VALUE"),
        (lambda: cl.Buffer(None, mf.READ_WRITE, 16), "Buffer", "INVALID_CONTEXT"),
        (lambda: cl.Buffer(ctx, "rw", 16), "Buffer", "INVALID_VALUE"),
        (lambda: cl.Buffer(ctx, 1.0, 16), "Buffer", "INVALID_VALUE"),
        (lambda: cl.Buffer(ctx, mf.COPY_HOST_PTR, hostbuf=np.array([None, 1])), "Buffer", "INVALID_VALUE"),
        (lambda: cl.Buffer(ctx, mf.COPY_HOST_PTR, hostbuf="text"), "Buffer", "INVALID_VALUE"),
        (lambda: b.get_info([1]), "Buffer.get_info", "INVALID_VALUE"),
        (lambda: cl.LocalMemory("x"), "LocalMemory", "INVALID_ARG_SIZE"),
        (lambda: cl.LocalMemory(2.5), "LocalMemory", "INVALID_ARG_SIZE"),
        (lambda: cl.Program(None, SRC), "Program", "INVALID_CONTEXT"),
        (lambda: cl.Program(ctx, 3), "Program", "INVALID_VALUE"),
        (lambda: cl.Program(ctx, SRC).build(devices=[None]), "Program.build", "INVALID_DEVICE"),
        (lambda: cl.Program(ctx, SRC).build(devices="cpu"), "Program.build", "INVALID_DEVICE"),
        (lambda: cl.Program(ctx, SRC).build(cache_dir=3), "Program.build", "INVALID_VALUE"),
        (lambda: prg.get_build_info([], cl.program_build_info.LOG), "Program.get_build_info", "INVALID_DEVICE"),
        (lambda: cl.Kernel(prg, 3), "Kernel", "INVALID_KERNEL_NAME"),
        (lambda: k.set_arg("a", b), "Kernel.set_arg", "INVALID_ARG_INDEX"),
        (lambda: k.set_arg(0, "b"), "Kernel.set_arg", "INVALID_ARG_VALUE"),
        (lambda: k.set_arg(2, "1.0"), "Kernel.set_arg", "INVALID_ARG_VALUE"),
        (lambda: k.set_arg(2, [1.0]), "Kernel.set_arg", "INVALID_ARG_VALUE"),
        (lambda: k.set_args(b), "Kernel.set_args", "INVALID_KERNEL_ARGS"),
        (lambda: k.set_scalar_arg_dtypes([None]), "Kernel.set_scalar_arg_dtypes", "INVALID_KERNEL_ARGS"),
        (lambda: k.set_scalar_arg_dtypes([None, None, "no such dtype"]), "Kernel.set_scalar_arg_dtypes",
         "INVALID_VALUE"),
        (lambda: k.get_arg_info("x", cl.kernel_arg_info.NAME), "Kernel.get_arg_info", "INVALID_ARG_INDEX"),
        (lambda: k.get_work_group_info(cl.kernel_work_group_info.WORK_GROUP_SIZE, None),
         "Kernel.get_work_group_info", "INVALID_DEVICE"),
        (lambda: k(None, (4,), None, b, b, 1.0), "enqueue_nd_range_kernel", "INVALID_COMMAND_QUEUE"),
        (lambda: cl.enqueue_nd_range_kernel(q, "axpy", (4,), None), "enqueue_nd_range_kernel", "INVALID_KERNEL"),
        (lambda: k(q, (4.0,), None, b, b, 1.0), "enqueue_nd_range_kernel", "INVALID_GLOBAL_WORK_SIZE"),
        (lambda: k(q, (4,), "x", b, b, 1.0), "enqueue_nd_range_kernel", "INVALID_WORK_GROUP_SIZE"),
        (lambda: k(q, (4,), None, b, b, 1.0, global_offset=(1.5,)), "enqueue_nd_range_kernel",
         "INVALID_GLOBAL_OFFSET"),
        (lambda: cl.enqueue_task(None, k), "enqueue_nd_range_kernel", "INVALID_COMMAND_QUEUE"),
        (lambda: cl.enqueue_copy(None, b, h), "enqueue_copy", "INVALID_COMMAND_QUEUE"),
        (lambda: cl.enqueue_copy(q, h, h), "enqueue_copy", "INVALID_VALUE"),
        (lambda: cl.enqueue_copy(q, b, h, device_offset="x"), "enqueue_copy", "INVALID_VALUE"),
        (lambda: cl.enqueue_copy(q, b, h, device_offset=1.5), "enqueue_copy", "INVALID_VALUE"),
        (lambda: cl.enqueue_copy(q, b, b, byte_count=2.0), "enqueue_copy", "INVALID_VALUE"),
        (lambda: cl.enqueue_copy(q, np.zeros(2, object), b), "enqueue_copy", "INVALID_VALUE"),
        (lambda: cl.enqueue_copy(q, b, h, rect=1), "enqueue_copy", "INVALID_VALUE"),
        (lambda: cl.enqueue_read_buffer(q, None, h), "enqueue_copy", "INVALID_VALUE"),
        (lambda: cl.enqueue_write_buffer(q, b, None), "enqueue_copy", "INVALID_VALUE"),
        (lambda: cl.enqueue_copy_buffer(q, b, b, byte_count="x"), "enqueue_copy_buffer", "INVALID_VALUE"),
        (lambda: cl.enqueue_fill_buffer(q, None, np.float32(1), 0, 4), "enqueue_fill_buffer",
         "INVALID_MEM_OBJECT"),
        (lambda: cl.enqueue_fill_buffer(q, b, np.float32(1), 0, 1e9), "enqueue_fill_buffer", "INVALID_VALUE"),
        (lambda: cl.enqueue_fill_buffer(q, b, object(), 0, 4), "enqueue_fill_buffer", "INVALID_VALUE"),
        (lambda: cl.enqueue_map_buffer(q, None, 1, 0, (4,), np.float32), "enqueue_map_buffer",
         "INVALID_MEM_OBJECT"),
        (lambda: cl.enqueue_map_buffer(q, b, "r", 0, (4,), np.float32), "enqueue_map_buffer", "INVALID_VALUE"),
        (lambda: cl.enqueue_marker(None), "enqueue_marker", "INVALID_COMMAND_QUEUE"),
        (lambda: cl.enqueue_barrier(3), "enqueue_barrier", "INVALID_COMMAND_QUEUE"),
        (lambda: cl.wait_for_events(None), "wait_for_events", "INVALID_EVENT_WAIT_LIST"),
        (lambda: cl.enqueue_marker(q).get_info([]), "Event.get_info", "INVALID_VALUE"),
        (lambda: cl.enqueue_marker(q).get_profiling_info("x"), "Event.get_profiling_info", "INVALID_VALUE"),
        (lambda: cl.get_platforms()[0].get_devices("gpu"), "Platform.get_devices", "INVALID_DEVICE_TYPE"),
        (lambda: cl.get_platforms()[0].get_info([]), "Platform.get_info", "INVALID_VALUE"),
        (lambda: ctx.devices[0].get_info([]), "Device.get_info", "INVALID_VALUE"),
        (lambda: cl.Arg(3), "Arg", "INVALID_VALUE"),
        (lambda: cl.Kernel(3, "axpy"), "Kernel", "INVALID_PROGRAM"),
        (lambda: cl.enqueue_map_buffer(q, b, cl.map_flags.READ, 0, (1,), np.float32)[0].base.release(queue=3),
         "MemoryMap.release", "INVALID_COMMAND_QUEUE"),
        (lambda: cl.cltypes.make_float4("x", 1, 2, 3), "cltypes.make_float4", "INVALID_VALUE"),
        (lambda: cl.cltypes.make_int2(1, 2, 3), "cltypes.make_int2", "INVALID_VALUE"),
        (lambda: k(q, (1 << 64,), None, b, b, 1.0), "enqueue_nd_range_kernel", "INVALID_GLOBAL_WORK_SIZE"),
        (lambda: k(q, (1 << 32, 1 << 32), None, b, b, 1.0), "enqueue_nd_range_kernel",
         "INVALID_GLOBAL_WORK_SIZE"),
        (lambda: k(q, (4,), None, b, b, 1.0, global_offset=(1 << 63,)), "enqueue_nd_range_kernel",
         "INVALID_GLOBAL_OFFSET"),
    ]


def test_every_public_call_names_itself_when_misused(env):
    ctx, q, prg = env
    b = _buf(ctx, 4)
    escapes = []
    for i, (call, routine, code) in enumerate(_call_table(ctx, q, prg, b)):
        try:
            r = call()
            if isinstance(r, cl.Event):
                r.wait()
            escapes.append(f"{i}: no error (expected {routine} {code})")
        except cl.Error as e:
            if (e.routine, e.code_name) != (routine, code):
                escapes.append(f"{i}: {e} (expected {routine} {code})")
        except Exception as e:  # noqa: BLE001 - what this test looks for
            escapes.append(f"{i}: {type(e).__name__}: {e} (expected {routine} {code})")
    assert not escapes, "\n".join(escapes)


def test_a_float_size_equal_to_a_cached_launch_is_still_refused(env):
    """(16.0,) equals (16,): the launch cache answered it as if it were the integer size."""
    ctx, q, prg = env
    k = prg.lookup
    k.set_args(_buf(ctx))
    cl.enqueue_nd_range_kernel(q, k, (16,), None).wait()
    _raises(lambda: cl.enqueue_nd_range_kernel(q, k, (16.0,), None), "enqueue_nd_range_kernel",
            "INVALID_GLOBAL_WORK_SIZE", "integers")
