/* the parallel counter is assigned in the body */
#include <stdio.h>
#define N 16
static double a[N], c[N];

int main(void)
{
    int i;
    for (i = 0; i < N; i++)
        a[i] = (double)i;
#pragma goose parallel for loopcounter(i) result(c[i])
    for (i = 0; i < N; i++) {
        c[i] = 2.0 * a[i];
        if (a[i] > 10.0)
            i = N;
    }
    printf("%g\n", c[N - 1]);
    return 0;
}
