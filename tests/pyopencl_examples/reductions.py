"""Reductions with ReductionKernel (PyOpenCL's documentation examples, extended): a dot product, an
integer reduction with a scalar argument, and a struct reduction: the minimum, the maximum and the
first index of the maximum together, in a numpy struct dtype matched to its C declaration and
registered with cl.tools (match_dtype_to_c_struct, get_or_register_dtype), the neutral element
and the combining function written in the preamble."""
import numpy as np

SIZES = {"small": {"n": 3000}, "large": {"n": 20000}}

MINMAX_FUNCTIONS = """
minmax_t mm_neutral(void)
{
    minmax_t r;
    r.lo = INFINITY;
    r.hi = -INFINITY;
    r.arg = -1;
    return r;
}

minmax_t mm_from(float v, int i)
{
    minmax_t r;
    r.lo = v;
    r.hi = v;
    r.arg = i;
    return r;
}

/* the first index holding the maximum wins, whatever order the pieces are combined in */
minmax_t mm_join(minmax_t a, minmax_t b)
{
    minmax_t r;
    r.lo = fmin(a.lo, b.lo);
    int take_b = b.arg >= 0 && (a.arg < 0 || b.hi > a.hi || (b.hi == a.hi && b.arg < a.arg));
    r.hi = take_b ? b.hi : a.hi;
    r.arg = take_b ? b.arg : a.arg;
    return r;
}
"""


def inputs(n):
    rng = np.random.default_rng(11)
    x = rng.standard_normal(n).astype(np.float32)
    x[n // 3] = x[2 * n // 3] = 10.0                     # a tie: the first index must win
    return x, rng.standard_normal(n).astype(np.float32), rng.integers(-50, 50, n).astype(np.int32)


def minmax_dtype(cl, device):
    dtype = np.dtype([("lo", np.float32), ("hi", np.float32), ("arg", np.int32)])
    dtype, c_decl = cl.tools.match_dtype_to_c_struct(device, "minmax_t", dtype)
    return cl.tools.get_or_register_dtype("minmax_t", dtype), c_decl


def run(cl, queue, n):
    x_np, y_np, k_np = inputs(n)
    ctx = queue.context
    x, y, k = (cl.array.to_device(queue, v) for v in (x_np, y_np, k_np))
    dot = cl.reduction.ReductionKernel(ctx, np.float32, neutral="0", reduce_expr="a+b", map_expr="x[i]*y[i]",
                                       arguments="__global const float *x, __global const float *y")
    modsum = cl.reduction.ReductionKernel(ctx, np.int64, neutral="0", reduce_expr="a+b",
                                          map_expr="(long)(abs(k[i]) % m) * (k[i] < 0 ? -1 : 1)",
                                          arguments="__global const int *k, int m", name="modsum")
    mm_dtype, c_decl = minmax_dtype(cl, ctx.devices[0])
    minmax = cl.reduction.ReductionKernel(ctx, mm_dtype, neutral="mm_neutral()", reduce_expr="mm_join(a, b)",
                                          map_expr="mm_from(x[i], i)", arguments="__global const float *x",
                                          preamble=c_decl + MINMAX_FUNCTIONS, name="minmax")
    mm = minmax(x).get()
    return {"dot": dot(x, y).get(), "modsum": modsum(k, np.int32(7)).get(),
            "lo": mm["lo"], "hi": mm["hi"], "arg": mm["arg"], "mm_dtype_size": mm_dtype.itemsize}


def reference(n):
    x, y, k = inputs(n)
    return {"dot": np.dot(x.astype(np.float64), y), "modsum": (np.sign(k) * (np.abs(k) % 7)).astype(np.int64).sum(),
            "lo": x.min(), "hi": x.max(), "arg": int(np.argmax(x)), "mm_dtype_size": 12}


def check(got, want, against):
    for key in ("modsum", "lo", "hi", "arg", "mm_dtype_size"):
        assert got[key] == want[key], f"{key}: {got[key]} vs {against}'s {want[key]}"
    np.testing.assert_allclose(got["dot"], want["dot"], rtol=1e-5, err_msg=f"dot vs {against}")


if __name__ == "__main__":
    import sys
    from .harness import main
    main(sys.modules[__name__])
