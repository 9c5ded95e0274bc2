"""Data movement between the levels of the tree, as index arithmetic.

Each transfer family is a layout: which L1BM (or L2BM) long word each PE
cycle, or each L1B, reads or writes.  Every layout of one step covers one
contiguous run of addresses, so a transfer is a slice of the L1BM/L2BM
arrays reshaped into the PEs' (cycle, PE) order: no gather, no scatter.
Reductions go through ``reduce``, the model of the result reduce network (RRN).

L1BM <-> PE, per L1B of M MABs x 4 PEs, k long words per PE cycle (ll: k=2).
A cycle's k*w long words (w: what the l form moves per cycle) are one block, part j
of every PE before part j+1 (PFN's DL programs and hello world need lb[a+8c+4j+p]):
  p   (l1bmp)   every PE:            a + k*c + j                            run 4k
  m   (l1bmm)   PE p of every MAB:   a + 4k*c + 4*j + p                     run 16k
  m4  (l1bmm4)  PE p of MAB m:       a + k*M*c + M*j + 4*(m>>2) + p         run 4kM
  d   (l1bmd)   PE i of the L1B:     a + k*4M*c + 4M*j + i                  run 16kM
L2BM <-> L1BM, per L2B of N L1Bs, one step moves:
  l2bmb/l2bm@/l2bmr  64 long words:  a + j
  l2bmd              L1B i: $lb[b + 8c + j] <-> $lc[a + 8N*c + 8i + j], j < 8
"""
from __future__ import annotations

import numpy as np

from .numbers import WIDTH, lanes, pack
from .semantics import from_float, lanes_le, pack_le, sm_key, to_float

L2BM_STEP_LONGS = 64     # long words one l2bmb / l2bm@ / l2bmr step moves
L2BMD_PER_CYCLE = 8      # long words per L1BM per cycle for l2bmd
MV_UNIT = 64             # MV sizes are multiples of this many long words


def run_length(kind: str, k: int, mabs: int) -> int:
    """Long words of L1BM one step of an L1BM<->PE layout covers."""
    return {"p": 4 * k, "m": 16 * k, "m4": 4 * k * mabs, "d": 16 * k * mabs}[kind]


# -- the reduce network ----------------------------------------------------------

def reduce(data: np.ndarray, axis: int, rop: str) -> np.ndarray:
    """Reduce uint64 long words along axis with an RRN op (dfadd, fmax, liadd, land, ...)."""
    prec, op = rop[0], rop[1:]
    op = {"band": "and", "bor": "or"}.get(op, op)   # the SDM's bitwise names; and/or are bitwise here too
    w = WIDTH[prec]
    if op == "fadd":
        x = to_float(data, prec).astype(np.float64)
        s = x.sum(axis=axis)
        return from_float(s, prec)
    if op in ("max", "min"):             # sign-magnitude integer order, no normalisation
        b = lanes(data, w)
        key = sm_key(b, w)
        pick = key.argmax(axis=axis) if op == "max" else key.argmin(axis=axis)
        r = np.take_along_axis(b, np.expand_dims(pick, axis), axis=axis)
        return pack(np.squeeze(r, axis=axis))
    # wrapping sums and bitwise ops: exact in any order and lane by lane, so they run on the lanes
    # in memory order with the reduced axis moved outermost (one contiguous copy): numpy then adds
    # whole rows, several times faster than reducing a middle axis of small strided blocks
    b = np.ascontiguousarray(np.moveaxis(lanes_le(data, w), axis, 0))
    ufunc = {"iadd": np.add, "and": np.bitwise_and}.get(op, np.bitwise_or)
    return pack_le(ufunc.reduce(b, axis=0, dtype=b.dtype))


# -- L1BM <-> PE ------------------------------------------------------------------

def _k(op) -> int:
    return 2 if op.width == "ll" else 1


