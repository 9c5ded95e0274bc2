"""``Kernel``: a program's kernel with its arguments, and ``enqueue_nd_range_kernel``.

Arguments are checked against the front end's ``ParamInfo`` when they are
set, so a wrong argument fails at ``set_arg`` (or at the kernel call naming
the argument): a ``Buffer`` (or None) for ``__global``/``__constant``
pointers, a ``LocalMemory`` for ``__local`` pointers, and for by-value
parameters a numpy scalar of the parameter's size, or a Python number that
fits the parameter's type exactly (PyOpenCL needs ``set_scalar_arg_dtypes``
for those; here it is optional, and a value that would wrap or truncate is an
error either way).  The enqueue snapshots the arguments, validates the
NDRange (cached per shape) and queues ``backend.run`` on the queue's worker.
"""
from __future__ import annotations

import ast
import operator

import numpy as np

from . import memory
from .backend import NULL, Launch, LocalScratch
from .checks import check_queue
from .constants import (command_type, kernel_arg_address_qualifier, kernel_arg_info, kernel_info,
                        kernel_work_group_info)
from .errors import raise_error, status_code
from .events import CompletedEvent
from .memory import Buffer, LocalMemory
from .queue import CommandQueue
from .recording import Arg


def _param_dtype(p) -> np.dtype | None:
    """The numpy dtype of a by-value parameter (vectors: a sub-array dtype), None if unknown."""
    try:
        if p.dtype.startswith("["):
            dt = np.dtype(ast.literal_eval(p.dtype))
        else:
            dt = np.dtype(p.dtype)
    except (TypeError, ValueError, SyntaxError):
        return None
    if dt.itemsize and dt.itemsize != p.size and p.size % dt.itemsize == 0:
        dt = np.dtype((dt, (p.size // dt.itemsize,)))
    return dt


def _describe(value) -> str:
    if isinstance(value, (np.generic, np.ndarray)):
        return f"numpy.{value.dtype} ({value.dtype.itemsize if value.ndim == 0 else value.nbytes} bytes)"
    return type(value).__name__


class Kernel:
    """PyOpenCL's ``Kernel``: ``prg.name`` or ``Kernel(prg, name)``."""

    def __init__(self, program, name):
        from .program import Program
        if not isinstance(program, Program):
            raise_error("Kernel", status_code.INVALID_PROGRAM,
                        f"the program must be an mncl.Program, not {type(program).__name__}")
        module = program._module()
        info = module.kernels.get(name)
        if info is None:
            raise_error("Kernel", status_code.INVALID_KERNEL_NAME,
                        f"the program has no kernel named '{name}' (it has: "
                        f"{', '.join(module.kernels) or 'none'})")
        self.program = program
        self.context = program.context
        self.function_name = name
        self._info = info
        self._params = info.params
        n = len(info.params)
        self.num_args = n
        self._kinds = [p.kind for p in info.params]
        self._pdtypes = [_param_dtype(p) if p.kind == "scalar" else None for p in info.params]
        self._dev_args = [None] * n
        self._buffers = [None] * n       # the Buffer set for each pointer argument (for release checks)
        self._scalar_dtypes = [None] * n
        self._has_local = any(k == "local" for k in self._kinds) or info.local_mem_bytes > 0
        self._placeholders = False       # an mncl.Arg was set at some time (recordings)
        self._launches = {}

    # -- arguments ------------------------------------------------------------
    def _where(self, index) -> str:
        p = self._params[index]
        return f"argument {index} ('{p.name}', {p.kind} {p.type_name}) of kernel '{self.function_name}'"

    def set_arg(self, index, value):
        v = self._dev_args[index] = self._dev_value(index, value)
        self._buffers[index] = value if isinstance(value, Buffer) else None
        if type(v) is Arg:
            self._placeholders = True

    def _dev_value(self, index, value):
        """What the device gets for argument ``index`` (bytes, an allocation, a scratch size),
        checked against the parameter; an ``Arg`` placeholder is kept for a recording."""
        try:
            kind = self._kinds[index] if index >= 0 else None
        except (IndexError, TypeError):
            kind = None
        if kind is None:
            raise_error("Kernel.set_arg", status_code.INVALID_ARG_INDEX,
                        f"kernel '{self.function_name}' has {self.num_args} arguments; "
                        f"there is no argument {index!r}")
        if kind == "scalar":
            dt = self._pdtypes[index]
            if self._scalar_dtypes[index] is None and getattr(value, "dtype", None) == dt \
                    and isinstance(value, np.generic):
                return value.tobytes()
            if isinstance(value, Arg):
                return value
            return self._scalar_bytes(index, value)
        if isinstance(value, Arg):
            return value
        if kind == "local":
            if not isinstance(value, LocalMemory):
                raise_error("Kernel.set_arg", status_code.INVALID_ARG_VALUE,
                            f"{self._where(index)} is a __local pointer and needs an "
                            f"mncl.LocalMemory(nbytes), not {_describe(value)}")
            limit = self.program.context.devices[0].backend.description.local_mem_size
            if value.size > limit:
                raise_error("Kernel.set_arg", status_code.INVALID_ARG_SIZE,
                            f"{self._where(index)}: LocalMemory({value.size}) exceeds the device's "
                            f"local_mem_size ({limit} bytes)")
            return LocalScratch(value.size)
        if type(value) is Buffer or isinstance(value, Buffer):
            a = value._alloc
            if a is None or value.context is not self.context:
                raise_error("Kernel.set_arg", status_code.INVALID_MEM_OBJECT,
                            f"{self._where(index)}: the buffer "
                            + ("was released (Buffer.release())" if a is None else
                               "belongs to another context than the kernel's program"))
            return a
        if value is None:
            return NULL
        raise_error("Kernel.set_arg", status_code.INVALID_ARG_VALUE,
                    f"{self._where(index)} is a pointer and needs an mncl.Buffer, not {_describe(value)}"
                    + (" (a pyopencl Buffer cannot be passed to mncl)"
                       if type(value).__module__.startswith("pyopencl") else ""))

    def _scalar_bytes(self, index, value) -> bytes:
        p = self._params[index]
        declared = self._scalar_dtypes[index]
        dt = self._pdtypes[index]
        if dt is None:
            dt = declared
        if dt is None:   # a type the runtime cannot describe: accept raw bytes of the right size
            if isinstance(value, (np.generic, np.ndarray)) and value.nbytes == p.size:
                return value.tobytes()
            raise_error("Kernel.set_arg", status_code.INVALID_ARG_VALUE,
                        f"{self._where(index)} needs a numpy value of {p.size} bytes, got {_describe(value)}")
        if declared is not None and not isinstance(value, (np.generic, np.ndarray)):
            value = self._convert(index, value, declared)
        if isinstance(value, (np.generic, np.ndarray)):
            if value.nbytes != p.size:
                raise_error("Kernel.set_arg", status_code.INVALID_ARG_SIZE,
                            f"{self._where(index)} is {p.size} bytes; got {_describe(value)}")
            if value.dtype == dt or dt.subdtype is not None or dt.fields is not None:
                return np.ascontiguousarray(value).tobytes()
            return self._convert(index, value.item() if value.ndim == 0 else value, dt).tobytes()
        if isinstance(value, (list, tuple)) and dt.subdtype is not None:
            base, (count,) = dt.subdtype
            if len(value) not in (count, 3 if count == 4 else count):
                raise_error("Kernel.set_arg", status_code.INVALID_ARG_VALUE,
                            f"{self._where(index)} has {count} components; got {len(value)} values")
            comps = [self._convert(index, v, base) for v in value] + [base.type(0)] * (count - len(value))
            return np.array(comps, dtype=base).tobytes()
        return self._convert(index, value, dt).tobytes()

    def _convert(self, index, value, dt: np.dtype):
        """``value`` as a numpy scalar of ``dt``; an error if it would wrap, truncate or overflow."""
        if dt.subdtype is not None or dt.fields is not None:
            raise_error("Kernel.set_arg", status_code.INVALID_ARG_VALUE,
                        f"{self._where(index)} needs a numpy value of {dt.itemsize} bytes "
                        f"(e.g. a {dt} array), got {_describe(value)}")
        if isinstance(value, (bool, np.bool_)) or dt.kind == "b":
            if dt.kind == "b" and isinstance(value, (bool, np.bool_, int, np.integer)) and value in (0, 1):
                return np.bool_(value)
            if dt.kind in "iu":
                return dt.type(int(value))
        if dt.kind in "iu":
            if isinstance(value, (int, np.integer)):
                info = np.iinfo(dt)
                if not info.min <= int(value) <= info.max:
                    raise_error("Kernel.set_arg", status_code.INVALID_ARG_VALUE,
                                f"{self._where(index)}: {int(value)} does not fit in {dt} "
                                f"[{info.min}, {info.max}]")
                return dt.type(int(value))
            raise_error("Kernel.set_arg", status_code.INVALID_ARG_VALUE,
                        f"{self._where(index)} is an integer; got {_describe(value)} {value!r}")
        if dt.kind == "f":
            if isinstance(value, (int, float, np.integer, np.floating)):
                try:
                    with np.errstate(over="ignore"):
                        out = dt.type(value)
                except OverflowError:          # a Python int beyond any float
                    out = dt.type(np.inf)
                if np.isinf(out) and not (isinstance(value, float) and np.isinf(value)):
                    raise_error("Kernel.set_arg", status_code.INVALID_ARG_VALUE,
                                f"{self._where(index)}: {value!r} overflows {dt}")
                if isinstance(value, (int, np.integer)) and int(out) != int(value):
                    # an integer is exact or refused; a float value rounds to the parameter's precision
                    # as C and numpy round it (1.1 has no exact float either)
                    raise_error("Kernel.set_arg", status_code.INVALID_ARG_VALUE,
                                f"{self._where(index)}: the integer {int(value)} has no exact {dt} "
                                f"(it would round to {int(out)}); pass {dt}({int(value)}) or a float "
                                f"to accept the rounding")
                return out
            raise_error("Kernel.set_arg", status_code.INVALID_ARG_VALUE,
                        f"{self._where(index)} is a {dt}; got {_describe(value)} {value!r}")
        raise_error("Kernel.set_arg", status_code.INVALID_ARG_VALUE,
                    f"{self._where(index)}: cannot pass {_describe(value)} as {dt}")

    def set_args(self, *args):
        if len(args) != self.num_args:
            raise_error("Kernel.set_args", status_code.INVALID_KERNEL_ARGS,
                        f"kernel '{self.function_name}' takes {self.num_args} arguments, got {len(args)}")
        for i, a in enumerate(args):
            self.set_arg(i, a)

    def set_scalar_arg_dtypes(self, arg_dtypes):
        if not isinstance(arg_dtypes, (list, tuple)):
            raise_error("Kernel.set_scalar_arg_dtypes", status_code.INVALID_VALUE,
                        f"kernel '{self.function_name}': the dtypes must be a list (one per argument), "
                        f"not {type(arg_dtypes).__name__}")
        arg_dtypes = list(arg_dtypes)
        if len(arg_dtypes) != self.num_args:
            raise_error("Kernel.set_scalar_arg_dtypes", status_code.INVALID_KERNEL_ARGS,
                        f"kernel '{self.function_name}' takes {self.num_args} arguments; "
                        f"got {len(arg_dtypes)} dtypes")
        out = []
        for i, d in enumerate(arg_dtypes):
            if d is None:
                out.append(None)
                continue
            p = self._params[i]
            if p.kind != "scalar":
                raise_error("Kernel.set_scalar_arg_dtypes", status_code.INVALID_ARG_VALUE,
                            f"{self._where(i)} is not a by-value scalar; its dtype must be None")
            try:
                d = np.dtype(d)
            except (TypeError, ValueError) as e:
                raise_error("Kernel.set_scalar_arg_dtypes", status_code.INVALID_VALUE,
                            f"{self._where(i)}: {d!r:.40} is not a numpy dtype ({e})")
            if d.itemsize != p.size:
                raise_error("Kernel.set_scalar_arg_dtypes", status_code.INVALID_ARG_SIZE,
                            f"{self._where(i)} is {p.size} bytes; dtype {d} is {d.itemsize}")
            out.append(d)
        self._scalar_dtypes = out

    # -- call -----------------------------------------------------------------
    def __call__(self, queue, global_size, local_size, *args, wait_for=None, global_offset=None,
                 g_times_l=False, allow_empty_ndrange=False):
        if args:
            if len(args) != self.num_args:
                raise_error("Kernel.__call__", status_code.INVALID_KERNEL_ARGS,
                            f"kernel '{self.function_name}' takes {self.num_args} arguments, "
                            f"got {len(args)}")
            set_arg = self.set_arg
            for i, a in enumerate(args):
                set_arg(i, a)
        return enqueue_nd_range_kernel(queue, self, global_size, local_size, global_offset,
                                       wait_for, g_times_l=g_times_l,
                                       allow_empty_ndrange=allow_empty_ndrange)

    # -- information ----------------------------------------------------------
    def get_info(self, param):
        if param == kernel_info.FUNCTION_NAME:
            return self.function_name
        if param == kernel_info.NUM_ARGS:
            return self.num_args
        if param == kernel_info.PROGRAM:
            return self.program
        if param == kernel_info.CONTEXT:
            return self.context
        if param == kernel_info.ATTRIBUTES:
            r = self._info.reqd_work_group_size
            return f"reqd_work_group_size({r[0]},{r[1]},{r[2]})" if r else ""
        if param == kernel_info.REFERENCE_COUNT:
            return 1
        raise_error("Kernel.get_info", status_code.INVALID_VALUE, f"unknown kernel_info {param!r}")

    def get_work_group_info(self, param, device):
        if not any(device is d for d in self.context.devices):
            raise_error("Kernel.get_work_group_info", status_code.INVALID_DEVICE,
                        f"{device!r:.60} is not a device of the kernel's context")
        d = device.backend.description
        if param == kernel_work_group_info.WORK_GROUP_SIZE:
            r = self._info.reqd_work_group_size
            return int(np.prod(r)) if r else d.max_work_group_size
        if param == kernel_work_group_info.COMPILE_WORK_GROUP_SIZE:
            return list(self._info.reqd_work_group_size or (0, 0, 0))
        if param == kernel_work_group_info.LOCAL_MEM_SIZE:
            return self._info.local_mem_bytes
        if param == kernel_work_group_info.PREFERRED_WORK_GROUP_SIZE_MULTIPLE:
            return 8
        if param == kernel_work_group_info.PRIVATE_MEM_SIZE:
            return 0
        if param == kernel_work_group_info.GLOBAL_WORK_SIZE:
            raise_error("Kernel.get_work_group_info", status_code.INVALID_VALUE,
                        "kernel_work_group_info.GLOBAL_WORK_SIZE is for built-in kernels and custom devices; "
                        f"'{self.function_name}' is neither")
        raise_error("Kernel.get_work_group_info", status_code.INVALID_VALUE,
                    f"unknown kernel_work_group_info {param!r}")

    def get_arg_info(self, index, param):
        if not isinstance(index, (int, np.integer)) or not 0 <= index < self.num_args:
            raise_error("Kernel.get_arg_info", status_code.INVALID_ARG_INDEX,
                        f"kernel '{self.function_name}' has no argument {index!r:.40}")
        p = self._params[index]
        if param == kernel_arg_info.NAME:
            return p.name
        if param == kernel_arg_info.TYPE_NAME:
            return p.type_name + ("*" if p.kind in ("global", "constant", "local") else "")
        if param == kernel_arg_info.ADDRESS_QUALIFIER:
            return {"global": kernel_arg_address_qualifier.GLOBAL,
                    "constant": kernel_arg_address_qualifier.CONSTANT,
                    "local": kernel_arg_address_qualifier.LOCAL}.get(p.kind,
                                                                     kernel_arg_address_qualifier.PRIVATE)
        if param == kernel_arg_info.ACCESS_QUALIFIER:
            return 0x11A3   # CL_KERNEL_ARG_ACCESS_NONE
        if param == kernel_arg_info.TYPE_QUALIFIER:
            return 1 if p.is_const else 0
        raise_error("Kernel.get_arg_info", status_code.INVALID_VALUE, f"unknown kernel_arg_info {param!r}")

    def __repr__(self):
        return f"<mncl.Kernel '{self.function_name}'>"


# -- NDRange --------------------------------------------------------------------
def _ints(routine, what, seq, code):
    if isinstance(seq, (int, np.integer)):
        seq = (seq,)
    try:
        return tuple(operator.index(x) for x in seq)
    except TypeError:
        raise_error(routine, code, f"{what} must be a tuple of integers, got {seq!r}")


INDEX_MAX = (1 << 63) - 1      # the largest global id + 1: ids are 64-bit signed on both devices


def _largest_divisor(n: int, limit: int) -> int:
    for d in range(min(n, limit), 0, -1):
        if n % d == 0:
            return d
    return 1


def _make_launch(kernel, device, gsize, lsize, offset, g_times_l, allow_empty):
    routine = "enqueue_nd_range_kernel"
    d = device.backend.description
    info = kernel._info
    gs = _ints(routine, "the global size", gsize, status_code.INVALID_GLOBAL_WORK_SIZE)
    dim = len(gs)
    if not 1 <= dim <= 3:
        raise_error(routine, status_code.INVALID_WORK_DIMENSION,
                    f"the global size has {dim} dimensions; 1 to 3 are supported")
    ls = None
    if lsize is not None:
        ls = _ints(routine, "the local size", lsize, status_code.INVALID_WORK_GROUP_SIZE)
        if len(ls) != dim:
            raise_error(routine, status_code.INVALID_WORK_GROUP_SIZE,
                        f"the local size {ls} and the global size {gs} have different dimensions")
        if any(x <= 0 for x in ls):
            raise_error(routine, status_code.INVALID_WORK_GROUP_SIZE,
                        f"every local size must be > 0 (got {ls})")
        if g_times_l:
            gs = tuple(g * l for g, l in zip(gs, ls))
    if any(g < 0 for g in gs) or (not allow_empty and any(g == 0 for g in gs)):
        raise_error(routine, status_code.INVALID_GLOBAL_WORK_SIZE,
                    f"every global size must be > 0 (got {gs})")
    if any(g == 0 for g in gs):
        return None
    if int(np.prod(gs, dtype=object)) > INDEX_MAX:
        raise_error(routine, status_code.INVALID_GLOBAL_WORK_SIZE,
                    f"the global size {gs} has more than 2^63 - 1 work-items (global ids are 64-bit signed)")
    _check_global_ids(routine, d, gs, (0,) * dim)
    reqd = info.reqd_work_group_size
    if ls is None:
        if reqd:
            ls = tuple(reqd[:dim])
        else:
            total = int(np.prod(gs))
            budget = 256 if info.uses_barrier else 1024
            budget = max(1, min(budget, d.max_work_group_size, total // (8 * d.max_compute_units) or 1))
            ls = []
            for i, g in enumerate(gs):
                l = _largest_divisor(g, min(budget, d.max_work_item_sizes[i]))
                ls.append(l)
                budget = max(1, budget // l)
            ls = tuple(ls)
    for i, (g, l) in enumerate(zip(gs, ls)):
        if l > d.max_work_item_sizes[i]:
            raise_error(routine, status_code.INVALID_WORK_ITEM_SIZE,
                        f"local size {l} in dimension {i} exceeds the device's max_work_item_sizes "
                        f"{tuple(d.max_work_item_sizes)}")
    wg = int(np.prod(ls))
    if wg > d.max_work_group_size:
        raise_error(routine, status_code.INVALID_WORK_GROUP_SIZE,
                    f"the local size {ls} has {wg} work-items; the device's max_work_group_size is "
                    f"{d.max_work_group_size}")
    if reqd and tuple(ls) != tuple(reqd[:dim]):
        raise_error(routine, status_code.INVALID_WORK_GROUP_SIZE,
                    f"kernel '{kernel.function_name}' requires reqd_work_group_size{tuple(reqd)}; "
                    f"got local size {ls}")
    for i, (g, l) in enumerate(zip(gs, ls)):
        if g % l:
            raise_error(routine, status_code.INVALID_WORK_GROUP_SIZE,
                        f"the local size {l} does not divide the global size {g} in dimension {i} "
                        f"(global {gs}, local {ls}; non-uniform work-groups are not supported)")
    off = (0,) * dim
    if offset is not None:
        off = _ints(routine, "the global offset", offset, status_code.INVALID_GLOBAL_OFFSET)
        if len(off) != dim or any(o < 0 for o in off):
            raise_error(routine, status_code.INVALID_GLOBAL_OFFSET,
                        f"the global offset {off} must have {dim} non-negative entries")
        if any(o + g > INDEX_MAX for o, g in zip(off, gs)):
            raise_error(routine, status_code.INVALID_GLOBAL_OFFSET,
                        f"the global offset {off} plus the global size {gs} passes 2^63 - 1 "
                        f"(global ids are 64-bit signed)")
    _check_global_ids(routine, d, gs, off)
    pad = 3 - dim
    return Launch(dim, gs + (1,) * pad, tuple(ls) + (1,) * pad, off + (0,) * pad)


def _check_global_ids(routine, d, gs, off):
    """Global ids (offset included) within what the device numbers (the emulator's are 32-bit)."""
    limit = d.global_id_limit
    for i, (g, o) in enumerate(zip(gs, off)):
        if g + o > limit:
            raise_error(routine, status_code.INVALID_GLOBAL_OFFSET if o else status_code.INVALID_GLOBAL_WORK_SIZE,
                        f"global size {g}{f' + offset {o}' if o else ''} in dimension {i} exceeds {limit}, the "
                        f"most global ids the device '{d.name}' numbers")


def _remember_launch(kernel, lkey, launch):
    if len(kernel._launches) >= 256:       # a program sweeping over sizes: keep the cache small
        kernel._launches.clear()
    kernel._launches[lkey] = launch


def _hashable(x) -> bool:
    try:
        hash(x)
        return True
    except TypeError:
        return False


def enqueue_nd_range_kernel(queue, kernel, global_work_size, local_work_size, global_work_offset=None,
                            wait_for=None, g_times_l=False, allow_empty_ndrange=False):
    """Queue one NDRange of ``kernel`` (PyOpenCL's ``enqueue_nd_range_kernel``)."""
    if type(queue) is not CommandQueue:
        check_queue("enqueue_nd_range_kernel", queue)
    if not isinstance(kernel, Kernel):
        raise_error("enqueue_nd_range_kernel", status_code.INVALID_KERNEL,
                    f"the kernel must be an mncl.Kernel, not {type(kernel).__name__}")
    if kernel.context is not queue.context:
        raise_error("enqueue_nd_range_kernel", status_code.INVALID_CONTEXT,
                    f"kernel '{kernel.function_name}' belongs to another context than the queue")
    device = queue.device
    try:
        lkey = (global_work_size, local_work_size, global_work_offset, g_times_l, allow_empty_ndrange, device)
        launch = kernel._launches[lkey]
        if not all(x is None or all(type(v) is int for v in x)
                   for x in (global_work_size, local_work_size, global_work_offset)):
            raise KeyError              # (16.0,) equals (16,): sizes that are not ints are checked anew
    except TypeError:                   # lists: look up their tuples
        lkey = tuple(tuple(x) if isinstance(x, list) else x
                     for x in (global_work_size, local_work_size, global_work_offset)) \
            + (g_times_l, allow_empty_ndrange, device)
        launch = kernel._launches.get(lkey) if _hashable(lkey) else None
        if launch is None:
            launch = _make_launch(kernel, device, global_work_size, local_work_size, global_work_offset,
                                  g_times_l, allow_empty_ndrange)
            if _hashable(lkey):
                _remember_launch(kernel, lkey, launch)
    except KeyError:
        launch = _make_launch(kernel, device, global_work_size, local_work_size, global_work_offset,
                              g_times_l, allow_empty_ndrange)
        _remember_launch(kernel, lkey, launch)
    args = list(kernel._dev_args)
    if None in args:
        i = args.index(None)
        raise_error("enqueue_nd_range_kernel", status_code.INVALID_KERNEL_ARGS,
                    f"{kernel._where(i)} has not been set")
    if memory.released_any or len(queue.context.devices) > 1:
        _check_buffers(kernel, device)
    recorder = queue._recorder
    loaded = kernel.program._loaded.get(device)
    if loaded is None:
        raise_error("enqueue_nd_range_kernel", status_code.INVALID_PROGRAM_EXECUTABLE,
                    f"the program was not built for device '{device.name}'")
    if kernel._has_local:
        total = kernel._info.local_mem_bytes + sum(a.nbytes for a in args if isinstance(a, LocalScratch))
        if total > device.backend.description.local_mem_size:
            raise_error("enqueue_nd_range_kernel", status_code.OUT_OF_RESOURCES,
                        f"kernel '{kernel.function_name}' needs {total} bytes of __local memory; the "
                        f"device has {device.backend.description.local_mem_size}")
    if recorder is not None:
        recorder._add(kernel, loaded, args, launch, wait_for)
        return None
    if kernel._placeholders:
        i = next((i for i, a in enumerate(args) if type(a) is Arg), None)
        if i is not None:
            raise_error("enqueue_nd_range_kernel", status_code.INVALID_KERNEL_ARGS,
                        f"{kernel._where(i)} is the placeholder {args[i]!r}, which only a recording "
                        f"(queue.record()) can take")
    if launch is None:
        return CompletedEvent(queue, command_type.NDRANGE_KERNEL)
    run = device.backend.run
    info = kernel._info
    return queue._submit(lambda: run(loaded, info, args, launch), command_type.NDRANGE_KERNEL, wait_for)


def _check_buffers(kernel, device):
    """Every buffer argument still allocated and on the queue's device (INVALID_MEM_OBJECT)."""
    for i, b in enumerate(kernel._buffers):
        if b is None:
            continue
        if b._alloc is None:
            raise_error("enqueue_nd_range_kernel", status_code.INVALID_MEM_OBJECT,
                        f"{kernel._where(i)}: the buffer was released (Buffer.release()) after it was set")
        if b._device is not device:
            raise_error("enqueue_nd_range_kernel", status_code.INVALID_MEM_OBJECT,
                        f"{kernel._where(i)}: the buffer lives on device '{b._device.name}', the queue "
                        f"runs on '{device.name}' (mncl devices share no memory)")


def enqueue_task(queue, kernel, wait_for=None):
    """Run ``kernel`` as a single work-item (PyOpenCL's ``enqueue_task``)."""
    return enqueue_nd_range_kernel(queue, kernel, (1,), (1,), None, wait_for)
