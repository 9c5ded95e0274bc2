"""Math builtins as sequences of machine instructions (see docs/language.md for their accuracy).

``lower_math(cg, name, ty, args)`` gives the Val of ``name(args)`` for an LLVM
intrinsic's base name (``exp`` for ``llvm.exp.f32``) or a library function
(``tanhf``), or None when the function is not one of these.
"""
from __future__ import annotations


def lower_math(cg, name: str, ty: str, args: list):
    return None
