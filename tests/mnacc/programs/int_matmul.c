/* Integer matrix product C = A*B + D in Goose style, loopcounter(i, j) with an
   inner k loop and a private int accumulator declared outside the loop, then
   an integer row checksum with % and a negative-safe mix. Exact. */
/* mnacc-test: exact */
#include <stdio.h>

#ifndef N
#define N 16
#endif

int A[N][N], B[N][N], C[N][N], D[N][N], chk[N];

int main(void)
{
    int i, j, k, s;
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++) {
            A[i][j] = (i * 3 + j * 5) % 11 - 5;
            B[i][j] = (i * 7 + j) % 9 - 4;
            D[i][j] = i - j;
        }

#pragma goose parallel for loopcounter(i, j) result(C[i][0..N-1]) private(s)
    for (i = 0; i < N; i++) {
        for (j = 0; j < N; j++) {
            s = D[i][j];
            for (k = 0; k < N; k++)
                s += A[i][k] * B[k][j];
            C[i][j] = s;
        }
    }

#pragma goose parallel for loopcounter(i, j) result(chk[i])
    for (i = 0; i < N; i++) {
        int h = 7;
        for (j = 0; j < N; j++)
            h = (h * 31 + C[i][j] + 1000) % 65521;
        chk[i] = h;
    }

    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            printf("%d\n", C[i][j]);
    for (i = 0; i < N; i++)
        printf("%d\n", chk[i]);
    return 0;
}
