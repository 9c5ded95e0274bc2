float scale(float x, float s) { return x * s; }

__kernel void k(__global float *a)
{
    a[0] = scale(a[0]);
}
