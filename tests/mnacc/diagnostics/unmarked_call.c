/* a call to a user function not marked '#pragma goose func' */
#include <stdio.h>
#define N 16
static double a[N], c[N];

static double twice(double x)
{
    return 2.0 * x;
}

int main(void)
{
    int i;
    for (i = 0; i < N; i++)
        a[i] = (double)i;
#pragma goose parallel for loopcounter(i) result(c[i])
    for (i = 0; i < N; i++)
        c[i] = twice(a[i]);
    printf("%g\n", c[N - 1]);
    return 0;
}
