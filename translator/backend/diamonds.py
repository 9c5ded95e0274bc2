"""Merge the stores both arms of an if/else make to one address into one store after the join.

``if (c) out[i] = a; else out[i] = b;`` reaches the backend as two stores, one
per arm, each through its own copy of the address arithmetic (LLVM's
mergedload-store motion leaves them when the arms compute the address
separately).  On the SIMD machine every arm runs for the whole wave, so two
masked stores are two read-modify-writes of the wave's share of ``out``; one
store of ``c ? a : b`` after the join is one, and it covers every lane, so it
needs no read at all in a full wave (memory.fast_store).

The pass works on irread's ``Func`` before codegen: for a diamond E -> {A, B}
-> J, the last store of A and of B, when nothing after either touches memory,
their addresses are the same expression of the same values, and they store
the same type, become ``phi`` in J and one store at J's top.  The address is
A's copy: codegen computes pure values for every lane of the wave, whatever
the block.  The store keeps A's C line; an out-of-bounds report names both.
"""
from __future__ import annotations

import itertools

from .irread import Arg, Const, Func, Inst

_PURE = {"getelementptr", "sext", "zext", "trunc", "add", "sub", "mul", "shl", "ashr", "lshr", "and", "or",
         "xor", "freeze"}
_MEMORY = {"store", "load", "call", "atomicrmw", "cmpxchg", "fence"}
_names = itertools.count()


def _key(x):
    """Structural identity of an address expression: equal keys mean equal values in every lane."""
    if isinstance(x, Inst) and x.op in _PURE:
        return (x.op, x.type, x.elem, tuple(_key(o) for o in x.ops))
    if isinstance(x, Const):
        return ("const", x.type, x.value)
    if isinstance(x, (Inst, Arg)):
        return ("value", id(x))
    return ("other", repr(x))


def _last_store(block):
    """The block's last store when only pure instructions and its branch follow it."""
    for i in reversed(block.insts[:-1]):
        if i.op == "store":
            return i
        if i.op in _MEMORY:
            return None
    return None


def merge_arm_stores(func: Func) -> int:
    """Rewrite func in place; returns how many store pairs were merged."""
    blocks = {b.name: b for b in func.blocks}
    succ, preds = {}, {b.name: [] for b in func.blocks}
    for b in func.blocks:
        t = b.insts[-1]
        succ[b.name] = [o for o in t.ops if isinstance(o, str)] if t.op == "br" else None
        for s in succ[b.name] or ():
            preds[s].append(b.name)
    merged = 0
    for j in func.blocks:
        arms = preds[j.name]
        if len(arms) != 2 or arms[0] == arms[1]:
            continue
        if any(succ[a] != [j.name] or len(preds[a]) != 1 for a in arms):
            continue
        heads = {preds[a][0] for a in arms}
        if len(heads) != 1 or sorted(succ[heads.pop()] or ()) != sorted(arms):
            continue
        while True:
            a, b = (_last_store(blocks[n]) for n in arms)
            if a is None or b is None or a.ops[0].type != b.ops[0].type or _key(a.ops[1]) != _key(b.ops[1]):
                break
            phi = Inst("phi", f"stored.{next(_names)}", a.ops[0].type, [a.ops[0], b.ops[0]], block=j.name,
                       phi_blocks=list(arms), line=a.line,
                       text=f"phi {a.ops[0].type} (merged store of lines {a.line} and {b.line})")
            store = Inst("store", "", "void", [phi, a.ops[1]], text=a.text, block=j.name, elem=a.elem, line=a.line)
            if a.line != b.line:         # an out-of-bounds report names both (bounds.check_bounds)
                store.oob_line = f"{a.line} or {b.line}"
            blocks[arms[0]].insts.remove(a)
            blocks[arms[1]].insts.remove(b)
            at = next(k for k, i in enumerate(j.insts) if i.op != "phi")
            j.insts[at:at] = [phi, store]
            merged += 1
    return merged
