"""Running an MNACC program: the host C as a shared library, the loops on an MNCL device.

The host C (mnacc/host.py) is compiled by the system C compiler into a shared library and its
``main`` is called through ctypes, so everything outside the marked loops is the user's C, run
natively.  Each marked loop calls back into ``Runner.launch`` with the addresses and sizes of
the variables it uses.  The runner keeps one device buffer per host array and a copy of the
bytes the device last saw: an array is uploaded only when the host changed it since, and the
arrays a loop writes are read back into host memory after it (whole, so elements no iteration
writes keep their host values).  Reductions fold on the device (kernels.combine_source) and
the result goes back into the host variable.

``mode``: "device" (the loops run on the device), "sequential" (the loops run as written, on
the host: what gcc alone gives), "check" (each loop runs on the device and then on the host,
and the first element where they differ is reported with its loop and indices).
"""
from __future__ import annotations

import ctypes
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

from .driver import Compiled
from .source import MnaccError, cc, compiler_diagnostics

_ARGS = (ctypes.c_int, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_ulonglong),
         ctypes.POINTER(ctypes.c_longlong))
LAUNCH = ctypes.CFUNCTYPE(ctypes.c_int, *_ARGS)
DONE = ctypes.CFUNCTYPE(None, *_ARGS)
CFLAGS = ("-O2", "-ffp-contract=off")        # the reference build the tests compare against


def build_host(compiled: Compiled, cflags=CFLAGS) -> ctypes.CDLL:
    """The host C compiled and loaded; its file is removed once loaded (nothing left behind)."""
    with tempfile.TemporaryDirectory(prefix="mnacc-") as tmp:
        src, lib = os.path.join(tmp, "host.c"), os.path.join(tmp, "host.so")
        with open(src, "w") as f:
            f.write(compiled.host_c)
        cmd = [*cc().split(), "-shared", "-fPIC", *cflags, "-Wno-unknown-pragmas",
               *(f"-D{d}" for d in compiled.defines), *(f"-I{i}" for i in compiled.includes),
               "-I", os.path.dirname(os.path.abspath(compiled.path)), "-o", lib, src, "-lm"]
        try:
            res = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise MnaccError([_plain(compiled.path, f"the C compiler failed to run: {e}")]) from None
        if res.returncode != 0:
            raise MnaccError(compiler_diagnostics(res.stderr, compiled.path, "the C compiler rejected the host program"))
        if res.stderr.strip():
            sys.stderr.write(res.stderr)
        return ctypes.CDLL(lib)


def _plain(path, msg):
    from translator.module import Diagnostic
    return Diagnostic("error", msg, path, 0, 0)


