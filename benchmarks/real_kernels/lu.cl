/* PolyBench lu's shape (Doolittle without pivoting, in place): for each k the host launches
   lu_scale (row k divided by the pivot) then lu_update (the trailing submatrix), both over the
   whole matrix with a guard, as the GPU version does. */
__kernel void lu_scale(__global float *A, int k, int n)
{
    int j = get_global_id(0);
    if (j > k && j < n)
        A[k * n + j] = A[k * n + j] / A[k * n + k];
}

__kernel void lu_update(__global float *A, int k, int n)
{
    int j = get_global_id(0);
    int i = get_global_id(1);
    if (i > k && j > k && i < n && j < n)
        A[i * n + j] = A[i * n + j] - A[i * n + k] * A[k * n + j];
}
