/* Integer matrix product with a private accumulator row: C = A B for short inputs, int result. */
#define NC 4
__kernel void matmul_int(__global const short *A, __global const short *B, __global int *C,
                         const int M, const int N, const int K)
{
    int row = get_global_id(0);
    if (row >= M)
        return;
    for (int c0 = 0; c0 < N; c0 += NC) {
        int acc[NC] = {0, 0, 0, 0};
        for (int k = 0; k < K; k++) {
            int a = A[row * K + k];
            for (int j = 0; j < NC; j++)
                if (c0 + j < N)
                    acc[j] += a * B[k * N + c0 + j];
        }
        for (int j = 0; j < NC && c0 + j < N; j++)
            C[row * N + c0 + j] = acc[j];
    }
}
