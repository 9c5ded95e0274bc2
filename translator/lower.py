"""Lowering: checked pycparser AST -> LLVM IR (llvmlite.ir), one pass.

Takes the parsed ``FileAST``.  Gives an ``ir.Module`` with, for each
``__kernel K``, the work-group function ``K__wg(i8** args, i64* wg)`` (ABI in
translator/module.py) and a ``KernelInfo``.  Type checking happens while
lowering: every error is a ``Diagnostic`` at the offending node, raised as
``LowerError`` (the first error stops the build).

How the pieces fit:
- Types and conversions: cltypes (C99 promotions, usual arithmetic
  conversions, OpenCL vectors).  ``convert()`` is the one place that changes a
  value's type; ``binary()`` applies the usual conversions and vector widening.
- Helper (non-kernel) functions become internal LLVM functions marked
  ``alwaysinline`` taking two hidden trailing arguments (``wg`` and the local-id
  triple; in SPMD form K__wi's six ids), so work-item builtins work inside them;
  recursion is rejected.  In SPMD form they are also ``convergent`` and may call
  barrier() anywhere (each work-item runs the helper itself).
- Work-group functions (PoCL's "work-group function generation", done here on
  the AST): a kernel body without barrier is lowered once inside a 3-deep loop
  over the local ids.  With ``barrier()`` the body is lowered in *group mode*
  (``_group_stmts``): each maximal run of barrier-free statements becomes its own
  local-id loop (a "region"), a barrier is the boundary between two regions,
  and an ``if``/``for``/``while``/``do`` that contains a barrier is lowered once
  for the group, its conditions evaluated with work-item 0's values (OpenCL
  requires them uniform).  Private variables declared at group level, and the
  parameters the body changes, live in arrays indexed by the linear local id
  (allocated in the entry block with the group's size), so their values
  survive across regions and stay each work-item's own; ``break``,
  ``continue`` and ``return`` inside a region set group flags (and a per-item
  "returned" flag) that the group-level code tests after the region.
- Source lines: every instruction carries a ``!dbg`` location (line-tables-only
  debug info: a DICompileUnit, a distinct DISubprogram per kernel and helper).
  ``stmt``/``expr``/``group_stmt`` make their node's line (no column) the
  builder's ``debug_metadata`` while they lower it (the innermost node wins and
  the enclosing one is restored after), so the IR builder stamps each
  instruction it creates; a function's prologue and epilogue get the line of
  its declaration.  Inlining turns a helper's locations into ``inlinedAt``
  chains; the SIMD backend (backend/irread.py) reads them back.
"""
from __future__ import annotations

import re
from dataclasses import replace

from llvmlite import ir
from pycparser import c_ast, c_generator

from . import cltypes as T
from .cltypes import (BOOL, CHAR, DOUBLE, FLOAT, INT, LONG, ULONG, VOID, Array, Pointer,
                      Scalar, Struct, Vector, storage_type)
from .constfold import fold_binary, fold_unary, parse_char, parse_float, parse_int
from .module import KernelInfo, ParamInfo
from .parse import RESERVED_SPACES
from .scopes import Scopes
from .srcloc import SourceMap
from .values import LV, RV, SwizzleLV

I1, I8, I32, I64 = ir.IntType(1), ir.IntType(8), ir.IntType(32), ir.IntType(64)
I8P = I8.as_pointer()


class LowerError(Exception):
    def __init__(self, diag):
        super().__init__(diag.message)
        self.diag = diag


SPACE_QUALS = {"__global": "global", "global": "global", "__local": "local", "local": "local",
               "__constant": "constant", "constant": "constant", "__private": "private",
               "private": "private"}
IGNORED_QUALS = {"restrict", "volatile", "__read_only", "__write_only", "read_only",
                 "write_only", "__read_write", "read_write", "_Atomic", "__restrict", "__restrict__"}
BOOL_LITERALS = {"false": 0, "true": 1}   # keywords of type bool in OpenCL C 1.2 (s6.1.1), not macros
BARRIERS = ("barrier", "work_group_barrier", "wait_group_events")   # work-group synchronisation points
UNSUPPORTED_TYPES = {"image1d_t": "images are not supported",
                     "image2d_t": "images are not supported", "image3d_t": "images are not supported",
                     "image1d_array_t": "images are not supported", "image2d_array_t": "images are not supported",
                     "image1d_buffer_t": "images are not supported", "sampler_t": "samplers are not supported",
                     }


