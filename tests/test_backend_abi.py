"""The launch ABI (translator/backend/abi.py) without the emulator, and the device protocol's
copy_in / copy_out / free on the emulator device (a released buffer's DRAM is reused)."""
import warnings
from dataclasses import dataclass, field

import numpy as np
import pytest

import mncl as cl
from emulator.machine import load_machine
from emulator_harness import buf, read
from mncl.backend import Launch, LocalScratch
from translator import CompileError
from translator.backend import Layout, abi
from translator.module import Diagnostic, KernelInfo, ParamInfo

LAY = Layout.of(load_machine("mncore2"))       # a wave of 32768 work-items, narrowable 2, 4, 8 times


@dataclass
class FakeBinary:
    """The fields of a KernelBinary the variant choice and the plan read."""
    mode: str
    replicated: list = field(default_factory=list)
    resident: list = field(default_factory=list)
    resident_one: list = field(default_factory=list)
    resident_bytes: int = 4096
    args: list = field(default_factory=list)
    widened: list = field(default_factory=list)
    row_copies: list = field(default_factory=list)
    row_stores: list = field(default_factory=list)
    snapshots: list = field(default_factory=list)
    split_copies: list = field(default_factory=list)
    row_loads: list = field(default_factory=list)
    row_store_sets: list = field(default_factory=list)
    affine_copies: list = field(default_factory=list)
    derived: list = field(default_factory=list)
    name: str = "k"


@dataclass
class Buf:
    nbytes: int
    dram: int = 1000


def kernel(n, barrier=False, local=0):
    params = tuple(ParamInfo(f"a{i}", "global", "float *", "float32", 4) for i in range(n))
    return KernelInfo("k", params, "k__wg", uses_barrier=barrier, local_mem_bytes=local)


def builds(*modes, replicated=(), resident=(), resident_one=()):
    """build(mode) over these modes (any other does not compile), and the modes it was asked for."""
    table = {m: FakeBinary(m, list(replicated), list(resident), list(resident_one)) for m in modes}
    asked = []

    def build(mode):
        asked.append(mode)
        if mode not in table:
            raise CompileError([Diagnostic("error", f"{mode} refused (test)", "k.cl", 1, 1)])
        return table[mode]
    return build, asked


def launch(gs, ls=None, off=(0, 0, 0)):
    gs = tuple(gs) + (1,) * (3 - len(gs))
    ls = tuple(ls or (1, 1, 1)) + (1,) * (3 - len(ls or (1, 1, 1)))
    return Launch(sum(g > 1 for g in gs) or 1, gs, ls, off)


x, y, big = Buf(400), Buf(400, 2000), Buf(1 << 20, 3000)
ALL = ("1d", "nd", "1d-n8", "1d-n2", "1d-norep", "1d-n8-norep", "1d-res", "1d-n8-res1", "nd-res", "1d-norep-res")

# (the launch, the arguments, the builds that compile, replicated, resident, resident_one) -> mode
VARIANTS = [
    ((launch([1 << 20]), [x, y]), ALL, (), (), (), "1d"),                         # a full 1-D launch
    ((launch([1 << 20], off=(5, 0, 0)), [x, y]), ALL, (), (), (), "nd"),          # a global offset
    ((launch([64, 64]), [x, y]), ALL, (), (), (), "nd"),                          # 2-D
    ((launch([100]), [x, y]), ALL, (), (), (), "1d-n8"),                          # few work-items: narrowed
    ((launch([10000]), [x, y]), ALL, (), (), (), "1d-n2"),                        # a quarter wave: twice
    ((launch([100]), [x, y]), ("1d", "nd"), (), (), (), "1d"),                    # the narrowed build fails
    ((launch([100], [4]), [x, LocalScratch(16)]), ALL, (), (), (), "1d-n8"),      # __local: groups tile the narrow runs
    ((launch([1 << 20]), [x, x]), ALL, (0,), (), (), "1d-norep"),                 # replicated x passed twice
    ((launch([1 << 20]), [x, y]), ALL, (0,), (), (), "1d"),                       # ... once: kept
    ((launch([100]), [x, x]), ALL, (0,), (), (), "1d-n8-norep"),
    ((launch([1 << 20]), [x, y]), ALL, (), (0,), (), "1d-res"),                   # small buffer resident
    ((launch([1 << 20]), [big, y]), ALL, (), (0,), (), "1d"),                     # ... too big
    ((launch([1 << 20]), [x, x]), ALL, (), (0,), (), "1d"),                       # ... passed twice
    ((launch([1]), [x, y]), ALL, (), (0,), (0, 1), "1d-n8-res1"),                 # one work-item
    ((launch([1 << 20]), [x, y]), ("1d", "nd"), (), (0,), (), "1d"),              # "-res" fails
    ((launch([64, 64]), [x, y]), ALL, (), (1,), (), "nd-res"),
    ((launch([1 << 20]), [x, x, y]), ALL, (0,), (2,), (), "1d-norep-res"),
    ((launch([64, 64], [16, 16]), [x, LocalScratch(16)]), ALL + ("groups",), (), (), (), "groups"),  # grouped 2-D
    ((launch([64, 64], [16, 16]), [x, LocalScratch(16)]), ALL, (), (), (), "nd"),     # ... "groups" fails
    ((launch([64, 64], [16, 16]), [x, y]), ALL + ("groups",), (), (), (), "nd"),      # ... no groups to keep
    ((launch([1 << 20], [96]), [x, LocalScratch(16)]), ALL + ("groups",), (), (), (), "groups"),  # groups straddle
    ((launch([128, 128], [64, 128]), [x, LocalScratch(16)]), ALL + ("groups",), (), (), (), "nd"),  # a group > an L2B
]


