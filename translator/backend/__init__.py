"""The SIMD backend: a kernel's SPMD LLVM IR -> MN-Core-style assembly and sequencer program.

``PIPELINE`` below is the whole path, one pass a line with the module that holds it: read IR,
if-conversion, instruction selection, the cleanups, versioning, packing, prefetch, register
allocation, scheduling, printing.  Each pass takes the ``Build`` (one kernel build's state) and
gives the fields it fills or rewrites.  ``layout`` is the work-item and buffer mapping the runtime
shares.  ``compile_kernel`` gives a ``KernelBinary``: the program text plus everything the runtime
needs to launch it.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from ..module import CompileError, Diagnostic
from .constdata import const_bytes, read_globals
from .diamonds import merge_arm_stores
from . import abi
from .access import block_tests
from .codegen import Codegen, CodegenError, MixedPointer
from .cleanup import (coalesce_carried, fold_table_reads, hoist_staging, merge_recomputed, rematerialise_constants, remove_dead,
                      sink_into_branches)
from .printer import print_program
from .regalloc import AllocError, allocate
from .schedule import schedule_tree
from .target import Registers
from .verify import enabled as verifying, verify
from .irread import Unsupported, read_function
from .layout import Layout
from .packing import pack_loops
from .colplan import narrow_shares, pipeline_columns
from .prefetch import prefetch_waves
from .rows import FlatRows
from .splitcopy import Mismatch
from .versioning import version_loops
from .ops import BadOp, Op, SeqLoop, flat_ops

FORMAT = "mnb-1"


@dataclass
class KernelBinary:
    """One kernel compiled for one machine shape: what a .mnb file holds per kernel."""
    name: str
    machine: str
    mode: str                       # the variant (abi.py, choose_variant): "1d" (contiguous fast paths; no
                                    # global offset) or "nd"; "-n<f>": a 1-D wave narrowed f times (layout.py);
                                    # "-norep": no replicated buffers; "-res": buffers gathered in loops
                                    # resident in LM0 (Resident.resident_copies); "-res1": the same for a
                                    # launch of one work-item (KernelBinary.resident_one); "task": a task
                                    # kernel (runs once on the whole machine); "rows": a 2-D launch run flat,
                                    # in row-major order (rows.py); "-noalias": from the restrict IR, for
                                    # launches whose buffers do not overlap (translator/restrict.py)
    asm: str
    args: list                      # sequencer arguments, in order (abi.py names them)
    params: list                    # ParamInfo as dicts
    flops_per_item: int = 0
    registers: int = 0
    constants: list = field(default_factory=list)   # [name, hex bytes] of __constant data, args bG<k>
    replicated: list = field(default_factory=list)  # parameters whose buffers are replicated (layout.py)
    bounds: list = field(default_factory=list)      # bounds-check sites: [C line, parameter, element size]
    widened: list = field(default_factory=list)     # parameters whose widened copy it reads, at w<k>
    remarks: list = field(default_factory=list)     # [C line, text]: accesses that move a whole buffer
    resident: list = field(default_factory=list)    # parameters a "-res" build keeps resident (in one: does)
    resident_bytes: int = 0                         # ... when the buffer has at most this many bytes
    resident_one: list = field(default_factory=list)  # for a launch of one work-item ("-res1"), when more
                                                    # (buffers two work-items may store to: Resident.resident_candidates)
    pitches: list = field(default_factory=list)     # "rows": the pitches ("p<k>", "gx", ints) its accesses take
                                                    # to equal the global size in x (rows.py); [] gains nothing
    plans: list = field(default_factory=list)       # [C line, buffer, load|store, plan]: transfer plans chosen
                                                    # (rowplan.py, colplan.py, rows.py; mncl-cc --stats)
    row_copies: list = field(default_factory=list)  # [parameter, pitch (sequencer expression), interleave]:
                                                    # row copies it reads (abi.LaunchPlan.row_copies, rowplan.py)
    launch_tests: list = field(default_factory=list)  # sequencer conditions on its arguments (%p<k>, %rlen,
                                                    # %lsx) a launch must meet, else it runs "nd" (tileplan.py,
                                                    # IntSel.global_id_sum)
    row_stores: list = field(default_factory=list)  # [parameter, pitch, start, passes (sequencer expressions)]:
                                                    # transposed copies it stores rows to (rowstore.py)
    snapshots: list = field(default_factory=list)   # written parameters whose loads read a launch-start copy
                                                    # (Memory.snapshot), at sn<k>
    skewed: list = field(default_factory=list)      # IR header blocks of the triangular loops it runs skewed
                                                    # (control.skewed_loop; mncl-cc --stats reads them)
    split_copies: list = field(default_factory=list)  # [parameter, stored, layout]: split copies it reads,
                                                      # and stores to where stored (splitcopy.py), at sc<k>
    row_loads: list = field(default_factory=list)   # [parameter, pitch, start, passes (sequencer expressions)]:
                                                    # transposed copies it reads rows from (rowplan.py)
    row_store_sets: list = field(default_factory=list)  # [parameter, {"trips", "stores": [[pitch, stride,
                                                        # start] per store]}]: copies its stores of a buffer
                                                        # go to, plane by plane (RowStore.stamped)
    affine_copies: list = field(default_factory=list)   # [n, parameter, c, a, b, u (sequencer expressions)]:
                                                        # copies it reads (Memory.affine_copy)
    derived: list = field(default_factory=list)     # [argument-block slot, sequencer expression]: 32-bit
                                                    # products of scalar arguments (IntSel.derived_product)

    def to_dict(self):
        return asdict(self)

    @classmethod
    def from_dict(cls, d):
        return cls(**d)


LAZY_CAP = 12       # lazy values in a float chain before it is settled, when registers run out


@dataclass(eq=False)
class Build:
    """One kernel build on its way down PIPELINE: the inputs, then what the passes fill in."""
    module: object
    info: object
    machine: object                 # emulator.machine.Machine
    lay: Layout
    mode: str
    batch: int                      # scattered stores per batch (Codegen.SCATTER_BATCH)
    box: list                       # gets the Emitter as soon as it exists, for the line of an error
    resident: tuple = ()            # buffers a "-res" build keeps resident
    lazy_cap: int | None = None     # lazy float values before a chain is settled (nans.py)
    no_split: frozenset = frozenset()   # buffers with no split copy (splitcopy.Mismatch)
    func: object = None             # read IR: the work-item function (irread.Func)
    em: object = None               # instruction selection: the codegen's Emitter (uses, flops, remarks, ...)
    tree: list | None = None        # the ops tree (ops.py); after scheduling, with Blocks of steps
    alloc: dict | None = None       # register allocation: VReg/MaskReg -> location
    asm: str = ""                   # printing: the program text

    @property
    def args(self) -> list:
        return abi.kernel_args(self.em.uses)

    @property
    def regs(self) -> Registers:
        # LM1 holds the argument block at 0 and row plans' regions at the top (Emitter.ln_top)
        return Registers.of(self.machine, lm1_from=2 * abi.ARG_LONGS, lm1_to=self.em.ln_top if self.em else 0)


def ir_text(module, kernel: str, mode: str) -> str:
    """The optimised IR a build of this mode reads: the restrict IR (translator/restrict.py) for a
    "-noalias" build of a kernel it changes, else the module's."""
    if abi.restricted(mode) and kernel in getattr(module, "restrict_kernels", ()):
        return module.restrict_ir
    return module.llvm_ir


