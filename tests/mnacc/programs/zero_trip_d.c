/* Zero-trip marked loops in double: a parallel loop whose host-computed bound
   gives no iterations (its array must stay untouched), a reduction that runs
   zero times (the scalar keeps its entry value), and a parallel loop whose
   streamed inner loop is empty (only prologue and epilogue run). */
/* mnacc-test: exact mncore2 */
#include <stdio.h>

#ifndef N
#define N 16
#endif

double y[N], z[N], w[N];

int main(void)
{
    int i, j, n, m;
    double s = 2.5, t = 0.0;
    for (i = 0; i < N; i++) {
        y[i] = (double)i * 0.5;
        z[i] = (double)(N - i);
        w[i] = -1.0;
    }
    n = N / 2 - 8;   /* zero with the default N = 16 */
    m = n;

#pragma goose parallel for loopcounter(i) result(y[i])
    for (i = 0; i < n; i++)
        y[i] = 99.0;

#pragma goose parallel for loopcounter(i) reduction(+: s)
    for (i = n; i > m; i--)
        s += z[i];

#pragma goose parallel for loopcounter(i, j) result(w[i]) private(t)
    for (i = 0; i < N; i++) {
        t = z[i] * 0.25;
        for (j = 0; j < m; j++)
            t += y[j];
        w[i] = t + y[i];
    }

    for (i = 0; i < N; i++)
        printf("%.17g\n", y[i]);
    printf("%.17g\n", s);
    for (i = 0; i < N; i++)
        printf("%.17g\n", w[i]);
    return 0;
}
