"""The tile plan: the two operands of a blocked matrix product in a "rows" build (rows.py), staged
once per wave into every PE's LM0 and read T-indirect (issue 22, access classes "row" and
"column" of a 2-D launch).

In a 2-D launch run flat (f = gid1 * gx + gid0), the loop over k of ``C[i][j] = sum A[i][k] B[k][j]``
reads two shapes the 1-D plans cannot move:

* ``A[gid1 * PA + k + sA]`` (kind "launch row"): one value per row of the launch, varying with k;
  the work-items of a row all read it;
* ``B[k * PB + gid0 + sB]`` (kind "launch column"): a row of B every row of the launch reads
  (unit stride in gid0, a walk down the columns in k).

Without the plan both are gathers: all of A and B pass through every PE in every pass (K^2
traffic).  With it each element crosses DRAM about once per wave:

* **A, per wave.**  Each L2B's share of the wave is a contiguous run of flat positions, so it
  spans rows iL .. iL + R - 1 of the launch (R <= (Q - 2 + gx) / gx + 1 for Q work-items per L2B).
  Those rows of A (every column: one contiguous run of DRAM) move once per wave, one `mvp` per L2B
  from its group's replicated copy, then `l2bmb` to every L1BM of the L2B.  Per *panel* of KA
  passes, one `l1bmp` per row copies the row's 8 long words holding the panel into every PE's LM0
  (16 words a row), so each PE holds its L2B's rows for the panel.
* **B, per panel.**  Rows k0 .. k0 + KB - 1 of B (and the gx - 1 elements after them) are one
  contiguous run: one `mvb` from group 0's copy to every L2BM, `l2bmb` to every L1BM, `l1bmp`
  into every PE's LM0.  KB is chosen at launch from the room and the pitch.
* **Each pass** reads a lane's element T-indirect: T holds the lane's part of the word address,
  computed once before the loop (``(gid1 - iL) * 16`` for A, ``gid0`` for B), and the pass's
  part is a `.call m=` offset the sequencer computes.  An element e of a long-word-aligned run is
  word e ^ 1 (the even element is the low half); a lane part x and a uniform part u give
  (x + u) ^ 1 = (x ^ 1) + u for even u and ((x + 1) ^ 1) + u - 1 for odd u, so B keeps two T
  values and the sequencer picks by u's parity (A's lane part is even: one value).

Conditions.  At compile time: a "rows" build, a 32-bit element of a read-only (replicated) buffer
parameter, the counter of the innermost counted loop, pitch and start made of scalar parameters
and constants, a trip count the launch fixes, room in LM0 / L1BM / L2BM.  At launch, the build's
*launch tests* (KernelBinary.launch_tests, abi.choose_variant; a launch that fails one runs the
rows build of a wave narrowed 2 or 4 times, whose L2Bs hold fewer rows, and failing those the "nd"
build, which gathers): for A, PA even and positive, the wave's rows of an L2B fit the LM0
region and the block fits L1BM; for B, PB positive and at least one row of B per panel fits.
"""
from __future__ import annotations

import re

from .abi import ROW_LENGTH, base, nbytes, reg
from .emitter import TR, TW
from .ops import Call, MV, Op, SeqIf, SeqLoop, SeqSet
from .values import Val

ROW = "launch row"           # A[gid1 * P + k + s]
COLUMN = "launch column"     # B[k * P + gid0 + s]
SEG = 16                     # LM0 words per row of A in a panel (8 long words: one ll l1bmp)
KA = 14                      # passes per panel of A: its element offset in the row's words is <= 1 + 13
KB_MAX = 32                  # passes per panel of B at most
MAX_ROWS = 64                # rows of A per L2B the LM0 region holds at most
MAX_BLOCK = 4096             # long words of A's per-wave block (L2BM and L1BM) at most
MAX_B = 2048                 # LM0 words of B's panel at most
B_SLACK = 140                # LM0 words of B's region a panel leaves: parity, rounding to 64 long words
TABLE_RESERVE = 256          # LM0 words left for two x[k] tables (as rowplan.py leaves)


