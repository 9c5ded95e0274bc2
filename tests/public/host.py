"""The host side of the public-suite cases: the PyOpenCL-style host of tests/test_kernel_corpus.py
(its buffers, its read-back, its comparison), extended to what benchmark hosts do: several
launches in order over the same buffers, with global work offsets.

``run_launches`` works with any ``cl`` module (pyopencl on PoCL, or mncl); ``environment`` gives
(cl, context, queue) for a device name of cases.DEVICES; ``check_case`` runs a case there and
compares every output with the numpy reference; ``run_isolated`` does it in a child process, for
a case that may take the process down (issue 19 item 1).
"""
from __future__ import annotations

import concurrent.futures
import functools
import multiprocessing

import test_kernel_corpus as corpus
from test_kernel_corpus_emulator import emulator

from .cases import PUBLIC, PublicCase


def run_launches(cl, ctx, queue, case: PublicCase):
    """Build the case's program, make its buffers, run its launches in order; returns
    ({output name: host array}, [event of each launch])."""
    initial = case.initial_buffers()
    program = cl.Program(ctx, case.source).build(options=case.options)
    args, _, outputs = corpus.make_args(cl, ctx, case, initial)
    named = {a.name: value for a, value in zip(case.args, args)}
    kernels, events = {}, []
    for launch in case.launches:
        if launch.kernel not in kernels:
            kernels[launch.kernel] = getattr(program, launch.kernel)
        values = [named[a] if isinstance(a, str) else a for a in launch.args]
        extra = {"global_offset": launch.global_offset} if launch.global_offset else {}
        events.append(kernels[launch.kernel](queue, launch.global_size, launch.local_size, *values, **extra))
    return corpus.read_back(cl, queue, outputs, initial), events


@functools.lru_cache(maxsize=None)
def _mncl_cpu():
    import mncl as cl
    device = next(d for p in cl.get_platforms() for d in p.get_devices() if d.kind == "cpu")
    ctx = cl.Context([device])
    return cl, ctx, cl.CommandQueue(ctx)


def environment(device: str):
    """(cl, context, queue) for ``device``, or a string saying why there is none (PoCL absent)."""
    if device == "pocl":
        env = corpus.pocl()
        return env if isinstance(env, str) else env[:3]
    if device == "cpu":
        return _mncl_cpu()
    if device == "emulator":
        return emulator("tiny")
    if device == "mncore2":
        return emulator("mncore2")
    raise ValueError(f"unknown device {device!r}")


def run_on(device: str, name: str) -> dict:
    """The case's outputs on ``device`` (within the corpus driver's timeout)."""
    env = environment(device)
    results, _ = corpus.run_with_timeout(run_launches, *env, PUBLIC[name])
    return results


def _run_here(device: str, name: str) -> dict:
    return run_launches(*environment(device), PUBLIC[name])[0]


def run_isolated(device: str, name: str) -> dict:
    """``run_on`` in a fresh child process: a case that crashes the process fails, with a message."""
    ctx = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=ctx) as pool:
        try:
            return pool.submit(_run_here, device, name).result(timeout=corpus.TIMEOUT_S)
        except concurrent.futures.process.BrokenProcessPool:
            raise AssertionError(f"{name} on {device}: the process running it died (crashed)") from None


def check_case(device: str, name: str):
    case = PUBLIC[name]
    results = run_isolated(device, name) if device in case.isolate else run_on(device, name)
    expected = case.expected(case.initial_buffers())
    for out, value in results.items():
        corpus.check(case, out, value, expected[out], "numpy reference")
