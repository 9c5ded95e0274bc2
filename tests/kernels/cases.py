"""The kernel corpus: one numpy reference per case, with its launch spec.

Each ``@case(...)`` names a ``.cl`` file beside this module, the NDRange and
the arguments (see spec.py); the function below it is the numpy reference,
written independently of any OpenCL implementation.  The driver
``tests/test_kernel_corpus.py`` runs every case on PoCL (through PyOpenCL) and
on mncl and compares both with the reference.

What mncl cannot pass yet is data too: ``xfail-mncl-<device>.txt`` beside
this module (see spec.read_xfails), rewritten by ``refresh_xfail.py``.
"""
from __future__ import annotations

import numpy as np

from .spec import CASES, In, InOut, Local, Out, Same, Scalar, case  # noqa: F401 - CASES is the registry the driver reads

F32 = dict(rtol=1e-5, atol=1e-5)         # short float32 expressions (OpenCL may contract a*b+c to fma)
F64 = dict(rtol=1e-13, atol=1e-13)


def c_div(x, y):
    """C integer division: truncates toward zero (numpy's // floors)."""
    q = np.abs(x) // np.abs(y)
    return np.where((x < 0) != (y < 0), -q, q).astype(np.result_type(x, y))


def c_rem(x, y):
    return np.fmod(x, y).astype(np.result_type(x, y))


def nonzero(dtype, low, high, shape):
    def gen(rng):
        v = rng.integers(low, high, size=shape, dtype=dtype, endpoint=True)
        v[v == 0] = 1
        return v
    return gen


# --------------------------------------------------------------------------------------------
# Element-wise arithmetic in every scalar type (one .cl, the type set with -D T=...)
# --------------------------------------------------------------------------------------------

# ranges keep signed products in range (signed overflow is undefined); unsigned ones wrap
INT_TYPES = {
    "char": (np.int8, -11, 11), "uchar": (np.uint8, 0, 255),
    "short": (np.int16, -181, 181), "ushort": (np.uint16, 0, 46340),
    "int": (np.int32, -46340, 46340), "uint": (np.uint32, 0, 2**32 - 1),
    "long": (np.int64, -3_000_000_000, 3_000_000_000), "ulong": (np.uint64, 0, 2**64 - 1),
}

for _tname, (_dt, _lo, _hi) in INT_TYPES.items():
    _n = 1000

    def _ew_int(a, b, n, _dt=_dt, **initial):
        with np.errstate(over="ignore"):
            r = {"sum": a + b, "diff": a - b, "prod": a * b}
        r["quot"] = c_div(a, b)
        r["rem"] = c_rem(a, b)
        r["bits"] = ((a & b) | (~a ^ b)).astype(_dt)
        for k, v in r.items():                       # the tail beyond n keeps the buffer's fill
            full = initial[k].copy()
            full[:n] = v[:n]
            r[k] = full
        return r

    case("ew_int_ops.cl", global_size=1024, local_size=64, options=f"-D T={_tname}",
         name=f"ew_int_ops_{_tname}",
         args=[In("a", _dt, _n, _lo, _hi), In("b", _dt, _n, gen=nonzero(_dt, _lo, _hi, _n)),
               Out("sum", _dt, _n), Out("diff", _dt, _n), Out("prod", _dt, _n),
               Out("quot", _dt, _n), Out("rem", _dt, _n), Out("bits", _dt, _n),
               Scalar("n", np.int32, 997)])(_ew_int)

for _tname, _dt, _tol, _opt in (("float", np.float32, F32, ""),
                                ("double", np.float64, F64, " -D USE_FP64")):

    def _ew_float(a, b, out, alpha, n, _dt=_dt):
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        r = ((alpha * a64 + b64) - a64 / b64) * 0.5
        res = out.copy().reshape(-1, 3)
        res[:n, 0] = r[:n]
        res[:n, 1] = -a64[:n] * b64[:n]
        res[:n, 2] = np.abs(a64 - b64)[:n]
        return {"out": res.reshape(-1)}

    case("ew_float_ops.cl", global_size=512, local_size=None, options=f"-D T={_tname}{_opt}",
         name=f"ew_float_ops_{_tname}", needs_fp64=_dt is np.float64,
         rtol=1e-5 if _dt is np.float32 else 1e-12, atol=1e-5 if _dt is np.float32 else 1e-12,
         args=[In("a", _dt, 500, -10, 10), In("b", _dt, 500, 0.5, 4.0), Out("out", _dt, 1500, fill=-7),
               Scalar("alpha", _dt, 1.75), Scalar("n", np.int32, 500)])(_ew_float)


@case("promotions.cl", global_size=256,
      args=[In("ua", np.uint8, 256, 0, 255), In("ub", np.uint8, 256, 0, 255),
            In("ca", np.int8, 256, -128, 127), In("sa", np.int16, 256, -32768, 32767),
            In("ia", np.int32, 256, -1000, 1000), In("uia", np.uint32, 256, 0, 2000),
            Out("wide", np.int32, 768), Out("narrow", np.uint8, 256), Out("flags", np.int32, 256),
            Out("mixed", np.int64, 512)])
def promotions(ua, ub, ca, sa, ia, uia, wide, narrow, flags, mixed):
    """uchar+uchar is int; s < u compares as unsigned; division truncates."""
    x, y = ua.astype(np.int64), ub.astype(np.int64)
    wide = np.stack([x + y, x - y, ~x], axis=1).astype(np.int32).reshape(-1)
    narrow = ((x + y) % 256).astype(np.uint8)
    s, u = ia.astype(np.int64), uia.astype(np.int64)
    f = np.where((s % 2**32) < u, 1, 0)
    f |= np.where(s < u, 2, 0)
    f |= np.where(ca.astype(np.int64) < x, 4, 0)
    f |= np.where(sa.astype(np.int64) * 3 > 60000, 8, 0)
    f |= 16                                             # always true in C
    m0 = (s + u) % 2**32                                # uint sum, then widened
    m1 = s * ca.astype(np.int64) + u
    mixed = np.stack([m0, m1], axis=1).astype(np.int64).reshape(-1)
    return {"wide": wide, "narrow": narrow, "flags": f.astype(np.int32), "mixed": mixed}


@case("shifts.cl", global_size=200,
      args=[In("a", np.int32, 200, -2**31, 2**31 - 1), In("ua", np.uint32, 200, 0, 2**32 - 1),
            In("la", np.int64, 200, -2**63, 2**63 - 1), In("ula", np.uint64, 200, 0, 2**64 - 1),
            In("count", np.int32, 200, 0, 70),
            Out("si", np.int32, 400), Out("su", np.uint32, 400), Out("sl", np.int64, 400),
            Out("sul", np.uint64, 400)])
def shifts(a, ua, la, ula, count, si, su, sl, sul):
    """Counts are taken modulo the width (OpenCL 6.3.j); >> of a negative value is arithmetic."""
    def both(v, bits):
        c = (count % bits).astype(v.dtype)
        return np.stack([v << c, v >> c], axis=1).reshape(-1)
    return {"si": both(a, 32), "su": both(ua, 32), "sl": both(la, 64), "sul": both(ula, 64)}


@case("compound_assign.cl", global_size=128,
      args=[In("a", np.int32, 128, -5000, 5000), In("b", np.int32, 128, 1, 31), Out("out", np.int32, 128 * 12)])
def compound_assign(a, b, out):
    rows = []
    for x, y in zip(a.tolist(), b.tolist()):
        r = []
        x += y; r.append(x)
        x -= 3 * y; r.append(x)
        x *= 3; r.append(x)
        x = int(x / y); r.append(x)                      # truncating division
        x = int(np.fmod(x, 17)); r.append(x)
        x = x << (y & 7); r.append(x)
        x >>= 2; r.append(x)                             # python >> is arithmetic, like C on int
        x &= 0x0FF0; r.append(x)
        x |= 0x1001; r.append(x)
        x ^= y; r.append(x)
        k, j = 0, 5
        p = k; k += 1
        k += 1; q = k
        m = j; j -= 1
        j -= 1; o = j
        r.append(p * 1000 + q * 100 + m * 10 + o + k - j)
        k = 7; j = k * 2; r.append(j + k)
        rows.append(r)
    return {"out": np.array(rows, np.int32).reshape(-1)}


# --------------------------------------------------------------------------------------------
# Vector types, literals and swizzles
# --------------------------------------------------------------------------------------------

@case("vec4_arith.cl", global_size=256, local_size=32, rtol=1e-5, atol=1e-5,
      args=[In("a", np.float32, (256, 4), -4, 4), In("b", np.float32, (256, 4), 0, 3),
            Out("out", np.float32, (256, 4)), Scalar("s", np.float32, 0.5)])
def vec4_arith(a, b, out, s):
    a, b = a.astype(np.float64), b.astype(np.float64)
    r = a * b + s
    r -= a / (b + 1.0)
    return {"out": r * 2.0 - 0.5}


@case("vec_literals.cl", global_size=64, **F32,
      args=[In("a", np.float32, 64, -8, 8), Out("out", np.float32, (64, 8)), Out("iout", np.int32, (64, 4))])
def vec_literals(a, out, iout):
    x = a.astype(np.float64)
    q = np.stack([x, x + 1, 2 * x, np.full_like(x, 3.0)], axis=1)
    out = np.concatenate([q, q + x[:, None]], axis=1)
    i = np.arange(64)
    k = np.stack([np.ones(64), 2 * np.ones(64), i, -i], axis=1).astype(np.int64)
    return {"out": out, "iout": (k * i[:, None] + 7).astype(np.int32)}


@case("swizzles.cl", global_size=128, **F32,
      args=[In("a", np.float32, (128, 4), -5, 5), In("b", np.float32, (128, 8), -5, 5),
            Out("o4", np.float32, (384, 4)), Out("o8", np.float32, (128, 8)), Out("o2", np.float32, (256, 2))])
