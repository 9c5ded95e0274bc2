"""The split copy: 8-byte elements at the global id (`y[i] = a * x[i] + y[i]` over doubles or
longs) moved as whole wave shares (issue 22, access class "unit" of 8-byte elements).

A 1-D build keeps two work-items in each long word of a lane register (layout.py): the odd one
in the upper half, the even one in the lower; a 64-bit value is two registers, the odd
work-items' and the even ones' (values.py).  A wave's doubles are adjacent long words of the
buffer, so a contiguous load would have to give each slot two adjacent long words, which no
transfer does (each PE of an L1B takes every 64th long word: docs/isa.md, transfer layouts):
such loads and stores were gathers and scatters over the wave's span.

With this plan the runtime keeps a *split copy* of the buffer for the launch
(mncl/emulator_device.py, write_split_copy; docs/isa.md, deviation 16): per wave, the even
work-items' elements, then the odd ones', each half laid out like a 32-bit wave's shares (long
word j of group g's share of half h of wave x holds element x W + 2 S g + 2 j + h, for W
work-items a wave and S long words a group's share).  Each half is then one contiguous share at
the same address in every group: a load is two transfers (the even and the odd registers), a
store two read-modify-writes of shares, and every element crosses DRAM once.  The runtime writes
the copy from the buffer before the launch and, where the kernel stores to it, back after.

Conditions: a 1-D build, a buffer parameter every access of which in the kernel is an 8-byte
element at the global id.  The copy's address is -1, and the kernel gathers and scatters as
before, when the buffer is passed twice or the copy does not fit in DRAM.
"""
from __future__ import annotations

from .abi import reg, split_copy
from .memory import dram_clamped
from .ops import SeqIf
from .values import Val

UNIT = {("gid0",): 8}            # the access form (access.py) of p[get_global_id(0)], 8-byte p


class SplitCopy:
    """8-byte loads and stores at the global id through a split copy (the module docstring)."""

    def __init__(self, em):
        self.em = em

    def applies(self, k, access) -> bool:
        em = self.em
        if not em.one_d or em.rows is not None or not isinstance(k, int) or k in em.resident or access is None:
            return False
        return all(a.elem == 8 and a.form == UNIT for a in em.accesses.values() if a and a.buffer == access.buffer)

    def share(self, k, h: int) -> str:
        """The address, in every group's DRAM, of the wave's share of half h (0 even, 1 odd)."""
        return f"{reg(split_copy(k))}+(2*%wx+{h})*{self.em.lay.stripe}"

    def guarded(self, k, fast: list, slow: list, plan: str, key: tuple):
        """fast where the launch has the copy, else slow; the plan for mncl-cc --stats."""
        em = self.em
        em.items.append(SeqIf.fallback((f"{reg(split_copy(k))} >= 0",), slow, fast))
        em.plans.setdefault(key, set()).add(plan + " (a buffer passed twice gathers and scatters)")

    def load(self, k, ptr, ty, p, access) -> Val | None:
        """The 64-bit element of buffer k at the global id, or None where the plan does not apply."""
        em = self.em
        if not self.applies(k, access):
            return None
        em.uses.setdefault("split_copies", {}).setdefault(k, False)
        odd, even = em.new("split"), em.new("split")
        outer, em.items = em.items, []
        hi = em.lay.dram_longs - em.lay.stripe
        for h, dst in ((0, even), (1, odd)):
            # (clamped: a transfer hoisted to the wave's start runs even where the copy is -1)
            em.copy(em.memory.fast_load(k, at=dram_clamped(self.share(k, h), hi))[0], dst)
        fast, em.items = em.items, []
        remarks = dict(em.remarks)
        got = em.memory.gather(k, ptr, ty, p)
        em.remarks = remarks                          # (only a buffer passed twice gathers)
        em.copy(got.regs[0], odd)
        em.copy(got.regs[1], even)
        slow, em.items = em.items, outer
        self.guarded(k, fast, slow, "split copy: the wave's even and odd work-items' elements as two contiguous "
                     "shares", (em.line, em.params[k].name))
        return Val(em.values.kind_of(ty), (odd, even))

    def store(self, k, regs: tuple, p, whole: bool, access, scatter) -> bool:
        """Store the 64-bit value regs (odd, even) to buffer k at the global id under lane mask p
        (`whole`: every lane the kernel runs), with scatter() as the fallback; False where the
        plan does not apply."""
        em = self.em
        if not self.applies(k, access):
            return False
        em.uses.setdefault("split_copies", {})[k] = True
        em.uses["launch"] = True
        outer, em.items = em.items, []
        full = f"(%wx + 1) * {em.lay.wave} <= %gx" if whole else None
        c32 = em.c32(32)
        # each half's long word is one work-item's: the even (lower) or odd (upper) lane's mask, whole
        even = em.alu("lor", em.alu("llsl", p, c32), em.alu("land", p, em.const64(0xFFFFFFFF)))
        odd = em.alu("lor", em.alu("land", p, em.const64(0xFFFFFFFF00000000)), em.alu("ulsr", p, c32))
        em.memory.fast_store(k, regs[1], even, full=full, at=self.share(k, 0))
        em.memory.fast_store(k, regs[0], odd, full=full, at=self.share(k, 1))
        fast, em.items = em.items, []
        remarks = dict(em.remarks)
        scatter()
        em.scatter.flush_scatters()                  # (its batch ends in this arm)
        em.remarks = remarks
        slow, em.items = em.items, outer
        self.guarded(k, fast, slow, "split copy: the even and odd work-items' elements stored as two contiguous "
                     "shares, which the runtime writes back into the buffer after the launch",
                     (em.line, em.params[k].name, "store"))
        return True
