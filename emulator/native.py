"""Compiled element loops for the fp32 MAU operations that numpy does in many passes.

numpy computes an fp32 ``vfma`` as about ten passes over 128 KiB rows (three fp32 -> fp64
casts, the product, the sum, the rounding, the output normalisation's check), and an fp32
``vmul``/``vadd`` as four to six; on ``mncore2`` those passes were most of a step.  Here each is
one loop, compiled once per process with llvmlite (a dependency; the front end uses it too)
and auto-vectorised by LLVM: it reads the operands' fp32 lanes, computes exactly what
semantics.vfma / vmul / vadd compute (IEEE operations, no fast-math: the fp64 product of two
fp32 values is exact, the fp64 sum and the rounding to fp32 are the same two roundings numpy
does), applies the output rule of numbers.normalize_bits and stores the lanes.

One thing the loops leave to numpy: which NaN an operation returns (its sign becomes the sign
of the infinity the output rule makes of it) depends on the instructions numpy's build
happens to use.  So a loop counts the NaNs it produced and the caller redoes the operation
with numpy when there are any; the operands are still there (the caller's contract).  Without
llvmlite, or when compiling fails, ``kernel`` returns None and callers keep numpy.
"""
from __future__ import annotations

import ctypes

import numpy as np

# one row loop per operation: %fx, %fy, %fz (fp32 operands, sign already flipped) -> %f (fp32)
_BODIES = {
    "fma": """
  %dx = fpext float %fx to double
  %dy = fpext float %fy to double
  %dz = fpext float %fz to double
  %p = fmul double %dx, %dy
  %s = fadd double %p, %dz
  %f = fptrunc double %s to float""",
    "mul": """
  %p = fmul float %fx, %fy
  %f = fadd float %p, 0.0""",          # + 0 turns -0 into +0, as semantics.vmul
    "add": """
  %f = fadd float %fx, %fy""",
}

def _unpack(*names: str) -> str:
    """A loop's entry-block loads of its argument words, in order: "*d" a pointer, "n" an i64."""
    return "".join(f"  %{x[1:]} = call ptr @arg_ptr(ptr %a, i64 {i})\n" if x[0] == "*" else
                   f"  %{x} = call i64 @arg(ptr %a, i64 {i})\n" for i, x in enumerate(names))


# The one argument points to 12 int64: d, sd, x, sx, y, sy, z, sz, rows, n, mx, mz (one pointer:
# ctypes converts twelve arguments in several microseconds, a tenth of a loop's time).  d, x, y, z
# are (rows, n) blocks of 32-bit lanes, rows `s*` bytes apart, lanes contiguous; the operands' bits
# are xor'ed with m* first (a sign flip: the negated operands of fvfma).
_TEMPLATE = """
define i64 @{name}(ptr noalias %a) nounwind {{
entry:
{args}  %mx = trunc i64 %mx64 to i32
  %mz = trunc i64 %mz64 to i32
  br label %row
row:
  %r = phi i64 [0, %entry], [%r1, %rowend]
  %nan0 = phi i64 [0, %entry], [%nan2, %rowend]
  %od = mul i64 %r, %sd
  %ox = mul i64 %r, %sx
  %oy = mul i64 %r, %sy
  %oz = mul i64 %r, %sz
  %bd = getelementptr i8, ptr %d, i64 %od
  %bx = getelementptr i8, ptr %x, i64 %ox
  %by = getelementptr i8, ptr %y, i64 %oy
  %bz = getelementptr i8, ptr %z, i64 %oz
  br label %loop
loop:
  %i = phi i64 [0, %row], [%i1, %loop]
  %nan = phi i64 [%nan0, %row], [%nan1, %loop]
  %px = getelementptr i32, ptr %bx, i64 %i
  %py = getelementptr i32, ptr %by, i64 %i
  %pz = getelementptr i32, ptr %bz, i64 %i
  %pd = getelementptr i32, ptr %bd, i64 %i
  %ix = load i32, ptr %px
  %iy = load i32, ptr %py
  %iz = load i32, ptr %pz
  %jx = xor i32 %ix, %mx
  %jz = xor i32 %iz, %mz
  %fx = bitcast i32 %jx to float
  %fy = bitcast i32 %iy to float
  %fz = bitcast i32 %jz to float
{body}
  %isnan = fcmp uno float %f, %f
  %inc = zext i1 %isnan to i64
  %nan1 = add i64 %nan, %inc
  %b = bitcast float %f to i32
  %e = and i32 %b, 2139095040
  %top = icmp eq i32 %e, 2139095040
  %bm = and i32 %b, -8388608
  %b2 = select i1 %top, i32 %bm, i32 %b
  %zero = icmp eq i32 %e, 0
  %b3 = select i1 %zero, i32 0, i32 %b2
  store i32 %b3, ptr %pd
  %i1 = add i64 %i, 1
  %more = icmp ult i64 %i1, %n
  br i1 %more, label %loop, label %rowend
rowend:
  %nan2 = phi i64 [%nan1, %loop]
  %r1 = add i64 %r, 1
  %rmore = icmp ult i64 %r1, %rows
  br i1 %rmore, label %row, label %exit
exit:
  ret i64 %nan2
}}
"""
_F32_ARGS = _unpack("*d", "sd", "*x", "sx", "*y", "sy", "*z", "sz", "rows", "n", "mx64", "mz64")
# exponent all ones: mantissa cleared (no NaN survives); exponent 0: +0 (numbers.normalize_bits)

