__kernel void k(__global half *h, __global float *f)
{
    f[0] = h[0] * 2.0f;
}
