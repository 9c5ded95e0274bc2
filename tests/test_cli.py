"""mncl-emu: output, files and exit statuses (0 ok, 1 program fault, 2 usage)."""
import json

from click.testing import CliRunner

from emulator.cli import main


def invoke(tmp_path, src, *args):
    prog = tmp_path / "p.vsm"
    prog.write_text(src)
    return CliRunner().invoke(main, [str(prog), "--machine", "tiny", *args])


def test_dump_to_stdout_and_summary(tmp_path):
    r = invoke(tmp_path, "lpassa $subpeid $lm0\nd get $lm0n0c0b0m0p2 1\n")
    assert r.exit_code == 0
    assert "DEBUG-LM0(n0c0b0m0p2,0):(f:0, i:{{0x0,0x0},{0x0,0x2}}, v:0x2) #d get $lm0n0c0b0m0p2 1" in r.output
    assert "tiny: 1 steps, 4 cycles" in r.output


def test_dump_profile_and_trace_files(tmp_path):
    r = invoke(tmp_path, "mvp/n64i1 $d0 $lc0@.0\nnop; wait i1\nd getd $lc0n0c0 1\n",
               "-d", str(tmp_path / "dump.txt"), "--profile", str(tmp_path / "p.json"),
               "--trace", str(tmp_path / "t.json"), "-q")
    assert r.exit_code == 0, r.output
    assert (tmp_path / "dump.txt").read_text().startswith("DEBUG-L2BM(n0c0,0):(0) (0x0000000000000000)")
    assert json.loads((tmp_path / "p.json").read_text())["dram_bytes"] == 512
    assert "traceEvents" in json.loads((tmp_path / "t.json").read_text())


def test_assembly_error_exits_1_with_the_place(tmp_path):
    r = invoke(tmp_path, "nop\nlfoo $lr0 $lr2\n")
    assert r.exit_code == 1
    assert "p.vsm:2: error: unknown instruction 'lfoo'" in r.output
    assert "Traceback" not in r.output


def test_fault_exits_1_and_keeps_the_dump_so_far(tmp_path):
    r = invoke(tmp_path, "d get $lr0n0c0b0m0p0 1\nlpassa $lr600 $lr0\n")
    assert r.exit_code == 1
    assert "DEBUG-GREG0(n0c0b0m0p0,0)" in r.output and "p.vsm:2: fault:" in r.output


def test_usage_errors_exit_2(tmp_path):
    assert CliRunner().invoke(main, [str(tmp_path / "missing.vsm")]).exit_code == 2
    assert invoke(tmp_path, "nop\n", "--machine", "nonesuch").exit_code == 2
    assert invoke(tmp_path, ".arg %n\nnop\n", "--arg", "n=x").exit_code == 2
    assert invoke(tmp_path, ".arg %n\nnop\n").exit_code == 2            # missing argument
    assert invoke(tmp_path, ".arg %n\nnop\n", "--arg", "n=3").exit_code == 0


def test_machine_from_a_toml_file(tmp_path):
    from importlib import resources
    text = resources.files("emulator").joinpath("presets/tiny.toml").read_text()
    toml = tmp_path / "small.toml"
    toml.write_text(text.replace('name = "tiny"', 'name = "small"').replace("mab_per_l1b = 4", "mab_per_l1b = 8"))
    r = invoke(tmp_path, "nop\n", "--machine", str(toml))
    assert r.exit_code == 0 and "small: 1 steps" in r.output


def test_unreadable_inputs_and_unwritable_outputs_exit_2_without_a_traceback(tmp_path):
    binary = tmp_path / "b.vsm"
    binary.write_bytes(b"\x7fELF\x02\x01\x01\x00\xff\xfe")
    r = CliRunner().invoke(main, [str(binary), "--machine", "tiny"])
    assert r.exit_code == 2 and "not UTF-8 text" in r.output
    r = invoke(tmp_path, "nop\n", "--profile", str(tmp_path / "no" / "such" / "p.json"))
    assert r.exit_code == 2 and "cannot write" in r.output
    assert r.exception is None or isinstance(r.exception, SystemExit)


# -- mncl profile ------------------------------------------------------------------------------
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import mncl  # noqa: E402
from mncl.cli import main as mncl_main  # noqa: E402

SAXPY = """__kernel void saxpy(__global const float *x, __global float *y, float a, int n)
{
    int i = get_global_id(0);
    if (i < n)
        y[i] = a * x[i] + y[i];
}
"""
KERNELS = """__kernel void gather(__global const float *a, __global const int *idx, __global float *o)
{
    int i = get_global_id(0);
    o[i] = a[idx[i]] * 2.0f;
}

__kernel void group_sum(__global const float *x, __global float *out, __local float *s)
{
    int l = get_local_id(0);
    s[l] = x[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l == 0) {
        float t = 0;
        for (int k = 0; k < get_local_size(0); k++) t += s[k];
        out[get_group_id(0)] = t;
    }
}
"""
SAXPY_ARGS = ["--global", "1000", "--arg", "x=arange:1000", "--arg", "y=ones:1000", "--arg", "a=2.5f",
              "--arg", "n=1000"]


