"""benchmarks/real_kernels.py's kernels and references kept honest: every kernel at its tiny size
on mncl's CPU device and on PoCL (where pyopencl finds it) matches the numpy reference, the
check rejects a wrong result, and the benchmark's sizes run at least 10^5 work-item iterations."""
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))

import real_kernels as rk  # noqa: E402
from kernel_harness import run_case  # noqa: E402


@pytest.fixture(scope="module")
def mncl_cpu():
    import mncl as cl
    dev = next(d for p in cl.get_platforms() for d in p.get_devices() if d.kind == "cpu")
    ctx = cl.Context([dev])
    return cl, ctx, cl.CommandQueue(ctx)


@pytest.fixture(scope="module")
def pocl():
    cl = pytest.importorskip("pyopencl")
    try:
        devs = [d for p in cl.get_platforms() if "portable" in p.name.lower() or "pocl" in p.name.lower()
                for d in p.get_devices()]
    except cl.Error as exc:
        pytest.skip(f"no OpenCL platform: {exc}")
    if not devs:
        pytest.skip("PoCL not installed")
    ctx = cl.Context(devs[:1])
    return cl, ctx, cl.CommandQueue(ctx)


@pytest.mark.parametrize("name", rk.KERNELS)
def test_kernel_on_mncl_cpu_matches_reference(mncl_cpu, name):
    case = rk.make_case(name, "tiny")
    ok, _, text = rk.check(case, run_case(*mncl_cpu, case))
    assert ok, f"{name}: {text}"


@pytest.mark.parametrize("name", rk.KERNELS)
def test_kernel_on_pocl_matches_reference(pocl, name):
    case = rk.make_case(name, "tiny")
    ok, _, text = rk.check(case, run_case(*pocl, case))
    assert ok, f"{name}: {text}"


@pytest.mark.parametrize("name", rk.KERNELS)
def test_check_rejects_a_wrong_result(name):
    """The reference's own values pass; one element moved by more than its tolerance (by one step
    of the data where the reference is exact) fails."""
    case = rk.make_case(name, "tiny")
    refs = rk.REFERENCES[name](case)
    outs = {k: ref.astype(case["arrays"][k].dtype).reshape(case["arrays"][k].shape) for k, (ref, _) in refs.items()}
    if not any(np.any(tol) for _, tol in refs.values()):
        assert rk.check(case, outs)[0], name
    last = case["outputs"][-1]
    ref, tol = refs[last]
    i = int(np.argmax(np.abs(ref).ravel()))
    bad = outs[last].copy().ravel()
    bad[i] = ref.ravel()[i] + 2 * float(np.ravel(tol)[i]) + 1.0
    outs[last] = bad.reshape(outs[last].shape)
    ok, _, text = rk.check(case, outs)
    assert not ok and "MISMATCH" in text, (name, text)


@pytest.mark.parametrize("name", rk.KERNELS)
def test_benchmark_size_runs_enough_iterations(name):
    assert rk.make_case(name, "full")["iters"] >= 10 ** 5


def test_exact_reference_refuses_inputs_too_large_to_be_exact():
    with pytest.raises(AssertionError, match="too large"):
        rk.exact(np.array([1.0]), [np.array([2.0 ** 25])])


def test_bound_covers_float32_evaluation():
    """Bound's error bound holds for a float32 evaluation of the same expression (jacobi's shape)."""
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (5, 4096)).astype(np.float32)
    k = np.float32(0.2)
    got = k * ((((a[0] + a[1]) + a[2]) + a[3]) + a[4])
    b = [rk.Bound(x) for x in a]
    v, tol = (rk.f32(0.2) * ((((b[0] + b[1]) + b[2]) + b[3]) + b[4])).tolerance()
    err = np.abs(got.astype(np.float64) - v)
    assert np.all(err <= tol) and err.max() > 0
