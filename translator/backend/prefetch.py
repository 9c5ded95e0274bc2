"""Wave prefetch: the next wave's first loads move while this wave computes.

codegen hoists the wave's first loads to the top of the wave body (``Memory.staged``): their MVs,
then their waits, then the moves to the PEs.  Those it can prove no wave changes before the next
one reads them (``Memory.prefetch_loads``) are issued one wave early instead: loads of read-only
buffers (a buffer the launch also writes through another argument is never read-only, see
``Memory.is_replicated``), and loads of written buffers when every store of the kernel goes to
the storing wave's own share (``p[gid]``), which no other wave reads.  They go into two sets of
staging areas taken in turn::

    .if 0 < %nwx                         wave 0's loads into set 0
    .loop %wx = 0, %nwx
        .if (%wx & 1) == 0
            the MVs of the wave's other first loads
            .if %wx + 1 < %nwx           wave %wx + 1's loads into set 1 (tag 253)
            the rest of the wave body, its loads waiting on set 0 (their own tags)
        .else
            the same with the sets the other way round
        .endif

Set 0 is the areas and tags codegen gave the loads; set 1 has areas of its own and tag 253.
The wave's own loads are issued before the next wave's, so they come first on the links.
"""
from __future__ import annotations

import re
from dataclasses import replace

from .ops import MV, Op, SeqIf, SeqLoop
from .colplan import retarget
from .packing import moved
from .seqexpr import Num, Paren, Reg, at, binary, compare
from .versioning import KIDS, clone, events, fresh_registers
from .abi import PREFETCH_TAG as TAG, WAVE_COUNTS          # TAG: set 1's loads

WX, NWX = Reg("wx"), Reg(WAVE_COUNTS[0])     # the wave counter and the launch's wave count


def prefetch_waves(tree: list, loads: list, lay, alloc_lc) -> list:
    """tree with the %wx loop's prefetchable loads (codegen's MVs) issued one wave early.

    Left as it is when a load is not at the top of the wave body any more or L2BM has no room."""
    for loop in list(_wx_loops(tree)):
        body = loop.body
        top = []
        for x in body:                     # the hoisted MVs start the body (and the window plan's)
            if not isinstance(x, MV) and not getattr(x, "wave_issue", False):
                break
            top.append(x)
        mvs = [mv for mv in loads if any(mv is x for x in top)]
        rest = [x for x in body if not any(x is mv for mv in mvs)]
        tags = {mv.chain[0] for mv in mvs}
        if not mvs or any(re.search(rf"/n\d+i{t}\b", x.text) for x in _mvs(rest) for t in tags):
            continue                       # (a tag used again in the wave: its waits are not the load's)
        # (a staged load's area is a wave share; a window's (windowplan.py) says its size)
        sizes = {mv.chain[1]: getattr(mv, "area_size", lay.stripe // lay.l2b) for mv in mvs}
        try:                               # one block: all of the wave's areas, or none taken
            at = alloc_lc(sum(sizes.values()))
        except Exception:                  # L2BM is full: the waves stay as they are
            continue
        areas = {}
        for lc, size in sizes.items():
            areas[lc], at = at, at + size
        fresh = fresh_registers(list(events(rest)), list(events(tree, skip=loop)))
        other = clone(rest, fresh, [])
        for size in sorted(set(sizes.values())):
            other = _retarget(other, tags, {lc: a for lc, a in areas.items() if sizes[lc] == size}, size)

        def issue(wave, s):
            return [_moved(mv, areas[mv.chain[1]] if s else mv.chain[1], wave, TAG if s else None) for mv in mvs]
        start = SeqIf(compare(Num(0), "<", NWX), issue(Num(0), 0))
        k = len(top) - len(mvs)            # the wave's own loads go first, then the next wave's
        more, following = compare(binary("+", WX, 1), "<", NWX), binary("+", WX, 1, gap="")
        loop.body = [SeqIf(compare(Paren(binary("&", WX, 1)), "==", 0),
                           rest[:k] + [SeqIf(more, issue(following, 1))] + rest[k:],
                           other[:k] + [SeqIf(more, issue(following, 0))] + other[k:])]
        _insert_before(tree, loop, start)
    return tree


def _moved(x, area: int, wave, tag):
    """moved() for a load's MV, or for each MV of a window's sizing branches (windowplan.py)."""
    if isinstance(x, MV):
        return moved(x, area, at(x.d_offset, WX, wave), tag)
    return replace(x, then=[_moved(y, area, wave, tag) for y in x.then],
                   orelse=[_moved(y, area, wave, tag) for y in x.orelse])


def _mvs(items):
    for it in items:
        if isinstance(it, MV):
            yield it
        for attr in KIDS:
            yield from _mvs(getattr(it, attr, ()))


def _wx_loops(items):
    for it in items:
        if isinstance(it, SeqLoop) and it.reg == WX:
            yield it
        for attr in KIDS:
            yield from _wx_loops(getattr(it, attr, ()))


def _insert_before(items, target, new) -> bool:
    for k, it in enumerate(items):
        if it is target:
            items.insert(k, new)
            return True
        for attr in KIDS:
            if _insert_before(getattr(it, attr, ()), target, new):
                return True
    return False


def _retarget(items, tags, areas, size):
    """The wave body waiting on set 1: the loads' waits on TAG, their l2bmds from set 1's areas."""
    for k, it in enumerate(items):
        if isinstance(it, Op):
            items[k] = retarget(it, {t: TAG for t in tags}, areas, size)
        for attr in KIDS:
            _retarget(getattr(it, attr, ()), tags, areas, size)
    return items