def _read_ir(b: Build) -> dict:
    return {"func": read_function(ir_text(b.module, b.info.name, b.mode), b.info.wg_function)}


def _if_convert(b: Build) -> None:
    merge_arm_stores(b.func)                     # in place (it returns how many store pairs it merged)


def _select(b: Build) -> dict:
    """Instruction selection: the Codegen over the function (again when a pointer register turns
    out to span buffers), its body inside the sequencer loops over the waves."""
    func, lay, mode, box, resident = b.func, b.lay, b.mode, b.box, b.resident
    batch, lazy_cap = b.batch, b.lazy_cap
    ptr_bases = {}
    while True:                      # again when a pointer register turns out to span buffers
        cg = Codegen(func, lay, b.info.params, abi.one_d(mode), chunk_longs=abi.chunk_longs(lay),
                     replicate=abi.replicates(mode), resident=resident, ptr_bases=ptr_bases, scatter_batch=batch,
                     lazy_cap=lazy_cap, local_l2b=abi.local_per_l2b(mode, lay))
        em = cg.em
        em.split_copy.without = b.no_split
        em.rows = FlatRows(em, func) if abi.flat_rows(mode) else None
        em.group_major = abi.group_major(mode)
        box.append(em)
        try:
            cg.translate()
            break
        except MixedPointer as e:
            ptr_bases = e.learn(ptr_bases)
    body = em.items
    inc = [Op("iadd {s0} {s1} {d0}", "alu", (em.X0,), (em.X0, em.shape["wx"]))]
    resx = [Op("zero {d0}", "alu", (em.X0,)), Op("iadd {s0} {s1} {d0}", "alu", (em.Y0,), (em.Y0, em.shape["wy"]))]
    resy = [Op("zero {d0}", "alu", (em.Y0,)), Op("iadd {s0} {s1} {d0}", "alu", (em.Z0,), (em.Z0, em.shape["wz"]))]
    nwx, nwy, nwz = (abi.reg(n) for n in abi.WAVE_COUNTS)
    tree = list(em.prologue) + [SeqLoop("%wz", "0", nwz, [
        SeqLoop("%wy", "0", nwy, [SeqLoop("%wx", "0", nwx, body + inc)] + resx)] + resy)] + em.epilogue
    return {"em": em, "tree": tree}


