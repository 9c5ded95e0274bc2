"""Reductions on the machine's reduction tree (mncl/reduction_tree.py) on the emulator's tiny machine:
the tree is taken where it should be, and its results match numpy (float sums within a bound,
everything else exactly), at odd sizes, with NaN, infinities and -0."""
import numpy as np
import pytest

import mncl.array as cla
from mncl import reduction_tree
from mncl.reduction import ReductionKernel

SIZES = [1, 63, 64, 65, 1000, 4097]


@pytest.fixture(scope="module")
def env(tiny_env):
    return tiny_env


def on_tree(ev) -> bool:
    """The event is the tree kernel's: its run reduced over the group bus (mvr)."""
    ev.wait()
    return ev.stats is not None and ev.stats.bytes_by_link.get("group_bus.reduce", 0) > 0


def check_sum(got, x):
    x64 = x.astype(np.float64)
    assert abs(float(got) - x64.sum()) <= 1e-6 * np.abs(x64).sum() + 1e-30


def values(n, seed=0):
    return (np.random.default_rng(seed).standard_normal(n) * 100).astype(np.float32)


@pytest.mark.parametrize("n", SIZES)
def test_float_sum_max_min_dot(env, n):
    ctx, q = env
    x, y = values(n, 1), values(n, 2)
    a, b = cla.to_device(q, x), cla.to_device(q, y)
    check_sum(cla.sum(a).get(), x)
    check_sum(cla.dot(a, b).get(), x.astype(np.float64) * y)
    assert cla.max(a).get() == x.max()
    assert cla.min(a).get() == x.min()


@pytest.mark.parametrize("expr, op", [("a+b", "MN_ADD"), ("fmax(a, b)", "MN_MAX"), ("min(b,a)", "MN_MIN")])
def test_the_tree_kernel_runs(env, expr, op):
    ctx, q = env
    neutral = {"MN_ADD": "0", "MN_MAX": "-INFINITY", "MN_MIN": "INFINITY"}[op]
    rk = ReductionKernel(ctx, np.float32, neutral, expr,
                         arguments="__global const float *x")
    assert rk.tree_op == op
    x = values(1000)
    r, ev = rk(cla.to_device(q, x), return_event=True)
    assert on_tree(ev)
    ref = {"MN_ADD": None, "MN_MAX": x.max(), "MN_MIN": x.min()}[op]
    if ref is None:
        check_sum(r.get(), x)
    else:
        assert r.get() == ref


def test_forced_fold_path_gives_the_same_extremes(env, monkeypatch):
    ctx, q = env
    x = values(3000, 3)
    a = cla.to_device(q, x)
    tree = ReductionKernel(ctx, np.float32, "-INFINITY", "fmax(a,b)", arguments="__global const float *x")
    folds = ReductionKernel(ctx, np.float32, "-INFINITY", "fmax(a,b)", arguments="__global const float *x",
                            tree=False)
    r1, e1 = tree(a, return_event=True)
    r2, e2 = folds(a, return_event=True)
    assert on_tree(e1) and not on_tree(e2)
    assert r1.get() == r2.get() == x.max()
    monkeypatch.setenv("MNCL_REDUCTION_TREE", "0")
    r3, e3 = tree(a, return_event=True)
    assert not on_tree(e3) and r3.get() == x.max()


def test_several_chunks(env):
    ctx, q = env
    m = q.device.backend.machine
    n = 2 * reduction_tree.padded(m, reduction_tree.chunk_limit(m), 1) + 5     # three chunks
    assert reduction_tree.plan(m, n)[1] == 3
    x = values(n, 4)
    a = cla.to_device(q, x)
    check_sum(cla.sum(a).get(), x)
    assert cla.max(a).get() == x.max()


def test_deterministic(env):
    ctx, q = env
    x = values(4097, 5)
    a = cla.to_device(q, x)
    first = cla.sum(a).get()
    assert all(cla.sum(a).get().tobytes() == first.tobytes() for _ in range(2))


