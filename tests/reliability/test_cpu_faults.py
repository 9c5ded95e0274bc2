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


# -- item 9: kernels and launches that killed the process ---------------------------------------------
LAUNCH = """
q = cl.CommandQueue(ctx)
y = np.zeros(64, np.float32)
buf = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=y)
prg = cl.Program(ctx, SRC).build()
try:
    prg.k(q, GLOBAL, LOCAL, buf)
    q.finish()
    cl.enqueue_copy(q, y, buf)
    print("no error", y[:4])
except cl.Error as e:
    print(type(e).__name__, e)
"""


def launch_in_child(src: str, global_size, local_size) -> str:
    """Build ``src`` (one kernel 'k(__global float *y)') and launch it in a child process; its report."""
    return run_child(f"SRC = {src!r}\nGLOBAL = {global_size!r}\nLOCAL = {local_size!r}\n" + LAUNCH).strip()


TRIVIAL = "__kernel void k(__global float *y) { y[0] = 1.0f; }"


@pytest.mark.parametrize("global_size,local_size,code,text", [
    ((1 << 64,), (1,), "INVALID_GLOBAL_WORK_SIZE", "more than 2^63 - 1 work-items"),
    ((1 << 64,), None, "INVALID_GLOBAL_WORK_SIZE", "more than 2^63 - 1 work-items"),
    ((1 << 32, 1 << 32), (1, 1), "INVALID_GLOBAL_WORK_SIZE", "more than 2^63 - 1 work-items"),
])
def test_global_size_beyond_64_bit_ids_is_refused(global_size, local_size, code, text):
    """2^64 work-items wrapped to 0 groups: SIGFPE in the dispatcher's division (or an endless run)."""
    out = launch_in_child(TRIVIAL, global_size, local_size)
    assert out.startswith("LogicError") and code in out and text in out, out


def test_global_offset_beyond_64_bit_ids_is_refused():
    import mncl as cl
    ctx = cl.create_some_context()
    q = cl.CommandQueue(ctx)
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 64)
    prg = cl.Program(ctx, TRIVIAL).build()
    with pytest.raises(cl.LogicError, match=r"INVALID_GLOBAL_OFFSET.*offset \(18446744073709551614,\) plus.*passes 2\^63 - 1"):
        prg.k(q, (4,), None, buf, global_offset=((1 << 64) - 2,))


def test_static_local_array_beyond_the_device_limit():
    """A 2 MiB static __local array on a device with 1 MiB of local memory ran (on the thread's stack);
    a 16 MiB one overflowed it."""
    src = """__kernel void k(__global float *y) { __local float t[512 << 10]; int i = get_local_id(0);
             t[i] = 1.0f; barrier(CLK_LOCAL_MEM_FENCE); y[get_global_id(0)] = t[0]; }"""
    out = launch_in_child(src, (64,), (16,))
    assert out.startswith("MemoryError") and "OUT_OF_RESOURCES" in out and "kernel 'k' needs 2097152 bytes of " \
        "__local memory; the device has 1048576" in out, out


@pytest.mark.parametrize("src,text", [
    # 16 bytes past a __local array: overwrote the K__wg frame's return address (SIGSEGV)
    ("""__kernel void k(__global float *y) {
    __local float t[16];
    int i = get_local_id(0);
    t[i + 16] = 1.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    y[get_global_id(0)] = t[0]; }""",
     "kernel 'k' indexed the __local array 't' (16 elements) out of bounds at kernel.cl:4:5: index 16"),
    # far past a __local array: into unmapped memory (SIGSEGV)
    ("""__kernel void k(__global float *y) {
    __local float t[16];
    t[get_global_id(0) * 100000] = 1.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    y[get_global_id(0)] = t[0]; }""",
     "kernel 'k' indexed the __local array 't' (16 elements) out of bounds at kernel.cl:3:5: index 100000"),
    # a private array in a helper, below its start, in the second dimension
    ("""float h(int i) {
    float p[4][8];
    for (int a = 0; a < 4; a++) for (int b = 0; b < 8; b++) p[a][b] = a + b;
    return p[i & 3][i - 40]; }
__kernel void k(__global float *y) { y[get_global_id(0)] = h(get_global_id(0)); }""",
     "kernel 'k' indexed the private array 'p[i & 3]' (8 elements) out of bounds at kernel.cl:4:12: index -40"),
])
def test_array_index_out_of_bounds_names_kernel_and_line(src, text):
    out = launch_in_child(src, (64,), (16,))
    assert out.startswith("MemoryError") and "OUT_OF_RESOURCES" in out and text in out, out


