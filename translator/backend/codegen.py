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

Where.  ``Codegen`` here is the driver: it makes the ``Emitter`` (emitter.py: all the state of
one kernel's translation and the lane operations everything emits with) and one object per
concern, each of which takes the emitter and reaches the others through it (``em.values``,
``em.memory`` ...); it builds the prologue from the argument block (the launch ABI below),
walks the blocks (control.py) and translates each instruction by its kind:

  values.py      Val; constants, vectors, aggregates; integer ranges and affine forms; what the
                 sequencer knows of a value
  workitems.py   each lane's global, local and group ids
  control.py     predicates, phis, loops (``.while any`` and sequencer loops), captures
  isel_int.py    integer arithmetic, multiplication and division sequences, compares
  isel_float.py  float arithmetic, division and sqrt, compares, conversions
  calls.py       builtins and intrinsics (the math library: mathlib.py)
  memory.py      addresses, loads and stores, private arrays, contiguous and uniform paths,
                 gathers, stores in flight
  scatter.py     scattered stores: batches, passes, claims
  bounds.py      bounds checks and their report
  resident.py    buffers resident in LM0 ("-res" builds)
  nans.py        IEEE NaNs and signed zeros after MAU chains
"""
from __future__ import annotations

from . import irtypes
from .abi import ARGBLK, ARGBLK_TAG, GROUP_SLOTS, reg, ARG_LONGS, PARAM_SLOT, SHAPE, SHAPE_SLOT, WG_SLOT, \
    wide_arg_slots
from .cfg import cfg_of
from .irread import Arg, Const, Func, Inst
from .irtypes import odd_int, type_size
from .layout import Layout
from .ops import MV, Op, VReg
from .emitter import CodegenError, Emitter
from .values import CASTS, KINDS, MAX_BUFFER, MAX_GLOBAL_ID, SMALL, Val, Values
from .control import Control, MixedPointer
from .nans import NanFixups
from .workitems import WorkItems
from .isel_int import INT_BIN32, IntSelection
from .isel_float import FloatSelection
from .calls import Calls
from .memory import Memory
from .resident import Resident
from .scatter import Scatter
from .bounds import Bounds
from .rowplan import RowPlan
from .rowstore import RowStore
from .splitcopy import SplitCopy
from .tileplan import TilePlan
from .windowplan import WindowPlan
from .access import analyse, block_tests


WAVE_INVARIANT_OPS = {"add", "sub", "mul", "and", "or", "xor", "shl", "lshr", "ashr", "icmp", "select",
                      "sext", "zext", "trunc", "freeze", "fadd", "fsub", "fmul", "fneg", "fcmp", "sitofp",
                      "uitofp", "fpext", "fptrunc"}


class Codegen:
    """The driver: makes the emitter and the parts, walks the function's blocks (control.py) and
    translates each instruction by its kind; also reads the argument block (the prologue)."""

    SCATTER_BATCH = 32                    # stores one pass over a buffer's chunks applies at most

    def __init__(self, func: Func, layout: Layout, params, one_d: bool, chunk_longs: int, replicate: bool = True,
                 resident=(), ptr_bases=None, scatter_batch: int = SCATTER_BATCH, lazy_cap=None, local_l2b=False):
        self.em = em = Emitter(func, layout, params, wide_arg_slots(params), one_d, chunk_longs, replicate, resident,
                               ptr_bases, scatter_batch, lazy_cap, local_l2b)
        em.codegen = self
        em.values, em.workitems, em.control = Values(em), WorkItems(em), Control(em)
        em.ints, em.floats, em.calls = IntSelection(em), FloatSelection(em), Calls(em)
        em.memory, em.resident_buffers, em.scatter, em.bounds = Memory(em), Resident(em), Scatter(em), Bounds(em)
        em.row_plan, em.row_store, em.split_copy = RowPlan(em), RowStore(em), SplitCopy(em)
        em.tile_plan = TilePlan(em)
        em.window = WindowPlan(em)
        em.nans = NanFixups(em)

    # ------------------------------------------------------------------ the prologue
    def arg_word(self, slot):
        return 2 * slot                      # LM1 word address of argument block long word `slot`

    def argval(self, slot, hint="") -> VReg:
        em = self.em
        r = VReg(hint)
        em.prologue.append(Op(f"lpassa $ln{self.arg_word(slot)} {{d0}}", "alu", (r,), (),
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
        em = self.em
        key = (slot, byte, ty)
        if key not in em.wide_vals:
            saved, em.items = em.items, []
            r = self.argval(slot, f"arg{slot}")
            if type_size(ty) < 8:
                x = em.alu("ulsr", r, em.c32(8 * byte)) if byte else r
                r = em.alu("lor", em.alu("llsl", x, em.c32(32)), em.alu("land", x, em.const64(0xFFFFFFFF)))
            em.prologue += em.items
            em.items = saved
            k = em.values.kind_of(ty)
            em.wide_vals[key] = Val(k, (r,) if KINDS[k] == 1 else (r, r))
        return em.wide_vals[key]

    def build_prologue(self):
        """Broadcast the argument block to every PE (LM1 words 0..127), compute each slot's work-item."""
        em = self.em
        lay = em.lay
        pro = []
        lc = em.alloc_lc(ARG_LONGS)
        lb = em.alloc_lb(ARG_LONGS)
        pro.append(MV(f"mvb/n{ARG_LONGS}i{ARGBLK_TAG} $d0@0 $lc{lc}", reg(ARGBLK)))
        pro.append(Op(f"wait i{ARGBLK_TAG}", "wait"))
        pro.append(Op(f"l2bmb $lc{lc} $lb{lb}", "l2bm", mem=(("r", "lc", lc, lc + 64), ("w", "lb", lb, lb + 64))))
        for u in range(ARG_LONGS // 8):
            pro.append(Op(f"l1bmp $llb{lb + 8 * u} $lln{16 * u}v", "l1bm",
                          mem=(("r", "lb", lb + 8 * u, lb + 8 * u + 8), ("w", "n", 16 * u, 16 * u + 16))))
        em.prologue[:0] = pro
        # the slot's work-item offset within the wave (layout.item_of_slot)
        saved, em.items = em.items, []
        cyc = em.cycle = em.new("cycle")
        em.op("zero {d0}", "alu", (cyc,))
        for c in (1, 2, 3):
            em.op(f"imm {c} {{d0}}/{'0000'[:c] + '1' + '0000'[c + 1:]}", "alu", (cyc,), (cyc,), partial=True)
        P, N = lay.pe_l1b, lay.l1b
        x = em.new("peid")
        em.op("ipassa $peid {d0}", "alu", (x,))
        i = em.new("l1bid")
        em.op("ipassa $l1bid {d0}", "alu", (i,))
        l2 = em.new("l2bid")
        em.op("ipassa $l2bid {d0}", "alu", (l2,))
        r = em.alu("iadd", em.alu("ilsl", cyc, em.c32(P.bit_length() - 1)), x)
        q = em.alu("ilsl", em.alu("ilsr", r, em.c32(3)), em.c32((8 * N).bit_length() - 1))
        q = em.alu("iadd", q, em.alu("ilsl", i, em.c32(3)))
        q = em.alu("iadd", q, em.alu("iand", r, em.c32(7)))
        q = em.alu("iadd", q, em.alu("ilsl", l2, em.c32((4 * N * P // lay.narrow).bit_length() - 1)))
        s = em.slot = em.alu("iadd", em.alu("ilsl", q, em.c32(1)), em.const64(1 << 32), hint="slot")
        sh = {k: self.argval(SHAPE_SLOT + j, k) for j, k in enumerate(SHAPE)}
        em.shape = sh
        # in a narrowed wave, slots past the long words the chain fills hold no work-item (they repeat
        # the slot numbers of slots that do: their inputs are not staged for them)
        chained = None if lay.narrow == 1 else em.bool_from_mask(em.flags("uimin", r, em.c32(lay.l1bm_used - 1)))
        if em.one_d or em.rows is not None:
            # a 1-D launch's wave spans the machine (narrowed), and a "rows" build's wave is W flat
            # positions (shape W x 1 x 1): the slot is x
            em.sx, em.sy, em.sz = s, em.c32(0), em.c32(0)
            em.in_wave = chained
        elif em.group_major:
            self.group_positions(s, sh)
            if chained is not None:
                em.in_wave = em.b_and(em.in_wave, chained)
        else:
            em.sz = em.ints.div_exact(s, sh["rwxy"])
            rest = em.alu("isub", s, em.ints.mul32(em.sz, sh["wxy"]))
            em.sy = em.ints.div_exact(rest, sh["rwx"])
            em.sx = em.alu("isub", rest, em.ints.mul32(em.sy, sh["wx"]))
            em.in_wave = em.bool_from_mask(em.flags("uimax", sh["wz"], em.alu("iinc", em.sz)))
            if chained is not None:     # (a rows build narrowed for a small 2-D launch)
                em.in_wave = em.b_and(em.in_wave, chained)
        em.X0, em.Y0, em.Z0 = (em.new(n) for n in ("X0", "Y0", "Z0"))
        for z in (em.X0, em.Y0, em.Z0):
            em.op("zero {d0}", "alu", (z,))
        em.prologue += em.items
        em.items = saved

    def group_positions(self, s: VReg, sh: dict):
        """A "groups" build (abi.group_major): slot s, o = s mod R into its L2B's run of R slots,
        holds work-item l = o mod G of the L2B's work-group j = o div G (G the work-group size),
        which is the wave's group q = b * gpl + j (b the L2B, gpl its groups: abi.groups_per_l2b),
        (qx, qy, qz) of the wave's kx x ky x kz.  Its position in the wave's box is q * ls + l per
        dimension, and j is its __local block in the L2B's (WorkItems.local_base).  A slot past
        the L2B's groups, or the wave's, holds none."""
        em = self.em
        ints, R = em.ints, em.lay.l2b_items
        g = {n: self.argval(GROUP_SLOTS[n], n) for n in GROUP_SLOTS}
        size = ints.mul32(sh["lsx"], ints.mul32(sh["lsy"], sh["lsz"]))
        o = em.alu("iand", s, em.c32(R - 1))
        j = em.group_slot = ints.div_exact(o, g["rgs"])
        l = em.alu("isub", o, ints.mul32(j, size))
        q = em.alu("iadd", ints.mul32(em.alu("uilsr", s, em.c32(R.bit_length() - 1)), g["gpl"]), j)

        def digits(v, r0, n0, r1, n1):          # v as v0 + n0 * (v1 + n1 * v2)
            a = ints.div_exact(v, r0)
            c = ints.div_exact(a, r1)
            return em.alu("isub", v, ints.mul32(a, n0)), em.alu("isub", a, ints.mul32(c, n1)), c
        lid = digits(l, sh["rlsx"], sh["lsx"], sh["rlsy"], sh["lsy"])
        grp = digits(q, g["rkx"], sh["kx"], g["rky"], sh["ky"])
        em.sx, em.sy, em.sz = (em.alu("iadd", ints.mul32(c, sh[n]), x)
                               for c, x, n in zip(grp, lid, ("lsx", "lsy", "lsz")))
        em.in_wave = em.b_and(em.bool_from_mask(em.flags("uimax", g["gpl"], em.alu("iinc", j))),
                              em.bool_from_mask(em.flags("uimax", sh["wz"], em.alu("iinc", em.sz))))

    # ------------------------------------------------------------------ control flow
    def translate(self):
        """Prologue and wave body for the whole function (once per Codegen)."""
        em = self.em
        self.build_prologue()
        em.items = []
        em.workitems.wave_ids()
        f = em.f
        em.bmap = {b.name: b for b in f.blocks}
        g = cfg_of(f)
        em.succ, em.rpo, em.back, em.preds, em.loops = g.succ, g.rpo, g.back, g.preds, g.loops
        for a, base in zip(f.args, (("args",), ("wg",), ("ids",))):
            em.vals[a] = Val("ptr", base=base)
        users = {}
        for b in f.blocks:
            for i in b.insts:
                for o in i.ops:
                    if isinstance(o, Inst):
                        users.setdefault(o, []).append(i)
        em.users = users
        assumed = set()
        em.accesses = {a.inst: a for a in analyse(f, em.params, no_offset=em.one_d or em.rows is not None,
                                                   assumed=assumed)}
        em.launch_tests |= block_tests(assumed)
        em.resident_buffers.resident_copies()
        em.control.emit_region([n for n in em.rpo], None)
        em.resident_buffers.write_back()
        em.memory.drop_unissued_waits()
        if em.oob is not None:          # after the last wave
            saved, em.items = em.items, []
            em.bounds.report_bounds()
            em.epilogue, em.items = em.items, saved
        # the transfers of the wave's first loads start together at the top of the wave
        # (waits first: a wait orders every op after it, so the moves can then mix with the compute)
        # (the plain MVs first, then the window plan's sequencer-sized ones: prefetch.py)
        ops = [o for _, ops in em.hoisted for o in ops]
        mvs = [mv for mv, _ in em.hoisted if mv is not None]
        em.items[:0] = sorted(mvs, key=lambda mv: not isinstance(mv, MV)) + [o for o in ops if o.unit == "wait"] + \
            [o for o in ops if o.unit != "wait"]

    def wave_invariant(self, x) -> bool:
        """x is the same in every lane of every wave (pure scalar arithmetic on constants and scalar
        kernel arguments): computed once, in the prologue, not in every wave."""
        em = self.em
        if isinstance(x, Const):
            return True
        if not isinstance(x, Inst):
            return False
        r = em.invariant.get(x)
        if r is None:
            if x.op == "load":         # a scalar argument (not one picked per lane, see either_arg)
                ptr = em.vals.get(x.ops[0])
                r = ptr is not None and ptr.base is not None and ptr.base[0] == "scalar" and ptr.off is None
            else:
                r = x.op in WAVE_INVARIANT_OPS and not x.type.startswith("<") and \
                    all(self.wave_invariant(o) for o in x.ops)
            em.invariant[x] = r
        return r

    def inst(self, i: Inst, p: VReg):
        em = self.em
        if em.gathers and self.may_use_gathers(i):
            em.memory.flush_gathers()
        if em.batch and self.may_see_stores(i):
            em.scatter.flush_scatters()
        if i.op in WAVE_INVARIANT_OPS and self.wave_invariant(i):
            outer, em.items = em.items, []
            try:
                self.inst_here(i, p)
            finally:
                em.prologue += em.items
                em.items = outer
        else:
            self.inst_here(i, p)

    GATHER_NEUTRAL = {"getelementptr", "add", "sub", "mul", "shl", "lshr", "ashr", "and", "or", "xor",
                      "sext", "zext", "trunc", "icmp", "select", "load"}

    def may_use_gathers(self, i: Inst) -> bool:
        """Whether i may read what the waiting gathers load or change what they read (so their pass
        goes first): anything but integer arithmetic and loads that do not use their values."""
        return i.op not in self.GATHER_NEUTRAL or any(o in self.em.pending for o in i.ops)

    def may_see_stores(self, i: Inst) -> bool:
        """Whether what i reads or does may depend on the batched stores (so they go first): a
        load, except from private memory; a call, except of an LLVM intrinsic that touches no memory."""
        em = self.em
        if i.op == "load":
            ptr = em.vals.get(i.ops[0]) if isinstance(i.ops[0], (Inst, Arg)) else None
            return not (ptr is not None and ptr.kind == "ptr" and (ptr.base or ("",))[0] == "priv")
        if i.op == "call":
            callee = i.callee or ""
            return not callee.startswith("llvm.") or callee.startswith(("llvm.mem", "llvm.lifetime"))
        return i.op in ("atomicrmw", "cmpxchg", "fence")

    def inst_here(self, i: Inst, p: VReg):
        em = self.em
        op = i.op
        em.cur = i
        if op in ("br", "switch", "ret", "unreachable"):
            return
        if any(odd_int(t) for t in [i.type] + [getattr(o, "type", "") for o in i.ops]):
            return em.ints.widened(i, p)
        k = {"load": 0, "getelementptr": 0, "store": 1}.get(op)
        if k is not None and isinstance(i.ops[k], (Inst, Arg)) and \
                (em.values.val(i.ops[k]).base or ("",))[0] == "either":
            v = em.memory.on_either(i, k, p)
            if v is not None:
                em.vals[i] = v
            return
        if op == "freeze":
            em.vals[i] = em.values.val(i.ops[0])
            return
        if op in ("extractvalue", "insertvalue") or op in ("load", "store") and irtypes.is_aggregate(
                i.type if op == "load" else i.ops[0].type):
            v = em.values.aggregate_inst(i, p)
            if v is not None:
                em.vals[i] = v
            return
        if i.type.startswith("<") or any(isinstance(o, (Inst, Arg, Const)) and o.type.startswith("<") for o in i.ops):
            v = em.values.vector_inst(i, p)
            if v is not None:
                em.vals[i] = v
            return
        if op in INT_BIN32 or op in ("mul", "udiv", "sdiv", "urem", "srem"):
            em.vals[i] = em.ints.int_binop(i)
        elif op in ("fadd", "fsub", "fmul", "fdiv", "frem", "fneg"):
            em.vals[i] = em.floats.float_op(i)
        elif op == "icmp":
            a, b = em.values.val(i.ops[0]), em.values.val(i.ops[1])
            if i.ops[0].type in SMALL:
                signed = i.pred[0] == "s"
                a, b = (em.values.norm_small(x, i.ops[0].type, signed) for x in (a, b))
            em.vals[i] = Val("b", (em.ints.icmp(i.pred, a, b),))
        elif op == "fcmp":
            em.vals[i] = Val("b", (em.floats.fcmp(i.pred, em.values.val(i.ops[0]), em.values.val(i.ops[1])),))
        elif op == "select":
            c = em.values.val(i.ops[0]).regs[0]
            em.vals[i] = em.values.select(c, em.values.val(i.ops[1]), em.values.val(i.ops[2]))
        elif op in CASTS:
            em.vals[i] = em.floats.cast(i)
        elif op == "getelementptr":
            em.vals[i] = em.memory.gep(i)
        elif op == "load":
            em.vals[i] = em.memory.load(i, p)
        elif op == "store":
            em.memory.store(i, p)
        elif op == "call":
            v = em.calls.call(i, p)
            if v is not None:
                em.vals[i] = v
        elif op == "alloca":
            em.vals[i] = Val("ptr", base=("priv",), coff=em.memory.private_offset(i))
        else:
            raise CodegenError(f"LLVM instruction '{op}' is not supported on the emulator device yet", em.line)


# names other modules import from here: the launch ABI (translator/backend/__init__.py, mncl), the
# emulator device's limits the bounds checks are exact up to (mncl/emulator_device.py) and the
# errors compile_kernel reports (translator/backend/__init__.py)
__all__ = ["ARG_LONGS", "PARAM_SLOT", "SHAPE", "SHAPE_SLOT", "WG_SLOT", "wide_arg_slots", "Codegen",
           "CodegenError", "MixedPointer", "MAX_BUFFER", "MAX_GLOBAL_ID"]
