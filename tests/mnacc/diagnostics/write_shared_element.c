/* an array element written at an index that is not the parallel counter's */
#include <stdio.h>
#define N 16
static double a[N], c[N];

int main(void)
{
    int i;
    for (i = 0; i < N; i++)
        a[i] = (double)i;
#pragma acc parallel loop
    for (i = 0; i < N; i++)
        c[0] = a[i];
    printf("%g\n", c[0]);
    return 0;
}
