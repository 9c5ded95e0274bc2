"""mncl-cc: the compiler driver, OpenCL C -> .mnb program (or assembly, or LLVM IR).

  mncl-cc KERNEL.cl [-o OUT] [-S | --emit-llvm] [-O0..-O3] [-D NAME[=VAL]]... [-I DIR]...
          [--machine NAME|FILE.toml] [-k KERNEL]... [--mode 1d|1d-n2|1d-n4|1d-n8|nd|rows] [-X OPTION]... [-w] [-Werror] [--stats]

Takes one source file ('-' reads standard input) and runs the stages of
translator/ in order: ``compile_opencl(spmd=True)`` (front end, lowering,
optimisation) then, per selected kernel, ``backend.compile_kernel`` for the
machine; gives one output file like gcc: ``KERNEL.mnb`` (container.py),
``KERNEL.vsm`` with -S, ``KERNEL.ll`` with --emit-llvm, named after the input's
basename in the current directory unless -o says otherwise ('-o -' is standard
output).

Diagnostics go to standard error as ``file:line:col: error: message`` with the
source line and a caret.  Exit status: 0 success (warnings may be printed),
1 the input does not compile (or cannot be read, or -k names no kernel of it),
2 bad usage (unknown option, bad -O level, unknown machine), 70 an internal
error of the compiler (reported in one line; MNCL_CC_TRACEBACK=1 shows the
traceback).
"""
from __future__ import annotations

import os
import re
import sys
import time

import click

EXIT_COMPILE = 1
EXIT_INTERNAL = 70          # EX_SOFTWARE (sysexits.h)
PROG = "mncl-cc"

_LINE_MARK = re.compile(r"@L(\d+)\b")


# -- helpers the driver's outputs use ----------------------------------------------------------

def annotate_source_lines(asm: str, source: str) -> str:
    """Append the C text of line n to every assembly line whose comment carries ``@L<n>``.

    ``    fvadd $lr0v $lr8v $lr16v  # @L12`` becomes
    ``    fvadd $lr0v $lr8v $lr16v  # @L12  y[i] = a * x[i] + y[i];``.
    Lines without the marker, markers past the end of the source, and lines that already
    carry text after the marker are left as they are.
    """
    src = source.splitlines()
    out = []
    for line in asm.split("\n"):
        _, hash_, comment = line.partition("#")
        m = _LINE_MARK.search(comment) if hash_ else None
        if m and comment[m.end():].strip() == "":
            n = int(m.group(1))
            text = src[n - 1].strip() if 0 < n <= len(src) else ""
            if text:
                line = f"{line.rstrip()}  {text}"
        out.append(line)
    return "\n".join(out)


def count_steps(asm: str) -> int:
    """Instruction lines of a VSM program: not blank, not a comment, not a directive (.block, .call ...)."""
    n = 0
    for line in asm.splitlines():
        code = line.split("#", 1)[0].strip()
        if code and not code.startswith("."):
            n += 1
    return n


def _param_text(p: dict, task=False) -> str:
    dram = "DRAM_SPLIT " if p.get("split") else "DRAM "
    space = {"global": dram if task else "__global ", "constant": "__constant ", "local": "__local "}.get(p["kind"])
    if space is None:
        return f"{p['type_name']} {p['name']}"
    const = "const " if p.get("is_const") else ""
    return f"{space}{const}{p['type_name']} *{p['name']}"


def kernel_header(kb, source_name: str) -> str:
    """The comment block -S puts before each kernel's program."""
    params = ", ".join(_param_text(p, kb.mode == "task") for p in kb.params)
    return "\n".join([
        f"# ==== {'task ' if kb.mode == 'task' else ''}kernel {kb.name} ====",
        f"# {kb.name}({params})",
        f"# source: {source_name}  machine: {kb.machine}  mode: {kb.mode}",
        f"# registers: {kb.registers} (peak live vector registers)  steps: {count_steps(kb.asm)}  "
        f"flops/work-item: {kb.flops_per_item}",
        f"# sequencer args: {' '.join('%' + a for a in kb.args)}",
    ])


def format_diagnostic(d) -> str:
    """gcc's form; a diagnostic with no line (build options, whole kernel) has no ':0:0'."""
    if d.line and d.column:
        return d.format()
    if d.line:
        return f"{d.filename}:{d.line}: {d.severity}: {d.message}"
    return f"{d.filename}: {d.severity}: {d.message}"


# -- the command ---------------------------------------------------------------------------------

class _Fail(Exception):
    """An error already worded for the user; exit with `status`."""

    def __init__(self, message: str, status: int = EXIT_COMPILE):
        super().__init__(message)
        self.status = status


def _error(msg: str) -> None:
    click.echo(f"{PROG}: error: {msg}", err=True)


def _default_output(input_name: str, ext: str) -> str:
    if input_name == "-":
        return "a" + ext
    base = os.path.basename(input_name)
    stem, dot, _ = base.rpartition(".")
    return (stem if dot and stem else base) + ext


