/* Product and sum reductions in double: result(p) with p = p * factor
   (factors 1/2..3/2 in quarters keep the product exact), reduction(+: s) over
   a 2-D streamed loop, both starting from nonzero host values, and an fmin
   reduction written as `lo = fmin(lo, ...)`. */
/* mnacc-test: exact */
#include <stdio.h>
#include <math.h>

#ifndef N
#define N 40
#endif
#ifndef M
#define M 10
#endif

double f[N], h[N][M];

int main(void)
{
    int i, j;
    double p = 3.0, s = -7.5, lo = 0.0;
    for (i = 0; i < N; i++) {
        f[i] = 1.0 + 0.25 * (double)((i * 3) % 5 - 2);
        for (j = 0; j < M; j++)
            h[i][j] = (double)((i + j * 3) % 9) * 0.125 - 0.5;
    }

#pragma goose parallel for loopcounter(i) result(p)
    for (i = 0; i < N; i++)
        p = p * f[i];

#pragma goose parallel for loopcounter(i, j) reduction(+: s)
    for (i = 0; i < N; i++)
        for (j = 0; j < M; j++)
            s += h[i][j] * f[i];

#pragma goose parallel for loopcounter(i) result(lo)
    for (i = 0; i < N; i++)
        lo = fmin(lo, h[i][i % M] - f[i]);

    printf("%.17g\n", p);
    printf("%.17g\n", s);
    printf("%.17g\n", lo);
    return 0;
}
