"""The CPU device: runs the front end's optimised LLVM IR natively through llvmlite's MCJIT.

Takes a ``CompiledModule`` (work-group ABI, see translator/module.py), JIT
compiles it for the host CPU, and runs an NDRange by calling ``K__wg`` once
per work-group.  The loop over work-groups is itself a small JIT-compiled
function (``mncl_dispatch``), so one ctypes call (which releases the GIL)
runs a whole chunk of groups; chunks go to a thread pool with one thread per
core (NDRanges under SPLIT_ITEMS work-items stay on the calling thread until
one of their runs takes longer than SLOW_SINGLE_S).  ``__local`` pointer arguments get one zeroed scratch area per thread,
zeroed again before every group.

Memory: every buffer is a numpy allocation with a 1024-byte guard zone on each
side filled with a canary pattern, the data 128-byte aligned.  After each
kernel the guards of every buffer argument are compared with the pattern; an
overwritten guard raises ``mncl.MemoryError`` (OUT_OF_RESOURCES, what GPUs
report for a bad address) naming the
kernel and the buffer, and the guard is restored.  What is not caught: reads
out of bounds, writes that skip over the guard into other mapped memory (those
may corrupt the process), writes of the canary's own bytes.
USE_HOST_PTR buffers are the caller's array itself and have no guards.

Faults: indices into private and ``__local`` arrays are checked by the kernel
code itself (translator/lower.py ``checked_index``), and every dispatcher call
runs under the fault guard of mncl/cpu_faults.py, so a kernel that faults
(SIGSEGV, SIGBUS, SIGFPE, SIGILL) fails its launch instead of killing the
process.  docs/runtime.md, "A kernel cannot take the process down", says why
this design and not a subprocess worker.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import hashlib
import itertools
import os
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from translator import llvm_lock

from . import cpu_faults
from .backend import DeviceDescription, LocalScratch
from .constants import device_type
from .errors import raise_error, status_code

GUARD = 1024
STACK_MARGIN = 2 << 20    # of a thread's stack, kept for everything but a work-group's private storage
SPLIT_ITEMS = 4096        # NDRanges with fewer work-items run on one thread ...
SLOW_SINGLE_S = 0.5e-3    # ... unless one run took longer than this; then they are split too
_clock = time.perf_counter
ALIGN = 128
_CANARY_UNIT = bytes([0xDE, 0xAD, 0xBE, 0xEF, 0x5A, 0xA5, 0xC3, 0x3C])
CANARY = _CANARY_UNIT * (GUARD // len(_CANARY_UNIT))

_DISPATCH_TEMPLATE = r"""
declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)
declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)

