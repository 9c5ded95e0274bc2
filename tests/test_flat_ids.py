"""A "rows" build's work-item ids (WorkItems.flat_ids): a 2-D launch runs flat, the wave W
consecutive row-major positions f, and gid1 = f div gx, gid0 = f mod gx.  Where the row length gx
is a power of two the sequencer takes a shift and a mask; otherwise f goes through fp64 1 / gx
(exact) and a product.  Both against numpy, with partial waves and rows that straddle waves."""
import numpy as np
import pytest

from emulator_harness import device_env, launch

SRC = """
__kernel void ids(__global int *out, int gx)
{
    int j = get_global_id(0), i = get_global_id(1);
    out[i * gx + j] = i * 100000 + j;
}
"""


@pytest.mark.parametrize("gx, gy", [(1, 300), (2, 7), (64, 65), (96, 50), (256, 3), (1000, 9), (4096, 9),
                                    (8192, 3)])
def test_ids_of_a_flat_launch(gx, gy):
    (got,), _ = launch(device_env("mncore2"), SRC, "ids", (gx, gy), np.zeros(gx * gy, np.int32), np.int32(gx))
    i, j = np.divmod(np.arange(gx * gy), gx)
    np.testing.assert_array_equal(got, i * 100000 + j)


def test_a_power_of_two_row_splits_by_a_shift():
    """The fp64 split costs some 30 steps a wave that a row of 2^k saves."""
    steps = {}
    for gx in (256, 255):
        (got,), ev = launch(device_env("mncore2"), SRC, "ids", (gx, 16), np.zeros(gx * 16, np.int32), np.int32(gx))
        steps[gx] = ev.stats.steps
    assert steps[256] + 20 <= steps[255], steps
