"""The executor's analyses are observers: a custom one sees every event, and removing one leaves the
results alone (issue 21)."""
import numpy as np
import pytest

from emulator import EmuFault, Emulator, Observer, assemble
from emulator.observers import HOOKS, Hooks

PROGRAM = """\
mvp/n64i1 $d0 $lc0@.0
nop; wait i1
l2bmb $lc0 $lb0
nop
nop
l1bmp $lb0 $lr0v
nop
linc $lr0 $lm8
nop
nop
lpassa $lm8 $ln0
d get $ln0n0c0b0m0p0 1
"""


class Recorder(Observer):
    """Counts every event it is told of."""

    def __init__(self):
        self.events = []

    def run_started(self, emu, program):
        self.events.append(("run_started", program.source))

    def step_executed(self, emu, step):
        self.events.append(("step", step.line, emu.steps))

    def memory_read(self, emu, space, footprint, text):
        self.events.append(("read", space, footprint.lo, footprint.hi, emu.cur.line))

    def memory_written(self, emu, space, footprint, text, cycles):
        self.events.append(("write", space, footprint.lo, footprint.hi, emu.cur.line))

    def transfers_issued(self, emu, stmt, transfers):
        self.events.append(("issued", stmt.line, [(t.tag, t.links, t.nbytes) for t in transfers]))

    def wait(self, emu, step, tag):
        self.events.append(("wait", step.line, tag))

    def transfers_completed(self, emu, step, transfers):
        self.events.append(("completed", None if step is None else step.line, [t.tag for t in transfers]))

    def bytes_moved(self, emu, link, direction, nbytes):
        self.events.append(("bytes", link, direction, nbytes))

    def run_finished(self, emu, profile):
        self.events.append(("run_finished", profile.steps))

    def of(self, kind):
        return [e for e in self.events if e[0] == kind]


def _run(emu, src=PROGRAM):
    emu.write_dram(0, 0, np.arange(64, dtype=np.uint64))
    return emu.run(assemble(src, "obs.vsm"))


def test_a_custom_observer_sees_the_events_the_profile_counts():
    rec = Recorder()
    emu = Emulator("tiny", observers=[rec])
    prof = _run(emu)
    steps = rec.of("step")
    assert len(steps) == prof.steps == 10 and [s[2] for s in steps] == list(range(10))   # emu.steps: the index
    (issued,) = rec.of("issued")
    assert issued[1] == 1 and len(issued[2]) == 1 and issued[2][0][2] == 64 * 8     # every group's copy: lanes
    mv_bytes = sum(n * len(links) for _, links, n in issued[2])
    assert mv_bytes == prof.bytes_by_link["dram_l2bm.down"]
    assert rec.of("wait") == [("wait", 2, 1)] and rec.of("completed") == [("completed", 2, [1])]
    moved = {}
    for _, link, direction, n in rec.of("bytes"):
        moved[f"{link}.{direction}"] = moved.get(f"{link}.{direction}", 0) + n
    assert moved == {k: v for k, v in prof.bytes_by_link.items() if not k.startswith("dram_l2bm.")}
    reads = {(sp, line) for _, sp, _, _, line in rec.of("read")}
    writes = {(sp, line) for _, sp, _, _, line in rec.of("write")}
    assert reads == {("lc", 3), ("lb", 6), ("r", 8), ("m", 11)}
    assert writes == {("lb", 3), ("r", 6), ("m", 8), ("n", 11)}
    assert ("write", "r", 0, 7, 6) in rec.events         # $lr0v: the 4 cycles' long words, words 0..7
    assert rec.events[0] == ("run_started", "obs.vsm") and rec.events[-1] == ("run_finished", 10)
    assert emu.dump and int(emu.dump[0].split()[-1], 16) == 1     # the data went round: 0 + 1


