"""The launch ABI: what a compiled kernel and the runtime launching it agree on, in one place.

A kernel binary (KernelBinary) reads three things the runtime provides:

* the **argument block**: ARG_LONGS long words the runtime writes to group 0's DRAM at
  %argblk and the prologue broadcasts to every PE's LM1: the OpenCL work-group values at
  WG_SLOT, one long word per parameter at PARAM_SLOT (a by-value argument wider than 8 bytes
  packed in the free parameter slots from the top down: wide_arg_slots), the launch shape
  values SHAPE at SHAPE_SLOT;
* the **sequencer arguments** named in KernelBinary.args, made by the functions below
  (``base(k)`` is ``b<k>``, and so on) and nowhere else;
* the **MV tags** each part of the program may use (the ranges below).

The runtime chooses which of a kernel's builds (its *variant*: KernelBinary.mode) runs a launch,
then computes every value the build reads: ``plan_launch`` does both and gives a plain
LaunchPlan, so the whole launch interface is testable without the emulator
(tests/test_backend_abi.py); mncl/emulator_device.py writes the plan to the machine and runs it.
"""
from __future__ import annotations

import re
import warnings
from dataclasses import dataclass, field

import numpy as np

from ..module import CompileError
from .seqexpr import evaluate

# -- the argument block (LM1 long-word addresses; the runtime writes it, the prologue broadcasts it)
ARG_LONGS = 64
WG_SLOT = 0                  # wg[0..15]: work_dim, global size, local size, 0 0 0, offset, groups
PARAM_SLOT = 16              # one long word per kernel parameter (32-bit values in both halves)
SHAPE_SLOT = 40              # launch shape values, see SHAPE (32-bit, in both halves)
SHAPE = ("wx", "wy", "wz", "wxy", "rwx", "rwxy", "gx", "gy", "gz", "offx", "offy", "offz",
         "lsx", "lsy", "lsz", "rlsx", "rlsy", "rlsz", "kx", "ky", "lbytes")
# r<name> is fp64 1/<name> (64 bits); the others are 32-bit values in both halves.  The wave is
# wx x wy x wz work-items (slot s -> s mod wx, (s div wx) mod wy, s div wxy); when the kernel has
# __local memory or barriers it holds whole work-groups, kx x ky x kz of them, and each group's
# __local block is lbytes long in the local scratch buffer (see WorkItems.local_base).  A "rows" build's
# wave is W x 1 x 1 flat row-major positions f (gid1 = f * (1 / gx) rounded down, 1 / gx at RGX_SLOT:
# WorkItems.flat_ids)
RGX_SLOT = SHAPE_SLOT + len(SHAPE)    # fp64 1 / gx: read only by "rows" builds (WorkItems.flat_ids)
# A "groups" build (group_major) places its work-groups itself and never reads wxy, rwx, rwxy or
# RGX_SLOT: there it reads the groups each L2B holds (groups_per_l2b) and the fp64 reciprocals of
# the work-group size and of kx and ky (Codegen.group_positions)
GROUP_SLOTS = {"gpl": SHAPE_SLOT + SHAPE.index("wxy"), "rgs": SHAPE_SLOT + SHAPE.index("rwx"),
               "rkx": SHAPE_SLOT + SHAPE.index("rwxy"), "rky": RGX_SLOT}
DERIVED_SLOTS = range(RGX_SLOT + 1, ARG_LONGS)   # products of scalar arguments the runtime works out
                                                 # (KernelBinary.derived, IntSel.derived_product)
MAX_PARAMS = SHAPE_SLOT - PARAM_SLOT

# -- MV tags: which part of a program may use which (the emulator has tags 0..255)
CODEGEN_TAGS = range(1, 241)      # codegen's transfers, reused in turn (Emitter.tag)
PACK_TAGS = range(241, 249)       # packing.py: the buffer sets of staged loads
ARGBLK_TAG = 250                  # the argument block's broadcast (prologue)
STORE_TAG = 251                   # contiguous stores, waited for lazily (Memory.fast_store)
PREFETCH_TAG = 253                # prefetch.py: set 1's loads (252 is free)
TASK_EVENT_TAGS = range(1, 201)   # task kernels (translator/task.py): one per event element
TASK_SYNC_TAG = 250               # task kernels: a transfer waited for at once

# -- sequencer argument names.  k is a parameter index, or a letter for the runtime's own
# buffers: LOCAL ("L", the __local blocks of a wave), REPORT ("E", "F", "G": where lanes record
# their first out-of-bounds access), or const_table(n) ("G<n>": __constant data)
ARGBLK = "argblk"                 # the argument block's DRAM address
WAVE_COUNTS = ("nwx", "nwy", "nwz")   # waves per dimension
LAUNCH = ("gx", "offx")           # the global size and offset in x (bounds of contiguous accesses;
                                  # a "rows" build: gx * gy, the flat launch's size)
