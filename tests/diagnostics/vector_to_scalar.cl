__kernel void k(__global float *a, __global float4 *b)
{
    a[0] = b[0];
}
