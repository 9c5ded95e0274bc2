"""The compiled-program cache on disk (modelled on PyOpenCL's cache.py), which must never run
or trust what someone else put there.

Key: SHA-256 of the source, the build options, the device's ``cache_key``,
the translator's ``__version__`` and a hash of its and the emulator's files
(so a changed compiler or ISA in a development tree never reuses stale
entries; computed once per process), the binary format version, and the
contents of every file the source ``#include``s with quotes or angle
brackets found in the ``-I`` directories or the working directory
(followed recursively, read as the preprocessor reads them).  Value: the
program binary (mncl/binary.py) in ``<key>.mnclbin`` and, when the device
produced it, its object code in ``<key>.o`` (the CPU device: native code;
the emulator device: its kernels compiled by the SIMD backend), under
``platformdirs.user_cache_dir("mncl")/programs-v2``.

Threat model.  An entry is code: the CPU device JIT-runs its IR or loads its
native object code, the emulator device runs its kernels.  The adversary is
anyone other than the user (another local account, a file copied in from
elsewhere, a damaged disk) who can put files in or next to the cache
directory; a process running as the user can already do anything the user
can, and is out of scope.  Hence:

- the directory is created 0700 and used only if it is owned by the user and
  not writable by group or others (a symbolic link to it must be the user's
  or root's); otherwise a one-line ``CacheWarning`` says why and the build
  goes on without the cache;
- every file is opened relative to the checked directory's descriptor with
  O_NOFOLLOW, and must be a regular file owned by the user, not writable by
  group or others, of bounded size;
- every file carries an HMAC-SHA-256 of its kind, its key and its bytes,
  keyed by ``secret`` (32 random bytes, 0600, made on first use in the
  directory).  An entry planted or copied from another cache, swapped
  between keys, truncated or damaged fails it, is deleted and rebuilt;
- entries are written to unpredictable names (``.<key>.<pid>.<random>.tmp``,
  O_CREAT|O_EXCL|O_NOFOLLOW, 0600) and renamed into place atomically.

Copying a whole cache directory (its ``secret`` included) copies that trust:
restore one only from a source as trusted as the user.  The CPU device also
refuses IR that declares functions outside the runtime's set or holds inline
assembly (mncl/cpu.py), but that is a second line, not the boundary: IR can
reach any address, so the integrity check is what keeps planted code out.

There is no lock.  Writers never need to exclude each other: two writers of
one key write equivalent entries and the last rename wins, readers see a
whole old or a whole new file, and nothing a killed writer leaves behind can
block anyone.  Its temporary file is removed by the next store (at once if
its process is gone, else after ``STALE_TMP_S``).

``MNCL_CACHE=0`` disables the cache; ``MNCL_CACHE=require`` makes a miss an
error (for CI); ``MNCL_CACHE_DIR`` moves it.
"""
from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
import stat
import sys
import time
import warnings

from .binary import FORMAT_VERSION, translator_version

_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)

MAGIC = b"MNCL-CACHE 2\n"
MAX_ENTRY_BYTES = 512 << 20     # a file bigger than this is not one of ours
STALE_TMP_S = 600               # a temporary file this old belongs to a writer that died
SECRET = "secret"
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
_WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
# temporary files: ours (.<name>.<pid>.<16 hex>.tmp), and format 1's (<key>.mnclbin.<pid>.tmp)
_TMP = re.compile(r"^(?:\..+\.(\d+)\.[0-9a-f]{16}|[0-9a-f]{64}\.(?:mnclbin|o)\.(\d+))\.tmp$")


class CacheWarning(UserWarning):
    """The program cache (or one entry of it) was not used, and why; the build went on without it."""


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
        d = os.path.join(platformdirs.user_cache_dir("mncl"), "programs-v2")
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
    from translator.sourcefile import IncludeRefused, read_include
    for name in _INCLUDE.findall(source):
        for d in dirs:
            path = os.path.join(d, name)
            try:
                real = os.path.realpath(path)
                if real in seen:
                    break
                text = read_include(path)
            except (FileNotFoundError, NotADirectoryError):
                continue
            except (IncludeRefused, OSError) as e:   # the build reports it; the key only records it
                out.append((name, f"unreadable: {e}"))
                break
            seen.add(real)
            out.append((name, hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()))
            _dependencies(text, dirs, seen, out)
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


# -- the directory ----------------------------------------------------------------------------
class _Refused(Exception):
    """The directory or an entry is not trusted; the message says why."""


