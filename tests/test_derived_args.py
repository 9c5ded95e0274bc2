"""Products of scalar arguments (IntSel.derived_product): the runtime works `k * n` out at launch
and puts it in a spare word of the argument block, where the lanes multiplied it through fp64
pieces.  The same values as C's 32-bit arithmetic (wrapping for unsigned, negative operands), in
every lane, at most as many products as there are spare words (the rest multiply in the lanes)."""
import numpy as np
import pytest

from emulator_harness import device_env, launch

SRC = """
__kernel void prods(__global uint *u, __global int *s, uint a, uint b, int c, int d, int e)
{
    int i = get_global_id(0);
    u[i] = a * b + (uint)i;
    s[i] = c * d - i + (c * e) * (d * e) + a * (uint)e;
}
"""


@pytest.mark.parametrize("machine", ["tiny", "mncore2"])
@pytest.mark.parametrize("a, b, c, d, e", [(70000, 70001, -3, 5, 7), (0xFFFFFFFF, 3, 46341, -46341, -1),
                                           (1, 0, 0, -1, 12345)])
def test_products_of_arguments_wrap_as_c_does(machine, a, b, c, d, e):
    n = 300
    (u, s), ev = launch(device_env(machine, new=True), SRC, "prods", n, np.zeros(n, np.uint32),
                        np.zeros(n, np.int32), np.uint32(a), np.uint32(b), np.int32(c), np.int32(d), np.int32(e))
    i = np.arange(n, dtype=np.int64)
    wrap = lambda x: ((x + 2 ** 31) % 2 ** 32) - 2 ** 31
    np.testing.assert_array_equal(u, ((a * b + i) % 2 ** 32).astype(np.uint32))
    want = wrap(wrap(c * d) - i + wrap(wrap(c * e) * wrap(d * e)) + wrap(a * (e % 2 ** 32)))
    np.testing.assert_array_equal(s, want.astype(np.int32))


def test_a_product_of_arguments_costs_no_lane_multiply():
    """`a * b` read from the argument block: far fewer steps than the fp64 pieces (about 25)."""
    src = "__kernel void k(__global uint *u, uint a, uint b) { u[get_global_id(0)] = a * b; }"
    (u,), ev = launch(device_env("mncore2", new=True), src, "k", 64, np.zeros(64, np.uint32), np.uint32(6),
                      np.uint32(7))
    assert (u == 42).all()
    assert ev.stats.steps < 90, ev.stats.steps
