/* y = a x + y, one work-item per element; n guards a launch rounded up past the data. */
__kernel void saxpy(__global const float *x, __global float *y, float a, int n)
{
    int i = get_global_id(0);
    if (i < n)
        y[i] = a * x[i] + y[i];
}
