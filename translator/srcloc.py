"""Source coordinates: where a parsed node is in the user's source, and the diagnostic quoting it.

The parser's coordinates are in the preprocessed text.  Its lines are the
user's (pcpp writes ``#line`` markers); a column after a macro expansion is not,
and ``colmap`` (translator/__init__.py's ``_column_mapper``) maps it back.
``sources`` holds the lines of every file the preprocessor read, so a
diagnostic can quote the line under ``file:line:col`` with a caret
(``Diagnostic.format``).  The lowering (ordinary kernels) and the task-kernel
compiler (translator/backend/task.py) both locate their errors here.
"""
from __future__ import annotations

import re

from .module import Diagnostic

_LINE_MARKER = re.compile(r'#line (\d+) "(.*)"')


def _same_column(file, line, col):
    return line, col


class SourceMap:
    """The place of a node (file, line, column of the user's source) and the Diagnostic there."""

    def __init__(self, filename: str, sources: dict, colmap=None):
        self.filename, self.sources, self.colmap = filename, sources, colmap or _same_column

    def place(self, node):
        """(file, line, column) of node; (the main file, 0, 0) for a node without coordinates."""
        coord = getattr(node, "coord", None) if node is not None else None
        if coord is None or not getattr(coord, "line", 0):
            file, line, col = self.filename, 0, 0
        else:
            file, line, col = coord.file or self.filename, coord.line, coord.column or 1
        line, col = self.colmap(file, line, col)
        return file, line, col

    def diag(self, node, msg: str, sev: str = "error") -> Diagnostic:
        file, line, col = self.place(node)
        lines = self.sources.get(file, [])
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        return Diagnostic(sev, msg, file, line, col, text)


def preprocessed_lines(text: str) -> dict:
    """The lines of preprocessed text, per file and line as its ``#line`` markers number them
    (lines it skips are empty): what a diagnostic quotes when the user's source is not at hand."""
    out: dict = {}
    file, line = None, 0
    for raw in text.split("\n"):
        m = _LINE_MARKER.match(raw)
        if m:
            line, file = int(m.group(1)), m.group(2)
            continue
        if file is not None:
            lines = out.setdefault(file, [])
            lines.extend([""] * (line - len(lines)))
            lines[line - 1] = raw
        line += 1
    return out
