__kernel void k(__global float4 *a)
{
    a[0] = (float4)(1.0f, 2.0f, 3.0f);
}
