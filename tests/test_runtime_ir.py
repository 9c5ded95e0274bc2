"""The CPU device on hand-written LLVM IR (work-group ABI of translator/module.py), no front end.

The modules here are built as the front end would build them, so the runtime
and the CPU device are tested independently of translator/.  Other runtime
tests import ``program_from_ir`` and the kernels below.
"""
import numpy as np
import pytest

import mncl as cl
from mncl.binary import dump_module
from translator.module import CompiledModule, KernelInfo, ParamInfo

SAXPY_IR = r"""
define void @saxpy__wg(ptr %args, ptr %wg) {
entry:
  %x = load ptr, ptr %args
  %ypp = getelementptr ptr, ptr %args, i64 1
  %y = load ptr, ptr %ypp
  %app = getelementptr ptr, ptr %args, i64 2
  %ap = load ptr, ptr %app
  %a = load float, ptr %ap
  %npp = getelementptr ptr, ptr %args, i64 3
  %np = load ptr, ptr %npp
  %n32 = load i32, ptr %np
  %n = sext i32 %n32 to i64
  %lsp = getelementptr i64, ptr %wg, i64 4
  %ls = load i64, ptr %lsp
  %gidp = getelementptr i64, ptr %wg, i64 7
  %gid = load i64, ptr %gidp
  %offp = getelementptr i64, ptr %wg, i64 10
  %off = load i64, ptr %offp
  %base0 = mul i64 %gid, %ls
  %base = add i64 %base0, %off
  br label %loop
loop:
  %l = phi i64 [ 0, %entry ], [ %lnext, %cont ]
  %i = add i64 %base, %l
  %inb = icmp slt i64 %i, %n
  br i1 %inb, label %body, label %cont
body:
  %xp = getelementptr float, ptr %x, i64 %i
  %xv = load float, ptr %xp
  %yp = getelementptr float, ptr %y, i64 %i
  %yv = load float, ptr %yp
  %m = fmul float %a, %xv
  %s = fadd float %m, %yv
  store float %s, ptr %yp
  br label %cont
cont:
  %lnext = add i64 %l, 1
  %done = icmp sge i64 %lnext, %ls
  br i1 %done, label %exit, label %loop
exit:
  ret void
}
"""

# out[linear id] = gid0 + 1000*gid1 + 1000000*gid2 for a 1..3-D NDRange with offsets
IDS_IR = r"""
define void @ids__wg(ptr %args, ptr %wg) {
entry:
  %o = load ptr, ptr %args
  %p1 = getelementptr i64, ptr %wg, i64 1
  %gs0 = load i64, ptr %p1
  %p2 = getelementptr i64, ptr %wg, i64 2
  %gs1 = load i64, ptr %p2
  %p4 = getelementptr i64, ptr %wg, i64 4
  %ls0 = load i64, ptr %p4
  %p5 = getelementptr i64, ptr %wg, i64 5
  %ls1 = load i64, ptr %p5
  %p6 = getelementptr i64, ptr %wg, i64 6
  %ls2 = load i64, ptr %p6
  %p7 = getelementptr i64, ptr %wg, i64 7
  %g0 = load i64, ptr %p7
  %p8 = getelementptr i64, ptr %wg, i64 8
  %g1 = load i64, ptr %p8
  %p9 = getelementptr i64, ptr %wg, i64 9
  %g2 = load i64, ptr %p9
  %p10 = getelementptr i64, ptr %wg, i64 10
  %f0 = load i64, ptr %p10
  %p11 = getelementptr i64, ptr %wg, i64 11
  %f1 = load i64, ptr %p11
  %p12 = getelementptr i64, ptr %wg, i64 12
  %f2 = load i64, ptr %p12
  %b0 = mul i64 %g0, %ls0
  %b1 = mul i64 %g1, %ls1
  %b2 = mul i64 %g2, %ls2
  br label %l2
l2:
  %k = phi i64 [ 0, %entry ], [ %k1, %l1end ]
  br label %l1
l1:
  %j = phi i64 [ 0, %l2 ], [ %j1, %l0end ]
  br label %l0
l0:
  %i = phi i64 [ 0, %l1 ], [ %i1, %l0 ]
  %r0 = add i64 %b0, %i
  %r1 = add i64 %b1, %j
  %r2 = add i64 %b2, %k
  %t1 = mul i64 %r2, %gs1
  %t2 = add i64 %t1, %r1
  %t3 = mul i64 %t2, %gs0
  %lin = add i64 %t3, %r0
  %q0 = add i64 %r0, %f0
  %q1 = add i64 %r1, %f1
  %q2 = add i64 %r2, %f2
  %v1 = mul i64 %q1, 1000
  %v2 = mul i64 %q2, 1000000
  %v3 = add i64 %q0, %v1
  %v = add i64 %v3, %v2
  %dst = getelementptr i64, ptr %o, i64 %lin
  store i64 %v, ptr %dst
  %i1 = add i64 %i, 1
  %ci = icmp slt i64 %i1, %ls0
  br i1 %ci, label %l0, label %l0end
l0end:
  %j1 = add i64 %j, 1
  %cj = icmp slt i64 %j1, %ls1
  br i1 %cj, label %l1, label %l1end
l1end:
  %k1 = add i64 %k, 1
  %ck = icmp slt i64 %k1, %ls2
  br i1 %ck, label %l2, label %exit
exit:
  ret void
}
"""

