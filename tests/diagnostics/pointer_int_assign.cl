__kernel void k(__global float *a)
{
    int x = a;
    a[0] = x;
}
