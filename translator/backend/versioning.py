"""Loop versioning on whole-loop bounds: a counted loop whose bounds checks the sequencer can clear
for all its passes at once runs a copy without them.

Takes the ops tree after ``emit.remove_dead`` and gives it back with such loops versioned.  In a
counted loop (a ``SeqLoop`` from 0 by 1) every bounds-checked access keeps a sequencer branch per
pass, ``.if not (lo >= 0 and hi + size <= %nb<k>)``, around its per-lane check (the fallback;
codegen's ``flush_checks`` records the conditions on the ``SeqIf`` as ``unless``), and the per-lane
check needs per-lane copies of the loop's counter that the loop then updates every pass for nothing
else.

When every such condition inside a loop is a conjunction of comparisons between terms affine in
the loop's counter (seqexpr.py trees: a counter under a shift, a conditional, a division or times
another counter term cannot version; registers the loop assigns, inner counters included, may not
appear), it holds in every pass iff it holds in the first (counter 0) and the
last (counter stop - 1).  The loop L then becomes::

    SeqIf(not (every condition at both ends), [L], [fast copy of L], unless=the end conditions)

In the fast copy every fallback is replaced by its ``orelse`` (nothing) and the ops only they
needed are dropped (``emit.remove_dead`` on the copy, keeping what the rest of the tree reads).
Where a fallback holds guards of its own (rowplan.py's row load: without the runtime's transposed
copy, the panels, whose own fallback is the gather), a second copy takes that fallback, and those
guards' and the other guards' fast arms, when their conditions hold at both ends:
``SeqIf(not ends, [SeqIf(not ends2, [L], [second copy])], [fast copy])``.
The new ``SeqIf`` is itself a fallback with ``unless``, so an enclosing loop (visited after its
inner loops) versions on the inner loop's end conditions in turn when they are affine in its own
counter.  A launch that goes out of bounds runs the original loop and reports as before.

Registers: the allocator's liveness is flow-insensitive over the tree, so a register defined and
used only inside the loop (its first reference there a full write) gets a fresh one in the copy
and the two copies do not share its interval; registers live into the loop (carried values, set
before it) keep their identity.
"""
from __future__ import annotations

from dataclasses import replace

from .cleanup import remove_dead
from .ops import IfAnyLane, MaskReg, Op, SeqIf, SeqLoop, SeqSet, VReg, WhileAny
from .seqexpr import Binary, BoolOp, Compare, Num, Paren, Reg, Unary, at, binary

KIDS = ("body", "then", "orelse")


def version_loops(tree: list) -> list:
    """Version every counted loop whose fallbacks all clear at its first and last pass, inner
    loops first."""
    guarded = set()       # ids of the nodes holding a bounds check's fallback (a SeqIf with unless)

    def visit(items):
        for k, it in enumerate(items):
            for attr in KIDS:
                visit(getattr(it, attr, ()))
            if isinstance(it, SeqIf) and it.unless or \
                    any(id(x) in guarded for attr in KIDS for x in getattr(it, attr, ())):
                if isinstance(it, SeqLoop):       # (a loop without fallbacks has nothing to version)
                    items[k] = it = version(it, items[:k], tree)
                guarded.add(id(it))
    visit(tree)
    return tree


def version(loop: SeqLoop, before: list, tree: list):
    """loop, or the SeqIf choosing between it and its copy without fallbacks; `before` is what
    precedes it in its list."""
    if loop.start != Num(0) or loop.step != Num(1):
        return loop
    guards, assigned = [], set()

    def scan(items, top):
        for it in items:
            if isinstance(it, (SeqLoop, SeqSet)):
                assigned.add(it.reg.name)
            guard = top and isinstance(it, SeqIf) and bool(it.unless)
            if guard:
                guards.append(it)
            for attr in KIDS:           # a guard stands for the guards inside it
                scan(getattr(it, attr, ()), top and not guard)
    scan(loop.body, True)
    conds = [c for g in guards for c in g.unless]
    if not conds or not all(affine_comparisons(c, loop.reg.name, assigned) for c in conds):
        return loop
    last = binary("-", Paren(loop.stop), 1)
    ends = list(dict.fromkeys(at(c, loop.reg, v) for c in conds for v in (Num(0), last)))

    inside, rest = list(events(loop.body)), list(events(tree, skip=loop))
    # live in a copy: what the rest of the tree reads, and what the original loop reads that
    # nothing before it resets (a value it could find from an earlier run of the loop)
    reads_outside = {r for r, is_def in rest if not is_def}
    reset = {r for o in before if isinstance(o, Op) and not o.partial for r in o.dsts + o.mdst}
    reads_inside = {r for r, is_def in inside if not is_def}

    def copy(replaced, then=()):
        return remove_dead(clone([loop], fresh_registers(inside, rest), replaced, then),
                           keep=reads_outside | (reads_inside - reset))
    general = [loop]
    # where a guard does not clear the loop, the guards its fallback holds may (rowplan.py's row
    # load: the transposed copy, else the panels, else the gather): a second copy takes those
    # guards' fallbacks (always right), the guards they hold and the other guards their fast arms
    outer = [g for g in guards if _top_guards(g.then)]
    inner = [x for g in outer for x in _top_guards(g.then)]
    conds2 = [c for g in guards + inner if not any(g is o for o in outer) for c in g.unless]
    if inner and all(affine_comparisons(c, loop.reg.name, assigned) for c in conds2):
        ends2 = list(dict.fromkeys(at(c, loop.reg, v) for c in conds2 for v in (Num(0), last)))
        general = [SeqIf.fallback(ends2, [loop], copy(guards + inner, then=outer))]
    return SeqIf.fallback(ends, general, copy(guards))


