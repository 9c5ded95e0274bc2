"""The restrict build of an SPMD module: every kernel's buffer parameters as if declared restrict.

OpenCL C lets two pointer arguments of a kernel name the same memory, so LLVM must keep
``x1[i] += A[i*n + j] * y1[j]`` loading and storing x1[i] in every pass of the loop (x1 might be A
or y1).  The runtime, though, knows at each launch whether the buffers bound to a kernel's pointer
parameters are pairwise disjoint (abi.disjoint_buffers).  So the front end gives a second IR text
(CompiledModule.restrict_ir), lowered with Lowering(restrict=True): each kernel with two or more
__global / __constant pointer parameters becomes an alwaysinline body taking those pointers as
``noalias`` parameters and a K__wi that loads them from ``args`` and calls it.  LLVM simplifies the
body knowing the buffers apart, then inlines it (noalias becomes scoped alias metadata), and the
optimised K__wi has the shape the backend reads.

A kernel whose optimised function comes out the same either way (no store, or nothing LLVM could
move) gains nothing: only the kernels whose function differs (``differing``) get the restrict
builds (mode suffix "-noalias", abi.py); launches whose buffers overlap run the usual build.
"""
from __future__ import annotations

import re

_ATTACHMENT = re.compile(r",\s*!(?:[A-Za-z_][\w.]*) !\d+")          # , !dbg !7   , !alias.scope !8
_LOCAL = re.compile(r'%(?:"[^"]*"|[-\w.$]+)')
_LABEL = re.compile(r'^("[^"]*"|[-\w.$]+):', re.M)


def function_text(ir_text: str, fname: str) -> str:
    """The text of function ``fname``'s definition in a module's IR ('' if it is not defined)."""
    m = re.search(r'^define [^\n]*@"?' + re.escape(fname) + r'"?\(.*?^}', ir_text, re.M | re.S)
    return m.group(0) if m else ""


def normalised(func_text: str) -> str:
    """A function's text without what the restrict build changes and no code depends on: metadata
    attachments, noalias scope declarations, attribute group numbers, comments, the order of its
    blocks (put in depth-first order from the entry) and local and label names (numbered in order
    of appearance)."""
    lines = [ln for ln in func_text.splitlines() if "llvm.experimental.noalias.scope.decl" not in ln]
    text = _argument_pointers(_ATTACHMENT.sub("", "\n".join(lines)))
    text = re.sub(r" !dbg !\d+", "", text)
    text = re.sub(r"#\d+", "#", text)
    text = re.sub(r"[ \t]*;[^\n]*", "", text)                 # comments (preds = ..., attributes)
    text = _LABEL.sub(lambda m: "%" + m.group(1) + ":", text)
    names: dict = {}
    return _LOCAL.sub(lambda m: names.setdefault(m.group(0), f"%v{len(names)}"), _depth_first(text))


def _argument_pointers(text: str) -> str:
    """The loads of argument pointers from ``args`` dropped and their values named by slot
    (%arg.<byte offset>): where in the function they stand costs nothing (the restrict build loads
    them all first, the usual one where LLVM sank them)."""
    slots = {m.group(1): int(m.group(2)) for m in
             re.finditer(r"^\s*(%\S+) = getelementptr i8, ptr %args, i64 (\d+)$", text, re.M)}
    slots["%args"] = 0
    named = {}
    for m in re.finditer(r"^\s*(%\S+) = load ptr, ptr (%\S+), align 8$", text, re.M):
        if m.group(2) in slots:
            named[m.group(1)] = f"%arg.{slots[m.group(2)]}"
    drop = set(named) | (set(slots) - {"%args"})
    text = "\n".join(ln for ln in text.splitlines()
                     if not re.match(r"\s*(%\S+) = ", ln) or re.match(r"\s*(%\S+) = ", ln).group(1) not in drop)
    return _LOCAL.sub(lambda m: named.get(m.group(0), m.group(0)), text)


def _depth_first(text: str) -> str:
    """The function's blocks in depth-first order from the entry, successors in terminator order."""
    text = text.rstrip()
    text = text[:-1].rstrip() + "\n" if text.endswith("}") else text + "\n"
    parts = re.split(r"^(?=%\S+:$)", text, flags=re.M)
    head, blocks = parts[0], {p.split(":", 1)[0]: p for p in parts[1:]}
    order, stack, seen = [], list(blocks)[:1], set()
    while stack:
        b = stack.pop()
        if b in seen:
            continue
        seen.add(b)
        order.append(b)
        term = blocks[b].rstrip().rsplit("\n", 1)[-1]
        stack.extend(reversed([t for t in re.findall(r"label (%\S+?)(?=[,\s\]]|$)", term) if t in blocks]))
    order += [b for b in blocks if b not in seen]
    return head + "".join(blocks[b].rstrip() + "\n\n" for b in order) + "}"


# Work-items meet only at barriers, fences and atomics; LLVM takes a call it cannot see into not to
# touch a noalias buffer, so it could move one's accesses across a barrier (another work-item's
# store would be missed).  A kernel with any of these has no restrict build.
_SYNC = re.compile(r"@__mncl_barrier\b|\bfence\b|\batomicrmw\b|\bcmpxchg\b|@__mncl_atomic|@_Z\w*atom")


def differing(plain_ir: str, restrict_ir: str, kernels: dict) -> tuple:
    """The kernels (names, sorted) whose optimised work-item function the restrict build changes,
    leaving out those whose work-items synchronise (_SYNC)."""
    out = []
    for name, k in kernels.items():
        plain = function_text(plain_ir, k.wg_function)
        if not k.task and not _SYNC.search(plain) and \
                normalised(plain) != normalised(function_text(restrict_ir, k.wg_function)):
            out.append(name)
    return tuple(sorted(out))
