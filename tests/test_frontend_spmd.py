"""The front end's per-work-item (SPMD) form, ``compile_opencl(..., spmd=True)``, for the SIMD backend.

The backend takes one function per kernel, ``K__wi``, calling nothing but its intrinsics
(``__mncl_barrier``, ``__mncl_local``) and LLVM intrinsics: user helpers, also those that
call barrier(), must be inlined at every optimisation level.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import re
import threading

import llvmlite.binding as llvm
import numpy as np
import pytest

from translator import CompileError, compile_opencl, llvm_lock
from frontend_harness import Local, build
from kernels.randbarrier import N_VARS, random_barrier_kernel

OPTS = [(), ("-cl-opt-disable",), ("-O3",)]
OPT_IDS = ["default", "opt-disable", "O3"]

# a reduction over __local memory in a helper that calls barrier(), a helper calling it,
# and a barrier-free helper using the global id
BARRIER_HELPER = """
int reduce_local(__local int *t, int n) {
    int lid = get_local_id(0);
    for (int s = n / 2; s > 0; s >>= 1) {
        if (lid < s) t[lid] += t[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    return t[0];
}
int outer(__local int *t) { int r = reduce_local(t, 64); barrier(CLK_LOCAL_MEM_FENCE); return r; }
float shifted(float x) { return x * 2.0f + get_global_id(0); }
__kernel void k(__global int *a, __global float *f) {
    __local int t[64];
    t[get_local_id(0)] = a[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    int r = outer(t);
    if (get_local_id(0) == 0) a[get_group_id(0)] = r;
    f[get_global_id(0)] = shifted(f[get_global_id(0)]);
}
"""


def functions(ir_text):
    """name -> body text of each defined function."""
    out = {}
    for m in re.finditer(r'^define [^@]*@"?([\w.$]+)"?\(.*?^}', ir_text, re.M | re.S):
        out[m.group(1)] = m.group(0)
    return out


def callees(body):
    return set(re.findall(r'\bcall [^@]*@"?([\w.$]+)"?\(', body))


def only_intrinsic_calls(ir_text, kernel):
    fns = functions(ir_text)
    assert list(fns) == [f"{kernel}__wi"], f"expected only {kernel}__wi, got {list(fns)}"
    called = callees(fns[f"{kernel}__wi"])
    assert all(c.startswith(("__mncl_", "llvm.")) for c in called), called
    return called


@pytest.mark.parametrize("opts", OPTS, ids=OPT_IDS)
def test_barrier_in_helper_is_inlined(opts):
    m = compile_opencl(BARRIER_HELPER, spmd=True, options=opts)
    called = only_intrinsic_calls(m.llvm_ir, "k")
    assert {"__mncl_barrier", "__mncl_local"} <= called
    k = m.kernels["k"]
    assert k.wg_function == "k__wi" and k.uses_barrier and k.local_mem_bytes == 256


@pytest.mark.parametrize("opts", OPTS, ids=OPT_IDS)
def test_helpers_calling_helpers_are_inlined(opts):
    src = """
    float sq(float x) { return x * x; }
    float norm2(float x, float y) { return sq(x) + sq(y); }
    void put(__global float *o, float v) { o[get_global_id(0)] = sqrt(v); }
    __kernel void k(__global const float *a, __global float *o) {
        size_t i = get_global_id(0);
        put(o, norm2(a[i], a[i + 1]));
    }
    """
    only_intrinsic_calls(compile_opencl(src, spmd=True, options=opts).llvm_ir, "k")


@pytest.mark.parametrize("opts", OPTS, ids=OPT_IDS)
def test_helper_with_work_item_builtins_compiles(opts):
    # used to be "internal compiler error: TypeError: Type of #N arg mismatch: [3 x i64]* != [6 x i64]*":
    # helpers took the work-group form's [3 x i64] local ids, K__wi passes its [6 x i64] ids
    src = """
    void fill(__local float *t, __global const float *a) {
        t[get_local_id(0)] = a[get_global_id(0)] + get_local_linear_id() + get_global_linear_id();
    }
    float pick(__local float *t, float w[2]) { return t[get_local_size(0) - 1 - get_local_id(0)] * w[1]; }
    __kernel void k(__global const float *a, __global float *o) {
        __local float t[32];
        float w[2] = {1.0f, 2.0f};
        fill(t, a);
        barrier(CLK_LOCAL_MEM_FENCE);
        o[get_global_id(0)] = pick(t, w);
    }
    """
    m = compile_opencl(src, spmd=True, options=opts)
    only_intrinsic_calls(m.llvm_ir, "k")
    assert m.kernels["k"].local_mem_bytes == 128


def test_global_id_in_helper_reads_the_global_ids():
    # in K__wi, get_global_id(d) is ids[3 + d]; a helper must read the same slot
    src = """
    ulong gid(void) { return get_global_id(1); }
    __kernel void k(__global ulong *o) { o[0] = gid(); }
    """
    body = functions(compile_opencl(src, spmd=True).llvm_ir)["k__wi"]
    assert re.search(r"getelementptr (inbounds )?i8, ptr %ids, i64 32\b", body), body   # byte 32: ids[4]


def test_barrier_is_convergent():
    # LLVM must not copy a barrier into both arms of a divergent branch (jump threading did)
    m = compile_opencl(BARRIER_HELPER, spmd=True)
    decl = re.search(r"^declare .*@__mncl_barrier\(i32\)(.*)$", m.llvm_ir, re.M)
    assert decl, m.llvm_ir
    groups = dict(re.findall(r"^attributes (#\d+) = \{(.*)\}$", m.llvm_ir, re.M))
    attrs = decl.group(1) + " ".join(groups.get(g, "") for g in re.findall(r"#\d+", decl.group(1)))
    assert "convergent" in attrs


def test_barrier_forms_in_helpers():
    src = """
    void sync_all(void) { work_group_barrier(CLK_GLOBAL_MEM_FENCE); }
    void sync_local(void) { barrier(CLK_LOCAL_MEM_FENCE); }
    __kernel void k(__global int *a) {
        a[get_global_id(0)] = 1;
        sync_all();
        if (a[0]) sync_local();
        a[get_global_id(0)] += a[(get_global_id(0) + 1) % get_global_size(0)];
    }
    """
    ir_text = compile_opencl(src, spmd=True, options=("-cl-opt-disable",)).llvm_ir
    only_intrinsic_calls(ir_text, "k")
    assert "call void @__mncl_barrier(i32 2)" in ir_text and "call void @__mncl_barrier(i32 1)" in ir_text


def test_wait_group_events_is_a_barrier():
    src = """
    __kernel void k(__global const float *a, __global float *o) {
        __local float t[64];
        event_t e = async_work_group_copy(t, a + get_group_id(0) * 64, 64, 0);
        wait_group_events(1, &e);
        o[get_global_id(0)] = t[63 - get_local_id(0)];
    }
    """
    ir_text = compile_opencl(src, spmd=True).llvm_ir
    only_intrinsic_calls(ir_text, "k")
    assert re.search(r"call void @__mncl_barrier\(i32 3\)", ir_text)


@pytest.mark.parametrize("src, message", [
    ("int f(int n) { barrier(CLK_LOCAL_MEM_FENCE); return n ? f(n - 1) : 0; }\n"
     "__kernel void k(__global int *a) { a[0] = f(3); }", "recursive call to 'f'"),
    ("int g(int n);\nint f(int n) { barrier(CLK_LOCAL_MEM_FENCE); return g(n); }\n"
     "int g(int n) { return n ? f(n - 1) : 0; }\n"
     "__kernel void k(__global int *a) { a[0] = f(3); }", "recursive call to 'f'"),
    ("int f(int n) { return n ? f(n - 1) : 0; }\n"
     "__kernel void k(__global int *a) { a[0] = 1; }", "recursive call to 'f'"),
    ("void f(void) { barrier(); }\n__kernel void k(__global int *a) { f(); }", "too few arguments"),
    ("void f(void) { barrier(1, 2); }\n__kernel void k(__global int *a) { f(); }", "too many arguments"),
    ("void f(void) { barrier(1.5f); }\n__kernel void k(__global int *a) { f(); }", "flags must be an integer"),
    ("void f(void) { __local int t[4]; }\n__kernel void k(__global int *a) { f(); }",
     "'__local' variables can only be declared in a kernel function"),
])
def test_spmd_errors(src, message):
    with pytest.raises(CompileError, match=re.escape(message)) as e:
        compile_opencl(src, spmd=True)
    assert "internal compiler error" not in str(e.value)


@pytest.mark.parametrize("src", [
    # a helper with a barrier called inside an expression: fine per work-item, not in the group form
    "int f(int x) { barrier(CLK_LOCAL_MEM_FENCE); return x; }\n"
    "__kernel void k(__global int *a) { a[0] = 1 + f(a[1]); }",
    # ... or returning before its end
    "int f(__global int *a) { if (a[0]) return 1; barrier(CLK_GLOBAL_MEM_FENCE); return a[1]; }\n"
    "__kernel void k(__global int *a) { int r = f(a); a[2] = r; }",
])
def test_spmd_accepts_what_the_work_group_form_rejects(src):
    with pytest.raises(CompileError, match="barrier"):
        compile_opencl(src)
    for opts in (("-cl-opt-disable",), ()):
        only_intrinsic_calls(compile_opencl(src, spmd=True, options=opts).llvm_ir, "k")


# ---------------------------------------------------------------------------- running K__wi
# A test-only model of the SIMD backend's contract: K__wi JIT-compiled with llvmlite, one thread
# per work-item of a group, __mncl_barrier a threading.Barrier, __mncl_local the group's buffer.
_group = {}
_BARRIER = ctypes.CFUNCTYPE(None, ctypes.c_int32)
_LOCAL = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)
_keep = []


def _barrier(flags):
    _group["barrier"].wait()


def _local(offset, nbytes):
    assert 0 <= offset and offset + nbytes <= len(_group["local"])
    return ctypes.addressof(_group["local"]) + offset


def run_wi(cm, name, gsize, lsize, *args):
    """Run kernel ``name`` of an SPMD module over a 1-D range (numpy buffers / scalars)."""
    with llvm_lock:
        if not _keep:
            llvm.initialize_native_target()
            llvm.initialize_native_asmprinter()
            llvm.load_library_permanently(ctypes.util.find_library("m"))
            cbs = (_BARRIER(_barrier), _LOCAL(_local))
            _keep.extend(cbs)
            llvm.add_symbol("__mncl_barrier", ctypes.cast(cbs[0], ctypes.c_void_p).value)
            llvm.add_symbol("__mncl_local", ctypes.cast(cbs[1], ctypes.c_void_p).value)
        tm = llvm.Target.from_default_triple().create_target_machine(codemodel="jitdefault", jit=True)
        mod = llvm.parse_assembly(cm.llvm_ir)
        mod.data_layout = str(tm.target_data)   # SPMD modules name fewer native integers; MCJIT wants the host's
        engine = llvm.create_mcjit_compiler(mod, tm)
        engine.finalize_object()
        _keep.append(engine)
        k = cm.kernels[name]
        fn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)(
            engine.get_function_address(k.wg_function))
    vals = [a if isinstance(a, (np.ndarray, Local)) else np.array(a) for a in args]
    ptrs = (ctypes.c_void_p * max(len(vals), 1))()
    ngroups = gsize // lsize
    for grp in range(ngroups):
        wg = (ctypes.c_int64 * 16)(1, gsize, 1, 1, lsize, 1, 1, grp, 0, 0, 0, 0, 0, ngroups, 1, 1)
        _group["local"] = ctypes.create_string_buffer(max(k.local_mem_bytes, 1))
        _group["args"] = [ctypes.create_string_buffer(max(v.nbytes, 1)) if isinstance(v, Local) else v for v in vals]
        for i, v in enumerate(_group["args"]):      # a __local pointer argument: fresh for each group
            ptrs[i] = ctypes.addressof(v) if isinstance(v, ctypes.Array) else v.ctypes.data
        _group["barrier"] = threading.Barrier(lsize, timeout=30)
        errors = []

        def item(lid):
            ids = (ctypes.c_int64 * 6)(lid, 0, 0, grp * lsize + lid, 0, 0)
            try:
                fn(ptrs, wg, ids)
            except Exception as e:  # noqa: BLE001 - a broken barrier
                errors.append(e)
        threads = [threading.Thread(target=item, args=(lid,)) for lid in range(lsize)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors


@pytest.mark.parametrize("opts", OPTS, ids=OPT_IDS)
def test_barrier_in_helper_runs(opts):
    cm = compile_opencl(BARRIER_HELPER, spmd=True, options=opts)
    n, ls = 256, 64
    rng = np.random.default_rng(7)
    a = rng.integers(-1000, 1000, n).astype(np.int32)
    f = rng.standard_normal(n).astype(np.float32)
    a0, f0 = a.copy(), f.copy()
    run_wi(cm, "k", n, ls, a, f)
    sums = a0.reshape(-1, ls).sum(axis=1)
    assert np.array_equal(a[:n // ls], sums)
    assert np.array_equal(a[n // ls:], a0[n // ls:])
    np.testing.assert_array_equal(f, f0 * np.float32(2) + np.arange(n, dtype=np.float32))


@pytest.mark.parametrize("opts", OPTS, ids=OPT_IDS)
def test_helper_barrier_in_expression_runs(opts):
    # rotate a value through __local memory twice, the helper called inside expressions
    src = """
    int rotate(__local int *buf, int v) {
        int lid = get_local_id(0), ls = get_local_size(0);
        buf[lid] = v;
        barrier(CLK_LOCAL_MEM_FENCE);
        int r = buf[(lid + 1) % ls] + (v & 3);
        barrier(CLK_LOCAL_MEM_FENCE);
        return r;
    }
    __kernel void k(__global const int *in, __global int *out) {
        __local int buf[32];
        int v = in[get_global_id(0)];
        out[get_global_id(0)] = 1 + rotate(buf, rotate(buf, v));
    }
    """
    cm = compile_opencl(src, spmd=True, options=opts)
    only_intrinsic_calls(cm.llvm_ir, "k")
    n, ls = 96, 32
    a = np.random.default_rng(3).integers(0, 1000, n).astype(np.int32)
    out = np.zeros(n, np.int32)
    run_wi(cm, "k", n, ls, a, out)
    ref = a.reshape(-1, ls)
    for _ in range(2):
        ref = np.roll(ref, -1, axis=1) + (ref & 3)
    np.testing.assert_array_equal(out, ref.reshape(-1) + 1)


@pytest.mark.parametrize("seed", range(12))
def test_random_barrier_kernels_in_a_helper(seed):
    """Random barrier kernels (tests/kernels/randbarrier.py) with the body moved into a helper:
    K__wi under the threaded model gives what the CPU device's work-group function gives."""
    source, ls = random_barrier_kernel(seed)
    head, body = source.split("{", 1)
    head = head[head.index("__kernel"):]
    params = head[head.index("(") + 1:head.rindex(")")]
    src = (f"static void body({params}) {{{body}\n"
           "__kernel void rndb(__global const uint *in, __global const uint *uni, __global uint *out,\n"
           "                   __local uint *buf) { body(in, uni, out, buf); }\n")
    groups = 2
    rng = np.random.default_rng(seed)
    inp = rng.integers(0, 2**32, ls * groups, dtype=np.uint64).astype(np.uint32)
    uni = rng.integers(0, 2**32, groups, dtype=np.uint64).astype(np.uint32)
    ref = np.zeros(ls * groups * (N_VARS + 1), np.uint32)
    build(src).run("rndb", ls * groups, ls, inp, uni, ref, Local(4 * ls))
    for opts in (("-cl-opt-disable",), ()):
        cm = compile_opencl(src, spmd=True, options=opts)
        only_intrinsic_calls(cm.llvm_ir, "rndb")
        out = np.zeros_like(ref)
        run_wi(cm, "rndb", ls * groups, ls, inp, uni, out, Local(4 * ls))
        np.testing.assert_array_equal(out, ref)
