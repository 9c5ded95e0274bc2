"""Tables of vector elements (Memory.uniform_table, abi.table_lanes): a float4 / float2 buffer's
widened copy keeps the components apart within each block, so `pos[j].x` of consecutive passes
are consecutive table entries and packing.py runs four passes at once (the n-body loop ran
unpacked: its x-components were four entries apart).  Results against numpy; the copy's layout
against its definition."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from emulator_harness import device_env, launch
from translator.backend import abi
from translator.backend.layout import Layout

# the n-body force loop of benchmarks/real_kernels (float4 positions, the mass in w)
NBODY = (Path(__file__).resolve().parent.parent / "benchmarks" / "real_kernels" / "nbody.cl").read_text()

SRC = """
__kernel void pairs(__global const float2 *w, __global const float *x, __global float *y, int n)
{
    int i = get_global_id(0);
    float s = 0.0f;
    for (int j = 0; j < n; j++)              /* the y-components read as floats: the same slots */
        s += w[j].x * x[i] - ((__global const float *)w)[2 * j + 1];
    y[i] = s + w[n - 1].y;
}
"""


def test_the_widened_copy_keeps_components_apart():
    data = np.arange(256, dtype=np.float32)           # 64 float4s: 4 blocks of 16
    wide = Layout.widened(data, 4)
    lo = (wide & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(np.float32)
    assert np.array_equal(lo[:64], data[:64].reshape(16, 4).T.reshape(-1))      # x0..x15, y0..y15, ...
    assert np.array_equal(Layout.widened(data)[:4] >> np.uint64(32), [0x0, 0x3F800000, 0x40000000, 0x40400000])
    params = [dict(dtype="float32", size=16), dict(dtype="int32", size=8), dict(dtype="float32", size=4),
              dict(dtype="float64", size=16), dict(dtype="[('a', '<f4')]", size=16)]
    assert [abi.table_lanes(p) for p in params] == [4, 2, 1, 1, 1]


def reference(pos, eps2):
    d = pos[None, :, :3].astype(np.float64) - pos[:, None, :3]
    r2 = (d * d).sum(axis=2) + eps2
    s = pos[None, :, 3] / r2 ** 1.5
    return (d * s[:, :, None]).sum(axis=1)


@pytest.mark.parametrize("machine, n", [("tiny", 96), ("mncore2", 512)])
def test_a_float4_table_packs(machine, n):
    rng = np.random.default_rng(n)
    pos = np.empty((n, 4), np.float32)
    pos[:, :3] = rng.integers(-64, 65, (n, 3)) / 32.0
    pos[:, 3] = rng.integers(8, 17, n) / 16.0
    (_, acc), ev = launch(device_env(machine, new=True), NBODY, "nbody_acc", n, pos, np.zeros((n, 4), np.float32),
                          np.float32(2.0 ** -6), np.int32(n))
    np.testing.assert_allclose(acc[:, :3], reference(pos, 2.0 ** -6), rtol=1e-4, atol=1e-3)
    assert not acc[:, 3].any()
    if machine == "mncore2":
        # four passes at once: 31,307 steps unpacked (the components four entries apart), 10,733 packed
        assert ev.stats.steps < 16000, ev.stats.steps


@pytest.mark.parametrize("machine, n", [("tiny", 77), ("mncore2", 300)])
def test_a_float2_table_and_its_floats(machine, n):
    rng = np.random.default_rng(n)
    w = rng.integers(-3, 4, (n, 2)).astype(np.float32)
    x = rng.integers(-3, 4, n).astype(np.float32)
    (_, _, y), _ = launch(device_env(machine, new=True), SRC, "pairs", n, w, x, np.zeros(n, np.float32), np.int32(n))
    want = w[:, 0].sum() * x.astype(np.float64) - w[:, 1].sum() + w[n - 1, 1]
    np.testing.assert_array_equal(y, want.astype(np.float32))
