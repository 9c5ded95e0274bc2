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
from .semantics import from_float, sm_key, to_float

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
    b = lanes(data, w)
    if op == "iadd":
        r = b.sum(axis=axis, dtype=b.dtype)
    elif op == "and":
        r = np.bitwise_and.reduce(b, axis=axis)
    else:  # or
        r = np.bitwise_or.reduce(b, axis=axis)
    return pack(r)


# -- L1BM <-> PE ------------------------------------------------------------------

def _k(op) -> int:
    return 2 if op.width == "ll" else 1


_DOWN = {"l1bmp": "p", "l1bmm": "m", "l1bmm4": "m4", "l1bmd": "d"}
_UP = {"l1bmd": "d", "l1bmm@": "m", "l1bmr": "m", "l1bmm4@": "m4", "l1bmr4": "m4"}


def l1bm_down(e, ctx):
    """l1bmp / l1bmm / l1bmm4 / l1bmd: L1BM (or $lbi) to PE destinations."""
    src = e.srcs[0]
    k = _k(src)
    kind = _DOWN[e.defn.name]
    m = ctx.machine
    mabs, nl = m.mab_per_l1b, m.n_l1b
    run = ctx.l1b_mem(src)[:, ctx.lb_range(src, run_length(kind, k, mabs), write=False)]
    out = np.empty((k, 4, nl, mabs, 4), dtype=np.uint64)      # j, cycle, l1b, mab, PE in MAB
    if kind == "p":      # (l1b, c, j) to every PE
        out[...] = run.reshape(nl, 4, k).transpose(2, 1, 0)[:, :, :, None, None]
    elif kind == "m":    # (l1b, c, j, p) to PE p of every MAB
        out[...] = run.reshape(nl, 4, k, 4).transpose(2, 1, 0, 3)[:, :, :, None, :]
    elif kind == "m4":   # (l1b, c, j, q, p) to PE p of the 4 MABs 4q..4q+3
        r = run.reshape(nl, 4, k, mabs // 4, 4).transpose(2, 1, 0, 3, 4)        # j, c, l1b, q, p
        out.reshape(k, 4, nl, mabs // 4, 4, 4)[...] = r[:, :, :, :, None, :]
    else:                # (l1b, c, j, i) to PE i
        out.reshape(k, 4, nl, 4 * mabs)[...] = run.reshape(nl, 4, k, 4 * mabs).transpose(2, 1, 0, 3)
        if e.mab_shift:  # l1bmd+1: MAB m takes MAB m-1's share (l1bmd-1: m+1's), wrapping in the L1B
            out = np.roll(out, e.mab_shift, axis=3)
    ctx.count_bytes("l1bm_pe", "down", out.size * 8)
    out = out.reshape(k, 4, m.n_pe)                            # k, cycle, P
    ctx.write_all(e, out[0], out[1] if k == 2 else None, None)


def l1bm_d(e, ctx):
    """l1bmd: distribute when the source is $lb, gather when the destination is."""
    if e.srcs[0].space in ("lb", "lbi"):
        return l1bm_down(e, ctx)
    return l1bm_up(e, ctx)


def l1bm_up(e, ctx):
    """l1bmm@ / l1bmm4@ / l1bmr / l1bmr4 / l1bmd (gather): PE values up into L1BM, in address order."""
    m = ctx.machine
    dst = e.dsts[0]
    k = _k(dst)
    v0, v1 = ctx.read(e.srcs[0], e)
    parts = [v0] if k == 1 else [v0, v1 if v1 is not None else ctx.zeros()]
    mabs, nl = m.mab_per_l1b, m.n_l1b
    data = np.stack(parts, -1).reshape(4, nl, mabs, 4, k)      # cycle, l1b, mab, p, j
    name = e.defn.name
    if name == "l1bmd":
        vals = data.transpose(1, 0, 4, 2, 3)                    # l1b, c, j, i
    elif name == "l1bmm@":
        vals = data[:, :, e.sel].transpose(1, 0, 3, 2)          # l1b, c, j, p
    elif name == "l1bmr":
        vals = reduce(data, 2, e.rop).transpose(1, 0, 3, 2)
    elif name == "l1bmm4@":
        vals = data[:, :, e.sel::4].transpose(1, 0, 4, 2, 3)    # l1b, c, j, q, p
    else:  # l1bmr4
        q = data.reshape(4, nl, mabs // 4, 4, 4, k)             # cycle, l1b, q, r, p, j
        vals = reduce(q, 3, e.rop).transpose(1, 0, 4, 2, 3)
    vals = vals.reshape(nl, -1)
    where = ctx.lb_range(dst, run_length(_UP[name], k, mabs), write=True)
    ctx.count_bytes("l1bm_pe", "up", vals.nbytes)
    ctx.lb_write(dst, where, vals)


# -- L2BM <-> L1BM -----------------------------------------------------------------

def l2bm(e, ctx):
    m = ctx.machine
    n1, n2 = m.l1b_per_l2b, m.n_l2b
    name = e.defn.name
    lc = ctx.state.l2bm
    per_l1b = 4 * L2BMD_PER_CYCLE
    if name == "l2bmd" and e.srcs[0].space == "lb":        # gather: every L1B's 32 long words up
        b, a = e.srcs[0], e.dsts[0]
        lb3 = ctx.state.l1bm.reshape(n2, n1, -1)
        vals = lb3[:, :, ctx.lb_range(b, per_l1b, write=False)]          # l2b, i, (c, j)
        vals = vals.reshape(n2, n1, 4, L2BMD_PER_CYCLE).transpose(0, 2, 1, 3).reshape(n2, -1)
        ctx.count_bytes("l2bm_l1bm", "up", vals.nbytes)
        ctx.lc_write(ctx.lc_range(a, per_l1b * n1, write=True), vals)
        return
    if name == "l2bmd":                                    # distribute
        a, b = e.srcs[0], e.dsts[0]
        vals = lc[:, ctx.lc_range(a, per_l1b * n1, write=False)]         # l2b, (c, i, j)
        vals = vals.reshape(n2, 4, n1, L2BMD_PER_CYCLE).transpose(0, 2, 1, 3).reshape(n2 * n1, -1)
        ctx.count_bytes("l2bm_l1bm", "down", vals.nbytes)
        ctx.lb_write(b, ctx.lb_range(b, per_l1b, write=True), vals)
        return
    if name == "l2bmb":
        a, b = e.srcs[0], e.dsts[0]
        run = lc[:, ctx.lc_range(a, L2BM_STEP_LONGS, write=False)]
        vals = np.broadcast_to(run[:, None, :], (n2, n1, L2BM_STEP_LONGS))
        _to_l1b_set(e, ctx, b, vals)
        return
    if name == "l2bmi":                                    # L1BM -> L1BMs of a set, through the L2B
        src, b = e.srcs[0], e.dsts[0]
        lb3 = ctx.state.l1bm.reshape(n2, n1, -1)
        run = lb3[:, _l1b_set(e, ctx)[0], ctx.lb_range(src, L2BM_STEP_LONGS, write=False)]
        _to_l1b_set(e, ctx, b, np.broadcast_to(run[:, None, :], (n2, n1, L2BM_STEP_LONGS)))
        return
    b, a = e.srcs[0], e.dsts[0]                            # l2bm@ and l2bmr: L1BM up to L2BM
    lb3 = ctx.state.l1bm.reshape(n2, n1, -1)
    src = lb3[:, :, ctx.lb_range(b, L2BM_STEP_LONGS, write=False)]
    if name == "l2bm@":
        vals = src[:, e.sel]
        ctx.count_bytes("l2bm_l1bm", "up", vals.nbytes)
    elif name == "l2bmr2":                                 # L1B pairs (2k, 2k+1) reduced, pair k at a + 64k
        ctx.count_bytes("l2bm_l1bm", "up", src.nbytes)
        vals = reduce(src.reshape(n2, n1 // 2, 2, L2BM_STEP_LONGS), 2, e.rop).reshape(n2, -1)
        ctx.lc_write(ctx.lc_range(a, vals.shape[1], write=True), vals)
        return
    else:
        ctx.count_bytes("l2bm_l1bm", "up", src.nbytes)
        vals = reduce(src, 1, e.rop)
    ctx.lc_write(ctx.lc_range(a, L2BM_STEP_LONGS, write=True), vals)


def _l1b_set(e, ctx) -> list:
    """The L1Bs (in each L2B) an '@<set>' names, all of them without one; a fault names a missing L1B."""
    n1 = ctx.machine.l1b_per_l2b
    if e.l1bset is None:
        return list(range(n1))
    if e.l1bset[-1] >= n1:
        raise ctx.fault(f"'{e.text}': L1B {e.l1bset[-1]} does not exist ({ctx.machine.name} has {n1} per L2B)")
    return list(e.l1bset)


def _to_l1b_set(e, ctx, b, vals):
    """Write (L2B, L1B, 64) long words to $lb[b..b+63] of the set's L1Bs; the others keep theirs."""
    m = ctx.machine
    where = ctx.lb_range(b, L2BM_STEP_LONGS, write=True)
    keep = _l1b_set(e, ctx)
    if len(keep) < m.l1b_per_l2b:
        old = ctx.state.l1bm.reshape(m.n_l2b, m.l1b_per_l2b, -1)[:, :, where]
        vals = np.where(np.isin(np.arange(m.l1b_per_l2b), keep)[None, :, None], vals, old)
    ctx.count_bytes("l2bm_l1bm", "down", L2BM_STEP_LONGS * 8 * len(keep) * m.n_l2b)
    ctx.lb_write(b, where, np.ascontiguousarray(vals).reshape(m.n_l2b * m.l1b_per_l2b, -1))


# -- DRAM / PDM <-> L2BM ------------------------------------------------------------

def mv(e, ctx):
    """MV statements: the executor's ``mv_transfer`` does the data and the timing."""
    ctx.mv_transfer(e)
