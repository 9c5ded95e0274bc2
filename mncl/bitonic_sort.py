"""mncl.bitonic_sort: PyOpenCL's BitonicSort, an in-place ascending sort of an Array whose length
is a power of two (a key array, optionally with an index array permuted alongside).

    from mncl.bitonic_sort import BitonicSort
    sorter = BitonicSort(ctx)
    arr, ev = sorter(arr)                    # in place; returns the array and the last event

log2(n) (log2(n) + 1) / 2 launches of one compare-exchange kernel (stage k, distance j): work-item
i pairs with i ^ j.  The partner's index is not an affine one, so the emulator's backend moves it
by a gather: correct everywhere, fast on the CPU device, slow on the emulator for large n."""
from __future__ import annotations

import numpy as np

from .program import Program
from .tools import c_type


def _source(t, with_idx):
    idx_param = ", __global int *idx" if with_idx else ""
    swap_idx = "int ti = idx[i]; idx[i] = idx[l]; idx[l] = ti;" if with_idx else ""
    return f"""
__kernel void bitonic_step(__global {t} *a{idx_param}, long k, long j)
{{
    long i = get_global_id(0);
    long l = i ^ j;
    if (l > i) {{
        {t} x = a[i], y = a[l];
        int up = (i & k) == 0;
        if (up ? x > y : x < y) {{
            a[i] = y;
            a[l] = x;
            {swap_idx}
        }}
    }}
}}
"""


class BitonicSort:
    """Sorts Arrays of the types OpenCL C has, ascending, in place (PyOpenCL's call shape)."""

    def __init__(self, context, key_dtype=None, idx_dtype=None, **kwargs):
        self.context = context
        self._programs = {}

    def _kernel(self, dtype, with_idx):
        key = (np.dtype(dtype), with_idx)
        k = self._programs.get(key)
        if k is None:
            k = self._programs[key] = Program(self.context, _source(c_type(dtype), with_idx)).build().bitonic_step
        return k

    def __call__(self, arr, idx=None, queue=None, wait_for=None, axis=0):
        n = arr.size
        if arr.ndim != 1 or axis != 0:
            raise NotImplementedError("mncl.bitonic_sort: one-dimensional arrays (axis 0)")
        if n & (n - 1):
            raise ValueError(f"mncl.bitonic_sort: the length must be a power of two, got {n}")
        if idx is not None and (idx.size != n or idx.dtype != np.int32):
            raise ValueError("mncl.bitonic_sort: idx must be an int32 Array of the same length")
        queue = queue or arr.queue
        knl = self._kernel(arr.dtype, idx is not None)
        extra = [idx.data] if idx is not None else []
        ev = None
        k = 2
        while k <= n:
            j = k // 2
            while j >= 1:
                ev = knl(queue, (n,), None, arr.data, *extra, np.int64(k), np.int64(j),
                         wait_for=wait_for if ev is None else None)
                j //= 2
            k *= 2
        return arr, ev
