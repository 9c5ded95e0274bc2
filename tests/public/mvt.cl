/* PolyBench/GPU mvt shape: x1 += A y1 and x2 += A^T y2, adding into vectors that start non-zero;
   the second kernel walks A by columns (stride n between neighbouring iterations). */
__kernel void mvt_forward(__global const float *a, __global float *x1, __global const float *y1, int n)
{
    int i = get_global_id(0);
    if (i < n) {
        for (int j = 0; j < n; j++)
            x1[i] += a[i * n + j] * y1[j];
    }
}

__kernel void mvt_transposed(__global const float *a, __global float *x2, __global const float *y2, int n)
{
    int i = get_global_id(0);
    if (i < n) {
        for (int j = 0; j < n; j++)
            x2[i] += a[j * n + i] * y2[j];
    }
}