ITEMS = "items"                   # work-items of the launch
ROW_LENGTH = "rlen"               # a "rows" build: the global size in x, the launch's row (tileplan.py)
GLOBAL_EXTENTS = ("ex", "ey", "ez")   # min(wave extent, global size), per dimension
LOCAL_EXTENTS = ("lsx", "lsy", "lsz")     # the local size
OFFSETS = ("offx", "offy", "offz")        # the global offset (offx: in LAUNCH; Memory.form_span)
LOCAL = "L"
LOCAL_CHUNKS = "chL"              # a per-L2B __local build: the chunks it reads of each streamed row (local_rows)
LOCAL_BYTES = "lbytes"            # a work-group's __local block, bytes (Memory.local_unit's test)
REPORT = ("E", "F", "G")


def base(k) -> str:
    """Buffer k's long-word address in every group's DRAM."""
    return f"b{k}"


def rows(k) -> str:
    """Buffer k's stripe rows (Layout.rows)."""
    return f"rows{k}"


def table_lanes(param) -> int:
    """The components of each element a buffer's widened copy keeps apart (Layout.widened): 4 for a
    16-byte vector of 32-bit components (float4, int4, float3), 2 for an 8-byte one (float2), else
    1.  Component c of element v then lies at slot c * 64 / lanes + v mod (64 / lanes) of v's
    block, so the x-components of consecutive elements are consecutive, as packing.py's table reads
    need them.  ``param`` is a ParamInfo or its dict; the runtime and codegen both ask here."""
    get = param.get if isinstance(param, dict) else lambda f: getattr(param, f)
    try:
        width = np.dtype(get("dtype")).itemsize
    except (TypeError, ValueError):
        return 1                          # (a struct)
    return get("size") // 4 if width == 4 and get("size") in (8, 16) else 1


def widened(k) -> str:
    """The address of buffer k's widened copy (Layout.widened) in group 0's DRAM."""
    return f"w{k}"


def snapshot(k) -> str:
    """The address of buffer k's launch-start copy (replicated, like a read-only buffer) that its
    loads read where every load precedes every store (Memory.snapshot)."""
    return f"sn{k}"


def row_copy(k) -> str:
    """The address, in every group's DRAM, of buffer k's row copy (LaunchPlan.row_copies), or -1."""
    return f"rc{k}"


def row_store(k) -> str:
    """The address, in every group's DRAM, of buffer k's transposed copy for a row store
    (LaunchPlan.row_stores, rowstore.py), or -1."""
    return f"rs{k}"


def row_load(k) -> str:
    """The address, in every group's DRAM, of buffer k's transposed copy for a row load
    (LaunchPlan.row_loads, rowplan.py), or -1."""
    return f"rl{k}"


def affine_copy(n) -> str:
    """The address, in every group's DRAM, of a "rows" build's n-th affine copy (LaunchPlan.
    affine_copies, Memory.affine_copy), or -1."""
    return f"ac{n}"


def split_copy(k) -> str:
    """The address, in every group's DRAM, of buffer k's split copy (LaunchPlan.split_copies,
    splitcopy.py)."""
    return f"sc{k}"


def split_plane(k) -> str:
    """Long words between the even and the odd work-items' planes of buffer k's split copy of
    8-byte elements (splitcopy.py)."""
    return f"sp{k}"


def param(k) -> str:
    """By-value parameter k as a signed integer (a uniform trip count the sequencer needs)."""
    return f"p{k}"


def nbytes(k) -> str:
    """Buffer k's size in bytes."""
    return f"nb{k}"


def const_table(n: int) -> str:
    """The buffer key of a kernel's n-th __constant table (KernelBinary.constants)."""
    return f"G{n}"


def reg(name: str) -> str:
    """A sequencer argument as the program reads it."""
    return "%" + name


def kernel_args(uses: dict) -> list:
    """The sequencer arguments of a kernel, in order, from what its code uses (Emitter.uses)."""
    bases = sorted(uses.get("bases", ()), key=str)       # parameter indices, and "L" (__local scratch)
    return [ARGBLK, *WAVE_COUNTS] + [base(k) for k in bases] \
        + [widened(k) for k in sorted(uses.get("widened", ()))] \
        + [snapshot(k) for k in sorted(uses.get("snapshots", ()))] \
        + [row_copy(k) for k in sorted(uses.get("row_copies", {}))] \
        + [row_store(k) for k in sorted({*uses.get("row_stores", {}), *uses.get("row_store_sets", {})})] \
        + [row_load(k) for k in sorted(uses.get("row_loads", {}))] \
        + [affine_copy(n) for n in sorted(uses.get("affine_copies", {}))] \
        + [x for k in sorted(uses.get("split_copies", {})) for x in (split_copy(k), split_plane(k))] \
        + [rows(k) for k in sorted(uses.get("rows", ()), key=str)] \
        + [param(k) for k in sorted(uses.get("params", ()))] \
        + [nbytes(k) for k in sorted(uses.get("sizes", ()), key=str)] \
        + (list(LAUNCH) if "launch" in uses else []) + ([ITEMS] if "items" in uses else []) \
        + ([ROW_LENGTH] if "row_length" in uses else []) + ([LOCAL_CHUNKS] if "local_chunks" in uses else []) \
        + ([LOCAL_BYTES] if "local_bytes" in uses else []) \
        + sorted(uses.get("extents", ()))


