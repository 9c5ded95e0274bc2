/* Rodinia nw's shape: Needleman-Wunsch scores in BS x BS blocks, one launch per anti-diagonal of
   blocks, one work-group of BS work-items per block; the block and its top/left border go to
   __local memory and the work-items sweep the block's own anti-diagonals with a barrier each.
   score is (n+1) x (n+1) with row and column 0 set by the host; sim is n x n. */
#define BS 16

__kernel void nw_diagonal(__global int *score, __global const int *sim, int n, int penalty,
                          int diag, int first)
{
    __local int s[BS + 1][BS + 1];
    __local int ref[BS][BS];
    int t = get_local_id(0);
    int bi = first + get_group_id(0);
    int bj = diag - bi;
    int w = n + 1;
    int r0 = bi * BS, c0 = bj * BS;
    if (t == 0)
        s[0][0] = score[r0 * w + c0];
    s[0][t + 1] = score[r0 * w + c0 + t + 1];
    s[t + 1][0] = score[(r0 + t + 1) * w + c0];
    for (int k = 0; k < BS; k++)
        ref[k][t] = sim[(r0 + k) * n + c0 + t];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int m = 0; m < 2 * BS - 1; m++) {
        int i = t + 1, j = m - t + 1;
        if (j >= 1 && j <= BS)
            s[i][j] = max(s[i - 1][j - 1] + ref[i - 1][j - 1], max(s[i - 1][j], s[i][j - 1]) - penalty);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (int k = 0; k < BS; k++)
        score[(r0 + k + 1) * w + c0 + t + 1] = s[k + 1][t + 1];
}
