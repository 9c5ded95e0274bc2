/* Common builtins: mix step sign, and float4 forms of mix and step. */
__kernel void common_builtins(__global const float *a, __global const float *b, __global const float *t,
                              __global float *out, __global float4 *vout)
{
    int i = get_global_id(0);
    float x = a[i], y = b[i], s = t[i];
    out[4 * i] = mix(x, y, s);
    out[4 * i + 1] = step(y, x);
    out[4 * i + 2] = sign(x);
    out[4 * i + 3] = sign(x - y) * step(0.5f, s);
    float4 v = (float4)(x, y, s, x + y);
    vout[2 * i] = mix(v, v.wzyx, s);
    vout[2 * i + 1] = step((float4)(0.0f), v) + step(0.25f, v);
}
