"""mncl.reduction: PyOpenCL's ReductionKernel on MNCL's devices.

    from mncl.reduction import ReductionKernel
    dot = ReductionKernel(ctx, np.float32, neutral="0", reduce_expr="a+b", map_expr="x[i]*y[i]",
                          arguments="__global const float *x, __global const float *y")
    d = dot(x_arr, y_arr).get()                     # a 0-d mncl.array.Array

A tree of in-order folds: the first launch has a work-item per SHARE (64) consecutive indices,
which folds them in order (map_expr at index i, then reduce_expr of the running value a and the
mapped b, from `neutral`) into one part; each further launch folds SHARE consecutive parts the
same way, until one value is left (20,000 elements: three launches).  The share's length is a
constant: on the emulator device a loop of a constant trip count over a work-item's consecutive
indices is a row the backend stages, ~100x to 700x fewer cycles than the loop of a run-time trip
count it replaces (64 work-items folding n/64 each: 7.5M cycles for 20,000 floats on `tiny`,
now ~50K).  reduce_expr need only be associative; the order is fixed, so a floating-point result
is the same every run.

On the emulator device, a sum, max or min of float32 (a sum, & or | of int32 / uint32) takes the
machine's reduction tree instead (mncl/reduction_tree.py): one SPMD launch writes reduce_expr of
the neutral and map_expr at every index (the neutral past n, up to the tree kernel's size), then
one task kernel reduces them: two launches for any size, against the folds' ~20K-30K cycles per
launch.  MNCL_REDUCTION_TREE=0 (or tree=False) keeps the folds, for comparisons.
"""
from __future__ import annotations

import os

import numpy as np

from . import reduction_tree
from .cltypes import vec_types
from .constants import mem_flags
from .kernel import enqueue_task
from .memory import Buffer
from .program import Program
from .transfers import enqueue_copy
from .tools import Variants, VectorArg, c_params, c_type, call_args, has_offsets, offset_prologue, parse_arg_list

SHARE = 64


def neutral_value(dtype, neutral) -> str:
    """The C initializer of a `dtype` variable to the user's `neutral` expression: converted to a
    scalar or vector type, as is (a struct value, such as a preamble function's result) for a
    struct dtype, where C has no cast."""
    dtype = np.dtype(dtype)
    struct = dtype.names is not None and dtype.subdtype is None and dtype not in vec_types.values()
    return f"({neutral})" if struct else f"({c_type(dtype)})({neutral})"


def fold_shares(kernel, t, neutral, fold, item, params, out, prologue="") -> str:
    """The OpenCL C of a kernel whose work-item p folds (macro `fold`, from the C initializer
    `neutral`, neutral_value's) the items (macro `item` at index i) of indices p * SHARE ..
    p * SHARE + SHARE - 1 below n, in order, into out[p]."""
    sep = ", " if params else ""
    return f"""__kernel void {kernel}({params}{sep}long n, __global {t} *{out})
{{
    {prologue}
    long mncl_p = get_global_id(0);
    {t} mncl_acc = {neutral};
    for (int mncl_j = 0; mncl_j < {SHARE}; mncl_j++) {{
        long i = mncl_p * {SHARE} + mncl_j;
        if (i < n) {{
            {t} mncl_b = {item}(i);
            mncl_acc = {fold}(mncl_acc, mncl_b);
        }}
    }}
    {out}[mncl_p] = mncl_acc;
}}"""


def _tree_input(name, out_t, neutral, params, prologue) -> str:
    """The kernel writing the tree's input: reduce_expr of the neutral and map_expr at each index
    below n (what a fold does with one value: an fmax drops a NaN there), the neutral up to the
    tree kernel's size."""
    return f"""__kernel void {name}_tree_in({params}{", " if params else ""}long n, __global {out_t} *mncl_out)
{{
    {prologue}
    long i = get_global_id(0);
    {out_t} mncl_v = {neutral};
    if (i < n)
        mncl_v = MNCL_REDUCE(mncl_v, MNCL_MAP(i));
    mncl_out[i] = mncl_v;
}}"""


def _source(name, out_t, neutral, reduce_expr, map_expr, args, preamble, offsets=False, tree=False) -> str:
    params = c_params(args, offsets)
    return f"""{preamble}
#define MNCL_REDUCE(a, b) ({reduce_expr})
#define MNCL_MAP(i) ({map_expr})
#define MNCL_PART(i) (mncl_in[i])

{fold_shares(name + "_parts", out_t, neutral, "MNCL_REDUCE", "MNCL_MAP", params, "mncl_parts",
             offset_prologue(args, offsets))}

{fold_shares(name + "_fold", out_t, neutral, "MNCL_REDUCE", "MNCL_PART", f"__global const {out_t} *mncl_in",
             "mncl_out")}

/* map_expr at every index, a work-item each (for a map over several arrays: see ReductionKernel) */
__kernel void {name}_map({params}{", " if params else ""}long n, __global {out_t} *mncl_out)
{{
    {offset_prologue(args, offsets)}
    long i = get_global_id(0);
    if (i < n)
        mncl_out[i] = MNCL_MAP(i);
}}

{_tree_input(name, out_t, neutral, params, offset_prologue(args, offsets)) if tree else ""}
"""


