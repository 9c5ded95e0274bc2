/* Max/min reductions in float via result(e) with e = fmaxf(e, fabsf(...)):
   the max-norm of a residual (1-D), the max over a 2-D array updated inside
   the streamed inner loop, and a fminf minimum; each starts from its host
   value. fmax/fmin/fabs are exact. */
/* mnacc-test: exact mncore2 */
#include <stdio.h>
#include <math.h>

#ifndef N
#define N 32
#endif
#ifndef M
#define M 8
#endif

float u[N], v[N], g[N][M];

int main(void)
{
    int i, j;
    float e = 0.0f, gmax = -100.0f, vmin = 1000.0f;
    for (i = 0; i < N; i++) {
        u[i] = (float)((i * 11) % 17) * 0.25f - 2.0f;
        v[i] = (float)((i * 5) % 13) * 0.5f - 3.0f;
        for (j = 0; j < M; j++)
            g[i][j] = (float)((i * 3 + j * 7) % 23) - 11.5f;
    }

#pragma goose parallel for loopcounter(i) result(e)
    for (i = 0; i < N; i++)
        e = fmaxf(e, fabsf(u[i] - v[i]));

#pragma goose parallel for loopcounter(i, j) result(gmax)
    for (i = 0; i < N; i++)
        for (j = 0; j < M; j++)
            gmax = fmaxf(gmax, g[i][j] * (float)(1 + i % 3));

#pragma goose parallel for loopcounter(i) result(vmin)
    for (i = 0; i < N; i++)
        vmin = fminf(vmin, v[i] + u[i]);

    printf("%.9g\n", (double)e);
    printf("%.9g\n", (double)gmax);
    printf("%.9g\n", (double)vmin);
    return 0;
}
