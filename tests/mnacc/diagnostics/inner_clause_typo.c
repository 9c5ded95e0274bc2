/* a misspelt clause on an inner '#pragma acc loop' */
#include <stdio.h>
#define N 16
static double a[N][N], c[N];

int main(void)
{
    int i, j;
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            a[i][j] = (double)(i + j);
#pragma acc parallel loop
    for (i = 0; i < N; i++) {
        double t = 0.0;
#pragma acc loop reductoin(+:t)
        for (j = 0; j < N; j++)
            t += a[i][j];
        c[i] = t;
    }
    printf("%g\n", c[N - 1]);
    return 0;
}
