"""A matrix transpose through local memory (after PyOpenCL's transpose example): each 16 x 16
work-group reads a tile with contiguous reads into __local memory (one column of padding against
bank conflicts), waits at a barrier, and writes the tile transposed with contiguous writes.  A
naive transpose and cl.array's arithmetic check it."""
import numpy as np

SIZES = {"small": {"rows": 48, "cols": 80}, "large": {"rows": 128, "cols": 160}}
TILE = 16

KERNEL = f"""
#define TILE {TILE}
__kernel void transpose_tiled(__global float *out, __global const float *in, int rows, int cols)
{{
    __local float tile[TILE][TILE + 1];
    int lx = get_local_id(0), ly = get_local_id(1);
    int bx = get_group_id(0) * TILE, by = get_group_id(1) * TILE;
    tile[ly][lx] = in[(by + ly) * cols + bx + lx];
    barrier(CLK_LOCAL_MEM_FENCE);
    out[(bx + ly) * rows + by + lx] = tile[lx][ly];
}}

__kernel void transpose_naive(__global float *out, __global const float *in, int rows, int cols)
{{
    int x = get_global_id(0), y = get_global_id(1);
    out[x * rows + y] = in[y * cols + x];
}}
"""


def matrix(rows, cols):
    return np.random.default_rng(3).standard_normal((rows, cols)).astype(np.float32)


def run(cl, queue, rows, cols):
    ctx = queue.context
    a = cl.array.to_device(queue, matrix(rows, cols))
    tiled = cl.array.empty(queue, (cols, rows), np.float32)
    naive = cl.array.empty(queue, (cols, rows), np.float32)
    prg = cl.Program(ctx, KERNEL).build()
    prg.transpose_tiled(queue, (cols, rows), (TILE, TILE), tiled.data, a.data, np.int32(rows), np.int32(cols))
    prg.transpose_naive(queue, (cols, rows), None, naive.data, a.data, np.int32(rows), np.int32(cols))
    return {"tiled": tiled.get(), "naive": naive.get(), "diff_sum": cl.array.sum(tiled - naive).get()}


def reference(rows, cols):
    t = matrix(rows, cols).T.copy()
    return {"tiled": t, "naive": t, "diff_sum": np.float32(0)}


def check(got, want, against):
    for key in want:
        np.testing.assert_array_equal(got[key], want[key], err_msg=f"{key} vs {against}")


if __name__ == "__main__":
    import sys
    from .harness import main
    main(sys.modules[__name__])
