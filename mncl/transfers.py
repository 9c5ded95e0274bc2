"""Data movement commands: ``enqueue_copy``, ``enqueue_fill_buffer``, ``enqueue_map_buffer`` and friends.

Each function checks sizes and offsets on the caller's thread, then queues
the copy (the device's copy_in / copy_out, mncl/backend.py; a fill or a map
works on the buffer's uint8 view) on the queue's worker.  ``is_blocking=True`` (the default, as in PyOpenCL) waits for it.
A non-blocking copy from or to a host array keeps a reference to the array
and touches it only when the command runs.
"""
from __future__ import annotations

import numpy as np

from .checks import as_int, buffer_alloc, check_queue
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
    check_queue(routine, queue)
    if unsupported:
        raise_error(routine, status_code.INVALID_VALUE,
                    f"unsupported keyword arguments {sorted(unsupported)} (images and rectangular "
                    f"copies are not supported)")
    backend = queue.device.backend
    if isinstance(dest, Buffer) and isinstance(src, Buffer):
        s = buffer_alloc(routine, "the source buffer", src, queue)
        d = buffer_alloc(routine, "the destination buffer", dest, queue)
        so = as_int(routine, "src_offset", src_offset or 0)
        do = as_int(routine, "dst_offset", dst_offset or 0)
        n = as_int(routine, "byte_count", byte_count) if byte_count is not None \
            else min(src.size - so, dest.size - do)
        _check_range(routine, "source", so, n, src.size)
        _check_range(routine, "destination", do, n, dest.size)
        if src is dest and so < do + n and do < so + n:
            raise_error(routine, status_code.MEM_COPY_OVERLAP,
                        f"source [{so}, {so + n}) and destination [{do}, {do + n}) overlap in the same buffer")

        def work():
            backend.copy_out(s, so, d.view[do:do + n])      # (a buffer's host side is its view)
        return _enqueue(queue, work, command_type.COPY_BUFFER, wait_for, is_blocking)

    if isinstance(dest, Buffer):          # host -> buffer
        d = buffer_alloc(routine, "the destination buffer", dest, queue)
        off = as_int(routine, "dst_offset" if dst_offset is not None else "device_offset",
                     dst_offset if dst_offset is not None else device_offset)
        h = host_bytes(src, routine, "the source host array")
        n = h.nbytes if byte_count is None else as_int(routine, "byte_count", byte_count)
        if n > h.nbytes:
            raise_error(routine, status_code.INVALID_VALUE,
                        f"byte_count {n} exceeds the source host array ({h.nbytes} bytes)")
        _check_range(routine, "copy of the host array into the buffer", off, n, dest.size)

        def work():
            backend.copy_in(d, off, h[:n])
        return _enqueue(queue, work, command_type.WRITE_BUFFER, wait_for, is_blocking)

    if isinstance(src, Buffer):           # buffer -> host
        s = buffer_alloc(routine, "the source buffer", src, queue)
        off = as_int(routine, "src_offset" if src_offset is not None else "device_offset",
                     src_offset if src_offset is not None else device_offset)
        h = host_bytes(dest, routine, "the destination host array", writable=True)
        n = h.nbytes if byte_count is None else as_int(routine, "byte_count", byte_count)
        if n > h.nbytes:
            raise_error(routine, status_code.INVALID_VALUE,
                        f"byte_count {n} exceeds the destination host array ({h.nbytes} bytes)")
        _check_range(routine, "copy of the buffer into the host array", off, n, src.size)

        def work():
            backend.copy_out(s, off, h[:n])
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
    byte_count = as_int("enqueue_copy_buffer", "byte_count", byte_count)
    return enqueue_copy(queue, dst, src, byte_count=None if byte_count < 0 else byte_count,
                        src_offset=src_offset, dst_offset=dst_offset, wait_for=wait_for,
                        is_blocking=False)


