"""Cycle packing: a counted loop in a wave narrowed 8 times runs four passes at once.

Takes the ops tree after ``cleanup.coalesce_carried`` and gives it back with such loops packed.  In a
wave narrowed 8 times (layout.py) every work-item lives in cycle 0 of its register: cycles 1..3
hold no work-item.  So the part of a pass that does not depend on the values the loop carries
(the loads, and the lane-wise arithmetic on them) can run for passes 4q .. 4q+3 at once, pass
4q + c in cycle c:

* a staged load (DRAM -mvd-> L2BM -l2bmd-> L1BM -l1bmd-> PE; codegen marks its MV with ``chain``)
  becomes four MVs into four L2BM areas and four l2bmds to L1BM offsets 0, P, 2P, 3P, so that its
  one l1bmd hands pass 4q + c's share to cycle c;
* a uniform table read (``lpassa $lm<T>`` at a sequencer offset, Memory.uniform_table), or a
  paired row plan's read (``lpassa $ln<R>``, rowplan.py), reads ``$lm<T>v`` (``$ln<R>v``): cycle
  c takes the next entries, when the four elements are consecutive;
* a lane-wise op reads registers made in the pass with ``v`` (cycle c) and registers made before
  the loop at cycle 0 (``{u<i>}``), where the work-items hold them.

The rest (ops that read a carried register, or what such ops made, or that are not lane-wise)
then runs four times, in pass order, reading cycle c of the packed values through a plain
operand (``{s<i>c<c>}``: the same address every cycle; cycle 0 is the one that counts), so each
work-item's operations happen in the same order as before and give the same bits.

The loop ``.loop %n = 0, S`` becomes::

    .loop %pq = 0, (S - 1) / 4
        .if <the group's passes agree>      (conditions below; omitted when there are none)
            packed body, with %n = 4 %pq + c in cycle c's expressions
        .else
            .loop %n = 4 %pq, 4 %pq + 4     the original body
        .endif
    .endloop
    .loop %n = 4 ((S - 1) / 4), S           the original body: 1 to 4 passes, the last among them

Staged loads are multi-buffered (``loops(depth)``, depth 4 where tags and L2BM allow): the packed
body comes in depth copies, one per %pq mod depth, each waiting for MVs issued depth - 1 groups
earlier into its own set of four L2BM areas under its own tag (241..248), and first issuing the
MVs of group %pq + depth - 1, so the transfers of the coming groups overlap this group's work.

The last pass always runs the original body, so the captures of values leaving the loop (a branch
on the last pass, dropped from the packed body) and the loop's last-pass rules stay as they are.
A branch on the counter in the body runs in the packed body on pass 4q's value, when the four
passes agree on it (checked per group); a table read needs the four elements consecutive in one
block.  Loops with anything else (bounds-check fallbacks, stores, inner loops, masks made in the
packed part, ...) are left alone: versioning.py's checked copy, for one, is never packed.
"""
from __future__ import annotations

import re
from dataclasses import replace

from .ops import MV, Call, MaskReg, Op, SeqIf, SeqLoop, SeqSet, VReg, flat_ops, rewrite
from .abi import PACK_TAGS
from .seqexpr import Num, Paren, Reg, SeqExpr, all_of, any_of, at, binary, compare, negation
from .versioning import KIDS, clone, events

ENABLED = True              # tests switch it off to compare against the unpacked loop
WAYS = 4                    # passes per group: the cycles of a register
NOT_LANEWISE = ("mwrite", "mread", "mmul", "mfma", "bfn")     # mnemonics that mix cycles


class NoPack(Exception):
    """The loop does not have the shape packing handles; it stays as it is."""


