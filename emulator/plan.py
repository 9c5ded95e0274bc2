"""Step plans: each PE step decoded once per set of block offsets, then run without re-deciding.

The executor's general path (executor.py: ``read``, ``_write``) works out, for every operand of
every step it runs, what kind of operand it is, where it reads or writes after the block's
offset, which write mask applies and how to store under it.  None of that changes from one run of a
step to the next while the block's PE-memory offsets are the same, so a ``StepPlan`` does it once:

* a *reader* per source operand: a plain PE-memory operand whose cycles step evenly becomes the
  memory views it reads (and its footprint for the hazard checks), a fixed value its constant;
* a *writer* per destination operand: an unmasked plain PE-memory destination becomes a store of
  the result into its rows;
* per expression, whether it is cycle-uniform, writes a mask entry, feeds a forwarding path.

Anything else (T-indirect or per-PE addresses, word operands, flag-entry masks, tree memories,
transfers) keeps its general handling, called from the plan: the plan changes how often the
executor decides, never what a step computes or which observer hooks it calls, in which order.
While an LM base-address register is set, that memory's operands are left to the general path.
A bound plan also runs the commonest expressions through kernels, and lets some write their
destination rows directly at the commit (see "fused kernels" below).

Plans are kept with the step (``Step.plans``), per emulator and per PE-memory offsets; a plan
holds no reference to the emulator (it is passed in), only views of its memories, as the operand
cache of executor._access does.
"""
from __future__ import annotations

import operator

import numpy as np

from . import isa, native, semantics, transfers
from .numbers import normalize_in_place
from .semantics import flags_nibble, raw_lanes, sign_flags
from .transfers import run_length

PE_MEMS = ("m", "n", "r", "s")
MASK_LETTER = {"m": "m", "n": "n", "r": "r", "s": "s", "t": "t", "omr": "k", "mb": "m", "nb": "n"}


def plain(op) -> bool:
    """A PE-memory operand whose addresses are the same on every PE (no T, no j<madpe>)."""
    return op.space in PE_MEMS and not op.tind and op.madpe is None


def _view_reader(sp, words, text, views, via=None):
    """A bound plain operand: its views, and the memory read it reports (none for a forwarding read
    that names its producer's destination, asm.alias_forwarding)."""
    if via is not None:
        read = lambda emu: views
        read.views, read.hook, read.space = views, None, sp
        return read

    def read(emu):
        for hook in emu.hooks.memory_read:
            hook(emu, sp, words, text)
        return views
    read.views, read.hook, read.space = views, (sp, words, text), sp
    return read


def _const_reader(value):
    read = lambda emu: value
    read.views, read.hook, read.rows, read.space = value, None, None, None
    return read


def _store(dst, v):
    """dst (cycle, P) = v, which may be a broadcast view shaped (cycle, L1B, ...) (transfers._down)."""
    if v.ndim == 2:
        dst[...] = v
    else:
        dst.reshape(v.shape)[...] = v


def _rows(r0, r1):
    return set(range(*r0.indices(1 << 40))) | (set(range(*r1.indices(1 << 40))) if r1 is not None else set())


def _memory_writer(sp, words, text, mem, r0, r1):
    """An unmasked store of a result into PE-memory rows r0 (and r1, the second long word of ll).
    Forwarding values that view those rows (executor._settle) are copied first."""
    d0 = mem[r0]
    rows = _rows(r0, r1)
    lo, hi = min(rows), max(rows) + 1
    if r1 is None:
        def write(emu, e, v0, v1, flags, st):
            for hook in emu.hooks.memory_written:
                hook(emu, sp, words, text, None)
            if emu._fwd_live:
                emu._settle(sp, lo, hi)
            _store(d0, v0)
    else:
        d1 = mem[r1]

        def write(emu, e, v0, v1, flags, st):
            for hook in emu.hooks.memory_written:
                hook(emu, sp, words, text, None)
            if emu._fwd_live:
                emu._settle(sp, lo, hi)
            _store(d0, v0)
            _store(d1, v1 if v1 is not None else emu._zeros)
    write.plain_store = True
    write.space, write.rows, write.span, write.d0, write.single = sp, rows, (lo, hi), d0, r1 is None
    write.d1 = mem[r1] if r1 is not None else None
    write.hook = (sp, words, text)
    return write


def _general_writer(op):
    write = lambda emu, e, v0, v1, flags, st: emu._write(op, e, v0, v1, flags, st)
    write.space = op.space
    write.views_ok = op.space in PE_MEMS and op.width != "w"     # executor._write takes broadcasts
    return write


