/* an OpenACC reduction variable assigned rather than accumulated */
#include <stdio.h>
#define N 16
static double a[N];

int main(void)
{
    int i;
    double s = 0.0;
    for (i = 0; i < N; i++)
        a[i] = (double)i;
#pragma acc parallel loop reduction(+:s)
    for (i = 0; i < N; i++)
        s = a[i];
    printf("%g\n", s);
    return 0;
}
