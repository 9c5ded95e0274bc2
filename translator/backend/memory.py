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

from dataclasses import replace

from . import irtypes
from .irread import Arg, Const, Inst
from .irtypes import type_size
from .ops import Call, drop_ops, MV, Op, SeqIf, SeqLoop, SeqSet, VReg
from .emitter import CodegenError, TR, TW
from .values import aff_add, aff_scale, EXACT, I32, KINDS, rng_add, rng_scale, U32, Val, within


class Memory:
    """Loads, stores and the data movement behind them."""

    def __init__(self, em):
        self.em = em

    STORE_TAG = 251                       # contiguous stores, waited for lazily (see fast_store)

    def settle_stores(self, whole_buffer=False):
        """Wait for a contiguous store still in flight (before anything that may read its data).

        A store is in flight after one earlier in the body, but also where none precedes this
        point: in a loop that stores, the previous pass's (`y[i] += ...` in a loop over j), and,
        for a transfer of a whole buffer (whole_buffer: a gather or scatter), the previous wave's,
        which a wave's own share (fast_load) never meets.  Those waits are kept only if the
        kernel has a contiguous store (fast_store) by the end (drop_unissued_waits)."""
        if "store" in self.em.areas:
            self.em.op(f"wait i{self.STORE_TAG}", "wait")
        elif whole_buffer and self.em.loop_stack and not any(ctx["stores"] for ctx in self.em.loop_stack):
            self.em.loop_stack[0]["settle_before"] = True        # once, before the outermost loop
        elif whole_buffer or any(ctx["stores"] for ctx in self.em.loop_stack):
            self.em.op(f"wait i{self.STORE_TAG}", "wait")
            self.em.unsure_waits.append(self.em.items[-1])

    def drop_unissued_waits(self):
        """Remove settle_stores' loop waits when the kernel made no contiguous store: their tag is
        never issued (the emulator faults on such a wait)."""
        if self.em.unsure_waits and "store" not in self.em.areas:
            drop_ops(self.em.items, {id(o) for o in self.em.unsure_waits})
        self.em.unsure_waits = []

    def stores_to_buffers(self, blocks) -> bool:
        """Whether any of these IR blocks may store through a pointer into a buffer parameter."""
        return any(self.store_dst(i) is not None and not isinstance(self.param_root(self.store_dst(i)), str)
                   for n in blocks for i in self.em.bmap[n].insts)

    def ptr_off(self, p: Val) -> VReg:
        """A pointer's byte offset as i32 lanes (coff folded in)."""
        if p.base and p.base[0] == "either":
            raise CodegenError("a pointer into one of two buffers can be loaded from, stored to and indexed, "
                               "not compared or converted to an integer", self.em.line)
        if p.off is None:
            return self.em.c32(p.coff)
        if p.idx is not None and p.coff and p.coff % p.idx[1] == 0:
            x, n = p.idx[:2]           # (x + c / n) * n: x + c / n is what check_bounds compares
            r = self.em.alu("iadd", x, self.em.c32(p.coff // n))
            return self.em.ints.mul_const(Val("i32", (r,)), n, False, None).regs[0]
        r = p.off.regs[0]
        if p.coff:
            r = self.em.alu("iadd", r, self.em.c32(p.coff))
        return r

    # memory ----------------------------------------------------------------------------------------
    def gep(self, i: Inst) -> Val:
        """A pointer plus indices.  The offset register is 32-bit; what the bounds check needs to see
        an offset that wrapped comes along: one variable term, its index (Val.idx); more, the
        offset's range (Val.orng) and, where that is not 32-bit, its 64-bit value (Val.o64)."""
        base = self.em.values.val(i.ops[0])
        if base.kind != "ptr":
            raise CodegenError("pointer arithmetic on a non-pointer", self.em.line)
        ty = i.elem
        off, coff = base.off, base.coff
        aff = base.gid_affine if base.gid_affine is not None else None
        idx, orng, o64, good = base.idx, base.orng, base.o64, base.good
        for k, idx_op in enumerate(i.ops[1:]):
            if k == 0:
                scale = type_size(ty)
            else:
                sub = irtypes.element_type(ty, idx_op.value if isinstance(idx_op, Const) else None)
                if sub is None:
                    raise CodegenError(f"indexing into '{ty}' at run time is not supported", self.em.line)
                ty, fo = sub
                if fo is not None:         # a struct field
                    coff += fo
                    continue
                scale = type_size(ty)
            iv = self.em.values.val(idx_op)
            if iv.const is not None:
                coff += iv.const * scale
                if aff is not None:
                    aff = (aff[0], aff[1] + iv.const * scale, aff[2])
                continue
            term = self.em.ints.mul_const(Val("i32", (self.em.values.narrow(iv),)), scale, False, None).regs[0]
            x, sh, xr = self.index_parts(iv)
            if off is None:                              # the first variable term: checked as an index
                idx = (x, scale << sh, xr, iv if not sh else None, self.near_start(x, xr))
            elif idx is not None and idx[1] == scale << sh:     # another index in the same elements
                idx, good = self.add_index(idx, (x, scale << sh, xr, iv if not sh else None), good)
            else:
                if idx is not None:                      # an index no longer alone: as bytes
                    orng, o64 = self.idx_bytes(idx)
                    idx = None
                trng = rng_scale(self.em.values.int_rng(iv), scale)
                total = rng_add(I32 if orng is None else orng, trng)
                if o64 is not None or not within(total, I32):
                    prev = o64 if o64 is not None else (self.em.split64(off.regs[0]) if off is not None else None)
                    t64 = self.em.ints.mul_const(Val("i64", self.em.values.wide(iv), rng=self.em.values.int_rng(iv)), scale, True, None).regs
                    o64 = t64 if prev is None else tuple(self.em.alu("ladd", a, b) for a, b in zip(prev, t64))
                orng = total
            off = Val("i32", (term if off is None else self.em.alu("iadd", off.regs[0], term),))
            ia = self.em.values.affine(iv, idx_op)
            aff = aff_add(aff, aff_scale(ia, scale)) if aff is not None and ia is not None else None
        return Val("ptr", base=base.base, off=off, coff=coff, gid_affine=aff, idx=idx, orng=orng, o64=o64,
                   good=good)

    def index_form(self, p: Val):
        """p's Val.idx with its constant offset folded in (x + c / n), where p is such a pointer and
        its range is known, else None."""
        if p.idx is None or p.good is not None or p.coff % p.idx[1] or p.idx[2] is None:
            return None
        x, n, r = p.idx[:3]
        q = p.coff // n
        if not q:
            return p.idx
        wide = Val("i64", tuple(self.em.alu("ladd", y, self.em.const64(q)) for y in self.idx_wide(p.idx)))
        return self.em.alu("iadd", x, self.em.c32(q)), n, (r[0] + q, r[1] + q), wide, None

    def near_start(self, x: VReg, xr):
        """For an index x (range xr) to which another may be added: a bool, x >= -2^30, or None when
        xr says so; made where x is (the pointer p + x before a loop indexing it), dropped unused."""
        if not within(xr, I32) or xr[0] >= -(1 << 30):
            return None
        return self.em.bool_from_mask(self.em.flags("imax", x, self.em.c32(-(1 << 30))))

    def add_index(self, a, b, good):
        """(Val.idx, Val.good) of (p + x)[y], p + x having Val.idx a, y given as b, in the same
        elements.  Two 32-bit indices may sum past 32 bits; lanes whose x lies 2^30 or more elements
        before p fail (near_start), so the sum's low 32 bits compare exactly: forming such a pointer
        is undefined behaviour in C (C99 6.5.6), and any access through it is out of bounds but for
        an index y of 2^30 or more."""
        x0, n, r0, _, near = a
        x1, _, r1, _ = b
        wide = tuple(self.em.alu("ladd", u, v) for u, v in zip(self.idx_wide(a), self.idx_wide(b)))
        r = rng_add(r0, r1)
        if not within(r, EXACT) and near is not None and within(r1, I32):
            good = near if good is None else self.em.b_and(good, near)
            r = (-(1 << 30) + r1[0], r[1])
        x = self.em.alu("iadd", x0, x1)
        return (x, n, r, Val("i64", wide, rng=r), self.near_start(x, r)), good

    def index_parts(self, iv: Val):
        """(VReg of x's low 32 bits, k, x's range) for an index iv == x << k (Val.scaled)."""
        if iv.kind == "i64" and iv.scaled is not None:
            return iv.scaled
        return self.em.values.narrow(iv), 0, self.em.values.int_rng(iv)

    def idx_wide(self, idx) -> tuple:
        """The (odd, even) 64-bit values of a Val.idx's x."""
        x, n, xr, xv = idx[:4]
        if xv is not None:
            return self.em.values.wide(xv)
        return self.em.split64(x, signed=not within(xr, (0, U32[1])) or within(xr, I32))

    def idx_bytes(self, idx):
        """(Val.orng, Val.o64) of a pointer whose one variable term is Val.idx idx."""
        x, n, xr = idx[:3]
        r = rng_scale(xr, n)
        if within(r, I32):
            return r, None
        return r, self.em.ints.mul_const(Val("i64", self.idx_wide(idx), rng=xr), n, True, None).regs

    def fits32(self, regs) -> VReg:
        """A bool per 32-bit lane: the (odd, even) 64-bit values lie in [-2^31, 2^31)."""
        c = self.em.const64(1 << 31)
        return self.em.bool_from_mask(self.em.flags("ior", self.high_words(tuple(self.em.alu("ladd", r, c) for r in regs)),
                                              self.em.c32(0)))

    def high_words(self, regs) -> VReg:
        """The high 32 bits of (odd, even) 64-bit values, as 32-bit lanes."""
        return self.em.join32(*(self.em.alu("ulsr", r, self.em.c32(32)) for r in regs))

    def carried_off(self, v: Val) -> VReg:
        """v's offset for a register that carries it on (a loop's pointer, a select): lanes whose offset
        left the 32-bit range get -2^31, which every bounds check finds out of bounds."""
        off = self.ptr_off(v)
        if v.off is None:
            return off
        if v.good is not None:
            off = self.em.select32(v.good, off, self.em.c32(-(1 << 31)))
        if v.idx is not None:
            orng, o64 = self.idx_bytes(v.idx)
        else:
            orng, o64 = v.orng, v.o64
        full = rng_add(orng, (v.coff, v.coff))
        if o64 is None and (orng is None or within(full, EXACT)):
            return off
        if o64 is None:
            o64 = self.em.split64(v.off.regs[0])
        if v.coff:
            o64 = tuple(self.em.alu("ladd", r, self.em.const64(v.coff)) for r in o64)
        return self.em.select32(self.fits32(o64), off, self.em.c32(-(1 << 31)))

    def param(self, k):
        if not 0 <= k < len(self.em.params):
            raise CodegenError("read beyond the kernel's arguments", self.em.line)
        return self.em.params[k]

    def load(self, i: Inst, p: VReg) -> Val:
        ptr = self.em.values.val(i.ops[0])
        b, ty = ptr.base, i.type
        if b == ("args",):
            if ptr.off is not None:     # LLVM merged accesses to different arguments: a[i] or b[i] per lane
                return self.either_arg(i)
            k = ptr.coff // 8
            pi = self.param(k)
            if pi.kind in ("global", "constant"):
                return Val("ptr", base=("param", k), gid_affine=(0, 0, None))
            if pi.kind == "local":    # the runtime puts the argument's offset in its group block here
                off = self.em.alu("iadd", self.em.workitems.local_base(), self.em.codegen.param_word(k, pi.name))
                return Val("ptr", base=("local",), off=Val("i32", (off,)))
            return Val("ptr", base=("scalar", k))
        if b[0] == "scalar":
            if (b[1] in self.em.wide_args or ptr.coff or self.param(b[1]).size > type_size(ty)) and ptr.off is None \
                    and ty in ("i8", "i16", "i32", "float", "i64", "double"):     # a vector's or struct's element
                at = self.em.codegen.param_slot(b[1]) + ptr.coff // 8
                return self.em.codegen.wide_arg(at, ptr.coff % 8, ty)
            if ptr.off is not None or ptr.coff or ty not in ("i8", "i16", "i32", "float", "i64", "double", "ptr"):
                raise CodegenError(f"kernel argument '{self.param(b[1]).name}' of type "
                                   f"'{self.param(b[1]).type_name}' is not supported on the emulator device yet", self.em.line)
            r = self.em.codegen.param_word(b[1], self.param(b[1]).name)
            k = self.em.values.kind_of(ty)
            return Val(k, (r,) if KINDS[k] == 1 else (r, r))
        if b == ("wg",):
            k = ptr.coff // 8
            if 7 <= k <= 9:
                return self.em.workitems.group_id(k - 7)
            r = self.em.codegen.wg_word(k, f"wg{k}")
            return Val("i64", (r, r))
        if b == ("ids",):
            return self.em.workitems.ids_value(ptr.coff // 8)
        if b[0] == "param":
            self.note_access(b[1], "load")
            self.em.bounds.check_bounds(b[1], ptr, type_size(ty), p, defer=True)
        if b == ("priv",) and ptr.off is not None and p is not None:
            self.check_private(ptr, type_size(ty), p, store=False)
        if b[0] in ("param", "local", "priv", "global") and type_size(ty) < 4:
            return self.narrow_load(ptr, ty, p)
        if b[0] == "global":
            return self.gather(b[1], ptr, ty, p)
        if b[0] == "param":
            size = type_size(ty)
            aff = ptr.gid_affine
            if self.em.one_d and size == 4 and aff is not None and aff[0] == 4 and aff != (4, 0, None) \
                    and self.is_replicated(b[1]):
                return Val(self.em.values.kind_of(ty), (self.shifted_load(b[1], aff),))
            if self.em.one_d and size == 4 and aff == (4, 0, None):
                reg = self.fast_load(b[1])[0]
                return Val(self.em.values.kind_of(ty), (reg,))
            if size in (4, 8) and aff is not None and aff[0] == 0 and self.is_replicated(b[1]):
                return self.uniform_load(b[1], aff, ty)
            return self.gather(b[1], ptr, ty, p)
        if b == ("local",):
            return self.gather("L", ptr, ty, p)
        if b == ("priv",):
            return self.private_access(ptr, ty)
        raise CodegenError("a load through this pointer is not supported on the emulator device yet", self.em.line)

    def either_arg(self, i: Inst) -> Val:
        """`load ptr` from the argument list at `select c, A, B` (how LLVM merges `c ? a[i]++ : b[i]--`):
        the pointer argument A or B per lane."""
        g = i.ops[0]
        sel = g.ops[-1] if isinstance(g, Inst) and g.op == "getelementptr" and len(g.ops) == 2 else None
        if not (isinstance(sel, Inst) and sel.op == "select" and all(isinstance(x, Const) for x in sel.ops[1:])):
            raise CodegenError("a pointer chosen per work-item among kernel arguments is not supported on the "
                               "emulator device", self.em.line)
        base = self.em.values.val(g.ops[0])
        at = [self.em.values.proxy("ptr", Val("ptr", base=base.base, coff=base.coff + x.value * type_size(g.elem)))
              for x in sel.ops[1:]]
        a, b = (self.load(Inst("load", i.name, "ptr", [x], elem="ptr", line=i.line), None) for x in at)
        return self.em.values.select(self.em.values.val(sel.ops[0]).regs[0], a, b)

    def on_either(self, i: Inst, k: int, p: VReg):
        """A load, store or GEP through a pointer into one of two buffers (Val.base ("either", c, A, B)):
        the access on each, under the lanes that point there; a load's value selected between them."""
        _, c, a, b = self.em.values.val(i.ops[k]).base
        out = []
        for x, q in ((a, self.em.b_and(p, c) if p is not None else None),
                     (b, self.em.b_and(p, self.em.b_not(c)) if p is not None else None)):
            ops = list(i.ops)
            ops[k] = self.em.values.proxy("ptr", x)
            fake = Inst(i.op, i.name, i.type, ops, text=i.text, elem=i.elem, line=i.line)
            self.em.codegen.inst(fake, q)
            out.append(self.em.vals.get(fake))
        if i.op != "store":
            return self.em.values.select(c, out[0], out[1])

    def store(self, i: Inst, p: VReg):
        self.store_to(i, p)
        # a store may change what the loads of any buffer the kernel writes would see
        self.em.fast_cache = {key: v for key, v in self.em.fast_cache.items()
                           if self.is_replicated(key[0] if isinstance(key, tuple) else key)}
        self.em.stored = True

    def store_to(self, i: Inst, p: VReg):
        v, ptr = self.em.values.val(i.ops[0]), self.em.values.val(i.ops[1])
        b = ptr.base
        if b == ("priv",):
            size = type_size(i.ops[0].type)
            if ptr.off is not None:
                p = self.check_private(ptr, size, p, store=True)
            if size < 4:
                wp = self.word_ptr(ptr)
                old = self.private_access(wp, "i32").regs[0]
                sh = self.em.alu("ilsl", self.em.alu("iand", self.ptr_off(ptr), self.em.c32(4 - size)), self.em.c32(3))
                bits = self.em.c32((1 << 8 * size) - 1)
                new = self.em.alu("ior", self.em.alu("iand", old, self.em.alu("inot", self.em.alu("ilsl", bits, sh))),
                               self.em.alu("ilsl", self.em.alu("iand", v.regs[0], bits), sh))
                return self.private_access(wp, "i32", Val("i32", (new,)), p)
            return self.private_access(ptr, i.ops[0].type, v, p)
        if b == ("local",):
            k, name = "L", "__local memory"
        elif b[0] == "param":
            k, name = b[1], self.param(b[1]).name
            self.note_access(k, "store")
        else:
            raise CodegenError("a store through this pointer is not supported on the emulator device yet", self.em.line)
        size = type_size(i.ops[0].type)
        whole = p is self.em.active
        if k != "L" and ptr.gid_affine is not None and ptr.gid_affine[0] == 0:
            p = self.em.scatter.elect(p)     # every lane stores to one element: one of them, not their sum
        if k != "L":              # a store out of bounds is dropped (and reported)
            p = self.em.b_and(p, self.em.bounds.check_bounds(k, ptr, size, p, store=True))
        if self.em.one_d and size == 4 and ptr.gid_affine == (4, 0, None) and k != "L":
            # every lane stores when the wave is full and inside the buffer: nothing to merge with
            full = f"(%wx + 1) * {self.em.lay.wave} <= %gx and {self.em.bounds.wave_in_bounds(k, ptr.gid_affine, size)}"
            return self.fast_store(k, v.regs[0], p, full=full if whole else None)
        if size in (1, 2, 4, 8):
            return self.em.scatter.scatter(k, ptr, v.regs, p, size, self.em.scatter.id_form(i.ops[1], k == "L"), i.block)
        raise CodegenError(f"stores of {size}-byte elements to '{name}' are not supported on the emulator "
                           f"device yet", self.em.line)

    # private arrays --------------------------------------------------------------------------
    def private_layout(self):
        """(alloca -> byte offset, bytes, words of each work-item's block) of the private arrays."""
        allocas = [x for b in self.em.f.blocks for x in b.insts if x.op == "alloca"]
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
        if self.em.priv_offsets is None:
            offs, total, words = self.private_layout()
            base = 4 * self.em.CH
            if base + 8 * words > self.em.lm_top:
                raise CodegenError(f"private arrays need {total} bytes per work-item (a block of {4 * words}: "
                                   f"blocks are powers of two); the emulator device has "
                                   f"{(self.em.lm_top - base) // 8 * 4} (LM0 holds eight work-items' arrays"
                                   f"{' and the tables of x[j] loads' if self.em.lm_top < self.em.lay.lm_words else ''})",
                                   self.em.line)
            saved, self.em.items = self.em.items, []
            lanes = []
            for h in (0, 1):          # (2 * cycle + lane) * words + base, in each long word's low half
                t = self.em.alu("ilsl", self.em.cycle, self.em.c32(words.bit_length()))
                lanes.append(self.em.alu("iadd", t, self.em.c32(base + h * words)))
            self.em.prologue += self.em.items
            self.em.items = saved
            self.em.priv_offsets = (offs, words, lanes)
        return self.em.priv_offsets[0][i]

    def check_private(self, ptr: Val, size: int, p: VReg, store: bool) -> VReg:
        """p and the lanes whose access of a private array at a run-time index lies in the array
        (the array is the one the pointer's constant offset falls in): an index out of it is reported
        as out of a buffer is (check_bounds), and a store there is dropped; it wrapped into the
        work-item's other private words before."""
        offs, _, _ = self.private_layout()
        at = [(o, a) for a, o in offs.items() if o <= ptr.coff] or [(0, next(iter(offs)))]
        o, a = max(at, key=lambda t: t[0])
        n = a.ops[0].value if a.ops and isinstance(a.ops[0], Const) else 1
        nbytes = type_size(a.elem) * n
        rel = replace(ptr, coff=ptr.coff - o)
        if rel.idx is not None and rel.coff % rel.idx[1] == 0 and rel.coff + size <= rel.idx[1]:
            q, r = rel.coff // rel.idx[1], rel.idx[2]           # (the index's range is inside: no check)
            if r is not None and 0 <= r[0] + q and r[1] + q < nbytes // rel.idx[1]:
                return p
        return self.em.b_and(p, self.em.bounds.check_bounds(("priv", nbytes), rel, size, p, store=store))

    def private_access(self, ptr: Val, ty: str, v: Val = None, p: VReg = None):
        """A load (v None) or masked store of each lane's own private element, T-indirect in LM0."""
        size = type_size(ty)
        if size not in (4, 8):
            raise CodegenError(f"private {ty} ({size}-byte) elements are not supported on the emulator device yet",
                               self.em.line)
        _, words, lanes = self.em.priv_offsets
        w = self.em.alu("uilsr", self.ptr_off(ptr), self.em.c32(2))
        w = self.em.alu("iand", self.em.alu("ixor", w, self.em.c32(1)) if size == 4 else w, self.em.c32(words - 1))
        lm = (("r", "m", 4 * self.em.CH, 4 * self.em.CH + 8 * words),)
        lmw = lm + (("w", "m", 4 * self.em.CH, 4 * self.em.CH + 8 * words),)
        out = []
        for h in (0, 1):          # the upper (odd) lane, then the lower one
            lane = self.em.alu("ulsr", w, self.em.c32(32)) if h == 0 else self.em.alu("land", w, self.em.const64(0xFFFFFFFF))
            self.em.op("lpassa {s0} $t", "alu", (), (self.em.alu("ladd", lane, lanes[h]),), mem=TW)
            if size == 8:
                if v is None:
                    r = self.em.new("priv")
                    self.em.op("lpassa $lmt0 {d0}", "alu", (r,), (), mem=lm + TR)
                    out.append(r)
                else:
                    km = self.em.flags("lnot", self.em.widen_bool(p)[h])
                    self.em.op("lpassa {s0} $lmt0/{k0}", "alu", (), (v.regs[h],), msrc=(km,), mem=lmw + TR)
            elif v is None:
                r = self.em.new("priv")
                self.em.op("ipassa $mt0 {d0}", "alu", (r,), (), mem=lm + TR)
                out.append(r)
            else:
                val = v.regs[0] if h == 0 else self.em.alu("llsl", v.regs[0], self.em.c32(32))
                pm = p if h == 0 else self.em.alu("llsl", p, self.em.c32(32))
                self.em.op("ipassa {s0} $mt0/{k0}", "alu", (), (val,), msrc=(self.em.mask_of(pm),), mem=lmw + TR)
        if v is not None:
            return None
        if size == 8:
            return Val(self.em.values.kind_of(ty), tuple(out))
        hi = self.em.alu("land", out[0], self.em.const64(0xFFFFFFFF00000000))
        return Val(self.em.values.kind_of(ty), (self.em.alu("lor", hi, self.em.alu("ulsr", out[1], self.em.c32(32))),))

    def mem_intrinsic(self, base, args, p):
        """memset / memcpy of a constant length (initialisers, struct copies): word by word."""
        n = args[2].const
        if n is None:
            raise CodegenError(f"{base} of a run-time length is not supported on the emulator device", self.em.line)
        dst = args[0]
        step = 4 if n % 4 == 0 else 1
        ty = "i32" if step == 4 else "i8"
        for k in range(0, n, step):
            at = lambda ptr: self.em.values.proxy("ptr", replace(ptr, coff=ptr.coff + k, gid_affine=None))
            if base == "memset":
                b = args[1].const
                if b is None:
                    v = self.em.values.narrow(args[1])
                    if step == 4:
                        v = self.em.alu("iand", v, self.em.c32(0xFF))
                        v = self.em.alu("ior", v, self.em.alu("ilsl", v, self.em.c32(8)))
                        v = self.em.alu("ior", v, self.em.alu("ilsl", v, self.em.c32(16)))
                    val = self.em.values.proxy(ty, Val("i32", (v,)))
                else:
                    val = Const(ty, (b & 0xFF) * (0x01010101 if step == 4 else 1))
            else:
                ld = Inst("load", "mem", ty, [at(args[1])], elem=ty, line=self.em.line)
                self.em.codegen.inst(ld, p)
                val = ld
            self.em.codegen.inst(Inst("store", "", "void", [val, at(dst)], line=self.em.line), p)
        return None

    def word_ptr(self, ptr: Val) -> Val:
        return Val("ptr", base=ptr.base, off=Val("i32", (self.em.alu("iand", self.ptr_off(ptr), self.em.c32(-4)),)))

    def narrow_load(self, ptr: Val, ty: str, p: VReg) -> Val:
        """An i8/i16 element: the 32-bit word holding it, shifted down (bytes are little-endian)."""
        size = type_size(ty)
        word = self.load_word(self.word_ptr(ptr), p)
        sh = self.em.alu("ilsl", self.em.alu("iand", self.ptr_off(ptr), self.em.c32(4 - size)), self.em.c32(3))
        return Val("i32", (self.em.alu("uilsr", word, sh),))

    def load_word(self, ptr: Val, p: VReg) -> VReg:
        b = ptr.base
        if b == ("priv",):
            return self.private_access(ptr, "i32").regs[0]
        return self.gather("L" if b == ("local",) else b[1], ptr, "i32", p).regs[0]

    def fast_load(self, k, for_store=False, per_wave=True, hoist=True):
        """The wave's share of buffer k, 32-bit element w of the wave in lane w (layout.py).

        A load at the top of the wave body before any store reads straight into its own
        staging area, and its transfer is hoisted to the start of the wave, where all such
        transfers are in flight together; a second load of the buffer reuses the value."""
        lay = self.em.lay
        S = lay.stripe
        if not for_store and not self.em.loop_stack and k in self.em.fast_cache:
            return self.em.fast_cache[k]
        lc, lb, own = self.staging_area("fast", hoist)
        if self.em.stored or any(ctx["stores"] for ctx in self.em.loop_stack):
            self.settle_stores()  # it may read what a store still in flight writes
        t = self.em.tag()
        rep = self.is_replicated(k)
        src = f"%b{k}+%wx*{S * lay.groups}" if rep else f"%b{k}+%wx*{S}" if per_wave else f"%b{k}"
        d = self.em.new(f"ld{k}")
        mv = MV(f"mvd/n{S}i{t} $d0 $lc{lc}", src, self.em.line)
        self.staged(mv, t, lc, lb, d, hoist=own, read_only=rep and per_wave)
        if own and per_wave and not rep and self.em.replicate and not for_store:   # (not a store's merge)
            self.em.own_share_loads.append(mv)
        self.em.uses.setdefault("bases", set()).add(k)
        if not self.em.loop_stack and not for_store:
            self.em.fast_cache[k] = (d, (lc, lb))
        return d, (lc, lb)

    def prefetch_loads(self) -> list:
        """The wave's first loads the next wave may issue early (prefetch.py): those of read-only
        buffers, and those of buffers the kernel writes when every store of the kernel goes to the
        wave's own share (no wave can then write what another reads) and no buffer is passed twice
        (the launch replicates)."""
        return self.em.prefetchable + ([] if self.em.scatters else self.em.own_share_loads)

    def staged(self, mv: MV, t: int, lc: int, lb: int, d: VReg, hoist: bool, read_only: bool = False):
        """A wave share DRAM -> L2BM (lc) -> L1BM (lb) -> register d.  Hoisted, the whole
        chain starts the wave: every such load's moves are then scheduled with the wave's
        first computations instead of after them."""
        N, P = self.em.lay.l1b, self.em.lay.pe_l1b
        outer, self.em.items = self.em.items, []
        self.em.op(f"wait i{t}", "wait")
        for s in range(self.em.lay.l2bmd_steps):
            self.em.op(f"l2bmd $lc{lc + 32 * N * s} $lb{lb + 32 * s}", "l2bm",
                    mem=(("r", "lc", lc + 32 * N * s, lc + 32 * N * (s + 1)), ("w", "lb", lb + 32 * s, lb + 32 * s + 32)))
        self.em.op(f"l1bmd $lb{lb} {{d0}}", "l1bm", (d,), mem=(("r", "lb", lb, lb + 4 * P),))
        ops, self.em.items = self.em.items, outer
        mv.chain = (t, lc, lb)            # for packing.py, which moves four such loads at once
        if hoist:
            self.em.hoisted.append((mv, ops))
            if read_only:                 # the next wave's may move while this one computes
                self.em.prefetchable.append(mv)
        else:
            self.em.items += [mv] + ops

    def staging_area(self, shared: str, hoist: bool):
        """(lc, lb, own) for one wave share: outside loops and before any store a load may start
        with the wave and gets an area of its own (own=True) while L2BM and L1BM have room;
        otherwise it uses the shared area of that name."""
        lay = self.em.lay
        if hoist and not self.em.loop_stack and not self.em.stored:
            try:
                return self.em.alloc_lc(lay.stripe // lay.l2b), self.em.alloc_lb(4 * lay.pe_l1b), True
            except CodegenError:
                pass
        return (*self.em.shared_area(shared, lay.stripe // lay.l2b, 4 * lay.pe_l1b), False)

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
        if self.em.written is None:
            root = self.param_root
            out = set()
            for b in self.em.f.blocks:
                for i in b.insts:
                    dst = self.store_dst(i)
                    if dst is None:
                        continue
                    k = root(dst)
                    if k is None:
                        out = set(range(len(self.em.params)))
                        break
                    out.add(k)
            self.em.written = out
        return self.em.written

    def is_replicated(self, k) -> bool:
        """Read-only buffer parameters are replicated (layout.py) unless the launch forbids it."""
        if isinstance(k, int) and self.em.replicate and k not in self.written_params() \
                and self.em.params[k].kind in ("global", "constant"):
            self.em.uses.setdefault("replicated", set()).add(k)
            return True
        return False

    def uniform_load(self, k, aff, ty) -> Val:
        """p[u] for a uniform u the sequencer knows, from a read-only (replicated) buffer.

        The 64 long words around it are broadcast to every L1BM (mvb, l2bmb), again only when u
        leaves them (the sequencer remembers the block in %ub<k>), and every PE reads its long
        word with l1bmp at an offset the sequencer adds: a loop walking x[j] moves each block once."""
        u = f"(({aff[1]}) + ({aff[2] or 0}))"                     # byte offset
        blk = f"((({u}) >> 9) << 6)"                                # its 64-long-word block
        if self.em.loop_stack:
            table = self.uniform_table(k, u, type_size(ty))
            if table is not None:
                return Val(self.em.values.kind_of(ty), table)
        lc, lb = self.em.shared_area(("uniform", k), 64, 68)
        self.em.uses.setdefault("bases", set()).add(k)
        reg = f"%ub{k}"
        if ("uniform", k) not in self.em.uniform_blocks:
            self.em.uniform_blocks.add(("uniform", k))
            self.em.prologue.append(SeqSet(reg, "-1"))
        self.em.items.append(SeqIf(f"{blk} != {reg}", self.broadcast_block(k, blk, lc, lb) + [SeqSet(reg, blk)]))
        w = self.em.new(f"u{k}")
        self.em.items.append(Call([Op(f"l1bmp $lb{lb} {{d0}}", "l1bm", (w,), (), mem=(("r", "lb", lb, lb + 68),),
                                   line=self.em.line)], {"lb": f"((({u}) >> 3) & 63)"}))
        if type_size(ty) == 8:
            r = self.em.new("uni")
            self.em.op("lpassa {u0} {d0}", "alu", (r,), (w,))
            return Val(self.em.values.kind_of(ty), (r, r))
        return Val(self.em.values.kind_of(ty), (self.pick_half(w, u),))

    def block_mv(self, k, blk: str, lc: int, base: str, t: int) -> MV:
        """The MV of the 64 long words of buffer k (its widened copy with base "w") from long word
        blk on, from group 0's DRAM into every L2BM at lc, under tag t."""
        a = f"%{base}{k} + {blk}"
        hi = self.em.lay.dram_longs - 64
        x = f"(({a})*(({a})>0))"        # an index out of bounds (reported by its check) reads a clamped block
        return MV(f"mvb/n64i{t} $d0@0 $lc{lc}", f"({x}-({x}-{hi})*({x}>{hi}))".replace(" ", ""), self.em.line)

    def l2bmb(self, lc: int, lb: int) -> Op:
        """64 long words of L2BM at lc to every L1BM at lb."""
        return Op(f"l2bmb $lc{lc} $lb{lb}", "l2bm", mem=(("r", "lc", lc, lc + 64), ("w", "lb", lb, lb + 64)),
                  line=self.em.line)

    def broadcast_block(self, k, blk: str, lc: int, lb: int) -> list:
        """The 64 long words of buffer k from long word blk on, into every L1BM at lb (mvb, l2bmb)."""
        t = self.em.tag()
        return [self.block_mv(k, blk, lc, "b", t), Op(f"wait i{t}", "wait", line=self.em.line), self.l2bmb(lc, lb)]

    def uniform_table(self, k, u: str, size: int):
        """p[u] in a loop (x[j]): each PE keeps the 64 elements around u as a table in LM0 with one
        long word per element, so an element costs one read at an offset the sequencer adds; the
        block moves (mvb, l2bmb, l1bmp: 8 long words a step) once, when u leaves it.  A 32-bit
        element comes from the buffer's *widened* copy, in which the runtime stores each element
        in both halves of a long word (layout.py), so the table is the block as it is.

        The block after it is on its way meanwhile: blocks of even and odd number go through L2BM
        areas of their own (tags of their own), and fetching one starts the MV of the next
        (%pf: the block in flight, or 1), so walking up a buffer waits for no MV but the first.  None
        when LM0 has no room left."""
        tables = self.em.tables
        if (k, size) not in tables:
            floor = 4 * self.em.CH + 8 * self.private_layout()[2]     # private arrays come first
            if self.em.lm_top - 128 < floor:
                return None
            self.em.lm_top -= 128
            lc, lb = self.em.shared_area(("utable", k), 64, 64)
            areas = ((lc, self.em.tag()), (self.em.alloc_lc(64), self.em.tag()))
            reg, pf = self.em.seq_reg("ut"), self.em.seq_reg("pf")
            tables[(k, size)] = (self.em.lm_top, reg, pf, areas, lb)
            # (a block is a multiple of 64, negative for an index out of bounds: 1 means none)
            self.em.prologue += [SeqSet(reg, "1"), SeqSet(pf, "1")]
        tw, reg, pf, areas, lb = tables[(k, size)]
        shift = 2 if size == 4 else 3
        blk = f"((({u}) >> {shift + 6}) << 6)"                    # its block of 64 (widened) long words
        base = "w" if size == 4 else "b"
        self.em.uses.setdefault("widened" if size == 4 else "bases", set()).add(k)
        wait = lambda t: Op(f"wait i{t}", "wait", line=self.em.line)
        arms = []
        for (lc, t), (lc2, t2) in (areas, areas[::-1]):        # blk even, then odd
            arms.append([
                SeqIf(f"{pf} != {blk}", [                      # not on its way: drain, then fetch it
                    SeqIf(f"{pf} != 1", [SeqIf(f"({pf} >> 6) & 1", [wait(areas[1][1])], [wait(areas[0][1])])]),
                    self.block_mv(k, blk, lc, base, t)]),
                wait(t),
                self.l2bmb(lc, lb),
                *(Op(f"l1bmp $llb{lb + 8 * g} $llm{tw + 16 * g}v", "l1bm", line=self.em.line,
                     mem=(("r", "lb", lb + 8 * g, lb + 8 * g + 8), ("w", "m", tw + 16 * g, tw + 16 * g + 16)))
                  for g in range(8)),
                self.block_mv(k, f"({blk}) + 64", lc2, base, t2), SeqSet(pf, f"({blk}) + 64")])
        self.em.items.append(SeqIf(f"{blk} != {reg}", [SeqIf(f"({blk} >> 6) & 1", arms[1], arms[0]),
                                                    SeqSet(reg, blk)]))
        r = self.em.new("uni")
        self.em.items.append(Call([Op(f"lpassa $lm{tw} {{d0}}", "alu", (r,), (), mem=(("r", "m", tw, tw + 128),),
                                   line=self.em.line)], {"m": f"((({u}) >> {shift}) & 63) * 2"}))
        return (r,) if size == 4 else (r, r)

    def shifted_load(self, k, aff) -> VReg:
        """p[get_global_id(0) + u] for a read-only buffer and a uniform u the sequencer knows.

        Such a buffer is *replicated*: every group's DRAM holds all of it, group g's copy
        g stripes lower (layout.py), so one MV address gives every group its own share of
        the wave moved by u / 2 long words; an odd u takes the next long word's halves too.
        A constant u decides that at compile time, and its long-word loads are shared with
        the wave's other loads of the buffer (in[i-1], in[i] and in[i+1] take three, not five)."""
        self.em.uses.setdefault("bases", set()).add(k)
        if self.em.stored:
            self.settle_stores()
        c32 = self.em.c32(32)
        join = lambda a, b: self.em.alu("lor", self.em.alu("ulsr", a, c32), self.em.alu("llsl", b, c32))
        if aff[2] is None and aff[1] % 4 == 0:
            e = aff[1] >> 2
            a = self.long_shift_load(k, e >> 1)
            return join(a, self.long_shift_load(k, (e >> 1) + 1)) if e & 1 else a
        u = f"((({aff[1]}) + ({aff[2] or 0})) >> 2)"          # elements
        a = self.long_shift_load(k, f"({u} >> 1)")     # a register of its own (not cached): an
        out, self.em.items = self.em.items, []                   # odd u rewrites it in place
        self.em.copy(join(a, self.long_shift_load(k, f"({u} >> 1) + 1", hoist=False)), a)
        odd, self.em.items = self.em.items, out
        self.em.items.append(SeqIf(f"({u}) & 1", odd))
        return a

    def long_shift_load(self, k, shift, hoist=True) -> VReg:
        """The wave's share of replicated buffer k moved by `shift` long words (an int or a
        sequencer expression); constant shifts are loaded once per wave (fast_cache)."""
        key = (k, "shift", shift) if isinstance(shift, int) and not self.em.loop_stack else None
        if shift == 0 and key:
            return self.fast_load(k)[0]
        if key in self.em.fast_cache:
            return self.em.fast_cache[key]
        lay = self.em.lay
        S, G = lay.stripe, lay.groups
        lc, lb, own = self.staging_area("shift", hoist)
        t = self.em.tag()
        a = f"%b{k} + %wx * {G * S} + {shift}"
        # lanes outside the buffer (a guarded border, the wave's tail) may ask for addresses
        # beyond DRAM: the transfer is clamped, those lanes' values are don't-care
        hi = lay.dram_longs - S
        x = f"(({a})*(({a})>0))"
        mv = MV(f"mvd/n{S}i{t} $d0 $lc{lc}", f"({x}-({x}-{hi})*({x}>{hi}))".replace(" ", ""), self.em.line)
        d = self.em.new(f"sh{k}")
        self.staged(mv, t, lc, lb, d, hoist=own, read_only=True)
        if key:
            self.em.fast_cache[key] = d
        return d

    def fast_store(self, k, val: VReg, p: VReg, per_wave: bool = True, full: str = None):
        """Read-modify-write of the wave's share: lanes outside p keep what memory held; where the
        sequencer condition `full` holds, p is every lane and the read is skipped."""
        self.em.scatter.flush_scatters()
        lay = self.em.lay
        S, N, P = lay.stripe, lay.l1b, lay.pe_l1b
        cached = self.em.fast_cache.get(k) if not self.em.loop_stack else None
        if cached:                # the wave's share is in a register already: merge into a copy
            old = self.em.copy(cached[0])
            self.em.masked_copy(val, old, self.em.mask_of(p))
        elif full:
            old = self.em.copy(val)
            outer, self.em.items = self.em.items, []
            self.em.masked_copy(self.fast_load(k, for_store=True, per_wave=per_wave, hoist=False)[0], old,
                             self.em.mask_of(self.em.b_not(p)))
            merge, self.em.items = self.em.items, outer
            self.em.items.append(SeqIf(f"not ({full})", merge))
        else:
            old = self.fast_load(k, for_store=True, per_wave=per_wave)[0]
            self.em.masked_copy(val, old, self.em.mask_of(p))
        # the share goes up from a staging area of its own and nothing waits for it: the next
        # wave's loads run while it is in flight; the next user of the area (or any gather or
        # scatter, which may read it back) waits first
        if "store" not in self.em.areas:
            lc, lb = self.em.shared_area("store", S // lay.l2b, 4 * P)
            self.em.prologue += [MV(f"mvd/n{S}i{self.STORE_TAG} $d0 $lc{lc}", "%argblk", self.em.line)]
        lc, lb = self.em.shared_area("store", S // lay.l2b, 4 * P)
        self.settle_stores()
        self.em.op(f"l1bmd {{s0}} $lb{lb}", "l1bm", (), (old,), mem=(("w", "lb", lb, lb + 4 * P),))
        for s in range(lay.l2bmd_steps):
            self.em.op(f"l2bmd $lb{lb + 32 * s} $lc{lc + 32 * N * s}", "l2bm",
                    mem=(("r", "lb", lb + 32 * s, lb + 32 * s + 32), ("w", "lc", lc + 32 * N * s, lc + 32 * N * (s + 1))))
        self.em.op("nop", "nop")
        self.em.op("nop", "nop")
        self.em.items.append(MV(f"mvd/n{S}i{self.STORE_TAG} $lc{lc} $d0", f"%b{k}+%wx*{S}" if per_wave else f"%b{k}",
                             self.em.line))
        self.em.scatters |= not per_wave and isinstance(k, int)     # (not the bounds reports)

    def gather_area(self):
        return self.em.shared_area("gather", self.em.lay.stripe, self.em.CH)

    def chunk_to_lm0(self, at: int = 0):
        """The chunk in the gather area's L2BM to every PE's LM0 words at .. at + 2 CH (l2bmb, l1bmp)."""
        glc, glb = self.gather_area()
        for t in range(self.em.CH // 64):
            self.em.items.append(self.l2bmb(glc + 64 * t, glb + 64 * t))
        for u in range(self.em.CH // 8):
            self.em.op(f"l1bmp $llb{glb + 8 * u} $llm{at + 16 * u}v", "l1bm",
                    mem=(("r", "lb", glb + 8 * u, glb + 8 * u + 8), ("w", "m", at + 16 * u, at + 16 * u + 16)))

    def remark(self, k, how: str):
        """Note that an access of buffer k at this line moves all of the buffer (mncl-cc --stats)."""
        name = "__local memory" if k == "L" else f"'{self.param(k).name}'" if isinstance(k, int) else "a table"
        loop = ", in every pass of its loop" if self.em.loop_stack else ""
        what = "load from" if how == "gathered" else "store to"
        self.em.remarks[(self.em.line, how, name)] = (
            f"the {what} {name} is {how}: its index is not the global id plus a uniform offset, so all of "
            f"the buffer passes through every PE{loop} (docs/architecture.md, data movement)")

    def gather(self, k, ptr: Val, ty: str, p: VReg) -> Val:
        """Every lane's element of buffer k: the buffer passes chunk by chunk through every PE's LM0
        (or, resident, is there: resident_read)."""
        self.note_access(k, "gather")
        size = type_size(ty)
        if size not in (4, 8):
            raise CodegenError(f"loads of {ty} ({size}-byte) elements are not supported on the emulator device yet",
                               self.em.line)
        if k in self.em.resident:
            return self.em.resident_buffers.resident_read(k, ptr, ty)
        self.remark(k, "gathered")
        self.settle_stores(whole_buffer=True)
        lay = self.em.lay
        S, G, CH = lay.stripe, lay.groups, self.em.CH
        glc, _ = self.gather_area()
        self.em.uses.setdefault("bases", set()).add(k)
        self.em.uses.setdefault("rows", set()).add(k)
        rel, acc = self.word_index(ptr, size)
        outer, self.em.items = self.em.items, []
        self.chunk_to_lm0()
        self.read_chunk(rel, size, 0, acc)
        self.em.alu("isub", rel, self.em.c32(2 * CH), dst=rel)
        body = self.em.items
        self.em.items = []
        r, c = self.em.seq_reg("r"), self.em.seq_reg("c")
        tg = self.em.tag()
        for g in range(G):
            if self.is_replicated(k):       # stripe rG + g of the whole copy in group 0
                self.em.items.append(MV(f"mvb/n{S}i{tg} $d0@0 $lc{glc}", f"%b{k}+({r}*{G}+{g})*{S}", self.em.line))
            else:
                self.em.items.append(MV(f"mvb/n{S}i{tg} $d0@{g} $lc{glc}", f"%b{k}+{r}*{S}", self.em.line))
            self.em.op(f"wait i{tg}", "wait")
            self.em.items.append(SeqLoop(c, "0", str(S // CH), [Call(body, {"lc": f"{c}*{CH}"})]))
        loop = SeqLoop(r, "0", f"%rows{k}", self.em.items)
        self.em.items = outer
        self.em.items.append(loop)
        return self.lane_value(acc, ty)

    def word_index(self, ptr: Val, size: int):
        """(each lane's word index into the buffer: its element's word, 2 x its long word for 64-bit
        elements; zeroed accumulators for read_chunk)."""
        rel = self.em.alu("uilsr", self.ptr_off(ptr), self.em.c32(2 if size == 4 else 3), hint="rel")
        acc = [self.em.copy(self.em.c32(0)), self.em.copy(self.em.c32(0))]
        if size == 4:     # element 2k is the low half of long word k: word 2k + 1
            return self.em.alu("ixor", rel, self.em.c32(1)), acc
        return self.em.alu("ilsl", rel, self.em.c32(1)), acc

    def read_chunk(self, rel: VReg, size: int, at: int, acc: list):
        """Each lane's element at word index rel (word_index, less the chunk's start) of the chunk of
        2 CH words at LM0 word `at`, T-indirect, into the accumulators acc (upper-lane and
        lower-lane registers for 32-bit elements, odd and even work-items' for 64-bit ones);
        lanes whose element is not in the chunk keep what they had."""
        n_words = 2 * self.em.CH
        c32 = self.em.c32(32)
        lm = (("r", "m", at, at + n_words),)
        # T-indirect addresses must lie inside LM0 even in masked-off lanes: wrap them into the chunk
        if size == 4:
            inr = self.em.flags("uimin", rel, self.em.c32(n_words - 1))
            addr = self.em.alu("iand", rel, self.em.c32(n_words - 1))
            self.em.op("ulsr {s0} {s1} $t", "alu", (), (addr, c32), mem=TW)
            self.em.op(f"ipassa $mt{at} {{d0}}/{{k0}}", "alu", (acc[0],), (acc[0],), msrc=(inr,), partial=True,
                    mem=lm + TR)
            self.em.op("lpassa {s0} $t", "alu", (), (addr,), mem=TW)
            w = self.em.new()
            self.em.op(f"ipassa $mt{at} {{d0}}", "alu", (w,), (), mem=lm + TR)
            self.em.op("ulsr {s0} {s1} {d0}/{k0}", "alu", (acc[1],), (w, c32, acc[1]), msrc=(inr,), partial=True)
        else:
            for part in (0, 1):
                lane = self.em.alu("ulsr", rel, c32) if part == 0 else self.em.alu("land", rel, self.em.const64(0xFFFFFFFF))
                inr = self.em.flags("ulmin", lane, self.em.const64(n_words - 2))
                addr = self.em.alu("land", lane, self.em.const64(n_words - 1))
                self.em.op("lpassa {s0} $t", "alu", (), (addr,), mem=TW)
                self.em.op(f"lpassa $lmt{at} {{d0}}/{{k0}}", "alu", (acc[part],), (acc[part],), msrc=(inr,),
                        partial=True, mem=lm + TR)

    def lane_value(self, acc, ty) -> Val:
        """read_chunk's accumulators as the loaded value."""
        if type_size(ty) == 4:
            hi = self.em.alu("land", acc[0], self.em.const64(0xFFFFFFFF00000000))
            lo = self.em.alu("land", acc[1], self.em.const64(0xFFFFFFFF))
            return Val(self.em.values.kind_of(ty), (self.em.alu("lor", hi, lo),))
        return Val(self.em.values.kind_of(ty), tuple(acc))

    # resident buffers ----------------------------------------------------------------------------
    def note_access(self, k, how: str):
        """Record that the instruction being translated reaches buffer k by `how` ("load", "store":
        any path; "gather": a gather or scatter), for resident_candidates."""
        if isinstance(k, int):
            r = self.em.reached.setdefault(k, {"load": set(), "store": set(), "gather": set(), "loop": False})
            r[how].add(self.em.cur)
            r["loop"] |= how == "gather" and bool(self.em.loop_stack)

    def pick_half(self, w: VReg, u: str) -> VReg:
        """The 32-bit element at byte offset u (the sequencer knows it) of long word w, in both lanes:
        the low half when its index is even, else the high half."""
        c32, r = self.em.c32(32), self.em.new("uni")
        outer, picks = self.em.items, []
        for first, second in (("ulsr", "llsl"), ("llsl", "ulsr")):
            self.em.items = []
            t = self.em.new("uni")
            self.em.op(f"{first} {{u0}} {{s1}} {{d0}}", "alu", (t,), (w, c32))
            self.em.alu("lor", t, self.em.alu(second, t, c32), dst=r)
            picks.append(self.em.items)
        self.em.items = outer
        self.em.items.append(SeqIf(f"({u} >> 2) & 1", *picks))
        return r
