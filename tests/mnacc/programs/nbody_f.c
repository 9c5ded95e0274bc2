/* N-body forces in float (twin of nbody_d.c): Goose style
   loopcounter(i, j) result(acc[i][0..2], phi[i], e) with a shared energy sum,
   sqrtf and division (inexact); background field keeps components away from 0. */
/* mnacc-test: rtol=1e-5 */
#include <stdio.h>
#include <math.h>

#ifndef N
#define N 32
#endif

float pos[N][3], mass[N], acc[N][3], phi[N];

int main(void)
{
    int i, j;
    float eps2 = 0.01f, e = 0.5f;
    for (i = 0; i < N; i++) {
        pos[i][0] = (float)((i * 7) % 11) * 0.5f;
        pos[i][1] = (float)((i * 5) % 13) * 0.25f - 1.0f;
        pos[i][2] = (float)((i * 3) % 7) * 0.75f + (float)i * 0.125f;
        mass[i] = 1.0f + (float)(i % 4) * 0.25f;
    }

#pragma goose parallel for loopcounter(i, j) result(acc[i][0..2], phi[i], e)
    for (i = 0; i < N; i++) {
        float ax = 10.0f, ay = -10.0f, az = 20.0f, p = 0.0f;
        for (j = 0; j < N; j++) {
            if (j != i) {
                float dx = pos[j][0] - pos[i][0];
                float dy = pos[j][1] - pos[i][1];
                float dz = pos[j][2] - pos[i][2];
                float r2 = dx * dx + dy * dy + dz * dz + eps2;
                float rinv = 1.0f / sqrtf(r2);
                float r3inv = rinv * rinv * rinv;
                ax += mass[j] * dx * r3inv;
                ay += mass[j] * dy * r3inv;
                az += mass[j] * dz * r3inv;
                p -= mass[j] * rinv;
            }
        }
        acc[i][0] = ax;
        acc[i][1] = ay;
        acc[i][2] = az;
        phi[i] = p;
        e += 0.5f * mass[i] * p;
    }

    for (i = 0; i < N; i++) {
        printf("%.9g\n", (double)acc[i][0]);
        printf("%.9g\n", (double)acc[i][1]);
        printf("%.9g\n", (double)acc[i][2]);
        printf("%.9g\n", (double)phi[i]);
    }
    printf("%.9g\n", (double)e);
    return 0;
}
