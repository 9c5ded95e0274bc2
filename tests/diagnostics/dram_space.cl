__kernel void k(DRAM float *a)
{
    a[0] = 1.0f;
}
