"""Build options: an OpenCL options string (or list) -> ``BuildOptions``.

Takes what ``clBuildProgram`` takes: ``-D NAME[=VAL]``, ``-DNAME``, ``-I DIR``,
``-IDIR``, ``-O0`` .. ``-O3``, ``-w``, ``-Werror`` and the standard ``-cl-*``
options.  Gives the defines, include dirs, optimisation level, the recorded
``-cl-*`` options and warnings for options that are accepted but not honoured.
An unknown option is an error diagnostic naming it.
"""
from __future__ import annotations

import shlex
from dataclasses import dataclass, field

from .module import CompileError, Diagnostic

# -cl-* options and whether this compiler honours them
CL_OPTIONS = {
    "-cl-opt-disable": True,            # same as -O0
    "-cl-mad-enable": True,             # a*b+c may be fused (recorded; mad() is always fma)
    "-cl-no-signed-zeros": True,
    "-cl-unsafe-math-optimizations": True,
    "-cl-finite-math-only": True,
    "-cl-fast-relaxed-math": True,
    "-cl-single-precision-constant": True,
    "-cl-denorms-are-zero": False,
    "-cl-fp32-correctly-rounded-divide-sqrt": True,
    "-cl-strict-aliasing": True,
    "-cl-uniform-work-group-size": True,
    "-cl-no-subgroup-ifp": True,
    "-cl-kernel-arg-info": True,
}
CL_STD = ("CL1.0", "CL1.1", "CL1.2", "CL2.0", "CL3.0")


@dataclass
class BuildOptions:
    defines: list = field(default_factory=list)      # (name, value or None)
    include_dirs: list = field(default_factory=list)
    opt_level: int = 2
    cl_options: list = field(default_factory=list)
    cl_std: str = "CL1.2"
    warnings: list = field(default_factory=list)     # messages
    no_warnings: bool = False
    werror: bool = False
    fast_math: bool = False
    single_precision_constant: bool = False


def _err(msg):
    return CompileError([Diagnostic("error", msg, "<build options>", 0, 0)])


def parse_options(options) -> BuildOptions:
    if options is None:
        options = ()
    if isinstance(options, str):
        try:
            words = shlex.split(options)
        except ValueError as e:
            raise _err(f"malformed build options: {e}") from None
    else:
        words = []
        for w in options:
            if not isinstance(w, str):
                raise _err(f"build option {w!r} is not a string")
            words.append(w)
    bo = BuildOptions()
    i = 0
    while i < len(words):
        w = words[i]
        i += 1
        if w in ("-D", "-I"):
            if i >= len(words):
                raise _err(f"missing argument to '{w}'")
            arg = words[i]
            i += 1
            w = w + arg
        if w.startswith("-D"):
            d = w[2:]
            name, eq, val = d.partition("=")
            if not name or not (name[0].isalpha() or name[0] == "_") or not all(c.isalnum() or c == "_" for c in name):
                raise _err(f"invalid macro name in '{w}'")
            bo.defines.append((name, val if eq else None))
        elif w.startswith("-I"):
            bo.include_dirs.append(w[2:])
        elif w in ("-O0", "-O1", "-O2", "-O3"):
            bo.opt_level = int(w[2])
        elif w == "-w":
            bo.no_warnings = True
        elif w == "-Werror":
            bo.werror = True
        elif w.startswith("-cl-std="):
            std = w[len("-cl-std="):]
            if std not in CL_STD:
                raise _err(f"unknown OpenCL C version in '{w}' (expected one of {', '.join(CL_STD)})")
            bo.cl_std = std
            bo.cl_options.append(w)
            if std in ("CL2.0", "CL3.0"):
                bo.warnings.append(f"option '{w}': OpenCL C 2.0/3.0 features are not supported; compiling as OpenCL C 1.2")
        elif w in CL_OPTIONS:
            bo.cl_options.append(w)
            if not CL_OPTIONS[w]:
                bo.warnings.append(f"option '{w}' is accepted but has no effect")
            if w == "-cl-opt-disable":
                bo.opt_level = 0
            if w in ("-cl-fast-relaxed-math", "-cl-unsafe-math-optimizations", "-cl-finite-math-only"):
                bo.fast_math = True
            if w == "-cl-single-precision-constant":
                bo.single_precision_constant = True
        else:
            raise _err(f"unknown build option '{w}'")
    return bo
