/* Gravitational accelerations and the potential energy in Goose's own style. */
#include <stdio.h>
#include <math.h>
#ifndef N
#define N 1024
#endif
static float pos[N][3], mass[N], acc[N][3], phi[N];

int main(void)
{
    int i, j;
    float eps2 = 0.01f, e = 0.0f;
    for (i = 0; i < N; i++) {
        pos[i][0] = (float)((i * 7) % 101) * 0.05f;
        pos[i][1] = (float)((i * 13) % 97) * 0.05f;
        pos[i][2] = (float)((i * 29) % 89) * 0.05f;
        mass[i] = 1.0f + (float)(i % 3) * 0.5f;
    }
#pragma goose parallel for loopcounter(i, j) result(acc[i][0..2], phi[i], e)
    for (i = 0; i < N; i++) {
        float ax = 0.0f, ay = 0.0f, az = 0.0f, p = 0.0f;
        for (j = 0; j < N; j++) {
            float dx = pos[j][0] - pos[i][0];
            float dy = pos[j][1] - pos[i][1];
            float dz = pos[j][2] - pos[i][2];
            float rinv = 1.0f / sqrtf(dx * dx + dy * dy + dz * dz + eps2);
            float mr3 = mass[j] * rinv * rinv * rinv;
            ax += dx * mr3;
            ay += dy * mr3;
            az += dz * mr3;
            p -= mass[j] * rinv;
        }
        acc[i][0] = ax;
        acc[i][1] = ay;
        acc[i][2] = az;
        phi[i] = p;
        e += 0.5f * mass[i] * p;
    }
    double s = e;
    for (i = 0; i < N; i++)
        s += acc[i][0] + acc[i][1] + acc[i][2];
    printf("%.9g\n", s);
    return 0;
}
