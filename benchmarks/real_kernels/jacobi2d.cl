/* PolyBench jacobi-2d's shape: per time step one launch computes B from A's 5-point
   neighbourhood on the interior, a second copies B back into A. */
__kernel void jacobi_step(__global const float *A, __global float *B, int n)
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
