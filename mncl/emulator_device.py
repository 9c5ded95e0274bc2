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

import threading

import numpy as np

from .backend import DeviceDescription, LocalScratch
from .constants import device_type
from .errors import make_error, status_code

ARGBLK = 0                 # long-word address of the argument block in group 0's DRAM
HEAP_START = 64


class EmuAllocation:
    __slots__ = ("nbytes", "address", "view", "dram", "rows")

    def __init__(self, nbytes, dram, rows, host_array=None):
        self.nbytes = nbytes
        self.view = host_array.reshape(-1).view(np.uint8)[:nbytes] if host_array is not None \
            else np.zeros(nbytes, np.uint8)
        self.address = self.view.ctypes.data
        self.dram = dram          # long-word address in every group's DRAM
        self.rows = rows


class LoadedProgram:
    def __init__(self, module, device):
        self.module = module
        self.binaries = {}        # (kernel, mode) -> (KernelBinary, emulator Program)
        self.object_code = None
        self.device = device

    def binary(self, name, mode):
        key = (name, mode)
        if key not in self.binaries:
            from emulator import assemble
            from translator.backend import compile_kernel
            kb = compile_kernel(self.module, name, self.device.machine, mode)
            self.binaries[key] = (kb, assemble(kb.asm, f"{name}.vsm"))
        return self.binaries[key]


class EmulatorDevice:
    """The Backend for the emulator (see mncl/backend.py for the protocol)."""

    def __init__(self, machine="mncore2"):
        from emulator.machine import load_machine
        from translator.backend import Layout
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
            global_mem_size=dram_bytes, max_mem_alloc_size=dram_bytes // 4,
            local_mem_size=m.l2bm_longs * 8, max_constant_buffer_size=1 << 20,
            max_parameter_size=8 * 24, max_clock_frequency=int(m.clock_hz / 1e6),
            extensions="cl_khr_fp64")
        self.cache_key = f"emulator:{m.name}:{sorted(vars(m).items())!r}"
        self._emu = None
        self._next = HEAP_START
        self._lock = threading.Lock()

    @property
    def emu(self):
        if self._emu is None:
            from emulator import Emulator
            self._emu = Emulator(self.machine)
        return self._emu

    def allocate(self, nbytes, host_array=None):
        with self._lock:
            rows = self.layout.rows(nbytes)
            need = rows * self.layout.stripe
            if self._next + need > self.machine.dram_longs:
                raise make_error("Buffer", status_code.MEM_OBJECT_ALLOCATION_FAILURE,
                                 f"{nbytes} bytes do not fit the emulated DRAM ({self.machine.dram_longs * 8} "
                                 f"bytes per group, {self._next * 8} in use)")
            a = EmuAllocation(nbytes, self._next, rows, host_array)
            self._next += -(-need // 64) * 64
            return a

    def compile(self, source, filename, options):
        from translator import compile_opencl
        return compile_opencl(source, filename=filename, options=tuple(options), spmd=True)

    def load(self, module, object_code=None):
        prog = LoadedProgram(module, self)
        for name in module.kernels:           # compile errors belong to the build
            prog.binary(name, "1d")
        return prog

    # -- launching -----------------------------------------------------------------------
    def run(self, loaded, kernel_info, args, launch):
        from translator.backend import ARG_LONGS, PARAM_SLOT, SHAPE, SHAPE_SLOT, WG_SLOT
        lay = self.layout
        gs, ls, off = launch.global_size, launch.local_size, launch.offset
        mode = "1d" if gs[1] == gs[2] == 1 else "nd"
        kb, prog = loaded.binary(kernel_info.name, mode)
        W = lay.wave
        np2 = lambda n: 1 << max(0, (n - 1).bit_length())
        wx = min(W, np2(gs[0]))
        wy = min(W // wx, np2(gs[1]))
        wz = W // (wx * wy)
        blk = np.zeros(ARG_LONGS, np.uint64)
        wg = [launch.work_dim, *gs, *ls, 0, 0, 0, *off, *launch.num_groups]
        blk[WG_SLOT:WG_SLOT + 16] = np.array(wg, np.int64).view(np.uint64)
        dup = lambda v: (int(v) & 0xFFFFFFFF) * 0x100000001
        shape = dict(wx_mask=wx - 1, wx_log=wx.bit_length() - 1, wy_mask=wy - 1, wy_log=wy.bit_length() - 1,
                     wxy_log=(wx * wy).bit_length() - 1, wx=wx, wy=wy, wz=wz, gx=gs[0], gy=gs[1], gz=gs[2],
                     offx=off[0], offy=off[1], offz=off[2], lsx=ls[0], lsy=ls[1], lsz=ls[2])
        for j, k in enumerate(SHAPE):
            if k.startswith("rls"):      # fp64 1/ls, for the work-group index (see codegen.group_index)
                blk[SHAPE_SLOT + j] = np.array([1.0 / shape[k[1:]]]).view(np.uint64)[0]
            else:
                blk[SHAPE_SLOT + j] = dup(shape[k])
        seq = {"argblk": ARGBLK, "nwx": -(-gs[0] // wx), "nwy": -(-gs[1] // wy), "nwz": -(-gs[2] // wz)}
        buffers = []
        for i, a in enumerate(args):
            if isinstance(a, EmuAllocation):
                seq[f"b{i}"], seq[f"rows{i}"] = a.dram, a.rows
                buffers.append(a)
            elif isinstance(a, LocalScratch):
                raise make_error("enqueue_nd_range_kernel", status_code.INVALID_KERNEL_ARGS,
                                 f"kernel '{kernel_info.name}': __local arguments are not supported on the "
                                 f"emulator device yet")
            else:
                raw = bytes(a)
                if len(raw) == 4:
                    blk[PARAM_SLOT + i] = dup(int.from_bytes(raw, "little"))
                elif len(raw) == 8:
                    blk[PARAM_SLOT + i] = int.from_bytes(raw, "little")
                elif len(raw) < 4:
                    blk[PARAM_SLOT + i] = dup(int.from_bytes(raw, "little", signed=True))
        emu = self.emu
        emu.write_dram(0, ARGBLK, blk)
        for a in {id(b): b for b in buffers}.values():
            stripes = lay.to_stripes(a.view)
            for g in range(lay.groups):
                emu.write_dram(g, a.dram, stripes[g])
        from emulator.errors import EmuFault
        try:
            prof = emu.run(prog, {k: seq[k] for k in kb.args})
        except EmuFault as e:
            raise make_error("enqueue_nd_range_kernel", status_code.OUT_OF_RESOURCES,
                             f"kernel '{kernel_info.name}' faulted on the emulator: {e}") from None
        for a in {id(b): b for b in buffers}.values():
            n = a.rows * lay.stripe
            per = np.stack([emu.read_dram(g, a.dram, n) for g in range(lay.groups)])
            a.view[:] = lay.from_stripes(per, a.nbytes)
        prof.emulated_ns = prof.time_s * 1e9
        return prof
