"""Register allocation: the ops tree (after the cleanup passes) -> where each value lives.

``allocate`` gives VReg/MaskReg -> location: ('r'|'s', slot) a GRF0/GRF1 register (64 four-long-word
registers each on MN-Core 2; target.Registers has the machine's figures), ('n'|'m', slot) an
LM1/LM0 spill slot, or a mask entry (1..15).  It is a linear
scan over live intervals (``live_intervals``: a loop stretches every interval that crosses it or
is read in it before it is written).  When the GRFs run out, values spill to LM1 and then to the
LM0 words the kernel leaves free, and ``fix_spills`` rewrites the ops the unit-group rule would
refuse (it edits the tree in place).  A kernel that needs more says so, with the numbers
(``AllocError``).
"""
from __future__ import annotations

import bisect
import heapq
import re
from collections import deque
from dataclasses import replace

from .ops import Call, IfAnyLane, MaskReg, MV, Op, SeqIf, SeqLoop, VReg, WhileAny
from .target import IMM, MAX_OPERANDS, MNCORE2, WORDS_PER_REGISTER, Registers, row


class AllocError(Exception):
    pass


def _refs(op: Op):
    for r in op.srcs + op.msrc:
        yield r, False
    for r in op.dsts + op.mdst:
        yield r, True


def _scratch(regs: Registers) -> list:
    """The GRF1 slots kept back for fix_spills' reloads of spilled operands (when values spill):
    one for each source and the destination of the widest instruction."""
    return [("s", regs.grf - 1 - i) for i in range(MAX_OPERANDS)]


def allocate(tree: list, regs: Registers = MNCORE2, lm0=(0, 0)) -> dict:
    """VReg/MaskReg -> ('r'|'s', GRF slot), ('n', LM1 slot) or ('m', LM0 slot) for a spilled
    value, or mask entry.

    `regs`: the machine's registers and the LM1 words the argument block holds (spill slots start
    above them).  When the GRFs run out, the live value whose interval ends last lives in LM1 instead (its
    operands read and write LM1 directly: the hazard distance is 3 steps, not 2), and when LM1
    is full too, in LM0's words lm0 = [lo, hi) (what codegen leaves free: see
    translator/backend/__init__.py); four GRF1 slots are then kept back for fix_spills' reloads.
    A value that an op in a Call with an LM offset reads or writes is never spilled to that LM:
    the offset would move its address too (cleanup.merge_calls puts ops of any kind there)."""
    iv = live_intervals(tree)
    try:
        return _allocate(iv, regs, spill=False)
    except AllocError:
        out = _allocate(iv, regs, spill=True, lm0=lm0, moved=offset_spaces(tree))
        fix_spills(tree, out, _scratch(regs))
        return out


def offset_spaces(tree: list) -> dict:
    """VReg -> the LM spaces ('m', 'n') a Call's offsets move where an op of its body names it."""
    out = {}

    def walk(items, spaces):
        for it in items:
            if isinstance(it, Op):
                if spaces:
                    for r in it.srcs + it.dsts + it.msrc + it.mdst:
                        out[r] = out.get(r, frozenset()) | spaces
                continue
            inner = spaces | (frozenset(it.offsets) & {"m", "n"}) if isinstance(it, Call) else spaces
            for attr in ("body", "then", "orelse"):
                walk(getattr(it, attr, ()), inner)
    walk(tree, frozenset())
    return out


def live_intervals(tree: list) -> dict:
    """VReg/MaskReg -> [first, last] position in the tree's op order where it is live."""
    refs: dict = {}
    loops = []
    pos = [0]

    def walk(items):
        for it in items:
            if isinstance(it, Op):
                for r, is_def in _refs(it):
                    refs.setdefault(r, []).append((pos[0], is_def))
                pos[0] += 1
            elif isinstance(it, MV):
                pos[0] += 1
            elif isinstance(it, WhileAny):
                s = pos[0]
                refs.setdefault(it.mask, []).append((s, False))
                pos[0] += 1
                walk(it.body)
                refs.setdefault(it.mask, []).append((pos[0], False))
                pos[0] += 1
                loops.append((s, pos[0]))
            elif isinstance(it, SeqLoop):
                s = pos[0]
                pos[0] += 1
                walk(it.body)
                pos[0] += 1
                loops.append((s, pos[0]))
            elif isinstance(it, Call):
                s = pos[0]
                walk(it.body)
                loops.append((s, pos[0]))
            elif isinstance(it, SeqIf):         # both arms in turn: conservative for either path
                walk(it.then)
                walk(it.orelse)
            elif isinstance(it, IfAnyLane):
                refs.setdefault(it.mask, []).append((pos[0], False))
                pos[0] += 1
                walk(it.then)
    walk(tree)
    iv = {}
    for r, lst in refs.items():
        iv[r] = [min(p for p, _ in lst), max(p for p, _ in lst)]
    # a value live into a loop, or read in it before it is written, lives through the whole loop;
    # only values referenced inside a loop can change (one spanning it already covers it), so each
    # loop visits its own references (by bisection in the position-sorted list), not every value
    events = sorted(((p, d, r) for r, lst in refs.items() for p, d in lst), key=lambda x: (x[0], x[1]))
    at = [x[0] for x in events]
    firsts = []
    for s, e in sorted(loops):
        first = {}
        for p, d, r in events[bisect.bisect_left(at, s):bisect.bisect_right(at, e)]:
            first.setdefault(r, d)               # whether its first reference inside writes it
        firsts.append((s, e, first))
    changed = True
    while changed:
        changed = False
        for s, e, first in firsts:
            for r, first_inside in first.items():
                a, b = iv[r]
                if a < s or not first_inside:
                    na, nb = min(a, s), max(b, e)
                    if (na, nb) != (a, b):
                        iv[r] = [na, nb]
                        changed = True
    return iv


