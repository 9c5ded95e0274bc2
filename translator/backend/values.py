"""Values: how IR values are held in registers, constants, vectors and aggregates, integer
ranges and affine forms, and the values the sequencer knows.

Every IR value becomes a ``Val``: 32-bit kinds (i32, f32, bool) are one VReg (two work-items
per long word), 64-bit kinds (i64, f64) two VRegs (odd, even work-items).  Booleans are 0 / -1
per 32-bit lane.  Pointers are a provenance (which buffer) plus a 32-bit byte offset.
"""
from __future__ import annotations

import re
import struct
from dataclasses import dataclass, replace

from . import irtypes
from .abi import LAUNCH, LOCAL_EXTENTS, const_table, param, reg
from .irread import _VEC, Arg, Const, Inst, parse_const
from .irtypes import container_int, odd_int, type_size
from .nans import is_chain
from .ops import VReg
from .seqexpr import seq
from .emitter import CodegenError


KINDS = {"i32": 1, "f32": 1, "b": 1, "i64": 2, "f64": 2, "i16": 1, "i8": 1}    # Val kind -> its registers
SMALL = {"i8": 8, "i16": 16}          # integers held in a 32-bit lane whose upper bits are don't-care
# LLVM's conversions (isel_float.cast; vector_inst makes them element by element)
CASTS = ("zext", "sext", "trunc", "sitofp", "uitofp", "fptosi", "fptoui", "fpext", "fptrunc", "bitcast",
         "ptrtoint", "inttoptr")


@dataclass(eq=False)
class Val:
    kind: str                       # i32 f32 b i64 f64 ptr
    regs: tuple = ()
    narrow: object = None           # i64: the i32 VReg it extends (exact)
    base: object = None             # ptr: ("param", i) | ("args",) | ("wg",) | ("ids",)
    off: object = None              # ptr: Val i32 byte offset (None = 0)
    coff: int = 0                   # ptr: constant byte offset added to off
    gid_affine: tuple | None = None  # ints: (coef, const, seq): value == coef * gid0 + const + seq, where seq
                                    # is None or a sequencer expression (a uniform part the sequencer knows)
    const: object = None
    parts: tuple = ()               # vec: the kind of each element; regs are the elements' regs in order
    lazy: tuple | None = None       # floats: (op, operand Vals) when +-inf may stand for NaN (nans.py)
    home: str | None = None         # ptr: the IR value a register living across a loop stands for (persistent)
    rng: tuple | None = None        # ints: (lo, hi), an interval holding the true (unwrapped) value, or None
    scaled: tuple | None = None     # i64: (u, k, rng of u): the value is u << k exactly, u's low 32 bits in VReg u
    idx: tuple | None = None        # ptr: (x, n, rng of x, 64-bit Val of x or None): off == x * n exactly
                                    # (one variable term), x's low 32 bits in VReg x (check_bounds)
    orng: tuple | None = None       # ptr without idx: interval of the offset register's signed value
    o64: tuple | None = None        # ptr without idx: the offset's 64-bit value (odd, even) where orng is not 32-bit
    good: object = None             # ptr: bool VReg, false in lanes already known out of bounds, or None
    whole: bool = False             # ptr with idx: its n bytes are the GEP's own element (a vector, a struct),
                                    # which C asks to be whole in the buffer; not a scaled index's step
    elts: tuple | None = None       # vec: its element Vals, when some are lazy floats (nans.py)


def is_pow2(n):
    return n > 0 and n & (n - 1) == 0


# Integer ranges.  An i64 value keeps its low 32 bits in a cheap "narrow" VReg where it can; an
# interval of its true value (Val.rng) says when those bits are the whole value (within I32), and
# pointer offsets, 32-bit on this device, carry what the bounds checks need to see a 64-bit index
# that a 32-bit offset would wrap (check_bounds).
I32 = (-(1 << 31), (1 << 31) - 1)
U32 = (0, (1 << 32) - 1)
MAX_BUFFER = 1 << 30       # the emulator device's largest buffer, in bytes (mncl: max_mem_alloc_size)
MAX_GLOBAL_ID = 1 << 30    # global ids (offset included) stay below this (mncl checks the launch)
# where an index's low 32 bits compared unsigned with a count of at most MAX_BUFFER elements
# decide the same as its true value: no value in the range is the count's range plus or minus 2^32
EXACT = (-(1 << 32) + MAX_BUFFER, (1 << 32) - 1)


