"""__local memory kept per L2B (abi.local_per_l2b): in a "1d" build each L2B streams only its own
work-groups' __local blocks through its PEs, for loads, stores and the claims of colliding
stores; a local size longer than an L2B's run of work-items takes the "nd" build, which streams
the wave's blocks.  Checked against numpy on `tiny` (two L2Bs of 256 work-items)."""
from __future__ import annotations

import re

import numpy as np
import pytest

import mncl as cl
from emulator_harness import buf, read

SRC = """
__kernel void rotate(__global const int *in, __global int *out, __local int *s)
{
    int l = get_local_id(0), n = get_local_size(0);
    s[l] = in[get_global_id(0)] * 3 + (int)get_group_id(0);
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = s[(l + 1) % n] - s[n - 1 - l];
}

__kernel void collide(__global int *out)          /* four work-items store to each element */
{
    __local int s[64];
    int l = get_local_id(0);
    s[l / 4] = l;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = s[l / 4];
}
"""

N = 1024                     # two waves of `tiny`


@pytest.fixture(scope="module")
def program(tiny_env_module):
    ctx, q = tiny_env_module
    return ctx, q, cl.Program(ctx, SRC).build()


@pytest.fixture(scope="module")
def tiny_env_module():
    ctx = cl.Context([cl.get_device(machine="tiny")])
    return ctx, cl.CommandQueue(ctx)


@pytest.mark.parametrize("ls, mode", [(32, "1d"), (256, "1d"), (512, "nd")])
def test_each_group_reads_its_own_block(program, modes, ls, mode):
    ctx, q, prg = program
    x = np.random.default_rng(ls).integers(-1000, 1000, N).astype(np.int32)
    ob = buf(ctx, np.zeros(N, np.int32))
    prg.rotate(q, (N,), (ls,), buf(ctx, x), ob, cl.LocalMemory(4 * ls)).wait()
    s = (x * 3 + np.arange(N) // ls).reshape(-1, ls)
    want = np.roll(s, -1, axis=1) - s[:, ::-1]
    np.testing.assert_array_equal(read(q, ob, x), want.reshape(-1))
    assert modes[-1] == mode


@pytest.mark.parametrize("ls", [64, 256])
def test_colliding_stores_leave_one_value_per_element(program, ls):
    ctx, q, prg = program
    ob = buf(ctx, np.zeros(N, np.int32))
    prg.collide(q, (N,), (ls,), ob).wait()
    got = read(q, ob, np.zeros(N, np.int32)).reshape(-1, 4)
    lid = (np.arange(N) % ls).reshape(-1, 4)
    assert (got == got[:, :1]).all()                      # one value per element
    assert np.isin(got[:, 0], lid).all() and ((got[:, 0] // 4) == lid[:, 0] // 4).all()


def test_an_l2b_streams_only_its_own_blocks():
    """On mncore2 a "1d" build moves __local rows to each L2B with its own mvp (L2Bs 0 and 1 of
    every group), never broadcasting the wave's blocks to every L2B (mvb); a gather's row MV is as
    long as the chunks the launch's blocks fill (1, 2, 4 or 8 of 512 long words)."""
    from emulator.machine import load_machine
    import translator
    from translator.backend import compile_kernel
    module = translator.compile_opencl(SRC, spmd=True)
    for name in ("rotate", "collide"):
        asm = compile_kernel(module, name, load_machine("mncore2"), "1d").asm
        blocks = dict(re.findall(r"^\.block (\w+)\n\s*(\S+ .*?)\n\.endblock", asm, re.M))
        local = [blocks[b] for b in re.findall(r"\.call (\w+) d=%bL", asm)]
        assert local and all(mv.startswith("mvp/") for mv in local), local
        assert {re.search(r"@\.(\d)", mv)[1] for mv in local} == {"0", "1"}
        assert {"mvp/n1024", "mvp/n2048", "mvp/n4096"} <= {mv.split("i")[0] for mv in local}


GATHERS = """
__kernel void two(__global const int *a, __global const int *idx, __global int *o)
{
    int i = get_global_id(0);
    int j = idx[i];
    o[i] = a[j] - a[(j * 7) & 1023];
}
"""


def test_loads_of_one_buffer_share_a_gather_pass(tiny_env):
    """Two loads of `a` through data-given indices, nothing between them that reads either or
    stores: one chunk stream serves both (one MV per stripe row of `a`, not two)."""
    from emulator.machine import load_machine
    import translator
    from translator.backend import compile_kernel
    asm = compile_kernel(translator.compile_opencl(GATHERS, spmd=True), "two", load_machine("tiny"), "1d").asm
    assert len(re.findall(r"\.call mv\d+ d=%b0\b", asm)) == 2       # (the wave loop has two copies)
    ctx, q = tiny_env
    rng = np.random.default_rng(5)
    a, idx = rng.integers(-99, 99, 1024).astype(np.int32), rng.integers(0, 1024, 512).astype(np.int32)
    ob = buf(ctx, np.zeros(512, np.int32))
    cl.Program(ctx, GATHERS).build().two(q, (512,), None, buf(ctx, a), buf(ctx, idx), ob).wait()
    np.testing.assert_array_equal(read(q, ob, idx), a[idx] - a[(idx * 7) & 1023])


CHAINED = """
__kernel void chain(__global const float *a, __global const int *idx, __global float *o)
{
    int i = get_global_id(0);
    int j = idx[i];
    float s = a[j] * 2.0f;
    s = s * a[j + 1] + 1.0f;
    s = s * a[j + 2] - 3.0f;
    s = s * a[(j * 5) & 1023] + 0.5f;
    o[i] = s;
}
"""


def test_loads_behind_arithmetic_join_the_waiting_pass(tiny_env):
    """Loads of `a` between float arithmetic that reads the ones before them (a tiled product's
    unrolled `As[ty][k] * Bs[k][tx]`) move up to the first one (Control.loads_ahead): one chunk
    stream serves all four, not one each; the result is the same, operation for operation."""
    from emulator.machine import load_machine
    import translator
    from translator.backend import compile_kernel
    asm = compile_kernel(translator.compile_opencl(CHAINED, spmd=True), "chain", load_machine("tiny"), "1d").asm
    assert len(re.findall(r"\.call mv\d+ d=%b0\b", asm)) == 2       # one pass (the wave loop has two copies)
    ctx, q = tiny_env
    rng = np.random.default_rng(7)
    a = rng.uniform(-2, 2, 1028).astype(np.float32)
    idx = rng.integers(0, 1024, 512).astype(np.int32)
    ob = buf(ctx, np.zeros(512, np.float32))
    cl.Program(ctx, CHAINED).build().chain(q, (512,), None, buf(ctx, a), buf(ctx, idx), ob).wait()
    f = np.float32
    s = a[idx] * f(2)
    s = s * a[idx + 1] + f(1)
    s = s * a[idx + 2] - f(3)
    s = s * a[(idx * 5) & 1023] + f(0.5)
    np.testing.assert_array_equal(read(q, ob, s), s)
