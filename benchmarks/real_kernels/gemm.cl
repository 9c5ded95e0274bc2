/* C = alpha * A B + beta * C (PolyBench gemm's shape): a 2-D range, dimension 0 the column,
   one work-item per element of C, a plain loop over k. */
__kernel void gemm(__global const float *A, __global const float *B, __global float *C,
                   float alpha, float beta, int ni, int nj, int nk)
{
    int j = get_global_id(0);
    int i = get_global_id(1);
    if (i < ni && j < nj) {
        float acc = 0.0f;
        for (int k = 0; k < nk; k++)
            acc += A[i * nk + k] * B[k * nj + j];
        C[i * nj + j] = alpha * acc + beta * C[i * nj + j];
    }
}
