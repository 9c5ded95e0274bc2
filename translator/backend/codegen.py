"""Instruction selection: a kernel's SPMD LLVM IR -> SIMD operations on every lane.

Takes the ``Func`` of ``K__wi`` (irread) and gives the control tree of
``ops`` for one wave, plus the prologue that runs once.  How:

* **Values.**  Every IR value becomes a ``Val``: 32-bit kinds (i32, f32, bool)
  are one VReg (two work-items per long word), 64-bit kinds (i64, f64) two
  VRegs (odd, even work-items).  Booleans are 0 / -1 per 32-bit lane.
  Pointers are a provenance (which buffer) plus a 32-bit byte offset.
* **Control flow.**  Every block has a predicate (the lanes that run it); all
  blocks run in one linear order (if-conversion), phis become selects on the
  incoming edges' predicates, stores are masked writes.  A loop runs as
  ``.while any`` on its lanes' mask: lanes leave at their exits, values that
  escape the loop are captured per lane as they leave.  Every loop pays the
  any-reduction up the tree, so even uniform loops are correct without a
  uniformity proof (a uniform loop on the sequencer is a later optimisation).
* **Memory.**  ``p[get_global_id(0)]`` on a 32-bit buffer in a 1-D launch is
  *contiguous*: the wave's share moves DRAM -mvd-> L2BM -l2bmd-> L1BM
  -l1bmd-> PE (stores the reverse, read-modify-write under the lane mask).
  Any other access is a *gather*: the buffer is broadcast chunk by chunk
  (mvb -> l2bmb -> l1bmp) into every PE's LM0 and each lane picks its element
  with a T-indirect read; a store of that kind is a *scatter*: every PE writes
  its lanes into its copy of the chunk, the copies' differences are summed up
  the tree (l1bmr, l2bmr, mvr with integer add) into DRAM.  Nothing is copied
  by the host.
"""
from __future__ import annotations

import re
import struct
from dataclasses import dataclass, replace

from . import irtypes
from .abi import ARG_LONGS, PARAM_SLOT, SHAPE, SHAPE_SLOT, WG_SLOT, wide_arg_slots
from .irread import _VEC, Arg, Const, Func, Inst, Unsupported, parse_const
from .layout import Layout
from . import idforms
from .nans import NanFixups, callee_base, no_nans
from .ops import Call, IfAnyLane, MaskReg, MV, Op, SeqIf, SeqLoop, SeqSet, VReg, WhileAny, drop_ops

TW, TR = (("w", "t", 0, 1),), (("r", "t", 0, 1),)     # the T register, for ordering

KINDS = {"i32": 1, "f32": 1, "b": 1, "i64": 2, "f64": 2, "i16": 1, "i8": 1}


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


class CodegenError(Exception):
    def __init__(self, msg, line=0):
        super().__init__(msg)
        self.line = line


class MixedPointer(Exception):
    """A pointer register living across a loop (a header phi, a capture) is given a pointer into
    another buffer than it was made for (`p = c ? a : b` carried around a loop, LLVM's load of a
    phi of `&sums[g]` and `&local_carry`): codegen starts again with the buffers of the IR value
    `name` known, so its register is one offset per buffer and the bools choosing among them
    (Codegen.persistent, set_multi_ptr)."""
    def __init__(self, name: str, bases: list, line=0):
        super().__init__(name)
        self.name, self.bases, self.line = name, bases, line

    def learn(self, known: dict) -> dict:
        """known (IR value name -> bases) with these bases added; a CodegenError if nothing is new."""
        old = known.get(self.name, [])
        new = list(dict.fromkeys(old + self.bases))
        if new == old:
            raise CodegenError("a pointer into one of several buffers is not supported here", self.line)
        return {**known, self.name: new}


def _is_pow2(n):
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


def rng_add(a, b, sign=1):
    if a is None or b is None:
        return None
    return (a[0] + b[0], a[1] + b[1]) if sign > 0 else (a[0] - b[1], a[1] - b[0])


def rng_scale(a, c: int):
    return None if a is None else (min(a[0] * c, a[1] * c), max(a[0] * c, a[1] * c))


