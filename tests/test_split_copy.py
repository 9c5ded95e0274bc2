"""8-byte elements and 32-bit fields at the global id through the split copy
(translator/backend/splitcopy.py): doubles and longs loaded and stored as two contiguous wave
shares of a copy the runtime keeps, float2 / float4 vectors, structs and `a[2 * i + 1]` field by
field, against numpy, with the fallbacks (a buffer passed twice, mixed accesses), out-of-bounds
reports, narrowed waves and loops.  Before it every such access was a gather or a scatter over
the wave's span (daxpy of 100,000 doubles on mncore2: 131,772 steps and 730,212 cycles, now 714
and 14,284)."""
import numpy as np
import pytest

import mncl as cl

from emulator_harness import buf, device_env, launch, mncc_stats, read

FP64 = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"

DAXPY = FP64 + """
__kernel void daxpy(__global double *y, __global const double *x, double a)
{
    int i = get_global_id(0);
    y[i] = a * x[i] + y[i];
}
"""

GUARDED = FP64 + """
__kernel void scale(__global double *y, __global const double *x, __global long *c, double a, int n)
{
    int i = get_global_id(0);
    if (i < n) {
        y[i] = a * x[i];
        c[i] = c[i] * 3 + (long)i;
    }
}
"""

CHAIN = FP64 + """
__kernel void chain(__global double *y, __global const double *x, __global double *z)
{
    int i = get_global_id(0);
    y[i] = x[i] + 1.0;
    z[i] = y[i] * 2.0;           /* a load of y after its store in the same work-item */
    double s = 0.0;
    for (int k = 0; k < 3; k++)
        s += x[i] * (double)k;   /* a load in a loop */
    y[i] += s;
}
"""

NEIGHBOURS = FP64 + """
__kernel void diff(__global double *y, __global const double *x)
{
    int i = get_global_id(0);
    y[i] = x[i + 1] - x[i];      /* x's accesses are not all at the global id: x gathers */
}
"""


@pytest.fixture(scope="module")
def tiny():
    return device_env("tiny")


@pytest.mark.parametrize("n", [1, 511, 512, 1000, 1537])
def test_daxpy_matches_numpy_on_tiny(tiny, n):
    """Partial and whole waves (a wave of tiny is 512 work-items); steps were 1,834 at 1,000."""
    rng = np.random.default_rng(n)
    x, y = rng.standard_normal(n), rng.standard_normal(n)
    (yo, _), ev = launch(tiny, DAXPY, "daxpy", n, y, x, np.float64(2.5))
    np.testing.assert_array_equal(yo, 2.5 * x + y)
    if n == 1000:
        assert ev.stats.steps < 600


@pytest.mark.parametrize("n", [3000, 100_000])
def test_daxpy_on_mncore2_moves_each_element_about_once(n):
    """A narrowed wave (3,000 work-items) and four waves; DRAM about the compulsory bytes."""
    rng = np.random.default_rng(7)
    x, y = rng.standard_normal(n), rng.standard_normal(n)
    (yo, _), ev = launch(device_env("mncore2", new=True), DAXPY, "daxpy", n, y, x, np.float64(-0.75))
    np.testing.assert_array_equal(yo, -0.75 * x + y)
    if n == 100_000:
        assert ev.stats.steps < 2_000 and ev.stats.cycles < 40_000
        assert ev.stats.dram_bytes < 2 * 24 * n


def test_a_guarded_store_keeps_the_elements_it_skips_and_longs_wrap(tiny):
    """`if (i < n)` with a launch past n: the elements past n keep their values (the share is
    read first); 64-bit integers wrap as in C."""
    n, g = 700, 1024
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal(g), rng.standard_normal(g)
    c = rng.integers(-2**62, 2**62, g, dtype=np.int64)
    (yo, _, co), _ = launch(tiny, GUARDED, "scale", g, y, x, c, np.float64(3.0), np.int32(n))
    want_y, want_c = y.copy(), c.copy()
    want_y[:n] = 3.0 * x[:n]
    with np.errstate(over="ignore"):
        want_c[:n] = c[:n] * 3 + np.arange(n)
    np.testing.assert_array_equal(yo, want_y)
    np.testing.assert_array_equal(co, want_c)


def test_loads_after_stores_and_in_loops(tiny):
    n = 900
    x, y, z = np.arange(n, dtype=np.float64) / 8, np.zeros(n), np.zeros(n)
    (yo, _, zo), _ = launch(tiny, CHAIN, "chain", n, y, x, z)
    np.testing.assert_array_equal(zo, 2 * (x + 1))
    np.testing.assert_array_equal(yo, x + 1 + 3 * x)


