/* Element-wise integer arithmetic in the type T (set with -D T=...), guarded tail. */
__kernel void ew_int_ops(__global const T *a, __global const T *b,
                         __global T *sum, __global T *diff, __global T *prod,
                         __global T *quot, __global T *rem, __global T *bits,
                         const int n)
{
    int i = get_global_id(0);
    if (i < n) {
        T x = a[i], y = b[i];
        sum[i] = x + y;
        diff[i] = x - y;
        prod[i] = x * y;
        quot[i] = x / y;
        rem[i] = x % y;
        bits[i] = (T)((x & y) | (~x ^ y));
    }
}
