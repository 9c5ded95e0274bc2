"""How the emulator device's build time grows with the kernel: CPU seconds of the front end, the
SIMD backend and the assembler, and the assembly's lines, for one kernel on ``mncore2``.

    python benchmarks/build_scaling.py 250 500 1000      # n lines of `y[i] += x[i] * j;`
    python benchmarks/build_scaling.py --fft             # the 512-point FFT of issue 19 item 9

The generated kernel is tests/test_build_scaling.py's ``accumulate`` and the FFT is
tests/test_issue19_regalloc.py's: the kernels the tests use.  To compare with another checkout,
run it there too (``cd <checkout> && python benchmarks/build_scaling.py ...``).  The first
kernel's front end includes initialising LLVM.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(HERE, "tests"))


def measure(src: str, kernel: str) -> str:
    import translator
    from emulator import assemble
    from emulator.machine import load_machine
    from translator.backend import compile_kernel
    t0 = time.process_time()
    module = translator.compile_opencl(src, spmd=True)
    t1 = time.process_time()
    asm = compile_kernel(module, kernel, load_machine("mncore2"), "1d").asm
    t2 = time.process_time()
    assemble(asm, f"{kernel}.vsm")
    t3 = time.process_time()
    return (f"front {t1 - t0:6.2f} s  backend {t2 - t1:6.2f} s  assembler {t3 - t2:6.2f} s  "
            f"total {t3 - t0:6.2f} s  {len(asm.splitlines()):,} lines")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("lines", nargs="*", type=int, help="numbers of `y[i] += x[i] * j;` lines")
    ap.add_argument("--fft", action="store_true", help="the 512-point FFT kernel (fft_forward)")
    a = ap.parse_args(argv)
    if a.fft:
        from test_issue19_regalloc import FFT
        print(f"fft_forward  {measure(FFT, 'fft_forward')}")
    from test_build_scaling import accumulate
    for n in a.lines:
        print(f"{n:5d} lines  {measure(accumulate(n), 'k')}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
