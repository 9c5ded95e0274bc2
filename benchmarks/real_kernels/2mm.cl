/* D = beta * D + (alpha * A B) C (PolyBench 2mm's shape): two launches over a shared tmp. */
__kernel void mm2_first(__global const float *A, __global const float *B, __global float *tmp,
                        float alpha, int ni, int nj, int nk)
{
    int j = get_global_id(0);
    int i = get_global_id(1);
    if (i < ni && j < nj) {
        float acc = 0.0f;
        for (int k = 0; k < nk; k++)
            acc += A[i * nk + k] * B[k * nj + j];
        tmp[i * nj + j] = alpha * acc;
    }
}

__kernel void mm2_second(__global const float *tmp, __global const float *C, __global float *D,
                         float beta, int ni, int nj, int nl)
{
    int l = get_global_id(0);
    int i = get_global_id(1);
    if (i < ni && l < nl) {
        float acc = beta * D[i * nl + l];
        for (int j = 0; j < nj; j++)
            acc += tmp[i * nj + j] * C[j * nl + l];
        D[i * nl + l] = acc;
    }
}
