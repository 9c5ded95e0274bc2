"""Element-wise kernels with a preamble (PyOpenCL's demo_elementwise, extended): helper functions
and macros from the preamble, scalar arguments of several types, float and integer outputs."""
import numpy as np

SIZES = {"small": {"n": 2000}, "large": {"n": 8000}}

PREAMBLE = """
#define SQUARE(v) ((v) * (v))

float smooth(float e0, float e1, float v)
{
    float t = clamp((v - e0) / (e1 - e0), 0.0f, 1.0f);
    float s = 3.0f - 2.0f * t;
    return SQUARE(t) * s;
}

int collatz_steps(long v)
{
    int steps = 0;
    while (v > 1) {
        v = (v & 1) ? 3 * v + 1 : v / 2;
        steps++;
    }
    return steps;
}
"""


def inputs(n):
    rng = np.random.default_rng(7)
    return rng.random(n, dtype=np.float32) * 3 - 1, rng.integers(1, 100000, n).astype(np.int64)


def run(cl, queue, n):
    x_np, v_np = inputs(n)
    ctx = queue.context
    x = cl.array.to_device(queue, x_np)
    v = cl.array.to_device(queue, v_np)
    y = cl.array.empty_like(x)
    steps = cl.array.empty(queue, n, np.int32)
    knl = cl.elementwise.ElementwiseKernel(
        ctx, "float lo, float hi, __global const float *x, __global float *y, "
             "__global const long *v, __global int *steps, int bias",
        "y[i] = smooth(lo, hi, x[i]); steps[i] = collatz_steps(v[i]) + bias",
        "smooth_and_collatz", preamble=PREAMBLE)
    knl(np.float32(0.0), np.float32(1.5), x, y, v, steps, np.int32(-1))
    lin = cl.elementwise.ElementwiseKernel(ctx, "float a, float *x, float b, float *z", "z[i] = a * x[i] + b",
                                           "axpb")
    z = cl.array.empty_like(x)
    lin(np.float32(2.5), x, np.float32(-1.0), z)
    return {"smooth": y.get(), "steps": steps.get(), "axpb": z.get()}


def _collatz(v):
    steps = np.zeros(v.shape, np.int32)
    v = v.copy()
    while (v > 1).any():
        live = v > 1
        v[live] = np.where(v[live] & 1, 3 * v[live] + 1, v[live] // 2)
        steps += live
    return steps


def reference(n):
    x, v = inputs(n)
    t = np.clip((x.astype(np.float64) - 0) / 1.5, 0, 1)
    return {"smooth": t * t * (3 - 2 * t), "steps": _collatz(v) - 1,
            "axpb": 2.5 * x.astype(np.float64) - 1}


def check(got, want, against):
    np.testing.assert_array_equal(got["steps"], want["steps"], err_msg=f"steps vs {against}")
    np.testing.assert_allclose(got["smooth"], want["smooth"], rtol=1e-6, atol=1e-7, err_msg=f"smooth vs {against}")
    np.testing.assert_allclose(got["axpb"], want["axpb"], rtol=1e-6, atol=1e-6, err_msg=f"axpb vs {against}")


if __name__ == "__main__":
    import sys
    from .harness import main
    main(sys.modules[__name__])
