/* Several early returns at different depths; untouched elements keep the buffer's fill. */
__kernel void early_return(__global const int *a, __global int *out, const int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    int x = a[i];
    if (x < 0)
        return;
    out[i] = 1;
    for (int k = 2; k < 12; k++) {
        if (x % k == 0) {
            out[i] = k;
            return;
        }
    }
    if (x > 500) {
        out[i] = -x;
        return;
    }
    out[i] = x * 10;
}