def test_a_buffer_passed_twice_gathers_and_scatters(tiny, modes):
    """daxpy(y, y): two copies would part the buffer, so the launch runs the -norep build, which
    has none (abi._specialised) and gathers and scatters."""
    ctx, q = tiny
    n = 777
    y = np.random.default_rng(5).standard_normal(n)
    b = buf(ctx, y)
    cl.Program(ctx, DAXPY).build().daxpy(q, (n,), None, b, b, np.float64(2.0)).wait()
    np.testing.assert_array_equal(read(q, b, y), 3.0 * y)
    assert modes == ["1d-norep"]


def test_other_accesses_of_the_buffer_keep_the_gather(tiny):
    n = 600
    x = np.random.default_rng(9).standard_normal(n + 1)
    (yo, _), _ = launch(tiny, NEIGHBOURS, "diff", n, np.zeros(n), x)
    np.testing.assert_array_equal(yo, x[1:] - x[:-1])


def test_out_of_bounds_is_still_reported(tiny):
    ctx, q = tiny
    mf = cl.mem_flags
    y = cl.Buffer(ctx, mf.READ_WRITE, 8 * 100)
    x = cl.Buffer(ctx, mf.READ_WRITE, 8 * 200)
    with pytest.raises(cl.MemoryError, match=r"kernel 'daxpy' accessed out of bounds.*argument 0 \('y'"):
        cl.Program(ctx, DAXPY).build().daxpy(q, (200,), None, y, x, np.float64(1)).wait()


def test_mncl_cc_names_the_plan(tmp_path):
    err = mncc_stats(tmp_path / "daxpy.cl", DAXPY, "--machine", "tiny")
    assert "load x (global, 8 B): unit; split copy: the wave's odd and even work-items' elements" in err
    assert "store y (global, 8 B): unit; split copy: the wave's odd and even work-items' elements stored" in err
    assert "remark" not in err


COMPLEX = """
__kernel void cmul(__global float2 *z, __global const float2 *a, __global const float *re_im)
{
    int i = get_global_id(0);
    float2 u = a[i], v = z[i];
    z[i] = (float2)(u.x * v.x - u.y * v.y, u.x * v.y + u.y * v.x);
    /* interleaved floats by hand: fields 0 and 1 of two-word elements */
    z[i].x += re_im[2 * i];
    z[i].y += re_im[2 * i + 1];
}
"""

BODIES = """
typedef struct { float x, y, z, m; } body;
__kernel void pull(__global float4 *acc, __global const body *b, int n)
{
    int i = get_global_id(0);
    if (i < n) {
        body p = b[i];
        float4 s = (float4)(0.0f);
        for (int j = 0; j < n; j++) {          /* b[j]: uniform in the loop, the buffer itself */
            float dx = b[j].x - p.x, dy = b[j].y - p.y, dz = b[j].z - p.z;
            s += (float4)(dx, dy, dz, 0.0f) * b[j].m;
        }
        acc[i] = s * p.m;
    }
}
"""


@pytest.mark.parametrize("machine,n", [("tiny", 1000), ("mncore2", 40_000)])
def test_float2_fields_match_numpy(machine, n):
    rng = np.random.default_rng(11)
    a, z = (rng.integers(-8, 9, (n, 2)).astype(np.float32) for _ in range(2))
    ri = rng.integers(-8, 9, 2 * n).astype(np.float32)
    (zo, _, _), ev = launch(device_env(machine) if machine != "tiny" else device_env("tiny"), COMPLEX, "cmul", n,
                            z, a, ri)
    want = np.stack([a[:, 0] * z[:, 0] - a[:, 1] * z[:, 1], a[:, 0] * z[:, 1] + a[:, 1] * z[:, 0]], 1) \
        + ri.reshape(n, 2)
    np.testing.assert_array_equal(zo, want)
    if machine == "mncore2":
        assert ev.stats.dram_bytes < 2 * 4 * 8 * n       # twice z in and out, a and re_im


def test_struct_and_float4_fields_match_numpy(tiny):
    """A struct's fields at the global id (b[i]) while the loop reads b[j] from the buffer itself
    (b is read-only), and a float4 store under a guard."""
    n, g = 300, 512
    rng = np.random.default_rng(13)
    b = rng.integers(-4, 5, (g, 4)).astype(np.float32)
    acc = np.full((g, 4), 7, np.float32)
    (acco, _), _ = launch(tiny, BODIES, "pull", g, acc, b, np.int32(n))
    d = b[None, :n, :3] - b[:n, None, :3]
    s = (d * b[None, :n, 3:4]).sum(axis=1) * b[:n, 3:4]
    want = acc.copy()
    want[:n, :3], want[:n, 3] = s, 0
    np.testing.assert_array_equal(acco, want)


