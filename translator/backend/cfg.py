"""A kernel function's control-flow graph: successors, predecessors, reverse postorder, back
edges and natural loops, shared by instruction selection (codegen.py) and the access analysis
(access.py)."""
from __future__ import annotations

from dataclasses import dataclass

from .irread import Func


def successors(block) -> list:
    """A block's successor labels, the taken (true) one of a conditional branch first (llvmlite
    lists false, true)."""
    t = block.insts[-1]
    if t.op == "br":
        labels = [o for o in t.ops if isinstance(o, str)]
        return labels[::-1] if len(labels) == 2 else labels
    if t.op == "switch":
        return [o for o in t.ops if isinstance(o, str)]
    return []


@dataclass
class CFG:
    succ: dict          # block name -> its successors
    preds: dict         # block name -> its predecessors (in reverse postorder)
    rpo: list           # the reachable blocks in reverse postorder
    back: set           # back edges (latch, header)
    loops: dict         # loop header -> the blocks of its natural loop


def cfg_of(func: Func) -> CFG:
    """The graph of func, by one depth-first search from its entry (iterative: a kernel may have
    thousands of blocks)."""
    succ = {b.name: successors(b) for b in func.blocks}
    order, seen, onstack, back = [], set(), set(), set()
    entry = func.blocks[0].name
    stack = [(entry, iter(succ[entry]))]
    seen.add(entry)
    onstack.add(entry)
    while stack:
        node, it = stack[-1]
        for s in it:
            if s in onstack:
                back.add((node, s))
            elif s not in seen:
                seen.add(s)
                onstack.add(s)
                stack.append((s, iter(succ[s])))
                break
        else:
            stack.pop()
            onstack.discard(node)
            order.append(node)
    rpo = order[::-1]
    preds = {n: [] for n in rpo}
    for n in rpo:
        for s in succ[n]:
            preds[s].append(n)
    loops = {}
    for latch, h in back:
        body, work = {h, latch}, ([latch] if latch != h else [])
        while work:
            n = work.pop()
            for p in preds[n]:
                if p not in body:
                    body.add(p)
                    work.append(p)
        loops.setdefault(h, set()).update(body)
    return CFG(succ, preds, rpo, back, loops)