def pack_loops(tree: list, lay, alloc_lc, alloc_lb=None) -> list:
    """Pack every qualifying counted loop of `tree` (innermost loops only); `alloc_lc(n)` gives n
    more long words of L2BM for the extra staging areas, `alloc_lb(n)` of L1BM (None: none) for
    loads that pipelining moves ahead and codegen put in one area."""
    if not ENABLED or lay.narrow != 8 or lay.l2bmd_steps != 1:
        return tree
    areas = {}               # (an L2BM staging area, set) -> the four areas its packed load uses
    count = [0]

    def lc_areas(lc, s=None, load=0):
        """Set None: the area and three more; sets 0 and 1 of staged load `load` of a loop: its
        double buffer (eight new areas)."""
        key = (lc,) if s is None else (lc, s, load)
        if key not in areas:
            n = lay.stripe // lay.l2b
            try:
                areas[key] = ([lc] if s is None else [alloc_lc(n)]) + [alloc_lc(n) for _ in range(WAYS - 1)]
            except Exception:            # L2BM is full: the loop stays as it is
                raise NoPack("no L2BM left") from None
        return areas[key]

    def pack(it):
        """The packed loops replacing counted loop `it`, or None (it stays as it is)."""
        if not (isinstance(it, SeqLoop) and it.reg.name.startswith("n") and it.start == Num(0)
                and it.step == Num(1)):
            return None
        try:
            packer = Packer(it, tree, lay, lc_areas, Reg(f"pq{count[0] + 1}"), alloc_lb)
            for depth in (4, 2, 1):      # buffer sets; fewer when tags or L2BM run out
                try:
                    new = packer.loops(depth)
                    break
                except NoPack:
                    if depth == 1:
                        raise
        except NoPack:
            return None
        count[0] += 1
        return new
    rewrite(tree, pack)
    return tree


def subst(items, reg: Reg, value: SeqExpr):
    """A copy of the tree `items` with sequencer register reg replaced by (value) in every
    expression (ops are shared: they hold none)."""
    out = []
    for it in items:
        if isinstance(it, Op):
            out.append(it)
            continue
        new = replace(it)
        if isinstance(it, MV):
            new.d_offset = at(it.d_offset, reg, value)
            if it.lc_offset is not None:
                new.lc_offset = at(it.lc_offset, reg, value)
        elif isinstance(it, SeqIf):
            new.cond = at(it.cond, reg, value)
        elif isinstance(it, SeqSet):
            new.expr = at(it.expr, reg, value)
        elif isinstance(it, Call):
            new.offsets = {k: at(v, reg, value) for k, v in it.offsets.items()}
        elif isinstance(it, SeqLoop):
            new.start, new.stop = at(it.start, reg, value), at(it.stop, reg, value)
        for attr in KIDS:
            if hasattr(it, attr):
                setattr(new, attr, subst(getattr(it, attr), reg, value))
        out.append(new)
    return out


def moved(mv: MV, area: int, d_offset: SeqExpr, tag=None) -> MV:
    """A staged load's MV (codegen's, with its chain) into L2BM area `area` from d_offset, under
    tag `tag` (None: its own)."""
    text = re.sub(rf"\$lc{mv.chain[1]}(?!\d)", f"$lc{area}", mv.text)
    if tag is not None:
        text = re.sub(r"(/n\d+)i\d+", rf"\g<1>i{tag}", text)
    return replace(mv, text=text, d_offset=d_offset, chain=())


TABLE = re.compile(r"lpassa \$l([mn])(\d+) \{d0\}")


def counter(group: SeqExpr, c: int) -> SeqExpr:
    """The loop's counter in cycle c's pass of group `group`: 4 group + c (no spaces: MV offsets
    print as they are)."""
    return binary("+", binary("*", WAYS, group, gap=""), c, gap="")


