"""Read optimised LLVM IR back into plain Python objects the backend can walk.

Takes the text of a ``CompiledModule`` built with ``spmd=True`` and a kernel
name; gives a ``Func``: blocks in layout order, each with its instructions,
every operand either an ``Inst``/``Arg`` of the function, a ``Const`` or a
block name.  llvmlite.binding parses and exposes values; what its API does
not expose (predicates, GEP element types, constants' values) is read from
the instruction's text.

Source lines: the front end attaches a ``!dbg`` location to every instruction.
The binding exposes no metadata, and an instruction printed on its own numbers
metadata differently from the module, so ``source_lines`` reads the ``!dbg``
of each instruction line of the function's text in the module and resolves it
in the module's ``!N = !DILocation(...)`` table.  After inlining a location is
a chain (a helper's line, ``inlinedAt`` the call's line ...); ``Inst.line`` is
the innermost line of that chain in the kernel's own file (a helper defined in
the kernel's source reports its own line; one from an included header reports
the line of the call in the kernel's file).
"""
from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field


@dataclass(eq=False)
class Const:
    type: str
    value: object          # int, float, None (undef/poison), a tuple for vector constants, bytes for aggregates


@dataclass(eq=False)
class Arg:
    name: str
    type: str


@dataclass(eq=False)
class Inst:
    op: str
    name: str
    type: str
    ops: list = field(default_factory=list)
    text: str = ""
    block: str = ""
    pred: str = ""               # icmp/fcmp predicate
    elem: str = ""               # GEP source element type, load/store/alloca type
    phi_blocks: list = field(default_factory=list)
    callee: str = ""
    line: int = 0                # C source line (0: unknown); see source_lines


@dataclass
class Block:
    name: str
    insts: list


@dataclass
class Func:
    name: str
    args: list
    blocks: list                 # in layout order; blocks[0] is the entry


class Unsupported(Exception):
    """An IR construct the backend cannot translate (becomes a located compile error)."""


def _float_const(text: str, ty: str):
    t = text.strip()
    if t.startswith("0x"):
        bits = int(t[2:], 16)
        if ty == "float" or ty == "double":
            return struct.unpack("<d", struct.pack("<Q", bits))[0]   # LLVM prints floats as doubles
        raise Unsupported(f"constant '{text}' of type {ty}")
    return float(t)


def _scalar_const(ty: str, text: str):
    text = text.strip()
    if text in ("undef", "poison", "zeroinitializer"):
        return 0 if text == "zeroinitializer" else None
    if ty.startswith("i"):
        if text == "true":
            return 1
        if text == "false":
            return 0
        return int(text)
    if ty in ("float", "double", "half"):
        return _float_const(text, ty)
    if ty == "ptr" and text == "null":
        return 0
    raise Unsupported(f"constant '{text}' of type {ty}")


_VEC = re.compile(r"<(\d+) x ([^>]+)>")


def top_level(text: str, sep: str):
    """Positions of sep outside any brackets."""
    depth = 0
    for k, ch in enumerate(text):
        if ch in "[{<(":
            depth += 1
        elif ch in "]}>)":
            depth -= 1
        elif ch == sep and depth == 0:
            yield k


def leading_type(text: str) -> str:
    """The type at the start of ``text`` (up to the first comma outside brackets):
    ``{ i32, i32 }, ptr %p`` -> ``{ i32, i32 }``."""
    return text[:next(top_level(text, ","), len(text))].strip()


def parse_const(ty: str, text: str) -> Const:
    """``text`` is a constant operand as printed, with or without its type in front."""
    text = text.strip()
    if text.startswith(ty + " "):
        text = text[len(ty) + 1:].strip()
    if ty[:1] in ("{", "["):                       # an aggregate: its bytes in memory (None: undefined)
        if text in ("undef", "poison"):
            return Const(ty, None)
        from .constdata import const_bytes
        return Const(ty, const_bytes(ty, text))
    m = _VEC.fullmatch(ty)
    if m:
        n, et = int(m.group(1)), m.group(2).strip()
        if text in ("zeroinitializer",):
            return Const(ty, tuple([0] * n))
        if text in ("undef", "poison"):
            return Const(ty, tuple([None] * n))
        if text.startswith("splat"):
            inner = text[text.index("(") + 1:text.rindex(")")].strip()
            v = _scalar_const(et, inner.split(" ", 1)[1])
            return Const(ty, tuple([v] * n))
        body = text.strip("<>").strip()
        parts = [p.strip() for p in body.split(",")]
        return Const(ty, tuple(_scalar_const(et, p.split(" ", 1)[1]) for p in parts))
    return Const(ty, _scalar_const(ty, text))


_MD_DEF = re.compile(r"^!(\d+) = (?:distinct )?!(DILocation|DISubprogram|DILexicalBlockFile|DILexicalBlock)\((.*)\)[ \t]*$",
                     re.M)
_MD_FIELD = re.compile(r"\b(line|scope|inlinedAt|file): (!?\d+)")
_DBG = re.compile(r", !dbg !(\d+)")


