"""Programs beyond one straight line: blocks, loops, offsets, branches and arguments."""
import numpy as np
import pytest

from emulator import AsmError, EmuFault, Emulator, EmulatorError, assemble

SUM_LOOP = """
.arg %n
.block add_slice
ladd $lr0 $ls0 $lr0        # accumulate long word s[k] into r[0]
nop                        # GRF: a step between writing r[0] and reading it again
.endblock
.loop %k = 0, %n
.call add_slice s=%k*2
.endloop
"""


def test_loop_with_offsets_accumulates_a_slice_per_iteration():
    emu = Emulator("tiny")
    vals = np.arange(1, 9, dtype=np.uint64)
    emu.write_pe("s", 0, vals)
    prog = assemble(SUM_LOOP, "s.vsm")
    p = emu.run(prog, {"n": 8})
    assert (emu.read_pe("r", 0)[:, 0] == vals.sum()).all()
    assert p.steps == 16


def test_if_set_and_c_integer_division():
    src = """
.arg %n
.set %q = -7 / 2
.if %q == -3 && %n % 3 == 1
lpassa $subpeid $lr0
.else
lpassa $peid $lr0
.endif
"""
    emu = Emulator("tiny")
    emu.run(assemble(src, "s.vsm"), {"n": 4})
    assert emu.read_pe("r", 0)[:8, 0].tolist() == [0, 1, 2, 3, 0, 1, 2, 3]


def test_while_any_runs_until_no_flag_is_set():
    # every PE counts its subpeid down; the loop runs while any PE still has r >= 1
    src = """
lpassa $subpeid $lr0
nop
ldec $lr0 $omr1            # flag: r - 1 >= 0
.while any $imr1
nop
ldec $lr0 $lr0
nop
ldec $lr0 $omr1
.endwhile
"""
    emu = Emulator("tiny")
    p = emu.run(assemble(src, "s.vsm"))
    assert emu.read_pe("r", 0)[:4, 0].view(np.int64).tolist() == [-3, -2, -1, 0]   # 3 iterations
    assert p.stalls["sequencer any-reduction"] == 4 * emu.m.link("tree_reduce").latency


def test_arguments_are_checked():
    prog = assemble(SUM_LOOP, "s.vsm")
    with pytest.raises(EmulatorError, match="missing argument"):
        Emulator("tiny").run(prog)
    with pytest.raises(EmulatorError, match="unknown argument"):
        Emulator("tiny").run(prog, {"n": 1, "m": 2})


def test_division_by_zero_in_the_sequencer_names_the_line():
    with pytest.raises(EmuFault) as ei:
        Emulator("tiny").run(assemble(".arg %n\n.set %x = 4 / %n", "s.vsm"), {"n": 0})
    assert ei.value.line == 2


def test_an_expression_compiled_once_still_names_each_line():
    """program.compile_scalar compiles a text once per process; a fault in a later copy of the same
    expression names that copy's line, not the first one's."""
    src = ".arg %n\n.set %x = 4 / (%n - 1)\n.set %x = 4 / %n\n.set %x = 4 / (%n - 1)"
    with pytest.raises(EmuFault) as ei:
        Emulator("tiny").run(assemble(src, "s.vsm"), {"n": 1})
    assert ei.value.line == 2
    with pytest.raises(EmuFault) as ei:
        Emulator("tiny").run(assemble(src.replace("%n - 1", "%n - 2", 1), "s.vsm"), {"n": 1})
    assert ei.value.line == 4


@pytest.mark.parametrize("src,msg", [
    (".loop 3\nnop", "no matching '.endloop'"),
    (".endloop", "without '.loop'"),
    (".block a\nnop\n", "no '.endblock'"),
    (".call nowhere", "no such block"),
    (".loop 2\n.block b\n.endblock\n.endloop", "top level"),
    (".set %x = __import__('os')", "bad scalar expression"),
    (".frobnicate", "unknown directive"),
])
def test_directive_errors(src, msg):
    with pytest.raises(AsmError, match=msg):
        assemble(src, "s.vsm")


def test_a_program_built_from_python_objects():
    """The sequencer's Python form: blocks from assembly, control flow as dataclasses."""
    from emulator.program import Loop, Run, compile_scalar
    prog = assemble(".block put\nlpassa $peid $lr0\nnop\n.endblock", "py.vsm")
    prog.args = ["n"]
    prog.main = [Loop("i", compile_scalar("0"), compile_scalar("%n"), compile_scalar("1"),
                      [Run("put", {"r": compile_scalar("%i * 2")}, line=0)], line=0)]
    emu = Emulator("tiny")
    p = emu.run(prog, {"n": 3})
    assert p.steps == 6
    assert (emu.read_pe("r", 0, 3) == emu.state.ids["peid"][:, None]).all()
