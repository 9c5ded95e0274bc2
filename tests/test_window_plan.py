"""The window plan (translator/backend/windowplan.py): a stencil's neighbours in a "rows" build come
from one window of the wave's rows and halo per wave and L2B, read from DRAM once and shifted on chip.
Checked against numpy on ragged sizes with partial last waves, constant and pitch-dependent offsets,
a launch whose halo exceeds the window's area (the old per-shift path), the out-of-bounds report,
and the DRAM bytes against the compulsory ones on mncore2.  The device runs strict."""

import numpy as np
import pytest

import mncl as cl
import translator
from emulator.machine import load_machine
from emulator_harness import buf, device_env, launch, mncc_stats, read
from test_rows2d import CONV
from translator.backend import compile_kernel

# constant offsets (odd ones funnelled, +5 and -3 in x), pitch multiples -2 and +1, and a row offset
# k known only at the launch (a band k * n, with the centre a[i * n + j] beside it)
TAPS = """
__kernel void taps(__global const float *a, __global float *o, int n, int m, int k)
{
    int j = get_global_id(0);
    int i = get_global_id(1);
    if (i >= 2 && i < m - 1 && j >= 3 && j < n - 5)
        o[i * n + j] = a[(i - 2) * n + j + 5] + 2.0f * a[(i + 1) * n + j - 3] + 4.0f * a[i * n + j + 5]
                       + 8.0f * a[(i + k) * n + j] + 16.0f * a[i * n + j];
}
"""

# no guard: the last row's south neighbour is beyond the buffer
SOUTH = """
__kernel void south(__global const float *x, __global float *o, int n)
{
    int j = get_global_id(0);
    int i = get_global_id(1);
    o[i * n + j] = x[(i + 1) * n + j] - x[i * n + j];
}
"""

# one shift of x only: nothing to share, the old shifted load
ONE = """
__kernel void one(__global const float *x, __global float *o, int n)
{
    int j = get_global_id(0);
    int i = get_global_id(1);
    o[i * n + j] = x[(i + 1) * n + j];
}
"""


@pytest.fixture(scope="module")
def tiny():
    return device_env("tiny")




def taps(env, m, n, k):
    """The TAPS kernel over m rows of n on small integers (every sum exact): (result, numpy's)."""
    rng = np.random.default_rng(m * n + k)
    a = rng.integers(-8, 9, m * n).astype(np.float32)
    o = rng.integers(-8, 9, m * n).astype(np.float32)
    (_, out), _ = launch(env, TAPS, "taps", (n, m), a, o, np.int32(n), np.int32(m), np.int32(k))
    a2, ref = a.reshape(m, n), o.reshape(m, n).copy()
    rows, cols = slice(2, m - 1), slice(3, n - 5)
    sh = lambda di, dj: a2[2 + di:m - 1 + di, 3 + dj:n - 5 + dj]
    ref[rows, cols] = sh(-2, 5) + 2 * sh(1, -3) + 4 * sh(0, 5) + 8 * sh(k, 0) + 16 * sh(0, 0)
    return out.reshape(m, n), ref


def conv(env, ni, nj):
    """CONV over ni x nj on small integers: (result, numpy's, the event)."""
    rng = np.random.default_rng(ni * nj)
    A = rng.integers(-4, 5, ni * nj).astype(np.float32)
    w = rng.integers(-3, 4, 9).astype(np.float32)
    (_, _, out), ev = launch(env, CONV, "conv2d", (nj, ni), A, w, np.zeros(ni * nj, np.float32),
                             np.int32(ni), np.int32(nj))
    a2, ref = A.reshape(ni, nj), np.zeros((ni, nj), np.float32)
    for di in (-1, 0, 1):
        for dj in (-1, 0, 1):
            ref[1:-1, 1:-1] += w[(di + 1) * 3 + dj + 1] * a2[1 + di:ni - 1 + di, 1 + dj:nj - 1 + dj]
    return out.reshape(ni, nj), ref, ev


def plans(src, kernel, machine="tiny"):
    mod = translator.compile_opencl(src, spmd=True)
    return " | ".join(p[3] for p in compile_kernel(mod, kernel, load_machine(machine), "rows").plans)


