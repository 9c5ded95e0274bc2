"""Reading the files the command-line tools are given: regular files only, under a size cap.

A path on a command line may name ``/dev/zero``, a FIFO, a terminal or a
directory; read whole, the first eats memory without end and the others hang
(``mncl profile /dev/zero`` grew to 23.5 GB).  mncl-emu, mncl-cc and mncl read
their inputs with ``read_input``, which opens without blocking, refuses what is
not a regular file and reads at most the cap (a file may grow while it is
read).  Standard input, given as ``-``, is read through ``read_stream`` under
the same cap.  The caps are documented with each tool.
"""
from __future__ import annotations

import os
import stat

MAX_ASM_BYTES = 64 << 20         # an assembly (.vsm) file or an .mnb program: 64 MiB


class InputError(Exception):
    """An input that cannot be read; the message names the file and says why."""


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def _too_big(name: str, size: str, limit: int, what: str) -> InputError:
    return InputError(f"{name}: {size} is over the {limit}-byte limit for {what}")


def read_input(path, limit: int, what: str = "an input file") -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them, else InputError."""
    name = os.fspath(path)
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise InputError(f"{name}: {e.strerror or e}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise InputError(f"{name}: {_kind(st.st_mode)}, not a regular file: {what} must be a file")
        if st.st_size > limit:
            raise _too_big(name, f"{st.st_size} bytes", limit, what)
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(limit + 1)
    except OSError as e:
        raise InputError(f"{name}: {e.strerror or e}") from None
    finally:
        os.close(fd)
    if len(data) > limit:
        raise _too_big(name, "the file (it grew while read)", limit, what)
    return data


def read_stream(f, limit: int, name: str = "<stdin>", what: str = "an input") -> bytes:
    """At most ``limit`` bytes of a binary stream, else InputError (a pipe has no size to ask first)."""
    data = f.read(limit + 1)
    if len(data) > limit:
        raise _too_big(name, f"more than {limit} bytes", limit, what)
    return data