# scratch[l] += in[group*ls + l] (relies on __local scratch being zeroed), then out[group] = sum(scratch)
GROUPSUM_IR = r"""
define void @groupsum__wg(ptr %args, ptr %wg) {
entry:
  %in = load ptr, ptr %args
  %op = getelementptr ptr, ptr %args, i64 1
  %out = load ptr, ptr %op
  %sp = getelementptr ptr, ptr %args, i64 2
  %s = load ptr, ptr %sp
  %p4 = getelementptr i64, ptr %wg, i64 4
  %ls = load i64, ptr %p4
  %p7 = getelementptr i64, ptr %wg, i64 7
  %g = load i64, ptr %p7
  %base = mul i64 %g, %ls
  br label %a
a:
  %l = phi i64 [ 0, %entry ], [ %l1, %a ]
  %idx = add i64 %base, %l
  %ip = getelementptr float, ptr %in, i64 %idx
  %iv = load float, ptr %ip
  %slp = getelementptr float, ptr %s, i64 %l
  %old = load float, ptr %slp
  %new = fadd float %old, %iv
  store float %new, ptr %slp
  %l1 = add i64 %l, 1
  %ca = icmp slt i64 %l1, %ls
  br i1 %ca, label %a, label %b
b:
  %m = phi i64 [ 0, %a ], [ %m1, %b ]
  %acc = phi float [ 0.0, %a ], [ %acc1, %b ]
  %smp = getelementptr float, ptr %s, i64 %m
  %sv = load float, ptr %smp
  %acc1 = fadd float %acc, %sv
  %m1 = add i64 %m, 1
  %cb = icmp slt i64 %m1, %ls
  br i1 %cb, label %b, label %done
done:
  %dst = getelementptr float, ptr %out, i64 %g
  store float %acc1, ptr %dst
  ret void
}
"""

# y[at] = 7 from the first work-item: an out-of-bounds write when at >= len(y) or at < 0
POKE_IR = r"""
define void @poke__wg(ptr %args, ptr %wg) {
entry:
  %y = load ptr, ptr %args
  %ap = getelementptr ptr, ptr %args, i64 1
  %atp = load ptr, ptr %ap
  %at = load i32, ptr %atp
  %at64 = sext i32 %at to i64
  %dst = getelementptr i32, ptr %y, i64 %at64
  store i32 7, ptr %dst
  ret void
}
"""

# out[0..4] = (long)c, (long)s, (long)d, l, (long)f  -- scalar arguments of every size
SCALARS_IR = r"""
define void @scalars__wg(ptr %args, ptr %wg) {
entry:
  %o = load ptr, ptr %args
  %cpp = getelementptr ptr, ptr %args, i64 1
  %cp = load ptr, ptr %cpp
  %c = load i8, ptr %cp
  %spp = getelementptr ptr, ptr %args, i64 2
  %sp = load ptr, ptr %spp
  %s = load i16, ptr %sp
  %dpp = getelementptr ptr, ptr %args, i64 3
  %dp = load ptr, ptr %dpp
  %d = load double, ptr %dp
  %lpp = getelementptr ptr, ptr %args, i64 4
  %lp = load ptr, ptr %lpp
  %l = load i64, ptr %lp
  %fpp = getelementptr ptr, ptr %args, i64 5
  %fp = load ptr, ptr %fpp
  %f = load float, ptr %fp
  %c64 = sext i8 %c to i64
  %s64 = zext i16 %s to i64
  %d64 = fptosi double %d to i64
  %f64 = fptosi float %f to i64
  store i64 %c64, ptr %o
  %o1 = getelementptr i64, ptr %o, i64 1
  store i64 %s64, ptr %o1
  %o2 = getelementptr i64, ptr %o, i64 2
  store i64 %d64, ptr %o2
  %o3 = getelementptr i64, ptr %o, i64 3
  store i64 %l, ptr %o3
  %o4 = getelementptr i64, ptr %o, i64 4
  store i64 %f64, ptr %o4
  ret void
}
"""