def _allocate(iv: dict, regs: Registers, spill: bool, lm0=(0, 0), moved=None) -> dict:
    out, moved = {}, moved or {}
    # free registers and mask entries are taken in the order they were freed (FIFO): the one freed
    # longest ago has its last reader furthest back, so the scheduler's dependencies on locations
    # (a write waits for the previous value's readers) hold a new value back the least
    scratch = _scratch(regs)
    vfree = deque(x for x in [("r", k) for k in range(regs.grf)] + [("s", k) for k in range(regs.grf)]
                  if not (spill and x in scratch))
    w = WORDS_PER_REGISTER
    lo, hi = -(-lm0[0] // w), lm0[1] // w          # LM0 slots (8 words each) the kernel leaves free
    spill_free = {"n": [("n", k) for k in range(regs.lm1_top // w - 1, -(-regs.lm1_from // w) - 1, -1)],
                  "m": [("m", k) for k in range(hi - 1, lo - 1, -1)]}
    room = {sp: len(x) for sp, x in spill_free.items()}
    freed_at = {}                        # spill slot -> where its last value's interval ended
    mfree = deque(regs.masks)
    # the values live at the current position, in the order they became live (dict order; a value
    # is freed in that order when its interval ends), with heaps to find the ones ending before a
    # position and the GRF value ending last: a scan of all of them per value is quadratic
    active, seq = {}, iter(range(1 << 62))
    ends = []                            # (end, order, value) of the active values
    grf_by_end = []                      # (-end, order, value): the active VRegs in a GRF (stale ones skipped)
    vregs = 0                            # VRegs among the active values
    peak = 0

    def spill_slot(since, banned=()):
        """A spill slot free from position `since` on, LM1 before LM0, in neither of the spaces
        `banned`: a victim moves there for its whole interval, which began before the values
        that freed the latest slots ended."""
        for sp in ("n", "m"):
            sfree = () if sp in banned else spill_free[sp]
            for k in range(len(sfree) - 1, -1, -1):
                if freed_at.get(sfree[k], -1) < since:
                    return sfree.pop(k)
        return None

    def activate(r):
        nonlocal vregs
        k = active[r] = next(seq)
        heapq.heappush(ends, (iv[r][1], k, r))
        if isinstance(r, VReg):
            vregs += 1
            if out[r][0] not in spill_free:
                heapq.heappush(grf_by_end, (-iv[r][1], k, r))

    def grf_last():
        """The active VReg in a GRF whose interval ends last (the first such in active order)."""
        while grf_by_end:
            _, k, x = grf_by_end[0]
            if active.get(x) == k and out[x][0] not in spill_free:
                return x
            heapq.heappop(grf_by_end)
        return None

    for r in sorted(iv, key=lambda r: (iv[r][0], iv[r][1])):
        a, b = iv[r]
        expired = []
        while ends and ends[0][0] < a:
            expired.append(heapq.heappop(ends)[1:])
        for _, x in sorted(expired, key=lambda e: e[0]):
            del active[x]
            if isinstance(x, VReg):
                vregs -= 1
            if not isinstance(x, MaskReg) and out[x][0] in spill_free:
                freed_at[out[x]] = iv[x][1]
            (mfree if isinstance(x, MaskReg) else spill_free[out[x][0]] if out[x][0] in spill_free
             else vfree).append(out[x])
        pool = mfree if isinstance(r, MaskReg) else vfree
        if not pool and spill and isinstance(r, VReg):
            last = grf_last()
            victim = last if last is not None and iv[last][1] >= b else r
            slot = spill_slot(iv[victim][0], moved.get(victim, ()))
            if slot is None and victim is not r:        # (it cannot leave the GRFs: r goes instead)
                victim = r
                slot = spill_slot(iv[r][0], moved.get(r, ()))
            if slot is not None:
                if victim is not r:       # r takes the victim's register, the victim moves to LM
                    out[r] = out[victim]
                    out[victim] = slot
                else:
                    out[r] = slot
                activate(r)
                continue
            pool = ()
        if not pool:
            n = sum(1 for x in active if isinstance(x, MaskReg) == isinstance(r, MaskReg)) + 1
            if isinstance(r, MaskReg):
                raise AllocError(f"the kernel needs more than {n - 1} live mask entries at once; the machine "
                                 f"has {len(regs.masks)}: split it or reduce the conditions live at one time")
            lm0_room = f" and {room['m']} in LM0 (its words {lm0[0]}..{lm0[1] - 1}, which the kernel's own " \
                       f"data leaves free)" if room["m"] else " (LM0 has none left)"
            raise AllocError(f"the kernel needs more than {n - 1} live values at once; the machine has "
                             f"{2 * regs.grf} 4-long-word registers (GRF0 + GRF1) and room for "
                             f"{room['n']} more in LM1{lm0_room}: split it or reduce the values "
                             f"live at one time")
        out[r] = pool.popleft()
        activate(r)
        peak = max(peak, vregs)
    out["_peak"] = peak
    return out


def fix_spills(tree: list, alloc: dict, scratch_slots: list) -> None:
    """Make every op with spilled operands legal (the unit-group rule): one instruction may read
    LM0 and LM1 at one place each, write one only where it reads it, and no 'imm' may touch LM0.
    Offending spilled sources are reloaded into the scratch GRF slots first; a spilled
    destination that still clashes is written through a scratch slot and stored after."""
    def spilled(r, sp):
        return isinstance(r, VReg) and alloc[r][0] == sp

    def fix(items):
        out = []
        for it in items:
            if not isinstance(it, Op):
                for attr in ("body", "then", "orelse"):
                    if hasattr(it, attr):
                        setattr(it, attr, fix(getattr(it, attr)))
                out.append(it)
                continue
            if not any(spilled(r, "n") or spilled(r, "m") for r in it.srcs + it.dsts):
                out.append(it)            # nothing of it in LM: nothing to fix
                continue
            text_srcs = sorted({int(k) for k in re.findall(r"\{[su](\d+)(?:c\d)?\}", it.text)})
            dst = it.dsts[0] if it.dsts and "{d0" in it.text else None
            imm = row(it.text) is IMM
            reads, via_scratch = set(), False
            for sp in ("n", "m"):
                sp_reads = {it.srcs[k] for k in text_srcs if spilled(it.srcs[k], sp)}
                mem_read = any(m[0] == "r" and m[1] == sp for m in it.mem)
                mem_write = any(m[0] == "w" and m[1] == sp for m in it.mem)
                writes = dst is not None and spilled(dst, sp)
                if sp == "m" and imm:
                    reads |= sp_reads
                    via_scratch |= writes
                elif len(sp_reads) + mem_read > 1 or (writes and (mem_read or sp_reads - {dst})) \
                        or (sp_reads and mem_write):
                    reads |= sp_reads
                    via_scratch |= writes and mem_read
            if not reads and not via_scratch:
                out.append(it)
                continue
            scratch = iter(scratch_slots)
            srcs = list(it.srcs)
            for r in sorted(reads, key=lambda r: alloc[r]):
                t = VReg("reload")
                alloc[t] = next(scratch)
                out.append(Op("lpassa {s0} {d0}", "alu", (t,), (r,), line=it.line))
                srcs = [t if (x is r and k in text_srcs) else x for k, x in enumerate(srcs)]
            dsts = list(it.dsts)
            store = None
            if via_scratch:
                t = VReg("restore")
                alloc[t] = next(scratch)
                if it.partial:            # a masked write keeps the other lanes: start from them
                    out.append(Op("lpassa {s0} {d0}", "alu", (t,), (dst,), line=it.line))
                srcs = [t if x is dst else x for x in srcs]
                dsts[0] = t
                store = Op("lpassa {s0} {d0}", "alu", (dst,), (t,), line=it.line)
            out.append(replace(it, dsts=tuple(dsts), srcs=tuple(srcs)))
            if store:
                out.append(store)
        return out
    tree[:] = fix(tree)
