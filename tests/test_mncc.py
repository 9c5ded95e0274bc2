"""mncl-cc and the .mnb container: outputs, diagnostics and exit statuses (0 ok, 1 compile, 2 usage)."""
import json
import os
import shutil
import subprocess

import pytest
from click.testing import CliRunner

from emulator import assemble
from translator.backend import FORMAT, KernelBinary
from translator.cli import annotate_source_lines, count_steps, main
from translator.container import MnbError, dumps_mnb, read_mnb, write_mnb

SAXPY = ("__kernel void saxpy(__global const float *x, __global float *y, float a, int n) "
         "{ int i = get_global_id(0); if (i < n) y[i] = a * x[i] + y[i]; }\n")
SCALE = ("__kernel void scale(__global const float *x, __global float *y, float a) "
         "{ size_t i = get_global_id(0); y[i] = a * x[i]; }\n")


def cc(tmp_path, *args, src=SAXPY, name="saxpy.cl", input=None):
    """Run mncl-cc in tmp_path (default outputs land there) on a file holding `src`."""
    (tmp_path / name).write_text(src)
    runner = CliRunner(mix_stderr=False) if "mix_stderr" in CliRunner.__init__.__code__.co_varnames \
        else CliRunner()
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        return runner.invoke(main, [name, *args], input=input)
    finally:
        os.chdir(cwd)


def test_default_output_is_an_mnb_next_to_the_input_name(tmp_path):
    r = cc(tmp_path)
    assert r.exit_code == 0, r.stderr
    meta, kernels = read_mnb(tmp_path / "saxpy.mnb")
    assert meta["format"] == FORMAT and meta["machine"] == "mncore2" and meta["source"] == "saxpy.cl"
    assert meta["machine_description"]["groups"] == 4 and "-O2" in meta["options"]
    kb = kernels["saxpy"]
    assert isinstance(kb, KernelBinary) and kb.args[:4] == ["argblk", "nwx", "nwy", "nwz"]
    assert [p["name"] for p in kb.params] == ["x", "y", "a", "n"]
    assemble(kb.asm, "saxpy.vsm")


def test_assembly_output_has_headers_and_assembles(tmp_path):
    r = cc(tmp_path, "-S", "-o", "-")
    assert r.exit_code == 0, r.stderr
    out = r.stdout
    assert out.startswith("# ==== kernel saxpy ====\n")
    assert "# sequencer args: %argblk %nwx %nwy %nwz" in out and "machine: mncore2" in out
    assert "registers:" in out
    assemble(out, "saxpy.vsm")                        # the header is comments
    r = cc(tmp_path, "-S")
    assert r.exit_code == 0 and (tmp_path / "saxpy.vsm").read_text() == out


def test_several_kernels_and_selection(tmp_path):
    r = cc(tmp_path, "-S", "-o", "-", src=SAXPY + SCALE)
    assert r.exit_code == 0, r.stderr
    assert "# ==== kernel saxpy ====" in r.stdout and "# ==== kernel scale ====" in r.stdout
    r = cc(tmp_path, "-k", "scale", src=SAXPY + SCALE)
    assert r.exit_code == 0, r.stderr
    assert list(read_mnb(tmp_path / "saxpy.mnb")[1]) == ["scale"]


def test_unknown_kernel_lists_the_available_ones(tmp_path):
    r = cc(tmp_path, "-k", "saxpi", src=SAXPY + SCALE)
    assert r.exit_code == 1
    assert "mncl-cc: error: no kernel named 'saxpi' in saxpy.cl (available: saxpy, scale)" in r.stderr
    assert not (tmp_path / "saxpy.mnb").exists()


def test_syntax_error_is_gcc_style_and_exits_1(tmp_path):
    r = cc(tmp_path, src="__kernel void f(__global float *x) {\n  x[0] = 1.0f\n}\n", name="bad.cl")
    assert r.exit_code == 1
    assert r.stderr.startswith("bad.cl:3:1: error: ")
    assert "^" in r.stderr and "Traceback" not in r.stderr + r.stdout
    assert not (tmp_path / "bad.mnb").exists()


def test_missing_file_and_usage_errors(tmp_path):
    r = CliRunner().invoke(main, [str(tmp_path / "nope.cl")])
    assert r.exit_code == 1
    assert f"mncl-cc: error: {tmp_path / 'nope.cl'}: No such file or directory" in r.output
    assert cc(tmp_path, "-O7").exit_code == 2
    assert cc(tmp_path, "--no-such-option").exit_code == 2
    r = cc(tmp_path, "-X", "-cl-bogus")
    assert r.exit_code == 1 and "unknown build option '-cl-bogus'" in r.stderr