class StepPlan:
    """What one step does, decided: ``exprs`` (expression, its semantics or kernel, cycle-uniform?,
    may its result stay a broadcast view?),
    ``readers`` {id(source operand): reader(emu) -> (v0, v1)} for the operands bound here (the
    others are read by the general path), ``writers`` {id(expression): [writer per destination]},
    ``fwd`` {id(expression): forwarding path}, ``flag_dsts`` (ids of expressions writing a
    mask entry) and ``dd`` {id(expression): (destination view, space, lo, hi)} for the direct
    stores (below)."""

    __slots__ = ("exprs", "readers", "writers", "fwd", "flag_dsts", "dd", "key")

    def __init__(self, st, cycle_uniform):
        """The step's plan that binds nothing: what does not depend on the block's offsets."""
        # the bound plans' key: the executor's (token, m, n, r, s offsets, LM base registers set)
        # less the offsets of the PE memories no operand of the step names
        used = {op.space for e in st.exprs for op in e.srcs + e.dsts}
        self.key = operator.itemgetter(0, *(1 + i for i, sp in enumerate(PE_MEMS) if sp in used), 5, 6)
        self.flag_dsts = frozenset(id(e) for e in st.exprs if any(o.space == "omr" for o in e.dsts))
        self.exprs = [(e, e.defn.sem, cycle_uniform(e), e.zflush is None and
                       all(op.space == "nowrite" or (op.space in PE_MEMS and op.width != "w") for op in e.dsts))
                      for e in st.exprs]
        self.fwd = {}
        if not (st.nop or st.noforward):
            for e in st.exprs:
                g = e.defn.group
                if g == isa.L1BM and any(o.space == "lbi" for o in e.srcs):
                    g = isa.L1BM_TURN
                name = isa.FORWARD_PATH.get(g)
                if name:
                    self.fwd[id(e)] = name
        self.readers = {}
        self.writers = {id(e): [_general_writer(op) for op in e.dsts if op.space != "nowrite"] for e in st.exprs}
        self.dd = {}

    def bound(self, emu, st) -> "StepPlan":
        """This plan with the operands bound at the emulator's current block offsets."""
        plan = object.__new__(StepPlan)
        plan.flag_dsts, plan.fwd, plan.key = self.flag_dsts, self.fwd, self.key
        plan.readers = {}
        for e, _, one, _ in self.exprs:
            for op in e.srcs:
                rd = self._reader(emu, op, e, one)
                if rd is not None:
                    plan.readers[id(op)] = rd
        plan.writers = {id(e): [self._writer(emu, op, e, st) for op in e.dsts if op.space != "nowrite"]
                        for e in st.exprs}
        # expressions whose results only plain stores and PE-memory writes take may stay broadcast views
        plan.exprs = [(e, sem, one, e.zflush is None and all(getattr(w, "plain_store", False) or w.views_ok
                                                             for w in plan.writers[id(e)]))
                      for e, sem, one, _ in self.exprs]
        plan.dd = {}
        exprs = []
        for e, sem, one, ok in plan.exprs:
            k = _kernel(emu, st, plan, e, one)
            if k is not None and getattr(k, "dd", None) is not None:
                plan.writers[id(e)] = [k.dd[0]]
                plan.dd[id(e)] = k.dd[1:]
            exprs.append((e, k or sem, one, ok))
        plan.exprs = exprs
        return plan

    @staticmethod
    def _reader(emu, op, e, one):
        if plain(op) and emu.bar.get(op.space) is None:
            _, words, r0, r1, views = emu._access(op)
            if views is None:
                return None
            if one:                    # a cycle-uniform expression works on cycle 0 (isa.cycle_uniform)
                views = views[0][:1], (views[1][:1] if views[1] is not None else None)
            rd = _view_reader(op.space, words, op.text, views, op.via)
            rd.rows = (_rows(r0, r1) if isinstance(r0, slice)                      # the rows it views
                       else {r0.start} | ({r1.start} if r1 is not None else set()))
            return rd
        if op.space == "fixed":
            v = emu._fixed(op.fixed, e.prec or "l")
            return _const_reader((v[0][:1], v[1][:1]) if one else v)
        return None

    @staticmethod
    def _writer(emu, op, e, st):
        entry = op.mask if op.mask is not None else st.masks.get(MASK_LETTER.get(op.space, ""), 0)
        if plain(op) and op.width != "w" and emu.bar.get(op.space) is None:
            _, words, r0, r1, views = emu._access(op)
            if views is not None and not entry and not isinstance(r0, slice):    # every cycle one long word
                return _same_writer(op.space, words, op.text, emu.state.mem[op.space], r0, r1)
            if views is not None and isinstance(r0, slice):     # rows as a slice
                if not entry:                                   # a plain store
                    return _memory_writer(op.space, words, op.text, emu.state.mem[op.space], r0, r1)
                kind = _BROADCASTS.get(e.defn.sem)
                if kind is not None and e.srcs[0].space == "lb" and entry < isa.FIXED_MASK_BASE and \
                        (e.srcs[0].width == "ll") == (r1 is not None):
                    return _few_broadcast_writer(emu, op, e, kind, entry, words, r0, r1)
        return _general_writer(op)


def _same_writer(sp, words, text, mem, r0, r1):
    """An unmasked store whose four cycles name one long word (executor._Same rows): the cycles land
    in order, so the last cycle's value is what stays (executor._write, without its loop)."""
    rows = [(r0.start, 0)] + ([(r1.start, 1)] if r1 is not None else [])

    def write(emu, e, v0, v1, flags, st):
        for hook in emu.hooks.memory_written:
            hook(emu, sp, words, text, None)
        if emu._fwd_live:
            emu._settle(sp, 0, 1 << 62)
        for row, j in rows:
            v = (v1 if v1 is not None else emu._zeros) if j else v0
            mem[row] = v.reshape(v.shape[0], -1)[3]
    write.space, write.views_ok = sp, True
    write.same_row, write.single, write.hook = True, r1 is None, (sp, words, text)
    write.rows = {r for r, _ in rows}
    write.d0 = mem[r0.start:r0.start + 1]
    return write


_BROADCASTS = {transfers.l1bmp: "p", transfers.l1bmm: "m", transfers.l1bmm4: "m4"}


