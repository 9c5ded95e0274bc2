"""Cleanup passes over the ops tree: each takes the control tree of ``ops`` and gives it back
smaller, with the same meaning (in place where it says so).  The pipeline (``__init__.py``) runs
them where they pay: dead ops go before versioning; sinking and carried-copy coalescing after it;
recomputed ops and surplus constants just before register allocation.

* ``remove_dead``: ALU/MAU ops whose results nothing live reads go.
* ``sink_into_branches``: an op only a later sequencer branch reads moves into that branch.
* ``coalesce_carried``: the copy ending a loop pass (`carried = new`) goes; new's op writes carried.
* ``merge_recomputed``: an op computing again what an earlier op of its list computed goes.
* ``rematerialise_constants``: past 256 constants, the least-read ones are made where read.
* ``fold_table_reads``: an x[k] table read becomes the operand of the ops that use it.
* ``merge_calls``: runs of Calls and Ops become one Call where their offsets allow.
* ``hoist_staging``: a staging branch goes before the reads and ops of its pass it does not touch.
"""
from __future__ import annotations

import bisect
import re
from dataclasses import replace

from .ops import MV, BadOp, Call, IfAnyLane, Op, SeqIf, SeqLoop, SeqSet, VReg, WhileAny, flat_ops


def remove_dead(tree: list, keep=()) -> list:
    """Drop ALU/MAU ops whose results nothing live reads (codegen builds some facets of a value
    speculatively, e.g. both the 64-bit and the 32-bit form of an index, and loop machinery a
    sequencer loop does not need, launch-shape words of the argument block a kernel does not use):
    live are transfers, waits, memory writes, the masks control nodes test and the registers in
    `keep` (read elsewhere: see versioning.py), and whatever they read, transitively.  An op that
    only reads memory into registers nothing live reads is dead too."""
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
    pure = lambda o: o.unit in ("alu", "mau") and all(m[0] == "r" for m in o.mem) and (o.dsts or o.mdst)
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

    # where each node sits: id -> (the list holding it, its index there, the node owning that list)
    place = {}

    twice = set()                     # nodes of a body two Calls share: they run in two places

    def index_places(items, owner):
        for k, it in enumerate(items):
            if id(it) in place:
                twice.add(id(it))
            place[id(it)] = (items, k, owner)
            if not isinstance(it, Op):
                for attr in ("body", "then", "orelse"):
                    index_places(getattr(it, attr, ()), it)
    index_places(tree, None)
    writers = {}
    for o in flat_ops(tree):
        for r in o.dsts + o.mdst:
            if writes.get(r, 0) > 1:
                writers.setdefault(r, []).append(o)

    def index_in(items, x):
        """The index of the item of `items` that holds node x (itself or inside it), or None."""
        while True:
            holder, k, owner = place.get(id(x), (None, None, None))
            if holder is items or holder is None:
                return k
            x = owner

    def arm_of(branch, x):
        """"then" or "orelse": the arm of SeqIf `branch` that holds node x."""
        while True:
            holder, _, owner = place[id(x)]
            if owner is branch:
                return "then" if holder is branch.then else "orelse"
            x = owner

    def visit(items):
        """One pass over a list, last op first: an op whose every reader lies in later SeqIfs of
        the list moves to the front of each arm holding one (a copy per arm: the value is
        computed again where it is read), unless a source it reads is written again on the way
        or it reads what it writes; a moved op counts as inside those arms for the ops before
        it."""
        if not items:
            return
        for it in items:
            if not isinstance(it, Op):
                for attr in ("body", "then", "orelse"):
                    visit(getattr(it, attr, ()))
        moved = {}                    # id of an op sunk in this list -> its (SeqIf index, arm) sites
        sunk = {}                     # (SeqIf index, arm) -> indices of the ops sunk there
        for i in range(len(items) - 1, -1, -1):
            o = items[i]
            if not isinstance(o, Op):
                continue
            outs = o.dsts + o.mdst
            if o.unit not in ("alu", "mau") or o.mem or o.partial or not outs \
                    or any(writes.get(r) != 1 for r in outs) or set(outs) & set(o.srcs + o.msrc):
                continue
            sites = set()
            for u in (u for r in outs for u in readers.get(r, ())):
                if id(u) in moved:
                    sites |= moved[id(u)]
                    continue
                j = index_in(items, u)
                if j is None or j <= i or not isinstance(items[j], SeqIf) or id(u) in twice:
                    break
                sites.add((j, arm_of(items[j], u)))
            else:
                if not sites:
                    continue
                last = max(j for j, _ in sites)
                if any(k is not None and i < k < last for r in o.srcs + o.msrc for w in writers.get(r, ())
                       for k in (index_in(items, w),)):
                    continue            # a source rewritten on the way: it must read it here
                for site in sites:
                    sunk.setdefault(site, []).append(i)
                moved[id(o)] = sites
        for (j, arm), idx in sunk.items():
            getattr(items[j], arm)[:0] = [items[i] if len(moved[id(items[i])]) == 1 else replace(items[i])
                                          for i in sorted(idx)]
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