def _down(e, ctx, kind: str):
    """L1BM (or $lbi) to PE destinations in layout kind (p, m, m4, d)."""
    src = e.srcs[0]
    k = _k(src)
    m = ctx.machine
    mabs, nl = m.mab_per_l1b, m.n_l1b
    run = ctx.l1b_mem(src)[:, ctx.lb_range(src, run_length(kind, k, mabs), write=False)]
    if kind == "d":      # (l1b, c, j, i) to PE i
        out = np.empty((k, 4, nl, mabs, 4), dtype=np.uint64)  # j, cycle, l1b, mab, PE in MAB
        out.reshape(k, 4, nl, 4 * mabs)[...] = run.reshape(nl, 4, k, 4 * mabs).transpose(2, 1, 0, 3)
        if e.mab_shift:  # l1bmd+1: MAB m takes MAB m-1's share (l1bmd-1: m+1's), wrapping in the L1B
            out = np.roll(out, e.mab_shift, axis=3)
        ctx.count_bytes("l1bm_pe", "down", out.size * 8)
        out = out.reshape(k, 4, m.n_pe)                        # k, cycle, P
        ctx.write_all(e, out[0], out[1] if k == 2 else None, None)
        return
    # a broadcast: the values are views of a private copy of the run, never materialised (they are
    # (cycle, l1b, ...) shaped, P elements per cycle: the executor stores them, or flattens them to
    # (cycle, P) where it has to)
    out = _spread(run.copy(), kind, k, nl, mabs)      # (copy: C order)
    ctx.count_bytes("l1bm_pe", "down", out.size * 8)
    ctx.write_all(e, out[0], out[1] if k == 2 else None, None)


