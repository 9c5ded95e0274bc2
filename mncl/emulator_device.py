"""The emulator device: kernels compiled by the SIMD backend, run on the MN-Core 2-style emulator.

Buffers live in emulated DRAM, striped over the groups as translator/backend/layout.py
says.  The host side of a buffer is a mirror (``view``) that enqueue_copy and
map use; a launch writes each argument buffer's mirror to its DRAM stripes, runs
the compiled program (every byte a kernel touches moves through the machine's
transfer instructions and is costed there), and reads the buffers back.  The
launch's event carries emulated time in ``profile.start/end`` and the
emulator's profile in ``ev.stats``.
"""
from __future__ import annotations

import json
import math
import os
import threading
import weakref

import numpy as np

from .backend import NULL, DeviceDescription, LocalScratch
from .constants import device_fp_config, device_type
from .dram_heap import DramHeap
from .errors import Error, make_error, raise_error, status_code
from .queue import current_stop_check

ARGBLK = 0                 # long-word address of the argument block in group 0's DRAM
HEAP_START = 64
OBJECT_FORMAT = "mncl-emu-kernels-1"   # the layout of LoadedProgram.object_code


def _longs(view: np.ndarray) -> np.ndarray:
    """A buffer's bytes as long words (the last one zero-padded)."""
    n = -(-view.size // 8) * 8
    if n == view.size:
        return view.view(np.uint64)
    out = np.zeros(n, np.uint8)
    out[:view.size] = view
    return out.view(np.uint64)


def time_limit(routine: str) -> float | None:
    """MNCL_EMU_TIME_LIMIT in seconds (None: unset or empty); anything but a positive number is an
    error naming the variable (``nan`` would silently mean no limit)."""
    text = os.environ.get("MNCL_EMU_TIME_LIMIT", "").strip()
    if not text:
        return None
    try:
        limit = float(text)
    except ValueError:
        limit = math.nan
    if not (0 < limit < math.inf):
        raise_error(routine, status_code.INVALID_VALUE,
                    f"MNCL_EMU_TIME_LIMIT={text!r:.40} is not a positive number of seconds")
    return limit


class EmuAllocation:
    """A buffer's host mirror and its place in every group's DRAM (``dram``: None once freed).

    The mirror holds the buffer's bytes between launches: a launch writes it to DRAM first and
    reads it back after, so a freed allocation a command still holds gets DRAM again when that
    command runs (EmulatorDevice.run)."""

    __slots__ = ("nbytes", "address", "view", "dram", "rows", "give_back", "__weakref__")

    def __init__(self, nbytes, host_array=None):
        self.nbytes = nbytes
        self.view = host_array.reshape(-1).view(np.uint8)[:nbytes] if host_array is not None \
            else np.zeros(nbytes, np.uint8)
        self.address = self.view.ctypes.data
        self.dram = None          # long-word address in every group's DRAM
        self.rows = 0
        self.give_back = None     # returns the DRAM to the heap, once (on free, or when collected)


class LoadedProgram:
    """A module on the emulator device: its kernels compiled by the backend (KernelBinary, kept on
    disk as ``object_code`` so a cache hit skips the backend) and assembled on first use."""

    def __init__(self, module, device, kernels=None):
        self.module = module
        self.device = device
        self.kernels = dict(kernels or {})     # (kernel, mode) -> KernelBinary
        self.binaries = {}        # (kernel, mode) -> (KernelBinary, emulator Program, constant tables)
        self.constants = []       # the DRAM allocations of the constant tables (kept while loaded)
        self.failed = {}          # kernel -> the narrowed or resident builds that did not compile (abi.py)

    @property
    def object_code(self) -> bytes:
        """The kernels compiled so far, as JSON for the disk cache (see EmulatorDevice.load)."""
        return json.dumps({"format": OBJECT_FORMAT, "device": self.device.cache_key,
                           "kernels": [kb.to_dict() for kb in self.kernels.values()]}).encode()

    def kernel_binary(self, name, mode):
        kb = self.kernels.get((name, mode))
        if kb is None:
            from translator.backend import compile_kernel
            kb = self.kernels[(name, mode)] = compile_kernel(self.module, name, self.device.machine, mode)
        return kb

    def binary(self, name, mode):
        key = (name, mode)
        if key not in self.binaries:
            from emulator import assemble
            from translator.backend import abi
            kb = self.kernel_binary(name, mode)
            tables = {}          # __constant data: in DRAM for as long as the program is loaded
            lay = self.device.layout.for_mode(mode)
            for k, (cname, data) in enumerate(kb.constants):
                raw = np.frombuffer(bytes.fromhex(data), np.uint8).copy()
                a = self.device.allocate(raw.size, raw)
                self.constants.append(a)
                self.device.write_buffer(a, lay)
                t = abi.const_table(k)
                tables[abi.base(t)], tables[abi.rows(t)] = a.dram, lay.rows(a.nbytes)
            self.binaries[key] = (kb, assemble(kb.asm, f"{name}.vsm"), tables)
        return self.binaries[key]


class EmulatorDevice:
    """The Backend for the emulator (see mncl/backend.py for the protocol)."""

    def __init__(self, machine="mncore2"):
        from emulator.machine import load_machine
        from translator.backend import Layout, abi
        from translator.backend.codegen import MAX_BUFFER, MAX_GLOBAL_ID
        self.spec = str(machine)
        self.machine = load_machine(machine)
        self.layout = Layout.of(self.machine)
        m = self.machine
        dram_bytes = m.dram_longs * 8 * m.groups
        self.description = DeviceDescription(
            name=f"MN-Core 2 (emulator, {m.name})", kind="emulator", type=device_type.ACCELERATOR,
            vendor="MNCL", version="OpenCL 1.2 MNCL emulator", driver_version="mncl 0.1",
            opencl_c_version="OpenCL C 1.2", max_compute_units=m.n_pe,
            max_work_group_size=self.layout.wave, max_work_item_sizes=(self.layout.wave,) * 3,
            # offsets into a buffer and global ids are 32-bit lanes on this device; the backend's
            # bounds checks are exact up to these limits (translator/backend/codegen.py, MAX_BUFFER)
            global_mem_size=dram_bytes, max_mem_alloc_size=min(dram_bytes // 4, MAX_BUFFER),
            global_id_limit=MAX_GLOBAL_ID,
            local_mem_size=m.l2bm_longs * 8, max_constant_buffer_size=1 << 20,
            max_parameter_size=8 * abi.MAX_PARAMS, max_clock_frequency=int(m.clock_hz / 1e6),
            extensions="cl_khr_fp64",
            # OpenCL 1.2's minimum: no CL_FP_DENORM, the MAU flushes float subnormal results to zero
            # (docs/language.md, "NaN results"); its fp32 fma rounds twice (no CL_FP_FMA)
            single_fp_config=device_fp_config.ROUND_TO_NEAREST | device_fp_config.INF_NAN)
        self.cache_key = f"emulator:{m.name}:{sorted(vars(m).items())!r}"
        self._emu = None
        self._heap = DramHeap(HEAP_START, m.dram_longs)
        self._null = None          # the zero-byte allocation a NULL pointer argument gets
        self._run_lock = threading.Lock()   # one emulated machine: launches from all queues take turns

    @property
    def emu(self):
        if self._emu is None:
            from emulator import Emulator
            self._emu = Emulator(self.machine)
        return self._emu

    def allocate(self, nbytes, host_array=None):
        """DRAM for ``nbytes`` in every group, given back to the heap on free or when the allocation
        is collected."""
        return self._place(EmuAllocation(nbytes, host_array))

    def _place(self, a: EmuAllocation, routine="Buffer") -> EmuAllocation:
        """Give an allocation its DRAM (a MEM_OBJECT_ALLOCATION_FAILURE of ``routine`` if it does not fit)."""
        need = self.layout.group_longs(a.nbytes)
        heap = self._heap
        at = heap.alloc(need)
        if at is None:
            raise make_error(routine, status_code.MEM_OBJECT_ALLOCATION_FAILURE,
                             f"{a.nbytes} bytes do not fit the emulated DRAM ({self.machine.dram_longs * 8} "
                             f"bytes per group, {heap.in_use * 8} in use, the largest free block "
                             f"{heap.largest_free() * 8})")
        a.dram, a.rows = at + self.layout.pad, self.layout.rows(a.nbytes)
        a.give_back = weakref.finalize(a, heap.free, at, need)
        a.give_back.atexit = False
        return a

    def free(self, a: EmuAllocation):
        """The buffer was released: its DRAM goes back to the heap now.  A command enqueued before
        the release (or recorded) still holds the allocation; it gets DRAM again when it runs."""
        with self._run_lock:                  # (not under a launch that uses it)
            if a.dram is not None:
                a.give_back()
                a.dram = None

    @staticmethod
    def copy_in(a: EmuAllocation, offset: int, data: np.ndarray):
        """Host bytes -> the buffer at ``offset`` (its mirror: the next launch writes it to DRAM)."""
        a.view[offset:offset + data.size] = data

    @staticmethod
    def copy_out(a: EmuAllocation, offset: int, out: np.ndarray):
        """The buffer's bytes at ``offset`` -> ``out`` (its mirror: the last launch read it back)."""
        out[:] = a.view[offset:offset + out.size]

    def write_buffer(self, a: EmuAllocation, lay):
        """The host mirror of a buffer -> its stripes (of the launch's layout) in every group's DRAM."""
        stripes = lay.to_stripes(a.view)
        for g in range(lay.groups):
            self.emu.write_dram(g, a.dram, stripes[g])

    def read_buffer(self, a: EmuAllocation, lay) -> np.ndarray:
        """The bytes of a buffer from its stripes in every group's DRAM."""
        per = np.stack([self.emu.read_dram(g, a.dram, lay.rows(a.nbytes) * lay.stripe) for g in range(lay.groups)])
        return lay.from_stripes(per, a.nbytes)

    def compile(self, source, filename, options):
        from translator import compile_opencl
        module = compile_opencl(source, filename=filename, options=tuple(options), spmd=True)
        module.source = source          # for the profile's per-line report
        return module

    def load(self, module, object_code=None):
        """Compile and assemble every kernel now, so compile errors belong to the build.  With
        ``object_code`` from an earlier load (a disk-cache hit) the backend is skipped and each
        kernel is assembled on its first launch: that build already succeeded."""
        from translator import CompileError
        from translator.backend import abi
        prog = LoadedProgram(module, self, self._cached_kernels(object_code))
        restrict = set(getattr(module, "restrict_kernels", ()))
        for name, info in module.kernels.items():
            mode = abi.TASK_MODE if info.task else "1d"     # the build most launches take: buffers apart
            modes = [mode + abi.NOALIAS, mode] if name in restrict else [mode]
            if any((name, m) in prog.kernels for m in modes):
                continue
            for m in modes:
                try:
                    prog.binary(name, m)
                    break
                except CompileError as e:   # a -noalias build that does not compile: the usual one, always
                    if m != modes[-1]:
                        prog.failed.setdefault(name, set()).add(m)
                    elif not (m == "1d" and self._nd_instead(prog, name, e)):
                        raise
        return prog

    @staticmethod
    def _nd_instead(prog, name, err) -> bool:
        """Whether the "nd" build compiles where the "1d" one did not (a resource the 1-D plans
        ran out of, not the source): then launches run it, and a SlowerBuildWarning says so.  A
        source error fails both, and the build reports the "1d" one."""
        from translator import CompileError
        from translator.backend import abi
        try:
            prog.binary(name, "nd")
        except CompileError:
            return False
        prog.failed.setdefault(name, set()).add("1d")
        abi.warn_slower("1d", err, "the 'nd' build")
        return True

    def _cached_kernels(self, object_code):
        """The KernelBinaries in ``object_code``, or {} if it is missing, unreadable or made for
        another machine (then the backend runs again, as the CPU device regenerates a bad object)."""
        from translator.backend import KernelBinary
        try:
            doc = json.loads(object_code)
            if doc["format"] != OBJECT_FORMAT or doc["device"] != self.cache_key:
                return {}
            kbs = [KernelBinary.from_dict(d) for d in doc["kernels"]]
        except (TypeError, ValueError, KeyError):
            return {}
        return {(kb.name, kb.mode): kb for kb in kbs}

    # -- launching -----------------------------------------------------------------------
    def scratch(self, key, nbytes):
        """A zeroed device-only buffer kept between launches and grown as needed."""
        pool = self.__dict__.setdefault("_scratch", {})
        a = pool.get(key)
        if a is None or a.nbytes < nbytes:
            a = pool[key] = self.allocate(nbytes)
        a.view[:] = 0
        return a

    def kept(self, key, nbytes, buf, params, fill):
        """A read-only layout copy of buffer `buf` (a row load's transposed copy, an affine copy)
        in the device-only buffer `key`: fill(copy) makes it, again only where the buffer's
        contents or the copy's `params` (its layout among them) changed since the launch that made
        it, as an inference engine keeps pre-packed weights (no kernel writes these copies).  The
        buffer's contents are compared whole (a kept copy holds a host copy of them); None when the
        copy does not fit in DRAM."""
        kept = self.__dict__.setdefault("_kept", {})
        pool = self.__dict__.setdefault("_scratch", {})
        had = kept.pop(key, None)
        if had is not None and had[0] is pool.get(key) and had[1] == params and np.array_equal(had[2], buf.view):
            kept[key] = had
            return had[0]
        try:
            copy = self.scratch(key, nbytes)
        except Error:
            return None
        fill(copy)
        kept[key] = (copy, params, buf.view.copy())
        return copy

    def write_row_copy(self, k, buf, pitch, lay, interleave=0):
        """Buffer k whole in every group's DRAM for a row plan (translator/backend/rowplan.py): group
        g's copy one stripe of work-items lower than group 0's, so that one address gives each
        group the row of its own work-item.  With `interleave` N, the paired layout of
        rowplan.stage_paired: rows 2j and 2j + 1 side by side element by element (long word e of
        pair row j holds both rows' element e), pair rows padded to whole 8-long-word granules,
        and each N pair rows 8 apart interleaved granule by granule.  The address of group 0's
        copy, or -1 (the kernel then gathers) when the pitch is not positive (or, unpaired, not
        even) or the copies do not fit."""
        if pitch <= 0 or pitch % 2 and not interleave:
            return -1
        if interleave:
            width, block = -(-pitch // 8) * 8, 8 * interleave
            elems = _longs(buf.view).view(np.uint32)
            rows = -(-max(1, -(-elems.size // pitch)) // (2 * block)) * 2 * block
            flat = np.zeros(rows * pitch, np.uint32)
            flat[:elems.size] = elems
            grid = np.zeros((rows, width), np.uint32)
            grid[:, :pitch] = flat.reshape(rows, pitch)
            pairs = np.ascontiguousarray(grid.reshape(rows // 2, 2, width).transpose(0, 2, 1)).view(np.uint64)
            data = pairs.reshape(rows // 2 // block, interleave, 8, width // 8, 8).transpose(0, 2, 3, 1, 4).ravel()
            shift = lay.stripe * width              # long words between two groups' copies
        else:
            data = _longs(buf.view)
            shift = 2 * lay.stripe * (pitch // 2)
        try:
            a = self.scratch(("rows", k), 8 * (data.size + (lay.groups - 1) * shift))
        except Error:                               # no room in DRAM: the kernel gathers
            return -1
        top = a.dram + (lay.groups - 1) * shift
        for g in range(lay.groups):
            self.emu.write_dram(g, top - g * shift, data)
        return top

    def write_row_store(self, k, buf, pitch, start, passes, items, lay, twice):
        """The transposed copy of buffer k for a row store (translator/backend/rowstore.py): pass k
        of work-item w (of the launch's `items`, its waves whole) at element k * items + w,
        striped like a buffer, holding the buffer's values (a lane that does not store keeps
        them).  None (the kernel then scatters) when the buffer is also another argument, there
        are no passes, rows overlap (the copy of a lane that does not store would put back the
        value another lane stored) or the copy does not fit.  Else (the copy, the buffer element
        of each (pass, work-item) of it that lies in the buffer, which those are), for
        read_row_store."""
        if twice or passes <= 0 or pitch < passes:
            return None
        copy = self.write_transposed(("row store", k), buf, pitch, start, passes, items, lay)
        if copy is None:
            return None
        idx = np.arange(items, dtype=np.int64)[None, :] * pitch + start + np.arange(passes, dtype=np.int64)[:, None]
        inside = (idx >= 0) & (idx < buf.nbytes // 4)
        return copy, idx[inside], inside

    def write_row_load(self, k, buf, pitch, start, passes, items, gx, lay) -> int:
        """The address of buffer k's transposed copy for a row load (translator/backend/rowplan.py),
        or -1 (the kernel then stages the rows in panels, or gathers) when there are no passes,
        the pitch is not positive, the copy does not fit, or the launch's gx work-items fill less
        than half of the slots whose shares its waves move (a small launch in a wide wave)."""
        last = gx - (items - lay.wave)                      # work-items of the last wave
        moved = items - lay.wave + next((n for _, n in lay.share_tiers() if last <= n), lay.wave)
        if pitch <= 0 or 2 * gx < moved:
            return -1
        copy = self.write_transposed(("row load", k), buf, pitch, start, passes, items, lay, live=gx)
        return copy.dram if copy is not None else -1

    def write_transposed(self, key, buf, pitch, start, passes, items, lay, live=None):
        """A copy of buffer `buf` transposed for a row load or store: element n * items + w is
        buffer element w * pitch + start + n (0 where that lies outside the buffer), striped like a
        buffer; None when it has no elements or does not fit in a quarter of DRAM.  With `live`
        (a row load's work-items), only w < live: no work-item reads the rest (left 0), and
        transposing it was most of a narrowed launch's copy (gesummv: 50 -> 12 ms); such a copy
        is read only, so it is kept while the buffer does not change (kept)."""
        nbytes = 4 * passes * items
        if passes <= 0 or nbytes > lay.dram_longs * 8 // 4:
            return None

        def fill(copy):
            n, full = min(items, live or items), items
            data = _longs(buf.view).view(np.uint32)[:buf.nbytes // 4]
            lo = min(0, start, (n - 1) * pitch + start)                         # the elements the copy names
            hi = max(start + passes, (n - 1) * pitch + start + passes)
            first = start
            if lo < 0 or hi > data.size:                                        # some outside the buffer: 0
                padded = np.zeros(hi - lo, np.uint32)
                at, to = max(0, -lo), min(hi - lo, data.size - lo)
                if to > at:
                    padded[at:to] = data[lo + at:lo + to]
                data, first = padded, start - lo
            view = np.lib.stride_tricks.as_strided(data[first:], (passes, n), (4, 4 * pitch), writeable=False)
            copy.view[:nbytes].view(np.uint32).reshape(passes, full)[:, :n] = view
            self.write_buffer(copy, lay)
        if live is not None:
            return self.kept(key, nbytes, buf, (pitch, start, passes, items, live, lay), fill)
        try:
            copy = self.scratch(key, nbytes)
        except Error:
            return None
        fill(copy)
        return copy

    def write_split_copy(self, k, buf, layout, stored, items, lay):
        """The split copy of buffer k (translator/backend/splitcopy.py) and, for 8-byte fields,
        the long words between its planes (else 0).  Layout -F, elements of F 8-byte fields: per
        field, the even work-items' (elements 0, 2, 4, ... of the buffer), then the odd ones', each
        plane padded to whole waves and covering the launch and the buffer; striped like a buffer
        where the kernel stores to it, else whole in every group's DRAM (replicated: shifted
        loads).  Layout E: per wave of the launch's `items`, the wave's E-word elements field by
        field, striped.  Both are the buffer transposed (numpy views, not an index per word: daxpy's
        2^20 doubles spent a third of the launch here).  Gives ((the copy's address, the copy, the
        buffer word of each word of it that lies in the buffer and which those are, for
        read_row_store: None where the kernel does not store), the plane).  (A launch whose
        buffers overlap runs a "-norep" build, which has no split copies: abi._specialised.)"""
        if layout < 0:          # -F: F 8-byte fields an element, planes (field, parity)
            f, per = -layout, lay.groups * lay.stripe
            plane = -(-max(items, -(-buf.nbytes // (8 * f))) // 2 // per) * per
            # copy long word (c, h, j) is buffer long word (2j + h) F + c
            n, shape, axes, unit = 4 * plane * f, (plane, 2, f), (2, 1, 0, 3), np.uint64
        else:                   # copy word (w, c, i) is buffer word (w W + i) E + c
            plane, n = 0, items * layout
            shape, axes, unit = (n // (lay.wave * layout), lay.wave, layout), (0, 2, 1, 3), np.uint32

        def order(a):           # a's elements (words, or long words as the unit) in the copy's order
            return a.reshape(*shape, -1).transpose(axes).ravel()
        nw = buf.nbytes // 4
        padded = np.zeros(n, np.uint32)
        padded[:min(n, nw)] = _longs(buf.view).view(np.uint32)[:min(n, nw)]
        data = order(padded.view(unit)).view(np.uint32)
        if layout < 0 and not stored:       # replicated: nothing is written back
            copy = self.scratch(("split", k), 8 * lay.group_longs(4 * data.size))
            offsets, longs = lay.replicated(data.view(np.uint8))
            for g, off in enumerate(offsets):
                self.emu.write_dram(g, copy.dram + lay.pad + off, longs)
            return (copy.dram + lay.pad, copy, None, None), plane
        copy = self.scratch(("split", k), 4 * data.size)
        copy.view[:4 * data.size] = data.view(np.uint8)
        self.write_buffer(copy, lay)
        if not stored:
            return (copy.dram, copy, None, None), plane
        where = order(np.arange(n))         # the buffer word of each word of the copy, for the write-back
        inside = where < nw
        return (copy.dram, copy, where[inside], inside), plane

    def write_affine_copy(self, n, buf, form, items, lay) -> int:
        """The address of a build's n-th affine copy of buffer `buf` (Memory.affine_copy): element
        f (of the launch's waves, whole) is buffer element c f + a (f mod g) + b (f div g) + u
        (form: c, a, b, u, g), 0 where that lies outside the buffer; striped like a buffer, and
        kept while the buffer does not change (kept).  -1 (the kernel then gathers) when it does
        not fit in a quarter of DRAM."""
        if 4 * items > lay.dram_longs * 8 // 4:
            return -1
        c, a, b, u, g = form

        def fill(copy):
            f = np.arange(items, dtype=np.int64)
            idx = c * f + a * (f % g) + b * (f // g) + u
            data = _longs(buf.view).view(np.uint32)[:buf.nbytes // 4]
            inside = (idx >= 0) & (idx < data.size)
            copy.view[:4 * items].view(np.uint32)[inside] = data[idx[inside]]
            self.write_buffer(copy, lay)
        copy = self.kept(("affine copy", n), 4 * items, buf, (*form, items, lay), fill)
        return copy.dram if copy is not None else -1

    def write_store_set(self, k, buf, passes, rows, shape, items, lay, twice):
        """The copy of buffer k for its row store set (RowStore.stamped): per pass n, 2Q planes of
        the launch's `items` work-items (element (n * 2Q + j) * items + w), plane q < Q the values
        store q stored, plane Q + q its lane mask, all zero before the run.  None (the kernel then
        scatters) when the buffer is also another argument, there are no passes or the copy does
        not fit in a quarter of DRAM; else (the copy, passes, rows, shape, items) for
        read_store_set (shape: whether the loop runs skewed, the launch's local size)."""
        nbytes = 4 * passes * 2 * len(rows) * items
        if twice or passes <= 0 or nbytes > lay.dram_longs * 8 // 4:
            return None
        try:
            copy = self.scratch(("row store set", k), nbytes)
        except Error:
            return None
        self.write_buffer(copy, lay)
        return copy, passes, rows, shape, items

    def read_store_set(self, buf, copy, passes, rows, shape, items, lay):
        """The elements a row store set stored back into the buffer's host mirror: where several
        (pass, store) pairs stored one element, the value of the last in program order (pass k,
        then store q: stamp k * Q + q); two work-items storing one element race, as in OpenCL."""
        q_n = len(rows)
        got = self.read_buffer(copy, lay)[:4 * passes * 2 * q_n * items].view(np.uint32).reshape(passes, 2, q_n, items)
        n, q, w = np.nonzero(got[:, 1])
        pitch, stride, start, group, local = (np.array(c, np.int64)[q] for c in zip(*rows))
        skewed, ls = shape
        k = n - w % lay.wave if skewed else n           # (a skewed loop: lane x's pass k at pass k + x)
        idx = w * pitch + k * stride + start + w // ls * group + w % ls * local
        out = buf.view[:buf.nbytes // 4 * 4].view(np.uint32)
        keep = (idx >= 0) & (idx < out.size)
        idx, stamp, vals = idx[keep], (n * q_n + q)[keep], got[:, 0][n, q, w][keep]
        order = np.lexsort((stamp, idx))
        idx, vals = idx[order], vals[order]
        last = np.ones(idx.size, bool)                  # each element's last store
        last[:-1] = idx[1:] != idx[:-1]
        out[idx[last]] = vals[last]

    def read_row_store(self, buf, copy, where, inside, lay):
        """The stored rows from the transposed copy back into the buffer's host mirror."""
        got = self.read_buffer(copy, lay)[:4 * inside.size].view(np.uint32).reshape(inside.shape)
        buf.view[:buf.nbytes // 4 * 4].view(np.uint32)[where] = got[inside]

    def raise_out_of_bounds(self, kernel_info, kb, report, lay, args):
        """The first lane that went out of bounds, as the CPU device reports an overrun."""
        codes = self.read_buffer(report[0], lay).view(np.int32)
        bad = np.flatnonzero(codes)
        if not bad.size:
            return
        lane = bad[0]
        low = int(self.read_buffer(report[1], lay).view(np.uint32)[lane])
        site = kb.bounds[int(codes[lane]) - 1]
        line, k, size = site[:3]
        # (translator/backend/codegen.py, lanes_in_bounds): an element index in units of `unit`
        # bytes, or (unit 0) a byte offset
        unit, const, kind, access = site[3:] if len(site) == 7 else (0, 0, "i", "access")
        if kind == "const":          # a constant offset: the site holds it
            at = const
        elif kind == "w":            # a 64-bit index: its high word too
            high = int(self.read_buffer(report[2], lay).view(np.uint32)[lane])
            at = int(np.int64(np.uint64(high << 32 | low)))
        elif kind == "u":            # an unsigned index
            at = low
        else:
            at = int(np.int32(np.uint32(low)))
        index, elem = (at, unit) if unit else (at // size, size)
        where = f"line {line}" if line else "an unknown line"
        what, then = {"load": ("a read", "what they read there is unspecified"),
                      "store": ("a write", "their writes there were dropped")}.get(
            access, ("an access", "stores out of bounds are dropped"))
        raise make_error("enqueue_nd_range_kernel", status_code.OUT_OF_RESOURCES,
                         f"kernel '{kernel_info.name}' accessed out of bounds at {where}: index {index} "
                         f"of {self._oob_target(kernel_info, k, args)}, elements of {elem} bytes) in {what}; "
                         f"{bad.size} work-item(s) did; {then}, other buffers are untouched")

    @staticmethod
    def _oob_target(kernel_info, k, args) -> str:
        """What an out-of-bounds site accessed, for its report (up to its closing parenthesis)."""
        if isinstance(k, (list, tuple)):         # ("priv", bytes)
            return f"a private array ({k[1]} bytes"
        return f"the buffer passed as argument {k} ('{kernel_info.params[k].name}', {args[k].nbytes} bytes"

    def local_scratch(self, rows, kernel):
        """DRAM for the __local blocks of one wave, `rows` stripes in each group, kept between
        launches and grown as needed."""
        if getattr(self, "_local", None) is None or self._local.rows < rows:
            try:
                self._local = self.allocate(rows * self.layout.stripe * self.layout.groups * 8)
            except Exception as e:
                raise make_error("enqueue_nd_range_kernel", status_code.OUT_OF_RESOURCES,
                                 f"kernel '{kernel}': no DRAM for its __local memory: {e}") from None
        return self._local.dram

    def run(self, loaded, kernel_info, args, launch):
        if any(a is NULL for a in args):      # a NULL pointer: a buffer of no bytes, every access out of bounds
            if self._null is None:
                self._null = self.allocate(0)
            args = [self._null if a is NULL else a for a in args]
        with self._run_lock:
            for a in args:                    # freed since the command was enqueued: DRAM again
                if type(a) is EmuAllocation and a.dram is None:
                    self._place(a, "enqueue_nd_range_kernel")
            return self._run(loaded, kernel_info, args, launch)

    def _run_task(self, loaded, kernel_info, args, launch):
        """A task kernel: every group's DRAM holds each buffer argument whole, at the same address
        (the host writes all copies; that costs no modeled time, like any host write); the kernel's
        results are read back from group 0's copy, for the buffers it may write.  A DRAM_SPLIT
        buffer is in parts instead: part g in group g, written and read back per group."""
        from translator.backend import abi
        if launch.global_size != (1, 1, 1):
            raise make_error("enqueue_nd_range_kernel", status_code.INVALID_WORK_DIMENSION,
                             f"kernel '{kernel_info.name}' is a task kernel: it runs once on the whole machine; "
                             f"launch it with mncl.enqueue_task(queue, kernel)")
        if any(isinstance(a, LocalScratch) for a in args):
            raise make_error("enqueue_task", status_code.INVALID_KERNEL_ARGS,
                             f"kernel '{kernel_info.name}': task kernels take no __local arguments")
        groups = self.machine.groups
        for p, a in zip(kernel_info.params, args):
            if p.split and a.nbytes % (8 * groups):
                raise make_error("enqueue_task", status_code.INVALID_BUFFER_SIZE,
                                 f"kernel '{kernel_info.name}' argument '{p.name}' is DRAM_SPLIT over the {groups} "
                                 f"groups: its {a.nbytes} bytes are not {groups} equal parts of whole long words "
                                 f"(a multiple of {8 * groups} bytes)")
        kb, prog, _ = loaded.binary(kernel_info.name, abi.TASK_MODE)
        plan = abi.plan_task(kb, kernel_info, args, groups)
        emu = self.emu
        for i, _ in plan.buffers:
            data = _longs(args[i].view)
            if kernel_info.params[i].split:
                for g, part in enumerate(np.split(data, groups)):
                    emu.write_dram(g, args[i].dram, part)
            else:
                for g in range(groups):
                    emu.write_dram(g, args[i].dram, data)
        prof = self._emulate(prog, plan.registers({}), kernel_info, "enqueue_task")
        for i in plan.read:
            a = args[i]
            if kernel_info.params[i].split:
                n = a.nbytes // 8 // groups
                data = np.concatenate([emu.read_dram(g, a.dram, n) for g in range(groups)])
            else:
                data = emu.read_dram(0, a.dram, -(-a.nbytes // 8))
            a.view[:] = data.view(np.uint8)[:a.nbytes]
        return self._profile(prof, kernel_info, loaded)

    def _emulate(self, prog, regs, kernel_info, routine):
        """One run on the emulated machine, within MNCL_EMU_TIME_LIMIT seconds (a runaway kernel
        faults); a fault is the launch's error."""
        from emulator.errors import EmuFault
        from emulator.progress import progress_for
        self.emu.time_limit = time_limit(routine)
        self.emu.stop_check = current_stop_check()      # a Ctrl-C cancels the launch (mncl/queue.py)
        self.emu.progress = progress_for(f"{kernel_info.name} on {self.machine.name}")
        try:
            return self.emu.run(prog, regs)
        except EmuFault as e:
            raise make_error(routine, status_code.OUT_OF_RESOURCES,
                             f"kernel '{kernel_info.name}' faulted on the emulator: {e}") from None
        finally:
            if self.emu.progress is not None:
                self.emu.progress.close()

    @staticmethod
    def _profile(prof, kernel_info, loaded):
        """The launch's profile with its emulated time; MNCL_PROFILE writes the trace and report."""
        prof.emulated_ns = prof.time_s * 1e9
        where = os.environ.get("MNCL_PROFILE")
        if where:
            from .profile_report import write_reports
            try:
                write_reports(where, kernel_info.name, prof, getattr(loaded.module, "source", None))
            except OSError as e:       # not a directory, not writable, disk full ...
                raise make_error("enqueue_nd_range_kernel", status_code.INVALID_VALUE,
                                 f"kernel '{kernel_info.name}' ran, but MNCL_PROFILE={where!r} could not "
                                 f"take its profile: {e.strerror or e}") from None
        return prof

    def _run(self, loaded, kernel_info, args, launch):
        """Choose the variant and plan the launch (translator/backend/abi.py), write the argument
        block and the buffers, run, read the buffers back."""
        if kernel_info.task:
            return self._run_task(loaded, kernel_info, args, launch)
        from translator.backend import abi
        name = kernel_info.name
        plan = abi.plan_launch(self.layout, kernel_info, launch, args, lambda mode: loaded.kernel_binary(name, mode),
                               loaded.failed.setdefault(name, set()), ARGBLK,
                               name in getattr(loaded.module, "restrict_kernels", ()))
        kb, prog, tables = loaded.binary(name, plan.binary.mode)
        lay, extra = plan.layout, dict(tables)
        report = [self.scratch(f"bounds{j}", plan.report_bytes) for j in range(plan.report)]
        for j, a in enumerate(report):       # where lanes record their first out-of-bounds access
            extra[abi.base(abi.REPORT[j])] = a.dram
        streamed, _, held = plan.local_rows
        if held:                             # the wave's __local blocks in DRAM (abi.local_rows)
            extra[abi.base(abi.LOCAL)], extra[abi.rows(abi.LOCAL)] = self.local_scratch(held, name), streamed
        emu = self.emu
        emu.write_dram(0, ARGBLK, plan.argblk)
        for i, replicated in plan.buffers:
            if replicated:
                offsets, data = lay.replicated(args[i].view)
                for g, off in enumerate(offsets):
                    emu.write_dram(g, args[i].dram + off, data)
            else:
                self.write_buffer(args[i], lay)
        for a in report:
            self.write_buffer(a, lay)
        for k in plan.widen:                 # read only, as tables (codegen.uniform_table): group 0's DRAM
            wide = lay.widened(args[k].view, abi.table_lanes(plan.binary.params[k]))
            extra[abi.widened(k)] = self.scratch(("widened", k), wide.nbytes).dram
            emu.write_dram(0, extra[abi.widened(k)], wide)
        for k in plan.snapshots:             # launch-start copies, replicated (Memory.snapshot)
            offsets, data = lay.replicated(args[k].view)
            copy = self.scratch(("snapshot", k), 8 * lay.group_longs(args[k].nbytes))
            extra[abi.snapshot(k)] = copy.dram + lay.pad
            for g, off in enumerate(offsets):
                self.emu.write_dram(g, copy.dram + lay.pad + off, data)
        stores, sets, items = [], [], plan.seq["nwx"] * lay.wave
        for k, *row in plan.row_loads:           # (before the row copies: a launch that takes one needs no other)
            extra[abi.row_load(k)] = self.write_row_load(k, args[k], *row, items, plan.seq["gx"], lay)
        for k, pitch, interleave in plan.row_copies:
            extra[abi.row_copy(k)] = -1 if extra.get(abi.row_load(k), -1) >= 0 else \
                self.write_row_copy(k, args[k], pitch, lay, interleave)
        shared = abi.overlapping_args(args)      # (copies of a buffer another argument reaches would part them)
        for k, *row in plan.row_stores:
            made = self.write_row_store(k, args[k], *row, items, lay, k in shared)
            extra[abi.row_store(k)] = made[0].dram if made else -1
            stores += [(k, made)] if made else []
        for k, passes, rows, skewed, ls in plan.row_store_sets:
            made = self.write_store_set(k, args[k], passes, rows, (skewed, ls), items, lay, k in shared)
            extra[abi.row_store(k)] = made[0].dram if made else -1
            sets += [(k, made)] if made else []
        for n, k, *form in plan.affine_copies:
            extra[abi.affine_copy(n)] = self.write_affine_copy(n, args[k], form, items, lay)
        for k, stored, layout in plan.split_copies:
            try:
                made, extra[abi.split_plane(k)] = self.write_split_copy(k, args[k], layout, stored, items, lay)
            except Error as e:
                raise make_error("enqueue_nd_range_kernel", status_code.MEM_OBJECT_ALLOCATION_FAILURE,
                                 f"kernel '{kernel_info.name}': the copy of argument {k} "
                                 f"('{kernel_info.params[k].name}') its 8-byte or vector accesses move "
                                 f"(translator/backend/splitcopy.py) does not fit: {e}") from None
            extra[abi.split_copy(k)] = made[0]
            stores += [(k, made[1:])] if stored else []
        prof = self._emulate(prog, plan.registers(extra), kernel_info, "enqueue_nd_range_kernel")
        for i in plan.read:
            args[i].view[:] = self.read_buffer(args[i], lay)
        for k, made in stores:
            self.read_row_store(args[k], *made, lay)
        for k, made in sets:
            self.read_store_set(args[k], *made, lay)
        if report:
            self.raise_out_of_bounds(kernel_info, kb, report, lay, args)
        return self._profile(prof, kernel_info, loaded)
