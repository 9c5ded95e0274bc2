/* saxpy with a tail: the NDRange is rounded up to the group size, n is odd. */
__kernel void saxpy_tail(__global const float *x, __global float *y, const float a, const uint n)
{
    size_t i = get_global_id(0);
    if (i < n)
        y[i] = a * x[i] + y[i];
}
