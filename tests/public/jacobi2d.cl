/* PolyBench/GPU jacobi-2d shape: one launch averages the 5-point neighbourhood of every interior
   point of A into B, the next copies B's interior back into A; the host alternates them. */
__kernel void jacobi_average(__global const float *A, __global float *B, int n)
{
    int j = get_global_id(0);
    int i = get_global_id(1);
    if (i >= 1 && i < n - 1 && j >= 1 && j < n - 1)
        B[i * n + j] = 0.2f * (A[i * n + j] + A[i * n + j - 1] + A[i * n + j + 1]
                               + A[(i + 1) * n + j] + A[(i - 1) * n + j]);
}

__kernel void jacobi_copy(__global float *A, __global const float *B, int n)
{
    int j = get_global_id(0);
    int i = get_global_id(1);
    if (i >= 1 && i < n - 1 && j >= 1 && j < n - 1)
        A[i * n + j] = B[i * n + j];
}