def test_machine_tiny_and_a_nonexistent_machine(tmp_path):
    r = cc(tmp_path, "--machine", "tiny", "-S", "-o", "-")
    assert r.exit_code == 0 and "machine: tiny" in r.stdout
    r = cc(tmp_path, "--machine", "tiny")
    assert read_mnb(tmp_path / "saxpy.mnb")[0]["machine"] == "tiny"
    r = cc(tmp_path, "--machine", "nonesuch")
    assert r.exit_code == 2
    assert "unknown machine 'nonesuch': not a preset (mncore2, tiny, inference) nor a TOML file" in r.stderr
    assert "Traceback" not in r.stderr + r.stdout


def test_narrowed_modes_compile_for_small_launches_and_tiny_refuses_them(tmp_path):
    """--mode 1d-n8 shows what a launch of at most 4096 work-items runs on mncore2 (an eighth of the
    wave's MV); tiny's waves are too small to narrow, which is a compile error naming the mode."""
    r = cc(tmp_path, "--mode", "1d-n8", "-S", "-o", "-")
    assert r.exit_code == 0 and "mode: 1d-n8" in r.stdout and "mvd/n512" in r.stdout
    assert "mvd/n4096" in cc(tmp_path, "-S", "-o", "-").stdout
    r = cc(tmp_path, "--mode", "1d-n8", "--machine", "tiny", "-S", "-o", "-")
    assert r.exit_code == 1 and "mode '1d-n8': this machine's wave cannot be narrowed 8 times" in r.stderr
    assert "Traceback" not in r.stderr + r.stdout


def test_defines_change_the_code(tmp_path):
    src = SAXPY.replace("saxpy", "f").replace("+ y[i]", "+ y[i] * SCALE")
    r = cc(tmp_path, src=src, name="f.cl")
    assert r.exit_code == 1 and "SCALE" in r.stderr                # undefined without -D
    a = cc(tmp_path, "-D", "SCALE=2.0f", "-S", "-o", "-", src=src, name="f.cl")
    b = cc(tmp_path, "-DSCALE=3.0f", "-S", "-o", "-", src=src, name="f.cl")
    assert a.exit_code == 0 and b.exit_code == 0, a.stderr + b.stderr
    assert a.stdout != b.stdout


def test_emit_llvm(tmp_path):
    r = cc(tmp_path, "--emit-llvm")
    assert r.exit_code == 0, r.stderr
    assert "define" in (tmp_path / "saxpy.ll").read_text()
    r = cc(tmp_path, "--emit-llvm", "-o", "-")
    assert "define" in r.stdout and "saxpy__wi" in r.stdout


def test_stdin_input_and_stats(tmp_path):
    runner = CliRunner()
    r = runner.invoke(main, ["-", "-S", "-o", "-", "--stats"], input=SAXPY)
    assert r.exit_code == 0, r.output
    assert "source: <stdin>" in r.output
    assert "steps" in r.output and "registers" in r.output and "flops/item" in r.output


ROW_MAJOR = """__kernel void mv(__global const float *A, __global const float *x, __global float *y,
                 __global int *hist, int n)
{
    int i = get_global_id(0);
    float s = 0.0f;
    for (int j = 0; j < n; j++)
        s += A[i * n + j] * x[j];
    y[i] = s;
    hist[(int)s & 7] += 1;
}
"""


def test_stats_remark_where_a_whole_buffer_moves(tmp_path):
    """--stats names each gathered load and scattered store, with its line (as clang's remarks);
    contiguous, shifted, tabled and row-planned accesses (saxpy, x[j], A[i*n + j]) get none."""
    r = cc(tmp_path, "--stats", src=ROW_MAJOR, name="mv.cl")
    assert r.exit_code == 0, r.stderr
    remarks = [line for line in r.stderr.splitlines() if ": remark: " in line]
    line = next(x for x in r.stderr.splitlines() if "mv.cl:7: load A (global, 4 B): row in the loop at line 7" in x)
    assert "row plan: each pass the wave's share of a transposed copy" in line, line
    assert remarks == [
        "mv.cl:9: remark: kernel 'mv': the load from 'hist' is gathered: its index is not the global id plus "
        "a uniform offset, so all of the buffer passes through every PE (docs/architecture.md, data movement)",
        "mv.cl:9: remark: kernel 'mv': the store to 'hist' is scattered: its index is not the global id plus "
        "a uniform offset, so all of the buffer passes through every PE (docs/architecture.md, data movement)"]
    r = cc(tmp_path, "--stats")
    assert r.exit_code == 0 and ": remark: " not in r.stderr


