"""The emitter: the state of one kernel's instruction selection and the operations every part
of it emits with (codegen.py says how the parts fit together).

``Emitter`` holds the output (the wave body ``items``, the ``prologue`` that runs once, the
``epilogue`` after the wave loops), the C line being translated, the allocation counters of
registers, masks, tags and L2BM / L1BM areas, what the runtime must provide (``uses``), the
remarks and bounds-check sites, and the caches the parts share; all of it is made in
``__init__``.  Its methods are the basic lane operations (ALU and MAU instructions, masked
copies, bools and selects of registers, 32 <-> 64-bit lanes) and the allocators.  The parts of
instruction selection (values, control, isel_int, isel_float, calls, memory, scatter, bounds,
resident, workitems, nans) each take the emitter and reach one another through it
(``em.values``, ``em.memory`` ...), which codegen.Codegen wires up.
"""
from __future__ import annotations

from .irread import Func
from .abi import CODEGEN_TAGS
from .layout import Layout
from .ops import MaskReg, Op, SeqIf, VReg


TW, TR = (("w", "t", 0, 1),), (("r", "t", 0, 1),)     # the T register, for ordering


class CodegenError(Exception):
    """A construct the backend cannot translate, with the C line it comes from (0: unknown)."""

    def __init__(self, msg, line=0):
        super().__init__(msg)
        self.line = line


