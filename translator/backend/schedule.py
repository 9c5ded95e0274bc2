"""VLIW scheduling: the allocated ops tree -> the same control tree with each straight-line run of
ops replaced by a ``Block`` of PE steps (what printer.py prints).

``schedule`` list-schedules one run into steps of at most one ALU, MAU, L1BM and L2BM expression
each, honouring the machine's hazards (``target.GAP``, from the executor's: a GRF value is
readable 2 steps after its write, LM, L1BM and L2BM 3 steps) and the unit-group rules (LM0 and
LM1 touched by one op each, no 'imm' with LM0), keeping memory order; a run ends with the nops that let its last writes settle,
so every block is safe whatever runs next.
"""
from __future__ import annotations

import heapq
from dataclasses import dataclass, replace

from .ops import Call, MaskReg, Op, VReg
from .target import GAP, IMM, row

MAX_GAP = max(GAP.values())       # writes further back than this from a block's end have settled


@dataclass(eq=False)
class Block:
    """A straight-line run of ops, scheduled: each step a list of ops (one per unit), [] a nop."""
    steps: list


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
    return walk(tree)

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
    imm = [row(op.text) is IMM for op in ops]
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
