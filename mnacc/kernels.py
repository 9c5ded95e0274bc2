"""A marked loop as MNCL C: one kernel for its iterations, one more to fold its reductions.

Work-item w runs parallel iteration w: ``i = start + w * step`` (with ``collapse(n)``, global
id 0 is the innermost counter).  The loop body is the user's, printed back from the AST with
``#line`` directives before each statement, so the translator's diagnostics, out-of-bounds
reports and ``cycles_by_source_line`` name the user's lines.  C's types and library calls are
spelled as OpenCL C with the same meaning: ``long long`` is ``long``, ``sqrt(x)`` is
``sqrt((double)(x))`` (C computes it in double whatever x is), ``sqrtf(x)`` is
``sqrt((float)(x))``.  A multi-dimensional array arrives as a flat buffer and is indexed
through a pointer to its rows, so the body keeps ``a[i][j]``.

A reduction scalar becomes a private partial that starts at its operator's identity; each
work-item stores its partial, and the combining kernel (one work-item) folds the partials in
iteration order into the value the scalar had at loop entry: the same result every run.
"""
from __future__ import annotations

import copy
import re

from pycparser import c_ast
from pycparserext.ext_c_generator import GnuCGenerator as CGenerator

from .ctype import ARITH, CType, combine, identity, normalise
from .loops import GCC_BUILTINS, INT_MATH, MATH, Loop, const_int

# names a C program may use that OpenCL C reserves
RESERVED = {"global", "local", "constant", "private", "kernel", "read_only", "write_only", "read_write",
            "half", "bool", "uchar", "ushort", "uint", "ulong", "vector", "complex", "imaginary",
            "quad", "sampler_t", "event_t", "image2d_t", "image3d_t", "task", "DRAM", "L1BM", "L2BM"}


def cl_name(name: str) -> str:
    return name + "_" if name in RESERVED or name.startswith("__mnacc") else name


class _Gen(CGenerator):
    """CGenerator that writes OpenCL C: #line per source line, C library calls and types mapped."""

    def __init__(self, typedefs, snapshot_reads=()):
        super().__init__(reduce_parentheses=True)
        self.typedefs = typedefs
        self.snapshot_reads = snapshot_reads

    def _generate_stmt(self, n, add_indent=False):
        text = super()._generate_stmt(n, add_indent)
        coord = getattr(n, "coord", None)
        if coord is None or not coord.line or isinstance(n, c_ast.Compound):
            return text
        return f'#line {coord.line} "{coord.file}"\n' + text

    def visit_ID(self, n):
        return cl_name(n.name) + ("_in" if id(n) in self.snapshot_reads else "")

    def visit_Pragma(self, n):
        return f"/* #pragma {n.string} */"

    def visit_IdentifierType(self, n):
        """A C type name as OpenCL C spells it, through the program's typedefs."""
        names = n.names
        while len(names) == 1 and names[0] in self.typedefs:
            t = self.typedefs[names[0]]
            if not (isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.IdentifierType)):
                return self.visit(t)
            names = t.type.names
        base = normalise(names)
        return ARITH[base][0] if base else " ".join(names)

    def visit_Decl(self, n, no_type=False):
        if n.name:
            n = _renamed(n)
        return super().visit_Decl(n, no_type)

    def visit_FuncCall(self, n):
        name = n.name.name if isinstance(n.name, c_ast.ID) else None
        args = n.args.exprs if n.args else []
        if name in GCC_BUILTINS:
            target = GCC_BUILTINS[name]
            if name in ("__builtin_inf", "__builtin_huge_val", "__builtin_nan"):
                return f"((double){target})"
            if not args or name.startswith(("__builtin_inf", "__builtin_huge", "__builtin_nan")):
                return target
            return f"{target}({', '.join(self.visit(a) for a in args)})"
        if name in MATH or (name and name.endswith("f") and name[:-1] in MATH):
            cast = "double" if name in MATH else "float"
            base = name if name in MATH else name[:-1]
            return f"{base}({', '.join(f'({cast})({self.visit(a)})' for a in args)})"
        if name in INT_MATH:
            t = ARITH[INT_MATH[name]][0]
            return f"({t})abs(({t})({self.visit(args[0])}))"
        return super().visit_FuncCall(n)


