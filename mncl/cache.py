"""The compiled-program cache on disk (modelled on PyOpenCL's cache.py).

Key: SHA-256 of the source, the build options, the device's ``cache_key``,
the translator's ``__version__`` and a hash of its and the emulator's files
(so a changed compiler or ISA in a development tree never reuses stale
entries; computed once per process), the binary format version, and the
contents of every file the source ``#include``s with quotes or angle
brackets found in the ``-I`` directories or the working directory
(followed recursively).  Value: the program binary (mncl/binary.py) and,
when the device produced it, its object code (the CPU device: native code;
the emulator device: its kernels compiled by the SIMD backend), under
``platformdirs.user_cache_dir("mncl")/programs-v1``.  Writers hold a lock
file and replace entries atomically; a corrupt entry is removed and rebuilt.

``MNCL_CACHE=0`` disables the cache; ``MNCL_CACHE=require`` makes a miss an
error (for CI); ``MNCL_CACHE_DIR`` moves it.
"""
from __future__ import annotations

import hashlib
import os
import re
import time

from .binary import FORMAT_VERSION, translator_version

_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)


def mode() -> str:
    """'on', 'off' or 'require', from MNCL_CACHE."""
    v = os.environ.get("MNCL_CACHE", "1").strip().lower()
    if v in ("0", "off", "no", "false"):
        return "off"
    if v == "require":
        return "require"
    return "on"


def cache_dir() -> str:
    d = os.environ.get("MNCL_CACHE_DIR")
    if not d:
        import platformdirs
        d = os.path.join(platformdirs.user_cache_dir("mncl"), "programs-v1")
    return d


def include_dirs(options) -> list:
    dirs = []
    it = iter(options)
    for o in it:
        if o == "-I":
            dirs.append(next(it, ""))
        elif o.startswith("-I"):
            dirs.append(o[2:])
    return dirs + [os.getcwd()]


def _dependencies(source: str, dirs: list, seen: set, out: list):
    for name in _INCLUDE.findall(source):
        for d in dirs:
            path = os.path.join(d, name)
            if os.path.isfile(path):
                real = os.path.realpath(path)
                if real not in seen:
                    seen.add(real)
                    with open(real, "rb") as f:
                        data = f.read()
                    out.append((name, hashlib.sha256(data).hexdigest()))
                    _dependencies(data.decode("utf-8", "replace"), dirs, seen, out)
                break


_fingerprint: list = []


def compiler_fingerprint() -> str:
    """translator.__version__ plus a hash of the translator's and the emulator's .py and .h files
    (the emulator's ISA table shapes the generated code, and the emulator device caches that code)."""
    if not _fingerprint:
        h = hashlib.sha256(translator_version().encode())
        for package in ("translator", "emulator"):
            try:
                root = os.path.dirname(__import__(package).__file__ or "")
            except ImportError:
                root = ""
            if not root:
                continue
            h.update(package.encode())
            for dirpath, dirnames, files in os.walk(root):
                dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
                for name in sorted(files):
                    if name.endswith((".py", ".h")):
                        path = os.path.join(dirpath, name)
                        h.update(os.path.relpath(path, root).encode())
                        with open(path, "rb") as f:
                            h.update(f.read())
        _fingerprint.append(h.hexdigest())
    return _fingerprint[0]


def key(source: str, options: tuple, device_key: str) -> str:
    h = hashlib.sha256()
    deps = []
    if "#" in source and "include" in source:
        _dependencies(source, include_dirs(options), set(), deps)
    for part in (str(FORMAT_VERSION), compiler_fingerprint(), device_key, "\0".join(options),
                 repr(deps), source):
        h.update(part.encode("utf-8", "surrogateescape"))
        h.update(b"\0\1")
    return h.hexdigest()


class _Lock:
    """An exclusive lock file next to the entries; a lock older than 30 s is taken as stale."""

    def __init__(self, directory: str):
        self.path = os.path.join(directory, "lock")

    def __enter__(self):
        deadline = time.monotonic() + 10
        while True:
            try:
                self.fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
                return self
            except FileExistsError:
                try:
                    if time.time() - os.path.getmtime(self.path) > 30:
                        os.unlink(self.path)
                        continue
                except OSError:
                    continue
                if time.monotonic() > deadline:
                    raise TimeoutError(f"the cache lock {self.path} is held by another process")
                time.sleep(0.01)

    def __exit__(self, *exc):
        os.close(self.fd)
        try:
            os.unlink(self.path)
        except OSError:
            pass


def _paths(k: str, directory: str | None):
    d = directory or cache_dir()
    return d, os.path.join(d, k + ".mnclbin"), os.path.join(d, k + ".o")


def load(k: str, directory: str | None = None):
    """(binary bytes, object code bytes or None) for key k, or None on a miss."""
    _, bpath, opath = _paths(k, directory)
    try:
        with open(bpath, "rb") as f:
            data = f.read()
    except OSError:
        return None
    obj = None
    try:
        with open(opath, "rb") as f:
            obj = f.read()
    except OSError:
        pass
    return data, obj


def discard(k: str, directory: str | None = None):
    for p in _paths(k, directory)[1:]:
        try:
            os.unlink(p)
        except OSError:
            pass


def store(k: str, binary: bytes, obj: bytes | None, directory: str | None = None):
    """Write an entry; a cache that cannot be written is skipped silently (it is only a cache)."""
    d, bpath, opath = _paths(k, directory)
    try:
        os.makedirs(d, exist_ok=True)
        with _Lock(d):
            for path, data in ((bpath, binary), (opath, obj)):
                if data is None:
                    continue
                tmp = f"{path}.{os.getpid()}.tmp"
                with open(tmp, "wb") as f:
                    f.write(data)
                os.replace(tmp, path)
    except (OSError, TimeoutError):
        pass
