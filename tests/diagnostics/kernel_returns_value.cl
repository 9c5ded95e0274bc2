__kernel int k(__global float *a)
{
    a[0] = 1.0f;
    return 0;
}
