"""The runtime API's shape and its errors: each user mistake raises at the call that made it."""
import time

import numpy as np
import pytest
from click.testing import CliRunner

import mncl as cl
from mncl.cli import main as cli_main
from test_runtime_ir import program_from_ir

mf = cl.mem_flags


@pytest.fixture(scope="module")
def env():
    ctx = cl.create_some_context()
    q = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
    prg = program_from_ir(ctx, "saxpy", "groupsum", "scalars", "ids")
    return ctx, q, prg


def code_of(excinfo):
    return cl.status_code.to_string(excinfo.value.code)


# -- platforms, devices, contexts ---------------------------------------------------
def test_platform_and_device_info(monkeypatch):
    monkeypatch.delenv("MNCL_DEVICE", raising=False)     # the default order (MNCL_DEVICE=cpu puts the CPU first)
    (p,) = cl.get_platforms()
    emu, d = p.get_devices()[:2]
    assert emu.type == cl.device_type.ACCELERATOR and "emulator" in emu.name
    assert p.name == "MNCL" and p.get_info(cl.platform_info.NAME) == "MNCL"
    assert d.type == cl.device_type.CPU and d.get_info(cl.device_info.TYPE) == cl.device_type.CPU
    assert d.max_work_group_size >= 256 and len(d.max_work_item_sizes) == 3
    assert d.global_mem_size > d.local_mem_size > 0 and d.max_compute_units >= 1
    assert "mncl-cpu" in d.name and d.platform is p
    assert p.get_devices(cl.device_type.CPU) == [d]
    with pytest.raises(cl.RuntimeError) as e:
        p.get_devices(cl.device_type.GPU)
    assert code_of(e) == "DEVICE_NOT_FOUND"
    with pytest.raises(AttributeError):
        d.no_such_property


def test_create_some_context_honours_mncl_device(monkeypatch):
    monkeypatch.delenv("MNCL_MACHINE", raising=False)
    for spec in ("cpu", "CPU", "mncl-cpu"):
        monkeypatch.setenv("MNCL_DEVICE", spec)
        assert cl.create_some_context(interactive=False).devices[0].type == cl.device_type.CPU
    for spec in ("emulator", ""):           # the default device is the emulator
        monkeypatch.setenv("MNCL_DEVICE", spec)
        dev = cl.create_some_context().devices[0]
        assert dev.type == cl.device_type.ACCELERATOR and "mncore2" in dev.name
    monkeypatch.setenv("MNCL_DEVICE", "no-such-gpu")
    with pytest.raises(cl.RuntimeError, match="matches no device.*mncl-cpu"):
        cl.create_some_context()
    monkeypatch.delenv("MNCL_DEVICE")
    monkeypatch.setenv("MNCL_MACHINE", "tiny")
    assert "tiny" in cl.create_some_context().devices[0].name
    monkeypatch.setenv("MNCL_MACHINE", "no-such-machine")
    with pytest.raises(cl.RuntimeError, match="MNCL_MACHINE='no-such-machine'"):
        cl.create_some_context()


def test_errors_are_one_family_with_codes():
    assert issubclass(cl.LogicError, cl.Error) and issubclass(cl.RuntimeError, cl.Error)
    assert issubclass(cl.MemoryError, cl.Error)
    with pytest.raises(cl.Error) as e:
        cl.Context(devices=["not a device"])
    assert e.value.routine == "Context" and code_of(e) == "INVALID_DEVICE"


