/* Integer builtins: min max clamp abs (signed -> unsigned result) mul24 mad24. */
__kernel void int_builtins(__global const int *a, __global const int *b, __global const char *c,
                           __global const uint *ua, __global int *out, __global uint *uout,
                           __global uchar *aout)
{
    int i = get_global_id(0);
    int x = a[i], y = b[i];
    int lo = min(x, y), hi = max(x, y);
    out[6 * i] = lo;
    out[6 * i + 1] = hi;
    out[6 * i + 2] = clamp(x, -100, 100);
    out[6 * i + 3] = mul24(x, y);
    out[6 * i + 4] = mad24(x, y, 7);
    out[6 * i + 5] = clamp(y, lo, hi);
    uout[3 * i] = abs(x);
    uout[3 * i + 1] = min(ua[i], 3000000000u);
    uout[3 * i + 2] = max(ua[i], (uint)x) - min(ua[i], (uint)x);
    aout[i] = abs(c[i]);
}
