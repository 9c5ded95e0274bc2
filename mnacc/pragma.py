"""The directives: ``#pragma goose ...`` and its OpenACC aliases, parsed with their positions.

A directive is read from the user's file itself (not the preprocessed text), so each clause
keeps the line and column it was written at, across backslash continuations and comments,
and a diagnostic can point at it.  Grammar (docs/mnacc.md):

    #pragma goose parallel for CLAUSE...      CLAUSE: loopcounter(c1[, c2[, c3]]) | result(ITEM, ...)
    #pragma goose func                          | reduction(OP: ITEM, ...) | private(name, ...)
    #pragma acc parallel loop CLAUSE...         | firstprivate(name, ...) | precision("double"|"single")
    #pragma acc kernels loop CLAUSE...          | copyin/copyout/copy/create/present(ITEM, ...)
    #pragma acc loop seq | reduction(...)       | nip_pack(n) | collapse(n)   (acc)
    #pragma acc routine [seq]                 ITEM: name | name[e] | name[lo..hi] | name[start:len] ...
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field


DATA_CLAUSES = ("copyin", "copyout", "copy", "create", "present")
REDUCTION_OPS = ("+", "*", "max", "min", "&", "|", "^", "&&", "||")
GOOSE_CLAUSES = ("loopcounter", "result", "reduction", "private", "firstprivate", "precision",
                 "nip_pack", *DATA_CLAUSES)
ACC_LOOP_CLAUSES = ("collapse", "reduction", "private", "firstprivate", "gang", "worker", "vector",
                    "independent", "num_gangs", "num_workers", "vector_length", *DATA_CLAUSES)
ACC_INNER_CLAUSES = ("seq", "reduction", "private")
HINTS = ("gang", "worker", "vector", "independent", "num_gangs", "num_workers", "vector_length")

_TOKEN = re.compile(r"\s+|/\*.*?\*/|//.*|\.\.|\"(?:[^\"\\]|\\.)*\"|[A-Za-z_]\w*|\d+\w*|&&|\|\||\S", re.S)


@dataclass
class Sub:
    """One subscript of an item: an index ``e``, Goose's inclusive ``lo..hi`` or OpenACC's ``start:len``."""
    kind: str                 # "index" | "range" (lo..hi) | "section" (start:len)
    first: str                # the index, lo or start (C text)
    second: str = ""          # hi or len


@dataclass
class Item:
    name: str
    subs: list
    pos: tuple                # (file, line, col)

    def text(self) -> str:
        def one(s):
            return {"index": s.first, "range": f"{s.first}..{s.second}", "section": f"{s.first}:{s.second}"}[s.kind]
        return self.name + "".join(f"[{one(s)}]" for s in self.subs)


@dataclass
class Clause:
    name: str
    pos: tuple
    items: list = field(default_factory=list)    # Items, names (as Items without subscripts) or values
    op: str = ""                                  # a reduction's operator
    value: str = ""                               # precision's string, collapse's / nip_pack's number


@dataclass
class Directive:
    family: str               # "goose" | "acc"
    form: str                 # "parallel for", "func", "parallel loop", "kernels loop", "loop", "routine"
    pos: tuple                # of the '#'
    clauses: list
    last_line: int            # the directive's last line (after continuations)

    def all(self, name):
        return [c for c in self.clauses if c.name == name]

    def one(self, name):
        cs = self.all(name)
        return cs[0] if cs else None

    @property
    def spelling(self) -> str:
        return f"#pragma {self.family} {self.form}"


def _logical_line(lines: list[str], line: int):
    """The directive starting at 1-based line, continuations joined: (text, [(line, col)] per char, last line)."""
    text, where, n = "", [], line
    while True:
        raw = lines[n - 1] if 0 < n <= len(lines) else ""
        cont = raw.rstrip().endswith("\\")
        body = raw.rstrip()[:-1] if cont else raw
        text += body + " "
        where += [(n, c + 1) for c in range(len(body))] + [(n, len(body) + 1)]
        if not cont or n >= len(lines):
            return text, where, n
        n += 1


class _Reader:
    def __init__(self, path, text, where):
        self.path, self.toks = path, []
        for m in _TOKEN.finditer(text):
            tok = m.group(0)
            if tok.isspace() or tok.startswith("/*") or tok.startswith("//"):
                continue
            self.toks.append((tok, where[m.start()] if m.start() < len(where) else where[-1]))
        self.i = 0
        self.end = where[-1] if where else (0, 0)

    def peek(self):
        return self.toks[self.i][0] if self.i < len(self.toks) else ""

    def pos(self):
        line, col = self.toks[self.i][1] if self.i < len(self.toks) else self.end
        return (self.path, line, col)

    def take(self):
        tok = self.peek()
        self.i += 1
        return tok


class DirectiveError(Exception):
    def __init__(self, pos, msg):
        super().__init__(msg)
        self.pos, self.msg = pos, msg


def parse(path: str, lines: list[str], line: int) -> Directive | None:
    """The goose / acc directive at line of path; None for any other pragma. DirectiveError if malformed."""
    text, where, last = _logical_line(lines, line)
    r = _Reader(path, text, where)
    if r.take() != "#":
        return None
    hash_pos = (path, *r.toks[0][1])
    if r.take() != "pragma":
        return None
    family = r.peek()
    if family not in ("goose", "acc"):
        return None
    r.take()
    form_pos = r.pos()
    if family == "goose":
        words = []
        while len(words) < 2 and words != ["func"] and re.fullmatch(r"[A-Za-z_]\w*", r.peek() or "") \
                and r.peek() not in GOOSE_CLAUSES:
            words.append(r.take())
        form = " ".join(words)
        if not form:
            raise DirectiveError(form_pos, "'#pragma goose' needs a directive ('parallel for' or 'func')")
        if form not in ("parallel for", "func"):
            raise DirectiveError(form_pos, f"unknown directive '#pragma goose {form}'"
                                 + _suggest(form, ("parallel for", "func")))
        known = GOOSE_CLAUSES if form == "parallel for" else ()
    else:
        form = _acc_form(r, form_pos)
        known = {"loop": ACC_INNER_CLAUSES, "routine": ("seq",)}.get(form, ACC_LOOP_CLAUSES)
    d = Directive(family, form, hash_pos, [], last)
    while r.peek():
        pos = r.pos()
        name = r.take()
        if name == ",":
            continue
        if name not in known and d.form == "loop" and name in ACC_LOOP_CLAUSES:
            raise DirectiveError(pos, f"'{name}' on an inner '#pragma acc loop' is not supported by mnacc: the "
                                 f"parallel loop already spreads its iterations over the device; an inner loop "
                                 f"takes only seq, reduction(...) or private(...)")
        if name not in known:
            what = f"'{d.spelling}'"
            if not known:
                raise DirectiveError(pos, f"{what} takes no clauses")
            raise DirectiveError(pos, f"unknown clause '{name}' in {what}" + _suggest(name, known))
        if any(c.name == name for c in d.clauses) and name in ("loopcounter", "precision", "collapse", "nip_pack"):
            raise DirectiveError(pos, f"clause '{name}' given twice")
        d.clauses.append(_clause(r, name, pos, d))
    return d


def _acc_form(r: _Reader, pos) -> str:
    """The OpenACC directive name: 'parallel loop', 'kernels loop', 'loop' or 'routine'."""
    first = r.peek()
    if not first or not re.fullmatch(r"[A-Za-z_]\w*", first):
        raise DirectiveError(pos, "'#pragma acc' needs a directive ('parallel loop', 'kernels loop', 'loop' "
                                  "or 'routine')")
    r.take()
    if first in ("parallel", "kernels"):
        if r.peek() == "loop":
            r.take()
            return f"{first} loop"
        raise DirectiveError(pos, f"'#pragma acc {first}' without 'loop' is not supported by mnacc; write "
                                  f"'#pragma acc {first} loop' before each loop")
    if first in ("loop", "routine"):
        return first
    raise DirectiveError(pos, f"'#pragma acc {first}' is not supported by mnacc (it supports 'parallel loop', "
                              f"'kernels loop', 'loop' and 'routine')")


def _suggest(word, options):
    close = difflib.get_close_matches(word, options, n=1)
    return f"; did you mean '{close[0]}'?" if close else ""


def _expect(r, tok, what):
    if r.peek() != tok:
        got = f"'{r.peek()}'" if r.peek() else "the end of the line"
        raise DirectiveError(r.pos(), f"expected '{tok}' {what}, found {got}")
    r.take()


def _clause(r: _Reader, name: str, pos, d: Directive) -> Clause:
    c = Clause(name, pos)
    if name in ("seq", *HINTS) and r.peek() != "(":
        return c
    _expect(r, "(", f"after '{name}'")
    if name == "precision":
        vpos, v = r.pos(), r.take()
        if v not in ('"double"', '"single"'):
            raise DirectiveError(vpos, 'precision must be "double" or "single"')
        c.value = v.strip('"')
    elif name in ("collapse", "nip_pack", "num_gangs", "num_workers", "vector_length"):
        vpos, v = r.pos(), r.take()
        if not v.isdigit() or int(v) < 1:
            raise DirectiveError(vpos, f"{name}(...) takes a positive integer constant")
        c.value = v
        if name == "collapse" and int(v) > 3:
            raise DirectiveError(vpos, f"collapse({v}): at most 3 loops can be collapsed")
    else:
        if name == "reduction":
            opos, op = r.pos(), r.take()
            if op in ("&", "|") and r.peek() == op:
                op += r.take()
            if op not in REDUCTION_OPS:
                raise DirectiveError(opos, f"unknown reduction operator '{op}' (one of {', '.join(REDUCTION_OPS)})")
            c.op = op
            _expect(r, ":", "after the reduction operator")
        while True:
            c.items.append(_item(r, allow_subs=name not in ("loopcounter", "private", "firstprivate")))
            if r.peek() != ",":
                break
            r.take()
    _expect(r, ")", f"to close '{name}('")
    return c


def _item(r: _Reader, allow_subs: bool) -> Item:
    pos, name = r.pos(), r.peek()
    if not re.fullmatch(r"[A-Za-z_]\w*", name or ""):
        got = f"'{name}'" if name else "the end of the line"
        raise DirectiveError(pos, f"expected a variable name, found {got}")
    r.take()
    subs = []
    while r.peek() == "[":
        if not allow_subs:
            raise DirectiveError(r.pos(), f"'{name}': a subscript is not allowed here")
        r.take()
        first = _expr(r, ("..", ":", "]"))
        kind, second = "index", ""
        if r.peek() in ("..", ":"):
            kind = "range" if r.take() == ".." else "section"
            second = _expr(r, ("]",))
        _expect(r, "]", f"to close the subscript of '{name}'")
        if not first or (kind != "index" and not second):
            raise DirectiveError(pos, f"'{name}': empty subscript")
        subs.append(Sub(kind, first, second))
    return Item(name, subs, pos)


def _expr(r: _Reader, stops) -> str:
    out, depth = [], 0
    while r.peek() and not (depth == 0 and r.peek() in stops):
        tok = r.take()
        depth += tok in "([" and len(tok) == 1
        depth -= tok in ")]" and len(tok) == 1
        if depth < 0:
            raise DirectiveError(r.pos(), "unbalanced ')' or ']' in a subscript")
        out.append(tok)
    return " ".join(out)