WIDE = """#pragma OPENCL EXTENSION cl_khr_fp64 : enable
__kernel void dshift(__global double *y)
{
    int i = get_global_id(0);
    y[i] = 2.0 * y[i + 1];
}
__kernel void scale4(__global float4 *p)
{
    int i = get_global_id(0);
    p[i] = p[i + 1] * 2.0f;
}
"""


def test_stats_remark_says_why_a_unit_access_of_wide_elements_moves_its_span(tmp_path):
    """y[i] of doubles and p[i] of float4 are unit-stride in the global id: the remark named the
    wrong reason ("its index is not the global id plus a uniform offset").  Where the split copy
    cannot serve them (a buffer the kernel writes and reads one element on), it says why."""
    r = cc(tmp_path, "--stats", src=WIDE, name="wide.cl")
    assert r.exit_code == 0, r.stderr
    remarks = [line for line in r.stderr.splitlines() if ": remark: " in line]
    assert len(remarks) == 4 and not any("not the global id" in line for line in remarks), remarks
    assert ("wide.cl:5: remark: kernel 'dshift': the store to 'y' is scattered: its elements are 8 bytes, "
            "which move as wave shares only through a split copy, and this build or buffer has none, so the "
            "chunks its wave's lanes may touch pass through every PE (docs/architecture.md, data movement)") \
        in remarks
    assert ("wide.cl:10: remark: kernel 'scale4': the store to 'p' is scattered: its index moves 16 bytes a "
            "work-item (a vector's or a struct's field), which move as wave shares only through a split copy, "
            "and this build or buffer has none, so the chunks its wave's lanes may touch pass through every PE "
            "(docs/architecture.md, data movement)") in remarks


SYMM = """__kernel void symm(__global float *s, __global const float *d, int m, int n)
{
    int j1 = get_global_id(0);
    if (j1 < m) {
        for (int j2 = j1; j2 < m; j2++) {
            float t = 0.0f;
            for (int i = 0; i < n; i++)
                t += d[i * m + j1] * d[i * m + j2];
            s[j1 * m + j2] = t;
            s[j2 * m + j1] = t;
        }
    }
}
"""


def test_stats_of_a_triangular_loop_and_of_scatters(tmp_path):
    """In a loop the build runs skewed (KernelBinary.skewed) the counter is the sequencer's, so
    --stats classifies `d[i*m + j2]` as a broadcast and the two stores as a row and a column (it
    printed "irregular" for all three), which go to a row store set's copy.  Where the buffer is
    read too (`s[j2*m + j1] += t`), each scatter is labelled as a scatter, not a gather, and the
    column store's pass, which moves only the chunks its wave touches, says so, and why a store at
    the global id plus a uniform offset (the pass's row) is not a shifted store."""
    r = cc(tmp_path, "--stats", src=SYMM, name="symm.cl")
    assert r.exit_code == 0, r.stderr
    assert "irregular" not in r.stderr, r.stderr
    assert "symm.cl:8: load d (global, 4 B): broadcast in the loop at line 8" in r.stderr
    assert "symm.cl:9: store s (global, 4 B): row in the loop at line 7; row store set" in r.stderr
    assert "symm.cl:10: store s (global, 4 B): column in the loop at line 7; row store set" in r.stderr
    r = cc(tmp_path, "--stats", src=SYMM.replace("s[j2 * m + j1] = t", "s[j2 * m + j1] += t"), name="symm.cl")
    assert "symm.cl:9: store s (global, 4 B): row in the loop at line 7; whole-buffer scatter" in r.stderr
    assert "symm.cl:10: store s (global, 4 B): column in the loop at line 7; wave-span scatter" in r.stderr
    assert ("symm.cl:10: remark: kernel 'symm': the store to 's' is scattered: its index is the global id "
            "plus a uniform offset, but a shifted store needs a 1-D build, an offset the launch knows and no "
            "other store to the buffer nor a load of it after the store, so the chunks its wave's lanes may "
            "touch pass through every PE, in every pass of its loop") in r.stderr
    r = cc(tmp_path, "--stats", src=ROW_MAJOR, name="mv.cl")
    assert "mv.cl:9: load hist (global, 4 B): irregular (index computed by 'and'); whole-buffer gather" in r.stderr
    assert "mv.cl:9: store hist (global, 4 B): irregular (index computed by 'and'); whole-buffer scatter" \
        in r.stderr


def test_internal_errors_are_one_line(tmp_path, monkeypatch):
    import translator.backend

    def boom(*a, **k):
        raise RuntimeError("boom")
    monkeypatch.setattr(translator.backend, "compile_kernel", boom)
    r = cc(tmp_path)
    assert r.exit_code == 70
    assert "mncl-cc: internal error: RuntimeError: boom" in r.stderr and "Traceback" not in r.stderr


