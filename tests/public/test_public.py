"""The public-suite-shaped kernels (tests/public/cases.py) on every device, against numpy.

Devices: PoCL through PyOpenCL (skipped cleanly where no OpenCL platform is installed), mncl's
CPU device, the emulator device on the ``tiny`` machine, and a subset on ``mncore2`` (one case
in the fast suite, the rest ``slow``).  A case a device fails today is a strict xfail naming the
item of issue 19 that breaks it (cases.py), so a fix shows up as XPASS.
"""
from __future__ import annotations

import re

import pytest

from .cases import DEVICES, PUBLIC, symptom
from .host import check_case, environment

# The mncore2 subset, at the real wave and stripe sizes: global offsets (the one fast case),
# transposed and gathered reads, a 3-D range, a read-modify-write loop and rotates.  Each
# passing case takes 10-20 s at 4096 PEs; gemm, jacobi2d, bitonic and bfs_int take 50 s or more
# (beyond the corpus driver's emulation time limit) and stay on tiny.
MNCORE2_FAST = ["triad"]
MNCORE2_SLOW = ["bicg", "spmv", "stencil3d", "atax", "md5"]


def _param(name, device, slow=False):
    case = PUBLIC[name]
    marks = [pytest.mark.slow] if slow or device in case.slow else []
    reason = case.xfail_on(device)
    if reason:
        marks.append(pytest.mark.xfail(reason=reason, strict=True, raises=KnownFailure))
    return pytest.param(name, marks=marks, id=name)


class KnownFailure(Exception):
    """The case failed the way its xfail reason says (cases.SYMPTOM); any other failure stays one."""


def run(device: str, name: str):
    reason = PUBLIC[name].xfail_on(device)
    try:
        check_case(device, name)
    except Exception as e:
        if reason and re.search(symptom(reason), str(e), re.DOTALL):
            raise KnownFailure(f"{type(e).__name__}: {e}") from e
        raise


def test_enough_public_kernels():
    assert len(PUBLIC) >= 20
    assert all(c.follows for c in PUBLIC.values())


def test_xfails_name_an_item():
    for case in PUBLIC.values():
        assert set(case.xfail) <= set(DEVICES), case.name
        for reason in case.xfail.values():
            assert reason.startswith(("issue 19 item", "new:")), f"{case.name}: {reason}"
            if reason.startswith("issue"):
                symptom(reason)


def test_mncore2_subset_names_cases():
    assert set(MNCORE2_FAST + MNCORE2_SLOW) <= set(PUBLIC)


@pytest.mark.parametrize("name", [_param(n, "pocl") for n in sorted(PUBLIC)])
def test_pocl(name):
    if isinstance(environment("pocl"), str):
        pytest.skip(environment("pocl"))
    run("pocl", name)


@pytest.mark.parametrize("name", [_param(n, "cpu") for n in sorted(PUBLIC)])
def test_cpu(name):
    run("cpu", name)


@pytest.mark.parametrize("name", [_param(n, "emulator") for n in sorted(PUBLIC)])
def test_emulator(name):
    run("emulator", name)


@pytest.mark.parametrize("name", [_param(n, "mncore2") for n in MNCORE2_FAST]
                         + [_param(n, "mncore2", slow=True) for n in MNCORE2_SLOW])
def test_mncore2(name):
    run("mncore2", name)
