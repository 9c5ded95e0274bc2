/* Writes to parts of vectors: a component of a __global float4, compound assignment to
   swizzles, private arrays of vectors. Other components must be left untouched. */
__kernel void vector_lvalues(__global float4 *v, __global const float *s, __global float4 *acc_out)
{
    int i = get_global_id(0);
    float x = s[i];
    v[i].y = x;
    v[i].zw *= 2.0f;
    float4 acc[3];
    for (int k = 0; k < 3; k++)
        acc[k] = (float4)(k);
    acc[1].x += x;
    acc[2].wz = (float2)(x, -x);
    acc[0].s13 -= (float2)(1.0f, 2.0f);
    acc_out[3 * i] = acc[0];
    acc_out[3 * i + 1] = acc[1];
    acc_out[3 * i + 2] = acc[2];
}
