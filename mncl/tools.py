"""mncl.tools: the parts of pyopencl.tools that generated kernels and PyOpenCL's examples use.

VectorArg / ScalarArg and parse_arg_list (a C parameter list such as "float a, float *x" as
argument descriptions), the C name of a numpy dtype (dtype_to_ctype), the dtype registry of
struct types (get_or_register_dtype, match_dtype_to_c_struct: a numpy struct dtype and its C
declaration, for ReductionKernel / scans / arrays of structs), and get_test_platforms_and_devices.

    dt = np.dtype([("lo", np.int32), ("hi", np.int32)])
    dt, decl = match_dtype_to_c_struct(dev, "minmax", dt)      # decl: "typedef struct {...} minmax;"
    dt = get_or_register_dtype("minmax", dt)                   # now "minmax *x" parses, c_type(dt) is "minmax"
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


_NAME_TO_DTYPE: dict = {}         # registered C name -> dtype (structs, cltypes' vectors)
_DTYPE_TO_NAME: dict = {}         # registered dtype -> its first C name


def register_dtype(dtype, c_names, alias_ok=False) -> None:
    """dtype known to generated kernels by the C name(s) c_names (pyopencl.tools.register_dtype):
    a name registered to another dtype, or (without alias_ok) a dtype registered under another
    name, is a RuntimeError."""
    dtype = np.dtype(dtype)
    names = [c_names] if isinstance(c_names, str) else list(c_names)
    if not alias_ok and dtype in _DTYPE_TO_NAME and _DTYPE_TO_NAME[dtype] not in names:
        raise RuntimeError(f"dtype {dtype} is already registered as '{_DTYPE_TO_NAME[dtype]}'")
    get_or_register_dtype(names, dtype)


def get_or_register_dtype(c_names, dtype=None) -> np.dtype:
    """pyopencl.tools.get_or_register_dtype: without dtype, the dtype registered under c_names (a
    KeyError if none); with it, register dtype under the name(s) (the first becomes its C name)
    and return it, the object registered before if an equal dtype was."""
    names = [c_names] if isinstance(c_names, str) else list(c_names)
    if dtype is None:
        found = {_NAME_TO_DTYPE.get(n) or (np.dtype(_C_TYPES[n]) if n in _C_TYPES else None) for n in names}
        if None in found or len(found) != 1:
            raise KeyError(f"no dtype registered under {names}")
        return found.pop()
    dtype = np.dtype(dtype)
    if dtype in _DTYPE_TO_NAME:
        dtype = _NAME_TO_DTYPE[_DTYPE_TO_NAME[dtype]]
    for n in names:
        have = _NAME_TO_DTYPE.get(n)
        if have is None and n in _C_TYPES:
            have = np.dtype(_C_TYPES[n])
        if have is not None and have != dtype:
            raise RuntimeError(f"name '{n}' is already registered to dtype {have}")
        _NAME_TO_DTYPE.setdefault(n, dtype)
    if dtype not in _NAMES:
        _DTYPE_TO_NAME.setdefault(dtype, names[0])
    return dtype


def dtype_to_ctype(dtype) -> str:
    """The OpenCL C name of a numpy dtype: a scalar's, or a registered struct's or vector's (a
    ValueError for any other, as PyOpenCL's)."""
    dtype = np.dtype(dtype)
    name = _NAMES.get(dtype) or _DTYPE_TO_NAME.get(dtype)
    if name is None:
        raise ValueError(f"unable to map dtype '{dtype}' to an OpenCL C type (register a struct with "
                         f"mncl.tools.get_or_register_dtype)")
    return name


def c_type(dtype) -> str:
    """The OpenCL C name of a numpy dtype (dtype_to_ctype; a TypeError for an unknown one)."""
    try:
        return dtype_to_ctype(dtype)
    except ValueError as e:
        raise TypeError(str(e)) from None


def _c_field(fname, fdt) -> str:
    if fdt.subdtype is not None:
        base, shape = fdt.subdtype
        return f"{dtype_to_ctype(base)} {fname}{''.join(f'[{d}]' for d in shape)};"
    return f"{dtype_to_ctype(fdt)} {fname};"


