/* an indented '#pragma goose func' followed by a declaration, not a function definition */
#include <stdio.h>
#define N 16
static double a[N], c[N];

    #pragma goose func
double scale = 2.0;

int main(void)
{
    int i;
    for (i = 0; i < N; i++)
        a[i] = (double)i;
#pragma goose parallel for loopcounter(i) result(c[i])
    for (i = 0; i < N; i++)
        c[i] = scale * a[i];
    printf("%g\n", c[N - 1]);
    return 0;
}
