/* The same buffer passed as two arguments: each work-item reads one element and writes it. */
__kernel void alias_args(__global float *x, __global const float *y, const float a)
{
    int i = get_global_id(0);
    x[i] = a * x[i] + y[i];
}