class Runner:
    """Runs a compiled program's loops on one device, called back from its host C."""

    def __init__(self, compiled: Compiled, device: str = "emulator", machine: str | None = None,
                 mode: str = "device", rtol: float | None = None, err=None):
        self.compiled, self.mode, self.rtol = compiled, mode, rtol
        self.err = err or sys.stderr
        self.loops = {lp.index: lp for lp in compiled.loops}
        self.buffers: dict = {}          # (address, size) -> [Buffer, bytes the device holds]
        self.events: dict = {}           # loop index -> [kernel events]
        self.pending: dict = {}          # loop index -> device results awaiting the host's (check mode)
        self.mismatches = 0
        self.programs: dict = {}
        if mode != "sequential":
            import mncl as cl
            self.cl = cl
            machine = machine or os.environ.get("MNCL_MACHINE") or "mncore2"
            dev = cl.get_device("cpu") if device == "cpu" else cl.get_device("emulator", machine)
            self.ctx = cl.Context([dev])
            self.queue = cl.CommandQueue(self.ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
            for lp in compiled.loops:         # every build error before the program starts
                try:
                    self.programs[lp.index] = cl.Program(self.ctx, lp.source).build()
                except Exception as e:        # the backend names lines of the user's file (#line), not the file
                    log = getattr(e, "log", None) or str(e)
                    log = log.split("):\n", 1)[-1] if "Build on" in log else log
                    log = re.sub(r"^kernel\.cl:", lp.where.rsplit(":", 1)[0] + ":", log.strip(), flags=re.M)
                    raise RuntimeError(f"loop {lp.index} ({lp.where}) cannot be built for {dev.name}:\n{log}") from None
        self._launch = LAUNCH(self._guard(self.launch, 0))
        self._done = DONE(self._guard(self.done, None))

    # --- the callbacks -------------------------------------------------------------------
    def _guard(self, fn, on_error):
        def call(k, ptrs, sizes, bounds):
            try:
                return fn(k, ptrs, sizes, bounds)
            except BaseException as e:        # never unwind through C: say where, then stop
                lp = self.loops.get(k)
                where = f"{lp.where}: loop {k}" if lp else f"loop {k}"
                msg = str(e).strip() or type(e).__name__
                self._die(f"mnacc: {where} failed on the device:\n{msg}")
            return on_error
        return call

    def _die(self, msg):
        _flush_c()
        self.err.write(msg.rstrip() + "\n")
        self.err.flush()
        os._exit(1)

    def launch(self, k, ptrs, sizes, bounds) -> int:
        if self.mode == "sequential":
            return 1
        lp = self.loops[k]
        cl = self.cl
        counts = [int(bounds[2 * j + 1]) for j in range(len(lp.counters))]
        total = int(np.prod(counts)) if counts else 0
        arrays, values, parts, results = [], [], [], []
        for n, v in enumerate(lp.vars):
            addr, size = ptrs[n], int(sizes[n])
            if v["role"] == "array":
                arrays.append((v, self._device_array(addr, size)))
                if v.get("snapshot"):
                    arrays.append((dict(v, written=False), self._device_array(addr, size, "entry copy")))
            elif v["role"] == "reduction":
                start = np.frombuffer(ctypes.string_at(addr, size), dtype=v["dtype"]).copy()
                buf = cl.Buffer(self.ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=start)
                part = cl.Buffer(self.ctx, cl.mem_flags.READ_WRITE, max(total, 1) * start.itemsize)
                parts.append(part)
                results.append((v, addr, size, buf, part))
            else:
                values.append(np.frombuffer(ctypes.string_at(addr, size), dtype=v["dtype"])[0])
        _no_overlap([(v["name"], ptrs[n], int(sizes[n]), v["written"]) for n, v in enumerate(lp.vars)
                     if v["role"] == "array"])
        lo = [int(bounds[2 * j]) for j in range(len(counts))]
        if lp.grid and all(0 <= a and a + n <= e for a, n, e in zip(lo, counts, lp.grid)):
            # the arrays' whole extents, the loop's range a guard (loops._grid)
            kernel, shape = lp.kernel + "_grid", lp.grid
            starts = [np.dtype(c["dtype"]).type(x) for c, a, n in zip(lp.counters, lo, counts) for x in (a, a + n)]
        else:
            kernel, shape = lp.kernel, counts
            starts = [np.dtype(c["dtype"]).type(a) for c, a in zip(lp.counters, lo) if c["start_arg"]]
        device_out = {}
        if total > 0:
            prg = self.programs[k]
            args = [entry[0] for _, entry in arrays] + values + starts + parts
            ev = getattr(prg, kernel)(self.queue, tuple(reversed(shape)), None, *args)
            self.events.setdefault(k, []).append(ev)
            if results:
                fold = [x for _, _, _, buf, part in results for x in (buf, part)] + [np.int64(total)]
                self.events[k].append(getattr(prg, lp.kernel + "_combine")(self.queue, (1,), None, *fold))
            for v, entry in arrays:
                if v["written"]:
                    got = np.empty(entry[1].size, np.uint8)
                    cl.enqueue_copy(self.queue, got, entry[0])
                    entry[1] = got
                    device_out[v["name"]] = got
            for v, addr, size, buf, _ in results:
                got = np.empty(size, np.uint8)
                cl.enqueue_copy(self.queue, got, buf)
                device_out[v["name"]] = got
        if self.mode == "check":
            self.pending[k] = device_out
            return 1
        for n, v in enumerate(lp.vars):
            if v["name"] in device_out:
                _view(ptrs[n], int(sizes[n]))[:] = device_out[v["name"]]
        return 0

    def done(self, k, ptrs, sizes, bounds):
        if self.mode != "check":
            return
        lp = self.loops[k]
        device_out = self.pending.pop(k, {})
        for n, v in enumerate(lp.vars):
            if v["name"] not in device_out:
                continue
            host = _view(ptrs[n], int(sizes[n])).view(v["dtype"])
            dev = device_out[v["name"]].view(v["dtype"])
            where = first_difference(dev, host, v, self._rtol(v))
            if where is not None:
                self.mismatches += 1
                idx, a, b = where
                self.err.write(f"mnacc: check: {lp.where}: loop {k}: {v['name']}{idx}: device {a!r}, "
                               f"sequential {b!r}\n")
                self.err.flush()
                return

    def _rtol(self, v):
        if self.rtol is not None:
            return self.rtol
        if v["role"] == "reduction" and np.dtype(v["dtype"]).kind == "f":
            return 1e-12 if np.dtype(v["dtype"]).itemsize == 8 else 1e-5
        return 0.0

    def _device_array(self, addr, size, role="array"):
        host = _view(addr, size)
        entry = self.buffers.get((addr, size, role))
        if entry is None:
            entry = self.buffers[(addr, size, role)] = [self.cl.Buffer(self.ctx, self.cl.mem_flags.READ_WRITE, max(size, 1)),
                                                  None]
        if entry[1] is None or not np.array_equal(entry[1], host):
            if size:
                self.cl.enqueue_copy(self.queue, entry[0], host)
            entry[1] = host.copy()
        return entry

    # --- running main -------------------------------------------------------------------------
    def run(self, argv) -> int:
        """Load the host program, call its main(argc, argv), and return its exit status."""
        lib = build_host(self.compiled)
        ctypes.c_void_p.in_dll(lib, "__mnacc_launch").value = ctypes.cast(self._launch, ctypes.c_void_p).value
        ctypes.c_void_p.in_dll(lib, "__mnacc_done").value = ctypes.cast(self._done, ctypes.c_void_p).value
        args = [a.encode() for a in argv]
        c_argv = (ctypes.c_char_p * (len(args) + 1))(*args, None)
        main = lib.main
        main.restype, main.argtypes = ctypes.c_int, [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
        sys.stdout.flush()
        sys.stderr.flush()
        status = main(len(args), c_argv)
        _flush_c()
        return status

    def profile(self) -> list:
        """Per loop that ran on the emulator: where, launches, emulated seconds, cycles, DRAM bytes
        and the fraction of the machine's DRAM bandwidth they took (summed over its launches)."""
        out = []
        for k, evs in sorted(self.events.items()):
            sums = [e.stats.summary() for e in evs if getattr(e, "stats", None) is not None]
            t = sum(s["time_s"] for s in sums)
            dram = sum(s["dram_bytes"] for s in sums)
            peak = sums[0]["roofline"]["dram_bytes_per_s"] if sums else 0
            out.append(dict(where=self.loops[k].where, launches=len(evs), time_s=t,
                            cycles=sum(s["cycles"] for s in sums), dram_bytes=dram,
                            dram_fraction=dram / t / peak if t and peak else 0.0))
        return out


def _no_overlap(spans):
    """Each array of a loop is its own device buffer: a written one that shares host memory with
    another would not see, or be seen by, the other's copy, so that is an error, not a wrong answer.
    (Read-only arrays may alias: dot(v, v).)"""
    for k, (an, a0, asz, aw) in enumerate(spans):
        for bn, b0, bsz, bw in spans[k + 1:]:
            if (aw or bw) and asz and bsz and a0 < b0 + bsz and b0 < a0 + asz:
                raise ValueError(f"arrays '{an}' and '{bn}' overlap in memory and the loop writes "
                                 f"'{an if aw else bn}'; the arrays a marked loop writes must be distinct objects "
                                 f"(mnacc gives each array its own device buffer)")


def first_difference(dev, host, v, rtol):
    """(index text, device value, host value) of the first differing element, or None."""
    same = (dev == host) | (np.isnan(dev) & np.isnan(host)) if dev.dtype.kind == "f" else dev == host
    if rtol and dev.dtype.kind == "f":
        same |= np.isclose(dev, host, rtol=rtol, atol=0)
    if same.all():
        return None
    flat = int(np.argmin(same))
    dims = [d for d in v["dims"][1:]]
    shape = (dev.size // max(int(np.prod(dims)), 1), *dims) if v["dims"] else (1,)
    idx = np.unravel_index(flat, shape)
    text = "".join(f"[{i}]" for i in idx) if v["dims"] else ""
    return text, dev.flat[flat].item(), host.flat[flat].item()


def _view(addr, size):
    if size == 0:
        return np.empty(0, np.uint8)
    return np.ctypeslib.as_array((ctypes.c_ubyte * size).from_address(addr))


def _flush_c():
    try:
        ctypes.CDLL(None).fflush(None)
    except Exception:
        pass
