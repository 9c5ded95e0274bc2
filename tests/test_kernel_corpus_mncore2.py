"""A subset of the kernel corpus on the full-size machine (``mncore2``: 4096 PEs, 32768 work-items
a wave), where waves, stripes and replicated buffers have their real sizes rather than tiny's.

Same cases, host code and checks as tests/test_kernel_corpus.py.  One case runs in the fast
suite; the rest are marked ``slow`` (a few seconds each).  The subset covers each data-movement
path of docs/architecture.md (contiguous, shifted, uniform, gather, scatter), divergent control
flow, __local memory with barriers, vectors and 64-bit types.  Kernels whose emulation takes
half a minute or more at this size (the math library, bitonic sort, vload/vstore of every
width) stay on tiny.
"""
from __future__ import annotations

import pytest

import test_kernel_corpus as corpus
from test_kernel_corpus_emulator import emulator

FAST = ["saxpy_tail"]
SLOW = ["stencil2d", "stencil1d", "matvec", "matvec_local", "branches_nested", "collatz", "early_return",
        "ndrange_2d", "vec4_arith", "half_storage", "matvec_double", "constant_table", "switch_case"]


def test_subset_names_cases():
    assert set(FAST + SLOW) <= set(corpus.mncl_ids())


@pytest.mark.parametrize("test_id", FAST + [pytest.param(t, marks=pytest.mark.slow) for t in SLOW])
def test_corpus_on_mncore2(test_id, monkeypatch):
    # a runaway kernel faults inside the emulator before the driver's own timeout
    monkeypatch.setenv("MNCL_EMU_TIME_LIMIT", str(corpus.TIMEOUT_S / 2))
    corpus.run_and_check_mncl(test_id, emulator("mncore2"))
