/* SHOC sgemm shape (register blocking): C = alpha A B + beta C, row-major, for a work-group of
   16 x 4 work-items computing a 64 x 16 tile of C.  Each work-item owns one row of the tile and
   keeps its 16 results in a private accumulator block; the group stages a 16 x 16 tile of B in
   __local memory per step of k.  The parameters A, B and C are advanced to the work-item's own
   start (`p += offset`) before the first barrier, as SHOC does. */
#define TK 16

__kernel void sgemm_regblock(__global const float *A, int lda, __global const float *B, int ldb,
                             __global float *C, int ldc, int k, float alpha, float beta)
{
    __local float bt[TK][TK + 1];
    int tx = get_local_id(0), ty = get_local_id(1);
    int me = ty * 16 + tx;                          /* 0..63: the tile row this work-item owns */
    int row = get_group_id(0) * 64 + me;
    int col0 = get_group_id(1) * 16;

    A += row * lda;                                  /* this work-item's row of A */
    B += ty * ldb + col0 + tx;                       /* the B element it stages: rows ty, ty+4 .. */
    C += row * ldc + col0;

    float acc[16];
    for (int c = 0; c < 16; c++)
        acc[c] = 0.0f;

    for (int kk = 0; kk < k; kk += TK) {
        for (int r = 0; r < TK; r += 4)
            bt[ty + r][tx] = B[r * ldb];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int q = 0; q < TK; q++) {
            float a = A[q];
            for (int c = 0; c < 16; c++)
                acc[c] += a * bt[q][c];
        }
        A += TK;
        B += TK * ldb;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (int c = 0; c < 16; c++)
        C[c] = alpha * acc[c] + beta * C[c];
}
