/* Covariance in float (twin of covariance_d.c): column means with a prologue
   and an epilogue dividing by N, centering, upper-triangle covariance with
   j from i and division by N-1 (inexact); host mirrors the lower triangle. */
/* mnacc-test: rtol=1e-5 */
#include <stdio.h>

#ifndef N
#define N 32
#endif
#ifndef M
#define M 16
#endif

float data[N][M], mean[M], cov[M][M];

int main(void)
{
    int i, j, k;
    float float_n = (float)N;
    for (i = 0; i < N; i++)
        for (j = 0; j < M; j++)
            data[i][j] = (float)((i * (j + 3) + j * 5) % 13) + 0.5f * (float)(i % 3);

#pragma goose parallel for loopcounter(j, i) result(mean[j])
    for (j = 0; j < M; j++) {
        float s = 0.0f;
        for (i = 0; i < N; i++)
            s += data[i][j];
        mean[j] = s / float_n;
    }

#pragma goose parallel for loopcounter(i, j) result(data[i][0..M-1])
    for (i = 0; i < N; i++)
        for (j = 0; j < M; j++)
            data[i][j] -= mean[j];

#pragma goose parallel for loopcounter(i, j, k) result(cov[i][0..M-1])
    for (i = 0; i < M; i++) {
        for (j = i; j < M; j++) {
            float s = 0.0f;
            for (k = 0; k < N; k++)
                s += data[k][i] * data[k][j];
            cov[i][j] = s / (float_n - 1.0f);
        }
    }

    for (i = 0; i < M; i++)
        for (j = 0; j < i; j++)
            cov[i][j] = cov[j][i];

    for (j = 0; j < M; j++)
        printf("%.9g\n", (double)mean[j]);
    for (i = 0; i < M; i++)
        for (j = 0; j < M; j++)
            printf("%.9g\n", (double)cov[i][j]);
    return 0;
}
