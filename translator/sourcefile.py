"""Reading a file that ``#include`` names: a regular text file of bounded size, never a device.

An include must not become a way to read the host (``/proc/self/environ``
into the build log), to hang the build (a FIFO, ``/dev/zero``) or to exhaust
its memory (a huge file).  So a file is stat'ed before it is opened and must
be a regular file outside ``/proc``, ``/sys`` and ``/dev``, at most
``MAX_INCLUDE_BYTES``, with no NUL byte (not a text file); it is opened with
O_NONBLOCK (should it be swapped for a FIFO between the stat and the open)
and checked again on the open descriptor.

``MNCL_INCLUDE_ROOTS`` (directories separated by ``os.pathsep``), when set,
confines includes for a build service: an absolute name is refused, and
every file included must resolve (symbolic links followed) inside one of
those directories or the device header's directory.  Set and empty, only
the device header (``mncl.h``) can be included.
"""
from __future__ import annotations

import os
import stat

MAX_INCLUDE_BYTES = 4 << 20          # one included file; the main source is the caller's string
_PSEUDO_ROOTS = ("/proc", "/sys", "/dev")


class IncludeRefused(Exception):
    """The file exists but may not be included; the message says why (it never quotes the file)."""


def include_roots() -> list | None:
    """The directories MNCL_INCLUDE_ROOTS confines includes to, or None when it is unset."""
    v = os.environ.get("MNCL_INCLUDE_ROOTS")
    if v is None:
        return None
    return [os.path.realpath(d) for d in v.split(os.pathsep) if d]


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def check_name(name: str):
    """Refuse an include name before any search, when MNCL_INCLUDE_ROOTS is set."""
    if include_roots() is not None and os.path.isabs(name):
        raise IncludeRefused(f"'{name}': absolute include paths are not allowed (MNCL_INCLUDE_ROOTS is set)")


def read_include(path: str, trusted_dirs=()) -> str:
    """The text of ``path``.  FileNotFoundError / NotADirectoryError if it does not exist (the search
    goes on); IncludeRefused if it exists but may not be included.  ``trusted_dirs`` are always
    allowed under MNCL_INCLUDE_ROOTS (the device header's directory)."""
    st = os.stat(path)                   # before opening: opening a device can block or act
    real = os.path.realpath(path)
    shown = os.path.basename(path) if len(path) > 200 else path
    roots = include_roots()
    if roots is not None and not any(_inside(real, os.path.realpath(r)) for r in (*roots, *trusted_dirs)):
        raise IncludeRefused(f"'{shown}': it is outside the directories MNCL_INCLUDE_ROOTS allows")
    pseudo = [r for r in _PSEUDO_ROOTS if _inside(real, r)]
    if pseudo:
        raise IncludeRefused(f"'{shown}': it is under {pseudo[0]}, not a source file")
    if not stat.S_ISREG(st.st_mode):
        raise IncludeRefused(f"'{shown}': it is not a regular file ({_kind(st.st_mode)})")
    if st.st_size > MAX_INCLUDE_BYTES:
        raise IncludeRefused(f"'{shown}': it has {st.st_size} bytes; an included file may have at most "
                             f"{MAX_INCLUDE_BYTES} bytes")
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0))
    try:
        st2 = os.fstat(fd)
        if not stat.S_ISREG(st2.st_mode) or (st2.st_dev, st2.st_ino) != (st.st_dev, st.st_ino):
            raise IncludeRefused(f"'{shown}': it changed while it was being opened")
        chunks, total = [], 0
        while total <= MAX_INCLUDE_BYTES:
            b = os.read(fd, min(1 << 20, MAX_INCLUDE_BYTES + 1 - total))
            if not b:
                break
            chunks.append(b)
            total += len(b)
    finally:
        os.close(fd)
    if total > MAX_INCLUDE_BYTES:
        raise IncludeRefused(f"'{shown}': it grew past {MAX_INCLUDE_BYTES} bytes while it was read")
    data = b"".join(chunks)
    if b"\0" in data:
        raise IncludeRefused(f"'{shown}': it contains NUL bytes: it is not a text file")
    text = data.decode("utf-8", "replace")
    return text[1:] if text.startswith("\ufeff") else text


def _kind(mode: int) -> str:
    for test, what in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return what
    return "not a file"
