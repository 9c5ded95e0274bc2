"""mncl.algorithm: stream compaction on device arrays (pyopencl.algorithm's copy_if, remove_if,
partition, unique), each a mncl.scan.GenericScanKernel over a 0/1 predicate, cached per context.

    out, count, ev = copy_if(ary, "ary[i] > 0")       # count: a 0-d Array (count.get())

The predicate and key expressions are C over ``ary[i]`` (and extra_args, given as (name, value)
pairs of Arrays or scalars, as PyOpenCL's)."""
from __future__ import annotations

import numpy as np

from .array import Array, _cached, empty, zeros
from .scan import GenericScanKernel
from .tools import ScalarArg, VectorArg, c_params


def _extra(extra_args):
    specs, vals = [], []
    for name, v in extra_args:
        if isinstance(v, Array):
            specs.append(VectorArg(v.dtype, name))
        else:
            v = np.asarray(v)[()]
            specs.append(ScalarArg(np.asarray(v).dtype, name))
        vals.append(v)
    return specs, vals


def _run(what, ary, predicate, extra_args, preamble, queue, outputs, statement):
    """A scan of `predicate` (0/1) writing `statement` with item / prev_item; returns count."""
    specs, vals = _extra(extra_args)
    # as PyOpenCL's: 32-bit positions unless the array is longer (64-bit scans cost the emulator
    # ~10x as much per step)
    scan_t = np.dtype(np.uint32 if ary.size <= np.iinfo(np.uint32).max else np.uint64)
    args = [VectorArg(ary.dtype, "ary")] + [VectorArg(ary.dtype, n) for n in outputs] + \
        [VectorArg(scan_t, "count")] + specs
    # the count from work-item 0 (last_item: the scan through the last index), not from work-item
    # n - 1: on the emulator's mncore2 machine a store to one element from a work-item outside
    # the first group is added up over the groups (tests/pyopencl_examples/test_examples.py's xfail)
    stmt = f"{statement}; if (i == 0) count[0] = last_item"
    key = (what, ary.dtype, scan_t, predicate, preamble, tuple((s.name, s.dtype) for s in specs))
    knl = _cached(ary.context, key, lambda: GenericScanKernel(
        ary.context, scan_t, c_params(args), f"({predicate}) ? 1 : 0", "a+b", "0", stmt,
        name_prefix=f"mncl_{what}", preamble=preamble))
    outs = [empty(queue or ary.queue, ary.shape, ary.dtype) for _ in outputs]
    count = zeros(queue or ary.queue, (), scan_t)
    ev = knl(ary, *outs, count, *vals, queue=queue) if ary.size else None
    return outs, count, ev


def copy_if(ary, predicate, extra_args=(), preamble="", queue=None, wait_for=None):
    """(the elements where predicate holds, in order, then undefined; their count; the event)."""
    (out,), count, ev = _run("copy_if", ary, predicate, extra_args, preamble, queue, ["out"],
                             "if (prev_item != item) out[prev_item] = ary[i]")
    return out, count, ev


def remove_if(ary, predicate, extra_args=(), preamble="", queue=None, wait_for=None):
    return copy_if(ary, f"!({predicate})", extra_args, preamble, queue, wait_for)


def partition(ary, predicate, extra_args=(), preamble="", queue=None, wait_for=None):
    """(the elements where predicate holds, those where it does not, in order; the first's count; event)."""
    (t, f), count, ev = _run("partition", ary, predicate, extra_args, preamble, queue, ["out_true", "out_false"],
                             "if (prev_item != item) out_true[prev_item] = ary[i]; "
                             "else out_false[i - prev_item] = ary[i]")
    return t, f, count, ev


def unique(ary, is_equal_expr="a == b", extra_args=(), preamble="", queue=None, wait_for=None):
    """(the first of every run of neighbours equal by is_equal_expr (over a, b), in order; their
    count; the event)."""
    pre = f"{preamble}\n#define MNCL_EQUAL(a, b) ({is_equal_expr})\n"
    return copy_if(ary, "i == 0 || !MNCL_EQUAL(ary[i - 1], ary[i])", extra_args, pre, queue, wait_for)
