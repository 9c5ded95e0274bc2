"""The split copy: 8-byte elements at the global id (`y[i] = a * x[i] + y[i]` over doubles or
longs; `x[i + 1]` where the kernel only reads x) and 32-bit fields of wider elements (`p[i].x`)
moved as whole wave shares (issue 22, access classes "unit", "strided" and "neighbourhood").

A 1-D build keeps two work-items in each long word of a lane register (layout.py): the odd one
in the upper half, the even one in the lower; a 64-bit value is two registers, the odd
work-items' and the even ones' (values.py).  A wave's doubles are adjacent long words of the
buffer, so a contiguous load would have to give each slot two adjacent long words, which no
transfer does (each PE of an L1B takes every 64th long word: docs/isa.md, transfer layouts):
such loads and stores were gathers and scatters over the wave's span.

With this plan the runtime keeps a *split copy* of the buffer for the launch
(mncl/emulator_device.py, write_split_copy; docs/isa.md, deviation 16) in two *planes*: the
even work-items' elements (the buffer's elements 0, 2, 4, ...), then the odd ones', each padded
to whole waves, so that long word j of group g's share of wave x in plane h holds element
x W + 2 S g + 2 j + h (W work-items a wave, S long words a group's share, P long words a plane:
the sequencer argument split_plane).  Each plane's share is one contiguous transfer: a load is two
(the odd and the even registers), a store two read-modify-writes of shares, and every element
crosses DRAM once.  Where the kernel stores to the buffer the copy is striped like a buffer and
written back after the launch; where it only reads it, the copy is replicated (whole in every
group's DRAM, group g's g stripes lower, as a read-only buffer is) and `x[i + u]`, for any
uniform u, is two shifted loads: work-item x + u is long word (x + u) >> 1 of plane (x + u) & 1.

The same holds for E 32-bit fields of each work-item's element (`p[i].x` of float4 or float2
vectors and of structs of floats, `a[2 * i + 1]`): 32-bit loads and stores at E times the global
id plus a field c < E.  Their copy holds, per wave, field c of the wave's elements as the c-th
32-bit wave share (word c W + w of wave x's part is field c of element x W + w), so a field is
one contiguous load or store in the usual lanes.

Conditions: a 1-D build (or, for 8-byte elements, a "rows" build, over the flat position:
rows.py), a buffer parameter whose accesses at the global id are all 8-byte elements (shifted
only where the kernel only reads it), or all 32-bit fields of E-word elements (one E,
2 <= E <= 8), and, where the kernel writes the buffer, which it accesses nowhere else (a
read-only buffer's other accesses read the buffer itself, which is the same data).  A launch in
which the buffer overlaps another argument runs the "-norep" build, which has no copies
(abi._specialised).
"""
from __future__ import annotations

from .abi import reg, split_copy, split_plane
from .access import _is_id
from .irread import _VEC
from .irtypes import type_size
from .memory import dram_clamped
from .values import Val

MAX_FIELDS = 8


def fields(stride: int, off: int) -> tuple | None:
    """(E, c) for a 32-bit access at `stride` bytes a work-item and `off` bytes: E words an
    element, word c of it; None unless 2 <= E <= MAX_FIELDS and 0 <= c < E."""
    if stride % 4 or off % 4 or not 2 <= stride // 4 <= MAX_FIELDS or not 0 <= off < stride:
        return None
    return stride // 4, off // 4


def scalar_parts(a) -> list:
    """(element bytes, access form) of each scalar access an Access makes: a vector's load or
    store is its elements' (values.vector_inst splits it)."""
    i = a.inst
    m = _VEC.fullmatch((i.type if a.kind == "load" else getattr(i.ops[0], "type", "")) or "") if i else None
    if m is None or a.form is None:
        return [(a.elem, a.form)]
    size = type_size(m.group(2).strip())
    return [(size, {**a.form, (): a.form.get((), 0) + j * size}) for j in range(int(m.group(1)))]