def _few_broadcast_writer(emu, op, e, kind, entry, words, r0, r1):
    """The store of an L1BM broadcast (l1bmp, l1bmm, l1bmm4) into PE-memory rows under a flag
    entry.  When the entry keeps few PEs (one per L1B: a row handed out PE by PE), the kept long
    words are taken from L1BM by their positions there (worked out once per mask) and stored: two
    indexed copies instead of gathering them from the broadcast views.  L1BM changes only after
    the writes, so it holds what the step read.  Any other mask, a wrapped L1BM run: executor._write."""
    src, sp, text = e.srcs[0], op.space, op.text
    m = emu.m
    k = 2 if src.width == "ll" else 1
    nl, n = m.n_l1b, transfers.run_length(kind, k, m.mab_per_l1b)
    size = emu._sizes["lb"]
    # the run index (l1b * n + column) each (part, cycle, PE) of the broadcast reads, as transfers._down
    run_at = transfers._spread(np.arange(nl * n, dtype=np.int64).reshape(nl, n), kind, k, nl, m.mab_per_l1b)
    l1bm_at = [(r // n) * size + r % n for r in (x.reshape(4, m.n_pe) for x in run_at)]   # L1BM flat index less a
    mem, l1bm = emu.state.mem[sp], emu.state.l1bm.reshape(-1)
    flat, P = mem.reshape(-1), mem.shape[1]
    from .executor import LUT_L, LUT_LL0, LUT_LL1, U64
    parts = [(r0, LUT_L if r1 is None else LUT_LL0, 0)] + ([(r1, LUT_LL1, 1)] if r1 is not None else [])
    memo = {}
    # both parts' stores as one gather and one scatter (_fused_few), shared by the steps that store
    # this kind of broadcast under this entry with these row strides
    d = r0.step
    fkey = (entry, kind, k, d, P)
    at_s, lc = [None, None, None], P * r0.start

    def write(emu, e, v0, v1, flags, st):
        a = src.base + emu.off.get("lb", 0)
        if a < 0 or a + n > size:          # wrapped (or a fault the read has raised)
            return emu._write(op, e, v0, v1, flags, st)
        nib = emu.state.omr[entry]
        for hook in emu.hooks.memory_written:
            hook(emu, sp, words, text, None)
        if emu._fwd_live:
            emu._settle(sp, 0, 1 << 62)
        one = _fused_few(emu, fkey, nib, parts, l1bm_at)
        if one is not None:
            src_at, dst_at, bits = one
            if at_s[0] is not one or at_s[1] != a:          # (a is the block's L1BM offset: it seldom moves)
                at_s[0], at_s[1], at_s[2] = one, a, (src_at + a, dst_at + lc)
            s_at, d_at = at_s[2]
            new = l1bm.take(s_at)
            if bits is not None:
                old = flat.take(d_at)
                new = old ^ ((old ^ new) & bits)
            flat[d_at] = new
            return
        for rows, lut, j in parts:
            v = v1 if j else v0
            keep = emu._keep(nib, entry, lut, U64)
            if keep is False:
                continue
            key = (entry, id(lut), U64)
            few = emu._few(key, keep) if keep is not True else None
            if few is None:
                emu._store(mem, (rows,), v if v is not None else emu._zeros, nib, entry, lut, U64)
                continue
            at, pos, full, _ = few
            got = memo.get(j)
            if got is None or got[0] is not few:
                got = memo[j] = (few, l1bm_at[j].reshape(-1)[pos], (rows.start + rows.step * at[0]) * P + at[1])
            new = l1bm[got[1] + a]
            if not full:
                old = flat[got[2]]
                new = old ^ ((old ^ new) & keep.reshape(-1)[pos])
            flat[got[2]] = new
    write.space, write.views_ok = sp, True
    return write


def _fused_few(emu, fkey, nib, parts, l1bm_at):
    """The stores of _few_broadcast_writer's parts as one: (L1BM flat indices less the run's address,
    memory flat indices less P * the first row, the kept bits or None when every bit is kept), or
    None (a part's mask is not few: the parts one by one).  Worked out once per set of masks and
    kept on the emulator for every step that stores the same kind of broadcast under the same entry
    with the same row stride (one table fill hands out 64 rows under one mask), and checked again
    only when a step has written a mask entry since (_keep's stamp)."""
    from .executor import U64
    stamp = (emu._runs, emu._omr_writes)
    hit = emu._fused_few.get(fkey)
    if hit is not None and hit[0] == stamp:
        return hit[2]
    entry, _, k, d, P = fkey
    fews = []
    for rows, lut, j in parts:
        keep = emu._keep(nib, entry, lut, U64)
        if keep is False:
            fews.append(None)
            continue
        few = emu._few((entry, id(lut), U64), keep) if keep is not True else None
        if few is None:
            emu._fused_few[fkey] = (stamp, (), None)
            return None
        fews.append((few, keep))
    if hit is not None and len(hit[1]) == len(fews) and all(
            (x is None and y is None) or (x is not None and y is not None and x[0] is y[0]) for x, y in zip(hit[1], fews)):
        emu._fused_few[fkey] = (stamp, hit[1], hit[2])
        return hit[2]
    got = []
    for (rows, lut, j), fk in zip(parts, fews):
        if fk is None:
            continue
        (at, pos, full, _), keep = fk
        # part j stores into rows (first row + j) + d * cycle: its flat positions less P * first row
        got.append((l1bm_at[j].reshape(-1)[pos], (j + d * at[0]) * P + at[1], None if full else keep.reshape(-1)[pos]))
    if not got:
        one = np.zeros(0, np.int64), np.zeros(0, np.int64), None
    else:
        # the parts' positions differ unless a part's rows step by 1 (ll at rows r, r+1, ...): there
        # they land in order, one by one
        if len(got) > 1 and d == 1:
            emu._fused_few[fkey] = (stamp, (), None)
            return None
        bits = None
        if any(g[2] is not None for g in got):
            bits = np.concatenate([g[2] if g[2] is not None else np.full(g[0].size, ~U64(0), U64) for g in got])
        one = np.concatenate([g[0] for g in got]), np.concatenate([g[1] for g in got]), bits
    emu._fused_few[fkey] = (stamp, tuple(fews), one)
    return one


# -- fused kernels -------------------------------------------------------------------------------
# A bound plan runs the commonest expressions through a kernel made for them at bind time: their
# operands' lane views are worked out once (a bound reader always returns the same views), the read
# hooks are called as the readers call them, in the same order, and the arithmetic is the
# semantics function's, numpy call for numpy call, without its per-call decisions.  Anything a
# kernel does not cover (masks, modifiers, cycle-uniform or ll results, unbound operands) keeps the
# semantics function.
#
# Direct stores: when an expression's one destination is a plain store, nothing else of the step
# writes those rows or the rows its last pass reads, and no flag entry is written, the kernel's last
# numpy pass (the fp32 rounding, the fp32 product or sum, the long-word add, the L1BM transpose or
# broadcast) runs at the commit, where the store was, writing the destination rows themselves: one
# pass and one 128 KiB array fewer per expression on mncore2.  The step's forwarding value is then
# a view of those rows, which the executor copies before anything writes them (executor._settle)
# and at the end of a run.

def _bound_readers(readers, ops):
    rs = [readers.get(id(op)) for op in ops]
    return None if any(r is None for r in rs) else rs


def _read_hooks(rs):
    """What the readers rs tell the memory_read hooks, in order (a constant tells nothing)."""
    return tuple(r.hook for r in rs if r.hook is not None)


def _call_read_hooks(emu, reads):
    hooks = emu.hooks.memory_read
    if hooks:
        for sp, words, text in reads:
            for hook in hooks:
                hook(emu, sp, words, text)


def _emit(e, direct):
    """How a kernel hands its result to the commit: straight onto the step's pending writes when
    write_all would change nothing (no second long word to copy, not cycle-uniform, no flag entry
    written, no zero-flush), else through write_all."""
    if direct:
        return lambda emu, v0, v1, flags: emu.pending.append((e, v0, v1, flags))
    return lambda emu, v0, v1, flags: emu.write_all(e, v0, v1, flags)


def _direct_dest(st, plan, e, one, src_spans=(), ll=False):
    """e's destination writer when the kernel may finish into its rows at the commit: e's only
    write, an unmasked single-long-word plain store, no flag entry, not cycle-uniform; no other
    write of the step on those rows, and no write of the step on the rows src_spans ((space, rows)
    the last pass reads then).  A long-word pair (ll) only where the kernel writes both (ll=True).
    Else None."""
    ws = plan.writers[id(e)]
    if one or id(e) in plan.flag_dsts or e.zflush is not None or len(ws) != 1:
        return None
    w = ws[0]
    if not getattr(w, "plain_store", False) or not (w.single or ll):
        return None
    for f in st.exprs:
        for x in plan.writers[id(f)]:
            if x is not w and x.space == w.space and (not getattr(x, "plain_store", False) or x.rows & w.rows):
                return None
            for sp, rows in src_spans:
                if x.space == sp and (not getattr(x, "plain_store", False) or x.rows & rows):
                    return None
    return w


def _direct_writer(w, finish):
    """The commit of a direct store: the hooks and the forwarding values as _memory_writer, then
    finish() computes into the rows (or, when the kernel had to make its result, the store)."""
    sp, words, text = w.hook
    lo, hi = w.span
    d0 = w.d0

    def write(emu, e, v0, v1, flags, st):
        for hook in emu.hooks.memory_written:
            hook(emu, sp, words, text, None)
        if emu._fwd_live:
            emu._settle(sp, lo, hi)
        if v0 is d0:
            finish()
        else:
            _store(d0, v0)
            if d1 is not None:
                _store(d1, v1 if v1 is not None else emu._zeros)
    write.plain_store = True
    d1 = w.d1
    write.space, write.rows, write.span, write.d0, write.d1, write.single = sp, w.rows, w.span, d0, d1, w.single
    write.hook = w.hook
    return write


def every_cycle(v: np.ndarray) -> np.ndarray:
    """np.broadcast_to(v, (4,) + v.shape[1:]) for a cycle-uniform result v (1, ...): a read-only
    view, built by the ndarray constructor when v is contiguous (a tenth of broadcast_to's cost)."""
    if not v.flags.c_contiguous:
        return np.broadcast_to(v, (4,) + v.shape[1:])
    out = np.ndarray((4,) + v.shape[1:], v.dtype, v, 0, (0,) + v.strides[1:])
    out.flags.writeable = False
    return out


def _same_dest(st, plan, e):
    """For a cycle-uniform expression, its one writer when that stores one long word every cycle
    names (_same_writer: what stays is the result, cycle 0's being every cycle's), unmasked, with no
    flag entry or zero-flush, and no other write of the step may land on that memory's row; else
    None."""
    ws = plan.writers[id(e)]
    if id(e) in plan.flag_dsts or e.zflush is not None or len(ws) != 1:
        return None
    w = ws[0]
    if not getattr(w, "same_row", False) or not w.single:
        return None
    for f in st.exprs:
        for x in plan.writers[id(f)]:
            if x is not w and x.space == w.space and (getattr(x, "rows", None) is None or x.rows & w.rows):
                return None
    return w


def _same_row_kernel(w, reads, into, buf, a):
    """A cycle-uniform fp32 result computed by into(emu, buf) at the step (its operands as the step
    reads them) and copied at the commit into the one long word its store names; the forwarding path
    then views that row (every cycle), as a direct store's does (executor._settle copies it before
    the row changes)."""
    sp, words, text = w.hook
    (row,) = w.rows
    d0 = w.d0
    df = d0.view(np.float32).reshape(buf.shape)
    every = every_cycle(d0)

    def kernel(e, emu):
        _call_read_hooks(emu, reads)
        into(emu, buf, a)
        emu.pending.append((e, every, None, None))

    def write(emu, e, v0, v1, flags, st):
        for hook in emu.hooks.memory_written:
            hook(emu, sp, words, text, None)
        if emu._fwd_live:
            emu._settle(sp, row, row + 1)
        np.copyto(df, buf)
    write.space, write.rows = sp, w.rows
    kernel.dd = (write, every, sp, row, row + 1)
    return kernel


def _operand_dest(st, plan, e, one, rs, in_place=False):
    """_direct_dest for a kernel whose last pass, at the commit, reads the operands rs: only when
    every operand read from memory is bound to rows whose writes the check can see.  in_place: the
    pass is element-wise (a numpy ufunc), so an operand that views exactly the destination rows
    (an accumulator, iadd $lr352v $lr48v $lr352v) may be read as it is written."""
    if not all(r.rows is not None for r in rs if r.space is not None):
        return None
    ws = plan.writers[id(e)]
    d0 = ws[0].d0 if in_place and len(ws) == 1 and getattr(ws[0], "plain_store", False) else None
    return _direct_dest(st, plan, e, one, [(r.space, r.rows) for r in rs if r.space is not None
                                           and not (d0 is not None and _same_view(r.views[0], d0))])


def _same_view(a, b) -> bool:
    """a and b view the same elements of one memory in the same order."""
    return (a.shape == b.shape and a.strides == b.strides and a.dtype == b.dtype
            and a.__array_interface__["data"][0] == b.__array_interface__["data"][0])


def _finishing_kernel(dest, reads, finish, compute=None):
    """A kernel whose result finish() writes into dest's rows at the commit: at the step it tells
    the read hooks, runs compute(emu) (the part of the work that must see the operands now) and
    leaves the rows as the step's pending write."""
    d0 = dest.d0

    def kernel(e, emu):
        _call_read_hooks(emu, reads)
        if compute is not None:
            compute(emu)
        emu.pending.append((e, d0, None, None))
    kernel.dd = (_direct_writer(dest, finish), d0, dest.space, *dest.span)
    return kernel


def _fp32_into(kind, numpy_into, x, y, z=None, neg_x=False, neg_z=False):
    """into(emu, out, a=None): out (fp32 lanes of the operands' shape) = the operation's normalised
    result, by native.py's compiled loop, or by numpy_into(emu, out) when there is no loop, the
    operands do not fit it or it made a NaN (whose sign is numpy's to choose: the operands are
    unchanged until the commit, so numpy redoes it).  a: the loop's arguments for out, worked out
    at bind time (into.args) when out is a fixed array; else out should be a new C-ordered array,
    whose address goes into the operands' arguments kept for it."""
    fn = native.kernel(kind)
    some = native.args(x, x, y, z, neg_x, neg_z) if fn is not None else None
    if some is None:
        return lambda emu, out, a=None: numpy_into(emu, out)
    words, shape = some.words, x.shape

    def into(emu, out, a=None):
        if a is None:
            if out.shape != shape or not out.flags.c_contiguous:     # (the loop trusts its arguments)
                return numpy_into(emu, out)
            a = some
            words[0] = out.__array_interface__["data"][0]
            words[1] = out.strides[0] if out.shape[0] > 1 else 0
        if fn(a.address):
            numpy_into(emu, out)
    into.args = lambda out: native.args(out, x, y, z, neg_x, neg_z)
    return into


def _vfma_f32(e, rs, emit, st, plan, one, emu):
    """fvfma: the float64 sum of the exact product rounded to fp32, as semantics.vfma does it
    (numpy_into), in one compiled loop where it can (_fp32_into)."""
    if any(r.views[0].strides[-1] != 8 for r in rs):
        return None
    xf, yf, zf = (r.views[0].view(np.float32).reshape(r.views[0].shape + (2,)) for r in rs)
    if not xf.shape == yf.shape == zf.shape:
        return None
    nx, ny, nz = (op.neg for op in e.srcs)
    shape = xf.shape

    def numpy_into(emu, out):
        r = emu.scratch(shape, np.float64, "fma")
        t = emu.scratch(shape, np.float64, 1)
        with np.errstate(invalid="ignore", over="ignore"):
            np.copyto(r, xf)
            if nx:
                np.negative(r, out=r)
            np.copyto(t, yf)
            if ny:
                np.negative(t, out=t)
            np.multiply(r, t, out=r)
            np.copyto(t, zf)
            if nz:
                np.negative(t, out=t)
            np.add(r, t, out=r)
            np.copyto(out, r, casting="unsafe")
        normalize_in_place(out.view(np.uint32), 32, emu.scratch(shape, np.uint32, "norm"))

    into = _fp32_into("fma", numpy_into, xf, yf, zf, nx != ny, nz)
    return _fp32_kernel(e, emit, st, plan, one, emu, rs, into, shape)


def _vbin_f32(e, rs, emit, st, plan, one, emu):
    """fvmul / fvadd: native fp32 arithmetic as semantics.vmul / vadd do it (vmul's + 0 turns -0
    into +0), normalised (numpy_into), in one compiled loop where it can (_fp32_into)."""
    if any(r.views[0].strides[-1] != 8 for r in rs):
        return None
    xf, yf = (r.views[0].view(np.float32).reshape(r.views[0].shape + (2,)) for r in rs)
    if xf.shape != yf.shape:
        return None
    mul = e.defn.sem is semantics.vmul
    shape = xf.shape
    zero = np.float32(0)

    def numpy_into(emu, out):
        with np.errstate(invalid="ignore", over="ignore"):
            if mul:
                np.multiply(xf, yf, out=out)
                np.add(out, zero, out=out)
            else:
                np.add(xf, yf, out=out, dtype=np.float32)
        normalize_in_place(out.view(np.uint32), 32, emu.scratch(shape, np.uint32, "norm"))

    into = _fp32_into("mul" if mul else "add", numpy_into, xf, yf)
    return _fp32_kernel(e, emit, st, plan, one, emu, rs, into, shape)


def _fp32_kernel(e, emit, st, plan, one, emu, rs, into, shape):
    """The kernel of an fp32 expression computed by into(emu, out[, args]) (_fp32_into): with a
    direct store whose operand rows the step does not write, into the destination rows at the
    commit; with one whose operand rows it does (an accumulator, fvadd $ls0v $lr8v $ls0v), now
    into a buffer copied there at the commit; else into a new array, for the general writer."""
    x1 = rs[0].views[1]
    lead = shape[:-1]
    reads = _read_hooks(rs)
    fixed = getattr(into, "args", lambda out: None)
    same = _same_dest(st, plan, e) if one and x1 is None else None
    if same is not None and same.d0.shape == lead:
        buf = emu.scratch(shape, np.float32, "mau")      # one MAU expression per step
        return _same_row_kernel(same, reads, into, buf, fixed(buf))
    dest = _operand_dest(st, plan, e, one, rs) if x1 is None else None
    if dest is not None and dest.d0.shape == lead:
        df = dest.d0.view(np.float32).reshape(shape)
        a = fixed(df)
        return _finishing_kernel(dest, reads, lambda: into(emu, df, a))
    dest = _direct_dest(st, plan, e, one) if x1 is None else None
    if dest is not None and dest.d0.shape == lead:
        df = dest.d0.view(np.float32).reshape(shape)
        buf = emu.scratch(shape, np.float32, "mau")      # one MAU expression per step
        a = fixed(buf)
        return _finishing_kernel(dest, reads, lambda: np.copyto(df, buf), lambda emu: into(emu, buf, a))

    def kernel(e, emu):
        _call_read_hooks(emu, reads)
        o = np.empty(shape, np.float32)
        into(emu, o)
        out0 = o.view(np.uint64).reshape(lead)
        emit(emu, out0, x1, lambda: flags_nibble(sign_flags(raw_lanes(out0, 32), 32)[..., ::-1]))
    return kernel


# element-wise ALU rows a direct store finishes at the commit: their ufunc, and whether it works on
# the precision's lanes (wrapping integer arithmetic) or on whole long words (bitwise, copies)
_FINISHED = {semantics.add: (np.add, True), semantics.sub: (np.subtract, True),
             semantics.and_: (np.bitwise_and, False), semantics.or_: (np.bitwise_or, False),
             semantics.xor: (np.bitwise_xor, False), semantics.not_: (np.invert, False),
             semantics.passa: (np.positive, False)}
_LANE = {"l": np.uint64, "i": np.uint32, "s": np.uint16}


def _alu(e, rs, emit, st, plan, one):
    """An ALU row (semantics.alu_op): its lane function on the bound operands' values; the
    element-wise rows of _FINISHED with a direct store compute into the destination rows at the
    commit."""
    fn = e.defn.sem.lanes
    prec = e.prec or "l"
    x0, x1 = rs[0].views if rs else (None, None)
    y0 = rs[1].views[0] if len(rs) > 1 else None
    reads = _read_hooks(rs)
    op, by_lane = _FINISHED.get(e.defn.sem, (None, False))
    lane = _LANE.get(prec) if by_lane else np.uint64
    if op is not None and lane is not None and x1 is None and op.nin == len(rs):
        dest = _operand_dest(st, plan, e, one, rs, in_place=True)
        ins = [r.views[0] for r in rs]
        if dest is not None and all(v.shape == dest.d0.shape and v.strides[-1] == 8 for v in ins + [dest.d0]):
            ins, d = [v.view(lane) for v in ins], dest.d0.view(lane)    # wrapping lanes: lanes_le's bits
            return _finishing_kernel(dest, reads, lambda: op(*ins, out=d))

    if e.defn.sem in (semantics.lsl, semantics.lsr) and prec in _LANE and x1 is None:
        dest = _operand_dest(st, plan, e, one, rs)        # (the counts land in the rows first)
        if dest is not None and all(v.shape == dest.d0.shape and v.strides[-1] == 8 for v in (x0, y0, dest.d0)):
            return _finishing_kernel(dest, reads, _shift(e, prec, x0, y0, dest.d0))

    def kernel(e, emu):
        _call_read_hooks(emu, reads)
        out0, out1, flags = fn(e, prec, x0, x1, y0, emu)
        emu.write_all(e, out0, out1, flags)
    return kernel


def _shift(e, prec, x0, y0, d0):
    """finish() of lsl / lsr into the rows d0, as semantics.lsl / lsr: the counts (y mod the lane
    width) into the rows, then x shifted by them (arithmetically for a signed lsr)."""
    lane = _LANE[prec]
    count = lane(8 * np.dtype(lane).itemsize - 1)
    signed = e.defn.sem is semantics.lsr and not e.unsigned
    x, y, d = x0.view(lane), y0.view(lane), d0.view(lane)
    if signed:
        x, ds = x.view(np.dtype(lane).str.replace("u", "i")), d.view(np.dtype(lane).str.replace("u", "i"))
    op = np.left_shift if e.defn.sem is semantics.lsl else np.right_shift

    def finish():
        np.bitwise_and(y, count, out=d)
        if signed:
            np.right_shift(x, ds, out=ds)
        else:
            op(x, d, out=d)
    return finish


def _gather(e, rs, emu, st, plan):
    """l1bmd from a PE memory into L1BM: the PE long words land in L1BM at the step's end straight
    from the memory's views (one copy instead of three), which is right when no write of this
    step lands on the rows they view."""
    src, dst = e.srcs[0], e.dsts[0]
    if dst.space != "lb" or rs[0].rows is None:
        return None
    rows = rs[0].rows
    for other in st.exprs:
        for w in plan.writers[id(other)]:
            if w.space == src.space and not (getattr(w, "plain_store", False) and rows.isdisjoint(w.rows)):
                return None
    m = emu.m
    k = 2 if dst.width == "ll" else 1
    nl, mabs = m.n_l1b, m.mab_per_l1b
    v0, v1 = rs[0].views
    if v0.shape != (4, m.n_pe):
        return None
    parts = [v0] if k == 1 else [v0, v1 if v1 is not None else emu._zeros]
    parts = [p.reshape(4, nl, 4 * mabs).transpose(1, 0, 2) for p in parts]      # l1b, c, i
    n = 16 * k * mabs
    nbytes = 4 * m.n_pe * k * 8
    reads = _read_hooks(rs)
    l1bm = emu.state.l1bm

    def kernel(e, emu):
        _call_read_hooks(emu, reads)
        where = emu.lb_range(dst, n, write=True)
        emu.count_bytes("l1bm_pe", "up", nbytes)
        if isinstance(where, slice):
            def land():
                d = l1bm[:, where].reshape(nl, 4, k, 4 * mabs)
                for j, p in enumerate(parts):
                    d[:, :, j] = p
        else:                          # wrapped: an index array
            vals = np.stack(parts, 2).reshape(nl, -1)

            def land():
                l1bm[:, where] = vals
        emu.pending_mem.append(land)
    return kernel


def _distribute(e, emu, st, plan):
    """l1bmd from L1BM to one long word of every PE with a direct store: the transpose of the L1BM
    run lands in the destination rows at the commit (L1BM changes only after the writes)."""
    src = e.srcs[0]
    dest = _direct_dest(st, plan, e, False)
    m = emu.m
    if src.space != "lb" or src.width == "ll" or dest is None or dest.d0.shape != (4, m.n_pe):
        return None
    nl, mabs = m.n_l1b, m.mab_per_l1b
    n = 16 * mabs
    nbytes = 4 * m.n_pe * 8
    d0 = dest.d0
    dv = d0.reshape(4, nl, 4 * mabs)
    l1bm = emu.state.l1bm
    at = [None]

    def finish():
        dv[...] = l1bm[:, at[0]].reshape(nl, 4, 4 * mabs).transpose(1, 0, 2)

    def kernel(e, emu):
        where = emu.lb_range(src, n, write=False)
        if not isinstance(where, slice):            # wrapped: as transfers._down
            out = l1bm[:, where].reshape(nl, 4, 4 * mabs).transpose(1, 0, 2).reshape(4, -1)
            emu.count_bytes("l1bm_pe", "down", nbytes)
            emu.pending.append((e, np.ascontiguousarray(out), None, None))
            return
        emu.count_bytes("l1bm_pe", "down", nbytes)
        at[0] = where
        emu.pending.append((e, d0, None, None))
    kernel.dd = (_direct_writer(dest, finish), d0, dest.space, *dest.span)
    return kernel


def _broadcast(e, emu, st, plan, kind):
    """l1bmp / l1bmm / l1bmm4 from L1BM with a direct store: each destination row takes the L1BM
    run broadcast over the PEs that share a value (transfers._down's layouts), written at the
    commit straight from L1BM (which changes only after the writes), no private copy, no view."""
    src = e.srcs[0]
    k = 2 if src.width == "ll" else 1
    dest = _direct_dest(st, plan, e, False, ll=k == 2)
    m = emu.m
    if src.space != "lb" or dest is None or dest.d0.shape != (4, m.n_pe) or (k == 2) == dest.single:
        return None
    nl, mabs = m.n_l1b, m.mab_per_l1b
    n = run_length(kind, k, mabs)
    nbytes = k * 4 * m.n_pe * 8
    if kind == "p":          # dest (c, l1b, PE of the L1B) <- run (l1b, c, j)
        dst = lambda d: d.reshape(4, nl, 4 * mabs)
        src_of = lambda run, j: run.reshape(nl, 4, k)[:, :, j].T[:, :, None]
    elif kind == "m":        # dest (c, l1b, MAB, p) <- run (l1b, c, j, p)
        dst = lambda d: d.reshape(4, nl, mabs, 4)
        src_of = lambda run, j: run.reshape(nl, 4, k, 4)[:, :, j].transpose(1, 0, 2)[:, :, None, :]
    else:                    # m4: dest (c, l1b, q, MAB in q, p) <- run (l1b, c, j, q, p)
        dst = lambda d: d.reshape(4, nl, mabs // 4, 4, 4)
        src_of = lambda run, j: run.reshape(nl, 4, k, mabs // 4, 4)[:, :, j].transpose(1, 0, 2, 3)[:, :, :, None, :]
    d0, d1 = dest.d0, dest.d1
    outs = [dst(d0)] + ([dst(d1)] if k == 2 else [])
    l1bm = emu.state.l1bm
    at = [None]

    def finish():
        run = l1bm[:, at[0]]
        for j, o in enumerate(outs):
            o[...] = src_of(run, j)

    def kernel(e, emu):
        where = emu.lb_range(src, n, write=False)
        emu.count_bytes("l1bm_pe", "down", nbytes)
        if not isinstance(where, slice):            # wrapped: the values now, as transfers._down
            run = l1bm[:, where]
            vs = []
            for j in range(k):
                v = np.empty((4, m.n_pe), np.uint64)
                dst(v)[...] = src_of(run, j)
                vs.append(v)
            emu.pending.append((e, vs[0], vs[1] if k == 2 else None, None))
            return
        at[0] = where
        emu.pending.append((e, d0, d1, None))
    kernel.dd = (_direct_writer(dest, finish), d0, dest.space, *dest.span)
    return kernel


def _l2bm_distribute(e, emu, st):
    """l2bmd from L2BM to L1BM (transfers.l2bmd's layout): the same hooks, and at the step's end one
    copy from the L2BM run into the L1BM rows instead of a transposed copy copied again.  L2BM is
    read there, after the step, so only when no other expression of the step writes it."""
    a_op, b_op = e.srcs[0], e.dsts[0]
    if b_op.space != "lb" or any(o.space == "lc" for f in st.exprs if f is not e for o in f.dsts):
        return None
    m = emu.m
    n1, n2 = m.l1b_per_l2b, m.n_l2b
    per_l1b = 4 * transfers.L2BMD_PER_CYCLE
    nbytes = n2 * n1 * per_l1b * 8
    l2bm, l1bm = emu.state.l2bm, emu.state.l1bm

    def kernel(e, emu):
        wa = emu.lc_range(a_op, per_l1b * n1, write=False)
        vals = l2bm[:, wa].reshape(n2, 4, n1, transfers.L2BMD_PER_CYCLE).transpose(0, 2, 1, 3)   # l2b, i, c, j
        emu.count_bytes("l2bm_l1bm", "down", nbytes)
        wb = emu.lb_range(b_op, per_l1b, write=True)
        if isinstance(wa, slice) and isinstance(wb, slice):     # vals views L2BM: copied at the end
            emu.pending_mem.append(lambda: l1bm[:, wb].reshape(vals.shape).__setitem__(..., vals))
        else:                                                   # wrapped: the values now
            vals = vals.reshape(n2 * n1, -1)
            emu.pending_mem.append(lambda: l1bm.__setitem__((slice(None), wb), vals))
    return kernel


def _kernel(emu, st, plan, e, one):
    """A kernel for expression e of a bound plan, or None (its semantics function runs)."""
    if e.zflush is not None:
        return None
    sem = e.defn.sem
    if sem is transfers.l2bmd and e.srcs[0].space == "lc":
        return _l2bm_distribute(e, emu, st)
    if sem is transfers.l1bmd and e.srcs[0].space == "lb" and not e.mab_shift:
        return _distribute(e, emu, st, plan)
    kind = {transfers.l1bmp: "p", transfers.l1bmm: "m", transfers.l1bmm4: "m4"}.get(sem)
    if kind is not None:
        return _broadcast(e, emu, st, plan, kind)
    rs = _bound_readers(plan.readers, e.srcs)
    if rs is None:
        return None
    direct = (not one and id(e) not in plan.flag_dsts and e.defn.group in (isa.ALU, isa.MAU_CALC)
              and all(r.views[1] is None for r in rs[:1]))
    if sem is semantics.vfma:
        if e.prec == "f" and not e.out_reduce and not any(o.mod for o in e.srcs):
            return _vfma_f32(e, rs, _emit(e, direct), st, plan, one, emu)
        return None
    if sem in (semantics.vmul, semantics.vadd):
        if e.prec == "f" and not e.out_reduce and not any(o.mod or o.neg for o in e.srcs):
            return _vbin_f32(e, rs, _emit(e, direct), st, plan, one, emu)
        return None
    if sem is transfers.l1bmd and e.srcs[0].space in PE_MEMS and not e.mab_shift:
        return _gather(e, rs, emu, st, plan)
    if hasattr(sem, "lanes") and e.defn.group == isa.ALU and len(e.srcs) <= 2:   # (alu_op reads two)
        return _alu(e, rs, _emit(e, direct), st, plan, one)
    return None
