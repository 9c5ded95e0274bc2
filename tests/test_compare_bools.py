"""Comparisons made into bools (Emitter.bool_from_mask): one `lpassa` whose zero-flush is the
compare's mask entry, where a copy and a masked copy took two steps.  Results against numpy for
signed, unsigned and float compares (NaNs, signed zeros, the extremes) on `tiny`, and the op the
build makes."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import emulator.machine
from emulator_harness import device_env, launch
from translator import compile_opencl
from translator.backend import compile_kernel

SRC = """
__kernel void cmp(__global const TYPE *a, __global const TYPE *b, __global int *out, int n)
{
    int i = get_global_id(0);
    if (i < n)
        out[i] = (a[i] < b[i]) + 2 * (a[i] == b[i]) + 4 * (a[i] >= b[i]) + 8 * (a[i] != b[i] && b[i] > a[0]);
}
"""


def values(dtype, n, rng):
    if dtype == np.float32:
        pool = np.array([0.0, -0.0, 1.5, -1.5, np.inf, -np.inf, np.nan, 3e38, -3e38, 1e-45], np.float32)
    else:
        info = np.iinfo(dtype)
        pool = np.array([0, 1, 2, info.max, info.min, info.max - 1, info.min + 1, 7], dtype)
    return pool[rng.integers(0, len(pool), n)]


@pytest.mark.parametrize("ctype, dtype", [("int", np.int32), ("uint", np.uint32), ("float", np.float32)])
def test_compares_into_bools_match_numpy(ctype, dtype):
    rng = np.random.default_rng(3)
    n = 2000
    a, b = values(dtype, n, rng), values(dtype, n, rng)
    (_, _, out), _ = launch(device_env("tiny"), SRC.replace("TYPE", ctype), "cmp", n, a, b, np.zeros(n, np.int32),
                       np.int32(n))
    with np.errstate(invalid="ignore"):
        ref = (a < b) + 2 * (a == b) + 4 * (a >= b) + 8 * ((a != b) & (b > a[0]))
    np.testing.assert_array_equal(out, ref.astype(np.int32))


def test_a_compare_makes_its_bool_in_one_op():
    kb = compile_kernel(compile_opencl(SRC.replace("TYPE", "int"), spmd=True), "cmp",
                        emulator.machine.load_machine("mncore2"))
    assert re.search(r"lpassa/\$imr\d+ \$l[rs]\d+v \$l[rs]\d+v", kb.asm)


LU = (Path(__file__).parent.parent / "benchmarks" / "real_kernels" / "lu.cl").read_text()


def test_a_chain_of_ands_is_one_op_a_link():
    """LLVM writes `a && b` of compares as `select i1 a, i1 b, i1 false`: an `iand` of the two bools
    (0 or -1 in every lane), where a select made a mask of a, a copy and a masked copy.  lu_update's
    guard: 54 ops on its line in the rows build before, 44 with one-op bools, 32 now."""
    kb = compile_kernel(compile_opencl(LU, spmd=True), "lu_update", emulator.machine.load_machine("mncore2"), "rows")
    ops = sum(line.count(";") + 1 for line in kb.asm.splitlines() if line.endswith("# line 15"))
    assert ops <= 36, ops
    n, k = 24, 5
    A = np.random.default_rng(5).random((n, n), dtype=np.float32)
    (out,), _ = launch(device_env("tiny"), LU, "lu_update", (n, n), A.ravel(), np.int32(k), np.int32(n))
    ref = A.copy()
    ref[k + 1:, k + 1:] -= np.outer(A[k + 1:, k], A[k, k + 1:])
    np.testing.assert_allclose(out.reshape(n, n), ref, rtol=1e-6)
