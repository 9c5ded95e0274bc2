/* IEEE specials: fmin/fmax ignore a NaN operand, comparisons with NaN are false,
   division by zero gives infinities, sqrt of a negative gives NaN, signed zeros. */
__kernel void nan_inf(__global const float *a, __global const float *b, __global float *out,
                      __global int *cmp)
{
    int i = get_global_id(0);
    float x = a[i], y = b[i];
    out[6 * i] = fmin(x, y);
    out[6 * i + 1] = fmax(x, y);
    out[6 * i + 2] = x / y;
    out[6 * i + 3] = sqrt(x);
    out[6 * i + 4] = floor(x) * 0.0f;
    out[6 * i + 5] = y > 0.0f ? x : -x;
    cmp[i] = (x < y) | (x > y) << 1 | (x == y) << 2 | (x != y) << 3 | (x != x) << 4 | (x <= y) << 5;
}
