"""Data movement commands: ``enqueue_copy``, ``enqueue_fill_buffer``, ``enqueue_map_buffer`` and friends.

Each function checks sizes and offsets on the caller's thread, then queues
the copy (numpy slice assignment on the buffers' uint8 views) on the queue's
worker.  ``is_blocking=True`` (the default, as in PyOpenCL) waits for it.
A non-blocking copy from or to a host array keeps a reference to the array
and touches it only when the command runs.
"""
from __future__ import annotations

import numpy as np

from .constants import command_type, map_flags
from .errors import raise_error, status_code
from .events import Event
from .memory import Buffer, MemoryMap, host_bytes


def _enqueue(queue, work, command_type, wait_for, is_blocking) -> Event:
    if is_blocking:
        return queue._run_blocking(work, command_type, wait_for)
    return queue._submit(work, command_type, wait_for)


def _check_range(routine, what, offset, count, size):
    if offset < 0 or count < 0 or offset + count > size:
        raise_error(routine, status_code.INVALID_VALUE,
                    f"{what}: {count} bytes at offset {offset} do not fit in a buffer of {size} bytes")


def enqueue_copy(queue, dest, src, *, is_blocking=True, wait_for=None, byte_count=None,
                 src_offset=None, dst_offset=None, device_offset=0, **unsupported):
    """Copy host->buffer, buffer->host or buffer->buffer (PyOpenCL's ``enqueue_copy``)."""
    routine = "enqueue_copy"
    if unsupported:
        raise_error(routine, status_code.INVALID_VALUE,
                    f"unsupported keyword arguments {sorted(unsupported)} (images and rectangular "
                    f"copies are not supported)")
    if isinstance(dest, Buffer) and isinstance(src, Buffer):
        so = int(src_offset or 0)
        do = int(dst_offset or 0)
        n = int(byte_count) if byte_count is not None else min(src.size - so, dest.size - do)
        _check_range(routine, "source", so, n, src.size)
        _check_range(routine, "destination", do, n, dest.size)
        if src is dest and so < do + n and do < so + n:
            raise_error(routine, status_code.MEM_COPY_OVERLAP,
                        f"source [{so}, {so + n}) and destination [{do}, {do + n}) overlap in the same buffer")
        s, d = src._alloc.view, dest._alloc.view

        def work():
            d[do:do + n] = s[so:so + n]
        return _enqueue(queue, work, command_type.COPY_BUFFER, wait_for, is_blocking)

    if isinstance(dest, Buffer):          # host -> buffer
        off = int(dst_offset if dst_offset is not None else device_offset)
        h = host_bytes(src, routine, "the source host array")
        n = h.nbytes if byte_count is None else int(byte_count)
        if n > h.nbytes:
            raise_error(routine, status_code.INVALID_VALUE,
                        f"byte_count {n} exceeds the source host array ({h.nbytes} bytes)")
        _check_range(routine, f"copy of the host array into the buffer", off, n, dest.size)
        d = dest._alloc.view

        def work():
            d[off:off + n] = h[:n]
        return _enqueue(queue, work, command_type.WRITE_BUFFER, wait_for, is_blocking)

    if isinstance(src, Buffer):           # buffer -> host
        off = int(src_offset if src_offset is not None else device_offset)
        h = host_bytes(dest, routine, "the destination host array", writable=True)
        n = h.nbytes if byte_count is None else int(byte_count)
        if n > h.nbytes:
            raise_error(routine, status_code.INVALID_VALUE,
                        f"byte_count {n} exceeds the destination host array ({h.nbytes} bytes)")
        _check_range(routine, f"copy of the buffer into the host array", off, n, src.size)
        s = src._alloc.view

        def work():
            h[:n] = s[off:off + n]
        return _enqueue(queue, work, command_type.READ_BUFFER, wait_for, is_blocking)

    raise_error(routine, status_code.INVALID_VALUE,
                f"one of dest and src must be an mncl.Buffer (got {type(dest).__name__} and "
                f"{type(src).__name__})")


def enqueue_read_buffer(queue, mem, hostbuf, device_offset=0, wait_for=None, is_blocking=True):
    return enqueue_copy(queue, hostbuf, mem, device_offset=device_offset, wait_for=wait_for,
                        is_blocking=is_blocking)


def enqueue_write_buffer(queue, mem, hostbuf, device_offset=0, wait_for=None, is_blocking=True):
    return enqueue_copy(queue, mem, hostbuf, device_offset=device_offset, wait_for=wait_for,
                        is_blocking=is_blocking)


def enqueue_copy_buffer(queue, src, dst, byte_count=-1, src_offset=0, dst_offset=0, wait_for=None):
    return enqueue_copy(queue, dst, src, byte_count=None if byte_count < 0 else byte_count,
                        src_offset=src_offset, dst_offset=dst_offset, wait_for=wait_for,
                        is_blocking=False)


def enqueue_fill_buffer(queue, mem, pattern, offset, size, wait_for=None):
    """Fill ``size`` bytes at ``offset`` with repetitions of ``pattern`` (a numpy scalar or array)."""
    routine = "enqueue_fill_buffer"
    p = host_bytes(np.asarray(pattern), routine, "pattern").copy()
    offset, size = int(offset), int(size)
    if p.nbytes == 0 or p.nbytes & (p.nbytes - 1) or p.nbytes > 128:
        raise_error(routine, status_code.INVALID_VALUE,
                    f"the pattern must be 1, 2, 4, ..., 128 bytes long (got {p.nbytes})")
    if offset % p.nbytes or size % p.nbytes:
        raise_error(routine, status_code.INVALID_VALUE,
                    f"offset {offset} and size {size} must be multiples of the pattern size {p.nbytes}")
    _check_range(routine, "fill", offset, size, mem.size)
    d = mem._alloc.view

    def work():
        d[offset:offset + size].reshape(-1, p.nbytes)[:] = p      # broadcast: no temporary
    return queue._submit(work, command_type.FILL_BUFFER, wait_for)


def enqueue_map_buffer(queue, buf, flags, offset, shape, dtype, order="C", strides=None,
                       wait_for=None, is_blocking=True):
    """Map a buffer region into host memory: returns ``(array, event)``; ``array.base.release()`` unmaps.

    On the CPU device the array is the buffer's memory itself (no copy).
    """
    routine = "enqueue_map_buffer"
    dtype = np.dtype(dtype)
    shape = (int(shape),) if np.isscalar(shape) else tuple(int(s) for s in shape)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    offset = int(offset)
    _check_range(routine, "map", offset, nbytes, buf.size)
    if int(flags) & ~(map_flags.READ | map_flags.WRITE | map_flags.WRITE_INVALIDATE_REGION):
        raise_error(routine, status_code.INVALID_VALUE, f"unknown map_flags 0x{int(flags):x}")
    if strides is None and order in ("F", "f") and len(shape) > 1:
        strides = tuple(int(np.prod(shape[:i], dtype=np.int64)) * dtype.itemsize for i in range(len(shape)))
    view = buf._alloc.view[offset:offset + nbytes]
    mm = MemoryMap(queue, buf, view, shape, dtype, strides)
    ev = _enqueue(queue, lambda: None, command_type.MAP_BUFFER, wait_for, is_blocking)
    return np.asarray(mm), ev


def enqueue_marker(queue, wait_for=None):
    return queue._submit(lambda: None, command_type.MARKER, wait_for)


def enqueue_barrier(queue, wait_for=None):
    return queue._submit(lambda: None, command_type.BARRIER, wait_for)
