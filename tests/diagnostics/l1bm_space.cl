__kernel void k(__global float *a)
{
    L1BM float tile[64];
    tile[0] = a[0];
    a[1] = tile[0];
}
