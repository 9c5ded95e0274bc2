__kernel void k(__global float *a)
{
    const int n = 4;
    n = 5;
    a[0] = n;
}
