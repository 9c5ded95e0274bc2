"""Task kernels' front end: the dialect's types and a task kernel's signature.

A task kernel (``__task void f(...)``, docs/language.md "Task kernels") runs once
on the whole machine with explicit data movement; it is compiled per machine by
translator/backend/task.py.  What the front end needs of it lives here: the
type names the dialect adds (declared for the parser by ``PRELUDE``), what each
means (``ELEMS``: the scalar elements DRAM / L2BM / L1BM pointers address;
``VECS``: the per-PE vector types), and ``signature``, the parameters the
runtime checks a launch against.
"""
from __future__ import annotations

from dataclasses import dataclass

from pycparser import c_ast

from . import cltypes as T
from .module import CompileError, KernelInfo, ParamInfo
from .srcloc import SourceMap


def _ctype(name):
    """The front end's type (cltypes) of a dialect scalar; mnhalf is a half in ushort bits."""
    return T.USHORT if name == "mnhalf" else T.type_by_name(name)


# the element types DRAM / L2BM / L1BM pointers address, with the precision letter of the
# reduce operations on them (mn_reduce; None: not reducible)
_REDUCE_PREFIX = {"mnhalf": "h", "float": "f", "double": "d", "int": "i", "uint": "i", "long": "l", "ulong": "l",
                  "short": "s", "ushort": "s", "char": None, "uchar": None}
ELEMS = {n: (_ctype(n).size(), _ctype(n).np_dtype(), p) for n, p in _REDUCE_PREFIX.items()}   # (bytes, dtype, prefix)
SCALARS = {n: _ctype(n).np_dtype() for n in ("int", "uint", "long", "ulong", "size_t")}       # scalar parameters


@dataclass(frozen=True)
class VecType:
    name: str
    prec: str            # ALU/MAU precision letter of its lanes
    slots: int           # 4-long-word registers it takes (mnfloat16: 2, as $ll operands)
    elem: str            # the pointer element type it loads from / stores to
    uniform: bool = False    # one long word, read in every cycle (mnhalf4, mnfloat2)

    @property
    def words(self):
        return 2 if self.uniform else 8 * self.slots


VECS = {"mnhalf16": VecType("mnhalf16", "h", 1, "mnhalf"), "mnfloat8": VecType("mnfloat8", "f", 1, "float"),
        "mnint8": VecType("mnint8", "i", 1, "int"), "mnlong4": VecType("mnlong4", "l", 1, "long"),
        "mnfloat16": VecType("mnfloat16", "f", 2, "float"),
        "mnhalf4": VecType("mnhalf4", "h", 1, "mnhalf", True), "mnfloat2": VecType("mnfloat2", "f", 1, "float", True)}
VEC_OF_ELEM = {"mnhalf": "mnhalf16", "float": "mnfloat8", "int": "mnint8", "uint": "mnint8",
               "long": "mnlong4", "ulong": "mnlong4"}


# The task dialect's type names, declared for the parser ahead of a source that has a __task
# kernel; what they mean is this module's business (VECS).
PRELUDE = """#line 1 "<mncl task types>"
typedef ushort mnhalf;
typedef struct __mn_vector mnhalf16;
typedef struct __mn_vector mnfloat8;
typedef struct __mn_vector mnint8;
typedef struct __mn_vector mnlong4;
typedef struct __mn_vector mnfloat16;
typedef struct __mn_vector mnhalf4;
typedef struct __mn_vector mnfloat2;
typedef struct __mn_event mn_event;
"""


def task_functions(ast):
    """The __task function definitions of a translation unit."""
    return [e for e in ast.ext if isinstance(e, c_ast.FuncDef) and "__task" in (e.decl.funcspec or [])]


def type_name(tnode):
    """The name of a declaration's base type, spelt as the front end spells it (``unsigned long
    int`` -> ``ulong``: cltypes); a typedef or dialect name as written; None for a struct."""
    t = tnode
    while isinstance(t, (c_ast.TypeDecl, c_ast.PtrDecl, c_ast.ArrayDecl)):
        t = t.type
    if isinstance(t, c_ast.IdentifierType):
        ct = T.c_specifiers_type(t.names) if len(t.names) > 1 or t.names[0] in ("unsigned", "signed") else None
        return ct.name if ct is not None else " ".join(t.names)
    return None


def qualifiers(tnode):
    """The qualifiers of a declaration and of what it points to or holds (const, DRAM, L2BM...)."""
    q = set()
    t = tnode
    while isinstance(t, (c_ast.TypeDecl, c_ast.PtrDecl, c_ast.ArrayDecl)):
        q |= set(getattr(t, "quals", None) or ())
        t = t.type
    return q


def signature(fdef, filename, sources=None, colmap=None) -> KernelInfo:
    """The parameters of a task kernel, as the runtime checks them; a bad one is a CompileError
    at its place (``sources`` and ``colmap`` as the lowering has them: srcloc.SourceMap)."""
    name = fdef.decl.name
    where = SourceMap(filename, sources or {}, colmap)

    def error(pd, msg):
        return CompileError([where.diag(pd, msg)])

    params = []
    plist = fdef.decl.type.args.params if fdef.decl.type.args else []
    for pd in plist:
        if isinstance(pd, c_ast.EllipsisParam) or pd.name is None:
            if type_name(pd.type) == "void" and not isinstance(pd.type, c_ast.PtrDecl):
                continue
            raise error(pd, f"task kernel '{name}': every parameter needs a name")
        tn = type_name(pd.type)
        if isinstance(pd.type, c_ast.PtrDecl):
            q = qualifiers(pd.type) | set(pd.quals or ())
            if not q & {"DRAM", "DRAM_SPLIT"}:
                raise error(pd, f"task kernel parameter '{pd.name}' must point to DRAM "
                                f"(write 'DRAM {tn} *{pd.name}')")
            if tn not in ELEMS:
                raise error(pd, f"task kernel parameter '{pd.name}': DRAM pointers to '{tn}' are not "
                                f"supported (element types: {', '.join(ELEMS)})")
            size, dt, _ = ELEMS[tn]
            params.append(ParamInfo(pd.name, "global", tn, dt, size, "const" in q, "DRAM_SPLIT" in q))
        elif tn in SCALARS:
            dt = SCALARS[tn]
            params.append(ParamInfo(pd.name, "scalar", tn, dt, 8 if "64" in dt else 4))
        else:
            raise error(pd, f"task kernel parameter '{pd.name}' has type '{tn}': task kernels take "
                            f"DRAM pointers and integer scalars")
    return KernelInfo(name, tuple(params), "", task=True)

