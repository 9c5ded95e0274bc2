"""Where work-items and buffer bytes live on the machine: the mapping shared by
the backend (which generates code for it) and the runtime (which places
buffers and computes launch values for it).

Work-items.  A *wave* is one pass of the machine: every PE holds 8 work-items
in each 32-bit value, 2 per long word (the upper 32-bit lane holds the odd
work-item, the lower lane the even one) times 4 cycles.  So a 32-bit value is
one operand of 4 long words (`$lr<a>v`) and an fp32 operation on it is one
instruction for 8 work-items per PE; a 64-bit value is two such operands, one
for the odd and one for the even work-items.  Which work-item of the wave a
(PE, cycle, lane) holds is the order in which the distribute chain
DRAM -mvd-> L2BM -l2bmd-> L1BM -l1bmd-> PE delivers consecutive long words
(`item_of_slot`), so a contiguous 32-bit array moves to the PEs with no
reordering at all.

Narrow waves.  A 1-D launch of at most wave / f work-items (f = 2, 4 or 8) runs
in a wave narrowed f times (`narrowed`): a group's share is f times smaller,
so each load and store moves f times less and needs f times fewer l2bmd steps;
the narrowed chain fills the first 4 P / f long words of each L1BM, which
l1bmd hands to cycle 0 (and on) of the first PEs of each L1B.  The other
slots hold no work-item and stay inactive.  Buffers are laid out in the
launch's stripes, so the runtime writes them with the same Layout.

Buffers.  A group's PEs can only be reached from that group's DRAM (except by
broadcast), so a buffer is *striped*: its long words are cut into stripes of
`stripe` long words (one group's share of a wave), and stripe t lives in group
t mod G at the buffer's base address + (t div G) * stripe.  Wave k then finds
its group-g share in group g's DRAM at base + k * stripe, and all groups
stream in parallel.

Replicated buffers.  A buffer a kernel only reads, at p[gid + u] for a uniform
u, is instead written whole into every group's DRAM, group g's copy g stripes
lower (long word L at base - g * stripe + L).  Then one MV address,
base + k * groups * stripe + u / 2, gives each group its own share of wave k
moved by u.  Every allocation leaves room for this (`group_longs`).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .abi import narrowing


@dataclass(frozen=True)
class Layout:
    groups: int
    l2b: int          # L2Bs per group
    l1b: int          # L1Bs per L2B (N)
    pe_l1b: int       # PEs per L1B (P)
    n_pe: int
    lm_words: int = 4096      # 32-bit words of each PE's LM0 (and LM1)
    l1bm_longs: int = 8192
    l2bm_longs: int = 32768
    dram_longs: int = 1 << 24
    narrow: int = 1           # the wave is this many times narrower than the machine (narrowed)

    @classmethod
    def of(cls, machine) -> "Layout":
        return cls(machine.groups, machine.l2b_per_group, machine.l1b_per_l2b, machine.pe_per_l1b, machine.n_pe,
                   machine.lm_words, machine.l1bm_longs, machine.l2bm_longs, machine.dram_longs)

    @property
    def wave(self) -> int:
        """Work-items per wave (32-bit lanes of one 4-long-word operand on every PE, narrowed)."""
        return 8 * self.n_pe // self.narrow

    @property
    def stripe(self) -> int:
        """Long words of one group's share of a wave."""
        return 4 * self.n_pe // self.groups // self.narrow

    @property
    def l2b_items(self) -> int:
        """Work-items of a wave each L2B holds, a contiguous run of them (item_of_slot): the __local
        blocks of a "1d" build live per L2B (abi.local_per_l2b)."""
        return self.wave // (self.groups * self.l2b)

    def share_tiers(self) -> list:
        """[(h, work-items)]: in a narrowed wave, the first h of the G x L2B halves of a wave share
        that a launch of at most that many work-items in the wave moves alone (colplan.narrow_shares)."""
        halves = self.groups * self.l2b
        return [(h, h * (self.wave // halves)) for h in (1, 2, 4) if h < halves] if self.narrow > 1 else []

    def wave_full(self) -> str:
        """Sequencer condition: every slot of the halves of a share the wave moves holds a work-item
        (a full wave, or one whose work-items fill exactly a tier of share_tiers): a store of every
        lane needs no merge read."""
        tiers = "".join(f" or %gx - %wx * {self.wave} == {n}" for _, n in self.share_tiers())
        return f"((%wx + 1) * {self.wave} <= %gx{tiers})"

    @property
    def l2bmd_steps(self) -> int:
        """l2bmd steps that move one L2B's share of a wave (32 long words per L1B per step)."""
        return self.pe_l1b // 8 // self.narrow

    @property
    def l1bm_used(self) -> int:
        """Long words of each L1BM the chain fills: slots l1bmd hands out beyond them are empty."""
        return 32 * self.l2bmd_steps

    def narrowed(self, f: int) -> "Layout":
        return replace(self, narrow=f)

    def for_mode(self, mode: str) -> "Layout":
        """The layout a kernel binary of this mode ("1d-n8...": narrowed 8 times) runs in."""
        f = narrowing(mode)
        if f == 1:
            return self
        if not self.can_narrow(f):
            raise ValueError(f"mode '{mode}': this machine's wave cannot be narrowed {f} times "
                             f"(stripes of {self.stripe} long words, {self.pe_l1b} PEs per L1B)")
        return self.narrowed(f)

    def can_narrow(self, f: int) -> bool:
        """A wave narrowed f times keeps whole l2bmd steps and stripes of at least 512 long words
        (a gather's chunk)."""
        return f == 1 or f in (2, 4, 8) and (self.pe_l1b // 8) % f == 0 and self.stripe // f >= 512 \
            and (self.stripe // f) % self.l2b == 0

    def narrowest(self, items: int) -> int:
        """The largest f (1, 2, 4, 8) whose narrowed wave holds `items` work-items."""
        return next(f for f in (8, 4, 2, 1) if f == 1 or items <= self.wave // f and self.can_narrow(f))

    def item_of_slot(self) -> np.ndarray:
        """(PE, cycle, lane) -> work-item offset within the wave, -1 for an empty slot of a
        narrowed wave; lane 0 is the upper 32 bits."""
        pe = np.arange(self.n_pe)
        x = pe % self.pe_l1b
        i = (pe // self.pe_l1b) % self.l1b
        l2 = pe // (self.pe_l1b * self.l1b)
        c = np.arange(4)
        r = self.pe_l1b * c[None, :] + x[:, None]
        q = 8 * self.l1b * (r >> 3) + 8 * i[:, None] + (r & 7) + l2[:, None] * (4 * self.l1b * self.pe_l1b // self.narrow)
        q = np.where(r < self.l1bm_used, q, -1)
        return np.stack([np.where(q < 0, -1, 2 * q + 1), np.where(q < 0, -1, 2 * q)], axis=-1)

    # -- buffers --------------------------------------------------------------------------
    def rows(self, nbytes: int) -> int:
        """Stripe rows a buffer of nbytes occupies (its size in each group's DRAM, in stripes)."""
        per_row = 8 * self.stripe * self.groups
        return max(1, -(-nbytes // per_row))

    def group_longs(self, nbytes: int) -> int:
        """Long words a buffer takes in each group's DRAM: room for the replicated form and its
        margins (one wave's worth of stripes each side; `pad`)."""
        return self.rows(nbytes) * self.stripe * self.groups + 2 * self.pad

    @property
    def pad(self) -> int:
        return self.stripe * self.groups

    def replicated(self, data: np.ndarray) -> tuple:
        """(offset from the buffer's base for each group, long words) of a replicated buffer's copies."""
        raw = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
        buf = np.zeros(self.rows(raw.size) * self.stripe * self.groups * 8, np.uint8)
        buf[:raw.size] = raw
        return [-g * self.stripe for g in range(self.groups)], buf.view(np.uint64)

    @staticmethod
    def widened(data: np.ndarray, lanes: int = 1) -> np.ndarray:
        """A buffer of 32-bit elements as its widened copy: element e in both halves of long word e
        (Memory.uniform_table reads a block of it as a table), whole blocks of 64 long words; with
        lanes > 1 (abi.table_lanes: vectors of that many components), each block holds its
        vectors' components apart: component c of vector v at c * 64 / lanes + v mod (64 / lanes)."""
        raw = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
        words = np.zeros(-(-raw.size // 256) * 64, np.uint32)
        words.view(np.uint8)[:raw.size] = raw
        if lanes > 1:
            words = words.reshape(-1, 64 // lanes, lanes).transpose(0, 2, 1).reshape(-1)
        return words.astype(np.uint64) * np.uint64(0x100000001)

    def to_stripes(self, data: np.ndarray) -> np.ndarray:
        """Host bytes -> (group, rows * stripe) long words as they lie in each group's DRAM."""
        raw = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
        rows = self.rows(raw.size)
        buf = np.zeros(rows * self.stripe * self.groups * 8, np.uint8)
        buf[:raw.size] = raw
        return buf.view(np.uint64).reshape(rows, self.groups, self.stripe).transpose(1, 0, 2).reshape(self.groups, -1)

    def from_stripes(self, per_group: np.ndarray, nbytes: int) -> np.ndarray:
        """The inverse of to_stripes: (group, rows * stripe) long words -> nbytes host bytes."""
        g = per_group.reshape(self.groups, -1, self.stripe).transpose(1, 0, 2)
        return np.ascontiguousarray(g).reshape(-1).view(np.uint8)[:nbytes]
