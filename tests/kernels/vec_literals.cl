/* Vector literals: scalars, broadcasts and sub-vectors combined. */
__kernel void vec_literals(__global const float *a, __global float8 *out, __global int4 *iout)
{
    int i = get_global_id(0);
    float x = a[i];
    float2 p = (float2)(x, x + 1.0f);
    float4 q = (float4)(p, 2.0f * x, 3.0f);
    float4 b = (float4)(x);
    float8 r = (float8)(q, b + q);
    out[i] = r;
    int4 k = (int4)(1, 2, (int2)(i, -i));
    iout[i] = k * (int4)(i) + (int4)(7);
}
