"""mncl.tools: the parts of pyopencl.tools that generated kernels and PyOpenCL's examples use.

VectorArg / ScalarArg and parse_arg_list (a C parameter list such as "float a, float *x" as
argument descriptions), the C name of a numpy dtype, and get_test_platforms_and_devices.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

_C_TYPES = {
    "char": np.int8, "signed char": np.int8, "uchar": np.uint8, "unsigned char": np.uint8,
    "short": np.int16, "ushort": np.uint16, "unsigned short": np.uint16,
    "int": np.int32, "uint": np.uint32, "unsigned": np.uint32, "unsigned int": np.uint32,
    "long": np.int64, "ulong": np.uint64, "unsigned long": np.uint64,
    "float": np.float32, "double": np.float64, "bool": np.int8,
}
_NAMES = {np.dtype(np.int8): "char", np.dtype(np.uint8): "uchar", np.dtype(np.int16): "short",
          np.dtype(np.uint16): "ushort", np.dtype(np.int32): "int", np.dtype(np.uint32): "uint",
          np.dtype(np.int64): "long", np.dtype(np.uint64): "ulong", np.dtype(np.float32): "float",
          np.dtype(np.float64): "double"}


@dataclass(frozen=True)
class _Arg:
    dtype: np.dtype
    name: str

    def __init__(self, dtype, name, **kwargs):
        object.__setattr__(self, "dtype", np.dtype(dtype))
        object.__setattr__(self, "name", name)


class VectorArg(_Arg):
    """A __global pointer argument: an mncl.array.Array at the call."""


class ScalarArg(_Arg):
    """A by-value argument."""


def c_type(dtype) -> str:
    """The OpenCL C name of a scalar numpy dtype."""
    dtype = np.dtype(dtype)
    if dtype not in _NAMES:
        raise TypeError(f"no OpenCL C scalar type for numpy dtype {dtype}")
    return _NAMES[dtype]


def parse_arg_list(arguments) -> list:
    """A C parameter list ("float a, __global const float *x") or a list of VectorArg / ScalarArg
    as a list of VectorArg / ScalarArg; an unknown type or a malformed parameter is a ValueError
    naming it."""
    if not isinstance(arguments, str):
        args = list(arguments)
        bad = [a for a in args if not isinstance(a, (VectorArg, ScalarArg))]
        if bad:
            raise ValueError(f"arguments must be VectorArg / ScalarArg, got {bad[0]!r}")
        return args
    out = []
    for part in (p.strip() for p in arguments.split(",")):
        if not part:
            continue
        m = re.fullmatch(r"((?:__global|global|const|__const|restrict|__restrict)\s+)*"
                         r"([A-Za-z_][A-Za-z_0-9 ]*?)\s*(\*?)\s*(?:restrict\s+|__restrict\s+)?([A-Za-z_]\w*)", part)
        if m is None:
            raise ValueError(f"cannot read the argument {part!r} (want e.g. 'float a' or 'float *x')")
        tname, star, name = " ".join(m.group(2).split()), m.group(3), m.group(4)
        tname = re.sub(r"^(const|__const)\s+", "", tname)
        if tname not in _C_TYPES:
            raise ValueError(f"argument {part!r}: unknown type {tname!r} (known: {', '.join(sorted(_C_TYPES))})")
        out.append((VectorArg if star else ScalarArg)(_C_TYPES[tname], name))
    return out


def c_params(args) -> str:
    """The C parameter list of a generated kernel's arguments."""
    return ", ".join(f"__global {c_type(a.dtype)} *{a.name}" if isinstance(a, VectorArg)
                     else f"{c_type(a.dtype)} {a.name}" for a in args)


def call_args(what: str, args, specs) -> tuple:
    """(the first array argument, the kernel arguments) of a generated kernel's call: Arrays as their
    buffers, scalars converted to their declared dtype; a wrong count or kind is a TypeError
    naming `what` and the argument."""
    from .array import Array
    if len(args) != len(specs):
        raise TypeError(f"{what} takes {len(specs)} arguments, got {len(args)}")
    first, out = None, []
    for a, spec in zip(args, specs):
        if isinstance(spec, VectorArg):
            if not isinstance(a, Array):
                raise TypeError(f"{what}: argument '{spec.name}' must be an mncl.array.Array, got {type(a).__name__}")
            first = first or a
            out.append(a.data)
        else:
            out.append(np.asarray(a, spec.dtype)[()])
    return first, out


def get_test_platforms_and_devices():
    """[(platform, [devices])] for tests, as pyopencl.tools gives them: every MNCL platform."""
    from .platform import get_platforms
    return [(p, p.get_devices()) for p in get_platforms()]
