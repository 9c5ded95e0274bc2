/* Plain C in kernels: enums, typedefs, nested scopes with shadowing, several declarators,
   address-of locals, for with comma, for(;;) and while(1) with break, ++ on global elements. */
typedef int count_t;
typedef float real;
enum colour { RED, GREEN = 5, BLUE };

__kernel void c_scoping(__global const int *a, __global int *out, __global real *fout)
{
    int i = get_global_id(0);
    int x = a[i];
    int y = x, *p = &y, arr[3] = {1, 2, 3};
    {
        int x = 100;                      /* shadows the outer x */
        y += x;
    }
    *p += x;                              /* y = 2x + 100 */
    count_t n = 0;
    for (int lo = 0, hi = 9; lo < hi; lo++, hi--)
        n += hi - lo;
    int k = 0;
    for (;;) {
        ++k;
        if (k * k > x + 50)
            break;
    }
    int w = x;
    while (1) {
        w /= 2;
        if (w == 0)
            break;
        arr[w % 3]++;
    }
    enum colour c = (x & 1) ? GREEN : BLUE;
    out[6 * i] = y;
    out[6 * i + 1] = n;
    out[6 * i + 2] = k;
    out[6 * i + 3] = arr[0] * 10000 + arr[1] * 100 + arr[2];
    out[6 * i + 4] = c + RED;
    out[6 * i + 5] = 0;
    out[6 * i + 5]++;
    out[6 * i + 5] += 4;
    ++out[6 * i + 5];
    real r = (real)x;
    fout[i] = r * 0.5f;
}
