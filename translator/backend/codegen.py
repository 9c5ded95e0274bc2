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

from . import irtypes
from .irread import Arg, Const, Func, Inst
from .irtypes import odd_int, type_size
from .layout import Layout
from .ops import MV, Op, VReg
from .emitter import CodegenError, Emitter
from .values import KINDS, MAX_BUFFER, MAX_GLOBAL_ID, Val, Values
from .control import Control, MixedPointer
from .nans import NanFixups
from .workitems import WorkItems
from .isel_int import IntSelection
from .isel_float import FloatSelection
from .calls import Calls
from .memory import Memory
from .resident import Resident
from .scatter import Scatter
from .bounds import Bounds

# LM1 word addresses of the argument block (the runtime writes it to DRAM; the prologue broadcasts it)
ARG_LONGS = 64
WG_SLOT = 0                  # wg[0..15]
PARAM_SLOT = 16              # one long word per kernel parameter (32-bit values in both halves)
SHAPE_SLOT = 40              # launch shape values, see SHAPE (32-bit, in both halves)
SHAPE = ("wx", "wy", "wz", "wxy", "rwx", "rwxy", "gx", "gy", "gz", "offx", "offy", "offz",
         "lsx", "lsy", "lsz", "rlsx", "rlsy", "rlsz", "kx", "ky", "lbytes")
# r<name> is fp64 1/<name> (64 bits); the others are 32-bit values in both halves.  The wave is
# wx x wy x wz work-items (slot s -> s mod wx, (s div wx) mod wy, s div wxy); when the kernel has
# __local memory or barriers it holds whole work-groups, kx x ky x kz of them, and each group's
# __local block is lbytes long in the local scratch buffer (see Codegen.local_base)
MAX_PARAMS = SHAPE_SLOT - PARAM_SLOT


