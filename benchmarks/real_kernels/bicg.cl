/* s = A^T r and q = A p (PolyBench bicg's shape): a column per work-item, then a row. */
__kernel void bicg_s(__global const float *A, __global const float *r, __global float *s,
                     int nx, int ny)
{
    int j = get_global_id(0);
    if (j < ny) {
        float acc = 0.0f;
        for (int i = 0; i < nx; i++)
            acc += r[i] * A[i * ny + j];
        s[j] = acc;
    }
}

__kernel void bicg_q(__global const float *A, __global const float *p, __global float *q,
                     int nx, int ny)
{
    int i = get_global_id(0);
    if (i < nx) {
        float acc = 0.0f;
        for (int j = 0; j < ny; j++)
            acc += A[i * ny + j] * p[j];
        q[i] = acc;
    }
}
