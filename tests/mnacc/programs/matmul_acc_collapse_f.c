/* Dense matrix product C = alpha*A*B + beta*C in float with OpenACC
   `parallel loop collapse(2)`: both i and j parallel, k a sequential inner loop. */
/* mnacc-test: exact */
#include <stdio.h>

#ifndef NI
#define NI 12
#endif
#ifndef NJ
#define NJ 10
#endif
#ifndef NK
#define NK 8
#endif

float A[NI][NK], B[NK][NJ], C[NI][NJ];

int main(void)
{
    int i, j, k;
    float alpha = 1.5f, beta = 0.5f;
    for (i = 0; i < NI; i++)
        for (k = 0; k < NK; k++)
            A[i][k] = (float)((i * 3 + k * 5) % 7) - 3.0f;
    for (k = 0; k < NK; k++)
        for (j = 0; j < NJ; j++)
            B[k][j] = (float)((k + 2 * j) % 5) * 0.25f;
    for (i = 0; i < NI; i++)
        for (j = 0; j < NJ; j++)
            C[i][j] = (float)((i * j) % 6) - 2.0f;

#pragma acc parallel loop collapse(2)
    for (i = 0; i < NI; i++) {
        for (j = 0; j < NJ; j++) {
            float acc = 0.0f;
            for (k = 0; k < NK; k++)
                acc += A[i][k] * B[k][j];
            C[i][j] = alpha * acc + beta * C[i][j];
        }
    }

    for (i = 0; i < NI; i++)
        for (j = 0; j < NJ; j++)
            printf("%.9g\n", (double)C[i][j]);
    return 0;
}
