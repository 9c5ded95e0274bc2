"""Scans and stream compaction (PyOpenCL's scan and algorithm documentation, extended): inclusive
and exclusive prefix sums, a running maximum, a GenericScanKernel with an output statement, a
segmented scan using is_segment_start_expr and input_fetch_exprs (sums restarting wherever the key
changes), a scan over a struct dtype registered with cl.tools (a running count and sum of the positive
elements together), and copy_if / remove_if / partition / unique."""
import numpy as np

PAIR_FUNCTIONS = """
pair_t pair_zero(void) { pair_t r; r.count = 0; r.sum = 0; return r; }
pair_t pair_of(int v) { pair_t r; r.count = v > 0; r.sum = v > 0 ? v : 0; return r; }
pair_t pair_add(pair_t a, pair_t b) { pair_t r; r.count = a.count + b.count; r.sum = a.sum + b.sum; return r; }
"""

SIZES = {"small": {"n": 1000}, "large": {"n": 5000}}


def inputs(n):
    rng = np.random.default_rng(5)
    x = rng.integers(-9, 10, n).astype(np.int32)
    keys = np.sort(rng.integers(0, n // 20 + 1, n)).astype(np.int32)
    return x, keys, rng.standard_normal(n).astype(np.float32)


def run(cl, queue, n):
    ctx = queue.context
    x_np, keys_np, f_np = inputs(n)
    x, keys, f = (cl.array.to_device(queue, v) for v in (x_np, keys_np, f_np))
    out = {}
    inclusive = cl.scan.InclusiveScanKernel(ctx, np.int32, "a+b", "0")
    out["inclusive"] = inclusive(x.copy()).get()
    exclusive = cl.scan.ExclusiveScanKernel(ctx, np.int32, "a+b", "0")
    ex = cl.array.empty_like(x)
    exclusive(x, ex)
    out["exclusive"] = ex.get()
    runmax = cl.scan.InclusiveScanKernel(ctx, np.float32, "fmax(a, b)", neutral="-INFINITY")
    out["runmax"] = runmax(f.copy()).get()
    # positions of the positive elements among them, and their total, from one scan
    pos = cl.array.zeros(queue, n, np.int32)
    total = cl.array.zeros(queue, 1, np.int32)
    rank = cl.scan.GenericScanKernel(
        ctx, np.int32, arguments="__global const int *x, __global int *pos, __global int *total",
        input_expr="x[i] > 0 ? 1 : 0", scan_expr="a+b", neutral="0",
        output_statement="pos[i] = x[i] > 0 ? prev_item : -1; if (i == 0) total[0] = last_item;")
    rank(x, pos, total)
    out["rank"], out["rank_total"] = pos.get(), total.get()
    # segmented: running sums of x that restart wherever keys changes
    segsum = cl.array.empty_like(x)
    seg = cl.scan.GenericScanKernel(
        ctx, np.int32, arguments="__global const int *keys, __global const int *x, __global int *segsum",
        input_expr="x[i]", scan_expr="across_seg_boundary ? b : a + b", neutral="0",
        is_segment_start_expr="i == 0 || key != prev_key",
        input_fetch_exprs=[("key", "keys", 0), ("prev_key", "keys", -1)],
        output_statement="segsum[i] = item")
    seg(keys, x, segsum)
    out["segsum"] = segsum.get()
    pair = np.dtype([("count", np.int32), ("sum", np.int32)])
    pair, c_decl = cl.tools.match_dtype_to_c_struct(ctx.devices[0], "pair_t", pair)
    pair = cl.tools.get_or_register_dtype("pair_t", pair)
    counts, sums = cl.array.empty_like(x), cl.array.empty_like(x)
    pairs = cl.scan.GenericScanKernel(
        ctx, pair, arguments="__global const int *x, __global int *counts, __global int *sums",
        input_expr="pair_of(x[i])", scan_expr="pair_add(a, b)", neutral="pair_zero()",
        output_statement="counts[i] = item.count; sums[i] = item.sum", preamble=c_decl + PAIR_FUNCTIONS)
    pairs(x, counts, sums)
    out["pair_count"], out["pair_sum"] = counts.get(), sums.get()
    kept, count, _ = cl.algorithm.copy_if(x, "ary[i] > threshold", extra_args=[("threshold", np.int32(3))])
    out["copy_if"] = kept.get()[:int(count.get())]
    kept, count, _ = cl.algorithm.remove_if(x, "ary[i] % 3 == 0")
    out["remove_if"] = kept.get()[:int(count.get())]
    even, odd, count, _ = cl.algorithm.partition(x, "ary[i] % 2 == 0")
    c = int(count.get())
    out["partition_true"], out["partition_false"] = even.get()[:c], odd.get()[:n - c]
    uniq, count, _ = cl.algorithm.unique(keys)
    out["unique"] = uniq.get()[:int(count.get())]
    return out


def reference(n):
    x, keys, f = inputs(n)
    c = np.cumsum(x).astype(np.int32)
    positive = x > 0
    before = np.concatenate([[0], np.cumsum(positive)[:-1]]).astype(np.int32)
    starts = np.concatenate([[True], keys[1:] != keys[:-1]])
    seg_id = np.cumsum(starts) - 1
    seg_base = np.concatenate([[0], c])[np.flatnonzero(starts)][seg_id]
    return {"inclusive": c, "exclusive": np.concatenate([[0], c[:-1]]).astype(np.int32),
            "runmax": np.maximum.accumulate(f), "rank": np.where(positive, before, -1),
            "rank_total": np.array([positive.sum()], np.int32), "segsum": (c - seg_base).astype(np.int32),
            "pair_count": np.cumsum(positive).astype(np.int32),
            "pair_sum": np.cumsum(np.where(positive, x, 0)).astype(np.int32), "copy_if": x[x > 3], "remove_if": x[x % 3 != 0],
            "partition_true": x[x % 2 == 0], "partition_false": x[x % 2 != 0], "unique": np.unique(keys)}


def check(got, want, against):
    for key in want:
        np.testing.assert_array_equal(got[key], want[key], err_msg=f"{key} vs {against}")


if __name__ == "__main__":
    import sys
    from .harness import main
    main(sys.modules[__name__])