def swizzles(a, b, o4, o8, o2):
    v, w = a.astype(np.float64), b.astype(np.float64)
    r = np.stack([v[:, 3], v[:, 0], v[:, 1], v[:, 2] + v[:, 1]], axis=1)
    r1 = v[:, ::-1] + w[:, 0:4]
    r2 = w[:, [7, 6, 5, 4]] - w[:, 0::2] * w[:, 1::2]
    o4 = np.stack([r, r1, r2], axis=1).reshape(-1, 4)
    t = w.copy()
    t[:, 0:4] = w[:, 4:8]
    t[:, 4:8] = v[:, [0, 0, 1, 1]]
    t[:, 3] = 42.0
    t[:, [4, 6]] = v[:, [2, 3]]
    p0 = v[:, 0:2] + v[:, 2:4]
    p1 = w[:, 4:6] * w[:, 0:4][:, 1::2]
    o2 = np.stack([p0, p1], axis=1).reshape(-1, 2)
    return {"o4": o4, "o8": t, "o2": o2}


@case("vec3_cross.cl", global_size=100, rtol=1e-5, atol=1e-5,
      args=[In("a", np.float32, 300, -3, 3), In("b", np.float32, 300, -3, 3), Out("out", np.float32, 300)])
def vec3_cross(a, b, out):
    return {"out": np.cross(a.reshape(-1, 3).astype(np.float64), b.reshape(-1, 3)).reshape(-1)}


@case("vec16_int.cl", global_size=64,
      args=[In("a", np.int32, (64, 16), -10000, 10000), In("b", np.int32, (64, 16), -10000, 10000),
            Out("out", np.int32, (64, 16)), In("c", np.uint8, (64, 8), 0, 255), Out("cout", np.uint8, (64, 8))])
def vec16_int(a, b, out, c, cout):
    r = (a + b) * 3 - (a & b) + (b >> 2)
    r[:, 8:12] = a[:, [15, 14, 13, 12]]
    r[:, 15] = a[:, 0] + b[:, 1]
    return {"out": r, "cout": c + c[:, ::-1]}


@case("vec_compare_select.cl", global_size=96,
      args=[In("a", np.int32, (96, 4), -3, 3), In("b", np.int32, (96, 4), -3, 3),
            In("fa", np.float32, (96, 4), -1, 1), In("fb", np.float32, (96, 4), -1, 1),
            Out("mask", np.int32, (96, 4)), Out("sel", np.int32, (96, 4)), Out("fsel", np.float32, (96, 4)),
            Out("ssel", np.float32, 96)])
def vec_compare_select(a, b, fa, fb, mask, sel, fsel, ssel):
    """Vector relational results are -1 (all bits) for true; select tests each component's MSB."""
    m = np.where(a > b, -1, 0)
    return {"mask": (m | np.where(a == b, -1, 0) * 2).astype(np.int32),
            "sel": np.where(a > b, a, b), "fsel": np.where(fa < fb, fb, fa),
            "ssel": np.where(fa[:, 1] > fb[:, 1], fb[:, 0], fa[:, 0])}


@case("vload_vstore.cl", global_size=256, **F32,
      args=[In("a", np.float32, 1024, -10, 10), Out("out", np.float32, 1536),
            In("ia", np.int32, 2048, -1000, 1000), Out("iout", np.int32, 6144)])
def vload_vstore(a, out, ia, iout):
    v = a.reshape(256, 4).astype(np.float64)
    w = a.reshape(256, 2, 2)[:, 1, :].astype(np.float64)
    out = np.concatenate([(v * 2).reshape(-1), (w + v[:, :2]).reshape(-1)])
    k = ia.reshape(256, 8)
    i = np.arange(256)[:, None]
    iout = np.concatenate([(k * i).reshape(-1), np.concatenate([k, k * 2], axis=1).reshape(-1)])
    return {"out": out, "iout": iout.astype(np.int32)}


@case("half_storage.cl", global_size=256, rtol=1e-3, atol=1e-3,
      args=[In("h", np.float16, 256, -100, 100), Out("f", np.float32, 256), Out("hout", np.float16, 512)])
def half_storage(h, f, hout):
    """Stores round to nearest even, like numpy's float32 -> float16 cast."""
    x = h.astype(np.float32)
    hout = hout.copy()
    hout[:256] = (x * np.float32(0.5) + np.float32(1)).astype(np.float16)
    hout[256:] = (x.reshape(64, 4) + np.array([1, 2, 3, 4], np.float32)).reshape(-1).astype(np.float16)
    return {"f": x * np.float32(3), "hout": hout}


for _vt, _st, _dt, _w, _lo, _hi in (("float2", "float", np.float32, 2, -3, 3),
                                    ("float4", "float", np.float32, 4, -3, 3),
                                    ("float8", "float", np.float32, 8, -3, 3),
                                    ("float16", "float", np.float32, 16, -3, 3),
                                    ("double4", "double", np.float64, 4, -3, 3),
                                    ("int2", "int", np.int32, 2, -1000, 1000),
                                    ("int8", "int", np.int32, 8, -1000, 1000),
                                    ("uchar16", "uchar", np.uint8, 16, 0, 255),
                                    ("short4", "short", np.int16, 4, -100, 100),
                                    ("long2", "long", np.int64, 2, -10**9, 10**9)):

    def _ew_vec(a, b, out, _dt=_dt):
        with np.errstate(over="ignore"):
            r = a * b + _dt(1)
            r = r - b
            r[:, 0] = a[:, 1] + np.arange(len(a)).astype(_dt)
        return {"out": r.astype(_dt)}

    _fp = np.dtype(_dt).kind == "f"
    case("ew_vec.cl", global_size=128, local_size=16, name=f"ew_vec_{_vt}",
         options=f"-D VT={_vt} -D ST={_st}" + (" -D USE_FP64" if _dt is np.float64 else ""),
         needs_fp64=_dt is np.float64, rtol=1e-5 if _fp else 0, atol=1e-5 if _fp else 0,
         args=[In("a", _dt, (128, _w), _lo, _hi), In("b", _dt, (128, _w), _lo, _hi),
               Out("out", _dt, (128, _w))])(_ew_vec)


# --------------------------------------------------------------------------------------------
# Reductions, scans and sorts in __local memory with barriers
# --------------------------------------------------------------------------------------------

