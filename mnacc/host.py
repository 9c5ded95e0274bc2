"""The host program: the user's own C text, each marked loop wrapped in a call to the runtime.

The host part keeps full C semantics because it *is* the user's C, compiled by the system C
compiler: mnacc only rewrites the lines of each directive, on the same lines, so every other
line keeps its number and gcc's messages and the debugger name the user's lines.  A marked loop

    #pragma goose parallel for loopcounter(i, j) result(c[i])
    for (i = 0; i < n; i++) ...

becomes

    { void *p_[] = {...}; ... if (__mnacc_launch(1, p_, s_, b_)) { for (i = 0; i < n; i++) ...
      __mnacc_done(1, p_, s_, b_); } else { i = <its exit value>; } }

``__mnacc_launch`` (set by the runtime, mnacc/runtime.py, through ctypes) runs the loop's kernels
on the device, with the addresses and byte sizes of the variables it uses and the start and
trip count of each parallel counter, all evaluated here by C.  It returns 1 when the loop is
to run on the host as written (``--sequential``, and ``--check``, which then compares the two
in ``__mnacc_done``).
"""
from __future__ import annotations

import re

from pycparserext.ext_c_generator import GnuCGenerator as CGenerator

from .loops import Analysis, Loop
from .source import MnaccError

PRELUDE = ("int (*__mnacc_launch)(int, void **, const unsigned long long *, const long long *);\n"
           "void (*__mnacc_done)(int, void **, const unsigned long long *, const long long *);\n")

_TOKEN = re.compile(r'\s+|/\*.*?\*/|//[^\n]*|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|[A-Za-z_]\w*|\d[\w.]*|\S', re.S)


def _tokens(text: str, start: int):
    """(token, offset) from start, skipping space, comments and preprocessor lines."""
    pos = start
    line_start = text.rfind("\n", 0, start) + 1
    at_line_start = not text[line_start:start].strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        tok = m.group(0)
        if tok.isspace() or tok.startswith("/*") or tok.startswith("//"):
            if "\n" in tok:
                at_line_start = True
            pos = m.end()
            continue
        if tok == "#" and at_line_start:           # a directive line (with continuations)
            while True:
                nl = text.find("\n", pos)
                if nl < 0:
                    return
                if text[pos:nl].rstrip().endswith("\\"):
                    pos = nl + 1
                    continue
                pos = nl + 1
                break
            at_line_start = True
            continue
        at_line_start = False
        yield tok, m.start()
        pos = m.end()


class _Scanner:
    def __init__(self, text, start):
        self.toks = list(_tokens(text, start))
        self.i = 0

    def peek(self):
        return self.toks[self.i][0] if self.i < len(self.toks) else ""

    def take(self):
        tok, off = self.toks[self.i]
        self.i += 1
        return tok, off

    def until(self, at_end) -> int:
        """Consume tokens up to the first one at_end(token, depth) accepts, brackets counted;
        the offset just after it."""
        depth = 0
        while self.i < len(self.toks):
            tok, off = self.take()
            if len(tok) == 1 and tok in "([{":
                depth += 1
            elif len(tok) == 1 and tok in ")]}":
                depth -= 1
            if at_end(tok, depth):
                return off + 1
        raise ValueError("no end")

    def balanced(self) -> int:
        """A bracketed group: '(...)' or '{...}'."""
        return self.until(lambda tok, depth: depth == 0 and tok in ")}")

    def statement(self) -> int:
        """Consume one statement; the offset just after it."""
        tok = self.peek()
        if tok == "{":
            return self.balanced()
        if tok in ("for", "while", "switch"):
            self.take()
            self.balanced()
            return self.statement()
        if tok == "if":
            self.take()
            self.balanced()
            end = self.statement()
            if self.peek() == "else":
                self.take()
                end = self.statement()
            return end
        if tok == "do":
            self.take()
            self.statement()
            self.take()                              # while
            self.balanced()
            return self.take()[1] + 1                # ;
        return self.until(lambda tok, depth: depth == 0 and tok == ";")


def _offset(text: str, line: int, col: int = 1) -> int:
    off = 0
    for _ in range(line - 1):
        off = text.index("\n", off) + 1
    return off + col - 1


