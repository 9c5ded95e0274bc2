"""Program binaries: a ``CompiledModule`` serialised as versioned, self-describing bytes.

Format: the magic line ``MNCL-BINARY 1`` then one JSON object with
``format_version``, ``translator_version``, ``filename``, ``options``,
``log``, ``kernels`` (each KernelInfo with its ParamInfo list) and
``llvm_ir`` (the optimised IR text).  ``Program(ctx, devices, binaries)``
loads it without the front end; the disk cache stores the same bytes.
"""
from __future__ import annotations

import json
from dataclasses import asdict

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
        if doc.get("format_version") != FORMAT_VERSION:
            raise BinaryError(f"binary format version {doc.get('format_version')!r}; "
                              f"this runtime reads version {FORMAT_VERSION}")
        kernels = {}
        for name, k in doc["kernels"].items():
            params = tuple(ParamInfo(**p) for p in k["params"])
            rwg = k.get("reqd_work_group_size")
            kernels[name] = KernelInfo(**{**k, "params": params,
                                          "reqd_work_group_size": tuple(rwg) if rwg else None})
        return CompiledModule(llvm_ir=doc["llvm_ir"], kernels=kernels, filename=doc["filename"],
                              options=tuple(doc["options"]), log=doc.get("log", ""),
                              task_text=doc.get("task_text", ""))
    except BinaryError:
        raise
    except (ValueError, KeyError, TypeError, UnicodeDecodeError) as e:
        raise BinaryError(f"corrupt MNCL program binary: {type(e).__name__}: {e}") from None
