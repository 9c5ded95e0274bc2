/* float4 buffers and component-wise arithmetic. */
__kernel void vec4_arith(__global const float4 *a, __global const float4 *b,
                         __global float4 *out, const float s)
{
    int i = get_global_id(0);
    float4 x = a[i];
    float4 y = b[i];
    float4 r = x * y + s;
    r -= x / (y + 1.0f);
    r = r * 2.0f - (float4)(0.5f);
    out[i] = r;
}
