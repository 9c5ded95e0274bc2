"""LLVM types as the IR spells them -> their layout in memory, from LLVM itself.

Takes a type's text (``{ i8, <4 x float>, double }``, ``[3 x float]``, ``i32``);
gives its size, alignment, the (type, byte offset) of each field and the flat
list of its scalar *leaves* with their offsets.  Sizes and offsets are what
LLVM's data layout says (the one the front end compiled with,
``cltypes.target_data``), so the backend agrees with the CPU device and with
the host's numpy structs on padding, vector alignment and array strides; no
layout rule is written out here.
"""
from __future__ import annotations

from functools import lru_cache

from .emitter import CodegenError
from .irread import Unsupported


@lru_cache(maxsize=None)
def _ref(ty: str):
    """The TypeRef of ``ty`` (the type of a one-line module's external global)."""
    import llvmlite.binding as llvm
    from .. import llvm_lock
    with llvm_lock:
        try:
            mod = llvm.parse_assembly(f"@g = external global {ty}")
        except RuntimeError:
            raise Unsupported(f"type '{ty}' is not supported on the emulator device") from None
        return mod, mod.get_global_variable("g").global_value_type      # the module keeps the type alive


def _td():
    from ..cltypes import target_data
    return target_data()


@lru_cache(maxsize=None)
def size(ty: str) -> int:
    """Bytes one value of ``ty`` takes in memory (LLVM's ABI size: a GEP's stride)."""
    return _td().get_abi_size(_ref(ty.strip())[1])


@lru_cache(maxsize=None)
def align(ty: str) -> int:
    return _td().get_abi_alignment(_ref(ty.strip())[1])


def is_aggregate(ty: str) -> bool:
    return ty.strip()[:1] in ("{", "[")


def element(ty: str) -> str:
    """The element type of an array or vector type."""
    return str(next(iter(_ref(ty.strip())[1].elements)))


def element_type(ty: str, idx):
    """(element type, field offset or None) of indexing aggregate `ty` with `idx` (a struct field
    needs a constant index), or None."""
    ty = ty.strip()
    if ty.startswith("[") or ty.startswith("<"):
        return element(ty), None
    if ty.startswith("{") and idx is not None:
        return fields(ty)[idx]
    return None


@lru_cache(maxsize=None)
def fields(ty: str) -> tuple:
    """((field type, byte offset), ...) of a struct, array or vector type."""
    t = _ref(ty.strip())[1]
    elems = [str(e) for e in t.elements]
    if t.is_struct:
        if t.is_packed_struct:
            raise Unsupported(f"packed struct '{ty}' is not supported on the emulator device")
        return tuple((e, _td().get_element_offset(t, k)) for k, e in enumerate(elems))
    stride = size(elems[0])
    return tuple((elems[0], k * stride) for k in range(t.element_count))


@lru_cache(maxsize=None)
def leaves(ty: str) -> tuple:
    """((scalar type, byte offset), ...) of every scalar inside ``ty``, in order."""
    ty = ty.strip()
    if ty[:1] not in ("{", "[", "<"):
        return ((ty, 0),)
    return tuple((s, off + o) for f, off in fields(ty) for s, o in leaves(f))


def field_range(ty: str, idx: int) -> tuple:
    """(first leaf, leaf count, field type) of field ``idx`` of aggregate ``ty``."""
    fs = fields(ty)
    first = sum(len(leaves(f)) for f, _ in fs[:idx])
    return first, len(leaves(fs[idx][0])), fs[idx][0]


def odd_int(ty: str) -> bool:
    """An integer type of a width the backend does not compute in directly (i33, i24, i48 ...)."""
    return ty[:1] == "i" and ty[1:].isdigit() and ty not in ("i1", "i8", "i16", "i32", "i64")


def container_int(ty: str) -> str:
    """The width an odd-width integer is computed in."""
    n = int(ty[1:])
    if n > 64:
        raise CodegenError(f"integers of type {ty} are not supported on the emulator device")
    return "i64" if n > 32 else "i32"


def type_size(ty: str) -> int:
    """Bytes a value of ``ty`` takes in memory (LLVM's own layout, see irtypes)."""
    try:
        return size(ty)
    except Unsupported as e:
        raise CodegenError(str(e)) from None
