__kernel void k(__global float *a)
{
    vec4 v;
    a[0] = 1.0f;
}
