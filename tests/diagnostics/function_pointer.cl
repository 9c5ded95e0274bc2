float twice(float x) { return 2.0f * x; }

__kernel void k(__global float *a)
{
    float (*f)(float) = twice;
    a[0] = f(a[0]);
}
