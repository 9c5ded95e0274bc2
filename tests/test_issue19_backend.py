"""Issue 19, SIMD backend items: kernels in the shapes of public benchmark suites, compiled for
the emulator device (`tiny`, strict mode: any race or hazard in the generated code faults) and
checked against numpy or Python references.

* read-modify-write loops (PolyBench atax / mvt / gemver): `y[i] += A[i*n + j] * x[j]` with no
  earlier store to y[i] — the previous pass's store is in flight when the next pass loads y;
* rotates (`rotate()`, the shift-or idiom -> llvm.fshl / llvm.fshr; SHOC md5hash);
* a pointer into one of two buffers (`p = c ? a : b`; SHOC scan's bottom_scan)."""
import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings, strategies as st

import mncl as cl


@pytest.fixture(scope="module")
def env():
    from mncl.context import _emulator_for
    dev = _emulator_for("tiny", cl.get_platforms()[0].get_devices())
    ctx = cl.Context([dev])
    return ctx, cl.CommandQueue(ctx)


def buf(ctx, a):
    return cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=a)


def run(env, src, name, gsize, *args, lsize=None):
    """Build `src`, launch kernel `name` over gsize with args (numpy arrays become buffers, read
    back after the launch), and give the arrays' new contents in order."""
    ctx, q = env
    prg = cl.Program(ctx, src).build()
    bufs = [(a, buf(ctx, a)) if isinstance(a, np.ndarray) and a.ndim else (a, None) for a in args]
    getattr(prg, name)(q, gsize, lsize, *[b if b is not None else a for a, b in bufs])
    out = []
    for a, b in bufs:
        if b is not None:
            r = np.empty_like(a)
            cl.enqueue_copy(q, r, b)
            out.append(r)
    q.finish()
    return out


# ---------------------------------------------------------------- 3: read-modify-write loops

ATAX = r"""
__kernel void atax(__global const float *A, __global const float *x, __global float *y, int n) {
  int i = get_global_id(0);
  if (i < n)
    for (int j = 0; j < n; j++)
      y[i] += A[i * n + j] * x[j];
}
__kernel void mvt(__global const float *A, __global const float *y1, __global float *x1, int n) {
  int i = get_global_id(0);
  if (i < n)
    for (int j = 0; j < n; j++)
      x1[i] = x1[i] + A[j * n + i] * y1[j];
}
__kernel void gemver(__global const float *A, __global float *x, __global const float *y,
                     __global const float *z, float beta, int n) {
  int i = get_global_id(0);
  if (i < n) {
    for (int j = 0; j < n; j++)
      x[i] += beta * A[j * n + i] * y[j];
    x[i] += z[i];
  }
}
"""


@pytest.mark.parametrize("n", [37, pytest.param(600, marks=pytest.mark.slow)])
def test_rmw_loops_without_an_earlier_store(env, n):
    """PolyBench's shapes: the loop's first load of y[i] precedes every store in the body, so only
    the previous pass's store can be in flight; strict mode faults unless the load waits for it.
    (atax's row-major A is gathered whole in every pass: only the small size.)"""
    rng = np.random.default_rng(n)
    A = rng.integers(-4, 5, n * n).astype(np.float32)
    x, y, z = (rng.integers(-4, 5, n).astype(np.float32) for _ in range(3))
    M = A.reshape(n, n)
    if n < 100:
        _, _, got = run(env, ATAX, "atax", (n,), A, x, y, np.int32(n))
        np.testing.assert_array_equal(got, y + M @ x)
    _, _, got = run(env, ATAX, "mvt", (n,), A, x, y, np.int32(n))
    np.testing.assert_array_equal(got, y + M.T @ x)
    _, got, _, _ = run(env, ATAX, "gemver", (n,), A, x, y, z, np.float32(2), np.int32(n))
    np.testing.assert_array_equal(got, x + 2 * (M.T @ y) + z)


