"""The rules of the real machine that the emulator checks, as observers of the executor.

``TagCheck`` (always on): a ``wait`` on a tag no transfer of the run was issued with.
``StrictChecks`` (strict mode, the default) adds hazards -- a read of a location
written fewer steps ago than isa.HAZARD_STEPS allows (a GRF word: fewer than
isa.GRF_WRITE_CYCLES cycles) -- and races: a PE step or a transfer touching
memory that a transfer still in flight (not yet waited for) uses.

A broken rule is a breach: strict mode raises it as an EmuFault; PFN mode
(``pfn=True``, programs written for PFN's emulator) counts it and runs on
(``breaches``, ``first_breach``, ``pfn_report``).
"""
from __future__ import annotations

from .errors import EmuFault
from .isa import GRF_WRITE_CYCLES, HAZARD_STEPS
from .observers import Footprint, Observer
from .state import MEM_NAME

PRUNE_AT = 24            # recent writes kept per memory before the old ones are dropped
KEEP_STEPS = max(HAZARD_STEPS.values())   # how long a write can matter to a read


def pfn_report(breaches: int, first: EmuFault | None) -> str:
    """One line: what strict mode would have faulted on (PFN mode)."""
    if not breaches:
        return "pfn mode: strict mode would have run this program too"
    return f"pfn mode: strict mode would have faulted {breaches} time(s); the first: {str(first).splitlines()[0]}"


class TagCheck(Observer):
    """Faults on a wait for a tag that no transfer of this run was issued with."""

    def __init__(self, pfn: bool = False):
        self.pfn = pfn
        self.breaches = 0
        self.first_breach: EmuFault | None = None
        self.issued: set = set()

    def breach(self, fault: EmuFault) -> None:
        """A rule broken: raise it, or (PFN mode) count it and run on."""
        if not self.pfn:
            raise fault
        self.breaches += 1
        if self.first_breach is None:
            self.first_breach = fault

    def run_started(self, emu, program):
        self.breaches, self.first_breach = 0, None
        self.issued = set()

    def transfers_issued(self, emu, stmt, transfers):
        if stmt.expr.tag is not None:
            self.issued.add(stmt.expr.tag)

    def wait(self, emu, step, tag):
        if tag not in self.issued:
            self.breach(emu.fault(f"wait i{tag:x}: no transfer with tag i{tag:x} was issued", pe=None))


def _grf_overlap(rfp, wfp, cycles, age):
    """The lowest GRF word a read (rfp) takes before a write (wfp, in `cycles`, `age` steps earlier) is
    complete: read cycle cr of a word written in cycle cw needs 4 age + cr - cw >= GRF_WRITE_CYCLES.
    Only the step right after a write can fall short (the model's rule for reads later than that: legal)."""
    if age > 1:
        return None
    hits = []
    for cw in range(4):
        if cycles is not None and not cycles[cw]:
            continue
        written = wfp.cycle_words(cw)
        for cr in range(4):
            if 4 * age + cr - cw < GRF_WRITE_CYCLES:
                hits.extend(written & rfp.cycle_words(cr))
    return min(hits) if hits else None


