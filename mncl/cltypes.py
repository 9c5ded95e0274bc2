"""OpenCL C scalar and vector types as numpy dtypes, with PyOpenCL's ``cltypes`` names.

``cltypes.float4`` is a structured dtype with fields ``s0..s3`` (titles
``x, y, z, w``); ``cltypes.make_float4(1, 2, 3, 4)`` builds a value to pass
as a by-value ``float4`` kernel argument.  3-component vectors have the size
and alignment of 4-component ones, as in OpenCL C (the fourth is padding).
"""
from __future__ import annotations

import numpy as np

char, uchar = np.int8, np.uint8
short, ushort = np.int16, np.uint16
int, uint = np.int32, np.uint32            # noqa: A001 - OpenCL C's names
long, ulong = np.int64, np.uint64
half, float, double = np.float16, np.float32, np.float64  # noqa: A001
bool = np.bool_                            # noqa: A001

_BASES = {"char": char, "uchar": uchar, "short": short, "ushort": ushort, "int": int, "uint": uint,
          "long": long, "ulong": ulong, "half": half, "float": float, "double": double}
_XYZW = "xyzw"
vec_types = {}


def _vector_dtype(base, n: int) -> np.dtype:
    names = [f"s{i:x}" for i in range(n)]
    titles = [_XYZW[i] if n <= 4 else None for i in range(n)]
    stored = 4 if n == 3 else n
    size = np.dtype(base).itemsize
    return np.dtype({"names": names, "formats": [base] * n, "offsets": [i * size for i in range(n)],
                     "titles": titles, "itemsize": stored * size})


def _maker(dtype, n, name):
    def make(*values):
        from .errors import raise_error, status_code
        if len(values) == 1 and n > 1:
            values = values * n
        if len(values) != n:
            raise_error(f"cltypes.make_{name}", status_code.INVALID_VALUE,
                        f"a {n}-component vector needs {n} values, got {len(values)}")
        try:
            return np.array(tuple(values), dtype=dtype)[()]
        except (TypeError, ValueError, OverflowError) as e:
            raise_error(f"cltypes.make_{name}", status_code.INVALID_VALUE,
                        f"the components must be numbers: {e}")
    return make


for _name, _base in _BASES.items():
    for _n in (2, 3, 4, 8, 16):
        _dt = _vector_dtype(_base, _n)
        globals()[f"{_name}{_n}"] = _dt
        globals()[f"make_{_name}{_n}"] = _maker(_dt, _n, f"{_name}{_n}")
        vec_types[(np.dtype(_base), _n)] = _dt
