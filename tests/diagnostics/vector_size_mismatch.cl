__kernel void k(__global float4 *a, __global float2 *b)
{
    a[0] = a[0] + b[0];
}
