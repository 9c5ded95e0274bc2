__kernel void k(__global float *a)
{
    int i = get_global_id(0)
    a[i] = 1.0f;
}
