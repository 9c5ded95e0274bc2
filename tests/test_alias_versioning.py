"""Alias versioning (translator/restrict.py, abi.choose_variant): a kernel LLVM could optimise
better if its buffers were known apart gets a "-noalias" build from the restrict IR, which
launches whose buffers are pairwise disjoint run; a launch passing one buffer twice (or buffers
over overlapping memory) runs the usual build, built only then, and gets the answer of a device
where the arguments really share memory.  The CPU device never assumes the buffers apart."""
import re
from types import SimpleNamespace

import numpy as np
import pytest

import mncl as cl
from emulator_harness import device_env
from translator import compile_opencl
from translator.backend import abi
from translator.restrict import function_text

# x[i] += y[i], n times: 2^n x[i] when x and y are one buffer, x[i] + n y[i] when they are apart
REPEAT_ADD = """
__kernel void repeat_add(__global float *x, __global const float *y, int n)
{
    int i = get_global_id(0);
    for (int k = 0; k < n; k++)
        x[i] += y[i];
}
"""

# x[i*m + j] += y[i*m + j - 1] along each row: a running sum of the row when x and y are one buffer
ROW_CHAIN = """
__kernel void row_chain(__global float *x, __global const float *y, int m)
{
    int i = get_global_id(0);
    for (int j = 1; j < m; j++)
        x[i * m + j] += y[i * m + j - 1];
}
"""

# PolyBench mvt's first half: x1 read and written in a loop over a row of A
MVT_ROWS = """
__kernel void mvt_rows(__global const float *A, __global const float *y1, __global float *x1, int n)
{
    int i = get_global_id(0);
    if (i < n) {
        for (int j = 0; j < n; j++)
            x1[i] += A[i * n + j] * y1[j];
    }
}
"""

ONE_BUFFER = """
__kernel void scale(__global float *x, float a, int n)
{
    int i = get_global_id(0);
    for (int k = 0; k < n; k++)
        x[i] *= a;
}
"""


def loop_stores(ir_text: str, fname: str) -> int:
    """Stores in the blocks of fname that branch back to themselves (a loop's body)."""
    text = function_text(ir_text, fname)
    blocks = re.split(r"\n(?=[\w.\-]+:)", text)
    return sum(b.count(" store ") for b in blocks
               if (m := re.match(r"([\w.\-]+):", b)) and re.search(rf"label %{re.escape(m.group(1))}\b", b))


# -- the front end ---------------------------------------------------------------------------------

def test_restrict_ir_takes_the_store_out_of_the_loop():
    m = compile_opencl(MVT_ROWS, spmd=True)
    assert m.restrict_kernels == ("mvt_rows",)
    assert loop_stores(m.llvm_ir, "mvt_rows__wi") == 1          # x1 might be A or y1: stored every pass
    assert loop_stores(m.restrict_ir, "mvt_rows__wi") == 0      # noalias: x1[i] kept in a register


def test_kernels_the_restrict_ir_does_not_change_have_no_restrict_build():
    assert compile_opencl(ONE_BUFFER, spmd=True).restrict_kernels == ()
    reads = """__kernel void k(__global const float *a, __global const float *b, __global float *c)
               { int i = get_global_id(0); c[i] = a[i] + b[i]; }"""
    m = compile_opencl(reads, spmd=True)
    assert m.restrict_kernels == () and m.restrict_ir == ""
    assert compile_opencl(MVT_ROWS, spmd=True, opt_level=0).restrict_kernels == ()    # -O0: no optimiser to help
    assert compile_opencl(MVT_ROWS).restrict_ir == ""                                   # the CPU device's form


SYNCED = """
__kernel void bar(__global float *a, __global float *b, int n) {
  int i = get_global_id(0);
  for (int k = 0; k < n; k++) { a[i] += b[i]; barrier(CLK_GLOBAL_MEM_FENCE); }
}
__kernel void fen(__global float *a, __global float *b, int n) {
  int i = get_global_id(0);
  for (int k = 0; k < n; k++) { a[i] += b[i]; mem_fence(CLK_GLOBAL_MEM_FENCE); }
}
__kernel void ato(__global float *a, __global float *b, __global int *c, int n) {
  int i = get_global_id(0);
  for (int k = 0; k < n; k++) { a[i] += b[i]; atomic_inc(c); }
}
__kernel void plain(__global float *a, __global float *b, int n) {
  int i = get_global_id(0);
  for (int k = 0; k < n; k++) a[i] += b[i];
}
"""