# -- buffers and transfers --------------------------------------------------------------
def test_buffer_flags_and_sizes(env):
    ctx = env[0]
    a = np.arange(10, dtype=np.float32)
    assert cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a).size == 40
    assert cl.Buffer(ctx, mf.READ_WRITE | mf.ALLOC_HOST_PTR, 12).size == 12
    bad = [
        (dict(flags=mf.READ_ONLY, size=0), "INVALID_BUFFER_SIZE"),
        (dict(flags=mf.READ_ONLY, size=-4), "INVALID_BUFFER_SIZE"),
        (dict(flags=mf.READ_ONLY | mf.WRITE_ONLY, size=4), "INVALID_VALUE"),
        (dict(flags=mf.COPY_HOST_PTR, size=4), "INVALID_HOST_PTR"),
        (dict(flags=mf.USE_HOST_PTR | mf.COPY_HOST_PTR, hostbuf=a), "INVALID_VALUE"),
        (dict(flags=mf.COPY_HOST_PTR, size=44, hostbuf=a), "INVALID_BUFFER_SIZE"),
        (dict(flags=mf.COPY_HOST_PTR, hostbuf=a[::2]), "INVALID_VALUE"),
        (dict(flags=mf.USE_HOST_PTR, hostbuf=np.frombuffer(b"abcd", np.uint8)), "INVALID_VALUE"),
        (dict(flags=mf.READ_WRITE, size=1 << 62), "INVALID_BUFFER_SIZE"),
    ]
    for kw, code in bad:
        with pytest.raises(cl.LogicError) as e:
            cl.Buffer(ctx, **kw)
        assert code_of(e) == code, kw
    with pytest.warns(UserWarning, match="hostbuf"):
        cl.Buffer(ctx, mf.READ_ONLY, 40, hostbuf=a)


def test_enqueue_copy_every_direction_with_offsets(env):
    ctx, q, _ = env
    a = np.arange(16, dtype=np.int32)
    b1 = cl.Buffer(ctx, mf.READ_WRITE, 64)
    b2 = cl.Buffer(ctx, mf.READ_WRITE, 64)
    cl.enqueue_copy(q, b1, a)
    cl.enqueue_copy(q, b2, b1, byte_count=32, src_offset=16, dst_offset=0)
    cl.enqueue_copy(q, b2, np.array([-1, -2], np.int32), device_offset=40)
    out = np.zeros(16, np.int32)
    ev = cl.enqueue_copy(q, out, b2, is_blocking=False)
    ev.wait()
    assert out[:8].tolist() == list(range(4, 12)) and out[10:12].tolist() == [-1, -2]
    part = np.zeros(3, np.int32)
    cl.enqueue_copy(q, part, b1, device_offset=4)
    assert part.tolist() == [1, 2, 3]
    for args, kw, code in [((b1, np.zeros(17, np.int32)), {}, "INVALID_VALUE"),
                           ((np.zeros(17, np.int32), b1), {}, "INVALID_VALUE"),
                           ((b1, a), dict(device_offset=4), "INVALID_VALUE"),
                           ((b2, b1), dict(byte_count=40, src_offset=32), "INVALID_VALUE"),
                           ((b1, b1), dict(byte_count=16, src_offset=0, dst_offset=8), "MEM_COPY_OVERLAP"),
                           ((a, a), {}, "INVALID_VALUE"),
                           ((b1, a), dict(region=(1, 1)), "INVALID_VALUE")]:
        with pytest.raises(cl.RuntimeError if code == "MEM_COPY_OVERLAP" else cl.LogicError) as e:
            cl.enqueue_copy(q, *args, **kw)
        assert code_of(e) == code, (args, kw)
    with pytest.raises(cl.LogicError, match="read-only"):
        ro = np.zeros(16, np.int32)
        ro.flags.writeable = False
        cl.enqueue_copy(q, ro, b1)


def test_non_blocking_write_reads_host_array_when_it_runs_in_order(env):
    ctx, q, _ = env
    n = 1 << 20
    src = np.arange(n, dtype=np.float32)
    b = cl.Buffer(ctx, mf.READ_WRITE, src.nbytes)
    out = np.empty_like(src)
    cl.enqueue_copy(q, b, src, is_blocking=False)
    cl.enqueue_copy(q, out, b, is_blocking=False)
    q.finish()
    np.testing.assert_array_equal(out, src)


