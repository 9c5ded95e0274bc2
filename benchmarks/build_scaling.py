"""How the emulator device's build time grows with the kernel: CPU seconds of the front end, the
SIMD backend and the assembler, and the assembly's lines, for one kernel on ``mncore2``.

    python benchmarks/build_scaling.py 250 500 1000      # n lines of `y[i] += x[i] * j;`
    python benchmarks/build_scaling.py --fft             # the 512-point FFT of issue 19 item 9
    python benchmarks/build_scaling.py --corpus 10       # the 10 slowest kernels of the corpora

The generated kernel is tests/test_build_scaling.py's ``accumulate`` and the FFT is
tests/test_issue19_regalloc.py's: the kernels the tests use.  To compare with another checkout,
run it there too (``cd <checkout> && python benchmarks/build_scaling.py ...``).  The first
kernel's front end includes initialising LLVM.
"""
from __future__ import annotations

import argparse
import glob
import os
import sys
import time

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(HERE, "tests"))


CORPORA = ("tests/public/*.cl", "tests/kernels/*.cl", "benchmarks/real_kernels/*.cl")


def timed(src: str, kernel: str, module=None) -> tuple:
    """(front end, backend, assembler CPU seconds, assembly lines) of one kernel's "1d" build."""
    import translator
    from emulator import assemble
    from emulator.machine import load_machine
    from translator.backend import compile_kernel
    t0 = time.process_time()
    module = module or translator.compile_opencl(src, spmd=True)
    t1 = time.process_time()
    asm = compile_kernel(module, kernel, load_machine("mncore2"), "1d").asm
    t2 = time.process_time()
    assemble(asm, f"{kernel}.vsm")
    t3 = time.process_time()
    return t1 - t0, t2 - t1, t3 - t2, len(asm.splitlines())


def measure(src: str, kernel: str) -> str:
    f, b, a, n = timed(src, kernel)
    return (f"front {f:6.2f} s  backend {b:6.2f} s  assembler {a:6.2f} s  "
            f"total {f + b + a:6.2f} s  {n:,} lines")


def corpus(top: int) -> None:
    """The `top` slowest kernels of the corpora (each file's front end counted with each kernel)."""
    import translator
    from translator import CompileError
    rows = []
    for path in sorted(p for pattern in CORPORA for p in glob.glob(os.path.join(HERE, pattern))):
        src = open(path).read()
        t = time.process_time()
        try:
            module = translator.compile_opencl(src, spmd=True)
        except CompileError:                    # (the corpus has kernels that must not compile)
            continue
        front = time.process_time() - t
        for kernel in module.kernels:
            try:
                _, b, a, n = timed(src, kernel, module)
            except CompileError:
                continue
            rows.append((front + b + a, os.path.relpath(path, HERE), kernel, n))
    for total, path, kernel, n in sorted(rows, reverse=True)[:top]:
        print(f"{total:6.2f} s  {path}:{kernel}  {n:,} lines", flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("lines", nargs="*", type=int, help="numbers of `y[i] += x[i] * j;` lines")
    ap.add_argument("--fft", action="store_true", help="the 512-point FFT kernels (forward and inverse)")
    ap.add_argument("--corpus", type=int, metavar="N", help="the N slowest kernels of the corpora")
    a = ap.parse_args(argv)
    if a.fft:
        from test_issue19_regalloc import FFT
        for kernel in ("fft_forward", "fft_inverse"):
            print(f"{kernel:12s} {measure(FFT, kernel)}", flush=True)
    if a.corpus:
        corpus(a.corpus)
    from test_build_scaling import accumulate
    for n in a.lines:
        print(f"{n:5d} lines  {measure(accumulate(n), 'k')}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
