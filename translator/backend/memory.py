"""Memory access and data movement: addresses (GEP, index forms), loads and stores, private
arrays, the contiguous fast paths, uniform loads and tables, gathers, and the ordering of
stores still in flight.

``p[get_global_id(0)]`` on a 32-bit buffer in a 1-D launch is *contiguous*: the wave's share
moves DRAM -mvd-> L2BM -l2bmd-> L1BM -l1bmd-> PE (stores the reverse, read-modify-write under
the lane mask).  Any other access is a *gather*: the buffer is broadcast chunk by chunk (mvb ->
l2bmb -> l1bmp) into every PE's LM0 and each lane picks its element with a T-indirect read;
a store of that kind is a *scatter* (scatter.py).  Nothing is copied by the host.
"""
from __future__ import annotations

import re
from dataclasses import replace

from . import irtypes, seqexpr
from .abi import (GLOBAL_EXTENTS, LOCAL, LOCAL_EXTENTS, OFFSETS, affine_copy, LOCAL_BYTES, LOCAL_CHUNKS, STORE_TAG,
                  base, nbytes, param, reg, rows, snapshot, table_lanes, widened)
from .irread import Arg, Const, Inst
from .irtypes import type_size
from .rows import ROW0
from .rowstore import strided_form
from .ops import Call, drop_ops, MV, Op, SeqIf, SeqLoop, SeqSet, VReg
from .emitter import CodegenError, TR, TW
from .nans import callee_base
from .values import aff_add, aff_scale, EXACT, I32, KINDS, rng_add, rng_scale, U32, Val, within

MIN_MAX = {"smin": "slt", "smax": "sgt", "umin": "ult", "umax": "ugt"}    # the compare that picks the first
GATHER_BATCH = 8        # loads one gather pass serves at most (each keeps 3 or 4 registers live until it)


def dram_clamped(a: str, hi: int) -> str:
    """DRAM long-word address a (a sequencer expression) clamped to 0 .. hi, as a `.call d=`
    offset (no spaces): lanes outside the buffer may ask for addresses beyond DRAM; the transfer
    is clamped and those lanes' values are don't-care."""
    x = f"(({a})*(({a})>0))"
    return f"({x}-({x}-{hi})*({x}>{hi}))".replace(" ", "")


def block_of(u: str) -> str:
    """The first long word of the 64-long-word block holding byte offset u (sequencer expressions)."""
    return f"((({u}) >> 9) << 6)"


