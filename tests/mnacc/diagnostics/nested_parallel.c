/* a parallel loop nested inside another */
#include <stdio.h>
#define N 16
static double a[N][N], c[N][N];

int main(void)
{
    int i, j;
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            a[i][j] = (double)(i + j);
#pragma goose parallel for loopcounter(i) result(c[i][0..N-1])
    for (i = 0; i < N; i++) {
#pragma goose parallel for loopcounter(j) result(c[i][j])
        for (j = 0; j < N; j++)
            c[i][j] = 2.0 * a[i][j];
    }
    printf("%g\n", c[N - 1][N - 1]);
    return 0;
}
