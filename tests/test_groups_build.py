"""The "groups" build (abi.group_major): a launch that keeps its work-groups whole and would run
"nd" instead places each work-group in a run of slots inside one L2B, the wave's groups spread
over the L2Bs (Codegen.group_positions), so each L2B streams only its own groups' __local blocks.
Checked against numpy on `tiny` (two L2Bs of 256 slots) and `mncore2`: every work-item's ids, a
tiled matrix product, and the modeled steps it saves against the "nd" build."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import mncl as cl
from emulator_harness import buf, read
from translator.backend import abi

IDS = """
__kernel void ids(__global int *out)
{
    __local int s[1];
    int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
    int i = (z * get_global_size(1) + y) * get_global_size(0) + x;
    if (get_local_id(0) == 0 && get_local_id(1) == 0 && get_local_id(2) == 0)
        s[0] = (get_group_id(2) * get_num_groups(1) + get_group_id(1)) * get_num_groups(0) + get_group_id(0);
    barrier(CLK_LOCAL_MEM_FENCE);
    out[8 * i + 0] = x;
    out[8 * i + 1] = y;
    out[8 * i + 2] = z;
    out[8 * i + 3] = get_local_id(0);
    out[8 * i + 4] = get_local_id(1);
    out[8 * i + 5] = get_local_id(2);
    out[8 * i + 6] = s[0];
    out[8 * i + 7] = 1;
}
"""

# the OpenCL SDK's tiled matrix product of benchmarks/real_kernels, with 8 x 8 tiles
TILED = (Path(__file__).resolve().parents[1] / "benchmarks" / "real_kernels" / "gemm_tiled.cl").read_text() \
    .replace("#define TS 16", "#define TS 8")


def env(machine):
    ctx = cl.Context([cl.get_device(machine=machine)])
    return ctx, cl.CommandQueue(ctx)


# (machine, global size, local size): several groups an L2B, groups past one wave, 3-D, odd local
# sizes whose groups do not tile an L2B's run, a 1-D launch with a global offset
SHAPES = [("tiny", (16, 16, 1), (4, 4, 1)), ("tiny", (64, 24, 1), (8, 3, 1)), ("tiny", (12, 10, 6), (3, 5, 2)),
          ("tiny", (96, 8, 1), (96, 1, 1)), ("tiny", (40, 40, 1), (20, 2, 1)),
          ("mncore2", (96, 80, 1), (16, 16, 1)), ("mncore2", (24, 12, 20), (6, 3, 4))]


@pytest.mark.parametrize("machine, gs, ls", SHAPES, ids=[f"{m}-{g}-{l}" for m, g, l in SHAPES])
def test_every_work_item_gets_its_ids_and_its_groups_local_block(modes, machine, gs, ls):
    ctx, q = env(machine)
    n = gs[0] * gs[1] * gs[2]
    ob = buf(ctx, np.zeros(8 * n, np.int32))
    cl.Program(ctx, IDS).build().ids(q, gs, ls, ob).wait()
    got = read(q, ob, np.zeros(8 * n, np.int32)).reshape(gs[2], gs[1], gs[0], 8)
    z, y, x = np.meshgrid(*(np.arange(g) for g in gs[::-1]), indexing="ij")
    groups = (z // ls[2] * (gs[1] // ls[1]) + y // ls[1]) * (gs[0] // ls[0]) + x // ls[0]
    want = np.stack([x, y, z, x % ls[0], y % ls[1], z % ls[2], groups, np.ones_like(x)], axis=-1)
    np.testing.assert_array_equal(got, want)
    assert modes == ["groups"]


def test_a_launch_with_a_global_offset_runs_groups(modes):
    ctx, q = env("tiny")
    ob = buf(ctx, np.zeros(8 * 64 * 3, np.int32))
    src = IDS.replace("int i = (z * get_global_size(1) + y) * get_global_size(0) + x;",
                      "int i = (z * get_global_size(1) + y - 2) * get_global_size(0) + x - 8;")
    cl.Program(ctx, src).build().ids(q, (64, 3), (16, 1), ob, global_offset=(8, 2)).wait()
    got = read(q, ob, np.zeros(8 * 64 * 3, np.int32)).reshape(3, 64, 8)
    assert (got[..., 0] == np.arange(8, 72)).all() and (got[..., 1].T == np.arange(2, 5)).all()
    assert (got[..., 3] == np.arange(64) % 16).all() and modes == ["groups"]


# an int index made from size_t ids: instcombine keeps only the low 32 bits of `gid0 - 1`, so the
# i64 IR adds 4294967295 before a sext(trunc); the access's form must read it as -1 (idforms.wrapped)
NARROWED = """
__kernel void k(__global const float *in, __global float *out)
{
    int g = (get_global_id(0) - OX) + (get_global_id(1) - OY) * GX;
    BARRIER
    out[g] = in[g] + 1.0f;
}
"""


@pytest.mark.parametrize("machine, gs, ls, off, mode", [
    ("tiny", (3, 64), (3, 16), (1, 0), "groups"), ("tiny", (6, 32), (3, 16), (1, 2), "groups"),
    ("mncore2", (24, 32), (8, 8), (0, 1), "groups"), ("tiny", (3, 64), (3, 16), (1, 0), "nd"),
    ("mncore2", (20, 12), (5, 4), (3, 1), "nd")])
def test_an_int_index_made_from_size_t_ids_keeps_its_negative_offset(modes, machine, gs, ls, off, mode):
    """A silent wrong result before: the span of `in[g]` and `out[g]` started 2^32 elements away,
    so the launch moved nothing and left out as it was."""
    ctx, q = env(machine)
    n = gs[0] * gs[1]
    src = NARROWED.replace("OX", str(off[0])).replace("OY", str(off[1])).replace("GX", str(gs[0])) \
        .replace("BARRIER", "barrier(CLK_LOCAL_MEM_FENCE);" if mode == "groups" else "")
    a = np.arange(n, dtype=np.float32)
    ib, ob = buf(ctx, a), buf(ctx, np.full(n, -5, np.float32))
    cl.Program(ctx, src).build().k(q, gs, ls, ib, ob, global_offset=off).wait()
    np.testing.assert_array_equal(read(q, ob, np.zeros(n, np.float32)), a + 1)
    assert modes == [mode]


@pytest.mark.parametrize("machine, n", [("tiny", 32), ("tiny", 64), ("mncore2", 48)])
def test_a_tiled_matrix_product_agrees_with_numpy(modes, machine, n):
    ctx, q = env(machine)
    rng = np.random.default_rng(n)
    a, b = (rng.standard_normal((n, n)).astype(np.float32) for _ in range(2))
    cb = buf(ctx, np.zeros((n, n), np.float32))
    cl.Program(ctx, TILED).build().gemm_tiled(q, (n, n), (8, 8), buf(ctx, a), buf(ctx, b), cb, np.int32(n)).wait()
    np.testing.assert_allclose(read(q, cb, a), a @ b, rtol=1e-4, atol=1e-4)
    assert modes == ["groups"]


def test_groups_cost_a_fraction_of_the_nd_builds_steps(monkeypatch, modes):
    """The tiled product's __local reads stream one L2B's blocks, not the wave's: at 64 x 64 on
    mncore2 the "groups" build runs in under a tenth of the "nd" build's steps (modeled)."""
    ctx, q = env("mncore2")
    n = 64
    rng = np.random.default_rng(1)
    a, b = (rng.standard_normal((n, n)).astype(np.float32) for _ in range(2))
    prg = cl.Program(ctx, TILED).build()
    steps = {}
    for forced in (False, True):
        if forced:
            monkeypatch.setattr(abi, "group_slots", lambda lay, ls: 0)
        cb = buf(ctx, np.zeros((n, n), np.float32))
        ev = prg.gemm_tiled(q, (n, n), (8, 8), buf(ctx, a), buf(ctx, b), cb, np.int32(n))
        ev.wait()
        np.testing.assert_allclose(read(q, cb, a), a @ b, rtol=1e-4, atol=1e-4)
        steps[modes[-1]] = ev.stats.summary()["steps"]
    assert set(steps) == {"groups", "nd"}
    assert steps["groups"] * 10 < steps["nd"], steps


