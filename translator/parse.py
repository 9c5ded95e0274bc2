"""Parsing: preprocessed text -> pycparser AST, or a located syntax diagnostic.

Takes the preprocessed text.  Gives a ``c_ast.FileAST`` built by pycparserext's
OpenCL C parser, extended so that ``DRAM``, ``L2BM`` and ``L1BM`` lex as
address-space qualifiers and ``__task`` as a function specifier (the MN-Core
extensions: task kernels, translator/task.py; the SPMD lowering rejects the
address spaces outside them).  pycparser's ``ParseError`` (a string
"file:line:col: msg", sometimes without a position) becomes a ``Diagnostic``
at the offending token: ``syntax error: unexpected '}'`` and the like.
"""
from __future__ import annotations

import re

from pycparser import c_parser
from pycparser.c_parser import Coord
from pycparserext.ext_c_lexer import OpenCLCLexer
from pycparserext.ext_c_parser import OpenCLCParser

from .module import Diagnostic

RESERVED_SPACES = ("DRAM", "DRAM_SPLIT", "L2BM", "L1BM")


class MnclLexer(OpenCLCLexer):
    _extra_keywords = {**OpenCLCLexer._extra_keywords, **{k: "GLOBAL" for k in RESERVED_SPACES},
                       "vec_step": "SIZEOF",   # vec_step(type-or-expression) parses like sizeof
                       "__task": "__KERNEL"}   # a task kernel (translator/task.py)


class _SyntaxError(Exception):
    def __init__(self, msg, coord):
        super().__init__(msg)
        self.msg, self.coord = msg, coord


class MnclParser(OpenCLCParser):
    lexer_class = MnclLexer

    def _parse_error(self, msg, coord):
        last, prev = getattr(self, "_last_tok", None), getattr(self, "_prev_tok", None)
        if isinstance(coord, Coord) and last is not None and (last.lineno, last.column) == (coord.line, coord.column):
            tok, last = last, prev                  # _expect consumed the offending token
        else:
            try:
                tok = self._peek()
            except Exception:
                tok = None
        if tok is not None and last is not None and tok.type == "ID" and last.type == "ID":
            # 'vec4 v;': an identifier used as a type name
            raise _SyntaxError(f"unknown type name '{last.value}'", self._tok_coord(last))
        if not isinstance(coord, Coord):
            tok = None
            try:
                tok = self._peek()
            except Exception:
                tok = None
            if tok is not None:
                coord = self._tok_coord(tok)
            elif getattr(self, "_last_tok", None) is not None:
                t = self._last_tok
                coord = Coord(self.clex.filename, t.lineno, t.column + len(str(t.value)))
            else:
                coord = Coord(self.clex.filename, max(getattr(self.clex, "_lineno", 1), 1), 1)
        raise _SyntaxError(msg, coord)

    def _lex_on_rbrace_func(self):
        if len(self._scope_stack) <= 1:          # an unmatched '}' (pycparser would assert)
            lx = self.clex
            col = getattr(lx, "_pos", 0) - getattr(lx, "_line_start", 0)
            raise _SyntaxError("before: }", Coord(lx.filename, getattr(lx, "_lineno", 1), max(col, 1)))
        super()._lex_on_rbrace_func()

    def _advance(self):
        tok = super()._advance()
        self._prev_tok = getattr(self, "_last_tok", None)
        self._last_tok = tok
        return tok

    def _lex_error_func(self, msg, line, column):
        raise _SyntaxError(msg, Coord(self.clex.filename, line, column))


import threading

_local = threading.local()          # one parser per thread: pycparser's parser keeps state


def _friendly(msg: str) -> str:
    m = re.match(r"before: (.*)$", msg)
    if m:
        return f"syntax error: unexpected '{m.group(1)}'"
    if msg.startswith("unknown type name"):
        return msg
    if msg == "At end of input":
        return "syntax error: unexpected end of file"
    if msg.startswith("Illegal character"):
        return "invalid character " + msg[len("Illegal character "):]
    return "syntax error: " + msg[0].lower() + msg[1:] if msg else "syntax error"


def parse(text: str, filename: str, sources: dict):
    """Returns (ast, None) or (None, Diagnostic)."""
    parser = getattr(_local, "parser", None)
    if parser is None:
        parser = _local.parser = MnclParser()
    parser._last_tok = parser._prev_tok = None
    try:
        return parser.parse(text, filename=filename), None
    except _SyntaxError as e:
        c = e.coord
        return None, make_diag("error", _friendly(e.msg), c.file, c.line, c.column or 1, sources)
    except c_parser.ParseError as e:
        m = re.match(r"(.*?):(\d+):(\d+): (.*)$", str(e), re.S)
        if m:
            return None, make_diag("error", _friendly(m.group(4)), m.group(1), int(m.group(2)), int(m.group(3)), sources)
        return None, make_diag("error", _friendly(str(e)), filename, 1, 1, sources)


def make_diag(sev, msg, file, line, col, sources):
    lines = sources.get(file, [])
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    return Diagnostic(sev, msg, file or "<kernel>", line or 0, col or 0, text)
