/* Ternary chains (nested, as lvalue selectors of values), and the comma operator. */
__kernel void ternary_comma(__global const float *a, __global float *out, __global int *cls)
{
    int i = get_global_id(0);
    float x = a[i];
    int c = x < -1.0f ? 0 : x < 0.0f ? 1 : x < 1.0f ? 2 : 3;
    cls[i] = c;
    float y;
    int t;
    y = (t = c * 2, t + 1) * (c == 3 ? x : c == 0 ? -x : 1.0f);
    out[i] = y + (c & 1 ? 0.5f : 0.25f);
}