def _p(name, kind, type_name, dtype, size, is_const=False):
    return ParamInfo(name, kind, type_name, dtype, size, is_const)


KERNELS = {
    "saxpy": (SAXPY_IR, (_p("x", "global", "float", "float32", 4, True), _p("y", "global", "float", "float32", 4),
                         _p("a", "scalar", "float", "float32", 4), _p("n", "scalar", "int", "int32", 4)), {}),
    "ids": (IDS_IR, (_p("out", "global", "long", "int64", 8),), {}),
    "groupsum": (GROUPSUM_IR, (_p("src", "global", "float", "float32", 4, True),
                               _p("out", "global", "float", "float32", 4),
                               _p("scratch", "local", "float", "float32", 4)), {"uses_barrier": True}),
    "poke": (POKE_IR, (_p("y", "global", "int", "int32", 4), _p("at", "scalar", "int", "int32", 4)), {}),
    "scalars": (SCALARS_IR, (_p("out", "global", "long", "int64", 8), _p("c", "scalar", "char", "int8", 1),
                             _p("s", "scalar", "ushort", "uint16", 2), _p("d", "scalar", "double", "float64", 8),
                             _p("l", "scalar", "long", "int64", 8), _p("f", "scalar", "float", "float32", 4)), {}),
}


def module_of(*names) -> CompiledModule:
    ir = "\n".join(KERNELS[n][0] for n in names)
    kernels = {n: KernelInfo(n, KERNELS[n][1], f"{n}__wg", **KERNELS[n][2]) for n in names}
    return CompiledModule(llvm_ir=ir, kernels=kernels, filename="handwritten.ll")


def program_from_ir(ctx, *names):
    """A built Program for hand-written kernels, through the binary path (no front end)."""
    module = module_of(*names)
    return cl.Program(ctx, ctx.devices, [dump_module(module)] * len(ctx.devices)).build()


@pytest.fixture(scope="module")
def env():
    ctx = cl.Context(cl.get_platforms()[0].get_devices(cl.device_type.CPU)[:1])
    q = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
    prg = program_from_ir(ctx, *KERNELS)
    return ctx, q, prg


@pytest.mark.parametrize("n,lsize", [(1, None), (1000, None), (1024, (256,)), (4099, None), (100_000, (1000,))])
def test_saxpy_matches_numpy(env, n, lsize):
    ctx, q, prg = env
    mf = cl.mem_flags
    rng = np.random.default_rng(n)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    bx = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
    by = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=y)
    prg.saxpy(q, (n,), lsize, bx, by, np.float32(2.5), np.int32(n))
    out = np.empty_like(y)
    cl.enqueue_copy(q, out, by)
    np.testing.assert_array_equal(out, np.float32(2.5) * x + y)


@pytest.mark.parametrize("gsize,lsize,offset", [
    ((12,), (4,), None), ((12,), None, (5,)), ((6, 10), (3, 5), None), ((6, 10), None, (1, 2)),
    ((4, 6, 10), (2, 3, 5), (7, 0, 3)), ((4, 6, 10), None, None), ((97, 3), (1, 3), None)])
def test_ndrange_ids_in_every_dimension(env, gsize, lsize, offset):
    ctx, q, prg = env
    total = int(np.prod(gsize))
    buf = cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, total * 8)
    prg.ids(q, gsize, lsize, buf, global_offset=offset)
    out = np.empty(total, np.int64)
    cl.enqueue_copy(q, out, buf)
    off = tuple(offset or (0,) * len(gsize)) + (0,) * (3 - len(gsize))
    g = tuple(gsize) + (1,) * (3 - len(gsize))
    k, j, i = np.meshgrid(np.arange(g[2]), np.arange(g[1]), np.arange(g[0]), indexing="ij")
    expect = (i + off[0]) + 1000 * (j + off[1]) + 1000000 * (k + off[2])
    np.testing.assert_array_equal(out, expect.reshape(-1))


