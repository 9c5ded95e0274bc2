"""Property tests: random text, random expression programs and mutated valid kernels never
make compile_opencl raise anything but CompileError, and never an internal compiler error."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from translator import CompileError, compile_opencl

KERNELS = sorted((Path(__file__).resolve().parent / "kernels").glob("*.cl"))
OWN = [
    "__kernel void k(__global float4 *a, __local float *t, int n) {\n"
    "  int l = get_local_id(0); float4 v = a[get_global_id(0)];\n"
    "  t[l] = v.x + v.yz.y; barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  for (int s = 1; s < n; s <<= 1) { if (l >= s) v.w += t[l - s]; barrier(CLK_LOCAL_MEM_FENCE); }\n"
    "  switch (n & 3) { case 0: v *= 2.0f; break; default: v = (float4)(v.lo, v.hi); }\n"
    "  a[get_global_id(0)] = v + (float4)(convert_float(convert_int_sat_rte(v.x)));\n}\n",
    "typedef struct { int a; float b[3]; } S;\nstatic float h(__global S *s, int i) { return s[i].b[i % 3] * s->a; }\n"
    "__kernel void k(__global S *s, __global float *o) { int i = get_global_id(0); o[i] = h(s, i) ? 1.0f : -1.0f; }\n",
]
SOURCES = [p.read_text() for p in KERNELS] + OWN
OPTS = "-D T=float -D FACTOR=2 -D OFFSET=1"
TOKEN = re.compile(r"[A-Za-z_]\w*|\d+\.?\d*[fFuUlL]*|==|!=|<=|>=|&&|\|\||<<|>>|\+\+|--|->|\s+|.", re.S)
VOCAB = ["int", "float4", "(", ")", "{", "}", ";", "barrier(CLK_LOCAL_MEM_FENCE);", "return", "break", "x",
         "*", "&", "[", "]", ".xy", ".s9", "0", "1.5f", "->", "__local", "__global", "if", "for", "while", ",",
         "=", "+=", "?", ":", "struct", "goto", "sizeof", "(float2)", "get_global_id(0)", "DRAM", "#define",
         "#if", "\n", "'", '"', "\\", "continue", "switch", "case 1:", "half", "vload4", "typedef"]


def check(src, options=OPTS):
    try:
        compile_opencl(src, options=options)
    except CompileError as e:
        assert e.diagnostics, "CompileError without diagnostics"
        assert "internal compiler error" not in e.log, e.log


FUZZ = settings(max_examples=60, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@FUZZ
@given(st.text(max_size=300))
def test_random_text(text):
    check(text)


@FUZZ
@given(st.lists(st.sampled_from(VOCAB), max_size=60))
def test_random_token_soup(toks):
    check("".join(" " + t for t in toks))


@FUZZ
@given(st.data())
def test_mutated_kernels(data):
    src = data.draw(st.sampled_from(SOURCES))
    toks = TOKEN.findall(src)
    for _ in range(data.draw(st.integers(1, 4))):
        k = data.draw(st.integers(0, len(toks) - 1))
        op = data.draw(st.integers(0, 3))
        if op == 0:
            del toks[k]
        elif op == 1:
            toks.insert(k, data.draw(st.sampled_from(VOCAB)))
        elif op == 2:
            toks[k] = toks[data.draw(st.integers(0, len(toks) - 1))]
        else:
            j = data.draw(st.integers(0, len(toks) - 1))
            toks[k], toks[j] = toks[j], toks[k]
    check("".join(toks))


VARS = ["i", "u", "f", "d", "c", "l", "b", "uc"]
VECS = {"v4": ["x", "y", "xy", "s0", "lo", "hi", "even", "odd", "wzyx", "s3"], "i4": ["x", "lo", "s3", "wzyx"],
        "u2": ["x", "y", "yx", "s1"], "v3": ["x", "z", "lo", "xyz", "zyx"]}
FUNCS = {1: ["sqrt", "fabs", "sin", "abs", "clz", "popcount", "convert_int", "convert_float4", "as_uint", "length",
             "normalize", "any", "isnan", "sign", "convert_uchar_sat", "convert_int4_sat_rte", "rsqrt"],
         2: ["min", "max", "pow", "atan2", "dot", "cross", "step", "fmod", "add_sat", "rotate", "mul_hi", "isless"],
         3: ["clamp", "mix", "fma", "select", "smoothstep", "bitselect", "mad24"]}
BIN = ["+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^", "<", ">", "<=", "==", "!=", "&&", "||"]


@st.composite
def expressions(draw, depth=0):
    r = draw(st.integers(0, 9))
    if depth > 3 or r < 3:
        c = draw(st.integers(0, 2))
        if c == 0:
            return draw(st.sampled_from(VARS))
        if c == 1:
            return draw(st.sampled_from(["1", "2u", "3.5f", "0.25", "-7", "0x10", "'a'", "1L", "(float4)(1.0f)",
                                         "(int4)(1,2,3,4)", "(uint2)(5u, 6u)"]))
        v = draw(st.sampled_from(sorted(VECS)))
        return v + "." + draw(st.sampled_from(VECS[v]))
    sub = lambda: draw(expressions(depth + 1))  # noqa: E731
    if r == 3:
        return draw(st.sampled_from(["-", "!", "~"])) + "(" + sub() + ")"
    if r in (4, 5):
        return f"({sub()} {draw(st.sampled_from(BIN))} {sub()})"
    if r == 6:
        return f"({sub()} ? {sub()} : {sub()})"
    if r == 7:
        return f"({draw(st.sampled_from(['int', 'float', 'uint', 'float4', 'int4', 'double']))})({sub()})"
    n = draw(st.integers(1, 3))
    return draw(st.sampled_from(FUNCS[n])) + "(" + ", ".join(sub() for _ in range(n)) + ")"


@FUZZ
@given(st.lists(st.tuples(st.sampled_from(["i", "u", "f", "v4", "i4", "v4.x", "i4.yz", "pf[i]", "*pf", "c", "v3"]),
                          st.sampled_from(["=", "+=", "*=", "/=", "%=", "<<=", "|="]), expressions()),
                min_size=1, max_size=3))
def test_random_expression_programs(stmts):
    body = "\n".join(f"    {lhs} {op} {e};" for lhs, op, e in stmts)
    src = ("__kernel void k(__global float *pf, int i, uint u, float f, double d, char c, long l, float4 v4,\n"
           "                int4 i4, uint2 u2, float3 v3, uchar uc) {\n    bool b = i > 0;\n" + body +
           "\n    pf[0] = f + v4.x + i4.y + v3.z + u2.x + i + c + b;\n}\n")
    check(src, options="")


@pytest.mark.parametrize("path", KERNELS, ids=[p.stem for p in KERNELS])
def test_every_truncation_of_a_kernel_is_a_diagnostic(path):
    src = path.read_text()
    for cut in range(0, len(src), max(len(src) // 12, 1)):
        check(src[:cut])
