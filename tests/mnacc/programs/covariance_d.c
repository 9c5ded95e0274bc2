/* Covariance of N samples of M variables in double, three marked loops:
   column means (prologue s = 0, epilogue mean[j] = s / N over a streamed i),
   centering, then the upper triangle of the covariance (j from i, division by
   N-1 in the epilogue); the host mirrors the lower triangle afterwards. */
/* mnacc-test: rtol=1e-12 */
#include <stdio.h>

#ifndef N
#define N 32
#endif
#ifndef M
#define M 16
#endif

double data[N][M], mean[M], cov[M][M];

int main(void)
{
    int i, j, k;
    double float_n = (double)N;
    for (i = 0; i < N; i++)
        for (j = 0; j < M; j++)
            data[i][j] = (double)((i * (j + 3) + j * 5) % 13) + 0.5 * (double)(i % 3);

#pragma goose parallel for loopcounter(j, i) result(mean[j])
    for (j = 0; j < M; j++) {
        double s = 0.0;
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
            double s = 0.0;
            for (k = 0; k < N; k++)
                s += data[k][i] * data[k][j];
            cov[i][j] = s / (float_n - 1.0);
        }
    }

    for (i = 0; i < M; i++)
        for (j = 0; j < i; j++)
            cov[i][j] = cov[j][i];

    for (j = 0; j < M; j++)
        printf("%.17g\n", mean[j]);
    for (i = 0; i < M; i++)
        for (j = 0; j < M; j++)
            printf("%.17g\n", cov[i][j]);
    return 0;
}