; rec: {fn, args, wg template, first group, end group, n local args, local ptrs, local sizes,
;       status: signal, fault address, out-of-bounds message, out-of-bounds index}
define i64 @mncl_dispatch(ptr %rec) {   ; nonzero: a status word is set
entry:
{guard_entry}
  br label %body
body:
  %fn = load ptr, ptr %rec
  %r1 = getelementptr ptr, ptr %rec, i64 1
  %args = load ptr, ptr %r1
  %r2 = getelementptr ptr, ptr %rec, i64 2
  %tmpl = load ptr, ptr %r2
  %r3 = getelementptr i64, ptr %rec, i64 3
  %start = load i64, ptr %r3
  %r4 = getelementptr i64, ptr %rec, i64 4
  %end = load i64, ptr %r4
  %r5 = getelementptr i64, ptr %rec, i64 5
  %nlocal = load i64, ptr %r5
  %r6 = getelementptr ptr, ptr %rec, i64 6
  %lptrs = load ptr, ptr %r6
  %r7 = getelementptr ptr, ptr %rec, i64 7
  %lsizes = load ptr, ptr %r7
  %wg = alloca [17 x i64], align 8
  call void @llvm.memcpy.p0.p0.i64(ptr %wg, ptr %tmpl, i64 128, i1 false)
  %oob = getelementptr i64, ptr %rec, i64 10
  %oobi = ptrtoint ptr %oob to i64
  %g16 = getelementptr i64, ptr %wg, i64 16
  store i64 %oobi, ptr %g16
  %ng0p = getelementptr i64, ptr %tmpl, i64 13
  %ng0 = load i64, ptr %ng0p
  %ng1p = getelementptr i64, ptr %tmpl, i64 14
  %ng1 = load i64, ptr %ng1p
  %g7 = getelementptr i64, ptr %wg, i64 7
  %g8 = getelementptr i64, ptr %wg, i64 8
  %g9 = getelementptr i64, ptr %wg, i64 9
  %empty = icmp sge i64 %start, %end
  br i1 %empty, label %done, label %loop
loop:
  %g = phi i64 [ %start, %body ], [ %gnext, %call ]
  %x = urem i64 %g, %ng0
  %q = udiv i64 %g, %ng0
  %y = urem i64 %q, %ng1
  %z = udiv i64 %q, %ng1
  store i64 %x, ptr %g7
  store i64 %y, ptr %g8
  store i64 %z, ptr %g9
  br label %zcond
zcond:
  %i = phi i64 [ 0, %loop ], [ %inext, %zbody ]
  %more = icmp slt i64 %i, %nlocal
  br i1 %more, label %zbody, label %call
zbody:
  %pp = getelementptr ptr, ptr %lptrs, i64 %i
  %p = load ptr, ptr %pp
  %sp = getelementptr i64, ptr %lsizes, i64 %i
  %s = load i64, ptr %sp
  call void @llvm.memset.p0.i64(ptr %p, i8 0, i64 %s, i1 false)
  %inext = add i64 %i, 1
  br label %zcond
call:
  call void %fn(ptr %args, ptr %wg)
  %gnext = add i64 %g, 1
  %fin = icmp sge i64 %gnext, %end
  br i1 %fin, label %done, label %loop
done:
{guard_exit}
  %oobw = load i64, ptr %oob
  ret i64 %oobw
}
"""

if cpu_faults.ENABLED:       # with the fault guard around the loop (mncl/cpu_faults.py)
    _DISPATCH_IR = cpu_faults.FAULT_IR + _DISPATCH_TEMPLATE.replace(
        "{guard_entry}", cpu_faults.GUARD_ENTRY).replace("{guard_exit}", cpu_faults.GUARD_EXIT)
else:
    _DISPATCH_IR = cpu_faults.OOB_ABORT_UNGUARDED + _DISPATCH_TEMPLATE.replace(
        "{guard_entry}", "").replace("{guard_exit}", "")
_DISPATCH_TYPE = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p)   # one pointer: ctypes converts one argument
_Record = ctypes.c_int64 * 12
FAULT_SIGNAL, FAULT_ADDRESS, OOB_MESSAGE, OOB_INDEX = 8, 9, 10, 11    # status words of a _Record

_thread_state = cpu_faults.thread_state
_llvm_lock = llvm_lock          # shared with the front end: LLVM's global context is not thread-safe
_llvm_state = {}


def _llvm():
    """llvmlite.binding, initialised once, and the host target machine."""
    with _llvm_lock:
        if not _llvm_state:
            import llvmlite.binding as llvm
            llvm.initialize_native_target()
            llvm.initialize_native_asmprinter()
            libm = ctypes.util.find_library("m")     # math builtins may lower to libm calls
            if libm:
                llvm.load_library_permanently(libm)
            _llvm_state.update(llvm=llvm, triple=llvm.get_process_triple(),
                               target=llvm.Target.from_default_triple(),
                               cpu=llvm.get_host_cpu_name(),
                               features=llvm.get_host_cpu_features().flatten())
        return _llvm_state


# What IR from outside this process (a cache entry, a program binary) may call: LLVM intrinsics, the
# C math library (the front end lowers some builtins to libm, which _llvm() loads) and the runtime's
# own mncl_oob_abort (the bounds checks' exit, cpu_faults.py).  A defence in depth
# only: the cache's integrity check (mncl/cache.py) is what keeps planted IR out.
_LIBM = frozenset(n + s for n in (
    "acos asin atan atan2 cos sin tan acosh asinh atanh cosh sinh tanh exp exp2 exp10 expm1 frexp "
    "ilogb ldexp log log10 log1p log2 logb modf scalbn scalbln cbrt fabs hypot pow sqrt erf erfc lgamma "
    "tgamma ceil floor nearbyint rint lrint llrint round lround llround trunc fmod remainder remquo "
    "copysign nan nextafter nexttoward fdim fmax fmin fma sincos").split() for s in ("", "f")) | {
    "lgamma_r", "lgammaf_r", "mncl_oob_abort"}
_INLINE_ASM = re.compile(r'(?:^|[\s(,=])asm\s+(?:sideeffect\s+|alignstack\s+|inteldialect\s+|unwind\s+)*"'
                         r'|^\s*module\s+asm\b', re.M)


def check_external_calls(mod, ir_text: str):
    """ValueError naming the first function the module declares outside the runtime's set (LLVM
    intrinsics, the C math library), an external variable, or its inline assembly."""
    for f in mod.functions:
        name = f.name
        if f.is_declaration and not ((name.startswith("llvm.") and not name.startswith("llvm.experimental."))
                                     or name in _LIBM):
            raise ValueError(f"the module declares the external function '{name}', which kernels may "
                             f"not call (only LLVM intrinsics, the C math library and the runtime's mncl_oob_abort)")
    for g in mod.global_variables:
        if g.is_declaration:
            raise ValueError(f"the module refers to the external variable '{g.name}', which kernels may not use")
    if "asm" in ir_text and _INLINE_ASM.search(ir_text):     # the substring test first: 100x faster
        raise ValueError("the module holds inline assembly, which kernels may not contain")


def _target_machine(st):
    """A new host target machine: an MCJIT engine takes ownership of (and frees) the one it gets."""
    return st["target"].create_target_machine(cpu=st["cpu"], features=st["features"], opt=3,
                                              codemodel="jitdefault")


class HostAllocation:
    """A buffer in host memory, with canary guard zones unless it is the user's own array."""

    __slots__ = ("nbytes", "address", "view", "guarded", "_raw", "_lo", "_hi")

    def __init__(self, nbytes: int, host_array: np.ndarray | None = None):
        self.nbytes = nbytes
        if host_array is not None:
            self._raw = host_array
            self.view = host_array.reshape(-1).view(np.uint8)[:nbytes]
            self._lo = self._hi = None
            self.guarded = False
        else:
            raw = np.empty(nbytes + 2 * GUARD + ALIGN, dtype=np.uint8)
            start = GUARD + (-(raw.ctypes.data + GUARD)) % ALIGN
            self._raw = raw
            self._lo = raw[start - GUARD:start]
            self._hi = raw[start + nbytes:start + nbytes + GUARD]
            self._lo[:] = np.frombuffer(CANARY, np.uint8)
            self._hi[:] = np.frombuffer(CANARY, np.uint8)
            self.view = raw[start:start + nbytes]
            self.guarded = True
        self.address = self.view.ctypes.data

    def guards_intact(self) -> str | None:
        """None if both guards hold the canary, else which one was overwritten (and restore it)."""
        if self._lo is None:
            return None
        bad = []
        if self._lo.tobytes() != CANARY:
            bad.append("before its start")
            self._lo[:] = np.frombuffer(CANARY, np.uint8)
        if self._hi.tobytes() != CANARY:
            bad.append("past its end")
            self._hi[:] = np.frombuffer(CANARY, np.uint8)
        return " and ".join(bad) or None