def loop_span(prog, loop: Loop) -> tuple[int, int, int]:
    """(offset of the directive's '#', offset of the 'for', offset after the loop) in the user's text."""
    d = loop.directive
    text = prog.text
    file = loop.pragma_node.coord.file or prog.path
    if file != prog.path:
        raise MnaccError([prog.diag(d.pos, "a marked loop must be in the program's own file, not in a header")])
    start = _offset(text, d.pos[1], d.pos[2])
    after = _offset(text, d.last_line + 1) if d.last_line < text.count("\n") + 1 else len(text)
    sc = _Scanner(text, after)
    if sc.peek() != "for":
        raise MnaccError([prog.diag(d.pos, f"cannot find the for loop after '{d.spelling}' in the source text "
                                           f"(is it made by a macro?)")])
    for_off = sc.toks[0][1]
    try:
        end = sc.statement()
    except (ValueError, IndexError):
        raise MnaccError([prog.diag(d.pos, f"cannot find the end of the loop after '{d.spelling}' in the "
                                           f"source text (is it made by a macro?)")]) from None
    last = max((n.coord.line for n in _nodes(loop.node) if getattr(n, "coord", None) and n.coord.line), default=0)
    if text.count("\n", 0, end) + 1 < last:
        raise MnaccError([prog.diag(d.pos, f"cannot find the end of the loop after '{d.spelling}' in the "
                                           f"source text (is it made by a macro?)")])
    return start, for_off, end


def _nodes(n):
    yield n
    for _, c in n.children():
        yield from _nodes(c)


def arg_order(loop: Loop) -> list:
    """The loop's variables in the order the host passes them (and the runtime reads them)."""
    return loop.arrays() + loop.by_value() + loop.reductions()


def _count(c, gen) -> tuple[str, str]:
    lo = f"(long long)({c.ctype.base})({gen.visit(c.lo)})"
    hi = f"(long long)({gen.visit(c.hi)})"
    st = abs(c.step)
    if c.op == "<":
        n = f"(h_ > l_ ? (h_ - l_ + {st - 1}) / {st} : 0)"
    elif c.op == "<=":
        n = f"(h_ >= l_ ? (h_ - l_) / {st} + 1 : 0)"
    elif c.op == ">":
        n = f"(l_ > h_ ? (l_ - h_ + {st - 1}) / {st} : 0)"
    else:
        n = f"(l_ >= h_ ? (l_ - h_) / {st} + 1 : 0)"
    return lo, hi, n


def wrap(prog, loop: Loop) -> tuple[str, str]:
    """(the C that replaces the directive's first line, the C that follows the loop)."""
    gen = CGenerator()
    k = loop.index
    ptrs, sizes = [], []
    for v in arg_order(loop):
        if v.role == "array":
            ptrs.append(f"(void *){v.name}")
            sizes.append(v.extent)
        else:
            ptrs.append(f"(void *)&{v.name}")
            sizes.append(f"sizeof {v.name}")
    bounds, exits = [], []
    for level, c in enumerate(loop.counters):      # b_[2 level]: start, b_[2 level + 1]: trip count
        lo, hi, n = _count(c, gen)
        bounds.append(f"l_ = {lo}; h_ = {hi}; b_[{2 * level}] = l_; b_[{2 * level + 1}] = {n};")
        if not c.declared:
            exits.append((c, level))
    pre = ("{ long long b_[%d], l_, h_; void *p_[] = {%s}; unsigned long long s_[] = {%s}; %s "
           "if (__mnacc_launch(%d, p_, s_, b_)) { " % (
               2 * len(loop.counters), ", ".join(ptrs) or "0", ", ".join(sizes) or "0", " ".join(bounds), k))
    outs = []
    for c, level in exits:   # a counter ends as C leaves it: start + trips * step (untouched by zero trips)
        guard = " && ".join(f"b_[{2 * j + 1}] > 0" for j in range(level))
        set_ = f"{c.name} = ({c.ctype.base})(b_[{2 * level}] + b_[{2 * level + 1}] * ({c.step}));"
        outs.append(f"if ({guard}) {set_}" if guard else set_)
    post = f" __mnacc_done({k}, p_, s_, b_); }} else {{ {' '.join(outs)} }} }}"
    return pre, post


def host_source(prog, analysis: Analysis) -> str:
    """The user's program with each marked loop wrapped, lines kept, ready for the C compiler."""
    text = prog.text
    edits = []
    for loop in analysis.loops:
        start, for_off, end = loop_span(prog, loop)
        pre, post = wrap(prog, loop)
        directive = text[start:for_off]          # its line breaks are kept: lines keep their numbers
        head = pre + "\n" * directive.count("\n") + " " * (len(directive) - directive.rfind("\n") - 1)
        edits.append((start, end, head, text[for_off:end] + post))
    out, at = [], 0
    for start, end, head, tail in sorted(edits):
        out += [text[at:start], head, tail]
        at = end
    out.append(text[at:])
    return PRELUDE + f'#line 1 "{prog.path}"\n' + "".join(out)
