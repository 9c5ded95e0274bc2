"""mncl.scan: PyOpenCL's prefix-sum kernels on MNCL's devices.

    from mncl.scan import InclusiveScanKernel, ExclusiveScanKernel, GenericScanKernel
    cumsum = InclusiveScanKernel(ctx, np.int32, "a+b")
    cumsum(arr)                                   # in place, as PyOpenCL's; returns the Array

A work-item per SHARE (64) consecutive indices scans them in order (its total, and whether a
segment starts among them, into a totals array); the totals are scanned into the carry into each
share (the same way, by shares of 64, level above level, when there are more than 64 of them);
then each share scans again from its carry and runs the output statement.  n <= 4096: three
launches.  The share's length is a constant, which the emulator device's backend stages as a row
(mncl.reduction says how much that saves).  A contiguous share per work-item is a row the backend stages; the order of every
addition is fixed, so float results are the same every run.

GenericScanKernel takes PyOpenCL's arguments, input_expr, scan_expr (``a``, ``b``,
``across_seg_boundary``), neutral, output_statement (``item`` the inclusive value, ``prev_item``
the exclusive one, ``last_item`` the total, ``i`` the index), is_segment_start_expr (segmented
scans: the scan_expr keeps segments apart, as PyOpenCL's) and input_fetch_exprs.
"""
from __future__ import annotations

import numpy as np

from .program import Program
from .reduction import neutral_value
from .tools import VectorArg, c_params, c_type, call_args, has_offsets, offset_prologue, parse_arg_list

SHARE = 64


def _fetches(args, input_fetch_exprs) -> str:
    """The statements declaring input_fetch_exprs' variables at index i: NAME = ARG[i + OFFSET] (at
    an index outside 0 .. n-1, ARG[i]: PyOpenCL leaves the value undefined there)."""
    types = {a.name: c_type(a.dtype) for a in args if isinstance(a, VectorArg)}
    out = []
    for name, arg, off in input_fetch_exprs or ():
        if arg not in types:
            raise ValueError(f"mncl.scan: input_fetch_exprs names '{arg}', which is not an array argument")
        off = int(off)
        if off == 0:
            out.append(f"{types[arg]} {name} = {arg}[i];")
        else:
            out.append(f"{types[arg]} {name} = {arg}[i]; "
                       f"if (i + ({off}) >= 0 && i + ({off}) < n) {name} = {arg}[i + ({off})];")
    return " ".join(out)


