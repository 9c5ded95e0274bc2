"""The MNCL OpenCL C front end: ``compile_opencl(source) -> CompiledModule``.

Stages, one module each: options (build options) -> preprocess (pcpp, mncl.h)
-> parse (pycparserext's OpenCL parser) -> lower (type checking and LLVM IR,
work-group functions; builtins) -> optimise (llvmlite's new pass manager,
vectorisers off) and verify.  Any bad input raises ``CompileError`` carrying
located diagnostics; a failure inside the compiler itself is reported as an
"internal compiler error" diagnostic, never as another exception.
"""
from __future__ import annotations

import re
import time
from typing import Sequence

from .module import CompiledModule, CompileError, Diagnostic, KernelInfo, ParamInfo

__version__ = "0.1.0"

import threading as _threading

# llvmlite parses into LLVM's global context, which is not thread-safe: the front end
# holds this lock around its LLVM work (a caller doing its own LLVM work may share it).
llvm_lock = _threading.RLock()

__all__ = ["compile_opencl", "CompiledModule", "CompileError", "Diagnostic", "KernelInfo",
           "ParamInfo", "__version__"]


_RECURSION_LIMIT = 12000


def _column_mapper(pp_text: str, sources: dict):
    """Map a (file, line, column) of the preprocessed text back to the user's column.

    pcpp keeps each line's text except where a macro expands; for a column after
    an expansion the distance from the end of the line is kept, inside it the
    column of the macro's name is used.
    """
    import re
    out_lines: dict = {}
    cur_file, cur_line = None, 0
    for raw in pp_text.split("\n"):
        m = re.match(r'#line (\d+) "(.*)"', raw)
        if m:
            cur_line, cur_file = int(m.group(1)), m.group(2)
            continue
        if cur_file is not None:
            out_lines[(cur_file, cur_line)] = raw
        cur_line += 1

    def colmap(file, line, col):
        pp = out_lines.get((file, line))
        lines = sources.get(file)
        if pp is None or lines is None or not (0 < line <= len(lines)):
            return line, col
        orig = lines[line - 1]
        if pp == orig:
            return line, col
        c0 = col - 1
        pre = 0
        while pre < min(len(pp), len(orig)) and pp[pre] == orig[pre]:
            pre += 1
        suf = 0
        while suf < min(len(pp), len(orig)) - pre and pp[-1 - suf] == orig[-1 - suf]:
            suf += 1
        if c0 < pre:
            return line, col
        if c0 >= len(pp) - suf:
            return line, max(c0 - (len(pp) - len(orig)), 0) + 1
        # inside the expansion: point at the start of the macro name in the original
        s = pre
        while s > 0 and (orig[s - 1].isalnum() or orig[s - 1] == "_"):
            s -= 1
        return line, s + 1
    return colmap


def _optimise(llmod, opt_level: int, spmd: bool = False):
    import llvmlite.binding as llvm
    from .cltypes import target_machine
    tm = target_machine()
    pto = llvm.create_pipeline_tuning_options(speed_level=opt_level)
    pto.loop_vectorization = False
    pto.slp_vectorization = False
    pb = llvm.create_pass_builder(tm, pto)
    mpm = pb.getModulePassManager()
    if spmd and opt_level == 0:
        # the SIMD backend keeps values in registers, not in per-work-item memory: even at -O0
        # local variables are promoted to SSA (SROA changes no result, only where values live)
        mpm.add_sroa_pass()
    mpm.run(llmod, pb)


