"""Random barrier programs against a numpy model of the work-group.

Each program is a random nest of uniform loops (trip counts that depend on the group id),
uniform branches, blocks with variables that live across barriers, per-work-item branches,
break/continue, and exchange phases ``t[l] = ...; barrier; v = f(t[...]); barrier``.  The
generator writes the OpenCL C kernel and, line for line, a numpy model that runs one whole
work-group as arrays; the compiled kernel (tests/frontend_harness.py) must agree at -O0, -O2
and -O3.  (PoCL is not the reference here: its barrier handling disagrees with the model on
some of these programs.)"""
from __future__ import annotations

import random

import numpy as np
import pytest

from frontend_harness import Local, build

N = 32


def generate(seed):
    rng = random.Random(seed)
    c_lines, py_lines = [], []

    pyshift = [0]          # C blocks '{ ... }' have no Python counterpart: dedent the model

    def emit(ind, c, py):
        c_lines.append("    " * (ind + 1) + c)
        if py is not None:
            for p in py if isinstance(py, list) else [py]:
                py_lines.append("    " * (ind + 1 - pyshift[0]) + p)

    def phase(ind):
        k = rng.randint(1, 5)
        pre = rng.randrange(3)
        emit(ind, ["t[l] = v;", "t[l] = (v + w) & 0xffff;", "t[l] = (v * 2 - l) & 0xffff;"][pre],
             ["t = v.copy()", "t = (v + w) & 0xffff", "t = (v * 2 - L) & 0xffff"][pre])
        emit(ind, "barrier(CLK_LOCAL_MEM_FENCE);", None)
        op = rng.randrange(4)
        emit(ind, [f"v = (v + t[(l + {k}) % n]) & 0xffff;", f"v = v ^ t[(n - 1 - l + {k}) % n];",
                   f"v = (v * 3 + t[(l * {k}) % n]) & 0xffff;", f"w += t[(l + {k}) % n] > v;"][op],
             [f"v = (v + t[(L + {k}) % N]) & 0xffff", f"v = v ^ t[(N - 1 - L + {k}) % N]",
              f"v = (v * 3 + t[(L * {k}) % N]) & 0xffff", f"w = w + (t[(L + {k}) % N] > v)"][op])
        emit(ind, "barrier(CLK_LOCAL_MEM_FENCE);", None)

    def item_if(ind):
        m, a = rng.randint(2, 5), rng.randint(1, 9)
        emit(ind, f"if (l % {m} == 0) v = (v + {a}) & 0xffff; else w = (w ^ v) & 0xffff;",
             [f"msk = L % {m} == 0", "w = np.where(msk, w, (w ^ v) & 0xffff)",
              f"v = np.where(msk, (v + {a}) & 0xffff, v)"])

    def block(depth, ind):
        for _ in range(rng.randint(1, 3)):
            r = rng.random()
            if depth < 2 and r < 0.3:
                var, R = f"r{depth}", rng.randint(0, 3)
                emit(ind, f"for (int {var} = 0; {var} < {R} + (int)(g % 2); {var}++) {{",
                     f"for {var} in range({R} + g % 2):")
                j = rng.random()
                if j < 0.25:
                    emit(ind + 1, f"if ({var} == 1) continue;", f"if {var} == 1: continue")
                elif j < 0.5:
                    emit(ind + 1, f"if ({var} == 2) break;", f"if {var} == 2: break")
                block(depth + 1, ind + 1)
                emit(ind + 1, "", "pass")
                emit(ind, "}", None)
            elif depth < 2 and r < 0.45:
                c = rng.randint(0, 2)
                emit(ind, f"if (g % 3 == {c}) {{", f"if g % 3 == {c}:")
                block(depth + 1, ind + 1)
                emit(ind + 1, "", "pass")
                emit(ind, "} else {", "else:")
                block(depth + 1, ind + 1)
                emit(ind + 1, "", "pass")
                emit(ind, "}", None)
            elif depth < 2 and r < 0.55:
                c = rng.randint(1, 9)
                emit(ind, "{", None)
                pyshift[0] += 1
                emit(ind + 1, f"int tmp{depth} = v + {c};", f"tmp{depth} = v + {c}")
                phase(ind + 1)
                emit(ind + 1, f"v = (v + (tmp{depth} & 7)) & 0xffff;", f"v = (v + (tmp{depth} & 7)) & 0xffff")
                pyshift[0] -= 1
                emit(ind, "}", None)
            elif r < 0.65:
                item_if(ind)
            else:
                phase(ind)
    block(0, 0)
    src = ("__kernel void k(__global const int *in, __global int *out, __local int *t) {\n"
           "    int l = get_local_id(0), n = get_local_size(0), g = get_group_id(0);\n"
           "    int v = in[get_global_id(0)], w = 0;\n" + "\n".join(c_lines) +
           "\n    out[get_global_id(0)] = v * 7 + w;\n}\n")
    # the model: py_lines use 4-space steps relative to indentation 1
    body = "\n".join(line[4:] for line in py_lines) or "pass"
    model = ("def model(x, g):\n    L = np.arange(N)\n    v = x.astype(np.int64).copy()\n"
             "    w = np.zeros(N, np.int64)\n    t = np.zeros(N, np.int64)\n" +
             "\n".join("    " + line for line in body.splitlines()) + "\n    return v * 7 + w\n")
    ns = {"np": np, "N": N}
    exec(model, ns)
    return src, ns["model"]


@pytest.mark.parametrize("seed", range(20))
def test_random_barrier_programs(seed):
    src, model = generate(seed)
    x = np.random.default_rng(seed).integers(0, 1000, 8 * N).astype(np.int32)
    ref = np.concatenate([model(x[g * N:(g + 1) * N], g) for g in range(8)])
    for level in (0, 2, 3):
        p = build(src, opt_level=level)
        assert p.cm.kernels["k"].uses_barrier or "barrier" not in src
        o = np.zeros(8 * N, np.int32)
        p.run("k", 8 * N, N, x, o, Local(N * 4))
        np.testing.assert_array_equal(o, ref, err_msg=f"-O{level}\n{src}")
