/* a scalar written under a condition that is neither a result nor private */
#include <stdio.h>
#define N 16
static double a[N], c[N];

int main(void)
{
    int i, last = -1;
    for (i = 0; i < N; i++)
        a[i] = (double)i;
#pragma goose parallel for loopcounter(i) result(c[i])
    for (i = 0; i < N; i++) {
        c[i] = 2.0 * a[i];
        if (a[i] > 4.0)
            last = i;
    }
    printf("%g %d\n", c[N - 1], last);
    return 0;
}
