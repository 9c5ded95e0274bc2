/* Rounding modes of float->int conversions; int->float rounding; vector conversions. */
__kernel void conversions_round(__global const float *f, __global const int *k,
                            __global int *r, __global float *fo, __global int4 *v)
{
    int i = get_global_id(0);
    float x = f[i];
    r[5 * i] = convert_int(x);          /* toward zero */
    r[5 * i + 1] = convert_int_rte(x);
    r[5 * i + 2] = convert_int_rtz(x);
    r[5 * i + 3] = convert_int_rtp(x);
    r[5 * i + 4] = convert_int_rtn(x);
    fo[2 * i] = convert_float(k[i]);    /* round to nearest even */
    fo[2 * i + 1] = convert_float(k[i] >> 3) * 0.125f;
    float4 q = (float4)(x, -x, x * 0.5f, x + 0.5f);
    v[i] = convert_int4_rte(q);
}