@pytest.mark.parametrize("case", VARIANTS, ids=[v[-1] + f"-{i}" for i, v in enumerate(VARIANTS)])
def test_the_variant_chosen_for_a_launch(case):
    (lnch, args), modes, rep, res, res1, want = case
    build, _ = builds(*modes, replicated=rep, resident=res, resident_one=res1)
    # the rung below a -norep build keeps the replicated list; a -norep build has none
    if any("norep" in m for m in modes):
        orig = build

        def build(mode):
            kb = orig(mode)
            if "norep" in mode:
                kb.replicated = []
            return kb
    kb, lay, shape = abi.choose_variant(LAY, kernel(len(args)), lnch, args, build, set())
    assert kb.mode == want
    assert lay.narrow == abi.narrowing(want)
    assert shape[0] * shape[1] * shape[2] <= lay.wave


def test_a_build_that_does_not_compile_is_not_tried_again():
    build, asked = builds("1d", "nd")
    failed = set()
    for _ in range(3):
        kb, lay, _ = abi.choose_variant(LAY, kernel(2), launch([100]), [x, y], build, failed)
        assert kb.mode == "1d" and lay.narrow == 1
    assert asked == ["1d-n8", "1d", "1d", "1d"] and failed == {"1d-n8"}


def test_a_build_the_launch_needs_raises_its_compile_error():
    build, _ = builds("1d-n8")
    with pytest.raises(CompileError, match="nd refused"):
        abi.choose_variant(LAY, kernel(2), launch([64, 64]), [x, y], build, set())


