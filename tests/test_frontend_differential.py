"""Differential tests against PoCL: random integer expressions over all eight integer types
(C99 promotions, usual arithmetic conversions, shifts, division, casts, ternaries) and random
float4 expressions (swizzles, literals, builtins, conversions) must give PoCL's results.
Skipped where pyopencl finds no OpenCL device."""
from __future__ import annotations

import random
import warnings

import numpy as np
import pytest

from frontend_harness import build

TYPES = ["uchar", "char", "ushort", "short", "uint", "int", "ulong", "long"]
NP = {"uchar": np.uint8, "char": np.int8, "ushort": np.uint16, "short": np.int16, "uint": np.uint32,
      "int": np.int32, "ulong": np.uint64, "long": np.int64}


@pytest.fixture(scope="module")
def ocl():
    try:
        import pyopencl as cl
        dev = next(d for p in cl.get_platforms() if "Portable Computing Language" in p.name for d in p.get_devices())
    except Exception:
        pytest.skip("no PoCL device")
    ctx = cl.Context([dev])
    return cl, ctx, cl.CommandQueue(ctx)


def run_pocl(ocl, src, ins, out, gsize=64, lsize=16):
    cl, ctx, q = ocl
    mf = cl.mem_flags
    bufs = [cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a) for a in ins]
    ob = cl.Buffer(ctx, mf.WRITE_ONLY, out.nbytes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prg = cl.Program(ctx, src).build()
    prg.k(q, (gsize,), (lsize,), *bufs, ob)
    r = np.empty_like(out)
    cl.enqueue_copy(q, r, ob)
    q.finish()
    return r


def int_program(seed, nexpr=12):
    rng = random.Random(seed)
    vars_ = [(f"v{k}", t) for k, t in enumerate(TYPES)]

    def e(d=0):
        r = rng.random()
        if d > 4 or r < 0.2:
            if rng.random() < 0.8:
                return rng.choice(vars_)[0]
            return rng.choice(["3", "7u", "-5", "200", "0xff", "1L", "65535", "'a'", "40000u", "-1"])
        if r < 0.5:
            return f"({e(d + 1)} {rng.choice(['+', '-', '*', '&', '|', '^', '<', '>', '==', '!=', '<=', '&&', '||'])} {e(d + 1)})"
        if r < 0.6:
            if rng.random() < 0.5:
                return f"({e(d + 1)} / (({e(d + 1)} & 0x7f) + 1))"
            return f"({e(d + 1)} % (({e(d + 1)} & 0x3f) + 1))"
        if r < 0.68:
            return f"((uint)({e(d + 1)}) {rng.choice(['<<', '>>'])} ({e(d + 1)} & 31))"
        if r < 0.75:
            return f"({e(d + 1)} >> 3)"
        if r < 0.85:
            return f"(({rng.choice(TYPES)})({e(d + 1)}))"
        if r < 0.92:
            return f"({e(d + 1)} ? {e(d + 1)} : {e(d + 1)})"
        return rng.choice(["-", "~", "!"]) + f"({e(d + 1)})"
    exprs = [e() for _ in range(nexpr)]
    params = ", ".join(f"__global const {t} *a{k}" for k, (_, t) in enumerate(vars_))
    loads = "\n".join(f"    {t} {n} = a{k}[i];" for k, (n, t) in enumerate(vars_))
    body = "\n".join(f"    o[{j}*64+i] = (long)({x});" for j, x in enumerate(exprs))
    return f"__kernel void k({params}, __global long *o) {{\n    int i = get_global_id(0);\n{loads}\n{body}\n}}\n", exprs


@pytest.mark.parametrize("seed", [101, 102, 103, 104])
def test_integer_expressions_match_pocl(ocl, seed):
    src, exprs = int_program(seed)
    nr = np.random.default_rng(seed)
    ins = []
    for t in TYPES:
        info = np.iinfo(NP[t])
        a = nr.integers(info.min, info.max, 64, dtype=NP[t], endpoint=True)
        a[:5] = np.array([0, 1, info.max, info.min, 2], dtype=object).astype(NP[t])
        ins.append(a)
    o = np.zeros(64 * len(exprs), np.int64)
    build(src).run("k", 64, 16, *ins, o)
    r = run_pocl(ocl, src, ins, o)
    for j, x in enumerate(exprs):
        np.testing.assert_array_equal(o[j * 64:(j + 1) * 64], r[j * 64:(j + 1) * 64], err_msg=x)


def vec_program(seed, n=10):
    rng = random.Random(seed)
    sw = ["", ".wzyx", ".xxyy", ".yzwx", ".s3210", "", ""]

    def e(d=0):
        r = rng.random()
        if d > 3 or r < 0.25:
            c = rng.random()
            if c < 0.7:
                return rng.choice("abc") + rng.choice(sw)
            if c < 0.85:
                return rng.choice(["(float4)(1.0f, -2.0f, 0.5f, 3.0f)", "(float4)(s)", "(float4)(1.5f)"])
            return f"(float4)({rng.choice('abc')}.xy, {rng.choice('abc')}.zw)"
        if r < 0.55:
            return f"({e(d + 1)} {rng.choice(['+', '-', '*'])} {e(d + 1)})"
        if r < 0.6:
            return f"({e(d + 1)} / (fabs({e(d + 1)}) + 1.0f))"
        if r < 0.7:
            return f"{rng.choice(['fmin', 'fmax', 'min', 'max', 'copysign'])}({e(d + 1)}, {e(d + 1)})"
        if r < 0.75:
            return f"clamp({e(d + 1)}, -1.0f, 1.0f)"
        if r < 0.8:
            return f"mix({e(d + 1)}, {e(d + 1)}, 0.25f)"
        if r < 0.85:
            return f"select({e(d + 1)}, {e(d + 1)}, {e(d + 1)} > {e(d + 1)})"
        if r < 0.9:
            return f"{rng.choice(['fabs', 'floor', 'ceil', 'trunc', 'round', 'sign', 'rint'])}({e(d + 1)})"
        if r < 0.95:
            return f"convert_float4(convert_int4_sat({e(d + 1)}))"
        return f"convert_float4({e(d + 1)} < {e(d + 1)})"
    exprs = [e() for _ in range(n)]
    body = "\n".join(f"    o[{j}*64+i] = {x};" for j, x in enumerate(exprs))
    src = ("__kernel void k(__global const float4 *A, __global const float4 *B, __global const float4 *C,\n"
           "                __global const float *S, __global float4 *o) {\n    int i = get_global_id(0);\n"
           f"    float4 a = A[i], b = B[i], c = C[i]; float s = S[i];\n{body}\n}}\n")
    return src, exprs


@pytest.mark.parametrize("seed", [201, 202, 203, 204])
def test_float4_expressions_match_pocl(ocl, seed):
    src, exprs = vec_program(seed)
    nr = np.random.default_rng(seed)
    ins = [(nr.standard_normal((64, 4)) * 3).astype(np.float32) for _ in range(3)]
    ins.append(nr.standard_normal(64).astype(np.float32))
    o = np.zeros((len(exprs) * 64, 4), np.float32)
    build(src).run("k", 64, 16, *ins, o)
    r = run_pocl(ocl, src, ins, o)
    for j, x in enumerate(exprs):
        # PoCL may contract a*b+c into fma: compare with a small tolerance
        np.testing.assert_allclose(o[j * 64:(j + 1) * 64], r[j * 64:(j + 1) * 64], rtol=1e-4, atol=1e-4, err_msg=x)


def control_program(seed):
    """Random nests of if/else, for, while, do/while, switch (fall-through), break, continue,
    early return and block-scoped shadowing variables over three int variables."""
    rng = random.Random(seed)
    V = ["a", "b", "c"]
    cnt = [0]

    def ex():
        return rng.choice([f"{rng.choice(V)} {rng.choice(['+', '-', '^', '&', '|'])} {rng.randint(0, 9)}",
                           f"{rng.choice(V)} * {rng.randint(1, 3)}", f"({rng.choice(V)} >> 1)",
                           f"{rng.choice(V)} + {rng.choice(V)}", "x"])

    def cond():
        return rng.choice([f"{rng.choice(V)} % {rng.randint(2, 5)} == {rng.randint(0, 1)}",
                           f"{rng.choice(V)} > {rng.randint(0, 500)}", f"({rng.choice(V)} & {rng.randint(1, 15)}) != 0",
                           "x < 300"])

    def stmts(d, ind, inloop):
        out = []
        for _ in range(rng.randint(1, 3)):
            r, p = rng.random(), "    " * ind
            if d < 3 and r < 0.15:
                out += [p + f"if ({cond()}) {{"] + stmts(d + 1, ind + 1, inloop) + [p + "} else {"] + \
                    stmts(d + 1, ind + 1, inloop) + [p + "}"]
            elif d < 3 and r < 0.27:
                cnt[0] += 1
                iv = f"i{cnt[0]}"
                out += [p + f"for (int {iv} = 0; {iv} < {rng.randint(0, 5)}; {iv}++) {{"] + \
                    stmts(d + 1, ind + 1, True) + [p + "}"]
            elif d < 3 and r < 0.35:
                cnt[0] += 1
                iv = f"w{cnt[0]}"
                out += [p + f"int {iv} = {rng.randint(1, 6)};", p + f"while ({iv}-- > 0) {{"] + \
                    stmts(d + 1, ind + 1, True) + [p + "}"]
            elif d < 3 and r < 0.42:
                cnt[0] += 1
                dv = f"d{cnt[0]}"
                out += [p + f"int {dv} = {rng.randint(0, 4)};", p + "do {"] + stmts(d + 1, ind + 1, True) + \
                    [p + f"}} while ({dv}-- > 0);"]
            elif d < 3 and r < 0.5:
                out.append(p + f"switch ({rng.choice(V)} & 3) {{")
                for k in range(rng.randint(1, 3)):
                    out += [p + f"case {k}: {{"] + stmts(d + 1, ind + 1, inloop) + [p + "}"]
                    if rng.random() < 0.7:
                        out.append(p + "    break;")
                out += [p + "default: {"] + stmts(d + 1, ind + 1, inloop) + [p + "}", p + "}"]
            elif inloop and r < 0.55:
                out.append(p + f"if ({cond()}) {rng.choice(['break', 'continue'])};")
            elif r < 0.58:
                out.append(p + f"if ({cond()}) {{ o[i] = {rng.choice(V)}; return; }}")
            elif r < 0.65:
                out.append(p + f"{{ int x = {ex().replace('x', 'a')}; {rng.choice(V)} += x & 15; }}")
            else:
                out.append(p + f"{rng.choice(V)} = ({ex()}) & 0xfff;")
        return out
    body = "\n".join(stmts(0, 1, False))
    return ("__kernel void k(__global const int *in, __global int *o) {\n    int i = get_global_id(0);\n"
            "    int a = in[i], b = in[i] * 3 + 1, c = i, x = 7;\n" + body +
            "\n    o[i] = a * 1000000 + b * 1000 + c;\n}\n")


@pytest.mark.parametrize("seed", [301, 302, 303, 304, 305, 306])
def test_control_flow_matches_pocl(ocl, seed):
    src = control_program(seed)
    x = np.random.default_rng(seed).integers(0, 1000, 64).astype(np.int32)
    r = run_pocl(ocl, src, [x], np.zeros(64, np.int32))
    for level in (0, 3):
        o = np.zeros(64, np.int32)
        build(src, opt_level=level).run("k", 64, 16, x, o)
        np.testing.assert_array_equal(o, r, err_msg=f"-O{level}\n{src}")
