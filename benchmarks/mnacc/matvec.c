/* y = A x, row-major A, in Goose's form: i parallel, j streamed. */
#include <stdio.h>
#ifndef N
#define N 4096
#endif
#ifndef M
#define M 1024
#endif
static float a[N][M], x[M], y[N];

int main(void)
{
    int i, j;
    for (i = 0; i < N; i++)
        for (j = 0; j < M; j++)
            a[i][j] = (float)((i * 7 + j * 3) % 13) - 6.0f;
    for (j = 0; j < M; j++)
        x[j] = (float)(j % 5) * 0.25f;
#pragma goose parallel for loopcounter(i, j) result(y[i])
    for (i = 0; i < N; i++)
        for (j = 0; j < M; j++)
            y[i] += a[i][j] * x[j];
    double s = 0;
    for (i = 0; i < N; i++)
        s += y[i] * (double)(i % 7);
    printf("%.9g\n", s);
    return 0;
}