class Memory:
    """Loads, stores and the data movement behind them."""

    def __init__(self, em):
        self.em = em

    def settle_stores(self, whole_buffer=False):
        """Wait for a contiguous store still in flight (before anything that may read its data).

        A store is in flight after one earlier in the body, but also where none precedes this
        point: in a loop that stores, the previous pass's (`y[i] += ...` in a loop over j), and,
        for a transfer of a whole buffer (whole_buffer: a gather or scatter), the previous wave's,
        which a wave's own share (fast_load) never meets.  Those waits are kept only if the
        kernel has a contiguous store (fast_store) by the end (drop_unissued_waits)."""
        em = self.em
        if "store" in em.areas:
            em.op(f"wait i{STORE_TAG}", "wait")
        elif whole_buffer and em.loop_stack and not any(ctx["stores"] for ctx in em.loop_stack):
            em.loop_stack[0]["settle_before"] = True        # once, before the outermost loop
        elif whole_buffer or any(ctx["stores"] for ctx in em.loop_stack):
            em.op(f"wait i{STORE_TAG}", "wait")
            em.unsure_waits.append(em.items[-1])

    def drop_unissued_waits(self):
        """Remove settle_stores' loop waits when the kernel made no contiguous store: their tag is
        never issued (the emulator faults on such a wait)."""
        em = self.em
        if em.unsure_waits and "store" not in em.areas:
            drop_ops(em.items, {id(o) for o in em.unsure_waits})
        em.unsure_waits = []

    def stores_to_buffers(self, blocks) -> bool:
        """Whether any of these IR blocks may store through a pointer into a buffer parameter."""
        em = self.em
        return any(self.store_dst(i) is not None and not isinstance(self.param_root(self.store_dst(i)), str)
                   for n in blocks for i in em.bmap[n].insts)

    def ptr_off(self, p: Val) -> VReg:
        """A pointer's byte offset as i32 lanes (coff folded in)."""
        em = self.em
        if p.base and p.base[0] == "either":
            raise CodegenError("a pointer into one of two buffers can be loaded from, stored to and indexed, "
                               "not compared or converted to an integer", em.line)
        if p.off is None:
            return em.c32(p.coff)
        if p.idx is not None and p.coff and p.coff % p.idx[1] == 0:
            x, n = p.idx[:2]           # (x + c / n) * n: x + c / n is what check_bounds compares
            r = em.alu("iadd", x, em.c32(p.coff // n))
            return em.ints.mul_const(Val("i32", (r,)), n, False, None).regs[0]
        r = p.off.regs[0]
        if p.coff:
            r = em.alu("iadd", r, em.c32(p.coff))
        return r

    # memory ----------------------------------------------------------------------------------------
    def gep(self, i: Inst) -> Val:
        """A pointer plus indices.  The offset register is 32-bit; what the bounds check needs to see
        an offset that wrapped comes along: one variable term, its index (Val.idx); more, the
        offset's range (Val.orng) and, where that is not 32-bit, its 64-bit value (Val.o64)."""
        em = self.em
        base = em.values.val(i.ops[0])
        if base.kind != "ptr":
            raise CodegenError("pointer arithmetic on a non-pointer", em.line)
        ty = i.elem
        off, coff = base.off, base.coff
        aff = base.gid_affine if base.gid_affine is not None else None
        idx, orng, o64, good, whole = base.idx, base.orng, base.o64, base.good, base.whole
        for k, idx_op in enumerate(i.ops[1:]):
            if k == 0:
                scale = type_size(ty)
            else:
                sub = irtypes.element_type(ty, idx_op.value if isinstance(idx_op, Const) else None)
                if sub is None:
                    raise CodegenError(f"indexing into '{ty}' at run time is not supported", em.line)
                ty, fo = sub
                if fo is not None:         # a struct field
                    coff += fo
                    continue
                scale = type_size(ty)
            iv = em.values.val(idx_op)
            if iv.const is not None:
                coff += iv.const * scale
                if aff is not None:
                    aff = (aff[0], aff[1] + iv.const * scale, aff[2])
                continue
            term = em.ints.mul_const(Val("i32", (em.values.narrow(iv),)), scale, False, None).regs[0]
            x, sh, xr = self.index_parts(iv)
            if off is None:                              # the first variable term: checked as an index
                idx = (x, scale << sh, xr, iv if not sh else None, self.near_start(x, xr))
                whole = not sh and scale > 4             # (a float's 4 bytes are whole either way)
            elif idx is not None and idx[1] == scale << sh:     # another index in the same elements
                idx, good = self.add_index(idx, (x, scale << sh, xr, iv if not sh else None), good)
            else:
                if idx is not None:                      # an index no longer alone: as bytes
                    orng, o64 = self.idx_bytes(idx)
                    idx = None
                trng = rng_scale(em.values.int_rng(iv), scale)
                total = rng_add(I32 if orng is None else orng, trng)
                if o64 is not None or not within(total, I32):
                    prev = o64 if o64 is not None else (em.split64(off.regs[0]) if off is not None else None)
                    iv64 = Val("i64", em.values.wide(iv), rng=em.values.int_rng(iv))
                    t64 = em.ints.mul_const(iv64, scale, True, None).regs
                    o64 = t64 if prev is None else tuple(em.alu("ladd", a, b) for a, b in zip(prev, t64))
                orng = total
            off = Val("i32", (term if off is None else em.alu("iadd", off.regs[0], term),))
            ia = em.values.affine(iv, idx_op)
            aff = aff_add(aff, aff_scale(ia, scale)) if aff is not None and ia is not None else None
        return Val("ptr", base=base.base, off=off, coff=coff, gid_affine=aff, idx=idx, orng=orng, o64=o64,
                   good=good, whole=whole and idx is not None)

    def index_form(self, p: Val):
        """p's Val.idx with its constant offset folded in (x + c / n), where p is such a pointer and
        its range is known, else None."""
        em = self.em
        if p.idx is None or p.good is not None or p.coff % p.idx[1] or p.idx[2] is None:
            return None
        x, n, r = p.idx[:3]
        q = p.coff // n
        if not q:
            return p.idx
        wide = Val("i64", tuple(em.alu("ladd", y, em.const64(q)) for y in self.idx_wide(p.idx)))
        return em.alu("iadd", x, em.c32(q)), n, (r[0] + q, r[1] + q), wide, None

    def near_start(self, x: VReg, xr):
        """For an index x (range xr) to which another may be added: a bool, x >= -2^30, or None when
        xr says so; made where x is (the pointer p + x before a loop indexing it), dropped unused."""
        em = self.em
        if not within(xr, I32) or xr[0] >= -(1 << 30):
            return None
        return em.bool_from_mask(em.flags("imax", x, em.c32(-(1 << 30))))

    def add_index(self, a, b, good):
        """(Val.idx, Val.good) of (p + x)[y], p + x having Val.idx a, y given as b, in the same
        elements.  Two 32-bit indices may sum past 32 bits; lanes whose x lies 2^30 or more elements
        before p fail (near_start), so the sum's low 32 bits compare exactly: forming such a pointer
        is undefined behaviour in C (C99 6.5.6), and any access through it is out of bounds but for
        an index y of 2^30 or more."""
        em = self.em
        x0, n, r0, _, near = a
        x1, _, r1, _ = b
        wide = tuple(em.alu("ladd", u, v) for u, v in zip(self.idx_wide(a), self.idx_wide(b)))
        r = rng_add(r0, r1)
        if not within(r, EXACT) and near is not None and within(r1, I32):
            good = near if good is None else em.b_and(good, near)
            r = (-(1 << 30) + r1[0], r[1])
        x = em.alu("iadd", x0, x1)
        return (x, n, r, Val("i64", wide, rng=r), self.near_start(x, r)), good

    def index_parts(self, iv: Val):
        """(VReg of x's low 32 bits, k, x's range) for an index iv == x << k (Val.scaled)."""
        em = self.em
        if iv.kind == "i64" and iv.scaled is not None:
            return iv.scaled
        return em.values.narrow(iv), 0, em.values.int_rng(iv)

    def idx_wide(self, idx) -> tuple:
        """The (odd, even) 64-bit values of a Val.idx's x."""
        em = self.em
        x, n, xr, xv = idx[:4]
        if xv is not None:
            return em.values.wide(xv)
        return em.split64(x, signed=not within(xr, (0, U32[1])) or within(xr, I32))

    def idx_bytes(self, idx):
        """(Val.orng, Val.o64) of a pointer whose one variable term is Val.idx idx."""
        em = self.em
        x, n, xr = idx[:3]
        r = rng_scale(xr, n)
        if within(r, I32):
            return r, None
        return r, em.ints.mul_const(Val("i64", self.idx_wide(idx), rng=xr), n, True, None).regs

    def fits32(self, regs) -> VReg:
        """A bool per 32-bit lane: the (odd, even) 64-bit values lie in [-2^31, 2^31)."""
        em = self.em
        c = em.const64(1 << 31)
        return em.bool_from_mask(em.flags("ior", self.high_words(tuple(em.alu("ladd", r, c) for r in regs)),
                                          em.c32(0)))

    def high_words(self, regs) -> VReg:
        """The high 32 bits of (odd, even) 64-bit values, as 32-bit lanes."""
        em = self.em
        return em.join32(*(em.alu("ulsr", r, em.c32(32)) for r in regs))

    def carried_off(self, v: Val) -> VReg:
        """v's offset for a register that carries it on (a loop's pointer, a select): lanes whose offset
        left the 32-bit range get -2^31, which every bounds check finds out of bounds."""
        em = self.em
        off = self.ptr_off(v)
        if v.off is None:
            return off
        if v.good is not None:
            off = em.select32(v.good, off, em.c32(-(1 << 31)))
        if v.idx is not None:
            orng, o64 = self.idx_bytes(v.idx)
        else:
            orng, o64 = v.orng, v.o64
        full = rng_add(orng, (v.coff, v.coff))
        if o64 is None and (orng is None or within(full, EXACT)):
            return off
        if o64 is None:
            o64 = em.split64(v.off.regs[0])
        if v.coff:
            o64 = tuple(em.alu("ladd", r, em.const64(v.coff)) for r in o64)
        return em.select32(self.fits32(o64), off, em.c32(-(1 << 31)))

    def param(self, k):
        em = self.em
        if not 0 <= k < len(em.params):
            raise CodegenError("read beyond the kernel's arguments", em.line)
        return em.params[k]

    def load(self, i: Inst, p: VReg) -> Val:
        em = self.em
        ptr = em.values.val(i.ops[0])
        b, ty = ptr.base, i.type
        if b == ("args",):
            if ptr.off is not None:     # LLVM merged accesses to different arguments: a[i] or b[i] per lane
                return self.either_arg(i)
            k = ptr.coff // 8
            pi = self.param(k)
            if pi.kind in ("global", "constant"):
                return Val("ptr", base=("param", k), gid_affine=(0, 0, None))
            if pi.kind == "local":    # the runtime puts the argument's offset in its group block here
                off = em.alu("iadd", em.workitems.local_base(), em.codegen.param_word(k, pi.name))
                return Val("ptr", base=("local",), off=Val("i32", (off,)))
            return Val("ptr", base=("scalar", k))
        if b[0] == "scalar":
            if (b[1] in em.wide_args or ptr.coff or self.param(b[1]).size > type_size(ty)) and ptr.off is None \
                    and ty in ("i8", "i16", "i32", "float", "i64", "double"):     # a vector's or struct's element
                at = em.codegen.param_slot(b[1]) + ptr.coff // 8
                return em.codegen.wide_arg(at, ptr.coff % 8, ty)
            if ptr.off is not None or ptr.coff or ty not in ("i8", "i16", "i32", "float", "i64", "double", "ptr"):
                raise CodegenError(f"kernel argument '{self.param(b[1]).name}' of type "
                                   f"'{self.param(b[1]).type_name}' is not supported on the emulator device yet", em.line)
            r = em.codegen.param_word(b[1], self.param(b[1]).name)
            k = em.values.kind_of(ty)
            return Val(k, (r,) if KINDS[k] == 1 else (r, r))
        if b == ("wg",):
            k = ptr.coff // 8
            if 7 <= k <= 9:
                return em.workitems.group_id(k - 7)
            r = em.codegen.wg_word(k, f"wg{k}")
            return Val("i64", (r, r))
        if b == ("ids",):
            return em.workitems.ids_value(ptr.coff // 8)
        flat, pitch = ptr, None
        if b[0] == "param":
            self.note_access(b[1], "load")
            flat, pitch = self.flat_rows(i.ops[0], ptr, type_size(ty), i.block)
            em.bounds.check_bounds(b[1], flat, type_size(ty), p, defer=True,
                                   whole=em.row_plan.wave_in_bounds(b[1], em.accesses.get(i))
                                   or em.tile_plan.wave_in_bounds(b[1], em.accesses.get(i)))
            if em.split_copy.claims(b[1]):      # a buffer the kernel writes through its split copy
                return em.split_copy.load(b[1], flat, ty, must=True)
        if b == ("priv",) and ptr.off is not None and p is not None:
            self.check_private(ptr, type_size(ty), p, store=False)
        if b[0] in ("param", "local", "priv", "global") and type_size(ty) < 4:
            return self.narrow_load(ptr, ty, p)
        if b[0] == "global":
            return self.gather(b[1], ptr, ty, p, defer=True)
        if b[0] == "param":
            size = type_size(ty)
            aff = flat.gid_affine
            one_d = em.one_d or pitch is not None          # (a "rows" build's flat access: rows.py)
            if one_d and size == 4 and aff is not None and em.window.covers(b[1], aff):
                self.plan_flat(pitch, b[1], "load", em.window.plan(b[1]))
                return Val(em.values.kind_of(ty), (em.window.load(b[1], aff),))
            if one_d and size == 4 and aff is not None and aff[0] == 4 and aff != (4, 0, None) \
                    and self.readable(b[1]):
                self.plan_flat(pitch, b[1], "load", "shifted load of the replicated buffer")
                return Val(em.values.kind_of(ty), (self.shifted_load(b[1], aff),))
            if one_d and size == 4 and aff == (4, 0, None):
                self.plan_flat(pitch, b[1], "load", "contiguous load")
                reg = self.fast_load(b[1])[0]
                return Val(em.values.kind_of(ty), (reg,))
            if size in (4, 8) and aff is not None and aff[0] == 0 and self.readable(b[1]):
                return self.uniform_load(b[1], aff, ty)
            if em.one_d and pitch is None and size == 4 and aff is None and self.readable(b[1]):
                two = self.clamped_load(i.ops[0], b[1], ty) or self.affine_copy(i.ops[0], b[1], ptr, ty, p, i)
                if two is not None:
                    return two
            if em.rows is not None and size == 4 and pitch is None and self.readable(b[1]):
                got = self.flat_choice(i.ops[0], b[1], ty) or self.affine_copy(i.ops[0], b[1], ptr, ty, p)
                if got is not None:
                    return got
            access = em.accesses.get(i)
            return em.row_plan.transposed(b[1], ptr, ty, p, access) or em.row_plan.load(b[1], ptr, ty, p, access) \
                or em.tile_plan.load(b[1], ptr, ty, p, access) \
                or em.split_copy.load(b[1], flat, ty) \
                or self.gather(b[1], ptr, ty, p, defer=True)
        if b == ("local",):
            return self.local_load(i.ops[0], ptr, ty, p) or self.gather("L", ptr, ty, p, defer=True)
        if b == ("priv",):
            return self.private_access(ptr, ty)
        raise CodegenError("a load through this pointer is not supported on the emulator device yet", em.line)

    def either_arg(self, i: Inst) -> Val:
        """`load ptr` from the argument list at `select c, A, B` (how LLVM merges `c ? a[i]++ : b[i]--`):
        the pointer argument A or B per lane."""
        em = self.em
        g = i.ops[0]
        sel = g.ops[-1] if isinstance(g, Inst) and g.op == "getelementptr" and len(g.ops) == 2 else None
        if not (isinstance(sel, Inst) and sel.op == "select" and all(isinstance(x, Const) for x in sel.ops[1:])):
            raise CodegenError("a pointer chosen per work-item among kernel arguments is not supported on the "
                               "emulator device", em.line)
        base = em.values.val(g.ops[0])
        at = [em.values.proxy("ptr", Val("ptr", base=base.base, coff=base.coff + x.value * type_size(g.elem)))
              for x in sel.ops[1:]]
        a, b = (self.load(Inst("load", i.name, "ptr", [x], elem="ptr", line=i.line), None) for x in at)
        return em.values.select(em.values.val(sel.ops[0]).regs[0], a, b)

    def on_either(self, i: Inst, k: int, p: VReg):
        """A load, store or GEP through a pointer into one of two buffers (Val.base ("either", c, A, B)):
        the access on each, under the lanes that point there; a load's value selected between them."""
        em = self.em
        _, c, a, b = em.values.val(i.ops[k]).base
        out = []
        for x, q in ((a, em.b_and(p, c) if p is not None else None),
                     (b, em.b_and(p, em.b_not(c)) if p is not None else None)):
            ops = list(i.ops)
            ops[k] = em.values.proxy("ptr", x)
            fake = Inst(i.op, i.name, i.type, ops, text=i.text, elem=i.elem, line=i.line)
            em.codegen.inst(fake, q)
            out.append(em.vals.get(fake))
        if i.op != "store":
            self.flush_gathers()          # (the select reads both loads now)
            return em.values.select(c, out[0], out[1])

    def store(self, i: Inst, p: VReg):
        em = self.em
        self.store_to(i, p)
        # a store may change what the loads of any buffer the kernel writes would see
        em.fast_cache = {key: v for key, v in em.fast_cache.items()
                         if self.is_replicated(key[0] if isinstance(key, tuple) else key)}
        em.stored = True

    def store_to(self, i: Inst, p: VReg):
        em = self.em
        v, ptr = em.values.val(i.ops[0]), em.values.val(i.ops[1])
        b = ptr.base
        if b == ("priv",):
            size = type_size(i.ops[0].type)
            if ptr.off is not None:
                p = self.check_private(ptr, size, p, store=True)
            if size < 4:
                wp = self.word_ptr(ptr)
                old = self.private_access(wp, "i32").regs[0]
                sh = em.alu("ilsl", em.alu("iand", self.ptr_off(ptr), em.c32(4 - size)), em.c32(3))
                bits = em.c32((1 << 8 * size) - 1)
                new = em.alu("ior", em.alu("iand", old, em.alu("inot", em.alu("ilsl", bits, sh))),
                             em.alu("ilsl", em.alu("iand", v.regs[0], bits), sh))
                return self.private_access(wp, "i32", Val("i32", (new,)), p)
            return self.private_access(ptr, i.ops[0].type, v, p)
        if b == ("local",):
            k, name = "L", "__local memory"
        elif b[0] == "param":
            k, name = b[1], self.param(b[1]).name
            self.note_access(k, "store")
        else:
            raise CodegenError("a store through this pointer is not supported on the emulator device yet", em.line)
        size = type_size(i.ops[0].type)
        whole = em.active_when(p)       # (every lane the kernel runs stores: under this condition)
        if k != "L" and ptr.gid_affine is not None and ptr.gid_affine[0] == 0:
            p = em.scatter.elect(p)     # every lane stores to one element: one of them, not their sum
        flat, pitch = (ptr, None) if k == "L" else self.flat_rows(i.ops[1], ptr, size, i.block)
        if k != "L":              # a store out of bounds is dropped (and reported)
            p = em.b_and(p, em.bounds.check_bounds(k, flat, size, p, store=True))
        if k != "L" and em.split_copy.claims(k):          # every access through the split copy
            return em.split_copy.store(k, flat, v.regs, p, whole, must=True)
        if (em.one_d or pitch is not None) and size == 4 and flat.gid_affine == (4, 0, None) and k != "L":
            # every lane stores when the wave is full and inside the buffer: nothing to merge with
            full = f"{em.lay.wave_full()} and {em.bounds.wave_in_bounds(k, flat.gid_affine, size)}"
            self.plan_flat(pitch, k, "store", "contiguous store")
            return self.fast_store(k, v.regs[0], p, full=em.full_when(full, whole))
        if size in (1, 2, 4, 8):
            scatter = lambda: em.scatter.scatter(k, ptr, v.regs, p, size, em.scatter.id_form(i.ops[1], k == "L", i.block), i.block)
            if k == "L" and self.local_store(i.ops[1], v.regs[0], p, whole, scatter):
                return None
            if size == 4 and k != "L" and em.row_store.store(k, v.regs[0], p, whole, em.accesses.get(i), scatter):
                return None
            aff = flat.gid_affine
            if size == 4 and k != "L" and pitch is None and aff is not None and aff[0] == 4 \
                    and em.row_store.shifted(k, v.regs[0], p, whole, em.accesses.get(i), aff, scatter):
                return None
            if size == 4 and k != "L" and em.row_store.stamped(k, v.regs[0], p, em.accesses.get(i), scatter):
                return None
            return scatter()
        raise CodegenError(f"stores of {size}-byte elements to '{name}' are not supported on the emulator "
                           f"device yet", em.line)

    def flat_rows(self, x, ptr: Val, size: int, block) -> tuple:
        """(ptr, None), or in a "rows" build for a 32-bit access of a buffer parameter row-major in
        the ids (IR pointer x; rows.py): (a copy of ptr whose gid_affine is its form over the flat
        position, which the bounds checks and the 1-D paths read; its pitch, recorded for the
        launch to check)."""
        em = self.em
        if em.rows is None or size not in (4, 8) or ptr.gid_affine is not None or ptr.base[0] != "param" \
                or size == 8 and (em.split_copy.layout(ptr.base[1]) or 0) >= 0:
            return ptr, None        # (8-byte elements: only through a split copy, splitcopy.py)
        got = em.rows.affine(x, ptr.base[1]) or (em.rows.in_row0(x, ptr.base[1], block) if size == 4 else None)
        if got is None or got[0] != size:
            return ptr, None
        if got[3] != ROW0:
            em.rows.pitches.add(got[3])
        return replace(ptr, gid_affine=got[:3]), got[3]

    def flat_choice(self, x, k, ty) -> Val | None:
        """In a "rows" build, a load of replicated buffer k at one of two flat offsets chosen per
        lane (FlatRows.choice: a clamped neighbour): both wave shares moved, the lane's selected;
        its bounds were checked per lane on the address it takes.  None if x is not such a load."""
        em = self.em
        got = em.rows.choice(x, k)
        if got is None:
            return None
        c, yes, no, pitch = got
        em.rows.pitches.add(pitch)
        if em.window.covers(k, yes) and em.window.covers(k, no):
            self.plan_flat(pitch, k, "load", "two loads from the " + em.window.plan(k) + ", one chosen per lane")
            regs = [em.window.load(k, aff) for aff in (yes, no)]
        else:
            self.plan_flat(pitch, k, "load", "two shifted loads of the replicated buffer, one chosen per lane")
            regs = [self.affine_load(k, aff, ty) for aff in (yes, no)]
        return em.values.select(em.values.val(c).regs[0], *(Val(em.values.kind_of(ty), (r,)) for r in regs))

    def affine_copy(self, x, k, ptr, ty, p, i=None) -> Val | None:
        """A load of buffer k (read-only, or read from its snapshot) at 4 * (c f + a (f mod g) + b
        (f div g) + u), f the work-item's place in the launch: in a "rows" build at a gid0 + b gid1
        + u that is not row-major at gx (rows.FlatRows.strided: a transposed read, a row or a
        column of a matrix; g = gx); in a 1-D build (IR load i) at c gid + a lid + b group + u
        with strides the sequencer knows only at launch (`x[i * incx]`, `in[lid - 1]`; g the
        local size).  The wave's share of a copy the runtime makes for the launch with those
        strides (EmulatorDevice.write_affine_copy), a contiguous load where the gather streamed
        all of k through every PE.  A launch without the copy (no room for it) gathers.  None
        where the form does not fit."""
        em = self.em
        access = em.accesses.get(i) if i is not None else None
        if em.rows is not None:
            form = em.rows.strided(x, k)
            form = form and ["(0)", *form]
        else:
            form = strided_form(em, access.form, ("gid0", "lid0", "grp0")) if access is not None else None
        if form is None:
            return None
        copies = em.uses.setdefault("affine_copies", {})
        n = next((j for j, c in copies.items() if c == (k, *form)), len(copies))
        copies[n] = (k, *form)
        out = em.unless_copy(f"{reg(affine_copy(n))} >= 0",
                             lambda: self.read_share(k, f"{reg(affine_copy(n))}+%wx*{em.lay.stripe}", f"ac{k}"),
                             lambda out: em.copy(self.gather(k, ptr, ty, p).regs[0], out))
        em.plans.setdefault((em.line, self.param(k).name), set()).add(
            "affine copy: the wave's share of a copy the runtime makes with the index's strides")
        return Val(em.values.kind_of(ty), (out,))

    def clamped_load(self, x, k, ty) -> Val | None:
        """In a 1-D build, a load of replicated buffer k at one of two offsets, each affine in the
        global id, chosen per lane: a clamped neighbour (`a[min(i + 1, n - 1)]`, `a[max(i - 1, 0)]`,
        `i > 0 ? a[i - 1] : a[i]`; LLVM writes smin / smax / select of the index or of the pointer).
        Each offset is a contiguous, shifted or uniform load and each lane takes its own: two cheap
        loads instead of a gather of all of k.  The bounds were checked per lane on the address it
        takes (load).  None if x is not such a pointer."""
        em = self.em
        got = self.two_offsets(x, k)
        if got is None or not all(a == (4, 0, None) or a[0] in (0, 4) for a in got[1:]):
            return None
        regs = [self.affine_load(k, a, ty) for a in got[1:]]
        em.plans.setdefault((em.line, self.param(k).name), set()).add(
            "clamped neighbour: two contiguous, shifted or uniform loads, one taken per lane")
        return em.values.select(got[0], *(Val(em.values.kind_of(ty), (r,)) for r in regs))

    def affine_load(self, k, aff, ty) -> VReg:
        """Each lane's element of replicated buffer k at byte offset aff (a form in the global id
        with coefficient 4 or 0): the wave's share, a shifted share, or a uniform element."""
        if aff == (4, 0, None):
            return self.fast_load(k)[0]
        return self.shifted_load(k, aff) if aff[0] == 4 else self.uniform_load(k, aff, ty).regs[0]

    def two_offsets(self, x, k):
        """(the lane's choice, the byte offset's affine form where it holds, where it does not) for
        IR pointer x into parameter k chosen between two such forms (clamped_load), else None."""
        em = self.em
        val = em.values.val
        if not isinstance(x, Inst):
            return None
        if x.op == "select" and x.type == "ptr":
            a, b = val(x.ops[1]), val(x.ops[2])
            if a.base == b.base == ("param", k) and a.gid_affine is not None and b.gid_affine is not None:
                return val(x.ops[0]).regs[0], a.gid_affine, b.gid_affine
            return None
        if x.op != "getelementptr" or len(x.ops) != 2 or x.elem not in ("float", "i32"):
            return None
        base, y = val(x.ops[0]), x.ops[1]
        while isinstance(y, Inst) and (y.op == "sext" or y.op == "zext" and " nneg " in f" {y.text} "):
            y = y.ops[0]
        if base.base != ("param", k) or base.gid_affine is None or not isinstance(y, Inst) \
                or y.type not in ("i32", "i64"):
            return None
        if y.op == "select":
            pick, ops = None, y.ops[1:]
        elif y.op == "call" and callee_base(y) in MIN_MAX:
            pick, ops = MIN_MAX[callee_base(y)], [o for o in y.ops if not isinstance(o, tuple)][:2]
        else:
            return None
        forms = [em.values.affine(val(o), o) for o in ops]
        if None in forms:
            return None
        c = val(y.ops[0]).regs[0] if pick is None else em.ints.icmp(pick, *(val(o) for o in ops))
        return (c, *(aff_add(base.gid_affine, aff_scale(f, 4)) for f in forms))

    def plan_flat(self, pitch, k, kind: str, plan: str):
        """Note a "rows" build's flat access (flat_rows) and its plan, for mncl-cc --stats."""
        if pitch is not None:
            self.em.rows.use(pitch, self.em.line, k, kind, plan)

    # private arrays --------------------------------------------------------------------------
    def private_layout(self):
        """(alloca -> byte offset, bytes, words of each work-item's block) of the private arrays."""
        em = self.em
        allocas = [x for b in em.f.blocks for x in b.insts if x.op == "alloca"]
        offs, total = {}, 0
        for a in allocas:
            n = a.ops[0].value if a.ops and isinstance(a.ops[0], Const) else 1
            offs[a] = total
            total += -(-type_size(a.elem) * n // 8) * 8
        words = 2
        while words * 4 < total:
            words *= 2
        return offs, total, (words if allocas else 0)

    def private_offset(self, i: Inst) -> int:
        """Byte offset of an alloca in each work-item's private block (blocks of a power-of-two
        number of words in LM0 above the gather and scatter areas, one per (cycle, lane))."""
        em = self.em
        if em.priv_offsets is None:
            offs, total, words = self.private_layout()
            base = 4 * em.CH
            if base + 8 * words > em.lm_top:
                raise CodegenError(f"private arrays need {total} bytes per work-item (a block of {4 * words}: "
                                   f"blocks are powers of two); the emulator device has "
                                   f"{(em.lm_top - base) // 8 * 4} (LM0 holds eight work-items' arrays"
                                   f"{' and the tables of x[j] loads' if em.lm_top < em.lay.lm_words else ''})",
                                   em.line)
            saved, em.items = em.items, []
            lanes = []
            for h in (0, 1):          # (2 * cycle + lane) * words + base, in each long word's low half
                t = em.alu("ilsl", em.cycle, em.c32(words.bit_length()))
                lanes.append(em.alu("iadd", t, em.c32(base + h * words)))
            em.prologue += em.items
            em.items = saved
            em.priv_offsets = (offs, words, lanes)
        return em.priv_offsets[0][i]

    def check_private(self, ptr: Val, size: int, p: VReg, store: bool) -> VReg:
        """p and the lanes whose access of a private array at a run-time index lies in the array
        (the array is the one the pointer's constant offset falls in): an index out of it is reported
        as out of a buffer is (check_bounds), and a store there is dropped; it wrapped into the
        work-item's other private words before."""
        em = self.em
        offs, _, _ = self.private_layout()
        at = [(o, a) for a, o in offs.items() if o <= ptr.coff] or [(0, next(iter(offs)))]
        o, a = max(at, key=lambda t: t[0])
        n = a.ops[0].value if a.ops and isinstance(a.ops[0], Const) else 1
        extent = type_size(a.elem) * n
        rel = replace(ptr, coff=ptr.coff - o)
        if rel.idx is not None and rel.coff % rel.idx[1] == 0 and rel.coff + size <= rel.idx[1]:
            q, r = rel.coff // rel.idx[1], rel.idx[2]           # (the index's range is inside: no check)
            if r is not None and 0 <= r[0] + q and r[1] + q < extent // rel.idx[1]:
                return p
        return em.b_and(p, em.bounds.check_bounds(("priv", extent), rel, size, p, store=store))

    def private_access(self, ptr: Val, ty: str, v: Val = None, p: VReg = None):
        """A load (v None) or masked store of each lane's own private element, T-indirect in LM0."""
        em = self.em
        size = type_size(ty)
        if size not in (4, 8):
            raise CodegenError(f"private {ty} ({size}-byte) elements are not supported on the emulator device yet",
                               em.line)
        _, words, lanes = em.priv_offsets
        w = em.alu("uilsr", self.ptr_off(ptr), em.c32(2))
        w = em.alu("iand", em.alu("ixor", w, em.c32(1)) if size == 4 else w, em.c32(words - 1))
        lm = (("r", "m", 4 * em.CH, 4 * em.CH + 8 * words),)
        lmw = lm + (("w", "m", 4 * em.CH, 4 * em.CH + 8 * words),)
        out = []
        for h in (0, 1):          # the upper (odd) lane, then the lower one
            lane = em.alu("ulsr", w, em.c32(32)) if h == 0 else em.alu("land", w, em.const64(0xFFFFFFFF))
            em.op("lpassa {s0} $t", "alu", (), (em.alu("ladd", lane, lanes[h]),), mem=TW)
            if size == 8:
                if v is None:
                    r = em.new("priv")
                    em.op("lpassa $lmt0 {d0}", "alu", (r,), (), mem=lm + TR)
                    out.append(r)
                else:
                    km = em.flags("lnot", em.widen_bool(p)[h])
                    em.op("lpassa {s0} $lmt0/{k0}", "alu", (), (v.regs[h],), msrc=(km,), mem=lmw + TR)
            elif v is None:
                r = em.new("priv")
                em.op("ipassa $mt0 {d0}", "alu", (r,), (), mem=lm + TR)
                out.append(r)
            else:
                val = v.regs[0] if h == 0 else em.alu("llsl", v.regs[0], em.c32(32))
                pm = p if h == 0 else em.alu("llsl", p, em.c32(32))
                em.op("ipassa {s0} $mt0/{k0}", "alu", (), (val,), msrc=(em.mask_of(pm),), mem=lmw + TR)
        if v is not None:
            return None
        if size == 8:
            return Val(em.values.kind_of(ty), tuple(out))
        hi = em.alu("land", out[0], em.const64(0xFFFFFFFF00000000))
        return Val(em.values.kind_of(ty), (em.alu("lor", hi, em.alu("ulsr", out[1], em.c32(32))),))

    def mem_intrinsic(self, base, args, p):
        """memset / memcpy of a constant length (initialisers, struct copies): word by word."""
        em = self.em
        n = args[2].const
        if n is None:
            raise CodegenError(f"{base} of a run-time length is not supported on the emulator device", em.line)
        dst = args[0]
        step = 4 if n % 4 == 0 else 1
        ty = "i32" if step == 4 else "i8"
        for k in range(0, n, step):
            at = lambda ptr: em.values.proxy("ptr", replace(ptr, coff=ptr.coff + k, gid_affine=None))
            if base == "memset":
                b = args[1].const
                if b is None:
                    v = em.values.narrow(args[1])
                    if step == 4:
                        v = em.alu("iand", v, em.c32(0xFF))
                        v = em.alu("ior", v, em.alu("ilsl", v, em.c32(8)))
                        v = em.alu("ior", v, em.alu("ilsl", v, em.c32(16)))
                    val = em.values.proxy(ty, Val("i32", (v,)))
                else:
                    val = Const(ty, (b & 0xFF) * (0x01010101 if step == 4 else 1))
            else:
                ld = Inst("load", "mem", ty, [at(args[1])], elem=ty, line=em.line)
                em.codegen.inst(ld, p)
                val = ld
            em.codegen.inst(Inst("store", "", "void", [val, at(dst)], line=em.line), p)
        return None

    def word_ptr(self, ptr: Val) -> Val:
        em = self.em
        return Val("ptr", base=ptr.base, off=Val("i32", (em.alu("iand", self.ptr_off(ptr), em.c32(-4)),)))

    def narrow_load(self, ptr: Val, ty: str, p: VReg) -> Val:
        """An i8/i16 element: the 32-bit word holding it, shifted down (bytes are little-endian)."""
        em = self.em
        size = type_size(ty)
        word = self.load_word(self.word_ptr(ptr), p)
        sh = em.alu("ilsl", em.alu("iand", self.ptr_off(ptr), em.c32(4 - size)), em.c32(3))
        return Val("i32", (em.alu("uilsr", word, sh),))

    def load_word(self, ptr: Val, p: VReg) -> VReg:
        b = ptr.base
        if b == ("priv",):
            return self.private_access(ptr, "i32").regs[0]
        return self.gather("L" if b == ("local",) else b[1], ptr, "i32", p).regs[0]

    def fast_load(self, k, for_store=False, per_wave=True, hoist=True, at=None):
        """The wave's share of buffer k, 32-bit element w of the wave in lane w (layout.py); `at`:
        the share's address in every group's DRAM instead (a sequencer expression: rowstore.py).

        A load at the top of the wave body before any store reads straight into its own
        staging area, and its transfer is hoisted to the start of the wave, where all such
        transfers are in flight together; a second load of the buffer reuses the value."""
        em = self.em
        lay = em.lay
        S = lay.stripe
        if at is not None:
            per_wave = False
        key = k if at is None else (k, at)
        if not for_store and not em.loop_stack and key in em.fast_cache:
            return em.fast_cache[key]
        lc, lb, own = self.staging_area("fast", hoist)
        if em.stored or any(ctx["stores"] for ctx in em.loop_stack):
            self.settle_stores()  # it may read what a store still in flight writes
        t = em.tag()
        rep = not for_store and self.readable(k)
        src = at if at is not None else f"{self.read_base(k)}+%wx*{S * lay.groups}" if rep \
            else f"{reg(base(k))}+%wx*{S}" if per_wave else reg(base(k))
        d = em.new(f"ld{k}")
        mv = MV(f"mvd/n{S}i{t} $d0 $lc{lc}", src, em.line, share=per_wave or at is not None)
        self.staged(mv, t, lc, lb, d, hoist=own, read_only=rep and per_wave)
        if own and per_wave and not rep and em.replicate and not for_store:   # (not a store's merge)
            em.own_share_loads.append(mv)
        em.uses.setdefault("bases", set()).add(k)
        if not em.loop_stack and not for_store:
            em.fast_cache[key] = (d, (lc, lb))
        return d, (lc, lb)

    def prefetch_loads(self) -> list:
        """The wave's first loads the next wave may issue early (prefetch.py): those of read-only
        buffers, and those of buffers the kernel writes when every store of the kernel goes to the
        wave's own share (no wave can then write what another reads) and no buffer is passed twice
        (the launch replicates)."""
        em = self.em
        return em.prefetchable + ([] if em.scatters else em.own_share_loads)

    def staged(self, mv: MV, t: int, lc: int, lb: int, d: VReg, hoist: bool, read_only: bool = False):
        """A wave share DRAM -> L2BM (lc) -> L1BM (lb) -> register d.  Hoisted, the whole
        chain starts the wave: every such load's moves are then scheduled with the wave's
        first computations instead of after them."""
        em = self.em
        N, P = em.lay.l1b, em.lay.pe_l1b
        outer, em.items = em.items, []
        em.op(f"wait i{t}", "wait")
        for s in range(em.lay.l2bmd_steps):
            em.op(f"l2bmd $lc{lc + 32 * N * s} $lb{lb + 32 * s}", "l2bm",
                  mem=(("r", "lc", lc + 32 * N * s, lc + 32 * N * (s + 1)), ("w", "lb", lb + 32 * s, lb + 32 * s + 32)))
        em.op(f"l1bmd $lb{lb} {{d0}}", "l1bm", (d,), mem=(("r", "lb", lb, lb + 4 * P),))
        ops, em.items = em.items, outer
        mv.chain = (t, lc, lb)            # for packing.py, which moves four such loads at once
        if hoist:
            em.hoisted.append((mv, ops))
            if read_only:                 # the next wave's may move while this one computes
                em.prefetchable.append(mv)
        else:
            em.items += [mv] + ops

    def staging_area(self, shared: str, hoist: bool):
        """(lc, lb, own) for one wave share: outside loops and before any store a load may start
        with the wave and gets an area of its own (own=True) while those take at most half of
        L2BM and L1BM has room; otherwise it uses the shared area of that name.  (The half left
        is for the areas made later, this shared one among them: sixteen loads of an unrolled
        loop once took all of L2BM, and the next load's shared area failed the build.)"""
        em = self.em
        lay = em.lay
        n = lay.stripe // lay.l2b
        if hoist and not em.loop_stack and not em.stored and em.own_staged + n <= lay.l2bm_longs // 2:
            try:
                area = em.alloc_lc(n), em.alloc_lb(4 * lay.pe_l1b), True
                em.own_staged += n
                return area
            except CodegenError:
                pass
        return (*em.shared_area(shared, n, 4 * lay.pe_l1b), False)

    @staticmethod
    def param_root(x):
        """The buffer parameter a pointer IR value points into (its index), "private or local", or
        None when that is not clear."""
        while isinstance(x, Inst) and x.op in ("getelementptr", "bitcast", "addrspacecast"):
            x = x.ops[0]
        if isinstance(x, Inst) and (x.op == "alloca" or x.op == "call" and x.callee == "__mncl_local"):
            return "private or local"          # not a buffer parameter
        if isinstance(x, Inst) and x.op == "load" and x.type == "ptr":
            a = x.ops[0]
            if isinstance(a, Arg) and a.name == "args":
                return 0
            if isinstance(a, Inst) and a.op == "getelementptr" and isinstance(a.ops[0], Arg) \
                    and a.ops[0].name == "args" and isinstance(a.ops[-1], Const):
                return a.ops[-1].value // 8 if a.elem in ("i8",) else a.ops[-1].value
        return None

    @staticmethod
    def store_dst(i: Inst):
        """The pointer an IR instruction stores through (a store, memset, memcpy), or None."""
        if i.op == "store":
            return i.ops[1]
        if i.op == "call" and i.callee.startswith(("llvm.memset", "llvm.memcpy", "llvm.memmove")):
            return i.ops[0]
        return None

    def written_params(self) -> set:
        """Parameters the kernel may store through (all of them if a store's buffer is not clear)."""
        em = self.em
        if em.written is None:
            root = self.param_root
            out = set()
            for b in em.f.blocks:
                for i in b.insts:
                    dst = self.store_dst(i)
                    if dst is None:
                        continue
                    k = root(dst)
                    if k is None:
                        out = set(range(len(em.params)))
                        break
                    out.add(k)
            em.written = out
        return em.written

    def is_replicated(self, k) -> bool:
        """Read-only buffer parameters are replicated (layout.py) unless the launch forbids it."""
        em = self.em
        if isinstance(k, int) and em.replicate and k not in self.written_params() \
                and em.params[k].kind in ("global", "constant"):
            em.uses.setdefault("replicated", set()).add(k)
            return True
        return False

    def loads_before_stores(self) -> set:
        """Written buffer parameters whose every load comes before every store to them in each
        work-item's program order (no load reachable from a store, loops included), touched only by
        plain loads and stores.  Such a load can only see the launch's starting value: another
        work-item's store to that element is a data race (work-items of different work-groups have
        no way to order them), unless a barrier orders it -- and a barrier can only put a store
        after the loads (scan's `a[lid] = sums[lid - 1]; barrier(..); sums[lid] = a[lid]`): a load
        after a barrier that follows a store would be reachable from that store."""
        em = self.em
        if em.loads_first is not None:
            return em.loads_first
        loads, stores, bad = {}, {}, set()
        for b in em.f.blocks:
            for n, i in enumerate(b.insts):
                if i.op in ("getelementptr", "bitcast", "addrspacecast"):
                    continue                 # (its users say how the pointer is used)
                for j, x in enumerate(i.ops):
                    k = self.param_root(x) if isinstance(x, Inst) else None
                    if not isinstance(k, int):
                        continue
                    if i.op == "load" and j == 0:
                        loads.setdefault(k, []).append((b.name, n))
                    elif i.op == "store" and j == 1:
                        stores.setdefault(k, []).append((b.name, n))
                    else:
                        bad.add(k)
        for k, at in stores.items():
            for blk, n in at:
                seen, todo = set(), list(em.succ.get(blk, ()))
                while todo:
                    x = todo.pop()
                    if x not in seen:
                        seen.add(x)
                        todo += em.succ.get(x, ())
                if any(lb in seen or lb == blk and ln > n for lb, ln in loads.get(k, ())):
                    bad.add(k)
        em.loads_first = set(stores) & set(loads) - bad
        return em.loads_first

    def snapshot(self, k) -> bool:
        """Whether the loads of written buffer k read its launch-start copy, replicated like a
        read-only buffer (the runtime writes it to abi.snapshot(k)): k is loaded only before it is
        stored to (loads_before_stores), so the load paths of a read-only buffer serve it
        (shifted, uniform, tabled; the row, tile and window plans still ask is_replicated)
        instead of a gather of the buffer as stores change it."""
        em = self.em
        if isinstance(k, int) and em.replicate and em.params[k].kind == "global" \
                and k in self.written_params() and k in self.loads_before_stores():
            em.uses.setdefault("snapshots", set()).add(k)
            return True
        return False

    def readable(self, k) -> bool:
        """Whether buffer k's loads read a replicated copy: its own (read-only) or its snapshot."""
        return self.is_replicated(k) or self.snapshot(k)

    def read_copy(self, k):
        """The abi name of the copy of buffer k that loads read (abi.snapshot or abi.base)."""
        return snapshot if self.snapshot(k) else base

    def read_base(self, k) -> str:
        return reg(self.read_copy(k)(k))

    def uniform_load(self, k, aff, ty) -> Val:
        """p[u] for a uniform u the sequencer knows, from a read-only (replicated) buffer.

        The 64 long words around it are broadcast to every L1BM (mvb, l2bmb), again only when u
        leaves them (the sequencer remembers the block in %ub<k>), and every PE reads its long
        word with l1bmp at an offset the sequencer adds: a loop walking x[j] moves each block once
        (in a loop, through a table: uniform_table; a walk by blocks: walked)."""
        em = self.em
        u = f"(({aff[1]}) + ({aff[2] or 0}))"                     # byte offset
        blk = block_of(u)
        kind, size = em.values.kind_of(ty), type_size(ty)
        walk = self.walks(u, size) if em.loop_stack else None
        if walk is True:
            return self.walked(k, u, ty)
        if em.loop_stack:
            outer, em.items = em.items, []
            table = self.uniform_table(k, u, size)
            tabled, em.items = em.items, outer
            if table is not None and walk is None:
                em.items += tabled
                return Val(kind, table)
            if table is not None:             # the stride is the launch's: a table or a walk, by its size
                d = em.new("uni")
                em.items = tabled
                em.copy(table[0], d)
                tabled, em.items = em.items, []
                em.copy(self.walked(k, u, ty).regs[0], d)
                outer.append(SeqIf(walk, em.items, tabled))
                em.items = outer                  # (the same list: a batch of stores may have begun in it)
                return Val(kind, (d,) if size == 4 else (d, d))
            if walk is not None:
                return self.walked(k, u, ty)
        lc, lb = em.shared_area(("uniform", k), 64, 68)
        em.uses.setdefault("bases", set()).add(k)
        reg = f"%ub{k}"
        if ("uniform", k) not in em.uniform_blocks:
            em.uniform_blocks.add(("uniform", k))
            em.prologue.append(SeqSet(reg, "-1"))
        em.items.append(SeqIf(f"{blk} != {reg}", self.broadcast_block(k, blk, lc, lb) + [SeqSet(reg, blk)]))
        return self.block_read(k, u, ty, lb)

    def block_read(self, k, u: str, ty, lb: int) -> Val:
        """p[u] from its 64-long-word block at lb in every L1BM: each PE's l1bmp at u's offset."""
        em = self.em
        w = em.new(f"u{k}")
        em.items.append(Call([Op(f"l1bmp $lb{lb} {{d0}}", "l1bm", (w,), (), mem=(("r", "lb", lb, lb + 68),),
                                 line=em.line)], {"lb": f"((({u}) >> 3) & 63)"}))
        if type_size(ty) == 8:
            r = em.new("uni")
            em.op("lpassa {u0} {d0}", "alu", (r,), (w,))
            return Val(em.values.kind_of(ty), (r, r))
        return Val(em.values.kind_of(ty), (self.pick_half(w, u),))

    def walked(self, k, u: str, ty) -> Val:
        """p[u] in a counted loop whose passes move u by a block or more (walks): u's block moves
        to every L1BM each pass (mvb, l2bmb), its MV recorded as a column load, so that colplan.py
        issues the coming passes' blocks while this pass computes."""
        em = self.em
        em.uses.setdefault("bases", set()).add(k)
        lc, lb = em.shared_area(("walk", k), 64, 68)
        t = em.tag()
        mv = self.block_mv(k, block_of(u), lc, self.read_copy(k), t)
        mv.chain = (t, lc, lb)
        em.columns[mv.chain] = (em.line, self.param(k).name)
        em.items += [mv, Op(f"wait i{t}", "wait", line=em.line), self.l2bmb(lc, lb)]
        return self.block_read(k, u, ty, lb)

    def walks(self, u: str, size: int):
        """Whether byte offset u moves by a table's block (64 elements of `size` bytes) or more each
        pass of the innermost loop, a counted one (`A[i * n + c]` in a loop over i, read by every
        lane), where a table of u's block (uniform_table) would be fetched anew, waiting out its
        MV, every pass: True, or None for never; for a stride of the launch's arguments (a pitch,
        or `x[k * incx]`), the sequencer condition that says so.  (The stride: u's pass-to-pass
        difference, evaluated at two points to tell a constant.)"""
        n = self.em.loop_stack[-1].get("seq_reg")
        names = sorted(set(re.findall(r"%\w+", u)))
        if n is None or n not in names:
            return None
        step = seqexpr.seq(f"({seqexpr.at(u, n[1:], f'{n} + 1')}) - ({u})")
        by_launch = f"({step}) >= {64 * size} or ({step}) <= -{64 * size}"
        try:
            got = {seqexpr.evaluate(step, {r[1:]: 5 + 11 * j + i for i, r in enumerate(names)}) for j in (1, 2)}
        except (ArithmeticError, KeyError):     # (not known here: the sequencer decides)
            return by_launch
        if len(got) > 1:
            return by_launch
        return True if abs(got.pop()) >= 64 * size else None

    def block_mv(self, k, blk: str, lc: int, copy, t: int) -> MV:
        """The MV of the 64 long words of buffer k (its widened copy with copy=abi.widened; abi.base otherwise) from long word
        blk on, from group 0's DRAM into every L2BM at lc, under tag t."""
        em = self.em
        a = f"{reg(copy(k))} + {blk}"
        hi = em.lay.dram_longs - 64
        # an index out of bounds (reported by its check) reads a clamped block
        return MV(f"mvb/n64i{t} $d0@0 $lc{lc}", dram_clamped(a, hi), em.line)

    def l2bmb(self, lc: int, lb: int) -> Op:
        """64 long words of L2BM at lc to every L1BM at lb."""
        em = self.em
        return Op(f"l2bmb $lc{lc} $lb{lb}", "l2bm", mem=(("r", "lc", lc, lc + 64), ("w", "lb", lb, lb + 64)),
                  line=em.line)

    def broadcast_block(self, k, blk: str, lc: int, lb: int) -> list:
        """The 64 long words of buffer k from long word blk on, into every L1BM at lb (mvb, l2bmb)."""
        em = self.em
        t = em.tag()
        return [self.block_mv(k, blk, lc, self.read_copy(k), t), Op(f"wait i{t}", "wait", line=em.line),
                self.l2bmb(lc, lb)]

    def uniform_table(self, k, u: str, size: int):
        """p[u] in a loop (x[j]): each PE keeps the 64 elements around u as a table in LM0 with one
        long word per element, so an element costs one read at an offset the sequencer adds; the
        block moves (mvb, l2bmb, l1bmp: 8 long words a step) once, when u leaves it.  A 32-bit
        element comes from the buffer's *widened* copy, in which the runtime stores each element
        in both halves of a long word (layout.py), so the table is the block as it is.

        The block after it is on its way meanwhile: blocks of even and odd number go through L2BM
        areas of their own (tags of their own), and fetching one starts the MV of the next
        (%pf: the block in flight, or 1), so walking up a buffer waits for no MV but the first; the
        last block starts none (no byte past the buffer crosses DRAM).  None when LM0 has no room
        left."""
        em = self.em
        tables = em.tables
        if (k, size) not in tables:
            floor = 4 * em.CH + 8 * self.private_layout()[2]     # private arrays come first
            if em.lm_top - 128 < floor:
                return None
            em.lm_top -= 128
            lc, lb = em.shared_area(("utable", k), 64, 64)
            areas = ((lc, em.tag()), (em.alloc_lc(64), em.tag()))
            ut, pf = em.seq_reg("ut"), em.seq_reg("pf")
            tables[(k, size)] = (em.lm_top, ut, pf, areas, lb)
            # (a block is a multiple of 64, negative for an index out of bounds: 1 means none)
            em.prologue += [SeqSet(ut, "1"), SeqSet(pf, "1")]
        tw, ut, pf, areas, lb = tables[(k, size)]
        shift = 2 if size == 4 else 3
        blk = f"((({u}) >> {shift + 6}) << 6)"                    # its block of 64 (widened) long words
        copy = widened if size == 4 else self.read_copy(k)
        em.uses.setdefault("widened" if size == 4 else "bases", set()).add(k)
        em.uses.setdefault("sizes", set()).add(k)
        wait = lambda t: Op(f"wait i{t}", "wait", line=em.line)
        arms = []
        for (lc, t), (lc2, t2) in (areas, areas[::-1]):        # blk even, then odd
            arms.append([
                SeqIf(f"{pf} != {blk}", [                      # not on its way: drain, then fetch it
                    SeqIf(f"{pf} != 1", [SeqIf(f"({pf} >> 6) & 1", [wait(areas[1][1])], [wait(areas[0][1])])]),
                    self.block_mv(k, blk, lc, copy, t)]),
                wait(t),
                self.l2bmb(lc, lb),
                *(Op(f"l1bmp $llb{lb + 8 * g} $llm{tw + 16 * g}v", "l1bm", line=em.line,
                     mem=(("r", "lb", lb + 8 * g, lb + 8 * g + 8), ("w", "m", tw + 16 * g, tw + 16 * g + 16)))
                  for g in range(8)),
                SeqIf(f"(({blk}) + 64) << {shift} < {reg(nbytes(k))}",    # the next block, if the buffer has one
                      [self.block_mv(k, f"({blk}) + 64", lc2, copy, t2), SeqSet(pf, f"({blk}) + 64")],
                      [SeqSet(pf, "1")])])
        em.items.append(SeqIf(f"{blk} != {ut}", [SeqIf(f"({blk} >> 6) & 1", arms[1], arms[0]),
                                                  SeqSet(ut, blk)], staging=True))
        slot = f"((({u}) >> {shift}) & 63)"
        g = table_lanes(self.param(k)) if size == 4 else 1
        if g > 1:                  # the copy keeps the vectors' components apart (Layout.widened)
            e = f"(({u}) >> 2)"
            slot = f"(({e} & {g - 1}) * {64 // g} + (({e} >> {g.bit_length() - 1}) & {64 // g - 1}))"
        r = em.new("uni")
        em.items.append(Call([Op(f"lpassa $lm{tw} {{d0}}", "alu", (r,), (), mem=(("r", "m", tw, tw + 128),),
                                 line=em.line)], {"m": f"{slot} * 2"}))
        return (r,) if size == 4 else (r, r)

    def shifted_load(self, k, aff) -> VReg:
        """p[get_global_id(0) + u] for a read-only buffer and a uniform u the sequencer knows.

        Such a buffer is *replicated*: every group's DRAM holds all of it, group g's copy
        g stripes lower (layout.py), so one MV address gives every group its own share of
        the wave moved by u / 2 long words; an odd u takes the next long word's halves too.
        A constant u decides that at compile time, and its long-word loads are shared with
        the wave's other loads of the buffer (in[i-1], in[i] and in[i+1] take three, not five)."""
        em = self.em
        em.uses.setdefault("bases", set()).add(k)
        if em.stored:
            self.settle_stores()
        c32 = em.c32(32)
        join = lambda a, b: em.alu("lor", em.alu("ulsr", a, c32), em.alu("llsl", b, c32))
        if aff[2] is None and aff[1] % 4 == 0:
            e = aff[1] >> 2
            a = self.long_shift_load(k, e >> 1)
            return join(a, self.long_shift_load(k, (e >> 1) + 1)) if e & 1 else a
        u = f"((({aff[1]}) + ({aff[2] or 0})) >> 2)"          # elements
        a = self.long_shift_load(k, f"({u} >> 1)")     # a register of its own (not cached): an
        out, em.items = em.items, []                   # odd u rewrites it in place
        em.copy(join(a, self.long_shift_load(k, f"({u} >> 1) + 1", hoist=False)), a)
        odd, em.items = em.items, out
        em.items.append(SeqIf(f"({u}) & 1", odd))
        return a

    def read_share(self, k, at: str, hint: str, hoist=False) -> VReg:
        """The wave's share at DRAM address `at` (a sequencer expression) of a copy of buffer k
        that nothing stores to (its replicated copy moved by a shift, a row load's transposed
        copy); in a loop a column load, which the column plan (colplan.py) moves a pass early."""
        em = self.em
        lc, lb, own = self.staging_area("shift", hoist)
        t = em.tag()
        mv = MV(f"mvd/n{em.lay.stripe}i{t} $d0 $lc{lc}", at, em.line, share=True)
        d = em.new(hint)
        self.staged(mv, t, lc, lb, d, hoist=own, read_only=True)
        if em.loop_stack:
            em.columns[mv.chain] = (em.line, self.param(k).name)
        return d

    def long_shift_load(self, k, shift, hoist=True) -> VReg:
        """The wave's share of replicated buffer k moved by `shift` long words (an int or a
        sequencer expression); constant shifts are loaded once per wave (fast_cache)."""
        em = self.em
        key = (k, "shift", shift) if isinstance(shift, int) and not em.loop_stack else None
        if shift == 0 and key:
            return self.fast_load(k)[0]
        if key in em.fast_cache:
            return em.fast_cache[key]
        lay = em.lay
        S, G = lay.stripe, lay.groups
        a = f"{self.read_base(k)} + %wx * {G * S} + {shift}"
        # lanes outside the buffer (a guarded border, the wave's tail) may ask for addresses
        # beyond DRAM: the transfer is clamped, those lanes' values are don't-care
        d = self.read_share(k, dram_clamped(a, lay.dram_longs - S), f"sh{k}", hoist)
        if key:
            em.fast_cache[key] = d
        return d

    def fast_store(self, k, val: VReg, p: VReg, per_wave: bool = True, full: str = None, at: str = None):
        """Read-modify-write of the wave's share: lanes outside p keep what memory held; where the
        sequencer condition `full` holds, p is every lane and the read is skipped.  `at`: the
        share's address in every group's DRAM (rowstore.py), instead of buffer k's."""
        em = self.em
        em.scatter.flush_scatters()
        S = em.lay.stripe
        cached = em.fast_cache.get(k) if not em.loop_stack and at is None else None
        if cached:                # the wave's share is in a register already: merge into a copy
            old = em.copy(cached[0])
            em.masked_copy(val, old, em.mask_of(p))
        elif full:
            old = em.copy(val)
            outer, em.items = em.items, []
            em.masked_copy(self.fast_load(k, for_store=True, per_wave=per_wave, hoist=False, at=at)[0], old,
                           em.mask_of(em.b_not(p)))
            merge, em.items = em.items, outer
            em.items.append(SeqIf(f"not ({full})", merge))
        else:                     # (a copy's share is read where the copy exists: not hoisted out of its guard)
            old = self.fast_load(k, for_store=True, per_wave=per_wave, hoist=at is None, at=at)[0]
            em.masked_copy(val, old, em.mask_of(p))
        self.store_up(old, lambda lc: [MV(f"mvd/n{S}i{STORE_TAG} $lc{lc} $d0", at if at is not None else
                                          f"{reg(base(k))}+%wx*{S}" if per_wave else reg(base(k)), em.line,
                                          share=per_wave or at is not None)])
        em.scatters |= not per_wave and at is None and isinstance(k, int)     # (not the bounds reports)

    def store_up(self, old: VReg, mvs):
        """The wave's share in register `old` up to L2BM (l1bmd, l2bmd) and out by the MVs mvs(lc).
        It goes up from a staging area of its own and nothing waits for it: the next wave's loads
        run while it is in flight; the next user of the area (or any gather or scatter, which may
        read it back) waits first."""
        em = self.em
        lay = em.lay
        S, N, P = lay.stripe, lay.l1b, lay.pe_l1b
        if "store" not in em.areas:
            lc, lb = em.shared_area("store", S // lay.l2b, 4 * P)
            # (the store tag's first transfer, so the first wait has one: a small mvp from PDM,
            # whose contents do not matter, will do; from DRAM it would cost DRAM bytes.  PDM's
            # first CH long words are the scatter's reductions', which must not meet it in flight)
            em.prologue += [MV(f"mvp/n64i{STORE_TAG} $p{em.CH}@0 $lc{lc}@0.0", "0", em.line)]
        lc, lb = em.shared_area("store", S // lay.l2b, 4 * P)
        self.settle_stores()
        em.op(f"l1bmd {{s0}} $lb{lb}", "l1bm", (), (old,), mem=(("w", "lb", lb, lb + 4 * P),))
        for s in range(lay.l2bmd_steps):
            em.op(f"l2bmd $lb{lb + 32 * s} $lc{lc + 32 * N * s}", "l2bm",
                  mem=(("r", "lb", lb + 32 * s, lb + 32 * s + 32), ("w", "lc", lc + 32 * N * s, lc + 32 * N * (s + 1))))
        em.op("nop", "nop")
        em.op("nop", "nop")
        em.items += mvs(lc)

    # -- __local memory laid out like the wave: the unit plan ------------------------------------
    def local_unit(self, x, size: int):
        """(the __local argument, the shift u in elements: an int or a sequencer expression, the
        uniform part of the byte offset) when IR pointer x is `part[get_local_id(0) + u]` into a
        __local pointer argument, 4-byte elements, u uniform and known to the sequencer, in a
        build whose L2Bs keep their own work-groups' blocks (abi.local_per_l2b); else None.  Where
        the launch lays its blocks out like the wave (abi.wave_major_locals, tested by
        local_holds), element lid of the work-group whose place in its L2B's run is j lies at
        4 * (j * ls + lid) in the argument's array: the L2B's run of work-items in order, as a
        contiguous load delivers it (local_share)."""
        em = self.em
        if size != 4 or not (em.one_d and em.local_l2b) or em.rows is not None:
            return None
        got = self.local_form(x)
        if got is None or got[1][0] != 4 or got[1][1] % 4:
            return None
        k, (_, const, seq) = got
        return k, const // 4 if seq is None else f"((({const}) + ({seq})) >> 2)", seq

    def local_form(self, x):
        """(argument, (coef, const, seq)): IR pointer x into __local pointer argument k at byte
        coef * get_local_id(0) + const + seq, or None."""
        if isinstance(x, Inst) and x.op == "getelementptr" and len(x.ops) == 2:
            base, f = self.local_form(x.ops[0]), self.lid_form(x.ops[1])
            return None if base is None or f is None else (base[0], aff_add(base[1], aff_scale(f, type_size(x.elem))))
        k = self.param_root(x) if isinstance(x, Inst) and x.op == "load" else None
        return (k, (0, 0, None)) if isinstance(k, int) and self.param(k).kind == "local" else None

    def lid_form(self, x):
        """IR integer x as (coef, const, seq): coef * get_local_id(0) + const + seq, seq a uniform
        value the sequencer knows; or None."""
        em = self.em
        if isinstance(x, Const):
            return (0, x.value, None) if type(x.value) is int else None
        if not isinstance(x, Inst):
            return None
        if x.op == "load":
            ptr = em.vals.get(x.ops[0])
            if ptr is not None and ptr.base == ("ids",) and ptr.off is None and ptr.coff == 0:
                return 1, 0, None
        elif x.op in ("sext", "zext", "trunc", "freeze") and x.ops[0].type != "i1":
            return self.lid_form(x.ops[0])
        elif x.op in ("add", "sub"):
            a, b = self.lid_form(x.ops[0]), self.lid_form(x.ops[1])
            if a is not None and b is not None:
                return aff_add(a, b, 1 if x.op == "add" else -1)
        elif x.op in ("mul", "shl") and isinstance(x.ops[1], Const) and type(x.ops[1].value) is int \
                and (x.op == "mul" or 0 <= x.ops[1].value < 31):
            a = self.lid_form(x.ops[0])
            if a is not None:
                return aff_scale(a, x.ops[1].value if x.op == "mul" else 1 << x.ops[1].value)
        elif x.op == "ashr" and isinstance(x.ops[1], Const) and isinstance(x.ops[0], Inst) and x.ops[0].op == "shl" \
                and x.ops[0].type == "i64" and isinstance(x.ops[0].ops[1], Const) and x.ops[0].ops[1].value == 32 \
                and type(x.ops[1].value) is int and 0 <= 32 - x.ops[1].value < 31:
            # an i32 index sign-extended and scaled: (x << 32) >> (32 - s) is x << s
            a = self.lid_form(x.ops[0].ops[0])
            if a is not None:
                return aff_scale(a, 1 << (32 - x.ops[1].value))
        e = em.values.seq_expr(x)
        return None if e is None else (0, 0, e)

    def local_holds(self, k, seq) -> tuple:
        """The launch tests of the unit plan for __local argument k: the blocks laid out like the
        wave (abi.wave_major_locals: the kernel's block is one 4-byte element per work-item, the
        argument's array starts at a long word) and the uniform part of the byte offset, `seq`,
        whole elements."""
        em = self.em
        em.uses["local_bytes"] = True
        em.uses.setdefault("extents", set()).add("lsx")
        em.uses.setdefault("params", set()).add(k)
        ls = reg("lsx")
        return (f"{reg(LOCAL_BYTES)} == 4 * {ls}", f"{reg(param(k))} % 8 == 0", f"{em.lay.l2b_items} % {ls} == 0") \
            + ((f"(({seq}) & 3) == 0",) if seq is not None else ())

    def local_array(self, k, h: int) -> str:
        """DRAM address (a sequencer expression) of __local argument k's array in L2B h's blocks, in
        every group (abi.wave_major_locals)."""
        return f"{self.local_row(h, '0')}+{reg(param(k))}/8"

    def local_share(self, k, shift, dst: VReg = None) -> VReg:
        """The wave's share of __local argument k's array moved by `shift` long words (an int or a
        sequencer expression): each L2B's run from its own blocks (local_array), one mvp each,
        then l2bmd and l1bmd as a contiguous load.  Lanes whose element lies outside their run (a
        shift past a work-group's end: no work-item of a correct kernel reads it) get don't-care."""
        em = self.em
        lay = em.lay
        half = lay.stripe // lay.l2b
        em.uses.setdefault("bases", set()).add(LOCAL)
        em.uses.setdefault("rows", set()).add(LOCAL)
        self.settle_stores()            # (a unit store in flight, this pass's or the previous one's)
        lc, lb = em.shared_area("shift", half, 4 * lay.pe_l1b)
        t = em.tag()
        hi = lay.dram_longs - half
        mvs = [MV(f"mvp/n{half}i{t} $d0 $lc{lc}@.{h}", dram_clamped(f"{self.local_array(k, h)}+({shift})", hi), em.line,
                  share=True) for h in range(lay.l2b)]
        d = dst or em.new("lcl")
        em.items += mvs[:-1]
        self.staged(mvs[-1], t, lc, lb, d, hoist=False)
        return d

    def local_load(self, x, ptr: Val, ty: str, p: VReg) -> Val | None:
        """`part[lid + u]` by the unit plan (local_unit), the gather where the launch fails its tests
        (a versioning guard), or None when the access is not of that shape."""
        em = self.em
        got = self.local_unit(x, type_size(ty))
        if got is None:
            return None
        k, u, seq = got
        self.note_access(LOCAL, "load")
        out = em.new("lcl")
        outer, em.items = em.items, []
        em.copy(self.gather(LOCAL, ptr, ty, p).regs[0], out)
        slow, em.items = em.items, []
        c32 = em.c32(32)
        join = lambda a, b: em.alu("lor", em.alu("ulsr", a, c32), em.alu("llsl", b, c32))
        if isinstance(u, int):
            a = self.local_share(k, u >> 1, None if u & 1 else out)
            if u & 1:
                em.copy(join(a, self.local_share(k, (u >> 1) + 1)), out)
        else:
            self.local_share(k, f"({u})>>1", out)
            odd_out, em.items = em.items, []
            em.copy(join(out, self.local_share(k, f"(({u})>>1)+1")), out)
            odd, em.items = em.items, odd_out
            em.items.append(SeqIf(f"({u}) & 1", odd))
        fast, em.items = em.items, outer
        em.items.append(SeqIf.fallback(self.local_holds(k, seq), slow, fast))
        em.plans.setdefault((em.line, self.param(k).name), set()).add(
            "unit plan: the L2B's work-groups' blocks loaded as a contiguous share" + ("" if u == 0 else ", shifted"))
        return Val(em.values.kind_of(ty), (out,))

    def local_store(self, x, val: VReg, p: VReg, whole: bool, scatter) -> bool:
        """`part[lid] = v` by the unit plan: the wave's share goes up as a contiguous store does, one
        mvp per L2B into its own blocks (no merge when every lane stores: each slot of the share is
        its own lane's); the scatter where the launch fails local_holds.  False when the access is
        not of that shape."""
        em = self.em
        got = self.local_unit(x, 4)
        if got is None or got[1] != 0:
            return False
        k, _, seq = got
        lay = em.lay
        half = lay.stripe // lay.l2b
        outer, em.items = em.items, []
        scatter()
        em.scatter.flush_scatters()
        slow, em.items = em.items, []
        if whole == "":
            old = em.copy(val)
        else:
            old = self.local_share(k, 0)
            em.masked_copy(val, old, em.mask_of(p))
        self.store_up(old, lambda lc: [MV(f"mvp/n{half}i{STORE_TAG} $lc{lc}@.{h} $d0", self.local_array(k, h), em.line,
                                          share=True)
                                       for h in range(lay.l2b)])
        fast, em.items = em.items, outer
        em.items.append(SeqIf.fallback(self.local_holds(k, seq), slow, fast))
        em.plans.setdefault((em.line, self.param(k).name, "store"), set()).add(
            "unit plan: the wave's share stored into the L2B's work-groups' blocks")
        return True

    def gather_area(self):
        em = self.em
        return em.shared_area("gather", em.lay.stripe, em.CH)

    def chunk_to_lm0(self, at: int = 0, lc: int = None):
        """The chunk in the gather area's L2BM (or at L2BM address lc) to every PE's LM0 words at ..
        at + 2 CH (l2bmb, l1bmp)."""
        em = self.em
        glc, glb = self.gather_area()
        for t in range(em.CH // 64):
            em.items.append(self.l2bmb((glc if lc is None else lc) + 64 * t, glb + 64 * t))
        for u in range(em.CH // 8):
            em.op(f"l1bmp $llb{glb + 8 * u} $llm{at + 16 * u}v", "l1bm",
                  mem=(("r", "lb", glb + 8 * u, glb + 8 * u + 8), ("w", "m", at + 16 * u, at + 16 * u + 16)))

    def remark(self, k, how: str, aff=None, size: int = 4):
        """Note that an access of buffer k at this line moves all of the buffer (mncl-cc --stats);
        the key, for span_remarks once its pass is known to move only the chunks its wave touches.
        aff, size: the access's form in the global id and element size, which say why."""
        em = self.em
        name = "__local memory" if k == "L" else f"'{self.param(k).name}'" if isinstance(k, int) else "a table"
        key = (em.line, how, name)
        what = "load from" if how == "gathered" else "store to"
        copy = "which move as wave shares only through a split copy, and this build or buffer has none"
        if aff is not None and aff[0] == size != 4:
            why = f"its elements are {size} bytes, {copy}"
        elif aff is not None and aff[0] not in (0, size):
            why = f"its index moves {aff[0]} bytes a work-item (a vector's or a struct's field), {copy}"
        elif aff is not None and aff[0] == size and how == "scattered":
            why = ("its index is the global id plus a uniform offset, but a shifted store needs a 1-D build, "
                   "an offset the launch knows and no other store to the buffer nor a load of it after the store")
        elif aff is not None and aff[0] == size:
            why = "its index is the global id plus a uniform offset, which no contiguous path of this build takes"
        else:
            why = "its index is not the global id plus a uniform offset"
        moves = "each L2B streams its own work-groups' blocks through every one of its PEs" \
            if k == "L" and em.local_l2b else "all of the buffer passes through every PE"
        em.remarks[key] = (f"the {what} {name} is {how}: {why}, so {moves}"
                           f"{', in every pass of its loop' if em.loop_stack else ''} "
                           f"(docs/architecture.md, data movement)")
        return key

    def span_remarks(self, keys, span):
        """The remarks `keys` of a gather's or scatter's pass: where its lanes' span is known (span),
        only the chunks the wave touches pass, unless another pass of the same access moved all."""
        em = self.em
        for key in keys:
            if span is None or key in em.whole_remarks:
                em.whole_remarks.add(key)
            elif key in em.remarks:
                em.remarks[key] = em.remarks[key].replace("all of the buffer passes",
                                                          "the chunks its wave's lanes may touch pass")

    def gather(self, k, ptr: Val, ty: str, p: VReg, defer: bool = False) -> Val:
        """Every lane's element of buffer k: the buffer passes chunk by chunk through every PE's LM0
        (or, resident, is there: resident_read).  A load's pass may wait (`defer`, em.gathers) so
        that the loads of k that follow, before anything reads one of them or may store
        (Codegen.may_use_gathers), share it: one chunk stream, each lane reading each of its
        elements from it."""
        em = self.em
        self.note_access(k, "gather")
        size = type_size(ty)
        if size not in (4, 8):
            raise CodegenError(f"loads of {ty} ({size}-byte) elements are not supported on the emulator device yet",
                               em.line)
        if k in em.resident:
            return em.resident_buffers.resident_read(k, ptr, ty)
        key = self.remark(k, "gathered", ptr.gid_affine, size)
        if em.gathers and (em.gathers[0] != k or em.gathers[2] is not em.items
                           or len(em.gathers[1]) >= min(em.scatter_batch, GATHER_BATCH)):
            self.flush_gathers()
        self.settle_stores(whole_buffer=True)
        rel, acc = self.word_index(ptr, size)
        out = acc if size == 8 else [em.new("ld")]
        if not em.gathers:
            em.gathers = (k, [], em.items)
        em.gathers[1].append((rel, ty, acc, out, self.lane_span(k, ptr.gid_affine, size, em.accesses.get(em.cur)),
                              key))
        em.deferred = defer
        if not defer:
            self.flush_gathers()
        return Val(em.values.kind_of(ty), tuple(out))

    def flush_gathers(self):
        """Emit the waiting gathers' pass (gather): before anything that may read what they load."""
        em = self.em
        if not em.gathers:
            return
        (k, entries, items), em.gathers = em.gathers, None
        em.pending = set()
        here = em.items
        lay = em.lay
        S, G, CH = lay.stripe, lay.groups, em.CH
        glc, _ = self.gather_area()
        em.uses.setdefault("bases", set()).add(k)
        em.uses.setdefault("rows", set()).add(k)
        em.items = []
        self.chunk_to_lm0()
        for rel, ty, acc, *_ in entries:
            self.read_chunk(rel, type_size(ty), 0, acc)
        advance = lambda longs: [em.alu("isub", rel, em.c32(2 * longs), dst=rel) for rel, *_ in entries]
        advance(CH)
        body = em.items
        em.items = []
        r, c = em.seq_reg("r"), em.seq_reg("c")
        tg = em.tag()
        if k == LOCAL and em.local_l2b:     # each L2B its own work-groups' blocks (abi.local_per_l2b)
            rounds = [self.by_chunks(S // CH, lambda n: [MV(f"mvp/n{n * CH}i{tg} $d0 $lc{glc}@.{h}",
                                                            self.local_row(h, r), em.line) for h in range(lay.l2b)])]
        else:       # stripe rG + g (of the whole copy in group 0, or in group g): the chunks in the buffer
            def stripe(g):
                at, src = (0, f"{self.read_base(k)}+({r}*{G}+{g})*{S}") if self.readable(k) \
                    else (g, f"{reg(base(k))}+{r}*{S}")
                return self.by_chunks(S // CH, lambda m: [MV(f"mvb/n{m * CH}i{tg} $d0@{at} $lc{glc}", src, em.line)],
                                      self.chunks_in(k, f"{r} * {G} + {g}"))
            rounds = [stripe(g) for g in range(G)]
        span = self.batch_span([e[4] for e in entries], items)
        self.span_remarks([e[5] for e in entries], span)
        for g, mvs in enumerate(rounds):
            n = self.chunks_in(k, f"{r} * {G} + {g}")
            outer_round, em.items = em.items, list(mvs)
            em.op(f"wait i{tg}", "wait")
            chunk = f"({r} * {G} + {g}) * {S} + {c} * {CH}"
            em.items.append(SeqLoop(c, "0", n, self.within(span, chunk, CH, [Call(body, {"lc": f"{c}*{CH}"})],
                                                           advance)))
            em.items = outer_round + (em.items if n.isdigit() or n.startswith("%") else [SeqIf(f"{n} > 0", em.items)])
        loop = SeqLoop(r, "0", reg(rows(k)), self.within(span, f"{r} * {G * S}", G * S, em.items, advance))
        em.items = items                     # (the pass goes at the end of the list the loads went to)
        em.items.append(loop)
        for _, ty, acc, out, *_ in entries:
            self.lane_value(acc, ty, out[0])
        em.items = here

    def lane_span(self, k, aff, size: int, access=None):
        """(first, last) long word of buffer k that a wave's live lanes may touch through an index
        of affine form aff (bytes; sequencer expressions), or None where that is not known (no form,
        __local scratch); in an N-D build, from the form of `access` (a load's: form_span)."""
        em = self.em
        if not isinstance(k, int) or em.rows is not None:
            return None
        if not em.one_d:
            return self.form_span(access, size) if access is not None and access.buffer == self.param(k).name \
                else None
        if aff is None:
            return None
        lo, hi = em.bounds.wave_extent(aff)
        return f"(({lo}) >> 3)", f"((({hi}) + {size - 1}) >> 3)"

    def form_span(self, access, size: int):
        """lane_span's answer in an "nd" or "groups" build: the least and greatest byte offset of
        the access's form (access.py) over the wave's box (each global id from the wave's first
        position, %w<d> times the extent %e<d>, plus the offset, through %e<d> of them; a local id
        through the local size; a group id through those of the box) and the passes its counted
        loops are in, by interval arithmetic; None where the form has anything else (a counter
        of a loop the sequencer does not count, a value it does not know) or a monomial of more
        than two varying factors.  So a tiled product's `A[row * n + t * TS + tx]` moves the wave's
        rows of A, not all of A, once a launch takes several waves."""
        em = self.em
        if access is None or access.form is None or access.space not in ("global", "constant"):
            return None
        counters = {f"k@{c['header']}": c["seq_reg"] for c in em.loop_stack}

        def box(d):                       # the wave's first global position in dimension d, its extent
            n = "xyz"[d]
            em.uses.setdefault("extents", set()).add(GLOBAL_EXTENTS[d])
            if d:
                em.uses["extents"].add(OFFSETS[d])
            else:
                em.uses["launch"] = True                              # (%offx)
            return f"(%off{n} + %w{n} * %e{n})", f"%e{n}"

        def span(v):                      # (least, greatest) of variable v, or None
            if v.startswith("gid") and v[3:] in ("0", "1", "2"):
                first, n = box(int(v[3:]))
                return first, f"({first} + {n} - 1)"
            if v.startswith(("lid", "grp")) and v[3:] in ("0", "1", "2"):
                d = int(v[3:])
                ls = reg(LOCAL_EXTENTS[d])
                em.uses.setdefault("extents", set()).add(LOCAL_EXTENTS[d])
                if v.startswith("lid"):
                    return "0", f"({ls} - 1)"
                n = "xyz"[d]
                _, e = box(d)
                return f"(%w{n} * {e} / {ls})", f"((%w{n} + 1) * {e} / {ls} - 1)"
            if counters.get(v):
                return counters[v], counters[v]
            if v.startswith("p") and v[1:].isdigit():
                em.uses.setdefault("params", set()).add(int(v[1:]))
                return (reg(param(int(v[1:]))),) * 2
            return None

        def times(a, b):                  # the interval product (a: the coefficient's so far)
            if a[0] == a[1] and a[0].lstrip("-").isdigit():
                c = int(a[0])
                x, y = (f"{c} * {e}" for e in b)
                return (x, y) if c >= 0 else (y, x)
            ends = list(dict.fromkeys(f"({x}) * ({y})" for x in a for y in b))
            return _fold(ends, "<"), _fold(ends, ">")
        lo, hi = [], []
        for mono, coef in access.form.items():
            ranges = [span(v) for v in mono]
            if None in ranges or sum(r[0] != r[1] for r in ranges) > 2:
                return None
            r = (str(coef), str(coef))
            for x in ranges:
                r = times(r, x)
            lo.append(r[0])
            hi.append(r[1])
        width = max(size, access.elem)
        return f"(({' + '.join(lo) or '0'}) >> 3)", f"((({' + '.join(hi) or '0'}) + {width - 1}) >> 3)"

    def batch_span(self, spans: list, items: list):
        """Sequencer registers holding the least first and the greatest last long word of `spans`
        (lane_span's), set at the end of `items`; None if one of them is None."""
        if not spans or any(s is None for s in spans):
            return None
        em = self.em
        lo, hi = em.seq_reg("slo"), em.seq_reg("shi")
        items += [SeqSet(lo, spans[0][0]), SeqSet(hi, spans[0][1])]
        for a, b in spans[1:]:
            items += [SeqSet(lo, f"{lo} if {lo} < {a} else {a}"), SeqSet(hi, f"{hi} if {hi} > {b} else {b}")]
        return lo, hi

    def within(self, span, first: str, n: int, then: list, advance) -> list:
        """`then` (a gather's or scatter's work on long words [first, first + n) of the buffer) where
        they meet the span its lanes touch; elsewhere only the lanes' running chunk index moves past
        them (advance(n): one step), so a pass over a large buffer costs what its wave touches."""
        if span is None:
            return then
        em = self.em
        outer, em.items = em.items, []
        advance(n)
        skip, em.items = em.items, outer
        lo, hi = span
        return [SeqIf(f"({first}) <= {hi} and ({first}) + {n} > {lo}", then, skip)]

    def by_group(self, g: str, mv) -> list:
        """The MV mv(q) for the group q that sequencer register g holds (an MV names its group in its
        text): a chain of sequencer branches."""
        items = [mv(self.em.lay.groups - 1)]
        for q in range(self.em.lay.groups - 2, -1, -1):
            items = [SeqIf(f"{g} == {q}", [mv(q)], items)]
        return items

    def by_chunks(self, most: int, mvs, count: str = reg(LOCAL_CHUNKS)) -> list:
        """mvs(n) for the least power of two n of chunks (up to `most`) that covers `count` chunks
        (a sequencer expression: those a per-L2B __local row holds, LOCAL_CHUNKS; those of a stripe
        inside the buffer, chunks_in): an MV names its size in its text, so a chain of sequencer
        branches picks it."""
        if count == str(most):
            return mvs(most)
        sizes = [1 << j for j in range(most.bit_length()) if 1 << j < most]
        items = mvs(most)
        for n in reversed(sizes):
            items = [SeqIf(f"{count} <= {n}", mvs(n), items)]
        return items

    def chunks_in(self, k, t: str) -> str:
        """The chunks a gather or scatter of buffer k reads of its stripe t (a sequencer expression):
        those that start inside the buffer (a small buffer's passes are few), at most a stripe's;
        a per-L2B __local row's that its blocks fill (abi.local_rows)."""
        em = self.em
        full = em.lay.stripe // em.CH
        if k == LOCAL and em.local_l2b:
            em.uses["local_chunks"] = True
            return reg(LOCAL_CHUNKS)
        if not isinstance(k, int):
            return str(full)
        em.uses.setdefault("sizes", set()).add(k)
        n = f"({reg(nbytes(k))} - {8 * em.lay.stripe} * ({t}) + {8 * em.CH - 1}) / {8 * em.CH}"
        return f"({n} if {n} < {full} else {full})"

    def local_row(self, h: int, r: str) -> str:
        """DRAM address (a sequencer expression) of stripe row r of L2B h's __local blocks, in
        every group (abi.local_rows: a group's L2Bs' rows one after the other)."""
        return f"{reg(base(LOCAL))}+({r}+{h}*{reg(rows(LOCAL))})*{self.em.lay.stripe}"

    def word_index(self, ptr: Val, size: int):
        """(each lane's word index into the buffer: its element's word, 2 x its long word for 64-bit
        elements; zeroed accumulators for read_chunk)."""
        em = self.em
        rel = em.alu("uilsr", self.ptr_off(ptr), em.c32(2 if size == 4 else 3), hint="rel")
        acc = [em.copy(em.c32(0)), em.copy(em.c32(0))]
        if size == 4:     # element 2k is the low half of long word k: word 2k + 1
            return em.alu("ixor", rel, em.c32(1)), acc
        return em.alu("ilsl", rel, em.c32(1)), acc

    def read_chunk(self, rel: VReg, size: int, at: int, acc: list):
        """Each lane's element at word index rel (word_index, less the chunk's start) of the chunk of
        2 CH words at LM0 word `at`, T-indirect, into the accumulators acc (upper-lane and
        lower-lane registers for 32-bit elements, odd and even work-items' for 64-bit ones);
        lanes whose element is not in the chunk keep what they had."""
        em = self.em
        n_words = 2 * em.CH
        c32 = em.c32(32)
        lm = (("r", "m", at, at + n_words),)
        # T-indirect addresses must lie inside LM0 even in masked-off lanes: wrap them into the chunk
        if size == 4:
            inr = em.flags("uimin", rel, em.c32(n_words - 1))
            addr = em.alu("iand", rel, em.c32(n_words - 1))
            em.op("ulsr {s0} {s1} $t", "alu", (), (addr, c32), mem=TW)
            em.op(f"ipassa $mt{at} {{d0}}/{{k0}}", "alu", (acc[0],), (acc[0],), msrc=(inr,), partial=True,
                  mem=lm + TR)
            em.op("lpassa {s0} $t", "alu", (), (addr,), mem=TW)
            w = em.new()
            em.op(f"ipassa $mt{at} {{d0}}", "alu", (w,), (), mem=lm + TR)
            em.op("ulsr {s0} {s1} {d0}/{k0}", "alu", (acc[1],), (w, c32, acc[1]), msrc=(inr,), partial=True)
        else:
            for part in (0, 1):
                lane = em.alu("ulsr", rel, c32) if part == 0 else em.alu("land", rel, em.const64(0xFFFFFFFF))
                inr = em.flags("ulmin", lane, em.const64(n_words - 2))
                addr = em.alu("land", lane, em.const64(n_words - 1))
                em.op("lpassa {s0} $t", "alu", (), (addr,), mem=TW)
                em.op(f"lpassa $lmt{at} {{d0}}/{{k0}}", "alu", (acc[part],), (acc[part],), msrc=(inr,),
                      partial=True, mem=lm + TR)

    def lane_value(self, acc, ty, dst: VReg = None) -> Val:
        """read_chunk's accumulators as the loaded value (a 32-bit one into dst if given)."""
        em = self.em
        if type_size(ty) == 4:
            hi = em.alu("land", acc[0], em.const64(0xFFFFFFFF00000000))
            lo = em.alu("land", acc[1], em.const64(0xFFFFFFFF))
            return Val(em.values.kind_of(ty), (em.alu("lor", hi, lo, dst=dst),))
        return Val(em.values.kind_of(ty), tuple(acc))

    # resident buffers ----------------------------------------------------------------------------
    def note_access(self, k, how: str):
        """Record that the instruction being translated reaches buffer k by `how` ("load", "store":
        any path; "gather": a gather or scatter), for resident_candidates."""
        em = self.em
        if isinstance(k, int):
            r = em.reached.setdefault(k, {"load": set(), "store": set(), "gather": set(), "loop": False})
            r[how].add(em.cur)
            r["loop"] |= how == "gather" and bool(em.loop_stack)

    def pick_half(self, w: VReg, u: str) -> VReg:
        """The 32-bit element at byte offset u (the sequencer knows it) of long word w, in both lanes:
        the low half when its index is even, else the high half."""
        em = self.em
        c32, r = em.c32(32), em.new("uni")
        outer, picks = em.items, []
        for first, second in (("ulsr", "llsl"), ("llsl", "ulsr")):
            em.items = []
            t = em.new("uni")
            em.op(f"{first} {{u0}} {{s1}} {{d0}}", "alu", (t,), (w, c32))
            em.alu("lor", t, em.alu(second, t, c32), dst=r)
            picks.append(em.items)
        em.items = outer
        em.items.append(SeqIf(f"({u} >> 2) & 1", *picks))
        return r


def _fold(xs: list, cmp: str) -> str:
    """The least (cmp "<") or greatest (">") of sequencer expressions xs, as one expression."""
    out = xs[0]
    for x in xs[1:]:
        out = f"({out} if {out} {cmp} {x} else {x})"
    return out