def test_removing_the_cycle_model_keeps_the_results():
    with_cm, without = Emulator("tiny"), Emulator("tiny")
    without.unsubscribe(without.cycle_model)
    a, b = _run(with_cm), _run(without)
    assert a.cycles > 0 and b.cycles == 0 and b.stalls == {} and b.events == []
    assert (a.steps, a.steps_by_group, a.bytes_by_link, a.flops) == (b.steps, b.steps_by_group, b.bytes_by_link,
                                                                     b.flops)
    assert with_cm.dump == without.dump
    for sp in "mnrs":
        assert (with_cm.state.mem[sp] == without.state.mem[sp]).all()
    assert (with_cm.state.l1bm == without.state.l1bm).all() and (with_cm.state.l2bm == without.state.l2bm).all()


def test_removing_the_counters_and_checks_keeps_the_results_and_the_cycles():
    full, bare = Emulator("tiny"), Emulator("tiny")
    bare.unsubscribe(bare.counters)
    bare.unsubscribe(bare.checks)
    a, b = _run(full), _run(bare)
    assert b.cycles == a.cycles and b.cycles_by_line == a.cycles_by_line and b.steps == a.steps
    assert b.bytes_by_link == {} and b.steps_by_group == {} and full.dump == bare.dump
    hazard = "linc $lr0 $lm8\nlpassa $lm8 $ln0"             # strict mode faults on it; without checks it runs
    with pytest.raises(EmuFault, match="hazard"):
        Emulator("tiny").run(assemble(hazard, "h.vsm"))
    bare.run(assemble(hazard, "h.vsm"))


def test_hooks_list_only_the_observers_that_override_them():
    rec = Recorder()
    hooks = Hooks([Observer(), rec])
    assert set(HOOKS) >= {"step_executed", "memory_read", "memory_written", "transfers_issued",
                          "transfers_completed", "wait"}
    assert hooks.step_executed == (rec.step_executed,) and hooks.memory_set == () and hooks.any_reduction == ()
    emu = Emulator("tiny", strict=False)                 # no hazard checks: nothing observes reads
    assert emu.hooks.memory_read == () and emu.hooks.wait == (emu.checks.wait,)


def test_an_observer_can_fault_the_run_at_the_statement():
    class NoLM1(Observer):
        def memory_written(self, emu, space, footprint, text, cycles):
            if space == "n":
                raise emu.fault(f"'{text}': LM1 is read-only here", pe=0)

    with pytest.raises(EmuFault) as ei:
        _run(Emulator("tiny", observers=[NoLM1()]))
    assert ei.value.line == 11 and "LM1 is read-only here" in str(ei.value)


def test_mau_rates_come_from_the_machine_description():
    from emulator import load_machine
    tiny = load_machine("tiny")
    src = "dmmulu $lx $ls0v $nowrite\nfvfma $lm0 $ln0 $lr0 $ls0"
    base = Emulator(tiny).run(assemble(src, "f.vsm")).flops
    assert base == 2 * (tiny.mau_matrix["d"] + tiny.mau_vector["f"]) * tiny.cycles_per_step * tiny.n_mab
    fast = tiny.replace(mau_matrix={**tiny.mau_matrix, "d": 2 * tiny.mau_matrix["d"]},
                        mau_vector={**tiny.mau_vector, "f": 2 * tiny.mau_vector["f"]})
    assert Emulator(fast).run(assemble(src, "f.vsm")).flops == 2 * base


def test_hazard_distances_come_from_the_isa_table(monkeypatch):
    from emulator import isa
    src = "linc $lr0 $lm8\nnop\nnop\nlpassa $lm8 $ln0"
    Emulator("tiny").run(assemble(src, "h.vsm"))
    monkeypatch.setitem(isa.HAZARD_STEPS, "m", 3)
    with pytest.raises(EmuFault, match="LM0 needs 3 step"):
        Emulator("tiny").run(assemble(src, "h.vsm"))


def test_a_machine_without_a_mau_rate_is_refused_where_it_is_read(tmp_path):
    from importlib import resources

    from emulator import MachineError, load_machine
    text = resources.files("emulator").joinpath("presets/tiny.toml").read_text()
    path = tmp_path / "m.toml"
    path.write_text(text.replace("vector = { d = 2, f = 8, h = 16 }", "vector = { d = 2, f = 8 }"))
    with pytest.raises(MachineError, match=r"m.toml: \[mau\] vector needs a positive FMA rate for h"):
        load_machine(str(path))
