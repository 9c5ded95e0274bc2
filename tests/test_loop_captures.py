"""Values leaving a counted loop (control.py): where the sequencer counts the passes and tests at
the bottom, every lane that entered leaves in the last pass, so a value read after the loop is
captured in that pass only (a sequencer branch, which packing.py leaves out of its packed body),
not under a lane mask in every pass.  Checked against numpy with lanes that never enter, loops
inside loops and values from the middle of the body."""
import numpy as np

from emulator_harness import device_env, launch
from test_alias_versioning import MVT_ROWS

SRC = MVT_ROWS + """
__kernel void last_of(__global const float *a, __global float *out, int n, int m)
{
    int i = get_global_id(0);
    float keep = -1.0f, twice = 0.0f;
    if (i % 3 != 0) {                       /* lanes that never enter the loops */
        for (int k = 0; k < m; k++) {
            float s = 0.0f;
            for (int j = 0; j < n; j++) {
                twice = 2.0f * a[j] + (float)i;     /* leaves both loops */
                s += twice;
            }
            keep = s - (float)k;            /* leaves the outer loop */
        }
    }
    out[i] = keep + twice;
}
"""


def test_a_sum_kept_in_a_register_leaves_in_the_last_pass():
    """x[i] += A[i][j] y[j]: the -noalias build keeps x[i] in a register and stores it after the
    loop; the sum it stores was captured under a mask in every pass (6,395 steps for mvt's two
    kernels at 512; 4,359 now), each pass's capture also waiting out its hazard."""
    n = 512
    rng = np.random.default_rng(3)
    A = rng.integers(-3, 4, (n, n)).astype(np.float32)
    y = rng.integers(-3, 4, n).astype(np.float32)
    x = rng.integers(-3, 4, n).astype(np.float32)
    (_, _, got), ev = launch(device_env("mncore2", new=True), SRC, "mvt_rows", n, A, y, x.copy(), np.int32(n))
    np.testing.assert_array_equal(got, x + A @ y)
    assert ev.stats.steps <= 2300, ev.stats.steps


def test_values_leaving_nested_counted_loops_with_lanes_that_never_enter():
    n, m, items = 37, 5, 300
    a = np.random.default_rng(4).integers(-4, 5, n).astype(np.float32)
    (_, got), _ = launch(device_env("mncore2", new=True), SRC, "last_of", items, a, np.zeros(items, np.float32),
                         np.int32(n), np.int32(m))
    i = np.arange(items, dtype=np.float32)
    twice = 2.0 * a[-1] + i
    s = sum(2.0 * a.astype(np.float64)[:, None] + i[None, :])       # (small integers: exact)
    keep = s - (m - 1)
    want = np.where(np.arange(items) % 3 != 0, keep + twice, -1.0 + 0.0)
    np.testing.assert_array_equal(got, want.astype(np.float32))
