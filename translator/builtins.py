"""OpenCL C built-in functions, lowered to LLVM IR.

Takes the ``Lowering`` (for its builder, conversions and diagnostics), the
builtin's name and argument AST nodes.  Gives an ``RV`` or ``None`` when the
name is not a builtin.  Work-item functions read the work-group ABI block
(``wg``) and the local-id triple; math uses LLVM intrinsics (``llvm.sqrt``,
``llvm.exp`` ... which the JIT lowers to libm calls, or to instructions) and, for
the rest, the C library's single/double functions (``tanf``, ``atan2`` ...),
which an in-process JIT resolves once libm is loaded
(``llvm.load_library_permanently(ctypes.util.find_library('m'))``).  Every
function that takes a gentype works on scalars and on vectors (component by
component).  docs/language.md lists every builtin and its accuracy.
"""
from __future__ import annotations

import math
import re

from llvmlite import ir

from . import cltypes as T
from .cltypes import DOUBLE, FLOAT, INT, LONG, UINT, ULONG, Vector
from .values import RV

I1, I8, I32, I64 = ir.IntType(1), ir.IntType(8), ir.IntType(32), ir.IntType(64)

WORK_ITEM = {"get_work_dim", "get_global_size", "get_global_id", "get_local_size", "get_local_id",
             "get_num_groups", "get_group_id", "get_global_offset", "get_enqueued_local_size",
             "get_global_linear_id", "get_local_linear_id"}
SYNC = {"barrier", "work_group_barrier", "mem_fence", "read_mem_fence", "write_mem_fence", "wait_group_events"}
ASYNC = {"async_work_group_copy": 4, "async_work_group_strided_copy": 5}

# name -> (llvm intrinsic base or None, libm name base or None)
UNARY_INTR = {"sqrt": "llvm.sqrt", "exp": "llvm.exp", "exp2": "llvm.exp2", "log": "llvm.log",
              "log2": "llvm.log2", "log10": "llvm.log10", "sin": "llvm.sin", "cos": "llvm.cos",
              "fabs": "llvm.fabs", "floor": "llvm.floor", "ceil": "llvm.ceil", "trunc": "llvm.trunc",
              "rint": "llvm.rint", "round": "llvm.round"}
UNARY_LIBM = {"tan": "tan", "asin": "asin", "acos": "acos", "atan": "atan", "sinh": "sinh",
              "cosh": "cosh", "tanh": "tanh", "asinh": "asinh", "acosh": "acosh", "atanh": "atanh",
              "cbrt": "cbrt", "erf": "erf", "erfc": "erfc", "expm1": "expm1", "log1p": "log1p",
              "lgamma": "lgamma", "tgamma": "tgamma", "exp10": "exp10", "logb": "logb"}
BINARY_INTR = {"pow": "llvm.pow", "powr": "llvm.pow", "fmin": "llvm.minnum", "fmax": "llvm.maxnum",
               "copysign": "llvm.copysign"}
BINARY_LIBM = {"atan2": "atan2", "hypot": "hypot", "fdim": "fdim", "nextafter": "nextafter",
               "remainder": "remainder"}
NATIVE = {"cos", "exp", "exp2", "exp10", "log", "log2", "log10", "powr", "recip", "rsqrt", "sin",
          "sqrt", "tan", "divide"}
PI_FUNCS = {"sinpi": "sin", "cospi": "cos", "tanpi": "tan"}
INV_PI_FUNCS = {"asinpi": "asin", "acospi": "acos", "atanpi": "atan"}
MATH_OTHER = {"ilogb", "shuffle", "shuffle2", "rsqrt", "fmod", "fma", "mad", "pown", "rootn", "ldexp", "atan2pi", "maxmag", "minmag",
              "recip", "divide"}
COMMON = {"clamp", "degrees", "radians", "max", "min", "mix", "step", "smoothstep", "sign"}
INTEGER = {"abs", "abs_diff", "add_sat", "sub_sat", "hadd", "rhadd", "clz", "ctz", "popcount",
           "mad24", "mul24", "mul_hi", "mad_hi", "rotate", "upsample", "mad_sat"}
GEOMETRIC = {"dot", "cross", "length", "distance", "normalize", "fast_length", "fast_distance",
             "fast_normalize"}
RELATIONAL = {"isequal", "isnotequal", "isgreater", "isgreaterequal", "isless", "islessequal",
              "islessgreater", "isordered", "isunordered", "isfinite", "isinf", "isnan", "isnormal",
              "signbit", "any", "all", "select", "bitselect"}
ATOMIC_OPS = {"add": "add", "sub": "sub", "xchg": "xchg", "inc": "add", "dec": "sub", "min": "min",
              "max": "max", "and": "and", "or": "or", "xor": "xor", "cmpxchg": None}
SPECIAL = {"__builtin_inff", "__builtin_huge_valf", "__builtin_huge_val", "__builtin_nanf", "nan"}
UNSUPPORTED = {"printf": "printf is not supported",
               "prefetch": None,
               "read_imagef": "images are not supported", "write_imagef": "images are not supported",
               "read_imagei": "images are not supported", "write_imagei": "images are not supported"}
PTR_OUT = {"fract": 2, "modf": 2, "sincos": 2, "frexp": 2, "remquo": 3, "lgamma_r": 2}
# the ones libm computes, with an int through their last argument (glibc's lgammaf_r is lgamma_r's)
LIBM_INT_OUT = {"frexp": ("frexpf", "frexp"), "remquo": ("remquof", "remquo"), "lgamma_r": ("lgammaf_r", "lgamma_r")}

_CONVERT_RE = re.compile(r"convert_([a-z]+?)(2|3|4|8|16)?(_sat)?(_rte|_rtz|_rtp|_rtn)?$")
_AS_RE = re.compile(r"as_([a-z]+?)(2|3|4|8|16)?$")
_VLOAD_RE = re.compile(r"(vload|vstore)(2|3|4|8|16)$")
_VHALF_RE = re.compile(r"(vloada?_half|vstorea?_half)(2|3|4|8|16)?(_rte|_rtz|_rtp|_rtn)?$")


def _base_name(name):
    for p in ("native_", "half_"):
        if name.startswith(p) and name[len(p):] in NATIVE:
            return name[len(p):]
    return name


def is_builtin(name):
    n = _base_name(name)
    if name in WORK_ITEM or name in SYNC or name in SPECIAL:
        return True
    if n in UNARY_INTR or n in UNARY_LIBM or n in BINARY_INTR or n in BINARY_LIBM or n in PI_FUNCS \
            or n in INV_PI_FUNCS or n in MATH_OTHER or n in COMMON or n in INTEGER or n in GEOMETRIC \
            or n in RELATIONAL:
        return True
    m = _CONVERT_RE.match(name) or _AS_RE.match(name)
    if m and m.group(1) in T.SCALARS and m.group(1) != "bool":
        return True
    if _VLOAD_RE.match(name) or _VHALF_RE.match(name):
        return True
    if name.startswith(("atomic_", "atom_")):
        return True
    return name in UNSUPPORTED or name in PTR_OUT or name in ASYNC


def constant(lw, name):
    return None


ARITY = {}
for _n in UNARY_INTR:
    ARITY[_n] = 1
for _n in UNARY_LIBM:
    ARITY[_n] = 1
for _n in list(PI_FUNCS) + list(INV_PI_FUNCS) + ["rsqrt", "recip", "degrees", "radians", "sign",
                                                    "abs", "clz", "ctz", "popcount", "length",
                                                    "normalize", "fast_length", "fast_normalize",
                                                    "isfinite", "isinf", "isnan", "isnormal",
                                                    "signbit", "any", "all"]:
    ARITY[_n] = 1
for _n in list(BINARY_INTR) + list(BINARY_LIBM) + ["fmod", "pown", "rootn", "ldexp", "atan2pi",
                                                     "maxmag", "minmag", "divide", "max", "min",
                                                     "step", "abs_diff", "add_sat", "sub_sat",
                                                     "hadd", "rhadd", "mul24", "mul_hi", "rotate",
                                                     "upsample", "dot", "cross", "distance",
                                                     "fast_distance", "isequal", "isnotequal",
                                                     "isgreater", "isgreaterequal", "isless",
                                                     "islessequal", "islessgreater", "isordered",
                                                     "isunordered"]:
    ARITY[_n] = 2
for _n in ["fma", "mad", "clamp", "mix", "smoothstep", "mad24", "mad_hi", "mad_sat", "select",
           "bitselect"]:
    ARITY[_n] = 3


