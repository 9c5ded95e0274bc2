/* Data-dependent loops in integers: Newton's integer square root and Euclid's gcd, with counts. */
__kernel void isqrt_gcd(__global const uint *a, __global const uint *b,
                        __global uint *root, __global uint *g, __global int *iters)
{
    int i = get_global_id(0);
    uint n = a[i];
    uint x = n, y = (n + 1) / 2;
    int it = 0;
    if (n > 1) {
        while (y < x) {
            x = y;
            y = (x + n / x) / 2;
            it++;
        }
    } else {
        x = n;
    }
    root[i] = x;
    uint p = a[i], q = b[i];
    int steps = 0;
    while (q != 0) {
        uint t = p % q;
        p = q;
        q = t;
        ++steps;
    }
    g[i] = p;
    iters[i] = it * 1000 + steps;
}
