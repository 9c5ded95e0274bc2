/* Downward-counting loops in double: an upper-triangular matrix-vector product
   with i-- / i >= 0 and a streamed j-- / j >= i (triangular, counting down),
   then a backward difference with i-- / i > 0. Exact (small integers, 1/8ths). */
/* mnacc-test: exact */
#include <stdio.h>

#ifndef N
#define N 24
#endif

double U[N][N], x[N], y[N], dx[N];

int main(void)
{
    int i, j;
    for (i = 0; i < N; i++) {
        x[i] = (double)((i * 5) % 8) * 0.125 + 1.0;
        y[i] = -1.0;
        dx[i] = 0.0;
        for (j = 0; j < N; j++)
            U[i][j] = (double)((i + 3 * j) % 7) - 2.0;
    }

#pragma goose parallel for loopcounter(i, j) result(y[i])
    for (i = N - 1; i >= 0; i--) {
        double s = 0.0;
        for (j = N - 1; j >= i; j--)
            s += U[i][j] * x[j];
        y[i] = s;
    }

#pragma goose parallel for loopcounter(i) result(dx[i])
    for (i = N - 1; i > 0; i--)
        dx[i] = y[i] - y[i - 1];

    for (i = 0; i < N; i++)
        printf("%.17g\n", y[i]);
    for (i = 0; i < N; i++)
        printf("%.17g\n", dx[i]);
    return 0;
}