def _columns(b: Build) -> dict:
    em = b.em

    def alloc(n):       # None when L2BM has no room
        return em.alloc_lc(n) if em.lc_next + n <= b.lay.l2bm_longs else None
    return {"tree": pipeline_columns(b.tree, b.lay, alloc, em.columns, em.plans, b.machine.links["dram_l2bm"])}


def _prefetch(b: Build) -> dict:
    return {"tree": prefetch_waves(b.tree, b.em.memory.prefetch_loads(), b.lay, b.em.alloc_lc)}


def _allocate(b: Build) -> dict:
    return {"alloc": allocate(b.tree, b.regs, _lm0_free(b.em, b.tree))}


# The backend, pass by pass: (name, module holding it, step).  A step takes the Build and gives the
# fields it sets (None when it rewrites in place); compile_kernel runs them in this order.
PIPELINE = (
    ("read IR",                     "irread",     _read_ir),
    ("if-conversion",               "diamonds",   _if_convert),
    ("instruction selection",       "codegen",    _select),
    ("cleanup: dead ops",           "cleanup",    lambda b: {"tree": remove_dead(b.tree)}),
    ("versioning",                  "versioning", lambda b: {"tree": version_loops(b.tree)}),
    ("cleanup: sink into branches", "cleanup",    lambda b: {"tree": sink_into_branches(b.tree)}),
    ("cleanup: carried copies",     "cleanup",    lambda b: {"tree": coalesce_carried(b.tree)}),
    ("packing",                     "packing",    lambda b: {"tree": pack_loops(b.tree, b.lay, b.em.alloc_lc, b.em.alloc_lb)}),
    ("column plan",                 "colplan",    _columns),
    ("prefetch",                    "prefetch",   _prefetch),
    ("narrow launches' shares",     "colplan",    lambda b: {"tree": narrow_shares(b.tree, b.lay, b.em.uses)}),
    ("cleanup: recomputed ops",     "cleanup",    lambda b: {"tree": merge_recomputed(b.tree)}),
    ("cleanup: staging first",      "cleanup",    lambda b: {"tree": hoist_staging(b.tree)}),
    ("cleanup: table reads",        "cleanup",    lambda b: {"tree": fold_table_reads(b.tree)}),
    ("cleanup: constants",          "cleanup",    lambda b: {"tree": rematerialise_constants(b.tree)}),
    ("register allocation",         "regalloc",   _allocate),
    ("scheduling",                  "schedule",   lambda b: {"tree": schedule_tree(b.tree, b.alloc)}),
    ("printing",                    "printer",    lambda b: {"asm": print_program(b.tree, b.args, b.alloc)}),
)
ALLOCATED = [p[0] for p in PIPELINE].index("register allocation") + 1   # _build retries up to here


def _run(b: Build, passes) -> Build:
    """Run passes over b, and verify() the tree after each when MNCL_VERIFY_BACKEND is set."""
    check = verifying()
    for name, _, step in passes:
        vars(b).update(step(b) or {})
        if check and b.tree is not None and name != "printing":
            verify(b.tree, b.alloc, b.regs, after=name)
    return b


def _lower(module, info, machine, lay, mode, batch, box, resident=(), lazy_cap=None, no_split=frozenset()) -> Build:
    """The pipeline up to register allocation, with batches of at most `batch` scattered stores,
    the `resident` buffers and no split copy of the buffers `no_split`."""
    return _run(Build(module, info, machine, lay, mode, batch, box, resident, lazy_cap, no_split),
                PIPELINE[:ALLOCATED])


def _lm0_free(em, tree) -> tuple:
    """[lo, hi): the LM0 words no code of the kernel touches, which the allocator may spill to:
    above the gather/scatter areas, the private arrays and every access codegen made, below
    the uniform-load tables and resident copies at the top (Emitter.lm_top)."""
    lo = 4 * em.CH + 8 * em.memory.private_layout()[2]
    for op in flat_ops(tree):
        lo = max([lo] + [m[3] for m in op.mem if m[1] == "m" and m[2] < em.lm_top])
    return lo, em.lm_top