def compile_opencl(source: str, *, filename: str = "<kernel>", options: "str | Sequence[str]" = (),
                   opt_level: "int | None" = None, spmd: bool = False) -> CompiledModule:
    """Compile OpenCL C ``source`` to optimised LLVM IR with one work-group function per kernel
    (``spmd=True``: one per-work-item function ``K__wi`` per kernel, for the SIMD backend)."""
    import sys
    if sys.getrecursionlimit() < _RECURSION_LIMIT:
        # the parser and the lowering recurse once per nesting level (a 500-term sum is 500 deep)
        sys.setrecursionlimit(_RECURSION_LIMIT)
    try:
        return _compile(source, filename, options, opt_level, spmd)
    except CompileError:
        raise
    except RecursionError:
        raise CompileError([Diagnostic("error", "expression or statement nesting is too deep", filename, 0, 0)]) from None
    except MemoryError:
        raise CompileError([Diagnostic("error", f"the translator ran out of memory compiling this source "
                                       f"({len(source)} characters)", filename, 0, 0)]) from None
    except Exception as e:  # a compiler bug: never leak a traceback type to the caller
        raise CompileError([Diagnostic("error", f"internal compiler error: {type(e).__name__}: {e}", filename, 0, 0)]) from None


def _compile(source, filename, options, opt_level, spmd=False):
    from .limits import MAX_SOURCE_CHARS
    from .options import parse_options
    from .preprocess import preprocess
    from .parse import parse
    from .lower import Lowering, LowerError

    if not isinstance(source, str):
        raise CompileError([Diagnostic("error", "kernel source must be a string", filename, 0, 0)])
    if not isinstance(filename, str) or not filename:
        filename = "<kernel>"
    if len(source) > MAX_SOURCE_CHARS:
        lines = source.count("\n") + (not source.endswith("\n"))
        raise CompileError([Diagnostic("error", f"the source is {len(source)} characters ({lines} lines), over the "
                                       f"translator's limit of {MAX_SOURCE_CHARS} (docs/language.md, \"Limits\")",
                                       filename, 0, 0)])
    bo = parse_options(options)
    if opt_level is not None:
        if opt_level not in (0, 1, 2, 3):
            raise CompileError([Diagnostic("error", f"invalid optimisation level {opt_level!r} (expected 0..3)", filename, 0, 0)])
        bo.opt_level = opt_level
    warnings = [Diagnostic("warning", w, "<build options>", 0, 0) for w in bo.warnings]
    sources: dict = {}
    t0 = time.perf_counter()
    text, pdiags = preprocess(source, filename, bo.defines, bo.include_dirs, sources)
    errors = [d for d in pdiags if d.severity == "error"]
    warnings += [d for d in pdiags if d.severity != "error"]
    if errors:
        raise CompileError(errors + warnings)
    if "__task" in text:
        from .task import PRELUDE
        text = PRELUDE + text
    colmap = _column_mapper(text, sources)
    ast, diag = parse(text, filename, sources)
    if diag is not None:
        line, col = colmap(diag.file if hasattr(diag, "file") else diag.filename, diag.line, diag.column)
        lines = sources.get(diag.filename, [])
        src_line = lines[line - 1] if 0 < line <= len(lines) else diag.source_line
        diag = Diagnostic(diag.severity, diag.message, diag.filename, line, col, src_line)
        raise CompileError([diag])
    from .task import signature, task_functions
    tasks = task_functions(ast)
    if tasks:           # compiled per machine by the backend; the SPMD lowering sees the rest
        ast.ext = [e for e in ast.ext if e not in tasks]
        task_infos = {}
        for f in tasks:
            info = signature(f, filename, sources, colmap)
            task_infos[info.name] = info
    lw = Lowering(ast, filename, sources, colmap, fast_math=bo.fast_math,
                  single_const=bo.single_precision_constant, spmd=spmd)
    try:
        _check_identifiers(ast, lw)
        module, kernels = lw.run()
    except LowerError as e:
        raise CompileError([e.diag]) from None
    warnings += lw.warnings
    if bo.werror and warnings:
        raise CompileError([Diagnostic("error", w.message, w.filename, w.line, w.column, w.source_line)
                            for w in warnings])
    if bo.no_warnings:
        warnings = []
    ir_text = str(module)
    if tasks:
        clash = sorted(set(task_infos) & set(kernels))
        if clash:
            raise CompileError([Diagnostic("error", f"kernel '{clash[0]}' is defined twice", filename, 0, 0)])
    with llvm_lock:
        out = _finish(ir_text, kernels, filename, bo, warnings, spmd)
        if spmd and bo.opt_level > 0 and any(lw.restrict_buffers(f) for f in lw.funcs.values() if f["kernel"]):
            _add_restrict_ir(out, ast, filename, sources, colmap, bo)
    if tasks:
        out.kernels.update(task_infos)
        out.task_text = text
        out.task_sources = sources
    return out