def within(r, box) -> bool:
    return r is not None and box[0] <= r[0] and r[1] <= box[1]


def mask_keeps(mask, r) -> bool:
    """True where `x & mask` is x for every x in interval r: mask is a run of low one bits covering r."""
    return mask is not None and mask >= 0 and not mask & (mask + 1) and within(r, (0, mask))


def rng_add(a, b, sign=1):
    if a is None or b is None:
        return None
    return (a[0] + b[0], a[1] + b[1]) if sign > 0 else (a[0] - b[1], a[1] - b[0])


def rng_scale(a, c: int):
    return None if a is None else (min(a[0] * c, a[1] * c), max(a[0] * c, a[1] * c))


def aff_add(a, b, sign=1):
    """The affine form of a + sign * b (see Val.gid_affine)."""
    if b[2] is None:
        seq = a[2]
    else:
        seq = f"({a[2] or 0}) {'+' if sign > 0 else '-'} ({b[2]})"
    return a[0] + sign * b[0], a[1] + sign * b[1], seq


def aff_scale(a, c: int):
    return a[0] * c, a[1] * c, None if a[2] is None else f"({a[2]}) * {c}"


_PLAIN = re.compile(r"-?\d+|%\w+")     # a sequencer expression that is a number or a register


class Values:
    """Values of IR operands, constants, vectors and aggregates, and what the sequencer knows of them."""

    def __init__(self, em):
        self.em = em

    def select(self, c: VReg, a: Val, b: Val) -> Val:
        em = self.em
        if a.kind == "vec":
            return self.make_vec([self.select(c, x, y) for x, y in zip(self.elems(a), self.elems(b))])
        if a.kind == "ptr":
            if a.base != b.base or a.base[0] == "either":           # see on_either
                return Val("ptr", base=("either", c, a, b))
            ia, ib = em.memory.index_form(a), em.memory.index_form(b)
            if ia and ib and ia[1] == ib[1]:       # p[x] or p[y]: p[c ? x : y], still an index
                x, n = em.select32(c, ia[0], ib[0]), ia[1]
                r = (min(ia[2][0], ib[2][0]), max(ia[2][1], ib[2][1]))
                wide = self.select(c, Val("i64", em.memory.idx_wide(ia)), Val("i64", em.memory.idx_wide(ib)))
                off = em.ints.mul_const(Val("i32", (x,)), n, False, None).regs[0]
                return Val("ptr", base=a.base, off=Val("i32", (off,)), idx=(x, n, r, wide, em.memory.near_start(x, r)))
            ao, bo = em.memory.carried_off(a), em.memory.carried_off(b)
            return Val("ptr", base=a.base, off=Val("i32", (em.select32(c, ao, bo),)))
        if len(a.regs) == 1:
            return Val(a.kind, (em.select32(c, a.regs[0], b.regs[0]),))
        hi, lo = em.widen_bool(c)
        out = []
        for cc, x, y in ((hi, a.regs[0], b.regs[0]), (lo, a.regs[1], b.regs[1])):
            d = em.copy(y)
            em.masked_copy(x, d, em.flags("lnot", cc))
            out.append(d)
        return Val(a.kind, tuple(out))

    def norm_small(self, v: Val, ty: str, signed: bool) -> Val:
        """An i8/i16 value (kept in a 32-bit lane whose upper bits are don't-care) extended to 32 bits."""
        em = self.em
        bits, r = SMALL[ty], v.regs[0]
        if signed:
            r = em.alu("ilsr", em.alu("ilsl", r, em.c32(32 - bits)), em.c32(32 - bits))
        else:
            r = em.alu("iand", r, em.c32((1 << bits) - 1))
        return Val("i32", (r,))

    def narrow(self, v: Val) -> VReg:
        em = self.em
        if v.kind in ("i32", "b", "f32"):
            return v.regs[0]
        if v.narrow is not None:
            return v.narrow
        if v.regs[0] is v.regs[1]:           # a uniform 64-bit value: both halves equal
            return em.join32(v.regs[0], v.regs[0])
        return em.join32(*v.regs)

    def wide(self, v: Val, signed=True) -> tuple:
        em = self.em
        if len(v.regs) == 2:
            return v.regs
        return em.split64(v.regs[0], signed)

    # ------------------------------------------------------------------ values
    def val(self, x) -> Val:
        """The value of IR operand x, with IEEE NaNs (a lazy float is settled, see nans.py)."""
        em = self.em
        return em.nans.settle(self.raw(x))

    def raw(self, x) -> Val:
        """The value of IR operand x as it is: a lazy float may hold +-inf for NaN (nans.py)."""
        em = self.em
        if isinstance(x, Const):
            return self.const_val(x)
        if isinstance(x, (Inst, Arg)):
            v = em.vals.get(x)
            if v is None:
                raise CodegenError(f"internal: value used before its definition: {getattr(x, 'text', x)}", em.line)
            return v
        if isinstance(x, tuple) and x[0] == "global":      # program-scope __constant data, in DRAM
            names = em.uses.setdefault("constants", [])
            if x[1] not in names:
                names.append(x[1])
            return Val("ptr", base=("global", const_table(names.index(x[1]))))
        raise CodegenError(f"unsupported operand {x!r}", em.line)

    def const_val(self, c: Const) -> Val:
        em = self.em
        ty, v = c.type, c.value
        if irtypes.is_aggregate(ty):                 # its leaves, read from its bytes in memory
            out = []
            for lt, off in self.leaves(ty):
                n = irtypes.size(lt)
                raw = bytes(n) if v is None else v[off:off + n]
                x = struct.unpack({"float": "<f", "double": "<d"}[lt], raw)[0] if lt in ("float", "double") \
                    else int.from_bytes(raw, "little", signed=True)
                out.append(self.const_val(Const(lt, x)))
            return self.make_vec(out)
        if v is None:
            v = 0
        if odd_int(ty):
            ty = container_int(ty)
        if isinstance(v, tuple):
            et = _VEC.fullmatch(ty).group(2).strip()
            return self.make_vec([self.const_val(Const(et, x)) for x in v])
        if ty == "i1":
            r = em.c32(-1 if v else 0)
            return Val("b", (r,), const=v)
        if ty in ("i8", "i16", "i32"):
            return Val("i32", (em.c32(v),), const=v, gid_affine=(0, v, None), rng=(v, v))
        if ty == "i64":
            r = em.const64(v)
            return Val("i64", (r, r), narrow=em.c32(v), const=v, gid_affine=(0, v, None), rng=(v, v))
        if ty == "float":
            bits = struct.unpack("<I", struct.pack("<f", v))[0]
            return Val("f32", (em.c32(bits),), const=v)
        if ty == "double":
            bits = struct.unpack("<Q", struct.pack("<d", v))[0]
            r = em.const64(bits)
            return Val("f64", (r, r), const=v)
        if ty == "ptr":
            return Val("ptr", base=("null",))
        raise CodegenError(f"constant of type {ty} is not supported on the emulator device", em.line)

    # vectors: one Val per element, side by side ------------------------------------------------
    def make_vec(self, vals, lazy=False) -> Val:
        """A vector of vals, settled (nans.py) unless lazy: the result of a chain operation done
        element by element keeps its elements lazy, so `(q - p).x * s` settles nothing until a
        value leaves the chain (Values.val settles a vector's lazy elements)."""
        em = self.em
        if not (lazy and any(x.lazy is not None for x in vals)):
            vals = [em.nans.settle(x) for x in vals]
            lazy = False
        return Val("vec", tuple(r for x in vals for r in x.regs), parts=tuple(x.kind for x in vals),
                   elts=tuple(vals) if lazy else None)

    def elems(self, v: Val) -> list:
        if v.elts is not None:
            return list(v.elts)
        out, k = [], 0
        for kind in v.parts:
            n = KINDS[kind]
            out.append(Val(kind, v.regs[k:k + n]))
            k += n
        return out

    def proxy(self, ty: str, v: Val) -> Arg:
        """A stand-in IR operand of type ty whose value is v (to translate vector ops element by element)."""
        em = self.em
        a = Arg("elt", ty)
        em.vals[a] = v
        return a

    # aggregates (structs, arrays as values): the flat vec of their scalar leaves --------------------
    def leaves(self, ty: str) -> tuple:
        em = self.em
        out = irtypes.leaves(ty)
        for lt, _ in out:
            if lt == "ptr" or lt not in ("i1", "i8", "i16", "i32", "i64", "float", "double"):
                raise CodegenError(f"a struct or array value with a field of type {lt} is not supported on the "
                                   f"emulator device", em.line)
        return out

    def aggregate_inst(self, i: Inst, p: VReg):
        """extractvalue / insertvalue (indices at the end of the text), and loads and stores of a
        whole aggregate, one per scalar leaf at LLVM's offset of it."""
        em = self.em
        if i.op in ("load", "store"):
            ty = i.type if i.op == "load" else i.ops[0].type
            ptr = self.val(i.ops[-1] if i.op == "store" else i.ops[0])
            src = self.elems(self.val(i.ops[0])) if i.op == "store" else None
            out = []
            for k, (lt, off) in enumerate(self.leaves(ty)):
                aff = ptr.gid_affine and (ptr.gid_affine[0], ptr.gid_affine[1] + off, ptr.gid_affine[2])
                at = self.proxy("ptr", replace(ptr, coff=ptr.coff + off, gid_affine=aff))
                if src is None:
                    ld = Inst("load", f"{i.name}.{k}", lt, [at], elem=lt, line=i.line)
                    em.codegen.inst(ld, p)
                    out.append(em.vals[ld])
                else:
                    em.codegen.inst(Inst("store", "", "void", [self.proxy(lt, src[k]), at], line=i.line), p)
            return self.make_vec(out) if src is None else None
        m = re.search(r"((?:,\s*\d+)+)\s*$", i.text)
        if not m:
            raise CodegenError(f"'{i.op}' indices not understood: '{i.text}'", em.line)
        ty = i.ops[0].type
        first = 0
        for idx in (int(x) for x in re.findall(r"\d+", m.group(1))):
            f, _, ty = irtypes.field_range(ty, idx)
            first += f
        n = len(self.leaves(ty))
        items = self.elems(self.val(i.ops[0]))
        scalar = not (irtypes.is_aggregate(ty) or _VEC.fullmatch(ty))
        if i.op == "extractvalue":
            return items[first] if scalar else self.make_vec(items[first:first + n])
        x = self.val(i.ops[1])
        items[first:first + n] = [x] if scalar else self.elems(x)
        return self.make_vec(items)

    def vector_inst(self, i: Inst, p: VReg) -> Val:
        em = self.em
        op = i.op
        vec_of = lambda o: _VEC.fullmatch(getattr(o, "type", "") or "")
        if op == "extractelement":
            idx = self.val(i.ops[1])
            if idx.const is not None:       # a lazy element stays lazy
                return self.elems(self.raw(i.ops[0]))[idx.const]
            items = self.elems(self.val(i.ops[0]))
            out = items[0]
            for j, e in enumerate(items[1:], 1):
                out = self.select(em.ints.icmp("eq", Val("i32", (self.narrow(idx),)), self.const_val(Const("i32", j))),
                                  e, out)
            return out
        if op == "insertelement":
            items, x, idx = self.elems(self.val(i.ops[0])), self.val(i.ops[1]), self.val(i.ops[2])
            if idx.const is not None:
                items[idx.const] = x
            else:
                n32 = Val("i32", (self.narrow(idx),))
                items = [self.select(em.ints.icmp("eq", n32, self.const_val(Const("i32", j))), x, e)
                         for j, e in enumerate(items)]
            return self.make_vec(items)
        if op == "shufflevector":
            both = self.elems(self.val(i.ops[0])) + self.elems(self.val(i.ops[1]))
            m = re.search(r"<\d+ x i32> (zeroinitializer|poison|undef|<[^>]*>)\s*$", i.text)
            if not m:
                raise CodegenError(f"shufflevector mask not understood: '{i.text}'", em.line)
            n = int(vec_of(i).group(1))
            mask = parse_const(f"<{n} x i32>", m.group(1)).value
            zero = self.const_val(Const(_VEC.fullmatch(i.type).group(2).strip(), 0))
            return self.make_vec([zero if k is None else both[k] for k in mask])
        if op == "bitcast":
            src = self.val(i.ops[0])
            if src.kind == "vec" and vec_of(i) and all(KINDS[k] == 1 for k in src.parts) \
                    and int(vec_of(i).group(1)) == len(src.parts):
                ek = self.kind_of(vec_of(i).group(2).strip())
                return Val("vec", src.regs, parts=(ek,) * len(src.parts))
            return self.bitcast_words(src, i.ops[0].type, i.type)
        # everything else element by element: loads and stores at the elements' offsets, calls to
        # the scalar form of an intrinsic, arithmetic, compares, casts and selects
        m = vec_of(i) or (vec_of(i.ops[0]) if op == "store" else None)
        n = int(m.group(1))
        ety = m.group(2).strip()
        out = []
        chain = is_chain(i)
        get = self.raw if chain else self.val
        for j in range(n):
            ops = []
            for o in i.ops:
                vo = vec_of(o) if isinstance(o, (Inst, Arg, Const)) else None
                if vo and isinstance(o, Const):
                    ops.append(Const(vo.group(2).strip(), o.value[j]))
                elif vo:
                    ops.append(self.proxy(vo.group(2).strip(), self.elems(get(o))[j]))
                elif op in ("load", "store") and getattr(o, "type", "") == "ptr":
                    ptr = self.val(o)
                    size = type_size(ety)
                    aff = ptr.gid_affine and (ptr.gid_affine[0], ptr.gid_affine[1] + j * size, ptr.gid_affine[2])
                    ops.append(self.proxy("ptr", replace(ptr, coff=ptr.coff + j * size, gid_affine=aff)))
                    em.elem_of[ops[-1]] = (o, j * size)
                else:
                    ops.append(o)
            rty = "void" if op == "store" else (ety if op != "icmp" and op != "fcmp" else "i1")
            if op in CASTS:
                rty = ety
            fake = Inst(op, f"{i.name}.{j}", rty, ops, text=i.text, pred=i.pred, elem=ety,
                        callee=re.sub(r"\.v\d+([a-z]+\d*)", r".\1", i.callee), line=i.line)
            em.codegen.inst(fake, p)
            if op != "store":
                out.append(em.vals[fake])
        return None if op == "store" else self.make_vec(out, lazy=chain)

    def bitcast_words(self, v: Val, st: str, dt: str) -> Val:
        """A bitcast between types of equal width whose elements differ in size (i32 <-> <4 x i8>,
        <4 x float> <-> <16 x i8>, i64 <-> <2 x i32>): through the value's 32-bit words in memory
        order, each an i32 lane (8- and 16-bit elements keep don't-care upper bits, as everywhere)."""
        em = self.em
        def layout(ty):
            m = _VEC.fullmatch(ty)
            et, n = (m.group(2).strip(), int(m.group(1))) if m else (ty, 1)
            if et not in ("i8", "i16", "i32", "i64", "float", "double"):
                raise CodegenError(f"bitcast from {st} to {dt} is not supported on the emulator device", em.line)
            return et, n
        (se, sn), (de, dn) = layout(st), layout(dt)
        items = self.elems(v) if _VEC.fullmatch(st) else [v]
        sb, db = 8 * type_size(se), 8 * type_size(de)
        words = []
        if sb == 64:
            for x in items:
                words.append(em.join32(*x.regs))
                words.append(em.join32(*(em.alu("ulsr", r, em.c32(32)) for r in x.regs)))
        elif sb == 32:
            words = [x.regs[0] for x in items]
        else:
            per = 32 // sb
            for w in range(sn // per):
                acc = None
                for j in range(per):
                    e = em.alu("iand", items[w * per + j].regs[0], em.c32((1 << sb) - 1))
                    e = em.alu("ilsl", e, em.c32(j * sb)) if j else e
                    acc = e if acc is None else em.alu("ior", acc, e)
                words.append(acc)
        out = []
        if db == 64:
            for w in range(0, len(words), 2):
                lo, hi = em.split64(words[w], signed=False), em.split64(words[w + 1], signed=False)
                regs = tuple(em.alu("lor", em.alu("llsl", h, em.c32(32)), l) for h, l in zip(hi, lo))
                out.append(Val(self.kind_of(de), regs))
        elif db == 32:
            out = [Val(self.kind_of(de), (w,)) for w in words]
        else:
            for k in range(dn):
                sh = (k * db) % 32
                w = words[k * db // 32]
                out.append(Val("i32", (em.alu("uilsr", w, em.c32(sh)) if sh else w,)))
        return self.make_vec(out) if _VEC.fullmatch(dt) else out[0]

    def kind_of(self, ty: str) -> str:
        em = self.em
        if _VEC.fullmatch(ty) or irtypes.is_aggregate(ty):
            return "vec"
        if ty == "i1":
            return "b"
        if odd_int(ty):
            ty = container_int(ty)
        if ty in ("i8", "i16", "i32"):
            return "i32"
        if ty == "i64":
            return "i64"
        if ty == "float":
            return "f32"
        if ty == "double":
            return "f64"
        if ty == "ptr":
            return "ptr"
        raise CodegenError(f"values of type {ty} are not supported on the emulator device yet", em.line)

    def affine(self, v: Val, x):
        """v's (coef, const, seq) form in the global id, also for a uniform value the sequencer knows."""
        if v.gid_affine is not None:
            return v.gid_affine
        e = self.seq_expr(x)
        return None if e is None else (0, 0, e)

    # values the sequencer knows (uniform loop trip counts) ----------------------------------------
    def seq_expr(self, x):
        """A sequencer expression equal to IR value x in every lane, or None: constants, integer
        scalar arguments (the runtime passes them as %p<k>), counters of sequencer loops, and sums,
        differences and products of these.  Memoised while the sequencer loops' counters stay the
        same: a chain of n adds asked about at each link is otherwise walked n^2 / 2 times."""
        em = self.em
        key = tuple((id(k), v) for k, v in em.seq_ivs.items())
        if key != em.seq_key:
            em.seq_key, em.seq_memo = key, {}
        return self._seq_expr(x)[0]

    def _seq_expr(self, x):
        """(seq_expr(x), whether that answer holds for good: not when it read a pointer not yet
        translated)."""
        em = self.em
        if isinstance(x, Const):
            return (str(x.value) if isinstance(x.value, int) and not isinstance(x.value, bool) else None), True
        if not isinstance(x, Inst):
            return None, True
        if x in em.seq_ivs:
            return em.seq_ivs[x], True
        if x in em.seq_memo:
            return em.seq_memo[x], True
        out, stable = None, True
        if x.op == "load" and x.type in ("i32", "i64", "i16", "i8"):
            ptr = em.vals.get(x.ops[0])
            stable = ptr is not None
            if ptr is not None and ptr.base is not None and ptr.base[0] == "scalar" and ptr.off is None \
                    and not ptr.coff and ptr.base[1] not in em.wide_args:
                em.uses.setdefault("params", set()).add(ptr.base[1])
                out = reg(param(ptr.base[1]))
            elif ptr is not None and ptr.base == ("wg",) and ptr.off is None and ptr.coff == 8 and em.rows is None:
                em.uses["launch"] = True           # wg[1], get_global_size(0): the launch's %gx
                out = reg(LAUNCH[0])
            elif ptr is not None and ptr.base == ("wg",) and ptr.off is None and ptr.coff in (32, 40, 48):
                name = LOCAL_EXTENTS[ptr.coff // 8 - 4]     # wg[4..6], get_local_size(d)
                em.uses.setdefault("extents", set()).add(name)
                out = reg(name)
        elif x.op in ("sext", "zext", "trunc", "freeze") and x.ops[0].type != "i1":
            out, stable = self._seq_expr(x.ops[0])
        elif x.op in ("add", "sub", "mul"):
            (a, sa), (b, sb) = self._seq_expr(x.ops[0]), self._seq_expr(x.ops[1])
            stable = sa and sb
            if a is not None and b is not None:
                out = f"({a} {'+-*'[('add', 'sub', 'mul').index(x.op)]} {b})"
        elif x.op in ("shl", "ashr", "lshr", "sdiv", "udiv") and isinstance(x.ops[1], Const) \
                and type(x.ops[1].value) is int:
            # by a constant: shifts by 0..63, divisions by a positive one (sdiv truncates as the
            # sequencer's / does); lshr and udiv only of a value known not to be negative (the
            # sequencer's registers are signed)
            a, stable = self._seq_expr(x.ops[0])
            c, shift = x.ops[1].value, x.op in ("shl", "ashr", "lshr")
            signed = x.op in ("shl", "ashr", "sdiv") or self.small(x.ops[0])
            if a is not None and signed and (0 <= c <= 63 if shift else c > 0):
                out = f"({a} {dict(shl='<<', ashr='>>', lshr='>>').get(x.op, '/')} {c})"
        if stable:
            em.seq_memo[x] = out
        return out, stable

    _TESTS = {"eq": "==", "ne": "!=", "slt": "<", "sle": "<=", "sgt": ">", "sge": ">=",
              "ult": "<", "ule": "<=", "ugt": ">", "uge": ">="}

    def seq_test(self, x):
        """A sequencer condition equal to IR boolean x in every lane, or None: an icmp of two values
        the sequencer holds as they are (constants, scalar arguments, launch sizes; no arithmetic,
        which the sequencer would not wrap at 32 bits), unsigned only of values known not to be
        negative (the sequencer's registers are signed)."""
        if not (isinstance(x, Inst) and x.op == "icmp" and x.pred in self._TESTS):
            return None
        if x.pred[0] == "u" and not all(self.small(o) for o in x.ops):
            return None
        a, b = (self.seq_expr(o) for o in x.ops)
        if a is None or b is None or not (_PLAIN.fullmatch(a) and _PLAIN.fullmatch(b)):
            return None
        return self.for_the_wave(f"({a} {self._TESTS[x.pred]} {b})")

    # the registers a condition on a wave's lanes may read: the launch's (its scalar arguments,
    # sizes, offset) and the wave counter, which hold while the wave runs; not a loop's counter,
    # which moves on while a predicate made from it lives on after the loop
    _WAVE_CONSTANT = re.compile(r"p\d+|gx|offx|ls[xyz]|items|wx")

    def for_the_wave(self, cond: str):
        """cond, or None when it reads a register that may change during the wave."""
        return cond if all(self._WAVE_CONSTANT.fullmatch(r) for r in seq(cond).regs()) else None

    _SWAPPED = {"slt": "sgt", "sgt": "slt"}      # (LLVM writes x <= n as n > x - 1 or x < n + 1)

    def lane_test(self, x):
        """(a sequencer condition under which IR boolean x holds in every live work-item of the wave,
        one under which it holds in none), or None where the sequencer cannot tell: a uniform test
        (seq_test), or a signed < or > of an i32 value affine in the global id (exact: its range
        within 32 bits) with a value the sequencer holds as it is, by the value's least and
        greatest over the wave's work-items (Bounds.wave_extent; 1-D and "rows" builds)."""
        em = self.em
        t = self.seq_test(x)
        if t is not None:
            return t, f"not {t}"
        if not (isinstance(x, Inst) and x.op == "icmp" and x.pred in self._SWAPPED) or not (em.one_d or em.rows is not None):
            return None
        pred = x.pred
        for a, b in (x.ops, x.ops[::-1]):
            v = self.val(a) if isinstance(a, Inst) else None
            bound = self.seq_expr(b)
            if v is not None and v.kind == "i32" and v.gid_affine and within(v.rng, I32) and bound is not None \
                    and _PLAIN.fullmatch(bound):
                break
            pred = self._SWAPPED[pred]
        else:
            return None
        lo, hi = em.bounds.wave_extent(v.gid_affine)
        on, off = {"slt": (f"{hi} < {bound}", f"{lo} >= {bound}"), "sgt": (f"{lo} > {bound}", f"{hi} <= {bound}")}[pred]
        return (on, off) if self.for_the_wave(f"{on} and {off}") else None

    def small(self, x) -> bool:
        """Whether IR integer x is known to lie in [0, 2^31): a constant, a launch size or offset
        (below MAX_GLOBAL_ID), and casts, right shifts, divisions and masks of such values."""
        if isinstance(x, Const):
            return type(x.value) is int and 0 <= x.value < 1 << 31
        if not isinstance(x, Inst):
            return False
        if x.op == "load":
            ptr = self.em.vals.get(x.ops[0])
            return ptr is not None and ptr.base == ("wg",) and ptr.off is None
        if x.op in ("zext", "sext", "trunc", "freeze"):
            return x.ops[0].type != "i1" and self.small(x.ops[0])
        if x.op in ("lshr", "ashr", "udiv", "sdiv") and isinstance(x.ops[1], Const):
            c = x.ops[1].value
            return type(c) is int and (x.op == "lshr" and x.type == "i32" and c >= 1
                                       or c >= (0 if x.op.endswith("shr") else 1) and self.small(x.ops[0]))
        return x.op == "and" and (self.small(x.ops[0]) or self.small(x.ops[1]))

    def uniform_register(self, x):
        """seq_expr(x) where x's register holds that value in every lane, else None.  A pass
        counter's phi (pass_ivs) does so only in the lanes still in its loop: a lane that left
        keeps its last value, and the other work-item of its long word may still be running."""
        em = self.em
        e = self.seq_expr(x)
        return None if e is None or any(t in re.findall(r"%\w+", e) for t in em.pass_counters) else e

    def int_rng(self, v: Val):
        """An interval holding integer v's true value (an i32 index counts as signed), or None."""
        if v.kind == "i64":
            return v.rng
        return v.rng if within(v.rng, I32) else I32

    def ir_rng(self, x):
        """An interval holding IR integer value x (see int_rng), from its Val or its IR, or None."""
        em = self.em
        if isinstance(x, Const):
            return (x.value, x.value) if isinstance(x.value, int) and not isinstance(x.value, bool) else None
        v = em.vals.get(x)
        if v is not None and v.kind in ("i32", "i64"):
            return self.int_rng(v)
        if getattr(x, "type", None) in ("i32", "i16", "i8"):
            return I32
        if not isinstance(x, Inst) or x.op not in ("sext", "zext", "add", "sub"):
            return None
        if x.op in ("sext", "zext"):
            return (I32 if x.op == "sext" else U32) if x.ops[0].type in ("i32", "i16", "i8") else None
        return rng_add(self.ir_rng(x.ops[0]), self.ir_rng(x.ops[1]), 1 if x.op == "add" else -1)
