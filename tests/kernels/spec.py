"""Launch specs for the kernel corpus: what each golden case is, as data.

A case names a ``.cl`` file in this directory, the kernel to run, the NDRange,
the arguments and a numpy reference.  ``cases.py`` declares the cases with the
``@case`` decorator; ``tests/test_kernel_corpus.py`` runs every one of them the
same way on PyOpenCL (PoCL) and on mncl, so adding a kernel needs a ``.cl``
file and a reference function, never new test code.

Arguments, in the kernel's parameter order:

* ``In(name, dtype, shape, low, high)``  a read-only buffer filled from a
  generator seeded by the case name (integers uniform in [low, high], floats
  uniform in [low, high)); ``gen=`` takes ``rng -> array`` for special data.
* ``Out(name, dtype, shape, fill=0)``     a write-only buffer, initialised to
  ``fill`` (so elements a guarded kernel must leave alone are checked too);
  ``fill=None`` allocates it uninitialised (the kernel writes all of it).
* ``InOut(...)``                           like ``In`` but read-write and checked.
* ``Scalar(name, dtype, value)``           a by-value argument (a list value: a vector such as float4).
* ``Local(name, nbytes)``                  a ``LocalMemory(nbytes)`` argument.
* ``Same(name, of)``                       the buffer of the earlier argument ``of`` again (aliasing).

The reference is called with every buffer's initial contents (fresh copies)
and every scalar's value as keyword arguments and returns ``{name: expected}``
for each ``Out``/``InOut`` (a numpy masked array leaves its masked elements
unchecked, for bytes the language leaves undefined).  Integer results must match exactly; floating
point ones within the case's ``rtol``/``atol``.
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

KERNEL_DIR = Path(__file__).resolve().parent


class Given:
    """A ``gen=`` that returns fixed data (picklable, unlike a lambda)."""

    def __init__(self, array):
        self.array = array

    def __call__(self, rng):
        return self.array


@dataclass(frozen=True)
class In:
    name: str
    dtype: object
    shape: tuple | int
    low: float = 0
    high: float = 100
    gen: Callable | None = None
    writable = False
    checked = False

    def initial(self, rng: np.random.Generator) -> np.ndarray:
        dtype = np.dtype(self.dtype)
        shape = (self.shape,) if isinstance(self.shape, int) else tuple(self.shape)
        if self.gen is not None:
            data = np.asarray(self.gen(rng))
            if data.dtype != dtype or data.shape != shape:
                raise ValueError(f"{self.name}: gen gave {data.dtype}{data.shape}, spec says {dtype}{shape}")
            return np.ascontiguousarray(data)
        if dtype.kind in "iu":
            return rng.integers(int(self.low), int(self.high), size=shape, dtype=dtype, endpoint=True)
        if dtype.kind == "f":
            return rng.uniform(self.low, self.high, size=shape).astype(dtype)
        raise ValueError(f"{self.name}: dtype {dtype} needs gen=")


@dataclass(frozen=True)
class InOut(In):
    writable = True
    checked = True


@dataclass(frozen=True)
class Out:
    name: str
    dtype: object
    shape: tuple | int
    fill: object = 0
    writable = True
    checked = True

    def initial(self, rng: np.random.Generator) -> np.ndarray:
        shape = (self.shape,) if isinstance(self.shape, int) else tuple(self.shape)
        dtype = np.dtype(self.dtype)
        if self.fill is None:
            return np.zeros(shape, dtype)          # only the reference sees it; the buffer stays uninitialised
        if dtype.names:
            return np.zeros(shape, dtype)
        return np.full(shape, self.fill, dtype)


@dataclass(frozen=True)
class Scalar:
    name: str
    dtype: object
    value: object

    def host_value(self):
        if isinstance(self.value, (list, tuple)):          # a vector (float4 ...): its bytes, as PyOpenCL takes them
            return np.array(self.value, np.dtype(self.dtype))
        return np.dtype(self.dtype).type(self.value)


@dataclass(frozen=True)
class Local:
    name: str
    nbytes: int


@dataclass(frozen=True)
class Same:
    name: str
    of: str


@dataclass(frozen=True)
class Case:
    name: str
    file: str
    kernel: str
    global_size: tuple
    local_size: tuple | None
    args: tuple
    reference: Callable
    global_offset: tuple | None = None
    options: str = ""
    rtol: float = 0.0
    atol: float = 0.0
    needs_fp64: bool = False
    signed_zeros: bool = False         # floating-point zeros must also agree in sign
    xfail_pocl: str | None = None      # a known PoCL bug this case shows: PoCL is xfail, mncl not compared with it
    doc: str = ""
    text: str | None = None            # the source itself, for generated kernels (then file is a label)

    @property
    def source(self) -> str:
        return self.text if self.text is not None else (KERNEL_DIR / self.file).read_text()

    def seed(self) -> int:
        return zlib.crc32(self.name.encode())

    def initial_buffers(self) -> dict:
        """name -> initial host array for every buffer argument (deterministic)."""
        rng = np.random.default_rng(self.seed())
        return {a.name: a.initial(rng) for a in self.args if isinstance(a, (In, Out))}

    def expected(self, initial: dict, flush_float_denormals: bool = False) -> dict:
        """The reference's outputs; flush_float_denormals: computed from inputs whose float32
        subnormals are zeros of their sign, as a device without CL_FP_DENORM may see them."""
        kwargs = {k: v.copy() for k, v in initial.items()}
        kwargs.update({a.name: a.host_value() for a in self.args if isinstance(a, Scalar)})
        if flush_float_denormals:
            kwargs = {k: flush_denormals(v) for k, v in kwargs.items()}
        result = self.reference(**kwargs)
        checked = {a.name for a in self.args if getattr(a, "checked", False)}
        if set(result) != checked:
            raise ValueError(f"case {self.name}: reference returned {sorted(result)}, outputs are {sorted(checked)}")
        return {k: v if isinstance(v, np.ma.MaskedArray) else np.asarray(v) for k, v in result.items()}


def flush_denormals(x):
    """x with its float32 subnormals (also in float32 fields of records) made zeros of their sign."""
    x = np.array(x, copy=True) if isinstance(x, np.ndarray) else x
    if isinstance(x, np.ndarray) and x.dtype.names:
        for name in x.dtype.names:
            x[name] = flush_denormals(x[name])
        return x
    if np.asarray(x).dtype != np.float32:
        return x
    a = np.array(x, np.float32)
    tiny = np.abs(a) < np.finfo(np.float32).tiny
    a[tiny] = np.copysign(np.float32(0), a[tiny])
    return a if isinstance(x, np.ndarray) else np.float32(a)


CASES: dict[str, Case] = {}


def case(file: str, kernel: str | None = None, *, global_size, local_size=None, args, **kw):
    """Register the decorated numpy reference as a corpus case named after the function."""

    def register(reference: Callable) -> Callable:
        name = kw.pop("name", reference.__name__)
        if name in CASES:
            raise ValueError(f"duplicate corpus case {name}")
        gs = (global_size,) if isinstance(global_size, int) else tuple(global_size)
        ls = (local_size,) if isinstance(local_size, int) else (tuple(local_size) if local_size else None)
        CASES[name] = Case(name=name, file=file, kernel=kernel or Path(file).stem, global_size=gs,
                           local_size=ls, args=tuple(args), reference=reference,
                           doc=(reference.__doc__ or "").strip(), **kw)
        return reference

    return register


def xfail_path(device: str) -> Path:
    return KERNEL_DIR / f"xfail-mncl-{device}.txt"


def read_xfails(device: str) -> dict:
    """test id -> the one-line error mncl's ``device`` gives today (the driver marks these strict xfail).

    The file has one ``test_id: reason`` per line; ``#`` starts a comment line; no file, no xfails.
    """
    path = xfail_path(device)
    if not path.exists():
        return {}
    table = {}
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        test_id, sep, reason = line.partition(": ")
        if not sep or not reason.strip():
            raise ValueError(f"{path.name}:{n}: expected 'test_id: reason', got {line!r}")
        table[test_id.strip()] = reason.strip()
    return table


def write_xfails(device: str, table: dict) -> Path:
    path = xfail_path(device)
    head = (f"# Corpus tests the mncl '{device}' device fails today, with the error each gives.\n"
            "# Written by tests/kernels/refresh_xfail.py; the driver marks each one strict xfail.\n")
    path.write_text(head + "".join(f"{k}: {' '.join(v.split())}\n" for k, v in sorted(table.items())))
    return path
