"""The row plan: `W[gid * P + k + s]` in a loop over k, each work-item walking its own row of a
read-only buffer (access class "row", access.py), staged panel by panel into each PE's LM0.

Without it such a load is a gather: all of W passes through every PE in every pass of the loop
(K^2 traffic).  With it, each element crosses DRAM once:

* a *panel* is T = 2 RL consecutive elements of every row of the wave (RL long words: what
  LM0 has room for, per work-item slot of a PE);
* when the loop's pass counter enters a new panel (the sequencer keeps the (wave, panel) the
  regions hold in a register), the panel moves slot by slot (cycle c, PE x of the L1B, the odd
  then the even work-item): one `mvp` per L2B and L1B brings the slot's row, for every group at
  once, from the buffer's *row copy* (the runtime writes group g's copy P x g stripes lower, so
  one address is each group's own row) to the L2BM, `l2bmb@i` hands each L1B its row, and
  `l1bmp` broadcasts it to the L1B's PEs under a write mask only PE x's entry passes
  (`ixor $peid`), into the slot's region of LM0; the next slot's MVs fly meanwhile;
* each pass then reads its element from the regions of the PE's odd- and even-item slots
  (one long word each) and joins the two halves into the lanes' value (3 ALU operations).

When the rows start at a constant granule (`W[r*P + k]`, `W[r*P + k + 8]`: stage_paired), the
row copy is *paired* instead: the rows of the two work-items of a long-word lane side by side,
element by element, so a pass reads its long word as it is (no join, no parity branch: gemv 4096
x 1024 on mncore2 9 -> 6 steps a pass, 74K -> 62K cycles), and any positive pitch stages; these
pair rows padded to whole granules and the N one slot holds in the N L1Bs of an L2B interleaved
granule by granule, so one MV per L2B brings the panel of all N and `l2bmd` hands each L1B its
own, 32 long words a step, with three slots' MVs in flight while one moves on.  Each row is
alone there, so a loop that reads on into the next row (start + trips > P) gathers instead.

Conditions, checked at run time: the pitch P is positive (and even, unpaired) and the copies fit
in DRAM (else the runtime passes -1 for the copy and the kernel gathers).  At compile time: a 1-D launch,
a 32-bit element, a read-only buffer parameter, P and s uniform (scalar arguments and constants),
k the counter of a counted loop the sequencer runs, and room in LM0 for at least 64 long words per
slot.
"""
from __future__ import annotations

import re

from .abi import ARG_LONGS, nbytes, param, reg, row_copy, row_load
from .emitter import CodegenError
from .memory import dram_clamped
from .rowstore import known_at_launch
from .ops import Call, MV, Op, SeqIf, SeqLoop, SeqSet
from .values import Val

MIN_RL = 64                 # long words per slot and panel: an MV moves at least 64
MAX_RL = 1024
DEPTH = 4                   # L2BM areas of a paired plan: slots in flight + 1
UNROLL = 4                  # transfer pieces a pass of a staging loop (RowPlan.pieces)
TABLE_RESERVE = 256         # LM0 words left for two x[k] tables (Memory.uniform_table)
LM1_SPILLS = 1024           # LM1 words left for spilled registers (regalloc.py)


