/* In-row inclusive prefix sum in float: rows in parallel, the streamed counter
   j carries a dependence along the row (a[i][j] += a[i][j-1]); then a second
   marked loop forms row totals into a separate array. Exact (multiples of 1/4). */
/* mnacc-test: exact mncore2 */
#include <stdio.h>

#ifndef N
#define N 16
#endif
#ifndef M
#define M 12
#endif

float a[N][M], total[N];

int main(void)
{
    int i, j;
    for (i = 0; i < N; i++)
        for (j = 0; j < M; j++)
            a[i][j] = (float)((i * 3 + j * 5) % 9) * 0.25f - 1.0f;

#pragma goose parallel for loopcounter(i, j) result(a[i][0..M-1])
    for (i = 0; i < N; i++)
        for (j = 1; j < M; j++)
            a[i][j] += a[i][j - 1];

#pragma goose parallel for loopcounter(i) result(total[i])
    for (i = 0; i < N; i++)
        total[i] = a[i][M - 1] * 2.0f - a[i][0];

    for (i = 0; i < N; i++)
        for (j = 0; j < M; j++)
            printf("%.9g\n", (double)a[i][j]);
    for (i = 0; i < N; i++)
        printf("%.9g\n", (double)total[i]);
    return 0;
}
