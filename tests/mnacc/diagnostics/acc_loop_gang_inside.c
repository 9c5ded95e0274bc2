/* '#pragma acc loop gang' on an inner loop of a marked loop */
#include <stdio.h>
#define N 16
static double a[N][N], c[N][N];

int main(void)
{
    int i, j;
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            a[i][j] = (double)(i + j);
#pragma acc parallel loop
    for (i = 0; i < N; i++) {
#pragma acc loop gang
        for (j = 0; j < N; j++)
            c[i][j] = 2.0 * a[i][j];
    }
    printf("%g\n", c[N - 1][N - 1]);
    return 0;
}
