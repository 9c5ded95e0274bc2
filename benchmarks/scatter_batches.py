"""Batched scattered stores against one pass per store, on the emulator device.

    python benchmarks/scatter_batches.py                  # tiny, about a minute
    python benchmarks/scatter_batches.py --machine mncore2 --n 4096

The kernel stores each work-item's 96 ulong results at a stride of 96 (``vstore16`` of
``ulong16`` at ``6 * i + k``, the shape of the random vector kernels of the corpus):
96 scattered 64-bit stores per work-item into a 48 KiB buffer for 64 work-items.  It is
compiled twice in the same run: as the backend makes it (consecutive stores to one
buffer batched, ``Codegen.SCATTER_BATCH`` a pass), and with batches of one store (the
peer: one pass over the buffer's chunks per store).  Printed
for each: emulated steps and cycles, emulator wall time, and the ratios; both results
are checked against numpy.  The program cache is off, so each form is compiled here.
This file is not a test: pytest collects only tests/.
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np

os.environ["MNCL_CACHE"] = "0"        # the two forms differ only in a class attribute

import mncl as cl  # noqa: E402
from translator.backend.codegen import Codegen  # noqa: E402

SOURCE = """
__kernel void aos(__global const long *a, __global ulong *out)
{
    int i = get_global_id(0);
    long16 x = vload16(i, a);
    vstore16(convert_ulong16(x), 6 * i + 0, out);
    vstore16(convert_ulong16(x * 3), 6 * i + 1, out);
    vstore16(convert_ulong16(x ^ 5), 6 * i + 2, out);
    vstore16(convert_ulong16(-x), 6 * i + 3, out);
    vstore16(convert_ulong16(x >> 3), 6 * i + 4, out);
    vstore16(convert_ulong16(x + 7), 6 * i + 5, out);
}
"""


def run(machine: str, n: int, batch: int):
    Codegen.SCATTER_BATCH = batch
    dev = cl.get_device(machine=machine)
    ctx = cl.Context([dev])
    q = cl.CommandQueue(ctx)
    prg = cl.Program(ctx, SOURCE).build()
    a = np.random.default_rng(0).integers(-2**62, 2**62, 16 * n)
    out = np.zeros(96 * n, np.uint64)
    ab = cl.Buffer(ctx, cl.mem_flags.COPY_HOST_PTR, hostbuf=a)
    ob = cl.Buffer(ctx, cl.mem_flags.COPY_HOST_PTR, hostbuf=out)
    t = time.perf_counter()
    ev = prg.aos(q, (n,), None, ab, ob)
    ev.wait()
    wall = time.perf_counter() - t
    cl.enqueue_copy(q, out, ob)
    x = a.reshape(n, 16)
    want = np.stack([x, x * 3, x ^ 5, -x, x >> 3, x + 7], axis=1).reshape(-1).astype(np.uint64)
    assert np.array_equal(out, want), f"batch {batch}: wrong results"
    return ev.stats.steps, ev.stats.cycles, wall


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--machine", default="tiny")
    ap.add_argument("--n", type=int, default=64, help="work-items")
    args = ap.parse_args()
    default = Codegen.SCATTER_BATCH
    rows = [(f"batched ({default} a pass)", run(args.machine, args.n, default)),
            ("one store a pass (peer)", run(args.machine, args.n, 1))]
    print(f"{args.n} work-items x 96 scattered 64-bit stores on {args.machine}")
    print(f"{'form':28} {'steps':>10} {'cycles':>12} {'wall s':>8}")
    for name, (steps, cycles, wall) in rows:
        print(f"{name:28} {steps:>10,} {cycles:>12,.0f} {wall:>8.2f}")
    (s0, c0, w0), (s1, c1, w1) = rows[0][1], rows[1][1]
    print(f"ratio (peer / batched): steps {s1 / s0:.1f}x, cycles {c1 / c0:.1f}x, wall {w1 / w0:.1f}x")


if __name__ == "__main__":
    main()
