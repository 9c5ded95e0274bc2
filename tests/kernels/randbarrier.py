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
on uint, so nothing is undefined and PoCL and mncl must agree exactly.
"""
from __future__ import annotations

import random

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