class Packer:
    def __init__(self, loop: SeqLoop, tree: list, lay, lc_areas, q: Reg, alloc_lb=None):
        self.loop, self.lay, self.lc_areas, self.q, self.alloc_lb = loop, lay, lc_areas, q, alloc_lb
        self.home = {}                      # staged load -> its L1BM area, where pipelining moved it
        self.walks = {}                     # walked block read -> its four L1BM areas
        self.walked_regs = set()            # the registers walked reads write
        self.last = compare(loop.reg, "==", binary("-", loop.stop, 1))     # codegen's test of the last pass
        self.groups = []                    # sequencer conditions the group's passes must meet
        self.staged, self.depth = [], 1     # the body's staged loads (MV, branch conditions, line); buffer sets
        self.pipelined = False              # each group's L1BM moves made by the group before
        self.loads = 0
        self.classify(tree)

    def at(self, expr, c):
        """expr in cycle c's pass of group q."""
        return at(expr, self.loop.reg, counter(self.q, c))

    # -- which ops run packed, which four times ------------------------------------------------
    def linear(self, items, cond=False):
        """(op, under a branch) in program order, as the packed body runs them; loads as
        ("load", dst); a fetch of a uniform table's block is opaque (its registers its own)."""
        k = 0
        while k < len(items):
            it = items[k]
            k += 1
            if isinstance(it, Op):
                yield it, cond
            elif isinstance(it, MV) and it.chain and self.walked(items, k - 1):
                self.walked_regs.add(items[k + 2].body[0].dsts[0])
                yield ("load", items[k + 2].body[0].dsts[0]), cond
                k += 3
            elif isinstance(it, MV) and it.chain:
                yield ("load", self.chain_ops(items, k - 1)[-1].dsts[0]), cond
                k += 3
            elif isinstance(it, Call) and self.table(it):
                yield ("load", it.body[0].dsts[0]), cond
            elif isinstance(it, SeqIf) and not it.unless:
                if it.cond == self.last:
                    continue                        # captures on the last pass: never packed
                if it.cond == negation(self.last):
                    yield from self.linear(it.then, cond)
                elif self.fetch(it):
                    yield ("opaque", it), cond
                else:
                    for arm in (it.then, it.orelse):       # what an arm defines, it defines for itself
                        yield ("enter",), True
                        yield from self.linear(arm, True)
                        yield ("leave",), True
                    yield ("join",), True                  # ... and what both define, the branch does
            else:
                raise NoPack(type(it).__name__)

    @staticmethod
    def walked(items, k):
        """(wait, l2bmb, the Call of its l1bmp) when items[k] is a walked block read's MV
        (Memory.walked: a 64-long-word block to every L1BM, one word of it to every PE at an
        L1BM offset the sequencer adds), else None."""
        t, lc, lb = items[k].chain
        run = items[k + 1:k + 4]
        if len(run) == 3 and isinstance(run[0], Op) and run[0].text == f"wait i{t}" \
                and isinstance(run[1], Op) and run[1].text == f"l2bmb $lc{lc} $lb{lb}" \
                and isinstance(run[2], Call) and set(run[2].offsets) == {"lb"} and len(run[2].body) == 1 \
                and isinstance(run[2].body[0], Op) and run[2].body[0].text == f"l1bmp $lb{lb} {{d0}}":
            return run
        return None

    def chain_ops(self, items, k):
        t, lc, lb = items[k].chain
        want = (f"wait i{t}", f"l2bmd $lc{lc} $lb{lb}", f"l1bmd $lb{lb} {{d0}}")
        ops = items[k + 1:k + 4]
        if len(ops) != 3 or any(not isinstance(o, Op) or o.text != w for o, w in zip(ops, want)):
            raise NoPack("staged load")
        return ops

    @staticmethod
    def table(it: Call):
        """A read of one LM word at an offset the sequencer adds: an x[k] table's (LM0) or a paired
        row plan's (LM1, rowplan.py)."""
        m = len(it.body) == 1 and isinstance(it.body[0], Op) and TABLE.fullmatch(it.body[0].text)
        return bool(m) and set(it.offsets) == {m.group(1)}

    @staticmethod
    def fetch(it: SeqIf):
        return not it.orelse and any(isinstance(x, SeqSet) for x in it.then)

    def classify(self, tree, held=frozenset()):
        """Split the pass into the packed part and the carried part.  held: ops making masks that
        stay in the carried part (a mask the carried part reads must be made there: it cannot
        select a cycle of a mask)."""
        seq = list(self.linear(self.loop.body))
        written = {r for o in flat_ops(self.loop.body) for r in o.dsts + o.mdst}
        opaque, fetch_reads = set(), set()
        for x, _ in seq:
            if isinstance(x, tuple) and x[0] == "opaque":
                opaque |= {r for o in flat_ops(x[1].then) for r in o.dsts + o.mdst}
                fetch_reads |= {r for o in flat_ops(x[1].then) for r in o.srcs + o.msrc}
        if fetch_reads & (written - opaque):
            raise NoPack("a table fetch reads a value of the pass")
        # carried: read (a masked write reads the lanes it keeps) before written in the pass
        carried, defined, scopes, arms = set(), set(), [], []
        for x, cond in seq:
            if isinstance(x, tuple):
                if x[0] == "enter":
                    scopes.append(defined)
                    defined = set(defined)
                elif x[0] == "leave":
                    arms.append(defined)
                    defined = scopes.pop()
                elif x[0] == "join":
                    defined |= arms.pop() & arms.pop()
                elif x[0] == "load":
                    defined.add(x[1])
                continue
            for r in x.srcs + x.msrc + (x.dsts + x.mdst if x.partial else ()):
                if r in written and r not in defined and r not in opaque:
                    carried.add(r)
            if not x.partial:
                defined |= set(x.dsts + x.mdst)
        # the carried-dependent part, in program order
        dep, dep_w, ind_w, dep_reads = [], set(), set(), {}
        for x, cond in seq:
            if isinstance(x, tuple):
                if x[0] == "load":
                    if x[1] in carried:
                        raise NoPack("a load writes a carried register")
                    ind_w.add(x[1])
                    self.loads += 1
                continue
            reads = x.srcs + x.msrc + (x.dsts + x.mdst if x.partial else ())
            # masks are per cycle: an op under a mask the packed part made, or making one, is lane-wise
            # (a masked write's kept lanes too, when the packed part made its destination); a fixed
            # cycle pattern is not
            lanewise = x.unit in ("alu", "mau") and not x.mem and self.per_cycle(x) \
                and not x.text.startswith(NOT_LANEWISE) and re.sub(r"/\{k\d+\}", "", x.text).count("/") == 0 \
                and all(m in ind_w for m in x.msrc) and (not x.partial or all(d in ind_w for d in x.dsts)) \
                and id(x) not in held
            if not lanewise or any(r in carried or r in dep_w for r in reads) \
                    or any(r in carried for r in x.dsts + x.mdst):
                if cond or x.mem or x.unit not in ("alu", "mau"):
                    raise NoPack("carried-dependent op under a branch, or touching memory")
                dep.append(x)
                dep_w |= set(x.dsts + x.mdst)
                for r in reads:
                    dep_reads.setdefault(r, len(dep))
            else:
                if any(r in dep_reads for r in x.dsts + x.mdst):
                    raise NoPack("a packed op rewrites what the carried part read before")
                ind_w |= set(x.dsts + x.mdst)
        if not self.loads:
            raise NoPack("nothing to pack")
        if dep_w & ind_w:
            raise NoPack("a register written by both parts")
        if any(r in opaque for x, _ in seq if isinstance(x, Op) for r in x.srcs + x.msrc):
            raise NoPack("reads a table fetch's register")
        shared = {r for x in dep for r in x.msrc if r in ind_w}
        if shared:                    # make those masks in the carried part, and try again
            makers = {id(x) for x, _ in seq if isinstance(x, Op) and set(x.mdst) & shared}
            if makers <= held:
                raise NoPack("a mask from the packed part")
            return self.classify(tree, held | makers)
        outside = {r for r, is_def in events(tree, skip=self.loop) if not is_def}
        if ind_w & outside:
            raise NoPack("a packed value is read after the loop")
        self.dep, self.ind_w, self.written = dep, ind_w, written

    # -- the packed body ------------------------------------------------------------------------
    def body(self, items, s=None, conds=()):
        """The packed form of `items`; conds: the branch conditions (in the loop's counter) the
        items run under, which a prefetch of their loads repeats."""
        out, k = [], 0
        dep = {id(x) for x in self.dep}
        while k < len(items):
            it = items[k]
            k += 1
            if isinstance(it, Op):
                if id(it) not in dep:
                    out.append(self.packed_op(it))
            elif isinstance(it, MV) and self.walked(items, k - 1):
                out += self.packed_walk(it, self.walked(items, k - 1), s, conds)
                k += 3
            elif isinstance(it, MV):
                out += self.packed_load(it, self.chain_ops(items, k - 1), s, conds)
                k += 3
            elif isinstance(it, Call):
                (sp, off), = it.offsets.items()
                self.groups += [compare(Paren(self.at(off, c)), "==", binary("+", Paren(self.at(off, 0)), 2 * c))
                                for c in range(1, WAYS)]
                op = it.body[0]
                out.append(Call([replace(op, text=op.text.replace(" {d0}", "v {d0}"))], {sp: self.at(off, 0)},
                                it.name))
            elif it.cond == self.last:
                continue
            elif it.cond == negation(self.last):
                out += self.body(it.then, s, conds)
            elif self.fetch(it):
                out += subst([it], self.loop.reg, binary("*", WAYS, self.q, gap=""))
            else:
                if self.loop.reg.name in it.cond.regs():
                    truth = lambda c: Paren(compare(Paren(self.at(it.cond, c)), "!=", 0))
                    self.groups += [compare(truth(c), "==", truth(0)) for c in range(1, WAYS)]
                # what an arm needs of the group's passes, it needs when the group takes it
                taken = Paren(self.at(it.cond, 0))
                arms = []
                for arm, when in ((it.then, taken), (it.orelse, negation(taken))):
                    outer, self.groups = self.groups, []
                    arms.append(self.body(arm, s, conds + ((it.cond,) if when is taken else (negation(it.cond),))))
                    needs, self.groups = self.groups, outer
                    if needs:
                        self.groups.append(Paren(any_of([negation(when), Paren(all_of(needs))])))
                out.append(SeqIf(self.at(it.cond, 0), *arms))
        return out

    def per_cycle(self, x: Op) -> bool:
        """Whether x reads nothing at cycle 0 only ({u<i>}) but a walked block read's word: packed,
        cycle c holds pass 4q + c's word there."""
        return all(x.srcs[int(i)] in self.walked_regs for i in re.findall(r"\{u(\d+)\}", x.text))

    def packed_op(self, op: Op) -> Op:
        """A lane-wise op on four passes: registers from before the loop at cycle 0, a walked
        read's words cycle by cycle."""
        text = op.text
        for i, r in enumerate(op.srcs):
            if r not in self.written:
                text = text.replace(f"{{s{i}}}", f"{{u{i}}}")
            elif r in self.walked_regs:
                text = text.replace(f"{{u{i}}}", f"{{s{i}}}")
        return replace(op, text=text)

    def packed_load(self, mv: MV, ops, s=None, conds=()) -> list:
        """Four passes' shares, pass 4q + c's to L1BM offset c P, so one l1bmd gives it cycle c.

        With a buffer set s (the group's number mod depth), the MVs were issued depth - 1 groups
        earlier (issue) into that set's areas under its own tag: here only the wait and the moves."""
        wait, _, l1 = ops
        load = len(self.staged)             # its index among the loop's staged loads
        if s is None:
            return [moved(mv, area, self.at(mv.d_offset, c)) for c, area in enumerate(self.lc_areas(mv.chain[1]))] \
                + [wait] + self.moves(mv, None, load, l1.line) + [l1]
        self.staged.append((mv, conds, l1.line))
        if self.pipelined and not conds:    # the previous group's block moved it to L1BM (prime)
            lb, home = mv.chain[2], self.home.get(load, mv.chain[2])
            return [l1 if home == lb else replace(l1, text=l1.text.replace(f"$lb{lb} ", f"$lb{home} "),
                                                  mem=(("r", "lb", home, home + WAYS * self.lay.pe_l1b),))]
        return [Op(f"wait i{self.tag(load, s)}", "wait", line=wait.line)] + self.moves(mv, s, load, l1.line) + [l1]

    def packed_walk(self, mv: MV, run, s=None, conds=()) -> list:
        """A walked block read on four passes: pass 4q + c's block to L2BM area c and L1BM area
        h_c (the first codegen's, three more of their own), then one l1bmp a cycle, each under a
        fixed write mask, cycle c's at h_c - c: at the Call's offset it reads word h_c + offset.
        The four passes' offsets in their blocks must agree (a pitch of whole blocks; else the
        group runs the original body)."""
        wait, l2bmb, call = run
        _, lc, lb = mv.chain
        load = len(self.staged)
        (off,) = call.offsets.values()
        self.groups += [compare(Paren(self.at(off, c)), "==", Paren(self.at(off, 0))) for c in range(1, WAYS)]
        areas = self.lc_areas(lc, s, load)
        if load not in self.walks:     # (room below each for the shifted reads' other cycles)
            try:
                self.walks[load] = [lb] + [self.alloc_lb(72) + 4 for _ in range(WAYS - 1)]
            except Exception:
                raise NoPack("no L1BM left for a walked read") from None
        homes = self.walks[load]
        if s is None:
            out = [moved(mv, area, self.at(mv.d_offset, c)) for c, area in enumerate(areas)] + [wait]
        else:
            self.staged.append((mv, conds, wait.line))
            out = [Op(f"wait i{self.tag(load, s)}", "wait", line=wait.line)]
        out += [Op(f"l2bmb $lc{a} $lb{h}", "l2bm", line=l2bmb.line, mem=(("r", "lc", a, a + 64), ("w", "lb", h, h + 64)))
                for a, h in zip(areas, homes)]
        read = call.body[0]
        reads = [replace(read, text=f"l1bmp $lb{h - c} {{d0}}" + (f"/{''.join('1' if i == c else '0' for i in range(WAYS))}"
                                                                   if c else ""),
                         mem=(("r", "lb", h - 3, h + 68),), partial=bool(c), srcs=read.dsts if c else read.srcs)
                 for c, h in enumerate(homes)]
        return out + [Call(reads, {"lb": self.at(off, 0)}, call.name)]

    def moves(self, mv: MV, s, load: int, line) -> list:
        """Staged load `load`'s four passes' shares from its L2BM areas (of buffer set s) to L1BM
        offsets 0, P, 2P, 3P."""
        lb, P, N = self.home.get(load, mv.chain[2]), self.lay.pe_l1b, self.lay.l1b
        return [Op(f"l2bmd $lc{area} $lb{lb + P * c}", "l2bm", line=line,
                   mem=(("r", "lc", area, area + 32 * N), ("w", "lb", lb + P * c, lb + P * c + 32)))
                for c, area in enumerate(self.lc_areas(mv.chain[1], s, load))]

    def pipelines(self) -> bool:
        """Whether the staged loads allow software pipelining.  Those under no branch are moved
        ahead (a branch would split the block); codegen reuses one L1BM area for loads one after
        another, so each of those gets an area of its own (self.home).  A load under a branch
        (an odd shift's second half, which keeps its moves in its group) may share an area only
        with loads before it, whose l1bmds have read it by then."""
        span = WAYS * self.lay.pe_l1b
        apart = lambda a, b: abs(a - b) >= span
        taken = []
        for i, (mv, conds, _) in enumerate(self.staged):
            if self.in_group(i):
                continue
            if i not in self.home:
                lb = mv.chain[2]
                if not all(apart(lb, t) for t in taken):
                    if self.alloc_lb is None:
                        return False
                    try:
                        lb = self.alloc_lb(span)
                    except Exception:        # L1BM is full
                        return False
                self.home[i] = lb
            taken.append(self.home[i])
        if not taken:
            return False
        return all(not conds or i in self.walks
                   or all(self.in_group(j) or apart(mv.chain[2], self.home[j]) for j in range(i + 1, len(self.staged)))
                   for i, (mv, conds, _) in enumerate(self.staged))

    def prime(self, s: int, work=()) -> list:
        """The L2BM -> L1BM moves of the group whose MVs went to buffer set s, with `work`, the
        group before it (software pipelining): its waits first (MVs issued groups ago), so that
        the moves run beside the work's arithmetic."""
        primed = [(i, mv, line) for i, (mv, _, line) in enumerate(self.staged) if self.moved_ahead(i)]
        return [Op(f"wait i{self.tag(i, s)}", "wait", line=line) for i, _, line in primed] \
            + list(work) + [op for i, mv, line in primed for op in self.moves(mv, s, i, line)]

    def tag(self, load: int, s: int) -> int:
        """The tags of the buffer sets: abi.PACK_TAGS (codegen's own cycle through abi.CODEGEN_TAGS)."""
        if (load + 1) * self.depth > len(PACK_TAGS):
            raise NoPack("more staged loads than prefetch tags")
        return PACK_TAGS.start + self.depth * load + s

    def under(self, conds, group: SeqExpr, items: list) -> list:
        """items under the branch conditions conds, taken at the first pass of group `group`."""
        if not conds:
            return items
        first = binary("*", WAYS, Paren(group), gap="")
        return [SeqIf(all_of(Paren(at(c, self.loop.reg, first)) for c in conds), items)]

    def in_group(self, i: int) -> bool:
        """Whether staged load i keeps its L2BM -> L1BM moves in its own group when pipelined
        (under a branch, which would split the block before; a walked read)."""
        return bool(self.staged[i][1]) or i in self.walks

    def moved_ahead(self, i: int) -> bool:
        """Whether staged load i's L2BM -> L1BM moves run in the group before its own (prime)."""
        return self.pipelined and not self.in_group(i)

    def issue(self, group: SeqExpr, s: int, ahead=None) -> list:
        """The MVs of group `group` (a sequencer expression) into set s: each staged load's four
        passes' shares, under the branches it runs under (ahead True / False: only the loads
        moved ahead / the others)."""
        out = []
        for i, (mv, conds, _) in enumerate(self.staged):
            if ahead is not None and ahead != self.moved_ahead(i):
                continue
            out += self.under(conds, group, [
                moved(mv, area, at(mv.d_offset, self.loop.reg, counter(Paren(group), c)), self.tag(i, s))
                for c, area in enumerate(self.lc_areas(mv.chain[1], s, i))])
        return out

    def drop(self, s: int) -> list:
        """Waits for this group's prefetched transfers, when it runs the original body instead."""
        out = []
        for i, (_, conds, _) in enumerate(self.staged):
            if not self.moved_ahead(i):          # (prime waited for those)
                out += self.under(conds, self.q, [Op(f"wait i{self.tag(i, s)}", "wait")])
        return out

    def replicated(self) -> list:
        """The carried-dependent ops once per pass of the group, reading cycle c of packed values.

        Only cycle 0 of a carried value holds work-items, so an op without masks reads and writes
        cycle 0's long word in every cycle (plain operands): the same result, which the emulator
        computes once (its cycle-uniform path)."""
        out = []
        for c in range(WAYS):
            for op in self.dep:
                text = op.text
                for i, r in enumerate(op.srcs):
                    if r in self.ind_w:         # {u<i>} meant cycle 0 of an unpacked value
                        text = text.replace(f"{{s{i}}}", f"{{s{i}c{c}}}").replace(f"{{u{i}}}", f"{{s{i}c{c}}}")
                plain = re.sub(r"\{d(\d+)\}", r"{d\1c0}", re.sub(r"\{s(\d+)\}", r"{u\1}", text))
                if not (op.msrc or op.mdst or op.partial or op.text.startswith(NOT_LANEWISE)
                        or re.search(r"\$[a-z]+\d*v", plain)):
                    text = plain
                out.append(replace(op, text=text))
        return out

    def loops(self, depth: int) -> list:
        """The packed loop and the tail loop.  With depth > 1, group q + depth - 1's MVs are issued
        before group q waits for its own (issued depth - 1 groups earlier): depth sets of staging
        areas and tags, taken in turn by q mod depth, so the transfers of the next groups overlap
        this group's work.  A group that runs the original body still waits for (and drops) its
        own prefetch."""
        L, q = self.loop, self.q
        n = binary("/", Paren(binary("-", Paren(L.stop), 1)), WAYS)        # the packed groups
        tail = SeqLoop(L.reg, binary("*", WAYS, Paren(n)), L.stop, clone(L.body, {}, []))
        self.depth = depth
        # software pipelining: a group's L2BM -> L1BM moves run at the end of the group before it,
        # beside its arithmetic (pipelines() says where)
        self.pipelined = False
        if depth > 1:
            self.staged = []
            self.body(L.body, 0)
            self.pipelined = self.pipelines()
        more = compare(binary("+", q, 1, gap=""), "<", n)                  # a packed group follows
        # group q + depth - 1's MVs go to the areas group q - 1 read; where a load is moved ahead
        # (pipelined), group q's areas were read by the block before: group q + depth's go there
        kinds = (False, True) if self.pipelined else (None,)

        def lead(only):
            """How many groups ahead the MVs of the loads `only` selects (issue) go out."""
            return depth if only else depth - 1

        def fresh():
            """The packed part's values get registers of their own (they live in this body only), so
            cleanup.fold_table_reads sees its reads' one writer and can fold them into their readers."""
            return {r: MaskReg() if isinstance(r, MaskReg) else VReg(r.hint) for r in self.ind_w}
        bodies = []
        for s in range(depth) if depth > 1 else (None,):
            self.groups, self.staged = [], []
            work = self.body(L.body, s) + self.replicated()
            packed = clone(work, fresh(), [])
            if self.pipelined:      # (the branch first: each arm one block, with registers of its own)
                packed = [SeqIf(more, self.prime((s + 1) % depth, packed), clone(work, fresh(), []))]
            if self.groups:
                first = binary("*", WAYS, q)
                one = SeqLoop(L.reg, first, binary("+", first, WAYS), clone(L.body, {}, []))
                drop = self.drop(s) if depth > 1 else []
                after = [SeqIf(more, self.prime((s + 1) % depth))] if self.pipelined else []
                packed = [SeqIf(all_of(self.groups), packed, drop + [one] + after)]
            if depth > 1:
                for only in kinds:
                    ahead = binary("+", q, lead(only), gap="")
                    mvs = self.issue(ahead, (s + lead(only)) % depth, only)
                    packed = ([SeqIf(compare(ahead, "<", n), mvs)] if mvs else []) + packed
            bodies.append(packed)
        if depth == 1:
            return self.unless_disagreeing([SeqLoop(q, Num(0), n, bodies[0]), tail])
        if not self.staged:
            raise NoPack("nothing to prefetch")
        turn = bodies[-1]
        for s in range(depth - 2, -1, -1):
            turn = [SeqIf(compare(binary("%", q, depth), "==", s), bodies[s], turn)]
        first = [SeqIf(compare(0, "<", n), self.prime(0))] if self.pipelined else []
        starts = [SeqIf(compare(g, "<", n), [mv for only in kinds[::-1] if g < lead(only) for mv in self.issue(Num(g), g, only)])
                  for g in range(max(map(lead, kinds)))]
        return self.unless_disagreeing(starts + first + [SeqLoop(q, Num(0), n, turn), tail])

    def unless_disagreeing(self, packed: list) -> list:
        """packed, where the first group's passes agree (else the loop as it was): a group that
        disagrees runs the original body after its prefetch, which costs more than the loop did
        unpacked, and where the first does, as good as every one does (a walked read's pitch of
        part of a block, an odd shift's parity, alternating pass by pass)."""
        if not self.groups:
            return packed
        L = self.loop
        return [SeqIf(at(all_of(self.groups), self.q, Num(0)), packed,
                      [SeqLoop(L.reg, L.start, L.stop, clone(L.body, {}, []))])]
