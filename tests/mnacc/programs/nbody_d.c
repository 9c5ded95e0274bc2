/* N-body gravitational forces in Goose's own style, double:
   loopcounter(i, j) result(acc[i][0..2], phi[i], e), i parallel, j streamed,
   private temporaries, a skip of j == i, and the shared energy sum e += ...
   (starting from its host value). A uniform background field keeps the
   acceleration components away from zero. */
/* mnacc-test: rtol=1e-12 */
#include <stdio.h>
#include <math.h>

#ifndef N
#define N 32
#endif

double pos[N][3], mass[N], acc[N][3], phi[N];

int main(void)
{
    int i, j;
    double eps2 = 0.01, e = 0.5;
    for (i = 0; i < N; i++) {
        pos[i][0] = (double)((i * 7) % 11) * 0.5;
        pos[i][1] = (double)((i * 5) % 13) * 0.25 - 1.0;
        pos[i][2] = (double)((i * 3) % 7) * 0.75 + (double)i * 0.125;
        mass[i] = 1.0 + (double)(i % 4) * 0.25;
    }

#pragma goose parallel for loopcounter(i, j) result(acc[i][0..2], phi[i], e)
    for (i = 0; i < N; i++) {
        double ax = 10.0, ay = -10.0, az = 20.0, p = 0.0;
        for (j = 0; j < N; j++) {
            if (j != i) {
                double dx = pos[j][0] - pos[i][0];
                double dy = pos[j][1] - pos[i][1];
                double dz = pos[j][2] - pos[i][2];
                double r2 = dx * dx + dy * dy + dz * dz + eps2;
                double rinv = 1.0 / sqrt(r2);
                double r3inv = rinv * rinv * rinv;
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
        e += 0.5 * mass[i] * p;
    }

    for (i = 0; i < N; i++) {
        printf("%.17g\n", acc[i][0]);
        printf("%.17g\n", acc[i][1]);
        printf("%.17g\n", acc[i][2]);
        printf("%.17g\n", phi[i]);
    }
    printf("%.17g\n", e);
    return 0;
}
