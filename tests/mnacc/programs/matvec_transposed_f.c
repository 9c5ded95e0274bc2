/* Transposed matrix-vector product y = y + A^T x in float: the parallel
   counter i indexes the column, y[i] += a[j][i]*x[j] accumulates over the
   streamed j (column access down the matrix). */
/* mnacc-test: exact */
#include <stdio.h>

#ifndef N
#define N 24
#endif

float a[N][N], x[N], y[N];

int main(void)
{
    int i, j;
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            a[i][j] = (float)((i * 11 + j * 4) % 9) - 4.0f;
    for (i = 0; i < N; i++) {
        x[i] = (float)((i * 3) % 8) * 0.125f;
        y[i] = (float)(i % 5) - 2.0f;
    }

#pragma goose parallel for loopcounter(i, j) result(y[i])
    for (i = 0; i < N; i++) {
        for (j = 0; j < N; j++)
            y[i] += a[j][i] * x[j];
    }

    for (i = 0; i < N; i++)
        printf("%.9g\n", (double)y[i]);
    return 0;
}