for _ls in (16, 64, 256):
    def _reduce_sum(in_, partial, n, _ls=_ls):
        padded = np.zeros(len(partial) * _ls, np.int64)
        padded[:n] = in_[:n]
        return {"partial": padded.reshape(-1, _ls).sum(axis=1).astype(np.int32)}

    case("reduce_sum_local.cl", global_size=1024, local_size=_ls, name=f"reduce_sum_local_wg{_ls}",
         args=[In("in_", np.int32, 1024, -1000, 1000), Out("partial", np.int32, 1024 // _ls),
               Local("scratch", 4 * _ls), Scalar("n", np.int32, 1000)])(_reduce_sum)


@case("reduce_float_static.cl", global_size=512, local_size=128, rtol=1e-5, atol=1e-4,
      args=[In("in_", np.float32, 3000, -1, 1), Out("partial", np.float32, 4), Scalar("n", np.int32, 3000)])
def reduce_float_static(in_, partial, n):
    x = in_.astype(np.float64)
    per_item = np.array([x[i:n:512].sum() for i in range(512)])
    return {"partial": per_item.reshape(4, 128).sum(axis=1)}


@case("reduce_max_min.cl", global_size=1024, local_size=128,
      args=[In("in_", np.uint32, 1024, 0, 5000), Out("gmax", np.uint32, 8), Out("gmin", np.uint32, 8),
            Out("gargmax", np.int32, 8), Local("lmax", 512), Local("lmin", 512), Local("larg", 512)])
def reduce_max_min(in_, gmax, gmin, gargmax):
    g = in_.reshape(8, 128)
    return {"gmax": g.max(axis=1), "gmin": g.min(axis=1),
            "gargmax": (np.argmax(g, axis=1) + 128 * np.arange(8)).astype(np.int32)}


@case("scan_local.cl", global_size=512, local_size=128,
      args=[In("in_", np.int32, 512, -50, 50), Out("out", np.int32, 512), Local("buf", 2 * 128 * 4)])
def scan_local(in_, out):
    return {"out": np.cumsum(in_.reshape(4, 128), axis=1).reshape(-1).astype(np.int32)}


@case("bitonic_local.cl", global_size=512, local_size=64,
      args=[In("in_", np.float32, 512, -100, 100), Out("out", np.float32, 512), Local("s", 256)])
def bitonic_local(in_, out):
    return {"out": np.sort(in_.reshape(8, 64), axis=1).reshape(-1)}


@case("transpose_local.cl", global_size=(48, 48), local_size=(16, 16),
      args=[In("in_", np.float32, 37 * 45, -9, 9), Out("out", np.float32, 37 * 45),
            Scalar("rows", np.int32, 37), Scalar("cols", np.int32, 45)])
def transpose_local(in_, out, rows, cols):
    return {"out": in_.reshape(rows, cols).T.reshape(-1)}


@case("local_broadcast.cl", global_size=384, local_size=32,
      args=[In("in_", np.int32, 384, -10**6, 10**6), Out("out", np.int32, 384),
            Local("group_max", 4), Local("copy", 128)])
def local_broadcast(in_, out):
    g = in_.reshape(-1, 32)
    return {"out": (g.max(axis=1, keepdims=True) - g[:, ::-1]).reshape(-1)}


@case("barrier_global.cl", global_size=256, local_size=64,
      args=[Out("scratch", np.int32, 256), Out("out", np.int32, 256)])
def barrier_global(scratch, out):
    gid = np.arange(256)
    v = (gid * gid % 97).reshape(4, 64)
    left, right = np.roll(v, 1, axis=1), np.roll(v, -1, axis=1)
    return {"scratch": (left - right).reshape(-1), "out": (left + right).reshape(-1)}


# --------------------------------------------------------------------------------------------
# Stencils and linear algebra
# --------------------------------------------------------------------------------------------

@case("stencil1d.cl", global_size=1024, local_size=128, **F32,
      args=[In("in_", np.float32, 1000, -1, 1), Out("out", np.float32, 1000), Scalar("n", np.int32, 1000)])
def stencil1d(in_, out, n):
    x = in_.astype(np.float64)
    left = np.concatenate([x[:1], x[:-1]])
    right = np.concatenate([x[1:], x[-1:]])
    return {"out": 0.25 * left + 0.5 * x + 0.25 * right}


def _stencil1d_local(in_, out, n):
    x = np.pad(in_.astype(np.float64), 2)
    w = [1, 2, 3, 2, 1]
    return {"out": sum(w[d] * x[d:d + n] for d in range(5))}


for _ls in (64, 48):                                      # 48: not a power of two
    case("stencil1d_local.cl", global_size=768, local_size=_ls, rtol=1e-5, atol=1e-5,
         name=f"stencil1d_local_wg{_ls}",
         args=[In("in_", np.float32, 700, -1, 1), Out("out", np.float32, 700, fill=5.0),
               Local("tile", 4 * (_ls + 4)), Scalar("n", np.int32, 700)])(_stencil1d_local)


@case("stencil2d.cl", global_size=(40, 32), local_size=(8, 8), rtol=1e-5, atol=1e-5,
      args=[In("u", np.float32, (30, 37), -1, 1), Out("v", np.float32, (30, 37)),
            Scalar("nx", np.int32, 37), Scalar("ny", np.int32, 30)])
def stencil2d(u, v, nx, ny):
    u = u.astype(np.float64)
    v = u.copy()
    v[1:-1, 1:-1] = u[1:-1, :-2] + u[1:-1, 2:] + u[:-2, 1:-1] + u[2:, 1:-1] - 4 * u[1:-1, 1:-1]
    return {"v": v}


@case("matvec.cl", global_size=256, local_size=64, rtol=1e-5, atol=1e-5,
      args=[In("A", np.float32, (250, 70), -1, 1), In("x", np.float32, 70, -1, 1), Out("y", np.float32, 250),
            Scalar("rows", np.int32, 250), Scalar("cols", np.int32, 70)])
def matvec(A, x, y, rows, cols):
    return {"y": A.astype(np.float64) @ x}


@case("matvec_local.cl", global_size=64 * 96, local_size=64, rtol=1e-5, atol=1e-5,
      args=[In("A", np.float32, (96, 300), -1, 1), In("x", np.float32, 300, -1, 1), Out("y", np.float32, 96),
            Scalar("cols", np.int32, 300), Local("part", 256)])
def matvec_local(A, x, y, cols):
    return {"y": A.astype(np.float64) @ x}


@case("matvec_double.cl", global_size=64, needs_fp64=True, **F64,
      args=[In("A", np.float64, (50, 60), -1, 1), In("x", np.float64, 50, -1, 1), Out("y", np.float64, 60),
            Scalar("rows", np.int32, 50), Scalar("cols", np.int32, 60)])
def matvec_double(A, x, y, rows, cols):
    return {"y": A.T @ x}


@case("matmul_naive.cl", global_size=(32, 24), local_size=(8, 8), rtol=1e-5, atol=1e-5,
      args=[In("A", np.float32, (21, 19), -1, 1), In("B", np.float32, (19, 30), -1, 1),
            Out("C", np.float32, (21, 30)), Scalar("M", np.int32, 21), Scalar("N", np.int32, 30),
            Scalar("K", np.int32, 19)])
def matmul_naive(A, B, C, M, N, K):
    return {"C": A.astype(np.float64) @ B}


@case("matmul_tiled.cl", global_size=(40, 32), local_size=(8, 8), rtol=1e-5, atol=1e-5,
      args=[In("A", np.float32, (27, 35), -1, 1), In("B", np.float32, (35, 37), -1, 1),
            Out("C", np.float32, (27, 37)), Scalar("M", np.int32, 27), Scalar("N", np.int32, 37),
            Scalar("K", np.int32, 35)])
def matmul_tiled(A, B, C, M, N, K):
    return {"C": A.astype(np.float64) @ B}


@case("matmul_int.cl", global_size=32,
      args=[In("A", np.int16, (29, 40), -300, 300), In("B", np.int16, (40, 23), -300, 300),
            Out("C", np.int32, (29, 23), fill=None), Scalar("M", np.int32, 29), Scalar("N", np.int32, 23),
            Scalar("K", np.int32, 40)])
def matmul_int(A, B, C, M, N, K):
    return {"C": (A.astype(np.int64) @ B.astype(np.int64)).astype(np.int32)}


# --------------------------------------------------------------------------------------------
# Control flow: divergent branches, data-dependent loops
# --------------------------------------------------------------------------------------------

@case("branches_nested.cl", global_size=512,
      args=[In("a", np.int32, 512, -40, 40), In("b", np.int32, 512, -40, 40), Out("out", np.int32, 512)])
def branches_nested(a, b, out):
    res = []
    for x, y in zip(a.tolist(), b.tolist()):
        if x > 0:
            r = x + y if y > 0 else x if y == 0 else (x - y if x > -y else -1)
        else:
            r = x * 2 if (x & 1) == 0 and y != 0 else y - x
            r = min(r, 50)
        res.append(r)
    return {"out": np.array(res, np.int32)}


@case("early_return.cl", global_size=512, local_size=64,
      args=[In("a", np.int32, 512, -200, 1000), Out("out", np.int32, 512, fill=-99), Scalar("n", np.int32, 480)])
def early_return(a, out, n):
    out = out.copy()
    for i in range(n):
        x = int(a[i])
        if x < 0:
            continue
        k = next((k for k in range(2, 12) if x % k == 0), None)
        out[i] = k if k is not None else (-x if x > 500 else x * 10)
    return {"out": out}


@case("ternary_comma.cl", global_size=256, **F32,
      args=[In("a", np.float32, 256, -3, 3), Out("out", np.float32, 256), Out("cls", np.int32, 256)])
def ternary_comma(a, out, cls):
    x = a.astype(np.float64)
    c = np.select([x < -1, x < 0, x < 1], [0, 1, 2], 3)
    y = (c * 2 + 1) * np.select([c == 3, c == 0], [x, -x], 1.0)
    return {"cls": c.astype(np.int32), "out": y + np.where(c & 1, 0.5, 0.25)}


@case("switch_case.cl", global_size=300,
      args=[In("a", np.int32, 300, -50, 50), Out("out", np.int32, 300)])
def switch_case(a, out):
    res = []
    for x in a.tolist():
        sel = x & 7
        r = {0: 100, 1: 30, 2: 20, 5: 13, 6: 13}.get(sel, -x)
        m = int(np.fmod(x, 3))
        if m == 0:
            r *= 2
        elif m == 1:
            r -= 1
        res.append(r)
    return {"out": np.array(res, np.int32)}


@case("collatz.cl", global_size=256, local_size=32,
      args=[In("start", np.uint32, 256, 1, 100000), Out("steps", np.int32, 256), Out("peak", np.uint64, 256)])
def collatz(start, steps, peak):
    s, p = [], []
    for v in start.tolist():
        top, n = v, 0
        while v != 1:
            v = 3 * v + 1 if v & 1 else v >> 1
            top = max(top, v)
            n += 1
        s.append(n)
        p.append(top)
    return {"steps": np.array(s, np.int32), "peak": np.array(p, np.uint64)}


@case("do_while_digits.cl", global_size=256,
      args=[In("a", np.uint32, 256, gen=lambda rng: np.concatenate(
                [np.array([0, 9, 10, 4294967295], np.uint32),
                 rng.integers(0, 2**32 - 1, 252, endpoint=True).astype(np.uint32)])),
            Out("sum", np.int32, 256), Out("count", np.int32, 256)])
def do_while_digits(a, sum, count):
    digits = [str(v) for v in a.tolist()]
    return {"sum": np.array([sum_(map(int, d)) for d in digits], np.int32),
            "count": np.array([len(d) for d in digits], np.int32)}


sum_ = sum


@case("break_continue.cl", global_size=64,
      args=[In("data", np.int32, (64, 24), -30, 60), Out("firstneg", np.int32, 64), Out("oddsum", np.int32, 64),
            Out("pairs", np.int32, 64), Scalar("width", np.int32, 24)])
def break_continue(data, firstneg, oddsum, pairs, width):
    fn, os_, pr = [], [], []
    for r in data.tolist():
        fn.append(next((k for k, v in enumerate(r) if v < 0), -1))
        s = 0
        for v in r:
            if v % 2 == 0:
                continue
            s += v
            if s > 200:
                break
        os_.append(s)
        found = 0
        for p in range(width):
            if found:
                break
            for q in range(p + 1, width):
                if r[p] + r[q] == 0:
                    found = p * 100 + q
                    break
        pr.append(found)
    return {"firstneg": np.array(fn, np.int32), "oddsum": np.array(os_, np.int32), "pairs": np.array(pr, np.int32)}


@case("short_circuit.cl", global_size=256,
      args=[In("idx", np.int32, 256, -20, 84), In("table", np.int32, 64, -100, 100),
            Out("out", np.int32, 768), Scalar("tsize", np.int32, 64)])
def short_circuit(idx, table, out, tsize):
    res = []
    for k in idx.tolist():
        inside = 0 <= k < tsize
        ok = int(inside and table[k] > 0)
        bad = int(not inside or table[k] == 0)
        v = int(table[k]) if (ok or (inside and table[k] < -50)) else 0
        res += [ok, bad, v + (not ok)]
    return {"out": np.array(res, np.int32)}


@case("isqrt_gcd.cl", global_size=256,
      args=[In("a", np.uint32, 256, 0, 2**31), In("b", np.uint32, 256, 0, 100000),
            Out("root", np.uint32, 256), Out("g", np.uint32, 256), Out("iters", np.int32, 256)])
def isqrt_gcd(a, b, root, g, iters):
    rs, gs, its = [], [], []
    for n, m in zip(a.tolist(), b.tolist()):
        x, y, it = n, (n + 1) // 2, 0
        if n > 1:
            while y < x:
                x = y
                y = (x + n // x) // 2
                it += 1
        rs.append(x)
        p, q, steps = n, m, 0
        while q:
            p, q = q, p % q
            steps += 1
        gs.append(p)
        its.append(it * 1000 + steps)
    return {"root": np.array(rs, np.uint32), "g": np.array(gs, np.uint32), "iters": np.array(its, np.int32)}


@case("task_sort.cl", global_size=1, local_size=1,
      args=[InOut("data", np.int32, 300, -10000, 10000), Scalar("n", np.int32, 300)])
def task_sort(data, n):
    return {"data": np.sort(data)}


# --------------------------------------------------------------------------------------------
# Helper functions, structs, qualifiers, pointers, the preprocessor
# --------------------------------------------------------------------------------------------

@case("helpers.cl", global_size=128, rtol=1e-5, atol=1e-5,
      args=[In("a", np.float32, 128, -5, 5), In("ints", np.int32, 131, -100, 100),
            Out("out", np.float32, 512), Out("iout", np.int32, 128)])
def helpers(a, ints, out, iout):
    x = a.astype(np.float64)
    w = np.floor(x)
    f = x - w
    out = np.stack([(1.5 * x - 2.0) * x + 0.25, w, f, np.hypot(x, f)], axis=1).reshape(-1)
    iout = np.array([ints[i:i + 4].sum() for i in range(128)], np.int32)
    return {"out": out, "iout": iout}


PARTICLE = np.dtype([("x", "<f4"), ("y", "<f4"), ("vx", "<f4"), ("vy", "<f4"), ("alive", "<i4"), ("bounces", "<i4")])


def _particles(rng):
    p = np.zeros(200, PARTICLE)
    p["x"] = rng.uniform(-1, 1, 200)
    p["y"] = rng.uniform(0, 0.3, 200)
    p["vx"] = rng.uniform(-1, 1, 200)
    p["vy"] = rng.uniform(-2, 1, 200)
    p["alive"] = rng.integers(0, 4, 200) > 0
    return p


@case("struct_particles.cl", global_size=256, local_size=64, rtol=1e-5, atol=1e-6,
      args=[InOut("ps", PARTICLE, 200, gen=_particles), Out("e", np.float32, 200, fill=-1.0),
            Scalar("dt", np.float32, 0.1), Scalar("n", np.int32, 200)])
def struct_particles(ps, e, dt, n):
    ps, e = ps.copy(), e.copy()
    dt = np.float32(dt)
    for i in range(n):
        p = ps[i]
        if not p["alive"]:
            continue
        for _ in range(2):
            p["x"] += p["vx"] * dt
            p["y"] += p["vy"] * dt
            if p["y"] < 0:
                p["y"], p["vy"] = -p["y"], -p["vy"]
                p["bounces"] += 1
        ps[i] = p
        e[i] = 0.5 * (float(p["vx"]) ** 2 + float(p["vy"]) ** 2)
    return {"ps": ps, "e": e}


@case("struct_private.cl", global_size=100, **F32,
      args=[In("a", np.int32, 400, -50, 50), Out("out", np.int32, 200), Out("wout", np.float32, 100)])
def struct_private(a, out, wout):
    a = a.reshape(-1, 4).astype(np.int64)
    wx, wy = a[:, 1], a[:, 3]
    total = wx + (wx + 3) + wy
    out = np.stack([wx * wy, total], axis=1).reshape(-1).astype(np.int32)
    return {"out": out, "wout": 0.5 * np.arange(100) + (wx + 3)}


@case("qualifiers.cl", global_size=200, rtol=1e-5, atol=1e-5,
      args=[In("in_", np.float32, 200, -2, 2), Out("out", np.float32, 200), Scalar("n", np.int32, 200)])
def qualifiers(in_, out, n):
    x = in_.astype(np.float64)
    acc = sum(np.roll(x, -k) * 2.5 for k in range(4))
    return {"out": acc - acc * 0.5}


@case("pointer_arith.cl", global_size=64,
      args=[In("src", np.int32, 64 + 5 * 9, -100, 100), Out("dst", np.int32, 192),
            Scalar("stride", np.int32, 5), Scalar("count", np.int32, 9)])
def pointer_arith(src, dst, stride, count):
    i = np.arange(64)
    s = np.array([src[k:k + stride * count:stride].sum() for k in range(64)])
    prev = np.concatenate([[0], src[:63]])
    return {"dst": np.stack([s, np.full(64, stride * count), count + prev], axis=1).reshape(-1).astype(np.int32)}


@case("bool_size_t.cl", global_size=100,
      args=[In("a", np.int32, 100, -20, 20), Out("out", np.int32, 200), Out("sz", np.uint32, 100)])
def bool_size_t(a, out, sz):
    i = np.arange(100)
    pos, even = (a > 0).astype(np.int64), (a % 2 == 0).astype(np.int64)
    both = pos & even
    count = (i % 5) * (both + pos)
    out = np.stack([both + 2 * pos + 4 * even, count + (1 - pos)], axis=1).reshape(-1)
    return {"out": out.astype(np.int32), "sz": ((i - 3) % 2**32 + 16).astype(np.uint32)}


for _factor, _extra, _suffix in ((2, "", "add"), (3, "", "sub"), (2, " -D USE_XOR=1", "xor")):
    def _pre(a, out, _factor=_factor, _suffix=_suffix):
        x = a.astype(np.int64) ** 2 * _factor
        y = np.arange(len(a)) + 11
        r = {"add": x + y, "sub": x - y, "xor": x ^ y}[_suffix]
        return {"out": r.astype(np.int32)}

    case("preprocessor.cl", global_size=64, name=f"preprocessor_{_suffix}",
         options=f"-D FACTOR={_factor} -DOFFSET=11{_extra}",
         args=[In("a", np.int32, 64, -1000, 1000), Out("out", np.int32, 64)])(_pre)


@case("multi_kernel.cl", "scale", global_size=128, name="multi_kernel_scale", **F32,
      args=[InOut("data", np.float32, 128, -4, 4), Scalar("s", np.float32, -1.5)])
def multi_kernel_scale(data, s):
    return {"data": s * data.astype(np.float64) + 0.75}


@case("multi_kernel.cl", "offset_then_scale", global_size=128, name="multi_kernel_offset", **F32,
      args=[In("in_", np.float32, 128, -4, 4), Out("out", np.float32, 128),
            Scalar("off", np.float32, 0.25), Scalar("s", np.float32, 3.0)])
def multi_kernel_offset(in_, out, off, s):
    return {"out": s * (in_.astype(np.float64) + off) + 0.75}


@case("constant_table.cl", global_size=256, **F32,
      args=[In("in_", np.float32, 256, -2, 2), In("coef", np.float32, 9, -1, 1), Out("out", np.float32, 256)])
def constant_table(in_, coef, out):
    weights = np.array([0.5, 1.0, 1.5, 2.0, -0.5, -1.0, 0.25, 4.0])
    shuffle = np.array([3, 1, 4, 0, 5, 7, 2, 6])
    k = np.arange(256) & 7
    return {"out": weights[k] * in_ + coef[shuffle[k]].astype(np.float64) + coef[8]}


@case("private_arrays.cl", global_size=64, rtol=1e-5, atol=1e-5,
      args=[In("in_", np.float32, 64 * 16, -0.2, 1.2), Out("out", np.float32, 64 * 16), Out("hist", np.int32, 64 * 5)])
def private_arrays(in_, out, hist):
    m = in_.reshape(64, 4, 4).astype(np.float64)
    prod = m @ m.transpose(0, 2, 1)
    bins = np.clip(np.trunc(in_.reshape(64, 16) * np.float32(5)).astype(np.int64), 0, 4)
    h = np.stack([(bins == b).sum(axis=1) for b in range(5)], axis=1)
    return {"out": prod.reshape(-1), "hist": h.reshape(-1).astype(np.int32)}


@case("box_blur.cl", global_size=(48, 40), local_size=(16, 8),
      args=[In("img", np.uint8, (37, 45), 0, 255), Out("out", np.uint8, (37, 45)),
            Scalar("w", np.int32, 45), Scalar("h", np.int32, 37)])
def box_blur(img, out, w, h):
    p = np.pad(img.astype(np.float32), 1, mode="edge")
    k = np.array([[1, 2, 1], [2, 4, 2], [1, 2, 1]], np.float32)
    acc = np.zeros((h, w), np.float32)
    for dy in range(3):                                   # same summation order as the kernel, in float32
        for dx in range(3):
            acc += k[dy, dx] * p[dy:dy + h, dx:dx + w]
    v = acc / np.float32(16) * np.float32(1.25)
    return {"out": np.clip(np.rint(v), 0, 255).astype(np.uint8)}


# --------------------------------------------------------------------------------------------
# Conversions and reinterpretation
# --------------------------------------------------------------------------------------------

def _sat_floats(rng):
    special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, 1.5, 2.5, -0.5, -1.5, 127.5, 128.0,
                        255.4, 255.5, 255.6, 256.0, -128.5, -129.0, 65535.9, 1e10, -1e10, 2147.48365], np.float32)
    return np.concatenate([special, rng.uniform(-400, 400, 256 - len(special)).astype(np.float32)])