class StrictChecks(TagCheck):
    """Hazards and races besides unknown tags.  Recent writes are kept per memory as (step, footprint,
    line, cycles), the newest last.  A write lands at its step's end, so a read in the step that
    writes (age 0) does not see it."""

    def run_started(self, emu, program):
        super().run_started(emu, program)
        self.recent = {sp: [] for sp in HAZARD_STEPS}

    # -- hazards -------------------------------------------------------------------------------
    def memory_read(self, emu, space, footprint, text):
        rec = self.recent.get(space)
        if rec and emu.steps - rec[-1][0] <= HAZARD_STEPS[space]:    # else no write is recent enough
            self._hazard(emu, space, footprint, text)
        if space == "lc" and emu.in_flight:
            self._race_pe(emu, text, footprint, "reads")

    def memory_written(self, emu, space, footprint, text, cycles):
        rec = self.recent.get(space)
        if rec is not None:
            now = emu.steps
            if len(rec) > PRUNE_AT:
                rec[:] = [r for r in rec if now - r[0] <= KEEP_STEPS]
            rec.append((now, footprint, emu.cur.line, cycles))
        if space == "lc" and emu.in_flight:
            self._race_pe(emu, text, footprint, "writes")

    def memory_set(self, emu, space, footprint):
        if space in self.recent:        # a debugger write: no pipeline, so no hazard either
            self.recent[space] = [r for r in self.recent[space] if footprint.overlap(r[1]) is None]

    def _hazard(self, emu, sp, fp, op_text):
        """A read of a location written HAZARD_STEPS[sp] or fewer steps ago."""
        gap = HAZARD_STEPS.get(sp)
        if gap is None:
            return
        now = emu.steps
        rec = self.recent[sp]
        if not rec or now - rec[-1][0] > gap:      # the usual case: no write recent enough
            return
        for step, wfp, line, cycles in reversed(rec):
            age = now - step
            if age == 0:                           # this step's own write: it lands after the reads
                continue
            if age > gap:
                break
            if fp.lo <= wfp.hi and wfp.lo <= fp.hi:
                addr = fp.overlap(wfp)
                if addr is not None and sp in ("r", "s"):       # the words overlap: do the cycles?
                    addr = _grf_overlap(fp, wfp, cycles, age)
                if addr is not None:
                    unit = "word" if sp in "mnrs" else "long word"
                    rule = (f"{MEM_NAME[sp]} needs {gap} step(s) between a write and a read of it" if sp not in "rs"
                            else f"a GRF word is readable {GRF_WRITE_CYCLES} cycles after the cycle that writes it")
                    return self.breach(emu.fault(
                        f"hazard: '{op_text}' reads {MEM_NAME[sp]} {unit} {addr}, written {age} step(s) earlier "
                        f"(line {line}); {rule}: insert nop or use a forwarding path",
                        pe=fp.first_pe(addr) if sp in "mnrs" else None))

    # -- races with transfers in flight -------------------------------------------------------
    def _race_pe(self, emu, op_text, fp, what):
        """A PE-side L2BM access (fp: long words) against the transfers in flight."""
        lo, hi = fp.lo, fp.hi + 1
        for t in emu.in_flight:
            for a, b in (t.lc_uses if what == "writes" else t.lc_writes):
                if a < hi and lo < b:
                    return self.breach(emu.fault(
                        f"race: '{op_text}' {what} L2BM long words {lo}..{hi - 1} while the transfer tagged "
                        f"i{t.tag:x} (line {t.line}) that uses them is still in flight: 'wait i{t.tag:x}' first",
                        pe=None))

    def transfers_issued(self, emu, stmt, transfers):
        src_text = stmt.expr.srcs[0].text
        for t in transfers:
            self._race_mv(emu, t)
            for lo, hi in t.lc_fresh:
                self._hazard(emu, "lc", Footprint.span(lo, hi - 1), src_text)
        super().transfers_issued(emu, stmt, transfers)

    def _race_mv(self, emu, mine):
        """Mine's reads against the writes of every transfer in flight, its writes against their reads
        and writes, in issue order (this runs for every transfer: no tuple is built per pair)."""
        reads, writes, units = mine.reads, mine.writes, mine.units
        for t in emu.in_flight:
            if units.isdisjoint(t.units):     # no memory unit in common: nothing to compare
                continue
            for sp, u, a, b in reads:
                for sp2, u2, a2, b2 in t.writes:
                    if a < b2 and a2 < b and sp == sp2 and not u.isdisjoint(u2):
                        return self._mv_breach(emu, t, "reads", sp, a, b, a2, b2)
            for sp, u, a, b in writes:
                for sp2, u2, a2, b2 in t.uses:
                    if a < b2 and a2 < b and sp == sp2 and not u.isdisjoint(u2):
                        return self._mv_breach(emu, t, "writes", sp, a, b, a2, b2)

    def _mv_breach(self, emu, t, verb, sp, a, b, a2, b2):
        return self.breach(emu.fault(
            f"race: this transfer {verb} {MEM_NAME[sp]} long words {max(a, a2)}..{min(b, b2) - 1} "
            f"that the transfer tagged i{t.tag:x} (line {t.line}) is still using: wait for it first", pe=None))