def _source(name, t, neutral, scan_expr, input_expr, output_statement, args, preamble, seg_expr, fetch,
            offsets=False, part="main") -> str:
    """The OpenCL C of a scan's kernels: part "main" (shares, tcarry1, out) or "levels" (tshares,
    tcarry: the scan of more than SHARE share totals, built on first need)."""
    params = c_params(args, offsets)
    prologue = offset_prologue(args, offsets)
    sep = ", " if params else ""
    seg = "MNCL_SEG_START(i, mncl_b)" if seg_expr else "false"
    K = SHARE
    header = f"""{preamble}
#define MNCL_SCAN(a, b, across_seg_boundary) ({scan_expr})
#define MNCL_INPUT(i) ({input_expr})
#define MNCL_SEG_START(i, a) ({seg_expr or "false"})

"""
    if part == "levels":
        return header + f"""
/* the same over the m totals (and segment flags) of the level below */
__kernel void {name}_tshares(__global const {t} *mncl_in, __global const int *mncl_instarts, long m,
                             __global {t} *mncl_totals, __global int *mncl_starts)
{{
    long mncl_p = get_global_id(0);
    {t} mncl_acc = {neutral};
    int mncl_any = 0;
    for (int mncl_j = 0; mncl_j < {K}; mncl_j++) {{
        long i = mncl_p * {K} + mncl_j;
        if (i < m) {{
            bool mncl_seg = mncl_instarts[i] != 0;
            mncl_any |= mncl_seg;
            mncl_acc = MNCL_SCAN(mncl_acc, mncl_in[i], mncl_seg);
        }}
    }}
    mncl_totals[mncl_p] = mncl_acc;
    mncl_starts[mncl_p] = mncl_any;
}}

/* the carries into the shares of the level below: mncl_out[i] the exclusive scan of its m totals
   (from the carries of the level above), mncl_out[m] the scan through the last one */
__kernel void {name}_tcarry(__global const {t} *mncl_in, __global const int *mncl_instarts, long m,
                            __global const {t} *mncl_carries, __global {t} *mncl_out)
{{
    long mncl_p = get_global_id(0);
    {t} mncl_acc = mncl_carries[mncl_p];
    for (int mncl_j = 0; mncl_j < {K}; mncl_j++) {{
        long i = mncl_p * {K} + mncl_j;
        if (i < m) {{
            mncl_out[i] = mncl_acc;
            mncl_acc = MNCL_SCAN(mncl_acc, mncl_in[i], mncl_instarts[i] != 0);
            if (i == m - 1)
                mncl_out[m] = mncl_acc;
        }}
    }}
}}

"""
    return header + f"""
/* work-item p scans indices p * {K} .. p * {K} + {K - 1} below n into mncl_totals[p];
   mncl_starts[p]: whether a segment starts among them */
__kernel void {name}_shares({params}{sep}long n, __global {t} *mncl_totals, __global int *mncl_starts)
{{
    {prologue}
    long mncl_p = get_global_id(0);
    {t} mncl_acc = {neutral};
    int mncl_any = 0;
    for (int mncl_j = 0; mncl_j < {K}; mncl_j++) {{
        long i = mncl_p * {K} + mncl_j;
        if (i < n) {{
            {fetch}
            {t} mncl_b = MNCL_INPUT(i);
            bool mncl_seg = {seg};
            mncl_any |= mncl_seg;
            mncl_acc = MNCL_SCAN(mncl_acc, mncl_b, mncl_seg);
        }}
    }}
    mncl_totals[mncl_p] = mncl_acc;
    mncl_starts[mncl_p] = mncl_any;
}}

/* the same by one work-item over all m (<= {K}) totals, from the neutral: a loop of a run-time
   trip count, which the emulator's backend runs faster than the constant one for one work-item */
__kernel void {name}_tcarry1(__global const {t} *mncl_in, __global const int *mncl_instarts, long m,
                             __global {t} *mncl_out)
{{
    {t} mncl_acc = {neutral};
    for (long i = 0; i < m; i++) {{
        mncl_out[i] = mncl_acc;
        mncl_acc = MNCL_SCAN(mncl_acc, mncl_in[i], mncl_instarts[i] != 0);
    }}
    mncl_out[m] = mncl_acc;
}}

/* each share scanned again from its carry, output_statement at every index */
__kernel void {name}_out({params}{sep}long n, __global const {t} *mncl_carries, long mncl_m)
{{
    {prologue}
    long mncl_p = get_global_id(0);
    {t} mncl_acc = mncl_carries[mncl_p];
    {t} last_item = mncl_carries[mncl_m];
    for (int mncl_j = 0; mncl_j < {K}; mncl_j++) {{
        long i = mncl_p * {K} + mncl_j;
        if (i < n) {{
            {fetch}
            {t} mncl_b = MNCL_INPUT(i);
            bool mncl_seg = {seg};
            {t} prev_item = mncl_seg ? {neutral} : mncl_acc;
            mncl_acc = MNCL_SCAN(mncl_acc, mncl_b, mncl_seg);
            {t} item = mncl_acc;
            {{ {output_statement}; }}
        }}
    }}
}}
"""


