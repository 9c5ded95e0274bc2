/* Red-black relaxation of a 1-D rod in float with step-2 marked loops: red
   points (i = 1; i < N-1; i += 2) then black points (i = 2; i <= N-2; i += 2)
   updated in place from the other colour, inside a host time loop. Weights
   1/2 and 1/4, exact. */
/* mnacc-test: exact mncore2 */
#include <stdio.h>

#ifndef N
#define N 40
#endif
#ifndef TSTEPS
#define TSTEPS 3
#endif

float u[N], f[N];

int main(void)
{
    int i, t;
    for (i = 0; i < N; i++) {
        u[i] = (float)((i * 7) % 9) - 4.0f;
        f[i] = (float)(i % 3) * 0.5f;
    }
    u[0] = 1.0f;
    u[N - 1] = -1.0f;

    for (t = 0; t < TSTEPS; t++) {
#pragma goose parallel for loopcounter(i) result(u[i])
        for (i = 1; i < N - 1; i += 2)
            u[i] = 0.25f * (u[i - 1] + u[i + 1]) + 0.5f * f[i];

#pragma goose parallel for loopcounter(i) result(u[i])
        for (i = 2; i <= N - 2; i += 2)
            u[i] = 0.25f * (u[i - 1] + u[i + 1]) + 0.5f * f[i];
    }

    for (i = 0; i < N; i++)
        printf("%.9g\n", (double)u[i]);
    return 0;
}