def test_fill_and_map(env):
    ctx, q, _ = env
    b = cl.Buffer(ctx, mf.READ_WRITE, 64)
    cl.enqueue_fill_buffer(q, b, np.float32(1.5), 0, 64)
    cl.enqueue_fill_buffer(q, b, np.int16(-2), 8, 8)
    ary, ev = cl.enqueue_map_buffer(q, b, cl.map_flags.READ | cl.map_flags.WRITE, 0, (16,), np.float32)
    assert ary[0] == 1.5 and ary[15] == 1.5 and ary.view(np.int16)[4:8].tolist() == [-2] * 4
    ary[15] = 9.0
    ary.base.release(q).wait()
    out = np.empty(16, np.float32)
    cl.enqueue_copy(q, out, b)
    assert out[15] == 9.0
    with pytest.raises(cl.LogicError, match="multiples"):
        cl.enqueue_fill_buffer(q, b, np.float32(0), 2, 8)
    with pytest.raises(cl.LogicError, match="do not fit"):
        cl.enqueue_fill_buffer(q, b, np.float32(0), 0, 68)
    with pytest.raises(cl.LogicError, match="do not fit"):
        cl.enqueue_map_buffer(q, b, cl.map_flags.READ, 8, (16,), np.float32)


# -- kernels: arguments and NDRanges ---------------------------------------------------------
def test_kernel_lookup(env):
    ctx, q, prg = env
    assert prg.saxpy is prg.saxpy and cl.Kernel(prg, "saxpy").function_name == "saxpy"
    with pytest.raises(cl.LogicError) as e:
        cl.Kernel(prg, "saxpi")
    assert code_of(e) == "INVALID_KERNEL_NAME" and "saxpy" in str(e.value)
    with pytest.raises(AttributeError, match="saxpi"):
        prg.saxpi
    assert len(prg.all_kernels()) == 4


@pytest.mark.parametrize("index,value,code,fragment", [
    (4, np.int32(1), "INVALID_ARG_INDEX", "has 4 arguments"),
    (-1, np.int32(1), "INVALID_ARG_INDEX", "no argument -1"),
    (2, np.float64(1.0), "INVALID_ARG_SIZE", "'a'"),
    (3, np.int64(5), "INVALID_ARG_SIZE", "'n'"),
    (3, np.float32(5), "INVALID_ARG_VALUE", "is an integer"),
    (3, 2 ** 31, "INVALID_ARG_VALUE", "does not fit in int32"),
    (3, np.uint32(2 ** 31), "INVALID_ARG_VALUE", "does not fit"),
    (3, 1.5, "INVALID_ARG_VALUE", "is an integer"),
    (2, 1e300, "INVALID_ARG_VALUE", "overflows float32"),
    (2, "2.0", "INVALID_ARG_VALUE", "str"),
    (0, np.zeros(4, np.float32), "INVALID_ARG_VALUE", "needs an mncl.Buffer"),
    (0, cl.LocalMemory(16), "INVALID_ARG_VALUE", "needs an mncl.Buffer"),
])
def test_set_arg_rejects_wrong_arguments(env, index, value, code, fragment):
    knl = cl.Kernel(env[2], "saxpy")
    with pytest.raises(cl.LogicError) as e:
        knl.set_arg(index, value)
    assert code_of(e) == code and fragment in str(e.value) and "saxpy" in str(e.value)


def test_local_arguments(env):
    ctx, q, prg = env
    knl = cl.Kernel(prg, "groupsum")
    b = cl.Buffer(ctx, mf.READ_WRITE, 64)
    with pytest.raises(cl.LogicError, match="LocalMemory"):
        knl.set_arg(2, b)
    with pytest.raises(cl.LogicError) as e:
        knl.set_arg(2, cl.LocalMemory(ctx.devices[0].local_mem_size + 1))
    assert code_of(e) == "INVALID_ARG_SIZE"
    with pytest.raises(cl.LogicError):
        cl.LocalMemory(0)


