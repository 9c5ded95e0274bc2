"""Allocation, scheduling and assembly text: the control tree of ``ops`` -> a .vsm program.

* **Allocation**: linear scan over live intervals (a loop stretches every
  interval that crosses it or is read in it before it is written) onto GRF0
  and GRF1 (64 four-long-word registers each) and mask entries 1..15.  A
  kernel that needs more says so, with the numbers.
* **Scheduling**: each straight-line run of ops is list-scheduled into VLIW
  steps (one ALU, MAU, L1BM and L2BM expression per step), honouring the
  machine's hazards (a GRF value is readable 2 steps after its write, LM, L1BM
  and L2BM 3 steps) and keeping memory order; a run ends with the nops that
  let its last writes settle, so every block is safe whatever runs next.
"""
from __future__ import annotations

import bisect
import heapq
import re
from collections import deque
from dataclasses import replace

from .ops import Call, IfAnyLane, MaskReg, MV, Op, SeqFault, SeqIf, SeqLoop, SeqSet, VReg, WhileAny, flat_ops

GRF_SLOTS = 64
MASK_ENTRIES = list(range(1, 16))


class AllocError(Exception):
    pass


def _refs(op: Op):
    for r in op.srcs + op.msrc:
        yield r, False
    for r in op.dsts + op.mdst:
        yield r, True


def remove_dead(tree: list, keep=()) -> list:
    """Drop ALU/MAU ops whose results nothing live reads (codegen builds some facets of a value
    speculatively, e.g. both the 64-bit and the 32-bit form of an index, and loop machinery a
    sequencer loop does not need): live are transfers, waits, the masks control nodes test and
    the registers in `keep` (read elsewhere: see versioning.py), and whatever they read,
    transitively."""
    ops, live_regs = [], set(keep)

    def walk(items):
        for it in items:
            if isinstance(it, Op):
                ops.append(it)
                continue
            if isinstance(it, (WhileAny, IfAnyLane)):
                live_regs.add(it.mask)
            for attr in ("body", "then", "orelse"):
                walk(getattr(it, attr, ()))
    walk(tree)
    pure = lambda o: o.unit in ("alu", "mau") and not o.mem and (o.dsts or o.mdst)
    writers = {}
    for o in ops:
        for r in o.dsts + o.mdst:
            writers.setdefault(r, []).append(o)
    live = {o for o in ops if not pure(o)} | {w for r in live_regs for w in writers.get(r, ())}
    work = list(live)
    while work:
        o = work.pop()
        for r in o.srcs + o.msrc:
            for w in writers.get(r, ()):
                if w not in live:
                    live.add(w)
                    work.append(w)

    def prune(items):
        out = []
        for it in items:
            if isinstance(it, Op):
                if it in live:
                    out.append(it)
                continue
            for attr in ("body", "then", "orelse"):
                if hasattr(it, attr):
                    setattr(it, attr, prune(getattr(it, attr)))
            out.append(it)
        return out
    return prune(tree)


