"""The cycle model: an observer of the executor that says when things happen.

Approximate, explainable, deterministic:
  * a PE step costs cycles_per_step (4) cycles; VLIW packing is what overlaps work;
  * a transfer (MV) costs latency + bytes / bandwidth on each link it crosses and
    runs concurrently with PE steps; only a ``wait`` that needs it stalls;
  * a link serves the transfers that share it one after another at full
    bandwidth, in issue order (the same total throughput as fair sharing);
  * MV statements issue at most once per mv_issue_interval_steps steps;
  * a sequencer decision on device data costs the tree_reduce link's latency.
It subscribes to the executor's hooks (observers.py) and fills the profile's
cycles, stalls, cycles per C source line and trace events.  Results do not
depend on it: a run without it computes the same values.
"""
from __future__ import annotations

from collections import Counter

from .machine import Machine
from .observers import Observer

TRACE_EVENT_LIMIT = 200_000


class CycleModel(Observer):
    def __init__(self, machine: Machine):
        self.m = machine
        self._costs: dict = {}             # (links, nbytes) -> _link_costs
        self.run_started(None, None)

    def run_started(self, emu, program):
        self.now = 0.0
        self.stalls: Counter = Counter()
        self.link_free: dict = {}
        self.last_mv_issue = -1e18
        self.events: list = []            # (track, name, start, end, args)
        self.dropped_events = 0
        self.by_line: Counter = Counter()  # C source line -> cycles (0: steps without one)
        self.src = 0                       # the line cycles are charged to now
        self.charged = 0.0                 # cycles up to here are charged to a line
        self.block_start = 0.0

    # -- hooks --------------------------------------------------------------------------
    def block_entered(self, emu, call):
        self.block_start = self.now

    def block_left(self, emu, call):
        self._event("PE stream", call.block, self.block_start, self.now)

    def step_executed(self, emu, step):
        self.now = now = self.now + self.m.cycles_per_step
        if step.src:                      # as charge(step.src), inline: this runs every step
            self.src = step.src
        self.by_line[self.src] += now - self.charged
        self.charged = now

    def transfers_completed(self, emu, step, transfers):
        end = max(t.end for t in transfers)
        if end > self.now:        # the cause is only named for a stall
            if step is None:
                cause = "drain (transfers still in flight at the end)"
            else:
                cause = (f"wait i{step.wait:x} ({transfers[0].kind} via "
                         f"{'+'.join(sorted({l[0] for t in transfers for l in t.links}))})")
            self.stall_until(end, cause)

    def transfers_issued(self, emu, stmt, transfers):
        self.mv_slot()
        for t in transfers:
            (self.schedule_lanes if t.lanes else self.schedule)(t)
        self.charge(0)

    def any_reduction(self, emu, entry):
        self.stall(self.m.link("tree_reduce").latency, "sequencer any-reduction")
        self.charged = self.now          # the sequencer's time belongs to no line

    def run_finished(self, emu, profile):
        profile.cycles = self.now
        profile.stalls = dict(self.stalls)
        profile.events = list(self.events)
        profile.dropped_events = self.dropped_events
        profile.cycles_by_line = dict(sorted(self.by_line.items()))

    # -- PE stream ------------------------------------------------------------------
    def charge(self, src: int) -> None:
        """The cycles since the last charge belong to C line src (a statement with no line keeps the
        last one, so a wait is charged to the line whose transfer it waits for)."""
        if src:
            self.src = src
        self.by_line[self.src] += self.now - self.charged
        self.charged = self.now

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

    def schedule(self, t) -> None:
        """t.nbytes over each of t.links, starting now: the links are crossed together."""
        links, nbytes, text = t.links, t.nbytes, t.text
        busy, occupancy, latency, tracks = self._link_costs(links, nbytes)
        start = max([self.now] + [self.link_free.get(l, 0.0) for l in links])
        for l, c in zip(links, busy):
            self.link_free[l] = start + c
        t.issue, t.start, t.end = self.now, start, start + latency + occupancy
        for track, c in zip(tracks, busy):
            self._event(track, text, start, start + c, {"bytes": nbytes, "tag": t.tag})

    def schedule_lanes(self, t) -> None:
        """t.nbytes over each of t.links independently (every group's copy of one MV), each link
        scheduled as schedule() would: the transfer ends when the last lane does."""
        first, last = float("inf"), 0.0
        nbytes, text, now, free = t.nbytes, t.text, self.now, self.link_free
        args = {"bytes": nbytes, "tag": t.tag}
        key = (t.links, nbytes, "lanes")
        costs = self._costs.get(key)
        if costs is None:        # per link: (link, busy, latency, occupancy, track)
            costs = self._costs[key] = []
            for l in t.links:
                (busy,), occupancy, latency, (track,) = self._link_costs((l,), nbytes)
                costs.append((l, busy, latency, occupancy, track))
        for l, busy, latency, occupancy, track in costs:
            start = free.get(l, 0.0)
            if start < now:
                start = now
            free[l] = start + busy
            self._event(track, text, start, start + busy, args)
            if start < first:
                first = start
            end = start + latency + occupancy
            if end > last:
                last = end
        t.issue, t.start, t.end = now, first, last

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

    def _event(self, track, name, start, end, args=None):
        if len(self.events) >= TRACE_EVENT_LIMIT:
            self.dropped_events += 1
            return
        self.events.append((track, name, start, end, args))