def _spread(run: np.ndarray, kind: str, k: int, nl: int, mabs: int) -> np.ndarray:
    """The broadcast of a contiguous private run in layout kind (p, m, m4), shaped (j, cycle, l1b,
    ...): what np.broadcast_to of the transposed run gives, built by the ndarray constructor from
    the strides (a tenth of broadcast_to's cost, which a step of compiled code pays every time).
      p:  (l1b, c, j) to every PE                        -> (k, 4, nl, mabs, 4)
      m:  (l1b, c, j, p) to PE p of every MAB            -> (k, 4, nl, mabs, 4)
      m4: (l1b, c, j, q, p) to PE p of MABs 4q..4q+3     -> (k, 4, nl, mabs // 4, 4, 4)"""
    b = run.itemsize
    if kind == "p":
        shape, strides = (k, 4, nl, mabs, 4), (b, b * k, b * 4 * k, 0, 0)
    elif kind == "m":
        shape, strides = (k, 4, nl, mabs, 4), (4 * b, 16 * b * k // 4, 16 * b * k, 0, b)
    else:
        q = mabs // 4
        shape, strides = (k, 4, nl, q, 4, 4), (4 * q * b, 4 * k * q * b, 16 * k * q * b, 4 * b, 0, b)
    out = np.ndarray(shape, run.dtype, run, 0, strides)
    out.flags.writeable = False
    return out


def _pe_data(e, ctx) -> np.ndarray:
    """The source's long words as (cycle, L1B, MAB, PE in MAB, j): what goes up into L1BM."""
    m = ctx.machine
    k = _k(e.dsts[0])
    v0, v1 = ctx.read(e.srcs[0], e)
    parts = [v0] if k == 1 else [v0, v1 if v1 is not None else ctx.zeros()]
    return np.stack(parts, -1).reshape(4, m.n_l1b, m.mab_per_l1b, 4, k)


def _up(e, ctx, kind: str, vals: np.ndarray):
    """PE values (L1B, ...) up into L1BM in address order, layout kind (m, m4, d)."""
    m = ctx.machine
    dst = e.dsts[0]
    vals = vals.reshape(m.n_l1b, -1)
    where = ctx.lb_range(dst, run_length(kind, _k(dst), m.mab_per_l1b), write=True)
    ctx.count_bytes("l1bm_pe", "up", vals.nbytes)
    ctx.lb_write(dst, where, vals)


def l1bmp(e, ctx):
    _down(e, ctx, "p")


def l1bmm(e, ctx):
    _down(e, ctx, "m")


def l1bmm4(e, ctx):
    _down(e, ctx, "m4")


def l1bmd(e, ctx):
    """Distribute when the source is $lb, gather when the destination is."""
    if e.srcs[0].space in ("lb", "lbi"):
        return _down(e, ctx, "d")
    _up(e, ctx, "d", _pe_data(e, ctx).transpose(1, 0, 4, 2, 3))                 # l1b, c, j, i


def l1bmm_at(e, ctx):
    """l1bmm@<sel>: MAB sel's PEs."""
    _up(e, ctx, "m", _pe_data(e, ctx)[:, :, e.sel].transpose(1, 0, 3, 2))       # l1b, c, j, p


def l1bmm4_at(e, ctx):
    """l1bmm4@<sel>: the MABs m with m & 3 == sel."""
    _up(e, ctx, "m4", _pe_data(e, ctx)[:, :, e.sel::4].transpose(1, 0, 4, 2, 3))  # l1b, c, j, q, p


def l1bmr(e, ctx):
    """Reduce over the L1B's MABs."""
    _up(e, ctx, "m", reduce(_pe_data(e, ctx), 2, e.rop).transpose(1, 0, 3, 2))


def l1bmr4(e, ctx):
    """Reduce over m & 3."""
    data = _pe_data(e, ctx)
    q = data.reshape(4, data.shape[1], data.shape[2] // 4, 4, 4, data.shape[4])   # cycle, l1b, q, r, p, j
    _up(e, ctx, "m4", reduce(q, 3, e.rop).transpose(1, 0, 4, 2, 3))


# -- L2BM <-> L1BM -----------------------------------------------------------------

def l2bmb(e, ctx):
    """Broadcast 64 long words of each L2BM to its L1Bs (of the set)."""
    a, b = e.srcs[0], e.dsts[0]
    run = ctx.state.l2bm[:, ctx.lc_range(a, L2BM_STEP_LONGS, write=False)]
    _to_l1b_set(e, ctx, b, run)


def l2bmd(e, ctx):
    """Distribute (L2BM source) or gather (L1BM source): L1B i's $lb[b+8c+j] <-> $lc[a+8N*c+8i+j]."""
    m = ctx.machine
    n1, n2 = m.l1b_per_l2b, m.n_l2b
    per_l1b = 4 * L2BMD_PER_CYCLE
    if e.srcs[0].space == "lb":                            # gather: every L1B's 32 long words up
        b, a = e.srcs[0], e.dsts[0]
        lb3 = ctx.state.l1bm.reshape(n2, n1, -1)
        vals = lb3[:, :, ctx.lb_range(b, per_l1b, write=False)]          # l2b, i, (c, j)
        vals = vals.reshape(n2, n1, 4, L2BMD_PER_CYCLE).transpose(0, 2, 1, 3).reshape(n2, -1)
        ctx.count_bytes("l2bm_l1bm", "up", vals.nbytes)
        ctx.lc_write(ctx.lc_range(a, per_l1b * n1, write=True), vals)
        return
    a, b = e.srcs[0], e.dsts[0]
    vals = ctx.state.l2bm[:, ctx.lc_range(a, per_l1b * n1, write=False)]  # l2b, (c, i, j)
    vals = vals.reshape(n2, 4, n1, L2BMD_PER_CYCLE).transpose(0, 2, 1, 3).reshape(n2 * n1, -1)
    ctx.count_bytes("l2bm_l1bm", "down", vals.nbytes)
    ctx.lb_write(b, ctx.lb_range(b, per_l1b, write=True), vals)


def l2bmi(e, ctx):
    """L1BM to the L1BMs of a set, through the L2B: the set's lowest L1B is the source."""
    m = ctx.machine
    n1, n2 = m.l1b_per_l2b, m.n_l2b
    src, b = e.srcs[0], e.dsts[0]
    lb3 = ctx.state.l1bm.reshape(n2, n1, -1)
    run = lb3[:, _l1b_set(e, ctx)[0], ctx.lb_range(src, L2BM_STEP_LONGS, write=False)]
    _to_l1b_set(e, ctx, b, run)


def _l1bm_up_run(e, ctx):
    """64 long words of every L1BM, (L2B, L1B, 64), for an L1BM -> L2BM step."""
    m = ctx.machine
    lb3 = ctx.state.l1bm.reshape(m.n_l2b, m.l1b_per_l2b, -1)
    return lb3[:, :, ctx.lb_range(e.srcs[0], L2BM_STEP_LONGS, write=False)]


def l2bm_at(e, ctx):
    """l2bm@<sel>: L1B sel's 64 long words to its L2BM."""
    vals = _l1bm_up_run(e, ctx)[:, e.sel]
    ctx.count_bytes("l2bm_l1bm", "up", vals.nbytes)
    ctx.lc_write(ctx.lc_range(e.dsts[0], L2BM_STEP_LONGS, write=True), vals)


def l2bmr(e, ctx):
    """Reduce the L2B's L1Bs' 64 long words into its L2BM."""
    src = _l1bm_up_run(e, ctx)
    ctx.count_bytes("l2bm_l1bm", "up", src.nbytes)
    vals = reduce(src, 1, e.rop)
    ctx.lc_write(ctx.lc_range(e.dsts[0], L2BM_STEP_LONGS, write=True), vals)


def l2bmr2(e, ctx):
    """Reduce L1B pairs (2k, 2k+1), pair k at a + 64k."""
    src = _l1bm_up_run(e, ctx)
    ctx.count_bytes("l2bm_l1bm", "up", src.nbytes)
    n2, n1 = src.shape[:2]
    vals = reduce(src.reshape(n2, n1 // 2, 2, L2BM_STEP_LONGS), 2, e.rop).reshape(n2, -1)
    ctx.lc_write(ctx.lc_range(e.dsts[0], vals.shape[1], write=True), vals)


def _l1b_set(e, ctx) -> list:
    """The L1Bs (in each L2B) an '@<set>' names, all of them without one; a fault names a missing L1B."""
    n1 = ctx.machine.l1b_per_l2b
    if e.l1bset is None:
        return list(range(n1))
    if e.l1bset[-1] >= n1:
        raise ctx.fault(f"'{e.text}': L1B {e.l1bset[-1]} does not exist ({ctx.machine.name} has {n1} per L2B)")
    return list(e.l1bset)


def _to_l1b_set(e, ctx, b, run):
    """Write each L2B's 64 long words run (L2B, 64) to $lb[b..b+63] of the set's L1Bs; the others
    keep theirs (read now, written back with the rest at the step's end)."""
    m = ctx.machine
    n2, n1 = m.n_l2b, m.l1b_per_l2b
    where = ctx.lb_range(b, L2BM_STEP_LONGS, write=True)
    keep = _l1b_set(e, ctx)
    vals = np.empty((n2, n1, L2BM_STEP_LONGS), dtype=np.uint64)
    if len(keep) < n1:
        vals[...] = ctx.state.l1bm.reshape(n2, n1, -1)[:, :, where]
        vals[:, keep] = run[:, None, :]
    else:
        vals[...] = run[:, None, :]
    ctx.count_bytes("l2bm_l1bm", "down", L2BM_STEP_LONGS * 8 * len(keep) * n2)
    ctx.lb_write(b, where, vals.reshape(n2 * n1, -1))


# -- DRAM / PDM <-> L2BM (MV) ----------------------------------------------------------
# An MV row's semantics plans the statement's transfers: jobs, each with the spans it reads and
# writes relative to the source (reads) and destination (writes) addresses of the call, the links
# it crosses and move(a, b), the data movement.  The plan depends only on the statement, so the
# executor makes it once per run (mv_jobs) and times it through its observers.

MVP_DEFAULT_L2B = 0       # the L2BM an mvp names by '$lc<addr>' with no '@' (docs/isa.md)


class MVJob:
    """One transfer of an MV statement, or the same transfer made by every group at once (lanes:
    one independent link per group, as an MV naming no group makes).  What it reads and writes is
    (space, units, lo, hi): a frozenset of memory units and a span relative to the source (reads)
    or the destination (writes) address; the data move is move(a, b).  lc_in / lc_out are the
    distinct L2BM spans it reads and writes (the PE side's race checks ignore the unit), and
    lc_fresh those it reads that no earlier job of its statement reads (each is hazard-checked once)."""

    __slots__ = ("links", "lanes", "kind", "reads", "writes", "move", "units", "lc_in", "lc_out", "lc_fresh")

    def __init__(self, links, kind, reads, writes, move, lanes=False):
        self.links, self.lanes, self.kind, self.move = tuple(links), lanes, kind, move
        self.reads = tuple((sp, frozenset(u), lo, hi) for sp, u, lo, hi in reads)
        self.writes = tuple((sp, frozenset(u), lo, hi) for sp, u, lo, hi in writes)
        self.units = frozenset((sp, u) for sp, us, _, _ in self.reads + self.writes for u in us)
        self.lc_in = tuple(dict.fromkeys((lo, hi) for sp, _, lo, hi in self.reads if sp == "lc"))
        self.lc_out = tuple(dict.fromkeys((lo, hi) for sp, _, lo, hi in self.writes if sp == "lc"))
        self.lc_fresh = self.lc_in


def mv_jobs(expr, ctx) -> list:
    """The transfers of an MV expression (its row's planner), each L2BM span it reads fresh once."""
    jobs = expr.defn.sem(expr, ctx)
    seen = set()
    for job in jobs:
        job.lc_fresh = tuple(span for span in job.lc_in if span not in seen)
        seen.update(job.lc_in)
    return jobs


def _as_lanes(jobs: list) -> list:
    """Per-group jobs with one link each and the same spans, as one job whose links are lanes."""
    if len(jobs) < 2:
        return jobs

    def merged(parts):
        spans = {}
        for sp, us, lo, hi in parts:
            spans.setdefault((sp, lo, hi), set()).update(us)
        return [(sp, us, lo, hi) for (sp, lo, hi), us in spans.items()]
    moves = [j.move for j in jobs]

    def move(a, b):
        for mv in moves:
            mv(a, b)
    return [MVJob([j.links[0] for j in jobs], jobs[0].kind, merged(r for j in jobs for r in j.reads),
                  merged(w for j in jobs for w in j.writes), move, lanes=True)]


def _link(e) -> str:
    return "pdm_l2bm" if "p" in (e.srcs[0].space, e.dsts[0].space) else "dram_l2bm"


def _groups(op, ctx):
    """The group an operand names, or every group."""
    return [op.group] if op.group is not None else range(ctx.machine.groups)


def _split(e, ctx, parts: int, over: str) -> int:
    """n long words split evenly over `parts` memories, or a fault."""
    if e.size % parts:
        raise ctx.fault(f"{e.defn.name}/n{e.size}: the size must split evenly over {parts} {over}")
    return e.size // parts


def mvp(e, ctx) -> list:
    """Unicast between DRAM/PDM and one L2BM, PDM <-> DRAM or PDM -> PDM; between two groups over
    the group bus; no group: every group, as lanes."""
    src, dst, n = e.srcs[0], e.dsts[0], e.size
    link = _link(e)
    lc = dst if dst.space == "lc" else src if src.space == "lc" else None
    l = MVP_DEFAULT_L2B if lc is None or lc.l2b is None else lc.l2b
    kind = "dram-pdm" if lc is None else ("down" if lc is dst else "up")
    again = src.space == dst.space       # PDM -> PDM: the two spans may overlap, so copy the source

    def unit(op, g):
        return [(g, l) if op.space == "lc" else g]

    def copy(gs, gd):
        if again:
            return lambda a, b: ctx.mv_write(dst, gd, l, b, ctx.mv_read(src, gs, l, a, n).copy())
        return lambda a, b: ctx.mv_write(dst, gd, l, b, ctx.mv_read(src, gs, l, a, n))
    # the assembler made both operands name a group (one group to another), or neither
    pairs = [(src.group, dst.group)] if src.group is not None else [(g, g) for g in range(ctx.machine.groups)]
    jobs = []
    for gs, gd in pairs:
        links = [(link, gs)] + ([("group_bus", 0), (link, gd)] if gs != gd else [])
        jobs.append(MVJob(links, kind, [(src.space, unit(src, gs), 0, n)], [(dst.space, unit(dst, gd), 0, n)],
                          copy(gs, gd)))
    return _as_lanes(jobs)


def _broadcast(e, ctx, board: bool) -> list:
    src, dst, n = e.srcs[0], e.dsts[0], e.size
    m = ctx.machine
    jobs = []
    for g in _groups(src, ctx):
        targets = [(g2, l) for g2 in (range(m.groups) if board else [g]) for l in range(m.l2b_per_group)]

        def move(a, b, g=g, targets=targets):
            data = ctx.mv_read(src, g, 0, a, n)
            for g2, l in targets:
                ctx.mv_write(dst, g2, l, b, data)
        jobs.append(MVJob([(_link(e), g)] + ([("group_bus", 0)] if board else []), "broadcast",
                          [(src.space, [g], 0, n)], [("lc", targets, 0, n)], move))
    return jobs


def mvb(e, ctx) -> list:
    """One group's DRAM/PDM to every L2BM of the board, over the group bus."""
    return _broadcast(e, ctx, True)


def mvb2(e, ctx) -> list:
    """A group's DRAM/PDM to both of its L2BMs."""
    return _broadcast(e, ctx, False)


def mvb4(e, ctx) -> list:
    """Part q (n/groups long words) of one group's memory to both L2BMs of group q."""
    src, dst, n = e.srcs[0], e.dsts[0], e.size
    m = ctx.machine
    part = _split(e, ctx, m.groups, "groups")
    g = src.group
    targets = [(q, l) for q in range(m.groups) for l in range(m.l2b_per_group)]

    def move(a, b):
        data = ctx.mv_read(src, g, 0, a, n)
        for q, l in targets:
            ctx.mv_write(dst, q, l, b, data[q * part:(q + 1) * part])
    return [MVJob([(_link(e), g), ("group_bus", 0)], "broadcast", [(src.space, [g], 0, n)],
                  [("lc", targets, 0, part)], move)]


def mvd(e, ctx) -> list:
    """A group's n long words over its L2BMs, n/L2B each in L2B order (or gathered back); with no
    L2BM operand, one group's PDM over the groups' DRAMs, n/groups each (or gathered back)."""
    src, dst, n = e.srcs[0], e.dsts[0], e.size
    m = ctx.machine
    G, L = m.groups, m.l2b_per_group
    link = _link(e)
    if "lc" not in (src.space, dst.space):
        part = _split(e, ctx, G, "groups' DRAMs")
        g = (src if src.space == "p" else dst).group
        spread = src.space == "p"

        def move(a, b):
            for k in range(G):
                if spread:
                    ctx.mv_write(dst, k, 0, b, ctx.mv_read(src, g, 0, a + k * part, part))
                else:
                    ctx.mv_write(dst, g, 0, b + k * part, ctx.mv_read(src, k, 0, a, part))
        mine, theirs = [("p", [g], 0, n)], [("d", list(range(G)), 0, part)]
        return [MVJob([(link, g), ("group_bus", 0)], "distribute" if spread else "gather",
                      mine if spread else theirs, theirs if spread else mine, move)]
    part = _split(e, ctx, L, "L2BMs")
    down = dst.space == "lc"
    mem_op = src if down else dst
    lc = ctx.state.l2bm
    jobs = []
    for g in _groups(mem_op, ctx):
        rows = slice(g * L, (g + 1) * L)       # the group's L2BMs
        if down:       # one read of the group's share, cut into its L2BMs' parts
            def move(a, b, g=g, rows=rows):
                lc[rows, b:b + part] = ctx.mv_read(src, g, 0, a, n).reshape(L, part)
            reads, writes = [(src.space, [g], 0, n)], [("lc", [(g, l) for l in range(L)], 0, part)]
        else:
            def move(a, b, g=g, rows=rows):
                ctx.mv_write(dst, g, 0, b, lc[rows, a:a + part])
            reads, writes = [("lc", [(g, l) for l in range(L)], 0, part)], [(dst.space, [g], 0, n)]
        jobs.append(MVJob([(link, g)], "down" if down else "up", reads, writes, move))
    return _as_lanes(jobs)


def _reduce_into(e, ctx, board: bool) -> list:
    src, dst, n = e.srcs[0], e.dsts[0], e.size
    m = ctx.machine
    jobs = []
    for g in _groups(dst, ctx):
        sources = [(g2, l) for g2 in (range(m.groups) if board else [g]) for l in range(m.l2b_per_group)]

        def move(a, b, g=g, sources=sources):
            data = np.stack([ctx.mv_read(src, g2, l, a, n) for g2, l in sources])
            ctx.mv_write(dst, g, 0, b, reduce(data, 0, e.rop))
        jobs.append(MVJob([(_link(e), g)] + ([("group_bus", 0)] if board else []), "reduce",
                          [("lc", sources, 0, n)], [(dst.space, [g], 0, n)], move))
    return jobs


def mvr(e, ctx) -> list:
    """Reduce every L2BM of the board into one group's DRAM/PDM."""
    return _reduce_into(e, ctx, True)


def mvr2(e, ctx) -> list:
    """Reduce a group's two L2BMs into its DRAM/PDM."""
    return _reduce_into(e, ctx, False)


def mvr4(e, ctx) -> list:
    """Reduce each group q's L2BMs (n/groups long words) into part q of one group's n long words."""
    src, dst, n = e.srcs[0], e.dsts[0], e.size
    m = ctx.machine
    G, L = m.groups, m.l2b_per_group
    part = _split(e, ctx, G, "groups")
    g = dst.group
    sources = [(q, l) for q in range(G) for l in range(L)]

    def move(a, b):
        data = np.stack([ctx.mv_read(src, q, l, a, part) for q, l in sources])
        out = reduce(data.reshape(G, L, part), 1, e.rop).reshape(-1)
        ctx.mv_write(dst, g, 0, b, out)
    return [MVJob([(_link(e), g), ("group_bus", 0)], "reduce", [("lc", sources, 0, part)],
                  [(dst.space, [g], 0, n)], move)]
