"""Preprocessing: OpenCL C source -> one text with ``#line`` markers.

Takes the user's source, its file name, the build options' ``-D`` and ``-I``.
Gives the preprocessed text (pcpp keeps each line's text and column where no
macro expands before it, and emits ``#line`` directives that pycparser's lexer
follows, so parser coordinates are the user's file, line and column) and the
text of every file read, for caret diagnostics.  ``mncl.h`` (the device
header, translator/include/) is processed first, as if included, and its
directory is on the include path.  ``#include "x.h"`` is searched in the
including file's directory, then in the ``-I`` directories; ``#include <x.h>``
in the ``-I`` directories only (as gcc's ``-I``).  Files are read by
translator/sourcefile.py: regular text files of bounded size only, confined
to ``MNCL_INCLUDE_ROOTS`` when that is set.
"""
from __future__ import annotations

import io
import os

import pcpp

from .limits import MAX_EXPANDED_TOKENS
from .module import Diagnostic
from .sourcefile import IncludeRefused, check_name, read_include

INCLUDE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "include")
DEVICE_HEADER = os.path.join(INCLUDE_DIR, "mncl.h")


class _ExpansionLimit(Exception):
    """Macro replacement produced more than MAX_EXPANDED_TOKENS tokens: args (file, line, macro)."""


class _Preprocessor(pcpp.Preprocessor):
    def __init__(self, sources):
        super().__init__()
        self.sources = sources
        self.diags = []
        self.expanded = 0           # tokens produced by macro replacement so far (MAX_EXPANDED_TOKENS)
        self._top = None            # the token list of the source text being expanded
        self.line_directive = "#line"
        self.passthru_includes = None

    def on_error(self, file, line, msg):
        self.return_code += 1
        self.diags.append(("error", file, line, msg))

    def on_include_not_found(self, is_malformed, is_system_include, curdir, includepath):
        d = self.lastdirective
        if is_malformed:
            self.on_error(d.source, d.lineno, f"malformed #include directive: {includepath}")
        else:
            self.on_error(d.source, d.lineno, f"'{includepath}' file not found")
        raise pcpp.OutputDirective(pcpp.Action.IgnoreAndRemove)

    def on_directive_unknown(self, directive, toks, ifpassthru, precedingtoks):
        text = "".join(t.value for t in toks).strip()
        if directive.value == "error":
            self.on_error(directive.source, directive.lineno, f"#error {text}".rstrip())
            return True
        if directive.value == "warning":
            self.diags.append(("warning", directive.source, directive.lineno, f"#warning {text}".rstrip()))
            return True
        if directive.value == "pragma":
            return True                       # OPENCL EXTENSION / unroll pragmas: accepted and ignored
        if directive.value == "line":
            return None
        self.on_error(directive.source, directive.lineno, f"invalid preprocessing directive '#{directive.value}'")
        return True

    def expand_macros(self, tokens, expanding_from=[]):  # noqa: B006 - pcpp's signature
        """pcpp's expansion, counted: pcpp calls this for every replacement list it rescans (the
        macros being expanded in ``expanding_from``) and splices and rescans each result into the
        enclosing list, so the sum of the results' lengths is the work done.  A macro bomb stops
        at the limit within seconds instead of running for minutes."""
        if not expanding_from and self._top is None:      # source text: the macro uses are in here
            self._top = tokens
            try:
                return super().expand_macros(tokens, expanding_from)
            finally:
                self._top = None
        out = super().expand_macros(tokens, expanding_from)
        if expanding_from:
            self.expanded += len(out)
            if self.expanded > MAX_EXPANDED_TOKENS:
                raise _ExpansionLimit(*self._use_of(expanding_from[0]))
        return out

    def _use_of(self, macro):
        """(file, line, macro) of the use being expanded: pcpp replaces uses left to right, in place,
        so it is the first token of that name still in the source text's list."""
        use = next((t for t in self._top or () if t.type == self.t_ID and t.value == macro), None)
        return (use.source, use.lineno, macro) if use is not None else (None, 0, macro)

    def on_file_open(self, is_system_include, includepath):
        """A refused file is an error at the #include (naming why, never quoting the file) and
        includes as empty; a missing one raises OSError so pcpp searches on."""
        try:
            text = read_include(includepath, trusted_dirs=(INCLUDE_DIR,))
        except IncludeRefused as e:
            d = self.lastdirective
            self.on_error(d.source, d.lineno, f"cannot include {e}")
            text = ""
        self.sources[includepath] = text.splitlines()
        return io.StringIO(text)

    def include(self, tokens, original_line):
        name = "".join(t.value for t in tokens).strip()
        try:
            check_name(name[1:-1] if name[:1] in "<\"" and len(name) > 1 else name)
        except IncludeRefused as e:
            self.on_error(self.lastdirective.source, self.lastdirective.lineno, f"cannot include {e}")
            return
        yield from super().include(tokens, original_line)


