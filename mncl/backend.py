"""The Device protocol: what a device must provide for the runtime to drive it.

Following tinygrad's "a device is an allocator, a compiler and a program
runner", a backend gives the runtime these things and nothing else:

* ``description``: a ``DeviceDescription`` (the figures ``Device`` info
  attributes report);
* ``allocate(nbytes, host_array=None) -> Allocation``: device memory with a
  host side the runtime can see as a numpy uint8 view (``host_array`` set:
  USE_HOST_PTR, the memory is the caller's own array; map and fill use the view);
* ``copy_in(alloc, offset, data)`` and ``copy_out(alloc, offset, out)``: host
  bytes (uint8 arrays) into the allocation at ``offset``, and out of it (the
  copy commands of mncl/transfers.py and COPY_HOST_PTR);
* ``free(alloc)``: the buffer was released (``Buffer.release()``): the device
  may take its memory back now; a command enqueued before the release, or
  recorded, still holds the allocation and must still run correctly (the
  emulator device frees the DRAM and places the buffer again should such a
  command run);
* ``compile(source, filename, options) -> CompiledModule`` and
  ``load(module, object_code=None) -> loaded``: turn source into the front
  end's module and the module into something runnable (the CPU device:
  JIT-compiled code).  ``loaded.object_code`` is bytes the device can reuse
  to load the same module faster next time (or None); the disk cache keeps it;
* ``run(loaded, kernel_info, args, launch)``: execute one NDRange
  synchronously on the calling thread.  ``args`` holds, per parameter, an
  ``Allocation`` (global/constant pointer), ``bytes`` (a by-value scalar) or a
  ``LocalScratch`` (a ``__local`` pointer parameter).  The runtime has already
  validated everything a user can get wrong; ``run`` raises ``mncl.Error`` for
  what only the device can find (e.g. a guard zone overwritten).

``cache_key`` names everything about the device that changes generated code.
The queue calls ``run`` on its worker thread; a backend may use its own
threads inside ``run``.  The CPU device (mncl/cpu.py) and the emulator device
(mncl/emulator_device.py) implement it; ``mncl.get_device(machine=machine)``
gives the emulator device for a machine.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np


@dataclass(frozen=True)
class DeviceDescription:
    name: str
    kind: str                       # "cpu" | "emulator": what MNCL_DEVICE selects
    type: int                       # a device_type bit
    vendor: str
    version: str                    # "OpenCL 1.2 MNCL ..."
    driver_version: str
    opencl_c_version: str
    max_compute_units: int
    max_work_group_size: int
    max_work_item_sizes: tuple
    global_mem_size: int
    max_mem_alloc_size: int
    local_mem_size: int
    max_constant_buffer_size: int
    max_parameter_size: int
    max_clock_frequency: int        # MHz
    address_bits: int = 64
    mem_base_addr_align: int = 1024  # bits, as OpenCL reports it
    extensions: str = ""
    profile: str = "FULL_PROFILE"
    single_fp_config: int = 0x3F    # CL_FP_DENORM | INF_NAN | ROUND_TO_NEAREST/ZERO/INF | FMA
    global_id_limit: int = 1 << 64  # global offset + global size, per dimension, at most this


@dataclass(frozen=True, eq=False)
class Launch:
    """One NDRange, always given in 3 dimensions (unused ones: size 1, offset 0).

    Compared and hashed by identity: the runtime reuses one object per shape, so
    a device may cache what it derives from it in a dict keyed by the Launch.
    """

    work_dim: int
    global_size: tuple
    local_size: tuple
    offset: tuple

    num_groups: tuple = field(init=False)   # work-groups per dimension

    def __post_init__(self):
        object.__setattr__(self, "num_groups", tuple(g // l for g, l in zip(self.global_size, self.local_size)))


@dataclass(frozen=True)
class LocalScratch:
    nbytes: int


class NullPointer:
    """A NULL pointer argument (``set_arg(i, None)`` for a ``__global``/``__constant`` parameter):
    an allocation of no bytes at address 0, so any access through it is out of bounds."""

    nbytes = 0
    address = 0
    guarded = False
    view = np.zeros(0, np.uint8)

    @staticmethod
    def guards_intact():
        return None


NULL = NullPointer()


class Allocation(Protocol):
    nbytes: int
    address: int           # of the first byte, as the kernel sees it
    view: np.ndarray       # uint8, exactly nbytes long, shares the memory


class Backend(Protocol):
    description: DeviceDescription
    cache_key: str

    def allocate(self, nbytes: int, host_array: np.ndarray | None = None) -> Allocation: ...

    def copy_in(self, alloc: Allocation, offset: int, data: np.ndarray) -> None: ...

    def copy_out(self, alloc: Allocation, offset: int, out: np.ndarray) -> None: ...

    def free(self, alloc: Allocation) -> None: ...

    def compile(self, source: str, filename: str, options: tuple): ...

    def load(self, module, object_code: bytes | None = None): ...

    def run(self, loaded, kernel_info, args: list, launch: Launch) -> None: ...
