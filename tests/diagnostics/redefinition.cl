__kernel void k(__global float *a)
{
    int i = 0;
    float i = 1.0f;
    a[0] = i;
}
