/* loopcounter names j, but the loop that follows counts i */
#include <stdio.h>
#define N 16
static double a[N], c[N];

int main(void)
{
    int i, j = 0;
    for (i = 0; i < N; i++)
        a[i] = (double)i;
#pragma goose parallel for loopcounter(j) result(c[i])
    for (i = 0; i < N; i++)
        c[i] = 2.0 * a[i] + j;
    printf("%g\n", c[N - 1]);
    return 0;
}
