"""The public-suite-shaped kernels (tests/public/cases.py) on every device, against numpy.

Devices: PoCL through PyOpenCL (skipped cleanly where no OpenCL platform is installed), mncl's
CPU device, the emulator device on the ``tiny`` machine, and a subset on ``mncore2`` (one case
in the fast suite, the rest ``slow``).  A case a device fails today is a strict xfail naming the
item of issue 19 that breaks it (cases.py), so a fix shows up as XPASS.
"""
from __future__ import annotations

import pytest

from .cases import DEVICES, PUBLIC
from .host import check_case, environment

# The mncore2 subset: one of each kind of data movement and control flow at the real sizes.
MNCORE2_FAST = ["stencil3d"]
MNCORE2_SLOW = ["bicg", "reduce", "scan", "spmv", "nw", "bitonic", "nbody", "bfs_int", "triad"]


def _param(name, device, slow=False):
    case = PUBLIC[name]
    marks = [pytest.mark.slow] if slow or device in case.slow else []
    reason = case.xfail_on(device)
    if reason:
        marks.append(pytest.mark.xfail(reason=reason, strict=True))
    return pytest.param(name, marks=marks, id=name)


def test_enough_public_kernels():
    assert len(PUBLIC) >= 20
    assert all(c.follows for c in PUBLIC.values())


def test_xfails_name_an_item():
    for case in PUBLIC.values():
        assert set(case.xfail) <= set(DEVICES), case.name
        for reason in case.xfail.values():
            assert reason.startswith(("issue 19 item", "new:")), f"{case.name}: {reason}"


def test_mncore2_subset_names_cases():
    assert set(MNCORE2_FAST + MNCORE2_SLOW) <= set(PUBLIC)


@pytest.mark.parametrize("name", [_param(n, "pocl") for n in sorted(PUBLIC)])
def test_pocl(name):
    if isinstance(environment("pocl"), str):
        pytest.skip(environment("pocl"))
    check_case("pocl", name)


@pytest.mark.parametrize("name", [_param(n, "cpu") for n in sorted(PUBLIC)])
def test_cpu(name):
    check_case("cpu", name)


@pytest.mark.parametrize("name", [_param(n, "emulator") for n in sorted(PUBLIC)])
def test_emulator(name):
    check_case("emulator", name)


@pytest.mark.parametrize("name", [_param(n, "mncore2") for n in MNCORE2_FAST]
                         + [_param(n, "mncore2", slow=True) for n in MNCORE2_SLOW])
def test_mncore2(name):
    check_case("mncore2", name)