@pytest.fixture
def kdir(tmp_path, monkeypatch):
    monkeypatch.setenv("MNCL_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "saxpy.cl").write_text(SAXPY)
    (tmp_path / "kernels.cl").write_text(KERNELS)
    return tmp_path


def profile(kdir, *args):
    return CliRunner().invoke(mncl_main, ["profile", *map(str, args), "--machine", "tiny", "-o", str(kdir / "out")])


def test_profile_writes_the_reports_and_prints_the_launch_stats(kdir):
    r = profile(kdir, kdir / "saxpy.cl", *SAXPY_ARGS)
    assert r.exit_code == 0, r.output
    out = kdir / "out"
    assert "traceEvents" in json.loads((out / "saxpy.trace.json").read_text())
    assert (out / "saxpy.html").read_text().startswith("<!doctype html>")
    s = json.loads((out / "saxpy.json").read_text())
    # the same launch through the API: the numbers printed are its ev.stats
    from mncl.context import select_device
    ctx = mncl.Context([select_device("emulator", "tiny")])
    q = mncl.CommandQueue(ctx)
    mf = mncl.mem_flags
    x = mncl.Buffer(ctx, mf.COPY_HOST_PTR, hostbuf=np.arange(1000, dtype=np.float32))
    y = mncl.Buffer(ctx, mf.COPY_HOST_PTR, hostbuf=np.ones(1000, np.float32))
    ev = mncl.Program(ctx, SAXPY).build().saxpy(q, (1000,), None, x, y, np.float32(2.5), np.int32(1000))
    ev.wait()
    ref = ev.stats.summary()
    assert s["cycles"] == ref["cycles"] and s["bytes_by_link"] == ref["bytes_by_link"]
    assert s["stall_cycles"] == ref["stall_cycles"] and s["steps_by_group"] == ref["steps_by_group"]
    lines = r.output.splitlines()
    row = {ln[:22].strip(): ln[22:] for ln in lines if ln[:22].strip()}
    assert row["kernel"].startswith("saxpy on tiny") and "global 1000" in row["kernel"]
    assert row["cycles"] == f"{ref['cycles']:,.0f}  ({ref['time_s'] * 1e6:,.3f} us emulated)"
    assert row["steps"].startswith(f"{ref['steps']:,}  (") and f"alu {ref['steps_by_group']['alu']:,}" in row["steps"]
    assert row["stall cycles"] == f"{sum(ref['stall_cycles'].values()):,.0f}"
    assert row["DRAM"].startswith(f"{ref['dram_bytes']:,} bytes")
    assert row["FLOPs"].startswith(f"{ref['flops']:,.0f},")
    assert row["roofline"].startswith(f"{ref['roofline']['bound']}-bound, "
                                      f"{100 * ref['roofline']['fraction_of_attainable']:.1f}%")
    top_line, top_cycles = max(((int(k), v) for k, v in ref["cycles_by_source_line"].items() if k != "0"),
                               key=lambda kv: kv[1])
    assert any(ln.split()[:2] == [str(top_line), f"{top_cycles:,.0f}"] and ln.endswith("y[i] = a * x[i] + y[i];")
               for ln in lines)
    assert f"wrote {out / 'saxpy.trace.json'}" in r.output


def test_profile_npy_inputs_local_memory_and_kernel_choice(kdir):
    np.save(kdir / "idx.npy", np.arange(64, dtype=np.int32)[::-1].copy())
    r = profile(kdir, kdir / "kernels.cl", "-k", "gather", "-g", "64", "-a", "a=rand:64",
                "-a", f"idx={kdir / 'idx.npy'}", "-a", "o=zeros:64", "--top", "0")
    assert r.exit_code == 0, r.output
    assert "source lines" not in r.output and (kdir / "out" / "gather.html").exists()
    r = profile(kdir, kdir / "kernels.cl", "-k", "group_sum", "--global", "64", "--local", "16",
                "--arg", "x=ones:64", "--arg", "out=zeros:4", "--arg", "s=local:16")
    assert r.exit_code == 0, r.output
    assert "global 64, local 16" in r.output and (kdir / "out" / "group_sum.trace.json").exists()


@pytest.mark.parametrize("args, message", [
    (["kernels.cl", "-g", "64"], "kernels.cl has 2 kernels (gather, group_sum); choose one with -k"),
    (["kernels.cl", "-k", "nope", "-g", "64"], "has no kernel 'nope' (it has: gather, group_sum)"),
    (["kernels.cl", "-k", "gather", "-g", "64", "-a", "a=rand:64"],
     "kernel 'gather' needs --arg for idx, o (1 of 3 parameters given)"),
    (["kernels.cl", "-k", "gather", "-g", "64", "-a", "a=rand:64", "-a", "idx=zeros:64", "-a", "o=zeros:64",
      "-a", "zz=1"], "kernel 'gather' has no parameter 'zz' (its parameters: a, idx, o)"),
    (["saxpy.cl", *SAXPY_ARGS[:2], "-a", "x=zeros", *SAXPY_ARGS[4:]],
     "--arg x (global float, parameter 0): 'zeros' is not a buffer"),
    (["saxpy.cl", *SAXPY_ARGS[:2], "-a", "x=rand:float64:1000", *SAXPY_ARGS[4:]],
     "float64 has 8-byte elements but the parameter points to float (4 bytes)"),
    (["saxpy.cl", *SAXPY_ARGS[:2], "-a", "x=rand:-5", *SAXPY_ARGS[4:]], "the element count must be positive"),
    (["saxpy.cl", *SAXPY_ARGS[:6], "-a", "a=abc", "-a", "n=1000"], "--arg a (scalar float, parameter 2): 'abc' is not a number"),
    (["saxpy.cl", *SAXPY_ARGS[:8], "-a", "n=1.5"], "argument 3 ('n', scalar int) of kernel 'saxpy' is an integer"),
    (["saxpy.cl", *SAXPY_ARGS[2:]], "kernel 'saxpy' needs --global"),
    (["saxpy.cl", "-g", "10x", *SAXPY_ARGS[2:]], "--global '10x': write 1 to 3 positive sizes"),
    (["saxpy.cl", *SAXPY_ARGS, "--local", "7"], "INVALID_WORK_GROUP_SIZE"),
    (["saxpy.cl", *SAXPY_ARGS, "--machine", "nonesuch"], "--machine nonesuch: unknown machine 'nonesuch'"),
])
def test_profile_bad_usage_is_one_line_and_exit_2(kdir, args, message):
    args = [kdir / args[0], *args[1:]]
    r = CliRunner().invoke(mncl_main, ["profile", "--machine", "tiny", "-o", str(kdir / "out"), *map(str, args)])
    assert r.exit_code == 2, r.output
    assert r.output.startswith("Error: ") and r.output.count("\n") == 1 and message in r.output
    assert not isinstance(r.exception, Exception) or isinstance(r.exception, SystemExit)


def test_profile_build_failure_and_out_of_bounds_exit_1(kdir):
    (kdir / "bad.cl").write_text("__kernel void f(__global float *x)\n{\n    x[0] = nn;\n}\n")
    r = profile(kdir, kdir / "bad.cl", "-g", "64", "-a", "x=zeros:64")
    assert r.exit_code == 1
    assert r.output.startswith(f"Error: {kdir / 'bad.cl'} did not build")
    assert f"{kdir / 'bad.cl'}:3:12: error: use of undeclared identifier 'nn'" in r.output
    assert "Traceback" not in r.output
    r = profile(kdir, kdir / "kernels.cl", "-k", "gather", "-g", "64", "-a", "a=rand:64",
                "-a", "idx=arange:64", "-a", "o=zeros:32")
    assert r.exit_code == 1 and r.output.count("\n") == 1
    assert "OUT_OF_RESOURCES: kernel 'gather' accessed out of bounds at line 4: index 32 of the buffer passed " \
           "as argument 2 ('o'" in r.output
    assert not (kdir / "out" / "gather.html").exists()


def test_profile_task_kernel_with_defines(kdir):
    """A __task kernel runs without --global; -D reaches the preprocessor."""
    from pathlib import Path
    sample = Path(__file__).resolve().parent.parent / "samples" / "llm_decode" / "matvec_task.cl"
    r = profile(kdir, sample, "-D", "ROWS=128", "-D", "COLS=256", "-D", "BATCH=1", "-D", "HALF=0",
                "-a", "w=rand:32768", "-a", "x=rand:256", "-a", "y=zeros:128")
    assert r.exit_code == 0, r.output
    assert "matvec on tiny" in r.output and ", task" in r.output
    r = profile(kdir, sample, "-g", "64", "-D", "ROWS=128", "-D", "COLS=256", "-D", "BATCH=1", "-D", "HALF=0",
                "-a", "w=rand:32768", "-a", "x=rand:256", "-a", "y=zeros:128")
    assert r.exit_code == 2 and "is a __task kernel" in r.output


def test_every_command_has_version():
    import mnacc.cli
    import mncl.cli
    import translator.cli
    for prog, cmd in (("mncl-emu", main), ("mncl", mncl.cli.main), ("mncl-cc", translator.cli.main),
                      ("mnacc", mnacc.cli.main)):
        r = CliRunner().invoke(cmd, ["--version"])
        assert r.exit_code == 0 and r.output.startswith(f"{prog}, version "), (prog, r.output)