def wide_arg_slots(params) -> dict:
    """Parameter index -> first argument-block long word of each by-value argument wider than 8
    bytes (a vector, a struct).  Its bytes lie there packed, little-endian, in the parameter slots
    the kernel's parameter count leaves free, taken from the top down; the runtime writes them
    there, the kernel reads them (Codegen.wide_arg)."""
    out, top = {}, SHAPE_SLOT
    for k, p in enumerate(params):
        if p.kind == "scalar" and p.size > 8:
            top -= -(-p.size // 8)
            out[k] = top
    if top < PARAM_SLOT + len(params):
        raise CodegenError(f"the by-value arguments wider than 8 bytes need {SHAPE_SLOT - top} long words of the "
                           f"argument block; with {len(params)} parameters {MAX_PARAMS - len(params)} are free")
    return out


class Codegen:
    """The driver: makes the emitter and the parts, walks the function's blocks (control.py) and
    translates each instruction by its kind; also reads the argument block (the prologue)."""

    SCATTER_BATCH = 32                    # stores one pass over a buffer's chunks applies at most

    def __init__(self, func: Func, layout: Layout, params, one_d: bool, chunk_longs: int, replicate: bool = True,
                 resident=(), ptr_bases=None, scatter_batch: int = SCATTER_BATCH, lazy_cap=None):
        self.em = em = Emitter(func, layout, params, wide_arg_slots(params), one_d, chunk_longs, replicate, resident,
                               ptr_bases, scatter_batch, lazy_cap)
        em.codegen = self
        em.values, em.workitems, em.control = Values(em), WorkItems(em), Control(em)
        em.ints, em.floats, em.calls = IntSelection(em), FloatSelection(em), Calls(em)
        em.memory, em.resident_buffers, em.scatter, em.bounds = Memory(em), Resident(em), Scatter(em), Bounds(em)
        em.nans = NanFixups(em)

    # ------------------------------------------------------------------ the prologue
    def arg_word(self, slot):
        return 2 * slot                      # LM1 word address of argument block long word `slot`

    def argval(self, slot, hint="") -> VReg:
        r = VReg(hint)
        self.em.prologue.append(Op(f"lpassa $ln{self.arg_word(slot)} {{d0}}", "alu", (r,), (),
                                mem=(("r", "n", self.arg_word(slot), self.arg_word(slot) + 2),)))
        return r

    def param_word(self, k: int, hint="") -> VReg:
        """Kernel parameter k's long word of the argument block: a scalar's value, a buffer's size in
        bytes (32-bit values in both halves)."""
        return self.argval(PARAM_SLOT + k, hint)

    def param_slot(self, k: int) -> int:
        """The argument-block long word where parameter k's bytes start (see wide_arg_slots)."""
        return self.em.wide_args.get(k, PARAM_SLOT + k)

    def wg_word(self, k: int, hint="") -> VReg:
        """Long word k of the work-group block wg[0..15] of the argument block."""
        return self.argval(WG_SLOT + k, hint)

    def wide_arg(self, slot, byte, ty) -> Val:
        """Element `ty` at `byte` of argument-block long word `slot` (of a by-value vector or struct;
        see wide_arg_slots), in both 32-bit halves; extracted once, in the prologue."""
        key = (slot, byte, ty)
        if key not in self.em.wide_vals:
            saved, self.em.items = self.em.items, []
            r = self.argval(slot, f"arg{slot}")
            if type_size(ty) < 8:
                x = self.em.alu("ulsr", r, self.em.c32(8 * byte)) if byte else r
                r = self.em.alu("lor", self.em.alu("llsl", x, self.em.c32(32)), self.em.alu("land", x, self.em.const64(0xFFFFFFFF)))
            self.em.prologue += self.em.items
            self.em.items = saved
            k = self.em.values.kind_of(ty)
            self.em.wide_vals[key] = Val(k, (r,) if KINDS[k] == 1 else (r, r))
        return self.em.wide_vals[key]

    def build_prologue(self):
        """Broadcast the argument block to every PE (LM1 words 0..127), compute each slot's work-item."""
        lay = self.em.lay
        pro = []
        lc = self.em.alloc_lc(ARG_LONGS)
        lb = self.em.alloc_lb(ARG_LONGS)
        pro.append(MV(f"mvb/n{ARG_LONGS}i250 $d0@0 $lc{lc}", "%argblk"))
        pro.append(Op("wait i250", "wait"))
        pro.append(Op(f"l2bmb $lc{lc} $lb{lb}", "l2bm", mem=(("r", "lc", lc, lc + 64), ("w", "lb", lb, lb + 64))))
        for u in range(ARG_LONGS // 8):
            pro.append(Op(f"l1bmp $llb{lb + 8 * u} $lln{16 * u}v", "l1bm",
                          mem=(("r", "lb", lb + 8 * u, lb + 8 * u + 8), ("w", "n", 16 * u, 16 * u + 16))))
        self.em.prologue[:0] = pro
        # the slot's work-item offset within the wave (layout.item_of_slot)
        saved, self.em.items = self.em.items, []
        cyc = self.em.cycle = self.em.new("cycle")
        self.em.op("zero {d0}", "alu", (cyc,))
        for c in (1, 2, 3):
            self.em.op(f"imm {c} {{d0}}/{'0000'[:c] + '1' + '0000'[c + 1:]}", "alu", (cyc,), (cyc,), partial=True)
        P, N = lay.pe_l1b, lay.l1b
        x = self.em.new("peid")
        self.em.op("ipassa $peid {d0}", "alu", (x,))
        i = self.em.new("l1bid")
        self.em.op("ipassa $l1bid {d0}", "alu", (i,))
        l2 = self.em.new("l2bid")
        self.em.op("ipassa $l2bid {d0}", "alu", (l2,))
        r = self.em.alu("iadd", self.em.alu("ilsl", cyc, self.em.c32(P.bit_length() - 1)), x)
        q = self.em.alu("ilsl", self.em.alu("ilsr", r, self.em.c32(3)), self.em.c32((8 * N).bit_length() - 1))
        q = self.em.alu("iadd", q, self.em.alu("ilsl", i, self.em.c32(3)))
        q = self.em.alu("iadd", q, self.em.alu("iand", r, self.em.c32(7)))
        q = self.em.alu("iadd", q, self.em.alu("ilsl", l2, self.em.c32((4 * N * P // lay.narrow).bit_length() - 1)))
        s = self.em.slot = self.em.alu("iadd", self.em.alu("ilsl", q, self.em.c32(1)), self.em.const64(1 << 32), hint="slot")
        sh = {k: self.argval(SHAPE_SLOT + j, k) for j, k in enumerate(SHAPE)}
        self.em.shape = sh
        if self.em.one_d:                    # a 1-D launch's wave spans the machine (narrowed): the slot is x
            self.em.sx, self.em.sy, self.em.sz = s, self.em.c32(0), self.em.c32(0)
            # in a narrowed wave, slots past the long words the chain fills hold no work-item
            self.em.in_wave = None if lay.narrow == 1 else \
                self.em.bool_from_mask(self.em.flags("uimin", r, self.em.c32(lay.l1bm_used - 1)))
        else:
            self.em.sz = self.em.ints.div_exact(s, sh["rwxy"])
            rest = self.em.alu("isub", s, self.em.ints.mul32(self.em.sz, sh["wxy"]))
            self.em.sy = self.em.ints.div_exact(rest, sh["rwx"])
            self.em.sx = self.em.alu("isub", rest, self.em.ints.mul32(self.em.sy, sh["wx"]))
            self.em.in_wave = self.em.bool_from_mask(self.em.flags("uimax", sh["wz"], self.em.alu("iinc", self.em.sz)))
        self.em.X0, self.em.Y0, self.em.Z0 = (self.em.new(n) for n in ("X0", "Y0", "Z0"))
        for z in (self.em.X0, self.em.Y0, self.em.Z0):
            self.em.op("zero {d0}", "alu", (z,))
        self.em.prologue += self.em.items
        self.em.items = saved

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
        self.em.items = []
        self.em.workitems.wave_ids()
        f = self.em.f
        self.em.bmap = {b.name: b for b in f.blocks}
        self.em.succ = {b.name: self.successors(b) for b in f.blocks}
        self.em.escapes = {}
        for a, base in zip(f.args, (("args",), ("wg",), ("ids",))):
            self.em.vals[a] = Val("ptr", base=base)
        # depth-first search: reverse postorder and back edges
        order, seen, onstack, back = [], set(), set(), set()

        def dfs(n):
            seen.add(n)
            onstack.add(n)
            for s in self.em.succ[n]:
                if s in onstack:
                    back.add((n, s))
                elif s not in seen:
                    dfs(s)
            onstack.discard(n)
            order.append(n)
        dfs(f.blocks[0].name)
        self.em.rpo = order[::-1]
        self.em.back = back
        preds = {n: [] for n in self.em.rpo}
        for n in self.em.rpo:
            for s in self.em.succ[n]:
                preds[s].append(n)
        self.em.preds = preds
        self.em.loops = {}
        for latch, h in back:
            body, work = {h, latch}, ([latch] if latch != h else [])
            while work:
                n = work.pop()
                for p in preds[n]:
                    if p not in body:
                        body.add(p)
                        work.append(p)
            self.em.loops.setdefault(h, set()).update(body)
        users = {}
        for b in f.blocks:
            for i in b.insts:
                for o in i.ops:
                    if isinstance(o, Inst):
                        users.setdefault(o, []).append(i)
        self.em.users = users
        self.em.pred = {}
        self.em.acc = {}
        self.em.edge = {}
        self.em.loop_stack = []
        self.em.seq_ivs = {}                 # counter phi of a sequencer loop -> its sequencer expression
        self.em.pass_counters = set()        # pass counters of loops run until no lane is left (pass_ivs)
        self.em.resident_buffers.resident_copies()
        self.em.control.emit_region([n for n in self.em.rpo], None)
        self.em.resident_buffers.write_back()
        self.em.memory.drop_unissued_waits()
        if self.em.oob is not None:          # after the last wave
            saved, self.em.items = self.em.items, []
            self.em.bounds.report_bounds()
            self.em.epilogue, self.em.items = self.em.items, saved
        # the transfers of the wave's first loads start together at the top of the wave
        # (waits first: a wait orders every op after it, so the moves can then mix with the compute)
        ops = [o for _, ops in self.em.hoisted for o in ops]
        self.em.items[:0] = [mv for mv, _ in self.em.hoisted] + [o for o in ops if o.unit == "wait"] + \
            [o for o in ops if o.unit != "wait"]

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
        r = self.em.invariant.get(x)
        if r is None:
            if x.op == "load":         # a scalar argument (not one picked per lane, see either_arg)
                ptr = self.em.vals.get(x.ops[0])
                r = ptr is not None and ptr.base is not None and ptr.base[0] == "scalar" and ptr.off is None
            else:
                r = x.op in self.WAVE_INVARIANT_OPS and not x.type.startswith("<") and \
                    all(self.wave_invariant(o) for o in x.ops)
            self.em.invariant[x] = r
        return r

    def inst(self, i: Inst, p: VReg):
        if self.em.batch and self.may_see_stores(i):
            self.em.scatter.flush_scatters()
        if i.op in self.WAVE_INVARIANT_OPS and self.wave_invariant(i):
            outer, self.em.items = self.em.items, []
            try:
                self.inst_here(i, p)
            finally:
                self.em.prologue += self.em.items
                self.em.items = outer
        else:
            self.inst_here(i, p)

    def may_see_stores(self, i: Inst) -> bool:
        """Whether what i reads or does may depend on the batched stores (so they go first): a
        load, except from private memory; a call, except of an LLVM intrinsic that touches no memory."""
        if i.op == "load":
            ptr = self.em.vals.get(i.ops[0]) if isinstance(i.ops[0], (Inst, Arg)) else None
            return not (ptr is not None and ptr.kind == "ptr" and (ptr.base or ("",))[0] == "priv")
        if i.op == "call":
            callee = i.callee or ""
            return not callee.startswith("llvm.") or callee.startswith(("llvm.mem", "llvm.lifetime"))
        return i.op in ("atomicrmw", "cmpxchg", "fence")

    def inst_here(self, i: Inst, p: VReg):
        op = i.op
        self.em.cur = i
        if op in ("br", "switch", "ret", "unreachable"):
            return
        if any(odd_int(t) for t in [i.type] + [getattr(o, "type", "") for o in i.ops]):
            return self.em.ints.widened(i, p)
        k = {"load": 0, "getelementptr": 0, "store": 1}.get(op)
        if k is not None and isinstance(i.ops[k], (Inst, Arg)) and (self.em.values.val(i.ops[k]).base or ("",))[0] == "either":
            v = self.em.memory.on_either(i, k, p)
            if v is not None:
                self.em.vals[i] = v
            return
        if op == "freeze":
            self.em.vals[i] = self.em.values.val(i.ops[0])
            return
        if op in ("extractvalue", "insertvalue") or op in ("load", "store") and irtypes.is_aggregate(
                i.type if op == "load" else i.ops[0].type):
            v = self.em.values.aggregate_inst(i, p)
            if v is not None:
                self.em.vals[i] = v
            return
        if i.type.startswith("<") or any(isinstance(o, (Inst, Arg, Const)) and o.type.startswith("<") for o in i.ops):
            v = self.em.values.vector_inst(i, p)
            if v is not None:
                self.em.vals[i] = v
            return
        if op in self.em.ints.INT_BIN32 or op in ("mul", "udiv", "sdiv", "urem", "srem"):
            self.em.vals[i] = self.em.ints.int_binop(i)
        elif op in ("fadd", "fsub", "fmul", "fdiv", "frem", "fneg"):
            self.em.vals[i] = self.em.floats.float_op(i)
        elif op == "icmp":
            a, b = self.em.values.val(i.ops[0]), self.em.values.val(i.ops[1])
            if i.ops[0].type in self.em.values.SMALL:
                signed = i.pred[0] == "s"
                a, b = (self.em.values.norm_small(x, i.ops[0].type, signed) for x in (a, b))
            self.em.vals[i] = Val("b", (self.em.ints.icmp(i.pred, a, b),))
        elif op == "fcmp":
            self.em.vals[i] = Val("b", (self.em.floats.fcmp(i.pred, self.em.values.val(i.ops[0]), self.em.values.val(i.ops[1])),))
        elif op == "select":
            c = self.em.values.val(i.ops[0]).regs[0]
            self.em.vals[i] = self.em.values.select(c, self.em.values.val(i.ops[1]), self.em.values.val(i.ops[2]))
        elif op in self.em.floats.CASTS:
            self.em.vals[i] = self.em.floats.cast(i)
        elif op == "getelementptr":
            self.em.vals[i] = self.em.memory.gep(i)
        elif op == "load":
            self.em.vals[i] = self.em.memory.load(i, p)
        elif op == "store":
            self.em.memory.store(i, p)
        elif op == "call":
            v = self.em.calls.call(i, p)
            if v is not None:
                self.em.vals[i] = v
        elif op == "alloca":
            self.em.vals[i] = Val("ptr", base=("priv",), coff=self.em.memory.private_offset(i))
        else:
            raise CodegenError(f"LLVM instruction '{op}' is not supported on the emulator device yet", self.em.line)


# names other modules import from here: the launch ABI (translator/backend/__init__.py, mncl), the
# emulator device's limits the bounds checks are exact up to (mncl/emulator_device.py) and the
# errors compile_kernel reports (translator/backend/__init__.py)
__all__ = ["ARG_LONGS", "MAX_PARAMS", "PARAM_SLOT", "SHAPE", "SHAPE_SLOT", "WG_SLOT", "wide_arg_slots", "Codegen",
           "CodegenError", "MixedPointer", "MAX_BUFFER", "MAX_GLOBAL_ID"]
