/* Vector conversions with saturation and rounding, and as_ between vectors of equal size. */
__kernel void vec_convert(__global const float4 *f, __global const int4 *k,
                          __global uchar4 *u, __global int4 *r, __global float4 *fo,
                          __global short8 *s, __global uchar16 *bytes)
{
    int i = get_global_id(0);
    float4 x = f[i];
    u[2 * i] = convert_uchar4_sat(x);
    u[2 * i + 1] = convert_uchar4_sat_rte(x);
    r[2 * i] = convert_int4_rtn(x);
    r[2 * i + 1] = convert_int4_rtp(x);
    fo[i] = convert_float4(k[i]) * 0.5f;
    s[i] = convert_short8_sat((int8)(k[i], k[i] * 1000));
    bytes[i] = as_uchar16(x);
}
