"""The constant pool (translator/backend/constpool.py): constants of a launch's first block come
from every group's PDM through the L1BM unit instead of one ALU op each, so a kernel launched many
times (lu's two kernels per pivot) pays a shorter prologue; the results are the ALU's.

Results against numpy on `tiny` and `mncore2` (every group holds lanes there, so every group's
PDM copy is read) for a kernel of more constants than the pool holds, the first block's length
against the build without the pool (a bound today's main missed), and the pool's words."""
from __future__ import annotations

import re

import numpy as np
import pytest

import emulator.machine
from emulator_harness import device_env, launch
from translator import compile_opencl
from translator.backend import Layout, abi, compile_kernel, constpool

# 40 distinct 32-bit constants (the pool takes at most abi.POOL_ENTRIES), each in its own operation
MASKS = [0x9E3779B1 * (k + 1) & 0xFFFFFFFF for k in range(40)]
MANY = "__kernel void many(__global const uint *x, __global uint *y, int n)\n{\n" \
       "    int i = get_global_id(0);\n    if (i < n) {\n        uint v = x[i];\n" + \
       "".join(f"        v = (v ^ 0x{m:08x}u) + (v >> {k % 7 + 1});\n" for k, m in enumerate(MASKS)) + \
       "        y[i] = v;\n    }\n}\n"

LU = r"""
__kernel void lu_scale(__global float *A, int k, int n)
{
    int j = get_global_id(0);
    if (j > k && j < n)
        A[k * n + j] = A[k * n + j] / A[k * n + k];
}
"""


def many_ref(x):
    v = x.astype(np.uint64)
    for k, m in enumerate(MASKS):
        v = ((v ^ m) + (v >> (k % 7 + 1))) & 0xFFFFFFFF
    return v.astype(np.uint32)


@pytest.mark.parametrize("machine, n", [("tiny", 1000), ("mncore2", 40000)])
def test_constants_from_the_pool_give_the_alus_results(machine, n):
    x = np.random.default_rng(7).integers(0, 2 ** 32, n, dtype=np.uint64).astype(np.uint32)
    (_, y), _ = launch(device_env(machine), MANY, "many", n, x, np.zeros(n, np.uint32), np.int32(n))
    np.testing.assert_array_equal(y, many_ref(x))


def first_block(kb) -> list:
    """The steps of the prologue's first block: from the argument block's wait to the block's end."""
    lines = kb.asm.splitlines()
    at = lines.index(f"    wait i{abi.ARGBLK_TAG}")
    return lines[at:lines.index(".endblock", at)]


MNCORE2 = emulator.machine.load_machine("mncore2")
LAYOUT = Layout.of(MNCORE2)


def build(src, name, mode="1d"):
    return compile_kernel(compile_opencl(src, spmd=True), name, MNCORE2, mode)


@pytest.mark.parametrize("mode", ["1d", "rows", "1d-n8"])
def test_the_pool_shortens_the_first_block(mode, monkeypatch):
    with_pool = build(LU, "lu_scale", mode)
    monkeypatch.setattr(constpool, "ENABLED", False)
    without = build(LU, "lu_scale", mode)
    assert not without.pool and "limm" in "\n".join(first_block(without))
    n, m = len(first_block(with_pool)), len(first_block(without))
    assert n <= 0.8 * m, (n, m)          # 27 against 41 steps in the 1d build


def test_the_pool_holds_each_constant_once_per_cycle_and_the_prologue_reads_it_from_pdm():
    kb = build(MANY, "many")
    pool = kb.pool
    assert 0 < len(pool) <= abi.POOL_LONGS and len(pool) % 64 == 0      # (whole MV units)
    entries = [tuple(pool[k:k + 4]) for k in range(0, len(pool), 4)]
    cycles = tuple(c << 32 | c for c in range(4))                      # each lane's cycle number
    constants = {e[0] for e in entries if e != cycles and e != (0,) * 4}
    assert all(e == cycles or len(set(e)) == 1 for e in entries)
    assert len(constants) >= 10
    assert re.search(rf"mvb2/n{len(pool)}i{abi.ARGBLK_TAG} \$p{abi.pool_at(LAYOUT)} \$lc\d+", kb.asm)
    assert len(re.findall(r"l1bmp \$lb\d+ \$l[rs]\d+v", kb.asm)) >= len(constants)
    made = {int(m, 16) for m in re.findall(r"limm 0x([0-9a-f]{16})", kb.asm)}
    assert not made & constants                                        # a pooled constant has no limm left


def test_a_machine_whose_pdm_has_no_room_for_the_pool_makes_the_constants_with_the_alu():
    from dataclasses import replace
    small = replace(MNCORE2, pdm_longs=abi.pool_at(LAYOUT) + 63)     # the stores' tag transfer still fits
    kb = compile_kernel(compile_opencl(MANY, spmd=True), "many", small)
    assert not kb.pool and "mvb2" not in kb.asm
    assert len(first_block(kb)) > len(first_block(build(MANY, "many")))
