/* the directive is followed by a while loop, not a for loop */
#include <stdio.h>
#define N 16
static double a[N], c[N];

int main(void)
{
    int i;
    for (i = 0; i < N; i++)
        a[i] = (double)i;
    i = 0;
#pragma goose parallel for loopcounter(i) result(c[i])
    while (i < N) {
        c[i] = 2.0 * a[i];
        i++;
    }
    printf("%g\n", c[N - 1]);
    return 0;
}
