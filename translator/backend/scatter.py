"""Scattered stores: masked stores at any offsets of a buffer, batched, applied in passes
over the buffer's chunks whose copies' differences are summed up the tree into DRAM; two
lanes storing to one element are settled by claims (a winner per element).

Every PE writes its lanes into its copy of the chunk, the copies' differences are summed up
the tree (l1bmr, l2bmr, mvr with integer add) into DRAM.
"""
from __future__ import annotations

from . import idforms
from .abi import GLOBAL_EXTENTS, ITEMS, LAUNCH, LOCAL, LOCAL_EXTENTS, base, reg, rows
from .irread import Arg, Const, Inst
from .ops import MV, SeqIf, SeqLoop, SeqSet, VReg
from .emitter import CodegenError, TR, TW
from .values import Val

MANY = f"{reg(ITEMS)} > 1"                    # the launch has more than one work-item
GX = reg(LAUNCH[0])


class Scatter:
    """Scattered stores and their passes."""

    def __init__(self, em):
        self.em = em

    def scatter_setup(self, per_l2b: bool = False):
        """Per-PE constants of the scatter (made once): the PE's reduction digit and Z base.

        PEs 0..3 of MAB 0 of L1B 0 of L2B 0 of group 0 (of every L2B for `per_l2b`: the sums stop
        there, local_per_l2b) are *designated*: their reduction source is the broadcast chunk
        itself (old values plus their own stores), every other PE's is its zeroed Z area holding
        V - old for its stores, so the sum up the tree is the new chunk."""
        em = self.em
        if per_l2b not in em.scatter_regs:
            saved, em.items = em.items, []
            n_words = 2 * em.CH
            ids = {}
            for name in ("subpeid", "mabid", "l1bid", "l2bid"):
                ids[name] = em.new(name)
                em.op(f"ipassa ${name} {{d0}}", "alu", (ids[name],))
            nz = em.alu("ior", ids["mabid"], ids["l1bid"])
            if not per_l2b:
                nz = em.alu("ior", nz, ids["l2bid"])
            des = em.bool_from_mask(em.flags("uimin", nz, em.c32(0)))      # nz <= 0: designated
            zoff = em.alu("iand", em.b_not(des), em.c32(n_words))           # Z base (words): the chunk or Z
            tz = em.alu("iadd", zoff, em.alu("ilsl", ids["subpeid"], em.c32(1)))
            em.prologue += em.items
            em.items = saved
            em.scatter_regs[per_l2b] = (ids["subpeid"], zoff, tz)
        return em.scatter_regs[per_l2b]

    def ensure_z(self):
        """Z zeroed before the first pass that uses it in a run (each leaves it zeroed): under a
        sequencer flag, so a kernel whose scatters sit in fallbacks it does not take (a row store's
        copy, a shifted store) does not pay for it in its prologue (64 steps on mncore2)."""
        em = self.em
        if em.z_zeroed is None:
            em.z_zeroed = em.seq_reg("zz")
            em.prologue.append(SeqSet(em.z_zeroed, "0"))
        outer, em.items = em.items, []
        self.zero_z()
        em.items = outer + [SeqIf(f"{em.z_zeroed} == 0", em.items + [SeqSet(em.z_zeroed, "1")])]

    def zero_z(self):
        em = self.em
        n_words = 2 * em.CH
        for w in range(n_words, 2 * n_words, 16):
            em.op(f"zero $llm{w}v", "alu", mem=(("w", "m", w, w + 16),))

    def scatter(self, k, ptr: Val, regs: tuple, p: VReg, size: int = 4, form=None, block=None):
        """Masked store of lane values at any offsets of buffer k: 32-bit ones, the low bytes of
        them (size 1, 2), or 64-bit ones (regs: odd and even work-items'; an 8-byte element is
        aligned to 8 bytes, as OpenCL C requires, and a misaligned one is stored at the aligned
        long word below).

        Consecutive stores to one buffer in one basic block, with nothing between
        them that may read them (may_see_stores), are batched: one pass over the
        buffer's chunks applies them all (scatter_pass).  flush_scatters ends a
        batch."""
        em = self.em
        em.memory.note_access(k, "gather")
        em.memory.settle_stores(whole_buffer=True)
        key = None
        if k not in em.resident:
            key = em.memory.remark(k, "scattered", ptr.gid_affine, size)
            em.scatters |= isinstance(k, int)        # (not __local scratch)
        if em.batch and em.batch[0] != k:
            self.flush_scatters()
        aff = ptr.gid_affine
        if k in em.resident and size == 4 and aff is not None and aff[0] == 0:
            return em.resident_buffers.resident_store_uniform(k, aff, regs[0], p)
        off = em.memory.ptr_off(ptr)
        rel = em.alu("uilsr", off, em.c32(2), hint="widx")
        entry = (size, em.select32(p, rel, em.c32(-1)))
        # (its byte in the word: claims are per (word, byte); when it may collide, its index's form)
        claim = (em.alu("iand", off, em.c32(4 - size)) if size < 4 else em.c32(0),
                 self.may_collide(k, aff, size, form, block), aff, size, form)
        if size in (4, 8):
            entry += tuple(regs)
        else:                      # its value, and the bytes it replaces, in place in the word
            sh = em.alu("ilsl", em.alu("iand", off, em.c32(4 - size)), em.c32(3))
            bits = em.c32((1 << 8 * size) - 1)
            entry += (em.alu("ilsl", em.alu("iand", regs[0], bits), sh), em.alu("ilsl", bits, sh))
        if k in em.resident:
            return em.resident_buffers.resident_write(k, entry)
        if em.batch and em.batch[0] == k and len(em.batch[1]) == 1 and claim[1] != MANY \
                and self.stores_overlap(em.batch[3] + [claim]) and self.batch_meets(k, em.batch[3] + [claim]) == MANY:
            # two stores that may meet where nothing says when (a row and a column of one matrix):
            # two passes, in order, cost less than one claiming every element (its claims are
            # another round trip up the tree and back per chunk), and the second's may cover only
            # its span
            self.flush_scatters()
        if not em.batch:
            em.batch = (k, [], em.items, [], [], [])
        em.batch[1].append(entry)
        em.batch[3].append(claim)
        em.batch[4].append(key)
        em.batch[5].append(em.memory.lane_span(k, aff, size, em.accesses.get(em.cur)))
        if len(em.batch[1]) == em.scatter_batch:
            self.flush_scatters()

    def elect(self, p: VReg) -> VReg:
        """The one lane of the wave, among those where p, that stores to an element all of them store
        to (the one in the highest slot): a scatter sums the changes of different PEs, so `flag[0] = 1`
        from many work-items would add up.  Each lane offers its slot + 1 where p, else 0; the
        offers' maximum goes up the tree (l1bmr, l2bmr, mvr with fmax: sign-magnitude order, so
        the integer order of these) into group 0's PDM, comes back to every PE (mvb, l2bmb, l1bmp)
        and each PE folds the 16 long words of its MAB's cycles and PEs, its cycles and its lanes.
        The stores of one block under one predicate share their election; a launch of one
        work-item (%items, the sequencer knows) skips it."""
        em = self.em
        if p in em.elected:
            return em.elected[p]
        em.uses["items"] = True
        outer, em.items = em.items, []
        lc, lb = em.shared_area("elect", 64, 64)
        offer = em.select32(p, self.slot1(), em.c32(0))
        em.op(f"l1bmrfmax {{s0}} $lb{lb}", "l1bm", (), (offer,), mem=(("w", "lb", lb, lb + 16),))
        em.op(f"l2bmrfmax $lb{lb} $lc{lc}", "l2bm", mem=(("r", "lb", lb, lb + 64), ("w", "lc", lc, lc + 64)))
        em.op("nop", "nop")
        em.op("nop", "nop")
        for mv in (f"mvrfmax/n64i{{t}} $lc{lc} $p0@0", f"mvb/n64i{{t}} $p0@0 $lc{lc}"):
            t = em.tag()
            em.items.append(MV(mv.format(t=t), "0", em.line))
            em.op(f"wait i{t}", "wait")
        em.items.append(em.memory.l2bmb(lc, lb))
        for u in (0, 1):                   # into the gather area (free between gathers and scatters)
            em.op(f"l1bmp $llb{lb + 8 * u} $llm{16 * u}v", "l1bm",
                  mem=(("r", "lb", lb + 8 * u, lb + 8 * u + 8), ("w", "m", 16 * u, 16 * u + 16)))
        m = em.new("best")
        em.op("lpassa $lm0v {d0}", "alu", (m,), (), mem=(("r", "m", 0, 8),))
        for a in (8, 16, 24):              # cycle c: long words c, 4 + c, 8 + c, 12 + c
            em.op(f"imax {{s0}} $lm{a}v {{d0}}", "alu", (m,), (m,), mem=(("r", "m", a, a + 8),))
        em.op("lpassa {s0} $lm0v", "alu", (), (m,), mem=(("w", "m", 0, 8),))
        for a in (0, 2, 4, 6):             # every cycle: the four cycles' (plain operands)
            if a == 0:
                em.op("lpassa $lm0 {d0}", "alu", (m,), (), mem=(("r", "m", 0, 8),))
            else:
                em.op(f"imax {{s0}} $lm{a} {{d0}}", "alu", (m,), (m,), mem=(("r", "m", 0, 8),))
        swapped = em.alu("lor", em.alu("ulsr", m, em.c32(32)), em.alu("llsl", m, em.c32(32)))
        best = em.alu("imax", m, swapped)
        win = em.elected[p] = em.copy(em.c32(0), em.new("win"))
        em.masked_copy(em.c32(-1), win, em.flags("ixor", best, self.slot1()))
        # lanes past a narrowed wave's chain (em.in_wave) repeat the slot numbers of lanes in it:
        # only the lane where p, in the wave, holding the best slot stores
        em.alu("iand", win, p, dst=win)
        if em.in_wave is not None:
            em.alu("iand", win, em.in_wave, dst=win)
        elect, em.items = em.items, []
        em.copy(p, win)
        outer.append(SeqIf(MANY, elect, em.items))
        em.items = outer         # (the same list: a batch of stores began in it)
        return win

    def flush_scatters(self):
        """Emit the batched stores (before anything that may read or reorder what they write)."""
        em = self.em
        if em.batch:
            k, entries, items, infos, remarks, spans = em.batch
            em.batch = None
            em.batched |= len(entries) > 1
            assert items is em.items, "a batch of stores must end where it began"
            whens = [w for _, w, *_ in infos]
            if len(infos) > 1 and (any(whens) or self.stores_overlap(infos)):
                whens = [self.batch_meets(k, infos)] * len(infos)   # (one store's lanes may meet another's)
            claims = [(boff, w) if w else None for (boff, *_), w in zip(infos, whens)]
            if any(whens):
                em.colliding.add(k)
            self.scatter_pass(k, entries, claims, spans, remarks)

    def scatter_pass(self, k, entries, claims=None, spans=(), remarks=()):
        """One pass over buffer k's chunks that applies the stores `entries`: (size, word index or
        -1 where the lane does not store, the value in place in its word[, the bits it replaces])
        or (8, index of the low word, odd and even work-items' values).

        Chunk by chunk the buffer is broadcast to every PE's LM0 (as for a gather),
        each PE adds new - old for a word to its Z copy of it with T-indirect
        accesses (new keeps the word's other bytes for a narrow store), and the
        sum of the Z copies goes up the tree: l1bmr over the MABs, each PE of a MAB
        sending the quarter of the chunk its reduction digit (subpeid) names,
        l2bmr over the L1Bs and mvr over the L2Bs into DRAM.  The designated PEs
        send the chunk itself (old values plus their own changes), so the sum is
        old + every change.  A PE's changes reach the PE of the word's digit in
        one of two ways: one store's (index, value) pairs rotate through L1BM in
        four rounds, each PE taking its L1B neighbour i + r's (apply_rotated);
        a batch of them is applied by each PE to its own lanes, and the Z
        quarters then rotate within the MAB with msl/msr (apply_batch), which
        costs once per chunk instead of once per store.  Where two lanes may store
        to one element (claims: may_collide), a claim pass per chunk (claim_winners)
        first picks one of them per element (per byte for narrow stores), so the
        element ends up holding one of the stored values, not their changes' sum."""
        em = self.em
        lay = em.lay
        S, G, CH = lay.stripe, lay.groups, em.CH
        n_words = 2 * CH
        em.uses.setdefault("bases", set()).add(k)
        em.uses.setdefault("rows", set()).add(k)
        self.ensure_z()
        claims = claims or [None] * len(entries)
        claimed = any(c is not None for c in claims)
        rotated = len(entries) == 1 and entries[0][0] != 8 and not claimed
        keys = self.claim_keys(claims) if claimed else None
        if rotated:
            areas = self.rotate_areas(entries[0])
        glc, _ = em.memory.gather_area()
        red_lc, red_lb = em.shared_area("reduce", CH, CH)
        cb = em.copy(em.c32(0), em.new("chunk"))
        outer, em.items = em.items, []
        r, c = em.seq_reg("r"), em.seq_reg("c")
        tg = em.tag()
        own = k == LOCAL and em.local_l2b
        if own:               # each L2B its own work-groups' blocks, every group at once (abi.local_per_l2b)
            at = [f"{em.memory.local_row(h, r)}+{c}*{CH}" for h in range(lay.l2b)]
            em.items += [MV(f"mvp/n{CH}i{tg} $d0 $lc{glc}@.{h}", a, em.line) for h, a in enumerate(at)]
        else:                 # group g's chunk to every PE, g a sequencer loop: the PE steps are written once
            g = em.seq_reg("g")
            at = f"{reg(base(k))}+{r}*{S}+{c}*{CH}"
            em.items += em.memory.by_group(g, lambda q: MV(f"mvb/n{CH}i{tg} $d0@{q} $lc{glc}", at, em.line))
        em.op(f"wait i{tg}", "wait")
        em.memory.chunk_to_lm0()
        # the sum up the tree, straight into this chunk's place in DRAM
        if rotated:
            self.apply_rotated(entries[0], areas, cb, own)
            em.op("lpassa {s0} $t", "alu", (), (self.scatter_setup(own)[2],), mem=TW)
            for s_ in range(CH // 16):
                em.op(f"l1bmriiadd $lmt{32 * s_}v4 $lb{red_lb + 16 * s_}", "l1bm",
                      mem=(("r", "m", 0, 2 * n_words),) + TR + (("w", "lb", red_lb + 16 * s_, red_lb + 16 * s_ + 16),))
        else:
            here = self.claim_winners(entries, claims, keys, cb, own) if claimed else entries
            for s_, acc in enumerate(self.apply_batch(here, cb, own)):
                em.op(f"l1bmriiadd {{s0}} $lb{red_lb + 16 * s_}", "l1bm", (), (acc,),
                      mem=(("w", "lb", red_lb + 16 * s_, red_lb + 16 * s_ + 16),))
        if own:
            self.sum_into(lambda lc, t: [MV(f"mvp/n{CH}i{t} $lc{lc}@.{h} $d0", a, em.line) for h, a in enumerate(at)])
        else:
            self.sum_into(lambda lc, t: em.memory.by_group(
                g, lambda q: MV(f"mvriiadd/n{CH}i{t} $lc{lc} $d0@{q}", at, em.line)))
        em.alu("iadd", cb, em.c32(n_words), dst=cb)
        # (only the chunks the lanes' indices meet, where their affine forms say: memory.within)
        span = None if own else em.memory.batch_span(list(spans), outer)
        em.memory.span_remarks([x for x in remarks if x is not None], span)
        advance = lambda longs: em.alu("iadd", cb, em.c32(2 * longs), dst=cb)
        work, em.items = em.items, outer
        chunks = SeqLoop(c, "0", em.memory.chunks_in(k, f"{r} * {G}" if own else f"{r} * {G} + {g}"),
                         work if own else em.memory.within(span, f"({r} * {G} + {g}) * {S} + {c} * {CH}", CH, work,
                                                           advance))
        em.items.append(SeqLoop(r, "0", reg(rows(k)), [chunks] if own else em.memory.within(
            span, f"{r} * {G * S}", G * S, [SeqLoop(g, "0", str(G), [chunks])], advance)))

    def may_collide(self, k, aff, size: int, form=None, block=None):
        """When two lanes of a wave may store to one element, and the scatter claims: a sequencer
        condition, or None for never.  Never when the index is affine in the global id with a
        coefficient of at least the element's size (every work-item its own element; in the
        general form, for a 1-D launch: %items == %gx), nor when it is uniform and elect picked one
        lane (not for __local scratch); else, where the store's form in the work-item ids
        (idforms.py) is one-to-one under conditions on the launch's sizes (and on the ids, by the
        branches its block is under), when they fail; else when the launch has more than one
        work-item."""
        em = self.em
        if aff is not None and aff[0] == 0 and k != "L":
            return None
        apart = aff is not None and aff[0] != 0 and abs(aff[0]) >= size     # in get_global_id(0)
        if apart and em.one_d:
            return None
        conds = None if form is None else idforms.injective(form, size, self.extent_of(k == "L", block),
                                                            em.lay.wave)
        if conds is None:
            return f"{reg(ITEMS)} > {GX}" if apart else MANY
        return f"not ({' and '.join(conds)})" if conds else None

    def id_form(self, x, local: bool, block=None):
        """The form of pointer x in the work-item ids (idforms.py) over the lanes a store's claim is
        among: a work-group's for __local memory (a global id is its local id plus a part uniform
        there), the wave's for __global (a local or group id is not a form there, except in a 1-D
        build, where a lane is its group and local id in dimension 0: digits of their own,
        idforms.GROUP_DIM and LOCAL_DIM)."""
        em = self.em
        groups = not local and em.one_d

        def leaf(y):
            if isinstance(y, Inst) and y.op == "call" and y.callee == "__mncl_local":
                return {("u", "local"): 1}
            if isinstance(y, Inst) and y.op == "load":
                ptr = em.vals.get(y.ops[0])
                if ptr is not None and ptr.kind == "ptr" and ptr.off is None and ptr.base in (("ids",), ("wg",), ("args",)):
                    k = ptr.coff // 8
                    if ptr.base == ("ids",):
                        field = ("id", k % 3, 0, None, None)
                        if k == 0 and groups:
                            return {("id", idforms.LOCAL_DIM, 0, None, None): 1}
                        if k < 3:
                            return {field: 1} if local else None
                        return {field: 1, ("u", ("group base", k)): 1} if local else {field: 1}
                    if ptr.base == ("wg",) and k == 7 and groups:
                        return {("id", idforms.GROUP_DIM, 0, None, None): 1}
                    if ptr.base == ("wg",) and 7 <= k <= 9 and not local:
                        return None      # a group id varies over a wave
                    return {("u", (ptr.base, ptr.coff)): 1}
            if isinstance(y, (Inst, Arg)) and (e := em.values.seq_expr(y)) is not None:
                return {("u", id(y), e): 1}
            return None
        if x in em.elem_of:             # element j of a vector access: its pointer's form + j's offset
            x, off = em.elem_of[x]
            f = idforms.form_of(x, leaf)
            return None if f is None else idforms.add(f, {idforms.ONE: off} if off else {})
        return idforms.form_of(x, leaf)

    def extent_of(self, local: bool, block=None):
        """extent(d): how far the ids of the lanes that may meet span in dimension d, as the
        sequencer names it (the local size; for __global, the wave's extent within the global
        size: %ex = min(wave, global size)), or 1 (a 1-D launch's y and z); no further than U
        where the block runs only in lanes whose id is below U (`if (j < nj)`: ids start at 0).
        For a 1-D build's __global stores, the group id's (GROUP_DIM: no more than the wave's
        work-items) and the local id's (LOCAL_DIM: the local size, 1 where the block runs in
        one lane of each group, lone_in_group)."""
        em = self.em
        below = self.ids_below(block, local) if block is not None else {}

        def extent(d):
            if d == idforms.LOCAL_DIM:
                if block is not None and self.lone_in_group(block):
                    return 1
                em.uses.setdefault("extents", set()).add(LOCAL_EXTENTS[0])
                return f"(%{LOCAL_EXTENTS[0]} if %{LOCAL_EXTENTS[0]} < {below[d]} else {below[d]})" \
                    if d in below else f"%{LOCAL_EXTENTS[0]}"
            if d == idforms.GROUP_DIM:   # the wave's groups: its work-items over the local size, rounded
                em.uses.setdefault("extents", set()).update((GLOBAL_EXTENTS[0], LOCAL_EXTENTS[0]))
                em.uses["items"] = True  # up where waves start at a group (one wave, or groups tiling one),
                ex, ls, w = f"%{GLOBAL_EXTENTS[0]}", f"%{LOCAL_EXTENTS[0]}", em.lay.wave      # else one more
                return f"(({ex} + {ls} - 1) / {ls} if {reg(ITEMS)} <= {ex} or {w} / {ls} * {ls} == {w} " \
                       f"else ({ex} - 1) / {ls} + 2)"
            if em.one_d and d:
                return 1
            name = LOCAL_EXTENTS[d] if local else GLOBAL_EXTENTS[d]
            em.uses.setdefault("extents", set()).add(name)
            return f"(%{name} if %{name} < {below[d]} else {below[d]})" if d in below else f"%{name}"
        return extent

    def branches_into(self, block):
        """(condition, whether it holds there) of each two-way branch into a block that dominates
        `block` (its only way in): what the lanes that run `block` are known to satisfy."""
        em = self.em
        if em.dominators is None:
            em.dominators = idforms.dominators(em.rpo, em.preds)
        for d in em.dominators.get(block, ()):
            ps = em.preds.get(d, [])
            if len(ps) != 1 or em.bmap[ps[0]].insts[-1].op != "br" or len(em.succ[ps[0]]) != 2:
                continue
            t, f = em.succ[ps[0]]
            if t != f:
                yield em.bmap[ps[0]].insts[-1].ops[0], d == t

    def lone_in_group(self, block) -> bool:
        """Whether block runs only in lanes whose local id (dimension 0: a 1-D build) is 0, by a
        dominating branch on `lid == 0` (`lid < 1`, `lid <= 0`): one lane of each group."""
        for c, truth in self.branches_into(block):
            if isinstance(c, Inst) and c.op == "icmp" and self.em.ints.id_slot(c.ops[0]) == ("ids", 0) \
                    and isinstance(c.ops[1], Const) \
                    and ((c.pred if truth else idforms.NEGATE.get(c.pred)), c.ops[1].value) in (
                        ("eq", 0), ("ult", 1), ("slt", 1), ("ule", 0), ("sle", 0)):
                return True
        return False

    def ids_below(self, block, local: bool) -> dict:
        """{d: U}: block runs only where the id in dimension d (the local id for __local) is below
        the uniform U, by the conditional branches into the blocks that dominate it."""
        out = {}
        for c, truth in self.branches_into(block):
            out.update(idforms.id_below(c, truth, lambda x: self.id_form(x, local), self.em.values.seq_expr))
        return out

    def batch_meets(self, k, infos):
        """When a store of a batch may meet another work-item's other store (claims for all of
        them): any store's own condition, or a pair's that stores_overlap cannot rule out and their
        forms cannot either (idforms.meet); "%items > 1" where nothing is known."""
        conds, nearest = {w for _, w, *_ in infos if w}, {}
        for x, a in enumerate(infos):
            for b in infos[x + 1:]:
                if not self.stores_overlap([a, b]):
                    continue
                m = None if a[4] is None or b[4] is None else \
                    idforms.meet(a[4], b[4], a[3], b[3], self.extent_of(k == "L"))
                if m is None:
                    return MANY
                for d, span in m:            # (of two distances within one span, the nearer decides)
                    nearest[span] = min(d, nearest.get(span, d))
        conds |= {f"{d} <= {span}" for span, d in nearest.items()}
        if MANY in conds or not conds:
            return MANY if conds else None
        return " or ".join(f"({c})" for c in sorted(conds))

    @staticmethod
    def stores_overlap(infos) -> bool:
        """Whether a work-item's store of a batch may meet another work-item's other store: unless
        the two indices are affine in the global id with one coefficient c and offsets that keep
        their elements apart for every other work-item (o[6 i + 1] and o[6 i + 2] never meet;
        o[i] and o[i + 1] do), or both uniform (elected together)."""
        for x, (_, _, a1, s1, *_) in enumerate(infos):
            for _, _, a2, s2, *_ in infos[x + 1:]:
                if a1 is None or a2 is None:
                    return True
                if a1[0] == a2[0] == 0:
                    continue
                c, delta = a1[0], a2[1] - a1[1]
                if a2[0] != c or a2[2] != a1[2] or c == 0:
                    return True
                if any(-s2 < delta - c * d < s1 for d in range(delta // c - 2, delta // c + 3) if d != 0):
                    return True
        return False

    def slot1(self) -> VReg:
        """slot + 1 (made once): a lane's id across the machine, never 0."""
        em = self.em
        if em.slot1_reg is None:
            saved, em.items = em.items, []
            em.slot1_reg = em.alu("iadd", em.slot, em.c32(1), hint="slot1")
            em.prologue += em.items
            em.items = saved
        return em.slot1_reg

    def claim_keys(self, claims) -> list:
        """Each claiming store's key in each lane: slot + 1 above the store's place in the batch, so a
        later store of a work-item outranks its earlier ones (the element ends with a value some
        order of the stores leaves).  Keys are positive and below 2^30: fmax (sign-magnitude) orders
        them as integers."""
        em = self.em
        shift = (8 * em.lay.n_pe).bit_length()         # slots: below the machine's 32-bit lanes
        if (em.scatter_batch << shift) > 1 << 30:
            raise CodegenError(f"a machine of {8 * em.lay.n_pe} lanes is too big for the scatter's claims", em.line)
        return [None if c is None else em.alu("iadd", self.slot1(), em.c32(e << shift))
                for e, c in enumerate(claims)]

    def claim_winners(self, entries, claims, keys, cb, per_l2b: bool = False):
        """The entries as apply_batch is to apply them in this chunk: a claiming lane's word index
        is -1 where it lost its element.

        Each claiming lane writes its key to its word in a zeroed claim copy (the Z area; lanes of a
        PE overwrite one another), the copies' maximum goes up the tree (claim_max) and comes back to
        every PE, and a lane whose key is there won.  Narrow stores claim in one round per byte of
        the word, so stores to different bytes of one word all land, and each round's winners are
        an entry of their own: apply_batch's lanes of one PE must not change one word in one step
        (each would add its change to the Z word all of them read).  A launch of one work-item
        (%items, the sequencer knows) skips the claims, and so does a 1-D launch of stores that
        collide only in more dimensions (may_collide).  per_l2b: the maximum is each L2B's
        (local_per_l2b)."""
        em = self.em
        n_words = 2 * em.CH
        lm_all = (("r", "m", 0, 2 * n_words), ("w", "m", 0, 2 * n_words))
        em.uses["items"] = True
        rounds = {e: range(0, 4, size) if size < 4 else range(1)
                  for e, ((size, *_), c) in enumerate(zip(entries, claims)) if c is not None}
        won = {(e, b): em.copy(entries[e][1] if b == 0 else em.c32(-1), em.new("claimed"))
               for e, bs in rounds.items() for b in bs}
        outer, em.items = em.items, []
        words = {}
        for e in rounds:
            size, idx = entries[e][:2]
            words[e] = self.chunk_word(em.alu("iand", idx, em.c32(-2)) if size == 8 else idx, cb)
            em.copy(em.c32(-1), won[(e, 0)])
        for b in range(0, 4, min(entries[e][0] for e in rounds)):
            here = {e: x for e, x in words.items() if b in rounds[e]}
            if not here:
                continue
            for e, (_, wa, inr) in here.items():
                cond = inr if entries[e][0] >= 4 else \
                    em.b_and(inr, em.bool_from_mask(em.flags("ixor", claims[e][0], em.c32(b))))
                for ta, up in self.lanes(wa):
                    em.op("lpassa {s0} $t", "alu", (), (ta,), mem=TW)
                    em.op(f"ipassa {{s0}} $mt{n_words}/{{k0}}", "alu", (), (up(keys[e]),),
                          msrc=(em.mask_of(up(cond)),), mem=lm_all + TR)
            self.claim_max(per_l2b)
            for e, (_, wa, _) in here.items():
                got = []
                for ta, _ in self.lanes(wa):
                    em.op("lpassa {s0} $t", "alu", (), (ta,), mem=TW)
                    got.append(em.new("winner"))
                    em.op(f"ipassa $mt{n_words} {{d0}}", "alu", (got[-1],), (), mem=lm_all[:1] + TR)
                best = em.alu("lor", em.alu("land", got[0], em.const64(0xFFFFFFFF00000000)),
                              em.alu("ulsr", got[1], em.c32(32)))
                em.masked_copy(entries[e][1], won[(e, b)], em.flags("ixor", best, keys[e]))
            self.zero_z()
        when = {c[1] for c in claims if c is not None}         # (one work-item: nothing to claim)
        if GX in " ".join(when):
            em.uses["launch"] = True
        outer.append(SeqIf(MANY if MANY in when else " or ".join(f"({w})" for w in sorted(when)),
                           em.items, []))
        em.items = outer
        out = []
        for e, entry in enumerate(entries):
            out += [(entry[0], won[(e, b)]) + tuple(entry[2:]) for b in rounds[e]] if e in rounds else [entry]
        return out

    def claim_max(self, per_l2b: bool = False):
        """The maximum of every PE's claim copy (its Z area) into every PE's Z area: within the MAB
        (quarter_sums with imax), over the MABs (l1bmr), the L1Bs (l2bmr) and the L2Bs and groups
        (mvr) into group 0's PDM, and back (mvb, l2bmb, l1bmp), all with fmax (the keys are
        positive: sign-magnitude order is their integer order).  per_l2b: each L2B's maximum, from
        its L2BM straight back down."""
        em = self.em
        CH, n_words = em.CH, 2 * em.CH
        _, red_lb = em.shared_area("reduce", CH, CH)
        glc, _ = em.memory.gather_area()
        for s_, acc in enumerate(self.quarter_sums(self.claim_bases(), "imax")):
            em.op(f"l1bmrfmax {{s0}} $lb{red_lb + 16 * s_}", "l1bm", (), (acc,),
                  mem=(("w", "lb", red_lb + 16 * s_, red_lb + 16 * s_ + 16),))
        red_lc = self.reduce_l1bs("fmax")
        if per_l2b:
            em.memory.chunk_to_lm0(n_words, red_lc)
            return
        for mv in (f"mvrfmax/n{CH}i{{t}} $lc{red_lc} $p0@0", f"mvb/n{CH}i{{t}} $p0@0 $lc{glc}"):
            t = em.tag()
            em.items.append(MV(mv.format(t=t), "0", em.line))
            em.op(f"wait i{t}", "wait")
        em.memory.chunk_to_lm0(n_words)

    def claim_bases(self):
        """T-indirect bases (words) of the Z quarters each PE sends in the four rounds of claim_max:
        digit (subpeid + r) & 3 (made once)."""
        return [self.z_digit_base(r) for r in range(4)]

    def z_digit_base(self, r: int) -> VReg:
        """The T-indirect base (words) of digit (subpeid + r) & 3 of a PE's Z copy (made once)."""
        em = self.em
        bases = em.z_digit_bases
        if r not in bases:
            sub, _, _ = self.scatter_setup()
            saved, em.items = em.items, []
            digit = em.alu("iand", em.alu("iadd", sub, em.c32(r)), em.c32(3))
            bases[r] = em.alu("iadd", em.alu("ilsl", digit, em.c32(1)), em.c32(2 * em.CH))
            em.prologue += em.items
            em.items = saved
        return bases[r]

    def reduce_l1bs(self, rop: str) -> int:
        """The reduce area's L1BM over the L2B's L1Bs (l2bmr<rop>) into its L2BM, settled for an
        mvr (two steps); returns the L2BM address."""
        em = self.em
        CH = em.CH
        red_lc, red_lb = em.shared_area("reduce", CH, CH)
        for t in range(CH // 64):
            em.op(f"l2bmr{rop} $lb{red_lb + 64 * t} $lc{red_lc + 64 * t}", "l2bm",
                  mem=(("r", "lb", red_lb + 64 * t, red_lb + 64 * t + 64),
                         ("w", "lc", red_lc + 64 * t, red_lc + 64 * t + 64)))
        em.op("nop", "nop")
        em.op("nop", "nop")
        return red_lc

    def sum_into(self, put):
        """The MAB sums in the reduce area's L1BM summed over the L1Bs (l2bmr) into the L2BM, and
        from there by the MVs put(L2BM address, tag) (over the L2Bs into DRAM, mvr; or each L2B
        its own, mvp); Z is zeroed again."""
        em = self.em
        red_lc = self.reduce_l1bs("iiadd")
        tg = em.tag()
        em.items += put(red_lc, tg)
        em.op(f"wait i{tg}", "wait")
        self.zero_z()

    def sum_into_dram(self, g: int, daddr: str):
        """sum_into over every L2B of the board into group g's DRAM at daddr."""
        em = self.em
        self.sum_into(lambda lc, t: [MV(f"mvriiadd/n{em.CH}i{t} $lc{lc} $d0@{g}", daddr, em.line)])

    def rotate_areas(self, entry):
        """One store's registers in L1BM, twice over (round r reads up to 3 long words past the first copy)."""
        em = self.em
        P = em.lay.pe_l1b
        areas = [em.shared_area(("rotate", j), 0, 8 * P)[1] for j in range(len(entry) - 1)]
        for area, r in zip(areas, entry[1:]):
            for copy in (0, 4 * P):
                em.op(f"l1bmd {{s0}} $lb{area + copy}", "l1bm", (), (r,),
                      mem=(("w", "lb", area + copy, area + copy + 4 * P),))
        return areas

    def chunk_word(self, idx: VReg, cb: VReg):
        """(the word's offset in the chunk, its T-indirect word address there, bool: it is in this
        chunk) of a word index."""
        em = self.em
        n_words = 2 * em.CH
        w = em.alu("isub", idx, cb)
        inr = em.bool_from_mask(em.flags("uimin", w, em.c32(n_words - 1)))
        return w, em.alu("iand", em.alu("ixor", w, em.c32(1)), em.c32(n_words - 1)), inr

    def apply_word(self, ta: VReg, new: VReg, bits, cond: VReg, z):
        """At the T-indirect word ta of the chunk (upper halves), where cond: Z[z + ta] += new - old
        (new keeps the old word's other bytes when bits is given).  z is a register (the word
        offset of each PE's Z) or, for apply_batch, the offset of everyone's, and then the chunk
        takes new too, so a later store to the word in the batch changes it from there."""
        em = self.em
        n_words = 2 * em.CH
        lm_all = (("r", "m", 0, 2 * n_words), ("w", "m", 0, 2 * n_words))
        em.op("lpassa {s0} $t", "alu", (), (ta,), mem=TW)
        old = em.new("old")
        em.op("ipassa $mt0 {d0}", "alu", (old,), (), mem=lm_all[:1] + TR)
        if bits is not None:
            new = em.alu("ior", em.alu("iand", old, em.alu("inot", bits)), new)
        at = f"$mt{z}" if isinstance(z, int) else "$mt0"
        if not isinstance(z, int):
            em.op("lpassa {s0} $t", "alu", (), (em.alu("iadd", ta, z),), mem=TW)
        zv = em.new("z")
        em.op(f"ipassa {at} {{d0}}", "alu", (zv,), (), mem=lm_all[:1] + TR)
        d = em.alu("iadd", zv, em.alu("isub", new, old))
        k = em.mask_of(cond)
        em.op(f"ipassa {{s0}} {at}/{{k0}}", "alu", (), (d,), msrc=(k,), mem=lm_all + TR)
        if isinstance(z, int):
            em.op("ipassa {s0} $mt0/{k0}", "alu", (), (new,), msrc=(k,), mem=lm_all + TR)

    def apply_long(self, ta: VReg, new: VReg, cond: VReg, z: int):
        """apply_word for a 64-bit value (two 32-bit words, each summed as the reduction sums them)
        at the even T-indirect word ta, where the long-word bool cond."""
        em = self.em
        n_words = 2 * em.CH
        lm_all = (("r", "m", 0, 2 * n_words), ("w", "m", 0, 2 * n_words))
        em.op("lpassa {s0} $t", "alu", (), (ta,), mem=TW)
        old, zv = em.new("old"), em.new("z")
        em.op("lpassa $lmt0 {d0}", "alu", (old,), (), mem=lm_all[:1] + TR)
        em.op(f"lpassa $lmt{z} {{d0}}", "alu", (zv,), (), mem=lm_all[:1] + TR)
        d = em.alu("iadd", zv, em.alu("isub", new, old))
        k = em.flags("lnot", cond)
        em.op(f"lpassa {{s0}} $lmt{z}/{{k0}}", "alu", (), (d,), msrc=(k,), mem=lm_all + TR)
        em.op("lpassa {s0} $lmt0/{k0}", "alu", (), (new,), msrc=(k,), mem=lm_all + TR)

    def lanes(self, wa: VReg):
        """The two 32-bit lanes of a long word as T-indirect word addresses: the upper (odd) lane, then
        the lower one; with the function that moves a lane's register value to the upper half."""
        em = self.em
        yield em.alu("ulsr", wa, em.c32(32)), (lambda x: x)
        yield em.alu("land", wa, em.const64(0xFFFFFFFF)), (lambda x: em.alu("llsl", x, em.c32(32)))

    def apply_rotated(self, entry, areas, cb, per_l2b: bool = False):
        """One store, rotated: in round rd each PE takes its L1B neighbour i + rd's pairs and applies
        those whose word has its reduction digit, to its Z copy (the chunk itself on designated PEs)."""
        em = self.em
        sub, zoff, _ = self.scatter_setup(per_l2b)
        for rd in range(4):
            got = []
            for area in areas:
                x = em.new("rot")
                em.op(f"l1bmd $lb{area + rd} {{d0}}", "l1bm", (x,),
                      mem=(("r", "lb", area + rd, area + rd + 4 * em.lay.pe_l1b),))
                got.append(x)
            w, wa, inr = self.chunk_word(got[0], cb)
            dig = em.alu("ixor", em.alu("iand", em.alu("uilsr", w, em.c32(1)), em.c32(3)), sub)
            cond = em.b_and(inr, em.bool_from_mask(em.flags("uimin", dig, em.c32(0))))
            for ta, up in self.lanes(wa):
                self.apply_word(ta, up(got[1]), up(got[2]) if len(got) > 2 else None, up(cond), zoff)

    def apply_batch(self, entries, cb, per_l2b: bool = False):
        """A batch of stores: each PE applies its own lanes' to its Z copy and to the chunk; then the
        Z quarters rotate within the MAB so PE p sums digit p over its MAB (round 0 is its own:
        the chunk on designated PEs, Z elsewhere).  Returns the sums, one register per 16 long words
        of the chunk (cycle c of register s: long word 16 s + 4 c + p)."""
        em = self.em
        n_words = 2 * em.CH
        for size, idx, *vals in entries:
            w, wa, inr = self.chunk_word(idx, cb)
            if size == 8:        # a long word per work-item, at its even word
                ta = em.alu("iand", w, em.c32(n_words - 2))
                for (t, _), val, cond in zip(self.lanes(ta), vals, em.widen_bool(inr)):
                    self.apply_long(t, val, cond, n_words)
                continue
            for ta, up in self.lanes(wa):
                self.apply_word(ta, up(vals[0]), up(vals[1]) if len(vals) > 1 else None, up(inr), n_words)
        return self.quarter_sums(self.digit_bases(per_l2b))

    def quarter_sums(self, bases=None, combine="iadd"):
        """The Z quarters (the chunk on designated PEs in round 0) rotated within the MAB so PE p sums
        digit p over its MAB: one register per 16 long words of the chunk (cycle c of register s:
        long word 16 s + 4 c + p).  (claim_max: other bases, and the maximum instead of the sum.)"""
        em = self.em
        n_words = 2 * em.CH
        sums = []
        for rd, t in enumerate(bases or self.digit_bases()):
            em.op("lpassa {s0} $t", "alu", (), (t,), mem=TW)
            for s_ in range(em.CH // 16):
                x = em.new("q")
                em.op(f"lpassa $lmt{32 * s_}v4 {{d0}}", "alu", (x,), (), mem=(("r", "m", 0, 2 * n_words),) + TR)
                for _ in range(rd if rd < 3 else 1):       # to PE p + rd of the MAB
                    x = em.alu("msl" if rd < 3 else "msr", x)
                if rd == 0:
                    sums.append(x)
                else:
                    em.alu(combine, sums[s_], x, dst=sums[s_])
        return sums

    def digit_bases(self, per_l2b: bool = False):
        """T-indirect bases (words) of the quarters each PE sends in the four rounds of apply_batch:
        round 0 its own digit's (tz), round r digit (subpeid + r) & 3 of its Z (made once)."""
        return [self.scatter_setup(per_l2b)[2]] + [self.z_digit_base(r) for r in (1, 2, 3)]
