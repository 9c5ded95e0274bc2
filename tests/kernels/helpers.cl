/* Non-kernel helper functions: values, private out-parameters, __global pointers, call chains. */
static float square(float x) { return x * x; }

float poly(float x, float a, float b, float c)
{
    return (a * x + b) * x + c;
}

void split(float x, float *whole, float *frac)
{
    *whole = floor(x);
    *frac = x - *whole;
}

inline int accumulate(__global const int *p, int count)
{
    int s = 0;
    for (int k = 0; k < count; k++)
        s += p[k];
    return s;
}

float norm2(float x, float y) { return sqrt(square(x) + square(y)); }

__kernel void helpers(__global const float *a, __global const int *ints,
                      __global float *out, __global int *iout)
{
    int i = get_global_id(0);
    float x = a[i];
    float w, f;
    split(x, &w, &f);
    out[4 * i] = poly(x, 1.5f, -2.0f, 0.25f);
    out[4 * i + 1] = w;
    out[4 * i + 2] = f;
    out[4 * i + 3] = norm2(x, f);
    iout[i] = accumulate(ints + i, 4);
}
