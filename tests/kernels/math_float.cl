/* The float math builtins, one output column each. x > 0, y in a moderate range. */
__kernel void math_float(__global const float *xs, __global const float *ys, __global float *out)
{
    int i = get_global_id(0);
    float x = xs[i], y = ys[i];
    __global float *o = out + 20 * i;
    o[0] = sqrt(x);
    o[1] = rsqrt(x);
    o[2] = exp(y);
    o[3] = exp2(y);
    o[4] = log(x);
    o[5] = log2(x);
    o[6] = pow(x, y);
    o[7] = sin(y);
    o[8] = cos(y);
    o[9] = tan(y * 0.3f);
    o[10] = fabs(y);
    o[11] = floor(y);
    o[12] = ceil(y);
    o[13] = fmin(x, y);
    o[14] = fmax(x, y);
    o[15] = fma(x, y, 1.0f);
    o[16] = mad(x, y, -1.0f);
    o[17] = hypot(x, y);
    o[18] = tanh(y);
    o[19] = sqrt(x * x + 1.0f) - x;
}
