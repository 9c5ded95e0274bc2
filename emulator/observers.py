"""The executor's events, and the analyses that subscribe to them.

The executor (executor.py) only computes: it runs the sequencer, executes
steps and moves data.  Everything it does not need for the results -- the
cycle model (cycles.py), the profile counters (profile.py), the strict
hazard, race and tag checks and PFN mode's counting of them (checks.py) --
is an ``Observer`` that overrides the hooks it wants, as Oclgrind's plugins
do (its ``Plugin.h``: instructionExecuted, memoryLoad, workGroupBarrier ...).

Every hook takes the emulator first (``emu``: its state, ``emu.cur`` the
statement being run, ``emu.steps`` the PE steps finished before the current
one, ``emu.in_flight`` the transfers issued and not yet retired by a wait,
``emu.fault(...)`` to build a fault at the current statement).  Hooks are
called per statement, per operand access or per transfer, never per PE or
per element; what they receive is whole-machine information (footprints of
numpy addresses, the statement, the transfer records).  The default of every
hook does nothing, and ``Hooks`` lists for each hook only the subscribers
that override it, so an event nobody observes costs one empty loop.

An observer may raise an EmuFault from any hook: the run stops there, as it
stops on any other fault.  For example, counting the L2BM words PE steps read:

    class L2bmReads(Observer):
        def run_started(self, emu, program):
            self.words = 0

        def memory_read(self, emu, space, footprint, text):
            if space == "lc":
                self.words += footprint.hi - footprint.lo + 1

    emu = Emulator("tiny", observers=[L2bmReads()])    # or emu.subscribe(...)
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


class Observer:
    """An analysis of a run.  Override the hooks you need; the others are never called."""

    def run_started(self, emu, program) -> None:
        """A run begins (reset per-run state here)."""

    def block_entered(self, emu, call) -> None:
        """A ``.call`` (program.Run) enters its block; emu.off holds its address offsets."""

    def block_left(self, emu, call) -> None:
        """The block of a ``.call`` has run all its statements."""

    def step_executed(self, emu, step) -> None:
        """A PE step (isa.Step, nops included) has executed and its writes have landed.
        ``emu.steps`` is still the number of steps before it (this step's index)."""

    def memory_read(self, emu, space: str, footprint: "Footprint", text: str) -> None:
        """An operand of the current step reads a memory: space 'm' 'n' 'r' 's' (PE memories, in
        words), 'lb' 'lbi' 'lc' (L1BM, its turnaround register, L2BM, in long words); the footprint
        is every PE's locations; text is the operand as written."""

    def memory_written(self, emu, space: str, footprint: "Footprint", text: str, cycles) -> None:
        """An operand of the current step writes a memory (spaces as memory_read).  The data lands
        at the step's end (step_executed follows).  cycles: the 4 cycles a fixed write mask lets
        write (a tuple of bools), or None when any cycle may write."""

    def memory_set(self, emu, space: str, footprint: "Footprint") -> None:
        """A debugger ``d set`` wrote a PE memory directly (no pipeline: nothing to wait for)."""

    def bytes_moved(self, emu, link: str, direction: str, nbytes: int) -> None:
        """A step moved nbytes on an on-chip link (l1bm_pe, l2bm_l1bm, tree_reduce), 'up' or 'down'."""

    def transfers_issued(self, emu, stmt, transfers: list) -> None:
        """An MV statement (isa.MVStmt) issues its transfers (Transfer records): called before the
        data moves and before they join ``emu.in_flight``."""

    def wait(self, emu, step, tag: int) -> None:
        """A step waits for tag, before the transfers with that tag are retired."""

    def transfers_completed(self, emu, step, transfers: list) -> None:
        """A wait (step) or the end of the run (step None) retires these in-flight transfers."""

    def any_reduction(self, emu, entry: int) -> None:
        """The sequencer reads the OR of mask entry ``entry`` over the machine (``.while any`` / ``.if any``)."""

    def run_finished(self, emu, profile) -> None:
        """The run ended without a fault: fill in this analysis's fields of the profile."""


HOOKS = tuple(name for name, v in vars(Observer).items() if callable(v) and not name.startswith("_"))


class Hooks:
    """For each hook name, the tuple of subscribers' bound methods that override it (in subscription
    order), built once when the subscribers change: the executor loops over ``hooks.<name>``."""

    def __init__(self, observers):
        for name in HOOKS:
            base = getattr(Observer, name)
            setattr(self, name, tuple(getattr(o, name) for o in observers
                                      if getattr(type(o), name, base) is not base))


@dataclass(eq=False)
class Transfer:
    """One transfer of an MV statement, as the transfer hooks see it.  Spans are (space, units, lo,
    hi): a frozenset of memory units and long words lo..hi-1 (absolute addresses).  The cycle model
    sets issue, start and end (in cycles)."""

    kind: str                 # down, up, dram-pdm, broadcast, reduce, distribute, gather
    tag: int | None
    links: tuple              # (link name, instance) pairs it crosses
    nbytes: int               # bytes over each link
    line: int
    text: str
    lanes: bool = False       # every link is an independent copy (every group's copy of one MV)
    reads: tuple = ()         # spans it reads (DRAM, PDM, L2BM)
    writes: tuple = ()        # spans it writes
    uses: tuple = ()          # writes + reads
    units: frozenset = frozenset()   # the (space, unit) pairs of reads and writes
    lc_writes: tuple = ()     # the distinct L2BM (lo, hi) spans it writes, whatever the unit
    lc_uses: tuple = ()       # ... and those it writes or reads
    lc_fresh: tuple = ()  # the L2BM (lo, hi) spans it reads that no earlier transfer of its statement reads
    issue: float = 0.0
    start: float = 0.0
    end: float = 0.0


class Footprint:
    """The locations an access touches: a range, and the exact words when they are not all of it.
    A run-time access keeps its addresses (raw: (4,) or (4, P) first words of n-word runs) and
    works the words out only when a check needs them: most accesses meet no recent write."""

    __slots__ = ("lo", "hi", "_words", "raw", "n")

    def __init__(self, lo, hi, raw=None, n=1):
        self.lo, self.hi, self.raw, self.n = lo, hi, raw, n
        self._words = None if raw is None else ...

    @classmethod
    def span(cls, lo, hi):
        return cls(int(lo), int(hi))

    @property
    def words(self):
        """The exact words, or None when they are the whole range lo..hi."""
        if self._words is ...:
            distinct = np.unique(self.raw[..., None] + np.arange(self.n))
            self._words = None if distinct.size == self.hi - self.lo + 1 else frozenset(distinct.tolist())
        return self._words

    def overlap(self, other):
        """The lowest location both touch, or None."""
        mine, theirs = self.words, other.words
        if mine is None and theirs is None:
            lo = max(self.lo, other.lo)
            return lo if lo <= min(self.hi, other.hi) else None
        if mine is None or theirs is None:
            rng, ws = (self, theirs) if mine is None else (other, mine)
            hits = [w for w in ws if rng.lo <= w <= rng.hi]
            return min(hits) if hits else None
        common = mine & theirs
        return min(common) if common else None

    def cycle_words(self, c):
        """The words touched in cycle c (every PE's, for a T-indirect access)."""
        if self.raw is None:
            return set(range(self.lo, self.hi + 1))
        return {int(a) + k for a in np.unique(self.raw[c]) for k in range(self.n)}

    def first_pe(self, addr):
        """For a T-indirect access, the first PE that touches addr (else PE 0)."""
        if self.raw is None or self.raw.ndim != 2:
            return 0
        return int(np.argmax(((self.raw <= addr) & (addr < self.raw + self.n)).any(axis=0)))