def _nodes(node):
    """Every node under ``node`` (iterative: deep expressions must not exhaust the C stack)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if n is None:
            continue
        yield n
        stack.extend(c for _, c in n.children())


def _changed_names(node, lookup) -> set:
    """Names an assignment, ++/--, or & (its address taken) may change under ``node``: the root
    variable of the target, except through a pointer (``p[i] = x`` and ``p->f = x`` leave p)."""
    out = set()

    def root(e):
        while True:
            if isinstance(e, c_ast.ID):
                return e.name
            if isinstance(e, c_ast.StructRef) and e.type == ".":
                e = e.name
            elif isinstance(e, c_ast.ArrayRef):       # v[i] of a vector variable changes v
                s = isinstance(e.name, c_ast.ID) and lookup(e.name.name)
                if not (s and s.type is not None and s.type.is_vector):
                    return None
                e = e.name
            else:
                return None

    for n in _nodes(node):
        if isinstance(n, c_ast.Assignment):
            target = n.lvalue
        elif isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--", "&"):
            target = n.expr
        else:
            continue
        name = root(target)
        if name is not None:
            out.add(name)
    return out


def contains_barrier(node) -> bool:
    return any(isinstance(n, c_ast.FuncCall) and isinstance(n.name, c_ast.ID) and
               n.name.name in BARRIERS for n in _nodes(node))


def has_return(node) -> bool:
    return any(isinstance(n, c_ast.Return) for n in _nodes(node))


class Sym:
    """A named thing in scope: a variable, a function or an enum constant."""

    def __init__(self, kind, type, ptr=None, replicated=False, const=False, space="private",
                 value=None, fdef=None):
        self.kind, self.type, self.ptr, self.replicated = kind, type, ptr, replicated
        self.const, self.space, self.value, self.fdef = const, space, value, fdef


class FuncCtx:
    """Per-function lowering state."""

    def __init__(self, fn, ret_type, kernel):
        self.fn, self.ret_type, self.kernel = fn, ret_type, kernel
        self.entry_builder = None
        self.loops = []             # (break_block, continue_block) of item-mode loops
        self.group_loops = []       # dicts with brk/cont flags and blocks
        self.ret_ptr = None
        self.ret_block = None
        self.item_latch = None      # where a work-item goes when its region ends early
        self.done = None            # per-item "returned" flags (barrier kernels with return)
        self.lin = None             # i64 alloca: linear local id
        self.lid = None             # [3 x i64] alloca
        self.wg = None              # i64* of the ABI
        self.nitems = None          # i64 value: work-items in the group
        self.switch_stack = []
        self.di_sp = None           # the function's DISubprogram (source-line debug info)
        self.di_file = ""           # ... and the file it is defined in
        self.group_mode = False
        self.in_region = False
        self.uses_barrier = False
        self.local_bytes = 0
        self.frame_bytes = 0        # private storage of the function (allocas of a fixed size)
        self.item_bytes = 0         # ... and per work-item of the group (copies kept across barriers)
        self.name = ""


class Lowering:
    def __init__(self, ast, filename, sources, colmap, fast_math=False, single_const=False, spmd=False,
                 restrict=False, noalias=True):
        self.ast, self.filename = ast, filename
        self.where = SourceMap(filename, sources, colmap)    # node -> located Diagnostic
        self.spmd = spmd            # per-work-item kernels (K__wi) for the SIMD backend
        self.restrict = restrict    # SPMD: buffer parameters as if restrict (restrict_buffers) ...
        self.noalias = noalias      # ... (False: the same shape without noalias, to compare with)
        self.fast_math = fast_math
        self.single_const = single_const
        self.module = ir.Module(name=filename)
        self.module.triple = T.target_machine().triple
        self.module.data_layout = str(T.target_data())
        self.scopes = Scopes()      # ordinary identifiers -> Sym
        self.tags = Scopes()        # struct / union / enum tags
        self.typedefs = Scopes()
        self.kernels = {}
        self.funcs = {}             # name -> (FuncDef, Function type, ir.Function or None)
        self.func_defs = {}
        self.lowering_stack = []
        self.ctx: FuncCtx | None = None
        self.b: ir.IRBuilder | None = None
        self.warnings = []
        self._strings = 0
        from . import builtins
        self.builtins = builtins
        self._di_files = {}
        self._di_locs = {}
        self._di_setup()

    # ------------------------------------------------------------------ diagnostics
    def diag(self, node, msg, sev="error"):
        return self.where.diag(node, msg, sev)

    def error(self, node, msg):
        raise LowerError(self.diag(node, msg))

    def warn(self, node, msg):
        self.warnings.append(self.diag(node, msg, "warning"))

    # ------------------------------------------------------------------ source lines (debug info)
    def _di_setup(self):
        """The compile unit, the module flags the verifier requires with it, and a subroutine type."""
        m = self.module
        f = self._di_file(self.filename)
        self._di_cu = m.add_debug_info("DICompileUnit", {
            "language": ir.DIToken("DW_LANG_OpenCL"), "file": f, "producer": "mncl",
            "isOptimized": True, "runtimeVersion": 0,
            "emissionKind": ir.DIToken("LineTablesOnly")}, is_distinct=True)
        m.add_named_metadata("llvm.dbg.cu", self._di_cu)
        m.add_named_metadata("llvm.module.flags", [ir.Constant(I32, 7), "Dwarf Version", ir.Constant(I32, 4)])
        m.add_named_metadata("llvm.module.flags", [ir.Constant(I32, 2), "Debug Info Version", ir.Constant(I32, 3)])
        self._di_fnty = m.add_debug_info("DISubroutineType", {"types": m.add_metadata([])})

    def _di_file(self, name):
        f = self._di_files.get(name)
        if f is None:
            import os
            f = self.module.add_debug_info("DIFile", {"filename": os.path.basename(name) or name,
                                                      "directory": os.path.dirname(name)})
            self._di_files[name] = f
        return f

    def _di_function(self, fn, name, node):
        """Give ``fn`` (the current function, self.ctx/self.b) its DISubprogram; its prologue gets
        ``node``'s line."""
        coord = getattr(node, "coord", None)
        file = (coord.file if coord is not None else None) or self.filename
        line = coord.line if coord is not None and coord.line else 0
        df = self._di_file(file)
        sp = self.module.add_debug_info("DISubprogram", {
            "name": name, "linkageName": fn.name, "scope": df, "file": df, "line": line,
            "type": self._di_fnty, "scopeLine": line,
            "spFlags": ir.DIToken("DISPFlagDefinition | DISPFlagOptimized"), "unit": self._di_cu},
            is_distinct=True)
        fn.set_metadata("dbg", sp)
        self.ctx.di_sp, self.ctx.di_file = sp, file
        self.b.debug_metadata = self._di_loc(node)

    def _di_loc(self, node):
        """The DILocation of ``node``'s line in the current function, or None (no coordinates).

        Lines only (column 0): the backend and the profiler attribute work to lines, and one
        location per line keeps the metadata (and the time to build and print it) small."""
        coord = getattr(node, "coord", None)
        if coord is None or not coord.line:
            return None
        sp = self.ctx.di_sp
        if sp is None:
            return None
        key = (coord.file, coord.line, sp.name)
        loc = self._di_locs.get(key)
        if loc is None:
            file = coord.file or self.filename
            scope = sp
            if file != self.ctx.di_file:
                # a line of another file (a helper from a header lowered inline, an #include in a body)
                scope = self.module.add_debug_info("DILexicalBlockFile", {
                    "scope": sp, "file": self._di_file(file), "discriminator": 0})
            loc = self.module.add_debug_info("DILocation", {"line": coord.line, "column": 0, "scope": scope})
            self._di_locs[key] = loc
        return loc

    # ------------------------------------------------------------------ scopes
    def push(self):
        self.scopes.append({})
        self.tags.append({})
        self.typedefs.append({})

    def pop(self):
        self.scopes.pop()
        self.tags.pop()
        self.typedefs.pop()

    def lookup(self, name):
        return self.scopes.lookup(name)

    def lookup_typedef(self, name):
        return self.typedefs.lookup(name)

    def lookup_tag(self, name):
        return self.tags.lookup(name)

    # ------------------------------------------------------------------ types from AST
    def quals_of(self, quals, node):
        space, const = None, False
        for q in quals or ():
            if q in SPACE_QUALS:
                space = SPACE_QUALS[q]
            elif q in RESERVED_SPACES:
                self.error(node, f"address space '{q}' is only for task kernels (__task; docs/language.md)")
            elif q == "const":
                const = True
            elif q in IGNORED_QUALS:
                pass
        return space, const

    def base_type(self, tnode, node):
        """IdentifierType / Struct / Union / Enum -> CType."""
        if isinstance(tnode, c_ast.IdentifierType):
            names = tnode.names
            if len(names) == 1:
                n = names[0]
                if n in UNSUPPORTED_TYPES:
                    self.error(tnode, UNSUPPORTED_TYPES[n])
                td = self.lookup_typedef(n)
                if td is not None:
                    return td
                t = T.type_by_name(n)
                if t is not None:
                    return t
            t = T.c_specifiers_type(names)
            if t is None:
                self.error(tnode, f"unknown type name '{' '.join(names)}'")
            return t
        if isinstance(tnode, (c_ast.Struct, c_ast.Union)):
            return self.struct_type(tnode)
        if isinstance(tnode, c_ast.Enum):
            self.enum_decl(tnode)
            return INT
        self.error(node, "unsupported type")

    def struct_type(self, s):
        union = isinstance(s, c_ast.Union)
        tag = s.name
        st = None
        if tag is not None:
            for scope in reversed(self.tags):
                if tag in scope:
                    st = scope[tag]
                    break
        if s.decls is None:
            if st is None:
                st = Struct(tag, union)
                self.tags[-1][tag] = st
            return st
        if st is None or st.complete():
            if st is not None and st.complete() and tag in self.tags[-1]:
                self.error(s, f"redefinition of '{'union' if union else 'struct'} {tag}'")
            st = Struct(tag or f"<anonymous@{s.coord.line if s.coord else 0}>", union)
            if tag is not None:
                self.tags[-1][tag] = st
        fields = []
        seen = set()
        for d in s.decls:
            if d.name is None:
                self.error(d, "anonymous struct members are not supported")
            if d.bitsize is not None:
                self.error(d, "bit-fields are not supported")
            ft = self.decl_type(d.type, d)
            if ft.is_void or ft.is_function:
                self.error(d, f"field '{d.name}' has invalid type '{ft}'")
            if ft.is_struct and not ft.complete():
                self.error(d, f"field '{d.name}' has incomplete type '{ft}'")
            if d.name in seen:
                self.error(d, f"duplicate member '{d.name}'")
            seen.add(d.name)
            fields.append((d.name, ft))
        if not fields:
            self.error(s, "empty struct is not supported")
        st.fields = fields
        return st

    def enum_decl(self, e):
        if e.values is None:
            return
        val = 0
        for en in e.values.enumerators:
            if en.value is not None:
                val = self.const_int(en.value)
            self.scopes[-1][en.name] = Sym("enum", INT, value=val)
            val += 1

    def decl_type(self, tnode, node, space_out=None):
        """Declarator type tree -> CType.  Address-space qualifiers go on pointees / arrays."""
        if isinstance(tnode, (c_ast.Struct, c_ast.Union, c_ast.Enum, c_ast.IdentifierType)):
            return self.base_type(tnode, node)
        if isinstance(tnode, c_ast.TypeDecl):
            t = self.base_type(tnode.type, node)
            space, const = self.quals_of(tnode.quals, tnode)
            if space_out is not None:
                space_out.append(space)
            if const and t.is_scalar or const and t.is_vector or const and t.is_struct:
                t = _with_const(t)
            return t
        if isinstance(tnode, c_ast.PtrDecl):
            inner_space = []
            pointee = self.decl_type(tnode.type, node, inner_space)
            pspace = inner_space[0] if inner_space else None
            pq_space, pconst = self.quals_of(tnode.quals, tnode)
            if space_out is not None:
                space_out.append(pq_space)
            if pointee.is_function:
                self.error(node, "function pointers are not supported")
            cp = getattr(pointee, "const", False)
            return Pointer(_strip_const(pointee), pspace or "private", cp)
        if isinstance(tnode, c_ast.ArrayDecl):
            inner_space = []
            elem = self.decl_type(tnode.type, node, inner_space)
            if space_out is not None:
                space_out.append(inner_space[0] if inner_space else None)
            if tnode.dim is None:
                return Array(elem, -1)
            n = self.const_int(tnode.dim, vla=True)
            if n <= 0:
                self.error(tnode.dim, "array size must be positive")
            return Array(elem, n)
        if isinstance(tnode, (c_ast.FuncDecl,)) or type(tnode).__name__ == "FuncDeclExt":
            ret = self.decl_type(tnode.type, node)
            params = []
            return T.Function(ret, params)
        if isinstance(tnode, c_ast.Typename):
            return self.decl_type(tnode.type, node, space_out)
        self.error(node, "unsupported declarator")

    def typename_type(self, tn):
        sp = []
        t = self.decl_type(tn.type, tn, sp)
        return t

    # ------------------------------------------------------------------ constant expressions
    def const_int(self, node, vla=False):
        v = self.const_eval(node)
        if v is None or isinstance(v, float):
            if vla:
                self.error(node, "variable-length arrays are not supported")
            self.error(node, "expression is not an integer constant expression")
        return v

    def const_eval(self, n):
        try:
            return self._ceval(n)
        except (ZeroDivisionError, OverflowError, ValueError):
            return None

    def _ceval(self, n):
        if isinstance(n, c_ast.Constant):
            if n.type in ("int", "long int", "unsigned int", "unsigned long int", "long long int",
                          "unsigned long long int") or n.type.endswith("int"):
                return parse_int(n.value)[0]
            if n.type == "char":
                return parse_char(n.value)
            if n.type in ("float", "double"):
                return parse_float(n.value)[0]
            return None
        if isinstance(n, c_ast.ID):
            if n.name in BOOL_LITERALS:
                return BOOL_LITERALS[n.name]
            s = self.lookup(n.name)
            if s is not None and s.kind == "enum":
                return s.value
            return None
        if isinstance(n, c_ast.UnaryOp):
            if n.op == "sizeof":
                t = self.sizeof_target(n.expr)
                return t.size() if t is not None else None
            v = self._ceval(n.expr)
            if v is None:
                return None
            return fold_unary(n.op, v)
        if isinstance(n, c_ast.BinaryOp):
            a, b = self._ceval(n.left), self._ceval(n.right)
            if a is None or b is None:
                return None
            return fold_binary(n.op, a, b)
        if isinstance(n, c_ast.TernaryOp):
            c = self._ceval(n.cond)
            if c is None:
                return None
            return self._ceval(n.iftrue if c else n.iffalse)
        if isinstance(n, c_ast.Cast):
            v = self._ceval(n.expr)
            if v is None:
                return None
            t = self.typename_type(n.to_type)
            if t.is_scalar and t.is_integer:
                return wrap_int(int(v), t)
            if t.is_scalar and t.is_float:
                return float(v)
            return None
        return None

    def sizeof_target(self, e):
        if isinstance(e, c_ast.Typename):
            return self.typename_type(e)
        return None

    # ------------------------------------------------------------------ top level
    def run(self):
        for n in _nodes(self.ast):
            if isinstance(n, (c_ast.Decl, c_ast.Typedef, c_ast.Enumerator)) and n.name in BOOL_LITERALS:
                self.error(n, f"'{n.name}' is a keyword of OpenCL C and cannot be declared")
        for ext in self.ast.ext:
            self.top(ext)
        # helper functions are lowered lazily (when called); lower the rest for diagnostics
        for name, f in list(self.funcs.items()):
            if f["fdef"] is not None and f["ir"] is None and not f["kernel"] and (
                    self.spmd or not self.has_barrier(f["fdef"].body)):
                self.lower_helper(name, f["fdef"])
        if self.fast_math:
            self.fast_intrinsics()
        return self.module, self.kernels

    def fast_intrinsics(self):
        """-cl-finite-math-only and friends: float intrinsic calls (sqrt, fma, fmin ...) get the
        'fast' flag the arithmetic has, so the SIMD backend leaves out their NaN fix-ups too."""
        for fn in self.module.functions:
            for blk in fn.blocks:
                for ins in blk.instructions:
                    if isinstance(ins, ir.CallInstr) and getattr(ins.callee, "name", "").startswith("llvm.") \
                            and str(ins.type).split(" x ")[-1].strip("<>") in ("float", "double", "half"):
                        ins.fastmath.add("fast")

    def top(self, ext):
        if isinstance(ext, c_ast.FuncDef):
            self.func_def(ext)
        elif isinstance(ext, c_ast.Decl):
            self.top_decl(ext)
        elif isinstance(ext, c_ast.Typedef):
            self.typedef(ext)
        elif isinstance(ext, c_ast.Pragma) or type(ext).__name__ == "PreprocessorLine":
            pass
        elif isinstance(ext, c_ast.StaticAssert):
            self.static_assert(ext)
        else:
            self.error(ext, "unsupported top-level construct")

    def static_assert(self, n):
        v = self.const_int(n.cond)
        if not v:
            msg = n.message.value if n.message is not None else ""
            self.error(n, f"static assertion failed{': ' + msg if msg else ''}")

    def typedef(self, td):
        t = self.decl_type(td.type, td)
        if t.is_struct and t.tag.startswith("<anonymous"):
            t.tag = td.name
            t.typedef_name = td.name
        self.typedefs[-1][td.name] = t

    def fspecs(self, decl):
        return [s for s in (decl.funcspec or []) if isinstance(s, str)]

    def top_decl(self, d):
        tnode = d.type
        if type(tnode).__name__ in ("FuncDecl", "FuncDeclExt"):
            self.declare_function(d, None)
            return
        if d.name is None:
            # struct / enum declaration
            self.decl_type(tnode, d)
            return
        sp = []
        t = self.decl_type(tnode, d, sp)
        space = sp[0] if sp else None
        if space != "constant" and not ("const" in (d.quals or []) and space is None):
            if space == "global":
                self.error(d, "program-scope '__global' variables are not supported")
            if space == "local":
                self.error(d, "'__local' variables must be declared inside a kernel function")
            self.error(d, "program-scope variables must be in the '__constant' address space")
        if d.init is None:
            self.error(d, f"program-scope constant '{d.name}' needs an initializer")
        if d.name in self.scopes[0]:
            self.error(d, f"redefinition of '{d.name}'")
        if t.is_array and t.n == -1:
            if isinstance(d.init, c_ast.InitList):
                t = Array(t.elem, len(d.init.exprs))
            else:
                self.error(d, "array size missing")
        init = self.const_initializer(t, d.init)
        g = ir.GlobalVariable(self.module, storage_type(t), name=self.module.get_unique_name(f"__const.{d.name}"))
        g.global_constant = True
        g.linkage = "internal"
        g.initializer = init
        g.align = max(t.align(), 4)
        self.scopes[0][d.name] = Sym("var", t, ptr=g, const=True, space="constant")

    def const_initializer(self, t, init):
        if isinstance(init, c_ast.NamedInitializer):
            self.error(init.expr, "designated initializers are not supported")
        if t.is_array:
            if not isinstance(init, c_ast.InitList):
                self.error(init, "array initializer must be a brace-enclosed list")
            if len(init.exprs) > t.n:
                self.error(init.exprs[t.n], "excess elements in array initializer")
            vals = [self.const_initializer(t.elem, e) for e in init.exprs]
            vals += [ir.Constant(storage_type(t.elem), None)] * (t.n - len(vals))
            return ir.Constant(storage_type(t), vals)
        if t.is_struct:
            if not isinstance(init, c_ast.InitList):
                self.error(init, "struct initializer must be a brace-enclosed list")
            vals = [self.const_initializer(ft, e) for (_, ft), e in zip(t.fields, init.exprs)]
            vals += [ir.Constant(storage_type(ft), None) for _, ft in t.fields[len(vals):]]
            return ir.Constant(storage_type(t), vals)
        if t.is_vector:
            if isinstance(init, c_ast.InitList):
                items = init.exprs
            elif isinstance(init, c_ast.Cast) and isinstance(init.expr, c_ast.ExprList):
                items = init.expr.exprs
            else:
                items = [init] * t.n
            vals = []
            for e in items:
                v = self.const_eval(e)
                if v is None:
                    self.error(e, "initializer element is not a compile-time constant")
                vals.append(v)
            if len(vals) == 1:
                vals = vals * t.n
            if len(vals) != t.n:
                self.error(init, f"wrong number of components in a '{t}' initializer")
            vals = [float(v) if t.elem.is_float else wrap_int(int(v), t.elem) for v in vals]
            if t.n == 3:
                vals.append(0)
            return ir.Constant(storage_type(t), [ir.Constant(t.elem.llvm_type(), v) for v in vals])
        if t.is_scalar:
            if isinstance(init, c_ast.InitList):
                if len(init.exprs) != 1:
                    self.error(init, "scalar initializer must have one element")
                init = init.exprs[0]
            v = self.const_eval(init)
            if v is None:
                self.error(init, "initializer element is not a compile-time constant")
            if t.is_float:
                return ir.Constant(t.llvm_type(), float(v))
            return ir.Constant(t.llvm_type(), wrap_int(int(v), t))
        self.error(init, f"cannot initialize a constant of type '{t}'")

    def func_type(self, d):
        fd = d.type
        if not hasattr(fd, "args"):     # 'float f { ... }': a body after a declarator that is no function's
            self.error(d, f"'{d.name}' is defined with a body but declared without a parameter list; "
                          f"write '{d.name}(...)'")
        ret = self.decl_type(fd.type, d)
        params, names, pdecls = [], [], []
        if fd.args is not None:
            for p in fd.args.params:
                if isinstance(p, c_ast.EllipsisParam):
                    self.error(p, "variadic functions are not supported")
                if isinstance(p, c_ast.Typename):
                    pt = self.typename_type(p)
                    pname = None
                else:
                    pt = self.decl_type(p.type, p)
                    pname = p.name
                if pt.is_void and pname is None and len(fd.args.params) == 1:
                    break
                if pt.is_array:
                    pt = Pointer(pt.elem, "private")
                params.append(pt)
                names.append(pname)
                pdecls.append(p)
        return ret, params, names, pdecls

    def declare_function(self, d, fdef):
        name = d.name
        is_kernel = any(s in ("__kernel", "kernel") for s in self.fspecs(d))
        if name in BARRIERS or name in self.builtins.WORK_ITEM:
            self.error(d, f"redefinition of builtin function '{name}'")
        ret, params, names, pdecls = self.func_type(d)
        f = self.funcs.get(name)
        if f is None:
            f = {"ret": ret, "params": params, "names": names, "fdef": None, "ir": None,
                 "kernel": is_kernel, "decl": d, "pdecls": pdecls}
            self.funcs[name] = f
        else:
            if len(f["params"]) != len(params) or f["ret"] != ret or any(
                    a != b for a, b in zip(f["params"], params)):
                self.error(d, f"conflicting types for '{name}'")
            if fdef is not None:
                f["names"], f["pdecls"] = names, pdecls
            f["kernel"] = f["kernel"] or is_kernel
        if fdef is not None:
            if f["fdef"] is not None:
                self.error(d, f"redefinition of '{name}'")
            f["fdef"] = fdef
        self.scopes[0][name] = Sym("func", None, fdef=name)
        return f

    def func_def(self, fdef):
        f = self.declare_function(fdef.decl, fdef)
        if f["kernel"]:
            self.lower_kernel(fdef.decl.name, fdef, f)

    # ------------------------------------------------------------------ helpers
    def helper_ir(self, name, node):
        f = self.funcs[name]
        if f["kernel"]:
            self.error(node, f"calling kernel '{name}' from device code is not supported")
        if f["fdef"] is None:
            self.error(node, f"function '{name}' is declared but never defined")
        if name in self.lowering_stack:
            self.error(node, f"recursive call to '{name}' is not supported (recursion is not allowed in OpenCL C)")
        if f["ir"] is None:
            self.lower_helper(name, f["fdef"])
        return f

    def lower_helper(self, name, fdef):
        f = self.funcs[name]
        if self.has_barrier(fdef.body) and not self.spmd:
            self.error(self._find_barrier(fdef.body) or fdef.decl,
                       "barrier() in a helper function is only supported when the call is a statement of the kernel body "
                       "('f(...);', 'x = f(...);' or 'T x = f(...);'), not inside an expression or a barrier-free block")
        ret, params = f["ret"], f["params"]
        for pt, pd in zip(params, f["pdecls"]):
            if pt.is_struct and not pt.complete():
                self.error(pd, f"parameter has incomplete type '{pt}'")
        lret = storage_type(ret) if not ret.is_void else ir.VoidType()
        if ret.is_array:
            self.error(fdef.decl, "function cannot return an array")
        # the hidden id argument is the caller's: K__wg's [3 x i64] local ids, or K__wi's [6 x i64]
        # local and global ids (builtins.gid reads the global ones from it in SPMD form)
        ids = ir.ArrayType(I64, 6 if self.spmd else 3).as_pointer()
        fnty = ir.FunctionType(lret, [storage_type(p) for p in params] + [I64.as_pointer(), ids])
        fn = ir.Function(self.module, fnty, name=f"mncl.{name}")
        fn.linkage = "internal"
        fn.attributes.add("alwaysinline")
        if self.spmd:
            fn.attributes.add("convergent")    # it may call __mncl_barrier (as clang marks OpenCL functions)
        f["ir"] = fn
        saved = (self.ctx, self.b, self.scopes, self.tags, self.typedefs)
        self.lowering_stack.append(name)
        try:
            self.scopes = Scopes([self.scopes[0], {}])
            self.tags = Scopes([self.tags[0], {}])
            self.typedefs = Scopes([self.typedefs[0], {}])
            ctx = FuncCtx(fn, ret, False)
            ctx.name = name
            self.ctx = ctx
            entry = fn.append_basic_block("entry")
            self.b = ir.IRBuilder(entry)
            self._di_function(fn, name, fdef.decl)
            ctx.wg = fn.args[-2]
            ctx.lid = fn.args[-1]
            start = fn.append_basic_block("start")
            self.b.position_at_end(start)
            if not ret.is_void:
                ctx.ret_ptr = self.alloca(ret, "retval")
            ctx.ret_block = fn.append_basic_block("return")
            for i, (pt, pname) in enumerate(zip(params, f["names"])):
                if pname is None:
                    continue
                slot = self.alloca(pt, pname)
                self.store(slot, pt, fn.args[i])
                self.scopes[-1][pname] = Sym("var", pt, ptr=slot, space="private")
            ctx.item_latch = ctx.ret_block
            self.stmt(fdef.body)
            if not self.b.block.is_terminated:
                self.b.branch(ctx.ret_block)
            self.b.position_at_end(ctx.ret_block)
            if ret.is_void:
                self.b.ret_void()
            else:
                self.b.ret(self.b.load(ctx.ret_ptr))
            self.b.position_at_end(entry)
            self.b.branch(start)
        finally:
            self.lowering_stack.pop()
            self.ctx, self.b, self.scopes, self.tags, self.typedefs = saved

    def has_barrier(self, node, seen=()):
        """Does ``node`` execute a barrier, directly or through the helpers it calls?"""
        for n in _nodes(node):
            if isinstance(n, c_ast.FuncCall) and isinstance(n.name, c_ast.ID):
                nm = n.name.name
                if nm in BARRIERS:
                    return True
                f = self.funcs.get(nm)
                sym = self.lookup(nm)
                if f is not None and f["fdef"] is not None and nm not in seen and sym is not None \
                        and sym.kind == "func" and self.has_barrier(f["fdef"].body, seen + (nm,)):
                    return True
        return False

    def barrier_call(self, s):
        """``f(...);`` / ``x = f(...);`` / ``T x = f(...);`` calling a helper with a barrier -> (call, kind)."""
        def helper(c):
            return isinstance(c, c_ast.FuncCall) and isinstance(c.name, c_ast.ID) and \
                c.name.name in self.funcs and not self.is_barrier_call(c) and self.has_barrier(self.funcs[c.name.name]["fdef"].body if self.funcs[c.name.name]["fdef"] else None)
        if helper(s):
            return s, "call"
        if isinstance(s, c_ast.Assignment) and s.op == "=" and helper(s.rvalue) and not self.has_barrier(s.lvalue):
            return s.rvalue, "assign"
        if isinstance(s, c_ast.Decl) and s.init is not None and helper(s.init):
            return s.init, "decl"
        return None, None

    def inline_group_call(self, s, call, kind):
        """Inline a helper whose body has a barrier, in group mode (its body is split like the kernel's)."""
        ctx, b = self.ctx, self.b
        name = call.name.name
        f = self.funcs[name]
        if name in self.lowering_stack:
            self.error(call, f"recursive call to '{name}' is not supported (recursion is not allowed in OpenCL C)")
        args = call.args.exprs if call.args is not None else []
        params = f["params"]
        if len(args) != len(params):
            self.error(call, f"too {'few' if len(args) < len(params) else 'many'} arguments to function call, expected {len(params)}, have {len(params) and len(args)}")
        body = f["fdef"].body
        items = list(body.block_items or [])
        final_ret = None
        if items and isinstance(items[-1], c_ast.Return):
            final_ret = items[-1]
        for node in _walk(body):
            if isinstance(node, c_ast.Return) and node is not final_ret:
                self.error(node, f"'return' in helper '{name}' (which calls barrier()) is only supported as its last statement")
        ret = f["ret"]
        if kind != "call" and ret.is_void:
            self.error(call, f"void function '{name}' used as a value")
        slots = [self._entry_alloca(storage_type(pt), f"{name}.{pn}.wi", size=ctx.nitems) for pt, pn in zip(params, f["names"])]
        retslot = None if ret.is_void else self._entry_alloca(storage_type(ret), f"{name}.ret.wi", size=ctx.nitems)

        def eval_args():
            for a, pt, slot in zip(args, params, slots):
                v = self.assign_convert(self.expr(a), pt, a)
                self.store(b.gep(slot, [b.load(ctx.lin)]), pt, v.v)
        self.item_region(eval_args)
        self.after_region()
        saved = (self.scopes, self.tags, self.typedefs, ctx.group_loops, ctx.loops, ctx.ret_type, ctx.name,
                 getattr(ctx, "inline_ret", None))
        self.lowering_stack.append(name)
        try:
            self.scopes = Scopes([self.scopes[0], {}])
            self.tags = Scopes([self.tags[0], {}])
            self.typedefs = Scopes([self.typedefs[0], {}])
            for pt, pn, slot in zip(params, f["names"], slots):
                if pn is not None:
                    self.scopes[-1][pn] = Sym("var", pt, ptr=slot, replicated=True)
            ctx.group_loops, ctx.loops, ctx.ret_type, ctx.name = [], [], ret, name
            ctx.inline_ret = (final_ret, retslot)
            self.group_stmts(items, new_scope=True)
        finally:
            self.lowering_stack.pop()
            (self.scopes, self.tags, self.typedefs, ctx.group_loops, ctx.loops, ctx.ret_type, ctx.name,
             ctx.inline_ret) = saved
        if kind == "call":
            return
        if kind == "decl":
            self.declare_var(s, replicated=True, init=False)
            sym = self.lookup(s.name)

            def assign():
                v = RV(ret, self.load(b.gep(retslot, [b.load(ctx.lin)]), ret))
                v = self.assign_convert(v, sym.type, s.init)
                self.store(self.var_addr(sym), sym.type, v.v)
            self.item_region(assign)
        else:
            def assign():
                lv = self.lvalue(s.lvalue)
                v = RV(ret, self.load(b.gep(retslot, [b.load(ctx.lin)]), ret))
                self.assign_to(lv, self.assign_convert(v, lv.type, s), s)
            self.item_region(assign)
        self.after_region()

    def _find_barrier(self, node):
        for n in _nodes(node):
            if isinstance(n, c_ast.FuncCall) and isinstance(n.name, c_ast.ID) and \
                    n.name.name in BARRIERS:
                return n
        return None

    # ------------------------------------------------------------------ kernels
    def lower_kernel(self, name, fdef, f):
        if not f["ret"].is_void:
            self.error(fdef.decl, f"kernel function '{name}' must return void")
        if name.endswith("__wg"):
            self.error(fdef.decl, f"kernel name '{name}' is reserved")
        reqd = None
        for s in fdef.decl.funcspec or []:
            if not isinstance(s, str):
                reqd = self.kernel_attrs(s, reqd)
        post = getattr(fdef.decl.type, "attributes", None)        # 'k(...) __attribute__((...))'
        if post is not None and getattr(post, "exprs", None):
            reqd = self.kernel_attrs(post, reqd)
        if self.spmd:
            return self.lower_kernel_spmd(name, fdef, f, reqd)
        fn, ctx, entry, saved = self.begin_kernel(name, "__wg", {"args": I8P.as_pointer(), "wg": I64.as_pointer()},
                                                  fdef.decl)
        try:
            ctx.wg = fn.args[1]
            ctx.lid = self.b.alloca(ir.ArrayType(I64, 3), name="lid")
            ctx.lin = self.b.alloca(I64, name="lin")
            ls = [self.b.load(self.b.gep(ctx.wg, [ir.Constant(I64, 4 + d)])) for d in range(3)]
            ctx.lsize = ls
            ctx.nitems = self.b.mul(self.b.mul(ls[0], ls[1]), ls[2], name="nitems")
            ctx.ret_block = fn.append_basic_block("exit")
            start = fn.append_basic_block("start")
            self.b.position_at_end(start)
            params = []
            for i, (pt, pname, pd) in enumerate(zip(f["params"], f["names"], f["pdecls"])):
                params.append(self.kernel_param(i, pt, pname, pd, fn.args[0]))
            ctx.uses_barrier = self.has_barrier(fdef.body)
            if ctx.uses_barrier:
                self.replicate_params(fdef.body)
                if has_return(fdef.body):
                    ctx.done = self.b.alloca(I8, size=ctx.nitems, name="done")
                    self.b.call(self._memset(), [ctx.done, ir.Constant(I8, 0), ctx.nitems, ir.Constant(I1, 0)])
                ctx.group_mode = True
                self.group_stmts(fdef.body.block_items or [], new_scope=True)
            else:
                self.item_region(self.fresh_params(fdef.body, lambda: self.stmt(fdef.body)))
            self.finish_kernel(name, fn.name, entry, start, params, reqd)
        finally:
            self.pop()
            self.ctx, self.b = saved

    def lower_kernel_spmd(self, name, fdef, f, reqd):
        """``void K__wi(i8** args, i64* wg, [6 x i64]* ids)``: the body for one work-item.

        The SIMD backend runs this for every work-item at once.  ``ids`` points to
        the work-item's local ids (0..2) and global ids (3..5); ``wg`` is the ABI
        block of ``K__wg`` (its group ids, 7..9, differ between work-items).  A barrier
        is a call to ``__mncl_barrier(i32 flags)`` and a ``__local`` array declared
        in the body is ``__mncl_local(i64 offset, i64 bytes)``: the group's shared
        scratch, which the backend places.
        """
        abi = {"args": I8P.as_pointer(), "wg": I64.as_pointer(), "ids": ir.ArrayType(I64, 6).as_pointer()}
        buffers = self.restrict_buffers(f) if self.restrict else []
        fn, ctx, entry, saved = self.begin_kernel(
            name, "__wi.restrict" if buffers else "__wi", {**abi, **{f"p{i}": I8P for i in buffers}}, fdef.decl)
        given = dict(zip(buffers, fn.args[3:]))
        if buffers:
            fn.linkage = "internal"
            fn.attributes.add("alwaysinline")
            for a in given.values():
                if not self.noalias:
                    a.attributes.discard("noalias")
        try:
            b = self.b
            ctx.wg, ctx.lid = fn.args[1], fn.args[2]
            ls = [b.load(b.gep(ctx.wg, [ir.Constant(I64, 4 + d)])) for d in range(3)]
            ctx.lsize = ls
            ctx.nitems = b.mul(b.mul(ls[0], ls[1]), ls[2], name="nitems")
            lid = [b.load(b.gep(ctx.lid, [ir.Constant(I32, 0), ir.Constant(I32, d)])) for d in range(3)]
            ctx.lin = b.alloca(I64, name="lin")
            b.store(b.add(b.mul(b.add(b.mul(lid[2], ls[1]), lid[1]), ls[0]), lid[0]), ctx.lin)
            ctx.ret_block = fn.append_basic_block("exit")
            start = fn.append_basic_block("start")
            b.position_at_end(start)
            params = [self.kernel_param(i, pt, pname, pd, fn.args[0], given.get(i))
                      for i, (pt, pname, pd) in enumerate(zip(f["params"], f["names"], f["pdecls"]))]
            ctx.uses_barrier = self.has_barrier(fdef.body)
            ctx.item_latch, ctx.in_region = ctx.ret_block, True
            self.stmt(fdef.body)
            self.finish_kernel(name, fn.name, entry, start, params, reqd)
        finally:
            self.pop()
            self.ctx, self.b = saved
        if buffers:
            self.restrict_wrapper(name, fn, abi, buffers, fdef.decl)

    @staticmethod
    def restrict_buffers(f) -> list:
        """The __global / __constant pointer parameters of a kernel (f: self.funcs' entry) that the
        restrict build (compile_opencl's restrict IR) passes as noalias: all of them, when there are
        two or more (one alone cannot alias another argument)."""
        ks = [i for i, pt in enumerate(f["params"]) if pt.is_pointer and pt.space in ("global", "constant")]
        return ks if len(ks) >= 2 else []

    def restrict_wrapper(self, name, body, abi, buffers, decl):
        """``K__wi`` of the restrict build: it loads the buffer pointers from ``args`` and calls
        ``body`` (K__wi.restrict: the kernel, with those pointers as noalias parameters).  The body is
        internal and alwaysinline: LLVM simplifies it knowing the buffers apart (LICM keeps
        ``x[i] += ...`` in a register across a loop), then inlines it, turning noalias into scoped
        alias metadata, so the optimised K__wi has the usual shape (loads of args[k]) for the backend."""
        fn, ctx, entry, saved = self.begin_kernel(name, "__wi", abi, decl)
        try:
            b = self.b
            raw = [b.load(b.gep(fn.args[0], [ir.Constant(I64, i)])) for i in buffers]
            b.call(body, [*fn.args, *raw])
            b.ret_void()
        finally:
            self.pop()
            self.ctx, self.b = saved
        self.kernels[name] = replace(self.kernels[name], wg_function=fn.name)

    def begin_kernel(self, name, suffix, args, decl):
        """Create kernel function name+suffix with the named ABI arguments; enter its context and scope
        (its prologue is at the line of ``decl``)."""
        fn = ir.Function(self.module, ir.FunctionType(ir.VoidType(), list(args.values())), name=name + suffix)
        for a, nm in zip(fn.args, args):
            a.name = nm
            a.add_attribute("noalias")       # the ABI blocks never alias a buffer: lets LICM hoist wg[] loads
        ctx = FuncCtx(fn, VOID, True)
        ctx.name = name
        saved = (self.ctx, self.b)
        self.ctx = ctx
        self.push()
        entry = fn.append_basic_block("entry")
        self.b = ir.IRBuilder(entry)
        self._di_function(fn, name, decl)
        return fn, ctx, entry, saved

    def finish_kernel(self, name, symbol, entry, start, params, reqd):
        """Close a kernel function (return block, entry -> start) and record its KernelInfo."""
        ctx, b = self.ctx, self.b
        if not b.block.is_terminated:
            b.branch(ctx.ret_block)
        b.position_at_end(ctx.ret_block)
        b.ret_void()
        b.position_at_end(entry)
        b.branch(start)
        self.kernels[name] = KernelInfo(name=name, params=tuple(params), wg_function=symbol,
                                        uses_barrier=ctx.uses_barrier, local_mem_bytes=ctx.local_bytes,
                                        reqd_work_group_size=reqd, private_bytes=ctx.frame_bytes,
                                        item_private_bytes=ctx.item_bytes)

    def spmd_intrinsic(self, name, ret, args):
        """Declare (once) one of the SIMD backend's intrinsics."""
        if name in self.module.globals:
            return self.module.globals[name]
        fn = ir.Function(self.module, ir.FunctionType(ret, args), name=name)
        if name == "__mncl_barrier":
            # every work-item of the group must reach the same barrier: LLVM may not make a call
            # to it control-dependent on more values (jump threading would copy it into both arms
            # of a divergent branch, a different barrier for each work-item)
            fn.attributes.add("convergent")
        return fn

    def kernel_attrs(self, spec, reqd):
        # AttributeSpecifier(exprlist) or an ExprList -> reqd_work_group_size(x, y, z)
        el = spec if isinstance(spec, c_ast.ExprList) else getattr(spec, "exprlist", None)
        for e in (el.exprs if el is not None else []):
            if isinstance(e, c_ast.FuncCall) and isinstance(e.name, c_ast.ID):
                if e.name.name == "reqd_work_group_size":
                    args = e.args.exprs if e.args else []
                    if len(args) != 3:
                        self.error(e, "'reqd_work_group_size' takes three arguments")
                    reqd = tuple(self.const_int(a) for a in args)
                elif e.name.name in ("work_group_size_hint", "vec_type_hint"):
                    pass
                else:
                    self.warn(e, f"unknown kernel attribute '{e.name.name}' ignored")
        return reqd

    def kernel_param(self, i, pt, pname, pd, args, raw=None):
        """Parameter i's symbol, from its slot of ``args`` (or ``raw``: a restrict body's pointer)."""
        b = self.b
        if raw is None:
            raw = b.load(b.gep(args, [ir.Constant(I64, i)]))
        if pname is None:
            self.error(pd, "kernel parameter needs a name")
        if pt.is_pointer:
            if pt.space == "private":
                self.error(pd, f"kernel pointer parameter '{pname}' must point to the __global, __constant or __local address space")
            if pt.pointee.is_pointer:
                self.error(pd, f"kernel parameter '{pname}' cannot be a pointer to a pointer")
            pe = pt.pointee
            if pe.is_struct and not pe.complete():
                self.error(pd, f"kernel parameter '{pname}' points to incomplete type '{pe}'")
            if pe.is_void:
                dtype, size = "uint8", 1
            elif pe.is_struct:
                import numpy as np
                dtype, size = str(np.dtype(pe.np_descr()).descr), pe.size()
            elif pe.is_array:
                self.error(pd, f"kernel parameter '{pname}' cannot point to an array")
            else:
                dtype, size = pe.np_dtype(), pe.size()
            slot = self.alloca(pt, pname)
            b.store(b.bitcast(raw, pt.llvm_type()), slot)
            self.scopes[-1][pname] = Sym("var", pt, ptr=slot, space="private")
            return ParamInfo(pname, pt.space, _spell(pe), dtype, size, bool(pt.const_pointee or pt.space == "constant"))
        if pt.is_bool:
            self.error(pd, f"kernel parameter '{pname}' cannot have type 'bool'")
        if pt.is_scalar or pt.is_vector or pt.is_struct:
            if pt.is_struct and not pt.complete():
                self.error(pd, f"kernel parameter '{pname}' has incomplete type '{pt}'")
            v = b.load(b.bitcast(raw, storage_type(pt).as_pointer()), align=1)   # the runtime's bytes: any alignment
            slot = self.alloca(pt, pname)
            b.store(v, slot)
            self.scopes[-1][pname] = Sym("var", _strip_const(pt), ptr=slot, const=getattr(pt, "const", False))
            if pt.is_struct:
                import numpy as np
                dtype = str(np.dtype(pt.np_descr()).descr)
            else:
                dtype = pt.np_dtype()
            return ParamInfo(pname, "scalar", _spell(pt), dtype, pt.size(), False)
        self.error(pd, f"kernel parameter '{pname}' has unsupported type '{pt}'")

    def changed_params(self, body) -> list:
        """(name, symbol) of each kernel parameter the body may assign to, in name order."""
        out = []
        for name in sorted(_changed_names(body, self.lookup)):
            s = self.scopes[-1].get(name)
            if s is not None and s.kind == "var" and not s.replicated:
                out.append((name, s))
        return out

    def fresh_params(self, body, run):
        """``run`` with every parameter the body may change set back to its argument first: the
        work-items of a group run one after another in one call here, and a change one makes
        (``x += off``) must not reach the next."""
        b = self.b
        keep = []
        for name, s in self.changed_params(body):
            k = self._entry_alloca(s.ptr.type.pointee, f"{name}.arg")
            b.store(b.load(s.ptr), k)
            keep.append((s.ptr, k))

        def fresh():
            for slot, k in keep:
                b.store(b.load(k), slot)
            run()
        return fresh

    def replicate_params(self, body):
        """A parameter is private to each work-item like any variable: in group mode, one the
        body may change gets a copy per work-item (filled in one region), as group-level
        variables do; the others stay one slot the whole group reads."""
        ctx, b = self.ctx, self.b
        copies = []
        for name, s in self.changed_params(body):
            a = self._entry_alloca(storage_type(s.type), f"{name}.wi", size=ctx.nitems)
            a.align = max(s.type.align(), 4)
            copies.append((s, a))
            self.scopes[-1][name] = Sym("var", s.type, ptr=a, replicated=True, const=s.const, space=s.space)
        if copies:
            self.item_region(lambda: [b.store(b.load(s.ptr), b.gep(a, [b.load(ctx.lin)])) for s, a in copies])

    def _memset(self):
        name = "llvm.memset.p0i8.i64"
        if name in self.module.globals:
            return self.module.globals[name]
        return ir.Function(self.module, ir.FunctionType(ir.VoidType(), [I8P, I8, I64, I1]), name=name)

    # ------------------------------------------------------------------ work-item regions
    def item_region(self, body_fn):
        """Emit ``body_fn`` inside the 3-deep local-id loop (one region)."""
        ctx, b = self.ctx, self.b
        loops = []
        iv = []
        for d in (2, 1, 0):
            slot = self._entry_alloca(I64, f"l{d}")
            b.store(ir.Constant(I64, 0), slot)
            head = ctx.fn.append_basic_block(f"l{d}.head")
            body = ctx.fn.append_basic_block(f"l{d}.body")
            latch = ctx.fn.append_basic_block(f"l{d}.latch")
            exit_ = ctx.fn.append_basic_block(f"l{d}.exit")
            b.branch(head)
            b.position_at_end(head)
            cur = b.load(slot)
            b.cbranch(b.icmp_unsigned("<", cur, ctx.lsize[d]), body, exit_)
            b.position_at_end(body)
            loops.append((slot, head, latch, exit_))
            iv.append(cur)
        lz, ly, lx = iv
        for d, v in ((0, lx), (1, ly), (2, lz)):
            b.store(v, b.gep(ctx.lid, [ir.Constant(I32, 0), ir.Constant(I32, d)]))
        lin = b.add(b.mul(b.add(b.mul(lz, ctx.lsize[1]), ly), ctx.lsize[0]), lx)
        b.store(lin, ctx.lin)
        inner_latch = loops[-1][2]
        saved_latch, saved_region = ctx.item_latch, ctx.in_region
        ctx.item_latch, ctx.in_region = inner_latch, True
        if ctx.done is not None:
            run = ctx.fn.append_basic_block("item.run")
            flag = b.load(b.gep(ctx.done, [lin]))
            b.cbranch(b.icmp_unsigned("!=", flag, ir.Constant(I8, 0)), inner_latch, run)
            b.position_at_end(run)
        body_fn()
        ctx.item_latch, ctx.in_region = saved_latch, saved_region
        if not b.block.is_terminated:
            b.branch(inner_latch)
        for idx in range(len(loops) - 1, -1, -1):
            slot, head, latch, exit_ = loops[idx]
            b.position_at_end(latch)
            b.store(b.add(b.load(slot), ir.Constant(I64, 1)), slot)
            b.branch(head)
            b.position_at_end(exit_)
            if idx > 0:
                b.branch(loops[idx - 1][2])     # the enclosing dimension's latch
        # builder is now at the outermost exit

    def as_item0(self, fn):
        """Evaluate ``fn`` for the group's leader: work-item 0, or (in a kernel with ``return``)
        the lowest-numbered work-item that has not returned (group-uniform conditions)."""
        ctx, b = self.ctx, self.b
        if ctx.done is None:
            for d in range(3):
                b.store(ir.Constant(I64, 0), b.gep(ctx.lid, [ir.Constant(I32, 0), ir.Constant(I32, d)]))
            b.store(ir.Constant(I64, 0), ctx.lin)
        else:
            k = self.leader()
            k = b.select(b.icmp_unsigned("<", k, ctx.nitems), k, ir.Constant(I64, 0))
            ls0, ls1 = ctx.lsize[0], ctx.lsize[1]
            lx = b.urem(k, ls0)
            ly = b.urem(b.udiv(k, ls0), ls1)
            lz = b.udiv(k, b.mul(ls0, ls1))
            for d, v in enumerate((lx, ly, lz)):
                b.store(v, b.gep(ctx.lid, [ir.Constant(I32, 0), ir.Constant(I32, d)]))
            b.store(k, ctx.lin)
        saved = ctx.in_region
        ctx.in_region = True
        try:
            return fn()
        finally:
            ctx.in_region = saved

    def leader(self):
        """The first work-item whose "returned" flag is clear, or nitems when all have returned."""
        ctx, b = self.ctx, self.b
        slot = self._entry_alloca(I64, "leader")
        b.store(ir.Constant(I64, 0), slot)
        head = ctx.fn.append_basic_block("leader.head")
        test = ctx.fn.append_basic_block("leader.test")
        nxt = ctx.fn.append_basic_block("leader.next")
        done = ctx.fn.append_basic_block("leader.done")
        b.branch(head)
        b.position_at_end(head)
        k = b.load(slot)
        b.cbranch(b.icmp_unsigned("<", k, ctx.nitems), test, done)
        b.position_at_end(test)
        flag = b.load(b.gep(ctx.done, [k]))
        b.cbranch(b.icmp_unsigned("==", flag, ir.Constant(I8, 0)), done, nxt)
        b.position_at_end(nxt)
        b.store(b.add(k, ir.Constant(I64, 1)), slot)
        b.branch(head)
        b.position_at_end(done)
        return b.load(slot)

    def group_stmts(self, items, new_scope=False):
        if new_scope:
            self.push()
        run = []

        def flush():
            if not run:
                return
            stmts = list(run)
            run.clear()
            for s in stmts:
                self.predeclare(s)
            self.item_region(lambda: [self.stmt(s) for s in stmts])
            self.after_region()

        for s in items:
            if self.b.block.is_terminated:
                break
            if not self.has_barrier(s):
                run.append(s)
                continue
            flush()
            self.group_stmt(s)
        flush()
        if new_scope:
            self.pop()

    def after_region(self):
        """After a region inside a group loop: honour break/continue flags set by the work-items."""
        ctx, b = self.ctx, self.b
        if not ctx.group_loops:
            return
        gl = ctx.group_loops[-1]
        if gl["used"]:
            brk = b.load(gl["brk"])
            nxt = ctx.fn.append_basic_block("g.nobrk")
            b.cbranch(b.icmp_unsigned("!=", brk, ir.Constant(I8, 0)), gl["exit"], nxt)
            b.position_at_end(nxt)
            cont = b.load(gl["cont"])
            nxt2 = ctx.fn.append_basic_block("g.nocont")
            b.cbranch(b.icmp_unsigned("!=", cont, ir.Constant(I8, 0)), gl["cont_block"], nxt2)
            b.position_at_end(nxt2)

    def predeclare(self, s):
        """A declaration at group level: give it per-work-item storage in the current scope."""
        if isinstance(s, c_ast.Decl):
            self.declare_var(s, replicated=True, init=False)
        elif isinstance(s, c_ast.DeclList):
            for d in s.decls:
                self.declare_var(d, replicated=True, init=False)

    def group_stmt(self, s):
        b = self.b
        prev = b.debug_metadata
        loc = self._di_loc(s)
        if loc is not None:
            b.debug_metadata = loc
        self._group_stmt(s)
        b.debug_metadata = prev

    def _group_stmt(self, s):
        ctx, b = self.ctx, self.b
        call, kind = self.barrier_call(s)
        if call is not None:
            self.inline_group_call(s, call, kind)
            return
        if isinstance(s, c_ast.FuncCall):
            # the barrier itself: the boundary between two regions
            if self.is_barrier_call(s):
                self.check_barrier_args(s)
                return
            self.error(s, "barrier() must be a statement of its own")
        if isinstance(s, c_ast.Compound):
            self.group_stmts(s.block_items or [], new_scope=True)
            return
        if isinstance(s, c_ast.If):
            cond = self.as_item0(lambda: self.cond_value(s.cond))
            then_b = ctx.fn.append_basic_block("g.then")
            else_b = ctx.fn.append_basic_block("g.else")
            end_b = ctx.fn.append_basic_block("g.endif")
            b.cbranch(cond, then_b, else_b)
            b.position_at_end(then_b)
            self.group_stmts([s.iftrue], new_scope=True)
            if not b.block.is_terminated:
                b.branch(end_b)
            b.position_at_end(else_b)
            if s.iffalse is not None:
                self.group_stmts([s.iffalse], new_scope=True)
            if not b.block.is_terminated:
                b.branch(end_b)
            b.position_at_end(end_b)
            return
        if isinstance(s, (c_ast.For, c_ast.While, c_ast.DoWhile)):
            self.push()
            if isinstance(s, c_ast.For) and s.init is not None:
                init = s.init
                if isinstance(init, c_ast.DeclList):
                    for d in init.decls:
                        self.declare_var(d, replicated=True, init=False)
                self.item_region(lambda: self.for_init(init))
            head = ctx.fn.append_basic_block("g.head")
            body = ctx.fn.append_basic_block("g.body")
            step = ctx.fn.append_basic_block("g.step")
            exit_ = ctx.fn.append_basic_block("g.exit")
            gl = {"brk": self._entry_alloca(I8, "g.brk"), "cont": self._entry_alloca(I8, "g.cont"),
                  "exit": exit_, "cont_block": step, "used": True}
            if isinstance(s, c_ast.DoWhile):
                b.branch(body)
            else:
                b.branch(head)
            b.position_at_end(head)
            if ctx.done is not None:
                # every work-item has returned: leave the loop (its condition would never change)
                alive = ctx.fn.append_basic_block("g.alive")
                b.cbranch(b.icmp_unsigned("<", self.leader(), ctx.nitems), alive, exit_)
                b.position_at_end(alive)
            if s.cond is not None:
                c = self.as_item0(lambda: self.cond_value(s.cond))
                b.cbranch(c, body, exit_)
            else:
                b.branch(body)
            b.position_at_end(body)
            b.store(ir.Constant(I8, 0), gl["brk"])
            b.store(ir.Constant(I8, 0), gl["cont"])
            ctx.group_loops.append(gl)
            self.group_stmts([s.stmt], new_scope=True)
            ctx.group_loops.pop()
            if not b.block.is_terminated:
                b.branch(step)
            b.position_at_end(step)
            if isinstance(s, c_ast.For) and s.next is not None:
                nxt = s.next
                self.item_region(lambda: self.expr(nxt))
            b.branch(head)
            b.position_at_end(exit_)
            self.pop()
            return
        if isinstance(s, c_ast.Switch):
            self.error(s, "barrier() inside a switch statement is not supported")
        if isinstance(s, c_ast.Label):
            self.error(s, "goto and labels are not supported")
        bar = self._find_barrier(s)
        self.error(bar or s, "barrier() must be a statement of its own, at the top level of the kernel or inside if/for/while/do blocks")

    def is_barrier_call(self, s):
        return isinstance(s, c_ast.FuncCall) and isinstance(s.name, c_ast.ID) and \
            s.name.name in BARRIERS

    def check_barrier_args(self, s):
        args = s.args.exprs if s.args else []
        if s.name.name == "wait_group_events":
            if len(args) != 2:
                self.error(s, f"too {'few' if len(args) < 2 else 'many'} arguments to function call 'wait_group_events', expected 2, have {len(args)}")
            self.as_item0(lambda: [self.expr(a) for a in args])
            self.ctx.uses_barrier = True
            return
        if len(args) not in (1, 2) or (len(args) == 2 and s.name.name == "barrier"):
            self.error(s, f"too {'few' if len(args) < 1 else 'many'} arguments to function call, expected 1, have {len(args)}")
        for a in args:
            v = self.as_item0(lambda: self.expr(a))
            if not (v.type.is_scalar and v.type.is_integer):
                self.error(a, "barrier() flags must be an integer (CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)")
        self.ctx.uses_barrier = True

    # ------------------------------------------------------------------ storage
    def _entry_alloca(self, lty, name="", size=None):
        """An alloca in the entry block; ``size`` (the group's work-items) makes one per work-item."""
        b = self.b
        with b.goto_entry_block():            # the entry block stays open until the function is done
            a = b.alloca(lty, size=size, name=name)
        nbytes = lty.get_abi_size(T.target_data())
        if size is None:
            self.ctx.frame_bytes += nbytes
        else:
            self.ctx.item_bytes += nbytes
        return a

    def alloca(self, t, name=""):
        a = self._entry_alloca(storage_type(t), name)
        if not t.is_struct:
            a.align = max(t.align(), 1)
        return a

    def load(self, ptr, t, align=None):
        v = self.b.load(ptr, align=align)
        if t.is_vector and t.n == 3:
            v = self.b.shuffle_vector(v, ir.Constant(v.type, None), ir.Constant(ir.VectorType(I32, 3), [0, 1, 2]))
        return v

    def store(self, ptr, t, v, align=None):
        if t.is_vector and t.n == 3:
            v = self.b.shuffle_vector(v, ir.Constant(v.type, None), ir.Constant(ir.VectorType(I32, 4), [0, 1, 2, 2]))
        self.b.store(v, ptr, align=align)

    def var_addr(self, sym):
        if sym.replicated:
            lin = self.b.load(self.ctx.lin)
            return self.b.gep(sym.ptr, [lin])
        return sym.ptr

    def declare_var(self, d, replicated=False, init=True):
        """A block-scope declaration.  With ``init=False`` only the storage; ``init`` later."""
        ctx, b = self.ctx, self.b
        if d.name is None:
            self.decl_type(d.type, d)
            return
        if "static" in (d.storage or []) or "extern" in (d.storage or []):
            self.error(d, f"'{(d.storage or [''])[0]}' variables are not supported in functions")
        if type(d.type).__name__ in ("FuncDecl", "FuncDeclExt"):
            self.error(d, "function declarations inside functions are not supported")
        key = id(d)
        pre = getattr(self, "_predeclared", None)
        if pre is None:
            pre = self._predeclared = {}
        if init and key in pre:
            sym = pre[key]
            self.scopes[-1][d.name] = sym
            self.init_var(d, sym)
            return
        sp = []
        t = self.decl_type(d.type, d, sp)
        space = next((x for x in sp if x), None) if sp else None
        space = sp[0] if sp else None
        if t.is_void:
            self.error(d, f"variable '{d.name}' has incomplete type 'void'")
        if t.is_struct and not t.complete():
            self.error(d, f"variable '{d.name}' has incomplete type '{t}'")
        if t.is_array and t.n == -1:
            if isinstance(d.init, c_ast.InitList):
                t = Array(t.elem, len(d.init.exprs))
            else:
                self.error(d, f"definition of variable '{d.name}' with array type needs an explicit size or an initializer")
        if d.name in self.scopes[-1] and self.scopes[-1][d.name].kind == "var" and key not in pre:
            self.error(d, f"redefinition of '{d.name}'")
        if space == "global":
            self.error(d, "variables in the __global address space must be pointers or program-scope")
        if space == "constant":
            if d.init is None:
                self.error(d, f"'__constant' variable '{d.name}' needs an initializer")
            cinit = self.const_initializer(t, d.init)
            g = ir.GlobalVariable(self.module, storage_type(t), name=self.module.get_unique_name(f"__const.{ctx.name}.{d.name}"))
            g.global_constant = True
            g.linkage = "internal"
            g.initializer = cinit
            sym = Sym("var", t, ptr=g, const=True, space="constant")
            self.scopes[-1][d.name] = sym
            pre[key] = sym
            return
        if space == "local":
            if not ctx.kernel:
                self.error(d, "'__local' variables can only be declared in a kernel function")
            if d.init is not None:
                self.error(d, f"'__local' variable '{d.name}' cannot have an initializer")
            if self.spmd:
                ctx.local_bytes = -(-ctx.local_bytes // 16) * 16
                fn = self.spmd_intrinsic("__mncl_local", I8P, [I64, I64])
                with self.b.goto_entry_block():
                    raw = self.b.call(fn, [ir.Constant(I64, ctx.local_bytes), ir.Constant(I64, t.size())])
                    a = self.b.bitcast(raw, storage_type(t).as_pointer(), name=f"local.{d.name}")
            else:
                a = self._entry_alloca(storage_type(t), f"local.{d.name}")
                a.align = 16
            ctx.local_bytes += t.size()
            sym = Sym("var", t, ptr=a, space="local")
            self.scopes[-1][d.name] = sym
            pre[key] = sym
            return
        const = _top_const(d.type)
        t2 = _strip_const(t)
        if replicated:
            a = self._entry_alloca(storage_type(t2), f"{d.name}.wi", size=ctx.nitems)
            a.align = max(t2.align(), 4)
            sym = Sym("var", t2, ptr=a, replicated=True, const=const)
        else:
            a = self.alloca(t2, d.name)
            sym = Sym("var", t2, ptr=a, const=const)
        pre[key] = sym
        self.scopes[-1][d.name] = sym
        if init:
            self.init_var(d, sym)

    def init_var(self, d, sym):
        if d.init is None:
            return
        t = sym.type
        lv = LV(t, self.var_addr(sym))
        self.init_lvalue(lv, d.init, d)

    def init_lvalue(self, lv, init, node):
        t = lv.type
        if isinstance(init, c_ast.NamedInitializer):
            self.error(init.expr, "designated initializers are not supported")
        if isinstance(init, c_ast.InitList):
            if t.is_array:
                if len(init.exprs) > t.n:
                    self.error(init.exprs[t.n], "excess elements in array initializer")
                # zero the whole array first, then the given elements
                self.b.store(ir.Constant(storage_type(t), None), lv.ptr)
                for i, e in enumerate(init.exprs):
                    p = self.b.gep(lv.ptr, [ir.Constant(I32, 0), ir.Constant(I32, i)])
                    self.init_lvalue(LV(t.elem, p), e, e)
                return
            if t.is_struct:
                if len(init.exprs) > len(t.fields):
                    self.error(init.exprs[len(t.fields)], "excess elements in struct initializer")
                self.b.store(ir.Constant(storage_type(t), None), lv.ptr)
                for i, e in enumerate(init.exprs):
                    p = self.b.gep(lv.ptr, [ir.Constant(I32, 0), ir.Constant(I32, i)])
                    self.init_lvalue(LV(t.fields[i][1], p), e, e)
                return
            if t.is_vector:
                v = self.vector_literal(t, init.exprs, init)
                self.store(lv.ptr, t, v.v)
                return
            if len(init.exprs) != 1:
                self.error(init, "scalar initializer must have exactly one element")
            init = init.exprs[0]
        if t.is_array:
            self.error(init, "array initializer must be an initializer list")
        v = self.expr(init)
        v = self.assign_convert(v, t, init)
        self.store(lv.ptr, t, v.v)

    # ------------------------------------------------------------------ statements
    def stmt(self, s):
        b = self.b
        prev = b.debug_metadata
        loc = self._di_loc(s)
        if loc is not None:
            b.debug_metadata = loc
        self._stmt(s)
        b.debug_metadata = prev

    def _stmt(self, s):
        b, ctx = self.b, self.ctx
        if b.block.is_terminated:
            # unreachable code after return/break: keep lowering into a dead block for diagnostics
            b.position_at_end(ctx.fn.append_basic_block("dead"))
        if isinstance(s, c_ast.Compound):
            self.push()
            for it in s.block_items or []:
                self.stmt(it)
            self.pop()
        elif isinstance(s, c_ast.Decl):
            self.declare_var(s)
        elif isinstance(s, c_ast.DeclList):
            for d in s.decls:
                self.declare_var(d)
        elif isinstance(s, c_ast.Typedef):
            self.typedef(s)
        elif isinstance(s, c_ast.If):
            cond = self.cond_value(s.cond)
            if s.iffalse is None:
                with b.if_then(cond):
                    self.push()
                    self.stmt(s.iftrue)
                    self.pop()
            else:
                with b.if_else(cond) as (then, otherwise):
                    with then:
                        self.push()
                        self.stmt(s.iftrue)
                        self.pop()
                    with otherwise:
                        self.push()
                        self.stmt(s.iffalse)
                        self.pop()
        elif isinstance(s, c_ast.For):
            self.push()
            if s.init is not None:
                self.for_init(s.init)
            self.loop(s.cond, s.stmt, s.next, do=False)
            self.pop()
        elif isinstance(s, c_ast.While):
            self.loop(s.cond, s.stmt, None, do=False)
        elif isinstance(s, c_ast.DoWhile):
            self.loop(s.cond, s.stmt, None, do=True)
        elif isinstance(s, c_ast.Break):
            self.jump(s, "break")
        elif isinstance(s, c_ast.Continue):
            self.jump(s, "continue")
        elif isinstance(s, c_ast.Return):
            self.ret(s)
        elif isinstance(s, c_ast.Switch):
            self.switch(s)
        elif isinstance(s, (c_ast.Case, c_ast.Default)):
            self.error(s, f"'{'case' if isinstance(s, c_ast.Case) else 'default'}' statement not in switch statement")
        elif isinstance(s, c_ast.EmptyStatement):
            pass
        elif isinstance(s, (c_ast.Goto, c_ast.Label)):
            self.error(s, "goto and labels are not supported")
        elif isinstance(s, c_ast.Pragma) or type(s).__name__ == "PreprocessorLine":
            pass
        elif isinstance(s, c_ast.StaticAssert):
            self.static_assert(s)
        elif type(s).__name__ == "Asm":
            self.error(s, "inline assembly is not supported")
        elif isinstance(s, c_ast.FuncDef):
            self.error(s, "function definitions inside functions are not supported")
        elif isinstance(s, c_ast.Node):
            if self.is_barrier_call(s) and not self.spmd:    # SPMD: every work-item calls __mncl_barrier
                self.error(s, "barrier() inside a helper function is not supported; call it from the kernel body")
            self.expr(s, discard=True)
        else:
            self.error(None, "internal: unknown statement")

    def for_init(self, init):
        if isinstance(init, c_ast.DeclList):
            for d in init.decls:
                self.declare_var(d)
        elif isinstance(init, c_ast.Decl):
            self.declare_var(init)
        else:
            self.expr(init, discard=True)

    def loop(self, cond, body, step, do):
        b, ctx = self.b, self.ctx
        head = ctx.fn.append_basic_block("loop.head")
        bodyb = ctx.fn.append_basic_block("loop.body")
        stepb = ctx.fn.append_basic_block("loop.step")
        exitb = ctx.fn.append_basic_block("loop.exit")
        b.branch(bodyb if do else head)
        b.position_at_end(head)
        if cond is not None:
            b.cbranch(self.cond_value(cond), bodyb, exitb)
        else:
            b.branch(bodyb)
        b.position_at_end(bodyb)
        ctx.loops.append((exitb, stepb, len(ctx.switch_stack)))
        self.push()
        self.stmt(body)
        self.pop()
        ctx.loops.pop()
        if not b.block.is_terminated:
            b.branch(stepb)
        b.position_at_end(stepb)
        if step is not None:
            self.expr(step, discard=True)
        b.branch(head)
        b.position_at_end(exitb)

    def jump(self, s, kind):
        ctx, b = self.ctx, self.b
        word = kind
        if kind == "break" and ctx.switch_stack and (not ctx.loops or ctx.switch_stack[-1][1] >= len(ctx.loops)):
            b.branch(ctx.switch_stack[-1][0])
            return
        if ctx.loops:
            exitb, stepb, _ = ctx.loops[-1]
            b.branch(exitb if kind == "break" else stepb)
            return
        if ctx.group_loops and ctx.in_region:
            gl = ctx.group_loops[-1]
            b.store(ir.Constant(I8, 1), gl["brk" if kind == "break" else "cont"])
            b.branch(ctx.item_latch)
            return
        self.error(s, f"'{word}' statement not in loop{' or switch' if kind == 'break' else ''} statement")

    def ret(self, s):
        ctx, b = self.ctx, self.b
        inl = getattr(ctx, "inline_ret", None)
        if inl is not None and ctx.kernel:
            final, slot = inl
            if s is not final:
                self.error(s, f"'return' in helper '{ctx.name}' (which calls barrier()) is only supported as its last statement")
            if s.expr is not None:
                if slot is None:
                    self.error(s, f"void function '{ctx.name}' should not return a value")
                v = self.assign_convert(self.expr(s.expr), ctx.ret_type, s.expr)
                self.store(b.gep(slot, [b.load(ctx.lin)]), ctx.ret_type, v.v)
            elif slot is not None:
                self.error(s, f"non-void function '{ctx.name}' should return a value")
            return
        if s.expr is not None:
            if ctx.ret_type.is_void:
                self.error(s, f"void function '{ctx.name}' should not return a value")
            v = self.assign_convert(self.expr(s.expr), ctx.ret_type, s.expr)
            self.store(ctx.ret_ptr, ctx.ret_type, v.v)
        elif not ctx.ret_type.is_void:
            self.error(s, f"non-void function '{ctx.name}' should return a value")
        if ctx.kernel:
            if ctx.done is not None:
                b.store(ir.Constant(I8, 1), b.gep(ctx.done, [b.load(ctx.lin)]))
            b.branch(ctx.item_latch)
        else:
            b.branch(ctx.ret_block)

    def switch(self, s):
        ctx, b = self.ctx, self.b
        v = self.expr(s.cond)
        if not (v.type.is_scalar and v.type.is_integer):
            self.error(s.cond, "statement requires expression of integer type")
        v = self.convert(v, T.promote(v.type), s.cond)
        body = s.stmt
        items = body.block_items if isinstance(body, c_ast.Compound) else [body]
        items = items or []
        endb = ctx.fn.append_basic_block("sw.end")
        defaultb = None
        sw = b.switch(v.v, endb)
        seen = set()
        blocks = []
        # flatten: case labels may wrap statements
        flat = []
        for it in items:
            while isinstance(it, (c_ast.Case, c_ast.Default)):
                flat.append(("label", it))
                stmts = it.stmts or []
                if len(stmts) == 1 and isinstance(stmts[0], (c_ast.Case, c_ast.Default)):
                    it = stmts[0]
                    continue
                for st in stmts:
                    flat.append(("stmt", st))
                it = None
                break
            if it is not None:
                flat.append(("stmt", it))
        ctx.switch_stack.append((endb, len(ctx.loops)))
        self.push()
        b.position_at_end(ctx.fn.append_basic_block("sw.dead"))
        for k, (kind, it) in enumerate(flat):
            if kind == "label" and k + 2 < len(flat) and isinstance(flat[k + 1][1], c_ast.EmptyStatement) and \
                    _same_coord(flat[k + 1][1], it) and isinstance(flat[k + 2][1], (c_ast.Decl, c_ast.DeclList)):
                # pycparser inserts an empty statement between a label and a declaration (C23); C99 rejects it
                self.error(flat[k + 2][1], "a label can only be followed by a statement, not a declaration "
                                           "(put the case's code in braces)")
            if kind == "label":
                blk = ctx.fn.append_basic_block("sw.case")
                if not b.block.is_terminated:
                    b.branch(blk)
                b.position_at_end(blk)
                if isinstance(it, c_ast.Case):
                    cv = self.const_eval(it.expr)
                    if cv is None or isinstance(cv, float):
                        self.error(it.expr, "case label is not an integer constant expression")
                    cv = wrap_int(int(cv), v.type)
                    if cv in seen:
                        self.error(it.expr, f"duplicate case value '{cv}'")
                    seen.add(cv)
                    sw.add_case(ir.Constant(v.type.llvm_type(), cv), blk)
                else:
                    if defaultb is not None:
                        self.error(it, "multiple default labels in one switch")
                    defaultb = blk
            else:
                if b.block.is_terminated:
                    b.position_at_end(ctx.fn.append_basic_block("sw.dead"))
                self.stmt(it)
        self.pop()
        ctx.switch_stack.pop()
        if not b.block.is_terminated:
            b.branch(endb)
        if defaultb is not None:
            sw.default = defaultb
        b.position_at_end(endb)

    # ------------------------------------------------------------------ conditions
    def cond_value(self, node):
        v = self.expr(node)
        return self.to_i1(v, node)

    def to_i1(self, v, node):
        t, b = v.type, self.b
        if t.is_array:
            return ir.Constant(I1, 1)
        if t.is_pointer:
            return b.icmp_unsigned("!=", b.ptrtoint(v.v, I64), ir.Constant(I64, 0))
        if t.is_scalar:
            if t.is_float:
                return b.fcmp_unordered("!=", v.v, ir.Constant(v.v.type, 0.0))
            return b.icmp_unsigned("!=", v.v, ir.Constant(v.v.type, 0))
        if t.is_vector:
            self.error(node, f"vector '{t}' cannot be used as a condition; use any() or all()")
        self.error(node, f"'{t}' cannot be used as a condition")

    # ------------------------------------------------------------------ expressions
    def expr(self, n, discard=False):
        m = getattr(self, "e_" + type(n).__name__, None)
        if m is None:
            self.error(n, f"unsupported expression ({type(n).__name__})")
        b = self.b
        if b is None:
            return m(n) if not discard else (m(n, discard=True) if type(n).__name__ in ("UnaryOp",) else m(n))
        prev = b.debug_metadata
        loc = self._di_loc(n)
        if loc is not None:
            b.debug_metadata = loc
        r = m(n) if not discard else (m(n, discard=True) if type(n).__name__ in ("UnaryOp",) else m(n))
        b.debug_metadata = prev
        return r

    def rvalue(self, lv, node=None):
        """Load an lvalue; arrays decay to a pointer to the first element."""
        if isinstance(lv, SwizzleLV):
            base = self.load(lv.base.ptr, lv.base.type)
            return RV(lv.type, self.swizzle_get(base, lv.base.type, lv.idx), lv)
        t = lv.type
        if t.is_array:
            p = self.b.gep(lv.ptr, [ir.Constant(I32, 0), ir.Constant(I32, 0)])
            return RV(Pointer(t.elem, lv.space, lv.const), p, lv)
        align = None
        if t.is_vector:
            align = t.elem.bits // 8 if lv.space != "private" else None
        return RV(t, self.load(lv.ptr, t, align=align), lv)

    def lvalue(self, n):
        if isinstance(n, c_ast.ID):
            s = self.lookup(n.name)
            if s is None:
                self.undeclared(n)
            if s.kind != "var":
                if s.kind == "func":
                    self.error(n, "function pointers are not supported")
                self.error(n, f"expression is not assignable")
            return LV(s.type, self.var_addr(s), s.const, s.space)
        if isinstance(n, c_ast.ArrayRef):
            bound = None
            if isinstance(n.name, (c_ast.ID, c_ast.ArrayRef, c_ast.StructRef)) or \
                    (isinstance(n.name, c_ast.UnaryOp) and n.name.op == "*"):
                blv = self.lvalue(n.name)
                if isinstance(blv, SwizzleLV):
                    self.error(n, "subscripting a swizzle is not supported")
                if blv.type.is_vector:              # v[i]: clang's extension, component i (unchecked)
                    idx = self.expr(n.subscript)
                    if not (idx.type.is_scalar and idx.type.is_integer):
                        self.error(n.subscript, "array subscript is not an integer")
                    ep = self.b.bitcast(blv.ptr, blv.type.elem.llvm_type().as_pointer())
                    i = self.convert(idx, LONG, n.subscript).v
                    return LV(blv.type.elem, self.b.gep(ep, [i]), blv.const, blv.space, blv.via_pointer)
                base = self.rvalue(blv, n.name)
                if blv.type.is_array and blv.space in ("private", "local") and not self.spmd:
                    bound = (blv.type.n, blv.space, n.name)
            else:
                base = self.expr(n.name)
            idx = self.expr(n.subscript)
            if base.type.is_scalar and base.type.is_integer and idx.type.is_pointer:
                base, idx = idx, base
            if base.type.is_vector:
                self.error(n, "subscripting a vector value is only supported on a variable or memory location")
            if not base.type.is_pointer:
                self.error(n, "subscripted value is not an array, pointer, or vector")
            if not (idx.type.is_scalar and idx.type.is_integer):
                self.error(n.subscript, "array subscript is not an integer")
            pt = base.type
            if pt.pointee.is_void:
                self.error(n, "subscript of pointer to void")
            i = self.convert(idx, LONG, n.subscript).v
            if bound is not None:
                i = self.checked_index(n, i, *bound)
            return LV(pt.pointee, self.b.gep(base.v, [i]), pt.const_pointee or pt.space == "constant", pt.space, True)
        if isinstance(n, c_ast.UnaryOp) and n.op == "*":
            p = self.expr(n.expr)
            if not p.type.is_pointer:
                self.error(n, f"indirection requires pointer operand ('{p.type}' invalid)")
            if p.type.pointee.is_void:
                self.error(n, "dereferencing a pointer to void")
            return LV(p.type.pointee, p.v, p.type.const_pointee or p.type.space == "constant", p.type.space, True)
        if isinstance(n, c_ast.StructRef):
            return self.member(n)
        if isinstance(n, c_ast.Cast):
            self.error(n, "expression is not assignable")
        self.error(n, "expression is not assignable")

    def checked_index(self, n, i, length, space, array):
        """The work-group form's index into a private or ``__local`` array: both live on the stack of
        the CPU device's thread, where a write past the end overwrote return addresses (the process
        died, or ran what the kernel wrote).  An index outside ``[0, length)`` calls
        ``mncl_oob_abort(status, message, index)`` (mncl/cpu_faults.py), which never returns: it
        stores the place (a "file:line:col: the private array 'p' (8 elements)" string) and the
        index in the launch's status words, whose address is ``wg[16]`` (translator/module.py), and
        leaves the work-groups; the launch fails naming the kernel.  In range, a compare and a branch
        not taken; LLVM removes both where it proves the index in range (loops to the length)."""
        if isinstance(i, ir.Constant) and isinstance(i.constant, int) and 0 <= i.constant < length:
            return i
        b = self.b
        d = self.diag(n, "")
        what = f"'{c_generator.CGenerator().visit(array)}'"
        space = "__local" if space == "local" else "private"
        text = f"{d.filename}:{d.line}:{d.column}: the {space} array {what} ({length} elements)".encode() + b"\0"
        msg = ir.GlobalVariable(self.module, ir.ArrayType(I8, len(text)),
                                name=self.module.get_unique_name("mncl.oob"))
        msg.global_constant = True
        msg.linkage = "private"
        msg.initializer = ir.Constant(ir.ArrayType(I8, len(text)), bytearray(text))
        abort = self.module.globals.get("mncl_oob_abort")
        if abort is None:
            abort = ir.Function(self.module, ir.FunctionType(ir.VoidType(), [I64.as_pointer(), I64, I64]),
                                name="mncl_oob_abort")
            abort.attributes.add("noreturn")
            abort.attributes.add("cold")
            abort.attributes.add("nounwind")
        ok = b.icmp_unsigned("<", i, ir.Constant(I64, length))
        with b.if_then(b.not_(ok), likely=False):
            status = b.inttoptr(b.load(b.gep(self.ctx.wg, [ir.Constant(I64, 16)])), I64.as_pointer())
            b.call(abort, [status, b.ptrtoint(msg, I64), i])
            b.unreachable()
        return i

    def undeclared(self, n):
        name = n.name
        if name in BOOL_LITERALS:
            self.error(n, "expression is not assignable")
        if name in ("printf",):
            self.error(n, "printf is not supported")
        self.error(n, f"use of undeclared identifier '{name}'")

    def member(self, n):
        if n.type == "->":
            p = self.expr(n.name)
            if not p.type.is_pointer:
                self.error(n, f"member reference type '{p.type}' is not a pointer")
            base = LV(p.type.pointee, p.v, p.type.const_pointee or p.type.space == "constant", p.type.space, True)
        else:
            try_lv = isinstance(n.name, (c_ast.ID, c_ast.ArrayRef, c_ast.StructRef)) or \
                (isinstance(n.name, c_ast.UnaryOp) and n.name.op == "*")
            if try_lv:
                base = self.lvalue(n.name)
            else:
                v = self.expr(n.name)
                if not (v.type.is_vector or v.type.is_struct):
                    self.error(n, f"member reference base type '{v.type}' is not a structure or union")
                tmp = self.alloca(v.type, "tmp")
                self.store(tmp, v.type, v.v)
                base = LV(v.type, tmp, True)
        field = n.field.name
        if isinstance(base, SwizzleLV):
            # swizzle of swizzle
            idx = self.swizzle_indices(field, base.type, n)
            sub = tuple(base.idx[i] for i in idx)
            et = base.type.elem if base.type.is_vector else base.type
            return SwizzleLV(et if len(sub) == 1 else Vector(et, len(sub)), base.base, sub, base.const)
        t = base.type
        if t.is_vector:
            idx = self.swizzle_indices(field, t, n)
            return SwizzleLV(t.elem if len(idx) == 1 else Vector(t.elem, len(idx)), base, idx, base.const)
        if t.is_struct:
            if not t.complete():
                self.error(n, f"incomplete definition of type '{t}'")
            i, ft = t.field(field)
            if i is None:
                self.error(n.field, f"no member named '{field}' in '{t}'")
            if t.union:
                p = self.b.bitcast(base.ptr, storage_type(ft).as_pointer())
            else:
                p = self.b.gep(base.ptr, [ir.Constant(I32, 0), ir.Constant(I32, i)])
            return LV(ft, p, base.const, base.space, base.via_pointer)
        if n.type == "->":
            self.error(n, f"member reference base type '{t}' is not a structure or union")
        self.error(n, f"member reference base type '{t}' is not a structure or union")

    def swizzle_indices(self, field, t, node):
        n = t.n if t.is_vector else 1
        if field in ("lo", "hi", "even", "odd"):
            if n == 1:
                self.error(node, f"vector component access '.{field}' on a scalar")
            m = 4 if n == 3 else n
            h = m // 2
            idx = {"lo": range(h), "hi": range(h, m), "even": range(0, m, 2), "odd": range(1, m, 2)}[field]
            return tuple(idx)
        if re.fullmatch(r"[sS][0-9a-fA-F]+", field):
            idx = tuple(int(c, 16) for c in field[1:])
        elif re.fullmatch(r"[xyzw]+", field):
            idx = tuple("xyzw".index(c) for c in field)
        elif re.fullmatch(r"[rgba]+", field):
            idx = tuple("rgba".index(c) for c in field)
        else:
            self.error(node, f"illegal vector component name '{field}'")
        for i in idx:
            if i >= n:
                self.error(node, f"vector component access '.{field}' exceeds the length of '{t}'")
        if len(idx) not in (1, 2, 3, 4, 8, 16):
            self.error(node, f"vector component access '.{field}' has an invalid number of components")
        return idx

    def swizzle_get(self, vec, t, idx):
        b = self.b
        if len(idx) == 1:
            return b.extract_element(vec, ir.Constant(I32, idx[0]))
        mask = [min(i, t.n - 1) for i in idx]
        return b.shuffle_vector(vec, ir.Constant(vec.type, None), ir.Constant(ir.VectorType(I32, len(idx)), mask))

    def assign_to(self, lv, v, node):
        """Store rvalue ``v`` (already of lv.type) into lvalue ``lv``."""
        b = self.b
        if isinstance(lv, SwizzleLV):
            if lv.const:
                self.error(node, "cannot assign to a component of a const vector")
            if len(set(lv.idx)) != len(lv.idx):
                self.error(node, "vector is not assignable (contains duplicate components)")
            base = self.load(lv.base.ptr, lv.base.type)
            if len(lv.idx) == 1:
                base = b.insert_element(base, v.v, ir.Constant(I32, lv.idx[0]))
            else:
                for k, i in enumerate(lv.idx):
                    if i >= lv.base.type.n:
                        continue
                    e = b.extract_element(v.v, ir.Constant(I32, k))
                    base = b.insert_element(base, e, ir.Constant(I32, i))
            self.store(lv.base.ptr, lv.base.type, base)
            return
        if lv.const:
            if lv.space == "constant":
                self.error(node, "cannot assign to memory in the __constant address space")
            if lv.via_pointer:
                self.error(node, "cannot assign through a pointer to const")
            self.error(node, "cannot assign to variable with const-qualified type")
        if lv.type.is_array:
            self.error(node, "array type is not assignable")
        align = None
        if lv.type.is_vector and lv.space != "private":
            align = lv.type.elem.bits // 8
        self.store(lv.ptr, lv.type, v.v, align=align)

    def e_ID(self, n):
        if n.name in BOOL_LITERALS:
            return RV(BOOL, ir.Constant(I8, BOOL_LITERALS[n.name]))
        s = self.lookup(n.name)
        if s is None:
            bi = self.builtins.constant(self, n.name)
            if bi is not None:
                return bi
            if self.builtins.is_builtin(n.name):
                self.error(n, "function pointers are not supported")
            self.undeclared(n)
        if s.kind == "enum":
            return RV(INT, ir.Constant(I32, s.value))
        if s.kind == "func":
            self.error(n, "function pointers are not supported")
        return self.rvalue(self.lvalue(n), n)

    def e_Constant(self, n):
        if n.type == "string":
            self.error(n, "string literals are not supported")
        if n.type == "char":
            return RV(CHAR, ir.Constant(I8, wrap_int(parse_char(n.value, self, n), CHAR)))
        if n.type in ("float", "double"):
            v, single = parse_float(n.value)
            if v is None:
                self.error(n, f"invalid floating-point constant '{n.value}'")
            t = FLOAT if single or self.single_const else DOUBLE
            return RV(t, ir.Constant(t.llvm_type(), v))
        v, t = parse_int(n.value)
        if v is None:
            self.error(n, f"invalid integer constant '{n.value}'")
        if t is None:
            lit = n.value if len(n.value) <= 40 else f"{n.value[:20]}... ({len(n.value)} characters)"
            self.error(n, f"integer literal '{lit}' is too large for any integer type (ulong is 64 bits)")
        return RV(t, ir.Constant(t.llvm_type(), v))

    def e_ArrayRef(self, n):
        return self.rvalue(self.lvalue(n), n)

    def e_StructRef(self, n):
        return self.rvalue(self.member(n), n)

    def e_ExprList(self, n):
        v = None
        for e in n.exprs:
            v = self.expr(e)
        return v

    def e_TernaryOp(self, n):
        b = self.b
        c = self.expr(n.cond)
        if c.type.is_vector:
            x, y = self.expr(n.iftrue), self.expr(n.iffalse)
            t = self.common_vec(x, y, n)
            if not t.is_vector or t.n != c.type.n:
                self.error(n, "vector condition requires vector operands of the same length")
            x, y = self.convert(x, t, n), self.convert(y, t, n)
            if not c.type.is_integer:
                self.error(n.cond, "vector condition must have an integer element type")
            mask = b.icmp_signed("<", c.v, ir.Constant(c.v.type, None))
            return RV(t, b.select(mask, x.v, y.v))
        cond = self.to_i1(c, n.cond)
        # lower both arms in their own blocks (short-circuit semantics)
        then_b = self.ctx.fn.append_basic_block("sel.t")
        else_b = self.ctx.fn.append_basic_block("sel.f")
        end_b = self.ctx.fn.append_basic_block("sel.end")
        b.cbranch(cond, then_b, else_b)
        b.position_at_end(then_b)
        x = self.expr(n.iftrue)
        xb = b.block
        b.position_at_end(else_b)
        y = self.expr(n.iffalse)
        yb = b.block
        if x.type.is_void and y.type.is_void:
            t = VOID
        elif x.type.is_pointer or y.type.is_pointer:
            t = x.type if x.type.is_pointer else y.type
            if x.type.is_pointer and y.type.is_pointer and x.type.pointee != y.type.pointee:
                self.error(n, f"pointer type mismatch ('{x.type}' and '{y.type}')")
        elif x.type.is_struct or y.type.is_struct:
            if x.type != y.type:
                self.error(n, f"incompatible operand types ('{x.type}' and '{y.type}')")
            t = x.type
        elif x.type.arith() and y.type.arith():
            t = self.common_vec(x, y, n)
        else:
            self.error(n, f"incompatible operand types ('{x.type}' and '{y.type}')")
        b.position_at_end(yb)
        if not t.is_void:
            y = self.convert(y, t, n.iffalse) if not t.is_pointer else self.ptr_convert(y, t, n.iffalse)
        yb = b.block
        b.branch(end_b)
        b.position_at_end(xb)
        if not t.is_void:
            x = self.convert(x, t, n.iftrue) if not t.is_pointer else self.ptr_convert(x, t, n.iftrue)
        xb = b.block
        b.branch(end_b)
        b.position_at_end(end_b)
        if t.is_void:
            return RV(VOID, None)
        phi = b.phi(x.v.type)
        phi.add_incoming(x.v, xb)
        phi.add_incoming(y.v, yb)
        return RV(t, phi)

    def ptr_convert(self, v, t, node):
        if v.type.is_pointer:
            return RV(t, self.b.bitcast(v.v, t.llvm_type()))
        if v.type.is_scalar and v.type.is_integer:
            c = self.const_eval(node)
            if c == 0:
                return RV(t, ir.Constant(t.llvm_type(), None))
        self.error(node, f"incompatible conversion from '{v.type}' to '{t}'")

    def e_Cast(self, n):
        t = self.typename_type(n.to_type)
        chain, base = [], n.expr
        while isinstance(base, c_ast.StructRef) and base.type == ".":
            chain.append(base)
            base = base.name
        if t.is_vector and chain and isinstance(base, c_ast.ExprList):
            # '(int2)(a, b).yx': clang applies the swizzle to the vector literal
            v = self.vector_literal(t, base.exprs, n)
            for ref in reversed(chain):
                if not v.type.is_vector:
                    self.error(ref, f"member reference base type '{v.type}' is not a structure or union")
                idx = self.swizzle_indices(ref.field.name, v.type, ref)
                et = v.type.elem
                v = RV(et if len(idx) == 1 else Vector(et, len(idx)), self.swizzle_get(v.v, v.type, idx))
            return v
        if isinstance(n.expr, c_ast.ExprList):
            if not t.is_vector:
                v = self.expr(n.expr)
                return self.explicit_cast(v, t, n)
            return self.vector_literal(t, n.expr.exprs, n)
        v = self.expr(n.expr)
        return self.explicit_cast(v, t, n)

    def explicit_cast(self, v, t, n):
        t = _strip_const(t)
        if t.is_void:
            return RV(VOID, None)
        if t.is_pointer:
            if v.type.is_pointer:
                if v.type.space != t.space and t.space != "private" and v.type.space != "private":
                    self.error(n, f"casting '{v.type}' to '{t}' changes the address space")
                return RV(t, self.b.bitcast(v.v, t.llvm_type()))
            if v.type.is_scalar and v.type.is_integer:
                return RV(t, self.b.inttoptr(self.convert(v, ULONG, n).v, t.llvm_type()))
            self.error(n, f"cannot cast '{v.type}' to '{t}'")
        if v.type.is_pointer:
            if t.is_scalar and t.is_integer:
                return self.convert(RV(ULONG, self.b.ptrtoint(v.v, I64)), t, n)
            self.error(n, f"cannot cast '{v.type}' to '{t}'")
        if t.is_vector and v.type.is_vector:
            if t == v.type:
                return v
            self.error(n, f"invalid conversion between vector types '{v.type}' and '{t}'; use convert_{t}() or as_{t}()")
        if t.is_struct or v.type.is_struct:
            if t == v.type:
                return v
            self.error(n, f"cannot cast '{v.type}' to '{t}'")
        if v.type.is_vector and t.is_scalar:
            self.error(n, f"invalid conversion from vector '{v.type}' to scalar '{t}'")
        return self.convert(v, t, n)

    def vector_literal(self, t, exprs, n):
        b = self.b
        comps = []
        for e in exprs:
            v = self.expr(e)
            if v.type.is_vector:
                if v.type.elem != t.elem:
                    v = self.error(e, f"vector literal component of type '{v.type}' does not match '{t}'")
                for k in range(v.type.n):
                    comps.append(RV(t.elem, b.extract_element(v.v, ir.Constant(I32, k))))
            elif v.type.is_scalar:
                comps.append(self.convert(v, t.elem, e))
            else:
                self.error(e, f"invalid vector literal component of type '{v.type}'")
        if len(comps) == 1:
            return self.splat(comps[0], t)
        if len(comps) != t.n:
            self.error(n, f"{'too few' if len(comps) < t.n else 'too many'} elements in vector initialization (expected {t.n} elements, have {len(comps)})")
        vec = ir.Constant(t.llvm_type(), None)
        for k, c in enumerate(comps):
            vec = b.insert_element(vec, c.v, ir.Constant(I32, k))
        return RV(t, vec)

    def splat(self, s, t):
        b = self.b
        vec = b.insert_element(ir.Constant(t.llvm_type(), None), s.v, ir.Constant(I32, 0))
        return RV(t, b.shuffle_vector(vec, ir.Constant(t.llvm_type(), None), ir.Constant(ir.VectorType(I32, t.n), [0] * t.n)))

    # conversions -----------------------------------------------------------
    def convert(self, v, t, node):
        """Implicit / explicit arithmetic conversion of ``v`` to ``t``."""
        b = self.b
        s = v.type
        t = _strip_const(t)
        if s == t:
            return RV(t, v.v)
        if T.elem_of(s) == T.HALF or T.elem_of(t) == T.HALF:
            self.error(node, "arithmetic on 'half' values is not supported; use vload_half() and vstore_half()")
        if s.is_void:
            self.error(node, "void value used where a value is required")
        if t.is_bool:
            i1 = self.to_i1(v, node)
            return RV(BOOL, b.zext(i1, I8))
        if t.is_vector:
            if s.is_scalar:
                return self.splat(self.convert(v, t.elem, node), t)
            if s.is_vector:
                if s.n != t.n:
                    self.error(node, f"cannot convert between vector types '{s}' and '{t}' of different size")
                return RV(t, self.cvt_value(v.v, s.elem, t.elem, t.n))
            self.error(node, f"cannot convert '{s}' to '{t}'")
        if t.is_scalar:
            if s.is_scalar:
                return RV(t, self.cvt_value(v.v, s, t))
            if s.is_vector:
                self.error(node, f"cannot convert vector '{s}' to scalar '{t}'")
            if s.is_pointer:
                self.error(node, f"incompatible pointer to integer conversion from '{s}' to '{t}'")
            self.error(node, f"cannot convert '{s}' to '{t}'")
        if t.is_pointer:
            return self.ptr_convert(v, t, node)
        if t.is_struct:
            self.error(node, f"cannot convert '{s}' to '{t}'")
        self.error(node, f"cannot convert '{s}' to '{t}'")

    def cvt_value(self, x, s, t, n=None):
        b = self.b

        def vt(base):
            return ir.VectorType(base, n) if n else base
        if s.is_bool:
            s = T.UCHAR
        if t.is_float and s.is_float:
            if t.bits > s.bits:
                return b.fpext(x, vt(t.llvm_type()))
            if t.bits < s.bits:
                return b.fptrunc(x, vt(t.llvm_type()))
            return x
        if t.is_float:
            return (b.sitofp if s.signed else b.uitofp)(x, vt(t.llvm_type()))
        if s.is_float:
            return (b.fptosi if t.signed else b.fptoui)(x, vt(t.llvm_type()))
        if t.bits > s.bits:
            return (b.sext if s.signed else b.zext)(x, vt(t.llvm_type()))
        if t.bits < s.bits:
            return b.trunc(x, vt(t.llvm_type()))
        return x

    def assign_convert(self, v, t, node, generic=False):
        s = v.type
        t = _strip_const(t)
        if t.is_pointer:
            if s.is_pointer:
                if s.pointee != t.pointee and not (s.pointee.is_void or t.pointee.is_void):
                    self.error(node, f"incompatible pointer types converting '{s}' to '{t}'")
                if s.space != t.space and not (generic and t.space == "private"):
                    self.error(node, f"converting '{s}' to '{t}' changes the address space")
                return RV(t, self.b.bitcast(v.v, t.llvm_type()))
            return self.ptr_convert(v, t, node)
        if t.is_struct:
            if s != t:
                self.error(node, f"assigning to '{t}' from incompatible type '{s}'")
            return v
        if t.is_vector and s.is_vector and s != t:
            self.error(node, f"assigning to '{t}' from incompatible type '{s}'")
        if t.is_array:
            self.error(node, "array type is not assignable")
        if not s.arith() and not s.is_pointer:
            self.error(node, f"assigning to '{t}' from incompatible type '{s}'")
        return self.convert(v, t, node)

    def common_vec(self, x, y, node):
        a, c = x.type, y.type
        if a.is_vector and c.is_vector:
            if a != c:
                self.error(node, f"invalid operands to binary expression ('{a}' and '{c}')")
            return a
        if a.is_vector:
            if not c.is_scalar:
                self.error(node, f"invalid operands to binary expression ('{a}' and '{c}')")
            if c.is_float and a.is_integer:
                self.error(node, f"cannot convert between scalar type '{c}' and vector type '{a}'")
            return a
        if c.is_vector:
            if not a.is_scalar:
                self.error(node, f"invalid operands to binary expression ('{a}' and '{c}')")
            if a.is_float and c.is_integer:
                self.error(node, f"cannot convert between scalar type '{a}' and vector type '{c}'")
            return c
        if not (a.is_scalar and c.is_scalar):
            self.error(node, f"invalid operands to binary expression ('{a}' and '{c}')")
        return T.common_scalar(a, c)

    # operators -------------------------------------------------------------
    def e_BinaryOp(self, n):
        op = n.op
        if op in ("&&", "||"):
            return self.logical(n)
        x, y = self.expr(n.left), self.expr(n.right)
        return self.binary(op, x, y, n)

    def logical(self, n):
        b = self.b
        x = self.expr(n.left)
        if x.type.is_vector:
            y = self.expr(n.right)
            t = self.common_vec(x, y, n)
            rt = Vector(T.INT_OF_BITS[t.elem.bits], t.n)
            xa = self.vec_truth(self.convert(x, t, n))
            ya = self.vec_truth(self.convert(y, t, n))
            r = b.and_(xa, ya) if n.op == "&&" else b.or_(xa, ya)
            return RV(rt, b.sext(r, rt.llvm_type()))
        c1 = self.to_i1(x, n.left)
        start = b.block
        rhs = self.ctx.fn.append_basic_block("log.rhs")
        end = self.ctx.fn.append_basic_block("log.end")
        if n.op == "&&":
            b.cbranch(c1, rhs, end)
        else:
            b.cbranch(c1, end, rhs)
        b.position_at_end(rhs)
        y = self.expr(n.right)
        if y.type.is_vector:
            self.error(n.right, "vector operand of a scalar logical operator")
        c2 = self.to_i1(y, n.right)
        rb = b.block
        b.branch(end)
        b.position_at_end(end)
        phi = b.phi(I1)
        phi.add_incoming(ir.Constant(I1, 0 if n.op == "&&" else 1), start)
        phi.add_incoming(c2, rb)
        return RV(INT, b.zext(phi, I32))

    def vec_truth(self, v):
        t = v.type
        if t.elem.is_float:
            return self.b.fcmp_unordered("!=", v.v, ir.Constant(v.v.type, None))
        return self.b.icmp_unsigned("!=", v.v, ir.Constant(v.v.type, None))

    def binary(self, op, x, y, n):
        b = self.b
        tx, ty = x.type, y.type
        for v, side in ((x, n.left if hasattr(n, "left") else n), (y, n.right if hasattr(n, "right") else n)):
            if v.type.is_void:
                self.error(side, "void value used where a value is required")
            if v.type.is_struct:
                self.error(n, f"invalid operands to binary expression ('{tx}' and '{ty}')")
        # pointer arithmetic
        if tx.is_pointer or ty.is_pointer:
            return self.pointer_binary(op, x, y, n)
        if not (tx.arith() and ty.arith()):
            self.error(n, f"invalid operands to binary expression ('{tx}' and '{ty}')")
        if T.elem_of(tx) == T.HALF or T.elem_of(ty) == T.HALF:
            self.error(n, "arithmetic on 'half' values is not supported; use vload_half() and vstore_half()")
        if op in ("<<", ">>"):
            # result has the (promoted) type of the left operand
            if tx.is_float or ty.is_float:
                self.error(n, f"invalid operands to binary expression ('{tx}' and '{ty}')")
            if tx.is_vector:
                t = tx
                yy = self.convert(y, t, n) if ty.is_scalar or ty == tx else None
                if yy is None:
                    if ty.is_vector and ty.n == tx.n:
                        yy = RV(t, self.cvt_value(y.v, ty.elem, t.elem, t.n))
                    else:
                        self.error(n, f"invalid operands to binary expression ('{tx}' and '{ty}')")
            else:
                if ty.is_vector:
                    self.error(n, f"invalid operands to binary expression ('{tx}' and '{ty}')")
                t = T.promote(tx)
                yy = RV(t, self.cvt_value(y.v, ty, t))
            xx = self.convert(x, t, n)
            et = T.elem_of(t)
            mask = ir.Constant(t.llvm_type(), [et.bits - 1] * t.n) if t.is_vector else ir.Constant(t.llvm_type(), et.bits - 1)
            cnt = b.and_(yy.v, mask)
            if op == "<<":
                return RV(t, b.shl(xx.v, cnt))
            return RV(t, b.ashr(xx.v, cnt) if et.signed else b.lshr(xx.v, cnt))
        t = self.common_vec(x, y, n)
        xx, yy = self.convert(x, t, n), self.convert(y, t, n)
        et = T.elem_of(t)
        if op in ("<", ">", "<=", ">=", "==", "!="):
            if et.is_float:
                if op == "!=":
                    r = b.fcmp_unordered("!=", xx.v, yy.v)
                else:
                    r = b.fcmp_ordered(op, xx.v, yy.v)
            elif et.signed:
                r = b.icmp_signed(op, xx.v, yy.v)
            else:
                r = b.icmp_unsigned(op, xx.v, yy.v)
            if t.is_vector:
                rt = Vector(T.INT_OF_BITS[et.bits], t.n)
                return RV(rt, b.sext(r, rt.llvm_type()))
            return RV(INT, b.zext(r, I32))
        if et.is_float:
            f = {"+": b.fadd, "-": b.fsub, "*": b.fmul, "/": b.fdiv}.get(op)
            if op == "%":
                self.error(n, f"invalid operands to binary expression ('{tx}' and '{ty}'); use fmod()")
            if f is None:
                self.error(n, f"invalid operands to binary expression ('{tx}' and '{ty}')")
            r = f(xx.v, yy.v)
            if self.fast_math:
                r.flags.append("fast") if hasattr(r, "flags") else None
            return RV(t, r)
        if op in ("/", "%"):
            return RV(t, self.int_divrem(op, xx.v, yy.v, et, t))
        f = {"+": b.add, "-": b.sub, "*": b.mul, "&": b.and_, "|": b.or_, "^": b.xor}.get(op)
        if f is None:
            self.error(n, f"invalid operator '{op}'")
        return RV(t, f(xx.v, yy.v))

    def int_divrem(self, op, x, y, et, t):
        """Integer / and %: division by zero (and INT_MIN / -1) give an unspecified value, not a trap."""
        b = self.b
        ty = x.type
        zero = ir.Constant(ty, None)
        one = ir.Constant(ty, [1] * t.n) if t.is_vector else ir.Constant(ty, 1)
        bad = b.icmp_unsigned("==", y, zero)
        if et.signed:
            minv = -(1 << (et.bits - 1))
            mn = ir.Constant(ty, [minv] * t.n) if t.is_vector else ir.Constant(ty, minv)
            m1 = ir.Constant(ty, [-1] * t.n) if t.is_vector else ir.Constant(ty, -1)
            ovf = b.and_(b.icmp_signed("==", x, mn), b.icmp_signed("==", y, m1))
            bad = b.or_(bad, ovf)
        safe = b.select(bad, one, y)
        if op == "/":
            return b.sdiv(x, safe) if et.signed else b.udiv(x, safe)
        return b.srem(x, safe) if et.signed else b.urem(x, safe)

    def pointer_binary(self, op, x, y, n):
        b = self.b
        tx, ty = x.type, y.type
        if op in ("+", "-") and tx.is_pointer and ty.is_scalar and ty.is_integer:
            if tx.pointee.is_void:
                self.error(n, "arithmetic on a pointer to void")
            i = self.convert(y, LONG, n).v
            if op == "-":
                i = b.neg(i)
            return RV(tx, b.gep(x.v, [i]))
        if op == "+" and ty.is_pointer and tx.is_scalar and tx.is_integer:
            return self.pointer_binary(op, y, x, n)
        if op == "-" and tx.is_pointer and ty.is_pointer:
            if tx.pointee != ty.pointee:
                self.error(n, f"'{tx}' and '{ty}' are not pointers to compatible types")
            d = b.sub(b.ptrtoint(x.v, I64), b.ptrtoint(y.v, I64))
            size = max(tx.pointee.size(), 1)
            return RV(LONG, b.sdiv(d, ir.Constant(I64, size)))
        if op in ("<", ">", "<=", ">=", "==", "!="):
            if tx.is_pointer and ty.is_pointer:
                r = b.icmp_unsigned(op, b.ptrtoint(x.v, I64), b.ptrtoint(y.v, I64))
                return RV(INT, b.zext(r, I32))
            p, o = (x, y) if tx.is_pointer else (y, x)
            if o.type.is_integer and self.const_eval(n.right if tx.is_pointer else n.left) == 0 and op in ("==", "!="):
                r = b.icmp_unsigned(op, b.ptrtoint(p.v, I64), ir.Constant(I64, 0))
                return RV(INT, b.zext(r, I32))
        self.error(n, f"invalid operands to binary expression ('{tx}' and '{ty}')")

    def e_UnaryOp(self, n, discard=False):
        op = n.op
        b = self.b
        if op == "sizeof":
            if isinstance(n.expr, c_ast.Typename):
                t = self.typename_type(n.expr)
            else:
                t = self.type_of(n.expr)
            if t.is_void or t.is_function:
                self.error(n, f"invalid application of 'sizeof' to '{t}'")
            if t.is_struct and not t.complete():
                self.error(n, f"invalid application of 'sizeof' to an incomplete type '{t}'")
            return RV(ULONG, ir.Constant(I64, t.size()))
        if op == "vec_step":
            if isinstance(n.expr, c_ast.Typename):
                t = self.typename_type(n.expr)
            else:
                t = self.type_of(n.expr)
            if not t.arith():
                self.error(n, f"invalid argument type '{t}' to 'vec_step'")
            return RV(INT, ir.Constant(I32, t.n if t.is_vector else 1))
        if op == "_Alignof" or op == "__alignof__":
            t = self.typename_type(n.expr) if isinstance(n.expr, c_ast.Typename) else self.type_of(n.expr)
            return RV(ULONG, ir.Constant(I64, t.align()))
        if op == "&":
            if isinstance(n.expr, c_ast.ID):
                s = self.lookup(n.expr.name)
                if s is not None and s.kind == "func":
                    self.error(n, "function pointers are not supported")
            lv = self.lvalue(n.expr)
            if isinstance(lv, SwizzleLV):
                self.error(n, "address of vector element requested")
            return RV(Pointer(lv.type, lv.space, lv.const), lv.ptr)
        if op == "*":
            return self.rvalue(self.lvalue(n), n)
        if op in ("++", "--", "p++", "p--"):
            lv = self.lvalue(n.expr)
            old = self.rvalue(lv, n)
            t = old.type
            if t.is_pointer:
                new = RV(t, b.gep(old.v, [ir.Constant(I64, 1 if "+" in op else -1)]))
            elif t.is_scalar and not t.is_bool or t.is_vector:
                one = self.convert(RV(INT, ir.Constant(I32, 1)), t, n)
                if T.elem_of(t).is_float:
                    new = RV(t, (b.fadd if "+" in op else b.fsub)(old.v, one.v))
                else:
                    new = RV(t, (b.add if "+" in op else b.sub)(old.v, one.v))
            else:
                self.error(n, f"cannot increment value of type '{t}'")
            self.assign_to(lv, new, n)
            return old if op.startswith("p") else new
        v = self.expr(n.expr)
        t = v.type
        if op == "!":
            if t.is_vector:
                rt = Vector(T.INT_OF_BITS[t.elem.bits], t.n)
                z = self.vec_truth(v)
                return RV(rt, b.sext(b.not_(z), rt.llvm_type()))
            c = self.to_i1(v, n.expr)
            return RV(INT, b.zext(b.not_(c), I32))
        if not t.arith():
            self.error(n, f"invalid argument type '{t}' to unary expression")
        if op == "+":
            return self.convert(v, T.promote(t) if t.is_scalar else t, n)
        if op == "-":
            tt = T.promote(t) if t.is_scalar else t
            v = self.convert(v, tt, n)
            if T.elem_of(tt).is_float:
                return RV(tt, b.fneg(v.v))
            return RV(tt, b.neg(v.v))
        if op == "~":
            if T.elem_of(t).is_float:
                self.error(n, f"invalid argument type '{t}' to unary expression")
            tt = T.promote(t) if t.is_scalar else t
            v = self.convert(v, tt, n)
            return RV(tt, b.not_(v.v))
        self.error(n, f"unsupported unary operator '{op}'")

    def type_of(self, e):
        """The type of an expression without keeping its code (sizeof)."""
        saved = self.b.block
        blk = self.ctx.fn.append_basic_block("sizeof.dead") if self.ctx else None
        if blk is None:
            self.error(e, "sizeof of an expression is not supported here")
        self.b.position_at_end(blk)
        v = self.expr(e)
        if not self.b.block.is_terminated:
            self.b.unreachable()
        self.b.position_at_end(saved)
        if v.lvalue is not None and isinstance(v.lvalue, LV) and v.lvalue.type.is_array:
            return v.lvalue.type
        return v.type

    def e_Assignment(self, n):
        op = n.op
        lv = self.lvalue(n.lvalue)
        if op == "=":
            v = self.expr(n.rvalue)
            v = self.assign_convert(v, lv.type, n.rvalue)
            self.assign_to(lv, v, n)
            return v
        cur = self.rvalue(lv, n)
        r = self.expr(n.rvalue)
        res = self.binary(op[:-1], cur, r, n)
        if cur.type.is_vector and not res.type.is_vector:
            self.error(n, "invalid vector compound assignment")
        res = self.assign_convert(res, lv.type, n) if not lv.type.is_pointer else res
        self.assign_to(lv, res, n)
        return res

    def e_FuncCall(self, n):
        if not isinstance(n.name, c_ast.ID):
            self.error(n, "function pointers are not supported")
        name = n.name.name
        args = n.args.exprs if n.args is not None else []
        s = self.lookup(name)
        if s is not None and s.kind == "var":
            self.error(n, "function pointers are not supported")
        if s is None or s.kind != "func":
            if name in BARRIERS and not self.spmd:
                if self.ctx.kernel and self.ctx.uses_barrier:
                    self.error(n, "barrier() must be a statement of its own")
                if not self.ctx.kernel:
                    self.error(n, "barrier() inside a helper function is not supported; call it from the kernel body")
            r = self.builtins.call(self, name, args, n)
            if r is not None:
                return r
            if name == "printf":
                self.error(n, "printf is not supported")
            self.error(n.name, f"call to undeclared function '{name}'")
        f = self.helper_ir(name, n)
        params = f["params"]
        if len(args) != len(params):
            self.error(n, f"too {'few' if len(args) < len(params) else 'many'} arguments to function call, expected {len(params)}, have {len(args)}")
        vals = []
        for a, pt in zip(args, params):
            v = self.expr(a)
            v = self.assign_convert(v, pt, a, generic=True)   # an unqualified pointer parameter is generic
            if pt.is_vector and pt.n == 3:
                v = RV(pt, self.b.shuffle_vector(v.v, ir.Constant(v.v.type, None), ir.Constant(ir.VectorType(I32, 4), [0, 1, 2, 2])))
            vals.append(v.v)
        vals += [self.ctx.wg, self.ctx.lid]
        r = self.b.call(f["ir"], vals)
        rt = f["ret"]
        if rt.is_void:
            return RV(VOID, None)
        if rt.is_vector and rt.n == 3:
            r = self.b.shuffle_vector(r, ir.Constant(r.type, None), ir.Constant(ir.VectorType(I32, 3), [0, 1, 2]))
        return RV(rt, r)

    def e_NamedInitializer(self, n):
        self.error(n.expr, "designated initializers are not supported")

    def e_InitList(self, n):
        self.error(n, "initializer list is only allowed in a declaration")

    def e_CompoundLiteral(self, n):
        t = self.typename_type(n.type)
        tmp = self.alloca(t, "cl")
        self.init_lvalue(LV(t, tmp), n.init, n)
        return self.rvalue(LV(t, tmp), n)

    def e_Typename(self, n):
        self.error(n, "unexpected type name")

    def e_FuncDef(self, n):
        self.error(n, "unexpected function definition")


def _same_coord(a, b):
    ca, cb = getattr(a, "coord", None), getattr(b, "coord", None)
    return ca is not None and cb is not None and (ca.line, ca.column) == (cb.line, cb.column)


def _walk(node):
    return _nodes(node)


def _top_const(tnode):
    """Is the declared object itself const (not what it points to)?"""
    if isinstance(tnode, c_ast.PtrDecl):
        return "const" in (tnode.quals or [])
    if isinstance(tnode, c_ast.ArrayDecl):
        return _top_const(tnode.type)
    if isinstance(tnode, c_ast.TypeDecl):
        return "const" in (tnode.quals or [])
    return False


def _with_const(t):
    if t.is_struct:
        return t
    c = T.Scalar(t.name, t.kind, t.bits, t.signed, t.rank) if t.is_scalar else T.Vector(t.elem, t.n)
    c.const = True
    return c


def _strip_const(t):
    if getattr(t, "const", False) and not t.is_struct:
        return T.Scalar(t.name, t.kind, t.bits, t.signed, t.rank) if t.is_scalar else T.Vector(t.elem, t.n)
    return t


def _spell(t):
    return str(t)


def wrap_int(v, t):
    bits = T.elem_of(t).bits
    v &= (1 << bits) - 1
    return v