def _sat_ints(rng):
    special = np.array([0, -1, 127, 128, -128, -129, 255, 256, 65535, 65536, -2**31, 2**31 - 1], np.int32)
    return np.concatenate([special, rng.integers(-100000, 100000, 256 - len(special)).astype(np.int32)])


def _sat(x, dtype):
    info = np.iinfo(dtype)
    return np.clip(np.nan_to_num(x, nan=0.0, posinf=info.max, neginf=info.min), info.min, info.max)


@case("conversions_sat.cl", global_size=256,
      args=[In("f", np.float32, 256, gen=_sat_floats), In("k", np.int32, 256, gen=_sat_ints),
            Out("u8", np.uint8, 512), Out("s8", np.int8, 512), Out("u16", np.uint16, 256),
            Out("s16", np.int16, 256), Out("s32", np.int32, 256), Out("u32", np.uint32, 256)])
def conversions_sat(f, k, u8, s8, u16, s16, s32, u32):
    """Float to int: round toward zero unless a mode is named, then clamp; NaN gives 0."""
    x = f.astype(np.float64)
    tz = np.trunc(x)
    y = k.astype(np.float64)
    return {
        "u8": np.stack([_sat(tz, np.uint8), _sat(y, np.uint8)], axis=1).reshape(-1).astype(np.uint8),
        "s8": np.stack([_sat(tz, np.int8), _sat(y, np.int8)], axis=1).reshape(-1).astype(np.int8),
        "u16": _sat(y, np.uint16).astype(np.uint16),
        "s16": _sat(np.rint(x), np.int16).astype(np.int16),
        "s32": _sat(np.trunc((f * np.float32(1e6)).astype(np.float64)), np.int32).astype(np.int32),
        "u32": _sat(y, np.uint32).astype(np.uint32),
    }