def _renamed(decl):
    if cl_name(decl.name) == decl.name:
        return decl
    decl = copy.deepcopy(decl)
    decl.name = cl_name(decl.name)
    t = decl.type
    while not isinstance(t, c_ast.TypeDecl):
        t = t.type
    t.declname = decl.name
    return decl


def _decl(name: str, t: CType) -> str:
    """'double a[8][8]'"""
    return f"{t.cl} {name}" + "".join(f"[{d}]" for d in t.dims)


def kernel_source(loop: Loop, analysis, path: str) -> str:
    """The MNCL C of one marked loop: its kernel and, with reductions, the combining kernel."""
    gen = _Gen(analysis.typedefs, loop.snapshot_reads)
    d = loop.directive
    c = loop.pragma_node.coord
    at_pragma = f'#line {c.line} "{c.file or path}"\n'     # the set-up and the partials: the directive's line
    funcs = [gen.visit(fd) for fd in reversed(loop.funcs)]
    k = len(loop.counters)
    head = [f"/* Generated by mnacc from {_where(loop, path)}:",
            f"   {d.spelling} " + " ".join(_clause_text(c) for c in d.clauses),
            "   work-item (" + ", ".join(f"get_global_id({k - 1 - lv})" for lv in range(k)) +
            ") runs the iteration (" + ", ".join(c.name for c in loop.counters) + ")"
            + (f"; the loops over {', '.join(c.name for c in loop.counters[-loop.auto_collapsed:])} have independent "
               f"iterations and run in parallel too" if loop.auto_collapsed else "") + "."]
    if loop.grid:
        head.append(f"   {loop.name}_grid: the same over the arrays' whole extents, the loop's range a guard. */")
    else:
        head[-1] += " */"
    kernels = [_kernel(loop, gen, loop.name, False, at_pragma)]
    if loop.grid:
        kernels.append(_kernel(loop, gen, loop.name + "_grid", True, at_pragma))
    if any("double" in text for text in funcs + kernels):
        head.append("#pragma OPENCL EXTENSION cl_khr_fp64 : enable")
    src = "\n".join(head) + "\n\n" + "".join(f + "\n" for f in funcs) + "\n".join(kernels)
    if loop.reductions():
        src += "\n" + combine_source(loop, at_pragma)
    return drop_redundant_lines(src)


