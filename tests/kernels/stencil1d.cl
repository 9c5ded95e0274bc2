/* 3-point weighted stencil with clamped boundaries; n is not a multiple of the group size. */
__kernel void stencil1d(__global const float *in, __global float *out, const int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float left = i > 0 ? in[i - 1] : in[i];
    float right = i < n - 1 ? in[i + 1] : in[i];
    out[i] = 0.25f * left + 0.5f * in[i] + 0.25f * right;
}