class Mismatch(Exception):
    """An access of a buffer the kernel writes through its split copy that the copy cannot serve
    (the access analysis saw its form, the values did not): the build starts again without the
    copy for that buffer (translator/backend/__init__.py, _build)."""

    def __init__(self, k):
        super().__init__(f"buffer {k}: an access the split copy cannot serve")
        self.k = k


class SplitCopy:
    """8-byte elements and 32-bit fields at the global id through a split copy (the module
    docstring)."""

    def __init__(self, em):
        self.em = em
        self.without = frozenset()      # buffers a build made again has no copy for (Mismatch)
        self.layouts = {}

    def layout(self, k) -> int | None:
        """The copy buffer k's accesses take: -F for elements of F 8-byte fields (2F planes: a
        double is -1), E for E-word elements read and written by 32-bit fields; None where the
        plan does not apply."""
        em = self.em
        if not (em.one_d or em.rows is not None) or not em.replicate or not isinstance(k, int) \
                or k in em.resident or k in self.without:
            return None         # (a "-norep" build, for launches whose buffers overlap, has no copies)
        if k not in self.layouts:
            mine = [a for a in em.accesses.values() if a and a.buffer == em.params[k].name]
            stored = any(a.kind == "store" for a in mine)
            parts = [x for a in mine for x in scalar_parts(a)]
            if em.rows is None:       # (size, bytes a work-item, constant bytes, other terms)
                ids = [(size, form.get(("gid0",), 0), form.get((), 0), set(form) - {("gid0",), ()})
                       for size, form in parts if form is not None and form.get(("gid0",))
                       and not any(_is_id(v) for m in form if m != ("gid0",) for v in m)]
            else:                     # a rows build: doubles over the flat position (rows.py)
                flat = [em.rows.affine(a.inst.ops[0 if a.kind == "load" else 1], k) for a in mine
                        if a.elem == 8 and len(scalar_parts(a)) == 1]
                ids = [(8, got[0], got[1], {got[2]} - {None}) for got in flat if got and got[0] == 8]
            strides = {stride for _, stride, _, _ in ids}
            e = None
            if not ids or len(ids) < len(parts) and stored or len(strides) != 1:
                pass            # (a buffer the kernel writes: every access through the copy)
            elif all(size == 8 for size, *_ in ids) and next(iter(strides)) % 8 == 0:
                f = strides.pop() // 8
                # shifted only where the kernel only reads (its copy is replicated), by constants
                # where an element has more than one field
                if 1 <= f <= MAX_FIELDS and all(off % 8 == 0 and (0 <= off < 8 * f and not more if stored
                                                                  else f == 1 or not more)
                                                for _, _, off, more in ids):
                    e = -f
            elif em.rows is None and all(size == 4 and fields(stride, off) and not more
                                         for size, stride, off, more in ids):
                e = strides.pop() // 4
            self.layouts[k] = (e, stored)
        return self.layouts[k][0]

    def claims(self, k) -> bool:
        """Whether every access of buffer k must go through its copy: the kernel writes it."""
        return self.layout(k) is not None and self.layouts[k][1]

    def moves(self, k, ptr, size: int) -> list | None:
        """The wave shares an access of buffer k through ptr reads or writes, as their addresses in
        every group's DRAM (sequencer expressions), one per register: the odd and the even
        work-items' for an 8-byte field, the field's for a 32-bit one; None where the plan does not
        apply."""
        em = self.em
        e, aff = self.layout(k), ptr.gid_affine
        if e is None or aff is None:
            return None
        lay, sc = em.lay, reg(split_copy(k))
        S, G = lay.stripe, lay.groups
        if e > 0:
            f = fields(aff[0], aff[1]) if size == 4 and aff[2] is None else None
            return [f"{sc}+({e}*%wx+{f[1]})*{S}"] if f and f[0] == e else None
        f = -e
        if size != 8 or aff[0] != 8 * f or aff[1] % 8 or f > 1 and aff[2] is not None:
            return None
        c, u = aff[1] // 8 % f, aff[1] // (8 * f)      # the field, and the shift in work-items
        plane = reg(split_plane(k))
        if self.layouts[k][1]:      # striped: plane q of wave x at stripe row q P / (G S) + x
            return [f"{sc}+{2 * c + h}*{plane}/{G}+%wx*{S}" for h in (1, 0)] if (u, aff[2]) == (0, None) else None
        # replicated: field c of work-item x + u is long word (x + u) >> 1 of plane 2 c + (x + u) & 1
        out = []
        for h in (1, 0):
            if aff[2] is None:
                v = h + u
                at = f"{sc}+{2 * c + (v & 1)}*{plane}+%wx*{G * S}+{v >> 1}"
            else:
                v = f"({h} + (({aff[1]}) + ({aff[2]})) / 8)"
                at = f"{sc}+({v} & 1)*{plane}+%wx*{G * S}+({v} >> 1)"
            out.append(dram_clamped(at, lay.dram_longs - S))
        return out

    def use(self, k, stored: bool):
        """Record buffer k's copy for the runtime: (stored, layout)."""
        copies = self.em.uses.setdefault("split_copies", {})
        copies[k] = (copies.get(k, (False,))[0] or stored, self.layout(k))
        self.em.uses["launch"] = True

    def plan(self, k, store: bool = False):
        """The plan, for mncl-cc --stats."""
        em = self.em
        e, stored = self.layout(k), "stored " if store else ""
        if e > 0:
            what = f"the wave's elements {stored}as {e} contiguous shares, field by field"
        else:
            what = f"the wave's odd and even work-items' elements {stored}as two contiguous shares"
            what += f", field by field ({-e} fields)" if e < -1 else ""
        if store:
            what += ", which the runtime writes back into the buffer after the launch"
        key = (em.line, em.params[k].name) + (("store",) if store else ())
        em.plans.setdefault(key, set()).add(f"split copy: {what} (a launch whose buffers overlap runs the "
                                            f"-norep build, which gathers and scatters)")

    def load(self, k, ptr, ty, must: bool = False) -> Val | None:
        """The element (or field) of buffer k at the global id (an 8-byte one shifted by a uniform
        offset, in a buffer the kernel only reads), or None where the plan does not apply
        (Mismatch where it `must`)."""
        em = self.em
        shares = self.moves(k, ptr, type_size(ty))
        if shares is None:
            if must:
                raise Mismatch(k)
            return None
        self.use(k, False)
        out = tuple(em.memory.fast_load(k, at=at)[0] for at in shares)      # (odd, even), or the field's
        self.plan(k)
        return Val(em.values.kind_of(ty), out)

    def store(self, k, ptr, regs: tuple, p, whole: bool, must: bool = False):
        """Store regs (a 64-bit value's odd and even registers, or a field's one) to buffer k at
        the global id under lane mask p (`whole`: every lane the kernel runs); False where the
        plan does not apply (Mismatch where it `must`)."""
        em = self.em
        shares = self.moves(k, ptr, 8 if len(regs) == 2 else 4)
        if shares is None:
            if must:
                raise Mismatch(k)
            return False
        self.use(k, True)
        full = em.full_when(em.lay.wave_full(), whole)
        if len(shares) == 2:
            c32 = em.c32(32)
            # each plane's long word is one work-item's: the odd (upper) or even (lower) lane's mask, whole
            odd = em.alu("lor", em.alu("land", p, em.const64(0xFFFFFFFF00000000)), em.alu("ulsr", p, c32))
            even = em.alu("lor", em.alu("llsl", p, c32), em.alu("land", p, em.const64(0xFFFFFFFF)))
            for v, mask, at in zip(regs, (odd, even), shares):
                em.memory.fast_store(k, v, mask, full=full, at=at)
        else:
            em.memory.fast_store(k, regs[0], p, full=full, at=shares[0])
        self.plan(k, store=True)
        return True