def sink_into_branches(tree: list) -> list:
    """Move ALU/MAU ops whose results only a following sequencer branch reads into that branch,
    so waves that skip it skip them too (the bounds checks' offsets, for instance)."""
    readers, writes = {}, {}

    def scan(items):
        for it in items:
            if isinstance(it, Op):
                for r in it.srcs + it.msrc:
                    readers.setdefault(r, []).append(it)
                for r in it.dsts + it.mdst:
                    writes[r] = writes.get(r, 0) + 1
            else:
                for attr in ("body", "then", "orelse"):
                    scan(getattr(it, attr, ()))
                if isinstance(it, (WhileAny, IfAnyLane)):
                    readers.setdefault(it.mask, []).append(it)
    scan(tree)

    def nodes_in(it):
        yield it
        for attr in ("body", "then", "orelse"):
            for x in getattr(it, attr, ()):
                yield from nodes_in(x)

    def visit(items):
        """One pass over a list, last op first: an op whose every reader lies in one later
        SeqIf (without orelse) of the list moves to the front of its then, unless a source it
        reads is written again on the way; a moved op counts as inside for the ops before it."""
        if not items:
            return
        for it in items:
            if not isinstance(it, Op):
                for attr in ("body", "then", "orelse"):
                    visit(getattr(it, attr, ()))
        at, rewritten = {}, {}        # node -> index of the item of `items` holding it; register -> such indices
        for k, it in enumerate(items):
            for x in nodes_in(it):
                at[id(x)] = k
                if isinstance(x, Op):
                    for r in x.dsts + x.mdst:
                        if writes.get(r, 0) > 1:
                            rewritten.setdefault(r, []).append(k)
        sunk = {}
        for i in range(len(items) - 1, -1, -1):
            o = items[i]
            if not isinstance(o, Op):
                continue
            outs = o.dsts + o.mdst
            if o.unit not in ("alu", "mau") or o.mem or o.partial or not outs \
                    or any(writes.get(r) != 1 for r in outs):
                continue
            where = {at.get(id(u)) for r in outs for u in readers.get(r, ())}
            if len(where) != 1:
                continue
            j = where.pop()
            if j is None or j <= i or not (isinstance(items[j], SeqIf) and not items[j].orelse):
                continue
            if any(i < k < j for r in o.srcs + o.msrc for k in rewritten.get(r, ())):
                continue            # a source rewritten on the way: it must read it here
            sunk.setdefault(j, []).append(i)
            at[id(o)] = j
        for j, idx in sunk.items():
            items[j].then[:0] = [items[i] for i in sorted(idx)]
        gone = {i for idx in sunk.values() for i in idx}
        items[:] = [it for k, it in enumerate(items) if k not in gone]
    visit(tree)
    return tree


def coalesce_carried(tree: list) -> list:
    """Drop the copy that ends a loop pass, `carried = new`, by letting the op that computes new
    write the carried register itself.

    Sound when that op is new's only writer and runs in every pass (it is in the body itself, not
    a branch), nothing between it and the copy reads or writes the carried register, and nothing
    outside that stretch reads new: then the carried register holds exactly what new would.
    When something in between still reads the carried register (a loop counter that a bounds
    check's branch reads), a pure op that only the copy reads moves down into the copy's place
    instead, provided nothing in between changes its sources."""
    ops = list(flat_ops(tree))
    at = {id(o): k for k, o in enumerate(ops)}
    writers, readers = {}, {}
    for o in ops:
        for r in o.dsts:
            writers.setdefault(r, []).append(o)
        for r in o.srcs:
            readers.setdefault(r, []).append(o)

    def visit(items):
        for it in items:
            for attr in ("body", "then", "orelse"):
                visit(getattr(it, attr, ()))
        if not any(isinstance(it, Op) and it.carry for it in items):
            return
        for copy in [it for it in items if isinstance(it, Op) and it.carry]:
            (new,), (reg,) = copy.srcs, copy.dsts
            ws = writers.get(new, [])
            d = ws[0] if len(ws) == 1 else None
            if d is None or d.partial or len(d.dsts) != 1 or not any(it is d for it in items):
                continue
            lo, hi = at[id(d)], at[id(copy)]
            if not lo < hi or any(not lo < at[id(o)] <= hi for o in readers.get(new, [])):
                continue
            if any(reg in o.srcs or reg in o.dsts for o in ops[lo + 1:hi]):
                srcs = set(d.srcs) | set(d.msrc)
                if readers.get(new) != [copy] or d.unit not in ("alu", "mau") or d.mem or d.mdst \
                        or any(srcs & set(o.dsts + o.mdst) for o in ops[lo + 1:hi]):
                    continue
                items.remove(d)
                d.dsts = (reg,)
                items[items.index(copy)] = d
                ops[lo], ops[hi] = Op("nop", "nop"), d
                at[id(d)] = hi
                del readers[new]
                writers.setdefault(reg, []).append(d)
                continue
            d.dsts = (reg,)
            writers.setdefault(reg, []).append(d)
            for o in readers.pop(new):
                o.srcs = tuple(reg if r is new else r for r in o.srcs)
                readers.setdefault(reg, []).append(o)
            items.remove(copy)
            ops[hi] = Op("nop", "nop")          # keeps the positions of the others
    visit(tree)
    return tree


