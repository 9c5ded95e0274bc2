/* The same math builtins in double precision. */
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
__kernel void math_double(__global const double *xs, __global const double *ys, __global double *out)
{
    int i = get_global_id(0);
    double x = xs[i], y = ys[i];
    __global double *o = out + 16 * i;
    o[0] = sqrt(x);
    o[1] = rsqrt(x);
    o[2] = exp(y);
    o[3] = log(x);
    o[4] = pow(x, y);
    o[5] = sin(y);
    o[6] = cos(y);
    o[7] = fabs(y);
    o[8] = floor(y);
    o[9] = ceil(y);
    o[10] = fmin(x, y);
    o[11] = fmax(x, y);
    o[12] = fma(x, y, 1.0);
    o[13] = hypot(x, y);
    o[14] = tanh(y);
    o[15] = log2(x) + exp2(y);
}