def _warn(message: str):
    """Warn at the user's call (the first frame outside mncl), once per message and place."""
    level, f = 2, sys._getframe(1)
    while f is not None and f.f_globals.get("__name__", "").startswith("mncl."):
        level, f = level + 1, f.f_back
    warnings.warn(f"mncl: {message}", CacheWarning, stacklevel=level)


def _check_owned(st, what: str):
    """Owned by this user and not writable by group or others, or _Refused."""
    uid = os.geteuid()
    if st.st_uid != uid:
        raise _Refused(f"{what} is owned by uid {st.st_uid}, not by you (uid {uid})")
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise _Refused(f"{what} is writable by group or others (mode {stat.S_IMODE(st.st_mode):04o})")


class _Dir:
    """The cache directory, opened and checked once per use; files are reached through its descriptor."""

    def __init__(self, path: str, create: bool):
        self.path = path
        if create:
            parent = os.path.dirname(os.path.abspath(path))
            os.makedirs(parent, exist_ok=True)
            try:
                os.mkdir(path, 0o700)
            except FileExistsError:
                pass
        lst = os.lstat(path)          # FileNotFoundError: no cache yet (a miss)
        if stat.S_ISLNK(lst.st_mode) and lst.st_uid not in (os.geteuid(), 0):
            raise _Refused(f"the cache directory {path} is a symbolic link owned by uid {lst.st_uid}")
        self.fd = os.open(path, _DIR_FLAGS)
        try:
            st = os.fstat(self.fd)
            if not stat.S_ISDIR(st.st_mode):
                raise _Refused(f"the cache directory {path} is not a directory")
            _check_owned(st, f"the cache directory {path}")
            self.secret = self._secret(create)
        except BaseException:
            os.close(self.fd)
            raise

    def close(self):
        os.close(self.fd)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def read(self, name: str) -> bytes | None:
        """A trusted file's bytes, None if absent, or _Refused."""
        try:
            fd = os.open(name, _READ_FLAGS, dir_fd=self.fd)
        except FileNotFoundError:
            return None
        except OSError as e:          # ELOOP: a symbolic link
            raise _Refused(f"{os.path.join(self.path, name)} cannot be opened safely ({e.strerror})") from None
        try:
            st = os.fstat(fd)
            where = os.path.join(self.path, name)
            if not stat.S_ISREG(st.st_mode):
                raise _Refused(f"{where} is not a regular file")
            _check_owned(st, where)
            if st.st_size > MAX_ENTRY_BYTES:
                raise _Refused(f"{where} has {st.st_size} bytes, more than an entry may have")
            chunks, total = [], 0
            while total <= MAX_ENTRY_BYTES:
                b = os.read(fd, 1 << 22)
                if not b:
                    break
                chunks.append(b)
                total += len(b)
            return b"".join(chunks)
        finally:
            os.close(fd)

    def write(self, name: str, data: bytes):
        """Write to an unpredictable temporary name, then rename over ``name`` atomically."""
        tmp = f".{name}.{os.getpid()}.{secrets.token_hex(8)}.tmp"
        fd = os.open(tmp, _WRITE_FLAGS, 0o600, dir_fd=self.fd)
        try:
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
            finally:
                os.close(fd)
            os.rename(tmp, name, src_dir_fd=self.fd, dst_dir_fd=self.fd)
        except BaseException:
            self.unlink(tmp)
            raise

    def unlink(self, name: str):
        try:
            os.unlink(name, dir_fd=self.fd)
        except OSError:
            pass

    def _secret(self, create: bool) -> bytes | None:
        data = self.read(SECRET)
        if data is None and create:
            try:
                self.write_new(SECRET, secrets.token_bytes(32))
            except FileExistsError:      # another process made it first: use theirs
                pass
            data = self.read(SECRET)
        if data is None:
            return None
        st = os.stat(SECRET, dir_fd=self.fd, follow_symlinks=False)
        if stat.S_IMODE(st.st_mode) & 0o077 or len(data) != 32:
            raise _Refused(f"the cache key file {os.path.join(self.path, SECRET)} is readable by others "
                           f"or damaged (mode {stat.S_IMODE(st.st_mode):04o}, {len(data)} bytes); delete it")
        return data

    def write_new(self, name: str, data: bytes):
        """Like write, but never replaces an existing ``name`` (FileExistsError)."""
        tmp = f".{name}.{os.getpid()}.{secrets.token_hex(8)}.tmp"
        fd = os.open(tmp, _WRITE_FLAGS, 0o600, dir_fd=self.fd)
        try:
            try:
                os.write(fd, data)
            finally:
                os.close(fd)
            try:
                os.link(tmp, name, src_dir_fd=self.fd, dst_dir_fd=self.fd, follow_symlinks=False)
            except FileExistsError:
                raise
            except OSError:           # a file system without hard links: rename (a lost race there
                if os.path.lexists(os.path.join(self.path, name)):  # only costs the loser's entries)
                    raise FileExistsError(name) from None
                os.rename(tmp, name, src_dir_fd=self.fd, dst_dir_fd=self.fd)
        finally:
            self.unlink(tmp)

    def remove_stale_tmps(self):
        """Temporary files of writers that died (their process is gone, or they are too old)."""
        now = time.time()
        for name in os.listdir(self.fd):
            m = _TMP.match(name)
            if not m:
                continue
            try:
                st = os.stat(name, dir_fd=self.fd, follow_symlinks=False)
            except OSError:
                continue
            pid = int(m.group(1) or m.group(2))
            if st.st_uid == os.geteuid() and (now - st.st_mtime > STALE_TMP_S or not _alive(pid)):
                self.unlink(name)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True
    return True