def test_stats_say_an_l2b_streams_only_its_own_local_blocks():
    """mncl-cc --stats' remark on a `__local` access of a groups build (or a "1d" build) names what
    moves: each L2B's own blocks, not all of the scratch; the "nd" build's still says all of it."""
    from emulator.machine import load_machine
    import translator
    from translator.backend import compile_kernel
    module = translator.compile_opencl(TILED, spmd=True)
    for mode, words in (("groups", "each L2B streams its own work-groups' blocks through every one of its PEs"),
                        ("nd", "all of the buffer passes through every PE")):
        remarks = compile_kernel(module, "gemm_tiled", load_machine("tiny"), mode).remarks
        local = [text for _, text in remarks if "__local memory" in text]
        assert local and all(words in text for text in local), (mode, local)


def test_a_wave_gathers_only_the_rows_its_box_reads(monkeypatch, modes):
    """In an N-D build a gather's pass moves only the chunks the wave's box may read through the
    access's form (Memory.form_span): the tiled product over eight waves of `tiny` reads its rows
    of A and the pass's rows of B, in fewer steps than streaming both whole, and agrees with numpy."""
    from translator.backend.memory import Memory
    ctx, q = env("tiny")
    n = 64
    rng = np.random.default_rng(2)
    a, b = (rng.standard_normal((n, n)).astype(np.float32) for _ in range(2))
    steps = []
    for whole in (False, True):
        if whole:
            monkeypatch.setattr(Memory, "form_span", lambda self, access, size: None)
        prg = cl.Program(ctx, TILED.replace("#define TS", f"#define WHOLE{int(whole)}\n#define TS")).build()
        cb = buf(ctx, np.zeros((n, n), np.float32))
        ev = prg.gemm_tiled(q, (n, n), (8, 8), buf(ctx, a), buf(ctx, b), cb, np.int32(n))
        ev.wait()
        np.testing.assert_allclose(read(q, cb, a), a @ b, rtol=1e-4, atol=1e-4)
        steps.append(ev.stats.summary()["steps"])
    assert modes == ["groups", "groups"] and steps[0] < 0.75 * steps[1], steps


