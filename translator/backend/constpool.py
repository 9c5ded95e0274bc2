"""The constant pool: constants the prologue's first block makes with the ALU, loaded by its
L1BM unit instead.

Codegen makes every constant once, in the prologue (`limm`, `zero`, and the four ops that write
each lane's cycle number), so a launch's first block is mostly ALU ops, one a step, while its
L1BM unit does nothing but broadcast the argument block.  A kernel launched many times (lu's
two kernels per pivot, a stencil per time step) pays that block every launch.  Here some of those
ops become one `l1bmp` each from a pool the runtime writes to every group's PDM (abi.pool_at:
four long words per constant, one per cycle, so every cycle's long word of the register is the
constant), which an `mvb2` brings to every L2BM with the argument block's tag, so the two units
share the block: as many constants as leave the ALU ops at least as many as the L1BM ones, the
last made first (the first are needed earliest, before the pool has arrived), at most
abi.POOL_ENTRIES.  When PDM, L2BM or L1BM has no room for the pool, the ALU makes them all.
"""
from __future__ import annotations

import re

from .abi import ARGBLK_TAG, POOL_ENTRIES, pool_at
from .emitter import CodegenError
from .ops import MV, Op

ENABLED = True              # tests switch it off to compare against the prologue without the pool
_CONSTANT = re.compile(r"limm 0x([0-9a-f]{16}) \{d0\}|zero \{d0\}")
L2BMB_LONGS = 64            # what one l2bmb moves


def pool_constants(em, tree: list, pdm_longs: int) -> list:
    """The tree with some of the prologue's first block's constants loaded from the pool (the
    module's docstring) on a machine of `pdm_longs` long words of PDM; em.pool gets the pool's
    long words."""
    if not ENABLED:
        return tree
    at = tree.index(em.argblk_mv)
    first = []                  # the first block's ops: after the argument block's wait, up to the next
    for o in tree[at + 2:]:     # MV, call or wait
        if not isinstance(o, Op) or o.unit == "wait":
            break
        first.append(o)
    alu = sum(1 for o in first if o.unit == "alu")
    l1bm = sum(1 for o in first if o.unit == "l1bm")
    cycle = em.cycle_ops
    groups = [(cycle, [c << 32 | c for c in range(4)])] if cycle and all(o in first for o in cycle) else []
    for o in first:             # (the ops that make a register, its four long words)
        m = _CONSTANT.fullmatch(o.text)
        if m and o.unit == "alu" and len(o.dsts) == 1 and not (o.srcs or o.msrc or o.partial) and o not in cycle:
            groups.append(([o], [int(m.group(1) or "0", 16)] * 4))
    chosen = []
    for ops, words in reversed(groups):
        if len(chosen) < POOL_ENTRIES and alu - len(ops) >= l1bm + 1:
            chosen.append((ops, words))
            alu, l1bm = alu - len(ops), l1bm + 1
    if not chosen:
        return tree
    n = -(-4 * len(chosen) // L2BMB_LONGS) * L2BMB_LONGS
    if pool_at(em.lay) + n > pdm_longs:
        return tree
    try:
        lc, lb = em.alloc_lc(n), em.alloc_lb(n)
    except CodegenError:        # no room: the ALU makes them
        return tree
    drop = set()
    for k, (ops, words) in enumerate(chosen):
        a = lb + 4 * k
        tree[tree.index(ops[0])] = Op(f"l1bmp $lb{a} {{d0}}", "l1bm", ops[0].dsts, mem=(("r", "lb", a, a + 4),),
                                      line=ops[0].line)
        drop.update(id(o) for o in ops[1:])
        em.pool += words
    em.pool += [0] * (n - len(em.pool))        # (an MV moves whole units: l2bmb's 64 long words are some)
    tree[:] = [o for o in tree if id(o) not in drop]
    tree.insert(at + 1, MV(f"mvb2/n{n}i{ARGBLK_TAG} $p{pool_at(em.lay)} $lc{lc}", "0"))
    tree[at + 3:at + 3] = [Op(f"l2bmb $lc{lc + j} $lb{lb + j}", "l2bm",
                              mem=(("r", "lc", lc + j, lc + j + L2BMB_LONGS), ("w", "lb", lb + j, lb + j + L2BMB_LONGS)))
                           for j in range(0, n, L2BMB_LONGS)]
    return tree
