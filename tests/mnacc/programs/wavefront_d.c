/* In-place wavefront (edit-distance/path-count style) in double: a host loop
   over anti-diagonals d, a marked loop over the rows i on that diagonal updating
   a[i][d-i] from a[i-1][d-i] and a[i][d-i-1] (both on diagonal d-1, written by
   the previous launch). Host-computed bounds; small-integer values, exact. */
/* mnacc-test: exact */
#include <stdio.h>

#ifndef N
#define N 16
#endif

double a[N][N], cost[N][N];

int main(void)
{
    int i, j, d, lo, hi;
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++) {
            cost[i][j] = (double)((i * 5 + j * 3) % 4);
            a[i][j] = 0.0;
        }
    for (i = 0; i < N; i++) {
        a[i][0] = (double)i;
        a[0][i] = (double)(2 * i);
    }

    for (d = 2; d <= 2 * (N - 1); d++) {
        lo = d - (N - 1);
        if (lo < 1)
            lo = 1;
        hi = d - 1;
        if (hi > N - 1)
            hi = N - 1;
#pragma goose parallel for loopcounter(i) result(a[i][0..N-1])
        for (i = lo; i <= hi; i++)
            a[i][d - i] = a[i - 1][d - i] + a[i][d - i - 1] + cost[i][d - i];
    }

    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            printf("%.17g\n", a[i][j]);
    return 0;
}
