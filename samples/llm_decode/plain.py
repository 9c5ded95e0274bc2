"""The plain OpenCL C 1.2 matrix-vector product, for comparison with the task kernel (decode.py).

    y[b, i] = sum_j W[i, j] * x[b, j]        W: rows x cols, x: batch x cols, y: batch x rows

No MN-Core extensions: the layout a GPU programmer would pick for the emulator's SIMD
backend (see MATVEC_T in benchmarks/compiled_kernels.py).  W is stored column-major
(transposed), so neighbouring work-items read neighbouring words of a column; x is stored
transposed too (xt[j * BATCH + b]), so the batch's x[j] values share a block; the batch loop
runs inside the loop over j with one fp32 accumulator per batch entry (BATCH is a build
option), so every weight is read from DRAM once whatever the batch.

Weights, by dtype:

* 'fp32': float weights, one work-item per row: ``Wt[j * rows + i]``.
* 'half' (default half_read='bits'): IEEE half weights, two to a 32-bit word: word
  ``Wp[j * (rows/2) + i]`` holds W[i, j] in its low 16 bits and W[i + rows/2, j] in its high
  16 bits; one work-item per pair of rows (i and i + rows/2), the halves converted to float
  with integer operations in the kernel.  Why not vload_half: on the emulator device's SIMD
  backend every load of an element narrower than 32 bits is a *gather* (the whole buffer is
  broadcast to every PE on each pass of the loop over j; translator/backend/codegen.py), so
  the textbook kernel moves rows*cols*2 bytes per column: correct, but hours of emulation
  for a 1024-row slice of a Llama matrix, and a bandwidth figure that says nothing about
  the layout.  A 32-bit load at ``gid + uniform`` is a contiguous stream.
* 'half' with half_read='vload_half': the textbook kernel, ``vload_half(j * rows + i, Wt)``,
  one work-item per row.  Correct on the emulator, for tiny shapes only (see above).

Accumulation is fp32 in every case.
"""
from __future__ import annotations

import numpy as np

import mncl as cl

SOURCE = r"""
/* W column-major, x transposed (cols x BATCH), y: BATCH x rows */

#if defined(WEIGHTS_HALF_BITS)
/* IEEE half bits (in the low 16 bits of h) -> float, exactly: zero, subnormals, inf and nan too */
float half_bits_to_float(uint h)
{
    uint s = (h & 0x8000u) << 16;
    uint e = (h >> 10) & 0x1fu;
    uint m = h & 0x3ffu;
    float sub = (float)m * 5.9604644775390625e-8f;            /* exponent 0: m * 2^-24 */
    uint normal = s | ((e + 112u) << 23) | (m << 13);         /* rebias 15 -> 127 */
    uint special = s | 0x7f800000u | (m << 13);               /* exponent 31: inf, nan */
    float v = as_float(e == 31u ? special : normal);
    return e == 0u ? (s ? -sub : sub) : v;
}

/* Wp: cols x (rows/2) words, word (j, i) = W[i, j] | W[i + rows/2, j] << 16 */
__kernel void matvec_plain(__global const uint *Wp, __global const float *xt, __global float *y,
                           int rows, int cols)
{
    int i = get_global_id(0);
    int half_rows = rows >> 1;
    float lo[BATCH], hi[BATCH];
    for (int b = 0; b < BATCH; b++) {
        lo[b] = 0.0f;
        hi[b] = 0.0f;
    }
    for (int j = 0; j < cols; j++) {
        uint p = Wp[j * HALF_ROWS + i];
        float w0 = half_bits_to_float(p & 0xffffu);
        float w1 = half_bits_to_float(p >> 16);
        for (int b = 0; b < BATCH; b++) {
            float xj = xt[j * BATCH + b];
            lo[b] += w0 * xj;
            hi[b] += w1 * xj;
        }
    }
    for (int b = 0; b < BATCH; b++) {
        y[b * rows + i] = lo[b];
        y[b * rows + half_rows + i] = hi[b];
    }
}

#else
#if defined(WEIGHTS_HALF)
typedef half wtype;
#define LOAD_W(k, p) vload_half((k), (p))
#else
typedef float wtype;
#define LOAD_W(k, p) ((p)[k])
#endif

/* Wt: cols x rows */
__kernel void matvec_plain(__global const wtype *Wt, __global const float *xt, __global float *y,
                           int rows, int cols)
{
    int i = get_global_id(0);
    float acc[BATCH];
    for (int b = 0; b < BATCH; b++)
        acc[b] = 0.0f;
    for (int j = 0; j < cols; j++) {
        float w = LOAD_W(j * rows + i, Wt);
        for (int b = 0; b < BATCH; b++)
            acc[b] += w * xt[j * BATCH + b];
    }
    for (int b = 0; b < BATCH; b++)
        y[b * rows + i] = acc[b];
}
#endif
"""