def test_kernels_whose_work_items_synchronise_have_no_restrict_build():
    """LLVM takes a barrier, fence or atomic not to touch a noalias buffer and could move the
    buffer's accesses across it, missing another work-item's store: such kernels keep one build."""
    assert compile_opencl(SYNCED, spmd=True).restrict_kernels == ("plain",)


def test_program_binary_keeps_the_restrict_ir():
    from mncl.binary import BinaryError, dump_module, load_module
    m = compile_opencl(MVT_ROWS, spmd=True)
    back = load_module(dump_module(m))
    assert back.restrict_kernels == m.restrict_kernels and back.restrict_ir == m.restrict_ir
    bad = dump_module(m).replace(b'"restrict_ir": "', b'"restrict_ir": "x', 1)
    load_module(bad)                                        # (the IR is text: checked when compiled)
    with pytest.raises(BinaryError, match="restrict_kernels"):
        load_module(dump_module(m).replace(b'"restrict_kernels": ["mvt_rows"]', b'"restrict_kernels": ["nope"]'))


# -- choosing the build ----------------------------------------------------------------------------

def buf(address, nbytes):
    return SimpleNamespace(address=address, nbytes=nbytes, dram=0)


def test_overlapping_args():
    a, b = buf(1000, 400), buf(2000, 400)
    assert abi.overlapping_args([a, b, b"\0\0\0\0"]) == set()
    assert abi.overlapping_args([a, a]) == {0, 1}                        # one buffer twice
    assert abi.overlapping_args([a, b, buf(1396, 8)]) == {0, 2}          # a sub-range of a
    assert abi.overlapping_args([a, buf(1400, 8), b]) == set()           # touching is not overlapping
    assert abi.overlapping_args([a, buf(1200, 0)]) == set()              # no bytes
    nameless = SimpleNamespace(nbytes=4, dram=0)                         # no host range: identity only
    assert abi.overlapping_args([nameless, SimpleNamespace(nbytes=4, dram=0)]) == set()
    assert abi.overlapping_args([nameless, nameless]) == {0, 1}


@pytest.mark.parametrize("restrict, same, expect", [
    (True, False, "1d-noalias"), (True, True, "1d"), (False, False, "1d"), (False, True, "1d")])
def test_choose_variant(restrict, same, expect):
    from translator.backend import Layout
    from emulator.machine import load_machine
    lay = Layout.of(load_machine("tiny"))
    built = []

    def build(mode):
        built.append(mode)
        return SimpleNamespace(mode=mode, replicated=[], snapshots=[], resident=[], resident_one=[], pitches=[])
    x, y = buf(1000, 4 * lay.wave), buf(1000 + 8 * lay.wave, 4 * lay.wave)
    args = [x, x if same else y, b"\0\0\0\0"]
    kernel = SimpleNamespace(uses_barrier=False, local_mem_bytes=0)
    launch = SimpleNamespace(global_size=(lay.wave, 1, 1), local_size=(lay.wave, 1, 1), offset=(0, 0, 0))
    kb, _, _ = abi.choose_variant(lay, kernel, launch, args, build, set(), restrict)
    assert kb.mode == expect and built == [expect]


# -- on the devices --------------------------------------------------------------------------------

def buffers(ctx, *arrays):
    return [cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=a) for a in arrays]


def read(q, b, like):
    out = np.empty_like(like)
    cl.enqueue_copy(q, out, b)
    q.finish()
    return out


def builds(prg, ctx):
    return sorted(mode for _, mode in prg._loaded[ctx.devices[0]].kernels)


def test_emulator_same_buffer_twice_runs_the_usual_build():
    ctx, q = device_env("tiny")
    prg = cl.Program(ctx, REPEAT_ADD).build()
    assert builds(prg, ctx) == ["1d-noalias"]                # the build most launches take, at load
    n, rng = 5, np.random.default_rng(1)
    x0, y0 = rng.integers(-4, 5, 300).astype(np.float32), rng.integers(-4, 5, 300).astype(np.float32)
    x, y = buffers(ctx, x0, y0)
    prg.repeat_add(q, (300,), None, x, y, np.int32(n))
    np.testing.assert_array_equal(read(q, x, x0), x0 + n * y0)
    assert builds(prg, ctx) == ["1d-noalias"]
    prg.repeat_add(q, (300,), None, y, y, np.int32(n))       # one buffer as both: x[i] doubles n times
    np.testing.assert_array_equal(read(q, y, y0), y0 * 2.0 ** n)
    assert builds(prg, ctx) == ["1d", "1d-noalias", "1d-norep"]     # the usual builds, built now


