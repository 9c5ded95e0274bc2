__kernel void k(__global float *a)
{
    if (a[0] > 0.0f)
        break;
}
