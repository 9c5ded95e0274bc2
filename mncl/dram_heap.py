"""The emulator device's DRAM allocator: first fit over a free list, neighbours coalesced on free.

Addresses and sizes are long words of each group's DRAM (every buffer takes the
same range in every group), in blocks of ``GRAIN`` long words.  ``free`` may be
called from any thread and from inside the garbage collector (a buffer's
finalizer), even while ``alloc`` runs on the same thread: it only appends to a
pending list, which ``alloc`` folds into the free list under its lock.
When nothing fits, ``alloc`` runs the garbage collector once (buffers caught in
reference cycles) before it gives up.
"""
from __future__ import annotations

import bisect
import gc
import threading

GRAIN = 64          # long words: every block starts and ends on a multiple of this


class DramHeap:
    def __init__(self, start: int, end: int):
        self.start, self.end = start, end
        self._free = [(start, end - start)] if end > start else []    # (address, size), sorted
        self._pending = []            # blocks freed since the last alloc
        self._lock = threading.Lock()
        self.in_use = 0

    def alloc(self, n: int) -> int | None:
        """The address of ``n`` long words (rounded up to GRAIN), or None if no free block is that big."""
        n = -(-max(n, 1) // GRAIN) * GRAIN
        for attempt in range(2):
            with self._lock:
                self._fold_pending()
                for k, (addr, size) in enumerate(self._free):
                    if size >= n:
                        if size == n:
                            del self._free[k]
                        else:
                            self._free[k] = (addr + n, size - n)
                        self.in_use += n
                        return addr
            if attempt == 0:
                gc.collect()          # buffers dropped inside reference cycles free their blocks
        return None

    def free(self, addr: int, n: int):
        """Give back the block ``alloc(n)`` returned at ``addr`` (safe inside a finalizer)."""
        self._pending.append((addr, -(-max(n, 1) // GRAIN) * GRAIN))

    def _fold_pending(self):
        free = self._free
        while self._pending:
            addr, n = self._pending.pop()
            self.in_use -= n
            k = bisect.bisect_left(free, (addr, 0))
            if k < len(free) and addr + n == free[k][0]:         # joins the block after it
                n += free[k][1]
                del free[k]
            if k > 0 and free[k - 1][0] + free[k - 1][1] == addr:  # and the block before it
                addr, n = free[k - 1][0], free[k - 1][1] + n
                k -= 1
                del free[k]
            free.insert(k, (addr, n))

    def largest_free(self) -> int:
        with self._lock:
            self._fold_pending()
            return max((size for _, size in self._free), default=0)