@pytest.mark.parametrize("groups,lsize", [(1, 16), (64, 32), (1000, 8)])
def test_local_memory_is_per_group_and_zeroed(env, groups, lsize):
    ctx, q, prg = env
    x = np.arange(groups * lsize, dtype=np.float32) % 7
    bx = cl.Buffer(ctx, cl.mem_flags.COPY_HOST_PTR, hostbuf=x)
    bo = cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, groups * 4)
    prg.groupsum(q, (groups * lsize,), (lsize,), bx, bo, cl.LocalMemory(lsize * 4))
    out = np.empty(groups, np.float32)
    cl.enqueue_copy(q, out, bo)
    np.testing.assert_array_equal(out, x.reshape(groups, lsize).sum(axis=1))


def test_scalar_arguments_of_every_size(env):
    ctx, q, prg = env
    bo = cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, 5 * 8)
    prg.scalars(q, (1,), None, bo, np.int8(-5), np.uint16(65000), np.float64(-1e12), np.int64(-(2 ** 62)),
                np.float32(12345.0))
    out = np.empty(5, np.int64)
    cl.enqueue_copy(q, out, bo)
    assert out.tolist() == [-5, 65000, -10 ** 12, -(2 ** 62), 12345]
    # Python numbers are converted exactly (here: without set_scalar_arg_dtypes)
    prg.scalars(q, (1,), None, bo, -128, 0, 2.5, 2 ** 63 - 1, 3)
    cl.enqueue_copy(q, out, bo)
    assert out.tolist() == [-128, 0, 2, 2 ** 63 - 1, 3]


@pytest.mark.parametrize("at,where", [(64, "past its end"), (-1, "before its start"), (70, "past its end"),
                                      (64 + 255, "past its end"), (-256, "before its start")])
def test_out_of_bounds_write_is_caught_and_names_kernel_and_buffer(env, at, where):
    ctx, q, prg = env
    victim = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 64 * 4)
    neighbour = cl.Buffer(ctx, cl.mem_flags.COPY_HOST_PTR, hostbuf=np.full(64, 3, np.int32))
    ev = prg.poke(q, (1,), (1,), victim, np.int32(at))
    with pytest.raises(cl.MemoryError) as e:      # OUT_OF_RESOURCES, as GPUs report a bad address
        ev.wait()
    assert e.value.code == cl.status_code.OUT_OF_RESOURCES
    msg = str(e.value)
    assert "poke" in msg and "'y'" in msg and where in msg and "256 bytes" in msg
    q.finish()   # already reported through the event: not raised twice
    back = np.empty(64, np.int32)
    cl.enqueue_copy(q, back, neighbour)
    assert (back == 3).all()
    # the guard was restored: the next in-bounds kernel runs clean
    prg.poke(q, (1,), (1,), victim, np.int32(63)).wait()


def test_out_of_bounds_reported_by_finish(env):
    ctx, q, prg = env
    victim = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 16)
    prg.poke(q, (1,), (1,), victim, np.int32(4))
    with pytest.raises(cl.Error, match="OUT_OF_RESOURCES.*poke"):
        q.finish()
    q.finish()


def test_use_host_ptr_is_the_users_array(env):
    ctx, q, prg = env
    y = np.zeros(8, np.int32)
    by = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.USE_HOST_PTR, hostbuf=y)
    prg.poke(q, (1,), (1,), by, np.int32(5))
    q.finish()
    assert y.tolist() == [0, 0, 0, 0, 0, 7, 0, 0]


def test_binary_round_trip_and_kernel_info(env):
    ctx, q, prg = env
    (binary,) = prg.get_info(cl.program_info.BINARIES)
    assert binary.startswith(b"MNCL-BINARY 1\n")
    again = cl.Program(ctx, ctx.devices, [binary]).build()
    assert set(again.kernel_names.split(";")) == set(KERNELS)
    k = cl.Kernel(again, "saxpy")
    assert k.get_info(cl.kernel_info.NUM_ARGS) == 4
    assert k.get_info(cl.kernel_info.FUNCTION_NAME) == "saxpy"
    assert k.get_arg_info(2, cl.kernel_arg_info.NAME) == "a"
    assert k.get_arg_info(0, cl.kernel_arg_info.ADDRESS_QUALIFIER) == cl.kernel_arg_address_qualifier.GLOBAL
    dev = ctx.devices[0]
    assert k.get_work_group_info(cl.kernel_work_group_info.WORK_GROUP_SIZE, dev) == dev.max_work_group_size


def test_bad_binaries_are_invalid_binary(env):
    ctx = env[0]
    for data in (b"", b"ELF....", b"MNCL-BINARY 1\n{not json", b"MNCL-BINARY 1\n{\"format_version\": 99}"):
        with pytest.raises(cl.LogicError) as e:
            cl.Program(ctx, ctx.devices, [data])
        assert e.value.code == cl.status_code.INVALID_BINARY