def _round_floats(rng):
    special = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, 3.0, -3.0, 1e6 + 0.5, -7.25, 7.75], np.float32)
    return np.concatenate([special, rng.uniform(-1000, 1000, 128 - len(special)).astype(np.float32)])


def _round_ints(rng):
    special = np.array([16777217, 16777219, -16777217, 2**31 - 1, -2**31, 2**30 + 65, 0, 1], np.int32)
    return np.concatenate([special, rng.integers(-2**31, 2**31 - 1, 128 - len(special), endpoint=True).astype(np.int32)])


@case("conversions_round.cl", global_size=128,
      args=[In("f", np.float32, 128, gen=_round_floats), In("k", np.int32, 128, gen=_round_ints),
            Out("r", np.int32, 640), Out("fo", np.float32, 256), Out("v", np.int32, (128, 4))])
def conversions_round(f, k, r, fo, v):
    x = f.astype(np.float64)
    r = np.stack([np.trunc(x), np.rint(x), np.trunc(x), np.ceil(x), np.floor(x)], axis=1).reshape(-1)
    fo = np.stack([k.astype(np.float32), (k >> 3).astype(np.float32) * np.float32(0.125)], axis=1).reshape(-1)
    q = np.stack([f, -f, f * np.float32(0.5), f + np.float32(0.5)], axis=1).astype(np.float64)
    return {"r": r.astype(np.int32), "fo": fo, "v": np.rint(q).astype(np.int32)}


@case("reinterpret_bits.cl", global_size=128,
      args=[In("f", np.float32, 128, -1e6, 1e6), In("u", np.uint32, 128, 0, 2**32 - 1),
            Out("bits", np.uint32, 128), Out("back", np.float32, 128), Out("expo", np.int32, 128),
            Out("bytes", np.uint8, (128, 4)), Out("vbits", np.int32, (128, 4))])
def reinterpret_bits(f, u, bits, back, expo, bytes, vbits):
    b = f.view(np.uint32)
    v = np.stack([f, -f, np.zeros_like(f), np.ones_like(f)], axis=1)
    return {"bits": b, "expo": ((b >> 23) & 0xFF).astype(np.int32) - 127,
            "back": ((u & 0x007FFFFF) | 0x3F800000).astype(np.uint32).view(np.float32),
            "bytes": b.view(np.uint8).reshape(128, 4), "vbits": v.view(np.int32)}


@case("casts_c.cl", global_size=128, needs_fp64=True,
      args=[In("f", np.float32, 128, -1e5, 1e5), In("k", np.int32, 128, -2**31, 2**31 - 1),
            In("d", np.float64, 128, -1e12, 1e12), Out("ti", np.int32, 128), Out("tu8", np.uint8, 128),
            Out("ts16", np.int16, 128), Out("tf", np.float32, 128), Out("tl", np.int64, 256)])
def casts_c(f, k, d, ti, tu8, ts16, tf, tl):
    k64 = k.astype(np.int64)
    tl = np.stack([np.trunc(d).astype(np.int64), k64 * 100000 + (k64 % 2**32)], axis=1).reshape(-1)
    return {"ti": np.trunc(f).astype(np.int32), "tu8": (k64 % 256).astype(np.uint8),
            "ts16": ((k64 & 0x7FFF) - 100).astype(np.int16), "tf": d.astype(np.float32), "tl": tl}


# --------------------------------------------------------------------------------------------
# Math, integer and common builtins
# --------------------------------------------------------------------------------------------

@case("math_float.cl", global_size=256, rtol=2e-5, atol=2e-6,
      args=[In("xs", np.float32, 256, 0.05, 8), In("ys", np.float32, 256, -4, 4), Out("out", np.float32, (256, 20))])
def math_float(xs, ys, out):
    """Within a few ulp of float64 math (the OpenCL full-profile bounds; mad may be fused)."""
    x, y = xs.astype(np.float64), ys.astype(np.float64)
    cols = [np.sqrt(x), 1 / np.sqrt(x), np.exp(y), np.exp2(y), np.log(x), np.log2(x), x ** y,
            np.sin(y), np.cos(y), np.tan((ys * np.float32(0.3)).astype(np.float64)), np.abs(y), np.floor(y), np.ceil(y),
            np.minimum(x, y), np.maximum(x, y), x * y + 1, x * y - 1, np.hypot(x, y), np.tanh(y),
            np.sqrt((xs * xs + np.float32(1)).astype(np.float64)) - x]
    return {"out": np.stack(cols, axis=1)}


@case("math_double.cl", global_size=128, needs_fp64=True, rtol=1e-12, atol=1e-13,
      args=[In("xs", np.float64, 128, 0.05, 8), In("ys", np.float64, 128, -4, 4), Out("out", np.float64, (128, 16))])
def math_double(xs, ys, out):
    x, y = xs, ys
    cols = [np.sqrt(x), 1 / np.sqrt(x), np.exp(y), np.log(x), x ** y, np.sin(y), np.cos(y), np.abs(y),
            np.floor(y), np.ceil(y), np.minimum(x, y), np.maximum(x, y), x * y + 1, np.hypot(x, y), np.tanh(y),
            np.log2(x) + np.exp2(y)]
    return {"out": np.stack(cols, axis=1)}


@case("math_vector.cl", global_size=64, rtol=2e-5, atol=2e-6,
      args=[In("a", np.float32, (64, 4), 0, 4), Out("out", np.float32, (256, 4))])
def math_vector(a, out):
    x = a.astype(np.float64)
    r = [np.sqrt(x), np.exp(-x) + np.sin(x), np.maximum(x, 2) + np.minimum(x, 1),
         np.clip((a * np.float32(3) - np.float32(4)).astype(np.float64), -1, 1) + np.floor(x)]
    return {"out": np.stack(r, axis=1).reshape(-1, 4)}


@case("int_builtins.cl", global_size=256,
      args=[In("a", np.int32, 256, -5000, 5000), In("b", np.int32, 256, -5000, 5000),
            In("c", np.int8, 256, -128, 127), In("ua", np.uint32, 256, 0, 2**32 - 1),
            Out("out", np.int32, 256 * 6), Out("uout", np.uint32, 256 * 3), Out("aout", np.uint8, 256)])
def int_builtins(a, b, c, ua, out, uout, aout):
    """abs of a signed value has the unsigned type: abs((char)-128) is 128."""
    x, y = a.astype(np.int64), b.astype(np.int64)
    lo, hi = np.minimum(x, y), np.maximum(x, y)
    out = np.stack([lo, hi, np.clip(x, -100, 100), x * y, x * y + 7, np.clip(y, lo, hi)], axis=1)
    ux = x % 2**32
    u = ua.astype(np.int64)
    uout = np.stack([np.abs(x), np.minimum(u, 3000000000), np.maximum(u, ux) - np.minimum(u, ux)], axis=1)
    return {"out": out.reshape(-1).astype(np.int32), "uout": uout.reshape(-1).astype(np.uint32),
            "aout": np.abs(c.astype(np.int64)).astype(np.uint8)}


@case("common_builtins.cl", global_size=128, rtol=1e-5, atol=1e-6,
      args=[In("a", np.float32, 128, -2, 2), In("b", np.float32, 128, -2, 2), In("t", np.float32, 128, 0, 1),
            Out("out", np.float32, 512), Out("vout", np.float32, (256, 4))])
def common_builtins(a, b, t, out, vout):
    x, y, s = a.astype(np.float64), b.astype(np.float64), t.astype(np.float64)
    out = np.stack([x + (y - x) * s, np.where(x < y, 0.0, 1.0), np.sign(x),
                    np.sign(x - y) * np.where(s < 0.5, 0.0, 1.0)], axis=1).reshape(-1)
    v = np.stack([x, y, s, (a + b).astype(np.float64)], axis=1)
    m = v + (v[:, ::-1] - v) * s[:, None]
    st = np.where(v < 0, 0.0, 1.0) + np.where(v < 0.25, 0.0, 1.0)
    return {"out": out, "vout": np.stack([m, st], axis=1).reshape(-1, 4)}


# --------------------------------------------------------------------------------------------
# NDRanges: 2-D, 3-D, offsets, tails
# --------------------------------------------------------------------------------------------

@case("ndrange_2d.cl", global_size=(24, 12), local_size=(8, 4),
      args=[Out("out", np.int32, (8, 12, 24))])
def ndrange_2d(out):
    y, x = np.mgrid[0:12, 0:24]
    planes = [x % 8 + 100 * (y % 4), x // 8 + 100 * (y // 4), np.full_like(x, 3 + 300),
              np.full_like(x, 8 + 400), np.full_like(x, 2), np.full_like(x, 24 * 1000 + 12),
              np.ones_like(x), np.full_like(x, 0 + 1 + 1)]
    return {"out": np.stack(planes).astype(np.int32)}


@case("ndrange_3d.cl", global_size=(8, 6, 4), local_size=(4, 3, 2), rtol=1e-5, atol=1e-5,
      args=[In("vol", np.float32, (4, 6, 8), -1, 1), Out("out", np.float32, (4, 6, 8)), Out("ids", np.int32, (4, 6, 8))])
