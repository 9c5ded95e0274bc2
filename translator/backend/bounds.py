"""Out-of-bounds accesses: the per-lane checks of buffer accesses (skipped in the waves the
sequencer clears whole, a load's shared with its block's others), each lane's latest failing
site, and the report of it after the last wave."""
from __future__ import annotations

import struct

from .abi import LAUNCH, nbytes, reg
from .ops import IfAnyLane, Op, SeqIf, VReg
from .values import EXACT, I32, is_pow2, MAX_BUFFER, rng_add, U32, Val, within


class Bounds:
    """Bounds checks and their report."""

    def __init__(self, em):
        self.em = em

    # out-of-bounds accesses ------------------------------------------------------------------------
    def check_bounds(self, k, ptr: Val, size: int, p: VReg, defer=False, store=False, whole=None) -> VReg:
        """Lanes (of p) whose access of buffer parameter k lies inside it, as a bool; a lane's
        latest access out of bounds is recorded (site, index or byte offset, its high word where it
        may not be 32-bit) for the runtime, which reports it (see report_bounds).

        Where the sequencer can clear the whole wave (wave_in_bounds), the per-lane check runs
        only in the waves it cannot; with defer (a load, which does not use the result) the
        check waits to share one sequencer branch with the block's other checks (flush_checks).
        `whole`: a sequencer condition clearing the wave the caller knows (rowplan.py), when
        wave_in_bounds cannot tell."""
        em = self.em
        key = (k, ptr.gid_affine, size, p) if ptr.gid_affine else None
        if key in em.checked:            # the same access pattern under the same predicate
            if not defer:
                self.flush_checks()
            return em.checked[key]
        whole = whole or self.wave_in_bounds(k, ptr.gid_affine, size)
        if whole:              # the per-lane check runs only in waves the sequencer cannot clear
            ok = em.copy(em.c32(-1))
            outer, em.items = em.items, []
        # a count only the waves the sequencer cannot clear need is made where it is used (as the
        # byte check's nb - size was: the full waves pay nothing); else once, in the prologue
        em.count_here = bool(whole)
        lanes_ok, at, high, site = self.lanes_in_bounds(k, ptr, size)
        em.count_here = False
        if ptr.good is not None:
            lanes_ok = em.b_and(lanes_ok, ptr.good)
        if em.oob is None:
            em.oob = (em.new("oob_code"), em.new("oob_off"))
            em.prologue += [Op("zero {d0}", "alu", (r,)) for r in em.oob]
        code, where = em.oob
        m = em.flags("ior", lanes_ok, em.b_not(p))    # flag where ok | !p is zero: p and out of bounds
        em.oob_sites.append((em.site_line or em.line, k, size, *site, "store" if store else "load"))
        em.masked_copy(em.c32(len(em.oob_sites)), code, m)
        em.masked_copy(at, where, m)
        if high is not None:
            if em.oob_high is None:
                em.oob_high = em.new("oob_high")
                em.prologue.append(Op("zero {d0}", "alu", (em.oob_high,)))
            em.masked_copy(high, em.oob_high, m)
        if whole:
            em.copy(lanes_ok, ok)
            slow, em.items = em.items, outer
            em.pending_checks.append((whole, slow))
        else:
            ok = lanes_ok
        if not defer:
            self.flush_checks()
        if key and not em.loop_stack:
            em.checked[key] = ok
        return ok

    def lanes_in_bounds(self, k, ptr: Val, size: int):
        """(bool: the lanes whose access of size bytes at ptr lies in buffer k, the 32-bit value the
        report records, its high word or None, what the report needs to read it: (the bytes of an
        element the value counts, 0 for a byte offset; a constant offset; "const", or how the value
        reads: "i" signed, "u" unsigned, "w" with the high word)).

        One variable term x * n (Val.idx; p[x] for n-byte elements, c bytes on): compared as an
        element index, x + q <u floor((nb - size - c + n (1 + q)) / n) with q = floor(c / n), so an
        int or uint x times the element size cannot wrap (floor(nb / n) for a part of a vector or
        struct element: that element must be whole in the buffer); exact for every x whose range keeps its
        low 32 bits apart from the count's range plus or minus 2^32 (EXACT), and for the others the
        lanes whose x is not a 32-bit value fail on its 64-bit value.  Otherwise the byte offset,
        which is 32-bit (Val.orng) or has its 64-bit value along (Val.o64)."""
        em = self.em
        c = ptr.coff
        if ptr.off is None:                                   # a constant offset
            at = em.c32(c if 0 <= c < MAX_BUFFER else -1)
            return self.below(at, self.bound_count(k, 1 - size, 1)), at, None, (0, c, "const")
        if ptr.idx is not None:
            x, n, xr = ptr.idx[:3]
            q = c // n                                        # x + q is the element index
            at = em.alu("iadd", x, em.c32(q)) if q else x
            r = rng_add(xr, (q, q))
            # a part of a vector or struct element (Val.whole): the whole element must lie in the
            # buffer, as C asks of the object accessed, and one count serves every part; else the
            # bytes accessed: LLVM writes B[2 * i + 2] of a float array as 8-byte steps of i, and
            # B's last float is in bounds when B ends mid-step
            within_one = ptr.whole and 0 <= c - q * n and c - q * n + size <= n
            ok = self.below(at, self.bound_count(k, 0 if within_one else n * (1 + q) - size - c, n))
            if within(r, EXACT):
                return ok, at, None, (n, 0, "u" if within(r, U32) and not within(r, I32) else "i")
            x64 = em.memory.idx_wide(ptr.idx)
            if q:
                x64 = tuple(em.alu("ladd", y, em.const64(q)) for y in x64)
            return em.b_and(ok, em.memory.fits32(x64)), at, em.memory.high_words(x64), (n, 0, "w")
        at = em.memory.ptr_off(ptr)
        ok = self.below(at, self.bound_count(k, 1 - size, 1))
        o64 = ptr.o64
        if o64 is None and not within(rng_add(I32 if ptr.orng is None else ptr.orng, (c, c)), EXACT):
            o64 = em.split64(ptr.off.regs[0])
        if o64 is None:
            return ok, at, None, (0, 0, "i")
        if c:
            o64 = tuple(em.alu("ladd", y, em.const64(c)) for y in o64)
        return em.b_and(ok, em.memory.fits32(o64)), at, em.memory.high_words(o64), (0, 0, "w")

    def below(self, x: VReg, n: VReg) -> VReg:
        """A bool per lane: x < n, unsigned."""
        em = self.em
        return em.bool_from_mask(em.flags("uimax", x, n), invert=True)

    def bound_count(self, k, add: int, n: int) -> VReg:
        """max(0, floor((nb + add) / n)) for buffer k's size nb (the runtime writes it in the argument
        block): at how many positions an access may start; made once, in the prologue."""
        em = self.em
        if isinstance(k, tuple):            # ("priv", bytes): a private array's size is known
            return em.c32(max(0, (k[1] + add) // n))
        counts = em.counts
        here = em.count_here and is_pow2(n)     # (a division: once)
        if here or (k, add, n) not in counts:
            outer, em.items = em.items, []
            r = em.codegen.param_word(k, f"bytes{k}")
            if add:
                r = em.alu("iadd", r, em.c32(add))
            if is_pow2(n) and n > 1:
                r = em.alu("ilsr", r, em.c32(n.bit_length() - 1))
            if add < 0:                        # (nb >= 0: only a negative add can go below 0)
                r = em.alu("imax", r, em.c32(0), hint=f"count{k}")
            if not is_pow2(n):                # (exact: div_exact)
                bits = lambda v: struct.unpack("<Q", struct.pack("<d", v))[0]
                r = em.ints.div_exact(r, em.const64(bits(1 / n)), em.const64(bits(1 / (2 * n))))
            if here:
                outer += em.items             # (in place: a batch of gathers holds the list)
                em.items = outer
                return r
            counts[(k, add, n)] = r
            em.prologue += em.items
            em.items = outer
        return counts[(k, add, n)]

    def flush_checks(self):
        """Emit the deferred per-lane bounds checks, under one sequencer branch."""
        em = self.em
        if em.pending_checks:
            conds = tuple(c for c, _ in em.pending_checks)
            em.items.append(SeqIf.fallback(conds, [op for _, ops in em.pending_checks for op in ops]))
            em.pending_checks = []

    def wave_in_bounds(self, k, aff, size: int):
        """A sequencer condition that holds when every work-item of the wave accesses buffer k
        inside it, for an access at byte offset coef * gid + const + seq (1-D launches), or None."""
        em = self.em
        if not (em.one_d or em.rows is not None) or aff is None:      # (rows: aff over the flat position)
            return None
        em.uses.setdefault("sizes", set()).add(k)
        lo, hi = self.wave_extent(aff)
        return f"{lo} >= 0 and {hi} + {size} <= {reg(nbytes(k))}"

    def wave_extent(self, aff):
        """Sequencer expressions of the least and the greatest value of coef * gid + const + seq
        over the wave's live work-items (a 1-D launch)."""
        em = self.em
        coef, const, seq = aff
        em.uses["launch"] = True
        gx, offx = (reg(n) for n in LAUNCH)
        first = f"({offx} + %wx * {em.lay.wave})"
        end = f"(%wx + 1) * {em.lay.wave}"
        last = f"({offx} + ({gx} if {gx} < {end} else {end}) - 1)"
        lo, hi = (first, last) if coef >= 0 else (last, first)
        u = f"{const} + ({seq or 0})"
        return f"{coef} * {lo} + {u}", f"{coef} * {hi} + {u}"

    def report_bounds(self):
        """After the last wave: if any lane went out of bounds, its first site and offset go to
        two hidden buffers ("E", "F") the runtime reads after the launch (one any-reduction)."""
        em = self.em
        code, where = em.oob
        any_bad = em.flags("uimax", code, em.c32(1))          # code >= 1
        outer, em.items = em.items, []
        em.memory.fast_store("E", code, em.c32(-1), per_wave=False)
        em.memory.fast_store("F", where, em.c32(-1), per_wave=False)
        if em.oob_high is not None:
            em.memory.fast_store("G", em.oob_high, em.c32(-1), per_wave=False)
        body, em.items = em.items, outer
        em.items.append(IfAnyLane(any_bad, body))
