/* 1-D three-point Jacobi smoothing in double inside a host time loop, with
   ping-pong arrays (a -> b, then b -> a); the two border points keep their
   host-set values. Weights 1/4, 1/2, 1/4 keep everything exact. */
/* mnacc-test: exact */
#include <stdio.h>

#ifndef N
#define N 64
#endif
#ifndef TSTEPS
#define TSTEPS 4
#endif

double a[N], b[N];

int main(void)
{
    int i, t;
    for (i = 0; i < N; i++) {
        a[i] = (double)((i * 13) % 17) - 8.0;
        b[i] = a[i];
    }
    a[0] = b[0] = 3.0;
    a[N - 1] = b[N - 1] = -2.0;

    for (t = 0; t < TSTEPS; t++) {
#pragma goose parallel for loopcounter(i) result(b[i])
        for (i = 1; i < N - 1; i++)
            b[i] = 0.25 * a[i - 1] + 0.5 * a[i] + 0.25 * a[i + 1];

#pragma goose parallel for loopcounter(i) result(a[i])
        for (i = 1; i < N - 1; i++)
            a[i] = 0.25 * b[i - 1] + 0.5 * b[i] + 0.25 * b[i + 1];
    }

    for (i = 0; i < N; i++)
        printf("%.17g\n", a[i]);
    return 0;
}
