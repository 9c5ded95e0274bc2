"""The assembly the backend emits for the kernel corpus, to check a change that should not alter it.

    PYTHONHASHSEED=0 python benchmarks/dump_asm.py OUTDIR [extra.cl ...]

compiles every kernel of tests/kernels/*.cl (and the extra files) for ``tiny`` in the 1d and nd
modes and writes each program to OUTDIR/<file>.<kernel>.<mode>.vsm, then prints the slowest
builds.  Run it before and after the change (in two checkouts) and ``diff -r`` the two
directories.  PYTHONHASHSEED must be fixed: codegen visits a loop's blocks in set order, so the
register numbering of some kernels varies with the hash seed from one run to the next.
"""
import glob, os, sys, time, hashlib
import translator
from emulator.machine import load_machine
from translator.backend import compile_kernel
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
files = sorted(glob.glob("tests/kernels/*.cl")) + sys.argv[2:]
m = load_machine("tiny")
times = []
for f in files:
    src = open(f).read()
    try:
        mod = translator.compile_opencl(src, spmd=True)
    except Exception as e:
        print("front fail", f, str(e)[:80]); continue
    for k in mod.kernels:
        for mode in ("1d", "nd"):
            t = time.time()
            try:
                asm = compile_kernel(mod, k, m, mode).asm
            except Exception as e:
                asm = "ERROR " + str(e)
            times.append((time.time() - t, f, k, mode))
            open(f"{out}/{os.path.basename(f)}.{k}.{mode}.vsm", "w").write(asm)
times.sort(reverse=True)
for t in times[:8]: print("%.2f %s %s %s" % t)
print("total %.1f" % sum(t[0] for t in times))
