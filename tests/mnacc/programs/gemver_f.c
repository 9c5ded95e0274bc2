/* gemver-like sequence of four marked loops in float with host code between:
   A += u1 v1^T + u2 v2^T;  x += beta A^T y;  (host: x += z);  w += alpha A x.
   Later loops read what earlier launches wrote (A, then x). */
/* mnacc-test: exact */
#include <stdio.h>

#ifndef N
#define N 16
#endif

float A[N][N], u1[N], v1[N], u2[N], v2[N], w[N], x[N], y[N], z[N];

int main(void)
{
    int i, j;
    float alpha = 1.5f, beta = 0.5f;
    for (i = 0; i < N; i++) {
        u1[i] = (float)(i % 4);
        v1[i] = (float)((i * 3) % 5) * 0.5f - 1.0f;
        u2[i] = (float)((i * 5) % 7) * 0.25f;
        v2[i] = (float)(i % 3) - 1.0f;
        y[i] = (float)((i * 7) % 8) * 0.125f;
        z[i] = (float)(i % 6) * 0.5f;
        x[i] = 0.0f;
        w[i] = 0.0f;
        for (j = 0; j < N; j++)
            A[i][j] = (float)((i * 2 + j * 5) % 7) - 3.0f;
    }

#pragma goose parallel for loopcounter(i, j) result(A[i][0..N-1])
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            A[i][j] = A[i][j] + u1[i] * v1[j] + u2[i] * v2[j];

#pragma goose parallel for loopcounter(i, j) result(x[i])
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            x[i] = x[i] + beta * A[j][i] * y[j];

    /* host step between launches */
    for (i = 0; i < N; i++)
        x[i] = x[i] + z[i];

#pragma goose parallel for loopcounter(i, j) result(w[i])
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            w[i] = w[i] + alpha * A[i][j] * x[j];

    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            printf("%.9g\n", (double)A[i][j]);
    for (i = 0; i < N; i++)
        printf("%.9g\n", (double)x[i]);
    for (i = 0; i < N; i++)
        printf("%.9g\n", (double)w[i]);
    return 0;
}
