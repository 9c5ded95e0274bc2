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

from .module import Diagnostic
from .sourcefile import IncludeRefused, check_name, read_include

INCLUDE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "include")
DEVICE_HEADER = os.path.join(INCLUDE_DIR, "mncl.h")


class _Preprocessor(pcpp.Preprocessor):
    def __init__(self, sources):
        super().__init__()
        self.sources = sources
        self.diags = []
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
    try:
        p.parse(source, source=filename)
        p.write(out)
    except Exception:                       # pcpp itself fails on some malformed directives
        d = getattr(p, "lastdirective", None)
        file = getattr(d, "source", None) or filename
        line = getattr(d, "lineno", 0) or 0
        name = getattr(d, "value", "")
        p.diags.append(("error", file, line, f"malformed preprocessing directive '#{name}'" if name else "malformed preprocessing directive"))
    text = _canonical_names(out.getvalue(), sources)
    diags = []
    for sev, file, line, msg in p.diags:
        file = _canon(file, sources)
        lines = sources.get(file, [])
        diags.append(Diagnostic(sev, msg, file, line, 1, lines[line - 1] if 0 < line <= len(lines) else ""))
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
