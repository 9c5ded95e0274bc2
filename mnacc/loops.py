"""The marked loops: found in the AST, checked against MNACC's rules, their variables classified.

For each ``#pragma goose parallel for`` (or ``acc parallel loop`` / ``acc kernels loop``) this
finds the loop that follows, its parallel counters (the first loopcounter; with ``collapse(n)``
the first n), and every variable the loop uses from outside, classified by how the loop
uses it (docs/mnacc.md, "Semantics"):

- an **array** (a buffer: read, written or both; its extent in bytes, as C the host evaluates);
- a **shared scalar** only read (an argument by value);
- a **reduction** scalar (a ``result``/``reduction`` item only ever accumulated: ``e += x``,
  ``e = fmax(e, x)`` ...), whose partial values each iteration computes from the operator's
  identity and a combining kernel folds, in iteration order, into its value at loop entry;
- a **private** scalar (named ``private``/``firstprivate``, an inner loop's counter, or a
  temporary assigned before any read in the iteration).

Every rule breach is a located diagnostic (``MnaccError``); a loop-carried dependence the
analysis can prove is a warning.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from pycparser import c_ast
from pycparserext.ext_c_generator import GnuCGenerator

from . import pragma
from .ctype import CType, normalise
from .source import MnaccError, Program

# C99 <math.h> functions a loop may call, by name (the 'f' forms are the float versions)
MATH = {"sqrt", "cbrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "pow", "sin", "cos",
        "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
        "fabs", "floor", "ceil", "trunc", "round", "rint", "fmod", "fmin", "fmax", "fma", "hypot",
        "copysign", "erf", "erfc", "tgamma", "lgamma", "nextafter", "remainder", "fdim"}
INT_MATH = {"abs": "int", "labs": "long", "llabs": "long long"}
GCC_BUILTINS = {"__builtin_isnan": "isnan", "__builtin_isinf_sign": None, "__builtin_isinf": "isinf",
                "__builtin_isfinite": "isfinite", "__builtin_signbit": "signbit",
                "__builtin_signbitf": "signbit", "__builtin_inff": "INFINITY", "__builtin_inf": "INFINITY",
                "__builtin_huge_val": "HUGE_VAL", "__builtin_huge_valf": "HUGE_VALF",
                "__builtin_nanf": "NAN", "__builtin_nan": "NAN"}
LOOP_FORMS = ("parallel for", "parallel loop", "kernels loop")
UPDATE_OPS = {"+=": "+", "-=": "+", "*=": "*", "&=": "&", "|=": "|", "^=": "^"}


@dataclass
class Counter:
    """A parallel loop counter: ``for (i = lo; i OP hi; i += step)``, step a nonzero constant."""
    name: str
    ctype: CType
    lo: c_ast.Node
    op: str
    hi: c_ast.Node
    step: int
    node: c_ast.For
    declared: bool          # 'for (int i = ...)': the host has no i to leave at its exit value


@dataclass
class Var:
    name: str
    ctype: CType
    role: str               # "array" | "scalar" | "reduction" | "private" | "firstprivate"
    written: bool = False
    op: str = ""            # a reduction's operator
    extent: str = ""        # an array's size in bytes, as host C
    snapshot: bool = False  # written, and read at other elements: reads see a copy from loop entry


@dataclass
class Loop:
    index: int
    directive: pragma.Directive
    pragma_node: c_ast.Pragma
    node: c_ast.For
    func: c_ast.FuncDef
    counters: list
    streamed: list
    vars: dict
    body: c_ast.Node                       # the innermost parallel loop's body
    funcs: list = field(default_factory=list)      # user functions the loop calls (FuncDefs)
    warnings: list = field(default_factory=list)
    has_continue: bool = False
    snapshot_reads: set = field(default_factory=set)   # id() of the IDs naming a snapshot array in a read
    auto_collapsed: int = 0     # inner loops made parallel because their iterations are independent
    grid: list = field(default_factory=list)   # per counter: the array extent its launch may span, or None

    @property
    def name(self) -> str:
        return f"mnacc_loop{self.index}"

    def arrays(self):
        return [v for v in self.vars.values() if v.role == "array"]

    def reductions(self):
        return [v for v in self.vars.values() if v.role == "reduction"]

    def by_value(self):
        return [v for v in self.vars.values() if v.role in ("scalar", "firstprivate")]


@dataclass
class Analysis:
    program: Program
    loops: list
    funcs: dict             # name -> (FuncDef, Directive) of '#pragma goose func' / 'acc routine' functions
    typedefs: dict


class _Fail(Exception):
    def __init__(self, diag):
        self.diag = diag


def analyse(prog: Program) -> Analysis:
    """Every marked loop of the program, checked; MnaccError listing every error found."""
    errors, loops = [], []
    typedefs = {t.name: t.type for t in prog.ast.ext
                if isinstance(t, c_ast.Typedef) and t.name not in prog.opaque_types}
    globals_: dict = {}
    funcs: dict = {}
    pending = None
    for ext in prog.ast.ext:
        if isinstance(ext, c_ast.Pragma):
            d = _directive(prog, ext, errors)
            if d is not None and d.form in ("func", "routine"):
                pending = d
            elif d is not None:
                errors.append(prog.diag(ext.coord, f"'{d.spelling}' must be inside a function, before a for loop",
                                        column=d.pos[2]))
            continue
        if isinstance(ext, c_ast.FuncDef):
            if pending is not None:
                funcs[ext.decl.name] = (ext, pending)
            pending = None
            _walk_function(prog, ext, globals_, typedefs, funcs, loops, errors)
            globals_[ext.decl.name] = ("global", ext.decl)
        elif isinstance(ext, c_ast.Decl):
            if pending is not None:
                errors.append(prog.diag(pending.pos, f"'{pending.spelling}' must be followed by a function definition"))
                pending = None
            if ext.name:
                globals_[ext.name] = ("global", ext)
    errors = [e for e in errors if e is not None]
    if errors:
        raise MnaccError(errors)
    for i, loop in enumerate(loops, 1):
        loop.index = i
    return Analysis(prog, loops, funcs, typedefs)


def _directive(prog, node, errors):
    file = node.coord.file or prog.path
    lines = prog.sources.get(file, [])
    try:
        d = pragma.parse(file, lines, node.coord.line)
    except pragma.DirectiveError as e:
        errors.append(prog.diag(e.pos, e.msg))
        if "without 'loop'" in e.msg:
            errors.append(None)     # an OpenACC region: its inner 'acc loop's follow from it (no cascade)
        return None
    if d is not None and d.form == "parallel for" and d.one("loopcounter") is None:
        errors.append(prog.diag(d.pos, "'#pragma goose parallel for' needs a loopcounter(...) clause"))
        return None
    return d


def _walk_function(prog, fd, globals_, typedefs, funcs, loops, errors):
    scope = dict(globals_)
    args = getattr(fd.decl.type, "args", None)      # FuncDecl, or pycparserext's FuncDeclExt
    params = args.params if args else []
    for p in params:
        if isinstance(p, c_ast.Decl) and p.name:
            scope[p.name] = ("param", p)

    def block(items, scope):
        scope = dict(scope)
        items = list(items or [])
        i = 0
        while i < len(items):
            it = items[i]
            if isinstance(it, c_ast.Pragma):
                d = _directive(prog, it, errors)
                if d is not None and d.form in LOOP_FORMS:
                    nxt = items[i + 1] if i + 1 < len(items) else None
                    if not isinstance(nxt, c_ast.For):
                        errors.append(prog.diag(it.coord, f"'{d.spelling}' must be followed by a for loop",
                                                column=d.pos[2]))
                    else:
                        try:
                            loops.append(_loop(prog, d, it, nxt, fd, scope, typedefs, funcs))
                        except _Fail as f:
                            errors.append(f.diag)
                        except MnaccError as e:
                            errors.extend(e.diagnostics)
                        i += 2
                        continue
                elif d is not None and d.form == "loop" and None not in errors:
                    errors.append(prog.diag(d.pos, "'#pragma acc loop' outside a parallel loop"))
                elif d is not None and d.form in ("func", "routine"):
                    errors.append(prog.diag(it.coord, f"'{d.spelling}' must be at file scope, before a function",
                                            column=d.pos[2]))
            elif isinstance(it, c_ast.Decl):
                if it.name:
                    scope[it.name] = ("local", it)
            elif isinstance(it, c_ast.DeclList):
                for dd in it.decls:
                    scope[dd.name] = ("local", dd)
            else:
                stmt(it, scope)
            i += 1

    def stmt(n, scope):
        if isinstance(n, c_ast.Compound):
            block(n.block_items, scope)
        elif isinstance(n, c_ast.For):
            inner = dict(scope)
            if isinstance(n.init, c_ast.DeclList):
                for dd in n.init.decls:
                    inner[dd.name] = ("local", dd)
            stmt(n.stmt, inner)
        elif isinstance(n, (c_ast.While, c_ast.DoWhile)):
            stmt(n.stmt, scope)
        elif isinstance(n, c_ast.If):
            stmt(n.iftrue, scope)
            if n.iffalse is not None:
                stmt(n.iffalse, scope)
        elif isinstance(n, (c_ast.Switch, c_ast.Case, c_ast.Default, c_ast.Label)):
            for c in (getattr(n, "stmt", None), *(getattr(n, "stmts", None) or [])):
                if c is not None:
                    stmt(c, scope)

    block(fd.body.block_items, scope)


# ---------------------------------------------------------------------------------------------
# one loop

def _fail(prog, node, msg, column=None):
    raise _Fail(prog.diag(getattr(node, "coord", node), msg, column=column))


def _loop(prog, d, pnode, node, fd, scope, typedefs, funcs) -> Loop:
    n_par = 1
    if d.family == "acc":
        c = d.one("collapse")
        n_par = int(c.value) if c else 1
        names = None
    else:
        names = [it.name for it in d.one("loopcounter").items]
        if len(names) > 3:
            raise _Fail(prog.diag(d.one("loopcounter").items[3].pos, "loopcounter names at most 3 counters"))
    counters, cur, streamed = [], node, []
    for level in range(n_par):
        if level:
            cur = _only_loop(cur.stmt)
            if cur is None:
                _fail(prog, counters[-1].node, f"collapse({n_par}): the loop over '{counters[-1].name}' must "
                      f"contain exactly one loop and nothing else")
        counters.append(_counter(prog, cur, scope, typedefs, parallel=True))
    par_names = {c.name for c in counters}
    for c in counters[1:]:
        for ref in _ids(c.lo) | _ids(c.hi):
            if ref in par_names:
                _fail(prog, c.node, f"collapse: the bounds of the loop over '{c.name}' depend on '{ref}'; "
                      f"collapsed loops must be rectangular")
    if names is not None:
        if names[0] != counters[0].name:
            raise _Fail(prog.diag(d.one("loopcounter").items[0].pos,
                                  f"loopcounter names '{names[0]}' but the loop that follows counts '{counters[0].name}'"))
        for k, nm in enumerate(names[1:], 1):
            found = _find_loop(counters[0].node.stmt, nm)
            if found is None:
                raise _Fail(prog.diag(d.one("loopcounter").items[k].pos,
                                      f"loopcounter names '{nm}' but no loop over '{nm}' is inside the loop over "
                                      f"'{counters[0].name}'"))
            streamed.append(nm)
    remarks = [prog.diag(c.pos, "nip_pack(...) is a GRAPE-DR packing hint; mnacc accepts it and ignores it", "remark")
               for c in d.all("nip_pack")]
    remarks += [prog.diag(c.pos, 'precision("single"): the loop computes in the types the program declares '
                          '(declare its variables float for single precision)', "remark")
                for c in d.all("precision") if c.value == "single"]
    auto = _independent_levels(prog, counters, scope, typedefs)
    body = counters[-1].node.stmt
    loop = Loop(0, d, pnode, node, fd, counters, streamed, {}, body, auto_collapsed=auto, warnings=remarks)
    _check_control(prog, loop, body)
    _classify(prog, loop, scope, typedefs, funcs)
    loop.grid = _grid(prog, loop)
    return loop


def _grid(prog, loop) -> list:
    """For a loop with two or three parallel counters of step 1 and no reduction: per counter,
    the extent of the array dimension a write indexes with it (``B[i][j]``: N and M).  The
    runtime then launches that whole extent with the counters' range as a guard, so the launch's
    rows are the arrays' rows: the backend's fast 2-D paths need a grid whose pitch is the
    array's (a stencil's interior alone, 510 x 510 of a 512 x 512 array, is ~60x slower on
    mncore2).  Empty when that does not apply."""
    if len(loop.counters) < 2 or any(c.step != 1 for c in loop.counters) or loop.reductions():
        return []
    local = _declared(loop.body)
    accs, _ = _accesses(prog, loop.body, local)
    out = []
    for c in loop.counters:
        ext = None
        for a in accs:
            var = loop.vars.get(a.name)
            if a.kind == "read" or var is None or var.role != "array":
                continue
            for dim, sub in zip(var.ctype.dims, a.subs):
                if isinstance(dim, int) and _affine(sub, {c.name}) is not None:
                    ext = dim
                    break
            if ext is not None:
                break
        if ext is None:
            return []
        out.append(ext)
    return out


def _independent_levels(prog, counters, scope, typedefs) -> int:
    """Make parallel the loops nested perfectly inside the parallel ones whose iterations are
    independent: rectangular bounds, a constant step, no break, no variable from outside written
    but array elements whose subscripts use every counter, and every read of a written array
    at the element written.  Such a loop's iterations touch disjoint elements and read nothing
    another writes, so any order gives the sequential result.  Returns how many were added."""
    added = 0
    while len(counters) < 3:
        outer = counters[-1].node
        if isinstance(outer.stmt, c_ast.Compound) and any(isinstance(x, c_ast.Pragma) for x in outer.stmt.block_items or []):
            break                                   # '#pragma acc loop seq' and the like: as written
        inner = _only_loop(outer.stmt)
        if inner is None:
            break
        try:
            c = _counter(prog, inner, scope, typedefs, parallel=True)
        except (_Fail, MnaccError):
            break
        names = {k.name for k in counters} | {c.name}
        if (_ids(c.lo) | _ids(c.hi)) & names or not _disjoint(prog, inner.stmt, names):
            break
        counters.append(c)
        added += 1
    return added


def _disjoint(prog, body, counters) -> bool:
    local = _declared(body) | _inner_counters(body)
    if any(isinstance(n, (c_ast.Break, c_ast.Continue, c_ast.Goto, c_ast.Return, c_ast.Pragma)) for n in _walk(body)):
        return False
    try:
        accs, _ = _accesses(prog, body, local)
    except _Fail:
        return False
    gen = GnuCGenerator()
    written: dict = {}
    for a in accs:
        if a.kind != "read" and a.name not in local:
            if not a.subs or not counters <= set().union(*(_ids(x) for x in a.subs)):
                return False
            written.setdefault(a.name, set()).add(tuple(gen.visit(x) for x in a.subs))
    for name, at in written.items():
        if len(at) > 1:
            return False
        for a in accs:
            if a.name == name and a.kind == "read" and tuple(gen.visit(x) for x in a.subs) not in at:
                return False
    return True


def _only_loop(stmt):
    if isinstance(stmt, c_ast.For):
        return stmt
    if isinstance(stmt, c_ast.Compound):
        items = [i for i in (stmt.block_items or []) if not isinstance(i, c_ast.Pragma)]
        if len(items) == 1 and isinstance(items[0], c_ast.For):
            return items[0]
    return None


def _find_loop(n, name):
    for sub in _walk(n):
        if isinstance(sub, c_ast.For):
            try:
                if _counter_name(sub) == name:
                    return sub
            except ValueError:
                pass
    return None


def _counter_name(f: c_ast.For) -> str:
    init = f.init
    if isinstance(init, c_ast.DeclList) and len(init.decls) == 1:
        return init.decls[0].name
    if isinstance(init, c_ast.Assignment) and init.op == "=" and isinstance(init.lvalue, c_ast.ID):
        return init.lvalue.name
    raise ValueError


def _counter(prog, f: c_ast.For, scope, typedefs, parallel) -> Counter:
    try:
        name = _counter_name(f)
    except ValueError:
        _fail(prog, f.init or f, "loop is not canonical: its initialisation must be 'i = start' or 'int i = start'")
    declared = isinstance(f.init, c_ast.DeclList)
    if declared:
        decl = f.init.decls[0]
        lo = decl.init
        if lo is None:
            _fail(prog, decl, f"loop is not canonical: '{name}' has no start value")
        ctype = _ctype(prog, decl, typedefs)
    else:
        lo = f.init.rvalue
        entry = scope.get(name)
        if entry is None:
            _fail(prog, f.init, f"use of undeclared identifier '{name}'")
        ctype = _ctype(prog, entry[1], typedefs)
    if ctype is None or ctype.is_array or ctype.is_float:
        _fail(prog, f.init, f"loop counter '{name}' must have an integer type")
    cond = f.cond
    if not (isinstance(cond, c_ast.BinaryOp) and cond.op in ("<", "<=", ">", ">=")):
        _fail(prog, cond or f, f"loop over '{name}' is not canonical: its condition must compare '{name}' "
              f"with <, <=, > or >=")
    flip = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}
    if isinstance(cond.left, c_ast.ID) and cond.left.name == name:
        op, hi = cond.op, cond.right
    elif isinstance(cond.right, c_ast.ID) and cond.right.name == name:
        op, hi = flip[cond.op], cond.left
    else:
        _fail(prog, cond, f"loop over '{name}' is not canonical: its condition must compare '{name}' with a bound")
    if name in _ids(hi):
        _fail(prog, cond, f"loop over '{name}' is not canonical: its bound depends on '{name}'")
    step = _step(prog, f, name)
    if (op in ("<", "<=")) != (step > 0):
        _fail(prog, f.next, f"loop over '{name}' steps {'up' if step > 0 else 'down'} but its condition "
              f"'{name} {op} ...' expects the other direction")
    return Counter(name, ctype, lo, op, hi, step, f, declared)


def _step(prog, f, name) -> int:
    nx = f.next
    bad = f"loop over '{name}' is not canonical: its increment must be {name}++, {name}--, {name} += c or {name} -= c"
    if isinstance(nx, c_ast.UnaryOp) and nx.op in ("p++", "++", "p--", "--") and _is_id(nx.expr, name):
        return 1 if "++" in nx.op else -1
    if isinstance(nx, c_ast.Assignment) and _is_id(nx.lvalue, name):
        if nx.op in ("+=", "-="):
            v = const_int(nx.rvalue)
            if v is None:
                _fail(prog, nx, f"the step of the parallel loop over '{name}' must be an integer constant")
            v = v if nx.op == "+=" else -v
        elif nx.op == "=" and isinstance(nx.rvalue, c_ast.BinaryOp) and nx.rvalue.op in "+-" and \
                _is_id(nx.rvalue.left, name):
            v = const_int(nx.rvalue.right)
            if v is None:
                _fail(prog, nx, f"the step of the parallel loop over '{name}' must be an integer constant")
            v = v if nx.rvalue.op == "+" else -v
        else:
            _fail(prog, nx, bad)
        if v == 0:
            _fail(prog, nx, f"the loop over '{name}' has a step of 0")
        return v
    _fail(prog, nx or f, bad)


def _is_id(n, name):
    return isinstance(n, c_ast.ID) and n.name == name


def const_int(n):
    """The value of an integer constant expression (literals, + - * / % << >> and parentheses), or None."""
    if isinstance(n, c_ast.Constant) and n.type in ("int", "unsigned int", "long int", "unsigned long int",
                                                     "long long int", "unsigned long long int", "char"):
        txt = n.value.rstrip("uUlL")
        try:
            return int(txt, 0) if not txt.startswith("0") or txt in ("0",) or txt[:2].lower() in ("0x", "0b") \
                else int(txt, 8)
        except ValueError:
            return None
    if isinstance(n, c_ast.UnaryOp) and n.op in ("-", "+"):
        v = const_int(n.expr)
        return None if v is None else (-v if n.op == "-" else v)
    if isinstance(n, c_ast.BinaryOp) and n.op in ("+", "-", "*", "/", "%", "<<", ">>"):
        a, b = const_int(n.left), const_int(n.right)
        if a is None or b is None or (n.op in "/%" and b == 0):
            return None
        return {"+": a + b, "-": a - b, "*": a * b, "/": int(a / b), "%": a - int(a / b) * b,
                "<<": a << b, ">>": a >> b}[n.op]
    if isinstance(n, c_ast.Cast):
        return const_int(n.expr)
    return None


def _walk(n):
    if n is None:
        return
    yield n
    for _, c in n.children():
        yield from _walk(c)


def _declared(n) -> set:
    """The names declared inside n."""
    return {d.name for d in _walk(n) if isinstance(d, c_ast.Decl) and d.name}


def _inner_counters(n) -> set:
    """The counters of the canonical-looking for loops inside n."""
    return {_counter_name(f) for f in _walk(n) if isinstance(f, c_ast.For) and _has_counter(f)}


def _ids(n) -> set:
    return {s.name for s in _walk(n) if isinstance(s, c_ast.ID)}


def _ctype(prog, decl, typedefs) -> CType | None:
    """The CType of a declaration; None if it is not an arithmetic scalar or an array / pointer of one."""
    t, dims, first_expr, pointer = decl.type, [], None, False
    is_param = False
    while True:
        if isinstance(t, c_ast.ArrayDecl):
            if t.dim is None:
                dims.append(None)
            else:
                v = const_int(t.dim)
                if v is None:
                    if dims:
                        return CType("?", ["vla"])
                    first_expr = t.dim
                dims.append(v)
            t = t.type
        elif isinstance(t, c_ast.PtrDecl):
            if dims or pointer:
                return None              # an array of pointers, a pointer to pointers
            pointer = True
            dims.append(None)
            t = t.type
        elif isinstance(t, c_ast.TypeDecl):
            inner = t.type
            if isinstance(inner, c_ast.IdentifierType):
                names = inner.names
                if len(names) == 1 and names[0] in typedefs:
                    sub = typedefs[names[0]]
                    t = sub
                    continue
                base = normalise(names)
                if base is None:
                    return None
                quals = set(t.quals or []) | set(getattr(decl, "quals", None) or [])
                return CType(base, dims, first_expr, pointer, is_param, "const" in quals)
            return None
        else:
            return None


# ---------------------------------------------------------------------------------------------
# control flow and variables

_LOOPS = (c_ast.For, c_ast.While, c_ast.DoWhile)


def _check_control(prog, loop: Loop, body):
    names = {c.name for c in loop.counters}
    outer = loop.counters[0].name

    def go(n, depth):
        if isinstance(n, c_ast.Return):
            _fail(prog, n, f"'return' inside the parallel loop over '{outer}'")
        if isinstance(n, c_ast.Goto):
            _fail(prog, n, f"'goto' inside the parallel loop over '{outer}'")
        if isinstance(n, c_ast.Break) and depth == 0:
            _fail(prog, n, f"'break' leaves the parallel loop over '{outer}'")
        if isinstance(n, c_ast.Continue) and depth == 0:
            loop.has_continue = True
        if isinstance(n, c_ast.Pragma):
            errs = []
            d = _directive(prog, n, errs)
            if errs and errs[0] is not None:
                raise _Fail(errs[0])
            if d is not None and d.form in LOOP_FORMS:
                _fail(prog, n, f"'{d.spelling}' inside the parallel loop over '{outer}': nested parallel loops "
                      f"are not supported", column=d.pos[2])
        target = None
        if isinstance(n, c_ast.Assignment):
            target = n.lvalue
        elif isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--"):
            target = n.expr
        if isinstance(target, c_ast.ID) and target.name in names:
            _fail(prog, n, f"loop counter '{target.name}' is assigned in the loop body")
        for _, c in n.children():
            go(c, depth + (isinstance(n, _LOOPS) and c is n.stmt) + (isinstance(n, c_ast.Switch) and c is n.stmt))

    go(body, 0)


@dataclass
class _Access:
    name: str
    node: c_ast.Node
    subs: list              # subscript ASTs, outermost first (empty for a scalar)
    kind: str               # "read" | "write" | "update"
    op: str = ""            # the assignment's operator
    guarded: bool = False   # under a condition, an inner loop or a short-circuit operand


def _base(n):
    """(name, subscripts) of an lvalue / ArrayRef chain, or (None, [])."""
    subs = []
    while isinstance(n, c_ast.ArrayRef):
        subs.insert(0, n.subscript)
        n = n.name
    return (n.name, subs) if isinstance(n, c_ast.ID) else (None, subs)


def _accesses(prog, body, local_names):
    """Every access of a variable in body, in evaluation order; the calls made."""
    out, calls = [], []

    def access(target, node, kind, op, guarded, unsupported):
        name, subs = _base(target)
        if name is None:
            _fail(prog, node, unsupported)
        for sub in subs:
            go(sub, guarded)
        out.append(_Access(name, node, subs, kind, op, guarded))

    def go(n, guarded):
        if n is None:
            return
        if isinstance(n, c_ast.Assignment):
            go(n.rvalue, guarded)
            access(n.lvalue, n, "write" if n.op == "=" else "update", n.op, guarded,
                   "assignment to something other than a variable or an array element is not supported in a "
                   "parallel loop")
            return
        if isinstance(n, c_ast.UnaryOp):
            if n.op in ("++", "--", "p++", "p--"):
                access(n.expr, n, "update", "+=", guarded,
                       "'++'/'--' of something other than a variable or an array element")
                return
            if n.op == "&":
                name, _ = _base(n.expr)
                if name is not None and name not in local_names:
                    _fail(prog, n, f"taking the address of '{name}' in a parallel loop is not supported")
            if n.op == "*":
                _fail(prog, n, "pointer dereference in a parallel loop is not supported; index the array instead")
            if n.op == "sizeof" and not isinstance(n.expr, c_ast.Typename):
                name, _ = _base(n.expr)
                if name is not None and name not in local_names:
                    _fail(prog, n, f"sizeof of '{name}' in a parallel loop is not supported")
                return
        if isinstance(n, c_ast.ArrayRef):
            access(n, n, "read", "", guarded, "only arrays named by a variable can be indexed in a parallel loop")
            return
        if isinstance(n, c_ast.ID):
            out.append(_Access(n.name, n, [], "read", "", guarded))
            return
        if isinstance(n, c_ast.StructRef):
            text = GnuCGenerator().visit(n)
            _fail(prog, n, f"struct member access is not supported in a parallel loop; copy '{text}' into a "
                  f"scalar variable before the loop")
        if isinstance(n, c_ast.Constant) and n.type == "string":
            _fail(prog, n, "a string literal in a parallel loop is not supported")
        if isinstance(n, c_ast.FuncCall):
            if not isinstance(n.name, c_ast.ID):
                _fail(prog, n, "a call through a function pointer is not supported in a parallel loop")
            calls.append(n)
            for a in (n.args.exprs if n.args else []):
                if not (isinstance(a, c_ast.Constant) and a.type == "string"):   # the call is what is wrong
                    go(a, guarded)
            return
        if isinstance(n, (c_ast.Decl,)):
            go(n.init, guarded)
            for s in _walk(n.type):
                if isinstance(s, c_ast.ArrayDecl) and s.dim is not None:
                    go(s.dim, guarded)
            return
        if isinstance(n, (c_ast.Typename,)):
            return
        if isinstance(n, c_ast.If):
            go(n.cond, guarded)
            go(n.iftrue, True)
            go(n.iffalse, True)
            return
        if isinstance(n, c_ast.TernaryOp):
            go(n.cond, guarded)
            go(n.iftrue, True)
            go(n.iffalse, True)
            return
        if isinstance(n, c_ast.BinaryOp) and n.op in ("&&", "||"):
            go(n.left, guarded)
            go(n.right, True)
            return
        if isinstance(n, c_ast.For):
            go(n.init, guarded)
            for c in (n.cond, n.stmt, n.next):
                go(c, True)
            return
        if isinstance(n, (c_ast.While, c_ast.DoWhile, c_ast.Switch)):
            go(n.cond, guarded or not isinstance(n, c_ast.DoWhile))
            go(n.stmt, True)
            return
        for _, c in n.children():
            go(c, guarded)

    go(body, False)
    return out, calls


def _classify(prog, loop: Loop, scope, typedefs, funcs):
    d = loop.directive
    body = loop.body
    local_names = _declared(body)
    par = [c.name for c in loop.counters]
    clause_names = {}
    for cname in ("result", "reduction", "private", "firstprivate", *pragma.DATA_CLAUSES):
        for c in d.all(cname):
            for it in c.items:
                clause_names.setdefault(it.name, []).append((c, it))
    for name, uses in clause_names.items():
        if name not in scope:
            raise _Fail(prog.diag(uses[0][1].pos, f"'{uses[0][0].name}' names '{name}', which is not declared here"))
    accesses, calls = _accesses(prog, body, local_names)
    by_name: dict = {}
    for a in accesses:
        if a.name in local_names or a.name in par:
            continue
        by_name.setdefault(a.name, []).append(a)
    inner = _inner_counters(body)
    for name, accs in by_name.items():
        entry = scope.get(name)
        if entry is None:
            _fail(prog, accs[0].node, f"use of undeclared identifier '{name}'")
        kind, decl = entry
        if isinstance(decl, c_ast.Decl) and isinstance(decl.type, c_ast.FuncDecl):
            _fail(prog, accs[0].node, f"function '{name}' used as a value in a parallel loop")
        ctype = _ctype(prog, decl, typedefs)
        if ctype is None:
            _fail(prog, accs[0].node, f"'{name}' has a type a parallel loop cannot use (only arithmetic scalars "
                  f"and arrays of them: no structs, pointers to pointers or long double)")
        if ctype.dims == ["vla"]:
            _fail(prog, accs[0].node, f"'{name}' has a variable row length; mnacc needs constant inner dimensions")
        ctype.is_param = kind == "param"
        clauses = {c.name for c, _ in clause_names.get(name, [])}
        var = Var(name, ctype, "scalar")
        var.written = any(a.kind in ("write", "update") for a in accs)
        if "firstprivate" in clauses and ctype.is_array:
            _fail(prog, accs[0].node, f"firstprivate array '{name}' is not supported; copy it into an array "
                  f"declared inside the loop")
        if "private" in clauses or "firstprivate" in clauses:
            var.role = "firstprivate" if "firstprivate" in clauses else "private"
        elif ctype.is_array:
            var.role = "array"
            _check_array(prog, loop, var, accs, clause_names.get(name, []), par)
        elif var.written:
            if clauses & {"result", "reduction"}:
                var.role, var.op = "reduction", _reduction_op(prog, loop, var, accs, clause_names[name])
            elif name in inner or (accs[0].kind == "write" and accs[0].op == "=" and not accs[0].guarded):
                var.role = "private"
            else:
                where = "result(...) or private(...)" if d.family == "goose" else "reduction(...) or private(...)"
                _fail(prog, next(a.node for a in accs if a.kind != "read"),
                      f"'{name}' is written in the parallel loop but is neither a result nor private; "
                      f"name it in {where}")
        loop.vars[name] = var
    _check_calls(prog, loop, calls, funcs, set())


def _has_counter(f):
    try:
        _counter_name(f)
        return True
    except ValueError:
        return False


def _reduction_op(prog, loop, var, accs, uses):
    ops = set()
    name = var.name
    what = "result" if loop.directive.family == "goose" else "reduction variable"
    for a in accs:
        if a.kind == "read":
            continue
        n = a.node
        if a.kind == "update":
            ops.add(UPDATE_OPS.get(a.op, "?") if isinstance(n, c_ast.Assignment) else "+")
            if isinstance(n, c_ast.Assignment) and name in _ids(n.rvalue):
                _fail(prog, n, f"{what} '{name}' is read in its own update")
            continue
        rv = n.rvalue
        if isinstance(rv, c_ast.BinaryOp) and rv.op in ("+", "*", "&", "|", "^", "&&", "||", "-"):
            if _is_id(rv.left, name) and name not in _ids(rv.right):
                ops.add("+" if rv.op == "-" else rv.op)
                continue
            if rv.op != "-" and _is_id(rv.right, name) and name not in _ids(rv.left):
                ops.add(rv.op)
                continue
        if isinstance(rv, c_ast.FuncCall) and isinstance(rv.name, c_ast.ID) and rv.args and \
                len(rv.args.exprs) == 2 and rv.name.name.rstrip("f") in ("fmax", "fmin", "max", "min"):
            x, y = rv.args.exprs
            if (_is_id(x, name) and name not in _ids(y)) or (_is_id(y, name) and name not in _ids(x)):
                ops.add(rv.name.name.rstrip("f").lstrip("f"))
                continue
        _fail(prog, n, f"{what} '{name}' is assigned in the parallel loop; a {'shared result' if what == 'result' else what} must be accumulated "
              f"({name} += ..., {name} = fmax({name}, ...))")
    reads = [a for a in accs if a.kind == "read"]
    own = {id(s) for a in accs if a.kind != "read" for s in _walk(a.node)}
    stray = [a for a in reads if id(a.node) not in own]
    if stray:
        _fail(prog, stray[0].node, f"{what} '{name}' is read in the parallel loop outside its updates; "
              f"its value there would depend on the order of the iterations")
    if "?" in ops:
        _fail(prog, accs[0].node, f"{what} '{name}' is updated by an operator that is not a reduction")
    if len(ops) > 1:
        _fail(prog, accs[0].node, f"{what} '{name}' is updated with different operators ({', '.join(sorted(ops))})")
    op = ops.pop() if ops else "+"
    for c, _ in uses:
        if c.name == "reduction" and c.op != op:
            _fail(prog, accs[0].node, f"reduction({c.op}: {name}) but '{name}' is updated with '{op}'")
    if op in ("&", "|", "^") and var.ctype.is_float:
        _fail(prog, accs[0].node, f"{what} '{name}': '{op}' needs an integer type")
    return op


def _check_array(prog, loop, var, accs, uses, par):
    name, ct = var.name, var.ctype
    for a in accs:
        if len(a.subs) != len(ct.dims):
            _fail(prog, a.node, f"'{name}' has {len(ct.dims)} dimension(s) but is used with {len(a.subs)} "
                  f"subscript(s); a parallel loop can only use its elements")
    writes = [a for a in accs if a.kind != "read"]
    if writes and ct.is_const:
        _fail(prog, writes[0].node, f"'{name}' is const")
    d = loop.directive
    if writes and d.family == "goose" and not any(c.name == "result" for c, _ in uses):
        _fail(prog, writes[0].node, f"'{name}' is written in the parallel loop but is neither a result nor private; "
              f"name it in result(...) or private(...)")
    for a in writes:
        ids = set().union(*(_ids(s) for s in a.subs))
        missing = [c for c in par if c not in ids]
        if missing:
            what = "accumulated" if a.kind == "update" else "assigned"
            _fail(prog, a.node, f"'{name}' is {what} at an element shared by the iterations of '{missing[0]}' "
                  f"(its subscripts do not use '{missing[0]}'); each iteration may only write its own elements"
                  + ("; reductions into shared array elements are not supported" if a.kind == "update" else ""))
    var.extent = _extent(prog, var, accs, uses)
    crossing = _dependence(prog, loop, var, accs, par)
    if crossing:
        # a read provably of another iteration's element goes to a copy taken at loop entry, so
        # the result does not depend on the order the device runs the iterations in
        var.snapshot = True
        for a in crossing:
            base = a.node
            while isinstance(base, c_ast.ArrayRef):
                base = base.name
            loop.snapshot_reads.add(id(base))


def _extent(prog, var, accs, uses) -> str:
    name, ct = var.name, var.ctype
    for c, it in uses:
        if c.name in pragma.DATA_CLAUSES + ("result", "reduction") and it.subs and it.subs[0].kind != "index":
            s = it.subs[0]
            count = f"({s.first}) + ({s.second})" if s.kind == "section" else f"({s.second}) + 1"
            return f"(size_t)({count}) * sizeof(*{name})"
    if not ct.is_pointer and not ct.is_param:
        return f"sizeof({name})"
    if ct.is_param and not ct.is_pointer and ct.dims[0] is not None:
        return f"(size_t)({ct.dims[0]}) * sizeof(*{name})"
    if ct.is_param and ct.first_dim_expr is not None:
        return f"(size_t)({GnuCGenerator().visit(ct.first_dim_expr)}) * sizeof(*{name})"
    _fail(prog, accs[0].node, f"the extent of '{name}' cannot be known (it is a pointer); give it in a data "
          f"clause such as copyin({name}[0:n]) or copy({name}[0:n])")


def _affine(n, counters):
    """(counter, offset) if n is 'c', 'c + k' or 'c - k' for a parallel counter c, else None."""
    if isinstance(n, c_ast.ID) and n.name in counters:
        return n.name, 0
    if isinstance(n, c_ast.BinaryOp) and n.op in "+-" and isinstance(n.left, c_ast.ID) and n.left.name in counters:
        k = const_int(n.right)
        if k is not None:
            return n.left.name, k if n.op == "+" else -k
    return None


def _dependence(prog, loop, var, accs, par) -> list:
    """The reads of var that provably read an element another iteration writes (the same
    subscripts but one, there 'c + k' against the write's 'c + k2', k != k2 for a parallel
    counter c); the first is warned about."""
    gen = GnuCGenerator()
    writes = [a for a in accs if a.kind != "read"]
    reads = [a for a in accs if a.kind == "read"]
    crossing = []
    for w in writes:
        wt = [gen.visit(s) for s in w.subs]
        for r in reads:
            rt = [gen.visit(s) for s in r.subs]
            diff = [k for k in range(len(wt)) if wt[k] != rt[k]]
            if len(diff) != 1:
                continue
            k = diff[0]
            fw, fr = _affine(w.subs[k], par), _affine(r.subs[k], par)
            if fw and fr and fw[0] == fr[0] and fw[1] != fr[1] and r not in crossing:
                c = fw[0]
                other = fr[1] - fw[1]
                if not crossing:
                    loop.warnings.append(prog.diag(
                        r.node.coord, f"loop-carried dependence: iteration {c} reads '{var.name}[{rt[k]}]', which "
                        f"iteration {c} {'+' if other > 0 else '-'} {abs(other)} writes; the parallel loop reads the "
                        f"value from before the loop, the sequential program may not", "warning"))
                crossing.append(r)
    return crossing


def _check_calls(prog, loop, calls, funcs, seen):
    mark = "#pragma goose func" if loop.directive.family == "goose" else "#pragma acc routine seq"
    for call in calls:
        fname = call.name.name
        if fname in MATH or (fname.endswith("f") and fname[:-1] in MATH) or fname in INT_MATH or fname in GCC_BUILTINS:
            continue
        if fname in funcs:
            if fname in seen:
                continue
            seen.add(fname)
            fd, _ = funcs[fname]
            _check_func(prog, loop, fd, funcs, seen)
            continue
        defined = any(isinstance(e, c_ast.FuncDef) and e.decl.name == fname for e in prog.ast.ext)
        if defined:
            _fail(prog, call, f"call to '{fname}' in a parallel loop: mark its definition with '{mark}'")
        _fail(prog, call, f"'{fname}' cannot be called in a parallel loop (only <math.h> functions and functions "
              f"marked '{mark}' can)")


def _check_func(prog, loop, fd, funcs, seen):
    ftype = fd.decl.type
    params = ftype.args.params if ftype.args else []
    names = set()
    for p in params:
        if isinstance(p, c_ast.Typename):        # (void)
            continue
        if _ctype(prog, p, {}) is None or _ctype(prog, p, {}).is_array:
            _fail(prog, p, f"function '{fd.decl.name}': parameter '{p.name}' must be an arithmetic scalar "
                  f"to be called from a parallel loop")
        names.add(p.name)
    local = names | _declared(fd.body)
    accs, calls = _accesses(prog, fd.body, local)
    for a in accs:
        if a.name not in local:
            _fail(prog, a.node, f"function '{fd.decl.name}' uses '{a.name}', which is not its own; a function "
                  f"called from a parallel loop may use only its parameters and locals")
    loop.funcs.append(fd)
    _check_calls(prog, loop, calls, funcs, seen)