def _prepare_args(args: list):
    """The ``i8** args`` array for one argument list, and what the run needs to know about it."""
    ptrs = (ctypes.c_void_p * max(len(args), 1))()
    keep, local_slots, buffers = [], [], []
    for i, a in enumerate(args):
        if isinstance(a, bytes):
            cbuf = ctypes.create_string_buffer(a, max(len(a), 16))
            keep.append(cbuf)
            ptrs[i] = ctypes.addressof(cbuf)
        elif isinstance(a, LocalScratch):
            local_slots.append((i, a.nbytes))
        else:
            ptrs[i] = a.address
            if a.guarded:
                buffers.append((i, a))
    return ptrs, local_slots, buffers, keep


class JitProgram:
    """One JIT-compiled module: the engine (kept alive) and each kernel's work-group function address."""

    def __init__(self, engine, addresses: dict):
        self.engine = engine
        self.addresses = addresses
        self.object_code = None
        self.last_args = {}          # kernel name -> the prepared arguments of its last run
        self.slow = set()            # (kernel name, Launch) too slow for one thread


_dispatch_lock = threading.Lock()
_dispatch = {}


def dispatcher():
    """mncl_dispatch, JIT-compiled once per process, with the fault guard installed (cpu_faults).  Under
    a lock: queues launching their first kernels at once each built one, and the second assignment
    freed the first engine's code while another thread ran it (a segfault).  The engine is kept for
    the process's life; ``mncl_oob_abort`` is registered for the kernels' bounds checks to call."""
    with _dispatch_lock:
        if not _dispatch:
            st = _llvm()
            llvm = st["llvm"]
            with _llvm_lock:
                mod = llvm.parse_assembly(_DISPATCH_IR)
                mod.triple = st["triple"]
                mod.verify()
                engine = llvm.create_mcjit_compiler(mod, _target_machine(st))
                engine.finalize_object()
                llvm.add_symbol("mncl_oob_abort", engine.get_function_address("mncl_oob_abort"))
            cpu_faults.install(engine)
            _dispatch.update(engine=engine,
                             fn=_DISPATCH_TYPE(engine.get_function_address("mncl_dispatch")))
        return _dispatch["fn"]