def ndrange_3d(vol, out, ids):
    v = vol.astype(np.float64)
    dz = np.zeros_like(v); dz[:-1] = v[1:] - v[:-1]
    dy = np.zeros_like(v); dy[:, :-1] = v[:, 1:] - v[:, :-1]
    dx = np.zeros_like(v); dx[:, :, :-1] = v[:, :, 1:] - v[:, :, :-1]
    z, y, x = np.mgrid[0:4, 0:6, 0:8]
    ids = (z // 2) * 10000 + (z % 2) * 1000 + (y % 3) * 100 + (x % 4) * 10 + 3
    return {"out": dx + 2 * dy + 3 * dz, "ids": ids.astype(np.int32)}


@case("global_offset.cl", global_size=(30, 12), local_size=(10, 4), global_offset=(10, 4),
      args=[Out("out", np.int32, (16, 40), fill=-1), Out("offs", np.int32, 3, fill=-1)])
def global_offset(out, offs):
    out = out.copy()
    y, x = np.mgrid[4:16, 10:40]
    out[4:16, 10:40] = x * 1000 + y + 1
    return {"out": out, "offs": np.array([10, 4, 0], np.int32)}


def _offset_1d(a, o, ids, local):
    i = np.arange(100, 1100)
    o = o.copy()
    o[i] = a[i] + 1000 * i + 100000 * ids * ((i - 100) % local)
    return {"o": o}


for _local in (None, 8):
    case("global_offset.cl", "global_offset_1d", name=f"global_offset_1d{'_local' if _local else ''}",
         global_size=1000, local_size=_local, global_offset=(100,),
         args=[In("a", np.int32, 1100, -1000, 1000), Out("o", np.int32, 1100, fill=-1),
               Scalar("ids", np.int32, int(bool(_local)))])(
        lambda a, o, ids, _local=_local: _offset_1d(a, o, ids, _local or 1))


def _offset_3d(a, o, w, h, ids, local):
    off, size = (1, 2, 3), (16, 6, 4)
    z, y, x = np.meshgrid(*[np.arange(off[d], off[d] + size[d]) for d in (2, 1, 0)], indexing="ij")
    groups = sum((v - off[d]) // local[d] for d, v in enumerate((x, y, z)))
    o = o.copy()
    at = (z * h + y) * w + x
    o[at] = a[at] + 1000 * x + 100 * y + 10 * z + 100000 * ids * groups
    return {"o": o}


for _local in (None, (4, 2, 2)):
    case("global_offset.cl", "global_offset_3d", name=f"global_offset_3d{'_local' if _local else ''}",
         global_size=(16, 6, 4), local_size=_local, global_offset=(1, 2, 3),
         args=[In("a", np.int32, 17 * 8 * 7, -1000, 1000), Out("o", np.int32, 17 * 8 * 7, fill=-1),
               Scalar("w", np.int32, 17), Scalar("h", np.int32, 8), Scalar("ids", np.int32, int(bool(_local)))])(
        lambda a, o, w, h, ids, _local=_local: _offset_3d(a, o, w, h, ids, _local or (1, 1, 1)))


@case("saxpy_tail.cl", global_size=1024, local_size=256, **F32,
      args=[In("x", np.float32, 1001, -10, 10), InOut("y", np.float32, 1001, -10, 10),
            Scalar("a", np.float32, 2.5), Scalar("n", np.uint32, 1001)])
def saxpy_tail(x, y, a, n):
    return {"y": a * x.astype(np.float64) + y}


# --------------------------------------------------------------------------------------------
# Barriers in loops, branches and helpers; float3 buffers; struct layout; literals
# --------------------------------------------------------------------------------------------

@case("vec3_buffer.cl", global_size=64, **F32,
      args=[In("p", np.float32, (64, 4), -2, 2), Out("q", np.float32, (64, 4)), Out("k", np.int32, (64, 4)),
            Out("len2", np.float32, 64)])
def vec3_buffer(p, q, k, len2):
    """A stored float3 fills 16 bytes whose 4th lane is undefined: masked, so not compared."""
    v = p[:, :3].astype(np.float64)
    w = v[:, [2, 0, 1]] * 2 + np.array([1.0, 0.0, -1.0])
    w[:, 1] = v[:, 0] - v[:, 2]
    lane4 = np.zeros((64, 4), bool)
    lane4[:, 3] = True
    k = np.stack([np.arange(64), np.full(64, 16), np.full(64, 4), np.zeros(64)], axis=1)
    return {"q": np.ma.array(np.pad(w, ((0, 0), (0, 1))), mask=lane4), "k": np.ma.array(k, mask=lane4),
            "len2": (v ** 2).sum(axis=1)}


def _group_loop_barrier(in_, rounds, out, _ls=32):
    v = in_.reshape(-1, _ls).astype(np.int64)
    for g in range(v.shape[0]):
        for _ in range(int(rounds[g])):
            v[g] = np.roll(v[g], -1) + (v[g] & 3)
        if g % 2 == 1:
            v[g] = v[g] + v[g][::-1]
    return {"out": v.reshape(-1).astype(np.int32)}


for _ls in (32, 48):
    case("group_loop_barrier.cl", global_size=_ls * 12, local_size=_ls, name=f"group_loop_barrier_wg{_ls}",
         args=[In("in_", np.int32, _ls * 12, -1000, 1000), In("rounds", np.int32, 12, 0, 5),
               Out("out", np.int32, _ls * 12), Local("buf", 4 * _ls)])(
        lambda in_, rounds, out, _ls=_ls: _group_loop_barrier(in_, rounds, out, _ls))


@case("barrier_in_helper.cl", global_size=256, local_size=64,
      args=[In("in_", np.int32, 256, -1000, 1000), Out("out", np.int32, 256), Local("buf", 256)])
def barrier_in_helper(in_, out):
    v = in_.reshape(4, 64)
    for _ in range(2):
        v = np.roll(v, -1, axis=1) + (v & 3)
    return {"out": v.reshape(-1)}


@case("live_across_barrier.cl", global_size=256, local_size=64, rtol=1e-5, atol=1e-5,
      args=[In("in_", np.float32, 256, -1, 1), Out("out", np.float32, 512), Local("tmp", 256)])
def live_across_barrier(in_, out):
    a = in_.reshape(4, 64)
    b = a * a
    hist, count = [], np.zeros_like(a, dtype=np.int64)
    for step in range(4):
        nb = np.roll(a, -(step + 1), axis=1)
        hist.append(nb)
        a = np.float32(0.5) * (a + nb)
        count += nb > 0
    o0 = a.astype(np.float64) + b + hist[0] - hist[3]
    o1 = count + hist[1].astype(np.float64) * hist[2]
    return {"out": np.stack([o0.reshape(-1), o1.reshape(-1)], axis=1).reshape(-1)}


RECORD = np.dtype([("v", "<f4", (3,)), ("tag", "<i4"), ("s", "<i2"), ("c", "i1")], align=True)


def _records(rng):
    r = np.zeros(100, RECORD)
    r["v"] = rng.uniform(-5, 5, (100, 3))
    r["tag"] = rng.integers(-1000, 1000, 100)
    r["s"] = rng.integers(-30000, 30000, 100)
    r["c"] = rng.integers(-100, 100, 100)
    return r


@case("struct_array_member.cl", global_size=100, **F32,
      args=[In("in_", RECORD, 100, gen=_records), Out("out", RECORD, 100), Out("sizes", np.int32, 4)])
def struct_array_member(in_, out, sizes):
    o = np.zeros(100, RECORD)
    v = in_["v"].astype(np.float64)
    o["v"] = np.stack([v.sum(axis=1), v[:, 2] - v[:, 0], in_["tag"]], axis=1)
    o["tag"] = in_["tag"] * 2 + in_["c"]
    o["s"] = in_["s"] - 1
    o["c"] = in_["c"] + 1
    return {"out": o, "sizes": np.array([RECORD.itemsize, 12, 88, 20], np.int32)}


@case("literals.cl", global_size=64, **F32,
      args=[In("a", np.int32, 64, 0, 1000), Out("out", np.int64, 512), Out("fout", np.float32, 256)])
def literals(a, out, fout):
    x = a.astype(np.int64)
    out = np.stack([x + 200, 2**32 - 1 - x, 2**40 + x, np.full(64, 8), x - 2**31, np.full(64, 35),
                    np.full(64, 3_000_000_000), x & 0o7777], axis=1).reshape(-1)
    f = a.astype(np.float32)
    fout = np.stack([np.float32(1e-3) * f, f + 3, np.full(64, 15.0), f / np.float32(3)], axis=1).reshape(-1)
    return {"out": out, "fout": fout}


# --------------------------------------------------------------------------------------------
# C and OpenCL corners: extension rules, vector rules, partial vector writes, scoping,
# pointer casts, IEEE specials, by-value argument layout, structs by value
# --------------------------------------------------------------------------------------------

def _exact_in_double(rng):
    """ulongs with at most 53 significant bits, so numpy's conversions through double round once."""
    mant = rng.integers(0, 2**53, 128, dtype=np.uint64)
    return (mant << rng.integers(0, 12, 128).astype(np.uint64)).astype(np.uint64)


@case("int_conversions.cl", global_size=128, needs_fp64=True,
      args=[In("c", np.int8, 128, -128, 127), In("u", np.uint32, 128, 0, 2**32 - 1),
            In("ul", np.uint64, 128, gen=_exact_in_double), In("f", np.float32, 128, 0, 4e9),
            Out("ou", np.uint32, 512), Out("ol", np.int64, 384), Out("of", np.float32, 384),
            Out("od", np.float64, 256)])
def int_conversions(c, u, ul, f, ou, ol, of, od):
    c64 = c.astype(np.int64)
    ou = np.stack([c64 % 2**32, c64 % 256, np.trunc(f.astype(np.float64)), c64 % 2**16], axis=1)
    u64 = u.astype(np.int64)
    ol = np.stack([c64, u64, np.where(u64 >= 2**31, u64 - 2**32, u64)], axis=1)
    of = np.stack([u.astype(np.float64).astype(np.float32), ul.astype(np.float64).astype(np.float32),
                   c.astype(np.float32)], axis=1)
    od = np.stack([ul.astype(np.float64), ul.view(np.int64).astype(np.float64)], axis=1)
    return {"ou": ou.reshape(-1).astype(np.uint32), "ol": ol.reshape(-1), "of": of.reshape(-1),
            "od": od.reshape(-1)}


@case("vec_int_semantics.cl", global_size=64,
      args=[In("a", np.uint8, (64, 8), 0, 255), In("b", np.uint8, (64, 8), 0, 255),
            In("x", np.int32, (64, 4), -1000, 1000, gen=lambda rng: np.where(
                rng.random((64, 4)) < 0.2, 0, rng.integers(-1000, 1000, (64, 4))).astype(np.int32)),
            In("y", np.int32, (64, 4), 0, 40),
            Out("ou", np.uint8, (192, 8)), Out("oi", np.int32, (320, 4))])
def vec_int_semantics(a, b, x, y, ou, oi):
    ou = np.stack([a * b + np.uint8(7), a << (b & 7), (a >> 3) | (b & 0x0F)], axis=1).reshape(-1, 8)
    t = lambda m: np.where(m, -1, 0)                                     # noqa: E731
    oi = np.stack([x << (y & 31), x >> (y & 31), t((x > 0) & (y > 16)), t(x == 0) | t(x <= y),
                   (x + 3) * 2 - y // 3], axis=1).reshape(-1, 4)
    return {"ou": ou, "oi": oi.astype(np.int32)}


@case("vector_lvalues.cl", global_size=96, **F32,
      args=[InOut("v", np.float32, (96, 4), -5, 5), In("s", np.float32, 96, -5, 5),
            Out("acc_out", np.float32, (288, 4))])
def vector_lvalues(v, s, acc_out):
    v = v.copy()
    v[:, 1] = s
    v[:, 2:] *= 2
    acc = np.zeros((96, 3, 4))
    acc[:, 1] = 1
    acc[:, 2] = 2
    acc[:, 1, 0] += s
    acc[:, 2, 3], acc[:, 2, 2] = s, -s
    acc[:, 0, 1] -= 1
    acc[:, 0, 3] -= 2
    return {"v": v, "acc_out": acc.reshape(-1, 4)}


@case("c_scoping.cl", global_size=128, **F32,
      args=[In("a", np.int32, 128, 0, 200), Out("out", np.int32, 768), Out("fout", np.float32, 128)])
def c_scoping(a, out, fout):
    rows = []
    for x in a.tolist():
        k = 0
        while True:
            k += 1
            if k * k > x + 50:
                break
        arr, w = [1, 2, 3], x
        while True:
            w //= 2
            if w == 0:
                break
            arr[w % 3] += 1
        rows.append([2 * x + 100, 9 + 7 + 5 + 3 + 1, k, arr[0] * 10000 + arr[1] * 100 + arr[2],
                     5 if x & 1 else 6, 6])
    return {"out": np.array(rows, np.int32).reshape(-1), "fout": a * 0.5}


@case("pointer_casts.cl", global_size=128, **F32,
      args=[In("f", np.float32, 128, -100, 100), Out("bytes", np.uint8, 512), Out("words", np.uint32, 128),
            In("w", np.float32, 3, -1, 1), Out("out", np.float32, 128)])
def pointer_casts(f, bytes, words, w, out):
    v = np.stack([f, 2 * f, np.ones_like(f)], axis=1).astype(np.float64)
    return {"bytes": f.view(np.uint8).reshape(-1, 4)[:, ::-1].reshape(-1), "words": f.view(np.uint32),
            "out": v @ w.astype(np.float64)}


def _specials(rng, shift):
    base = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 2.5, -0.5, 1e-40, 3.0, -7.0], np.float32)
    pairs = np.array(np.meshgrid(base, base)).reshape(2, -1)       # every combination, 144 of each
    return pairs[shift].astype(np.float32)


@case("nan_inf.cl", global_size=144, signed_zeros=True, rtol=1e-6, atol=0,
      args=[In("a", np.float32, 144, gen=lambda rng: _specials(rng, 0)),
            In("b", np.float32, 144, gen=lambda rng: _specials(rng, 1)),
            Out("out", np.float32, 864), Out("cmp", np.int32, 144)])
def nan_inf(a, b, out, cmp):
    """A denormal operand (1e-40) may be flushed to zero on a device without CL_FP_DENORM in
    CL_DEVICE_SINGLE_FP_CONFIG (the emulator's; the checker then also accepts the reference of
    flushed inputs, see test_kernel_corpus.check); both PoCL and numpy keep it."""
    with np.errstate(all="ignore"):
        x, y = a, b
        out = np.stack([np.fmin(x, y), np.fmax(x, y), x / y, np.sqrt(x), np.floor(x) * np.float32(0),
                        np.where(y > 0, x, -x)], axis=1).reshape(-1)
        cmp = ((x < y) * 1 | (x > y) * 2 | (x == y) * 4 | (x != y) * 8 | (x != x) * 16 | (x <= y) * 32)
    either = np.zeros((len(x), 6), bool)
    either[:, :2] = ((x == 0) & (y == 0))[:, None]     # fmin/fmax(-0, +0) may return either zero (C99 F.9.9.2)
    return {"out": np.ma.array(out, mask=either.reshape(-1)), "cmp": cmp.astype(np.int32)}


@case("scalar_args.cl", global_size=16, needs_fp64=True, rtol=1e-12, atol=0,
      args=[Scalar("c", np.int8, -100), Out("out", np.int64, 160), Scalar("uc", np.uint8, 200),
            Scalar("s", np.int16, -30000), Scalar("d", np.float64, 1.0 / 3.0), Scalar("us", np.uint16, 60000),
            Scalar("k", np.int32, -2**31 + 5), Scalar("f", np.float32, 2.75), Scalar("u", np.uint32, 4000000000),
            Scalar("l", np.int64, -2**62 - 3), Scalar("ul", np.uint64, 2**63 + 12345),
            Scalar("v", np.float32, [1.0, 2.0, 3.0, 4.0]), Out("fout", np.float64, 32)])
def scalar_args(c, out, uc, s, d, us, k, f, u, l, ul, v, fout):
    i = np.arange(16, dtype=np.int64)
    c, uc, s, us, k, u, l = (int(z) for z in (c, uc, s, us, k, u, l))
    cols = [np.full(16, z) for z in (c, uc, s, us)] + [k + i, np.full(16, u), np.full(16, l),
                                                       np.full(16, int(ul) - 2**64), np.full(16, 11),
                                                       np.full(16, c + uc + s + us + k)]
    fout = np.stack([float(d) * i, np.full(16, 4321.0)], axis=1).reshape(-1)
    return {"out": np.stack(cols, axis=1).reshape(-1), "fout": fout}


PARAMS = np.dtype([("a", np.int32), ("b", np.float32), ("c", np.float64), ("d", np.int16)], align=True)


@case("byvalue_aggregates.cl", global_size=64, needs_fp64=True,
      args=[Scalar("p", PARAMS, (7, 0.5, 2.25, -3)), Scalar("c", np.int8, [1, 2, 3, 4, 5, -6, 7, 8]),
            In("f", np.float32, 64, -4, 4), Out("out", np.float32, 256), Scalar("dd", np.float64, [5.5, 1.25]),
            Scalar("s3", np.int16, [1, 2, -300, 0]), Out("bits", np.int64, 128)])
def byvalue_aggregates(p, c, f, out, dd, s3, bits):
    i = np.arange(64, dtype=np.float32)
    cols = [np.float32(7) + np.float32(0.5) * i, np.full(64, 2.25 - 3), np.full(64, 1 - 60 + 800 - 300),
            np.full(64, 5.5 - 1.25)]
    pairs = np.stack([f, np.float32(-2) * f], axis=1).view(np.int64).reshape(-1)
    swapped = f.view(np.int32).byteswap().astype(np.int64)
    return {"out": np.stack(cols, axis=1).astype(np.float32).reshape(-1),
            "bits": np.stack([pairs, swapped], axis=1).reshape(-1)}


@case("struct_return.cl", global_size=100, **F32,
      args=[In("xs", np.float32, 300, 0, 2), Out("out", np.float32, 300), Out("ids", np.int32, 100)])
def struct_return(xs, out, ids):
    x = xs.reshape(-1, 3)
    a_wins = x[:, 2] >= 1.0
    i = np.arange(100)
    pos = np.where(a_wins[:, None], x[:, :2], np.stack([-x[:, 1], x[:, 0]], axis=1))
    out = np.concatenate([pos, np.where(a_wins, x[:, 2], 1.0)[:, None]], axis=1).reshape(-1)
    return {"out": out, "ids": np.where(a_wins, i, -i).astype(np.int32)}


# --------------------------------------------------------------------------------------------
# Harder for a work-group executor: group-decided loops with barriers, big private state,
# aliasing, attributes, keyword spellings, vector conversions, unaligned vload, struct layout
# --------------------------------------------------------------------------------------------

def _colours(rng):
    runs = rng.integers(1, 12, 400)
    return np.repeat(rng.integers(0, 3, 400), runs)[:384].astype(np.int32)


@case("local_converge.cl", global_size=384, local_size=64,
      args=[In("colour", np.int32, 384, gen=_colours), Out("label", np.int32, 384), Out("rounds", np.int32, 6)])
def local_converge(colour, label, rounds):
    labels, rs = [], []
    for col in colour.reshape(6, 64):
        lab = np.arange(64)
        r = 0
        while True:
            left = np.where(np.r_[False, col[1:] == col[:-1]], np.r_[lab[0], lab[:-1]], lab)
            right = np.where(np.r_[col[:-1] == col[1:], False], np.r_[lab[1:], lab[-1]], lab)
            new = np.minimum(lab, np.minimum(left, right))
            r += 1
            changed = (new != lab).any()
            lab = new
            if not changed:
                break
        labels.append(lab)
        rs.append(r)
    return {"label": np.concatenate(labels).astype(np.int32), "rounds": np.array(rs, np.int32)}


@case("private_big.cl", global_size=256, local_size=64, rtol=1e-5, atol=1e-5,
      args=[In("in_", np.float32, (256, 48), -1, 1), Out("out", np.float32, (256, 48)), Local("shared", 256)])
def private_big(in_, out):
    s = in_.astype(np.float64).sum(axis=1).reshape(4, 64)
    neighbour = np.roll(s, -1, axis=1).reshape(-1)
    return {"out": in_[:, ::-1] * neighbour[:, None]}


@case("alias_args.cl", global_size=200, **F32,
      args=[InOut("x", np.float32, 200, -5, 5), Same("y", "x"), Scalar("a", np.float32, 1.5)])
def alias_args(x, a):
    return {"x": a * x.astype(np.float64) + x}


@case("side_effects.cl", global_size=128,
      args=[InOut("a", np.int32, 128, -100, 100), InOut("b", np.int32, 128, -100, 100),
            In("sel", np.int32, 128, -20, 20), Out("out", np.int32, 384)])
def side_effects(a, b, sel, out):
    pos = sel > 0
    r = np.where(pos, a, b)
    acc = np.array([sum(k * k for k in range(s & 15)) for s in sel.tolist()])
    out = np.stack([r, acc, np.full(128, 906)], axis=1).reshape(-1).astype(np.int32)
    return {"a": a + pos.astype(np.int32), "b": b - (~pos).astype(np.int32), "out": out}


@case("reqd_wg_size.cl", global_size=(64, 8), local_size=(32, 2),
      args=[In("in_", np.float32, (8, 64), -1, 1), Out("out", np.float32, (8, 64))])
def reqd_wg_size(in_, out):
    t = in_.reshape(4, 2, 2, 32)                          # (group y, ly, group x, lx)
    return {"out": t[:, ::-1, :, ::-1].reshape(8, 64)}


@case("no_underscores.cl", global_size=128, local_size=32, **F32,
      args=[In("in_", np.float32, 128, -1, 1), In("in2", np.float32, 128, -1, 1), Out("out", np.float32, 128),
            In("c", np.float32, 1, 0.5, 2), Local("tmp", 128)])
def no_underscores(in_, in2, out, c):
    return {"out": 2.0 * (in_.astype(np.float64) + in2) * c[0]}


def _vec_floats(rng):
    special = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 255.5, 254.5, 256.0, -3.7, 3.7, np.nan, 1e9], np.float32)
    return np.concatenate([special, rng.uniform(-50, 300, 64 * 4 - len(special)).astype(np.float32)]).reshape(64, 4)