_SRC_FIELD = re.compile(r"\{([su])(\d+)(c\d)?\}")


def fold_table_reads(tree: list) -> list:
    """Runs of Calls and Ops become one Call (merge_calls), and in a Call's body an LM word read
    into a register at an offset the sequencer adds (`lpassa $lm<a> {d0}`: Memory.uniform_table's
    x[k]; `lpassa $ln<a> {d0}`: a paired row plan's element) becomes the operand of the ops after
    it that read that register, when they are all its readers: the copy, and the block
    boundaries' settling steps, go from every pass of the loop (each reader must take an LM
    operand there and touch no other word of that LM)."""
    readers, writes = {}, {}
    for o in flat_ops(tree):
        for r in o.srcs + o.msrc:
            readers[r] = readers.get(r, 0) + 1
        for r in o.dsts + o.mdst:
            writes[r] = writes.get(r, 0) + 1

    def fold(body):
        k = 0
        while k < len(body):
            read = body[k]
            m = re.fullmatch(r"lpassa (\$l([mn])\d+v?) \{d0\}", read.text)     # (v: packing.py's four passes)
            if m and not read.msrc and len(read.mem) == 1 and writes.get(read.dsts[0]) == 1:
                run = folded(read, m.group(1), m.group(2), body[k + 1:])
                if run is not None:
                    body[k:] = run
                    continue
            k += 1

    def folded(read, operand, sp, run):
        """The run with `read`'s register replaced by its operand, or None."""
        r, (_, _, lo, hi) = read.dsts[0], read.mem[0]
        out, uses = [], 0
        for o in run:
            if uses == readers.get(r, 0):
                out.append(o)
                continue
            if r in o.dsts + o.mdst or (r in o.srcs and any(m[1] == sp for m in o.mem)) \
                    or any(m[0] == "w" and m[1] == sp and m[2] < hi and lo < m[3] for m in o.mem):
                return None          # (a write of the word before its last reader: the copy keeps it)
            if r not in o.srcs:
                out.append(o)
                continue
            k = o.srcs.index(r)
            if r in o.srcs[k + 1:]:
                return None

            def field(m):
                i = int(m.group(2))
                if i != k:
                    return "{%s%d%s}" % (m.group(1), i - (i > k), m.group(3) or "")
                if m.group(3) and operand.endswith("v"):     # cycle c of a read of four: its long word
                    return f"{operand[:4]}{int(operand[4:-1]) + 2 * int(m.group(3)[1:])}"
                return operand
            try:
                out.append(replace(o, text=_SRC_FIELD.sub(field, o.text), srcs=o.srcs[:k] + o.srcs[k + 1:],
                                   mem=o.mem + read.mem))
            except BadOp:
                return None          # this unit takes no LM operand there
            uses += 1
        return out if uses == readers.get(r, 0) else None

    for it in merge_calls(tree, calls=True):
        fold(it.body)
    return tree


