/* int16 and uchar8 vectors: component-wise integer ops and hex swizzles. */
__kernel void vec16_int(__global const int16 *a, __global const int16 *b,
                        __global int16 *out, __global const uchar8 *c, __global uchar8 *cout)
{
    int i = get_global_id(0);
    int16 x = a[i];
    int16 y = b[i];
    int16 r = (x + y) * 3 - (x & y) + (y >> 2);
    r.s89ab = x.sfedc;
    r.sF = x.s0 + y.s1;
    out[i] = r;
    uchar8 u = c[i];
    cout[i] = u + u.s76543210;        /* wraps modulo 256 per component */
}
