/* OpenACC `kernels loop reduction(+:s)` in double: a dot product that starts
   from a nonzero host value, the host turns it into a scale factor, then a
   plain `kernels loop` applies it. Exact (1/8ths, power-of-two scale). */
/* mnacc-test: exact mncore2 */
#include <stdio.h>

#ifndef N
#define N 32
#endif

double x[N], y[N], r[N];

int main(void)
{
    int i;
    double s = 4.0, scale;
    for (i = 0; i < N; i++) {
        x[i] = (double)((i * 3) % 8) * 0.125;
        y[i] = (double)((i * 5) % 7) - 3.0;
    }

#pragma acc kernels loop reduction(+:s)
    for (i = 0; i < N; i++)
        s += x[i] * y[i];

    scale = (s > 0.0) ? 0.5 : 0.25;

#pragma acc kernels loop
    for (i = 0; i < N; i++)
        r[i] = scale * x[i] - y[i];

    printf("%.17g\n", s);
    for (i = 0; i < N; i++)
        printf("%.17g\n", r[i]);
    return 0;
}
