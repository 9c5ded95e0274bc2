"""Test-only harness: JIT a CompiledModule with llvmlite and run an NDRange on numpy buffers.

run(mod, "name", global_size, local_size, *args) calls ``name__wg`` once per
work-group with the ABI of translator/module.py, through mncl's dispatcher (no
thread pool, no guard zones).  Arguments: numpy arrays
(``__global``/``__constant`` buffers, passed by pointer), ``Local(nbytes)`` for
``__local`` pointer parameters, and numpy scalars for by-value parameters.
"""
from __future__ import annotations

import ctypes
import ctypes.util

import numpy as np
import llvmlite.binding as llvm

from mncl.cpu import _Record, _fault_text, dispatcher
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
        dispatcher()          # defines mncl_oob_abort, which the bounds checks call
        self.cm = cm
        mod = llvm.parse_assembly(cm.llvm_ir)
        mod.verify()
        tm = llvm.Target.from_default_triple().create_target_machine(codemodel="jitdefault", jit=True)
        self.engine = llvm.create_mcjit_compiler(mod, tm)
        self.engine.finalize_object()
        _engines.append(self.engine)
        self.fns = {name: self.engine.get_function_address(k.wg_function) for name, k in cm.kernels.items()}

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
        wg = (ctypes.c_int64 * 16)(dim, *g, *l, 0, 0, 0, *off, *ng)
        # mncl's dispatcher: the groups in the order z, y, x; a failed bounds check or a fault ends it
        rec = _Record(self.fns[name], ctypes.addressof(ptrs), ctypes.addressof(wg), 0, ng[0] * ng[1] * ng[2],
                      0, 0, 0)
        if dispatcher()(rec):
            raise IndexError(_fault_text(rec))


def build(src, **kw):
    return Program(compile_opencl(src, **kw))
