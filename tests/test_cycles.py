"""The cycle model: step costs, transfer latency and bandwidth, link sharing, waits, and the profile."""
import json

import numpy as np
import pytest

from emulator import Emulator, assemble


def prof(src, machine="tiny"):
    return Emulator(machine).run(assemble(src, "c.vsm"))


def link(m, name):
    return m.link(name)


def test_steps_cost_four_cycles():
    p = prof("nop\nlinc $lr0 $lr2\nnop/3")
    assert (p.steps, p.cycles) == (5, 20)
    assert p.steps_by_group == {"nop": 4, "alu": 1}


def test_a_transfer_costs_latency_plus_bytes_over_bandwidth_and_a_wait_stalls_for_it():
    emu = Emulator("tiny")
    dl = emu.m.link("dram_l2bm")
    p = emu.run(assemble("mvp/n64i1 $d0 $lc0@.0\nnop; wait i1", "c.vsm"))
    expect = dl.latency + 64 * 8 / dl.bytes_per_cycle
    assert p.stalls == {"wait i1 (down via dram_l2bm)": expect}
    assert p.cycles == expect + 4
    assert p.bytes_by_link == {"dram_l2bm.down": 512}


def test_transfers_run_concurrently_with_pe_steps():
    emu = Emulator("tiny")
    dl = emu.m.link("dram_l2bm")
    n = 6400
    busy = dl.latency + n * 8 / dl.bytes_per_cycle
    p = emu.run(assemble(f"mvp/n{n}i1 $d0 $lc0@.0\nnop/100\nnop; wait i1", "c.vsm"))
    assert p.cycles == busy + 4               # the 100 nops hid 400 cycles of it
    assert p.stalls["wait i1 (down via dram_l2bm)"] == busy - 400


def test_transfers_sharing_a_link_take_turns_and_mv_statements_need_their_slot():
    emu = Emulator("tiny")
    dl = emu.m.link("dram_l2bm")
    n = 6400
    occ = n * 8 / dl.bytes_per_cycle
    p = emu.run(assemble(f"mvp/n{n}i1 $d0 $lc0@.0\nmvp/n{n}i2 $d{n} $lc{n}@.1\nnop; wait i2", "c.vsm"))
    assert p.stalls["mv issue slot"] == 16                         # one MV per 4 steps
    # the second starts when the first leaves the group's DRAM link
    assert p.cycles == occ + occ + dl.latency + 4
    # on different groups' links they would overlap: mncore2 groups 0 and 1
    emu2 = Emulator("mncore2")
    p2 = emu2.run(assemble(f"mvp/n{n}i1 $d0@0 $lc0@0.0\nmvp/n{n}i2 $d0@1 $lc0@1.0\nnop; wait i2", "c.vsm"))
    assert p2.cycles == 16 + occ + dl.latency + 4


def test_any_reduction_costs_the_tree_latency():
    emu = Emulator("tiny")
    p = emu.run(assemble("lpassa $peid $omr1\n.if any $imr1\nnop\n.else\nnop/2\n.endif", "c.vsm"))
    assert p.steps == 2 and p.stalls == {"sequencer any-reduction": emu.m.link("tree_reduce").latency}


def test_profile_reports_flops_and_roofline_figures():
    emu = Emulator("tiny")
    p = emu.run(assemble("fvfma $lr0v $ls0v $lr8v $ls8v", "c.vsm"))
    assert p.flops == 2 * 2 * 4 * emu.m.n_pe            # 2 FLOP x 2 lanes x 4 cycles x PEs
    s = p.summary()
    assert s["flop_rate"] == pytest.approx(p.flops / p.time_s)
    assert 0 < s["flop_rate_fraction_of_peak_half_matrix"] < 1
    json.loads(p.to_json())


def test_chrome_trace_has_stream_stall_and_link_tracks(tmp_path):
    p = prof("mvp/n64i1 $d0 $lc0@.0\nnop; wait i1\nnop")
    path = tmp_path / "t.json"
    p.write_trace(path)
    tr = json.loads(path.read_text())
    names = {e["args"]["name"] for e in tr["traceEvents"] if e["ph"] == "M" and e["name"] == "thread_name"}
    assert {"PE stream", "stalls", "link dram_l2bm[0]"} <= names
    xs = [e for e in tr["traceEvents"] if e["ph"] == "X"]
    assert all(e["dur"] >= 0 and e["ts"] >= 0 for e in xs)
    assert tr["otherData"]["summary"]["cycles"] == p.cycles
