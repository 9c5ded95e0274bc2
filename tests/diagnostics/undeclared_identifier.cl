__kernel void k(__global float *a, int n)
{
    int i = get_global_id(0);
    if (i < nn)
        a[i] = 0.0f;
}
