"""The profile of a run, and the counters that fill most of it.

``Counters`` observes the executor (observers.py) and counts steps per unit
group, bytes per link and direction, and FLOPs; the cycle model (cycles.py)
adds cycles, stalls, cycles per source line and the trace.  ``Profile`` is
what ``Emulator.run`` returns: the summary, the roofline and a Chrome trace.
"""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field

from . import isa
from .machine import Machine
from .numbers import WIDTH
from .observers import Observer


class Counters(Observer):
    """Steps per unit group, bytes per (link, direction), FLOPs.

    FLOPs of a MAU step: a matrix product does the machine's matrix FMA rate (2 FLOPs each) per MAB
    per cycle; a vector product (a row with ``mau_rate``) the vector FMA rate; other vector
    operations flops_per_lane on every lane of every PE."""

    def __init__(self, machine: Machine):
        self.m = machine

    def run_started(self, emu, program):
        self.steps_by_group: Counter = Counter()
        self.bytes: Counter = Counter()
        self.flops = 0.0
        self._runs: dict = {}            # id(step) -> [the step, times run] (the per-step work: one count)

    def step_executed(self, emu, step):
        seen = self._runs.get(id(step))
        if seen is None:
            self._runs[id(step)] = [step, 1]
        else:
            seen[1] += 1

    def _tally(self) -> None:
        """The steps counted so far into steps per group and FLOPs (in the order the steps first
        ran, so the groups come in the order they first did)."""
        by_group = self.steps_by_group
        for step, n in self._runs.values():
            for g in step.groups:
                by_group[g] += n
            flops = sum(self.flops_of(e) for e in step.exprs if e.defn.group == isa.MAU_CALC)
            if flops:
                self.flops += n * flops
        self._runs.clear()

    def flops_of(self, e) -> float:
        m, defn, prec = self.m, e.defn, e.prec
        cycles = m.cycles_per_step
        if defn.srcs[:1] == (isa.MAT,):       # a matrix product
            return 2.0 * m.mau_matrix[prec] * cycles * m.n_mab
        if defn.mau_rate:
            return defn.flops_per_lane * m.mau_vector[prec] * cycles * m.n_mab
        return defn.flops_per_lane * (64 // WIDTH[prec]) * cycles * m.n_pe

    def bytes_moved(self, emu, link, direction, nbytes):
        self.bytes[(link, direction)] += nbytes

    def transfers_issued(self, emu, stmt, transfers):
        b = self.bytes
        for t in transfers:
            for name, _ in t.links:
                b[(name, t.kind)] += t.nbytes

    def any_reduction(self, emu, entry):
        self.bytes[("tree_reduce", "up")] += self.m.n_l1b * 8

    def run_finished(self, emu, profile):
        self._tally()
        profile.steps_by_group = dict(self.steps_by_group)
        profile.bytes_by_link = {f"{k[0]}.{k[1]}": v for k, v in sorted(self.bytes.items())}
        profile.flops = self.flops


@dataclass
class Profile:
    """Where a run's cycles went; each analysis fills in its fields when the run ends (a field
    whose analysis was not subscribed keeps its zero)."""

    machine: Machine
    cycles: float = 0.0                                   # the cycle model
    steps: int = 0                                        # the executor
    steps_by_group: dict = field(default_factory=dict)    # the counters
    stalls: dict = field(default_factory=dict)            # the cycle model: cause -> cycles
    bytes_by_link: dict = field(default_factory=dict)     # the counters: "<link>.<direction>" -> bytes
    flops: float = 0.0                                    # the counters
    events: list = field(default_factory=list, repr=False)   # the cycle model's trace
    dropped_events: int = 0
    cycles_by_line: dict = field(default_factory=dict)   # C source line -> cycles ('# line N' steps)

    @property
    def time_s(self) -> float:
        return self.cycles / self.machine.clock_hz

    @property
    def dram_bytes(self) -> int:
        return sum(v for k, v in self.bytes_by_link.items() if k.startswith("dram_l2bm."))

    def summary(self) -> dict:
        m, t = self.machine, self.time_s
        bw = self.dram_bytes / t if t else 0.0
        peak_bw = m.peak_dram_bytes_per_s()
        fl = self.flops / t if t else 0.0
        peak_fl = m.peak_flops("h", "matrix")
        return {
            "machine": m.name,
            "cycles": self.cycles,
            "time_s": t,
            "steps": self.steps,
            "steps_by_group": dict(sorted(self.steps_by_group.items())),
            "stall_cycles": dict(sorted(self.stalls.items())),
            "bytes_by_link": dict(self.bytes_by_link),
            "dram_bytes": self.dram_bytes,
            "dram_bandwidth_bytes_per_s": bw,
            "dram_bandwidth_fraction_of_peak": bw / peak_bw if peak_bw else 0.0,
            "flops": self.flops,
            "flop_rate": fl,
            "flop_rate_fraction_of_peak_half_matrix": fl / peak_fl if peak_fl else 0.0,
            "arithmetic_intensity_flop_per_dram_byte": self.flops / self.dram_bytes if self.dram_bytes else None,
            "roofline": self.roofline(),
            "cycles_by_source_line": {str(k): v for k, v in self.cycles_by_line.items()},
            "trace_events_dropped": self.dropped_events,
        }

    def roofline(self) -> dict:
        """Where the run sits under the fp32 vector roof: the rate its arithmetic intensity allows
        (min of the compute peak and intensity x DRAM bandwidth) and the fraction of it achieved."""
        m, t = self.machine, self.time_s
        peak = m.peak_flops("f", "vector")
        bw = m.peak_dram_bytes_per_s()
        ai = self.flops / self.dram_bytes if self.dram_bytes else float("inf")
        attainable = min(peak, ai * bw)
        rate = self.flops / t if t else 0.0
        return {"peak_flop_rate_f32_vector": peak, "dram_bytes_per_s": bw, "attainable_flop_rate": attainable,
                "bound": "memory" if ai * bw < peak else "compute",
                "fraction_of_attainable": rate / attainable if attainable else 0.0}

    def to_json(self) -> str:
        return json.dumps(self.summary(), indent=2)

    def chrome_trace(self) -> dict:
        """Chrome trace event format (opens in Perfetto / chrome://tracing); times in microseconds."""
        us = 1e6 / self.machine.clock_hz
        tracks: dict = {}
        out = []
        for track, name, start, end, args in self.events:
            tid = tracks.setdefault(track, len(tracks) + 1)
            ev = {"name": name, "ph": "X", "pid": 1, "tid": tid, "ts": start * us, "dur": max(end - start, 0) * us}
            if args:
                ev["args"] = args
            out.append(ev)
        meta = [{"name": "process_name", "ph": "M", "pid": 1, "args": {"name": f"{self.machine.name} emulator"}}]
        meta += [{"name": "thread_name", "ph": "M", "pid": 1, "tid": tid, "args": {"name": t}}
                 for t, tid in tracks.items()]
        return {"traceEvents": meta + out, "displayTimeUnit": "ns",
                "otherData": {"summary": self.summary()}}

    def write_json(self, path) -> None:
        with open(path, "w") as f:
            f.write(self.to_json() + "\n")

    def write_trace(self, path) -> None:
        with open(path, "w") as f:
            json.dump(self.chrome_trace(), f)
