/* Integer 2-D stencil with ping-pong arrays in a host time loop: each interior
   cell becomes (2*centre + 4-neighbour sum + row/column term) % 1009, borders
   kept. Pure int arithmetic, exact. */
/* mnacc-test: exact */
#include <stdio.h>

#ifndef N
#define N 18
#endif
#ifndef TSTEPS
#define TSTEPS 4
#endif

int A[N][N], B[N][N];

int main(void)
{
    int i, j, t;
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++) {
            A[i][j] = (i * 31 + j * 17) % 101;
            B[i][j] = A[i][j];
        }

    for (t = 0; t < TSTEPS; t++) {
#pragma goose parallel for loopcounter(i, j) result(B[i][1..N-2])
        for (i = 1; i < N - 1; i++)
            for (j = 1; j < N - 1; j++)
                B[i][j] = (2 * A[i][j] + A[i - 1][j] + A[i + 1][j]
                           + A[i][j - 1] + A[i][j + 1] + i - j + N) % 1009;

#pragma goose parallel for loopcounter(i, j) result(A[i][1..N-2])
        for (i = 1; i < N - 1; i++)
            for (j = 1; j < N - 1; j++)
                A[i][j] = (2 * B[i][j] + B[i - 1][j] + B[i + 1][j]
                           + B[i][j - 1] + B[i][j + 1] + i - j + N) % 1009;
    }

    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            printf("%d\n", A[i][j]);
    return 0;
}
