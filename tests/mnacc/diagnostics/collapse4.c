/* collapse(4): at most 3 loops can be collapsed */
#include <stdio.h>
#define N 4
static double c[N][N][N][N];

int main(void)
{
    int i, j, k, l;
#pragma acc parallel loop collapse(4)
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            for (k = 0; k < N; k++)
                for (l = 0; l < N; l++)
                    c[i][j][k][l] = (double)(i + j + k + l);
    printf("%g\n", c[N - 1][N - 1][N - 1][N - 1]);
    return 0;
}
