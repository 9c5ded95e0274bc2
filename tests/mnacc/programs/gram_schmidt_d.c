/* Modified Gram-Schmidt in double on M vectors of length N stored as rows
   V[j][0..N-1]. Per host step k: a marked norm loop with reduction(+: nrm),
   the host takes sqrt and 1/sqrt, a marked scaling loop writes Q[k][i]
   (whole array named in result), then a marked projection loop over the
   remaining vectors j > k (zero-trip at the last k) with a streamed i. */
/* mnacc-test: rtol=1e-12 */
#include <stdio.h>
#include <math.h>

#ifndef N
#define N 32
#endif
#ifndef M
#define M 12
#endif

double V[M][N], Q[M][N], RT[M][M];

int main(void)
{
    int i, j, k;
    double nrm, inv;
    for (j = 0; j < M; j++)
        for (i = 0; i < N; i++)
            V[j][i] = (double)((i * j * 3 + i + 2 * j) % 7) - 3.0 + (i == j ? 9.0 : 0.0);
    for (j = 0; j < M; j++)
        for (k = 0; k < M; k++)
            RT[j][k] = 0.0;

    for (k = 0; k < M; k++) {
        nrm = 0.0;
#pragma goose parallel for loopcounter(i) reduction(+: nrm)
        for (i = 0; i < N; i++)
            nrm += V[k][i] * V[k][i];

        RT[k][k] = sqrt(nrm);
        inv = 1.0 / RT[k][k];

#pragma goose parallel for loopcounter(i) result(Q)
        for (i = 0; i < N; i++)
            Q[k][i] = V[k][i] * inv;

#pragma goose parallel for loopcounter(j, i) result(RT[j][0..M-1], V[j][0..N-1])
        for (j = k + 1; j < M; j++) {
            double s = 0.0;
            for (i = 0; i < N; i++)
                s += Q[k][i] * V[j][i];
            RT[j][k] = s;
            for (i = 0; i < N; i++)
                V[j][i] -= s * Q[k][i];
        }
    }

    for (k = 0; k < M; k++)
        for (i = 0; i < N; i++)
            printf("%.17g\n", Q[k][i]);
    for (j = 0; j < M; j++)
        for (k = 0; k <= j; k++)
            printf("%.17g\n", RT[j][k]);
    return 0;
}
