__kernel void k(__global float *a)
{
    printf("%f\n", a[0]);
}
