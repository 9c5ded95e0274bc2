/* Math builtins on float4 operands, and vector-scalar forms of fmin/fmax/clamp. */
__kernel void math_vector(__global const float4 *a, __global float4 *out)
{
    int i = get_global_id(0);
    float4 x = a[i];
    out[4 * i] = sqrt(x);
    out[4 * i + 1] = exp(-x) + sin(x);
    out[4 * i + 2] = fmax(x, 2.0f) + fmin(x, 1.0f);
    out[4 * i + 3] = clamp(x * 3.0f - 4.0f, -1.0f, 1.0f) + floor(x);
}