def test_a_1d_build_streams_one_l2bs_local_blocks():
    """local_rows: a "1d" build's L2Bs each stream the rows of their own work-groups' __local blocks
    (l2b_items / local size of them, fewer in a launch shorter than an L2B's run), and each
    group's DRAM holds its L2Bs' rows one after the other; an "nd" build streams the wave's blocks."""
    n, W = LAY.l2b_items, LAY.wave
    assert abi.local_per_l2b("1d", LAY) and not abi.local_per_l2b("nd", LAY)
    per_row = 8 * LAY.stripe                        # bytes: 8 chunks of 4 KiB
    run = abi.run_groups(LAY, 64, W)                # an L2B's run of work-groups of 64
    assert run == n // 64 and abi.run_groups(LAY, 64, 4 * W) == run and abi.run_groups(LAY, 64, 128) == 2
    assert abi.local_rows(LAY, "1d", per_row // run, run, W // 64) == (1, 8, LAY.l2b)
    assert abi.local_rows(LAY, "1d", per_row // run + 16, run, W // 64) == (2, 8, 2 * LAY.l2b)
    assert abi.local_rows(LAY, "1d", 3 * 4096 // run, run, W // 64) == (1, 3, LAY.l2b)
    assert abi.local_rows(LAY, "1d", 4096, 2, W // 64) == (1, 2, LAY.l2b)     # two groups
    assert abi.local_rows(LAY, "nd", 1024, 8, 8) == (LAY.rows(8192), 8, LAY.rows(8192))


def test_a_groups_build_spreads_whole_work_groups_over_the_l2bs():
    """A "groups" build keeps each L2B's __local blocks apart, as many work-groups as fit an L2B's
    run of slots, the wave's groups spread evenly over the L2Bs, and streams only the chunks the
    first L2B's groups fill."""
    n, L2B = LAY.l2b_items, LAY.groups * LAY.l2b
    assert abi.group_major("groups") and abi.group_major("groups-norep-res") and not abi.group_major("nd")
    assert abi.local_per_l2b("groups", LAY) and abi.local_per_l2b("groups-norep", LAY)
    assert abi.group_slots(LAY, (16, 16, 1)) == n // 256 and abi.group_slots(LAY, (n, 2, 1)) == 0
    assert abi.groups_per_l2b(LAY, 4, 4, 1) == -(-16 // L2B)
    assert abi.groups_per_l2b(LAY, 1, 1, 1) == 1 and abi.groups_per_l2b(LAY, L2B, 3, 1) == 3
    assert abi.local_rows(LAY, "groups", 2048, 2, 16) == (1, 1, LAY.l2b)       # two 2 KiB blocks: one chunk
    assert abi.wave_shape(LAY, (64, 64, 1), (16, 16, 1), True, 3 * L2B) == (64, 64, 1, 4, 4, 1)
    assert abi.wave_shape(LAY, (4096, 64, 1), (16, 16, 1), True, 3 * L2B)[3:] == (3 * L2B, 1, 1)


def test_the_plan_of_a_launch():
    """Argument block, sequencer values and the buffers to move, for a launch with a buffer passed
    twice, a replicated one, a by-value int, a wide by-value argument and a __local pointer."""
    params = (ParamInfo("a", "global", "float *", "float32", 4, True), ParamInfo("b", "global", "float *", "float32", 4),
              ParamInfo("n", "scalar", "int", "int32", 4), ParamInfo("v", "scalar", "float4", "float32", 16),
              ParamInfo("s", "local", "float *", "float32", 4), ParamInfo("c", "global", "float *", "float32", 4))
    k = KernelInfo("k", params, "k__wg", local_mem_bytes=20)
    kb = FakeBinary("nd", replicated=[0], args=["argblk", "nwx", "b0", "b1", "rows1", "p2", "nb5", "bE", "bF", "bL",
                                                "rowsL", "items"], widened=[0])
    a, b = Buf(4096, 64), Buf(100, 640)
    v = np.arange(4, dtype=np.float32).tobytes()
    args = [a, b, np.int32(-7).tobytes(), v, LocalScratch(40), b]
    plan = abi.plan_launch(LAY, k, launch([300, 2], [4, 2]), args, lambda mode: kb, set(), argblk_at=8)
    assert plan.binary is kb and plan.layout is LAY
    assert plan.buffers == [(0, True), (1, False)] and plan.read == [1] and plan.widen == [0]
    assert plan.report == 2 and plan.report_bytes == 4 * LAY.wave
    wx, wy = plan.seq["ex"], plan.seq["ey"]                      # the wave holds whole 4 x 2 groups
    assert (wx, wy) == (300, 2)
    local = (32 + 48) * (wx // 4) * (wy // 2)                     # 20 -> 32 static, 40 -> 48 for s
    assert plan.local_rows == (LAY.rows(local), 8, LAY.rows(local))  # (nd: the wave's blocks, striped)
    seq = plan.registers({"bE": 1, "bF": 2, "bL": 3, "rowsL": 4})
    assert seq == {"argblk": 8, "nwx": 1, "b0": 64, "b1": 640, "rows1": 1, "p2": -7, "nb5": 100, "bE": 1,
                   "bF": 2, "bL": 3, "rowsL": 4, "items": 600}
    blk = plan.argblk.view(np.uint32).reshape(-1, 2)
    assert list(plan.argblk[abi.WG_SLOT:abi.WG_SLOT + 16].view(np.int64)) == [2, 300, 2, 1, 4, 2, 1, 0, 0, 0,
                                                                              0, 0, 0, 75, 1, 1]
    assert list(blk[abi.PARAM_SLOT + 0]) == [4096, 4096] and list(blk[abi.PARAM_SLOT + 2]) == [2 ** 32 - 7] * 2
    assert list(blk[abi.PARAM_SLOT + 4]) == [32, 32]             # the __local argument's offset
    at = abi.wide_arg_slots(params)[3]
    assert at == abi.SHAPE_SLOT - 2 and plan.argblk[at:at + 2].tobytes() == v
    shape = dict(zip(abi.SHAPE, range(abi.SHAPE_SLOT, abi.SHAPE_SLOT + len(abi.SHAPE))))
    assert list(blk[shape["wx"]]) == [300, 300] and list(blk[shape["lbytes"]]) == [80, 80]
    assert plan.argblk[shape["rwx"]:shape["rwx"] + 1].view(np.float64)[0] == 1 / 300
    with pytest.raises(ValueError, match="no value for sequencer argument.*bE"):
        plan.registers({})


def test_the_sequencer_arguments_of_a_kernel_in_order():
    uses = {"bases": {2, "L", 0}, "widened": {1}, "rows": {"L", 0}, "params": {3}, "sizes": {0},
            "launch": True, "items": True, "extents": {"lsx", "ex"}}
    assert abi.kernel_args(uses) == ["argblk", "nwx", "nwy", "nwz", "b0", "b2", "bL", "w1", "rows0", "rowsL",
                                     "p3", "nb0", "gx", "offx", "items", "ex", "lsx"]
    assert abi.kernel_args({}) == ["argblk", "nwx", "nwy", "nwz"]


def test_wide_arguments_that_do_not_fit_the_argument_block():
    params = [ParamInfo(f"v{i}", "scalar", "float16", "float32", 64) for i in range(3)]
    with pytest.raises(abi.ABIError, match="need 24 long words"):
        abi.wide_arg_slots(params)


def test_the_tag_ranges_do_not_overlap():
    fixed = [abi.ARGBLK_TAG, abi.STORE_TAG, abi.PREFETCH_TAG]
    spans = [set(abi.CODEGEN_TAGS), set(abi.PACK_TAGS), set(fixed)]
    assert sum(map(len, spans)) == len(set().union(*spans)) and max(set().union(*spans)) < 256
    assert abi.TASK_SYNC_TAG not in abi.TASK_EVENT_TAGS


# -- the device protocol ------------------------------------------------------------------------

SRC = "__kernel void twice(__global float *a) { int i = get_global_id(0); a[i] = 2 * a[i]; }"


def test_a_released_buffer_s_dram_is_reused():
    dev = cl.get_device(machine="tiny", new=True)
    ctx = cl.Context([dev])
    q = cl.CommandQueue(ctx)
    prg = cl.Program(ctx, SRC).build()
    a = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4096)
    prg.twice.set_arg(0, a)                 # a kernel still holding it as an argument
    heap, at = dev.backend._heap, a._alloc.dram
    used = heap.in_use
    a.release()
    assert heap.in_use < used or heap.largest_free() * 8 >= 4096
    b = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4096)
    assert b._alloc.dram == at
    data = np.arange(1024, dtype=np.float32)
    cl.enqueue_copy(q, b, data)
    prg.twice(q, (1024,), None, b)
    out = np.empty_like(data)
    cl.enqueue_copy(q, out, b)
    np.testing.assert_array_equal(out, 2 * data)


def test_a_launch_enqueued_before_the_release_still_runs():
    """The buffer is freed while a recorded launch holds it: the replay places it again, and a
    buffer made since in its old DRAM is not disturbed."""
    dev = cl.get_device(machine="tiny", new=True)
    ctx = cl.Context([dev])
    q = cl.CommandQueue(ctx)
    prg = cl.Program(ctx, SRC).build()
    data = np.arange(1024, dtype=np.float32)
    a = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=data)
    rec = q.record()
    with rec:
        prg.twice(q, (1024,), None, a)
    alloc = a._alloc
    a.release()
    assert alloc.dram is None
    b = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=data + 1)
    rec.replay().wait()
    np.testing.assert_array_equal(alloc.view.view(np.float32), 2 * data)
    assert alloc.dram is not None and alloc.dram != b._alloc.dram
    prg.twice(q, (1024,), None, b)
    out = np.empty_like(data)
    cl.enqueue_copy(q, out, b)
    np.testing.assert_array_equal(out, 2 * (data + 1))


@pytest.mark.parametrize("kind", ["cpu", "emulator"])
def test_copy_in_and_copy_out(kind):
    dev = cl.get_device(kind, machine="tiny")
    a = dev.backend.allocate(16)
    dev.backend.copy_in(a, 0, np.zeros(16, np.uint8))     # (the CPU device's memory starts undefined)
    dev.backend.copy_in(a, 4, np.arange(8, dtype=np.uint8))
    out = np.zeros(10, np.uint8)
    dev.backend.copy_out(a, 2, out)
    assert list(out) == [0, 0, 0, 1, 2, 3, 4, 5, 6, 7]
    dev.backend.free(a)


def test_get_device_gives_one_device_per_machine_and_names_a_bad_one():
    assert cl.get_device(machine="tiny") is cl.get_device(machine="tiny")
    assert cl.get_device(machine="tiny", new=True) is not cl.get_device(machine="tiny")
    assert cl.get_device("cpu").kind == "cpu"
    with pytest.raises(cl.Error, match=r"get_device.*machine 'no-such-machine'"):
        cl.get_device(machine="no-such-machine")


def test_a_kernel_whose_wide_arguments_do_not_fit_is_a_build_error():
    ctx = cl.Context([cl.get_device(machine="tiny")])
    src = "__kernel void k(__global float *o, float16 a, float16 b, float16 c) { o[0] = a.s0 + b.s1 + c.s2; }"
    with pytest.raises(cl.RuntimeError, match=r"kernel 'k': the by-value arguments wider than 8 bytes need 24 long "
                                              r"words of the argument block; with 4 parameters 20 are free"):
        cl.Program(ctx, src).build()


def test_a_kernel_whose_1d_build_fails_builds_and_runs_nd(monkeypatch, modes):
    """Program.build makes the "1d" build so that compile errors belong to the build; where only
    that build fails (a resource its plans ran out of, as L2BM did for sixteen unrolled column
    loads), the build succeeds with a SlowerBuildWarning and every launch runs "nd"."""
    import translator.backend as backend
    real = backend.compile_kernel

    def compile_kernel(module, kernel, machine, mode="1d"):
        if mode.startswith("1d"):
            raise CompileError([Diagnostic("error", "the kernel's transfers need more L2BM", "kernel.cl", 1, 0)])
        return real(module, kernel, machine, mode)
    monkeypatch.setattr(backend, "compile_kernel", compile_kernel)
    ctx = cl.Context([cl.get_device(machine="tiny", new=True)])
    q = cl.CommandQueue(ctx)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        prg = cl.Program(ctx, "__kernel void k(__global float *y) { y[get_global_id(0)] += 1.0f; }").build()
    assert any(issubclass(r.category, abi.SlowerBuildWarning) and "'nd'" in str(r.message) for r in rec)
    yb = buf(ctx, np.arange(300, dtype=np.float32))
    prg.k(q, (300,), None, yb).wait()
    np.testing.assert_array_equal(read(q, yb, np.zeros(300, np.float32)), np.arange(300) + 1)
    assert modes == ["nd"]


def test_strided_long4_loads_build_and_run_on_mncore2():
    """vload4 of longs three vectors apart: its "1d" build needs more than the machine's 15 live
    mask entries, which failed Program.build; the "nd" build runs it (found by a type fuzz)."""
    src = ("__kernel void k(__global const long *in, __global int *out)\n{\n    int i = get_global_id(0);\n"
           "    long4 a = vload4(3 * i, in), b = vload4(3 * i + 1, in);\n    vstore4(convert_int4(a - b), i, out);\n}\n")
    ctx = cl.Context([cl.get_device(machine="mncore2")])
    q = cl.CommandQueue(ctx)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", abi.SlowerBuildWarning)
        prg = cl.Program(ctx, src).build()
    n = 100
    a = np.random.default_rng(3).integers(-1000, 1000, 4 * (3 * n + 2))
    ob = buf(ctx, np.zeros(4 * n, np.int32))
    prg.k(q, (n,), None, buf(ctx, a), ob).wait()
    v = a.reshape(-1, 4)
    np.testing.assert_array_equal(read(q, ob, np.zeros(4 * n, np.int32)).reshape(n, 4),
                                  v[3 * np.arange(n)] - v[3 * np.arange(n) + 1])
