/* Dense matrix product C = A*B in double, Goose style: loopcounter(i, j),
   rows i in parallel, column loop j streamed, a private dot-product loop k inside. */
/* mnacc-test: exact */
#include <stdio.h>

#ifndef N
#define N 16
#endif
#ifndef K
#define K 12
#endif

static double a[N][K], b[K][N], c[N][N];

int main(void)
{
    int i, j, k;
    for (i = 0; i < N; i++)
        for (k = 0; k < K; k++)
            a[i][k] = (double)((i * 7 + k * 3) % 11) - 5.0;
    for (k = 0; k < K; k++)
        for (j = 0; j < N; j++)
            b[k][j] = (double)((k * 5 + j * 2) % 9) * 0.125 - 0.5;

#pragma goose parallel for loopcounter(i, j) result(c[i][0..N-1])
    for (i = 0; i < N; i++) {
        for (j = 0; j < N; j++) {
            double s = 0.0;
            for (k = 0; k < K; k++)
                s += a[i][k] * b[k][j];
            c[i][j] = s;
        }
    }

    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            printf("%.17g\n", c[i][j]);
    return 0;
}
