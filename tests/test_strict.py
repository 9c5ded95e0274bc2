"""Strict mode: each fault names the line, the statement and the first offending PE."""
import numpy as np
import pytest

from emulator import EmuFault, Emulator, assemble


def fault_of(src, machine="tiny", **kw):
    with pytest.raises(EmuFault) as ei:
        Emulator(machine, **kw).run(assemble(src, "p.vsm"))
    return ei.value


def test_lm_read_two_steps_after_write_is_a_hazard():
    f = fault_of("linc $lr0 $lm8\nnop\nlpassa $lm8 $ln0")
    assert (f.line, f.pe) == (3, "n0c0b0m0p0")
    assert "LM0 word 8, written 2 step(s) earlier (line 1)" in str(f)
    assert str(f).startswith("p.vsm:3: fault: hazard")
    assert "lpassa $lm8 $ln0" in str(f)
    Emulator("tiny").run(assemble("linc $lr0 $lm8\nnop\nnop\nlpassa $lm8 $ln0", "p.vsm"))
    Emulator("tiny").run(assemble("linc $lr0 $lm8\nlpassa $lm16 $ln0", "p.vsm"))   # another location: fine


def test_grf_read_right_after_write_is_a_hazard_but_aluf_is_not():
    assert fault_of("linc $lr0 $lr2\nlinc $lr2 $lr4").line == 2
    Emulator("tiny").run(assemble("linc $lr0 $lr2\nlinc $aluf $lr4\nlinc $lr2 $lr6", "p.vsm"))


def test_address_beyond_memory_faults_unless_wrapping():
    f = fault_of("lpassa $lr512 $lr0")
    assert "outside GRF0 (0..511)" in str(f) and f.line == 1
    emu = Emulator("tiny", wrap=True)
    emu.write_pe("r", 0, 7)
    emu.run(assemble("lpassa $lr512 $ls0", "p.vsm"))
    assert (emu.read_pe("s", 0)[:, 0] == 7).all()


def test_t_indirect_out_of_range_names_the_first_bad_pe():
    src = "d set $ltn0c0b1m2p3 1 0000000000001000\nlpassa $lmt $ln0"
    f = fault_of(src)
    assert f.pe == "n0c0b1m2p3" and f.line == 2


def test_offsets_from_the_sequencer_are_bounds_checked():
    f = fault_of(".block b\nlpassa $lr0 $ls0\n.endblock\n.loop %i = 0, 4\n.call b r=%i*200\n.endloop")
    assert f.line == 2 and "outside GRF0" in str(f)


def test_wait_on_a_tag_never_issued():
    f = fault_of("nop; wait i3")
    assert f.line == 1 and "no transfer with tag i3" in str(f)


def test_reading_l2bm_before_waiting_for_its_transfer_is_a_race():
    f = fault_of("mvp/n64i1 $d0 $lc0@.0\nl2bmb $lc0 $lb0")
    assert f.line == 2 and "race" in str(f) and "wait i1" in str(f)
    Emulator("tiny").run(assemble("mvp/n64i1 $d0 $lc0@.0\nnop; wait i1\nl2bmb $lc0 $lb0", "p.vsm"))
    Emulator("tiny").run(assemble("mvp/n64i1 $d0 $lc0@.0\nl2bmb $lc64 $lb0", "p.vsm"))  # other addresses


def test_two_transfers_on_the_same_l2bm_range_race():
    f = fault_of("mvp/n64i1 $d0 $lc0@.0\nmvp/n64i2 $d64 $lc0@.0")
    assert f.line == 2 and "race" in str(f)


def test_l1bm_hazard_between_reduce_and_broadcast():
    f = fault_of("l1bmrliadd $lr0 $lb0\nnop\nl1bmm $lb0 $lr8v")
    assert f.line == 3 and "L1BM" in str(f)


def test_non_strict_skips_hazards():
    Emulator("tiny", strict=False).run(assemble("linc $lr0 $lm8\nlpassa $lm8 $ln0", "p.vsm"))


def test_step_limit_stops_a_runaway_loop():
    src = "lpassa $peid $omr1\n.while any $imr1\nnop\n.endwhile"
    f = fault_of(src, max_steps=50)
    assert "step limit" in str(f)


def test_flagless_instruction_cannot_write_a_mask_register():
    f = fault_of("zero $omr1")
    assert "raises no mask flags" in str(f)


def test_a_huge_call_offset_is_a_fault_not_an_overflow():
    f = fault_of(".block b\nlpassa $lr0 $ls0\n.endblock\n.call b r=999999999999999999")   # < 2^63: a register holds it
    assert f.line == 4 and "beyond any memory" in str(f)