def preprocess(source: str, filename: str, defines, include_dirs, sources: dict):
    """Returns (text, diagnostics).  ``sources`` is filled with file -> list of lines."""
    sources[filename] = source.splitlines()
    p = _Preprocessor(sources)
    p.add_path(INCLUDE_DIR)
    base = os.path.dirname(filename) if filename and not filename.startswith("<") else ""
    if base:
        p.add_path(base)
    for d in include_dirs:
        p.add_path(d)
    for name, val in defines:
        p.define(f"{name} {1 if val is None else val}")
    with open(DEVICE_HEADER) as f:
        p.parse(f.read(), source=DEVICE_HEADER)
        p.write(io.StringIO())
    out = io.StringIO()
    p.expanded = 0                          # the device header's own macros are not the user's
    try:
        p.parse(source, source=filename)
        p.write(out)
    except _ExpansionLimit as e:
        file, line, macro = e.args
        file = _canon(file or filename, sources)
        text = sources.get(file, [])[line - 1] if 0 < line <= len(sources.get(file, [])) else ""
        p.diags.append(("error", file, line,
                        f"the expansion of macro '{macro}' makes macro replacement produce more than "
                        f"{MAX_EXPANDED_TOKENS} tokens in this translation unit, the translator's limit "
                        f"(docs/language.md, \"Limits\")", text.find(macro) + 1 or 1))
    except Exception:                       # pcpp itself fails on some malformed directives
        d = getattr(p, "lastdirective", None)
        file = getattr(d, "source", None) or filename
        line = getattr(d, "lineno", 0) or 0
        name = getattr(d, "value", "")
        p.diags.append(("error", file, line, f"malformed preprocessing directive '#{name}'" if name else "malformed preprocessing directive"))
    text = _canonical_names(out.getvalue(), sources)
    diags = []
    for sev, file, line, msg, *column in p.diags:
        file = _canon(file, sources)
        lines = sources.get(file, [])
        diags.append(Diagnostic(sev, msg, file, line, column[0] if column else 1,
                                lines[line - 1] if 0 < line <= len(lines) else ""))
    return text, diags


def _canon(name, sources):
    if name in sources:
        return name
    a = os.path.abspath(name)
    for k in sources:
        if os.path.abspath(k) == a:
            return k
    return name


def _canonical_names(text, sources):
    """pcpp writes file names relative to the working directory; use the names we were given."""
    import re
    by_abs = {}
    for k in sources:
        by_abs.setdefault(os.path.abspath(k), k)
    cache = {}

    def fix(m):
        name = m.group(2)
        if name not in cache:
            cache[name] = name if name in sources else by_abs.get(os.path.abspath(name), name)
        return f'#line {m.group(1)} "{cache[name]}"'
    return re.sub(r'^#line (\d+) "([^"]*)"', fix, text, flags=re.M)