def _add_restrict_ir(out, ast, filename, sources, colmap, bo):
    """out.restrict_ir and out.restrict_kernels: the module lowered again with its kernels' buffer
    parameters as if restrict (translator/restrict.py), and the kernels where that changes the
    optimised code: compared with the same lowering without noalias, so that only what noalias
    made possible counts (the body inlined into a wrapper alone moves a few instructions)."""
    from .lower import Lowering
    from .restrict import differing
    texts = []
    for noalias in (True, False):
        lw = Lowering(ast, filename, sources, colmap, fast_math=bo.fast_math,
                      single_const=bo.single_precision_constant, spmd=True, restrict=True, noalias=noalias)
        module, kernels = lw.run()
        texts.append(_finish(str(module), kernels, filename, bo, [], True).llvm_ir)
    out.restrict_kernels = differing(texts[1], texts[0], out.kernels)
    out.restrict_ir = texts[0] if out.restrict_kernels else ""


MAX_IDENTIFIER = 1000     # characters: LLVM's names stop at 1024, and the lowering adds suffixes


def _check_identifiers(ast, lw):
    """An identifier longer than MAX_IDENTIFIER is an error at its place (C99 lets an
    implementation set the limit; LLVM would reject the IR)."""
    stack = [ast]
    while stack:
        node = stack.pop()
        for attr in ("name", "declname"):
            v = getattr(node, attr, None)
            if isinstance(v, str) and len(v) > MAX_IDENTIFIER:
                lw.error(node, f"identifier '{v[:24]}...' is {len(v)} characters long; the limit is "
                               f"{MAX_IDENTIFIER}")
        stack.extend(child for _, child in node.children())


def _finish(ir_text, kernels, filename, bo, warnings, spmd=False):
    import llvmlite.binding as llvm
    try:
        llmod = llvm.parse_assembly(ir_text)
        llmod.verify()
    except RuntimeError as e:
        names = ", ".join(kernels) or "<no kernel>"
        raise CompileError([Diagnostic("error", f"internal compiler error in kernel {names}: invalid LLVM IR: {str(e).strip().splitlines()[0] if str(e).strip() else e}", filename, 0, 0)]) from None
    if spmd:
        llmod.data_layout = re.sub(r"-n8:16:32:64\b", "-n8:16:32", llmod.data_layout)
    _optimise(llmod, bo.opt_level, spmd)
    try:
        llmod.verify()
    except RuntimeError as e:
        names = ", ".join(kernels) or "<no kernel>"
        raise CompileError([Diagnostic("error", f"internal compiler error in kernel {names}: optimised IR does not verify: {e}", filename, 0, 0)]) from None
    if spmd:
        # the SIMD backend takes one function per kernel: every helper must have been inlined
        # (they are internal and alwaysinline; the always-inliner runs at every -O level).
        # Declarations (math library calls) are left for the backend to accept or reject.
        wi = {k.wg_function for k in kernels.values()}
        left = sorted(f.name for f in llmod.functions if not f.is_declaration and f.name not in wi)
        if left:
            names = ", ".join(kernels) or "<no kernel>"
            raise CompileError([Diagnostic("error", f"internal compiler error in kernel {names}: function(s) "
                                           f"{', '.join(left)} left after inlining (the SPMD form needs one function per kernel)",
                                           filename, 0, 0)])
    log = "\n".join(w.format() for w in warnings)
    return CompiledModule(llvm_ir=str(llmod), kernels=kernels, filename=filename,
                          options=tuple(bo.cl_options) + (f"-O{bo.opt_level}",), log=log,
                          diagnostics=warnings)