def rmw_kernel(ty, target, read, lo, hi, step, store_before, second):
    """A read-modify-write loop kernel: y[target] op= <read> in a loop over j."""
    init = f"  y[{target}] = x[i] + ({ty})1;\n" if store_before else ""
    also = f"    z[i] = y[{target}] - ({ty})j;\n" if second else ""
    return f"""
__kernel void k(__global const {ty} *A, __global const {ty} *x, __global {ty} *y, __global {ty} *z,
                int n, int m) {{
  int i = get_global_id(0);
  if (i >= n) return;
{init}  for (int j = {lo}; j < {hi}; j += {step}) {{
    y[{target}] += {read} + ({ty})(j & 3);
{also}  }}
}}
"""


TARGETS = {"i": lambda i, n: i, "2 * i + 1": lambda i, n: 2 * i + 1, "n - 1 - i": lambda i, n: n - 1 - i}
READS = {"A[i * m + j] * x[j]": lambda A, x, y, i, j, n, m: A[i * m + j] * x[j],
         "A[j * n + i]": lambda A, x, y, i, j, n, m: A[j * n + i],
         "x[i] * x[j]": lambda A, x, y, i, j, n, m: x[i] * x[j],
         "y[i]": lambda A, x, y, i, j, n, m: y[i]}
BOUNDS = {"m": lambda m: m, "m - 1": lambda m: m - 1, "(m < 3 ? m : 3)": lambda m: min(m, 3)}


def rmw_reference(ty, target, read, lo, hi, step, store_before, second, A, x, y, z, n, m):
    """The kernel's effect, work-item by work-item in order (numpy vectors over the work-items)."""
    y, z = y.copy(), z.copy()
    i = np.arange(n)
    t = TARGETS[target](i, n)
    if store_before:
        y[t] = x[i] + 1
    for j in range(lo, BOUNDS[hi](m), step):
        y[t] = y[t] + READS[read](A, x, y, i, j, n, m) + y.dtype.type(j & 3)
        if second:
            z[i] = y[t] - y.dtype.type(j)
    return y, z


@st.composite
def rmw_cases(draw):
    ty = draw(st.sampled_from(["float", "int"]))
    target = draw(st.sampled_from(sorted(TARGETS)))
    read = draw(st.sampled_from(sorted(READS)))
    if read == "y[i]" and target != "i":
        read = "x[i] * x[j]"        # another work-item's y[i]: a race between work-items
    lo = draw(st.sampled_from([0, 1]))
    hi = draw(st.sampled_from(sorted(BOUNDS)))
    step = draw(st.sampled_from([1, 1, 2]))
    return dict(ty=ty, target=target, read=read, lo=lo, hi=hi, step=step,
                store_before=draw(st.booleans()), second=draw(st.booleans()),
                n=draw(st.integers(1, 70)), m=draw(st.integers(1, 6)), seed=draw(st.integers(0, 2 ** 16)))


def check_rmw(env, case):
    case = dict(case)
    n, m, seed = case.pop("n"), case.pop("m"), case.pop("seed")
    dt = np.float32 if case["ty"] == "float" else np.int32
    rng = np.random.default_rng(seed)
    A = rng.integers(-3, 4, n * max(n, m)).astype(dt)     # small integers: float sums are exact
    x = rng.integers(-3, 4, max(n, m)).astype(dt)
    y = rng.integers(-3, 4, 2 * n + 1).astype(dt)
    z = rng.integers(-3, 4, n).astype(dt)
    src = rmw_kernel(**case)
    _, _, gy, gz = run(env, src, "k", (n,), A, x, y, z, np.int32(n), np.int32(m))
    ry, rz = rmw_reference(**case, A=A, x=x, y=y, z=z, n=n, m=m)
    np.testing.assert_array_equal(gy, ry, err_msg=src)
    np.testing.assert_array_equal(gz, rz, err_msg=src)


SETTINGS = dict(deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))


ATAX_LIKE = dict(ty="float", target="i", read="A[i * m + j] * x[j]", lo=0, hi="m", step=1, store_before=False,
                 second=False, n=45, m=5, seed=1)


@settings(max_examples=4, **SETTINGS)
@given(rmw_cases())
@example(ATAX_LIKE)
@example(dict(ATAX_LIKE, ty="int", read="A[j * n + i]", step=2, second=True))
def test_random_rmw_loops_run_strict(env, case):
    check_rmw(env, case)


@pytest.mark.slow
@settings(max_examples=60, **SETTINGS)
@given(rmw_cases())
def test_random_rmw_loops_run_strict_more(env, case):
    check_rmw(env, case)
