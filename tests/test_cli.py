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