class GenericScanKernel:
    """PyOpenCL's GenericScanKernel: output_statement runs at every index i with `item` (the scan
    through i), `prev_item` (through i - 1; `neutral` at 0 and at a segment start) and `last_item`
    (the scan through the last index).  scan_expr sees `a`, `b` and `across_seg_boundary` (true when
    b starts a segment: is_segment_start_expr over i and the input `a`); input_fetch_exprs are
    (NAME, ARG_NAME, OFFSET) tuples defining NAME = ARG_NAME[i + OFFSET] for the expressions."""

    def __init__(self, ctx, dtype, arguments, input_expr, scan_expr, neutral, output_statement,
                 is_segment_start_expr=None, input_fetch_exprs=None, index_dtype=None, name_prefix="scan",
                 options=None, preamble="", devices=None, **kwargs):
        if neutral is None:
            raise ValueError("mncl.scan: a neutral element is required")
        self.context, self.dtype = ctx, np.dtype(dtype)
        self.args = parse_arg_list(arguments)
        if not any(isinstance(a, VectorArg) for a in self.args):
            raise ValueError(f"scan '{name_prefix}': no array argument to take the size from")
        self.name = name_prefix
        t = c_type(self.dtype)
        init = neutral_value(self.dtype, neutral)
        fetch = _fetches(self.args, input_fetch_exprs)
        self._make = lambda offsets, part="main": _source(name_prefix, t, init, scan_expr, input_expr,
                                                          output_statement, self.args, preamble,
                                                          is_segment_start_expr, fetch, offsets, part)
        self._levels = None
        self.options = options or []
        self.source = self._make(False)
        self._programs = {False: Program(ctx, self.source).build(options=self.options)}

    def _kernels(self, offsets):
        """(shares, tcarry1, out) kernels; with offsets, the variant taking each array's offset
        (built on the first call with a view that has one)."""
        if offsets not in self._programs:
            self._programs[offsets] = Program(self.context, self._make(offsets)).build(options=self.options)
        prg = self._programs[offsets]
        return tuple(getattr(prg, f"{self.name}_{p}") for p in ("shares", "tcarry1", "out"))

    def _level_kernels(self):
        """(tshares, tcarry): the scan of more than SHARE share totals, built on first need."""
        if self._levels is None:
            prg = Program(self.context, self._make(False, "levels")).build(options=self.options)
            self._levels = (getattr(prg, f"{self.name}_tshares"), getattr(prg, f"{self.name}_tcarry"))
        return self._levels

    def __call__(self, *args, queue=None, wait_for=None, size=None, allocator=None, **kwargs):
        from .array import empty
        offsets = has_offsets(args)
        first, call = call_args(f"scan '{self.name}'", args, self.args, offsets)
        k_shares, k_tcarry1, k_out = self._kernels(offsets)
        queue = queue or first.queue
        n = first.size if size is None else int(size)
        if n == 0:
            return None
        m = -(-n // SHARE)
        totals, starts = empty(queue, (m,), self.dtype), empty(queue, (m,), np.int32)
        k_shares(queue, (m,), None, *call, np.int64(n), totals.data, starts.data, wait_for=wait_for)
        carries = self._carries(queue, totals, starts, m, k_tcarry1)
        return k_out(queue, (m,), None, *call, np.int64(n), carries.data, np.int64(m))

    def _carries(self, queue, totals, starts, m, k_tcarry1):
        """The carries into the m shares whose totals (and segment flags) are given, and at [m]
        the whole scan: a scan of the totals, itself by shares when there are many."""
        from .array import empty
        carries = empty(queue, (m + 1,), self.dtype)
        k = -(-m // SHARE)
        if k == 1:
            k_tcarry1(queue, (1,), None, totals.data, starts.data, np.int64(m), carries.data)
            return carries
        k_tshares, k_tcarry = self._level_kernels()
        upper, ustarts = empty(queue, (k,), self.dtype), empty(queue, (k,), np.int32)
        k_tshares(queue, (k,), None, totals.data, starts.data, np.int64(m), upper.data, ustarts.data)
        above = self._carries(queue, upper, ustarts, k, k_tcarry1)
        k_tcarry(queue, (k,), None, totals.data, starts.data, np.int64(m), above.data, carries.data)
        return carries


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