WALK = """
__kernel void walk(__global const float *x, __global float *out, int K)
{
    float acc = 0.0f;
    for (int k = 0; k < K; k++)
        acc += x[k * CHUNK + get_local_id(0) + 8 * get_local_id(1)] * (float)(k + 1);
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(1) * get_global_size(0) + get_global_id(0)] = acc;
}
"""


@pytest.mark.parametrize("machine, chunk", [("tiny", 512), ("mncore2", 1024)])
def test_each_pass_gathers_the_chunk_its_counter_names(modes, machine, chunk):
    """Pass k of the loop reads exactly the k-th chunk of x (a gather's chunk on the machine): the
    span form_span gives each pass from the loop's counter must be that chunk, not the next or
    the one before, or every lane reads nothing (zeros)."""
    ctx, q = env(machine)
    K = 5
    x = np.random.default_rng(4).uniform(1, 2, K * chunk).astype(np.float32)
    ob = buf(ctx, np.zeros(64 * 3, np.float32))
    prg = cl.Program(ctx, WALK.replace("CHUNK", str(chunk))).build()
    prg.walk(q, (24, 8), (8, 8), buf(ctx, x), ob, np.int32(K)).wait()
    lanes = np.arange(8)[:, None] * 8 + np.arange(8)[None, :]          # (ly, lx) -> lx + 8 ly
    want = sum(x[k * chunk + lanes].astype(np.float64) * (k + 1) for k in range(K))
    np.testing.assert_allclose(read(q, ob, x[:192]).reshape(8, 24), np.tile(want, (1, 3)), rtol=1e-5)
    assert modes == ["groups"]
