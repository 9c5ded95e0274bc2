/* Element-wise floating-point arithmetic in the type T (float or double, -D T=...). */
#ifdef USE_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
__kernel void ew_float_ops(__global const T *a, __global const T *b,
                           __global T *out, const T alpha, const int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    T x = a[i];
    T y = b[i];
    T r = alpha * x + y;
    r -= x / y;
    r *= (T)0.5;
    out[3 * i] = r;
    out[3 * i + 1] = -x * y;
    out[3 * i + 2] = (x > y) ? x - y : y - x;
}
