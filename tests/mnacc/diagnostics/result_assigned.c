/* a shared result assigned rather than accumulated: e = x */
#include <stdio.h>
#define N 16
static double a[N];

int main(void)
{
    int i;
    double e = 0.0;
    for (i = 0; i < N; i++)
        a[i] = (double)i;
#pragma goose parallel for loopcounter(i) result(e)
    for (i = 0; i < N; i++) {
        double x = a[i] * a[i];
        e = x;
    }
    printf("%g\n", e);
    return 0;
}
