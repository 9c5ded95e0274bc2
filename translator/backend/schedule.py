"""VLIW scheduling: the allocated ops tree -> the same control tree with each straight-line run of
ops replaced by a ``Block`` of PE steps (what printer.py prints).

``schedule`` list-schedules one run into steps of at most one ALU, MAU, L1BM and L2BM expression
each, honouring the machine's hazards (``target.GAP``, from the executor's: a GRF value is
readable 2 steps after its write, LM, L1BM and L2BM 3 steps) and the unit-group rules (LM0 and
LM1 touched by one op each, no 'imm' with LM0), keeping memory order; a run ends with the nops that let its last writes settle,
so every block is safe whatever runs next.

A value an ALU or MAU op reads in the step right after the ALU or MAU op that made it is taken
from that unit's forwarding path (``$aluf``, ``$mauf``: the previous step's result, docs/isa.md)
instead of its register, so a chain of dependent ops issues one a step rather than one every
GAP steps (``forwarding``).
"""
from __future__ import annotations

import heapq
import re
from dataclasses import dataclass, replace

from .ops import MV, Call, MaskReg, Op, VReg
from .target import FORWARD, GAP, IMM, WORDS_PER_REGISTER, row

MAX_GAP = max(GAP.values())       # writes further back than this from a block's end have settled


@dataclass(eq=False)
class Block:
    """A straight-line run of ops, scheduled: each step a list of ops (one per unit), [] a nop."""
    steps: list
    open: bool = False      # its last writes may not have settled at its end (trim_pads)


def schedule_tree(tree: list, alloc) -> list:
    """A new control tree: each maximal run of Ops becomes a Block of steps; control nodes are
    copied with their bodies scheduled.  Calls that share a body share its Block (one block in
    the program)."""
    shared = {}

    def walk(items):
        out, run = [], []
        for it in items:
            if isinstance(it, Op):
                run.append(it)
                continue
            if run:
                out.append(Block(schedule(run, alloc)))
                run = []
            if isinstance(it, Call):
                if id(it.body) not in shared:
                    shared[id(it.body)] = [Block(schedule(it.body, alloc))]
                out.append(replace(it, body=shared[id(it.body)]))
                continue
            kids = {attr: walk(getattr(it, attr)) for attr in ("body", "then", "orelse") if hasattr(it, attr)}
            out.append(replace(it, **kids) if kids else it)
        if run:
            out.append(Block(schedule(run, alloc)))
        return out
    out = walk(tree)
    trim_pads(out, alloc)
    return out


def trim_pads(tree: list, alloc) -> None:
    """Drop the nops that end a block where no block of the program reads, early enough to see it
    unsettled, what the block's last steps write (schedule pads every block as if any read could
    follow).  A block may run after any other, so a write late in one block is checked against the
    reads in the first steps of every block: a read in step i of a block that runs next is
    dist + pad + i steps after a write dist steps from the end.  MV statements (between blocks, or
    a task kernel's MV ops) may read any of L2BM; a memory some call offsets counts as read everywhere.  A
    trimmed block is `open`: verify leaves its last writes to this rule."""
    blocks, spaces, mvs = {}, set(), [False]

    def walk(items):
        for it in items:
            if isinstance(it, Block):
                blocks[id(it)] = it
            elif isinstance(it, MV):
                mvs[0] = True
            elif isinstance(it, Call):
                spaces.update(it.offsets)
            for attr in ("body", "then", "orelse"):
                walk(getattr(it, attr, ()))
    walk(tree)
    whole = (0, 1 << 62)

    def touched(op, kind):
        """(space, lo, hi) op reads (kind "r") or writes ("w"); a space calls offset is whole."""
        regs = op.srcs if kind == "r" else op.dsts
        out = [(alloc[r][0], WORDS_PER_REGISTER * alloc[r][1], WORDS_PER_REGISTER * (alloc[r][1] + 1))
               for r in regs if isinstance(r, VReg)] + [(sp, lo, hi) for k, sp, lo, hi in op.mem if k == kind]
        return [(sp, *whole) if sp in spaces else (sp, lo, hi) for sp, lo, hi in out]
    early = [("lc", *whole, 0)] if mvs[0] else []            # (space, lo, hi, step index of the read)
    for b in blocks.values():
        for i, step in enumerate(b.steps[:MAX_GAP - 1]):
            early += [(sp, lo, hi, i) for op in step for sp, lo, hi in touched(op, "r")]
            early += [("lc", *whole, i) for op in step if op.unit == "mv"]    # (a task kernel's MV op)
    for b in blocks.values():
        n = len(b.steps)
        while n and not b.steps[n - 1]:
            n -= 1
        if n == len(b.steps):
            continue
        need = 0
        for dist in range(1, min(MAX_GAP, n) + 1):       # the last non-nop step is 1 from the end
            for op in b.steps[n - dist]:
                for sp, lo, hi in touched(op, "w"):
                    for esp, elo, ehi, i in early:
                        if esp == sp and elo < hi and lo < ehi:
                            need = max(need, GAP.get(sp, 1) - dist - i)
        if n + need < len(b.steps):
            b.steps = b.steps[:n + need]
            b.open = True

