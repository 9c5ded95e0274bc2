/* malloc'd arrays in double with OpenACC data clauses naming their extents:
   axpy with copyin(x[0:n]) copy(y[0:n]), an outer product into a flattened
   2-D array with copyout(z[0:n*m]) and an inner `acc loop seq`, and a sum
   with copyin + reduction(+:s). Exact. */
/* mnacc-test: exact */
#include <stdio.h>
#include <stdlib.h>

#ifndef N
#define N 48
#endif
#ifndef M
#define M 6
#endif

int main(void)
{
    int i, j;
    int n = N, m = M;
    double a = 0.75, s = 1.0;
    double *x = (double *)malloc((size_t)n * sizeof(double));
    double *y = (double *)malloc((size_t)n * sizeof(double));
    double *w = (double *)malloc((size_t)m * sizeof(double));
    double *z = (double *)malloc((size_t)n * (size_t)m * sizeof(double));
    if (x == NULL || y == NULL || w == NULL || z == NULL)
        return 1;
    for (i = 0; i < n; i++) {
        x[i] = (double)((i * 9) % 16) * 0.125;
        y[i] = (double)(i % 5) - 2.0;
    }
    for (j = 0; j < m; j++)
        w[j] = (double)(j + 1) * 0.5;

#pragma acc parallel loop copyin(x[0:n]) copy(y[0:n])
    for (i = 0; i < n; i++)
        y[i] = a * x[i] + y[i];

#pragma acc parallel loop copyin(y[0:n], w[0:m]) copyout(z[0:n*m])
    for (i = 0; i < n; i++) {
#pragma acc loop seq
        for (j = 0; j < m; j++)
            z[i * m + j] = y[i] * w[j];
    }

#pragma acc parallel loop copyin(y[0:n]) reduction(+:s)
    for (i = 0; i < n; i++)
        s += y[i] * y[i];

    for (i = 0; i < n; i++)
        printf("%.17g\n", y[i]);
    for (i = 0; i < n * m; i++)
        printf("%.17g\n", z[i]);
    printf("%.17g\n", s);
    free(x);
    free(y);
    free(w);
    free(z);
    return 0;
}
