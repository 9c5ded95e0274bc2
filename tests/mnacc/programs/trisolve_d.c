/* Lower-triangular forward substitution L X = B for NR right-hand sides in
   double: each right-hand side c is one parallel iteration (stored as rows
   Bt[c][*], Xt[c][*]), the row loop i is streamed and the triangular inner
   loop j < i reads earlier results of the same iteration; divides by the
   diagonal (2..5, inexact). */
/* mnacc-test: rtol=1e-12 */
#include <stdio.h>

#ifndef N
#define N 24
#endif
#ifndef NR
#define NR 16
#endif

double L[N][N], Bt[NR][N], Xt[NR][N];

int main(void)
{
    int c, i, j;
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            L[i][j] = (j < i) ? (double)((i * 5 + j * 3) % 7 - 3) * 0.125
                    : (j == i ? (double)(2 + i % 4) : 0.0);
    for (c = 0; c < NR; c++)
        for (i = 0; i < N; i++)
            Bt[c][i] = (double)((c * 7 + i * 3) % 10) + 1.0;

#pragma goose parallel for loopcounter(c, i, j) result(Xt[c][0..N-1])
    for (c = 0; c < NR; c++) {
        for (i = 0; i < N; i++) {
            double s = Bt[c][i];
            for (j = 0; j < i; j++)
                s -= L[i][j] * Xt[c][j];
            Xt[c][i] = s / L[i][i];
        }
    }

    for (c = 0; c < NR; c++)
        for (i = 0; i < N; i++)
            printf("%.17g\n", Xt[c][i]);
    return 0;
}
