"""The machine's storage, as numpy arrays shaped by the tree.

PE memories are (long word address, PE) uint64 arrays, PEs in tree order
(group, L2B, L1B, MAB, PE): an operand names the same address on every PE,
so one cycle's access is one contiguous row.  Word-addressed access goes
through a (long word, PE, 2) uint32 view in which word a is
``[a >> 1, :, 1 - (a & 1)]`` (word 0 is the long word's most significant
half).  Values, T and masks are likewise cycle-major: (4 cycles, PE).  DRAM and PDM are paged and allocated on first
touch, so the 16 GiB of the mncore2 preset is never materialised.
"""
from __future__ import annotations

import numpy as np

from .isa import FIXED_MASK_BASE, MASK_ENTRIES, fixed_mask_cycles
from .machine import Machine

U64 = np.uint64
MEM_NAME = {"m": "LM0", "n": "LM1", "r": "GRF0", "s": "GRF1", "lb": "L1BM", "lc": "L2BM", "lbi": "$lbi",
            "d": "DRAM", "p": "PDM"}      # the memories' names, as messages print them


class PagedMemory:
    """A large long-word memory allocated in pages on first write."""

    PAGE = 1 << 16        # long words (512 KiB)

    def __init__(self, n_longs: int):
        self.n = n_longs
        self.pages: dict[int, np.ndarray] = {}

    def _spans(self, a: int, n: int):
        end = a + n
        while a < end:
            p, o = divmod(a, self.PAGE)
            k = min(self.PAGE - o, end - a)
            yield p, o, k
            a += k

    def read(self, a: int, n: int, copy: bool = True) -> np.ndarray:
        """n long words from a; copy=False may give a view of a page, for a caller that copies
        it elsewhere at once (an MV transfer)."""
        p, o = divmod(a, self.PAGE)
        if o + n <= self.PAGE:            # within one page: the usual case
            page = self.pages.get(p)
            if page is None:
                return np.zeros(n, dtype=U64)
            return page[o:o + n].copy() if copy else page[o:o + n]
        out = np.zeros(n, dtype=U64)
        pos = 0
        for p, o, k in self._spans(a, n):
            page = self.pages.get(p)
            if page is not None:
                out[pos:pos + k] = page[o:o + k]
            pos += k
        return out

    def write(self, a: int, data: np.ndarray) -> None:
        data = np.asarray(data, dtype=U64).reshape(-1)
        p, o = divmod(a, self.PAGE)
        if o + data.size <= self.PAGE:    # within one page: the usual case
            page = self.pages.get(p)
            if page is None:
                page = self.pages[p] = np.zeros(self.PAGE, dtype=U64)
            page[o:o + data.size] = data
            return
        pos = 0
        for p, o, k in self._spans(a, data.size):
            page = self.pages.get(p)
            if page is None:
                page = self.pages[p] = np.zeros(self.PAGE, dtype=U64)
            page[o:o + k] = data[pos:pos + k]
            pos += k

    @property
    def resident_bytes(self) -> int:
        return len(self.pages) * self.PAGE * 8


class State:
    def __init__(self, m: Machine):
        P = m.n_pe
        self.mem = {sp: np.zeros(((m.lm_words if sp in "mn" else m.grf_words) // 2, P), dtype=U64)
                    for sp in "mnrs"}
        self.mem32 = {sp: a.view(np.uint32).reshape(a.shape + (2,)) for sp, a in self.mem.items()}
        self.words = {sp: a.shape[0] * 2 for sp, a in self.mem.items()}
        self.t = np.zeros((4, P, 2), dtype=U64)                  # cycle, PE, long word
        self.omr = np.zeros((MASK_ENTRIES, 4, P), dtype=np.uint8)   # entry, cycle, PE: 4-bit nibbles
        self.omr[0] = 0xF
        for k in range(FIXED_MASK_BASE, MASK_ENTRIES):
            self.omr[k] = np.array([0xF if on else 0 for on in fixed_mask_cycles(k)], np.uint8)[:, None]
        self.matrix = np.zeros((m.n_mab, 2, 16, 4), dtype=U64)
        self.l1bm = np.zeros((m.n_l1b, m.l1bm_longs), dtype=U64)
        self.lbi = np.zeros((m.n_l1b, 8 * m.pe_per_l1b), dtype=U64)
        self.l2bm = np.zeros((m.n_l2b, m.l2bm_longs), dtype=U64)
        self.dram = [PagedMemory(m.dram_longs) for _ in range(m.groups)]
        self.pdm = [PagedMemory(m.pdm_longs) for _ in range(m.groups)]
        z = np.zeros((4, P), dtype=U64)
        # the forwarding paths' last values; an L1BM broadcast's may be a view shaped (cycle, L1B, ...)
        # with P elements per cycle (transfers._down), made (cycle, P) when it is read
        self.fwd = {k: (z, z) for k in ("aluf", "mauf", "lbf", "mreadf")}
        # tree coordinates of every PE: group, l2b, l1b, mab, pe
        idx = np.arange(P)
        pe, rest = idx % m.pe_per_mab, idx // m.pe_per_mab
        mab, rest = rest % m.mab_per_l1b, rest // m.mab_per_l1b
        l1b, rest = rest % m.l1b_per_l2b, rest // m.l1b_per_l2b
        l2b, grp = rest % m.l2b_per_group, rest // m.l2b_per_group
        self.coords = np.stack([grp, l2b, l1b, mab, pe], axis=1)
        self.ids = {"peid": mab * m.pe_per_mab + pe, "subpeid": pe, "mabid": mab, "l1bid": l1b,
                    "l2bid": grp * m.l2b_per_group + l2b}

    def nbytes(self) -> int:
        arrays = list(self.mem.values()) + [self.t, self.omr, self.matrix, self.l1bm, self.lbi, self.l2bm]
        return sum(a.nbytes for a in arrays) + sum(d.resident_bytes for d in self.dram + self.pdm)
