/* OpenACC `parallel loop collapse(3)` in double: a 3-D grid where all three
   loops are parallel (rectangular bounds), computing a trilinear field plus a
   6-neighbour average from a read-only input. Exact (1/8 weights, 1/8ths). */
/* mnacc-test: exact */
#include <stdio.h>

#ifndef NX
#define NX 6
#endif
#ifndef NY
#define NY 5
#endif
#ifndef NZ
#define NZ 7
#endif

double in[NX + 2][NY + 2][NZ + 2], out[NX][NY][NZ];

int main(void)
{
    int i, j, k;
    for (i = 0; i < NX + 2; i++)
        for (j = 0; j < NY + 2; j++)
            for (k = 0; k < NZ + 2; k++)
                in[i][j][k] = (double)((i * 5 + j * 3 + k * 2) % 9) - 4.0;

#pragma acc parallel loop collapse(3)
    for (i = 0; i < NX; i++)
        for (j = 0; j < NY; j++)
            for (k = 0; k < NZ; k++)
                out[i][j][k] = 0.125 * (in[i][j + 1][k + 1] + in[i + 2][j + 1][k + 1]
                                        + in[i + 1][j][k + 1] + in[i + 1][j + 2][k + 1]
                                        + in[i + 1][j + 1][k] + in[i + 1][j + 1][k + 2])
                               + 0.25 * in[i + 1][j + 1][k + 1]
                               + (double)(i * j - k) * 0.5;

    for (i = 0; i < NX; i++)
        for (j = 0; j < NY; j++)
            for (k = 0; k < NZ; k++)
                printf("%.17g\n", out[i][j][k]);
    return 0;
}