def test_mncl_cc_names_the_field_plans(tmp_path):
    err = mncc_stats(tmp_path / "cmul.cl", COMPLEX, "--machine", "tiny")
    assert "load re_im (global, 4 B): neighbourhood; split copy: the wave's elements as 2 contiguous shares, field by field" \
        in err
    assert "store z (global, 8 B): unit; split copy: the wave's elements stored as 2 contiguous shares" in err
    assert "remark" not in err


ROWS = FP64 + """
__kernel void dadd(__global const double *a, __global double *b, int n)
{
    int j = get_global_id(0);
    int i = get_global_id(1);
    b[i * n + j] += 2.0 * a[i * n + j];
}
__kernel void jac(__global const double *a, __global double *b, int n)
{
    int j = get_global_id(0);
    int i = get_global_id(1);
    if (i > 0 && j > 0 && i < n - 1 && j < n - 1)   /* a's neighbours: shifted planes of its copy */
        b[i * n + j] = 0.25 * (a[i * n + j - 1] + a[i * n + j + 1] + a[(i - 1) * n + j] + a[(i + 1) * n + j]);
}
"""


@pytest.mark.parametrize("machine,n,mode", [("tiny", 37, "rows"), ("tiny", 200, "rows"), ("mncore2", 64, "rows-n8")])
def test_doubles_of_a_2d_launch_run_flat(modes, machine, n, mode):
    """A 2-D launch's `b[i*n + j]` of doubles in the rows build, over the flat position, and the
    stencil's neighbours a[i*n + j +- 1], a[(i +- 1)*n + j] as shifted loads of a's replicated
    copy; before, they were gathers (dadd 200 x 200 on tiny ran the nd build: 5,882,421 steps,
    now 6,133)."""
    env = device_env(machine)
    rng = np.random.default_rng(n)
    a, b = rng.standard_normal((n, n)), rng.standard_normal((n, n))
    (_, bo), ev = launch(env, ROWS, "dadd", (n, n), a, b, np.int32(n))
    np.testing.assert_array_equal(bo, b + 2.0 * a)
    (_, jo), ev2 = launch(env, ROWS, "jac", (n, n), a, bo, np.int32(n))
    want = bo.copy()
    want[1:-1, 1:-1] = 0.25 * (a[1:-1, :-2] + a[1:-1, 2:] + a[:-2, 1:-1] + a[2:, 1:-1])
    np.testing.assert_array_equal(jo, want)
    assert modes == [mode, mode]
    if n == 200:      # 5,882,421 and 6,615,323 steps before (the nd build); the stencil's gathers 1,633,995
        assert ev.stats.steps < 10_000 and ev2.stats.steps < 30_000


SHIFTS = FP64 + """
__kernel void smooth(__global double *y, __global const double *x, int n)
{
    int i = get_global_id(0);
    if (i > 0 && i < n - 1)
        y[i] = x[i - 1] + 2.0 * x[i] + x[i + 1];
}
__kernel void shift(__global double *y, __global const double *x, int s, int n)
{
    int i = get_global_id(0);
    if (i + s >= 0 && i + s < n)
        y[i] = x[i + s];
}
__kernel void window(__global double *y, __global const double *x, int w)
{
    int i = get_global_id(0);
    double t = 0.0;
    for (int k = 0; k < w; k++)
        t += x[i + k] * (double)(k + 1);
    y[i] = t;
}
"""


@pytest.mark.parametrize("machine,n", [("tiny", 1000), ("mncore2", 40_000)])
def test_shifted_doubles_of_a_buffer_the_kernel_only_reads(machine, n):
    """x[i - 1], x[i + 1] (odd shifts: the other plane), x[i + s] for argument shifts of either
    parity and sign, x[i + k] in a loop: loads of x's replicated copy shifted by long words."""
    env = device_env(machine)
    rng = np.random.default_rng(n)
    x = rng.standard_normal(n + 8)
    (yo, _), ev = launch(env, SHIFTS, "smooth", n, np.zeros(n), x, np.int32(n))
    want = np.zeros(n)
    want[1:-1] = x[:n - 2] + 2.0 * x[1:n - 1] + x[2:n]
    np.testing.assert_array_equal(yo, want)
    # tiny 987 steps before (x's three loads gathered over the wave's span), mncore2 12,772
    assert ev.stats.steps < (700 if machine == "tiny" else 2_000)
    for s in (0, 1, 4, -3, 7):
        (yo, _), _ = launch(env, SHIFTS, "shift", n, np.full(n, 9.0), x, np.int32(s), np.int32(n))
        want = np.full(n, 9.0)
        lo, hi = max(0, -s), min(n, n - s)
        want[lo:hi] = x[lo + s:hi + s]
        np.testing.assert_array_equal(yo, want, err_msg=f"shift {s}")
    (yo, _), ev = launch(env, SHIFTS, "window", n, np.zeros(n), x, np.int32(5))
    want = sum(x[k:k + n] * (k + 1) for k in range(5))
    np.testing.assert_allclose(yo, want, rtol=1e-15, atol=1e-13)
    if machine == "mncore2":
        assert ev.stats.steps < 3_000          # 29,934 before