class ReductionKernel:
    """reduce_expr over map_expr at every index of the first array argument (PyOpenCL's signature;
    tree=False: never the reduction tree)."""

    def __init__(self, ctx, dtype_out, neutral, reduce_expr, map_expr=None, arguments=None,
                 name="reduce_kernel", options=None, preamble="", tree=True, **kwargs):
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
        # a map over several arrays is written out by a work-item per index first: the emulator's
        # backend stages one array's row in a folding loop well, two or more ~30x slower
        self.mapped_first = len(vectors) > 1
        init = neutral_value(self.dtype_out, neutral)
        # the tree's op (None: the folds only); its kernels per (device, vectors per PE)
        self.tree_op = reduction_tree.tree_op(self.dtype_out, reduce_expr) if tree else None
        on_emulator = any(d.backend.description.kind == "emulator" for d in ctx.devices)
        tree_in = self.tree_op is not None and on_emulator
        self._tree_kernels = {}
        self.programs = Variants(ctx, lambda offsets: _source(name, c_type(self.dtype_out), init, reduce_expr,
                                                             map_expr, self.args, preamble, offsets, tree_in),
                                 options)
        self.source = self.programs.source

    def _kernels(self, offsets):
        """(parts, fold, map) kernels; with offsets, the variant taking each array's offset."""
        prg = self.programs(offsets)
        return getattr(prg, f"{self.name}_parts"), getattr(prg, f"{self.name}_fold"), getattr(prg, f"{self.name}_map")

    def __call__(self, *args, queue=None, wait_for=None, return_event=False, out=None, range=None, slice=None,
                 **kwargs):
        from .array import empty
        if range is not None or slice is not None:
            raise NotImplementedError(f"ReductionKernel '{self.name}': range= and slice= are not supported")
        offsets = has_offsets(args)
        first, call = call_args(f"ReductionKernel '{self.name}'", args, self.args, offsets)
        queue = queue or first.queue
        n = first.size
        if self._takes_tree(queue):
            return self._on_tree(queue, call, offsets, n, out, wait_for, return_event)
        k_parts, k_fold, k_map = self._kernels(offsets)
        result = out if out is not None else empty(queue, (), self.dtype_out)
        m = max(1, -(-n // SHARE))                          # parts after the first launch
        if m > 1 and self.mapped_first:
            mapped = empty(queue, (n,), self.dtype_out)
            k_map(queue, (n,), None, *call, np.int64(n), mapped.data, wait_for=wait_for)
            parts, m = mapped, n
        else:
            parts = result if m == 1 else empty(queue, (m,), self.dtype_out)
            ev = k_parts(queue, (m,), None, *call, np.int64(n), parts.data, wait_for=wait_for)
        while m > 1:
            k = -(-m // SHARE)
            folded = result if k == 1 else empty(queue, (k,), self.dtype_out)
            ev = k_fold(queue, (k,), None, parts.data, np.int64(m), folded.data)
            parts, m = folded, k
        return (result, ev) if return_event else result

    def _takes_tree(self, queue) -> bool:
        return (self.tree_op is not None and queue.device.backend.description.kind == "emulator"
                and os.environ.get("MNCL_REDUCTION_TREE", "1").strip() != "0")

    def _tree_kernel(self, device, k):
        """The task kernel of k vectors per PE for this reduction's op and dtype (built once)."""
        knl = self._tree_kernels.get((device, k))
        if knl is None:
            name = f"{self.name}_tree"
            prg = Program(self.context, reduction_tree.source(name, k, self.tree_op, self.dtype_out)).build(
                devices=[device])
            knl = self._tree_kernels[(device, k)] = getattr(prg, name)
        return knl

    def _on_tree(self, queue, call, offsets, n, out, wait_for, return_event):
        """The tree input (an SPMD launch), then the task kernel, whose result block is the 0-d
        result's buffer (copied into `out` when one is given)."""
        from .array import Array, empty
        machine = queue.device.backend.machine
        k, chunks = reduction_tree.plan(machine, n)
        size = reduction_tree.padded(machine, k, chunks)
        parts = empty(queue, (size,), self.dtype_out)
        k_in = getattr(self.programs(offsets), f"{self.name}_tree_in")
        k_in(queue, (size,), None, *call, np.int64(n), parts.data, wait_for=wait_for)
        block = Buffer(self.context, mem_flags.READ_WRITE | mem_flags.COPY_HOST_PTR,
                       hostbuf=reduction_tree.out_template(self.dtype_out))
        knl = self._tree_kernel(queue.device, k)
        knl.set_args(parts.data, block, np.int64(chunks))
        ev = enqueue_task(queue, knl)
        if out is None:
            result = Array(queue, (), self.dtype_out, data=block)
        else:
            result = out
            ev = enqueue_copy(queue, out.base_data, block, byte_count=self.dtype_out.itemsize,
                              dst_offset=out.offset, is_blocking=False)
        return (result, ev) if return_event else result
