"""Software pipelining of packed loops (translator/backend/packing.py): each group of four passes
ends with the next group's L2BM -> L1BM moves, beside its own arithmetic, and the MVs of the group
four ahead go to the areas it has just emptied.  Matrix-vector products, row-major (the row plan's
staged loads) and column-major (a column load, with its odd shifts' second half under a branch
that keeps its moves in its own group), for trip counts below, at and past the four buffer sets,
with tails of 1..4 passes, against numpy bit for bit (integer data: every fp32 sum is exact)."""
import numpy as np
import pytest

from emulator_harness import device_env, launch
from test_real_kernels import rk
from test_row_plan import GESUMMV

GEMV, GEMV_T = (rk.source(k) for k in ("gemv", "gemv_t"))      # benchmarks/real_kernels/*.cl


@pytest.fixture(scope="module")
def env():
    return device_env("mncore2", new=True)


@pytest.mark.parametrize("cols", [1, 3, 4, 5, 8, 13, 16, 17, 21, 64, 130])
def test_pipelined_groups_give_numpys_sums(env, cols):
    rows = 100
    rng = np.random.default_rng(cols)
    W = rng.integers(-3, 4, (rows, cols)).astype(np.float32)
    x = rng.integers(-3, 4, cols).astype(np.float32)
    (_, _, y), _ = launch(env, GEMV, "gemv", rows, W, x, np.zeros(rows, np.float32), np.int32(rows), np.int32(cols))
    np.testing.assert_array_equal(y, W @ x)


def test_a_group_takes_fewer_steps_pipelined(env):
    """4096 x 1024 (the issue's gemv): 4,210 steps, a group's moves waiting for its arithmetic
    before; about 2,700 with the moves beside the group before's arithmetic."""
    rows, cols = 4096, 1024
    rng = np.random.default_rng(1)
    W = rng.integers(-3, 4, (rows, cols)).astype(np.float32)
    x = rng.integers(-3, 4, cols).astype(np.float32)
    (_, _, y), ev = launch(env, GEMV, "gemv", rows, W, x, np.zeros(rows, np.float32), np.int32(rows), np.int32(cols))
    np.testing.assert_array_equal(y, W @ x)
    assert ev.stats.steps <= 3000, ev.stats.steps


@pytest.mark.parametrize("rows", [100, 101])       # even pitch: no odd shift; odd: every other pass
@pytest.mark.parametrize("cols", [5, 13, 17, 22, 67])
def test_pipelined_column_loads_with_odd_shifts_give_numpys_sums(env, rows, cols):
    rng = np.random.default_rng(rows * cols)
    Wt = rng.integers(-3, 4, (cols, rows)).astype(np.float32)
    x = rng.integers(-3, 4, cols).astype(np.float32)
    (_, _, y), _ = launch(env, GEMV_T, "gemv_t", rows, Wt, x, np.zeros(rows, np.float32), np.int32(rows),
                          np.int32(cols))
    np.testing.assert_array_equal(y, Wt.T @ x)


def test_column_loads_with_a_branch_for_odd_shifts_are_pipelined(env):
    """gemv_t 4096 x 1024: 4,186 steps before, about 2,660 pipelined (its odd-shift half, never
    taken here, under a branch)."""
    rows, cols = 4096, 1024
    rng = np.random.default_rng(2)
    Wt = rng.integers(-3, 4, (cols, rows)).astype(np.float32)
    x = rng.integers(-3, 4, cols).astype(np.float32)
    (_, _, y), ev = launch(env, GEMV_T, "gemv_t", rows, Wt, x, np.zeros(rows, np.float32), np.int32(rows),
                           np.int32(cols))
    np.testing.assert_array_equal(y, Wt.T @ x)
    assert ev.stats.steps <= 3000, ev.stats.steps


@pytest.mark.parametrize("n", [9, 21, 64, 512])
def test_two_loads_codegen_put_in_one_l1bm_area_are_pipelined_apart(env, n):
    """gesummv's A and B rows go through one L1BM area, one after the other; moved ahead, the
    second gets an area of its own (B's moves would overwrite A's before A's l1bmd read them).
    At 512: 3,597 steps before, about 2,150."""
    rng = np.random.default_rng(n)
    A, B = (rng.integers(-3, 4, (n, n)).astype(np.float32) for _ in range(2))
    x = rng.integers(-3, 4, n).astype(np.float32)
    (_, _, _, y), ev = launch(env, GESUMMV, "gesummv", n, A, B, x, np.zeros(n, np.float32), np.float32(2),
                              np.float32(-1), np.int32(n))
    np.testing.assert_array_equal(y, 2 * (A @ x) - B @ x)
    if n == 512:
        assert ev.stats.steps <= 2600, ev.stats.steps
