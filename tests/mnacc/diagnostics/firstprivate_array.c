/* firstprivate of an array: not supported (copy it inside the loop). */
#include <stdio.h>
#define N 8
double c[N];
int main(void)
{
    int i;
    double w[3] = {1.0, 2.0, 3.0};
#pragma acc parallel loop firstprivate(w)
    for (i = 0; i < N; i++)
        c[i] = w[i % 3] * i;
    printf("%g\n", c[N - 1]);
    return 0;
}
