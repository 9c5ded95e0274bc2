"""The column plan: a load that walks a read-only buffer by a pitch per pass of a counted loop
(``A[k*n + i]``, access class "column"; also ``x[i + k]``) moves the coming passes' shares while
this pass computes, and a launch narrower than its wave moves only its own part of each share.

codegen stages such a load in every pass (Memory.shifted_load -> long_shift_load -> staged): the
MV of the wave's share moved by the pass's shift into L2BM, then ``wait``, l2bmd, l1bmd, so each
pass waited out its transfer's whole latency (400 cycles + the share's bytes on the DRAM link).
codegen records those loads (``Emitter.columns``: their MVs' ``chain``); ``pipeline_columns``,
after packing.py (which multi-buffers the loads of the loops it packs) and before the wave
prefetch, multi-buffers them in every other counted loop ``.loop %n = 0, b`` (step 1) with D
buffer sets (D = 2..4: about (latency + busy + body) / max(busy, body) transfers in flight keep
the link busy; fewer when MV tags or L2BM run short)::

    .if j < b [and the load's branch conditions at j]      for j = 0 .. D - 2
        pass j's MV into set j
    .loop %n = 0, b
        .if %n + D - 1 < b
            .set %cla<i> = load i's address at pass %n + D - 1
        .if %n % D == s                                     for s = 0 .. D - 1
            .if %n + D - 1 < b [and the load's branch conditions at %n + D - 1]
                pass %n + D - 1's MV into set (s + D - 1) % D  (its own L2BM area and tag)
            the body, the load waiting on set s's tag and moving from its area: no MV
                                                            (copy s, with fresh registers)
    .endloop

No MV goes past the last pass, and every MV issued is waited for in the pass it belongs to, so no
transfer is in flight after the loop, and loops that run one after the other share their sets
(``_Slots``; a loop never takes the sets of a loop inside it).  The buffer is replicated (never
written during the launch), so moving a pass's share early cannot read what a store of the loop
has not written yet; the loop's own stores keep their waits (settle_stores).  A load under
sequencer branches (an odd shift's second long word, ``.if u & 1``) is issued under the same
branches taken at its pass.

A load keeps codegen's form (and --stats says why) when its address or a branch it runs under
reads a register the loop assigns (a later pass's value is not known early), when it is inside a
bounds check's fallback or a per-lane branch, when its wait / l2bmd / l1bmd were moved apart by
the cleanups, in packing.py's loops of 1..4 passes, or when L2BM or the MV tags have no room.

``narrow_shares`` (after the wave prefetch) cuts every MV of a read-only buffer's wave share in a
wave narrowed 8 times down to the L2B halves the launch's work-items fill (below).
"""
from __future__ import annotations

import re
from dataclasses import replace

from .abi import CODEGEN_TAGS
from .ops import IfAnyLane, MV, Op, SeqIf, SeqLoop, SeqSet, WhileAny, flat_ops, rewrite
from .packing import moved
from .seqexpr import Num, Paren, Reg, all_of, at, binary, compare, negation
from .versioning import KIDS, events, fresh_registers

ENABLED = True          # tests switch it off to compare against the unpipelined loop
DEPTHS = (4, 3, 2)      # buffer sets tried: pass k + depth - 1's MV goes out before pass k waits

PIPELINED = "column: double-buffered shifted load"
PER_PASS = "column: shifted load waited for in every pass"
PACKED = "column: packed, multi-buffered (packing.py)"

_BASE = re.compile(r"b\d+")            # a buffer's base address register (abi.base)
ADDRESSES = "cla"               # %cla<i>: load i's address for the coming pass, set just before its MVs
_TAG = re.compile(r"(?:/n\d+i|wait i)(\d+)\b")


