/* PolyBench/GPU syrk shape: C = alpha A A^T + beta C; work-item (j, i) reads rows i and j of A, so
   one of the two reads walks A "transposed" relative to its neighbours in dimension 0. */
__kernel void syrk_update(__global const float *a, __global float *c, float alpha, float beta, int n, int m)
{
    int j = get_global_id(0);
    int i = get_global_id(1);
    if (i < n && j < n) {
        c[i * n + j] *= beta;
        for (int k = 0; k < m; k++)
            c[i * n + j] += alpha * a[i * m + k] * a[j * m + k];
    }
}