def _open(directory: str | None, create: bool) -> _Dir | None:
    path = directory or cache_dir()
    try:
        return _Dir(path, create)
    except FileNotFoundError:
        return None
    except _Refused as e:
        _warn(f"{e}; building without the cache (fix: chmod 700 / chown it, or set MNCL_CACHE_DIR)")
    except OSError as e:
        if create:
            _warn(f"the cache directory {path} cannot be used ({e.strerror or e}); building without the cache")
    return None


# -- entries ----------------------------------------------------------------------------------
def _mac(secret: bytes, kind: str, k: str, payload: bytes) -> bytes:
    """HMAC-SHA-256 (OpenSSL's SHA-256 uses the CPU's SHA instructions: about as fast as the
    unkeyed checksum it replaces)."""
    h = hmac.new(secret, f"{kind}\0{k}\0".encode(), hashlib.sha256)
    h.update(payload)
    return h.digest()


def _seal(secret: bytes, kind: str, k: str, payload: bytes) -> bytes:
    return MAGIC + _mac(secret, kind, k, payload) + payload


def _unseal(d: _Dir, kind: str, k: str, data: bytes) -> bytes | None:
    """The payload, or None (and the file deleted) if it is not an intact entry made here for k."""
    if data.startswith(MAGIC) and d.secret is not None:
        mac, payload = data[len(MAGIC):len(MAGIC) + 32], data[len(MAGIC) + 32:]
        if hmac.compare_digest(mac, _mac(d.secret, kind, k, payload)):
            return payload
    _warn(f"the cache entry {os.path.join(d.path, k + kind)} failed its integrity check (damaged, "
          f"planted, or from another cache); it is deleted and rebuilt")
    d.unlink(k + kind)
    return None


def load(k: str, directory: str | None = None):
    """(binary bytes, object code bytes or None) for key k, or None on a miss."""
    d = _open(directory, create=False)
    if d is None:
        return None
    with d:
        try:
            data = d.read(k + ".mnclbin")
            binary = None if data is None else _unseal(d, ".mnclbin", k, data)
            if binary is None:
                return None
            data = d.read(k + ".o")
            return binary, None if data is None else _unseal(d, ".o", k, data)
        except _Refused as e:
            _warn(f"{e}: the entry is not used")
            return None
        except OSError:
            return None


def discard(k: str, directory: str | None = None):
    d = _open(directory, create=False)
    if d is not None:
        with d:
            for kind in (".mnclbin", ".o"):
                d.unlink(k + kind)


def store(k: str, binary: bytes, obj: bytes | None, directory: str | None = None):
    """Write an entry.  A cache that cannot be written is skipped (it is only a cache), with one
    warning if the directory itself is unusable."""
    d = _open(directory, create=True)
    if d is None:
        return
    with d:
        try:
            d.remove_stale_tmps()
            if d.secret is None:
                return
            if obj is None:
                d.unlink(k + ".o")
            else:
                d.write(k + ".o", _seal(d.secret, ".o", k, obj))
            d.write(k + ".mnclbin", _seal(d.secret, ".mnclbin", k, binary))
        except OSError:
            pass
