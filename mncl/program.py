"""``Program``: OpenCL C source or binaries, built for the context's devices.

``Program(ctx, source).build(options)`` runs the front end through the
device (``backend.compile``), then loads the module (``backend.load``).
Builds go through two caches: this process's memory (a repeated build of the
same source costs a hash) and the disk cache of mncl/cache.py (a new process
skips the front end and, on the CPU device, LLVM's code generation too).
A failed build raises ``RuntimeError`` BUILD_PROGRAM_FAILURE whose message
holds the compiler's log; ``get_build_info(device, program_build_info.LOG)``
returns the same log.  ``Program(ctx, devices, binaries)`` takes the bytes of
``get_info(program_info.BINARIES)`` (mncl/binary.py) and needs no front end.
"""
from __future__ import annotations

import os
import shlex
import threading

from . import cache
from .binary import BinaryError, dump_module, load_module
from .checks import check_context
from .constants import build_status, program_build_info, program_info
from .errors import make_error, raise_error, status_code
from .platform import Device

SOURCE_FILENAME = "kernel.cl"

_memo_lock = threading.Lock()
_memo: dict = {}          # cache key -> (CompiledModule, loaded program)
_MEMO_MAX = 256


def _split_options(options) -> tuple:
    """The build options as words (a string is split as a shell would: quotes group words)."""
    if options is None:
        return ()
    if isinstance(options, str):
        return _shell_words(options)
    if not isinstance(options, (list, tuple)):
        raise_error("Program.build", status_code.INVALID_BUILD_OPTIONS,
                    f"build options must be a string or a list of strings, not {type(options).__name__}")
    out = []
    for o in options:
        if not isinstance(o, str):
            raise_error("Program.build", status_code.INVALID_BUILD_OPTIONS,
                        f"build options must be strings, got {o!r:.60}")
        out.extend(_shell_words(o))
    return tuple(out)


def _shell_words(text: str) -> tuple:
    try:
        return tuple(shlex.split(text))
    except ValueError as e:          # an unbalanced quote or a trailing backslash
        raise_error("Program.build", status_code.INVALID_BUILD_OPTIONS,
                    f"build options {text!r:.80}: {e} (quotes must be balanced)")


