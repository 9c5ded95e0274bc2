/* x1 += A y1 and x2 += A^T y2 (PolyBench mvt's shape): read-modify-write of vectors that start
   non-zero, a row per work-item and a column per work-item. */
__kernel void mvt_rows(__global const float *A, __global const float *y1, __global float *x1, int n)
{
    int i = get_global_id(0);
    if (i < n) {
        for (int j = 0; j < n; j++)
            x1[i] += A[i * n + j] * y1[j];
    }
}

__kernel void mvt_cols(__global const float *A, __global const float *y2, __global float *x2, int n)
{
    int i = get_global_id(0);
    if (i < n) {
        for (int j = 0; j < n; j++)
            x2[i] += A[j * n + i] * y2[j];
    }
}
