/* a malloc'd pointer used in a loop with no data clause: its extent is unknown */
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    int i, n = 16;
    double *x = (double *)malloc((size_t)n * sizeof(double));
    double *y = (double *)malloc((size_t)n * sizeof(double));
    if (x == NULL || y == NULL)
        return 1;
    for (i = 0; i < n; i++)
        x[i] = (double)i;
#pragma acc parallel loop copyout(y[0:n])
    for (i = 0; i < n; i++)
        y[i] = 2.0 * x[i];
    printf("%g\n", y[n - 1]);
    free(x);
    free(y);
    return 0;
}
