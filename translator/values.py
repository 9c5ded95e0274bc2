"""Typed values of the lowering: rvalues, memory lvalues and swizzle lvalues.

Takes: cltypes.  Gives ``RV`` (a type and an llvmlite value), ``LV`` (a type
and the address of its storage) and ``SwizzleLV`` (selected components of a
vector lvalue, assignable when no component repeats).
"""
from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir

from .cltypes import CType


@dataclass
class RV:
    type: CType
    v: ir.Value
    lvalue: "object" = None        # the LV it was loaded from, if any (for arrays / & )


@dataclass
class LV:
    type: CType
    ptr: ir.Value                  # address of storage_type(type)
    const: bool = False
    space: str = "private"
    via_pointer: bool = False      # const-ness comes from the pointee (a[i], *p, p->f)


@dataclass
class SwizzleLV:
    type: CType                    # the selected type (scalar or vector)
    base: LV                       # the whole vector
    idx: tuple                     # component indices
    const: bool = False
