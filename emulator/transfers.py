"""Data movement between the levels of the tree, as index arithmetic.

Each transfer family is a layout: which L1BM (or L2BM) long word each PE
cycle, or each L1B, reads or writes.  Layouts are computed once per
(family, width, machine) as integer arrays, so a transfer is one numpy
gather or scatter over the whole machine.  Reductions go through ``reduce``,
the model of the result reduce network (RRN).

L1BM <-> PE, per L1B of M MABs x 4 PEs, k long words per PE cycle (ll: k=2):
  p   (l1bmp)   every PE:            a + k*c + j
  m   (l1bmm)   PE p of every MAB:   a + 4k*c + k*p + j
  m4  (l1bmm4)  PE p of MAB m:       a + 4k*(M/4)*c + 4k*(m>>2) + k*p + j
  d   (l1bmd)   PE i of the L1B:     a + k*4M*c + k*i + j
L2BM <-> L1BM, per L2B of N L1Bs, one step moves:
  l2bmb/l2bm@/l2bmr  64 long words:  a + j
  l2bmd              L1B i: $lb[b + 8c + j] <-> $lc[a + 8N*c + 8i + j], j < 8
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from .numbers import WIDTH, lanes, pack
from .semantics import from_float, sm_key, to_float

L2BM_STEP_LONGS = 64     # long words one l2bmb / l2bm@ / l2bmr step moves
L2BMD_PER_CYCLE = 8      # long words per L1BM per cycle for l2bmd
MV_UNIT = 64             # MV sizes are multiples of this many long words


@lru_cache(maxsize=None)
def pe_layout(kind: str, k: int, mabs: int) -> np.ndarray:
    """(4*mabs PEs, 4 cycles, k) offsets into L1BM for a layout, PEs in L1B order."""
    pe = np.arange(4 * mabs)
    mab, p = pe // 4, pe % 4
    c = np.arange(4)[None, :, None]
    j = np.arange(k)[None, None, :]
    if kind == "p":
        off = k * c + j + 0 * pe[:, None, None]
    elif kind == "m":
        off = 4 * k * c + k * p[:, None, None] + j
    elif kind == "m4":
        off = 4 * k * (mabs // 4) * c + 4 * k * (mab[:, None, None] >> 2) + k * p[:, None, None] + j
    elif kind == "d":
        off = k * 4 * mabs * c + k * pe[:, None, None] + j
    else:  # pragma: no cover - the table names only these
        raise ValueError(kind)
    return off.astype(np.int64)


@lru_cache(maxsize=None)
def l2bmd_layout(n_l1b: int) -> tuple[np.ndarray, np.ndarray]:
    """(N, 32) L2BM offsets and (32,) L1BM offsets of one l2bmd step."""
    i = np.arange(n_l1b)[:, None, None]
    c = np.arange(4)[None, :, None]
    j = np.arange(L2BMD_PER_CYCLE)[None, None, :]
    lc = (L2BMD_PER_CYCLE * n_l1b * c + L2BMD_PER_CYCLE * i + j).reshape(n_l1b, -1)
    lb = (L2BMD_PER_CYCLE * c + j).reshape(-1)
    return lc.astype(np.int64), lb.astype(np.int64)


# -- the reduce network ----------------------------------------------------------

def reduce(data: np.ndarray, axis: int, rop: str) -> np.ndarray:
    """Reduce uint64 long words along axis with an RRN op (dfadd, fmax, liadd, land, ...)."""
    prec, op = rop[0], rop[1:]
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


def l1bm_down(e, ctx):
    """l1bmp / l1bmm / l1bmm4 / l1bmd: L1BM (or $lbi) to PE destinations."""
    src = e.srcs[0]
    k = _k(src)
    kind = {"l1bmp": "p", "l1bmm": "m", "l1bmm4": "m4", "l1bmd": "d"}[e.defn.name]
    m = ctx.machine
    idx = ctx.lb_index(src, e, pe_layout(kind, k, m.mab_per_l1b), write=False)
    mem = ctx.l1b_mem(src)
    if kind == "d":            # one contiguous run per L1B: slice instead of gathering
        a = int(idx.flat[0])
        vals = mem[:, a:a + idx.size].reshape(m.n_l1b, 4, m.pe_per_l1b, k).transpose(0, 2, 1, 3)
    else:
        vals = mem[:, idx]                                     # l1b, pe, cycle, k
    ctx.count_bytes("l1bm_pe", "down", vals.nbytes)
    vals = vals.transpose(3, 2, 0, 1).reshape(k, 4, m.n_pe)      # k, cycle, P
    ctx.write_all(e, vals[0], vals[1] if k == 2 else None, None)


def l1bm_d(e, ctx):
    """l1bmd: distribute when the source is $lb, gather when the destination is."""
    if e.srcs[0].space in ("lb", "lbi"):
        return l1bm_down(e, ctx)
    return l1bm_up(e, ctx)


def l1bm_up(e, ctx):
    """l1bmm@ / l1bmm4@ / l1bmr / l1bmr4 / l1bmd (gather): PE values up into L1BM."""
    m = ctx.machine
    dst = e.dsts[0]
    k = _k(dst)
    v0, v1 = ctx.read(e.srcs[0], e)
    parts = [v0] if k == 1 else [v0, v1 if v1 is not None else ctx.zeros()]
    mabs = m.mab_per_l1b
    data = np.stack(parts, -1).reshape(4, m.n_l1b, mabs, 4, k).transpose(1, 2, 3, 0, 4)  # l1b, mab, pe, cycle, k
    name = e.defn.name
    if name == "l1bmd":
        layout, vals = pe_layout("d", k, mabs), data.reshape(m.n_l1b, 4 * mabs, 4, k)
    elif name == "l1bmm@":
        layout, vals = pe_layout("m", k, mabs)[:4], data[:, e.sel]
    elif name == "l1bmr":
        layout, vals = pe_layout("m", k, mabs)[:4], reduce(data, 1, e.rop)
    elif name == "l1bmm4@":
        layout = pe_layout("m4", k, mabs).reshape(mabs // 4, 4, 4, 4, k)[:, 0]
        vals = data[:, e.sel::4]
    else:  # l1bmr4
        layout = pe_layout("m4", k, mabs).reshape(mabs // 4, 4, 4, 4, k)[:, 0]
        vals = reduce(data.reshape(m.n_l1b, mabs // 4, 4, 4, 4, k), 2, e.rop)
    idx = ctx.lb_index(dst, e, layout, write=True)
    ctx.count_bytes("l1bm_pe", "up", vals.nbytes)
    ctx.lb_write(dst, idx.reshape(-1), vals.reshape(m.n_l1b, -1))


# -- L2BM <-> L1BM -----------------------------------------------------------------

def l2bm(e, ctx):
    m = ctx.machine
    n1 = m.l1b_per_l2b
    name = e.defn.name
    lb3 = ctx.state.l1bm.reshape(m.n_l2b, n1, -1)
    lc = ctx.state.l2bm
    if name == "l2bmd" and e.srcs[0].space == "lb":        # gather: every L1B's 32 long words up
        b, a = e.srcs[0], e.dsts[0]
        lc_off, lb_off = l2bmd_layout(n1)
        ib = ctx.lb_index(b, e, lb_off, write=False)
        ia = ctx.lc_index(a, e, lc_off, write=True)
        vals = lb3[:, :, ib]
        ctx.count_bytes("l2bm_l1bm", "up", vals.nbytes)
        ctx.lc_write(ia.reshape(-1), vals.reshape(m.n_l2b, -1))
        return
    if name == "l2bmd":                                    # distribute
        a, b = e.srcs[0], e.dsts[0]
        lc_off, lb_off = l2bmd_layout(n1)
        ia = ctx.lc_index(a, e, lc_off, write=False)
        ib = ctx.lb_index(b, e, lb_off, write=True)
        vals = lc[:, ia]                                   # l2b, n1, 32
        ctx.count_bytes("l2bm_l1bm", "down", vals.nbytes)
        ctx.lb_write(b, ib, vals.reshape(m.n_l1b, -1))
        return
    span = np.arange(L2BM_STEP_LONGS)
    if name == "l2bmb":
        a, b = e.srcs[0], e.dsts[0]
        ia = ctx.lc_index(a, e, span, write=False)
        ib = ctx.lb_index(b, e, span, write=True)
        vals = np.broadcast_to(lc[:, None, ia], (m.n_l2b, n1, span.size))
        ctx.count_bytes("l2bm_l1bm", "down", vals.nbytes)
        ctx.lb_write(b, ib, vals.reshape(m.n_l1b, -1))
        return
    b, a = e.srcs[0], e.dsts[0]                            # l2bm@ and l2bmr: L1BM up to L2BM
    ib = ctx.lb_index(b, e, span, write=False)
    ia = ctx.lc_index(a, e, span, write=True)
    if name == "l2bm@":
        vals = lb3[:, e.sel, ib]
        ctx.count_bytes("l2bm_l1bm", "up", vals.nbytes)
    else:
        src = lb3[:, :, ib]
        ctx.count_bytes("l2bm_l1bm", "up", src.nbytes)
        vals = reduce(src, 1, e.rop)
    ctx.lc_write(ia, vals)


# -- DRAM / PDM <-> L2BM ------------------------------------------------------------

def mv(e, ctx):
    """MV statements: the executor's ``mv_transfer`` does the data and the timing."""
    ctx.mv_transfer(e)