class ABIError(ValueError):
    """A kernel whose by-value arguments the argument block cannot hold."""


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
        raise ABIError(f"the by-value arguments wider than 8 bytes need {SHAPE_SLOT - top} long words of the "
                       f"argument block; with {len(params)} parameters {MAX_PARAMS - len(params)} are free")
    return out


# -- variants ----------------------------------------------------------------------------------
# A kernel has several builds (KernelBinary.mode): "1d" (contiguous fast paths, no global offset),
# "rows" (a 2-D launch run flat: rows.py), "groups" (a grouped N-D launch, work-groups in runs of
# slots: group_slots) or "nd"; "1d-n<f>" a 1-D wave narrowed f times (layout.py); then "-norep"
# (no replicated buffers), "-res" / "-res1" (small buffers resident in LM0, for any launch / one of
# one work-item).

TASK_MODE = "task"               # a task kernel's one build (translator/task.py)
NOALIAS = "-noalias"             # built from the restrict IR (translator/restrict.py): launches whose buffers
                                 # are pairwise disjoint (overlapping_args), of kernels it changes
ROWS_MODE = "rows"               # a 2-D launch run flat in row-major order (rows.py)
GROUPS_MODE = "groups"           # an N-D launch of whole work-groups, each a run of slots in one L2B


def narrowed_mode(f: int) -> str:
    return f"1d-n{f}"


def one_d(mode: str) -> bool:
    """A build for 1-D launches without a global offset (the contiguous fast paths)."""
    return mode.startswith("1d")


def group_major(mode: str) -> bool:
    """A "groups" build: the wave's slots hold its work-groups one after the other, each group's
    work-items a run of slots inside one L2B (group_slots), its positions in the wave's box made
    from that (codegen.Codegen.group_positions)."""
    return mode.startswith(GROUPS_MODE)


def local_per_l2b(mode: str, lay) -> bool:
    """Whether a build keeps each L2B's __local blocks apart (memory.py, scatter.py: an L2B streams
    only the blocks of its own work-groups, an eighth of the wave's on mncore2): the "1d" builds,
    on a layout whose L2Bs hold a power of two of work-items, so a local size that tiles the wave
    tiles each L2B's run when it is no longer (choose_variant takes "nd" for longer ones), and the
    "groups" builds, whose work-groups never straddle an L2B."""
    n = lay.l2b_items
    return (one_d(mode) or group_major(mode)) and n & (n - 1) == 0


def group_slots(lay, ls) -> int:
    """Work-groups of local size ls each L2B of a "groups" build can hold (0: a group is longer
    than an L2B's run of slots, or the L2Bs' runs are not a power of two: no "groups" build)."""
    n, size = lay.l2b_items, ls[0] * ls[1] * ls[2]
    return n // size if n & (n - 1) == 0 else 0