def call(lw, name, args, node):
    if name in UNSUPPORTED:
        msg = UNSUPPORTED[name]
        if msg is None:
            return RV(T.VOID, None)
        lw.error(node, msg)
    if not is_builtin(name):
        return None
    B = _Builtins(lw, node)
    base = _base_name(name)
    exp = ARITY.get(base)
    if exp is not None and len(args) != exp:
        _arity(lw, node, name, exp, len(args))
    if name in WORK_ITEM:
        return B.work_item(name, args)
    if name in SYNC:
        return B.sync(name, args)
    if name in SPECIAL:
        return B.special(name, args)
    m = _CONVERT_RE.match(name)
    if m:
        return B.convert_fn(name, m, args)
    m = _AS_RE.match(name)
    if m:
        return B.as_fn(name, m, args)
    m = _VLOAD_RE.match(name)
    if m:
        return B.vloadstore(m.group(1), int(m.group(2)), args, name)
    m = _VHALF_RE.match(name)
    if m:
        return B.vhalf(m.group(1), int(m.group(2) or 1), m.group(3), args, name)
    if name.startswith(("atomic_", "atom_")):
        return B.atomic(name, args)
    if name in ASYNC:
        if len(args) != ASYNC[name]:
            _arity(lw, node, name, ASYNC[name], len(args))
        return B.async_copy(name, args)
    if name in PTR_OUT:
        if len(args) != PTR_OUT[name]:
            _arity(lw, node, name, PTR_OUT[name], len(args))
        return B.ptr_out(name, args)
    vals = [lw.expr(a) for a in args]
    for v, a in zip(vals, args):
        if v.type.is_void:
            lw.error(a, "void value used where a value is required")
    return B.math(base, name, vals, args)


def _arity(lw, node, name, exp, got):
    lw.error(node, f"too {'few' if got < exp else 'many'} arguments to function call '{name}', expected {exp}, have {got}")


