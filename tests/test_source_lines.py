"""C source lines through the front end and into the SIMD backend.

The front end attaches a ``!dbg`` location to every instruction it builds;
``translator.backend.irread`` reads each instruction's line back into
``Inst.line`` (the innermost line of an inlined chain that is in the kernel's
own file); the backend's assembly shows ``# line N`` on the VLIW steps.
"""
from __future__ import annotations

import llvmlite.binding as llvm
import pytest

import emulator.machine
from translator import CompileError, compile_opencl, llvm_lock
from translator.backend import compile_kernel
from translator.backend.irread import read_function, source_lines

OPTS = [(), ("-cl-opt-disable",), ("-O1",), ("-O3",)]
OPT_IDS = ["default", "opt-disable", "O1", "O3"]

# the line numbers below are this text's (line 1 is the kernel's declaration)
MULTI = """__kernel void k(__global float *x, __global float *y,
                __global int *n, float a) {
    int i = get_global_id(0);
    float v = x[i];
    float w = v * a;
    float s = w
            + y[i];
    int m = n[i] << 2;
    y[i] = s - (float)m;
}
"""

SAXPY = """__kernel void saxpy(__global const float *x, __global float *y, float a)
{
    int i = get_global_id(0);
    y[i] = a * x[i] + y[i];
}
"""


def insts(cm, kernel):
    f = read_function(cm.llvm_ir, cm.kernels[kernel].wg_function)
    return [i for b in f.blocks for i in b.insts]


def lines_of(cm, kernel, op, type_=None, elem=None):
    return sorted({i.line for i in insts(cm, kernel)
                   if i.op == op and (type_ is None or i.type == type_) and (elem is None or i.elem == elem)})


@pytest.mark.parametrize("opts", OPTS, ids=OPT_IDS)
def test_loads_stores_and_arithmetic_carry_their_lines(opts):
    cm = compile_opencl(MULTI, spmd=True, options=opts)
    # the prologue reads the argument a (line 1); x[i]; y[i] on the continuation line
    assert lines_of(cm, "k", "load", elem="float") == [1, 4, 7]
    assert lines_of(cm, "k", "load", elem="i32") == [8]
    assert lines_of(cm, "k", "fmul") == [5]
    assert lines_of(cm, "k", "fadd") == [6]                         # 'w + y[i]' starts on line 6
    assert lines_of(cm, "k", "shl", type_="i32") == [8]
    assert lines_of(cm, "k", "sitofp") == [9]
    assert lines_of(cm, "k", "fsub") == [9]
    assert lines_of(cm, "k", "store") == [9]
    assert all(i.line for i in insts(cm, "k")), "every instruction of the kernel has a line"


@pytest.mark.parametrize("opts", OPTS, ids=OPT_IDS)
def test_instruction_text_has_no_debug_attachment(opts):
    for i in insts(compile_opencl(MULTI, spmd=True, options=opts), "k"):
        assert "!dbg" not in i.text, i.text


@pytest.mark.parametrize("opts", OPTS, ids=OPT_IDS)
def test_inlined_helper_reports_its_own_line(opts):
    src = """float sq(float v)
{
    return v * v;
}
__kernel void k(__global float *x) {
    int i = get_global_id(0);
    x[i] = sq(x[i]) + 1.0f;
}
"""
    cm = compile_opencl(src, spmd=True, options=opts)
    assert lines_of(cm, "k", "fmul") == [3]
    assert lines_of(cm, "k", "fadd") == [7]
    assert lines_of(cm, "k", "store") == [7]


@pytest.mark.parametrize("opts", OPTS, ids=OPT_IDS)
def test_helper_from_a_header_reports_the_call_line(tmp_path, opts):
    (tmp_path / "sq.h").write_text("\n\n\nfloat sq(float v) {\n    return v * v;\n}\n")
    src = """#include "sq.h"
__kernel void k(__global float *x) {
    int i = get_global_id(0);
    float t = x[i];

    x[i] = sq(t);
}
"""
    cm = compile_opencl(src, spmd=True, options=list(opts) + ["-I", str(tmp_path)])
    assert lines_of(cm, "k", "fmul") == [6]          # line 5 of sq.h is not a line of the kernel's file
    assert lines_of(cm, "k", "load", elem="float") == [4]


