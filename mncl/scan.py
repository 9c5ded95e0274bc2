"""mncl.scan: PyOpenCL's prefix-sum kernels on MNCL's devices.

    from mncl.scan import InclusiveScanKernel, ExclusiveScanKernel, GenericScanKernel
    cumsum = InclusiveScanKernel(ctx, np.int32, "a+b")
    cumsum(arr)                                   # in place, as PyOpenCL's; returns the Array

ceil(log2 n) + 2 launches, each a work-item per index and no loop: the inputs (and segment
starts), then doubling steps (Hillis and Steele: after the step of distance d, index i holds the
scan of the 2d indices ending at i, combined in order, with whether a segment starts among them),
then the output statement at every index.  A loop over a work-item's indices that stores at every
step costs the emulator device ~300 cycles per element against ~2 for a store without a loop (the
backend stages a loop's reads as a row, not its writes), so the O(n log n) doubling is 5x to 20x
faster there than an O(n) scan by shares; the order of every operation is still fixed, and
scan_expr need only be associative.  The machine's reduction tree gives totals, not prefixes, and only
for +, max and min: scans do not use it (docs/runtime.md, mncl.scan).

GenericScanKernel takes PyOpenCL's arguments, input_expr, scan_expr (``a``, ``b``,
``across_seg_boundary``), neutral, output_statement (``item`` the inclusive value, ``prev_item``
the exclusive one, ``last_item`` the total, ``i`` the index), is_segment_start_expr (segmented
scans: the scan_expr keeps segments apart, as PyOpenCL's) and input_fetch_exprs.
"""
from __future__ import annotations

import numpy as np

from .reduction import neutral_value
from .tools import Variants, VectorArg, c_params, c_type, call_args, has_offsets, offset_prologue, parse_arg_list


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
            offsets=False) -> str:
    """The OpenCL C of a scan's three kernels: _in (the inputs and segment starts), _pass (one
    doubling step) and _out (the output statement at every index)."""
    params = c_params(args, offsets)
    prologue = offset_prologue(args, offsets)
    sep = ", " if params else ""
    seg = "MNCL_SEG_START(i, mncl_b)" if seg_expr else "false"
    flags_in = ", __global char *mncl_f" if seg_expr else ""
    flags_pass = ", __global const char *mncl_f, __global char *mncl_g" if seg_expr else ""
    if seg_expr:
        step = """bool mncl_across = mncl_f[i] != 0;
            mncl_w[i] = MNCL_SCAN(mncl_v[i - mncl_d], mncl_v[i], mncl_across);
            mncl_g[i] = mncl_across || mncl_f[i - mncl_d] != 0;"""
        keep = "mncl_w[i] = mncl_v[i]; mncl_g[i] = mncl_f[i];"
    else:
        step = "mncl_w[i] = MNCL_SCAN(mncl_v[i - mncl_d], mncl_v[i], false);"
        keep = "mncl_w[i] = mncl_v[i];"
    return f"""{preamble}
#define MNCL_SCAN(a, b, across_seg_boundary) ({scan_expr})
#define MNCL_INPUT(i) ({input_expr})
#define MNCL_SEG_START(i, a) ({seg_expr or "false"})

/* the input at every index i, and whether a segment starts there */
__kernel void {name}_in({params}{sep}long n, __global {t} *mncl_v{flags_in})
{{
    {prologue}
    long i = get_global_id(0);
    if (i < n) {{
        {fetch}
        {t} mncl_b = MNCL_INPUT(i);
        mncl_v[i] = mncl_b;
        {"mncl_f[i] = " + seg + ";" if seg_expr else ""}
    }}
}}

/* one doubling step: mncl_v[i] held the scan of (i - mncl_d, i], mncl_w[i] gets that of
   (i - 2 mncl_d, i]; mncl_f / mncl_g: whether a segment starts in the range */
__kernel void {name}_pass(__global const {t} *mncl_v, long n, long mncl_d, __global {t} *mncl_w{flags_pass})
{{
    long i = get_global_id(0);
    if (i < n) {{
        if (i >= mncl_d) {{
            {step}
        }} else {{
            {keep}
        }}
    }}
}}

/* the output statement at every index, with item, prev_item and last_item */
__kernel void {name}_out({params}{sep}long n, __global const {t} *mncl_v)
{{
    {prologue}
    long i = get_global_id(0);
    if (i < n) {{
        {fetch}
        {t} mncl_b = MNCL_INPUT(i);
        bool mncl_seg = {seg};
        {t} item = mncl_v[i];
        {t} prev_item = (i == 0 || mncl_seg) ? {neutral} : mncl_v[i - 1];
        {t} last_item = mncl_v[n - 1];
        {{ {output_statement}; }}
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
        self.segmented = is_segment_start_expr is not None
        self.programs = Variants(ctx, lambda offsets: _source(name_prefix, t, init, scan_expr, input_expr,
                                                             output_statement, self.args, preamble,
                                                             is_segment_start_expr, fetch, offsets), options)
        self.source = self.programs.source

    def _kernels(self, offsets):
        """(in, pass, out) kernels; with offsets, the variant taking each array's offset."""
        prg = self.programs(offsets)
        return tuple(getattr(prg, f"{self.name}_{p}") for p in ("in", "pass", "out"))

    def __call__(self, *args, queue=None, wait_for=None, size=None, allocator=None, **kwargs):
        from .array import empty
        offsets = has_offsets(args)
        first, call = call_args(f"scan '{self.name}'", args, self.args, offsets)
        k_in, k_pass, k_out = self._kernels(offsets)
        queue = queue or first.queue
        n = first.size if size is None else int(size)
        if n == 0:
            return None
        g = (n,)
        v, w = empty(queue, g, self.dtype), empty(queue, g, self.dtype)
        f, h = (empty(queue, g, np.int8), empty(queue, g, np.int8)) if self.segmented else (None, None)
        k_in(queue, g, None, *call, np.int64(n), v.data, *([f.data] if f is not None else []), wait_for=wait_for)
        d = 1
        while d < n:
            k_pass(queue, g, None, v.data, np.int64(n), np.int64(d), w.data,
                   *([f.data, h.data] if f is not None else []))
            v, w, f, h = w, v, h, f
            d *= 2
        return k_out(queue, g, None, *call, np.int64(n), v.data)


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