def test_set_scalar_arg_dtypes_converts_and_checks(env):
    ctx, q, prg = env
    knl = cl.Kernel(prg, "scalars")
    with pytest.raises(cl.LogicError, match="INVALID_ARG_SIZE"):
        knl.set_scalar_arg_dtypes([None, np.int8, np.uint16, np.float32, np.int64, np.float32])
    with pytest.raises(cl.LogicError, match="not a by-value scalar"):
        knl.set_scalar_arg_dtypes([np.int64, np.int8, np.uint16, np.float64, np.int64, np.float32])
    knl.set_scalar_arg_dtypes([None, np.int8, np.uint16, np.float64, np.int64, np.float32])
    out = cl.Buffer(ctx, mf.WRITE_ONLY, 40)
    knl(q, (1,), None, out, 100, 7, 3.9, -3, 2)
    with pytest.raises(cl.LogicError, match="does not fit in int8"):
        knl(q, (1,), None, out, 200, 7, 3.9, -3, 2)
    res = np.empty(5, np.int64)
    cl.enqueue_copy(q, res, out)
    assert res.tolist() == [100, 7, 3, -3, 2]


@pytest.mark.parametrize("gsize,lsize,code", [
    ((10,), (3,), "INVALID_WORK_GROUP_SIZE"),
    ((8192,), (8192,), "INVALID_WORK_ITEM_SIZE"),
    ((128, 128), (128, 64), "INVALID_WORK_GROUP_SIZE"),
    ((16,), (4, 4), "INVALID_WORK_GROUP_SIZE"),
    ((16,), (0,), "INVALID_WORK_GROUP_SIZE"),
    ((0,), None, "INVALID_GLOBAL_WORK_SIZE"),
    ((1, 1, 1, 1), None, "INVALID_WORK_DIMENSION"),
    (("16",), None, "INVALID_GLOBAL_WORK_SIZE"),
])
def test_bad_ndranges(env, gsize, lsize, code):
    ctx, q, prg = env
    b = cl.Buffer(ctx, mf.READ_WRITE, 1 << 16)
    with pytest.raises(cl.LogicError) as e:
        prg.ids(q, gsize, lsize, b)
    assert code_of(e) == code
    assert "divide" in str(e.value) if (gsize, lsize) == ((10,), (3,)) else True


def test_unset_arguments_and_wrong_arg_count(env):
    ctx, q, prg = env
    knl = cl.Kernel(prg, "saxpy")
    knl.set_arg(0, cl.Buffer(ctx, mf.READ_WRITE, 16))
    with pytest.raises(cl.LogicError) as e:
        cl.enqueue_nd_range_kernel(q, knl, (4,), None)
    assert code_of(e) == "INVALID_KERNEL_ARGS" and "argument 1 ('y'" in str(e.value)
    with pytest.raises(cl.LogicError, match="takes 4 arguments, got 2"):
        knl(q, (4,), None, 1, 2)


def test_empty_ndrange_allowed_when_asked(env):
    ctx, q, prg = env
    b = cl.Buffer(ctx, mf.READ_WRITE, 8)
    ev = prg.ids(q, (0,), None, b, allow_empty_ndrange=True)
    ev.wait()
    assert ev.command_execution_status == cl.command_execution_status.COMPLETE


def test_enqueue_task_and_program_not_built(env):
    ctx, q, prg = env
    out = cl.Buffer(ctx, mf.WRITE_ONLY, 8)
    k = cl.Kernel(prg, "ids")
    k.set_arg(0, out)
    cl.enqueue_task(q, k).wait()
    res = np.empty(1, np.int64)
    cl.enqueue_copy(q, res, out)
    assert res[0] == 0
    unbuilt = cl.Program(ctx, "__kernel void f() {}")
    with pytest.raises(cl.LogicError, match="has not been built"):
        unbuilt.f
    assert unbuilt.get_build_info(ctx.devices[0], cl.program_build_info.STATUS) == cl.build_status.NONE


