/* a result read outside its update */
#include <stdio.h>
#define N 16
static double a[N], c[N];

int main(void)
{
    int i;
    double e = 0.0;
    for (i = 0; i < N; i++)
        a[i] = (double)i;
#pragma goose parallel for loopcounter(i) result(e, c[i])
    for (i = 0; i < N; i++) {
        e += a[i];
        c[i] = e;
    }
    printf("%g %g\n", e, c[N - 1]);
    return 0;
}
