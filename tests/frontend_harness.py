"""Test-only harness: JIT a CompiledModule with llvmlite and run an NDRange on numpy buffers.

run(mod, "name", global_size, local_size, *args) calls ``name__wg`` once per
work-group with the ABI of translator/module.py.  Arguments: numpy arrays
(``__global``/``__constant`` buffers, passed by pointer), ``Local(nbytes)`` for
``__local`` pointer parameters, and numpy scalars for by-value parameters.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import itertools

import numpy as np
import llvmlite.binding as llvm

from translator import compile_opencl

_engines = []
_init = False


def _setup():
    global _init
    if not _init:
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        llvm.load_library_permanently(ctypes.util.find_library("m"))
        _init = True


class Local:
    def __init__(self, nbytes):
        self.nbytes = nbytes


class Program:
    def __init__(self, cm):
        _setup()
        self.cm = cm
        mod = llvm.parse_assembly(cm.llvm_ir)
        mod.verify()
        tm = llvm.Target.from_default_triple().create_target_machine(codemodel="jitdefault", jit=True)
        self.engine = llvm.create_mcjit_compiler(mod, tm)
        self.engine.finalize_object()
        _engines.append(self.engine)
        self.fns = {}
        proto = ctypes.CFUNCTYPE(None, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_int64))
        for name, k in cm.kernels.items():
            self.fns[name] = proto(self.engine.get_function_address(k.wg_function))

    def run(self, name, gsize, lsize, *args, offset=None):
        gsize = tuple(gsize) if isinstance(gsize, (tuple, list)) else (gsize,)
        lsize = tuple(lsize) if isinstance(lsize, (tuple, list)) else (lsize,)
        dim = len(gsize)
        g = list(gsize) + [1] * (3 - dim)
        l = list(lsize) + [1] * (3 - dim)
        off = list(offset or ()) + [0] * (3 - len(offset or ()))
        ng = [g[d] // l[d] for d in range(3)]
        assert all(g[d] % l[d] == 0 for d in range(3))
        keep = []
        ptrs = (ctypes.c_void_p * max(len(args), 1))()
        for i, a in enumerate(args):
            if isinstance(a, Local):
                buf = ctypes.create_string_buffer(max(a.nbytes, 1))
                keep.append(buf)
                ptrs[i] = ctypes.cast(buf, ctypes.c_void_p)
            elif isinstance(a, np.ndarray):
                assert a.flags.c_contiguous
                ptrs[i] = a.ctypes.data
                keep.append(a)
            else:
                s = np.array(a)
                keep.append(s)
                ptrs[i] = s.ctypes.data
        fn = self.fns[name]
        status = (ctypes.c_int64 * 2)()     # an index out of a private or __local array stores here
        wg = (ctypes.c_int64 * 17)()
        wg[0] = dim
        wg[16] = ctypes.addressof(status)
        for d in range(3):
            wg[1 + d], wg[4 + d], wg[10 + d], wg[13 + d] = g[d], l[d], off[d], ng[d]
        for gz, gy, gx in itertools.product(range(ng[2]), range(ng[1]), range(ng[0])):
            wg[7], wg[8], wg[9] = gx, gy, gz
            fn(ptrs, wg)
        if status[0]:
            raise IndexError(f"{ctypes.string_at(status[0]).decode()}: index {status[1]}")


def build(src, **kw):
    return Program(compile_opencl(src, **kw))
