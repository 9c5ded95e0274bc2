__kernel void k(__global const float *a, __global float *b)
{
    int i = get_global_id(0);
    a[i] = b[i];
}
