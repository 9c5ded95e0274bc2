"""Seeded differential fuzz of index forms against numpy: random 1-D and 2-D kernels that read
A[a*i + b*j + c*k + d] in a loop and B[e*i + f*j + g] beside it and store straight or transposed,
with ids of every integer type (an `int` made from size_t ids is what LLVM narrows with a
sext(trunc), where a constant -1 once read as 2^32 - 1), global offsets, guards, local sizes and
bounds that end mid-stride.  Every plan the builds choose for these shapes (contiguous, shifted,
affine copies, spans of gathers and scatters in nd builds, rows builds) must give numpy's answer.
Its forerunner (in the session that fixed idforms.wrapped and the bounds check of the bytes
accessed) found both; the seeds are fixed, and a failure prints its kernel.  The regression
tests of those defects are in test_groups_build.py and test_emulator_device.py."""
from __future__ import annotations

import random

import numpy as np
import pytest

import mncl as cl
from emulator_harness import buf, read

TYPES = ("int", "uint", "size_t", "long")


def kernel_case(seed: int) -> dict:
    """A kernel, its launch and numpy's answer, from seed."""
    rng = random.Random(seed)
    dims = rng.choice([1, 2, 2])
    gs = [rng.choice([1, 3, 7, 16, 33, 64, 100, 256]) for _ in range(dims)]
    ls = [rng.choice([l for l in (1, 2, 4, 8) if g % l == 0]) for g in gs] if rng.random() < 0.4 else None
    off = [rng.choice([0, 1, 5]) for _ in range(dims)] if rng.random() < 0.4 else [0] * dims
    T = rng.choice(TYPES)
    W = "long" if T in ("uint", "size_t") else T          # (negative coefficients on unsigned ids wrap)
    K = rng.choice([0, 1, 3, 8])
    a, c, e = rng.choice([0, 1, 1, -1, 2, 3]), rng.choice([0, 1, -1, 2, 7]), rng.choice([0, 1, -1, 2])
    b, f = (rng.choice([0, 1, -1, 4, 100]), rng.choice([0, 1, 5])) if dims == 2 else (0, 0)
    ids = [np.arange(o, o + g) for o, g in zip(off, gs)] + [np.zeros(1, int)] * (2 - dims)

    def least_greatest(ca, cb, cc):
        lo = hi = 0
        for coef, v in ((ca, ids[0]), (cb, ids[1]), (cc, np.arange(max(K, 1)) if K else np.zeros(1, int))):
            ends = (coef * v[0], coef * v[-1])
            lo, hi = lo + min(ends), hi + max(ends)
        return lo, hi
    lo, hi = least_greatest(a, b, c)
    d = -lo + rng.choice([0, 3])
    lo2, hi2 = least_greatest(e, f, 0)
    g2 = -lo2 + rng.choice([0, 2])
    na, nb = hi + d + 1, hi2 + g2 + 1                     # (no slack: the last element read is the last one)
    gx, gy = gs[0], (gs[1] if dims == 2 else 1)
    transposed = dims == 2 and rng.random() < 0.3
    guard = rng.random() < 0.3
    lim = off[0] + rng.choice([gx, gx // 2 + 1])
    i, j = f"({T})get_global_id(0)", (f"({T})get_global_id(1)" if dims == 2 else "0")
    oy = off[1] if dims == 2 else 0
    pos = (f"(({i} - {off[0]}) * {gy} + ({j} - {oy}))" if transposed else f"(({j} - {oy}) * {gx} + ({i} - {off[0]}))")
    src = (f"__kernel void k(__global const float *A, __global const float *B, __global float *out, int lim)\n{{\n"
           f"    {T} i = {i};\n    {T} j = {j};\n    {'if (i < lim) {' if guard else '{'}\n"
           f"    float acc = 0.0f;\n    for (int k = 0; k < {K}; k++)\n"
           f"        acc += A[{a} * ({W})i + {b} * ({W})j + {c} * k + {d}] * (float)(k + 1);\n"
           f"    acc += B[{e} * ({W})i + {f} * ({W})j + {g2}];\n    out[{pos}] = acc;\n    }}\n}}\n")
    r = np.random.default_rng(seed)
    A, B = r.integers(-4, 5, na).astype(np.float32), r.integers(-4, 5, nb).astype(np.float32)
    I, J = np.meshgrid(ids[0], ids[1], indexing="xy")
    acc = sum((A[a * I + b * J + c * k + d] * (k + 1) for k in range(K)), np.zeros(I.shape))
    acc = acc + B[e * I + f * J + g2]
    li, lj = I - off[0], J - oy
    at = li * gy + lj if transposed else lj * gx + li
    keep = I < lim if guard else np.ones(I.shape, bool)
    want = np.full(gx * gy, -9, np.float32)
    want[at[keep]] = acc[keep]
    return dict(src=src, gs=tuple(gs), ls=tuple(ls) if ls else None, off=tuple(off), A=A, B=B, lim=lim, want=want)


def run(machine, case):
    ctx = cl.Context([cl.get_device(machine=machine)])
    q = cl.CommandQueue(ctx)
    ob = buf(ctx, np.full(case["want"].size, -9, np.float32))
    cl.Program(ctx, case["src"]).build().k(q, case["gs"], case["ls"], buf(ctx, case["A"]), buf(ctx, case["B"]), ob,
                                           np.int32(case["lim"]), global_offset=case["off"] if any(case["off"]) else None)
    return read(q, ob, np.zeros(case["want"].size, np.float32))


@pytest.mark.parametrize("machine, seed", [("tiny", 1), ("tiny", 2), ("tiny", 3), ("tiny", 4), ("mncore2", 5),
                                           ("mncore2", 6)])
def test_random_index_forms_agree_with_numpy(machine, seed):
    case = kernel_case(seed)
    np.testing.assert_array_equal(run(machine, case), case["want"], err_msg=case["src"])


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(1000, 1120))
def test_more_random_index_forms_agree_with_numpy(seed):
    case = kernel_case(seed)
    np.testing.assert_array_equal(run("tiny" if seed % 2 else "mncore2", case), case["want"], err_msg=case["src"])
