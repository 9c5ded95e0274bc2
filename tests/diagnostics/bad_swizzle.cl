__kernel void k(__global float *a)
{
    float2 v = (float2)(1.0f, 2.0f);
    a[0] = v.z;
}