def merge_calls(tree: list, calls: bool = False) -> list:
    """Each run of Ops and Calls whose bodies no other Call shares, from the first Op its offsets
    allow before its first Call, becomes one Call (in place),
    where every offset of the merged Call moves exactly the addresses it moved before: two Calls
    merge when the offsets they both have are the same expressions, an Op or a Call's op touches
    no memory the other offsets move (`.call b m=... n=...`: a paired row plan's LM1 element
    and an x[k] table's LM0 word read in one block).  A run ends at anything else.  With `calls`,
    gives every Call it could merge, merged or not, for a pass that works inside them."""
    bodies, out = {}, []

    def count_bodies(items):
        for it in items:
            if isinstance(it, Call):
                bodies[id(it.body)] = bodies.get(id(it.body), 0) + 1
            for attr in ("body", "then", "orelse"):
                count_bodies(getattr(it, attr, ()))
    count_bodies(tree)

    def spaces(ops):
        return {m[1] for o in ops for m in o.mem}

    def joinable(it):
        return isinstance(it, Op) or isinstance(it, Call) and bodies[id(it.body)] == 1 \
            and all(isinstance(o, Op) for o in it.body)

    def visit(items):
        for it in items:
            for attr in ("body", "then", "orelse"):
                if not isinstance(it, Call):
                    visit(getattr(it, attr, ()))
        k = 0
        while k < len(items):
            it = items[k]
            if not (isinstance(it, Call) and joinable(it)):
                k += 1
                continue
            offsets, body, touched = dict(it.offsets), list(it.body), spaces(it.body)
            start = k                  # the Ops before it that its offsets do not move join too
            while start and isinstance(items[start - 1], Op) and not spaces([items[start - 1]]) & offsets.keys():
                start -= 1
            body = items[start:k] + body
            touched |= spaces(items[start:k])
            end = k + 1
            while end < len(items) and joinable(items[end]):
                nxt = items[end]
                own = nxt.offsets if isinstance(nxt, Call) else {}
                ops = nxt.body if isinstance(nxt, Call) else [nxt]
                if any(offsets.get(sp, v) != v for sp, v in own.items()) \
                        or spaces(ops) & (offsets.keys() - own.keys()) or touched & (own.keys() - offsets.keys()):
                    break
                offsets.update(own)
                body += ops
                touched |= spaces(ops)
                end += 1
            if end > k + 1 or start < k:
                it.body[:] = body
                it.offsets.clear()
                it.offsets.update(offsets)
                del items[k + 1:end]
                del items[start:k]
            out.append(it)
            k = start + 1
    visit(tree)
    return out if calls else tree


def hoist_staging(tree: list) -> list:
    """Each staging SeqIf (ops.SeqIf.staging: a row plan's panel, an x[k] table's block) moves up
    past the Ops and Calls before it in its list that share no register, no memory it writes or
    reads, and no sequencer register it sets (in place): a pass's staging branches then come
    first and its reads and arithmetic are one run, which merge_calls makes one block."""
    def touch(items):
        ops = list(flat_ops(items))
        regs = ({r for o in ops for r in o.srcs + o.msrc}, {r for o in ops for r in o.dsts + o.mdst})
        mvs = [("w", "lc", 0, 1 << 62)] if any(isinstance(x, MV) for x in walk(items)) else []
        moved = {sp for x in walk(items) if isinstance(x, Call) for sp in x.offsets}
        return regs, [m for o in ops for m in o.mem] + mvs, moved    # (an MV's L2BM area: any of it)

    def sets(items, out):
        for it in items:
            if isinstance(it, (SeqSet, SeqLoop)):
                out.add(it.reg.name)
            for attr in ("body", "then", "orelse"):
                sets(getattr(it, attr, ()), out)
        return out

    seen = {}

    def independent(branch, it):
        if not (isinstance(it, Op) and it.unit != "wait" or isinstance(it, Call)
                and all(isinstance(o, Op) and o.unit != "wait" for o in it.body)):
            return False
        if id(branch) not in seen:          # (a branch moves past several items: what it touches, once)
            seen[id(branch)] = touch([branch]), sets([branch], set())
        ((r1, w1), m1, moved1), assigned = seen[id(branch)]
        (r2, w2), m2, moved2 = touch([it])
        if w1 & (r2 | w2) or r1 & w2:
            return False
        # an L1BM / L2BM address a Call's offset moves may be any of them (an LM region's reads
        # give the range their offsets reach)
        if any(x[1] == y[1] and "w" in (x[0], y[0]) and (x[1] in {"lb", "lc"} & (moved1 | moved2)
                                                         or x[2] < y[3] and y[2] < x[3])
               for x in m1 for y in m2):
            return False
        used = {name for v in getattr(it, "offsets", {}).values() for name in v.regs()}
        return not assigned & used

    def visit(items):
        for it in items:
            for attr in ("body", "then", "orelse"):
                visit(getattr(it, attr, ()))
        for k in range(len(items)):
            j = k
            while isinstance(items[j], SeqIf) and items[j].staging and j > 0 and independent(items[j], items[j - 1]):
                items[j - 1], items[j] = items[j], items[j - 1]
                j -= 1
    visit(tree)
    return tree


def walk(items):
    """Every node of an ops tree, in program order."""
    for it in items:
        yield it
        for attr in ("body", "then", "orelse"):
            yield from walk(getattr(it, attr, ()))

