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
Plans are kept with the step (``Step.plans``), per emulator and per PE-memory offsets; a plan
holds no reference to the emulator (it is passed in), only views of its memories, as the operand
cache of executor._access does.
"""
from __future__ import annotations

from . import isa

PE_MEMS = ("m", "n", "r", "s")
FWD_OF_GROUP = {isa.ALU: "aluf", isa.MAU_CALC: "mauf", isa.L1BM: "lbf", isa.L1BM_TURN: "lbf",
                isa.MAU_MREAD: "mreadf"}
MASK_LETTER = {"m": "m", "n": "n", "r": "r", "s": "s", "t": "t", "omr": "k", "mb": "m", "nb": "n"}


def plain(op) -> bool:
    """A PE-memory operand whose addresses are the same on every PE (no T, no j<madpe>)."""
    return op.space in PE_MEMS and not op.tind and op.madpe is None


def _view_reader(sp, words, text, views):
    def read(emu):
        for hook in emu.hooks.memory_read:
            hook(emu, sp, words, text)
        return views
    return read


def _const_reader(value):
    return lambda emu: value


def _store(dst, v):
    """dst (cycle, P) = v, which may be a broadcast view shaped (cycle, L1B, ...) (transfers._down)."""
    if v.ndim == 2:
        dst[...] = v
    else:
        dst.reshape(v.shape)[...] = v


def _memory_writer(sp, words, text, mem, r0, r1):
    """An unmasked store of a result into PE-memory rows r0 (and r1, the second long word of ll)."""
    d0 = mem[r0]
    if r1 is None:
        def write(emu, e, v0, v1, flags, st):
            for hook in emu.hooks.memory_written:
                hook(emu, sp, words, text, None)
            _store(d0, v0)
    else:
        d1 = mem[r1]

        def write(emu, e, v0, v1, flags, st):
            for hook in emu.hooks.memory_written:
                hook(emu, sp, words, text, None)
            _store(d0, v0)
            _store(d1, v1 if v1 is not None else emu._zeros)
    write.plain_store = True
    return write


def _general_writer(op):
    return lambda emu, e, v0, v1, flags, st: emu._write(op, e, v0, v1, flags, st)


class StepPlan:
    """What one step does, decided: ``exprs`` (expression, its semantics, cycle-uniform?, may
    its result stay a broadcast view?),
    ``readers`` {id(source operand): reader(emu) -> (v0, v1)} for the operands bound here (the
    others are read by the general path), ``writers`` {id(expression): [writer per destination]},
    ``fwd`` {id(expression): forwarding path} and ``flag_dsts`` (ids of expressions writing a
    mask entry)."""

    __slots__ = ("exprs", "readers", "writers", "fwd", "flag_dsts")

    def __init__(self, st, cycle_uniform):
        """The step's plan that binds nothing: what does not depend on the block's offsets."""
        self.flag_dsts = frozenset(id(e) for e in st.exprs if any(o.space == "omr" for o in e.dsts))
        self.exprs = [(e, e.defn.sem, cycle_uniform(e), False) for e in st.exprs]
        self.fwd = {}
        if not (st.nop or st.noforward):
            for e in st.exprs:
                g = e.defn.group
                if g == isa.L1BM and any(o.space == "lbi" for o in e.srcs):
                    g = isa.L1BM_TURN
                name = FWD_OF_GROUP.get(g)
                if name:
                    self.fwd[id(e)] = name
        self.readers = {}
        self.writers = {id(e): [_general_writer(op) for op in e.dsts if op.space != "nowrite"] for e in st.exprs}

    def bound(self, emu, st) -> "StepPlan":
        """This plan with the operands bound at the emulator's current block offsets."""
        plan = object.__new__(StepPlan)
        plan.flag_dsts, plan.fwd = self.flag_dsts, self.fwd
        plan.readers = {}
        for e, _, one, _ in self.exprs:
            for op in e.srcs:
                rd = self._reader(emu, op, e, one)
                if rd is not None:
                    plan.readers[id(op)] = rd
        plan.writers = {id(e): [self._writer(emu, op, e, st) for op in e.dsts if op.space != "nowrite"]
                        for e in st.exprs}
        # expressions whose results only plain stores take: they may stay broadcast views
        plan.exprs = [(e, sem, one, e.zflush is None and all(getattr(w, "plain_store", False)
                                                             for w in plan.writers[id(e)]))
                      for e, sem, one, _ in self.exprs]
        return plan

    @staticmethod
    def _reader(emu, op, e, one):
        if plain(op):
            _, words, _, _, views = emu._access(op)
            if views is None:
                return None
            if one:                    # a cycle-uniform expression works on cycle 0 (executor._cycle_uniform)
                views = views[0][:1], (views[1][:1] if views[1] is not None else None)
            return _view_reader(op.space, words, op.text, views)
        if op.space == "fixed":
            v = emu._fixed(op.fixed, e.prec or "l")
            return _const_reader((v[0][:1], v[1][:1]) if one else v)
        return None

    @staticmethod
    def _writer(emu, op, e, st):
        entry = op.mask if op.mask is not None else st.masks.get(MASK_LETTER.get(op.space, ""), 0)
        if plain(op) and not entry and op.width != "w":
            _, words, r0, r1, views = emu._access(op)
            if views is not None and isinstance(r0, slice):     # rows as a slice: a plain store
                return _memory_writer(op.space, words, op.text, emu.state.mem[op.space], r0, r1)
        return _general_writer(op)
