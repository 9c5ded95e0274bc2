/* a loop-carried dependence a[i] = a[i-1] + ...: a warning, the program still builds and runs */
/* mnacc-diag: run --device cpu */
#include <stdio.h>
#define N 16
static double a[N], b[N];

int main(void)
{
    int i;
    for (i = 0; i < N; i++) {
        a[i] = (double)i;
        b[i] = 1.0;
    }
#pragma goose parallel for loopcounter(i) result(a[1..N-1])
    for (i = 1; i < N; i++)
        a[i] = a[i - 1] + b[i];
    printf("%g\n", a[N - 1]);
    return 0;
}
