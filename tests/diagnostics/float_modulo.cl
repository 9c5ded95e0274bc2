__kernel void k(__global float *a)
{
    a[0] = a[1] % 2.0f;
}
