"""A 3 x 3 median filter (after PyOpenCL's median-filter example): one work-item per pixel loads
its neighbourhood (edges clamped) and finds the median with a min / max exchange network.  The
median is one of the inputs, so the result is exact on every device."""
import numpy as np

SIZES = {"small": {"h": 40, "w": 56}, "large": {"h": 160, "w": 224}}

KERNEL = """
#define SORT2(a, b) { float lo = fmin(a, b); b = fmax(a, b); a = lo; }

__kernel void median3x3(__global const float *img, __global float *out, int h, int w)
{
    int x = get_global_id(0), y = get_global_id(1);
    float v[9];
    int k = 0;
    for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++) {
            int yy = clamp(y + dy, 0, h - 1), xx = clamp(x + dx, 0, w - 1);
            v[k++] = img[yy * w + xx];
        }
    /* Paeth's 19-exchange median of nine */
    SORT2(v[1], v[2]); SORT2(v[4], v[5]); SORT2(v[7], v[8]);
    SORT2(v[0], v[1]); SORT2(v[3], v[4]); SORT2(v[6], v[7]);
    SORT2(v[1], v[2]); SORT2(v[4], v[5]); SORT2(v[7], v[8]);
    SORT2(v[0], v[3]); SORT2(v[5], v[8]); SORT2(v[4], v[7]);
    SORT2(v[3], v[6]); SORT2(v[1], v[4]); SORT2(v[2], v[5]);
    SORT2(v[4], v[7]); SORT2(v[4], v[2]); SORT2(v[6], v[4]);
    SORT2(v[4], v[2]);
    out[y * w + x] = v[4];
}
"""


def image(h, w):
    rng = np.random.default_rng(9)
    yy, xx = np.mgrid[0:h, 0:w]
    img = (np.sin(xx / 5.0) * np.cos(yy / 7.0)).astype(np.float32)
    noise = rng.random((h, w)) < 0.1                       # salt and pepper
    img[noise] = rng.choice(np.array([-5, 5], np.float32), noise.sum())
    return img


def run(cl, queue, h, w):
    ctx = queue.context
    img = cl.array.to_device(queue, image(h, w))
    out = cl.array.empty_like(img)
    prg = cl.Program(ctx, KERNEL).build()
    prg.median3x3(queue, (w, h), None, img.data, out.data, np.int32(h), np.int32(w))
    return {"median": out.get()}


def reference(h, w):
    img = image(h, w)
    padded = np.pad(img, 1, mode="edge")
    stack = np.stack([padded[dy:dy + h, dx:dx + w] for dy in range(3) for dx in range(3)])
    return {"median": np.median(stack, axis=0).astype(np.float32)}


def check(got, want, against):
    np.testing.assert_array_equal(got["median"], want["median"], err_msg=f"median vs {against}")


if __name__ == "__main__":
    import sys
    from .harness import main
    main(sys.modules[__name__])
