"""What the front end gives the runtime: a compiled module and its kernels' signatures.

This is the contract between translator/ (which builds it) and mncl/ (whose
devices run it).  ``translator.compile_opencl(source, ...)`` returns a
``CompiledModule`` or raises ``CompileError``.

The work-group ABI (``mode="workgroup"``, what the CPU device runs)
-------------------------------------------------------------------
For each kernel ``K`` the optimised IR defines

    void K__wg(i8** args, i64* wg)

which executes every work-item of one work-group, barriers included.
``args[i]`` points to: the first byte of the buffer for a ``__global`` or
``__constant`` pointer parameter; a zeroed scratch area of the requested
size for a ``__local`` pointer parameter (``LocalMemory``); the scalar's
bytes (host byte order, the C type's size and alignment) for a by-value
parameter.  ``wg`` points to 17 int64 values:

    wg[0]      work_dim (1..3)
    wg[1..3]   global size per dimension     (unused dimensions: 1)
    wg[4..6]   local size per dimension      (unused dimensions: 1)
    wg[7..9]   this group's id per dimension (unused dimensions: 0)
    wg[10..12] global offset per dimension   (unused dimensions: 0)
    wg[13..15] number of groups per dimension
    wg[16]     the address of two int64 status words, zero on entry: an index outside a private
               or __local array calls ``mncl_oob_abort(status, message, index)``, which stores
               the address of a NUL-terminated "file:line:col: the private array 'p' (8
               elements)" and the index there and does not return (the device defines it and
               leaves the launch's work-groups: mncl/cpu_faults.py)

The kernel's ``__local`` arrays declared in its body are allocated inside
``K__wg`` (one copy per call, i.e. per work-group).  The device may call
``K__wg`` for different groups concurrently from several threads.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Diagnostic:
    """One compiler message, located in the user's source."""

    severity: str            # "error" | "warning" | "note" | "remark" (mncl-cc --stats: slow data movement)
    message: str
    filename: str
    line: int
    column: int
    source_line: str = ""    # the text of that line, for the caret display

    def format(self) -> str:
        """``kernel.cl:12:17: error: use of undeclared identifier 'nn'`` plus the line and a caret."""
        head = f"{self.filename}:{self.line}:{self.column}: {self.severity}: {_clip(self.message, 0, 400)[0]}"
        if not self.source_line:
            return head
        line, col = _clip(self.source_line.rstrip(), max(self.column - 1, 0), QUOTE_COLUMNS)
        return f"{head}\n{line}\n{' ' * col}^"


QUOTE_COLUMNS = 160     # of a source line quoted under a diagnostic (a line may be a whole file)


def _clip(text: str, col: int, width: int):
    """At most ``width`` characters of ``text`` around column ``col`` (elided ends marked ``...``),
    control characters shown as '?', and the column's place in the result."""
    text = "".join(c if c.isprintable() or c == "\t" else "?" for c in text[max(col - width, 0):col + width])
    col = min(col, width)
    if len(text) <= width:
        return text, col
    start = min(max(col - width // 2, 0), len(text) - width)
    out = text[start:start + width]
    if start > 0:
        out = "..." + out[3:]
    if start + width < len(text):
        out = out[:-3] + "..."
    return out, col - start


class CompileError(Exception):
    """A build failed: carries every diagnostic and the formatted log."""

    def __init__(self, diagnostics: list[Diagnostic]):
        self.diagnostics = list(diagnostics)
        self.log = "\n".join(d.format() for d in self.diagnostics)
        super().__init__(self.log)


@dataclass(frozen=True)
class ParamInfo:
    name: str
    kind: str                # "global" | "constant" | "local" | "scalar"
    type_name: str           # the C spelling: "float", "uint", "float4", "struct particle"
    dtype: str               # numpy dtype string of the scalar or of the pointee element ("float32", "int32", ...);
                             # for a struct, a numpy dtype description as str(np.dtype(...).descr)
    size: int                # bytes of the by-value scalar, or of one pointee element
    is_const: bool = False   # pointee is const
    split: bool = False      # a task kernel's DRAM_SPLIT buffer: part g of it in group g's DRAM


@dataclass(frozen=True)
class KernelInfo:
    name: str
    params: tuple            # of ParamInfo, in order
    wg_function: str         # symbol of the work-group function in the IR ("<name>__wg")
    uses_barrier: bool = False
    local_mem_bytes: int = 0           # static __local arrays in the body
    reqd_work_group_size: tuple | None = None
    task: bool = False                 # a task kernel (translator/task.py): runs once on the whole machine
    # the work-group function's stack (K__wg; its own allocas, not those of inlined helpers): a fixed
    # part, and a part per work-item of the group (barrier kernels keep private values across regions)
    private_bytes: int = 0
    item_private_bytes: int = 0


@dataclass
class CompiledModule:
    llvm_ir: str                       # the optimised LLVM IR, as text
    kernels: dict                      # name -> KernelInfo
    filename: str = "<kernel>"
    options: tuple = ()
    log: str = ""                      # warnings, formatted like errors
    diagnostics: list = field(default_factory=list)
    task_text: str = ""                # the preprocessed source, when it has task kernels (compiled per machine)
    task_sources: dict = field(default_factory=dict)   # ... and the lines of each file it read (diagnostics)
    restrict_ir: str = ""              # SPMD: the IR with every kernel's buffer parameters as if restrict
                                       # (translator/restrict.py), "" when no kernel's function differs
    restrict_kernels: tuple = ()       # ... the kernels whose function differs (their "-noalias" builds read it)
