/* OpenACC in float: `parallel loop` over rows with an inner
   `acc loop reduction(+:t)` calling an `acc routine seq` function, then an
   `acc loop seq` cumulative loop, and sqrtf for the row norm (inexact). */
/* mnacc-test: rtol=1e-5 */
#include <stdio.h>
#include <math.h>

#ifndef N
#define N 24
#endif
#ifndef M
#define M 16
#endif

float a[N][M], nrm[N], cum[N][M];

#pragma acc routine seq
float weight(int j)
{
    return 1.0f + 0.25f * (float)(j % 4);
}

int main(void)
{
    int i, j;
    for (i = 0; i < N; i++)
        for (j = 0; j < M; j++)
            a[i][j] = (float)((i * 7 + j * 2) % 10) * 0.5f + 0.5f;

#pragma acc parallel loop
    for (i = 0; i < N; i++) {
        float t = 0.0f;
#pragma acc loop reduction(+:t)
        for (j = 0; j < M; j++)
            t += weight(j) * a[i][j] * a[i][j];
        nrm[i] = sqrtf(t);
    }

#pragma acc parallel loop
    for (i = 0; i < N; i++) {
        float c = 0.0f;
#pragma acc loop seq
        for (j = 0; j < M; j++) {
            c += a[i][j] / nrm[i];
            cum[i][j] = c;
        }
    }

    for (i = 0; i < N; i++)
        printf("%.9g\n", (double)nrm[i]);
    for (i = 0; i < N; i++)
        for (j = 0; j < M; j++)
            printf("%.9g\n", (double)cum[i][j]);
    return 0;
}
