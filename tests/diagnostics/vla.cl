__kernel void k(__global float *a, int n)
{
    float tmp[n];
    tmp[0] = a[0];
    a[1] = tmp[0];
}