def _kernel(loop: Loop, gen, name: str, grid: bool, at_pragma: str) -> str:
    """One kernel of the loop.  ``grid``: work-item ids are the counters themselves, over the
    arrays' whole extents, and iterations outside the loop's range do nothing (loops._grid)."""
    params, pre = [], []
    for v in loop.arrays():
        t = v.ctype
        views = [(cl_name(v.name), "" if v.written else "const ")]
        if v.snapshot:                        # the copy its reads see (loops.py, Var.snapshot)
            views.append((cl_name(v.name) + "_in", "const "))
        for vname, const in views:
            if len(t.dims) == 1:
                params.append(f"__global {const}{t.cl} *{vname}")
            else:
                rows = "".join(f"[{x}]" for x in t.dims[1:])
                params.append(f"__global {const}{t.cl} *{vname}_buf")
                pre.append(f"__global {const}{t.cl} (*{vname}){rows} = (__global {const}{t.cl} (*){rows}){vname}_buf;")
    params += [f"{v.ctype.cl} {cl_name(v.name)}" for v in loop.by_value()]
    k = len(loop.counters)
    for level, c in enumerate(loop.counters):
        n, t = cl_name(c.name), c.ctype.cl
        gid = f"({t})get_global_id({k - 1 - level})"
        if grid:
            params += [f"{t} {n}_start", f"{t} {n}_end"]
            pre.append(f"{t} {n} = {gid};")
            continue
        start = const_int(c.lo)
        if start is None:
            params.append(f"{t} {n}_start")
        step = gid if c.step == 1 else f"{gid} * {c.step}" if c.step > 0 else f"{gid} * ({c.step})"
        pre.append(f"{t} {n} = {step};" if start == 0 else f"{t} {n} = {start if start is not None else n + '_start'} + {step};")
    if grid:
        pre.append("if (" + " || ".join(f"{n} < {n}_start || {n} >= {n}_end" for n in map(cl_name, (
            c.name for c in loop.counters))) + ")\n        return;")
    params += [f"__global {v.ctype.cl} *{cl_name(v.name)}_part" for v in loop.reductions()]
    pre += [_decl(cl_name(v.name), v.ctype) + ";" for v in loop.vars.values() if v.role == "private"]
    pre += [f"{v.ctype.cl} {cl_name(v.name)} = {identity(v.op, v.ctype)};" for v in loop.reductions()]
    body = gen._generate_stmt(loop.body, add_indent=False)
    if loop.has_continue:
        body = "do " + body.rstrip() + " while (0);\n"
    post = []
    if loop.reductions():
        w = "get_global_id(0)" if k == 1 else \
            "get_global_id(0) + get_global_size(0) * (get_global_id(1)" + \
            (" + get_global_size(1) * get_global_id(2)" if k == 3 else "") + ")"
        post.append(f"size_t w_ = {w};")
        post += [f"{cl_name(v.name)}_part[w_] = {cl_name(v.name)};" for v in loop.reductions()]
    src = at_pragma + f"__kernel void {name}(" + ",\n    ".join(params or ["void"]) + ")\n{\n" + at_pragma
    src += "".join(f"    {line}\n" for line in pre)
    src += _indent(body)
    src += (at_pragma if post else "") + "".join(f"    {line}\n" for line in post)
    return src + "}\n"


def drop_redundant_lines(src: str) -> str:
    """Without the ``#line`` directives that name the line the next line is at anyway."""
    out, at = [], None          # at: (file, line) the next text line maps to, if known
    for line in src.split("\n"):
        m = re.match(r'#line (\d+) "(.*)"$', line)
        if m:
            target = (m.group(2), int(m.group(1)))
            if target != at:
                out.append(line)
            at = target
            continue
        out.append(line)
        if at is not None:
            at = (at[0], at[1] + 1)
    return "\n".join(out)


def combine_source(loop: Loop, at_pragma: str = "") -> str:
    """One work-item folds every reduction's partials, in iteration order, into its entry value."""
    params, body = [], []
    for v in loop.reductions():
        n, t = cl_name(v.name), v.ctype
        params += [f"__global {t.cl} *{n}", f"__global const {t.cl} *{n}_part"]
        body += [f"{t.cl} {n}_acc = {n}[0];",
                 "for (long w = 0; w < count; w++)",
                 f"    {n}_acc = {combine(v.op, n + '_acc', n + '_part[w]', t)};",
                 f"{n}[0] = {n}_acc;"]
    params.append("long count")
    return (f"/* folds the partial results of {loop.name}, in iteration order */\n"
            + at_pragma + f"__kernel void {loop.name}_combine(" + ", ".join(params) + ")\n{\n" + at_pragma
            + "".join(f"    {b}\n" for b in body) + "}\n")


def _indent(text: str) -> str:
    return "".join(line if line.startswith("#") or not line.strip() else "    " + line
                   for line in text.splitlines(keepends=True))


def _where(loop, path):
    c = loop.pragma_node.coord
    return f"{c.file or path}:{c.line}"


def _clause_text(c) -> str:
    if c.items:
        inner = ", ".join(it.text() for it in c.items)
        return f"{c.name}({c.op + ': ' if c.op else ''}{inner})"
    if c.value:
        return f'{c.name}("{c.value}")' if c.name == "precision" else f"{c.name}({c.value})"
    return c.name
