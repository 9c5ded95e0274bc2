/* PolyBench/GPU bicg shape: q = A p (row sums) and s = A^T r (column sums), each work-item owning
   one output and accumulating it in a private variable before one store. */
__kernel void bicg_q(__global const float *A, __global const float *p, __global float *q, int nx, int ny)
{
    int i = get_global_id(0);
    if (i >= nx)
        return;
    float acc = 0.0f;
    for (int j = 0; j < ny; j++)
        acc += A[i * ny + j] * p[j];
    q[i] = acc;
}

__kernel void bicg_s(__global const float *A, __global const float *r, __global float *s, int nx, int ny)
{
    int j = get_global_id(0);
    if (j >= ny)
        return;
    float acc = 0.0f;
    for (int i = 0; i < nx; i++)
        acc += r[i] * A[i * ny + j];
    s[j] = acc;
}
