/* Pointer arithmetic: strided walks, negative indices, pointer differences and comparisons. */
__kernel void pointer_arith(__global const int * restrict src, __global int * restrict dst,
                            const int stride, const int count)
{
    int i = get_global_id(0);
    __global const int *p = src + i;
    __global const int *end = src + i + stride * count;
    int s = 0;
    int steps = 0;
    while (p < end) {
        s += *p;
        p += stride;
        steps++;
    }
    __global int *q = dst + 3 * i;
    q[0] = s;
    *(q + 1) = (int)(p - src) - i;
    q++;
    q[1] = steps + (i > 0 ? src[i - 1] : 0);
}