def pipeline_columns(tree: list, lay, alloc_lc, columns: dict, plans: dict, link) -> list:
    """tree with the staged column loads (`columns`: MV chain -> (C line, buffer)) of its counted
    loops multi-buffered; `plans` gets, per (line, buffer), the plans chosen (a set of texts);
    alloc_lc(n): n long words of L2BM or None; link: the DRAM -> L2BM link (latency, bytes per cycle)."""
    if not columns:
        return tree
    used = {int(m) for it in _all(tree) for m in _TAG.findall(_text(it))}
    slots = _Slots([t for t in CODEGEN_TAGS if t not in used], alloc_lc, lay.stripe // lay.l2b)
    link = (int(link.latency), int(8 * lay.stripe // link.bytes_per_cycle))     # a share's MV: latency, busy cycles

    def note(chain, text):
        plans.setdefault(columns[chain], set()).add(text)
    for chain in _packed(tree):
        if chain in columns:
            note(chain, PACKED)

    if ENABLED:
        rewrite(tree, lambda it: _Pipeline(it, columns, note, slots, tree, lay, link).rewrite()
                if isinstance(it, SeqLoop) else None)
    else:
        for chain in columns:
            note(chain, PER_PASS + " (the column plan is switched off)")
    return tree


class _Slots:
    """The staging of pipelined loads: per slot, the MV tags and L2BM areas of its buffer sets.
    A loop's transfers are all waited for inside it, so loops run one after the other share
    slots; a loop takes none that a loop inside it uses (its tags appear in its body)."""

    def __init__(self, free_tags, alloc_lc, size):
        self.free, self.alloc_lc, self.size = free_tags, alloc_lc, size
        self.slots = []                 # (tags, areas), one per set

    def take(self, n: int, busy: set):
        """n slots none of whose tags is in `busy`, made as needed (None: no room)."""
        out = [x for x in self.slots if not busy & set(x[0])][:n]
        need = n - len(out)
        if not need:
            return out
        for depth in DEPTHS:                # fewer sets, for all of them, when MV tags or L2BM run short
            base = self.alloc_lc(need * depth * self.size) if need * depth <= len(self.free) else None
            if base is not None:
                for i in range(need):
                    tags, self.free = self.free[:depth], self.free[depth:]
                    first = base + i * depth * self.size
                    self.slots.append((tags, [first + s * self.size for s in range(depth)]))
                    out.append(self.slots[-1])
                return out
        return None


class _Pipeline:
    """One counted loop's staged column loads, multi-buffered (rewrite), or why not (note)."""

    def __init__(self, loop, columns, note, slots, tree, lay, link):
        self.loop, self.columns, self.note, self.steps, self.link = loop, columns, note, lay.l2bmd_steps, link
        self.slots, self.size, self.tree = slots, slots.size, tree
        self.assigned = {loop.reg.name} | {x.reg.name for x in _all(loop.body) if isinstance(x, (SeqSet, SeqLoop))}

    def rewrite(self):
        """[the first passes' MVs, the loop] with its column loads multi-buffered, or None."""
        L = self.loop
        loads = []                  # (MV, its chain ops, the branch conditions it runs under)
        self.collect(L.body, (), loads, top=True)
        if not loads:
            return None
        if L.start != Num(0):       # packing.py's loops of 1 to 4 passes (the packed plan's): not worth
            return None             # depth copies of the body
        if L.step != Num(1) or L.stop.regs() & self.assigned:
            return self.refuse(loads, "the loop does not count up by one to a bound it keeps")
        ok = []
        for mv, ops, conds in loads:
            why = self.why_not(mv, conds)
            if why:
                self.note(mv.chain, f"{PER_PASS} ({why})")
            else:
                ok.append((mv, ops, conds))
        if not ok:
            return None
        taken = self.slots.take(len(ok), {int(m) for it in _all(L.body) for m in _TAG.findall(_text(it))})
        if taken is None:
            return self.refuse(ok, "no MV tags or L2BM left for a second buffer")
        depth = min(min(len(t) for t, _ in taken), self.depth())
        sets = [[(tags[s], areas[s]) for s in range(depth)] for tags, areas in taken]   # per load, per set
        roles = {}
        for i, (mv, ops, _) in enumerate(ok):
            roles[id(mv)] = (i, "mv")
            for o in ops:
                roles[id(o)] = (i, "op")
        reg, stop = L.reg, L.stop

        def issue(k, s, where=None):
            """Pass k's MVs (a sequencer expression without spaces) into set s, under the branches
            each load runs under; where: registers holding their addresses (ADDRESSES)."""
            out = []
            for i, ((mv, _, conds), st) in enumerate(zip(ok, sets)):
                tag, area = st[s]
                one = moved(mv, area, where[i] if where else at(mv.d_offset, reg, k), tag)
                out += [SeqIf(all_of(Paren(at(c, reg, k)) for c in conds), [one])] if conds else [one]
            return out

        # pass j uses set j mod depth
        pre = [SeqIf(compare(Num(j), "<", stop), issue(Num(j), j)) for j in range(depth - 1)]
        # the body copies issue the same addresses (pass %n + depth - 1's): worked out once, before
        # the copy is chosen (the assembler compiles each long expression it meets)
        ahead = binary("+", reg, depth - 1, gap="")
        more = compare(ahead, "<", stop)
        where = [Reg(f"{ADDRESSES}{i}") for i in range(len(ok))]
        inside, rest = list(events(L.body)), list(events(self.tree, skip=L))
        bodies = [[SeqIf(more, issue(ahead, (s + depth - 1) % depth, where))]
                  + self.copy(L.body, s, fresh_registers(inside, rest) if s else {}, roles, sets, ok)
                  for s in range(depth)]
        which = binary("%", reg, depth)
        body = bodies[-1]
        for s in range(depth - 2, -1, -1):
            body = [SeqIf(compare(which, "==", s), bodies[s], body)]
        body = [SeqIf(more, [SeqSet(r, at(mv.d_offset, reg, ahead)) for r, (mv, _, _) in zip(where, ok)])] + body
        for mv, _, _ in ok:
            self.note(mv.chain, PIPELINED)
        return pre + [replace(L, body=body)]

    def depth(self) -> int:
        """Buffer sets enough to keep the link busy: a pass takes about T cycles (4 per op of the
        body, a rough upper bound), a share's MV latency + busy cycles, so about
        (latency + busy + T) / max(busy, T) passes' transfers are in flight at once.  (A big body
        needs two, a small one in a narrow wave four: each set is a copy of the body.)"""
        latency, busy = self.link
        t = 4 * sum(1 for o in flat_ops(self.loop.body) if o.unit not in ("wait", "nop"))
        want = -(-(latency + busy + t) // max(busy, t, 1))
        return max(min(DEPTHS), min(max(DEPTHS), want))

    def refuse(self, loads, why):
        for mv, _, _ in loads:
            self.note(mv.chain, f"{PER_PASS} ({why})")
        return None

    def collect(self, items, conds, out, top):
        """The staged column loads of items (the loop's body; conds: the sequencer branches around
        them), not those of inner loops (their own loop pipelines them) or of per-lane branches."""
        for k, it in enumerate(items):
            if isinstance(it, MV) and it.chain in self.columns:
                ops = self.chain_ops(items, k)
                if ops is None:
                    self.note(it.chain, f"{PER_PASS} (its wait and moves do not follow its MV)")
                else:
                    out.append((it, ops, conds))
            elif isinstance(it, SeqIf):
                if it.unless:
                    self.skip(it, "it is inside a bounds check's fallback")
                    continue
                self.collect(it.then, conds + (it.cond,), out, False)
                self.collect(it.orelse, conds + (negation(it.cond),), out, False)
            elif isinstance(it, (IfAnyLane, WhileAny)):
                self.skip(it, "it runs under a per-lane branch")
            # (inner SeqLoops: visited on their own; Calls hold no MVs)

    def skip(self, node, why):
        """Note why the column loads of node (not those of loops inside it) stay as they are."""
        for x in _all([node], into_loops=False):
            if isinstance(x, MV) and x.chain in self.columns:
                self.note(x.chain, f"{PER_PASS} ({why})")

    def chain_ops(self, items, k):
        """The wait, l2bmds and l1bmd that follow staged MV items[k] (Memory.staged), or the wait
        and l2bmb of a block a walk of uniform loads moves each pass (Memory.walks), or None."""
        t, lc, lb = items[k].chain
        block = items[k + 1:k + 3]
        if [o.text if isinstance(o, Op) else None for o in block] == [f"wait i{t}", f"l2bmb $lc{lc} $lb{lb}"]:
            return block
        ops = items[k + 1:k + 3 + self.steps]
        want = [f"wait i{t}"] + ["l2bmd $lc"] * self.steps + [f"l1bmd $lb{lb} {{d0}}"]
        if len(ops) != len(want) or not all(isinstance(o, Op) and o.text.startswith(w) for o, w in zip(ops, want)) \
                or ops[0].text != want[0] or ops[-1].text != want[-1]:
            return None
        return ops

    def why_not(self, mv, conds):
        reads = mv.d_offset.regs().union(*(c.regs() for c in conds))
        late = sorted(reads & self.assigned - {self.loop.reg.name})
        if late:
            return f"its address or branch reads %{late[0]}, which the loop assigns"
        return ""

    def copy(self, items, s, fresh, roles, sets, ok):
        """The body for passes of parity s: the column loads' MVs gone (issued a pass early), their
        waits and l2bmds on set s; registers renamed by `fresh`."""
        out = []
        for it in items:
            role = roles.get(id(it))
            if role and role[1] == "mv":
                continue
            if isinstance(it, Op):
                ren = lambda rs: tuple(fresh.get(r, r) for r in rs)
                new = replace(it, dsts=ren(it.dsts), srcs=ren(it.srcs), mdst=ren(it.mdst), msrc=ren(it.msrc))
                if role:
                    tag, area = sets[role[0]][s]
                    t, lc, _ = ok[role[0]][0].chain
                    new = retarget(new, {t: tag}, {lc: area}, self.size)
                out.append(new)
                continue
            new = replace(it)
            for attr in KIDS:
                if hasattr(it, attr):
                    setattr(new, attr, self.copy(getattr(it, attr), s, fresh, roles, sets, ok))
            if isinstance(it, (WhileAny, IfAnyLane)):
                new.mask = fresh.get(it.mask, it.mask)
            out.append(new)
        return out


def retarget(op: Op, tags: dict, areas: dict, size: int) -> Op:
    """A staged load's wait or l2bmd (a walked block's l2bmb) on other tags and L2BM staging areas (tags: old -> new;
    areas: the start of an old area of `size` long words -> the new one's): prefetch.py and the
    column plan move loads' staging so."""
    m = re.fullmatch(r"wait i(\d+)", op.text)
    if m and int(m.group(1)) in tags:
        return replace(op, text=f"wait i{tags[int(m.group(1))]}")
    m = re.match(r"l2bm[db] \$lc(\d+) ", op.text)
    a = int(m.group(1)) if m else None
    for lc, area in areas.items() if m else ():
        if lc <= a < lc + size:
            b = area + a - lc
            return replace(op, text=op.text.replace(f"$lc{a} ", f"$lc{b} ", 1),
                           mem=tuple((rw, sp, lo - a + b, hi - a + b) if sp == "lc" else (rw, sp, lo, hi)
                                     for rw, sp, lo, hi in op.mem))
    return op


def _readdress(it, d):
    """A copy of tree `it` with the MVs' offsets ADDRESS replaced by d."""
    if isinstance(it, MV):
        return replace(it, d_offset=d)
    new = replace(it)
    for attr in KIDS:
        if hasattr(it, attr):
            setattr(new, attr, [_readdress(x, d) for x in getattr(it, attr)])
    return new


def _packed(items):
    """The chains of the staged loads of the loops packing.py packed: a packed loop (%pq) keeps
    the original body for groups whose passes disagree, and is followed by the tail loop."""
    for k, it in enumerate(items):
        if isinstance(it, SeqLoop) and it.reg.name.startswith("pq"):
            tail = items[k + 1:k + 2]
            yield from (x.chain for x in _all([it] + tail) if isinstance(x, MV) and x.chain)
        for attr in KIDS:
            yield from _packed(getattr(it, attr, ()))


def _all(items, into_loops=True):
    """Every node of a tree, depth first (into_loops=False: not the bodies of its SeqLoops)."""
    for it in items:
        yield it
        if into_loops or not isinstance(it, SeqLoop):
            for attr in KIDS:
                yield from _all(getattr(it, attr, ()), into_loops)


def _text(it) -> str:
    return it.text if isinstance(it, (Op, MV)) else ""


ADDRESS = Reg("shr")    # a narrow launch's share address (narrow_shares)


def narrow_shares(tree: list, lay, uses: dict) -> list:
    """In a narrowed wave, a launch may fill only a fraction of it (512 work-items of 4096): every
    MV of a wave share (MV.share: a buffer's, a copy's or __local memory's, loaded or stored) then
    moves the whole share while the work-items need the first h of its G x L2B halves.  Each such
    MV becomes a sequencer choice on the wave's work-items (%gx - %wx W): the halves of h = 1, 2
    or 4 it covers, moved by mvp from and into exactly the places its mvd (mvp: to one L2B of
    every group) would use (L2B l of group g: the l-th half of group g's share, at the same
    address in every group's copy of a replicated buffer), else the MV itself.  The L2BM words of
    the halves left out hold stale data, read only by lanes that hold no work-item, and a store
    leaves out the same halves: what they hold never goes back."""
    if lay.narrow == 1:
        return tree
    halves, n = lay.groups * lay.l2b, lay.stripe // lay.l2b     # (long words per half)
    forms = ((re.compile(rf"mvd/n{lay.stripe}i(\d+) \$d0 \$lc(\d+)()"), False),
             (re.compile(rf"mvd/n{lay.stripe}i(\d+) \$lc(\d+)() \$d0"), True),
             (re.compile(rf"mvp/n{n}i(\d+) \$d0 \$lc(\d+)@\.(\d+)"), False),
             (re.compile(rf"mvp/n{n}i(\d+) \$lc(\d+)@\.(\d+) \$d0"), True))

    def parts(mv):
        """[(half, its mvp)] of share MV mv, or None when it is not of a form above."""
        for form, up in forms:
            m = form.fullmatch(mv.text)
            if m:
                t, lc, l2b = m.groups()
                break
        else:
            return None
        out = []
        for j in range(halves):
            g, l = divmod(j, lay.l2b)
            if l2b and l != int(l2b):
                continue
            d, c = f"$d{0 if l2b else l * n}@{g}", f"$lc{lc}@{g}.{l}"
            out.append((j, replace(mv, text=f"mvp/n{n}i{t} {c} {d}" if up else f"mvp/n{n}i{t} {d} {c}",
                                   d_offset=ADDRESS, chain=(), share=False)))
        return out

    def tiered(mv, halves_of, wave):
        """[the address into a register (one long expression for the assembler, not one per MV), the
        choice of MVs for the wave's work-items]."""
        tiers = [(items, [x for j, x in halves_of if j < h]) for h, items in lay.share_tiers()]
        out = [replace(mv, d_offset=ADDRESS, share=False)]
        for items, mvs in reversed(tiers):
            out = [SeqIf(compare(binary("-", Reg("gx"), binary("*", wave, lay.wave)), "<=", items), mvs, out)]
        if mv.d_offset.unwrapped() in [Reg(r) for r in held]:       # (already in a register)
            return [_readdress(x, mv.d_offset) for x in out]
        return [SeqSet(ADDRESS, mv.d_offset)] + out

    # registers holding a share's address (pipeline_columns' %cla<i>, set just before its MVs)
    held = {it.reg.name for it in _all(tree) if isinstance(it, SeqSet) and it.reg.name.startswith(ADDRESSES)}

    def narrowed(wave):
        def fn(it):
            """A share's MV as the tiers of it the launch fills, or None."""
            got = parts(it) if isinstance(it, MV) and it.share else None
            if got is None:
                return None
            uses["launch"] = True
            return tiered(it, got, wave)
        return fn
    for loop in _all(tree):     # (inside the wave loop, where %wx is set; a next wave's MV (prefetch.py)
        if isinstance(loop, SeqLoop) and loop.reg.name == "wx":         # needs no more than this one's)
            rewrite(loop.body, narrowed(Reg("wx")))
    rewrite(tree, narrowed(Num(0)))     # what is left: wave 0's, which prefetch.py issues before the loop
    return tree