def match_dtype_to_c_struct(device, name, dtype, context=None) -> tuple:
    """(dtype laid out as the OpenCL C struct `name` of its fields in order, that struct's C
    declaration "typedef struct {...} name;"), as pyopencl.tools.match_dtype_to_c_struct.  MNCL's
    devices lay a struct out as the host's C compiler does (docs/language.md), which is numpy's
    aligned layout; PyOpenCL measures it by running a kernel.  Fields must be scalars, registered
    types, or fixed-size arrays of them; register the result with get_or_register_dtype."""
    dtype = np.dtype(dtype)
    if dtype.names is None:
        raise ValueError(f"match_dtype_to_c_struct: {dtype} is not a struct dtype")
    fields = [(n, dtype.fields[n][0]) for n in dtype.names]
    decl = "typedef struct {\n" + "".join(f"    {_c_field(n, f)}\n" for n, f in fields) + f"}} {name};\n"
    aligned = np.dtype([(n, f) for n, f in fields], align=True)
    return aligned, decl


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
        tname = re.sub(r"^(const|__const|struct)\s+", "", tname)
        dt = _C_TYPES.get(tname, _NAME_TO_DTYPE.get(tname))
        if dt is None:
            raise ValueError(f"argument {part!r}: unknown type {tname!r} (known: {', '.join(sorted(_C_TYPES))} "
                             f"and the registered {', '.join(sorted(_NAME_TO_DTYPE)) or 'none'})")
        out.append((VectorArg if star else ScalarArg)(dt, name))
    return out


def c_params(args, offsets=False) -> str:
    """The C parameter list of a generated kernel's arguments; with offsets, each array NAME is the
    pair `NAME__mncl_base, long NAME__mncl_off` (its buffer and its first element there), which
    offset_prologue turns into the pointer NAME."""
    return ", ".join((f"__global {c_type(a.dtype)} *{a.name}__mncl_base, long {a.name}__mncl_off" if offsets
                      else f"__global {c_type(a.dtype)} *{a.name}")
                     if isinstance(a, VectorArg) else f"{c_type(a.dtype)} {a.name}" for a in args)


def offset_prologue(args, offsets=True) -> str:
    """The declarations of each array's pointer NAME at its first element (c_params(offsets=True))."""
    return " ".join(f"__global {c_type(a.dtype)} *{a.name} = {a.name}__mncl_base + {a.name}__mncl_off;"
                    for a in args if isinstance(a, VectorArg)) if offsets else ""


def has_offsets(args) -> bool:
    """Whether any Array among a call's arguments is a view starting past its buffer's start."""
    from .array import Array
    return any(isinstance(a, Array) and a.offset for a in args)


def call_args(what: str, args, specs, offsets=False) -> tuple:
    """(the first array argument, the kernel arguments) of a generated kernel's call: Arrays as their
    buffers (with offsets: each followed by its offset in elements), scalars converted to their
    declared dtype; a wrong count or kind is a TypeError naming `what` and the argument."""
    from .array import Array
    if len(args) != len(specs):
        raise TypeError(f"{what} takes {len(specs)} arguments, got {len(args)}")
    first, out = None, []
    for a, spec in zip(args, specs):
        if isinstance(spec, VectorArg):
            if not isinstance(a, Array):
                raise TypeError(f"{what}: argument '{spec.name}' must be an mncl.array.Array, got {type(a).__name__}")
            first = first or a
            out.append(a.base_data)
            if offsets:
                if a.offset % spec.dtype.itemsize:
                    raise ValueError(f"{what}: argument '{spec.name}' starts {a.offset} bytes into its buffer, "
                                     f"not a whole number of {c_type(spec.dtype)}s")
                out.append(np.int64(a.offset // spec.dtype.itemsize))
            elif a.offset:
                raise ValueError(f"{what}: argument '{spec.name}' is a view with an offset")
        else:
            out.append(np.asarray(a, spec.dtype)[()])
    return first, out


def get_test_platforms_and_devices():
    """[(platform, [devices])] for tests, as pyopencl.tools gives them: every MNCL platform."""
    from .platform import get_platforms
    return [(p, p.get_devices()) for p in get_platforms()]


def _register_vectors() -> None:
    from .cltypes import vec_types
    for (base, n), dt in vec_types.items():
        if base in _NAMES:
            get_or_register_dtype(f"{_NAMES[base]}{n}", dt)


_register_vectors()


class Variants:
    """A generated program, ``make(False)``, and its variant taking the arrays' offsets,
    ``make(True)``, built on the first call with a view that has one (every generated toolbox
    kernel keeps one)."""

    def __init__(self, ctx, make, options=None):
        from .program import Program
        self.context, self.make, self.options = ctx, make, list(options or [])
        self.source = make(False)
        self._built = {False: Program(ctx, self.source).build(options=self.options)}

    def __call__(self, offsets: bool):
        from .program import Program
        if offsets not in self._built:
            self._built[offsets] = Program(self.context, self.make(offsets)).build(options=self.options)
        return self._built[offsets]