class Program:
    """PyOpenCL's ``Program``: ``Program(ctx, source)`` or ``Program(ctx, devices, binaries)``."""

    def __init__(self, context, arg1, arg2=None):
        check_context("Program", context)
        self.context = context
        self._modules = {}       # Device -> CompiledModule
        self._loaded = {}        # Device -> what the device's backend loaded
        self._status = {d: build_status.NONE for d in context.devices}
        self._log = {d: "" for d in context.devices}
        self._options = ()
        self._kernels = {}
        if arg2 is None:
            if not isinstance(arg1, str):
                raise_error("Program", status_code.INVALID_VALUE,
                            f"the source must be a str (got {type(arg1).__name__}); for binaries "
                            f"use Program(context, devices, binaries)")
            self._source = arg1
            self._binaries = None
        else:
            if not isinstance(arg1, (list, tuple)) or not isinstance(arg2, (list, tuple)):
                raise_error("Program", status_code.INVALID_VALUE,
                            "Program(context, devices, binaries) takes a list of devices and a list of "
                            f"binaries (got {type(arg1).__name__} and {type(arg2).__name__})")
            devices, binaries = list(arg1), list(arg2)
            if len(devices) != len(binaries):
                raise_error("Program", status_code.INVALID_VALUE,
                            f"{len(devices)} devices but {len(binaries)} binaries")
            self._source = None
            self._binaries = {}
            for i, (dev, data) in enumerate(zip(devices, binaries)):
                if not isinstance(dev, Device) or dev not in context.devices:
                    raise_error("Program", status_code.INVALID_DEVICE,
                                f"device {dev!r} is not in the context")
                try:
                    self._binaries[dev] = load_module(data)
                except BinaryError as e:
                    raise_error("Program", status_code.INVALID_BINARY, f"binary {i}: {e}")

    # -- building -------------------------------------------------------------
    def build(self, options=None, devices=None, cache_dir=None):
        opts = _split_options(options)
        self._options = opts
        if devices is not None and not isinstance(devices, (list, tuple)):
            raise_error("Program.build", status_code.INVALID_DEVICE,
                        f"devices must be a list of mncl.Device, not {type(devices).__name__}")
        if cache_dir is not None and not isinstance(cache_dir, (str, os.PathLike)):
            raise_error("Program.build", status_code.INVALID_VALUE,
                        f"cache_dir must be a path, not {type(cache_dir).__name__}")
        for dev in devices or self.context.devices:
            if not isinstance(dev, Device) or dev not in self._status:
                raise_error("Program.build", status_code.INVALID_DEVICE,
                            f"device {dev!r} is not in the program's context")
            self._build_for(dev, opts, cache_dir)
        self._kernels.clear()
        return self

    def _build_for(self, dev, opts, cache_dir=None):
        backend = dev.backend
        if self._binaries is not None:
            module = self._binaries[dev]
            self._install(dev, module, self._load(dev, module, None))
            return
        mode = cache.mode()
        k = cache.key(self._source, opts, backend.cache_key) if mode != "off" else None
        if k is not None:
            with _memo_lock:
                hit = _memo.get(k)
            if hit is not None:
                self._install(dev, *hit)
                return
            entry = cache.load(k, cache_dir)
            if entry is not None:
                try:
                    module = load_module(entry[0])
                    module.source = self._source      # for profile reports (not in the cache entry)
                    loaded = backend.load(module, entry[1] or None)   # the cache checked its integrity
                except Exception:  # a corrupt or stale entry: drop it and rebuild
                    cache.discard(k, cache_dir)
                else:
                    self._remember(k, module, loaded)
                    self._install(dev, module, loaded)
                    return
            if mode == "require":
                self._fail(dev, "MNCL_CACHE=require and the program is not in the cache "
                                f"({cache_dir or cache.cache_dir()})")
        module = self._compile(dev, opts)
        loaded = self._load(dev, module, None)
        if k is not None:
            cache.store(k, dump_module(module), getattr(loaded, "object_code", None),
                        cache_dir)
            self._remember(k, module, loaded)
        self._install(dev, module, loaded)

    def _compile(self, dev, opts):
        from translator.module import CompileError
        try:
            return dev.backend.compile(self._source, SOURCE_FILENAME, opts)
        except ImportError as e:
            self._fail(dev, f"the OpenCL C front end (translator.compile_opencl) is not available: {e}")
        except CompileError as e:
            self._fail(dev, e.log or str(e))
        except RecursionError:
            self._fail(dev, f"{SOURCE_FILENAME}: error: the source is nested too deeply to compile")
        except Exception as e:  # a front-end bug: still a build failure with a message, no traceback
            self._fail(dev, f"{SOURCE_FILENAME}: error: internal compiler error: {type(e).__name__}: {e}")

    def _load(self, dev, module, obj):
        from translator.module import CompileError
        try:
            return dev.backend.load(module, obj)
        except CompileError as e:           # the backend's diagnostics (a kernel that cannot fit ...)
            self._fail(dev, e.log or str(e))
        except Exception as e:
            self._fail(dev, f"the device could not load the compiled module: {type(e).__name__}: {e}")

    def _fail(self, dev, log: str):
        self._status[dev] = build_status.ERROR
        self._log[dev] = log
        opts = " ".join(self._options)
        # from None: the compiler's own exception (and its traceback) is not the user's business
        raise make_error("Program.build", status_code.BUILD_PROGRAM_FAILURE,
                         f"\n\nBuild on {dev.name} (options: '{opts}'):\n\n{log}") from None

    @staticmethod
    def _remember(k, module, loaded):
        with _memo_lock:
            if len(_memo) >= _MEMO_MAX:
                _memo.pop(next(iter(_memo)))
            _memo[k] = (module, loaded)

    def _install(self, dev, module, loaded):
        self._modules[dev] = module
        self._loaded[dev] = loaded
        self._status[dev] = build_status.SUCCESS
        self._log[dev] = module.log

    # -- information ----------------------------------------------------------
    def _module(self):
        for dev in self.context.devices:
            if dev in self._modules:
                return self._modules[dev]
        raise_error("Program", status_code.INVALID_PROGRAM_EXECUTABLE,
                    "the program has not been built; call build() first")

    def get_build_info(self, device, param):
        if not isinstance(device, Device) or device not in self._status:
            raise_error("Program.get_build_info", status_code.INVALID_DEVICE,
                        f"device {device!r} is not in the program's context")
        if param == program_build_info.LOG:
            return self._log[device]
        if param == program_build_info.STATUS:
            return self._status[device]
        if param == program_build_info.OPTIONS:
            return " ".join(self._options)
        if param == program_build_info.BINARY_TYPE:
            return 4 if device in self._modules else 0   # CL_PROGRAM_BINARY_TYPE_EXECUTABLE
        raise_error("Program.get_build_info", status_code.INVALID_VALUE,
                    f"unknown program_build_info {param!r}")

    def get_info(self, param):
        if param == program_info.SOURCE:
            return self._source or ""
        if param == program_info.CONTEXT:
            return self.context
        if param == program_info.DEVICES:
            return list(self.context.devices)
        if param == program_info.NUM_DEVICES:
            return len(self.context.devices)
        if param == program_info.REFERENCE_COUNT:
            return 1
        if param == program_info.BINARIES:
            return [dump_module(self._modules[d]) if d in self._modules else b""
                    for d in self.context.devices]
        if param == program_info.BINARY_SIZES:
            return [len(b) for b in self.get_info(program_info.BINARIES)]
        if param == program_info.KERNEL_NAMES:
            return ";".join(self._module().kernels)
        if param == program_info.NUM_KERNELS:
            return len(self._module().kernels)
        raise_error("Program.get_info", status_code.INVALID_VALUE, f"unknown program_info {param!r}")

    source = property(lambda self: self.get_info(program_info.SOURCE))
    binaries = property(lambda self: self.get_info(program_info.BINARIES))
    kernel_names = property(lambda self: self.get_info(program_info.KERNEL_NAMES))
    num_kernels = property(lambda self: self.get_info(program_info.NUM_KERNELS))
    devices = property(lambda self: self.get_info(program_info.DEVICES))

    def all_kernels(self):
        from .kernel import Kernel
        return [Kernel(self, name) for name in self._module().kernels]

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        knl = self._kernels.get(name)
        if knl is not None:
            return knl
        from .kernel import Kernel
        if name not in self._module().kernels:
            raise AttributeError(f"'{name}' was not found as a program info attribute or as a kernel "
                                 f"name (kernels: {', '.join(self._module().kernels) or 'none'})")
        knl = self._kernels[name] = Kernel(self, name)
        return knl

    def __repr__(self):
        return f"<mncl.Program {self.kernel_names if self._modules else '(not built)'}>"
