"""Resident buffers (the "-res" builds): buffers gathered in loops copied once into LM0,
read and written there, and written back to DRAM after the last wave."""
from __future__ import annotations

from .irtypes import type_size
from .ops import Call, MV, Op, VReg
from .emitter import CodegenError, TR, TW
from .values import Val


class Resident:
    """Buffers kept resident in LM0."""

    def __init__(self, em):
        self.em = em

    def resident_candidates(self, one_item: bool = False) -> list:
        """Buffers a launch may keep *resident* (mode "-res"): every access of them gathers or
        scatters, one of those in a loop, and the kernel has no barrier (each PE's copy only meets
        the others' changes at the end of the wave, which a barrier's global fence would need sooner).
        A buffer two work-items may store one element of (a scatter that claims) only for a launch
        of one work-item (one_item: mode "-res1"): write_back would sum their changes."""
        if self.em.has_barrier:
            return []
        return sorted(k for k, r in self.em.reached.items()      # (write_back sums what PEs change: a
                      if r["loop"] and (r["load"] | r["store"]) <= r["gather"]    # buffer two work-items may
                      and (one_item or k not in self.em.colliding))                  # store to, for one only)

    def resident_copies(self):
        """At the top of the wave, each resident buffer (at most one chunk: the runtime checks) into
        every PE's LM0 at the top of LM0 (mvb, l2bmb, l1bmp)."""
        if not self.em.resident:
            return
        n_words = 2 * self.em.CH
        outer, self.em.items = self.em.items, []
        glc, _ = self.em.memory.gather_area()
        for k in self.em.resident:
            if self.em.lm_top - n_words < 4 * self.em.CH:
                raise CodegenError("LM0 has no room for a resident copy of "
                                   f"'{self.em.memory.param(k).name}' ({n_words} words)", self.em.line)
            self.em.lm_top -= n_words
            self.em.resident[k] = self.em.lm_top
            self.em.uses.setdefault("bases", set()).add(k)
            tg = self.em.tag()
            self.em.items.append(MV(f"mvb/n{self.em.CH}i{tg} $d0@0 $lc{glc}", f"%b{k}", self.em.line))
            self.em.op(f"wait i{tg}", "wait")
            self.em.memory.chunk_to_lm0(self.em.lm_top)
        self.em.items = outer + self.em.items

    def resident_read(self, k, ptr: Val, ty: str) -> Val:
        """A load from buffer k's resident copy: T-indirect, or at an offset the sequencer adds
        when every lane reads one element (its long word, then the lane picked)."""
        at, size = self.em.resident[k], type_size(ty)
        aff = ptr.gid_affine
        if aff is not None and aff[0] == 0:
            m, w = self.resident_word(aff, size), self.em.new("res")
            mem = (("r", "m", at, at + 2 * self.em.CH),)
            if size == 8:
                self.em.items.append(Call([Op(f"lpassa $lm{at} {{d0}}", "alu", (w,), (), line=self.em.line, mem=mem)], m))
                return Val(self.em.values.kind_of(ty), (w, w))
            self.em.items.append(Call([Op(f"ipassa $m{at} {{d0w0}}", "alu", (w,), (), line=self.em.line, mem=mem),
                                    Op(f"ipassa $m{at} {{d0w1}}", "alu", (w,), (w,), line=self.em.line, mem=mem,
                                       partial=True)], m))
            return Val(self.em.values.kind_of(ty), (w,))
        rel, acc = self.em.memory.word_index(ptr, size)
        self.em.memory.read_chunk(rel, size, at, acc)
        return self.em.memory.lane_value(acc, ty)

    def resident_word(self, aff, size) -> dict:
        """The Call offset of the word (32-bit elements: element e is word e ^ 1) or even word
        (64-bit) a uniform byte offset reaches in a resident copy, kept inside the copy: an offset
        out of bounds is reported, and its lanes' writes are masked off (check_bounds)."""
        u = f"(({aff[1]}) + ({aff[2] or 0}))"
        w = f"((({u}) >> 2) ^ 1)" if size == 4 else f"((({u}) >> 3) * 2)"
        top = 2 * self.em.CH - 2 + (size == 4)
        x = f"({w}*({w}>0))"          # (Call offsets are written without spaces: no `if`)
        return {"m": f"({x}-({x}-{top})*({x}>{top}))"}

    def resident_store_uniform(self, k, aff, val: VReg, p: VReg):
        """A 32-bit store to one element every storing lane names (an election left one): each lane's
        value, moved to the upper half, written to its word under the lane's predicate."""
        at = self.em.resident[k]
        ops = []
        for up in (lambda x: x, lambda x: self.em.alu("llsl", x, self.em.c32(32))):
            v, m = up(val), self.em.mask_of(up(p))
            ops.append(Op(f"ipassa {{s0}} $m{at}/{{k0}}", "alu", (), (v,), msrc=(m,), line=self.em.line,
                          mem=(("w", "m", at, at + 2 * self.em.CH),)))
        self.em.items.append(Call(ops, self.resident_word(aff, 4)))
        self.em.res_written.add(k)

    def resident_write(self, k, entry):
        """A scatter entry (see scatter) applied to buffer k's resident copy, T-indirect, lane by lane."""
        at, n_words = self.em.resident[k], 2 * self.em.CH
        lm = (("r", "m", at, at + n_words), ("w", "m", at, at + n_words))
        size, idx, *vals = entry
        self.em.res_written.add(k)
        inr = self.em.bool_from_mask(self.em.flags("uimin", idx, self.em.c32(n_words - 1)))
        if size == 8:        # a long word per work-item, at its even word
            ta = self.em.alu("iand", idx, self.em.c32(n_words - 2))
            for (t, _), val, cond in zip(self.em.scatter.lanes(ta), vals, self.em.widen_bool(inr)):
                self.em.op("lpassa {s0} $t", "alu", (), (t,), mem=TW)
                self.em.op(f"lpassa {{s0}} $lmt{at}/{{k0}}", "alu", (), (val,), msrc=(self.em.flags("lnot", cond),),
                        mem=lm + TR)
            return
        wa = self.em.alu("iand", self.em.alu("ixor", idx, self.em.c32(1)), self.em.c32(n_words - 1))
        for ta, up in self.em.scatter.lanes(wa):
            new = up(vals[0])
            self.em.op("lpassa {s0} $t", "alu", (), (ta,), mem=TW)
            if len(vals) > 1:               # a narrow store keeps the word's other bytes
                old = self.em.new("old")
                self.em.op(f"ipassa $mt{at} {{d0}}", "alu", (old,), (), mem=lm[:1] + TR)
                new = self.em.alu("ior", self.em.alu("iand", old, self.em.alu("inot", up(vals[1]))), new)
            self.em.op(f"ipassa {{s0}} $mt{at}/{{k0}}", "alu", (), (new,), msrc=(self.em.mask_of(up(inr)),), mem=lm + TR)

    def write_back(self):
        """At the end of the wave, each written resident buffer back to DRAM: with the chunk as the
        wave found it in the gather area, every PE puts its copy there and copy - found in Z, and
        the scatter's sum (quarter_sums, l1bmr, sum_into_dram) makes found + every PE's changes."""
        n_words = 2 * self.em.CH
        for k in sorted(self.em.res_written):
            at = self.em.resident[k]
            glc, _ = self.em.memory.gather_area()
            _, red_lb = self.em.shared_area("reduce", self.em.CH, self.em.CH)
            self.em.scatter.scatter_setup()
            tg = self.em.tag()
            self.em.items.append(MV(f"mvb/n{self.em.CH}i{tg} $d0@0 $lc{glc}", f"%b{k}", self.em.line))
            self.em.op(f"wait i{tg}", "wait")
            self.em.memory.chunk_to_lm0()
            for g in range(0, n_words, 8):
                x, d = self.em.new("res"), self.em.new("diff")
                self.em.op(f"lpassa $lm{at + g}v {{d0}}", "alu", (x,), (), mem=(("r", "m", at + g, at + g + 8),))
                self.em.op(f"isub {{s0}} $lm{g}v {{d0}}", "alu", (d,), (x,), mem=(("r", "m", g, g + 8),))
                self.em.op(f"lpassa {{s0}} $lm{n_words + g}v", "alu", (), (d,),
                        mem=(("w", "m", n_words + g, n_words + g + 8),))
                self.em.op(f"lpassa {{s0}} $lm{g}v", "alu", (), (x,), mem=(("w", "m", g, g + 8),))
            for s_, acc in enumerate(self.em.scatter.quarter_sums()):
                self.em.op(f"l1bmriiadd {{s0}} $lb{red_lb + 16 * s_}", "l1bm", (), (acc,),
                        mem=(("w", "lb", red_lb + 16 * s_, red_lb + 16 * s_ + 16),))
            self.em.scatter.sum_into_dram(0, f"%b{k}")
