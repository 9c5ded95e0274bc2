"""The program container ``.mnb``: compiled kernels in one versioned, self-describing file.

Takes the ``KernelBinary`` objects ``translator.backend.compile_kernel`` gives
(plus what they were built from) and gives a file any later step can load
without the compiler: ``write_mnb(path, binaries, **meta)`` and
``read_mnb(path) -> (meta, {name: KernelBinary})``.

The file is one UTF-8 JSON object, written with ``format`` as its first key so
that a reader can tell an .mnb from any other file by its first bytes::

    {"format": "mnb-1",                  # this layout; a reader refuses any other value
     "compiler": "mncl-cc 0.1.0",        # translator version that wrote it
     "machine": "mncore2",               # the machine name the kernels were compiled for
     "machine_description": {...},       # that machine's parameters (emulator.machine.Machine fields)
     "source": "saxpy.cl",               # the source file name as given to the compiler
     "source_sha256": "...",             # hash of the source text (empty if unknown)
     "options": ["-O2", "-DN=4"],        # the build options
     ...                                 # any further metadata the writer passed
     "kernels": {"saxpy": {              # one KernelBinary.to_dict() per kernel, in source order
         "name": "saxpy", "machine": "mncore2", "mode": "1d",
         "asm": "<the VSM program: blocks, .arg line, sequencer>",
         "args": ["argblk", "nwx", ...], # sequencer arguments (.arg), in order
         "params": [{"name": "x", "kind": "global", "type_name": "float", ...}, ...],
         "flops_per_item": 2, "registers": 27}}}

The file ends with a newline after the closing brace.  Writing a regular file
goes through a temporary file and a rename, so an interrupted write never
leaves half a file under the final name (a device or FIFO such as /dev/null
is written directly).  Every read error is an ``MnbError`` whose message names
the file and says what is wrong: not an .mnb at all, another format version,
truncated, or a kernel entry missing fields.
"""
from __future__ import annotations

import dataclasses
import json
import os
import re
import tempfile

from .backend import FORMAT, KernelBinary

_MAGIC_RE = re.compile(rb'\s*\{\s*"format"\s*:')   # how every .mnb starts: a JSON object whose first key is format


_UMASK = os.umask(0o022)         # read once (os.umask can only be read by setting it) ...
os.umask(_UMASK)                 # ... and put back: new files get 0o666 & ~umask, as open() would give


class MnbError(ValueError):
    """A file is not an .mnb this reader can load; the message names the file and the reason."""


def _plain(value):
    """Metadata as JSON-able values (tuples -> lists, dataclasses -> dicts)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _plain(dataclasses.asdict(value))
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def dumps_mnb(binaries, **meta) -> bytes:
    """The bytes of an .mnb holding `binaries` (a list of KernelBinary, or a dict name -> KernelBinary)."""
    from . import __version__
    if isinstance(binaries, dict):
        binaries = list(binaries.values())
    kernels = {}
    for kb in binaries:
        if kb.name in kernels:
            raise ValueError(f"two binaries for kernel '{kb.name}' (an .mnb holds one per kernel)")
        kernels[kb.name] = kb.to_dict()
    machine = meta.pop("machine", None)
    if machine is not None and not isinstance(machine, str):      # an emulator Machine
        meta.setdefault("machine_description", machine)
        machine = machine.name
    if machine is None and binaries:
        machine = binaries[0].machine
    doc = {"format": FORMAT, "compiler": f"mncl-cc {__version__}", "machine": machine or "",
           "machine_description": None, "source": "", "source_sha256": "", "options": []}
    doc.update(_plain(meta))
    doc["format"] = FORMAT
    doc["kernels"] = kernels
    return (json.dumps(doc, indent=1) + "\n").encode()


def write_mnb(path, binaries, **meta) -> None:
    """Write an .mnb file (see the module docstring for the fields); ``path`` '-' is standard output."""
    data = dumps_mnb(binaries, **meta)
    if str(path) == "-":
        import sys
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return
    path = os.path.realpath(os.fspath(path))          # through a symlink, not over it
    if os.path.exists(path) and not os.path.isfile(path):
        # /dev/null, a FIFO, /dev/stdout: write into it; renaming over it would replace the device
        with open(path, "wb") as f:
            f.write(data)
        return
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".mnb-", dir=d)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o666 & ~_UMASK)      # mkstemp makes 0o600; a compiler's output is ordinary
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def loads_mnb(data: bytes, name: str = "<mnb>"):
    """Parse .mnb bytes: (meta, {kernel name: KernelBinary}); `name` is used in error messages."""
    if isinstance(data, str):
        data = data.encode()
    if not data:
        raise MnbError(f"{name}: empty file, not an .mnb program")
    if not _MAGIC_RE.match(data[:256]):
        raise MnbError(f"{name}: not an .mnb program (it does not start with '{{\"format\":')")
    try:
        doc = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise MnbError(f"{name}: corrupt .mnb program: not UTF-8 at byte {e.start}") from None
    except json.JSONDecodeError as e:
        end = data.rstrip()
        if e.pos >= len(end) or not end.endswith(b"}"):
            raise MnbError(f"{name}: truncated .mnb program ({len(data)} bytes; the JSON document ends early)") from None
        raise MnbError(f"{name}: corrupt .mnb program: {e.msg} at line {e.lineno} column {e.colno}") from None
    if not isinstance(doc, dict):
        raise MnbError(f"{name}: not an .mnb program (not a JSON object)")
    fmt = doc.get("format")
    if fmt != FORMAT:
        raise MnbError(f"{name}: .mnb format {fmt!r}; this reader reads {FORMAT!r} "
                       f"(rebuild it with this mncl-cc)")
    kernels_doc = doc.pop("kernels", None)
    if not isinstance(kernels_doc, dict):
        raise MnbError(f"{name}: corrupt .mnb program: no 'kernels' object")
    fields = {f.name: f for f in dataclasses.fields(KernelBinary)}
    required = [n for n, f in fields.items()
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
    kernels = {}
    for kname, kd in kernels_doc.items():
        if not isinstance(kd, dict):
            raise MnbError(f"{name}: corrupt .mnb program: kernel '{kname}' is not an object")
        missing = [n for n in required if n not in kd]
        if missing:
            raise MnbError(f"{name}: corrupt .mnb program: kernel '{kname}' lacks {', '.join(missing)}")
        # fields a later mnb-1 writer may add are ignored, not fatal
        kernels[kname] = KernelBinary.from_dict({k: v for k, v in kd.items() if k in fields})
    return doc, kernels


def read_mnb(path):
    """Read an .mnb file: (meta, {kernel name: KernelBinary}); raises MnbError naming the file."""
    from emulator.inputs import MAX_ASM_BYTES, InputError, read_input
    path = os.fspath(path)
    try:
        data = read_input(path, MAX_ASM_BYTES, "an .mnb program")
    except InputError as e:
        raise MnbError(str(e)) from None
    return loads_mnb(data, path)


__all__ = ["MnbError", "write_mnb", "read_mnb", "dumps_mnb", "loads_mnb", "FORMAT"]
