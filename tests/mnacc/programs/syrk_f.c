/* Symmetric rank-k update (syrk-like) in float on the lower triangle:
   c[i][j] = beta*c[i][j] + alpha * sum_k a[i][k]*a[j][k] for j <= i.
   Triangular streamed bound j <= i, reads other rows of a, writes only row i. */
/* mnacc-test: exact */
#include <stdio.h>

#ifndef N
#define N 20
#endif
#ifndef K
#define K 8
#endif

float a[N][K], c[N][N];

int main(void)
{
    int i, j, k;
    float alpha = 0.5f, beta = 1.5f;
    for (i = 0; i < N; i++)
        for (k = 0; k < K; k++)
            a[i][k] = (float)((i * 3 + k * 7) % 10) - 4.5f;
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            c[i][j] = (float)((i + j * 2) % 6) * 0.25f;

#pragma goose parallel for loopcounter(i, j, k) result(c[i][0..N-1])
    for (i = 0; i < N; i++) {
        for (j = 0; j <= i; j++) {
            float t = 0.0f;
            for (k = 0; k < K; k++)
                t += a[i][k] * a[j][k];
            c[i][j] = beta * c[i][j] + alpha * t;
        }
    }

    /* the upper triangle must come back untouched */
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            printf("%.9g\n", (double)c[i][j]);
    return 0;
}
