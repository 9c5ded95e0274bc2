"""Launching a kernel on the emulator device with numpy arrays as its buffers, and mncl-cc's --stats
report, for the tests of the transfer plans (test_column_plan.py, test_row_plan.py, ...)."""
from __future__ import annotations

import subprocess
import sys

import numpy as np

import mncl as cl


def device_env(machine: str, new: bool = False):
    """(context, queue) on the emulator device for machine (a fresh device when new)."""
    ctx = cl.Context([cl.get_device("emulator", machine, new=new)])
    return ctx, cl.CommandQueue(ctx)


def launch(env, src, name, n, *args):
    """Run kernel `name` of src over n work-items (a tuple: that global size); arrays become
    buffers, read back after the launch.  Gives (the arrays' new contents, the event)."""
    ctx, q = env
    prg = cl.Program(ctx, src).build()
    bufs = [cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=a)
            if isinstance(a, np.ndarray) else a for a in args]
    ev = getattr(prg, name)(q, tuple(n) if isinstance(n, tuple) else (max(n, 1),), None, *bufs)
    out = []
    for a, b in zip(args, bufs):
        if isinstance(a, np.ndarray):
            r = np.empty_like(a)
            cl.enqueue_copy(q, r, b)
            out.append(r)
    q.finish()
    return out, ev


def buf(ctx, a):
    return cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=a)


def read(q, b, like):
    """Buffer b's contents as an array like `like`."""
    out = np.empty_like(like)
    cl.enqueue_copy(q, out, b)
    q.finish()
    return out


def mncc_stats(path, src: str, *options) -> str:
    """`mncl-cc --stats` (with `options`) on the kernel source src, written to the file `path`:
    its report (stderr), after checking that the build succeeded."""
    path.write_text(src)
    r = subprocess.run([sys.executable, "-m", "translator.cli", *options, "--stats", "-o",
                        str(path.with_suffix(".mnb")), str(path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stderr
