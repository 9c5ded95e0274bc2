"""The cycle model and the profile it produces.

Approximate, explainable, deterministic:
  * a PE step costs cycles_per_step (4) cycles; VLIW packing is what overlaps work;
  * a transfer (MV) costs latency + bytes / bandwidth on each link it crosses and
    runs concurrently with PE steps; only a ``wait`` that needs it stalls;
  * a link serves the transfers that share it one after another at full
    bandwidth, in issue order (the same total throughput as fair sharing);
  * MV statements issue at most once per mv_issue_interval_steps steps;
  * a sequencer decision on device data costs the tree_reduce link's latency.
The executor drives it (``step``, ``transfer``, ``stall_until``); the profile
reports where the cycles went.
"""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field

from .machine import Machine

TRACE_EVENT_LIMIT = 200_000


@dataclass
class Transfer:
    kind: str
    tag: int | None
    links: tuple
    nbytes: int
    issue: float
    start: float
    end: float
    line: int
    text: str
    reads: tuple = ()         # (space, unit, lo, hi): DRAM, PDM or L2BM long words it reads
    writes: tuple = ()        # the same, for what it writes
    uses: tuple = ()          # writes + reads
    units: frozenset = frozenset()   # the (space, unit) pairs of reads and writes
    lc_writes: tuple = ()     # the distinct L2BM (lo, hi) spans it writes, whatever the unit
    lc_uses: tuple = ()       # ... and those it writes or reads


class CycleModel:
    def __init__(self, machine: Machine):
        self.m = machine
        self.now = 0.0
        self.steps = 0
        self.steps_by_group: Counter = Counter()
        self.stalls: Counter = Counter()
        self.bytes: Counter = Counter()
        self.flops = 0.0
        self.link_free: dict = {}
        self.last_mv_issue = -1e18
        self.events: list = []            # (track, name, start, end, args)
        self.dropped_events = 0
        self.by_line: Counter = Counter()  # C source line -> cycles (0: steps without one)
        self.src = 0                       # the line cycles are charged to now
        self._costs: dict = {}             # (links, nbytes) -> _link_costs

    # -- PE stream ------------------------------------------------------------------
    def charge(self, src: int, since: float) -> None:
        """Cycles from `since` to now belong to C line src (a step with no line keeps the last one,
        so a wait is charged to the line whose transfer it waits for)."""
        if src:
            self.src = src
        self.by_line[self.src] += self.now - since

    def step(self, groups: tuple, flops: float = 0.0) -> None:
        self.steps += 1
        self.now += self.m.cycles_per_step
        by_group = self.steps_by_group
        for g in groups:
            by_group[g] += 1
        if flops:
            self.flops += flops

    def stall_until(self, t: float, cause: str) -> None:
        if t > self.now:
            self.stalls[cause] += t - self.now
            self._event("stalls", cause, self.now, t)
            self.now = t

    def stall(self, cycles: float, cause: str) -> None:
        self.stall_until(self.now + cycles, cause)

    # -- transfers -------------------------------------------------------------------
    def mv_slot(self) -> None:
        """Wait for the next MV issue slot, then take it."""
        gap = self.m.mv_issue_interval_steps * self.m.cycles_per_step
        self.stall_until(self.last_mv_issue + gap, "mv issue slot")
        self.last_mv_issue = self.now

    def transfer(self, kind: str, links: list, nbytes: int, tag, line: int, text: str) -> Transfer:
        """Schedule nbytes over the given (link name, instance) pairs, starting now."""
        links = tuple(links)
        busy, occupancy, latency, tracks = self._link_costs(links, nbytes)
        start = max([self.now] + [self.link_free.get(l, 0.0) for l in links])
        for l, c in zip(links, busy):
            self.link_free[l] = start + c
            self.bytes[(l[0], kind)] += nbytes
        t = Transfer(kind, tag, links, nbytes, self.now, start, start + latency + occupancy, line, text)
        for track, c in zip(tracks, busy):
            self._event(track, text, start, start + c, {"bytes": nbytes, "tag": tag})
        return t

    def transfer_lanes(self, kind: str, links: list, nbytes: int, tag, line: int, text: str) -> Transfer:
        """nbytes over each of the links independently (every group's copy of one MV), each link
        scheduled as transfer() would: one Transfer that ends when the last lane does."""
        first, last = float("inf"), 0.0
        args = {"bytes": nbytes, "tag": tag}
        for l in links:
            (busy,), occupancy, latency, (track,) = self._link_costs((l,), nbytes)
            start = max(self.now, self.link_free.get(l, 0.0))
            self.link_free[l] = start + busy
            self.bytes[(l[0], kind)] += nbytes
            self._event(track, text, start, start + busy, args)
            first, last = min(first, start), max(last, start + latency + occupancy)
        return Transfer(kind, tag, tuple(links), nbytes, self.now, first, last, line, text)

    def _link_costs(self, links: tuple, nbytes: int) -> tuple:
        """nbytes over links: the cycles each link is busy, the longest, the largest latency and the
        links' trace tracks.  The same few transfers recur, so each is worked out once."""
        key = (links, nbytes)
        costs = self._costs.get(key)
        if costs is None:
            specs = [self.m.links[name] for name, _ in links]
            busy = [nbytes / k.bytes_per_cycle for k in specs]
            costs = self._costs[key] = (busy, max(busy), max(k.latency for k in specs),
                                        [f"link {name}[{i}]" for name, i in links])
        return costs

    def count_bytes(self, link: str, direction: str, nbytes: int) -> None:
        self.bytes[(link, direction)] += nbytes

    def block(self, name: str, start: float) -> None:
        self._event("PE stream", name, start, self.now)

    def _event(self, track, name, start, end, args=None):
        if len(self.events) >= TRACE_EVENT_LIMIT:
            self.dropped_events += 1
            return
        self.events.append((track, name, start, end, args))

    def profile(self) -> "Profile":
        return Profile(self.m, self.now, self.steps, dict(self.steps_by_group), dict(self.stalls),
                       {f"{k[0]}.{k[1]}": v for k, v in sorted(self.bytes.items())}, self.flops,
                       list(self.events), self.dropped_events, dict(sorted(self.by_line.items())))


@dataclass
class Profile:
    machine: Machine
    cycles: float
    steps: int
    steps_by_group: dict
    stalls: dict
    bytes_by_link: dict          # "<link>.<direction>" -> bytes
    flops: float
    events: list = field(default_factory=list, repr=False)
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
