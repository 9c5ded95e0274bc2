/* y = A^T (A x) (PolyBench atax's shape): a row per work-item, then a column per work-item. */
__kernel void atax_rows(__global const float *A, __global const float *x, __global float *tmp,
                        int nx, int ny)
{
    int i = get_global_id(0);
    if (i < nx) {
        float s = 0.0f;
        for (int j = 0; j < ny; j++)
            s += A[i * ny + j] * x[j];
        tmp[i] = s;
    }
}

__kernel void atax_cols(__global const float *A, __global const float *tmp, __global float *y,
                        int nx, int ny)
{
    int j = get_global_id(0);
    if (j < ny) {
        float s = 0.0f;
        for (int i = 0; i < nx; i++)
            s += A[i * ny + j] * tmp[i];
        y[j] = s;
    }
}
