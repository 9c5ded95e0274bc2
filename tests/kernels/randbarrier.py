"""Random race-free kernels with barriers, for differential testing of work-group execution.

``random_barrier_kernel(seed)`` gives ``(source, local_size)``: a kernel
``rndb(__global const uint *in, __global const uint *uni, __global uint *out,
__local uint *buf)`` whose work-items keep private uint variables and a
private array, and exchange values through ``buf`` between barriers.  The
barriers sit at the top level, inside branches whose condition is the same
for the whole group (it depends only on the group id, the local size, a
uniform loop counter or ``uni[group]``) and inside loops with such trip
counts; divergent branches and loops (conditions on the local id or on
private values) hold only barrier-free code.

This is what a CPU device's work-group function must get right: values live
across barriers, loops and branches split at barriers, non-power-of-two
group sizes.  Each exchange writes ``buf[lid]``, waits, reads another
item's slot and waits again, so there are no data races; all arithmetic is
on uint with shift counts masked, so nothing is undefined in OpenCL C or in
C, and ``gcc_reference`` can run the same body as C, a thread per work-item
and a pthread barrier for ``barrier()``: the reference these kernels are
checked against (PoCL miscompiles some of them, and its compiler aborts on
others).
"""
from __future__ import annotations

import os
import random
import shutil
import subprocess
import tempfile

import numpy as np

N_VARS = 4


class BarrierGenerator:
    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.uniform_names = ["g", "ls", "u0"]           # uniform uint values in scope
        self.loop_depth = 0

    # expressions ------------------------------------------------------------------------------

    def atom(self, uniform: bool) -> str:
        choices = list(self.uniform_names) + [str(self.rng.choice([0, 1, 3, 7, 255, 65535, 0x9E3779B9]))]
        if not uniform:
            choices += [f"p{k}" for k in range(N_VARS)] + ["lid", "x", f"arr[{self.rng.randint(0, 3)}]"]
        return self.rng.choice(choices)

    def expr(self, depth: int, uniform: bool = False) -> str:
        if depth <= 0 or self.rng.random() < 0.3:
            a = self.atom(uniform)
            return f"{a}u" if a.isdigit() else a
        a, b = self.expr(depth - 1, uniform), self.expr(depth - 1, uniform)
        op = self.rng.choice(["+", "-", "*", "^", "&", "|", "<<", ">>", "/", "%", "?", "<"])
        if op in "/%":
            return f"({a} {op} (({b} & 7u) + 1u))"
        if op in ("<<", ">>"):                          # masked, so C (the gcc reference) agrees with OpenCL
            return f"({a} {op} ({b} & 31u))"
        if op == "?":
            c = self.expr(depth - 1, uniform)
            return f"(({c} & 1u) ? {a} : {b})"
        if op == "<":
            return f"(uint)({a} < {b})"
        return f"({a} {op} {b})"

    # statements -------------------------------------------------------------------------------

    def plain(self, depth: int, indent: str) -> list[str]:
        """Barrier-free statements (fine under divergent control flow)."""
        r = self.rng.random()
        k = self.rng.randrange(N_VARS)
        if r < 0.5 or depth <= 0:
            return [f"{indent}p{k} = {self.expr(3)};"]
        if r < 0.65:
            return [f"{indent}arr[{self.expr(2)} & 3u] = {self.expr(2)};"]
        if r < 0.85:
            out = [f"{indent}if (({self.expr(2)}) & 1u) {{"]
            out += self.plain(depth - 1, indent + "    ")
            out += [f"{indent}}} else {{"] + self.plain(depth - 1, indent + "    ") + [f"{indent}}}"]
            return out
        v = f"d{depth}_{self.rng.randrange(1000)}"
        out = [f"{indent}for (uint {v} = 0; {v} < (({self.expr(2)}) & 3u); {v}++) {{"]
        out += [f"{indent}    p{k} = p{k} * 3u + {v} + {self.expr(2)};"] + [f"{indent}}}"]
        return out

    def exchange(self, indent: str) -> list[str]:
        k, j = self.rng.randrange(N_VARS), self.rng.randrange(N_VARS)
        shift = self.expr(1, uniform=True)
        return [f"{indent}buf[lid] = {self.expr(2)};",
                f"{indent}barrier(CLK_LOCAL_MEM_FENCE);",
                f"{indent}p{k} = p{j} ^ buf[(lid + {shift}) % ls];",
                f"{indent}barrier(CLK_LOCAL_MEM_FENCE);"]

    def block(self, depth: int, indent: str, n: int) -> list[str]:
        out = []
        for _ in range(n):
            r = self.rng.random()
            if r < 0.3:
                out += self.exchange(indent)
            elif r < 0.45 and depth > 0:                  # uniform branch with barriers inside
                out += [f"{indent}if (({self.expr(2, uniform=True)}) & 1u) {{"]
                out += self.block(depth - 1, indent + "    ", 2)
                out += [f"{indent}}} else {{"] + self.block(depth - 1, indent + "    ", 1) + [f"{indent}}}"]
            elif r < 0.6 and depth > 0 and self.loop_depth < 2:   # uniform loop with barriers inside
                v = f"k{self.loop_depth}"
                out += [f"{indent}for (uint {v} = 0; {v} < (({self.expr(1, uniform=True)}) & 3u); {v}++) {{"]
                self.loop_depth += 1
                self.uniform_names.append(v)
                out += self.block(depth - 1, indent + "    ", 2)
                self.uniform_names.pop()
                self.loop_depth -= 1
                out += [f"{indent}}}"]
            else:
                out += self.plain(2, indent)
        return out