@pytest.mark.parametrize("m,n,k", [(12, 45, -2), (9, 61, 1), (23, 17, 0), (5, 130, -1)])
def test_taps_match_numpy_on_ragged_sizes(tiny, modes, m, n, k):
    """Rows of 45, 61, 17, 130 columns straddle tiny's 512-work-item waves and leave the last one
    partial; k moves a whole row band at the launch (odd and even pitches: both parities of R)."""
    out, ref = taps(tiny, m, n, k)
    np.testing.assert_array_equal(out, ref)
    assert modes == ["rows"]


def test_a_halo_beyond_the_window_takes_the_old_path(tiny, modes):
    """A pitch of 420 elements: the +-2 rows span more than the window's area holds on tiny (192 long
    words each side), so the launch moves each pitch-dependent shift from DRAM (%wok = 0) while the
    constant ones still come from the window."""
    out, ref = taps(tiny, 6, 420, 1)
    np.testing.assert_array_equal(out, ref)
    assert modes == ["rows"]


@pytest.mark.parametrize("ni,nj", [(33, 47), (8, 200)])
def test_convolution_matches_numpy(tiny, modes, ni, nj):
    out, ref, _ = conv(tiny, ni, nj)
    np.testing.assert_array_equal(out, ref)
    assert modes == ["rows"]


def test_out_of_bounds_neighbours_are_still_reported(tiny, modes):
    ctx, q = tiny
    n = 30
    x = np.arange(n * n, dtype=np.float32)
    o = np.zeros(n * n, np.float32)
    prg = cl.Program(ctx, SOUTH).build()
    ob = buf(ctx, o)
    prg.south(q, (n, n - 1), None, buf(ctx, x), ob, np.int32(n))                # in bounds
    np.testing.assert_array_equal(read(q, ob, o).reshape(n, n)[:n - 1], n)
    with pytest.raises(cl.MemoryError, match=r"kernel 'south' accessed out of bounds at line 6: index 9[0-2]\d of "
                                             r"the buffer passed as argument 0 \('x'"):
        prg.south(q, (n, n), None, buf(ctx, x), ob, np.int32(n)).wait()
    assert modes == ["rows", "rows"]


def test_the_plan_is_named_and_single_shifts_keep_theirs():
    assert "sliding window" in plans(CONV, "conv2d")
    assert "sliding window" in plans(TAPS, "taps")
    assert "sliding window" not in plans(ONE, "one")


def test_mncl_cc_stats_names_the_window(tmp_path):
    err = mncc_stats(tmp_path / "conv.cl", CONV, "--machine", "tiny", "--mode", "rows")
    assert "load A (global, 4 B): neighbourhood; sliding window of the wave's rows and halo, one DRAM read " \
           "per wave (windowplan.py) (row-major: pitch the parameter 'nj' == global size 0)" in err


def test_convolution_reads_its_input_once_per_wave_on_mncore2(modes):
    """250 x 250 on mncore2: two waves, the second partial.  A crosses DRAM once per wave and L2B
    with a halo of a row each side (1.13x); B is written and, where the border keeps its values,
    read to merge: at most 2x the compulsory bytes (the shifted loads moved 7.8x)."""
    out, ref, ev = conv(device_env("mncore2"), 250, 250)
    np.testing.assert_array_equal(out, ref)
    assert modes == ["rows"]
    assert ev.stats.summary()["dram_bytes"] <= 2 * (2 * 250 * 250 * 4)


def test_the_assembly_does_not_depend_on_the_hash_seed(tmp_path):
    """The window's shifts were a set, so the prologue's order moved with PYTHONHASHSEED: one
    source, different text in different processes (seeds 1 and 3 differed)."""
    import os
    import subprocess
    import sys
    src = tmp_path / "s.cl"
    src.write_text("__kernel void s(__global const float *a, __global float *b, int w)\n{\n"
                   "    int r = get_global_id(1), c = get_global_id(0);\n"
                   "    b[r * w + c] = a[r * w + c] * 2.0f + a[r * w + (c > 0 ? c - 1 : c)];\n}\n")
    outs = []
    for seed in ("1", "3"):
        out = tmp_path / f"s{seed}.vsm"
        subprocess.run([sys.executable, "-m", "translator.cli", "-S", "--mode", "rows", "-o", str(out), str(src)],
                       check=True, env={**os.environ, "PYTHONHASHSEED": seed, "MNCL_CACHE": "0"})
        outs.append(out.read_text())
    assert outs[0] == outs[1]