def enqueue_fill_buffer(queue, mem, pattern, offset, size, wait_for=None):
    """Fill ``size`` bytes at ``offset`` with repetitions of ``pattern`` (a numpy scalar or array)."""
    routine = "enqueue_fill_buffer"
    check_queue(routine, queue)
    d = buffer_alloc(routine, "the buffer", mem, queue).view
    p = host_bytes(np.asarray(pattern), routine, "pattern").copy()
    offset, size = as_int(routine, "offset", offset), as_int(routine, "size", size)
    if p.nbytes == 0 or p.nbytes & (p.nbytes - 1) or p.nbytes > 128:
        raise_error(routine, status_code.INVALID_VALUE,
                    f"the pattern must be 1, 2, 4, ..., 128 bytes long (got {p.nbytes})")
    if offset % p.nbytes or size % p.nbytes:
        raise_error(routine, status_code.INVALID_VALUE,
                    f"offset {offset} and size {size} must be multiples of the pattern size {p.nbytes}")
    _check_range(routine, "fill", offset, size, mem.size)

    def work():
        d[offset:offset + size].reshape(-1, p.nbytes)[:] = p      # broadcast: no temporary
    return queue._submit(work, command_type.FILL_BUFFER, wait_for)


def enqueue_map_buffer(queue, buf, flags, offset, shape, dtype, order="C", strides=None,
                       wait_for=None, is_blocking=True):
    """Map a buffer region into host memory: returns ``(array, event)``; ``array.base.release()`` unmaps.

    On the CPU device the array is the buffer's memory itself (no copy).
    """
    routine = "enqueue_map_buffer"
    check_queue(routine, queue)
    alloc = buffer_alloc(routine, "the buffer", buf, queue)
    flags = as_int(routine, "flags (map_flags bits)", flags)
    if flags & ~(map_flags.READ | map_flags.WRITE | map_flags.WRITE_INVALIDATE_REGION):
        raise_error(routine, status_code.INVALID_VALUE, f"unknown map_flags 0x{flags:x}")
    offset = as_int(routine, "offset", offset)
    dtype, shape, strides = _map_layout(routine, shape, dtype, order, strides)
    extent = _extent(shape, strides, dtype.itemsize)
    _check_range(routine, f"the mapped array (shape {shape}, strides {strides})", offset, extent, buf.size)
    view = alloc.view[offset:offset + extent]
    mm = MemoryMap(queue, buf, view, shape, dtype, strides)
    ev = _enqueue(queue, lambda: None, command_type.MAP_BUFFER, wait_for, is_blocking)
    return np.asarray(mm), ev


def _map_layout(routine, shape, dtype, order, strides):
    """The dtype, shape and byte strides of a mapped array, each checked (a mapped array is a
    view of raw device memory: a stride or dtype numpy cannot check would crash the process)."""
    try:
        dtype = np.dtype(dtype)
    except (TypeError, ValueError) as e:
        raise_error(routine, status_code.INVALID_VALUE, f"dtype {dtype!r:.60} is not a numpy dtype: {e}")
    if dtype.hasobject or dtype.itemsize == 0:
        raise_error(routine, status_code.INVALID_VALUE,
                    f"dtype {dtype} cannot view device memory (Python objects or zero-sized items)")
    if isinstance(shape, (list, tuple)):
        shape = tuple(as_int(routine, "every entry of shape", s) for s in shape)
    else:
        shape = (as_int(routine, "shape", shape),)
    if any(s < 0 for s in shape):
        raise_error(routine, status_code.INVALID_VALUE, f"shape {shape} has a negative extent")
    if order not in ("C", "c", "F", "f"):
        raise_error(routine, status_code.INVALID_VALUE, f"order must be 'C' or 'F', not {order!r:.20}")
    if strides is None:
        dims = range(len(shape)) if order in ("F", "f") else range(len(shape) - 1, -1, -1)
        step, out = dtype.itemsize, [0] * len(shape)
        for i in dims:
            out[i], step = step, step * shape[i]
        return dtype, shape, tuple(out)
    strides = tuple(as_int(routine, "every entry of strides", s) for s in
                    (strides if isinstance(strides, (list, tuple)) else (strides,)))
    if len(strides) != len(shape) or any(s < 0 for s in strides):
        raise_error(routine, status_code.INVALID_VALUE,
                    f"strides {strides} must be {len(shape)} non-negative byte counts, one per entry "
                    f"of shape {shape}")
    return dtype, shape, strides


def _extent(shape, strides, itemsize) -> int:
    """The bytes a strided array spans from its first element (0 if it has none)."""
    if any(s == 0 for s in shape):
        return 0
    return sum((n - 1) * st for n, st in zip(shape, strides)) + itemsize


def enqueue_marker(queue, wait_for=None):
    check_queue("enqueue_marker", queue)
    return queue._submit(lambda: None, command_type.MARKER, wait_for)


def enqueue_barrier(queue, wait_for=None):
    check_queue("enqueue_barrier", queue)
    return queue._submit(lambda: None, command_type.BARRIER, wait_for)
