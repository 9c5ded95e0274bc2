"""The row store: `out[gid * P + k + s] = v` in a counted loop over k, each work-item writing its
own row of a buffer the kernel only writes there (access class "row", access.py; SHOC scan's
`out[base + k]`).

Without it such a store is a scatter: all of the buffer passes through every PE in every pass of
the loop.  With it, each pass stores the wave's values as one contiguous share, like `p[gid]`,
into a *transposed* copy the runtime keeps for the launch (mncl/emulator_device.py:
row_stores): pass k of wave x goes to stripe row k * waves + x of the copy (each group its own
stripe), so every element crosses DRAM once.  The runtime writes the buffer's values into the
copy before the run (a lane that does not store keeps them: the store merges under its lanes'
mask, and only a wave that is not full reads its share first) and back into the buffer after it,
both host layout copies like the row plan's (docs/isa.md, deviation 16).

Conditions, at compile time: a 1-D launch, a 32-bit element, a buffer parameter with no other
access in the kernel (no load, no other store), P and s uniform, k the counter of a counted loop
the sequencer runs.  At run time the copy's address is -1 (the kernel then scatters) when the
buffer is passed twice, rows overlap (P < passes: a lane that stores nothing would put back, from
its part of the copy, what another lane stored) or the copy does not fit in DRAM.
"""
from __future__ import annotations

import re

from .abi import STORE_TAG, reg, row_store
from .ops import MV
from .seqexpr import seq


WAVE_KNOWN = {"wx", "offx", "gx"}     # sequencer registers the runtime can evaluate for each wave
MAX_SET = 16      # stores in a row store set: each moves two shares a pass, and each its own fallback
                  # scatter pass (more stores than this take the scatter's batches, a pass for 32);
                  # sixteen for a 16 x 16 block put back a row at a time (Rodinia nw)


def known_at_launch(e: str, also=()) -> bool:
    """Whether sequencer expression e reads only the launch's scalar arguments (%p<k>) and the
    registers `also`: the runtime, which places and sizes the copy, can work it out."""
    return all(name in also or re.fullmatch(r"p\d+", name) for name in seq(e).regs())


def strided_form(em, off, ids=("gid0", "gid1")):
    """[a_1 .. a_n, u] (sequencer expressions known at launch, in elements) of a byte-offset
    polynomial off = 4 * (a_1 * ids[0] + .. + a_n * ids[n-1] + u), the a uniform (any of them 0);
    else None."""
    if off is None:
        return None
    terms = {**{d: [] for d in ids}, "": []}
    for m, c in off.items():
        named = [v for v in m if v in terms]
        if len(named) > 1 or any(v.startswith("bool:") for v in m):
            return None
        terms[named[0] if named else ""].append(([v for v in m if v not in terms], c))
    form = [em.row_plan.uniform(t) for t in terms.values()]
    return form if None not in form and all(map(known_at_launch, form)) else None