class Codegen(NanFixups):
    def __init__(self, func: Func, layout: Layout, params, one_d: bool, chunk_longs: int, replicate: bool = True,
                 resident=(), ptr_bases=None):
        self.f = func
        self.ptr_bases = ptr_bases or {}  # IR value name -> the buffers its pointer register holds (MixedPointer)
        self.lay = layout
        self.params = params              # ParamInfo tuple
        self.one_d = one_d
        self.replicate = replicate        # read-only buffers may be replicated for offset loads
        self.CH = chunk_longs
        self.items: list = []             # the wave body being built
        self.prologue: list = []
        self.epilogue: list = []          # after the wave loops
        self.vals: dict = {}
        self.consts: dict = {}            # (bits64) -> VReg, materialised in the prologue
        self.tags = 0
        self.lc_next = 0                  # L2BM allocation (long words)
        self.lb_next = 0                  # L1BM allocation
        self.uses = {}                    # what the runtime must provide ("rows", "bases")
        self.line = 0
        self.flops = 0
        self.fast_cache = {}              # buffer -> (register, staging) of its contiguous load this wave
        self.oob = None                   # (site code, byte offset) registers of bounds checks
        self.oob_high = None              # the high word of a 64-bit index or offset out of bounds
        self.pending_checks = []          # (sequencer condition, per-lane check ops) not yet emitted
        self.batch = None                 # (buffer, stores, items, claims) scattered stores not yet emitted (scatter)
        self.elem_of = {}                 # a vector access's element pointer -> (its IR pointer, byte offset)
        self.colliding = set()            # buffers with a store two lanes may make to one element (may_collide)
        self.batched = False              # a batch of more than one store was emitted
        self.elected = {}                 # predicate -> its elected lane, in the block being emitted (elect)
        self.checked = {}                 # (buffer, affine form, size, predicate) -> in-bounds bool
        self.oob_sites = []               # site code - 1 -> (C line, parameter, element size)
        self.remarks = {}                 # (C line, what) -> why an access moves a whole buffer (remark)
        self.site_line = None             # the C line(s) an out-of-bounds report names, when not self.line
        self.stored = False               # a store has been emitted in the wave body
        self.unsure_waits = []            # settle_stores' waits for a loop's later store (drop_unissued_waits)
        self._invariant = {}              # Inst -> bool (wave_invariant)
        self.small_quotients = {}         # quotient register -> the sequencer test of its fp32 path
        self.seq_regs = 0                 # sequencer registers made so far (seq_reg)
        self.hoisted = []                 # (MV, its wait and moves to the PEs) of loads that start the wave
        self.prefetchable = []            # ... the MVs of those of read-only buffers (prefetch.py)
        self.own_share_loads = []         # ... of buffers it writes (prefetch.py, if it only stores p[gid])
        self.scatters = False             # a buffer parameter is stored to other than at p[gid]
        self.wide_args = wide_arg_slots(params)   # by-value arguments wider than 8 bytes -> their slots
        self._wide = {}                   # (slot, byte, type) -> Val of an element of one
        self.lm_top = layout.lm_words     # LM0 words above this hold uniform-load tables (uniform_table)
        self.resident = dict.fromkeys(resident)   # buffer -> LM0 word of its resident copy (resident_copies)
        self.res_written = set()                  # resident buffers the kernel stores to (write_back)
        self.reached = {}                 # buffer -> how its accesses reach it ("gather", "other"), in a loop
        self.has_barrier = False
        self.cur = None                   # the instruction being translated
        self.settled = set()              # ids of lazy Vals settled in the block being emitted (nans.py)

    # ------------------------------------------------------------------ emission helpers
    def op(self, text, unit="alu", dsts=(), srcs=(), mdst=(), msrc=(), partial=False, mem=()):
        o = Op(text, unit, tuple(dsts), tuple(srcs), tuple(mdst), tuple(msrc), tuple(mem), self.line, partial)
        self.items.append(o)
        return o

    def new(self, hint=""):
        return VReg(hint)

    def const64(self, bits: int) -> VReg:
        """A register holding a 64-bit pattern in every long word (made once, in the prologue)."""
        bits &= (1 << 64) - 1
        r = self.consts.get(bits)
        if r is None:
            r = VReg(f"c{bits:x}")
            self.consts[bits] = r
            self.prologue.append(Op(f"limm 0x{bits:016x} {{d0}}", "alu", (r,), ()))
        return r

    def c32(self, v: int) -> VReg:
        v &= 0xFFFFFFFF
        return self.const64(v << 32 | v)

    def _alloc(self, attr, n, memory, size):
        a = getattr(self, attr)
        setattr(self, attr, a + n)
        if a + n > size:
            raise CodegenError(f"the kernel's transfers need {a + n} long words of {memory}; the machine has "
                               f"{size}", self.line)
        return a

    def alloc_lc(self, n):
        return self._alloc("lc_next", n, "L2BM", self.lay.l2bm_longs)

    def alloc_lb(self, n):
        return self._alloc("lb_next", n, "L1BM", self.lay.l1bm_longs)

    def shared_area(self, key, lc: int, lb: int):
        """L2BM/L1BM staging reused by every transfer of one kind: each completes before the next
        starts (the scheduler orders their steps by the addresses they touch)."""
        areas = self.__dict__.setdefault("_areas", {})
        if key not in areas:
            areas[key] = (self.alloc_lc(lc) if lc else None, self.alloc_lb(lb) if lb else None)
        return areas[key]

    STORE_TAG = 251                       # contiguous stores, waited for lazily (see fast_store)

    def seq_reg(self, prefix: str) -> str:
        """A fresh sequencer register for a loop the backend makes (numbered, so -S output is the
        same from one compile to the next)."""
        self.seq_regs += 1
        return f"%{prefix}{self.seq_regs}"

    def tag(self):
        self.tags += 1
        if self.tags > 240:                # 250 and up are fixed tags
            self.tags = 1
        return self.tags

    def settle_stores(self, whole_buffer=False):
        """Wait for a contiguous store still in flight (before anything that may read its data).

        A store is in flight after one earlier in the body, but also where none precedes this
        point: in a loop that stores, the previous pass's (`y[i] += ...` in a loop over j), and,
        for a transfer of a whole buffer (whole_buffer: a gather or scatter), the previous wave's,
        which a wave's own share (fast_load) never meets.  Those waits are kept only if the
        kernel has a contiguous store (fast_store) by the end (drop_unissued_waits)."""
        if "store" in self.__dict__.get("_areas", {}):
            self.op(f"wait i{self.STORE_TAG}", "wait")
        elif whole_buffer and self.loop_stack and not any(ctx["stores"] for ctx in self.loop_stack):
            self.loop_stack[0]["settle_before"] = True        # once, before the outermost loop
        elif whole_buffer or any(ctx["stores"] for ctx in self.loop_stack):
            self.op(f"wait i{self.STORE_TAG}", "wait")
            self.unsure_waits.append(self.items[-1])

    def drop_unissued_waits(self):
        """Remove settle_stores' loop waits when the kernel made no contiguous store: their tag is
        never issued (the emulator faults on such a wait)."""
        if self.unsure_waits and "store" not in self.__dict__.get("_areas", {}):
            drop_ops(self.items, {id(o) for o in self.unsure_waits})
        self.unsure_waits = []

    def stores_to_buffers(self, blocks) -> bool:
        """Whether any of these IR blocks may store through a pointer into a buffer parameter."""
        return any(self.store_dst(i) is not None and not isinstance(self.param_root(self.store_dst(i)), str)
                   for n in blocks for i in self.bmap[n].insts)

    # basic lane operations ---------------------------------------------------------------
    def alu(self, mn, *srcs, dst=None, hint=""):
        d = dst or self.new(hint)
        fields = " ".join(f"{{s{i}}}" for i in range(len(srcs)))
        self.op(f"{mn} {fields} {{d0}}", "alu", (d,), srcs)
        return d

    def mau(self, mn, *srcs, neg=(), dst=None):
        d = dst or self.new()
        fields = " ".join(("-" if i in neg else "") + f"{{s{i}}}" for i in range(len(srcs)))
        self.op(f"{mn} {fields} {{d0}}", "mau", (d,), srcs)
        return d

    def flags(self, mn, *srcs) -> MaskReg:
        """An ALU instruction whose only output is its flags, in a fresh mask entry."""
        k = MaskReg()
        fields = " ".join(f"{{s{i}}}" for i in range(len(srcs)))
        self.op(f"{mn} {fields} {{K0}}", "alu", (), srcs, mdst=(k,))
        return k

    def masked_copy(self, src, dst, k: MaskReg, prec="l"):
        self.op(f"{prec}passa {{s0}} {{d0}}/{{k0}}", "alu", (dst,), (src, dst), msrc=(k,), partial=True)

    def copy(self, src, dst=None):
        d = dst or self.new()
        self.op("lpassa {s0} {d0}", "alu", (d,), (src,))
        return d

    def bool_from_mask(self, k: MaskReg, invert=False) -> VReg:
        d = self.new("b")
        ones, zero = self.c32(-1), self.c32(0)
        self.copy(zero if not invert else ones, d)
        self.masked_copy(ones if not invert else zero, d, k)
        return d

    def mask_of(self, b: VReg) -> MaskReg:
        """Mask entry set for the 32-bit lanes where bool b is true (-1)."""
        return self.flags("inot", b)

    def select32(self, c: VReg, a: VReg, b: VReg) -> VReg:
        d = self.copy(b)
        self.masked_copy(a, d, self.mask_of(c))
        return d

    def widen_bool(self, c: VReg):
        """A 32-bit-lane bool -> (odd, even) long-word bools for 64-bit selects."""
        c32 = self.c32(32)
        hi = self.alu("llsr", c, c32)
        lo = self.alu("llsr", self.alu("llsl", c, c32), c32)
        return hi, lo

    def select(self, c: VReg, a: Val, b: Val) -> Val:
        if a.kind == "vec":
            return self.make_vec([self.select(c, x, y) for x, y in zip(self.elems(a), self.elems(b))])
        if a.kind == "ptr":
            if a.base != b.base or a.base[0] == "either":           # see on_either
                return Val("ptr", base=("either", c, a, b))
            ia, ib = self.index_form(a), self.index_form(b)
            if ia and ib and ia[1] == ib[1]:       # p[x] or p[y]: p[c ? x : y], still an index
                x, n = self.select32(c, ia[0], ib[0]), ia[1]
                r = (min(ia[2][0], ib[2][0]), max(ia[2][1], ib[2][1]))
                wide = self.select(c, Val("i64", self.idx_wide(ia)), Val("i64", self.idx_wide(ib)))
                off = self.mul_const(Val("i32", (x,)), n, False, None).regs[0]
                return Val("ptr", base=a.base, off=Val("i32", (off,)), idx=(x, n, r, wide, self.near_start(x, r)))
            ao, bo = self.carried_off(a), self.carried_off(b)
            return Val("ptr", base=a.base, off=Val("i32", (self.select32(c, ao, bo),)))
        if len(a.regs) == 1:
            return Val(a.kind, (self.select32(c, a.regs[0], b.regs[0]),))
        hi, lo = self.widen_bool(c)
        out = []
        for cc, x, y in ((hi, a.regs[0], b.regs[0]), (lo, a.regs[1], b.regs[1])):
            d = self.copy(y)
            self.masked_copy(x, d, self.flags("lnot", cc))
            out.append(d)
        return Val(a.kind, tuple(out))

    def b_and(self, a, b):
        return self.alu("iand", a, b)

    def b_or(self, a, b):
        return self.alu("ior", a, b)

    def b_not(self, a):
        return self.alu("inot", a)

    # 32 <-> 64 bit lanes -------------------------------------------------------------------
    def split64(self, x: VReg, signed=True):
        """i32 lanes -> (odd, even) 64-bit values."""
        c32 = self.c32(32)
        sh = "llsr" if signed else "ulsr"
        hi = self.alu(sh, x, c32)
        lo = self.alu(sh, self.alu("llsl", x, c32), c32)
        return hi, lo

    def join32(self, hi: VReg, lo: VReg) -> VReg:
        """(odd, even) 64-bit values -> their low 32 bits as i32 lanes."""
        a = self.alu("llsl", hi, self.c32(32))
        b = self.alu("land", lo, self.const64(0xFFFFFFFF))
        return self.alu("lor", a, b)

    SMALL = {"i8": 8, "i16": 16}

    def norm_small(self, v: Val, ty: str, signed: bool) -> Val:
        """An i8/i16 value (kept in a 32-bit lane whose upper bits are don't-care) extended to 32 bits."""
        bits, r = self.SMALL[ty], v.regs[0]
        if signed:
            r = self.alu("ilsr", self.alu("ilsl", r, self.c32(32 - bits)), self.c32(32 - bits))
        else:
            r = self.alu("iand", r, self.c32((1 << bits) - 1))
        return Val("i32", (r,))

    def narrow(self, v: Val) -> VReg:
        if v.kind in ("i32", "b", "f32"):
            return v.regs[0]
        if v.narrow is not None:
            return v.narrow
        if v.regs[0] is v.regs[1]:           # a uniform 64-bit value: both halves equal
            return self.join32(v.regs[0], v.regs[0])
        return self.join32(*v.regs)

    def wide(self, v: Val, signed=True) -> tuple:
        if len(v.regs) == 2:
            return v.regs
        return self.split64(v.regs[0], signed)

    # ------------------------------------------------------------------ values
    def val(self, x) -> Val:
        """The value of IR operand x, with IEEE NaNs (a lazy float is settled, see nans.py)."""
        return self.settle(self.raw(x))

    def raw(self, x) -> Val:
        """The value of IR operand x as it is: a lazy float may hold +-inf for NaN (nans.py)."""
        if isinstance(x, Const):
            return self.const_val(x)
        if isinstance(x, (Inst, Arg)):
            v = self.vals.get(x)
            if v is None:
                raise CodegenError(f"internal: value used before its definition: {getattr(x, 'text', x)}", self.line)
            return v
        if isinstance(x, tuple) and x[0] == "global":      # program-scope __constant data, in DRAM
            names = self.uses.setdefault("constants", [])
            if x[1] not in names:
                names.append(x[1])
            return Val("ptr", base=("global", f"G{names.index(x[1])}"))
        raise CodegenError(f"unsupported operand {x!r}", self.line)

    def const_val(self, c: Const) -> Val:
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
            r = self.c32(-1 if v else 0)
            return Val("b", (r,), const=v)
        if ty in ("i8", "i16", "i32"):
            return Val("i32", (self.c32(v),), const=v, gid_affine=(0, v, None), rng=(v, v))
        if ty == "i64":
            r = self.const64(v)
            return Val("i64", (r, r), narrow=self.c32(v), const=v, gid_affine=(0, v, None), rng=(v, v))
        if ty == "float":
            bits = struct.unpack("<I", struct.pack("<f", v))[0]
            return Val("f32", (self.c32(bits),), const=v)
        if ty == "double":
            bits = struct.unpack("<Q", struct.pack("<d", v))[0]
            r = self.const64(bits)
            return Val("f64", (r, r), const=v)
        if ty == "ptr":
            return Val("ptr", base=("null",))
        raise CodegenError(f"constant of type {ty} is not supported on the emulator device", self.line)

    # vectors: one Val per element, side by side ------------------------------------------------
    def make_vec(self, vals) -> Val:
        vals = [self.settle(x) for x in vals]       # a vector's elements are exact
        return Val("vec", tuple(r for x in vals for r in x.regs), parts=tuple(x.kind for x in vals))

    def elems(self, v: Val) -> list:
        out, k = [], 0
        for kind in v.parts:
            n = KINDS[kind]
            out.append(Val(kind, v.regs[k:k + n]))
            k += n
        return out

    def proxy(self, ty: str, v: Val) -> Arg:
        """A stand-in IR operand of type ty whose value is v (to translate vector ops element by element)."""
        a = Arg("elt", ty)
        self.vals[a] = v
        return a

    # aggregates (structs, arrays as values): the flat vec of their scalar leaves --------------------
    def leaves(self, ty: str) -> tuple:
        out = irtypes.leaves(ty)
        for lt, _ in out:
            if lt == "ptr" or lt not in ("i1", "i8", "i16", "i32", "i64", "float", "double"):
                raise CodegenError(f"a struct or array value with a field of type {lt} is not supported on the "
                                   f"emulator device", self.line)
        return out

    def aggregate_inst(self, i: Inst, p: VReg):
        """extractvalue / insertvalue (indices at the end of the text), and loads and stores of a
        whole aggregate, one per scalar leaf at LLVM's offset of it."""
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
                    self.inst(ld, p)
                    out.append(self.vals[ld])
                else:
                    self.inst(Inst("store", "", "void", [self.proxy(lt, src[k]), at], line=i.line), p)
            return self.make_vec(out) if src is None else None
        m = re.search(r"((?:,\s*\d+)+)\s*$", i.text)
        if not m:
            raise CodegenError(f"'{i.op}' indices not understood: '{i.text}'", self.line)
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
        op = i.op
        vec_of = lambda o: _VEC.fullmatch(getattr(o, "type", "") or "")
        if op == "extractelement":
            items, idx = self.elems(self.val(i.ops[0])), self.val(i.ops[1])
            if idx.const is not None:
                return items[idx.const]
            out = items[0]
            for j, e in enumerate(items[1:], 1):
                out = self.select(self.icmp("eq", Val("i32", (self.narrow(idx),)), self.const_val(Const("i32", j))),
                                  e, out)
            return out
        if op == "insertelement":
            items, x, idx = self.elems(self.val(i.ops[0])), self.val(i.ops[1]), self.val(i.ops[2])
            if idx.const is not None:
                items[idx.const] = x
            else:
                n32 = Val("i32", (self.narrow(idx),))
                items = [self.select(self.icmp("eq", n32, self.const_val(Const("i32", j))), x, e)
                         for j, e in enumerate(items)]
            return self.make_vec(items)
        if op == "shufflevector":
            both = self.elems(self.val(i.ops[0])) + self.elems(self.val(i.ops[1]))
            m = re.search(r"<\d+ x i32> (zeroinitializer|poison|undef|<[^>]*>)\s*$", i.text)
            if not m:
                raise CodegenError(f"shufflevector mask not understood: '{i.text}'", self.line)
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
        for j in range(n):
            ops = []
            for o in i.ops:
                vo = vec_of(o) if isinstance(o, (Inst, Arg, Const)) else None
                if vo and isinstance(o, Const):
                    ops.append(Const(vo.group(2).strip(), o.value[j]))
                elif vo:
                    ops.append(self.proxy(vo.group(2).strip(), self.elems(self.val(o))[j]))
                elif op in ("load", "store") and getattr(o, "type", "") == "ptr":
                    ptr = self.val(o)
                    size = type_size(ety)
                    aff = ptr.gid_affine and (ptr.gid_affine[0], ptr.gid_affine[1] + j * size, ptr.gid_affine[2])
                    ops.append(self.proxy("ptr", replace(ptr, coff=ptr.coff + j * size, gid_affine=aff)))
                    self.elem_of[ops[-1]] = (o, j * size)
                else:
                    ops.append(o)
            rty = "void" if op == "store" else (ety if op != "icmp" and op != "fcmp" else "i1")
            if op in self.CASTS:
                rty = ety
            fake = Inst(op, f"{i.name}.{j}", rty, ops, text=i.text, pred=i.pred, elem=ety,
                        callee=re.sub(r"\.v\d+([a-z]+\d*)", r".\1", i.callee), line=i.line)
            self.inst(fake, p)
            if op != "store":
                out.append(self.vals[fake])
        return None if op == "store" else self.make_vec(out)

    def bitcast_words(self, v: Val, st: str, dt: str) -> Val:
        """A bitcast between types of equal width whose elements differ in size (i32 <-> <4 x i8>,
        <4 x float> <-> <16 x i8>, i64 <-> <2 x i32>): through the value's 32-bit words in memory
        order, each an i32 lane (8- and 16-bit elements keep don't-care upper bits, as everywhere)."""
        def layout(ty):
            m = _VEC.fullmatch(ty)
            et, n = (m.group(2).strip(), int(m.group(1))) if m else (ty, 1)
            if et not in ("i8", "i16", "i32", "i64", "float", "double"):
                raise CodegenError(f"bitcast from {st} to {dt} is not supported on the emulator device", self.line)
            return et, n
        (se, sn), (de, dn) = layout(st), layout(dt)
        items = self.elems(v) if _VEC.fullmatch(st) else [v]
        sb, db = 8 * type_size(se), 8 * type_size(de)
        words = []
        if sb == 64:
            for x in items:
                words.append(self.join32(*x.regs))
                words.append(self.join32(*(self.alu("ulsr", r, self.c32(32)) for r in x.regs)))
        elif sb == 32:
            words = [x.regs[0] for x in items]
        else:
            per = 32 // sb
            for w in range(sn // per):
                acc = None
                for j in range(per):
                    e = self.alu("iand", items[w * per + j].regs[0], self.c32((1 << sb) - 1))
                    e = self.alu("ilsl", e, self.c32(j * sb)) if j else e
                    acc = e if acc is None else self.alu("ior", acc, e)
                words.append(acc)
        out = []
        if db == 64:
            for w in range(0, len(words), 2):
                lo, hi = self.split64(words[w], signed=False), self.split64(words[w + 1], signed=False)
                regs = tuple(self.alu("lor", self.alu("llsl", h, self.c32(32)), l) for h, l in zip(hi, lo))
                out.append(Val(self.kind_of(de), regs))
        elif db == 32:
            out = [Val(self.kind_of(de), (w,)) for w in words]
        else:
            for k in range(dn):
                sh = (k * db) % 32
                w = words[k * db // 32]
                out.append(Val("i32", (self.alu("uilsr", w, self.c32(sh)) if sh else w,)))
        return self.make_vec(out) if _VEC.fullmatch(dt) else out[0]

    def kind_of(self, ty: str) -> str:
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
        raise CodegenError(f"values of type {ty} are not supported on the emulator device yet", self.line)

    def ptr_off(self, p: Val) -> VReg:
        """A pointer's byte offset as i32 lanes (coff folded in)."""
        if p.base and p.base[0] == "either":
            raise CodegenError("a pointer into one of two buffers can be loaded from, stored to and indexed, "
                               "not compared or converted to an integer", self.line)
        if p.off is None:
            return self.c32(p.coff)
        if p.idx is not None and p.coff and p.coff % p.idx[1] == 0:
            x, n = p.idx[:2]           # (x + c / n) * n: x + c / n is what check_bounds compares
            r = self.alu("iadd", x, self.c32(p.coff // n))
            return self.mul_const(Val("i32", (r,)), n, False, None).regs[0]
        r = p.off.regs[0]
        if p.coff:
            r = self.alu("iadd", r, self.c32(p.coff))
        return r

    # ------------------------------------------------------------------ the prologue
    def arg_word(self, slot):
        return 2 * slot                      # LM1 word address of argument block long word `slot`

    def argval(self, slot, hint="") -> VReg:
        r = VReg(hint)
        self.prologue.append(Op(f"lpassa $ln{self.arg_word(slot)} {{d0}}", "alu", (r,), (),
                                mem=(("r", "n", self.arg_word(slot), self.arg_word(slot) + 2),)))
        return r

    def wide_arg(self, slot, byte, ty) -> Val:
        """Element `ty` at `byte` of argument-block long word `slot` (of a by-value vector or struct;
        see wide_arg_slots), in both 32-bit halves; extracted once, in the prologue."""
        key = (slot, byte, ty)
        if key not in self._wide:
            saved, self.items = self.items, []
            r = self.argval(slot, f"arg{slot}")
            if type_size(ty) < 8:
                x = self.alu("ulsr", r, self.c32(8 * byte)) if byte else r
                r = self.alu("lor", self.alu("llsl", x, self.c32(32)), self.alu("land", x, self.const64(0xFFFFFFFF)))
            self.prologue += self.items
            self.items = saved
            k = self.kind_of(ty)
            self._wide[key] = Val(k, (r,) if KINDS[k] == 1 else (r, r))
        return self._wide[key]

    def build_prologue(self):
        """Broadcast the argument block to every PE (LM1 words 0..127), compute each slot's work-item."""
        lay = self.lay
        pro = []
        lc = self.alloc_lc(ARG_LONGS)
        lb = self.alloc_lb(ARG_LONGS)
        pro.append(MV(f"mvb/n{ARG_LONGS}i250 $d0@0 $lc{lc}", "%argblk"))
        pro.append(Op("wait i250", "wait"))
        pro.append(Op(f"l2bmb $lc{lc} $lb{lb}", "l2bm", mem=(("r", "lc", lc, lc + 64), ("w", "lb", lb, lb + 64))))
        for u in range(ARG_LONGS // 8):
            pro.append(Op(f"l1bmp $llb{lb + 8 * u} $lln{16 * u}v", "l1bm",
                          mem=(("r", "lb", lb + 8 * u, lb + 8 * u + 8), ("w", "n", 16 * u, 16 * u + 16))))
        self.prologue[:0] = pro
        # the slot's work-item offset within the wave (layout.item_of_slot)
        saved, self.items = self.items, []
        cyc = self.cycle = self.new("cycle")
        self.op("zero {d0}", "alu", (cyc,))
        for c in (1, 2, 3):
            self.op(f"imm {c} {{d0}}/{'0000'[:c] + '1' + '0000'[c + 1:]}", "alu", (cyc,), (cyc,), partial=True)
        P, N = lay.pe_l1b, lay.l1b
        x = self.new("peid")
        self.op("ipassa $peid {d0}", "alu", (x,))
        i = self.new("l1bid")
        self.op("ipassa $l1bid {d0}", "alu", (i,))
        l2 = self.new("l2bid")
        self.op("ipassa $l2bid {d0}", "alu", (l2,))
        r = self.alu("iadd", self.alu("ilsl", cyc, self.c32(P.bit_length() - 1)), x)
        q = self.alu("ilsl", self.alu("ilsr", r, self.c32(3)), self.c32((8 * N).bit_length() - 1))
        q = self.alu("iadd", q, self.alu("ilsl", i, self.c32(3)))
        q = self.alu("iadd", q, self.alu("iand", r, self.c32(7)))
        q = self.alu("iadd", q, self.alu("ilsl", l2, self.c32((4 * N * P // lay.narrow).bit_length() - 1)))
        s = self.slot = self.alu("iadd", self.alu("ilsl", q, self.c32(1)), self.const64(1 << 32), hint="slot")
        sh = {k: self.argval(SHAPE_SLOT + j, k) for j, k in enumerate(SHAPE)}
        self.shape = sh
        if self.one_d:                    # a 1-D launch's wave spans the machine (narrowed): the slot is x
            self.sx, self.sy, self.sz = s, self.c32(0), self.c32(0)
            # in a narrowed wave, slots past the long words the chain fills hold no work-item
            self.in_wave = None if lay.narrow == 1 else \
                self.bool_from_mask(self.flags("uimin", r, self.c32(lay.l1bm_used - 1)))
        else:
            self.sz = self.div_exact(s, sh["rwxy"])
            rest = self.alu("isub", s, self.mul32(self.sz, sh["wxy"]))
            self.sy = self.div_exact(rest, sh["rwx"])
            self.sx = self.alu("isub", rest, self.mul32(self.sy, sh["wx"]))
            self.in_wave = self.bool_from_mask(self.flags("uimax", sh["wz"], self.alu("iinc", self.sz)))
        self.X0, self.Y0, self.Z0 = (self.new(n) for n in ("X0", "Y0", "Z0"))
        for z in (self.X0, self.Y0, self.Z0):
            self.op("zero {d0}", "alu", (z,))
        self.prologue += self.items
        self.items = saved

    def wave_ids(self):
        """At the top of each wave: this lane's global position per dimension and whether it is live."""
        sh = self.shape
        self.pos = []
        act = None
        for d, (s, o, g) in enumerate(((self.sx, self.X0, "gx"), (self.sy, self.Y0, "gy"), (self.sz, self.Z0, "gz"))):
            p = self.alu("iadd", o, s, hint=f"pos{d}")
            self.pos.append(p)
            if self.one_d and d:           # a 1-D launch: y and z are 0 in every lane of a full wave
                continue
            ok = self.bool_from_mask(self.flags("uimax", sh[g], self.alu("iinc", p)))   # gx >= p + 1
            act = ok if act is None else self.b_and(act, ok)
        self.active = act if self.in_wave is None else self.b_and(act, self.in_wave)
        self._ids_cache = {}

    def ids_value(self, k: int) -> Val:
        """ids[k]: local ids (0..2), global ids (3..5), as 64-bit values with an exact 32-bit facet."""
        if k in self._ids_cache:
            return self._ids_cache[k]
        sh = self.shape
        d = k % 3
        if k >= 3:
            n = self.alu("iadd", self.pos[d], sh[("offx", "offy", "offz")[d]])
            aff = (1, 0, None) if d == 0 else None
        else:
            q = self.group_index(d)
            n = self.alu("isub", self.pos[d], self.mul_general(Val("i32", (q,)), Val("i32", (sh[("lsx", "lsy", "lsz")[d]],)), False).regs[0])
            aff = None
        hi, lo = self.split64(n, signed=False)
        v = Val("i64", (hi, lo), narrow=n, gid_affine=aff, rng=(0, MAX_GLOBAL_ID - 1))
        self._ids_cache[k] = v
        return v

    def div_exact(self, x: VReg, rcp: VReg, half_rcp: VReg = None) -> VReg:
        """x / n for non-negative 32-bit x and a launch constant n given as rcp = fp64 1/n (and
        half_rcp = 1/(2n) where it is at hand): trunc(x * (1/n) + 1/(2n)) is exact (x < 2^31, so
        the product's error is far below the 1/(2n) margin to the next integer)."""
        half_rcp = half_rcp or self.fmul64(self.const64(0x3FE0000000000000), rcp)
        out = []
        for r in self.split64(x, signed=False):
            out.append(self.alu("udftoi", self.fmul64(self.alu("uditof", r), rcp, add=half_rcp)))
        return self.join32(*out)

    def mul_exact32(self, a: VReg, b: VReg, signed=True) -> VReg:
        """a * b of i32 lanes whose true product is known to stay below 2^53 (a quotient times
        its divisor): one exact fp64 product per 64-bit lane instead of mul_general's two."""
        conv, back = ("ditof", "dftoi") if signed else ("uditof", "udftoi")
        out = [self.alu(back, self.fmul64(self.alu(conv, x), self.alu(conv, y)))
               for x, y in zip(self.split64(a, signed), self.split64(b, signed))]
        return self.join32(*out)

    @staticmethod
    def guarded_divisor(d):
        """n when d is the front end's divide-by-zero guard (bad ? 1 : n), else None."""
        if isinstance(d, Inst) and d.op == "select" and isinstance(d.ops[1], Const) and d.ops[1].value == 1:
            return d.ops[2]
        return None

    def quotient_by(self, q, n) -> bool:
        """q is an i32 division by n (or by the guard (bad ? 1 : n)), so |q * n| <= |x|."""
        if not (isinstance(q, Inst) and q.op in ("sdiv", "udiv") and q.type == "i32"):
            return False
        return q.ops[1] is n or self.guarded_divisor(q.ops[1]) is n

    def mul32(self, a: VReg, b: VReg) -> VReg:
        return self.mul_general(Val("i32", (a,)), Val("i32", (b,)), False).regs[0]

    def group_index(self, d: int) -> VReg:
        """pos / ls in dimension d, for any local size."""
        key = ("group", d)
        if key not in self._ids_cache:
            self._ids_cache[key] = self.div_exact(self.pos[d], self.shape[("rlsx", "rlsy", "rlsz")[d]])
        return self._ids_cache[key]

    def local_base(self) -> VReg:
        """Byte offset of this lane's work-group block in the local scratch buffer: the group's
        index within the wave (the wave holds whole groups when the kernel uses __local) * lbytes."""
        if not hasattr(self, "_local_base"):
            saved, self.items = self.items, []
            sh = self.shape
            g = [self.div_exact(s_, sh[r]) for s_, r in ((self.sx, "rlsx"), (self.sy, "rlsy"), (self.sz, "rlsz"))]
            lin = self.alu("iadd", g[0], self.mul32(sh["kx"], self.alu("iadd", g[1], self.mul32(sh["ky"], g[2]))))
            self._local_base = self.mul32(lin, sh["lbytes"])
            self.prologue += self.items
            self.items = saved
        return self._local_base

    def group_id(self, d: int) -> Val:
        n = self.group_index(d)
        hi, lo = self.split64(n, signed=False)
        return Val("i64", (hi, lo), narrow=n, rng=(0, MAX_GLOBAL_ID - 1))

    # ------------------------------------------------------------------ control flow
    def successors(self, b):
        t = b.insts[-1]
        if t.op == "br":
            labels = [o for o in t.ops if isinstance(o, str)]
            return labels[::-1] if len(labels) == 2 else labels    # llvmlite lists false, true
        if t.op == "switch":
            return [o for o in t.ops if isinstance(o, str)]
        return []

    def translate(self):
        """Prologue and wave body for the whole function."""
        self.build_prologue()
        self.items = []
        self.wave_ids()
        f = self.f
        self.bmap = {b.name: b for b in f.blocks}
        self.succ = {b.name: self.successors(b) for b in f.blocks}
        self.escapes = {}
        for a, base in zip(f.args, (("args",), ("wg",), ("ids",))):
            self.vals[a] = Val("ptr", base=base)
        # depth-first search: reverse postorder and back edges
        order, seen, onstack, back = [], set(), set(), set()

        def dfs(n):
            seen.add(n)
            onstack.add(n)
            for s in self.succ[n]:
                if s in onstack:
                    back.add((n, s))
                elif s not in seen:
                    dfs(s)
            onstack.discard(n)
            order.append(n)
        dfs(f.blocks[0].name)
        self.rpo = order[::-1]
        self.back = back
        preds = {n: [] for n in self.rpo}
        for n in self.rpo:
            for s in self.succ[n]:
                preds[s].append(n)
        self.preds = preds
        self.loops = {}
        for latch, h in back:
            body, work = {h, latch}, ([latch] if latch != h else [])
            while work:
                n = work.pop()
                for p in preds[n]:
                    if p not in body:
                        body.add(p)
                        work.append(p)
            self.loops.setdefault(h, set()).update(body)
        users = {}
        for b in f.blocks:
            for i in b.insts:
                for o in i.ops:
                    if isinstance(o, Inst):
                        users.setdefault(o, []).append(i)
        self.users = users
        self.pred = {}
        self.acc = {}
        self.edge = {}
        self.loop_stack = []
        self.seq_ivs = {}                 # counter phi of a sequencer loop -> its sequencer expression
        self.pass_counters = set()        # pass counters of loops run until no lane is left (pass_ivs)
        self.resident_copies()
        self.emit_region([n for n in self.rpo], None)
        self.write_back()
        self.drop_unissued_waits()
        if self.oob is not None:          # after the last wave
            saved, self.items = self.items, []
            self.report_bounds()
            self.epilogue, self.items = self.items, saved
        # the transfers of the wave's first loads start together at the top of the wave
        # (waits first: a wait orders every op after it, so the moves can then mix with the compute)
        ops = [o for _, ops in self.hoisted for o in ops]
        self.items[:0] = [mv for mv, _ in self.hoisted] + [o for o in ops if o.unit == "wait"] + \
            [o for o in ops if o.unit != "wait"]

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
        key = tuple((id(k), v) for k, v in self.seq_ivs.items())
        if key != self.__dict__.get("_seq_key"):
            self._seq_key, self._seq_memo = key, {}
        return self._seq_expr(x)[0]

    def _seq_expr(self, x):
        """(seq_expr(x), whether that answer holds for good: not when it read a pointer not yet
        translated)."""
        if isinstance(x, Const):
            return (str(x.value) if isinstance(x.value, int) and not isinstance(x.value, bool) else None), True
        if not isinstance(x, Inst):
            return None, True
        if x in self.seq_ivs:
            return self.seq_ivs[x], True
        if x in self._seq_memo:
            return self._seq_memo[x], True
        out, stable = None, True
        if x.op == "load" and x.type in ("i32", "i64", "i16", "i8"):
            ptr = self.vals.get(x.ops[0])
            stable = ptr is not None
            if ptr is not None and ptr.base is not None and ptr.base[0] == "scalar" and ptr.off is None \
                    and not ptr.coff and ptr.base[1] not in self.wide_args:
                self.uses.setdefault("params", set()).add(ptr.base[1])
                out = f"%p{ptr.base[1]}"
        elif x.op in ("sext", "zext", "trunc", "freeze") and x.ops[0].type != "i1":
            out, stable = self._seq_expr(x.ops[0])
        elif x.op in ("add", "sub", "mul"):
            (a, sa), (b, sb) = self._seq_expr(x.ops[0]), self._seq_expr(x.ops[1])
            stable = sa and sb
            if a is not None and b is not None:
                out = f"({a} {'+-*'[('add', 'sub', 'mul').index(x.op)]} {b})"
        if stable:
            self._seq_memo[x] = out
        return out, stable

    def uniform_register(self, x):
        """seq_expr(x) where x's register holds that value in every lane, else None.  A pass
        counter's phi (pass_ivs) does so only in the lanes still in its loop: a lane that left
        keeps its last value, and the other work-item of its long word may still be running."""
        e = self.seq_expr(x)
        return None if e is None or any(t in re.findall(r"%\w+", e) for t in self.pass_counters) else e

    def counted_loop(self, h, blocks, phis):
        """(trip count expression, counter phi, its start, the IR value of its bound) for a loop the
        sequencer can run, or None.

        The loop must leave only where its counter, stepped by 1 from a start the sequencer
        knows, meets a bound the sequencer knows: then every lane runs the same iterations."""
        exits = [(n, s_) for n in blocks for s_ in self.succ[n] if s_ not in blocks]
        latches = [p_ for p_ in self.preds[h] if p_ in blocks]
        if len(exits) != 1 or len(latches) != 1:
            return None
        src, dst = exits[0]
        t = self.bmap[src].insts[-1]
        if t.op != "br" or len(self.succ[src]) != 2 or not isinstance(t.ops[0], Inst) or t.ops[0].op != "icmp":
            return None
        cmp = t.ops[0]
        exit_on_true = self.succ[src][0] == dst
        z = cmp.ops[0]
        if cmp.pred in ("ne", "eq") and isinstance(cmp.ops[1], Const) and cmp.ops[1].value == 0 \
                and isinstance(z, Inst) and z.op == "zext" and isinstance(z.ops[0], Inst) and z.ops[0].op == "icmp":
            cmp, exit_on_true = z.ops[0], exit_on_true == (cmp.pred == "ne")     # -O0's (c != 0) wrapper
        pred = cmp.pred
        a, b = cmp.ops
        for iv in phis:
            blk = [blk for blk in iv.phi_blocks if blk not in blocks]
            if len(blk) != 1:
                continue
            start = self.seq_expr(iv.ops[iv.phi_blocks.index(blk[0])])
            step = iv.ops[iv.phi_blocks.index(latches[0])] if latches[0] in iv.phi_blocks else None
            if start is None or not (isinstance(step, Inst) and step.op == "add" and step.ops[0] is iv
                                     and isinstance(step.ops[1], Const) and step.ops[1].value == 1):
                continue
            for x, bound, sw in ((a, b, False), (b, a, True)):
                if x is not step and x is not iv:
                    continue
                bexpr = self.seq_expr(bound)
                if bexpr is None:
                    continue
                pr = {"sgt": "slt", "ugt": "ult", "slt": "sgt", "ult": "ugt", "sge": "sle", "uge": "ule",
                      "sle": "sge", "ule": "uge"}.get(pred, pred) if sw else pred
                stay, leave = ("ne", "slt", "ult", "sle", "ule"), ("eq", "sge", "uge", "sgt", "ugt")
                if pr not in (leave if exit_on_true else stay):
                    continue       # the loop would stay while the counter is past the bound
                n = f"({bexpr}) - ({start})"
                if pr in ("sle", "ule", "sgt", "ugt"):      # an inclusive bound: i <= n
                    n = f"({n}) + 1"
                if x is iv:        # the test precedes the step: one more pass that only leaves
                    n = f"({n}) + 1"
                return f"({n} if {n} > 1 else 1)", iv, start, bound
        return None

    def pass_ivs(self, h, blocks, phis):
        """(pass counter, phis) for a loop that runs until no lane is left: its header phis that
        start at a value the sequencer knows and step by a constant on the one back edge.  Every
        lane still in the loop in pass t entered with the others and took the back edge t times, so
        such a phi is start + t * step in every lane that runs the pass: a sequencer expression in
        the loop (its index then moves no more than one element), not after it."""
        latches = [b for b in self.preds[h] if b in blocks]
        if len(latches) != 1:
            return None
        found = []
        for iv in phis:
            starts = {self.seq_expr(v) for blk, v in zip(iv.phi_blocks, iv.ops) if blk not in blocks}
            nxt = iv.ops[iv.phi_blocks.index(latches[0])] if latches[0] in iv.phi_blocks else None
            if len(starts) != 1 or None in starts or not (isinstance(nxt, Inst) and nxt.op in ("add", "sub")
                                                          and nxt.ops[0] is iv and isinstance(nxt.ops[1], Const)
                                                          and type(nxt.ops[1].value) is int):
                continue
            found.append((iv, starts.pop(), nxt.ops[1].value * (1 if nxt.op == "add" else -1)))
        if not found:
            return None
        t = self.seq_reg("t")
        self.pass_counters.add(t)
        for iv, start, step in found:
            self.seq_ivs[iv] = f"(({start}) + ({step}) * {t})"
        return t, [iv for iv, _, _ in found]

    def in_loop(self, n, h):
        return h is None or n in self.loops[h]

    def emit_region(self, names, header):
        done = set()
        for n in names:
            if n in done:
                continue
            if n in self.loops and n != header:
                body = [m for m in names if m in self.loops[n]]
                self.emit_loop(n, body)
                done.update(body)
                continue
            self.emit_block(n)
            done.add(n)

    def contribute(self, src, dst, p):
        self.edge[(src, dst)] = p
        ctx = self.loop_stack[-1] if self.loop_stack else None
        if ctx is not None and dst == ctx["header"]:
            ctx["next"] = p if ctx["next"] is None else self.b_or(ctx["next"], p)
            return
        if ctx is not None and dst not in self.loops[ctx["header"]]:
            # leaving the loop: accumulate the lanes that took this exit, capture phi inputs
            ex = ctx["exits"][(src, dst)]
            self.alu("ior", ex, p, dst=ex)
            get = self.raw if ctx["lazy"] else self.val      # a lazy loop settles after it (nans.py)
            settled = set(self.settled)
            for phi, cap in ctx["phicaps"].get((src, dst), []):
                v = get(phi.ops[phi.phi_blocks.index(src)])
                self.capture(cap, v, p)
            if ctx["bottom"]:                # a counted loop's exit runs in its last pass only: what it
                self.settled = settled       # settled is still unsettled in the other passes (nans.py)
            return
        self.acc[dst] = p if dst not in self.acc else self.b_or(self.acc[dst], p)

    def capture(self, cap: Val, v: Val, p: VReg):
        if v.kind == "vec":                  # element by element (64-bit elements take two registers)
            for c, e in zip(self.elems(cap), self.elems(v)):
                self.capture(c, e, p)
            return
        if v.kind == "ptr":
            if self.is_multi_ptr(cap):
                return self.set_multi_ptr(cap, v, p)
            self.check_same_buffer(cap, v)
            src = [self.carried_off(v)]
            dst = cap.off.regs
        else:
            src, dst = v.regs, cap.regs
        if len(dst) == 1:
            self.masked_copy(src[0], dst[0], self.mask_of(p))
        else:
            hi, lo = self.widen_bool(p)
            for cc, s, d in ((hi, src[0], dst[0]), (lo, src[1], dst[1])):
                self.masked_copy(s, d, self.flags("lnot", cc))

    def persistent(self, ty, name: str = None) -> Val:
        """A register set that lives across a loop (phis, captures) for IR value `name`.  A pointer
        takes its buffer from the first value assigned to it, or, when an earlier attempt found it
        holds pointers into several (MixedPointer), is one offset register per buffer under bools
        choosing among them: a nested ("either", c, A, B) as a select of two pointers makes."""
        k = self.kind_of(ty)
        if k == "vec" and irtypes.is_aggregate(ty):
            return self.make_vec([self.persistent(lt) for lt, _ in self.leaves(ty)])
        if k == "vec":
            m = _VEC.fullmatch(ty)
            return self.make_vec([self.persistent(m.group(2).strip()) for _ in range(int(m.group(1)))])
        if k == "ptr":
            bases = self.ptr_bases.get(name, [None])
            reg = Val("ptr", base=bases[-1], off=Val("i32", (self.copy(self.c32(0)),)))
            for b in reversed(bases[:-1]):
                reg = Val("ptr", base=("either", self.copy(self.c32(0)), Val("ptr", base=b, off=Val(
                    "i32", (self.copy(self.c32(0)),))), reg))
            reg.home = name
            return reg
        regs = tuple(self.copy(self.c32(0)) for _ in range(KINDS[k]))
        return Val(k, regs)

    # pointer registers into several buffers (MixedPointer) ---------------------------------------
    @staticmethod
    def leaf_bases(v: Val) -> list:
        """The buffers pointer v may point into."""
        if v.base and v.base[0] == "either":
            return Codegen.leaf_bases(v.base[2]) + Codegen.leaf_bases(v.base[3])
        return [v.base] if v.base is not None else []

    def is_multi_ptr(self, reg: Val) -> bool:
        return reg.base is not None and reg.base[0] == "either" and reg.home is not None

    def check_same_buffer(self, reg: Val, v: Val):
        """reg (a one-buffer pointer register) may take v: it is into reg's buffer (which the first
        assignment sets); else MixedPointer, so the next attempt gives reg a register per buffer."""
        if reg.base is None and not (v.base and v.base[0] == "either"):
            reg.base = v.base
        if reg.base != v.base or reg.base[0] == "either":
            if reg.home is None:
                raise CodegenError("a pointer that may point into two different buffers is not supported", self.line)
            raise MixedPointer(reg.home, self.leaf_bases(reg) + self.leaf_bases(v), self.line)

    def ptr_leaves(self, v: Val, cond=None) -> list:
        """[(bool register or None for every lane, one-buffer pointer)]: where pointer v points
        into which buffer, within the lanes of cond."""
        if not (v.base and v.base[0] == "either"):
            return [(cond, v)]
        _, c, a, b = v.base
        nc = self.b_not(c)
        return self.ptr_leaves(a, c if cond is None else self.b_and(cond, c)) + \
            self.ptr_leaves(b, nc if cond is None else self.b_and(cond, nc))

    def set_multi_ptr(self, reg: Val, v: Val, p=None):
        """reg = v (in the lanes of p) for a register with an offset per buffer (persistent): in the
        lanes where v points into buffer B, B's offset and the bools that lead to it.  Conditions and
        offsets are read first: v may be made of reg's own registers (`p = c ? p : q`)."""
        moves = []                        # (mask or None, [(destination, source register)])
        for cond, leaf in self.ptr_leaves(v, p):
            sets, node = [], reg          # down reg's (either, c, A, rest) chain to leaf's buffer
            while node.base[0] == "either" and node.base[2].base != leaf.base:
                sets.append((node.base[1], self.c32(0)))
                node = node.base[3]
            if node.base[0] == "either":
                sets.append((node.base[1], self.c32(-1)))
                node = node.base[2]
            if node.base != leaf.base:
                raise MixedPointer(reg.home, self.leaf_bases(reg) + [leaf.base], self.line)
            sets.append((node.off.regs[0], self.carried_off(leaf)))
            moves.append((None if cond is None else self.mask_of(cond), sets))
        for k, sets in moves:
            for dst, src in sets:
                if k is None:
                    self.copy(src, dst)
                else:
                    self.masked_copy(src, dst, k)

    def phi_value(self, phi, edges):
        """Select among a phi's incoming values by the predicates of the given incoming edges."""
        out = None
        caps = getattr(self, "phi_caps_after", {}).get(phi, {})
        for blk, v in zip(phi.phi_blocks, phi.ops):
            if (blk, phi.block) not in edges or (blk, phi.block) not in self.edge:
                continue
            val = caps[blk] if blk in caps else self.val(v)
            if out is None:
                out = val
            else:
                out = self.select(self.edge[(blk, phi.block)], val, out)
        return out

    def block_pred(self, n):
        if n == self.f.blocks[0].name:
            return self.active
        p = self.acc.get(n)
        if p is None:
            return self.c32(0)          # unreachable in this region
        head = self.diamond_head(n)
        return self.pred[head] if head in self.pred else p

    def diamond_head(self, n):
        """E when n joins the two arms of an if/else E -> {A, B} -> n: n runs on E's lanes, the same
        register (so a store there is seen to cover the wave, see fast_store)."""
        arms = self.preds[n]
        if len(arms) != 2 or arms[0] == arms[1] or n in self.loops:
            return None
        if any(self.succ[a] != [n] or len(self.preds[a]) != 1 for a in arms):
            return None
        head = self.preds[arms[0]][0]
        return head if self.preds[arms[1]] == [head] and sorted(self.succ[head]) == sorted(arms) else None

    def emit_block(self, n, pred=None):
        b = self.bmap[n]
        p = pred if pred is not None else self.block_pred(n)
        self.pred[n] = p
        self.elected = {}
        self.settled = set()
        phis = [i for i in b.insts if i.op == "phi"]
        if phis and pred is None:
            incoming = {(blk, n) for blk in self.preds[n]}
            vals = [self.phi_value(phi, incoming) for phi in phis]
            for phi, v in zip(phis, vals):
                self.vals[phi] = v
                if phi in self.escapes:      # a join inside a loop whose value is read after it
                    self.capture(self.escapes[phi], v, p)
        for i in b.insts:
            if i.op == "phi":
                continue
            self.line = i.line or self.line
            self.site_line = getattr(i, "oob_line", None)     # a merged store stands for two lines
            self.inst(i, p)
            if i in self.escapes:
                ctx = self.loop_stack[-1]
                self.capture(self.escapes[i], self.vals[i] if ctx["lazy"] else self.settle(self.vals[i]), p)
        self.flush_scatters()
        self.flush_checks()
        t = b.insts[-1]
        if t.op == "br":
            succ = self.succ[n]
            ctx = self.loop_stack[-1] if self.loop_stack else None
            bottom = ctx and ctx["bottom"]
            if len(succ) == 1:
                self.contribute(n, succ[0], p)
            elif bottom and bottom["src"] == n:
                # a counted loop's test: the sequencer takes it, so every lane here goes round
                # again, and leaves in the last pass only (no per-lane compare, no exit mask)
                self.contribute(n, ctx["header"], p)
                outer, self.items = self.items, []
                self.contribute(n, bottom["dst"], p)
                self.items = outer + [SeqIf(bottom["last"], self.items)]
            else:
                c = self.val(t.ops[0]).regs[0]
                self.contribute(n, succ[0], self.b_and(p, c))
                self.contribute(n, succ[1], self.b_and(p, self.b_not(c)))
        elif t.op == "switch":
            v = self.narrow(self.val(t.ops[0]))
            default = t.ops[1]
            rest = p
            # llvmlite lists only the labels: the case values come from the text
            pairs = re.findall(r"(i\d+ -?\d+), label %\"?([^\s\"]+)", t.text.split("[", 1)[1])
            for c, lbl in pairs:
                ty, val = c.split()
                eq = self.bool_from_mask(self.flags("ixor", v, self.narrow(self.const_val(Const(ty, int(val))))))
                if (n, lbl) not in self.edge:
                    self.contribute(n, lbl, self.b_and(p, eq))
                rest = self.b_and(rest, self.b_not(eq))
            self.contribute(n, default, rest)

    @staticmethod
    def read_after(u: Inst, i: Inst, blocks) -> bool:
        """Whether user u reads loop value i after the loop, so i must be captured as each lane
        leaves (later passes overwrite its register): any use outside but a phi on an exit edge
        (phicaps), including a phi that takes i from a block after the loop (LCSSA's
        loop.exit.loopexit -> loop.exit)."""
        if u.block in blocks:
            return False
        return u.op != "phi" or any(v is i and b not in blocks for b, v in zip(u.phi_blocks, u.ops))

    def emit_loop(self, h, body):
        """Emit loop h; gives the registers of the values that leave it (escapes, header phis, exit
        phis), for rerun_exactly."""
        lazy = self.lazy_loop(h)
        before = self.snapshot() if lazy else None
        self.settled = set()
        blocks = self.loops[h]
        entry_edges = {(p, h) for p in self.preds[h] if p not in blocks}
        back_edges = {(p, h) for p in self.preds[h] if p in blocks}
        hb = self.bmap[h]
        phis = [i for i in hb.insts if i.op == "phi"]
        counted = self.counted_loop(h, blocks, phis)
        bottom = None
        if counted:
            seq_reg = f"%n{'e' if self.exact_mode else ''}{len(self.seq_ivs)}"     # %ne: an exact rerun (nans.py)
            self.seq_ivs[counted[1]] = f"({counted[2]} + {seq_reg})"
            (src, dst), = [(n, s) for n in blocks for s in self.succ[n] if s not in blocks]
            if src in self.preds[h]:
                # tested at the bottom (a rotated loop): all lanes that entered run every pass
                bottom = {"src": src, "dst": dst, "last": f"{seq_reg} == {counted[0]} - 1"}
        passes = None if counted else self.pass_ivs(h, blocks, phis)
        if passes:
            self.items.append(SeqSet(passes[0], "0"))
        # loop-carried registers, set from the entry edges
        entry_pred = self.block_pred(h)
        M = self.copy(entry_pred)
        carried = {}
        for phi in phis:
            v0 = self.phi_value(phi, entry_edges)
            reg = self.persistent(phi.type, phi.name)
            self.assign(reg, v0)
            carried[phi] = reg
        exits = {}
        phicaps = {}
        for n in blocks:
            for s in self.succ[n]:
                if s not in blocks:
                    exits[(n, s)] = self.copy(self.c32(0))
                    for phi in (i for i in self.bmap[s].insts if i.op == "phi"):
                        if n in phi.phi_blocks:
                            phicaps.setdefault((n, s), []).append((phi, self.persistent(phi.type, phi.name)))
        esc = {}
        for n in blocks:
            for i in self.bmap[n].insts:
                if i.type in ("void", "label") or i in carried:
                    continue        # a header phi needs no capture: lanes that left keep their carried value
                if any(self.read_after(u, i, blocks) for u in self.users.get(i, [])):
                    esc[i] = self.persistent(i.type, i.name)
        saved_esc = getattr(self, "escapes", {})
        self.escapes = {**saved_esc, **esc}
        k = MaskReg()
        self.op("inot {s0} {K0}", "alu", (), (M,), mdst=(k,))
        outer, self.items = self.items, []
        ctx = {"header": h, "next": None, "exits": exits, "phicaps": phicaps, "bottom": bottom, "lazy": lazy,
               "stores": self.stores_to_buffers(blocks)}     # (settle_stores)
        self.loop_stack.append(ctx)
        for phi, reg in carried.items():
            self.vals[phi] = reg
        if counted and counted[1] in carried and carried[counted[1]].kind in ("i32", "i64"):
            # the counter runs from its start up to its bound (one past, inclusive): its range
            lo = self.int_rng(self.phi_value(counted[1], entry_edges))
            hi = self.ir_rng(counted[3])
            if lo is not None and hi is not None:
                carried[counted[1]].rng = (lo[0], max(lo[1], hi[1] + 1))
        self.emit_block(h, pred=M)
        self.emit_region([n for n in body if n != h], h)
        # next iteration: header phis from the back edges (parallel copy), then the lane mask
        news = {}
        get = self.raw if lazy else self.val
        for phi, reg in carried.items():
            cur = reg
            for blk, v in zip(phi.phi_blocks, phi.ops):
                if (blk, h) in back_edges and (blk, h) in self.edge:
                    # in a counted loop the back edge holds every lane that entered: lanes that
                    # did not never read the register again, so no select
                    if not bottom:
                        cur = self.select(self.edge[(blk, h)], get(v), cur)
                    elif v in carried:            # another phi's register: copy before it changes
                        cur = self.persistent(phi.type, phi.name)
                        self.assign(cur, get(v))
                    else:
                        cur = get(v)
            news[phi] = cur
        for phi, reg in carried.items():
            if self.is_multi_ptr(reg) and news[phi] is not reg:
                # a pointer into several buffers is a tree of the registers it selects among, maybe
                # other carried ones: copied before any of them changes
                tmp = self.persistent(phi.type, phi.name)
                self.set_multi_ptr(tmp, news[phi])
                news[phi] = tmp
        late = []                 # a counted loop's phis read after it keep the last pass's value
        for phi, reg in carried.items():
            if news[phi] is reg:
                continue
            if bottom and any(u.block not in blocks for u in self.users.get(phi, [])):
                late.append(phi)
                continue
            self.assign(reg, news[phi], carry=True)
        if late:
            body_items, self.items = self.items, []
            for phi in late:
                self.assign(carried[phi], news[phi])
            self.items = body_items + [SeqIf(f"not ({bottom['last']})", self.items)]
        if not bottom:
            nxt = ctx["next"] if ctx["next"] is not None else self.c32(0)
            self.copy(nxt, M)
            self.op("inot {s0} {K0}", "alu", (), (M,), mdst=(k,))
        if passes:
            self.items.append(SeqSet(passes[0], f"{passes[0]} + 1"))
            for phi in passes[1]:
                del self.seq_ivs[phi]
        self.loop_stack.pop()
        # a uniform trip count runs on the sequencer; any other loop until no lane is left
        loop = SeqLoop(seq_reg, "0", counted[0], self.items) if counted else WhileAny(k, self.items, self.line)
        self.items = outer
        if ctx.get("settle_before"):
            self.settle_stores(whole_buffer=True)
        self.items.append(loop)
        self.escapes = saved_esc
        caps = [cap for lst in phicaps.values() for _, cap in lst]
        exports = list(esc.values()) + list(carried.values()) + caps
        if lazy:
            carried_read_after = [reg for phi, reg in carried.items()
                                  if any(u.block not in blocks for u in self.users.get(phi, []))]
            self.rerun_exactly(h, body, before, exports, list(esc.values()) + carried_read_after + caps, entry_pred)
        self.settled = set()
        for i, cap in list(esc.items()) + list(carried.items()):
            self.vals[i] = cap
            if i in saved_esc:          # escapes the enclosing loop too: capture for the lanes that ran this one
                self.capture(saved_esc[i], cap, entry_pred)
        for (src, dst), ex in exits.items():
            self.edge[(src, dst)] = ex
            self.acc[dst] = ex if dst not in self.acc else self.b_or(self.acc[dst], ex)
        # exit-block phis read the captured values
        self.phi_caps_after = getattr(self, "phi_caps_after", {})
        for (src, dst), lst in phicaps.items():
            for phi, cap in lst:
                self.phi_caps_after.setdefault(phi, {})[src] = cap
        return exports

    def assign(self, reg: Val, v: Val, carry=False):
        """reg = v; carry: the update of a loop-carried register at the end of a pass, a copy
        emit.coalesce_carried may remove."""
        if reg.kind == "ptr":
            if self.is_multi_ptr(reg):
                return self.set_multi_ptr(reg, v)
            self.check_same_buffer(reg, v)
            self.op("lpassa {s0} {d0}", "alu", (reg.off.regs[0],), (self.carried_off(v),)).carry = carry
            return
        for s, d in zip(v.regs, reg.regs):
            self.op("lpassa {s0} {d0}", "alu", (d,), (s,)).carry = carry

    # ------------------------------------------------------------------ instructions
    INT_BIN32 = {"add": "iadd", "sub": "isub", "and": "iand", "or": "ior", "xor": "ixor",
                 "shl": "ilsl", "lshr": "uilsr", "ashr": "ilsr"}
    INT_BIN64 = {"add": "ladd", "sub": "lsub", "and": "land", "or": "lor", "xor": "lxor",
                 "shl": "llsl", "lshr": "ulsr", "ashr": "llsr"}

    CASTS = ("zext", "sext", "trunc", "sitofp", "uitofp", "fptosi", "fptoui", "fpext", "fptrunc", "bitcast",
             "ptrtoint", "inttoptr")

    WAVE_INVARIANT_OPS = {"add", "sub", "mul", "and", "or", "xor", "shl", "lshr", "ashr", "icmp", "select",
                          "sext", "zext", "trunc", "freeze", "fadd", "fsub", "fmul", "fneg", "fcmp", "sitofp",
                          "uitofp", "fpext", "fptrunc"}

    def wave_invariant(self, x) -> bool:
        """x is the same in every lane of every wave (pure scalar arithmetic on constants and scalar
        kernel arguments): computed once, in the prologue, not in every wave."""
        if isinstance(x, Const):
            return True
        if not isinstance(x, Inst):
            return False
        r = self._invariant.get(x)
        if r is None:
            if x.op == "load":         # a scalar argument (not one picked per lane, see either_arg)
                ptr = self.vals.get(x.ops[0])
                r = ptr is not None and ptr.base is not None and ptr.base[0] == "scalar" and ptr.off is None
            else:
                r = x.op in self.WAVE_INVARIANT_OPS and not x.type.startswith("<") and \
                    all(self.wave_invariant(o) for o in x.ops)
            self._invariant[x] = r
        return r

    def inst(self, i: Inst, p: VReg):
        if self.batch and self.may_see_stores(i):
            self.flush_scatters()
        if i.op in self.WAVE_INVARIANT_OPS and self.wave_invariant(i):
            outer, self.items = self.items, []
            try:
                self.inst_here(i, p)
            finally:
                self.prologue += self.items
                self.items = outer
        else:
            self.inst_here(i, p)

    def may_see_stores(self, i: Inst) -> bool:
        """Whether what i reads or does may depend on the batched stores (so they go first): a
        load, except from private memory; a call, except of an LLVM intrinsic that touches no memory."""
        if i.op == "load":
            ptr = self.vals.get(i.ops[0]) if isinstance(i.ops[0], (Inst, Arg)) else None
            return not (ptr is not None and ptr.kind == "ptr" and (ptr.base or ("",))[0] == "priv")
        if i.op == "call":
            callee = i.callee or ""
            return not callee.startswith("llvm.") or callee.startswith(("llvm.mem", "llvm.lifetime"))
        return i.op in ("atomicrmw", "cmpxchg", "fence")

    def inst_here(self, i: Inst, p: VReg):
        op = i.op
        self.cur = i
        if op in ("br", "switch", "ret", "unreachable"):
            return
        if any(odd_int(t) for t in [i.type] + [getattr(o, "type", "") for o in i.ops]):
            return self.widened(i, p)
        k = {"load": 0, "getelementptr": 0, "store": 1}.get(op)
        if k is not None and isinstance(i.ops[k], (Inst, Arg)) and (self.val(i.ops[k]).base or ("",))[0] == "either":
            v = self.on_either(i, k, p)
            if v is not None:
                self.vals[i] = v
            return
        if op == "freeze":
            self.vals[i] = self.val(i.ops[0])
            return
        if op in ("extractvalue", "insertvalue") or op in ("load", "store") and irtypes.is_aggregate(
                i.type if op == "load" else i.ops[0].type):
            v = self.aggregate_inst(i, p)
            if v is not None:
                self.vals[i] = v
            return
        if i.type.startswith("<") or any(isinstance(o, (Inst, Arg, Const)) and o.type.startswith("<") for o in i.ops):
            v = self.vector_inst(i, p)
            if v is not None:
                self.vals[i] = v
            return
        if op in self.INT_BIN32 or op in ("mul", "udiv", "sdiv", "urem", "srem"):
            self.vals[i] = self.int_binop(i)
        elif op in ("fadd", "fsub", "fmul", "fdiv", "frem", "fneg"):
            self.vals[i] = self.float_op(i)
        elif op == "icmp":
            a, b = self.val(i.ops[0]), self.val(i.ops[1])
            if i.ops[0].type in self.SMALL:
                signed = i.pred[0] == "s"
                a, b = (self.norm_small(x, i.ops[0].type, signed) for x in (a, b))
            self.vals[i] = Val("b", (self.icmp(i.pred, a, b),))
        elif op == "fcmp":
            self.vals[i] = Val("b", (self.fcmp(i.pred, self.val(i.ops[0]), self.val(i.ops[1])),))
        elif op == "select":
            c = self.val(i.ops[0]).regs[0]
            self.vals[i] = self.select(c, self.val(i.ops[1]), self.val(i.ops[2]))
        elif op in self.CASTS:
            self.vals[i] = self.cast(i)
        elif op == "getelementptr":
            self.vals[i] = self.gep(i)
        elif op == "load":
            self.vals[i] = self.load(i, p)
        elif op == "store":
            self.store(i, p)
        elif op == "call":
            v = self.call(i, p)
            if v is not None:
                self.vals[i] = v
        elif op == "alloca":
            self.vals[i] = Val("ptr", base=("priv",), coff=self.private_offset(i))
        else:
            raise CodegenError(f"LLVM instruction '{op}' is not supported on the emulator device yet", self.line)

    # integers ----------------------------------------------------------------------------------
    EXTENDS = {"lshr": False, "udiv": False, "urem": False, "zext": False, "uitofp": False,
               "ashr": True, "sdiv": True, "srem": True, "sext": True, "sitofp": True}

    def widened(self, i: Inst, p: VReg):
        """An instruction on an odd-width integer (i33 from LLVM's closed forms of loops, i24 ...):
        computed in the next supported width (i32 or i64), whose upper bits are don't-care, as for
        i8/i16; operands are zero- or sign-extended from the odd width where the operation reads
        those bits (shifts right, division, compares, extensions, conversions)."""
        op = i.op
        signed = self.EXTENDS.get(op, i.pred[:1] == "s" if op == "icmp" else None)
        if op == "call":                                   # umax.i2 and the like
            signed = self.INT_CALLS.get(callee_base(i))
        ops = []
        for o in i.ops:
            ty = getattr(o, "type", "")
            if not odd_int(ty):
                ops.append(o)
                continue
            if op not in ("add", "sub", "mul", "and", "or", "xor", "shl", "trunc", "icmp", "select", "phi", "freeze") \
                    and signed is None:
                raise CodegenError(f"'{op}' on {ty} is not supported on the emulator device", self.line)
            v = self.val(o)
            if signed is not None or op == "icmp":
                n = int(ty[1:])
                bits = 64 if n > 32 else 32
                sh = self.c32(bits - n)
                mn = ("l" if bits == 64 else "i") + "lsl", ("l" if bits == 64 else "i") + "lsr"
                if not signed:
                    mn = mn[0], "ulsr" if bits == 64 else "uilsr"
                v = Val(v.kind, tuple(self.alu(mn[1], self.alu(mn[0], r, sh), sh) for r in v.regs))
            ops.append(self.proxy(container_int(ty), v))
        dt = container_int(i.type) if odd_int(i.type) else i.type
        if op in ("zext", "sext", "trunc") and dt == ops[0].type:     # i33 -> i64, i64 -> i33: the value itself
            self.vals[i] = self.val(ops[0])
            return
        fake = Inst(op, i.name, dt, ops, text=i.text, block=i.block, pred=i.pred, elem=i.elem,
                    phi_blocks=i.phi_blocks, callee=i.callee, line=i.line)
        self.inst(fake, p)
        if fake in self.vals:
            self.vals[i] = self.vals[fake]

    def int_binop(self, i: Inst) -> Val:
        a, b = self.val(i.ops[0]), self.val(i.ops[1])
        op = i.op
        if i.type == "i1":
            mn = {"and": "iand", "or": "ior", "xor": "ixor"}.get(op)
            if mn is None:
                raise CodegenError(f"'{op}' on booleans is not supported", self.line)
            return Val("b", (self.alu(mn, a.regs[0], b.regs[0]),))
        if i.type in self.SMALL:           # computed in 32 bits; only these need the operands extended
            if op in ("lshr", "udiv", "urem", "ashr", "sdiv", "srem"):
                signed = op in ("ashr", "sdiv", "srem")
                a, b = (self.norm_small(x, i.type, signed) for x in (a, b))
            mn = self.INT_BIN32.get(op)
            if mn:
                return Val("i32", (self.alu(mn, a.regs[0], b.regs[0]),))
            if op == "mul":
                return self.mul_general(a, b, False) if b.const is None else self.mul_const(a, b.const, False, None)
            return self.divide(op, a, b, False)
        if i.type not in ("i32", "i64"):
            raise CodegenError(f"arithmetic on {i.type} is not supported on the emulator device yet", self.line)
        wide = i.type == "i64"
        aff = None
        ca, cb = self.affine(a, i.ops[0]), self.affine(b, i.ops[1])
        if ca and cb:
            if op in ("add", "sub"):
                aff = aff_add(ca, cb, 1 if op == "add" else -1)
            elif op == "mul" and ca[0] == 0 and ca[2] is None:
                aff = aff_scale(cb, ca[1])
            elif op == "mul" and cb[0] == 0 and cb[2] is None:
                aff = aff_scale(ca, cb[1])
            elif op == "shl" and cb[0] == 0 and cb[2] is None and 0 <= cb[1] < (64 if i.type == "i64" else 32):
                aff = aff_scale(ca, 1 << cb[1])
            elif op == "or" and " disjoint " in f" {i.text} ":      # (no common bits: an add)
                aff = aff_add(ca, cb, 1)
        rng = self.binop_rng(op, a, b) if wide else None
        if op in self.INT_BIN32:
            if wide and a.narrow is not None and b.narrow is not None and op in ("add", "sub", "and", "or", "xor", "shl") \
                    and not (op == "shl" and not (b.const is not None and 0 <= b.const < 32)):
                # the low 32 bits in step (ids, offsets); the whole value from them where its range
                # shows it is a 32-bit one, else by the 64-bit operation
                n = self.alu(self.INT_BIN32[op], a.narrow, b.narrow)
                sc = self.scaled_binop(op, a, b)
                if aff is not None and within(rng, I32):
                    hi, lo = self.split64(n)
                    return Val("i64", (hi, lo), narrow=n, gid_affine=aff, rng=rng, scaled=sc)
                regs = tuple(self.alu(self.INT_BIN64[op], x, y) for x, y in zip(self.wide(a), self.wide(b)))
                return Val("i64", regs, narrow=n, gid_affine=aff, rng=rng, scaled=sc)
            if not wide:
                r = self.binop_rng(op, replace(a, rng=self.int_rng(a)), replace(b, rng=self.int_rng(b)))
                return Val("i32", (self.alu(self.INT_BIN32[op], a.regs[0], b.regs[0]),), gid_affine=aff,
                           rng=r if within(r, I32) else None)      # (a range past 32 bits: it wraps)
            ra, rb = self.wide(a), self.wide(b)
            regs = tuple(self.alu(self.INT_BIN64[op], x, y) for x, y in zip(ra, rb))
            nar = None
            xa = self.affine(a, i.ops[0])
            if op == "ashr" and b.const is not None and 0 < b.const <= 32 and xa and xa[2] is None \
                    and xa[0] % (1 << 32) == 0 and xa[1] % (1 << 32) == 0:
                # (y << 32) >> k with y affine, as LLVM writes sext(i + c) * 4: y is the high halves
                sh = 32 - b.const
                y = self.join32(*(self.alu("ulsr", r, self.c32(32)) for r in self.wide(a)))
                nar = y if sh == 0 else self.alu("ilsl", y, self.c32(sh))
                yr = I32                 # y: the low half of x in (x << 32) >> k
                if isinstance(i.ops[0], Inst) and i.ops[0].op == "shl" and self.val(i.ops[0].ops[1]).const == 32 \
                        and within(self.val(i.ops[0].ops[0]).rng, I32):
                    yr = self.val(i.ops[0].ops[0]).rng
                return Val("i64", regs, narrow=nar, gid_affine=(xa[0] >> b.const, xa[1] >> b.const, None),
                           rng=rng_scale(yr, 1 << sh), scaled=(y, sh, yr) if sh else None)
            if op == "ashr" and b.const is not None and 0 < b.const <= 32 and isinstance(i.ops[0], Inst) \
                    and i.ops[0].op == "shl" and self.val(i.ops[0].ops[1]).const == 32:
                # sext(trunc(x)) << (32 - k) as LLVM writes it (k = 32: a plain sign extension; k = 30: an
                # int index scaled to a 4-byte offset): the 32-bit facet is x's low half shifted
                src = self.val(i.ops[0].ops[0])
                sh = 32 - b.const
                nar = self.narrow(src) if sh == 0 else self.alu("ilsl", self.narrow(src), self.c32(sh))
                aff = src.gid_affine and aff_scale(src.gid_affine, 1 << sh)
                r = src.rng if within(src.rng, I32) else I32
                return Val("i64", regs, narrow=nar, gid_affine=aff, rng=rng_scale(r, 1 << sh),
                           scaled=(self.narrow(src), sh, r) if sh else None)
            return Val("i64", regs, narrow=nar, gid_affine=aff, rng=rng)
        if op == "mul":
            const = b.const if b.const is not None else a.const
            other = a if b.const is not None else b
            if const is not None:
                return self.mul_const(other, const, wide, aff)
            for q, n in ((i.ops[0], i.ops[1]), (i.ops[1], i.ops[0])):
                if not wide and self.quotient_by(q, n):     # (x / n) * n, as in x - (x / n) * n
                    cond = self.small_quotients.get(self.val(q).regs[0])
                    if cond is None:
                        return Val("i32", (self.mul_exact32(a.regs[0], b.regs[0], q.op == "sdiv"),))
                    # where the quotient came from fp32, the product (at most x < 2^22) is exact there
                    out = self.new("qn")
                    outer, self.items = self.items, []
                    self.alu("fftoi", self.mau("fvmul", self.alu("fitof", a.regs[0]), self.alu("fitof", b.regs[0])),
                             dst=out)
                    fast, self.items = self.items, []
                    self.copy(self.mul_exact32(a.regs[0], b.regs[0], q.op == "sdiv"), out)
                    slow, self.items = self.items, outer
                    self.items.append(SeqIf(cond, fast, slow))
                    return Val("i32", (out,))
            return self.mul_general(a, b, wide)
        g, n = i.ops[1], self.guarded_divisor(i.ops[1])
        if not wide and n is not None and self.uniform_register(n):
            # the front end's guard, x / (bad ? 1 : n) for a uniform n: divide by n, then take
            # x / 1 where the guard holds
            self._uniform_divisor = self.uniform_register(n)
            try:
                q = self.divide(op, a, self.val(n), wide).regs[0]
            finally:
                self._uniform_divisor = False
            by_one = a.regs[0] if op in ("sdiv", "udiv") else self.c32(0)
            r = self.select32(self.val(g.ops[0]).regs[0], by_one, q)
            if q in self.small_quotients:     # its fp32 test excludes the guard's cases (n < 1)
                self.small_quotients[r] = self.small_quotients[q]
            return Val("i32", (r,))
        self._uniform_divisor = b.const is None and self.uniform_register(i.ops[1])
        try:
            return self.divide(op, a, b, wide)
        finally:
            self._uniform_divisor = False

    @staticmethod
    def binop_rng(op, a: Val, b: Val):
        """An interval holding the true value of i64 `a op b`, from the operands' (Val.rng), or None."""
        ra, rb = a.rng, b.rng
        if op in ("add", "sub"):
            return rng_add(ra, rb, 1 if op == "add" else -1)
        if op == "shl" and b.const is not None and 0 <= b.const < 63:
            r = rng_scale(ra, 1 << b.const)
            return r if within(r, (-(1 << 63), (1 << 63) - 1)) else None
        if op == "and" and (within(ra, (0, 1 << 63)) or within(rb, (0, 1 << 63))):
            return (0, min(r[1] for r in (ra, rb) if within(r, (0, 1 << 63))))
        if op in ("and", "or", "xor") and within(ra, I32) and within(rb, I32):
            return I32                        # (two's complement: 32-bit values stay 32-bit)
        if op in ("lshr", "ashr") and b.const is not None and 0 <= b.const < 64:
            if within(ra, (0, 1 << 63)) or (op == "ashr" and ra is not None):
                return ra[0] >> b.const, ra[1] >> b.const
            return (0, (1 << (64 - b.const)) - 1) if op == "lshr" else None
        return None

    def scaled_of(self, v: Val):
        """(u, k, rng of u) with v == u << k exactly and u's low 32 bits in VReg u (Val.scaled), or None."""
        if v.scaled is not None:
            return v.scaled
        if v.narrow is not None and within(v.rng, EXACT):
            return v.narrow, 0, v.rng
        return None

    def scaled_binop(self, op, a: Val, b: Val):
        """Val.scaled of i64 `a op b`: a sum or difference of two scaled by the same power of two (a
        constant too), or a shift of a 32-bit value; only with k > 0 (k = 0 is the narrow facet)."""
        sa = self.scaled_of(a)
        if op == "shl" and b.const is not None and sa is not None and within(sa[2], I32) and sa[1] + b.const < 63:
            return sa[0], sa[1] + b.const, sa[2]
        if op not in ("add", "sub"):
            return None
        sb = self.scaled_of(b)
        if sa is None or sb is None:
            return None
        for x, y in ((a, sb), (b, sa)):        # a constant takes the other side's scale
            if x.const is not None and y[1] and x.const % (1 << y[1]) == 0:
                c = x.const >> y[1]
                if x is a:
                    sa = (self.c32(c), y[1], (c, c))
                else:
                    sb = (self.c32(c), y[1], (c, c))
        if sa[1] != sb[1] or not sa[1]:
            return None
        r = rng_add(sa[2], sb[2], 1 if op == "add" else -1)
        if not (within(r, I32) or within(r, U32)):      # (idx_wide rebuilds u from its low 32 bits)
            return None
        return self.alu(self.INT_BIN32[op], sa[0], sb[0]), sa[1], r

    def mul_const(self, x: Val, c: int, wide: bool, aff) -> Val:
        bits = 64 if wide else 32
        c &= (1 << bits) - 1
        if c == 0:
            return self.const_val(Const("i64" if wide else "i32", 0))
        neg = False
        if c >> (bits - 1):
            c, neg = (1 << bits) - c, True
        terms = [k for k in range(bits) if c >> k & 1]
        if len(terms) > 4:
            return self.mul_general(x, self.const_val(Const("i64" if wide else "i32", c if not neg else -c)), wide)

        def build(regs, mn_shl, mn_add, mn_sub, cshift):
            acc = None
            for k in terms:
                t = regs if k == 0 else self.alu(mn_shl, regs, cshift(k))
                acc = t if acc is None else self.alu(mn_add, acc, t)
            if neg:
                acc = self.alu(mn_sub, self.const64(0), acc)
            return acc
        if not wide:
            r = rng_scale(self.int_rng(x), -c if neg else c)
            return Val("i32", (build(x.regs[0], "ilsl", "iadd", "isub", self.c32),), gid_affine=aff,
                       rng=r if within(r, I32) else None)
        cs = -c if neg else c
        rng = rng_scale(x.rng, cs)
        if not within(rng, (-(1 << 63), (1 << 63) - 1)):
            rng = None
        if x.narrow is not None and aff is not None and max(terms) < 31 and within(rng, I32):
            n = build(x.narrow, "ilsl", "iadd", "isub", self.c32)     # the product fits 32 bits
            hi, lo = self.split64(n)
            return Val("i64", (hi, lo), narrow=n, gid_affine=aff, rng=rng)
        regs = tuple(build(r, "llsl", "ladd", "lsub", self.c32) for r in x.regs)
        sx = self.scaled_of(x)
        sc = (sx[0], sx[1] + len(bin(c)) - 3, sx[2]) if not neg and _is_pow2(c) and sx and within(sx[2], I32) \
            and sx[1] + c.bit_length() < 64 else None
        nar = build(x.narrow, "ilsl", "iadd", "isub", self.c32) if x.narrow is not None else None
        return Val("i64", regs, gid_affine=aff, rng=rng, narrow=nar, scaled=sc if sc and sc[1] else None)

    def mul_general(self, a: Val, b: Val, wide: bool) -> Val:
        """Integer product modulo 2^32 (2^64) of two lane values, through exact fp64 products.

        x * y = xl * y + ((xh * y) << 16) with xl, xh the 16-bit halves of x: each
        product is below 2^48 (of y's low 32 bits), exact in fp64."""
        if wide:
            return Val("i64", tuple(self.mul64_lane(x, y) for x, y in zip(self.wide(a), self.wide(b))))
        x, y = a.regs[0], b.regs[0]
        xl = self.alu("iand", x, self.c32(0xFFFF))
        xh = self.alu("uilsr", x, self.c32(16))
        out = []
        for part in (0, 1):          # odd work-items (upper lane), even (lower lane)
            def lane64(r):
                return self.alu("ulsr", r, self.c32(32)) if part == 0 else self.alu("land", r, self.const64(0xFFFFFFFF))
            fy = self.alu("uditof", lane64(y))
            p1 = self.fmul64(self.alu("uditof", lane64(xl)), fy)
            p2 = self.fmul64(self.alu("uditof", lane64(xh)), fy)
            i1 = self.alu("udftoi", p1)
            i2 = self.alu("llsl", self.alu("udftoi", p2), self.c32(16))
            out.append(self.alu("ladd", i1, i2))
        return Val("i32", (self.join32(*out),))

    def mul64_lane(self, x, y):
        """x * y modulo 2^64 of one 64-bit lane: the low halves' full product plus the cross terms << 32."""
        lo = lambda r: self.alu("land", r, self.const64(0xFFFFFFFF))
        hi = lambda r: self.alu("ulsr", r, self.c32(32))

        def full32(a, b):            # a * b for a, b < 2^32: two products below 2^48, exact in fp64
            fb = self.alu("uditof", b)
            p0 = self.alu("udftoi", self.fmul64(self.alu("uditof", self.alu("land", a, self.const64(0xFFFF))), fb))
            p1 = self.alu("udftoi", self.fmul64(self.alu("uditof", self.alu("ulsr", a, self.c32(16))), fb))
            return self.alu("ladd", p0, self.alu("llsl", p1, self.c32(16)))
        xl, yl = lo(x), lo(y)
        cross = self.alu("ladd", full32(hi(x), yl), full32(xl, hi(y)))
        return self.alu("ladd", full32(xl, yl), self.alu("llsl", cross, self.c32(32)))

    def fmul64(self, x, y, add=None):
        """fp64 x * y (+ add) on all four PEs of each MAB: the u and d halves."""
        t = self.new()
        if add is None:
            self.op("dvmulu {s0} {s1} {d0}", "mau", (t,), (x, y))
            d = self.new()
            self.op("dvfmad {s0} {s1} {s2} {d0}", "mau", (d,), (x, y, t))
        else:
            self.op("dvfmau {s0} {s1} {s2} {d0}", "mau", (t,), (x, y, add))
            d = self.new()
            self.op("dvfmad {s0} {s1} {s2} {d0}", "mau", (d,), (x, y, t))
        return d

    def divide(self, op, a: Val, b: Val, wide: bool) -> Val:
        c = b.const
        if c is not None and c > 0 and _is_pow2(c) and not wide:
            k = c.bit_length() - 1
            x = a.regs[0]
            if op == "udiv":
                return Val("i32", (self.alu("uilsr", x, self.c32(k)),))
            if op == "urem":
                return Val("i32", (self.alu("iand", x, self.c32(c - 1)),))
            # signed: round toward zero
            bias = self.alu("uilsr", self.alu("ilsr", x, self.c32(31)), self.c32(32 - k)) if k else self.c32(0)
            t = self.alu("iadd", x, bias)
            if op == "sdiv":
                return Val("i32", (self.alu("ilsr", t, self.c32(k)),))
            return Val("i32", (self.alu("isub", x, self.alu("iand", t, self.c32(-c))),))
        if wide:
            return self.divide64(op, a, b)
        if getattr(self, "_uniform_divisor", False):
            return self.divide_uniform(op, a.regs[0], b.regs[0], a.gid_affine)
        return self.divide32(op, a.regs[0], b.regs[0])

    FP32_EXACT = 1 << 22       # operands below this divide exactly in fp32 (divide_uniform)

    def divide_uniform(self, op, x, y, aff=None) -> Val:
        """Division by a value every lane shares (a kernel argument, say): one reciprocal per wave
        (cached), then each quotient is trunc((|x| + 1/2) / |y|) by div_exact, exact for 32 bits.

        When x is affine in the global id (a 1-D launch), waves in which the sequencer sees
        0 <= x < 2^22 and 1 <= y < 2^22 take fp32 instead, one instruction over both lanes of a
        long word where fp64 takes two: trunc((x + 1/2) * fp32(1/y)) is exact there, because
        (x + 1/2) / y lies at least 1/(2y) from an integer and the two roundings move it by less
        than (x + 1/2) / y * 2^-23 < 1/(2y)."""
        signed = op in ("sdiv", "srem")
        ay, rcp, half_rcp = self.reciprocal(y, signed)      # before any branch: both paths read it
        if self.one_d and aff is not None and self._uniform_divisor:
            lo, hi = self.wave_extent(aff)
            n = self._uniform_divisor
            cond = f"1 <= ({n}) < {self.FP32_EXACT} and {lo} >= 0 and {hi} < {self.FP32_EXACT}"
            rcp32 = self.reciprocal32(y, signed)
            out = self.new("quot")
            outer, self.items = self.items, []
            q = self.alu("fftoi", self.mau("fvmul", self.mau("fvadd", self.alu("fitof", x), self.c32(0x3F000000)), rcp32))
            if op in ("urem", "srem"):
                q = self.alu("isub", x, self.alu("fftoi", self.mau("fvmul", self.alu("fitof", q),
                                                                   self.alu("fitof", y))))
            self.copy(q, out)
            fast, self.items = self.items, []
            self.copy(self.divide_uniform(op, x, y).regs[0], out)
            slow, self.items = self.items, outer
            self.items.append(SeqIf(cond, fast, slow))
            self.small_quotients[out] = cond
            return Val("i32", (out,))
        if signed:
            sx, sy = self.alu("ilsr", x, self.c32(31)), self.alu("ilsr", y, self.c32(31))
            ax = self.alu("isub", self.alu("ixor", x, sx), sx)
        else:
            ax = x
        q = self.div_exact(ax, rcp, half_rcp)
        if op in ("urem", "srem"):
            r = self.alu("isub", ax, self.mul_exact32(q, ay, signed=False))
            return Val("i32", (self.alu("isub", self.alu("ixor", r, sx), sx) if signed else r,))
        if signed:
            s_ = self.alu("ixor", sx, sy)
            q = self.alu("isub", self.alu("ixor", q, s_), s_)
        return Val("i32", (q,))

    def reciprocal(self, y, signed):
        """(|y|, fp64 1/|y|, fp64 1/(2|y|)) for the uniform divisor y: once per kernel argument (in
        the prologue), else once per wave where it is first needed."""
        param = re.fullmatch(r"%p(\d+)", self._uniform_divisor)
        key = ("recip", int(param[1]) if param else y, signed)
        if key not in self._ids_cache:
            if param:
                outer, self.items = self.items, []
                y = self.argval(PARAM_SLOT + int(param[1]), "divisor")
            ay = self.alu("isub", self.alu("ixor", y, self.alu("ilsr", y, self.c32(31))),
                          self.alu("ilsr", y, self.c32(31))) if signed else y
            fy = self.alu("uditof", self.alu("land", ay, self.const64(0xFFFFFFFF)))
            rcp = self.fdiv64(self.const64(0x3FF0000000000000), fy)
            self._ids_cache[key] = (ay, rcp, self.fmul64(self.const64(0x3FE0000000000000), rcp))
            if param:
                self.prologue += self.items
                self.items = outer
        return self._ids_cache[key]

    def reciprocal32(self, y, signed) -> VReg:
        """fp32 of reciprocal's 1/|y| (equal to 1/y where the fp32 division runs: y >= 1), made
        where that is, from it."""
        key = ("recip32", self._uniform_divisor, signed)
        if key not in self._ids_cache:
            rcp = self.reciprocal(y, signed)[1]
            outer, self.items = self.items, []
            self._ids_cache[key] = self.f64_to_f32((rcp, rcp)).regs[0]
            made, self.items = self.items, outer
            if re.fullmatch(r"%p\d+", self._uniform_divisor):
                self.prologue += made
            else:
                self.items += made
        return self._ids_cache[key]

    def divide64(self, op, a: Val, b: Val) -> Val:
        """64-bit division and remainder: restoring long division, 64 steps run by the sequencer."""
        signed = op in ("sdiv", "srem")
        c1, c63 = self.c32(1), self.c32(63)
        out = []
        for x, y in zip(self.wide(a), self.wide(b)):
            if signed:
                sx, sy = self.alu("llsr", x, c63), self.alu("llsr", y, c63)      # -1 where negative
                x = self.alu("lsub", self.alu("lxor", x, sx), sx)
                y = self.alu("lsub", self.alu("lxor", y, sy), sy)
            n = self.copy(x)
            q, r = self.copy(self.const64(0)), self.copy(self.const64(0))
            outer, self.items = self.items, []
            bit = self.alu("ulsr", n, c63)
            self.alu("llsl", n, c1, dst=n)
            self.alu("lor", self.alu("llsl", r, c1), bit, dst=r)
            ge = self.flags("ulmax", r, y)                      # r >= y
            self.masked_copy(self.alu("lsub", r, y), r, ge)
            self.alu("llsl", q, c1, dst=q)
            self.masked_copy(self.alu("linc", q), q, ge)
            body, self.items = self.items, outer
            self.items.append(SeqLoop(self.seq_reg("q"), "0", "64", body))
            if op == "sdiv":
                s_ = self.alu("lxor", sx, sy)
                q = self.alu("lsub", self.alu("lxor", q, s_), s_)
            elif op == "srem":
                r = self.alu("lsub", self.alu("lxor", r, sx), sx)
            out.append(q if op in ("udiv", "sdiv") else r)
        return Val("i64", tuple(out))

    def divide32(self, op, x, y) -> Val:
        """32-bit division and remainder through fp64: q = trunc(x * (1/y)), then corrected by one.

        1/y starts from the ALU's 5-bit rsqrt (squared) and takes four Newton
        steps (5 -> 80 bits); the quotient of two 32-bit integers is then within
        one of the truth, and one integer correction makes it exact."""
        signed = op in ("sdiv", "srem")
        if signed:
            sx = self.alu("ilsr", x, self.c32(31))             # -1 where negative
            sy = self.alu("ilsr", y, self.c32(31))
            ax = self.alu("isub", self.alu("ixor", x, sx), sx)   # |x| (as unsigned)
            ay = self.alu("isub", self.alu("ixor", y, sy), sy)
        else:
            ax, ay = x, y
        out_q, out_r = [], []
        one = self.const64(0x3FF0000000000000)
        for part in (0, 1):
            def lane64(r):
                return self.alu("ulsr", r, self.c32(32)) if part == 0 else self.alu("land", r, self.const64(0xFFFFFFFF))
            fx = self.alu("uditof", lane64(ax))
            fy = self.alu("uditof", lane64(ay))
            r0 = self.alu("drsqrt", fy)
            r = self.fmul64(r0, r0)
            for _ in range(4):
                e = self.fmul64(self.alu("lxor", fy, self.const64(1 << 63)), r, add=one)    # 1 - y r
                r = self.fmul64(r, e, add=r)                                                # r + r e
            q = self.alu("udftoi", self.fmul64(fx, r))
            # correction: rem = x - q*y (exact in 64 bits), fix q by one either way
            qy = self.alu("udftoi", self.fmul64(self.alu("uditof", q), fy))
            rem = self.alu("lsub", lane64(ax), qy)
            yl = lane64(ay)
            neg = self.flags("lmax", self.const64(-1), rem)          # rem < 0  <=>  -1 >= rem
            qd = self.alu("ldec", q)
            self.masked_copy(qd, q, neg)
            rd = self.alu("ladd", rem, yl)
            self.masked_copy(rd, rem, neg)
            big = self.flags("lmax", rem, yl)                        # rem >= y
            self.masked_copy(self.alu("linc", q), q, big)
            self.masked_copy(self.alu("lsub", rem, yl), rem, big)
            out_q.append(q)
            out_r.append(rem)
        q = self.join32(*out_q)
        rem = self.join32(*out_r)
        if op in ("udiv", "urem"):
            return Val("i32", (q if op == "udiv" else rem,))
        if op == "sdiv":
            s = self.alu("ixor", sx, sy)
            return Val("i32", (self.alu("isub", self.alu("ixor", q, s), s),))
        return Val("i32", (self.alu("isub", self.alu("ixor", rem, sx), sx),))

    # comparisons -------------------------------------------------------------------------------
    def _cmp_pair(self, mn, a: Val, b: Val, swap=False, invert=False, eq=False):
        """A comparison of 64-bit lanes -> a 32-bit-lane bool."""
        ra, rb = self.wide(a), self.wide(b)
        res = []
        for x, y in zip(ra, rb):
            if swap:
                x, y = y, x
            k = self.flags(mn, x, y)
            res.append(self.bool_from_mask(k, invert))
        return self.join32(*res)

    def icmp(self, pred, a: Val, b: Val) -> VReg:
        if a.kind == "ptr":
            if a.base != b.base or a.base[0] == "either":
                # a pointer into a buffer is never null; whether two buffer arguments are one buffer
                # the kernel cannot tell (a pointer's value is its offset in its buffer)
                if pred in ("eq", "ne") and "null" in (a.base[0], b.base[0]) and "either" not in (a.base[0], b.base[0]):
                    return self.c32(-1 if pred == "ne" else 0)
                raise CodegenError("comparing pointers into different buffers (or a pointer that may point into "
                                   "either of two) is not supported on the emulator device", self.line)
            a, b = Val("i32", (self.ptr_off(a),)), Val("i32", (self.ptr_off(b),))
        # 64-bit values compare by their low 32 bits where both lie in one 2^32 window (signed
        # compares: both 32-bit signed values; unsigned ones: either window)
        same_window = within(a.rng, I32) and within(b.rng, I32) or \
            (pred[0] == "u" or pred in ("eq", "ne")) and within(a.rng, U32) and within(b.rng, U32)
        wide = a.kind == "i64" and not (a.narrow is not None and b.narrow is not None and same_window and
                                        a.gid_affine is not None and b.gid_affine is not None)
        if pred in ("eq", "ne"):
            if wide:
                return self._cmp_pair("lxor", a, b, invert=pred == "ne")
            return self.bool_from_mask(self.flags("ixor", self.narrow(a), self.narrow(b)), invert=pred == "ne")
        unsigned = pred[0] == "u"
        rel = pred[1:]
        swap = rel in ("gt", "le")         # a > b == b < a;  a <= b == b >= a
        invert = rel in ("lt", "gt")       # x < y == !(x >= y)
        if wide:
            return self._cmp_pair(("u" if unsigned else "") + "lmax", a, b, swap, invert)
        x, y = self.narrow(a), self.narrow(b)
        if swap:
            x, y = y, x
        return self.bool_from_mask(self.flags(("u" if unsigned else "") + "imax", x, y), invert)

    def is_nan(self, v: Val) -> VReg:
        """A bool per lane: v is a NaN (its magnitude bits above infinity's), by integer compares."""
        if v.const is not None:
            return self.c32(-1 if v.const != v.const else 0)
        if v.kind == "f64":
            mag = Val("i64", tuple(self.alu("land", r, self.const64(0x7FFFFFFFFFFFFFFF)) for r in v.regs))
            return self._cmp_pair("lmax", Val("i64", (self.const64(0x7FF0000000000000),) * 2), mag, invert=True)
        mag = self.alu("iand", v.regs[0], self.c32(0x7FFFFFFF))
        return self.bool_from_mask(self.flags("imax", self.c32(0x7F800000), mag), invert=True)

    def fcmp(self, pred, a: Val, b: Val) -> VReg:
        """IEEE predicates: the compare on the values (a NaN compares as its bit pattern), then
        false where an operand is a NaN for the ordered ones, true for the unordered ones."""
        if pred == "true":
            return self.c32(-1)
        if pred == "false":
            return self.c32(0)
        nans = [self.is_nan(x) for x in (a, b) if x.const is None or x.const != x.const]
        uno = nans[0] if len(nans) == 1 else self.b_or(*nans) if nans else None
        if pred in ("ord", "uno"):
            if uno is None:
                return self.c32(0 if pred == "uno" else -1)
            return uno if pred == "uno" else self.b_not(uno)
        c = self.fcmp_values(pred[1:], a, b)
        if uno is None:
            return c
        return self.b_or(c, uno) if pred[0] == "u" else self.b_and(c, self.b_not(uno))

    def fcmp_values(self, p, a: Val, b: Val) -> VReg:
        wide = a.kind == "f64"
        mn = "dmax" if wide else "fmax"

        def ge(x, y, invert=False):
            if wide:
                return self._cmp_pair(mn, x, y, invert=invert)
            return self.bool_from_mask(self.flags(mn, x.regs[0], y.regs[0]), invert)
        if p in ("ge",):
            return ge(a, b)
        if p == "le":
            return ge(b, a)
        if p == "lt":
            return ge(a, b, True)
        if p == "gt":
            return ge(b, a, True)
        if p in ("eq", "ne"):
            e = self.b_and(ge(a, b), ge(b, a))
            return e if p == "eq" else self.b_not(e)
        raise CodegenError(f"floating-point comparison '{p}' is not supported", self.line)

    # floating point ------------------------------------------------------------------------------
    def float_op(self, i: Inst) -> Val:
        op = i.op
        wide = i.type == "double"
        if i.type not in ("float", "double"):
            raise CodegenError(f"floating-point type {i.type} is not supported on the emulator device", self.line)
        chain = op != "fdiv"              # a division's operands are settled (nans.py)
        a = self.raw(i.ops[0]) if chain else self.val(i.ops[0])
        if op == "fneg":
            sign = self.const64(1 << 63) if wide else self.c32(0x80000000)
            v = Val(a.kind, tuple(self.alu("lxor", r, sign) for r in a.regs))
            return self.lazy_result(i, v, ("neg", a)) if a.lazy else v
        b = self.raw(i.ops[1]) if chain else self.val(i.ops[1])
        v = self.float_arith(op, wide, a, b)
        if op == "fdiv":                  # exact: its special values are fixed at once
            if not no_nans(i):
                v.regs = tuple(self.division_specials(q, x, y, wide) for q, x, y in zip(v.regs, a.regs, b.regs))
            return v
        return self.lazy_result(i, v, ({"fadd": "add", "fsub": "sub", "fmul": "mul"}[op], a, b))

    def float_arith(self, op, wide, a: Val, b: Val) -> Val:
        self.flops += 1
        if op == "frem":
            raise CodegenError("fmod / '%' on floats is not supported on the emulator device yet", self.line)
        if wide:
            if op == "fadd":
                return Val("f64", tuple(self.mau("dvadd", x, y) for x, y in zip(a.regs, b.regs)))
            if op == "fsub":
                return Val("f64", tuple(self.mau("dvadd", x, y, neg=(1,)) for x, y in zip(a.regs, b.regs)))
            if op == "fmul":
                return Val("f64", tuple(self.fmul64(x, y) for x, y in zip(a.regs, b.regs)))
            return Val("f64", tuple(self.fdiv64(x, y) for x, y in zip(a.regs, b.regs)))
        x, y = a.regs[0], b.regs[0]
        if op == "fadd":
            return Val("f32", (self.mau("fvadd", x, y),))
        if op == "fsub":
            return Val("f32", (self.mau("fvadd", x, y, neg=(1,)),))
        if op == "fmul":
            return Val("f32", (self.mau("fvmul", x, y),))
        return Val("f32", (self.fdiv32(x, y),))

    def fdiv32(self, x, y):
        """x / y: Newton reciprocal from the 5-bit rsqrt, then one residual correction (<= 1 ulp)."""
        sign = self.c32(0x80000000)
        ay = self.alu("iand", y, self.c32(0x7FFFFFFF))
        sx = self.alu("ixor", x, self.alu("iand", y, sign))          # x with the quotient's sign
        r0 = self.alu("frsqrt", ay)
        r = self.mau("fvmul", r0, r0)
        one = self.c32(0x3F800000)
        for _ in range(3):
            e = self.mau("fvfma", ay, r, one, neg=(0,))              # 1 - |y| r
            r = self.mau("fvfma", r, e, r)
        q = self.mau("fvmul", sx, r)
        res = self.mau("fvfma", ay, q, sx, neg=(0,))                 # sx - |y| q  (exact)
        return self.mau("fvfma", res, r, q)

    def fdiv64(self, x, y):
        sign = self.const64(1 << 63)
        ay = self.alu("land", y, self.const64((1 << 63) - 1))
        sx = self.alu("lxor", x, self.alu("land", y, sign))
        r0 = self.alu("drsqrt", ay)
        r = self.fmul64(r0, r0)
        one = self.const64(0x3FF0000000000000)
        nay = self.alu("lxor", ay, sign)
        for _ in range(4):
            e = self.fmul64(nay, r, add=one)
            r = self.fmul64(r, e, add=r)
        q = self.fmul64(sx, r)
        res = self.fmul64(nay, q, add=sx)
        return self.fmul64(res, r, add=q)

    def fsqrt32(self, x):
        """sqrt(x) = x * rsqrt(x), rsqrt refined by Newton steps; sqrt(+-0) = +-0 (a subnormal x
        too: flushed, no CL_FP_DENORM), sqrt(inf) = inf."""
        y = self.alu("frsqrt", x)
        half = self.c32(0x3F000000)
        three_half = self.c32(0x3FC00000)
        for _ in range(3):
            hx = self.mau("fvmul", x, half)
            t = self.mau("fvmul", y, y)
            u = self.mau("fvfma", hx, t, three_half, neg=(0,))       # 1.5 - 0.5 x y^2
            y = self.mau("fvmul", y, u)
        s = self.mau("fvmul", x, y)
        res = self.mau("fvfma", s, s, x, neg=(0,))                    # x - s^2
        hy = self.mau("fvmul", y, half)
        s = self.mau("fvfma", res, hy, s)
        tiny = self.flags("uimax", self.c32(0x007FFFFF), self.alu("iand", x, self.c32(0x7FFFFFFF)))
        self.masked_copy(self.alu("iand", x, self.c32(0x80000000)), s, tiny)     # +-0, a subnormal flushed
        self.masked_copy(x, s, self.flags("ixor", x, self.c32(0x7F800000)))     # sqrt(+inf)
        return s

    # conversions ---------------------------------------------------------------------------------
    def cast(self, i: Inst) -> Val:
        op, src = i.op, i.ops[0]
        v = self.val(src)
        st, dt = src.type, i.type
        if op == "ptrtoint":
            # a pointer's integer value is its byte offset within its buffer (docs/isa.md): differences
            # of pointers into one buffer are right, absolute addresses are not the host's
            off = self.ptr_off(v)
            if dt == "i64":
                return Val("i64", self.split64(off, signed=False), narrow=off, rng=U32)
            return Val("i32", (off,))
        if op in ("bitcast",) or (op in ("ptrtoint", "inttoptr")):
            if st == dt or (op == "bitcast" and st in ("ptr",)):
                return v
            if op == "bitcast" and KINDS.get(self.kind_of(st)) == KINDS.get(self.kind_of(dt)):
                return Val(self.kind_of(dt), v.regs, narrow=v.narrow)
            raise CodegenError(f"'{op}' from {st} to {dt} is not supported on the emulator device", self.line)
        if op == "zext" or op == "sext":
            signed = op == "sext"
            r = I32 if signed else U32
            if within(self.int_rng(v), (0, I32[1])) or (not signed and " nneg " in f" {i.text} "):
                r = self.int_rng(v) if within(self.int_rng(v), (0, I32[1])) else (0, I32[1])   # (nneg: LLVM's word)
            if st == "i1":
                x = v.regs[0] if signed else self.alu("iand", v.regs[0], self.c32(1))
                v, r = Val("i32", (x,)), ((-1, 0) if signed else (0, 1))
            elif st in self.SMALL:
                v = self.norm_small(v, st, signed)
                r = (-(1 << self.SMALL[st] - 1), (1 << self.SMALL[st] - 1) - 1) if signed else (0, (1 << self.SMALL[st]) - 1)
            if dt in ("i32", "i16", "i8"):
                return Val("i32", v.regs, gid_affine=v.gid_affine)
            if dt == "i64":
                hi, lo = self.split64(v.regs[0], signed)
                return Val("i64", (hi, lo), narrow=v.regs[0], gid_affine=v.gid_affine, rng=r)
        if op == "trunc":
            if dt == "i1":
                n = self.narrow(v)
                return Val("b", (self.bool_from_mask(self.flags("ixor", self.alu("iand", n, self.c32(1)), self.c32(0)),
                                                     invert=True),))
            if dt in ("i32", "i16", "i8"):     # i8/i16 keep don't-care upper bits
                return Val("i32", (self.narrow(v),), gid_affine=v.gid_affine if dt == "i32" else None,
                           rng=v.rng if dt == "i32" and within(v.rng, I32) else None)
            raise CodegenError(f"truncation to {dt} is not supported on the emulator device yet", self.line)
        if op in ("sitofp", "uitofp"):
            u = "u" if op == "uitofp" else ""
            if st in self.SMALL:
                v, st = self.norm_small(v, st, not u), "i32"
            if dt == "float" and st in ("i32", "i16", "i8", "i1"):
                return Val("f32", (self.alu(u + "fitof", v.regs[0]),))
            if dt == "double":
                regs = self.wide(v, signed=not u)
                return Val("f64", tuple(self.alu(u + "ditof", r) for r in regs))
            if dt == "float" and st == "i64":
                regs = self.wide(v, signed=not u)
                return self.f64_to_f32(tuple(self.alu(u + "ditof", r) for r in regs))
        if op in ("fptosi", "fptoui"):
            if st == "float" and dt == "i32" and op == "fptoui":     # [2^31, 2^32) is past fftoi's range
                return Val("i32", (self.join32(*(self.alu("udftoi", r) for r in self.f32_to_f64(v.regs[0]))),))
            if st == "float" and dt in ("i32", "i16", "i8"):
                return Val("i32", (self.alu("fftoi", v.regs[0]),))
            if st == "double" and dt in ("i64", "i32"):
                regs = tuple(self.alu("dftoi", r) for r in v.regs)
                if dt == "i64":
                    return Val("i64", regs)
                return Val("i32", (self.join32(*regs),))
            if st == "float" and dt == "i64":
                d = self.f32_to_f64(v.regs[0])
                return Val("i64", tuple(self.alu("dftoi", r) for r in d))
        if op == "fpext" and st == "float" and dt == "double":
            regs = self.f32_to_f64(v.regs[0])
            if no_nans(i):
                return Val("f64", regs)
            return Val("f64", tuple(self.widened_specials(d, f) for d, f in zip(regs, self.f32_in_high(v.regs[0]))))
        if op == "fptrunc" and st == "double" and dt == "float":
            return self.f64_to_f32(v.regs)
        raise CodegenError(f"conversion '{op}' from {st} to {dt} is not supported on the emulator device yet",
                           self.line)

    def f32_to_f64(self, x):
        hi = self.new()
        self.op("dvpassa {s0}e {d0}", "mau", (hi,), (x,))
        t = self.alu("llsl", x, self.c32(32))
        lo = self.new()
        self.op("dvpassa {s0}e {d0}", "mau", (lo,), (t,))
        return hi, lo

    def f32_in_high(self, x):
        """The (odd, even) float lanes of x each in the high half of a long word (f32_to_f64's order)."""
        return x, self.alu("llsl", x, self.c32(32))

    def widened_specials(self, d, f):
        """d, the MAU's widening of the float in the high half of f, with f's sign (the MAU makes
        -0 +0) and a quiet NaN where f is a NaN (the MAU makes it inf)."""
        sign = self.const64(1 << 63)
        mag = self.alu("land", f, self.const64(0x7FFFFFFF << 32))
        d = self.copy(d)
        self.masked_copy(self.const64(0x7FF8 << 48), d, self.flags("ulmax", mag, self.const64(0x7F800001 << 32)))
        return self.alu("lor", d, self.alu("land", f, sign))

    def f64_to_f32(self, regs) -> Val:
        th, tl = (self.mau("dvpassar", r) for r in regs)
        a = self.alu("land", th, self.const64(0xFFFFFFFF00000000))
        b = self.alu("ulsr", tl, self.c32(32))
        return Val("f32", (self.alu("lor", a, b),))

    # memory ----------------------------------------------------------------------------------------
    def gep(self, i: Inst) -> Val:
        """A pointer plus indices.  The offset register is 32-bit; what the bounds check needs to see
        an offset that wrapped comes along: one variable term, its index (Val.idx); more, the
        offset's range (Val.orng) and, where that is not 32-bit, its 64-bit value (Val.o64)."""
        base = self.val(i.ops[0])
        if base.kind != "ptr":
            raise CodegenError("pointer arithmetic on a non-pointer", self.line)
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
                    raise CodegenError(f"indexing into '{ty}' at run time is not supported", self.line)
                ty, fo = sub
                if fo is not None:         # a struct field
                    coff += fo
                    continue
                scale = type_size(ty)
            iv = self.val(idx_op)
            if iv.const is not None:
                coff += iv.const * scale
                if aff is not None:
                    aff = (aff[0], aff[1] + iv.const * scale, aff[2])
                continue
            term = self.mul_const(Val("i32", (self.narrow(iv),)), scale, False, None).regs[0]
            x, sh, xr = self.index_parts(iv)
            if off is None:                              # the first variable term: checked as an index
                idx = (x, scale << sh, xr, iv if not sh else None, self.near_start(x, xr))
            elif idx is not None and idx[1] == scale << sh:     # another index in the same elements
                idx, good = self.add_index(idx, (x, scale << sh, xr, iv if not sh else None), good)
            else:
                if idx is not None:                      # an index no longer alone: as bytes
                    orng, o64 = self.idx_bytes(idx)
                    idx = None
                trng = rng_scale(self.int_rng(iv), scale)
                total = rng_add(I32 if orng is None else orng, trng)
                if o64 is not None or not within(total, I32):
                    prev = o64 if o64 is not None else (self.split64(off.regs[0]) if off is not None else None)
                    t64 = self.mul_const(Val("i64", self.wide(iv), rng=self.int_rng(iv)), scale, True, None).regs
                    o64 = t64 if prev is None else tuple(self.alu("ladd", a, b) for a, b in zip(prev, t64))
                orng = total
            off = Val("i32", (term if off is None else self.alu("iadd", off.regs[0], term),))
            ia = self.affine(iv, idx_op)
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
        wide = Val("i64", tuple(self.alu("ladd", y, self.const64(q)) for y in self.idx_wide(p.idx)))
        return self.alu("iadd", x, self.c32(q)), n, (r[0] + q, r[1] + q), wide, None

    def near_start(self, x: VReg, xr):
        """For an index x (range xr) to which another may be added: a bool, x >= -2^30, or None when
        xr says so; made where x is (the pointer p + x before a loop indexing it), dropped unused."""
        if not within(xr, I32) or xr[0] >= -(1 << 30):
            return None
        return self.bool_from_mask(self.flags("imax", x, self.c32(-(1 << 30))))

    def add_index(self, a, b, good):
        """(Val.idx, Val.good) of (p + x)[y], p + x having Val.idx a, y given as b, in the same
        elements.  Two 32-bit indices may sum past 32 bits; lanes whose x lies 2^30 or more elements
        before p fail (near_start), so the sum's low 32 bits compare exactly: forming such a pointer
        is undefined behaviour in C (C99 6.5.6), and any access through it is out of bounds but for
        an index y of 2^30 or more."""
        x0, n, r0, _, near = a
        x1, _, r1, _ = b
        wide = tuple(self.alu("ladd", u, v) for u, v in zip(self.idx_wide(a), self.idx_wide(b)))
        r = rng_add(r0, r1)
        if not within(r, EXACT) and near is not None and within(r1, I32):
            good = near if good is None else self.b_and(good, near)
            r = (-(1 << 30) + r1[0], r[1])
        x = self.alu("iadd", x0, x1)
        return (x, n, r, Val("i64", wide, rng=r), self.near_start(x, r)), good

    def int_rng(self, v: Val):
        """An interval holding integer v's true value (an i32 index counts as signed), or None."""
        if v.kind == "i64":
            return v.rng
        return v.rng if within(v.rng, I32) else I32

    def ir_rng(self, x):
        """An interval holding IR integer value x (see int_rng), from its Val or its IR, or None."""
        if isinstance(x, Const):
            return (x.value, x.value) if isinstance(x.value, int) and not isinstance(x.value, bool) else None
        v = self.vals.get(x)
        if v is not None and v.kind in ("i32", "i64"):
            return self.int_rng(v)
        if getattr(x, "type", None) in ("i32", "i16", "i8"):
            return I32
        if not isinstance(x, Inst) or x.op not in ("sext", "zext", "add", "sub"):
            return None
        if x.op in ("sext", "zext"):
            return (I32 if x.op == "sext" else U32) if x.ops[0].type in ("i32", "i16", "i8") else None
        return rng_add(self.ir_rng(x.ops[0]), self.ir_rng(x.ops[1]), 1 if x.op == "add" else -1)

    def index_parts(self, iv: Val):
        """(VReg of x's low 32 bits, k, x's range) for an index iv == x << k (Val.scaled)."""
        if iv.kind == "i64" and iv.scaled is not None:
            return iv.scaled
        return self.narrow(iv), 0, self.int_rng(iv)

    def idx_wide(self, idx) -> tuple:
        """The (odd, even) 64-bit values of a Val.idx's x."""
        x, n, xr, xv = idx[:4]
        if xv is not None:
            return self.wide(xv)
        return self.split64(x, signed=not within(xr, (0, U32[1])) or within(xr, I32))

    def idx_bytes(self, idx):
        """(Val.orng, Val.o64) of a pointer whose one variable term is Val.idx idx."""
        x, n, xr = idx[:3]
        r = rng_scale(xr, n)
        if within(r, I32):
            return r, None
        return r, self.mul_const(Val("i64", self.idx_wide(idx), rng=xr), n, True, None).regs

    def fits32(self, regs) -> VReg:
        """A bool per 32-bit lane: the (odd, even) 64-bit values lie in [-2^31, 2^31)."""
        c = self.const64(1 << 31)
        return self.bool_from_mask(self.flags("ior", self.high_words(tuple(self.alu("ladd", r, c) for r in regs)),
                                              self.c32(0)))

    def high_words(self, regs) -> VReg:
        """The high 32 bits of (odd, even) 64-bit values, as 32-bit lanes."""
        return self.join32(*(self.alu("ulsr", r, self.c32(32)) for r in regs))

    def carried_off(self, v: Val) -> VReg:
        """v's offset for a register that carries it on (a loop's pointer, a select): lanes whose offset
        left the 32-bit range get -2^31, which every bounds check finds out of bounds."""
        off = self.ptr_off(v)
        if v.off is None:
            return off
        if v.good is not None:
            off = self.select32(v.good, off, self.c32(-(1 << 31)))
        if v.idx is not None:
            orng, o64 = self.idx_bytes(v.idx)
        else:
            orng, o64 = v.orng, v.o64
        full = rng_add(orng, (v.coff, v.coff))
        if o64 is None and (orng is None or within(full, EXACT)):
            return off
        if o64 is None:
            o64 = self.split64(v.off.regs[0])
        if v.coff:
            o64 = tuple(self.alu("ladd", r, self.const64(v.coff)) for r in o64)
        return self.select32(self.fits32(o64), off, self.c32(-(1 << 31)))

    def param(self, k):
        if not 0 <= k < len(self.params):
            raise CodegenError("read beyond the kernel's arguments", self.line)
        return self.params[k]

    def load(self, i: Inst, p: VReg) -> Val:
        ptr = self.val(i.ops[0])
        b, ty = ptr.base, i.type
        if b == ("args",):
            if ptr.off is not None:     # LLVM merged accesses to different arguments: a[i] or b[i] per lane
                return self.either_arg(i)
            k = ptr.coff // 8
            pi = self.param(k)
            if pi.kind in ("global", "constant"):
                return Val("ptr", base=("param", k), gid_affine=(0, 0, None))
            if pi.kind == "local":    # the runtime puts the argument's offset in its group block here
                off = self.alu("iadd", self.local_base(), self.argval(PARAM_SLOT + k, pi.name))
                return Val("ptr", base=("local",), off=Val("i32", (off,)))
            return Val("ptr", base=("scalar", k))
        if b[0] == "scalar":
            if (b[1] in self.wide_args or ptr.coff or self.param(b[1]).size > type_size(ty)) and ptr.off is None \
                    and ty in ("i8", "i16", "i32", "float", "i64", "double"):     # a vector's or struct's element
                at = self.wide_args.get(b[1], PARAM_SLOT + b[1]) + ptr.coff // 8
                return self.wide_arg(at, ptr.coff % 8, ty)
            if ptr.off is not None or ptr.coff or ty not in ("i8", "i16", "i32", "float", "i64", "double", "ptr"):
                raise CodegenError(f"kernel argument '{self.param(b[1]).name}' of type "
                                   f"'{self.param(b[1]).type_name}' is not supported on the emulator device yet", self.line)
            r = self.argval(PARAM_SLOT + b[1], self.param(b[1]).name)
            k = self.kind_of(ty)
            return Val(k, (r,) if KINDS[k] == 1 else (r, r))
        if b == ("wg",):
            k = ptr.coff // 8
            if 7 <= k <= 9:
                return self.group_id(k - 7)
            r = self.argval(WG_SLOT + k, f"wg{k}")
            return Val("i64", (r, r))
        if b == ("ids",):
            return self.ids_value(ptr.coff // 8)
        if b[0] == "param":
            self.note_access(b[1], "load")
            self.check_bounds(b[1], ptr, type_size(ty), p, defer=True)
        if b == ("priv",) and ptr.off is not None and p is not None:
            self.check_private(ptr, type_size(ty), p, store=False)
        if b[0] in ("param", "local", "priv", "global") and type_size(ty) < 4:
            return self.narrow_load(ptr, ty, p)
        if b[0] == "global":
            return self.gather(b[1], ptr, ty, p)
        if b[0] == "param":
            size = type_size(ty)
            aff = ptr.gid_affine
            if self.one_d and size == 4 and aff is not None and aff[0] == 4 and aff != (4, 0, None) \
                    and self.is_replicated(b[1]):
                return Val(self.kind_of(ty), (self.shifted_load(b[1], aff),))
            if self.one_d and size == 4 and aff == (4, 0, None):
                reg = self.fast_load(b[1])[0]
                return Val(self.kind_of(ty), (reg,))
            if size in (4, 8) and aff is not None and aff[0] == 0 and self.is_replicated(b[1]):
                return self.uniform_load(b[1], aff, ty)
            return self.gather(b[1], ptr, ty, p)
        if b == ("local",):
            return self.gather("L", ptr, ty, p)
        if b == ("priv",):
            return self.private_access(ptr, ty)
        raise CodegenError("a load through this pointer is not supported on the emulator device yet", self.line)

    def either_arg(self, i: Inst) -> Val:
        """`load ptr` from the argument list at `select c, A, B` (how LLVM merges `c ? a[i]++ : b[i]--`):
        the pointer argument A or B per lane."""
        g = i.ops[0]
        sel = g.ops[-1] if isinstance(g, Inst) and g.op == "getelementptr" and len(g.ops) == 2 else None
        if not (isinstance(sel, Inst) and sel.op == "select" and all(isinstance(x, Const) for x in sel.ops[1:])):
            raise CodegenError("a pointer chosen per work-item among kernel arguments is not supported on the "
                               "emulator device", self.line)
        base = self.val(g.ops[0])
        at = [self.proxy("ptr", Val("ptr", base=base.base, coff=base.coff + x.value * type_size(g.elem)))
              for x in sel.ops[1:]]
        a, b = (self.load(Inst("load", i.name, "ptr", [x], elem="ptr", line=i.line), None) for x in at)
        return self.select(self.val(sel.ops[0]).regs[0], a, b)

    def on_either(self, i: Inst, k: int, p: VReg):
        """A load, store or GEP through a pointer into one of two buffers (Val.base ("either", c, A, B)):
        the access on each, under the lanes that point there; a load's value selected between them."""
        _, c, a, b = self.val(i.ops[k]).base
        out = []
        for x, q in ((a, self.b_and(p, c) if p is not None else None),
                     (b, self.b_and(p, self.b_not(c)) if p is not None else None)):
            ops = list(i.ops)
            ops[k] = self.proxy("ptr", x)
            fake = Inst(i.op, i.name, i.type, ops, text=i.text, elem=i.elem, line=i.line)
            self.inst(fake, q)
            out.append(self.vals.get(fake))
        if i.op != "store":
            return self.select(c, out[0], out[1])

    def store(self, i: Inst, p: VReg):
        self.store_to(i, p)
        # a store may change what the loads of any buffer the kernel writes would see
        self.fast_cache = {key: v for key, v in self.fast_cache.items()
                           if self.is_replicated(key[0] if isinstance(key, tuple) else key)}
        self.stored = True

    def store_to(self, i: Inst, p: VReg):
        v, ptr = self.val(i.ops[0]), self.val(i.ops[1])
        b = ptr.base
        if b == ("priv",):
            size = type_size(i.ops[0].type)
            if ptr.off is not None:
                p = self.check_private(ptr, size, p, store=True)
            if size < 4:
                wp = self.word_ptr(ptr)
                old = self.private_access(wp, "i32").regs[0]
                sh = self.alu("ilsl", self.alu("iand", self.ptr_off(ptr), self.c32(4 - size)), self.c32(3))
                bits = self.c32((1 << 8 * size) - 1)
                new = self.alu("ior", self.alu("iand", old, self.alu("inot", self.alu("ilsl", bits, sh))),
                               self.alu("ilsl", self.alu("iand", v.regs[0], bits), sh))
                return self.private_access(wp, "i32", Val("i32", (new,)), p)
            return self.private_access(ptr, i.ops[0].type, v, p)
        if b == ("local",):
            k, name = "L", "__local memory"
        elif b[0] == "param":
            k, name = b[1], self.param(b[1]).name
            self.note_access(k, "store")
        else:
            raise CodegenError("a store through this pointer is not supported on the emulator device yet", self.line)
        size = type_size(i.ops[0].type)
        whole = p is self.active
        if k != "L" and ptr.gid_affine is not None and ptr.gid_affine[0] == 0:
            p = self.elect(p)     # every lane stores to one element: one of them, not their sum
        if k != "L":              # a store out of bounds is dropped (and reported)
            p = self.b_and(p, self.check_bounds(k, ptr, size, p, store=True))
        if self.one_d and size == 4 and ptr.gid_affine == (4, 0, None) and k != "L":
            # every lane stores when the wave is full and inside the buffer: nothing to merge with
            full = f"(%wx + 1) * {self.lay.wave} <= %gx and {self.wave_in_bounds(k, ptr.gid_affine, size)}"
            return self.fast_store(k, v.regs[0], p, full=full if whole else None)
        if size in (1, 2, 4, 8):
            return self.scatter(k, ptr, v.regs, p, size, self.id_form(i.ops[1], k == "L"), i.block)
        raise CodegenError(f"stores of {size}-byte elements to '{name}' are not supported on the emulator "
                           f"device yet", self.line)

    # private arrays --------------------------------------------------------------------------
    def private_layout(self):
        """(alloca -> byte offset, bytes, words of each work-item's block) of the private arrays."""
        allocas = [x for b in self.f.blocks for x in b.insts if x.op == "alloca"]
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
        if not hasattr(self, "_priv"):
            offs, total, words = self.private_layout()
            base = 4 * self.CH
            if base + 8 * words > self.lm_top:
                raise CodegenError(f"private arrays need {total} bytes per work-item (a block of {4 * words}: "
                                   f"blocks are powers of two); the emulator device has "
                                   f"{(self.lm_top - base) // 8 * 4} (LM0 holds eight work-items' arrays"
                                   f"{' and the tables of x[j] loads' if self.lm_top < self.lay.lm_words else ''})",
                                   self.line)
            saved, self.items = self.items, []
            lanes = []
            for h in (0, 1):          # (2 * cycle + lane) * words + base, in each long word's low half
                t = self.alu("ilsl", self.cycle, self.c32(words.bit_length()))
                lanes.append(self.alu("iadd", t, self.c32(base + h * words)))
            self.prologue += self.items
            self.items = saved
            self._priv = (offs, words, lanes)
        return self._priv[0][i]

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
        return self.b_and(p, self.check_bounds(("priv", nbytes), rel, size, p, store=store))

    def private_access(self, ptr: Val, ty: str, v: Val = None, p: VReg = None):
        """A load (v None) or masked store of each lane's own private element, T-indirect in LM0."""
        size = type_size(ty)
        if size not in (4, 8):
            raise CodegenError(f"private {ty} ({size}-byte) elements are not supported on the emulator device yet",
                               self.line)
        _, words, lanes = self._priv
        w = self.alu("uilsr", self.ptr_off(ptr), self.c32(2))
        w = self.alu("iand", self.alu("ixor", w, self.c32(1)) if size == 4 else w, self.c32(words - 1))
        lm = (("r", "m", 4 * self.CH, 4 * self.CH + 8 * words),)
        lmw = lm + (("w", "m", 4 * self.CH, 4 * self.CH + 8 * words),)
        out = []
        for h in (0, 1):          # the upper (odd) lane, then the lower one
            lane = self.alu("ulsr", w, self.c32(32)) if h == 0 else self.alu("land", w, self.const64(0xFFFFFFFF))
            self.op("lpassa {s0} $t", "alu", (), (self.alu("ladd", lane, lanes[h]),), mem=TW)
            if size == 8:
                if v is None:
                    r = self.new("priv")
                    self.op("lpassa $lmt0 {d0}", "alu", (r,), (), mem=lm + TR)
                    out.append(r)
                else:
                    km = self.flags("lnot", self.widen_bool(p)[h])
                    self.op("lpassa {s0} $lmt0/{k0}", "alu", (), (v.regs[h],), msrc=(km,), mem=lmw + TR)
            elif v is None:
                r = self.new("priv")
                self.op("ipassa $mt0 {d0}", "alu", (r,), (), mem=lm + TR)
                out.append(r)
            else:
                val = v.regs[0] if h == 0 else self.alu("llsl", v.regs[0], self.c32(32))
                pm = p if h == 0 else self.alu("llsl", p, self.c32(32))
                self.op("ipassa {s0} $mt0/{k0}", "alu", (), (val,), msrc=(self.mask_of(pm),), mem=lmw + TR)
        if v is not None:
            return None
        if size == 8:
            return Val(self.kind_of(ty), tuple(out))
        hi = self.alu("land", out[0], self.const64(0xFFFFFFFF00000000))
        return Val(self.kind_of(ty), (self.alu("lor", hi, self.alu("ulsr", out[1], self.c32(32))),))

    def scatter_setup(self):
        """Per-PE constants of the scatter (made once): the PE's reduction digit and Z base.

        PEs 0..3 of MAB 0 of L1B 0 of L2B 0 of group 0 are *designated*: their
        reduction source is the broadcast chunk itself (old values plus their
        own stores), every other PE's is its zeroed Z area holding V - old for its
        stores, so the sum up the tree is the new chunk."""
        if not hasattr(self, "_scat"):
            saved, self.items = self.items, []
            n_words = 2 * self.CH
            ids = {}
            for name in ("subpeid", "mabid", "l1bid", "l2bid"):
                ids[name] = self.new(name)
                self.op(f"ipassa ${name} {{d0}}", "alu", (ids[name],))
            nz = self.alu("ior", self.alu("ior", ids["mabid"], ids["l1bid"]), ids["l2bid"])
            des = self.bool_from_mask(self.flags("uimin", nz, self.c32(0)))      # nz <= 0: designated
            zoff = self.alu("iand", self.b_not(des), self.c32(n_words))           # Z base (words): the chunk or Z
            tz = self.alu("iadd", zoff, self.alu("ilsl", ids["subpeid"], self.c32(1)))
            self.zero_z()             # Z starts zeroed (and every scatter leaves it so)
            self.prologue += self.items
            self.items = saved
            self._scat = (ids["subpeid"], zoff, tz)
        return self._scat

    def zero_z(self):
        n_words = 2 * self.CH
        for w in range(n_words, 2 * n_words, 16):
            self.op(f"zero $llm{w}v", "alu", mem=(("w", "m", w, w + 16),))

    SCATTER_BATCH = 32                    # stores one pass over a buffer's chunks applies at most

    def scatter(self, k, ptr: Val, regs: tuple, p: VReg, size: int = 4, form=None, block=None):
        """Masked store of lane values at any offsets of buffer k: 32-bit ones, the low bytes of
        them (size 1, 2), or 64-bit ones (regs: odd and even work-items'; an 8-byte element is
        aligned to 8 bytes, as OpenCL C requires, and a misaligned one is stored at the aligned
        long word below).

        Consecutive stores to one buffer in one basic block, with nothing between
        them that may read them (may_see_stores), are batched: one pass over the
        buffer's chunks applies them all (scatter_pass).  flush_scatters ends a
        batch."""
        self.note_access(k, "gather")
        self.settle_stores(whole_buffer=True)
        if k not in self.resident:
            self.remark(k, "scattered")
            self.scatters |= isinstance(k, int)        # (not __local scratch)
        if self.batch and self.batch[0] != k:
            self.flush_scatters()
        aff = ptr.gid_affine
        if k in self.resident and size == 4 and aff is not None and aff[0] == 0:
            return self.resident_store_uniform(k, aff, regs[0], p)
        off = self.ptr_off(ptr)
        rel = self.alu("uilsr", off, self.c32(2), hint="widx")
        entry = (size, self.select32(p, rel, self.c32(-1)))
        # (its byte in the word: claims are per (word, byte); when it may collide, its index's form)
        claim = (self.alu("iand", off, self.c32(4 - size)) if size < 4 else self.c32(0),
                 self.may_collide(k, aff, size, form, block), aff, size, form)
        if size in (4, 8):
            entry += tuple(regs)
        else:                      # its value, and the bytes it replaces, in place in the word
            sh = self.alu("ilsl", self.alu("iand", off, self.c32(4 - size)), self.c32(3))
            bits = self.c32((1 << 8 * size) - 1)
            entry += (self.alu("ilsl", self.alu("iand", regs[0], bits), sh), self.alu("ilsl", bits, sh))
        if k in self.resident:
            return self.resident_write(k, entry)
        if not self.batch:
            self.batch = (k, [], self.items, [])
        self.batch[1].append(entry)
        self.batch[3].append(claim)
        if len(self.batch[1]) == self.SCATTER_BATCH:
            self.flush_scatters()

    def elect(self, p: VReg) -> VReg:
        """The one lane of the wave, among those where p, that stores to an element all of them store
        to (the one in the highest slot): a scatter sums the changes of different PEs, so `flag[0] = 1`
        from many work-items would add up.  Each lane offers its slot + 1 where p, else 0; the
        offers' maximum goes up the tree (l1bmr, l2bmr, mvr with fmax: sign-magnitude order, so
        the integer order of these) into group 0's PDM, comes back to every PE (mvb, l2bmb, l1bmp)
        and each PE folds the 16 long words of its MAB's cycles and PEs, its cycles and its lanes.
        The stores of one block under one predicate share their election; a launch of one
        work-item (%items, the sequencer knows) skips it."""
        if p in self.elected:
            return self.elected[p]
        self.uses["items"] = True
        outer, self.items = self.items, []
        lc, lb = self.shared_area("elect", 64, 64)
        offer = self.select32(p, self.slot1(), self.c32(0))
        self.op(f"l1bmrfmax {{s0}} $lb{lb}", "l1bm", (), (offer,), mem=(("w", "lb", lb, lb + 16),))
        self.op(f"l2bmrfmax $lb{lb} $lc{lc}", "l2bm", mem=(("r", "lb", lb, lb + 64), ("w", "lc", lc, lc + 64)))
        self.op("nop", "nop")
        self.op("nop", "nop")
        for mv in (f"mvrfmax/n64i{{t}} $lc{lc} $p0@0", f"mvb/n64i{{t}} $p0@0 $lc{lc}"):
            t = self.tag()
            self.items.append(MV(mv.format(t=t), "0", self.line))
            self.op(f"wait i{t}", "wait")
        self.items.append(self.l2bmb(lc, lb))
        for u in (0, 1):                   # into the gather area (free between gathers and scatters)
            self.op(f"l1bmp $llb{lb + 8 * u} $llm{16 * u}v", "l1bm",
                    mem=(("r", "lb", lb + 8 * u, lb + 8 * u + 8), ("w", "m", 16 * u, 16 * u + 16)))
        m = self.new("best")
        self.op("lpassa $lm0v {d0}", "alu", (m,), (), mem=(("r", "m", 0, 8),))
        for a in (8, 16, 24):              # cycle c: long words c, 4 + c, 8 + c, 12 + c
            self.op(f"imax {{s0}} $lm{a}v {{d0}}", "alu", (m,), (m,), mem=(("r", "m", a, a + 8),))
        self.op("lpassa {s0} $lm0v", "alu", (), (m,), mem=(("w", "m", 0, 8),))
        for a in (0, 2, 4, 6):             # every cycle: the four cycles' (plain operands)
            if a == 0:
                self.op("lpassa $lm0 {d0}", "alu", (m,), (), mem=(("r", "m", 0, 8),))
            else:
                self.op(f"imax {{s0}} $lm{a} {{d0}}", "alu", (m,), (m,), mem=(("r", "m", 0, 8),))
        swapped = self.alu("lor", self.alu("ulsr", m, self.c32(32)), self.alu("llsl", m, self.c32(32)))
        best = self.alu("imax", m, swapped)
        win = self.elected[p] = self.copy(self.c32(0), self.new("win"))
        self.masked_copy(self.c32(-1), win, self.flags("ixor", best, self.slot1()))
        elect, self.items = self.items, []
        self.copy(p, win)
        outer.append(SeqIf("%items > 1", elect, self.items))
        self.items = outer         # (the same list: a batch of stores began in it)
        return win

    def flush_scatters(self):
        """Emit the batched stores (before anything that may read or reorder what they write)."""
        if self.batch:
            k, entries, items, infos = self.batch
            self.batch = None
            self.batched |= len(entries) > 1
            assert items is self.items, "a batch of stores must end where it began"
            whens = [w for _, w, *_ in infos]
            if len(infos) > 1 and (any(whens) or self.stores_overlap(infos)):
                whens = [self.batch_meets(k, infos)] * len(infos)   # (one store's lanes may meet another's)
            claims = [(boff, w) if w else None for (boff, *_), w in zip(infos, whens)]
            if any(whens):
                self.colliding.add(k)
            self.scatter_pass(k, entries, claims)

    def scatter_pass(self, k, entries, claims=None):
        """One pass over buffer k's chunks that applies the stores `entries`: (size, word index or
        -1 where the lane does not store, the value in place in its word[, the bits it replaces])
        or (8, index of the low word, odd and even work-items' values).

        Chunk by chunk the buffer is broadcast to every PE's LM0 (as for a gather),
        each PE adds new - old for a word to its Z copy of it with T-indirect
        accesses (new keeps the word's other bytes for a narrow store), and the
        sum of the Z copies goes up the tree: l1bmr over the MABs, each PE of a MAB
        sending the quarter of the chunk its reduction digit (subpeid) names,
        l2bmr over the L1Bs and mvr over the L2Bs into DRAM.  The designated PEs
        send the chunk itself (old values plus their own changes), so the sum is
        old + every change.  A PE's changes reach the PE of the word's digit in
        one of two ways: one store's (index, value) pairs rotate through L1BM in
        four rounds, each PE taking its L1B neighbour i + r's (apply_rotated);
        a batch of them is applied by each PE to its own lanes, and the Z
        quarters then rotate within the MAB with msl/msr (apply_batch), which
        costs once per chunk instead of once per store.  Where two lanes may store
        to one element (claims: may_collide), a claim pass per chunk (claim_winners)
        first picks one of them per element (per byte for narrow stores), so the
        element ends up holding one of the stored values, not their changes' sum."""
        lay = self.lay
        S, G, CH = lay.stripe, lay.groups, self.CH
        n_words = 2 * CH
        self.uses.setdefault("bases", set()).add(k)
        self.uses.setdefault("rows", set()).add(k)
        claims = claims or [None] * len(entries)
        claimed = any(c is not None for c in claims)
        rotated = len(entries) == 1 and entries[0][0] != 8 and not claimed
        keys = self.claim_keys(claims) if claimed else None
        if rotated:
            areas = self.rotate_areas(entries[0])
        glc, _ = self.gather_area()
        red_lc, red_lb = self.shared_area("reduce", CH, CH)
        cb = self.copy(self.c32(0), self.new("chunk"))
        outer, self.items = self.items, []
        r, c = self.seq_reg("r"), self.seq_reg("c")
        for g in range(G):
            body_outer, self.items = self.items, []
            tg = self.tag()
            daddr = f"%b{k}+{r}*{S}+{c}*{CH}"
            self.items.append(MV(f"mvb/n{CH}i{tg} $d0@{g} $lc{glc}", daddr, self.line))
            self.op(f"wait i{tg}", "wait")
            self.chunk_to_lm0()
            # the sum up the tree, straight into this chunk's place in DRAM
            if rotated:
                self.apply_rotated(entries[0], areas, cb)
                self.op("lpassa {s0} $t", "alu", (), (self.scatter_setup()[2],), mem=TW)
                for s_ in range(CH // 16):
                    self.op(f"l1bmriiadd $lmt{32 * s_}v4 $lb{red_lb + 16 * s_}", "l1bm",
                            mem=(("r", "m", 0, 2 * n_words),) + TR + (("w", "lb", red_lb + 16 * s_, red_lb + 16 * s_ + 16),))
            else:
                here = self.claim_winners(entries, claims, keys, cb) if claimed else entries
                for s_, acc in enumerate(self.apply_batch(here, cb)):
                    self.op(f"l1bmriiadd {{s0}} $lb{red_lb + 16 * s_}", "l1bm", (), (acc,),
                            mem=(("w", "lb", red_lb + 16 * s_, red_lb + 16 * s_ + 16),))
            self.sum_into_dram(g, daddr)
            self.alu("iadd", cb, self.c32(n_words), dst=cb)
            chunk_items = self.items
            self.items = body_outer
            self.items.append(SeqLoop(c, "0", str(S // CH), chunk_items))
        loop = SeqLoop(r, "0", f"%rows{k}", self.items)
        self.items = outer
        self.items.append(loop)

    def may_collide(self, k, aff, size: int, form=None, block=None):
        """When two lanes of a wave may store to one element, and the scatter claims: a sequencer
        condition, or None for never.  Never when the index is affine in the global id with a
        coefficient of at least the element's size (every work-item its own element; in the
        general form, for a 1-D launch: %items == %gx), nor when it is uniform and elect picked one
        lane (not for __local scratch); else, where the store's form in the work-item ids
        (idforms.py) is one-to-one under conditions on the launch's sizes (and on the ids, by the
        branches its block is under), when they fail; else when the launch has more than one
        work-item."""
        if aff is not None and aff[0] == 0 and k != "L":
            return None
        apart = aff is not None and aff[0] != 0 and abs(aff[0]) >= size     # in get_global_id(0)
        if apart and self.one_d:
            return None
        conds = None if form is None else idforms.injective(form, size, self.extent_of(k == "L", block),
                                                             self.lay.wave)
        if conds is None:
            return "%items > %gx" if apart else "%items > 1"
        return f"not ({' and '.join(conds)})" if conds else None

    def id_form(self, x, local: bool):
        """The form of pointer x in the work-item ids (idforms.py) over the lanes a store's claim is
        among: a work-group's for __local memory (a global id is its local id plus a part uniform
        there), the wave's for __global (a local or group id is not a form there)."""
        def leaf(y):
            if isinstance(y, Inst) and y.op == "call" and y.callee == "__mncl_local":
                return {("u", "local"): 1}
            if isinstance(y, Inst) and y.op == "load":
                ptr = self.vals.get(y.ops[0])
                if ptr is not None and ptr.kind == "ptr" and ptr.off is None and ptr.base in (("ids",), ("wg",), ("args",)):
                    k = ptr.coff // 8
                    if ptr.base == ("ids",):
                        field = ("id", k % 3, 0, None, None)
                        if k < 3:
                            return {field: 1} if local else None
                        return {field: 1, ("u", ("group base", k)): 1} if local else {field: 1}
                    if ptr.base == ("wg",) and 7 <= k <= 9 and not local:
                        return None      # a group id varies over a wave
                    return {("u", (ptr.base, ptr.coff)): 1}
            if isinstance(y, (Inst, Arg)) and (e := self.seq_expr(y)) is not None:
                return {("u", id(y), e): 1}
            return None
        if x in self.elem_of:             # element j of a vector access: its pointer's form + j's offset
            x, off = self.elem_of[x]
            f = idforms.form_of(x, leaf)
            return None if f is None else idforms.add(f, {idforms.ONE: off} if off else {})
        return idforms.form_of(x, leaf)

    def extent_of(self, local: bool, block=None):
        """extent(d): how far the ids of the lanes that may meet span in dimension d, as the
        sequencer names it (the local size; for __global, the wave's extent within the global
        size: %ex = min(wave, global size)), or 1 (a 1-D launch's y and z); no further than U
        where the block runs only in lanes whose id is below U (`if (j < nj)`: ids start at 0)."""
        below = self.ids_below(block, local) if block is not None else {}

        def extent(d):
            if self.one_d and d:
                return 1
            name = ("lsx", "lsy", "lsz")[d] if local else ("ex", "ey", "ez")[d]
            self.uses.setdefault("extents", set()).add(name)
            return f"(%{name} if %{name} < {below[d]} else {below[d]})" if d in below else f"%{name}"
        return extent

    def ids_below(self, block, local: bool) -> dict:
        """{d: U}: block runs only where the id in dimension d (the local id for __local) is below
        the uniform U, by the conditional branches into the blocks that dominate it."""
        if not hasattr(self, "_dom"):
            self._dom = idforms.dominators(self.rpo, self.preds)
        out = {}
        for d in self._dom.get(block, ()):
            ps = self.preds.get(d, [])
            if len(ps) != 1 or self.bmap[ps[0]].insts[-1].op != "br" or len(self.succ[ps[0]]) != 2:
                continue
            br = self.bmap[ps[0]].insts[-1]
            t, f = self.succ[ps[0]]
            if t != f:
                out.update(idforms.id_below(br.ops[0], d == t, lambda x: self.id_form(x, local), self.seq_expr))
        return out

    def batch_meets(self, k, infos):
        """When a store of a batch may meet another work-item's other store (claims for all of
        them): any store's own condition, or a pair's that stores_overlap cannot rule out and their
        forms cannot either (idforms.meet); "%items > 1" where nothing is known."""
        conds, nearest = {w for _, w, *_ in infos if w}, {}
        for x, a in enumerate(infos):
            for b in infos[x + 1:]:
                if not self.stores_overlap([a, b]):
                    continue
                m = None if a[4] is None or b[4] is None else \
                    idforms.meet(a[4], b[4], a[3], b[3], self.extent_of(k == "L"))
                if m is None:
                    return "%items > 1"
                for d, span in m:            # (of two distances within one span, the nearer decides)
                    nearest[span] = min(d, nearest.get(span, d))
        conds |= {f"{d} <= {span}" for span, d in nearest.items()}
        if "%items > 1" in conds or not conds:
            return "%items > 1" if conds else None
        return " or ".join(f"({c})" for c in sorted(conds))

    @staticmethod
    def stores_overlap(infos) -> bool:
        """Whether a work-item's store of a batch may meet another work-item's other store: unless
        the two indices are affine in the global id with one coefficient c and offsets that keep
        their elements apart for every other work-item (o[6 i + 1] and o[6 i + 2] never meet;
        o[i] and o[i + 1] do), or both uniform (elected together)."""
        for x, (_, _, a1, s1, *_) in enumerate(infos):
            for _, _, a2, s2, *_ in infos[x + 1:]:
                if a1 is None or a2 is None:
                    return True
                if a1[0] == a2[0] == 0:
                    continue
                c, delta = a1[0], a2[1] - a1[1]
                if a2[0] != c or a2[2] != a1[2] or c == 0:
                    return True
                if any(-s2 < delta - c * d < s1 for d in range(delta // c - 2, delta // c + 3) if d != 0):
                    return True
        return False

    def slot1(self) -> VReg:
        """slot + 1 (made once): a lane's id across the machine, never 0."""
        if not hasattr(self, "_slot1"):
            saved, self.items = self.items, []
            self._slot1 = self.alu("iadd", self.slot, self.c32(1), hint="slot1")
            self.prologue += self.items
            self.items = saved
        return self._slot1

    def claim_keys(self, claims) -> list:
        """Each claiming store's key in each lane: slot + 1 above the store's place in the batch, so a
        later store of a work-item outranks its earlier ones (the element ends with a value some
        order of the stores leaves).  Keys are positive and below 2^30: fmax (sign-magnitude) orders
        them as integers."""
        shift = (8 * self.lay.n_pe).bit_length()         # slots: below the machine's 32-bit lanes
        if (self.SCATTER_BATCH << shift) > 1 << 30:
            raise CodegenError(f"a machine of {8 * self.lay.n_pe} lanes is too big for the scatter's claims", self.line)
        return [None if c is None else self.alu("iadd", self.slot1(), self.c32(e << shift))
                for e, c in enumerate(claims)]

    def claim_winners(self, entries, claims, keys, cb):
        """The entries as apply_batch is to apply them in this chunk: a claiming lane's word index
        is -1 where it lost its element.

        Each claiming lane writes its key to its word in a zeroed claim copy (the Z area; lanes of a
        PE overwrite one another), the copies' maximum goes up the tree (claim_max) and comes back to
        every PE, and a lane whose key is there won.  Narrow stores claim in one round per byte of
        the word, so stores to different bytes of one word all land, and each round's winners are
        an entry of their own: apply_batch's lanes of one PE must not change one word in one step
        (each would add its change to the Z word all of them read).  A launch of one work-item
        (%items, the sequencer knows) skips the claims, and so does a 1-D launch of stores that
        collide only in more dimensions (may_collide)."""
        n_words = 2 * self.CH
        lm_all = (("r", "m", 0, 2 * n_words), ("w", "m", 0, 2 * n_words))
        self.uses["items"] = True
        rounds = {e: range(0, 4, size) if size < 4 else range(1)
                  for e, ((size, *_), c) in enumerate(zip(entries, claims)) if c is not None}
        won = {(e, b): self.copy(entries[e][1] if b == 0 else self.c32(-1), self.new("claimed"))
               for e, bs in rounds.items() for b in bs}
        outer, self.items = self.items, []
        words = {}
        for e in rounds:
            size, idx = entries[e][:2]
            words[e] = self.chunk_word(self.alu("iand", idx, self.c32(-2)) if size == 8 else idx, cb)
            self.copy(self.c32(-1), won[(e, 0)])
        for b in range(0, 4, min(entries[e][0] for e in rounds)):
            here = {e: x for e, x in words.items() if b in rounds[e]}
            if not here:
                continue
            for e, (_, wa, inr) in here.items():
                cond = inr if entries[e][0] >= 4 else \
                    self.b_and(inr, self.bool_from_mask(self.flags("ixor", claims[e][0], self.c32(b))))
                for ta, up in self.lanes(wa):
                    self.op("lpassa {s0} $t", "alu", (), (ta,), mem=TW)
                    self.op(f"ipassa {{s0}} $mt{n_words}/{{k0}}", "alu", (), (up(keys[e]),),
                            msrc=(self.mask_of(up(cond)),), mem=lm_all + TR)
            self.claim_max()
            for e, (_, wa, _) in here.items():
                got = []
                for ta, _ in self.lanes(wa):
                    self.op("lpassa {s0} $t", "alu", (), (ta,), mem=TW)
                    got.append(self.new("winner"))
                    self.op(f"ipassa $mt{n_words} {{d0}}", "alu", (got[-1],), (), mem=lm_all[:1] + TR)
                best = self.alu("lor", self.alu("land", got[0], self.const64(0xFFFFFFFF00000000)),
                                self.alu("ulsr", got[1], self.c32(32)))
                self.masked_copy(entries[e][1], won[(e, b)], self.flags("ixor", best, keys[e]))
            self.zero_z()
        when = {c[1] for c in claims if c is not None}         # (one work-item: nothing to claim)
        if "%gx" in " ".join(when):
            self.uses["launch"] = True
        outer.append(SeqIf("%items > 1" if "%items > 1" in when else " or ".join(f"({w})" for w in sorted(when)),
                           self.items, []))
        self.items = outer
        out = []
        for e, entry in enumerate(entries):
            out += [(entry[0], won[(e, b)]) + tuple(entry[2:]) for b in rounds[e]] if e in rounds else [entry]
        return out

    def claim_max(self):
        """The maximum of every PE's claim copy (its Z area) into every PE's Z area: within the MAB
        (quarter_sums with imax), over the MABs (l1bmr), the L1Bs (l2bmr) and the L2Bs and groups
        (mvr) into group 0's PDM, and back (mvb, l2bmb, l1bmp), all with fmax (the keys are
        positive: sign-magnitude order is their integer order)."""
        CH, n_words = self.CH, 2 * self.CH
        _, red_lb = self.shared_area("reduce", CH, CH)
        glc, _ = self.gather_area()
        for s_, acc in enumerate(self.quarter_sums(self.claim_bases(), "imax")):
            self.op(f"l1bmrfmax {{s0}} $lb{red_lb + 16 * s_}", "l1bm", (), (acc,),
                    mem=(("w", "lb", red_lb + 16 * s_, red_lb + 16 * s_ + 16),))
        red_lc = self.reduce_l1bs("fmax")
        for mv in (f"mvrfmax/n{CH}i{{t}} $lc{red_lc} $p0@0", f"mvb/n{CH}i{{t}} $p0@0 $lc{glc}"):
            t = self.tag()
            self.items.append(MV(mv.format(t=t), "0", self.line))
            self.op(f"wait i{t}", "wait")
        self.chunk_to_lm0(n_words)

    def claim_bases(self):
        """T-indirect bases (words) of the Z quarters each PE sends in the four rounds of claim_max:
        digit (subpeid + r) & 3 (made once)."""
        return [self.z_digit_base(r) for r in range(4)]

    def z_digit_base(self, r: int) -> VReg:
        """The T-indirect base (words) of digit (subpeid + r) & 3 of a PE's Z copy (made once)."""
        bases = self.__dict__.setdefault("_z_digit_bases", {})
        if r not in bases:
            sub, _, _ = self.scatter_setup()
            saved, self.items = self.items, []
            digit = self.alu("iand", self.alu("iadd", sub, self.c32(r)), self.c32(3))
            bases[r] = self.alu("iadd", self.alu("ilsl", digit, self.c32(1)), self.c32(2 * self.CH))
            self.prologue += self.items
            self.items = saved
        return bases[r]

    def reduce_l1bs(self, rop: str) -> int:
        """The reduce area's L1BM over the L2B's L1Bs (l2bmr<rop>) into its L2BM, settled for an
        mvr (two steps); returns the L2BM address."""
        CH = self.CH
        red_lc, red_lb = self.shared_area("reduce", CH, CH)
        for t in range(CH // 64):
            self.op(f"l2bmr{rop} $lb{red_lb + 64 * t} $lc{red_lc + 64 * t}", "l2bm",
                    mem=(("r", "lb", red_lb + 64 * t, red_lb + 64 * t + 64),
                         ("w", "lc", red_lc + 64 * t, red_lc + 64 * t + 64)))
        self.op("nop", "nop")
        self.op("nop", "nop")
        return red_lc

    def sum_into_dram(self, g: int, daddr: str):
        """The MAB sums in the reduce area's L1BM, summed over the L1Bs (l2bmr) and the L2Bs (mvr)
        into group g's DRAM at daddr; Z is zeroed again."""
        red_lc = self.reduce_l1bs("iiadd")
        tg = self.tag()
        self.items.append(MV(f"mvriiadd/n{self.CH}i{tg} $lc{red_lc} $d0@{g}", daddr, self.line))
        self.op(f"wait i{tg}", "wait")
        self.zero_z()

    def rotate_areas(self, entry):
        """One store's registers in L1BM, twice over (round r reads up to 3 long words past the first copy)."""
        P = self.lay.pe_l1b
        areas = [self.shared_area(("rotate", j), 0, 8 * P)[1] for j in range(len(entry) - 1)]
        for area, reg in zip(areas, entry[1:]):
            for copy in (0, 4 * P):
                self.op(f"l1bmd {{s0}} $lb{area + copy}", "l1bm", (), (reg,),
                        mem=(("w", "lb", area + copy, area + copy + 4 * P),))
        return areas

    def chunk_word(self, idx: VReg, cb: VReg):
        """(the word's offset in the chunk, its T-indirect word address there, bool: it is in this
        chunk) of a word index."""
        n_words = 2 * self.CH
        w = self.alu("isub", idx, cb)
        inr = self.bool_from_mask(self.flags("uimin", w, self.c32(n_words - 1)))
        return w, self.alu("iand", self.alu("ixor", w, self.c32(1)), self.c32(n_words - 1)), inr

    def apply_word(self, ta: VReg, new: VReg, bits, cond: VReg, z):
        """At the T-indirect word ta of the chunk (upper halves), where cond: Z[z + ta] += new - old
        (new keeps the old word's other bytes when bits is given).  z is a register (the word
        offset of each PE's Z) or, for apply_batch, the offset of everyone's, and then the chunk
        takes new too, so a later store to the word in the batch changes it from there."""
        n_words = 2 * self.CH
        lm_all = (("r", "m", 0, 2 * n_words), ("w", "m", 0, 2 * n_words))
        self.op("lpassa {s0} $t", "alu", (), (ta,), mem=TW)
        old = self.new("old")
        self.op("ipassa $mt0 {d0}", "alu", (old,), (), mem=lm_all[:1] + TR)
        if bits is not None:
            new = self.alu("ior", self.alu("iand", old, self.alu("inot", bits)), new)
        at = f"$mt{z}" if isinstance(z, int) else "$mt0"
        if not isinstance(z, int):
            self.op("lpassa {s0} $t", "alu", (), (self.alu("iadd", ta, z),), mem=TW)
        zv = self.new("z")
        self.op(f"ipassa {at} {{d0}}", "alu", (zv,), (), mem=lm_all[:1] + TR)
        d = self.alu("iadd", zv, self.alu("isub", new, old))
        k = self.mask_of(cond)
        self.op(f"ipassa {{s0}} {at}/{{k0}}", "alu", (), (d,), msrc=(k,), mem=lm_all + TR)
        if isinstance(z, int):
            self.op("ipassa {s0} $mt0/{k0}", "alu", (), (new,), msrc=(k,), mem=lm_all + TR)

    def apply_long(self, ta: VReg, new: VReg, cond: VReg, z: int):
        """apply_word for a 64-bit value (two 32-bit words, each summed as the reduction sums them)
        at the even T-indirect word ta, where the long-word bool cond."""
        n_words = 2 * self.CH
        lm_all = (("r", "m", 0, 2 * n_words), ("w", "m", 0, 2 * n_words))
        self.op("lpassa {s0} $t", "alu", (), (ta,), mem=TW)
        old, zv = self.new("old"), self.new("z")
        self.op("lpassa $lmt0 {d0}", "alu", (old,), (), mem=lm_all[:1] + TR)
        self.op(f"lpassa $lmt{z} {{d0}}", "alu", (zv,), (), mem=lm_all[:1] + TR)
        d = self.alu("iadd", zv, self.alu("isub", new, old))
        k = self.flags("lnot", cond)
        self.op(f"lpassa {{s0}} $lmt{z}/{{k0}}", "alu", (), (d,), msrc=(k,), mem=lm_all + TR)
        self.op("lpassa {s0} $lmt0/{k0}", "alu", (), (new,), msrc=(k,), mem=lm_all + TR)

    def lanes(self, wa: VReg):
        """The two 32-bit lanes of a long word as T-indirect word addresses: the upper (odd) lane, then
        the lower one; with the function that moves a lane's register value to the upper half."""
        yield self.alu("ulsr", wa, self.c32(32)), (lambda x: x)
        yield self.alu("land", wa, self.const64(0xFFFFFFFF)), (lambda x: self.alu("llsl", x, self.c32(32)))

    def apply_rotated(self, entry, areas, cb):
        """One store, rotated: in round rd each PE takes its L1B neighbour i + rd's pairs and applies
        those whose word has its reduction digit, to its Z copy (the chunk itself on designated PEs)."""
        sub, zoff, _ = self.scatter_setup()
        for rd in range(4):
            got = []
            for area in areas:
                x = self.new("rot")
                self.op(f"l1bmd $lb{area + rd} {{d0}}", "l1bm", (x,),
                        mem=(("r", "lb", area + rd, area + rd + 4 * self.lay.pe_l1b),))
                got.append(x)
            w, wa, inr = self.chunk_word(got[0], cb)
            dig = self.alu("ixor", self.alu("iand", self.alu("uilsr", w, self.c32(1)), self.c32(3)), sub)
            cond = self.b_and(inr, self.bool_from_mask(self.flags("uimin", dig, self.c32(0))))
            for ta, up in self.lanes(wa):
                self.apply_word(ta, up(got[1]), up(got[2]) if len(got) > 2 else None, up(cond), zoff)

    def apply_batch(self, entries, cb):
        """A batch of stores: each PE applies its own lanes' to its Z copy and to the chunk; then the
        Z quarters rotate within the MAB so PE p sums digit p over its MAB (round 0 is its own:
        the chunk on designated PEs, Z elsewhere).  Returns the sums, one register per 16 long words
        of the chunk (cycle c of register s: long word 16 s + 4 c + p)."""
        n_words = 2 * self.CH
        for size, idx, *vals in entries:
            w, wa, inr = self.chunk_word(idx, cb)
            if size == 8:        # a long word per work-item, at its even word
                ta = self.alu("iand", w, self.c32(n_words - 2))
                for (t, _), val, cond in zip(self.lanes(ta), vals, self.widen_bool(inr)):
                    self.apply_long(t, val, cond, n_words)
                continue
            for ta, up in self.lanes(wa):
                self.apply_word(ta, up(vals[0]), up(vals[1]) if len(vals) > 1 else None, up(inr), n_words)
        return self.quarter_sums()

    def quarter_sums(self, bases=None, combine="iadd"):
        """The Z quarters (the chunk on designated PEs in round 0) rotated within the MAB so PE p sums
        digit p over its MAB: one register per 16 long words of the chunk (cycle c of register s:
        long word 16 s + 4 c + p).  (claim_max: other bases, and the maximum instead of the sum.)"""
        n_words = 2 * self.CH
        sums = []
        for rd, t in enumerate(bases or self.digit_bases()):
            self.op("lpassa {s0} $t", "alu", (), (t,), mem=TW)
            for s_ in range(self.CH // 16):
                x = self.new("q")
                self.op(f"lpassa $lmt{32 * s_}v4 {{d0}}", "alu", (x,), (), mem=(("r", "m", 0, 2 * n_words),) + TR)
                for _ in range(rd if rd < 3 else 1):       # to PE p + rd of the MAB
                    x = self.alu("msl" if rd < 3 else "msr", x)
                if rd == 0:
                    sums.append(x)
                else:
                    self.alu(combine, sums[s_], x, dst=sums[s_])
        return sums

    def digit_bases(self):
        """T-indirect bases (words) of the quarters each PE sends in the four rounds of apply_batch:
        round 0 its own digit's (tz), round r digit (subpeid + r) & 3 of its Z (made once)."""
        return [self.scatter_setup()[2]] + [self.z_digit_base(r) for r in (1, 2, 3)]

    def mem_intrinsic(self, base, args, p):
        """memset / memcpy of a constant length (initialisers, struct copies): word by word."""
        n = args[2].const
        if n is None:
            raise CodegenError(f"{base} of a run-time length is not supported on the emulator device", self.line)
        dst = args[0]
        step = 4 if n % 4 == 0 else 1
        ty = "i32" if step == 4 else "i8"
        for k in range(0, n, step):
            at = lambda ptr: self.proxy("ptr", replace(ptr, coff=ptr.coff + k, gid_affine=None))
            if base == "memset":
                b = args[1].const
                if b is None:
                    v = self.narrow(args[1])
                    if step == 4:
                        v = self.alu("iand", v, self.c32(0xFF))
                        v = self.alu("ior", v, self.alu("ilsl", v, self.c32(8)))
                        v = self.alu("ior", v, self.alu("ilsl", v, self.c32(16)))
                    val = self.proxy(ty, Val("i32", (v,)))
                else:
                    val = Const(ty, (b & 0xFF) * (0x01010101 if step == 4 else 1))
            else:
                ld = Inst("load", "mem", ty, [at(args[1])], elem=ty, line=self.line)
                self.inst(ld, p)
                val = ld
            self.inst(Inst("store", "", "void", [val, at(dst)], line=self.line), p)
        return None

    def word_ptr(self, ptr: Val) -> Val:
        return Val("ptr", base=ptr.base, off=Val("i32", (self.alu("iand", self.ptr_off(ptr), self.c32(-4)),)))

    def narrow_load(self, ptr: Val, ty: str, p: VReg) -> Val:
        """An i8/i16 element: the 32-bit word holding it, shifted down (bytes are little-endian)."""
        size = type_size(ty)
        word = self.load_word(self.word_ptr(ptr), p)
        sh = self.alu("ilsl", self.alu("iand", self.ptr_off(ptr), self.c32(4 - size)), self.c32(3))
        return Val("i32", (self.alu("uilsr", word, sh),))

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
        lay = self.lay
        S = lay.stripe
        if not for_store and not self.loop_stack and k in self.fast_cache:
            return self.fast_cache[k]
        lc, lb, own = self.staging_area("fast", hoist)
        if self.stored or any(ctx["stores"] for ctx in self.loop_stack):
            self.settle_stores()  # it may read what a store still in flight writes
        t = self.tag()
        rep = self.is_replicated(k)
        src = f"%b{k}+%wx*{S * lay.groups}" if rep else f"%b{k}+%wx*{S}" if per_wave else f"%b{k}"
        d = self.new(f"ld{k}")
        mv = MV(f"mvd/n{S}i{t} $d0 $lc{lc}", src, self.line)
        self.staged(mv, t, lc, lb, d, hoist=own, read_only=rep and per_wave)
        if own and per_wave and not rep and self.replicate and not for_store:   # (not a store's merge)
            self.own_share_loads.append(mv)
        self.uses.setdefault("bases", set()).add(k)
        if not self.loop_stack and not for_store:
            self.fast_cache[k] = (d, (lc, lb))
        return d, (lc, lb)

    def prefetch_loads(self) -> list:
        """The wave's first loads the next wave may issue early (prefetch.py): those of read-only
        buffers, and those of buffers the kernel writes when every store of the kernel goes to the
        wave's own share (no wave can then write what another reads) and no buffer is passed twice
        (the launch replicates)."""
        return self.prefetchable + ([] if self.scatters else self.own_share_loads)

    def staged(self, mv: MV, t: int, lc: int, lb: int, d: VReg, hoist: bool, read_only: bool = False):
        """A wave share DRAM -> L2BM (lc) -> L1BM (lb) -> register d.  Hoisted, the whole
        chain starts the wave: every such load's moves are then scheduled with the wave's
        first computations instead of after them."""
        N, P = self.lay.l1b, self.lay.pe_l1b
        outer, self.items = self.items, []
        self.op(f"wait i{t}", "wait")
        for s in range(self.lay.l2bmd_steps):
            self.op(f"l2bmd $lc{lc + 32 * N * s} $lb{lb + 32 * s}", "l2bm",
                    mem=(("r", "lc", lc + 32 * N * s, lc + 32 * N * (s + 1)), ("w", "lb", lb + 32 * s, lb + 32 * s + 32)))
        self.op(f"l1bmd $lb{lb} {{d0}}", "l1bm", (d,), mem=(("r", "lb", lb, lb + 4 * P),))
        ops, self.items = self.items, outer
        mv.chain = (t, lc, lb)            # for packing.py, which moves four such loads at once
        if hoist:
            self.hoisted.append((mv, ops))
            if read_only:                 # the next wave's may move while this one computes
                self.prefetchable.append(mv)
        else:
            self.items += [mv] + ops

    def staging_area(self, shared: str, hoist: bool):
        """(lc, lb, own) for one wave share: outside loops and before any store a load may start
        with the wave and gets an area of its own (own=True) while L2BM and L1BM have room;
        otherwise it uses the shared area of that name."""
        lay = self.lay
        if hoist and not self.loop_stack and not self.stored:
            try:
                return self.alloc_lc(lay.stripe // lay.l2b), self.alloc_lb(4 * lay.pe_l1b), True
            except CodegenError:
                pass
        return (*self.shared_area(shared, lay.stripe // lay.l2b, 4 * lay.pe_l1b), False)

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
        if not hasattr(self, "_written"):
            root = self.param_root
            out = set()
            for b in self.f.blocks:
                for i in b.insts:
                    dst = self.store_dst(i)
                    if dst is None:
                        continue
                    k = root(dst)
                    if k is None:
                        out = set(range(len(self.params)))
                        break
                    out.add(k)
            self._written = out
        return self._written

    # out-of-bounds accesses ------------------------------------------------------------------------
    def check_bounds(self, k, ptr: Val, size: int, p: VReg, defer=False, store=False) -> VReg:
        """Lanes (of p) whose access of buffer parameter k lies inside it, as a bool; a lane's
        latest access out of bounds is recorded (site, index or byte offset, its high word where it
        may not be 32-bit) for the runtime, which reports it (see report_bounds).

        Where the sequencer can clear the whole wave (wave_in_bounds), the per-lane check runs
        only in the waves it cannot; with defer (a load, which does not use the result) the
        check waits to share one sequencer branch with the block's other checks (flush_checks)."""
        key = (k, ptr.gid_affine, size, p) if ptr.gid_affine else None
        if key in self.checked:            # the same access pattern under the same predicate
            if not defer:
                self.flush_checks()
            return self.checked[key]
        whole = self.wave_in_bounds(k, ptr.gid_affine, size)
        if whole:              # the per-lane check runs only in waves the sequencer cannot clear
            ok = self.copy(self.c32(-1))
            outer, self.items = self.items, []
        # a count only the waves the sequencer cannot clear need is made where it is used (as the
        # byte check's nb - size was: the full waves pay nothing); else once, in the prologue
        self._count_here = bool(whole)
        lanes_ok, at, high, site = self.lanes_in_bounds(k, ptr, size)
        self._count_here = False
        if ptr.good is not None:
            lanes_ok = self.b_and(lanes_ok, ptr.good)
        if self.oob is None:
            self.oob = (self.new("oob_code"), self.new("oob_off"))
            self.prologue += [Op("zero {d0}", "alu", (r,)) for r in self.oob]
        code, where = self.oob
        m = self.flags("ior", lanes_ok, self.b_not(p))    # flag where ok | !p is zero: p and out of bounds
        self.oob_sites.append((self.site_line or self.line, k, size, *site, "store" if store else "load"))
        self.masked_copy(self.c32(len(self.oob_sites)), code, m)
        self.masked_copy(at, where, m)
        if high is not None:
            if self.oob_high is None:
                self.oob_high = self.new("oob_high")
                self.prologue.append(Op("zero {d0}", "alu", (self.oob_high,)))
            self.masked_copy(high, self.oob_high, m)
        if whole:
            self.copy(lanes_ok, ok)
            slow, self.items = self.items, outer
            self.pending_checks.append((whole, slow))
        else:
            ok = lanes_ok
        if not defer:
            self.flush_checks()
        if key and not self.loop_stack:
            self.checked[key] = ok
        return ok

    def lanes_in_bounds(self, k, ptr: Val, size: int):
        """(bool: the lanes whose access of size bytes at ptr lies in buffer k, the 32-bit value the
        report records, its high word or None, what the report needs to read it: (the bytes of an
        element the value counts, 0 for a byte offset; a constant offset; "const", or how the value
        reads: "i" signed, "u" unsigned, "w" with the high word)).

        One variable term x * n (Val.idx; p[x] for n-byte elements, c bytes on): compared as an
        element index, x + q <u floor((nb - size - c + n (1 + q)) / n) with q = floor(c / n), so an
        int or uint x times the element size cannot wrap (floor(nb / n) when the access lies
        within element x + q: that element must be whole in the buffer); exact for every x whose range keeps its
        low 32 bits apart from the count's range plus or minus 2^32 (EXACT), and for the others the
        lanes whose x is not a 32-bit value fail on its 64-bit value.  Otherwise the byte offset,
        which is 32-bit (Val.orng) or has its 64-bit value along (Val.o64)."""
        c = ptr.coff
        if ptr.off is None:                                   # a constant offset
            at = self.c32(c if 0 <= c < MAX_BUFFER else -1)
            return self.below(at, self.bound_count(k, 1 - size, 1)), at, None, (0, c, "const")
        if ptr.idx is not None:
            x, n, xr = ptr.idx[:3]
            q = c // n                                        # x + q is the element index
            at = self.alu("iadd", x, self.c32(q)) if q else x
            r = rng_add(xr, (q, q))
            # a part of an element (a vector's component, a struct's member): the whole element must
            # lie in the buffer, as C asks of the object accessed; one count serves them all
            within_one = 0 <= c - q * n and c - q * n + size <= n
            ok = self.below(at, self.bound_count(k, 0 if within_one else n * (1 + q) - size - c, n))
            if within(r, EXACT):
                return ok, at, None, (n, 0, "u" if within(r, U32) and not within(r, I32) else "i")
            x64 = self.idx_wide(ptr.idx)
            if q:
                x64 = tuple(self.alu("ladd", y, self.const64(q)) for y in x64)
            return self.b_and(ok, self.fits32(x64)), at, self.high_words(x64), (n, 0, "w")
        at = self.ptr_off(ptr)
        ok = self.below(at, self.bound_count(k, 1 - size, 1))
        o64 = ptr.o64
        if o64 is None and not within(rng_add(I32 if ptr.orng is None else ptr.orng, (c, c)), EXACT):
            o64 = self.split64(ptr.off.regs[0])
        if o64 is None:
            return ok, at, None, (0, 0, "i")
        if c:
            o64 = tuple(self.alu("ladd", y, self.const64(c)) for y in o64)
        return self.b_and(ok, self.fits32(o64)), at, self.high_words(o64), (0, 0, "w")

    def below(self, x: VReg, n: VReg) -> VReg:
        """A bool per lane: x < n, unsigned."""
        return self.bool_from_mask(self.flags("uimax", x, n), invert=True)

    def bound_count(self, k, add: int, n: int) -> VReg:
        """max(0, floor((nb + add) / n)) for buffer k's size nb (the runtime writes it in the argument
        block): at how many positions an access may start; made once, in the prologue."""
        if isinstance(k, tuple):            # ("priv", bytes): a private array's size is known
            return self.c32(max(0, (k[1] + add) // n))
        counts = self.__dict__.setdefault("_counts", {})
        here = getattr(self, "_count_here", False) and _is_pow2(n)     # (a division: once)
        if here or (k, add, n) not in counts:
            outer, self.items = self.items, []
            r = self.argval(PARAM_SLOT + k, f"bytes{k}")
            if add:
                r = self.alu("iadd", r, self.c32(add))
            if _is_pow2(n) and n > 1:
                r = self.alu("ilsr", r, self.c32(n.bit_length() - 1))
            if add < 0:                        # (nb >= 0: only a negative add can go below 0)
                r = self.alu("imax", r, self.c32(0), hint=f"count{k}")
            if not _is_pow2(n):                # (exact: div_exact)
                bits = lambda v: struct.unpack("<Q", struct.pack("<d", v))[0]
                r = self.div_exact(r, self.const64(bits(1 / n)), self.const64(bits(1 / (2 * n))))
            if here:
                self.items = outer + self.items
                return r
            counts[(k, add, n)] = r
            self.prologue += self.items
            self.items = outer
        return counts[(k, add, n)]

    def flush_checks(self):
        """Emit the deferred per-lane bounds checks, under one sequencer branch."""
        if self.pending_checks:
            conds = tuple(c for c, _ in self.pending_checks)
            self.items.append(SeqIf(" or ".join(f"not ({c})" for c in conds),
                                    [op for _, ops in self.pending_checks for op in ops], unless=conds))
            self.pending_checks = []

    def wave_in_bounds(self, k, aff, size: int):
        """A sequencer condition that holds when every work-item of the wave accesses buffer k
        inside it, for an access at byte offset coef * gid + const + seq (1-D launches), or None."""
        if not self.one_d or aff is None:
            return None
        self.uses.setdefault("sizes", set()).add(k)
        lo, hi = self.wave_extent(aff)
        return f"{lo} >= 0 and {hi} + {size} <= %nb{k}"

    def wave_extent(self, aff):
        """Sequencer expressions of the least and the greatest value of coef * gid + const + seq
        over the wave's live work-items (a 1-D launch)."""
        coef, const, seq = aff
        self.uses["launch"] = True
        first = f"(%offx + %wx * {self.lay.wave})"
        end = f"(%wx + 1) * {self.lay.wave}"
        last = f"(%offx + (%gx if %gx < {end} else {end}) - 1)"
        lo, hi = (first, last) if coef >= 0 else (last, first)
        u = f"{const} + ({seq or 0})"
        return f"{coef} * {lo} + {u}", f"{coef} * {hi} + {u}"

    def report_bounds(self):
        """After the last wave: if any lane went out of bounds, its first site and offset go to
        two hidden buffers ("E", "F") the runtime reads after the launch (one any-reduction)."""
        code, where = self.oob
        any_bad = self.flags("uimax", code, self.c32(1))          # code >= 1
        outer, self.items = self.items, []
        self.fast_store("E", code, self.c32(-1), per_wave=False)
        self.fast_store("F", where, self.c32(-1), per_wave=False)
        if self.oob_high is not None:
            self.fast_store("G", self.oob_high, self.c32(-1), per_wave=False)
        body, self.items = self.items, outer
        self.items.append(IfAnyLane(any_bad, body))

    def is_replicated(self, k) -> bool:
        """Read-only buffer parameters are replicated (layout.py) unless the launch forbids it."""
        if isinstance(k, int) and self.replicate and k not in self.written_params() \
                and self.params[k].kind in ("global", "constant"):
            self.uses.setdefault("replicated", set()).add(k)
            return True
        return False

    def uniform_load(self, k, aff, ty) -> Val:
        """p[u] for a uniform u the sequencer knows, from a read-only (replicated) buffer.

        The 64 long words around it are broadcast to every L1BM (mvb, l2bmb), again only when u
        leaves them (the sequencer remembers the block in %ub<k>), and every PE reads its long
        word with l1bmp at an offset the sequencer adds: a loop walking x[j] moves each block once."""
        u = f"(({aff[1]}) + ({aff[2] or 0}))"                     # byte offset
        blk = f"((({u}) >> 9) << 6)"                                # its 64-long-word block
        if self.loop_stack:
            table = self.uniform_table(k, u, type_size(ty))
            if table is not None:
                return Val(self.kind_of(ty), table)
        lc, lb = self.shared_area(("uniform", k), 64, 68)
        self.uses.setdefault("bases", set()).add(k)
        reg = f"%ub{k}"
        if ("uniform", k) not in self.__dict__.setdefault("_uniform", set()):
            self._uniform.add(("uniform", k))
            self.prologue.append(SeqSet(reg, "-1"))
        self.items.append(SeqIf(f"{blk} != {reg}", self.broadcast_block(k, blk, lc, lb) + [SeqSet(reg, blk)]))
        w = self.new(f"u{k}")
        self.items.append(Call([Op(f"l1bmp $lb{lb} {{d0}}", "l1bm", (w,), (), mem=(("r", "lb", lb, lb + 68),),
                                   line=self.line)], {"lb": f"((({u}) >> 3) & 63)"}))
        if type_size(ty) == 8:
            r = self.new("uni")
            self.op("lpassa {u0} {d0}", "alu", (r,), (w,))
            return Val(self.kind_of(ty), (r, r))
        return Val(self.kind_of(ty), (self.pick_half(w, u),))

    def block_mv(self, k, blk: str, lc: int, base: str, t: int) -> MV:
        """The MV of the 64 long words of buffer k (its widened copy with base "w") from long word
        blk on, from group 0's DRAM into every L2BM at lc, under tag t."""
        a = f"%{base}{k} + {blk}"
        hi = self.lay.dram_longs - 64
        x = f"(({a})*(({a})>0))"        # an index out of bounds (reported by its check) reads a clamped block
        return MV(f"mvb/n64i{t} $d0@0 $lc{lc}", f"({x}-({x}-{hi})*({x}>{hi}))".replace(" ", ""), self.line)

    def l2bmb(self, lc: int, lb: int) -> Op:
        """64 long words of L2BM at lc to every L1BM at lb."""
        return Op(f"l2bmb $lc{lc} $lb{lb}", "l2bm", mem=(("r", "lc", lc, lc + 64), ("w", "lb", lb, lb + 64)),
                  line=self.line)

    def broadcast_block(self, k, blk: str, lc: int, lb: int) -> list:
        """The 64 long words of buffer k from long word blk on, into every L1BM at lb (mvb, l2bmb)."""
        t = self.tag()
        return [self.block_mv(k, blk, lc, "b", t), Op(f"wait i{t}", "wait", line=self.line), self.l2bmb(lc, lb)]

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
        tables = self.__dict__.setdefault("_tables", {})
        if (k, size) not in tables:
            floor = 4 * self.CH + 8 * self.private_layout()[2]     # private arrays come first
            if self.lm_top - 128 < floor:
                return None
            self.lm_top -= 128
            lc, lb = self.shared_area(("utable", k), 64, 64)
            areas = ((lc, self.tag()), (self.alloc_lc(64), self.tag()))
            reg, pf = self.seq_reg("ut"), self.seq_reg("pf")
            tables[(k, size)] = (self.lm_top, reg, pf, areas, lb)
            # (a block is a multiple of 64, negative for an index out of bounds: 1 means none)
            self.prologue += [SeqSet(reg, "1"), SeqSet(pf, "1")]
        tw, reg, pf, areas, lb = tables[(k, size)]
        shift = 2 if size == 4 else 3
        blk = f"((({u}) >> {shift + 6}) << 6)"                    # its block of 64 (widened) long words
        base = "w" if size == 4 else "b"
        self.uses.setdefault("widened" if size == 4 else "bases", set()).add(k)
        wait = lambda t: Op(f"wait i{t}", "wait", line=self.line)
        arms = []
        for (lc, t), (lc2, t2) in (areas, areas[::-1]):        # blk even, then odd
            arms.append([
                SeqIf(f"{pf} != {blk}", [                      # not on its way: drain, then fetch it
                    SeqIf(f"{pf} != 1", [SeqIf(f"({pf} >> 6) & 1", [wait(areas[1][1])], [wait(areas[0][1])])]),
                    self.block_mv(k, blk, lc, base, t)]),
                wait(t),
                self.l2bmb(lc, lb),
                *(Op(f"l1bmp $llb{lb + 8 * g} $llm{tw + 16 * g}v", "l1bm", line=self.line,
                     mem=(("r", "lb", lb + 8 * g, lb + 8 * g + 8), ("w", "m", tw + 16 * g, tw + 16 * g + 16)))
                  for g in range(8)),
                self.block_mv(k, f"({blk}) + 64", lc2, base, t2), SeqSet(pf, f"({blk}) + 64")])
        self.items.append(SeqIf(f"{blk} != {reg}", [SeqIf(f"({blk} >> 6) & 1", arms[1], arms[0]),
                                                    SeqSet(reg, blk)]))
        r = self.new("uni")
        self.items.append(Call([Op(f"lpassa $lm{tw} {{d0}}", "alu", (r,), (), mem=(("r", "m", tw, tw + 128),),
                                   line=self.line)], {"m": f"((({u}) >> {shift}) & 63) * 2"}))
        return (r,) if size == 4 else (r, r)

    def shifted_load(self, k, aff) -> VReg:
        """p[get_global_id(0) + u] for a read-only buffer and a uniform u the sequencer knows.

        Such a buffer is *replicated*: every group's DRAM holds all of it, group g's copy
        g stripes lower (layout.py), so one MV address gives every group its own share of
        the wave moved by u / 2 long words; an odd u takes the next long word's halves too.
        A constant u decides that at compile time, and its long-word loads are shared with
        the wave's other loads of the buffer (in[i-1], in[i] and in[i+1] take three, not five)."""
        self.uses.setdefault("bases", set()).add(k)
        if self.stored:
            self.settle_stores()
        c32 = self.c32(32)
        join = lambda a, b: self.alu("lor", self.alu("ulsr", a, c32), self.alu("llsl", b, c32))
        if aff[2] is None and aff[1] % 4 == 0:
            e = aff[1] >> 2
            a = self.long_shift_load(k, e >> 1)
            return join(a, self.long_shift_load(k, (e >> 1) + 1)) if e & 1 else a
        u = f"((({aff[1]}) + ({aff[2] or 0})) >> 2)"          # elements
        a = self.long_shift_load(k, f"({u} >> 1)")     # a register of its own (not cached): an
        out, self.items = self.items, []                   # odd u rewrites it in place
        self.copy(join(a, self.long_shift_load(k, f"({u} >> 1) + 1", hoist=False)), a)
        odd, self.items = self.items, out
        self.items.append(SeqIf(f"({u}) & 1", odd))
        return a

    def long_shift_load(self, k, shift, hoist=True) -> VReg:
        """The wave's share of replicated buffer k moved by `shift` long words (an int or a
        sequencer expression); constant shifts are loaded once per wave (fast_cache)."""
        key = (k, "shift", shift) if isinstance(shift, int) and not self.loop_stack else None
        if shift == 0 and key:
            return self.fast_load(k)[0]
        if key in self.fast_cache:
            return self.fast_cache[key]
        lay = self.lay
        S, G = lay.stripe, lay.groups
        lc, lb, own = self.staging_area("shift", hoist)
        t = self.tag()
        a = f"%b{k} + %wx * {G * S} + {shift}"
        # lanes outside the buffer (a guarded border, the wave's tail) may ask for addresses
        # beyond DRAM: the transfer is clamped, those lanes' values are don't-care
        hi = lay.dram_longs - S
        x = f"(({a})*(({a})>0))"
        mv = MV(f"mvd/n{S}i{t} $d0 $lc{lc}", f"({x}-({x}-{hi})*({x}>{hi}))".replace(" ", ""), self.line)
        d = self.new(f"sh{k}")
        self.staged(mv, t, lc, lb, d, hoist=own, read_only=True)
        if key:
            self.fast_cache[key] = d
        return d

    def fast_store(self, k, val: VReg, p: VReg, per_wave: bool = True, full: str = None):
        """Read-modify-write of the wave's share: lanes outside p keep what memory held; where the
        sequencer condition `full` holds, p is every lane and the read is skipped."""
        self.flush_scatters()
        lay = self.lay
        S, N, P = lay.stripe, lay.l1b, lay.pe_l1b
        cached = self.fast_cache.get(k) if not self.loop_stack else None
        if cached:                # the wave's share is in a register already: merge into a copy
            old = self.copy(cached[0])
            self.masked_copy(val, old, self.mask_of(p))
        elif full:
            old = self.copy(val)
            outer, self.items = self.items, []
            self.masked_copy(self.fast_load(k, for_store=True, per_wave=per_wave, hoist=False)[0], old,
                             self.mask_of(self.b_not(p)))
            merge, self.items = self.items, outer
            self.items.append(SeqIf(f"not ({full})", merge))
        else:
            old = self.fast_load(k, for_store=True, per_wave=per_wave)[0]
            self.masked_copy(val, old, self.mask_of(p))
        # the share goes up from a staging area of its own and nothing waits for it: the next
        # wave's loads run while it is in flight; the next user of the area (or any gather or
        # scatter, which may read it back) waits first
        if "store" not in self.__dict__.get("_areas", {}):
            lc, lb = self.shared_area("store", S // lay.l2b, 4 * P)
            self.prologue += [MV(f"mvd/n{S}i{self.STORE_TAG} $d0 $lc{lc}", "%argblk", self.line)]
        lc, lb = self.shared_area("store", S // lay.l2b, 4 * P)
        self.settle_stores()
        self.op(f"l1bmd {{s0}} $lb{lb}", "l1bm", (), (old,), mem=(("w", "lb", lb, lb + 4 * P),))
        for s in range(lay.l2bmd_steps):
            self.op(f"l2bmd $lb{lb + 32 * s} $lc{lc + 32 * N * s}", "l2bm",
                    mem=(("r", "lb", lb + 32 * s, lb + 32 * s + 32), ("w", "lc", lc + 32 * N * s, lc + 32 * N * (s + 1))))
        self.op("nop", "nop")
        self.op("nop", "nop")
        self.items.append(MV(f"mvd/n{S}i{self.STORE_TAG} $lc{lc} $d0", f"%b{k}+%wx*{S}" if per_wave else f"%b{k}",
                             self.line))
        self.scatters |= not per_wave and isinstance(k, int)     # (not the bounds reports)

    def gather_area(self):
        return self.shared_area("gather", self.lay.stripe, self.CH)

    def chunk_to_lm0(self, at: int = 0):
        """The chunk in the gather area's L2BM to every PE's LM0 words at .. at + 2 CH (l2bmb, l1bmp)."""
        glc, glb = self.gather_area()
        for t in range(self.CH // 64):
            self.items.append(self.l2bmb(glc + 64 * t, glb + 64 * t))
        for u in range(self.CH // 8):
            self.op(f"l1bmp $llb{glb + 8 * u} $llm{at + 16 * u}v", "l1bm",
                    mem=(("r", "lb", glb + 8 * u, glb + 8 * u + 8), ("w", "m", at + 16 * u, at + 16 * u + 16)))

    def remark(self, k, how: str):
        """Note that an access of buffer k at this line moves all of the buffer (mncl-cc --stats)."""
        name = "__local memory" if k == "L" else f"'{self.param(k).name}'" if isinstance(k, int) else "a table"
        loop = ", in every pass of its loop" if self.loop_stack else ""
        what = "load from" if how == "gathered" else "store to"
        self.remarks[(self.line, how, name)] = (
            f"the {what} {name} is {how}: its index is not the global id plus a uniform offset, so all of "
            f"the buffer passes through every PE{loop} (docs/architecture.md, data movement)")

    def gather(self, k, ptr: Val, ty: str, p: VReg) -> Val:
        """Every lane's element of buffer k: the buffer passes chunk by chunk through every PE's LM0
        (or, resident, is there: resident_read)."""
        self.note_access(k, "gather")
        size = type_size(ty)
        if size not in (4, 8):
            raise CodegenError(f"loads of {ty} ({size}-byte) elements are not supported on the emulator device yet",
                               self.line)
        if k in self.resident:
            return self.resident_read(k, ptr, ty)
        self.remark(k, "gathered")
        self.settle_stores(whole_buffer=True)
        lay = self.lay
        S, G, CH = lay.stripe, lay.groups, self.CH
        glc, _ = self.gather_area()
        self.uses.setdefault("bases", set()).add(k)
        self.uses.setdefault("rows", set()).add(k)
        rel, acc = self.word_index(ptr, size)
        outer, self.items = self.items, []
        self.chunk_to_lm0()
        self.read_chunk(rel, size, 0, acc)
        self.alu("isub", rel, self.c32(2 * CH), dst=rel)
        body = self.items
        self.items = []
        r, c = self.seq_reg("r"), self.seq_reg("c")
        tg = self.tag()
        for g in range(G):
            if self.is_replicated(k):       # stripe rG + g of the whole copy in group 0
                self.items.append(MV(f"mvb/n{S}i{tg} $d0@0 $lc{glc}", f"%b{k}+({r}*{G}+{g})*{S}", self.line))
            else:
                self.items.append(MV(f"mvb/n{S}i{tg} $d0@{g} $lc{glc}", f"%b{k}+{r}*{S}", self.line))
            self.op(f"wait i{tg}", "wait")
            self.items.append(SeqLoop(c, "0", str(S // CH), [Call(body, {"lc": f"{c}*{CH}"})]))
        loop = SeqLoop(r, "0", f"%rows{k}", self.items)
        self.items = outer
        self.items.append(loop)
        return self.lane_value(acc, ty)

    def word_index(self, ptr: Val, size: int):
        """(each lane's word index into the buffer: its element's word, 2 x its long word for 64-bit
        elements; zeroed accumulators for read_chunk)."""
        rel = self.alu("uilsr", self.ptr_off(ptr), self.c32(2 if size == 4 else 3), hint="rel")
        acc = [self.copy(self.c32(0)), self.copy(self.c32(0))]
        if size == 4:     # element 2k is the low half of long word k: word 2k + 1
            return self.alu("ixor", rel, self.c32(1)), acc
        return self.alu("ilsl", rel, self.c32(1)), acc

    def read_chunk(self, rel: VReg, size: int, at: int, acc: list):
        """Each lane's element at word index rel (word_index, less the chunk's start) of the chunk of
        2 CH words at LM0 word `at`, T-indirect, into the accumulators acc (upper-lane and
        lower-lane registers for 32-bit elements, odd and even work-items' for 64-bit ones);
        lanes whose element is not in the chunk keep what they had."""
        n_words = 2 * self.CH
        c32 = self.c32(32)
        lm = (("r", "m", at, at + n_words),)
        # T-indirect addresses must lie inside LM0 even in masked-off lanes: wrap them into the chunk
        if size == 4:
            inr = self.flags("uimin", rel, self.c32(n_words - 1))
            addr = self.alu("iand", rel, self.c32(n_words - 1))
            self.op("ulsr {s0} {s1} $t", "alu", (), (addr, c32), mem=TW)
            self.op(f"ipassa $mt{at} {{d0}}/{{k0}}", "alu", (acc[0],), (acc[0],), msrc=(inr,), partial=True,
                    mem=lm + TR)
            self.op("lpassa {s0} $t", "alu", (), (addr,), mem=TW)
            w = self.new()
            self.op(f"ipassa $mt{at} {{d0}}", "alu", (w,), (), mem=lm + TR)
            self.op("ulsr {s0} {s1} {d0}/{k0}", "alu", (acc[1],), (w, c32, acc[1]), msrc=(inr,), partial=True)
        else:
            for part in (0, 1):
                lane = self.alu("ulsr", rel, c32) if part == 0 else self.alu("land", rel, self.const64(0xFFFFFFFF))
                inr = self.flags("ulmin", lane, self.const64(n_words - 2))
                addr = self.alu("land", lane, self.const64(n_words - 1))
                self.op("lpassa {s0} $t", "alu", (), (addr,), mem=TW)
                self.op(f"lpassa $lmt{at} {{d0}}/{{k0}}", "alu", (acc[part],), (acc[part],), msrc=(inr,),
                        partial=True, mem=lm + TR)

    def lane_value(self, acc, ty) -> Val:
        """read_chunk's accumulators as the loaded value."""
        if type_size(ty) == 4:
            hi = self.alu("land", acc[0], self.const64(0xFFFFFFFF00000000))
            lo = self.alu("land", acc[1], self.const64(0xFFFFFFFF))
            return Val(self.kind_of(ty), (self.alu("lor", hi, lo),))
        return Val(self.kind_of(ty), tuple(acc))

    # resident buffers ----------------------------------------------------------------------------
    def note_access(self, k, how: str):
        """Record that the instruction being translated reaches buffer k by `how` ("load", "store":
        any path; "gather": a gather or scatter), for resident_candidates."""
        if isinstance(k, int):
            r = self.reached.setdefault(k, {"load": set(), "store": set(), "gather": set(), "loop": False})
            r[how].add(self.cur)
            r["loop"] |= how == "gather" and bool(self.loop_stack)

    def resident_candidates(self, one_item: bool = False) -> list:
        """Buffers a launch may keep *resident* (mode "-res"): every access of them gathers or
        scatters, one of those in a loop, and the kernel has no barrier (each PE's copy only meets
        the others' changes at the end of the wave, which a barrier's global fence would need sooner).
        A buffer two work-items may store one element of (a scatter that claims) only for a launch
        of one work-item (one_item: mode "-res1"): write_back would sum their changes."""
        if self.has_barrier:
            return []
        return sorted(k for k, r in self.reached.items()      # (write_back sums what PEs change: a
                      if r["loop"] and (r["load"] | r["store"]) <= r["gather"]    # buffer two work-items may
                      and (one_item or k not in self.colliding))                  # store to, for one only)

    def resident_copies(self):
        """At the top of the wave, each resident buffer (at most one chunk: the runtime checks) into
        every PE's LM0 at the top of LM0 (mvb, l2bmb, l1bmp)."""
        if not self.resident:
            return
        n_words = 2 * self.CH
        outer, self.items = self.items, []
        glc, _ = self.gather_area()
        for k in self.resident:
            if self.lm_top - n_words < 4 * self.CH:
                raise CodegenError("LM0 has no room for a resident copy of "
                                   f"'{self.param(k).name}' ({n_words} words)", self.line)
            self.lm_top -= n_words
            self.resident[k] = self.lm_top
            self.uses.setdefault("bases", set()).add(k)
            tg = self.tag()
            self.items.append(MV(f"mvb/n{self.CH}i{tg} $d0@0 $lc{glc}", f"%b{k}", self.line))
            self.op(f"wait i{tg}", "wait")
            self.chunk_to_lm0(self.lm_top)
        self.items = outer + self.items

    def resident_read(self, k, ptr: Val, ty: str) -> Val:
        """A load from buffer k's resident copy: T-indirect, or at an offset the sequencer adds
        when every lane reads one element (its long word, then the lane picked)."""
        at, size = self.resident[k], type_size(ty)
        aff = ptr.gid_affine
        if aff is not None and aff[0] == 0:
            m, w = self.resident_word(aff, size), self.new("res")
            mem = (("r", "m", at, at + 2 * self.CH),)
            if size == 8:
                self.items.append(Call([Op(f"lpassa $lm{at} {{d0}}", "alu", (w,), (), line=self.line, mem=mem)], m))
                return Val(self.kind_of(ty), (w, w))
            self.items.append(Call([Op(f"ipassa $m{at} {{d0w0}}", "alu", (w,), (), line=self.line, mem=mem),
                                    Op(f"ipassa $m{at} {{d0w1}}", "alu", (w,), (w,), line=self.line, mem=mem,
                                       partial=True)], m))
            return Val(self.kind_of(ty), (w,))
        rel, acc = self.word_index(ptr, size)
        self.read_chunk(rel, size, at, acc)
        return self.lane_value(acc, ty)

    def resident_word(self, aff, size) -> dict:
        """The Call offset of the word (32-bit elements: element e is word e ^ 1) or even word
        (64-bit) a uniform byte offset reaches in a resident copy, kept inside the copy: an offset
        out of bounds is reported, and its lanes' writes are masked off (check_bounds)."""
        u = f"(({aff[1]}) + ({aff[2] or 0}))"
        w = f"((({u}) >> 2) ^ 1)" if size == 4 else f"((({u}) >> 3) * 2)"
        top = 2 * self.CH - 2 + (size == 4)
        x = f"({w}*({w}>0))"          # (Call offsets are written without spaces: no `if`)
        return {"m": f"({x}-({x}-{top})*({x}>{top}))"}

    def resident_store_uniform(self, k, aff, val: VReg, p: VReg):
        """A 32-bit store to one element every storing lane names (an election left one): each lane's
        value, moved to the upper half, written to its word under the lane's predicate."""
        at = self.resident[k]
        ops = []
        for up in (lambda x: x, lambda x: self.alu("llsl", x, self.c32(32))):
            v, m = up(val), self.mask_of(up(p))
            ops.append(Op(f"ipassa {{s0}} $m{at}/{{k0}}", "alu", (), (v,), msrc=(m,), line=self.line,
                          mem=(("w", "m", at, at + 2 * self.CH),)))
        self.items.append(Call(ops, self.resident_word(aff, 4)))
        self.res_written.add(k)

    def resident_write(self, k, entry):
        """A scatter entry (see scatter) applied to buffer k's resident copy, T-indirect, lane by lane."""
        at, n_words = self.resident[k], 2 * self.CH
        lm = (("r", "m", at, at + n_words), ("w", "m", at, at + n_words))
        size, idx, *vals = entry
        self.res_written.add(k)
        inr = self.bool_from_mask(self.flags("uimin", idx, self.c32(n_words - 1)))
        if size == 8:        # a long word per work-item, at its even word
            ta = self.alu("iand", idx, self.c32(n_words - 2))
            for (t, _), val, cond in zip(self.lanes(ta), vals, self.widen_bool(inr)):
                self.op("lpassa {s0} $t", "alu", (), (t,), mem=TW)
                self.op(f"lpassa {{s0}} $lmt{at}/{{k0}}", "alu", (), (val,), msrc=(self.flags("lnot", cond),),
                        mem=lm + TR)
            return
        wa = self.alu("iand", self.alu("ixor", idx, self.c32(1)), self.c32(n_words - 1))
        for ta, up in self.lanes(wa):
            new = up(vals[0])
            self.op("lpassa {s0} $t", "alu", (), (ta,), mem=TW)
            if len(vals) > 1:               # a narrow store keeps the word's other bytes
                old = self.new("old")
                self.op(f"ipassa $mt{at} {{d0}}", "alu", (old,), (), mem=lm[:1] + TR)
                new = self.alu("ior", self.alu("iand", old, self.alu("inot", up(vals[1]))), new)
            self.op(f"ipassa {{s0}} $mt{at}/{{k0}}", "alu", (), (new,), msrc=(self.mask_of(up(inr)),), mem=lm + TR)

    def write_back(self):
        """At the end of the wave, each written resident buffer back to DRAM: with the chunk as the
        wave found it in the gather area, every PE puts its copy there and copy - found in Z, and
        the scatter's sum (quarter_sums, l1bmr, sum_into_dram) makes found + every PE's changes."""
        n_words = 2 * self.CH
        for k in sorted(self.res_written):
            at = self.resident[k]
            glc, _ = self.gather_area()
            _, red_lb = self.shared_area("reduce", self.CH, self.CH)
            self.scatter_setup()
            tg = self.tag()
            self.items.append(MV(f"mvb/n{self.CH}i{tg} $d0@0 $lc{glc}", f"%b{k}", self.line))
            self.op(f"wait i{tg}", "wait")
            self.chunk_to_lm0()
            for g in range(0, n_words, 8):
                x, d = self.new("res"), self.new("diff")
                self.op(f"lpassa $lm{at + g}v {{d0}}", "alu", (x,), (), mem=(("r", "m", at + g, at + g + 8),))
                self.op(f"isub {{s0}} $lm{g}v {{d0}}", "alu", (d,), (x,), mem=(("r", "m", g, g + 8),))
                self.op(f"lpassa {{s0}} $lm{n_words + g}v", "alu", (), (d,),
                        mem=(("w", "m", n_words + g, n_words + g + 8),))
                self.op(f"lpassa {{s0}} $lm{g}v", "alu", (), (x,), mem=(("w", "m", g, g + 8),))
            for s_, acc in enumerate(self.quarter_sums()):
                self.op(f"l1bmriiadd {{s0}} $lb{red_lb + 16 * s_}", "l1bm", (), (acc,),
                        mem=(("w", "lb", red_lb + 16 * s_, red_lb + 16 * s_ + 16),))
            self.sum_into_dram(0, f"%b{k}")

    def pick_half(self, w: VReg, u: str) -> VReg:
        """The 32-bit element at byte offset u (the sequencer knows it) of long word w, in both lanes:
        the low half when its index is even, else the high half."""
        c32, r = self.c32(32), self.new("uni")
        outer, picks = self.items, []
        for first, second in (("ulsr", "llsl"), ("llsl", "ulsr")):
            self.items = []
            t = self.new("uni")
            self.op(f"{first} {{u0}} {{s1}} {{d0}}", "alu", (t,), (w, c32))
            self.alu("lor", t, self.alu(second, t, c32), dst=r)
            picks.append(self.items)
        self.items = outer
        self.items.append(SeqIf(f"({u} >> 2) & 1", *picks))
        return r

    # llvm.<name> integer intrinsics int_call lowers -> whether their operands are signed
    INT_CALLS = {"smax": True, "smin": True, "abs": True, "umax": False, "umin": False, "usub": False, "uadd": False}

    def int_call(self, base: str, ty: str, args) -> Val:
        """llvm.smax/smin/umax/umin/abs and the unsigned saturating add and subtract, from the ALU's
        max and min (i8/i16 extended to 32 bits first: their upper bits are don't-care):
        usub.sat(a, b) = max(a, b) - b, uadd.sat(a, b) = min(a, ~b) + b."""
        signed, kind = self.INT_CALLS[base], args[0].kind
        a, b = args[0], args[1] if base != "abs" else args[0]     # abs's second operand is an i1 flag
        if ty in self.SMALL:
            a, b = self.norm_small(a, ty, signed), self.norm_small(b, ty, signed)
        w, u = ("l" if ty == "i64" else "i"), ("" if signed else "u")
        out = []
        for x, y in zip(a.regs, b.regs):
            if base == "abs":
                out.append(self.alu(w + "max", x, self.alu(w + "sub", self.const64(0), x)))
            elif base == "usub":
                out.append(self.alu(w + "sub", self.alu(u + w + "max", x, y), y))
            elif base == "uadd":
                out.append(self.alu(w + "add", self.alu(u + w + "min", x, self.alu(w + "xor", y, self.const64(-1))), y))
            else:
                out.append(self.alu(u + w + base[1:], x, y))
        return Val(kind, tuple(out))

    def funnel(self, left: bool, ty: str, a: Val, b: Val, c: Val) -> Val:
        """llvm.fshl / llvm.fshr (rotate(), `(x << r) | (x >> (32 - r))`): a:b shifted by c mod the
        width W, the high (fshl) or low (fshr) half kept.  The ALU's shifts take their amount mod
        the lane width, so a 32/64-bit funnel by z never shifts by W: fshl is (a << z) | ((b >> 1)
        >> ~z), fshr ((a << 1) << ~z) | (b >> z); by a constant, one shift each way (z = 0 is an
        operand).  An i8/i16 (upper lane bits don't-care) is a:b in one 32-bit lane, shifted."""
        W = int(ty[1:])
        wide = W == 64
        shl, shr, not_, and_, or_ = ("llsl", "ulsr", "lnot", "land", "lor") if wide else \
            ("ilsl", "uilsr", "inot", "iand", "ior")
        mask = self.const64 if wide else self.c32
        if c.const is not None:
            z = c.const % W
            if z == 0:
                return a if left else b
            up = z if left else W - z                      # a moves up by this much, b down by W - up
            if W < 32:
                b = Val(b.kind, (self.alu(and_, b.regs[0], mask((1 << W) - 1)),))
            return Val(a.kind, tuple(self.alu(or_, self.alu(shl, x, self.c32(up)), self.alu(shr, y, self.c32(W - up)))
                                     for x, y in zip(a.regs, b.regs)))
        if W < 32:
            t = self.alu(or_, self.alu(shl, a.regs[0], self.c32(W)), self.alu(and_, b.regs[0], mask((1 << W) - 1)))
            z = self.alu(and_, c.regs[0], mask(W - 1))
            return Val(a.kind, (self.alu(shr, self.alu(shl, t, z), self.c32(W)) if left else self.alu(shr, t, z),))
        one = self.c32(1)
        out = []
        for x, y, n in zip(a.regs, b.regs, self.wide(c, signed=False) if wide else c.regs):
            if left:
                out.append(self.alu(or_, self.alu(shl, x, n), self.alu(shr, self.alu(shr, y, one), self.alu(not_, n))))
            else:
                out.append(self.alu(or_, self.alu(shl, self.alu(shl, x, one), self.alu(not_, n)), self.alu(shr, y, n)))
        return Val(a.kind, tuple(out))

    def reverse(self, v: Val, ty: str, unit: int) -> Val:
        """Reverse the order of v's `unit`-bit fields (8: llvm.bswap, 1: llvm.bitreverse): swap
        neighbouring fields, then pairs of them and so on up to the lane's halves (a shift and a mask
        each way), then shift an i8/i16 down from the top of its 32-bit lane (whose upper bits are
        don't-care, and leave at the bottom)."""
        wide = ty == "i64"
        lane = 64 if wide else 32
        shl, shr, and_, or_ = ("llsl", "ulsr", "land", "lor") if wide else ("ilsl", "uilsr", "iand", "ior")
        mask = self.const64 if wide else self.c32
        out = []
        for x in v.regs:                        # an i64 Val holds two registers (KINDS)
            s = unit
            while s < lane:
                low = sum(((1 << s) - 1) << k for k in range(0, lane, 2 * s))     # the even fields of width s
                x = self.alu(or_, self.alu(and_, self.alu(shr, x, self.c32(s)), mask(low)),
                             self.alu(shl, self.alu(and_, x, mask(low)), self.c32(s)))
                s *= 2
            out.append(self.alu(shr, x, self.c32(lane - int(ty[1:]))) if int(ty[1:]) < lane else x)
        return Val(v.kind, tuple(out))

    # calls -------------------------------------------------------------------------------------------
    def call(self, i: Inst, p: VReg):
        name, base = i.callee, callee_base(i)
        get = self.raw if base in ("fmuladd", "fma") else self.val      # chain operations (nans.py)
        args = [get(o) for o in i.ops if not (isinstance(o, tuple) and o[0] in ("fn", "meta"))]
        if name == "__mncl_barrier":
            self.has_barrier = True
            return None              # lock-step SIMD: every access before it has completed
        if name.startswith(("llvm.lifetime", "llvm.assume", "llvm.dbg", "llvm.experimental.noalias")):
            return None
        ty = i.type
        wide = ty == "double"
        if base in ("fmuladd", "fma") and ty in ("float", "double"):
            self.flops += 2
            if wide:
                v = Val("f64", tuple(self.fmul64(x, y, add=z) for x, y, z in zip(*(a.regs for a in args))))
            else:
                v = Val("f32", (self.mau("fvfma", args[0].regs[0], args[1].regs[0], args[2].regs[0]),))
            return self.lazy_result(i, v, ("fma", *args))
        if base == "fabs":
            m = self.const64((1 << 63) - 1) if wide else self.c32(0x7FFFFFFF)
            return Val(args[0].kind, tuple(self.alu("land", r, m) for r in args[0].regs))
        if base == "sqrt" and ty == "float":
            v = Val("f32", (self.fsqrt32(args[0].regs[0]),))
            if not no_nans(i):       # a negative x gives a finite number, not +-inf: settled at once
                v.lazy = ("sqrt", args[0])
                self.fix_nans(v, guard=False)
                v.lazy = None
            return v
        if base in ("minnum", "maxnum", "minimum", "maximum") and ty in ("float", "double"):
            mn = ("d" if wide else "f") + ("min" if "min" in base else "max")
            out = []
            for x, y in zip(args[0].regs, args[1].regs):
                r = self.alu(mn, x, y)
                if base in ("minnum", "maxnum") and not no_nans(i):   # a NaN operand gives the other
                    for a, b in ((args[0], y), (args[1], x)):
                        if a.const is None:
                            self.masked_copy(b, r, self.nan_mask(a.regs[len(out)], wide))
                out.append(r)
            return Val(args[0].kind, tuple(out))
        if base == "floor" and ty in ("float", "double"):
            out = []
            mag = self.const64((1 << 63) - 1) if wide else self.c32(0x7FFFFFFF)
            for r in args[0].regs:       # the ALU's floor makes -0 +0: floor(+-0) is x
                f = self.alu(("d" if wide else "f") + "floor", r)
                self.masked_copy(r, f, self.flags(("l" if wide else "i") + "and", r, mag))
                out.append(f)
            return Val(args[0].kind, tuple(out))
        if base in self.INT_CALLS and ty in ("i8", "i16", "i32", "i64"):
            return self.int_call(base, ty, args)
        if base in ("fshl", "fshr") and ty in ("i8", "i16", "i32", "i64"):
            return self.funnel(base == "fshl", ty, *args)
        if base in ("bswap", "bitreverse") and ty in ("i1", "i8", "i16", "i32", "i64"):
            return args[0] if ty == "i1" else self.reverse(args[0], ty, 8 if base == "bswap" else 1)
        if name == "__mncl_local":
            return Val("ptr", base=("local",), off=Val("i32", (self.local_base(),)), coff=args[0].const)
        if base in ("memset", "memcpy", "memmove"):
            return self.mem_intrinsic(base, args, p)
        from .mathlib import lower_math
        v = lower_math(self, base, ty, args)
        if v is not None:
            return v
        raise CodegenError(f"function '{name}' is not supported on the emulator device yet", self.line)


def aff_add(a, b, sign=1):
    """The affine form of a + sign * b (see Val.gid_affine)."""
    if b[2] is None:
        seq = a[2]
    else:
        seq = f"({a[2] or 0}) {'+' if sign > 0 else '-'} ({b[2]})"
    return a[0] + sign * b[0], a[1] + sign * b[1], seq


def aff_scale(a, c: int):
    return a[0] * c, a[1] * c, None if a[2] is None else f"({a[2]}) * {c}"


def odd_int(ty: str) -> bool:
    """An integer type of a width the backend does not compute in directly (i33, i24, i48 ...)."""
    return ty[:1] == "i" and ty[1:].isdigit() and ty not in ("i1", "i8", "i16", "i32", "i64")


def container_int(ty: str) -> str:
    """The width an odd-width integer is computed in."""
    n = int(ty[1:])
    if n > 64:
        raise CodegenError(f"integers of type {ty} are not supported on the emulator device")
    return "i64" if n > 32 else "i32"


def type_size(ty: str) -> int:
    """Bytes a value of ``ty`` takes in memory (LLVM's own layout, see irtypes)."""
    try:
        return irtypes.size(ty)
    except Unsupported as e:
        raise CodegenError(str(e)) from None

