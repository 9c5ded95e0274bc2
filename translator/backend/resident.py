"""Resident buffers (the "-res" builds): buffers gathered or scattered in loops, copied into
every PE's LM0 at the top of each wave, read and written there, and summed back into DRAM at
its end."""
from __future__ import annotations

from .irtypes import type_size
from .abi import base, reg
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
        em = self.em
        if em.has_barrier:
            return []
        return sorted(k for k, r in em.reached.items()      # (write_back sums what PEs change: a
                      if r["loop"] and (r["load"] | r["store"]) <= r["gather"]    # buffer two work-items may
                      and (one_item or k not in em.colliding))                  # store to, for one only)

    def resident_copies(self):
        """At the top of the wave, each resident buffer (at most one chunk: the runtime checks) into
        every PE's LM0 at the top of LM0 (mvb, l2bmb, l1bmp)."""
        em = self.em
        if not em.resident:
            return
        n_words = 2 * em.CH
        outer, em.items = em.items, []
        glc, _ = em.memory.gather_area()
        for k in em.resident:
            if em.lm_top - n_words < 4 * em.CH:
                raise CodegenError("LM0 has no room for a resident copy of "
                                   f"'{em.memory.param(k).name}' ({n_words} words)", em.line)
            em.lm_top -= n_words
            em.resident[k] = em.lm_top
            em.uses.setdefault("bases", set()).add(k)
            tg = em.tag()
            em.items.append(MV(f"mvb/n{em.CH}i{tg} $d0@0 $lc{glc}", reg(base(k)), em.line))
            em.op(f"wait i{tg}", "wait")
            em.memory.chunk_to_lm0(em.lm_top)
        outer += em.items                     # (in place: a batch of gathers holds the list)
        em.items = outer

    def resident_read(self, k, ptr: Val, ty: str) -> Val:
        """A load from buffer k's resident copy: T-indirect, or at an offset the sequencer adds
        when every lane reads one element (its long word, then the lane picked)."""
        em = self.em
        at, size = em.resident[k], type_size(ty)
        aff = ptr.gid_affine
        if aff is not None and aff[0] == 0:
            m, w = self.resident_word(aff, size), em.new("res")
            mem = (("r", "m", at, at + 2 * em.CH),)
            if size == 8:
                em.items.append(Call([Op(f"lpassa $lm{at} {{d0}}", "alu", (w,), (), line=em.line, mem=mem)], m))
                return Val(em.values.kind_of(ty), (w, w))
            em.items.append(Call([Op(f"ipassa $m{at} {{d0w0}}", "alu", (w,), (), line=em.line, mem=mem),
                                  Op(f"ipassa $m{at} {{d0w1}}", "alu", (w,), (w,), line=em.line, mem=mem,
                                       partial=True)], m))
            return Val(em.values.kind_of(ty), (w,))
        rel, acc = em.memory.word_index(ptr, size)
        em.memory.read_chunk(rel, size, at, acc)
        return em.memory.lane_value(acc, ty)

    def resident_word(self, aff, size) -> dict:
        """The Call offset of the word (32-bit elements: element e is word e ^ 1) or even word
        (64-bit) a uniform byte offset reaches in a resident copy, kept inside the copy: an offset
        out of bounds is reported, and its lanes' writes are masked off (check_bounds)."""
        em = self.em
        u = f"(({aff[1]}) + ({aff[2] or 0}))"
        w = f"((({u}) >> 2) ^ 1)" if size == 4 else f"((({u}) >> 3) * 2)"
        top = 2 * em.CH - 2 + (size == 4)
        x = f"({w}*({w}>0))"          # (Call offsets are written without spaces: no `if`)
        return {"m": f"({x}-({x}-{top})*({x}>{top}))"}

    def resident_store_uniform(self, k, aff, val: VReg, p: VReg):
        """A 32-bit store to one element every storing lane names (an election left one): each lane's
        value, moved to the upper half, written to its word under the lane's predicate."""
        em = self.em
        at = em.resident[k]
        ops = []
        for up in (lambda x: x, lambda x: em.alu("llsl", x, em.c32(32))):
            v, m = up(val), em.mask_of(up(p))
            ops.append(Op(f"ipassa {{s0}} $m{at}/{{k0}}", "alu", (), (v,), msrc=(m,), line=em.line,
                          mem=(("w", "m", at, at + 2 * em.CH),)))
        em.items.append(Call(ops, self.resident_word(aff, 4)))
        em.res_written.add(k)

    def resident_write(self, k, entry):
        """A scatter entry (see scatter) applied to buffer k's resident copy, T-indirect, lane by lane."""
        em = self.em
        at, n_words = em.resident[k], 2 * em.CH
        lm = (("r", "m", at, at + n_words), ("w", "m", at, at + n_words))
        size, idx, *vals = entry
        em.res_written.add(k)
        inr = em.bool_from_mask(em.flags("uimin", idx, em.c32(n_words - 1)))
        if size == 8:        # a long word per work-item, at its even word
            ta = em.alu("iand", idx, em.c32(n_words - 2))
            for (t, _), val, cond in zip(em.scatter.lanes(ta), vals, em.widen_bool(inr)):
                em.op("lpassa {s0} $t", "alu", (), (t,), mem=TW)
                em.op(f"lpassa {{s0}} $lmt{at}/{{k0}}", "alu", (), (val,), msrc=(em.flags("lnot", cond),),
                      mem=lm + TR)
            return
        wa = em.alu("iand", em.alu("ixor", idx, em.c32(1)), em.c32(n_words - 1))
        for ta, up in em.scatter.lanes(wa):
            new = up(vals[0])
            em.op("lpassa {s0} $t", "alu", (), (ta,), mem=TW)
            if len(vals) > 1:               # a narrow store keeps the word's other bytes
                old = em.new("old")
                em.op(f"ipassa $mt{at} {{d0}}", "alu", (old,), (), mem=lm[:1] + TR)
                new = em.alu("ior", em.alu("iand", old, em.alu("inot", up(vals[1]))), new)
            em.op(f"ipassa {{s0}} $mt{at}/{{k0}}", "alu", (), (new,), msrc=(em.mask_of(up(inr)),), mem=lm + TR)

    def write_back(self):
        """At the end of the wave, each written resident buffer back to DRAM: with the chunk as the
        wave found it in the gather area, every PE puts its copy there and copy - found in Z, and
        the scatter's sum (quarter_sums, l1bmr, sum_into_dram) makes found + every PE's changes."""
        em = self.em
        n_words = 2 * em.CH
        for k in sorted(em.res_written):
            at = em.resident[k]
            glc, _ = em.memory.gather_area()
            _, red_lb = em.shared_area("reduce", em.CH, em.CH)
            em.scatter.scatter_setup()
            em.scatter.ensure_z()
            tg = em.tag()
            em.items.append(MV(f"mvb/n{em.CH}i{tg} $d0@0 $lc{glc}", reg(base(k)), em.line))
            em.op(f"wait i{tg}", "wait")
            em.memory.chunk_to_lm0()
            for g in range(0, n_words, 8):
                x, d = em.new("res"), em.new("diff")
                em.op(f"lpassa $lm{at + g}v {{d0}}", "alu", (x,), (), mem=(("r", "m", at + g, at + g + 8),))
                em.op(f"isub {{s0}} $lm{g}v {{d0}}", "alu", (d,), (x,), mem=(("r", "m", g, g + 8),))
                em.op(f"lpassa {{s0}} $lm{n_words + g}v", "alu", (), (d,),
                      mem=(("w", "m", n_words + g, n_words + g + 8),))
                em.op(f"lpassa {{s0}} $lm{g}v", "alu", (), (x,), mem=(("w", "m", g, g + 8),))
            for s_, acc in enumerate(em.scatter.quarter_sums()):
                em.op(f"l1bmriiadd {{s0}} $lb{red_lb + 16 * s_}", "l1bm", (), (acc,),
                      mem=(("w", "lb", red_lb + 16 * s_, red_lb + 16 * s_ + 16),))
            em.scatter.sum_into_dram(0, reg(base(k)))
