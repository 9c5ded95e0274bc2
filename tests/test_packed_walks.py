"""Cycle packing of a walked block read (translator/backend/packing.py, Memory.walked): covariance's
`data[i*m + j1] * data[i*m + j2]` in a loop over i, j2 the sequencer's counter of a skewed loop, so
the second read is one word of a 64-long-word block that moves a pitch each pass.  Packed, the
four passes' blocks go to four L1BM areas and one l1bmp a cycle, each under a fixed write mask,
gives cycle c pass 4q + c's word; groups whose passes' words sit at different offsets of their
blocks (a pitch that is not whole blocks) run the original body.  Checked against numpy bit for
bit (integer data: every sum is exact), for pitches that pack and pitches that do not."""
import numpy as np
import pytest

from emulator_harness import device_env, launch
from test_real_kernels import rk

SYMM = rk.source("covariance")          # cov_symm: benchmarks/real_kernels/covariance.cl


@pytest.fixture(scope="module")
def env():
    return device_env("mncore2", new=True)


def symm(env, m, n):
    rng = np.random.default_rng(m * 100 + n)
    data = rng.integers(-3, 4, (n, m)).astype(np.float32)
    (out, _), ev = launch(env, SYMM, "cov_symm", m, np.zeros((m, m), np.float32), data, np.int32(m), np.int32(n))
    np.testing.assert_array_equal(out, data.T @ data)
    return ev


@pytest.mark.parametrize("m, n", [(128, 13), (128, 4), (256, 9), (96, 11), (72, 6)])
def test_packed_walked_reads_give_numpys_sums(env, m, n):
    symm(env, m, n)


def test_walked_reads_pack(env):
    """m = 128, n = 128 (covariance's cov_symm at 128 x 128): 354,059 steps unpacked; about
    133,000 packed."""
    ev = symm(env, 128, 128)
    assert ev.stats.steps <= 200_000, ev.stats.steps
