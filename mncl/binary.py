"""Program binaries: a ``CompiledModule`` serialised as versioned, self-describing bytes.

Format: the magic line ``MNCL-BINARY 1`` then one JSON object with
``format_version``, ``translator_version``, ``filename``, ``options``,
``log``, ``kernels`` (each KernelInfo with its ParamInfo list),
``llvm_ir`` (the optimised IR text), ``restrict_ir`` and ``restrict_kernels`` (the IR with
buffer parameters as if restrict, and the kernels it changes: translator/restrict.py).  ``Program(ctx, devices, binaries)``
loads it without the front end; the disk cache stores the same bytes.
"""
from __future__ import annotations

import json
from dataclasses import asdict, fields

from translator.module import CompiledModule, KernelInfo, ParamInfo

MAGIC = b"MNCL-BINARY 1\n"
FORMAT_VERSION = 1


class BinaryError(ValueError):
    """The bytes are not a program binary this runtime can load (the message says why)."""


def translator_version() -> str:
    try:
        import translator
        return str(getattr(translator, "__version__", "unknown"))
    except ImportError:
        return "unavailable"


def dump_module(module: CompiledModule) -> bytes:
    doc = {
        "format_version": FORMAT_VERSION,
        "translator_version": translator_version(),
        "filename": module.filename,
        "options": list(module.options),
        "log": module.log,
        "kernels": {name: {**asdict(k), "params": [asdict(p) for p in k.params]}
                    for name, k in module.kernels.items()},
        "llvm_ir": module.llvm_ir,
        "task_text": module.task_text,
        "restrict_ir": module.restrict_ir,
        "restrict_kernels": list(module.restrict_kernels),
    }
    return MAGIC + json.dumps(doc).encode()


def load_module(data: bytes) -> CompiledModule:
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise BinaryError(f"a binary must be bytes, not {type(data).__name__}")
    data = bytes(data)
    if not data.startswith(MAGIC):
        raise BinaryError("not an MNCL program binary (missing the 'MNCL-BINARY 1' header)")
    try:
        doc = json.loads(data[len(MAGIC):].decode())
        _expect(doc, dict, "the binary's body")
        if doc.get("format_version") != FORMAT_VERSION:
            raise BinaryError(f"binary format version {doc.get('format_version')!r}; "
                              f"this runtime reads version {FORMAT_VERSION}")
        _expect(doc["kernels"], dict, "'kernels'")
        kernels = {}
        for name, k in doc["kernels"].items():
            _expect(k, dict, f"kernel '{name}'")
            _expect(k.get("params"), list, f"kernel '{name}': 'params'")
            params = tuple(ParamInfo(**_fields(ParamInfo, p, f"kernel '{name}': a parameter"))
                           for p in k["params"])
            for p in params:
                if p.kind not in PARAM_KINDS or p.size <= 0:
                    raise BinaryError(f"corrupt MNCL program binary: kernel '{name}': parameter '{p.name}' has kind {p.kind!r} and "
                                      f"size {p.size}")
            k = _fields(KernelInfo, {**k, "params": []}, f"kernel '{name}'")
            rwg = k.get("reqd_work_group_size")
            if rwg is not None and not (1 <= len(rwg) <= 3 and all(type(x) is int and x > 0 for x in rwg)):
                raise BinaryError(f"corrupt MNCL program binary: kernel '{name}': reqd_work_group_size {rwg!r:.40}")
            if k["name"] != name:
                raise BinaryError(f"corrupt MNCL program binary: kernel '{name}' is named {k['name']!r:.40} inside")
            kernels[name] = KernelInfo(**{**k, "params": params,
                                          "reqd_work_group_size": tuple(rwg) if rwg else None})
        for key, kind, empty in (("llvm_ir", str, ""), ("filename", str, ""), ("options", list, ""),
                                 ("log", str, ""), ("task_text", str, ""), ("restrict_ir", str, ""),
                                 ("restrict_kernels", list, [])):
            _expect(doc.get(key, empty), kind, f"'{key}'")
        if not all(isinstance(o, str) for o in doc["options"]):
            raise BinaryError("corrupt MNCL program binary: 'options' must be a list of strings")
        restrict = doc.get("restrict_kernels", [])
        if not all(k in kernels for k in restrict) or restrict and not doc.get("restrict_ir"):
            raise BinaryError("corrupt MNCL program binary: 'restrict_kernels' names kernels it has no "
                              "restrict IR for")
        return CompiledModule(llvm_ir=doc["llvm_ir"], kernels=kernels, filename=doc["filename"],
                              options=tuple(doc["options"]), log=doc.get("log", ""),
                              task_text=doc.get("task_text", ""), restrict_ir=doc.get("restrict_ir", ""),
                              restrict_kernels=tuple(restrict))
    except BinaryError:
        raise
    except RecursionError:
        raise BinaryError("corrupt MNCL program binary: its JSON is nested too deeply") from None
    except (ValueError, KeyError, TypeError, UnicodeDecodeError) as e:
        raise BinaryError(f"corrupt MNCL program binary: {type(e).__name__}: {e}") from None


PARAM_KINDS = ("global", "constant", "local", "scalar")
_TYPES = {"str": (str,), "int": (int,), "bool": (bool,), "tuple": (list,), "tuple | None": (list, type(None))}


def _expect(value, kind, what):
    if not isinstance(value, kind):
        raise BinaryError(f"corrupt MNCL program binary: {what} is a {type(value).__name__}, "
                          f"not a {kind.__name__}")


def _fields(cls, d, what) -> dict:
    """``d`` checked against the dataclass ``cls``: known fields only, each of its declared type
    (a wrong type would fail much later, inside a launch)."""
    _expect(d, dict, what)
    declared = {f.name: f for f in fields(cls)}
    for key, value in d.items():
        f = declared.get(key)
        if f is None:
            raise BinaryError(f"corrupt MNCL program binary: {what} has an unknown field {key!r}")
        ok = _TYPES.get(f.type if isinstance(f.type, str) else getattr(f.type, "__name__", ""), (object,))
        if not isinstance(value, ok) or (ok == (int,) and isinstance(value, bool)):
            raise BinaryError(f"corrupt MNCL program binary: {what}: field {key!r} is "
                              f"{type(value).__name__} {value!r:.40}")
        if ok == (int,) and value < 0:
            raise BinaryError(f"corrupt MNCL program binary: {what}: field {key!r} is negative ({value})")
    return d
