"""PyOpenCL's toolbox proven against PyOpenCL itself (issue 26).

Every program here runs with ``pyopencl`` on PoCL and with ``mncl`` on its CPU device and its
emulator device (the `tiny` machine in the fast suite, `mncore2` under ``-m slow``); each result is
compared with numpy and, where PoCL ran, with PoCL's (exact for integers, tight tolerances for
floats, statistical for random numbers, whose streams differ).  A backend that cannot run here
(no pyopencl, no PoCL platform, no Mako for PyOpenCL's toolbox) skips."""
import importlib

import pytest

from .harness import Unavailable, run

EXAMPLES = ("array_arithmetic", "elementwise_preamble", "reductions", "scans", "mandelbrot", "transpose",
            "monte_carlo_pi", "nbody", "median_filter", "sort")

_RESULTS: dict = {}


def results(name, backend, size):
    key = (name, backend, size)
    if key not in _RESULTS:
        module = importlib.import_module(f"{__package__}.{name}")
        try:
            _RESULTS[key] = run(module, backend, size)[0]
        except Unavailable as e:
            _RESULTS[key] = e
    r = _RESULTS[key]
    if isinstance(r, Unavailable):
        pytest.skip(f"{backend}: {r}")
    return r


def _check(name, backend, size):
    module = importlib.import_module(f"{__package__}.{name}")
    got = results(name, backend, size)
    module.check(got, module.reference(**module.SIZES[size]), against="numpy")
    if backend != "pocl":
        try:
            pocl = results(name, "pocl", size)
        except pytest.skip.Exception:
            return
        module.check(got, pocl, against="pocl")


@pytest.mark.parametrize("backend", ["pocl", "mncl-cpu", "mncl-tiny"])
@pytest.mark.parametrize("name", EXAMPLES)
def test_example(name, backend):
    _check(name, backend, "small")


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["pocl", "mncl-cpu", "mncl-mncore2"])
@pytest.mark.parametrize("name", EXAMPLES)
def test_example_large(name, backend):
    _check(name, backend, "large")


def test_a_missing_pyopencl_skips_cleanly(monkeypatch):
    """Without pyopencl (or without Mako for its toolbox) the PoCL backend is Unavailable, which the
    tests above turn into a skip."""
    import sys

    from . import harness
    monkeypatch.setitem(sys.modules, "pyopencl", None)
    monkeypatch.setattr(harness, "_QUEUES", {})
    with pytest.raises(Unavailable, match="pyopencl is not installed"):
        harness.queue_for("pocl")
    monkeypatch.setitem(sys.modules, "pyopencl.reduction", None)
    with pytest.raises(Unavailable, match="does not import"):
        harness.toolbox(type(sys)("pyopencl"))
