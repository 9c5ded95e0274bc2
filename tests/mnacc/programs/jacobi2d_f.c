/* 2-D five-point Jacobi in float (weights 0.2, not exact) inside a host time
   loop with ping-pong arrays; interior rows parallel, columns streamed, the
   border ring keeps its host values. All values positive (no cancellation). */
/* mnacc-test: rtol=1e-5 */
#include <stdio.h>

#ifndef N
#define N 18
#endif
#ifndef TSTEPS
#define TSTEPS 3
#endif

float A[N][N], B[N][N];

int main(void)
{
    int i, j, t;
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++) {
            A[i][j] = (float)((i * 5 + j * 3) % 10) + 1.0f;
            B[i][j] = A[i][j];
        }

    for (t = 0; t < TSTEPS; t++) {
#pragma goose parallel for loopcounter(i, j) result(B[i][1..N-2])
        for (i = 1; i < N - 1; i++)
            for (j = 1; j < N - 1; j++)
                B[i][j] = 0.2f * (A[i][j] + A[i][j - 1] + A[i][j + 1]
                                  + A[i - 1][j] + A[i + 1][j]);

#pragma goose parallel for loopcounter(i, j) result(A[i][1..N-2])
        for (i = 1; i < N - 1; i++)
            for (j = 1; j < N - 1; j++)
                A[i][j] = 0.2f * (B[i][j] + B[i][j - 1] + B[i][j + 1]
                                  + B[i - 1][j] + B[i + 1][j]);
    }

    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            printf("%.9g\n", (double)A[i][j]);
    return 0;
}
