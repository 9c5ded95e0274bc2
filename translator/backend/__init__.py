"""The SIMD backend: a kernel's SPMD LLVM IR -> MN-Core-style assembly and sequencer program.

Passes, one module each: irread (LLVM IR back into Python objects) ->
codegen (predication, loops, instruction selection, data movement; see its
docstring) -> versioning (counted loops without their bounds-check fallbacks
when the sequencer clears them for the whole loop) -> packing (in a wave narrowed 8 times, counted loops run
four passes at once, one per cycle) -> emit (register allocation, VLIW scheduling with the hazard
rules, assembly text).  ``layout`` is the work-item and buffer mapping the
runtime shares.  ``compile_kernel`` gives a ``KernelBinary``: the program
text plus everything the runtime needs to launch it.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

from ..module import CompileError, Diagnostic, ParamInfo
from .constdata import const_bytes, read_globals
from .diamonds import merge_arm_stores
from . import abi
from .codegen import Codegen, CodegenError, MixedPointer
from .emit import (AllocError, allocate, coalesce_carried, emit_program, merge_recomputed, rematerialise_constants,
                   remove_dead, sink_into_branches)
from .irread import Unsupported, read_function
from .layout import Layout
from .packing import pack_loops
from .prefetch import prefetch_waves
from .versioning import version_loops
from .ops import Op, SeqLoop, flat_ops

FORMAT = "mnb-1"


@dataclass
class KernelBinary:
    """One kernel compiled for one machine shape: what a .mnb file holds per kernel."""
    name: str
    machine: str
    mode: str                       # the variant (abi.py, choose_variant): "1d" (contiguous fast paths; no
                                    # global offset) or "nd"; "-n<f>": a 1-D wave narrowed f times (layout.py);
                                    # "-norep": no replicated buffers; "-res": buffers gathered in loops
                                    # resident in LM0 (Codegen.resident_copies); "-res1": the same for a
                                    # launch of one work-item (KernelBinary.resident_one); "task": a task
                                    # kernel (runs once on the whole machine)
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
                                                    # (buffers two work-items may store to: Codegen.resident_candidates)

    def to_dict(self):
        return asdict(self)

    @classmethod
    def from_dict(cls, d):
        return cls(**d)


LAZY_CAP = 12       # lazy values in a float chain before it is settled, when registers run out


def _lower(module, info, lay, mode, batch, box, resident=(), lazy_cap=None):
    """Codegen and the passes after it, with batches of at most `batch` scattered stores and the
    `resident` buffers: (the codegen's Emitter, the control tree, the sequencer arguments, the register
    allocation).  The Emitter goes into box as soon as it exists, for the line of an error."""
    func = read_function(module.llvm_ir, info.wg_function)
    merge_arm_stores(func)
    ptr_bases = {}
    while True:                      # again when a pointer register turns out to span buffers
        cg = Codegen(func, lay, info.params, mode.startswith("1d"), chunk_longs=min(lay.stripe, 512),
                     replicate="-norep" not in mode, resident=resident, ptr_bases=ptr_bases, scatter_batch=batch,
                     lazy_cap=lazy_cap)
        em = cg.em
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
    tree = list(em.prologue) + [SeqLoop("%wz", "0", "%nwz", [
        SeqLoop("%wy", "0", "%nwy", [SeqLoop("%wx", "0", "%nwx", body + inc)] + resx)] + resy)] + em.epilogue
    tree = coalesce_carried(sink_into_branches(version_loops(remove_dead(tree))))
    tree = pack_loops(tree, lay, em.alloc_lc)
    tree = prefetch_waves(tree, em.memory.prefetch_loads(), lay, em.alloc_lc)
    alloc = allocate(rematerialise_constants(merge_recomputed(tree)), lay.lm_words, _lm0_free(em, tree))
    bases = sorted(em.uses.get("bases", ()), key=str)       # parameter indices, and "L" (__local scratch)
    rows = sorted(em.uses.get("rows", ()), key=str)
    params = sorted(em.uses.get("params", ()))
    sizes = sorted(em.uses.get("sizes", ()), key=str)
    widened = sorted(em.uses.get("widened", ()))
    args = ["argblk", "nwx", "nwy", "nwz"] + [f"b{k}" for k in bases] + [f"w{k}" for k in widened] \
        + [f"rows{k}" for k in rows] \
        + [f"p{k}" for k in params] + [f"nb{k}" for k in sizes] + (["gx", "offx"] if "launch" in em.uses else []) \
        + (["items"] if "items" in em.uses else []) \
        + sorted(em.uses.get("extents", ()))
    return em, tree, args, alloc


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
    if info.task:                    # a task kernel: its own compiler (translator/task.py)
        from .task import compile_task
        asm, args = compile_task(module, kernel, machine)
        return KernelBinary(kernel, machine.name, "task", asm, args, [asdict(p) for p in info.params])
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
        if "-res" in mode:           # the buffers a build without them would gather in loops
            resident = _build(module, info, lay, abi.without_resident(mode), box)[0].resident_candidates(
                "-res1" in mode)
        em, tree, args, alloc = _build(module, info, lay, mode, box, resident)
        asm = emit_program(tree, args, alloc)
    except CodegenError as e:
        raise _error(module, f"kernel '{kernel}': {e}", e.line) from None
    except (Unsupported, AllocError) as e:
        raise _error(module, f"kernel '{kernel}': {e}", box[-1].line if box else 0) from None
    except Exception as e:           # a backend bug: still a located diagnostic, the cause chained for debugging
        raise _error(module, f"kernel '{kernel}': internal compiler error ({type(e).__name__}: {e}); the "
                             f"emulator device cannot compile this construct", box[-1].line if box else 0) from e
    tables = read_globals(module.llvm_ir)
    try:
        constants = [[n, const_bytes(*tables[n]).hex()] for n in em.uses.get("constants", [])]
    except (KeyError, Unsupported) as e:
        raise _error(module, f"kernel '{kernel}': __constant data not understood: {e}") from None
    return KernelBinary(kernel, machine.name, mode, asm, args, [asdict(p) for p in info.params],
                        em.flops, alloc["_peak"], constants, sorted(em.uses.get("replicated", ())),
                        [list(x) for x in em.oob_sites], sorted(em.uses.get("widened", ())),
                        [[line, text] for (line, *_), text in sorted(em.remarks.items())],
                        list(em.resident) if resident else em.resident_buffers.resident_candidates(), 8 * em.CH,
                        [] if resident or em.resident_buffers.resident_candidates(True)
                        == em.resident_buffers.resident_candidates() else em.resident_buffers.resident_candidates(True))


def _build(module, info, lay, mode, box, resident=()):
    """_lower, again with smaller batches of stores when registers run out, and then with lazy
    float chains settled every LAZY_CAP values (nans.py: a long chain keeps all its operands live)."""
    for cap in (None, LAZY_CAP):
        for batch in (Codegen.SCATTER_BATCH, 4, 1):
            try:
                return _lower(module, info, lay, mode, batch, box, resident, cap)
            except AllocError:
                if batch == 1 or not box[-1].batched:
                    if cap is not None:
                        raise
                    break


def _error(module, msg, line=0):
    return CompileError([Diagnostic("error", msg, module.filename, line, 0)])


__all__ = ["compile_kernel", "KernelBinary", "Layout", "FORMAT"]
