/* Marked loops inside helper functions with sized array parameters, double:
   smooth(out, in) called alternately with swapped arrays from a host time loop,
   a dot product returning its reduction(+: s), and an axpy using a scalar
   parameter. Exact (weights 1/2, 1/8). */
/* mnacc-test: exact */
#include <stdio.h>

#ifndef N
#define N 20
#endif
#ifndef TSTEPS
#define TSTEPS 4
#endif

static double P[N][N], R[N][N], v[N], wv[N];

static void smooth(double out[N][N], double in[N][N])
{
    int i, j;
#pragma goose parallel for loopcounter(i, j) result(out[i][1..N-2])
    for (i = 1; i < N - 1; i++)
        for (j = 1; j < N - 1; j++)
            out[i][j] = 0.5 * in[i][j]
                + 0.125 * (in[i - 1][j] + in[i + 1][j] + in[i][j - 1] + in[i][j + 1]);
}

static double dot(double a[N], double b[N])
{
    int i;
    double s = 0.0;
#pragma goose parallel for loopcounter(i) reduction(+: s)
    for (i = 0; i < N; i++)
        s += a[i] * b[i];
    return s;
}

static void axpy(double alpha, double x[N], double y[N])
{
    int i;
#pragma goose parallel for loopcounter(i) result(y[i])
    for (i = 0; i < N; i++)
        y[i] = y[i] + alpha * x[i];
}

int main(void)
{
    int i, j, t;
    double d;
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++) {
            P[i][j] = (double)((i * 3 + j * 7) % 8) - 3.0;
            R[i][j] = P[i][j];
        }

    for (t = 0; t < TSTEPS; t += 2) {
        smooth(R, P);
        smooth(P, R);
    }

    for (i = 0; i < N; i++) {
        v[i] = P[i][i];
        wv[i] = P[i][N - 1 - i];
    }
    d = dot(v, wv);
    axpy(0.5, v, wv);
    d += dot(wv, wv);

    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            printf("%.17g\n", P[i][j]);
    for (i = 0; i < N; i++)
        printf("%.17g\n", wv[i]);
    printf("%.17g\n", d);
    return 0;
}
