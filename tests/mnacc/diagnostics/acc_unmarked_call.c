/* an OpenACC loop calling a function not marked '#pragma acc routine' */
#include <stdio.h>
#define N 16
static double a[N], c[N];

static double twice(double x)
{
    return 2.0 * x;
}

int main(void)
{
    int i;
    for (i = 0; i < N; i++)
        a[i] = (double)i;
#pragma acc parallel loop
    for (i = 0; i < N; i++)
        c[i] = twice(a[i]);
    printf("%g\n", c[N - 1]);
    return 0;
}