class RowStore:
    """Row stores through a transposed copy (the module docstring)."""

    def __init__(self, em):
        self.em = em

    def store(self, k, v, p, whole, access, scatter) -> bool:
        """Emit the row store of v (a 32-bit value) to buffer k under lane mask p (`whole`: every
        lane the kernel runs stores; p may still leave out lanes out of bounds, whose elements
        of the copy the runtime does not write back), with scatter() (which emits today's
        scatter) as the fallback; False when the plan does not apply."""
        em = self.em
        m = em.row_plan.row(k, access) if self.sole_store(access) else None
        if m is None:
            return False
        pitch, start, n, trips = m
        if not known_at_launch(trips):
            return False          # (the runtime sizes the copy: passes it can work out at launch)
        self.through_copy(k, v, p, whole, scatter, (pitch, start, trips),
                          f"{reg(row_store(k))}+({n}*%nwx+%wx)*{em.lay.stripe}",     # (an MV's offset: no spaces)
                          "row store: each pass's values stored as the wave's share of a transposed copy, which "
                          "the runtime writes back into the buffer after the launch (a buffer passed twice scatters)")
        return True

    def stamped(self, k, v, p, access, scatter) -> bool:
        """Row stores of a buffer stored more than once (covariance's `symmat[j1*m + j2]` and
        `symmat[j2*m + j1]`), or in a loop whose passes the runtime knows only as a bound (a skewed
        loop's): each store's values, and its lane mask p as "stored" flags, go whole to planes of
        one copy, no merge read (store_set); the runtime writes back, per element, the value of the
        last store in program order (pass, then the store's place in the loop body) that stored
        it.  False when it does not apply (then the caller scatters)."""
        em = self.em
        got = self.store_set(k, access)
        if got is None:
            return False
        q, n, plan = got
        planes = 2 * len(plan["stores"])
        em.uses.setdefault("row_store_sets", {})[k] = plan
        S = em.lay.stripe

        def fast():
            for j, val in ((q, v), (planes // 2 + q, p)):
                at = f"{reg(row_store(k))}+(({n}*{planes}+{j})*%nwx+%wx)*{S}"     # (an MV's offset: no spaces)
                em.memory.store_up(val, lambda lc, at=at: [MV(f"mvd/n{S}i{STORE_TAG} $lc{lc} $d0", at, em.line,
                                                               share=True)])
        self.fallback(k, scatter, fast,
                      "row store set: each pass's values and lane mask stored as the wave's shares of a copy's "
                      "planes, which the runtime writes back into the buffer after the launch, each element from "
                      "the last store that stored it (a buffer passed twice scatters)")
        return True

    def store_set(self, k, access):
        """(this store's place q among its buffer's stores, the pass counter, the plan {"trips",
        "stores": [store_index's answer per store, in program order]: sequencer expressions, in
        elements; "skewed": the loop runs skewed, so lane x of a wave makes its pass k at the
        counter's pass k + x, control.skewed_loop}) when every store to buffer parameter k is a
        32-bit store of store_index's form in one basic block, of the innermost loop, one the
        sequencer counts, or of no loop (one pass: `if (lid == 0) out[get_group_id(0)] = part[0]`,
        `y[i * incy]`), at most MAX_SET of them, and every other access of the buffer a load that
        cannot run after a store (scan's `sums[lid] = a[lid]` after `a[lid] = sums[lid - 1]`: the
        loads read the buffer, which the copy leaves as it was until the launch ends); the passes
        known at launch for each wave (the runtime sizes the copy by the most).  Else None."""
        em = self.em
        ctx = em.loop_stack[-1] if em.loop_stack else None
        if not em.one_d or em.rows is not None or not isinstance(k, int) or access is None \
                or access.kind != "store" or access.inst is None \
                or ctx is not None and (ctx["seq_reg"] is None or not known_at_launch(ctx["trips"], WAVE_KNOWN)):
            return None
        loop = ctx["header"] if ctx else ""
        mine = [a for a in em.accesses.values() if a and a.buffer == access.buffer and a.kind == "store"]
        loads = [a for a in em.accesses.values() if a and a.buffer == access.buffer and a.kind != "store"]
        if len(mine) > MAX_SET or any(a.inst is None or a.elem != 4 or a.loop != loop
                                      or a.inst.block != access.inst.block for a in mine) \
                or any(a.kind != "load" or a.inst is None for a in loads) or loads and self.after(mine, loads):
            return None
        at = {id(i): j for j, i in enumerate(em.bmap[access.inst.block].insts)}
        mine.sort(key=lambda a: at[id(a.inst)])
        rows = [self.store_index(a.form, loop) for a in mine]
        if None in rows:
            return None
        return mine.index(access), ctx["seq_reg"] if ctx else "0", {
            "trips": ctx["trips"] if ctx else "1", "stores": rows, "skewed": loop in em.skewed}

    def store_index(self, form, loop):
        """[pitch, stride, start, group pitch, local pitch] (sequencer expressions known at launch,
        in elements) of an index form gid * pitch + k * stride + start + group * group pitch + lid
        * local pitch, k the pass counter of `loop` (if any), group and lid the work-group and local
        ids in x; one of the pitches not 0; else None."""
        got = strided_form(self.em, form, ("gid0", f"k@{loop}", "grp0", "lid0"))
        if got is None or got[0] == got[2] == got[3] == "(0)":
            return None
        pitch, stride, group, local, start = got
        return [pitch, stride, start, group, local]

    def shifted(self, k, v, p, whole, access, aff, scatter) -> bool:
        """`out[gid + u] = v` (u uniform, known at launch: constants and scalar arguments; MNACC's
        loops from 1, `b[i + 1]`) to a buffer the kernel only loads before it (loads_before; lu's
        `A[k*n + j] = A[k*n + j] / A[k*n + k]`): the wave's share
        of a copy the runtime keeps shifted by u, a row store of one pass and pitch 1 (element w
        of the copy is element w + u of the buffer), instead of a scatter over the wave's span.
        False when it does not apply (then the caller scatters)."""
        em = self.em
        if not em.one_d or em.rows is not None or not self.loads_before(access):
            return False
        u = f"(({aff[1]}) + ({aff[2] or 0})) / 4"
        if aff[1] % 4 or not known_at_launch(u):
            return False          # (the runtime places the copy: a shift it can work out at launch)
        self.through_copy(k, v, p, whole, scatter, ("1", u, "1"), f"{reg(row_store(k))}+%wx*{em.lay.stripe}",
                          "shifted store: the wave's share of a copy shifted by the offset, which the runtime "
                          "writes back into the buffer after the launch (a buffer passed twice scatters)")
        return True

    def loads_before(self, access) -> bool:
        """Whether `access` is its buffer's one store and every other access of the buffer a load
        that cannot run after it (none reachable from the store: `a[i + u] = f(a[i + u], a[u])`):
        those loads read the buffer, which the copy leaves as it was until the launch ends, and a
        work-item never reads back what it stored."""
        em = self.em
        if access is None or access.kind != "store" or access.inst is None:
            return False
        others = [a for a in em.accesses.values() if a and a is not access and a.buffer == access.buffer]
        return all(a.kind == "load" and a.inst is not None for a in others) and not self.after([access], others)

    def after(self, stores, loads) -> bool:
        """Whether one of `loads` can run after one of `stores` (is reachable from it)."""
        em = self.em
        reach, seen, todo = set(), set(), []
        for st in stores:
            block = em.bmap[st.inst.block]
            at = next(k for k, i in enumerate(block.insts) if i is st.inst)
            reach |= {id(i) for i in block.insts[at + 1:]}
            todo += em.succ[block.name]
        while todo:
            b = todo.pop()
            if b not in seen:
                seen.add(b)
                reach |= {id(i) for i in em.bmap[b].insts}
                todo += em.succ[b]
        return any(id(a.inst) in reach for a in loads)

    def sole_store(self, access) -> bool:
        """Whether `access` is a store and its buffer has no other access in the kernel."""
        return access is not None and access.kind == "store" and not any(
            a is not access and a.buffer == access.buffer for a in self.em.accesses.values() if a)

    def through_copy(self, k, v, p, whole, scatter, row, at: str, plan: str):
        """The store of v to buffer k as the wave's share of its copy at `at` (row: the copy's
        (pitch, start, passes) for the runtime), or scatter() where the launch has no copy."""
        em = self.em
        em.uses.setdefault("row_stores", {})[k] = row
        self.fallback(k, scatter, lambda: em.memory.fast_store(k, v, p, full=em.full_when(em.lay.wave_full(), whole),
                                                                at=at), plan)

    def fallback(self, k, scatter, fast, plan: str):
        """fast() (the store to buffer k's copy) where the launch has the copy (its address in
        row_store(k) is not -1), else scatter()."""
        em = self.em
        em.uses["launch"] = True
        em.unless_copy(f"{reg(row_store(k))} >= 0", fast,
                       lambda _: (scatter(), em.scatter.flush_scatters()))     # (its batch ends in this arm)
        em.plans.setdefault((em.line, em.params[k].name, "store"), set()).add(plan)