def test_sixteen_mib_private_array_in_the_kernel_is_refused():
    """Counted at the launch (the work-group's frame against the thread's stack)."""
    src = """__kernel void k(__global float *y) { float p[4 << 20]; int i = get_global_id(0);
             for (int j = 0; j < (4 << 20); j++) p[j] = j * y[i]; y[i] = p[i * 7]; }"""
    out = launch_in_child(src, (64,), (16,))
    assert out.startswith("MemoryError") and "kernel 'k' needs 16777256 bytes of private memory" in out, out


FAULTS = """
prg = cl.Program(ctx, '''
float deep(__global float *y, int i) {        // 16 MiB of private array, in a helper the launch check misses
    float p[4 << 20];
    for (int j = 0; j < (4 << 20); j++) p[j] = j * y[i];
    return p[i * 7]; }
__kernel void overflow(__global float *y) { int i = get_global_id(0); y[i] = deep(y, i); }
__kernel void wild_write(__global float *y, long stride) { y[(long)get_global_id(0) * stride] = 1.0f; }
__kernel void wild_read(__global float *y) { int i = get_global_id(0); y[i] = y[i - (1L << 40)]; }
__kernel void fill(__global float *y) { int i = get_global_id(0); y[i] = i; }
''').build()
q = cl.CommandQueue(ctx)
n = 1 << 16
buf = cl.Buffer(ctx, mf.READ_WRITE, 4 * n)
for attempt in range(2):                       # a thread that faulted can fault again
    for name, size, extra in [("overflow", (64,), ()), ("wild_write", (64,), (np.int64(4 << 30),)),
                              ("wild_read", (n,), ())]:     # n work-items: split over the pool's threads
        try:
            getattr(prg, name)(q, size, None, buf, *extra)
            q.finish()
            print(name, "no error")
        except cl.Error as e:
            print(type(e).__name__, e)
prg.fill(q, (n,), None, buf)
y = np.empty(n, np.float32)
cl.enqueue_copy(q, y, buf)
print("after the faults:", bool((y == np.arange(n)).all()))
"""


def test_kernel_faults_fail_the_launch_not_the_process():
    """The fault guard (mncl/cpu_faults.py): a stack overflow, a wild write and a wild read each end
    their launch with an error naming the kernel; the device keeps working."""
    lines = run_child(FAULTS).strip().splitlines()
    assert len(lines) == 7, lines
    for line, name in zip(lines, ["overflow", "wild_write", "wild_read"] * 2):
        assert line.startswith("MemoryError") and f"OUT_OF_RESOURCES - kernel '{name}' faulted: SIGSEGV" in line, line
    assert lines[-1] == "after the faults: True"


def test_kernel_faults_are_caught_under_faulthandler():
    """pytest and `python -X faulthandler` install faulthandler first; the guard runs in front of it."""
    lines = run_child("import faulthandler; faulthandler.enable()\n" + FAULTS).strip().splitlines()
    assert len(lines) == 7 and all("faulted: SIGSEGV" in x for x in lines[:6]), lines
    assert lines[-1] == "after the faults: True"


def test_faults_outside_kernels_still_end_the_process():
    """The guard only catches faults of kernel code: a segfault of the host program after a launch
    must not be swallowed (it goes to the handler before the guard, here the default action)."""
    body = """
q = cl.CommandQueue(ctx)
buf = cl.Buffer(ctx, mf.READ_WRITE, 64)
cl.Program(ctx, "__kernel void k(__global float *y) { y[0] = 1.0f; }").build().k(q, (1,), None, buf)
q.finish()
print("launched", flush=True)
import ctypes
ctypes.string_at(0)
print("the segfault was swallowed")
"""
    env = dict(os.environ, PYTHONPATH=str(ROOT), MNCL_DEVICE="cpu")
    env.pop("PYTHONFAULTHANDLER", None)
    p = subprocess.run([sys.executable, "-c", PRELUDE + body], env=env, cwd=ROOT, capture_output=True,
                       text=True, timeout=120)
    assert p.stdout.strip() == "launched" and p.returncode == -11, (p.returncode, p.stdout, p.stderr[-500:])