def test_annotate_source_lines():
    src = "int a;\n   y[i] = a * x[i] + y[i];   \n"
    asm = "    fvadd $lr0v $lr8v $lr16v  # @L2\n    nop # @L9\n    nop\n    nop # @L2  already"
    out = annotate_source_lines(asm, src).splitlines()
    assert out[0] == "    fvadd $lr0v $lr8v $lr16v  # @L2  y[i] = a * x[i] + y[i];"
    assert out[1:] == ["    nop # @L9", "    nop", "    nop # @L2  already"]
    assert count_steps(".block b\n    nop # c\n# only a comment\n\n    wait i1\n.endblock\n.call b\n") == 2


# -- the container ------------------------------------------------------------------------------

def _binary():
    return KernelBinary("k", "tiny", "1d", "nop\n", ["argblk"], [{"name": "x", "kind": "scalar"}], 3, 7)


def test_mnb_round_trip(tmp_path):
    p = tmp_path / "k.mnb"
    write_mnb(p, [_binary()], machine="tiny", source="k.cl", options=("-O2", "-DN=4"), note={"a": (1, 2)})
    meta, kernels = read_mnb(p)
    assert kernels == {"k": _binary()}
    assert meta["format"] == "mnb-1" and meta["machine"] == "tiny" and meta["source"] == "k.cl"
    assert meta["options"] == ["-O2", "-DN=4"] and meta["note"] == {"a": [1, 2]}
    assert meta["compiler"].startswith("mncl-cc ")
    assert p.read_bytes().endswith(b"}\n")


def test_mnb_errors_name_the_file(tmp_path):
    good = dumps_mnb([_binary()], machine="tiny")
    cases = {
        "empty.mnb": (b"", "empty file"),
        "text.mnb": (SAXPY.encode(), "not an .mnb program"),
        "other.mnb": (b'{"kernels": {}}', "not an .mnb program"),
        "trunc.mnb": (good[: len(good) // 2], "truncated"),
        "v2.mnb": (good.replace(b'"mnb-1"', b'"mnb-2"', 1), "format 'mnb-2'; this reader reads 'mnb-1'"),
        "lacks.mnb": (json.dumps({"format": "mnb-1", "kernels": {"k": {"name": "k"}}}).encode(),
                      "kernel 'k' lacks machine, mode, asm, args, params"),
    }
    for name, (data, why) in cases.items():
        (tmp_path / name).write_bytes(data)
        with pytest.raises(MnbError) as e:
            read_mnb(tmp_path / name)
        assert str(e.value).startswith(str(tmp_path / name) + ": ") and why in str(e.value), str(e.value)
    with pytest.raises(MnbError, match="No such file"):
        read_mnb(tmp_path / "missing.mnb")


def test_console_script_is_installed(tmp_path):
    exe = shutil.which("mncl-cc")
    if exe is None:
        pytest.skip("mncl-cc is not on PATH (pip install -e . registers it)")
    (tmp_path / "saxpy.cl").write_text(SAXPY)
    p = subprocess.run([exe, "saxpy.cl", "-S", "-o", "-"], cwd=tmp_path, capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("# ==== kernel saxpy ====")
    p = subprocess.run([exe, "missing.cl"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert p.returncode == 1 and p.stderr == "mncl-cc: error: missing.cl: No such file or directory\n"


def test_task_kernels_compile_to_assembly_and_mnb(tmp_path):
    """A file with a task kernel and an SPMD kernel: both are listed, and the task kernel's
    misuse is a located diagnostic with exit status 1."""
    src = SAXPY + """
__task void copy(DRAM const float *x, DRAM float *y)
{
    L2BM float a[128];
    mn_distribute(a, x, 256);
    mn_gather(y, a, 256);
}
"""
    r = cc(tmp_path, "--machine", "tiny", "-S", "-o", "-", src=src)
    assert r.exit_code == 0, r.stderr
    assert "# ==== task kernel copy ====" in r.stdout and "# copy(DRAM const float *x, DRAM float *y)" in r.stdout
    assert "mvd/n128i250 $d0 $lc0" in r.stdout and "# ==== kernel saxpy ====" in r.stdout
    assemble(r.stdout.split("# ==== task kernel copy ====")[1], "copy.vsm")
    r = cc(tmp_path, "--machine", "tiny", src=src)
    assert r.exit_code == 0 and read_mnb(tmp_path / "saxpy.mnb")[1]["copy"].mode == "task"
    r = cc(tmp_path, "--machine", "tiny", "-S", "-o", "-", src=src.replace("x, 256);", "x, 200);"))
    assert r.exit_code == 1 and ":6:5: error: task kernel 'copy': mn_distribute: 200 x float" in r.stderr, r.stderr