class _Builtins:
    def __init__(self, lw, node):
        self.lw, self.node, self.b = lw, node, lw.b

    def err(self, msg, node=None):
        self.lw.error(node or self.node, msg)

    # ---------------------------------------------------------------- helpers
    def intrinsic(self, base, lty, nargs=1, ret=None):
        suffix = self.mangle(lty)
        name = f"{base}.{suffix}"
        mod = self.lw.module
        if name in mod.globals:
            return mod.globals[name]
        fnty = ir.FunctionType(ret or lty, [lty] * nargs)
        return ir.Function(mod, fnty, name=name)

    def intrinsic_t(self, name, ret, argtys):
        mod = self.lw.module
        if name in mod.globals:
            return mod.globals[name]
        return ir.Function(mod, ir.FunctionType(ret, argtys), name=name)

    @staticmethod
    def mangle(lty):
        if isinstance(lty, ir.VectorType):
            return f"v{lty.count}{_Builtins.mangle(lty.element)}"
        if isinstance(lty, ir.FloatType):
            return "f32"
        if isinstance(lty, ir.DoubleType):
            return "f64"
        if isinstance(lty, ir.IntType):
            return f"i{lty.width}"
        raise ValueError(lty)

    def libm(self, base, t, vals):
        """Call the C library's function on each component."""
        et = T.elem_of(t)
        fname = base + ("f" if et == FLOAT else "")
        lty = et.llvm_type()
        fn = self.intrinsic_t(fname, lty, [v.type if not isinstance(v.type, ir.VectorType) else v.type.element for v in vals])
        if t.is_vector:
            out = ir.Constant(t.llvm_type(), None)
            for k in range(t.n):
                idx = ir.Constant(I32, k)
                r = self.b.call(fn, [self.b.extract_element(v, idx) for v in vals])
                out = self.b.insert_element(out, r, idx)
            return out
        return self.b.call(fn, vals)

    def const(self, t, value):
        lty = t.llvm_type()
        et = T.elem_of(t)
        if t.is_vector:
            return ir.Constant(lty, [value] * t.n)
        return ir.Constant(lty, value)

    def floatify(self, vals, args, n=None):
        """gentype float arguments: the common float type (integers convert to float)."""
        t = None
        for v in vals:
            vt = v.type
            if not vt.arith():
                self.err(f"invalid argument of type '{vt}'")
            if t is None:
                t = vt
            else:
                t = self._merge(t, vt)
        et = T.elem_of(t)
        if not et.is_float:
            et = FLOAT
            t = Vector(FLOAT, t.n) if t.is_vector else FLOAT
        return t, [self.lw.convert(v, t, a) for v, a in zip(vals, args)]

    def _merge(self, a, b):
        if a.is_vector and b.is_vector:
            if a.n != b.n:
                self.err(f"no matching builtin for arguments of types '{a}' and '{b}'")
            e = T.common_scalar(a.elem, b.elem)
            if e != a.elem and e != b.elem:
                e = a.elem
            return Vector(e, a.n)
        if a.is_vector:
            return a if not (b.is_float and a.is_integer) else Vector(b, a.n)
        if b.is_vector:
            return b if not (a.is_float and b.is_integer) else Vector(a, b.n)
        # a builtin's overload of the arguments' own type when they agree: no integer promotion
        # (sub_sat(ushort, ushort) saturates at 0 and 65535, not at int's limits)
        return a if a == b else T.common_scalar(a, b)

    def ints(self, vals, args):
        t = None
        for v in vals:
            if not v.type.arith():
                self.err(f"invalid argument of type '{v.type}'")
            t = v.type if t is None else self._merge(t, v.type)
        if not T.elem_of(t).is_integer:
            self.err(f"'{self.node.name.name}' requires integer arguments")
        return t, [self.lw.convert(v, t, a) for v, a in zip(vals, args)]

    def cmp_result(self, t, i1):
        if t.is_vector:
            rt = Vector(T.INT_OF_BITS[t.elem.bits], t.n)
            return RV(rt, self.b.sext(i1, rt.llvm_type()))
        return RV(INT, self.b.zext(i1, I32))

    def select_min(self, t, x, y, want_max):
        b = self.b
        et = T.elem_of(t)
        if et.is_float:
            return self.b.call(self.intrinsic("llvm.maxnum" if want_max else "llvm.minnum", t.llvm_type(), 2), [x, y])
        op = ">" if want_max else "<"
        c = b.icmp_signed(op, x, y) if et.signed else b.icmp_unsigned(op, x, y)
        return b.select(c, x, y)

    # ---------------------------------------------------------------- work-items
    def work_item(self, name, args):
        lw, b = self.lw, self.b
        ctx = lw.ctx
        if name in ("get_work_dim",):
            if args:
                _arity(lw, self.node, name, 0, len(args))
            return RV(UINT, b.trunc(self.wgval(0), I32))
        if name in ("get_global_linear_id", "get_local_linear_id"):
            if args:
                _arity(lw, self.node, name, 0, len(args))
            lid = [b.load(b.gep(ctx.lid, [ir.Constant(I32, 0), ir.Constant(I32, d)])) for d in range(3)]
            if name == "get_local_linear_id":
                ls = [self.wgval(4 + d) for d in range(3)]
                return RV(ULONG, b.add(b.mul(b.add(b.mul(lid[2], ls[1]), lid[1]), ls[0]), lid[0]))
            gid = [self.gid(d, lid[d]) for d in range(3)]
            gs = [self.wgval(1 + d) for d in range(3)]
            off = [self.wgval(10 + d) for d in range(3)]
            g = [b.sub(gid[d], off[d]) for d in range(3)]
            return RV(ULONG, b.add(b.mul(b.add(b.mul(g[2], gs[1]), g[1]), gs[0]), g[0]))
        if len(args) != 1:
            _arity(lw, self.node, name, 1, len(args))
        dv = lw.expr(args[0])
        if not (dv.type.is_scalar and dv.type.is_integer):
            self.err(f"argument to '{name}' must be an integer dimension", args[0])
        d = lw.const_eval(args[0])
        defaults = {"get_global_size": 1, "get_local_size": 1, "get_num_groups": 1, "get_enqueued_local_size": 1}
        dflt = defaults.get(name, 0)

        def one(k):
            if name == "get_local_id":
                return b.load(b.gep(ctx.lid, [ir.Constant(I32, 0), ir.Constant(I32, k)]))
            if name == "get_global_id":
                return self.gid(k, b.load(b.gep(ctx.lid, [ir.Constant(I32, 0), ir.Constant(I32, k)])))
            off = {"get_global_size": 1, "get_local_size": 4, "get_enqueued_local_size": 4,
                   "get_group_id": 7, "get_global_offset": 10, "get_num_groups": 13}[name]
            return self.wgval(off + k)
        if isinstance(d, int) and not isinstance(d, bool):
            if 0 <= d < 3:
                return RV(ULONG, one(d))
            return RV(ULONG, ir.Constant(I64, dflt))
        di = lw.convert(dv, UINT, args[0]).v
        r = ir.Constant(I64, dflt)
        for k in (2, 1, 0):
            r = b.select(b.icmp_unsigned("==", di, ir.Constant(I32, k)), one(k), r)
        return RV(ULONG, r)

    def wgval(self, i):
        b = self.b
        return b.load(b.gep(self.lw.ctx.wg, [ir.Constant(I64, i)]))

    def gid(self, d, lid):
        b = self.b
        if self.lw.spmd:    # the SIMD backend computes global ids directly (K__wi's ids[3 + d])
            return b.load(b.gep(self.lw.ctx.lid, [ir.Constant(I32, 0), ir.Constant(I32, 3 + d)]))
        return b.add(b.add(b.mul(self.wgval(7 + d), self.wgval(4 + d)), lid), self.wgval(10 + d))

    def sync(self, name, args):
        lw = self.lw
        if name in ("barrier", "work_group_barrier", "wait_group_events") and lw.spmd:
            # every work-item reaches the call itself (also inside a helper): one __mncl_barrier
            if name == "wait_group_events":
                if len(args) != 2:
                    _arity(lw, self.node, name, 2, len(args))
                for a in args:
                    lw.expr(a)
                # the group's async copies are complete: they wrote __local or __global memory
                flags = ir.Constant(I32, 3)     # CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE
            else:
                if len(args) not in (1, 2) or (len(args) == 2 and name == "barrier"):
                    _arity(lw, self.node, name, 1, len(args))
                vals = [lw.expr(a) for a in args]
                for v, a in zip(vals, args):
                    if not (v.type.is_scalar and v.type.is_integer):
                        self.err("barrier() flags must be an integer (CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)", a)
                flags = lw.convert(vals[0], UINT, args[0]).v
            self.b.call(lw.spmd_intrinsic("__mncl_barrier", ir.VoidType(), [I32]), [flags])
            return RV(T.VOID, None)
        if name in ("barrier", "work_group_barrier", "wait_group_events"):
            # reached only when the barrier is not where group mode can split (already diagnosed)
            self.err("barrier() must be a statement of its own")
        if len(args) != 1:
            _arity(lw, self.node, name, 1, len(args))
        lw.expr(args[0])
        self.b.fence("seq_cst")
        return RV(T.VOID, None)

    def special(self, name, args):
        if name == "nan":
            if len(args) != 1:
                _arity(self.lw, self.node, name, 1, len(args))
            v = self.lw.expr(args[0])
            t = FLOAT if T.elem_of(v.type).bits <= 32 else DOUBLE
            t = Vector(t, v.type.n) if v.type.is_vector else t
            return RV(t, self.const(t, float("nan")))
        if args:
            _arity(self.lw, self.node, name, 0, len(args))
        if name == "__builtin_nanf":
            return RV(FLOAT, ir.Constant(ir.FloatType(), float("nan")))
        if name == "__builtin_huge_val":
            return RV(DOUBLE, ir.Constant(ir.DoubleType(), float("inf")))
        return RV(FLOAT, ir.Constant(ir.FloatType(), float("inf")))

    # ---------------------------------------------------------------- conversions
    def convert_fn(self, name, m, args):
        lw, b = self.lw, self.b
        ename, n, sat, rnd = m.group(1), m.group(2), m.group(3), m.group(4)
        et = T.SCALARS.get(ename)
        if et is None or et.is_bool:
            self.err(f"call to undeclared function '{name}'", self.node.name)
        if len(args) != 1:
            _arity(lw, self.node, name, 1, len(args))
        v = lw.expr(args[0])
        st = v.type
        if not st.arith():
            self.err(f"invalid argument of type '{st}' to '{name}'", args[0])
        n = int(n) if n else None
        if (n or 1) != (st.n if st.is_vector else 1):
            self.err(f"'{name}' expects a {'scalar' if n is None else f'{n}-component vector'} argument, got '{st}'", args[0])
        if sat and et.is_float:
            self.err(f"'{name}': saturation is only allowed for integer destination types")
        tt = Vector(et, n) if n else et
        se = T.elem_of(st)
        x = v.v
        if se.is_float and et.is_integer:
            if rnd == "_rte":
                x = b.call(self.intrinsic("llvm.rint", x.type), [x])
            elif rnd == "_rtp":
                x = b.call(self.intrinsic("llvm.ceil", x.type), [x])
            elif rnd == "_rtn":
                x = b.call(self.intrinsic("llvm.floor", x.type), [x])
            if not sat:
                return RV(tt, lw.cvt_value(x, se, et, n))
            lo = -(2 ** (et.bits - 1)) if et.signed else 0
            hi_excl = 2 ** (et.bits - 1) if et.signed else 2 ** et.bits
            ft = x.type
            lo_c = self.const(st, float(lo))
            hi_c = self.const(st, float(hi_excl))
            safe = b.select(b.fcmp_ordered(">=", x, lo_c), x, lo_c)
            # values >= 2^bits (or 2^(bits-1)) saturate to the maximum; NaN -> 0
            hi_f = b.fcmp_ordered(">=", x, hi_c)
            safe = b.select(hi_f, lo_c, safe)
            nan = b.fcmp_unordered("uno", x, x)
            safe = b.select(nan, self.const(st, 0.0), safe)
            r = lw.cvt_value(safe, se, et, n)
            r = b.select(hi_f, self.const(tt, (1 << (et.bits - 1)) - 1 if et.signed else (1 << et.bits) - 1), r)
            return RV(tt, r)
        if se.is_integer and et.is_integer and sat:
            return RV(tt, self.int_sat(x, se, et, st, tt, n))
        if et.is_float and rnd in ("_rtz", "_rtp", "_rtn"):
            return RV(tt, self.directed_float(x, se, et, st, tt, n, rnd))
        return RV(tt, lw.cvt_value(x, se, et, n))

    def directed_float(self, x, se, et, st, tt, n, rnd):
        """Integer or double -> float (or long -> double) with a directed rounding mode:
        round to nearest, compare exactly with the source, and step one ulp if needed."""
        lw, b = self.lw, self.b
        r = lw.cvt_value(x, se, et, n)
        exact_bits = 24 if et == FLOAT else 53
        if se.is_integer and se.bits - (1 if se.signed else 0) <= exact_bits:
            return r                                       # always exact
        if se.is_float and se.bits <= et.bits:
            return r
        if se.is_float:                                    # double -> float
            back = lw.cvt_value(r, et, se, n)
            gt, lt = b.fcmp_ordered(">", back, x), b.fcmp_ordered("<", back, x)
        elif se.bits <= 32:                                # exact in double
            dt = Vector(DOUBLE, n) if n else DOUBLE
            xd = lw.cvt_value(x, se, DOUBLE, n)
            rd = lw.cvt_value(r, et, DOUBLE, n)
            gt, lt = b.fcmp_ordered(">", rd, xd), b.fcmp_ordered("<", rd, xd)
        else:                                              # 64-bit integers
            limit = self.const(tt, 2.0 ** 63 if se.signed else 2.0 ** 64)
            big = b.fcmp_ordered(">=", r, limit)
            safe = b.select(big, self.const(tt, 0.0), r)
            back = lw.cvt_value(safe, et, se, n)
            cmp = b.icmp_signed if se.signed else b.icmp_unsigned
            gt = b.or_(big, cmp(">", back, x))
            lt = b.and_(b.not_(big), cmp("<", back, x))
        ib = ir.IntType(et.bits)
        ity = ir.VectorType(ib, n) if n else ib
        one = ir.Constant(ity, [1] * n) if n else ir.Constant(ib, 1)
        bits = b.bitcast(r, ity)
        pos = b.fcmp_ordered(">", r, self.const(tt, 0.0))
        toward_zero = b.sub(bits, one)
        up = b.select(pos, b.add(bits, one), b.sub(bits, one))
        down = b.select(pos, b.sub(bits, one), b.add(bits, one))
        if rnd == "_rtz":
            neg = b.fcmp_ordered("<", r, self.const(tt, 0.0))
            need = b.or_(b.and_(gt, pos), b.and_(lt, neg))
            out = b.select(need, toward_zero, bits)
        elif rnd == "_rtp":
            out = b.select(lt, up, bits)
        else:
            out = b.select(gt, down, bits)
        return b.bitcast(out, tt.llvm_type())

    def int_sat(self, x, se, et, st, tt, n):
        b = self.b
        smin = -(1 << (se.bits - 1)) if se.signed else 0
        smax = (1 << (se.bits - 1)) - 1 if se.signed else (1 << se.bits) - 1
        dmin = -(1 << (et.bits - 1)) if et.signed else 0
        dmax = (1 << (et.bits - 1)) - 1 if et.signed else (1 << et.bits) - 1
        lo, hi = max(smin, dmin), min(smax, dmax)
        if lo > smin:
            c = self.const(st, lo & ((1 << se.bits) - 1))
            lt = b.icmp_signed("<", x, c) if se.signed else b.icmp_unsigned("<", x, c)
            x = b.select(lt, c, x)
        if hi < smax:
            c = self.const(st, hi & ((1 << se.bits) - 1))
            gt = b.icmp_signed(">", x, c) if se.signed else b.icmp_unsigned(">", x, c)
            x = b.select(gt, c, x)
        return self.lw.cvt_value(x, se, et, n)

    def as_fn(self, name, m, args):
        lw, b = self.lw, self.b
        et = T.SCALARS.get(m.group(1))
        if et is None or et.is_bool:
            self.err(f"call to undeclared function '{name}'", self.node.name)
        if len(args) != 1:
            _arity(lw, self.node, name, 1, len(args))
        n = int(m.group(2)) if m.group(2) else None
        tt = Vector(et, n) if n else et
        v = lw.expr(args[0])
        st = v.type
        if not st.arith():
            self.err(f"invalid argument of type '{st}' to '{name}'", args[0])
        if st.size() != tt.size():
            self.err(f"invalid reinterpretation: sizes of '{st}' and '{tt}' must match", self.node)
        x = v.v
        if st.is_vector and st.n == 3:
            x = b.shuffle_vector(x, ir.Constant(x.type, None), ir.Constant(ir.VectorType(I32, 4), [0, 1, 2, 2]))
        if tt.is_vector and tt.n == 3:
            r = b.bitcast(x, T.storage_type(tt))
            return RV(tt, b.shuffle_vector(r, ir.Constant(r.type, None), ir.Constant(ir.VectorType(I32, 3), [0, 1, 2])))
        return RV(tt, b.bitcast(x, tt.llvm_type()))

    def vloadstore(self, kind, n, args, name):
        lw, b = self.lw, self.b
        if kind == "vload":
            if len(args) != 2:
                _arity(lw, self.node, name, 2, len(args))
            off, p = lw.expr(args[0]), lw.expr(args[1])
        else:
            if len(args) != 3:
                _arity(lw, self.node, name, 3, len(args))
            data, off, p = lw.expr(args[0]), lw.expr(args[1]), lw.expr(args[2])
        if not p.type.is_pointer or not p.type.pointee.is_scalar or p.type.pointee.is_bool:
            self.err(f"'{name}' needs a pointer to a scalar element type, got '{p.type}'", args[-1])
        if not (off.type.is_scalar and off.type.is_integer):
            self.err(f"'{name}' offset must be an integer", args[-2])
        et = p.type.pointee
        vt = Vector(et, n)
        base = b.gep(p.v, [b.mul(lw.convert(off, LONG, args[-2]).v, ir.Constant(I64, n))])
        align = et.bits // 8
        if kind == "vload":
            if n == 3:
                vec = ir.Constant(vt.llvm_type(), None)
                for k in range(3):
                    e = b.load(b.gep(base, [ir.Constant(I64, k)]), align=align)
                    vec = b.insert_element(vec, e, ir.Constant(I32, k))
                return RV(vt, vec)
            return RV(vt, b.load(b.bitcast(base, vt.llvm_type().as_pointer()), align=align))
        if p.type.const_pointee or p.type.space == "constant":
            self.err(f"'{name}' cannot store through a pointer to const", args[-1])
        if not data.type.is_vector or data.type.n != n:
            self.err(f"'{name}' expects a {n}-component vector, got '{data.type}'", args[0])
        if data.type.elem != et:
            self.err(f"'{name}': data of type '{data.type}' does not match pointer '{p.type}'", args[0])
        if n == 3:
            for k in range(3):
                b.store(b.extract_element(data.v, ir.Constant(I32, k)), b.gep(base, [ir.Constant(I64, k)]), align=align)
        else:
            b.store(data.v, b.bitcast(base, vt.llvm_type().as_pointer()), align=align)
        return RV(T.VOID, None)

    def vhalf(self, kind, n, rnd, args, name):
        """vload_half[n] / vstore_half[n][_rte...]: half is a storage format, converted to/from float."""
        lw, b = self.lw, self.b
        store = kind.startswith("vstore")
        if rnd and not store:
            self.err(f"call to undeclared function '{name}'", self.node.name)
        want = 3 if store else 2
        if len(args) != want:
            _arity(lw, self.node, name, want, len(args))
        vals = [lw.expr(a) for a in args]
        p, off = vals[-1], vals[-2]
        if not p.type.is_pointer or p.type.pointee != T.HALF:
            self.err(f"'{name}' needs a pointer to half, got '{p.type}'", args[-1])
        if not (off.type.is_scalar and off.type.is_integer):
            self.err(f"'{name}' offset must be an integer", args[-2])
        step = 4 if (n == 3 and "vloada" in kind or n == 3 and "vstorea" in kind) else n
        base = b.gep(p.v, [b.mul(lw.convert(off, LONG, args[-2]).v, ir.Constant(I64, step))])
        hty = ir.HalfType()
        if not store:
            vec = ir.Constant(ir.VectorType(ir.FloatType(), n), None) if n > 1 else None
            for k in range(n):
                e = b.call(self.half_fn("h2f"), [b.load(b.gep(b.bitcast(base, ir.IntType(16).as_pointer()), [ir.Constant(I64, k)]), align=2)])
                if n == 1:
                    return RV(FLOAT, e)
                vec = b.insert_element(vec, e, ir.Constant(I32, k))
            return RV(Vector(FLOAT, n), vec)
        if p.type.const_pointee or p.type.space == "constant":
            self.err(f"'{name}' cannot store through a pointer to const", args[-1])
        data = vals[0]
        want_t = Vector(FLOAT, n) if n > 1 else FLOAT
        if data.type.is_vector != (n > 1) or (n > 1 and data.type.n != n):
            self.err(f"'{name}' expects a '{want_t}' value, got '{data.type}'", args[0])
        src_e = T.elem_of(data.type)
        ft = Vector(src_e if src_e.is_float else FLOAT, n) if n > 1 else (src_e if src_e.is_float else FLOAT)
        d = lw.convert(data, ft, args[0]).v
        for k in range(n):
            e = b.extract_element(d, ir.Constant(I32, k)) if n > 1 else d
            if T.elem_of(ft) == DOUBLE:
                e = b.fptrunc(e, ir.FloatType())
            b.store(b.call(self.half_fn("f2h"), [e]), b.gep(b.bitcast(base, ir.IntType(16).as_pointer()), [ir.Constant(I64, k)]), align=2)
        return RV(T.VOID, None)

    def half_fn(self, which):
        """float <-> half bit conversions in IR (no libgcc helpers needed by the JIT); round to nearest even."""
        mod = self.lw.module
        name = f"mncl.internal.{which}"
        if name in mod.globals:
            return mod.globals[name]
        I16, F32 = ir.IntType(16), ir.FloatType()
        if which == "h2f":
            fn = ir.Function(mod, ir.FunctionType(F32, [I16]), name=name)
        else:
            fn = ir.Function(mod, ir.FunctionType(I16, [F32]), name=name)
        fn.linkage = "internal"
        fn.attributes.add("alwaysinline")
        b = ir.IRBuilder(fn.append_basic_block())
        c = lambda v: ir.Constant(I32, v)
        if which == "h2f":
            h = b.zext(fn.args[0], I32)
            sign = b.shl(b.and_(h, c(0x8000)), c(16))
            exp = b.and_(b.lshr(h, c(10)), c(0x1F))
            mant = b.and_(h, c(0x3FF))
            normal = b.or_(sign, b.or_(b.shl(b.add(exp, c(112)), c(23)), b.shl(mant, c(13))))
            infnan = b.or_(sign, b.or_(c(0x7F800000), b.shl(mant, c(13))))
            den = b.fmul(b.uitofp(mant, F32), ir.Constant(F32, 2.0 ** -24))
            den = b.or_(b.bitcast(den, I32), sign)
            r = b.select(b.icmp_unsigned("==", exp, c(0x1F)), infnan, normal)
            r = b.select(b.icmp_unsigned("==", exp, c(0)), den, r)
            b.ret(b.bitcast(r, F32))
        else:
            x = b.bitcast(fn.args[0], I32)
            sign = b.and_(b.lshr(x, c(16)), c(0x8000))
            a = b.and_(x, c(0x7FFFFFFF))
            nanbit = b.select(b.icmp_unsigned(">", a, c(0x7F800000)), c(0x200), c(0))
            infnan = b.or_(c(0x7C00), nanbit)
            rnd = b.add(b.add(b.sub(a, c(112 << 23)), c(0xFFF)), b.and_(b.lshr(a, c(13)), c(1)))
            normal = b.lshr(rnd, c(13))
            af = b.bitcast(a, F32)
            rint = self.intrinsic("llvm.rint", F32)
            den = b.fptoui(b.call(rint, [b.fmul(af, ir.Constant(F32, 2.0 ** 24))]), I32)
            r = b.select(b.icmp_unsigned("<", a, c(0x38800000)), den, normal)
            r = b.select(b.icmp_unsigned(">=", a, c(0x477FF000)), c(0x7C00), r)
            r = b.select(b.icmp_unsigned(">=", a, c(0x7F800000)), infnan, r)
            b.ret(b.trunc(b.or_(r, sign), I16))
        return fn

    def atomic(self, name, args):
        lw, b = self.lw, self.b
        op = name.split("_", 1)[1]
        if op not in ATOMIC_OPS:
            self.err(f"call to undeclared function '{name}'", self.node.name)
        want = 1 if op in ("inc", "dec") else (3 if op == "cmpxchg" else 2)
        if len(args) != want:
            _arity(lw, self.node, name, want, len(args))
        p = lw.expr(args[0])
        if not p.type.is_pointer or p.type.space not in ("global", "local"):
            self.err(f"'{name}' needs a pointer to __global or __local memory, got '{p.type}'", args[0])
        et = p.type.pointee
        if not (et.is_scalar and (et.is_integer and et.bits in (32, 64) or (et == FLOAT and op == "xchg"))):
            self.err(f"'{name}' is not defined for '{et}'", args[0])
        if op in ("inc", "dec"):
            v = ir.Constant(et.llvm_type(), 1)
        else:
            v = lw.convert(lw.expr(args[1]), et, args[1]).v
        if op == "cmpxchg":
            new = lw.convert(lw.expr(args[2]), et, args[2]).v
            r = b.cmpxchg(p.v, v, new, "seq_cst", "seq_cst")
            return RV(et, b.extract_value(r, 0))
        rop = ATOMIC_OPS[op]
        if rop in ("min", "max") and not et.signed:
            rop = "u" + rop
        return RV(et, b.atomic_rmw(rop, p.v, v, "seq_cst"))

    # ---------------------------------------------------------------- math & co
    def math(self, base, name, vals, args):
        lw, b = self.lw, self.b
        if base in UNARY_INTR:
            t, (x,) = self.floatify(vals, args)
            return RV(t, b.call(self.intrinsic(UNARY_INTR[base], t.llvm_type()), [x.v]))
        if base in UNARY_LIBM:
            t, (x,) = self.floatify(vals, args)
            return RV(t, self.libm(UNARY_LIBM[base], t, [x.v]))
        if base in BINARY_INTR:
            t, (x, y) = self.floatify(vals, args)
            return RV(t, b.call(self.intrinsic(BINARY_INTR[base], t.llvm_type(), 2), [x.v, y.v]))
        if base in BINARY_LIBM:
            t, (x, y) = self.floatify(vals, args)
            return RV(t, self.libm(BINARY_LIBM[base], t, [x.v, y.v]))
        if base in PI_FUNCS:
            t, (x,) = self.floatify(vals, args)
            return RV(t, self.trig_pi(base, t, x.v))
        if base in INV_PI_FUNCS or base == "atan2pi":
            # float: the double function times 1/pi, rounded once (<= 0.5 ulp + the double's error)
            t, xs = self.floatify(vals, args)
            et = T.elem_of(t)
            n = t.n if t.is_vector else None
            dt = Vector(DOUBLE, n) if n else DOUBLE
            dv = [lw.cvt_value(v.v, et, DOUBLE, n) if et != DOUBLE else v.v for v in xs]
            r = self.libm(INV_PI_FUNCS.get(base, "atan2"), dt, dv)
            r = b.fmul(r, self.const(dt, 1 / math.pi))
            return RV(t, lw.cvt_value(r, DOUBLE, et, n) if et != DOUBLE else r)
        if base in ("shuffle", "shuffle2"):
            want = 2 if base == "shuffle" else 3
            if len(vals) != want:
                _arity(lw, self.node, name, want, len(vals))
            return self.shuffle(name, vals, args)
        if base == "ilogb":
            if len(vals) != 1:
                _arity(lw, self.node, name, 1, len(vals))
            t, (x,) = self.floatify(vals, args)
            et = T.elem_of(t)
            fn = self.intrinsic_t("ilogbf" if et == FLOAT else "ilogb", I32, [et.llvm_type()])
            it = Vector(INT, t.n) if t.is_vector else INT
            if t.is_vector:
                out = ir.Constant(it.llvm_type(), None)
                for k in range(t.n):
                    idx = ir.Constant(I32, k)
                    out = b.insert_element(out, b.call(fn, [b.extract_element(x.v, idx)]), idx)
                return RV(it, out)
            return RV(it, b.call(fn, [x.v]))
        if base == "rsqrt":           # float: `afn`, so the emulator device may take its own rsqrt (2 ulp)
            t, (x,) = self.floatify(vals, args)
            afn = ("afn",) if T.elem_of(t) == FLOAT else ()
            s = b.call(self.intrinsic("llvm.sqrt", t.llvm_type()), [x.v], fastmath=afn)
            return RV(t, b.fdiv(self.const(t, 1.0), s, flags=afn))
        if base == "recip":
            t, (x,) = self.floatify(vals, args)
            return RV(t, b.fdiv(self.const(t, 1.0), x.v))
        if base == "divide":
            t, (x, y) = self.floatify(vals, args)
            return RV(t, b.fdiv(x.v, y.v))
        if base == "fmod":
            t, (x, y) = self.floatify(vals, args)
            return RV(t, b.frem(x.v, y.v))
        if base in ("fma", "mad"):
            t, xs = self.floatify(vals, args)
            return RV(t, b.call(self.intrinsic("llvm.fma", t.llvm_type(), 3), [v.v for v in xs]))
        if base in ("pown", "rootn", "ldexp"):
            x = vals[0]
            t, (x,) = self.floatify([x], args[:1])
            k = vals[1]
            if not T.elem_of(k.type).is_integer:
                self.err(f"second argument of '{name}' must be an integer", args[1])
            kt = Vector(INT, t.n) if t.is_vector else INT
            kv = lw.convert(k, kt, args[1]).v
            kf = lw.cvt_value(kv, INT, T.elem_of(t), t.n if t.is_vector else None)
            if base == "pown":
                return RV(t, b.call(self.intrinsic("llvm.pow", t.llvm_type(), 2), [x.v, kf]))
            if base == "ldexp":
                return RV(t, b.fmul(x.v, b.call(self.intrinsic("llvm.exp2", t.llvm_type()), [kf])))
            # rootn: sign-preserving for odd n
            ax = b.call(self.intrinsic("llvm.fabs", t.llvm_type()), [x.v])
            r = b.call(self.intrinsic("llvm.pow", t.llvm_type(), 2), [ax, b.fdiv(self.const(t, 1.0), kf)])
            odd = b.icmp_unsigned("!=", b.and_(kv, ir.Constant(kv.type, [1] * t.n) if t.is_vector else ir.Constant(I32, 1)),
                                  ir.Constant(kv.type, None))
            neg = b.fcmp_ordered("<", x.v, self.const(t, 0.0))
            nanv = self.const(t, float("nan"))
            signed_r = b.call(self.intrinsic("llvm.copysign", t.llvm_type(), 2), [r, x.v])
            r = b.select(neg, b.select(odd, signed_r, nanv), r)
            return RV(t, r)
        if base in ("maxmag", "minmag"):
            t, (x, y) = self.floatify(vals, args)
            fabs = self.intrinsic("llvm.fabs", t.llvm_type())
            ax, ay = b.call(fabs, [x.v]), b.call(fabs, [y.v])
            op = ">" if base == "maxmag" else "<"
            c1 = b.fcmp_ordered(op, ax, ay)
            c2 = b.fcmp_ordered(op, ay, ax)
            mm = self.select_min(t, x.v, y.v, base == "maxmag")
            return RV(t, b.select(c1, x.v, b.select(c2, y.v, mm)))
        if base in COMMON:
            return self.common(base, name, vals, args)
        if base in INTEGER:
            return self.integer(base, name, vals, args)
        if base in GEOMETRIC:
            return self.geometric(base, name, vals, args)
        if base in RELATIONAL:
            return self.relational(base, name, vals, args)
        self.err(f"call to undeclared function '{name}'", self.node.name)

    def async_copy(self, name, args):
        """async_work_group_[strided_]copy: the work-items of the group share the copy (item k of the
        group copies elements k, k + n_items, ...); it is complete at the next barrier or
        wait_group_events, which is a work-group synchronisation point here."""
        lw, b = self.lw, self.b
        ctx = lw.ctx
        vals = [lw.expr(a) for a in args]
        dst, src, num = vals[0], vals[1], vals[2]
        for v, a in ((dst, args[0]), (src, args[1])):
            if not v.type.is_pointer:
                self.err(f"'{name}' needs pointer arguments, got '{v.type}'", a)
        if dst.type.pointee != src.type.pointee:
            self.err(f"'{name}': source and destination element types differ", args[1])
        spaces = (dst.type.space, src.type.space)
        if spaces not in (("local", "global"), ("global", "local"), ("local", "constant")):
            self.err(f"'{name}' copies between __global and __local memory", args[0])
        if not ctx.kernel:
            self.err(f"'{name}' inside a helper function is not supported")
        et = dst.type.pointee
        n = lw.convert(num, ULONG, args[2]).v
        stride = lw.convert(vals[3], ULONG, args[3]).v if name.endswith("strided_copy") else ir.Constant(I64, 1)
        lin = b.load(ctx.lin)
        k_slot = lw._entry_alloca(I64, "async.k")
        b.store(lin, k_slot)
        head = ctx.fn.append_basic_block("async.head")
        body = ctx.fn.append_basic_block("async.body")
        done = ctx.fn.append_basic_block("async.done")
        b.branch(head)
        b.position_at_end(head)
        k = b.load(k_slot)
        b.cbranch(b.icmp_unsigned("<", k, n), body, done)
        b.position_at_end(body)
        dk = b.mul(k, stride) if spaces[0] == "global" else k
        sk = b.mul(k, stride) if spaces[0] != "global" else k
        v = lw.load(b.gep(src.v, [sk]), et)
        lw.store(b.gep(dst.v, [dk]), et, v)
        b.store(b.add(k, ctx.nitems), k_slot)
        b.branch(head)
        b.position_at_end(done)
        return RV(T.EVENT, ir.Constant(I32, 0))

    def ptr_out(self, name, args):
        """fract / modf / sincos / frexp / remquo / lgamma_r: a result and a value stored through the
        pointer argument (the last)."""
        lw, b = self.lw, self.b
        t, xs = self.floatify([lw.expr(a) for a in args[:-1]], args[:-1])
        x = xs[0]
        p = lw.expr(args[-1])
        et = T.elem_of(t)
        n = t.n if t.is_vector else None
        want = (Vector(INT, n) if n else INT) if name in LIBM_INT_OUT else t
        which = "third" if len(args) == 3 else "second"
        if not p.type.is_pointer or p.type.pointee != want:
            self.err(f"{which} argument of '{name}' must be a pointer to '{want}', got '{p.type}'", args[-1])
        if p.type.const_pointee or p.type.space == "constant":
            self.err(f"'{name}' cannot store through a pointer to const", args[-1])
        lty = t.llvm_type()
        if name == "fract":
            fl = b.call(self.intrinsic("llvm.floor", lty), [x.v])
            below_one = self.const(t, float.fromhex("0x1.fffffep-1") if et == FLOAT else float.fromhex("0x1.fffffffffffffp-1"))
            r = b.call(self.intrinsic("llvm.minnum", lty, 2), [b.fsub(x.v, fl), below_one])
            isinf = b.fcmp_ordered("==", b.call(self.intrinsic("llvm.fabs", lty), [x.v]), self.const(t, float("inf")))
            r = b.select(isinf, b.call(self.intrinsic("llvm.copysign", lty, 2), [self.const(t, 0.0), x.v]), r)
            stored = fl
        elif name == "modf":
            tr = b.call(self.intrinsic("llvm.trunc", lty), [x.v])
            isinf = b.fcmp_ordered("==", b.call(self.intrinsic("llvm.fabs", lty), [x.v]), self.const(t, float("inf")))
            r = b.call(self.intrinsic("llvm.copysign", lty, 2), [b.select(isinf, self.const(t, 0.0), b.fsub(x.v, tr)), x.v])
            stored = tr
        elif name == "sincos":
            r = b.call(self.intrinsic("llvm.sin", lty), [x.v])
            stored = b.call(self.intrinsic("llvm.cos", lty), [x.v])
        else:                                         # libm, one component at a time
            fname = LIBM_INT_OUT[name][et != FLOAT]
            fn = self.intrinsic_t(fname, et.llvm_type(), [et.llvm_type()] * len(xs) + [I32.as_pointer()])
            tmp = lw._entry_alloca(I32, f"{name}.out")
            if n:
                r = ir.Constant(lty, None)
                stored = ir.Constant(ir.VectorType(I32, n), None)
                for k in range(n):
                    idx = ir.Constant(I32, k)
                    r = b.insert_element(r, b.call(fn, [b.extract_element(v.v, idx) for v in xs] + [tmp]), idx)
                    stored = b.insert_element(stored, b.load(tmp), idx)
            else:
                r = b.call(fn, [v.v for v in xs] + [tmp])
                stored = b.load(tmp)
        lw.store(p.v, want, stored, align=T.elem_of(want).bits // 8)
        return RV(t, r)

    def shuffle(self, name, vals, args):
        lw, b = self.lw, self.b
        xs, mask = vals[:-1], vals[-1]
        for v, a in zip(xs, args):
            if not v.type.is_vector:
                self.err(f"'{name}' needs vector arguments, got '{v.type}'", a)
        if len(xs) == 2 and xs[0].type != xs[1].type:
            self.err(f"'{name}': both inputs must have the same type", args[1])
        mt = mask.type
        if not (mt.is_vector and mt.elem.is_integer and not mt.elem.signed and mt.elem.bits == xs[0].type.elem.bits):
            self.err(f"'{name}': the mask must be an unsigned integer vector with {xs[0].type.elem.bits}-bit elements", args[-1])
        n_in = xs[0].type.n
        total = n_in * len(xs)
        rt = Vector(xs[0].type.elem, mt.n)
        src = xs[0].v
        if len(xs) == 2:
            src = b.shuffle_vector(xs[0].v, xs[1].v, ir.Constant(ir.VectorType(I32, 2 * n_in), list(range(2 * n_in))))
        out = ir.Constant(rt.llvm_type(), None)
        lim = (1 << max(total - 1, 1).bit_length()) - 1      # OpenCL uses the mask's low bits
        for k in range(mt.n):
            m = b.extract_element(mask.v, ir.Constant(I32, k))
            m = b.trunc(b.and_(m, ir.Constant(m.type, lim)), I32) if mt.elem.bits > 32 else \
                b.zext(b.and_(m, ir.Constant(m.type, lim)), I32) if mt.elem.bits < 32 else b.and_(m, ir.Constant(I32, lim))
            m = b.select(b.icmp_unsigned("<", m, ir.Constant(I32, total)), m, ir.Constant(I32, 0))
            out = b.insert_element(out, b.extract_element(src, m), ir.Constant(I32, k))
        return RV(rt, out)

    def trig_pi(self, base, t, x):
        """sinpi / cospi / tanpi: exact reduction to [-1/2, 1/2] (or [0, 1/4] for cos), then the
        double-precision sin / cos of pi*r, rounded once to the result type."""
        b, lw = self.b, self.lw
        n = t.n if t.is_vector else None
        et = T.elem_of(t)
        dt = Vector(DOUBLE, n) if n else DOUBLE
        lty = t.llvm_type()
        rint = self.intrinsic("llvm.rint", lty)
        fabs = self.intrinsic("llvm.fabs", lty)
        c = lambda v: self.const(t, v)          # noqa: E731
        if base == "cospi":
            x = b.call(fabs, [x])
        r = b.fsub(x, b.fmul(c(2.0), b.call(rint, [b.fmul(x, c(0.5))])))     # exact, in [-1, 1]
        to_d = (lambda v: lw.cvt_value(v, et, DOUBLE, n)) if et != DOUBLE else (lambda v: v)
        from_d = (lambda v: lw.cvt_value(v, DOUBLE, et, n)) if et != DOUBLE else (lambda v: v)
        dsin = self.intrinsic("llvm.sin", dt.llvm_type())
        dcos = self.intrinsic("llvm.cos", dt.llvm_type())
        pi = self.const(dt, math.pi)

        def sinpi(r):
            hi = b.fcmp_ordered(">", r, c(0.5))
            lo = b.fcmp_ordered("<", r, c(-0.5))
            r = b.select(hi, b.fsub(c(1.0), r), b.select(lo, b.fsub(c(-1.0), r), r))
            return b.call(dsin, [b.fmul(pi, to_d(r))])

        def cospi(r):
            a = b.call(fabs, [r])
            small = b.fcmp_ordered("<", a, c(0.25))
            cv = b.call(dcos, [b.fmul(pi, to_d(a))])
            sv = b.call(dsin, [b.fmul(pi, to_d(b.fsub(c(0.5), a)))])
            return b.select(small, cv, sv)
        if base == "sinpi":
            out = sinpi(r)
        elif base == "cospi":
            out = cospi(r)
        else:
            out = b.fdiv(sinpi(r), cospi(r))
        res = from_d(out)
        if base == "sinpi":                      # sinpi(-0) = -0, sinpi(n) = +-0 with x's sign
            zero = b.fcmp_ordered("==", r, c(0.0))
            res = b.select(zero, b.call(self.intrinsic("llvm.copysign", lty, 2), [c(0.0), x]), res)
        return res

    def common(self, base, name, vals, args):
        b = self.b
        if base in ("max", "min", "clamp"):
            t = None
            for v in vals:
                if not v.type.arith():
                    self.err(f"invalid argument of type '{v.type}' to '{name}'")
                t = v.type if t is None else self._merge(t, v.type)
            xs = [self.lw.convert(v, t, a) for v, a in zip(vals, args)]
            if base == "clamp":
                x, lo, hi = xs
                return RV(t, self.select_min(t, self.select_min(t, x.v, lo.v, True), hi.v, False))
            return RV(t, self.select_min(t, xs[0].v, xs[1].v, base == "max"))
        if base in ("degrees", "radians"):
            t, (x,) = self.floatify(vals, args)
            k = 180 / math.pi if base == "degrees" else math.pi / 180
            return RV(t, b.fmul(x.v, self.const(t, k)))
        if base == "mix":
            t, (x, y, a) = self.floatify(vals, args)
            return RV(t, b.fadd(x.v, b.fmul(b.fsub(y.v, x.v), a.v)))
        if base == "step":
            t, (e, x) = self.floatify(vals, args)
            c = b.fcmp_ordered("<", x.v, e.v)
            return RV(t, b.select(c, self.const(t, 0.0), self.const(t, 1.0)))
        if base == "smoothstep":
            t, (e0, e1, x) = self.floatify(vals, args)
            tt = b.fdiv(b.fsub(x.v, e0.v), b.fsub(e1.v, e0.v))
            tt = self.select_min(t, self.select_min(t, tt, self.const(t, 0.0), True), self.const(t, 1.0), False)
            r = b.fmul(b.fmul(tt, tt), b.fsub(self.const(t, 3.0), b.fmul(self.const(t, 2.0), tt)))
            return RV(t, r)
        if base == "sign":
            t, (x,) = self.floatify(vals, args)
            pos = b.fcmp_ordered(">", x.v, self.const(t, 0.0))
            neg = b.fcmp_ordered("<", x.v, self.const(t, 0.0))
            nan = b.fcmp_unordered("uno", x.v, x.v)
            r = b.select(pos, self.const(t, 1.0), b.select(neg, self.const(t, -1.0), x.v))
            return RV(t, b.select(nan, self.const(t, 0.0), r))

    def integer(self, base, name, vals, args):
        b, lw = self.b, self.lw
        if base == "abs":
            v = vals[0]
            t = v.type
            if not t.arith():
                self.err(f"invalid argument of type '{t}' to 'abs'")
            et = T.elem_of(t)
            if et.is_float:
                self.err("'abs' requires an integer argument; use fabs() for floating point")
            ut_e = T.UINT_OF_BITS[et.bits]
            ut = Vector(ut_e, t.n) if t.is_vector else ut_e
            if not et.signed:
                return RV(ut, v.v)
            neg = b.icmp_signed("<", v.v, self.const(t, 0))
            return RV(ut, b.select(neg, b.neg(v.v), v.v))
        if base == "popcount":
            t, (x,) = self.ints(vals, args)
            return RV(t, b.call(self.intrinsic("llvm.ctpop", t.llvm_type()), [x.v]))
        if base in ("clz", "ctz"):
            t, (x,) = self.ints(vals, args)
            fn = self.intrinsic_t(f"llvm.{'ctlz' if base == 'clz' else 'cttz'}.{self.mangle(t.llvm_type())}",
                                  t.llvm_type(), [t.llvm_type(), I1])
            return RV(t, b.call(fn, [x.v, ir.Constant(I1, 0)]))
        if base == "rotate":
            t, (x, y) = self.ints(vals, args)
            fn = self.intrinsic("llvm.fshl", t.llvm_type(), 3)
            return RV(t, b.call(fn, [x.v, x.v, y.v]))
        if base in ("mul24", "mad24"):
            t, xs = self.ints(vals, args)
            r = b.mul(xs[0].v, xs[1].v)
            if base == "mad24":
                r = b.add(r, xs[2].v)
            return RV(t, r)
        if base in ("abs_diff", "add_sat", "sub_sat", "hadd", "rhadd", "mul_hi", "mad_hi", "mad_sat"):
            t, xs = self.ints(vals, args)
            et = T.elem_of(t)
            n = t.n if t.is_vector else None
            wide_e = T.SCALARS["long" if et.signed else "ulong"] if et.bits < 64 else None
            if et.bits == 64:
                if base in ("add_sat", "sub_sat"):
                    intr = f"llvm.{'s' if et.signed else 'u'}{'add' if base == 'add_sat' else 'sub'}.sat"
                    return RV(t, b.call(self.intrinsic(intr, t.llvm_type(), 2), [xs[0].v, xs[1].v]))
                if base == "abs_diff":
                    x, y = xs[0].v, xs[1].v
                    gt = b.icmp_signed(">", x, y) if et.signed else b.icmp_unsigned(">", x, y)
                    ut = Vector(T.ULONG, n) if n else T.ULONG
                    return RV(ut, b.select(gt, b.sub(x, y), b.sub(y, x)))
                if base in ("hadd", "rhadd"):
                    x, y = xs[0].v, xs[1].v
                    one = self.const(t, 1)
                    sh = (lambda v: b.ashr(v, one)) if et.signed else (lambda v: b.lshr(v, one))
                    r = b.add(sh(x), sh(y))
                    lowbits = b.and_(x, y) if base == "hadd" else b.or_(x, y)
                    return RV(t, b.add(r, b.and_(lowbits, one)))
                # mul_hi / mad_hi 64-bit via i128
                i128 = ir.IntType(128)
                vt = ir.VectorType(i128, n) if n else i128
                ext = b.sext if et.signed else b.zext
                p = b.mul(ext(xs[0].v, vt), ext(xs[1].v, vt))
                hi = b.trunc(b.lshr(p, ir.Constant(vt, [64] * n) if n else ir.Constant(i128, 64)), t.llvm_type())
                if base == "mad_hi":
                    hi = b.add(hi, xs[2].v)
                if base == "mad_sat":
                    self.err("'mad_sat' is not supported for 64-bit types")
                return RV(t, hi)
            wt = Vector(wide_e, n) if n else wide_e
            w = [lw.cvt_value(x.v, et, wide_e, n) for x in xs]
            wc = lambda v: ir.Constant(wt.llvm_type(), [v] * n) if n else ir.Constant(wt.llvm_type(), v)
            if base == "abs_diff":
                d = b.sub(w[0], w[1])
                neg = b.icmp_signed("<", d, wc(0))
                d = b.select(neg, b.neg(d), d)
                ut_e = T.UINT_OF_BITS[et.bits]
                ut = Vector(ut_e, n) if n else ut_e
                return RV(ut, lw.cvt_value(d, wide_e, ut_e, n))
            if base in ("add_sat", "sub_sat", "mad_sat"):
                if base == "add_sat":
                    r = b.add(w[0], w[1])
                elif base == "sub_sat":
                    r = b.sub(w[0], w[1])
                else:
                    r = b.add(b.mul(w[0], w[1]), w[2])
                lo = -(1 << (et.bits - 1)) if et.signed else 0
                hi = (1 << (et.bits - 1)) - 1 if et.signed else (1 << et.bits) - 1
                r = b.select(b.icmp_signed("<", r, wc(lo)), wc(lo), r)
                r = b.select(b.icmp_signed(">", r, wc(hi)), wc(hi), r)
                return RV(t, lw.cvt_value(r, LONG, et, n))
            if base in ("hadd", "rhadd"):
                r = b.add(w[0], w[1])
                if base == "rhadd":
                    r = b.add(r, wc(1))
                r = b.ashr(r, wc(1))
                return RV(t, lw.cvt_value(r, LONG, et, n))
            if base in ("mul_hi", "mad_hi"):
                r = b.mul(w[0], w[1])
                r = b.ashr(r, wc(et.bits)) if et.signed else b.lshr(r, wc(et.bits))
                r = lw.cvt_value(r, wide_e, et, n)
                if base == "mad_hi":
                    r = b.add(r, xs[2].v)
                return RV(t, r)
        if base == "upsample":
            hi, lo = vals
            et = T.elem_of(hi.type)
            if not et.is_integer or et.bits == 64 or T.elem_of(lo.type) != T.UINT_OF_BITS[et.bits]:
                self.err("'upsample' needs (char|short|int hi, unsigned lo) of the same width")
            n = hi.type.n if hi.type.is_vector else None
            wide_e = (T.INT_OF_BITS if et.signed else T.UINT_OF_BITS)[et.bits * 2]
            wt = Vector(wide_e, n) if n else wide_e
            h = lw.cvt_value(hi.v, et, wide_e, n)
            l = lw.cvt_value(lo.v, T.elem_of(lo.type), T.UINT_OF_BITS[et.bits * 2], n)
            sh = ir.Constant(wt.llvm_type(), [et.bits] * n) if n else ir.Constant(wt.llvm_type(), et.bits)
            return RV(wt, b.or_(b.shl(h, sh), l))
        self.err(f"call to undeclared function '{name}'", self.node.name)

    def geometric(self, base, name, vals, args):
        b = self.b
        t, xs = self.floatify(vals, args)
        et = T.elem_of(t)

        def dot(x, y):
            p = b.fmul(x, y)
            if not t.is_vector:
                return p
            s = b.extract_element(p, ir.Constant(I32, 0))
            for k in range(1, t.n):
                s = b.fadd(s, b.extract_element(p, ir.Constant(I32, k)))
            return s
        if t.is_vector and t.n not in (2, 3, 4):
            self.err(f"'{name}' is only defined for scalars and 2-, 3- and 4-component vectors")
        sqrt = self.intrinsic("llvm.sqrt", et.llvm_type())
        if base == "dot":
            return RV(et, dot(xs[0].v, xs[1].v))
        if base in ("length", "fast_length"):
            return RV(et, b.call(sqrt, [dot(xs[0].v, xs[0].v)]))
        if base in ("distance", "fast_distance"):
            d = b.fsub(xs[0].v, xs[1].v)
            return RV(et, b.call(sqrt, [dot(d, d)]))
        if base in ("normalize", "fast_normalize"):
            x = xs[0].v
            ln = b.call(sqrt, [dot(x, x)])
            if t.is_vector:
                ln = self.lw.splat(RV(et, ln), t).v
            return RV(t, b.fdiv(x, ln))
        if base == "cross":
            if not t.is_vector or t.n not in (3, 4):
                self.err("'cross' is only defined for 3- and 4-component vectors")
            x, y = xs[0].v, xs[1].v

            def c(v, k):
                return b.extract_element(v, ir.Constant(I32, k))
            comps = [b.fsub(b.fmul(c(x, 1), c(y, 2)), b.fmul(c(x, 2), c(y, 1))),
                     b.fsub(b.fmul(c(x, 2), c(y, 0)), b.fmul(c(x, 0), c(y, 2))),
                     b.fsub(b.fmul(c(x, 0), c(y, 1)), b.fmul(c(x, 1), c(y, 0)))]
            if t.n == 4:
                comps.append(ir.Constant(et.llvm_type(), 0.0))
            out = ir.Constant(t.llvm_type(), None)
            for k, v in enumerate(comps):
                out = b.insert_element(out, v, ir.Constant(I32, k))
            return RV(t, out)

    def relational(self, base, name, vals, args):
        b, lw = self.b, self.lw
        if base in ("any", "all"):
            v = vals[0]
            t = v.type
            if not (t.arith() and T.elem_of(t).is_integer and T.elem_of(t).signed):
                self.err(f"'{name}' requires a signed integer argument")
            neg = b.icmp_signed("<", v.v, ir.Constant(v.v.type, None))
            if not t.is_vector:
                return RV(INT, b.zext(neg, I32))
            acc = b.extract_element(neg, ir.Constant(I32, 0))
            for k in range(1, t.n):
                e = b.extract_element(neg, ir.Constant(I32, k))
                acc = b.or_(acc, e) if base == "any" else b.and_(acc, e)
            return RV(INT, b.zext(acc, I32))
        if base in ("select", "bitselect"):
            x, y, c = vals
            t = lw.common_vec(x, y, self.node)
            xx, yy = lw.convert(x, t, args[0]), lw.convert(y, t, args[1])
            if base == "bitselect":
                et = T.elem_of(t)
                it = Vector(T.UINT_OF_BITS[et.bits], t.n) if t.is_vector else T.UINT_OF_BITS[et.bits]
                ilt = it.llvm_type()
                cv = lw.convert(c, t, args[2]) if c.type != t else c
                xi, yi, ci = (b.bitcast(v.v, ilt) for v in (xx, yy, cv))
                r = b.or_(b.and_(xi, b.not_(ci)), b.and_(yi, ci))
                return RV(t, b.bitcast(r, t.llvm_type()))
            if not T.elem_of(c.type).is_integer:
                self.err("the condition of 'select' must be an integer", args[2])
            if t.is_vector:
                if not c.type.is_vector or c.type.n != t.n:
                    self.err("the condition of 'select' must be a vector of the same length", args[2])
                m = b.icmp_signed("<", c.v, ir.Constant(c.v.type, None))
            else:
                m = b.icmp_unsigned("!=", c.v, ir.Constant(c.v.type, None))
            return RV(t, b.select(m, yy.v, xx.v))
        if base in ("isfinite", "isinf", "isnan", "isnormal", "signbit"):
            t, (x,) = self.floatify(vals, args)
            et = T.elem_of(t)
            fabs = b.call(self.intrinsic("llvm.fabs", t.llvm_type()), [x.v])
            inf = self.const(t, float("inf"))
            if base == "isnan":
                r = b.fcmp_unordered("uno", x.v, x.v)
            elif base == "isinf":
                r = b.fcmp_ordered("==", fabs, inf)
            elif base == "isfinite":
                r = b.fcmp_ordered("<", fabs, inf)
            elif base == "isnormal":
                tiny = self.const(t, 2.0 ** -126 if et == FLOAT else 2.0 ** -1022)
                r = b.and_(b.fcmp_ordered("<", fabs, inf), b.fcmp_ordered(">=", fabs, tiny))
            else:
                it = ir.IntType(et.bits)
                ilt = ir.VectorType(it, t.n) if t.is_vector else it
                r = b.icmp_signed("<", b.bitcast(x.v, ilt), ir.Constant(ilt, None))
            return self.cmp_result(t, r)
        t, (x, y) = self.floatify(vals, args)
        ops = {"isequal": ("o", "=="), "isnotequal": ("u", "!="), "isgreater": ("o", ">"),
               "isgreaterequal": ("o", ">="), "isless": ("o", "<"), "islessequal": ("o", "<="),
               "islessgreater": ("o", "!="), "isordered": ("o", "ord"), "isunordered": ("u", "uno")}
        kind, op = ops[base]
        r = (b.fcmp_ordered if kind == "o" else b.fcmp_unordered)(op, x.v, y.v)
        return self.cmp_result(t, r)