def _write_text(path: str, text: str) -> None:
    if path == "-":
        click.echo(text, nl=not text.endswith("\n"))
        return
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        raise _Fail(f"cannot write {path}: {e.strerror or e}") from None


def _read_source(path: str) -> "tuple[str, str]":
    from emulator.inputs import InputError, read_input, read_stream

    from .limits import MAX_SOURCE_BYTES
    name = "<stdin>" if path == "-" else path
    try:
        if path == "-":
            data = read_stream(sys.stdin.buffer, MAX_SOURCE_BYTES, name, "a kernel source")
        else:
            data = read_input(path, MAX_SOURCE_BYTES, "a kernel source")
    except InputError as e:
        raise _Fail(str(e)) from None
    try:
        return data.decode("utf-8"), name
    except UnicodeDecodeError as e:
        raise _Fail(f"{name}: not UTF-8 text (byte {e.start}): a kernel source is text") from None


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("source", metavar="KERNEL.cl", type=click.Path(dir_okay=True, allow_dash=True))
@click.option("-o", "output", metavar="OUT", help="output file ('-' = standard output; "
              "default: the input's basename with .mnb/.vsm/.ll, in the current directory)")
@click.option("-S", "asm", is_flag=True, help="write the assembly (.vsm) instead of an .mnb")
@click.option("--emit-llvm", is_flag=True, help="write the optimised LLVM IR (.ll) instead of an .mnb")
@click.option("-O", "opt", type=click.Choice(["0", "1", "2", "3"]), default="2", show_default=True,
              metavar="LEVEL", help="optimisation level: -O0 .. -O3")
@click.option("-D", "defines", multiple=True, metavar="NAME[=VAL]", help="define a macro")
@click.option("-I", "includes", multiple=True, metavar="DIR", help="add DIR to the #include search path")
@click.option("-X", "--build-option", "extra", multiple=True, metavar="OPTION",
              help="pass an OpenCL build option, e.g. -X -cl-fast-relaxed-math")
@click.option("-w", "no_warnings", is_flag=True, help="suppress warnings")
@click.option("-Werror", "werror", is_flag=True, help="make warnings errors")
@click.option("--machine", default="mncore2", show_default=True, metavar="NAME|FILE",
              help="preset (mncore2, tiny) or machine TOML file")
@click.option("-k", "--kernel", "kernels", multiple=True, metavar="KERNEL",
              help="compile only this kernel (repeatable; default: all)")
@click.option("--mode", type=click.Choice(["1d", "1d-n2", "1d-n4", "1d-n8", "nd", "groups", "rows"]), default="1d",
              show_default=True, help="launch shape the code is specialised for (1d: contiguous fast paths; "
                                      "1d-n<f>: a wave f times narrower, for launches of at most 1/f of one; "
                                      "groups: an N-D launch of whole work-groups, each a run of slots in one "
                                      "L2B; rows: a 2-D launch run flat in row-major order, whose pitches equal "
                                      "the global size in x)")
@click.option("--noalias", is_flag=True, help="compile, for the kernels it changes, the build that assumes the "
              "buffers bound to the pointer parameters do not overlap (mode suffix -noalias: what the runtime "
              "runs when a launch's buffers are pairwise disjoint)")
@click.option("--stats", is_flag=True, help="print per-kernel steps, registers, flops and compile time to stderr")
@click.version_option(package_name="mncl-sdk", prog_name=PROG)
def main(source, output, asm, emit_llvm, opt, defines, includes, extra, no_warnings, werror, machine,
         kernels, mode, noalias, stats):
    """Compile the OpenCL C kernels in KERNEL.cl for an MN-Core-style machine."""
    try:
        status = _run(source, output, asm, emit_llvm, opt, defines, includes, extra, no_warnings, werror,
                      machine, kernels, mode, stats, noalias)
    except _Fail as e:
        _error(str(e))
        status = e.status
    except (click.exceptions.Exit, click.ClickException, KeyboardInterrupt):
        raise
    except Exception as e:                   # a bug in the compiler, not in the user's input
        if os.environ.get("MNCL_CC_TRACEBACK"):
            raise
        click.echo(f"{PROG}: internal error: {type(e).__name__}: {e}", err=True)
        status = EXIT_INTERNAL
    sys.exit(status)


