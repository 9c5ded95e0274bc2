__kernel void k(__global int *a)
{
    int i = 0;
again:
    a[i] = i;
    if (++i < 4)
        goto again;
}