def schedule(ops: list, alloc) -> list:
    """Straight-line ops -> steps (lists of ops); [] entries are nops.

    List scheduling by priority (the longest path to the end), with the candidates of each unit
    in a heap of their own; dependencies that others imply are left out where that cannot change
    the schedule (a wait's on the ops before the previous wait, a memory access's on one an
    overwrite of the same words follows), so a block of n ops takes about n log n, not n^2."""
    n = len(ops)
    deps = [dict() for _ in range(n)]        # j -> minimum distance in steps
    path = [forwarding_path(op) for op in ops]   # (forwarding path, fields that read it) per op, or None
    fwd = {}                                 # (consumer, producer) -> the consumer's source indices it may forward
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
        for k, r in enumerate(op.srcs + op.msrc):
            if key(r) in last_w:
                j = last_w[key(r)]
                gap = 1 if isinstance(r, MaskReg) or merge_only(op, k) else GAP[alloc[r][0]]
                if gap == 2 and path[j] and isinstance(r, VReg):     # (a GRF value: any later read finds it)
                    at = forwardable(op, [alloc[x] == alloc[r] for x in op.srcs], path[j][1])
                    if at:
                        fwd[(i, j)] = at
                        gap = 1
                d[j] = max(d.get(j, 0), gap)
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
    imm = [row(op.text) is IMM for op in ops]
    fences = ("wait", "nop")
    unit_of = ["fence" if op.unit in fences else op.unit for op in ops]
    waiting = []                             # (earliest, i): ready ops not yet issuable
    heads = {}                               # unit -> heap of (-prio, i) of the issuable ops
    for i in range(n):
        if not npred[i]:
            heapq.heappush(waiting, (0, i))
    steps = []
    step_of = [0] * n
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
            step_of[i] = t
            remaining -= 1
            for k, g in succs[i]:
                earliest[k] = max(earliest[k], t + g)
                npred[k] -= 1
                if not npred[k]:
                    heapq.heappush(waiting, (earliest[k], k))
        steps.append(step)
        t += 1
    # a value read in the step after its producer's comes from the forwarding path (the edge's
    # distance was 1 for that alone; a read any later finds the GRF word written.  LM values are
    # not forwarded: a read 2 steps after the write would find neither the path nor the word)
    paths = {}                               # consumer -> {source index: path}
    for (i, j), at in fwd.items():
        if step_of[i] == step_of[j] + 1:
            paths.setdefault(i, {}).update(dict.fromkeys(at, path[j][0]))
    for i, via in paths.items():
        step = steps[step_of[i]]
        step[next(x for x, o in enumerate(step) if o is ops[i])] = forwarded(ops[i], via)
    # let the last writes settle before whatever runs next
    pad = 0
    for k, step in enumerate(steps[-MAX_GAP:]):
        dist = min(MAX_GAP, len(steps)) - k  # steps from this one to the end, inclusive
        for op in step:
            for r in op.dsts:
                pad = max(pad, GAP[alloc[r][0]] - dist)
            for m in op.mem:
                if m[0] == "w":
                    pad = max(pad, GAP[m[1]] - dist)
    steps += [[] for _ in range(pad)]
    return steps


_FIELD = re.compile(r"\{([su])(\d+)(c\d)?\}")


def merge_only(op: Op, k: int) -> bool:
    """Whether source k of op is its own destination that a masked write names only to keep the
    lanes it does not write (no field reads it): the machine writes the other lanes in place, so
    the write need only follow the one before it, not wait for it to be readable."""
    return op.partial and k < len(op.srcs) and op.srcs[k] in op.dsts and f"{{s{k}}}" not in op.text \
        and f"{{u{k}}}" not in op.text and f"{{s{k}c" not in op.text


def forwarding_path(op: Op) -> tuple | None:
    """(the path, $aluf or $mauf, that holds op's result in the next step as its register does;
    the source fields that read that register as the path gives it), or None.  op must write one
    destination whole and unmasked: per cycle (``{d0}``; read back as ``{s<k>}``), or cycle 0's
    long word from every cycle of an op whose every operand is one location (``{d0c0}``: the same
    value in every cycle; read back as ``{u<k>}`` or ``{s<k>c0}``)."""
    p = FORWARD.get(op.unit)
    if p is None or len(op.dsts) != 1 or op.partial or "/" in op.text \
            or FORWARD.get(getattr(row(op.text), "group", None)) != p:
        return None
    dsts = re.findall(r"\{d0[^}]*\}", op.text)
    if dsts == ["{d0}"]:
        return p, {"s"}
    if dsts == ["{d0c0}"] and not re.search(r"\{s\d+\}|\$[a-z]+\d*v", op.text):
        return p, {"u", "sc0"}
    return None


def forwardable(op: Op, reads: list, forms: set) -> tuple:
    """The indices k of op's sources with reads[k] (those in the register a producer wrote), when
    op (an ALU or MAU op) reads that register only through fields of `forms`; () otherwise."""
    if op.unit not in FORWARD or FORWARD.get(getattr(row(op.text), "group", None)) is None:
        return ()
    at = tuple(k for k, hit in enumerate(reads) if hit)
    used = [m[1] + (m[3] or "") for m in _FIELD.finditer(op.text) if int(m[2]) in at]
    return at if used and set(used) <= forms else ()


def forwarded(op: Op, via: dict) -> Op:
    """op reading each source k of `via` from forwarding path via[k] instead of its register."""
    keep = [k for k in range(len(op.srcs)) if k not in via]
    new = {old: k for k, old in enumerate(keep)}

    def field(m):
        k = int(m[2])
        return "$" + via[k] if k in via else "{" + f"{m[1]}{new[k]}{m[3] or ''}" + "}"
    return replace(op, text=_FIELD.sub(field, op.text), srcs=tuple(op.srcs[k] for k in keep))