def merge_recomputed(tree: list) -> list:
    """Drop an ALU/MAU op that computes again what an earlier op of the same list computed, its
    readers reading the earlier result instead.

    Unoptimised (-O0) IR recomputes constants, argument loads and addresses at every use; each
    copy is one more value live at once (vector_17 at -O0 needed more than the GRFs and LM1 hold).
    An op B repeats op A when both have the same template, unit, sources and memory reads, and
    nothing between them (in the same list, so everything between runs between them) writes a
    source of B or the memory space B reads.  A's and B's results must have one writer each and
    B's be read only after B, so that A's holds B's value wherever B's is read.  Merges cascade:
    an op whose source was renamed may repeat another in turn.  Fixed locations an op names
    ($...) must be in its mem (the PE id reads are not: they are left alone)."""
    flat = list(flat_ops(tree))
    where, writes, reads, mem_writes = {}, {}, {}, {}
    for k, o in enumerate(flat):
        where.setdefault(id(o), []).append(k)
        for r in o.srcs + o.msrc:
            reads.setdefault(r, []).append(k)
        for r in o.dsts + o.mdst:
            writes.setdefault(r, []).append(k)
        for m in o.mem:
            if m[0] == "w":
                mem_writes.setdefault(m[1], []).append(k)

    def pure(o):
        return o.unit in ("alu", "mau") and len(o.dsts) == 1 and not o.mdst and not o.partial \
            and len(where[id(o)]) == 1 and len(writes[o.dsts[0]]) == 1 and o.dsts[0] not in o.srcs \
            and all(m[0] == "r" for m in o.mem) and ("$" not in o.text or o.mem)

    def written_between(a, b, o):
        """Whether an op between positions a and b writes a source of o or the memory it reads
        (anywhere in that space: a Call body's addresses are relative to its offsets)."""
        def any_in(ks):                 # ks ascending
            i = bisect.bisect_right(ks, a)
            return i < len(ks) and ks[i] < b
        return any(any_in(writes.get(r, ())) for r in o.srcs + o.msrc) \
            or any(any_in(mem_writes.get(m[1], ())) for m in o.mem)

    def visit(items):
        seen, keep = {}, []                 # (unit, text, srcs, msrc, mem) -> the op computing it
        for it in items:
            keep.append(it)
            if not isinstance(it, Op):
                for attr in ("body", "then", "orelse"):
                    visit(getattr(it, attr, ()))
                continue
            if not pure(it):
                continue
            key = (it.unit, it.text, it.srcs, it.msrc, it.mem)
            a, b, old = seen.get(key), where[id(it)][0], it.dsts[0]
            if a is None or written_between(where[id(a)][0], b, it) or any(k < b for k in reads.get(old, ())):
                seen[key] = it
                continue
            keep.pop()
            new = a.dsts[0]
            for k in reads.pop(old, ()):
                flat[k].srcs = tuple(new if r is old else r for r in flat[k].srcs)
                reads.setdefault(new, []).append(k)
            del writes[old]
        if len(keep) < len(items):
            items[:] = keep
    visit(tree)
    return tree


SCRATCH = [("s", GRF_SLOTS - 1 - i) for i in range(4)]     # reloads of spilled operands (see fix_spills)
ARG_BLOCK_SLOTS = 16          # LM1 words 0..127 hold the argument block; spill slots start above it
_IMM = re.compile(r"l?immu?\b")     # the 'imm' row (emulator/isa.py): it cannot issue in a step touching LM0


HOISTED_CONSTANTS = 256     # constants kept in registers for the whole kernel; the rest made where read


