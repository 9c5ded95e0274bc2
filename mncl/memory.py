"""Memory objects: ``Buffer`` (with PyOpenCL's ``mem_flags``), ``LocalMemory`` and ``MemoryMap``.

A ``Buffer`` is an allocation of the context's device (see mncl/backend.py).
The flags are checked the way OpenCL checks them: one of READ_WRITE /
READ_ONLY / WRITE_ONLY at most; COPY_HOST_PTR and USE_HOST_PTR need
``hostbuf`` and exclude each other; ``size`` defaults to ``hostbuf.nbytes``
and may not exceed it.  USE_HOST_PTR makes the buffer *be* the host array
(it must be C-contiguous and writable), as PoCL's CPU device does.
The access flags are recorded, not enforced on what kernels do.
"""
from __future__ import annotations

import warnings

import numpy as np

from .checks import as_int, check_context
from .constants import mem_flags, mem_info, mem_object_type
from .errors import make_error, raise_error, status_code

_ACCESS = mem_flags.READ_WRITE | mem_flags.READ_ONLY | mem_flags.WRITE_ONLY
released_any = False     # a Buffer was released: launches check their buffer arguments
_KNOWN = (_ACCESS | mem_flags.USE_HOST_PTR | mem_flags.ALLOC_HOST_PTR | mem_flags.COPY_HOST_PTR
          | mem_flags.HOST_WRITE_ONLY | mem_flags.HOST_READ_ONLY | mem_flags.HOST_NO_ACCESS)


def host_bytes(obj, routine: str, what: str, writable: bool = False) -> np.ndarray:
    """A flat uint8 view of a host object exposing the buffer protocol (no copy)."""
    try:
        arr = obj if isinstance(obj, np.ndarray) else np.asarray(memoryview(obj))
    except TypeError:
        raise make_error(routine, status_code.INVALID_VALUE,
                    f"{what} must be a numpy array or another object with the buffer protocol, "
                    f"not {type(obj).__name__}") from None
    if arr.dtype.hasobject:
        raise_error(routine, status_code.INVALID_VALUE,
                    f"{what} holds Python objects (dtype {arr.dtype}); only plain numeric data can be "
                    f"copied to or from a device")
    if not arr.flags.c_contiguous:
        raise_error(routine, status_code.INVALID_VALUE,
                    f"{what} must be C-contiguous (got an array with strides {arr.strides}); "
                    f"use numpy.ascontiguousarray")
    if writable and not arr.flags.writeable:
        raise_error(routine, status_code.INVALID_VALUE, f"{what} is read-only but must be written")
    return arr.reshape(-1).view(np.uint8) if arr.size else np.zeros(0, np.uint8)