class RowPlan:
    """Staged row loads (the module docstring)."""

    def __init__(self, em):
        self.em = em

    # -- which loads ---------------------------------------------------------------------------
    def match(self, k, access):
        """(pitch, start, pass counter, passes) as sequencer expressions (elements) if the access
        is a row of buffer k this plan can stage, else None."""
        m = self.row(k, access)
        return m if m is not None and self.em.memory.is_replicated(k) else None

    def row(self, k, access):
        """(pitch, start, pass counter, passes) as sequencer expressions (elements) if the access
        is a row of 32-bit elements of buffer parameter k in a loop the sequencer counts, in a 1-D
        launch, else None (rowstore.py stores such rows)."""
        em = self.em
        if access is None or access.cls != "row" or access.elem != 4 or not em.one_d or not isinstance(k, int):
            return None
        ctx = em.loop_stack[-1] if em.loop_stack else None      # k counts the innermost loop's passes
        if ctx is None or ctx["header"] != access.loop or ctx["seq_reg"] is None:
            return None
        pitch, start, step = [], [], None
        for mono, coef in access.form.items():
            names = [v for v in mono]
            if "gid0" in names:
                names.remove("gid0")
                pitch.append((names, coef))
            elif any(v.startswith("k@") for v in names):
                if names != [f"k@{access.loop}"]:
                    return None
                step = coef
            else:
                start.append((names, coef))
        if step != 4 or not pitch:
            return None
        p, s = self.uniform(pitch), self.uniform(start)
        if p is None or s is None:
            return None
        return p, s, ctx["seq_reg"], ctx["trips"]

    def uniform(self, terms):
        """Sum of coef * monomial over terms, in elements, as a sequencer expression: only scalar
        parameters (%p<k>) and constants; None otherwise or if a coefficient is not whole
        elements."""
        em = self.em
        parts = []
        for names, coef in terms:
            if coef % 4 or any(not (v.startswith("p") and v[1:].isdigit()) for v in names):
                return None
            for v in names:
                em.uses.setdefault("params", set()).add(int(v[1:]))
            parts.append("*".join([str(coef // 4)] + [reg(param(int(v[1:]))) for v in names]))
        return "(" + " + ".join(parts or ["0"]) + ")"

    def wave_in_bounds(self, k, access):
        """A sequencer condition that holds when every live work-item of the wave reads buffer k
        inside it in this pass (for Bounds.check_bounds, which versioning then hoists), or None."""
        em = self.em
        m = self.match(k, access)
        if m is None:
            return None
        pitch, start, n, _ = m
        lo, hi = em.bounds.wave_extent((1, 0, None))          # the first and last live work-item
        a, b = f"({pitch}) * ({lo})", f"({pitch}) * ({hi})"
        least, most = f"({a} if {a} < {b} else {b})", f"({a} if {a} > {b} else {b})"
        em.uses.setdefault("sizes", set()).add(k)
        return (f"4 * ({least} + {start} + {n}) >= 0 and "
                f"4 * ({most} + {start} + {n}) + 4 <= {reg(nbytes(k))}")

    # -- the plan ------------------------------------------------------------------------------
    def slots(self):
        """(cycles holding work-items, PEs per L1B holding them in each cycle)."""
        lay = self.em.lay
        P = lay.pe_l1b
        used = lay.l1bm_used
        return [(c, min(P, used - P * c)) for c in range(4) if used > P * c]

    def region(self, key, share=1):
        """(LM space 'n' or 'm' and word of the regions, long words per region RL, L2BM areas, L1BM
        area, panel register, L2BM areas in flight), allocated once per plan; None when LM has no
        room.  A paired plan (stage_paired) has a region per cycle, in LM1 where it has room (a
        pass's read then shares a block with the x[k] tables' reads, which LM0 offsets move, and
        with the reads of the loop's other paired rows, `share` in all, whose regions have the same
        size: see cleanup.merge_calls), any other one per cycle and lane, in LM0."""
        em = self.em
        if key in em.row_plans:
            return em.row_plans[key]
        paired = self.paired(key[2])
        nslots = len(self.slots()) * (1 if paired else 2)

        def size(room, most=MAX_RL):
            rl = most
            while rl > room and rl >= MIN_RL:
                rl //= 2
            return rl
        rl = 0
        if paired:          # (four L2BM areas of N RL long words each take at most a quarter of it)
            floor = 2 * ARG_LONGS + LM1_SPILLS
            free = min(em.ln_top - floor, (em.lay.lm_words - floor) // share)
            rl = size(free // (2 * nslots), min(2 * MAX_RL, em.lay.l2bm_longs // (4 * DEPTH * em.lay.l1b)))
        if rl >= MIN_RL:
            em.ln_top -= 2 * rl * nslots
            sp, at = "n", em.ln_top
        else:
            floor = 4 * em.CH + 8 * em.memory.private_layout()[2]
            rl = size((em.lm_top - floor - TABLE_RESERVE) // (2 * nslots), MAX_RL * (2 if paired else 1))
            if rl < MIN_RL:
                em.row_plans[key] = None
                return None
            em.lm_top -= 2 * rl * nslots
            sp, at = "m", em.lm_top
        lay = em.lay
        depth, lc = 2, None                       # two areas: one row's MVs fly while the other's moves on
        if paired:                                # (stage_paired: more in flight, where L2BM has room)
            try:
                lc, depth = em.alloc_lc(DEPTH * lay.l1b * rl), DEPTH
            except CodegenError:
                pass
        if lc is None:
            lc = em.alloc_lc(2 * lay.l1b * rl)
        lb = em.alloc_lb(rl)
        panel = em.seq_reg("rp")
        em.prologue.append(SeqSet(panel, "-1"))
        em.row_plans[key] = ((sp, at), rl, lc, lb, panel, depth)
        return em.row_plans[key]

    def transposed(self, k, ptr, ty, p, access) -> Val | None:
        """The row load of buffer k at this pass from a transposed copy the runtime makes for the
        launch (mncl/emulator_device.py: write_row_load; pass n of work-item w at element
        n * items + w, striped like a buffer, as a row store's copy): each pass reads the wave's
        share of its row of the copy, a column load (the column plan multi-buffers it, packing.py
        packs four passes) instead of panels handed out PE by PE.  A launch without a copy (a few
        work-items in a wide wave, whose shares would be mostly empty) stages the panels (load),
        or gathers.  None when the plan does not apply, or when another loop reads rows of the
        buffer too (SHOC scan's two passes over `in[base + k]`): the panels stay staged for it,
        where the copy would move the rows again."""
        em = self.em
        m = self.match(k, access)
        if m is None or not all(map(known_at_launch, (m[0], m[1], m[3]))) or any(
                a is not None and a.buffer == access.buffer and a.cls == "row" and a.loop != access.loop
                for a in em.accesses.values()):
            return None
        pitch, start, n, trips = m
        em.uses.setdefault("row_loads", {})[k] = (pitch, start, trips)
        out = em.unless_copy(
            f"{reg(row_load(k))} >= 0",
            lambda: em.memory.read_share(k, f"{reg(row_load(k))}+({n}*%nwx+%wx)*{em.lay.stripe}", f"cp{k}"),
            lambda out: em.copy((self.load(k, ptr, ty, p, access) or em.memory.gather(k, ptr, ty, p)).regs[0], out))
        em.plans.setdefault((em.line, em.params[k].name), set()).add(
            "row plan: each pass the wave's share of a transposed copy the runtime makes (a launch "
            "that fills less than half of its waves' shares stages panels)")
        return Val(em.values.kind_of(ty), (out,))

    def load(self, k, ptr, ty, p, access) -> Val | None:
        """The row load of buffer k at this pass, or None when the plan does not apply (the caller
        gathers)."""
        em = self.em
        m = self.match(k, access)
        if m is None:
            return None
        pitch, start, n, trips = m
        share = sum(1 for a in em.accesses.values() if a is not None and a.cls == "row" and a.loop == access.loop)
        plan = self.region((k, pitch, start), share)
        if plan is None:
            return None
        (sp, lm), rl, lc, lb, panel, depth = plan
        paired = self.paired(start)
        em.uses.setdefault("row_copies", {})[k] = (pitch, em.lay.l1b if paired else 0)
        em.uses["launch"] = True
        if paired:                                   # a long word per element of the two lanes' rows
            t, e = rl, n
            need = f"(({trips}) - (({e}) / {t}) * {t})"
        else:                                        # two elements per long word of a lane's row
            t, e = 2 * rl, f"({n} + ({start} & 1))"  # (the element index from the first even element)
            need = f"(((({trips}) + (({start}) & 1) - (({e}) / {t}) * {t}) + 1) >> 1)"
        pidx = f"(%wx * 1048576 + ({e}) / {t})"      # (wave, panel): what the regions hold
        out = em.new("row")
        outer, em.items = em.items, []
        panel_no = f"(({e}) / {t})"
        nreg = em.seq_reg("rn")                      # (sequencer registers keep the MVs' expressions short)
        stage = [SeqSet(nreg, f"{need} if {need} < {rl} else {rl}")] + \
            (self.stage_paired(k, pitch, start, panel_no, nreg, sp, lm, rl, lc, lb, depth) if paired
             else self.stage(k, pitch, start, panel_no, nreg, lm, rl, lc, lb))
        em.items.append(SeqIf(f"{pidx} != {panel}", stage + [SeqSet(panel, pidx)], staging=True))
        if paired:                                   # long word e of the panel, as it is
            fast, em.items = em.items, []
            em.op(f"lpassa {self.operand(lm, rl, sp)} {{d0}}", "alu", (out,),
                  mem=(("r", sp, lm, lm + 2 * rl * len(self.slots())),))
            read, em.items = em.items, fast
            em.items.append(Call(read, {sp: f"(({e}) % {t}) * 2"}))
        else:
            self.read(out, lm, rl, f"(({e}) % {t})")
        fast, em.items = em.items, []
        remarks = dict(em.remarks)
        g = em.memory.gather(k, ptr, ty, p)
        em.remarks = remarks                          # (only an odd pitch gathers)
        em.copy(g.regs[0], out)
        slow, em.items = em.items, outer
        # the paired copy holds each row alone: a loop reading on into the next row gathers
        holds = (f"{reg(row_copy(k))} >= 0",) + ((f"({start}) + ({trips}) <= ({pitch})",) if paired else ())
        em.items.append(SeqIf.fallback(holds, slow, fast))
        em.plans.setdefault((em.line, em.params[k].name), set()).add(
            f"row plan: staged through L2BM and L1BM into LM0 in panels of {t} elements per work-item "
            + ("(paired rows; a pitch that is not positive gathers)" if paired
               else "(a pitch that is not even and positive gathers)"))
        return Val(em.values.kind_of(ty), (out,))

    @staticmethod
    def paired(start) -> bool:
        """Whether the rows start at a constant element that begins a granule of 8 (each row's
        panels then are whole granules of the paired copy: stage_paired)."""
        m = re.fullmatch(r"\(\s*(\d+)\s*\)", start)
        return m is not None and int(m.group(1)) % 8 == 0

    def stage_paired(self, k, pitch, start, panel, need, sp, lm, rl, lc, lb, depth) -> list:
        """stage() from the paired row copy (emulator_device.write_row_copy): the rows of the two
        work-items of a long-word lane (2j, 2j + 1) side by side, element by element, so that long
        word e of a PE's region is element e of both its lanes' rows (read as it is, no join);
        these pair rows padded to whole granules of 8 long words, and each N of them 8 pairs apart
        (the pairs one slot holds in the N L1Bs of an L2B) interleaved granule by granule, so a
        panel of all N is one run: one MV per L2B brings it, and `l2bmd` hands each L1B its own,
        32 long words a step, where stage() takes an MV and `l2bmb@i` per L1B.  The MVs of
        `depth` - 1 slots are in flight while one moves on (each L2BM area and tag its own),
        which hides their latency."""
        em = self.em
        lay = em.lay
        P, N, L = lay.pe_l1b, lay.l1b, lay.l2b
        S2 = 4 * N * P // lay.narrow                 # pairs of an L2B's share of the wave
        hi = lay.dram_longs - N * rl
        sizes = [n for n in (32 << j for j in range((rl // 32).bit_length())) if n <= rl and N * n % 64 == 0]
        width = em.seq_reg("rw")                     # long words per pair row of the copy
        em.prologue.append(SeqSet(width, f"((({pitch}) + 7) >> 3) << 3"))
        tags = [em.tag() for _ in range(depth)]
        areas = [lc + a * N * rl for a in range(depth)]
        first = self.first

        def issue(r, a) -> list:
            """The MVs of slot r's pair rows into area a: per L2B (for every group at once) the
            panel of its N L1Bs' pairs."""
            item, at0 = em.seq_reg("rr"), em.seq_reg("ra")
            mvs = []
            for l in range(L):
                d = dram_clamped(f"{at0} + {l * S2} * {width}", hi)
                mvs.append(self.by_group(f"{item} + {2 * l * S2}", l, need, sizes, lambda n, dram, lc: MV(
                    f"mvp/n{N * n}i{tags[a]} {dram} $lc{areas[a]}{lc}", d, em.line)))
            pair = f"(({item}) >> 1)"
            group = f"({pair} / {8 * N} * 8 + {pair} % 8)"          # its N pairs' interleave group
            return [SeqSet(item, first(r, 1)),
                    SeqSet(at0, f"{reg(row_copy(k))} + ({group} * {width} + ({start}) + ({panel}) * {rl}) * {N}"),
                    SeqIf(f"{item} < %gx", mvs)]

        def move_on(r, c, mask, a) -> list:
            """Wait for slot r's pairs in area a, then L2BM -> the L1BMs (l2bmd) -> the owner PE's
            region of cycle c."""
            outer, em.items = em.items, []
            em.op(f"wait i{tags[a]}", "wait")
            self.pieces(f"(({need} + 31) >> 5)", {"lc": 32 * N, "lb": 32}, lambda j: em.op(
                f"l2bmd $lc{areas[a] + 32 * N * j} $lb{lb + 32 * j}", "l2bm",
                mem=(("r", "lc", areas[a], areas[a] + N * rl), ("w", "lb", lb, lb + rl))))
            self.broadcast_to(lb, (sp, lm + 2 * rl * c), rl, mask, need)
            body, em.items = em.items, outer
            return [SeqIf(f"{first(r, 1)} < %gx", body)]

        # slot q of a cycle is PE q of the L1B, in area q % depth; a loop pass takes `depth` of
        # them, issuing each one's MVs depth - 1 slots ahead
        outer, em.items = em.items, []
        for c, nx in self.slots():
            row = lambda q: f"({P * c} + ({q}))"
            for q in range(min(depth - 1, nx)):
                em.items += issue(row(q), q)
            x = em.copy(em.c32(0))
            u = em.seq_reg("ru")
            body_outer, em.items = em.items, []
            for s in range(depth):
                mask = em.flags("ixor $peid", x)       # the PE whose index in the L1B is x
                at, ahead = f"{depth} * {u} + {s}", f"{depth} * {u} + {s + depth - 1}"
                em.items.append(SeqIf(f"{ahead} < {nx}", issue(row(ahead), (s + depth - 1) % depth)))
                em.items.append(SeqIf(f"{at} < {nx}", move_on(row(at), c, mask, s)))
                em.alu("iinc", x, dst=x)
            body, em.items = em.items, body_outer
            em.items.append(SeqLoop(u, "0", str(-(-nx // depth)), body))
        staged, em.items = em.items, outer
        return staged

    def operand(self, a, stride, sp="m"):
        """The long-word operand of LM (sp) regions at word a, `stride` long words apart, one per cycle."""
        cyc = len(self.slots())
        if cyc == 4:
            return f"$l{sp}{a}v{stride}"
        if cyc == 1:
            return f"$l{sp}{a}"
        return f"$l{sp}[{a},{a + 2 * stride},{a},{a + 2 * stride}]"

    def read(self, out, lm, rl, w):
        """out = each lane's element w (of the panel) from its slot's region: the low half of long
        word w / 2 when w is even, the high half when odd."""
        em = self.em
        c32 = em.c32(32)
        nwords = 2 * rl * 2 * len(self.slots())
        mem = (("r", "m", lm, lm + nwords),)
        odd, even = [], []
        outer = em.items
        for body, (f0, k0), (f1, k1) in ((odd, ("land", em.const64(0xFFFFFFFF00000000)), ("ulsr", c32)),
                                         (even, ("llsl", c32), ("land", em.const64(0xFFFFFFFF)))):
            em.items = []
            a, b = em.new("rowhi"), em.new("rowlo")
            em.op(f"{f0} {self.operand(lm, 2 * rl)} {{s0}} {{d0}}", "alu", (a,), (k0,), mem=mem)
            em.op(f"{f1} {self.operand(lm + 2 * rl, 2 * rl)} {{s0}} {{d0}}", "alu", (b,), (k1,), mem=mem)
            em.alu("lor", a, b, dst=out)
            body.append(Call(em.items, {"m": f"(({w}) >> 1) * 2"}))
        em.items = outer
        em.items.append(SeqIf(f"({w}) & 1", odd, even))

    def stage(self, k, pitch, start, panel, need, lm, rl, lc, lb) -> list:
        """The items that bring panel `panel` (its first `need` long words) of every row of the wave
        into the slots' regions; rows of no work-item stay where they are.

        Slot by slot (cycle c, PE x, then the odd and the even work-item's row): the MVs of the
        next row are in flight (L2BM area and tag of their own, by lane) while the current row
        moves on to the L1BMs and PEs."""
        em = self.em
        lay = em.lay
        P, N, L = lay.pe_l1b, lay.l1b, lay.l2b
        S2 = 4 * N * P // lay.narrow                 # long words of an L2B's share of the wave
        hi = lay.dram_longs - rl
        sizes = [MIN_RL << j for j in range((rl // MIN_RL).bit_length())]    # MV sizes: 64 .. rl
        half = em.seq_reg("rh")                      # the pitch in long words
        em.prologue.append(SeqSet(half, f"({pitch}) >> 1"))
        tags = (em.tag(), em.tag())
        areas = (lc, lc + N * rl)

        first = self.first

        def issue(r, lane) -> list:
            """The MVs of slot row (r, lane) of every L2B, L1B and group into its lane's area."""
            ri = em.seq_reg("ri")
            row0, at0 = em.seq_reg("rr"), em.seq_reg("ra")   # the slot's row and address in L2B 0, L1B 0
            mvs = []
            for l in range(L):
                d = dram_clamped(f"{at0} + ({2 * l * S2} + 16 * {ri}) * {half}", hi)
                mvs.append(self.by_group(f"{row0} + {2 * l * S2} + 16 * {ri}", l, need, sizes, lambda n, dram, lc: MV(
                    f"mvp/n{n}i{tags[lane]} {dram} $lc{areas[lane]}{lc}", d, em.line, lc_offset=f"{ri} * {rl}")))
            return [SeqSet(row0, first(r, lane)),
                    SeqSet(at0, f"{reg(row_copy(k))} + {row0} * {half} + (({start}) >> 1) + ({panel}) * {rl}"),
                    SeqIf(f"{row0} < %gx", [SeqLoop(ri, "0", str(N), mvs)])]

        def move_on(r, lane, c, mask) -> list:
            """Wait for slot row (r, lane), then L2BM -> each L1BM (l2bmb@i) -> the owner PE's region."""
            outer, em.items = em.items, []
            pieces = f"(({need} + 63) >> 6)"
            area, dst = areas[lane], ("m", lm + 2 * rl * (2 * c + lane))
            em.op(f"wait i{tags[lane]}", "wait")
            q = em.seq_reg("rq")
            em.items.append(SeqLoop(q, "0", pieces, [Call(
                [Op(f"l2bmb@{i} $lc{area + i * rl} $lb{lb}", "l2bm", line=em.line,
                    mem=(("r", "lc", area + i * rl, area + (i + 1) * rl), ("w", "lb", lb, lb + rl)))
                 for i in range(N)], {"lc": f"{q} * 64", "lb": f"{q} * 64"})]))
            self.broadcast_to(lb, dst, rl, mask, need)
            body, em.items = em.items, outer
            return [SeqIf(f"{first(r, lane)} < %gx", body)]

        return self.slot_loop(issue, move_on)

    def first(self, r, lane) -> str:
        """The work-item whose row is the lowest of slot row (r, lane) (L2B 0, L1B 0, group 0)."""
        lay = self.em.lay
        return f"(%wx * {lay.wave} + 2 * ({8 * lay.l1b} * ({r} >> 3) + ({r} & 7)) + {1 - lane})"

    def by_group(self, item, l, need, sizes, mv) -> SeqIf:
        """The MVs of L2B l's slot row (work-item `item`'s): the smallest of `sizes` that holds the
        `need` long words, mv(size, DRAM operand, L2BM suffix); one MV for every group (their copies
        are 2 stripes of rows apart), or, in a wave that ends before the last group's work-items,
        one per group that has the row's work-item."""
        lay = self.em.lay

        def sized(dram, lc):
            chosen = [mv(sizes[-1], dram, lc)]
            for n in reversed(sizes[:-1]):
                chosen = [SeqIf(f"{need} <= {n}", [mv(n, dram, lc)], chosen)]
            return chosen
        per_group = [SeqIf(f"{item} + {2 * g * lay.stripe} < %gx", sized(f"$d0@{g}", f"@{g}.{l}"))
                     for g in range(lay.groups)]
        last = f"{item} + {2 * (lay.groups - 1) * lay.stripe} < %gx"
        return SeqIf(last, sized("$d0", f"@.{l}"), per_group if lay.groups > 1 else [])

    def broadcast_to(self, lb, dst, rl, mask, need):
        """The first `need` long words of L1BM lb into region dst (LM space, word) of the PE `mask`
        lets through (`l1bmp` to every PE of the L1B, 8 long words a step)."""
        em = self.em
        sp, at = dst

        def piece(j):
            for u in range(8):
                em.op(f"l1bmp $llb{lb + 64 * j + 8 * u} $ll{sp}{at + 128 * j + 16 * u}v/{{k0}}", "l1bm", msrc=(mask,),
                      partial=True, mem=(("r", "lb", lb, lb + rl), ("w", sp, at, at + 2 * rl)))
        self.pieces(f"(({need} + 63) >> 6)", {"lb": 64, sp: 128}, piece)

    def pieces(self, count, strides, piece, by=UNROLL):
        """`count` (a sequencer expression) pieces of a transfer, `by` of them a pass of one loop
        and the rest one a pass of another: a block ends with the steps its last writes need to
        settle, so fewer, longer blocks take fewer steps.  piece(j) makes the ops of piece j of a
        pass; strides: the address space -> long words (LM0: words) a piece moves on by."""
        em = self.em
        outer = em.items
        bodies = []
        for n in (by, 1):
            em.items = []
            for j in range(n):
                piece(j)
            bodies.append(em.items)
        em.items = outer
        q, r = em.seq_reg("rq"), em.seq_reg("rq")
        done = f"((({count}) >> {by.bit_length() - 1}) * {by})"
        em.items += [SeqLoop(q, "0", f"(({count}) >> {by.bit_length() - 1})",
                             [Call(bodies[0], {sp: f"{q} * {st * by}" for sp, st in strides.items()})]),
                     SeqLoop(r, "0", f"(({count}) & {by - 1})",
                             [Call(bodies[1], {sp: f"({done} + {r}) * {st}" for sp, st in strides.items()})])]

    def slot_loop(self, issue, move_on) -> list:
        """Slot by slot (cycle c, PE x of the L1B, the odd then the even work-item): the MVs of
        the next slot row in flight while the current one moves on (issue, move_on: stage's)."""
        em = self.em
        P = em.lay.pe_l1b
        slots = self.slots()
        outer, em.items = em.items, []
        em.items += issue(f"{P * slots[0][0]}", 0)
        for j, (c, nx) in enumerate(slots):
            x = em.copy(em.c32(0))
            rx = em.seq_reg("rx")
            body_outer, em.items = em.items, []
            r = f"({P * c} + {rx})"
            mask = em.flags("ixor $peid", x)       # the PEs whose index in the L1B is x
            em.items += issue(r, 1)
            em.items += move_on(r, 0, c, mask)
            following = issue(f"({r} + 1)", 0)
            if j + 1 < len(slots):                   # the next cycle's first row
                following = [SeqIf(f"{rx} + 1 < {nx}", following, issue(f"{P * slots[j + 1][0]}", 0))]
            else:
                following = [SeqIf(f"{rx} + 1 < {nx}", following)]
            em.items += following
            em.items += move_on(r, 1, c, mask)
            em.alu("iinc", x, dst=x)
            body, em.items = em.items, body_outer
            em.items.append(SeqLoop(rx, "0", str(nx), body))
        staged, em.items = em.items, outer
        return staged