def _run(source, output, asm, emit_llvm, opt, defines, includes, extra, no_warnings, werror, machine,
         kernels, mode, stats, noalias=False) -> int:
    from . import CompileError, compile_opencl
    from .module import Diagnostic

    options = [f"-O{opt}"]
    for d in defines:
        options += ["-D", d]
    for i in includes:
        options += ["-I", i]
    options += list(extra)
    if no_warnings:
        options.append("-w")
    if werror:
        options.append("-Werror")

    mach = None
    if not emit_llvm:                        # a bad --machine is a usage error, found before compiling
        from emulator.errors import MachineError
        from emulator.machine import load_machine
        try:
            mach = load_machine(machine)
        except MachineError as e:
            raise click.BadParameter(str(e), param_hint="'--machine'") from None

    text, name = _read_source(source)
    t0 = time.perf_counter()
    try:
        module = compile_opencl(text, filename=name, options=options, spmd=True)
    except CompileError as e:
        for d in e.diagnostics:
            click.echo(format_diagnostic(d), err=True)
        return EXIT_COMPILE
    t_front = time.perf_counter() - t0
    for d in module.diagnostics:
        click.echo(format_diagnostic(d), err=True)

    available = list(module.kernels)
    unknown = [k for k in kernels if k not in module.kernels]
    if unknown:
        raise _Fail(f"no kernel named {', '.join(repr(k) for k in unknown)} in {name} "
                    f"(available: {', '.join(available) or 'none'})")
    selected = list(dict.fromkeys(kernels)) if kernels else available

    if emit_llvm:
        _write_text(output or _default_output(source, ".ll"), module.llvm_ir)
        if stats:
            click.echo(f"{name}: front end {t_front * 1e3:.1f} ms", err=True)
        return 0
    if not selected:
        raise _Fail(f"{name} defines no __kernel function")

    from .backend import compile_kernel
    from .backend.abi import NOALIAS
    binaries, times = [], []
    for k in selected:
        t1 = time.perf_counter()
        try:
            binaries.append(compile_kernel(module, k, mach, mode=mode + (
                NOALIAS if noalias and k in module.restrict_kernels else "")))
        except CompileError as e:
            for d in e.diagnostics:
                click.echo(format_diagnostic(d), err=True)
            return EXIT_COMPILE
        times.append(time.perf_counter() - t1)

    if asm:
        parts = []
        for kb in binaries:
            parts.append(kernel_header(kb, name) + "\n" + annotate_source_lines(kb.asm, text).rstrip("\n") + "\n")
        _write_text(output or _default_output(source, ".vsm"), "\n".join(parts))
    else:
        import hashlib
        from .container import write_mnb
        out = output or _default_output(source, ".mnb")
        try:
            write_mnb(out, binaries, machine=mach, source=name,
                      source_sha256=hashlib.sha256(text.encode()).hexdigest(), options=options)
        except OSError as e:
            raise _Fail(f"cannot write {out}: {e.strerror or e}") from None

    if stats:
        click.echo(f"{name}: front end {t_front * 1e3:.1f} ms (all kernels), machine {mach.name}", err=True)
        click.echo(f"{'kernel':<24} {'steps':>7} {'registers':>9} {'flops/item':>10} {'backend ms':>10}", err=True)
        for kb, t in zip(binaries, times):
            click.echo(f"{kb.name:<24} {count_steps(kb.asm):>7} {kb.registers:>9} {kb.flops_per_item:>10} "
                       f"{t * 1e3:>10.1f}", err=True)
        _print_accesses(module, binaries, name)
        for kb in binaries:             # what will be slow, and why (as clang's remarks)
            for line, msg in kb.remarks:
                click.echo(format_diagnostic(Diagnostic("remark", f"kernel '{kb.name}': {msg}", name, line, 0)),
                           err=True)
    return 0


def _print_accesses(module, binaries, name):
    """Each memory access of each kernel, beside its C line: its class (translator/backend/access.py),
    the loop it moves in, and how the kernel moves its data (a gather where the backend said so)."""
    from .backend import ir_text
    from .backend.abi import flat_rows, one_d, restricted
    from .backend.access import analyse
    from .backend.irread import read_function
    for kb in binaries:
        info = module.kernels[kb.name]
        if info.task:
            continue
        moved = {}                      # (line, buffer, load|store) -> how the remark says it moves
        for line, msg in kb.remarks:
            buf = msg.split("'")[1] if msg.count("'") >= 2 else None
            kind = "load" if " load from " in f" {msg} " else "store"
            scope = "whole-buffer" if "all of the buffer" in msg else "wave-span"
            moved[(line, buf, kind)] = f"{scope} {'gather' if kind == 'load' else 'scatter'} (see the remark)"
        plans = {(line, buf, kind): plan for line, buf, kind, plan in kb.plans}     # ("rows" builds)
        click.echo(f"kernel '{kb.name}' ({kb.mode}): memory accesses", err=True)
        if kb.name in module.restrict_kernels:     # translator/restrict.py
            click.echo("  " + ("built assuming its buffers do not overlap (launches whose buffers do run this build)"
                               if restricted(kb.mode) else
                               "its buffers may overlap, so LLVM keeps accesses it could move (launches whose buffers "
                               "are disjoint run the -noalias build: --noalias shows it)"), err=True)
        for a in analyse(read_function(ir_text(module, kb.name, kb.mode), info.wg_function), info.params,
                         kb.skewed, one_d(kb.mode) or flat_rows(kb.mode)):
            where = f" in the loop at line {a.loop_line}" if a.loop else ""
            how = plans.get((a.line, a.buffer, a.kind)) or moved.get((a.line, a.buffer, a.kind), "")
            extra = f" ({a.why})" if a.why else ""
            click.echo(f"  {name}:{a.line}: {a.kind} {a.buffer} ({a.space}, {a.elem} B): {a.cls}{where}{extra}"
                       + (f"; {how}" if how else ""), err=True)


if __name__ == "__main__":  # pragma: no cover
    main()