@pytest.mark.parametrize("dtype", [np.int32, np.uint32])
@pytest.mark.parametrize("expr, neutral, ref", [("a+b", "0", np.add), ("a&b", "-1", np.bitwise_and),
                                                ("a|b", "0", np.bitwise_or)])
def test_ints(env, dtype, expr, neutral, ref):
    ctx, q = env
    rng = np.random.default_rng(6)
    x = rng.integers(-2**31, 2**31 - 1, 4097, dtype=np.int64).astype(dtype)     # sums wrap
    if expr == "a&b":
        x |= dtype(0x7FFF0000)          # something survives the and
    t = "int" if dtype == np.int32 else "uint"
    rk = ReductionKernel(ctx, dtype, neutral, expr, arguments=f"__global const {t} *x")
    r, ev = rk(cla.to_device(q, x), return_event=True)
    assert on_tree(ev)
    assert r.get() == ref.reduce(x, dtype=dtype)


def test_int_max_keeps_the_folds(env):
    ctx, q = env
    x = np.random.default_rng(7).integers(-1000, 1000, 1000).astype(np.int32)
    rk = ReductionKernel(ctx, np.int32, "-2147483647-1", "max(a,b)", arguments="__global const int *x")
    assert rk.tree_op is None
    assert cla.max(cla.to_device(q, x)).get() == x.max()


@pytest.mark.parametrize("special, want", [
    ([np.nan], np.nan), ([np.inf, -np.inf], np.nan), ([np.inf], np.inf), ([-np.inf], -np.inf),
    ([np.inf, np.nan], np.nan), ([-np.nan], np.nan), ([3e38, 3e38], None)])
@pytest.mark.filterwarnings("ignore:invalid value encountered")     # the emulator's inf - inf
def test_float_sum_specials(env, special, want):
    """NaN where OpenCL's sum is NaN, though the tree's adds make a NaN an infinity; a finite
    overflow is some infinity or a large value (the tree adds in fp64)."""
    ctx, q = env
    x = values(1000, 8)
    x[[7, 500, 999][:len(special)]] = special
    got = cla.sum(cla.to_device(q, x)).get()
    if want is None:
        assert np.isinf(got) or got > 3e38
    elif np.isnan(want):
        assert np.isnan(got)
    else:
        assert got == want


def test_max_min_with_nan_and_signed_zeros(env):
    """fmax / fmin drop NaNs (the first launch folds each value with the neutral); a zero's sign
    is unspecified, as fmax's."""
    ctx, q = env
    x = -np.abs(values(100, 9)) - 1
    x[[3, 50]] = np.nan
    a = cla.to_device(q, x)
    assert cla.max(a).get() == np.nanmax(x) and cla.min(a).get() == np.nanmin(x)
    z = np.array([-0.0, np.nan, -0.0, 0.0], np.float32)
    assert cla.max(cla.to_device(q, z)).get() == 0 and cla.min(cla.to_device(q, z)).get() == 0
    assert np.isneginf(cla.max(cla.to_device(q, np.full(5, np.nan, np.float32))).get())


def test_offsets_and_out(env):
    ctx, q = env
    x = values(777, 10)
    a = cla.to_device(q, x)
    check_sum(cla.sum(a[5:]).get(), x[5:])
    rk = ReductionKernel(ctx, np.float32, "-INFINITY", "fmax(a,b)", arguments="__global const float *x")
    out = cla.zeros(q, (), np.float32)
    assert rk(a, out=out) is out and out.get() == x.max()


def test_doubles_keep_the_folds(env):
    ctx, q = env
    x = values(500, 11).astype(np.float64)
    rk = ReductionKernel(ctx, np.float64, "0", "a+b", arguments="__global const double *x")
    assert rk.tree_op is None
    assert abs(rk(cla.to_device(q, x)).get() - x.sum()) < 1e-9 * np.abs(x).sum()
