/* PolyBench/GPU atax shape: tmp = A x, then y = A^T tmp.  Both kernels add into buffers the host
   zeroed, with no store before the loop (a read-modify-write in the loop), and the second reads A
   down its columns. */
__kernel void atax_rows(__global const float *A, __global const float *x, __global float *tmp,
                        int nx, int ny)
{
    int i = get_global_id(0);
    if (i < nx) {
        for (int j = 0; j < ny; j++)
            tmp[i] += A[i * ny + j] * x[j];
    }
}

__kernel void atax_cols(__global const float *A, __global float *y, __global const float *tmp,
                        int nx, int ny)
{
    int j = get_global_id(0);
    if (j < ny) {
        for (int i = 0; i < nx; i++)
            y[j] += A[i * ny + j] * tmp[i];
    }
}