# A masked store's merge in one pass (executor._store): d = d ^ ((d ^ v) & lut[k & 15]) over (rows, n)
# long words, k the write mask's 4-bit nibbles; numpy takes a (rows, n) take of the table for the
# mask and three passes for the merge.  The argument words: d, sd, v, sv, k, sk, lut, rows, n.
_MERGE = """
define i64 @emu_merge(ptr noalias %a) nounwind {
entry:
""" + _unpack("*d", "sd", "*v", "sv", "*k", "sk", "*lut", "rows", "n") + """  br label %row
row:
  %r = phi i64 [0, %entry], [%r1, %rowend]
  %od = mul i64 %r, %sd
  %ov = mul i64 %r, %sv
  %ok = mul i64 %r, %sk
  %bd = getelementptr i8, ptr %d, i64 %od
  %bv = getelementptr i8, ptr %v, i64 %ov
  %bk = getelementptr i8, ptr %k, i64 %ok
  br label %loop
loop:
  %i = phi i64 [0, %row], [%i1, %loop]
  %pk = getelementptr i8, ptr %bk, i64 %i
  %nib = load i8, ptr %pk
  %nib4 = and i8 %nib, 15
  %j = zext i8 %nib4 to i64
  %pm = getelementptr i64, ptr %lut, i64 %j
  %m = load i64, ptr %pm
  %pd = getelementptr i64, ptr %bd, i64 %i
  %pv = getelementptr i64, ptr %bv, i64 %i
  %o = load i64, ptr %pd
  %nv = load i64, ptr %pv
  %x = xor i64 %o, %nv
  %y = and i64 %x, %m
  %z = xor i64 %o, %y
  store i64 %z, ptr %pd
  %i1 = add i64 %i, 1
  %more = icmp ult i64 %i1, %n
  br i1 %more, label %loop, label %rowend
rowend:
  %r1 = add i64 %r, 1
  %rmore = icmp ult i64 %r1, %rows
  br i1 %rmore, label %row, label %exit
exit:
  ret i64 0
}
"""

