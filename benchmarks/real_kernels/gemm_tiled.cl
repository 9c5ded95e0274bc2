/* C = A B with 16 x 16 tiles in __local memory (the OpenCL SDK's matrix product shape): each
   work-group stages one tile of A and one of B per step with a barrier, then every work-item sums
   its row of the A tile against its column of the B tile.  n is a multiple of TS. */
#define TS 16

__kernel void gemm_tiled(__global const float *A, __global const float *B, __global float *C, int n)
{
    __local float As[TS][TS];
    __local float Bs[TS][TS];
    int tx = get_local_id(0), ty = get_local_id(1);
    int col = get_global_id(0), row = get_global_id(1);
    float acc = 0.0f;
    for (int t = 0; t < n / TS; t++) {
        As[ty][tx] = A[row * n + t * TS + tx];
        Bs[ty][tx] = B[(t * TS + ty) * n + col];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < TS; k++)
            acc += As[ty][k] * Bs[k][tx];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    C[row * n + col] = acc;
}