DTYPES = ("fp32", "half")
HALF_READS = ("bits", "vload_half")


class PlainMatvec:
    """y = W x for a batch of x, with a plain OpenCL C kernel.  Same interface as decode.TaskMatvec:
    ``PlainMatvec(ctx, queue, rows, cols, batch, dtype)``, ``upload(W)``, ``y, ev = m(x)``."""

    def __init__(self, ctx, queue, rows: int, cols: int, batch: int, dtype: str = "fp32",
                 half_read: str = "bits"):
        if dtype not in DTYPES:
            raise ValueError(f"dtype must be one of {DTYPES}, got {dtype!r}")
        if half_read not in HALF_READS:
            raise ValueError(f"half_read must be one of {HALF_READS}, got {half_read!r}")
        self.ctx, self.queue = ctx, queue
        self.rows, self.cols, self.batch, self.dtype = int(rows), int(cols), int(batch), dtype
        self.packed = dtype == "half" and half_read == "bits"
        if self.packed and self.rows % 2:
            raise ValueError(f"dtype 'half' packs rows in pairs: rows must be even, got {self.rows}")
        options = [f"-DBATCH={self.batch}"]
        if self.packed:
            options += ["-DWEIGHTS_HALF_BITS", f"-DHALF_ROWS={self.rows // 2}"]
        elif dtype == "half":
            options.append("-DWEIGHTS_HALF")
        self.kernel = cl.Program(ctx, SOURCE).build(options=options).matvec_plain
        self.global_size = (self.rows // 2,) if self.packed else (self.rows,)
        self.w_buf = None
        mf = cl.mem_flags
        self.x_buf = cl.Buffer(ctx, mf.READ_ONLY, 4 * self.batch * self.cols)
        self.y_buf = cl.Buffer(ctx, mf.WRITE_ONLY, 4 * self.batch * self.rows)

    @staticmethod
    def device_weights(W: np.ndarray, dtype: str = "fp32") -> np.ndarray:
        """The float32 values of W as this kernel computes with them (IEEE half rounding for 'half')."""
        W = np.asarray(W, np.float32)
        return W.astype(np.float16).astype(np.float32) if dtype == "half" else W

    def upload(self, W: np.ndarray) -> None:
        """Keep W (rows x cols, float32) on the device, column-major, as float or half."""
        W = np.asarray(W, np.float32)
        if W.shape != (self.rows, self.cols):
            raise ValueError(f"W must be {self.rows} x {self.cols}, got {W.shape}")
        if self.packed:
            h = self.rows // 2
            pairs = np.empty((self.cols, h, 2), np.float16)      # (j, i, 0) = W[i, j], (j, i, 1) = W[i + h, j]
            pairs[:, :, 0] = W[:h].T
            pairs[:, :, 1] = W[h:].T
            host = pairs.reshape(self.cols, 2 * h).view(np.uint32)   # little-endian: element 0 in the low bits
        else:
            host = W.T.astype(np.float16 if self.dtype == "half" else np.float32)
        self.w_buf = cl.Buffer(self.ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR,
                               hostbuf=np.ascontiguousarray(host))

    def __call__(self, x: np.ndarray):
        """(y, ev): y float32 (batch, rows); ev the launch's event, finished."""
        if self.w_buf is None:
            raise RuntimeError("upload(W) first")
        x = np.asarray(x, np.float32)
        if x.shape != (self.batch, self.cols):
            raise ValueError(f"x must be {self.batch} x {self.cols}, got {x.shape}")
        cl.enqueue_copy(self.queue, self.x_buf, np.ascontiguousarray(x.T))
        ev = self.kernel(self.queue, self.global_size, None, self.w_buf, self.x_buf, self.y_buf,
                         np.int32(self.rows), np.int32(self.cols))
        ev.wait()
        y = np.empty((self.batch, self.rows), np.float32)
        cl.enqueue_copy(self.queue, y, self.y_buf).wait()
        return y, ev