def _top_guards(items) -> list:
    """The guards (SeqIfs with unless) in a tree that no other guard of it holds."""
    out = []
    for it in items:
        if isinstance(it, SeqIf) and it.unless:
            out.append(it)
            continue
        for attr in KIDS:
            out += _top_guards(getattr(it, attr, ()))
    return out


def fresh_registers(inside: list, rest: list) -> dict:
    """For a copy of a part of the tree (its register events `inside`; `rest`: the events of the
    tree without it): a fresh register for each one the part writes before it reads it and
    nothing else references, so the copy and the original do not share its live interval."""
    first = {}
    for r, is_def in inside:
        first.setdefault(r, is_def)
    elsewhere = {r for r, _ in rest}
    return {r: MaskReg() if isinstance(r, MaskReg) else VReg(r.hint)
            for r, is_def in first.items() if is_def and r not in elsewhere}


def events(items, skip=None):
    """(register, is a full write) of every reference in program order (an op's reads first; a
    masked write reads the lanes it keeps); `skip` leaves one node out."""
    for it in items:
        if it is skip:
            continue
        if isinstance(it, Op):
            for r in it.srcs + it.msrc:
                yield r, False
            for r in it.dsts + it.mdst:
                yield r, not it.partial
            continue
        if isinstance(it, (WhileAny, IfAnyLane)):
            yield it.mask, False
        for attr in KIDS:
            yield from events(getattr(it, attr, ()), skip)


def clone(items, fresh: dict, guards: list, then=()) -> list:
    """A copy of the tree `items` with registers renamed by `fresh` and each of `guards` replaced
    by its orelse (those also in `then`: by their then)."""
    out = []
    for it in items:
        if any(it is g for g in guards):
            out += clone(it.then if any(it is g for g in then) else it.orelse, fresh, guards, then)
            continue
        if isinstance(it, Op):
            ren = lambda rs: tuple(fresh.get(r, r) for r in rs)
            out.append(replace(it, dsts=ren(it.dsts), srcs=ren(it.srcs), mdst=ren(it.mdst), msrc=ren(it.msrc)))
            continue
        new = replace(it)
        for attr in KIDS:
            if hasattr(it, attr):
                setattr(new, attr, clone(getattr(it, attr), fresh, guards, then))
        if isinstance(it, (WhileAny, IfAnyLane)):
            new.mask = fresh.get(it.mask, it.mask)
        out.append(new)
    return out


def affine_comparisons(cond, reg: str, assigned) -> bool:
    """cond is `a < b and c >= d ...` with every side affine in register reg and free of the
    registers in `assigned`: then it holds for every reg in [x, y] iff it holds at x and at y."""
    e = cond.unwrapped()
    terms = e.values if isinstance(e, BoolOp) and e.op == "and" else [e]
    terms = [t.unwrapped() for t in terms]
    return all(isinstance(t, Compare) and all(o in ("<", "<=", ">", ">=") for o in t.ops)
               and all(degree(x, reg, assigned) is not None for x in [t.first, *t.rest]) for t in terms)


def degree(e, reg: str, varying) -> int | None:
    """0 when e does not involve register reg, 1 when it is affine in it, None otherwise (or when
    it reads a register in `varying`)."""
    e = e.unwrapped()
    if isinstance(e, Reg):
        return None if e.name in varying else int(e.name == reg)
    if isinstance(e, Unary) and e.op in ("-", "+"):
        return degree(e.operand, reg, varying)
    if isinstance(e, Binary) and e.op in ("+", "-", "*"):
        a, b = degree(e.left, reg, varying), degree(e.right, reg, varying)
        if a is None or b is None or (e.op == "*" and a and b):
            return None
        return max(a, b)
    return 0 if all(degree(k, reg, varying) == 0 for k in e.kids()) else None
