__kernel void k(__global float *a)
{
    int i = get_global_id(0);
    a[i] = clamp(a[i], 0.0f);
}