def groups_per_l2b(lay, kx: int, ky: int, kz: int) -> int:
    """Work-groups each L2B of a "groups" build holds in a wave of kx x ky x kz of them: spread
    evenly over all L2Bs, so each streams as few __local blocks as it can."""
    return -(-kx * ky * kz // (lay.groups * lay.l2b))


def chunk_longs(lay) -> int:
    """Long words of a gather's or scatter's chunk: what one pass brings to every PE's LM0."""
    return min(lay.stripe, 512)


def run_groups(lay, ls: int, items: int) -> int:
    """Work-groups in the first L2B's run of a launch of `items` (its last one partial or not): the
    blocks each L2B's __local scratch holds (local_rows, wave_major_locals)."""
    return -(-min(lay.l2b_items, items) // ls)


def local_rows(lay, mode: str, lbytes: int, run: int, groups: int) -> tuple:
    """(stripe rows of __local scratch the kernel streams (rows(LOCAL)), the chunks it reads of
    each (LOCAL_CHUNKS), stripe rows of it in each group's DRAM), for a wave of `groups` work-groups
    of lbytes of __local memory each, `run` of them in the first L2B's run of slots (run_groups,
    groups_per_l2b): when local_per_l2b, the rows of one L2B's blocks, no more chunks than they
    fill, the group's L2Bs' rows one after the other; else the wave's blocks, striped like a
    buffer, every chunk."""
    per_row = lay.stripe // chunk_longs(lay)
    if local_per_l2b(mode, lay):
        chunks = max(1, -(-run * lbytes // (8 * chunk_longs(lay))))
        n = -(-chunks // per_row)
        return n, min(chunks, per_row), n * lay.l2b
    n = lay.rows(lbytes * groups)
    return n, per_row, n


def flat_rows(mode: str) -> bool:
    """A build for 2-D launches run flat in row-major order (rows.py): the contiguous fast paths
    for accesses e * (gid1 * P + gid0) + u whose pitches P equal the global size in x."""
    return mode.startswith("rows")


def replicates(mode: str) -> bool:
    """Whether a build of this mode may replicate read-only buffers (layout.py)."""
    return "-norep" not in mode


def resident(mode: str) -> str | None:
    """None, "any" ("-res": for any launch) or "one" ("-res1": for a launch of one work-item)."""
    return "one" if "-res1" in mode else "any" if "-res" in mode else None


def narrowing(mode: str) -> int:
    """How many times the wave of a build of this mode is narrowed (1: not)."""
    m = re.search(r"-n(\d+)", mode)
    return int(m[1]) if m else 1


def restricted(mode: str) -> bool:
    """A build from the restrict IR: for launches whose buffer arguments do not overlap."""
    return NOALIAS in mode


def without_resident(mode: str) -> str:
    """The build a "-res" / "-res1" build starts from (the one that gathers those buffers)."""
    return re.sub(r"-res1?", "", mode)


def is_buffer(a) -> bool:
    """An argument the kernel addresses in DRAM (anything with nbytes and dram)."""
    return hasattr(a, "dram")


def is_value(a) -> bool:
    return isinstance(a, (bytes, bytearray))


def overlapping_args(args) -> set:
    """The indices of the buffer arguments whose bytes overlap another buffer argument's: the same
    buffer passed twice, or two buffers over one memory (the host ranges [address, address +
    nbytes) of their mirrors intersect).  A buffer of no bytes overlaps nothing."""
    bufs = [(i, a) for i, a in enumerate(args) if is_buffer(a) and a.nbytes]
    out = set()
    for x, (i, a) in enumerate(bufs):
        for j, b in bufs[x + 1:]:
            lo, hi = getattr(a, "address", None), getattr(b, "address", None)
            if a is b or lo is not None and hi is not None and lo < hi + b.nbytes and hi < lo + a.nbytes:
                out.update((i, j))
    return out


def wave_shape(lay, gs, ls, grouped, per: int = 0) -> tuple:
    """The wave's extent (wx, wy, wz) and the work-groups it holds (kx, ky, kz).

    A 1-D wave spans the whole machine when its work-groups tile it (or need not be whole: no
    barrier, no __local), so contiguous accesses take the fast path; otherwise it holds as many
    whole work-groups as fit, or `per` of them (a "groups" build: group_slots per L2B)."""
    W = lay.wave
    if gs[1] == gs[2] == 1 and (not grouped or W % ls[0] == 0) and not per:
        return W, 1, 1, W // ls[0], 1, 1
    per = per or W // (ls[0] * ls[1] * ls[2])
    kx = min(-(-gs[0] // ls[0]), per)
    ky = min(-(-gs[1] // ls[1]), per // kx)
    kz = min(-(-gs[2] // ls[2]), per // (kx * ky))
    return kx * ls[0], ky * ls[1], kz * ls[2], kx, ky, kz


def grouped(kernel, args) -> bool:
    """Whether the kernel's work-groups must be whole in a wave (barriers or __local memory)."""
    return bool(kernel.uses_barrier or uses_local(kernel, args))


def uses_local(kernel, args) -> bool:
    """Whether the kernel has __local memory: arrays of its own or __local pointer arguments."""
    return bool(kernel.local_mem_bytes or any(not is_buffer(a) and not is_value(a) for a in args))


def wave_major_locals(lay, mode: str, kernel, args, ls, items: int, local_off: dict) -> int | None:
    """Lay a launch's __local arrays out like the wave where each is one 4-byte element per
    work-item (Memory.local_unit): in a build whose L2Bs keep their own blocks, with no static
    __local arrays, a 1-D local size dividing an L2B's run and every __local argument 4 * ls bytes,
    argument q's blocks are one array, q * 4 * ls * G bytes into the L2B's scratch (G: the run's
    work-groups), so element lid of the run's work-group j is at q * 4 * ls * G + 4 * (j * ls + lid)
    and the L2B's run of work-items reads argument q as a contiguous share.  The kernel's block
    size is then 4 * ls (its address j * block + offset + 4 * lid is that element, for gathers and
    scatters too), returned with local_off rewritten; else None (blocks of all arguments side by
    side, as laid out)."""
    n = lay.l2b_items
    if not (local_off and one_d(mode) and local_per_l2b(mode, lay) and not kernel.local_mem_bytes
            and ls[1] == ls[2] == 1 and n % ls[0] == 0 and all(args[i].nbytes == 4 * ls[0] for i in local_off)):
        return None
    groups = run_groups(lay, ls[0], items)
    for q, i in enumerate(sorted(local_off)):
        local_off[i] = q * 4 * ls[0] * groups
    return 4 * ls[0]


def choose_variant(lay, kernel, launch, args, build, failed: set, restrict: bool = False) -> tuple:
    """(KernelBinary, Layout, wave shape) of the build that runs this launch.

    build(mode) gives the KernelBinary of a mode (raising CompileError if it does not compile);
    a narrowed or resident build that does not is remembered in ``failed`` (a set of modes) and
    the launch takes the build below it.  The ladder:

    * "1d" for a 1-D launch with no global offset whose wave spans the machine (the contiguous
      fast paths address the wave by position) and, with __local memory, whose work-groups tile
      each L2B's work-items (local_per_l2b), else "nd" (always "nd" when the "1d" build does not
      compile: EmulatorDevice.load then made the "nd" one);
    * "rows" for a 2-D launch with no global offset, barriers or __local memory when that build's
      pitches (KernelBinary.pitches, rows.py) all equal the global size in x: the launch runs
      flat, W row-major positions a wave, and its row-major accesses take the 1-D paths;
    * "groups" for a launch that would run "nd" and keeps its work-groups whole (barriers or
      __local memory), when a work-group fits an L2B's run of slots (group_slots): each group's
      work-items are a run of slots in one L2B, the wave's groups spread over the L2Bs, so each
      L2B streams only its own groups' __local blocks;
    * a 1-D launch of few work-items and no work-groups to keep whole: "1d-n<f>", the narrowest
      wave holding it (it moves less);
    * "-norep" when a replicated (read-only) buffer is also passed as another argument;
    * "-res1" for a launch of one work-item, else "-res", when every buffer that build keeps
      resident fits (KernelBinary.resident_bytes) and is passed once;
    * each of these from the restrict IR ("-noalias" after the first part) when ``restrict`` (the
      kernel has such builds: CompiledModule.restrict_kernels) and no two buffer arguments
      overlap (overlapping_args); otherwise, or where such a build does not compile, from the IR
      that assumes nothing about aliasing."""
    gs, ls, off = launch.global_size, launch.local_size, launch.offset
    group = grouped(kernel, args)
    shape = wave_shape(lay, gs, ls, group)
    shared = overlapping_args(args)
    na = NOALIAS if restrict and not shared else ""

    def optional(m):                    # the -noalias build if it compiles, else the usual one if it does
        return na and _optional(build, m + na, failed) or _optional(build, m, failed)
    mode = "1d" if gs[1] == gs[2] == 1 and shape[0] == lay.wave and not off[0] and not (
        uses_local(kernel, args) and lay.l2b_items % ls[0]) and "1d" not in failed else "nd"   # (local_per_l2b)
    narrow = lay.narrowest(gs[0]) if mode == "1d" else 1
    if group and narrow > 1 and lay.narrowed(narrow).l2b_items % ls[0]:
        narrow = 1                      # (work-groups must tile each L2B's run: abi.local_per_l2b)
    kb = optional(narrowed_mode(narrow)) if narrow > 1 else None
    if kb is None and mode == "nd" and gs[2] == 1 and not any(off) and not group:
        # a rows build, first the narrowest wave that holds the launch (it moves less); where its
        # staging does not fit L2BM or its tile plan does not fit the launch (tileplan.py), a wave
        # narrowed 2 or 4 times may (smaller shares, fewer rows an L2B)
        fits = lay.narrowest(gs[0] * gs[1])
        for m in dict.fromkeys(f"{ROWS_MODE}-n{f}" if f > 1 else ROWS_MODE for f in (fits, 1, 2, 4)
                               if f == 1 or lay.can_narrow(f)):
            kb = optional(m)
            if kb is None:
                continue
            if not (kb.pitches and all(pitch_value(q, args, gs) == gs[0] for q in kb.pitches)):
                break                   # nothing to gain, or a pitch that is not the row: the nd build
            final = _specialised(kb, build, args, gs, failed, shared)
            rows_lay = lay.for_mode(kb.mode)
            if launch_tests_hold(final, args, gs, ls):
                return final, rows_lay, (rows_lay.wave, 1, 1, 1, 1, 1)
        kb = None
    if kb is None and mode == "nd" and group and group_slots(lay, ls):
        # whole work-groups, each a run of slots in one L2B, whose __local blocks the L2B keeps
        kb = optional(GROUPS_MODE)
        if kb is not None:
            final = _specialised(kb, build, args, gs, failed, shared)
            if launch_tests_hold(final, args, gs, ls):
                return final, lay, wave_shape(lay, gs, ls, group, group_slots(lay, ls) * lay.groups * lay.l2b)
            kb = None
    whole, whole_shape = lay, shape
    if kb is not None and narrow > 1:
        lay = lay.narrowed(narrow)
        shape = (lay.wave, 1, 1, lay.wave // ls[0], 1, 1)
    elif kb is None:
        kb = na and _optional(build, mode + na, failed) or build(mode)
    final = _specialised(kb, build, args, gs, failed, shared)
    if mode == "nd" or launch_tests_hold(final, args, gs, ls):
        return final, lay, shape
    # the 1-D build took a constant for the local size (IntSel.global_id_sum) that this launch's is not
    kb = na and _optional(build, "nd" + na, failed) or build("nd")
    return _specialised(kb, build, args, gs, failed, shared), whole, whole_shape


def _specialised(kb, build, args, gs, failed, shared: set):
    """kb, or its "-norep" build when a replicated buffer (or one the kernel moves through a
    launch copy: a snapshot, a split copy) overlaps another argument, then its "-res" / "-res1"
    build when every buffer that one keeps resident fits and overlaps none (choose_variant)."""
    if shared & set(kb.replicated + kb.snapshots + [k for k, *_ in getattr(kb, "split_copies", ())]):
        kb = build(kb.mode + "-norep")
    one = gs[0] * gs[1] * gs[2] == 1 and kb.resident_one
    res, rmode = (kb.resident_one, kb.mode + "-res1") if one else (kb.resident, kb.mode + "-res")
    if res and all(args[k].nbytes <= kb.resident_bytes and k not in shared for k in res):
        kb = _optional(build, rmode, failed) or kb
    return kb


def launch_tests_hold(kb, args, gs, ls) -> bool:
    """Whether a launch meets the build's launch tests (KernelBinary.launch_tests: sequencer
    conditions on its integer arguments %p<k>, the row length %rlen and the local sizes %lsx,
    %lsy, %lsz; tileplan.py, IntSel.global_id_sum, access.block_tests)."""
    tests = getattr(kb, "launch_tests", None)
    if not tests:
        return True
    env = {ROW_LENGTH: gs[0], "lsx": ls[0], "lsy": ls[1], "lsz": ls[2]}
    for i, a in enumerate(args):
        if is_value(a) and len(a) <= 8:
            env[param(i)] = int.from_bytes(bytes(a), "little", signed=True)
    try:
        return all(evaluate(t, env) for t in tests)
    except Exception:                   # noqa: BLE001 - a value it cannot evaluate: do not take the plan
        return False


def pitch_value(pitch, args, gs) -> int | None:
    """The value of a "rows" build's pitch (KernelBinary.pitches) at a launch: "gx" (the global
    size in x), "p<k>" (by-value integer parameter k), or a constant."""
    if pitch == "gx":
        return gs[0]
    if isinstance(pitch, int):
        return pitch
    a = args[int(pitch[1:])]
    return int.from_bytes(bytes(a), "little", signed=True) if is_value(a) and len(a) <= 8 else None


class SlowerBuildWarning(UserWarning):
    """A faster build of a kernel did not compile, so its launches run a slower one."""


def _optional(build, mode, failed):
    """build(mode), or None if it does not compile (then and on every later launch; said once, as a
    SlowerBuildWarning: a launch that silently runs a build many times slower is a surprise)."""
    if mode in failed:
        return None
    try:
        return build(mode)
    except CompileError as e:
        failed.add(mode)
        warn_slower(mode, e)
        return None


def warn_slower(mode: str, err, instead: str = "a slower one") -> None:
    """Say, as a SlowerBuildWarning at the caller's caller, that the `mode` build does not compile
    (err's first line) and which build the launches run instead."""
    first = (err.diagnostics[0].format().splitlines()[0] if getattr(err, "diagnostics", None)
             else str(err).splitlines()[0] if str(err) else type(err).__name__)
    warnings.warn(f"the '{mode}' build does not compile, so launches run {instead}: {first}",
                  SlowerBuildWarning, stacklevel=3)


# -- the plan of one launch ----------------------------------------------------------------------

@dataclass
class LaunchPlan:
    """Everything a launch writes, runs and reads, as plain data (plan_launch)."""
    binary: object               # the KernelBinary of the variant chosen (binary.mode)
    layout: object               # the Layout that build runs in
    seq: dict                    # sequencer argument -> value, for all but the device's own buffers'
    argblk: np.ndarray           # ARG_LONGS long words, for group 0's DRAM at ARGBLK
    buffers: list = field(default_factory=list)    # [(argument index, replicated)], each buffer once,
                                                   # written before the run (replicated: whole, in every group)
    read: list = field(default_factory=list)       # argument indices whose buffers are read back after it
    widen: list = field(default_factory=list)      # parameters whose widened copy goes to widened(k)
    row_copies: list = field(default_factory=list)  # (parameter, pitch in elements, interleave): its row copy
                                                    # goes to row_copy(k) (rowplan.py), group g's g stripes of rows lower
    report: int = 0              # out-of-bounds report buffers (base(REPORT[j])) the kernel writes, 0 if none
    report_bytes: int = 0        # ... each this long
    local_rows: tuple = (0, 0, 0)   # __local scratch (local_rows): rows the kernel streams (rows(LOCAL)),
                                    # chunks of each it reads, rows in each group's DRAM; zeros if none
    row_stores: list = field(default_factory=list)  # (parameter, pitch, start, passes): its transposed copy
                                                    # for a row store goes to row_store(k) (rowstore.py)
    snapshots: list = field(default_factory=list)   # parameters whose launch-start copy goes to snapshot(k)
    split_copies: list = field(default_factory=list)  # (parameter, stored, layout): its split copy goes
                                                      # to split_copy(k), read back after the run if stored
    row_loads: list = field(default_factory=list)   # (parameter, pitch, start, passes): its transposed copy
                                                    # for a row load goes to row_load(k) (rowplan.py)
    row_store_sets: list = field(default_factory=list)  # (parameter, passes, [(pitch, stride, start, group
                                                        # pitch, local pitch) per store], skewed, local size):
                                                        # its copy's planes go to row_store(k)
    affine_copies: list = field(default_factory=list)   # (n, parameter, c, a, b, u, g): its copy, element f =
                                                        # c f + a (f mod g) + b (f div g) + u, goes to affine_copy(n)

    def registers(self, extra: dict) -> dict:
        """The values of the build's sequencer arguments, with ``extra`` (the device's buffers)."""
        seq = {**self.seq, **extra}
        missing = [k for k in self.binary.args if k not in seq]
        if missing:                        # a build reading an argument this module does not know
            raise ValueError(f"kernel '{self.binary.name}' ({self.binary.mode}): no value for sequencer "
                             f"argument(s) {', '.join(missing)}")
        return {k: seq[k] for k in self.binary.args}


def _dup(v) -> int:
    """A 32-bit value in both halves of a long word."""
    return (int(v) & 0xFFFFFFFF) * 0x100000001


def _recip(v) -> int:
    """fp64 1 / v as a long word (exact division by a launch constant: IntSel.div_exact)."""
    return int(np.array([1.0 / v]).view(np.uint64)[0])


def plan_launch(lay, kernel, launch, args, build, failed: set, argblk_at: int = 0,
                restrict: bool = False) -> LaunchPlan:
    """The plan of one NDRange of ``kernel`` (a KernelInfo) on a machine of layout ``lay``.

    ``args`` holds, per parameter, a buffer (anything with ``nbytes`` and ``dram``, its long-word
    address in every group's DRAM), a by-value argument's bytes, or a __local pointer's size
    (anything else with ``nbytes``); ``build``, ``failed`` and ``restrict`` are choose_variant's.  The values of
    the device's own buffers (the out-of-bounds report, __local DRAM, widened copies, __constant
    tables) are left to the device: the plan says what they must hold."""
    wave = lay.wave                 # (the report buffers have a lane for each slot of the full wave)
    kb, lay, (wx, wy, wz, kx, ky, kz) = choose_variant(lay, kernel, launch, args, build, failed, restrict)
    gs, ls, off = launch.global_size, launch.local_size, launch.offset
    blk = np.zeros(ARG_LONGS, np.uint64)
    wg = [launch.work_dim, *gs, *ls, 0, 0, 0, *off, *launch.num_groups]
    blk[WG_SLOT:WG_SLOT + 16] = np.array(wg, np.int64).view(np.uint64)
    # __local: the static arrays first, then each __local pointer argument, 16-byte aligned
    local_off, lbytes = {}, -(-kernel.local_mem_bytes // 16) * 16
    for i, a in enumerate(args):
        if not is_buffer(a) and not is_value(a):
            local_off[i], lbytes = lbytes, lbytes + -(-a.nbytes // 16) * 16
    block = wave_major_locals(lay, kb.mode, kernel, args, ls, gs[0], local_off) or lbytes
    shape = dict(wx=wx, wy=wy, wz=wz, wxy=wx * wy, gx=gs[0], gy=gs[1], gz=gs[2], offx=off[0],
                 offy=off[1], offz=off[2], lsx=ls[0], lsy=ls[1], lsz=ls[2], kx=kx, ky=ky, lbytes=block)
    for j, k in enumerate(SHAPE):
        if k.startswith("r"):      # fp64 reciprocals, for exact division by launch constants
            blk[SHAPE_SLOT + j] = _recip(shape[k[1:]])
        else:
            blk[SHAPE_SLOT + j] = _dup(shape[k])
    if flat_rows(kb.mode):
        blk[RGX_SLOT] = _recip(gs[0])
    run = groups_per_l2b(lay, kx, ky, kz) if group_major(kb.mode) else run_groups(lay, ls[0], gs[0])
    if group_major(kb.mode):
        for name, value in dict(gpl=_dup(run), rgs=_recip(ls[0] * ls[1] * ls[2]), rkx=_recip(kx),
                                rky=_recip(ky)).items():
            blk[GROUP_SLOTS[name]] = value
    seq = {ARGBLK: argblk_at, "nwx": -(-gs[0] // wx), "nwy": -(-gs[1] // wy), "nwz": -(-gs[2] // wz),
           "gx": gs[0], "offx": off[0], ITEMS: gs[0] * gs[1] * gs[2], "lsx": ls[0], "lsy": ls[1],
           "lsz": ls[2], "ex": min(wx, gs[0]), "ey": min(wy, gs[1]), "ez": min(wz, gs[2]), LOCAL_BYTES: block,
           "offy": off[1], "offz": off[2]}
    if flat_rows(kb.mode):     # flat: the 1-D size is gx * gy; a wave's ids span these extents
        items = gs[0] * gs[1]
        seq.update(nwx=-(-items // wx), nwy=1, nwz=1, gx=items, ey=min(gs[1], (wx - 1) // gs[0] + 2))
        seq[ROW_LENGTH] = gs[0]
    replicated = {id(args[k]) for k in kb.replicated}
    buffers, seen, scalars = [], set(), {}
    for i, a in enumerate(args):
        if is_buffer(a):
            seq[base(i)], seq[rows(i)], seq[nbytes(i)] = a.dram, lay.rows(a.nbytes), a.nbytes
            blk[PARAM_SLOT + i] = _dup(a.nbytes)          # for the kernel's bounds checks
            if id(a) not in seen:
                seen.add(id(a))
                buffers.append((i, id(a) in replicated))
        elif not is_value(a):
            blk[PARAM_SLOT + i] = _dup(local_off[i])
            seq[param(i)] = local_off[i]             # (the sequencer's too: Memory.local_unit)
        else:
            raw = bytes(a)
            scalars[param(i)] = int.from_bytes(raw, "little", signed=True)
            if param(i) in kb.args:      # an integer the sequencer needs (a uniform trip count)
                seq[param(i)] = scalars[param(i)]
            if len(raw) == 4:
                blk[PARAM_SLOT + i] = _dup(int.from_bytes(raw, "little"))
            elif len(raw) == 8:
                blk[PARAM_SLOT + i] = int.from_bytes(raw, "little")
            elif len(raw) < 4:
                blk[PARAM_SLOT + i] = _dup(int.from_bytes(raw, "little", signed=True))
            else:                       # a vector or struct: packed in its own slots
                at = wide_arg_slots(kernel.params)[i]
                blk[at:at + -(-len(raw) // 8)] = np.frombuffer(raw.ljust(-(-len(raw) // 8) * 8, b"\0"), np.uint64)
    for slot, e in kb.derived:           # products of scalar arguments (IntSel.derived_product)
        blk[slot] = _dup(evaluate(e, scalars))
    report = (3 if base(REPORT[2]) in kb.args else 2) if base(REPORT[0]) in kb.args else 0
    local = local_rows(lay, kb.mode, lbytes, run, kx * ky * kz) if base(LOCAL) in kb.args else (0, 0, 0)
    seq[LOCAL_CHUNKS] = local[1]
    pitches = [(k, evaluate(pitch, seq), n) for k, pitch, n in kb.row_copies]
    row_stores, row_loads = ([(k, *(evaluate(e, seq) for e in exprs)) for k, *exprs in rows]
                             for rows in (kb.row_stores, kb.row_loads))
    sets = [(k, max(evaluate(plan["trips"], {**seq, "wx": x}) for x in range(seq["nwx"])),
             [tuple(evaluate(e, seq) for e in row) for row in plan["stores"]], plan["skewed"], ls[0])
            for k, plan in kb.row_store_sets]
    return LaunchPlan(kb, lay, seq, blk, buffers, [i for i, rep in buffers if not rep], list(kb.widened),
                      pitches, report, wave * 4, local, row_stores, list(kb.snapshots),
                      [tuple(x) for x in kb.split_copies], row_loads, sets,
                      [(n, k, *(evaluate(e, seq) for e in form), gs[0] if flat_rows(kb.mode) else ls[0])
                       for n, k, *form in kb.affine_copies])


def plan_task(kb, kernel, args, groups: int = 1) -> LaunchPlan:
    """The plan of a task kernel's launch (translator/task.py): every buffer whole in every group's
    DRAM at the same address, read back from group 0 where the kernel may write it; a DRAM_SPLIT
    buffer in ``groups`` equal parts, part g in group g (the kernel sees one part: its size
    register holds the part's bytes: the runtime has checked that the parts are whole long words),
    read back from every group.  By-value arguments as sequencer integers.  ``args`` as
    plan_launch's, without __local pointers."""
    seq, buffers, read = {}, [], []
    for i, a in enumerate(args):
        p = kernel.params[i]
        if is_buffer(a):
            seq[base(i)], seq[nbytes(i)] = a.dram, a.nbytes // groups if p.split else a.nbytes
            buffers.append((i, True))
            if not p.is_const:
                read.append(i)
        else:
            seq[param(i)] = int.from_bytes(a, "little", signed=p.dtype[0] == "i")
    return LaunchPlan(kb, None, seq, np.zeros(0, np.uint64), buffers, read)