@case("vec_convert.cl", global_size=64, **F32,
      args=[In("f", np.float32, (64, 4), gen=_vec_floats), In("k", np.int32, (64, 4), -100000, 100000),
            Out("u", np.uint8, (128, 4)), Out("r", np.int32, (128, 4), fill=None), Out("fo", np.float32, (64, 4)),
            Out("s", np.int16, (64, 8)), Out("bytes", np.uint8, (64, 16))])
def vec_convert(f, k, u, r, fo, s, bytes):
    x = f.astype(np.float64)
    finite = np.isfinite(x)
    u = np.stack([_sat(np.trunc(x), np.uint8), _sat(np.rint(x), np.uint8)], axis=1).reshape(-1, 4)
    # non-saturating float -> int of NaN is undefined: those lanes are not compared
    with np.errstate(invalid="ignore"):
        r = np.stack([np.floor(np.where(finite, x, 0)), np.ceil(np.where(finite, x, 0))], axis=1).reshape(-1, 4)
    r_mask = np.stack([~finite, ~finite], axis=1).reshape(-1, 4)
    s = _sat(np.concatenate([k, k.astype(np.int64) * 1000], axis=1), np.int16)
    return {"u": u.astype(np.uint8), "r": np.ma.array(r.astype(np.int32), mask=r_mask),
            "fo": k.astype(np.float32) * np.float32(0.5), "s": s.astype(np.int16), "bytes": f.view(np.uint8)}


