/* loopcounter(i, j) but no loop over j inside the loop over i */
#include <stdio.h>
#define N 16
static double a[N][N], c[N];

int main(void)
{
    int i, j;
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            a[i][j] = (double)(i + j);
#pragma goose parallel for loopcounter(i, j) result(c[i])
    for (i = 0; i < N; i++) {
        double s = 0.0;
        int k;
        for (k = 0; k < N; k++)
            s += a[i][k];
        c[i] = s;
    }
    printf("%g\n", c[N - 1]);
    return 0;
}
