/* 3-D seven-point heat stencil in double: loopcounter(i, j, k), i parallel,
   j and k streamed, inside a host time loop with ping-pong arrays; the boundary
   faces keep their host values. Weights 1/2 and 1/12 (division by 12 inexact). */
/* mnacc-test: rtol=1e-12 */
#include <stdio.h>

#ifndef N
#define N 18
#endif
#ifndef TSTEPS
#define TSTEPS 2
#endif

static double A[N][N][N], B[N][N][N];

int main(void)
{
    int i, j, k, t;
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            for (k = 0; k < N; k++) {
                A[i][j][k] = (double)((i * 3 + j * 5 + k * 7) % 11) + 1.0;
                B[i][j][k] = A[i][j][k];
            }

    for (t = 0; t < TSTEPS; t++) {
#pragma goose parallel for loopcounter(i, j, k) result(B[i][1..N-2][1..N-2])
        for (i = 1; i < N - 1; i++)
            for (j = 1; j < N - 1; j++)
                for (k = 1; k < N - 1; k++)
                    B[i][j][k] = 0.5 * A[i][j][k]
                        + (A[i - 1][j][k] + A[i + 1][j][k]
                           + A[i][j - 1][k] + A[i][j + 1][k]
                           + A[i][j][k - 1] + A[i][j][k + 1]) / 12.0;

#pragma goose parallel for loopcounter(i, j, k) result(A[i][1..N-2][1..N-2])
        for (i = 1; i < N - 1; i++)
            for (j = 1; j < N - 1; j++)
                for (k = 1; k < N - 1; k++)
                    A[i][j][k] = 0.5 * B[i][j][k]
                        + (B[i - 1][j][k] + B[i + 1][j][k]
                           + B[i][j - 1][k] + B[i][j + 1][k]
                           + B[i][j][k - 1] + B[i][j][k + 1]) / 12.0;
    }

    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            for (k = 0; k < N; k++)
                printf("%.17g\n", A[i][j][k]);
    return 0;
}