def _host_memory_bytes() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 8 << 30


class CpuDevice:
    """The Backend for the host CPU (see mncl/backend.py for the protocol)."""

    def __init__(self):
        import llvmlite
        ncpu = os.cpu_count() or 1
        gmem = _host_memory_bytes()
        try:
            cpu_name = _cpu_model_name()
        except OSError:
            cpu_name = "host CPU"
        self.description = DeviceDescription(
            name=f"mncl-cpu ({cpu_name})", kind="cpu", type=device_type.CPU,
            vendor="MNCL", version="OpenCL 1.2 MNCL CPU (llvmlite MCJIT)",
            driver_version=f"mncl 0.1 / llvmlite {llvmlite.__version__}",
            opencl_c_version="OpenCL C 1.2", max_compute_units=ncpu,
            max_work_group_size=4096, max_work_item_sizes=(4096, 4096, 4096),
            global_mem_size=gmem, max_mem_alloc_size=max(gmem // 4, 1 << 28),
            local_mem_size=1 << 20, max_constant_buffer_size=1 << 20,
            max_parameter_size=1024, max_clock_frequency=_cpu_mhz(),
            extensions="cl_khr_fp64 cl_khr_byte_addressable_store")
        self._workers = ncpu
        self._pool = None
        self._pool_lock = threading.Lock()
        self._dispatch_fn = None
        self._cache_key = None
        self._wg_arrays = {}

    # -- identity -------------------------------------------------------------
    @property
    def cache_key(self) -> str:
        if self._cache_key is None:
            st = _llvm()
            llvm = st["llvm"]
            # the features too: object code made where AVX-512 was on must not run where a VM hides
            # it; ':probed': object code with stack probes (cpu_faults.with_stack_probes)
            features = hashlib.sha256(st["features"].encode()).hexdigest()[:16]
            self._cache_key = (f"cpu:{st['triple']}:{llvm.get_host_cpu_name()}:{features}:"
                               f"{llvm.llvm_version_info}:probed")
        return self._cache_key

    # -- allocator ------------------------------------------------------------
    def allocate(self, nbytes: int, host_array: np.ndarray | None = None) -> HostAllocation:
        return HostAllocation(nbytes, host_array)

    @staticmethod
    def copy_in(a: HostAllocation, offset: int, data: np.ndarray):
        a.view[offset:offset + data.size] = data

    @staticmethod
    def copy_out(a: HostAllocation, offset: int, out: np.ndarray):
        out[:] = a.view[offset:offset + out.size]

    @staticmethod
    def free(a: HostAllocation):
        """Nothing to do now: the memory is a numpy array, freed when the last command holding the
        allocation lets go of it."""

    # -- compiler -------------------------------------------------------------
    def compile(self, source: str, filename: str, options: tuple):
        from translator import compile_opencl  # lazily: the runtime loads without the front end
        return compile_opencl(source, filename=filename, options=tuple(options))

    def load(self, module, object_code: bytes | None = None) -> JitProgram:
        """JIT the module; with ``object_code`` (from an earlier load) LLVM's code generation is skipped."""
        st = _llvm()
        llvm = st["llvm"]
        self._dispatch_fn or self._dispatcher()       # defines mncl_oob_abort, which the kernels call
        produced = []
        with _llvm_lock:
            mod = llvm.parse_assembly(cpu_faults.with_stack_probes(module.llvm_ir))
            if not mod.triple:
                mod.triple = st["triple"]
            mod.verify()
            check_external_calls(mod, module.llvm_ir)
            engine = llvm.create_mcjit_compiler(mod, _target_machine(st))
            engine.set_object_cache(lambda _m, buf: produced.append(bytes(buf)),
                                    lambda _m: object_code)
            engine.finalize_object()
            addresses = {}
            for name, info in module.kernels.items():
                if info.task:           # task kernels run on the emulator device only (run() says so)
                    continue
                addr = engine.get_function_address(info.wg_function)
                if not addr:
                    raise ValueError(f"the module defines no work-group function '{info.wg_function}' "
                                     f"for kernel '{name}'")
                addresses[name] = addr
        prog = JitProgram(engine, addresses)
        prog.object_code = produced[0] if produced else object_code
        return prog

    def _dispatcher(self):
        self._dispatch_fn = dispatcher()
        return self._dispatch_fn

    # -- runner ---------------------------------------------------------------
    def run(self, loaded: JitProgram, kernel_info, args: list, launch) -> None:
        if kernel_info.task:
            raise_error("enqueue_task", status_code.INVALID_OPERATION,
                        f"kernel '{kernel_info.name}' is a task kernel (__task): it moves data through the "
                        f"MN-Core memory hierarchy and runs on the emulator device only")
        dispatch = self._dispatch_fn or self._dispatcher()
        try:
            _thread_state.ready                    # this thread has its alternate signal stack
        except AttributeError:
            cpu_faults.prepare_thread()
        name = kernel_info.name
        key = tuple(args)
        prepared = loaded.last_args.get(name)
        if prepared is None or prepared[0] != key:
            prepared = loaded.last_args[name] = (key, *_prepare_args(args), {})
        _, ptrs, local_slots, buffers, _keep, records = prepared
        rec = records.get(launch)
        t0 = _clock()
        if rec is not None:                        # the common case: same arguments, same NDRange
            fault = _fault_text(rec) if dispatch(rec) else None
            single = True
        else:
            _check_stack(kernel_info, launch)
            single, fault = self._run_new(loaded, name, ptrs, local_slots, launch, records, dispatch)
        if single and _clock() - t0 > SLOW_SINGLE_S and launch.num_groups != (1, 1, 1):
            if len(loaded.slow) > 256:
                loaded.slow.clear()
            loaded.slow.add((name, launch))        # worth splitting over threads after all
            records.pop(launch, None)
        for i, a in buffers:
            if a._lo.tobytes() == CANARY and a._hi.tobytes() == CANARY:
                continue
            where = a.guards_intact()
            if where is not None:
                pname = kernel_info.params[i].name if i < len(kernel_info.params) else str(i)
                raise_error("enqueue_nd_range_kernel", status_code.OUT_OF_RESOURCES,
                            f"kernel '{name}' wrote out of bounds of the buffer passed as "
                            f"argument {i} ('{pname}', {a.nbytes} bytes): the guard zone {where} "
                            f"was overwritten (the guard has been restored; the buffer's contents "
                            f"and any neighbouring memory may be wrong)")
        if fault is not None:
            raise_error("enqueue_nd_range_kernel", status_code.OUT_OF_RESOURCES, f"kernel '{name}' {fault}")

    def _run_new(self, loaded, name, ptrs, local_slots, launch, records, dispatch):
        fn = loaded.addresses[name]
        wg = self._wg_arrays.get(launch)
        if wg is None:
            if len(self._wg_arrays) > 1024:
                self._wg_arrays.clear()
            wg = self._wg_arrays[launch] = (ctypes.c_int64 * 16)(
                launch.work_dim, *launch.global_size, *launch.local_size, 0, 0, 0, *launch.offset,
                *launch.num_groups)
        ng = launch.num_groups
        total = ng[0] * ng[1] * ng[2]
        items = total * launch.local_size[0] * launch.local_size[1] * launch.local_size[2]
        # small NDRanges run on the calling thread (handing them to other threads costs more than it
        # saves) unless an earlier run of the same kernel and NDRange took long
        small = items < SPLIT_ITEMS and (name, launch) not in loaded.slow
        nchunks = 1 if self._workers == 1 or total < 2 or small else min(total, self._workers * 4)

        def run_chunk(start, end):
            if local_slots:
                n = len(ptrs)
                my_ptrs = (ctypes.c_void_p * n)(*ptrs)
                lp = (ctypes.c_void_p * len(local_slots))()
                ls = (ctypes.c_int64 * len(local_slots))()
                scratch = []
                for j, (i, nbytes) in enumerate(local_slots):
                    s = np.zeros(max(nbytes, 1) + ALIGN, dtype=np.uint8)
                    addr = s.ctypes.data + (-s.ctypes.data) % ALIGN
                    scratch.append(s)
                    my_ptrs[i] = lp[j] = addr
                    ls[j] = nbytes
                rec = _Record(fn, ctypes.addressof(my_ptrs), ctypes.addressof(wg), start, end,
                              len(local_slots), ctypes.addressof(lp), ctypes.addressof(ls))
            else:
                rec = _Record(fn, ctypes.addressof(ptrs), ctypes.addressof(wg), start, end, 0, 0, 0)
                if nchunks == 1 and small:
                    if len(records) > 64:
                        records.clear()
                    rec._keep = (ptrs, wg)         # keeps ptrs and wg alive with it, before another
                    records[launch] = rec          # thread can find it (and _wg_arrays be cleared)
            return _fault_text(rec) if dispatch(rec) else None

        if nchunks <= 1:
            return small, run_chunk(0, total)
        pool = self._thread_pool()
        bounds = [total * k // nchunks for k in range(nchunks + 1)]
        claim = itertools.count()      # next() on it is atomic: chunks go to whoever is free

        def participate():
            fault = None
            for k in iter(claim.__next__, None):
                if k >= nchunks:
                    return fault
                fault = run_chunk(bounds[k], bounds[k + 1]) or fault
        futures = [pool.submit(participate) for _ in range(min(self._workers - 1, nchunks - 1))]
        faults = [participate()] + [f.result() for f in futures]
        return False, next((f for f in faults if f is not None), None)

    def _thread_pool(self) -> ThreadPoolExecutor:
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=max(self._workers - 1, 1),
                                                thread_name_prefix="mncl-cpu",
                                                initializer=cpu_faults.prepare_thread)
            return self._pool


def _fault_text(rec) -> str | None:
    """What went wrong in the work-groups a record ran (None: nothing), for 'kernel 'k' ...'; clears it."""
    if rec[FAULT_SIGNAL]:
        text = cpu_faults.describe(rec[FAULT_SIGNAL], rec[FAULT_ADDRESS])
        rec[FAULT_SIGNAL] = rec[OOB_MESSAGE] = 0
        return (f"faulted: {text}; the work-groups left on that thread were abandoned, so buffers it writes "
                f"may hold partial results (the process is unharmed)")
    if rec[OOB_MESSAGE]:
        place = ctypes.string_at(rec[OOB_MESSAGE]).decode(errors="replace")
        index = rec[OOB_INDEX]
        rec[OOB_MESSAGE] = 0
        file_line, _, what = place.partition(": ")
        return (f"indexed {what} out of bounds at {file_line}: index {index} (the work-group stopped there and "
                f"the work-groups left on that thread were abandoned: buffers the kernel writes may hold partial "
                f"results)")
    return None


def _cpu_model_name() -> str:
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return "host CPU"


def _cpu_mhz() -> int:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("cpu MHz"):
                    return int(float(line.split(":", 1)[1]))
    except (OSError, ValueError):
        pass
    return 0


def _stack_bytes() -> int:
    """The stack a thread running work-groups has: threading.stack_size(), else the process's
    RLIMIT_STACK (what glibc gives new threads), else 8 MiB."""
    import resource
    size = threading.stack_size()
    if not size:
        soft = resource.getrlimit(resource.RLIMIT_STACK)[0]
        size = soft if 0 < soft != resource.RLIM_INFINITY else 8 << 20
    return size


def _check_stack(kernel_info, launch):
    """A work-group whose private storage does not fit the thread's stack would overflow it and kill
    the process (SIGSEGV): the launch fails with OUT_OF_RESOURCES instead, naming the numbers."""
    items = launch.local_size[0] * launch.local_size[1] * launch.local_size[2]
    need = kernel_info.private_bytes + kernel_info.item_private_bytes * items
    room = _stack_bytes() - STACK_MARGIN
    if need > room:
        per = (f" + {kernel_info.item_private_bytes} bytes for each of its {items} work-items (values "
               f"kept across barriers)" if kernel_info.item_private_bytes else "")
        raise_error("enqueue_nd_range_kernel", status_code.OUT_OF_RESOURCES,
                    f"kernel '{kernel_info.name}' needs {need} bytes of private memory per work-group "
                    f"({kernel_info.private_bytes} bytes{per}); the CPU device runs a work-group on a thread "
                    f"stack with room for {room}: use smaller private arrays or a smaller local size")
