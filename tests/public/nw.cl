/* Rodinia needleman-wunsch shape reduced to its dependence pattern: the score matrix fills one
   anti-diagonal per launch (cells with i + j == diag), each cell the best of a match from its
   upper-left neighbour and a gap from above or from the left. */
__kernel void nw_diagonal(__global int *score, __global const int *similarity, int n, int penalty, int diag)
{
    int t = get_global_id(0);
    int i = max(1, diag - n) + t;
    int j = diag - i;
    if (i > n || j < 1)
        return;
    int w = n + 1;
    int match = score[(i - 1) * w + j - 1] + similarity[i * w + j];
    int up = score[(i - 1) * w + j] - penalty;
    int left = score[i * w + j - 1] - penalty;
    score[i * w + j] = max(match, max(up, left));
}
