"""Runs one example program with PyOpenCL on PoCL and with mncl on its CPU device and emulator device.

Each program in this directory is written once against a module parameter ``cl`` (``pyopencl`` or
``mncl``) and uses the toolbox the way PyOpenCL users do, as submodules of ``cl`` (``cl.array``,
``cl.elementwise.ElementwiseKernel``, ``cl.reduction.ReductionKernel`` ...): ``toolbox(cl)``
imports them, as ``import pyopencl.array`` would.

    python -m tests.pyopencl_examples.mandelbrot            # every backend there is, with timings
"""
from __future__ import annotations

import importlib
import time

SUBMODULES = ("array", "elementwise", "reduction", "scan", "algorithm", "clrandom", "clmath", "tools",
              "characterize", "bitonic_sort")

BACKENDS = ("pocl", "mncl-cpu", "mncl-tiny", "mncl-mncore2")


class Unavailable(Exception):
    """The backend cannot run here (no pyopencl, no PoCL platform, no Mako for PyOpenCL's toolbox)."""


def toolbox(cl):
    """`cl` with its toolbox submodules imported (cl.array, cl.reduction, ...)."""
    for sub in SUBMODULES:
        try:
            importlib.import_module(f"{cl.__name__}.{sub}")
        except ImportError as e:
            raise Unavailable(f"{cl.__name__}.{sub} does not import: {e}") from e
    return cl


_QUEUES: dict = {}


def queue_for(backend: str):
    """(cl, queue) for a backend name; Unavailable when it cannot run on this machine."""
    if backend in _QUEUES:
        return _QUEUES[backend]
    if backend == "pocl":
        try:
            import pyopencl as cl
        except ImportError as e:
            raise Unavailable(f"pyopencl is not installed: {e}") from e
        try:
            platforms = cl.get_platforms()
        except cl.Error as e:
            raise Unavailable(f"no OpenCL platform: {e}") from e
        devs = [d for p in platforms if "portable computing language" in p.name.lower() for d in p.get_devices()]
        if not devs:
            raise Unavailable("no PoCL platform")
        ctx = cl.Context(devs[:1])
    else:
        import mncl as cl
        kind = backend.split("-", 1)[1]
        dev = cl.get_device("cpu") if kind == "cpu" else cl.get_device("emulator", kind)
        ctx = cl.Context([dev])
    toolbox(cl)
    _QUEUES[backend] = (cl, cl.CommandQueue(ctx))
    return _QUEUES[backend]


TIMINGS: list = []        # (example, backend, size, seconds)


def run(module, backend: str, size: str):
    """module.run(cl, queue, **module.SIZES[size]) on a backend: (its results, wall seconds)."""
    cl, queue = queue_for(backend)
    t0 = time.perf_counter()
    out = module.run(cl, queue, **module.SIZES[size])
    queue.finish()
    dt = time.perf_counter() - t0
    TIMINGS.append((module.__name__.rsplit(".", 1)[-1], backend, size, dt))
    return out, dt


def main(module, size="small"):
    """An example's command line: runs it on every backend there is and checks it against numpy."""
    import sys
    size = sys.argv[1] if len(sys.argv) > 1 else size
    ref = module.reference(**module.SIZES[size])
    for backend in BACKENDS:
        try:
            got, dt = run(module, backend, size)
        except Unavailable as e:
            print(f"{backend:14s} skipped: {e}")
            continue
        module.check(got, ref, against="numpy")
        print(f"{backend:14s} {dt:8.3f} s  agrees with numpy")
