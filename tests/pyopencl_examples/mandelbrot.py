"""The Mandelbrot set (after PyOpenCL's demo_mandelbrot): one work-item per pixel iterates
z <- z^2 + c.  Every floating-point operation is its own statement, so no compiler may fuse a
multiply and an add: the iteration counts are exact and equal numpy's float32 iteration."""
import numpy as np

SIZES = {"small": {"w": 64, "h": 48, "maxiter": 40}, "large": {"w": 256, "h": 192, "maxiter": 100}}

KERNEL = """
__kernel void mandelbrot(__global const float *cre, __global const float *cim,
                         __global int *counts, int w, int maxiter)
{
    int gx = get_global_id(0), gy = get_global_id(1);
    float cx = cre[gx], cy = cim[gy];
    float x = 0.0f, y = 0.0f;
    int k = 0;
    while (k < maxiter) {
        float xx = x * x;
        float yy = y * y;
        float r2 = xx + yy;
        if (r2 > 4.0f)
            break;
        float xy = x * y;
        float nx = xx - yy;
        x = nx + cx;
        float ny = xy + xy;
        y = ny + cy;
        k++;
    }
    counts[gy * w + gx] = k;
}
"""


def axes(w, h):
    return (np.linspace(-2.2, 0.8, w).astype(np.float32), np.linspace(-1.2, 1.2, h).astype(np.float32))


def run(cl, queue, w, h, maxiter):
    ctx = queue.context
    re_np, im_np = axes(w, h)
    mf = cl.mem_flags
    cre = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=re_np)
    cim = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=im_np)
    out = cl.Buffer(ctx, mf.WRITE_ONLY, w * h * 4)
    prg = cl.Program(ctx, KERNEL).build()
    prg.mandelbrot(queue, (w, h), None, cre, cim, out, np.int32(w), np.int32(maxiter))
    counts = np.empty((h, w), np.int32)
    cl.enqueue_copy(queue, counts, out)
    return {"counts": counts}


def reference(w, h, maxiter):
    re_, im_ = axes(w, h)
    cx, cy = np.meshgrid(re_, im_)
    x, y = np.zeros_like(cx), np.zeros_like(cy)
    counts = np.zeros(cx.shape, np.int32)
    live = np.ones(cx.shape, bool)
    for _ in range(maxiter):
        xx, yy = x * x, y * y
        live &= ~(xx + yy > np.float32(4))
        xy = x * y
        x = np.where(live, (xx - yy) + cx, x)
        y = np.where(live, (xy + xy) + cy, y)
        counts += live
    return {"counts": counts}


def check(got, want, against):
    np.testing.assert_array_equal(got["counts"], want["counts"], err_msg=f"counts vs {against}")


if __name__ == "__main__":
    import sys
    from .harness import main
    main(sys.modules[__name__])