@pytest.mark.parametrize("opts", OPTS, ids=OPT_IDS)
def test_several_kernels_and_a_switch(opts):
    # a multi-line 'switch' in the IR, and a second kernel whose metadata numbers follow the first's
    src = """__kernel void a(__global int *p) {
    int i = get_global_id(0);
    switch (p[i] & 3) {
    case 0: p[i] = 10; break;
    case 1: p[i] = 20; break;
    case 2: p[i] = 35; break;
    default: p[i] = 40; break;
    }
    p[i + 1] = 7;
}
__kernel void b(__global float *q) {
    int i = get_global_id(0);
    float v = q[i];
    q[i] = v * 3.0f;
}
"""
    cm = compile_opencl(src, spmd=True, options=opts)
    assert lines_of(cm, "b", "fmul") == [14]
    assert lines_of(cm, "b", "load", elem="float") == [13]
    stores = {i.line for i in insts(cm, "a") if i.op == "store" and getattr(i.ops[0], "value", None) == 7}
    assert stores == {9}
    for i in insts(cm, "a"):
        assert i.line == 0 or 1 <= i.line <= 10, (i.line, i.text)     # 0: stores of several cases merged
    for i in insts(cm, "b"):
        assert 11 <= i.line <= 15, (i.line, i.text)


def test_ir_carries_line_tables_in_both_forms():
    for spmd in (False, True):
        for opt in (0, 1, 2, 3):
            cm = compile_opencl(MULTI, spmd=spmd, opt_level=opt)
            assert "!llvm.dbg.cu" in cm.llvm_ir and '"Debug Info Version"' in cm.llvm_ir
            with llvm_lock:
                llvm.parse_assembly(cm.llvm_ir).verify()
            name = cm.kernels["k"].wg_function
            lines = source_lines(cm.llvm_ir, name)
            assert lines and 9 in lines


def test_barrier_kernels_keep_lines():
    src = """__kernel void r(__global int *a, __local int *t) {
    int l = get_local_id(0);
    t[l] = a[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    a[get_global_id(0)] = t[(l + 1) % get_local_size(0)]
                        + 1;
}
"""
    for spmd in (False, True):
        cm = compile_opencl(src, spmd=spmd)
        if spmd:
            calls = [i for i in insts(cm, "r") if i.op == "call" and i.callee == "__mncl_barrier"]
            assert [i.line for i in calls] == [4]
            assert lines_of(cm, "r", "store") == [3, 5]


def test_backend_errors_point_at_the_line(monkeypatch):
    """A function the backend cannot lower is an error at its C line.  Every math builtin is
    supported now, so the test takes exp away from the backend's math library."""
    import translator.backend.calls as calls
    lower = calls.lower_math
    monkeypatch.setattr(calls, "lower_math", lambda em, base, *a: None if base == "exp" else lower(em, base, *a))
    src = """__kernel void k(__global float *x) {
    int i = get_global_id(0);
    float v = x[i];
    x[i] = exp(v);
}
"""
    cm = compile_opencl(src, spmd=True)
    with pytest.raises(CompileError) as e:
        compile_kernel(cm, "k", emulator.machine.load_machine("tiny"))
    assert e.value.diagnostics[0].line == 4, e.value.diagnostics
    assert "is not supported on the emulator device" in e.value.diagnostics[0].message


@pytest.mark.parametrize("opts", [(), ("-cl-opt-disable",)], ids=["default", "opt-disable"])
def test_assembly_shows_the_source_line(opts):
    cm = compile_opencl(SAXPY, spmd=True, options=opts)
    asm = compile_kernel(cm, "saxpy", emulator.machine.load_machine("tiny")).asm
    assert "# line 4" in asm, asm
    body = [ln for ln in asm.splitlines() if "# line" in ln]
    assert any("fvmul" in ln or "fvfma" in ln or "fvmad" in ln for ln in body if ln.endswith("# line 4")), body
