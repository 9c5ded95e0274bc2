/* PolyBench/GPU gemm shape: C = alpha A B + beta C on a 2-D range (dimension 0 the column), the
   element of C scaled, then updated in place once per k. */
__kernel void gemm_naive(__global const float *a, __global const float *b, __global float *c,
                         float alpha, float beta, int ni, int nj, int nk)
{
    int j = get_global_id(0);
    int i = get_global_id(1);
    if (i < ni && j < nj) {
        c[i * nj + j] *= beta;
        for (int k = 0; k < nk; k++)
            c[i * nj + j] += alpha * a[i * nk + k] * b[k * nj + j];
    }
}