class Emitter:
    """One kernel's instruction-selection state and the operations every part emits with."""

    def __init__(self, func: Func, layout: Layout, params, wide_args: dict, one_d: bool, chunk_longs: int,
                 replicate: bool, resident, ptr_bases, scatter_batch: int, lazy_cap, local_l2b: bool = False):
        self.f = func
        self.ptr_bases = ptr_bases or {}  # IR value name -> the buffers its pointer register holds (MixedPointer)
        self.lay = layout
        self.params = params              # ParamInfo tuple
        self.one_d = one_d
        self.local_l2b = local_l2b        # each L2B streams only its own work-groups' __local blocks (abi.local_per_l2b)
        self.rows = None                  # a "rows" build's FlatRows (rows.py), set by _select
        self.group_major = False          # a "groups" build (abi.group_major), set by _select
        self.group_slot = None            # there: the lane's work-group among its L2B's (Codegen.group_positions)
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
        self.own_staged = 0               # L2BM long words of the staging areas loads took for their own
        self.uses = {}                    # what the runtime must provide ("rows", "bases")
        self.line = 0
        self.flops = 0
        self.fast_cache = {}              # buffer -> (register, staging) of its contiguous load this wave
        self.oob = None                   # (site code, byte offset) registers of bounds checks
        self.oob_high = None              # the high word of a 64-bit index or offset out of bounds
        self.pending_checks = []          # (sequencer condition, per-lane check ops) not yet emitted
        self.batch = None                 # (buffer, stores, items, claims, remark keys, spans): unemitted stores (scatter)
        self.gathers = None               # (buffer, loads, items) gathers whose pass is not yet emitted (Memory.gather)
        self.pending = set()              # the IR instructions whose values those gathers give (control.py)
        self.deferred = False             # the last gather waits (Memory.gather's defer)
        self.elem_of = {}                 # a vector access's element pointer -> (its IR pointer, byte offset)
        self.colliding = set()            # buffers with a store two lanes may make to one element (may_collide)
        self.batched = False              # a batch of more than one store was emitted
        self.elected = {}                 # predicate -> its elected lane, in the block being emitted (elect)
        self.checked = {}                 # (buffer, affine form, size, predicate) -> in-bounds bool
        self.oob_sites = []               # site code - 1 -> (C line, parameter, element size)
        self.remarks = {}                 # (C line, what) -> why an access moves a whole buffer (remark)
        self.launch_tests = set()         # sequencer conditions a launch must meet to run this build (abi)
        self.skewed = set()               # headers of the loops run skewed (control.skewed_loop)
        self.whole_remarks = set()        # ... of those, the ones some pass of which moved all of it (span_remarks)
        self.accesses = {}                # load/store Inst -> its Access (access.py), made by Codegen.translate
        self.row_plans = {}               # (buffer, pitch, start) -> its LM0 regions (rowplan.py)
        self.site_line = None             # the C line(s) an out-of-bounds report names, when not self.line
        self.stored = False               # a store has been emitted in the wave body
        self.unsure_waits = []            # settle_stores' waits for a loop's later store (drop_unissued_waits)
        self.invariant = {}               # Inst -> bool (wave_invariant)
        self.small_quotients = {}         # quotient register -> the sequencer test of its fp32 path
        self.seq_regs = 0                 # sequencer registers made so far (seq_reg)
        self.hoisted = []                 # (MV, its wait and moves to the PEs) of loads that start the wave
        self.prefetchable = []            # ... the MVs of those of read-only buffers (prefetch.py)
        self.own_share_loads = []         # ... of buffers it writes (prefetch.py, if it only stores p[gid])
        self.columns = {}                 # staged loads in loops (their MVs' chain) -> (C line, buffer): colplan.py
        self.plans = {}                   # (C line, buffer[, "store"]) -> the plans chosen, a set (rowplan, colplan; --stats)
        self.scatters = False             # a buffer parameter is stored to other than at p[gid]
        self.wide_args = wide_args        # by-value arguments wider than 8 bytes -> their slots
        self.wide_vals = {}               # (slot, byte, type) -> Val of an element of one
        self.lm_top = layout.lm_words     # LM0 words above this hold uniform-load tables (uniform_table)
        self.ln_top = layout.lm_words     # LM1 words above this hold paired row plans' regions (rowplan.py)
        self.resident = dict.fromkeys(resident)   # buffer -> LM0 word of its resident copy (resident_copies)
        self.res_written = set()                  # resident buffers the kernel stores to (write_back)
        self.reached = {}                 # buffer -> how its accesses reach it ("gather", "other"), in a loop
        self.has_barrier = False
        self.cur = None                   # the instruction being translated
        self.settled = set()              # ids of lazy Vals settled in the block being emitted (nans.py)
        self.entry_settled = set()        # ids of the starts NanFixups.settle_starts settled before their loops
        self.cur_pred = None              # the predicate of the block being emitted (nans.put_off)
        self.scatter_batch = scatter_batch    # stores one pass over a buffer's chunks applies at most (scatter)
        self.lazy_cap = lazy_cap          # a chain of more lazy values is settled where it grows (nans.py)
        self.exact_mode = False           # every float result is settled at once (a loop's exact run, nans.py)
        # the function's control-flow graph (Codegen.translate)
        self.bmap: dict = {}              # block name -> Block
        self.succ: dict = {}              # block name -> its successors
        self.rpo: list = []               # blocks in reverse postorder
        self.back: set = set()            # back edges (latch, header)
        self.preds: dict = {}             # block name -> its predecessors
        self.loops: dict = {}             # loop header -> the blocks of its loop
        self.users: dict = {}             # Inst -> the instructions that use it
        self.dominators = None            # block -> the blocks dominating it (scatter.ids_below), made once
        # predication and loops (control.py)
        self.pred: dict = {}              # block -> its predicate (bool VReg)
        self.acc: dict = {}               # block -> the lanes arriving so far
        self.edge: dict = {}              # (src, dst) -> the lanes taking that edge
        self.loop_stack: list = []        # the loops being emitted, outermost first
        self.seq_ivs: dict = {}           # counter phi of a sequencer loop -> its sequencer expression
        self.pass_counters = set()        # pass counters of loops run until no lane is left (pass_ivs)
        self.escapes: dict = {}           # IR value -> the register capturing it as lanes leave its loop
        self.phi_caps_after: dict = {}    # exit-block phi -> {incoming block: captured value}
        self.seq_key = None               # the sequencer loops' counters when seq_memo was made (values.seq_expr)
        self.seq_memo: dict = {}          # IR value -> its sequencer expression (values.seq_expr)
        # the launch: shape values, each lane's slot and position (Codegen.build_prologue, workitems)
        self.shape: dict = {}             # SHAPE name -> its register
        self.cycle = self.slot = None     # each lane's cycle, and its slot in the wave
        self.sx = self.sy = self.sz = None    # the slot's coordinates in the wave
        self.in_wave = None               # bool: the slot holds a work-item of the wave (a narrowed wave)
        self.X0 = self.Y0 = self.Z0 = None    # the wave's first global ids (per wave, by the wave loops)
        self.pos: list = []               # each lane's global position, per dimension
        self.active = None                # bool: the lane runs a work-item
        self.all_active = {}              # lane predicate -> the sequencer condition under which it is
                                          # `active` ("": always): a side of a branch the sequencer can
                                          # decide for the wave (Values.lane_test), a rotated counted
                                          # loop's lane mask and exit, joins (control.py)
        self.split_of = {}                # each side of a branch on such a predicate -> (the other, its
                                          # condition, the predicate)
        self.same_as = {}                 # a copy kept equal to a predicate (a loop's mask, its exit) -> it
        self.ids_cache: dict = {}         # ids and reciprocals made once (workitems, isel_int)
        self.local_base_reg = None        # the lane's __local block offset (workitems.local_base), made once
        self.uniform_divisor = False      # the divisor of the division being made is uniform: its %p / expression
        # memory (memory.py, scatter.py, bounds.py)
        self.areas: dict = {}             # key -> (L2BM, L1BM) staging shared by one kind of transfer
        self.priv_offsets = None          # (alloca -> byte offset, words, lane registers) of the private blocks
        self.written = None               # parameters the kernel may store through (memory.written_params)
        self.loads_first = None           # ... of them, those loaded only before stored (memory.loads_before_stores)
        self.uniform_blocks = set()       # ("uniform", k): buffers whose uniform-load block register is set
        self.tables: dict = {}            # (buffer, size) -> its uniform-load table (memory.uniform_table)
        self.scatter_regs = {}            # per_l2b -> (subpeid, Z base, T base) of the scatter areas (scatter_setup)
        self.z_zeroed = None              # the sequencer flag: Z zeroed in this run (Scatter.ensure_z)
        self.derived = {}                 # sequencer expression -> (argument-block slot, register): IntSel.derived_product
        self.div_parts = {}               # (x, y) registers of a double division -> (|x|, |y|, sign) (nans.py)
        self.slot1_reg = None             # slot + 1 (scatter.slot1), made once
        self.z_digit_bases: dict = {}     # digit -> T-indirect base (scatter.z_digit_base)
        self.counts: dict = {}            # (buffer, add, n) -> register (bounds.bound_count)
        self.count_here = False           # bound_count's divisions are made where they are used
        # the parts of instruction selection, wired up by Codegen (codegen.py)
        self.codegen = self.values = self.workitems = self.control = self.ints = self.floats = None
        self.calls = self.memory = self.resident_buffers = self.scatter = self.bounds = self.nans = None
        self.row_plan = self.row_store = self.tile_plan = self.split_copy = None
        self.window = None                # the window plan (windowplan.py)

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
        if a + n > size:             # nothing taken: a caller that can do without the area goes on
            raise CodegenError(f"the kernel's transfers need {a + n} long words of {memory}; the machine has "
                               f"{size}", self.line)
        setattr(self, attr, a + n)
        return a

    def alloc_lc(self, n):
        return self._alloc("lc_next", n, "L2BM", self.lay.l2bm_longs)

    def alloc_lb(self, n):
        return self._alloc("lb_next", n, "L1BM", self.lay.l1bm_longs)

    def shared_area(self, key, lc: int, lb: int):
        """L2BM/L1BM staging reused by every transfer of one kind: each completes before the next
        starts (the scheduler orders their steps by the addresses they touch)."""
        areas = self.areas
        if key not in areas:
            areas[key] = (self.alloc_lc(lc) if lc else None, self.alloc_lb(lb) if lb else None)
        return areas[key]

    def seq_reg(self, prefix: str) -> str:
        """A fresh sequencer register for a loop the backend makes (numbered, so -S output is the
        same from one compile to the next)."""
        self.seq_regs += 1
        return f"%{prefix}{self.seq_regs}"

    def tag(self):
        self.tags += 1
        if self.tags not in CODEGEN_TAGS:  # the others are fixed tags (abi.py)
            self.tags = CODEGEN_TAGS.start
        return self.tags

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

    def active_when(self, p):
        """The sequencer condition under which lane predicate p is every lane that runs a work-item
        ("": always), or None where that is not known.  Outside it p holds no lane (a uniform test
        that failed, a loop no lane entered)."""
        return "" if p is self.active else self.all_active.get(p)

    def kept_equal(self, copy, p):
        """Note that register `copy` holds lane predicate p's value (a rotated counted loop's mask,
        its exit): every lane under p's condition, and p itself where a join meets its sibling."""
        if self.active_when(p) is not None:
            self.all_active[copy] = self.active_when(p)
            self.same_as[copy] = self.same_as.get(p, p)

    def either(self, a, b):
        """a | b of two lane predicates, and when each is `active` under a sequencer condition,
        so is the result (under either)."""
        out = self.b_or(a, b)
        wa, wb = self.active_when(a), self.active_when(b)
        a, b = self.same_as.get(a, a), self.same_as.get(b, b)
        if self.split_of.get(a, (None,))[0] is b:      # the two sides of one branch: its predicate
            _, self.all_active[out], parent = self.split_of[a]
            self.same_as[out] = self.same_as.get(parent, parent)
        elif wa is not None and wb is not None:
            self.all_active[out] = "" if "" in (wa, wb) else f"({wa}) or ({wb})"
        return out

    def unless_copy(self, holds: str, fast, slow):
        """fast() where sequencer condition `holds` (the launch has a copy the runtime makes: its
        address is not -1), else slow(fast's result) (the gather or scatter the copy replaces,
        whose remarks are dropped: only a launch without the copy takes it), as one
        SeqIf.fallback; fast's result."""
        outer, self.items = self.items, []
        got = fast()
        fast_items, self.items = self.items, []
        remarks = dict(self.remarks)
        slow(got)
        self.remarks = remarks
        slow_items, self.items = self.items, outer
        self.items.append(SeqIf.fallback((holds,), slow_items, fast_items))
        return got

    @staticmethod
    def full_when(full: str, whole):
        """Sequencer condition `full` (the wave needs no merge) where every lane stores under
        `whole` (active_when's answer), joined with it; None where not known."""
        return None if whole is None else f"{full} and ({whole})" if whole else full

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
