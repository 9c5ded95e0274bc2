/* struct member access inside a parallel loop */
#include <stdio.h>
#define N 16
struct params { double scale; };
static double a[N], c[N];

int main(void)
{
    int i;
    struct params p = { 2.0 };
    for (i = 0; i < N; i++)
        a[i] = (double)i;
#pragma goose parallel for loopcounter(i) result(c[i])
    for (i = 0; i < N; i++)
        c[i] = p.scale * a[i];
    printf("%g\n", c[N - 1]);
    return 0;
}