def rematerialise_constants(tree: list, keep: int = HOISTED_CONSTANTS) -> list:
    """Codegen makes every constant once, in the prologue, so each is live through the whole
    kernel; past `keep` of them (a generated kernel of 1000 `y[i] += x[i] * k;` lines has 1000)
    that alone runs out of registers.  The least-read constants beyond `keep` are made again by
    their `limm` right before each op that reads them, in that op's own list (so the copy is set
    wherever it is read), and their prologue op goes."""
    defs = {o.dsts[0]: o for o in tree if isinstance(o, Op) and o.text.startswith("limm ")
            and len(o.dsts) == 1 and not o.srcs and not o.partial}
    if len(defs) <= keep:
        return tree
    reads, writes = {}, {}
    for o in flat_ops(tree):
        for r in o.srcs:
            reads[r] = reads.get(r, 0) + 1
        for r in o.dsts:
            writes[r] = writes.get(r, 0) + 1
    ranked = sorted((r for r in defs if writes[r] == 1), key=lambda r: reads.get(r, 0))
    again = set(ranked[:max(0, len(defs) - keep)])
    if not again:
        return tree

    def walk(items):
        out = []
        for it in items:
            if isinstance(it, Op):
                if it.dsts and it.dsts[0] in again and it is defs[it.dsts[0]]:
                    continue
                copies = {}
                for r in it.srcs:
                    if r in again and r not in copies:
                        copies[r] = VReg(r.hint)
                        out.append(replace(defs[r], dsts=(copies[r],), line=it.line))
                out.append(replace(it, srcs=tuple(copies.get(r, r) for r in it.srcs)) if copies else it)
                continue
            for attr in ("body", "then", "orelse"):
                kids = getattr(it, attr, None)
                if isinstance(kids, list):
                    kids[:] = walk(kids)
            out.append(it)
        return out
    tree[:] = walk(tree)
    return tree


def allocate(tree: list, lm_words: int = 4096, lm0=(0, 0)) -> dict:
    """VReg/MaskReg -> ('r'|'s', GRF slot), ('n', LM1 slot) or ('m', LM0 slot) for a spilled
    value, or mask entry.

    When the GRFs run out, the live value whose interval ends last lives in LM1 instead (its
    operands read and write LM1 directly: the hazard distance is 3 steps, not 2), and when LM1
    is full too, in LM0's words lm0 = [lo, hi) (what codegen leaves free: see
    translator/backend/__init__.py); four GRF1 slots are then kept back for fix_spills' reloads."""
    iv = live_intervals(tree)
    try:
        return _allocate(iv, lm_words, spill=False)
    except AllocError:
        out = _allocate(iv, lm_words, spill=True, lm0=lm0)
        fix_spills(tree, out)
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