def test_emulator_row_chain_in_one_buffer():
    ctx, q = device_env("tiny")
    prg = cl.Program(ctx, ROW_CHAIN).build()
    rows, m = 40, 24
    a0 = np.random.default_rng(2).integers(-3, 4, (rows, m)).astype(np.float32)
    (a,) = buffers(ctx, a0)
    prg.row_chain(q, (rows,), None, a, a, np.int32(m))
    np.testing.assert_array_equal(read(q, a, a0), np.cumsum(a0, axis=1))
    x, y = buffers(ctx, a0, a0 * 2)
    prg.row_chain(q, (rows,), None, x, y, np.int32(m))
    expect = a0.copy()
    expect[:, 1:] += 2 * a0[:, :-1]
    np.testing.assert_array_equal(read(q, x, a0), expect)


def test_mvt_rows_noalias_build_stages_rows_and_moves_less():
    """With the buffers apart LLVM keeps x1[i] in a register, so the loop stores nothing and the
    row plan stages A; the usual build (x1 passed as y1 too) loads and stores x1 every pass."""
    ctx, q = device_env("tiny")
    prg = cl.Program(ctx, MVT_ROWS).build()
    n, rng = 96, np.random.default_rng(3)
    A = rng.integers(-2, 3, (n, n)).astype(np.float32)
    y0, x0 = rng.integers(-2, 3, n).astype(np.float32), rng.integers(1, 3, n).astype(np.float32)
    bA, by, bx = buffers(ctx, A, y0, x0)
    ev = prg.mvt_rows(q, (n,), None, bA, by, bx, np.int32(n))
    np.testing.assert_array_equal(read(q, bx, x0), x0 + A @ y0)
    (kb,) = [kb for (_, mode), kb in prg._loaded[ctx.devices[0]].kernels.items()]
    assert kb.mode == "1d-noalias" and any(b == "A" and "row" in plan for _, b, _, plan in kb.plans), kb.plans
    d = np.diag(rng.integers(-2, 3, n)).astype(np.float32)   # x1[i] += d[i] x1[i]: the same in any order
    bd, bs = buffers(ctx, d, x0)
    ev2 = prg.mvt_rows(q, (n,), None, bd, bs, bs, np.int32(n))
    np.testing.assert_array_equal(read(q, bs, x0), x0 * (1 + np.diag(d)))
    assert builds(prg, ctx) == ["1d", "1d-noalias", "1d-norep"]     # y1 is x1: not replicated
    assert ev.stats.dram_bytes * 4 < ev2.stats.dram_bytes


def test_cpu_device_keeps_aliasing_semantics():
    ctx = cl.Context([cl.get_device("cpu")])
    q = cl.CommandQueue(ctx)
    prg = cl.Program(ctx, REPEAT_ADD + ROW_CHAIN).build()
    n, y0 = 4, np.arange(-8, 8, dtype=np.float32)
    (y,) = buffers(ctx, y0)
    prg.repeat_add(q, (16,), None, y, y, np.int32(n))
    np.testing.assert_array_equal(read(q, y, y0), y0 * 2.0 ** n)
    host = np.arange(64, dtype=np.float32)                   # two buffers over one host array
    flags = cl.mem_flags.READ_WRITE | cl.mem_flags.USE_HOST_PTR
    a, b = cl.Buffer(ctx, flags, hostbuf=host), cl.Buffer(ctx, flags, hostbuf=host)
    expect = np.cumsum(host.reshape(4, 16), axis=1).reshape(-1)
    prg.row_chain(q, (4,), None, a, b, np.int32(16))
    q.finish()
    np.testing.assert_array_equal(host, expect)


def test_a_noalias_build_that_does_not_compile_leaves_the_usual_one(monkeypatch):
    import translator.backend as backend
    from translator.module import CompileError, Diagnostic
    real = backend.compile_kernel

    def no_noalias(module, kernel, machine, mode="1d"):
        if abi.restricted(mode):
            raise CompileError([Diagnostic("error", "no room", "<kernel>", 1, 0)])
        return real(module, kernel, machine, mode)
    monkeypatch.setattr(backend, "compile_kernel", no_noalias)
    ctx, q = device_env("tiny", new=True)
    prg = cl.Program(ctx, REPEAT_ADD + "/* a build of its own (no cache hit) */").build()
    assert builds(prg, ctx) == ["1d"]
    x0, y0 = np.arange(300, dtype=np.float32), np.ones(300, np.float32)
    x, y = buffers(ctx, x0, y0)
    prg.repeat_add(q, (300,), None, x, y, np.int32(3))
    np.testing.assert_array_equal(read(q, x, x0), x0 + 3)
    assert builds(prg, ctx) == ["1d"]
