/* A 5-point Jacobi sweep in a host time loop, ping-pong arrays, Goose's form. */
#include <stdio.h>
#ifndef N
#define N 512
#endif
#ifndef STEPS
#define STEPS 4
#endif
static float u[N][N], v[N][N];

int main(void)
{
    int i, j, t;
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            u[i][j] = v[i][j] = (float)((i * 3 + j * 5) % 17) * 0.125f;
    for (t = 0; t < STEPS; t++) {
#pragma goose parallel for loopcounter(i, j) result(v[i][1..N-2])
        for (i = 1; i < N - 1; i++)
            for (j = 1; j < N - 1; j++)
                v[i][j] = 0.2f * (u[i][j] + u[i - 1][j] + u[i + 1][j] + u[i][j - 1] + u[i][j + 1]);
#pragma goose parallel for loopcounter(i, j) result(u[i][1..N-2])
        for (i = 1; i < N - 1; i++)
            for (j = 1; j < N - 1; j++)
                u[i][j] = 0.2f * (v[i][j] + v[i - 1][j] + v[i + 1][j] + v[i][j - 1] + v[i][j + 1]);
    }
    double s = 0;
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            s += u[i][j] * (double)((i + j) % 3);
    printf("%.9g\n", s);
    return 0;
}
