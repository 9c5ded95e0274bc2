"""Running a probe of the program cache or the preprocessor in a child process.

A probe that could run planted code, hang, or exhaust memory runs in a child with a time limit and
an address-space limit, so a regression fails the test instead of taking pytest down.  The child
gets this tree on PYTHONPATH, no MNCL_* variable of ours unless given, and ``PRELUDE``'s helpers.
"""
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MEMORY_LIMIT = 4 << 30

PRELUDE = r'''
import os, sys, resource
from pathlib import Path
resource.setrlimit(resource.RLIMIT_AS, (%d, %d))
import numpy as np
import mncl as cl
from mncl import cache, program
from mncl.binary import dump_module, load_module

ONE = "__kernel void k(__global float *y) { y[get_global_id(0)] = 1.0f; }"
TWO = "__kernel void k(__global float *y) { y[get_global_id(0)] = 2.0f; }"
ctx = cl.create_some_context()
queue = cl.CommandQueue(ctx)
device = ctx.devices[0]


def compiled(src):
    """The module a build of src makes (not through the cache)."""
    os.environ["MNCL_CACHE"] = "0"
    try:
        return load_module(cl.Program(ctx, src).build().binaries[0])
    finally:
        del os.environ["MNCL_CACHE"]


def calling_system(src, marker):
    """src's module with a call of system("touch <marker>") at the start of its work-group function."""
    m = compiled(src)
    cmd = f"touch {marker}"
    m.llvm_ir = (m.llvm_ir.replace("entry:\n", "entry:\n  %%pwn = call i32 @system(ptr @.pwn)\n", 1)
                 + f'\n@.pwn = private constant [{len(cmd) + 1} x i8] c"{cmd}\\00"\n'
                 + "declare i32 @system(ptr)\n")
    return m


def entry(src, options=()):
    """The path of src's cache entry without its extension."""
    return os.path.join(cache.cache_dir(), cache.key(src, tuple(options), device.backend.cache_key))


def run(src, n=16):
    """Build src as a new process would (the in-memory cache cleared), run k, return y."""
    program._memo.clear()
    prg = cl.Program(ctx, src).build()
    y = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * n)
    prg.k(queue, (n,), None, y)
    out = np.empty(n, np.float32)
    cl.enqueue_copy(queue, out, y)
    return out
''' % (MEMORY_LIMIT, MEMORY_LIMIT)


def child_env(**env):
    out = {k: v for k, v in os.environ.items() if not k.startswith("MNCL_")}
    out.update(PYTHONPATH=str(ROOT), MNCL_DEVICE="cpu", PYTHONWARNINGS="default")
    out.update({k: str(v) for k, v in env.items()})
    return out


def run_child(code: str, timeout: float = 60, prelude: bool = True, **env) -> subprocess.CompletedProcess:
    """Run ``code`` (after PRELUDE) in a child; TimeoutExpired fails the test as a hang."""
    src = (PRELUDE if prelude else "") + textwrap.dedent(code)
    return subprocess.run([sys.executable, "-c", src], capture_output=True, text=True, timeout=timeout,
                          cwd=str(ROOT), env=child_env(**env))


def start_child(code: str, prelude: bool = True, **env) -> subprocess.Popen:
    src = (PRELUDE if prelude else "") + textwrap.dedent(code)
    return subprocess.Popen([sys.executable, "-c", src], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=str(ROOT), env=child_env(**env))