def _allocate(iv: dict, lm_words: int, spill: bool, lm0=(0, 0)) -> dict:
    out = {}
    # free registers and mask entries are taken in the order they were freed (FIFO): the one freed
    # longest ago has its last reader furthest back, so the scheduler's dependencies on locations
    # (a write waits for the previous value's readers) hold a new value back the least
    vfree = deque(x for x in [("r", k) for k in range(GRF_SLOTS)] + [("s", k) for k in range(GRF_SLOTS)]
                  if not (spill and x in SCRATCH))
    lo, hi = -(-lm0[0] // 8), lm0[1] // 8          # LM0 slots (8 words each) the kernel leaves free
    spill_free = {"n": [("n", k) for k in range(lm_words // 8 - 1, ARG_BLOCK_SLOTS - 1, -1)],
                  "m": [("m", k) for k in range(hi - 1, lo - 1, -1)]}
    room = {sp: len(x) for sp, x in spill_free.items()}
    freed_at = {}                        # spill slot -> where its last value's interval ended
    mfree = deque(MASK_ENTRIES)
    # the values live at the current position, in the order they became live (dict order; a value
    # is freed in that order when its interval ends), with heaps to find the ones ending before a
    # position and the GRF value ending last: a scan of all of them per value is quadratic
    active, seq = {}, iter(range(1 << 62))
    ends = []                            # (end, order, value) of the active values
    grf_by_end = []                      # (-end, order, value): the active VRegs in a GRF (stale ones skipped)
    vregs = 0                            # VRegs among the active values
    peak = 0

    def spill_slot(since):
        """A spill slot free from position `since` on, LM1 before LM0: a victim moves there for
        its whole interval, which began before the values that freed the latest slots ended."""
        for sfree in (spill_free["n"], spill_free["m"]):
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
            slot = spill_slot(iv[victim][0])
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
                                 f"has {len(MASK_ENTRIES)}: split it or reduce the conditions live at one time")
            lm0_room = f" and {room['m']} in LM0 (its words {lm0[0]}..{lm0[1] - 1}, which the kernel's own " \
                       f"data leaves free)" if room["m"] else " (LM0 has none left)"
            raise AllocError(f"the kernel needs more than {n - 1} live values at once; the machine has "
                             f"{2 * GRF_SLOTS} 4-long-word registers (GRF0 + GRF1) and room for "
                             f"{room['n']} more in LM1{lm0_room}: split it or reduce the values "
                             f"live at one time")
        out[r] = pool.popleft()
        activate(r)
        peak = max(peak, vregs)
    out["_peak"] = peak
    return out


def fix_spills(tree: list, alloc: dict) -> None:
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
            imm = bool(_IMM.match(it.text))
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
            scratch = iter(SCRATCH)
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


# -- scheduling --------------------------------------------------------------------------------

def render(op: Op, alloc) -> str:
    f = {}
    for i, r in enumerate(op.dsts):
        sp, k = alloc[r]
        f[f"d{i}"] = f"$l{sp}{8 * k}v"
        f[f"d{i}c0"] = f"$l{sp}{8 * k}"        # cycle 0's long word, written by every cycle (packing.py)
        f[f"d{i}w0"] = f"${sp}{8 * k}v2"       # each cycle's upper (lane 0) and lower (lane 1) word
        f[f"d{i}w1"] = f"${sp}{8 * k + 1}v2"
    for i, r in enumerate(op.srcs):
        sp, k = alloc[r]
        f[f"s{i}"] = f"$l{sp}{8 * k}v"
        f[f"u{i}"] = f"$l{sp}{8 * k}"          # cycle 0's long word in every cycle
        for c in range(4):                     # cycle c's long word in every cycle (packing.py)
            f[f"s{i}c{c}"] = f"$l{sp}{8 * k + 2 * c}"
    for i, r in enumerate(op.msrc):
        f[f"k{i}"] = f"$imr{alloc[r]}"
    for i, r in enumerate(op.mdst):
        f[f"K{i}"] = f"$omr{alloc[r]}"
    return op.text.format(**f)


def _overlap(a, b):
    return a[1] == b[1] and a[2] < b[3] and b[2] < a[3]


GAP = {"r": 2, "s": 2, "m": 3, "n": 3, "lb": 3, "lc": 3, "t": 1}


def schedule(ops: list, alloc) -> list:
    """Straight-line ops -> steps (lists of ops); [] entries are nops.

    List scheduling by priority (the longest path to the end), with the candidates of each unit
    in a heap of their own; dependencies that others imply are left out where that cannot change
    the schedule (a wait's on the ops before the previous wait, a memory access's on one an
    overwrite of the same words follows), so a block of n ops takes about n log n, not n^2."""
    n = len(ops)
    deps = [dict() for _ in range(n)]        # j -> minimum distance in steps
    last_w, readers = {}, {}
    mem_w, mem_r = {}, {}                    # space -> [(op index, first, end)] of writes / reads
    fence = None                             # the last wait/nop: everything after it waits for it

    def key(r):                              # dependencies are on allocated locations: reuse orders users
        return ("mask", alloc[r]) if isinstance(r, MaskReg) else alloc[r]
    for i, op in enumerate(ops):
        d = deps[i]
        if op.unit in ("wait", "nop"):
            # the ops before the previous fence are before it: ordering after that fence suffices
            d.update({j: 1 for j in range(fence or 0, i)})
            fence = i
        elif fence is not None:
            d[fence] = 1
        for r in op.srcs + op.msrc:
            if key(r) in last_w:
                j = last_w[key(r)]
                d[j] = max(d.get(j, 0), 1 if isinstance(r, MaskReg) else GAP[alloc[r][0]])
        for r in op.dsts + op.mdst:
            for j in readers.get(key(r), ()):
                if j != i:
                    d[j] = max(d.get(j, 0), 1)
            if key(r) in last_w:
                d[last_w[key(r)]] = max(d.get(last_w[key(r)], 0), 1)
        for kind, sp, lo, hi in op.mem:
            gap = GAP[sp] if kind == "r" else 1
            for j, a, b in mem_w.get(sp, ()):
                if a < hi and lo < b:
                    d[j] = max(d.get(j, 0), gap)
            if kind == "w":
                for j, a, b in mem_r.get(sp, ()):
                    if a < hi and lo < b:
                        d[j] = max(d.get(j, 0), 1)
        for r in op.srcs + op.msrc:
            readers.setdefault(key(r), []).append(i)
        for r in op.dsts + op.mdst:
            last_w[key(r)] = i
            readers[key(r)] = []
        for kind, sp, lo, hi in op.mem:
            if kind == "w":                  # what it covers, later ops reach through it
                for hist in (mem_w, mem_r):
                    if sp in hist:
                        hist[sp] = [e for e in hist[sp] if not (lo <= e[1] and e[2] <= hi)]
            (mem_w if kind == "w" else mem_r).setdefault(sp, []).append((i, lo, hi))
    # priorities: longest path to the end
    prio = [0] * n
    succs = [[] for _ in range(n)]
    for i in range(n):
        for j, g in deps[i].items():
            succs[j].append((i, g))
    for i in range(n - 1, -1, -1):
        prio[i] = max([prio[k] + g for k, g in succs[i]] or [0])
    npred = [len(d) for d in deps]
    earliest = [0] * n
    # what a step may take: one op of each unit, LM0 and LM1 touched by one op each, no imm with LM0
    touches = [frozenset({m[1] for m in op.mem if m[1] in ("m", "n")} |
                         {alloc[r][0] for r in op.srcs + op.dsts if isinstance(r, VReg) and alloc[r][0] in ("m", "n")})
               for op in ops]
    imm = ["imm" in op.text for op in ops]
    fences = ("wait", "nop")
    unit_of = ["fence" if op.unit in fences else op.unit for op in ops]
    waiting = []                             # (earliest, i): ready ops not yet issuable
    heads = {}                               # unit -> heap of (-prio, i) of the issuable ops
    for i in range(n):
        if not npred[i]:
            heapq.heappush(waiting, (0, i))
    steps = []
    remaining = n
    t = 0
    while remaining:
        while waiting and waiting[0][0] <= t:
            i = heapq.heappop(waiting)[1]
            heapq.heappush(heads.setdefault(unit_of[i], []), (-prio[i], i))
        # the candidates in (-prio, i) order, as one list would give them: a unit's later ones
        # are skipped once it has an op, so only each open unit's best one is looked at
        step, lm, taken, passed = [], set(), [], []
        open_units = {u for u, h in heads.items() if h}
        while open_units:
            u = min(open_units, key=lambda u: heads[u][0])
            i = heads[u][0][1]
            if u == "fence":
                if not step:
                    step = [ops[i]]
                    taken.append(heapq.heappop(heads[u])[1])
                break
            heapq.heappop(heads[u])
            tc = touches[i]
            if tc & lm or (imm[i] and "m" in lm) or (tc and "m" in tc and any(imm[k] for k in taken)):
                passed.append((u, i))
                if not heads[u]:
                    open_units.discard(u)
                continue
            step.append(ops[i])
            lm |= tc
            taken.append(i)
            open_units.discard(u)
        for u, i in passed:
            heapq.heappush(heads[u], (-prio[i], i))
        for i in taken:
            remaining -= 1
            for k, g in succs[i]:
                earliest[k] = max(earliest[k], t + g)
                npred[k] -= 1
                if not npred[k]:
                    heapq.heappush(waiting, (earliest[k], k))
        steps.append(step)
        t += 1
    # let the last writes settle before whatever runs next
    pad = 0
    for k, step in enumerate(steps[-3:]):
        dist = min(3, len(steps)) - k        # steps from this one to the end, inclusive
        for op in step:
            for r in op.dsts:
                pad = max(pad, GAP[alloc[r][0]] - dist)
            for m in op.mem:
                if m[0] == "w":
                    pad = max(pad, GAP[m[1]] - dist)
    steps += [[] for _ in range(pad)]
    return steps


def emit_program(tree: list, args: list, alloc) -> tuple:
    """-> (assembly text, number of PE steps per pass of each block) for the whole control tree."""
    out = [".arg " + " ".join(f"%{a}" for a in args)] if args else []
    blocks = []
    names = {}
    counter = [0]

    def block(ops, name=None):
        steps = schedule(ops, alloc)
        name = name or f"b{counter[0]}"
        counter[0] += 1
        lines = [f".block {name}"]
        for st in steps:
            if not st:
                lines.append("    nop")
            elif len(st) == 1 and st[0].unit == "wait":
                lines.append(f"    {st[0].text}")
            else:
                txt = "; ".join(render(o, alloc) for o in st)
                ln = next((o.line for o in st if o.line), 0)
                lines.append(f"    {txt}" + (f"    # line {ln}" if ln else ""))
        lines.append(".endblock")
        blocks.append("\n".join(lines))
        return name

    def walk(items, ind):
        run = []

        def flush():
            if run:
                out.append(f"{ind}.call {block(list(run))}")
                run.clear()
        for it in items:
            if isinstance(it, Op):
                run.append(it)
                continue
            flush()
            if isinstance(it, MV):
                name = f"mv{counter[0]}"
                counter[0] += 1
                blocks.append(f".block {name}\n    {it.text}\n.endblock")
                out.append(f"{ind}.call {name} d={it.d_offset}")
            elif isinstance(it, WhileAny):
                out.append(f"{ind}.while any $imr{alloc[it.mask]}")
                walk(it.body, ind + "    ")
                out.append(f"{ind}.endwhile")
            elif isinstance(it, SeqLoop):
                step = "" if str(it.step) == "1" else f", {it.step}"
                out.append(f"{ind}.loop {it.reg} = {it.start}, {it.stop}{step}")
                walk(it.body, ind + "    ")
                out.append(f"{ind}.endloop")
            elif isinstance(it, IfAnyLane):
                out.append(f"{ind}.if any $imr{alloc[it.mask]}")
                walk(it.then, ind + "    ")
                out.append(f"{ind}.endif")
            elif isinstance(it, SeqIf):
                out.append(f"{ind}.if {it.cond}")
                walk(it.then, ind + "    ")
                if it.orelse:
                    out.append(f"{ind}.else")
                    walk(it.orelse, ind + "    ")
                out.append(f"{ind}.endif")
            elif isinstance(it, SeqSet):
                out.append(f"{ind}.set {it.reg} = {it.expr}")
            elif isinstance(it, SeqFault):
                out.append(f'{ind}.fault "{it.message}"')
            elif isinstance(it, Call):
                key = id(it.body)
                if key not in names:
                    names[key] = block(it.body)
                offs = " ".join(f"{k}={str(v).replace(' ', '')}" for k, v in it.offsets.items())
                out.append(f"{ind}.call {names[key]} {offs}")
        flush()
    walk(tree, "")
    return "\n".join(blocks + out) + "\n"
