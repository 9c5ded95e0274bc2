/* PolyBench gemver's shape, four launches over shared buffers:
   A += u1 v1^T + u2 v2^T;  x += beta A^T y;  x += z;  w += alpha A x. */
__kernel void gemver_update(__global float *A, __global const float *u1, __global const float *v1,
                            __global const float *u2, __global const float *v2, int n)
{
    int j = get_global_id(0);
    int i = get_global_id(1);
    if (i < n && j < n)
        A[i * n + j] += u1[i] * v1[j] + u2[i] * v2[j];
}

__kernel void gemver_xt(__global const float *A, __global float *x, __global const float *y,
                        float beta, int n)
{
    int i = get_global_id(0);
    if (i < n) {
        for (int j = 0; j < n; j++)
            x[i] += beta * A[j * n + i] * y[j];
    }
}

__kernel void gemver_xz(__global float *x, __global const float *z, int n)
{
    int i = get_global_id(0);
    if (i < n)
        x[i] += z[i];
}

__kernel void gemver_w(__global const float *A, __global const float *x, __global float *w,
                       float alpha, int n)
{
    int i = get_global_id(0);
    if (i < n) {
        for (int j = 0; j < n; j++)
            w[i] += alpha * A[i * n + j] * x[j];
    }
}
