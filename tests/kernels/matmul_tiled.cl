/* C = A B with 8x8 __local tiles of A and B; sizes need not be multiples of the tile. */
#define TS 8
__kernel void matmul_tiled(__global const float *A, __global const float *B, __global float *C,
                           const int M, const int N, const int K)
{
    __local float As[TS][TS];
    __local float Bs[TS][TS];
    int tx = get_local_id(0), ty = get_local_id(1);
    int col = get_group_id(0) * TS + tx;
    int row = get_group_id(1) * TS + ty;
    float acc = 0.0f;
    int tiles = (K + TS - 1) / TS;
    for (int t = 0; t < tiles; t++) {
        int ka = t * TS + tx;
        int kb = t * TS + ty;
        As[ty][tx] = (row < M && ka < K) ? A[row * K + ka] : 0.0f;
        Bs[ty][tx] = (kb < K && col < N) ? B[kb * N + col] : 0.0f;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < TS; k++)
            acc += As[ty][k] * Bs[k][tx];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (row < M && col < N)
        C[row * N + col] = acc;
}