# A T-indirect read of a PE memory (executor.read) in one pass: per cycle c and PE p the word
# address a = (T's low 32 bits + base[c]) & mask, then the long word (a >> 1) of the PE's column,
# the next one too for ll, or the 32-bit word a (even: the upper half) moved to the upper half.
# The argument words: t, t's cycle stride and PE stride in bytes, base (4 int64), mem (uint64,
# rows x P), P, size (the memory's words), n (words a read spans: 1, 2 or 4), mask, out_a (4 x P
# int64), out0, out1 (4 x P uint64; out1 only for ll), lohi (2 int64: least and greatest a).
# Returns how many addresses fall outside 0 .. size - n (those read nothing): the caller then
# redoes the read with numpy, which names the first.
_TREAD = """
define i64 @emu_tread(ptr noalias %a) nounwind {
entry:
""" + _unpack("*t", "stc", "stp", "*base", "*mem", "P", "size", "n", "mask", "*oa", "*o0", "*o1", "*lohi") + """  %limit = sub i64 %size, %n
  %ll = icmp eq i64 %n, 4
  %word = icmp eq i64 %n, 1
  br label %row
row:
  %c = phi i64 [0, %entry], [%c1, %rowend]
  %bad0 = phi i64 [0, %entry], [%bad2, %rowend]
  %lo0 = phi i64 [9223372036854775807, %entry], [%lo2, %rowend]
  %hi0 = phi i64 [-9223372036854775808, %entry], [%hi2, %rowend]
  %pb = getelementptr i64, ptr %base, i64 %c
  %b = load i64, ptr %pb
  %otc = mul i64 %c, %stc
  %tc = getelementptr i8, ptr %t, i64 %otc
  %orow = mul i64 %c, %P
  br label %loop
loop:
  %p = phi i64 [0, %row], [%p1, %next]
  %bad = phi i64 [%bad0, %row], [%bad1, %next]
  %lo = phi i64 [%lo0, %row], [%lo1, %next]
  %hi = phi i64 [%hi0, %row], [%hi1, %next]
  %otp = mul i64 %p, %stp
  %pt = getelementptr i8, ptr %tc, i64 %otp
  %tw = load i32, ptr %pt
  %tz = zext i32 %tw to i64
  %sum = add i64 %tz, %b
  %addr = and i64 %sum, %mask
  %k = add i64 %orow, %p
  %pa = getelementptr i64, ptr %oa, i64 %k
  store i64 %addr, ptr %pa
  %lt = icmp slt i64 %addr, %lo
  %lo1 = select i1 %lt, i64 %addr, i64 %lo
  %gt = icmp sgt i64 %addr, %hi
  %hi1 = select i1 %gt, i64 %addr, i64 %hi
  %neg = icmp slt i64 %addr, 0
  %over = icmp sgt i64 %addr, %limit
  %out = or i1 %neg, %over
  br i1 %out, label %skip, label %read
skip:
  %badn = add i64 %bad, 1
  br label %next
read:
  %r = lshr i64 %addr, 1
  %rp = mul i64 %r, %P
  %e = add i64 %rp, %p
  %p0 = getelementptr i64, ptr %o0, i64 %k
  br i1 %word, label %rword, label %rlong
rword:
  %h = and i64 %addr, 1
  %e2 = shl i64 %e, 1
  %e3 = add i64 %e2, 1
  %e4 = sub i64 %e3, %h
  %pw = getelementptr i32, ptr %mem, i64 %e4
  %w = load i32, ptr %pw
  %wz = zext i32 %w to i64
  %wu = shl i64 %wz, 32
  store i64 %wu, ptr %p0
  br label %next
rlong:
  %pm = getelementptr i64, ptr %mem, i64 %e
  %v = load i64, ptr %pm
  store i64 %v, ptr %p0
  br i1 %ll, label %rll, label %next
rll:
  %e1 = add i64 %e, %P
  %pm1 = getelementptr i64, ptr %mem, i64 %e1
  %v1 = load i64, ptr %pm1
  %p1p = getelementptr i64, ptr %o1, i64 %k
  store i64 %v1, ptr %p1p
  br label %next
next:
  %bad1 = phi i64 [%badn, %skip], [%bad, %rword], [%bad, %rlong], [%bad, %rll]
  %p1 = add i64 %p, 1
  %more = icmp ult i64 %p1, %P
  br i1 %more, label %loop, label %rowend
rowend:
  %bad2 = phi i64 [%bad1, %next]
  %lo2 = phi i64 [%lo1, %next]
  %hi2 = phi i64 [%hi1, %next]
  %c1 = add i64 %c, 1
  %cmore = icmp ult i64 %c1, 4
  br i1 %cmore, label %row, label %exit
exit:
  store i64 %lo2, ptr %lohi
  %phi = getelementptr i64, ptr %lohi, i64 1
  store i64 %hi2, ptr %phi
  ret i64 %bad2
}
"""

_HELPERS = """
define internal i64 @arg(ptr %a, i64 %i) alwaysinline {
  %p = getelementptr i64, ptr %a, i64 %i
  %v = load i64, ptr %p
  ret i64 %v
}
define internal ptr @arg_ptr(ptr %a, i64 %i) alwaysinline {
  %v = call i64 @arg(ptr %a, i64 %i)
  %p = inttoptr i64 %v to ptr
  ret ptr %p
}
"""

_state: dict = {}


def _compile() -> dict:
    """{operation: ctypes function}, or {} when llvmlite cannot build them."""
    try:
        import llvmlite.binding as llvm
        from translator import llvm_lock         # LLVM's global state is shared with the front end
        with llvm_lock:
            llvm.initialize_native_target()
            llvm.initialize_native_asmprinter()
            ir = _HELPERS + _MERGE + _TREAD + "".join(_TEMPLATE.format(name=f"emu_f32_{op}", body=body, args=_F32_ARGS)
                                             for op, body in _BODIES.items())
            mod = llvm.parse_assembly(ir)
            mod.verify()
            tm = llvm.Target.from_default_triple().create_target_machine(
                cpu=llvm.get_host_cpu_name(), features=llvm.get_host_cpu_features().flatten(), opt=3,
                codemodel="jitdefault")
            pb = llvm.create_pass_builder(tm, llvm.create_pipeline_tuning_options(speed_level=3))
            pb.getModulePassManager().run(mod, pb)
            engine = llvm.create_mcjit_compiler(mod, tm)
            engine.finalize_object()
            fn = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p)
            fns = {op: fn(engine.get_function_address(f"emu_f32_{op}")) for op in _BODIES}
            fns["merge"] = fn(engine.get_function_address("emu_merge"))
            fns["tread"] = fn(engine.get_function_address("emu_tread"))
        fns["_engine"] = engine                  # the code lives as long as its engine
        return fns
    except Exception:                            # no llvmlite, no native target: numpy does it
        return {}


