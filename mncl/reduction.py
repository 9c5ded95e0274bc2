"""mncl.reduction: PyOpenCL's ReductionKernel on MNCL's devices.

    from mncl.reduction import ReductionKernel
    dot = ReductionKernel(ctx, np.float32, neutral="0", reduce_expr="a+b", map_expr="x[i]*y[i]",
                          arguments="__global const float *x, __global const float *y")
    d = dot(x_arr, y_arr).get()                     # a 0-d mncl.array.Array

Two launches: PARTS work-items each fold a contiguous share of the indices (map_expr at index i,
then reduce_expr of the running value a and the mapped b, from `neutral`), then one work-item
folds the shares in order.  A contiguous share per work-item is a row the backend stages, where
PyOpenCL's grid-stride loop would be a strided access the emulator's backend gathers; the fold
order is fixed, so a floating-point result is the same every run.
"""
from __future__ import annotations

import numpy as np

from .program import Program
from .tools import VectorArg, c_params, c_type, call_args, has_offsets, offset_prologue, parse_arg_list

PARTS = 64


def neutral_value(dtype, neutral) -> str:
    """The C initializer of a `dtype` variable to the user's `neutral` expression: converted to a
    scalar or vector type, as is (a struct value, such as a preamble function's result) for a
    struct dtype, where C has no cast."""
    dtype = np.dtype(dtype)
    return f"({neutral})" if dtype.names is not None and dtype.subdtype is None and \
        c_type(dtype) not in _VECTOR_NAMES else f"({c_type(dtype)})({neutral})"


_VECTOR_NAMES = {f"{t}{n}" for t in ("char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "float",
                                     "double") for n in (2, 3, 4, 8, 16)}


def fold_shares(kernel, t, neutral, fold, item, params, out, prologue="") -> str:
    """The OpenCL C of a kernel whose work-item p folds (macro `fold`, from the C initializer
    `neutral`, neutral_value's) the items (macro `item` at index i) of the p-th contiguous share
    of 0 .. n-1 into out[p]: the first launch of a reduction."""
    sep = ", " if params else ""
    return f"""__kernel void {kernel}({params}{sep}long n, long mncl_share, __global {t} *{out})
{{
    {prologue}
    long mncl_p = get_global_id(0);
    long mncl_lo = mncl_p * mncl_share;
    long mncl_hi = mncl_lo + mncl_share < n ? mncl_lo + mncl_share : n;
    {t} mncl_acc = {neutral};
    for (long i = mncl_lo; i < mncl_hi; i++) {{
        {t} mncl_b = {item}(i);
        mncl_acc = {fold}(mncl_acc, mncl_b);
    }}
    {out}[mncl_p] = mncl_acc;
}}"""


def _source(name, out_t, neutral, reduce_expr, map_expr, args, preamble, offsets=False) -> str:
    params = c_params(args, offsets)
    return f"""{preamble}
#define MNCL_REDUCE(a, b) ({reduce_expr})
#define MNCL_MAP(i) ({map_expr})

{fold_shares(name + "_parts", out_t, neutral, "MNCL_REDUCE", "MNCL_MAP", params, "mncl_parts",
             offset_prologue(args, offsets))}

__kernel void {name}_total(__global const {out_t} *mncl_parts, int mncl_count, __global {out_t} *mncl_out)
{{
    {out_t} mncl_acc = {neutral};
    for (int mncl_p = 0; mncl_p < mncl_count; mncl_p++)
        mncl_acc = MNCL_REDUCE(mncl_acc, mncl_parts[mncl_p]);
    mncl_out[0] = mncl_acc;
}}
"""


class ReductionKernel:
    """reduce_expr over map_expr at every index of the first array argument (PyOpenCL's signature)."""

    def __init__(self, ctx, dtype_out, neutral, reduce_expr, map_expr=None, arguments=None,
                 name="reduce_kernel", options=None, preamble="", **kwargs):
        self.context = ctx
        self.dtype_out = np.dtype(dtype_out)
        self.args = parse_arg_list(arguments or [])
        vectors = [a for a in self.args if isinstance(a, VectorArg)]
        if not vectors:
            raise ValueError(f"ReductionKernel '{name}': no array argument to take the size from")
        if map_expr is None:
            if len(vectors) != 1:
                raise ValueError(f"ReductionKernel '{name}': without map_expr, one array argument (got {len(vectors)})")
            map_expr = f"{vectors[0].name}[i]"
        self.name = name
        init = neutral_value(self.dtype_out, neutral)
        self._make = lambda offsets: _source(name, c_type(self.dtype_out), init, reduce_expr, map_expr, self.args,
                                             preamble, offsets)
        self.options = options or []
        self.source = self._make(False)
        self._programs = {False: Program(ctx, self.source).build(options=self.options)}

    def _kernels(self, offsets):
        """(parts, total) kernels; with offsets, the variant taking each array's offset (built on
        the first call with a view that has one)."""
        if offsets not in self._programs:
            self._programs[offsets] = Program(self.context, self._make(offsets)).build(options=self.options)
        prg = self._programs[offsets]
        return getattr(prg, f"{self.name}_parts"), getattr(prg, f"{self.name}_total")

    def __call__(self, *args, queue=None, wait_for=None, return_event=False, out=None, range=None, slice=None,
                 **kwargs):
        from .array import empty
        if range is not None or slice is not None:
            raise NotImplementedError(f"ReductionKernel '{self.name}': range= and slice= are not supported")
        offsets = has_offsets(args)
        first, call = call_args(f"ReductionKernel '{self.name}'", args, self.args, offsets)
        k_parts, k_total = self._kernels(offsets)
        queue = queue or first.queue
        n = first.size
        share = max(1, -(-n // PARTS))
        parts = empty(queue, (PARTS,), self.dtype_out)
        result = out if out is not None else empty(queue, (), self.dtype_out)
        k_parts(queue, (PARTS,), None, *call, np.int64(n), np.int64(share), parts.data, wait_for=wait_for)
        ev = k_total(queue, (1,), None, parts.data, np.int32(PARTS), result.data)
        return (result, ev) if return_event else result
