"""`a[i - 1]` under `i > 0`: LLVM, knowing i positive, writes the 64-bit index as
`gid & 0x7fffffff`.  A mask that keeps every value the id can take (ids stay below
MAX_GLOBAL_ID) is the id itself, so the load is a shifted contiguous one, not a gather of `a`
(isel_int.int_binop; access.py classifies it so for --stats); the value is the same either way,
checked against numpy."""
from __future__ import annotations

import numpy as np
import pytest

from emulator_harness import device_env, launch
from translator.backend.values import MAX_GLOBAL_ID, mask_keeps

SRC = """
__kernel void prev(__global const float *a, __global float *b, int n)
{
    int i = get_global_id(0);
    b[i] = (i > 0 && i <= n) ? a[i - 1] : 0.0f;
}
"""


@pytest.mark.parametrize("machine, gs, n", [("tiny", 700, 500), ("tiny", 300, 300), ("mncore2", 5000, 4000)])
def test_a_shifted_read_under_a_positive_guard(machine, gs, n):
    a = (np.arange(gs, dtype=np.float32) % 11) - 5
    (_, out), ev = launch(device_env(machine, new=True), SRC, "prev", gs, a, np.full(gs, 7, np.float32),
                             np.int32(n))
    want = np.zeros(gs, np.float32)
    m = min(n, gs - 1)
    want[1:m + 1] = a[:m]
    np.testing.assert_array_equal(out, want)
    if machine == "tiny" and gs == 700:
        # `a` gathered (this launch's build keeps it resident in LM0): 368 steps; a shifted load: 169
        assert ev.stats.steps < 250, ev.stats.steps


def test_only_masks_that_keep_the_range_are_dropped():
    assert mask_keeps(0x7FFFFFFF, (0, MAX_GLOBAL_ID - 1))
    assert mask_keeps(MAX_GLOBAL_ID - 1, (0, MAX_GLOBAL_ID - 1))
    assert not mask_keeps(MAX_GLOBAL_ID // 2 - 1, (0, MAX_GLOBAL_ID - 1))   # cuts the top bit
    assert not mask_keeps(0x7FFFFFFE, (0, 10))                              # not low ones
    assert not mask_keeps(0xFF, (-1, 10))                                   # a negative value changes
    assert not mask_keeps(0xFF, None) and not mask_keeps(None, (0, 1))
