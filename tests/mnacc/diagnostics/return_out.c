/* return inside the parallel loop */
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
        if (a[i] < 0.0)
            return 1;
        c[i] = 2.0 * a[i];
    }
    printf("%g\n", c[N - 1]);
    return 0;
}