def compile_kernel(module, kernel: str, machine, mode: str = "1d") -> KernelBinary:
    """Compile kernel `kernel` of a CompiledModule (built with spmd=True) for `machine`."""
    info = module.kernels[kernel]
    if info.task:                    # a task kernel: its own compiler (task.py)
        from .task import compile_task
        asm, args = compile_task(module, kernel, machine)
        return KernelBinary(kernel, machine.name, abi.TASK_MODE, asm, args, [asdict(p) for p in info.params])
    try:
        lay = Layout.of(machine).for_mode(mode)
    except ValueError as e:
        raise _error(module, f"kernel '{kernel}': {e}") from None
    if len(info.params) > abi.MAX_PARAMS:
        raise _error(module, f"kernel '{kernel}' has {len(info.params)} parameters; the emulator device takes "
                             f"at most {abi.MAX_PARAMS}")
    try:
        abi.wide_arg_slots(info.params)
    except abi.ABIError as e:
        raise _error(module, f"kernel '{kernel}': {e}") from None
    box = []
    try:
        resident = ()
        if abi.resident(mode):       # the buffers a build without them would gather in loops
            resident = _build(module, info, machine, lay, abi.without_resident(mode), box) \
                .em.resident_buffers.resident_candidates(abi.resident(mode) == "one")
        b = _run(_build(module, info, machine, lay, mode, box, resident), PIPELINE[ALLOCATED:])
        em, args, alloc, asm = b.em, b.args, b.alloc, b.asm
    except CodegenError as e:
        raise _error(module, f"kernel '{kernel}': {e}", e.line) from None
    except BadOp as e:               # a backend bug caught where the op was made or by verify()
        raise _error(module, f"kernel '{kernel}': internal compiler error: {e}",
                     e.line or (box[-1].line if box else 0)) from e
    except (Unsupported, AllocError) as e:
        raise _error(module, f"kernel '{kernel}': {e}", box[-1].line if box else 0) from None
    except Exception as e:           # a backend bug: still a located diagnostic, the cause chained for debugging
        raise _error(module, f"kernel '{kernel}': internal compiler error ({type(e).__name__}: {e}); the "
                             f"emulator device cannot compile this construct", box[-1].line if box else 0) from e
    tables = read_globals(ir_text(module, kernel, mode))
    try:
        constants = [[n, const_bytes(*tables[n]).hex()] for n in em.uses.get("constants", [])]
    except (KeyError, Unsupported) as e:
        raise _error(module, f"kernel '{kernel}': __constant data not understood: {e}") from None
    candidates = em.resident_buffers.resident_candidates
    return KernelBinary(kernel, machine.name, mode, asm, args, [asdict(p) for p in info.params],
                        em.flops, alloc["_peak"], constants, sorted(em.uses.get("replicated", ())),
                        [list(x) for x in em.oob_sites], sorted(em.uses.get("widened", ())),
                        [[line, text] for (line, *_), text in sorted(em.remarks.items())],
                        list(em.resident) if resident else candidates(), 8 * em.CH,
                        [] if resident or candidates(True) == candidates() else candidates(True),
                        em.rows.recorded() if em.rows else [],
                        [[line, buf, (kind or ["load"])[0], "; ".join(sorted(texts))]
                         for (line, buf, *kind), texts in sorted(em.plans.items())]
                        + (em.rows.plan_list() if em.rows else []),
                        [[k, *p] for k, p in sorted(em.uses.get("row_copies", {}).items())],
                        list(em.tile_plan.tests)
                        + sorted(em.launch_tests | block_tests(em.rows.forms.assumed if em.rows else ())),
                        [[k, *p] for k, p in sorted(em.uses.get("row_stores", {}).items())],
                        sorted(em.uses.get("snapshots", ())), sorted(em.skewed),
                        [[k, *c] for k, c in sorted(em.uses.get("split_copies", {}).items())],
                        [[k, *p] for k, p in sorted(em.uses.get("row_loads", {}).items())],
                        [[k, p] for k, p in sorted(em.uses.get("row_store_sets", {}).items())],
                        [[n, *c] for n, c in sorted(em.uses.get("affine_copies", {}).items())],
                        [[slot, e] for e, (slot, _) in em.derived.items()])


def _build(module, info, machine, lay, mode, box, resident=()):
    """_lower, again with smaller batches of stores when registers run out, and then with lazy
    float chains settled every LAZY_CAP values (nans.py: a long chain keeps all its operands live);
    again without a buffer's split copy where an access of it cannot take the copy."""
    no_split = frozenset()
    while True:
        try:
            return _build_once(module, info, machine, lay, mode, box, resident, no_split)
        except Mismatch as e:
            no_split |= {e.k}


def _build_once(module, info, machine, lay, mode, box, resident, no_split):
    for cap in (None, LAZY_CAP):
        for batch in (Codegen.SCATTER_BATCH, 4, 1):
            try:
                return _lower(module, info, machine, lay, mode, batch, box, resident, cap, no_split)
            except AllocError:
                if batch == 1 or not box[-1].batched:
                    if cap is not None:
                        raise
                    break


def _error(module, msg, line=0):
    return CompileError([Diagnostic("error", msg, module.filename, line, 0)])


__all__ = ["compile_kernel", "KernelBinary", "Layout", "FORMAT", "PIPELINE", "ir_text"]