def random_barrier_kernel(seed: int):
    """(source, local size) for one seed."""
    g = BarrierGenerator(seed)
    local_size = g.rng.choice([1, 2, 5, 16, 24, 33, 64])
    lines = ["    uint lid = get_local_id(0);",
             "    uint gid = get_global_id(0);",
             "    uint g = get_group_id(0);",
             "    uint ls = get_local_size(0);",
             "    uint u0 = uni[g];",
             "    uint x = in[gid];",
             "    uint arr[4] = {x, x ^ 1u, lid, g};"]
    lines += [f"    uint p{k} = x * {2 * k + 1}u + lid;" for k in range(N_VARS)]
    lines += g.block(3, "    ", g.rng.randint(4, 8))
    lines += [f"    out[{N_VARS + 1} * gid + {k}] = p{k};" for k in range(N_VARS)]
    lines += [f"    out[{N_VARS + 1} * gid + {N_VARS}] = arr[0] + arr[1] * 3u + arr[2] * 5u + arr[3] * 7u;"]
    source = (f"/* random barrier kernel, seed {seed} (tests/kernels/randbarrier.py) */\n"
              "__kernel void rndb(__global const uint *in, __global const uint *uni, __global uint *out,\n"
              "                   __local uint *buf)\n{\n" + "\n".join(lines) + "\n}\n")
    return source, local_size


C_HARNESS = r"""
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
typedef unsigned int uint;
#define __kernel
#define __global
#define __local
#define CLK_LOCAL_MEM_FENCE 1
static pthread_barrier_t group_barrier;
static __thread uint t_lid, t_group;
static uint LS, NG;
static uint get_local_id(int d) { return t_lid; }
static uint get_group_id(int d) { return t_group; }
static uint get_global_id(int d) { return t_group * LS + t_lid; }
static uint get_local_size(int d) { return LS; }
static void barrier(int flags) { pthread_barrier_wait(&group_barrier); }
static uint *in_, *uni_, *out_, *buf_;
%(kernel)s
static void *item(void *p) { uint *ids = p; t_lid = ids[0]; t_group = ids[1]; rndb(in_, uni_, out_, buf_); return 0; }
int main(int argc, char **argv) {
    LS = atoi(argv[1]); NG = atoi(argv[2]);
    uint n = LS * NG, nout = n * %(per_item)d;
    in_ = malloc(4 * n); uni_ = malloc(4 * NG); out_ = calloc(nout, 4); buf_ = calloc(LS, 4);
    if (fread(in_, 4, n, stdin) != n || fread(uni_, 4, NG, stdin) != NG) return 2;
    pthread_t threads[LS]; uint ids[LS][2];
    for (uint g = 0; g < NG; g++) {
        pthread_barrier_init(&group_barrier, 0, LS);
        for (uint l = 0; l < LS; l++) { ids[l][0] = l; ids[l][1] = g; pthread_create(&threads[l], 0, item, ids[l]); }
        for (uint l = 0; l < LS; l++) pthread_join(threads[l], 0);
        pthread_barrier_destroy(&group_barrier);
    }
    fwrite(out_, 4, nout, stdout);
    return 0;
}
"""


def gcc_reference(source: str, local_size: int, groups: int, inp: np.ndarray, uni: np.ndarray):
    """The kernel's outputs computed by gcc-compiled C (a thread per work-item), or None without gcc."""
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        c_file, exe = os.path.join(tmp, "k.c"), os.path.join(tmp, "k")
        with open(c_file, "w") as f:
            f.write(C_HARNESS % {"kernel": source, "per_item": N_VARS + 1})
        subprocess.run([cc, "-O1", "-w", "-pthread", c_file, "-o", exe], check=True, capture_output=True)
        data = inp.astype(np.uint32).tobytes() + uni.astype(np.uint32).tobytes()
        run = subprocess.run([exe, str(local_size), str(groups)], input=data, check=True, capture_output=True)
    return np.frombuffer(run.stdout, np.uint32).copy()
