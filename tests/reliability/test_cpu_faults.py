"""The CPU device under kernels and launches that used to kill the host process (issue 20, items 7 and 9).

Every probe runs in a child process: a regression shows as a failed test (the child's signal
and output), never as a dead pytest.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

PRELUDE = """
import os, sys, threading
os.environ["MNCL_DEVICE"] = "cpu"
import numpy as np
import mncl as cl
ctx = cl.create_some_context()
mf = cl.mem_flags
"""


def run_child(body: str, timeout: float = 120) -> str:
    """Run PRELUDE + body in a fresh interpreter; return its stdout, failing the test if it died."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), MNCL_DEVICE="cpu")
    env.pop("PYTHONFAULTHANDLER", None)
    p = subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(body)], env=env, cwd=ROOT,
                       capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0, (f"the child exited with {p.returncode}"
                               f"{' (signal %d)' % -p.returncode if p.returncode < 0 else ''}\n"
                               f"stdout: {p.stdout[-2000:]}\nstderr: {p.stderr[-2000:]}")
    return p.stdout


# -- item 7: first launches from several threads ----------------------------------------------------
SPIN = """
SRC = '''__kernel void spin(__global float *y, int n) {
    int i = get_global_id(0); float s = y[i];
    for (int j = 0; j < n; j++) s = s * 0.999f + 1.0f;
    y[i] = s; }'''
prg = cl.Program(ctx, SRC).build()
NT = 8
queues = [cl.CommandQueue(ctx) for _ in range(NT)] if SEVERAL else [cl.CommandQueue(ctx)] * NT
ys = [np.zeros(4, np.float32) for _ in range(NT)]
bufs = [cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=y) for y in ys]
go = threading.Barrier(NT)
def work(j):
    k = prg.spin
    go.wait()                                 # every thread's first launch at the same moment
    k(queues[j], (4,), (4,), bufs[j], np.int32(3_000_000))
    queues[j].finish()
threads = [threading.Thread(target=work, args=(j,)) for j in range(NT)]
for t in threads: t.start()
for t in threads: t.join()
for j in range(NT):
    cl.enqueue_copy(queues[j], ys[j], bufs[j])
    assert np.all(ys[j] == ys[0]) and ys[j][0] > 900, ys[j]
print("ok")
"""


@pytest.mark.parametrize("several", [True, False], ids=["several_queues", "one_queue"])
def test_first_launches_from_many_threads_at_once(several):
    """The dispatcher was built lazily without a lock: two threads built one each and the second
    freed the first's code while it ran (SIGSEGV, every run with a kernel that runs a while)."""
    for _ in range(2 if several else 1):     # on 940024f the several-queue child died every time
        assert run_child(f"SEVERAL = {several}\n" + SPIN).strip().endswith("ok")
