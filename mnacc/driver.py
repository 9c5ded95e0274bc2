"""From a C program to what runs it: the host C, each loop's MNCL C, and what the runtime needs.

``compile_program`` is mnacc's front end as a function: parse, analyse, generate.  The result
(``Compiled``) is plain data (``to_json``), so ``mnacc -o host.py`` can write it into a Python
program that runs it later through the same runtime (mnacc/runtime.py).
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

from . import host, kernels, loops, source


@dataclass
class LoopInfo:
    """One marked loop, as the runtime sees it."""
    index: int
    where: str                  # "prog.c:27"
    kernel: str                 # the kernel's name; "<kernel>_combine" folds the reductions
    source: str                 # its MNCL C
    vars: list                  # in the host's order: {name, role, dtype, dims, written, op}
    counters: list              # {name, dtype, start_arg}: start_arg when the start is passed in
    grid: list                  # per counter, the extent a launch may span (loops._grid), or []


@dataclass
class Compiled:
    path: str
    host_c: str
    loops: list = field(default_factory=list)
    warnings: list = field(default_factory=list)     # formatted diagnostics
    defines: list = field(default_factory=list)
    includes: list = field(default_factory=list)

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1)

    @classmethod
    def from_json(cls, text: str) -> "Compiled":
        d = json.loads(text)
        d["loops"] = [LoopInfo(**x) for x in d["loops"]]
        return cls(**d)


def compile_program(path: str, defines=(), includes=()) -> Compiled:
    """The program at path, compiled; MnaccError (every diagnostic, located) if it cannot be."""
    prog = source.load(path, defines, includes)
    analysis = loops.analyse(prog)
    out = Compiled(path, host.host_source(prog, analysis), defines=list(defines), includes=list(includes))
    for loop in analysis.loops:
        out.warnings += [w.format() for w in loop.warnings]
        c = loop.pragma_node.coord
        out.loops.append(LoopInfo(
            loop.index, f"{c.file or path}:{c.line}", loop.name, kernels.kernel_source(loop, analysis, path),
            [dict(name=v.name, role=v.role, dtype=v.ctype.dtype.str, dims=v.ctype.dims, written=v.written, op=v.op,
                  snapshot=v.snapshot)
             for v in host.arg_order(loop)],
            [dict(name=k.name, dtype=k.ctype.dtype.str, start_arg=loops.const_int(k.lo) is None)
             for k in loop.counters], loop.grid))
    return out
