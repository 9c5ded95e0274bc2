/* Matrix-vector product y = A*x in float: loopcounter(i, j) with the dot
   product over j streamed inside each row, accumulator private per row. */
/* mnacc-test: exact mncore2 */
#include <stdio.h>

#ifndef N
#define N 16
#endif
#ifndef M
#define M 20
#endif

float A[N][M], x[M], y[N];

int main(void)
{
    int i, j;
    float s;
    for (i = 0; i < N; i++)
        for (j = 0; j < M; j++)
            A[i][j] = (float)((i * 5 + j * 3) % 13) - 6.0f;
    for (j = 0; j < M; j++)
        x[j] = (float)(j % 7) * 0.5f - 1.0f;

#pragma goose parallel for loopcounter(i, j) result(y[i]) private(s)
    for (i = 0; i < N; i++) {
        s = 0.0f;
        for (j = 0; j < M; j++)
            s += A[i][j] * x[j];
        y[i] = s;
    }

    for (i = 0; i < N; i++)
        printf("%.9g\n", (double)y[i]);
    return 0;
}
