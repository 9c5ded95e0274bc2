"""mncl.scan: PyOpenCL's prefix-sum kernels on MNCL's devices.

    from mncl.scan import InclusiveScanKernel, ExclusiveScanKernel, GenericScanKernel
    cumsum = InclusiveScanKernel(ctx, np.int32, "a+b")
    cumsum(arr)                                   # in place, as PyOpenCL's; returns the Array

Three launches: SHARES work-items each scan a contiguous share of the indices sequentially (its
total into a carries array), one work-item scans the share totals, then each share adds its
carry.  A contiguous share per work-item is a row the backend stages; the order of every
addition is fixed, so float results are the same every run.

GenericScanKernel takes PyOpenCL's arguments, input_expr, scan_expr, neutral and output_statement
(``item`` the inclusive value, ``prev_item`` the exclusive one, ``i`` the index); segmented
scans (is_segment_start_expr) and input_fetch_exprs are not supported yet.
"""
from __future__ import annotations

import numpy as np

from .program import Program
from .reduction import fold_shares, neutral_value
from .tools import VectorArg, c_params, c_type, call_args, parse_arg_list

SHARES = 64


def _source(name, t, neutral, scan_expr, input_expr, output_statement, args, preamble) -> str:
    params = c_params(args)
    sep = ", " if params else ""
    return f"""{preamble}
#define MNCL_SCAN(a, b) ({scan_expr})
#define MNCL_INPUT(i) ({input_expr})

{fold_shares(name + "_shares", t, neutral, "MNCL_SCAN", "MNCL_INPUT", params, "totals")}

__kernel void {name}_carries(__global {t} *totals, int count)
{{
    {t} acc = {neutral};
    for (int s = 0; s < count; s++) {{
        {t} b = totals[s];
        totals[s] = acc;                         /* the carry into share s: the scan before it */
        acc = MNCL_SCAN(acc, b);
    }}
}}

__kernel void {name}_out({params}{sep}long n, long share, __global const {t} *carries)
{{
    long s = get_global_id(0);
    long lo = s * share;
    long hi = lo + share < n ? lo + share : n;
    {t} acc = carries[s];
    for (long i = lo; i < hi; i++) {{
        {t} prev_item = acc;
        acc = MNCL_SCAN(acc, MNCL_INPUT(i));
        {t} item = acc;
        {output_statement};
    }}
}}
"""


class GenericScanKernel:
    """PyOpenCL's GenericScanKernel (unsegmented): output_statement runs at every index with
    `item` (the scan through i) and `prev_item` (through i - 1, `neutral` at 0)."""

    def __init__(self, ctx, dtype, arguments, input_expr, scan_expr, neutral, output_statement,
                 is_segment_start_expr=None, input_fetch_exprs=None, name_prefix="scan", preamble="",
                 options=None, **kwargs):
        if is_segment_start_expr is not None or input_fetch_exprs:
            raise NotImplementedError("mncl.scan: segmented scans and input_fetch_exprs are not supported yet")
        if neutral is None:
            raise ValueError("mncl.scan: a neutral element is required")
        self.context, self.dtype = ctx, np.dtype(dtype)
        self.args = parse_arg_list(arguments)
        if not any(isinstance(a, VectorArg) for a in self.args):
            raise ValueError(f"scan '{name_prefix}': no array argument to take the size from")
        self.name = name_prefix
        src = _source(name_prefix, c_type(self.dtype), neutral_value(self.dtype, neutral), scan_expr, input_expr, output_statement,
                      self.args, preamble)
        prg = Program(ctx, src).build(options=options or [])
        self.k_shares, self.k_carries, self.k_out = (getattr(prg, f"{name_prefix}_{p}") for p in ("shares", "carries", "out"))

    def __call__(self, *args, queue=None, wait_for=None, size=None, **kwargs):
        from .array import empty
        first, call = call_args(f"scan '{self.name}'", args, self.args)
        queue = queue or first.queue
        n = first.size if size is None else int(size)
        if n == 0:
            return None
        share = -(-n // SHARES)
        totals = empty(queue, (SHARES,), self.dtype)
        self.k_shares(queue, (SHARES,), None, *call, np.int64(n), np.int64(share), totals.data, wait_for=wait_for)
        self.k_carries(queue, (1,), None, totals.data, np.int32(SHARES))
        return self.k_out(queue, (SHARES,), None, *call, np.int64(n), np.int64(share), totals.data)


class _SimpleScan(GenericScanKernel):
    inclusive = True

    def __init__(self, ctx, dtype, scan_expr, neutral=None, name_prefix="scan", options=None, preamble="", **kwargs):
        dtype = np.dtype(dtype)
        if neutral is None:
            if scan_expr.replace(" ", "") not in ("a+b", "b+a"):
                raise ValueError("mncl.scan: give `neutral` for a scan that is not a+b")
            neutral = "0"
        t = c_type(dtype)
        out = "y[i] = item" if self.inclusive else "y[i] = prev_item"
        super().__init__(ctx, dtype, f"__global {t} *x, __global {t} *y", "x[i]", scan_expr, neutral, out,
                         name_prefix=name_prefix, preamble=preamble, options=options)

    def __call__(self, input_ary, output_ary=None, queue=None, wait_for=None, **kwargs):
        out = input_ary if output_ary is None else output_ary
        super().__call__(input_ary, out, queue=queue, wait_for=wait_for)
        return out


class InclusiveScanKernel(_SimpleScan):
    """y[i] = x[0] op ... op x[i] (in place when no output array is given)."""
    inclusive = True


class ExclusiveScanKernel(_SimpleScan):
    """y[i] = neutral op x[0] op ... op x[i-1]."""
    inclusive = False
