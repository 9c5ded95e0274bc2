"""The user's program: preprocessed by the system C compiler, parsed by pycparserext.

The host part of an MNACC program is compiled by the system C compiler against the real
headers, so only the marked loops need a C front end here.  ``gcc -E`` expands the user's
macros exactly as the host build will; the lines that come from system headers (glibc's
declarations lean on GNU extensions no Python C parser follows) are dropped, and the
typedef names they declared are re-declared so the user's code still parses.  The types a
marked loop may use (``size_t``, ``int32_t`` ...) are listed in ``KNOWN_TYPEDEFS``; any other
system type reaches the loop analysis as opaque and is reported there if a loop uses it.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field

from pycparser import c_ast
from pycparserext.ext_c_parser import GnuCParser

from translator.module import CompileError, Diagnostic

# system typedefs a marked loop may use, as the C types they are on the host (LP64)
KNOWN_TYPEDEFS = {
    "size_t": "unsigned long", "ssize_t": "long", "ptrdiff_t": "long",
    "intptr_t": "long", "uintptr_t": "unsigned long",
    "int8_t": "signed char", "uint8_t": "unsigned char", "int16_t": "short",
    "uint16_t": "unsigned short", "int32_t": "int", "uint32_t": "unsigned int",
    "int64_t": "long", "uint64_t": "unsigned long",
}

_MARKER = re.compile(r'^# (\d+) "((?:[^"\\]|\\.)*)"((?: \d)*)\s*$')
_ATTR = re.compile(r"__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)")


class MnaccError(CompileError):
    """An MNACC program cannot be compiled: every diagnostic, formatted like the translator's."""


def cc() -> str:
    """The system C compiler: $CC, else gcc, else cc."""
    for name in (os.environ.get("CC"), "gcc", "cc"):
        if name and shutil.which(name.split()[0]):
            return name
    raise MnaccError([Diagnostic("error", "no C compiler found (set CC, or install gcc)", "mnacc", 0, 0)])


@dataclass
class Program:
    """One parsed program: its AST, the text of each file it read, and where it came from."""
    path: str
    text: str
    ast: c_ast.FileAST
    sources: dict = field(default_factory=dict)     # file -> list of lines (for diagnostics)
    opaque_types: set = field(default_factory=set)  # system typedef names outside KNOWN_TYPEDEFS

    def diag(self, coord, msg: str, sev: str = "error", column: int | None = None) -> Diagnostic:
        """A diagnostic at coord (a pycparser Coord or (file, line, col))."""
        if isinstance(coord, tuple):
            file, line, col = coord
        elif coord is not None:
            file, line, col = coord.file or self.path, coord.line, coord.column or 1
        else:
            file, line, col = self.path, 0, 0
        if column is not None:
            col = column
        lines = self.sources.get(file, [])
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        return Diagnostic(sev, msg, file, line, col, text)


def preprocess(path: str, defines=(), includes=()) -> str:
    """``cc -E`` of the program, with line markers (the user's coordinates survive)."""
    cmd = cc().split() + ["-E", "-std=gnu99", *(f"-D{d}" for d in defines), *(f"-I{i}" for i in includes), path]
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise MnaccError([Diagnostic("error", f"preprocessing failed: {e}", path, 0, 0)]) from None
    if res.returncode != 0:
        raise MnaccError(compiler_diagnostics(res.stderr, path, "the C preprocessor failed"))
    return res.stdout


_CC_DIAG = re.compile(r"^(.+?):(\d+):(\d+): (?:fatal )?(error|warning): (.*)$", re.M)


def compiler_diagnostics(stderr: str, path: str, what: str) -> list:
    """The C compiler's ``file:line:col: error: ...`` lines as located diagnostics (with the source
    line quoted); its whole output at line 0 when it names no place."""
    out = []
    for m in _CC_DIAG.finditer(stderr):
        file, line, col, sev, msg = m.group(1), int(m.group(2)), int(m.group(3)), m.group(4), m.group(5)
        text = ""
        try:
            with open(file, encoding="utf-8", errors="replace") as f:
                lines = f.read().split("\n")
            text = lines[line - 1] if 0 < line <= len(lines) else ""
        except OSError:
            pass
        out.append(Diagnostic(sev, msg, file, line, col, text))
    if not any(d.severity == "error" for d in out):
        out.append(Diagnostic("error", f"{what}:\n" + stderr.strip()[:4000], path, 0, 0))
    return out


def typedef_names(chunk: str) -> list[str]:
    """The names a stretch of (system header) C declares with typedef."""
    names = []
    text = _ATTR.sub(" ", chunk)
    for m in re.finditer(r"\btypedef\b", text):
        depth, i = 0, m.end()
        while i < len(text):                        # to the ';' that ends the typedef
            ch = text[i]
            if ch in "({[":
                depth += 1
            elif ch in ")}]":
                depth -= 1
            elif ch == ";" and depth == 0:
                break
            i += 1
        decl = text[m.end():i]
        body_end = decl.rfind("}")
        declarators = decl[body_end + 1:] if body_end >= 0 else decl
        for part in _split_top(declarators):
            fp = re.search(r"\(\s*\*\s*(\w+)\s*\)", part)
            if fp:
                names.append(fp.group(1))
                continue
            part = re.sub(r"\[[^\]]*\]", "", part)
            ids = re.findall(r"[A-Za-z_]\w*", part)
            if ids:
                names.append(ids[-1])
    return names


def _split_top(text: str) -> list[str]:
    out, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(text[start:i])
            start = i + 1
    out.append(text[start:])
    return out


def strip_system(pre: str, path: str) -> tuple[str, list[str]]:
    """Preprocessed text without the system headers' lines, and the typedef names those declared.

    A system macro expanded in the user's file (NULL) is marked as system code too, but named
    by the user's file: it stays."""
    keep, system, in_system = [], [], False
    for line in pre.split("\n"):
        m = _MARKER.match(line)
        if m:
            in_system = "3" in m.group(3).split() and m.group(2) != path
            keep.append(line)
            continue
        if in_system:
            system.append(line)
            line = ""          # keeps the line count the markers rely on
        keep.append(line)
    return "\n".join(keep), typedef_names("\n".join(system))


def load(path: str, defines=(), includes=()) -> Program:
    """Preprocess and parse the program at path; MnaccError with a located message on a syntax error."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError as e:
        raise MnaccError([Diagnostic("error", f"cannot read {path}: {e.strerror}", path, 0, 0)]) from None
    pre = preprocess(path, defines, includes)
    body, names = strip_system(pre, path)
    names = sorted(set(names))
    prelude = "".join(f"typedef {KNOWN_TYPEDEFS.get(n, 'int')} {n};\n" for n in names)
    sources = {path: text.split("\n")}
    prog = Program(path, text, None, sources, {n for n in names if n not in KNOWN_TYPEDEFS})
    for file in {m.group(2) for m in map(_MARKER.match, body.split("\n")) if m}:
        if file not in sources and os.path.isfile(file):
            with open(file, encoding="utf-8", errors="replace") as f:
                sources[file] = f.read().split("\n")
    try:
        prog.ast = GnuCParser().parse(prelude + body, path)
    except Exception as e:   # pycparser's ParseError: "file:line:col: msg"
        m = re.match(r"(.*?):(\d+):(\d+): (.*)", str(e), re.S)
        if m:
            raise MnaccError([prog.diag((m.group(1), int(m.group(2)), int(m.group(3))),
                                        f"syntax error {m.group(4)}".strip())]) from None
        raise MnaccError([prog.diag(None, f"syntax error: {e}")]) from None
    return prog