# -- queues and events ----------------------------------------------------------------------------
def test_enqueue_returns_at_once_and_events_progress(env):
    ctx, q, prg = env
    n = 1 << 22
    x = cl.Buffer(ctx, mf.READ_WRITE, n * 4)
    y = cl.Buffer(ctx, mf.READ_WRITE, n * 4)
    cl.enqueue_fill_buffer(q, x, np.float32(1), 0, n * 4)
    cl.enqueue_fill_buffer(q, y, np.float32(0), 0, n * 4)
    t0 = time.perf_counter()
    evs = [prg.saxpy(q, (n,), None, x, y, np.float32(1), np.int32(n)) for _ in range(5)]
    enqueue_time = time.perf_counter() - t0
    cl.wait_for_events(evs)
    total = time.perf_counter() - t0
    assert enqueue_time < total / 2
    assert all(e.command_execution_status == cl.command_execution_status.COMPLETE for e in evs)
    p = [e.profile for e in evs]
    for a in p:
        assert a.queued <= a.submit <= a.start <= a.end
    for a, b in zip(p, p[1:]):
        assert a.end <= b.start          # in order
    out = np.empty(4, np.float32)
    cl.enqueue_copy(q, out, y)
    assert out.tolist() == [5.0] * 4


def test_profiling_needs_the_queue_property(env):
    ctx, _, prg = env
    q = cl.CommandQueue(ctx)
    ev = cl.enqueue_fill_buffer(q, cl.Buffer(ctx, mf.READ_WRITE, 8), np.int32(0), 0, 8)
    ev.wait()
    with pytest.raises(cl.RuntimeError) as e:
        ev.profile.end
    assert code_of(e) == "PROFILING_INFO_NOT_AVAILABLE"
    with cl.CommandQueue(ctx) as q2:
        cl.enqueue_marker(q2)
    with pytest.raises(cl.LogicError):
        cl.CommandQueue(ctx, properties=1 << 10)


def test_wait_for_across_queues(env):
    ctx, q, prg = env
    q2 = cl.CommandQueue(ctx)
    n = 1 << 20
    b = cl.Buffer(ctx, mf.READ_WRITE, n * 4)
    big = np.arange(n, dtype=np.float32)
    ev = cl.enqueue_copy(q, b, big, is_blocking=False)
    out = np.empty(n, np.float32)
    cl.enqueue_copy(q2, out, b, wait_for=[ev])
    np.testing.assert_array_equal(out, big)


def test_mncl_info_cli(monkeypatch):
    monkeypatch.delenv("MNCL_DEVICE", raising=False)
    r = CliRunner().invoke(cli_main, ["info", "-l"])
    assert r.exit_code == 0 and r.output.startswith("Platform #0: MNCL\n") and "Device #0: MN-Core 2 (emulator" in r.output and "mncl-cpu" in r.output
    r = CliRunner().invoke(cli_main, ["info"])
    assert r.exit_code == 0
    assert "Max work group size" in r.output and "Device Type" in r.output and "CPU" in r.output


def test_list_sizes_and_empty_ranges_are_cached_correctly(env):
    ctx, q, prg = env
    b = cl.Buffer(ctx, mf.READ_WRITE, 64 * 8)
    for _ in range(3):
        prg.ids(q, [8, 8], [4, 2], b).wait()
    res = np.empty(64, np.int64)
    cl.enqueue_copy(q, res, b)
    assert res[9] == 1 + 1000 * 1
    prg.ids(q, (0,), None, b, allow_empty_ndrange=True).wait()
    with pytest.raises(cl.LogicError, match="INVALID_GLOBAL_WORK_SIZE"):
        prg.ids(q, (0,), None, b)
