/* 1-D three-point Jacobi in float (twin of jacobi1d_d.c) in a host time loop
   with ping-pong arrays and host-set borders; weights 1/4, 1/2, 1/4, exact. */
/* mnacc-test: exact */
#include <stdio.h>

#ifndef N
#define N 64
#endif
#ifndef TSTEPS
#define TSTEPS 4
#endif

float a[N], b[N];

int main(void)
{
    int i, t;
    for (i = 0; i < N; i++) {
        a[i] = (float)((i * 13) % 17) - 8.0f;
        b[i] = a[i];
    }
    a[0] = b[0] = 3.0f;
    a[N - 1] = b[N - 1] = -2.0f;

    for (t = 0; t < TSTEPS; t++) {
#pragma goose parallel for loopcounter(i) result(b[i])
        for (i = 1; i < N - 1; i++)
            b[i] = 0.25f * a[i - 1] + 0.5f * a[i] + 0.25f * a[i + 1];

#pragma goose parallel for loopcounter(i) result(a[i])
        for (i = 1; i < N - 1; i++)
            a[i] = 0.25f * b[i - 1] + 0.5f * b[i] + 0.25f * b[i + 1];
    }

    for (i = 0; i < N; i++)
        printf("%.9g\n", (double)a[i]);
    return 0;
}
