"""The access analysis (translator/backend/access.py): each canonical shape gets its class, and
every access of the corpus and the public kernels is classified without an exception."""
from __future__ import annotations

import glob
from pathlib import Path

import pytest

import translator
from translator.backend.access import analyse
from translator.backend.irread import read_function

SHAPES = r"""
__kernel void gemv(__global const float* W, __global const float* x, __global float* y, int K) {
    int r = get_global_id(0); float s = 0;
    for (int k = 0; k < K; k++) s += W[r*K + k] * x[k];
    y[r] = s; }
__kernel void gemvt(__global const float* A, __global const float* x, __global float* y, int n) {
    int i = get_global_id(0); float s = 0;
    for (int j = 0; j < n; j++) s += A[j*n + i] * x[j];
    y[i] = s; }
__kernel void gemm(__global const float* A, __global const float* B, __global float* C, int N, int K) {
    int i = get_global_id(1), j = get_global_id(0); float s = 0;
    for (int k = 0; k < K; k++) s += A[i*K + k] * B[k*N + j] + A[i*K + j*K + k];
    C[i*N + j] = s; }
__kernel void jacobi(__global const float* u, __global float* v, int n) {
    int i = get_global_id(1), j = get_global_id(0);
    if (i > 0 && j > 0 && i < n-1 && j < n-1)
        v[i*n + j] = 0.2f * (u[i*n+j] + u[(i-1)*n+j] + u[(i+1)*n+j] + u[i*n+j-1] + u[i*n+j+1]); }
__kernel void spmv(__global const int* rp, __global const int* col, __global const float* val,
                   __global const float* x, __global float* y) {
    int r = get_global_id(0); float s = 0;
    for (int j = rp[r]; j < rp[r+1]; j++) s += val[j] * x[col[j]];
    y[r] = s; }
__kernel void misc(__global const float* a, __global float* b, __local float* sc, int n) {
    int l = get_local_id(0);
    sc[l] = a[2 * get_global_id(0)] + a[n];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = get_local_size(0) / 2; s > 0; s >>= 1) { if (l < s) sc[l] += sc[l + s]; barrier(CLK_LOCAL_MEM_FENCE); }
    b[get_global_id(0)] = sc[0]; }
"""


def _accesses(src, options=()):
    m = translator.compile_opencl(src, spmd=True, options=options)
    return {k: analyse(read_function(m.llvm_ir, info.wg_function), info.params)
            for k, info in m.kernels.items() if not info.task}


def _classes(accs):
    return [(a.kind, a.buffer, a.cls) for a in accs]


@pytest.fixture(scope="module")
def shapes():
    return _accesses(SHAPES)


def test_row_per_work_item_and_broadcast_vector(shapes):
    assert _classes(shapes["gemv"]) == [("load", "W", "row"), ("load", "x", "broadcast"), ("store", "y", "unit")]
    w = shapes["gemv"][0]
    assert w.loop and w.loop_line == 4 and w.elem == 4


def test_column_read(shapes):
    assert _classes(shapes["gemvt"])[0] == ("load", "A", "column")


def test_matrix_product(shapes):
    assert _classes(shapes["gemm"]) == [("load", "A", "row"), ("load", "B", "column"), ("load", "A", "tile"),
                                        ("store", "C", "unit")]


def test_stencil_neighbourhood(shapes):
    got = _classes(shapes["jacobi"])
    assert got.count(("load", "u", "neighbourhood")) == 5 and got[-1] == ("store", "v", "unit")


def test_irregular_says_why(shapes):
    irregular = [a for a in shapes["spmv"] if a.cls == "irregular"]
    assert {a.buffer for a in irregular} == {"val", "col", "x"}
    assert all(a.why == "index loaded from memory" for a in irregular)


def test_local_strided_uniform_and_non_counter_loops(shapes):
    got = shapes["misc"]
    assert ("load", "a", "strided") in _classes(got) and ("load", "a", "uniform") in _classes(got)
    local = [a for a in got if a.buffer == "sc"]
    assert {a.space for a in local} == {"local"}
    # the tree's span, halved each pass, is uniform: sc[l] and sc[l + s] are neighbours
    assert {a.cls for a in local} == {"neighbourhood"} and len(local) == 4
    odd = _accesses("""__kernel void k(__global float *o, int n) {
        for (int s = n; s > 1; s = s * 3 / 4) o[get_global_id(0) + s] = 1.0f; }""")["k"]
    assert odd[0].cls == "irregular" and "not a counter" in odd[0].why


ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("path", sorted(glob.glob(str(ROOT / "tests/public/*.cl")))
                         + sorted(glob.glob(str(ROOT / "tests/kernels/*.cl"))), ids=lambda p: Path(p).name)
def test_every_corpus_access_is_classified(path):
    try:
        got = _accesses(Path(path).read_text())
    except translator.CompileError:
        pytest.skip("needs options to build")
    for accs in got.values():
        for a in accs:
            assert a.cls in {"uniform", "broadcast", "unit", "strided", "row", "column", "tile",
                             "neighbourhood", "irregular"}
            assert a.cls != "irregular" or a.why


def test_mncl_cc_stats_prints_each_access(tmp_path):
    from click.testing import CliRunner
    from translator.cli import main
    src = tmp_path / "gemv.cl"
    src.write_text(SHAPES.split("__kernel void gemvt")[0])
    r = CliRunner().invoke(main, [str(src), "--stats", "-o", str(tmp_path / "g.mnb"), "--machine", "tiny"])
    assert r.exit_code == 0, r.output
    err = r.stderr if hasattr(r, "stderr") else r.output
    assert f"{src}:4: load W (global, 4 B): row in the loop at line 4" in err
    assert f"{src}:4: load x (global, 4 B): broadcast in the loop at line 4" in err
