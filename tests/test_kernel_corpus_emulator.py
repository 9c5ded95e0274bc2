"""The kernel corpus on the emulator device (machine ``tiny``, strict hazard checking).

Same cases, host code and checks as tests/test_kernel_corpus.py (numpy references,
and PoCL's output where PoCL is installed).  The fast suite runs every case at the
default options but SLOW_ON_EMULATOR's, and one case of each launch shape with a global
offset (corpus.offset_family); -cl-opt-disable, -O3 and the random differential kernels are
marked ``slow``.  Cases the emulator device fails today are strict xfails with their
error in kernels/xfail-mncl-emulator.txt; refresh it with
``MNCL_CORPUS_DEVICE=emulator MNCL_MACHINE=tiny python tests/kernels/refresh_xfail.py``.
"""
from __future__ import annotations

import functools
import os

import pytest

import test_kernel_corpus as corpus
from kernels.spec import read_xfails

XFAIL = read_xfails("emulator")


@functools.lru_cache(maxsize=None)
def emulator(machine="tiny"):
    """(mncl, context, queue) on the emulator device for `machine` (also the mncore2 subset's)."""
    import mncl as cl
    dev = cl.get_device(machine=machine)
    ctx = cl.Context([dev])
    return cl, ctx, cl.CommandQueue(ctx)


# Cases whose emulation takes more than a few seconds at every option: a single work-item's
# insertion sort of 300 elements is ~22,500 passes of a divergent loop, ~1.1 million steps.
SLOW_ON_EMULATOR = {"task_sort"}


@pytest.fixture(autouse=True)
def time_limit(monkeypatch):
    """A kernel that runs too long faults inside the emulator, before the driver's own timeout, so
    it cannot keep the shared queue busy for the cases after it.  Set per test: set once for the
    process, the limit outlived this module and failed slow tests of other modules."""
    if "MNCL_EMU_TIME_LIMIT" not in os.environ:
        monkeypatch.setenv("MNCL_EMU_TIME_LIMIT", str(corpus.TIMEOUT_S * 2 / 3))


def _param(test_id, slow):
    marks = [pytest.mark.slow] if slow or test_id.partition("@")[0] in SLOW_ON_EMULATOR else []
    if test_id in XFAIL:
        marks.append(pytest.mark.xfail(reason=XFAIL[test_id], strict=True))
    return pytest.param(test_id, marks=marks, id=test_id)


def test_xfail_table_names_cases():
    known = set(corpus.mncl_ids()) | set(corpus.random_ids(fast_only=False))
    assert not set(XFAIL) - known, "xfail-mncl-emulator.txt names tests that do not exist"


@pytest.mark.parametrize("test_id", [_param(t, "@" in t and not t.endswith("@off") or corpus.offset_is_slow(t))
                                     for t in corpus.mncl_ids()])
def test_corpus_on_emulator(test_id):
    corpus.run_and_check_mncl(test_id, emulator())


@pytest.mark.parametrize("test_id", [_param(t, True) for t in corpus.random_ids(fast_only=False)])
def test_random_on_emulator(test_id):
    corpus.run_and_check_random(test_id, emulator())