DOUBLE_FIELDS = FP64 + """
typedef struct { double re, im; } cplx;
__kernel void zmul(__global double2 *z, __global const cplx *a)
{
    int i = get_global_id(0);
    double2 v = z[i];
    cplx u = a[i];
    z[i] = (double2)(u.re * v.x - u.im * v.y, u.re * v.y + u.im * v.x);
}
__kernel void centre(__global double *out, __global const double *pos, int n)
{
    int i = get_global_id(0);           /* pos[i][0..2] of double pos[n][3], as MNACC's loops read it */
    if (i > 0 && i < n - 1)
        out[i] = pos[3 * i] + pos[3 * i + 2] - 0.5 * (pos[3 * (i - 1) + 1] + pos[3 * (i + 1) + 1]);
}
"""


@pytest.mark.parametrize("machine,n", [("tiny", 700), ("mncore2", 20_000)])
def test_double_fields_match_numpy(machine, n):
    """double2 and a struct of two doubles (8-byte fields at 16 bytes a work-item), and a
    double[3] row's fields with constant shifts of a read-only buffer."""
    env = device_env(machine)
    rng = np.random.default_rng(n)
    z, a = rng.standard_normal((n, 2)), rng.standard_normal((n, 2))
    (zo, _), ev = launch(env, DOUBLE_FIELDS, "zmul", n, z, a)
    want = np.stack([a[:, 0] * z[:, 0] - a[:, 1] * z[:, 1], a[:, 0] * z[:, 1] + a[:, 1] * z[:, 0]], 1)
    np.testing.assert_array_equal(zo, want)
    pos = rng.standard_normal((n, 3))
    (oo, _), ev2 = launch(env, DOUBLE_FIELDS, "centre", n, np.zeros(n), pos, np.int32(n))
    want = np.zeros(n)
    want[1:-1] = pos[1:-1, 0] + pos[1:-1, 2] - 0.5 * (pos[:-2, 1] + pos[2:, 1])
    np.testing.assert_array_equal(oo, want)
    if machine == "mncore2":
        assert ev.stats.steps < 2_000 and ev2.stats.steps < 2_000


def test_mncl_cc_names_the_double_field_plans(tmp_path):
    err = mncc_stats(tmp_path / "zmul.cl", DOUBLE_FIELDS, "--machine", "tiny")
    assert "two contiguous shares, field by field (2 fields)" in err
    assert "two contiguous shares, field by field (3 fields)" in err
    assert "remark" not in err


AFTER_LOOPS = """
__kernel void trips(__global int *out, int n)
{
    int i = get_global_id(0), c = 0;
    for (int s = n; s > 0; s /= 2) c++;
    out[3 * i] = c;
    for (int d = 1; d < n; d *= 3) c++;
    out[3 * i + 1] = c;
    out[3 * i + 2] = i;
}
"""


def test_a_written_buffer_whose_accesses_the_copy_cannot_all_serve_has_none(tiny):
    """The access analysis sees every store at 3 i + c, but after the loops the backend's values
    no longer carry the id's form: some stores went to the copy and others scattered into the
    buffer, and the copy, written back after the launch, put the launch-start values over the
    scattered ones (test_local_unit's loop counts read 0).  Such a build starts again without the
    buffer's copy (splitcopy.Mismatch)."""
    n, g = 100, 300
    (out,), _ = launch(tiny, AFTER_LOOPS, "trips", g, np.full(3 * g, -1, np.int32), np.int32(n))
    c, s = 0, n
    while s > 0:
        c, s = c + 1, s // 2
    c1, d = c, 1
    while d < n:
        c, d = c + 1, d * 3
    want = np.stack([np.full(g, c1), np.full(g, c), np.arange(g)], 1).ravel()
    np.testing.assert_array_equal(out, want)