class TilePlan:
    """Staged A / B operand loads of a blocked matrix product (the module docstring)."""

    def __init__(self, em):
        self.em = em
        self.regions = {}        # (kind, buffer, pitch, start) -> the plan's allocation, or None
        self.tests = []          # launch tests (KernelBinary.launch_tests): each plan's conditions

    # -- which loads ---------------------------------------------------------------------------
    def match(self, k, access):
        """(kind, pitch, start, pass counter, trips) as sequencer expressions (elements) if the
        access is one this plan stages, else None."""
        em = self.em
        if em.rows is None or access is None or access.elem != 4 or not isinstance(k, int) or k in em.resident \
                or access.cls not in ("row", "column") or access.form is None:
            return None
        ctx = em.loop_stack[-1] if em.loop_stack else None
        if ctx is None or ctx["header"] != access.loop or ctx["seq_reg"] is None:
            return None
        if not _launch_constant(str(ctx["trips"])):
            return None
        kvar = f"k@{access.loop}"
        id_terms, k_terms, rest = [], [], []
        for mono, coef in access.form.items():
            names = list(mono)
            if any(v.startswith(("gid", "lid", "grp", "wg")) and v not in ("gid0", "gid1") for v in names) \
                    or names.count("gid0") + names.count("gid1") + names.count(kvar) > 1:
                return None
            if "gid0" in names or "gid1" in names:
                id_terms.append((names, coef))
            elif kvar in names:
                k_terms.append((names, coef))
            elif any(v.startswith("k@") for v in names):
                return None
            else:
                rest.append((names, coef))
        ids = {v for names, _ in id_terms for v in names if v.startswith("gid")}
        if len(ids) != 1 or not k_terms:
            return None
        (gid,) = ids
        if gid == "gid1":               # A: gid1 * PA, unit stride in k
            if k_terms != [([kvar], 4)]:
                return None
            kind, pitch = ROW, [([v for v in names if v != "gid1"], c) for names, c in id_terms]
        else:                           # B: unit stride in gid0, k * PB
            if id_terms != [(["gid0"], 4)]:
                return None
            kind, pitch = COLUMN, [([v for v in names if v != kvar], c) for names, c in k_terms]
        p, s = em.row_plan.uniform(pitch), em.row_plan.uniform(rest)
        if p is None or s is None or not em.memory.is_replicated(k):
            return None
        return kind, p, s, ctx["seq_reg"], ctx["trips"]

    def wave_in_bounds(self, k, access):
        """A sequencer condition that holds when every live work-item of the wave reads buffer k
        inside it in this pass (for Bounds.check_bounds, which versioning hoists), or None."""
        em = self.em
        m = self.match(k, access)
        if m is None:
            return None
        kind, pitch, start, n, _ = m
        em.uses["launch"] = True
        em.uses["row_length"] = True
        em.uses.setdefault("sizes", set()).add(k)
        rl = reg(ROW_LENGTH)
        if kind == ROW:
            # the wave's first and last row, set before the outermost loop (short conditions: the
            # assembler compiles each whole, and versioning writes them twice); PA > 0 is a launch test
            outermost = em.loop_stack[0]
            if "tile rows" not in outermost:
                lo, hi = em.seq_reg("tlo"), em.seq_reg("thi")
                end = f"(%wx + 1) * {em.lay.wave}"
                outermost.setdefault("before", []).extend([
                    SeqSet(lo, f"(%wx * {em.lay.wave}) / {rl}"),
                    SeqSet(hi, f"(({reg('gx')} if {reg('gx')} < {end} else {end}) - 1) / {rl}")])
                outermost["tile rows"] = (lo, hi)
            lo, hi = outermost["tile rows"]
            least = f"({pitch}) * {lo} + {start} + {n}"
            most = f"({pitch}) * {hi} + {start} + {n}"
        else:
            a = f"({pitch}) * {n} + {start}"
            least, most = a, f"{a} + {rl} - 1"
        return f"4 * ({least}) >= 0 and 4 * ({most}) + 4 <= {reg(nbytes(k))}"

    # -- the plan ------------------------------------------------------------------------------
    def load(self, k, ptr, ty, p, access) -> Val | None:
        """The staged load of buffer k at this pass, or None when the plan does not apply (the
        caller gathers); its conditions on the launch join self.tests."""
        em = self.em
        m = self.match(k, access)
        if m is None:
            return None
        kind, pitch, start, n, trips = m
        plan = self.region(kind, k, pitch, start, trips)
        if plan is None:
            return None
        em.uses.setdefault("bases", set()).add(k)
        em.uses["launch"] = True
        em.uses["row_length"] = True
        out = em.new("tile")
        self.tests.append(plan["test"])
        em.memory.note_access(k, "gather")       # (what it replaces: a buffer that fits stays resident, "-res")
        if kind == ROW:
            self.row_pass(k, pitch, start, n, trips, plan, out)
            what = (f"tile plan: the wave's rows of each L2B staged once per wave (mvp, l2bmb), panels of "
                    f"{KA} columns into LM0 (l1bmp), read T-indirect")
        else:
            self.column_pass(k, pitch, start, n, plan, out)
            what = ("tile plan: panels of rows broadcast into LM0 (mvb, l2bmb, l1bmp), read T-indirect")
        em.plans.setdefault((em.line, em.params[k].name), set()).add(
            what + " (a launch that does not fit runs a narrower wave's or the nd build)")
        return Val(em.values.kind_of(ty), (out,))

    def region(self, kind, k, pitch, start, trips):
        """The plan's LM0 region, staging areas, sequencer registers, launch test and the lanes'
        T values (computed before the outermost loop), made once per (kind, buffer, pitch, start);
        None when the machine has no room."""
        em = self.em
        key = (kind, k, pitch, start)
        if key in self.regions:
            return self.regions[key]
        floor = 4 * em.CH + 8 * em.memory.private_layout()[2]
        room = em.lm_top - floor - TABLE_RESERVE
        lay = em.lay
        if kind == ROW:
            rows = min(MAX_ROWS, room // 2 // SEG)
            block = min(MAX_BLOCK, (lay.l1bm_longs - em.lb_next - 64) // 64 * 64,
                        (lay.l2bm_longs - em.lc_next - 64) // 64 * 64)
            if rows < 4 or block < 256:
                self.regions[key] = None
                return None
            words = rows * SEG
        else:
            words = min(MAX_B, room) // 16 * 16
            block = -(-words // 2 // 64) * 64 + 64
            if words < 64 or em.lb_next + block > lay.l1bm_longs or em.lc_next + block > lay.l2bm_longs:
                self.regions[key] = None
                return None
        em.lm_top -= words
        plan = {"lm": em.lm_top, "words": words, "lc": em.alloc_lc(block), "lb": em.alloc_lb(block),
                "block": block, "held": em.seq_reg("th"), "per": em.seq_reg("tk")}
        rl = reg(ROW_LENGTH)
        em.prologue.append(SeqSet(plan["held"], "-1"))
        if kind == ROW:
            q = lay.wave // (lay.groups * lay.l2b)          # work-items per L2B
            rmax, need = em.seq_reg("tm"), em.seq_reg("tb")     # rows per L2B at most; long words of L1BM read
            rows_at_most = f"(({q} - 2 + {rl}) / {rl} + 1)"
            reads = f"((({rows_at_most} - 1) * ({pitch}) + ({trips}) + {KA} + 2) / 2 + 8)"
            em.prologue += [SeqSet(rmax, rows_at_most), SeqSet(need, reads)]
            plan["rmax"], plan["need"] = rmax, need
            ok = f"({pitch}) > 0 and (({pitch}) & 1) == 0 and {rows_at_most} <= {rows} and ({reads} + 63) / 64 * 64 <= {block}"
            em.prologue.append(SeqSet(plan["per"], str(KA)))
        else:
            # (its long words, rounded up to 64, fit the region: B_SLACK words spare)
            per = f"(({words} - {B_SLACK} - {rl}) / ({pitch}) + 1)"
            em.prologue.append(SeqSet(plan["per"], f"({per} if ({pitch}) > 0 and {per} < {KB_MAX} else {KB_MAX})"))
            ok = f"({pitch}) > 0 and {words} - {B_SLACK} - {rl} >= 0"
        plan["test"] = ok
        plan["t"] = self.lane_parts(kind, words)
        self.regions[key] = plan
        return plan

    def lane_parts(self, kind, words: int):
        """The lanes' T values, made before the outermost loop around the load: A's (gid1 - iL) *
        SEG, iL the first row of the lane's L2B share; B's gid0 ^ 1 and (gid0 + 1) ^ 1."""
        em = self.em
        outer, em.items = em.items, []
        if kind == ROW:
            lay = em.lay
            l2b = em.new("l2bid")
            em.op("ipassa $l2bid {d0}", "alu", (l2b,), ())
            first = em.alu("iadd", em.X0, em.ints.mul32(l2b, em.c32(lay.wave // (lay.groups * lay.l2b))))
            il = em.ints.div_exact(first, em.shape["rgx"])
            t = em.alu("ilsl", em.alu("isub", em.pos[1], il), em.c32(SEG.bit_length() - 1))
            # an empty slot of a narrowed wave (layout.item_of_slot) may sit rows away from its
            # L2B's share: its read is masked, but its address must stay in LM0
            parts = (em.alu("uimin", t, em.c32(words - SEG)) if em.lay.narrow > 1 else t,)
        else:
            one = em.c32(1)
            parts = (em.alu("ixor", em.pos[0], one), em.alu("ixor", em.alu("iinc", em.pos[0]), one))
        made, em.items = em.items, outer
        em.loop_stack[0].setdefault("before", []).extend(made)
        return parts

    def read(self, t, lm, words, m, out_hi, out_w):
        """Each lane's word at LM0 lm + T + m (m a sequencer offset): the odd work-item's into the
        upper half of out_hi, the even one's into the upper half of out_w."""
        em = self.em
        mem = (("r", "m", lm, lm + words),)
        outer, em.items = em.items, []
        em.op("ulsr {s0} {s1} $t", "alu", (), (t, em.c32(32)), mem=TW)
        em.op(f"ipassa $mt{lm} {{d0}}", "alu", (out_hi,), (), mem=mem + TR)
        em.op("lpassa {s0} $t", "alu", (), (t,), mem=TW)
        em.op(f"ipassa $mt{lm} {{d0}}", "alu", (out_w,), (), mem=mem + TR)
        body, em.items = em.items, outer
        em.items.append(Call(body, {"m": m}))

    def join(self, hi, w, out):
        """out = the odd work-item's word (upper half of hi) and the even one's (upper half of w)."""
        em = self.em
        lo = em.alu("ulsr", w, em.c32(32))
        em.alu("lor", em.alu("land", hi, em.const64(0xFFFFFFFF00000000)), lo, dst=out)

    def mvs(self, text, d, lc_area, longs, hi_dram, tag):
        """MVs moving `longs` long words (a sequencer register, rounded up to 64) from DRAM offset
        d (a register, clamped here to DRAM: a launch that reads out of bounds is reported, not
        faulted) to L2BM lc_area: 1024-long-word MVs, then one of each smaller size the rest
        needs; `text` formats (size, tag, lc) into the statement."""
        em = self.em
        n64, c, at = em.seq_reg("tn"), em.seq_reg("tc"), em.seq_reg("tp")
        top = f"{hi_dram} - {n64} * 64"
        out = [SeqSet(n64, f"({longs} + 63) / 64"), SeqSet(d, f"{d} if {d} > 0 else 0"),
               SeqSet(d, f"{d} if {d} < {top} else {top}"),
               SeqLoop(c, "0", f"{n64} / 16", [MV(text.format(n=1024, t=tag, lc=lc_area), f"{d}+{c}*1024", em.line,
                                                  lc_offset=f"{c} * 1024")]),
               SeqSet(at, f"({n64} / 16) * 1024")]
        for size in (512, 256, 128, 64):      # the rest: one MV per set bit of n64 mod 16
            out.append(SeqIf(f"({n64} / {size // 64}) & 1", [
                MV(text.format(n=size, t=tag, lc=lc_area), f"{d}+{at}", em.line, lc_offset=at),
                SeqSet(at, f"{at} + {size}")]))
        return out

    def to_l1bm(self, lc, lb, longs):
        """l2bmb: `longs` long words (rounded up to 64) of every L2BM at lc to its L1BMs at lb."""
        em = self.em
        c = em.seq_reg("tq")
        op = Op(f"l2bmb $lc{lc} $lb{lb}", "l2bm", line=em.line, mem=(("r", "lc", lc, lc + 64), ("w", "lb", lb, lb + 64)))
        return SeqLoop(c, "0", f"(({longs}) + 63) / 64", [Call([op], {"lc": f"{c} * 64", "lb": f"{c} * 64"})])

    def row_pass(self, k, pitch, start, n, trips, plan, out):
        """A's element of this pass (kind ROW)."""
        em = self.em
        lay = em.lay
        G, L, S = lay.groups, lay.l2b, lay.stripe
        q = lay.wave // (G * L)
        rl = reg(ROW_LENGTH)
        lm, lc, lb = plan["lm"], plan["lc"], plan["lb"]
        panel = f"({n} / {KA})"
        key = f"(%wx * 1048576 + {panel})"
        wave_key = f"({plan['held']} / 1048576)"
        tag = em.tag()
        stage = []
        # once per wave: each L2B's rows of A, whole, from its group's copy (long word L at
        # base - g * stripe + L), then to its L1BMs
        mvs = []
        fr, lo, nl, d = (em.seq_reg(x) for x in ("tf", "tl", "tn", "td"))
        for b in range(G * L):
            g, l = divmod(b, L)
            # the L2B's rows, up to the last one's element trips - 1, from its group's copy
            mvs.append(SeqIf(f"%wx * {lay.wave} + {b * q} < {reg('gx')}", [
                SeqSet(fr, f"%wx * {lay.wave} + {b * q}"),
                SeqSet(lo, f"{fr} / {rl}"),
                SeqSet(nl, f"((({fr} + {q - 1} if {fr} + {q - 1} < {reg('gx')} else {reg('gx')} - 1) / {rl} - {lo})"
                           f" * ({pitch}) + (({start}) & 1) + ({trips}) + 1) / 2"),
                SeqSet(d, f"{reg(base(k))} - {g * S} + ({lo} * ({pitch}) + ({start})) / 2"),
                *self.mvs("mvp/n{n}i{t} $d0@" + str(g) + " $lc{lc}@" + f"{g}.{l}", d, lc, nl, lay.dram_longs, tag)]))
        stage.append(SeqIf(f"{plan['held']} < 0 or {wave_key} != %wx", mvs + [
            Op(f"wait i{tag}", "wait", line=em.line), self.to_l1bm(lc, lb, plan["need"])]))
        # per panel: the 8 long words of each row that hold it, into LM0
        r = em.seq_reg("tr")
        seg = f"(((({start}) & 1) + {KA} * {panel}) / 2)"
        cp = Op(f"l1bmp $llb{lb} $llm{lm}v", "l1bm", line=em.line,
                mem=(("r", "lb", lb, lb + plan["block"]), ("w", "m", lm, lm + plan["words"])))
        stage.append(SeqLoop(r, "0", plan["rmax"], [Call([cp], {"lb": f"{r} * (({pitch}) / 2) + {seg}",
                                                                "m": f"{r} * {SEG}"})]))
        stage.append(SeqSet(plan["held"], key))
        em.items.append(SeqIf(f"{key} != {plan['held']}", stage))
        e = f"(((({start}) & 1) + {KA} * {panel}) & 1) + {n} - {KA} * {panel}"
        hi, w = em.new("tilehi"), em.new("tilew")
        self.read(plan["t"][0], lm, plan["words"], f"({e}) ^ 1", hi, w)
        self.join(hi, w, out)

    def column_pass(self, k, pitch, start, n, plan, out):
        """B's element of this pass (kind COLUMN)."""
        em = self.em
        lay = em.lay
        rl = reg(ROW_LENGTH)
        lm, lc, lb = plan["lm"], plan["lc"], plan["lb"]
        per = plan["per"]
        panel = f"({n} / {per})"
        key = f"(%wx * 1048576 + {panel})"
        fe, nl, d = (em.seq_reg(x) for x in ("tf", "tn", "td"))
        first = f"({start}) + {per} * {panel} * ({pitch})"           # the panel's first element
        # its long words: up to the element the last lane (gid0 = gx - 1) reads in the last pass
        longs = f"({fe} + ({per} - 1) * ({pitch}) + {rl} - 1) / 2 - {fe} / 2 + 1"
        tag = em.tag()
        c = em.seq_reg("tq")
        cp = [Op(f"l1bmp $llb{lb + 8 * u} $llm{lm + 16 * u}v", "l1bm", line=em.line,
                 mem=(("r", "lb", lb + 8 * u, lb + 8 * u + 8), ("w", "m", lm + 16 * u, lm + 16 * u + 16)))
              for u in range(8)]                                        # 64 long words a call
        stage = [SeqSet(fe, first), SeqSet(nl, longs), SeqSet(d, f"{reg(base(k))} + {fe} / 2")]
        stage += self.mvs("mvb/n{n}i{t} $d0@0 $lc{lc}", d, lc, nl, lay.dram_longs, tag)
        stage += [Op(f"wait i{tag}", "wait", line=em.line), self.to_l1bm(lc, lb, nl),
                  SeqLoop(c, "0", f"({nl} + 63) / 64", [Call(cp, {"lb": f"{c} * 64", "m": f"{c} * 128"})]),
                  SeqSet(plan["held"], key)]
        em.items.append(SeqIf(f"{key} != {plan['held']}", stage))
        u = f"(({n} - {per} * {panel}) * ({pitch}) + ({fe} & 1))"
        hi, w = em.new("tilehi"), em.new("tilew")
        outer, em.items = em.items, []
        self.read(plan["t"][1], lm, plan["words"], f"{u} - 1", hi, w)
        odd, em.items = em.items, []
        self.read(plan["t"][0], lm, plan["words"], u, hi, w)
        even, em.items = em.items, outer
        em.items.append(SeqIf(f"{u} & 1", odd, even))
        self.join(hi, w, out)


def _launch_constant(expr: str) -> bool:
    """Whether a sequencer expression reads only scalar parameters (%p<k>) and numbers."""
    return all(re.fullmatch(r"p\d+", r) for r in re.findall(r"%(\w+)", expr))