def kernel(op: str):
    """The compiled loop of 'fma', 'mul' or 'add' (returns the NaN count), 'merge' (merge()) or
    'tread' (t_read()), or None.  Called as ``fn(a)`` with ``a`` the address of its arguments (``args``)."""
    if not _state:
        _state["fns"] = _compile()
    return _state["fns"].get(op)


def _address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def block(a: np.ndarray):
    """(address, row stride in bytes, rows, 32-bit lanes per row) of a (rows, ...) array whose rows
    are contiguous runs of 32-bit lanes, or None."""
    if a.ndim < 1 or a.itemsize * (a.size // max(a.shape[0], 1)) % 4:
        return None
    inner = a[0] if a.shape[0] else a
    if a.shape[0] and not inner.flags.c_contiguous:
        return None
    return _address(a), (a.strides[0] if a.shape[0] > 1 else 0), a.shape[0], \
        inner.nbytes // 4


class Args:
    """A loop's arguments in memory: ``address`` is what the loop takes; the arrays they point
    into are kept alive with them."""

    __slots__ = ("words", "address", "arrays")

    def __init__(self, values, arrays):
        self.words = np.array(values, np.int64)
        self.address = _address(self.words)
        self.arrays = arrays


def args(d, x, y=None, z=None, neg_x: bool = False, neg_z: bool = False):
    """The loop's Args for destination d and operands x, y, z (arrays of one shape whose rows
    are contiguous runs of lanes: block()), or None when they do not fit; y, z default to x."""
    arrays = (d, x, y if y is not None else x, z if z is not None else x)
    bs = [block(a) for a in arrays]
    if any(b is None for b in bs) or len({b[2:] for b in bs}) != 1 or bs[0][2] == 0 or bs[0][3] == 0:
        return None
    out = []
    for addr, stride, _, _ in bs:
        out += [addr, stride]
    return Args((*out, bs[0][2], bs[0][3], 0x80000000 if neg_x else 0, 0x80000000 if neg_z else 0), arrays)


def merge(d: np.ndarray, v: np.ndarray, k: np.ndarray, lut: np.ndarray) -> bool:
    """d ^= (d ^ v) & lut[k] in one compiled pass: d and v (rows, n) uint64, k (rows, n) uint8 mask
    nibbles, lut (16,) uint64; each row's elements contiguous (rows may be any distance apart, v's
    0: one row for all).  False (nothing done) where there is no loop or the arrays do not fit."""
    fn = kernel("merge")
    if fn is None or d.ndim != 2 or v.shape != d.shape or k.shape != d.shape or d.dtype != np.uint64 \
            or v.dtype != np.uint64 or k.dtype != np.uint8 or d.strides[1] != 8 or v.strides[1] != 8 \
            or k.strides[1] != 1 or lut.dtype != np.uint64 or lut.shape != (16,) or not lut.flags.c_contiguous \
            or not d.flags.writeable or np.may_share_memory(d, v):
        return False      # (v overlapping d: the loop would read what it has already written)
    a = Args([_address(d), d.strides[0], _address(v), v.strides[0], _address(k), k.strides[0], _address(lut),
              d.shape[0], d.shape[1]], (d, v, k, lut))
    fn(a.address)
    return True


def t_read(t: np.ndarray, base: np.ndarray, mem: np.ndarray, size: int, n: int):
    """A T-indirect read in one compiled pass (the _TREAD loop): t the T register (4, P, 2) uint64,
    base the 4 cycles' word offsets (int64), mem the PE memory (rows, P) uint64, size its words, n
    the words of the operand (1 word, 2 long word, 4 ll).  (addresses (4, P) int64, least, greatest,
    long words read (4, P), the next ones for ll or None), or None where there is no loop, an address
    falls outside the memory (the caller's numpy path names it) or the arrays do not fit."""
    fn = kernel("tread")
    P = mem.shape[1] if mem.ndim == 2 else 0
    if fn is None or t.shape != (4, P, 2) or t.dtype != np.uint64 or mem.dtype != np.uint64 \
            or not mem.flags.c_contiguous or base.shape != (4,) or n not in (1, 2, 4):
        return None
    base = np.ascontiguousarray(base, np.int64)
    a = np.empty((4, P), np.int64)
    out0 = np.empty((4, P), np.uint64)
    out1 = np.empty((4, P), np.uint64) if n == 4 else out0
    lohi = np.empty(2, np.int64)
    args = Args([_address(t), t.strides[0], t.strides[1], _address(base), _address(mem), P, size, n,
                 ~(n - 1) if n > 1 else -1, _address(a), _address(out0), _address(out1), _address(lohi)],
                (t, base, mem, a, out0, out1, lohi))
    if fn(args.address):
        return None
    return a, int(lohi[0]), int(lohi[1]), out0, (out1 if n == 4 else None)