@case("vload_unaligned.cl", global_size=64, **F32,
      args=[In("a", np.float32, 200, -5, 5), Out("out", np.float32, 320), In("h", np.int16, 65, -1000, 1000),
            Out("hout", np.int16, 192)])
def vload_unaligned(a, out, h, hout):
    out, hout = out.copy(), hout.copy()
    for i in range(64):
        v = a[i:i + 4].astype(np.float64)
        w = a[3 * i + 1:3 * i + 9].astype(np.float64)
        out[5 * i + 1:5 * i + 5] = v + w[:4] + w[4:]
        hout[3 * i + 1:3 * i + 3] = h[i:i + 2] * 3
    return {"out": out, "hout": hout}


ITEM = np.dtype({"names": ["tag", "pos", "mass", "cell"], "formats": ["i1", ("<f4", (4,)), "<f8", ("<i2", (2,))],
                 "offsets": [0, 16, 32, 40], "itemsize": 48})


def _items(rng):
    t = np.zeros(64, ITEM)
    t["tag"] = rng.integers(-10, 10, 64)
    t["pos"] = rng.uniform(-3, 3, (64, 4))
    t["mass"] = rng.uniform(0, 10, 64)
    t["cell"] = rng.integers(-500, 500, (64, 2))
    return t


@case("struct_align.cl", global_size=64, needs_fp64=True, **F32,
      args=[In("in_", ITEM, 64, gen=_items), Out("out", ITEM, 64), Out("layout", np.int32, 4)])
def struct_align(in_, out, layout):
    o = np.zeros(64, ITEM)
    o["pos"] = in_["pos"][:, ::-1] * in_["tag"][:, None].astype(np.float32)
    o["mass"] = in_["mass"] * 2 + in_["cell"][:, 0]
    o["cell"] = in_["cell"][:, ::-1]
    o["tag"] = in_["tag"] + 1
    return {"out": o, "layout": np.array([48, 16, 32, 40], np.int32)}


@case("many_args.cl", global_size=100,
      args=[*(In(f"a{k}", np.int32, 100, -1000, 1000) for k in range(8)),
            *(Out(f"o{k}", np.int32, 100) for k in range(8)),
            Scalar("s0", np.int32, 7), Scalar("s1", np.int32, -9), Scalar("s2", np.int32, 3), Scalar("s3", np.int32, 0x5A5A)])
def many_args(a0, a1, a2, a3, a4, a5, a6, a7, o0, o1, o2, o3, o4, o5, o6, o7, s0, s1, s2, s3):
    return {"o0": a0 + s0, "o1": a1 - s1, "o2": a2 * s2, "o3": a3 ^ s3,
            "o4": a4 + a0, "o5": a5 - a1, "o6": a6 * a2, "o7": a7 | a3}


# --------------------------------------------------------------------------------------------
# Cases that found bugs (in mncl or in PoCL) through the random differential tests
# --------------------------------------------------------------------------------------------

def _with_edges(dtype, edges, n):
    def gen(rng):
        info = np.iinfo(dtype)
        v = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
        v[:len(edges)] = edges
        return v
    return gen


@case("abs_min.cl", global_size=64,
      xfail_pocl="PoCL 6 folds abs(INT_MIN) as poison: (long)as_int(abs(INT_MIN)) comes out zero-extended",
      args=[In("a", np.int32, 64, gen=_with_edges(np.int32, [-2**31, -2**31 + 1, 0, -1, 2**31 - 1], 64)),
            In("l", np.int64, 64, gen=_with_edges(np.int64, [-2**63, -2**63 + 1, 0, -1, 2**63 - 1], 64)),
            In("c", np.int8, 64, gen=_with_edges(np.int8, [-128, -127, 0, -1, 127], 64)),
            Out("u", np.uint32, 64), Out("wide", np.int64, 192), Out("sel", np.int32, 64)])
def abs_min(a, l, c, u, wide, sel):
    x, y, z = (v.astype(object) for v in (a, l, c))     # exact integers
    ax = np.array([abs(v) for v in x], dtype=object)
    w0 = [v - 2**32 if v >= 2**31 else v for v in ax]
    w1 = [abs(v) - 2**64 if abs(v) >= 2**63 else abs(v) for v in y]
    w2 = [abs(v) - 256 if abs(v) >= 128 else abs(v) for v in z]
    wide = np.array([w0, w1, w2], dtype=np.int64).T.reshape(-1)
    sel = np.where(a == 0, 7 + 10, 9 + 20).astype(np.int32)
    return {"u": ax.astype(np.uint32), "wide": wide, "sel": sel}


def _with_zeros(rng):
    v = rng.integers(-1000, 1000, (64, 4), endpoint=True).astype(np.int32)
    v[rng.random((64, 4)) < 0.2] = 0
    return v


@case("swizzle_rvalues.cl", global_size=64,
      args=[In("a", np.int32, (64, 4), gen=_with_zeros), In("b", np.int32, (64, 4), -1000, 1000),
            Out("out", np.int32, (320, 4))])
def swizzle_rvalues(a, b, out):
    x, y = a.astype(np.int64), b.astype(np.int64)
    i = np.arange(64)
    r0 = np.stack([-x[:, 1], -x[:, 0], ~y[:, 2], ~y[:, 3]], axis=1)
    r1 = np.stack([(x + y)[:, 3], np.maximum(x, y)[:, 2], i, 2 * x[:, 3]], axis=1)
    r2 = np.where((i & 1)[:, None] == 1, x, y)[:, ::-1]
    r3 = np.stack([x[:, 1], x[:, 0], y[:, 3], x[:, 2]], axis=1)
    r4 = np.stack([np.where(x[:, 0] == 0, -1, 0), y[:, 1], np.abs(x[:, 2]), x[:, 0]], axis=1)
    return {"out": np.stack([r0, r1, r2, r3, r4], axis=1).reshape(-1, 4).astype(np.int32)}
