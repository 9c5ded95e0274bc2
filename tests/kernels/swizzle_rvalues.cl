/* Swizzles of values that are not variables: unary and binary results, calls, casts,
   conditional expressions, literals and swizzles of swizzles. */
__kernel void swizzle_rvalues(__global const int4 *a, __global const int4 *b, __global int4 *out)
{
    int i = get_global_id(0);
    int4 x = a[i], y = b[i];
    int4 r0 = (int4)((-x).yx, (~y).zw);
    int4 r1 = (int4)((x + y).w, max(x, y).z, ((int4)(i, 2, 3, 4)).x, (x * 2).s3);
    int4 r2 = (i & 1 ? x : y).wzyx;
    int4 r3 = (int4)(x.xy.yx, (int2)(x.z, y.w).yx);
    int4 r4 = (int4)((!x).x, (+y).y, abs(x).z, (x.wzyx).w);
    out[5 * i] = r0;
    out[5 * i + 1] = r1;
    out[5 * i + 2] = r2;
    out[5 * i + 3] = r3;
    out[5 * i + 4] = r4;
}