class Buffer:
    """Device memory of ``size`` bytes (PyOpenCL's ``Buffer``)."""

    def __init__(self, context, flags, size=0, hostbuf=None):
        check_context("Buffer", context)
        flags = as_int("Buffer", "flags (mem_flags bits)", flags)
        size = as_int("Buffer", "size (bytes)", size, status_code.INVALID_BUFFER_SIZE)
        if flags & ~_KNOWN:
            raise_error("Buffer", status_code.INVALID_VALUE, f"unknown mem_flags bits 0x{flags & ~_KNOWN:x}")
        if bin(flags & _ACCESS).count("1") > 1:
            raise_error("Buffer", status_code.INVALID_VALUE,
                        "at most one of mem_flags.READ_WRITE, READ_ONLY and WRITE_ONLY may be given")
        use = bool(flags & mem_flags.USE_HOST_PTR)
        copy = bool(flags & mem_flags.COPY_HOST_PTR)
        if use and (copy or flags & mem_flags.ALLOC_HOST_PTR):
            raise_error("Buffer", status_code.INVALID_VALUE,
                        "mem_flags.USE_HOST_PTR excludes COPY_HOST_PTR and ALLOC_HOST_PTR")
        if (use or copy) and hostbuf is None:
            raise_error("Buffer", status_code.INVALID_HOST_PTR,
                        "mem_flags.COPY_HOST_PTR / USE_HOST_PTR need a hostbuf")
        host = None
        if hostbuf is not None:
            if not (use or copy):
                warnings.warn("'hostbuf' was passed, but no memory flags to make use of it "
                              "(COPY_HOST_PTR or USE_HOST_PTR); it is ignored", stacklevel=2)
            else:
                host = host_bytes(hostbuf, "Buffer", "hostbuf", writable=use)
                if not size:
                    size = host.nbytes
                elif size > host.nbytes:
                    raise_error("Buffer", status_code.INVALID_BUFFER_SIZE,
                                f"size {size} is larger than the hostbuf ({host.nbytes} bytes)")
        device = context.devices[0]
        if size <= 0:
            raise_error("Buffer", status_code.INVALID_BUFFER_SIZE,
                        f"a buffer needs a size > 0 bytes (got {size})")
        limit = device.backend.description.max_mem_alloc_size
        if size > limit:
            raise_error("Buffer", status_code.INVALID_BUFFER_SIZE,
                        f"size {size} exceeds the device's max_mem_alloc_size ({limit} bytes)")
        try:
            if use:
                self._alloc = device.backend.allocate(size, host_array=host[:size])
            else:
                self._alloc = device.backend.allocate(size)
        except (MemoryError, ValueError) as e:
            raise_error("Buffer", status_code.MEM_OBJECT_ALLOCATION_FAILURE,
                        f"could not allocate {size} bytes: {e}")
        if copy:
            device.backend.copy_in(self._alloc, 0, host[:size])
        self.context = context
        self._device = device
        self.flags = flags
        self.size = size
        self.hostbuf = hostbuf if use else None
        self.offset = 0

    def _live(self, routine):
        """The allocation; INVALID_MEM_OBJECT once the buffer was released."""
        if self._alloc is None:
            raise_error(routine, status_code.INVALID_MEM_OBJECT, "the buffer was released (Buffer.release())")
        return self._alloc

    @property
    def int_ptr(self) -> int:
        return self._live("Buffer.int_ptr").address

    @property
    def nbytes(self) -> int:
        return self.size

    def get_info(self, param):
        self._live("Buffer.get_info")
        table = {mem_info.SIZE: self.size, mem_info.FLAGS: self.flags, mem_info.CONTEXT: self.context,
                 mem_info.HOST_PTR: self.hostbuf, mem_info.OFFSET: 0, mem_info.MAP_COUNT: 0,
                 mem_info.REFERENCE_COUNT: 1, mem_info.TYPE: mem_object_type.BUFFER,
                 mem_info.ASSOCIATED_MEMOBJECT: None}
        if not isinstance(param, int) or param not in table:
            raise_error("Buffer.get_info", status_code.INVALID_VALUE, f"unknown mem_info {param!r}")
        return table[param]

    def release(self):
        """Drop the device memory now (the device's ``free``: the emulator device's DRAM goes back
        to its heap): any later use of the buffer is INVALID_MEM_OBJECT.  Commands already
        enqueued or recorded still run correctly (mncl/backend.py)."""
        global released_any
        if self._alloc is not None:
            self._device.backend.free(self._alloc)
            self._alloc = None
            self.hostbuf = None
            released_any = True

    def __repr__(self):
        return f"<mncl.Buffer {self.size} bytes{'' if self._alloc is not None else ', released'}>"


class LocalMemory:
    """A ``__local`` pointer argument of ``size`` bytes (per work-group scratch)."""

    __slots__ = ("size",)

    def __init__(self, size):
        size = as_int("LocalMemory", "size (bytes)", size, status_code.INVALID_ARG_SIZE)
        if size <= 0:
            raise_error("LocalMemory", status_code.INVALID_ARG_SIZE,
                        f"local memory size must be > 0 bytes (got {size})")
        self.size = size

    @property
    def nbytes(self):
        return self.size

    def __repr__(self):
        return f"<mncl.LocalMemory {self.size} bytes>"


class MemoryMap:
    """The host view of a mapped buffer region; ``release()`` unmaps it (PyOpenCL's ``MemoryMap``)."""

    def __init__(self, queue, buffer, view: np.ndarray, shape, dtype, strides):
        self._queue = queue
        self._buffer = buffer
        self._released = False
        self.__array_interface__ = {
            "shape": tuple(shape), "typestr": np.dtype(dtype).str, "descr": np.dtype(dtype).descr,
            "data": (view.ctypes.data, False), "strides": strides, "version": 3,
        }
        self._view = view

    def release(self, queue=None, wait_for=None):
        from .checks import check_queue
        from .constants import command_type
        q = self._queue if queue is None else queue
        check_queue("MemoryMap.release", q)
        self._released = True
        return q._submit(lambda: None, command_type.UNMAP_MEM_OBJECT, wait_for)
