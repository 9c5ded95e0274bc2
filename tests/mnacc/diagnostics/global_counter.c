/* a parallel loop whose counter is a global variable: plain C, mnacc must not crash on it */
/* mnacc-diag: run -o /dev/null */
#include <stdio.h>
#define N 16
static double a[N], c[N];
int n;

int main(void)
{
    for (n = 0; n < N; n++)
        a[n] = (double)n;
#pragma acc parallel loop
    for (n = 0; n < N; n++)
        c[n] = 2.0 * a[n];
    printf("%g %d\n", c[N - 1], n);
    return 0;
}