def source_lines(ir_text: str, fname: str) -> "list | None":
    """The C source line of each instruction of ``fname`` (in order, 0 where none), or None
    when the function's text cannot be found."""
    m = re.search(r'^define [^\n]*@"?' + re.escape(fname) + r'"?\(([^\n]*)$', ir_text, re.M)
    if m is None:
        return None
    end = ir_text.find("\n}", m.end())
    if end < 0:
        return None
    fm = re.search(r"!dbg !(\d+) \{$", m.group(0))
    dbgs = []
    for ln in ir_text[m.end():end].split("\n"):
        if not ln.startswith("  ") or ln.startswith("   "):
            continue                                   # labels, comments, debug records, switch cases
        d = _DBG.search(ln)
        if ln.startswith("  ]"):                       # the end of a multi-line switch carries its !dbg
            if dbgs and d:
                dbgs[-1] = int(d.group(1))
            continue
        dbgs.append(int(d.group(1)) if d else None)
    if fm is None or not any(dbgs):
        return [0] * len(dbgs)
    locs, scope_file, scope_parent = {}, {}, {}
    for dm in _MD_DEF.finditer(ir_text):
        f = dict(_MD_FIELD.findall(dm.group(3)))
        n, kind = int(dm.group(1)), dm.group(2)
        if kind == "DILocation":
            locs[n] = (int(f.get("line", "0")), int(f.get("scope", "!0")[1:]),
                       int(f["inlinedAt"][1:]) if "inlinedAt" in f else None)
        else:
            if "file" in f:
                scope_file[n] = f["file"]
            if "scope" in f:
                scope_parent[n] = int(f["scope"][1:])

    def file_of(sc):
        for _ in range(64):
            if sc in scope_file:
                return scope_file[sc]
            if sc not in scope_parent:
                return None
            sc = scope_parent[sc]
        return None

    home = file_of(int(fm.group(1)))
    cache = {}

    def line_of(n):
        r = cache.get(n)
        if r is None:
            r = 0
            cur, innermost = n, None
            for _ in range(256):
                if cur is None or cur not in locs:
                    break
                line, sc, up = locs[cur]
                if innermost is None:
                    innermost = line
                if line and file_of(sc) == home:
                    r = line
                    break
                cur = up
            else:
                innermost = innermost or 0
            r = r or innermost or 0
            cache[n] = r
        return r

    return [line_of(d) if d is not None else 0 for d in dbgs]


def read_function(ir_text: str, fname: str) -> Func:
    import llvmlite.binding as llvm
    from .. import llvm_lock
    with llvm_lock:
        mod = llvm.parse_assembly(ir_text)
        fn = mod.get_function(fname)
        values = {}
        args = []
        for a in fn.arguments:
            arg = Arg(a.name, str(a.type))
            values[a] = arg
            args.append(arg)
        blocks = []
        raw = []
        for bb in fn.blocks:
            insts = []
            for ins in bb.instructions:
                i = Inst(ins.opcode, ins.name, str(ins.type), text=str(ins).strip(), block=bb.name)
                values[ins] = i
                insts.append(i)
                raw.append((i, ins))
            blocks.append(Block(bb.name, insts))
        lines = source_lines(ir_text, fname)
        if lines is not None and len(lines) == len(raw):
            for (i, _), ln in zip(raw, lines):
                i.line = ln
                if "!dbg" in i.text:
                    i.text = _DBG.sub("", i.text)
        for i, ins in raw:
            ops = []
            for o in ins.operands:
                k = o.value_kind.name
                if o in values:
                    ops.append(values[o])
                elif k == "basic_block":
                    ops.append(o.name)
                elif k == "function":
                    i.callee = o.name
                    ops.append(("fn", o.name))
                elif k in ("global_variable",):
                    ops.append(("global", o.name, str(o)))
                elif o.is_constant or k.startswith("constant") or k in ("undef_value", "poison_value"):
                    ty = str(o.type)
                    ops.append(parse_const(ty, str(o)))
                elif k == "metadata_as_value":
                    ops.append(("meta", str(o)))
                else:
                    raise Unsupported(f"operand of kind {k} in '{i.text}'")
            i.ops = ops
            t = i.text
            if i.op in ("icmp", "fcmp"):
                i.pred = next(w for w in t.split("=", 1)[1].split()[1:] if w != "samesign")   # icmp samesign ugt ...
            elif i.op == "getelementptr":
                m = re.search(r"getelementptr (?:inbounds |nuw |nusw )*", t)
                i.elem = leading_type(t[m.end():]) if m else ""
            elif i.op == "load":
                m = re.search(r"load (?:volatile )?", t)
                i.elem = leading_type(t[m.end():]) if m else i.type
            elif i.op == "alloca":
                m = re.search(r"alloca (?:inalloca )?", t)
                i.elem = leading_type(t[m.end():]) if m else ""
            elif i.op == "phi":
                i.phi_blocks = [b.name for b in ins.incoming_blocks]
        return Func(fname, args, blocks)
