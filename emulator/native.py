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

# The one argument points to 12 int64: d, sd, x, sx, y, sy, z, sz, rows, n, mx, mz (one pointer:
# ctypes converts twelve arguments in several microseconds, a tenth of a loop's time).  d, x, y, z
# are (rows, n) blocks of 32-bit lanes, rows `s*` bytes apart, lanes contiguous; the operands' bits
# are xor'ed with m* first (a sign flip: the negated operands of fvfma).
_TEMPLATE = """
define i64 @{name}(ptr noalias %a) nounwind {{
entry:
  %d = call ptr @arg_ptr(ptr %a, i64 0)
  %sd = call i64 @arg(ptr %a, i64 1)
  %x = call ptr @arg_ptr(ptr %a, i64 2)
  %sx = call i64 @arg(ptr %a, i64 3)
  %y = call ptr @arg_ptr(ptr %a, i64 4)
  %sy = call i64 @arg(ptr %a, i64 5)
  %z = call ptr @arg_ptr(ptr %a, i64 6)
  %sz = call i64 @arg(ptr %a, i64 7)
  %rows = call i64 @arg(ptr %a, i64 8)
  %n = call i64 @arg(ptr %a, i64 9)
  %mx64 = call i64 @arg(ptr %a, i64 10)
  %mz64 = call i64 @arg(ptr %a, i64 11)
  %mx = trunc i64 %mx64 to i32
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
# exponent all ones: mantissa cleared (no NaN survives); exponent 0: +0 (numbers.normalize_bits)

# A masked store's merge in one pass (executor._store): d = d ^ ((d ^ v) & lut[k & 15]) over (rows, n)
# long words, k the write mask's 4-bit nibbles; numpy takes a (rows, n) take of the table for the
# mask and three passes for the merge.  The argument words: d, sd, v, sv, k, sk, lut, rows, n.
_MERGE = """
define i64 @emu_merge(ptr noalias %a) nounwind {
entry:
  %d = call ptr @arg_ptr(ptr %a, i64 0)
  %sd = call i64 @arg(ptr %a, i64 1)
  %v = call ptr @arg_ptr(ptr %a, i64 2)
  %sv = call i64 @arg(ptr %a, i64 3)
  %k = call ptr @arg_ptr(ptr %a, i64 4)
  %sk = call i64 @arg(ptr %a, i64 5)
  %lut = call ptr @arg_ptr(ptr %a, i64 6)
  %rows = call i64 @arg(ptr %a, i64 7)
  %n = call i64 @arg(ptr %a, i64 8)
  br label %row
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
            ir = _HELPERS + _MERGE + "".join(_TEMPLATE.format(name=f"emu_f32_{op}", body=body)
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
        fns["_engine"] = engine                  # the code lives as long as its engine
        return fns
    except Exception:                            # no llvmlite, no native target: numpy does it
        return {}


def kernel(op: str):
    """The compiled loop of 'fma', 'mul' or 'add' (returns the NaN count) or 'merge' (merge()), or
    None.  Called as ``fn(a)`` with ``a`` the address of its arguments (``args``)."""
    if not _state:
        _state["fns"] = _compile()
    return _state["fns"].get(op)


def block(a: np.ndarray):
    """(address, row stride in bytes, rows, 32-bit lanes per row) of a (rows, ...) array whose rows
    are contiguous runs of 32-bit lanes, or None."""
    if a.ndim < 1 or a.itemsize * (a.size // max(a.shape[0], 1)) % 4:
        return None
    inner = a[0] if a.shape[0] else a
    if a.shape[0] and not inner.flags.c_contiguous:
        return None
    return a.__array_interface__["data"][0], (a.strides[0] if a.shape[0] > 1 else 0), a.shape[0], \
        inner.nbytes // 4


class Args:
    """A loop's arguments in memory: ``address`` is what the loop takes; the arrays they point
    into are kept alive with them."""

    __slots__ = ("words", "address", "arrays")

    def __init__(self, values, arrays):
        self.words = np.array(values, np.int64)
        self.address = self.words.__array_interface__["data"][0]
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
    a = Args([d.__array_interface__["data"][0], d.strides[0], v.__array_interface__["data"][0], v.strides[0],
              k.__array_interface__["data"][0], k.strides[0], lut.__array_interface__["data"][0],
              d.shape[0], d.shape[1]], (d, v, k, lut))
    fn(a.address)
    return True
