/* SHOC triad shape, c = a + s b, launched over the array in chunks with a global work offset (as
   hosts that split a large range into several launches do); get_global_id includes the offset. */
__kernel void triad(__global const float *a, __global const float *b, __global float *c, float s, int n)
{
    int i = get_global_id(0);
    if (i < n)
        c[i] = a[i] + s * b[i];
}
